//! The single pass of `--events` over a file (docs/tracestat.md#events).
//!
//! A row needs what comes later in the file (unitrace writes a kernel
//! before the call that launched it, a host range after the calls inside
//! it, and the names of processes and engines wherever it likes), so rows
//! cannot be written as their events are read. Instead of reading the file
//! twice (an index pass, then a row pass, each parsing every event), one
//! walk feeds the [`FileIndex`] and records, per slice, what the row pass
//! reads of it in a compact binary form (about 9 bytes an event on
//! generated traces, against about 240 of JSON); once the walk is over and
//! the index complete, the
//! records are replayed to the row pass in file order. The row pass sees
//! the very slices, in the very order, a second walk would hand it, and
//! the index is fed the very calls of the first walk, so the rows are
//! identical to the two-pass export's (tested byte for byte on the part
//! files, tracestat/tests/events_single_pass.rs).
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
use unitrace_core::InputError;

use crate::event_index::FileIndex;
use crate::event_scan::{Names, Side, Slice, Visitor, NO_NAME};
use crate::time::Ns;

/// Records kept in memory before they go to the spill file, and the size
/// of its chunks: a few MiB per file being exported, whatever its size
/// (the default of [`crate::events::EventsPlan::spool_chunk`]).
pub const SPOOL_CHUNK: usize = 4 << 20;

/// The longest record: a flag byte and at most nine varints of ten bytes.
const MAX_RECORD: usize = 1 + 9 * 10;

/// Flags of a record (its first byte).
mod flag {
    /// Bits 0-1: the [`super::Side`].
    pub const SIDE: u8 = 0b11;
    pub const CLOSED: u8 = 1 << 2;
    pub const INSTANCE: u8 = 1 << 3;
    pub const FLOW: u8 = 1 << 4;
    /// The flow id equals the instance id (always in JSON): not repeated.
    pub const FLOW_IS_INSTANCE: u8 = 1 << 5;
    pub const BYTES: u8 = 1 << 6;
    pub const COMM: u8 = 1 << 7;
}

fn side_bits(side: Side) -> u8 {
    match side {
        Side::Device => 0,
        Side::Host => 1,
        Side::Other => 2,
    }
}

