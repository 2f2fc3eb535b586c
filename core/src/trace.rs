//! Streaming reader of Chrome/Perfetto trace JSON (docs/formats.md#trace-json).
//!
//! [`TraceReader`] scans a trace once, front to back, through one reusable
//! buffer and yields every element of `traceEvents` as the raw bytes of the
//! source ([`Event::raw`]): events are validated but never re-encoded, so a
//! timestamp like `1719391234567890.250000` keeps its digits. While an event
//! is validated, the spans of its top-level keys `ph`, `name`, `cat`, `pid`,
//! `tid`, `ts`, `dur`, `id` and `args` are recorded, which gives filters and
//! statistics cheap field access without a second parse.
//!
//! Speed (docs/benchmarks.md#the-json-trace-scanner): with the x86 kernels
//! each event is first tried by the direct walk, which checks events in
//! unitrace's own shapes (`"key": value, ` members with short keys, strings,
//! numbers, one nested object) from the bytes, guessing each key and each
//! number's shape from the last event so that the CPU runs ahead on
//! predicted branches. What it is not sure of goes to a token walker over
//! stage-1 bit masks (`trace_blocks`, 64 bytes at a time with AVX2/SSE2),
//! which visits quotes, brackets and the first byte of each number instead
//! of every byte, and reads the usual members (keys of up to 5 bytes)
//! straight from the bytes, dropping their tokens at once. Both accept only
//! what they can vouch for; every other event (escapes, control bytes,
//! syntax errors, deep nesting, the end of the bytes read so far) goes
//! through the byte parser below, so errors, positions and truncation are
//! the byte parser's.
//! [`TraceReader::with_kernel`] picks the kernel ([`ScanKernel::Reference`]:
//! the byte parser alone) for benchmarks and the differential tests
//! (`core/tests/trace_scanner.rs`).
//!
//! Accepted shapes: the object form `{"traceEvents": [...], ...}` (other
//! top-level keys are validated and skipped) and Chrome's bare array form
//! `[...]`.
//!
//! Memory: the buffer only has to hold one event (plus the separator before
//! it), whatever the length of a line; [`TraceReader::with_max_event_bytes`]
//! bounds it (an event longer than that is an error, not an allocation).
//!
//! Truncation: a trace whose writer was killed stops in the middle of the
//! array (docs/formats.md#trace-json-envelope). The reader then ends normally and
//! [`TraceSummary::truncation`] says where the last complete event ended and
//! how many bytes after it were dropped. [`repaired_bytes`] and
//! [`repair_to`] turn such a trace into valid JSON (every complete event
//! kept) without touching the input.

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;

use crate::error::InputError;
pub use crate::trace_blocks::ScanKernel;
use crate::trace_blocks::{number_shape, prefix_xor, string_stops16, Classifier};
use crate::trace_decimal::Decimal;

/// Bytes asked from the source per read, once warmed up.
const CHUNK: usize = 1 << 20;
/// First read size: small inputs (tests, repair of a short file) do not pay
/// for a 1 MiB buffer; the read size doubles on every refill up to CHUNK.
const FIRST_READ: usize = 16 << 10;
/// Default bound on one event (and on any top-level value or gap).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 256 << 20;
/// Nesting depth accepted inside one event.
const MAX_DEPTH: usize = 256;

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

/// What kind of problem made a trace unreadable.
#[derive(Debug)]
pub enum TraceErrorKind {
    Io(io::Error),
    /// The first non-blank byte is neither `{` nor `[`.
    NotJson(String),
    /// Invalid JSON syntax.
    Syntax(String),
    /// An element of `traceEvents` is not an object.
    EventNotObject {
        index: u64,
    },
    InvalidUtf8,
    /// `traceEvents` holds something other than an array.
    TraceEventsNotArray,
    /// One event (or other top-level value) is longer than the limit.
    TooLong {
        limit: usize,
    },
}

/// A trace that cannot be read, with the 1-based line where that was found.
#[derive(Debug)]
pub struct TraceError {
    pub kind: TraceErrorKind,
    pub line: Option<u64>,
    pub offset: u64,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        f.write_str(&self.problem())
    }
}

impl std::error::Error for TraceError {}

impl TraceError {
    fn io(err: io::Error) -> TraceError {
        TraceError {
            kind: TraceErrorKind::Io(err),
            line: None,
            offset: 0,
        }
    }

    /// The problem without the position.
    pub fn problem(&self) -> String {
        match &self.kind {
            TraceErrorKind::Io(e) => e.to_string(),
            TraceErrorKind::NotJson(what) => {
                format!("not a JSON trace: starts with {what}, expected '{{' or '['")
            }
            TraceErrorKind::Syntax(m) => format!("invalid JSON: {m}"),
            TraceErrorKind::EventNotObject { index } => {
                format!("traceEvents element {index} is not a JSON object")
            }
            TraceErrorKind::InvalidUtf8 => "invalid UTF-8 in a string".to_string(),
            TraceErrorKind::TraceEventsNotArray => "traceEvents is not an array".to_string(),
            TraceErrorKind::TooLong { limit } => format!(
                "an event (or top-level value) is longer than {limit} bytes; \
                 refusing to buffer it"
            ),
        }
    }

    /// `FILE[:LINE]: problem`, the error style of every tool.
    pub fn into_input_error(self, path: &Path) -> InputError {
        if let TraceErrorKind::Io(e) = &self.kind {
            return InputError::io(path, e);
        }
        match self.line {
            Some(line) => InputError::at_line(path, line, self.problem()),
            None => InputError::at_file(path, self.problem()),
        }
    }
}

/// A span `start..end` of bytes inside an event's raw text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
    fn is_set(self) -> bool {
        self.end > 0
    }
}

/// Top-level keys whose value spans are recorded while an event is scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Ph,
    Name,
    Cat,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Args,
}

const FIELD_COUNT: usize = 9;

impl Field {
    /// The field a key names. Keys are compared as one little-endian word
    /// with their length (every recorded key has 2 to 4 bytes): one
    /// comparison per candidate instead of a byte-slice match, for the
    /// nine keys of every event (docs/benchmarks.md#the-json-trace-scanner).
    #[inline]
    fn from_key(key: &[u8]) -> Option<Field> {
        let w = match *key {
            [a, b] => u16::from_le_bytes([a, b]) as u64,
            [a, b, c] => u32::from_le_bytes([a, b, c, 0]) as u64,
            [a, b, c, d] => u32::from_le_bytes([a, b, c, d]) as u64,
            _ => return None,
        };
        Field::from_word(w)
    }

    /// The field whose key's bytes, as a little-endian word padded with
    /// zeros, are `w`. Words of different lengths never collide: a shorter
    /// key would need NUL bytes where a longer one has letters, and a raw
    /// NUL (a control byte) makes a key invalid JSON, so an event holding
    /// one is rejected whatever field was guessed.
    #[inline(always)]
    fn from_word(w: u64) -> Option<Field> {
        const fn word(k: &[u8]) -> u64 {
            key_word(k)
        }
        const PH: u64 = word(b"ph");
        const TS: u64 = word(b"ts");
        const ID: u64 = word(b"id");
        const CAT: u64 = word(b"cat");
        const PID: u64 = word(b"pid");
        const TID: u64 = word(b"tid");
        const DUR: u64 = word(b"dur");
        const NAME: u64 = word(b"name");
        const ARGS: u64 = word(b"args");
        Some(match w {
            PH => Field::Ph,
            TS => Field::Ts,
            ID => Field::Id,
            CAT => Field::Cat,
            PID => Field::Pid,
            TID => Field::Tid,
            DUR => Field::Dur,
            NAME => Field::Name,
            ARGS => Field::Args,
            _ => return None,
        })
    }
}

/// A key's bytes as a little-endian word padded with zeros (keys of up to
/// 8 bytes), as [`Field::from_word`] and [`key_slot`] compare them.
const fn key_word(k: &[u8]) -> u64 {
    let mut w = 0u64;
    let mut i = 0;
    while i < k.len() {
        w |= (k[i] as u64) << (8 * i);
        i += 1;
    }
    w
}

/// Value spans (quotes included for strings) of the recorded keys of one
/// event, relative to the event's first byte. The last occurrence of a
/// duplicated key wins, as in most JSON readers.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventFields {
    /// One more than there are fields: the stage-2 walker stores the span
    /// of every member, those of unrecorded keys into the last slot
    /// (never read), instead of branching on the key.
    spans: [Span; FIELD_COUNT + 1],
    /// Bit per field: the string value contains a backslash escape.
    escaped: u16,
}

impl EventFields {
    pub fn span(&self, field: Field) -> Option<Span> {
        let s = self.spans[field as usize];
        s.is_set().then_some(s)
    }
}

/// One element of `traceEvents`: its exact source bytes and field spans.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    raw: &'a [u8],
    fields: EventFields,
    index: u64,
    offset: u64,
}

impl<'a> Event<'a> {
    /// Builds an event from the raw text of one JSON object (already
    /// validated, e.g. taken from a [`TraceReader`] earlier).
    pub fn from_parts(raw: &'a [u8], fields: EventFields, index: u64, offset: u64) -> Self {
        Event {
            raw,
            fields,
            index,
            offset,
        }
    }

    /// The event's source text, from `{` to `}`.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }
    pub fn fields(&self) -> &EventFields {
        &self.fields
    }
    /// 0-based position in `traceEvents`.
    pub fn index(&self) -> u64 {
        self.index
    }
    /// Byte offset of the event's `{` in the input.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Raw value text of a recorded key (strings with their quotes).
    pub fn value(&self, field: Field) -> Option<&'a [u8]> {
        self.fields.span(field).map(|s| &self.raw[s.range()])
    }

    /// The content of a string value without quotes, still escaped; `None`
    /// if the key is missing or its value is not a string.
    pub fn str_raw(&self, field: Field) -> Option<&'a [u8]> {
        let v = self.value(field)?;
        (v.len() >= 2 && v[0] == b'"').then(|| &v[1..v.len() - 1])
    }

    /// A string value, unescaped only when it contains escapes.
    pub fn str(&self, field: Field) -> Option<Cow<'a, str>> {
        let raw = self.str_raw(field)?;
        let escaped = self.fields.escaped & (1 << field as u16) != 0;
        decode_string_content(raw, escaped)
    }

    /// Number text of a numeric value (`None` for strings and others).
    pub fn number_text(&self, field: Field) -> Option<&'a [u8]> {
        let v = self.value(field)?;
        matches!(v.first(), Some(b'-' | b'0'..=b'9')).then_some(v)
    }

    /// Exact decimal value of a numeric field (`ts`, `dur`).
    pub fn decimal(&self, field: Field) -> Option<Decimal> {
        Decimal::parse(self.number_text(field)?)
    }

    /// Integer value (pid, tid, id); also accepts a decimal string, as some
    /// writers quote ids.
    pub fn uint(&self, field: Field) -> Option<u64> {
        let v = self.value(field)?;
        let digits = if v.first() == Some(&b'"') {
            &v[1..v.len() - 1]
        } else {
            v
        };
        parse_u64(digits)
    }

    /// Float value of a numeric field, for statistics only.
    pub fn f64(&self, field: Field) -> Option<f64> {
        std::str::from_utf8(self.number_text(field)?)
            .ok()?
            .parse()
            .ok()
    }
}

