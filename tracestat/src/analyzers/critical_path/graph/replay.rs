//! The what-if replay of a step (docs/tracestat.md#what-if): each node's
//! longest chains from the latest sources, under every rule, in the order
//! every link goes forward in.

use super::*;

/// The what-if replay of one step: per node, the longest chain from each
/// of the latest sources, under every rule. An entry's lengths are
/// `[recorded, kernel part, rule...]`, `width` of them, in an array of `S`
/// (the lanes past `width` are never read): the lanes' loops then have a
/// length the compiler knows, unrolled and without bounds checks
/// (docs/tracestat.md#scale).
pub(super) struct Replay<const S: usize> {
    lo: u32,
    width: usize,
    /// Node `lo + i`'s entries are `first[i]..first[i + 1]`: most nodes
    /// have one source, so entries are packed rather than [`KEEP`] slots
    /// per node (docs/tracestat.md#scale).
    first: Vec<u32>,
    src: Vec<u32>,
    lens: Vec<[Ns; S]>,
}

/// The step's start as a source.
const START: u32 = NONE - 1;

/// The source of chains that come from device work before the step (a
/// kernel, a collective's end, a wait for the device): the replay across
/// ranks moves them as the rank's step before ended earlier or later, and
/// the chains from its host work ([`START`]) as that step's host range did
/// (docs/tracestat.md#what-if).
pub const BEFORE: u32 = NONE - 2;

impl<const S: usize> Replay<S> {
    /// The common cases of a node whose chains all come from its
    /// predecessors `inside` (their places in the step, and whether each is
    /// the binding one), done without the general merge ([`Chains`]), to
    /// the same result: one predecessor's chains, each longer by the node's
    /// `cost` (still the latest first); or predecessors with the same one
    /// or two sources in the same order (their merge, longer by the cost,
    /// still the latest first: each lists them by its source's time plus
    /// its length, the times are the step's, and the maximum of lengths
    /// so ordered is so ordered). A predecessor that does not bind comes
    /// without the node's delay `gaps` ([`Graph::replay`]). Whether the
    /// node was one of them.
    fn carry(&mut self, inside: &[(usize, bool)], cost: &[Ns; S], gaps: &[Ns; S]) -> bool {
        let entries = |i: usize| self.first[i] as usize..self.first[i + 1] as usize;
        let at = self.lens.len();
        match inside {
            [] => return false,
            &[(i, binds)] => {
                for e in entries(i) {
                    self.src.push(self.src[e]);
                    self.lens.push(self.lens[e]);
                }
                if !binds {
                    self.lens[at..].iter_mut().for_each(|l| less(l, gaps));
                }
            }
            &[(i, binds), ref more @ ..] => {
                let e = self.first[i] as usize;
                let m = entries(i).len();
                // Most nodes of a step join a host chain and a device
                // chain: two sources, the same in each predecessor.
                let same = |j: usize| {
                    let f = self.first[j] as usize;
                    entries(j).len() == m && self.src[f..f + m] == self.src[e..e + m]
                };
                if !(1..=2).contains(&m) || more.iter().any(|&(j, _)| !same(j)) {
                    return false;
                }
                for q in e..e + m {
                    self.src.push(self.src[q]);
                    self.lens.push(self.lens[q]);
                }
                if !binds {
                    self.lens[at..].iter_mut().for_each(|l| less(l, gaps));
                }
                let none = [0; S];
                for &(j, binds) in more {
                    let f = self.first[j] as usize;
                    let gap = if binds { &none } else { gaps };
                    for q in 0..m {
                        let from = self.lens[f + q];
                        // As `Chains::merge`: the recorded length with its
                        // kernel part, every rule's length its own maximum.
                        let to = &mut self.lens[at + q];
                        let recorded = from[0] - gap[0];
                        if recorded > to[0] {
                            to[0] = recorded;
                            to[1] = from[1];
                        }
                        for k in 2..S {
                            to[k] = to[k].max(from[k] - gap[k]);
                        }
                    }
                }
            }
        }
        for l in &mut self.lens[at..] {
            for (x, c) in l.iter_mut().zip(cost) {
                *x += c;
            }
        }
        self.first.push(self.src.len() as u32);
        true
    }

