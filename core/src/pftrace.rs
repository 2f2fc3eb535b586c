//! Perfetto protobuf timelines (`.pftrace`) as `unitrace --output-format
//! protobuf` writes them (docs/formats.md#pftrace).
//!
//! The file is a sequence of records `0a <varint length> <TracePacket>`
//! (each record is a serialized `perfetto.protos.Trace` holding one packet;
//! no header, no footer). [`PacketReader`] streams the records over any
//! `impl Read` with one buffer bounded by the largest packet; [`Packet::decode`]
//! decodes, without allocating, the fields unitrace writes and the tools
//! use: `timestamp`, `timestamp_clock_id`, `trusted_packet_sequence_id`,
//! `ClockSnapshot`, `TrackDescriptor` (+ process / thread descriptors) and
//! `TrackEvent` (type, track uuid, name, categories, flow ids, debug
//! annotations such as `id` and the `metrics` link). Every other field is
//! skipped after its wire format was checked, and kept byte for byte by
//! [`rewrite_packet`], the editor mergetrace uses to rename flow ids, track
//! uuids and pids (docs/compatibility.md#mergetrace-pftrace).
//!
//! Why a small hand decoder rather than prost over Perfetto's protos:
//! measured on one generated file (298 MB, 3.79 M packets, an earlier
//! generator's `--seed 3 trace --size 500MB --format pftrace --metrics-link http`),
//! decoding every packet and visiting every field the tools use, in the same
//! process, best of two rounds on the shared 2-core machine (load ~10):
//! this decoder 584 MB/s, prost 0.13 with derived messages for the same
//! fields 312 MB/s (it allocates every string, vector and nested message of
//! each packet). prost also drops unknown fields when re-encoding, and
//! would need protoc or hand-copied message definitions for ~25 fields.
//!
//! Why its fast paths (docs/benchmarks.md#the-pftrace-reader): the packet,
//! its track event and their annotations are read in one loop each that
//! matches the usual fields by their first one or two tag bytes (number and
//! wire type at once) and hands anything else to a general field reader
//! with the same checks; the event is decoded in place
//! ([`Packet::decode_into`]) rather than returned through `Result`s, whose
//! copies of a just-written event each stalled on store forwarding. On one
//! generated 251 MB rank (EPYC, shared) decoding alone went from 874 to
//! about 3,000 MB per CPU second. [`Packet::decode_reference`], the
//! generic decoder (one [`Fields`] step per field) they replace, stays as
//! the reference: `core/tests/pftrace_decoder.rs` and the fuzz target
//! compare the two on every packet, every cut and every one-byte change
//! (same packet, or the same error at the same offset).
//!
//! [`PacketView`] is the merge's shallow read: only the fields an edit needs
//! (timestamp, track uuid, flow ids), nested messages skipped after their
//! length was checked.
//!
//! A file cut mid-record (a rank killed mid-write) keeps its complete
//! records: the reader stops at the cut and reports it in
//! [`PftraceSummary::truncation`] for the caller to warn about.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Read};
use std::path::Path;

use crate::error::InputError;

/// Tag of `Trace.packet` (field 1, length-delimited): first byte of a record.
pub const RECORD_TAG: u8 = 0x0a;
/// Largest packet accepted by default (bounds the reader's buffer).
pub const DEFAULT_MAX_PACKET: usize = 64 << 20;
/// The reader asks for at least this much at a time: as much as the
/// `BufReader` the timeline source puts over a file holds, so that reads
/// go past its buffer instead of being copied twice.
const READ_CHUNK: usize = 1 << 20;

// Field numbers (perfetto.protos, trace_packet.proto and friends).
mod field {
    pub const PACKET_CLOCK_SNAPSHOT: u32 = 6;
    pub const PACKET_TIMESTAMP: u32 = 8;
    pub const PACKET_SEQUENCE_ID: u32 = 10;
    pub const PACKET_TRACK_EVENT: u32 = 11;
    pub const PACKET_CLOCK_ID: u32 = 58;
    pub const PACKET_TRACK_DESCRIPTOR: u32 = 60;

    pub const CLOCKS: u32 = 1;
    pub const CLOCK_ID: u32 = 1;
    pub const CLOCK_TIMESTAMP: u32 = 2;

    pub const TD_UUID: u32 = 1;
    pub const TD_NAME: u32 = 2;
    pub const TD_PROCESS: u32 = 3;
    pub const TD_THREAD: u32 = 4;
    pub const TD_PARENT_UUID: u32 = 5;

    pub const PD_PID: u32 = 1;
    pub const PD_NAME: u32 = 6;
    pub const THD_PID: u32 = 1;
    pub const THD_TID: u32 = 2;
    pub const THD_NAME: u32 = 5;

    pub const TE_DEBUG_ANNOTATIONS: u32 = 4;
    pub const TE_TYPE: u32 = 9;
    pub const TE_TRACK_UUID: u32 = 11;
    pub const TE_CATEGORIES: u32 = 22;
    pub const TE_NAME: u32 = 23;
    /// `flow_ids_old` (uint64), deprecated but still accepted by Perfetto.
    pub const TE_FLOW_IDS_OLD: u32 = 36;
    pub const TE_TERMINATING_FLOW_IDS_OLD: u32 = 42;
    pub const TE_FLOW_IDS: u32 = 47;
    pub const TE_TERMINATING_FLOW_IDS: u32 = 48;

    pub const DA_BOOL: u32 = 2;
    pub const DA_UINT: u32 = 3;
    pub const DA_INT: u32 = 4;
    pub const DA_DOUBLE: u32 = 5;
    pub const DA_STRING: u32 = 6;
    pub const DA_NAME: u32 = 10;
}

/// Protobuf wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

/// What made a `.pftrace` unreadable.
#[derive(Debug)]
pub enum PftraceErrorKind {
    Io(io::Error),
    /// A byte where a record should start is not `0a`.
    NotARecord {
        found: u8,
    },
    /// A record (one packet) longer than the limit.
    TooLong {
        len: u64,
        limit: usize,
    },
    /// The protobuf inside a complete record is malformed.
    Malformed(&'static str),
}

/// A `.pftrace` that cannot be read, with the byte offset of the problem.
#[derive(Debug)]
pub struct PftraceError {
    pub kind: PftraceErrorKind,
    /// Offset in the file (0-based) of the record or field at fault.
    pub offset: u64,
}

impl fmt::Display for PftraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.problem())
    }
}

impl std::error::Error for PftraceError {}

impl PftraceError {
    fn malformed(offset: u64, what: &'static str) -> Self {
        PftraceError {
            kind: PftraceErrorKind::Malformed(what),
            offset,
        }
    }

    /// The problem without the position.
    pub fn problem(&self) -> String {
        match &self.kind {
            PftraceErrorKind::Io(e) => e.to_string(),
            PftraceErrorKind::NotARecord { found } => format!(
                "not a Perfetto trace record: byte 0x{found:02x}, expected 0x0a (Trace.packet)"
            ),
            PftraceErrorKind::TooLong { len, limit } => format!(
                "a packet of {len} bytes is longer than {limit} bytes; refusing to buffer it"
            ),
            PftraceErrorKind::Malformed(what) => format!("malformed TracePacket: {what}"),
        }
    }

    /// `FILE: byte N: problem`, the error style of every tool.
    pub fn into_input_error(self, path: &Path) -> InputError {
        if let PftraceErrorKind::Io(e) = &self.kind {
            return InputError::io(path, e);
        }
        InputError::at_file(path, self.to_string())
    }
}

/// Where a file was cut (the writer was killed mid-record).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// Offset of the incomplete record.
    pub offset: u64,
    /// Bytes of that record present in the file (left out).
    pub dropped_bytes: u64,
}

/// What a finished read found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PftraceSummary {
    /// Complete records (packets).
    pub packets: u64,
    /// Bytes read.
    pub bytes: u64,
    pub truncation: Option<Truncation>,
}

/// One complete record of the file.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// The whole record: tag, length and packet.
    pub raw: &'a [u8],
    /// The serialized `TracePacket`.
    pub packet: &'a [u8],
    /// Offset of the record in the file.
    pub offset: u64,
    /// 0-based number of the record.
    pub index: u64,
}

impl<'a> Record<'a> {
    /// Offset of the packet bytes in the file.
    pub fn packet_offset(&self) -> u64 {
        self.offset + (self.raw.len() - self.packet.len()) as u64
    }

    /// Decodes the packet; errors carry file offsets.
    #[inline]
    pub fn decode(&self) -> Result<Packet<'a>, PftraceError> {
        Packet::decode(self.packet).map_err(|e| PftraceError {
            offset: e.offset + self.packet_offset(),
            ..e
        })
    }

    /// [`Record::decode`] into `out` ([`Packet::decode_into`]).
    #[inline]
    pub fn decode_into(&self, out: &mut Packet<'a>) -> Result<(), PftraceError> {
        Packet::decode_into(self.packet, out).map_err(|e| PftraceError {
            offset: e.offset + self.packet_offset(),
            ..e
        })
    }
}

/// Streams the records of a `.pftrace`.
pub struct PacketReader<R> {
    src: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    offset: u64,
    eof: bool,
    max_packet: usize,
    summary: PftraceSummary,
}

impl<R: Read> PacketReader<R> {
    pub fn new(src: R) -> Self {
        Self::with_max_packet(src, DEFAULT_MAX_PACKET)
    }

    pub fn with_max_packet(src: R, max_packet: usize) -> Self {
        PacketReader {
            src,
            buf: Vec::new(),
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
            max_packet,
            summary: PftraceSummary::default(),
        }
    }

    pub fn summary(&self) -> &PftraceSummary {
        &self.summary
    }