/// Parses an unsigned decimal integer (no sign, no fraction).
pub fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    if digits.len() < 20 {
        // At most 19 digits cannot overflow: no checked steps (pid and
        // tid of every event come through here; eight digits at once).
        let (mut v, rest) = match digits.split_first_chunk::<8>() {
            Some((eight, rest)) => (crate::trace_decimal::eight_digits(eight)?, rest),
            None => (0, digits),
        };
        for &c in rest {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + d as u64;
        }
        return Some(v);
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

/// Decodes the content of a JSON string (between the quotes). The content
/// must come from a validated string (escapes well formed, UTF-8 valid).
pub fn decode_string_content(raw: &[u8], escaped: bool) -> Option<Cow<'_, str>> {
    if !escaped {
        return std::str::from_utf8(raw).ok().map(Cow::Borrowed);
    }
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' {
            let next = memchr::memchr(b'\\', &raw[i..]).map_or(raw.len(), |n| i + n);
            out.push_str(std::str::from_utf8(&raw[i..next]).ok()?);
            i = next;
            continue;
        }
        let e = *raw.get(i + 1)?;
        i += 2;
        match e {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let hi = hex4(raw.get(i..i + 4)?)?;
                i += 4;
                let cp = if (0xD800..0xDC00).contains(&hi)
                    && raw.get(i) == Some(&b'\\')
                    && raw.get(i + 1) == Some(&b'u')
                {
                    let lo = hex4(raw.get(i + 2..i + 6)?)?;
                    if (0xDC00..0xE000).contains(&lo) {
                        i += 6;
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    } else {
                        hi
                    }
                } else {
                    hi
                };
                out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
            }
            _ => return None,
        }
    }
    Some(Cow::Owned(out))
}

fn hex4(b: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in b {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

/// Iterates over the members of a validated JSON object text (e.g. the
/// `args` value of an event): yields `(key content, value span)` with the
/// span relative to `object`.
pub fn object_members(object: &[u8]) -> impl Iterator<Item = (&[u8], Span)> + '_ {
    let mut i = 1; // after '{'
    std::iter::from_fn(move || {
        i = skip_ws(object, i);
        if object.get(i) == Some(&b',') {
            i = skip_ws(object, i + 1);
        }
        if object.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = parse_string(object, i).ok()?.0;
        let key = &object[i + 1..key_end - 1];
        i = skip_ws(object, key_end);
        if object.get(i) != Some(&b':') {
            return None;
        }
        let vstart = skip_ws(object, i + 1);
        let vend = parse_value(object, vstart, 1).ok()?;
        i = vend;
        Some((
            key,
            Span {
                start: vstart as u32,
                end: vend as u32,
            },
        ))
    })
}

// ---------------------------------------------------------------------------
// Byte-level validation. Every function works on the bytes read so far and
// either returns the index just after what it parsed, or `Incomplete` when
// it ran into the end of the data (the caller reads more and retries from
// the start of the unit), or `Invalid` with the index of the offending byte.

#[derive(Debug)]
enum PErr {
    Incomplete,
    Invalid(usize, String),
    Utf8(usize),
    /// A `traceEvents` element that is valid JSON but not an object.
    NotObject(usize),
    /// The first byte of the input cannot start a trace.
    NotJson(usize, String),
    /// `traceEvents` is valid JSON but not an array.
    NotArray(usize),
}

type PResult<T> = Result<T, PErr>;

/// Class of each byte inside a string: 0 ordinary, 1 quote, 2 backslash,
/// 3 control character (invalid), 4 non-ASCII (UTF-8 check needed).
static STRING_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = if i < 0x20 {
            3
        } else if i == b'"' as usize {
            1
        } else if i == b'\\' as usize {
            2
        } else if i >= 0x80 {
            4
        } else {
            0
        };
        i += 1;
    }
    t
};

#[inline]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

#[inline]
fn ws_then(b: &[u8], i: usize) -> PResult<(usize, u8)> {
    let i = skip_ws(b, i);
    match b.get(i) {
        Some(&c) => Ok((i, c)),
        None => Err(PErr::Incomplete),
    }
}

