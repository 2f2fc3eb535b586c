//! The one table model of a report (docs/design.md#report-sections): an
//! analysis hands [`Section`]s of [`Table`]s; the console, the CSV and
//! Parquet files and the HTML page are all written from them, so a table
//! is laid out once and the three agree.
//!
//! Values are kept in the unit of their column ([`Unit`]): times in
//! microseconds, shares in percent. Files spell each unit with a fixed
//! number of decimals (the columns of docs/formats.md#parquet-tables);
//! the console and the page show the times of one table in one unit chosen
//! from its values (us, ms or s), named in the header.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use unitrace_core::atomic::AtomicFile;

use crate::html::{Cell, Document, Table as HtmlTable};
use crate::parquet::{Column as ParquetColumn, ColumnType, ParquetWriter, Schema};
use crate::table::{CsvRecords, TableFormat, TableWriter};

/// What a column's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Labels (rank, name, file).
    Text,
    /// Counts and ordinals.
    Count,
    Bytes,
    /// A time in microseconds.
    Us,
    /// A share in percent.
    Pct,
    /// A signed change in percent (shown with its sign).
    PctChange,
    /// Gigabytes per second.
    GBps,
    /// A fraction 0..1 (utilisation).
    Fraction,
    Bool,
}

impl Unit {
    fn parquet_type(self) -> ColumnType {
        match self {
            Unit::Text => ColumnType::Utf8,
            Unit::Count | Unit::Bytes => ColumnType::Int64,
            Unit::Bool => ColumnType::Bool,
            _ => ColumnType::Float64,
        }
    }

    fn is_time(self) -> bool {
        self == Unit::Us
    }
}

/// One value of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Empty,
    Int(i64),
    Num(f64),
    /// Shared: a table of a million rows repeats a few thousand names,
    /// each held once (docs/tracestat.md#scale).
    Text(Arc<str>),
    Bool(bool),
}

impl From<u64> for Value {
    fn from(v: u64) -> Value {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}
impl From<usize> for Value {
    fn from(v: usize) -> Value {
        Value::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Num(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(Arc::from(v))
    }
}
impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(Arc::from(v))
    }
}
impl From<&String> for Value {
    fn from(v: &String) -> Value {
        Value::Text(Arc::from(v.as_str()))
    }
}
impl From<Arc<str>> for Value {
    fn from(v: Arc<str>) -> Value {
        Value::Text(v)
    }
}
impl From<&Arc<str>> for Value {
    fn from(v: &Arc<str>) -> Value {
        Value::Text(Arc::clone(v))
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Empty, Into::into)
    }
}

/// Where a column appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// In the files, the console and the page.
    Everywhere,
    /// In the files only (details a reader of the console does not need).
    FilesOnly,
    /// On the console and the page only (a label joined from others).
    ScreenOnly,
}

/// A column: its file name (`busy_us`), its screen label (`busy`), its unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub label: String,
    pub unit: Unit,
    pub shown: Shown,
    /// Its values are names that may run long (demangled kernels): the
    /// page folds a long one to a few lines ([`crate::html::Cell::Name`]);
    /// the console and the files keep it whole.
    pub long_names: bool,
}

impl Column {
    pub fn new(name: impl Into<String>, label: impl Into<String>, unit: Unit) -> Column {
        Column {
            name: name.into(),
            label: label.into(),
            unit,
            shown: Shown::Everywhere,
            long_names: false,
        }
    }

    pub fn long_names(mut self) -> Column {
        self.long_names = true;
        self
    }

    pub fn files_only(mut self) -> Column {
        self.shown = Shown::FilesOnly;
        self
    }

    pub fn screen_only(mut self) -> Column {
        self.shown = Shown::ScreenOnly;
        self
    }

    fn on_screen(&self) -> bool {
        self.shown != Shown::FilesOnly
    }

    fn in_files(&self) -> bool {
        self.shown != Shown::ScreenOnly
    }
}

