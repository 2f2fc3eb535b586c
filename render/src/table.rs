//! One table, written as CSV or Parquet by the file name it is given.
//!
//! Every option that writes a table (analyze `--data`, summary
//! `--per-rank`, roofline `--data`, mergetrace `--stats`, tracestat and
//! compare `--csv`/`--parquet`) goes through [`TableWriter`]: the tool
//! formats each row as CSV fields, exactly as before, and the writer either
//! writes them as CSV or parses each field as its column's type into a
//! Parquet file ([`crate::parquet`], docs/formats.md#parquet-tables). One
//! row formatter per table therefore serves both formats, and the two files
//! of one run hold the same values by construction.

use std::io::{self, Write};
use std::path::Path;

use unitrace_core::AtomicFile;

use crate::parquet::{ParquetWriter, Schema};

/// The file format of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableFormat {
    Csv,
    Parquet,
}

impl TableFormat {
    /// Parquet for a path ending in `.parquet` (any case), CSV otherwise.
    pub fn of_path(path: &Path) -> TableFormat {
        match path.extension() {
            Some(ext) if ext.eq_ignore_ascii_case("parquet") => TableFormat::Parquet,
            _ => TableFormat::Csv,
        }
    }

    /// The file name extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            TableFormat::Csv => "csv",
            TableFormat::Parquet => "parquet",
        }
    }
}

enum Inner<W: Write + Send> {
    Csv(CsvOut<W>),
    Parquet(Box<ParquetWriter<W>>),
}

/// A table being written into `W` as CSV (header row first) or Parquet.
pub struct TableWriter<W: Write + Send> {
    inner: Inner<W>,
}

impl TableWriter<AtomicFile> {
    /// Starts the file `path` (through `AtomicFile`, so it joins the
    /// run's `OutputSet`), Parquet when the name ends in `.parquet`.
    pub fn create(path: &Path, schema: &Schema) -> io::Result<TableWriter<AtomicFile>> {
        TableWriter::new(
            AtomicFile::create(path)?,
            TableFormat::of_path(path),
            schema,
        )
    }

    /// Ends the table and moves the file into place.
    pub fn commit(self) -> io::Result<()> {
        self.finish()?.commit()
    }
}

impl<W: Write + Send> TableWriter<W> {
    /// Starts the table; a CSV gets its header row (the schema's column
    /// names) at once.
    pub fn new(out: W, format: TableFormat, schema: &Schema) -> io::Result<TableWriter<W>> {
        let inner = match format {
            TableFormat::Csv => {
                let mut w = CsvOut::new(out);
                w.record(schema.columns.iter().map(|c| c.name.as_str()))?;
                Inner::Csv(w)
            }
            TableFormat::Parquet => Inner::Parquet(Box::new(ParquetWriter::new(out, schema)?)),
        };
        Ok(TableWriter { inner })
    }

    /// The CSV writer, where the table is CSV: for a caller that writes
    /// each field as its type needs ([`CsvFields`]).
    pub fn csv(&mut self) -> Option<&mut CsvOut<W>> {
        match &mut self.inner {
            Inner::Csv(w) => Some(w),
            Inner::Parquet(_) => None,
        }
    }

    /// The Parquet writer, where the table is Parquet: for a caller that
    /// pushes each value as its column's type.
    pub fn parquet(&mut self) -> Option<&mut ParquetWriter<W>> {
        match &mut self.inner {
            Inner::Csv(_) => None,
            Inner::Parquet(w) => Some(w),
        }
    }

    pub fn format(&self) -> TableFormat {
        match self.inner {
            Inner::Csv(_) => TableFormat::Csv,
            Inner::Parquet(_) => TableFormat::Parquet,
        }
    }