fn describe(c: u8) -> String {
    if c.is_ascii_graphic() {
        format!("'{}'", c as char)
    } else {
        format!("byte 0x{c:02x}")
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Bytes of `x` equal to zero marked by their high bit; the lowest mark is
/// exact (a borrow only runs upward from a real zero byte), which is all
/// the caller uses.
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// From `j`, skips the string bytes that need no attention (class 0 of
/// [`STRING_CLASS`], and non-ASCII bytes, noted in `non_ascii` for the
/// UTF-8 check at the closing quote) eight at a time (SWAR), and returns
/// the index of the first quote, backslash or control character, or
/// `b.len()`. Kernel names and arguments make string bodies the bulk of a
/// trace (docs/benchmarks.md#mergetrace), so this loop is the scanner's
/// hottest.
#[inline(always)]
fn skip_plain_string_bytes(b: &[u8], mut j: usize, non_ascii: &mut bool) -> usize {
    while let Some(chunk) = b.get(j..j + 8) {
        let v = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let quote = zero_bytes(v ^ (ONES * b'"' as u64));
        let backslash = zero_bytes(v ^ (ONES * b'\\' as u64));
        // Bytes below 0x20 among the ASCII ones (`& !v` leaves out bytes
        // with the high bit set, which are non-ASCII, not controls).
        let control = v.wrapping_sub(ONES * 0x20) & !v & HIGHS;
        let stop = quote | backslash | control;
        if stop != 0 {
            let at = (stop.trailing_zeros() / 8) as usize;
            // Non-ASCII bytes before the stop; one after it only costs a
            // needless (still correct) UTF-8 check of this string.
            *non_ascii |= v & HIGHS != 0;
            return j + at;
        }
        *non_ascii |= v & HIGHS != 0;
        j += 8;
    }
    while j < b.len() {
        match STRING_CLASS[b[j] as usize] {
            0 => {}
            4 => *non_ascii = true,
            _ => break,
        }
        j += 1;
    }
    j
}

/// From `j`, skips ASCII digits eight at a time (SWAR) and returns the index
/// of the first other byte, or `b.len()`: timestamps and ids, 10 to 20
/// digits each, are most of what is not a string in a trace.
#[inline(always)]
fn skip_digits(b: &[u8], mut j: usize) -> usize {
    while let Some(chunk) = b.get(j..j + 8) {
        let v = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // Digits become 0..=9: their high nibble is 0, and stays 0 after
        // adding 6. A carry out of a byte only starts at a non-digit, so
        // the lowest marked byte is exactly the first non-digit.
        let t = v ^ (ONES * b'0' as u64);
        let non_digit = (t | t.wrapping_add(ONES * 6)) & (ONES * 0xF0);
        if non_digit != 0 {
            return j + (non_digit.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    j
}

/// Parses the string starting at the quote `b[i]`; returns the index after
/// the closing quote and whether it contained escapes.
#[inline]
fn parse_string(b: &[u8], i: usize) -> PResult<(usize, bool)> {
    let mut j = i + 1;
    let mut escaped = false;
    let mut non_ascii = false;
    loop {
        j = skip_plain_string_bytes(b, j, &mut non_ascii);
        let Some(&c) = b.get(j) else {
            return Err(PErr::Incomplete);
        };
        match STRING_CLASS[c as usize] {
            1 => {
                if non_ascii {
                    if let Err(e) = std::str::from_utf8(&b[i + 1..j]) {
                        return Err(PErr::Utf8(i + 1 + e.valid_up_to()));
                    }
                }
                return Ok((j + 1, escaped));
            }
            2 => {
                escaped = true;
                let Some(&e) = b.get(j + 1) else {
                    return Err(PErr::Incomplete);
                };
                match e {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                    b'u' => {
                        for k in 0..4 {
                            match b.get(j + 2 + k) {
                                None => return Err(PErr::Incomplete),
                                Some(h) if h.is_ascii_hexdigit() => {}
                                Some(_) => {
                                    return Err(PErr::Invalid(
                                        j,
                                        "bad \\u escape in a string".into(),
                                    ))
                                }
                            }
                        }
                        j += 6;
                    }
                    _ => return Err(PErr::Invalid(j, "invalid escape in a string".into())),
                }
            }
            3 => return Err(PErr::Invalid(j, "control character inside a string".into())),
            _ => {
                non_ascii = true;
                j += 1;
            }
        }
    }
}

#[inline]
fn parse_number(b: &[u8], i: usize) -> PResult<usize> {
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    let digits = |j: &mut usize| -> PResult<usize> {
        let s = *j;
        *j = skip_digits(b, *j);
        if *j == b.len() {
            return Err(PErr::Incomplete);
        }
        Ok(*j - s)
    };
    match b.get(j) {
        None => return Err(PErr::Incomplete),
        Some(b'0') => {
            j += 1;
            if j == b.len() {
                return Err(PErr::Incomplete);
            }
        }
        Some(b'1'..=b'9') => {
            digits(&mut j)?;
        }
        Some(&c) => return Err(PErr::Invalid(j, format!("bad number at {}", describe(c)))),
    }
    if b[j] == b'.' {
        j += 1;
        if digits(&mut j)? == 0 {
            return Err(PErr::Invalid(j, "number without digits after '.'".into()));
        }
    }
    if b[j] == b'e' || b[j] == b'E' {
        j += 1;
        match b.get(j) {
            None => return Err(PErr::Incomplete),
            Some(b'+' | b'-') => j += 1,
            _ => {}
        }
        if digits(&mut j)? == 0 {
            return Err(PErr::Invalid(j, "number without exponent digits".into()));
        }
    }
    Ok(j)
}

fn parse_literal(b: &[u8], i: usize, lit: &[u8]) -> PResult<usize> {
    let avail = &b[i..b.len().min(i + lit.len())];
    if avail != &lit[..avail.len()] {
        return Err(PErr::Invalid(i, "invalid literal".into()));
    }
    if avail.len() < lit.len() {
        return Err(PErr::Incomplete);
    }
    Ok(i + lit.len())
}

fn parse_value(b: &[u8], i: usize, depth: usize) -> PResult<usize> {
    match b.get(i) {
        None => Err(PErr::Incomplete),
        Some(b'"') => parse_string(b, i).map(|r| r.0),
        Some(b'{') => parse_object(b, i, depth + 1, None),
        Some(b'[') => parse_array(b, i, depth + 1),
        Some(b'-' | b'0'..=b'9') => parse_number(b, i),
        Some(b't') => parse_literal(b, i, b"true"),
        Some(b'f') => parse_literal(b, i, b"false"),
        Some(b'n') => parse_literal(b, i, b"null"),
        Some(&c) => Err(PErr::Invalid(i, format!("unexpected {}", describe(c)))),
    }
}

fn parse_array(b: &[u8], i: usize, depth: usize) -> PResult<usize> {
    if depth > MAX_DEPTH {
        return Err(PErr::Invalid(i, "nesting too deep".into()));
    }
    let (mut j, c) = ws_then(b, i + 1)?;
    if c == b']' {
        return Ok(j + 1);
    }
    loop {
        j = parse_value(b, j, depth)?;
        let (k, c) = ws_then(b, j)?;
        match c {
            b',' => j = ws_then(b, k + 1)?.0,
            b']' => return Ok(k + 1),
            _ => {
                return Err(PErr::Invalid(
                    k,
                    format!("expected ',' or ']', found {}", describe(c)),
                ))
            }
        }
    }
}

/// Parses an object; at depth 1 (an event) records the spans of known keys,
/// relative to `i`.
fn parse_object(
    b: &[u8],
    i: usize,
    depth: usize,
    mut fields: Option<&mut EventFields>,
) -> PResult<usize> {
    if depth > MAX_DEPTH {
        return Err(PErr::Invalid(i, "nesting too deep".into()));
    }
    let (mut j, c) = ws_then(b, i + 1)?;
    if c == b'}' {
        return Ok(j + 1);
    }
    loop {
        if b[j] != b'"' {
            return Err(PErr::Invalid(
                j,
                format!("expected a key, found {}", describe(b[j])),
            ));
        }
        let (key_end, _) = parse_string(b, j)?;
        let (k, c) = ws_then(b, key_end)?;
        if c != b':' {
            return Err(PErr::Invalid(
                k,
                format!("expected ':', found {}", describe(c)),
            ));
        }
        let (vstart, vc) = ws_then(b, k + 1)?;
        let vend = if vc == b'"' {
            let (end, escaped) = parse_string(b, vstart)?;
            if let Some(f) = fields.as_deref_mut() {
                if let Some(field) = Field::from_key(&b[j + 1..key_end - 1]) {
                    record(f, field, i, vstart, end);
                    if escaped {
                        f.escaped |= 1 << field as u16;
                    }
                }
            }
            end
        } else {
            let end = parse_value(b, vstart, depth)?;
            if let Some(f) = fields.as_deref_mut() {
                if let Some(field) = Field::from_key(&b[j + 1..key_end - 1]) {
                    record(f, field, i, vstart, end);
                }
            }
            end
        };
        let (k, c) = ws_then(b, vend)?;
        match c {
            b',' => j = ws_then(b, k + 1)?.0,
            b'}' => return Ok(k + 1),
            _ => {
                return Err(PErr::Invalid(
                    k,
                    format!("expected ',' or '}}', found {}", describe(c)),
                ))
            }
        }
    }
}

#[inline]
fn record(f: &mut EventFields, field: Field, base: usize, start: usize, end: usize) {
    f.spans[field as usize] = Span {
        start: (start - base) as u32,
        end: (end - base) as u32,
    };
    f.escaped &= !(1 << field as u16);
}

// ---------------------------------------------------------------------------
// Stage 2 of the fast path (docs/benchmarks.md#the-json-trace-scanner): the
// masks of `trace_blocks` give, per 64-byte block, the positions of every
// token (structural characters outside strings, every quote, and the first
// byte of each number or literal); the walker below checks the grammar of
// one event token by token, jumping over string bodies, blanks and digit
// runs instead of looking at each byte. Members of the common shape
// (`"ts": 1733400002274071.000000, `) are read from the bytes instead, and
// the tokens those bytes hold are dropped together
// (`Structurals::members`). With the x86 kernels the direct walk below
// (`direct_members`) is tried before it; this walker then takes the events
// of other shapes.
//
// It only ever says "this event is valid, it ends here, these are its
// fields" or "not sure": an event with a backslash, a control byte in a
// string, a syntax error, a nesting deeper than 62, or one that runs past
// the bytes read so far is handed to the byte parser above, which gives the
// exact error, position or `Incomplete`. So errors and truncation behave as
// before by construction; the differential tests check that accepted events
// are the byte parser's (same end, same field spans).

/// Bytes that end a number or literal: blanks, quotes and the bytes of the
/// structural mask. Anything else after a number (`1x`, `1.5é`) means the
/// run of scalar bytes is not one valid scalar: not sure, byte parser.
static ENDS_SCALAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'"')
            || (c < 0x80 && matches!(c | 0x20, b'{' | b'}' | b':' | b','));
        i += 1;
    }
    t
};

/// Stage-1 state of the block the walker is in, kept across the events of
/// one buffer: consecutive events share blocks, and the string state at the
/// start of the next event is known (outside, after a complete event and
/// the `,` and blanks the top-level loop checked).
struct Structurals {
    classify: Option<Classifier>,
    /// Buffer index of the cached block's first byte; `usize::MAX`: none.
    base: usize,
    /// Token bits of the cached block.
    tokens: u64,
    /// Bits the walker cannot vouch for: backslashes, control bytes inside
    /// strings.
    bad: u64,
    non_ascii: u64,
    /// All ones when the byte after the cached block is inside a string.
    string_carry: u64,
    /// 1 when the cached block's last byte belongs to a number or literal.
    scalar_carry: u64,
    /// Fast-path misses in a row, and events still to leave to the byte
    /// parser before trying again: a trace whose every event holds an
    /// escape would otherwise pay for a failed walk on each (+52%
    /// instructions when measured); backing off 1, 3, ... 63 events keeps
    /// that under 2% while a lone miss costs one event.
    misses: u32,
    skip: u32,
    /// The direct walk ([`direct_members`]) is tried first: with the x86
    /// kernels (SSE2, AVX2; the portable kernel keeps the token walker
    /// alone, which the differential tests then cover on its own).
    direct: bool,
    /// The same back-off as `misses`/`skip`, for direct-walk misses (which
    /// then try the token walker): a trace of another shape pays for at
    /// most one failed direct walk in 64 events.
    direct_misses: u32,
    direct_skip: u32,
    /// Events the direct walk accepted (for tests and benchmarks).
    direct_events: u64,
    /// For each member of an event, the key that followed it last time
    /// (index: the member's slot, see [`KeyGuess`]): traces repeat a few
    /// key orders, so the next key usually costs one masked compare.
    next_key: [KeyGuess; KEY_SLOTS],
    /// The direct walk's guesses, kept apart from `next_key`: its key
    /// guesses are only made of keys it checked byte by byte (the token
    /// walker's may hold bytes that only its stage-1 masks reject).
    direct_guesses: DirectGuesses,
}

/// Slots of [`Structurals::next_key`]: one per recorded field, one for any
/// other key, one for the start of an event.
const OTHER_KEY: usize = FIELD_COUNT;
const FIRST_KEY: usize = FIELD_COUNT + 1;
const KEY_SLOTS: usize = FIELD_COUNT + 2;
/// The direct walk's slots: those above and one for the first key of an
/// object inside the event.
const NESTED_FIRST_KEY: usize = KEY_SLOTS;
const DIRECT_KEY_SLOTS: usize = KEY_SLOTS + 1;

/// A short key as it looks in the bytes: `"key":` in the low `len + 3`
/// bytes of a little-endian word (`mask` selects them), and the slot of
/// its value span in [`EventFields`]. The default matches nothing (no
/// word ANDed with a zero mask is 1).
#[derive(Clone, Copy)]
struct KeyGuess {
    word: u64,
    mask: u64,
    len: usize,
    slot: usize,
}

impl Default for KeyGuess {
    fn default() -> Self {
        KeyGuess {
            word: 1,
            mask: 0,
            len: 0,
            slot: OTHER_KEY,
        }
    }
}

/// Per-event walking state: the unread tokens of the current block, and
/// what was seen of the event in earlier blocks.
struct Walk {
    tokens: u64,
    /// `bad` bits of the current block from the event's start on.
    bad: u64,
    non_ascii: u64,
    saw_non_ascii: bool,
}

impl Structurals {
    fn new(kernel: ScanKernel) -> Self {
        Structurals {
            classify: kernel.classifier(),
            base: usize::MAX,
            tokens: 0,
            bad: 0,
            non_ascii: 0,
            string_carry: 0,
            scalar_carry: 0,
            misses: 0,
            skip: 0,
            direct: matches!(kernel, ScanKernel::Sse2 | ScanKernel::Avx2),
            direct_misses: 0,
            direct_skip: 0,
            direct_events: 0,
            next_key: [KeyGuess::default(); KEY_SLOTS],
            direct_guesses: DirectGuesses::default(),
        }
    }

    /// The direct walk, then [`Structurals::event`], each with the
    /// back-off above.
    #[inline]
    fn try_event(&mut self, b: &[u8], i: usize, fields: &mut EventFields) -> Option<usize> {
        if self.direct {
            if self.direct_skip > 0 {
                self.direct_skip -= 1;
            } else if let Some(end) = direct_members::<true>(&mut self.direct_guesses, b, i, fields)
            {
                self.direct_misses = 0;
                self.direct_events += 1;
                return Some(end);
            } else {
                // Spans of the members read before the miss.
                *fields = EventFields::default();
                self.direct_misses = (self.direct_misses + 1).min(6);
                self.direct_skip = (1 << self.direct_misses) - 1;
            }
        }
        if self.skip > 0 {
            self.skip -= 1;
            self.invalidate();
            return None;
        }
        match self.event(b, i, fields) {
            Some(end) => {
                self.misses = 0;
                Some(end)
            }
            None => {
                self.invalidate();
                self.misses = (self.misses + 1).min(6);
                self.skip = (1 << self.misses) - 1;
                None
            }
        }
    }

    fn invalidate(&mut self) {
        self.base = usize::MAX;
    }

    /// Classifies the 64 bytes at `base` (blanks past the end of `b`, which
    /// yield no token) and derives the token bits from the carried state.
    #[inline(always)]
    fn load(&mut self, classify: Classifier, b: &[u8], base: usize) {
        let m = match b.get(base..base + 64) {
            Some(block) => classify(block.try_into().expect("64 bytes")),
            None => {
                let mut padded = [b' '; 64];
                let rest = &b[base..];
                padded[..rest.len()].copy_from_slice(rest);
                classify(&padded)
            }
        };
        // With no backslash in the event (else it is rejected), every quote
        // opens or closes a string: 1 from an opening quote up to its
        // closing quote.
        let in_string = prefix_xor(m.quote) ^ self.string_carry;
        self.string_carry = ((in_string as i64) >> 63) as u64;
        let scalar = !in_string & !m.quote & !m.whitespace & !m.structural;
        let scalar_start = scalar & !((scalar << 1) | self.scalar_carry);
        self.scalar_carry = scalar >> 63;
        self.tokens = (m.structural & !in_string) | m.quote | scalar_start;
        self.bad = m.backslash | (m.control & in_string);
        self.non_ascii = m.non_ascii;
        self.base = base;
    }

    /// The next token's position, loading blocks as needed; `None` when the
    /// bytes read so far end first, or a block left behind held a byte the
    /// walker cannot vouch for.
    #[inline(always)]
    fn next(&mut self, w: &mut Walk, classify: Classifier, b: &[u8]) -> Option<usize> {
        if w.tokens == 0 {
            self.advance(w, classify, b)?;
        }
        let p = self.base + w.tokens.trailing_zeros() as usize;
        w.tokens &= w.tokens - 1;
        Some(p)
    }

    #[inline(never)]
    fn advance(&mut self, w: &mut Walk, classify: Classifier, b: &[u8]) -> Option<()> {
        while w.tokens == 0 {
            self.next_block(w, classify, b)?;
        }
        Some(())
    }

    /// Leaves the current block for the next one: `None` when the block
    /// held a byte the walker cannot vouch for, or the bytes read so far
    /// end.
    #[inline(always)]
    fn next_block(&mut self, w: &mut Walk, classify: Classifier, b: &[u8]) -> Option<()> {
        if w.bad != 0 {
            return None;
        }
        w.saw_non_ascii |= w.non_ascii != 0;
        let next = self.base + 64;
        if next >= b.len() {
            return None;
        }
        self.load(classify, b, next);
        w.tokens = self.tokens;
        w.bad = self.bad;
        w.non_ascii = self.non_ascii;
        Some(())
    }

    /// Consumes every token at or before `pos` at once, as if each had
    /// been taken by [`Structurals::next`] (the block of `pos` becomes the
    /// current one). The callers have read the bytes up to `pos` themselves
    /// and know which tokens stage 1 put there (e.g. the closing quote and
    /// the colon of `"name": `); `pos` is past the last token taken.
    #[inline(always)]
    fn consume_through(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        pos: usize,
    ) -> Option<()> {
        let d = pos - self.base;
        if d < 64 {
            w.tokens &= (u64::MAX << d) << 1;
            Some(())
        } else {
            self.consume_across(w, classify, b, pos)
        }
    }

    #[inline(never)]
    fn consume_across(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        pos: usize,
    ) -> Option<()> {
        while pos - self.base >= 64 {
            self.next_block(w, classify, b)?;
        }
        w.tokens &= (u64::MAX << (pos - self.base)) << 1;
        Some(())
    }

    /// Validates the event whose `{` is `b[i]` and records its fields;
    /// returns the index after its `}`, or `None` (not sure: ask the byte
    /// parser). The members are walked by [`Structurals::members`].
    fn event(&mut self, b: &[u8], i: usize, fields: &mut EventFields) -> Option<usize> {
        let classify = self.classify?;
        if !(self.base <= i && i - self.base < 64) {
            self.string_carry = 0;
            self.scalar_carry = 0;
            self.load(classify, b, i);
        }
        let at = i - self.base;
        // The `{` must be the first token (the string state is right).
        if self.tokens >> at & 1 == 0 {
            return None;
        }
        let from = !0u64 << at;
        let mut w = Walk {
            tokens: self.tokens & from & !(1 << at),
            bad: self.bad & from,
            non_ascii: self.non_ascii & from,
            saw_non_ascii: false,
        };
        let end = self.members::<true>(&mut w, classify, b, i, 1, fields)?;
        // The bytes of the last block up to the closing brace.
        let upto = u64::MAX >> (63 - (end - 1 - self.base));
        if w.bad & upto != 0 {
            return None;
        }
        if (w.saw_non_ascii || w.non_ascii & upto != 0) && std::str::from_utf8(&b[i..end]).is_err()
        {
            return None;
        }
        Some(end)
    }

    /// The members of the object whose `{` is `b[open]` (already taken; the
    /// object is at `depth`), walked in grammar order (key, colon, value,
    /// separator); returns the index after its `}`. `TOP`: the object is
    /// the event, whose field spans are recorded (relative to `open`).
    ///
    /// Most members of a trace look like `"ts": 1733400002274071.000000, `
    /// or `"name": "dep", `: a short key, one blank, a number or a string,
    /// then `, ` and the next key's quote. Those are read from the bytes:
    /// the key with its quotes and colon as one 8-byte word
    /// ([`short_key`]), the separator and the next quote as three bytes;
    /// the tokens stage 1 put there (which those bytes determine) are then
    /// consumed at once ([`Structurals::consume_through`]) instead of one by
    /// one (docs/benchmarks.md#the-json-trace-scanner). Every other shape
    /// (long keys, other blanks, containers, literals) takes the token by
    /// token walk for that member.
    #[inline(always)]
    fn members<const TOP: bool>(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        open: usize,
        depth: u32,
        fields: &mut EventFields,
    ) -> Option<usize> {
        let mut p = self.next(w, classify, b)?;
        if b[p] == b'}' {
            return Some(p + 1);
        }
        let mut prev = FIRST_KEY;
        loop {
            // `b[p]`, the token taken last, must open the key.
            if b[p] != b'"' {
                return None;
            }
            let word = b
                .get(p..p + 8)
                .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")));
            // For a key of up to 5 bytes, the closing quote is at
            // p + 1 + len and the colon right after it; their tokens are
            // consumed with the value's.
            let guess = self.next_key[prev];
            let key = match word {
                Some(word) if TOP && word & guess.mask == guess.word => {
                    Some((guess.slot, guess.len))
                }
                Some(word) => match short_key(word) {
                    Some((len, key)) if TOP => {
                        let slot = Field::from_word(key).map_or(OTHER_KEY, |f| f as usize);
                        let mask = u64::MAX >> (8 * (5 - len));
                        self.next_key[prev] = KeyGuess {
                            word: word & mask,
                            mask,
                            len,
                            slot,
                        };
                        Some((slot, len))
                    }
                    Some((len, _)) => Some((OTHER_KEY, len)),
                    None => None,
                },
                None => None,
            };
            let (slot, colon) = match key {
                Some((slot, len)) => (slot, p + len + 2),
                None => {
                    let close = self.next(w, classify, b)?;
                    let slot = if TOP {
                        Field::from_key(&b[p + 1..close]).map_or(OTHER_KEY, |f| f as usize)
                    } else {
                        OTHER_KEY
                    };
                    let colon = self.next(w, classify, b)?;
                    if b[colon] != b':' {
                        return None;
                    }
                    (slot, colon)
                }
            };
            prev = slot;
            // One blank after the colon is looked at here; more, or another
            // kind of value, go the token way.
            let mut v = colon + 1;
            if b.get(v) == Some(&b' ') {
                v += 1;
            }
            let vend = match b.get(v) {
                Some(b'"') => {
                    // Between the colon and this quote there are no tokens
                    // (at most one blank).
                    self.consume_through(w, classify, b, v)?;
                    self.next(w, classify, b)? + 1
                }
                // A blank or the colon precede `b[v]`: it starts a scalar,
                // whose one token is consumed with the separator.
                Some(b'-' | b'0'..=b'9') => scalar_end(b, fast_number(b, v)?)?,
                _ => {
                    self.consume_through(w, classify, b, colon)?;
                    v = self.next(w, classify, b)?;
                    self.value(w, classify, b, v, depth + 1)?
                }
            };
            if TOP {
                // No escape in an event the walker accepts: the `escaped`
                // bits stay clear.
                fields.spans[slot] = Span {
                    start: (v - open) as u32,
                    end: (vend - open) as u32,
                };
            }
            match self.separator(w, classify, b, vend)? {
                After::Member(next) => p = next,
                After::End(end) => return Some(end),
            }
        }
    }

    /// After a member's value, which ends at `vend`: its tokens are
    /// consumed up to the value's first one at most. Takes the `,` or `}`
    /// and, after a `,`, the next token (checked by the caller).
    #[inline(always)]
    fn separator(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        vend: usize,
    ) -> Option<After> {
        // `b[vend]`, right after a value, is outside any string: a `,` or
        // `}` there is the next token, and after `, ` a quote is the one
        // after it.
        if let Some(&[b',', b' ', b'"']) = b.get(vend..vend + 3) {
            self.consume_through(w, classify, b, vend + 2)?;
            return Some(After::Member(vend + 2));
        }
        match b.get(vend) {
            Some(b',') => {
                self.consume_through(w, classify, b, vend)?;
                Some(After::Member(self.next(w, classify, b)?))
            }
            Some(b'}') => {
                self.consume_through(w, classify, b, vend)?;
                Some(After::End(vend + 1))
            }
            _ => {
                self.consume_through(w, classify, b, vend - 1)?;
                let sep = self.next(w, classify, b)?;
                match b[sep] {
                    b',' => Some(After::Member(self.next(w, classify, b)?)),
                    b'}' => Some(After::End(sep + 1)),
                    _ => None,
                }
            }
        }
    }

    /// Validates the value whose first token is `b[v]` (a container opened
    /// there would be at `depth`); returns the index after it.
    #[inline(always)]
    fn value(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        v: usize,
        depth: u32,
    ) -> Option<usize> {
        match b[v] {
            b'"' => Some(self.next(w, classify, b)? + 1),
            b'-' | b'0'..=b'9' => scalar_end(b, fast_number(b, v)?),
            b'{' | b'[' => self.container(w, classify, b, v, depth),
            b't' => literal_end(b, v, b"true"),
            b'f' => literal_end(b, v, b"false"),
            b'n' => literal_end(b, v, b"null"),
            _ => None,
        }
    }

    /// An object or array below the event's level (recursive: depth is
    /// bounded, deeper nesting goes to the byte parser).
    #[inline(never)]
    fn container(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        open: usize,
        depth: u32,
    ) -> Option<usize> {
        if depth > 64 {
            return None;
        }
        if b[open] == b'{' {
            // Nested keys are not recorded: `TOP` false never touches this.
            let mut unused = EventFields::default();
            return self.members::<false>(w, classify, b, open, depth, &mut unused);
        }
        let mut p = self.next(w, classify, b)?;
        if b[p] == b']' {
            return Some(p + 1);
        }
        loop {
            self.value(w, classify, b, p, depth + 1)?;
            let sep = self.next(w, classify, b)?;
            match b[sep] {
                b',' => p = self.next(w, classify, b)?,
                b']' => return Some(sep + 1),
                _ => return None,
            }
        }
    }
}

/// What follows a member's value: the next key's opening quote (taken,
/// still to be checked), or the index after the object's `}`.
enum After {
    Member(usize),
    End(usize),
}

/// Reads `"key":` from the 8 bytes at a key's opening quote (little-endian
/// word, the quote in the low byte) when the key has at most 5 bytes:
/// returns its length and its bytes as a word padded with zeros (see
/// [`Field::from_word`]). The closing quote is the first quote after the
/// opening one, as for stage 1 (a backslash anywhere makes the walker
/// reject the event).
#[inline(always)]
fn short_key(word: u64) -> Option<(usize, u64)> {
    // Quotes become zero bytes; the opening quote's byte is set to 0xFF so
    // that no borrow runs from it and the lowest mark is exact.
    let quotes = zero_bytes((word ^ (ONES * b'"' as u64)) | 0xFF);
    let close = (quotes.trailing_zeros() / 8) as usize; // 8: none
    if close > 6 || (word >> (8 * (close + 1))) as u8 != b':' {
        return None;
    }
    let len = close - 1;
    Some((len, (word >> 8) & ((1u64 << (8 * len)) - 1)))
}

/// The end of the number at `b[i]` in the shapes traces use (`-`, integer
/// part, optional fraction); anything else (an exponent, a bad number, the
/// end of the bytes read) is left to the byte parser.
#[inline(always)]
fn fast_number(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + (b[i] == b'-') as usize;
    match *b.get(j)? {
        b'0' => j += 1,
        b'1'..=b'9' => j = skip_digits(b, j + 1),
        _ => return None,
    }
    if *b.get(j)? == b'.' {
        let k = skip_digits(b, j + 1);
        if k == j + 1 {
            return None;
        }
        j = k;
    }
    Some(j)
}

/// `end` if a scalar may end there (see [`ENDS_SCALAR`]).
#[inline(always)]
fn scalar_end(b: &[u8], end: usize) -> Option<usize> {
    ENDS_SCALAR[*b.get(end)? as usize].then_some(end)
}

#[inline(always)]
fn literal_end(b: &[u8], i: usize, lit: &[u8]) -> Option<usize> {
    if b.get(i..i + lit.len())? != lit {
        return None;
    }
    scalar_end(b, i + lit.len())
}

// ---------------------------------------------------------------------------
// The direct walk (docs/benchmarks.md#the-json-trace-scanner, fourth step):
// events written the way unitrace writes them, every member
// `"key": value` with a key of up to 5 bytes, at most one blank after the
// colon, a string, a number or (in the event) an object of such members as
// value, and `, "` or `}` after it, are checked from the bytes alone,
// without stage 1: the key (with the blank after it) compared as one
// 8-byte word with the one that followed the previous key last time, a
// number's digit and dot bits (32-byte SSE2 window) with the last number
// of its slot, a string's end from 16-byte SSE2 compares; on a miss, the
// key's field comes from a perfect hash of its word and the number's
// length from its digit bits (see `DirectGuesses` for why guesses). Every
// branch it takes depends on the shape of the member, not on where 64-byte
// blocks begin, so it runs without the block-crossing branch misses of the
// token walk; anything else (other blanks, arrays, literals, exponents,
// escapes, control bytes, long keys, the end of the bytes read) makes it
// answer "not sure", and the token walker and then the byte parser take
// the event as before.

/// Multiplier of the perfect hash of the recorded keys' words (top 4 bits
/// of the product): the nine words land in nine different buckets, which
/// building [`KEY_TABLE`] checks at compile time.
const KEY_HASH: u64 = 0xb9d1_79e0_6c0f_d4f5;

/// Per bucket of [`KEY_HASH`]: the key word that belongs there and its
/// slot in [`EventFields`]; empty buckets hold word 0 (the key `""`) with
/// the spare slot, so every word maps to its field or to the spare slot.
static KEY_TABLE: [(u64, u8); 16] = {
    let keys: [(&[u8], Field); FIELD_COUNT] = [
        (b"ph", Field::Ph),
        (b"name", Field::Name),
        (b"cat", Field::Cat),
        (b"pid", Field::Pid),
        (b"tid", Field::Tid),
        (b"ts", Field::Ts),
        (b"dur", Field::Dur),
        (b"id", Field::Id),
        (b"args", Field::Args),
    ];
    let mut t = [(0u64, OTHER_KEY as u8); 16];
    let mut i = 0;
    while i < keys.len() {
        let w = key_word(keys[i].0);
        let h = (w.wrapping_mul(KEY_HASH) >> 60) as usize;
        assert!(t[h].1 as usize == OTHER_KEY, "two keys in one bucket");
        t[h] = (w, keys[i].1 as u8);
        i += 1;
    }
    t
};

/// The [`EventFields`] slot of the key whose word (see [`short_key`]) is
/// `key`: one multiply, one load, one compare, no branch on the key.
#[inline(always)]
fn key_slot(key: u64) -> usize {
    let (word, slot) = KEY_TABLE[(key.wrapping_mul(KEY_HASH) >> 60) as usize];
    if word == key {
        slot as usize
    } else {
        OTHER_KEY
    }
}

/// What the direct walk learnt of the trace's shapes: per slot (see
/// [`Structurals::next_key`]), the key that followed it last time and the
/// shape of its last number. A hit is one compare and a predicted branch,
/// after which the CPU runs ahead with the guessed length while the
/// compare is checked: the position of each member depends on the
/// previous one's length, so computing the lengths from the bytes (a
/// dozen dependent instructions per key and per number) made the walk one
/// long dependency chain (docs/benchmarks.md#the-json-trace-scanner).
#[derive(Clone, Copy)]
struct DirectGuesses {
    keys: [DirectKey; DIRECT_KEY_SLOTS],
    numbers: [NumberGuess; DIRECT_KEY_SLOTS],
}

impl Default for DirectGuesses {
    fn default() -> Self {
        DirectGuesses {
            keys: [DirectKey::default(); DIRECT_KEY_SLOTS],
            numbers: [NumberGuess::default(); DIRECT_KEY_SLOTS],
        }
    }
}

/// A key as the direct walk saw it: `"key":` and the blank after it when
/// there is one, in the low `value_at` bytes of a little-endian word
/// (`mask` selects them), and the slot of its value span. Only keys the
/// walk checked byte by byte become guesses. The default matches nothing.
#[derive(Clone, Copy)]
struct DirectKey {
    word: u64,
    mask: u64,
    value_at: usize,
    slot: usize,
}

impl Default for DirectKey {
    fn default() -> Self {
        DirectKey {
            word: 1,
            mask: 0,
            value_at: 0,
            slot: OTHER_KEY,
        }
    }
}

/// The last number of a slot: its [`number_shape`] bits over its `len`
/// bytes and the byte after them, the index of its first digit, and
/// whether its integer part has more than one digit (then a leading `0` is
/// invalid). A number with the same shape bits is valid and as long. The
/// default matches nothing (a masked shape has no bit past the compared
/// ones).
#[derive(Clone, Copy)]
struct NumberGuess {
    shape: u64,
    len: usize,
    lead: usize,
    multi: bool,
}

impl Default for NumberGuess {
    fn default() -> Self {
        NumberGuess {
            shape: u64::MAX,
            len: 0,
            lead: 0,
            multi: false,
        }
    }
}

/// The members of the object whose `{` is `b[open]`, in the shapes above;
/// returns the index after its `}`, or `None` (not sure). `TOP`: the
/// object is the event, whose spans are recorded (relative to `open`); an
/// object value inside it is walked the same way, one level only.
#[inline(always)]
fn direct_members<const TOP: bool>(
    guesses: &mut DirectGuesses,
    b: &[u8],
    open: usize,
    fields: &mut EventFields,
) -> Option<usize> {
    let mut p = open + 1;
    let mut prev = if TOP { FIRST_KEY } else { NESTED_FIRST_KEY };
    loop {
        let word = u64::from_le_bytes(b.get(p..p + 8)?.try_into().expect("8 bytes"));
        let guess = guesses.keys[prev];
        let (slot, v) = if word & guess.mask == guess.word {
            (guess.slot, p + guess.value_at)
        } else {
            let (slot, value_at) = direct_key_miss(&mut guesses.keys[prev], b, p, word)?;
            (slot, p + value_at)
        };
        prev = slot;
        let vend = match *b.get(v)? {
            b'"' => direct_string_end(b, v)?,
            b'-' | b'0'..=b'9' => {
                let w: &[u8; 32] = b.get(v..v + 32)?.try_into().expect("32 bytes");
                let shape = number_shape(w);
                let g = guesses.numbers[slot];
                // The number's bytes and the one after it (no digit, no
                // `.`: the number ends there).
                let len_bits = (2u64 << g.len) - 1;
                if shape & (len_bits | len_bits << 32) == g.shape && !(g.multi && w[g.lead] == b'0')
                {
                    v + g.len
                } else {
                    v + direct_number_miss(&mut guesses.numbers[slot], w, shape)?
                }
            }
            b'{' if TOP => direct_members::<false>(guesses, b, v, fields)?,
            _ => return None,
        };
        if TOP {
            // No escape in an accepted event: the `escaped` bits stay clear.
            fields.spans[slot] = Span {
                start: (v - open) as u32,
                end: (vend - open) as u32,
            };
        }
        match *b.get(vend..vend + 3)? {
            [b',', b' ', b'"'] => p = vend + 2,
            [b'}', _, _] => return Some(vend + 1),
            _ => return None,
        }
    }
}

/// The key at `b[p]` (its first 8 bytes are `word`) when the guess missed:
/// its slot and the offset of its value (after the colon and at most one
/// blank), read from the bytes; the guess becomes this key when it fits in
/// a word. `None`: not a short plain key.
#[cold]
#[inline(never)]
fn direct_key_miss(guess: &mut DirectKey, b: &[u8], p: usize, word: u64) -> Option<(usize, usize)> {
    if word as u8 != b'"' {
        return None;
    }
    // `short_key` checks the closing quote and the colon after it.
    let (len, key) = short_key(word)?;
    let slot = key_slot(key);
    // No escape, control or non-ASCII byte in the key (those take the
    // other walks). Checked for every key: `"ph\0"` has the word of `"ph"`.
    if !key.to_le_bytes()[..len]
        .iter()
        .all(|&c| (0x20..0x80).contains(&c) && c != b'\\')
    {
        return None;
    }
    let mut value_at = len + 3;
    if *b.get(p + value_at)? == b' ' {
        value_at += 1;
    }
    if value_at <= 8 {
        let mask = u64::MAX >> (8 * (8 - value_at));
        *guess = DirectKey {
            word: word & mask,
            mask,
            value_at,
            slot,
        };
    }
    Some((slot, value_at))
}

/// The length of the number at the start of `w` (whose [`number_shape`] is
/// `shape`) when its slot's guess missed, which becomes the guess.
#[cold]
#[inline(never)]
fn direct_number_miss(guess: &mut NumberGuess, w: &[u8; 32], shape: u64) -> Option<usize> {
    let len = number_len(w, shape)?;
    let lead = (w[0] == b'-') as usize;
    let len_bits = (2u64 << len) - 1;
    *guess = NumberGuess {
        shape: shape & (len_bits | len_bits << 32),
        len,
        lead,
        multi: (shape >> lead) & 3 == 3,
    };
    Some(len)
}

/// The index after the closing quote of the string whose opening quote is
/// `b[v]`, read 16 bytes at a time; `None` at a backslash or control byte
/// before it, invalid UTF-8 inside it, or the end of the bytes read.
#[inline(always)]
fn direct_string_end(b: &[u8], v: usize) -> Option<usize> {
    let mut p = v + 1;
    let mut non_ascii = 0u32;
    loop {
        let s = string_stops16(b.get(p..p + 16)?.try_into().expect("16 bytes"));
        if s.quote != 0 {
            // The bytes before the first quote.
            let body = (s.quote & s.quote.wrapping_neg()) - 1;
            if s.bad & body != 0 {
                return None;
            }
            non_ascii |= s.non_ascii & body;
            let close = p + s.quote.trailing_zeros() as usize;
            if non_ascii != 0 && std::str::from_utf8(&b[v + 1..close]).is_err() {
                return None;
            }
            return Some(close + 1);
        }
        if s.bad != 0 {
            return None;
        }
        non_ascii |= s.non_ascii;
        p += 16;
    }
}

/// [`fast_number`] for the number at the start of `w`, from its
/// [`number_shape`]: the lengths of the integer and fraction digit runs
/// are trailing-zero counts, with no loop. `None` also when the number
/// (and the byte after it) does not end inside the 32 bytes; the caller
/// checks the byte after it.
#[inline(always)]
fn number_len(w: &[u8; 32], shape: u64) -> Option<usize> {
    let digits = shape & 0xFFFF_FFFF;
    let first = (w[0] == b'-') as usize;
    // Digits from `first` on (bits past 32 are clear, so at most 32).
    let run = (!(digits >> first)).trailing_zeros() as usize;
    // A leading 0 is the whole integer part (a digit after it then fails
    // the caller's check of the byte after the number).
    let int_len = if w[first] == b'0' { run.min(1) } else { run };
    if int_len == 0 {
        return None;
    }
    let mut j = first + int_len;
    if j >= 32 {
        return None;
    }
    if w[j] == b'.' {
        let frac = (!(digits >> (j + 1))).trailing_zeros() as usize;
        if frac == 0 {
            return None;
        }
        j += 1 + frac;
        if j >= 32 {
            return None;
        }
    }
    Some(j)
}

// ---------------------------------------------------------------------------

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
    /// 1-based line of the first dropped byte.
    pub line: u64,
    /// The `[` of the event array was read.
    pub array_opened: bool,
}

/// What a finished scan found.
#[derive(Debug, Clone, Default)]
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
    pub trailing_data: Option<(u64, u64)>,
    /// Offset just after the top-level value (complete traces).
    pub value_end: u64,
}

