//! The direct walk (docs/benchmarks.md#the-json-trace-scanner, fourth step):
//! events written the way unitrace writes them, every member
//! `"key": value` with a key of up to 5 bytes, at most one blank after the
//! colon, a string, a number or (in the event) an object of such members as
//! value, and `, "` or `}` after it, are checked from the bytes alone,
//! without stage 1: the key (with the blank after it) compared as one
//! 8-byte word with the one that followed the previous key last time, a
//! number's digit and dot bits (32-byte SSE2 window) with the last number
//! of its slot, a string's end from 16-byte SSE2 compares; on a miss, the
//! key's field comes from a perfect hash of its word and the number's
//! length from its digit bits (see `DirectGuesses` for why guesses). Every
//! branch it takes depends on the shape of the member, not on where 64-byte
//! blocks begin, so it runs without the block-crossing branch misses of the
//! token walk. Kineto's events (docs/benchmarks.md#kineto) are taken too:
//! blanks around a `,` or before a `}` (its line breaks and indentation)
//! are skipped 16 bytes at a time, and inside the event's object (`args`)
//! keys of any length, `null`/`true`/`false` and arrays of those values
//! (nested up to 4 deep) are checked from the bytes; on the replicated
//! Kineto traces of benches/kineto.sh that took the scanner from 1.2 to
//! 1.8 GB per CPU second, unitrace's traces unchanged. Anything else
//! (objects in arrays, exponents, escapes, control bytes, long keys of the
//! event itself, the end of the bytes read) makes it answer "not sure",
//! and the token walker and then the byte parser take the event as before.

use super::blocks::{blanks16, number_shape, string_stops16};
use super::event::{key_word, EventFields, Field, Span, FIELD_COUNT};
use super::keys::{short_key, DIRECT_KEY_SLOTS, FIRST_KEY, NESTED_FIRST_KEY, OTHER_KEY};

/// Multiplier of the perfect hash of the recorded keys' words (top 4 bits
/// of the product): the nine words land in nine different buckets, which
/// building [`KEY_TABLE`] checks at compile time.
const KEY_HASH: u64 = 0xb9d1_79e0_6c0f_d4f5;

/// Per bucket of [`KEY_HASH`]: the key word that belongs there and its
/// slot in [`EventFields`]; empty buckets hold word 0 (the key `""`) with
/// the spare slot, so every word maps to its field or to the spare slot.
static KEY_TABLE: [(u64, u8); 16] = {
    let keys: [(&[u8], Field); FIELD_COUNT] = [
        (b"ph", Field::Ph),
        (b"name", Field::Name),
        (b"cat", Field::Cat),
        (b"pid", Field::Pid),
        (b"tid", Field::Tid),
        (b"ts", Field::Ts),
        (b"dur", Field::Dur),
        (b"id", Field::Id),
        (b"args", Field::Args),
    ];
    let mut t = [(0u64, OTHER_KEY as u8); 16];
    let mut i = 0;
    while i < keys.len() {
        let w = key_word(keys[i].0);
        let h = (w.wrapping_mul(KEY_HASH) >> 60) as usize;
        assert!(t[h].1 as usize == OTHER_KEY, "two keys in one bucket");
        t[h] = (w, keys[i].1 as u8);
        i += 1;
    }
    t
};

/// The [`EventFields`] slot of the key whose word (see [`short_key`]) is
/// `key`: one multiply, one load, one compare, no branch on the key.
#[inline(always)]
fn key_slot(key: u64) -> usize {
    let (word, slot) = KEY_TABLE[(key.wrapping_mul(KEY_HASH) >> 60) as usize];
    if word == key {
        slot as usize
    } else {
        OTHER_KEY
    }
}

/// What the direct walk learnt of the trace's shapes: per slot (see
/// [`Structurals::next_key`]), the key that followed it last time and the
/// shape of its last number. A hit is one compare and a predicted branch,
/// after which the CPU runs ahead with the guessed length while the
/// compare is checked: the position of each member depends on the
/// previous one's length, so computing the lengths from the bytes (a
/// dozen dependent instructions per key and per number) made the walk one
/// long dependency chain (docs/benchmarks.md#the-json-trace-scanner).
#[derive(Clone, Copy)]
pub(super) struct DirectGuesses {
    keys: [DirectKey; DIRECT_KEY_SLOTS],
    numbers: [NumberGuess; DIRECT_KEY_SLOTS],
}

