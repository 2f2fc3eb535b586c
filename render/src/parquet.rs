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

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use bytes::Bytes;
use parquet::basic::{
    Compression, ConvertedType, Encoding, EncodingMask, LogicalType, PageType, Repetition,
    Type as PhysicalType, ZstdLevel,
};
use parquet::column::page::{CompressedPage, Page, PageWriter};
use parquet::column::writer::{ColumnCloseResult, ColumnWriter};
use parquet::data_type::ByteArray;
use parquet::file::metadata::{ColumnChunkMetaData, OffsetIndexBuilder, PageEncodingStats};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::{SerializedFileWriter, SerializedPageWriter, TrackedWrite};
use parquet::schema::types::{ColumnDescPtr, ColumnPath, Type};

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
    /// A string column without statistics is dictionary-encoded by this
    /// writer itself rather than by the `parquet` crate, which lets callers
    /// that already number their strings skip the hashing of every value
    /// ([`ParquetWriter::push_key`]; see [Dictionary columns](#dictionary-columns)).
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
    /// A string column without statistics: the chunk's dictionary and,
    /// per present value, its index in it.
    Dict {
        indices: Vec<u32>,
        dict: Dictionary,
    },
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

/// The dictionary of one string column in the current row group: values
/// in order of first use, PLAIN-encoded as the dictionary page wants them.
#[derive(Default)]
struct Dictionary {
    /// The dictionary page's content: per value a 4-byte little-endian
    /// length and its bytes.
    plain: Vec<u8>,
    len: u32,
    /// Caller key ([`ParquetWriter::push_key`]) to dictionary index + 1;
    /// 0 when the key has no value in this row group yet.
    by_key: Vec<u32>,
    /// The keys set in `by_key` in this row group, to clear them.
    keys_used: Vec<u32>,
    /// Value to dictionary index: consulted once per new key, and for every
    /// value given by [`ParquetWriter::push_str`].
    by_value: HashMap<Box<[u8]>, u32, BuildHasherDefault<FxHasher>>,
}

/// Keys past this go through the value map instead of `by_key`, so that a
/// stray large key costs a hash, not a huge table.
const MAX_KEY: u32 = 1 << 24;

impl Dictionary {
    /// The index of `value`, added if new.
    fn index_of(&mut self, value: &[u8]) -> u32 {
        if let Some(&i) = self.by_value.get(value) {
            return i;
        }
        let i = self.len;
        self.len += 1;
        self.plain
            .extend_from_slice(&(value.len() as u32).to_le_bytes());
        self.plain.extend_from_slice(value);
        self.by_value.insert(value.into(), i);
        i
    }

    /// The index of `value` for a key seen for the first time in this row
    /// group, remembered for the key's next values.
    #[cold]
    #[inline(never)]
    fn add_key(&mut self, key: u32, value: &str) -> u32 {
        let i = self.index_of(value.as_bytes());
        if key < MAX_KEY {
            let k = key as usize;
            if self.by_key.len() <= k {
                self.by_key.resize(k + 1, 0);
            }
            self.by_key[k] = i + 1;
            self.keys_used.push(key);
        }
        i
    }

    /// Empties it for the next row group, keeping the allocations.
    fn clear(&mut self) {
        for &k in &self.keys_used {
            self.by_key[k as usize] = 0;
        }
        self.keys_used.clear();
        self.by_value.clear();
        self.plain.clear();
        self.len = 0;
    }
}

/// What a string value counts against [`Options::row_group_bytes`]: its
/// bytes and an offset, as buffered by value. A dictionary column holds
/// less (an index per value), but counts the same, so that row groups
/// are cut at the same rows whichever way a column is written (the
/// budget stays an upper bound on memory).
#[inline]
fn string_bytes(v: &str) -> usize {
    v.len() + 8
}