/// Streaming event reader; see the module documentation.
pub struct TraceReader<R> {
    src: R,
    buf: Vec<u8>,
    /// The whole input when it is a mapped file ([`TraceReader::open_file`]):
    /// then `buf` stays empty, `base` stays 0 and `len` is the end of the
    /// bytes the parser may look at (see [`TraceReader::refill`]).
    map: Option<Arc<Mmap>>,
    /// Bytes of `map` from its start whose pages were handed back
    /// ([`TraceReader::refill`]).
    map_released: usize,
    /// The size the buffer would have when streaming: the mapped window
    /// ends where a read into that buffer would end.
    map_window: usize,
    /// Valid bytes in `buf` (or the window of `map`).
    len: usize,
    /// Parse cursor in `buf`.
    pos: usize,
    /// Bytes before this index may be discarded (end of the last event).
    keep: usize,
    /// `keep` to apply at the next call (the last event is still borrowed).
    pending_keep: Option<usize>,
    /// Absolute offset of `buf[0]`.
    base: u64,
    /// Newlines in the discarded bytes before `buf[0]`.
    lines_before: u64,
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
}

/// The bytes the parser may look at: the mapped window or the buffer.
/// (A function of the fields it needs, so that the parser can borrow them
/// while it updates the others.)
#[inline(always)]
fn visible<'a>(map: &'a Option<Arc<Mmap>>, buf: &'a [u8], len: usize) -> &'a [u8] {
    match map {
        Some(map) => &map[..len],
        None => &buf[..len],
    }
}

