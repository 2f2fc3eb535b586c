//! `.pftrace` as `unitrace --output-format protobuf` writes it
//! (docs/formats.md#pftrace): one `TracePacket` per record, a clock
//! snapshot first, track descriptors instead of metadata events (host
//! process at the start, a host thread before its first event, device
//! process and engine tracks at first use), each slice a SLICE_BEGIN and a
//! SLICE_END, debug annotations for the JSON `args`, H2D flows as
//! `flow_ids`. Fields go out in field-number order, as protobuf's C++
//! serializer writes them.

use std::io::{self, Write};

use unitrace_core::pftrace::write_varint;

use super::event::{Args, Event, Flow, Item, Ns, Sink, Slice, Track};
use super::output::{Limit, Output};
use super::scenario::{Identity, MetricsLink, ENGINES};
use crate::names::percent_encode;

// Field numbers (perfetto.protos), docs/formats.md#pftrace-records.
const TRACE_PACKET: u32 = 1;
const PACKET_CLOCK_SNAPSHOT: u32 = 6;
const PACKET_TIMESTAMP: u32 = 8;
const PACKET_SEQUENCE_ID: u32 = 10;
const PACKET_TRACK_EVENT: u32 = 11;
const PACKET_CLOCK_ID: u32 = 58;
const PACKET_TRACK_DESCRIPTOR: u32 = 60;
const SNAPSHOT_CLOCKS: u32 = 1;
const CLOCK_ID: u32 = 1;
const CLOCK_TIMESTAMP: u32 = 2;
const TD_UUID: u32 = 1;
const TD_NAME: u32 = 2;
const TD_PROCESS: u32 = 3;
const TD_THREAD: u32 = 4;
const TD_PARENT: u32 = 5;
const PROCESS_PID: u32 = 1;
const PROCESS_NAME: u32 = 6;
const THREAD_PID: u32 = 1;
const THREAD_TID: u32 = 2;
const THREAD_NAME: u32 = 5;
const TE_ANNOTATION: u32 = 4;
const TE_TYPE: u32 = 9;
const TE_TRACK: u32 = 11;
const TE_CATEGORY: u32 = 22;
const TE_NAME: u32 = 23;
const TE_FLOW_IDS: u32 = 47;
const DA_UINT: u32 = 3;
const DA_INT: u32 = 4;
const DA_STRING: u32 = 6;
const DA_NAME: u32 = 10;

const SLICE_BEGIN: u64 = 1;
const SLICE_END: u64 = 2;
const CLOCK_REALTIME: u64 = 1;
const CLOCK_BOOTTIME: u64 = 6;
/// Sequence of the clock snapshot and the descriptors; the host thread's is the next.
const DESCRIPTOR_SEQUENCE: u64 = 1;
const HOST_SEQUENCE: u64 = 2;

const WIRE_VARINT: u32 = 0;
const WIRE_FIXED64: u32 = 1;
const WIRE_LEN: u32 = 2;

