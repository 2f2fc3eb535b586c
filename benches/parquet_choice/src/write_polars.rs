//! polars' Parquet writer, used as a streaming exporter would use it
//! (bounded memory, like the project's writer): one `DataFrame` per row
//! group of `row_group_rows` rows, built from the memory columns, handed
//! to the batched writer. Same zstd level, same row group size, column
//! statistics (min, max, nulls) as the project's writer; polars chooses
//! dictionary encoding itself per column chunk (when its estimated
//! cardinality is low: names, and small-range integers), there is no
//! per-column switch. Columns are serialised one after the other unless
//! `parallel` (polars' default, on its rayon pool).

use std::io::{self, Write};

use polars::polars_utils::compression::ZstdLevel;
use polars::prelude::*;

use crate::columns::{Column as MemColumn, Table, Values};
use crate::WriteSettings;

fn to_io(e: PolarsError) -> io::Error {
    io::Error::other(e.to_string())
}

/// Rows `range` of a memory column as a polars column.
fn column(c: &MemColumn, range: std::ops::Range<usize>) -> Column {
    let name = PlSmallStr::from_str(&c.name);
    let valid = &c.valid[range.clone()];
    match &c.values {
        Values::Int64(vs) => {
            let vs = &vs[range];
            let ca = if valid.iter().all(|&v| v) {
                Int64Chunked::from_slice(name, vs)
            } else {
                Int64Chunked::from_iter_options(
                    name,
                    vs.iter().zip(valid).map(|(v, ok)| ok.then_some(*v)),
                )
            };
            ca.into_column()
        }
        Values::Utf8 { bytes, ends } => StringChunked::from_iter_options(
            name,
            range
                .clone()
                .zip(valid)
                .map(|(row, ok)| ok.then(|| MemColumn::str_at(bytes, ends, row))),
        )
        .into_column(),
    }
}

/// Writes every row of `table` to `out`.
pub fn write<W: Write>(table: &Table, out: W, settings: &WriteSettings) -> io::Result<W> {
    let mut out = out;
    let level = ZstdLevel::try_new(settings.zstd_level).map_err(to_io)?;
    let rows = table.rows();
    let step = settings.row_group_rows.max(1);
    let frame = |start: usize| -> io::Result<DataFrame> {
        let end = (start + step).min(rows);
        let columns = table
            .columns
            .iter()
            .map(|c| column(c, start..end))
            .collect();
        DataFrame::new(end - start, columns).map_err(to_io)
    };
    let first = frame(0)?;
    {
        let mut writer = ParquetWriter::new(&mut out)
            .with_compression(ParquetCompression::Zstd(Some(level)))
            .with_row_group_size(Some(step))
            .with_statistics(StatisticsOptions::default())
            .set_parallel(settings.parallel)
            .batched(first.schema())
            .map_err(to_io)?;
        writer.write_batch(&first).map_err(to_io)?;
        drop(first);
        let mut start = step;
        while start < rows {
            writer.write_batch(&frame(start)?).map_err(to_io)?;
            start += step;
        }
        writer.finish().map_err(to_io)?;
    }
    Ok(out)
}
