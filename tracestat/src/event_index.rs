//! The index of `--events` over a file (docs/tracestat.md#events), fed by
//! the trace source's events ([`crate::event_spool`]) before any row is
//! written: what a row needs from elsewhere in the file, since unitrace
//! writes events out of time order (a kernel before the call that launched
//! it, a host range after the calls inside it).
//!
//! Kept per rank slot of the source (docs/formats.md#timeline-ranks): the
//! host ranges of each thread (as a [`RangeTree`] for "innermost range
//! around time t" queries), the submission flows (id -> submitting thread,
//! time and call), the host run's span (for the kernel-longer-than-the-run
//! rule) and the names of processes and threads. That is O(host ranges +
//! launches), the intervals the report keeps too, never O(events).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use rustc_hash::{FxHashMap as FastMap, FxHashSet as FastSet};
use unitrace_core::timeline::{
    DeviceOp, Dropped, FlowPhase, FlowPoint, HostRole, HostSpan, NameId, Names, OtherSpan,
    RankRouter, RankSlot, TraceSink,
};

use crate::time::Ns;

/// One host range (or call) of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub start: Ns,
    pub end: Ns,
    pub name: NameId,
    /// A collective call (docs/tracestat.md#collectives).
    pub collective: bool,
}

/// No range.
pub const NO_RANGE: u32 = u32::MAX;

/// The host ranges of one thread, for "which range was open at t" in
/// O(log n). Ranges of a thread nest (the report assumes the same,
/// docs/tracestat.md#host-ranges); a range covers `start..=end`.
#[derive(Debug, Default)]
pub struct RangeTree {
    /// Sorted by start, the longer first on equal starts (outer first).
    ranges: Vec<Range>,
    /// Enclosing range of each range, [`NO_RANGE`] at the top.
    parent: Vec<u32>,
    /// Whether the range or one around it is a collective call.
    collective: Vec<bool>,
    /// `(t, innermost range from t on)`, sorted by t.
    breaks: Vec<(Ns, u32)>,
    /// The break of the last query: rows of a thread come nearly in time
    /// order, so the next answer is usually there or just after.
    hint: AtomicUsize,
    /// The range of the last [`RangeTree::parent_of`], for the same reason.
    range_hint: AtomicUsize,
}

/// How far before and after the previous answer [`RangeTree::parent_of`]
/// looks before it searches.
const RANGE_HINT_BACK: usize = 4;
const RANGE_HINT_AHEAD: usize = 8;

/// A thread without host ranges.
pub static NO_RANGES: RangeTree = RangeTree {
    ranges: Vec::new(),
    parent: Vec::new(),
    collective: Vec::new(),
    breaks: Vec::new(),
    hint: AtomicUsize::new(0),
    range_hint: AtomicUsize::new(0),
};

impl RangeTree {
    pub fn build(mut ranges: Vec<Range>) -> RangeTree {
        ranges.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        let n = ranges.len();
        let mut parent = vec![NO_RANGE; n];
        let mut collective = vec![false; n];
        let mut stack: Vec<u32> = Vec::new();
        for (i, r) in ranges.iter().enumerate() {
            while stack
                .last()
                .is_some_and(|&top| ranges[top as usize].end < r.start)
            {
                stack.pop();
            }
            if let Some(&top) = stack.last() {
                parent[i] = top;
            }
            collective[i] =
                r.collective || (parent[i] != NO_RANGE && collective[parent[i] as usize]);
            stack.push(i as u32);
        }
        // Sweep: opens at `start`, closes at `end + 1` (ns are integers,
        // so that is "after end"); closes first at equal times.
        let mut edges: Vec<(Ns, bool, u32)> = Vec::with_capacity(2 * n);
        for (i, r) in ranges.iter().enumerate() {
            edges.push((r.start, true, i as u32));
            edges.push((r.end.saturating_add(1), false, i as u32));
        }
        edges.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut active = vec![false; n];
        let mut open: Vec<u32> = Vec::new();
        let mut breaks: Vec<(Ns, u32)> = Vec::new();
        let mut k = 0;
        while k < edges.len() {
            let t = edges[k].0;
            while k < edges.len() && edges[k].0 == t {
                let (_, opening, i) = edges[k];
                active[i as usize] = opening;
                if opening {
                    open.push(i);
                }
                k += 1;
            }
            while open.last().is_some_and(|&top| !active[top as usize]) {
                open.pop();
            }
            let top = open.last().copied().unwrap_or(NO_RANGE);
            if breaks.last().map(|b| b.1) != Some(top) {
                breaks.push((t, top));
            }
        }
        RangeTree {
            ranges,
            parent,
            collective,
            breaks,
            hint: AtomicUsize::new(0),
            range_hint: AtomicUsize::new(0),
        }
    }

