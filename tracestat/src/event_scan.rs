//! One streaming walk over a trace file of either format (Chrome JSON
//! through `core::trace`, `.pftrace` through `core::pftrace`) that hands
//! complete slices, names and H2D flow starts to a [`Visitor`]: the input of
//! `--events` (docs/tracestat.md#events), which walks each file once,
//! feeding the index and recording the rows ([`crate::event_spool`]); the
//! two-pass reference export walks it twice with the same scanner.
//!
//! The events left out are those the report leaves out
//! (docs/tracestat.md#implausible-events): no timestamp or one out of range,
//! a negative duration, a zero-length device command, an end without a
//! begin, a time more than a day from the file's first one. Slices still
//! open at the end of the file (a `B` without its `E`, a cut `.pftrace`) are
//! handed over with `closed: false`; device ones are dropped, as the report
//! does.

use std::io::Read;
use std::path::Path;

use anyhow::Result;
use rustc_hash::FxHashMap as FastMap;
use unitrace_core::pftrace::{EventType, PacketData, PacketReader};
use unitrace_core::trace::{Event, Field, TraceReader, DEFAULT_MAX_EVENT_BYTES};
use unitrace_core::InputError;

use crate::classify::{is_collective_call, is_host_range, is_memory_command};
use crate::time::{us_text_to_ns, Ns};
use unitrace_core::timeline::chrome_json::{args_str, args_uint, CLOCK_JUMP_NS};
use unitrace_core::timeline::collective::{
    json_collective_bytes as collective_bytes, json_collective_comm as collective_comm,
    pftrace_collective_bytes as slice_bytes, pftrace_collective_comm as slice_comm,
};

/// What the name of a slice says about it.
#[derive(Debug, Clone, Copy, Default)]
pub struct NameInfo {
    /// A host range (a name with `::`, docs/tracestat.md#classification).
    pub range: bool,
    /// A oneCCL / MPI collective call.
    pub collective: bool,
    /// A device command that moves or fills memory.
    pub memory: bool,
}

/// Event names interned by their raw bytes (still JSON-escaped): one
/// decode per distinct name, not per event. Both passes over a file share
/// one table, so an id means the same name in both.
#[derive(Default)]
pub struct Names {
    ids: FastMap<Box<[u8]>, u32>,
    pub names: Vec<Box<str>>,
    pub info: Vec<NameInfo>,
}

impl Names {
    pub fn id(&mut self, raw: &[u8], decode: impl FnOnce() -> String) -> u32 {
        if let Some(&id) = self.ids.get(raw) {
            return id;
        }
        let name = decode();
        let id = self.names.len() as u32;
        self.info.push(NameInfo {
            range: is_host_range(&name),
            collective: is_collective_call(&name),
            memory: is_memory_command(&name),
        });
        self.names.push(name.into());
        self.ids.insert(raw.into(), id);
        id
    }

    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}

/// Where a slice ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A device command (`cat` `gpu_op`).
    Device,
    /// A host API call or range.
    Host,
    /// Anything else with a duration (`os_op`): a row, but not host work.
    Other,
}

/// A complete slice.
#[derive(Debug, Clone)]
pub struct Slice<'a> {
    pub pid: u64,
    pub tid: u64,
    pub name: u32,
    /// The trace's own category (`gpu_op`, `cpu_op`, ...), "" when none.
    pub cat: &'a str,
    pub side: Side,
    pub start: Ns,
    /// Equal to `start` when `closed` is false (the end is unknown).
    pub end: Ns,
    pub closed: bool,
    /// Device instance id (`args.id`), the key of the H2D flow.
    pub instance: Option<u64>,
    /// The H2D flow id linking a device command to its submitting call
    /// (the instance id in JSON, the slice's first flow id in `.pftrace`).
    pub flow: Option<u64>,
    /// Bytes and communicator of a collective call.
    pub bytes: Option<u64>,
    pub comm: Option<String>,
}

