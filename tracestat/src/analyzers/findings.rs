//! Findings (docs/findings.md): what to fix first, and what it would save.
//! A rules engine over the other analyses' finished results — no pass of
//! its own over the events. Each [`Rule`] looks at one rank at a time
//! ([`Rule::observe`]), decides whether what it saw is a problem
//! ([`Rule::fires`], its threshold) and estimates the time a fix would
//! save: with the critical path's what-if replay of the run where a
//! what-if rule expresses the fix ([`Rule::replay`]) and the graphs allow,
//! otherwise with the rule's stated simple bound ([`Rule::savings`],
//! docs/findings.md#savings). A rule that fires on at least
//! half the ranks gives one `all` finding, otherwise one finding per rank
//! (docs/findings.md#ranks). Findings are ranked by their savings.

use serde::{Deserialize, Serialize};
use unitrace_render::sections::{Column, Section, Table, Unit, Value};

use super::collectives::{aligned_origin, CollectiveInstance, CollectivesOut};
use super::copies::{CopyTally, RankCopies};
use super::critical_path::{rank_median_savings, ImplicitReplays};
use super::gaps::{GapStats, GapTally};
use super::stragglers::stands_out;
use super::{median, Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::classify::Class;
use crate::ingest::SetupKind;
use crate::rank_model::RankModel;
use crate::time::{pct, us, Ns};

/// A finding below this share of its rank's active window (the median
/// rank's for an `all` finding) is left out, whatever the rule: it would
/// not be worth a look (docs/findings.md#thresholds).
pub const MIN_SAVINGS_SHARE: f64 = 0.01;

/// Findings shown on screen (the files hold all).
const TOP: usize = 15;

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The rule's stable id (`pageable-copy`, ...).
    pub rule: String,
    /// The rank's label, or `all` when the rule fired on at least half
    /// the ranks.
    pub rank: String,
    /// The ranks it fired on.
    pub ranks: u64,
    /// The step it applies to; empty while the report has no steps.
    pub step: String,
    /// The main name of the evidence (a copy, a host range, a kernel, a
    /// call), empty when the rule names none: with `rule` and `rank` the
    /// key compare matches findings by.
    pub name: String,
    /// How many things the evidence counts (copies, gaps, calls,
    /// collectives, kernels).
    pub count: u64,
    /// The time of the problem as measured.
    pub time_us: f64,
    /// The stretch to look at in the trace, in us since the report's
    /// origin (the earliest rank's first event, on aligned clocks).
    pub from_us: f64,
    pub to_us: f64,
    /// What a fix would save (docs/findings.md#savings).
    pub savings_us: f64,
    /// How the savings were estimated: `replay` (the critical path's
    /// what-if replay of the run) or `bound` (the rule's stated bound).
    #[serde(default)]
    pub savings_by: String,
    /// The savings as a share of the wall time (the rank's; the median
    /// rank's for `all`).
    pub savings_pct: f64,
    /// The evidence in words.
    pub evidence: String,
    /// One line: what to do.
    pub fix: String,
}

impl Finding {
    /// The key of a finding across runs (docs/compare.md#findings).
    pub fn key(&self) -> (String, String, String) {
        (self.rule.clone(), self.rank.clone(), self.name.clone())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FindingsOut {
    pub findings: Vec<Finding>,
}

/// What a rule saw on one rank.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub name: String,
    pub count: u64,
    /// The time of the problem, ns.
    pub time_ns: Ns,
    /// Bytes involved, when the rule counts them.
    pub bytes: u64,
    /// The stretch to look at, on the rank's own clock.
    pub from_ns: Ns,
    pub to_ns: Ns,
    pub text: String,
}

/// Everything the rules read, made once from the finished analyses.
pub struct Context<'a> {
    pub ranks: &'a Ranks<'a>,
    pub collectives: &'a CollectivesOut,
    pub straggler: Option<(usize, bool)>,
    /// Without a straggler, the ranks whose arrivals each made the others
    /// wait notably, none twice the rest (`StragglersOut::late_ranks`).
    pub late: Vec<usize>,
    /// Per rank: its active window, its wall time, its kernel time of class
    /// compute, and how late it was at collectives
    /// ([`Lateness`]).
    pub active: Vec<Ns>,
    pub wall: Vec<Ns>,
    pub compute: Vec<Ns>,
    pub lateness: Vec<Lateness>,
    pub median_active: f64,
    pub median_compute: f64,
    /// Every rank's compute time, sorted: the median of the others in
    /// O(log ranks) ([`median_without`]).
    pub sorted_compute: Vec<f64>,
    /// The origin of report times on the aligned clocks, found once (a
    /// pass over the ranks per finding would be quadratic).
    pub origin: Ns,
    /// Per compute kernel, every rank's total of it (0 where absent),
    /// sorted; made once, when the imbalance rule first needs it, rather
    /// than per rank (quadratic in the ranks: docs/tracestat.md#many-ranks).
    pub kernel_totals: std::sync::OnceLock<std::collections::HashMap<&'a str, Vec<f64>>>,
    /// The finished analyses (the per-rank replays read them).
    pub done: &'a Finished,
    /// The critical path's implicit `comm=0` and `launch=0` replays, where
    /// its graphs allow them.
    pub replays: Option<&'a ImplicitReplays>,
}

