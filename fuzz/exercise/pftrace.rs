//! Perfetto protobuf traces (docs/formats.md#pftrace, `unitrace_core::pftrace`
//! and `unitrace_core::timeline`): records, an error with a byte offset, or
//! a cut, never a panic, on any bytes; and the reader agrees with itself:
//! * reading the input in pieces of 1..=7 bytes yields the same records,
//!   the same error offset and the same cut as reading it whole;
//! * record offsets are contiguous and an error offset lies inside the
//!   input; a cut keeps exactly the bytes of the complete records;
//! * a record whose packet decodes is rewritten by the identity editor
//!   into itself (byte for byte unless lengths were padded), and by a renaming editor into a record that decodes
//!   to the same kind, name and number of flow ids with every uuid and flow
//!   id mapped (what mergetrace writes), and the in-place patch either
//!   refuses or gives the same bytes as the rewrite;
//! * the merge's shallow `PacketView` of a packet that decodes reads, and
//!   agrees with the decoder (timestamp, kind, track uuid, flow ids); its
//!   flow-only patch renames exactly the flow ids and nothing else;
//! * the decoder's fast paths agree with the reference decoder: the same
//!   packet (fields, categories, flow ids, annotations), or the same error
//!   at the same offset, also when decoded in place over another packet;
//! * the format-neutral timeline reader runs over the input without panic.
//!
//! Shared by the fuzz target and the regression tests (which replay
//! `fuzz/regressions/pftrace/*`).

use std::io::Read;
use std::path::Path;

use unitrace_core::pftrace::{
    patch_record, patch_view_flows, rewrite_packet, view_flow_ids, Packet, PacketData,
    PacketEditor, PacketReader, PacketView, RewriteBuffers, ViewKind,
};
use unitrace_core::timeline;

struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.step = self.step % 7 + 1;
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Everything a read yields: records (offset, bytes), then the error offset
/// or the cut.
#[derive(Debug, PartialEq)]
struct Outcome {
    records: Vec<(u64, Vec<u8>)>,
    error: Option<u64>,
    cut: Option<(u64, u64)>,
}

fn read_all(src: impl Read) -> Outcome {
    let mut r = PacketReader::with_max_packet(src, 1 << 16);
    let mut out = Outcome {
        records: Vec::new(),
        error: None,
        cut: None,
    };
    loop {
        match r.next_record() {
            Ok(Some(rec)) => out.records.push((rec.offset, rec.raw.to_vec())),
            Ok(None) => break,
            Err(e) => {
                out.error = Some(e.offset);
                break;
            }
        }
    }
    out.cut = r
        .summary()
        .truncation
        .as_ref()
        .map(|t| (t.offset, t.dropped_bytes));
    out
}

struct Rename;

fn mix(v: u64) -> u64 {
    v.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555
}

impl PacketEditor for Rename {
    fn track_uuid(&mut self, u: u64) -> u64 {
        mix(u)
    }
    fn flow_id(&mut self, id: u64) -> u64 {
        mix(id)
    }
    fn timestamp(&mut self, ts: u64) -> u64 {
        ts / 2
    }
    fn pid(&mut self, p: i32) -> i32 {
        p.wrapping_add(1)
    }
    fn tid(&mut self, t: i64) -> i64 {
        t.wrapping_sub(1)
    }
    fn process_name(&mut self, n: &[u8]) -> Option<Vec<u8>> {
        Some([b"rank 1 ", n].concat())
    }
}

struct Keep;
impl PacketEditor for Keep {}

fn check_rewrite(packet: &[u8], raw: &[u8]) {
    let Ok(p) = Packet::decode(packet) else {
        return;
    };
    let mut bufs = RewriteBuffers::default();
    let mut same = Vec::new();
    rewrite_packet(packet, &mut Keep, &mut bufs, &mut same);
    // Lengths are re-encoded minimally (a writer may pad them): the identity
    // rewrite is a fixed point of itself, and byte-exact on minimal input.
    let same_packet = &same[same.len() - {
        let (n, _) = unitrace_core::pftrace::read_varint(&same[1..]).expect("record length");
        n as usize
    }..];
    let mut again = Vec::new();
    rewrite_packet(same_packet, &mut Keep, &mut bufs, &mut again);
    assert_eq!(again, same, "identity rewrite is not a fixed point");
    if same.len() == raw.len() {
        assert_eq!(same, raw, "identity rewrite changed the record");
    }
    let mut out = Vec::new();
    rewrite_packet(packet, &mut Rename, &mut bufs, &mut out);
    // In place: either refused (a size would change) or the same bytes.
    let mut patched = raw.to_vec();
    // (Compared when no padded length was re-encoded by the rewrite.)
    if patch_record(packet, &mut patched, &mut Rename) && out.len() == raw.len() {
        assert_eq!(patched, out, "in-place patch differs from the rewrite");
    }
    let mut patched = raw.to_vec();
    assert!(patch_record(packet, &mut patched, &mut Keep));
    assert_eq!(patched, raw, "identity patch changed the record");
    let mut r = PacketReader::new(&out[..]);
    let rec = r
        .next_record()
        .expect("rewritten record reads")
        .expect("one record");
    assert_eq!(rec.raw.len(), out.len(), "one record exactly");
    let q = rec.decode().expect("rewritten packet decodes");
    assert_eq!(q.timestamp, p.timestamp.map(|t| t / 2));
    match (p.data, q.data) {
        (PacketData::TrackEvent(a), PacketData::TrackEvent(b)) => {
            assert_eq!(a.kind, b.kind);
            assert_eq!(a.name, b.name);
            assert_eq!(b.track_uuid, a.track_uuid.map(mix));
            let fa: Vec<u64> = a.flow_ids().map(mix).collect();
            let fb: Vec<u64> = b.flow_ids().collect();
            assert_eq!(fa, fb);
            assert_eq!(a.annotations().count(), b.annotations().count());
        }
        (PacketData::TrackDescriptor(a), PacketData::TrackDescriptor(b)) => {
            assert_eq!(b.uuid, a.uuid.map(mix));
            assert_eq!(b.parent_uuid, a.parent_uuid.map(mix));
            assert_eq!(a.process.is_some(), b.process.is_some());
            assert_eq!(a.thread.is_some(), b.thread.is_some());
        }
        (PacketData::ClockSnapshot(a), PacketData::ClockSnapshot(b)) => {
            assert!(a.clocks().eq(b.clocks()));
        }
        (PacketData::Other, PacketData::Other) => {}
        (a, b) => panic!("packet kind changed: {a:?} -> {b:?}"),
    }
}

