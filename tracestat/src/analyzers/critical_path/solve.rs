//! The critical path across ranks (docs/tracestat.md#critical-path): each
//! rank's reduced steps (`graph.rs`) joined through the collectives that
//! the collectives analyzer matched, on the clocks it aligned.
//!
//! A step's path starts at the rank whose step ends last and follows the
//! chain of each sink back to its source; at the end of a collective call
//! it crosses to the rank that arrived last at that collective (the call
//! ended its transfer time after that arrival) and goes on from that
//! rank's arrival. Collectives whose ends come before their last arrival
//! (clocks apart, docs/tracestat.md#clock-alignment) or that matched no
//! other rank are taken as the rank's own work from its arrival.

use std::collections::BTreeMap;

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

use super::graph::{Item, Kind, RankPath, Sink, StepGraph};
use super::packed::SinkLens;
use super::rules::{Rule, Target};
use crate::time::Ns;

pub use crate::labels::Label;

/// One stretch of a step's path, on aligned clocks.
#[derive(Debug, Clone, PartialEq)]
pub struct PathItem {
    /// Rank index (report order).
    pub rank: usize,
    pub kind: Kind,
    pub name: Label,
    pub start: Ns,
    pub dur: Ns,
}

/// The lists a step's path is walked in, kept from step to step: a run
/// walks every step, and the walk's room (a large block, 256 stretches)
/// was allocated and shrunk for each; now a step allocates only its
/// clipped path, at its length (docs/tracestat.md#scale).
#[derive(Default)]
pub struct PathScratch {
    rev: Vec<PathItem>,
    chain: Vec<Item>,
}

/// One step's path across ranks.
#[derive(Debug, Clone)]
pub struct StepPath {
    pub id: Option<i64>,
    /// Earliest start and latest end of the step over the ranks (aligned).
    pub start: Ns,
    pub end: Ns,
    pub end_rank: usize,
    /// The latest of the ranks' starts of the step (aligned).
    pub last_start: Ns,
    pub items: Vec<PathItem>,
    /// The path's time per (kind, name): `(stretches, time)`, exact even
    /// where long chains were coarsened.
    pub totals: Totals,
    /// The same over the part of the step that no step before it covers
    /// (from the latest end of those steps): what the tables over all
    /// steps count, so that a rank's work that two steps' paths both hold
    /// (the step before of a rank still in it) counts once
    /// (docs/tracestat.md#critical-path). `None` where they are `totals`
    /// (no step before reaches into this one): every step is held until
    /// the output, and most have none.
    pub own_totals: Option<Totals>,
    /// Per rule: the step's start and end (aligned) replayed under it.
    pub what_if: Vec<(Ns, Ns)>,
}

/// The ranks' reduced graphs and the matching of their collectives.
pub struct Solver<'a> {
    pub paths: Vec<&'a RankPath>,
    /// Clock offsets subtracted from each rank's times.
    pub off: &'a [Ns],
    /// `(rank, call)` -> its operation.
    pub op_of: HashMap<(usize, usize), usize>,
    /// Per operation: its calls.
    pub ops: Vec<Vec<(usize, usize)>>,
    /// Each rank's id (report order).
    pub rank_ids: Vec<Option<u32>>,
    /// Sinks of every rank: a bound on any path's crossings.
    pub sinks: usize,
    /// Each rank's names ([`RankPath::names`]) as labels, made once.
    pub labels: Vec<Vec<Label>>,
    /// Per operation: the call that arrived last and its arrival (the
    /// latest, the lowest rank on a tie), found once ([`Solver::new`]): a
    /// search per call would be quadratic in the ranks.
    op_last: Vec<(usize, usize, Ns)>,
    /// Per rank, its calls that are a step's sink as `(step, call)`, in
    /// order: a step's calls are found by a search, not a scan of all.
    step_calls: Vec<Vec<(u32, u32)>>,
    /// The spilled steps the window being solved reads, whole
    /// ([`Solver::load_window`]).
    window: HashMap<Part, StepGraph>,
}

/// What a step reads as when its body is not in the window: no sinks
/// (never so: [`Solver::load_window`] loads what the walks reach).
static NO_STEP: StepGraph = StepGraph {
    id: None,
    start: 0,
    end: 0,
    sinks: Vec::new(),
    kernel_ns: 0,
    host_end: None,
};

/// The replayed arrivals of the calls of the steps already replayed
/// under one rule: a step that waits on a collective of an earlier step
/// takes its replayed end, not its recorded one (docs/tracestat.md#what-if).
pub struct Carried {
    /// Rank `r`'s calls are `at[from[r]..from[r + 1]]`.
    from: Vec<usize>,
    at: Vec<Ns>,
    /// Per rank, `(step, shift)`: how much later (or earlier, below 0)
    /// the last of its steps replayed ends than recorded, and its host
    /// range.
    end_shift: Vec<Option<(usize, Ns)>>,
    host_shift: Vec<Option<(usize, Ns)>>,
    /// The lists a step's replay works in, kept from step to step: a run
    /// replays every step under every rule, four lists each time
    /// (docs/tracestat.md#scale).
    scratch: ReplayScratch,
}

/// [`Solver::replay_prepared`]'s lists: per sink its replayed time, per
/// part its shifts, per group its latest arrival, per host range end its
/// move.
#[derive(Default)]
struct ReplayScratch {
    value: Vec<Ns>,
    shifts: Vec<(Ns, Ns)>,
    latest: Vec<Option<Ns>>,
    host_moved: Vec<(usize, Ns)>,
}

impl Carried {
    const UNSET: Ns = Ns::MIN;

    /// Nothing replayed yet, for the calls of `solver`'s ranks.
    pub fn new(solver: &Solver<'_>) -> Self {
        let mut from = Vec::with_capacity(solver.paths.len() + 1);
        from.push(0);
        for p in &solver.paths {
            from.push(from[from.len() - 1] + p.colls.len());
        }
        let n = from[from.len() - 1];
        Carried {
            from,
            at: vec![Self::UNSET; n],
            end_shift: vec![None; solver.paths.len()],
            host_shift: vec![None; solver.paths.len()],
            scratch: ReplayScratch::default(),
        }
    }

    fn get(&self, (r, j): (usize, usize)) -> Option<Ns> {
        let t = self.at[self.from[r] + j];
        (t != Self::UNSET).then_some(t)
    }

    fn set(&mut self, (r, j): (usize, usize), t: Ns) {
        self.at[self.from[r] + j] = t;
    }
}

/// One step of one rank taking part in a step.
type Part = (usize, usize);

/// A step id with the ranks' steps of that id ([`Solver::steps`]).
pub type StepParts = (Option<i64>, Vec<Part>);

/// The matched collective operations: `(rank, call)` -> operation, and
/// each operation's calls.
pub type Operations = (HashMap<(usize, usize), usize>, Vec<Vec<(usize, usize)>>);

/// A step's replay prepared for any rule ([`Solver::prepare`]); the
/// values of its sinks are indexed part by part (`first`).
pub struct StepReplay {
    parts: Vec<Part>,
    /// Part `i`'s sinks are values `first[i]..first[i + 1]`.
    first: Vec<usize>,
    /// In time order.
    sinks: Vec<PlannedSink>,
    /// Each sink's chains: where their source's time comes from, and
    /// their lengths per slot.
    chains: Vec<(Base, usize)>,
    /// The chains' lengths (`chains`' second value: where a chain's
    /// `[recorded, kernel part, rule...]` start).
    lens: Vec<Ns>,
    arrivals: Vec<Arrival>,
    groups: Vec<ArrivalGroup>,
    /// The groups each value is an arrival of: value `v`'s are
    /// `group_of[member_from[v]..member_from[v + 1]]`.
    member_from: Vec<usize>,
    group_of: Vec<u32>,
    /// The step's collective calls that are sinks: `((rank, call), value)`,
    /// carried to the steps replayed after it ([`Carried`]).
    own_calls: Vec<((usize, usize), usize)>,
    /// Per part: its recorded start and end (aligned), and whether the
    /// rank's step before it is the one numbered before it (else it is
    /// replayed from its recorded start).
    bounds: Vec<(Ns, Ns, bool)>,
    /// The parts' host range ends, planned as sinks (`at` unused).
    host_ends: Vec<PlannedSink>,
}

