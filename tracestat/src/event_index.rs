//! The index of `--events` over a file (docs/tracestat.md#events), fed by
//! the single pass ([`crate::event_spool`]) before any row is written: what
//! a row needs from elsewhere in the file,
//! since unitrace writes events out of time order (a kernel before the call
//! that launched it, a host range after the calls inside it).
//!
//! Kept per rank: the host ranges of each thread (as a [`RangeTree`] for
//! "innermost range around time t" queries), the H2D flows (id ->
//! submitting thread, time and call), the host run's span (for the
//! kernel-longer-than-the-run rule) and the names of processes and
//! threads. That is O(host ranges + launches), the intervals the report
//! keeps too, never O(events).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use rustc_hash::{FxHashMap as FastMap, FxHashSet as FastSet};

use crate::event_scan::{Names, Side, Slice, Visitor};
use crate::time::Ns;
use unitrace_core::timeline::rank::split_rank_label;

/// Which accumulator (rank) an event belongs to, decided as the report
/// decides it (docs/formats.md#trace-json-ids): `RANK r ...` process names
/// tie a pid to rank r; other pids stay with the file's rank. Both passes
/// replay the same calls, so they route every event alike.
#[derive(Debug, Clone)]
pub struct Router {
    /// Rank of each accumulator (`None`: the file's, unknown).
    pub ranks: Vec<Option<u32>>,
    used: Vec<bool>,
    by_rank: FastMap<u32, usize>,
    pid_acc: FastMap<u64, usize>,
}

impl Router {
    pub fn new(path_rank: Option<u32>) -> Router {
        let mut by_rank = FastMap::default();
        if let Some(r) = path_rank {
            by_rank.insert(r, 0);
        }
        Router {
            ranks: vec![path_rank],
            used: vec![false],
            by_rank,
            pid_acc: FastMap::default(),
        }
    }

    pub fn process(&mut self, pid: u64, label: &str) {
        let (rank, _) = split_rank_label(label);
        let i = match rank {
            Some(r) => match self.by_rank.get(&r) {
                Some(&i) => i,
                // The first labelled rank of a file whose name has no rank
                // takes over the default accumulator while it is empty.
                None if self.ranks[0].is_none() && !self.used[0] && self.by_rank.is_empty() => {
                    self.ranks[0] = Some(r);
                    self.by_rank.insert(r, 0);
                    0
                }
                None => {
                    self.ranks.push(Some(r));
                    self.used.push(false);
                    self.by_rank.insert(r, self.ranks.len() - 1);
                    self.ranks.len() - 1
                }
            },
            None => self.acc(pid),
        };
        self.pid_acc.insert(pid, i);
    }

    /// The accumulator of an event of `pid` (marked as holding events).
    pub fn route(&mut self, pid: u64) -> usize {
        let i = self.acc(pid);
        self.used[i] = true;
        i
    }

    /// The accumulator of an event of `pid`, without marking it used.
    pub fn acc(&self, pid: u64) -> usize {
        self.pid_acc.get(&pid).copied().unwrap_or(0)
    }

    pub fn used(&self, acc: usize) -> bool {
        self.used[acc]
    }
}

/// One host range of a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub start: Ns,
    pub end: Ns,
    pub name: u32,
}

/// No range.
pub const NONE: u32 = u32::MAX;

/// The host ranges of one thread, for "which range was open at t" in
/// O(log n). Ranges of a thread nest (the report assumes the same,
/// docs/tracestat.md#host-ranges); a range covers `start..=end`.
#[derive(Debug, Default)]
pub struct RangeTree {
    /// Sorted by start, the longer first on equal starts (outer first).
    ranges: Vec<Range>,
    /// Enclosing range of each range, [`NONE`] at the top.
    parent: Vec<u32>,
    /// Whether the range or one around it is a collective call.
    collective: Vec<bool>,
    /// `(t, innermost range from t on)`, sorted by t.
    breaks: Vec<(Ns, u32)>,
    /// The break of the last query: rows of a thread come nearly in time
    /// order, so the next answer is usually there or just after.
    hint: AtomicUsize,
}

/// A thread without host ranges.
pub static NO_RANGES: RangeTree = RangeTree {
    ranges: Vec::new(),
    parent: Vec::new(),
    collective: Vec::new(),
    breaks: Vec::new(),
    hint: AtomicUsize::new(0),
};

