//! Member keys as the walkers read them: [`short_key`] takes `"key":` from
//! the 8 bytes at its opening quote, and each walker keeps, per slot below,
//! a guess of the key that comes next
//! (docs/benchmarks.md#the-json-trace-scanner).

use super::byte_parser::{zero_bytes, ONES};
use super::event::FIELD_COUNT;

/// Slots of [`Structurals::next_key`]: one per recorded field, one for any
/// other key, one for the start of an event.
pub(super) const OTHER_KEY: usize = FIELD_COUNT;
pub(super) const FIRST_KEY: usize = FIELD_COUNT + 1;
pub(super) const KEY_SLOTS: usize = FIELD_COUNT + 2;
/// The direct walk's slots: those above and one for the first key of an
/// object inside the event.
pub(super) const NESTED_FIRST_KEY: usize = KEY_SLOTS;
pub(super) const DIRECT_KEY_SLOTS: usize = KEY_SLOTS + 1;

/// Reads `"key":` from the 8 bytes at a key's opening quote (little-endian
/// word, the quote in the low byte) when the key has at most 5 bytes:
/// returns its length and its bytes as a word padded with zeros (see
/// [`Field::from_word`]). The closing quote is the first quote after the
/// opening one, as for stage 1 (a backslash anywhere makes the walker
/// reject the event).
#[inline(always)]
pub(super) fn short_key(word: u64) -> Option<(usize, u64)> {
    // Quotes become zero bytes; the opening quote's byte is set to 0xFF so
    // that no borrow runs from it and the lowest mark is exact.
    let quotes = zero_bytes((word ^ (ONES * b'"' as u64)) | 0xFF);
    let close = (quotes.trailing_zeros() / 8) as usize; // 8: none
    if close > 6 || (word >> (8 * (close + 1))) as u8 != b':' {
        return None;
    }
    let len = close - 1;
    Some((len, (word >> 8) & ((1u64 << (8 * len)) - 1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `short_key` against a byte-by-byte reading of `"key":`, for every
    /// byte value at every position of the word, over several keys.
    #[test]
    fn short_key_agrees_with_a_byte_reading() {
        fn by_bytes(w: &[u8; 8]) -> Option<(usize, u64)> {
            let close = 1 + w[1..].iter().position(|&c| c == b'"')?;
            if close > 6 || w[close + 1] != b':' {
                return None;
            }
            let mut key = 0u64;
            for (k, &c) in w[1..close].iter().enumerate() {
                key |= (c as u64) << (8 * k);
            }
            Some((close - 1, key))
        }
        for start in [
            &b"\"ph\": \"X"[..],
            b"\"name\": ",
            b"\"\": 1, \"",
            b"\"names\":",
            b"\"nam\": 1",
            b"\"abcdef\"",
            b"\"a\"\"\":::",
        ] {
            let mut w: [u8; 8] = start.try_into().unwrap();
            assert_eq!(short_key(u64::from_le_bytes(w)), by_bytes(&w), "{w:?}");
            for at in 1..8 {
                for byte in 0..=255u8 {
                    let keep = w[at];
                    w[at] = byte;
                    assert_eq!(short_key(u64::from_le_bytes(w)), by_bytes(&w), "{w:?}");
                    w[at] = keep;
                }
            }
        }
        assert_eq!(
            short_key(u64::from_le_bytes(*b"\"name\": ")),
            Some((4, u32::from_le_bytes(*b"name") as u64))
        );
        assert_eq!(short_key(u64::from_le_bytes(*b"\"name\" :")), None);
    }
}