/// A table of one section.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    /// The file stem of its CSV/Parquet file (`breakdown`); empty for a
    /// table that is only shown.
    pub file: String,
    /// Its heading on screen; empty to run on under the section's.
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<Value>>,
    /// The rows the console and the page show (all when `None`), and a line
    /// saying what was left out.
    pub screen_rows: Option<(Vec<usize>, String)>,
    /// Lines under the table on screen.
    pub notes: Vec<String>,
    /// Written to its file only, never shown (detail rows).
    pub files_only: bool,
    /// Where the file's rows come from when `rows` holds only the rows
    /// shown: a table of a million rows is made one row at a time while
    /// its file is written, never held as values (docs/tracestat.md#scale).
    pub file_rows: Option<FileRows>,
}

/// The rows of a table's file, made on demand: each row holds a value for
/// every column, as [`Table::rows`] does.
pub trait RowSource: Send + Sync {
    fn count(&self) -> usize;
    /// Row `i` into `out` (cleared first).
    fn row(&self, i: usize, out: &mut Vec<Value>);
    /// Every row written straight into a CSV file, in order, by a source
    /// that has a faster way than [`RowSource::row`]'s values (the path's
    /// table of a million rows, docs/tracestat.md#scale); `None`, the
    /// default, sends the rows through `row`. The fields must be the
    /// file's columns of `row`'s values as [`file_text`] spells them and
    /// CSV quotes them: the source's tests compare the two.
    fn write_csv(&self, _csv: &mut dyn CsvRecords) -> Option<io::Result<()>> {
        None
    }
}

/// A shared [`RowSource`]; two are equal when they are the same source.
#[derive(Clone)]
pub struct FileRows(pub Arc<dyn RowSource>);

impl std::fmt::Debug for FileRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileRows({} rows)", self.0.count())
    }
}

impl PartialEq for FileRows {
    fn eq(&self, other: &FileRows) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Table {
    pub fn new(file: &str, title: impl Into<String>, columns: Vec<Column>) -> Table {
        Table {
            file: file.to_string(),
            title: title.into(),
            columns,
            ..Table::default()
        }
    }

    pub fn push(&mut self, row: Vec<Value>) {
        debug_assert_eq!(row.len(), self.columns.len(), "{}", self.file);
        self.rows.push(row);
    }

    /// Shows only `rows` on screen, with `note` saying why.
    pub fn show_only(&mut self, rows: Vec<usize>, note: String) {
        self.screen_rows = Some((rows, note));
    }

    /// Calls `each` with every row of the table's file, in order.
    pub fn for_each_file_row<E>(
        &self,
        mut each: impl FnMut(&[Value]) -> Result<(), E>,
    ) -> Result<(), E> {
        match &self.file_rows {
            Some(FileRows(source)) => {
                let mut row = Vec::with_capacity(self.columns.len());
                for i in 0..source.count() {
                    row.clear();
                    source.row(i, &mut row);
                    debug_assert_eq!(row.len(), self.columns.len(), "{}", self.file);
                    each(&row)?;
                }
                Ok(())
            }
            None => self.rows.iter().try_for_each(|r| each(r)),
        }
    }

    fn screen_row_indices(&self) -> Vec<usize> {
        match &self.screen_rows {
            Some((rows, _)) => rows.clone(),
            None => (0..self.rows.len()).collect(),
        }
    }
}

/// A figure of a section: an SVG for the page, text for the console.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub svg: Option<String>,
    pub text: Option<String>,
    pub caption: String,
}

/// One section of a report: a heading, lines of text, figures and tables.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Section {
    /// A stable id (the page's anchor).
    pub id: String,
    pub title: String,
    pub lines: Vec<String>,
    pub figures: Vec<Figure>,
    pub tables: Vec<Table>,
    /// Shown on the page only (the console has its own text of it).
    pub page_only: bool,
}

impl Section {
    pub fn new(id: &str, title: impl Into<String>) -> Section {
        Section {
            id: id.to_string(),
            title: title.into(),
            ..Section::default()
        }
    }
}

/// A value as a file spells it: times with 3 decimals, shares, rates and
/// fractions with 4, counts as integers, empty for none.
pub fn file_text(unit: Unit, v: &Value) -> String {
    let mut out = String::new();
    push_file_text(&mut out, unit, v);
    out
}

