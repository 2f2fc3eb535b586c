//! One element of `traceEvents` as the scanner yields it ([`Event`]): its
//! source bytes and the spans of its recorded top-level keys ([`Field`],
//! [`EventFields`]), with typed accessors over them.

use std::borrow::Cow;

use super::decimal::Decimal;
use super::value::{decode_string_content, parse_u64};

/// A span `start..end` of bytes inside an event's raw text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
    fn is_set(self) -> bool {
        self.end > 0
    }
}

/// Top-level keys whose value spans are recorded while an event is scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Ph,
    Name,
    Cat,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Args,
}

pub(super) const FIELD_COUNT: usize = 9;

impl Field {
    /// The field a key names. Keys are compared as one little-endian word
    /// with their length (every recorded key has 2 to 4 bytes): one
    /// comparison per candidate instead of a byte-slice match, for the
    /// nine keys of every event (docs/benchmarks.md#the-json-trace-scanner).
    #[inline]
    pub(super) fn from_key(key: &[u8]) -> Option<Field> {
        let w = match *key {
            [a, b] => u16::from_le_bytes([a, b]) as u64,
            [a, b, c] => u32::from_le_bytes([a, b, c, 0]) as u64,
            [a, b, c, d] => u32::from_le_bytes([a, b, c, d]) as u64,
            _ => return None,
        };
        Field::from_word(w)
    }

    /// The field whose key's bytes, as a little-endian word padded with
    /// zeros, are `w`. Words of different lengths never collide: a shorter
    /// key would need NUL bytes where a longer one has letters, and a raw
    /// NUL (a control byte) makes a key invalid JSON, so an event holding
    /// one is rejected whatever field was guessed.
    #[inline(always)]
    pub(super) fn from_word(w: u64) -> Option<Field> {
        const fn word(k: &[u8]) -> u64 {
            key_word(k)
        }
        const PH: u64 = word(b"ph");
        const TS: u64 = word(b"ts");
        const ID: u64 = word(b"id");
        const CAT: u64 = word(b"cat");
        const PID: u64 = word(b"pid");
        const TID: u64 = word(b"tid");
        const DUR: u64 = word(b"dur");
        const NAME: u64 = word(b"name");
        const ARGS: u64 = word(b"args");
        Some(match w {
            PH => Field::Ph,
            TS => Field::Ts,
            ID => Field::Id,
            CAT => Field::Cat,
            PID => Field::Pid,
            TID => Field::Tid,
            DUR => Field::Dur,
            NAME => Field::Name,
            ARGS => Field::Args,
            _ => return None,
        })
    }
}

/// A key's bytes as a little-endian word padded with zeros (keys of up to
/// 8 bytes), as [`Field::from_word`] and [`key_slot`] compare them.
pub(super) const fn key_word(k: &[u8]) -> u64 {
    let mut w = 0u64;
    let mut i = 0;
    while i < k.len() {
        w |= (k[i] as u64) << (8 * i);
        i += 1;
    }
    w
}

/// Value spans (quotes included for strings) of the recorded keys of one
/// event, relative to the event's first byte. The last occurrence of a
/// duplicated key wins, as in most JSON readers.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventFields {
    /// One more than there are fields: the stage-2 walker stores the span
    /// of every member, those of unrecorded keys into the last slot
    /// (never read), instead of branching on the key.
    pub(super) spans: [Span; FIELD_COUNT + 1],
    /// Bit per field: the string value contains a backslash escape.
    pub(super) escaped: u16,
}

impl EventFields {
    pub fn span(&self, field: Field) -> Option<Span> {
        let s = self.spans[field as usize];
        s.is_set().then_some(s)
    }
}

/// One element of `traceEvents`: its exact source bytes and field spans.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    pub(super) raw: &'a [u8],
    pub(super) fields: EventFields,
    pub(super) index: u64,
    pub(super) offset: u64,
}

impl<'a> Event<'a> {
    /// Builds an event from the raw text of one JSON object (already
    /// validated, e.g. taken from a [`TraceReader`](super::TraceReader) earlier).
    pub fn from_parts(raw: &'a [u8], fields: EventFields, index: u64, offset: u64) -> Self {
        Event {
            raw,
            fields,
            index,
            offset,
        }
    }

    /// The event's source text, from `{` to `}`.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }
    pub fn fields(&self) -> &EventFields {
        &self.fields
    }
    /// 0-based position in `traceEvents`.
    pub fn index(&self) -> u64 {
        self.index
    }
    /// Byte offset of the event's `{` in the input.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Raw value text of a recorded key (strings with their quotes).
    pub fn value(&self, field: Field) -> Option<&'a [u8]> {
        self.fields.span(field).map(|s| &self.raw[s.range()])
    }

    /// The content of a string value without quotes, still escaped; `None`
    /// if the key is missing or its value is not a string.
    pub fn str_raw(&self, field: Field) -> Option<&'a [u8]> {
        let v = self.value(field)?;
        (v.len() >= 2 && v[0] == b'"').then(|| &v[1..v.len() - 1])
    }

    /// A string value, unescaped only when it contains escapes.
    pub fn str(&self, field: Field) -> Option<Cow<'a, str>> {
        let raw = self.str_raw(field)?;
        let escaped = self.fields.escaped & (1 << field as u16) != 0;
        decode_string_content(raw, escaped)
    }

    /// Number text of a numeric value (`None` for strings and others).
    pub fn number_text(&self, field: Field) -> Option<&'a [u8]> {
        let v = self.value(field)?;
        matches!(v.first(), Some(b'-' | b'0'..=b'9')).then_some(v)
    }

    /// Exact decimal value of a numeric field (`ts`, `dur`).
    pub fn decimal(&self, field: Field) -> Option<Decimal> {
        Decimal::parse(self.number_text(field)?)
    }

    /// Integer value (pid, tid, id); also accepts a decimal string, as some
    /// writers quote ids.
    pub fn uint(&self, field: Field) -> Option<u64> {
        let v = self.value(field)?;
        let digits = if v.first() == Some(&b'"') {
            &v[1..v.len() - 1]
        } else {
            v
        };
        parse_u64(digits)
    }

    /// Float value of a numeric field, for statistics only.
    pub fn f64(&self, field: Field) -> Option<f64> {
        std::str::from_utf8(self.number_text(field)?)
            .ok()?
            .parse()
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_from_word_matches_from_key() {
        let word = |k: &[u8]| {
            k.iter()
                .enumerate()
                .fold(0u64, |w, (i, &c)| w | (c as u64) << (8 * i))
        };
        let names = [
            "ph", "name", "cat", "pid", "tid", "ts", "dur", "id", "args", "nam", "names", "p", "",
            "phh", "tsx", "args1", "Name", "pi", "idd",
        ];
        for key in names {
            let k = key.as_bytes();
            let want = match key {
                "ph" => Some(Field::Ph),
                "name" => Some(Field::Name),
                "cat" => Some(Field::Cat),
                "pid" => Some(Field::Pid),
                "tid" => Some(Field::Tid),
                "ts" => Some(Field::Ts),
                "dur" => Some(Field::Dur),
                "id" => Some(Field::Id),
                "args" => Some(Field::Args),
                _ => None,
            };
            assert_eq!(Field::from_word(word(k)), want, "{key}");
            assert_eq!(Field::from_key(k), want, "{key}");
        }
    }
}
