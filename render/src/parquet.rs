//! Parquet tables: a typed, streaming writer over any `io::Write + Send`.
//!
//! Every table a tool writes as CSV can be written as Parquet instead
//! (docs/formats.md#parquet-tables): the same column names, typed columns
//! (integer nanoseconds and counts as `INT64`, measurements as `DOUBLE`,
//! names as dictionary-encoded UTF-8 strings, flags as `BOOLEAN`), pages
//! compressed with zstd. It is built on the `parquet` crate's low-level
//! column writer, without its arrow layer: the reason and the measurement
//! against polars are in docs/benchmarks.md#parquet-writer-polars-vs-parquet.
//!
//! # API
//!
//! * A [`Schema`] is a list of [`Column`]s: [`Column::int64`],
//!   [`Column::float64`], [`Column::utf8`] (dictionary-encoded),
//!   [`Column::bool`], each made nullable with [`Column::nullable`] and
//!   without min/max statistics with [`Column::without_statistics`].
//! * [`ParquetWriter::new`] (or [`ParquetWriter::with_options`]) starts a
//!   file in `W`. Rows are appended column by column into per-column
//!   buffers, either value by value ([`ParquetWriter::push_i64`],
//!   [`ParquetWriter::push_f64`], [`ParquetWriter::push_str`],
//!   [`ParquetWriter::push_bool`], [`ParquetWriter::push_null`], each
//!   column once, in any order, then [`ParquetWriter::end_row`]), or a
//!   row at a time ([`ParquetWriter::write_row`] with [`Value`]s, or
//!   [`ParquetWriter::write_text_row`] with CSV fields, parsed per column
//!   type: the convenience that turns any CSV-like table into Parquet).
//! * Buffers are written out as one row group whenever
//!   [`Options::row_group_rows`] rows or [`Options::row_group_bytes`]
//!   buffered bytes are reached, so memory is bounded by one row group
//!   whatever the table's length (a 1 GiB metric CSV included).
//! * [`ParquetWriter::finish`] writes the last row group and the footer
//!   and hands back `W` (e.g. an `AtomicFile` to commit).
//!
//! Misuse (a value of the wrong type for its column, a column pushed twice
//! or not at all in a row, a field that does not parse as its column's
//! type) is reported as an `io::Error` of kind `InvalidInput` /
//! `InvalidData` by the next `end_row`/`finish`, never as a panic.
//!
//! ```
//! use unitrace_render::parquet::{Column, ParquetWriter, Schema};
//!
//! let schema = Schema::new(vec![
//!     Column::utf8("kernel"),
//!     Column::int64("start_ns"),
//!     Column::float64("value").nullable(),
//! ]);
//! let mut w = ParquetWriter::new(Vec::new(), &schema)?;
//! w.push_str(0, "gemm");
//! w.push_i64(1, 1_000);
//! w.push_f64(2, 4.5);
//! w.end_row()?;
//! w.write_text_row(&["copy", "2000", ""])?; // "" is null in a nullable column
//! let bytes = w.finish()?;
//! assert_eq!(&bytes[..4], b"PAR1");
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! This file uses only `std`, `bytes` and `parquet`, so that the writer
//! benchmark (docs/benchmarks.md#parquet-writer-polars-vs-parquet) can
//! build it alone.

use std::io::{self, Write};
use std::sync::Arc;

use bytes::Bytes;
use parquet::basic::{
    Compression, ConvertedType, LogicalType, Repetition, Type as PhysicalType, ZstdLevel,
};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};

/// The type of one column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// `INT64`: nanoseconds, counts, ids.
    Int64,
    /// `DOUBLE`: measurements, ratios.
    Float64,
    /// `BYTE_ARRAY` annotated `STRING` (UTF-8), dictionary-encoded: names.
    Utf8,
    /// `BOOLEAN`.
    Bool,
}

/// One column of a [`Schema`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
    /// Whether the column may hold nulls (`OPTIONAL`); otherwise `REQUIRED`.
    pub nullable: bool,
    /// Whether each column chunk records its min and max (on unless
    /// [`Column::without_statistics`]).
    pub statistics: bool,
}

