//! One input's records as a merged `.pftrace` holds them: the edits
//! mergetrace's protobuf merge makes (docs/mergetrace.md#usage, the
//! `.pftrace` paragraph) and tracestat's annotated trace makes to its
//! `.pftrace` inputs (docs/tracestat.md#annotated-trace), so that both keep
//! ranks apart the same way:
//! * flow ids: unitrace uses the bare kernel instance id, so the ranks of a
//!   concatenation join each other's flow arrows; input `i` gets
//!   `(i << 32) | id` (the scheme of JSON flows, `crate::trace::merged_input`),
//!   ids that do not fit a fresh id above 2^63;
//! * track uuids (hashed from pid/tid, so equal for processes with equal
//!   pids on different nodes): a uuid already used by an earlier input is
//!   renamed for this input (its descriptors and events alike);
//! * on request, pids/tids of the descriptors renumbered per input (one
//!   map for both), process names prefixed with the rank, times shifted,
//!   metric links tagged.
//!
//! A renamed record is patched in place when every new value has the size
//! of the old one (flow ids are fixed64; fresh uuids are chosen with the
//! same varint size), else re-encoded field by field; every other byte is
//! kept ([`patch_record`] / [`rewrite_packet`]). [`write_shallow`] reads a
//! packet only as far as its edits need ([`PacketView`]), which keeps the
//! merge as fast per byte as the JSON one
//! (docs/benchmarks.md#mergetrace-on-pftrace).

use std::io::{self, Write};

use rustc_hash::{FxHashMap, FxHashSet};

use crate::pftrace::{
    patch_record, patch_view_flows, rewrite_packet, varint_len, view_flow_ids, AnnotationValue,
    Packet, PacketData, PacketEditor, PftraceError, Record, RewriteBuffers, ViewKind,
};
use crate::trace::merged_input::tagged_link;

/// Flow ids at or above this do not fit the `(input << 32) | id` scheme and
/// get fresh ids counted from [`BIG_FLOW_BASE`].
pub const SMALL_FLOW_LIMIT: u64 = 1 << 32;
const BIG_FLOW_BASE: u64 = 1 << 63;

/// Name of the debug annotation holding a device slice's metric link
/// (docs/formats.md#pftrace).
const METRICS: &[u8] = b"metrics";

/// What the inputs of one merged `.pftrace` share.
#[derive(Debug, Default)]
pub struct MergedTracks {
    /// Track uuids written so far (after renaming).
    uuids: FxHashSet<u64>,
    next_big_flow: u64,
    /// Pid/tid renumbering: the last new id given.
    next_id: u64,
}

/// What one input's records need changed.
pub struct InputRecords<'g> {
    index: u64,
    merged: &'g mut MergedTracks,
    uuids: FxHashMap<u64, u64>,
    big_flows: FxHashMap<u64, u64>,
    remap: Option<FxHashMap<u64, u64>>,
    /// Nanoseconds subtracted from every timestamp.
    pub shift_ns: i128,
    label: Option<String>,
    /// The query put into metric links (uniview, docs/uniview.md#result-dir).
    pub link_tag: Option<&'g str>,
}

