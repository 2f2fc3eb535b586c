//! `--annotate OUT.json|OUT.pftrace` (docs/tracestat.md#annotated-trace):
//! the input timeline with the analysis added as tracks Perfetto shows —
//! per rank its steps, its stretches of the critical path, and per engine
//! a queue-depth counter (commands submitted and not finished).
//!
//! The inputs' events come first, as mergetrace's merge writes them: with
//! the same edits (`core::trace::merged_input` for JSON,
//! `core::pftrace_merged_input` for `.pftrace`), so that the ranks stay
//! apart in one timeline — a PyTorch profiler rank in its own pids and
//! flow ids, its processes named `rank R` before their events, on the
//! earliest clock base; a `.pftrace` rank's flow ids and track uuids its
//! own; every other byte as it was. Then the added tracks follow, written
//! with the same core: a JSON output takes Chrome/Kineto JSON inputs, a
//! `.pftrace` output `.pftrace` inputs. Added times are on the clock of
//! their rank's events as written.

use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{bail, Result};
use unitrace_core::atomic::AtomicFile;
use unitrace_core::cli::warn;
use unitrace_core::pftrace::{PacketBuilder, PacketReader, RewriteBuffers};
use unitrace_core::pftrace_merged_input::{write_record, InputRecords, MergedTracks};
use unitrace_core::timeline;
use unitrace_core::timeline::detect::{JsonDialect, Sniffed};
use unitrace_core::timeline::rank::rank_from_path;
use unitrace_core::trace::merged_input::{
    clock_shifts, merged_clock_base, EventEdits, InputIds, MergedIds,
};
use unitrace_core::InputError;

use crate::analyzers::critical_path::graph::EngineDepth;
use crate::analyzers::{RankSummary, Report};
use crate::time::Ns;

/// What the added tracks of one rank need (report order).
#[derive(Debug, Clone)]
pub struct RankMarks {
    pub file: String,
    pub label: String,
    /// `(step id, start, end)` on the rank's clock.
    pub steps: Vec<(Option<i64>, Ns, Ns)>,
    pub depth: Vec<EngineDepth>,
    pub first_ns: Ns,
    pub last_ns: Ns,
}

/// The marks of every rank, in report order.
pub fn collect(ranks: &mut [RankSummary]) -> Vec<RankMarks> {
    crate::analyzers::sort_ranks(ranks);
    ranks
        .iter_mut()
        .map(|r| {
            let label = r.label();
            let p = &mut r.parts.critical_path;
            RankMarks {
                file: r.file.clone(),
                label,
                steps: p.steps.iter().map(|s| (s.id, s.start, s.end)).collect(),
                depth: std::mem::take(&mut p.queue_depth),
                first_ns: r.first_ns,
                last_ns: r.last_ns,
            }
        })
        .collect()
}

/// One added slice or counter value of one rank.
enum Added {
    /// `(track, start, end, name, category)`.
    Slice(Lane, Ns, Ns, String, &'static str),
    /// `(engine, time, depth)`.
    Count(usize, Ns, u32),
}

/// A track of added slices: `(0 steps or 1 the critical path, lane)`.
/// Slices of one track never partly overlap, which Perfetto needs to draw
/// them (docs/tracestat.md#annotated-trace): a rank's steps, and the paths
/// of different steps on one rank, may overlap in time (a step's device
/// tail runs into the next step; a step of the run starts at its earliest
/// rank), so each goes to the first lane of its track where it starts
/// after the lane's last end.
type Lane = (u8, u32);

/// Lanes for groups of slices given as `(start, end)` spans, in the order
/// given: the first lane free at each span's start (greedy interval
/// partitioning, by start).
fn lanes(spans: &[(Ns, Ns)]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (spans[i], i));
    let mut ends: Vec<Ns> = Vec::new();
    let mut out = vec![0; spans.len()];
    for i in order {
        let (s, e) = spans[i];
        let lane = match ends.iter().position(|&end| end <= s) {
            Some(l) => l,
            None => {
                ends.push(Ns::MIN);
                ends.len() - 1
            }
        };
        ends[lane] = e.max(s);
        out[i] = lane as u32;
    }
    out
}

/// The display name of a lane: `steps`, `critical path`, then `steps 2`,
/// `critical path 2`, ...
fn lane_name((track, lane): Lane) -> String {
    let base = if track == 0 { "steps" } else { "critical path" };
    if lane == 0 {
        base.to_string()
    } else {
        format!("{base} {}", lane + 1)
    }
}

