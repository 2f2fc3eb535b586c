//! One rank prepared for the analyses (docs/tracestat.md#per-rank-tables):
//! from the intervals the input pass kept ([`RankTrace`]), each kernel's
//! class, category and submission, the host ranges enclosing each
//! submission, the busy segments of the rank and of each device, and the
//! host activity by kind. Every analyzer reads this, so the work is done
//! once per rank; `analyzers::summarize` then keeps only the analyzers'
//! small parts and drops the intervals, so memory is bounded by the files
//! being read at the same time.

use rustc_hash::FxHashMap as FastMap;
use unitrace_core::timeline::NameId;

use crate::classify::{builtin_class, Class, Classifier, HostKind, KernelKind};
use crate::ingest::{HostCall, RankTrace};
use crate::step_windows::RankSteps;
use crate::time::Ns;

/// One classified kernel interval.
#[derive(Clone, Copy, Debug)]
pub struct Piece {
    pub start: Ns,
    pub end: Ns,
    pub class: Class,
}

/// Busy segments (the union) and the exclusive class times of a set of
/// kernel intervals (docs/tracestat.md#precedence).
#[derive(Debug, Default)]
pub struct Sweep {
    pub segments: Vec<(Ns, Ns)>,
    /// Time per class, a moment counted for the first class running
    /// (compute > communication > memory).
    pub class_ns: [Ns; 3],
    /// Union of communication kernels, whatever else runs.
    pub comm_union: Ns,
    /// Time where communication and compute run together.
    pub overlap: Ns,
    /// The busy time as disjoint segments in time order, each labelled
    /// with the class counted there ([`class_index`]); the steps cut it
    /// per step (docs/tracestat.md#steps).
    pub class_segments: Vec<(Ns, Ns, usize)>,
}

impl Sweep {
    pub fn busy(&self) -> Ns {
        self.class_ns.iter().sum()
    }
}

pub fn class_index(c: Class) -> usize {
    match c {
        Class::Compute => 0,
        Class::Communication => 1,
        Class::Memory => 2,
    }
}

/// Interval edges `(time, +1 | -1, kind)` in the order of the tuples (by
/// time, ends before starts, then by kind), sorted as one integer each: a
/// rank has millions, and a sort of 8-byte keys takes a fraction of one of
/// 24-byte tuples.
fn sorted_edges(edges: impl Iterator<Item = (Ns, i32, usize)> + Clone) -> SortedEdges {
    let origin = edges.clone().map(|e| e.0).min().unwrap_or(0);
    let span = edges
        .clone()
        .map(|e| e.0)
        .max()
        .unwrap_or(0)
        .saturating_sub(origin);
    if span >= 1 << 60 {
        // Times more than 36 years apart: the tuples themselves.
        let mut v: Vec<_> = edges.collect();
        v.sort_unstable();
        return SortedEdges::Tuples(v.into_iter());
    }
    let mut keys: Vec<u64> = edges
        .map(|(t, delta, k)| {
            debug_assert!(k < 4 && (delta == 1 || delta == -1));
            ((t - origin) as u64) << 3 | u64::from(delta > 0) << 2 | k as u64
        })
        .collect();
    keys.sort_unstable();
    SortedEdges::Keys(keys.into_iter(), origin)
}

/// The edges of [`sorted_edges`], decoded one at a time.
enum SortedEdges {
    Keys(std::vec::IntoIter<u64>, Ns),
    Tuples(std::vec::IntoIter<(Ns, i32, usize)>),
}

impl Iterator for SortedEdges {
    type Item = (Ns, i32, usize);

    fn next(&mut self) -> Option<(Ns, i32, usize)> {
        match self {
            SortedEdges::Keys(keys, origin) => keys.next().map(|key| {
                let delta = if key & 4 != 0 { 1 } else { -1 };
                (*origin + (key >> 3) as Ns, delta, (key & 3) as usize)
            }),
            SortedEdges::Tuples(v) => v.next(),
        }
    }
}