/// An operation's arrivals in a replay, shared by every chain that starts
/// at the end of one of its calls: their latest is found once per change
/// of one of them, not once per chain (which was quadratic in the ranks).
struct ArrivalGroup {
    /// Its arrivals in [`StepReplay::arrivals`].
    arrivals: (usize, usize),
}

struct PlannedSink {
    /// Its value's index.
    at: usize,
    /// Its part's index.
    part: usize,
    rank: usize,
    /// Its chains in [`StepReplay::chains`].
    chains: (usize, usize),
    /// Its time as recorded (aligned), for a sink without chains.
    recorded: Ns,
}

/// Where a chain of a replay starts.
#[derive(Clone, Copy)]
enum Base {
    /// The rank's step start (aligned).
    Start(Ns),
    /// The rank's step start (aligned), for chains from device work
    /// before the step ([`super::graph::BEFORE`]).
    Before(Ns),
    /// The end of a collective call of the rank: the latest of the
    /// arrivals `arrivals` of its operation (or `last`, the one that
    /// arrived last as recorded, when none), plus the rank's `transfer`.
    Coll {
        transfer: Ns,
        last: Ns,
        /// The call's own arrival alone (`None`: it arrived last, or its
        /// operation ended before the last arrival), else its operation's
        /// [`ArrivalGroup`].
        arrivals: Arrivals,
        /// The rank's step start: a step is replayed from its recorded
        /// start, so no call's end moves before it (a call that began
        /// before the step keeps its time there; docs/tracestat.md#what-if).
        floor: Ns,
    },
}

/// What a collective call's end waits for in a replay.
#[derive(Clone, Copy)]
enum Arrivals {
    /// Its own arrival only.
    Own(Arrival),
    /// Every arrival of its operation: a group's index.
    Group(usize),
}

/// An arrival at a collective in a replay: the value of a sink of the
/// step, or for a call outside the step its value in a step replayed
/// before ([`Carried`]), else the time recorded.
#[derive(Clone, Copy)]
enum Arrival {
    Replayed(usize),
    Outside { call: (usize, usize), recorded: Ns },
}

impl<'a> Solver<'a> {
    /// The solver of the ranks' paths `paths`, on clocks `off`, with the
    /// collectives' operations (`op_of`, `ops`).
    pub fn new(
        paths: Vec<&'a RankPath>,
        off: &'a [Ns],
        (op_of, ops): Operations,
        rank_ids: Vec<Option<u32>>,
    ) -> Self {
        let sinks = paths
            .iter()
            .map(|p| (0..p.steps.len()).map(|k| p.sink_count(k)).sum::<usize>())
            .sum();
        // Shared by the ranks that name them (`labels.rs`).
        let labels = paths.iter().map(|p| p.names.clone()).collect();
        let mut s = Solver {
            paths,
            off,
            op_of,
            ops,
            rank_ids,
            sinks,
            labels,
            op_last: Vec::new(),
            step_calls: Vec::new(),
            window: HashMap::default(),
        };
        s.step_calls = (s.paths.iter())
            .map(|p| {
                let mut v: Vec<(u32, u32)> = (p.colls.iter().enumerate())
                    .filter_map(|(j, c)| Some((c.sink?.0, j as u32)))
                    .collect();
                v.sort_unstable();
                v
            })
            .collect();
        s.op_last = (s.ops.iter())
            .map(|calls| {
                calls
                    .iter()
                    .map(|&(rr, jj)| (rr, jj, s.arrival(rr, jj)))
                    .max_by(|a, b| a.2.cmp(&b.2).then(b.0.cmp(&a.0)))
                    .unwrap_or((usize::MAX, usize::MAX, Ns::MIN))
            })
            .collect();
        s
    }

    /// Rank `r`'s step `k` whole: from the rank's steps, or from the
    /// window when they were spilled.
    fn body(&self, r: usize, k: usize) -> &StepGraph {
        let p = self.paths[r];
        if p.spill.is_none() {
            return p.steps.get(k).unwrap_or(&NO_STEP);
        }
        self.window.get(&(r, k)).unwrap_or(&NO_STEP)
    }

    /// Loads the spilled steps that the paths and replays of `steps`
    /// read: their parts, and what their walks reach from them (the step
    /// before of a rank still in it, the step of the last arrival at a
    /// collective a chain starts at), as [`Solver::path`] follows them.
    /// The window loaded before is dropped.
    pub fn load_window(&mut self, steps: &[StepParts]) -> std::io::Result<()> {
        self.window = HashMap::default();
        if self.paths.iter().all(|p| p.spill.is_none()) {
            return Ok(());
        }
        // Each rank's parts, read at once where they lie together.
        let mut per_rank: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for &(r, k) in steps.iter().flat_map(|(_, parts)| parts) {
            per_rank.entry(r).or_default().push(k);
        }
        let mut ranges: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
        for (r, mut ks) in per_rank {
            ks.sort_unstable();
            let (lo, hi) = (ks[0], ks[ks.len() - 1]);
            if hi - lo < 2 * ks.len() {
                ranges.push((r, lo..hi + 1));
            } else {
                ranges.extend(ks.into_iter().map(|k| (r, k..k + 1)));
            }
        }
        // Read and decoded in parallel, put in the window in order.
        let loaded: Vec<std::io::Result<Vec<StepGraph>>> = (ranges.par_iter())
            .map(|(r, ks)| self.paths[*r].load(ks.clone()))
            .collect();
        for ((r, ks), steps) in ranges.into_iter().zip(loaded) {
            for (k, step) in ks.zip(steps?) {
                self.window.insert((r, k), step);
            }
        }
        for (_, parts) in steps {
            let start = (parts.iter())
                .map(|&(r, k)| self.paths[r].steps[k].start - self.off[r])
                .min()
                .unwrap_or(0);
            let mut seen: std::collections::HashSet<Part> = parts.iter().copied().collect();
            let mut todo = parts.to_vec();
            while let Some((r, k)) = todo.pop() {
                if self.paths[r].spill.is_some() && !self.window.contains_key(&(r, k)) {
                    self.load_range(r, k..k + 1)?;
                }
                let next = self.reached_from(r, k, start);
                todo.extend(next.into_iter().filter(|p| seen.insert(*p)));
            }
        }
        Ok(())
    }

    fn load_range(&mut self, r: usize, ks: std::ops::Range<usize>) -> std::io::Result<()> {
        let from = ks.start;
        for (i, step) in self.paths[r].load(ks)?.into_iter().enumerate() {
            self.window.insert((r, from + i), step);
        }
        Ok(())
    }