/// The lanes a rank's slices use, in track then lane order (the first
/// lane of each track always, so that the tracks are there when empty).
fn used_lanes(adds: &[Added]) -> Vec<Lane> {
    let mut used: Vec<Lane> = vec![(0, 0), (1, 0)];
    for a in adds {
        if let Added::Slice(l, ..) = a {
            if !used.contains(l) {
                used.push(*l);
            }
        }
    }
    used.sort_unstable();
    used
}

/// Per rank: the slices and counter values to add, on its clock.
fn added(marks: &[RankMarks], report: &Report) -> Vec<Vec<Added>> {
    let off = &report.out.collectives.clock_alignment.offset_ns;
    let off_of = |i: usize| off.get(i).copied().unwrap_or(0);
    // The report's origin (docs/tracestat.md#critical-path): the earliest
    // first event on aligned clocks.
    let origin = marks
        .iter()
        .enumerate()
        .filter(|(_, m)| m.last_ns > m.first_ns)
        .map(|(i, m)| m.first_ns - off_of(i))
        .min()
        .unwrap_or(0);
    let mut out: Vec<Vec<Added>> = marks.iter().map(|_| Vec::new()).collect();
    for (i, m) in marks.iter().enumerate() {
        let spans: Vec<(Ns, Ns)> = m.steps.iter().map(|&(_, s, e)| (s, e)).collect();
        for (&(id, s, e), lane) in m.steps.iter().zip(lanes(&spans)) {
            let name = id.map_or_else(|| "run".to_string(), |n| format!("step {n}"));
            out[i].push(Added::Slice((0, lane), s, e, name, "step"));
        }
        for (k, eng) in m.depth.iter().enumerate() {
            for &(t, d) in &eng.points {
                out[i].push(Added::Count(k, t, d));
            }
        }
    }
    // Per rank, the path's stretches grouped by step (a step's stretches
    // tile its time, so they never overlap): `(step, start, end, name,
    // kind)`, in report order.
    type Stretch = (String, Ns, Ns, String, &'static str);
    let mut by_rank: Vec<Vec<Stretch>> = marks.iter().map(|_| Vec::new()).collect();
    for row in report.out.critical_path.critical_path.iter() {
        let Some(i) = marks.iter().position(|m| *m.label == *row.rank) else {
            continue;
        };
        let start = origin + (row.start_us * 1000.0).round() as Ns + off_of(i);
        let end = start + (row.dur_us * 1000.0).round() as Ns;
        let name = format!("{} (step {})", row.name, row.step);
        by_rank[i].push((row.step.to_string(), start, end, name, row.kind.name()));
    }
    for (i, stretches) in by_rank.into_iter().enumerate() {
        let mut steps: Vec<(&str, Ns, Ns)> = Vec::new();
        for (step, s, e, ..) in &stretches {
            match steps.iter_mut().find(|g| g.0 == step) {
                Some(g) => (g.1, g.2) = (g.1.min(*s), g.2.max(*e)),
                None => steps.push((step, *s, *e)),
            }
        }
        let spans: Vec<(Ns, Ns)> = steps.iter().map(|g| (g.1, g.2)).collect();
        let lane_of: Vec<(String, u32)> = steps
            .iter()
            .zip(lanes(&spans))
            .map(|(g, l)| (g.0.to_string(), l))
            .collect();
        for (step, s, e, name, kind) in stretches {
            let lane = lane_of.iter().find(|g| g.0 == step).map_or(0, |g| g.1);
            out[i].push(Added::Slice((1, lane), s, e, name, kind));
        }
    }
    out
}

/// Writes the annotated trace.
pub fn write(path: &Path, marks: &[RankMarks], report: &Report) -> Result<AtomicFile> {
    let name = path.to_string_lossy();
    let mut files: Vec<&str> = Vec::new();
    for m in marks {
        if !files.contains(&m.file.as_str()) {
            files.push(&m.file);
        }
    }
    let mut f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
    // A name ending in `.gz` is gzipped (fast level), as mergetrace does
    // with its output (docs/tracestat.md#annotated-trace).
    let pftrace = name.trim_end_matches(".gz").ends_with(".pftrace");
    let body = |w: &mut dyn Write| -> Result<()> {
        let mut w = BufWriter::new(w);
        if pftrace {
            write_pftrace(&mut w, &files, marks, report)?;
        } else {
            write_json(&mut w, &files, marks, report)?;
        }
        w.flush()?;
        Ok(())
    };
    if name.ends_with(".gz") {
        let mut gz = flate2::write::GzEncoder::new(&mut f, flate2::Compression::fast());
        body(&mut gz)?;
        // Finished here: dropped, the encoder would lose an error in
        // writing gzip's trailer.
        gz.finish()?;
    } else {
        body(&mut f)?;
    }
    Ok(f)
}

/// A JSON time: microseconds with the nanoseconds as decimals.
fn json_us(ns: Ns) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// The thread id of a lane in the JSON output: 1 the steps, 2 the path,
/// then 3, 4 their second lanes, and so on.
fn json_tid((track, lane): Lane) -> u64 {
    1 + track as u64 + 2 * lane as u64
}

/// The process id of a rank's added tracks: far above real process ids.
fn added_pid(i: usize) -> u64 {
    0x7ac0_0000 + i as u64
}

/// A JSON input as the annotated trace holds it.
struct JsonInput {
    /// A PyTorch profiler trace: renumbered and labelled as mergetrace
    /// merges one (docs/mergetrace.md#kineto).
    kineto: bool,
    /// The rank its processes are named with (Kineto inputs that have one).
    rank: Option<u32>,
    /// Kineto's `baseTimeNanoseconds`.
    clock_base: Option<Ns>,
}

/// What each input is, read from its head (and, for a plain Kineto file,
/// its tail) before any event is written.
fn json_inputs(files: &[&str]) -> Result<Vec<JsonInput>> {
    let mut inputs = Vec::with_capacity(files.len());
    for file in files {
        let p = Path::new(file);
        let opened = timeline::open(p)?;
        let Sniffed::Json(dialect) = opened.sniffed else {
            bail!("{file}: --annotate OUT.json takes JSON traces; write OUT.pftrace for .pftrace inputs");
        };
        let kineto = dialect == JsonDialect::Kineto;
        // The rank as every tool reads it (docs/formats.md#timeline-ranks).
        let rank = rank_from_path(p)
            .map(|(r, _)| r)
            .or(opened.run_info.as_ref().and_then(|i| i.rank));
        inputs.push(JsonInput {
            kineto,
            rank: rank.filter(|_| kineto),
            clock_base: opened.clock_base,
        });
    }
    Ok(inputs)
}

/// The items of the output's `traceEvents`, separated as they come.
struct JsonArray {
    items: u64,
}

impl JsonArray {
    fn item(&mut self, w: &mut impl Write, text: &[u8]) -> std::io::Result<()> {
        if self.items > 0 {
            w.write_all(b",\n")?;
        }
        self.items += 1;
        w.write_all(text)
    }
}

/// Writes the inputs' events into `array`, each Kineto input in its own
/// ids, its processes named with its rank and its times on the merged
/// clock, as mergetrace merges them (`core::trace::merged_input`,
/// docs/tracestat.md#annotated-trace); other inputs' events as they are.
/// Returns per input the clock base its written times count from.
fn write_json_inputs(
    w: &mut impl Write,
    array: &mut JsonArray,
    files: &[&str],
    inputs: &[JsonInput],
) -> Result<Vec<Ns>> {
    let kineto_bases: Vec<Option<Ns>> = inputs
        .iter()
        .map(|i| i.clock_base.filter(|_| i.kineto))
        .collect();
    let shifts = clock_shifts(&kineto_bases);
    let earliest = kineto_bases.iter().flatten().min().copied();
    let (mut merged, mut edits) = (MergedIds::default(), EventEdits::default());
    for (position, (file, input)) in files.iter().zip(inputs).enumerate() {
        let p = Path::new(file);
        let mut ids = input.kineto.then(|| InputIds::new(position, input.rank));
        let mut reader = timeline::open(p)?.json_reader();
        while let Some(ev) = reader.next_event().map_err(|e| e.into_input_error(p))? {
            edits.clear();
            if let Some(shift) = shifts[position] {
                edits.shift_ts(&ev, shift);
            }
            if let Some(ids) = ids.as_mut() {
                let found = ids.renumber(&mut merged, &ev, &mut edits);
                if let Some(label) = found.label_before {
                    array.item(w, label.as_bytes())?;
                }
                if let Some(id) = found.large_flow_id {
                    warn(
                        crate::TOOL,
                        format!("{file}: flow id {id} is not below 2^32; left as is"),
                    );
                }
            }
            array.item(w, edits.apply(ev.raw()))?;
        }
    }
    Ok(kineto_bases
        .iter()
        .zip(inputs)
        .map(|(k, i)| k.and(earliest).or(i.clock_base).unwrap_or(0))
        .collect())
}

fn write_json(
    w: &mut impl Write,
    files: &[&str],
    marks: &[RankMarks],
    report: &Report,
) -> Result<()> {
    let inputs = json_inputs(files)?;
    // The clock base of inputs that all have one, as mergetrace states it
    // (docs/mergetrace.md#kineto): tracestat reads the annotated trace on
    // the inputs' clock.
    let bases: Vec<Option<Ns>> = inputs
        .iter()
        .map(|i| i.clock_base.filter(|_| i.kineto))
        .collect();
    w.write_all(b"{")?;
    if let Some(base) = merged_clock_base(&bases) {
        write!(w, "\"baseTimeNanoseconds\":{base},")?;
    }
    w.write_all(b"\"traceEvents\":[\n")?;
    let mut array = JsonArray { items: 0 };
    let bases = write_json_inputs(w, &mut array, files, &inputs)?;
    for (i, (m, adds)) in marks.iter().zip(added(marks, report)).enumerate() {
        let base = files
            .iter()
            .position(|f| *f == m.file)
            .map_or(0, |k| bases[k]);
        let pid = added_pid(i);
        let meta = |what: &str, tid: u64, name: &str| {
            format!(
                "{{\"ph\":\"M\",\"name\":\"{what}\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":{}}}}}",
                serde_json::to_string(name).unwrap_or_default()
            )
        };
        let process = meta("process_name", 0, &format!("tracestat rank {}", m.label));
        array.item(w, process.as_bytes())?;
        for lane in used_lanes(&adds) {
            array.item(
                w,
                meta("thread_name", json_tid(lane), &lane_name(lane)).as_bytes(),
            )?;
        }
        for a in adds {
            let line = match a {
                Added::Slice(lane, s, e, name, cat) => format!(
                    "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"name\":{},\"cat\":\"{cat}\",\"ts\":{},\"dur\":{}}}",
                    json_tid(lane),
                    serde_json::to_string(&name).unwrap_or_default(),
                    json_us(s - base),
                    json_us(e - s)
                ),
                Added::Count(k, t, d) => format!(
                    "{{\"ph\":\"C\",\"pid\":{pid},\"tid\":0,\"name\":{},\"ts\":{},\"args\":{{\"depth\":{d}}}}}",
                    serde_json::to_string(&format!("queue depth {}", m.depth[k].label))
                        .unwrap_or_default(),
                    json_us(t - base)
                ),
            };
            array.item(w, line.as_bytes())?;
        }
    }
    w.write_all(b"\n]}\n")?;
    Ok(())
}

