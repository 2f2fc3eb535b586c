//! Random numbers that depend only on the seed and on *where* they are drawn
//! (docs/unitrace-gen.md#determinism).
//!
//! Every independent part of an output (a rank, a segment of a rank's
//! work, a kernel of a metric file) gets its own stream, seeded from the
//! user's seed and that part's coordinates through [`key`]. So the bytes of
//! rank 5 do not depend on how many events rank 4 drew, files can be written
//! in any order or in parallel, and a planning pass can replay a segment
//! exactly. The generator itself is `fastrand`'s wyrand (pinned in
//! Cargo.lock); only its `u64` output is used, every other shape (uniform
//! floats, ranges, choices) is derived here so that the mapping from bits to
//! values is ours and stays fixed.

/// The SplitMix64 finaliser: a bijective mix of 64 bits.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A stream key from the seed and a path of coordinates (tags first, e.g.
/// `key(seed, &[TAG_SEGMENT, rank, segment])`).
pub fn key(seed: u64, path: &[u64]) -> u64 {
    let mut h = mix64(seed ^ 0x756e_6974_7261_6365); // "unitrace"
    for &p in path {
        h = mix64(h ^ mix64(p));
    }
    h
}

/// One random stream.
#[derive(Clone)]
pub struct Draw {
    rng: fastrand::Rng,
}

impl Draw {
    pub fn new(seed: u64, path: &[u64]) -> Draw {
        Draw {
            rng: fastrand::Rng::with_seed(key(seed, path)),
        }
    }

    pub fn u64(&mut self) -> u64 {
        self.rng.u64(..)
    }

    /// Uniform in [0, 1), 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in [lo, hi] (inclusive; `lo` when `hi < lo`).
    pub fn between(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        // Multiply-shift: no modulo bias worth speaking of for our spans.
        lo + ((self.u64() as u128 * span as u128) >> 64) as u64
    }

    /// An index below `n` (`n` > 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.between(0, n.saturating_sub(1) as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A multiplicative jitter around 1: `1 ± spread`, triangular, so most
    /// values stay near 1 as run-to-run noise does.
    pub fn jitter(&mut self, spread: f64) -> f64 {
        1.0 + spread * (self.unit() - self.unit())
    }

    /// `base_ns` scaled by a jitter, at least 1 ns.
    pub fn ns(&mut self, base_ns: f64, spread: f64) -> u64 {
        (base_ns * self.jitter(spread)).round().max(1.0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_depend_on_seed_and_path_only() {
        let a: Vec<u64> = (0..4).map(|_| Draw::new(7, &[1, 2]).u64()).collect();
        assert!(a.iter().all(|&v| v == a[0]));
        assert_ne!(Draw::new(7, &[1, 2]).u64(), Draw::new(7, &[2, 1]).u64());
        assert_ne!(Draw::new(7, &[1, 2]).u64(), Draw::new(8, &[1, 2]).u64());
    }

    #[test]
    fn shapes_stay_in_range() {
        let mut d = Draw::new(1, &[]);
        for _ in 0..10_000 {
            let u = d.unit();
            assert!((0.0..1.0).contains(&u));
            let b = d.between(3, 5);
            assert!((3..=5).contains(&b));
            let j = d.jitter(0.2);
            assert!((0.8..=1.2).contains(&j));
        }
        assert_eq!(d.between(4, 4), 4);
        assert_eq!(d.between(4, 2), 4);
    }
}