impl Column {
    pub fn new(name: impl Into<String>, ty: ColumnType) -> Column {
        Column {
            name: name.into(),
            ty,
            nullable: false,
            statistics: true,
        }
    }
    pub fn int64(name: impl Into<String>) -> Column {
        Column::new(name, ColumnType::Int64)
    }
    pub fn float64(name: impl Into<String>) -> Column {
        Column::new(name, ColumnType::Float64)
    }
    pub fn utf8(name: impl Into<String>) -> Column {
        Column::new(name, ColumnType::Utf8)
    }
    pub fn bool(name: impl Into<String>) -> Column {
        Column::new(name, ColumnType::Bool)
    }
    /// The same column, allowed to hold nulls.
    pub fn nullable(mut self) -> Column {
        self.nullable = true;
        self
    }
    /// The same column without min/max statistics: for strings no reader
    /// filters row groups by (a min and max of names mixed in any order
    /// prune nothing), whose statistics would cost a comparison per value.
    pub fn without_statistics(mut self) -> Column {
        self.statistics = false;
        self
    }
}

/// The columns of a table, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    pub columns: Vec<Column>,
}

impl Schema {
    pub fn new(columns: Vec<Column>) -> Schema {
        Schema { columns }
    }

    /// The index of the column named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    fn parquet_type(&self) -> io::Result<Type> {
        let fields = self
            .columns
            .iter()
            .map(|c| {
                let physical = match c.ty {
                    ColumnType::Int64 => PhysicalType::INT64,
                    ColumnType::Float64 => PhysicalType::DOUBLE,
                    ColumnType::Utf8 => PhysicalType::BYTE_ARRAY,
                    ColumnType::Bool => PhysicalType::BOOLEAN,
                };
                let mut b = Type::primitive_type_builder(&c.name, physical).with_repetition(
                    if c.nullable {
                        Repetition::OPTIONAL
                    } else {
                        Repetition::REQUIRED
                    },
                );
                if c.ty == ColumnType::Utf8 {
                    b = b
                        .with_logical_type(Some(LogicalType::String))
                        .with_converted_type(ConvertedType::UTF8);
                }
                b.build().map(Arc::new).map_err(to_io)
            })
            .collect::<io::Result<Vec<_>>>()?;
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()
            .map_err(to_io)
    }
}

/// How a file is cut into row groups and compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Rows per row group (the last one may be shorter).
    pub row_group_rows: usize,
    /// A row group is also written once its buffered values reach about
    /// this many bytes (long strings), which bounds memory.
    pub row_group_bytes: usize,
    /// zstd level (1..=22); 1 is fast with most of the gain on our tables.
    pub zstd_level: i32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            row_group_rows: 64 * 1024,
            row_group_bytes: 32 << 20,
            zstd_level: 1,
        }
    }
}

/// One value of a row for [`ParquetWriter::write_row`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    Null,
    Int64(i64),
    Float64(f64),
    Str(&'a str),
    Bool(bool),
}

enum Values {
    Int64(Vec<i64>),
    Float64(Vec<f64>),
    Bool(Vec<bool>),
    /// All strings of the row group back to back; `ends[i]` is where the
    /// i-th ends. One allocation per row group instead of one per value.
    Utf8 {
        bytes: Vec<u8>,
        ends: Vec<usize>,
    },
}

struct Buffer {
    values: Values,
    /// Definition levels of a nullable column (1 present, 0 null).
    defs: Vec<i16>,
    nullable: bool,
    /// Values and nulls pushed in this row group.
    count: usize,
}

/// A Parquet file being written into `W`.
pub struct ParquetWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    schema: Schema,
    buffers: Vec<Buffer>,
    options: Options,
    /// Rows of the current row group.
    rows: usize,
    /// Bytes buffered in the current row group (approximate).
    bytes: usize,
    rows_written: u64,
    row_groups: usize,
    /// The first misuse seen, reported by the next `end_row`/`finish`.
    misuse: Option<io::Error>,
}

