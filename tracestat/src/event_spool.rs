//! The single pass of `--events` over a file (docs/tracestat.md#events).
//!
//! A row needs what comes later in the file (unitrace writes a kernel
//! before the call that launched it, a host range after the calls inside
//! it, and the names of processes and engines wherever it likes), so rows
//! cannot be written as their events are read. Instead of reading the file
//! twice (an index pass, then a row pass, each parsing every event), the
//! [`Recorder`] takes the events of one read through the trace source
//! (`unitrace_core::timeline`, docs/formats.md#timeline-model): it feeds
//! the [`FileIndex`] and records, per device command, host span or other
//! span, what the row pass reads of it in a compact binary form (about 9
//! bytes an event on generated traces, against about 240 of JSON); once the
//! read is over and the index complete, the records are replayed to the
//! row pass in file order. The row pass sees the very events, in the very
//! order, a second read would hand it, and the index is fed the very calls
//! of the first read, so the rows are identical to the two-pass export's
//! (tested byte for byte on the part files,
//! tracestat/tests/events_single_pass.rs).
//!
//! Memory stays bounded whatever the file size: the records are kept in
//! one buffer of [`SPOOL_CHUNK`] bytes; when it is full it is spilled to an
//! anonymous temporary file in the output folder (unlinked from the start,
//! so nothing is left behind even by a killed run), and the replay reads
//! the file back through one buffer of the same size.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use rustc_hash::FxHashMap as FastMap;
use unitrace_core::timeline::{
    CatId, DeviceOp, Dropped, FlowPoint, HostRole, HostSpan, NameId, Names, OtherSpan, RankSlot,
    TraceSink,
};
use unitrace_core::InputError;

use crate::event_index::FileIndex;
use crate::time::Ns;

/// Records kept in memory before they go to the spill file, and the size
/// of its chunks: a few MiB per file being exported, whatever its size
/// (the default of [`crate::events::EventsPlan::spool_chunk`]).
pub const SPOOL_CHUNK: usize = 4 << 20;

/// The longest record: a flag byte and at most eight varints of ten bytes
/// (track, name, category, start, duration, and two ids and a copy's size
/// or the two collective arguments).
const MAX_RECORD: usize = 1 + 8 * 10;

/// Where a row's event ran, and what the trace source says it is
/// (docs/formats.md#timeline-model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A device command; `memory`: one that copies or fills memory.
    Device { memory: bool },
    /// A host call; `range`: an annotated range rather than an API call;
    /// `collective`: a collective call (docs/tracestat.md#collectives).
    Host { range: bool, collective: bool },
    /// Any other slice with a duration (`os_op`, Kineto's `Trace` spans):
    /// a row, but neither device nor host work.
    Other,
}

/// The event of one row: a device command, host span or other span of the
/// source, with what its row reads of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice<'a> {
    pub pid: u64,
    pub tid: u64,
    pub name: NameId,
    /// The trace's own category (`gpu_op`, `cpu_op`, ...).
    pub cat: CatId,
    pub side: Side,
    pub start: Ns,
    /// Equal to `start` when `closed` is false (the end is unknown).
    pub end: Ns,
    pub closed: bool,
    /// Device commands: their own id and their submission-link id.
    pub instance: Option<u64>,
    pub flow: Option<u64>,
    /// Collective calls: bytes and communicator.
    pub bytes: Option<u64>,
    pub comm: Option<&'a str>,
}

impl Slice<'_> {
    pub fn device(op: &DeviceOp) -> Slice<'static> {
        Slice {
            pid: op.pid,
            tid: op.tid,
            name: op.name,
            cat: op.cat,
            side: Side::Device {
                memory: op.kind.is_memory(),
            },
            start: op.start,
            end: op.end,
            closed: true,
            instance: op.instance,
            flow: op.flow,
            bytes: op.bytes,
            comm: None,
        }
    }

    pub fn host<'s>(span: &HostSpan<'s>) -> Slice<'s> {
        Slice {
            pid: span.pid,
            tid: span.tid,
            name: span.name,
            cat: span.cat,
            side: Side::Host {
                range: span.role == HostRole::Range,
                collective: span.collective.is_some(),
            },
            start: span.start,
            end: span.end,
            closed: span.closed,
            instance: None,
            flow: None,
            bytes: span.collective.and_then(|c| c.bytes),
            comm: span.collective.and_then(|c| c.comm.as_deref()),
        }
    }

    pub fn other(span: &OtherSpan) -> Slice<'static> {
        Slice {
            pid: span.pid,
            tid: span.tid,
            name: span.name,
            cat: span.cat,
            side: Side::Other,
            start: span.start,
            end: span.end,
            closed: true,
            instance: None,
            flow: None,
            bytes: None,
            comm: None,
        }
    }
}