    /// Capacity of the internal buffer (bounded by the largest packet).
    pub fn buffer_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Reads until at least `want` bytes are buffered from `start`, or EOF.
    fn fill(&mut self, want: usize) -> Result<(), PftraceError> {
        while self.end - self.start < want && !self.eof {
            if self.start > 0 && (self.buf.len() - self.end < READ_CHUNK || self.start == self.end)
            {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            let need = (self.start + want).max(self.end + READ_CHUNK);
            if self.buf.len() < need {
                // Exactly: the buffer stays bounded by the largest packet
                // plus one read.
                self.buf.reserve_exact(need - self.buf.len());
                self.buf.resize(need, 0);
            }
            let n = loop {
                match self.src.read(&mut self.buf[self.end..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        return Err(PftraceError {
                            kind: PftraceErrorKind::Io(e),
                            offset: self.offset + (self.end - self.start) as u64,
                        })
                    }
                }
            };
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
            self.summary.bytes += n as u64;
        }
        Ok(())
    }

    /// The next complete record; `None` at the end of the file or at a cut
    /// (then [`PftraceSummary::truncation`] says where).
    #[inline]
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, PftraceError> {
        if self.end - self.start < 11 {
            self.fill(11)?;
        }
        let avail = self.end - self.start;
        if avail == 0 {
            return Ok(None);
        }
        let head = &self.buf[self.start..self.end];
        if head[0] != RECORD_TAG {
            return Err(PftraceError {
                kind: PftraceErrorKind::NotARecord { found: head[0] },
                offset: self.offset,
            });
        }
        // Most packets are shorter than 128 bytes: a one-byte length.
        let length = match head.get(1) {
            Some(&b) if b < 0x80 => Some((u64::from(b), 1)),
            _ => read_varint(&head[1..]),
        };
        let (len, n) = match length {
            Some(v) => v,
            None if avail < 11 => return Ok(self.cut(avail)),
            None => {
                return Err(PftraceError::malformed(
                    self.offset + 1,
                    "bad record length",
                ))
            }
        };
        if len > self.max_packet as u64 {
            return Err(PftraceError {
                kind: PftraceErrorKind::TooLong {
                    len,
                    limit: self.max_packet,
                },
                offset: self.offset,
            });
        }
        let total = 1 + n + len as usize;
        if avail < total {
            self.fill(total)?;
            let avail = self.end - self.start;
            if avail < total {
                return Ok(self.cut(avail));
            }
        }
        let at = self.start;
        self.start += total;
        let offset = self.offset;
        self.offset += total as u64;
        let index = self.summary.packets;
        self.summary.packets += 1;
        let raw = &self.buf[at..at + total];
        Ok(Some(Record {
            raw,
            packet: &raw[1 + n..],
            offset,
            index,
        }))
    }

    fn cut(&mut self, avail: usize) -> Option<Record<'_>> {
        self.summary.truncation = Some(Truncation {
            offset: self.offset,
            dropped_bytes: avail as u64,
        });
        self.start = self.end;
        None
    }
}

/// Reads every record of `src`, decoding each packet (validation only).
pub fn scan<R: Read>(src: R) -> Result<PftraceSummary, PftraceError> {
    let mut reader = PacketReader::new(src);
    while let Some(rec) = reader.next_record()? {
        rec.decode()?;
    }
    Ok(reader.summary().clone())
}

/// Whether `bytes` (the start of a file) look like a `.pftrace`: a record
/// tag followed by a packet that decodes (or is cut by the end of `bytes`).
pub fn sniff(bytes: &[u8]) -> bool {
    if bytes.first() != Some(&RECORD_TAG) {
        return false;
    }
    match read_varint(&bytes[1..]) {
        Some((len, n)) => {
            let body = &bytes[1 + n..];
            (len as usize) > body.len() || Packet::decode(&body[..len as usize]).is_ok()
        }
        None => false,
    }
}

// ---------------------------------------------------------------------------
// Wire format

/// The 7-bit groups of the low `n` bytes of `word` (little-endian), packed:
/// the value of a varint of `n` <= 8 bytes (SWAR: three shift/mask steps
/// instead of a loop per byte; timestamps and uuids take 9-10 bytes).
#[inline(always)]
fn pack_groups(word: u64, n: usize) -> u64 {
    let keep = if n >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * n)) - 1
    };
    let mut x = word & keep & 0x7f7f_7f7f_7f7f_7f7f;
    x = ((x & 0x7f00_7f00_7f00_7f00) >> 1) | (x & 0x007f_007f_007f_007f);
    x = ((x & 0x3fff_0000_3fff_0000) >> 2) | (x & 0x0000_3fff_0000_3fff);
    ((x & 0x0fff_ffff_0000_0000) >> 4) | (x & 0x0000_0000_0fff_ffff)
}

/// Decodes a varint; `None` when cut or longer than 10 bytes.
#[inline(always)]
pub fn read_varint(b: &[u8]) -> Option<(u64, usize)> {
    if let Some(head) = b.get(..8) {
        let word = u64::from_le_bytes(head.try_into().expect("8 bytes"));
        let ends = !word & 0x8080_8080_8080_8080;
        if ends != 0 {
            let n = (ends.trailing_zeros() / 8 + 1) as usize;
            return Some((pack_groups(word, n), n));
        }
        let low = pack_groups(word, 8);
        return match (b.get(8), b.get(9)) {
            (Some(&b8), _) if b8 < 0x80 => Some((low | u64::from(b8) << 56, 9)),
            (Some(&b8), Some(&b9)) if b9 <= 1 => {
                Some((low | u64::from(b8 & 0x7f) << 56 | u64::from(b9) << 63, 10))
            }
            _ => None,
        };
    }
    read_varint_slow(b)
}

/// [`read_varint`] byte by byte (fewer than 8 bytes left).
fn read_varint_slow(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            if i == 9 && byte > 1 {
                return None;
            }
            return Some((v, i + 1));
        }
    }
    None
}

/// Appends a varint.
#[inline]
pub fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// One field of a message.
#[derive(Debug, Clone, Copy)]
struct WireField<'a> {
    number: u32,
    wire: u8,
    /// Varint or fixed value (fixed32/64 as their bits).
    value: u64,
    /// Payload of a length-delimited field.
    bytes: &'a [u8],
    /// Offset of the field's tag within the message.
    start: usize,
    /// Offset just past the field.
    end: usize,
}

/// Iterates the fields of a message, checking the wire format.
struct Fields<'a> {
    msg: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    fn new(msg: &'a [u8]) -> Self {
        Fields { msg, pos: 0 }
    }
}

type FieldResult<'a> = Result<WireField<'a>, (usize, &'static str)>;

impl<'a> Fields<'a> {
    #[inline(always)]
    fn varint_at(&self, at: usize) -> Result<(u64, usize), (usize, &'static str)> {
        // One-byte values (tags, lengths, types) are by far the most common.
        match self.msg.get(at) {
            Some(&b) if b < 0x80 => Ok((u64::from(b), at + 1)),
            Some(_) => match read_varint(&self.msg[at..]) {
                Some((v, n)) => Ok((v, at + n)),
                None => Err((at, "bad varint")),
            },
            None => Err((at, "field cut short")),
        }
    }

    /// The field at `start`; an error points at the field's first byte
    /// (always inside the message, also when the field is cut short).
    #[inline(always)]
    fn field_at(&self, start: usize) -> FieldResult<'a> {
        self.field_at_inner(start)
            .map_err(|(_, what)| (start, what))
    }

    #[inline(always)]
    fn field_at_inner(&self, start: usize) -> FieldResult<'a> {
        let (tag, at) = self.varint_at(start)?;
        let number = (tag >> 3) as u32;
        let wire = (tag & 7) as u8;
        if number == 0 || tag >> 3 > u64::from(u32::MAX >> 3) {
            return Err((start, "bad field number"));
        }
        let (value, bytes, end) = match wire {
            VARINT => {
                let (v, end) = self.varint_at(at)?;
                (v, &[][..], end)
            }
            LEN => {
                let (len, body) = self.varint_at(at)?;
                if len > (self.msg.len() - body) as u64 {
                    return Err((at, "length past the end of the message"));
                }
                let end = body + len as usize;
                (len, &self.msg[body..end], end)
            }
            FIXED64 => {
                let b: [u8; 8] = self
                    .msg
                    .get(at..at + 8)
                    .ok_or((at, "fixed64 cut short"))?
                    .try_into()
                    .expect("8 bytes");
                (u64::from_le_bytes(b), &[][..], at + 8)
            }
            FIXED32 => {
                let b: [u8; 4] = self
                    .msg
                    .get(at..at + 4)
                    .ok_or((at, "fixed32 cut short"))?
                    .try_into()
                    .expect("4 bytes");
                (u64::from(u32::from_le_bytes(b)), &[][..], at + 4)
            }
            _ => return Err((start, "unsupported wire type (groups are not used)")),
        };
        Ok(WireField {
            number,
            wire,
            value,
            bytes,
            start,
            end,
        })
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = FieldResult<'a>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.msg.len() {
            return None;
        }
        match self.field_at(self.pos) {
            Ok(f) => {
                self.pos = f.end;
                Some(Ok(f))
            }
            Err(e) => {
                self.pos = self.msg.len();
                Some(Err(e))
            }
        }
    }
}

fn base_of(outer: &[u8], inner: &[u8]) -> usize {
    inner.as_ptr() as usize - outer.as_ptr() as usize
}

type Decoded<T> = Result<T, (usize, &'static str)>;

/// The error of a field the decoder knows, with another wire type.
const WRONG_WIRE: &str = "known field with an unexpected wire type";

/// Moves an error offset of a nested message to its parent's bytes.
#[inline]
fn nested_at(base: usize) -> impl Fn((usize, &'static str)) -> (usize, &'static str) {
    move |(o, w)| (o + base, w)
}

/// The one-byte tag of a field numbered below 16.
const fn tag1(number: u32, wire: u8) -> u8 {
    (number << 3) as u8 | wire
}

/// The two-byte tag of a field numbered 16 to 2047, as a little-endian
/// `u16` of its two bytes.
const fn tag2(number: u32, wire: u8) -> u16 {
    let tag = (number << 3) as u16 | wire as u16;
    (0x80 | (tag & 0x7f)) | (tag >> 7) << 8
}

/// The fast paths' varint at `at`: its value and end, `None` when cut or
/// malformed (the caller then reads the field the general way, which names
/// the error).
#[inline(always)]
fn varint_fast(msg: &[u8], at: usize) -> Option<(u64, usize)> {
    match msg.get(at) {
        Some(&b) if b < 0x80 => Some((u64::from(b), at + 1)),
        Some(_) => read_varint(&msg[at..]).map(|(v, n)| (v, at + n)),
        None => None,
    }
}

/// The fast paths' length-delimited payload whose length is at `at`:
/// `(payload start, end)`, `None` when it does not fit (as [`varint_fast`]).
#[inline(always)]
fn len_fast(msg: &[u8], at: usize) -> Option<(usize, usize)> {
    let (len, body) = varint_fast(msg, at)?;
    if len > (msg.len() - body) as u64 {
        return None;
    }
    Some((body, body + len as usize))
}

/// Where the fields of each repeated kind of a track event lie (first
/// field's start, last field's end; `end == 0`: none).
#[derive(Default)]
struct EventSpans {
    annotations: (usize, usize),
    categories: (usize, usize),
    flows: (usize, usize),
}

#[inline(always)]
fn widen_span(span: &mut (usize, usize), start: usize, end: usize) {
    if span.1 == 0 {
        span.0 = start;
    }
    span.1 = end;
}

/// Checks the wire type of a known field.
#[inline]
fn expect(f: &WireField<'_>, wire: u8) -> Decoded<()> {
    if f.wire == wire {
        Ok(())
    } else {
        Err((f.start, WRONG_WIRE))
    }
}

// ---------------------------------------------------------------------------
// Decoded messages

/// A decoded `TracePacket` (the fields unitrace writes).
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    pub timestamp: Option<u64>,
    pub timestamp_clock_id: Option<u32>,
    pub sequence_id: Option<u32>,
    pub data: PacketData<'a>,
}

/// The payload of a packet.
#[derive(Debug, Clone, Copy)]
pub enum PacketData<'a> {
    ClockSnapshot(ClockSnapshot<'a>),
    TrackDescriptor(TrackDescriptor<'a>),
    TrackEvent(TrackEvent<'a>),
    /// Anything else (kept as is by the tools).
    Other,
}

/// `ClockSnapshot`: `(clock_id, timestamp)` pairs.
#[derive(Debug, Clone, Copy)]
pub struct ClockSnapshot<'a> {
    raw: &'a [u8],
}

impl<'a> ClockSnapshot<'a> {
    /// `(clock_id, timestamp)` of every clock (validated when decoded).
    pub fn clocks(&self) -> impl Iterator<Item = (u32, u64)> + 'a {
        Fields::new(self.raw).filter_map(|f| {
            let f = f.ok()?;
            if f.number != field::CLOCKS {
                return None;
            }
            let (mut id, mut ts) = (0u32, 0u64);
            for g in Fields::new(f.bytes).flatten() {
                match g.number {
                    field::CLOCK_ID => id = g.value as u32,
                    field::CLOCK_TIMESTAMP => ts = g.value,
                    _ => {}
                }
            }
            Some((id, ts))
        })
    }

    fn decode(raw: &'a [u8]) -> Decoded<Self> {
        for f in Fields::new(raw) {
            let f = f?;
            if f.number == field::CLOCKS {
                expect(&f, LEN)?;
                let base = base_of(raw, f.bytes);
                for g in Fields::new(f.bytes) {
                    let g = g.map_err(|(o, w)| (o + base, w))?;
                    if matches!(g.number, field::CLOCK_ID | field::CLOCK_TIMESTAMP) {
                        expect(&g, VARINT).map_err(|(o, w)| (o + base, w))?;
                    }
                }
            }
        }
        Ok(ClockSnapshot { raw })
    }
}

/// `ProcessDescriptor`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessDescriptor<'a> {
    pub pid: Option<i32>,
    pub process_name: Option<&'a [u8]>,
}

