//! Collectives matched across ranks (docs/tracestat.md#collectives): the
//! n-th call of one (collective, communicator, size) on each rank is one
//! operation; its skew (first to last arrival), the rank that arrived
//! last, every rank's wait for it, the transfer after the last arrival
//! and the bus bandwidth it reached; then per collective type.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use unitrace_render::sections::{Column, FileRows, RowSource, Section, Table, Unit, Value};

use super::clocks::{align, ClockAlignment, Matched};
use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::classify::bus_factor;
use crate::ingest::CollectiveCall;
use crate::rank_model::RankModel;
use crate::time::{us, Ns};

/// At most this many collective instances on screen.
const TOP: usize = 15;

/// One collective call of one rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectiveOcc {
    pub name: String,
    pub comm: Option<String>,
    pub bytes: Option<u64>,
    pub start: Ns,
    pub end: Ns,
    /// When the rank called it on the host, where that is not `start` (a
    /// collective on the device; absent in partials before format 8, and
    /// then read as `start`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub called: Option<Ns>,
}

impl CollectiveOcc {
    pub fn called(&self) -> Ns {
        self.called.unwrap_or(self.start)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CollectiveInstance {
    pub name: String,
    pub comm: Option<String>,
    pub bytes: Option<u64>,
    /// 1-based occurrence of this (name, comm, bytes) on each rank.
    pub occurrence: u64,
    pub ranks: usize,
    /// Earliest start, microseconds since the earliest rank's start.
    pub start_us: f64,
    pub skew_us: f64,
    pub last_rank: String,
    pub duration_us: f64,
    /// From the last arrival to the latest end: the time the data moved.
    pub transfer_us: f64,
    pub bus_gbps: Option<f64>,
    /// Every rank's call ends after the last arrival, as a blocking
    /// collective must; when not, the n-th calls are not one operation or
    /// the ranks' clocks are apart (docs/tracestat.md#collectives).
    pub consistent: bool,
    /// `(rank, wait)`: from the rank's own start to the last arrival.
    pub waits_us: Vec<(String, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CollectiveTypeRow {
    pub name: String,
    pub instances: u64,
    pub skew_mean_us: f64,
    pub skew_max_us: f64,
    pub duration_mean_us: f64,
    pub transfer_mean_us: f64,
    pub bytes_total: u64,
    pub bus_gbps_mean: Option<f64>,
    pub wait_total_us: f64,
    pub most_often_last: String,
}

/// Per rank (report order): how often it arrived last, at how many
/// matched calls it took part, the wait it caused the others, its own wait.
#[derive(Debug, Clone, Default)]
pub struct ArrivalTally {
    pub last: Vec<u64>,
    pub calls: Vec<u64>,
    pub caused: Vec<Ns>,
    pub waited: Vec<Ns>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CollectivesOut {
    /// Shared with the tables of its files, made row by row from it
    /// (docs/tracestat.md#scale).
    pub collectives: Arc<Vec<CollectiveInstance>>,
    pub collective_summary: Vec<CollectiveTypeRow>,
    /// Matched collective instances whose times line up (see
    /// [`CollectiveInstance::consistent`]).
    pub collectives_consistent: usize,
    /// How the ranks' clocks were lined up (docs/tracestat.md#clock-alignment).
    pub clock_alignment: ClockAlignment,
    #[serde(skip)]
    pub tally: ArrivalTally,
}

pub struct Collectives;

impl Analyzer for Collectives {
    type Rank = Vec<CollectiveOcc>;
    type Output = CollectivesOut;

    fn observe(m: &RankModel<'_>, _: &RankOptions) -> Self::Rank {
        call_order(&m.trace.collectives)
            .into_iter()
            .map(|i| {
                let c = &m.trace.collectives[i];
                CollectiveOcc {
                    name: c.name.to_string(),
                    comm: c.comm.clone(),
                    bytes: c.bytes,
                    start: c.start,
                    end: c.end,
                    called: (c.called != c.start).then_some(c.called),
                }
            })
            .collect()
    }

    fn part(rank: &RankSummary) -> &Self::Rank {
        &rank.parts.collectives
    }

    fn finish(ranks: &Ranks<'_>, _: &Finished) -> CollectivesOut {
        let (collectives, tally, clock_alignment) = instances(ranks);
        let collective_summary = summary(&collectives);
        let consistent = collectives.iter().filter(|c| c.consistent).count();
        CollectivesOut {
            collectives: Arc::new(collectives),
            collective_summary,
            collectives_consistent: consistent,
            clock_alignment,
            tally,
        }
    }

    fn sections(r: &Report, _: &Screen) -> Vec<Section> {
        let out = &r.out.collectives;
        let mut s = Section::new("collectives", "Collectives across ranks (per type)");
        if out.collective_summary.is_empty() {
            s.lines
                .push("(no collective call matched on two ranks or more)".to_string());
        }
        let trusted = out.clock_alignment.trusted;
        let mut summary = summary_table(&out.collective_summary);
        let mut instances = instance_table(&out.collectives);
        if !trusted && !out.collectives.is_empty() {
            s.lines.push(format!(
                "(skew, wait and bus bandwidth left out: {})",
                out.clock_alignment.reason
            ));
            hide_timing_columns(&mut summary);
            instances.files_only = true;
        }
        s.tables.push(summary);
        s.tables.push(instances);
        s.tables.push(wait_table(&out.collectives));
        vec![clock_section(&out.clock_alignment), s]
    }
}

type Key = (String, Option<String>, Option<u64>);
/// `(rank index, start, end)` of each rank's n-th call, per occurrence.
type Calls = Vec<Vec<(usize, Ns, Ns)>>;

/// The order of a rank's collective calls in its part (by start, end and
/// name; calls alike keep their order in the trace): the n-th call of a
/// kind is counted in this order. Other analyses that refer to a call by
/// its position in the part ([`CollectiveIndex`]) sort the same way.
pub fn call_order(calls: &[CollectiveCall]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..calls.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&calls[a], &calls[b]);
        (a.start, a.end, &a.name).cmp(&(b.start, b.end, &b.name))
    });
    order
}

/// A call of one rank: `(rank index, position in the rank's part)`.
pub type CollectiveIndex = (usize, usize);

/// The calls of every rank grouped into operations: per kind, per
/// occurrence, the calls of the ranks that took part (the matching of
/// docs/tracestat.md#collectives).
pub fn group_calls(ranks: &Ranks<'_>) -> BTreeMap<Key, Vec<Vec<CollectiveIndex>>> {
    // A call's key looked up borrowed, each distinct key owned once at the
    // end: a key per call cloned twice and hashed with SipHash was about
    // 1% of a report.
    type Borrowed<'k> = (&'k str, Option<&'k str>, Option<u64>);
    let mut index: rustc_hash::FxHashMap<Borrowed<'_>, usize> = Default::default();
    let mut lists: Vec<(Borrowed<'_>, Vec<Vec<CollectiveIndex>>)> = Vec::new();
    // Per key: this rank's calls of it so far.
    let mut nth: Vec<usize> = Vec::new();
    let spans = common_step_spans(ranks);
    for (i, r) in ranks.ranks.iter().enumerate() {
        nth.iter_mut().for_each(|n| *n = 0);
        let span = spans.as_ref().and_then(|s| s[i]);
        for (j, c) in Collectives::part(r).iter().enumerate() {
            if span.is_some_and(|(lo, hi)| c.called() < lo || c.called() >= hi) {
                continue;
            }
            let key = (c.name.as_str(), c.comm.as_deref(), c.bytes);
            let at = *index.entry(key).or_insert_with(|| {
                lists.push((key, Vec::new()));
                nth.push(0);
                lists.len() - 1
            });
            let (k, list) = (&mut nth[at], &mut lists[at].1);
            if list.len() <= *k {
                list.push(Vec::new());
            }
            list[*k].push((i, j));
            *k += 1;
        }
    }
    lists
        .into_iter()
        .map(|((name, comm, bytes), list)| {
            ((name.to_string(), comm.map(str::to_string), bytes), list)
        })
        .collect()
}

/// With steps selected, per rank the span of the steps every rank kept
/// (`None` for a rank without kept steps): the calls matched. Each rank
/// decides its own warm-up (`--skip-warmup`, docs/tracestat.md#steps), so
/// one rank may keep a step another dropped; its calls there have no
/// counterpart, and counted with the others they would shift every later
/// occurrence of their kind by as many (docs/tracestat.md#collectives).
/// `None` when every rank kept the same first and last step.
fn common_step_spans(ranks: &Ranks<'_>) -> Option<Vec<Option<(Ns, Ns)>>> {
    use super::steps::Steps;
    fn kept(r: &RankSummary) -> Option<&[super::steps::StepTimes]> {
        let part = Steps::part(r);
        (part.selecting && !part.steps.is_empty()).then_some(&part.steps)
    }
    let ends: Vec<(u64, u64)> = ranks
        .ranks
        .iter()
        .filter_map(kept)
        .filter_map(|s| {
            Some((
                s.iter().map(|t| t.step).min()?,
                s.iter().map(|t| t.step).max()?,
            ))
        })
        .collect();
    let first = ends.iter().map(|e| e.0).max()?;
    let last = ends.iter().map(|e| e.1).min()?;
    if ends.iter().all(|&e| e == (first, last)) {
        return None;
    }
    let spans = ranks
        .ranks
        .iter()
        .map(|r| {
            let common = kept(r)?.iter().filter(|t| (first..=last).contains(&t.step));
            let (lo, hi) = common.fold((Ns::MAX, Ns::MIN), |(lo, hi), t| {
                (
                    lo.min(t.start_ns),
                    hi.max(t.start_ns.saturating_add(t.dur_ns)),
                )
            });
            // No step in common: nothing of the rank is matched.
            Some(if lo > hi {
                (Ns::MAX, Ns::MIN)
            } else {
                (lo, hi)
            })
        })
        .collect();
    Some(spans)
}

/// The matched instances, in time order, and each rank's tally.
fn instances(ranks: &Ranks<'_>) -> (Vec<CollectiveInstance>, ArrivalTally, ClockAlignment) {
    let n = ranks.ranks.len();
    // key -> occurrence -> [(rank index, start, end)]
    let occ: BTreeMap<Key, Calls> = group_calls(ranks)
        .into_iter()
        .map(|(key, list)| {
            let list = list
                .into_iter()
                .map(|calls| {
                    calls
                        .into_iter()
                        .map(|(i, j)| {
                            let c = &Collectives::part(&ranks.ranks[i])[j];
                            (i, c.start, c.end)
                        })
                        .collect()
                })
                .collect();
            (key, list)
        })
        .collect();
    // Seen on one rank only: nothing to match it with.
    let matched: Vec<&Matched> = occ
        .values()
        .flatten()
        .filter(|p| p.len() >= 2)
        .map(Vec::as_slice)
        .collect();
    let clocks = align(&matched, &ranks.labels, ranks.options.align);
    let off = &clocks.offset_ns;
    let origin = aligned_origin(ranks, off);
    let mut tally = ArrivalTally {
        last: vec![0; n],
        calls: vec![0; n],
        caused: vec![0; n],
        waited: vec![0; n],
    };
    let mut out = Vec::new();
    // Per matched instance, each rank's (aligned) arrival.
    let mut arrivals: Vec<Vec<(usize, Ns)>> = Vec::new();
    for ((name, comm, bytes), list) in &occ {
        for (k, parts) in list.iter().enumerate() {
            if parts.len() < 2 {
                continue;
            }
            let parts: Vec<(usize, Ns, Ns)> = parts
                .iter()
                .map(|&(i, s, e)| (i, s - off[i], e - off[i]))
                .collect();
            let inst = instance(name, comm, *bytes, k, &parts, ranks, &mut tally, origin);
            out.push(inst);
            arrivals.push(parts.iter().map(|p| (p.0, p.1)).collect());
        }
    }
    tally.caused = caused_waits(&arrivals, n);
    out.sort_by(|a, b| {
        a.start_us.total_cmp(&b.start_us).then_with(|| {
            (&a.name, &a.comm, a.bytes, a.occurrence).cmp(&(
                &b.name,
                &b.comm,
                b.bytes,
                b.occurrence,
            ))
        })
    });
    (out, tally, clocks)
}

/// The last arrival of an instance: the latest, the lowest rank on a tie.
fn last_arrival(parts: &[(usize, Ns)]) -> Option<(usize, Ns)> {
    parts
        .iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .copied()
}

/// The wait each rank caused at the collectives (`arrivals`: per matched
/// instance, each rank's arrival), passed on to where it began: the rank
/// that arrived last caused the others' waits, except for the part of its
/// lateness (after the others' latest arrival) that it spent waiting in
/// another collective itself, for a rank of another group (a tensor-parallel
/// pair waiting for its slow member, then late at the data-parallel
/// all-reduce): that part of each wait is the causes' of that other wait,
/// in their shares (docs/tracestat.md#stragglers). With one group every
/// rank leaves a collective when it ends, so nothing is passed on.
fn caused_waits(arrivals: &[Vec<(usize, Ns)>], n: usize) -> Vec<Ns> {
    let mut order: Vec<(Ns, usize)> = arrivals
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((last_arrival(p)?.1, i)))
        .collect();
    order.sort_unstable();
    // Per rank: the waits it spent, `(from, to, instance)`, by end.
    let mut waits: Vec<Vec<(Ns, Ns, usize)>> = vec![Vec::new(); n];
    // Per instance: who caused its wait, as shares of it.
    let mut shares: Vec<Vec<(usize, f64)>> = vec![Vec::new(); arrivals.len()];
    let mut caused = vec![0.0_f64; n];
    for &(at, i) in &order {
        let parts = &arrivals[i];
        let Some((last, _)) = last_arrival(parts) else {
            continue;
        };
        let total: Ns = parts.iter().map(|&(_, a)| at - a).sum();
        if total <= 0 {
            continue;
        }
        let second = parts
            .iter()
            .filter(|p| p.0 != last)
            .map(|p| p.1)
            .max()
            .unwrap_or(at);
        // The last rank's own waits during its lateness, by overlap.
        let own = &waits[last];
        let from = own.partition_point(|w| w.1 <= second);
        let passed: Vec<(usize, Ns)> = own[from..]
            .iter()
            .filter(|w| w.0 < at)
            .map(|w| (w.2, w.1.min(at) - w.0.max(second)))
            .filter(|p| p.1 > 0)
            .collect();
        let d: Ns = passed.iter().map(|p| p.1).sum::<Ns>().min(at - second);
        let transfer: Ns = parts
            .iter()
            .filter(|p| p.0 != last)
            .map(|&(_, a)| (at - a).min(d))
            .sum();
        let mut mine: Vec<(usize, f64)> = vec![(last, (total - transfer) as f64)];
        let overlap: Ns = passed.iter().map(|p| p.1).sum();
        for &(j, o) in &passed {
            for &(r, s) in &shares[j] {
                mine.push((r, transfer as f64 * o as f64 / overlap as f64 * s));
            }
        }
        for &(r, x) in &mine {
            caused[r] += x;
        }
        shares[i] = kept_shares(mine, total as f64);
        for &(r, a) in parts {
            if r != last && a < at {
                waits[r].push((a, at, i));
            }
        }
    }
    caused.into_iter().map(|x| x.round() as Ns).collect()
}

/// An instance's causes as shares of its wait, one per rank, at most
/// [`MAX_CAUSES`] (the largest, scaled to add up to 1 again): a chain of
/// waits passed on would otherwise grow each instance's list by the one
/// before's (docs/tracestat.md#stragglers).
fn kept_shares(mut causes: Vec<(usize, f64)>, total: f64) -> Vec<(usize, f64)> {
    causes.sort_unstable_by_key(|c| c.0);
    let mut merged: Vec<(usize, f64)> = Vec::with_capacity(causes.len());
    for (r, x) in causes {
        match merged.last_mut() {
            Some(last) if last.0 == r => last.1 += x,
            _ => merged.push((r, x)),
        }
    }
    merged.retain(|c| c.1 > 0.0);
    if merged.len() > MAX_CAUSES {
        merged.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        merged.truncate(MAX_CAUSES);
    }
    let kept: f64 = merged.iter().map(|c| c.1).sum();
    let scale = if kept > 0.0 { 1.0 / kept } else { 1.0 / total };
    merged.into_iter().map(|(r, x)| (r, x * scale)).collect()
}

/// Causes an instance's wait is shared among at most.
const MAX_CAUSES: usize = 16;

/// The earliest first event of the ranks with a time span, on aligned
/// clocks: the origin of report times.
pub fn aligned_origin(ranks: &Ranks<'_>, off: &[Ns]) -> Ns {
    ranks
        .ranks
        .iter()
        .zip(off)
        .filter(|(r, _)| r.last_ns > r.first_ns)
        .map(|(r, o)| r.first_ns - o)
        .min()
        .unwrap_or(0)
}

#[allow(clippy::too_many_arguments)]
fn instance(
    name: &str,
    comm: &Option<String>,
    bytes: Option<u64>,
    k: usize,
    parts: &[(usize, Ns, Ns)],
    ranks: &Ranks<'_>,
    tally: &mut ArrivalTally,
    origin: Ns,
) -> CollectiveInstance {
    let first = parts.iter().map(|p| p.1).min().unwrap_or(0);
    // Last arrival: latest start, the lowest rank on a tie.
    let last = parts
        .iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .copied()
        .unwrap_or((0, 0, 0));
    let end = parts.iter().map(|p| p.2).max().unwrap_or(0);
    let transfer = (end - last.1).max(0);
    let consistent = parts.iter().all(|p| p.2 >= last.1);
    let mut sorted = parts.to_vec();
    sorted.sort_by_key(|p| p.0);
    let mut waits = Vec::with_capacity(parts.len());
    let mut total_wait = 0;
    for &(i, s, _) in &sorted {
        let w = last.1 - s;
        tally.waited[i] += w;
        tally.calls[i] += 1;
        total_wait += w;
        waits.push((ranks.labels[i].clone(), us(w)));
    }
    tally.last[last.0] += 1;
    tally.caused[last.0] += total_wait;
    let bus = bytes.filter(|_| transfer > 0).map(|b| {
        // bytes per ns = GB/s
        b as f64 * bus_factor(name, parts.len()) / transfer as f64
    });
    CollectiveInstance {
        name: name.to_string(),
        comm: comm.clone(),
        bytes,
        occurrence: k as u64 + 1,
        ranks: parts.len(),
        start_us: us(first - origin),
        skew_us: us(last.1 - first),
        last_rank: ranks.labels[last.0].clone(),
        duration_us: us(end - first),
        transfer_us: us(transfer),
        bus_gbps: bus,
        consistent,
        waits_us: waits,
    }
}

/// Per collective type.
fn summary(collectives: &[CollectiveInstance]) -> Vec<CollectiveTypeRow> {
    let mut types: BTreeMap<&str, Vec<&CollectiveInstance>> = BTreeMap::new();
    for c in collectives {
        types.entry(&c.name).or_default().push(c);
    }
    types
        .into_iter()
        .map(|(name, list)| {
            let n = list.len() as f64;
            let mut last: BTreeMap<&str, u64> = BTreeMap::new();
            for c in &list {
                *last.entry(&c.last_rank).or_default() += 1;
            }
            let most = last
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(r, _)| r.to_string())
                .unwrap_or_default();
            let bws: Vec<f64> = list.iter().filter_map(|c| c.bus_gbps).collect();
            CollectiveTypeRow {
                name: name.to_string(),
                instances: list.len() as u64,
                skew_mean_us: list.iter().map(|c| c.skew_us).sum::<f64>() / n,
                skew_max_us: list.iter().map(|c| c.skew_us).fold(0.0, f64::max),
                duration_mean_us: list.iter().map(|c| c.duration_us).sum::<f64>() / n,
                transfer_mean_us: list.iter().map(|c| c.transfer_us).sum::<f64>() / n,
                bytes_total: list.iter().filter_map(|c| c.bytes).sum(),
                bus_gbps_mean: (!bws.is_empty())
                    .then(|| bws.iter().sum::<f64>() / bws.len() as f64),
                wait_total_us: list
                    .iter()
                    .map(|c| c.waits_us.iter().map(|w| w.1).sum::<f64>())
                    .sum(),
                most_often_last: most,
            }
        })
        .collect()
}

/// Without trustworthy clocks the screen shows counts and sizes only.
fn hide_timing_columns(t: &mut Table) {
    for c in &mut t.columns {
        if matches!(c.unit, Unit::Us | Unit::GBps) || c.name == "most_often_last" {
            c.shown = unitrace_render::sections::Shown::FilesOnly;
        }
    }
}

/// The clock-alignment section: the status, why, and the offsets.
fn clock_section(a: &ClockAlignment) -> Section {
    let mut s = Section::new(
        "clock-alignment",
        "Clock alignment (from matched collectives)",
    );
    s.lines.push(format!("{}: {}", a.status, a.reason));
    if a.status == "applied" {
        s.lines.push(format!(
            "residual spread of a collective's aligned ends: median {:.3} us, largest {:.3} us",
            a.residual_median_us, a.residual_max_us
        ));
        let mut t = Table::new(
            "clock_offsets",
            "",
            vec![
                Column::new("rank", "rank", Unit::Text),
                Column::new("offset_us", "offset", Unit::Us),
                Column::new("collectives", "from collectives", Unit::Count),
            ],
        );
        for (rank, off, n) in &a.offsets {
            t.push(vec![Value::from(rank), (*off).into(), (*n).into()]);
        }
        if t.rows.len() > TOP {
            let mut order: Vec<usize> = (0..t.rows.len()).collect();
            order.sort_by(|&x, &y| a.offsets[y].1.abs().total_cmp(&a.offsets[x].1.abs()));
            order.truncate(TOP);
            order.sort_unstable();
            t.show_only(
                order,
                format!(
                    "({TOP} largest of {} offsets; all in --csv/--json)",
                    a.offsets.len()
                ),
            );
        }
        s.tables.push(t);
    }
    s
}

fn summary_table(rows: &[CollectiveTypeRow]) -> Table {
    let empty = rows.is_empty();
    let mut t = Table::new(
        "collective_summary",
        "",
        vec![
            Column::new("name", "collective", Unit::Text).files_only(),
            Column::new("instances", "instances", Unit::Count),
            Column::new("skew_mean_us", "skew mean", Unit::Us),
            Column::new("skew_max_us", "skew max", Unit::Us),
            Column::new("duration_mean_us", "duration mean", Unit::Us).files_only(),
            Column::new("transfer_mean_us", "transfer mean", Unit::Us),
            Column::new("bytes_total", "bytes", Unit::Bytes),
            Column::new("bus_gbps_mean", "bus", Unit::GBps),
            Column::new("wait_total_us", "wait", Unit::Us),
            Column::new("most_often_last", "most_often_last", Unit::Text),
            Column::new("name", "collective", Unit::Text).screen_only(),
        ],
    );
    for c in rows {
        t.push(vec![
            Value::from(&c.name),
            c.instances.into(),
            c.skew_mean_us.into(),
            c.skew_max_us.into(),
            c.duration_mean_us.into(),
            c.transfer_mean_us.into(),
            c.bytes_total.into(),
            c.bus_gbps_mean.into(),
            c.wait_total_us.into(),
            Value::from(&c.most_often_last),
            Value::from(&c.name),
        ]);
    }
    t.files_only = empty;
    t
}

/// The rows of `collectives.csv`, made one at a time from the instances.
struct InstanceRows(Arc<Vec<CollectiveInstance>>);

impl RowSource for InstanceRows {
    fn count(&self) -> usize {
        self.0.len()
    }