/// Flags of a record (its first byte). Device rows carry ids (and a copy's
/// size), host rows collective arguments, never both: bits 3 to 7 mean one
/// or the other.
mod flag {
    /// Bits 0-1: device, host or other.
    pub const SIDE: u8 = 0b11;
    pub const DEVICE: u8 = 0;
    pub const HOST: u8 = 1;
    pub const OTHER: u8 = 2;
    pub const CLOSED: u8 = 1 << 2;
    // Device rows.
    pub const MEMORY: u8 = 1 << 3;
    pub const INSTANCE: u8 = 1 << 4;
    pub const FLOW: u8 = 1 << 5;
    /// The flow id equals the instance id (always in JSON): not repeated.
    pub const FLOW_IS_INSTANCE: u8 = 1 << 6;
    /// A copy's size follows the ids (Kineto's `args.bytes`).
    pub const DEVICE_BYTES: u8 = 1 << 7;
    // Host rows.
    pub const RANGE: u8 = 1 << 3;
    pub const COLLECTIVE: u8 = 1 << 4;
    pub const BYTES: u8 = 1 << 5;
    pub const COMM: u8 = 1 << 6;
}

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// The spool's numbers of a replayed row's track (`(rank slot, pid,
/// tid)`), category and communicator: the same number always means the
/// same value within one spool, so that the row pass can key its strings
/// by them instead of hashing the strings (docs/tracestat.md#events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowKeys {
    pub track: u32,
    pub cat: u32,
    /// `None` when the slice has no communicator.
    pub comm: Option<u32>,
}

/// The rows of one file, recorded in file order.
pub struct Spool {
    buf: Vec<u8>,
    /// Bytes of records kept in memory before they are spilled.
    chunk: usize,
    /// Where full chunks go; created on the first full chunk.
    spill: Option<File>,
    /// Length of each chunk in `spill`, in order.
    chunks: Vec<usize>,
    spill_dir: PathBuf,
    /// `(rank slot, pid, tid)` of each track id, and back.
    tracks: Vec<(RankSlot, u64, u64)>,
    track_ids: FastMap<(RankSlot, u64, u64), u32>,
    /// The track of the previous record: a thread's events come in runs.
    last_track: Option<((RankSlot, u64, u64), u32)>,
    /// The collective communicators, and back.
    comms: Vec<Box<str>>,
    comm_ids: FastMap<Box<str>, u32>,
    /// Start of the previous record: starts are stored as differences.
    prev_start: Ns,
}

impl Spool {
    /// An empty spool spilling into `spill_dir` in chunks of at most
    /// `chunk` bytes ([`SPOOL_CHUNK`] unless a test wants many chunks).
    pub fn new(spill_dir: &Path, chunk: usize) -> Spool {
        let chunk = chunk.max(MAX_RECORD);
        Spool {
            // Reserved, not touched: pages count only once written, and
            // the buffer never grows past it (no copies by doubling).
            buf: Vec::with_capacity(chunk),
            chunk,
            spill: None,
            chunks: Vec::new(),
            spill_dir: spill_dir.to_path_buf(),
            tracks: Vec::new(),
            track_ids: FastMap::default(),
            last_track: None,
            comms: Vec::new(),
            comm_ids: FastMap::default(),
            prev_start: 0,
        }
    }

    fn spill_error(&self, e: std::io::Error) -> anyhow::Error {
        InputError::io(&self.spill_dir, &e).into()
    }