/// How late a rank was at the collectives where it arrived last: the sum
/// over those of its arrival minus the arrival before it (the collective
/// would have started that much sooner), and the instance where that was
/// the most.
#[derive(Debug, Clone, Default)]
pub struct Lateness {
    pub count: u64,
    pub ns: Ns,
    pub worst: Option<(f64, f64, String, Ns)>,
}

impl Context<'_> {
    fn part(&self, i: usize) -> &RankSummary {
        &self.ranks.ranks[i]
    }

    fn all_gaps(&self, i: usize) -> GapStats {
        self.part(i).parts.gaps.first().cloned().unwrap_or_default()
    }

    fn share(&self, ns: Ns, i: usize) -> f64 {
        pct(ns as f64, self.active[i] as f64)
    }
}

/// One rule (docs/findings.md#rules).
pub struct Rule {
    pub id: &'static str,
    pub fix: &'static str,
    /// Findings of this rule stay per rank (a straggler is one rank).
    pub per_rank_only: bool,
    /// What the rule sees on rank `i`, if anything.
    pub observe: fn(&Context<'_>, usize) -> Option<Evidence>,
    /// Whether that is a problem: the rule's threshold.
    pub fires: fn(&Context<'_>, usize, &Evidence) -> bool,
    /// The time a fix would save, ns: the rule's stated bound
    /// (docs/findings.md#savings), which also decides whether a finding
    /// is worth a look.
    pub savings: fn(&Context<'_>, usize, &Evidence) -> Ns,
    /// The what-if replay that expresses the fix, whose savings take the
    /// bound's place where the graphs allow (docs/findings.md#savings).
    pub replay: Option<Replay>,
}

/// A fix as a what-if rule of the critical path's replay
/// (docs/tracestat.md#what-if).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    /// `comm=0`: no transfer time.
    Comm,
    /// `launch=0`: no launch calls or latencies.
    Launch,
    /// `rank:N=median`: the finding's rank's kernels at the median rank's
    /// pace.
    RankMedian,
}

/// Pinned host memory copies at least this many times faster than
/// pageable memory (docs/findings.md#pageable-copy).
pub const PINNED_SPEEDUP: f64 = 2.0;
/// A copy engine's bandwidth for small copies' bytes, bytes per ns (GB/s)
/// (docs/findings.md#small-copy).
pub const COPY_GBPS: f64 = 20.0;
/// Copies under 64 KiB that make a pattern (docs/findings.md#small-copy).
pub const SMALL_COPIES: u64 = 100;
/// Share of kernels under `--short-kernel` for launch-bound.
pub const SHORT_KERNEL_SHARE: f64 = 50.0;

/// The evidence of a copy rule: one of the rank's copy tallies
/// (docs/tracestat.md#copies), described by `what` (given the tally and
/// its share of the active window).
fn copy_observe(
    c: &Context<'_>,
    i: usize,
    tally: fn(&RankCopies) -> &CopyTally,
    what: fn(&CopyTally, f64) -> String,
) -> Option<Evidence> {
    let t = tally(&c.part(i).parts.copies);
    (t.count > 0).then(|| Evidence {
        name: t.top_name.clone(),
        count: t.count,
        time_ns: t.ns,
        bytes: t.bytes,
        from_ns: t.first_ns,
        to_ns: t.last_ns,
        text: what(t, c.share(t.ns, i)),
    })
}

fn pageable_observe(c: &Context<'_>, i: usize) -> Option<Evidence> {
    copy_observe(
        c,
        i,
        |p| &p.pageable,
        |p, share| {
            format!(
            "{} copies from or to pageable host memory ({}), {} ({share:.1}% of the active window)",
            p.count,
            p.top_name,
            ms(p.ns)
        )
        },
    )
}

fn small_observe(c: &Context<'_>, i: usize) -> Option<Evidence> {
    copy_observe(
        c,
        i,
        |p| &p.small,
        |s, share| {
            format!(
            "{} copies under 64 KiB ({} bytes in all, most time: {}), {} ({share:.1}% of the active window)",
            s.count,
            s.bytes,
            s.top_name,
            ms(s.ns)
        )
        },
    )
}

fn sync_observe(c: &Context<'_>, i: usize) -> Option<Evidence> {
    let g = c.all_gaps(i).sync_gaps;
    (g.count > 0).then(|| {
        let text = format!(
            "{} device idle gaps with the host in a synchronisation call, {} ({:.1}% of the active window), the longest {}",
            g.count,
            ms(g.ns),
            c.share(g.ns, i),
            ms(g.longest_ns)
        );
        gap_evidence(&g, String::new(), text)
    })
}

/// The evidence of a kind of idle gap: its count and time, the longest
/// gap as the range to look at.
fn gap_evidence(g: &GapTally, name: String, text: String) -> Evidence {
    Evidence {
        name,
        count: g.count,
        time_ns: g.ns,
        bytes: 0,
        from_ns: g.longest_start_ns,
        to_ns: g.longest_start_ns + g.longest_ns,
        text,
    }
}

fn launch_observe(c: &Context<'_>, i: usize) -> Option<Evidence> {
    let g = c.all_gaps(i).launch_gaps;
    let l = &c.part(i).parts.launches.all;
    let window = c.part(i).parts.breakdown.first()?;
    (g.count > 0 && l.kernels > 0).then(|| {
        let end = window_end(c, i);
        Evidence {
            name: String::new(),
            count: g.count,
            time_ns: g.ns,
            bytes: 0,
            from_ns: end - window.active_ns,
            to_ns: end,
            text: format!(
                "{} idle gaps under 100 us between kernels while the host launched, {} ({:.1}% of the active window); {} of {} kernels ({:.0}%) shorter than --short-kernel",
                g.count,
                ms(g.ns),
                c.share(g.ns, i),
                l.short_count,
                l.kernels,
                pct(l.short_count as f64, l.kernels as f64)
            ),
        }
    })
}

/// The end of a rank's active window, on its own clock.
fn window_end(c: &Context<'_>, i: usize) -> Ns {
    let r = c.part(i);
    let b = r.parts.breakdown.first().cloned().unwrap_or_default();
    r.last_ns - b.idle_after_ns
}

fn host_observe(c: &Context<'_>, i: usize) -> Option<Evidence> {
    let all = c.all_gaps(i);
    let g = &all.host_gaps;
    (g.count > 0).then(|| {
        let names: Vec<String> = all
            .host_gap_ranges
            .iter()
            .map(|(n, t)| format!("{n} {}", ms(*t)))
            .collect();
        let name = all
            .host_gap_ranges
            .first()
            .map(|r| r.0.clone())
            .unwrap_or_default();
        let text = format!(
            "{} device idle gaps of 100 us or more with the host busy elsewhere, {} ({:.1}% of the active window), the longest {}; in {}",
            g.count,
            ms(g.ns),
            c.share(g.ns, i),
            ms(g.longest_ns),
            names.join(", ")
        );
        gap_evidence(g, name, text)
    })
}

fn exposed_observe(c: &Context<'_>, i: usize) -> Option<Evidence> {
    let b = c.part(i).parts.breakdown.first()?;
    let exposed = b.communication_union_ns - b.overlap_ns;
    let wait = c.collectives.tally.waited.get(i).copied().unwrap_or(0);
    (exposed > 0).then(|| {
        let end = window_end(c, i);
        Evidence {
            name: String::new(),
            count: 0,
            time_ns: exposed,
            bytes: 0,
            from_ns: end - b.active_ns,
            to_ns: end,
            text: format!(
                "{} of communication with no compute beside it ({:.1}% of the active window), of which {} waiting for later ranks at collectives; {} overlapped",
                ms(exposed),
                c.share(exposed, i),
                ms(wait.min(exposed)),
                ms(b.overlap_ns)
            ),
        }
    })
}

fn straggler_observe(c: &Context<'_>, i: usize) -> Option<Evidence> {
    let named = c.straggler == Some((i, true));
    let late = &c.lateness[i];
    if !(named || c.late.contains(&i)) || late.count == 0 {
        return None;
    }
    // One of several: said, as the report's straggler line says it.
    let several = if named {
        String::new()
    } else {
        format!(
            "one of {} ranks whose arrivals made the others wait, none twice as long as the rest: ",
            c.late.len()
        )
    };
    let (start_us, dur_us, name, worst_ns) = late.worst.clone()?;
    // Collective times are on aligned clocks since the aligned origin:
    // back to this rank's clock, as every evidence range is.
    let off = c
        .collectives
        .clock_alignment
        .offset_ns
        .get(i)
        .copied()
        .unwrap_or(0);
    let base = c.origin + off;
    Some(Evidence {
        name: String::new(),
        count: late.count,
        time_ns: late.ns,
        bytes: 0,
        from_ns: base + (start_us * 1e3) as Ns,
        to_ns: base + ((start_us + dur_us) * 1e3) as Ns,
        text: format!(
            "{several}arrived last at {} collectives, {} after the rank before it in all (the most, {}, at {name}); the others waited {} in total",
            late.count,
            ms(late.ns),
            ms(worst_ns),
            ms((c.collectives.tally.caused.get(i).copied()).unwrap_or(0))
        ),
    })
}

fn imbalance_observe(c: &Context<'_>, i: usize) -> Option<Evidence> {
    // Only a rank above the median of all can stand out above the median
    // of the others by the rule's share: the cheap test first, for runs
    // of thousands of ranks.
    if c.ranks.ranks.len() < 2
        || (c.compute[i] as f64) <= (1.0 + IMBALANCE_SHARE) * c.median_compute
    {
        return None;
    }
    let med = median_without(&c.sorted_compute, c.compute[i] as f64);
    let excess = c.compute[i] as f64 - med;
    if excess <= 0.0 {
        return None;
    }
    // The kernels that make the excess: the rank's total per compute
    // kernel against the median of the other ranks' (0 where absent).
    let totals = c
        .kernel_totals
        .get_or_init(|| compute_kernel_totals(c.ranks));
    let compute_kernels = || {
        c.part(i)
            .parts
            .kernels
            .iter()
            .filter(|k| k.class == Class::Compute)
    };
    let mut by_kernel: Vec<(String, f64)> = Vec::new();
    for k in compute_kernels() {
        let Some(sorted) = totals.get(&*k.name) else {
            continue;
        };
        let own: Ns = compute_kernels()
            .filter(|x| x.name == k.name)
            .map(|x| x.total_ns)
            .sum();
        let d = k.total_ns as f64 - median_without(sorted, own as f64);
        if d > 0.0 {
            by_kernel.push((k.name.to_string(), d));
        }
    }
    by_kernel.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let top: Vec<String> = by_kernel
        .iter()
        .take(3)
        .map(|(n, d)| format!("{n} +{}", ms(*d as Ns)))
        .collect();
    let end = window_end(c, i);
    let active = c.part(i).parts.breakdown.first().map_or(0, |b| b.active_ns);
    Some(Evidence {
        name: by_kernel.first().map(|k| k.0.clone()).unwrap_or_default(),
        count: by_kernel.len() as u64,
        time_ns: excess as Ns,
        bytes: 0,
        from_ns: end - active,
        to_ns: end,
        text: format!(
            "{} of compute kernel time, {:+.1}% against the median of the other ranks ({}); most of it: {}",
            ms(c.compute[i]),
            super::vs(c.compute[i] as f64, med),
            ms(med as Ns),
            top.join(", ")
        ),
    })
}

/// Share of the others' median above which a rank's compute time can
/// stand out (docs/findings.md#imbalance).
pub const IMBALANCE_SHARE: f64 = 0.10;

/// Per compute kernel name, each rank's total time (0 where absent).
/// Per compute kernel, every rank's total of it (0 where absent), sorted.
fn compute_kernel_totals<'a>(ranks: &'a Ranks<'_>) -> std::collections::HashMap<&'a str, Vec<f64>> {
    let n = ranks.ranks.len();
    let mut out: std::collections::HashMap<&str, Vec<Ns>> = Default::default();
    for (j, r) in ranks.ranks.iter().enumerate() {
        for k in r.parts.kernels.iter().filter(|k| k.class == Class::Compute) {
            out.entry(&*k.name).or_insert_with(|| vec![0; n])[j] += k.total_ns;
        }
    }
    out.into_iter()
        .map(|(name, totals)| {
            let mut sorted: Vec<f64> = totals.into_iter().map(|t| t as f64).collect();
            sorted.sort_by(f64::total_cmp);
            (name, sorted)
        })
        .collect()
}

/// The median of `sorted` without one of its elements equal to `value`
/// (a rank's own): the median of the other ranks, as [`median`] of them
/// gives it, without copying and sorting them per rank.
fn median_without(sorted: &[f64], value: f64) -> f64 {
    let m = sorted.len().saturating_sub(1);
    if m == 0 {
        return 0.0;
    }
    let skip = sorted.partition_point(|&x| x < value).min(m);
    let at = |k: usize| if k < skip { sorted[k] } else { sorted[k + 1] };
    if m % 2 == 1 {
        at(m / 2)
    } else {
        (at(m / 2 - 1) + at(m / 2)) / 2.0
    }
}

fn setup_observe(c: &Context<'_>, i: usize, kinds: &[SetupKind], what: &str) -> Option<Evidence> {
    let part = &c.part(i).parts.setup_calls;
    let tallies: Vec<_> = kinds.iter().filter_map(|&k| part.kind(k)).collect();
    let calls: u64 = tallies.iter().map(|t| t.steady_calls).sum();
    if calls == 0 {
        return None;
    }
    let ns: Ns = tallies.iter().map(|t| t.steady_ns).sum();
    let steady = tallies.iter().filter(|t| t.steady_calls > 0);
    let from = steady.clone().map(|t| t.steady_first_ns).min().unwrap_or(0);
    let to = steady.clone().map(|t| t.steady_last_ns).max().unwrap_or(0);
    let top = steady
        .max_by(|a, b| {
            a.steady_ns
                .cmp(&b.steady_ns)
                .then(b.top_name.cmp(&a.top_name))
        })
        .map(|t| t.top_name.clone())
        .unwrap_or_default();
    let rule = part.steady.as_ref().map_or("", |s| s.2.as_str());
    let busy: Ns = tallies
        .iter()
        .fold(0, |a: Ns, t| a.saturating_add(t.steady_busy_ns.max(0)));
    let busy = if busy > 0 {
        format!(
            "; {} of it while the device was busy (a free waits for its work), which saves no device time",
            ms(busy)
        )
    } else {
        String::new()
    };
    Some(Evidence {
        name: top.clone(),
        count: calls,
        time_ns: ns,
        bytes: 0,
        from_ns: from,
        to_ns: to,
        text: format!(
            "{calls} {what} calls inside the steady state ({rule}), {} (most time: {top}){busy}",
            ms(ns)
        ),
    })
}

/// Set-up calls' steady time less the part in which the rank's device was
/// busy: host time the device did not wait for (a free that waits for the
/// device's work holds up no device; docs/findings.md#alloc-churn).
fn device_idle_part(c: &Context<'_>, i: usize, e: &Evidence, kinds: &[SetupKind]) -> Ns {
    let part = &c.part(i).parts.setup_calls;
    let busy: Ns = kinds
        .iter()
        .filter_map(|&k| part.kind(k))
        .fold(0, |a: Ns, t| a.saturating_add(t.steady_busy_ns.max(0)));
    // An edited partial's part cannot make the savings exceed the time.
    e.time_ns - busy.clamp(0, e.time_ns.max(0))
}

fn serialised_observe(c: &Context<'_>, i: usize) -> Option<Evidence> {
    copy_observe(
        c,
        i,
        |p| &p.on_compute_queue,
        |q, share| {
            format!(
            "{} copies on a compute queue ({}), {} of them while a copy engine of the device was free ({share:.1}% of the active window)",
            q.count,
            q.top_name,
            ms(q.ns)
        )
        },
    )
}

/// `ns` as milliseconds with 3 decimals.
fn ms(ns: Ns) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// The bound of the rules whose problem's time is what a fix saves
/// (docs/findings.md#rules).
fn its_time(_: &Context<'_>, _: usize, e: &Evidence) -> Ns {
    e.time_ns
}

/// The threshold of the rules that fire at 2% of the active window
/// (docs/findings.md#rules).
fn two_pct(c: &Context<'_>, i: usize, e: &Evidence) -> bool {
    at_least(c, i, e.time_ns, 0.02)
}

/// Whether `ns` is at least `share` of rank `i`'s active window.
fn at_least(c: &Context<'_>, i: usize, ns: Ns, share: f64) -> bool {
    ns as f64 >= share * c.active[i] as f64
}

/// The rules, in the order of docs/findings.md#rules.
pub const RULES: [Rule; 11] = [
    Rule {
        id: "pageable-copy",
        fix: "allocate the host buffers pinned (PyTorch: pin_memory=True; SYCL: sycl::malloc_host; Level Zero: zeMemAllocHost; CUDA: cudaMallocHost; HIP: hipHostMalloc) so that copies go straight to the copy engine",
        per_rank_only: false,
        observe: pageable_observe,
        fires: two_pct,
        savings: |_, _, e| (e.time_ns as f64 * (1.0 - 1.0 / PINNED_SPEEDUP)) as Ns,
        replay: None,
    },
    Rule {
        id: "small-copy",
        fix: "batch small copies into one larger copy (pack the tensors into one buffer, copy it once)",
        per_rank_only: false,
        observe: small_observe,
        fires: |c, i, e| e.count >= SMALL_COPIES && at_least(c, i, e.time_ns, 0.02),
        savings: |_, _, e| (e.time_ns - (e.bytes as f64 / COPY_GBPS) as Ns).max(0),
        replay: None,
    },
    Rule {
        id: "sync-wait",
        fix: "take the host synchronisation out of the loop, or queue more work before it (PyTorch: no .item(), .cpu() or synchronize() per step)",
        per_rank_only: false,
        observe: sync_observe,
        fires: two_pct,
        savings: its_time,
        replay: None,
    },
    Rule {
        id: "launch-bound",
        fix: "launch fewer, longer kernels: fuse operations (torch.compile), or record the step once and replay it (a SYCL graph or a Level Zero command list executed again; CUDA or HIP graphs; torch.compile mode=\"reduce-overhead\")",
        per_rank_only: false,
        observe: launch_observe,
        fires: |c, i, e| {
            let l = &c.part(i).parts.launches.all;
            at_least(c, i, e.time_ns, 0.05)
                && pct(l.short_count as f64, l.kernels as f64) >= SHORT_KERNEL_SHARE
        },
        savings: its_time,
        replay: Some(Replay::Launch),
    },
    Rule {
        id: "host-bound",
        fix: "take the host work named here off the step's path (data loading in worker processes, host work done while the device is busy)",
        per_rank_only: false,
        observe: host_observe,
        fires: |c, i, e| at_least(c, i, e.time_ns, 0.15),
        savings: its_time,
        replay: None,
    },
    Rule {
        id: "exposed-communication",
        fix: "overlap communication with compute: start collectives during backward (gradient buckets), or use asynchronous collectives and wait late",
        per_rank_only: false,
        observe: exposed_observe,
        fires: |c, i, e| at_least(c, i, exposed_savings(c, i, e), 0.20),
        savings: exposed_savings,
        replay: Some(Replay::Comm),
    },
    Rule {
        id: "straggler",
        fix: "find what delays this rank before its collectives (its other findings, its host work, its data) and even it out with the others",
        per_rank_only: true,
        observe: straggler_observe,
        fires: |c, _, e| e.time_ns as f64 >= 0.02 * c.median_active,
        savings: its_time,
        // What delays a straggler is as often host work (data loading, a
        // sleep, a synchronisation) as its kernels, which is all
        // `rank:N=median` changes: its lateness is the estimate, and the
        // kernel-speed replay is imbalance's (docs/findings.md#savings).
        replay: None,
    },
    Rule {
        id: "imbalance",
        fix: "give this rank the same work as the others, or find why its kernels run slower (device, clocks, input sizes)",
        per_rank_only: true,
        observe: imbalance_observe,
        fires: |c, i, _| {
            let others: Vec<f64> = (0..c.compute.len())
                .filter(|&j| j != i)
                .map(|j| c.compute[j] as f64)
                .collect();
            stands_out(c.compute[i] as f64, &others, IMBALANCE_SHARE, 0.0)
        },
        savings: its_time,
        replay: Some(Replay::RankMedian),
    },
    Rule {
        id: "alloc-churn",
        fix: "allocate once before the loop and reuse the buffers (a caching allocator, preallocated workspaces)",
        per_rank_only: false,
        observe: |c, i| setup_observe(c, i, &[SetupKind::Alloc, SetupKind::Free], "allocation or free"),
        fires: |_, _, _| true,
        savings: |c, i, e| device_idle_part(c, i, e, &[SetupKind::Alloc, SetupKind::Free]),
        replay: None,
    },
    Rule {
        id: "jit",
        fix: "build the modules before the loop (warm up every shape first, or compile the kernels ahead of time)",
        per_rank_only: false,
        observe: |c, i| setup_observe(c, i, &[SetupKind::ModuleBuild], "module or program build"),
        fires: |_, _, _| true,
        savings: |c, i, e| device_idle_part(c, i, e, &[SetupKind::ModuleBuild]),
        replay: None,
    },
    Rule {
        id: "serialised-copy",
        fix: "submit copies to a copy engine's queue (a separate queue or stream) so that they run beside compute",
        per_rank_only: false,
        observe: serialised_observe,
        fires: two_pct,
        savings: its_time,
        replay: None,
    },
];

/// Exposed communication less the part spent waiting for later ranks
/// (the straggler's savings, docs/findings.md#exposed-communication).
fn exposed_savings(c: &Context<'_>, i: usize, e: &Evidence) -> Ns {
    let wait = c.collectives.tally.waited.get(i).copied().unwrap_or(0);
    (e.time_ns - wait).max(0)
}

/// Each rank's lateness at the collectives where it arrived last, inside
/// its steady state (docs/findings.md#straggler: a late arrival at the
/// barrier after start-up is start-up).
fn lateness(ranks: &Ranks<'_>, collectives: &CollectivesOut) -> Vec<Lateness> {
    let instances: &[CollectiveInstance] = &collectives.collectives;
    let off = &collectives.clock_alignment.offset_ns;
    let origin = aligned_origin(ranks, off);
    let mut out = vec![Lateness::default(); ranks.ranks.len()];
    let index: std::collections::HashMap<&str, usize> = ranks
        .labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    for inst in instances {
        let Some(&last) = index.get(inst.last_rank.as_str()) else {
            continue;
        };
        // The arrival before the last one waited the least of the others.
        let gap_us = inst
            .waits_us
            .iter()
            .filter(|(r, _)| *r != inst.last_rank)
            .map(|(_, w)| *w)
            .fold(f64::INFINITY, f64::min);
        if !gap_us.is_finite() {
            continue;
        }
        // The instance's start on the last rank's own clock.
        let start = origin + off.get(last).copied().unwrap_or(0) + (inst.start_us * 1e3) as Ns;
        let steady = ranks.ranks[last].parts.setup_calls.steady.as_ref();
        if steady.is_some_and(|s| start < s.0 || start > s.1) {
            continue;
        }
        let ns = (gap_us * 1e3).round() as Ns;
        let l = &mut out[last];
        l.count += 1;
        l.ns += ns;
        if l.worst.as_ref().is_none_or(|w| ns > w.3) {
            l.worst = Some((inst.start_us, inst.duration_us, inst.name.clone(), ns));
        }
    }
    out
}

fn context<'a>(ranks: &'a Ranks<'a>, done: &'a Finished) -> Context<'a> {
    let collectives = done
        .collectives
        .as_ref()
        .expect("the collectives finish before the findings");
    let stragglers = done
        .stragglers
        .as_ref()
        .expect("the stragglers finish before the findings");
    let straggler = stragglers.straggler.as_ref().and_then(|s| {
        let i = ranks.labels.iter().position(|l| *l == s.rank)?;
        Some((i, s.by_arrivals))
    });
    let late_ranks = (stragglers.late_ranks.iter())
        .filter_map(|l| ranks.labels.iter().position(|x| x == l))
        .collect();
    let scope0 = |r: &RankSummary| r.parts.breakdown.first().cloned().unwrap_or_default();
    let active: Vec<Ns> = ranks.ranks.iter().map(|r| scope0(r).active_ns).collect();
    let wall: Vec<Ns> = ranks.ranks.iter().map(|r| scope0(r).wall_ns).collect();
    let compute: Vec<Ns> = ranks
        .ranks
        .iter()
        .map(|r| {
            r.parts
                .kernels
                .iter()
                .filter(|k| k.class == Class::Compute)
                .map(|k| k.total_ns)
                .sum()
        })
        .collect();
    let trusted = collectives.clock_alignment.trusted;
    let late = if trusted {
        lateness(ranks, collectives)
    } else {
        vec![Lateness::default(); ranks.ranks.len()]
    };
    let median_active = median(&mut active.iter().map(|&a| a as f64).collect::<Vec<_>>());
    let mut sorted_compute: Vec<f64> = compute.iter().map(|&a| a as f64).collect();
    sorted_compute.sort_by(f64::total_cmp);
    let median_compute = median(&mut sorted_compute.clone());
    Context {
        ranks,
        collectives,
        straggler,
        late: late_ranks,
        active,
        wall,
        compute,
        lateness: late,
        median_active,
        median_compute,
        sorted_compute,
        origin: aligned_origin(ranks, &collectives.clock_alignment.offset_ns),
        kernel_totals: std::sync::OnceLock::new(),
        done,
        replays: done.critical_path.as_ref().and_then(|p| p.replays.as_ref()),
    }
}