// TracePacket and track fields (Perfetto's trace_packet.proto,
// track_descriptor.proto, track_event.proto; docs/formats.md#pftrace).
const PACKET_TIMESTAMP: u32 = 8;
const PACKET_SEQUENCE_ID: u32 = 10;
const PACKET_TRACK_EVENT: u32 = 11;
const PACKET_SEQUENCE_FLAGS: u32 = 13;
const PACKET_CLOCK_ID: u32 = 58;
const PACKET_TRACK_DESCRIPTOR: u32 = 60;
const TD_UUID: u32 = 1;
const TD_NAME: u32 = 2;
const TD_PARENT: u32 = 5;
const TD_COUNTER: u32 = 8;
const TE_TYPE: u32 = 9;
const TE_TRACK: u32 = 11;
const TE_CATEGORY: u32 = 22;
const TE_NAME: u32 = 23;
const TE_COUNTER_VALUE: u32 = 30;
const SLICE_BEGIN: u64 = 1;
const SLICE_END: u64 = 2;
const COUNTER: u64 = 4;
/// The added packets' sequence (one the inputs do not use).
const SEQUENCE: u64 = 0x7ac0;

/// The `timestamp_clock_id` of a packet, if it sets one.
fn clock_id(packet: &[u8]) -> Option<u64> {
    use unitrace_core::pftrace::read_varint;
    let mut at = 0;
    while at < packet.len() {
        let (key, n) = read_varint(&packet[at..])?;
        at += n;
        let (field, wire) = ((key >> 3) as u32, key & 7);
        match wire {
            0 => {
                let (v, n) = read_varint(&packet[at..])?;
                at += n;
                if field == PACKET_CLOCK_ID {
                    return Some(v);
                }
            }
            1 => at += 8,
            2 => {
                let (len, n) = read_varint(&packet[at..])?;
                at += n + len as usize;
            }
            5 => at += 4,
            _ => return None,
        }
    }
    None
}

