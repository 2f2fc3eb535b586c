//! Each rank's reduced steps out of memory until the cross-rank solve
//! reads them, a window of steps at a time (docs/tracestat.md#memory).
//!
//! What a rank keeps for the solve is its steps' sinks: their chains and
//! what-if lengths, about 9.6 MB per 500 MB rank. Held for every rank until
//! the solve, they made the memory grow with ranks x steps. Once a rank is
//! reduced, its steps' sinks and host range ends (a step's *body*) go to
//! one anonymous temporary file the process shares (in the system's
//! temporary folder, `TMPDIR`; unlinked from the start, so nothing is left
//! behind even by a killed run); the rank keeps each step's bounds, id and
//! kernel time (its *head*) and where its body lies. The solve loads the
//! bodies of a window of steps, solves and replays them, and drops them.
//!
//! Hand-written: the encoding is the packed lists' own bytes (`packed.rs`)
//! behind a few LEB128 integers, which no serialization crate in use writes
//! more simply. A body's layout is checked when read back, so a short
//! read is an error, never a panic; the packed lists within it read as
//! some stretches and lengths whatever their bytes (`packed.rs`), so a
//! garbled read is an error or wrong numbers, never a panic. When the
//! file cannot be written (a full disk), the rank keeps its steps in
//! memory, as before.
//!
//! A rank whose sinks take less than [`SPILL_AT_LEAST`] keeps them: a
//! small rank holds more than that in its summary anyway, and the writes
//! and reads of thousands of small ranks cost more than they save (4,096
//! ranks of 3,000 events: 7% more CPU for 5% less memory).

use std::fs::File;
#[cfg(not(unix))]
use std::io::Read;
use std::io::{self, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex, Weak};

use super::packed::{ChainItems, SinkLens};
use super::reduced::{Sink, StepGraph, Total};
use super::stretch::Kind;

/// The bytes of sinks a rank keeps in memory rather than spill.
pub const SPILL_AT_LEAST: usize = 64 << 10;

/// [`SPILL_AT_LEAST`], or 0 under the tests' hook
/// `UNITRACE_TEST_WINDOW_SINKS` (every rank spilled, solved in windows of
/// that many sinks: `mod.rs`).
pub fn spill_at_least() -> usize {
    static AT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *AT.get_or_init(|| match std::env::var_os("UNITRACE_TEST_WINDOW_SINKS") {
        Some(_) => 0,
        None => SPILL_AT_LEAST,
    })
}

/// About the bytes `steps`' bodies take in memory (their packed lists and
/// their sinks), without encoding them.
fn body_bytes(steps: &[StepGraph]) -> usize {
    let sink = std::mem::size_of::<Sink>() + std::mem::size_of::<Total>();
    let packed = |k: &Sink| k.items.as_bytes().len() + k.lens.as_bytes().len();
    (steps.iter())
        .flat_map(|s| &s.sinks)
        .map(|k| sink + packed(k))
        .sum()
}

/// Where one step's body lies in the file, and its count of sinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Place {
    at: u64,
    len: u32,
    sinks: u32,
}

/// The file the bodies of every rank of the process go to, appended to
/// (its length behind the lock).
#[derive(Debug)]
struct SpillFile {
    file: File,
    end: Mutex<u64>,
}

/// One rank's step bodies in the spill file (its heads stay in
/// `RankPath::steps`, with no sinks and no host range end lengths).
#[derive(Debug, Clone)]
pub struct Spill {
    file: Arc<SpillFile>,
    places: Vec<Place>,
    /// Over the rank's sinks and host range ends: the fewest what-if
    /// lengths a source has (`usize::MAX` for none), and whether any sink
    /// has lengths.
    pub widths: (usize, bool),
}

impl PartialEq for Spill {
    fn eq(&self, other: &Spill) -> bool {
        Arc::ptr_eq(&self.file, &other.file) && self.places == other.places
    }
}

