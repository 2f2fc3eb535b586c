//! Reads flat Parquet files of `INT64` and string columns into a
//! [`Table`] with the `parquet` crate's column readers: the source
//! dataset (`tracestat --events`, docs/tracestat.md#events) and both
//! writers' outputs, so that the check reads every file the same way.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use parquet::basic::Type as PhysicalType;
use parquet::column::reader::ColumnReader;
use parquet::data_type::ByteArray;
use parquet::file::reader::{FileReader, SerializedFileReader};

use crate::columns::{Column, Table};

fn err(path: &Path, e: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{}: {e}", path.display()),
    )
}

/// The Parquet files of `path`: itself if a file, else every `*.parquet`
/// below it (a Hive-style dataset), sorted by path so that `rank=0`'s
/// parts come in order.
pub fn parquet_files(path: &Path) -> io::Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_owned()]);
    }
    let mut out = Vec::new();
    let mut dirs = vec![path.to_owned()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d)? {
            let p = e?.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    out.sort();
    if out.is_empty() {
        return Err(err(path, "no .parquet file"));
    }
    Ok(out)
}

/// Every row of every file of `path` (see [`parquet_files`]).
pub fn read_table(path: &Path) -> io::Result<Table> {
    let mut table = Table::default();
    for f in parquet_files(path)? {
        table.append(read_file(&f)?)?;
    }
    Ok(table)
}

/// One file's rows.
pub fn read_file(path: &Path) -> io::Result<Table> {
    let reader = SerializedFileReader::new(File::open(path)?).map_err(|e| err(path, e))?;
    let descr = reader.metadata().file_metadata().schema_descr_ptr();
    let mut columns = Vec::with_capacity(descr.num_columns());
    for i in 0..descr.num_columns() {
        let c = descr.column(i);
        if c.max_rep_level() != 0 {
            return Err(err(path, format!("column {}: repeated", c.name())));
        }
        let nullable = c.max_def_level() > 0;
        columns.push(match c.physical_type() {
            PhysicalType::INT64 => Column::int64(c.name(), nullable),
            PhysicalType::BYTE_ARRAY => Column::utf8(c.name(), nullable),
            other => {
                return Err(err(
                    path,
                    format!("column {}: {other}, not INT64 or a string", c.name()),
                ))
            }
        });
    }
    let mut defs: Vec<i16> = Vec::new();
    let mut ints: Vec<i64> = Vec::new();
    let mut strs: Vec<ByteArray> = Vec::new();
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g).map_err(|e| err(path, e))?;
        let rows = group.metadata().num_rows() as usize;
        for (i, col) in columns.iter_mut().enumerate() {
            defs.clear();
            let mut column_reader = group.get_column_reader(i).map_err(|e| err(path, e))?;
            let read = match &mut column_reader {
                ColumnReader::Int64ColumnReader(r) => {
                    ints.clear();
                    r.read_records(rows, Some(&mut defs), None, &mut ints)
                }
                ColumnReader::ByteArrayColumnReader(r) => {
                    strs.clear();
                    r.read_records(rows, Some(&mut defs), None, &mut strs)
                }
                _ => return Err(err(path, format!("column {}: unexpected reader", col.name))),
            };
            let (records, _, _) = read.map_err(|e| err(path, e))?;
            if records != rows {
                return Err(err(
                    path,
                    format!(
                        "column {}: {records} rows in a row group of {rows}",
                        col.name
                    ),
                ));
            }
            // A required column has no levels: every row holds a value;
            // `next` walks the non-null values.
            let nullable = col.nullable;
            let present = |row: usize| !nullable || defs[row] > 0;
            let mut next = 0usize;
            if matches!(column_reader, ColumnReader::Int64ColumnReader(_)) {
                for row in 0..rows {
                    let v = present(row).then(|| {
                        next += 1;
                        ints[next - 1]
                    });
                    col.push_i64(v);
                }
            } else {
                for row in 0..rows {
                    let v = present(row).then(|| {
                        next += 1;
                        strs[next - 1].data()
                    });
                    col.push_str(v)?;
                }
            }
        }
    }
    Ok(Table { columns })
}

/// What a reader sees of a file's layout: rows, row groups, and per
/// column its encodings and compressed/uncompressed bytes.
pub fn describe(path: &Path) -> io::Result<String> {
    let reader = SerializedFileReader::new(File::open(path)?).map_err(|e| err(path, e))?;
    let meta = reader.metadata();
    let descr = meta.file_metadata().schema_descr_ptr();
    let mut out = format!(
        "{}: {} rows, {} row groups, created by {}\n",
        path.display(),
        meta.file_metadata().num_rows(),
        meta.num_row_groups(),
        meta.file_metadata().created_by().unwrap_or("?")
    );
    for i in 0..descr.num_columns() {
        let mut compressed = 0i64;
        let mut uncompressed = 0i64;
        let mut encodings = std::collections::BTreeSet::new();
        let mut codec = String::new();
        for g in meta.row_groups() {
            let c = g.column(i);
            compressed += c.compressed_size();
            uncompressed += c.uncompressed_size();
            for e in c.encodings() {
                encodings.insert(format!("{e}"));
            }
            codec = format!("{}", c.compression());
        }
        let c = descr.column(i);
        out.push_str(&format!(
            "  {:<18} {:<10} {:>9.2} MB ({:>7.2} MB raw) {codec} {}\n",
            c.name(),
            if c.max_def_level() > 0 {
                "optional"
            } else {
                "required"
            },
            compressed as f64 / 1e6,
            uncompressed as f64 / 1e6,
            encodings.into_iter().collect::<Vec<_>>().join(",")
        ));
    }
    Ok(out)
}
