//! One rank's dependency graph and its reduction per step
//! (docs/tracestat.md#critical-path).
//!
//! Nodes are the rank's work with the times it ran: kernels, the host
//! threads' time cut at the moments other work depends on (launches,
//! synchronisations, collective calls, step ends), synchronisation calls,
//! and the arrival at and the end of each collective call. A node waits for
//! its predecessors: a kernel for its launch (the submission link), the
//! command before it on its engine (in-order queues) and, when neither
//! explains its start, the work of another engine of its device that ended
//! last before it; host time for the thread's time before it; a
//! synchronisation call for the device work that ended last before the call
//! returned. The predecessor that ended last *binds* the node; the gap from
//! its end to the node's start is the node's delay (launch latency, a queue
//! gap). Following the binding predecessors back from a point tiles the time
//! from where the walk stops to the point exactly.
//!
//! Each step is then reduced to its *sinks* (every collective arrival in it,
//! then its end), each with the chain that set its time, back to its
//! *source*: the step's start or the end of a collective call of the rank,
//! whose time only the other ranks decide. This is all a rank keeps: the
//! cross-rank solve (`solve.rs`) joins the sinks through the collectives.
//! The graph is built and reduced a window of steps at a time
//! (`graph/build.rs`, `graph/window.rs`): what a rank holds of it is about
//! a window's, not the rank's (docs/tracestat.md#memory).
//! With `--what-if` rules each sink also keeps, per source, the chain's
//! length under every rule (the [`KEEP`] sources that come latest in the
//! run as recorded), so the steps can be replayed across ranks.

use rustc_hash::FxHashMap as FastMap;
use serde::{Deserialize, Serialize};
use unitrace_core::timeline::NameId;

use super::packed::{ChainItems, SinkLens};
pub use super::reduced::{Sink, StepGraph, Total};
use super::rules::{self, Rule, Target};
use super::spill::{self, Spill};
use super::steps::{step_windows, StepWindow};
pub use super::stretch::{Item, Kind};
use super::sweep::{self, Stretch, Stretches, SweepCall};
use crate::analyzers::collectives::call_order;
use crate::classify::{Class, HostKind};
use crate::labels::{self, Label};
use crate::rank_model::RankModel;
use crate::search::partition_point_near;
use crate::time::Ns;

mod build;
mod replay;
mod threads;
mod window;

pub use replay::BEFORE;

const NONE: u32 = u32::MAX;
/// The `kernel` of a [`What::Sync`] that waits for another host thread's
/// work rather than the device's ([`threads`]).
const THREADS: u32 = NONE - 1;
/// A kernel that starts this much later than its launch and its queue
/// allow waited for something else: the other engines' work is looked at.
const ENGINE_WAIT_NS: Ns = 1_000;
/// A command may end this much after the blocking call that waited for it
/// returned: host and device clocks apart (docs/tracestat.md#critical-path).
const CLOCK_SLACK_NS: Ns = 50_000;
/// Stretches a sink's chain keeps at most; a longer chain's neighbours are
/// joined (its totals stay exact), so that a rank's part stays small.
pub const MAX_ITEMS: usize = 256;
/// Sources kept per node for the what-if replay.
pub const KEEP: usize = 4;

/// A collective call of the rank, in the order of the collectives
/// analyzer's part (its position is the call's index there).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CollPoint {
    pub name: u32,
    pub arrival: Ns,
    pub end: Ns,
    /// `(step, sink)` of its arrival, when the call is in a step's graph.
    pub sink: Option<(u32, u32)>,
}

/// Commands submitted to one engine and not finished, over time
/// (`--annotate` only).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EngineDepth {
    pub label: String,
    /// `(time, depth from then on)`.
    pub points: Vec<(Ns, u32)>,
}

/// What the critical path keeps of one rank (its `--partial` part).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
pub struct RankPath {
    /// One label per name, shared with the other ranks (`labels.rs`).
    #[serde(deserialize_with = "labels::deserialize")]
    pub names: Vec<Label>,
    /// The steps; once spilled (`spill`), their heads only: no sinks and
    /// no host range end lengths (read them through the solver).
    pub steps: Vec<StepGraph>,
    pub colls: Vec<CollPoint>,
    /// Queue depth per engine, for `--annotate` (never in a partial).
    #[serde(skip)]
    pub queue_depth: Vec<EngineDepth>,
    /// Where the steps' bodies went, when they left memory
    /// (docs/tracestat.md#memory); a partial carries them whole.
    #[serde(skip)]
    pub spill: Option<Spill>,
}

impl RankPath {
    /// Moves the steps' bodies out of memory (`spill.rs`); they stay
    /// when small or when the spill file cannot be written.
    pub fn spill_steps(&mut self) {
        if self.spill.is_none() && self.steps.iter().any(|s| !s.sinks.is_empty()) {
            self.spill = spill::spill(&mut self.steps, spill::spill_at_least());
        }
    }

    /// Step `k`'s count of sinks, spilled or not.
    pub fn sink_count(&self, k: usize) -> usize {
        match &self.spill {
            Some(s) => s.sinks(k),
            None => self.steps.get(k).map_or(0, |s| s.sinks.len()),
        }
    }

    /// The fewest what-if lengths a source of the rank's sinks and host
    /// range ends has (`usize::MAX` for none), and whether any sink has
    /// lengths.
    pub fn lens_widths(&self) -> (usize, bool) {
        match &self.spill {
            Some(s) => s.widths,
            None => spill::lens_widths(&self.steps),
        }
    }

    /// Steps `ks` whole, bodies included (read back when spilled).
    pub fn load(&self, ks: std::ops::Range<usize>) -> std::io::Result<Vec<StepGraph>> {
        match &self.spill {
            Some(s) => s.load(&self.steps, ks),
            None => Ok(self.steps.get(ks).map(<[_]>::to_vec).unwrap_or_default()),
        }
    }
}

/// A partial carries a rank's steps whole: spilled ones are read back a
/// few at a time as they are written.
impl Serialize for RankPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("RankPath", 3)?;
        st.serialize_field("names", &self.names)?;
        st.serialize_field("steps", &WholeSteps(self))?;
        st.serialize_field("colls", &self.colls)?;
        st.end()
    }
}

struct WholeSteps<'a>(&'a RankPath);

impl Serialize for WholeSteps<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let p = self.0;
        if p.spill.is_none() {
            return p.steps.serialize(s);
        }
        let mut seq = s.serialize_seq(Some(p.steps.len()))?;
        for from in (0..p.steps.len()).step_by(256) {
            let ks = from..(from + 256).min(p.steps.len());
            for step in p.load(ks).map_err(S::Error::custom)? {
                seq.serialize_element(&step)?;
            }
        }
        seq.end()
    }
}

/// How a node waits for a predecessor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edge {
    Launch,
    Queue,
    Engine,
    Chain,
    Device,
    /// Between host threads: a wait for another thread ([`threads`]).
    Thread,
}

#[derive(Debug, Clone, Copy)]
enum What {
    Kernel {
        kind: Kind,
        name: u32,
        full: NameId,
    },
    /// Host time of a thread (index into `Graph::threads`).
    Piece {
        thread: u32,
    },
    /// A call that waits for the device: a synchronisation, or a launch
    /// call that returned only after its command finished (a blocking
    /// copy); `kernel` is that command (index into the trace's kernels).
    Sync {
        name: u32,
        kernel: u32,
    },
    Arrival,
    End {
        coll: u32,
    },
    /// A step's end.
    Mark,
}

impl What {
    /// Whether its end is set by device work (a kernel, a collective's
    /// end, a host wait for the device) rather than by a host thread.
    fn on_device(&self) -> bool {
        match self {
            What::Kernel { .. } | What::End { .. } | What::Mark => true,
            What::Sync { kernel, .. } => *kernel != THREADS,
            What::Piece { .. } | What::Arrival => false,
        }
    }