/// A rank's finding of one rule, if it fires and is worth a look.
struct Hit {
    rank: usize,
    evidence: Evidence,
    savings: Ns,
}

/// A finding's savings and how they were estimated
/// (docs/findings.md#savings).
#[derive(Debug, Clone, Copy)]
struct Savings {
    ns: f64,
    by: &'static str,
}

fn finding(
    c: &Context<'_>,
    rule: &Rule,
    hit: &Hit,
    all: Option<(u64, f64)>,
    estimate: Savings,
) -> Finding {
    let off = c
        .collectives
        .clock_alignment
        .offset_ns
        .get(hit.rank)
        .copied()
        .unwrap_or(0);
    let origin = c.origin;
    let at = |t: Ns| us(t - off - origin);
    let e = &hit.evidence;
    let savings = estimate.ns;
    let (rank, ranks, wall, mut text) = match all {
        None => (
            c.ranks.labels[hit.rank].clone(),
            1,
            c.wall[hit.rank] as f64,
            e.text.clone(),
        ),
        Some((fired, wall)) => (
            "all".to_string(),
            fired,
            wall,
            format!(
                "on {fired} of {} ranks; e.g. rank {}: {}",
                c.ranks.ranks.len(),
                c.ranks.labels[hit.rank],
                e.text
            ),
        ),
    };
    // What the replay changed, so that the savings read right.
    let replayed = match rule.replay.filter(|_| estimate.by == "replay") {
        Some(Replay::Comm) => Some("comm=0".to_string()),
        Some(Replay::Launch) => Some("launch=0".to_string()),
        Some(Replay::RankMedian) => Some(format!("rank:{}=median", c.ranks.labels[hit.rank])),
        None => None,
    };
    if let Some(r) = replayed {
        text.push_str(&format!(
            "; savings by the what-if replay of the run's steps under {r}"
        ));
    }
    Finding {
        rule: rule.id.to_string(),
        rank,
        ranks,
        step: String::new(),
        name: e.name.clone(),
        count: e.count,
        time_us: us(e.time_ns),
        from_us: at(e.from_ns),
        to_us: at(e.to_ns),
        savings_us: us(savings as Ns),
        savings_by: estimate.by.to_string(),
        savings_pct: pct(savings, wall),
        evidence: text,
        fix: rule.fix.to_string(),
    }
}

