//! Stage 2 of the fast path (docs/benchmarks.md#the-json-trace-scanner): the
//! masks of `blocks` give, per 64-byte block, the positions of every
//! token (structural characters outside strings, every quote, and the first
//! byte of each number or literal); the walker below checks the grammar of
//! one event token by token, jumping over string bodies, blanks and digit
//! runs instead of looking at each byte. Members of the common shape
//! (`"ts": 1733400002274071.000000, `) are read from the bytes instead, and
//! the tokens those bytes hold are dropped together
//! (`Structurals::members`). With the x86 kernels the direct walk
//! (`direct_walk`) is tried before it; this walker then takes the events
//! of other shapes.
//!
//! It only ever says "this event is valid, it ends here, these are its
//! fields" or "not sure": an event with a backslash, a control byte in a
//! string, a syntax error, a nesting deeper than 62, or one that runs past
//! the bytes read so far is handed to the byte parser (`byte_parser`),
//! which gives the exact error, position or `Incomplete`. So errors and truncation behave as
//! before by construction; the differential tests check that accepted events
//! are the byte parser's (same end, same field spans).

use super::blocks::{prefix_xor, Classifier, ScanKernel};
use super::byte_parser::skip_digits;
use super::direct_walk::{direct_members, DirectGuesses};
use super::event::{EventFields, Field, Span};
use super::keys::{short_key, FIRST_KEY, KEY_SLOTS, OTHER_KEY};

/// Bytes that end a number or literal: blanks, quotes and the bytes of the
/// structural mask. Anything else after a number (`1x`, `1.5é`) means the
/// run of scalar bytes is not one valid scalar: not sure, byte parser.
static ENDS_SCALAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'"')
            || (c < 0x80 && matches!(c | 0x20, b'{' | b'}' | b':' | b','));
        i += 1;
    }
    t
};

/// Stage-1 state of the block the walker is in, kept across the events of
/// one buffer: consecutive events share blocks, and the string state at the
/// start of the next event is known (outside, after a complete event and
/// the `,` and blanks the top-level loop checked).
pub(super) struct Structurals {
    classify: Option<Classifier>,
    /// Buffer index of the cached block's first byte; `usize::MAX`: none.
    base: usize,
    /// Token bits of the cached block.
    tokens: u64,
    /// Bits the walker cannot vouch for: backslashes, control bytes inside
    /// strings.
    bad: u64,
    non_ascii: u64,
    /// All ones when the byte after the cached block is inside a string.
    string_carry: u64,
    /// 1 when the cached block's last byte belongs to a number or literal.
    scalar_carry: u64,
    /// Fast-path misses in a row, and events still to leave to the byte
    /// parser before trying again: a trace whose every event holds an
    /// escape would otherwise pay for a failed walk on each (+52%
    /// instructions when measured); backing off 1, 3, ... 63 events keeps
    /// that under 2% while a lone miss costs one event.
    misses: u32,
    skip: u32,
    /// The direct walk ([`direct_members`]) is tried first: with the x86
    /// kernels (SSE2, AVX2; the portable kernel keeps the token walker
    /// alone, which the differential tests then cover on its own).
    direct: bool,
    /// The same back-off as `misses`/`skip`, for direct-walk misses (which
    /// then try the token walker): a trace of another shape pays for at
    /// most one failed direct walk in 64 events.
    direct_misses: u32,
    direct_skip: u32,
    /// Events the direct walk accepted (for tests and benchmarks).
    pub(super) direct_events: u64,
    /// For each member of an event, the key that followed it last time
    /// (index: the member's slot, see [`KeyGuess`]): traces repeat a few
    /// key orders, so the next key usually costs one masked compare.
    next_key: [KeyGuess; KEY_SLOTS],
    /// The direct walk's guesses, kept apart from `next_key`: its key
    /// guesses are only made of keys it checked byte by byte (the token
    /// walker's may hold bytes that only its stage-1 masks reject).
    direct_guesses: DirectGuesses,
}

