//! The byte parser: byte-level validation of every event the walkers
//! (`token_walk`, `direct_walk`) are not sure of, so that every error,
//! position and truncation is decided here
//! (docs/benchmarks.md#the-json-trace-scanner). Every function works on the
//! bytes read so far and either returns the index just after what it
//! parsed, or `Incomplete` when it ran into the end of the data (the caller
//! reads more and retries from the start of the unit), or `Invalid` with
//! the index of the offending byte.

use super::event::{EventFields, Field, Span};

/// Nesting depth accepted inside one event.
const MAX_DEPTH: usize = 256;

/// Iterates over the members of a validated JSON object text (e.g. the
/// `args` value of an event): yields `(key content, value span)` with the
/// span relative to `object`.
pub fn object_members(object: &[u8]) -> impl Iterator<Item = (&[u8], Span)> + '_ {
    let mut i = 1; // after '{'
    std::iter::from_fn(move || {
        i = skip_ws(object, i);
        if object.get(i) == Some(&b',') {
            i = skip_ws(object, i + 1);
        }
        if object.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = parse_string(object, i).ok()?.0;
        let key = &object[i + 1..key_end - 1];
        i = skip_ws(object, key_end);
        if object.get(i) != Some(&b':') {
            return None;
        }
        let vstart = skip_ws(object, i + 1);
        let vend = parse_value(object, vstart, 1).ok()?;
        i = vend;
        Some((
            key,
            Span {
                start: vstart as u32,
                end: vend as u32,
            },
        ))
    })
}

#[derive(Debug)]
pub(super) enum PErr {
    Incomplete,
    Invalid(usize, String),
    Utf8(usize),
    /// A `traceEvents` element that is valid JSON but not an object.
    NotObject(usize),
    /// The first byte of the input cannot start a trace.
    NotJson(usize, String),
    /// `traceEvents` is valid JSON but not an array.
    NotArray(usize),
}

pub(super) type PResult<T> = Result<T, PErr>;

/// Class of each byte inside a string: 0 ordinary, 1 quote, 2 backslash,
/// 3 control character (invalid), 4 non-ASCII (UTF-8 check needed).
static STRING_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = if i < 0x20 {
            3
        } else if i == b'"' as usize {
            1
        } else if i == b'\\' as usize {
            2
        } else if i >= 0x80 {
            4
        } else {
            0
        };
        i += 1;
    }
    t
};

#[inline]
pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\n' | b'\r' | b'\t') {
        i += 1;
    }
    i
}

#[inline]
pub(super) fn ws_then(b: &[u8], i: usize) -> PResult<(usize, u8)> {
    let i = skip_ws(b, i);
    match b.get(i) {
        Some(&c) => Ok((i, c)),
        None => Err(PErr::Incomplete),
    }
}

pub(super) fn describe(c: u8) -> String {
    if c.is_ascii_graphic() {
        format!("'{}'", c as char)
    } else {
        format!("byte 0x{c:02x}")
    }
}

pub(super) const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Bytes of `x` equal to zero marked by their high bit; the lowest mark is
/// exact (a borrow only runs upward from a real zero byte), which is all
/// the caller uses.
#[inline(always)]
pub(super) fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// From `j`, skips the string bytes that need no attention (class 0 of
/// [`STRING_CLASS`], and non-ASCII bytes, noted in `non_ascii` for the
/// UTF-8 check at the closing quote) eight at a time (SWAR), and returns
/// the index of the first quote, backslash or control character, or
/// `b.len()`. Kernel names and arguments make string bodies the bulk of a
/// trace (docs/benchmarks.md#mergetrace), so this loop is the scanner's
/// hottest.
#[inline(always)]
fn skip_plain_string_bytes(b: &[u8], mut j: usize, non_ascii: &mut bool) -> usize {
    while let Some(chunk) = b.get(j..j + 8) {
        let v = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let quote = zero_bytes(v ^ (ONES * b'"' as u64));
        let backslash = zero_bytes(v ^ (ONES * b'\\' as u64));
        // Bytes below 0x20 among the ASCII ones (`& !v` leaves out bytes
        // with the high bit set, which are non-ASCII, not controls).
        let control = v.wrapping_sub(ONES * 0x20) & !v & HIGHS;
        let stop = quote | backslash | control;
        if stop != 0 {
            let at = (stop.trailing_zeros() / 8) as usize;
            // Non-ASCII bytes before the stop; one after it only costs a
            // needless (still correct) UTF-8 check of this string.
            *non_ascii |= v & HIGHS != 0;
            return j + at;
        }
        *non_ascii |= v & HIGHS != 0;
        j += 8;
    }
    while j < b.len() {
        match STRING_CLASS[b[j] as usize] {
            0 => {}
            4 => *non_ascii = true,
            _ => break,
        }
        j += 1;
    }
    j
}

