//! Clock alignment from matched collectives (docs/tracestat.md#clock-alignment).
//!
//! Ranks on different nodes read different clocks: the same moment has
//! another timestamp on each. A blocking collective ends at about the same
//! true moment on every rank (its last rank arrives, the data moves, every
//! rank returns), so the ends of matched collectives are the evidence to
//! line the clocks up: each rank's offset is the median, over the
//! collectives it shares with a reference rank, of its end minus the
//! reference's end (a median, so a few odd calls do not move it).
//!
//! The test: a matched collective is *consistent* when every rank's call
//! ends after the last rank's call starts, as a blocking collective must.
//! The offsets are applied when they make more collectives consistent than
//! the clocks as read; a run whose matched calls are mostly (at least half)
//! consistent after that has trustworthy skew and wait numbers, otherwise
//! the report gives none of them, only why.

use serde::Serialize;

use crate::time::{us, Ns};

/// `--align`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    /// Align from matched collectives when that helps.
    Collectives,
    /// Take the clocks as read.
    None,
}

/// What the alignment did.
#[derive(Debug, Clone, Serialize)]
pub struct ClockAlignment {
    pub method: Align,
    /// `applied`, `not needed`, `not asked` or `impossible`.
    pub status: &'static str,
    /// One line saying why.
    pub reason: String,
    /// Per rank (report order): its label, the offset subtracted from its
    /// times (us), the matched collectives it was estimated from.
    pub offsets: Vec<(String, f64, u64)>,
    /// Spread of the aligned ends of one collective (latest - earliest):
    /// median and largest over the matched collectives, us.
    pub residual_median_us: f64,
    pub residual_max_us: f64,
    /// Matched collectives consistent as read, and after alignment.
    pub consistent_as_read: usize,
    pub consistent_aligned: usize,
    pub matched: usize,
    /// Skew, waits and arrival order can be trusted.
    pub trusted: bool,
    /// The offsets in ns (report order), 0 when not applied.
    #[serde(skip)]
    pub offset_ns: Vec<Ns>,
}

/// One matched collective: `(rank index, start, end)` per rank.
pub type Matched = [(usize, Ns, Ns)];

fn consistent(parts: &Matched, off: &[Ns]) -> bool {
    let last = parts.iter().map(|p| p.1 - off[p.0]).max().unwrap_or(0);
    parts.iter().all(|p| p.2 - off[p.0] >= last)
}

fn median(v: &mut [Ns]) -> Ns {
    v.sort_unstable();
    v[v.len() / 2]
}

/// The offsets, and the ranks they came from, relative to a reference
/// rank (the one in the most matched collectives, the first on a tie).
fn estimate(matched: &[&Matched], ranks: usize) -> (Vec<Option<Ns>>, Vec<u64>) {
    let mut seen = vec![0u64; ranks];
    for m in matched {
        for p in m.iter() {
            seen[p.0] += 1;
        }
    }
    let reference = (0..ranks)
        .max_by(|&a, &b| seen[a].cmp(&seen[b]).then(b.cmp(&a)))
        .unwrap_or(0);
    let mut diffs: Vec<Vec<Ns>> = vec![Vec::new(); ranks];
    for m in matched {
        let Some(r) = m.iter().find(|p| p.0 == reference) else {
            continue;
        };
        for p in m.iter() {
            diffs[p.0].push(p.2 - r.2);
        }
    }
    let offsets = diffs
        .iter_mut()
        .map(|d| (!d.is_empty()).then(|| median(d)))
        .collect();
    let used = diffs.iter().map(|d| d.len() as u64).collect();
    (offsets, used)
}