/// A short key as it looks in the bytes: `"key":` in the low `len + 3`
/// bytes of a little-endian word (`mask` selects them), and the slot of
/// its value span in [`EventFields`]. The default matches nothing (no
/// word ANDed with a zero mask is 1).
#[derive(Clone, Copy)]
struct KeyGuess {
    word: u64,
    mask: u64,
    len: usize,
    slot: usize,
}

impl Default for KeyGuess {
    fn default() -> Self {
        KeyGuess {
            word: 1,
            mask: 0,
            len: 0,
            slot: OTHER_KEY,
        }
    }
}

/// Per-event walking state: the unread tokens of the current block, and
/// what was seen of the event in earlier blocks.
struct Walk {
    tokens: u64,
    /// `bad` bits of the current block from the event's start on.
    bad: u64,
    non_ascii: u64,
    saw_non_ascii: bool,
}

impl Structurals {
    pub(super) fn new(kernel: ScanKernel) -> Self {
        Structurals {
            classify: kernel.classifier(),
            base: usize::MAX,
            tokens: 0,
            bad: 0,
            non_ascii: 0,
            string_carry: 0,
            scalar_carry: 0,
            misses: 0,
            skip: 0,
            direct: matches!(kernel, ScanKernel::Sse2 | ScanKernel::Avx2),
            direct_misses: 0,
            direct_skip: 0,
            direct_events: 0,
            next_key: [KeyGuess::default(); KEY_SLOTS],
            direct_guesses: DirectGuesses::default(),
        }
    }

    /// The direct walk, then [`Structurals::event`], each with the
    /// back-off above.
    #[inline]
    pub(super) fn try_event(
        &mut self,
        b: &[u8],
        i: usize,
        fields: &mut EventFields,
    ) -> Option<usize> {
        if self.direct {
            if self.direct_skip > 0 {
                self.direct_skip -= 1;
            } else if let Some(end) = direct_members::<true>(&mut self.direct_guesses, b, i, fields)
            {
                self.direct_misses = 0;
                self.direct_events += 1;
                return Some(end);
            } else {
                // Spans of the members read before the miss.
                *fields = EventFields::default();
                self.direct_misses = (self.direct_misses + 1).min(6);
                self.direct_skip = (1 << self.direct_misses) - 1;
            }
        }
        if self.skip > 0 {
            self.skip -= 1;
            self.invalidate();
            return None;
        }
        match self.event(b, i, fields) {
            Some(end) => {
                self.misses = 0;
                Some(end)
            }
            None => {
                self.invalidate();
                self.misses = (self.misses + 1).min(6);
                self.skip = (1 << self.misses) - 1;
                None
            }
        }
    }

    pub(super) fn invalidate(&mut self) {
        self.base = usize::MAX;
    }

    /// Classifies the 64 bytes at `base` (blanks past the end of `b`, which
    /// yield no token) and derives the token bits from the carried state.
    #[inline(always)]
    fn load(&mut self, classify: Classifier, b: &[u8], base: usize) {
        let m = match b.get(base..base + 64) {
            Some(block) => classify(block.try_into().expect("64 bytes")),
            None => {
                let mut padded = [b' '; 64];
                let rest = &b[base..];
                padded[..rest.len()].copy_from_slice(rest);
                classify(&padded)
            }
        };
        // With no backslash in the event (else it is rejected), every quote
        // opens or closes a string: 1 from an opening quote up to its
        // closing quote.
        let in_string = prefix_xor(m.quote) ^ self.string_carry;
        self.string_carry = ((in_string as i64) >> 63) as u64;
        let scalar = !in_string & !m.quote & !m.whitespace & !m.structural;
        let scalar_start = scalar & !((scalar << 1) | self.scalar_carry);
        self.scalar_carry = scalar >> 63;
        self.tokens = (m.structural & !in_string) | m.quote | scalar_start;
        self.bad = m.backslash | (m.control & in_string);
        self.non_ascii = m.non_ascii;
        self.base = base;
    }

    /// The next token's position, loading blocks as needed; `None` when the
    /// bytes read so far end first, or a block left behind held a byte the
    /// walker cannot vouch for.
    #[inline(always)]
    fn next(&mut self, w: &mut Walk, classify: Classifier, b: &[u8]) -> Option<usize> {
        if w.tokens == 0 {
            self.advance(w, classify, b)?;
        }
        let p = self.base + w.tokens.trailing_zeros() as usize;
        w.tokens &= w.tokens - 1;
        Some(p)
    }

