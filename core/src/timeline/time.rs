//! Trace timestamps as integer nanoseconds.
//!
//! unitrace writes `ts`/`dur` in microseconds with six decimals
//! (docs/formats.md#trace-json-events), e.g. `1733400002125544.750000`. An
//! `f64` holds such an epoch time only to 0.25 us, so every interval is
//! kept as `i64` nanoseconds parsed from the text: sums, unions and
//! differences are exact and the same on every machine.

use crate::trace::decimal::{eight_digits, four_ascii_digits};

pub use super::model::Ns;

/// Parses a JSON number of microseconds into nanoseconds, rounding the
/// fourth decimal half away from zero. `None` when it does not fit in an
/// `i64` (about 292 years of nanoseconds) or is not a number.
#[inline]
pub fn us_text_to_ns(text: &[u8]) -> Option<Ns> {
    // Two numbers per event: the plain shape unitrace writes
    // (`-?digits[.digits]`, at most 16 integer digits) in one pass over
    // the text; anything else (exponents, overflow, garbage) by the
    // general parser, which gives the same answer for the plain shape.
    plain_us_text_to_ns(text).or_else(|| general_us_text_to_ns(text))
}

/// [`us_text_to_ns`] for `-?digits[.digits]` with 1 to 16 integer digits;
/// `None` for any other text (left to the general parser). The sum cannot
/// overflow a `u64` (16 digits times 1000 plus 1000 is below 1.8e19), and
/// since it only grows, it fits an `i64` exactly when the general parser's
/// checked steps all do.
#[inline]
fn plain_us_text_to_ns(text: &[u8]) -> Option<Ns> {
    let (neg, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut v: u64 = 0;
    let mut i = 0;
    // Epoch times have 16 integer digits: up to two runs of eight at once.
    while i < 16 {
        match digits.get(i..i + 8).and_then(eight_digits) {
            Some(eight) => {
                v = v * 100_000_000 + eight;
                i += 8;
            }
            None => break,
        }
    }
    while let Some(&c) = digits.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v * 10 + d as u64;
        i += 1;
        if i > 16 {
            return None;
        }
    }
    if i == 0 {
        return None;
    }
    v *= 1000;
    if let Some(&c) = digits.get(i) {
        if c != b'.' {
            return None;
        }
        let frac = &digits[i + 1..];
        if let Some(f) = short_fraction_ns(frac) {
            v += f?;
            let v = i64::try_from(v).ok()?;
            return Some(if neg { -v } else { v });
        }
        for (k, &c) in frac.iter().enumerate() {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            match k {
                0 => v += d as u64 * 100,
                1 => v += d as u64 * 10,
                2 => v += d as u64,
                3 if d >= 5 => v += 1,
                _ => {}
            }
        }
    }
    let v = i64::try_from(v).ok()?;
    Some(if neg { -v } else { v })
}

/// The nanoseconds (fourth decimal rounding) of up to eight decimals of a
/// microsecond value: `Some(None)` when one is not a digit, `None` for
/// more than eight or none (left to the caller's loop). Read as whole
/// words straight from the text (unitrace writes six decimals, Kineto
/// three): padding them into a buffer first made the word load wait on
/// the byte stores, a quarter of this parser's time (docs/benchmarks.md#tracestat).
#[inline(always)]
fn short_fraction_ns(frac: &[u8]) -> Option<Option<u64>> {
    let digit = |c: u8| c.wrapping_sub(b'0');
    match frac.len() {
        4..=8 => {
            let head = u32::from_le_bytes(*frac.first_chunk::<4>()?);
            let tail = u32::from_le_bytes(*frac.last_chunk::<4>()?);
            if !four_ascii_digits(head) || !four_ascii_digits(tail) {
                return Some(None);
            }
            let [a, b, c, d] = (head & 0x0F0F_0F0F).to_le_bytes();
            Some(Some(
                u64::from(a) * 100 + u64::from(b) * 10 + u64::from(c) + u64::from(d >= 5),
            ))
        }
        1..=3 => {
            let mut ns = 0u64;
            let mut scale = 100;
            for &c in frac {
                let d = digit(c);
                if d > 9 {
                    return Some(None);
                }
                ns += u64::from(d) * scale;
                scale /= 10;
            }
            Some(Some(ns))
        }
        _ => None,
    }
}