/// What a walk delivers, in file order.
pub trait Visitor {
    fn process(&mut self, pid: u64, label: &str);
    fn thread(&mut self, pid: u64, tid: u64, label: &str);
    /// An H2D flow starts at `ts` on host thread `tid`; `call` is the
    /// submitting call when the format carries it on the call (`.pftrace`).
    fn flow_start(&mut self, pid: u64, tid: u64, id: u64, ts: Ns, call: Option<u32>);
    fn slice(&mut self, names: &Names, s: &Slice<'_>) -> Result<()>;
    /// Whether device slices need their name and instance id; when not
    /// (the index pass of the two-pass reference export), they arrive with
    /// name [`NO_NAME`] and no ids, which saves a name lookup and an `args`
    /// parse per kernel. With details, a device slice whose name is a
    /// string that does not decode arrives with [`NO_NAME`] too: it is no
    /// row, but its time counts where the index pass counts it.
    fn device_details(&self) -> bool {
        true
    }
}

/// The name of a device slice delivered without details.
pub const NO_NAME: u32 = u32::MAX;

/// What a walk found besides the events.
#[derive(Debug, Clone, Default)]
pub struct ScanStats {
    /// Events left out (implausible, see the module comment).
    pub dropped: u64,
    /// A one-line description of a cut file.
    pub truncated: Option<String>,
}

/// The first-timestamp reference of the clock-jump check.
#[derive(Default)]
struct Anchor(Option<Ns>);

impl Anchor {
    fn plausible(&mut self, ts: Ns) -> bool {
        let a = *self.0.get_or_insert(ts);
        (ts - a).abs() <= CLOCK_JUMP_NS
    }
}

/// Walks the trace at `path` (format by its first bytes, as the report
/// reads it).
pub fn scan_file(path: &Path, names: &mut Names, v: &mut impl Visitor) -> Result<ScanStats> {
    let mut file = std::fs::File::open(path).map_err(|e| InputError::io(path, &e))?;
    let mut head = [0u8; 16];
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(InputError::io(path, &e).into()),
        }
    }
    if !unitrace_core::pftrace::sniff(&head[..n]) {
        // A JSON file is read in place when it can be mapped.
        match unitrace_core::trace::rewound(file) {
            Ok(file) => {
                let reader = TraceReader::open_file(file, DEFAULT_MAX_EVENT_BYTES);
                return scan_json(reader, path, names, v);
            }
            Err(unseekable) => file = unseekable,
        }
    }
    let src = std::io::Cursor::new(head[..n].to_vec()).chain(file);
    // 1 MiB reads: fewer system calls on the multi-GB traces this is for.
    let src = std::io::BufReader::with_capacity(1 << 20, src);
    if unitrace_core::pftrace::sniff(&head[..n]) {
        scan_pftrace(src, path, names, v)
    } else {
        scan_json(TraceReader::new(src), path, names, v)
    }
}

fn utf8(raw: &[u8]) -> &str {
    std::str::from_utf8(raw).unwrap_or("")
}

/// A `B` waiting for its `E`.
struct OpenB {
    pid: u64,
    start: Ns,
    name: u32,
    cat: Box<str>,
    /// Size and communicator of a collective call from the `B` arguments
    /// (the `E` ones win, as in the report: docs/tracestat.md#collectives).
    bytes: Option<u64>,
    comm: Option<String>,
}

pub fn scan_json<R: Read>(
    mut reader: TraceReader<R>,
    path: &Path,
    names: &mut Names,
    v: &mut impl Visitor,
) -> Result<ScanStats> {
    let mut stats = ScanStats::default();
    let mut anchor = Anchor::default();
    let mut open: FastMap<u64, Vec<OpenB>> = FastMap::default();
    loop {
        let ev = match reader.next_event() {
            Ok(Some(ev)) => ev,
            Ok(None) => break,
            Err(e) => return Err(e.into_input_error(path).into()),
        };
        json_event(&ev, names, v, &mut stats, &mut anchor, &mut open)?;
    }
    let summary = reader.summary();
    if !summary.empty && !summary.has_trace_events && summary.truncation.is_none() {
        return Err(InputError::at_file(path, "not a trace: no traceEvents array").into());
    }
    stats.truncated = summary.truncation.as_ref().map(|t| {
        format!(
            "cut short (writer killed?): {} bytes after the last complete event ignored",
            t.dropped_bytes
        )
    });
    let mut left: Vec<(u64, Vec<OpenB>)> = open.into_iter().collect();
    left.sort_by_key(|(tid, _)| *tid);
    for (tid, stack) in left {
        for b in stack {
            v.slice(
                names,
                &Slice {
                    pid: b.pid,
                    tid,
                    name: b.name,
                    cat: &b.cat,
                    side: Side::Host,
                    start: b.start,
                    end: b.start,
                    closed: false,
                    instance: None,
                    flow: None,
                    bytes: b.bytes,
                    comm: b.comm,
                },
            )?;
        }
    }
    Ok(stats)
}