fn to_io(e: parquet::errors::ParquetError) -> io::Error {
    match e {
        parquet::errors::ParquetError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(io) => *io,
            Err(other) => io::Error::other(other),
        },
        other => io::Error::other(other),
    }
}

impl<W: Write + Send> ParquetWriter<W> {
    /// Starts a file with the default [`Options`].
    pub fn new(out: W, schema: &Schema) -> io::Result<ParquetWriter<W>> {
        ParquetWriter::with_options(out, schema, Options::default())
    }

    pub fn with_options(out: W, schema: &Schema, options: Options) -> io::Result<ParquetWriter<W>> {
        if schema.columns.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a Parquet table needs a column",
            ));
        }
        let level = ZstdLevel::try_new(options.zstd_level).map_err(to_io)?;
        // Dictionaries only for names: they repeat, while timestamps and
        // measurements rarely do and would only pay for the hashing.
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_dictionary_enabled(false)
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_created_by(format!("unitrace-tools {}", env!("CARGO_PKG_VERSION")));
        for c in &schema.columns {
            if c.ty == ColumnType::Utf8 {
                props =
                    props.set_column_dictionary_enabled(ColumnPath::from(c.name.as_str()), true);
            }
            if !c.statistics {
                props = props.set_column_statistics_enabled(
                    ColumnPath::from(c.name.as_str()),
                    EnabledStatistics::None,
                );
            }
        }
        let file = SerializedFileWriter::new(
            out,
            Arc::new(schema.parquet_type()?),
            Arc::new(props.build()),
        )
        .map_err(to_io)?;
        let buffers = schema
            .columns
            .iter()
            .map(|c| Buffer {
                values: match c.ty {
                    ColumnType::Int64 => Values::Int64(Vec::new()),
                    ColumnType::Float64 => Values::Float64(Vec::new()),
                    ColumnType::Bool => Values::Bool(Vec::new()),
                    ColumnType::Utf8 => Values::Utf8 {
                        bytes: Vec::new(),
                        ends: Vec::new(),
                    },
                },
                defs: Vec::new(),
                nullable: c.nullable,
                count: 0,
            })
            .collect();
        Ok(ParquetWriter {
            file,
            schema: schema.clone(),
            buffers,
            options,
            rows: 0,
            bytes: 0,
            rows_written: 0,
            row_groups: 0,
            misuse: None,
        })
    }

    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Rows written so far, the current row group's included.
    pub fn rows(&self) -> u64 {
        self.rows_written + self.rows as u64
    }

    fn misused(&mut self, kind: io::ErrorKind, problem: String) {
        if self.misuse.is_none() {
            self.misuse = Some(io::Error::new(kind, problem));
        }
    }

    fn wrong_type(&mut self, col: usize, what: &str) {
        let problem = match self.schema.columns.get(col) {
            Some(c) => format!("Parquet column {} is {:?}, not {what}", c.name, c.ty),
            None => format!("no Parquet column {col}"),
        };
        self.misused(io::ErrorKind::InvalidInput, problem);
    }

    #[inline]
    fn present(&mut self, col: usize) {
        let b = &mut self.buffers[col];
        if b.nullable {
            b.defs.push(1);
        }
        b.count += 1;
    }

    /// Appends `v` to the `INT64` column `col` of the current row.
    #[inline]
    pub fn push_i64(&mut self, col: usize, v: i64) {
        match self.buffers.get_mut(col).map(|b| &mut b.values) {
            Some(Values::Int64(vs)) => vs.push(v),
            _ => return self.wrong_type(col, "Int64"),
        }
        self.bytes += 8;
        self.present(col);
    }

    /// Appends `v` to the `DOUBLE` column `col` of the current row.
    #[inline]
    pub fn push_f64(&mut self, col: usize, v: f64) {
        match self.buffers.get_mut(col).map(|b| &mut b.values) {
            Some(Values::Float64(vs)) => vs.push(v),
            _ => return self.wrong_type(col, "Float64"),
        }
        self.bytes += 8;
        self.present(col);
    }

    /// Appends `v` to the string column `col` of the current row.
    #[inline]
    pub fn push_str(&mut self, col: usize, v: &str) {
        match self.buffers.get_mut(col).map(|b| &mut b.values) {
            Some(Values::Utf8 { bytes, ends }) => {
                bytes.extend_from_slice(v.as_bytes());
                ends.push(bytes.len());
            }
            _ => return self.wrong_type(col, "Utf8"),
        }
        self.bytes += v.len() + 8;
        self.present(col);
    }

    /// Appends `v` to the `BOOLEAN` column `col` of the current row.
    #[inline]
    pub fn push_bool(&mut self, col: usize, v: bool) {
        match self.buffers.get_mut(col).map(|b| &mut b.values) {
            Some(Values::Bool(vs)) => vs.push(v),
            _ => return self.wrong_type(col, "Bool"),
        }
        self.bytes += 1;
        self.present(col);
    }

    /// Appends a null to the nullable column `col` of the current row.
    #[inline]
    pub fn push_null(&mut self, col: usize) {
        match self.buffers.get_mut(col) {
            Some(b) if b.nullable => {
                b.defs.push(0);
                b.count += 1;
                self.bytes += 2;
            }
            _ => {
                let problem = match self.schema.columns.get(col) {
                    Some(c) => format!("Parquet column {} is not nullable", c.name),
                    None => format!("no Parquet column {col}"),
                };
                self.misused(io::ErrorKind::InvalidInput, problem);
            }
        }
    }

    /// Appends one [`Value`] per column, then ends the row.
    pub fn write_row(&mut self, row: &[Value]) -> io::Result<()> {
        self.check_width(row.len())?;
        for (col, v) in row.iter().enumerate() {
            match *v {
                Value::Null => self.push_null(col),
                Value::Int64(v) => self.push_i64(col, v),
                Value::Float64(v) => self.push_f64(col, v),
                Value::Str(v) => self.push_str(col, v),
                Value::Bool(v) => self.push_bool(col, v),
            }
        }
        self.end_row()
    }

    /// Appends one CSV field per column, each parsed as its column's type
    /// (Rust's `i64`/`f64` syntax, which reads `inf` and `nan`; booleans
    /// `true`/`false` or `yes`/`no` in any case, `1`/`0`), then ends the row. An empty
    /// field is null in a nullable column.
    pub fn write_text_row<S: AsRef<str>>(&mut self, fields: &[S]) -> io::Result<()> {
        self.check_width(fields.len())?;
        for (col, field) in fields.iter().enumerate() {
            self.push_text(col, field.as_ref());
        }
        self.end_row()
    }

    /// Appends one CSV field to column `col`, parsed as its type.
    pub fn push_text(&mut self, col: usize, field: &str) {
        let Some(c) = self.schema.columns.get(col) else {
            return self.wrong_type(col, "text");
        };
        if field.is_empty() && c.nullable {
            return self.push_null(col);
        }
        let ty = c.ty;
        let bad = match ty {
            ColumnType::Utf8 => {
                self.push_str(col, field);
                false
            }
            ColumnType::Int64 => match field.parse::<i64>() {
                Ok(v) => {
                    self.push_i64(col, v);
                    false
                }
                Err(_) => true,
            },
            ColumnType::Float64 => match field.parse::<f64>() {
                Ok(v) => {
                    self.push_f64(col, v);
                    false
                }
                Err(_) => true,
            },
            ColumnType::Bool => match parse_bool(field) {
                Some(v) => {
                    self.push_bool(col, v);
                    false
                }
                None => true,
            },
        };
        if bad {
            let problem = format!(
                "Parquet column {}: {field:?} is not a {}",
                self.schema.columns[col].name,
                match ty {
                    ColumnType::Int64 => "64-bit integer",
                    ColumnType::Float64 => "number",
                    ColumnType::Bool => "boolean",
                    ColumnType::Utf8 => "string",
                }
            );
            self.misused(io::ErrorKind::InvalidData, problem);
        }
    }

    fn check_width(&self, n: usize) -> io::Result<()> {
        if n == self.schema.columns.len() {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a row of {n} values for {} Parquet columns",
                    self.schema.columns.len()
                ),
            ))
        }
    }

    /// Ends the current row: every column must have had one value. Writes
    /// a row group when the row or byte budget is reached.
    #[inline]
    pub fn end_row(&mut self) -> io::Result<()> {
        if let Some(e) = self.misuse.take() {
            return Err(e);
        }
        self.rows += 1;
        if self.rows >= self.options.row_group_rows || self.bytes >= self.options.row_group_bytes {
            self.flush_row_group()?;
        }
        Ok(())
    }

    /// Writes the buffered rows as one row group (nothing if none).
    pub fn flush_row_group(&mut self) -> io::Result<()> {
        if let Some(e) = self.misuse.take() {
            return Err(e);
        }
        if let Some((i, b)) = self
            .buffers
            .iter()
            .enumerate()
            .find(|(_, b)| b.count != self.rows)
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "Parquet column {} has {} values for {} rows",
                    self.schema.columns[i].name, b.count, self.rows
                ),
            ));
        }
        if self.rows == 0 {
            return Ok(());
        }
        let mut group = self.file.next_row_group().map_err(to_io)?;
        for b in &mut self.buffers {
            let mut column = group
                .next_column()
                .map_err(to_io)?
                .ok_or_else(|| io::Error::other("Parquet schema has fewer columns than buffers"))?;
            let defs = if b.nullable {
                Some(b.defs.as_slice())
            } else {
                None
            };
            let written = match (column.untyped(), &mut b.values) {
                (ColumnWriter::Int64ColumnWriter(w), Values::Int64(vs)) => {
                    let n = w.write_batch(vs, defs, None);
                    vs.clear();
                    n
                }
                (ColumnWriter::DoubleColumnWriter(w), Values::Float64(vs)) => {
                    let n = w.write_batch(vs, defs, None);
                    vs.clear();
                    n
                }
                (ColumnWriter::BoolColumnWriter(w), Values::Bool(vs)) => {
                    let n = w.write_batch(vs, defs, None);
                    vs.clear();
                    n
                }
                (ColumnWriter::ByteArrayColumnWriter(w), Values::Utf8 { bytes, ends }) => {
                    // The values go to the column writer as slices of one
                    // buffer; the next row group's starts as large, rather
                    // than growing again from nothing by doubling.
                    let capacity = bytes.capacity();
                    let data = Bytes::from(std::mem::replace(bytes, Vec::with_capacity(capacity)));
                    let mut start = 0;
                    let arrays: Vec<ByteArray> = ends
                        .iter()
                        .map(|&end| {
                            let a = ByteArray::from(data.slice(start..end));
                            start = end;
                            a
                        })
                        .collect();
                    ends.clear();
                    w.write_batch(&arrays, defs, None)
                }
                _ => {
                    return Err(io::Error::other(
                        "Parquet column writer of another type than its buffer",
                    ))
                }
            };
            written.map_err(to_io)?;
            column.close().map_err(to_io)?;
            b.defs.clear();
            b.count = 0;
        }
        group.close().map_err(to_io)?;
        self.rows_written += self.rows as u64;
        self.rows = 0;
        self.bytes = 0;
        self.row_groups += 1;
        Ok(())
    }

    /// Row groups written so far.
    pub fn row_groups(&self) -> usize {
        self.row_groups
    }

    /// Writes the last row group and the footer; returns `W`.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_row_group()?;
        self.file.into_inner().map_err(to_io)
    }
}

pub(crate) fn parse_bool(field: &str) -> Option<bool> {
    let yes = ["true", "yes", "1"];
    let no = ["false", "no", "0"];
    if yes.iter().any(|y| field.eq_ignore_ascii_case(y)) {
        Some(true)
    } else if no.iter().any(|n| field.eq_ignore_ascii_case(n)) {
        Some(false)
    } else {
        None
    }
}