/// Every rule over every rank (docs/findings.md#ranks).
fn evaluate(c: &Context<'_>) -> Vec<Finding> {
    let n = c.ranks.ranks.len();
    let mut out = Vec::new();
    for rule in &RULES {
        let mut savings_per_rank: Vec<f64> = vec![0.0; n];
        let mut hits: Vec<Hit> = Vec::new();
        for (i, rank_savings) in savings_per_rank.iter_mut().enumerate() {
            let Some(evidence) = (rule.observe)(c, i) else {
                continue;
            };
            let savings = (rule.savings)(c, i, &evidence);
            *rank_savings = savings as f64;
            let worth = savings as f64 >= MIN_SAVINGS_SHARE * c.active[i] as f64 && savings > 0;
            if worth && (rule.fires)(c, i, &evidence) {
                hits.push(Hit {
                    rank: i,
                    evidence,
                    savings,
                });
            }
        }
        if !rule.per_rank_only && hits.len() >= 2 && hits.len() * 2 >= n {
            let savings = median(&mut savings_per_rank);
            if savings < MIN_SAVINGS_SHARE * c.median_active {
                continue;
            }
            let wall = median(&mut c.wall.iter().map(|&w| w as f64).collect::<Vec<_>>());
            let example = hits
                .iter()
                .max_by(|a, b| a.savings.cmp(&b.savings).then(b.rank.cmp(&a.rank)))
                .expect("at least one hit");
            let estimate = run_replay(c, rule).unwrap_or(Savings {
                ns: savings,
                by: "bound",
            });
            // The replay may find less than the bound: the threshold holds
            // for the savings the finding states (docs/findings.md#thresholds).
            if estimate.ns < MIN_SAVINGS_SHARE * c.median_active || estimate.ns <= 0.0 {
                continue;
            }
            out.push(finding(
                c,
                rule,
                example,
                Some((hits.len() as u64, wall)),
                estimate,
            ));
        } else {
            let estimates = per_rank_estimates(c, rule, &hits);
            out.extend(
                hits.iter()
                    .zip(estimates)
                    .filter(|(h, e)| {
                        e.ns >= MIN_SAVINGS_SHARE * c.active[h.rank] as f64 && e.ns > 0.0
                    })
                    .map(|(h, e)| finding(c, rule, h, None, e)),
            );
        }
    }
    // Ranked by savings; then by rule, then by rank label.
    out.sort_by(|a, b| {
        b.savings_us
            .total_cmp(&a.savings_us)
            .then_with(|| rule_index(&a.rule).cmp(&rule_index(&b.rule)))
            .then_with(|| a.rank.cmp(&b.rank))
    });
    out
}