/// Track uuid: FNV-1a 64 over the 8 little-endian bytes of each input
/// (docs/formats.md#pftrace-tracks); 0 becomes 1.
pub fn track_uuid(parts: &[u64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for byte in p.to_le_bytes() {
            h ^= byte as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    if h == 0 {
        1
    } else {
        h
    }
}

/// A protobuf message under construction (reused buffers).
fn tag(b: &mut Vec<u8>, field: u32, wire: u32) {
    write_varint(b, ((field << 3) | wire) as u64);
}

fn varint_field(b: &mut Vec<u8>, field: u32, v: u64) {
    tag(b, field, WIRE_VARINT);
    write_varint(b, v);
}

fn bytes_field(b: &mut Vec<u8>, field: u32, v: &[u8]) {
    tag(b, field, WIRE_LEN);
    write_varint(b, v.len() as u64);
    b.extend_from_slice(v);
}

pub struct PftraceSink<'a, W: Write> {
    out: Output<W>,
    id: &'a Identity,
    link: MetricsLink,
    process_uuid: u64,
    thread_uuid: Option<u64>,
    device_uuid: Option<u64>,
    engine_track: [Option<u64>; ENGINES.len()],
    next_tid: u32,
    /// Scratch: the track event, an annotation, the packet.
    event: Vec<u8>,
    scratch: Vec<u8>,
    packet: Vec<u8>,
}

impl<'a, W: Write> PftraceSink<'a, W> {
    pub fn new(out: W, id: &'a Identity, link: MetricsLink, limit: Option<Limit>) -> Self {
        let rank = id.rank as u64;
        PftraceSink {
            out: Output::new(out, limit),
            id,
            link,
            process_uuid: track_uuid(&[id.pid as u64, rank, 0x5052_4f43]), // "PROC"
            thread_uuid: None,
            device_uuid: None,
            engine_track: [None; ENGINES.len()],
            next_tid: id.device_pid,
            event: Vec::with_capacity(1024),
            scratch: Vec::with_capacity(256),
            packet: Vec::with_capacity(1024),
        }
    }

    pub fn into_inner(self) -> W {
        self.out.into_inner()
    }

    /// Writes `self.packet` as one record.
    fn record(&mut self) -> io::Result<()> {
        let b = self.out.buf();
        let start = b.len();
        tag(b, TRACE_PACKET, WIRE_LEN);
        write_varint(b, self.packet.len() as u64);
        b.extend_from_slice(&self.packet);
        self.out.unit_done(start)
    }

    /// A packet on `sequence` at `ts` holding `body` (already a complete
    /// field: a track event or descriptor).
    fn packet(&mut self, ts: Ns, sequence: u64, body_field: u32, body: &[u8]) {
        let p = &mut self.packet;
        p.clear();
        varint_field(p, PACKET_TIMESTAMP, ts);
        varint_field(p, PACKET_SEQUENCE_ID, sequence);
        bytes_field(p, body_field, body);
        varint_field(p, PACKET_CLOCK_ID, CLOCK_REALTIME);
    }

    fn clock_snapshot(&mut self, ts: Ns) -> io::Result<()> {
        let mut clocks = Vec::new();
        // Boot time: the node up for a day and some, per rank.
        let boot = 86_400_000_000_000 + (self.id.node as u64) * 7_919_000_000 + ts % 1_000_000_000;
        for (clock, value) in [(CLOCK_REALTIME, ts), (CLOCK_BOOTTIME, boot)] {
            self.scratch.clear();
            varint_field(&mut self.scratch, CLOCK_ID, clock);
            varint_field(&mut self.scratch, CLOCK_TIMESTAMP, value);
            bytes_field(&mut clocks, SNAPSHOT_CLOCKS, &self.scratch);
        }
        let p = &mut self.packet;
        p.clear();
        bytes_field(p, PACKET_CLOCK_SNAPSHOT, &clocks);
        varint_field(p, PACKET_SEQUENCE_ID, DESCRIPTOR_SEQUENCE);
        self.record()
    }

    /// A track descriptor: `uuid`, `name`, a process or thread part, parent.
    fn descriptor(
        &mut self,
        ts: Ns,
        uuid: u64,
        name: &str,
        part: Part,
        parent: Option<u64>,
    ) -> io::Result<()> {
        let mut td = Vec::with_capacity(128);
        varint_field(&mut td, TD_UUID, uuid);
        bytes_field(&mut td, TD_NAME, name.as_bytes());
        self.scratch.clear();
        match part {
            Part::Process { pid } => {
                varint_field(&mut self.scratch, PROCESS_PID, (pid & 0x7FFF_FFFF) as u64);
                bytes_field(&mut self.scratch, PROCESS_NAME, name.as_bytes());
                bytes_field(&mut td, TD_PROCESS, &self.scratch);
            }
            Part::Thread { pid, tid } => {
                varint_field(&mut self.scratch, THREAD_PID, (pid & 0x7FFF_FFFF) as u64);
                varint_field(&mut self.scratch, THREAD_TID, (tid & 0x7FFF_FFFF) as u64);
                bytes_field(&mut self.scratch, THREAD_NAME, name.as_bytes());
                bytes_field(&mut td, TD_THREAD, &self.scratch);
            }
        }
        if let Some(parent) = parent {
            varint_field(&mut td, TD_PARENT, parent);
        }
        self.packet(ts, DESCRIPTOR_SEQUENCE, PACKET_TRACK_DESCRIPTOR, &td);
        self.record()
    }

    fn host_track(&mut self, ts: Ns) -> io::Result<u64> {
        if let Some(uuid) = self.thread_uuid {
            return Ok(uuid);
        }
        let (pid, rank) = (self.id.pid, self.id.rank as u64);
        let uuid = track_uuid(&[pid as u64, pid as u64, 0x484f_5354 + rank]); // "HOST" + rank
        self.thread_uuid = Some(uuid);
        let name = format!("Thread {pid}");
        self.descriptor(
            ts,
            uuid,
            &name,
            Part::Thread { pid, tid: pid },
            Some(self.process_uuid),
        )?;
        Ok(uuid)
    }

    fn engine_track(&mut self, engine: usize, ts: Ns) -> io::Result<u64> {
        if let Some(uuid) = self.engine_track[engine] {
            return Ok(uuid);
        }
        let pid = self.id.device_pid;
        let device = match self.device_uuid {
            Some(u) => u,
            None => {
                let u = track_uuid(&[pid as u64]);
                self.device_uuid = Some(u);
                let name = self.id.device_process_name();
                self.descriptor(ts, u, &name, Part::Process { pid }, None)?;
                u
            }
        };
        let tid = self.next_tid;
        self.next_tid = self.next_tid.wrapping_sub(1);
        let uuid = track_uuid(&[pid as u64, tid as u64]);
        self.engine_track[engine] = Some(uuid);
        let name = self.id.engine_thread_name(engine);
        self.descriptor(ts, uuid, &name, Part::Thread { pid, tid }, Some(device))?;
        Ok(uuid)
    }

    /// A SLICE_BEGIN (with name, category, annotations, flow) or a
    /// SLICE_END on `track`.
    #[allow(clippy::too_many_arguments)]
    fn track_event(
        &mut self,
        ts: Ns,
        kind: u64,
        track: u64,
        begin: Option<(&str, &[u8], &Args<'_>)>,
        flow: Option<u64>,
    ) -> io::Result<()> {
        let mut ev = std::mem::take(&mut self.event);
        ev.clear();
        if let Some((name, _, args)) = begin {
            self.annotations(&mut ev, args, name);
        }
        varint_field(&mut ev, TE_TYPE, kind);
        varint_field(&mut ev, TE_TRACK, track);
        if let Some((name, cat, _)) = begin {
            bytes_field(&mut ev, TE_CATEGORY, cat);
            bytes_field(&mut ev, TE_NAME, name.as_bytes());
        }
        if let Some(id) = flow {
            tag(&mut ev, TE_FLOW_IDS, WIRE_FIXED64);
            ev.extend_from_slice(&id.to_le_bytes());
        }
        self.packet(ts, HOST_SEQUENCE, PACKET_TRACK_EVENT, &ev);
        self.event = ev;
        self.record()
    }

    /// The debug annotations of a slice (docs/formats.md#pftrace-events).
    fn annotations(&mut self, ev: &mut Vec<u8>, args: &Args<'_>, name: &str) {
        let s = &mut self.scratch;
        let mut put = |ev: &mut Vec<u8>, key: &str, value: Value<'_>| {
            s.clear();
            match value {
                Value::Uint(v) => varint_field(s, DA_UINT, v),
                Value::Int(v) => varint_field(s, DA_INT, v as u64),
                Value::Str(v) => bytes_field(s, DA_STRING, v),
            }
            bytes_field(s, DA_NAME, key.as_bytes());
            bytes_field(ev, TE_ANNOTATION, s);
        };
        match args {
            Args::Plain => put(ev, "id", Value::Uint(0)),
            Args::Device { id } => {
                let text = itoa::Buffer::new().format(*id).to_owned();
                put(ev, "id", Value::Str(text.as_bytes()));
                if self.link != MetricsLink::None {
                    // Always http, the name unquoted (unlike the JSON link).
                    let mut url = b"http://localhost:8000/".to_vec();
                    percent_encode(&mut url, name.as_bytes());
                    url.push(b'/');
                    url.extend_from_slice(text.as_bytes());
                    put(ev, "metrics", Value::Str(&url));
                }
            }
            Args::Itt(pairs) => {
                let mut text = Vec::new();
                for (key, items) in pairs.iter() {
                    text.clear();
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            text.push(b',');
                        }
                        match item {
                            Item::Num(v) => {
                                text.extend_from_slice(itoa::Buffer::new().format(*v).as_bytes())
                            }
                            Item::Str(v) => {
                                text.push(b'"');
                                text.extend_from_slice(v.as_bytes());
                                text.push(b'"');
                            }
                        }
                    }
                    put(ev, key, Value::Str(&text));
                }
            }
            Args::Mpi(pairs) => {
                for (key, v) in pairs.iter() {
                    let value = match *key {
                        "ssize" | "dsize" => Value::Uint(*v as u64),
                        _ => Value::Int(*v),
                    };
                    put(ev, key, value);
                }
            }
        }
    }

    fn slice(&mut self, s: &Slice<'_>) -> io::Result<()> {
        let (ts, end) = self.id.stamp_span(s.start, s.end);
        let (track, cat) = match s.track {
            Track::Host => (self.host_track(ts)?, &b"cpu_op"[..]),
            Track::Engine(e) => (self.engine_track(e, ts)?, &b"gpu_op"[..]),
        };
        // D2H flows are not written in this form (docs/formats.md#pftrace-flows).
        let flow = match s.flow {
            Flow::Submit(id) | Flow::Command(id) => Some(id),
            Flow::None | Flow::Sync(_) => None,
        };
        self.track_event(ts, SLICE_BEGIN, track, Some((s.name, cat, &s.args)), flow)?;
        self.track_event(end, SLICE_END, track, None, None)
    }
}

