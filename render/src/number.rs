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
//! * [`thousandths`]: a whole number of nanoseconds as microseconds, the
//!   digits of the integer put around a point, where that is the text the
//!   two above give the float `n / 1000`.

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

/// The sign and the digits, as one integer, of [`push_fixed`]'s text of
/// `x` with `decimals` decimals, where the scaled product `x *
/// 10^decimals` is under 2^43 (its rounding error then under 2^-11) and
/// not within 10^-3 of a half: it then rounds as the exact value does.
/// `None` for every other value (near a tie, large, not finite, more
/// than 4 decimals), whose text `format!` makes.
#[inline]
pub fn fixed_units(x: f64, decimals: usize) -> Option<(bool, u64)> {
    let &scale = FIXED_SCALE.get(decimals)?;
    let y = (x * scale).abs();
    // Large, or NaN (which no comparison holds for).
    if y.is_nan() || y >= (1u64 << 43) as f64 {
        return None;
    }
    // The cast truncates, which for `0 <= y < 2^43` is the floor, without
    // a call into the C library's `floor`.
    let whole = y as u64;
    let frac = y - whole as f64;
    if (frac - 0.5).abs() <= 1e-3 {
        return None;
    }
    Some((x.is_sign_negative(), whole + u64::from(frac > 0.5)))
}

/// The number [`push_fixed`]'s text of `x` reads back as, where
/// [`fixed_units`] spells it: `units / 10^decimals`, both exact in an
/// `f64` (`units` < 2^43), so the quotient is the float nearest the
/// decimal text, as parsing it gives. For a Parquet column that holds a
/// table file's values as its CSV spells them (docs/formats.md#parquet-tables)
/// without spelling and parsing each one.
#[inline]
pub fn fixed_value(x: f64, decimals: usize) -> Option<f64> {
    let (negative, units) = fixed_units(x, decimals)?;
    let v = units as f64 / FIXED_SCALE.get(decimals)?;
    Some(if negative { -v } else { v })
}

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
    let Some((negative, units)) = fixed_units(x, decimals) else {
        let _ = write!(out, "{x:.decimals$}");
        return;
    };
    // `format!` keeps the sign of a negative value that rounds to zero.
    if negative {
        out.push('-');
    }
    // The digits of `units` by `itoa`, not `write!` (the formatting
    // machinery took more than the rounding, docs/benchmarks.md#tracestat),
    // and the point put in among them.
    let mut buffer = itoa::Buffer::new();
    if decimals == 3 {
        // Microseconds, most of a table file's values: the whole part's
        // digits, then the point and decimals from their table, two
        // appends rather than three and a split.
        let frac = (units % 1000) as usize;
        out.push_str(buffer.format(units / 1000));
        out.push_str(DECIMALS.get(4 * frac..4 * frac + 4).unwrap_or(".000"));
        return;
    }
    let digits = buffer.format(units);
    if decimals == 0 {
        out.push_str(digits);
    } else if digits.len() > decimals {
        let (int, fraction) = digits.split_at(digits.len() - decimals);
        out.push_str(int);
        out.push('.');
        out.push_str(fraction);
    } else {
        out.push_str(&"0.000"[..2 + decimals - digits.len()]);
        out.push_str(digits);
    }
}

/// Nanoseconds under which [`thousandths`] splits them: `n / 1000` is
/// then under 2^35, where adjacent floats are less than 2^-17 apart.
const THOUSANDTHS_EXACT: u64 = 1 << 45;

/// `.000` to `.999`, four bytes each, for [`thousandths`].
const DECIMALS: &str = {
    const BYTES: [u8; 4000] = {
        let mut b = [0; 4000];
        let mut i = 0;
        while i < 1000 {
            b[4 * i] = b'.';
            b[4 * i + 1] = b'0' + (i / 100) as u8;
            b[4 * i + 2] = b'0' + (i / 10 % 10) as u8;
            b[4 * i + 3] = b'0' + (i % 10) as u8;
            i += 1;
        }
        b
    };
    match std::str::from_utf8(&BYTES) {
        Ok(text) => text,
        Err(_) => panic!("decimals are ASCII"),
    }
};

/// `n / 1000` in decimal, where `n` is small enough
/// ([`THOUSANDTHS_EXACT`]) that the float `n as f64 / 1000.0` is the
/// nearest to that decimal by far: rounded to three decimals
/// ([`push_fixed`]) it is that decimal, and no decimal with fewer digits
/// rounds to the same float, so without its trailing zeros (one decimal
/// kept) it is also the float's shortest round-trip form
/// ([`thousandths_bytes`]). Returns its sign, whole part and three
/// decimals (`.016`). Report times are whole nanoseconds shown in
/// microseconds: writing them from the integer skips the float's
/// formatting, most of the time of writing the path's table
/// (docs/tracestat.md#scale).
pub fn thousandths(n: i64) -> Option<(bool, u64, &'static str)> {
    let a = n.unsigned_abs();
    if a >= THOUSANDTHS_EXACT {
        return None;
    }
    let frac = (a % 1000) as usize;
    let decimals = DECIMALS.get(4 * frac..4 * frac + 4)?;
    Some((n < 0, a / 1000, decimals))
}