    #[inline(never)]
    fn advance(&mut self, w: &mut Walk, classify: Classifier, b: &[u8]) -> Option<()> {
        while w.tokens == 0 {
            self.next_block(w, classify, b)?;
        }
        Some(())
    }

    /// Leaves the current block for the next one: `None` when the block
    /// held a byte the walker cannot vouch for, or the bytes read so far
    /// end.
    #[inline(always)]
    fn next_block(&mut self, w: &mut Walk, classify: Classifier, b: &[u8]) -> Option<()> {
        if w.bad != 0 {
            return None;
        }
        w.saw_non_ascii |= w.non_ascii != 0;
        let next = self.base + 64;
        if next >= b.len() {
            return None;
        }
        self.load(classify, b, next);
        w.tokens = self.tokens;
        w.bad = self.bad;
        w.non_ascii = self.non_ascii;
        Some(())
    }

    /// Consumes every token at or before `pos` at once, as if each had
    /// been taken by [`Structurals::next`] (the block of `pos` becomes the
    /// current one). The callers have read the bytes up to `pos` themselves
    /// and know which tokens stage 1 put there (e.g. the closing quote and
    /// the colon of `"name": `); `pos` is past the last token taken.
    #[inline(always)]
    fn consume_through(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        pos: usize,
    ) -> Option<()> {
        let d = pos - self.base;
        if d < 64 {
            w.tokens &= (u64::MAX << d) << 1;
            Some(())
        } else {
            self.consume_across(w, classify, b, pos)
        }
    }

    #[inline(never)]
    fn consume_across(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        pos: usize,
    ) -> Option<()> {
        while pos - self.base >= 64 {
            self.next_block(w, classify, b)?;
        }
        w.tokens &= (u64::MAX << (pos - self.base)) << 1;
        Some(())
    }

    /// Validates the event whose `{` is `b[i]` and records its fields;
    /// returns the index after its `}`, or `None` (not sure: ask the byte
    /// parser). The members are walked by [`Structurals::members`].
    fn event(&mut self, b: &[u8], i: usize, fields: &mut EventFields) -> Option<usize> {
        let classify = self.classify?;
        if !(self.base <= i && i - self.base < 64) {
            self.string_carry = 0;
            self.scalar_carry = 0;
            self.load(classify, b, i);
        }
        let at = i - self.base;
        // The `{` must be the first token (the string state is right).
        if self.tokens >> at & 1 == 0 {
            return None;
        }
        let from = !0u64 << at;
        let mut w = Walk {
            tokens: self.tokens & from & !(1 << at),
            bad: self.bad & from,
            non_ascii: self.non_ascii & from,
            saw_non_ascii: false,
        };
        let end = self.members::<true>(&mut w, classify, b, i, 1, fields)?;
        // The bytes of the last block up to the closing brace.
        let upto = u64::MAX >> (63 - (end - 1 - self.base));
        if w.bad & upto != 0 {
            return None;
        }
        if (w.saw_non_ascii || w.non_ascii & upto != 0) && std::str::from_utf8(&b[i..end]).is_err()
        {
            return None;
        }
        Some(end)
    }

