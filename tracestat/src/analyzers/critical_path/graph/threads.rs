//! Host calls that wait for another thread of the rank
//! (docs/tracestat.md#critical-path): PyTorch's main thread sits in
//! `run_backward` while the autograd engine's thread runs the backward
//! pass and launches its kernels. Read as the main thread's own host time,
//! that wait hid what the other thread did (a slow hook, a sleep, its
//! launches); linked, the path goes through the other thread.
//!
//! A call waits for another thread when its name says so
//! ([`waits_for_threads`]), it is a leaf (no call of its thread starts
//! inside it) and nothing of its thread's chain happens inside it. The
//! thread it waits for is the other thread that launched device work
//! inside it and whose last call inside it ends last. Its chain is cut
//! where that call ends, the waiting call's node waits for the cut, and
//! the other thread's first time after the call began waits for the
//! waiting thread's time before it.

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
}

impl ThreadWaits {
    /// The waits on thread `tid`: `(call start, wait)` in time order.
    pub fn started_on(&self, tid: u64) -> Vec<(Ns, usize)> {
        self.starts.get(&tid).cloned().unwrap_or_default()
    }

    /// Links each wait whose four nodes were made.
    pub fn link(&self, nodes: &mut [Node]) {
        for w in 0..self.list.len() {
            let (node, before) = (self.node[w], self.before[w]);
            let (cut, first) = (self.cut[w], self.first[w]);
            if [node, before, cut, first].contains(&NONE) {
                continue;
            }
            nodes[node as usize].add_pred(cut, Edge::Chain);
            nodes[first as usize].add_pred(before, Edge::Chain);
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
        let waiting: Vec<bool> = (0..t.names.len())
            .map(|i| waits_for_threads(t.name(NameId(i as u32))))
            .collect();
        if !waiting.contains(&true) {
            return ThreadWaits::default();
        }
        let mut tids: Vec<u64> = per_tid.keys().copied().collect();
        tids.sort_unstable();
        let times = |tid: u64, launches: bool| -> Vec<Ns> {
            let mut v: Vec<Ns> = per_tid[&tid]
                .iter()
                .filter(|e| !launches || matches!(e.2, Ev::Launch(_)))
                .map(|e| e.0)
                .collect();
            v.sort_unstable();
            v
        };
        let launches: FastMap<u64, Vec<Ns>> = tids.iter().map(|&b| (b, times(b, true))).collect();
        let mut list = Vec::new();
        for &a in &tids {
            let Some(own_calls) = calls.get(&a) else {
                continue;
            };
            let own_events = times(a, false);
            for (i, &r) in own_calls.iter().enumerate() {
                let (start, end, _, _, name) = self.call(r);
                if !waiting[name.index()] || end <= start {
                    continue;
                }
                let child = own_calls.get(i + 1).is_some_and(|&n| self.call(n).0 < end);
                let k = own_events.partition_point(|&x| x <= start);
                if child || own_events.get(k).is_some_and(|&x| x < end) {
                    continue;
                }
                let on = tids
                    .iter()
                    .filter(|&&b| b != a && launched_inside(&launches[&b], start, end))
                    .filter_map(|&b| Some((self.last_inside(calls.get(&b)?, start, end)?, b)))
                    .max_by(|x, y| x.0.cmp(&y.0).then(y.1.cmp(&x.1)));
                if let Some((done, on)) = on {
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
        }
        let mut starts: FastMap<u64, Vec<(Ns, usize)>> = FastMap::default();
        for (w, tw) in list.iter().enumerate() {
            if let Some(evs) = per_tid.get_mut(&tw.waiting) {
                evs.push((tw.start, 3, Ev::ThreadWait(w)));
            }
            if let Some(evs) = per_tid.get_mut(&tw.on) {
                evs.push((tw.done, 1, Ev::Cut(w)));
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
        }
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

/// Whether a launch of `launches` (sorted) falls inside `start..end`.
fn launched_inside(launches: &[Ns], start: Ns, end: Ns) -> bool {
    let j = launches.partition_point(|&x| x <= start);
    launches.get(j).is_some_and(|&x| x < end)
}