/// [`file_text`] appended to `out`: a table file's rows reuse one text per
/// column rather than allocating one per value.
fn push_file_text(out: &mut String, unit: Unit, v: &Value) {
    match v {
        Value::Empty => {}
        Value::Int(i) => out.push_str(itoa::Buffer::new().format(*i)),
        Value::Text(t) => out.push_str(t),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Num(x) => match unit {
            Unit::Us => crate::number::push_fixed(out, *x, 3),
            Unit::Count | Unit::Bytes => crate::number::push_fixed(out, *x, 0),
            _ => crate::number::push_fixed(out, *x, 4),
        },
    }
}

/// Pushes `v` into column `col` of a table's Parquet file as the value
/// its [`file_text`] parses to (docs/formats.md#parquet-tables: the
/// Parquet file holds the CSV's values): typed where that value is known
/// without the text (text, integers, flags, and numbers
/// [`number::fixed_value`] rounds), else through the text, spelled into
/// `text` and parsed as the column's type. Spelling and parsing every
/// value took a third of the time of writing the Parquet tables of a
/// report (docs/tracestat.md#scale).
fn push_parquet_value<W: io::Write + Send>(
    pq: &mut ParquetWriter<W>,
    col: usize,
    unit: Unit,
    v: &Value,
    text: &mut String,
) {
    let ty = unit.parquet_type();
    let decimals = match unit {
        Unit::Us => 3,
        Unit::Count | Unit::Bytes => 0,
        _ => 4,
    };
    match (v, ty) {
        (Value::Text(t), _) => return pq.push_text(col, t),
        (Value::Int(i), ColumnType::Int64) => return pq.push_i64(col, *i),
        // The nearest float to the integer, as its digits parse to.
        (Value::Int(i), ColumnType::Float64) => return pq.push_f64(col, *i as f64),
        (Value::Bool(b), ColumnType::Bool) => return pq.push_bool(col, *b),
        (Value::Num(x), ColumnType::Float64) => {
            if let Some(value) = crate::number::fixed_value(*x, decimals) {
                return pq.push_f64(col, value);
            }
        }
        (Value::Num(x), ColumnType::Int64) if decimals == 0 => {
            // `units` < 2^43: the digits, with "-" before a negative
            // value's ("-0" reads as 0).
            if let Some((negative, units)) = crate::number::fixed_units(*x, 0) {
                let units = units as i64;
                return pq.push_i64(col, if negative { -units } else { units });
            }
        }
        _ => {}
    }
    text.clear();
    push_file_text(text, unit, v);
    pq.push_text(col, text);
}

/// The Parquet schema of a table's file columns.
pub fn schema(table: &Table) -> Schema {
    Schema::new(
        table
            .columns
            .iter()
            .filter(|c| c.in_files())
            .map(|c| ParquetColumn::new(c.name.clone(), c.unit.parquet_type()).nullable())
            .collect(),
    )
}

/// The file of a table in `format` inside `dir`.
pub fn file_path(dir: &Path, table: &Table, format: TableFormat) -> PathBuf {
    dir.join(format!("{}.{}", table.file, format.extension()))
}

/// The columns of a table that its file holds.
fn file_columns(table: &Table) -> Vec<usize> {
    (0..table.columns.len())
        .filter(|&i| table.columns[i].in_files())
        .collect()
}

/// The header and rows of a table as its file holds them.
pub fn file_rows(table: &Table) -> (Vec<String>, Vec<Vec<String>>) {
    let keep = file_columns(table);
    let head = keep
        .iter()
        .map(|&i| table.columns[i].name.clone())
        .collect();
    let mut rows = Vec::new();
    let _ = table.for_each_file_row(|r| {
        rows.push(
            keep.iter()
                .map(|&i| file_text(table.columns[i].unit, &r[i]))
                .collect(),
        );
        Ok::<(), ()>(())
    });
    (head, rows)
}