    /// The innermost range open at `t`.
    pub fn innermost(&self, t: Ns) -> u32 {
        let b = &self.breaks;
        // The last break at or before t: first near the previous answer.
        let h = self.hint.load(Ordering::Relaxed);
        let found = (h..(h + 3).min(b.len()))
            .find(|&i| b[i].0 <= t && b.get(i + 1).is_none_or(|next| next.0 > t));
        let i = match found {
            Some(i) => i,
            None => {
                let p = b.partition_point(|x| x.0 <= t);
                if p == 0 {
                    return NO_RANGE;
                }
                p - 1
            }
        };
        self.hint.store(i, Ordering::Relaxed);
        b[i].1
    }

    /// The range around the range `name` from `start` to `end` itself
    /// (its parent).
    pub fn parent_of(&self, start: Ns, end: Ns, name: NameId) -> u32 {
        let key = |x: &Range| (x.start, std::cmp::Reverse(x.end));
        let wanted = (start, std::cmp::Reverse(end));
        // A thread's ranges come to the row pass as they end: an inner
        // range, then the one around it (just before it in start order),
        // then the next inner one. Near the previous answer first, where
        // the range is the first of its (start, end) (as the search finds).
        let r = &self.ranges;
        let h = self.range_hint.load(Ordering::Relaxed);
        let near = h.saturating_sub(RANGE_HINT_BACK)..(h + RANGE_HINT_AHEAD).min(r.len());
        if let Some(i) = near.into_iter().find(|&i| {
            r[i].name == name && key(&r[i]) == wanted && (i == 0 || key(&r[i - 1]) < wanted)
        }) {
            self.range_hint.store(i, Ordering::Relaxed);
            return self.parent[i];
        }
        let from = r.partition_point(|x| key(x) < wanted);
        self.range_hint.store(from, Ordering::Relaxed);
        self.ranges[from..]
            .iter()
            .take_while(|x| x.start == start && x.end == end)
            .position(|x| x.name == name)
            .map_or(NO_RANGE, |k| self.parent[from + k])
    }

    pub fn name(&self, i: u32) -> Option<NameId> {
        (i != NO_RANGE).then(|| self.ranges[i as usize].name)
    }

    pub fn in_collective(&self, i: u32) -> bool {
        i != NO_RANGE && self.collective[i as usize]
    }
}

/// The submission of one device command.
#[derive(Debug, Clone, Copy)]
pub struct Launch {
    pub tid: u64,
    pub ts: Ns,
    /// The API call the flow starts in, when found.
    pub call: Option<NameId>,
}

/// The launches of one rank by flow id. Flow ids are correlation
/// numbers, nearly consecutive in a file (docs/formats.md#trace-json-flows):
/// they are kept in a vector indexed by `id - base`, so that the row
/// pass, which asks for them in file order, reads memory in order instead
/// of one cache miss per device command in a hash table. An id far from
/// the others (below `base`, or past the vector by more than it holds)
/// goes to a hash map: the vector never grows beyond twice the ids in it
/// plus [`FlowMap::SLACK`].
#[derive(Debug, Default)]
pub struct FlowMap {
    base: u64,
    dense: Vec<Option<Launch>>,
    /// Ids in `dense`.
    in_dense: usize,
    sparse: FastMap<u64, Launch>,
}

impl FlowMap {
    /// Room the vector may take past its ids (a gap in the numbering).
    const SLACK: usize = 1 << 16;

    #[inline]
    fn dense_index(&self, id: u64) -> Option<usize> {
        let i = id.checked_sub(self.base)?;
        (i < self.dense.len() as u64).then_some(i as usize)
    }

    #[inline]
    pub fn get(&self, id: u64) -> Option<&Launch> {
        match self.dense_index(id) {
            Some(i) => self.dense[i].as_ref(),
            None => self.sparse.get(&id),
        }
    }

    #[inline]
    fn get_mut(&mut self, id: u64) -> Option<&mut Launch> {
        match self.dense_index(id) {
            Some(i) => self.dense[i].as_mut(),
            None => self.sparse.get_mut(&id),
        }
    }