/// `ThreadDescriptor`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadDescriptor<'a> {
    pub pid: Option<i32>,
    pub tid: Option<i64>,
    pub thread_name: Option<&'a [u8]>,
}

/// `TrackDescriptor`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrackDescriptor<'a> {
    pub uuid: Option<u64>,
    pub parent_uuid: Option<u64>,
    pub name: Option<&'a [u8]>,
    pub process: Option<ProcessDescriptor<'a>>,
    pub thread: Option<ThreadDescriptor<'a>>,
}

impl<'a> TrackDescriptor<'a> {
    fn decode(raw: &'a [u8]) -> Decoded<Self> {
        let mut d = TrackDescriptor::default();
        for f in Fields::new(raw) {
            let f = f?;
            match f.number {
                field::TD_UUID => {
                    expect(&f, VARINT)?;
                    d.uuid = Some(f.value);
                }
                field::TD_PARENT_UUID => {
                    expect(&f, VARINT)?;
                    d.parent_uuid = Some(f.value);
                }
                field::TD_NAME => {
                    expect(&f, LEN)?;
                    d.name = Some(f.bytes);
                }
                field::TD_PROCESS => {
                    expect(&f, LEN)?;
                    let base = base_of(raw, f.bytes);
                    let mut p = ProcessDescriptor::default();
                    for g in Fields::new(f.bytes) {
                        let g = g.map_err(|(o, w)| (o + base, w))?;
                        let at = |r: Decoded<()>| r.map_err(|(o, w)| (o + base, w));
                        match g.number {
                            field::PD_PID => {
                                at(expect(&g, VARINT))?;
                                p.pid = Some(g.value as i32);
                            }
                            field::PD_NAME => {
                                at(expect(&g, LEN))?;
                                p.process_name = Some(g.bytes);
                            }
                            _ => {}
                        }
                    }
                    d.process = Some(p);
                }
                field::TD_THREAD => {
                    expect(&f, LEN)?;
                    let base = base_of(raw, f.bytes);
                    let mut t = ThreadDescriptor::default();
                    for g in Fields::new(f.bytes) {
                        let g = g.map_err(|(o, w)| (o + base, w))?;
                        let at = |r: Decoded<()>| r.map_err(|(o, w)| (o + base, w));
                        match g.number {
                            field::THD_PID => {
                                at(expect(&g, VARINT))?;
                                t.pid = Some(g.value as i32);
                            }
                            field::THD_TID => {
                                at(expect(&g, VARINT))?;
                                t.tid = Some(g.value as i64);
                            }
                            field::THD_NAME => {
                                at(expect(&g, LEN))?;
                                t.thread_name = Some(g.bytes);
                            }
                            _ => {}
                        }
                    }
                    d.thread = Some(t);
                }
                _ => {}
            }
        }
        Ok(d)
    }

    /// The name to show: `name`, else the process or thread name.
    pub fn display_name(&self) -> Option<Cow<'a, str>> {
        self.name
            .or(self.process.and_then(|p| p.process_name))
            .or(self.thread.and_then(|t| t.thread_name))
            .map(String::from_utf8_lossy)
    }
}

/// `TrackEvent.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    SliceBegin,
    SliceEnd,
    Instant,
    Counter,
    /// Unspecified or a type this decoder does not know.
    Other(u64),
}

impl EventType {
    fn from_wire(v: u64) -> Self {
        match v {
            1 => EventType::SliceBegin,
            2 => EventType::SliceEnd,
            3 => EventType::Instant,
            4 => EventType::Counter,
            v => EventType::Other(v),
        }
    }
}

/// A decoded `TrackEvent`; repeated fields are iterated from the raw bytes
/// (validated when decoded, so the iterators cannot fail).
#[derive(Debug, Clone, Copy)]
pub struct TrackEvent<'a> {
    pub kind: EventType,
    pub track_uuid: Option<u64>,
    pub name: Option<&'a [u8]>,
    /// The fields from the first to the last annotation, category and flow
    /// id: the iterators walk only these.
    annotations: &'a [u8],
    categories: &'a [u8],
    flows: &'a [u8],
    /// The first category, and whether there are others (`categories`
    /// then holds them all): the usual event has one.
    first_category: Option<&'a [u8]>,
    more_categories: bool,
}

/// Grows the span `start..end` of the fields of one kind.
#[inline]
fn widen(span: &mut (usize, usize), f: &WireField<'_>) {
    if span.1 == 0 {
        span.0 = f.start;
    }
    span.1 = f.end;
}

/// A value of a `DebugAnnotation`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AnnotationValue<'a> {
    Bool(bool),
    Uint(u64),
    Int(i64),
    Double(f64),
    Str(&'a [u8]),
    /// Nested, pointer, interned or JSON values (not written by unitrace).
    Other,
}

impl AnnotationValue<'_> {
    /// The value as an unsigned integer: `Uint`, a non-negative `Int`, or a
    /// `Str` of digits (unitrace writes device instance ids as strings).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            AnnotationValue::Uint(v) => Some(v),
            AnnotationValue::Int(v) => u64::try_from(v).ok(),
            AnnotationValue::Str(s) if !s.is_empty() && s.iter().all(u8::is_ascii_digit) => {
                std::str::from_utf8(s).ok()?.parse().ok()
            }
            _ => None,
        }
    }
}

/// One `DebugAnnotation` (name and value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DebugAnnotation<'a> {
    pub name: Option<&'a [u8]>,
    pub value: AnnotationValue<'a>,
}

impl<'a> DebugAnnotation<'a> {
    /// The reference decoder (through [`Fields`]); [`DebugAnnotation::decode`]
    /// must agree with it on every input.
    fn decode_by_fields(raw: &'a [u8]) -> Decoded<Self> {
        let mut a = DebugAnnotation {
            name: None,
            value: AnnotationValue::Other,
        };
        for f in Fields::new(raw) {
            let f = f?;
            match f.number {
                field::DA_NAME => {
                    expect(&f, LEN)?;
                    a.name = Some(f.bytes);
                }
                field::DA_BOOL => {
                    expect(&f, VARINT)?;
                    a.value = AnnotationValue::Bool(f.value != 0);
                }
                field::DA_UINT => {
                    expect(&f, VARINT)?;
                    a.value = AnnotationValue::Uint(f.value);
                }
                field::DA_INT => {
                    expect(&f, VARINT)?;
                    a.value = AnnotationValue::Int(f.value as i64);
                }
                field::DA_DOUBLE => {
                    expect(&f, FIXED64)?;
                    a.value = AnnotationValue::Double(f64::from_bits(f.value));
                }
                field::DA_STRING => {
                    expect(&f, LEN)?;
                    a.value = AnnotationValue::Str(f.bytes);
                }
                _ => {}
            }
        }
        Ok(a)
    }

    /// The annotation's fields, the usual ones by their first tag byte
    /// (the same checks and errors as [`DebugAnnotation::decode_by_fields`]:
    /// anything unusual goes through [`DebugAnnotation::field`]).
    #[inline]
    fn decode(raw: &'a [u8]) -> Decoded<Self> {
        let mut a = DebugAnnotation {
            name: None,
            value: AnnotationValue::Other,
        };
        let mut pos = 0;
        while pos < raw.len() {
            let b = raw[pos];
            let fast = if b == tag1(field::DA_NAME, LEN) {
                len_fast(raw, pos + 1).map(|(body, end)| {
                    a.name = Some(&raw[body..end]);
                    end
                })
            } else if b == tag1(field::DA_STRING, LEN) {
                len_fast(raw, pos + 1).map(|(body, end)| {
                    a.value = AnnotationValue::Str(&raw[body..end]);
                    end
                })
            } else if b == tag1(field::DA_UINT, VARINT) {
                varint_fast(raw, pos + 1).map(|(v, end)| {
                    a.value = AnnotationValue::Uint(v);
                    end
                })
            } else {
                None
            };
            pos = match fast {
                Some(end) => end,
                None => a.field(raw, pos)?,
            };
        }
        Ok(a)
    }

    /// The field at `pos`, any tag; returns its end.
    #[inline(never)]
    fn field(&mut self, raw: &'a [u8], pos: usize) -> Decoded<usize> {
        let (number, wire, value, body, end) = field_fast(raw, pos)?;
        match (number, wire) {
            (field::DA_NAME, LEN) => self.name = Some(&raw[body..end]),
            (field::DA_STRING, LEN) => self.value = AnnotationValue::Str(&raw[body..end]),
            (field::DA_UINT, VARINT) => self.value = AnnotationValue::Uint(value),
            (field::DA_INT, VARINT) => self.value = AnnotationValue::Int(value as i64),
            (field::DA_BOOL, VARINT) => self.value = AnnotationValue::Bool(value != 0),
            (field::DA_DOUBLE, FIXED64) => {
                self.value = AnnotationValue::Double(f64::from_bits(value))
            }
            (
                field::DA_NAME
                | field::DA_STRING
                | field::DA_UINT
                | field::DA_INT
                | field::DA_BOOL
                | field::DA_DOUBLE,
                _,
            ) => return Err((pos, WRONG_WIRE)),
            _ => {}
        }
        Ok(end)
    }
}