/// Smallest file [`TraceReader::open_file`] maps: below it, reading costs
/// less than setting up a mapping.
const MAP_MIN_BYTES: u64 = 1 << 20;

/// How far behind the parser a mapped file's pages are handed back (room
/// for what callers still hold: mergetrace's batches in flight), in steps
/// of whole 64 KiB units (any page size divides them).
const MAP_KEEP_BEHIND: usize = 16 << 20;
const MAP_RELEASE_STEP: usize = 8 << 20;
const MAP_RELEASE_ALIGN: usize = 64 << 10;

/// Set (to anything), trace files are streamed, never mapped.
pub const NO_MAP_VARIABLE: &str = "UNITRACE_NO_MMAP";

impl TraceReader<File> {
    /// A reader of a trace file: a regular file of 1 MiB or more is mapped
    /// into memory and read in place (no copy into a buffer, no newline
    /// counting until an error asks for a line: docs/benchmarks.md#the-json-trace-scanner),
    /// anything else (a pipe, a small or empty file, a failed mapping) is
    /// streamed. Events, errors and summaries are the same either way.
    ///
    /// A mapped file that another process truncates while it is read makes
    /// the kernel stop this process with SIGBUS (docs/robustness.md#mapped-inputs);
    /// the environment variable `UNITRACE_NO_MMAP` (any value) makes every
    /// file streamed.
    pub fn open_file(file: File, max_event: usize) -> TraceReader<File> {
        let map = file
            .metadata()
            .ok()
            .filter(|m| m.is_file() && m.len() >= MAP_MIN_BYTES)
            .filter(|_| std::env::var_os(NO_MAP_VARIABLE).is_none())
            .and_then(|_| {
                // SAFETY: the mapping is only read; a concurrent truncation
                // is the documented SIGBUS case above.
                unsafe { Mmap::map(&file) }.ok()
            });
        let reader = TraceReader::with_max_event_bytes(file, max_event);
        match map {
            Some(map) => {
                #[cfg(unix)]
                let _ = map.advise(memmap2::Advice::Sequential);
                reader.with_map(Arc::new(map))
            }
            None => reader,
        }
    }
}

