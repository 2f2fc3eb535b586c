//! The cross-rank step (docs/tracestat.md#across-ranks): per-rank
//! summaries in, the whole report out. A single run and `--combine` over
//! partials both end here, with the same summaries, so they give the same
//! report.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::classify::{bus_factor, Class};
use crate::rank::{RankOptions, RankSummary, CAUSES, GAP_BUCKET_LABELS};
use crate::sketch::DurationSketch;
use crate::time::{pct, us, Ns};

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub tool: &'static str,
    pub ranks: usize,
    pub options: RankOptions,
    pub bins: usize,
    pub breakdown: Vec<BreakdownRow>,
    pub idle_gaps: Vec<GapRow>,
    pub launches: Vec<LaunchRow>,
    pub host_ranges: Vec<HostRangeRow>,
    pub host_tree: Vec<TreeOut>,
    pub collectives: Vec<CollectiveInstance>,
    pub collective_summary: Vec<CollectiveTypeRow>,
    pub stragglers: Vec<StragglerRow>,
    pub straggler: Option<Straggler>,
    /// Matched collective instances whose times line up (see
    /// [`CollectiveInstance::consistent`]).
    pub collectives_consistent: usize,
    pub categories: Vec<KernelRow>,
    pub kernels: Vec<KernelRow>,
    pub heatmap: Heatmap,
    pub implausible: Vec<ImplausibleRow>,
    pub truncated: Vec<TruncatedRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BreakdownRow {
    pub rank: String,
    pub device: String,
    pub file: String,
    pub wall_us: f64,
    pub busy_us: f64,
    pub busy_pct: f64,
    pub compute_us: f64,
    pub communication_us: f64,
    pub memory_us: f64,
    pub idle_us: f64,
    pub compute_pct: f64,
    pub communication_pct: f64,
    pub memory_pct: f64,
    pub idle_pct: f64,
    pub communication_total_us: f64,
    pub overlap_us: f64,
    pub overlap_pct: f64,
    pub exposed_communication_us: f64,
    pub kernel_time_us: f64,
    pub launches: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct GapRow {
    pub rank: String,
    pub device: String,
    pub count: u64,
    pub total_us: f64,
    pub longest_us: f64,
    pub mean_us: f64,
    /// `(bucket label, count, time)`.
    pub histogram: Vec<(String, u64, f64)>,
    /// `(cause, gaps whose main cause it is, time attributed)`.
    pub causes: Vec<(String, u64, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LaunchRow {
    pub rank: String,
    /// `all` for the rank (or all ranks), else the device label.
    pub device: String,
    pub kernels: u64,
    pub with_flow: u64,
    pub latency_mean_us: f64,
    pub latency_p50_us: f64,
    pub latency_p95_us: f64,
    pub latency_max_us: f64,
    pub negative_latency: u64,
    pub short_kernels: u64,
    pub short_launch_pct: f64,
    pub short_time_us: f64,
    pub short_time_pct: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct HostRangeRow {
    pub name: String,
    pub ranks: usize,
    pub calls: u64,
    pub host_us: f64,
    pub launches: u64,
    pub gpu_inclusive_us: f64,
    pub self_launches: u64,
    pub gpu_self_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TreeOut {
    pub path: Vec<String>,
    pub kernel: String,
    pub launches: u64,
    pub gpu_us: f64,
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

#[derive(Debug, Clone, Serialize)]
pub struct StragglerRow {
    pub rank: String,
    pub gpu_time_us: f64,
    pub vs_median_pct: f64,
    pub compute_us: f64,
    pub compute_vs_median_pct: f64,
    pub communication_us: f64,
    pub busy_pct: f64,
    pub arrived_last: u64,
    pub collectives: u64,
    pub wait_caused_us: f64,
    pub own_wait_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Straggler {
    pub rank: String,
    pub reason: String,
    /// mergetrace --stats' line: GPU time against the median rank.
    pub median_comparison: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct KernelRow {
    pub category: String,
    /// Empty in the category table.
    pub name: String,
    pub class: Class,
    pub count: u64,
    pub total_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p95_us: f64,
    pub max_us: f64,
    pub share_pct: f64,
    pub ranks: usize,
    pub rank_min: String,
    pub rank_min_us: f64,
    pub rank_median_us: f64,
    pub rank_max: String,
    pub rank_max_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Heatmap {
    pub bins: usize,
    pub start_us: f64,
    pub bin_us: f64,
    /// `(rank, utilisation 0..1 per bin)`, ranks sorted by id.
    pub rows: Vec<(String, Vec<f64>)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ImplausibleRow {
    pub rank: String,
    pub kind: String,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TruncatedRow {
    pub rank: String,
    pub file: String,
    pub problem: String,
}

fn median_f(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn vs(value: f64, reference: f64) -> f64 {
    if reference > 0.0 {
        100.0 * (value - reference) / reference
    } else {
        0.0
    }
}

/// Ranks in report order: by rank id, rank-less inputs last by input.
/// Two inputs of one rank (a warning) go by file name, not by input
/// position, which differs between one run and the partials of `--combine`.
pub fn sort_ranks(ranks: &mut [RankSummary]) {
    let key = |r: &RankSummary| {
        let file = if r.rank.is_some() {
            r.file.clone()
        } else {
            String::new()
        };
        (r.rank.is_none(), r.rank, file, r.input_index)
    };
    ranks.sort_by_cached_key(key);
}

pub fn build(mut ranks: Vec<RankSummary>, options: RankOptions, bins: usize) -> Report {
    sort_ranks(&mut ranks);
    let labels: Vec<String> = ranks.iter().map(|r| r.label()).collect();

    // 1-3: breakdown, overlap, idle gaps.
    let mut breakdown = Vec::new();
    let mut idle_gaps = Vec::new();
    for (r, label) in ranks.iter().zip(&labels) {
        for s in &r.scopes {
            let wall = us(s.wall_ns);
            breakdown.push(BreakdownRow {
                rank: label.clone(),
                device: s.device.clone(),
                file: r.file.clone(),
                wall_us: wall,
                busy_us: us(s.busy_ns),
                busy_pct: pct(us(s.busy_ns), wall),
                compute_us: us(s.compute_ns),
                communication_us: us(s.communication_ns),
                memory_us: us(s.memory_ns),
                idle_us: us(s.idle_ns),
                compute_pct: pct(us(s.compute_ns), wall),
                communication_pct: pct(us(s.communication_ns), wall),
                memory_pct: pct(us(s.memory_ns), wall),
                idle_pct: if s.wall_ns > 0 {
                    pct(us(s.idle_ns), wall)
                } else {
                    0.0
                },
                communication_total_us: us(s.communication_union_ns),
                overlap_us: us(s.overlap_ns),
                overlap_pct: pct(us(s.overlap_ns), us(s.communication_union_ns)),
                exposed_communication_us: us(s.communication_union_ns - s.overlap_ns),
                kernel_time_us: us(s.kernel_sum_ns),
                launches: s.launches,
            });
            let g = &s.gaps;
            idle_gaps.push(GapRow {
                rank: label.clone(),
                device: s.device.clone(),
                count: g.count,
                total_us: us(g.total_ns),
                longest_us: us(g.longest_ns),
                mean_us: if g.count > 0 {
                    us(g.total_ns) / g.count as f64
                } else {
                    0.0
                },
                histogram: (0..5)
                    .map(|i| {
                        (
                            GAP_BUCKET_LABELS[i].to_string(),
                            g.hist_count[i],
                            us(g.hist_ns[i]),
                        )
                    })
                    .collect(),
                causes: (0..4)
                    .map(|i| (CAUSES[i].to_string(), g.cause_count[i], us(g.cause_ns[i])))
                    .collect(),
            });
        }
    }

    // 4: launches, per rank then all ranks.
    let mut launches = Vec::new();
    let mut all = crate::rank::LaunchStats::default();
    let launch_row = |label: String, device: &str, l: &crate::rank::LaunchStats| LaunchRow {
        rank: label,
        device: device.to_string(),
        kernels: l.kernels,
        with_flow: l.with_flow,
        latency_mean_us: if l.latency.count > 0 {
            us(l.latency_sum_ns) / l.latency.count as f64
        } else {
            0.0
        },
        latency_p50_us: l.latency.quantile(0.5) / 1e3,
        latency_p95_us: l.latency.quantile(0.95) / 1e3,
        latency_max_us: us(l.latency.max),
        negative_latency: l.negative_latency,
        short_kernels: l.short_count,
        short_launch_pct: pct(l.short_count as f64, l.kernels as f64),
        short_time_us: us(l.short_ns),
        short_time_pct: pct(l.short_ns as f64, l.kernel_ns as f64),
    };
    for (r, label) in ranks.iter().zip(&labels) {
        launches.push(launch_row(label.clone(), "all", &r.launches));
        for (device, l) in &r.device_launches {
            launches.push(launch_row(label.clone(), device, l));
        }
        let l = &r.launches;
        all.kernels += l.kernels;
        all.kernel_ns += l.kernel_ns;
        all.with_flow += l.with_flow;
        all.latency.merge(&l.latency);
        all.latency_sum_ns += l.latency_sum_ns;
        all.negative_latency += l.negative_latency;
        all.short_count += l.short_count;
        all.short_ns += l.short_ns;
    }
    if ranks.len() > 1 {
        launches.push(launch_row("all".to_string(), "all", &all));
    }

    // 5: host ranges, all ranks.
    let mut hr: BTreeMap<&str, HostRangeRow> = BTreeMap::new();
    for r in &ranks {
        for a in &r.host_ranges {
            let e = hr.entry(&a.name).or_insert_with(|| HostRangeRow {
                name: a.name.clone(),
                ranks: 0,
                calls: 0,
                host_us: 0.0,
                launches: 0,
                gpu_inclusive_us: 0.0,
                self_launches: 0,
                gpu_self_us: 0.0,
            });
            e.ranks += 1;
            e.calls += a.calls;
            e.host_us += us(a.host_ns);
            e.launches += a.launches;
            e.gpu_inclusive_us += us(a.inclusive_ns);
            e.self_launches += a.self_launches;
            e.gpu_self_us += us(a.self_ns);
        }
    }
    let mut host_ranges: Vec<HostRangeRow> = hr.into_values().collect();
    host_ranges.sort_by(|a, b| {
        b.gpu_inclusive_us
            .total_cmp(&a.gpu_inclusive_us)
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut tree: BTreeMap<(Vec<String>, String), (u64, Ns)> = BTreeMap::new();
    for r in &ranks {
        for t in &r.tree {
            let e = tree.entry((t.path.clone(), t.kernel.clone())).or_default();
            e.0 += t.launches;
            e.1 += t.gpu_ns;
        }
    }
    let host_tree = tree
        .into_iter()
        .map(|((path, kernel), (launches, gpu))| TreeOut {
            path,
            kernel,
            launches,
            gpu_us: us(gpu),
        })
        .collect();

    // 7: collectives matched across ranks.
    let origin = ranks
        .iter()
        .filter(|r| r.last_ns > r.first_ns)
        .map(|r| r.first_ns)
        .min()
        .unwrap_or(0);
    type Key = (String, Option<String>, Option<u64>);
    // key -> occurrence -> [(rank index, start, end)]
    // (rank index, start, end) of each rank's n-th call.
    type Calls = Vec<Vec<(usize, Ns, Ns)>>;
    let mut occ: BTreeMap<Key, Calls> = BTreeMap::new();
    for (i, r) in ranks.iter().enumerate() {
        let mut nth: HashMap<Key, usize> = HashMap::new();
        for c in &r.collectives {
            let key = (c.name.clone(), c.comm.clone(), c.bytes);
            let n = nth.entry(key.clone()).or_default();
            let list = occ.entry(key).or_default();
            if list.len() <= *n {
                list.push(Vec::new());
            }
            list[*n].push((i, c.start, c.end));
            *n += 1;
        }
    }
    let mut collectives = Vec::new();
    let mut last_count = vec![0u64; ranks.len()];
    let mut in_count = vec![0u64; ranks.len()];
    let mut caused = vec![0 as Ns; ranks.len()];
    let mut own_wait = vec![0 as Ns; ranks.len()];
    for ((name, comm, bytes), list) in &occ {
        for (n, parts) in list.iter().enumerate() {
            if parts.len() < 2 {
                // Seen on one rank only: nothing to match it with.
                continue;
            }
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
            let mut waits = Vec::with_capacity(parts.len());
            let mut sorted = parts.clone();
            sorted.sort_by_key(|p| p.0);
            let mut total_wait = 0;
            for &(i, s, _) in &sorted {
                let w = last.1 - s;
                own_wait[i] += w;
                in_count[i] += 1;
                total_wait += w;
                waits.push((labels[i].clone(), us(w)));
            }
            last_count[last.0] += 1;
            caused[last.0] += total_wait;
            let bus = bytes.filter(|_| transfer > 0).map(|b| {
                // bytes per ns = GB/s
                b as f64 * bus_factor(name, parts.len()) / transfer as f64
            });
            collectives.push(CollectiveInstance {
                name: name.clone(),
                comm: comm.clone(),
                bytes: *bytes,
                occurrence: n as u64 + 1,
                ranks: parts.len(),
                start_us: us(first - origin),
                skew_us: us(last.1 - first),
                last_rank: labels[last.0].clone(),
                duration_us: us(end - first),
                transfer_us: us(transfer),
                bus_gbps: bus,
                consistent,
                waits_us: waits,
            });
        }
    }
    collectives.sort_by(|a, b| {
        a.start_us.total_cmp(&b.start_us).then_with(|| {
            (&a.name, &a.comm, a.bytes, a.occurrence).cmp(&(
                &b.name,
                &b.comm,
                b.bytes,
                b.occurrence,
            ))
        })
    });
    let mut types: BTreeMap<&str, (Vec<&CollectiveInstance>,)> = BTreeMap::new();
    for c in &collectives {
        types.entry(&c.name).or_default().0.push(c);
    }
    let collective_summary = types
        .into_iter()
        .map(|(name, (list,))| {
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
        .collect();

    // Straggler table.
    let gpu: Vec<f64> = ranks
        .iter()
        .map(|r| us(r.scopes[0].kernel_sum_ns))
        .collect();
    let med = median_f(&mut gpu.clone());
    let compute: Vec<f64> = ranks.iter().map(|r| us(r.scopes[0].compute_ns)).collect();
    let compute_med = median_f(&mut compute.clone());
    let stragglers: Vec<StragglerRow> = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| StragglerRow {
            rank: labels[i].clone(),
            gpu_time_us: gpu[i],
            vs_median_pct: vs(gpu[i], med),
            compute_us: compute[i],
            compute_vs_median_pct: vs(compute[i], compute_med),
            communication_us: us(r.scopes[0].communication_ns),
            busy_pct: pct(r.scopes[0].busy_ns as f64, r.scopes[0].wall_ns as f64),
            arrived_last: last_count[i],
            collectives: in_count[i],
            wait_caused_us: us(caused[i]),
            own_wait_us: us(own_wait[i]),
        })
        .collect();
    let consistent = collectives.iter().filter(|c| c.consistent).count();
    let straggler = straggler_line(&stragglers, med, compute_med, collectives.len(), consistent);

    // 9: kernel breakdown.
    let (categories, kernels) = kernel_tables(&ranks, &labels);

    // 8: heatmap.
    let heatmap = heatmap(&ranks, &labels, bins);

    let mut implausible = Vec::new();
    let mut truncated = Vec::new();
    for (r, label) in ranks.iter().zip(&labels) {
        for (kind, n) in &r.implausible {
            implausible.push(ImplausibleRow {
                rank: label.clone(),
                kind: kind.clone(),
                count: *n,
            });
        }
        if let Some(t) = &r.truncated {
            truncated.push(TruncatedRow {
                rank: label.clone(),
                file: r.file.clone(),
                problem: t.clone(),
            });
        }
    }
    Report {
        tool: "tracestat",
        ranks: ranks.len(),
        options,
        bins,
        breakdown,
        idle_gaps,
        launches,
        host_ranges,
        host_tree,
        collectives,
        collective_summary,
        stragglers,
        straggler,
        collectives_consistent: consistent,
        categories,
        kernels,
        heatmap,
        implausible,
        truncated,
    }
}

/// The two lines that open the console report and the HTML page, after
/// `straggler: ` and `GPU time against the median: `: the straggler and
/// why, then `mergetrace --stats`' median comparison (its straggler line,
/// word for word). One rank has nothing to compare with, and the lines say
/// so instead of naming it (docs/tracestat.md#stragglers).
pub fn straggler_lines(r: &Report) -> Option<(String, String)> {
    if let Some(s) = &r.straggler {
        return Some((
            format!("rank {}: {}", s.rank, s.reason),
            s.median_comparison.clone(),
        ));
    }
    match r.stragglers.as_slice() {
        [only] => Some((
            ONE_RANK.to_string(),
            one_rank_comparison(&only.rank, only.gpu_time_us),
        )),
        _ => None,
    }
}

/// The straggler line of a one-rank run (tracestat and `mergetrace
/// --stats` alike).
pub const ONE_RANK: &str = "none: one rank, nothing to compare with";

/// The median comparison of a one-rank run: `mergetrace --stats` prints the
/// same text after `straggler: ` (mergetrace/src/stats.rs).
pub fn one_rank_comparison(rank: &str, gpu_time_us: f64) -> String {
    format!(
        "{ONE_RANK} (rank {rank}: {:.3} ms of GPU time)",
        gpu_time_us / 1e3
    )
}

/// The straggler: none unless there are two ranks or more.
fn straggler_line(
    rows: &[StragglerRow],
    med: f64,
    compute_med: f64,
    instances: usize,
    consistent: usize,
) -> Option<Straggler> {
    if rows.len() < 2 {
        return None;
    }
    let by_gpu = rows
        .iter()
        .enumerate()
        .max_by(|a, b| {
            a.1.gpu_time_us
                .total_cmp(&b.1.gpu_time_us)
                .then(b.0.cmp(&a.0))
        })?
        .1;
    let median_comparison = format!(
        "rank {}: {:.3} ms of GPU time, {:+.1}% against the median rank ({:.3} ms)",
        by_gpu.rank,
        by_gpu.gpu_time_us / 1e3,
        by_gpu.vs_median_pct,
        med / 1e3
    );
    let by_compute = rows
        .iter()
        .enumerate()
        .max_by(|a, b| {
            a.1.compute_us
                .total_cmp(&b.1.compute_us)
                .then(b.0.cmp(&a.0))
        })?
        .1;
    let by_wait = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.arrived_last > 0)
        .max_by(|a, b| {
            a.1.wait_caused_us
                .total_cmp(&b.1.wait_caused_us)
                .then(a.1.arrived_last.cmp(&b.1.arrived_last))
                .then(b.0.cmp(&a.0))
        })
        .map(|(_, r)| r);
    // Arrival order names the straggler only when the matched calls line
    // up as blocking collectives do (at least half of them); otherwise the
    // rank with the most compute time does (docs/tracestat.md#stragglers).
    let trust_arrivals = instances > 0 && 2 * consistent >= instances;
    Some(match by_wait {
        Some(r) if trust_arrivals && r.wait_caused_us > 0.0 => Straggler {
            rank: r.rank.clone(),
            reason: format!(
                "arrived last at {} of {} collectives and made the other ranks wait {:.3} ms in total",
                r.arrived_last,
                instances,
                r.wait_caused_us / 1e3
            ),
            median_comparison,
        },
        _ => Straggler {
            rank: by_compute.rank.clone(),
            reason: format!(
                "most compute time: {:.3} ms, {:+.1}% against the median rank ({:.3} ms){}",
                by_compute.compute_us / 1e3,
                by_compute.compute_vs_median_pct,
                compute_med / 1e3,
                if instances > 0 && !trust_arrivals {
                    format!(
                        "; collective arrivals not used: only {consistent} of {instances} matched calls line up across ranks"
                    )
                } else {
                    String::new()
                }
            ),
            median_comparison,
        },
    })
}

/// Per-category and per-kernel tables over all ranks.
fn kernel_tables(ranks: &[RankSummary], labels: &[String]) -> (Vec<KernelRow>, Vec<KernelRow>) {
    struct Acc {
        class: Class,
        count: u64,
        total: Ns,
        sketch: DurationSketch,
        per_rank: Vec<(usize, Ns)>,
    }
    let mut kernels: BTreeMap<(String, String), Acc> = BTreeMap::new();
    let mut cats: BTreeMap<String, Acc> = BTreeMap::new();
    let mut grand: Ns = 0;
    for (i, r) in ranks.iter().enumerate() {
        let mut cat_rank: BTreeMap<&str, Ns> = BTreeMap::new();
        for k in &r.kernels {
            grand += k.total_ns;
            let a = kernels
                .entry((k.category.clone(), k.name.clone()))
                .or_insert_with(|| Acc {
                    class: k.class,
                    count: 0,
                    total: 0,
                    sketch: DurationSketch::default(),
                    per_rank: Vec::new(),
                });
            a.count += k.count;
            a.total += k.total_ns;
            a.sketch.merge(&k.durations);
            a.per_rank.push((i, k.total_ns));
            let c = cats.entry(k.category.clone()).or_insert_with(|| Acc {
                class: k.class,
                count: 0,
                total: 0,
                sketch: DurationSketch::default(),
                per_rank: Vec::new(),
            });
            c.count += k.count;
            c.total += k.total_ns;
            c.sketch.merge(&k.durations);
            *cat_rank.entry(&k.category).or_default() += k.total_ns;
        }
        for (c, t) in cat_rank {
            if let Some(a) = cats.get_mut(c) {
                a.per_rank.push((i, t));
            }
        }
    }
    let row = |category: String, name: String, a: Acc| {
        let mut per = a.per_rank.clone();
        // Lowest total first; ties by rank order.
        per.sort_by(|x, y| x.1.cmp(&y.1).then(x.0.cmp(&y.0)));
        let mut vals: Vec<f64> = per.iter().map(|p| us(p.1)).collect();
        let (lo, hi) = (per.first().copied(), per.last().copied());
        KernelRow {
            category,
            name,
            class: a.class,
            count: a.count,
            total_us: us(a.total),
            mean_us: if a.count > 0 {
                us(a.total) / a.count as f64
            } else {
                0.0
            },
            p50_us: a.sketch.quantile(0.5) / 1e3,
            p95_us: a.sketch.quantile(0.95) / 1e3,
            max_us: us(a.sketch.max),
            share_pct: pct(a.total as f64, grand as f64),
            ranks: per.len(),
            rank_min: lo.map(|p| labels[p.0].clone()).unwrap_or_default(),
            rank_min_us: lo.map_or(0.0, |p| us(p.1)),
            rank_median_us: median_f(&mut vals),
            rank_max: hi.map(|p| labels[p.0].clone()).unwrap_or_default(),
            rank_max_us: hi.map_or(0.0, |p| us(p.1)),
        }
    };
    let mut k: Vec<KernelRow> = kernels
        .into_iter()
        .map(|((c, n), a)| row(c, n, a))
        .collect();
    let mut c: Vec<KernelRow> = cats
        .into_iter()
        .map(|(c, a)| row(c, String::new(), a))
        .collect();
    let by_total = |a: &KernelRow, b: &KernelRow| {
        b.total_us
            .total_cmp(&a.total_us)
            .then_with(|| (&a.category, &a.name).cmp(&(&b.category, &b.name)))
    };
    k.sort_by(by_total);
    c.sort_by(by_total);
    (c, k)
}

/// Utilisation per rank per bin over the whole run (docs/tracestat.md#heatmap).
fn heatmap(ranks: &[RankSummary], labels: &[String], bins: usize) -> Heatmap {
    let live: Vec<&RankSummary> = ranks.iter().filter(|r| r.last_ns > r.first_ns).collect();
    let g0 = live.iter().map(|r| r.first_ns).min().unwrap_or(0);
    let g1 = live.iter().map(|r| r.last_ns).max().unwrap_or(0);
    let bins = bins.max(1);
    let span = (g1 - g0).max(0) as f64;
    let bin = span / bins as f64;
    let mut rows = Vec::with_capacity(ranks.len());
    for (r, label) in ranks.iter().zip(labels) {
        let mut util = vec![0.0; bins];
        let h = &r.heat;
        if bin > 0.0 && h.width_ns > 0 {
            for (i, &busy) in h.busy_ns.iter().enumerate() {
                if busy == 0 {
                    continue;
                }
                // Spread the fine bin's busy time evenly over the coarse
                // bins it overlaps, within the run: a fine bin sticking out
                // before the earliest start or after the latest end holds
                // no busy time there, and none may be lost (the heatmap
                // keeps each rank's busy time).
                let s0 = ((h.first_bin + i as i64) * h.width_ns - g0) as f64;
                let (s, e) = (s0.max(0.0), (s0 + h.width_ns as f64).min(span));
                if e <= s {
                    continue;
                }
                let mut j = ((s / bin).floor() as usize).min(bins - 1);
                while j < bins {
                    let bs = j as f64 * bin;
                    let be = bs + bin;
                    if bs >= e {
                        break;
                    }
                    let ov = e.min(be) - s.max(bs);
                    if ov > 0.0 {
                        util[j] += busy as f64 * ov / (e - s);
                    }
                    j += 1;
                }
            }
            for u in &mut util {
                *u = (*u / bin).min(1.0);
            }
        }
        rows.push((label.clone(), util));
    }
    Heatmap {
        bins,
        start_us: us(g0),
        bin_us: bin / 1e3,
        rows,
    }
}
