//! Trace timestamps as integer nanoseconds.
//!
//! unitrace writes `ts`/`dur` in microseconds with six decimals
//! (docs/formats.md#trace-json-events), e.g. `1733400002125544.750000`. An
//! `f64` holds such an epoch time only to 0.25 us, so every interval is
//! kept as `i64` nanoseconds parsed from the text: sums, unions and
//! differences are exact and the same on every machine.

/// Nanoseconds since the Unix epoch (or a duration in nanoseconds).
pub type Ns = i64;

/// Parses a JSON number of microseconds into nanoseconds, rounding the
/// fourth decimal half away from zero. `None` when it does not fit in an
/// `i64` (about 292 years of nanoseconds) or is not a number.
pub fn us_text_to_ns(text: &[u8]) -> Option<Ns> {
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

/// Nanoseconds as microseconds, for reports.
pub fn us(ns: Ns) -> f64 {
    ns as f64 / 1000.0
}

/// `100 * part / whole`, 0 when `whole` is 0.
pub fn pct(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        100.0 * part / whole
    } else {
        0.0
    }
}

/// Parses a duration like `10us`, `2.5ms`, `1s`, `500ns` (bare numbers are
/// microseconds) into nanoseconds.
pub fn parse_duration(text: &str) -> Result<Ns, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a duration (e.g. 10us, 2ms)"))?;
    let scale = match unit.trim() {
        "ns" => 1.0,
        "" | "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => {
            return Err(format!(
                "unknown unit '{other}' in '{text}' (ns, us, ms, s)"
            ))
        }
    };
    let ns = (v * scale).round();
    if !ns.is_finite() || ns > 9.0e18 {
        return Err(format!("'{text}' is too large"));
    }
    Ok(ns as Ns)
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
    fn parses_durations() {
        assert_eq!(parse_duration("10us"), Ok(10_000));
        assert_eq!(parse_duration("10"), Ok(10_000));
        assert_eq!(parse_duration("2.5ms"), Ok(2_500_000));
        assert_eq!(parse_duration("1s"), Ok(1_000_000_000));
        assert_eq!(parse_duration("500ns"), Ok(500));
        assert!(parse_duration("5 parsecs").is_err());
    }
}