    /// Whether node `at` (its place in the replay order) was replayed.
    pub(super) fn has(&self, at: u32) -> bool {
        at >= self.lo && ((at - self.lo) as usize) + 1 < self.first.len()
    }

    /// Node `at`'s chains: `(source, lengths)`.
    pub(super) fn of(&self, at: u32) -> impl Iterator<Item = (Option<u32>, &[Ns])> + '_ {
        let i = (at - self.lo) as usize;
        (self.first[i] as usize..self.first[i + 1] as usize).map(|e| {
            let s = self.src[e];
            let src = if s == START { None } else { Some(s) };
            (src, &self.lens[e][..self.width])
        })
    }
}

impl Graph<'_, '_> {
    /// Node `v`'s delay and own time under each rule: `[recorded, kernel
    /// part, rule...]` (the delay counts in the recorded and rule values).
    /// Returns where its own work starts ([`Graph::eff_start`]) and the
    /// delay per slot, which `out` counts in. `near`: per thread and
    /// coverage, where its last search ended.
    fn costs<const S: usize>(
        &self,
        v: u32,
        out: &mut [Ns; S],
        gaps: &mut [Ns; S],
        near: &mut [usize],
    ) -> Ns {
        let n = &self.nodes[v as usize];
        // `eff_start` and `gap` from one look at the binding predecessor.
        let (b, edge) = self.bind[v as usize];
        let (es, gap) = match b {
            NONE => (n.start, 0),
            b => {
                let be = self.nodes[b as usize].end;
                (n.start.max(be), (n.start - be).max(0))
            }
        };
        let dur = n.end - es;
        out[0] = gap + dur;
        gaps[0] = gap;
        gaps[1] = 0;
        out[1] = if matches!(n.what, What::Kernel { .. }) {
            dur
        } else {
            0
        };
        // Every rule's slot as recorded, then those of the rules that can
        // change this node.
        out[2..].fill(gap + dur.max(0));
        gaps[2..].fill(gap);
        let mut set = |i: usize, d: Ns| out[2 + i] = gap + d.max(0);
        match n.what {
            What::Kernel { full, kind, .. } => {
                for &i in &self.lanes.kernel {
                    let r = &self.rules[i];
                    match r.target {
                        Target::Kernel(_) if self.kernel_rule[i][full.index()] => {
                            set(i, r.change.apply(dur))
                        }
                        Target::Comm if kind == Kind::Communication => set(i, r.change.apply(dur)),
                        Target::RankMedian(_) if self.median_rank[i] => set(i, 0),
                        _ => {}
                    }
                }
            }
            What::Piece { thread } => {
                let covers = self.rules.len() + 1;
                for &i in &self.lanes.piece {
                    let r = &self.rules[i];
                    let f = r.change.factor().unwrap_or(1.0);
                    let th = &self.threads[thread as usize];
                    let o = match &r.target {
                        Target::Range(_) => match th.cover.get(i) {
                            Some(Some(c)) => {
                                c.overlap(es, n.end, &mut near[thread as usize * covers + i])
                            }
                            _ => continue,
                        },
                        _ => match &th.launches {
                            Some(l) => {
                                let at = &mut near[thread as usize * covers + covers - 1];
                                self.launch_overlap(th, l, (es, n.end), at)
                            }
                            None => continue,
                        },
                    };
                    set(i, dur - ((1.0 - f) * o as f64).round() as Ns);
                }
            }
            _ => {}
        }
        if b != NONE && edge == Edge::Launch {
            for &i in &self.lanes.launch {
                let g = self.rules[i].change.apply(gap);
                out[2 + i] += g - gap;
                gaps[2 + i] = g;
            }
        }
        es
    }