    /// Records the row of slice `s` of rank slot `slot`.
    pub fn push(&mut self, slot: RankSlot, s: &Slice<'_>) -> Result<()> {
        if self.buf.len() + MAX_RECORD > self.chunk {
            self.spill_chunk()?;
        }
        let key = (slot, s.pid, s.tid);
        let track = match self.last_track {
            Some((k, t)) if k == key => t,
            _ => self.track_id(key),
        };
        let mut flags = if s.closed { flag::CLOSED } else { 0 };
        // The two optional numbers after the times: ids or arguments.
        let (mut first, mut second, mut third) = (None, None, None);
        match s.side {
            Side::Device { memory } => {
                flags |= flag::DEVICE;
                if memory {
                    flags |= flag::MEMORY;
                }
                if s.instance.is_some() {
                    flags |= flag::INSTANCE;
                }
                first = s.instance;
                match s.flow {
                    Some(f) if Some(f) == s.instance => {
                        flags |= flag::FLOW | flag::FLOW_IS_INSTANCE
                    }
                    Some(_) => {
                        flags |= flag::FLOW;
                        second = s.flow;
                    }
                    None => {}
                }
                if s.bytes.is_some() {
                    flags |= flag::DEVICE_BYTES;
                }
                third = s.bytes;
            }
            Side::Host { range, collective } => {
                flags |= flag::HOST;
                if range {
                    flags |= flag::RANGE;
                }
                if collective {
                    flags |= flag::COLLECTIVE;
                }
                if s.bytes.is_some() {
                    flags |= flag::BYTES;
                }
                first = s.bytes;
                if let Some(c) = s.comm {
                    flags |= flag::COMM;
                    second = Some(u64::from(self.comm_id(c)));
                }
            }
            Side::Other => flags |= flag::OTHER,
        }
        let buf = &mut self.buf;
        buf.push(flags);
        put_varint(buf, u64::from(track));
        put_varint(buf, u64::from(s.name.0));
        put_varint(buf, u64::from(s.cat.0));
        put_varint(buf, zigzag(s.start.wrapping_sub(self.prev_start)));
        put_varint(buf, zigzag(s.end.wrapping_sub(s.start)));
        self.prev_start = s.start;
        if let Some(v) = first {
            put_varint(buf, v);
        }
        if let Some(v) = second {
            put_varint(buf, v);
        }
        if let Some(v) = third {
            put_varint(buf, v);
        }
        Ok(())
    }

    fn track_id(&mut self, key: (RankSlot, u64, u64)) -> u32 {
        let t = match self.track_ids.get(&key) {
            Some(&t) => t,
            None => {
                let t = self.tracks.len() as u32;
                self.tracks.push(key);
                self.track_ids.insert(key, t);
                t
            }
        };
        self.last_track = Some((key, t));
        t
    }

    fn comm_id(&mut self, comm: &str) -> u32 {
        if let Some(&id) = self.comm_ids.get(comm) {
            return id;
        }
        let id = self.comms.len() as u32;
        self.comms.push(comm.into());
        self.comm_ids.insert(comm.into(), id);
        id
    }

    fn spill_chunk(&mut self) -> Result<()> {
        if self.spill.is_none() {
            // Unlinked from the start (O_TMPFILE where the file system has
            // it): nothing to clean up after a crash or a signal.
            let file = tempfile::tempfile_in(&self.spill_dir).map_err(|e| self.spill_error(e))?;
            self.spill = Some(file);
        }
        let file = self.spill.as_mut().expect("created above");
        if let Err(e) = file.write_all(&self.buf) {
            return Err(self.spill_error(e));
        }
        self.chunks.push(self.buf.len());
        self.buf.clear();
        Ok(())
    }