/// The run's savings under the rule's replay, when it is one of the whole
/// run (`comm=0`, `launch=0`) and the graphs carry it.
fn run_replay(c: &Context<'_>, rule: &Rule) -> Option<Savings> {
    let r = c.replays?;
    let ns = match rule.replay? {
        Replay::Comm => r.comm,
        Replay::Launch => r.launch,
        Replay::RankMedian => return None,
    };
    Some(Savings {
        ns: ns as f64,
        by: "replay",
    })
}

/// The savings of per-rank findings: the rule's replay where the graphs
/// allow (`rank:N=median` for the hit's rank; the run's replay otherwise),
/// else each hit's bound.
fn per_rank_estimates(c: &Context<'_>, rule: &Rule, hits: &[Hit]) -> Vec<Savings> {
    let bound = |h: &Hit| Savings {
        ns: h.savings as f64,
        by: "bound",
    };
    if rule.replay == Some(Replay::RankMedian) {
        let who: Vec<usize> = hits.iter().map(|h| h.rank).collect();
        let replayed = rank_median_savings(c.ranks, c.done, &who);
        return hits
            .iter()
            .zip(replayed)
            .map(|(h, r)| match r {
                Some(ns) => Savings {
                    ns: ns as f64,
                    by: "replay",
                },
                None => bound(h),
            })
            .collect();
    }
    hits.iter()
        .map(|h| run_replay(c, rule).unwrap_or_else(|| bound(h)))
        .collect()
}

