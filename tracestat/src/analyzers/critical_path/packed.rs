//! What a sink keeps until the cross-rank solve, packed: every rank's sinks
//! are held at once (docs/tracestat.md#scale).
//!
//! [`ChainItems`]: its chain's stretches as variable-length integers
//! instead of 24-byte [`Item`]s. A chain tiles its time: each stretch starts
//! where the one before ended, so its start costs one byte, and most
//! lengths and name ids two or three. [`SinkLens`]: its what-if lengths in
//! one packed list instead of a list of 8-byte lengths per source.
//!
//! Both are exact (any `i64` times, any `u32` name id) and a partial
//! carries them as before (a list of `{start, dur, kind, name}`, a list of
//! `[source, [length, ...]]`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::stretch::{Item, Kind};
use crate::time::Ns;

/// Stretches packed: per stretch, the start's distance from the previous
/// stretch's end (the first: from 0), zigzag; the length, zigzag; the name
/// id shifted left by 3 with the kind's place in [`Kind::ALL`]. Each as a
/// LEB128 unsigned integer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChainItems {
    bytes: Box<[u8]>,
}

impl ChainItems {
    pub fn new(items: &[Item]) -> ChainItems {
        let bytes = packed(|bytes| {
            let mut end: Ns = 0;
            for it in items {
                put(bytes, zigzag(it.start.wrapping_sub(end)));
                put(bytes, zigzag(it.dur));
                put(bytes, (u64::from(it.name) << 3) | kind_code(it.kind));
                end = it.start.wrapping_add(it.dur);
            }
        });
        ChainItems { bytes }
    }

    /// The stretches in time order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            bytes: &self.bytes,
            end: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn to_vec(&self) -> Vec<Item> {
        self.iter().collect()
    }

    /// The packed bytes (the spill file's copy, `spill.rs`).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Stretches packed as [`ChainItems::as_bytes`] gave them. Any bytes
    /// read as some stretches, never a panic: [`Iter`] takes a list that
    /// ends within a number as ending there, and an unknown kind as idle.
    /// Checking each number here instead took a third of the time of
    /// reading the spill back (docs/tracestat.md#scale).
    pub fn from_bytes(bytes: &[u8]) -> ChainItems {
        ChainItems {
            bytes: bytes.into(),
        }
    }
}

impl From<Vec<Item>> for ChainItems {
    fn from(items: Vec<Item>) -> ChainItems {
        ChainItems::new(&items)
    }
}

/// The stretches of a [`ChainItems`], decoded in order (and the reader of
/// a [`SinkLens`]).
pub struct Iter<'a> {
    bytes: &'a [u8],
    end: Ns,
}

impl Iterator for Iter<'_> {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        if self.bytes.is_empty() {
            return None;
        }
        let start = self.end.wrapping_add(unzigzag(self.number()));
        let dur = unzigzag(self.number());
        let packed = self.number();
        self.end = start.wrapping_add(dur);
        Some(Item {
            start,
            dur,
            // Only a list read back garbled has another code (`from_bytes`).
            kind: Kind::ALL
                .get((packed & 7) as usize)
                .copied()
                .unwrap_or(Kind::Idle),
            name: (packed >> 3) as u32,
        })
    }
}

impl Iter<'_> {
    fn number(&mut self) -> u64 {
        // Most numbers are one byte.
        if let Some((&b, rest)) = self.bytes.split_first() {
            if b < 0x80 {
                self.bytes = rest;
                return u64::from(b);
            }
        }
        let mut v = 0u64;
        let mut shift = 0;
        for (i, &b) in self.bytes.iter().enumerate() {
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                self.bytes = &self.bytes[i + 1..];
                return v;
            }
            shift = (shift + 7).min(63);
        }
        // Only a list read back garbled ends within a number, or is read
        // past its end (`ChainItems::from_bytes`): it ends there.
        self.bytes = &[];
        v
    }
}

