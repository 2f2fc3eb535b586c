//! A mergeable duration histogram for percentiles across files.
//!
//! Percentiles of a kernel over all ranks must come out the same whether
//! the ranks were read in one run or in several `--partial` runs combined
//! later (docs/tracestat.md#partial-and-combine), without keeping every
//! duration. Durations (integer nanoseconds) go into logarithmic buckets of
//! relative width 1% (`GAMMA`); a percentile is the representative value of
//! the bucket holding that rank, so it is within 0.5% of the exact value.
//! Buckets are kept sparse and sorted, so merging is a sorted merge and the
//! serialised form is deterministic.

use serde::{Deserialize, Serialize};

use crate::time::Ns;

/// Ratio between consecutive bucket bounds.
const GAMMA: f64 = 1.01;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DurationSketch {
    /// Values that were 0 ns or less (kept apart: no logarithm).
    pub zeros: u64,
    /// `(bucket index, count)` sorted by index.
    pub buckets: Vec<(i32, u64)>,
    /// Exact extremes.
    pub min: Ns,
    pub max: Ns,
    pub count: u64,
}

fn bucket_of(v: Ns) -> i32 {
    ((v as f64).ln() / GAMMA.ln()).ceil() as i32
}

/// Representative value of a bucket: the middle of `(GAMMA^(i-1), GAMMA^i]`
/// in relative terms.
fn bucket_value(i: i32) -> f64 {
    2.0 * GAMMA.powi(i) / (GAMMA + 1.0)
}

impl DurationSketch {
    /// Builds a sketch from a batch of values (sorting them once is cheaper
    /// than a map per value).
    pub fn from_values(values: &mut [Ns]) -> DurationSketch {
        let mut s = DurationSketch::default();
        if values.is_empty() {
            return s;
        }
        values.sort_unstable();
        s.min = values[0];
        s.max = values[values.len() - 1];
        s.count = values.len() as u64;
        for &v in values.iter() {
            if v <= 0 {
                s.zeros += 1;
                continue;
            }
            let b = bucket_of(v);
            match s.buckets.last_mut() {
                Some((last, n)) if *last == b => *n += 1,
                _ => s.buckets.push((b, 1)),
            }
        }
        // Held per kernel, range and rank until the report is made:
        // without the growth's spare room 4,096 small ranks peak 8 MB
        // lower (docs/tracestat.md#many-ranks).
        s.buckets.shrink_to_fit();
        s
    }

    pub fn merge(&mut self, other: &DurationSketch) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.count += other.count;
        self.zeros += other.zeros;
        let mut out = Vec::with_capacity(self.buckets.len() + other.buckets.len());
        let (mut i, mut j) = (0, 0);
        let (a, b) = (&self.buckets, &other.buckets);
        while i < a.len() || j < b.len() {
            if j == b.len() || (i < a.len() && a[i].0 < b[j].0) {
                out.push(a[i]);
                i += 1;
            } else if i == a.len() || b[j].0 < a[i].0 {
                out.push(b[j]);
                j += 1;
            } else {
                out.push((a[i].0, a[i].1 + b[j].1));
                i += 1;
                j += 1;
            }
        }
        self.buckets = out;
    }

    /// The `q`-quantile (0..=1) in nanoseconds: nearest-rank on the
    /// buckets, clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        // The extremes are known exactly.
        if rank == 1 {
            return self.min as f64;
        }
        if rank == self.count {
            return self.max as f64;
        }
        if rank <= self.zeros {
            return self.min.min(0) as f64;
        }
        let mut seen = self.zeros;
        for &(b, n) in &self.buckets {
            seen += n;
            if seen >= rank {
                return bucket_value(b).clamp(self.min as f64, self.max as f64);
            }
        }
        self.max as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_half_a_percent_and_merge_is_exact() {
        let mut all: Vec<Ns> = (1..=1000).map(|i| i * 1000).collect();
        let whole = DurationSketch::from_values(&mut all.clone());
        let p50 = whole.quantile(0.5);
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.005, "{p50}");
        let p95 = whole.quantile(0.95);
        assert!((p95 - 950_000.0).abs() / 950_000.0 < 0.005, "{p95}");
        assert_eq!(whole.quantile(1.0), 1_000_000.0);
        assert_eq!(whole.quantile(0.0), 1000.0);
        let (a, b) = all.split_at_mut(377);
        let mut merged = DurationSketch::from_values(a);
        merged.merge(&DurationSketch::from_values(b));
        assert_eq!(merged, whole);
    }

    #[test]
    fn zeros_and_empty() {
        let s = DurationSketch::from_values(&mut [0, 0, 10]);
        assert_eq!(s.quantile(0.5), 0.0);
        assert_eq!(s.quantile(1.0), 10.0);
        assert_eq!(DurationSketch::default().quantile(0.5), 0.0);
    }
}