    /// The steps [`Solver::path`] may go on to from rank `r`'s step `k` of
    /// a step that starts at `start`.
    fn reached_from(&self, r: usize, k: usize, start: Ns) -> Vec<Part> {
        let mut out: Vec<Part> = self
            .step_before_at(r, k, start)
            .map(|b| (r, b))
            .into_iter()
            .collect();
        for sink in &self.body(r, k).sinks {
            let Some(j) = sink.source.map(|j| j as usize) else {
                continue;
            };
            if j >= self.paths[r].colls.len() {
                continue;
            }
            let (lr, lj, _) = self.last_arrival(r, j);
            if let Some((k2, _)) = self.paths[lr].colls[lj].sink {
                out.push((lr, k2 as usize));
            }
        }
        out
    }

    fn arrival(&self, r: usize, j: usize) -> Ns {
        self.paths[r].colls[j].arrival - self.off[r]
    }

    fn coll_end(&self, r: usize, j: usize) -> Ns {
        self.paths[r].colls[j].end - self.off[r]
    }

    /// Rank `r`'s name `id` (empty for an id out of range).
    fn label(&self, r: usize, id: u32) -> Label {
        self.labels[r]
            .get(id as usize)
            .cloned()
            .unwrap_or_else(|| "".into())
    }

    /// The call that arrived last at `(r, j)`'s operation and its arrival:
    /// the latest, the lowest rank on a tie (the collectives analyzer's
    /// rule); the call itself when it matched nothing or ended before.
    fn last_arrival(&self, r: usize, j: usize) -> (usize, usize, Ns) {
        let own = (r, j, self.arrival(r, j));
        let Some(&op) = self.op_of.get(&(r, j)) else {
            return own;
        };
        let last = self.op_last[op];
        if self.ops[op].is_empty() {
            return own;
        }
        if last.2 <= self.coll_end(r, j) {
            last
        } else {
            own
        }
    }

    /// Every step id with the ranks' steps of that id, in order.
    pub fn steps(&self) -> Vec<StepParts> {
        let mut by: BTreeMap<(bool, i64), Vec<Part>> = BTreeMap::new();
        for (r, p) in self.paths.iter().enumerate() {
            for (k, s) in p.steps.iter().enumerate() {
                let key = (s.id.is_none(), s.id.unwrap_or(0));
                by.entry(key).or_default().push((r, k));
            }
        }
        by.into_iter()
            .map(|((none, id), parts)| ((!none).then_some(id), parts))
            .collect()
    }

    /// The path of one step; the steps before it cover the time up to
    /// `covered_to` (`Ns::MIN` for none).
    #[cfg(test)]
    pub fn path(&self, id: Option<i64>, parts: &[Part], covered_to: Ns) -> StepPath {
        self.path_in(&mut PathScratch::default(), id, parts, covered_to)
    }

    /// [`Solver::path`], its walk in `scratch`'s lists.
    pub fn path_in(
        &self,
        scratch: &mut PathScratch,
        id: Option<i64>,
        parts: &[Part],
        covered_to: Ns,
    ) -> StepPath {
        let start = parts
            .iter()
            .map(|&(r, k)| self.paths[r].steps[k].start - self.off[r])
            .min()
            .unwrap_or(0);
        let (end_rank, end_k, end) = parts
            .iter()
            .map(|&(r, k)| (r, k, self.paths[r].steps[k].end - self.off[r]))
            .max_by(|a, b| a.2.cmp(&b.2).then(b.0.cmp(&a.0)))
            .unwrap_or((0, 0, 0));
        let own_from = start.max(covered_to).min(end);
        let PathScratch { rev, chain } = scratch;
        rev.clear();
        let mut totals = StepTotals::new((start, own_from, end));
        // The walk goes back in time: what it adds is cut at the earliest
        // time it has reached (a step before's device tail may run on past
        // where the rank's next step began).
        let mut horizon = Ns::MAX;
        let total_sinks = self.sinks;
        let mut cur = (
            end_rank,
            end_k,
            self.paths[end_rank].sink_count(end_k).saturating_sub(1),
        );
        for _ in 0..=total_sinks {
            let (r, k, si) = cur;
            let Some(sink) = self.body(r, k).sinks.get(si) else {
                break;
            };
            // The chain in time order, reversed in place (it is packed:
            // read forwards only).
            let from = rev.len();
            chain.clear();
            chain.extend(sink.items.iter());
            rev.extend(chain.iter().map(|it| self.item(r, it)));
            let cut = cut_at(rev, from, horizon);
            rev[from..].reverse();
            if let Some(first) = rev[from..].last() {
                horizon = horizon.min(first.start);
            }
            self.add_chain(&mut totals, r, (sink, chain), &rev[from..], cut);
            let Some(j) = sink.source else {
                // The chain began at rank r's step start. Where r was
                // still in its step numbered before when this step began
                // across ranks, the path goes on through that step's end
                // (docs/tracestat.md#critical-path).
                let Some(before) = self.step_before_at(r, k, start) else {
                    break;
                };
                let own_start = (self.paths[r].steps[k].start - self.off[r]).min(horizon);
                let before_end = self.paths[r].steps[before].end - self.off[r];
                if own_start > before_end {
                    let between = PathItem {
                        rank: r,
                        kind: Kind::Idle,
                        name: BETWEEN_STEPS.into(),
                        start: before_end,
                        dur: own_start - before_end,
                    };
                    totals.add_clipped(&between);
                    rev.push(between);
                }
                horizon = own_start.min(before_end);
                cur = (
                    r,
                    before,
                    self.paths[r].sink_count(before).saturating_sub(1),
                );
                continue;
            };
            let j = j as usize;
            let (lr, lj, la) = self.last_arrival(r, j);
            let e = self.coll_end(r, j).min(horizon);
            if e > la {
                let transfer = PathItem {
                    rank: r,
                    kind: Kind::Communication,
                    name: self.label(r, self.paths[r].colls[j].name),
                    start: la,
                    dur: e - la,
                };
                totals.add_clipped(&transfer);
                rev.push(transfer);
            }
            horizon = horizon.min(la);
            match self.paths[lr].colls[lj].sink {
                Some((k2, s2)) => cur = (lr, k2 as usize, s2 as usize),
                None => break,
            }
        }
        rev.reverse();
        let items = clip(rev, start, end, end_rank);
        if let Some(first) = items.first().filter(|i| &*i.name == STEP_START) {
            totals.add_clipped(first);
        }
        let (mut totals, own) = totals.finish(self);
        // Each is checked against the time it covers; `None`: the same
        // totals over the same time.
        let checked = |t: &mut Totals, from_t: Ns| {
            let sum: Ns = t.values().map(|t| t.1).sum();
            if sum != end - from_t {
                // Not met on the traces tried: the clipped stretches are
                // the totals.
                t.clear();
                for it in &items {
                    add_clipped(t, it, (from_t, end));
                }
            }
        };
        let own = match own {
            None if own_from == start => None,
            own => {
                let mut own = own.unwrap_or_else(|| totals.clone());
                checked(&mut own, own_from);
                Some(own)
            }
        };
        checked(&mut totals, start);
        let own = own.filter(|own| *own != totals);
        let last_start = parts
            .iter()
            .map(|&(r, k)| self.paths[r].steps[k].start - self.off[r])
            .max()
            .unwrap_or(start);
        StepPath {
            id,
            start,
            end,
            end_rank,
            last_start,
            items: join(items, MAX_STEP_ITEMS),
            own_totals: own,
            totals,
            what_if: Vec::new(),
        }
    }

    /// A chain's time per kind and name, exact (before any joining), by
    /// the rank's name ids: a label is looked up once per name and step
    /// (`Acc::labelled`), not once per chain.
    fn add_exact(&self, acc: &mut Acc, r: usize, (sink, chain): (&Sink, &[Item])) {
        let mut add = |kind, name, count, dur| {
            let t = acc.ids.entry((kind, r as u32, name)).or_default();
            t.0 += count;
            t.1 += dur;
        };
        if sink.totals.is_empty() {
            for i in chain {
                add(i.kind, i.name, 1, i.dur);
            }
        } else {
            for &(kind, name, count, dur) in &sink.totals {
                add(kind, name, count, dur);
            }
        }
    }

