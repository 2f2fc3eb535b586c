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
use serde_json::ser::Formatter;

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
}

impl RowsFormatter {
    /// Containers down to `indented_depth` indented (the root is depth 1).
    pub fn new(indented_depth: usize) -> RowsFormatter {
        RowsFormatter {
            depth: 0,
            indented_depth,
            has_value: false,
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
        w.write_all(b"\n")?;
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
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