impl<'a> TrackEvent<'a> {
    /// The reference decoder (through [`Fields`]); [`TrackEvent::decode`]
    /// must agree with it on every input.
    fn decode_by_fields(raw: &'a [u8]) -> Decoded<Self> {
        let mut e = TrackEvent {
            kind: EventType::Other(0),
            track_uuid: None,
            name: None,
            annotations: &[],
            categories: &[],
            flows: &[],
            first_category: None,
            more_categories: false,
        };
        let (mut ann, mut cat, mut flow) = ((0, 0), (0, 0), (0, 0));
        for f in Fields::new(raw) {
            let f = f?;
            match f.number {
                field::TE_TYPE => {
                    expect(&f, VARINT)?;
                    e.kind = EventType::from_wire(f.value);
                }
                field::TE_TRACK_UUID => {
                    expect(&f, VARINT)?;
                    e.track_uuid = Some(f.value);
                }
                field::TE_NAME => {
                    expect(&f, LEN)?;
                    e.name = Some(f.bytes);
                }
                field::TE_CATEGORIES => {
                    expect(&f, LEN)?;
                    widen(&mut cat, &f);
                    if e.first_category.is_none() {
                        e.first_category = Some(f.bytes);
                    } else {
                        e.more_categories = true;
                    }
                }
                field::TE_FLOW_IDS | field::TE_TERMINATING_FLOW_IDS => {
                    widen(&mut flow, &f);
                    if f.wire == LEN {
                        if f.bytes.len() % 8 != 0 {
                            return Err((f.start, "packed fixed64 flow ids of a bad length"));
                        }
                    } else {
                        expect(&f, FIXED64)?;
                    }
                }
                field::TE_DEBUG_ANNOTATIONS => {
                    expect(&f, LEN)?;
                    widen(&mut ann, &f);
                    let base = base_of(raw, f.bytes);
                    DebugAnnotation::decode_by_fields(f.bytes).map_err(|(o, w)| (o + base, w))?;
                }
                _ => {}
            }
        }
        e.annotations = &raw[ann.0..ann.1];
        e.categories = &raw[cat.0..cat.1];
        e.flows = &raw[flow.0..flow.1];
        Ok(e)
    }

    /// The event's fields, the usual ones by their first one or two tag
    /// bytes (the same checks and errors as [`TrackEvent::decode_by_fields`]:
    /// anything unusual goes through [`TrackEvent::field`];
    /// docs/benchmarks.md#the-pftrace-reader).
    fn decode(raw: &'a [u8]) -> Decoded<Self> {
        let mut e = TrackEvent::EMPTY;
        e.decode_into(raw)?;
        Ok(e)
    }

    /// No field yet.
    const EMPTY: TrackEvent<'static> = TrackEvent {
        kind: EventType::Other(0),
        track_uuid: None,
        name: None,
        annotations: &[],
        categories: &[],
        flows: &[],
        first_category: None,
        more_categories: false,
    };

    /// [`TrackEvent::decode`] into `self` (which is [`TrackEvent::EMPTY`]):
    /// decoded in place, the event is not copied on its way to the caller
    /// (copies of a freshly written event cost a store-forwarding stall
    /// each, docs/benchmarks.md#the-pftrace-reader).
    #[inline(always)]
    fn decode_into(&mut self, raw: &'a [u8]) -> Decoded<()> {
        let e = self;
        let mut spans = EventSpans::default();
        let mut pos = 0;
        while pos < raw.len() {
            let b = raw[pos];
            let fast = if b == tag1(field::TE_TYPE, VARINT) {
                varint_fast(raw, pos + 1).map(|(v, end)| {
                    e.kind = EventType::from_wire(v);
                    end
                })
            } else if b == tag1(field::TE_TRACK_UUID, VARINT) {
                varint_fast(raw, pos + 1).map(|(v, end)| {
                    e.track_uuid = Some(v);
                    end
                })
            } else if b == tag1(field::TE_DEBUG_ANNOTATIONS, LEN) {
                len_fast(raw, pos + 1).and_then(|(body, end)| {
                    DebugAnnotation::decode(&raw[body..end]).ok()?;
                    widen_span(&mut spans.annotations, pos, end);
                    Some(end)
                })
            } else if b >= 0x80 && pos + 1 < raw.len() {
                let t = u16::from_le_bytes([b, raw[pos + 1]]);
                if t == tag2(field::TE_NAME, LEN) {
                    len_fast(raw, pos + 2).map(|(body, end)| {
                        e.name = Some(&raw[body..end]);
                        end
                    })
                } else if t == tag2(field::TE_CATEGORIES, LEN) {
                    len_fast(raw, pos + 2).map(|(body, end)| {
                        e.category(&raw[body..end], &mut spans, pos, end);
                        end
                    })
                } else if t == tag2(field::TE_FLOW_IDS, FIXED64) && pos + 10 <= raw.len() {
                    widen_span(&mut spans.flows, pos, pos + 10);
                    Some(pos + 10)
                } else {
                    None
                }
            } else {
                None
            };
            pos = match fast {
                Some(end) => end,
                None => e.field(raw, pos, &mut spans)?,
            };
        }
        e.annotations = &raw[spans.annotations.0..spans.annotations.1];
        e.categories = &raw[spans.categories.0..spans.categories.1];
        e.flows = &raw[spans.flows.0..spans.flows.1];
        Ok(())
    }

    #[inline(always)]
    fn category(&mut self, cat: &'a [u8], spans: &mut EventSpans, start: usize, end: usize) {
        widen_span(&mut spans.categories, start, end);
        if self.first_category.is_none() {
            self.first_category = Some(cat);
        } else {
            self.more_categories = true;
        }
    }

    /// The field at `pos`, any tag; returns its end.
    #[inline(never)]
    fn field(&mut self, raw: &'a [u8], pos: usize, spans: &mut EventSpans) -> Decoded<usize> {
        let (number, wire, value, body, end) = field_fast(raw, pos)?;
        match (number, wire) {
            (field::TE_TYPE, VARINT) => self.kind = EventType::from_wire(value),
            (field::TE_TRACK_UUID, VARINT) => self.track_uuid = Some(value),
            (field::TE_NAME, LEN) => self.name = Some(&raw[body..end]),
            (field::TE_CATEGORIES, LEN) => self.category(&raw[body..end], spans, pos, end),
            (field::TE_DEBUG_ANNOTATIONS, LEN) => {
                DebugAnnotation::decode(&raw[body..end]).map_err(nested_at(body))?;
                widen_span(&mut spans.annotations, pos, end);
            }
            (field::TE_FLOW_IDS | field::TE_TERMINATING_FLOW_IDS, FIXED64) => {
                widen_span(&mut spans.flows, pos, end)
            }
            (field::TE_FLOW_IDS | field::TE_TERMINATING_FLOW_IDS, LEN) => {
                if (end - body) % 8 != 0 {
                    return Err((pos, "packed fixed64 flow ids of a bad length"));
                }
                widen_span(&mut spans.flows, pos, end);
            }
            (
                field::TE_TYPE
                | field::TE_TRACK_UUID
                | field::TE_NAME
                | field::TE_CATEGORIES
                | field::TE_DEBUG_ANNOTATIONS
                | field::TE_FLOW_IDS
                | field::TE_TERMINATING_FLOW_IDS,
                _,
            ) => return Err((pos, WRONG_WIRE)),
            _ => {}
        }
        Ok(end)
    }

    /// The name as text (invalid UTF-8 replaced).
    pub fn name_str(&self) -> Option<Cow<'a, str>> {
        self.name.map(String::from_utf8_lossy)
    }

    /// `categories`, in order.
    pub fn categories(&self) -> impl Iterator<Item = &'a [u8]> + 'a {
        Fields::new(self.categories)
            .flatten()
            .filter(|f| f.number == field::TE_CATEGORIES)
            .map(|f| f.bytes)
    }

    /// The first of the categories.
    #[inline]
    pub fn first_category(&self) -> Option<&'a [u8]> {
        self.first_category
    }

    /// Whether `cat` is one of the categories.
    #[inline]
    pub fn has_category(&self, cat: &[u8]) -> bool {
        if self.more_categories {
            self.categories().any(|c| c == cat)
        } else {
            self.first_category == Some(cat)
        }
    }

    /// `flow_ids` (fixed64, packed or not), in order.
    pub fn flow_ids(&self) -> impl Iterator<Item = u64> + 'a {
        flow_values(self.flows, field::TE_FLOW_IDS)
    }

    /// `terminating_flow_ids`, in order.
    pub fn terminating_flow_ids(&self) -> impl Iterator<Item = u64> + 'a {
        flow_values(self.flows, field::TE_TERMINATING_FLOW_IDS)
    }

    /// `debug_annotations`, in order.
    pub fn annotations(&self) -> impl Iterator<Item = DebugAnnotation<'a>> + 'a {
        Fields::new(self.annotations)
            .flatten()
            .filter(|f| f.number == field::TE_DEBUG_ANNOTATIONS)
            .filter_map(|f| DebugAnnotation::decode(f.bytes).ok())
    }

    /// The value of the annotation named `name`.
    pub fn annotation(&self, name: &[u8]) -> Option<AnnotationValue<'a>> {
        self.annotations()
            .find(|a| a.name == Some(name))
            .map(|a| a.value)
    }
}

fn flow_values(raw: &[u8], number: u32) -> impl Iterator<Item = u64> + '_ {
    Fields::new(raw)
        .flatten()
        .filter(move |f| f.number == number)
        .flat_map(|f| {
            let packed: &[u8] = if f.wire == LEN { f.bytes } else { &[] };
            let single = (f.wire == FIXED64).then_some(f.value);
            single.into_iter().chain(
                packed
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
            )
        })
}

impl<'a> Packet<'a> {
    /// Decodes a serialized `TracePacket`; the error offset is relative to
    /// `bytes` (see [`Record::decode`] for file offsets).
    #[inline]
    pub fn decode(bytes: &'a [u8]) -> Result<Packet<'a>, PftraceError> {
        let mut p = Packet::empty();
        Self::decode_inner(bytes, &mut p).map_err(|(o, w)| PftraceError::malformed(o as u64, w))?;
        Ok(p)
    }

    /// A packet with no field (for [`Packet::decode_into`] to fill). A
    /// function rather than a constant: a constant this large is copied
    /// in with a memcpy call, this writes the four discriminants.
    #[inline(always)]
    pub fn empty() -> Packet<'a> {
        Packet {
            timestamp: None,
            timestamp_clock_id: None,
            sequence_id: None,
            data: PacketData::Other,
        }
    }