    /// A chain (`chain`: its sink's stretches as decoded; `items`: them
    /// in the path, `cut` where the walk cut it) in the step's totals, whole and from the step's own part
    /// on: its exact times where it lies inside the window, else its
    /// stretches' parts in it (a joined stretch counting as one over the
    /// whole step, shared among its names from the own part on).
    fn add_chain(
        &self,
        t: &mut StepTotals,
        r: usize,
        (sink, chain): (&Sink, &[Item]),
        items: &[PathItem],
        cut: bool,
    ) {
        let (start, own_from, end) = t.window;
        let earliest = items.last().map(|it| it.start);
        let inside = |from: Ns| !cut && earliest.is_none_or(|e| e >= from);
        if inside(own_from) {
            // The same in both: counted once.
            self.add_exact(&mut t.both, r, (sink, chain));
            return;
        }
        if inside(start) {
            self.add_exact(&mut t.all_only, r, (sink, chain));
        } else {
            for it in items {
                add_clipped(&mut t.all_only.labels, it, (start, end));
            }
        }
        // Latest first: a chain that ended before the own part has none
        // of it (most chains of a step before).
        let latest_end = items.first().map_or(Ns::MIN, |it| it.start + it.dur);
        if latest_end <= own_from {
            return;
        }
        if !sink.totals.is_empty() {
            self.add_joined_part(&mut t.own_only.labels, r, sink, items, (own_from, end));
        } else {
            for it in items {
                add_clipped(&mut t.own_only.labels, it, (own_from, end));
            }
        }
    }

    /// The part in `window` of a joined chain (`items`: its stretches in
    /// the path), by name: its whole stretches as they are, the time of its
    /// joined ones shared among the names they hold (the chain's exact
    /// times less its whole stretches) in proportion, the rounding's rest to
    /// the longest; rather than joined stretches named by most of their
    /// time (docs/tracestat.md#critical-path).
    fn add_joined_part(
        &self,
        totals: &mut Totals,
        r: usize,
        sink: &super::graph::Sink,
        items: &[PathItem],
        window: (Ns, Ns),
    ) {
        // In order: the rounding's rest goes to the last longest.
        let mut joined: BTreeMap<(Kind, Label), (u64, Ns)> = BTreeMap::new();
        for &(kind, name, count, dur) in &sink.totals {
            joined.insert((kind, self.label(r, name)), (count, dur));
        }
        for it in sink.items.iter() {
            if let Some(t) = joined.get_mut(&(it.kind, self.label(r, it.name))) {
                t.0 = t.0.saturating_sub(1);
                t.1 -= it.dur;
            }
        }
        // A stretch with a name of the chain's exact times is whole; a
        // joined one has a name of its own (`NAME (most of N stretches)`).
        let whole = |it: &PathItem| joined.contains_key(&(it.kind, it.name.clone()));
        let mut part: Ns = 0;
        for it in items {
            if whole(it) {
                add_clipped(totals, it, window);
            } else {
                part += clipped_len(it, window);
            }
        }
        if part <= 0 {
            return;
        }
        let pool: Ns = joined.values().map(|t| t.1.max(0)).sum();
        if pool <= 0 || joined.values().any(|t| t.1 < 0) {
            // Not met on the traces tried: the joined stretches as named.
            for it in items.iter().filter(|it| !whole(it)) {
                add_clipped(totals, it, window);
            }
            return;
        }
        let scale = |x: Ns| (x as i128 * part as i128 / pool as i128) as Ns;
        let mut given: Ns = 0;
        for (key, &(count, dur)) in &joined {
            let d = scale(dur);
            if d > 0 {
                let t = totals.entry(key.clone()).or_default();
                t.0 += (scale(count as Ns) as u64).max(1);
                t.1 += d;
                given += d;
            }
        }
        let longest = joined
            .iter()
            .max_by_key(|(_, t)| t.1)
            .map(|(k, _)| k.clone());
        if let (Some(key), true) = (longest, part > given) {
            let t = totals.entry(key).or_default();
            t.0 = t.0.max(1);
            t.1 += part - given;
        }
    }

    fn item(&self, r: usize, it: &Item) -> PathItem {
        PathItem {
            rank: r,
            kind: it.kind,
            name: self.label(r, it.name),
            start: it.start - self.off[r],
            dur: it.dur,
        }
    }

    /// What a step's replay needs under any rule, found once for all the
    /// rules it is replayed with: its sinks in time order, and where the
    /// source of each of their chains takes its time from.
    pub fn prepare(&self, parts: &[Part]) -> StepReplay {
        // Each part's sinks' place in the values.
        let mut first = Vec::with_capacity(parts.len() + 1);
        first.push(0);
        for &(r, k) in parts {
            first.push(first[first.len() - 1] + self.body(r, k).sinks.len());
        }
        let index: HashMap<Part, usize> = parts.iter().enumerate().map(|(i, &p)| (p, i)).collect();
        let mut order: Vec<(Ns, usize, usize)> = Vec::new();
        for (i, &(r, k)) in parts.iter().enumerate() {
            for (si, s) in self.body(r, k).sinks.iter().enumerate() {
                order.push((s.time - self.off[r], i, si));
            }
        }
        order.sort_unstable();
        // Where call `(rr, jj)`'s arrival comes from in the replay.
        let arrival_now = |rr: usize, jj: usize| -> Arrival {
            let replayed = self.paths[rr].colls[jj]
                .sink
                .and_then(|(k, s)| Some(first[*index.get(&(rr, k as usize))?] + s as usize));
            match replayed {
                Some(at) => Arrival::Replayed(at),
                None => Arrival::Outside {
                    call: (rr, jj),
                    recorded: self.arrival(rr, jj),
                },
            }
        };
        let mut chains = Vec::new();
        let mut lens = Vec::new();
        let mut entries = Vec::new();
        let mut arrivals = Vec::new();
        let mut groups: Vec<ArrivalGroup> = Vec::new();
        let mut group_at: HashMap<usize, usize> = HashMap::default();
        // Part `i`'s chains of lengths `sink_lens`, planned: where each
        // starts, and its lengths.
        let mut plan = |i: usize, sink_lens: &SinkLens| -> (usize, usize) {
            let (r, k) = parts[i];
            let step = &self.paths[r].steps[k];
            let from = chains.len();
            entries.clear();
            sink_lens.decode_into(&mut lens, &mut entries);
            for &(src, at_lens, _) in &entries {
                let base = match src {
                    None => Base::Start(step.start - self.off[r]),
                    Some(super::graph::BEFORE) => Base::Before(step.start - self.off[r]),
                    Some(j) => {
                        // The end of call `(r, j)`: the last (replayed)
                        // arrival of its operation plus the rank's
                        // transfer.
                        let j = j as usize;
                        let (lr, lj, la) = self.last_arrival(r, j);
                        let waits_for = if (lr, lj) == (r, j) {
                            Arrivals::Own(arrival_now(r, j))
                        } else {
                            let op = self.op_of[&(r, j)];
                            let g = *group_at.entry(op).or_insert_with(|| {
                                let at = arrivals.len();
                                let calls = self.ops[op].iter();
                                arrivals.extend(calls.map(|&(rr, jj)| arrival_now(rr, jj)));
                                groups.push(ArrivalGroup {
                                    arrivals: (at, arrivals.len()),
                                });
                                groups.len() - 1
                            });
                            Arrivals::Group(g)
                        };
                        Base::Coll {
                            transfer: self.coll_end(r, j) - la,
                            last: la,
                            arrivals: waits_for,
                            floor: step.start - self.off[r],
                        }
                    }
                };
                chains.push((base, at_lens));
            }
            (from, chains.len())
        };
        let mut sinks = Vec::with_capacity(order.len());
        for &(_, i, si) in &order {
            let (r, k) = parts[i];
            let sink = &self.body(r, k).sinks[si];
            sinks.push(PlannedSink {
                at: first[i] + si,
                part: i,
                rank: r,
                chains: plan(i, &sink.lens),
                recorded: sink.time - self.off[r],
            });
        }
        // Each part's host range end, replayed after its sinks.
        let mut host_ends = Vec::new();
        for (i, &(r, k)) in parts.iter().enumerate() {
            if let Some((time, host_lens)) = &self.body(r, k).host_end {
                host_ends.push(PlannedSink {
                    at: usize::MAX,
                    part: i,
                    rank: r,
                    chains: plan(i, host_lens),
                    recorded: time - self.off[r],
                });
            }
        }
        let (member_from, group_of) = group_members(first[first.len() - 1], &groups, &arrivals);
        let own_calls = self.own_calls(parts, &first);
        let bounds = (parts.iter())
            .map(|&(r, k)| {
                let steps = &self.paths[r].steps;
                let step = &steps[k];
                // The rank's step before is the one before it in number.
                let follows = k.checked_sub(1).is_some_and(|b| {
                    (steps[b].id.zip(step.id)).is_some_and(|(b, s)| b.checked_add(1) == Some(s))
                });
                (step.start - self.off[r], step.end - self.off[r], follows)
            })
            .collect();
        StepReplay {
            parts: parts.to_vec(),
            first,
            sinks,
            chains,
            lens,
            arrivals,
            groups,
            member_from,
            group_of,
            own_calls,
            bounds,
            host_ends,
        }
    }

