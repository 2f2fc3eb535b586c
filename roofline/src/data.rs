//! `--data FILE`: one CSV row per kernel and memory level with the numbers
//! behind each dot (decimal units, see `model.rs`). `precision` is the
//! kernel's own dominant precision (empty when it counted no operation),
//! `ops` that precision's count. Floats are written as
//! shortest round-trip decimals so the file is deterministic and exact.

//!
//! A name ending in `.parquet` writes the same columns as Parquet
//! ([`schema`], docs/formats.md#parquet-tables-roofline): `time_ns` is
//! `INT64` like every nanosecond column of the workspace (unitrace writes
//! `GpuTime[ns]` as integers; a profile with fractions is rounded to whole
//! ns, in the CSV too, so both files agree), `ops` and `bytes` are `DOUBLE`
//! because the profiles' sums can be fractional, `above_roof` and
//! `plotted` are booleans.

use std::io::{self, Write};

use crate::model::{KernelView, Roofline};
use unitrace_core::pyfmt::float_repr as repr;
use unitrace_render::parquet::{Column, Schema};
use unitrace_render::table::TableWriter;

/// Counts (time, operations, bytes) print as integers when they are whole.
fn count(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        format!("{}", x as i64)
    } else {
        repr(x)
    }
}

/// Nanoseconds as a whole number; empty (null) when not finite.
fn nanoseconds(x: f64) -> String {
    if x.is_finite() {
        // `as` saturates at the i64 range.
        format!("{}", x.round() as i64)
    } else {
        String::new()
    }
}

pub const HEADER: [&str; 16] = [
    "kernel",
    "level",
    "time_ns",
    "time_pct",
    "instances",
    "precision",
    "ops",
    "bytes",
    "ai_flop_per_byte",
    "gflops",
    "bandwidth_gb_per_s",
    "roof_gflops",
    "pct_of_roof",
    "roof_kind",
    "above_roof",
    "plotted",
];

/// The column types of [`HEADER`] for Parquet.
pub fn schema() -> Schema {
    Schema::new(
        HEADER
            .iter()
            .map(|&name| match name {
                "kernel" | "level" | "roof_kind" => Column::utf8(name),
                "precision" => Column::utf8(name).nullable(),
                "time_ns" => Column::int64(name).nullable(),
                "instances" => Column::int64(name),
                "above_roof" | "plotted" => Column::bool(name),
                _ => Column::float64(name),
            })
            .collect(),
    )
}

/// Writes the rows (its header is written by [`TableWriter::new`] from
/// [`schema`]).
pub fn write_table<W: Write + Send>(
    r: &Roofline,
    views: &[KernelView],
    w: &mut TableWriter<W>,
) -> io::Result<()> {
    for v in views {
        let k = &r.kernels[v.kernel];
        for p in &v.points {
            let level = &r.levels[p.level];
            w.write_record([
                k.name.as_str(),
                level.key.as_str(),
                &nanoseconds(k.time_ns.as_f64()),
                &repr(v.time_pct),
                &k.memory_instances.to_string(),
                v.precision.map_or("", |p| p.label()),
                &count(v.ops),
                &count(p.bytes),
                &repr(p.ai),
                &repr(p.gflops),
                &repr(level.bandwidth_gb_per_s),
                &repr(p.roof_gflops),
                &repr(p.pct_of_roof),
                if p.memory_bound { "memory" } else { "compute" },
                if p.above_roof { "yes" } else { "no" },
                if p.plotted { "yes" } else { "no" },
            ])?;
        }
    }
    Ok(())
}
