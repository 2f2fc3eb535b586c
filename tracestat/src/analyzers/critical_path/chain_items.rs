//! A sink's chain as it is kept until the cross-rank solve: its stretches
//! packed as variable-length integers instead of 24-byte [`Item`]s
//! (docs/tracestat.md#scale). Every rank's chains are held at once, and a
//! chain tiles its time: each stretch starts where the one before ended,
//! so its start costs one byte, and most lengths and name ids two or three.
//!
//! The packing is exact (any `i64` times, any `u32` name id) and a partial
//! carries the stretches as before (a list of `{start, dur, kind, name}`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::graph::{Item, Kind};
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
}