    /// Order of nodes that end at the same time: what others wait for
    /// first (a collective's end, a command a blocking call waited for),
    /// arrivals and step ends last.
    fn rank(&self) -> u8 {
        match self {
            What::End { .. } => 0,
            What::Kernel { .. } => 1,
            What::Piece { .. } => 2,
            What::Sync { .. } => 3,
            What::Arrival => 4,
            What::Mark => 5,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Node {
    start: Ns,
    end: Ns,
    /// Up to three predecessors (`NONE` for none) and the edge to each,
    /// kept apart: paired, each pair took 8 bytes (docs/tracestat.md#scale).
    preds: [u32; 3],
    edges: [Edge; 3],
    what: What,
}

impl Node {
    fn new(start: Ns, end: Ns, what: What) -> Node {
        Node {
            start,
            end,
            preds: [NONE; 3],
            edges: [Edge::Chain; 3],
            what,
        }
    }

    fn add_pred(&mut self, p: u32, e: Edge) {
        if p == NONE {
            return;
        }
        if let Some(i) = self.preds.iter().position(|&s| s == NONE) {
            self.preds[i] = p;
            self.edges[i] = e;
        }
    }
}

/// One host thread: its calls, and as disjoint labelled stretches what it
/// was doing in the step being walked.
#[derive(Debug, Default)]
struct Thread {
    /// Its calls and ranges, by start (the longer first at one start).
    calls: Vec<CallRef>,
    stretches: Stretches,
    /// Per range rule (in rule order, `None` for other rules): the time
    /// covered, for the what-if durations.
    cover: Vec<Option<Coverage>>,
    /// With rules: the time in launch calls, for `launch=`.
    launches: Option<LaunchCover>,
}

/// The time a thread spent in launch calls, gathered from its stretches
/// as they are generated (a sweep of its own cost 1.6% of a report).
#[derive(Debug, Default)]
struct LaunchCover {
    cover: Coverage,
    /// Stretches ending by this time were gathered.
    gathered_to: Ns,
    /// Overlaps up to this time are complete.
    complete_to: Ns,
}

/// Sorted disjoint intervals with prefix sums: overlap with a stretch.
#[derive(Debug, Default)]
struct Coverage {
    starts: Vec<Ns>,
    ends: Vec<Ns>,
    /// `sum[i]`: length of intervals before `i`.
    sum: Vec<Ns>,
}

impl Coverage {
    /// Adds an interval that starts no earlier than the last one.
    fn push(&mut self, s: Ns, e: Ns) {
        if self.sum.is_empty() {
            self.sum.push(0);
        }
        let total = self.sum[self.sum.len() - 1];
        match self.ends.last_mut() {
            Some(last) if s <= *last => {
                let grown = e.max(*last) - *last;
                *last += grown;
                let n = self.sum.len();
                self.sum[n - 1] = total + grown;
            }
            _ => {
                self.starts.push(s);
                self.ends.push(e);
                self.sum.push(total + (e - s));
            }
        }
    }

    fn new(mut v: Vec<(Ns, Ns)>) -> Coverage {
        v.sort();
        let mut c = Coverage::default();
        for (s, e) in v {
            match c.ends.last_mut() {
                Some(last) if s <= *last => *last = (*last).max(e),
                _ => {
                    c.starts.push(s);
                    c.ends.push(e);
                }
            }
        }
        let mut acc = 0;
        for (s, e) in c.starts.iter().zip(&c.ends) {
            c.sum.push(acc);
            acc += e - s;
        }
        c.sum.push(acc);
        c
    }

    /// Length covered up to `t`; `near` is where the last search ended
    /// (the replay goes forward along a thread), updated.
    fn upto(&self, t: Ns, near: &mut usize) -> Ns {
        let i = partition_point_near(&self.starts, *near, |&s| s < t);
        *near = i;
        if i == 0 {
            // What intervals dropped before covered (`drop_before`).
            return self.sum.first().copied().unwrap_or(0);
        }
        self.sum[i - 1] + (t.min(self.ends[i - 1]) - self.starts[i - 1])
    }

    /// Drops the intervals that end by `t`: no overlap asked for later
    /// starts before it (the graph is reduced a window at a time, [`window`]).
    fn drop_before(&mut self, t: Ns) {
        let i = self.ends.partition_point(|&e| e <= t);
        if i == 0 {
            return;
        }
        // `sum` keeps its first entry: overlaps are differences of sums.
        self.starts.drain(..i);
        self.ends.drain(..i);
        self.sum.drain(..i);
        if self.starts.capacity() > 2 * self.starts.len() + 1024 {
            self.starts.shrink_to_fit();
            self.ends.shrink_to_fit();
            self.sum.shrink_to_fit();
        }
    }

    fn overlap(&self, a: Ns, b: Ns, near: &mut usize) -> Ns {
        if b <= a {
            0
        } else {
            let before = self.upto(a, near);
            self.upto(b, near) - before
        }
    }
}

/// Item names of one rank, interned.
#[derive(Default)]
struct Interner {
    map: FastMap<String, u32>,
    list: Vec<String>,
    /// [`joined_label`]'s ids by `(name, count)`: long chains join the same
    /// stretches step after step, and spelling and hashing the label each
    /// time cost 8% of a Kineto report.
    joined: FastMap<(u32, u64), u32>,
}

impl Interner {
    /// The id of [`joined_label`] of name `most` and `count` stretches.
    fn joined_id(&mut self, most: u32, count: u64) -> u32 {
        if let Some(&i) = self.joined.get(&(most, count)) {
            return i;
        }
        let label = joined_label(&self.list[most as usize], count);
        let i = self.id(&label);
        self.joined.insert((most, count), i);
        i
    }

    fn id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.map.get(name) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(name.to_string());
        self.map.insert(name.to_string(), i);
        i
    }
}

/// Whether a host API call submits work (its time is launch overhead).
fn is_launch_call(name: &str) -> bool {
    ["Launch", "Append", "Enqueue", "Memcpy", "Memset", "Submit"]
        .iter()
        .any(|w| name.contains(w))
}

/// Whether a call frees memory in a way that first waits for the device's
/// work (CUDA's and HIP's frees synchronise the device implicitly): on the
/// path it waits for the device as a synchronisation does
/// (docs/tracestat.md#critical-path).
fn frees_device_memory(name: &str) -> bool {
    let base = name.strip_suffix("_v2").unwrap_or(name);
    matches!(
        base,
        "cudaFree"
            | "cudaFreeHost"
            | "cudaFreeArray"
            | "cudaFreeMipmappedArray"
            | "cuMemFree"
            | "cuMemFreeHost"
            | "cuArrayDestroy"
            | "hipFree"
            | "hipFreeHost"
            | "hipHostFree"
            | "hipFreeArray"
    )
}

/// What a host thread's chain is cut at: a launch (kernel), a step's end
/// (window), a call that waits for the device (the API call, and the
/// command it waits for or `NONE`), a collective call (its position). Held
/// for a whole rank while its windows are built: 12 bytes, each time read
/// from the trace rather than copied (docs/tracestat.md#scale).
#[derive(Clone, Copy)]
enum Ev {
    Launch(u32),
    StepEnd(u32),
    Sync(u32, u32),
    Coll(u32),
    /// The start of a call that waits for another thread ([`threads`]).
    ThreadWait(u32),
    /// Where the thread a call waits for ended its work inside the call.
    Cut(u32),
}

/// A host call or range of one thread: `(start, end, kind, API call, name)`.
type Call = (Ns, Ns, Kind, bool, NameId);

/// A call by reference into the trace: an API call's index, or the number
/// of API calls plus a host range's index. A thread's calls are the
/// largest list of the graph's build; as references they take 4 bytes a
/// call instead of a 24-byte [`Call`] (docs/tracestat.md#scale).
type CallRef = u32;

/// The rank's graph: the part of it a window of steps needs, built as far
/// as that window ([`build`]) and then cut back ([`window`]).
struct Graph<'m, 'a> {
    m: &'m RankModel<'a>,
    names: Interner,
    nodes: Vec<Node>,
    /// Per node: its binding predecessor and the edge to it.
    bind: Vec<(u32, Edge)>,
    threads: Vec<Thread>,
    /// Per node: the engine (index into `engines`) of device work, or
    /// `NONE`.
    engine: Vec<u32>,
    /// Per node: its place in the order of a whole rank's build, which
    /// breaks ties between nodes ([`build`]).
    seq: Vec<u64>,
    /// The sequence number of the next node made.
    next_seq: u64,
    /// That of the next step end the run's device work sets.
    run_seq: u64,
    /// Where each thread's chain and each engine's commands stopped.
    thread_builds: Vec<build::ThreadBuild>,
    engine_builds: Vec<build::EngineBuild>,
    waits: threads::ThreadWaits,
    /// Per collective position: whether its host call has a node.
    host_coll: Vec<bool>,
    /// `(start, end, position)` of the collective calls.
    colls: Vec<(Ns, Ns, usize)>,
    /// Kernels whose launch's node was made and the kernel's not yet.
    pending_launch: Vec<u32>,
    /// Synchronisations whose wait for the device is not yet linked (they
    /// end after the graph built so far).
    pending_syncs: Vec<u32>,
    /// Kernels and collectives whose nodes are in the graph held.
    live_kernels: Vec<u32>,
    live_colls: Vec<u32>,
    /// Per step window with a marker thread: the kernels launched in it,
    /// `tail_kernels[tail_first[w]..tail_first[w + 1]]`, by index.
    tail_first: Vec<u32>,
    tail_kernels: Vec<u32>,
    /// `(device, engine thread)` of each engine.
    engines: Vec<(u32, u64)>,
    /// Per name id: its item name, interned (`NONE` until seen).
    name_of: Vec<u32>,
    /// Per name id: the kind of a host call of that name.
    call_kind: Vec<Option<Kind>>,
    coll_arrival: Vec<u32>,
    coll_end: Vec<u32>,
    /// With `--what-if`: the nodes in link order, and each node's place in it.
    order: Vec<u32>,
    pos: Vec<u32>,
    /// Per step window: its end's node.
    step_end: Vec<u32>,
    /// Per window: the node its host range ends with (`NONE`: none).
    step_host: Vec<u32>,
    launch_node: Vec<u32>,
    /// Per kernel: the latest end its node may have (a blocking call's
    /// return, see `blocking_calls`).
    end_at: Vec<Ns>,
    /// Per kernel: its node (or its collective's end).
    kernel_node: Vec<u32>,
    rules: &'m [Rule],
    /// Per rule: kernels (by name id) it changes.
    kernel_rule: Vec<Vec<bool>>,
    /// This rank is the one of a `rank:N=median` rule.
    median_rank: Vec<bool>,
    /// The rules by the nodes they can change.
    lanes: replay::RuleLanes,
    /// Per thread: where the last walk found its stretches. Sinks are
    /// walked in time order, so the next search starts near there.
    walk_hint: Vec<usize>,
    /// The list a walk fills, kept from chain to chain: no allocation per
    /// chain, and grown only to the longest (docs/tracestat.md#scale).
    walk_items: Vec<Item>,
    /// The tests' hook: every stretch found by a sweep of its thread's
    /// calls, as when a walk leaves the stretches generated.
    sweep_again: bool,
    /// The replay's lists ([`replay::ReplayBufs`] of the run's lane
    /// count), kept from step to step.
    replay_bufs: Option<Box<dyn std::any::Any>>,
}

/// With `UNITRACE_TEST_SWEEP_AGAIN` set, walks read no generated stretch:
/// the tests compare the two ways (`tracestat/tests/critical_path.rs`).
fn sweep_again() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("UNITRACE_TEST_SWEEP_AGAIN").is_some())
}

