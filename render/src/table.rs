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
    Csv(csv::Writer<W>),
    Parquet(ParquetWriter<W>),
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
                let mut w = csv::Writer::from_writer(out);
                w.write_record(schema.columns.iter().map(|c| c.name.as_str()))?;
                Inner::Csv(w)
            }
            TableFormat::Parquet => Inner::Parquet(ParquetWriter::new(out, schema)?),
        };
        Ok(TableWriter { inner })
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
            Inner::Csv(w) => {
                for field in record {
                    w.write_field(field.as_ref())?;
                }
                Ok(w.write_record(None::<&[u8]>)?)
            }
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
            Inner::Csv(w) => w.into_inner().map_err(|e| e.into_error()),
            Inner::Parquet(w) => w.finish(),
        }
    }
}