impl RangeTree {
    pub fn build(mut ranges: Vec<Range>, names: &Names) -> RangeTree {
        ranges.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
        let n = ranges.len();
        let mut parent = vec![NONE; n];
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
            collective[i] = names.info[r.name as usize].collective
                || (parent[i] != NONE && collective[parent[i] as usize]);
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
            let top = open.last().copied().unwrap_or(NONE);
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
                    return NONE;
                }
                p - 1
            }
        };
        self.hint.store(i, Ordering::Relaxed);
        b[i].1
    }

    /// The range around the range `r` itself (its parent).
    pub fn parent_of(&self, r: &Range) -> u32 {
        let from = self.ranges.partition_point(|x| {
            (x.start, std::cmp::Reverse(x.end)) < (r.start, std::cmp::Reverse(r.end))
        });
        self.ranges[from..]
            .iter()
            .take_while(|x| x.start == r.start && x.end == r.end)
            .position(|x| x.name == r.name)
            .map_or(NONE, |k| self.parent[from + k])
    }

    pub fn name(&self, i: u32) -> Option<u32> {
        (i != NONE).then(|| self.ranges[i as usize].name)
    }

    pub fn in_collective(&self, i: u32) -> bool {
        i != NONE && self.collective[i as usize]
    }
}

/// The submission of one device command.
#[derive(Debug, Clone, Copy)]
pub struct Launch {
    pub tid: u64,
    pub ts: Ns,
    /// The API call the flow starts in (name id), when found.
    pub call: Option<u32>,
}

/// Host calls remembered per thread to name the call a JSON flow starts
/// in (the flow's `s` event comes right after its call).
const RECENT_CALLS: usize = 16;
/// Flows per thread waiting for their call (written before it).
const PENDING_FLOWS: usize = 4096;

/// What the index keeps of one rank.
#[derive(Debug)]
pub struct RankIndex {
    ranges: FastMap<u64, Vec<Range>>,
    pub trees: FastMap<u64, RangeTree>,
    pub flows: FastMap<u64, Launch>,
    recent: FastMap<u64, VecDeque<Range>>,
    pending: FastMap<u64, VecDeque<u64>>,
    pub host_first: Ns,
    pub host_last: Ns,
    pub first: Ns,
    pub last: Ns,
    /// Host slices still open at the end of the file: `(tid, start, name)`.
    unclosed: Vec<(u64, Ns, u32)>,
}