/// Builds one rank's graph and reduces its steps, a window of steps at a
/// time ([`window`]).
pub fn observe(m: &RankModel<'_>, rules: &[Rule], annotate: bool) -> RankPath {
    let windows = step_windows(m.steps, m.trace);
    let mut g = Graph::new(m, rules, windows.len());
    let order = call_order(&m.trace.collectives);
    g.prepare_threads(&order, &windows);
    g.prepare_engines(&order);
    let mut points: Vec<CollPoint> = order
        .iter()
        .map(|&i| {
            let c = &m.trace.collectives[i];
            CollPoint {
                name: g.names.id(&c.name),
                arrival: c.start,
                end: c.end,
                sink: None,
            }
        })
        .collect();
    g.prepare_tails(&windows);
    let whole_run = windows.first().is_some_and(|w| w.id.is_none());
    let plan: Vec<std::ops::Range<usize>> = if whole_run {
        std::iter::once(0..windows.len()).collect()
    } else {
        window::plan(&g.launches_per_window(&windows))
    };
    let mut out = Reduced {
        steps: Vec::with_capacity(windows.len()),
        id_before: None,
    };
    for (i, range) in plan.iter().enumerate() {
        let next = plan.get(i + 1).map(|r| windows[r.start].start);
        g.reduce_window(&windows, range.clone(), next, &order, &mut points, &mut out);
    }
    let queue_depth = if annotate {
        g.queue_depth()
    } else {
        Vec::new()
    };
    RankPath {
        names: g.names.list.iter().map(|n| labels::label(n)).collect(),
        steps: out.steps,
        colls: points,
        queue_depth,
        spill: None,
    }
}

/// The steps reduced so far, and the number of the last.
struct Reduced {
    steps: Vec<StepGraph>,
    id_before: Option<i64>,
}

impl Graph<'_, '_> {
    /// Builds the graph as far as the steps of `range` need, reduces them,
    /// and drops what no step from `next` on reaches.
    fn reduce_window(
        &mut self,
        windows: &[StepWindow],
        range: std::ops::Range<usize>,
        next: Option<Ns>,
        order: &[usize],
        points: &mut [CollPoint],
        out: &mut Reduced,
    ) {
        let whole_run = windows[range.start].id.is_none();
        let first_new = self.nodes.len();
        let h = self.build_to(windows, range.clone(), order, whole_run);
        self.step_tails(range.clone());
        // The same for both: the waits add links, not nodes.
        let ends = self.device_ends();
        self.waits(first_new, h, &ends);
        if whole_run {
            self.whole_run_end();
        } else {
            self.device_step_ends(windows, range.clone(), ends);
        }
        self.bind_all();
        if !self.rules.is_empty() {
            self.order = self.in_order();
            self.pos = vec![0; self.nodes.len()];
            for (i, &v) in self.order.iter().enumerate() {
                self.pos[v as usize] = i as u32;
            }
        }
        self.reduce_steps(windows, range.clone(), points, out);
        if let Some(next) = next {
            self.compact(next, h, range.end..windows.len(), windows);
        }
    }

    /// Builds the graph up to a time that holds the steps of `range` and
    /// the device work launched in them; that time.
    fn build_to(
        &mut self,
        windows: &[StepWindow],
        range: std::ops::Range<usize>,
        order: &[usize],
        whole_run: bool,
    ) -> Ns {
        if whole_run {
            self.advance_threads(Ns::MAX);
            self.advance_engines(Ns::MAX, order);
            return Ns::MAX;
        }
        let t = self.m.trace;
        let mut h = Ns::MIN;
        for w in range.clone() {
            h = h.max(windows[w].end);
            for &k in self.tail_of(w) {
                h = h.max(t.kernels[k as usize].end);
            }
        }
        loop {
            self.advance_threads(h);
            let mut need = self.advance_engines(h, order).unwrap_or(h);
            for w in range.clone() {
                need = need.max(self.tail(w).map_or(h, |(end, _)| end));
            }
            if need <= h {
                return h;
            }
            h = need;
        }
    }

    /// The steps of `range` reduced, in order (the graph holds them).
    fn reduce_steps(
        &mut self,
        windows: &[StepWindow],
        range: std::ops::Range<usize>,
        points: &mut [CollPoint],
        out: &mut Reduced,
    ) {
        let m = self.m;
        let mut arrivals: Vec<(Ns, u32, usize)> = (self.live_colls.iter())
            .map(|&pos| (self.coll_arrival[pos as usize], pos as usize))
            .filter(|&(a, _)| a != NONE && a != window::GONE)
            .map(|(a, pos)| (self.nodes[a as usize].end, a, pos))
            .collect();
        arrivals.sort();
        // A step's end node is kept for its window (`window::carried`);
        // a dropped one reads as none rather than an index past the graph.
        let ended = |k: &usize| ![NONE, window::GONE].contains(&self.step_end[*k]);
        // (window, id, start, end, end node) of each step with an end.
        let spans: Vec<(Option<i64>, Ns, Ns, u32)> = range
            .clone()
            .filter(ended)
            .map(|k| {
                let w = &windows[k];
                let start = if w.id.is_none() {
                    m.first.min(w.start)
                } else {
                    w.start
                };
                let end_node = self.step_end[k];
                (w.id, start, self.nodes[end_node as usize].end, end_node)
            })
            .collect();
        let kernel_ns = self.kernel_time(&spans);
        let hosts: Vec<u32> = range.filter(ended).map(|k| self.step_host[k]).collect();
        for ((&(id, start, end, end_node), kernel_ns), host) in
            spans.iter().zip(kernel_ns).zip(hosts)
        {
            let index = out.steps.len() as u32;
            let ends = (end_node, host);
            // Replayed after the step numbered before it, as the cross-rank
            // replay does (docs/tracestat.md#what-if).
            let after = (out.id_before)
                .zip(id)
                .is_some_and(|(b, s)| b.checked_add(1) == Some(s));
            out.id_before = id;
            let mut step = self.step((index, after), (start, end), ends, &arrivals, points);
            step.id = id;
            step.kernel_ns = kernel_ns;
            out.steps.push(step);
        }
    }
}

impl<'m, 'a> Graph<'m, 'a> {
    fn new(m: &'m RankModel<'a>, rules: &'m [Rule], windows: usize) -> Self {
        let t = m.trace;
        let kernel_rule = rules
            .iter()
            .map(|r| match r.target {
                Target::Kernel(_) => (0..t.names.len())
                    .map(|i| r.matches_kernel(t.name(NameId(i as u32))))
                    .collect(),
                _ => Vec::new(),
            })
            .collect();
        let median_rank = rules
            .iter()
            .map(|r| matches!(r.target, Target::RankMedian(n) if t.rank == Some(n)))
            .collect();
        let mut names = Interner::default();
        for n in GAP_NAMES {
            names.id(n);
        }
        Graph {
            m,
            names,
            // Reserved exactly as each part of the graph is built
            // (`reserve_nodes`): the node list is the largest thing a rank
            // holds while it is reduced (docs/tracestat.md#scale).
            nodes: Vec::new(),
            bind: Vec::new(),
            threads: Vec::new(),
            engine: Vec::new(),
            seq: Vec::new(),
            next_seq: 0,
            run_seq: build::first_seq(2, 0),
            thread_builds: Vec::new(),
            engine_builds: Vec::new(),
            waits: threads::ThreadWaits::default(),
            host_coll: Vec::new(),
            colls: Vec::new(),
            pending_launch: Vec::new(),
            pending_syncs: Vec::new(),
            live_kernels: Vec::new(),
            live_colls: Vec::new(),
            tail_first: Vec::new(),
            tail_kernels: Vec::new(),
            engines: Vec::new(),
            name_of: vec![NONE; t.names.len()],
            call_kind: vec![None; t.names.len()],
            coll_arrival: vec![NONE; t.collectives.len()],
            coll_end: vec![NONE; t.collectives.len()],
            step_end: vec![NONE; windows],
            step_host: vec![NONE; windows],
            order: Vec::new(),
            pos: Vec::new(),
            launch_node: vec![NONE; t.kernels.len()],
            kernel_node: vec![NONE; t.kernels.len()],
            end_at: vec![Ns::MAX; t.kernels.len()],
            rules,
            kernel_rule,
            median_rank,
            lanes: replay::RuleLanes::of(rules),
            walk_hint: Vec::new(),
            walk_items: Vec::new(),
            sweep_again: sweep_again(),
            replay_bufs: None,
        }
    }

    fn push(&mut self, n: Node) -> u32 {
        self.nodes.push(n);
        self.engine.push(NONE);
        self.seq.push(self.next_seq);
        self.next_seq += 1;
        (self.nodes.len() - 1) as u32
    }

    /// A call's node that waits (for the device, or another thread) after
    /// the chain's node `p`; the cursor after it.
    fn interval(&mut self, p: u32, (start, end): (Ns, Ns), name: NameId, kernel: u32) -> (Ns, u32) {
        let name = self.item_name(name, false);
        let mut n = Node::new(start, end, What::Sync { name, kernel });
        n.add_pred(p, Edge::Chain);
        (end, self.push(n))
    }

    /// Launch calls that returned only after their command finished (a
    /// copy to pageable memory, `cudaMemcpy`): they wait for the device
    /// like a synchronisation, for that command. `calls` and `evs` are one
    /// thread's, in time order; whether any was found.
    fn blocking_calls(&mut self, calls: &[CallRef], evs: &mut Vec<(Ns, u8, Ev)>) -> bool {
        let t = self.m.trace;
        // (call start, end, call, the latest-ending command it waited for)
        let mut waited: Vec<(Ns, Ns, CallRef, usize)> = Vec::new();
        let mut i = 0;
        let mut last_api: Option<(Call, CallRef)> = None;
        for &(ts, _, ev) in evs.iter() {
            let Ev::Launch(k) = ev else { continue };
            let k = k as usize;
            while let Some(&r) = calls.get(i) {
                let c = self.call(r);
                if c.0 > ts {
                    break;
                }
                if c.3 {
                    last_api = Some((c, r));
                }
                i += 1;
            }
            let Some(((s, e, _, _, name), call)) = last_api else {
                continue;
            };
            let kr = &t.kernels[k];
            let waits = kr.start < e && kr.end <= e + CLOCK_SLACK_NS;
            if e < ts || !waits || t.names.info(name).host_kind == HostKind::Sync {
                continue;
            }
            match waited.last_mut() {
                Some(w) if w.0 == s => {
                    if t.kernels[w.3].end < kr.end {
                        w.3 = k;
                    }
                }
                _ => waited.push((s, e, call, k)),
            }
        }
        evs.reserve_exact(waited.len());
        for &(s, e, call, k) in &waited {
            // Host and device clocks a little apart: the command ends
            // when the call returns (docs/tracestat.md#critical-path).
            self.end_at[k] = self.end_at[k].min(e);
            evs.push((s, 3, Ev::Sync(call, k as u32)));
        }
        !waited.is_empty()
    }