/// Writes the inputs' records, each input's flow ids and track uuids its
/// own as in mergetrace's merge (`core::pftrace_merged_input`,
/// docs/tracestat.md#annotated-trace). Returns the timestamp clock of the
/// first packet that names one.
fn write_pftrace_inputs(w: &mut impl Write, files: &[&str]) -> Result<Option<u64>> {
    let mut clock: Option<u64> = None;
    let mut merged = MergedTracks::default();
    let (mut bufs, mut rewritten) = (RewriteBuffers::default(), Vec::new());
    for (position, file) in files.iter().enumerate() {
        let p = Path::new(file);
        let opened = timeline::open(p)?;
        if !matches!(opened.sniffed, Sniffed::Pftrace) {
            bail!("{file}: --annotate OUT.pftrace takes .pftrace traces; write OUT.json for JSON inputs");
        }
        let mut edit = InputRecords::new(position, &mut merged);
        let mut reader = PacketReader::new(opened.into_reader());
        while let Some(rec) = reader.next_record().map_err(|e| e.into_input_error(p))? {
            if clock.is_none() {
                clock = clock_id(rec.packet);
            }
            write_record(&rec, &mut edit, &mut bufs, &mut rewritten, w)?
                .map_err(|e| e.into_input_error(p))?;
        }
    }
    Ok(clock)
}

