//! [`TraceReader`]: the buffer, the
//! top-level state machine around the events (`{"traceEvents": [` ... `]}`
//! or `[...]`), truncation and the [`TraceSummary`]; [`scan`] reads a
//! whole trace.

use std::io::{self, Read};

use super::blocks::ScanKernel;
use super::byte_parser::{
    describe, parse_object, parse_string, parse_value, skip_ws, ws_then, PErr, PResult,
};
use super::error::{TraceError, TraceErrorKind};
use super::event::{Event, EventFields};
use super::token_walk::Structurals;

/// Bytes asked from the source per read, once warmed up.
const CHUNK: usize = 1 << 20;
/// First read size: small inputs (tests, repair of a short file) do not pay
/// for a 1 MiB buffer; the read size doubles on every refill up to CHUNK.
const FIRST_READ: usize = 16 << 10;

/// Default bound on one event (and on any top-level value or gap).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 256 << 20;

/// Which top-level shape a trace has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceForm {
    /// `{"traceEvents": [...]}`
    Object,
    /// `[...]` (Chrome's array form)
    Array,
}

impl TraceForm {
    /// What closes a trace of this form after its last event.
    pub fn closing(self) -> &'static [u8] {
        match self {
            TraceForm::Object => b"\n]\n}\n",
            TraceForm::Array => b"\n]\n",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Start,
    /// Inside the top-level object, before a key (`first`: right after `{`).
    ObjKey {
        first: bool,
    },
    ObjAfterValue,
    /// Inside the event array; `first`: right after `[`; `need`: after `,`.
    Array {
        first: bool,
    },
    ArrayAfterEvent,
    Done,
}

/// Where a truncated trace was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// Bytes kept: the input up to the end of the last complete event (or
    /// up to the `[` when no event is complete); 0 when even the header is
    /// incomplete.
    pub kept_bytes: u64,
    /// Bytes after that point (a partial event, a trailing `,`).
    pub dropped_bytes: u64,
    /// Whether the dropped bytes hold anything but blanks and commas (a
    /// partial event or header) rather than a clean stop between events.
    pub partial_event: bool,
    /// 1-based line of the first dropped byte (`None` when the file read
    /// again to find it is gone).
    pub line: Option<u64>,
    /// The `[` of the event array was read.
    pub array_opened: bool,
}

/// What a finished scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceSummary {
    pub form: Option<TraceForm>,
    pub events: u64,
    pub bytes_read: u64,
    /// The input holds nothing but blanks.
    pub empty: bool,
    /// An object without a `traceEvents` key.
    pub has_trace_events: bool,
    pub truncation: Option<Truncation>,
    /// Non-blank bytes after the top-level value: `(line, offset)`.
    pub trailing_data: Option<(Option<u64>, u64)>,
    /// Offset just after the top-level value (complete traces).
    pub value_end: u64,
}

/// Streaming event reader; see the module documentation.
pub struct TraceReader<R> {
    src: R,
    pub(super) buf: Vec<u8>,
    /// Valid bytes in `buf`.
    pub(super) len: usize,
    /// Parse cursor in `buf`.
    pos: usize,
    /// Bytes before this index may be discarded (end of the last event).
    keep: usize,
    /// `keep` to apply at the next call (the last event is still borrowed).
    pending_keep: Option<usize>,
    /// Absolute offset of `buf[0]`.
    pub(super) base: u64,
    /// How line numbers are found: counted in the discarded bytes, or
    /// looked up in the file when one is needed ([`TraceReader::with_line_lookup`]).
    lines: Lines,
    eof: bool,
    state: State,
    max_event: usize,
    read_size: usize,
    fields: EventFields,
    array_open_end: Option<u64>,
    last_event_end: u64,
    summary: TraceSummary,
    finished: bool,
    structurals: Structurals,
    /// Events the stage-2 walker accepted (the others went through the
    /// byte parser).
    fast_events: u64,
    /// Top-level members other than `traceEvents` (raw key, raw value),
    /// in file order: [`TraceReader::top_level_members`].
    top_level: Vec<TopLevelMember>,
    top_level_bytes: usize,
}