    /// The call `r` refers to; an API call's kind was cached by `chains`.
    fn call(&self, r: CallRef) -> Call {
        let t = self.m.trace;
        let r = r as usize;
        match t.api.get(r) {
            Some(a) => {
                let kind = self.call_kind[a.name.index()].unwrap_or(Kind::Host);
                (a.start, a.end, kind, true, a.name)
            }
            None => {
                let h = &t.host[r - t.api.len()];
                (h.start, h.end, Kind::Host, false, h.name)
            }
        }
    }

    /// The item name of a trace name (a kernel's without its launch
    /// shape), interned once per name.
    fn item_name(&mut self, name: NameId, kernel: bool) -> u32 {
        let i = name.index();
        if self.name_of[i] == NONE {
            let text = if kernel {
                self.m.kinds[i].short_name.as_str()
            } else {
                self.m.trace.name(name)
            };
            self.name_of[i] = self.names.id(text);
        }
        self.name_of[i]
    }

    /// The kind of a host API call's time, by its name (cached).
    fn call_kind(&mut self, name: NameId) -> Kind {
        if let Some(k) = self.call_kind[name.index()] {
            return k;
        }
        let t = self.m.trace;
        let k = if t.names.info(name).host_kind == HostKind::Sync {
            Kind::SyncWait
        } else if is_launch_call(t.name(name)) {
            Kind::Launch
        } else {
            Kind::Host
        };
        self.call_kind[name.index()] = Some(k);
        k
    }

    /// A step end at `t` after node `p`.
    fn mark(&mut self, p: u32, t: Ns) -> u32 {
        let mut n = Node::new(t, t, What::Mark);
        n.add_pred(p, Edge::Chain);
        self.push(n)
    }

    /// The chain node ending at `t` (host time since the cursor).
    fn piece_to(&mut self, cursor: &mut (Ns, u32), t: Ns, thread: u32) -> u32 {
        if cursor.0 == t && cursor.1 != NONE {
            return cursor.1;
        }
        let mut n = Node::new(cursor.0.min(t), t, What::Piece { thread });
        n.add_pred(cursor.1, Edge::Chain);
        let p = self.push(n);
        *cursor = (t, p);
        p
    }

    /// A thread's calls and the coverage the what-if rules need, and where
    /// its first stretch starts (docs/tracestat.md#critical-path).
    fn thread(&mut self, calls: Vec<CallRef>) -> (Thread, Option<Ns>) {
        let t = self.m.trace;
        // Item names interned in call order, before the sweep reads them.
        for &r in &calls {
            let name = self.call(r).4;
            self.item_name(name, false);
        }
        let cover: Vec<Option<Coverage>> = self
            .rules
            .iter()
            .map(|r| match &r.target {
                Target::Range(re) => Some(Coverage::new(
                    calls
                        .iter()
                        .map(|&r| self.call(r))
                        .filter(|c| re.is_match(t.name(c.4)))
                        .map(|c| (c.0, c.1))
                        .collect(),
                )),
                _ => None,
            })
            .collect();
        let launches = (!self.rules.is_empty()).then(|| LaunchCover {
            gathered_to: Ns::MIN,
            complete_to: Ns::MIN,
            ..LaunchCover::default()
        });
        let first = sweep::first_start(calls.len(), &|i| self.sweep_call(calls[i]));
        let thread = Thread {
            calls,
            stretches: Stretches::default(),
            cover,
            launches,
        };
        (thread, first)
    }

    /// A call as the stretches' sweep reads it (its name interned by
    /// `thread`).
    fn sweep_call(&self, r: CallRef) -> SweepCall {
        let (s, e, kind, _, name) = self.call(r);
        (s, e, kind, self.name_of[name.index()])
    }

    /// Every thread's stretches of `a..b` held for the walks (the rest
    /// dropped), the walks' hints moved with them.
    fn hold_stretches(&mut self, a: Ns, b: Ns) {
        let mut threads = std::mem::take(&mut self.threads);
        for (i, th) in threads.iter_mut().enumerate() {
            let Thread {
                calls, stretches, ..
            } = th;
            let gone = stretches.hold(a, b, calls.len(), &|i| self.sweep_call(calls[i]));
            if let Some(h) = self.walk_hint.get_mut(i) {
                *h = h.saturating_sub(gone);
            }
            if let Some(l) = &mut th.launches {
                let (done, next) = th.stretches.final_held();
                // Stretches met again after a sweep started over are
                // gathered already.
                let from = done.partition_point(|s| s.0 < l.gathered_to);
                for s in &done[from..] {
                    if s.2 == Kind::Launch {
                        l.cover.push(s.0, s.1);
                    }
                    l.gathered_to = s.1;
                }
                l.complete_to = l.complete_to.max(next);
            }
        }
        self.threads = threads;
    }

    /// Per step window with a marker thread, the kernels launched in it
    /// (by their host time, up to the window's end), read by the step's
    /// tail.
    fn prepare_tails(&mut self, windows: &[StepWindow]) {
        let mut per: Vec<(u32, u32)> = Vec::new();
        // Launches come nearly in time order: each search starts at the
        // last one's answer.
        let mut near = 0;
        for (k, sub) in self.m.submissions.iter().enumerate() {
            let Some((_, ts)) = *sub else { continue };
            near = partition_point_near(windows, near, |w| w.start <= ts);
            let Some(w) = near.checked_sub(1) else {
                continue;
            };
            if windows[w].tid.is_some() && ts <= windows[w].end {
                per.push((w as u32, k as u32));
            }
        }
        // By window, then by kernel: the order a scan of the kernels met
        // them in.
        per.sort();
        self.tail_first = vec![0; windows.len() + 1];
        for &(w, _) in &per {
            self.tail_first[w as usize + 1] += 1;
        }
        for w in 0..windows.len() {
            self.tail_first[w + 1] += self.tail_first[w];
        }
        self.tail_kernels = per.into_iter().map(|p| p.1).collect();
    }

    fn tail_of(&self, w: usize) -> &[u32] {
        &self.tail_kernels[self.tail_first[w] as usize..self.tail_first[w + 1] as usize]
    }

    /// The command launched in window `w` that ended last (the first of
    /// those at one end), with its end; `NONE` for one not yet built.
    fn tail(&self, w: usize) -> Option<(Ns, u32)> {
        let mut last: Option<(Ns, u32)> = None;
        for &k in self.tail_of(w) {
            let node = self.kernel_node[k as usize];
            if node == NONE || node == window::GONE {
                continue;
            }
            let end = self.nodes[node as usize].end;
            if last.is_none_or(|l| end > l.0) {
                last = Some((end, node));
            }
        }
        last
    }

    /// A step ends when its marker range has ended and the device work
    /// launched in it has finished (docs/tracestat.md#critical-path): its
    /// end waits for the command launched in it that ended last.
    fn step_tails(&mut self, windows: std::ops::Range<usize>) {
        for w in windows {
            let mark = self.step_end[w];
            if let (Some((end, node)), true) = (self.tail(w), ![NONE, window::GONE].contains(&mark))
            {
                let m = &mut self.nodes[mark as usize];
                if end > m.end {
                    m.start = end;
                    m.end = end;
                }
                m.add_pred(node, Edge::Device);
            }
        }
    }

    /// The device work held that the waits search, by end (then by
    /// sequence): `(end, sequence, node)`.
    fn device_ends(&self) -> Vec<(Ns, u64, u32)> {
        let mut ends: Vec<(Ns, u64, u32)> = (0..self.nodes.len() as u32)
            .filter(|&v| self.device_end(v))
            .map(|v| (self.nodes[v as usize].end, self.seq[v as usize], v))
            .collect();
        ends.sort();
        ends
    }

    /// Waits the trace does not link, of the nodes made from `from` on and
    /// the synchronisations left for later: a kernel (or a device
    /// collective's arrival) that starts later than its launch and queue
    /// allow waits for the other engine of its device that finished last
    /// before it; a synchronisation call waits for the device work that
    /// finished last before it returned (left for later when it returns
    /// after `h`, how far the graph is built).
    fn waits(&mut self, from: usize, h: Ns, ends: &[(Ns, u64, u32)]) {
        let mut todo = std::mem::take(&mut self.pending_syncs);
        todo.extend(from as u32..self.nodes.len() as u32);
        for v in todo {
            let n = self.nodes[v as usize];
            match n.what {
                What::Kernel { .. } | What::Arrival => self.engine_wait(v, ends),
                // Its other thread's work was linked with the chains.
                What::Sync {
                    kernel: THREADS, ..
                } => {}
                What::Sync { .. } if n.end > h => self.pending_syncs.push(v),
                What::Sync { kernel, .. } if kernel != NONE => {
                    let k = match self.kernel_node[kernel as usize] {
                        window::GONE => NONE,
                        k => k,
                    };
                    self.nodes[v as usize].add_pred(k, Edge::Device);
                }
                What::Sync { .. } => {
                    let i = ends.partition_point(|e| e.0 <= n.end);
                    if i > 0 {
                        self.nodes[v as usize].add_pred(ends[i - 1].2, Edge::Device);
                    }
                }
                _ => {}
            }
        }
    }

    /// A kernel or arrival `v` that starts later than its launch and queue
    /// allow waits for the other engine of its device that finished last
    /// before it.
    fn engine_wait(&mut self, v: u32, ends: &[(Ns, u64, u32)]) {
        let n = self.nodes[v as usize];
        let eng = self.engine[v as usize];
        if eng == NONE {
            return;
        }
        let dev = self.engines[eng as usize].0;
        let ready = n
            .preds
            .iter()
            .filter(|&&p| p != NONE)
            .map(|&p| self.nodes[p as usize].end)
            .max();
        if ready.is_some_and(|r| n.start - r <= ENGINE_WAIT_NS) {
            return;
        }
        let i = ends.partition_point(|e| e.0 <= n.start);
        let found = ends[..i]
            .iter()
            .rev()
            .take(16)
            .take_while(|e| ready.is_none_or(|r| e.0 > r))
            .find(|e| {
                let g = self.engine[e.2 as usize];
                g != NONE && g != eng && self.engines[g as usize].0 == dev
            });
        if let Some(&(_, _, p)) = found {
            self.nodes[v as usize].add_pred(p, Edge::Engine);
        }
    }