/// The sweep of some kernel intervals.
pub fn sweep(pieces: &[Piece]) -> Sweep {
    let edges = sorted_edges(pieces.iter().flat_map(|p| {
        let c = class_index(p.class);
        [(p.start, 1, c), (p.end, -1, c)]
    }));
    let mut counts = [0i64; 3];
    let mut out = Sweep::default();
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
                    match out.class_segments.last_mut() {
                        Some((_, e, c)) if *e == p && *c == top => *e = t,
                        _ => out.class_segments.push((p, t, top)),
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
    let edges = sorted_edges(cover.iter().enumerate().flat_map(|(k, list)| {
        list.iter()
            .filter(|&&(s, e)| e > s)
            .flat_map(move |&(s, e)| [(s, 1, k), (e, -1, k)])
    }));
    let order = HostKind::ALL;
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

/// For each kernel with a known submission, the host ranges (innermost
/// last) enclosing the submission on the submitting thread.
fn enclosing_ranges(
    trace: &RankTrace,
    submissions: &[Option<(u64, Ns)>],
) -> (EnclosingPaths, HostOrder) {
    let mut queries: FastMap<u64, Vec<(Ns, usize)>> = FastMap::default();
    for (i, sub) in submissions.iter().enumerate() {
        if let Some((tid, ts)) = *sub {
            queries.entry(tid).or_default().push((ts, i));
        }
    }
    let order = HostOrder::of_threads(trace, queries.keys().copied());
    let mut out = EnclosingPaths {
        of_kernel: vec![NO_PATH; trace.kernels.len()],
        ..EnclosingPaths::default()
    };
    let mut ids: FastMap<Vec<NameId>, u32> = FastMap::default();
    let mut path: Vec<NameId> = Vec::new();
    let mut last: Option<u32> = None;
    for (tid, mut qs) in queries {
        qs.sort_unstable();
        let ranges = order.of_thread(tid).unwrap_or_default();
        let mut stack: Vec<HostCall> = Vec::new();
        let mut next = 0;
        for (ts, k) in qs {
            while next < ranges.len() && trace.host[ranges[next] as usize].start <= ts {
                let r = trace.host[ranges[next] as usize];
                while stack.last().is_some_and(|top| top.end < r.start) {
                    stack.pop();
                }
                stack.push(r);
                next += 1;
            }
            // Ranges of one thread nest: whatever ended before `ts` is on
            // top of those still open.
            stack.retain(|r| r.end >= ts);
            path.clear();
            path.extend(stack.iter().map(|r| r.name));
            // Kernels in time order: mostly the path of the one before.
            let id = match last {
                Some(l) if out.paths[l as usize][..] == path[..] => l,
                _ => match ids.get(&path) {
                    Some(&id) => id,
                    None => {
                        let id = out.paths.len() as u32;
                        out.paths.push(path.as_slice().into());
                        ids.insert(path.clone(), id);
                        id
                    }
                },
            };
            last = Some(id);
            out.of_kernel[k] = id;
        }
    }
    (out, order)
}

/// The host ranges of threads that launch work, by start, the longer
/// first at one start, ties in trace order: read by the enclosing ranges
/// and by the critical path's threads, which sorted them each on its own
/// (docs/tracestat.md#scale).
#[derive(Debug, Default)]
pub struct HostOrder {
    /// Per thread, where its list starts in `ranges`.
    threads: FastMap<u64, (usize, usize)>,
    /// Indices into the trace's host ranges.
    ranges: Vec<u32>,
}

impl HostOrder {
    fn of_threads(trace: &RankTrace, tids: impl Iterator<Item = u64>) -> HostOrder {
        let mut keyed: FastMap<u64, Vec<(Ns, std::cmp::Reverse<Ns>, u32)>> =
            tids.map(|tid| (tid, Vec::new())).collect();
        for (i, h) in trace.host.iter().enumerate() {
            if let Some(list) = keyed.get_mut(&h.tid) {
                list.push((h.start, std::cmp::Reverse(h.end), i as u32));
            }
        }
        let mut tids: Vec<u64> = keyed.keys().copied().collect();
        tids.sort_unstable();
        let mut out = HostOrder::default();
        for tid in tids {
            let mut list = keyed.remove(&tid).unwrap_or_default();
            // The index breaks ties: the order of a stable sort by key.
            list.sort_unstable();
            let from = out.ranges.len();
            out.ranges.extend(list.iter().map(|r| r.2));
            out.threads.insert(tid, (from, out.ranges.len()));
        }
        out
    }

    /// Thread `tid`'s host ranges in order (indices into the trace's),
    /// `None` for a thread that launches nothing.
    pub fn of_thread(&self, tid: u64) -> Option<&[u32]> {
        let &(from, to) = self.threads.get(&tid)?;
        self.ranges.get(from..to)
    }
}

const NO_PATH: u32 = u32::MAX;

/// Per kernel, the host ranges enclosing its submission (outermost first),
/// each distinct path held once: the kernels of a step share a few paths,
/// and a list per kernel took 19 MB of a 500 MB rank
/// (docs/tracestat.md#scale).
#[derive(Debug, Default)]
pub struct EnclosingPaths {
    paths: Vec<Box<[NameId]>>,
    /// Index into `paths`, or `NO_PATH` for a kernel without a submission.
    of_kernel: Vec<u32>,
}

impl EnclosingPaths {
    /// In kernel order: the path, `None` for a kernel without a submission.
    pub fn iter(&self) -> impl Iterator<Item = Option<&[NameId]>> + '_ {
        self.of_kernel
            .iter()
            .map(|&i| self.paths.get(i as usize).map(|p| &p[..]))
    }
}

/// One scope of the breakdown: the whole rank, or one of its devices.
#[derive(Debug)]
pub struct Scope {
    /// `all` for the whole rank, else the device label.
    pub device: String,
    pub sweep: Sweep,
    /// Sum of kernel durations (not a union).
    pub kernel_sum: Ns,
    pub launches: u64,
}

/// One rank, prepared.
pub struct RankModel<'a> {
    pub trace: &'a RankTrace,
    /// First and last event, (0, 0) without a time span.
    pub first: Ns,
    pub last: Ns,
    pub wall: Ns,
    /// Per name id: category, short name and schema class.
    pub kinds: Vec<KernelKind>,
    /// Per kernel: its class (docs/tracestat.md#classification).
    pub classes: Vec<Class>,
    /// Per kernel: its submission (host thread, time), from its flow.
    pub submissions: Vec<Option<(u64, Ns)>>,
    /// Per kernel: the host ranges enclosing its submission.
    pub enclosing: EnclosingPaths,
    /// The host ranges of each thread that launches work, in time order.
    pub host_order: HostOrder,
    /// Host activity as disjoint segments, labelled by kind.
    pub host_segments: Vec<(Ns, Ns, HostKind)>,
    /// `[0]` the whole rank; then one per device when it has several.
    pub scopes: Vec<Scope>,
    /// The rank's steps, found before any clipping, and those the run
    /// keeps (docs/tracestat.md#steps).
    pub steps: &'a RankSteps,
    /// The rank's steady state ([`steady_window`]).
    pub steady: Option<Steady>,
}

