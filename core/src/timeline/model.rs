//! The one event vocabulary every timeline analysis reads
//! (docs/formats.md#timeline-model): what a format module delivers to a
//! [`TraceSink`], whatever the file looked like.
//!
//! Times are integer nanoseconds on the file's own clock (JSON `ts`
//! microseconds parsed exactly from their text, `.pftrace` timestamps as
//! written). Names and categories arrive as interned ids ([`NameId`],
//! [`CatId`]) into the [`Names`] table the source hands along with each
//! event: one decode and one classification per distinct name, not per
//! event.

use std::io;

use super::names::{CatId, NameId, Names};
pub use super::names::{DeviceOpKind, MemoryKind};

/// Nanoseconds (an instant on the file's clock, or a duration).
pub type Ns = i64;

/// The process id of an event whose `pid` is there but is no unsigned
/// integer (Kineto's `"Spans"`, `"Traces"`, `""` and `-1`,
/// docs/formats.md#kineto-json-events): kept apart from real processes.
pub const UNKNOWN_PID: u64 = u64::MAX;

/// Which rank of the file an event belongs to: an index into the ranks the
/// source's [`super::RankRouter`] found (a per-rank file has one, a merged
/// trace one per `RANK r` process).
pub type RankSlot = usize;

/// Who a host range comes from (the ones the analyses tell apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostRole {
    /// A runtime or driver API call (`zeCommandListAppendLaunchKernel`,
    /// `cudaLaunchKernel`, `urEnqueueKernelLaunch`).
    ApiCall,
    /// An annotated range: ITT tasks, PyTorch ops, oneDNN primitives,
    /// oneCCL and MPI calls (unitrace), `cpu_op`, `user_annotation`,
    /// `python_function` (Kineto).
    Range,
}

/// Bytes and communicator of a collective call
/// (docs/formats.md#trace-json-events).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollectiveArgs {
    pub bytes: Option<u64>,
    pub comm: Option<String>,
    /// The collective itself when the call's name does not say it
    /// (Kineto's `record_param_comms` with its `Collective name`).
    pub op: Option<String>,
    /// The call only enqueues the collective (NCCL and oneCCL through
    /// PyTorch's c10d): a rank arrives when the device work it launched
    /// starts, not when the call does (docs/tracestat.md#collectives).
    pub arrival_on_device: bool,
}

/// A device command.
#[derive(Debug, Clone, Copy)]
pub struct DeviceOp {
    pub rank: RankSlot,
    /// The device's process id and the engine/queue track it ran on.
    pub pid: u64,
    pub tid: u64,
    pub name: NameId,
    pub cat: CatId,
    pub kind: DeviceOpKind,
    pub start: Ns,
    pub end: Ns,
    /// The command's own id (unitrace `args.id`; Kineto `correlation`).
    pub instance: Option<u64>,
    /// The id of the submission link to the host call that launched it
    /// (docs/formats.md#trace-json-flows).
    pub flow: Option<u64>,
    /// A copy's size when the writer gives it apart from the name (Kineto's
    /// `args.bytes`, docs/formats.md#kineto-json-events); unitrace's is in
    /// the name (`[4096]`).
    pub bytes: Option<u64>,
}

/// A host call or range. `closed` is false for a range still open at the
/// end of the file (a `B` without its `E`, a cut `.pftrace`): its `end`
/// is then its `start`, and the consumer decides where it ends.
#[derive(Debug, Clone, Copy)]
pub struct HostSpan<'a> {
    pub rank: RankSlot,
    pub pid: u64,
    pub tid: u64,
    pub name: NameId,
    pub cat: CatId,
    pub role: HostRole,
    pub start: Ns,
    pub end: Ns,
    pub closed: bool,
    /// Set on collective calls (by name, docs/tracestat.md#collectives).
    pub collective: Option<&'a CollectiveArgs>,
}

/// Any other slice with a duration (`os_op`, Kineto `Trace` spans): a row
/// of the events dataset, but neither device nor host work.
#[derive(Debug, Clone, Copy)]
pub struct OtherSpan {
    pub rank: RankSlot,
    pub pid: u64,
    pub tid: u64,
    pub name: NameId,
    pub cat: CatId,
    pub start: Ns,
    pub end: Ns,
}

/// Where a flow point sits in its flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowPhase {
    Start,
    Step,
    End,
}

/// A point of a flow. Submission flows link the host call that submitted a
/// device command to the command (docs/formats.md#trace-json-flows): their
/// `Start` is on the host thread at the call, and the command carries the
/// same id in [`DeviceOp::flow`].
#[derive(Debug, Clone, Copy)]
pub struct FlowPoint {
    pub rank: RankSlot,
    pub pid: u64,
    pub tid: u64,
    pub id: u64,
    pub phase: FlowPhase,
    pub ts: Ns,
    /// A submission (host -> device) flow.
    pub submission: bool,
    /// The submitting call, when the format puts the flow on it
    /// (`.pftrace`).
    pub call: Option<NameId>,
}