fn json_event(
    ev: &Event<'_>,
    names: &mut Names,
    v: &mut impl Visitor,
    stats: &mut ScanStats,
    anchor: &mut Anchor,
    open: &mut FastMap<u64, Vec<OpenB>>,
) -> Result<()> {
    let Some(ph) = ev.str_raw(Field::Ph) else {
        return Ok(());
    };
    let pid = ev.uint(Field::Pid);
    if ph == b"M" {
        let (Some(kind), Some(pid)) = (ev.str_raw(Field::Name), pid) else {
            return Ok(());
        };
        let Some(label) = ev
            .value(Field::Args)
            .filter(|a| a.first() == Some(&b'{'))
            .and_then(|a| args_str(a, b"name"))
        else {
            return Ok(());
        };
        match kind {
            b"process_name" => v.process(pid, &label),
            b"thread_name" => {
                if let Some(tid) = ev.uint(Field::Tid) {
                    v.thread(pid, tid, &label);
                }
            }
            _ => {}
        }
        return Ok(());
    }
    let pid = pid.unwrap_or(0);
    let Some(ts_text) = ev.number_text(Field::Ts) else {
        return Ok(());
    };
    let Some(ts) = us_text_to_ns(ts_text) else {
        stats.dropped += 1;
        return Ok(());
    };
    let dur = match ev.number_text(Field::Dur) {
        Some(t) => match us_text_to_ns(t) {
            Some(d) if d >= 0 => Some(d),
            _ => {
                stats.dropped += 1;
                return Ok(());
            }
        },
        None => None,
    };
    if !anchor.plausible(ts) {
        stats.dropped += 1;
        return Ok(());
    }
    let end = ts.saturating_add(dur.unwrap_or(0));
    let cat_raw = ev.str_raw(Field::Cat).unwrap_or(b"");
    let tid = ev.uint(Field::Tid);
    let name_of = |names: &mut Names| -> Option<u32> {
        let raw = ev.str_raw(Field::Name)?;
        if let Some(&id) = names.ids.get(raw) {
            return Some(id);
        }
        let decoded = ev.str(Field::Name)?.into_owned();
        Some(names.id(raw, || decoded))
    };
    match ph {
        b"X" if cat_raw == b"gpu_op" => {
            if dur.unwrap_or(0) == 0 {
                stats.dropped += 1;
                return Ok(());
            }
            let (name, instance) = if v.device_details() {
                if ev.str_raw(Field::Name).is_none() {
                    return Ok(());
                }
                match name_of(names) {
                    Some(name) => {
                        let instance = ev
                            .value(Field::Args)
                            .filter(|a| a.first() == Some(&b'{'))
                            .and_then(|a| args_uint(a, b"id"));
                        (name, instance)
                    }
                    // A name that does not decode: no row, but the index
                    // still counts its time (see [`Visitor::device_details`]).
                    None => (NO_NAME, None),
                }
            } else {
                if ev.str_raw(Field::Name).is_none() {
                    return Ok(());
                }
                (NO_NAME, None)
            };
            v.slice(
                names,
                &Slice {
                    pid,
                    tid: tid.unwrap_or(0),
                    name,
                    cat: "gpu_op",
                    side: Side::Device,
                    start: ts,
                    end,
                    closed: true,
                    instance,
                    flow: instance,
                    bytes: None,
                    comm: None,
                },
            )?;
        }
        b"s" if cat_raw.starts_with(b"Flow_H2D_") || cat_raw.starts_with(b"CL_Flow_H2D_") => {
            if let (Some(id), Some(tid)) = (ev.uint(Field::Id), tid) {
                v.flow_start(pid, tid, id, ts, None);
            }
        }
        b"E" if cat_raw != b"os_op" => {
            let Some(tid) = tid else { return Ok(()) };
            match open.get_mut(&tid).and_then(|s| s.pop()) {
                Some(b) if ts >= b.start => {
                    let (mut bytes, mut comm) = (b.bytes, b.comm.clone());
                    if names.info[b.name as usize].collective {
                        let args = ev.value(Field::Args).filter(|a| a.first() == Some(&b'{'));
                        bytes = args.and_then(collective_bytes).or(bytes);
                        comm = args.and_then(collective_comm).or(comm);
                    }
                    v.slice(
                        names,
                        &Slice {
                            pid: b.pid,
                            tid,
                            name: b.name,
                            cat: &b.cat,
                            side: Side::Host,
                            start: b.start,
                            end: ts,
                            closed: true,
                            instance: None,
                            flow: None,
                            bytes,
                            comm,
                        },
                    )?;
                }
                _ => stats.dropped += 1,
            }
        }
        b"B" if cat_raw != b"os_op" => {
            let Some(tid) = tid else { return Ok(()) };
            let Some(name) = name_of(names) else {
                return Ok(());
            };
            let (bytes, comm) = if names.info[name as usize].collective {
                let args = ev.value(Field::Args).filter(|a| a.first() == Some(&b'{'));
                (
                    args.and_then(collective_bytes),
                    args.and_then(collective_comm),
                )
            } else {
                (None, None)
            };
            open.entry(tid).or_default().push(OpenB {
                pid,
                start: ts,
                name,
                cat: utf8(cat_raw).into(),
                bytes,
                comm,
            });
        }
        b"X" => {
            let Some(tid) = tid else { return Ok(()) };
            let Some(name) = name_of(names) else {
                return Ok(());
            };
            let side = if cat_raw == b"os_op" {
                Side::Other
            } else {
                Side::Host
            };
            let (mut bytes, mut comm) = (None, None);
            if side == Side::Host && names.info[name as usize].collective {
                let args = ev.value(Field::Args).filter(|a| a.first() == Some(&b'{'));
                bytes = args.and_then(collective_bytes);
                comm = args.and_then(collective_comm);
            }
            v.slice(
                names,
                &Slice {
                    pid,
                    tid,
                    name,
                    cat: utf8(cat_raw),
                    side,
                    start: ts,
                    end,
                    closed: true,
                    instance: None,
                    flow: None,
                    bytes,
                    comm,
                },
            )?;
        }
        _ => {}
    }
    Ok(())
}

