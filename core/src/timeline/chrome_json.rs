//! Chrome trace JSON into the timeline model (docs/formats.md#trace-json,
//! docs/formats.md#timeline-model): the `ph` grammar shared by every
//! writer (`X` slices, `B`/`E` pairs per thread, `s`/`t`/`f` flows, `M`
//! names, `C` counters, instants) is read here once; what a slice *is*
//! (device command, API call, annotated range) depends on the writer's
//! categories and is a [`JsonVocabulary`]: unitrace's below
//! ([`UnitraceVocabulary`]), Kineto's in [`super::kineto`].
//!
//! [`JsonEvents`] takes one validated [`Event`] at a time, so a tool that
//! already walks a trace's events for another purpose (mergetrace copies
//! their bytes) feeds the same interpreter instead of walking again.
//!
//! Events left out (docs/tracestat.md#implausible-events): no timestamp or
//! one out of range, a negative duration, a zero-length device command,
//! an end without a begin or before it, a time more than a day from the
//! rank's first one. Ranges still open at the end of the file arrive with
//! `closed: false`.

use std::io;
use std::path::Path;

use rustc_hash::FxHashMap;

use crate::trace::{decode_string_content, object_members, parse_u64, Event, Field};

use super::collective::json_collective_args;
use super::model::{
    CollectiveArgs, CounterSample, DeviceOp, DeviceOpKind, DropKind, Dropped, FlowPhase, FlowPoint,
    HostRole, HostSpan, Mark, Ns, OtherSpan, Place, RankSlot, RunInfo, TraceSink, UNKNOWN_PID,
};
use super::names::{CatId, NameId, NameInfo, Names};
use super::rank::RankRouter;
use super::time::us_text_to_ns;

/// Events further than this from a rank's first timestamp are taken for a
/// clock that jumped (docs/tracestat.md#implausible-events).
pub const CLOCK_JUMP_NS: Ns = 86_400 * 1_000_000_000;

/// What a slice of some category is, in one writer's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceKind {
    Device(DeviceOpKind),
    Host(HostRole),
    /// A slice that is neither device nor host work (`os_op`).
    Other,
}

/// The categories, ids and arguments of one writer (docs/formats.md#trace-json-events
/// for unitrace, docs/formats.md#kineto-json-events for Kineto).
pub trait JsonVocabulary {
    /// What a slice of category `cat` (raw bytes) named `info` is.
    fn slice_kind(&self, cat: &[u8], info: &NameInfo) -> SliceKind;
    /// The command's own id and its submission-link id, from `args`.
    fn device_ids(&self, args: Option<&[u8]>) -> (Option<u64>, Option<u64>);
    /// Whether a flow event of category `cat` links a submitting host call
    /// to a device command.
    fn submission_flow(&self, cat: &[u8]) -> bool;
    /// The submission-link id of a host API call on thread `tid` when the
    /// call itself says which device work it launched (Kineto's
    /// `correlation`): the source then delivers the call as the start of a
    /// submission link with that id. `None` for writers whose links are
    /// flow events alone (unitrace).
    fn launch_link(&mut self, _cat: &[u8], _tid: u64, _args: Option<&[u8]>) -> Option<u64> {
        None
    }
    /// A device command's size in bytes when its `args` say it (a copy);
    /// `None` for writers that put it in the name (unitrace).
    fn device_bytes(&self, _kind: DeviceOpKind, _args: Option<&[u8]>) -> Option<u64> {
        None
    }
    /// The collective arguments of a host slice, `None` when it is not a
    /// collective call.
    fn collective(
        &self,
        name: &str,
        info: &NameInfo,
        args: Option<&[u8]>,
    ) -> Option<CollectiveArgs>;
    /// A top-level member of the trace object other than `traceEvents`
    /// (its raw value): what it says about the run, if anything.
    fn top_level(&mut self, _key: &[u8], _value: &[u8]) -> TopLevel {
        TopLevel::None
    }
}

/// What a top-level member of the trace object says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopLevel {
    None,
    /// The run: rank, world size, backend (Kineto `distributedInfo`).
    RunInfo(RunInfo),
    /// `(pid, label)` of the devices (Kineto `deviceProperties`).
    Devices(Vec<(u64, String)>),
    /// Nanoseconds added to every time of the file (Kineto
    /// `baseTimeNanoseconds`, docs/formats.md#kineto-json-time).
    ClockBase(Ns),
    /// A member the vocabulary knows whose value cannot be used: ignored,
    /// with this warning (docs/formats.md#kineto-json-reading).
    Unusable(String),
}

