//! Host calls that wait for another thread of the rank
//! (docs/tracestat.md#critical-path): PyTorch's main thread waits while
//! the autograd engine's thread runs the backward pass and launches its
//! kernels. Read as the main thread's own time, that wait hid what the
//! other thread did (a slow hook, a sleep, its launches); linked, the path
//! goes through the other thread. Two forms:
//!
//! * a leaf call with nothing of its thread's chain inside it, whose name
//!   says it waits ([`waits_for_threads`]: Python's `run_backward`, traced
//!   with stacks), or a leaf host range, not itself autograd work, inside
//!   which another thread starts autograd engine work
//!   ([`is_autograd_work`]; a `record_function` range around the backward
//!   with nothing else traced in it): it waits for the other thread that
//!   launched device work (by name) or did that autograd work inside it,
//!   and whose last call there ends last;
//! * without stacks (torch.profiler's default), a stretch in which the
//!   thread starts or ends no call and is in no leaf call, and another
//!   thread starts autograd engine work ([`is_autograd_work`]): the thread
//!   waits for the one of those whose last call there ends last, and goes
//!   on when it is done (the wait takes no time of its own).
//!
//! In both, the other thread's chain is cut where that last call ends, the
//! wait's node waits for the cut, and the other thread's first time after
//! the wait began waits for the waiting thread's time before it.

use rustc_hash::FxHashMap as FastMap;
use unitrace_core::timeline::NameId;

use super::{CallRef, Edge, Ev, Graph, Node, NONE};
use crate::time::Ns;

/// Whether a host call of this name waits for other threads' work: the
/// autograd engine's `run_backward` (Kineto's `<built-in method
/// run_backward of torch._C._EngineBase object at 0x...>`).
pub fn waits_for_threads(name: &str) -> bool {
    name.contains("run_backward")
}

/// One call of thread `waiting` that waits for thread `on`.
pub struct ThreadWait {
    pub waiting: u64,
    pub on: u64,
    pub start: Ns,
    pub end: Ns,
    pub name: NameId,
    /// Where `on`'s last call inside the call ends.
    pub done: Ns,
}

/// The rank's thread waits and their nodes, filled as the chains are
/// built (`NONE` until then).
#[derive(Default)]
pub struct ThreadWaits {
    pub list: Vec<ThreadWait>,
    /// The waiting call's node.
    pub node: Vec<u32>,
    /// The waiting thread's node just before the call.
    pub before: Vec<u32>,
    /// The other thread's node that ends where its work in the call ends.
    pub cut: Vec<u32>,
    /// The other thread's first node after the call began.
    pub first: Vec<u32>,
    /// Per waited-for thread: `(start, wait)` by start.
    starts: FastMap<u64, Vec<(Ns, usize)>>,
    /// The waits with a link still to make, and which: bit 1 the other
    /// thread's first node after the waiting one's node before the call,
    /// bit 2 the call after the other thread's cut.
    open: Vec<(usize, u8)>,
}

/// Both links of a wait to make.
const BOTH: u8 = 3;

impl ThreadWaits {
    /// The waits `list`, their events added to the threads' events.
    fn new(list: Vec<ThreadWait>, per_tid: &mut FastMap<u64, Vec<(Ns, u8, Ev)>>) -> Self {
        let mut starts: FastMap<u64, Vec<(Ns, usize)>> = FastMap::default();
        let mut more: FastMap<u64, usize> = FastMap::default();
        for tw in &list {
            *more.entry(tw.waiting).or_default() += 1;
            *more.entry(tw.on).or_default() += 1;
        }
        for (tid, n) in more {
            if let Some(evs) = per_tid.get_mut(&tid) {
                evs.reserve_exact(n);
            }
        }
        for (w, tw) in list.iter().enumerate() {
            if let Some(evs) = per_tid.get_mut(&tw.waiting) {
                evs.push((tw.start, 3, Ev::ThreadWait(w as u32)));
            }
            if let Some(evs) = per_tid.get_mut(&tw.on) {
                evs.push((tw.done, 1, Ev::Cut(w as u32)));
            }
            starts.entry(tw.on).or_default().push((tw.start, w));
        }
        for s in starts.values_mut() {
            s.sort_unstable();
        }
        let n = list.len();
        ThreadWaits {
            list,
            node: vec![NONE; n],
            before: vec![NONE; n],
            cut: vec![NONE; n],
            first: vec![NONE; n],
            starts,
            open: (0..n).map(|w| (w, BOTH)).collect(),
        }
    }

    /// The waits on thread `tid`: `(call start, wait)` in time order.
    pub fn started_on(&self, tid: u64) -> Vec<(Ns, usize)> {
        self.starts.get(&tid).cloned().unwrap_or_default()
    }