/// How many bytes of the decimals `.ddd` of `frac` thousandths the
/// shortest form keeps: one decimal at least, no trailing zero.
fn shortest_decimals(frac: usize) -> usize {
    match (frac % 100, frac % 10) {
        (0, _) => 2,
        (_, 0) => 3,
        _ => 4,
    }
}

/// Appends `n / 1000` with three decimals: the text of
/// `push_fixed(out, n as f64 / 1000.0, 3)`.
pub fn push_fixed_thousandths(out: &mut String, n: i64) {
    let Some((negative, whole, decimals)) = thousandths(n) else {
        push_fixed(out, n as f64 / 1000.0, 3);
        return;
    };
    if negative {
        out.push('-');
    }
    out.push_str(itoa::Buffer::new().format(whole));
    out.push_str(decimals);
}

/// `00` to `99`, two bytes each, for [`thousandths_bytes`].
const DIGIT_PAIRS: [u8; 200] = {
    let mut b = [0; 200];
    let mut i = 0;
    while i < 100 {
        b[2 * i] = b'0' + (i / 10) as u8;
        b[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    b
};

/// Room for [`thousandths_bytes`]: a sign, the 11 digits of a whole part
/// under 2^35 ([`THOUSANDTHS_EXACT`]) and four bytes of decimals, with
/// room to spare.
pub type ThousandthsBuf = [u8; 24];

/// The shortest text of [`thousandths`] (`12.016`, `12.5`, `12.0`) as
/// bytes, spelled into the end of `buf`; `None` where `n` is too large.
/// Spelled whole in one buffer and copied once, rather than sign, digits
/// and decimals each appended, the JSON path rows took 17% fewer
/// instructions (docs/tracestat.md#scale). (`&str` would cost a UTF-8
/// check that takes as long as the spelling.)
#[inline]
pub fn thousandths_bytes(n: i64, buf: &mut ThousandthsBuf) -> Option<&[u8]> {
    let a = n.unsigned_abs();
    if a >= THOUSANDTHS_EXACT {
        return None;
    }
    let frac = (a % 1000) as usize;
    let kept = shortest_decimals(frac);
    let end = buf.len() - 4;
    buf[end..].copy_from_slice(DECIMALS.as_bytes().get(4 * frac..4 * frac + 4)?);
    let mut at = end;
    let mut whole = a / 1000;
    while whole >= 100 {
        let pair = 2 * (whole % 100) as usize;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        whole /= 100;
    }
    if whole >= 10 {
        let pair = 2 * whole as usize;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + whole as u8;
    }
    if n < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    buf.get(at..end + kept)
}

/// Nanosecond counts to check a [`thousandths`] spelling on: every small
/// value, those around the limit and the ends of `i64`, and values of
/// every size of either sign.
#[cfg(test)]
pub(crate) fn thousandths_cases() -> Vec<i64> {
    let mut values: Vec<i64> = (-20_000..20_000).collect();
    let limit = THOUSANDTHS_EXACT as i64;
    for edge in [limit, -limit, i64::MAX, i64::MIN, i64::MAX / 1000] {
        values.extend((-3..=3).map(|d| edge.saturating_add(d)));
    }
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..200_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        values.push((seed >> (seed % 40)) as i64);
        values.push(-((seed >> 20) as i64));
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `push_fixed_thousandths` against `push_fixed` of the float.
    #[test]
    fn thousandths_are_the_floats_fixed_decimals() {
        for n in thousandths_cases() {
            let (mut ours, mut float) = (String::new(), String::new());
            push_fixed_thousandths(&mut ours, n);
            push_fixed(&mut float, n as f64 / 1000.0, 3);
            assert_eq!(ours, float, "{n}");
        }
    }

    /// Values of every magnitude, on and near the ties of each number of
    /// decimals, and the ends of `f64`.
    fn fixed_cases() -> Vec<f64> {
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
        values
    }

    /// `push_fixed` against `format!` on [`fixed_cases`] and their
    /// negatives.
    #[test]
    fn fixed_decimals_are_those_of_format() {
        for x in fixed_cases() {
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

    /// `fixed_value` and `fixed_units` against `push_fixed`'s text read
    /// back as a float and, without decimals, as an integer: the values
    /// a table's Parquet file holds (`sections::push_parquet_value`).
    #[test]
    fn fixed_values_are_the_texts_read_back() {
        let mut typed = 0;
        for x in fixed_cases().into_iter().flat_map(|x| [x, -x]) {
            for d in 0..=5 {
                let mut s = String::new();
                push_fixed(&mut s, x, d);
                let Some(value) = fixed_value(x, d) else {
                    continue;
                };
                typed += 1;
                let read: f64 = s.parse().unwrap();
                assert_eq!(
                    value.to_bits(),
                    read.to_bits(),
                    "{x:e} with {d} decimals: {s}"
                );
                if d == 0 {
                    let (negative, units) = fixed_units(x, 0).unwrap();
                    let units = units as i64;
                    let whole = if negative { -units } else { units };
                    assert_eq!(Ok(whole), s.parse::<i64>(), "{x:e}: {s}");
                }
            }
        }
        // Most of the cases are typed; the rest go through the text.
        assert!(typed > 200_000, "{typed}");
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
