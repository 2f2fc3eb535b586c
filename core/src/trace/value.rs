//! Value texts of validated events decoded: unsigned integers
//! ([`parse_u64`]) and the contents of JSON strings
//! ([`decode_string_content`]).

use std::borrow::Cow;

/// Parses an unsigned decimal integer (no sign, no fraction).
pub fn parse_u64(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    if digits.len() < 20 {
        // At most 19 digits cannot overflow: no checked steps (pid and
        // tid of every event come through here; eight digits at once).
        let (mut v, rest) = match digits.split_first_chunk::<8>() {
            Some((eight, rest)) => (super::decimal::eight_digits(eight)?, rest),
            None => (0, digits),
        };
        // Then four at once: pids and tids are mostly five to seven digits,
        // whose digit-by-digit loop mispredicted on every length change.
        let rest = match rest.split_first_chunk::<4>() {
            Some((four, rest)) => {
                v = v * 10_000 + u64::from(super::decimal::four_digits(four)?);
                rest
            }
            None => rest,
        };
        for &c in rest {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + d as u64;
        }
        return Some(v);
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    Some(v)
}

/// Decodes the content of a JSON string (between the quotes). The content
/// must come from a validated string (escapes well formed, UTF-8 valid).
pub fn decode_string_content(raw: &[u8], escaped: bool) -> Option<Cow<'_, str>> {
    if !escaped {
        return std::str::from_utf8(raw).ok().map(Cow::Borrowed);
    }
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let c = raw[i];
        if c != b'\\' {
            let next = memchr::memchr(b'\\', &raw[i..]).map_or(raw.len(), |n| i + n);
            out.push_str(std::str::from_utf8(&raw[i..next]).ok()?);
            i = next;
            continue;
        }
        let e = *raw.get(i + 1)?;
        i += 2;
        match e {
            b'"' => out.push('"'),
            b'\\' => out.push('\\'),
            b'/' => out.push('/'),
            b'b' => out.push('\u{8}'),
            b'f' => out.push('\u{c}'),
            b'n' => out.push('\n'),
            b'r' => out.push('\r'),
            b't' => out.push('\t'),
            b'u' => {
                let hi = hex4(raw.get(i..i + 4)?)?;
                i += 4;
                let cp = if (0xD800..0xDC00).contains(&hi)
                    && raw.get(i) == Some(&b'\\')
                    && raw.get(i + 1) == Some(&b'u')
                {
                    let lo = hex4(raw.get(i + 2..i + 6)?)?;
                    if (0xDC00..0xE000).contains(&lo) {
                        i += 6;
                        0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                    } else {
                        hi
                    }
                } else {
                    hi
                };
                out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
            }
            _ => return None,
        }
    }
    Some(Cow::Owned(out))
}

fn hex4(b: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in b {
        v = v * 16 + (c as char).to_digit(16)?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_u64_agrees_with_std() {
        let mut cases: Vec<String> = [
            "",
            "0",
            "00",
            "4294967295",
            "9999999999999999999",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "100000000000000000000",
            "1a",
            "-1",
            "+1",
            " 1",
            "1.0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 22) as usize;
            let mut t: String = (0..len)
                .map(|k| (b'0' + ((x >> (k * 3 % 61)) % 10) as u8) as char)
                .collect();
            if x.is_multiple_of(7) && !t.is_empty() {
                // A non-digit anywhere: in the eight, the four or the rest.
                let at = (x >> 40) as usize % t.len();
                t.replace_range(at..at + 1, if x.is_multiple_of(2) { ":" } else { "/" });
            }
            cases.push(t);
        }
        for c in &cases {
            let want = if c.bytes().all(|b| b.is_ascii_digit()) {
                c.parse::<u64>().ok()
            } else {
                None
            };
            assert_eq!(parse_u64(c.as_bytes()), want, "{c:?}");
        }
    }

    #[test]
    fn decode_escapes() {
        assert_eq!(
            decode_string_content(br"a\n\u00e9\ud83d\ude00", true).unwrap(),
            "a\n\u{e9}\u{1F600}"
        );
    }
}