    /// Replays the step `start..end` (ending with node `end_node`) from
    /// its sources; `first`: no step of the rank moves it (its first, or
    /// one after a step not numbered before it).
    pub(super) fn replay<const S: usize>(
        &self,
        bufs: &mut ReplayBufs<S>,
        (start, end, end_node, first): (Ns, Ns, u32, bool),
    ) {
        let end_of = |v: &u32| self.nodes[*v as usize].end;
        // Searched from the step's end node: only nodes near it, which
        // the replay then reads, rather than a search of the whole run.
        let at_end = self.pos[end_node as usize] as usize;
        let hi = partition_point_near(&self.order, at_end, |v| end_of(v) <= end);
        let lo = partition_point_near(&self.order[..hi], at_end, |v| end_of(v) <= start);
        let (lo, hi) = (lo as u32, hi as u32);
        let ReplayBufs {
            replay: r,
            acc,
            near,
        } = bufs;
        r.lo = lo;
        r.width = 2 + self.rules.len();
        r.first.clear();
        r.src.clear();
        r.lens.clear();
        r.first.push(0);
        let mut cost = [0 as Ns; S];
        let mut gaps = [0 as Ns; S];
        let mut line = [0 as Ns; S];
        // Per slot, the latest end of host and of device work before the
        // step that a node waits for.
        let mut before_ends = [[0 as Ns; S]; 2];
        near.clear();
        near.resize(self.threads.len() * (self.rules.len() + 1), 0);
        // Where a chain ends in time: its source's time and its length.
        let key = |s: u32, l: &[Ns; S]| -> Ns {
            let t = if s == START || s == BEFORE {
                start
            } else {
                self.coll_end_time(s)
            };
            t + l[0]
        };
        for at_v in lo..hi {
            let v = self.order[at_v as usize];
            let n = &self.nodes[v as usize];
            if let What::End { coll } = n.what {
                r.src.push(coll);
                r.lens.push([0; S]);
                r.first.push(r.src.len() as u32);
                continue;
            }
            let es = self.costs(v, &mut cost, &mut gaps, near);
            // The node's delay was recorded after its binding predecessor:
            // it waits that long after that one's (replayed) end, and for
            // its other predecessors only until they end (a kernel queued
            // behind one whose launch came earlier starts when that one
            // ends, not a launch latency after it).
            let binding = self.bind[v as usize].0;
            // Its predecessors replayed in this step (by their place in
            // it, and whether each binds), and per slot the latest end of
            // those before the step, less the delay where it does not
            // bind: of host work, and of device work ([`BEFORE`]).
            let mut inside = [(0usize, false); 3];
            let mut count = 0;
            let mut outside = [false; 2];
            for &p in n.preds.iter().filter(|&&p| p != NONE) {
                let at_p = self.pos[p as usize];
                if at_p < lo {
                    let before = &self.nodes[p as usize];
                    let side = usize::from(before.what.on_device());
                    let o = &mut before_ends[side];
                    for (k, (x, g)) in o.iter_mut().zip(&gaps).enumerate() {
                        let end = before.end - if p == binding || k == 1 { 0 } else { *g };
                        *x = if outside[side] { (*x).max(end) } else { end };
                    }
                    outside[side] = true;
                    continue;
                }
                inside[count] = ((at_p - lo) as usize, p == binding);
                count += 1;
            }
            if outside == [false, false] && es >= start && r.carry(&inside[..count], &cost, &gaps) {
                continue;
            }
            acc.clear();
            for &(i, binds) in &inside[..count] {
                for e in r.first[i] as usize..r.first[i + 1] as usize {
                    let lens = &r.lens[e];
                    if binds {
                        acc.merge(r.src[e], lens);
                    } else {
                        for ((x, l), g) in line.iter_mut().zip(lens).zip(&gaps) {
                            *x = l - g;
                        }
                        acc.merge(r.src[e], &line);
                    }
                }
            }
            acc.add(&cost);
            if es < start {
                // Straddles the step's start. In a `first` step: the share
                // of its own time (not its delay, which ended before `es`)
                // in the step. Otherwise its part in the step as recorded:
                // the replay across ranks moves it as the step before
                // ended earlier or later, which counts its change.
                let part = n.end - start;
                let whole = (n.end - es).max(1);
                for ((l, &c), &g) in line.iter_mut().zip(&cost).zip(&gaps) {
                    *l = if first {
                        (((c - g) as f64) * part as f64 / whole as f64).round() as Ns
                    } else {
                        part
                    };
                }
                line[0] = part;
                if !first {
                    line[1] = 0;
                }
                let device = n.what.on_device();
                acc.merge(if device { BEFORE } else { START }, &line);
            } else {
                // A node with no predecessor starts at its recorded start.
                if count == 0 && outside == [false, false] {
                    before_ends[0].iter_mut().for_each(|x| *x = n.start);
                    outside[0] = true;
                }
                for (side, src) in [(0, START), (1, BEFORE)] {
                    if !outside[side] {
                        continue;
                    }
                    for ((l, &c), &at) in line.iter_mut().zip(&cost).zip(&before_ends[side]) {
                        *l = at - start + c;
                    }
                    line[1] = cost[1];
                    acc.merge(src, &line);
                }
            }
            acc.keep_latest(KEEP, key);
            for &j in &acc.order {
                r.src.push(acc.src[j]);
                r.lens.push(*acc.lens(j));
            }
            r.first.push(r.src.len() as u32);
        }
    }