    /// The members of the object whose `{` is `b[open]` (already taken; the
    /// object is at `depth`), walked in grammar order (key, colon, value,
    /// separator); returns the index after its `}`. `TOP`: the object is
    /// the event, whose field spans are recorded (relative to `open`).
    ///
    /// Most members of a trace look like `"ts": 1733400002274071.000000, `
    /// or `"name": "dep", `: a short key, one blank, a number or a string,
    /// then `, ` and the next key's quote. Those are read from the bytes:
    /// the key with its quotes and colon as one 8-byte word
    /// ([`short_key`]), the separator and the next quote as three bytes;
    /// the tokens stage 1 put there (which those bytes determine) are then
    /// consumed at once ([`Structurals::consume_through`]) instead of one by
    /// one (docs/benchmarks.md#the-json-trace-scanner). Every other shape
    /// (long keys, other blanks, containers, literals) takes the token by
    /// token walk for that member.
    #[inline(always)]
    fn members<const TOP: bool>(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        open: usize,
        depth: u32,
        fields: &mut EventFields,
    ) -> Option<usize> {
        let mut p = self.next(w, classify, b)?;
        if b[p] == b'}' {
            return Some(p + 1);
        }
        let mut prev = FIRST_KEY;
        loop {
            // `b[p]`, the token taken last, must open the key.
            if b[p] != b'"' {
                return None;
            }
            let word = b
                .get(p..p + 8)
                .map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes")));
            // For a key of up to 5 bytes, the closing quote is at
            // p + 1 + len and the colon right after it; their tokens are
            // consumed with the value's.
            let guess = self.next_key[prev];
            let key = match word {
                Some(word) if TOP && word & guess.mask == guess.word => {
                    Some((guess.slot, guess.len))
                }
                Some(word) => match short_key(word) {
                    Some((len, key)) if TOP => {
                        let slot = Field::from_word(key).map_or(OTHER_KEY, |f| f as usize);
                        let mask = u64::MAX >> (8 * (5 - len));
                        self.next_key[prev] = KeyGuess {
                            word: word & mask,
                            mask,
                            len,
                            slot,
                        };
                        Some((slot, len))
                    }
                    Some((len, _)) => Some((OTHER_KEY, len)),
                    None => None,
                },
                None => None,
            };
            let (slot, colon) = match key {
                Some((slot, len)) => (slot, p + len + 2),
                None => {
                    let close = self.next(w, classify, b)?;
                    let slot = if TOP {
                        Field::from_key(&b[p + 1..close]).map_or(OTHER_KEY, |f| f as usize)
                    } else {
                        OTHER_KEY
                    };
                    let colon = self.next(w, classify, b)?;
                    if b[colon] != b':' {
                        return None;
                    }
                    (slot, colon)
                }
            };
            prev = slot;
            // One blank after the colon is looked at here; more, or another
            // kind of value, go the token way.
            let mut v = colon + 1;
            if b.get(v) == Some(&b' ') {
                v += 1;
            }
            let vend = match b.get(v) {
                Some(b'"') => {
                    // Between the colon and this quote there are no tokens
                    // (at most one blank).
                    self.consume_through(w, classify, b, v)?;
                    self.next(w, classify, b)? + 1
                }
                // A blank or the colon precede `b[v]`: it starts a scalar,
                // whose one token is consumed with the separator.
                Some(b'-' | b'0'..=b'9') => scalar_end(b, fast_number(b, v)?)?,
                _ => {
                    self.consume_through(w, classify, b, colon)?;
                    v = self.next(w, classify, b)?;
                    self.value(w, classify, b, v, depth + 1)?
                }
            };
            if TOP {
                // No escape in an event the walker accepts: the `escaped`
                // bits stay clear.
                fields.spans[slot] = Span {
                    start: (v - open) as u32,
                    end: (vend - open) as u32,
                };
            }
            match self.separator(w, classify, b, vend)? {
                After::Member(next) => p = next,
                After::End(end) => return Some(end),
            }
        }
    }

    /// After a member's value, which ends at `vend`: its tokens are
    /// consumed up to the value's first one at most. Takes the `,` or `}`
    /// and, after a `,`, the next token (checked by the caller).
    #[inline(always)]
    fn separator(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        vend: usize,
    ) -> Option<After> {
        // `b[vend]`, right after a value, is outside any string: a `,` or
        // `}` there is the next token, and after `, ` a quote is the one
        // after it.
        if let Some(&[b',', b' ', b'"']) = b.get(vend..vend + 3) {
            self.consume_through(w, classify, b, vend + 2)?;
            return Some(After::Member(vend + 2));
        }
        match b.get(vend) {
            Some(b',') => {
                self.consume_through(w, classify, b, vend)?;
                Some(After::Member(self.next(w, classify, b)?))
            }
            Some(b'}') => {
                self.consume_through(w, classify, b, vend)?;
                Some(After::End(vend + 1))
            }
            _ => {
                self.consume_through(w, classify, b, vend - 1)?;
                let sep = self.next(w, classify, b)?;
                match b[sep] {
                    b',' => Some(After::Member(self.next(w, classify, b)?)),
                    b'}' => Some(After::End(sep + 1)),
                    _ => None,
                }
            }
        }
    }

