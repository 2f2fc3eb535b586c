//! Per-rank analyses (docs/tracestat.md#per-rank-tables): from the
//! intervals one pass kept ([`RankTrace`]) to a [`RankSummary`], a small,
//! serialisable summary that is all the cross-rank step and `--partial`
//! need. The intervals are dropped once this is done, so memory is bounded
//! by the intervals of the files being read at the same time.

use std::collections::HashMap;

use rustc_hash::FxHashMap as FastMap;

use serde::{Deserialize, Serialize};

use crate::classify::{Class, Classifier, HostKind};
use crate::ingest::{HostCall, KernelRun, RankTrace};
use crate::sketch::DurationSketch;
use crate::time::Ns;
use unitrace_core::timeline::NameId;

/// Options that change per-rank numbers (they must agree between the
/// partials that `--combine` reduces).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankOptions {
    /// Kernels shorter than this are "short" (`--short-kernel`).
    pub short_kernel_ns: Ns,
    /// Depth of the op -> kernel tree (`--tree`), 0 for none.
    pub tree_depth: usize,
    /// Fine heatmap bins per rank wall time (before the `--bins` reduction).
    pub heat_resolution: u32,
    /// Name of the `--schema` file, if any (for the combine check).
    pub schema: Option<String>,
}

/// Upper bounds of the idle-gap histogram buckets (the last is open).
pub const GAP_BUCKETS_NS: [Ns; 4] = [10_000, 100_000, 1_000_000, 10_000_000];
pub const GAP_BUCKET_LABELS: [&str; 5] = ["<10us", "10us-100us", "100us-1ms", "1ms-10ms", ">=10ms"];

/// Gap causes in report order (precedence order, then unknown).
pub const CAUSES: [&str; 4] = ["collective", "sync", "host_busy", "unknown"];

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GapStats {
    pub count: u64,
    pub total_ns: Ns,
    pub longest_ns: Ns,
    /// Count per [`GAP_BUCKET_LABELS`] bucket.
    pub hist_count: [u64; 5],
    /// Time per bucket.
    pub hist_ns: [Ns; 5],
    /// Gaps whose main cause is each of [`CAUSES`].
    pub cause_count: [u64; 4],
    /// Gap time attributed to each cause, time point by time point.
    pub cause_ns: [Ns; 4],
}