/// unitrace's vocabulary: `gpu_op` device commands (kind by name), `os_op`
/// slices, every other slice a host call, a range when its name has `::`;
/// `Flow_H2D_*` submission flows; `args.id` instance ids.
#[derive(Debug, Default, Clone, Copy)]
pub struct UnitraceVocabulary;

impl JsonVocabulary for UnitraceVocabulary {
    #[inline]
    fn slice_kind(&self, cat: &[u8], info: &NameInfo) -> SliceKind {
        match cat {
            b"gpu_op" => SliceKind::Device(info.device_kind),
            b"os_op" => SliceKind::Other,
            _ if info.range => SliceKind::Host(HostRole::Range),
            _ => SliceKind::Host(HostRole::ApiCall),
        }
    }

    #[inline]
    fn device_ids(&self, args: Option<&[u8]>) -> (Option<u64>, Option<u64>) {
        let id = args.and_then(|a| args_uint(a, b"id"));
        (id, id)
    }

    #[inline]
    fn submission_flow(&self, cat: &[u8]) -> bool {
        cat.starts_with(b"Flow_H2D_") || cat.starts_with(b"CL_Flow_H2D_")
    }

    fn collective(
        &self,
        _name: &str,
        info: &NameInfo,
        args: Option<&[u8]>,
    ) -> Option<CollectiveArgs> {
        info.collective.then(|| json_collective_args(args))
    }
}

/// A string member of an `args` object.
pub fn args_str(args: &[u8], key: &[u8]) -> Option<String> {
    let (_, span) = object_members(args).find(|(k, _)| *k == key)?;
    let v = &args[span.range()];
    if v.len() < 2 || v[0] != b'"' {
        return None;
    }
    let inner = &v[1..v.len() - 1];
    decode_string_content(inner, inner.contains(&b'\\')).map(|s| s.into_owned())
}

/// An integer member of `args`, quoted or not.
pub fn args_uint(args: &[u8], key: &[u8]) -> Option<u64> {
    let (_, span) = object_members(args).find(|(k, _)| *k == key)?;
    let v = &args[span.range()];
    let digits = v
        .strip_prefix(b"\"")
        .and_then(|v| v.strip_suffix(b"\""))
        .unwrap_or(v);
    parse_u64(digits)
}

/// The `args` object of an event, when it is one.
#[inline]
fn args_object<'a>(ev: &Event<'a>) -> Option<&'a [u8]> {
    ev.value(Field::Args).filter(|a| a.first() == Some(&b'{'))
}

/// A `B` waiting for its `E`.
struct OpenRange {
    pid: u64,
    start: Ns,
    name: NameId,
    cat: CatId,
    kind: SliceKind,
    /// From the `B` arguments; the `E` ones win when both have them.
    collective: Option<CollectiveArgs>,
}

/// The interpreter of one file's events.
pub struct JsonEvents<V> {
    pub names: Names,
    pub router: RankRouter,
    vocabulary: V,
    /// First timestamp per rank slot: the reference of the clock-jump check.
    anchors: Vec<Option<Ns>>,
    /// `B` events waiting for their `E`, per thread.
    open: FxHashMap<u64, Vec<OpenRange>>,
    run_info: Option<RunInfo>,
    /// Added to every time read (Kineto's `baseTimeNanoseconds`).
    clock_offset: Ns,
    /// A time was delivered: the clock offset can no longer change.
    timed: bool,
    /// What the file's envelope held that could not be used (once each).
    warnings: Vec<String>,
}

impl<V: JsonVocabulary> JsonEvents<V> {
    pub fn new(path: &Path, vocabulary: V) -> Self {
        JsonEvents {
            names: Names::default(),
            router: RankRouter::new(path),
            vocabulary,
            anchors: Vec::new(),
            open: FxHashMap::default(),
            run_info: None,
            clock_offset: 0,
            timed: false,
            warnings: Vec::new(),
        }
    }