/// The spill file of the process, made when first needed and closed when
/// no rank refers to it any more.
fn shared_file() -> io::Result<Arc<SpillFile>> {
    static SHARED: Mutex<Weak<SpillFile>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(f) = shared.upgrade() {
        return Ok(f);
    }
    let f = Arc::new(SpillFile {
        file: tempfile::tempfile()?,
        end: Mutex::new(0),
    });
    *shared = Arc::downgrade(&f);
    Ok(f)
}

/// The fewest what-if lengths a source of `steps`' sinks and host range
/// ends has (`usize::MAX` for none), and whether any sink has lengths.
pub fn lens_widths(steps: &[StepGraph]) -> (usize, bool) {
    let mut fewest = usize::MAX;
    let mut any = false;
    for s in steps {
        let host = s.host_end.iter().map(|h| &h.1);
        for lens in host.chain(s.sinks.iter().map(|k| &k.lens)) {
            fewest = lens.shape().map(|(_, n)| n).fold(fewest, usize::min);
        }
        any |= s.sinks.iter().any(|k| !k.lens.is_empty());
    }
    (fewest, any)
}

/// Moves the bodies of `steps` to the spill file, leaving their heads;
/// `None` (and `steps` as they were) when they take fewer than `at_least`
/// bytes ([`SPILL_AT_LEAST`], [`spill_at_least`]) or the file cannot be
/// written.
pub fn spill(steps: &mut [StepGraph], at_least: usize) -> Option<Spill> {
    if body_bytes(steps) < at_least {
        return None;
    }
    let widths = lens_widths(steps);
    let mut bytes = Vec::new();
    let mut places = Vec::with_capacity(steps.len());
    for s in steps.iter() {
        let from = bytes.len();
        encode(s, &mut bytes);
        let len = u32::try_from(bytes.len() - from).ok()?;
        let sinks = u32::try_from(s.sinks.len()).ok()?;
        places.push(Place {
            at: from as u64,
            len,
            sinks,
        });
    }
    let file = shared_file().ok()?;
    let base = file.append(&bytes).ok()?;
    for p in &mut places {
        p.at += base;
    }
    for s in steps.iter_mut() {
        s.sinks = Vec::new();
        if let Some(h) = &mut s.host_end {
            h.1 = SinkLens::default();
        }
    }
    Some(Spill {
        file,
        places,
        widths,
    })
}

impl SpillFile {
    /// Appends `bytes`; where they begin.
    fn append(&self, bytes: &[u8]) -> io::Result<u64> {
        let mut end = self.end.lock().unwrap_or_else(|e| e.into_inner());
        let at = *end;
        (&self.file).seek(SeekFrom::Start(at))?;
        (&self.file).write_all(bytes)?;
        *end = at + bytes.len() as u64;
        Ok(at)
    }

    /// `len` bytes from `at`: where the system reads at a place, without
    /// the lock (the solve reads the ranks' parts of a window in parallel).
    fn read(&self, at: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0; len];
        #[cfg(unix)]
        std::os::unix::fs::FileExt::read_exact_at(&self.file, &mut buf, at)?;
        #[cfg(not(unix))]
        {
            let _end = self.end.lock().unwrap_or_else(|e| e.into_inner());
            (&self.file).seek(SeekFrom::Start(at))?;
            (&self.file).read_exact(&mut buf)?;
        }
        Ok(buf)
    }
}

impl Spill {
    /// Step `k`'s count of sinks (0 past the steps).
    pub fn sinks(&self, k: usize) -> usize {
        self.places.get(k).map_or(0, |p| p.sinks as usize)
    }