fn rule_index(id: &str) -> usize {
    RULES.iter().position(|r| r.id == id).unwrap_or(RULES.len())
}

pub struct Findings;

impl Analyzer for Findings {
    /// Nothing of its own: it reads the other analyses' results.
    type Rank = ();
    type Output = FindingsOut;

    fn observe(_: &RankModel<'_>, _: &RankOptions) {}

    fn part(_: &RankSummary) -> &Self::Rank {
        &()
    }

    fn finish(ranks: &Ranks<'_>, done: &Finished) -> FindingsOut {
        let c = context(ranks, done);
        FindingsOut {
            findings: evaluate(&c),
        }
    }

    fn sections(r: &Report, _: &Screen) -> Vec<Section> {
        vec![section(&r.out.findings.findings)]
    }
}

/// The id of the findings section (first on the console and the page).
pub const SECTION_ID: &str = "findings";

fn section(rows: &[Finding]) -> Section {
    let mut s = Section::new(
        SECTION_ID,
        "Findings: what to fix first, and what it would save (docs/findings.md)",
    );
    if rows.is_empty() {
        s.lines
            .push("(none: no rule found a problem worth 1% of a rank's active window)".to_string());
    }
    let steps = rows.iter().any(|f| !f.step.is_empty());
    let step = Column::new("step", "step", Unit::Text);
    let mut t = Table::new(
        "findings",
        "",
        vec![
            Column::new("rule", "rule", Unit::Text),
            Column::new("rank", "rank", Unit::Text),
            Column::new("ranks", "ranks", Unit::Count).files_only(),
            if steps { step } else { step.files_only() },
            Column::new("savings_us", "saves", Unit::Us),
            Column::new("savings_pct", "of wall", Unit::Pct),
            Column::new("savings_by", "by", Unit::Text),
            Column::new("name", "name", Unit::Text).files_only(),
            Column::new("count", "count", Unit::Count).files_only(),
            Column::new("time_us", "time", Unit::Us).files_only(),
            Column::new("from_us", "from", Unit::Us),
            Column::new("to_us", "to", Unit::Us),
            Column::new("evidence", "evidence", Unit::Text),
            Column::new("fix", "fix", Unit::Text).files_only(),
        ],
    );
    for f in rows {
        t.push(vec![
            Value::from(&f.rule),
            Value::from(&f.rank),
            f.ranks.into(),
            Value::from(&f.step),
            f.savings_us.into(),
            f.savings_pct.into(),
            Value::from(&f.savings_by),
            Value::from(&f.name),
            f.count.into(),
            f.time_us.into(),
            f.from_us.into(),
            f.to_us.into(),
            Value::from(&f.evidence),
            Value::from(&f.fix),
        ]);
    }
    if rows.len() > TOP {
        t.show_only(
            (0..TOP).collect(),
            format!(
                "({} more findings: --csv/--json have all)",
                rows.len() - TOP
            ),
        );
    }
    let mut fixed: Vec<&str> = Vec::new();
    for f in rows.iter().take(TOP) {
        if !fixed.contains(&f.rule.as_str()) {
            fixed.push(&f.rule);
            t.notes.push(format!("fix {}: {}", f.rule, f.fix));
        }
    }
    t.notes.push("(saves: the time a fix would save, by the what-if replay of the run's steps or by a stated bound per rule (by: replay or bound, docs/findings.md#savings); from/to: where to look, since the report's start)".to_string());
    // Without findings the section's line says so: an empty table and its
    // legend under it would only repeat it. Its file is still written.
    t.files_only = rows.is_empty();
    s.tables.push(t);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_without_one_rank_is_the_median_of_the_others() {
        let values = [5.0, 1.0, 9.0, 5.0, 3.0, 7.0, 2.0];
        for n in 1..=values.len() {
            let mut sorted = values[..n].to_vec();
            sorted.sort_by(f64::total_cmp);
            for i in 0..n {
                let mut others: Vec<f64> = (0..n).filter(|&j| j != i).map(|j| values[j]).collect();
                assert_eq!(
                    median_without(&sorted, values[i]),
                    median(&mut others),
                    "{n} values, without #{i}"
                );
            }
        }
    }
}
