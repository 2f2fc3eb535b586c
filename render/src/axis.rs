//! Axes other than the linear matplotlib ones of [`crate::layout`]: a
//! logarithmic scale with a tick at every decade (roofline charts).

/// A base-10 logarithmic mapping from data to page coordinates, spanning
/// whole decades `10^lo_exp ..= 10^hi_exp`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogScale {
    pub lo_exp: i32,
    pub hi_exp: i32,
    /// Page coordinate of `10^lo_exp`.
    pub p0: f64,
    /// Page coordinate of `10^hi_exp`.
    pub p1: f64,
}

impl LogScale {
    /// The smallest whole-decade range holding `lo..=hi` (positive), at
    /// least one decade wide, mapped onto `p0..p1`.
    pub fn covering(lo: f64, hi: f64, p0: f64, p1: f64) -> LogScale {
        let lo_exp = lo.log10().floor();
        let hi_exp = hi.log10().ceil().max(lo_exp + 1.0);
        LogScale {
            lo_exp: lo_exp as i32,
            hi_exp: hi_exp as i32,
            p0,
            p1,
        }
    }

    /// Page coordinate of `v` (positive).
    pub fn map(&self, v: f64) -> f64 {
        let t = (v.log10() - f64::from(self.lo_exp)) / f64::from(self.hi_exp - self.lo_exp);
        self.p0 + (self.p1 - self.p0) * t
    }

    /// The decade exponents of the ticks, low to high.
    pub fn decades(&self) -> std::ops::RangeInclusive<i32> {
        self.lo_exp..=self.hi_exp
    }

    /// The data value at the low end.
    pub fn lo(&self) -> f64 {
        10f64.powi(self.lo_exp)
    }

    /// The data value at the high end.
    pub fn hi(&self) -> f64 {
        10f64.powi(self.hi_exp)
    }
}

/// Tick positions inside `[lo, hi]` with a 1-2-2.5-5-10 step giving at most
/// `max_ticks` ticks (matplotlib's MaxNLocator steps). `integer` forces
/// whole-number steps (sample ordinals).
pub fn linear_ticks(lo: f64, hi: f64, max_ticks: usize, integer: bool) -> (Vec<f64>, f64) {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return (vec![lo], 1.0);
    }
    // matplotlib: nbins intervals (9 for axes of this size).
    let raw = span / max_ticks.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let mut step = 10.0 * mag;
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * mag >= raw * 0.999_999 {
            step = m * mag;
            break;
        }
    }
    if integer {
        step = step.max(1.0).round();
    }
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    let ticks = (first..=last)
        .map(|k| k as f64 * step)
        .map(|v| if v.abs() < step * 1e-9 { 0.0 } else { v })
        .collect();
    (ticks, step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_decades_and_mapping() {
        let s = LogScale::covering(0.002, 350.0, 100.0, 400.0);
        assert_eq!((s.lo_exp, s.hi_exp), (-3, 3));
        assert_eq!(s.decades().count(), 7);
        assert!((s.map(0.001) - 100.0).abs() < 1e-9);
        assert!((s.map(1000.0) - 400.0).abs() < 1e-9);
        assert!((s.map(1.0) - 250.0).abs() < 1e-9);
        // A range inside one decade still spans one.
        let s = LogScale::covering(10.0, 10.0, 0.0, 1.0);
        assert_eq!((s.lo_exp, s.hi_exp), (1, 2));
        // Y axes run upwards: p0 below p1 on the page.
        let s = LogScale::covering(1.0, 100.0, 500.0, 100.0);
        assert!(s.map(10.0) < 500.0 && s.map(10.0) > 100.0);
    }
}
