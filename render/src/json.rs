//! JSON reports: indented for the report's sections and tables, one line
//! per table row (docs/tracestat.md#json).
//!
//! A report's tables can hold millions of rows (the critical path's
//! stretches); indented a field per line, such a table took half again
//! the bytes of the same rows one per line, and writing them most of the
//! time of the JSON output. The rows stay readable (one per line, as JSON
//! Lines is) and every JSON reader reads the same values.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};

/// The depth of a report's tables: containers down to it (the report
/// itself, its sections and tables) get a line per element; deeper ones
/// (rows, and what a row holds) are written on one line.
pub const TABLE_DEPTH: usize = 2;

/// serde_json's indented layout down to a depth, then one line per
/// container with `, ` and `: ` between its parts.
#[derive(Debug)]
pub struct RowsFormatter {
    depth: usize,
    indented_depth: usize,
    has_value: bool,
    /// Where several rows are laid out before they are written
    /// ([`JsonRow`]).
    scratch: Vec<u8>,
}

impl RowsFormatter {
    /// Containers down to `indented_depth` indented (the root is depth 1).
    pub fn new(indented_depth: usize) -> RowsFormatter {
        RowsFormatter {
            depth: 0,
            indented_depth,
            has_value: false,
            scratch: Vec::new(),
        }
    }

    fn indented(&self) -> bool {
        self.depth <= self.indented_depth
    }

    fn begin<W: ?Sized + Write>(&mut self, w: &mut W, open: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(open)
    }

    fn end<W: ?Sized + Write>(&mut self, w: &mut W, close: &[u8]) -> io::Result<()> {
        let indented = self.indented();
        self.depth -= 1;
        if indented && self.has_value {
            self.new_line(w)?;
        }
        w.write_all(close)
    }

    /// Before an element: a new line in an indented container, `, ` between
    /// the elements of one on a line.
    fn element<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.indented() {
            if !first {
                w.write_all(b",")?;
            }
            self.new_line(w)
        } else if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn new_line<W: ?Sized + Write>(&self, w: &mut W) -> io::Result<()> {
        // The line break and the indent in one write (a table's rows are
        // at one depth; deeper than the spaces here, the rest in pieces).
        const LINE: &[u8] = b"\n                ";
        let mut indent = 2 * self.depth;
        let first = indent.min(LINE.len() - 1);
        w.write_all(&LINE[..1 + first])?;
        indent -= first;
        while indent > 0 {
            let n = indent.min(LINE.len() - 1);
            w.write_all(&LINE[1..1 + n])?;
            indent -= n;
        }
        Ok(())
    }
}