/// `file` rewound to its start, for [`TraceReader::open_file`] after a
/// caller read its first bytes to tell the format; `Err(file)` when it
/// cannot seek (a pipe): the caller streams what it read and the rest.
pub fn rewound(mut file: File) -> Result<File, File> {
    use std::io::Seek;
    match file.rewind() {
        Ok(()) => Ok(file),
        Err(_) => Err(file),
    }
}

impl TraceReader<io::Empty> {
    /// A reader of bytes already in a mapping (tests map anonymous memory).
    pub fn from_map(map: Arc<Mmap>, max_event: usize, kernel: ScanKernel) -> Self {
        TraceReader::with_kernel(io::empty(), max_event, kernel).with_map(map)
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
            map: None,
            map_released: 0,
            map_window: 0,
            len: 0,
            pos: 0,
            keep: 0,
            pending_keep: None,
            base: 0,
            lines_before: 0,
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
        }
    }

    fn with_map(mut self, map: Arc<Mmap>) -> Self {
        self.map = Some(map);
        self
    }

    /// The mapped input, when the reader reads one in place
    /// ([`TraceReader::open_file`]); event offsets index it.
    pub fn mapped(&self) -> Option<&Arc<Mmap>> {
        self.map.as_ref()
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
                        raw: &visible(&self.map, &self.buf, self.len)[start..end],
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
            line: Some(self.line_at(at)),
            offset: self.base + at as u64,
        }
    }

    fn line_at(&self, at: usize) -> u64 {
        let at = at.min(self.len);
        let b = visible(&self.map, &self.buf, self.len);
        self.lines_before + memchr::memchr_iter(b'\n', &b[..at]).count() as u64 + 1
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
                let dropped = &visible(&self.map, &self.buf, self.len)[from..];
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
        if let Some(map) = &self.map {
            // Nothing is copied or counted (lines are counted when an error
            // asks): the window grows as the buffer would fill from a
            // reader that hands out whole reads (its size included), so
            // that events, errors, the event limit and the bytes read are
            // exactly those of streaming.
            let unit = self.len - self.keep;
            if unit >= self.max_event {
                return Err(self.error_at(
                    self.pos,
                    TraceErrorKind::TooLong {
                        limit: self.max_event,
                    },
                ));
            }
            if self.len == map.len() {
                // What a read returning 0 bytes says.
                self.eof = true;
                return Ok(());
            }
            let want = (unit + self.read_size.min(self.max_event)).min(self.max_event + 1);
            self.read_size = (self.read_size * 2).min(CHUNK);
            if self.map_window < want {
                self.map_window = want.max(self.map_window * 2).min(self.max_event + 1);
            }
            // One read fills the buffer from the kept bytes on.
            self.len = map.len().min(self.keep + self.map_window);
            // Pages read long ago leave this process's mapping (they stay
            // in the page cache), so that its resident size stays bounded
            // like a buffer's instead of growing to the file's size.
            #[cfg(unix)]
            let release_to = self.keep.saturating_sub(MAP_KEEP_BEHIND) & !(MAP_RELEASE_ALIGN - 1);
            #[cfg(unix)]
            if release_to >= self.map_released + MAP_RELEASE_STEP {
                // SAFETY: the mapping is file-backed and never written, so
                // a dropped page reads back the same file bytes when
                // touched again (a batch still in flight, say); only a
                // concurrent truncation, the documented SIGBUS case of
                // `open_file`, changes what is there.
                let _ = unsafe {
                    map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        self.map_released,
                        release_to - self.map_released,
                    )
                };
                self.map_released = release_to;
            }
            return Ok(());
        }
        if self.keep > 0 {
            self.lines_before += memchr::memchr_iter(b'\n', &self.buf[..self.keep]).count() as u64;
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

    fn step(&mut self) -> PResult<Step> {
        let b = visible(&self.map, &self.buf, self.len);
        match self.state {
            State::Start => {
                let mut i = self.pos;
                if self.base == 0 && i == 0 && b.starts_with(b"\xEF\xBB\xBF") {
                    i = 3;
                } else if self.base == 0
                    && i == 0
                    && !b.is_empty()
                    && b"\xEF\xBB\xBF".starts_with(b)
                {
                    // Only part of the BOM has arrived (a pipe may hand out
                    // one or two bytes first): read on before judging it
                    // (found by fuzzing, issue 10).
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
            State::ObjKey { first } => {
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
                    self.pos = parse_value(b, v, 1)?;
                    self.state = State::ObjAfterValue;
                }
                Ok(Step::Continue)
            }
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
            State::Done => {
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
        }
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

/// A trace made valid: every complete event kept, closing brackets added.
#[derive(Debug)]
pub struct Repaired<'a> {
    /// The input itself when it was complete, else its repaired copy.
    pub bytes: Cow<'a, [u8]>,
    pub events: u64,
    /// `None` when the input was complete.
    pub truncation: Option<Truncation>,
    pub form: TraceForm,
}

/// What [`repair_to`] did.
#[derive(Debug, Clone)]
pub struct RepairReport {
    pub events: u64,
    pub truncation: Option<Truncation>,
    pub form: TraceForm,
    pub bytes_written: u64,
}

/// The minimal trace written when even the header of an input was cut.
const EMPTY_OBJECT_TRACE: &[u8] = b"{\"traceEvents\": [\n]\n}\n";

/// Validates `input` and, if it was cut mid-write, returns a repaired copy:
/// the input up to the end of its last complete event followed by the
/// closing brackets of its form. A complete input is returned borrowed. An
/// empty input gives an empty object trace. Errors for inputs that are not
/// a trace at all (not JSON, invalid UTF-8, an event that is not an object,
/// an object without `traceEvents`).
pub fn repaired_bytes(input: &[u8]) -> Result<Repaired<'_>, TraceError> {
    let mut reader = TraceReader::new(input);
    while reader.next_event()?.is_some() {}
    let s = reader.summary().clone();
    check_has_events_array(&s)?;
    let form = s.form.unwrap_or(TraceForm::Object);
    let bytes = match &s.truncation {
        None if s.empty => Cow::Borrowed(EMPTY_OBJECT_TRACE),
        None if s.trailing_data.is_some() => {
            // Drop what follows the top-level value (not JSON).
            let mut out = input[..s.value_end as usize].to_vec();
            out.push(b'\n');
            Cow::Owned(out)
        }
        None => Cow::Borrowed(input),
        Some(t) if !t.array_opened => Cow::Borrowed(match form {
            TraceForm::Object => EMPTY_OBJECT_TRACE,
            TraceForm::Array => b"[\n]\n" as &[u8],
        }),
        Some(t) => {
            let mut out = Vec::with_capacity(t.kept_bytes as usize + 8);
            out.extend_from_slice(&input[..t.kept_bytes as usize]);
            out.extend_from_slice(form.closing());
            Cow::Owned(out)
        }
    };
    Ok(Repaired {
        bytes,
        events: s.events,
        truncation: s.truncation,
        form,
    })
}

fn check_has_events_array(s: &TraceSummary) -> Result<(), TraceError> {
    if !s.empty && !s.has_trace_events && s.truncation.is_none() {
        return Err(TraceError {
            kind: TraceErrorKind::Syntax("no traceEvents array".into()),
            line: None,
            offset: 0,
        });
    }
    Ok(())
}

/// Streaming form of [`repaired_bytes`]: copies `input` to `out`, ending
/// after the last complete event plus the closing brackets when the input
/// was cut. Memory stays bounded by the largest event. On error, `out` has
/// received a prefix only: write to a temporary file (crate::atomic).
pub fn repair_to<R: Read, W: Write>(input: R, mut out: W) -> Result<RepairReport, TraceError> {
    let mut reader = TraceReader::new(input);
    let mut written: u64 = 0;
    // Bytes from the last write up to the end of each event are still in the
    // buffer: the reader keeps everything after the previous event.
    while let Some(ev) = reader.next_event()? {
        let end = ev.offset() + ev.raw().len() as u64;
        let from = (written - reader.base) as usize;
        let to = (end - reader.base) as usize;
        out.write_all(&reader.buf[from..to])
            .map_err(TraceError::io)?;
        written = end;
    }
    let s = reader.summary().clone();
    check_has_events_array(&s)?;
    let form = s.form.unwrap_or(TraceForm::Object);
    let tail: Cow<[u8]> = match &s.truncation {
        None if s.empty => Cow::Borrowed(EMPTY_OBJECT_TRACE),
        None => {
            let from = (written - reader.base) as usize;
            if s.trailing_data.is_some() {
                let mut tail = reader.buf[from..(s.value_end - reader.base) as usize].to_vec();
                tail.push(b'\n');
                Cow::Owned(tail)
            } else {
                Cow::Owned(reader.buf[from..reader.len].to_vec())
            }
        }
        Some(t) if !t.array_opened => Cow::Borrowed(match form {
            TraceForm::Object => EMPTY_OBJECT_TRACE,
            TraceForm::Array => b"[\n]\n" as &[u8],
        }),
        Some(t) => {
            let mut tail = Vec::new();
            if s.events == 0 {
                // Header up to and including '[' is still buffered.
                let from = (written - reader.base) as usize;
                let to = (t.kept_bytes - reader.base) as usize;
                tail.extend_from_slice(&reader.buf[from..to]);
            }
            tail.extend_from_slice(form.closing());
            Cow::Owned(tail)
        }
    };
    out.write_all(&tail).map_err(TraceError::io)?;
    written += tail.len() as u64;
    Ok(RepairReport {
        events: s.events,
        truncation: s.truncation,
        form,
        bytes_written: written,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `n` bytes per read, to exercise the
    /// refill/retry paths at every possible cut.
    struct Trickle<'a> {
        data: &'a [u8],
        n: usize,
    }
    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let k = self.n.min(out.len()).min(self.data.len());
            out[..k].copy_from_slice(&self.data[..k]);
            self.data = &self.data[k..];
            Ok(k)
        }
    }

    const TRACE: &[u8] = b"{ \"traceEvents\":[\n\
{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 7, \"ts\": 1719000000000000.250000, \"args\": {\"name\": \"RANK 0 HOST<n>\"}},\n\
{\"ph\": \"X\", \"tid\": 7, \"pid\": 7, \"name\": \"a\\\"b\\u00e9\", \"cat\": \"gpu_op\", \"ts\": 1719000000000010.500000, \"dur\": 3.250000, \"args\": {\"id\": \"57\"}}\n\
]\n}\n";

    fn collect(reader: &mut TraceReader<impl Read>) -> Result<Vec<Vec<u8>>, TraceError> {
        let mut out = Vec::new();
        while let Some(e) = reader.next_event()? {
            out.push(e.raw().to_vec());
        }
        Ok(out)
    }

    #[test]
    fn yields_raw_events_and_fields() {
        let mut r = TraceReader::new(TRACE);
        let e = r.next_event().unwrap().unwrap();
        assert_eq!(e.str(Field::Ph).as_deref(), Some("M"));
        assert_eq!(e.uint(Field::Pid), Some(7));
        assert_eq!(
            e.number_text(Field::Ts),
            Some(&b"1719000000000000.250000"[..])
        );
        let e = r.next_event().unwrap().unwrap();
        assert!(e.raw().starts_with(b"{\"ph\": \"X\""));
        assert!(e.raw().ends_with(b"\"57\"}}"));
        assert_eq!(e.str(Field::Name).as_deref(), Some("a\"b\u{e9}"));
        assert_eq!(e.decimal(Field::Dur).unwrap().to_string(), "3.250000");
        let args = e.value(Field::Args).unwrap();
        let id: Vec<_> = object_members(args).collect();
        assert_eq!(id[0].0, b"id");
        assert_eq!(&args[id[0].1.range()], b"\"57\"");
        assert!(r.next_event().unwrap().is_none());
        let s = r.summary();
        assert_eq!(s.events, 2);
        assert!(s.truncation.is_none());
        assert_eq!(s.form, Some(TraceForm::Object));
    }

    #[test]
    fn same_events_whatever_the_read_size() {
        let whole = collect(&mut TraceReader::new(TRACE)).unwrap();
        for n in 1..40 {
            let mut r = TraceReader::new(Trickle { data: TRACE, n });
            assert_eq!(collect(&mut r).unwrap(), whole, "read size {n}");
        }
    }

    #[test]
    fn truncated_at_every_byte_keeps_complete_events() {
        let second_end = TRACE.windows(6).position(|w| w == b"\"}}\n]\n").unwrap() + 3;
        let first_end = TRACE.windows(4).position(|w| w == b"}},\n").unwrap() + 2;
        for cut in 0..TRACE.len() - 3 {
            let input = &TRACE[..cut];
            let mut r = TraceReader::new(Trickle { data: input, n: 7 });
            let events = collect(&mut r).unwrap();
            let expect = if cut >= second_end {
                2
            } else if cut >= first_end {
                1
            } else {
                0
            };
            assert_eq!(events.len(), expect, "cut at {cut}");
            let s = r.summary();
            if cut == 0 {
                assert!(s.empty);
                continue;
            }
            let t = s.truncation.as_ref().expect("truncated");
            assert_eq!(t.kept_bytes + t.dropped_bytes, cut as u64);
            let rep = repaired_bytes(input).unwrap();
            assert_eq!(rep.events, expect as u64);
            let again = collect(&mut TraceReader::new(&rep.bytes[..])).unwrap();
            assert_eq!(again.len(), expect);
            let mut streamed = Vec::new();
            let report = repair_to(Trickle { data: input, n: 5 }, &mut streamed).unwrap();
            assert_eq!(streamed, rep.bytes.as_ref(), "cut at {cut}");
            assert_eq!(report.bytes_written, streamed.len() as u64);
        }
    }

    #[test]
    fn repair_appends_closing_after_last_complete_event() {
        let cut = TRACE.windows(4).position(|w| w == b"}},\n").unwrap() + 2 + 30;
        let rep = repaired_bytes(&TRACE[..cut]).unwrap();
        assert_eq!(rep.events, 1);
        let t = rep.truncation.unwrap();
        assert!(t.partial_event);
        assert_eq!(t.dropped_bytes, 30);
        assert!(rep.bytes.ends_with(b"\"}}\n]\n}\n"));
        // A complete trace comes back borrowed and identical.
        let rep = repaired_bytes(TRACE).unwrap();
        assert!(matches!(rep.bytes, Cow::Borrowed(_)));
        let mut out = Vec::new();
        repair_to(TRACE, &mut out).unwrap();
        assert_eq!(out, TRACE);
    }

    #[test]
    fn bare_array_form() {
        let input = b"[{\"ph\":\"X\",\"ts\":1},\n{\"ph\":\"X\",\"ts\":2}]";
        let mut r = TraceReader::new(&input[..]);
        assert_eq!(collect(&mut r).unwrap().len(), 2);
        assert_eq!(r.summary().form, Some(TraceForm::Array));
        // Chrome allows the closing ']' to be missing.
        let rep = repaired_bytes(&input[..input.len() - 1]).unwrap();
        assert_eq!(rep.events, 2);
        assert!(!rep.truncation.unwrap().partial_event);
        assert!(rep.bytes.ends_with(b"}\n]\n"));
    }

    fn err(input: &[u8]) -> TraceError {
        let mut r = TraceReader::new(input);
        collect(&mut r).unwrap_err()
    }

    #[test]
    fn bad_inputs_give_positioned_errors() {
        let e = err(b"hello");
        assert!(matches!(e.kind, TraceErrorKind::NotJson(_)), "{e}");
        assert_eq!(e.line, Some(1));
        let e = err(b"{\"traceEvents\": [\n{\"a\": 1},\n42\n]}");
        assert!(
            matches!(e.kind, TraceErrorKind::EventNotObject { index: 1 }),
            "{e}"
        );
        assert_eq!(e.line, Some(3));
        let e = err(b"{\"traceEvents\": [\n{\"a\": \"\xff\"}]}");
        assert!(matches!(e.kind, TraceErrorKind::InvalidUtf8), "{e}");
        assert_eq!(e.line, Some(2));
        let e = err(b"{\"traceEvents\": [\n{\"args\": {, \"mpi_counter\": 3}}]}");
        assert!(matches!(e.kind, TraceErrorKind::Syntax(_)), "{e}");
        let e = err(b"{\"traceEvents\": 3}");
        assert!(matches!(e.kind, TraceErrorKind::TraceEventsNotArray), "{e}");
        let e = err(b"{\"traceEvents\": [{\"a\": 1},]}");
        assert!(matches!(e.kind, TraceErrorKind::Syntax(_)), "{e}");
        let e = err(b"{\"traceEvents\": [{\"a\": 01}]}");
        assert!(matches!(e.kind, TraceErrorKind::Syntax(_)), "{e}");
        assert_eq!(
            e.into_input_error(Path::new("r.json")).to_string(),
            "r.json:1: invalid JSON: expected ',' or '}', found '1'"
        );
    }

    #[test]
    fn object_without_trace_events_and_extra_keys() {
        let mut r = TraceReader::new(&b"{\"otherData\": {\"x\": [1, 2]}}"[..]);
        assert!(collect(&mut r).unwrap().is_empty());
        assert!(!r.summary().has_trace_events);
        assert!(repaired_bytes(b"{\"otherData\": 1}").is_err());
        let input =
            b"{\"displayTimeUnit\": \"ns\", \"traceEvents\": [{\"ph\": \"X\"}], \"otherData\": {}}  x";
        let mut r = TraceReader::new(&input[..]);
        assert_eq!(collect(&mut r).unwrap().len(), 1);
        assert!(r.summary().trailing_data.is_some());
        let rep = repaired_bytes(input).unwrap();
        assert!(rep.bytes.ends_with(b"{}}\n"));
    }

    /// The eight-at-a-time skips stop exactly where a byte-by-byte loop
    /// does, for every byte value at every position of a word and of the
    /// tail, whatever precedes it.
    #[test]
    fn word_skips_agree_with_byte_loops() {
        for len in [1usize, 7, 8, 9, 16, 19] {
            for at in 0..len {
                for byte in 0..=255u8 {
                    for filler in [b'a', 0xC3, b'7'] {
                        let mut buf = vec![filler; len];
                        buf[at] = byte;
                        let plain_end = buf
                            .iter()
                            .position(|&c| !matches!(STRING_CLASS[c as usize], 0 | 4))
                            .unwrap_or(len);
                        let mut non_ascii = false;
                        let got = skip_plain_string_bytes(&buf, 0, &mut non_ascii);
                        assert_eq!(got, plain_end, "string {buf:?}");
                        if buf[..plain_end].iter().any(|&c| c >= 0x80) {
                            assert!(non_ascii, "non-ASCII missed in {buf:?}");
                        }
                        let digit_end = buf.iter().position(|c| !c.is_ascii_digit()).unwrap_or(len);
                        assert_eq!(skip_digits(&buf, 0), digit_end, "digits {buf:?}");
                    }
                }
            }
        }
    }

    /// `short_key` against a byte-by-byte reading of `"key":`, for every
    /// byte value at every position of the word, over several keys.
    #[test]
    fn short_key_agrees_with_a_byte_reading() {
        fn by_bytes(w: &[u8; 8]) -> Option<(usize, u64)> {
            let close = 1 + w[1..].iter().position(|&c| c == b'"')?;
            if close > 6 || w[close + 1] != b':' {
                return None;
            }
            let mut key = 0u64;
            for (k, &c) in w[1..close].iter().enumerate() {
                key |= (c as u64) << (8 * k);
            }
            Some((close - 1, key))
        }
        for start in [
            &b"\"ph\": \"X"[..],
            b"\"name\": ",
            b"\"\": 1, \"",
            b"\"names\":",
            b"\"nam\": 1",
            b"\"abcdef\"",
            b"\"a\"\"\":::",
        ] {
            let mut w: [u8; 8] = start.try_into().unwrap();
            assert_eq!(short_key(u64::from_le_bytes(w)), by_bytes(&w), "{w:?}");
            for at in 1..8 {
                for byte in 0..=255u8 {
                    let keep = w[at];
                    w[at] = byte;
                    assert_eq!(short_key(u64::from_le_bytes(w)), by_bytes(&w), "{w:?}");
                    w[at] = keep;
                }
            }
        }
        assert_eq!(
            short_key(u64::from_le_bytes(*b"\"name\": ")),
            Some((4, u32::from_le_bytes(*b"name") as u64))
        );
        assert_eq!(short_key(u64::from_le_bytes(*b"\"name\" :")), None);
    }

    /// The word lookup finds the nine keys, and nothing else among keys of
    /// 0 to 5 letters near them.
    /// `number_len` (the direct walk's number path) ends every number
    /// where `fast_number` does, whenever that end is inside its window,
    /// and `key_slot` finds exactly the recorded keys.
    #[test]
    fn number_len_agrees_with_fast_number() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let others = b"-.eE+x, }\"0";
        for round in 0..200_000 {
            let mut w = [b' '; 32];
            let len = round % 34;
            for c in w.iter_mut().take(len.min(32)) {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                // Three in four bytes digits, so that long runs occur.
                let k = (rng % 40) as usize;
                *c = if k < 30 {
                    b'0' + (k % 10) as u8
                } else {
                    others[k - 30]
                };
            }
            if !matches!(w[0], b'-' | b'0'..=b'9') {
                continue;
            }
            let got = number_len(&w, crate::trace_blocks::number_shape(&w));
            let want = fast_number(&w, 0).filter(|&j| j < 32);
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&w));
        }
    }

    #[test]
    fn key_slot_finds_the_recorded_keys() {
        for key in [
            &b"ph"[..],
            b"name",
            b"cat",
            b"pid",
            b"tid",
            b"ts",
            b"dur",
            b"id",
            b"args",
            b"",
            b"p",
            b"phx",
            b"nam",
            b"names",
            b"t",
            b"tsx",
            b"argv",
            b"x",
            b"ph\0",
        ] {
            let want = Field::from_key(key).map_or(OTHER_KEY, |f| f as usize);
            assert_eq!(
                key_slot(key_word(key)),
                want,
                "{:?}",
                String::from_utf8_lossy(key)
            );
        }
    }

    #[test]
    fn field_from_word_matches_from_key() {
        let word = |k: &[u8]| {
            k.iter()
                .enumerate()
                .fold(0u64, |w, (i, &c)| w | (c as u64) << (8 * i))
        };
        let names = [
            "ph", "name", "cat", "pid", "tid", "ts", "dur", "id", "args", "nam", "names", "p", "",
            "phh", "tsx", "args1", "Name", "pi", "idd",
        ];
        for key in names {
            let k = key.as_bytes();
            let want = match key {
                "ph" => Some(Field::Ph),
                "name" => Some(Field::Name),
                "cat" => Some(Field::Cat),
                "pid" => Some(Field::Pid),
                "tid" => Some(Field::Tid),
                "ts" => Some(Field::Ts),
                "dur" => Some(Field::Dur),
                "id" => Some(Field::Id),
                "args" => Some(Field::Args),
                _ => None,
            };
            assert_eq!(Field::from_word(word(k)), want, "{key}");
            assert_eq!(Field::from_key(k), want, "{key}");
        }
    }

    #[test]
    fn long_line_needs_only_one_event_of_buffer() {
        // One line of 20 000 events (~600 KB) read with a 4 KiB limit: the
        // buffer never grows past the limit, whatever the line length.
        let mut line = b"{\"traceEvents\":[".to_vec();
        for i in 0..20_000 {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(format!("{{\"ph\":\"X\",\"ts\":{i}.5}}").as_bytes());
        }
        line.extend_from_slice(b"]}");
        let mut r = TraceReader::with_max_event_bytes(&line[..], 4096);
        let mut n = 0;
        while r.next_event().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 20_000);
        assert!(r.buffer_capacity() <= 4097, "{}", r.buffer_capacity());
    }

    #[test]
    fn event_over_the_limit_is_an_error() {
        let mut big = b"{\"traceEvents\":[{\"name\":\"".to_vec();
        big.extend(std::iter::repeat_n(b'x', 10_000));
        big.extend_from_slice(b"\"}]}");
        let mut r = TraceReader::with_max_event_bytes(&big[..], 4096);
        let e = collect(&mut r).unwrap_err();
        assert!(
            matches!(e.kind, TraceErrorKind::TooLong { limit: 4096 }),
            "{e}"
        );
        assert!(r.buffer_capacity() <= 4097);
        // The default limit accepts it.
        assert_eq!(collect(&mut TraceReader::new(&big[..])).unwrap().len(), 1);
    }

    #[test]
    fn parse_u64_agrees_with_std() {
        let mut cases: Vec<String> = [
            "",
            "0",
            "00",
            "4294967295",
            "9999999999999999999",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "100000000000000000000",
            "1a",
            "-1",
            "+1",
            " 1",
            "1.0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 22) as usize;
            let mut t: String = (0..len)
                .map(|k| (b'0' + ((x >> (k * 3 % 61)) % 10) as u8) as char)
                .collect();
            if x.is_multiple_of(7) && !t.is_empty() {
                t.replace_range(0..1, ":");
            }
            cases.push(t);
        }
        for c in &cases {
            let want = if c.bytes().all(|b| b.is_ascii_digit()) {
                c.parse::<u64>().ok()
            } else {
                None
            };
            assert_eq!(parse_u64(c.as_bytes()), want, "{c:?}");
        }
    }

    #[test]
    fn decode_escapes() {
        assert_eq!(
            decode_string_content(br"a\n\u00e9\ud83d\ude00", true).unwrap(),
            "a\n\u{e9}\u{1F600}"
        );
    }
}