/// [`us_text_to_ns`] for any text.
fn general_us_text_to_ns(text: &[u8]) -> Option<Ns> {
    if text.iter().any(|&c| c == b'e' || c == b'E') {
        let v: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
        let ns = (v * 1000.0).round();
        return (ns.is_finite() && ns.abs() < 9.0e18).then_some(ns as i64);
    }
    let (neg, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let (int, frac) = match digits.iter().position(|&c| c == b'.') {
        Some(p) => (&digits[..p], &digits[p + 1..]),
        None => (digits, &digits[..0]),
    };
    if int.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &c in int {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as i64)?;
    }
    v = v.checked_mul(1000)?;
    let mut scale = 100;
    for (i, &c) in frac.iter().enumerate() {
        if !c.is_ascii_digit() {
            return None;
        }
        if i < 3 {
            v = v.checked_add((c - b'0') as i64 * scale)?;
            scale /= 10;
        } else if i == 3 && c >= b'5' {
            v = v.checked_add(1)?;
        }
    }
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_microsecond_text_exactly() {
        assert_eq!(
            us_text_to_ns(b"1733400002125544.750000"),
            Some(1_733_400_002_125_544_750)
        );
        assert_eq!(us_text_to_ns(b"2.601000"), Some(2601));
        assert_eq!(us_text_to_ns(b"2.6015"), Some(2602));
        assert_eq!(us_text_to_ns(b"-3.5"), Some(-3500));
        assert_eq!(us_text_to_ns(b"7"), Some(7000));
        assert_eq!(us_text_to_ns(b"1.5e3"), Some(1_500_000));
        assert_eq!(us_text_to_ns(b"1e400"), None);
        assert_eq!(us_text_to_ns(b"99999999999999999999"), None);
    }

    #[test]
    fn eight_digits_at_a_time() {
        // The fast path is taken for what unitrace writes, and agrees.
        assert_eq!(
            plain_us_text_to_ns(b"1733400002125544.750000"),
            Some(1_733_400_002_125_544_750)
        );
        assert_eq!(plain_us_text_to_ns(b"12345678.0005"), Some(12_345_678_001));
        assert_eq!(plain_us_text_to_ns(b"17334000021255441.5"), None);
        assert_eq!(plain_us_text_to_ns(b"1733400002125544.7500:0"), None);
        assert_eq!(
            plain_us_text_to_ns(b"1733400002125544.75000000"),
            Some(1_733_400_002_125_544_750)
        );
        assert_eq!(
            plain_us_text_to_ns(b"1733400002125544.750000009"),
            Some(1_733_400_002_125_544_750)
        );
        assert_eq!(plain_us_text_to_ns(b"1733400002125544.75000000:"), None);
    }

    #[test]
    fn digits_next_to_the_digit_range_parse_as_the_general_parser_does() {
        // Eight-byte words with one byte just outside '0'..='9' anywhere.
        let mut cases = Vec::new();
        for base in [
            "1733400002125544.750000",
            "12345678",
            "1234567812345678.12345678",
            "-87654321.5",
            "5519587459185.512",
            "12.3456",
            "-1.12345",
            "7.1234567",
        ] {
            for at in 0..base.len() {
                for c in [b'/', b':', b'?', b' ', 0u8, 0x80, b'0' + 10] {
                    let mut t = base.as_bytes().to_vec();
                    t[at] = c;
                    cases.push(t);
                }
            }
        }
        for c in &cases {
            assert_eq!(
                us_text_to_ns(c),
                general_us_text_to_ns(c),
                "{:?}",
                String::from_utf8_lossy(c)
            );
        }
    }

    #[test]
    fn the_plain_shape_parses_as_the_general_parser_does() {
        let mut cases: Vec<String> = [
            "",
            "-",
            ".",
            "-.",
            "5.",
            ".5",
            "-0",
            "0.0000",
            "1.2345",
            "1.23449",
            "-1.9995",
            "12.3.4",
            "1x",
            "1.x",
            "1.5e3",
            "1E3",
            "+5",
            " 5",
            "5 ",
            "00012.000500",
            "9223372036854775.807",
            "9223372036854775.8075",
            "9223372036854775.808",
            "-9223372036854775.807",
            "9999999999999999.9999",
            "99999999999999999",
            "1733400002125544.750000",
            "1733400002125544.7505",
            "1733400002125544.75049",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Pseudo-random texts over the characters that matter.
        let alphabet = b"0123456789.-eE5";
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 26) as usize;
            let mut t = String::new();
            let mut y = x;
            for _ in 0..len {
                y = y
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let c = if (y >> 60) < 13 {
                    b'0' + ((y >> 33) % 10) as u8
                } else {
                    alphabet[((y >> 33) % alphabet.len() as u64) as usize]
                };
                t.push(c as char);
            }
            cases.push(t);
        }
        for c in &cases {
            assert_eq!(
                us_text_to_ns(c.as_bytes()),
                general_us_text_to_ns(c.as_bytes()),
                "{c:?}"
            );
        }
    }
}