    /// The whole run as one step: it ends with the work that ends last.
    fn whole_run_end(&mut self) {
        let last = (0..self.nodes.len())
            .filter(|&v| !matches!(self.nodes[v].what, What::Mark))
            .max_by_key(|&v| (self.nodes[v].end, std::cmp::Reverse(self.seq[v])));
        if let Some(v) = last {
            let t = self.nodes[v].end;
            self.next_seq = self.run_seq;
            self.step_end[0] = self.mark(v as u32, t);
            self.run_seq = self.next_seq;
        }
    }

    /// Steps without a marker thread (found from the period of GPU work,
    /// docs/tracestat.md#steps) end when the last device work that ends in
    /// their window ends: the step's end waits for it. Host time is left
    /// out: the window is the device's, and a host thread's time runs on
    /// to the next step's launches.
    fn device_step_ends(
        &mut self,
        windows: &[StepWindow],
        range: std::ops::Range<usize>,
        ends: Vec<(Ns, u64, u32)>,
    ) {
        if windows[range.clone()].iter().all(|w| w.tid.is_some()) {
            return;
        }
        // The last at one end is the one made first.
        let mut ends: Vec<(Ns, std::cmp::Reverse<u64>, u32)> = ends
            .into_iter()
            .map(|(e, s, v)| (e, std::cmp::Reverse(s), v))
            .collect();
        ends.sort();
        for w in range {
            let win = &windows[w];
            if win.tid.is_some() {
                continue;
            }
            let i = ends.partition_point(|e| e.0 <= win.end);
            let Some(&(t, _, v)) = i.checked_sub(1).map(|i| &ends[i]) else {
                continue;
            };
            if t > win.start {
                self.next_seq = self.run_seq;
                self.step_end[w] = self.mark(v, t);
                self.run_seq = self.next_seq;
            }
        }
    }

    /// The order every link must go forward in: by end, then what waits
    /// for what at the same time, then start (docs/tracestat.md#critical-path).
    fn key(&self, v: u32) -> (Ns, u8, Ns, u64) {
        let x = &self.nodes[v as usize];
        (x.end, x.what.rank(), x.start, self.seq[v as usize])
    }

    /// Drops links that would go back in that order (clocks apart, bad
    /// data: the graph stays acyclic) and finds each node's binding
    /// predecessor, the one that ended last.
    fn bind_all(&mut self) {
        let n = self.nodes.len();
        let mut bind = Vec::with_capacity(n);
        for v in 0..n as u32 {
            let own = self.key(v);
            let mut node = self.nodes[v as usize];
            let mut best = (NONE, Edge::Chain);
            for (p, &e) in node.preds.iter_mut().zip(&node.edges) {
                if *p == NONE {
                    continue;
                }
                if self.key(*p) >= own {
                    *p = NONE;
                    continue;
                }
                let pe = self.nodes[*p as usize].end;
                if best.0 == NONE || pe > self.nodes[best.0 as usize].end {
                    best = (*p, e);
                }
            }
            self.nodes[v as usize] = node;
            bind.push(best);
        }
        self.bind = bind;
    }