/// The stretch of a rank where set-up work should be over
/// (docs/findings.md#steady-state), and how it was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Steady {
    pub start: Ns,
    pub end: Ns,
    /// `steps`: from the second `ProfilerStep#N` range to the end of the
    /// last; `one step`: the only one; `active window`: no step ranges.
    pub rule: &'static str,
}

/// Whether a host range marks a training step (`ProfilerStep#3`,
/// `PyTorch::ProfilerStep#3`).
pub fn is_step_range(name: &str) -> bool {
    name.find("ProfilerStep#")
        .and_then(|at| name[at + "ProfilerStep#".len()..].bytes().next())
        .is_some_and(|b| b.is_ascii_digit())
}

/// The steady state of a rank (docs/findings.md#steady-state): its kept
/// steps (by whichever rule of docs/tracestat.md#steps found them) without
/// the first (warm-up) one, else its active window (first to last device
/// operation).
pub fn steady_window(steps: &RankSteps, busy: &[(Ns, Ns)]) -> Option<Steady> {
    // The steps analyzer's kept steps (docs/tracestat.md#steps); their
    // first is the warm-up unless `--skip-warmup` already dropped it.
    let kept = &steps.kept;
    match kept.as_slice() {
        [] => {}
        [only] => {
            return Some(Steady {
                start: only.start_ns,
                end: only.end_ns,
                rule: "one step",
            })
        }
        [first, second, ..] => {
            let start = if steps.warmup.is_empty() {
                second.start_ns
            } else {
                first.start_ns
            };
            let end = kept.iter().map(|s| s.end_ns).max().unwrap_or(second.end_ns);
            return Some(Steady {
                start,
                end,
                rule: "steps",
            });
        }
    }
    let (first, last) = (busy.first()?, busy.last()?);
    Some(Steady {
        start: first.0,
        end: last.1,
        rule: "active window",
    })
}