    /// The collective calls of `parts` that are sinks, with their values'
    /// places (`first`: each part's first value).
    fn own_calls(&self, parts: &[Part], first: &[usize]) -> Vec<((usize, usize), usize)> {
        let mut out = Vec::new();
        for (i, &(r, k)) in parts.iter().enumerate() {
            let calls = &self.step_calls[r];
            let k = k as u32;
            let from = calls.partition_point(|c| c.0 < k);
            for &(_, j) in calls[from..].iter().take_while(|c| c.0 == k) {
                let j = j as usize;
                if let Some((_, s)) = self.paths[r].colls[j].sink {
                    out.push(((r, j), first[i] + s as usize));
                }
            }
        }
        out
    }

    /// A prepared step replayed with the durations of lens slot `slot`
    /// (0: as recorded; `2 + i`: rule `i`) under `rule`, the rule of that
    /// slot: its new start and end. Arrivals and moves of earlier steps
    /// come from `carried`, which then holds this step's too.
    pub fn replay_prepared(
        &self,
        plan: &StepReplay,
        slot: usize,
        rule: Option<&Rule>,
        carried: &mut Carried,
    ) -> (Ns, Ns) {
        // rank:N=median: rank N's kernels scaled to the median rank's time.
        let median_rule = matches!(rule.map(|r| &r.target), Some(Target::RankMedian(_)));
        let factor = if median_rule {
            self.median_factor(&plan.parts, rule)
        } else {
            None
        };
        // A comm rule changes the transfers.
        let comm = match rule {
            Some(Rule {
                target: Target::Comm,
                change,
                ..
            }) => Some(*change),
            _ => None,
        };
        const UNSET: Ns = Ns::MIN / 4;
        let mut scratch = std::mem::take(&mut carried.scratch);
        let ReplayScratch {
            value,
            shifts,
            latest,
            host_moved,
        } = &mut scratch;
        value.clear();
        value.resize(plan.first[plan.first.len() - 1], UNSET);
        // Per part, how far its host start and the device work before it
        // moved: as the host range and the end of the rank's step before
        // moved in its replay (docs/tracestat.md#what-if).
        let before = |shift: &[Option<(usize, Ns)>], (r, k): Part| match shift[r] {
            Some((b, d)) if b + 1 == k => d,
            _ => 0,
        };
        shifts.clear();
        shifts.extend(
            (plan.parts.iter().zip(&plan.bounds)).map(|(&p, &(_, _, follows))| match follows {
                true => (
                    before(&carried.host_shift, p),
                    before(&carried.end_shift, p),
                ),
                false => (0, 0),
            }),
        );
        // Each group's latest arrival, `None` once one of them changed.
        latest.clear();
        latest.resize(plan.groups.len(), None);
        let read = |value: &[Ns], a: Arrival| match a {
            Arrival::Replayed(at) => value[at],
            Arrival::Outside { call, recorded } => carried.get(call).unwrap_or(recorded),
        };
        // A sink's time: the latest of its chains, each from its source's
        // (replayed) time.
        let time_of = |sink: &PlannedSink, value: &[Ns], latest: &mut [Option<Ns>]| -> Ns {
            if sink.chains.0 == sink.chains.1 {
                return sink.recorded + shifts[sink.part].0;
            }
            let (moved, device_moved) = shifts[sink.part];
            let mut best = UNSET;
            for &(base, at_lens) in &plan.chains[sink.chains.0..sink.chains.1] {
                let lens = &plan.lens[at_lens..];
                let base = match base {
                    Base::Start(t) => t + moved,
                    Base::Before(t) => t + device_moved,
                    Base::Coll {
                        transfer,
                        last,
                        arrivals,
                        floor,
                    } => {
                        let transfer = comm.map_or(transfer, |c| c.apply(transfer));
                        let arrived = match arrivals {
                            Arrivals::Own(a) => read(value, a),
                            Arrivals::Group(g) => *latest[g].get_or_insert_with(|| {
                                let (a, b) = plan.groups[g].arrivals;
                                plan.arrivals[a..b]
                                    .iter()
                                    .map(|&x| read(value, x))
                                    .max()
                                    .unwrap_or(last)
                            }),
                        };
                        (arrived + transfer).max(floor + moved)
                    }
                };
                let len = match factor {
                    // The chain recorded with its kernel part scaled, or
                    // the chain without kernels, whichever is longer
                    // (docs/tracestat.md#what-if).
                    Some((n, f)) if n == sink.rank => {
                        let dev = lens[1] as f64;
                        let scaled = (f * dev + (lens[0] as f64 - dev)).round() as Ns;
                        scaled.max(lens[slot])
                    }
                    _ if median_rule => lens[0],
                    _ => lens[slot],
                };
                best = best.max(base + len);
            }
            best
        };
        for _pass in 0..8 {
            let mut changed = false;
            for sink in &plan.sinks {
                let best = time_of(sink, value, latest);
                if value[sink.at] != best {
                    value[sink.at] = best;
                    changed = true;
                    let (a, b) = (plan.member_from[sink.at], plan.member_from[sink.at + 1]);
                    for &g in &plan.group_of[a..b] {
                        latest[g as usize] = None;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        host_moved.clear();
        host_moved.extend(
            (plan.host_ends.iter()).map(|h| (h.part, time_of(h, value, latest) - h.recorded)),
        );
        // Each part's last sink: its step's end; the step from its ranks'
        // earliest (moved) start to their latest end.
        let mut start = Ns::MAX;
        let mut end = Ns::MIN;
        for (i, (&(r, k), &(s, e, _))) in plan.parts.iter().zip(&plan.bounds).enumerate() {
            start = start.min(s + shifts[i].0);
            let (a, b) = (plan.first[i], plan.first[i + 1]);
            if b > a && value[b - 1] != UNSET {
                end = end.max(value[b - 1]);
                carried.end_shift[r] = Some((k, value[b - 1] - e));
            }
            carried.host_shift[r] = None;
        }
        for &(i, d) in host_moved.iter() {
            let (r, k) = plan.parts[i];
            carried.host_shift[r] = Some((k, d));
        }
        for &(call, at) in &plan.own_calls {
            if value[at] != UNSET {
                carried.set(call, value[at]);
            }
        }
        carried.scratch = scratch;
        if start == Ns::MAX {
            return (0, 0);
        }
        (start, end.max(start))
    }

    /// Rank `r`'s step numbered before its step `k`, when step `k` began
    /// after `start` (the step's start across ranks) and that step ended
    /// after it: the step whose end rank `r`'s step `k` waited for.
    fn step_before_at(&self, r: usize, k: usize, start: Ns) -> Option<usize> {
        let steps = &self.paths[r].steps;
        let step = &steps[k];
        let before = step.id?.checked_sub(1)?;
        if step.start - self.off[r] <= start {
            return None;
        }
        let at = steps[..k].iter().rposition(|s| s.id == Some(before))?;
        let s = &steps[at];
        (s.end - self.off[r] > start && self.paths[r].sink_count(at) > 0).then_some(at)
    }

    /// `(rank index, factor)` of a `rank:N=median` rule in this step: the
    /// median kernel time of the step's other ranks over rank N's, the
    /// median the imbalance finding measures a rank against (with rank N
    /// among them, two ranks met halfway: docs/tracestat.md#what-if), at
    /// most 1: a rank whose kernels took no longer than the others' is left
    /// as it is, not slowed down to the median. `None` in a step rank N is
    /// alone in.
    fn median_factor(&self, parts: &[Part], rule: Option<&Rule>) -> Option<(usize, f64)> {
        let Some(Target::RankMedian(n)) = rule.map(|r| &r.target) else {
            return None;
        };
        let &(who, k) = parts
            .iter()
            .find(|&&(r, _)| self.rank_ids.get(r).copied().flatten() == Some(*n))?;
        let mut others: Vec<f64> = parts
            .iter()
            .filter(|&&(r, _)| r != who)
            .map(|&(r, k)| self.paths[r].steps[k].kernel_ns as f64)
            .collect();
        if others.is_empty() {
            return None;
        }
        let own = self.paths[who].steps[k].kernel_ns as f64;
        let median = crate::analyzers::median(&mut others);
        (own > 0.0).then_some((who, (median / own).min(1.0)))
    }
}

/// For each of `values` values, the groups it is a replayed arrival of, as
/// `(member_from, group_of)` ([`StepReplay`]).
fn group_members(
    values: usize,
    groups: &[ArrivalGroup],
    arrivals: &[Arrival],
) -> (Vec<usize>, Vec<u32>) {
    let mut pairs: Vec<(usize, u32)> = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let (a, b) = group.arrivals;
        for arrival in &arrivals[a..b] {
            if let Arrival::Replayed(at) = *arrival {
                pairs.push((at, g as u32));
            }
        }
    }
    pairs.sort_unstable();
    let mut member_from = vec![0usize; values + 1];
    for &(at, _) in &pairs {
        member_from[at + 1] += 1;
    }
    for v in 0..values {
        member_from[v + 1] += member_from[v];
    }
    (member_from, pairs.into_iter().map(|(_, g)| g).collect())
}

/// Stretches a step's path keeps at most, besides one per change of rank.
pub const MAX_STEP_ITEMS: usize = 4096;

/// A path of more than `max` stretches as about that many (never fewer
/// than its changes of rank): neighbours on one rank of one kind joined
/// first, then runs on one rank; a joined stretch is named by the name
/// with most time in it (`NAME (most of N stretches)`) and takes the kind
/// with most time in it. The path
/// still tiles its step; the totals per name are kept apart.
pub fn join(items: Vec<PathItem>, max: usize) -> Vec<PathItem> {
    if items.len() <= max {
        return items;
    }
    // (joined item, stretches in it, time per kind, time per name)
    type Run = (PathItem, u64, [Ns; 7], BTreeMap<Label, Ns>);
    let mut runs: Vec<Run> = Vec::new();
    for it in items {
        let k = Kind::ALL.iter().position(|x| *x == it.kind).unwrap_or(6);
        match runs.last_mut() {
            Some((l, n, t, per_name)) if l.rank == it.rank && l.kind == it.kind => {
                l.dur = it.start + it.dur - l.start;
                *n += 1;
                t[k] += it.dur;
                *per_name.entry(it.name.clone()).or_default() += it.dur;
            }
            _ => {
                let mut t = [0; 7];
                t[k] = it.dur;
                let per_name = BTreeMap::from([(it.name.clone(), it.dur)]);
                runs.push((it, 1, t, per_name));
            }
        }
    }
    if runs.len() > max {
        let per = runs.len().div_ceil(max);
        let mut out: Vec<Run> = Vec::new();
        let mut in_group = 0;
        for (it, n, t, per_name) in runs {
            match out.last_mut() {
                Some((l, ln, lt, lnames)) if l.rank == it.rank && in_group < per => {
                    l.dur = it.start + it.dur - l.start;
                    *ln += n;
                    for (a, b) in lt.iter_mut().zip(t) {
                        *a += b;
                    }
                    for (name, d) in per_name {
                        *lnames.entry(name).or_default() += d;
                    }
                    in_group += 1;
                }
                _ => {
                    out.push((it, n, t, per_name));
                    in_group = 1;
                }
            }
        }
        runs = out;
    }
    runs.into_iter()
        .map(|(mut it, n, t, per_name)| {
            if n > 1 {
                let k = (0..7)
                    .max_by_key(|&k| (t[k], std::cmp::Reverse(k)))
                    .unwrap_or(6);
                it.kind = Kind::ALL[k];
                // Ties go to the first name in order: deterministic.
                let most = per_name
                    .iter()
                    .max_by_key(|(name, &d)| (d, std::cmp::Reverse(&**name)))
                    .map_or("", |(name, _)| &**name);
                it.name = super::graph::joined_label(most, n).into();
            }
            it
        })
        .collect()
}

/// The path's first stretch when the step had not begun on the rank the
/// path reaches (docs/tracestat.md#critical-path).
const STEP_START: &str = "(step start)";
/// The time between a rank's step and its step numbered before, on a path
/// that goes on through the step before (its marker ranges apart).
const BETWEEN_STEPS: &str = "(between steps)";

/// Cuts the chain `items[from..]` (in time order) at `horizon`: what
/// starts there or later goes, what runs past it ends there. Whether
/// anything was cut.
fn cut_at(items: &mut Vec<PathItem>, from: usize, horizon: Ns) -> bool {
    let keep = from + items[from..].partition_point(|it| it.start < horizon);
    let mut cut = keep < items.len();
    items.truncate(keep);
    for it in &mut items[from..] {
        if it.start + it.dur > horizon {
            it.dur = horizon - it.start;
            cut = true;
        }
    }
    cut
}

/// A step's path time per kind and name: `(stretches, time)`.
/// Path time per kind and name: `(stretches, time)`. Hashed, not
/// ordered: every reader sums it or looks names up, and a step adds to it
/// once per stretch, which an ordered map keyed by the names' text made a
/// twentieth of the solve's time (docs/tracestat.md#scale).
pub type Totals = HashMap<(Kind, Label), (u64, Ns)>;

/// A step's path time per kind and name over the whole step and from its
/// own part on (`window`: start, own part's start, end): what counts the
/// same in both is counted once, in `both`.
struct StepTotals {
    window: (Ns, Ns, Ns),
    both: Acc,
    all_only: Acc,
    own_only: Acc,
}

/// Path time per kind and name: by `(kind, rank, name id)` for exact
/// chains (cheap to add), by label for stretches.
#[derive(Default)]
struct Acc {
    ids: HashMap<(Kind, u32, u32), (u64, Ns)>,
    labels: Totals,
}

impl Acc {
    /// Everything by label.
    fn labelled(self, solver: &Solver<'_>) -> Totals {
        let mut out = self.labels;
        // Grown once: each growth hashes every name again.
        out.reserve(self.ids.len());
        for ((kind, r, name), (c, d)) in self.ids {
            let t = out
                .entry((kind, solver.label(r as usize, name)))
                .or_default();
            t.0 += c;
            t.1 += d;
        }
        out
    }
}

impl StepTotals {
    fn new(window: (Ns, Ns, Ns)) -> StepTotals {
        StepTotals {
            window,
            // Room for a step's usual names at once (about 24 on the
            // bench's ranks): each growth hashes every key again.
            both: Acc {
                ids: HashMap::with_capacity_and_hasher(32, Default::default()),
                labels: Totals::default(),
            },
            all_only: Acc::default(),
            own_only: Acc::default(),
        }
    }

    /// A stretch's parts in the step and in its own part.
    fn add_clipped(&mut self, it: &PathItem) {
        let (start, own_from, end) = self.window;
        if it.start >= own_from {
            add_clipped(&mut self.both.labels, it, (start, end));
        } else {
            add_clipped(&mut self.all_only.labels, it, (start, end));
            add_clipped(&mut self.own_only.labels, it, (own_from, end));
        }
    }

    /// The totals over the whole step and over its own part; `None` for
    /// the latter where they are the same (nothing counted in one only:
    /// most steps), which spares a copy and a comparison.
    fn finish(self, solver: &Solver<'_>) -> (Totals, Option<Totals>) {
        let merged = |mut into: Totals, from: Totals| {
            into.reserve(from.len());
            for (k, (c, d)) in from {
                let t = into.entry(k).or_default();
                t.0 += c;
                t.1 += d;
            }
            into
        };
        let both = self.both.labelled(solver);
        let (all_only, own_only) = (
            self.all_only.labelled(solver),
            self.own_only.labelled(solver),
        );
        if all_only.is_empty() && own_only.is_empty() {
            return (both, None);
        }
        let all = merged(both.clone(), all_only);
        (all, Some(merged(both, own_only)))
    }
}

/// Stretch `it`'s length inside `start..end`.
fn clipped_len(it: &PathItem, (start, end): (Ns, Ns)) -> Ns {
    ((it.start + it.dur).min(end) - it.start.max(start)).max(0)
}

/// Stretch `it`'s part in the step `start..end`, counted in `totals`.
fn add_clipped(totals: &mut Totals, it: &PathItem, (start, end): (Ns, Ns)) {
    let (s, e) = (it.start.max(start), (it.start + it.dur).min(end));
    if e > s {
        let t = totals.entry((it.kind, it.name.clone())).or_default();
        t.0 += 1;
        t.1 += e - s;
    }
}

/// Items cut to `start..end`, with the time before the first one (the
/// step had not begun on the rank the path reaches) as idle.
fn clip(out: &mut Vec<PathItem>, start: Ns, end: Ns, end_rank: usize) -> Vec<PathItem> {
    // In the walk's list, then moved to one of its length, as it is kept
    // for the tables: the room the walk needs, held by every step, took
    // 55 MB of the bench's 8 ranks (docs/tracestat.md#memory).
    out.retain_mut(|it| {
        let (s, e) = (it.start.max(start), (it.start + it.dur).min(end));
        it.start = s;
        it.dur = e - s;
        e > s
    });
    let first = out.first().map_or(end, |i| i.start);
    if first > start {
        let rank = out.first().map_or(end_rank, |i| i.rank);
        out.insert(
            0,
            PathItem {
                rank,
                kind: Kind::Idle,
                name: STEP_START.into(),
                start,
                dur: first - start,
            },
        );
    }
    // Moved out at its length; the walk's list keeps its room.
    let mut kept = Vec::with_capacity(out.len());
    kept.append(out);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzers::critical_path::graph::{CollPoint, Sink, StepGraph};
    use crate::analyzers::critical_path::packed::{ChainItems, SinkLens};

    /// Rank `r` of `n`: one step from 0 to 60 ns with one collective; it
    /// arrives at `10 + r`, the call ends 5 ns after the last arrival, and
    /// its step ends 60 ns after 0 through the chain from that end.
    fn rank(r: usize, n: usize) -> RankPath {
        let arrival = 10 + r as Ns;
        let end = 10 + (n as Ns - 1) + 5;
        let sink = |time: Ns, source: Option<u32>, len: Ns| Sink {
            time,
            source,
            items: ChainItems::new(&[]),
            totals: Vec::new(),
            lens: SinkLens::from(vec![(source, vec![len, 0, len])]),
        };
        RankPath {
            names: vec![Label::from("allreduce")],
            steps: vec![StepGraph {
                id: Some(1),
                start: 0,
                end: 60,
                sinks: vec![sink(arrival, None, arrival), sink(60, Some(0), 60 - end)],
                kernel_ns: 0,
                host_end: None,
            }],
            colls: vec![CollPoint {
                name: 0,
                arrival,
                end,
                sink: Some((0, 0)),
            }],
            queue_depth: Vec::new(),
            spill: None,
        }
    }

    /// Every rank's end of one collective waits for the same arrivals:
    /// they are held once per operation, not once per rank (which grew
    /// with the square of the ranks), and the replay reads them right.
    #[test]
    fn a_collectives_arrivals_are_held_once_for_all_its_ranks() {
        let n = 64;
        let paths: Vec<RankPath> = (0..n).map(|r| rank(r, n)).collect();
        let calls: Vec<(usize, usize)> = (0..n).map(|r| (r, 0)).collect();
        let op_of = calls.iter().map(|&c| (c, 0)).collect();
        let off = vec![0; n];
        let solver = Solver::new(
            paths.iter().collect(),
            &off,
            (op_of, vec![calls.clone()]),
            (0..n as u32).map(Some).collect(),
        );
        assert_eq!(solver.last_arrival(3, 0), (n - 1, 0, 10 + n as Ns - 1));
        let plan = solver.prepare(&calls);
        assert_eq!(plan.groups.len(), 1);
        assert_eq!(plan.arrivals.len(), n);
        // The recorded run, then comm=0: the 5 ns transfer off every
        // rank's end.
        let length = |(s, e): (Ns, Ns)| e - s;
        let replay =
            |slot, rule| solver.replay_prepared(&plan, slot, rule, &mut Carried::new(&solver));
        assert_eq!(length(replay(0, None)), 60);
        let comm = super::super::rules::parse_rule("comm=0").unwrap();
        assert_eq!(length(replay(2, Some(&comm))), 55);
    }

    /// Two ranks of two steps, no collective. Rank 1's step 1 ends at
    /// `end1` through host work `a` (0..60) and a kernel `k` (60..end1);
    /// its step 2 is host work `b` from 135 to 200. Rank 0's steps are
    /// 0..100 and 100..150.
    fn two_steps(end1: Ns) -> Vec<RankPath> {
        let item = |start: Ns, end: Ns, kind, name| Item {
            start,
            dur: end - start,
            kind,
            name,
        };
        let step = |id, start, end, items: &[Item]| StepGraph {
            id: Some(id),
            start,
            end,
            sinks: vec![Sink {
                time: end,
                source: None,
                items: ChainItems::new(items),
                totals: Vec::new(),
                lens: SinkLens::default(),
            }],
            kernel_ns: 0,
            host_end: None,
        };
        let names = ["a", "k", "b"].map(Label::from).to_vec();
        let rank0 = RankPath {
            names: names.clone(),
            steps: vec![
                step(1, 0, 100, &[item(0, 100, Kind::Host, 0)]),
                step(2, 100, 150, &[item(100, 150, Kind::Host, 2)]),
            ],
            colls: Vec::new(),
            queue_depth: Vec::new(),
            spill: None,
        };
        let a = item(0, 60, Kind::Host, 0);
        let k = item(60, end1, Kind::Compute, 1);
        let rank1 = RankPath {
            names,
            steps: vec![
                step(1, 0, end1, &[a, k]),
                step(2, 135, 200, &[item(135, 200, Kind::Host, 2)]),
            ],
            colls: Vec::new(),
            queue_depth: Vec::new(),
            spill: None,
        };
        vec![rank0, rank1]
    }

    /// A joined chain of 100 ns: `a` 60 ns in 3 stretches, `b` 40 in 2.
    /// Joining kept one 30 ns stretch of `a` whole (0..30) and joined the
    /// rest (30..100: `a` 30, `b` 40) as one stretch named after `b`. Its
    /// part from 65 on (35 ns of the joined stretch) is shared as the
    /// joined stretch holds its names: `a` 35 x 30/70 = 15, `b` 35 x
    /// 40/70 = 20; from 10 on, the whole stretch's 20 ns go to `a` too.
    #[test]
    fn a_joined_chain_shares_its_part_among_its_names() {
        let names = ["a", "b", "b (most of 4 stretches)"]
            .map(Label::from)
            .to_vec();
        let items = [
            Item {
                start: 0,
                dur: 30,
                kind: Kind::Host,
                name: 0,
            },
            Item {
                start: 30,
                dur: 70,
                kind: Kind::Host,
                name: 2,
            },
        ];
        let sink = Sink {
            time: 100,
            source: None,
            items: ChainItems::new(&items),
            totals: vec![(Kind::Host, 0, 3, 60), (Kind::Host, 1, 2, 40)],
            lens: SinkLens::default(),
        };
        let rank = RankPath {
            names,
            steps: vec![StepGraph {
                id: Some(1),
                start: 0,
                end: 100,
                sinks: vec![sink],
                kernel_ns: 0,
                host_end: None,
            }],
            colls: Vec::new(),
            queue_depth: Vec::new(),
            spill: None,
        };
        let off = vec![0];
        let solver = Solver::new(
            vec![&rank],
            &off,
            (HashMap::default(), Vec::new()),
            vec![Some(0)],
        );
        let sink = &rank.steps[0].sinks[0];
        let path_items: Vec<PathItem> = items.iter().map(|it| solver.item(0, it)).collect();
        let share_to = |from: Ns, to: Ns| {
            let mut t = Totals::default();
            solver.add_joined_part(&mut t, 0, sink, &path_items, (from, to));
            let mut t: Vec<_> = (t.into_iter())
                .map(|((k, n), v)| (k, n.to_string(), v))
                .collect();
            t.sort();
            t
        };
        let share = |from: Ns| share_to(from, 100);
        let host = Kind::Host;
        // A window with none of the joined stretch: the whole one alone.
        assert_eq!(share_to(5, 25), vec![(host, "a".to_string(), (1, 20))]);
        assert_eq!(
            share(65),
            vec![
                (host, "a".to_string(), (1, 15)),
                (host, "b".to_string(), (1, 20))
            ]
        );
        assert_eq!(
            share(10),
            vec![
                (host, "a".to_string(), (3, 20 + 30)),
                (host, "b".to_string(), (2, 40))
            ]
        );
    }

    /// The solver of two ranks numbered 0 and 1 without collectives.
    fn two_ranks_solver<'a>(paths: &'a [RankPath], off: &'a [Ns]) -> Solver<'a> {
        Solver::new(
            paths.iter().collect(),
            off,
            (HashMap::default(), Vec::new()),
            vec![Some(0), Some(1)],
        )
    }

    /// `(rank, kind, name, start, dur)` of a stretch of a path.
    type Stretch = (usize, Kind, String, Ns, Ns);

    /// Step 2's path and its totals.
    fn path_of(paths: &[RankPath]) -> (Vec<Stretch>, Totals) {
        let off = vec![0; 2];
        let solver = two_ranks_solver(paths, &off);
        let p = solver.path(Some(2), &[(0, 1), (1, 1)], Ns::MIN);
        let items = p
            .items
            .iter()
            .map(|i| (i.rank, i.kind, i.name.to_string(), i.start, i.dur))
            .collect();
        (items, p.totals)
    }

    /// Ranks read from a partial share one label per name, whatever its
    /// number on each rank, and so do the solver's labels.
    #[test]
    fn ranks_share_one_label_per_name() {
        let mut written = two_steps(130);
        written[1].names = ["b", "k", "c"].map(Label::from).to_vec();
        let paths: Vec<RankPath> = (written.iter())
            .map(|p| serde_json::from_value(serde_json::to_value(p).unwrap()).unwrap())
            .collect();
        let off = vec![0; 2];
        let solver = two_ranks_solver(&paths, &off);
        let [r0, r1] = [&solver.labels[0], &solver.labels[1]];
        assert!(std::sync::Arc::ptr_eq(&r0[1], &r1[1]), "k");
        assert!(std::sync::Arc::ptr_eq(&r0[2], &r1[0]), "b");
        assert_eq!((&*r0[0], &*r1[2]), ("a", "c"));
    }

    /// Step 2 across ranks starts at 100 (rank 0) and ends at 200 (rank
    /// 1); rank 1 began it at 135, still in its step 1 until then: the
    /// path goes on through the end of rank 1's step 1 rather than naming
    /// 100..135 idle (docs/tracestat.md#critical-path).
    #[test]
    fn a_path_goes_on_through_the_step_before_of_a_rank_still_in_it() {
        // Step 1 ends at 130: the kernel from 100 (the step's start) to
        // 130, the 5 ns between the steps, then step 2's own work.
        let (items, totals) = path_of(&two_steps(130));
        let want = |s: &str| s.to_string();
        assert_eq!(
            items,
            [
                (1, Kind::Compute, want("k"), 100, 30),
                (1, Kind::Idle, want(BETWEEN_STEPS), 130, 5),
                (1, Kind::Host, want("b"), 135, 65),
            ]
        );
        let t = |kind, name: &str| totals.get(&(kind, Label::from(name))).copied();
        assert_eq!(t(Kind::Compute, "k"), Some((1, 30)));
        assert_eq!(t(Kind::Idle, BETWEEN_STEPS), Some((1, 5)));
        assert_eq!(t(Kind::Host, "b"), Some((1, 65)));
        assert_eq!(t(Kind::Host, "a"), None);
        assert_eq!(totals.values().map(|t| t.1).sum::<Ns>(), 100);
        // Step 1's kernel runs on to 140, past step 2's start at 135: the
        // path takes it up to 135 only, and nothing twice.
        let (items, totals) = path_of(&two_steps(140));
        assert_eq!(
            items,
            [
                (1, Kind::Compute, want("k"), 100, 35),
                (1, Kind::Host, want("b"), 135, 65),
            ]
        );
        assert_eq!(totals.values().map(|t| t.1).sum::<Ns>(), 100);
    }
}