/// A counter value (`ph` `C`).
#[derive(Debug, Clone, Copy)]
pub struct CounterSample<'a> {
    pub rank: RankSlot,
    pub pid: u64,
    pub name: &'a str,
    pub series: &'a str,
    pub ts: Ns,
    pub value: f64,
}

/// An event with a time that is none of the above (instants, flow points
/// other than submissions' ends): it still counts for the rank's span.
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    pub rank: RankSlot,
    pub start: Ns,
    pub end: Ns,
}

/// Why an event was left out (docs/tracestat.md#implausible-events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DropKind {
    /// A time that does not fit in 64-bit nanoseconds.
    TimeOutOfRange,
    NegativeDuration,
    ZeroLengthDeviceOp,
    /// A device command (`ph: X`) whose `dur` is missing or no number: not
    /// a command of 0 ns, which the trace would say.
    NoDuration,
    /// An end before its begin, or an end without a begin.
    EndBeforeStart,
    /// More than a day away from the rank's first timestamp.
    ClockJump,
    /// No string `ph`: what the event is cannot be told.
    NoPhase,
    /// No number `ts` (an event other than metadata).
    NoTimestamp,
    /// A slice without a usable string `name` (missing, not a string, or
    /// one that does not decode).
    NoName,
    /// A host slice without a number `tid`: its thread cannot be told.
    NoThread,
}

impl DropKind {
    /// The label of the report's implausible-events table.
    pub fn label(self) -> &'static str {
        match self {
            DropKind::TimeOutOfRange => "time out of range",
            DropKind::NegativeDuration => "negative duration",
            DropKind::ZeroLengthDeviceOp => "zero-length kernel",
            DropKind::NoDuration => "no duration",
            DropKind::EndBeforeStart => "end before start",
            DropKind::ClockJump => "clock jump",
            DropKind::NoPhase => "no phase",
            DropKind::NoTimestamp => "no timestamp",
            DropKind::NoName => "no name",
            DropKind::NoThread => "no thread",
        }
    }
}

/// An event left out, with what a warning needs to point at it.
#[derive(Debug, Clone, Copy)]
pub struct Dropped<'a> {
    pub rank: RankSlot,
    pub kind: DropKind,
    /// Where in the file: `event N` (JSON) or `packet at byte N`.
    pub place: Place,
    /// The event's name, when it has one.
    pub name: Option<&'a str>,
    /// What is wrong, for the example line.
    pub problem: &'a str,
}

/// The position of an event in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The n-th element of `traceEvents` (0-based).
    Event(u64),
    /// A `.pftrace` packet at this byte offset.
    Packet(u64),
    Unknown,
}

/// What the file says about the run as a whole (Kineto's
/// `distributedInfo`, docs/formats.md#kineto-json-ranks).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunInfo {
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
    pub backend: Option<String>,
    /// The rank given is unusable (no integer from 0 to `u32::MAX`, or
    /// the run information is no object): the warning's text; `rank` is
    /// then `None` (docs/formats.md#kineto-json-reading).
    pub rank_problem: Option<String>,
}

/// Receives the events of one file, in file order. Every method has a
/// default that ignores the event; the slice methods may fail (a sink that
/// spills to disk), which stops the read.
pub trait TraceSink {
    /// A process name (JSON `process_name`, a `.pftrace` process track).
    fn process(&mut self, _rank: RankSlot, _pid: u64, _name: &str) {}
    /// A thread name (JSON `thread_name`, a `.pftrace` thread track).
    fn thread(&mut self, _rank: RankSlot, _pid: u64, _tid: u64, _name: &str) {}
    fn run_info(&mut self, _info: &RunInfo) {}
    /// A device's label, from what the file says about its devices
    /// (Kineto's `deviceProperties`: `GPU 0: NVIDIA H200`); `pid` is the
    /// process id of the device's events.
    fn device(&mut self, _rank: RankSlot, _pid: u64, _label: &str) {}
    fn device_op(&mut self, _names: &Names, _op: &DeviceOp) -> io::Result<()> {
        Ok(())
    }
    fn host_span(&mut self, _names: &Names, _span: &HostSpan<'_>) -> io::Result<()> {
        Ok(())
    }
    fn other_span(&mut self, _names: &Names, _span: &OtherSpan) -> io::Result<()> {
        Ok(())
    }
    fn flow(&mut self, _flow: &FlowPoint) {}
    fn counter(&mut self, _sample: &CounterSample<'_>) {}
    fn mark(&mut self, _mark: &Mark) {}
    fn dropped(&mut self, _dropped: &Dropped<'_>) {}
    /// Whether device commands need their name, instance and flow ids.
    /// When not, they arrive with [`NameId::NONE`] and no ids, which saves
    /// a name lookup and an `args` parse per command.
    fn device_details(&self) -> bool {
        true
    }
}

/// A sink that takes every event and keeps nothing (a read for its errors).
impl TraceSink for () {}