    /// [`Packet::decode`] into `out` (whatever it held before): the
    /// readers' loop, where the packet is decoded where it is used rather
    /// than copied there (docs/benchmarks.md#the-pftrace-reader).
    #[inline]
    pub fn decode_into(bytes: &'a [u8], out: &mut Packet<'a>) -> Result<(), PftraceError> {
        // Field by field: a whole-struct store of the constant is a memcpy
        // call per packet.
        out.timestamp = None;
        out.timestamp_clock_id = None;
        out.sequence_id = None;
        out.data = PacketData::Other;
        Self::decode_inner(bytes, out).map_err(|(o, w)| PftraceError::malformed(o as u64, w))
    }

    /// The reference decoder: every message through [`Fields`], one
    /// [`WireField`] at a time. [`Packet::decode`] must agree with it on
    /// every input (same packet, or the same error at the same offset):
    /// `core/tests/pftrace.rs` and the fuzz target `pftrace` check it.
    #[doc(hidden)]
    pub fn decode_reference(bytes: &'a [u8]) -> Result<Packet<'a>, PftraceError> {
        Self::decode_by_fields(bytes).map_err(|(o, w)| PftraceError::malformed(o as u64, w))
    }

    fn decode_by_fields(bytes: &'a [u8]) -> Decoded<Packet<'a>> {
        let mut p = Packet {
            timestamp: None,
            timestamp_clock_id: None,
            sequence_id: None,
            data: PacketData::Other,
        };
        for f in Fields::new(bytes) {
            let f = f?;
            let nested = |r: Decoded<PacketData<'a>>| {
                let base = base_of(bytes, f.bytes);
                r.map_err(|(o, w)| (o + base, w))
            };
            match f.number {
                field::PACKET_TIMESTAMP => {
                    expect(&f, VARINT)?;
                    p.timestamp = Some(f.value);
                }
                field::PACKET_CLOCK_ID => {
                    expect(&f, VARINT)?;
                    p.timestamp_clock_id = Some(f.value as u32);
                }
                field::PACKET_SEQUENCE_ID => {
                    expect(&f, VARINT)?;
                    p.sequence_id = Some(f.value as u32);
                }
                field::PACKET_TRACK_EVENT => {
                    expect(&f, LEN)?;
                    p.data =
                        nested(TrackEvent::decode_by_fields(f.bytes).map(PacketData::TrackEvent))?;
                }
                field::PACKET_TRACK_DESCRIPTOR => {
                    expect(&f, LEN)?;
                    p.data =
                        nested(TrackDescriptor::decode(f.bytes).map(PacketData::TrackDescriptor))?;
                }
                field::PACKET_CLOCK_SNAPSHOT => {
                    expect(&f, LEN)?;
                    p.data = nested(ClockSnapshot::decode(f.bytes).map(PacketData::ClockSnapshot))?;
                }
                _ => {}
            }
        }
        Ok(p)
    }

    /// The packet's fields, the usual ones by their first one or two tag
    /// bytes, the track event inside decoded the same way (the same checks
    /// and errors as [`Packet::decode_reference`]: anything unusual goes
    /// through [`Packet::field`]; docs/benchmarks.md#the-pftrace-reader).
    #[inline(always)]
    fn decode_inner(bytes: &'a [u8], p: &mut Packet<'a>) -> Decoded<()> {
        let mut pos = 0;
        while pos < bytes.len() {
            let b = bytes[pos];
            let fast = if b == tag1(field::PACKET_TIMESTAMP, VARINT) {
                varint_fast(bytes, pos + 1).map(|(v, end)| {
                    p.timestamp = Some(v);
                    end
                })
            } else if b == tag1(field::PACKET_SEQUENCE_ID, VARINT) {
                varint_fast(bytes, pos + 1).map(|(v, end)| {
                    p.sequence_id = Some(v as u32);
                    end
                })
            } else if b == tag1(field::PACKET_TRACK_EVENT, LEN) {
                len_fast(bytes, pos + 1).and_then(|(body, end)| {
                    p.data = PacketData::TrackEvent(TrackEvent::EMPTY);
                    let PacketData::TrackEvent(te) = &mut p.data else {
                        unreachable!("just set")
                    };
                    te.decode_into(&bytes[body..end]).ok()?;
                    Some(end)
                })
            } else if b >= 0x80
                && pos + 1 < bytes.len()
                && u16::from_le_bytes([b, bytes[pos + 1]]) == tag2(field::PACKET_CLOCK_ID, VARINT)
            {
                varint_fast(bytes, pos + 2).map(|(v, end)| {
                    p.timestamp_clock_id = Some(v as u32);
                    end
                })
            } else {
                None
            };
            pos = match fast {
                Some(end) => end,
                None => p.field(bytes, pos)?,
            };
        }
        Ok(())
    }

    /// The field at `pos`, any tag; returns its end.
    #[inline(never)]
    fn field(&mut self, bytes: &'a [u8], pos: usize) -> Decoded<usize> {
        let (number, wire, value, body, end) = field_fast(bytes, pos)?;
        let raw = &bytes[body..end];
        match (number, wire) {
            (field::PACKET_TIMESTAMP, VARINT) => self.timestamp = Some(value),
            (field::PACKET_SEQUENCE_ID, VARINT) => self.sequence_id = Some(value as u32),
            (field::PACKET_CLOCK_ID, VARINT) => self.timestamp_clock_id = Some(value as u32),
            (field::PACKET_TRACK_EVENT, LEN) => {
                let te = TrackEvent::decode(raw).map_err(nested_at(body))?;
                self.data = PacketData::TrackEvent(te);
            }
            (field::PACKET_TRACK_DESCRIPTOR, LEN) => {
                let td = TrackDescriptor::decode(raw).map_err(nested_at(body))?;
                self.data = PacketData::TrackDescriptor(td);
            }
            (field::PACKET_CLOCK_SNAPSHOT, LEN) => {
                let cs = ClockSnapshot::decode(raw).map_err(nested_at(body))?;
                self.data = PacketData::ClockSnapshot(cs);
            }
            (
                field::PACKET_TIMESTAMP
                | field::PACKET_SEQUENCE_ID
                | field::PACKET_CLOCK_ID
                | field::PACKET_TRACK_EVENT
                | field::PACKET_TRACK_DESCRIPTOR
                | field::PACKET_CLOCK_SNAPSHOT,
                _,
            ) => return Err((pos, WRONG_WIRE)),
            _ => {}
        }
        Ok(end)
    }
}

// ---------------------------------------------------------------------------
// Shallow view (the merge's fast path)

/// What mergetrace needs of a packet to decide whether it changes: read in
/// one pass over the packet's fields and, for a `TrackEvent`, over the
/// event's fields, without decoding nested messages it does not look at
/// (debug annotations, categories, names are skipped after their length was
/// checked). [`Packet::decode`] validates every nested message; this view
/// checks the record's own fields and the event's, which is what a merge
/// that copies the other bytes through needs (measured: half the
/// instructions per packet, docs/benchmarks.md#mergetrace-on-pftrace).
#[derive(Debug, Clone, Copy)]
pub struct PacketView<'a> {
    pub timestamp: Option<u64>,
    pub kind: ViewKind<'a>,
}

/// The payload a [`PacketView`] found.
#[derive(Debug, Clone, Copy)]
pub enum ViewKind<'a> {
    /// A `TrackEvent`: its track uuid and its flow id fields (raw, as
    /// [`TrackEvent`] keeps them: `flow_ids`, `terminating_flow_ids`).
    TrackEvent {
        track_uuid: Option<u64>,
        flows: &'a [u8],
        /// Old-style (varint) flow ids are present: edit through the full
        /// decoder.
        old_flows: bool,
    },
    /// A `TrackDescriptor` (rare: decode it with [`Packet::decode`]).
    TrackDescriptor,
    /// Anything else (clock snapshots, unknown payloads).
    Other,
}

/// `(number, wire, value, payload start, end)` of one field (for LEN fields
/// `value` is the length and the payload is `msg[start..end]`).
type FastField = (u32, u8, u64, usize, usize);

/// The field at `pos` of `msg`, returned in registers rather than as a
/// [`WireField`]: this is the merge's inner loop.
#[inline(always)]
fn field_fast(msg: &[u8], pos: usize) -> Decoded<FastField> {
    let (tag, at) = match msg.get(pos) {
        Some(&b) if b < 0x80 => (u64::from(b), pos + 1),
        Some(_) => match read_varint(&msg[pos..]) {
            Some((v, n)) => (v, pos + n),
            None => return Err((pos, "bad varint")),
        },
        None => return Err((pos, "field cut short")),
    };
    let number = (tag >> 3) as u32;
    if number == 0 || tag >> 3 > u64::from(u32::MAX >> 3) {
        return Err((pos, "bad field number"));
    }
    let wire = (tag & 7) as u8;
    match wire {
        VARINT | LEN => {
            let (v, next) = match msg.get(at) {
                Some(&b) if b < 0x80 => (u64::from(b), at + 1),
                Some(_) => match read_varint(&msg[at..]) {
                    Some((v, n)) => (v, at + n),
                    None => return Err((pos, "bad varint")),
                },
                None => return Err((pos, "field cut short")),
            };
            if wire == VARINT {
                return Ok((number, wire, v, next, next));
            }
            if v > (msg.len() - next) as u64 {
                return Err((pos, "length past the end of the message"));
            }
            Ok((number, wire, v, next, next + v as usize))
        }
        FIXED64 => match msg.get(at..at + 8) {
            Some(b) => Ok((
                number,
                wire,
                u64::from_le_bytes(b.try_into().expect("8 bytes")),
                at,
                at + 8,
            )),
            None => Err((pos, "fixed64 cut short")),
        },
        FIXED32 => match msg.get(at..at + 4) {
            Some(b) => Ok((
                number,
                wire,
                u64::from(u32::from_le_bytes(b.try_into().expect("4 bytes"))),
                at,
                at + 4,
            )),
            None => Err((pos, "fixed32 cut short")),
        },
        _ => Err((pos, "unsupported wire type (groups are not used)")),
    }
}