fn side_of(bits: u8) -> Result<Side> {
    Ok(match bits & flag::SIDE {
        0 => Side::Device,
        1 => Side::Host,
        2 => Side::Other,
        _ => bail!("events spool: bad record"),
    })
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

/// The spool's numbers of a replayed row's track (`(accumulator, pid,
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
    /// `(accumulator, pid, tid)` of each track id, and back.
    tracks: Vec<(usize, u64, u64)>,
    track_ids: FastMap<(usize, u64, u64), u32>,
    /// The trace's own categories (`cat`) and collective communicators.
    cats: Vec<Box<str>>,
    comms: Vec<String>,
    comm_ids: FastMap<String, u32>,
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
            cats: Vec::new(),
            comms: Vec::new(),
            comm_ids: FastMap::default(),
            prev_start: 0,
        }
    }

    fn spill_error(&self, e: std::io::Error) -> anyhow::Error {
        InputError::io(&self.spill_dir, &e).into()
    }

    /// Records the row of slice `s`, routed to accumulator `acc`.
    pub fn push(&mut self, acc: usize, s: &Slice<'_>) -> Result<()> {
        if self.buf.len() + MAX_RECORD > self.chunk {
            self.spill_chunk()?;
        }
        let key = (acc, s.pid, s.tid);
        let track = match self.track_ids.get(&key) {
            Some(&t) => t,
            None => {
                let t = self.tracks.len() as u32;
                self.tracks.push(key);
                self.track_ids.insert(key, t);
                t
            }
        };
        // A handful of categories per file: a short search, no hashing.
        let cat = match self.cats.iter().position(|c| **c == *s.cat) {
            Some(c) => c,
            None => {
                self.cats.push(s.cat.into());
                self.cats.len() - 1
            }
        };
        let mut flags = side_bits(s.side);
        if s.closed {
            flags |= flag::CLOSED;
        }
        if s.instance.is_some() {
            flags |= flag::INSTANCE;
        }
        match s.flow {
            Some(f) if Some(f) == s.instance => flags |= flag::FLOW | flag::FLOW_IS_INSTANCE,
            Some(_) => flags |= flag::FLOW,
            None => {}
        }
        if s.bytes.is_some() {
            flags |= flag::BYTES;
        }
        let comm = match &s.comm {
            Some(c) => {
                flags |= flag::COMM;
                Some(match self.comm_ids.get(c) {
                    Some(&id) => id,
                    None => {
                        let id = self.comms.len() as u32;
                        self.comms.push(c.clone());
                        self.comm_ids.insert(c.clone(), id);
                        id
                    }
                })
            }
            None => None,
        };
        let buf = &mut self.buf;
        buf.push(flags);
        put_varint(buf, track as u64);
        put_varint(buf, s.name as u64);
        put_varint(buf, cat as u64);
        put_varint(buf, zigzag(s.start.wrapping_sub(self.prev_start)));
        put_varint(buf, zigzag(s.end.wrapping_sub(s.start)));
        self.prev_start = s.start;
        if let Some(i) = s.instance {
            put_varint(buf, i);
        }
        if let Some(f) = s.flow.filter(|_| flags & flag::FLOW_IS_INSTANCE == 0) {
            put_varint(buf, f);
        }
        if let Some(b) = s.bytes {
            put_varint(buf, b);
        }
        if let Some(c) = comm {
            put_varint(buf, c as u64);
        }
        Ok(())
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
    /// accumulator and its [`RowKeys`].
    pub fn replay(
        mut self,
        mut row: impl FnMut(usize, &Slice<'_>, RowKeys) -> Result<()>,
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
        row: &mut impl FnMut(usize, &Slice<'_>, RowKeys) -> Result<()>,
    ) -> Result<()> {
        let mut r = Cursor { bytes, at: 0 };
        while r.at < bytes.len() {
            let flags = r.byte()?;
            let track = r.varint()? as u32;
            let Some(&(acc, pid, tid)) = self.tracks.get(track as usize) else {
                bail!("events spool: bad track");
            };
            let name = r.varint()? as u32;
            let cat_id = r.varint()? as u32;
            let Some(cat) = self.cats.get(cat_id as usize) else {
                bail!("events spool: bad category");
            };
            let start = prev_start.wrapping_add(unzigzag(r.varint()?));
            *prev_start = start;
            let end = start.wrapping_add(unzigzag(r.varint()?));
            let instance = if flags & flag::INSTANCE != 0 {
                Some(r.varint()?)
            } else {
                None
            };
            let flow = if flags & flag::FLOW_IS_INSTANCE != 0 {
                instance
            } else if flags & flag::FLOW != 0 {
                Some(r.varint()?)
            } else {
                None
            };
            let bytes = if flags & flag::BYTES != 0 {
                Some(r.varint()?)
            } else {
                None
            };
            let (comm, comm_id) = if flags & flag::COMM != 0 {
                let id = r.varint()? as u32;
                match self.comms.get(id as usize) {
                    Some(c) => (Some(c.clone()), Some(id)),
                    None => bail!("events spool: bad communicator"),
                }
            } else {
                (None, None)
            };
            row(
                acc,
                &Slice {
                    pid,
                    tid,
                    name,
                    cat,
                    side: side_of(flags)?,
                    start,
                    end,
                    closed: flags & flag::CLOSED != 0,
                    instance,
                    flow,
                    bytes,
                    comm,
                },
                RowKeys {
                    track,
                    cat: cat_id,
                    comm: comm_id,
                },
            )?;
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

/// The visitor of the single pass: feeds the index and records the rows.
pub struct Recorder<'i> {
    pub index: &'i mut FileIndex,
    pub spool: Spool,
}

impl Visitor for Recorder<'_> {
    fn process(&mut self, pid: u64, label: &str) {
        self.index.process(pid, label);
    }

    fn thread(&mut self, pid: u64, tid: u64, label: &str) {
        self.index.thread(pid, tid, label);
    }

    fn flow_start(&mut self, pid: u64, tid: u64, id: u64, ts: Ns, call: Option<u32>) {
        self.index.flow_start(pid, tid, id, ts, call);
    }

    fn slice(&mut self, names: &Names, s: &Slice<'_>) -> Result<()> {
        self.index.slice(names, s)?;
        // A device command whose name does not decode is no row (the row
        // pass skips it), though the index counts its time.
        if s.name == NO_NAME {
            return Ok(());
        }
        // The accumulator the row pass's own router would give: it replays
        // the same process names in the same order (event_index::Router).
        let acc = self.index.router.acc(s.pid);
        self.spool.push(acc, s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(i: u64, cat: &str) -> Slice<'_> {
        Slice {
            pid: 4_294_967_295 - (i % 3),
            tid: i % 5,
            name: (i % 7) as u32,
            cat,
            side: match i % 3 {
                0 => Side::Device,
                1 => Side::Host,
                _ => Side::Other,
            },
            start: 1_700_000_000_000_000_000 + (i as i64 * 7919) % 100_000 - 50_000,
            end: 1_700_000_000_000_000_000 + (i as i64 * 7919) % 100_000 + (i as i64 % 11),
            closed: !i.is_multiple_of(13),
            instance: i.is_multiple_of(2).then_some(i),
            flow: match i % 4 {
                0 => Some(i),
                1 => Some(i + 1_000_000),
                _ => None,
            },
            bytes: (i % 6 == 1).then_some(i * 4096),
            comm: (i % 6 == 1).then(|| format!("comm{}", i % 4)),
        }
    }

    fn key(s: &Slice<'_>) -> String {
        format!("{s:?}")
    }

    #[test]
    fn replays_what_was_pushed_in_memory_and_through_the_spill_file() {
        let dir = tempfile::tempdir().unwrap();
        let cats = ["gpu_op", "cpu_op", "os_op", ""];
        // 1.2 M records: several chunks go through the spill file.
        let n = 1_200_000u64;
        let mut spool = Spool::new(dir.path(), SPOOL_CHUNK);
        for i in 0..n {
            spool
                .push((i % 2) as usize, &slice(i, cats[(i % 4) as usize]))
                .unwrap();
        }
        assert!(
            spool.spilled_bytes() >= 2 * SPOOL_CHUNK as u64,
            "{}",
            spool.spilled_bytes()
        );
        let mut i = 0u64;
        // Each key stands for one value, and each value has one key.
        let mut tracks = std::collections::HashMap::new();
        let mut cat_keys = std::collections::HashMap::new();
        let mut comm_keys = std::collections::HashMap::new();
        spool
            .replay(|acc, s, keys| {
                assert_eq!(acc, (i % 2) as usize);
                assert_eq!(key(s), key(&slice(i, cats[(i % 4) as usize])), "record {i}");
                let track = (acc, s.pid, s.tid);
                assert_eq!(*tracks.entry(keys.track).or_insert(track), track);
                let cat = cat_keys
                    .entry(keys.cat)
                    .or_insert_with(|| s.cat.to_string());
                assert_eq!(cat, s.cat);
                assert_eq!(keys.comm.is_some(), s.comm.is_some());
                if let (Some(k), Some(c)) = (keys.comm, &s.comm) {
                    assert_eq!(comm_keys.entry(k).or_insert(c.clone()), c);
                }
                i += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(i, n);
        assert_eq!(tracks.len(), 2 * 3 * 5);
        assert_eq!(cat_keys.len(), cats.len());
        assert_eq!(comm_keys.len(), 2);
        // The spill file is anonymous: nothing left in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn extreme_times_survive_the_differences() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::new(dir.path(), 7);
        let times = [(i64::MIN, i64::MAX), (i64::MAX, i64::MAX), (0, 0), (-5, 3)];
        for &(start, end) in &times {
            let mut s = slice(1, "cpu_op");
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