    /// The nodes in link order (for the replay).
    fn in_order(&self) -> Vec<u32> {
        // The nodes are built a thread's or an engine's at a time, each
        // list in time order: a few sorted runs, which the stable sort
        // finds and merges (the keys are unique: the same order as any
        // sort). The end, the key's first part, sits beside each node
        // so that most comparisons read no node (measured: the sort took
        // 4% of a run with rules when every comparison read two).
        let mut by_end: Vec<(Ns, u32)> = (0..self.nodes.len() as u32)
            .map(|v| (self.nodes[v as usize].end, v))
            .collect();
        by_end.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| self.key(a.1).cmp(&self.key(b.1)))
        });
        by_end.into_iter().map(|(_, v)| v).collect()
    }

    /// Where node `v`'s own work starts: its start, or its binding
    /// predecessor's end when that is later.
    fn eff_start(&self, v: u32) -> Ns {
        let n = &self.nodes[v as usize];
        match self.bind[v as usize].0 {
            NONE => n.start,
            b => n.start.max(self.nodes[b as usize].end),
        }
    }

    /// The delay before `v`: from its binding predecessor's end to its
    /// start, and how it is named.
    /// The gap before node `v`: its length, kind and name (a [`GAP_NAMES`]
    /// id).
    fn gap(&self, v: u32) -> (Ns, Kind, u32) {
        let n = &self.nodes[v as usize];
        let (b, e) = self.bind[v as usize];
        if b == NONE {
            return (0, Kind::Idle, gap_id::NO_EARLIER_WORK);
        }
        let g = (n.start - self.nodes[b as usize].end).max(0);
        let (kind, name) = match e {
            Edge::Launch => (Kind::Launch, gap_id::LAUNCH_LATENCY),
            Edge::Queue => (Kind::Idle, gap_id::QUEUE_GAP),
            Edge::Engine => (Kind::Idle, gap_id::OTHER_ENGINE),
            Edge::Thread => (Kind::Idle, gap_id::THREAD_HANDOFF),
            Edge::Chain | Edge::Device => (Kind::Idle, gap_id::GAP),
        };
        (g, kind, name)
    }

    /// Reduces step `index` (`start..end`; its end node, and the node its
    /// host range ends with, `NONE` for a step without one): the chain of
    /// every sink in it. `after`: it comes after the rank's step numbered
    /// before it, whose replay moves it.
    fn step(
        &mut self,
        (index, after): (u32, bool),
        (start, end): (Ns, Ns),
        (end_node, host_node): (u32, u32),
        arrivals: &[(Ns, u32, usize)],
        points: &mut [CollPoint],
    ) -> StepGraph {
        let from = arrivals.partition_point(|a| a.0 <= start);
        let to = arrivals.partition_point(|a| a.0 <= end);
        let mut sink_nodes: Vec<(u32, Option<usize>)> = arrivals[from..to]
            .iter()
            .filter(|a| points[a.2].sink.is_none())
            .map(|a| (a.1, Some(a.2)))
            .collect();
        sink_nodes.sort_by_key(|s| self.seq[s.0 as usize]);
        sink_nodes.push((end_node, None));
        self.hold_stretches(start, end);
        let nodes: Vec<u32> = sink_nodes.iter().map(|s| s.0).collect();
        let replayed = (start, end, end_node, !after);
        // The lanes' arrays: `2 + rules` long at least (`replay.rs`).
        let (mut lens, host_end) = match 2 + self.rules.len() {
            _ if self.rules.is_empty() => (Vec::new(), None),
            0..=8 => self.replayed::<8>(replayed, &nodes, host_node),
            9..=16 => self.replayed::<16>(replayed, &nodes, host_node),
            17..=32 => self.replayed::<32>(replayed, &nodes, host_node),
            w if w <= rules::MOST_RULES + 2 => {
                self.replayed::<{ rules::MOST_RULES + 2 }>(replayed, &nodes, host_node)
            }
            // More rules than that are refused with the arguments
            // (`plan.rs`).
            _ => (Vec::new(), None),
        };
        lens.resize_with(nodes.len(), SinkLens::default);
        let mut sinks = Vec::with_capacity(sink_nodes.len());
        for ((v, pos), lens) in sink_nodes.into_iter().zip(lens) {
            let (source, items, totals) = self.chain(v, start);
            if let Some(pos) = pos {
                points[pos].sink = Some((index, sinks.len() as u32));
            }
            sinks.push(Sink {
                time: self.nodes[v as usize].end,
                source,
                items,
                totals,
                lens,
            });
        }
        StepGraph {
            id: None,
            start,
            end,
            sinks,
            kernel_ns: 0,
            host_end,
        }
    }

    /// The step's replay (`(start, end, end node, first)`, as
    /// [`Graph::replay`]): the lengths of the chains of each of `sinks`,
    /// and of the host range's end (`host_node`), replayed across ranks
    /// to move the rank's next step (docs/tracestat.md#what-if).
    fn replayed<const S: usize>(
        &mut self,
        replayed: (Ns, Ns, u32, bool),
        sinks: &[u32],
        host_node: u32,
    ) -> (Vec<SinkLens>, Option<(Ns, SinkLens)>) {
        let mut bufs: Box<replay::ReplayBufs<S>> = (self.replay_bufs.take())
            .and_then(|b| b.downcast().ok())
            .unwrap_or_default();
        self.replay::<S>(&mut bufs, replayed);
        let l = &bufs.replay;
        let lens = sinks
            .iter()
            .map(|&v| SinkLens::from_entries(l.of(self.pos[v as usize])))
            .collect();
        let host_end = (![NONE, window::GONE].contains(&host_node)
            && l.has(self.pos[host_node as usize]))
        .then(|| {
            (
                self.nodes[host_node as usize].end,
                SinkLens::from_entries(l.of(self.pos[host_node as usize])),
            )
        });
        self.replay_bufs = Some(bufs);
        (lens, host_end)
    }

    /// Kernel time in each step (`(id, start, end, end node)`, by start).
    fn kernel_time(&self, spans: &[(Option<i64>, Ns, Ns, u32)]) -> Vec<Ns> {
        let mut out = vec![0; spans.len()];
        // Nodes are built an engine's at a time in time order: each search
        // starts at the last one's answer.
        let mut i = 0;
        for n in &self.nodes {
            if !matches!(n.what, What::Kernel { .. }) {
                continue;
            }
            // Steps are disjoint but for their device tails: a kernel
            // meets the few steps that start before it ends.
            i = partition_point_near(spans, i, |s| s.1 < n.end);
            for k in (0..i).rev().take(4) {
                let s = &spans[k];
                let overlap = n.end.min(s.2) - n.start.max(s.1);
                if overlap > 0 {
                    out[k] += overlap;
                }
            }
        }
        out
    }

    /// The binding chain from sink `v` back to its source, in time order,
    /// in `rev` (emptied first).
    fn walk(&self, sink: u32, s: Ns, hint: &mut [usize], rev: &mut Vec<Item>) -> Option<u32> {
        rev.clear();
        let mut v = sink;
        let source = loop {
            let n = &self.nodes[v as usize];
            if let What::End { coll } = n.what {
                if v != sink {
                    break Some(coll);
                }
            }
            let es = self.eff_start(v);
            self.own_items(v, es.max(s), n.end, rev, hint);
            if es <= s {
                break None;
            }
            let (b, _) = self.bind[v as usize];
            let (g, kind, name) = self.gap(v);
            if b == NONE {
                push_rev(rev, s, es, Kind::Idle, name);
                break None;
            }
            let be = self.nodes[b as usize].end;
            if g > 0 {
                push_rev(rev, be.max(s), n.start, kind, name);
            }
            if be <= s {
                break None;
            }
            v = b;
        };
        rev.reverse();
        merge_items(rev);
        source
    }

    /// A chain's totals and its stretches, at most [`MAX_ITEMS`].
    fn chain(&mut self, sink: u32, s: Ns) -> (Option<u32>, ChainItems, Vec<Total>) {
        let mut hint = std::mem::take(&mut self.walk_hint);
        hint.resize(self.threads.len(), 0);
        let mut items = std::mem::take(&mut self.walk_items);
        let source = self.walk(sink, s, &mut hint, &mut items);
        self.walk_hint = hint;
        if items.len() <= MAX_ITEMS {
            let packed = ChainItems::new(&items);
            self.walk_items = items;
            return (source, packed, Vec::new());
        }
        let mut totals: FastMap<(Kind, u32), (u64, Ns)> = FastMap::default();
        for it in &items {
            let t = totals.entry((it.kind, it.name)).or_default();
            t.0 += 1;
            t.1 += it.dur;
        }
        let mut totals: Vec<Total> = totals
            .into_iter()
            .map(|((k, n), (c, d))| (k, n, c, d))
            .collect();
        totals.sort_unstable_by_key(|t| (t.0, t.1));
        let items = coarsen(items, &mut self.names);
        (source, ChainItems::new(&items), totals)
    }

    /// Node `v`'s own work in `a..b`, pushed latest first.
    fn own_items(&self, v: u32, a: Ns, b: Ns, rev: &mut Vec<Item>, hint: &mut [usize]) {
        if b <= a {
            return;
        }
        let item = |kind, name| Item {
            start: a,
            dur: b - a,
            kind,
            name,
        };
        match self.nodes[v as usize].what {
            What::Kernel { kind, name, .. } => rev.push(item(kind, name)),
            What::Sync {
                name,
                kernel: THREADS,
            } => rev.push(item(Kind::Host, name)),
            What::Sync { name, .. } => rev.push(item(Kind::SyncWait, name)),
            What::Piece { thread } => {
                let th = &self.threads[thread as usize];
                let rest: Vec<Stretch>;
                let held = th.stretches.serving(a, b).filter(|_| !self.sweep_again);
                let segs = match held {
                    Some(held) => held,
                    None => {
                        // Outside the step's stretches (not met on the
                        // traces tried): swept again, from the start.
                        rest = self.stretches_of(th, a, b);
                        &rest
                    }
                };
                // The first segment ending after `a`: a walk goes back
                // along a thread, and the next sink's walk comes later, so
                // near the last one found there.
                let i = first_after(segs, a, hint[thread as usize]);
                hint[thread as usize] = i;
                // Pushed in time order, then turned (`rev` is latest first).
                let from = rev.len();
                let fwd = rev;
                let mut at = a;
                for &(s, e, kind, name) in &segs[i..] {
                    if s >= b {
                        break;
                    }
                    if s > at {
                        fwd.push(self.idle(at, s));
                    }
                    let (s, e) = (s.max(at), e.min(b));
                    fwd.push(Item {
                        start: s,
                        dur: e - s,
                        kind,
                        name,
                    });
                    at = e;
                }
                if at < b {
                    fwd.push(self.idle(at, b));
                }
                fwd[from..].reverse();
            }
            What::Arrival | What::End { .. } | What::Mark => {}
        }
    }

    /// The time of `a..b` a thread spent in launch calls.
    fn launch_overlap(
        &self,
        th: &Thread,
        l: &LaunchCover,
        (a, b): (Ns, Ns),
        near: &mut usize,
    ) -> Ns {
        if b <= l.complete_to && !self.sweep_again {
            return l.cover.overlap(a, b, near);
        }
        // Past the stretches generated (not met on the traces tried).
        self.stretches_of(th, a, b)
            .iter()
            .filter(|s| s.2 == Kind::Launch)
            .map(|s| s.1.min(b) - s.0.max(a))
            .filter(|&d| d > 0)
            .sum()
    }

    /// A thread's stretches that meet `a..b`, from a sweep of its calls.
    fn stretches_of(&self, th: &Thread, a: Ns, b: Ns) -> Vec<Stretch> {
        let mut out = Vec::new();
        sweep::each(th.calls.len(), &|i| self.sweep_call(th.calls[i]), |s| {
            if s.1 > a && s.0 < b {
                out.push(s);
            }
            s.0 < b
        });
        out
    }

    fn idle(&self, a: Ns, b: Ns) -> Item {
        Item {
            start: a,
            dur: b - a,
            kind: Kind::Idle,
            name: gap_id::HOST_IDLE,
        }
    }

    /// Commands submitted and not finished, per engine, named by the
    /// engine's thread name (`DEVICE Thread 100028 L0 Compute
    /// Engine<0,0>`, Kineto's `DEVICE stream 7`), else by its place among
    /// its device's engines (`DEVICE engine 0`): never by the raw thread
    /// id, which differs between a JSON trace (4294967294) and its
    /// `.pftrace` (2147483646) (docs/tracestat.md#annotated-trace).
    fn queue_depth(&self) -> Vec<EngineDepth> {
        let t = self.m.trace;
        let mut per: FastMap<(u32, u64), Vec<(Ns, i32)>> = FastMap::default();
        for (k, kr) in t.kernels.iter().enumerate() {
            let sub = self.m.submissions[k].map_or(kr.start, |s| s.1.min(kr.start));
            let e = per.entry((kr.device, kr.tid)).or_default();
            e.push((sub, 1));
            e.push((kr.end, -1));
        }
        let mut keys: Vec<(u32, u64)> = per.keys().copied().collect();
        keys.sort_unstable();
        let labels = engine_labels(t, &keys);
        keys.into_iter()
            .zip(labels)
            .map(|(key, label)| {
                let mut evs = per.remove(&key).unwrap_or_default();
                evs.sort_unstable();
                let mut depth = 0i32;
                let mut points: Vec<(Ns, u32)> = Vec::new();
                for (ts, d) in evs {
                    depth += d;
                    let v = depth.max(0) as u32;
                    match points.last_mut() {
                        Some(p) if p.0 == ts => p.1 = v,
                        _ => points.push((ts, v)),
                    }
                }
                EngineDepth { label, points }
            })
            .collect()
    }
}

/// The labels of the engines `keys` (`(device, thread id)`, sorted): the
/// device's label and the engine's thread name, else `engine N` (its place
/// among the device's engines); a name two engines share gets ` #2`, ...
/// after the first, as Perfetto joins the counters of one name.
fn engine_labels(t: &crate::ingest::RankTrace, keys: &[(u32, u64)]) -> Vec<String> {
    let mut named: Vec<String> = Vec::with_capacity(keys.len());
    let mut place = 0;
    for (i, &(device, tid)) in keys.iter().enumerate() {
        place = if i > 0 && keys[i - 1].0 == device {
            place + 1
        } else {
            0
        };
        let dev = &t.devices[device as usize];
        let engine = t
            .thread_names
            .get(&(dev.pid, tid))
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("engine {place}"));
        named.push(format!("{} {engine}", dev.label));
    }
    named
        .iter()
        .enumerate()
        .map(
            |(i, label)| match named[..i].iter().filter(|l| *l == label).count() {
                0 => label.clone(),
                n => format!("{label} #{}", n + 1),
            },
        )
        .collect()
}

/// The first segment ending after `a`, searched from `near` outwards: a
/// walk goes back along a thread, so the next segment is usually close.
fn first_after(segs: &[Stretch], a: Ns, near: usize) -> usize {
    partition_point_near(segs, near, |s| s.1 <= a)
}

/// A thread's calls by start, the longer first at one start, in a stable
/// order (its API calls, the first `api` of the list, before its host
/// ranges at the same times). Each part is sorted on its own only when it
/// is out of order (the trace usually lists a thread's API calls by time,
/// its ranges as they end; a launching thread's ranges come in order from
/// the model), then the two are merged: the same order as a stable sort
/// of the whole, at a fraction of its cost. Keys are read where compared,
/// not listed: a list of every call's key took 36 MB of a 500 MB rank at
/// its peak (docs/tracestat.md#memory). `span` gives a call's start and
/// end; the flags say which part is known to be in order.
fn sort_calls(
    calls: &mut Vec<CallRef>,
    (api, api_in_order, ranges_in_order): (usize, bool, bool),
    span: impl Fn(CallRef) -> (Ns, Ns),
) {
    let key = |c: &CallRef| {
        let (start, end) = span(*c);
        (start, std::cmp::Reverse(end))
    };
    let in_order = |part: &[CallRef]| part.windows(2).all(|w| key(&w[0]) <= key(&w[1]));
    let len = calls.len();
    let (a, h) = calls.split_at_mut(api.min(len));
    for (part, known) in [(&mut *a, api_in_order), (&mut *h, ranges_in_order)] {
        if !known && !in_order(part) {
            sort_by_cached_keys(part, key);
        }
    }
    if a.is_empty() || h.is_empty() || key(&a[a.len() - 1]) <= key(&h[0]) {
        return;
    }
    let mut merged = Vec::with_capacity(len);
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < h.len() {
        // At equal keys the API call first, as a stable sort keeps it.
        if key(&h[j]) < key(&a[i]) {
            merged.push(h[j]);
            j += 1;
        } else {
            merged.push(a[i]);
            i += 1;
        }
    }
    merged.extend_from_slice(&a[i..]);
    merged.extend_from_slice(&h[j..]);
    *calls = merged;
}