    /// Sets the launch of `id` (the last one wins, as in a map).
    pub fn insert(&mut self, id: u64, launch: Launch) {
        if self.dense.is_empty() && self.sparse.is_empty() {
            self.base = id;
        }
        if let Some(i) = self.dense_index(id) {
            let slot = &mut self.dense[i];
            if slot.is_none() {
                self.in_dense += 1;
            }
            *slot = Some(launch);
            return;
        }
        let past = id
            .checked_sub(self.base)
            .map(|i| i - self.dense.len() as u64);
        match past {
            Some(p) if p as usize <= self.in_dense + Self::SLACK => {
                let i = (id - self.base) as usize;
                self.dense.resize(i, None);
                self.dense.push(Some(launch));
                self.in_dense += 1;
            }
            _ => {
                self.sparse.insert(id, launch);
            }
        }
    }
}

/// Host calls remembered per thread to name the call a JSON flow starts
/// in (the flow's `s` event comes right after its call).
const RECENT_CALLS: usize = 16;
/// Flows per thread waiting for their call (written before it).
const PENDING_FLOWS: usize = 4096;

/// A host range still open at the end of the file: it ends with its rank
/// (as the report closes it).
#[derive(Debug)]
struct Unclosed {
    tid: u64,
    range: Range,
    /// An annotated range (one of the thread's [`RangeTree`]).
    annotated: bool,
}

/// The recent calls of a thread and the flows waiting for their call.
#[derive(Debug, Default)]
struct ThreadCalls {
    recent: VecDeque<Range>,
    pending: VecDeque<u64>,
}

/// What the index keeps of one rank.
#[derive(Debug)]
pub struct RankIndex {
    ranges: FastMap<u64, Vec<Range>>,
    pub trees: FastMap<u64, RangeTree>,
    pub flows: FlowMap,
    /// By thread: one lookup per call or flow.
    calls: FastMap<u64, ThreadCalls>,
    pub host_first: Ns,
    pub host_last: Ns,
    pub first: Ns,
    pub last: Ns,
    unclosed: Vec<Unclosed>,
}

impl Default for RankIndex {
    fn default() -> Self {
        RankIndex {
            ranges: FastMap::default(),
            trees: FastMap::default(),
            flows: FlowMap::default(),
            calls: FastMap::default(),
            host_first: Ns::MAX,
            host_last: Ns::MIN,
            first: Ns::MAX,
            last: Ns::MIN,
            unclosed: Vec::new(),
        }
    }
}

impl RankIndex {
    /// Longest plausible device command: the host's whole run
    /// (docs/tracestat.md#implausible-events), `None` without host calls.
    pub fn host_span(&self) -> Option<Ns> {
        (self.host_last >= self.host_first).then(|| self.host_last - self.host_first)
    }

    #[inline]
    fn touch(&mut self, start: Ns, end: Ns) {
        self.first = self.first.min(start);
        self.last = self.last.max(end);
    }

    fn call(&mut self, tid: u64, r: Range) {
        let thread = self.calls.entry(tid).or_default();
        if thread.recent.len() == RECENT_CALLS {
            thread.recent.pop_front();
        }
        thread.recent.push_back(r);
        if !thread.pending.is_empty() {
            thread.pending.retain(|id| match self.flows.get_mut(*id) {
                Some(l) if r.start <= l.ts && l.ts <= r.end => {
                    l.call = Some(r.name);
                    false
                }
                _ => true,
            });
        }
    }
}

/// The index of one file, by rank slot of the source.
#[derive(Default)]
pub struct FileIndex {
    pub ranks: Vec<RankIndex>,
    /// Process names (`RANK 0 HOST<node>`, device labels) by pid.
    pub processes: FastMap<u64, String>,
    /// Thread and engine names by (pid, tid).
    pub threads: FastMap<(u64, u64), String>,
    /// `(pid, tid)` of copy engines.
    pub copy_engines: FastSet<(u64, u64)>,
    /// Events the source left out as implausible.
    pub dropped: u64,
}

impl FileIndex {
    #[inline]
    fn rank(&mut self, slot: RankSlot) -> &mut RankIndex {
        if self.ranks.len() <= slot {
            self.ranks.resize_with(slot + 1, RankIndex::default);
        }
        &mut self.ranks[slot]
    }