impl Formatter for RowsFormatter {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.element(w, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.begin(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.end(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.element(w, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    /// A [`JsonRow`]: JSON the report made itself, written as it is, each
    /// row after the first as the next element of its table. The rows
    /// and what goes between them are gathered and written at once: a
    /// write per row was a sixth of the time of writing the path's table.
    fn write_byte_array<W: ?Sized + Write>(&mut self, w: &mut W, value: &[u8]) -> io::Result<()> {
        let mut breaks = memchr::memchr_iter(b'\n', value).peekable();
        if breaks.peek().is_none() {
            return w.write_all(value);
        }
        let mut between = Vec::new();
        self.element(&mut between, false)?;
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let mut at = 0;
        for end in breaks {
            out.extend_from_slice(&value[at..end]);
            out.extend_from_slice(&between);
            at = end + 1;
        }
        out.extend_from_slice(&value[at..]);
        let written = w.write_all(&out);
        self.scratch = out;
        written
    }
}

/// Table rows already written as JSON, in a row's layout ([`RowText`]),
/// one or more, each ended by a line break but the last: the report's
/// formatter writes them as they are, each as the next element of its
/// table (a row's JSON holds no line break: JSON escapes one in a
/// string). A table of a million rows spent most of its writing in
/// serde's call per key and value, and then in its call per row;
/// serde_json has no public way to pass it text unchecked but this one
/// (docs/tracestat.md#json). Only the report's writer
/// ([`write_report`]) reads it so: any other serializer sees bytes.
#[derive(Debug, Clone, Copy)]
pub struct JsonRow<'a>(pub &'a [u8]);

impl Serialize for JsonRow<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

/// A row's JSON made field by field, as [`RowsFormatter`] lays out a row
/// (`{"key": value, "key": value}`), its numbers written by serde_json's
/// own formatter: the same bytes as the row serialized.
#[derive(Debug, Default)]
pub struct RowText {
    buf: Vec<u8>,
}

impl RowText {
    /// Starts a new row (the last one's text is dropped).
    #[inline]
    pub fn begin(&mut self) {
        self.buf.clear();
        self.buf.push(b'{');
    }

    /// `key` is a field name that JSON needs no escape for.
    #[inline]
    fn key(&mut self, key: &str) {
        debug_assert!(key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
        if self.buf.len() > 1 {
            self.buf.extend_from_slice(b", ");
        }
        self.buf.push(b'"');
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\": ");
    }

    /// A value already in JSON (a string escaped once for many rows).
    #[inline]
    pub fn json(&mut self, key: &str, text: &[u8]) {
        self.key(key);
        self.buf.extend_from_slice(text);
    }

    /// A string, escaped as serde_json escapes it.
    #[inline]
    pub fn str(&mut self, key: &str, text: &str) {
        self.key(key);
        // Writes to a `Vec` do not fail.
        let _ = serde_json::to_writer(&mut self.buf, text);
    }

    #[inline]
    pub fn bool(&mut self, key: &str, v: bool) {
        self.key(key);
        let _ = CompactFormatter.write_bool(&mut self.buf, v);
    }

    #[inline]
    pub fn u64(&mut self, key: &str, v: u64) {
        self.key(key);
        // Writes to a `Vec` do not fail.
        let _ = CompactFormatter.write_u64(&mut self.buf, v);
    }

    /// As serde_json writes an `f64`: `null` when not finite.
    #[inline]
    pub fn f64(&mut self, key: &str, v: f64) {
        self.key(key);
        push_f64(&mut self.buf, v);
    }

    /// `n / 1000` as serde_json writes the `f64` `n as f64 / 1000.0`
    /// (whole nanoseconds as microseconds): from the integer's digits
    /// where that is the float's shortest form ([`push_thousandths`]).
    #[inline]
    pub fn thousandths(&mut self, key: &str, n: i64) {
        self.key(key);
        push_thousandths(&mut self.buf, n);
    }

    /// The row's text, closed.
    #[inline]
    pub fn end(&mut self) -> JsonRow<'_> {
        self.buf.push(b'}');
        JsonRow(&self.buf)
    }
}

/// Appends `v` as serde_json writes an `f64`: `null` when not finite.
#[inline]
pub fn push_f64(out: &mut Vec<u8>, v: f64) {
    // Writes to a `Vec` do not fail.
    let _ = match v.is_finite() {
        true => CompactFormatter.write_f64(out, v),
        false => CompactFormatter.write_null(out),
    };
}

/// Appends `n / 1000` as serde_json writes the `f64` `n as f64 / 1000.0`:
/// the integer's digits where they are the float's shortest form
/// ([`crate::number::thousandths_bytes`]), else the float's.
#[inline]
pub fn push_thousandths(out: &mut Vec<u8>, n: i64) {
    let mut buf = crate::number::ThousandthsBuf::default();
    match crate::number::thousandths_bytes(n, &mut buf) {
        Some(text) => out.extend_from_slice(text),
        // Writes to a `Vec` do not fail; an `i64` over 1000 is finite.
        None => drop(CompactFormatter.write_f64(out, n as f64 / 1000.0)),
    }
}

/// How many bytes of a table's rows [`JsonRows`] hands to the writer at
/// a time.
pub const ROWS_CHUNK: usize = 64 * 1024;

/// A table's rows gathered as JSON text and handed to the report's
/// writer [`ROWS_CHUNK`] bytes at a time, as one [`JsonRow`] each.
pub struct JsonRows<Q: serde::ser::SerializeSeq> {
    seq: Q,
    text: Vec<u8>,
}

impl<Q: serde::ser::SerializeSeq> JsonRows<Q> {
    pub fn new(seq: Q) -> Self {
        JsonRows {
            seq,
            text: Vec::with_capacity(ROWS_CHUNK + 4096),
        }
    }

    /// Where the next row's text goes, after a line break that ends the
    /// row before; [`JsonRows::row_done`] once it is written.
    #[inline]
    pub fn next_row(&mut self) -> &mut Vec<u8> {
        if !self.text.is_empty() {
            self.text.push(b'\n');
        }
        &mut self.text
    }

    /// Hands the rows over once there are enough of them.
    #[inline]
    pub fn row_done(&mut self) -> Result<(), Q::Error> {
        if self.text.len() >= ROWS_CHUNK {
            self.seq.serialize_element(&JsonRow(&self.text))?;
            self.text.clear();
        }
        Ok(())
    }

    /// Hands the last rows over and ends the table.
    pub fn end(mut self) -> Result<Q::Ok, Q::Error> {
        if !self.text.is_empty() {
            self.seq.serialize_element(&JsonRow(&self.text))?;
        }
        self.seq.end()
    }
}

/// Serializes `rows` as a table of the report, each row's JSON made by
/// `fill` ([`RowText`], its fields in the order the row's type declares
/// them), the rows handed over many at a time ([`JsonRows`]): serde's
/// call per key and value was most of the time of writing a table of a
/// row per step (docs/tracestat.md#scale). For the report's writer only,
/// as [`JsonRow`] is.
pub fn serialize_rows<S: serde::Serializer, T>(
    serializer: S,
    rows: &[T],
    mut fill: impl FnMut(&mut RowText, &T),
) -> Result<S::Ok, S::Error> {
    let mut out = JsonRows::new(serializer.serialize_seq(Some(rows.len()))?);
    let mut row = RowText::default();
    for r in rows {
        row.begin();
        fill(&mut row, r);
        out.next_row().extend_from_slice(row.end().0);
        out.row_done()?;
    }
    out.end()
}

/// Floats of every kind serde_json writes apart (signed zeros, the
/// shortest and the longest forms, huge and tiny, not finite), for tests
/// that a table's rows made as text are its rows serialized.
pub fn test_floats() -> [f64; 12] {
    [
        0.0,
        -0.0,
        2.5,
        355_962.016,
        1e300,
        -1e-7,
        0.1 + 0.2,
        u64::MAX as f64,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -7.0,
    ]
}

/// Checks that `text` and `plain`, reports whose tables are fields of
/// the root (as a tool's report's are), are written the same at every
/// depth of the layout down to the tables' ([`TABLE_DEPTH`]): for tests
/// that a table made as text ([`serialize_rows`]) is its rows
/// serialized. Panics where they differ.
pub fn assert_same_report(plain: &impl Serialize, text: &impl Serialize) {
    for depth in 0..=TABLE_DEPTH {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let written = write_report(&mut a, plain, depth).and(write_report(&mut b, text, depth));
        assert!(written.is_ok(), "{written:?}");
        assert!(a == b, "depth {depth}: {}", String::from_utf8_lossy(&b));
    }
}

/// Writes `value` as a JSON report whose tables are at depth
/// `table_depth` ([`TABLE_DEPTH`] for a report of tables; deeper for one
/// whose tables sit inside sections) and a final new line.
pub fn write_report<W: ?Sized + Write, T: ?Sized + Serialize>(
    w: &mut W,
    value: &T,
    table_depth: usize,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(&mut *w, RowsFormatter::new(table_depth));
    value.serialize(&mut ser).map_err(io::Error::from)?;
    w.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(v: &serde_json::Value) -> String {
        let mut out = Vec::new();
        write_report(&mut out, v, TABLE_DEPTH).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn sections_are_indented_and_rows_take_a_line_each() {
        let v = json!({
            "tool": "tracestat",
            "options": {"steps": {"keep": null}, "what_if": []},
            "steps": [
                {"rank": "0", "step": 1, "dur_us": 2.5, "causes": [1, 2]},
                {"rank": "1", "step": 1, "dur_us": 3.0, "causes": []}
            ],
            "empty": [],
            "none": {}
        });
        // (`json!` keeps its keys in order of name.)
        let expected = r#"{
  "empty": [],
  "none": {},
  "options": {
    "steps": {"keep": null},
    "what_if": []
  },
  "steps": [
    {"causes": [1, 2], "dur_us": 2.5, "rank": "0", "step": 1},
    {"causes": [], "dur_us": 3.0, "rank": "1", "step": 1}
  ],
  "tool": "tracestat"
}
"#;
        assert_eq!(text(&v), expected);
    }

    /// Whole nanoseconds written as microseconds from their digits are
    /// the float's JSON.
    #[test]
    fn thousandths_are_the_floats_json() {
        let (mut ours, mut float) = (RowText::default(), RowText::default());
        for n in crate::number::thousandths_cases() {
            ours.begin();
            ours.thousandths("t", n);
            float.begin();
            float.f64("t", n as f64 / 1000.0);
            assert_eq!(ours.end().0, float.end().0, "{n}");
        }
    }

    /// Rows made field by field are byte for byte the rows serialized,
    /// numbers of every kind included, in a table of the report.
    #[test]
    fn rows_written_as_text_are_the_rows_serialized() {
        #[derive(Serialize)]
        struct Row {
            step: String,
            seq: u64,
            start_us: f64,
        }
        let values = [
            0.0,
            -0.0,
            2.5,
            355_962.0,
            7.016,
            1e300,
            -1e-7,
            0.1 + 0.2,
            f64::NAN,
            f64::INFINITY,
            u64::MAX as f64,
        ];
        let rows: Vec<Row> = (values.iter().enumerate())
            .map(|(i, &x)| Row {
                step: format!("s\"{i}\n"),
                seq: [0, 1, u64::MAX][i % 3],
                start_us: x,
            })
            .collect();
        struct Texts<'a>(&'a [Row]);
        impl Serialize for Texts<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeSeq;
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                let mut text = RowText::default();
                for r in self.0 {
                    text.begin();
                    text.json("step", &serde_json::to_vec(&r.step).unwrap());
                    text.u64("seq", r.seq);
                    text.f64("start_us", r.start_us);
                    seq.serialize_element(&text.end())?;
                }
                seq.end()
            }
        }
        let mut a = std::collections::BTreeMap::new();
        a.insert("rows", &rows);
        let mut b = std::collections::BTreeMap::new();
        b.insert("rows", Texts(&rows));
        let (mut x, mut y) = (Vec::new(), Vec::new());
        write_report(&mut x, &a, TABLE_DEPTH).unwrap();
        write_report(&mut y, &b, TABLE_DEPTH).unwrap();
        assert_eq!(String::from_utf8(y).unwrap(), String::from_utf8(x).unwrap());
    }

    /// Rows handed over several at a time are laid out as the same rows
    /// one at a time: each on its own line in an indented table, after
    /// `, ` in one on a line, and a table of one handing after others.
    #[test]
    fn rows_handed_over_together_are_the_rows_one_at_a_time() {
        struct Rows(Vec<&'static str>, usize);
        impl Serialize for Rows {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                use serde::ser::SerializeSeq;
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for chunk in self.0.chunks(self.1) {
                    seq.serialize_element(&JsonRow(chunk.join("\n").as_bytes()))?;
                }
                seq.end()
            }
        }
        let rows = vec![
            r#"{"a": 1}"#,
            r#"{"a": "x\ny"}"#,
            r#"{"a": 3}"#,
            r#"{}"#,
            r#"{"b": []}"#,
        ];
        for depth in [0, 1, 2, 5] {
            let text = |chunk| {
                let mut report = std::collections::BTreeMap::new();
                report.insert("t", vec![Rows(rows.clone(), chunk)]);
                let mut out = Vec::new();
                write_report(&mut out, &report, depth).unwrap();
                String::from_utf8(out).unwrap()
            };
            let one_at_a_time = text(1);
            for chunk in [2, 3, 5] {
                assert_eq!(
                    text(chunk),
                    one_at_a_time,
                    "depth {depth}, {chunk} at a time"
                );
            }
            let back: serde_json::Value = serde_json::from_str(&one_at_a_time).unwrap();
            assert_eq!(back["t"][0][1]["a"], "x\ny");
        }
    }

    /// Indented all the way down, a report is serde_json's pretty
    /// layout, at depths past the indent written in one piece too.
    #[test]
    fn indented_at_every_depth_is_the_pretty_layout() {
        let mut v = json!({"leaf": [1, {"a": []}, {}], "s": "x"});
        for i in 0..12 {
            v = json!({ format!("k{i}"): [v, i] });
        }
        let mut out = Vec::new();
        write_report(&mut out, &v, 100).unwrap();
        let pretty = serde_json::to_string_pretty(&v).unwrap() + "\n";
        assert_eq!(String::from_utf8(out).unwrap(), pretty);
    }

    #[test]
    fn every_value_reads_back_as_written() {
        let v = json!({
            "a": [[{"x": [1, {"y": "z\n\"q\""}]}], []],
            "b": {"c": {"d": {"e": [1.5, -0.0, 1e300, null, true]}}},
            "n": 0
        });
        let back: serde_json::Value = serde_json::from_str(&text(&v)).unwrap();
        assert_eq!(back, v);
    }
}