/// `part` sorted by `key` as a stable sort would: each key is read once
/// and sorted with its place, rather than read twice per comparison (the
/// keys of calls are behind two lookups; docs/tracestat.md#scale).
fn sort_by_cached_keys<K: Ord>(part: &mut [CallRef], key: impl Fn(&CallRef) -> K) {
    let mut keyed: Vec<(K, u32)> = (part.iter().enumerate())
        .map(|(i, c)| (key(c), i as u32))
        .collect();
    // Unique keys (the place breaks ties): any sort gives the stable order.
    keyed.sort();
    let sorted: Vec<CallRef> = keyed.iter().map(|&(_, i)| part[i as usize]).collect();
    part.copy_from_slice(&sorted);
}

/// Pushes a named gap (latest first) when it has a length.
fn push_rev(rev: &mut Vec<Item>, a: Ns, b: Ns, kind: Kind, name: u32) {
    if b > a {
        rev.push(Item {
            start: a,
            dur: b - a,
            kind,
            name,
        });
    }
}

/// Stretches of a long chain kept whole when it is coarsened, at most.
pub const KEEP_WHOLE: usize = MAX_ITEMS / 4;

/// Which stretches of a chain [`coarsen`] keeps whole, in order: the [`KEEP_WHOLE`]
/// longest (the earlier on a tie) of those at least as long as the
/// chain's length over [`MAX_ITEMS`], so that a long stretch (a launch
/// latency of seconds, one long kernel) stays on the path with its own
/// kind and name instead of inside a joined one of another kind.
fn kept_whole(items: &[Item]) -> Vec<usize> {
    let total: Ns = items.iter().map(|i| i.dur).sum();
    let floor = (total / MAX_ITEMS as Ns).max(1);
    let mut long: Vec<usize> = (0..items.len())
        .filter(|&i| items[i].dur >= floor)
        .collect();
    if long.len() > KEEP_WHOLE {
        long.select_nth_unstable_by_key(KEEP_WHOLE - 1, |&i| (std::cmp::Reverse(items[i].dur), i));
        long.truncate(KEEP_WHOLE);
        long.sort_unstable();
    }
    long
}

/// The groups [`coarsen`] joins, as ranges of its `runs` (`kept(r)`: run
/// `r` is one of the `whole` stretches kept whole, which stand alone): consecutive other runs, as
/// many per group as keeps the chain at [`MAX_ITEMS`] at most. With `k`
/// kept, the other runs fall in at most `k + 1` stretches between them,
/// each cut into groups of `per`: at most `MAX_ITEMS - 2k + k` groups.
fn join_groups(
    runs: usize,
    whole: usize,
    kept: impl Fn(usize) -> bool,
) -> Vec<std::ops::Range<usize>> {
    let budget = MAX_ITEMS.saturating_sub(2 * whole).max(1);
    let per = (runs - whole).div_ceil(budget).max(1);
    let mut groups = Vec::with_capacity(MAX_ITEMS);
    let mut at = 0;
    while at < runs {
        let mut end = at + 1;
        if !kept(at) {
            while end < runs && !kept(end) && end - at < per {
                end += 1;
            }
        }
        groups.push(at..end);
        at = end;
    }
    groups
}

/// A chain of more than [`MAX_ITEMS`] stretches as at most that many: its
/// longest stretches kept whole ([`kept_whole`]); of the others,
/// neighbours of one kind first, then runs of equal count, each named by
/// the name with most time in it (`NAME (most of N stretches)`, so that a
/// long call stays visible) and of the kind with most time in it. The
/// stretches still tile the chain.
fn coarsen(items: Vec<Item>, names: &mut Interner) -> Vec<Item> {
    let keep = kept_whole(&items);
    // Runs of one kind without a break: (joined item, its stretches, where
    // its first stretch is in `items`, kept whole). A run's names are read
    // from `items` when its group is joined: a map per run cost an
    // allocation per stretch on chains whose kinds alternate (host time and
    // launches).
    let mut runs: Vec<(Item, u64, usize, bool)> = Vec::new();
    let mut next_kept = keep.iter().copied().peekable();
    for (i, it) in items.iter().enumerate() {
        let kept = next_kept.next_if_eq(&i).is_some();
        match runs.last_mut() {
            Some((l, n, _, false)) if !kept && l.kind == it.kind && l.start + l.dur == it.start => {
                l.dur += it.dur;
                *n += 1;
            }
            _ => runs.push((*it, 1, i, kept)),
        }
    }
    let mut per_name: FastMap<u32, Ns> = FastMap::default();
    join_groups(runs.len(), keep.len(), |r| runs[r].3)
        .into_iter()
        .map(|range| {
            let group = &runs[range];
            let mut time = [0 as Ns; Kind::ALL.len()];
            for (it, _, _, _) in group {
                time[it.kind as usize] += it.dur;
            }
            let kind = Kind::ALL
                .into_iter()
                .max_by_key(|&k| (time[k as usize], std::cmp::Reverse(k)))
                .unwrap_or(Kind::Idle);
            let count: u64 = group.iter().map(|g| g.1).sum();
            let first = group[0];
            let last = group[group.len() - 1];
            let name = if count == 1 {
                first.0.name
            } else {
                per_name.clear();
                for it in &items[first.2..last.2 + last.1 as usize] {
                    *per_name.entry(it.name).or_default() += it.dur;
                }
                // Ties go to the smaller id, so the label is deterministic.
                let most = per_name
                    .iter()
                    .max_by_key(|(&id, &t)| (t, std::cmp::Reverse(id)))
                    .map_or(first.0.name, |(&id, _)| id);
                names.joined_id(most, count)
            };
            Item {
                start: first.0.start,
                dur: last.0.start + last.0.dur - first.0.start,
                kind,
                name,
            }
        })
        .collect()
}

/// The name of joined stretches: the name with most time among them, and
/// how many they are (a name that is itself a joined label keeps only its
/// base name).
pub fn joined_label(most: &str, count: u64) -> String {
    let base = most.split(" (most of ").next().unwrap_or(most);
    format!("{base} (most of {count} stretches)")
}

/// Adjacent items of one kind and name as one.
fn merge_items(items: &mut Vec<Item>) {
    // In place: each item against the last one kept (grown by those it
    // took in), as a fold into a new list would.
    items.dedup_by(|it, l| {
        let joins = l.kind == it.kind && l.name == it.name && l.start + l.dur == it.start;
        if joins {
            l.dur += it.dur;
        }
        joins
    });
}

/// The gap names, interned before any walk so items can refer to them.
/// The ids of [`GAP_NAMES`]: every rank's names begin with them
/// (`Graph::new`), so a walk names a gap without looking its text up.
mod gap_id {
    pub const NO_EARLIER_WORK: u32 = 0;
    pub const LAUNCH_LATENCY: u32 = 1;
    pub const QUEUE_GAP: u32 = 2;
    pub const OTHER_ENGINE: u32 = 3;
    pub const GAP: u32 = 4;
    pub const HOST_IDLE: u32 = 5;
    pub const THREAD_HANDOFF: u32 = 7;
}