/// The categories of a file's slices, interned: a handful per file, so a
/// slice waiting for its end holds an index instead of its own copy.
#[derive(Default)]
struct Cats(Vec<Box<str>>);

impl Cats {
    fn id(&mut self, cat: &str) -> u32 {
        match self.0.iter().position(|c| **c == *cat) {
            Some(i) => i as u32,
            None => {
                self.0.push(cat.into());
                self.0.len() as u32 - 1
            }
        }
    }

    fn get(&self, id: u32) -> &str {
        &self.0[id as usize]
    }
}

/// A pftrace slice waiting for its end.
struct OpenSlice {
    name: u32,
    start: Ns,
    cat: u32,
    gpu: bool,
    instance: Option<u64>,
    flow: Option<u64>,
    bytes: Option<u64>,
    comm: Option<String>,
}

pub fn scan_pftrace(
    src: impl Read,
    path: &Path,
    names: &mut Names,
    v: &mut impl Visitor,
) -> Result<ScanStats> {
    let mut stats = ScanStats::default();
    let mut anchor = Anchor::default();
    // track uuid -> (pid, tid); process tracks have no tid.
    let mut tracks: FastMap<u64, (u64, Option<u64>)> = FastMap::default();
    let mut open: FastMap<u64, Vec<OpenSlice>> = FastMap::default();
    let mut cats = Cats::default();
    let mut reader = PacketReader::new(src);
    loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(e.into_input_error(path).into()),
        };
        let packet = record.decode().map_err(|e| e.into_input_error(path))?;
        match packet.data {
            PacketData::TrackDescriptor(td) => {
                let Some(uuid) = td.uuid else { continue };
                if let Some(p) = td.process {
                    let pid = p.pid.unwrap_or(0) as u32 as u64;
                    tracks.insert(uuid, (pid, None));
                    if let Some(name) = p.process_name.or(td.name) {
                        v.process(pid, &String::from_utf8_lossy(name));
                    }
                } else if let Some(t) = td.thread {
                    let pid = t.pid.unwrap_or(0) as u32 as u64;
                    let tid = t.tid.unwrap_or(0) as u64;
                    tracks.insert(uuid, (pid, Some(tid)));
                    if let Some(name) = t.thread_name.or(td.name) {
                        v.thread(pid, tid, &String::from_utf8_lossy(name));
                    }
                }
            }
            PacketData::TrackEvent(te) => {
                let Some(ts) = packet.timestamp else { continue };
                let Ok(ts) = Ns::try_from(ts) else {
                    stats.dropped += 1;
                    continue;
                };
                let track = te.track_uuid.unwrap_or(0);
                match te.kind {
                    EventType::SliceBegin => {
                        let raw = te.name.unwrap_or(b"");
                        let name = names.id(raw, || String::from_utf8_lossy(raw).into_owned());
                        let gpu = te.has_category(b"gpu_op");
                        let cat = te.categories().next().map_or("", utf8);
                        let flow = if gpu { te.flow_ids().next() } else { None };
                        let instance = if gpu {
                            te.annotation(b"id")
                                .and_then(|a| match a {
                                    unitrace_core::pftrace::AnnotationValue::Str(s) => {
                                        utf8(s).parse().ok()
                                    }
                                    other => other.as_u64(),
                                })
                                .or(flow)
                        } else {
                            // The submitting call carries the flow ids
                            // (docs/formats.md#pftrace-flows).
                            let (pid, tid) = tracks.get(&track).copied().unwrap_or((0, None));
                            for id in te.flow_ids() {
                                v.flow_start(pid, tid.unwrap_or(track), id, ts, Some(name));
                            }
                            None
                        };
                        let (bytes, comm) = if !gpu && names.info[name as usize].collective {
                            (slice_bytes(&te), slice_comm(&te))
                        } else {
                            (None, None)
                        };
                        open.entry(track).or_default().push(OpenSlice {
                            name,
                            start: ts,
                            cat: cats.id(cat),
                            gpu,
                            instance,
                            flow,
                            bytes,
                            comm,
                        });
                    }
                    EventType::SliceEnd => {
                        let Some(s) = open.get_mut(&track).and_then(|v| v.pop()) else {
                            stats.dropped += 1;
                            continue;
                        };
                        if !anchor.plausible(s.start) || ts < s.start || (s.gpu && ts == s.start) {
                            stats.dropped += 1;
                            continue;
                        }
                        let (pid, tid) = tracks.get(&track).copied().unwrap_or((0, None));
                        v.slice(
                            names,
                            &Slice {
                                pid,
                                tid: tid.unwrap_or(track),
                                name: s.name,
                                cat: cats.get(s.cat),
                                side: if s.gpu { Side::Device } else { Side::Host },
                                start: s.start,
                                end: ts,
                                closed: true,
                                instance: s.instance,
                                flow: s.flow,
                                bytes: s.bytes,
                                comm: s.comm,
                            },
                        )?;
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    stats.truncated = reader.summary().truncation.as_ref().map(|t| {
        format!(
            "cut short (writer killed?): {} bytes after the last complete record ignored",
            t.dropped_bytes
        )
    });
    let mut left: Vec<(u64, Vec<OpenSlice>)> = open.into_iter().collect();
    left.sort_by_key(|(t, _)| *t);
    for (track, slices) in left {
        let (pid, tid) = tracks.get(&track).copied().unwrap_or((0, None));
        for s in slices.into_iter().filter(|s| !s.gpu) {
            v.slice(
                names,
                &Slice {
                    pid,
                    tid: tid.unwrap_or(track),
                    name: s.name,
                    cat: cats.get(s.cat),
                    side: Side::Host,
                    start: s.start,
                    end: s.start,
                    closed: false,
                    instance: None,
                    flow: None,
                    bytes: s.bytes,
                    comm: s.comm,
                },
            )?;
        }
    }
    Ok(stats)
}