fn write_pftrace(
    w: &mut impl Write,
    files: &[&str],
    marks: &[RankMarks],
    report: &Report,
) -> Result<()> {
    let clock = write_pftrace_inputs(w, files)?;
    let mut first = true;
    let mut packet = |w: &mut dyn Write,
                      ts: Option<Ns>,
                      field: u32,
                      body: PacketBuilder|
     -> std::io::Result<()> {
        let mut p = PacketBuilder::new();
        if let Some(ts) = ts {
            p = p.varint(PACKET_TIMESTAMP, ts.max(0) as u64);
            if let Some(c) = clock {
                p = p.varint(PACKET_CLOCK_ID, c);
            }
        }
        p = p.varint(PACKET_SEQUENCE_ID, SEQUENCE);
        if first {
            p = p.varint(PACKET_SEQUENCE_FLAGS, 1);
            first = false;
        }
        w.write_all(&p.message(field, body).record())
    };
    for (i, (m, adds)) in marks.iter().zip(added(marks, report)).enumerate() {
        let root = 0x7ac0_0000_0000 + ((i as u64) << 16);
        let track = |k: u64| root + 1 + k;
        // Lanes past the first of each track: above the engines' counters.
        let lane_track = |(t, lane): Lane| match lane {
            0 => track(t as u64),
            _ => root + 0x8000 + 2 * lane as u64 + t as u64,
        };
        let mut descriptor =
            |w: &mut dyn Write, uuid: u64, name: &str, parent: Option<u64>, counter: bool| {
                let mut td = PacketBuilder::new()
                    .varint(TD_UUID, uuid)
                    .bytes(TD_NAME, name.as_bytes());
                if let Some(p) = parent {
                    td = td.varint(TD_PARENT, p);
                }
                if counter {
                    td = td.message(TD_COUNTER, PacketBuilder::new());
                }
                packet(w, None, PACKET_TRACK_DESCRIPTOR, td)
            };
        descriptor(w, root, &format!("tracestat rank {}", m.label), None, false)?;
        for lane in used_lanes(&adds) {
            descriptor(w, lane_track(lane), &lane_name(lane), Some(root), false)?;
        }
        for (k, eng) in m.depth.iter().enumerate() {
            let name = format!("queue depth {}", eng.label);
            descriptor(w, track(2 + k as u64), &name, Some(root), true)?;
        }
        for a in adds {
            match a {
                Added::Slice(lane, s, e, name, cat) => {
                    let begin = PacketBuilder::new()
                        .varint(TE_TYPE, SLICE_BEGIN)
                        .varint(TE_TRACK, lane_track(lane))
                        .bytes(TE_CATEGORY, cat.as_bytes())
                        .bytes(TE_NAME, name.as_bytes());
                    packet(w, Some(s), PACKET_TRACK_EVENT, begin)?;
                    let end = PacketBuilder::new()
                        .varint(TE_TYPE, SLICE_END)
                        .varint(TE_TRACK, lane_track(lane));
                    packet(w, Some(e), PACKET_TRACK_EVENT, end)?;
                }
                Added::Count(k, t, d) => {
                    let ev = PacketBuilder::new()
                        .varint(TE_TYPE, COUNTER)
                        .varint(TE_TRACK, track(2 + k as u64))
                        .varint(TE_COUNTER_VALUE, d as u64);
                    packet(w, Some(t), PACKET_TRACK_EVENT, ev)?;
                }
            }
        }
    }
    Ok(())
}