fn kind_code(k: Kind) -> u64 {
    Kind::ALL.iter().position(|&x| x == k).unwrap_or(0) as u64
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// The bytes `fill` writes, written into a buffer the thread reuses and
/// then copied into bytes of their size: one allocation a list, where a
/// list grown from empty took four or five (a reallocation per doubling,
/// one more to shrink), most of the allocator's work in the path's build
/// (docs/tracestat.md#scale). `fill` must not pack a list itself.
fn packed(fill: impl FnOnce(&mut Vec<u8>)) -> Box<[u8]> {
    thread_local! {
        static BYTES: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BYTES.with_borrow_mut(|bytes| {
        bytes.clear();
        fill(bytes);
        Box::from(&bytes[..])
    })
}

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Serialize for ChainItems {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for ChainItems {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ChainItems, D::Error> {
        Vec::<Item>::deserialize(d).map(ChainItems::from)
    }
}

/// A sink's what-if lengths per source (`[recorded, its kernel part,
/// under rule 1, ...]`, graph.rs), packed: per source its id plus one (0:
/// the step's start), the count of lengths, the first length zigzag, then
/// each other length's distance from the first, zigzag (a rule moves a
/// length a little, so most take a byte or two), each as a LEB128 unsigned
/// integer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SinkLens {
    bytes: Box<[u8]>,
}

impl SinkLens {
    /// `(source, lengths)` in the order given.
    pub fn iter(&self) -> impl Iterator<Item = (Option<u32>, Vec<Ns>)> + '_ {
        let mut rest = Iter {
            bytes: &self.bytes,
            end: 0,
        };
        std::iter::from_fn(move || {
            let mut lens = Vec::new();
            let src = rest.lens_into(&mut lens)?;
            Some((src, lens))
        })
    }

    /// Each source's lengths appended to `out`: `(source, where they lie
    /// in out)`, without a list per source.
    pub fn decode_into(&self, out: &mut Vec<Ns>, each: &mut Vec<(Option<u32>, usize, usize)>) {
        let mut rest = Iter {
            bytes: &self.bytes,
            end: 0,
        };
        let mut at = out.len();
        while let Some(src) = rest.lens_into(out) {
            each.push((src, at, out.len()));
            at = out.len();
        }
    }

    /// `(source, count of lengths)` in the order given, without decoding
    /// the lengths.
    pub fn shape(&self) -> impl Iterator<Item = (Option<u32>, usize)> + '_ {
        let mut rest = Iter {
            bytes: &self.bytes,
            end: 0,
        };
        std::iter::from_fn(move || {
            if rest.bytes.is_empty() {
                return None;
            }
            let src = rest.number();
            let mut n = 0;
            // As many as there are ([`SinkLens::from_bytes`]).
            for _ in 0..rest.number() {
                if rest.bytes.is_empty() {
                    break;
                }
                rest.skip_number();
                n += 1;
            }
            Some((src.checked_sub(1).map(|s| s as u32), n))
        })
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The packed bytes (the spill file's copy, `spill.rs`).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Lengths packed as [`SinkLens::as_bytes`] gave them. Any bytes read
    /// as some lengths, never a panic, and never more lengths than bytes
    /// ([`Iter::lens_into`], [`SinkLens::shape`]: as
    /// [`ChainItems::from_bytes`]).
    pub fn from_bytes(bytes: &[u8]) -> SinkLens {
        SinkLens {
            bytes: bytes.into(),
        }
    }
}

impl Iter<'_> {
    /// Steps over one number.
    fn skip_number(&mut self) {
        let n = self
            .bytes
            .iter()
            .position(|&b| b < 0x80)
            .map_or(self.bytes.len(), |i| i + 1);
        self.bytes = &self.bytes[n..];
    }

    /// One source's lengths appended to `out`; its source (`None` when
    /// none is left, and for the step's start: see `lens_source`).
    fn lens_into(&mut self, out: &mut Vec<Ns>) -> Option<Option<u32>> {
        if self.bytes.is_empty() {
            return None;
        }
        let src = self.number();
        let n = self.number();
        if n > 0 && !self.bytes.is_empty() {
            let first = unzigzag(self.number());
            out.push(first);
            // As many as there are ([`SinkLens::from_bytes`]).
            for _ in 1..n {
                if self.bytes.is_empty() {
                    break;
                }
                out.push(first.wrapping_add(unzigzag(self.number())));
            }
        }
        Some(src.checked_sub(1).map(|s| s as u32))
    }
}

impl SinkLens {
    /// Packs `(source, lengths)` in the order given.
    pub fn from_entries<'a>(
        entries: impl IntoIterator<Item = (Option<u32>, &'a [Ns])>,
    ) -> SinkLens {
        let bytes = packed(|bytes| {
            for (src, lens) in entries {
                put(bytes, src.map_or(0, |s| u64::from(s) + 1));
                put(bytes, lens.len() as u64);
                if let Some(&first) = lens.first() {
                    put(bytes, zigzag(first));
                    for &l in &lens[1..] {
                        put(bytes, zigzag(l.wrapping_sub(first)));
                    }
                }
            }
        });
        SinkLens { bytes }
    }
}

impl From<Vec<(Option<u32>, Vec<Ns>)>> for SinkLens {
    fn from(entries: Vec<(Option<u32>, Vec<Ns>)>) -> SinkLens {
        SinkLens::from_entries(entries.iter().map(|(s, l)| (*s, &l[..])))
    }
}

impl Serialize for SinkLens {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for SinkLens {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<SinkLens, D::Error> {
        Vec::<(Option<u32>, Vec<Ns>)>::deserialize(d).map(SinkLens::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_stretches_come_back_exactly() {
        let it = |start, dur, kind, name| Item {
            start,
            dur,
            kind,
            name,
        };
        let items = vec![
            it(-5, 5, Kind::Idle, 6),
            it(0, 1_000_000_000_000, Kind::Compute, 7),
            it(1_000_000_000_000, 1, Kind::SyncWait, u32::MAX),
            it(i64::MAX - 3, 0, Kind::Host, 0),
            it(i64::MIN, i64::MAX, Kind::Communication, 1 << 31),
            it(3, -2, Kind::Memory, 2),
            it(1, 0, Kind::Launch, 3),
        ];
        let packed = ChainItems::new(&items);
        assert_eq!(packed.to_vec(), items);
        assert!(!packed.is_empty());
        assert!(ChainItems::new(&[]).is_empty());
        // The buffer each chain is written through holds nothing of the
        // one before: a short chain after a long one is itself alone.
        let short = items[..1].to_vec();
        let (a, b) = (ChainItems::new(&items), ChainItems::new(&short));
        assert_eq!((a.to_vec(), b.to_vec()), (items.clone(), short));
        assert_eq!(ChainItems::new(&[]).to_vec(), Vec::<Item>::new());
        // A tiling chain costs a byte per start.
        let tiling: Vec<Item> = (0..100)
            .map(|i| it(i * 1000, 1000, Kind::Compute, 9))
            .collect();
        assert_eq!(ChainItems::new(&tiling).bytes.len(), 100 * (1 + 2 + 1));
        // A partial carries the stretches as a list, as before.
        let json = serde_json::to_string(&packed).unwrap();
        assert_eq!(json, serde_json::to_string(&items).unwrap());
        let back: ChainItems = serde_json::from_str(&json).unwrap();
        assert_eq!(back, packed);
    }

    /// Any bytes read back (a garbled spill file) read as some stretches
    /// and lengths, never a panic, never past their end, and never more
    /// lengths than bytes: numbers cut off, runs of continuation bytes
    /// longer than a number, the unknown kind code, counts of lengths far
    /// beyond the list.
    #[test]
    fn any_bytes_read_as_some_stretches_and_lengths() {
        let mut lists: Vec<Vec<u8>> = vec![
            vec![0x80],
            vec![0xff; 40],
            vec![0, 0, 7],
            vec![0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
            vec![1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 5],
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for len in 0..300 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            lists.push((0..len % 37).map(|i| (seed >> (i % 8 * 8)) as u8).collect());
        }
        for bytes in &lists {
            let items = ChainItems::from_bytes(bytes).to_vec();
            assert!(items.len() <= bytes.len());
            let lens = SinkLens::from_bytes(bytes);
            let (mut flat, mut each) = (Vec::new(), Vec::new());
            lens.decode_into(&mut flat, &mut each);
            assert!(flat.len() <= bytes.len() && each.len() <= bytes.len());
            let counts: Vec<usize> = lens.iter().map(|(_, l)| l.len()).collect();
            let shape: Vec<usize> = lens.shape().map(|(_, n)| n).collect();
            assert_eq!(counts, shape, "{bytes:?}");
        }
        // Bytes as written read as written.
        let items = vec![Item {
            start: 3,
            dur: 4,
            kind: Kind::Launch,
            name: 9,
        }];
        let written = ChainItems::new(&items);
        assert_eq!(ChainItems::from_bytes(written.as_bytes()).to_vec(), items);
    }

    #[test]
    fn sink_lens_come_back_exactly_in_order() {
        let entries: Vec<(Option<u32>, Vec<Ns>)> = vec![
            (None, vec![5, 0, 3]),
            (Some(0), vec![]),
            (Some(u32::MAX), vec![i64::MAX, i64::MIN, -1]),
            (Some(7), vec![1, 2]),
        ];
        let packed = SinkLens::from(entries.clone());
        let back: Vec<(Option<u32>, Vec<Ns>)> = packed.iter().collect();
        assert_eq!(back, entries);
        let mut flat = vec![42];
        let mut each = Vec::new();
        packed.decode_into(&mut flat, &mut each);
        let ranged: Vec<(Option<u32>, Vec<Ns>)> = each
            .iter()
            .map(|&(s, a, b)| (s, flat[a..b].to_vec()))
            .collect();
        assert_eq!(ranged, entries);
        assert_eq!(flat[0], 42);
        let shape: Vec<(Option<u32>, usize)> = packed.shape().collect();
        let want: Vec<(Option<u32>, usize)> = entries.iter().map(|(s, l)| (*s, l.len())).collect();
        assert_eq!(shape, want);
        // Lengths near the first take a byte each.
        let near = SinkLens::from(vec![(Some(3), vec![1_000_000, 999_990, 1_000_020])]);
        assert_eq!(near.bytes.len(), 1 + 1 + 3 + 1 + 1);
        assert!(SinkLens::from(Vec::new()).is_empty());
        assert_eq!(SinkLens::from(Vec::new()).iter().count(), 0);
        // A partial carries them as before.
        let json = serde_json::to_string(&packed).unwrap();
        assert_eq!(json, serde_json::to_string(&entries).unwrap());
        let read: SinkLens = serde_json::from_str(&json).unwrap();
        assert_eq!(read, packed);
    }
}