    /// Bytes spilled to the temporary file so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.chunks.iter().map(|&n| n as u64).sum()
    }

    /// Hands every recorded row, in the order recorded, to `row` with its
    /// rank slot and its [`RowKeys`].
    pub fn replay(
        mut self,
        mut row: impl FnMut(RankSlot, &Slice<'_>, RowKeys) -> Result<()>,
    ) -> Result<()> {
        let mut prev_start: Ns = 0;
        if self.spill.is_none() {
            let all = std::mem::take(&mut self.buf);
            return self.decode(&all, &mut prev_start, &mut row);
        }
        // The tail joins the file, so that one buffer reads everything back.
        if !self.buf.is_empty() {
            self.spill_chunk()?;
        }
        let mut chunk = std::mem::take(&mut self.buf);
        let Some(mut file) = self.spill.take() else {
            bail!("events spool: no spill file");
        };
        file.seek(SeekFrom::Start(0))
            .map_err(|e| self.spill_error(e))?;
        for &len in &self.chunks {
            chunk.resize(len, 0);
            file.read_exact(&mut chunk)
                .map_err(|e| self.spill_error(e))?;
            self.decode(&chunk, &mut prev_start, &mut row)?;
        }
        Ok(())
    }

    fn decode(
        &self,
        bytes: &[u8],
        prev_start: &mut Ns,
        row: &mut impl FnMut(RankSlot, &Slice<'_>, RowKeys) -> Result<()>,
    ) -> Result<()> {
        let mut r = Cursor { bytes, at: 0 };
        while r.at < bytes.len() {
            let flags = r.byte()?;
            let track = r.varint()? as u32;
            let Some(&(slot, pid, tid)) = self.tracks.get(track as usize) else {
                bail!("events spool: bad track");
            };
            let name = NameId(r.varint()? as u32);
            let cat = CatId(r.varint()? as u32);
            let start = prev_start.wrapping_add(unzigzag(r.varint()?));
            *prev_start = start;
            let end = start.wrapping_add(unzigzag(r.varint()?));
            let mut s = Slice {
                pid,
                tid,
                name,
                cat,
                side: Side::Other,
                start,
                end,
                closed: flags & flag::CLOSED != 0,
                instance: None,
                flow: None,
                bytes: None,
                comm: None,
            };
            let mut comm_id = None;
            match flags & flag::SIDE {
                flag::DEVICE => {
                    s.side = Side::Device {
                        memory: flags & flag::MEMORY != 0,
                    };
                    if flags & flag::INSTANCE != 0 {
                        s.instance = Some(r.varint()?);
                    }
                    if flags & flag::FLOW_IS_INSTANCE != 0 {
                        s.flow = s.instance;
                    } else if flags & flag::FLOW != 0 {
                        s.flow = Some(r.varint()?);
                    }
                    if flags & flag::DEVICE_BYTES != 0 {
                        s.bytes = Some(r.varint()?);
                    }
                }
                flag::HOST => {
                    s.side = Side::Host {
                        range: flags & flag::RANGE != 0,
                        collective: flags & flag::COLLECTIVE != 0,
                    };
                    if flags & flag::BYTES != 0 {
                        s.bytes = Some(r.varint()?);
                    }
                    if flags & flag::COMM != 0 {
                        let id = r.varint()? as u32;
                        let Some(c) = self.comms.get(id as usize) else {
                            bail!("events spool: bad communicator");
                        };
                        s.comm = Some(c);
                        comm_id = Some(id);
                    }
                }
                flag::OTHER => {}
                _ => bail!("events spool: bad record"),
            }
            let keys = RowKeys {
                track,
                cat: cat.0,
                comm: comm_id,
            };
            row(slot, &s, keys)?;
        }
        Ok(())
    }
}

/// Reads records back; every read is bounds-checked (a spill file cut by
/// a failing disk is an error, not a panic).
struct Cursor<'b> {
    bytes: &'b [u8],
    at: usize,
}

impl Cursor<'_> {
    fn byte(&mut self) -> Result<u8> {
        match self.bytes.get(self.at) {
            Some(&b) => {
                self.at += 1;
                Ok(b)
            }
            None => bail!("events spool: record cut short"),
        }
    }

    #[inline]
    fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift > 63 {
                bail!("events spool: bad number");
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(v);
            }
            shift += 7;
        }
    }
}

/// The sink of the single pass: feeds the index and records the rows.
pub struct Recorder<'i> {
    pub index: &'i mut FileIndex,
    pub spool: Spool,
    /// Why the read was stopped: the spill file could not be written.
    pub failed: Option<anyhow::Error>,
}

impl Recorder<'_> {
    fn record(&mut self, slot: RankSlot, s: &Slice<'_>) -> std::io::Result<()> {
        match self.spool.push(slot, s) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.failed = Some(e);
                Err(std::io::Error::other("events spool failed"))
            }
        }
    }
}