    fn coll_end_time(&self, pos: u32) -> Ns {
        match self.coll_end.get(pos as usize) {
            Some(&e) if e != NONE => self.nodes[e as usize].end,
            _ => 0,
        }
    }
}

/// The lists a step's replay fills, kept from step to step (a run replays
/// thousands of steps, and the allocator took about a tenth of the path's
/// time on the bench's ranks, docs/tracestat.md#scale): the replay, the
/// chains of the node being replayed, the searches' hints.
pub(super) struct ReplayBufs<const S: usize> {
    pub(super) replay: Replay<S>,
    acc: Chains<S>,
    near: Vec<usize>,
}

impl<const S: usize> Default for ReplayBufs<S> {
    fn default() -> Self {
        ReplayBufs {
            replay: Replay {
                lo: 0,
                width: 0,
                first: Vec::new(),
                src: Vec::new(),
                lens: Vec::new(),
            },
            acc: Chains::new(),
            near: Vec::new(),
        }
    }
}

/// A node's chains per source during the replay: `src[j]` with its
/// lengths `lens(j)` (lanes as [`Replay`]'s).
struct Chains<const S: usize> {
    src: Vec<u32>,
    flat: Vec<[Ns; S]>,
    order: Vec<usize>,
}

impl<const S: usize> Chains<S> {
    fn new() -> Self {
        Chains {
            src: Vec::with_capacity(4 * KEEP),
            flat: Vec::with_capacity(4 * KEEP),
            order: Vec::with_capacity(4 * KEEP),
        }
    }

    fn clear(&mut self) {
        self.src.clear();
        self.flat.clear();
    }

    fn lens(&self, j: usize) -> &[Ns; S] {
        &self.flat[j]
    }

    /// Adds one chain to the per-source maxima: the recorded length and
    /// its kernel part go together; every rule's length is its own maximum.
    fn merge(&mut self, src: u32, l: &[Ns; S]) {
        match self.src.iter().position(|&s| s == src) {
            Some(j) => {
                let have = &mut self.flat[j];
                if l[0] > have[0] {
                    have[0] = l[0];
                    have[1] = l[1];
                }
                for k in 2..S {
                    have[k] = have[k].max(l[k]);
                }
            }
            None => {
                self.src.push(src);
                self.flat.push(*l);
            }
        }
    }

    /// Adds the node's own cost to every chain.
    fn add(&mut self, cost: &[Ns; S]) {
        for l in &mut self.flat {
            for (x, c) in l.iter_mut().zip(cost) {
                *x += c;
            }
        }
    }

