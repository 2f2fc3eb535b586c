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
