//! One event model over both unitrace timeline formats, for the tools that
//! analyse traces (tracestat, compare) rather than pass them through: the
//! JSON Chrome trace ([`crate::trace`]) and the Perfetto protobuf trace
//! ([`crate::pftrace`]), docs/formats.md#trace-json and docs/formats.md#pftrace.
//!
//! [`for_each_event`] streams a file of either format and calls back with a
//! [`TimelineEvent`]: process and thread names, complete slices (a JSON `X`,
//! a `B`/`E` pair, a pftrace SLICE_BEGIN/SLICE_END pair, reported at their
//! end), instants, and flow points. Times are integer nanoseconds (JSON
//! `ts` µs × 1000, exact for unitrace's `%f` stamps; pftrace timestamps as
//! written). Slices are not in time order (unitrace flushes device slices in
//! batches): consumers sort.
//!
//! Flows: JSON flows are separate `s`/`t`/`f` events; a pftrace slice
//! carries `flow_ids`. Both become [`TimelineEvent::Flow`] points: for
//! pftrace at the slice's begin, `Start` on a host slice and `End` on a
//! device slice (`gpu_op`), the direction unitrace writes (submitting call
//! to kernel). Flow ids are the file's own (per-rank kernel instance ids).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::error::InputError;
use crate::pftrace::{AnnotationValue, EventType, PacketData, PacketReader};
use crate::result_dir::TraceFormat;
use crate::trace::{decode_string_content, object_members, parse_u64, Event, Field, TraceReader};
use crate::trace_decimal::Decimal;

/// Where a flow point sits in its flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowPhase {
    Start,
    Step,
    End,
}

/// Arguments of a slice: the JSON `args` object or the pftrace debug
/// annotations.
#[derive(Debug, Clone, Copy)]
pub enum Args<'a> {
    None,
    /// The raw text of the JSON `args` object.
    Json(&'a [u8]),
    /// Debug annotations (name, value), in order.
    Annotations(&'a [(String, ArgValue)]),
}

/// An owned debug-annotation value.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    Uint(u64),
    Int(i64),
    Double(f64),
    Bool(bool),
    Str(String),
    Other,
}

impl ArgValue {
    fn from_annotation(v: AnnotationValue<'_>) -> ArgValue {
        match v {
            AnnotationValue::Uint(u) => ArgValue::Uint(u),
            AnnotationValue::Int(i) => ArgValue::Int(i),
            AnnotationValue::Double(d) => ArgValue::Double(d),
            AnnotationValue::Bool(b) => ArgValue::Bool(b),
            AnnotationValue::Str(s) => ArgValue::Str(String::from_utf8_lossy(s).into_owned()),
            AnnotationValue::Other => ArgValue::Other,
        }
    }
}

impl<'a> Args<'a> {
    /// A string argument (`args.metrics`, `args.id` written as a string).
    pub fn get_str(&self, key: &str) -> Option<Cow<'a, str>> {
        match *self {
            Args::None => None,
            Args::Json(obj) => {
                let (_, span) = object_members(obj).find(|(k, _)| *k == key.as_bytes())?;
                let v = &obj[span.range()];
                if v.len() < 2 || v[0] != b'"' {
                    return None;
                }
                let inner = &v[1..v.len() - 1];
                decode_string_content(inner, inner.contains(&b'\\'))
            }
            Args::Annotations(list) => {
                list.iter()
                    .find(|(k, _)| k == key)
                    .and_then(|(_, v)| match v {
                        ArgValue::Str(s) => Some(Cow::Borrowed(s.as_str())),
                        _ => None,
                    })
            }
        }
    }

    /// An unsigned integer argument, written as a number or as a string of
    /// digits (unitrace writes device instance ids as strings).
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        match *self {
            Args::None => None,
            Args::Json(obj) => {
                let (_, span) = object_members(obj).find(|(k, _)| *k == key.as_bytes())?;
                let v = &obj[span.range()];
                let digits = v
                    .strip_prefix(b"\"")
                    .and_then(|v| v.strip_suffix(b"\""))
                    .unwrap_or(v);
                parse_u64(digits)
            }
            Args::Annotations(list) => {
                list.iter()
                    .find(|(k, _)| k == key)
                    .and_then(|(_, v)| match v {
                        ArgValue::Uint(u) => Some(*u),
                        ArgValue::Int(i) => u64::try_from(*i).ok(),
                        ArgValue::Str(s) => s.parse().ok(),
                        _ => None,
                    })
            }
        }
    }
}

