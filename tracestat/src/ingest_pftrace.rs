//! The input layer for Perfetto `.pftrace` timelines (`unitrace
//! --output-format protobuf`, docs/formats.md#pftrace): the same intervals
//! as the JSON pass ([`crate::ingest`]), from slice begin/end pairs on
//! tracks, read through `core::pftrace` in one streaming pass.
//!
//! Tracks: process descriptors carry the pid and the `RANK r ...` name,
//! thread descriptors the pid, tid and engine name. A slice with category
//! `gpu_op` is a device command, others host calls; the H2D flow ids ride on
//! the submitting API slice and on the kernel slice
//! (docs/formats.md#pftrace-flows). Timestamps are nanoseconds already.

use std::io::Read;
use std::path::Path;

use unitrace_core::pftrace::{AnnotationValue, EventType, PacketData, PacketReader, TrackEvent};
use unitrace_core::InputError;

use crate::ingest::{split_list_items, Pass, RankTrace, CLOCK_JUMP_NS};
use crate::time::Ns;
use rustc_hash::FxHashMap as FastMap;

struct OpenSlice {
    name: u32,
    start: Ns,
    gpu: bool,
    flows: Vec<u64>,
    bytes: Option<u64>,
    comm: Option<String>,
}

/// Bytes of a collective slice: ITT `send_size` (a string, values joined by
/// `,`, summed) or MPI `ssize`/`dsize`.
pub(crate) fn slice_bytes(te: &TrackEvent<'_>) -> Option<u64> {
    if let Some(v) = te.annotation(b"send_size") {
        return match v {
            AnnotationValue::Str(s) => {
                let text = String::from_utf8_lossy(s);
                let mut sum = 0u64;
                for part in text.split(',') {
                    let part = part
                        .trim()
                        .trim_matches(|c| c == '"' || c == '[' || c == ']');
                    if let Ok(n) = part.parse::<u64>() {
                        sum = sum.saturating_add(n);
                    }
                }
                Some(sum)
            }
            other => other.as_u64(),
        };
    }
    let s = te.annotation(b"ssize").and_then(|v| v.as_u64());
    let d = te.annotation(b"dsize").and_then(|v| v.as_u64());
    match (s, d) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The communicator of a collective slice, the `comm` annotation, as the
/// JSON pass reads `args.comm` ([`crate::ingest::collective_comm`]): unitrace
/// writes an ITT value list as one string, the items joined by `,` and
/// strings wrapped in `"` (docs/formats.md#pftrace-events), so `["world"]`
/// arrives as `"world"` and `[3]` as `3`; integer annotations read as their
/// decimal text.
pub(crate) fn slice_comm(te: &TrackEvent<'_>) -> Option<String> {
    let text = match te.annotation(b"comm")? {
        AnnotationValue::Str(s) => s,
        AnnotationValue::Uint(v) => return Some(v.to_string()),
        AnnotationValue::Int(v) => return Some(v.to_string()),
        _ => return None,
    };
    let mut comm = String::new();
    for (n, item) in split_list_items(text).into_iter().enumerate() {
        let item = item.trim_ascii();
        let item = if item.len() >= 2 && item[0] == b'"' && item[item.len() - 1] == b'"' {
            &item[1..item.len() - 1]
        } else {
            item
        };
        if n > 0 {
            comm.push(',');
        }
        comm.push_str(&String::from_utf8_lossy(item));
    }
    (!comm.is_empty()).then_some(comm)
}

/// A timestamp is plausible unless it is more than a day away from the
/// rank's first one (docs/tracestat.md#implausible-events).
fn plausible(
    r: &mut RankTrace,
    anchor: &mut FastMap<usize, Ns>,
    acc: usize,
    ts: Ns,
    what: &str,
    file: &str,
) -> bool {
    let first = *anchor.entry(acc).or_insert(ts);
    if (ts - first).abs() > CLOCK_JUMP_NS {
        let e = format!("{file}: {what}: more than a day away from the rank's first timestamp");
        r.implausible.add("clock jump", || e);
        return false;
    }
    true
}

pub fn read_pftrace(
    src: impl Read,
    path: &Path,
    input_index: usize,
) -> Result<Vec<RankTrace>, InputError> {
    let file = path.display().to_string();
    let mut pass = Pass::new(path, input_index);
    // track uuid -> (pid, tid); thread tracks have a tid.
    let mut tracks: FastMap<u64, (u64, Option<u64>)> = FastMap::default();
    let mut open: FastMap<u64, Vec<OpenSlice>> = FastMap::default();
    let mut anchors: FastMap<usize, Ns> = FastMap::default();
    let mut reader = PacketReader::new(src);
    loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(e.into_input_error(path)),
        };
        let packet = record.decode().map_err(|e| e.into_input_error(path))?;
        match packet.data {
            PacketData::TrackDescriptor(td) => {
                let Some(uuid) = td.uuid else { continue };
                if let Some(p) = td.process {
                    let pid = p.pid.unwrap_or(0) as u32 as u64;
                    tracks.insert(uuid, (pid, None));
                    if let Some(name) = p.process_name.or(td.name) {
                        pass.process_name(pid, &String::from_utf8_lossy(name));
                    }
                } else if let Some(t) = td.thread {
                    let pid = t.pid.unwrap_or(0) as u32 as u64;
                    let tid = t.tid.unwrap_or(0) as u64;
                    tracks.insert(uuid, (pid, Some(tid)));
                    if let Some(name) = t.thread_name.or(td.name) {
                        pass.thread_name(pid, tid, &String::from_utf8_lossy(name));
                    }
                }
            }
            PacketData::TrackEvent(te) => {
                let Some(ts) = packet.timestamp else { continue };
                let Ok(ts) = Ns::try_from(ts) else {
                    let acc = pass.acc(None);
                    let e = format!(
                        "{file}: packet at byte {}: timestamp out of range",
                        record.packet_offset()
                    );
                    pass.ranks[acc].implausible.add("time out of range", || e);
                    continue;
                };
                let track = te.track_uuid.unwrap_or(0);
                let (pid, tid) = tracks.get(&track).copied().unwrap_or((0, None));
                let tid = tid.unwrap_or(track);
                let acc = pass.acc(Some(pid));
                match te.kind {
                    EventType::SliceBegin => {
                        let r = &mut pass.ranks[acc];
                        let name = r.bytes_name_id(te.name.unwrap_or(b""));
                        let gpu = te.has_category(b"gpu_op");
                        // Size and communicator of a collective call, as the
                        // JSON pass reads them from `args`.
                        let (bytes, comm) = if !gpu && r.is_collective(name) {
                            (slice_bytes(&te), slice_comm(&te))
                        } else {
                            (None, None)
                        };
                        open.entry(track).or_default().push(OpenSlice {
                            name,
                            start: ts,
                            gpu,
                            flows: te.flow_ids().collect(),
                            bytes,
                            comm,
                        });
                    }
                    EventType::SliceEnd => {
                        let r = &mut pass.ranks[acc];
                        let Some(s) = open.get_mut(&track).and_then(|v| v.pop()) else {
                            let e = format!(
                                "{file}: packet at byte {}: slice end without a begin",
                                record.packet_offset()
                            );
                            r.implausible.add("end before start", || e);
                            continue;
                        };
                        let what = r.name(s.name).to_string();
                        if !plausible(r, &mut anchors, acc, s.start, &what, &file) {
                            continue;
                        }
                        if ts < s.start {
                            let e = format!("{file}: {what}: ends before it begins");
                            r.implausible.add("end before start", || e);
                            continue;
                        }
                        if s.gpu {
                            if ts == s.start {
                                let e = format!("{file}: {what}: zero-length device command");
                                r.implausible.add("zero-length kernel", || e);
                                continue;
                            }
                            r.kernel(pid, tid, s.name, s.start, ts, s.flows.first().copied());
                        } else {
                            r.host_slice(
                                tid,
                                s.name,
                                (s.start, ts),
                                s.flows.into_iter(),
                                (s.bytes, s.comm),
                            );
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let truncated = reader.summary().truncation.as_ref().map(|t| {
        format!(
            "cut short (writer killed?): {} bytes after the last complete record ignored",
            t.dropped_bytes
        )
    });
    // Slices still open at the end (a cut file): host ones end with the
    // rank, as B events without E do in JSON; device ones are dropped.
    let mut left: Vec<(u64, Vec<OpenSlice>)> = open.into_iter().collect();
    left.sort_by_key(|(t, _)| *t);
    for (track, slices) in left {
        let (pid, tid) = tracks.get(&track).copied().unwrap_or((0, None));
        let acc = pass.acc(Some(pid));
        let r = &mut pass.ranks[acc];
        let last = r.last;
        for s in slices.into_iter().filter(|s| !s.gpu && last >= s.start) {
            r.host_slice(
                tid.unwrap_or(track),
                s.name,
                (s.start, last),
                std::iter::empty(),
                (s.bytes, s.comm),
            );
        }
    }
    Ok(pass.finish(path, truncated))
}