impl Default for DirectGuesses {
    fn default() -> Self {
        DirectGuesses {
            keys: [DirectKey::default(); DIRECT_KEY_SLOTS],
            numbers: [NumberGuess::default(); DIRECT_KEY_SLOTS],
        }
    }
}

/// A key as the direct walk saw it: `"key":` and the blank after it when
/// there is one, in the low `value_at` bytes of a little-endian word
/// (`mask` selects them), and the slot of its value span. Only keys the
/// walk checked byte by byte become guesses. The default matches nothing.
#[derive(Clone, Copy)]
struct DirectKey {
    word: u64,
    mask: u64,
    value_at: usize,
    slot: usize,
}

impl Default for DirectKey {
    fn default() -> Self {
        DirectKey {
            word: 1,
            mask: 0,
            value_at: 0,
            slot: OTHER_KEY,
        }
    }
}

/// The last number of a slot: its [`number_shape`] bits over its `len`
/// bytes and the byte after them, the index of its first digit, and
/// whether its integer part has more than one digit (then a leading `0` is
/// invalid). A number with the same shape bits is valid and as long. The
/// default matches nothing (a masked shape has no bit past the compared
/// ones).
#[derive(Clone, Copy)]
struct NumberGuess {
    shape: u64,
    len: usize,
    lead: usize,
    multi: bool,
}

impl Default for NumberGuess {
    fn default() -> Self {
        NumberGuess {
            shape: u64::MAX,
            len: 0,
            lead: 0,
            multi: false,
        }
    }
}

/// The members of the object whose `{` is `b[open]`, in the shapes above;
/// returns the index after its `}`, or `None` (not sure). `TOP`: the
/// object is the event, whose spans are recorded (relative to `open`); an
/// object value inside it is walked the same way, one level only.
#[inline(always)]
pub(super) fn direct_members<const TOP: bool>(
    guesses: &mut DirectGuesses,
    b: &[u8],
    open: usize,
    fields: &mut EventFields,
) -> Option<usize> {
    let mut p = open + 1;
    if *b.get(p)? != b'"' {
        // Kineto's `{` then a line break and indentation.
        p = skip_blanks(b, p)?;
    }
    let mut prev = if TOP { FIRST_KEY } else { NESTED_FIRST_KEY };
    loop {
        let word = u64::from_le_bytes(b.get(p..p + 8)?.try_into().expect("8 bytes"));
        let guess = guesses.keys[prev];
        let (slot, v) = if word & guess.mask == guess.word {
            (guess.slot, p + guess.value_at)
        } else if let Some((slot, value_at)) = direct_key_miss(&mut guesses.keys[prev], b, p, word)
        {
            (slot, p + value_at)
        } else if TOP {
            return None;
        } else {
            // A long key inside the event's object (Kineto's `args`:
            // `"External id": 12`): read to its closing quote.
            (OTHER_KEY, p + direct_long_key(b, p)?)
        };
        prev = slot;
        let vend = match *b.get(v)? {
            b'"' => direct_string_end(b, v)?,
            b'-' | b'0'..=b'9' => {
                let w: &[u8; 32] = b.get(v..v + 32)?.try_into().expect("32 bytes");
                let shape = number_shape(w);
                let g = guesses.numbers[slot];
                // The number's bytes and the one after it (no digit, no
                // `.`: the number ends there).
                let len_bits = (2u64 << g.len) - 1;
                if shape & (len_bits | len_bits << 32) == g.shape && !(g.multi && w[g.lead] == b'0')
                {
                    v + g.len
                } else {
                    v + direct_number_miss(&mut guesses.numbers[slot], w, shape)?
                }
            }
            b'{' if TOP => direct_members::<false>(guesses, b, v, fields)?,
            b'[' if !TOP => direct_array(b, v, 1)?,
            b'n' | b't' | b'f' if !TOP => direct_literal(b, v)?,
            _ => return None,
        };
        if TOP {
            // No escape in an accepted event: the `escaped` bits stay clear.
            fields.spans[slot] = Span {
                start: (v - open) as u32,
                end: (vend - open) as u32,
            };
        }
        match *b.get(vend..vend + 3)? {
            [b',', b' ', b'"'] => p = vend + 2,
            [b'}', _, _] => return Some(vend + 1),
            // Other blanks around the `,` or before the `}` (Kineto's line
            // breaks and indentation, `,"` without a blank).
            _ => {
                let q = skip_blanks(b, vend)?;
                match b[q] {
                    b',' => {
                        p = skip_blanks(b, q + 1)?;
                        if b[p] != b'"' {
                            return None;
                        }
                    }
                    b'}' => return Some(q + 1),
                    _ => return None,
                }
            }
        }
    }
}

