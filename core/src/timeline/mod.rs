//! The one trace source every timeline analysis reads through
//! (docs/formats.md#timeline-model): a file of any timeline format —
//! unitrace's Chrome trace JSON, Perfetto `.pftrace`, PyTorch profiler
//! (Kineto) JSON, each possibly gzipped — detected by its content
//! ([`detect`]), read once, front to back, and delivered as one typed
//! vocabulary ([`model`]) to a [`TraceSink`]: device commands (kernel,
//! copy with its direction, fill, barrier; engine and queue), host calls
//! and annotated host ranges, submission links (flows), collective
//! arguments, counter samples, process and thread names and the rank of
//! each event ([`rank`]).
//!
//! A format is one module that turns its file into those calls:
//! [`chrome_json`] (the `ph` grammar shared by all Chrome-trace writers, with
//! one [`chrome_json::JsonVocabulary`] per writer: unitrace's there,
//! Kineto's in [`kineto`]) and [`pftrace_events`]. Tools that already walk a
//! trace's events for another purpose (mergetrace copies their bytes) feed
//! the same interpreters event by event ([`EventInterpreter`]).
//!
//! Reading: a file is streamed through one bounded buffer, never mapped,
//! and watched while it is read ([`crate::watched_file`]: a file that
//! changes under the tool is an error naming it,
//! docs/robustness.md#changed-inputs); gzip is inflated on the fly (flate2
//! with zlib-rs), never to disk.

pub mod chrome_json;
pub mod collective;
pub mod detect;
pub mod gzip;
pub mod kineto;
pub mod model;
pub mod names;
pub mod pftrace_events;
pub mod rank;
pub mod time;

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::error::InputError;
use crate::pftrace::{Packet, PacketReader, PftraceSummary};
use crate::trace::{Event, TraceReader, DEFAULT_MAX_EVENT_BYTES};
use crate::walk::{walk, Depth, Skipped, Walk};
use crate::watched_file::WatchedFile;

use chrome_json::{JsonEvents, UnitraceVocabulary};
use detect::{JsonDialect, Sniffed, HEAD_BYTES};
use gzip::{GzipCut, GzipDamage, GzipReader, GzipWatch};
use kineto::KinetoVocabulary;
pub use model::*;
pub use names::{CatId, HostKind, NameId, NameInfo, Names};
use pftrace_events::PftraceEvents;
pub use rank::{RankIdentity, RankList, RankRouter};

/// The formats of timelines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimelineFormat {
    /// unitrace's (or any Chrome) trace JSON.
    ChromeJson,
    /// PyTorch profiler (Kineto) trace JSON.
    KinetoJson,
    Pftrace,
}

impl TimelineFormat {
    pub fn label(self) -> &'static str {
        match self {
            TimelineFormat::ChromeJson => "trace JSON",
            TimelineFormat::KinetoJson => "PyTorch profiler (Kineto) JSON",
            TimelineFormat::Pftrace => ".pftrace",
        }
    }
}

/// A read that failed: the input is bad, or the sink could not take an
/// event (e.g. it spills to a full disk).
#[derive(Debug)]
pub enum SourceError {
    Input(InputError),
    Sink(io::Error),
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::Input(e) => e.fmt(f),
            SourceError::Sink(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SourceError {}

impl From<InputError> for SourceError {
    fn from(e: InputError) -> Self {
        SourceError::Input(e)
    }
}

/// A file's trace was cut short (its writer was killed): the complete
/// events were read, the rest ignored (docs/formats.md#trace-json-truncated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub dropped_bytes: u64,
    /// JSON: the 1-based line of the first ignored byte.
    pub line: Option<u64>,
    /// JSON: the cut is inside an event (not between two).
    pub partial_event: bool,
    /// A gzipped file: where its gzip stream was cut, when it was
    /// ([`gzip`]); the trace inside may still be whole.
    pub gzip: Option<GzipCut>,
}

impl Cut {
    /// The report's one-line description.
    pub fn describe(&self, format: TimelineFormat) -> String {
        let unit = match format {
            TimelineFormat::Pftrace => "record",
            _ => "event",
        };
        let what = match self.gzip {
            // The trace text ended before the stream did: it is whole.
            Some(at) if self.dropped_bytes == 0 && at != GzipCut::Data => {
                return GzipDamage::Cut(at).describe()
            }
            Some(_) if self.dropped_bytes == 0 => {
                return format!(
                    "{}: the trace read up to the cut is whole",
                    GzipDamage::Cut(GzipCut::Data).describe()
                )
            }
            Some(_) => "gzip stream cut short (writer killed?)",
            None => "cut short (writer killed?)",
        };
        format!(
            "{what}: {} bytes after the last complete {unit} ignored",
            self.dropped_bytes
        )
    }