    /// Steps `ks` (a range of the rank's steps) whole: their `heads` with
    /// their bodies read back.
    pub fn load(
        &self,
        heads: &[StepGraph],
        ks: std::ops::Range<usize>,
    ) -> io::Result<Vec<StepGraph>> {
        let (Some(first), Some(last)) = (
            self.places.get(ks.start),
            ks.end.checked_sub(1).and_then(|l| self.places.get(l)),
        ) else {
            return Ok(Vec::new());
        };
        let len = (last.at + u64::from(last.len)).saturating_sub(first.at);
        let bytes = self
            .file
            .read(first.at, usize::try_from(len).map_err(io::Error::other)?)?;
        let mut out = Vec::with_capacity(ks.len());
        for k in ks {
            let (Some(p), Some(head)) = (self.places.get(k), heads.get(k)) else {
                return Err(garbled());
            };
            let from = usize::try_from(p.at - first.at).map_err(io::Error::other)?;
            let body = bytes.get(from..from + p.len as usize).ok_or_else(garbled)?;
            out.push(decode(head, body).ok_or_else(garbled)?);
        }
        Ok(out)
    }
}

fn garbled() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "the critical path's spill file read back other than it was written",
    )
}

/// A step's body: its sinks, then its host range end.
fn encode(s: &StepGraph, out: &mut Vec<u8>) {
    put(out, s.sinks.len() as u64);
    for k in &s.sinks {
        put(out, zigzag(k.time));
        put(out, k.source.map_or(0, |j| u64::from(j) + 1));
        put_bytes(out, k.items.as_bytes());
        put(out, k.totals.len() as u64);
        for &(kind, name, count, time) in &k.totals {
            put(out, kind as u64);
            put(out, u64::from(name));
            put(out, count);
            put(out, zigzag(time));
        }
        put_bytes(out, k.lens.as_bytes());
    }
    match &s.host_end {
        None => put(out, 0),
        Some((time, lens)) => {
            put(out, 1);
            put(out, zigzag(*time));
            put_bytes(out, lens.as_bytes());
        }
    }
}