    /// Ends the read: one [`RankIndex`] per slot of the source's `router`,
    /// open ranges ended with their rank (as the report closes them), range
    /// trees built, pending flows dropped.
    pub fn finish(&mut self, router: &RankRouter) {
        let slots = router.slots().len();
        if self.ranks.len() < slots {
            self.ranks.resize_with(slots, RankIndex::default);
        }
        for r in &mut self.ranks {
            for u in std::mem::take(&mut r.unclosed) {
                let start = u.range.start;
                if r.last >= start {
                    r.host_first = r.host_first.min(start);
                    r.host_last = r.host_last.max(r.last);
                    if u.annotated {
                        let range = Range {
                            end: r.last,
                            ..u.range
                        };
                        r.ranges.entry(u.tid).or_default().push(range);
                    }
                }
            }
            for (tid, list) in std::mem::take(&mut r.ranges) {
                r.trees.insert(tid, RangeTree::build(list));
            }
            r.calls.clear();
        }
    }

    pub fn process(&mut self, _rank: RankSlot, pid: u64, label: &str) {
        self.processes.insert(pid, label.to_string());
    }

    pub fn thread(&mut self, _rank: RankSlot, pid: u64, tid: u64, label: &str) {
        if label.contains("Copy Engine") {
            self.copy_engines.insert((pid, tid));
        }
        self.threads.insert((pid, tid), label.to_string());
    }

    /// A submission flow's start: the launch of the device command that
    /// carries its id (docs/formats.md#trace-json-flows).
    pub fn flow(&mut self, f: &FlowPoint) {
        if f.phase != FlowPhase::Start || !f.submission {
            return;
        }
        let (tid, ts, id) = (f.tid, f.ts, f.id);
        let r = self.rank(f.rank);
        r.touch(ts, ts);
        // `.pftrace` puts the flow on its call; a JSON flow comes right
        // after its call, or before it (then it waits for it).
        let call = f.call.or_else(|| {
            let thread = r.calls.entry(tid).or_default();
            let call = thread
                .recent
                .iter()
                .rev()
                .find(|c| c.start <= ts && ts <= c.end)
                .map(|c| c.name);
            if call.is_none() {
                if thread.pending.len() == PENDING_FLOWS {
                    thread.pending.pop_front();
                }
                thread.pending.push_back(id);
            }
            call
        });
        r.flows.insert(id, Launch { tid, ts, call });
    }

    #[inline]
    pub fn device_op(&mut self, op: &DeviceOp) {
        self.rank(op.rank).touch(op.start, op.end);
    }

    pub fn host_span(&mut self, s: &HostSpan<'_>) {
        let r = self.rank(s.rank);
        let range = Range {
            start: s.start,
            end: s.end,
            name: s.name,
            collective: s.collective.is_some(),
        };
        let annotated = s.role == HostRole::Range;
        if !s.closed {
            r.touch(s.start, s.start);
            r.unclosed.push(Unclosed {
                tid: s.tid,
                range,
                annotated,
            });
            return;
        }
        r.touch(s.start, s.end);
        r.host_first = r.host_first.min(s.start);
        r.host_last = r.host_last.max(s.end);
        if annotated {
            r.ranges.entry(s.tid).or_default().push(range);
        } else {
            r.call(s.tid, range);
        }
    }

    #[inline]
    pub fn other_span(&mut self, s: &OtherSpan) {
        self.rank(s.rank).touch(s.start, s.end);
    }
}

/// The index alone (the first read of the two-pass reference export):
/// device commands without their names and ids.
impl TraceSink for FileIndex {
    fn device_details(&self) -> bool {
        false
    }

    fn process(&mut self, rank: RankSlot, pid: u64, label: &str) {
        FileIndex::process(self, rank, pid, label);
    }

    fn thread(&mut self, rank: RankSlot, pid: u64, tid: u64, label: &str) {
        FileIndex::thread(self, rank, pid, tid, label);
    }

    fn device_op(&mut self, _: &Names, op: &DeviceOp) -> std::io::Result<()> {
        FileIndex::device_op(self, op);
        Ok(())
    }

    fn host_span(&mut self, _: &Names, s: &HostSpan<'_>) -> std::io::Result<()> {
        FileIndex::host_span(self, s);
        Ok(())
    }

    fn other_span(&mut self, _: &Names, s: &OtherSpan) -> std::io::Result<()> {
        FileIndex::other_span(self, s);
        Ok(())
    }

