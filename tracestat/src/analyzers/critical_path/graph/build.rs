//! The graph built up to a time, again and again (docs/tracestat.md#memory):
//! each host thread's chain and each engine's commands are built as far as
//! a window of steps needs, and the builders keep where they stopped, so
//! the next window's build goes on from there.
//!
//! Every node gets a sequence number, `(phase, list, place)`: a thread's
//! nodes, then an engine's, then the run's step ends, each list in the
//! order it is built. It is the order the nodes would have had built a
//! whole rank at once, and it breaks ties wherever node order did, so a
//! rank's answer does not depend on how its steps were grouped.

use rustc_hash::FxHashMap as FastMap;
use unitrace_core::timeline::NameId;

use super::window::GONE;
use super::*;

/// Sequence numbers: the phase in the top bits, then the list, then the
/// place in the list.
const PHASE_SHIFT: u32 = 60;
const LIST_SHIFT: u32 = 36;

/// The first sequence number of list `list` of phase `phase` (0 threads,
/// 1 engines, 2 the run's step ends).
pub(super) fn first_seq(phase: u64, list: u64) -> u64 {
    (phase << PHASE_SHIFT) | (list << LIST_SHIFT)
}

/// Per thread: its events `(time, tag, event)`.
type ThreadEvents = FastMap<u64, Vec<(Ns, u8, Ev)>>;

/// Where one host thread's chain stopped.
pub(super) struct ThreadBuild {
    /// Its events in time order; those before `at` are built.
    evs: Vec<(Ns, u8, Ev)>,
    at: usize,
    /// The chain's last node and the time it ends at.
    cursor: (Ns, u32),
    /// The node a point inside the current interval maps to.
    inside: u32,
    /// Waits on this thread by start, those before `started_at` placed.
    started: Vec<(Ns, usize)>,
    started_at: usize,
    seq: u64,
}

/// Where one engine's commands stopped: those before `at` are built.
pub(super) struct EngineBuild {
    kernels: Vec<u32>,
    at: usize,
    last: u32,
    seq: u64,
}

impl ThreadBuild {
    /// The nodes it refers to.
    pub(super) fn cursor_refs(&self) -> [u32; 2] {
        [self.cursor.1, self.inside]
    }

    pub(super) fn refs(&mut self) -> [&mut u32; 2] {
        [&mut self.cursor.1, &mut self.inside]
    }
}

impl EngineBuild {
    /// The node it refers to.
    pub(super) fn last_ref(&self) -> u32 {
        self.last
    }

    pub(super) fn refs(&mut self) -> &mut u32 {
        &mut self.last
    }
}

impl<'m, 'a> Graph<'m, 'a> {
    /// The host threads' events (launches, step ends, synchronisations,
    /// collective calls, waits for other threads) and calls, sorted once;
    /// their chains are built later, a window at a time.
    pub(super) fn prepare_threads(&mut self, order: &[usize], windows: &[StepWindow]) {
        let t = self.m.trace;
        self.colls = order
            .iter()
            .enumerate()
            .map(|(pos, &i)| (t.collectives[i].start, t.collectives[i].end, pos))
            .collect();
        let (mut per_tid, mut calls_by_tid) = self.gather_threads(order, windows);
        let mut tids: Vec<u64> = per_tid.keys().copied().collect();
        tids.sort_unstable();
        self.waits = self.thread_waits(&mut per_tid, &calls_by_tid);
        for tid in tids {
            let mut evs = per_tid.remove(&tid).unwrap_or_default();
            evs.sort_by_key(|e| (e.0, e.1));
            let calls = calls_by_tid.remove(&tid).unwrap_or_default();
            if self.blocking_calls(&calls, &mut evs) {
                evs.sort_by_key(|e| (e.0, e.1));
            }
            let index = self.threads.len() as u64;
            let (thread, first) = self.thread(calls);
            let first = first
                .unwrap_or(Ns::MAX)
                .min(evs.first().map_or(Ns::MAX, |e| e.0));
            self.threads.push(thread);
            let started = self.waits.started_on(tid);
            self.thread_builds.push(ThreadBuild {
                evs,
                at: 0,
                cursor: (first, NONE),
                inside: NONE,
                started,
                started_at: 0,
                seq: first_seq(0, index),
            });
        }
        self.host_coll = self.host_collectives();
    }