/// Where the reader's line numbers come from.
enum Lines {
    /// Newlines counted in the discarded bytes before `buf[0]`: a stream
    /// that cannot be read again.
    Counted(u64),
    /// The 1-based line of an offset, read from the file again: line
    /// numbers are only needed for an error, a cut or data after the
    /// trace, and counting every byte for them was 2% of a report's time
    /// (docs/benchmarks.md#tracestat). `None` when the file cannot be read.
    Lookup(Box<dyn Fn(u64) -> Option<u64> + Send>),
}

/// The 1-based line of byte `offset` of the file at `path`: one plus the
/// newlines before it; `None` when the file is gone or shorter.
pub fn line_of_offset(path: &std::path::Path, offset: u64) -> Option<u64> {
    let mut file = std::fs::File::open(path).ok()?.take(offset);
    let mut buf = vec![0u8; 1 << 16];
    let (mut lines, mut read) = (1u64, 0u64);
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
                read += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    (read == offset).then_some(lines)
}

/// A top-level member of the trace object: raw key (no quotes), raw value.
pub type TopLevelMember = (Box<[u8]>, Box<[u8]>);

/// Keeps a top-level member ([`TraceReader::top_level_members`]) unless it
/// is too large.
fn keep_top_level((kept, bytes): (&mut Vec<TopLevelMember>, &mut usize), key: &[u8], value: &[u8]) {
    const ONE: usize = 1 << 20;
    const ALL: usize = 4 << 20;
    if value.len() <= ONE && *bytes + value.len() <= ALL {
        *bytes += value.len();
        kept.push((key.into(), value.into()));
    }
}

/// One step of the top-level state machine.
enum Step {
    Continue,
    Event(usize, usize),
    Finished,
}

impl<R: Read> TraceReader<R> {
    pub fn new(src: R) -> Self {
        TraceReader::with_max_event_bytes(src, DEFAULT_MAX_EVENT_BYTES)
    }

    /// A reader that refuses events (or top-level values, or blank gaps)
    /// longer than `max_event` bytes instead of buffering them.
    pub fn with_max_event_bytes(src: R, max_event: usize) -> Self {
        TraceReader::with_kernel(src, max_event, ScanKernel::best())
    }

    /// A reader with a chosen stage-1 kernel ([`ScanKernel::Reference`]:
    /// the byte parser alone); for benchmarks and the differential tests.
    /// Every kernel yields the same events, fields, errors and summary.
    pub fn with_kernel(src: R, max_event: usize, kernel: ScanKernel) -> Self {
        TraceReader {
            src,
            buf: Vec::new(),
            len: 0,
            pos: 0,
            keep: 0,
            pending_keep: None,
            base: 0,
            lines: Lines::Counted(0),
            eof: false,
            state: State::Start,
            max_event: max_event.max(16),
            read_size: FIRST_READ,
            fields: EventFields::default(),
            array_open_end: None,
            last_event_end: 0,
            summary: TraceSummary::default(),
            finished: false,
            structurals: Structurals::new(kernel),
            fast_events: 0,
            top_level: Vec::new(),
            top_level_bytes: 0,
        }
    }

    /// Line numbers by `lookup` (the 1-based line of a byte offset, e.g.
    /// [`line_of_offset`] of the file read) instead of counted as the bytes
    /// go by: for a source that can be read again.
    pub fn with_line_lookup(
        mut self,
        lookup: impl Fn(u64) -> Option<u64> + Send + 'static,
    ) -> Self {
        self.lines = Lines::Lookup(Box::new(lookup));
        self
    }

    /// Bytes consumed from the source so far.
    pub fn bytes_read(&self) -> u64 {
        self.base + self.len as u64
    }

    /// Current buffer capacity (for tests of the memory bound).
    pub fn buffer_capacity(&self) -> usize {
        self.buf.len()
    }

    /// Events so far that the stage-1/stage-2 fast path validated (the rest
    /// went through the byte parser): for tests and benchmarks.
    pub fn fast_path_events(&self) -> u64 {
        self.fast_events
    }

    /// Of [`TraceReader::fast_path_events`], those the direct walk took
    /// (the rest went through the token walker): for tests and benchmarks.
    pub fn direct_walk_events(&self) -> u64 {
        self.structurals.direct_events
    }