    /// Writes one row of CSV fields, one per column (for Parquet, parsed
    /// as the column's type, see [`ParquetWriter::write_text_row`]).
    pub fn write_record<I, S>(&mut self, record: I) -> io::Result<()>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        match &mut self.inner {
            Inner::Csv(w) => w.record(record),
            Inner::Parquet(w) => {
                let width = w.schema().columns.len();
                let mut n = 0;
                for field in record {
                    if n < width {
                        w.push_text(n, field.as_ref());
                    }
                    n += 1;
                }
                if n != width {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("a row of {n} fields for {width} Parquet columns"),
                    ));
                }
                w.end_row()
            }
        }
    }

    /// Ends the table (a Parquet file's last row group and footer) and
    /// returns `W`.
    pub fn finish(self) -> io::Result<W> {
        match self.inner {
            Inner::Csv(w) => w.finish(),
            Inner::Parquet(w) => w.finish(),
        }
    }
}

/// CSV records as the `csv` crate's writer writes them by default: fields
/// split by `,`, quoted only where they hold `,`, `"`, `\r` or `\n` (a `"`
/// doubled inside), a record of no bytes written as `""`, each ended by
/// `\n`, every record as wide as the first. Hand-written because the
/// crate's writer, which scans and copies each field through its own
/// state machine, took most of the time a run spent writing a long table
/// such as the critical path's, and numbers need no scan at all
/// ([`CsvFields::plain`], docs/tracestat.md#scale); the tests below compare
/// the two on every kind of field.
pub struct CsvOut<W: Write> {
    out: W,
    buf: String,
    width: Option<usize>,
}

/// How much of a table is gathered before it goes to the writer.
const CSV_CHUNK: usize = 64 * 1024;

impl<W: Write> CsvOut<W> {
    fn new(out: W) -> Self {
        CsvOut {
            out,
            buf: String::with_capacity(CSV_CHUNK + 1024),
            width: None,
        }
    }

    fn record<I, S>(&mut self, record: I) -> io::Result<()>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.record_with(|f| {
            for field in record {
                f.text(field.as_ref());
            }
        })
    }

    /// Writes one record, whose fields `fill` gives in order.
    pub fn record_with(&mut self, fill: impl FnOnce(&mut CsvFields<'_>)) -> io::Result<()> {
        let at = self.buf.len();
        let mut fields = CsvFields {
            buf: &mut self.buf,
            count: 0,
        };
        fill(&mut fields);
        let count = fields.count;
        if self.buf.len() == at {
            self.buf.push_str("\"\"");
        }
        self.buf.push('\n');
        match self.width {
            Some(w) if w != count => {
                self.buf.truncate(at);
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "found record with {count} fields, but the previous record has {w} fields"
                    ),
                ));
            }
            _ => self.width = Some(count),
        }
        if self.buf.len() >= CSV_CHUNK {
            self.out.write_all(self.buf.as_bytes())?;
            self.buf.clear();
        }
        Ok(())
    }

    fn finish(mut self) -> io::Result<W> {
        self.out.write_all(self.buf.as_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The fields of one CSV record being written ([`CsvOut::record_with`]).
pub struct CsvFields<'a> {
    buf: &'a mut String,
    count: usize,
}

impl CsvFields<'_> {
    /// The next field, which the caller appends whole: one that holds no
    /// byte that needs quotes (a number, `true`, nothing), or one already
    /// quoted ([`field_text`]).
    pub fn plain(&mut self) -> &mut String {
        self.next();
        self.buf
    }

    /// The next `n` fields, which the caller appends whole with a comma
    /// between each two ([`CsvFields::plain`]): text spelled once for
    /// many records.
    pub fn plain_fields(&mut self, n: usize) -> &mut String {
        if n > 0 {
            self.next();
            self.count += n - 1;
        }
        self.buf
    }

    /// The next field: `text`, quoted where it must be.
    pub fn text(&mut self, text: &str) {
        self.next();
        push_field(self.buf, text);
    }

    fn next(&mut self) {
        if self.count > 0 {
            self.buf.push(',');
        }
        self.count += 1;
    }
}