/// Writes every table that has a file into `dir` (created), as CSV or
/// Parquet; each file goes to a temporary name and is renamed only when
/// all were written.
pub fn write_dir<'a>(
    dir: &Path,
    tables: impl IntoIterator<Item = &'a Table>,
    format: TableFormat,
) -> io::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        // The OS says only "File exists" of a file where the folder goes.
        let what = match dir.is_file() {
            true => "a file, not a folder for the tables".to_string(),
            false => e.to_string(),
        };
        io::Error::new(e.kind(), format!("{}: {what}", dir.display()))
    })?;
    let mut pending = Vec::new();
    for table in tables.into_iter().filter(|t| !t.file.is_empty()) {
        let path = file_path(dir, table, format);
        let file = AtomicFile::create(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let written = (|| {
            let mut w = TableWriter::new(file, format, &schema(table))?;
            // Row by row into one reused record: a table of a million rows
            // is never held a second time as texts (docs/tracestat.md#scale).
            let keep = file_columns(table);
            let units: Vec<Unit> = keep.iter().map(|&i| table.columns[i].unit).collect();
            if let Some(csv) = w.csv() {
                if let Some(written) = (table.file_rows.as_ref()).and_then(|r| r.0.write_csv(csv)) {
                    written?;
                    return w.finish();
                }
                table.for_each_file_row(|r| {
                    csv.record_with(|f| {
                        for (&i, &unit) in keep.iter().zip(&units) {
                            match &r[i] {
                                Value::Text(t) => f.text(t),
                                v => push_file_text(f.plain(), unit, v),
                            }
                        }
                    })
                })?;
                return w.finish();
            }
            if let Some(pq) = w.parquet() {
                let mut text = String::new();
                table.for_each_file_row(|r| {
                    for (col, (&i, &unit)) in keep.iter().zip(&units).enumerate() {
                        push_parquet_value(pq, col, unit, &r[i], &mut text);
                    }
                    pq.end_row()
                })?;
            }
            w.finish()
        })();
        let file =
            written.map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        pending.push((path, file));
    }
    for (path, file) in pending {
        file.commit()
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// The unit the times of a table are shown in on screen: the one that
/// keeps its largest time between 1 and 10,000.
fn time_scale(table: &Table, rows: &[usize]) -> (&'static str, f64) {
    let mut largest: f64 = 0.0;
    for &r in rows {
        for (c, col) in table.columns.iter().enumerate() {
            if let (true, Value::Num(x)) = (col.unit.is_time(), &table.rows[r][c]) {
                largest = largest.max(x.abs());
            }
        }
    }
    if largest >= 100_000_000.0 {
        ("s", 1e6)
    } else if largest >= 1_000.0 {
        ("ms", 1e3)
    } else {
        ("us", 1.0)
    }
}

/// A value as the screen shows it (times already scaled; control bytes of
/// names escaped, docs/errors.md#one-line).
fn screen_text(unit: Unit, v: &Value, scale: f64) -> String {
    match v {
        Value::Empty => "-".to_string(),
        Value::Int(i) => i.to_string(),
        Value::Text(t) => unitrace_core::cli::escape_controls(t),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        Value::Num(x) => match unit {
            Unit::Us => format!("{:.3}", x / scale),
            Unit::Pct => format!("{x:.2}"),
            Unit::PctChange => signed_change(*x),
            Unit::GBps => format!("{x:.2}"),
            Unit::Fraction => format!("{x:.3}"),
            Unit::Count | Unit::Bytes => format!("{x:.0}"),
            _ => format!("{x}"),
        },
    }
}

/// A change in percent with its sign, to one decimal; a change that rounds
/// to zero is `0.0`, as `-0.0` and `+0.0` read as a loss and a gain that
/// are not there.
fn signed_change(x: f64) -> String {
    let text = format!("{x:+.1}");
    match text.as_str() {
        "+0.0" | "-0.0" => "0.0".to_string(),
        _ => text,
    }
}

/// A column's screen header: its label with its unit, one word
/// (`busy_ms`, `share_%`, `bus_GB/s`) so headers split like the values;
/// text columns keep their label as written.
fn screen_header(col: &Column, time_unit: &str) -> String {
    let unit = match col.unit {
        Unit::Us => time_unit,
        Unit::Pct | Unit::PctChange => "%",
        Unit::GBps => "GB/s",
        _ => "",
    };
    if col.unit == Unit::Text {
        return col.label.clone();
    }
    let label = col.label.replace(' ', "_");
    if unit.is_empty() {
        label
    } else {
        format!("{label}_{unit}")
    }
}

/// The screen form of a table: header and rows of texts, and which columns
/// are numbers (right-aligned).
fn screen_cells(table: &Table) -> (Vec<String>, Vec<Vec<String>>, Vec<bool>) {
    let rows = table.screen_row_indices();
    let (time_unit, scale) = time_scale(table, &rows);
    let cols: Vec<usize> = (0..table.columns.len())
        .filter(|&i| table.columns[i].on_screen())
        .collect();
    let head = cols
        .iter()
        .map(|&i| screen_header(&table.columns[i], time_unit))
        .collect();
    let numeric = cols
        .iter()
        .map(|&i| !matches!(table.columns[i].unit, Unit::Text))
        .collect();
    let body = rows
        .iter()
        .map(|&r| {
            cols.iter()
                .map(|&i| screen_text(table.columns[i].unit, &table.rows[r][i], scale))
                .collect()
        })
        .collect();
    (head, body, numeric)
}

/// Writes sections to a console: a heading line per section and table,
/// aligned columns (numbers right, the last text column unpadded).
pub fn write_console(out: &mut impl Write, sections: &[Section]) -> io::Result<()> {
    for s in sections.iter().filter(|s| !s.page_only) {
        writeln!(out)?;
        writeln!(out, "{}", s.title)?;
        for line in &s.lines {
            writeln!(out, "{}", unitrace_core::cli::escape_controls(line))?;
        }
        for f in &s.figures {
            if let Some(text) = &f.text {
                if !f.caption.is_empty() {
                    writeln!(out, "{}", f.caption)?;
                }
                out.write_all(unitrace_core::cli::escape_lines(text).as_bytes())?;
            }
        }
        for t in s.tables.iter().filter(|t| !t.files_only) {
            write_console_table(out, t)?;
        }
    }
    Ok(())
}

fn write_console_table(out: &mut impl Write, t: &Table) -> io::Result<()> {
    if !t.title.is_empty() {
        writeln!(out, "\n{}", t.title)?;
    }
    let (head, body, numeric) = screen_cells(t);
    if !body.is_empty() {
        let mut width: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
        for row in &body {
            for (w, cell) in width.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::from(" ");
            for (i, cell) in cells.iter().enumerate() {
                let last = i + 1 == cells.len();
                let pad = width[i].saturating_sub(cell.chars().count());
                s.push(' ');
                if numeric[i] {
                    s.extend(std::iter::repeat_n(' ', pad));
                    s.push_str(cell);
                } else {
                    s.push_str(cell);
                    if !last {
                        s.extend(std::iter::repeat_n(' ', pad));
                    }
                }
                if !last {
                    s.push(' ');
                }
            }
            s.trim_end().to_string()
        };
        writeln!(out, "{}", line(&head))?;
        for row in &body {
            writeln!(out, "{}", line(row))?;
        }
    } else {
        writeln!(out, "  (none)")?;
    }
    if let Some((_, note)) = t.screen_rows.as_ref().filter(|(_, n)| !n.is_empty()) {
        writeln!(out, "{note}")?;
    }
    for n in &t.notes {
        writeln!(out, "{n}")?;
    }
    Ok(())
}

/// Writes sections into a report page: a heading per section, its lines as
/// paragraphs, its figures, its tables.
pub fn write_page<W: Write>(doc: &mut Document<W>, sections: &[Section]) -> io::Result<()> {
    for s in sections {
        doc.heading(2, &s.title)?;
        for line in &s.lines {
            doc.paragraph(line)?;
        }
        for f in &s.figures {
            if let Some(svg) = &f.svg {
                if !f.caption.is_empty() {
                    doc.paragraph(&f.caption)?;
                }
                doc.figure(svg)?;
            }
        }
        for t in s.tables.iter().filter(|t| !t.files_only) {
            if !t.title.is_empty() {
                doc.heading(3, &t.title)?;
            }
            let (header, body, numeric) = screen_cells(t);
            let names: Vec<bool> = t
                .columns
                .iter()
                .filter(|c| c.on_screen())
                .map(|c| c.long_names)
                .collect();
            let rows = body
                .into_iter()
                .map(|row| {
                    row.into_iter()
                        .zip(numeric.iter().zip(&names))
                        .map(|(text, (&num, &name))| match (num, name) {
                            (true, _) => Cell::Formatted(text),
                            (false, true) => Cell::Name(text),
                            (false, false) => Cell::Text(text),
                        })
                        .collect()
                })
                .collect();
            doc.table(&HtmlTable { header, rows })?;
            // A paragraph per note, as the console gives each its line:
            // joined, the findings' fixes ran into one block of text.
            let shown = t.screen_rows.as_ref().map(|(_, note)| note.as_str());
            for note in shown.into_iter().chain(t.notes.iter().map(|n| n.as_str())) {
                if !note.is_empty() {
                    doc.paragraph(note)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let mut t = Table::new(
            "t",
            "A table",
            vec![
                Column::new("rank", "rank", Unit::Text),
                Column::new("busy_us", "busy", Unit::Us),
                Column::new("busy_pct", "busy", Unit::Pct),
                Column::new("bytes", "bytes", Unit::Bytes).files_only(),
                Column::new("name", "name", Unit::Text),
            ],
        );
        t.push(vec![
            "0".into(),
            12_345.6.into(),
            50.0.into(),
            Value::Empty,
            "a".into(),
        ]);
        t.push(vec![
            "1".into(),
            20.0.into(),
            1.25.into(),
            7u64.into(),
            "bb".into(),
        ]);
        t
    }

    #[test]
    fn files_keep_microseconds_and_fixed_decimals() {
        let (head, rows) = file_rows(&table());
        assert_eq!(head, ["rank", "busy_us", "busy_pct", "bytes", "name"]);
        assert_eq!(rows[0], ["0", "12345.600", "50.0000", "", "a"]);
        assert_eq!(rows[1], ["1", "20.000", "1.2500", "7", "bb"]);
    }

    /// Three rows made on demand, the second of them also held as shown.
    struct Made;

    impl RowSource for Made {
        fn count(&self) -> usize {
            3
        }

        fn row(&self, i: usize, out: &mut Vec<Value>) {
            out.clear();
            out.extend([
                i.to_string().into(),
                (i as f64).into(),
                1.0.into(),
                (i as u64).into(),
                "m".into(),
            ]);
        }
    }

    #[test]
    fn a_file_of_made_rows_holds_them_all_and_the_screen_its_own() {
        let mut t = table();
        t.rows.remove(0);
        t.file_rows = Some(FileRows(Arc::new(Made)));
        let dir = tempfile::tempdir().unwrap();
        write_dir(dir.path(), [&t], TableFormat::Csv).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("t.csv")).unwrap(),
            "rank,busy_us,busy_pct,bytes,name\n0,0.000,1.0000,0,m\n1,1.000,1.0000,1,m\n2,2.000,1.0000,2,m\n"
        );
        assert_eq!(file_rows(&t).1.len(), 3);
        let mut out = Vec::new();
        let mut s = Section::new("x", "Section");
        s.tables.push(t);
        write_console(&mut out, &[s]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "\nSection\n\nA table\n  rank  busy_us  busy_%  name\n  1      20.000    1.25  bb\n"
        );
    }

    #[test]
    fn a_change_that_rounds_to_zero_has_no_sign() {
        let shown: Vec<String> = [0.0, -0.0, -0.04, 0.049, -0.05, 0.06, 12.34, -7.0]
            .iter()
            .map(|&x| screen_text(Unit::PctChange, &Value::Num(x), 1.0))
            .collect();
        assert_eq!(
            shown,
            ["0.0", "0.0", "0.0", "0.0", "-0.1", "+0.1", "+12.3", "-7.0"]
        );
    }

    #[test]
    fn the_screen_shows_one_time_unit_per_table() {
        let mut out = Vec::new();
        let mut s = Section::new("x", "Section");
        s.tables.push(table());
        write_console(&mut out, &[s]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "\nSection\n\nA table\n  rank  busy_ms  busy_%  name\n  0      12.346   50.00  a\n  1       0.020    1.25  bb\n"
        );
    }
}
