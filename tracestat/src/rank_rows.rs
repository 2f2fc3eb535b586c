//! Which ranks the console's per-rank tables show when there are many
//! (docs/tracestat.md#console-report): `--rank-rows N` ranks, chosen so
//! that what a performance engineer looks for stays in view — the
//! straggler, then in turn the ranks with the most and the least GPU busy
//! time and, when the run has matched collectives, the most and the least
//! wait at them. `--csv`, `--json`, `--parquet` and `--html` keep every rank.

use std::collections::HashSet;

/// Why a rank is shown, in the order the choice takes them.
const WHY: [&str; 5] = [
    "straggler",
    "most GPU busy time",
    "least GPU busy time",
    "most wait at collectives",
    "least wait at collectives",
];

/// The ranks the per-rank tables show.
#[derive(Debug, Clone)]
pub struct Shown {
    /// `None`: every rank.
    labels: Option<HashSet<String>>,
    /// Per reason of [`WHY`], the ranks chosen for it, in choice order.
    pub picked: Vec<(&'static str, Vec<String>)>,
    pub total: usize,
}

impl Shown {
    pub fn all(total: usize) -> Shown {
        Shown {
            labels: None,
            picked: Vec::new(),
            total,
        }
    }

    pub fn is_capped(&self) -> bool {
        self.labels.is_some()
    }

    pub fn contains(&self, rank: &str) -> bool {
        self.labels.as_ref().is_none_or(|l| l.contains(rank))
    }

    pub fn shown(&self) -> usize {
        self.labels.as_ref().map_or(self.total, |l| l.len())
    }

    pub fn left_out(&self) -> usize {
        self.total - self.shown()
    }
}

/// What the choice looks at, per rank in report order.
pub struct RankFacts<'a> {
    pub labels: Vec<&'a str>,
    /// GPU busy time.
    pub busy: Vec<f64>,
    /// Own wait at collectives.
    pub wait: Vec<f64>,
    pub straggler: Option<&'a str>,
    /// The run has matched collectives.
    pub collectives: bool,
}

/// Chooses at most `cap` ranks (`None`: all). Deterministic: ties go to
/// the rank that comes first in the report's rank order.
pub fn choose(f: &RankFacts<'_>, cap: Option<usize>) -> Shown {
    let ranks = &f.labels;
    let total = ranks.len();
    let cap = match cap {
        Some(c) if c < total => c,
        _ => return Shown::all(total),
    };
    let (busy, wait) = (&f.busy, &f.wait);
    let order = |key: &[f64], most: bool| -> Vec<usize> {
        let mut idx: Vec<usize> = (0..total).collect();
        // A stable sort keeps rank order among equal values.
        idx.sort_by(|&a, &b| {
            let o = key[a].total_cmp(&key[b]);
            if most {
                o.reverse()
            } else {
                o
            }
        });
        idx
    };
    let mut lists: Vec<(usize, Vec<usize>)> = vec![(1, order(busy, true)), (2, order(busy, false))];
    if f.collectives {
        lists.push((3, order(wait, true)));
        lists.push((4, order(wait, false)));
    }
    let mut chosen = vec![false; total];
    let mut picked: Vec<(&'static str, Vec<String>)> =
        WHY.iter().map(|w| (*w, Vec::new())).collect();
    let mut count = 0;
    if let Some(s) = f.straggler {
        if let Some(i) = ranks.iter().position(|l| *l == s) {
            chosen[i] = true;
            picked[0].1.push(s.to_string());
            count += 1;
        }
    }
    // In turn, each list's next rank not chosen yet.
    let mut cursors = vec![0usize; lists.len()];
    while count < cap {
        let mut progressed = false;
        for (k, (why, list)) in lists.iter().enumerate() {
            if count == cap {
                break;
            }
            while cursors[k] < list.len() && chosen[list[cursors[k]]] {
                cursors[k] += 1;
            }
            if let Some(&i) = list.get(cursors[k]) {
                chosen[i] = true;
                picked[*why].1.push(ranks[i].to_string());
                count += 1;
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
    }
    picked.retain(|(_, v)| !v.is_empty());
    Shown {
        labels: Some(
            ranks
                .iter()
                .zip(&chosen)
                .filter(|(_, c)| **c)
                .map(|(l, _)| l.to_string())
                .collect(),
        ),
        picked,
        total,
    }
}