    /// Per thread with events: its events `(time, tag, event)` (tag 0 a
    /// launch, 1 a step end, 2 a collective call, 3 a call that waits for
    /// the device) and its calls, sorted by start (the longer first), as
    /// 4-byte references. Each list is sized exactly: they are held while
    /// the rank's windows are built (docs/tracestat.md#scale). The rank's
    /// API calls, the largest list this stage reads (35 MB of a 500 MB
    /// rank), are read twice: to count each thread's calls and waits (and
    /// see whether its calls come in order), then to fill them: five
    /// passes took a tenth more of the stage's instructions.
    fn gather_threads(
        &mut self,
        order: &[usize],
        windows: &[StepWindow],
    ) -> (ThreadEvents, FastMap<u64, Vec<CallRef>>) {
        let t = self.m.trace;
        // Threads numbered as met, the launching ones first.
        let mut threads = ThreadIndex::default();
        let mut ev_counts: Vec<usize> = Vec::new();
        for (tid, _) in self.thread_events(order, windows) {
            let k = threads.insert(tid);
            if k == ev_counts.len() {
                ev_counts.push(0);
            }
            ev_counts[k] += 1;
        }
        let mut call_counts = vec![0usize; threads.len()];
        // Per thread: the last API call's order key, and whether its API
        // calls came in order.
        let mut last: Vec<Option<(Ns, std::cmp::Reverse<Ns>)>> = vec![None; threads.len()];
        let mut api_in_order = vec![true; threads.len()];
        let waits: Vec<bool> = (0..t.names.len())
            .map(|i| {
                let name = NameId(i as u32);
                t.names.info(name).host_kind == HostKind::Sync || frees_device_memory(t.name(name))
            })
            .collect();
        for a in &t.api {
            let Some(k) = threads.get(a.tid) else {
                continue;
            };
            // Cached here, read by `call`.
            self.call_kind(a.name);
            call_counts[k] += 1;
            ev_counts[k] += usize::from(waits[a.name.index()]);
            let key = Some((a.start, std::cmp::Reverse(a.end)));
            api_in_order[k] &= last[k] <= key;
            last[k] = key;
        }
        for h in &t.host {
            if let Some(k) = threads.get(h.tid) {
                call_counts[k] += 1;
            }
        }
        let mut evs: Vec<Vec<(Ns, u8, Ev)>> =
            ev_counts.iter().map(|&n| Vec::with_capacity(n)).collect();
        for (tid, e) in self.thread_events(order, windows) {
            if let Some(k) = threads.get(tid) {
                evs[k].push(e);
            }
        }
        let mut calls: Vec<Vec<CallRef>> =
            call_counts.iter().map(|&n| Vec::with_capacity(n)).collect();
        for (i, a) in t.api.iter().enumerate() {
            let Some(k) = threads.get(a.tid) else {
                continue;
            };
            calls[k].push(i as CallRef);
            if waits[a.name.index()] {
                evs[k].push((a.start, 3, Ev::Sync(i as u32, NONE)));
            }
        }
        // Where each thread's host ranges start in its list.
        let api_calls: Vec<usize> = calls.iter().map(Vec::len).collect();
        // A thread that launches work has its ranges in order already
        // (the model's); another's are sorted with its calls.
        let mut ordered = vec![false; threads.len()];
        for (k, &tid) in threads.tids.iter().enumerate() {
            if let Some(order) = self.m.host_order.of_thread(tid) {
                let first = t.api.len() as CallRef;
                calls[k].extend(order.iter().map(|&i| first + i));
                ordered[k] = true;
            }
        }
        for (i, h) in t.host.iter().enumerate() {
            match threads.get(h.tid) {
                Some(k) if !ordered[k] => calls[k].push((t.api.len() + i) as CallRef),
                _ => {}
            }
        }
        for (k, list) in calls.iter_mut().enumerate() {
            sort_calls(list, (api_calls[k], api_in_order[k], ordered[k]), |r| {
                let c = self.call(r);
                (c.0, c.1)
            });
        }
        let calls = (threads.tids.iter().copied().zip(calls))
            .filter(|(_, calls)| !calls.is_empty())
            .collect();
        (threads.tids.into_iter().zip(evs).collect(), calls)
    }