impl RankModel<'_> {
    pub fn name(&self, id: NameId) -> &str {
        self.trace.name(id)
    }
}

/// Kernels longer than the host's whole run cannot be right
/// (docs/tracestat.md#implausible-events): left out, counted.
fn drop_impossible_kernels(trace: &mut RankTrace) {
    let Some(span) =
        (trace.host_last >= trace.host_first).then(|| trace.host_last - trace.host_first)
    else {
        return;
    };
    let mut bad = Vec::new();
    trace.kernels.retain(|k| {
        let keep = k.end - k.start <= span;
        if !keep {
            bad.push((k.name, k.end - k.start));
        }
        keep
    });
    if bad.is_empty() {
        return;
    }
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
    let (mut f, mut l) = (trace.host_first, trace.host_last);
    for k in &trace.kernels {
        f = f.min(k.start);
        l = l.max(k.end);
    }
    trace.first = f;
    trace.last = l;
}

/// Submission (host thread, time) of each kernel, from its flow.
fn submissions(trace: &mut RankTrace) -> Vec<Option<(u64, Ns)>> {
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
}

/// Each kernel's class (docs/tracestat.md#classification): the schema's,
/// else by name, a copy engine's work is memory, and whatever a collective
/// call launches is communication.
fn classes(trace: &RankTrace, kinds: &[KernelKind], enclosing: &EnclosingPaths) -> Vec<Class> {
    let builtin: Vec<Class> = kinds
        .iter()
        .enumerate()
        .map(|(i, kind)| match kind.class {
            Some(c) => c,
            None => builtin_class(trace.name(NameId(i as u32))),
        })
        .collect();
    trace
        .kernels
        .iter()
        .zip(enclosing.iter())
        .map(|(k, path)| {
            let kind = &kinds[k.name.index()];
            if let Some(c) = kind.class {
                return c;
            }
            let mut c = builtin[k.name.index()];
            let device_pid = trace.devices[k.device as usize].pid;
            if c != Class::Communication && trace.copy_engines.contains(&(device_pid, k.tid)) {
                c = Class::Memory;
            }
            let in_collective =
                path.is_some_and(|p| p.iter().any(|&r| trace.names.info(r).collective));
            if in_collective {
                c = Class::Communication;
            }
            c
        })
        .collect()
}

/// The rank's scopes: the whole rank, then each device when it has several.
fn scopes(trace: &RankTrace, classes: &[Class]) -> Vec<Scope> {
    let pieces: Vec<Piece> = trace
        .kernels
        .iter()
        .zip(classes)
        .map(|(k, &class)| Piece {
            start: k.start,
            end: k.end,
            class,
        })
        .collect();
    let scope = |device: String, pieces: &[Piece]| Scope {
        device,
        sweep: sweep(pieces),
        kernel_sum: pieces.iter().map(|p| p.end - p.start).sum(),
        launches: pieces.len() as u64,
    };
    let mut out = vec![scope("all".to_string(), &pieces)];
    if trace.devices.len() > 1 {
        for (d, dev) in trace.devices.iter().enumerate() {
            let mine: Vec<Piece> = trace
                .kernels
                .iter()
                .zip(&pieces)
                .filter(|(k, _)| k.device as usize == d)
                .map(|(_, p)| *p)
                .collect();
            out.push(scope(dev.label.clone(), &mine));
        }
    }
    out
}