/// From `j`, skips ASCII digits eight at a time (SWAR) and returns the index
/// of the first other byte, or `b.len()`: timestamps and ids, 10 to 20
/// digits each, are most of what is not a string in a trace.
#[inline(always)]
pub(super) fn skip_digits(b: &[u8], mut j: usize) -> usize {
    while let Some(chunk) = b.get(j..j + 8) {
        let v = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // Digits become 0..=9: their high nibble is 0, and stays 0 after
        // adding 6. A carry out of a byte only starts at a non-digit, so
        // the lowest marked byte is exactly the first non-digit.
        let t = v ^ (ONES * b'0' as u64);
        let non_digit = (t | t.wrapping_add(ONES * 6)) & (ONES * 0xF0);
        if non_digit != 0 {
            return j + (non_digit.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    j
}

/// Parses the string starting at the quote `b[i]`; returns the index after
/// the closing quote and whether it contained escapes.
#[inline]
pub(super) fn parse_string(b: &[u8], i: usize) -> PResult<(usize, bool)> {
    let mut j = i + 1;
    let mut escaped = false;
    let mut non_ascii = false;
    loop {
        j = skip_plain_string_bytes(b, j, &mut non_ascii);
        let Some(&c) = b.get(j) else {
            return Err(PErr::Incomplete);
        };
        match STRING_CLASS[c as usize] {
            1 => {
                if non_ascii {
                    if let Err(e) = std::str::from_utf8(&b[i + 1..j]) {
                        return Err(PErr::Utf8(i + 1 + e.valid_up_to()));
                    }
                }
                return Ok((j + 1, escaped));
            }
            2 => {
                escaped = true;
                let Some(&e) = b.get(j + 1) else {
                    return Err(PErr::Incomplete);
                };
                match e {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 2,
                    b'u' => {
                        for k in 0..4 {
                            match b.get(j + 2 + k) {
                                None => return Err(PErr::Incomplete),
                                Some(h) if h.is_ascii_hexdigit() => {}
                                Some(_) => {
                                    return Err(PErr::Invalid(
                                        j,
                                        "bad \\u escape in a string".into(),
                                    ))
                                }
                            }
                        }
                        j += 6;
                    }
                    _ => return Err(PErr::Invalid(j, "invalid escape in a string".into())),
                }
            }
            3 => return Err(PErr::Invalid(j, "control character inside a string".into())),
            _ => {
                non_ascii = true;
                j += 1;
            }
        }
    }
}

#[inline]
fn parse_number(b: &[u8], i: usize) -> PResult<usize> {
    let mut j = i;
    if b.get(j) == Some(&b'-') {
        j += 1;
    }
    let digits = |j: &mut usize| -> PResult<usize> {
        let s = *j;
        *j = skip_digits(b, *j);
        if *j == b.len() {
            return Err(PErr::Incomplete);
        }
        Ok(*j - s)
    };
    match b.get(j) {
        None => return Err(PErr::Incomplete),
        Some(b'0') => {
            j += 1;
            if j == b.len() {
                return Err(PErr::Incomplete);
            }
        }
        Some(b'1'..=b'9') => {
            digits(&mut j)?;
        }
        Some(&c) => return Err(PErr::Invalid(j, format!("bad number at {}", describe(c)))),
    }
    if b[j] == b'.' {
        j += 1;
        if digits(&mut j)? == 0 {
            return Err(PErr::Invalid(j, "number without digits after '.'".into()));
        }
    }
    if b[j] == b'e' || b[j] == b'E' {
        j += 1;
        match b.get(j) {
            None => return Err(PErr::Incomplete),
            Some(b'+' | b'-') => j += 1,
            _ => {}
        }
        if digits(&mut j)? == 0 {
            return Err(PErr::Invalid(j, "number without exponent digits".into()));
        }
    }
    Ok(j)
}

fn parse_literal(b: &[u8], i: usize, lit: &[u8]) -> PResult<usize> {
    let avail = &b[i..b.len().min(i + lit.len())];
    if avail != &lit[..avail.len()] {
        return Err(PErr::Invalid(i, "invalid literal".into()));
    }
    if avail.len() < lit.len() {
        return Err(PErr::Incomplete);
    }
    Ok(i + lit.len())
}

pub(super) fn parse_value(b: &[u8], i: usize, depth: usize) -> PResult<usize> {
    match b.get(i) {
        None => Err(PErr::Incomplete),
        Some(b'"') => parse_string(b, i).map(|r| r.0),
        Some(b'{') => parse_object(b, i, depth + 1, None),
        Some(b'[') => parse_array(b, i, depth + 1),
        Some(b'-' | b'0'..=b'9') => parse_number(b, i),
        Some(b't') => parse_literal(b, i, b"true"),
        Some(b'f') => parse_literal(b, i, b"false"),
        Some(b'n') => parse_literal(b, i, b"null"),
        Some(&c) => Err(PErr::Invalid(i, format!("unexpected {}", describe(c)))),
    }
}

fn parse_array(b: &[u8], i: usize, depth: usize) -> PResult<usize> {
    if depth > MAX_DEPTH {
        return Err(PErr::Invalid(i, "nesting too deep".into()));
    }
    let (mut j, c) = ws_then(b, i + 1)?;
    if c == b']' {
        return Ok(j + 1);
    }
    loop {
        j = parse_value(b, j, depth)?;
        let (k, c) = ws_then(b, j)?;
        match c {
            b',' => j = ws_then(b, k + 1)?.0,
            b']' => return Ok(k + 1),
            _ => {
                return Err(PErr::Invalid(
                    k,
                    format!("expected ',' or ']', found {}", describe(c)),
                ))
            }
        }
    }
}

/// Parses an object; at depth 1 (an event) records the spans of known keys,
/// relative to `i`.
pub(super) fn parse_object(
    b: &[u8],
    i: usize,
    depth: usize,
    mut fields: Option<&mut EventFields>,
) -> PResult<usize> {
    if depth > MAX_DEPTH {
        return Err(PErr::Invalid(i, "nesting too deep".into()));
    }
    let (mut j, c) = ws_then(b, i + 1)?;
    if c == b'}' {
        return Ok(j + 1);
    }
    loop {
        if b[j] != b'"' {
            return Err(PErr::Invalid(
                j,
                format!("expected a key, found {}", describe(b[j])),
            ));
        }
        let (key_end, _) = parse_string(b, j)?;
        let (k, c) = ws_then(b, key_end)?;
        if c != b':' {
            return Err(PErr::Invalid(
                k,
                format!("expected ':', found {}", describe(c)),
            ));
        }
        let (vstart, vc) = ws_then(b, k + 1)?;
        let vend = if vc == b'"' {
            let (end, escaped) = parse_string(b, vstart)?;
            if let Some(f) = fields.as_deref_mut() {
                if let Some(field) = Field::from_key(&b[j + 1..key_end - 1]) {
                    record(f, field, i, vstart, end);
                    if escaped {
                        f.escaped |= 1 << field as u16;
                    }
                }
            }
            end
        } else {
            let end = parse_value(b, vstart, depth)?;
            if let Some(f) = fields.as_deref_mut() {
                if let Some(field) = Field::from_key(&b[j + 1..key_end - 1]) {
                    record(f, field, i, vstart, end);
                }
            }
            end
        };
        let (k, c) = ws_then(b, vend)?;
        match c {
            b',' => j = ws_then(b, k + 1)?.0,
            b'}' => return Ok(k + 1),
            _ => {
                return Err(PErr::Invalid(
                    k,
                    format!("expected ',' or '}}', found {}", describe(c)),
                ))
            }
        }
    }
}

#[inline]
fn record(f: &mut EventFields, field: Field, base: usize, start: usize, end: usize) {
    f.spans[field as usize] = Span {
        start: (start - base) as u32,
        end: (end - base) as u32,
    };
    f.escaped &= !(1 << field as u16);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight-at-a-time skips stop exactly where a byte-by-byte loop
    /// does, for every byte value at every position of a word and of the
    /// tail, whatever precedes it.
    #[test]
    fn word_skips_agree_with_byte_loops() {
        for len in [1usize, 7, 8, 9, 16, 19] {
            for at in 0..len {
                for byte in 0..=255u8 {
                    for filler in [b'a', 0xC3, b'7'] {
                        let mut buf = vec![filler; len];
                        buf[at] = byte;
                        let plain_end = buf
                            .iter()
                            .position(|&c| !matches!(STRING_CLASS[c as usize], 0 | 4))
                            .unwrap_or(len);
                        let mut non_ascii = false;
                        let got = skip_plain_string_bytes(&buf, 0, &mut non_ascii);
                        assert_eq!(got, plain_end, "string {buf:?}");
                        if buf[..plain_end].iter().any(|&c| c >= 0x80) {
                            assert!(non_ascii, "non-ASCII missed in {buf:?}");
                        }
                        let digit_end = buf.iter().position(|c| !c.is_ascii_digit()).unwrap_or(len);
                        assert_eq!(skip_digits(&buf, 0), digit_end, "digits {buf:?}");
                    }
                }
            }
        }
    }
}