pub const GAP_NAMES: [&str; 8] = [
    "(no earlier work)",
    "(launch latency)",
    "(queue gap)",
    "(wait for another engine)",
    "(gap)",
    "(host idle)",
    "(step start)",
    "(thread handoff)",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_merged_come_in_the_order_of_a_stable_sort() {
        let call = |s: Ns, e: Ns, api: bool, n: u32| (s, e, Kind::Host, api, NameId(n));
        // API calls then host ranges, each in order, with equal keys
        // across the two; then a part out of order (sorted, then merged).
        let api: Vec<Call> = (0..40)
            .map(|i| call(i / 2 * 10, 100 - i % 3, true, i as u32))
            .collect();
        let host: Vec<Call> = (0..30)
            .map(|i| call(i / 3 * 10 + 5 * (i % 2), 100 - i % 3, false, 100 + i as u32))
            .collect();
        let mut host_sorted = host.clone();
        host_sorted.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        // Ranges said to be in order (the model's) are taken as they are.
        for (a, h, known) in [
            (&api, &host_sorted, false),
            (&api, &host_sorted, true),
            (&api, &host, false),
            (&api, &Vec::new(), false),
            (&Vec::new(), &host, false),
            (&Vec::new(), &host_sorted, true),
            (&host, &api, false),
        ] {
            let all: Vec<Call> = a.iter().chain(h.iter()).copied().collect();
            let mut want = all.clone();
            want.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            let mut refs: Vec<CallRef> = (0..all.len() as CallRef).collect();
            sort_calls(&mut refs, (a.len(), false, known), |r| {
                let c = all[r as usize];
                (c.0, c.1)
            });
            let got: Vec<Call> = refs.iter().map(|&r| all[r as usize]).collect();
            assert_eq!(got, want);
        }
    }

    #[test]
    fn engine_order_is_a_stable_sort_by_engine_and_start() {
        let kr = |device: u32, tid: u64, start: Ns| crate::ingest::KernelRun {
            start,
            end: start + 1,
            name: NameId(0),
            device,
            tid,
            flow: None,
        };
        let kernels: Vec<_> = (0..200)
            .map(|i: i64| kr((i % 3) as u32, (i % 5) as u64 * 7, (i * 37) % 50))
            .collect();
        let mut want: Vec<usize> = (0..kernels.len()).collect();
        want.sort_by_key(|&k| (kernels[k].device, kernels[k].tid, kernels[k].start));
        let order = |kernels: &[crate::ingest::KernelRun]| -> Vec<usize> {
            let groups = build::engine_groups(kernels);
            groups
                .iter()
                .flat_map(|g| g.1.iter().map(|&k| k as usize))
                .collect()
        };
        assert_eq!(order(&kernels), want);
        assert!(order(&[]).is_empty());
    }

    #[test]
    fn cuda_and_hip_frees_wait_for_the_device_level_zero_frees_do_not() {
        for name in [
            "cudaFree",
            "cudaFreeHost",
            "cuMemFree_v2",
            "hipFree",
            "hipHostFree",
        ] {
            assert!(frees_device_memory(name), "{name}");
        }
        // Level Zero's and OpenCL's frees do not synchronise the device;
        // an allocation does not free.
        for name in [
            "zeMemFree",
            "clReleaseMemObject",
            "urUSMFree",
            "cudaMalloc",
            "cudaFreeAsync",
        ] {
            assert!(!frees_device_memory(name), "{name}");
        }
    }

    #[test]
    fn gap_ids_are_the_places_of_their_names() {
        let mut names = Interner::default();
        for n in GAP_NAMES {
            names.id(n);
        }
        for (id, text) in [
            (gap_id::NO_EARLIER_WORK, "(no earlier work)"),
            (gap_id::LAUNCH_LATENCY, "(launch latency)"),
            (gap_id::QUEUE_GAP, "(queue gap)"),
            (gap_id::OTHER_ENGINE, "(wait for another engine)"),
            (gap_id::GAP, "(gap)"),
            (gap_id::HOST_IDLE, "(host idle)"),
            (gap_id::THREAD_HANDOFF, "(thread handoff)"),
        ] {
            assert_eq!(names.list[id as usize], text);
        }
    }

    #[test]
    fn a_node_takes_48_bytes() {
        // The node list is the largest list of a rank's graph.
        assert_eq!(std::mem::size_of::<Node>(), 48);
    }

    #[test]
    fn first_after_searches_from_a_hint() {
        let segs: Vec<(Ns, Ns, Kind, u32)> = (0..100)
            .map(|i| (10 * i, 10 * i + 5, Kind::Host, 0))
            .collect();
        for a in [-1, 0, 4, 5, 6, 497, 995, 2000] {
            let want = segs.partition_point(|s| s.1 <= a);
            for near in [0, 1, 13, 50, 99, 100, 150] {
                assert_eq!(first_after(&segs, a, near), want, "a {a} near {near}");
            }
        }
    }

    #[test]
    fn coverage_overlap() {
        let c = Coverage::new(vec![(10, 20), (15, 30), (40, 50)]);
        for near in [0, 1, 2, 3, 9] {
            assert_eq!(c.overlap(0, 100, &mut near.clone()), 30);
            assert_eq!(c.overlap(12, 45, &mut near.clone()), 23);
            assert_eq!(c.overlap(30, 40, &mut near.clone()), 0);
        }
    }

    /// Intervals dropped before a time leave every overlap from that time
    /// on as it was, whatever search hint it starts from.
    #[test]
    fn coverage_overlaps_after_a_drop_are_unchanged() {
        let v = vec![(10, 20), (15, 30), (40, 50), (55, 60), (70, 90)];
        let whole = Coverage::new(v.clone());
        for cut in [0, 10, 30, 45, 50, 65, 90, 100] {
            let mut c = Coverage::new(v.clone());
            c.drop_before(cut);
            for a in cut..=100 {
                for b in a..=100 {
                    for near in [0, 1, 2, 9] {
                        let (w, d) = (
                            whole.overlap(a, b, &mut 0),
                            c.overlap(a, b, &mut near.clone()),
                        );
                        assert_eq!(w, d, "cut {cut}: {a}..{b}");
                    }
                }
            }
        }
        let mut pushed = Coverage::default();
        pushed.push(10, 20);
        pushed.push(30, 40);
        pushed.drop_before(25);
        pushed.push(50, 55);
        assert_eq!(pushed.overlap(25, 60, &mut 0), 15);
        assert_eq!(pushed.overlap(35, 52, &mut 0), 7);
    }

    #[test]
    fn coverage_pushed_in_order_is_the_coverage_of_the_list() {
        let v = vec![(10, 20), (15, 30), (30, 35), (40, 50), (45, 48), (60, 61)];
        let whole = Coverage::new(v.clone());
        let mut pushed = Coverage::default();
        for &(s, e) in &v {
            pushed.push(s, e);
        }
        assert_eq!(pushed.starts, whole.starts);
        assert_eq!(pushed.ends, whole.ends);
        assert_eq!(pushed.sum, whole.sum);
        for (a, b) in [(0, 100), (12, 45), (33, 41), (61, 70)] {
            assert_eq!(pushed.overlap(a, b, &mut 0), whole.overlap(a, b, &mut 0));
        }
    }

    #[test]
    fn adjacent_items_merge() {
        let it = |start, dur, name| Item {
            start,
            dur,
            kind: Kind::Host,
            name,
        };
        let mut m = vec![it(0, 5, 1), it(5, 5, 1), it(10, 2, 2)];
        merge_items(&mut m);
        assert_eq!(m, vec![it(0, 10, 1), it(10, 2, 2)]);
    }

    /// Coarsening as first written, a map of names per run of one kind:
    /// the reference of [`coarsen`].
    fn coarsen_by_maps(items: Vec<Item>, names: &mut Interner) -> Vec<Item> {
        let keep = kept_whole(&items);
        let mut by_kind: Vec<(Item, u64, FastMap<u32, Ns>, bool)> = Vec::new();
        for (i, it) in items.into_iter().enumerate() {
            let kept = keep.contains(&i);
            match by_kind.last_mut() {
                Some((l, n, per_name, false))
                    if !kept && l.kind == it.kind && l.start + l.dur == it.start =>
                {
                    l.dur += it.dur;
                    *n += 1;
                    *per_name.entry(it.name).or_default() += it.dur;
                }
                _ => by_kind.push((it, 1, FastMap::from_iter([(it.name, it.dur)]), kept)),
            }
        }
        join_groups(by_kind.len(), keep.len(), |r| by_kind[r].3)
            .into_iter()
            .map(|range| &by_kind[range])
            .map(|group| {
                let mut time: FastMap<Kind, Ns> = FastMap::default();
                let mut per_name: FastMap<u32, Ns> = FastMap::default();
                for (it, _, names_in, _) in group {
                    *time.entry(it.kind).or_default() += it.dur;
                    for (&name, &t) in names_in {
                        *per_name.entry(name).or_default() += t;
                    }
                }
                let kind = Kind::ALL
                    .into_iter()
                    .max_by_key(|k| (time.get(k).copied().unwrap_or(0), std::cmp::Reverse(*k)))
                    .unwrap_or(Kind::Idle);
                let count: u64 = group.iter().map(|g| g.1).sum();
                let name = if count == 1 {
                    group[0].0.name
                } else {
                    let most = per_name
                        .iter()
                        .max_by_key(|(&id, &t)| (t, std::cmp::Reverse(id)))
                        .map_or(group[0].0.name, |(&id, _)| id);
                    let label = joined_label(&names.list[most as usize], count);
                    names.id(&label)
                };
                let (first, last) = (group[0].0, group[group.len() - 1].0);
                Item {
                    start: first.start,
                    dur: last.start + last.dur - first.start,
                    kind,
                    name,
                }
            })
            .collect()
    }

    #[test]
    fn a_long_stretch_stays_whole_with_its_kind_when_a_chain_is_joined() {
        // 3000 stretches of host time and launches, 1 us each, and one
        // launch latency of 3 s in the middle (as on HTA's alexnet trace).
        let mut items = Vec::new();
        let mut t: Ns = 0;
        for i in 0..3000u32 {
            let (kind, dur) = match i {
                1500 => (Kind::Launch, 3_000_000_000),
                _ if i % 2 == 0 => (Kind::Host, 1_000),
                _ => (Kind::Launch, 1_000),
            };
            items.push(Item {
                start: t,
                dur,
                kind,
                name: i % 5 + u32::from(i == 1500) * 5,
            });
            t += dur;
        }
        let mut names = Interner::default();
        for i in 0..6 {
            names.id(&format!("name {i}"));
        }
        let out = coarsen(items.clone(), &mut names);
        assert!(out.len() <= MAX_ITEMS, "{}", out.len());
        let mut at = 0;
        for it in &out {
            assert_eq!(it.start, at);
            at += it.dur;
        }
        assert_eq!(at, t);
        assert!(out.contains(&items[1500]), "the long stretch whole");
        // 100 long stretches among 5000 short ones: the KEEP_WHOLE
        // longest (the earliest of equals) kept, the chain still at most
        // MAX_ITEMS.
        let mixed: Vec<Item> = (0..5100)
            .map(|i| Item {
                start: if i < 100 {
                    i * 1000
                } else {
                    100_000 + (i - 100)
                },
                dur: if i < 100 { 1000 } else { 1 },
                kind: Kind::ALL[i as usize % 3],
                name: 0,
            })
            .collect();
        let out = coarsen(mixed.clone(), &mut names);
        assert!(out.len() <= MAX_ITEMS, "{}", out.len());
        assert_eq!(&out[..KEEP_WHOLE], &mixed[..KEEP_WHOLE]);
        assert!(!out.contains(&mixed[KEEP_WHOLE]));
    }

    #[test]
    fn coarsened_chains_are_those_of_the_reference() {
        // Chains of 1 to 3000 stretches: kinds alternating in runs of 1 to
        // 4, a break now and then, names from a small set (ties included).
        let mut seed = 7u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for len in [1usize, 2, 255, 256, 257, 513, 1000, 3000] {
            let mut items = Vec::with_capacity(len);
            let mut t: Ns = 0;
            let mut kind = 0;
            while items.len() < len {
                for _ in 0..=next(4) {
                    let dur = 1 + next(5) as Ns;
                    items.push(Item {
                        start: t,
                        dur,
                        kind: Kind::ALL[kind],
                        name: next(6) as u32,
                    });
                    t += dur + (next(10) == 0) as Ns;
                }
                kind = (kind + 1 + next(2) as usize) % Kind::ALL.len();
            }
            items.truncate(len);
            let interner = || {
                let mut n = Interner::default();
                for i in 0..6 {
                    n.id(&format!("name {i}"));
                }
                n
            };
            let (mut a, mut b) = (interner(), interner());
            assert_eq!(
                coarsen(items.clone(), &mut a),
                coarsen_by_maps(items, &mut b),
                "{len}"
            );
            assert_eq!(a.list, b.list, "{len}");
        }
    }
}