    /// Makes each link of a wait whose two nodes were made (the graph is
    /// built a window at a time: the two links may come in different
    /// windows).
    pub fn link_ready(&mut self, nodes: &mut [Node]) {
        let mut open = std::mem::take(&mut self.open);
        open.retain_mut(|(w, todo)| {
            let w = *w;
            let (first, before) = (self.first[w], self.before[w]);
            if *todo & 1 != 0 && first != NONE && before != NONE {
                nodes[first as usize].add_pred(before, Edge::Thread);
                *todo &= !1;
            }
            let (node, cut) = (self.node[w], self.cut[w]);
            if *todo & 2 != 0 && node != NONE && cut != NONE {
                nodes[node as usize].add_pred(cut, Edge::Thread);
                *todo &= !2;
            }
            *todo != 0
        });
        self.open = open;
    }

    /// The nodes the links still to make refer to.
    pub fn open_refs(&self, refs: &mut Vec<u32>) {
        for &(w, todo) in &self.open {
            if todo & 1 != 0 {
                refs.extend([self.first[w], self.before[w]]);
            }
            if todo & 2 != 0 {
                refs.extend([self.node[w], self.cut[w]]);
            }
        }
    }

    /// Those references mapped by `map` (the graph's nodes renumbered).
    pub fn remap_open(&mut self, map: &dyn Fn(u32) -> u32) {
        for &(w, _) in &self.open {
            for r in [
                &mut self.first[w],
                &mut self.before[w],
                &mut self.node[w],
                &mut self.cut[w],
            ] {
                *r = map(*r);
            }
        }
    }
}

impl Graph<'_, '_> {
    /// The rank's thread waits (module comment), their events added to
    /// the threads' events; `calls` per thread sorted by start.
    pub(super) fn thread_waits(
        &self,
        per_tid: &mut FastMap<u64, Vec<(Ns, u8, Ev)>>,
        calls: &FastMap<u64, Vec<CallRef>>,
    ) -> ThreadWaits {
        let t = self.m.trace;
        let names: Vec<(bool, bool)> = (0..t.names.len())
            .map(|i| {
                let n = t.name(NameId(i as u32));
                (waits_for_threads(n), is_autograd_work(n))
            })
            .collect();
        if !names.iter().any(|&(w, a)| w || a) {
            return ThreadWaits::default();
        }
        let mut tids: Vec<u64> = per_tid.keys().copied().collect();
        tids.sort_unstable();
        let sorted = |v: Vec<Ns>| {
            let mut v = v;
            v.sort_unstable();
            v
        };
        let events: FastMap<u64, Vec<Ns>> = (tids.iter())
            .map(|&b| (b, sorted(per_tid[&b].iter().map(|e| e.0).collect())))
            .collect();
        let launches: FastMap<u64, Vec<Ns>> = (tids.iter())
            .map(|&b| {
                let l = per_tid[&b].iter().filter(|e| matches!(e.2, Ev::Launch(_)));
                (b, sorted(l.map(|e| e.0).collect()))
            })
            .collect();
        // Per thread: where its autograd engine calls start.
        let autograd: FastMap<u64, Vec<Ns>> = (tids.iter())
            .filter_map(|&b| {
                let starts: Vec<Ns> = (calls.get(&b)?.iter())
                    .map(|&r| self.call(r))
                    .filter(|c| names[c.4.index()].1)
                    .map(|c| c.0)
                    .collect();
                (!starts.is_empty()).then_some((b, starts))
            })
            .collect();
        let mut list = Vec::new();
        for &a in &tids {
            let Some(own_calls) = calls.get(&a) else {
                continue;
            };
            let own_events = &events[&a];
            // The other thread that did `work` inside `start..end` and
            // whose last call there ends last.
            let waited_for = |start: Ns, end: Ns, work: &FastMap<u64, Vec<Ns>>| {
                (tids.iter())
                    .filter(|&&b| b != a && work.get(&b).is_some_and(|w| inside(w, start, end)))
                    .filter_map(|&b| Some((self.last_inside(calls.get(&b)?, start, end)?, b)))
                    .max_by(|x, y| x.0.cmp(&y.0).then(y.1.cmp(&x.1)))
            };
            // Where other threads' autograd work starts, in time order.
            let mut work: Vec<Ns> = (autograd.iter())
                .filter(|(&b, _)| b != a)
                .flat_map(|(_, w)| w.iter().copied())
                .collect();
            work.sort_unstable();
            for (start, end, name, by_name) in self.waiting_calls(own_calls, &names, &work) {
                if inside(own_events, start, end) {
                    continue;
                }
                let found = if by_name {
                    waited_for(start, end, &launches)
                } else {
                    waited_for(start, end, &autograd)
                };
                if let Some((done, on)) = found {
                    list.push(ThreadWait {
                        waiting: a,
                        on,
                        start,
                        end,
                        name,
                        done,
                    });
                }
            }
            if work.is_empty() {
                continue;
            }
            for (start, end) in self.quiet_gaps(own_calls, &work) {
                if inside(own_events, start, end) {
                    continue;
                }
                if let Some((done, on)) = waited_for(start, end, &autograd) {
                    // The thread goes on when the other is done: the wait
                    // itself takes no time of its own.
                    let name = self.call(own_calls[0]).4;
                    list.push(ThreadWait {
                        waiting: a,
                        on,
                        start,
                        end: done,
                        name,
                        done,
                    });
                }
            }
        }
        ThreadWaits::new(list, per_tid)
    }