/// Prepares one rank: drops impossible kernels, finds submissions,
/// enclosing ranges, classes and scopes, then hands the model to `f`.
pub fn with_model<T>(
    mut trace: RankTrace,
    classifier: &mut Classifier<'_>,
    steps: &RankSteps,
    f: impl FnOnce(&RankModel<'_>) -> T,
) -> (RankTrace, T) {
    drop_impossible_kernels(&mut trace);
    let wall = trace.wall();
    let (first, last) = if wall > 0 {
        (trace.first, trace.last)
    } else {
        (0, 0)
    };
    let submissions = submissions(&mut trace);
    let (enclosing, host_order) = enclosing_ranges(&trace, &submissions);
    let kinds: Vec<KernelKind> = (0..trace.names.len())
        .map(|i| classifier.kind(trace.names.name(NameId(i as u32))))
        .collect();
    let classes = classes(&trace, &kinds, &enclosing);
    let scopes = scopes(&trace, &classes);
    let steady = steady_window(steps, &scopes[0].sweep.segments);
    let model = RankModel {
        trace: &trace,
        first,
        last,
        wall,
        kinds,
        classes,
        submissions,
        enclosing,
        host_order,
        host_segments: host_segments(&trace.host_cover),
        scopes,
        steps,
        steady,
    };
    let out = f(&model);
    drop(model);
    (trace, out)
}

/// Keeps only the stretch `from..to` of a rank (offsets from its first
/// event, docs/tracestat.md#windows): device operations and host calls
/// cut at the window's edges, collectives called inside it (on the host:
/// NCCL's device work may run in the next step), the rank's span the
/// window's.
pub fn clip_to_window(mut t: RankTrace, (from, to): (Ns, Ns)) -> RankTrace {
    if t.last < t.first {
        return t;
    }
    let (lo, hi) = (t.first.saturating_add(from), t.first.saturating_add(to));
    let clip = |s: Ns, e: Ns| (s.max(lo), e.min(hi));
    t.kernels.retain_mut(|k| {
        (k.start, k.end) = clip(k.start, k.end);
        k.end > k.start
    });
    for calls in [&mut t.host, &mut t.api] {
        calls.retain_mut(|h| {
            (h.start, h.end) = clip(h.start, h.end);
            h.end >= h.start && h.start < hi && h.end > lo
        });
    }
    for cover in &mut t.host_cover {
        cover.retain_mut(|c| {
            *c = clip(c.0, c.1);
            c.1 > c.0
        });
    }
    t.collectives.retain(|c| c.called >= lo && c.called < hi);
    t.setup_calls.retain_mut(|c| {
        (c.start, c.end) = clip(c.start, c.end);
        c.end >= c.start && c.start < hi && c.end > lo
    });
    t.host_first = t.host_first.max(lo);
    t.host_last = t.host_last.min(hi);
    t.first = t.first.max(lo);
    t.last = t.last.min(hi);
    t
}

/// The union of intervals as sorted, disjoint intervals.
pub fn union_segments(mut v: Vec<(Ns, Ns)>) -> Vec<(Ns, Ns)> {
    v.sort_unstable();
    let mut out: Vec<(Ns, Ns)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some((_, ce)) if s <= *ce => *ce = (*ce).max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Union length of intervals.
pub fn union_len(mut v: Vec<(Ns, Ns)>) -> Ns {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_sorted_as_keys_come_in_the_order_of_the_tuples() {
        let near = 1_700_000_000_000_000_000;
        for base in [near, -5, 0] {
            let mut edges = Vec::new();
            for i in 0..200i64 {
                let t = base + (i * 7919) % 61;
                edges.push((t, if i % 3 == 0 { -1 } else { 1 }, (i % 3) as usize));
            }
            let mut want = edges.clone();
            want.sort_unstable();
            let got: Vec<_> = sorted_edges(edges.iter().copied()).collect();
            assert_eq!(got, want, "base {base}");
        }
        // Times too far apart for one key: the tuples' own sort.
        let far = vec![(Ns::MAX, 1, 0), (Ns::MIN, -1, 2), (0, 1, 1), (0, -1, 1)];
        let mut want = far.clone();
        want.sort_unstable();
        let got: Vec<_> = sorted_edges(far.iter().copied()).collect();
        assert_eq!(got, want);
        assert_eq!(sorted_edges(std::iter::empty()).count(), 0);
    }

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
    fn host_segments_take_the_kind_of_highest_precedence() {
        let cover = [vec![(10, 20)], vec![(15, 30)], vec![(0, 40)]];
        assert_eq!(
            host_segments(&cover),
            vec![
                (0, 10, HostKind::Busy),
                (10, 20, HostKind::Collective),
                (20, 30, HostKind::Sync),
                (30, 40, HostKind::Busy)
            ]
        );
    }
}