    fn flow(&mut self, f: &FlowPoint) {
        FileIndex::flow(self, f);
    }

    fn dropped(&mut self, _: &Dropped<'_>) {
        self.dropped += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innermost_and_parent() {
        // 0: outer 0..=100, 1: inner 10..=20, 2: coll 30..=40, 3: inner2 30..=35
        let r = |start, end, name| Range {
            start,
            end,
            name: NameId(name),
            collective: name == 2,
        };
        let t = RangeTree::build(vec![r(10, 20, 1), r(0, 100, 0), r(30, 40, 2), r(30, 35, 3)]);
        let nm = |i| t.name(i).map(|n| n.0);
        assert_eq!(nm(t.innermost(-1)), None);
        assert_eq!(nm(t.innermost(0)), Some(0));
        assert_eq!(nm(t.innermost(15)), Some(1));
        assert_eq!(nm(t.innermost(20)), Some(1));
        assert_eq!(nm(t.innermost(21)), Some(0));
        assert_eq!(nm(t.innermost(33)), Some(3));
        assert_eq!(nm(t.innermost(37)), Some(2));
        assert_eq!(nm(t.innermost(101)), None);
        // Inside a collective range, however deep.
        assert!(t.in_collective(t.innermost(33)));
        assert!(!t.in_collective(t.innermost(15)));
        assert_eq!(nm(t.parent_of(30, 35, NameId(3))), Some(2));
        assert_eq!(nm(t.parent_of(0, 100, NameId(0))), None);
    }

    /// `parent_of` near its previous answer agrees with the search: every
    /// range asked in every order, with equal (start, end) pairs.
    #[test]
    fn parent_of_with_hint() {
        let r = |start, end, name| Range {
            start,
            end,
            name: NameId(name),
            collective: false,
        };
        let mut list = vec![r(0, 1000, 0)];
        for k in 0..40 {
            let s = 10 + 20 * k;
            list.push(r(s, s + 15, 1));
            list.push(r(s, s + 15, 2 + (k % 2) as u32));
            list.push(r(s + 2, s + 5, 1));
        }
        list.push(r(10, 25, 1));
        let t = RangeTree::build(list.clone());
        let fresh = |q: &Range| RangeTree::build(list.clone()).parent_of(q.start, q.end, q.name);
        let mut orders = vec![list.clone()];
        orders.push(list.iter().rev().copied().collect());
        orders.push(
            list.iter()
                .step_by(7)
                .chain(list.iter().step_by(3))
                .copied()
                .collect(),
        );
        for order in orders {
            for q in &order {
                assert_eq!(t.parent_of(q.start, q.end, q.name), fresh(q), "{q:?}");
            }
        }
        assert_eq!(t.name(t.parent_of(10, 25, NameId(1))), Some(NameId(0)));
        assert_eq!(t.parent_of(10, 25, NameId(9)), NO_RANGE);
    }

    /// The flow map answers as a hash map would, whatever the order and
    /// spread of the ids: in order, backwards, with a gap past the slack,
    /// and replaced.
    #[test]
    fn flow_map_is_a_map() {
        let launch = |ts| Launch {
            tid: 7,
            ts,
            call: None,
        };
        let mut ids: Vec<u64> = (1000..1100).collect();
        ids.extend((900..1000).rev());
        ids.extend([
            5,
            1_000_000_000,
            u64::MAX,
            1100 + FlowMap::SLACK as u64 + 300,
        ]);
        ids.extend((1100..1200).step_by(3));
        let mut map = FlowMap::default();
        let mut reference = FastMap::default();
        for (n, &id) in ids.iter().enumerate() {
            map.insert(id, launch(n as i64));
            reference.insert(id, launch(n as i64));
        }
        map.insert(1050, launch(-1));
        reference.insert(1050, launch(-1));
        map.get_mut(1100).expect("present").call = Some(NameId(3));
        reference.get_mut(&1100).expect("present").call = Some(NameId(3));
        for id in (0..1400).chain([1_000_000_000, u64::MAX, 1100 + FlowMap::SLACK as u64 + 300]) {
            let got = map.get(id).map(|l| (l.ts, l.call));
            assert_eq!(got, reference.get(&id).map(|l| (l.ts, l.call)), "id {id}");
        }
        // The numbers below the first id and past the slack are in the hash map.
        assert!(map.dense.len() < 400, "{}", map.dense.len());
        assert_eq!(map.sparse.len(), 104);
    }
}