/// `text` as one CSV field, quoted where it must be: for a writer that
/// spells a name once and copies it into many records ([`CsvFields::plain`]).
pub fn field_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_field(&mut out, text);
    out
}

/// Appends `text` as one CSV field, quoted where it must be.
fn push_field(buf: &mut String, text: &str) {
    // A fold without an early exit, which the compiler turns into
    // vector compares: faster on names of tens of bytes than a search
    // per byte value.
    let special = (text.bytes()).fold(false, |any, b| {
        any | matches!(b, b',' | b'"' | b'\n' | b'\r')
    });
    if !special {
        buf.push_str(text);
        return;
    }
    buf.push('"');
    for part in text.split_inclusive('"') {
        buf.push_str(part);
        if part.ends_with('"') {
            buf.push('"');
        }
    }
    buf.push('"');
}

/// A CSV table's records, one at a time, through a writer of any
/// destination: what a [`crate::sections::RowSource`] writes its rows into.
pub trait CsvRecords {
    /// Writes one record, whose fields `fill` gives in order
    /// ([`CsvOut::record_with`]).
    fn record(&mut self, fill: &mut dyn FnMut(&mut CsvFields<'_>)) -> io::Result<()>;
}

impl<W: Write> CsvRecords for CsvOut<W> {
    fn record(&mut self, fill: &mut dyn FnMut(&mut CsvFields<'_>)) -> io::Result<()> {
        self.record_with(|f| fill(f))
    }
}

/// Checks that a Parquet table holds the same header and values as a CSV
/// table written by [`TableWriter`] for the same run: fields compared as
/// the Parquet column's type (numbers by value, `NaN` equal to `nan`, an
/// empty field equal to null). Returns the first difference. Used by the
/// tools' tests, and a quick check for anyone converting tables.
pub fn same_as_csv(csv_text: &[u8], parquet: Vec<u8>) -> Result<(), String> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    let reader =
        SerializedFileReader::new(bytes::Bytes::from(parquet)).map_err(|e| e.to_string())?;
    let descr = reader.metadata().file_metadata().schema_descr_ptr();
    let parquet_header: Vec<String> = (0..descr.num_columns())
        .map(|i| descr.column(i).name().to_owned())
        .collect();
    let mut csv = csv::Reader::from_reader(csv_text);
    let csv_header: Vec<String> = csv
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_owned)
        .collect();
    if csv_header != parquet_header {
        return Err(format!("header {csv_header:?} != {parquet_header:?}"));
    }
    let mut csv_rows = csv.records();
    let mut n = 0usize;
    for row in reader.get_row_iter(None).map_err(|e| e.to_string())? {
        let row = row.map_err(|e| e.to_string())?;
        n += 1;
        let record = match csv_rows.next() {
            Some(r) => r.map_err(|e| e.to_string())?,
            None => return Err(format!("Parquet has more rows than the CSV ({n}+)")),
        };
        for ((name, field), text) in row.get_column_iter().zip(record.iter()) {
            let same = match field {
                Field::Null => text.is_empty(),
                Field::Str(s) => s == text,
                Field::Long(v) => text.parse::<i64>() == Ok(*v),
                Field::Double(v) => text
                    .parse::<f64>()
                    .is_ok_and(|t| t == *v || (t.is_nan() && v.is_nan())),
                Field::Bool(v) => crate::parquet::parse_bool(text) == Some(*v),
                other => return Err(format!("row {n} column {name}: unexpected {other:?}")),
            };
            if !same {
                return Err(format!(
                    "row {n} column {name}: Parquet {field:?}, CSV {text:?}"
                ));
            }
        }
    }
    if csv_rows.next().is_some() {
        return Err(format!("the CSV has more rows than the Parquet ({n})"));
    }
    Ok(())
}

/// The [`Schema`] of a Parquet file written by [`crate::parquet`] (flat
/// columns of our four types), to check a file's column types.
pub fn parquet_schema(parquet: Vec<u8>) -> io::Result<Schema> {
    use crate::parquet::{Column, ColumnType};
    use parquet::basic::{Repetition, Type as PhysicalType};
    use parquet::file::reader::{FileReader, SerializedFileReader};

    let reader =
        SerializedFileReader::new(bytes::Bytes::from(parquet)).map_err(io::Error::other)?;
    let descr = reader.metadata().file_metadata().schema_descr_ptr();
    let columns = (0..descr.num_columns())
        .map(|i| {
            let c = descr.column(i);
            let ty = match c.physical_type() {
                PhysicalType::INT64 => ColumnType::Int64,
                PhysicalType::DOUBLE => ColumnType::Float64,
                PhysicalType::BYTE_ARRAY => ColumnType::Utf8,
                PhysicalType::BOOLEAN => ColumnType::Bool,
                other => return Err(io::Error::other(format!("column {}: {other}", c.name()))),
            };
            let nullable = c.self_type().get_basic_info().repetition() == Repetition::OPTIONAL;
            let column = Column::new(c.name(), ty);
            Ok(if nullable { column.nullable() } else { column })
        })
        .collect::<io::Result<Vec<_>>>()?;
    Ok(Schema::new(columns))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fields appended several at a time count as that many: a record
    /// of them is as wide as one of fields given one by one.
    #[test]
    fn fields_given_together_count_one_by_one() {
        let mut w = CsvOut::new(Vec::new());
        w.record(["a", "b", "c", "d"]).unwrap();
        w.record_with(|f| {
            f.plain_fields(3).push_str("1,\"2,x\",3");
            f.plain().push('4');
        })
        .unwrap();
        w.record_with(|f| {
            f.plain_fields(0);
            f.plain().push('1');
            f.plain_fields(2).push_str("2,3");
            f.plain().push('4');
        })
        .unwrap();
        let short = w.record_with(|f| f.plain_fields(3).push_str("1,2,3"));
        assert!(short.unwrap_err().to_string().contains("3 fields"));
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(text, "a,b,c,d\n1,\"2,x\",3,4\n1,2,3,4\n");
    }

    fn ours(records: &[Vec<&str>]) -> io::Result<Vec<u8>> {
        let mut w = CsvOut::new(Vec::new());
        for r in records {
            w.record(r)?;
        }
        w.finish()
    }

    fn crates(records: &[Vec<&str>]) -> csv::Result<Vec<u8>> {
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in records {
            w.write_record(r)?;
        }
        Ok(w.into_inner().expect("a Vec takes every byte"))
    }

    #[test]
    fn csv_records_are_those_of_the_csv_crate() {
        let tricky = [
            "",
            "plain",
            "a,b",
            "say \"hi\"",
            "\"",
            "\"\"",
            "cr\rhere",
            "two\nlines",
            "\r\n",
            " space ",
            "#hash",
            "tab\there",
            "ünïcode, too",
            "x;y",
            "'q'",
            "-1.5e3",
            "nan",
        ];
        let mut records: Vec<Vec<&str>> = Vec::new();
        for a in tricky {
            for b in tricky {
                records.push(vec![a, b, "3"]);
            }
        }
        assert_eq!(ours(&records).unwrap(), crates(&records).unwrap());
        for single in tricky {
            let one = vec![vec![single], vec![""], vec!["end"]];
            assert_eq!(ours(&one).unwrap(), crates(&one).unwrap(), "{single:?}");
        }
        // Enough rows to go to the writer in several chunks.
        let long: Vec<Vec<&str>> = (0..20_000).map(|i| vec![tricky[i % 17], "1,2"]).collect();
        assert_eq!(ours(&long).unwrap(), crates(&long).unwrap());
    }

    #[test]
    fn a_csv_record_of_another_width_is_an_error() {
        let records = vec![vec!["a", "b"], vec!["c"]];
        assert!(crates(&records).is_err());
        let e = ours(&records).unwrap_err();
        assert_eq!(
            e.to_string(),
            "found record with 1 fields, but the previous record has 2 fields"
        );
    }
}