    /// The launches, step ends and collective calls of the threads, as
    /// `(thread, (time, tag, event))`, in that order (the launching
    /// threads are met first).
    fn thread_events<'s>(
        &'s self,
        order: &'s [usize],
        windows: &'s [StepWindow],
    ) -> impl Iterator<Item = (u64, (Ns, u8, Ev))> + 's {
        let t = self.m.trace;
        let launches = (self.m.submissions.iter().enumerate())
            .filter_map(|(k, sub)| sub.map(|(tid, ts)| (tid, (ts, 0, Ev::Launch(k as u32)))));
        let steps = (windows.iter().enumerate())
            .filter_map(|(w, win)| Some((win.tid?, (win.end, 1, Ev::StepEnd(w as u32)))));
        let colls = order.iter().enumerate().filter_map(move |(pos, &i)| {
            let c = &t.collectives[i];
            (!c.on_device && c.end >= c.start)
                .then_some((c.tid, (c.start, 2, Ev::Coll(pos as u32))))
        });
        launches.chain(steps).chain(colls)
    }

    /// Per collective position: whether its host call gets a node of its
    /// own (it does unless it starts inside a call that waits), read from
    /// the threads' events as their chains will read them.
    fn host_collectives(&self) -> Vec<bool> {
        let mut host_coll = vec![false; self.coll_arrival.len()];
        for tb in &self.thread_builds {
            let mut cursor = tb.cursor.0;
            for &(ts, _, ev) in &tb.evs {
                if ts < cursor {
                    continue;
                }
                cursor = match ev {
                    Ev::Sync(call, _) => self.m.trace.api[call as usize].end,
                    Ev::ThreadWait(w) => self.waits.list[w as usize].end,
                    Ev::Coll(pos) => {
                        host_coll[pos as usize] = true;
                        self.colls[pos as usize].1
                    }
                    Ev::Launch(_) | Ev::StepEnd(_) | Ev::Cut(_) => ts,
                };
            }
        }
        host_coll
    }

    /// Each engine's commands in time order, and the item names of those
    /// that get a node of their own interned in the order a whole build
    /// meets them (names are numbered as they are first met).
    pub(super) fn prepare_engines(&mut self, order: &[usize]) {
        let t = self.m.trace;
        for (key, kernels) in engine_groups(&t.kernels) {
            for &k in &kernels {
                if self.within(k as usize, order).is_none() {
                    self.item_name(t.kernels[k as usize].name, true);
                }
            }
            let list = self.engines.len() as u64;
            self.engines.push(key);
            self.engine_builds.push(EngineBuild {
                kernels,
                at: 0,
                last: NONE,
                seq: first_seq(1, list),
            });
        }
    }

    /// The collective call (its position) a communication kernel runs
    /// inside, when that call stands for it: a device collective, or a
    /// host call with a node of its own.
    fn within(&self, k: usize, order: &[usize]) -> Option<usize> {
        let t = self.m.trace;
        if self.m.classes[k] != Class::Communication {
            return None;
        }
        let kr = &t.kernels[k];
        let i = self.colls.partition_point(|c| c.0 <= kr.start);
        let pos = self.colls[..i]
            .iter()
            .rev()
            .take(8)
            .find(|c| c.1 >= kr.end)
            .map(|c| c.2)?;
        (t.collectives[order[pos]].on_device || self.host_coll[pos]).then_some(pos)
    }

    /// Every thread's chain up to `h`: its events at or before `h`.
    pub(super) fn advance_threads(&mut self, h: Ns) {
        let mut builds = std::mem::take(&mut self.thread_builds);
        for (index, tb) in builds.iter_mut().enumerate() {
            self.advance_thread(tb, index as u32, h);
        }
        self.thread_builds = builds;
        self.waits.link_ready(&mut self.nodes);
    }

    fn advance_thread(&mut self, tb: &mut ThreadBuild, index: u32, h: Ns) {
        self.next_seq = tb.seq;
        while let Some(&(ts, _, ev)) = tb.evs.get(tb.at) {
            if ts > h {
                break;
            }
            tb.at += 1;
            if ts < tb.cursor.0 {
                // Inside the last interval (or out of order): the
                // interval stands for it.
                match ev {
                    Ev::Launch(k) => self.set_launch(k as usize, tb.inside),
                    Ev::StepEnd(w) => {
                        let w = w as usize;
                        self.step_end[w] = self.mark(tb.cursor.1, tb.cursor.0);
                        self.step_host[w] = tb.cursor.1;
                    }
                    Ev::Cut(w) => self.waits.cut[w as usize] = tb.cursor.1,
                    Ev::Sync(..) | Ev::Coll(..) | Ev::ThreadWait(_) => {}
                }
                continue;
            }
            let p = self.piece_to(&mut tb.cursor, ts, index);
            // The first of this thread's time after another thread began
            // to wait for it.
            while let Some(&(_, w)) = tb.started.get(tb.started_at).filter(|s| s.0 < ts) {
                self.waits.first[w] = p;
                tb.started_at += 1;
            }
            self.chain_event(tb, p, ts, ev);
        }
        tb.seq = self.next_seq;
        // The events built are dropped once they are half the list.
        if tb.at > 1024 && tb.at * 2 > tb.evs.len() {
            tb.evs.drain(..tb.at);
            tb.evs.shrink_to_fit();
            tb.at = 0;
        }
    }

    /// Event `ev` at `ts` of a thread's chain, after its node `p`.
    fn chain_event(&mut self, tb: &mut ThreadBuild, p: u32, ts: Ns, ev: Ev) {
        match ev {
            Ev::Launch(k) => self.set_launch(k as usize, p),
            Ev::StepEnd(w) => {
                self.step_end[w as usize] = self.mark(p, ts);
                self.step_host[w as usize] = p;
            }
            Ev::Cut(w) => self.waits.cut[w as usize] = p,
            Ev::Sync(call, kernel) => {
                let (end, name) = (
                    self.m.trace.api[call as usize].end,
                    self.m.trace.api[call as usize].name,
                );
                tb.cursor = self.interval(p, (ts, end), name, kernel);
                tb.inside = tb.cursor.1;
            }
            Ev::ThreadWait(w) => {
                let w = w as usize;
                let (end, name) = (self.waits.list[w].end, self.waits.list[w].name);
                tb.cursor = self.interval(p, (ts, end), name, THREADS);
                tb.inside = tb.cursor.1;
                (self.waits.node[w], self.waits.before[w]) = (tb.cursor.1, p);
            }
            Ev::Coll(pos) => {
                let pos = pos as usize;
                let end = self.colls[pos].1;
                let mut a = Node::new(ts, ts, What::Arrival);
                a.add_pred(p, Edge::Chain);
                let a = self.push(a);
                let e = self.push(Node::new(end, end, What::End { coll: pos as u32 }));
                self.coll_arrival[pos] = a;
                self.coll_end[pos] = e;
                self.live_colls.push(pos as u32);
                tb.inside = a;
                tb.cursor = (end, e);
            }
        }
    }

    fn set_launch(&mut self, k: usize, node: u32) {
        self.launch_node[k] = node;
        if node != NONE {
            self.pending_launch.push(k as u32);
        }
    }

    /// Every engine's commands that start by `h`; the latest launch of a
    /// command that starts by `h` but was launched after it (host and
    /// device clocks apart), which the build must reach first.
    pub(super) fn advance_engines(&mut self, h: Ns, order: &[usize]) -> Option<Ns> {
        let mut builds = std::mem::take(&mut self.engine_builds);
        let mut later = None;
        for (eng, eb) in builds.iter_mut().enumerate() {
            self.next_seq = eb.seq;
            while let Some(&k) = eb.kernels.get(eb.at) {
                let k = k as usize;
                if self.m.trace.kernels[k].start > h {
                    break;
                }
                if let Some((_, ts)) = self.m.submissions[k].filter(|s| s.1 > h) {
                    later = later.max(Some(ts));
                    break;
                }
                eb.at += 1;
                eb.last = self.kernel(k, eng as u32, eb.last, order);
            }
            eb.seq = self.next_seq;
        }
        self.engine_builds = builds;
        later
    }

    /// Kernel `k`'s node on engine `eng` after the engine's last node;
    /// a communication kernel inside a collective call is that call (its
    /// arrival and end). The engine's last node after it.
    fn kernel(&mut self, k: usize, eng: u32, mut queue: u32, order: &[usize]) -> u32 {
        let t = self.m.trace;
        let kr = &t.kernels[k];
        let launch = std::mem::replace(&mut self.launch_node[k], NONE);
        if queue == GONE {
            queue = NONE;
        }
        if let Some(pos) = self.within(k, order) {
            let c = &t.collectives[order[pos]];
            if c.on_device && self.coll_arrival[pos] == NONE {
                let mut a = Node::new(c.start, c.start, What::Arrival);
                a.add_pred(launch, Edge::Launch);
                a.add_pred(queue, Edge::Queue);
                let a = self.push(a);
                let e = self.push(Node::new(c.end, c.end, What::End { coll: pos as u32 }));
                self.engine[a as usize] = eng;
                self.engine[e as usize] = eng;
                self.coll_arrival[pos] = a;
                self.coll_end[pos] = e;
                self.live_colls.push(pos as u32);
            }
            let end = self.coll_end[pos];
            self.kernel_node[k] = end;
            self.live_kernels.push(k as u32);
            return end;
        }
        let kind = Kind::of_class(self.m.classes[k]);
        let name = self.item_name(kr.name, true);
        let mut n = Node::new(
            kr.start,
            kr.end.min(self.end_at[k]).max(kr.start),
            What::Kernel {
                kind,
                name,
                full: kr.name,
            },
        );
        n.add_pred(launch, Edge::Launch);
        n.add_pred(queue, Edge::Queue);
        let v = self.push(n);
        self.engine[v as usize] = eng;
        self.kernel_node[k] = v;
        self.live_kernels.push(k as u32);
        v
    }
}