/// The multiply-rotate hash of rustc (FxHash): the dictionary's value map
/// holds short names, for which SipHash's DoS resistance buys nothing.
#[derive(Default, Clone, Copy)]
struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(i as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

struct Buffer {
    values: Values,
    /// Definition levels of a nullable column (1 present, 0 null).
    defs: Vec<i16>,
    nullable: bool,
    /// Values and nulls pushed in this row group.
    count: usize,
}

impl Buffer {
    /// Counts a value just pushed.
    #[inline]
    fn present(&mut self) {
        if self.nullable {
            self.defs.push(1);
        }
        self.count += 1;
    }
}

/// A Parquet file being written into `W`.
pub struct ParquetWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    /// zstd context of the dictionary columns' pages (the `parquet` crate
    /// compresses the other columns with its own).
    zstd: zstd::bulk::Compressor<'static>,
    level: ZstdLevel,
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
                    ColumnType::Utf8 if !c.statistics => Values::Dict {
                        indices: Vec::new(),
                        dict: Dictionary::default(),
                    },
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
        let zstd = zstd::bulk::Compressor::new(level.compression_level())?;
        Ok(ParquetWriter {
            file,
            zstd,
            level,
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
        self.buffers[col].present();
    }

    /// Appends `v` to the `INT64` column `col` of the current row.
    #[inline]
    pub fn push_i64(&mut self, col: usize, v: i64) {
        let Some(b) = self.buffers.get_mut(col) else {
            return self.wrong_type(col, "Int64");
        };
        let Values::Int64(vs) = &mut b.values else {
            return self.wrong_type(col, "Int64");
        };
        vs.push(v);
        b.present();
        self.bytes += 8;
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
            Some(Values::Dict { indices, dict }) => indices.push(dict.index_of(v.as_bytes())),
            _ => return self.wrong_type(col, "Utf8"),
        }
        self.bytes += string_bytes(v);
        self.present(col);
    }

    /// Appends `v` to the string column `col` of the current row, `key`
    /// being the caller's number for `v`: the same key must always come
    /// with the same string in one writer (different keys may share a
    /// string). In a column without statistics the value is then looked up
    /// by key in a table, not hashed: only a key's first value in a row
    /// group is read (docs/tracestat.md#events). In other string columns
    /// this is [`ParquetWriter::push_str`].
    #[inline]
    pub fn push_key(&mut self, col: usize, key: u32, v: &str) {
        let Some(b) = self.buffers.get_mut(col) else {
            return self.push_str(col, v);
        };
        let Values::Dict { indices, dict } = &mut b.values else {
            return self.push_str(col, v);
        };
        let i = match dict.by_key.get(key as usize) {
            Some(&slot) if slot != 0 => slot - 1,
            _ => dict.add_key(key, v),
        };
        indices.push(i);
        b.present();
        self.bytes += string_bytes(v);
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
        let descrs: Vec<ColumnDescPtr> = self.file.schema_descr().columns().to_vec();
        let compression = Compression::ZSTD(self.level);
        let mut group = self.file.next_row_group().map_err(to_io)?;
        for (b, descr) in self.buffers.iter_mut().zip(descrs) {
            if let Values::Dict { indices, dict } = &mut b.values {
                let defs = b.nullable.then_some(b.defs.as_slice());
                let (chunk, close) =
                    dictionary_chunk(&mut self.zstd, compression, descr, dict, indices, defs)?;
                group.append_column(&chunk, close).map_err(to_io)?;
                indices.clear();
                dict.clear();
                b.defs.clear();
                b.count = 0;
                continue;
            }
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

/// Rows per data page of a dictionary column: the pages the `parquet`
/// crate cuts (its row limit of 20,000, checked every 1,024 values).
const DICT_PAGE_ROWS: usize = 20 * 1024;

/// One column chunk of a string column without statistics, dictionary
/// encoded as the `parquet` crate would (a PLAIN dictionary page, then
/// `RLE_DICTIONARY` data pages of format v1 with RLE definition levels,
/// every page zstd-compressed), from the dictionary and indices built by
/// [`ParquetWriter::push_key`]/[`ParquetWriter::push_str`]: the bytes of
/// the chunk (offsets from 0) and what the row group needs to splice it.
fn dictionary_chunk(
    zstd: &mut zstd::bulk::Compressor<'static>,
    compression: Compression,
    descr: ColumnDescPtr,
    dict: &Dictionary,
    indices: &[u32],
    defs: Option<&[i16]>,
) -> io::Result<(Bytes, ColumnCloseResult)> {
    let rows = defs.map_or(indices.len(), <[i16]>::len);
    let mut sink = TrackedWrite::new(Vec::new());
    let mut pages = SerializedPageWriter::new(&mut sink);
    let mut compressed = 0u64;
    let mut uncompressed = 0u64;
    let mut offsets = OffsetIndexBuilder::new();
    let mut data_page_offset = None;
    let mut data_pages = 0;

    let dict_page = Page::DictionaryPage {
        buf: Bytes::from(zstd.compress(&dict.plain)?),
        num_values: dict.len,
        encoding: Encoding::PLAIN,
        is_sorted: false,
    };
    let spec = pages
        .write_page(CompressedPage::new(dict_page, dict.plain.len()))
        .map_err(to_io)?;
    compressed += spec.compressed_size as u64;
    uncompressed += spec.uncompressed_size as u64;

    // Entries of the dictionary up to the current page: indices are given
    // in order of first use, so one more than the largest index so far.
    let mut entries = 0u32;
    let mut page = Vec::new();
    let mut value_at = 0;
    let mut row = 0;
    while row < rows {
        let end = (row + DICT_PAGE_ROWS).min(rows);
        page.clear();
        let present = match defs {
            Some(defs) => {
                let levels = &defs[row..end];
                page.extend_from_slice(&[0; 4]);
                rle_hybrid(&mut page, levels, 1, |d| d as u32);
                let len = (page.len() - 4) as u32;
                page[..4].copy_from_slice(&len.to_le_bytes());
                levels.iter().filter(|&&d| d != 0).count()
            }
            None => end - row,
        };
        let values = &indices[value_at..value_at + present];
        entries = values.iter().fold(entries, |e, &i| e.max(i + 1));
        // The width of the dictionary as it stands when the page is cut,
        // as the `parquet` crate writes it: an earlier page may be narrower.
        let bit_width = bits_for(entries.saturating_sub(1));
        page.push(bit_width as u8);
        rle_hybrid(&mut page, values, bit_width, |i| i);
        value_at += present;
        let data_page = Page::DataPage {
            buf: Bytes::from(zstd.compress(&page)?),
            num_values: (end - row) as u32,
            encoding: Encoding::RLE_DICTIONARY,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
            statistics: None,
        };
        let spec = pages
            .write_page(CompressedPage::new(data_page, page.len()))
            .map_err(to_io)?;
        compressed += spec.compressed_size as u64;
        uncompressed += spec.uncompressed_size as u64;
        data_page_offset.get_or_insert(spec.offset as i64);
        offsets.append_offset_and_size(spec.offset as i64, spec.compressed_size as i32);
        offsets.append_row_count((end - row) as i64);
        data_pages += 1;
        row = end;
    }
    pages.close().map_err(to_io)?;
    let bytes = sink.bytes_written() as u64;
    let chunk = Bytes::from(sink.into_inner().map_err(to_io)?);

    let mut stats = vec![PageEncodingStats {
        page_type: PageType::DICTIONARY_PAGE,
        encoding: Encoding::PLAIN,
        count: 1,
    }];
    if data_pages > 0 {
        stats.push(PageEncodingStats {
            page_type: PageType::DATA_PAGE,
            encoding: Encoding::RLE_DICTIONARY,
            count: data_pages,
        });
    }
    let encodings = [Encoding::PLAIN, Encoding::RLE, Encoding::RLE_DICTIONARY];
    let metadata = ColumnChunkMetaData::builder(descr)
        .set_compression(compression)
        .set_encodings_mask(EncodingMask::new_from_encodings(encodings.iter()))
        .set_page_encoding_stats(stats)
        .set_total_compressed_size(compressed as i64)
        .set_total_uncompressed_size(uncompressed as i64)
        .set_num_values(rows as i64)
        .set_data_page_offset(data_page_offset.unwrap_or(0))
        .set_dictionary_page_offset(Some(0))
        .build()
        .map_err(to_io)?;
    let close = ColumnCloseResult {
        bytes_written: bytes,
        rows_written: rows as u64,
        metadata,
        bloom_filter: None,
        column_index: None,
        offset_index: Some(offsets.build()),
    };
    Ok((chunk, close))
}

/// Bits needed for values up to `max` (0 for 0, as the `parquet` crate
/// writes a one-value dictionary's indices).
fn bits_for(max: u32) -> u32 {
    32 - max.leading_zeros()
}

/// Groups of 8 values in a bit-packed run at most, so that its header is
/// one byte, as the `parquet` crate writes them.
const MAX_GROUPS: usize = 63;

/// Appends `values` in Parquet's RLE / bit-packing hybrid encoding, each
/// `bit_width` bits wide (without a length prefix), cut into runs as the
/// `parquet` crate's encoder cuts them, so that a column's pages are the
/// bytes it would write: groups of 8 values counted from the end of the
/// last RLE run; a group of 8 equal values starts an RLE run that goes on
/// as long as the value repeats; other groups are bit-packed, at most
/// [`MAX_GROUPS`] to a run; a last partial group is an RLE run when its
/// values are equal and no bit-packed group waits, otherwise padded with
/// zeros (the page header gives the count).
fn rle_hybrid<T: Copy + PartialEq>(
    out: &mut Vec<u8>,
    values: &[T],
    bit_width: u32,
    to_u32: impl Fn(T) -> u32,
) {
    let n = values.len();
    // Bit-packed groups waiting: values[literal..i], whole groups.
    let mut literal = 0;
    let mut i = 0;
    while i + 8 <= n {
        let v = values[i];
        if values[i + 1..i + 8].iter().all(|&x| x == v) {
            bit_pack(out, &values[literal..i], bit_width, &to_u32);
            let mut j = i + 8;
            while j < n && values[j] == v {
                j += 1;
            }
            rle_run(out, j - i, to_u32(v), bit_width);
            i = j;
            literal = j;
        } else {
            i += 8;
            if (i - literal) / 8 >= MAX_GROUPS {
                bit_pack(out, &values[literal..i], bit_width, &to_u32);
                literal = i;
            }
        }
    }
    let tail = &values[i..];
    match tail.first() {
        Some(&v) if literal == i && tail.iter().all(|&x| x == v) => {
            rle_run(out, tail.len(), to_u32(v), bit_width)
        }
        _ => bit_pack(out, &values[literal..], bit_width, &to_u32),
    }
}

fn rle_run(out: &mut Vec<u8>, count: usize, value: u32, bit_width: u32) {
    put_uleb(out, (count as u64) << 1);
    for b in 0..bit_width.div_ceil(8) {
        out.push((value >> (8 * b)) as u8);
    }
}

/// One bit-packed run of `values` (at most [`MAX_GROUPS`] groups; the last
/// group padded with zeros); nothing for none.
fn bit_pack<T: Copy>(out: &mut Vec<u8>, values: &[T], bit_width: u32, to_u32: &impl Fn(T) -> u32) {
    if values.is_empty() {
        return;
    }
    let groups = values.len().div_ceil(8);
    debug_assert!(groups <= MAX_GROUPS);
    put_uleb(out, ((groups as u64) << 1) | 1);
    if bit_width <= 16 {
        // A group of eight fills exactly `bit_width` bytes: packed in one
        // 128-bit word (dictionary indices and levels are this narrow).
        let w = bit_width as usize;
        let mut group = values.chunks_exact(8);
        for g in &mut group {
            let mut acc: u128 = 0;
            for (j, &v) in g.iter().enumerate() {
                acc |= (to_u32(v) as u128) << (j * w);
            }
            out.extend_from_slice(&acc.to_le_bytes()[..w]);
        }
        let rest = group.remainder();
        if !rest.is_empty() {
            let mut acc: u128 = 0;
            for (j, &v) in rest.iter().enumerate() {
                acc |= (to_u32(v) as u128) << (j * w);
            }
            out.extend_from_slice(&acc.to_le_bytes()[..w]);
        }
        return;
    }
    let mut acc: u64 = 0;
    let mut bits = 0;
    for k in 0..groups * 8 {
        let v = values.get(k).map_or(0, |&v| to_u32(v)) as u64;
        acc |= v << bits;
        bits += bit_width;
        while bits >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            bits -= 8;
        }
    }
}

fn put_uleb(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
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