    /// Puts in `order` the indices of the `keep` chains that end latest by
    /// `key` (ties in the order they came).
    fn keep_latest(&mut self, keep: usize, key: impl Fn(u32, &[Ns; S]) -> Ns) {
        self.order.clear();
        let (src, flat) = (&self.src, &self.flat);
        let key_of = |j: usize| key(src[j], &flat[j]);
        match src.len() {
            // Most nodes have one or two chains (docs/tracestat.md#scale):
            // their order without a sort, the same as its.
            0 | 1 => self.order.extend(0..src.len()),
            2 if key_of(1) > key_of(0) => self.order.extend([1, 0]),
            2 => self.order.extend([0, 1]),
            n => {
                self.order.extend(0..n);
                self.order.sort_by_key(|&j| std::cmp::Reverse(key_of(j)));
            }
        }
        self.order.truncate(keep);
    }
}

/// The rules by the nodes they can change, so that a node is looked at
/// only by those (docs/tracestat.md#what-if): kernels by `kernel:`,
/// `comm=` and `rank:N=median`; host pieces by `range:` and `launch=`
/// (the time in launch calls); launch delays by `launch=`.
#[derive(Debug, Default)]
pub(super) struct RuleLanes {
    kernel: Vec<usize>,
    piece: Vec<usize>,
    launch: Vec<usize>,
}

impl RuleLanes {
    pub(super) fn of(rules: &[Rule]) -> RuleLanes {
        let mut lanes = RuleLanes::default();
        for (i, r) in rules.iter().enumerate() {
            match r.target {
                Target::Kernel(_) | Target::Comm | Target::RankMedian(_) => lanes.kernel.push(i),
                Target::Range(_) => lanes.piece.push(i),
                Target::Launch => {
                    lanes.piece.push(i);
                    lanes.launch.push(i);
                }
            }
        }
        lanes
    }
}

