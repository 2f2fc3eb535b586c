//! The project's writer, as `tracestat --events` uses it: the very file
//! render/src/parquet.rs (the `parquet` crate's column writer, no arrow),
//! rows pushed value by value, cut into row groups of
//! `Options::row_group_rows` rows, zstd pages, dictionaries for string
//! columns only (docs/formats.md#parquet-tables).

use std::io::{self, Write};

use crate::columns::{Column as MemColumn, Table, Values};
use crate::project_parquet::{Column, Options, ParquetWriter, Schema};
use crate::WriteSettings;

/// Writes every row of `table` to `out`.
pub fn write<W: Write + Send>(table: &Table, out: W, settings: &WriteSettings) -> io::Result<W> {
    let schema = Schema::new(
        table
            .columns
            .iter()
            .map(|c| {
                let col = match c.values {
                    Values::Int64(_) => Column::int64(c.name.as_str()),
                    Values::Utf8 { .. } => Column::utf8(c.name.as_str()),
                };
                if c.nullable {
                    col.nullable()
                } else {
                    col
                }
            })
            .collect(),
    );
    let options = Options {
        row_group_rows: settings.row_group_rows,
        zstd_level: settings.zstd_level,
        ..Options::default()
    };
    let mut w = ParquetWriter::with_options(out, &schema, options)?;
    for row in 0..table.rows() {
        for (i, c) in table.columns.iter().enumerate() {
            push(&mut w, i, c, row);
        }
        w.end_row()?;
    }
    w.finish()
}

#[inline]
fn push<W: Write + Send>(w: &mut ParquetWriter<W>, i: usize, c: &MemColumn, row: usize) {
    if !c.valid[row] {
        return w.push_null(i);
    }
    match &c.values {
        Values::Int64(vs) => w.push_i64(i, vs[row]),
        Values::Utf8 { bytes, ends } => w.push_str(i, MemColumn::str_at(bytes, ends, row)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back_equal_with_nulls_and_several_row_groups() {
        let mut pid = MemColumn::int64("pid", false);
        let mut name = MemColumn::utf8("name", false);
        let mut range = MemColumn::utf8("host_range", true);
        let mut bytes = MemColumn::int64("bytes", true);
        for i in 0..1000i64 {
            pid.push_i64(Some(7));
            name.push_str(Some(format!("kernel_{}", i % 13).as_bytes()))
                .unwrap();
            range
                .push_str((i % 3 != 0).then_some("PyTorch::step".as_bytes()))
                .unwrap();
            bytes.push_i64((i % 5 == 0).then_some(i * 4096));
        }
        let table = Table {
            columns: vec![pid, name, range, bytes],
        };
        let settings = WriteSettings {
            row_group_rows: 300,
            zstd_level: 1,
            parallel: false,
        };
        let dir = std::env::temp_dir().join(format!("pqchoice-w-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.parquet");
        write(&table, std::fs::File::create(&path).unwrap(), &settings).unwrap();
        let back = crate::read::read_file(&path).unwrap();
        let layout = crate::read::describe(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(back, table);
        assert!(layout.contains("1000 rows, 4 row groups"), "{layout}");
        assert!(layout.contains("ZSTD"), "{layout}");
    }
}