/// The temporal breakdown of a rank or of one of its devices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScopeStats {
    /// `all` for the whole rank, else the device label.
    pub device: String,
    pub wall_ns: Ns,
    /// Union of kernel intervals.
    pub busy_ns: Ns,
    pub compute_ns: Ns,
    pub communication_ns: Ns,
    pub memory_ns: Ns,
    pub idle_ns: Ns,
    /// Union of communication kernels, whatever else runs.
    pub communication_union_ns: Ns,
    /// Time where communication and compute run together.
    pub overlap_ns: Ns,
    /// Sum of kernel durations (not a union).
    pub kernel_sum_ns: Ns,
    pub launches: u64,
    pub gaps: GapStats,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchStats {
    pub kernels: u64,
    pub kernel_ns: Ns,
    /// Kernels whose submission (H2D flow start) was found.
    pub with_flow: u64,
    pub latency: DurationSketch,
    pub latency_sum_ns: Ns,
    /// Kernels that start before their submission (clocks apart).
    pub negative_latency: u64,
    pub short_count: u64,
    pub short_ns: Ns,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelAgg {
    pub category: String,
    pub name: String,
    pub class: Class,
    pub count: u64,
    pub total_ns: Ns,
    pub durations: DurationSketch,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RangeAgg {
    pub name: String,
    /// Kernels launched inside the range (nested ranges of the same name
    /// counted once).
    pub launches: u64,
    pub inclusive_ns: Ns,
    /// Kernels whose innermost range is this one.
    pub self_launches: u64,
    pub self_ns: Ns,
    /// Host time in the range (union over nested instances).
    pub host_ns: Ns,
    pub calls: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeRow {
    /// Range names, outermost first, at most `tree_depth` of them.
    pub path: Vec<String>,
    pub kernel: String,
    pub launches: u64,
    pub gpu_ns: Ns,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CollectiveOcc {
    pub name: String,
    pub comm: Option<String>,
    pub bytes: Option<u64>,
    pub start: Ns,
    pub end: Ns,
}

/// GPU busy time per fine bin of an absolute grid: bin `i` covers
/// `[(first_bin + i) * width, ...)`. Widths are powers of two, so rows of
/// different ranks and partials combine (docs/tracestat.md#heatmap).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HeatRow {
    pub width_ns: Ns,
    pub first_bin: i64,
    pub busy_ns: Vec<Ns>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    pub rank: Option<u32>,
    pub input_index: usize,
    pub file: String,
    pub truncated: Option<String>,
    /// Not part of the report (nor of a partial): the warning about data
    /// after the trace's end is given by the run that read the file.
    #[serde(skip)]
    pub trailing_data_line: Option<u64>,
    pub first_ns: Ns,
    pub last_ns: Ns,
    /// `[0]` is the whole rank; then one per device when it has several.
    pub scopes: Vec<ScopeStats>,
    pub launches: LaunchStats,
    /// `(device label, launches)` per device when the rank has several
    /// (the labels of `scopes[1..]`).
    pub device_launches: Vec<(String, LaunchStats)>,
    pub kernels: Vec<KernelAgg>,
    pub host_ranges: Vec<RangeAgg>,
    pub tree: Vec<TreeRow>,
    pub collectives: Vec<CollectiveOcc>,
    pub heat: HeatRow,
    pub implausible: Vec<(String, u64)>,
    pub implausible_examples: Vec<String>,
}

impl RankSummary {
    pub fn label(&self) -> String {
        match self.rank {
            Some(r) => r.to_string(),
            None => format!("#{}", self.input_index),
        }
    }
    pub fn wall_ns(&self) -> Ns {
        self.scopes.first().map_or(0, |s| s.wall_ns)
    }
}

/// One classified kernel interval.
#[derive(Clone, Copy)]
struct Piece {
    start: Ns,
    end: Ns,
    class: Class,
}

/// Busy segments (the union) and the exclusive class times of a set of
/// kernel intervals (docs/tracestat.md#precedence).
struct Sweep {
    segments: Vec<(Ns, Ns)>,
    class_ns: [Ns; 3],
    comm_union: Ns,
    overlap: Ns,
}

fn class_index(c: Class) -> usize {
    match c {
        Class::Compute => 0,
        Class::Communication => 1,
        Class::Memory => 2,
    }
}

fn sweep(pieces: &[Piece]) -> Sweep {
    let mut edges: Vec<(Ns, i32, usize)> = Vec::with_capacity(pieces.len() * 2);
    for p in pieces {
        let c = class_index(p.class);
        edges.push((p.start, 1, c));
        edges.push((p.end, -1, c));
    }
    edges.sort_unstable();
    let mut counts = [0i64; 3];
    let mut out = Sweep {
        segments: Vec::new(),
        class_ns: [0; 3],
        comm_union: 0,
        overlap: 0,
    };
    let mut prev: Option<Ns> = None;
    for (t, delta, c) in edges {
        if let Some(p) = prev {
            let len = t - p;
            if len > 0 {
                if let Some(top) = (0..3).find(|&k| counts[k] > 0) {
                    out.class_ns[top] += len;
                    match out.segments.last_mut() {
                        Some((_, e)) if *e == p => *e = t,
                        _ => out.segments.push((p, t)),
                    }
                }
                if counts[1] > 0 {
                    out.comm_union += len;
                    if counts[0] > 0 {
                        out.overlap += len;
                    }
                }
            }
        }
        counts[c] += delta as i64;
        prev = Some(t);
    }
    out
}

/// Host activity as disjoint segments labelled with the kind of highest
/// precedence active there.
fn host_segments(cover: &[Vec<(Ns, Ns)>; 3]) -> Vec<(Ns, Ns, HostKind)> {
    let mut edges: Vec<(Ns, i32, usize)> =
        Vec::with_capacity(cover.iter().map(|c| 2 * c.len()).sum());
    for (k, list) in cover.iter().enumerate() {
        for &(s, e) in list {
            if e > s {
                edges.push((s, 1, k));
                edges.push((e, -1, k));
            }
        }
    }
    edges.sort_unstable();
    let order = [HostKind::Collective, HostKind::Sync, HostKind::Busy];
    let mut counts = [0i64; 3];
    let mut out: Vec<(Ns, Ns, HostKind)> = Vec::new();
    let mut prev: Option<Ns> = None;
    for (t, delta, k) in edges {
        if let Some(p) = prev {
            if t > p {
                if let Some(top) = (0..3).find(|&i| counts[i] > 0) {
                    match out.last_mut() {
                        Some((_, e, kind)) if *e == p && *kind == order[top] => *e = t,
                        _ => out.push((p, t, order[top])),
                    }
                }
            }
        }
        counts[k] += delta as i64;
        prev = Some(t);
    }
    out
}

/// Idle gaps between busy segments, with their causes.
fn gaps(segments: &[(Ns, Ns)], host: &[(Ns, Ns, HostKind)]) -> GapStats {
    let mut g = GapStats::default();
    let mut h = 0;
    for w in segments.windows(2) {
        let (a, b) = (w[0].1, w[1].0);
        if b <= a {
            continue;
        }
        let len = b - a;
        g.count += 1;
        g.total_ns += len;
        g.longest_ns = g.longest_ns.max(len);
        let bucket = GAP_BUCKETS_NS.iter().position(|&u| len < u).unwrap_or(4);
        g.hist_count[bucket] += 1;
        g.hist_ns[bucket] += len;
        // Host segments are sorted and disjoint, gaps too: one forward walk.
        while h < host.len() && host[h].1 <= a {
            h += 1;
        }
        let mut by = [0 as Ns; 4];
        let mut k = h;
        while k < host.len() && host[k].0 < b {
            let (s, e, kind) = host[k];
            let ov = e.min(b) - s.max(a);
            if ov > 0 {
                let i = match kind {
                    HostKind::Collective => 0,
                    HostKind::Sync => 1,
                    HostKind::Busy => 2,
                };
                by[i] += ov;
            }
            k += 1;
        }
        by[3] = len - by[0] - by[1] - by[2];
        // Main cause: the largest share; ties go to the earlier cause.
        let mut main = 0;
        for i in 1..4 {
            if by[i] > by[main] {
                main = i;
            }
        }
        g.cause_count[main] += 1;
        for (total, part) in g.cause_ns.iter_mut().zip(by) {
            *total += part;
        }
    }
    g
}

fn scope_stats(
    device: String,
    wall: Ns,
    pieces: &[Piece],
    host: &[(Ns, Ns, HostKind)],
) -> (ScopeStats, Vec<(Ns, Ns)>) {
    let s = sweep(pieces);
    let busy: Ns = s.class_ns.iter().sum();
    let stats = ScopeStats {
        device,
        wall_ns: wall,
        busy_ns: busy,
        compute_ns: s.class_ns[0],
        communication_ns: s.class_ns[1],
        memory_ns: s.class_ns[2],
        idle_ns: wall - busy,
        communication_union_ns: s.comm_union,
        overlap_ns: s.overlap,
        kernel_sum_ns: pieces.iter().map(|p| p.end - p.start).sum(),
        launches: pieces.len() as u64,
        gaps: gaps(&s.segments, host),
    };
    (stats, s.segments)
}

/// Smallest power of two not below `wall / resolution`.
fn heat_width(wall: Ns, resolution: u32) -> Ns {
    let target = (wall / resolution.max(1) as Ns).max(1);
    let mut w: Ns = 1;
    while w < target {
        w <<= 1;
    }
    w
}

fn heat_row(first: Ns, last: Ns, segments: &[(Ns, Ns)], resolution: u32) -> HeatRow {
    if last <= first {
        return HeatRow::default();
    }
    let width = heat_width(last - first, resolution);
    let first_bin = first.div_euclid(width);
    let last_bin = (last - 1).div_euclid(width);
    let mut busy = vec![0 as Ns; (last_bin - first_bin + 1) as usize];
    for &(s, e) in segments {
        let mut t = s;
        while t < e {
            let bin = t.div_euclid(width);
            let bin_end = (bin + 1) * width;
            let upto = e.min(bin_end);
            busy[(bin - first_bin) as usize] += upto - t;
            t = upto;
        }
    }
    HeatRow {
        width_ns: width,
        first_bin,
        busy_ns: busy,
    }
}

/// For each kernel with a known submission, the host ranges (innermost
/// last) enclosing the submission on the submitting thread.
fn enclosing_ranges(
    trace: &RankTrace,
    submissions: &[Option<(u64, Ns)>],
) -> Vec<Option<Vec<NameId>>> {
    let mut by_tid: FastMap<u64, Vec<HostCall>> = FastMap::default();
    for h in &trace.host {
        by_tid.entry(h.tid).or_default().push(*h);
    }
    let mut queries: FastMap<u64, Vec<(Ns, usize)>> = FastMap::default();
    for (i, sub) in submissions.iter().enumerate() {
        if let Some((tid, ts)) = *sub {
            queries.entry(tid).or_default().push((ts, i));
        }
    }
    let mut out: Vec<Option<Vec<NameId>>> = vec![None; trace.kernels.len()];
    for (tid, mut qs) in queries {
        qs.sort_unstable();
        let mut ranges = by_tid.remove(&tid).unwrap_or_default();
        ranges.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        let mut stack: Vec<HostCall> = Vec::new();
        let mut next = 0;
        for (ts, k) in qs {
            while next < ranges.len() && ranges[next].start <= ts {
                let r = ranges[next];
                while stack.last().is_some_and(|top| top.end < r.start) {
                    stack.pop();
                }
                stack.push(r);
                next += 1;
            }
            // Ranges of one thread nest: whatever ended before `ts` is on
            // top of those still open.
            stack.retain(|r| r.end >= ts);
            out[k] = Some(stack.iter().map(|r| r.name).collect());
        }
    }
    out
}

/// Union length of intervals.
fn union_len(mut v: Vec<(Ns, Ns)>) -> Ns {
    v.sort_unstable();
    let mut total = 0;
    let mut cur: Option<(Ns, Ns)> = None;
    for (s, e) in v {
        match &mut cur {
            Some((_, ce)) if s <= *ce => *ce = (*ce).max(e),
            _ => {
                if let Some((cs, ce)) = cur {
                    total += ce - cs;
                }
                cur = Some((s, e));
            }
        }
    }
    if let Some((cs, ce)) = cur {
        total += ce - cs;
    }
    total
}

/// Launch latency and short kernels of some kernels and their submissions
/// (docs/tracestat.md#launches-launches).
fn launch_stats<'k>(
    kernels: impl Iterator<Item = (&'k KernelRun, &'k Option<(u64, Ns)>)>,
    short_kernel_ns: Ns,
) -> LaunchStats {
    let mut launches = LaunchStats::default();
    let mut latencies: Vec<Ns> = Vec::new();
    for (k, sub) in kernels {
        let d = k.end - k.start;
        launches.kernels += 1;
        launches.kernel_ns += d;
        if d < short_kernel_ns {
            launches.short_count += 1;
            launches.short_ns += d;
        }
        if let Some((_, ts)) = *sub {
            launches.with_flow += 1;
            let lat = k.start - ts;
            if lat < 0 {
                launches.negative_latency += 1;
            } else {
                launches.latency_sum_ns += lat;
                latencies.push(lat);
            }
        }
    }
    launches.latency = DurationSketch::from_values(&mut latencies);
    launches
}

/// Turns one rank's intervals into its summary.
pub fn summarize(
    mut trace: RankTrace,
    classifier: &mut Classifier<'_>,
    opts: &RankOptions,
) -> RankSummary {
    // Kernels longer than the host's whole run cannot be right
    // (docs/tracestat.md#implausible-events).
    let host_span =
        (trace.host_last >= trace.host_first).then(|| trace.host_last - trace.host_first);
    if let Some(span) = host_span {
        let mut bad = Vec::new();
        trace.kernels.retain(|k| {
            let keep = k.end - k.start <= span;
            if !keep {
                bad.push((k.name, k.end - k.start));
            }
            keep
        });
        if !bad.is_empty() {
            for (name, d) in bad {
                let what = format!(
                    "{}: {} ({} ns) is longer than the rank's host run ({} ns)",
                    trace.file,
                    trace.name(name),
                    d,
                    span
                );
                trace
                    .implausible
                    .add("kernel longer than the wall time", || what);
            }
            let ends = trace.kernels.iter().map(|k| (k.start, k.end));
            let (mut f, mut l) = (trace.host_first, trace.host_last);
            for (s, e) in ends {
                f = f.min(s);
                l = l.max(e);
            }
            trace.first = f;
            trace.last = l;
        }
    }
    let wall = trace.wall();
    let (first, last) = if wall > 0 {
        (trace.first, trace.last)
    } else {
        (0, 0)
    };

    let names: Vec<&str> = (0..trace.names.len())
        .map(|i| trace.names.name(NameId(i as u32)))
        .collect();
    // Submission (host thread, time) of each kernel, from its H2D flow.
    let submissions: Vec<Option<(u64, Ns)>> = {
        let mut flows = std::mem::take(&mut trace.flows);
        flows.sort_unstable_by_key(|f| f.0);
        trace
            .kernels
            .iter()
            .map(|k| {
                let id = k.flow?;
                let i = flows.binary_search_by_key(&id, |f| f.0).ok()?;
                Some((flows[i].1, flows[i].2))
            })
            .collect()
    };
    let enclosing = enclosing_ranges(&trace, &submissions);

    // Classes (docs/tracestat.md#classification).
    let kinds: Vec<_> = names.iter().map(|n| classifier.kind(n)).collect();
    // What depends on the name alone, once per name instead of per kernel.
    let builtin: Vec<Class> = names
        .iter()
        .zip(&kinds)
        .map(|(n, kind)| match kind.class {
            Some(c) => c,
            None => crate::classify::builtin_class(n),
        })
        .collect();
    let no_schema: Vec<bool> = kinds.iter().map(classifier_has_no_schema).collect();
    let mut pieces: Vec<Piece> = Vec::with_capacity(trace.kernels.len());
    let mut agg_index: HashMap<(String, String), usize> = HashMap::new();
    // (name id, class) -> row of `aggs`: the category and short name, the
    // row's key, follow from these two (several names may share a row).
    let mut agg_by_id: FastMap<(NameId, Class), usize> = FastMap::default();
    let mut aggs: Vec<(KernelAgg, Vec<Ns>)> = Vec::new();
    for (i, k) in trace.kernels.iter().enumerate() {
        let kind = &kinds[k.name.index()];
        let class = match kind.class {
            Some(c) => c,
            None => {
                let mut c = builtin[k.name.index()];
                // A copy engine moves memory, unless the name says collective.
                if c != Class::Communication
                    && trace
                        .copy_engines
                        .contains(&(trace.devices[k.device as usize].pid, k.tid))
                {
                    c = Class::Memory;
                }
                // Whatever a oneCCL / MPI collective call launches is that
                // collective's work: its kernels and its copy-engine
                // traffic (docs/tracestat.md#classification).
                let in_collective = enclosing[i]
                    .as_ref()
                    .is_some_and(|path| path.iter().any(|&r| trace.names.info(r).collective));
                if in_collective {
                    c = Class::Communication;
                }
                c
            }
        };
        pieces.push(Piece {
            start: k.start,
            end: k.end,
            class,
        });
        let j = match agg_by_id.get(&(k.name, class)) {
            Some(&j) => j,
            None => {
                let category = if kind.class.is_none() && no_schema[k.name.index()] {
                    class.name().to_string()
                } else {
                    kind.category.clone()
                };
                let key = (category, kind.short_name.clone());
                let j = *agg_index.entry(key.clone()).or_insert_with(|| {
                    aggs.push((
                        KernelAgg {
                            category: key.0.clone(),
                            name: key.1.clone(),
                            class,
                            count: 0,
                            total_ns: 0,
                            durations: DurationSketch::default(),
                        },
                        Vec::new(),
                    ));
                    aggs.len() - 1
                });
                agg_by_id.insert((k.name, class), j);
                j
            }
        };
        aggs[j].0.count += 1;
        aggs[j].0.total_ns += k.end - k.start;
        aggs[j].1.push(k.end - k.start);
    }
    let mut kernels: Vec<KernelAgg> = aggs
        .into_iter()
        .map(|(mut a, mut d)| {
            a.durations = DurationSketch::from_values(&mut d);
            a
        })
        .collect();
    kernels.sort_by(|a, b| (&a.category, &a.name).cmp(&(&b.category, &b.name)));

    // Breakdown, overlap, gaps: the rank, then each device.
    let host_segs = host_segments(&trace.host_cover);
    let (all, segments) = scope_stats("all".to_string(), wall, &pieces, &host_segs);
    let mut scopes = vec![all];
    if trace.devices.len() > 1 {
        for (d, dev) in trace.devices.iter().enumerate() {
            let mine: Vec<Piece> = trace
                .kernels
                .iter()
                .zip(&pieces)
                .filter(|(k, _)| k.device as usize == d)
                .map(|(_, p)| *p)
                .collect();
            scopes.push(scope_stats(dev.label.clone(), wall, &mine, &host_segs).0);
        }
    }

    // Launch statistics: the rank, then each device.
    let launched = || trace.kernels.iter().zip(&submissions);
    let launches = launch_stats(launched(), opts.short_kernel_ns);
    let device_launches = if trace.devices.len() > 1 {
        trace
            .devices
            .iter()
            .enumerate()
            .map(|(d, dev)| {
                let mine = launched().filter(|(k, _)| k.device as usize == d);
                (dev.label.clone(), launch_stats(mine, opts.short_kernel_ns))
            })
            .collect()
    } else {
        Vec::new()
    };

    // Host ranges projected onto the GPU.
    let mut ranges: HashMap<NameId, RangeAgg> = HashMap::new();
    let mut tree: HashMap<(Vec<NameId>, String), (u64, Ns)> = HashMap::new();
    for (k, path) in trace.kernels.iter().zip(&enclosing) {
        let Some(path) = path else { continue };
        let d = k.end - k.start;
        let mut seen: Vec<NameId> = Vec::with_capacity(path.len());
        for &r in path {
            if seen.contains(&r) {
                continue;
            }
            seen.push(r);
            let a = ranges.entry(r).or_default();
            a.launches += 1;
            a.inclusive_ns += d;
        }
        if let Some(&inner) = path.last() {
            let a = ranges.entry(inner).or_default();
            a.self_launches += 1;
            a.self_ns += d;
        }
        if opts.tree_depth > 0 {
            let p: Vec<NameId> = path.iter().take(opts.tree_depth).copied().collect();
            let e = tree
                .entry((p, kinds[k.name.index()].short_name.clone()))
                .or_default();
            e.0 += 1;
            e.1 += d;
        }
    }
    let mut host_time: HashMap<NameId, (u64, Vec<(Ns, Ns)>)> = HashMap::new();
    for h in &trace.host {
        let e = host_time.entry(h.name).or_default();
        e.0 += 1;
        e.1.push((h.start, h.end));
    }
    for (name, (calls, spans)) in host_time {
        let a = ranges.entry(name).or_default();
        a.calls = calls;
        a.host_ns = union_len(spans);
    }
    let mut host_ranges: Vec<RangeAgg> = ranges
        .into_iter()
        .map(|(id, mut a)| {
            a.name = trace.name(id).to_string();
            a
        })
        .collect();
    host_ranges.sort_by(|a, b| a.name.cmp(&b.name));
    let mut tree: Vec<TreeRow> = tree
        .into_iter()
        .map(|((p, kernel), (launches, gpu_ns))| TreeRow {
            path: p.iter().map(|&r| trace.name(r).to_string()).collect(),
            kernel,
            launches,
            gpu_ns,
        })
        .collect();
    tree.sort_by(|a, b| (&a.path, &a.kernel).cmp(&(&b.path, &b.kernel)));

    let mut collectives: Vec<CollectiveOcc> = trace
        .collectives
        .iter()
        .map(|c| CollectiveOcc {
            name: c.name.to_string(),
            comm: c.comm.clone(),
            bytes: c.bytes,
            start: c.start,
            end: c.end,
        })
        .collect();
    collectives.sort_by(|a, b| (a.start, a.end, &a.name).cmp(&(b.start, b.end, &b.name)));

    let heat = heat_row(first, last, &segments, opts.heat_resolution);
    RankSummary {
        rank: trace.rank,
        input_index: trace.input_index,
        file: trace.file.clone(),
        truncated: trace.truncated.clone(),
        trailing_data_line: trace.trailing_data_line,
        first_ns: first,
        last_ns: last,
        scopes,
        launches,
        device_launches,
        kernels,
        host_ranges,
        tree,
        collectives,
        heat,
        implausible: trace
            .implausible
            .counts
            .iter()
            .map(|(k, n)| (k.to_string(), *n))
            .collect(),
        implausible_examples: trace.implausible.examples.clone(),
    }
}

/// Without a schema the category of a kernel is its final class (a memory
/// copy inside a collective is communication).
fn classifier_has_no_schema(kind: &crate::classify::KernelKind) -> bool {
    Class::ALL.iter().any(|c| c.name() == kind.category)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(start: Ns, end: Ns, class: Class) -> Piece {
        Piece { start, end, class }
    }

    #[test]
    fn precedence_and_overlap() {
        // compute 0-10, comm 5-20, memory 15-30, then idle, compute 40-50.
        let s = sweep(&[
            p(0, 10, Class::Compute),
            p(5, 20, Class::Communication),
            p(15, 30, Class::Memory),
            p(40, 50, Class::Compute),
        ]);
        assert_eq!(s.class_ns, [20, 10, 10]);
        assert_eq!(s.comm_union, 15);
        assert_eq!(s.overlap, 5);
        assert_eq!(s.segments, vec![(0, 30), (40, 50)]);
    }

    #[test]
    fn gap_causes_by_time_share() {
        let host = vec![(100, 130, HostKind::Sync), (130, 200, HostKind::Busy)];
        // Gap 100..200: 30 sync, 70 busy -> busy. Gap 300..400: unknown.
        let g = gaps(&[(0, 100), (200, 300), (400, 500)], &host);
        assert_eq!(g.count, 2);
        assert_eq!(g.total_ns, 200);
        assert_eq!(g.cause_count, [0, 0, 1, 1]);
        assert_eq!(g.cause_ns, [0, 30, 70, 100]);
        assert_eq!(g.hist_count, [2, 0, 0, 0, 0]);
    }

    #[test]
    fn heat_bins_on_a_power_of_two_grid() {
        let row = heat_row(0, 1024, &[(0, 100), (700, 800)], 4);
        assert_eq!(row.width_ns, 256);
        assert_eq!(row.first_bin, 0);
        assert_eq!(row.busy_ns, vec![100, 0, 68, 32]);
    }
}