impl<'a> PacketView<'a> {
    /// Reads the view of a serialized `TracePacket`; error offsets are
    /// relative to `bytes` (as [`Packet::decode`]'s).
    pub fn read(bytes: &'a [u8]) -> Result<PacketView<'a>, PftraceError> {
        Self::read_inner(bytes).map_err(|(o, w)| PftraceError::malformed(o as u64, w))
    }

    #[inline]
    fn read_inner(bytes: &'a [u8]) -> Decoded<PacketView<'a>> {
        let mut view = PacketView {
            timestamp: None,
            kind: ViewKind::Other,
        };
        let mut pos = 0;
        while pos < bytes.len() {
            let (number, wire, value, body, end) = field_fast(bytes, pos)?;
            let wrong = |want: u8| -> Decoded<()> {
                if wire == want {
                    Ok(())
                } else {
                    Err((pos, WRONG_WIRE))
                }
            };
            match number {
                field::PACKET_TIMESTAMP => {
                    wrong(VARINT)?;
                    view.timestamp = Some(value);
                }
                field::PACKET_CLOCK_ID | field::PACKET_SEQUENCE_ID => wrong(VARINT)?,
                field::PACKET_TRACK_EVENT => {
                    wrong(LEN)?;
                    view.kind =
                        Self::track_event(&bytes[body..end]).map_err(|(o, w)| (o + body, w))?;
                }
                field::PACKET_TRACK_DESCRIPTOR => {
                    wrong(LEN)?;
                    view.kind = ViewKind::TrackDescriptor;
                }
                field::PACKET_CLOCK_SNAPSHOT => {
                    wrong(LEN)?;
                    view.kind = ViewKind::Other;
                }
                _ => {}
            }
            pos = end;
        }
        Ok(view)
    }

    #[inline]
    fn track_event(raw: &'a [u8]) -> Decoded<ViewKind<'a>> {
        let mut track_uuid = None;
        let mut flows = (0usize, 0usize);
        let mut old_flows = false;
        let mut pos = 0;
        while pos < raw.len() {
            let (number, wire, value, body, end) = field_fast(raw, pos)?;
            let wrong = |ok: bool| -> Decoded<()> {
                if ok {
                    Ok(())
                } else {
                    Err((pos, WRONG_WIRE))
                }
            };
            match number {
                field::TE_TRACK_UUID => {
                    wrong(wire == VARINT)?;
                    track_uuid = Some(value);
                }
                field::TE_TYPE => wrong(wire == VARINT)?,
                field::TE_NAME | field::TE_CATEGORIES | field::TE_DEBUG_ANNOTATIONS => {
                    wrong(wire == LEN)?
                }
                field::TE_FLOW_IDS | field::TE_TERMINATING_FLOW_IDS => {
                    if wire == LEN {
                        if (end - body) % 8 != 0 {
                            return Err((pos, "packed fixed64 flow ids of a bad length"));
                        }
                    } else {
                        wrong(wire == FIXED64)?;
                    }
                    if flows.1 == 0 {
                        flows.0 = pos;
                    }
                    flows.1 = end;
                }
                field::TE_FLOW_IDS_OLD | field::TE_TERMINATING_FLOW_IDS_OLD => old_flows = true,
                _ => {}
            }
            pos = end;
        }
        Ok(ViewKind::TrackEvent {
            track_uuid,
            flows: &raw[flows.0..flows.1],
            old_flows,
        })
    }
}

impl<'a> Record<'a> {
    /// [`PacketView::read`] of this record's packet, errors at file offsets.
    pub fn view(&self) -> Result<PacketView<'a>, PftraceError> {
        PacketView::read(self.packet).map_err(|e| PftraceError {
            offset: e.offset + self.packet_offset(),
            ..e
        })
    }
}

/// The flow ids of a [`ViewKind::TrackEvent`]'s `flows` (both kinds).
pub fn view_flow_ids(flows: &[u8]) -> impl Iterator<Item = u64> + '_ {
    flow_values(flows, field::TE_FLOW_IDS).chain(flow_values(flows, field::TE_TERMINATING_FLOW_IDS))
}

/// Renames the flow ids of a record in place: `record` is a copy of
/// `raw`, whose [`ViewKind::TrackEvent`] `flows` slice (borrowed from
/// `raw`) holds them; fixed64 values keep their size, so nothing else of
/// the record moves. The merge's path for a packet whose only edit is its
/// flow ids (every event with flows of every input but the first).
pub fn patch_view_flows(
    raw: &[u8],
    flows: &[u8],
    record: &mut [u8],
    mut rename: impl FnMut(u64) -> u64,
) {
    // `flows` must lie inside `raw` (and `record` be as long): else nothing
    // is patched rather than a wrong place.
    let base = (flows.as_ptr() as usize).wrapping_sub(raw.as_ptr() as usize);
    if base > raw.len() || flows.len() > raw.len() - base || record.len() != raw.len() {
        return;
    }
    for g in Fields::new(flows).flatten() {
        match (g.number, g.wire) {
            (field::TE_FLOW_IDS | field::TE_TERMINATING_FLOW_IDS, FIXED64) => {
                let at = base + g.end - 8;
                record[at..at + 8].copy_from_slice(&rename(g.value).to_le_bytes());
            }
            (field::TE_FLOW_IDS | field::TE_TERMINATING_FLOW_IDS, LEN) => {
                let at = base + base_of(flows, g.bytes);
                for (i, c) in g.bytes.chunks_exact(8).enumerate() {
                    let id = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                    let at = at + 8 * i;
                    record[at..at + 8].copy_from_slice(&rename(id).to_le_bytes());
                }
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------
// Rewriting

/// What [`rewrite_packet`] changes; every method defaults to "keep".
pub trait PacketEditor {
    /// `TracePacket.timestamp`.
    fn timestamp(&mut self, ts: u64) -> u64 {
        ts
    }
    /// Every track uuid: `TrackEvent.track_uuid`, `TrackDescriptor.uuid`
    /// and `.parent_uuid`.
    fn track_uuid(&mut self, uuid: u64) -> u64 {
        uuid
    }
    /// Every flow id (`flow_ids`, `terminating_flow_ids`, old forms).
    fn flow_id(&mut self, id: u64) -> u64 {
        id
    }
    /// `pid` of process and thread descriptors.
    fn pid(&mut self, pid: i32) -> i32 {
        pid
    }
    /// `tid` of thread descriptors.
    fn tid(&mut self, tid: i64) -> i64 {
        tid
    }
    /// `ProcessDescriptor.process_name` / `TrackDescriptor.name` of a
    /// process track: `Some(new)` replaces it.
    fn process_name(&mut self, _name: &[u8]) -> Option<Vec<u8>> {
        None
    }
    /// Whether [`PacketEditor::annotation_string`] may change anything
    /// (else debug annotations are copied without being looked at).
    fn edits_annotations(&self) -> bool {
        false
    }
    /// The string value of the `TrackEvent` debug annotation `name`:
    /// `Some(new)` replaces it (uniview tags metric links with their rank,
    /// docs/uniview.md#result-dir).
    fn annotation_string(&mut self, _name: &[u8], _value: &[u8]) -> Option<Vec<u8>> {
        None
    }
}

/// The annotation `raw` (a `DebugAnnotation`) with its string value
/// replaced as `editor` says, or `None` when it stays as it is.
fn edited_annotation(raw: &[u8], editor: &mut impl PacketEditor) -> Option<Vec<u8>> {
    let a = DebugAnnotation::decode(raw).ok()?;
    let (Some(name), AnnotationValue::Str(value)) = (a.name, a.value) else {
        return None;
    };
    let new = editor.annotation_string(name, value)?;
    let mut out = Vec::with_capacity(raw.len() + new.len());
    for f in Fields::new(raw).flatten() {
        if (f.number, f.wire) == (field::DA_STRING, LEN) {
            put_len(&mut out, f.number, &new);
        } else {
            out.extend_from_slice(&raw[f.start..f.end]);
        }
    }
    Some(out)
}

/// Scratch buffers reused by [`rewrite_packet`].
#[derive(Default)]
pub struct RewriteBuffers {
    packet: Vec<u8>,
    inner: Vec<u8>,
    inner2: Vec<u8>,
}

fn put_tag(out: &mut Vec<u8>, number: u32, wire: u8) {
    write_varint(out, (u64::from(number) << 3) | u64::from(wire));
}

/// Appends the varint field `f` of `msg` with value `v`: its original
/// bytes when the value is unchanged (a writer may pad varints), else the
/// tag and `v`.
fn put_varint_field(out: &mut Vec<u8>, msg: &[u8], f: &WireField<'_>, v: u64) {
    if v == f.value {
        out.extend_from_slice(&msg[f.start..f.end]);
    } else {
        put_tag(out, f.number, VARINT);
        write_varint(out, v);
    }
}

fn put_len(out: &mut Vec<u8>, number: u32, body: &[u8]) {
    put_tag(out, number, LEN);
    write_varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

/// Appends to `out` the record (`0a <len> <packet>`) of `packet` with the
/// edits of `editor` applied; fields not edited are copied byte for byte
/// (unknown fields included). `packet` must have decoded with
/// [`Packet::decode`].
pub fn rewrite_packet(
    packet: &[u8],
    editor: &mut impl PacketEditor,
    bufs: &mut RewriteBuffers,
    out: &mut Vec<u8>,
) {
    let RewriteBuffers {
        packet: pk,
        inner,
        inner2,
    } = bufs;
    pk.clear();
    for f in Fields::new(packet).flatten() {
        match (f.number, f.wire) {
            (field::PACKET_TIMESTAMP, VARINT) => {
                put_varint_field(pk, packet, &f, editor.timestamp(f.value));
            }
            (field::PACKET_TRACK_EVENT, LEN) => {
                inner.clear();
                rewrite_track_event(f.bytes, editor, inner);
                put_len(pk, f.number, inner);
            }
            (field::PACKET_TRACK_DESCRIPTOR, LEN) => {
                inner.clear();
                rewrite_track_descriptor(f.bytes, editor, inner, inner2);
                put_len(pk, f.number, inner);
            }
            _ => pk.extend_from_slice(&packet[f.start..f.end]),
        }
    }
    out.push(RECORD_TAG);
    write_varint(out, pk.len() as u64);
    out.extend_from_slice(pk);
}

/// Number of bytes of `v` as a varint.
pub fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// The edits of `editor` applied in place to `record`, a copy of a whole
/// record (`Record::raw`) whose packet is `packet` (already decoded with
/// [`Packet::decode`]), when they keep every length: flow ids (fixed64)
/// always do; uuids, timestamps and pids when the new varint is as long as
/// the old one. Returns `false`, with `record` partly edited, when an edit
/// would change a length or a process name: then [`rewrite_packet`] is
/// needed. Most of mergetrace's renames (flow ids, uuids renamed to values
/// of the same size) take this path: a copy and a few stores.
pub fn patch_record(packet: &[u8], record: &mut [u8], editor: &mut impl PacketEditor) -> bool {
    let Some(start) = record.len().checked_sub(packet.len()) else {
        return false;
    };
    // Offsets below are into `packet`; `record` holds it from `start`.
    let out = &mut record[start..];
    for f in Fields::new(packet).flatten() {
        let ok = match (f.number, f.wire) {
            (field::PACKET_TIMESTAMP, VARINT) => {
                let v = editor.timestamp(f.value);
                put_value(packet, &f, 0, out, v)
            }
            (field::PACKET_TRACK_EVENT, LEN) => {
                let base = base_of(packet, f.bytes);
                Fields::new(f.bytes)
                    .flatten()
                    .all(|g| match (g.number, g.wire) {
                        (field::TE_TRACK_UUID, VARINT) => {
                            let v = editor.track_uuid(g.value);
                            put_value(f.bytes, &g, base, out, v)
                        }
                        (field::TE_FLOW_IDS | field::TE_TERMINATING_FLOW_IDS, FIXED64) => {
                            let at = base + g.end - 8;
                            out[at..at + 8].copy_from_slice(&editor.flow_id(g.value).to_le_bytes());
                            true
                        }
                        (field::TE_FLOW_IDS | field::TE_TERMINATING_FLOW_IDS, LEN) => {
                            let at = base + base_of(f.bytes, g.bytes);
                            for (i, c) in g.bytes.chunks_exact(8).enumerate() {
                                let id = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                                let at = at + 8 * i;
                                out[at..at + 8].copy_from_slice(&editor.flow_id(id).to_le_bytes());
                            }
                            true
                        }
                        (field::TE_FLOW_IDS_OLD | field::TE_TERMINATING_FLOW_IDS_OLD, VARINT) => {
                            let v = editor.flow_id(g.value);
                            put_value(f.bytes, &g, base, out, v)
                        }
                        // A new string changes lengths: re-encode.
                        (field::TE_DEBUG_ANNOTATIONS, LEN) if editor.edits_annotations() => {
                            edited_annotation(g.bytes, editor).is_none()
                        }
                        _ => true,
                    })
            }
            (field::PACKET_TRACK_DESCRIPTOR, LEN) => {
                patch_track_descriptor(f.bytes, base_of(packet, f.bytes), out, editor)
            }
            _ => true,
        };
        if !ok {
            return false;
        }
    }
    true
}

fn patch_track_descriptor(
    raw: &[u8],
    base: usize,
    out: &mut [u8],
    editor: &mut impl PacketEditor,
) -> bool {
    let is_process = Fields::new(raw)
        .flatten()
        .any(|f| f.number == field::TD_PROCESS);
    Fields::new(raw)
        .flatten()
        .all(|g| match (g.number, g.wire) {
            (field::TD_UUID | field::TD_PARENT_UUID, VARINT) => {
                let v = editor.track_uuid(g.value);
                put_value(raw, &g, base, out, v)
            }
            (field::TD_NAME, LEN) => !is_process || editor.process_name(g.bytes).is_none(),
            (field::TD_PROCESS | field::TD_THREAD, LEN) => {
                let inner = base + base_of(raw, g.bytes);
                let thread = g.number == field::TD_THREAD;
                Fields::new(g.bytes)
                    .flatten()
                    .all(|h| match (h.number, h.wire, thread) {
                        (field::PD_PID, VARINT, _) => {
                            let pid = editor.pid(h.value as i32);
                            let v = if pid == h.value as i32 {
                                h.value
                            } else {
                                pid as i64 as u64
                            };
                            put_value(g.bytes, &h, inner, out, v)
                        }
                        (field::THD_TID, VARINT, true) => {
                            let v = editor.tid(h.value as i64) as u64;
                            put_value(g.bytes, &h, inner, out, v)
                        }
                        (field::PD_NAME, LEN, false) => editor.process_name(h.bytes).is_none(),
                        _ => true,
                    })
            }
            _ => true,
        })
}

/// Writes `v` over the value of the varint field `f` of `msg` (which sits
/// at `base` in `out`) if its encoding has the same length.
#[inline]
fn put_value(msg: &[u8], f: &WireField<'_>, base: usize, out: &mut [u8], mut v: u64) -> bool {
    if v == f.value {
        return true;
    }
    // The value follows the tag (read again: a writer may pad varints).
    let tag_len = match msg.get(f.start) {
        Some(&b) if b < 0x80 => 1,
        _ => read_varint(&msg[f.start..]).map_or(0, |t| t.1),
    };
    let at = base + f.start + tag_len;
    let len = f.end - f.start - tag_len;
    if varint_len(v) != len {
        return false;
    }
    for (i, b) in out[at..at + len].iter_mut().enumerate() {
        *b = if i + 1 < len {
            (v as u8) | 0x80
        } else {
            v as u8
        };
        v >>= 7;
    }
    true
}

fn rewrite_track_event(raw: &[u8], editor: &mut impl PacketEditor, out: &mut Vec<u8>) {
    for f in Fields::new(raw).flatten() {
        match (f.number, f.wire) {
            (field::TE_TRACK_UUID, VARINT) => {
                put_varint_field(out, raw, &f, editor.track_uuid(f.value));
            }
            (field::TE_FLOW_IDS | field::TE_TERMINATING_FLOW_IDS, FIXED64) => {
                put_tag(out, f.number, FIXED64);
                out.extend_from_slice(&editor.flow_id(f.value).to_le_bytes());
            }
            (field::TE_FLOW_IDS | field::TE_TERMINATING_FLOW_IDS, LEN) => {
                put_tag(out, f.number, LEN);
                write_varint(out, f.bytes.len() as u64);
                for c in f.bytes.chunks_exact(8) {
                    let id = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                    out.extend_from_slice(&editor.flow_id(id).to_le_bytes());
                }
            }
            (field::TE_FLOW_IDS_OLD | field::TE_TERMINATING_FLOW_IDS_OLD, VARINT) => {
                put_varint_field(out, raw, &f, editor.flow_id(f.value));
            }
            (field::TE_DEBUG_ANNOTATIONS, LEN) if editor.edits_annotations() => {
                match edited_annotation(f.bytes, editor) {
                    Some(new) => put_len(out, f.number, &new),
                    None => out.extend_from_slice(&raw[f.start..f.end]),
                }
            }
            _ => out.extend_from_slice(&raw[f.start..f.end]),
        }
    }
}

fn rewrite_track_descriptor(
    raw: &[u8],
    editor: &mut impl PacketEditor,
    out: &mut Vec<u8>,
    scratch: &mut Vec<u8>,
) {
    let is_process = Fields::new(raw)
        .flatten()
        .any(|f| f.number == field::TD_PROCESS);
    for f in Fields::new(raw).flatten() {
        match (f.number, f.wire) {
            (field::TD_UUID | field::TD_PARENT_UUID, VARINT) => {
                put_varint_field(out, raw, &f, editor.track_uuid(f.value));
            }
            (field::TD_NAME, LEN) if is_process => match editor.process_name(f.bytes) {
                Some(new) => put_len(out, f.number, &new),
                None => out.extend_from_slice(&raw[f.start..f.end]),
            },
            (field::TD_PROCESS, LEN) => {
                scratch.clear();
                for g in Fields::new(f.bytes).flatten() {
                    match (g.number, g.wire) {
                        (field::PD_PID, VARINT) => {
                            // int32: negative values are sign-extended; an unchanged pid keeps its bytes.
                            let pid = editor.pid(g.value as i32);
                            let v = if pid == g.value as i32 {
                                g.value
                            } else {
                                pid as i64 as u64
                            };
                            put_varint_field(scratch, f.bytes, &g, v);
                        }
                        (field::PD_NAME, LEN) => match editor.process_name(g.bytes) {
                            Some(new) => put_len(scratch, g.number, &new),
                            None => scratch.extend_from_slice(&f.bytes[g.start..g.end]),
                        },
                        _ => scratch.extend_from_slice(&f.bytes[g.start..g.end]),
                    }
                }
                put_len(out, f.number, scratch);
            }
            (field::TD_THREAD, LEN) => {
                scratch.clear();
                for g in Fields::new(f.bytes).flatten() {
                    match (g.number, g.wire) {
                        (field::THD_PID, VARINT) => {
                            // int32: negative values are sign-extended; an unchanged pid keeps its bytes.
                            let pid = editor.pid(g.value as i32);
                            let v = if pid == g.value as i32 {
                                g.value
                            } else {
                                pid as i64 as u64
                            };
                            put_varint_field(scratch, f.bytes, &g, v);
                        }
                        (field::THD_TID, VARINT) => {
                            let v = editor.tid(g.value as i64) as u64;
                            put_varint_field(scratch, f.bytes, &g, v);
                        }
                        _ => scratch.extend_from_slice(&f.bytes[g.start..g.end]),
                    }
                }
                put_len(out, f.number, scratch);
            }
            _ => out.extend_from_slice(&raw[f.start..f.end]),
        }
    }
}

// ---------------------------------------------------------------------------
// Writing (tests, tools that emit small traces)

/// Builds packets field by field (used by tests and fixtures).
#[derive(Default, Debug, Clone)]
pub struct PacketBuilder {
    buf: Vec<u8>,
}

impl PacketBuilder {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn varint(mut self, number: u32, v: u64) -> Self {
        put_tag(&mut self.buf, number, VARINT);
        write_varint(&mut self.buf, v);
        self
    }
    pub fn fixed64(mut self, number: u32, v: u64) -> Self {
        put_tag(&mut self.buf, number, FIXED64);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn bytes(mut self, number: u32, b: &[u8]) -> Self {
        put_len(&mut self.buf, number, b);
        self
    }
    pub fn message(self, number: u32, m: PacketBuilder) -> Self {
        self.bytes(number, &m.buf)
    }
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
    /// The packet as a file record `0a <len> <packet>`.
    pub fn record(self) -> Vec<u8> {
        let mut out = vec![RECORD_TAG];
        write_varint(&mut out, self.buf.len() as u64);
        out.extend_from_slice(&self.buf);
        out
    }
}

/// Field numbers for [`PacketBuilder`] users.
pub mod fields {
    pub use super::field::*;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_strings_are_edited_on_request() {
        struct Tag;
        impl PacketEditor for Tag {
            fn edits_annotations(&self) -> bool {
                true
            }
            fn annotation_string(&mut self, name: &[u8], value: &[u8]) -> Option<Vec<u8>> {
                (name == b"id").then(|| [value, b"?rank=3"].concat())
            }
        }
        let raw = slice_begin(1_000, 0x1234_5678_9abc_def0, "k", Some(7));
        let packet = &raw[2..];
        // Lengths change: the in-place patch refuses, the rewrite applies it.
        assert!(!patch_record(packet, &mut raw.clone(), &mut Tag));
        let mut out = Vec::new();
        rewrite_packet(packet, &mut Tag, &mut RewriteBuffers::default(), &mut out);
        let mut r = PacketReader::new(&out[..]);
        let rec = r.next_record().unwrap().unwrap();
        let PacketData::TrackEvent(e) = rec.decode().unwrap().data else {
            panic!("not an event");
        };
        assert_eq!(
            e.annotation(b"id"),
            Some(AnnotationValue::Str(b"42?rank=3"))
        );
        assert_eq!(e.flow_ids().collect::<Vec<_>>(), [7]);
        assert_eq!(e.name, Some(&b"k"[..]));
        // The shallow view sees the same uuid, flows and timestamp.
        let v = PacketView::read(packet).unwrap();
        assert_eq!(v.timestamp, Some(1_000));
        let ViewKind::TrackEvent {
            track_uuid, flows, ..
        } = v.kind
        else {
            panic!("not an event view");
        };
        assert_eq!(track_uuid, Some(0x1234_5678_9abc_def0));
        assert_eq!(view_flow_ids(flows).collect::<Vec<_>>(), [7]);
    }

    #[test]
    fn fast_varints_decode_as_the_byte_loop() {
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for shift in 0..64 {
            for v in [1u64 << shift, (1u64 << shift) - 1, u64::MAX >> shift] {
                let mut b = Vec::new();
                write_varint(&mut b, v);
                cases.push(b.clone());
                b.extend_from_slice(&[0x81, 0x01, 0x7f]);
                cases.push(b);
            }
        }
        // Padded, overlong and cut forms.
        cases.push(vec![0x80; 9].into_iter().chain([0x00]).collect());
        cases.push(vec![0xff; 9].into_iter().chain([0x02]).collect());
        cases.push(vec![0xff; 11]);
        cases.push(vec![0x80; 8]);
        cases.push(vec![0x80; 9]);
        cases.push(vec![0x80, 0x80, 0x01]);
        for b in cases {
            assert_eq!(read_varint(&b), read_varint_slow(&b), "{b:02x?}");
        }
    }

    fn slice_begin(ts: u64, uuid: u64, name: &str, flow: Option<u64>) -> Vec<u8> {
        let mut te = PacketBuilder::new()
            .message(
                fields::TE_DEBUG_ANNOTATIONS,
                PacketBuilder::new()
                    .bytes(fields::DA_NAME, b"id")
                    .bytes(fields::DA_STRING, b"42"),
            )
            .varint(fields::TE_TYPE, 1)
            .varint(fields::TE_TRACK_UUID, uuid)
            .bytes(fields::TE_CATEGORIES, b"gpu_op")
            .bytes(fields::TE_NAME, name.as_bytes());
        if let Some(id) = flow {
            te = te.fixed64(fields::TE_FLOW_IDS, id);
        }
        PacketBuilder::new()
            .varint(fields::PACKET_TIMESTAMP, ts)
            .varint(fields::PACKET_SEQUENCE_ID, 2)
            .message(fields::PACKET_TRACK_EVENT, te)
            .varint(fields::PACKET_CLOCK_ID, 1)
            .record()
    }

    fn descriptor(uuid: u64, pid: i32, name: &str) -> Vec<u8> {
        PacketBuilder::new()
            .varint(fields::PACKET_SEQUENCE_ID, 1)
            .message(
                fields::PACKET_TRACK_DESCRIPTOR,
                PacketBuilder::new().varint(fields::TD_UUID, uuid).message(
                    fields::TD_PROCESS,
                    PacketBuilder::new()
                        .varint(fields::PD_PID, pid as i64 as u64)
                        .bytes(fields::PD_NAME, name.as_bytes()),
                ),
            )
            .record()
    }

    #[test]
    fn reads_and_decodes_records() {
        let mut file = descriptor(7, 12, "RANK 0 HOSTx");
        file.extend(slice_begin(
            1_700_000_000_000_000_123,
            7,
            "k[SIMD32]",
            Some(99),
        ));
        let mut r = PacketReader::new(&file[..]);
        let rec = r.next_record().unwrap().unwrap();
        assert_eq!(rec.offset, 0);
        let PacketData::TrackDescriptor(d) = rec.decode().unwrap().data else {
            panic!("descriptor expected")
        };
        assert_eq!(d.uuid, Some(7));
        assert_eq!(d.process.unwrap().pid, Some(12));
        assert_eq!(d.display_name().unwrap(), "RANK 0 HOSTx");
        let rec = r.next_record().unwrap().unwrap();
        assert_eq!(rec.index, 1);
        let p = rec.decode().unwrap();
        assert_eq!(p.timestamp, Some(1_700_000_000_000_000_123));
        assert_eq!(p.timestamp_clock_id, Some(1));
        assert_eq!(p.sequence_id, Some(2));
        let PacketData::TrackEvent(e) = p.data else {
            panic!("event expected")
        };
        assert_eq!(e.kind, EventType::SliceBegin);
        assert_eq!(e.track_uuid, Some(7));
        assert_eq!(e.name_str().unwrap(), "k[SIMD32]");
        assert!(e.has_category(b"gpu_op"));
        assert_eq!(e.flow_ids().collect::<Vec<_>>(), [99]);
        assert_eq!(e.annotation(b"id").and_then(|v| v.as_u64()), Some(42));
        assert!(r.next_record().unwrap().is_none());
        assert_eq!(r.summary().packets, 2);
        assert_eq!(r.summary().truncation, None);
    }

    #[test]
    fn truncated_file_keeps_complete_records() {
        let mut file = descriptor(7, 12, "p");
        let first = file.len();
        file.extend(slice_begin(5, 7, "k", None));
        for cut in first..file.len() {
            let mut r = PacketReader::new(&file[..cut]);
            assert!(r.next_record().unwrap().is_some());
            assert!(r.next_record().unwrap().is_none(), "cut {cut}");
            let t = r.summary().truncation.clone();
            if cut == first {
                assert_eq!(t, None);
            } else {
                assert_eq!(
                    t,
                    Some(Truncation {
                        offset: first as u64,
                        dropped_bytes: (cut - first) as u64
                    })
                );
            }
        }
    }

    #[test]
    fn errors_carry_byte_offsets() {
        let mut file = descriptor(7, 12, "p");
        let at = file.len();
        file.extend_from_slice(b"{\"traceEvents\": []}");
        let mut r = PacketReader::new(&file[..]);
        r.next_record().unwrap();
        let e = r.next_record().unwrap_err();
        assert_eq!(e.offset, at as u64);
        assert!(e
            .to_string()
            .starts_with(&format!("byte {at}: not a Perfetto")));
        // A complete record whose packet is malformed: a known field with the
        // wrong wire type (timestamp as a string).
        let bad = PacketBuilder::new()
            .varint(fields::PACKET_SEQUENCE_ID, 1)
            .bytes(fields::PACKET_TIMESTAMP, b"x")
            .record();
        let mut r = PacketReader::new(&bad[..]);
        let e = r.next_record().unwrap().unwrap().decode().unwrap_err();
        assert_eq!(e.offset, 4);
        assert!(!sniff(b"{\"traceEvents\""));
        assert!(sniff(&file));
    }

    #[test]
    fn small_reads_and_growing_buffer() {
        struct OneByte<'a>(&'a [u8]);
        impl Read for OneByte<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0.is_empty() || buf.is_empty() {
                    return Ok(0);
                }
                buf[0] = self.0[0];
                self.0 = &self.0[1..];
                Ok(1)
            }
        }
        let big = "x".repeat(1 << 20);
        let mut file = Vec::new();
        for i in 0..3 {
            file.extend(slice_begin(i, 1, &big, None));
        }
        let mut r = PacketReader::new(OneByte(&file));
        let mut n = 0;
        while let Some(rec) = r.next_record().unwrap() {
            rec.decode().unwrap();
            n += 1;
        }
        assert_eq!(n, 3);
        assert!(r.buffer_capacity() < 3 << 20);
        let mut r = PacketReader::with_max_packet(&file[..], 1000);
        assert!(matches!(
            r.next_record().unwrap_err().kind,
            PftraceErrorKind::TooLong { .. }
        ));
    }

    #[test]
    fn rewrite_changes_only_what_the_editor_says() {
        struct Ed;
        impl PacketEditor for Ed {
            fn track_uuid(&mut self, u: u64) -> u64 {
                u + 1_000_000
            }
            fn flow_id(&mut self, id: u64) -> u64 {
                id | 1 << 40
            }
            fn pid(&mut self, p: i32) -> i32 {
                p + 1
            }
            fn process_name(&mut self, n: &[u8]) -> Option<Vec<u8>> {
                Some([b"rank 3 ", n].concat())
            }
        }
        let ev = slice_begin(5, 7, "k", Some(99));
        let mut out = Vec::new();
        let mut bufs = RewriteBuffers::default();
        let rec_packet = &ev[2..];
        rewrite_packet(rec_packet, &mut Ed, &mut bufs, &mut out);
        let mut r = PacketReader::new(&out[..]);
        let p = r.next_record().unwrap().unwrap().decode().unwrap();
        let PacketData::TrackEvent(e) = p.data else {
            panic!()
        };
        assert_eq!(e.track_uuid, Some(1_000_007));
        assert_eq!(e.flow_ids().collect::<Vec<_>>(), [99 | 1 << 40]);
        assert_eq!(e.name_str().unwrap(), "k");
        assert_eq!(e.annotation(b"id"), Some(AnnotationValue::Str(b"42")));
        // Identity editor: byte for byte.
        struct Keep;
        impl PacketEditor for Keep {}
        let mut same = Vec::new();
        rewrite_packet(rec_packet, &mut Keep, &mut bufs, &mut same);
        assert_eq!(same, ev);
        let d = descriptor(7, 12, "p");
        let mut out = Vec::new();
        rewrite_packet(&d[2..], &mut Ed, &mut bufs, &mut out);
        let p = Packet::decode(&out[2..]).unwrap();
        let PacketData::TrackDescriptor(d) = p.data else {
            panic!()
        };
        assert_eq!(d.uuid, Some(1_000_007));
        assert_eq!(d.process.unwrap().pid, Some(13));
        assert_eq!(d.process.unwrap().process_name, Some(&b"rank 3 p"[..]));
    }

    #[test]
    fn patch_in_place_equals_rewrite_when_lengths_stay() {
        struct SameLen;
        impl PacketEditor for SameLen {
            fn track_uuid(&mut self, u: u64) -> u64 {
                u ^ 0x3 // 7 -> 4: one byte either way
            }
            fn flow_id(&mut self, id: u64) -> u64 {
                id | 5 << 32
            }
        }
        struct Longer;
        impl PacketEditor for Longer {
            fn track_uuid(&mut self, u: u64) -> u64 {
                u << 20
            }
        }
        struct Label;
        impl PacketEditor for Label {
            fn process_name(&mut self, n: &[u8]) -> Option<Vec<u8>> {
                Some([b"rank 1 ", n].concat())
            }
        }
        let mut bufs = RewriteBuffers::default();
        for rec in [slice_begin(5, 7, "k", Some(99)), descriptor(7, 12, "p")] {
            let mut expect = Vec::new();
            rewrite_packet(&rec[2..], &mut SameLen, &mut bufs, &mut expect);
            let mut patched = rec.clone();
            assert!(patch_record(&rec[2..], &mut patched, &mut SameLen));
            assert_eq!(patched, expect);
            let mut patched = rec.clone();
            assert!(!patch_record(&rec[2..], &mut patched, &mut Longer));
        }
        let d = descriptor(7, 12, "p");
        assert!(!patch_record(&d[2..], &mut d.clone(), &mut Label));
        let before = slice_begin(5, 7, "k", None);
        let mut e = before.clone();
        assert!(patch_record(&before[2..], &mut e, &mut Label));
        assert_eq!(e, before);
        for v in [0, 1, 127, 128, 1 << 14, u64::MAX] {
            let mut b = Vec::new();
            write_varint(&mut b, v);
            assert_eq!(varint_len(v), b.len(), "{v}");
        }
    }

    #[test]
    fn varints_round_trip() {
        for v in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            write_varint(&mut b, v);
            assert_eq!(read_varint(&b), Some((v, b.len())));
        }
        assert_eq!(read_varint(&[0x80]), None);
        assert_eq!(read_varint(&[0xff; 10]), None);
    }
}