/// Aligns the clocks of `labels.len()` ranks from their matched
/// collectives.
pub fn align(matched: &[&Matched], labels: &[String], method: Align) -> ClockAlignment {
    let n = labels.len();
    let zero = vec![0 as Ns; n];
    let as_read = matched.iter().filter(|m| consistent(m, &zero)).count();
    let mut out = ClockAlignment {
        method,
        status: "not needed",
        reason: String::new(),
        offsets: labels.iter().map(|l| (l.clone(), 0.0, 0)).collect(),
        residual_median_us: 0.0,
        residual_max_us: 0.0,
        consistent_as_read: as_read,
        consistent_aligned: as_read,
        matched: matched.len(),
        trusted: !matched.is_empty() && 2 * as_read >= matched.len(),
        offset_ns: zero.clone(),
    };
    if matched.is_empty() {
        out.status = "impossible";
        out.reason = "no collective call matched on two ranks or more".to_string();
        return out;
    }
    if method == Align::None {
        out.status = "not asked";
        out.reason = "--align none: clocks taken as read".to_string();
        return out;
    }
    let (offsets, used) = estimate(matched, n);
    let off: Vec<Ns> = offsets.iter().map(|o| o.unwrap_or(0)).collect();
    let aligned = matched.iter().filter(|m| consistent(m, &off)).count();
    let (res_median, res_max) = residual(matched, &off);
    if aligned > as_read {
        out.status = "applied";
        out.offset_ns = off.clone();
        out.consistent_aligned = aligned;
        out.trusted = 2 * aligned >= matched.len();
        out.reason = format!(
            "{as_read} of {} matched collectives consistent as read, {aligned} after aligning",
            matched.len()
        );
        let unaligned = offsets.iter().filter(|o| o.is_none()).count();
        if unaligned > 0 {
            out.reason.push_str(&format!(
                "; {unaligned} rank(s) share no collective with the reference rank and keep their clock"
            ));
        }
        for ((o, &u), (_, us_off, n_used)) in off.iter().zip(&used).zip(out.offsets.iter_mut()) {
            *us_off = us(*o);
            *n_used = u;
        }
        out.residual_median_us = us(res_median);
        out.residual_max_us = us(res_max);
    } else {
        let (m, x) = residual(matched, &zero);
        out.residual_median_us = us(m);
        out.residual_max_us = us(x);
        out.reason = format!(
            "{as_read} of {} matched collectives consistent as read; aligning would not add any",
            matched.len()
        );
    }
    if !out.trusted {
        out.reason.push_str(
            "; fewer than half the matched calls line up, so no skew, wait or arrival numbers are given",
        );
    }
    out
}

/// Median and largest spread of the (aligned) ends of each collective.
fn residual(matched: &[&Matched], off: &[Ns]) -> (Ns, Ns) {
    let mut spreads: Vec<Ns> = matched
        .iter()
        .map(|m| {
            let ends = m.iter().map(|p| p.2 - off[p.0]);
            ends.clone().max().unwrap_or(0) - ends.min().unwrap_or(0)
        })
        .collect();
    if spreads.is_empty() {
        return (0, 0);
    }
    let max = *spreads.iter().max().unwrap_or(&0);
    (median(&mut spreads), max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(n: usize) -> Vec<String> {
        (0..n).map(|i| i.to_string()).collect()
    }

    #[test]
    fn offsets_make_the_ends_coincide() {
        // Three ranks, three allreduces; rank 1's clock is 5 s ahead, rank
        // 2's 3 s behind; rank 2 arrives last each time.
        let s = 5_000_000_000;
        let b = -3_000_000_000;
        let c: Vec<Vec<(usize, Ns, Ns)>> = (0..3)
            .map(|k| {
                let t = k * 1_000_000;
                vec![
                    (0, t, t + 600),
                    (1, s + t + 100, s + t + 600),
                    (2, b + t + 400, b + t + 600),
                ]
            })
            .collect();
        let refs: Vec<&Matched> = c.iter().map(|v| v.as_slice()).collect();
        let a = align(&refs, &labels(3), Align::Collectives);
        assert_eq!(a.status, "applied");
        assert_eq!(a.offset_ns, vec![0, s, b]);
        assert_eq!(a.consistent_as_read, 0);
        assert_eq!(a.consistent_aligned, 3);
        assert!(a.trusted);
        assert_eq!(a.residual_max_us, 0.0);
        // As read, nothing lines up: no numbers to trust.
        let none = align(&refs, &labels(3), Align::None);
        assert!(!none.trusted);
        assert_eq!(none.status, "not asked");
    }

    #[test]
    fn clocks_that_line_up_are_left_alone() {
        let c = [
            vec![(0, 0, 600), (1, 100, 610)],
            vec![(0, 1000, 1600), (1, 1100, 1590)],
        ];
        let refs: Vec<&Matched> = c.iter().map(|v| v.as_slice()).collect();
        let a = align(&refs, &labels(2), Align::Collectives);
        assert_eq!(a.status, "not needed");
        assert_eq!(a.offset_ns, vec![0, 0]);
        assert!(a.trusted);
        let none = align(&[], &labels(2), Align::Collectives);
        assert_eq!(none.status, "impossible");
        assert!(!none.trusted);
    }

    #[test]
    fn the_median_ignores_an_odd_call() {
        // Rank 1 is 1 ms ahead; one of five calls ends 50 ms late there.
        let c: Vec<Vec<(usize, Ns, Ns)>> = (0..5)
            .map(|k| {
                let t = k * 10_000_000;
                let late = if k == 2 { 50_000_000 } else { 0 };
                vec![
                    (0, t, t + 500),
                    (1, t + 1_000_000 + 300, t + 1_000_000 + 500 + late),
                ]
            })
            .collect();
        let refs: Vec<&Matched> = c.iter().map(|v| v.as_slice()).collect();
        let a = align(&refs, &labels(2), Align::Collectives);
        assert_eq!(a.offset_ns[1], 1_000_000);
    }
}
