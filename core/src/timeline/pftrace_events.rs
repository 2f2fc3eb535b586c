//! Perfetto `.pftrace` timelines into the timeline model
//! (docs/formats.md#pftrace, docs/formats.md#timeline-model): process and
//! thread track descriptors carry the pid, tid and names; a slice is a
//! SLICE_BEGIN / SLICE_END pair on one track, delivered at its end; the
//! category `gpu_op` makes it a device command, anything else a host call
//! (a range when its name has `::`, as in JSON). Submission flow ids ride
//! on the submitting call and on the command (docs/formats.md#pftrace-flows).
//! Timestamps are nanoseconds already. Each event costs one map lookup:
//! a track's descriptor, open slices and rank slot live together
//! (docs/benchmarks.md#the-pftrace-reader).

use std::io;

use rustc_hash::FxHashMap;

use crate::pftrace::{AnnotationValue, EventType, Packet, PacketData, TrackEvent};

use super::chrome_json::CLOCK_JUMP_NS;
use super::collective::pftrace_collective_args;
use super::model::{
    CollectiveArgs, DeviceOp, DropKind, Dropped, FlowPhase, FlowPoint, HostRole, HostSpan, Ns,
    Place, RankSlot, TraceSink,
};
use super::names::{CatId, NameId, Names};
use super::rank::RankRouter;

/// A slice waiting for its end.
struct OpenSlice {
    name: NameId,
    start: Ns,
    cat: CatId,
    gpu: bool,
    instance: Option<u64>,
    flow: Option<u64>,
    collective: Option<CollectiveArgs>,
}

/// What is known of one track: its descriptor's pid and tid (a process
/// track has no tid; a track without a descriptor is pid 0), its open
/// slices, and its rank slot as of descriptor generation `slot_generation`.
/// One map lookup per event finds all of it (docs/benchmarks.md#the-pftrace-reader).
#[derive(Default)]
struct Track {
    pid: u64,
    tid: Option<u64>,
    open: Vec<OpenSlice>,
    slot: RankSlot,
    /// The [`PftraceEvents::generation`] `slot` was found in, 0: never.
    slot_generation: u32,
}

/// The interpreter of one `.pftrace` file's packets.
pub struct PftraceEvents {
    pub names: Names,
    pub router: RankRouter,
    /// track uuid -> what is known of it.
    tracks: FxHashMap<u64, Track>,
    /// Counts the descriptors read (from 1): a process descriptor may move
    /// a pid to another rank, so cached slots of older generations are
    /// looked up again.
    generation: u32,
    anchors: Vec<Option<Ns>>,
}

impl PftraceEvents {
    pub fn new(router: RankRouter) -> Self {
        PftraceEvents {
            names: Names::default(),
            router,
            tracks: FxHashMap::default(),
            generation: 1,
            anchors: Vec::new(),
        }
    }

    /// The track `uuid` and the rank slot of its pid (the router's
    /// [`RankRouter::peek`], cached per track until the next descriptor).
    #[inline]
    fn track_and_slot(&mut self, uuid: u64) -> (&mut Track, RankSlot) {
        let t = self.tracks.entry(uuid).or_default();
        if t.slot_generation != self.generation {
            t.slot = self.router.peek(Some(t.pid));
            t.slot_generation = self.generation;
        }
        let slot = t.slot;
        (t, slot)
    }