impl Default for RankIndex {
    fn default() -> Self {
        RankIndex {
            ranges: FastMap::default(),
            trees: FastMap::default(),
            flows: FastMap::default(),
            recent: FastMap::default(),
            pending: FastMap::default(),
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

    fn touch(&mut self, start: Ns, end: Ns) {
        self.first = self.first.min(start);
        self.last = self.last.max(end);
    }

    fn call(&mut self, tid: u64, r: Range) {
        let recent = self.recent.entry(tid).or_default();
        if recent.len() == RECENT_CALLS {
            recent.pop_front();
        }
        recent.push_back(r);
        if let Some(waiting) = self.pending.get_mut(&tid) {
            waiting.retain(|id| match self.flows.get_mut(id) {
                Some(l) if r.start <= l.ts && l.ts <= r.end => {
                    l.call = Some(r.name);
                    false
                }
                _ => true,
            });
        }
    }
}

/// The index of one file.
pub struct FileIndex {
    pub router: Router,
    pub ranks: Vec<RankIndex>,
    /// Process names (`RANK 0 HOST<node>`, device labels) by pid.
    pub processes: FastMap<u64, String>,
    /// Thread and engine names by (pid, tid).
    pub threads: FastMap<(u64, u64), String>,
    /// `(pid, tid)` of copy engines.
    pub copy_engines: FastSet<(u64, u64)>,
}

impl FileIndex {
    pub fn new(path_rank: Option<u32>) -> FileIndex {
        FileIndex {
            router: Router::new(path_rank),
            ranks: vec![RankIndex::default()],
            processes: FastMap::default(),
            threads: FastMap::default(),
            copy_engines: FastSet::default(),
        }
    }

    fn rank(&mut self, pid: u64) -> &mut RankIndex {
        let i = self.router.route(pid);
        while self.ranks.len() <= i {
            self.ranks.push(RankIndex::default());
        }
        &mut self.ranks[i]
    }

    /// Ends the pass: open slices end with their rank (as the report
    /// closes them), range trees are built, pending flows dropped.
    pub fn finish(&mut self, names: &Names) {
        while self.ranks.len() < self.router.ranks.len() {
            self.ranks.push(RankIndex::default());
        }
        for r in &mut self.ranks {
            for (tid, start, name) in std::mem::take(&mut r.unclosed) {
                if r.last >= start {
                    r.host_first = r.host_first.min(start);
                    r.host_last = r.host_last.max(r.last);
                    if names.info[name as usize].range {
                        let end = r.last;
                        r.ranges
                            .entry(tid)
                            .or_default()
                            .push(Range { start, end, name });
                    }
                }
            }
            for (tid, list) in std::mem::take(&mut r.ranges) {
                r.trees.insert(tid, RangeTree::build(list, names));
            }
            r.recent.clear();
            r.pending.clear();
        }
    }
}

impl Visitor for FileIndex {
    fn device_details(&self) -> bool {
        false
    }

    fn process(&mut self, pid: u64, label: &str) {
        self.router.process(pid, label);
        self.processes.insert(pid, label.to_string());
    }

    fn thread(&mut self, pid: u64, tid: u64, label: &str) {
        if label.contains("Copy Engine") {
            self.copy_engines.insert((pid, tid));
        }
        self.threads.insert((pid, tid), label.to_string());
    }

    fn flow_start(&mut self, pid: u64, tid: u64, id: u64, ts: Ns, call: Option<u32>) {
        let r = self.rank(pid);
        r.touch(ts, ts);
        let call = call.or_else(|| {
            r.recent
                .get(&tid)?
                .iter()
                .rev()
                .find(|c| c.start <= ts && ts <= c.end)
                .map(|c| c.name)
        });
        r.flows.insert(id, Launch { tid, ts, call });
        if call.is_none() {
            let waiting = r.pending.entry(tid).or_default();
            if waiting.len() == PENDING_FLOWS {
                waiting.pop_front();
            }
            waiting.push_back(id);
        }
    }

    fn slice(&mut self, names: &Names, s: &Slice<'_>) -> Result<()> {
        let r = self.rank(s.pid);
        if !s.closed {
            r.touch(s.start, s.start);
            r.unclosed.push((s.tid, s.start, s.name));
            return Ok(());
        }
        r.touch(s.start, s.end);
        if s.side == Side::Host {
            r.host_first = r.host_first.min(s.start);
            r.host_last = r.host_last.max(s.end);
            let range = Range {
                start: s.start,
                end: s.end,
                name: s.name,
            };
            if names.info[s.name as usize].range {
                r.ranges.entry(s.tid).or_default().push(range);
            } else {
                r.call(s.tid, range);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Names {
        let mut n = Names::default();
        for s in list {
            n.id(s.as_bytes(), || s.to_string());
        }
        n
    }

    #[test]
    fn innermost_and_parent() {
        // 0: outer 0..=100, 1: inner 10..=20, 2: coll 30..=40, 3: inner2 30..=35
        let n = names(&["a::outer", "a::inner", "oneCCL::API::ALLREDUCE", "a::x"]);
        let r = |start, end, name| Range { start, end, name };
        let t = RangeTree::build(
            vec![r(10, 20, 1), r(0, 100, 0), r(30, 40, 2), r(30, 35, 3)],
            &n,
        );
        let nm = |i| t.name(i);
        assert_eq!(nm(t.innermost(-1)), None);
        assert_eq!(nm(t.innermost(0)), Some(0));
        assert_eq!(nm(t.innermost(15)), Some(1));
        assert_eq!(nm(t.innermost(20)), Some(1));
        assert_eq!(nm(t.innermost(21)), Some(0));
        assert_eq!(nm(t.innermost(33)), Some(3));
        assert_eq!(nm(t.innermost(37)), Some(2));
        assert_eq!(nm(t.innermost(101)), None);
        assert!(t.in_collective(t.innermost(33)));
        assert!(!t.in_collective(t.innermost(15)));
        assert_eq!(nm(t.parent_of(&r(30, 35, 3))), Some(2));
        assert_eq!(nm(t.parent_of(&r(0, 100, 0))), None);
    }
}