/// The index of the first byte at or after `p` that is no JSON blank,
/// read 16 bytes at a time; `None` at the end of the bytes read.
#[inline]
fn skip_blanks(b: &[u8], mut p: usize) -> Option<usize> {
    loop {
        let blanks = blanks16(b.get(p..p + 16)?.try_into().expect("16 bytes"));
        let run = (!blanks).trailing_zeros() as usize;
        if run < 16 {
            return Some(p + run);
        }
        p += 16;
    }
}

/// The key at `b[p]` (its first 8 bytes are `word`) when the guess missed:
/// its slot and the offset of its value (after the colon and at most one
/// blank), read from the bytes; the guess becomes this key when it fits in
/// a word. `None`: not a short plain key.
#[cold]
#[inline(never)]
fn direct_key_miss(guess: &mut DirectKey, b: &[u8], p: usize, word: u64) -> Option<(usize, usize)> {
    if word as u8 != b'"' {
        return None;
    }
    // `short_key` checks the closing quote and the colon after it.
    let (len, key) = short_key(word)?;
    let slot = key_slot(key);
    // No escape, control or non-ASCII byte in the key (those take the
    // other walks). Checked for every key: `"ph\0"` has the word of `"ph"`.
    if !key.to_le_bytes()[..len]
        .iter()
        .all(|&c| (0x20..0x80).contains(&c) && c != b'\\')
    {
        return None;
    }
    let mut value_at = len + 3;
    if *b.get(p + value_at)? == b' ' {
        value_at += 1;
    }
    if value_at <= 8 {
        let mask = u64::MAX >> (8 * (8 - value_at));
        *guess = DirectKey {
            word: word & mask,
            mask,
            value_at,
            slot,
        };
    }
    Some((slot, value_at))
}

/// The offset (from `b[p]`, the key's opening quote) of the value of a key
/// longer than [`short_key`] reads: after the closing quote, the colon and
/// at most one blank. `None`: an escape, control byte or invalid UTF-8 in
/// the key, no colon, or the end of the bytes read.
#[inline(never)]
fn direct_long_key(b: &[u8], p: usize) -> Option<usize> {
    if *b.get(p)? != b'"' {
        return None;
    }
    let close = direct_string_end(b, p)?;
    if *b.get(close)? != b':' {
        return None;
    }
    let v = close + 1 + (*b.get(close + 1)? == b' ') as usize;
    Some(v - p)
}

/// Arrays nested deeper than this (inside the event's object) are left to
/// the other walks.
const DIRECT_ARRAY_DEPTH: usize = 4;

/// The index after the `]` of the array whose `[` is `b[open]`, inside the
/// event's object (Kineto's `"Input Dims": [[2, 3], []]`): elements are
/// strings, numbers, `true`/`false`/`null` or arrays (`depth` levels so
/// far), separated by `,` or `, `. `None`: anything else (objects, other
/// blanks, exponents), as in [`direct_members`].
fn direct_array(b: &[u8], open: usize, depth: usize) -> Option<usize> {
    let mut p = open + 1;
    if *b.get(p)? == b']' {
        return Some(p + 1);
    }
    loop {
        let vend = match *b.get(p)? {
            b'"' => direct_string_end(b, p)?,
            b'-' | b'0'..=b'9' => {
                let w: &[u8; 32] = b.get(p..p + 32)?.try_into().expect("32 bytes");
                p + number_len(w, number_shape(w))?
            }
            b'[' if depth < DIRECT_ARRAY_DEPTH => direct_array(b, p, depth + 1)?,
            b'n' | b't' | b'f' => direct_literal(b, p)?,
            _ => return None,
        };
        match *b.get(vend)? {
            b',' => p = vend + 1 + (*b.get(vend + 1)? == b' ') as usize,
            b']' => return Some(vend + 1),
            _ => return None,
        }
    }
}