/// Everything a decoded packet tells, in a comparable form.
fn describe(p: &Packet<'_>) -> String {
    match &p.data {
        PacketData::TrackEvent(e) => format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {:?} {:?} {:?}",
            p.timestamp,
            p.timestamp_clock_id,
            p.sequence_id,
            e.kind,
            e.track_uuid,
            e.name,
            e.categories().collect::<Vec<_>>(),
            e.first_category(),
            e.has_category(b"gpu_op"),
            e.flow_ids().collect::<Vec<_>>(),
            e.terminating_flow_ids().collect::<Vec<_>>(),
            e.annotations().collect::<Vec<_>>(),
        ),
        _ => format!("{p:?}"),
    }
}

/// The fast decoder against the reference decoder (see the module head).
fn check_decoders(packet: &[u8]) {
    let fast = Packet::decode(packet);
    let reference = Packet::decode_reference(packet);
    let mut reused = Packet::decode(b"\x40\x05\x5a\x04\x48\x01\x58\x07").expect("small event");
    let in_place = Packet::decode_into(packet, &mut reused);
    match (&fast, &reference, &in_place) {
        (Ok(a), Ok(b), Ok(())) => {
            assert_eq!(describe(a), describe(b), "fast decoder differs");
            assert_eq!(describe(&reused), describe(b), "in-place decoder differs");
        }
        (Err(a), Err(b), Err(c)) => {
            assert_eq!((a.offset, a.problem()), (b.offset, b.problem()));
            assert_eq!((c.offset, c.problem()), (b.offset, b.problem()));
        }
        (a, b, c) => panic!("decoders disagree: fast {a:?}, reference {b:?}, in place {c:?}"),
    }
}

/// The shallow view against the full decoder (see the module head).
fn check_view(packet: &[u8]) {
    let view = PacketView::read(packet);
    if let Err(e) = &view {
        assert!(
            e.offset < packet.len() as u64 + 1,
            "view error offset past the packet"
        );
    }
    let Ok(p) = Packet::decode(packet) else {
        return;
    };
    let view = view.expect("a packet that decodes has a view");
    assert_eq!(view.timestamp, p.timestamp);
    match (view.kind, p.data) {
        (
            ViewKind::TrackEvent {
                track_uuid, flows, ..
            },
            PacketData::TrackEvent(e),
        ) => {
            assert_eq!(track_uuid, e.track_uuid);
            let all: Vec<u64> = e.flow_ids().chain(e.terminating_flow_ids()).collect();
            assert_eq!(view_flow_ids(flows).collect::<Vec<_>>(), all);
            // `flows` is borrowed from `packet`: patch a copy of it.
            let mut patched = packet.to_vec();
            patch_view_flows(packet, flows, &mut patched, mix);
            let q = Packet::decode(&patched).expect("patched packet decodes");
            let PacketData::TrackEvent(f) = q.data else {
                panic!("patched packet changed kind");
            };
            let mapped: Vec<u64> = all.iter().map(|&id| mix(id)).collect();
            let got: Vec<u64> = f.flow_ids().chain(f.terminating_flow_ids()).collect();
            assert_eq!(got, mapped);
            assert_eq!(f.track_uuid, e.track_uuid);
            assert_eq!(f.name, e.name);
        }
        (ViewKind::TrackDescriptor, PacketData::TrackDescriptor(_)) => {}
        (ViewKind::Other, PacketData::ClockSnapshot(_) | PacketData::Other) => {}
        (v, d) => panic!("view {v:?} disagrees with the decoder {d:?}"),
    }
}

pub fn run(data: &[u8]) {
    let whole = read_all(data);
    let pieces = read_all(Trickle { data, step: 0 });
    assert_eq!(whole, pieces, "piecewise read differs");
    let mut at = 0u64;
    for (offset, raw) in &whole.records {
        assert_eq!(*offset, at, "records are contiguous");
        at += raw.len() as u64;
    }
    if let Some(e) = whole.error {
        assert!(e <= data.len() as u64, "error offset past the input");
    }
    if let Some((offset, dropped)) = whole.cut {
        assert_eq!(offset, at);
        assert_eq!(offset + dropped, data.len() as u64);
    }
    for (_, raw) in &whole.records {
        let mut r = PacketReader::new(&raw[..]);
        let rec = r
            .next_record()
            .expect("record re-reads")
            .expect("one record");
        if let Err(e) = rec.decode() {
            assert!(
                e.offset < raw.len() as u64,
                "decode error offset past the record"
            );
        }
        check_decoders(rec.packet);
        check_rewrite(rec.packet, raw);
        check_view(rec.packet);
    }
    let _ = unitrace_core::pftrace::sniff(data);
    let _ = timeline::read_bytes(data, Path::new("fuzz"), &mut ());
}