/// Each lane of `l` less the node's delay in it.
fn less<const S: usize>(l: &mut [Ns; S], gaps: &[Ns; S]) {
    for (x, g) in l.iter_mut().zip(gaps) {
        *x -= g;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The replay's node-by-node state with the general merge: the
    /// chains of `preds` (each a list of `(source, lens)`), merged, longer
    /// by `cost`, the latest [`KEEP`] (a source's time is 10 x its id);
    /// the chains of a predecessor that does not bind (`binds`) less the
    /// node's delay `gaps`.
    fn merged_with(
        preds: &[&[(u32, [Ns; 5])]],
        binds: &[bool],
        cost: &[Ns; 5],
        gaps: &[Ns; 5],
    ) -> Vec<(u32, Vec<Ns>)> {
        let mut acc = Chains::<8>::new();
        for (chains, &b) in preds.iter().zip(binds) {
            for (src, lens) in chains.iter() {
                let mut l = padded(lens);
                if !b {
                    less(&mut l, &padded(gaps));
                }
                acc.merge(*src, &l);
            }
        }
        acc.add(&padded(cost));
        acc.keep_latest(KEEP, |s, l| 10 * s as Ns + l[0]);
        acc.order
            .iter()
            .map(|&j| (acc.src[j], acc.lens(j)[..5].to_vec()))
            .collect()
    }

    /// Five lanes in an array of eight, the rest zero.
    fn padded(l: &[Ns; 5]) -> [Ns; 8] {
        let mut out = [0; 8];
        out[..5].copy_from_slice(l);
        out
    }

    fn merged(preds: &[&[(u32, [Ns; 5])]], cost: &[Ns; 5]) -> Vec<(u32, Vec<Ns>)> {
        merged_with(preds, &vec![true; preds.len()], cost, &[0; 5])
    }

    #[test]
    fn carried_chains_are_the_general_merge() {
        // Nodes as the replay leaves them (merged from nothing, so in the
        // order the general merge keeps): several sources, or one.
        let two = |a: [Ns; 5], b: [Ns; 5]| merged(&[&[(5, a), (6, b)]], &[0; 5]);
        let nodes: Vec<Vec<(u32, Vec<Ns>)>> = vec![
            merged(
                &[&[
                    (3, [50, 10, 40, 50, 0]),
                    (1, [90, 0, 90, 80, 70]),
                    (2, [70, 5, 60, 70, 70]),
                ]],
                &[0; 5],
            ),
            merged(&[&[(7, [30, 10, 20, 30, 25])]], &[0; 5]),
            merged(&[&[(7, [40, 2, 10, 40, 35])]], &[0; 5]),
            merged(&[&[(7, [30, 20, 25, 10, 30])]], &[0; 5]),
            merged(&[&[(8, [30, 10, 20, 30, 25])]], &[0; 5]),
            // Two sources (key 10 x source + length): latest first 5, 6;
            // then 6, 5 twice; then 5, 6, a tie kept in its order.
            two([60, 1, 50, 60, 55], [20, 2, 20, 15, 20]),
            two([10, 3, 5, 10, 8], [70, 4, 60, 70, 65]),
            two([30, 0, 25, 35, 30], [45, 5, 40, 45, 20]),
            two([50, 6, 45, 50, 60], [40, 7, 45, 30, 50]),
        ];
        let mut r = Replay {
            lo: 0,
            width: 5,
            first: vec![0],
            src: Vec::new(),
            lens: Vec::new(),
        };
        for node in &nodes {
            for (src, lens) in node {
                r.src.push(*src);
                r.lens.push(padded(&lens[..].try_into().unwrap()));
            }
            r.first.push(r.src.len() as u32);
        }
        let as_array = |l: &[Ns]| -> [Ns; 5] { l.try_into().unwrap() };
        let chains = |i: usize| -> Vec<(u32, [Ns; 5])> {
            nodes[i].iter().map(|(s, l)| (*s, as_array(l))).collect()
        };
        let cost = [7, 3, 0, 7, 2];
        // The node's delay (in `cost`), which a predecessor that does not
        // bind comes without; none in the kernel part.
        let gaps = [4, 0, 0, 4, 1];
        for (inside, carried) in [
            (vec![(0, true)], true),
            (vec![(0, false)], true),
            (vec![(1, true)], true),
            (vec![(1, true), (2, false)], true),
            (vec![(1, false), (2, true)], true),
            (vec![(2, true), (1, false), (3, false)], true),
            (vec![(1, true), (4, false)], false),
            (vec![(0, true), (1, false)], false),
            (vec![(5, true), (8, false)], true),
            (vec![(8, true), (5, true)], true),
            (vec![(6, false), (7, true)], true),
            (vec![(7, false), (6, false)], true),
            (vec![(5, true), (6, false)], false),
            (vec![(5, true), (1, false)], false),
            (vec![(0, true), (5, false)], false),
            (vec![], false),
        ] {
            let mut after = Replay {
                lo: 0,
                width: 5,
                first: r.first.clone(),
                src: r.src.clone(),
                lens: r.lens.clone(),
            };
            let (cost8, gaps8) = (padded(&cost), padded(&gaps));
            assert_eq!(after.carry(&inside, &cost8, &gaps8), carried, "{inside:?}");
            if !carried {
                continue;
            }
            let preds: Vec<Vec<(u32, [Ns; 5])>> = inside.iter().map(|&(i, _)| chains(i)).collect();
            let preds: Vec<&[(u32, [Ns; 5])]> = preds.iter().map(|p| &p[..]).collect();
            let binds: Vec<bool> = inside.iter().map(|&(_, b)| b).collect();
            let want: Vec<(Option<u32>, Vec<Ns>)> = (merged_with(&preds, &binds, &cost, &gaps)
                .into_iter())
            .map(|(s, l)| (Some(s), l))
            .collect();
            let got: Vec<(Option<u32>, Vec<Ns>)> = after
                .of(nodes.len() as u32)
                .map(|(s, l)| (s, l.to_vec()))
                .collect();
            assert_eq!(got, want, "{inside:?}");
        }
    }
}