/// A complete slice (or an instant, `dur_ns` 0).
#[derive(Debug, Clone, Copy)]
pub struct Slice<'a> {
    pub pid: u64,
    pub tid: u64,
    pub name: &'a str,
    /// The first category (`cpu_op`, `gpu_op`, ...); empty when none.
    pub category: &'a str,
    pub start_ns: i64,
    pub dur_ns: i64,
    pub args: Args<'a>,
}

/// One event of either format.
#[derive(Debug, Clone, Copy)]
pub enum TimelineEvent<'a> {
    /// A process name (JSON `process_name` metadata, a pftrace process
    /// track descriptor).
    Process {
        pid: u64,
        name: &'a str,
    },
    /// A thread name (JSON `thread_name`, a pftrace thread descriptor).
    Thread {
        pid: u64,
        tid: u64,
        name: &'a str,
    },
    Slice(Slice<'a>),
    Instant(Slice<'a>),
    Flow {
        id: u64,
        phase: FlowPhase,
        pid: u64,
        tid: u64,
        ts_ns: i64,
    },
}

/// What a finished read found.
#[derive(Debug, Clone, Default)]
pub struct TimelineSummary {
    pub format: Option<TraceFormat>,
    /// Events delivered.
    pub events: u64,
    /// Slice begins without an end (left out).
    pub unclosed_slices: u64,
    /// A one-line description of a cut (writer killed), for a warning.
    pub truncated: Option<String>,
}

/// `ts` (µs, exact decimal) as integer ns, rounded to the nanosecond.
fn us_to_ns(d: Decimal) -> Option<i64> {
    let ns = match d.rescale(3) {
        Some(x) => x.mantissa(),
        None => (d.to_f64() * 1000.0).round() as i128,
    };
    i64::try_from(ns).ok()
}

/// Streams the events of the trace at `path` (format by extension, as the
/// upstream scripts route: `.pftrace` is protobuf, anything else JSON).
pub fn for_each_event(
    path: &Path,
    f: impl FnMut(&TimelineEvent<'_>),
) -> Result<TimelineSummary, InputError> {
    let file = File::open(path).map_err(|e| InputError::io(path, &e))?;
    match TraceFormat::of_path(path) {
        // Read in place when the file can be mapped.
        TraceFormat::Json => json_events(
            TraceReader::open_file(file, crate::trace::DEFAULT_MAX_EVENT_BYTES),
            path,
            f,
        ),
        TraceFormat::Pftrace => pftrace_events(file, path, f),
    }
}

/// Streams the events of `src` in `format`; `path` names it in errors.
pub fn for_each_event_in<R: Read>(
    src: R,
    format: TraceFormat,
    path: &Path,
    f: impl FnMut(&TimelineEvent<'_>),
) -> Result<TimelineSummary, InputError> {
    match format {
        TraceFormat::Json => json_events(TraceReader::new(src), path, f),
        TraceFormat::Pftrace => pftrace_events(src, path, f),
    }
}

fn json_events<R: Read>(
    mut reader: TraceReader<R>,
    path: &Path,
    mut f: impl FnMut(&TimelineEvent<'_>),
) -> Result<TimelineSummary, InputError> {
    let mut sum = TimelineSummary {
        format: Some(TraceFormat::Json),
        ..Default::default()
    };
    // Open `B` events per (pid, tid): name, category, start, args text.
    type Open = (String, String, i64, Vec<u8>);
    let mut open: HashMap<(u64, u64), Vec<Open>> = HashMap::new();
    loop {
        let ev = match reader.next_event() {
            Ok(Some(ev)) => ev,
            Ok(None) => break,
            Err(e) => return Err(e.into_input_error(path)),
        };
        let Some(ph) = ev.str_raw(Field::Ph) else {
            continue;
        };
        let pid = ev.uint(Field::Pid).unwrap_or(0);
        let tid = ev.uint(Field::Tid).unwrap_or(0);
        let name = ev.str(Field::Name).unwrap_or_default();
        let cat = ev.str(Field::Cat).unwrap_or_default();
        let args = match ev.value(Field::Args) {
            Some(a) if a.first() == Some(&b'{') => Args::Json(a),
            _ => Args::None,
        };
        let ts = ev.decimal(Field::Ts).and_then(us_to_ns);
        let slice = |start_ns: i64, dur_ns: i64| Slice {
            pid,
            tid,
            name: &name,
            category: &cat,
            start_ns,
            dur_ns,
            args,
        };
        match ph {
            b"M" => {
                let label = metadata_name(&ev);
                let Some(label) = label.as_deref() else {
                    continue;
                };
                match &*name {
                    "process_name" => f(&TimelineEvent::Process { pid, name: label }),
                    "thread_name" => f(&TimelineEvent::Thread {
                        pid,
                        tid,
                        name: label,
                    }),
                    _ => continue,
                }
            }
            b"X" => {
                let (Some(ts), Some(dur)) = (ts, ev.decimal(Field::Dur).and_then(us_to_ns)) else {
                    continue;
                };
                f(&TimelineEvent::Slice(slice(ts, dur)));
            }
            b"B" => {
                let Some(ts) = ts else { continue };
                let raw_args = match args {
                    Args::Json(a) => a.to_vec(),
                    _ => Vec::new(),
                };
                open.entry((pid, tid)).or_default().push((
                    name.into_owned(),
                    cat.into_owned(),
                    ts,
                    raw_args,
                ));
                continue;
            }
            b"E" => {
                let Some(ts) = ts else { continue };
                let Some((bname, bcat, start, bargs)) =
                    open.get_mut(&(pid, tid)).and_then(Vec::pop)
                else {
                    continue;
                };
                f(&TimelineEvent::Slice(Slice {
                    pid,
                    tid,
                    name: &bname,
                    category: &bcat,
                    start_ns: start,
                    dur_ns: ts - start,
                    args: if bargs.is_empty() {
                        Args::None
                    } else {
                        Args::Json(&bargs)
                    },
                }));
            }
            b"i" | b"I" | b"R" | b"n" => {
                let Some(ts) = ts else { continue };
                f(&TimelineEvent::Instant(slice(ts, 0)));
            }
            b"s" | b"t" | b"f" => {
                let (Some(ts), Some(id)) = (ts, ev.uint(Field::Id)) else {
                    continue;
                };
                let phase = match ph {
                    b"s" => FlowPhase::Start,
                    b"t" => FlowPhase::Step,
                    _ => FlowPhase::End,
                };
                f(&TimelineEvent::Flow {
                    id,
                    phase,
                    pid,
                    tid,
                    ts_ns: ts,
                });
            }
            _ => continue,
        }
        sum.events += 1;
    }
    sum.unclosed_slices = open.values().map(|v| v.len() as u64).sum();
    let s = reader.summary();
    if let Some(t) = &s.truncation {
        if t.partial_event {
            sum.truncated = Some(format!(
                "line {}: trace cut short (writer killed?): kept {} complete events, dropped {} bytes",
                t.line, s.events, t.dropped_bytes
            ));
        }
    }
    Ok(sum)
}

/// `args.name` of a metadata event.
fn metadata_name(ev: &Event<'_>) -> Option<String> {
    Args::Json(ev.value(Field::Args)?)
        .get_str("name")
        .map(Cow::into_owned)
}

/// A track of a pftrace: the pid/tid its events belong to.
#[derive(Clone, Copy, Default)]
struct Track {
    pid: u64,
    tid: u64,
}

struct OpenPf {
    name: String,
    category: String,
    start: u64,
    args: Vec<(String, ArgValue)>,
}

fn pftrace_events<R: Read>(
    src: R,
    path: &Path,
    mut f: impl FnMut(&TimelineEvent<'_>),
) -> Result<TimelineSummary, InputError> {
    let mut reader = PacketReader::new(src);
    let mut sum = TimelineSummary {
        format: Some(TraceFormat::Pftrace),
        ..Default::default()
    };
    let mut tracks: HashMap<u64, Track> = HashMap::new();
    let mut open: HashMap<u64, Vec<OpenPf>> = HashMap::new();
    let ns = |t: u64| i64::try_from(t).unwrap_or(i64::MAX);
    loop {
        let rec = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(e.into_input_error(path)),
        };
        let p = rec.decode().map_err(|e| e.into_input_error(path))?;
        match p.data {
            PacketData::TrackDescriptor(d) => {
                let Some(uuid) = d.uuid else { continue };
                let parent = d.parent_uuid.and_then(|u| tracks.get(&u)).copied();
                if let Some(t) = d.thread {
                    let pid = t.pid.map_or(parent.map_or(0, |p| p.pid), |p| p as u64);
                    let tid = t.tid.map_or(0, |t| t as u64);
                    tracks.insert(uuid, Track { pid, tid });
                    if let Some(name) = d.display_name() {
                        f(&TimelineEvent::Thread {
                            pid,
                            tid,
                            name: &name,
                        });
                        sum.events += 1;
                    }
                } else if let Some(pr) = d.process {
                    let pid = pr.pid.map_or(0, |p| p as u64);
                    tracks.insert(uuid, Track { pid, tid: pid });
                    if let Some(name) = d.display_name() {
                        f(&TimelineEvent::Process { pid, name: &name });
                        sum.events += 1;
                    }
                } else {
                    tracks.insert(uuid, parent.unwrap_or_default());
                }
            }
            PacketData::TrackEvent(e) => {
                let Some(ts) = p.timestamp else { continue };
                let uuid = e.track_uuid.unwrap_or(0);
                let track = tracks.get(&uuid).copied().unwrap_or_default();
                let category = e
                    .categories()
                    .next()
                    .map(|c| String::from_utf8_lossy(c).into_owned())
                    .unwrap_or_default();
                match e.kind {
                    EventType::SliceBegin => {
                        let phase = if category == "gpu_op" {
                            FlowPhase::End
                        } else {
                            FlowPhase::Start
                        };
                        for id in e.flow_ids() {
                            f(&TimelineEvent::Flow {
                                id,
                                phase,
                                pid: track.pid,
                                tid: track.tid,
                                ts_ns: ns(ts),
                            });
                            sum.events += 1;
                        }
                        open.entry(uuid).or_default().push(OpenPf {
                            name: e.name_str().unwrap_or_default().into_owned(),
                            category,
                            start: ts,
                            args: annotations(&e),
                        });
                    }
                    EventType::SliceEnd => {
                        let Some(b) = open.get_mut(&uuid).and_then(Vec::pop) else {
                            continue;
                        };
                        f(&TimelineEvent::Slice(Slice {
                            pid: track.pid,
                            tid: track.tid,
                            name: &b.name,
                            category: &b.category,
                            start_ns: ns(b.start),
                            dur_ns: ns(ts) - ns(b.start),
                            args: Args::Annotations(&b.args),
                        }));
                        sum.events += 1;
                    }
                    EventType::Instant => {
                        let name = e.name_str().unwrap_or_default();
                        let args = annotations(&e);
                        f(&TimelineEvent::Instant(Slice {
                            pid: track.pid,
                            tid: track.tid,
                            name: &name,
                            category: &category,
                            start_ns: ns(ts),
                            dur_ns: 0,
                            args: Args::Annotations(&args),
                        }));
                        sum.events += 1;
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    sum.unclosed_slices = open.values().map(|v| v.len() as u64).sum();
    let s = reader.summary();
    if let Some(t) = &s.truncation {
        sum.truncated = Some(format!(
            "byte {}: trace cut short (writer killed?): kept {} complete packets, dropped {} bytes",
            t.offset, s.packets, t.dropped_bytes
        ));
    }
    Ok(sum)
}

fn annotations(e: &crate::pftrace::TrackEvent<'_>) -> Vec<(String, ArgValue)> {
    e.annotations()
        .map(|a| {
            (
                a.name
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .unwrap_or_default(),
                ArgValue::from_annotation(a.value),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pftrace::{fields, PacketBuilder};

    #[derive(Debug, PartialEq)]
    enum Seen {
        Process(u64, String),
        Thread(u64, u64, String),
        Slice(u64, u64, String, String, i64, i64, Option<u64>),
        Flow(u64, FlowPhase, i64),
    }

    fn collect(bytes: &[u8], format: TraceFormat) -> (Vec<Seen>, TimelineSummary) {
        let mut seen = Vec::new();
        let sum = for_each_event_in(bytes, format, Path::new("t"), |e| {
            seen.push(match *e {
                TimelineEvent::Process { pid, name } => Seen::Process(pid, name.into()),
                TimelineEvent::Thread { pid, tid, name } => Seen::Thread(pid, tid, name.into()),
                TimelineEvent::Slice(s) | TimelineEvent::Instant(s) => Seen::Slice(
                    s.pid,
                    s.tid,
                    s.name.into(),
                    s.category.into(),
                    s.start_ns,
                    s.dur_ns,
                    s.args.get_u64("id"),
                ),
                TimelineEvent::Flow {
                    id, phase, ts_ns, ..
                } => Seen::Flow(id, phase, ts_ns),
            })
        })
        .unwrap();
        (seen, sum)
    }

    #[test]
    fn json_and_pftrace_give_the_same_events() {
        let json = br#"{"traceEvents":[
{"ph": "M", "name": "process_name", "pid": 7, "tid": 7, "ts": 1.000000, "args": {"name": "HOST"}},
{"ph": "M", "name": "thread_name", "pid": 9, "tid": 3, "args": {"name": "Thread 3 L0"}},
{"ph": "s", "tid": 7, "pid": 7, "name": "dep", "cat": "Flow_H2D_5_0", "id": 5, "ts": 2.000000},
{"ph": "X", "tid": 3, "pid": 9, "name": "k", "cat": "gpu_op", "ts": 3.000000, "dur": 1.500000, "args": {"id": "5"}}
]}"#;
        let uuid = |x: u64| x;
        let mut pf = Vec::new();
        pf.extend(
            PacketBuilder::new()
                .varint(fields::PACKET_TIMESTAMP, 1000)
                .message(
                    fields::PACKET_TRACK_DESCRIPTOR,
                    PacketBuilder::new()
                        .varint(fields::TD_UUID, uuid(1))
                        .message(
                            fields::TD_PROCESS,
                            PacketBuilder::new()
                                .varint(fields::PD_PID, 7)
                                .bytes(fields::PD_NAME, b"HOST"),
                        ),
                )
                .record(),
        );
        pf.extend(
            PacketBuilder::new()
                .message(
                    fields::PACKET_TRACK_DESCRIPTOR,
                    PacketBuilder::new()
                        .varint(fields::TD_UUID, uuid(2))
                        .message(
                            fields::TD_PROCESS,
                            PacketBuilder::new().varint(fields::PD_PID, 9),
                        ),
                )
                .record(),
        );
        pf.extend(
            PacketBuilder::new()
                .message(
                    fields::PACKET_TRACK_DESCRIPTOR,
                    PacketBuilder::new()
                        .varint(fields::TD_UUID, uuid(3))
                        .varint(fields::TD_PARENT_UUID, uuid(2))
                        .message(
                            fields::TD_THREAD,
                            PacketBuilder::new()
                                .varint(fields::THD_PID, 9)
                                .varint(fields::THD_TID, 3)
                                .bytes(fields::THD_NAME, b"Thread 3 L0"),
                        ),
                )
                .record(),
        );
        let event = |ts: u64, te: PacketBuilder| {
            PacketBuilder::new()
                .varint(fields::PACKET_TIMESTAMP, ts)
                .message(fields::PACKET_TRACK_EVENT, te)
                .record()
        };
        pf.extend(event(
            3000,
            PacketBuilder::new()
                .message(
                    fields::TE_DEBUG_ANNOTATIONS,
                    PacketBuilder::new()
                        .bytes(fields::DA_NAME, b"id")
                        .bytes(fields::DA_STRING, b"5"),
                )
                .varint(fields::TE_TYPE, 1)
                .varint(fields::TE_TRACK_UUID, 3)
                .bytes(fields::TE_CATEGORIES, b"gpu_op")
                .bytes(fields::TE_NAME, b"k")
                .fixed64(fields::TE_FLOW_IDS, 5),
        ));
        pf.extend(event(
            4500,
            PacketBuilder::new()
                .varint(fields::TE_TYPE, 2)
                .varint(fields::TE_TRACK_UUID, 3),
        ));
        let (j, js) = collect(json, TraceFormat::Json);
        let (p, ps) = collect(&pf, TraceFormat::Pftrace);
        let slice = Seen::Slice(9, 3, "k".into(), "gpu_op".into(), 3000, 1500, Some(5));
        assert_eq!(
            j,
            [
                Seen::Process(7, "HOST".into()),
                Seen::Thread(9, 3, "Thread 3 L0".into()),
                Seen::Flow(5, FlowPhase::Start, 2000),
                slice,
            ]
        );
        let slice = Seen::Slice(9, 3, "k".into(), "gpu_op".into(), 3000, 1500, Some(5));
        assert_eq!(
            p,
            [
                Seen::Process(7, "HOST".into()),
                Seen::Thread(9, 3, "Thread 3 L0".into()),
                Seen::Flow(5, FlowPhase::End, 3000),
                slice,
            ]
        );
        assert_eq!((js.events, ps.events), (4, 4));
        assert!(js.truncated.is_none() && ps.truncated.is_none());
        let (_, cut) = collect(&pf[..pf.len() - 3], TraceFormat::Pftrace);
        assert_eq!(cut.unclosed_slices, 1);
        assert!(cut.truncated.unwrap().contains("cut short"));
    }
}
