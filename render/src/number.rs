//! How numbers are spelled in every output, in one place.
//!
//! * [`shortest`]: data values (`--data` CSV, HTML tables): Rust's shortest
//!   round-trip form, whole numbers without a fraction, `inf`/`NaN` as Rust
//!   spells them.
//! * [`coord`]: SVG coordinates and sizes: at most two decimals, trailing
//!   zeros dropped.
//! * [`significant`]: values read by people (roofline labels and tables):
//!   four significant digits, plain for everyday magnitudes.
//! * [`decade`]: labels of the ticks of a logarithmic axis.

/// Shortest round-trip form; whole numbers without a fraction.
pub fn shortest(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A page coordinate: two decimals at most, no trailing zeros, no `-0`.
pub fn coord(v: f32) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Four significant digits, plain for magnitudes in 0.001..1e7, else
/// scientific (`3.500e12`); `n/a` for NaN, `∞` for an infinity.
pub fn significant(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "n/a".into()
        } else {
            "∞".into()
        };
    }
    if x == 0.0 {
        return "0".into();
    }
    let a = x.abs();
    if !(1e-3..1e7).contains(&a) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The label of the tick at 10^k on a logarithmic axis: plain from 0.001
/// to 1000000, `1e<k>` beyond.
pub fn decade(k: i32) -> String {
    match k {
        -3..=-1 => format!("{}", 10f64.powi(k)),
        0..=6 => format!("{}", 10i64.pow(k as u32)),
        _ => format!("1e{k}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortest_round_trip() {
        assert_eq!(shortest(3.0), "3");
        assert_eq!(shortest(2.5), "2.5");
        assert_eq!(shortest(f64::INFINITY), "inf");
        assert_eq!(shortest(1e20), "100000000000000000000");
    }

    #[test]
    fn coordinates_drop_trailing_zeros() {
        assert_eq!(coord(86.0), "86");
        assert_eq!(coord(1.505), "1.5");
        assert_eq!(coord(-0.001), "0");
    }

    #[test]
    fn significant_digits_for_labels() {
        assert_eq!(significant(252713.43995799552), "252713");
        assert_eq!(significant(153.42136083618567), "153.4");
        assert_eq!(significant(0.036002751885922085), "0.036");
        assert_eq!(significant(2.0), "2");
        assert_eq!(significant(3.5e12), "3.500e12");
        assert_eq!(significant(0.0), "0");
        assert_eq!(significant(f64::INFINITY), "∞");
        assert_eq!(significant(f64::NAN), "n/a");
    }

    #[test]
    fn decade_labels() {
        assert_eq!(decade(-3), "0.001");
        assert_eq!(decade(0), "1");
        assert_eq!(decade(5), "100000");
        assert_eq!(decade(7), "1e7");
    }
}