    fn row(&self, i: usize, out: &mut Vec<Value>) {
        out.clear();
        let Some(c) = self.0.get(i) else {
            return;
        };
        let wait: f64 = c.waits_us.iter().map(|w| w.1).sum();
        out.extend([
            Value::from(&c.name),
            c.comm.as_ref().into(),
            c.bytes.into(),
            c.occurrence.into(),
            c.ranks.into(),
            c.start_us.into(),
            c.skew_us.into(),
            Value::from(&c.last_rank),
            wait.into(),
            c.duration_us.into(),
            c.bytes.into(),
            c.transfer_us.into(),
            c.bus_gbps.into(),
            c.consistent.into(),
            Value::from(&c.name),
        ]);
    }
}

/// The rows of `collective_waits.csv`: a row per rank's wait of every
/// instance, made one at a time; `first[i]`: instance `i`'s first row.
struct WaitRows {
    instances: Arc<Vec<CollectiveInstance>>,
    first: Vec<usize>,
}

impl RowSource for WaitRows {
    fn count(&self) -> usize {
        self.first.last().copied().unwrap_or(0)
    }

    fn row(&self, i: usize, out: &mut Vec<Value>) {
        out.clear();
        let at = self.first.partition_point(|&f| f <= i).saturating_sub(1);
        let Some(c) = self.instances.get(at) else {
            return;
        };
        let Some((rank, w)) = self.first.get(at).and_then(|f| c.waits_us.get(i - f)) else {
            return;
        };
        out.extend([
            Value::from(&c.name),
            c.comm.as_ref().into(),
            c.bytes.into(),
            c.occurrence.into(),
            Value::from(rank),
            (*w).into(),
        ]);
    }
}

fn instance_table(rows: &Arc<Vec<CollectiveInstance>>) -> Table {
    let mut t = Table::new(
        "collectives",
        "",
        vec![
            Column::new("name", "collective", Unit::Text).files_only(),
            Column::new("comm", "comm", Unit::Text).files_only(),
            Column::new("bytes", "bytes", Unit::Bytes).files_only(),
            Column::new("occurrence", "n", Unit::Count),
            Column::new("ranks", "ranks", Unit::Count),
            Column::new("start_us", "start", Unit::Us),
            Column::new("skew_us", "skew", Unit::Us),
            Column::new("last_rank", "last", Unit::Text),
            Column::new("wait_us", "wait", Unit::Us).screen_only(),
            Column::new("duration_us", "duration", Unit::Us),
            Column::new("bytes", "bytes", Unit::Bytes).screen_only(),
            Column::new("transfer_us", "transfer", Unit::Us).files_only(),
            Column::new("bus_gbps", "bus", Unit::GBps),
            Column::new("consistent", "ok", Unit::Bool),
            Column::new("name", "collective", Unit::Text).screen_only(),
        ],
    );
    // Largest skew first; ties in time order (the rows' order).
    let mut worst: Vec<usize> = (0..rows.len()).collect();
    worst.sort_by(|&a, &b| rows[b].skew_us.total_cmp(&rows[a].skew_us));
    worst.truncate(TOP);
    // Only the rows shown are values; the file's (an instance per
    // collective call: hundreds of thousands in a long run) are made while
    // it is written (docs/tracestat.md#scale).
    let source = InstanceRows(Arc::clone(rows));
    let mut row = Vec::with_capacity(t.columns.len());
    for &i in &worst {
        source.row(i, &mut row);
        t.push(std::mem::take(&mut row));
    }
    t.file_rows = Some(FileRows(Arc::new(source)));
    t.title = format!(
        "Collective instances with the largest skew ({} of {}; wait = sum of the ranks' waits for the last arrival)",
        worst.len(),
        rows.len()
    );
    if rows.is_empty() {
        t.files_only = true;
    }
    t.show_only((0..worst.len()).collect(), String::new());
    t
}

fn wait_table(rows: &Arc<Vec<CollectiveInstance>>) -> Table {
    let mut t = Table::new(
        "collective_waits",
        "",
        vec![
            Column::new("name", "collective", Unit::Text),
            Column::new("comm", "comm", Unit::Text),
            Column::new("bytes", "bytes", Unit::Bytes),
            Column::new("occurrence", "n", Unit::Count),
            Column::new("rank", "rank", Unit::Text),
            Column::new("wait_us", "wait", Unit::Us),
        ],
    );
    t.files_only = true;
    let mut first = Vec::with_capacity(rows.len() + 1);
    first.push(0);
    for c in rows.iter() {
        first.push(first[first.len() - 1] + c.waits_us.len());
    }
    let instances = Arc::clone(rows);
    t.file_rows = Some(FileRows(Arc::new(WaitRows { instances, first })));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked out by hand: rank 2 waits for rank 3 (0 to 50) in their pair,
    /// then is last by 45 at its pair with rank 0 (10 to 55), 40 of which
    /// it spent waiting for rank 3: rank 3 caused 50 + 40 + its own 32 at
    /// its pair with rank 1, rank 2 the other 5. Rank 0, last at 100 with
    /// rank 1 (from 60), waited only before that: its 40 are its own.
    #[test]
    fn a_wait_spent_waiting_for_another_rank_is_passed_on() {
        let arrivals = vec![
            vec![(2, 0), (3, 50)],
            vec![(0, 10), (2, 55)],
            vec![(1, 20), (3, 52)],
            vec![(1, 60), (0, 100)],
        ];
        assert_eq!(caused_waits(&arrivals, 4), vec![40, 0, 5, 122]);
        // With one group every rank leaves together: nothing passed on.
        let one = vec![vec![(0, 0), (1, 30)], vec![(0, 40), (1, 35)]];
        assert_eq!(caused_waits(&one, 2), vec![5, 30]);
    }

    #[test]
    fn shares_merge_per_rank_and_keep_the_largest() {
        assert_eq!(
            kept_shares(vec![(3, 20.0), (1, 10.0), (3, 20.0)], 50.0),
            vec![(1, 0.2), (3, 0.8)]
        );
        let many: Vec<(usize, f64)> = (0..40).map(|r| (r, 1.0 + r as f64)).collect();
        let kept = kept_shares(many, 820.0);
        assert_eq!(kept.len(), MAX_CAUSES);
        assert_eq!(kept[0].0, 39);
        assert!((kept.iter().map(|c| c.1).sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
