//! Searches of sorted lists shared by the analyses.

/// [`slice::partition_point`] searched from `near` outwards (doubling
/// steps, then a binary search in the bracket found): for searches that
/// move a little at a time along a sorted list.
pub fn partition_point_near<T>(v: &[T], near: usize, before: impl Fn(&T) -> bool) -> usize {
    let n = v.len();
    let mut hi = near.min(n);
    if hi < n && before(&v[hi]) {
        // Forward: find a bracket (lo, hi] with v[hi] not before.
        let mut step = 1;
        let mut lo = hi;
        while hi < n && before(&v[hi]) {
            lo = hi;
            hi = (hi + step).min(n);
            step *= 2;
        }
        return lo + v[lo..hi].partition_point(&before);
    }
    let mut step = 1;
    let mut lo = hi;
    while lo > 0 && !before(&v[lo - 1]) {
        hi = lo;
        lo = lo.saturating_sub(step);
        step *= 2;
    }
    lo + v[lo..hi].partition_point(&before)
}

/// The places `0..n` of the `k` items first in the order `cmp`, in their
/// own order: what sorting all places by `cmp`, keeping `k` and sorting
/// those again gives, where `cmp` never calls two places equal (ties
/// broken by the place). A selection, linear in `n`, where the sort of
/// every step's place took n log n: 17M instructions of a 500 MB rank's
/// tables (docs/tracestat.md#scale).
pub fn first_places(
    n: usize,
    k: usize,
    mut cmp: impl FnMut(usize, usize) -> std::cmp::Ordering,
) -> Vec<usize> {
    let mut places: Vec<usize> = (0..n).collect();
    if k == 0 {
        return Vec::new();
    }
    if n > k {
        places.select_nth_unstable_by(k - 1, |&a, &b| cmp(a, b));
        places.truncate(k);
    }
    places.sort_unstable();
    places
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The selection keeps what a full sort keeps, ties and all.
    #[test]
    fn first_places_are_those_a_sort_keeps() {
        let keys: Vec<f64> = (0..500).map(|i| ((i * 7919) % 37) as f64 / 3.0).collect();
        let cmp = |a: usize, b: usize| keys[b].total_cmp(&keys[a]).then(a.cmp(&b));
        for k in [0, 1, 5, 36, 37, 38, 499, 500, 900] {
            for n in [0, 1, 20, 500] {
                let mut sorted: Vec<usize> = (0..n).collect();
                sorted.sort_by(|&a, &b| cmp(a, b));
                sorted.truncate(k);
                sorted.sort_unstable();
                assert_eq!(first_places(n, k, cmp), sorted, "n {n} k {k}");
            }
        }
    }
}