    /// The warnings about the file's envelope ([`TopLevel::Unusable`], an
    /// unusable rank), handed over once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn warn_once(&mut self, problem: String) {
        if !self.warnings.contains(&problem) {
            self.warnings.push(problem);
        }
    }

    /// Adds `offset` ns to every time of the file: its clock base, when it
    /// was found before reading (docs/formats.md#kineto-json-time).
    pub fn with_clock_offset(mut self, offset: Option<Ns>) -> Self {
        if let Some(o) = offset {
            self.clock_offset = o;
        }
        self
    }

    /// The offset added to every time.
    pub fn clock_offset(&self) -> Ns {
        self.clock_offset
    }

    /// What the file said about its run ([`JsonVocabulary::top_level`]).
    pub fn run_info(&self) -> Option<&RunInfo> {
        self.run_info.as_ref()
    }

    /// A top-level member of the trace object.
    pub fn top_level(&mut self, key: &[u8], value: &[u8], sink: &mut impl TraceSink) {
        match self.vocabulary.top_level(key, value) {
            TopLevel::None => {}
            TopLevel::RunInfo(info) => {
                if let Some(r) = info.rank {
                    self.router.file_rank(r);
                }
                if let Some(problem) = &info.rank_problem {
                    self.warn_once(problem.clone());
                }
                sink.run_info(&info);
                self.run_info = Some(info);
            }
            TopLevel::Devices(devices) => {
                let rank = self.router.peek(None);
                for (pid, label) in devices {
                    sink.device(rank, pid, &label);
                }
            }
            // Once times were delivered, a base read after them (a stream
            // that could not be searched ahead, docs/formats.md#kineto-json-time)
            // no longer applies.
            TopLevel::ClockBase(base) if !self.timed => self.clock_offset = base,
            TopLevel::ClockBase(_) => {}
            TopLevel::Unusable(problem) => self.warn_once(problem),
        }
    }

    /// Interprets one event.
    pub fn feed<S: TraceSink>(&mut self, ev: &Event<'_>, sink: &mut S) -> io::Result<()> {
        let pid = match ev.uint(Field::Pid) {
            Some(p) => Some(p),
            // Kineto's `"Spans"`, `-1`...: no process of the file.
            None if ev.value(Field::Pid).is_some() => Some(UNKNOWN_PID),
            None => None,
        };
        let Some(ph) = ev.str_raw(Field::Ph) else {
            let rank = self.router.slot(pid);
            drop_event(ev, rank, DropKind::NoPhase, "no ph (a string)", sink);
            return Ok(());
        };
        if ph == b"M" {
            self.metadata(ev, pid, sink);
            return Ok(());
        }
        let rank = self.router.slot(pid);
        let Some(ts_text) = ev.number_text(Field::Ts) else {
            drop_event(ev, rank, DropKind::NoTimestamp, "no ts (a number)", sink);
            return Ok(());
        };
        let Some((ts, dur)) = self.times(ev, ts_text, rank, sink) else {
            return Ok(());
        };
        let end = ts.saturating_add(dur.unwrap_or(0));
        let pid = pid.unwrap_or(0);
        let cat = ev.str_raw(Field::Cat).unwrap_or(b"");
        match ph {
            b"X" => self.complete(ev, rank, pid, cat, (ts, end), dur, sink),
            b"B" => {
                self.begin(ev, rank, pid, cat, ts, sink);
                Ok(())
            }
            b"E" => self.end(ev, rank, cat, ts, sink),
            b"s" | b"t" | b"f" => {
                self.flow(ev, rank, pid, ph, cat, ts, sink);
                Ok(())
            }
            b"C" => {
                self.counter(ev, rank, pid, ts, sink);
                Ok(())
            }
            _ => {
                sink.mark(&Mark {
                    rank,
                    start: ts,
                    end,
                });
                Ok(())
            }
        }
    }

    /// `ts` and `dur` in ns, or `None` with the event reported as dropped.
    #[inline]
    fn times(
        &mut self,
        ev: &Event<'_>,
        ts_text: &[u8],
        rank: RankSlot,
        sink: &mut impl TraceSink,
    ) -> Option<(Ns, Option<Ns>)> {
        self.timed = true;
        let Some(ts) = us_text_to_ns(ts_text).and_then(|t| t.checked_add(self.clock_offset)) else {
            drop_event(
                ev,
                rank,
                DropKind::TimeOutOfRange,
                "timestamp out of range",
                sink,
            );
            return None;
        };
        let dur = match ev.number_text(Field::Dur) {
            Some(t) => match us_text_to_ns(t) {
                Some(d) if d < 0 => {
                    let problem = format!("negative duration {d} ns");
                    drop_event(ev, rank, DropKind::NegativeDuration, &problem, sink);
                    return None;
                }
                Some(d) => Some(d),
                None => {
                    drop_event(
                        ev,
                        rank,
                        DropKind::TimeOutOfRange,
                        "duration out of range",
                        sink,
                    );
                    return None;
                }
            },
            None => None,
        };
        if self.anchors.len() <= rank {
            self.anchors.resize(rank + 1, None);
        }
        let anchor = *self.anchors[rank].get_or_insert(ts);
        if (ts - anchor).abs() > CLOCK_JUMP_NS {
            let problem = "more than a day away from the rank's first timestamp";
            drop_event(ev, rank, DropKind::ClockJump, problem, sink);
            return None;
        }
        Some((ts, dur))
    }

    /// The id of the event's name (`None`: no string name, or one that
    /// does not decode).
    #[inline]
    fn name_id(&mut self, ev: &Event<'_>) -> Option<NameId> {
        let raw = ev.str_raw(Field::Name)?;
        self.names
            .intern(raw, || ev.str(Field::Name).map(|n| n.into_owned()))
    }

    #[allow(clippy::too_many_arguments)]
    fn complete<S: TraceSink>(
        &mut self,
        ev: &Event<'_>,
        rank: RankSlot,
        pid: u64,
        cat: &[u8],
        (start, end): (Ns, Ns),
        dur: Option<Ns>,
        sink: &mut S,
    ) -> io::Result<()> {
        let tid = thread_id(ev);
        let has_name = ev.str_raw(Field::Name).is_some();
        let name = if has_name { self.name_id(ev) } else { None };
        // The kind of a slice whose name does not decode still follows
        // from its category (a device command keeps its time).
        let info = name.map_or(NAMELESS, |n| self.names.info(n));
        let kind = self.vocabulary.slice_kind(cat, &info);
        match kind {
            SliceKind::Device(kind) => {
                if dur.is_none() {
                    let problem = "device command without a usable dur (missing or no number)";
                    drop_event(ev, rank, DropKind::NoDuration, problem, sink);
                    return Ok(());
                }
                if dur == Some(0) {
                    let problem = "zero-length device command";
                    drop_event(ev, rank, DropKind::ZeroLengthDeviceOp, problem, sink);
                    return Ok(());
                }
                if !has_name {
                    drop_nameless(ev, rank, false, sink);
                    return Ok(());
                }
                let (name, (instance, flow), bytes) = match name {
                    Some(n) if sink.device_details() => {
                        let args = args_object(ev);
                        let ids = self.vocabulary.device_ids(args);
                        (n, ids, self.vocabulary.device_bytes(kind, args))
                    }
                    _ => (NameId::NONE, (None, None), None),
                };
                let op = DeviceOp {
                    rank,
                    pid,
                    tid: tid.unwrap_or(0),
                    name,
                    cat: self.cat_id(cat),
                    kind,
                    start,
                    end,
                    instance,
                    flow,
                    bytes,
                };
                sink.device_op(&self.names, &op)
            }
            SliceKind::Host(role) => {
                let Some(name) = name else {
                    drop_nameless(ev, rank, has_name, sink);
                    return Ok(());
                };
                let Some(tid) = tid else {
                    drop_event(ev, rank, DropKind::NoThread, "no tid (a number)", sink);
                    return Ok(());
                };
                if role == HostRole::ApiCall {
                    if let Some(id) = self.vocabulary.launch_link(cat, tid, args_object(ev)) {
                        sink.flow(&FlowPoint {
                            rank,
                            pid,
                            tid,
                            id,
                            phase: FlowPhase::Start,
                            ts: start,
                            submission: true,
                            call: Some(name),
                        });
                    }
                }
                let collective = self.collective(name, args_object(ev));
                let span = HostSpan {
                    rank,
                    pid,
                    tid,
                    name,
                    cat: self.cat_id(cat),
                    role,
                    start,
                    end,
                    closed: true,
                    collective: collective.as_ref(),
                };
                sink.host_span(&self.names, &span)
            }
            SliceKind::Other => {
                let (Some(tid), Some(name)) = (tid, name) else {
                    sink.mark(&Mark { rank, start, end });
                    return Ok(());
                };
                let span = OtherSpan {
                    rank,
                    pid,
                    tid,
                    name,
                    cat: self.cat_id(cat),
                    start,
                    end,
                };
                sink.other_span(&self.names, &span)
            }
        }
    }

    #[inline]
    fn cat_id(&mut self, cat: &[u8]) -> CatId {
        self.names.cat_bytes(cat)
    }

    fn collective(&self, name: NameId, args: Option<&[u8]>) -> Option<CollectiveArgs> {
        let info = self.names.info(name);
        self.vocabulary
            .collective(self.names.name(name), &info, args)
    }

    fn begin(
        &mut self,
        ev: &Event<'_>,
        rank: RankSlot,
        pid: u64,
        cat: &[u8],
        ts: Ns,
        sink: &mut impl TraceSink,
    ) {
        let mark = Mark {
            rank,
            start: ts,
            end: ts,
        };
        // `os_op` ranges pair with nothing: their ends count as marks.
        if self.vocabulary.slice_kind(cat, &NAMELESS) == SliceKind::Other {
            sink.mark(&mark);
            return;
        }
        let Some(name) = self.name_id(ev) else {
            drop_nameless(ev, rank, ev.str_raw(Field::Name).is_some(), sink);
            return;
        };
        let Some(tid) = thread_id(ev) else {
            drop_event(ev, rank, DropKind::NoThread, "no tid (a number)", sink);
            return;
        };
        let kind = self.vocabulary.slice_kind(cat, &self.names.info(name));
        let collective = match kind {
            SliceKind::Host(_) => self.collective(name, args_object(ev)),
            _ => None,
        };
        let cat = self.cat_id(cat);
        sink.mark(&mark);
        self.open.entry(tid).or_default().push(OpenRange {
            pid,
            start: ts,
            name,
            cat,
            kind,
            collective,
        });
    }

    fn end<S: TraceSink>(
        &mut self,
        ev: &Event<'_>,
        rank: RankSlot,
        cat: &[u8],
        ts: Ns,
        sink: &mut S,
    ) -> io::Result<()> {
        let Some(tid) = thread_id(ev) else {
            return Ok(());
        };
        // `os_op` ends pair with nothing (their begins are marks).
        if self.vocabulary.slice_kind(cat, &NAMELESS) == SliceKind::Other {
            sink.mark(&Mark {
                rank,
                start: ts,
                end: ts,
            });
            return Ok(());
        }
        let open = match self.open.get_mut(&tid).and_then(Vec::pop) {
            Some(open) if ts >= open.start => open,
            Some(_) => {
                drop_event(
                    ev,
                    rank,
                    DropKind::EndBeforeStart,
                    "ends before its begin",
                    sink,
                );
                return Ok(());
            }
            None => {
                drop_event(
                    ev,
                    rank,
                    DropKind::EndBeforeStart,
                    "end without a begin",
                    sink,
                );
                return Ok(());
            }
        };
        match open.kind {
            SliceKind::Device(kind) => {
                if ts == open.start {
                    let problem = "zero-length device command";
                    drop_event(ev, rank, DropKind::ZeroLengthDeviceOp, problem, sink);
                    return Ok(());
                }
                let op = DeviceOp {
                    rank,
                    pid: open.pid,
                    tid,
                    name: open.name,
                    cat: open.cat,
                    kind,
                    start: open.start,
                    end: ts,
                    instance: None,
                    flow: None,
                    bytes: None,
                };
                sink.device_op(&self.names, &op)
            }
            SliceKind::Host(role) => {
                // A collective written as a B/E pair is matched across
                // ranks as its X form is; the `E` arguments win.
                let collective = open.collective.map(|b| {
                    let e = self
                        .collective(open.name, args_object(ev))
                        .unwrap_or_default();
                    CollectiveArgs {
                        bytes: e.bytes.or(b.bytes),
                        comm: e.comm.or(b.comm),
                        op: e.op.or(b.op),
                        arrival_on_device: e.arrival_on_device || b.arrival_on_device,
                    }
                });
                let span = HostSpan {
                    rank,
                    pid: open.pid,
                    tid,
                    name: open.name,
                    cat: open.cat,
                    role,
                    start: open.start,
                    end: ts,
                    closed: true,
                    collective: collective.as_ref(),
                };
                sink.host_span(&self.names, &span)
            }
            SliceKind::Other => Ok(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn flow(
        &mut self,
        ev: &Event<'_>,
        rank: RankSlot,
        pid: u64,
        ph: &[u8],
        cat: &[u8],
        ts: Ns,
        sink: &mut impl TraceSink,
    ) {
        let (Some(id), Some(tid)) = (ev.uint(Field::Id), thread_id(ev)) else {
            sink.mark(&Mark {
                rank,
                start: ts,
                end: ts,
            });
            return;
        };
        let phase = match ph {
            b"s" => FlowPhase::Start,
            b"t" => FlowPhase::Step,
            _ => FlowPhase::End,
        };
        sink.flow(&FlowPoint {
            rank,
            pid,
            tid,
            id,
            phase,
            ts,
            submission: self.vocabulary.submission_flow(cat),
            call: None,
        });
    }

    fn counter(
        &mut self,
        ev: &Event<'_>,
        rank: RankSlot,
        pid: u64,
        ts: Ns,
        sink: &mut impl TraceSink,
    ) {
        sink.mark(&Mark {
            rank,
            start: ts,
            end: ts,
        });
        let (Some(args), Some(name)) = (args_object(ev), ev.str(Field::Name)) else {
            return;
        };
        for (key, span) in object_members(args) {
            let v = &args[span.range()];
            let Some(value) = std::str::from_utf8(v)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
            else {
                continue;
            };
            let series = String::from_utf8_lossy(key);
            sink.counter(&CounterSample {
                rank,
                pid,
                name: &name,
                series: &series,
                ts,
                value,
            });
        }
    }

    fn metadata(&mut self, ev: &Event<'_>, pid: Option<u64>, sink: &mut impl TraceSink) {
        let (Some(kind), Some(pid)) = (ev.str_raw(Field::Name), pid) else {
            return;
        };
        let Some(label) = args_object(ev).and_then(|a| args_str(a, b"name")) else {
            return;
        };
        match kind {
            b"process_name" => {
                let rank = self.router.process_name(pid, &label);
                sink.process(rank, pid, &label);
            }
            b"thread_name" => {
                if let Some(tid) = thread_id(ev) {
                    let rank = self.router.peek(Some(pid));
                    sink.thread(rank, pid, tid, &label);
                }
            }
            _ => {}
        }
    }

    /// Ends the read: ranges still open arrive with `closed: false` (host
    /// ones; device commands without an end are dropped), threads in
    /// ascending order.
    pub fn finish<S: TraceSink>(&mut self, sink: &mut S) -> io::Result<()> {
        let mut left: Vec<(u64, Vec<OpenRange>)> =
            std::mem::take(&mut self.open).into_iter().collect();
        left.sort_by_key(|(tid, _)| *tid);
        for (tid, stack) in left {
            for open in stack {
                let SliceKind::Host(role) = open.kind else {
                    continue;
                };
                let rank = self.router.peek(Some(open.pid));
                let span = HostSpan {
                    rank,
                    pid: open.pid,
                    tid,
                    name: open.name,
                    cat: open.cat,
                    role,
                    start: open.start,
                    end: open.start,
                    closed: false,
                    collective: open.collective.as_ref(),
                };
                sink.host_span(&self.names, &span)?;
            }
        }
        Ok(())
    }
}

/// The name information of a slice without a usable name.
const NAMELESS: NameInfo = NameInfo {
    host_kind: super::names::HostKind::Busy,
    range: false,
    collective: false,
    device_kind: DeviceOpKind::Kernel,
};

/// The event's `tid`. Kineto writes a thread id of 2^31 or more as a
/// negative 32-bit number (docs/formats.md#kineto-json-events): a thread
/// like any other, kept as its two's complement.
#[inline]
fn thread_id(ev: &Event<'_>) -> Option<u64> {
    ev.uint(Field::Tid).or_else(|| {
        let text = std::str::from_utf8(ev.number_text(Field::Tid)?).ok()?;
        text.parse::<i64>().ok().map(|t| t as u64)
    })
}

/// A slice left out for its name: none that is a string, or one whose
/// escapes do not decode.
#[cold]
fn drop_nameless(ev: &Event<'_>, rank: RankSlot, has_name: bool, sink: &mut impl TraceSink) {
    let problem = if has_name {
        "name does not decode"
    } else {
        "no name (a string)"
    };
    drop_event(ev, rank, DropKind::NoName, problem, sink);
}

#[cold]
fn drop_event(
    ev: &Event<'_>,
    rank: RankSlot,
    kind: DropKind,
    problem: &str,
    sink: &mut impl TraceSink,
) {
    let name = ev.str(Field::Name);
    sink.dropped(&Dropped {
        rank,
        kind,
        place: Place::Event(ev.index()),
        name: name.as_deref(),
        problem,
    });
}