    /// The leaf calls of a thread (sorted by start) that wait for other
    /// threads: by their name (`by_name`), or host ranges, not themselves
    /// autograd work, inside which another thread's autograd work starts
    /// (`work`, sorted): `(start, end, name, by_name)`.
    fn waiting_calls(
        &self,
        calls: &[CallRef],
        names: &[(bool, bool)],
        work: &[Ns],
    ) -> Vec<(Ns, Ns, NameId, bool)> {
        let mut out = Vec::new();
        for (i, &r) in calls.iter().enumerate() {
            let (start, end, _, api, name) = self.call(r);
            if end <= start || !self.is_leaf(calls, i) {
                continue;
            }
            let (by_name, autograd) = names[name.index()];
            if by_name || (!api && !autograd && inside(work, start, end)) {
                out.push((start, end, name, by_name));
            }
        }
        out
    }

    /// The stretches of a thread (its calls sorted by start) in which it
    /// starts or ends no call and is in no leaf call, where it can only be
    /// waiting, that hold a start of `work` (sorted): one sweep of the
    /// calls, their ends taken in order from a heap (no sort of them all).
    fn quiet_gaps(&self, calls: &[CallRef], work: &[Ns]) -> Vec<(Ns, Ns)> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut open: BinaryHeap<Reverse<(Ns, bool)>> = BinaryHeap::new();
        let mut out = Vec::new();
        // The last boundary, whether a leaf was open after it, and the
        // next start of `work` to place.
        let (mut last, mut in_leaf, mut next) = (Ns::MIN, false, 0);
        let mut boundary = |t: Ns, leaf_open: bool, out: &mut Vec<(Ns, Ns)>| {
            if t > last {
                while next < work.len() && work[next] <= last {
                    next += 1;
                }
                if !in_leaf && last != Ns::MIN && work.get(next).is_some_and(|&w| w < t) {
                    out.push((last, t));
                }
                last = t;
            }
            in_leaf = leaf_open;
        };
        for (i, &r) in calls.iter().enumerate() {
            let (start, end, ..) = self.call(r);
            while let Some(&Reverse((e, _))) = open.peek().filter(|x| x.0 .0 <= start) {
                open.pop();
                let leaf_open = open.peek().is_some_and(|x| x.0 .1);
                boundary(e, leaf_open, &mut out);
            }
            let leaf = self.is_leaf(calls, i);
            boundary(start, leaf, &mut out);
            open.push(Reverse((end, leaf)));
        }
        while let Some(Reverse((e, _))) = open.pop() {
            let leaf_open = open.peek().is_some_and(|x| x.0 .1);
            boundary(e, leaf_open, &mut out);
        }
        out
    }

    /// Whether call `i` of `calls` (sorted by start, the longer first) has
    /// no call inside it: the next call starts at or after its end.
    fn is_leaf(&self, calls: &[CallRef], i: usize) -> bool {
        let end = self.call(calls[i]).1;
        calls.get(i + 1).is_none_or(|&n| self.call(n).0 >= end)
    }

    /// The latest end of the calls of `calls` (sorted by start) that run
    /// inside `start..end`.
    fn last_inside(&self, calls: &[CallRef], start: Ns, end: Ns) -> Option<Ns> {
        let from = calls.partition_point(|&r| self.call(r).0 < start);
        calls[from..]
            .iter()
            .map(|&r| self.call(r))
            .take_while(|c| c.0 < end)
            .filter(|c| c.1 <= end)
            .map(|c| c.1)
            .max()
    }
}

/// Whether a call of this name is the autograd engine's work on its own
/// thread (`autograd::engine::evaluate_function: MmBackward0`).
pub fn is_autograd_work(name: &str) -> bool {
    name.starts_with("autograd::engine::evaluate_function:")
}

/// Whether a time of `times` (sorted) falls strictly inside `start..end`.
fn inside(times: &[Ns], start: Ns, end: Ns) -> bool {
    let j = times.partition_point(|&x| x <= start);
    times.get(j).is_some_and(|&x| x < end)
}
