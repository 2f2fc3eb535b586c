//! How numbers are spelled in every output, in one place.
//!
//! * [`shortest`]: data values (`--data` CSV, HTML tables): Rust's shortest
//!   round-trip form, whole numbers without a fraction, `inf`/`NaN` as Rust
//!   spells them.
//! * [`coord`]: SVG coordinates and sizes: at most two decimals, trailing
//!   zeros dropped.
//! * [`significant`]: values read by people (roofline labels and tables):
//!   four significant digits, plain for everyday magnitudes.
//! * [`tick_labels`]: labels of the ticks of a linear axis, as matplotlib's
//!   default formatter spells them (with a `1e<k>` offset for large values).
//! * [`decade`]: labels of the ticks of a logarithmic axis.
//! * [`push_fixed`]: table files' numbers, a fixed number of decimals,
//!   exactly as `format!("{x:.N}")` spells them (written a million rows
//!   at a time, so hand-written: see its head).

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

/// Tick labels with matplotlib's scientific offset: values of magnitude
/// at least 1e6 or below 1e-5 are shown divided by 10^k, and `1e<k>` is printed at
/// the end of the axis.
pub fn tick_labels(ticks: &[f64], step: f64) -> (Vec<String>, Option<String>) {
    let max_abs = ticks.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut exp = 0i32;
    if max_abs >= 1e6 || (max_abs > 0.0 && max_abs < 1e-5) {
        exp = max_abs.log10().floor() as i32;
    }
    let scale = 10f64.powi(exp);
    let s = step / scale;
    let mut decimals = 0usize;
    while decimals < 10 {
        let m = s * 10f64.powi(decimals as i32);
        if (m - m.round()).abs() < 1e-6 * m.abs().max(1.0) {
            break;
        }
        decimals += 1;
    }
    let labels = ticks
        .iter()
        .map(|v| {
            let t = format!("{:.*}", decimals, v / scale);
            // matplotlib writes a minus sign (U+2212) for negative ticks.
            match t.strip_prefix('-') {
                Some(rest) if rest.chars().any(|c| c != '0' && c != '.') => {
                    format!("\u{2212}{rest}")
                }
                Some(rest) => rest.to_string(),
                None => t,
            }
        })
        .collect();
    let offset = (exp != 0).then(|| format!("1e{exp}"));
    (labels, offset)
}

/// Powers of ten [`push_fixed`] scales by.
const FIXED_SCALE: [f64; 5] = [1.0, 10.0, 100.0, 1_000.0, 10_000.0];

/// Appends `x` with `decimals` (at most 4) decimals, the same text as
/// `format!("{x:.decimals$}")`. Hand-written because that formatting,
/// exact for every value, took most of the time of writing a table
/// file of a million rows (docs/benchmarks.md#tracestat): here a value
/// whose scaled product `x * 10^decimals` is under 2^43 (its rounding
/// error then under 2^-11) and not within 10^-3 of a half is rounded as
/// the product, which rounds as the exact value does; every other value
/// (near a tie, large, not finite) goes through `format!`.
pub fn push_fixed(out: &mut String, x: f64, decimals: usize) {
    use std::fmt::Write;
    let Some(&scale) = FIXED_SCALE.get(decimals) else {
        let _ = write!(out, "{x:.decimals$}");
        return;
    };
    let y = (x * scale).abs();
    let whole = y.floor();
    let frac = y - whole;
    let small = y < (1u64 << 43) as f64; // false for NaN
    if !small || (frac - 0.5).abs() <= 1e-3 {
        let _ = write!(out, "{x:.decimals$}");
        return;
    }
    let units = whole as u64 + u64::from(frac > 0.5);
    // `format!` keeps the sign of a negative value that rounds to zero.
    if x.is_sign_negative() {
        out.push('-');
    }
    let pow = 10u64.pow(decimals as u32);
    // Digits by `itoa`, not `write!`: the formatting machinery took more
    // than the rounding (docs/benchmarks.md#tracestat).
    out.push_str(itoa::Buffer::new().format(units / pow));
    if decimals > 0 {
        out.push('.');
        let mut frac = [b'0'; 4];
        let mut rest = units % pow;
        for d in frac[..decimals].iter_mut().rev() {
            *d = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        out.extend(frac[..decimals].iter().map(|&d| char::from(d)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `push_fixed` against `format!` on values of every magnitude, on
    /// and near the ties of each number of decimals, and the signs.
    #[test]
    fn fixed_decimals_are_those_of_format() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            2.5,
            0.25,
            0.0005,
            -0.0004,
            1.0005,
            365_078.5,
            8_796_093_022.207_5,
            8_796_093_022_208.0,
            1e300,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for _ in 0..30_000 {
            let r = next();
            // Whole numbers of thousandths and halves of them, a little off.
            let k = (r >> 20) % 10_000_000_000;
            let nudge = [0.0, 0.5, 0.4999, 0.5001, 1e-9, -1e-9][(r % 6) as usize];
            values.push((k as f64 + nudge) / FIXED_SCALE[(r >> 8) as usize % 5]);
            // Any magnitude.
            let bits = next();
            values.push(f64::from_bits(bits));
            values.push((bits >> 11) as f64 / (1u64 << (bits % 60)) as f64);
        }
        for x in values {
            for d in 0..=5 {
                let mut s = String::new();
                push_fixed(&mut s, x, d);
                assert_eq!(s, format!("{x:.d$}"), "{x:e} with {d} decimals");
                let neg = -x;
                s.clear();
                push_fixed(&mut s, neg, d);
                assert_eq!(s, format!("{neg:.d$}"), "{neg:e} with {d} decimals");
            }
        }
    }

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

    #[test]
    fn tick_labels_use_offset_for_large_values() {
        let (l, off) = tick_labels(&[0.0, 2e9, 4e9], 2e9);
        assert_eq!(l, vec!["0", "2", "4"]);
        assert_eq!(off.as_deref(), Some("1e9"));
        let (l, off) = tick_labels(&[-0.5, 0.0, 0.5], 0.5);
        assert_eq!(l, vec!["\u{2212}0.5", "0.0", "0.5"]);
        assert!(off.is_none());
    }
}