    /// Interprets one packet; `offset` is its byte offset in the file.
    pub fn feed<S: TraceSink>(
        &mut self,
        p: &Packet<'_>,
        offset: u64,
        sink: &mut S,
    ) -> io::Result<()> {
        match &p.data {
            PacketData::TrackDescriptor(td) => {
                let Some(uuid) = td.uuid else { return Ok(()) };
                self.generation += 1;
                // pids are 32-bit in the protobuf; unitrace's device
                // processes are `-1` there.
                if let Some(pr) = &td.process {
                    let pid = pr.pid.unwrap_or(0) as u32 as u64;
                    let t = self.tracks.entry(uuid).or_default();
                    (t.pid, t.tid) = (pid, None);
                    if let Some(name) = pr.process_name.or(td.name) {
                        let label = String::from_utf8_lossy(name);
                        let rank = self.router.process_name(pid, &label);
                        sink.process(rank, pid, &label);
                    }
                } else if let Some(t) = &td.thread {
                    let pid = t.pid.unwrap_or(0) as u32 as u64;
                    let tid = t.tid.unwrap_or(0) as u64;
                    let track = self.tracks.entry(uuid).or_default();
                    (track.pid, track.tid) = (pid, Some(tid));
                    if let Some(name) = t.thread_name.or(td.name) {
                        let rank = self.router.peek(Some(pid));
                        sink.thread(rank, pid, tid, &String::from_utf8_lossy(name));
                    }
                }
                Ok(())
            }
            PacketData::TrackEvent(te) => {
                let dropped = |kind, problem| Dropped {
                    rank: self.router.peek(None),
                    kind,
                    place: Place::Packet(offset),
                    name: None,
                    problem,
                };
                let Some(ts) = p.timestamp else {
                    sink.dropped(&dropped(
                        DropKind::NoTimestamp,
                        "track event without a timestamp",
                    ));
                    return Ok(());
                };
                let Ok(ts) = Ns::try_from(ts) else {
                    sink.dropped(&dropped(DropKind::TimeOutOfRange, "timestamp out of range"));
                    return Ok(());
                };
                match te.kind {
                    EventType::SliceBegin => {
                        self.begin(te, ts, sink);
                        Ok(())
                    }
                    EventType::SliceEnd => self.end(te, ts, offset, sink),
                    _ => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    fn begin(&mut self, te: &TrackEvent<'_>, ts: Ns, sink: &mut impl TraceSink) {
        let uuid = te.track_uuid.unwrap_or(0);
        let name = self.names.intern_utf8(te.name.unwrap_or(b""));
        let gpu = te.has_category(b"gpu_op");
        let cat = self.names.cat_bytes(te.first_category().unwrap_or(b""));
        let (mut instance, mut flow, mut collective) = (None, None, None);
        if gpu {
            flow = te.flow_ids().next();
            instance = te
                .annotation(b"id")
                .and_then(|a| match a {
                    AnnotationValue::Str(s) => std::str::from_utf8(s).ok()?.parse().ok(),
                    other => other.as_u64(),
                })
                .or(flow);
        } else {
            // The submitting call carries the flow ids.
            let (t, rank) = self.track_and_slot(uuid);
            let (pid, tid) = (t.pid, t.tid.unwrap_or(uuid));
            for id in te.flow_ids() {
                sink.flow(&FlowPoint {
                    rank,
                    pid,
                    tid,
                    id,
                    phase: FlowPhase::Start,
                    ts,
                    submission: true,
                    call: Some(name),
                });
            }
            if self.names.info(name).collective {
                collective = Some(pftrace_collective_args(te));
            }
        }
        self.tracks.entry(uuid).or_default().open.push(OpenSlice {
            name,
            start: ts,
            cat,
            gpu,
            instance,
            flow,
            collective,
        });
    }

    fn end<S: TraceSink>(
        &mut self,
        te: &TrackEvent<'_>,
        ts: Ns,
        offset: u64,
        sink: &mut S,
    ) -> io::Result<()> {
        let uuid = te.track_uuid.unwrap_or(0);
        let (t, rank) = self.track_and_slot(uuid);
        let (pid, tid) = (t.pid, t.tid.unwrap_or(uuid));
        let Some(s) = t.open.pop() else {
            sink.dropped(&Dropped {
                rank,
                kind: DropKind::EndBeforeStart,
                place: Place::Packet(offset),
                name: None,
                problem: "slice end without a begin",
            });
            return Ok(());
        };
        let name = self.names.name(s.name);
        let dropped = |kind, problem| Dropped {
            rank,
            kind,
            place: Place::Packet(offset),
            name: Some(name),
            problem,
        };
        if !plausible(&mut self.anchors, rank, s.start) {
            let problem = "more than a day away from the rank's first timestamp";
            sink.dropped(&dropped(DropKind::ClockJump, problem));
            return Ok(());
        }
        if ts < s.start {
            sink.dropped(&dropped(DropKind::EndBeforeStart, "ends before it begins"));
            return Ok(());
        }
        self.router.mark_used(rank);
        if s.gpu {
            if ts == s.start {
                let problem = "zero-length device command";
                sink.dropped(&dropped(DropKind::ZeroLengthDeviceOp, problem));
                return Ok(());
            }
            let details = sink.device_details();
            let op = DeviceOp {
                rank,
                pid,
                tid,
                name: if details { s.name } else { NameId::NONE },
                cat: s.cat,
                kind: self.names.info(s.name).device_kind,
                start: s.start,
                end: ts,
                instance: s.instance.filter(|_| details),
                flow: s.flow.filter(|_| details),
                bytes: None,
            };
            return sink.device_op(&self.names, &op);
        }
        let span = HostSpan {
            rank,
            pid,
            tid,
            name: s.name,
            cat: s.cat,
            role: role(&self.names, s.name),
            start: s.start,
            end: ts,
            closed: true,
            collective: s.collective.as_ref(),
        };
        sink.host_span(&self.names, &span)
    }

    /// Ends the read: host slices still open (a cut file) arrive with
    /// `closed: false`, device ones are dropped; tracks in ascending order.
    pub fn finish<S: TraceSink>(&mut self, sink: &mut S) -> io::Result<()> {
        let mut left: Vec<(u64, u64, Option<u64>, Vec<OpenSlice>)> = self
            .tracks
            .iter_mut()
            .filter(|(_, t)| !t.open.is_empty())
            .map(|(&uuid, t)| (uuid, t.pid, t.tid, std::mem::take(&mut t.open)))
            .collect();
        left.sort_by_key(|(uuid, ..)| *uuid);
        for (uuid, pid, tid, slices) in left {
            let tid = tid.unwrap_or(uuid);
            let rank = self.router.peek(Some(pid));
            for s in slices.into_iter().filter(|s| !s.gpu) {
                let span = HostSpan {
                    rank,
                    pid,
                    tid,
                    name: s.name,
                    cat: s.cat,
                    role: role(&self.names, s.name),
                    start: s.start,
                    end: s.start,
                    closed: false,
                    collective: s.collective.as_ref(),
                };
                sink.host_span(&self.names, &span)?;
            }
        }
        Ok(())
    }
}

fn role(names: &Names, name: NameId) -> HostRole {
    if names.info(name).range {
        HostRole::Range
    } else {
        HostRole::ApiCall
    }
}

/// A timestamp is plausible unless it is more than a day away from the
/// rank's first one (docs/tracestat.md#implausible-events).
fn plausible(anchors: &mut Vec<Option<Ns>>, rank: RankSlot, ts: Ns) -> bool {
    if anchors.len() <= rank {
        anchors.resize(rank + 1, None);
    }
    let first = *anchors[rank].get_or_insert(ts);
    (ts - first).abs() <= CLOCK_JUMP_NS
}