    /// Validates the value whose first token is `b[v]` (a container opened
    /// there would be at `depth`); returns the index after it.
    #[inline(always)]
    fn value(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        v: usize,
        depth: u32,
    ) -> Option<usize> {
        match b[v] {
            b'"' => Some(self.next(w, classify, b)? + 1),
            b'-' | b'0'..=b'9' => scalar_end(b, fast_number(b, v)?),
            b'{' | b'[' => self.container(w, classify, b, v, depth),
            b't' => literal_end(b, v, b"true"),
            b'f' => literal_end(b, v, b"false"),
            b'n' => literal_end(b, v, b"null"),
            _ => None,
        }
    }

    /// An object or array below the event's level (recursive: depth is
    /// bounded, deeper nesting goes to the byte parser).
    #[inline(never)]
    fn container(
        &mut self,
        w: &mut Walk,
        classify: Classifier,
        b: &[u8],
        open: usize,
        depth: u32,
    ) -> Option<usize> {
        if depth > 64 {
            return None;
        }
        if b[open] == b'{' {
            // Nested keys are not recorded: `TOP` false never touches this.
            let mut unused = EventFields::default();
            return self.members::<false>(w, classify, b, open, depth, &mut unused);
        }
        let mut p = self.next(w, classify, b)?;
        if b[p] == b']' {
            return Some(p + 1);
        }
        loop {
            self.value(w, classify, b, p, depth + 1)?;
            let sep = self.next(w, classify, b)?;
            match b[sep] {
                b',' => p = self.next(w, classify, b)?,
                b']' => return Some(sep + 1),
                _ => return None,
            }
        }
    }
}

/// What follows a member's value: the next key's opening quote (taken,
/// still to be checked), or the index after the object's `}`.
enum After {
    Member(usize),
    End(usize),
}

/// The end of the number at `b[i]` in the shapes traces use (`-`, integer
/// part, optional fraction); anything else (an exponent, a bad number, the
/// end of the bytes read) is left to the byte parser.
#[inline(always)]
fn fast_number(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + (b[i] == b'-') as usize;
    match *b.get(j)? {
        b'0' => j += 1,
        b'1'..=b'9' => j = skip_digits(b, j + 1),
        _ => return None,
    }
    if *b.get(j)? == b'.' {
        let k = skip_digits(b, j + 1);
        if k == j + 1 {
            return None;
        }
        j = k;
    }
    Some(j)
}

/// `end` if a scalar may end there (see [`ENDS_SCALAR`]).
#[inline(always)]
fn scalar_end(b: &[u8], end: usize) -> Option<usize> {
    ENDS_SCALAR[*b.get(end)? as usize].then_some(end)
}

#[inline(always)]
fn literal_end(b: &[u8], i: usize, lit: &[u8]) -> Option<usize> {
    if b.get(i..i + lit.len())? != lit {
        return None;
    }
    scalar_end(b, i + lit.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::direct_walk::number_len;

    /// `number_len` (the direct walk's number path) ends every number
    /// where `fast_number` does, whenever that end is inside its window.
    #[test]
    fn number_len_agrees_with_fast_number() {
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let others = b"-.eE+x, }\"0";
        for round in 0..200_000 {
            let mut w = [b' '; 32];
            let len = round % 34;
            for c in w.iter_mut().take(len.min(32)) {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                // Three in four bytes digits, so that long runs occur.
                let k = (rng % 40) as usize;
                *c = if k < 30 {
                    b'0' + (k % 10) as u8
                } else {
                    others[k - 30]
                };
            }
            if !matches!(w[0], b'-' | b'0'..=b'9') {
                continue;
            }
            let got = number_len(&w, crate::trace::blocks::number_shape(&w));
            let want = fast_number(&w, 0).filter(|&j| j < 32);
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&w));
        }
    }
}