    /// Why a cut file that yielded no event holds no trace (an error, or a
    /// warning where the tool leaves such an input out, docs/errors.md).
    pub fn describe_empty(&self) -> String {
        match self.gzip {
            Some(GzipCut::Header) => format!(
                "{}: no trace events",
                GzipDamage::Cut(GzipCut::Header).describe()
            ),
            Some(_) => {
                "gzip stream cut short (writer killed?): no trace events before the cut".to_string()
            }
            None => "cut short (writer killed?): no trace events before the cut".to_string(),
        }
    }
}

/// What a finished read found besides the events.
pub struct TimelineRead {
    pub format: TimelineFormat,
    pub gzipped: bool,
    /// The names and categories the events referred to.
    pub names: Names,
    /// The ranks found (by slot), and which of them held events.
    pub router: RankRouter,
    pub run_info: Option<RunInfo>,
    /// Nothing but blanks (or no byte at all).
    pub empty: bool,
    pub cut: Option<Cut>,
    /// JSON: line of the first non-blank byte after the trace's end.
    pub trailing_data_line: Option<u64>,
    /// Events (JSON) or packets (`.pftrace`) read.
    pub events: u64,
    /// Recoverable damage the read worked around, one line each without
    /// the file's name, for the tool's warnings (once per file,
    /// docs/errors.md): bytes after a gzip stream, an unusable Kineto
    /// clock base or rank.
    pub warnings: Vec<String>,
}

impl TimelineRead {
    /// What a `.pftrace` read found: its names, ranks and summary (a cut
    /// one loses a partial packet; there is no line and no trailing data).
    pub fn of_pftrace(names: Names, router: RankRouter, summary: &PftraceSummary) -> Self {
        TimelineRead {
            format: TimelineFormat::Pftrace,
            gzipped: false,
            names,
            router,
            run_info: None,
            empty: summary.packets == 0 && summary.truncation.is_none(),
            cut: summary.truncation.as_ref().map(|t| Cut {
                dropped_bytes: t.dropped_bytes,
                line: None,
                partial_event: true,
                gzip: None,
            }),
            trailing_data_line: None,
            events: summary.packets,
            warnings: Vec::new(),
        }
    }
}

/// File names a directory's timelines end in: JSON and `.pftrace`,
/// unitrace's and Kineto's (`*.pt.trace.json`), each possibly gzipped.
pub const TRACE_SUFFIXES: &[&str] = &[".json", ".json.gz", ".pftrace", ".pftrace.gz"];

/// Whether a file name ends like a timeline ([`TRACE_SUFFIXES`]).
pub fn has_trace_suffix(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    TRACE_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// The trace files an input names (docs/tracestat.md#inputs): a file as it
/// is; a directory's traces of a `unitrace --result-dir` tree
/// (docs/formats.md#result-dir-tree), else the files directly in it whose
/// names end in [`TRACE_SUFFIXES`], in byte order of their names. Both
/// walks take regular files only: what they skip is in `skipped`, for the
/// caller's warnings (docs/robustness.md#walked-folders). What the files
/// hold is told by content when they are read.
pub fn trace_files(path: &Path) -> Result<Walk, InputError> {
    let meta = std::fs::metadata(path).map_err(|e| InputError::io(path, &e))?;
    if !meta.is_dir() {
        return Ok(Walk {
            files: vec![path.to_path_buf()],
            skipped: Vec::new(),
        });
    }
    if let Ok(tree) = crate::result_dir::ResultDir::open(path) {
        let sel = tree.traces(None);
        if !sel.files.is_empty() {
            let skipped = tree
                .unreadable
                .iter()
                .map(|(path, problem)| Skipped {
                    path: path.clone(),
                    problem: problem.clone(),
                })
                .collect();
            let files = sel.files.into_iter().map(|f| f.path).collect();
            return Ok(Walk { files, skipped });
        }
    }
    let found = walk(path, Depth::Flat, &has_trace_suffix).map_err(|e| InputError::io(path, &e))?;
    if found.files.is_empty() {
        return Err(InputError::at_file(
            path,
            "no trace in this directory (*.json, *.json.gz, *.pftrace, *.pftrace.gz) and no result-dir tree",
        ));
    }
    Ok(found)
}

/// [`trace_files`] of every input, in order.
pub fn expand_inputs(inputs: &[PathBuf]) -> Result<Walk, InputError> {
    let mut out = Walk::default();
    for p in inputs {
        let found = trace_files(p)?;
        out.files.extend(found.files);
        out.skipped.extend(found.skipped);
    }
    Ok(out)
}

/// Reads the trace at `path` into `sink`.
pub fn read_file<S: TraceSink>(path: &Path, sink: &mut S) -> Result<TimelineRead, SourceError> {
    read_file_with_names(path, Names::default(), sink)
}

/// [`read_file`] interning into `names`, the table of an earlier read of
/// the same file: every name then has the id it had there from the first
/// event on, so ids kept from the earlier read resolve during this one.
pub fn read_file_with_names<S: TraceSink>(
    path: &Path,
    names: Names,
    sink: &mut S,
) -> Result<TimelineRead, SourceError> {
    let opened = open(path)?;
    read_opened_with_names(opened, path, names, sink)
}

/// Reads a trace from bytes in memory (tests, fuzzing); `path` names it.
/// A Kineto clock base after the events is found, as in a file.
pub fn read_bytes<S: TraceSink>(
    bytes: &[u8],
    path: &Path,
    sink: &mut S,
) -> Result<TimelineRead, SourceError> {
    let (mut opened, mut envelope) =
        open_stream_searched(Box::new(io::Cursor::new(bytes.to_vec())), path)?;
    if opened.sniffed == Sniffed::Json(JsonDialect::Kineto) && envelope.clock_base.is_none() {
        let inflated;
        let text = if opened.gzipped {
            let (gz, _) = GzipReader::new(Box::new(io::Cursor::new(bytes.to_vec())));
            inflated = kineto::stream_tail(gz).unwrap_or_default();
            &inflated[..]
        } else {
            bytes
        };
        envelope.search(text);
    }
    opened.set_envelope(envelope);
    read_opened(opened, path, sink)
}

/// A file opened and its format detected.
pub struct Opened {
    pub sniffed: Sniffed,
    pub gzipped: bool,
    /// Kineto: `baseTimeNanoseconds`, found ahead of the events wherever
    /// the file writes it (docs/formats.md#kineto-json-time): added to
    /// every time. `None` for other formats, or when the file has none.
    pub clock_base: Option<Ns>,
    /// Kineto: `distributedInfo`, from the file's head or (plain files)
    /// tail, for tools that need the rank before reading
    /// (docs/formats.md#kineto-json-ranks).
    pub run_info: Option<RunInfo>,
    /// A gzipped file: what ended its gzip stream, known once it was read
    /// to its end ([`gzip`]).
    pub gzip: Option<GzipWatch>,
    /// What the search for the values above found unusable (Kineto: a
    /// clock base or rank of the wrong form), one warning each; a read
    /// hands them on in [`TimelineRead::warnings`].
    pub warnings: Vec<String>,
    input: Input,
}

enum Input {
    /// A plain file, rewound to its start, watched while read, and its
    /// path (to find a line again when one is needed).
    File(WatchedFile, PathBuf),
    /// Bytes already consumed by detection, then the rest.
    Stream(Box<dyn Read + Send>),
}

impl Opened {
    /// Takes what the search of the file's envelope found
    /// ([`kineto::EnvelopeFound`]).
    fn set_envelope(&mut self, found: kineto::EnvelopeFound) {
        let (clock_base, run_info, warnings) = found.finish();
        self.clock_base = clock_base;
        self.run_info = run_info;
        self.warnings = warnings;
    }

    /// The input as a byte stream (for tools that read it their own way,
    /// e.g. mergetrace's byte-copying merge).
    pub fn into_reader(self) -> Box<dyn Read + Send> {
        match self.input {
            Input::File(f, _) => Box::new(f),
            Input::Stream(s) => s,
        }
    }

    /// A JSON event reader over the input.
    pub fn json_reader(self) -> TraceReader<Box<dyn Read + Send>> {
        match self.input {
            // A plain file is read again for a line number rather than
            // every byte counted for one (docs/tracestat.md#scale).
            Input::File(f, path) => TraceReader::with_max_event_bytes(
                Box::new(f) as Box<dyn Read + Send>,
                DEFAULT_MAX_EVENT_BYTES,
            )
            .with_line_lookup(move |offset| crate::trace::line_of_offset(&path, offset)),
            Input::Stream(s) => TraceReader::with_max_event_bytes(s, DEFAULT_MAX_EVENT_BYTES),
        }
    }
}

/// Reads up to `n` bytes (fewer only at the end of the input).
fn read_head(src: &mut impl Read, n: usize) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(n.min(HEAD_BYTES));
    src.take(n as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// Opens a trace file and detects its format by content; a file that is
/// not a trace is an error saying what it looks like.
pub fn open(path: &Path) -> Result<Opened, InputError> {
    let mut file = WatchedFile::open(path).map_err(|e| InputError::io(path, &e))?;
    if file.get_ref().metadata().is_ok_and(|m| m.is_dir()) {
        return Err(InputError::at_file(
            path,
            "is a directory, not a trace file",
        ));
    }
    let head = read_head(&mut file, HEAD_BYTES).map_err(|e| InputError::io(path, &e))?;
    let sniffed = detect::sniff(&head);
    if sniffed == Sniffed::Gzip {
        let raw = Box::new(io::Cursor::new(head).chain(file));
        let (mut opened, mut envelope) = open_gzip(raw, path)?;
        if opened.sniffed == Sniffed::Json(JsonDialect::Kineto) && envelope.clock_base.is_none() {
            // Written after the events: inflated once more to find it.
            envelope.search(&gzip_tail(path)?);
        }
        opened.set_envelope(envelope);
        return Ok(opened);
    }
    check_sniffed(path, sniffed)?;
    let mut envelope = kineto::EnvelopeFound::default();
    if sniffed == Sniffed::Json(JsonDialect::Kineto) {
        envelope.search(&head);
        let missing = envelope.clock_base.is_none() || envelope.run_info.is_none();
        if missing && head.len() == HEAD_BYTES {
            let tail = kineto::file_tail(file.get_ref()).map_err(|e| InputError::io(path, &e))?;
            envelope.search(&tail);
        }
    }
    let input = if file.is_regular() {
        use std::io::Seek;
        file.rewind().map_err(|e| InputError::io(path, &e))?;
        Input::File(file, path.to_path_buf())
    } else {
        // A pipe (a FIFO named on the command line): what detection read,
        // then the rest.
        Input::Stream(Box::new(io::Cursor::new(head).chain(file)))
    };
    let mut opened = Opened {
        sniffed,
        gzipped: false,
        clock_base: None,
        run_info: None,
        gzip: None,
        warnings: Vec::new(),
        input,
    };
    opened.set_envelope(envelope);
    Ok(opened)
}

/// The end of a gzipped trace's content: the file is inflated once just to
/// read it (a Kineto clock base written after the events).
fn gzip_tail(path: &Path) -> Result<Vec<u8>, InputError> {
    let file = WatchedFile::open(path).map_err(|e| InputError::io(path, &e))?;
    let (gz, _) = GzipReader::new(Box::new(file));
    kineto::stream_tail(gz).map_err(|e| InputError::io(path, &e))
}

/// [`open`] for a stream (standard input, bytes in memory); `path` names
/// it in errors.
pub fn open_stream(src: Box<dyn Read + Send>, path: &Path) -> Result<Opened, InputError> {
    let (mut opened, envelope) = open_stream_searched(src, path)?;
    opened.set_envelope(envelope);
    Ok(opened)
}

/// [`open_stream`], and what the head of a gzipped Kineto trace says of
/// its envelope (a plain stream is not searched: it cannot be read again).
fn open_stream_searched(
    mut src: Box<dyn Read + Send>,
    path: &Path,
) -> Result<(Opened, kineto::EnvelopeFound), InputError> {
    let head = read_head(&mut src, HEAD_BYTES).map_err(|e| InputError::io(path, &e))?;
    let sniffed = detect::sniff(&head);
    let raw = Box::new(io::Cursor::new(head).chain(src));
    if sniffed == Sniffed::Gzip {
        return open_gzip(raw, path);
    }
    check_sniffed(path, sniffed)?;
    let opened = Opened {
        sniffed,
        gzipped: false,
        clock_base: None,
        run_info: None,
        gzip: None,
        warnings: Vec::new(),
        input: Input::Stream(raw),
    };
    Ok((opened, kineto::EnvelopeFound::default()))
}

/// A gzip stream: detection again on the inflated bytes. A stream cut
/// short (its writer was killed) ends where its data ends, as a cut plain
/// file does, and the reader keeps the complete events
/// (docs/formats.md#trace-json-truncated); what ended it is in
/// [`Opened::gzip`].
fn open_gzip(
    raw: Box<dyn Read + Send>,
    path: &Path,
) -> Result<(Opened, kineto::EnvelopeFound), InputError> {
    let (mut gz, watch) = GzipReader::new(raw);
    let inner = read_head(&mut gz, HEAD_BYTES).map_err(|e| InputError::io(path, &e))?;
    let sniffed = match detect::sniff(&inner) {
        Sniffed::Gzip => Sniffed::Other("gzip inside gzip"),
        s => s,
    };
    check_sniffed(path, sniffed)?;
    let mut envelope = kineto::EnvelopeFound::default();
    if sniffed == Sniffed::Json(JsonDialect::Kineto) {
        envelope.search(&inner);
    }
    let stream = io::Cursor::new(inner).chain(gz);
    let opened = Opened {
        sniffed,
        gzipped: true,
        clock_base: None,
        run_info: None,
        gzip: Some(watch),
        warnings: Vec::new(),
        input: Input::Stream(Box::new(stream)),
    };
    Ok((opened, envelope))
}

fn check_sniffed(path: &Path, sniffed: Sniffed) -> Result<(), InputError> {
    match sniffed {
        Sniffed::Other(what) => Err(InputError::at_file(path, format!("not a trace: {what}"))),
        _ => Ok(()),
    }
}

/// Reads an opened trace into `sink`.
pub fn read_opened<S: TraceSink>(
    opened: Opened,
    path: &Path,
    sink: &mut S,
) -> Result<TimelineRead, SourceError> {
    read_opened_with_names(opened, path, Names::default(), sink)
}

/// [`read_opened`] interning into `names` ([`read_file_with_names`]).
pub fn read_opened_with_names<S: TraceSink>(
    opened: Opened,
    path: &Path,
    names: Names,
    sink: &mut S,
) -> Result<TimelineRead, SourceError> {
    let gzipped = opened.gzipped;
    let gzip = opened.gzip.clone();
    let found_warnings = opened.warnings.clone();
    let mut read = match opened.sniffed {
        Sniffed::Empty => TimelineRead {
            format: TimelineFormat::ChromeJson,
            gzipped,
            names,
            router: RankRouter::new(path),
            run_info: None,
            empty: true,
            cut: None,
            trailing_data_line: None,
            events: 0,
            warnings: Vec::new(),
        },
        Sniffed::Pftrace => {
            let src = match opened.input {
                Input::File(f, _) => {
                    Box::new(io::BufReader::with_capacity(1 << 20, f)) as Box<dyn Read + Send>
                }
                Input::Stream(s) => s,
            };
            read_pftrace(src, path, names, sink)?
        }
        Sniffed::Json(JsonDialect::Kineto) => {
            let mut interp = JsonEvents::new(path, KinetoVocabulary::default())
                .with_clock_offset(opened.clock_base);
            interp.names = names;
            read_json(
                opened.json_reader(),
                interp,
                path,
                TimelineFormat::KinetoJson,
                sink,
            )?
        }
        Sniffed::Json(JsonDialect::Unitrace) => {
            let mut interp = JsonEvents::new(path, UnitraceVocabulary);
            interp.names = names;
            read_json(
                opened.json_reader(),
                interp,
                path,
                TimelineFormat::ChromeJson,
                sink,
            )?
        }
        Sniffed::Gzip | Sniffed::Other(_) => unreachable!("refused by open"),
    };
    read.gzipped = gzipped;
    // The envelope's warnings first, once each: the search ahead of the
    // read and the read itself may both have met the same member.
    let during = std::mem::replace(&mut read.warnings, found_warnings);
    for w in during {
        if !read.warnings.contains(&w) {
            read.warnings.push(w);
        }
    }
    if let Some(damage) = gzip.and_then(|w| w.damage()) {
        read.note_gzip_damage(damage);
    }
    Ok(read)
}

impl TimelineRead {
    /// What ended a gzipped file's stream, once it was read: a cut joins
    /// the trace's own cut (or is the file's cut when the trace inside
    /// ended whole), bytes after the stream are a warning
    /// (docs/robustness.md#gzip).
    pub fn note_gzip_damage(&mut self, damage: GzipDamage) {
        match damage {
            GzipDamage::Cut(at) => {
                let cut = self.cut.get_or_insert(Cut {
                    dropped_bytes: 0,
                    line: None,
                    partial_event: false,
                    gzip: None,
                });
                cut.gzip = Some(at);
            }
            trailing @ GzipDamage::Trailing { .. } => self.warnings.push(trailing.describe()),
        }
    }
}

fn read_json<R: Read, V: chrome_json::JsonVocabulary, S: TraceSink>(
    mut reader: TraceReader<R>,
    mut interp: JsonEvents<V>,
    path: &Path,
    format: TimelineFormat,
    sink: &mut S,
) -> Result<TimelineRead, SourceError> {
    let mut top_seen = 0;
    // The members before `traceEvents` (Kineto's run information, devices
    // and clock base) are parsed on the way to the first event and apply
    // to it: it is copied out so that they can be read first.
    let first = match reader.next_event() {
        Ok(Some(ev)) => Some((ev.raw().to_vec(), *ev.fields(), ev.index(), ev.offset())),
        Ok(None) => None,
        Err(e) => return Err(e.into_input_error(path).into()),
    };
    top_seen = feed_top_level(&reader, &mut interp, top_seen, sink);
    if let Some((raw, fields, index, offset)) = &first {
        let ev = Event::from_parts(raw, *fields, *index, *offset);
        interp.feed(&ev, sink).map_err(SourceError::Sink)?;
    }
    while first.is_some() {
        let ev = match reader.next_event() {
            Ok(Some(ev)) => ev,
            Ok(None) => break,
            Err(e) => return Err(e.into_input_error(path).into()),
        };
        interp.feed(&ev, sink).map_err(SourceError::Sink)?;
        if reader.top_level_members().len() > top_seen {
            top_seen = feed_top_level(&reader, &mut interp, top_seen, sink);
        }
    }
    feed_top_level(&reader, &mut interp, top_seen, sink);
    interp.finish(sink).map_err(SourceError::Sink)?;
    let summary = reader.summary();
    if !summary.empty && !summary.has_trace_events && summary.truncation.is_none() {
        return Err(InputError::at_file(path, "not a trace: no traceEvents array").into());
    }
    let warnings = interp.take_warnings();
    let cut = summary.truncation.as_ref().map(|t| Cut {
        dropped_bytes: t.dropped_bytes,
        line: t.line,
        partial_event: t.partial_event,
        gzip: None,
    });
    Ok(TimelineRead {
        format,
        gzipped: false,
        run_info: interp.run_info().cloned(),
        names: interp.names,
        router: interp.router,
        empty: summary.empty,
        cut,
        trailing_data_line: summary.trailing_data.and_then(|(line, _)| line),
        events: summary.events,
        warnings,
    })
}

/// Hands the top-level members read since `seen` to the interpreter.
fn feed_top_level<R: Read, V: chrome_json::JsonVocabulary, S: TraceSink>(
    reader: &TraceReader<R>,
    interp: &mut JsonEvents<V>,
    seen: usize,
    sink: &mut S,
) -> usize {
    let members = reader.top_level_members();
    for (key, value) in &members[seen..] {
        interp.top_level(key, value, sink);
    }
    members.len()
}

fn read_pftrace<R: Read, S: TraceSink>(
    src: R,
    path: &Path,
    names: Names,
    sink: &mut S,
) -> Result<TimelineRead, SourceError> {
    let mut reader = PacketReader::new(src);
    let mut interp = PftraceEvents::new(RankRouter::new(path));
    interp.names = names;
    loop {
        let record = match reader.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(e.into_input_error(path).into()),
        };
        let offset = record.packet_offset();
        let mut packet = Packet::empty();
        record
            .decode_into(&mut packet)
            .map_err(|e| e.into_input_error(path))?;
        interp
            .feed(&packet, offset, sink)
            .map_err(SourceError::Sink)?;
    }
    interp.finish(sink).map_err(SourceError::Sink)?;
    let summary = reader.summary();
    Ok(TimelineRead::of_pftrace(
        interp.names,
        interp.router,
        summary,
    ))
}

/// The interpreter of one file for tools that walk its events themselves
/// (mergetrace's byte-copying merge, whose statistics read the same
/// events through the same rules).
pub enum EventInterpreter {
    Unitrace(JsonEvents<UnitraceVocabulary>),
    Kineto(JsonEvents<KinetoVocabulary>),
}

impl EventInterpreter {
    /// `clock_base`: [`Opened::clock_base`] of the file.
    pub fn new(path: &Path, dialect: JsonDialect, clock_base: Option<Ns>) -> Self {
        match dialect {
            JsonDialect::Unitrace => {
                EventInterpreter::Unitrace(JsonEvents::new(path, UnitraceVocabulary))
            }
            JsonDialect::Kineto => EventInterpreter::Kineto(
                JsonEvents::new(path, KinetoVocabulary::default()).with_clock_offset(clock_base),
            ),
        }
    }

    pub fn feed<S: TraceSink>(&mut self, ev: &Event<'_>, sink: &mut S) -> io::Result<()> {
        match self {
            EventInterpreter::Unitrace(i) => i.feed(ev, sink),
            EventInterpreter::Kineto(i) => i.feed(ev, sink),
        }
    }

    pub fn top_level<S: TraceSink>(&mut self, key: &[u8], value: &[u8], sink: &mut S) {
        match self {
            EventInterpreter::Unitrace(i) => i.top_level(key, value, sink),
            EventInterpreter::Kineto(i) => i.top_level(key, value, sink),
        }
    }

    pub fn finish<S: TraceSink>(&mut self, sink: &mut S) -> io::Result<()> {
        match self {
            EventInterpreter::Unitrace(i) => i.finish(sink),
            EventInterpreter::Kineto(i) => i.finish(sink),
        }
    }

    pub fn names(&self) -> &Names {
        match self {
            EventInterpreter::Unitrace(i) => &i.names,
            EventInterpreter::Kineto(i) => &i.names,
        }
    }

    pub fn router(&self) -> &RankRouter {
        match self {
            EventInterpreter::Unitrace(i) => &i.router,
            EventInterpreter::Kineto(i) => &i.router,
        }
    }

    /// What the read found besides the events, once it is over
    /// ([`EventInterpreter::finish`]): the names, the ranks and the run
    /// information, for the caller's [`TimelineRead`].
    pub fn into_parts(self) -> (Names, RankRouter, Option<RunInfo>) {
        match self {
            EventInterpreter::Unitrace(i) => {
                let info = i.run_info().cloned();
                (i.names, i.router, info)
            }
            EventInterpreter::Kineto(i) => {
                let info = i.run_info().cloned();
                (i.names, i.router, info)
            }
        }
    }

    /// The format it interprets.
    pub fn format(&self) -> TimelineFormat {
        match self {
            EventInterpreter::Unitrace(_) => TimelineFormat::ChromeJson,
            EventInterpreter::Kineto(_) => TimelineFormat::KinetoJson,
        }
    }
}