impl<'g> InputRecords<'g> {
    /// The input at `index` of the merge: flow ids and uuids kept apart
    /// from the other inputs', nothing else changed.
    pub fn new(index: usize, merged: &'g mut MergedTracks) -> InputRecords<'g> {
        InputRecords {
            index: index as u64,
            merged,
            uuids: FxHashMap::default(),
            big_flows: FxHashMap::default(),
            remap: None,
            shift_ns: 0,
            label: None,
            link_tag: None,
        }
    }

    /// Pids and tids renumbered 1, 2, 3… across the merge (`--remap-pids`).
    pub fn renumbering_pids(mut self) -> Self {
        self.remap = Some(FxHashMap::default());
        self
    }

    /// Process names that carry no rank get `label` (`rank R `) first.
    pub fn labelled(mut self, label: Option<String>) -> Self {
        self.label = label;
        self
    }

    /// Whether pids are renumbered.
    pub fn remaps_pids(&self) -> bool {
        self.remap.is_some()
    }

    /// The merged trace's uuid of the input's track `uuid`.
    pub fn uuid(&mut self, uuid: u64) -> u64 {
        if let Some(&u) = self.uuids.get(&uuid) {
            return u;
        }
        let mut new = uuid;
        if self.merged.uuids.contains(&uuid) {
            // Deterministic fresh value: mix the uuid with the input index
            // (SplitMix64 steps) until it is unused; 0 is not a valid uuid.
            // Values of the same varint size are tried first, so the
            // record can be patched in place (unitrace's uuids are 64-bit
            // hashes: 9 or 10 bytes).
            let want_len = varint_len(uuid);
            let mut x = uuid ^ (self.index.wrapping_add(1)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            for attempt in 0u32.. {
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^= z >> 31;
                if attempt < 64 {
                    // Keep the size: clear the bits above it, set its top bit.
                    let bits = (7 * want_len as u32).min(64);
                    if bits < 64 {
                        z &= (1u64 << bits) - 1;
                    }
                    z |= 1u64 << (7 * (want_len as u32 - 1)).min(63);
                }
                if z != 0 && !self.merged.uuids.contains(&z) {
                    new = z;
                    break;
                }
            }
        }
        self.merged.uuids.insert(new);
        self.uuids.insert(uuid, new);
        new
    }

    /// The merged trace's id of the input's flow `id`.
    pub fn flow(&mut self, id: u64) -> u64 {
        if id < SMALL_FLOW_LIMIT && self.index < (1 << 31) {
            return (self.index << 32) | id;
        }
        if let Some(&f) = self.big_flows.get(&id) {
            return f;
        }
        let f = BIG_FLOW_BASE + self.merged.next_big_flow;
        self.merged.next_big_flow += 1;
        self.big_flows.insert(id, f);
        f
    }

    fn remap_id(&mut self, id: u64) -> u64 {
        let Some(map) = self.remap.as_mut() else {
            return id;
        };
        let next = &mut self.merged.next_id;
        *map.entry(id).or_insert_with(|| {
            *next += 1;
            *next
        })
    }

    /// Whether the record must be re-encoded (else it is copied as is).
    pub fn changes(&mut self, p: &Packet<'_>) -> bool {
        let mut change = self.shift_ns != 0 && p.timestamp.is_some();
        match p.data {
            PacketData::TrackEvent(e) => {
                if let Some(u) = e.track_uuid {
                    change |= self.uuid(u) != u;
                }
                if let Some(tag) = self.link_tag {
                    change |= e.annotations().any(|a| {
                        matches!((a.name, a.value), (Some(METRICS), AnnotationValue::Str(v))
                            if tagged_link(v, tag).is_some())
                    });
                }
                if e.flow_ids()
                    .chain(e.terminating_flow_ids())
                    .next()
                    .is_some()
                {
                    change |= self.index > 0
                        || e.flow_ids()
                            .chain(e.terminating_flow_ids())
                            .any(|id| id >= SMALL_FLOW_LIMIT);
                }
            }
            PacketData::TrackDescriptor(d) => {
                for u in [d.uuid, d.parent_uuid].into_iter().flatten() {
                    change |= self.uuid(u) != u;
                }
                change |= self.remap.is_some() && (d.process.is_some() || d.thread.is_some());
                change |= self.label.is_some() && d.process.is_some();
            }
            _ => {}
        }
        change
    }
}

impl PacketEditor for InputRecords<'_> {
    fn timestamp(&mut self, ts: u64) -> u64 {
        let v = i128::from(ts) - self.shift_ns;
        u64::try_from(v).unwrap_or(if v < 0 { 0 } else { u64::MAX })
    }
    fn track_uuid(&mut self, uuid: u64) -> u64 {
        self.uuid(uuid)
    }
    fn flow_id(&mut self, id: u64) -> u64 {
        self.flow(id)
    }
    fn pid(&mut self, pid: i32) -> i32 {
        if self.remap.is_none() {
            return pid;
        }
        // New ids count from 1: they stay far below 2^31.
        self.remap_id(pid as i64 as u64) as i32
    }
    fn tid(&mut self, tid: i64) -> i64 {
        if self.remap.is_none() {
            return tid;
        }
        self.remap_id(tid as u64) as i64
    }
    fn process_name(&mut self, name: &[u8]) -> Option<Vec<u8>> {
        let label = self.label.as_ref()?;
        if name.starts_with(b"RANK ") || name.starts_with(b"rank ") {
            return None;
        }
        Some([label.as_bytes(), name].concat())
    }
    fn edits_annotations(&self) -> bool {
        self.link_tag.is_some()
    }
    fn annotation_string(&mut self, name: &[u8], value: &[u8]) -> Option<Vec<u8>> {
        if name != METRICS {
            return None;
        }
        tagged_link(value, self.link_tag?)
    }
}

/// Writes `rec` read only as far as its edits need (`PacketView`: no
/// filter, statistics or link tagging): copied, its flow ids patched where
/// the view found them, or re-encoded with its edits. `Ok(false)`: a
/// packet the full path takes (a descriptor, old-style flows).
pub fn write_shallow(
    rec: &Record<'_>,
    edit: &mut InputRecords<'_>,
    bufs: &mut RewriteBuffers,
    rewritten: &mut Vec<u8>,
    out: &mut impl Write,
) -> io::Result<Result<bool, PftraceError>> {
    let view = match rec.view() {
        Ok(v) => v,
        Err(e) => return Ok(Err(e)),
    };
    let shifted = edit.shift_ns != 0 && view.timestamp.is_some();
    let change = match view.kind {
        ViewKind::TrackEvent {
            track_uuid,
            flows,
            old_flows: false,
        } => {
            let mut change = shifted;
            if let Some(u) = track_uuid {
                change |= edit.uuid(u) != u;
            }
            let flows_change = !flows.is_empty()
                && (edit.index > 0 || view_flow_ids(flows).any(|id| id >= SMALL_FLOW_LIMIT));
            if flows_change && !change {
                rewritten.clear();
                rewritten.extend_from_slice(rec.raw);
                patch_view_flows(rec.raw, flows, rewritten, |id| edit.flow(id));
                out.write_all(rewritten)?;
                return Ok(Ok(true));
            }
            change || flows_change
        }
        ViewKind::Other => shifted,
        _ => return Ok(Ok(false)),
    };
    if change {
        write_edited(rec, edit, bufs, rewritten, out)?;
    } else {
        out.write_all(rec.raw)?;
    }
    Ok(Ok(true))
}

/// Writes `rec` with the edits of `edit`: patched in place when every edit
/// keeps its size (flow ids, uuids renamed to same-size values), else
/// re-encoded.
pub fn write_edited(
    rec: &Record<'_>,
    edit: &mut InputRecords<'_>,
    bufs: &mut RewriteBuffers,
    rewritten: &mut Vec<u8>,
    out: &mut impl Write,
) -> std::io::Result<()> {
    rewritten.clear();
    rewritten.extend_from_slice(rec.raw);
    if !patch_record(rec.packet, rewritten, edit) {
        rewritten.clear();
        rewrite_packet(rec.packet, edit, bufs, rewritten);
    }
    out.write_all(rewritten)
}

/// Writes `rec` with the input's edits: [`write_shallow`] when it can, else
/// decoded and, when [`InputRecords::changes`] says so, [`write_edited`].
/// For callers that neither filter nor look at the packets (tracestat's
/// annotated trace); `Err` inside: the record does not decode.
pub fn write_record(
    rec: &Record<'_>,
    edit: &mut InputRecords<'_>,
    bufs: &mut RewriteBuffers,
    rewritten: &mut Vec<u8>,
    out: &mut impl Write,
) -> io::Result<Result<(), PftraceError>> {
    if edit.link_tag.is_none() {
        match write_shallow(rec, edit, bufs, rewritten, out)? {
            Ok(true) => return Ok(Ok(())),
            Ok(false) => {}
            Err(e) => return Ok(Err(e)),
        }
    }
    let packet = match rec.decode() {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    if edit.changes(&packet) {
        write_edited(rec, edit, bufs, rewritten, out)?;
    } else {
        out.write_all(rec.raw)?;
    }
    Ok(Ok(()))
}
