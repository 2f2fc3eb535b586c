//! What a sink keeps until the cross-rank solve, packed: every rank's sinks
//! are held at once (docs/tracestat.md#scale).
//!
//! [`ChainItems`]: its chain's stretches as variable-length integers
//! instead of 24-byte [`Item`]s. A chain tiles its time: each stretch starts
//! where the one before ended, so its start costs one byte, and most
//! lengths and name ids two or three. [`SinkLens`]: its what-if lengths in
//! one list instead of a list per source.
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
        let mut bytes = Vec::with_capacity(items.len() * 5);
        let mut end: Ns = 0;
        for it in items {
            put(&mut bytes, zigzag(it.start.wrapping_sub(end)));
            put(&mut bytes, zigzag(it.dur));
            put(&mut bytes, (u64::from(it.name) << 3) | kind_code(it.kind));
            end = it.start.wrapping_add(it.dur);
        }
        ChainItems {
            bytes: bytes.into_boxed_slice(),
        }
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
}

impl From<Vec<Item>> for ChainItems {
    fn from(items: Vec<Item>) -> ChainItems {
        ChainItems::new(&items)
    }
}

/// The stretches of a [`ChainItems`], decoded in order.
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
        let start = self.end.wrapping_add(unzigzag(self.take()));
        let dur = unzigzag(self.take());
        let packed = self.take();
        self.end = start.wrapping_add(dur);
        Some(Item {
            start,
            dur,
            kind: Kind::ALL[(packed & 7) as usize],
            name: (packed >> 3) as u32,
        })
    }
}

impl Iter<'_> {
    fn take(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        for (i, &b) in self.bytes.iter().enumerate() {
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                self.bytes = &self.bytes[i + 1..];
                return v;
            }
            shift += 7;
        }
        // Only `ChainItems::new` writes the bytes: always complete.
        unreachable!("a packed chain ends within a number")
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
/// under rule 1, ...]`, graph.rs): per source its id (`-1`: the step's
/// start), the count of lengths, the lengths, all in one list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SinkLens {
    data: Box<[Ns]>,
}

impl SinkLens {
    /// `(source, lengths)` in the order given.
    pub fn iter(&self) -> impl Iterator<Item = (Option<u32>, &[Ns])> + '_ {
        let mut rest = &self.data[..];
        std::iter::from_fn(move || {
            let (&src, tail) = rest.split_first()?;
            let (&n, tail) = tail.split_first()?;
            let (lens, tail) = tail.split_at(n as usize);
            rest = tail;
            Some((u32::try_from(src).ok(), lens))
        })
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

impl From<Vec<(Option<u32>, Vec<Ns>)>> for SinkLens {
    fn from(entries: Vec<(Option<u32>, Vec<Ns>)>) -> SinkLens {
        let mut data = Vec::with_capacity(entries.iter().map(|e| 2 + e.1.len()).sum());
        for (src, lens) in entries {
            data.push(src.map_or(-1, Ns::from));
            data.push(lens.len() as Ns);
            data.extend(lens);
        }
        SinkLens {
            data: data.into_boxed_slice(),
        }
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

    #[test]
    fn sink_lens_come_back_exactly_in_order() {
        let entries: Vec<(Option<u32>, Vec<Ns>)> = vec![
            (None, vec![5, 0, 3]),
            (Some(0), vec![]),
            (Some(u32::MAX), vec![i64::MAX, i64::MIN, -1]),
            (Some(7), vec![1, 2]),
        ];
        let packed = SinkLens::from(entries.clone());
        let back: Vec<(Option<u32>, Vec<Ns>)> =
            packed.iter().map(|(s, l)| (s, l.to_vec())).collect();
        assert_eq!(back, entries);
        assert!(SinkLens::from(Vec::new()).is_empty());
        assert_eq!(SinkLens::from(Vec::new()).iter().count(), 0);
        // A partial carries them as before.
        let json = serde_json::to_string(&packed).unwrap();
        assert_eq!(json, serde_json::to_string(&entries).unwrap());
        let read: SinkLens = serde_json::from_str(&json).unwrap();
        assert_eq!(read, packed);
    }
}