    /// Valid after [`TraceReader::next_event`] returned `Ok(None)`.
    /// The members of the top-level object other than `traceEvents` read
    /// so far (raw key without quotes, raw value text), in file order: the
    /// run information some writers put beside the events (Kineto's
    /// `distributedInfo`, docs/formats.md#kineto-json-envelope). Values
    /// over 1 MiB, and any past 4 MiB in all, are validated but not kept.
    pub fn top_level_members(&self) -> &[TopLevelMember] {
        &self.top_level
    }

    pub fn summary(&self) -> &TraceSummary {
        &self.summary
    }

    /// The next event, `Ok(None)` at the end of the trace (complete or
    /// truncated: see [`TraceReader::summary`]).
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>, TraceError> {
        if let Some(k) = self.pending_keep.take() {
            self.keep = k;
        }
        if self.finished {
            return Ok(None);
        }
        loop {
            match self.step() {
                Ok(Step::Continue) => {}
                Ok(Step::Event(start, end)) => {
                    self.pending_keep = Some(end);
                    let index = self.summary.events;
                    self.summary.events += 1;
                    self.last_event_end = self.base + end as u64;
                    return Ok(Some(Event {
                        raw: &self.buf[..self.len][start..end],
                        fields: self.fields,
                        index,
                        offset: self.base + start as u64,
                    }));
                }
                Ok(Step::Finished) => {
                    self.finish();
                    return Ok(None);
                }
                Err(PErr::Incomplete) => {
                    if self.eof {
                        self.finish();
                        return Ok(None);
                    }
                    self.refill()?;
                }
                Err(PErr::Invalid(at, msg)) => {
                    return Err(self.error_at(at, TraceErrorKind::Syntax(msg)))
                }
                Err(PErr::NotObject(at)) => {
                    let index = self.summary.events;
                    return Err(self.error_at(at, TraceErrorKind::EventNotObject { index }));
                }
                Err(PErr::NotJson(at, what)) => {
                    return Err(self.error_at(at, TraceErrorKind::NotJson(what)))
                }
                Err(PErr::NotArray(at)) => {
                    return Err(self.error_at(at, TraceErrorKind::TraceEventsNotArray))
                }
                Err(PErr::Utf8(at)) => return Err(self.error_at(at, TraceErrorKind::InvalidUtf8)),
            }
        }
    }

    fn error_at(&self, at: usize, kind: TraceErrorKind) -> TraceError {
        TraceError {
            kind,
            line: self.line_at(at),
            offset: self.base + at as u64,
        }
    }

    /// The 1-based line of buffer index `at`; `None` only when a looked-up
    /// file can no longer be read.
    fn line_at(&self, at: usize) -> Option<u64> {
        let at = at.min(self.len);
        match &self.lines {
            Lines::Counted(before) => {
                let b = &self.buf[..self.len];
                Some(before + memchr::memchr_iter(b'\n', &b[..at]).count() as u64 + 1)
            }
            Lines::Lookup(lookup) => lookup(self.base + at as u64),
        }
    }

