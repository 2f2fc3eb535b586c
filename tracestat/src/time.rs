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
    // Two `ts`/`dur` per event make this a hot loop of `tracestat`: the
    // plain `digits.digits` form goes through the word-at-a-time parser,
    // and only text it refuses is looked at again for an exponent.
    fixed_point_us_to_ns(text).or_else(|| exponent_us_to_ns(text))
}

/// `[-]DIGITS[.DIGITS]`, rounded at the fourth decimal; `None` for any
/// other text or a value that does not fit.
fn fixed_point_us_to_ns(text: &[u8]) -> Option<Ns> {
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
    // At most 18 integer digits: the value times 1000 plus the fraction
    // then stays below 2^63 before the `i64` check. Longer text (beyond
    // ~292 years) takes the checked byte loop.
    let mut v: u64 = if int.len() <= 18 {
        let head = int.len() % 8;
        let mut v = 0u64;
        for &c in &int[..head] {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v * 10 + u64::from(c - b'0');
        }
        for chunk in int[head..].chunks_exact(8) {
            v = v * 100_000_000 + eight_digits(chunk)?;
        }
        v
    } else {
        let mut v: u64 = 0;
        for &c in int {
            if !c.is_ascii_digit() {
                return None;
            }
            v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
        }
        v
    };
    v = v.checked_mul(1000)?;
    let mut scale = 100;
    for (i, &c) in frac.iter().enumerate() {
        if !c.is_ascii_digit() {
            return None;
        }
        if i < 3 {
            v = v.checked_add(u64::from(c - b'0') * scale)?;
            scale /= 10;
        } else if i == 3 && c >= b'5' {
            v = v.checked_add(1)?;
        }
    }
    let v = i64::try_from(v).ok()?;
    Some(if neg { -v } else { v })
}

/// Eight ASCII digits as their value, `None` if any byte is not a digit
/// (the SWAR digit test and combine of simdjson's number parser).
fn eight_digits(chunk: &[u8]) -> Option<u64> {
    let word = u64::from_le_bytes(chunk.try_into().ok()?);
    let high = word & 0xF0F0_F0F0_F0F0_F0F0;
    let above = (word.wrapping_add(0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4;
    if high | above != 0x3333_3333_3333_3333 {
        return None;
    }
    let mut v = word - 0x3030_3030_3030_3030;
    v = v.wrapping_mul(10).wrapping_add(v >> 8);
    v = (v & 0x0000_00FF_0000_00FF)
        .wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(((v >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32)))
        >> 32;
    Some(v)
}

/// Numbers with an exponent (`1.5e3`): through `f64`, as JSON allows.
fn exponent_us_to_ns(text: &[u8]) -> Option<Ns> {
    if !text.iter().any(|&c| c == b'e' || c == b'E') {
        return None;
    }
    let v: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    let ns = (v * 1000.0).round();
    (ns.is_finite() && ns.abs() < 9.0e18).then_some(ns as i64)
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

    /// The byte-at-a-time parser this module had before the word-at-a-time
    /// one: the reference the fast path must agree with.
    fn reference_us_text_to_ns(text: &[u8]) -> Option<Ns> {
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

    #[test]
    fn word_parser_agrees_with_the_byte_loop() {
        // Every length 0..=24, digits mixed with every byte value at
        // every position (the SWAR digit test's edge bytes: '/', ':',
        // 0xFA..0xFF), around the i64 limit, with and without '-'/'.'.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut checked = 0;
        for len in 0..=24usize {
            for _ in 0..3000 {
                let mut t: Vec<u8> = (0..len).map(|_| b'0' + (next() % 10) as u8).collect();
                match next() % 6 {
                    0 if len > 0 => {
                        let at = (next() as usize) % len;
                        t[at] = b'.';
                    }
                    1 if len > 0 => {
                        let at = (next() as usize) % len;
                        t[at] = (next() % 256) as u8;
                    }
                    2 if len > 0 => t[0] = b'-',
                    3 if len > 1 => {
                        t[0] = b'-';
                        let at = 1 + (next() as usize) % (len - 1);
                        t[at] = b'.';
                    }
                    _ => {}
                }
                assert_eq!(
                    us_text_to_ns(&t),
                    reference_us_text_to_ns(&t),
                    "{:?}",
                    String::from_utf8_lossy(&t)
                );
                checked += 1;
            }
        }
        for edge in [
            &b"9223372036854775.807"[..],
            b"9223372036854775.8075",
            b"9223372036854775.808",
            b"-9223372036854775.807",
            b"9223372036854776",
            b"999999999999999999",
            b"1000000000000000000",
            b"12345678/1",
            b"1234567:.0",
            b"12345678\xfa.1",
            b"00000000000000000001.5",
            b".5",
            b"-",
            b"1.",
            b"1.2.3",
        ] {
            assert_eq!(
                us_text_to_ns(edge),
                reference_us_text_to_ns(edge),
                "{edge:?}"
            );
            checked += 1;
        }
        for b in 0..=255u8 {
            for at in 0..16 {
                let mut t = *b"1733400002125544";
                t[at] = b;
                assert_eq!(us_text_to_ns(&t), reference_us_text_to_ns(&t), "{t:?}");
                checked += 1;
            }
        }
        assert!(checked > 75_000);
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
