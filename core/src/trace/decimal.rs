//! Exact decimal numbers for trace timestamps.
//!
//! unitrace prints `ts`/`dur` in microseconds with six decimals
//! (`1719391234567890.250000`, docs/formats.md#trace-json-events). That is 22 significant
//! digits: an `f64` keeps only ~16, so shifting a timestamp through a float
//! would change its digits. [`Decimal`] keeps the value as an integer
//! mantissa and a decimal scale, parsed from and printed back to the JSON
//! number text, so `ts - offset` is exact and keeps the input's number of
//! decimals.

use std::cmp::Ordering;
use std::fmt;

/// `mantissa / 10^scale`, exactly.
#[derive(Debug, Clone, Copy)]
pub struct Decimal {
    mantissa: i128,
    scale: u32,
}

/// The value of eight ASCII digits, `None` if one byte is not a digit
/// (SWAR: the eight bytes as one little-endian word, combined in three
/// multiplications: pairs, quads, the eight).
#[inline(always)]
pub fn eight_digits(bytes: &[u8]) -> Option<u64> {
    let w = u64::from_le_bytes(bytes.try_into().ok()?);
    // Each byte 0x30..=0x39: high nibble 3, and adding 6 keeps it 3.
    let high = w & 0xF0F0_F0F0_F0F0_F0F0;
    let carried = (w.wrapping_add(0x0606_0606_0606_0606) & 0xF0F0_F0F0_F0F0_F0F0) >> 4;
    if high | carried != 0x3333_3333_3333_3333 {
        return None;
    }
    let w = (w & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
    let w = (w & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    Some((w & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32)
}

/// The value of four ASCII digits, `None` if one byte is not a digit (as
/// [`eight_digits`], on a four-byte word).
#[inline(always)]
pub fn four_digits(bytes: &[u8; 4]) -> Option<u32> {
    let w = u32::from_le_bytes(*bytes);
    if !four_ascii_digits(w) {
        return None;
    }
    let w = (w & 0x0F0F_0F0F).wrapping_mul(2561) >> 8;
    Some((w & 0x00FF_00FF).wrapping_mul(6_553_601) >> 16)
}

/// Whether the four bytes of a little-endian word are ASCII digits.
#[inline(always)]
pub fn four_ascii_digits(w: u32) -> bool {
    // Each byte 0x30..=0x39: high nibble 3, and adding 6 keeps it 3.
    let high = w & 0xF0F0_F0F0;
    let carried = (w.wrapping_add(0x0606_0606) & 0xF0F0_F0F0) >> 4;
    high | carried == 0x3333_3333
}

/// Largest scale accepted (more decimals than any trace writer prints; keeps
/// the mantissa far from i128 overflow for realistic magnitudes).
const MAX_SCALE: u32 = 18;

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// The end of the run of ASCII digits that starts at `start`; `None` when
/// there is none (every digit run of a JSON number is non-empty).
fn digit_run_end(text: &[u8], start: usize) -> Option<usize> {
    let len = text
        .get(start..)?
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    (len > 0).then_some(start + len)
}

/// `m * 10^len(digits) + digits`, taking the digits 18 at a time in a u64
/// (per-digit i128 arithmetic dominated the cost of shifting timestamps).
fn push_digits(mut m: i128, digits: &[u8]) -> Option<i128> {
    for chunk in digits.chunks(18) {
        let mut v: u64 = 0;
        for &c in chunk {
            v = v * 10 + (c - b'0') as u64;
        }
        m = m
            .checked_mul(pow10(chunk.len() as u32)?)?
            .checked_add(v as i128)?;
    }
    Some(m)
}

impl Decimal {
    pub const ZERO: Decimal = Decimal {
        mantissa: 0,
        scale: 0,
    };

    pub fn from_parts(mantissa: i128, scale: u32) -> Decimal {
        Decimal { mantissa, scale }
    }

    pub fn from_int(v: i64) -> Decimal {
        Decimal {
            mantissa: v as i128,
            scale: 0,
        }
    }

    pub fn mantissa(&self) -> i128 {
        self.mantissa
    }

    pub fn scale(&self) -> u32 {
        self.scale
    }

    pub fn is_zero(&self) -> bool {
        self.mantissa == 0
    }

    /// Parses JSON number text (`-12.5e3` included). `None` for text that is
    /// not a number or whose value does not fit (more than 18 decimals,
    /// magnitude beyond ~1e20 at that scale).
    pub fn parse(text: &[u8]) -> Option<Decimal> {
        let mut i = 0;
        let neg = text.first() == Some(&b'-');
        if neg {
            i += 1;
        }
        let start = i;
        i = digit_run_end(text, start)?;
        let mut mantissa = push_digits(0, &text[start..i])?;
        let mut scale: u32 = 0;
        if i < text.len() && text[i] == b'.' {
            i += 1;
            let start = i;
            i = digit_run_end(text, start)?;
            mantissa = push_digits(mantissa, &text[start..i])?;
            scale = (i - start) as u32;
        }
        if i < text.len() && (text[i] == b'e' || text[i] == b'E') {
            i += 1;
            let eneg = match text.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let start = i;
            i = digit_run_end(text, start)?;
            let mut exp: u32 = 0;
            for &d in &text[start..i] {
                exp = exp.checked_mul(10)?.checked_add((d - b'0') as u32)?;
            }
            if eneg {
                scale = scale.checked_add(exp)?;
            } else if exp <= scale {
                scale -= exp;
            } else {
                mantissa = mantissa.checked_mul(pow10(exp - scale)?)?;
                scale = 0;
            }
        }
        if i != text.len() || scale > MAX_SCALE {
            return None;
        }
        Some(Decimal {
            mantissa: if neg { -mantissa } else { mantissa },
            scale,
        })
    }

    /// The same value with `scale` decimals (`None` if that would drop
    /// non-zero digits or overflow).
    pub fn rescale(self, scale: u32) -> Option<Decimal> {
        match scale.cmp(&self.scale) {
            Ordering::Equal => Some(self),
            Ordering::Greater => Some(Decimal {
                mantissa: self.mantissa.checked_mul(pow10(scale - self.scale)?)?,
                scale,
            }),
            Ordering::Less => {
                let f = pow10(self.scale - scale)?;
                if self.mantissa % f != 0 {
                    return None;
                }
                Some(Decimal {
                    mantissa: self.mantissa / f,
                    scale,
                })
            }
        }
    }

    fn common(a: Decimal, b: Decimal) -> Option<(i128, i128, u32)> {
        let s = a.scale.max(b.scale);
        Some((a.rescale(s)?.mantissa, b.rescale(s)?.mantissa, s))
    }

    pub fn checked_sub(self, other: Decimal) -> Option<Decimal> {
        let (a, b, s) = Decimal::common(self, other)?;
        Some(Decimal {
            mantissa: a.checked_sub(b)?,
            scale: s,
        })
    }

    pub fn checked_add(self, other: Decimal) -> Option<Decimal> {
        let (a, b, s) = Decimal::common(self, other)?;
        Some(Decimal {
            mantissa: a.checked_add(b)?,
            scale: s,
        })
    }

    /// Multiplies by `10^n` (unit conversion, e.g. seconds to microseconds).
    pub fn shift_decimal_point(self, n: u32) -> Option<Decimal> {
        if n <= self.scale {
            Some(Decimal {
                mantissa: self.mantissa,
                scale: self.scale - n,
            })
        } else {
            Some(Decimal {
                mantissa: self.mantissa.checked_mul(pow10(n - self.scale)?)?,
                scale: 0,
            })
        }
    }

    pub fn to_f64(self) -> f64 {
        self.mantissa as f64 / 10f64.powi(self.scale as i32)
    }

    /// Appends the value with exactly `self.scale()` decimals.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        use std::io::Write;
        let _ = write!(out, "{self}");
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Digits into a stack buffer (no allocation: called once per shifted
        // event). u128::MAX has 39 digits; MAX_SCALE adds at most 18 zeros
        // and the point, the sign 1.
        let mut buf = [0u8; 64];
        let mut at = buf.len();
        let scale = self.scale as usize;
        // Split into u64 pieces of 18 digits: one u128 division per piece
        // instead of one per digit.
        let mut m = self.mantissa.unsigned_abs();
        let mut written = 0usize;
        loop {
            let piece = (m % 1_000_000_000_000_000_000) as u64;
            m /= 1_000_000_000_000_000_000;
            let mut p = piece;
            for _ in 0..18 {
                if m == 0 && p == 0 {
                    break;
                }
                if written == scale && scale > 0 {
                    at -= 1;
                    buf[at] = b'.';
                }
                at -= 1;
                buf[at] = b'0' + (p % 10) as u8;
                p /= 10;
                written += 1;
            }
            if m == 0 {
                break;
            }
        }
        // Leading zeros of the fraction and the `0` before the point.
        while written <= scale {
            if written == scale && scale > 0 {
                at -= 1;
                buf[at] = b'.';
            }
            at -= 1;
            buf[at] = b'0';
            written += 1;
        }
        if self.mantissa < 0 {
            at -= 1;
            buf[at] = b'-';
        }
        // Only ASCII digits, '.', '-' were written.
        f.write_str(std::str::from_utf8(&buf[at..]).map_err(|_| fmt::Error)?)
    }
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Decimal {}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        match Decimal::common(*self, *other) {
            Some((a, b, _)) => a.cmp(&b),
            // Only reachable for magnitudes near i128::MAX / 10^18: compare
            // through floats, which is exact enough to order them.
            None => self
                .to_f64()
                .partial_cmp(&other.to_f64())
                .unwrap_or(Ordering::Equal),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_digits_agrees_with_a_digit_loop() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for n in 0..100_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let text = format!("{:08}", x % 100_000_000);
            assert_eq!(eight_digits(text.as_bytes()), Some(x % 100_000_000));
            // One byte changed to anything else.
            let mut bad = text.into_bytes();
            let at = (n % 8) as usize;
            bad[at] = (x >> 40) as u8;
            let want = bad.iter().try_fold(0u64, |v, &c| {
                c.is_ascii_digit().then(|| v * 10 + (c - b'0') as u64)
            });
            assert_eq!(eight_digits(&bad), want, "{bad:?}");
        }
        for c in 0..=255u8 {
            let mut t = *b"12345678";
            t[3] = c;
            assert_eq!(eight_digits(&t).is_some(), c.is_ascii_digit(), "{c}");
        }
    }

    #[test]
    fn four_digits_agrees_with_a_digit_loop() {
        for n in 0..10_000u32 {
            let text = format!("{n:04}");
            let t: [u8; 4] = text.as_bytes().try_into().unwrap();
            assert_eq!(four_digits(&t), Some(n));
        }
        for at in 0..4 {
            for c in 0..=255u8 {
                let mut t = *b"1234";
                t[at] = c;
                assert_eq!(four_digits(&t).is_some(), c.is_ascii_digit(), "{t:?}");
            }
        }
    }

    fn d(s: &str) -> Decimal {
        Decimal::parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn keeps_every_digit() {
        let ts = d("1719391234567890.250000");
        assert_eq!(ts.to_string(), "1719391234567890.250000");
        let shifted = ts.checked_sub(d("1000000.125000")).unwrap();
        assert_eq!(shifted.to_string(), "1719391233567890.125000");
        assert_eq!(d("-0.5").to_string(), "-0.5");
        assert_eq!(Decimal::from_parts(0, 0).to_string(), "0");
        assert_eq!(Decimal::from_parts(5, 2).to_string(), "0.05");
        assert_eq!(Decimal::from_parts(-150, 2).to_string(), "-1.50");
        assert_eq!(Decimal::from_parts(0, 3).to_string(), "0.000");
        assert_eq!(
            Decimal::from_parts(1_000_000_000_000_000_000, 0).to_string(),
            "1000000000000000000"
        );
        assert_eq!(
            Decimal::from_parts(-1_000_000_000_000_000_007, 20).to_string(),
            "-0.01000000000000000007"
        );
        for text in ["123456789012345678901234.5", "0.000000000000000001", "7"] {
            assert_eq!(d(text).to_string(), text);
        }
        assert_eq!(
            d("12").checked_sub(d("12.75")).unwrap().to_string(),
            "-0.75"
        );
    }

    #[test]
    fn exponents_and_rejects() {
        assert_eq!(d("1.5e3").to_string(), "1500");
        assert_eq!(d("15e-1").to_string(), "1.5");
        assert!(Decimal::parse(b"1.").is_none());
        assert!(Decimal::parse(b"abc").is_none());
        assert!(Decimal::parse(b"1e").is_none());
        assert!(Decimal::parse(b"").is_none());
        assert!(Decimal::parse(b"-").is_none());
        assert!(Decimal::parse(b"1e+").is_none());
        assert!(Decimal::parse(b"-.5").is_none());
        assert_eq!(d("-2.50E+2").to_string(), "-250");
    }

    #[test]
    fn compares_across_scales() {
        assert!(d("2") > d("1.999999"));
        assert_eq!(d("1.50"), d("1.5"));
        assert_eq!(
            d("1.5").shift_decimal_point(6).unwrap().to_string(),
            "1500000"
        );
    }
}