/// The index after the literal `null`, `true` or `false` at `b[v]`; the
/// caller checks the byte after it.
#[inline]
fn direct_literal(b: &[u8], v: usize) -> Option<usize> {
    let rest = b.get(v..)?;
    for lit in [&b"null"[..], b"true", b"false"] {
        if rest.starts_with(lit) {
            return Some(v + lit.len());
        }
    }
    None
}

/// The length of the number at the start of `w` (whose [`number_shape`] is
/// `shape`) when its slot's guess missed, which becomes the guess.
#[cold]
#[inline(never)]
fn direct_number_miss(guess: &mut NumberGuess, w: &[u8; 32], shape: u64) -> Option<usize> {
    let len = number_len(w, shape)?;
    let lead = (w[0] == b'-') as usize;
    let len_bits = (2u64 << len) - 1;
    *guess = NumberGuess {
        shape: shape & (len_bits | len_bits << 32),
        len,
        lead,
        multi: (shape >> lead) & 3 == 3,
    };
    Some(len)
}

/// The index after the closing quote of the string whose opening quote is
/// `b[v]`, read 16 bytes at a time; `None` at a backslash or control byte
/// before it, invalid UTF-8 inside it, or the end of the bytes read.
#[inline(always)]
fn direct_string_end(b: &[u8], v: usize) -> Option<usize> {
    let mut p = v + 1;
    let mut non_ascii = 0u32;
    loop {
        let s = string_stops16(b.get(p..p + 16)?.try_into().expect("16 bytes"));
        if s.quote != 0 {
            // The bytes before the first quote.
            let body = (s.quote & s.quote.wrapping_neg()) - 1;
            if s.bad & body != 0 {
                return None;
            }
            non_ascii |= s.non_ascii & body;
            let close = p + s.quote.trailing_zeros() as usize;
            if non_ascii != 0 && std::str::from_utf8(&b[v + 1..close]).is_err() {
                return None;
            }
            return Some(close + 1);
        }
        if s.bad != 0 {
            return None;
        }
        non_ascii |= s.non_ascii;
        p += 16;
    }
}

/// [`fast_number`] for the number at the start of `w`, from its
/// [`number_shape`]: the lengths of the integer and fraction digit runs
/// are trailing-zero counts, with no loop. `None` also when the number
/// (and the byte after it) does not end inside the 32 bytes; the caller
/// checks the byte after it.
#[inline(always)]
pub(super) fn number_len(w: &[u8; 32], shape: u64) -> Option<usize> {
    let digits = shape & 0xFFFF_FFFF;
    let first = (w[0] == b'-') as usize;
    // Digits from `first` on (bits past 32 are clear, so at most 32).
    let run = (!(digits >> first)).trailing_zeros() as usize;
    // A leading 0 is the whole integer part (a digit after it then fails
    // the caller's check of the byte after the number).
    let int_len = if w[first] == b'0' { run.min(1) } else { run };
    if int_len == 0 {
        return None;
    }
    let mut j = first + int_len;
    if j >= 32 {
        return None;
    }
    if w[j] == b'.' {
        let frac = (!(digits >> (j + 1))).trailing_zeros() as usize;
        if frac == 0 {
            return None;
        }
        j += 1 + frac;
        if j >= 32 {
            return None;
        }
    }
    Some(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word lookup finds the nine keys, and nothing else among keys of
    /// 0 to 5 letters near them.
    #[test]
    fn key_slot_finds_the_recorded_keys() {
        for key in [
            &b"ph"[..],
            b"name",
            b"cat",
            b"pid",
            b"tid",
            b"ts",
            b"dur",
            b"id",
            b"args",
            b"",
            b"p",
            b"phx",
            b"nam",
            b"names",
            b"t",
            b"tsx",
            b"argv",
            b"x",
            b"ph\0",
        ] {
            let want = Field::from_key(key).map_or(OTHER_KEY, |f| f as usize);
            assert_eq!(
                key_slot(key_word(key)),
                want,
                "{:?}",
                String::from_utf8_lossy(key)
            );
        }
    }
}