impl TraceSink for Recorder<'_> {
    fn process(&mut self, rank: RankSlot, pid: u64, label: &str) {
        self.index.process(rank, pid, label);
    }

    fn thread(&mut self, rank: RankSlot, pid: u64, tid: u64, label: &str) {
        self.index.thread(rank, pid, tid, label);
    }

    fn device_op(&mut self, _: &Names, op: &DeviceOp) -> std::io::Result<()> {
        self.index.device_op(op);
        // A device command whose name does not decode is no row, though
        // the index counts its time.
        if op.name == NameId::NONE {
            return Ok(());
        }
        self.record(op.rank, &Slice::device(op))
    }

    fn host_span(&mut self, _: &Names, span: &HostSpan<'_>) -> std::io::Result<()> {
        self.index.host_span(span);
        self.record(span.rank, &Slice::host(span))
    }

    fn other_span(&mut self, _: &Names, span: &OtherSpan) -> std::io::Result<()> {
        self.index.other_span(span);
        self.record(span.rank, &Slice::other(span))
    }

    fn flow(&mut self, flow: &FlowPoint) {
        self.index.flow(flow);
    }

    fn dropped(&mut self, _: &Dropped<'_>) {
        self.index.dropped += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMS: [&str; 4] = ["comm0", "comm1", "comm2", "comm3"];

    /// A record of every shape: device commands with and without ids,
    /// host calls and ranges with and without collective arguments, other
    /// spans, open ones.
    fn slice(i: u64) -> Slice<'static> {
        let side = match i % 3 {
            0 => Side::Device {
                memory: i.is_multiple_of(5),
            },
            1 => Side::Host {
                range: i % 4 == 1,
                collective: i % 6 == 1,
            },
            _ => Side::Other,
        };
        let device = matches!(side, Side::Device { .. });
        let host = matches!(side, Side::Host { .. });
        Slice {
            pid: 4_294_967_295 - (i % 3),
            tid: i % 5,
            name: NameId((i % 7) as u32),
            cat: CatId((i % 4) as u32),
            side,
            start: 1_700_000_000_000_000_000 + (i as i64 * 7919) % 100_000 - 50_000,
            end: 1_700_000_000_000_000_000 + (i as i64 * 7919) % 100_000 + (i as i64 % 11),
            closed: !i.is_multiple_of(13),
            instance: (device && i.is_multiple_of(2)).then_some(i),
            flow: match i % 4 {
                _ if !device => None,
                0 => Some(i),
                1 | 2 => Some(i + 1_000_000),
                _ => None,
            },
            bytes: (host && i % 6 == 1).then_some(i * 4096),
            comm: (host && i % 12 == 1).then(|| COMMS[((i / 12) % 4) as usize]),
        }
    }

    #[test]
    fn replays_what_was_pushed_in_memory_and_through_the_spill_file() {
        let dir = tempfile::tempdir().unwrap();
        // 1.2 M records: several chunks go through the spill file.
        let n = 1_200_000u64;
        let mut spool = Spool::new(dir.path(), SPOOL_CHUNK);
        for i in 0..n {
            spool.push((i % 2) as usize, &slice(i)).unwrap();
        }
        assert!(
            spool.spilled_bytes() >= 2 * SPOOL_CHUNK as u64,
            "{}",
            spool.spilled_bytes()
        );
        let mut i = 0u64;
        // Each key stands for one value, and each value has one key.
        let mut tracks = std::collections::HashMap::new();
        let mut comm_keys = std::collections::HashMap::new();
        spool
            .replay(|slot, s, keys| {
                assert_eq!(slot, (i % 2) as usize);
                assert_eq!(*s, slice(i), "record {i}");
                let track = (slot, s.pid, s.tid);
                assert_eq!(*tracks.entry(keys.track).or_insert(track), track);
                assert_eq!(keys.cat, s.cat.0);
                assert_eq!(keys.comm.is_some(), s.comm.is_some());
                if let (Some(k), Some(c)) = (keys.comm, s.comm) {
                    assert_eq!(*comm_keys.entry(k).or_insert_with(|| c.to_string()), c);
                }
                i += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(i, n);
        assert_eq!(tracks.len(), 2 * 3 * 5);
        assert_eq!(comm_keys.len(), COMMS.len());
        // The spill file is anonymous: nothing left in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn extreme_times_survive_the_differences() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::new(dir.path(), 7);
        let times = [(i64::MIN, i64::MAX), (i64::MAX, i64::MAX), (0, 0), (-5, 3)];
        for &(start, end) in &times {
            let mut s = slice(1);
            s.start = start;
            s.end = end;
            spool.push(0, &s).unwrap();
        }
        let mut got = Vec::new();
        spool
            .replay(|_, s, _| {
                got.push((s.start, s.end));
                Ok(())
            })
            .unwrap();
        assert_eq!(got, times);
    }
}