/// `head` with the body `bytes` ([`encode`]); `None` when they are not one.
fn decode(head: &StepGraph, bytes: &[u8]) -> Option<StepGraph> {
    let mut r = Reader { bytes };
    let n = r.number()?;
    let mut sinks = Vec::with_capacity(usize::try_from(n).ok()?.min(bytes.len()));
    for _ in 0..n {
        let time = unzigzag(r.number()?);
        let source = match r.number()? {
            0 => None,
            j => Some(u32::try_from(j - 1).ok()?),
        };
        let items = ChainItems::from_bytes(r.bytes()?);
        let t = r.number()?;
        let mut totals: Vec<Total> = Vec::with_capacity(usize::try_from(t).ok()?.min(bytes.len()));
        for _ in 0..t {
            let kind = *Kind::ALL.get(usize::try_from(r.number()?).ok()?)?;
            let name = u32::try_from(r.number()?).ok()?;
            totals.push((kind, name, r.number()?, unzigzag(r.number()?)));
        }
        let lens = SinkLens::from_bytes(r.bytes()?);
        sinks.push(Sink {
            time,
            source,
            items,
            totals,
            lens,
        });
    }
    let host_end = match r.number()? {
        0 => None,
        1 => Some((unzigzag(r.number()?), SinkLens::from_bytes(r.bytes()?))),
        _ => return None,
    };
    r.bytes.is_empty().then(|| StepGraph {
        sinks,
        host_end,
        ..head.clone()
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn number(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for (i, &b) in self.bytes.iter().enumerate().take(10) {
            v |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                self.bytes = &self.bytes[i + 1..];
                return Some(v);
            }
        }
        None
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.number()?).ok()?;
        let (out, rest) = (self.bytes.get(..n)?, self.bytes.get(n..)?);
        self.bytes = rest;
        Some(out)
    }
}

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyzers::critical_path::stretch::Item;
    use crate::time::Ns;

    fn step(id: i64, sinks: usize, host: bool) -> StepGraph {
        let item = |start, dur, kind, name| Item {
            start,
            dur,
            kind,
            name,
        };
        StepGraph {
            id: Some(id),
            start: 1_000 * id,
            end: 1_000 * id + 900,
            kernel_ns: 400 + id,
            sinks: (0..sinks)
                .map(|i| Sink {
                    time: 1_000 * id + 100 * i as Ns,
                    source: (i % 2 == 1).then_some(i as u32),
                    items: ChainItems::new(&[
                        item(1_000 * id, 50, Kind::Launch, 3),
                        item(1_000 * id + 50, -7, Kind::SyncWait, u32::MAX),
                    ]),
                    totals: if i == 0 {
                        vec![
                            (Kind::Idle, 9, 2, -5),
                            (Kind::Compute, 1, u64::MAX, Ns::MAX),
                        ]
                    } else {
                        Vec::new()
                    },
                    lens: SinkLens::from(vec![
                        (None, vec![5, 4, 3]),
                        (Some(i as u32), vec![Ns::MIN, 0]),
                    ]),
                })
                .collect(),
            host_end: host.then(|| {
                (
                    1_000 * id + 800,
                    SinkLens::from(vec![(Some(7), vec![1, 2, 3, 4])]),
                )
            }),
        }
    }

    /// Spilled steps come back whole, a few or one at a time; the heads
    /// keep their bounds and ids, the counts of sinks and what-if widths
    /// are those of the whole steps.
    #[test]
    fn spilled_steps_read_back_as_they_were() {
        let whole = vec![
            step(1, 3, true),
            step(2, 0, false),
            step(3, 1, false),
            step(4, 2, true),
        ];
        let mut steps = whole.clone();
        let widths = lens_widths(&steps);
        assert_eq!(widths, (2, true));
        // Too small to leave memory: kept as they are.
        assert!(spill(&mut steps, SPILL_AT_LEAST).is_none());
        assert_eq!(steps, whole);
        let s = spill(&mut steps, 0).unwrap();
        assert!(steps.iter().all(|st| st.sinks.is_empty()));
        assert!(steps
            .iter()
            .all(|st| st.host_end.iter().all(|h| h.1.is_empty())));
        assert_eq!(
            steps
                .iter()
                .map(|st| (st.id, st.start, st.end))
                .collect::<Vec<_>>(),
            whole
                .iter()
                .map(|st| (st.id, st.start, st.end))
                .collect::<Vec<_>>()
        );
        assert_eq!(s.widths, widths);
        assert_eq!(
            (0..5).map(|k| s.sinks(k)).collect::<Vec<_>>(),
            [3, 0, 1, 2, 0]
        );
        assert_eq!(s.load(&steps, 0..4).unwrap(), whole);
        assert_eq!(s.load(&steps, 2..3).unwrap(), whole[2..3]);
        assert_eq!(s.load(&steps, 3..3).unwrap(), Vec::<StepGraph>::new());
        // Another rank's steps go to the same file after these.
        let mut more = vec![step(9, 2, false)];
        let t = spill(&mut more, 0).unwrap();
        assert!(Arc::ptr_eq(&s.file, &t.file));
        assert_eq!(t.load(&more, 0..1).unwrap(), vec![step(9, 2, false)]);
        assert_eq!(s.load(&steps, 1..4).unwrap(), whole[1..4]);
    }

    /// A body read back shorter or with any byte changed is refused or
    /// read as some steps, never a panic or a read past its end.
    #[test]
    fn garbled_bodies_are_refused_not_a_panic() {
        let whole = step(5, 3, true);
        let mut bytes = Vec::new();
        encode(&whole, &mut bytes);
        assert_eq!(decode(&whole, &bytes), Some(whole.clone()));
        for n in 0..bytes.len() {
            assert_eq!(decode(&whole, &bytes[..n]), None, "cut at {n}");
        }
        for i in 0..bytes.len() {
            for v in [0x00, 0x7f, 0x80, 0xff] {
                let mut b = bytes.clone();
                b[i] = v;
                if let Some(s) = decode(&whole, &b) {
                    // Whatever it reads as, its lists read to their ends.
                    for k in &s.sinks {
                        let _ = k.items.to_vec();
                        let _ = k.lens.iter().count();
                    }
                }
            }
        }
    }
}