enum Part {
    Process { pid: u32 },
    Thread { pid: u32, tid: u32 },
}

enum Value<'a> {
    Uint(u64),
    Int(i64),
    Str(&'a [u8]),
}

impl<W: Write> Sink for PftraceSink<'_, W> {
    fn event(&mut self, event: &Event<'_>) -> io::Result<()> {
        if self.out.stopped() {
            return Ok(());
        }
        match event {
            Event::HostProcess { ts } => {
                let ts = self.id.stamp_span(*ts, *ts).0;
                self.clock_snapshot(ts)?;
                let (uuid, pid) = (self.process_uuid, self.id.pid);
                self.descriptor(
                    ts,
                    uuid,
                    &self.id.process_name(),
                    Part::Process { pid },
                    None,
                )
            }
            Event::Slice(s) => self.slice(s),
            Event::Begin { name, ts, args } => {
                let ts = self.id.stamp(*ts);
                let ts = ts - ts % super::scenario::GRID_NS;
                let track = self.host_track(ts)?;
                self.track_event(ts, SLICE_BEGIN, track, Some((name, b"cpu_op", args)), None)
            }
            Event::End { ts, .. } => {
                let ts = self.id.stamp(*ts);
                let track = self.host_track(ts)?;
                self.track_event(ts, SLICE_END, track, None, None)
            }
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.finish(b"")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_hash_little_endian_words() {
        // FNV-1a 64 of eight zero bytes.
        assert_eq!(track_uuid(&[0]), 0xa8c7_f832_281a_39c5);
        assert_ne!(track_uuid(&[1, 2]), track_uuid(&[2, 1]));
    }
}