    fn finish(&mut self) {
        self.finished = true;
        self.summary.bytes_read = self.bytes_read();
        match self.state {
            State::Done => {}
            State::Start => {
                // Only blanks (or nothing) were read.
                self.summary.empty = true;
            }
            _ => {
                let kept = if self.summary.events > 0 {
                    self.last_event_end
                } else {
                    self.array_open_end.unwrap_or(0)
                };
                let from = (kept.saturating_sub(self.base) as usize).min(self.len);
                let dropped = &self.buf[..self.len][from..];
                self.summary.truncation = Some(Truncation {
                    kept_bytes: kept,
                    dropped_bytes: self.bytes_read() - kept,
                    partial_event: dropped
                        .iter()
                        .any(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t' | b',')),
                    line: self.line_at(from),
                    array_opened: self.array_open_end.is_some(),
                });
            }
        }
    }

    /// Discards consumed bytes, grows the buffer if one unit does not fit,
    /// and reads more.
    fn refill(&mut self) -> Result<(), TraceError> {
        // Buffer indices change (and the bytes after the end arrive).
        self.structurals.invalidate();
        if self.keep > 0 {
            if let Lines::Counted(before) = &mut self.lines {
                *before += memchr::memchr_iter(b'\n', &self.buf[..self.keep]).count() as u64;
            }
            self.buf.copy_within(self.keep..self.len, 0);
            self.len -= self.keep;
            self.pos -= self.keep;
            self.base += self.keep as u64;
            self.keep = 0;
        }
        if self.len >= self.max_event {
            return Err(self.error_at(
                self.pos,
                TraceErrorKind::TooLong {
                    limit: self.max_event,
                },
            ));
        }
        let want = (self.len + self.read_size.min(self.max_event)).min(self.max_event + 1);
        self.read_size = (self.read_size * 2).min(CHUNK);
        if self.buf.len() < want {
            let new_len = want.max(self.buf.len() * 2).min(self.max_event + 1);
            self.buf.resize(new_len, 0);
        }
        loop {
            match self.src.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.len += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(e)),
            }
        }
    }

    /// The event object at `b[i]` (a `{`): the fast path when it vouches
    /// for it, else the byte parser, which gives the error or asks for
    /// more bytes. Returns the offset after the object; its fields are in
    /// `self.fields`.
    /// (A function of the fields it needs: `b` borrows the reader's buffer.)
    fn event_at(
        structurals: &mut Structurals,
        fields: &mut EventFields,
        fast_events: &mut u64,
        b: &[u8],
        i: usize,
    ) -> PResult<usize> {
        *fields = EventFields::default();
        if let Some(end) = structurals.try_event(b, i, fields) {
            *fast_events += 1;
            return Ok(end);
        }
        structurals.invalidate();
        *fields = EventFields::default();
        parse_object(b, i, 1, Some(fields))
    }

    /// One move of the reader's state machine: an event, a move between
    /// the trace's parts, or `Incomplete` when more bytes are needed.
    fn step(&mut self) -> PResult<Step> {
        let b = &self.buf[..self.len];
        match self.state {
            State::Start => self.step_start(),
            State::ObjKey { first } => self.step_object_key(first),
            State::ObjAfterValue => {
                let (i, c) = ws_then(b, self.pos)?;
                match c {
                    b',' => self.state = State::ObjKey { first: false },
                    b'}' => self.state = State::Done,
                    _ => {
                        return Err(PErr::Invalid(
                            i,
                            format!("expected ',' or '}}', found {}", describe(c)),
                        ))
                    }
                }
                self.pos = i + 1;
                Ok(Step::Continue)
            }
            State::Array { first } => {
                let (i, c) = ws_then(b, self.pos)?;
                if c == b']' {
                    if !first {
                        return Err(PErr::Invalid(i, "comma before ']'".into()));
                    }
                    self.pos = i + 1;
                    self.end_array();
                    return Ok(Step::Continue);
                }
                if c != b'{' {
                    // Distinguish "valid JSON but not an object" from a
                    // syntax error, and a truncated value from both.
                    parse_value(b, i, 1)?;
                    return Err(PErr::NotObject(i));
                }
                let end = Self::event_at(
                    &mut self.structurals,
                    &mut self.fields,
                    &mut self.fast_events,
                    b,
                    i,
                )?;
                self.pos = end;
                self.state = State::ArrayAfterEvent;
                Ok(Step::Event(i, end))
            }
            State::ArrayAfterEvent => {
                // The next event's `{`, when a `,` and blanks lead to it:
                // it is parsed here, not through the `Array` state, which
                // would ask `try_event` a second time for the same event
                // and count the back-off twice. unitrace separates events
                // by `,\n`: that case first, without the blank scan.
                let next = if b.get(self.pos..self.pos + 3) == Some(b",\n{") {
                    self.pos + 2
                } else {
                    let (i, c) = ws_then(b, self.pos)?;
                    match c {
                        b',' => {
                            self.state = State::Array { first: false };
                            self.pos = i + 1;
                            let blanks = b[i + 1..]
                                .iter()
                                .position(|c| !matches!(c, b' ' | b'\n' | b'\r' | b'\t'));
                            match blanks {
                                Some(n) if b[i + 1 + n] == b'{' => i + 1 + n,
                                _ => return Ok(Step::Continue),
                            }
                        }
                        b']' => {
                            self.end_array();
                            self.pos = i + 1;
                            return Ok(Step::Continue);
                        }
                        _ => {
                            return Err(PErr::Invalid(
                                i,
                                format!(
                                    "expected ',' or ']' after an event, found {}",
                                    describe(c)
                                ),
                            ))
                        }
                    }
                };
                let end = Self::event_at(
                    &mut self.structurals,
                    &mut self.fields,
                    &mut self.fast_events,
                    b,
                    next,
                )?;
                self.pos = end;
                self.state = State::ArrayAfterEvent;
                Ok(Step::Event(next, end))
            }
            State::Done => self.step_done(),
        }
    }

    /// Before the trace's first value: a byte-order mark, then `{` (a
    /// trace object) or `[` (a bare event array).
    fn step_start(&mut self) -> PResult<Step> {
        let b = &self.buf[..self.len];
        let mut i = self.pos;
        if self.base == 0 && i == 0 && b.starts_with(b"\xEF\xBB\xBF") {
            i = 3;
        } else if self.base == 0 && i == 0 && !b.is_empty() && b"\xEF\xBB\xBF".starts_with(b) {
            // Only part of the BOM has arrived (a pipe may hand out
            // one or two bytes first): read on before judging it
            // (found by fuzzing, docs/benchmarks.md#fuzzing; the
            // input is fuzz/regressions/trace_json/bom-split-across-reads.json).
            return Err(PErr::Incomplete);
        }
        let i = skip_ws(b, i);
        self.pos = i;
        let Some(&c) = b.get(i) else {
            return Err(PErr::Incomplete);
        };
        match c {
            b'{' => {
                self.summary.form = Some(TraceForm::Object);
                self.state = State::ObjKey { first: true };
            }
            b'[' => {
                self.summary.form = Some(TraceForm::Array);
                self.summary.has_trace_events = true;
                self.array_open_end = Some(self.base + i as u64 + 1);
                self.state = State::Array { first: true };
            }
            _ => return Err(PErr::NotJson(i, describe(c))),
        }
        self.pos = i + 1;
        Ok(Step::Continue)
    }

    /// A key of the trace object (`first`: right after its `{`):
    /// `traceEvents` opens the event array, any other member is kept or
    /// skipped whole.
    fn step_object_key(&mut self, first: bool) -> PResult<Step> {
        let b = &self.buf[..self.len];
        let (i, c) = ws_then(b, self.pos)?;
        if c == b'}' && first {
            self.pos = i + 1;
            self.state = State::Done;
            return Ok(Step::Continue);
        }
        if c != b'"' {
            return Err(PErr::Invalid(
                i,
                format!("expected a key, found {}", describe(c)),
            ));
        }
        let (key_end, _) = parse_string(b, i)?;
        let (k, c) = ws_then(b, key_end)?;
        if c != b':' {
            return Err(PErr::Invalid(
                k,
                format!("expected ':', found {}", describe(c)),
            ));
        }
        let (v, c) = ws_then(b, k + 1)?;
        if &b[i + 1..key_end - 1] == b"traceEvents" {
            if c != b'[' {
                // Make sure the value is valid JSON before calling it
                // "not an array" (a truncated value is truncation).
                parse_value(b, v, 1)?;
                return Err(PErr::NotArray(v));
            }
            self.summary.has_trace_events = true;
            self.array_open_end = Some(self.base + v as u64 + 1);
            self.pos = v + 1;
            self.state = State::Array { first: true };
        } else {
            let end = parse_value(b, v, 1)?;
            keep_top_level(
                (&mut self.top_level, &mut self.top_level_bytes),
                &b[i + 1..key_end - 1],
                &b[v..end],
            );
            self.pos = end;
            self.state = State::ObjAfterValue;
        }
        Ok(Step::Continue)
    }

    /// After the trace's value: only blanks may follow.
    fn step_done(&mut self) -> PResult<Step> {
        let b = &self.buf[..self.len];
        if self.summary.value_end == 0 {
            self.summary.value_end = self.base + self.pos as u64;
        }
        let i = skip_ws(b, self.pos);
        self.pos = i;
        if i < b.len() {
            self.summary.trailing_data = Some((self.line_at(i), self.base + i as u64));
            return Ok(Step::Finished);
        }
        Err(PErr::Incomplete)
    }

    fn end_array(&mut self) {
        self.state = match self.summary.form {
            Some(TraceForm::Object) => State::ObjAfterValue,
            _ => State::Done,
        };
    }
}

/// Reads a whole trace, validating it; returns the summary. Convenience for
/// checks that do not need the events.
pub fn scan<R: Read>(src: R) -> Result<TraceSummary, TraceError> {
    let mut reader = TraceReader::new(src);
    while reader.next_event()?.is_some() {}
    Ok(reader.summary().clone())
}