/// The kernels per engine, `(device, engine thread)` in order, each
/// engine's by start in trace order at equal starts (a stable sort's
/// order). Each engine's kernels are usually in time order in the trace
/// already, so each sort finds one run.
pub(super) fn engine_groups(kernels: &[crate::ingest::KernelRun]) -> Vec<((u32, u64), Vec<u32>)> {
    let mut group_of: FastMap<(u32, u64), usize> = FastMap::default();
    let mut groups: Vec<((u32, u64), Vec<u32>)> = Vec::new();
    for (k, kr) in kernels.iter().enumerate() {
        let key = (kr.device, kr.tid);
        let g = *group_of.entry(key).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(k as u32);
    }
    groups.sort_unstable_by_key(|g| g.0);
    for (_, list) in &mut groups {
        list.sort_by_key(|&k| kernels[k as usize].start);
    }
    groups
}

/// Threads numbered from 0, looked up by id with the last one found kept
/// aside: a trace lists a thread's calls in runs, and a hash per call was
/// most of the time of gathering them (docs/tracestat.md#scale).
#[derive(Default)]
struct ThreadIndex {
    tids: Vec<u64>,
    index: FastMap<u64, usize>,
    last: Option<(u64, usize)>,
}

impl ThreadIndex {
    /// Thread `tid`'s number, a new one (the next) when it had none.
    fn insert(&mut self, tid: u64) -> usize {
        if let Some(k) = self.get(tid) {
            return k;
        }
        let k = self.tids.len();
        self.tids.push(tid);
        self.index.insert(tid, k);
        self.last = Some((tid, k));
        k
    }

    fn len(&self) -> usize {
        self.tids.len()
    }

    /// Thread `tid`'s number, `None` for a thread not in the index.
    fn get(&mut self, tid: u64) -> Option<usize> {
        match self.last {
            Some((t, k)) if t == tid => Some(k),
            _ => {
                let k = *self.index.get(&tid)?;
                self.last = Some((tid, k));
                Some(k)
            }
        }
    }
}
