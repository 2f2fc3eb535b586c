//! `--csv DIR`: one CSV file per table of the report
//! (docs/tracestat.md#csv-files); `--parquet DIR`: the same tables as
//! Parquet files of the same names (`breakdown.parquet`, …), typed by
//! [`column_type`] (docs/formats.md#parquet-tables). Every file is written
//! to a temporary name first and renamed only when all of them were
//! written.

use std::path::{Path, PathBuf};

use anyhow::Result;
use unitrace_core::atomic::AtomicFile;
use unitrace_core::InputError;
use unitrace_render::parquet::{Column, ColumnType, Schema};
use unitrace_render::table::{TableFormat, TableWriter};

use crate::report::Report;

fn us(v: f64) -> String {
    format!("{v:.3}")
}
fn pc(v: f64) -> String {
    format!("{v:.4}")
}
fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or(String::new(), |v| v.to_string())
}

/// The tables as `(file name, header, rows)`.
/// One CSV table: file name, header, rows.
pub type Table = (&'static str, Vec<String>, Vec<Vec<String>>);

pub fn tables(r: &Report) -> Vec<Table> {
    let h = |cols: &[&str]| cols.iter().map(|c| c.to_string()).collect::<Vec<_>>();
    let mut out = Vec::new();
    out.push((
        "breakdown.csv",
        h(&[
            "rank",
            "device",
            "file",
            "wall_us",
            "busy_us",
            "busy_pct",
            "compute_us",
            "communication_us",
            "memory_us",
            "idle_us",
            "compute_pct",
            "communication_pct",
            "memory_pct",
            "idle_pct",
            "kernel_time_us",
            "launches",
        ]),
        r.breakdown
            .iter()
            .map(|b| {
                vec![
                    b.rank.clone(),
                    b.device.clone(),
                    b.file.clone(),
                    us(b.wall_us),
                    us(b.busy_us),
                    pc(b.busy_pct),
                    us(b.compute_us),
                    us(b.communication_us),
                    us(b.memory_us),
                    us(b.idle_us),
                    pc(b.compute_pct),
                    pc(b.communication_pct),
                    pc(b.memory_pct),
                    pc(b.idle_pct),
                    us(b.kernel_time_us),
                    b.launches.to_string(),
                ]
            })
            .collect(),
    ));
    out.push((
        "overlap.csv",
        h(&[
            "rank",
            "device",
            "communication_us",
            "overlap_us",
            "overlap_pct",
            "exposed_communication_us",
        ]),
        r.breakdown
            .iter()
            .map(|b| {
                vec![
                    b.rank.clone(),
                    b.device.clone(),
                    us(b.communication_total_us),
                    us(b.overlap_us),
                    pc(b.overlap_pct),
                    us(b.exposed_communication_us),
                ]
            })
            .collect(),
    ));
    let mut gap_head = h(&[
        "rank",
        "device",
        "gaps",
        "total_us",
        "longest_us",
        "mean_us",
    ]);
    if let Some(g) = r.idle_gaps.first() {
        for (label, _, _) in &g.histogram {
            gap_head.push(format!("count_{label}"));
            gap_head.push(format!("us_{label}"));
        }
        for (cause, _, _) in &g.causes {
            gap_head.push(format!("{cause}_gaps"));
            gap_head.push(format!("{cause}_us"));
        }
    }
    out.push((
        "idle_gaps.csv",
        gap_head,
        r.idle_gaps
            .iter()
            .map(|g| {
                let mut row = vec![
                    g.rank.clone(),
                    g.device.clone(),
                    g.count.to_string(),
                    us(g.total_us),
                    us(g.longest_us),
                    us(g.mean_us),
                ];
                for (_, n, t) in g.histogram.iter().chain(&g.causes) {
                    row.push(n.to_string());
                    row.push(us(*t));
                }
                row
            })
            .collect(),
    ));
    out.push((
        "launches.csv",
        h(&[
            "rank",
            "device",
            "kernels",
            "with_flow",
            "latency_mean_us",
            "latency_p50_us",
            "latency_p95_us",
            "latency_max_us",
            "negative_latency",
            "short_kernels",
            "short_launch_pct",
            "short_time_us",
            "short_time_pct",
        ]),
        r.launches
            .iter()
            .map(|l| {
                vec![
                    l.rank.clone(),
                    l.device.clone(),
                    l.kernels.to_string(),
                    l.with_flow.to_string(),
                    us(l.latency_mean_us),
                    us(l.latency_p50_us),
                    us(l.latency_p95_us),
                    us(l.latency_max_us),
                    l.negative_latency.to_string(),
                    l.short_kernels.to_string(),
                    pc(l.short_launch_pct),
                    us(l.short_time_us),
                    pc(l.short_time_pct),
                ]
            })
            .collect(),
    ));
    out.push((
        "host_ranges.csv",
        h(&[
            "range",
            "ranks",
            "calls",
            "host_us",
            "launches",
            "gpu_inclusive_us",
            "self_launches",
            "gpu_self_us",
        ]),
        r.host_ranges
            .iter()
            .map(|x| {
                vec![
                    x.name.clone(),
                    x.ranks.to_string(),
                    x.calls.to_string(),
                    us(x.host_us),
                    x.launches.to_string(),
                    us(x.gpu_inclusive_us),
                    x.self_launches.to_string(),
                    us(x.gpu_self_us),
                ]
            })
            .collect(),
    ));
    if !r.host_tree.is_empty() {
        out.push((
            "host_tree.csv",
            h(&["path", "kernel", "launches", "gpu_us"]),
            r.host_tree
                .iter()
                .map(|t| {
                    vec![
                        t.path.join(" > "),
                        t.kernel.clone(),
                        t.launches.to_string(),
                        us(t.gpu_us),
                    ]
                })
                .collect(),
        ));
    }
    out.push((
        "collectives.csv",
        h(&[
            "name",
            "comm",
            "bytes",
            "occurrence",
            "ranks",
            "start_us",
            "skew_us",
            "last_rank",
            "duration_us",
            "transfer_us",
            "bus_gbps",
            "consistent",
        ]),
        r.collectives
            .iter()
            .map(|c| {
                vec![
                    c.name.clone(),
                    opt(&c.comm),
                    opt(&c.bytes),
                    c.occurrence.to_string(),
                    c.ranks.to_string(),
                    us(c.start_us),
                    us(c.skew_us),
                    c.last_rank.clone(),
                    us(c.duration_us),
                    us(c.transfer_us),
                    c.bus_gbps.map_or(String::new(), |b| format!("{b:.4}")),
                    c.consistent.to_string(),
                ]
            })
            .collect(),
    ));
    out.push((
        "collective_waits.csv",
        h(&["name", "comm", "bytes", "occurrence", "rank", "wait_us"]),
        r.collectives
            .iter()
            .flat_map(|c| {
                c.waits_us.iter().map(move |(rank, w)| {
                    vec![
                        c.name.clone(),
                        opt(&c.comm),
                        opt(&c.bytes),
                        c.occurrence.to_string(),
                        rank.clone(),
                        us(*w),
                    ]
                })
            })
            .collect(),
    ));
    out.push((
        "collective_summary.csv",
        h(&[
            "name",
            "instances",
            "skew_mean_us",
            "skew_max_us",
            "duration_mean_us",
            "transfer_mean_us",
            "bytes_total",
            "bus_gbps_mean",
            "wait_total_us",
            "most_often_last",
        ]),
        r.collective_summary
            .iter()
            .map(|c| {
                vec![
                    c.name.clone(),
                    c.instances.to_string(),
                    us(c.skew_mean_us),
                    us(c.skew_max_us),
                    us(c.duration_mean_us),
                    us(c.transfer_mean_us),
                    c.bytes_total.to_string(),
                    c.bus_gbps_mean.map_or(String::new(), |b| format!("{b:.4}")),
                    us(c.wait_total_us),
                    c.most_often_last.clone(),
                ]
            })
            .collect(),
    ));
    out.push((
        "stragglers.csv",
        h(&[
            "rank",
            "gpu_time_us",
            "vs_median_pct",
            "compute_us",
            "compute_vs_median_pct",
            "communication_us",
            "busy_pct",
            "arrived_last",
            "collectives",
            "wait_caused_us",
            "own_wait_us",
        ]),
        r.stragglers
            .iter()
            .map(|s| {
                vec![
                    s.rank.clone(),
                    us(s.gpu_time_us),
                    pc(s.vs_median_pct),
                    us(s.compute_us),
                    pc(s.compute_vs_median_pct),
                    us(s.communication_us),
                    pc(s.busy_pct),
                    s.arrived_last.to_string(),
                    s.collectives.to_string(),
                    us(s.wait_caused_us),
                    us(s.own_wait_us),
                ]
            })
            .collect(),
    ));
    let kernel_head = h(&[
        "category",
        "kernel",
        "class",
        "count",
        "total_us",
        "mean_us",
        "p50_us",
        "p95_us",
        "max_us",
        "share_pct",
        "ranks",
        "rank_min",
        "rank_min_us",
        "rank_median_us",
        "rank_max",
        "rank_max_us",
    ]);
    let kernel_rows = |rows: &[crate::report::KernelRow]| {
        rows.iter()
            .map(|k| {
                vec![
                    k.category.clone(),
                    k.name.clone(),
                    k.class.name().to_string(),
                    k.count.to_string(),
                    us(k.total_us),
                    us(k.mean_us),
                    us(k.p50_us),
                    us(k.p95_us),
                    us(k.max_us),
                    pc(k.share_pct),
                    k.ranks.to_string(),
                    k.rank_min.clone(),
                    us(k.rank_min_us),
                    us(k.rank_median_us),
                    k.rank_max.clone(),
                    us(k.rank_max_us),
                ]
            })
            .collect::<Vec<_>>()
    };
    out.push((
        "categories.csv",
        kernel_head.clone(),
        kernel_rows(&r.categories),
    ));
    out.push(("kernels.csv", kernel_head, kernel_rows(&r.kernels)));
    let mut heat_head = vec!["rank".to_string()];
    heat_head.extend(heat_bin_names(r.heatmap.bins, r.heatmap.bin_us));
    out.push((
        "heatmap.csv",
        heat_head,
        r.heatmap
            .rows
            .iter()
            .map(|(rank, util)| {
                let mut row = vec![rank.clone()];
                row.extend(util.iter().map(|u| format!("{u:.4}")));
                row
            })
            .collect(),
    ));
    out.push((
        "implausible.csv",
        h(&["rank", "kind", "count"]),
        r.implausible
            .iter()
            .map(|i| vec![i.rank.clone(), i.kind.clone(), i.count.to_string()])
            .collect(),
    ));
    out
}

/// The heatmap's column names: each bin's start in us since the earliest
/// start, with 3 decimals, or with as many more as it takes to tell the
/// bins apart (bins under 1 ns: a run shorter than `--bins` ns), since
/// Parquet readers refuse repeated column names
/// (docs/tracestat.md#heatmap-heatmap). A run without a time span has one
/// start for every bin: its bins are named by index (`0`, `1`, ...).
pub fn heat_bin_names(bins: usize, bin_us: f64) -> Vec<String> {
    for decimals in 3..=12 {
        let names: Vec<String> = (0..bins)
            .map(|j| format!("{:.*}", decimals, j as f64 * bin_us))
            .collect();
        // Starts increase, so equal names can only be neighbours.
        if names.windows(2).all(|w| w[0] != w[1]) {
            return names;
        }
    }
    (0..bins).map(|j| j.to_string()).collect()
}

/// The Parquet type of a column, from its name alone so that every run
/// writes the same schema: counts are `INT64`, times (`*_us`), shares
/// (`*_pct`), rates and the heatmap's bins (named by their start time)
/// `DOUBLE`, `consistent` a boolean; labels (`rank` included: a file
/// without a rank is labelled by its index) are strings.
pub fn column_type(name: &str) -> ColumnType {
    const COUNTS: &[&str] = &[
        "launches",
        "gaps",
        "kernels",
        "with_flow",
        "negative_latency",
        "short_kernels",
        "ranks",
        "calls",
        "self_launches",
        "bytes",
        "occurrence",
        "instances",
        "bytes_total",
        "arrived_last",
        "collectives",
        "count",
    ];
    if COUNTS.contains(&name) || name.starts_with("count_") || name.ends_with("_gaps") {
        ColumnType::Int64
    } else if name == "consistent" {
        ColumnType::Bool
    } else if name.ends_with("_us")
        || name.starts_with("us_")
        || name.ends_with("_pct")
        || name.ends_with("gbps")
        || name.ends_with("gbps_mean")
        || name.parse::<f64>().is_ok()
    {
        ColumnType::Float64
    } else {
        ColumnType::Utf8
    }
}

/// The Parquet schema of a table with this header: every column nullable,
/// as any CSV field may be empty.
pub fn table_schema(head: &[String]) -> Schema {
    Schema::new(
        head.iter()
            .map(|name| Column::new(name.clone(), column_type(name)).nullable())
            .collect(),
    )
}

/// The file `name` (from [`tables`]) of a table in `format`.
pub fn file_name(name: &str, format: TableFormat) -> PathBuf {
    Path::new(name).with_extension(format.extension())
}

/// Writes every table into `dir` as CSV or Parquet files.
pub fn write_dir(dir: &Path, r: &Report, format: TableFormat) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| InputError::io(dir, &e))?;
    let mut pending = Vec::new();
    for (name, head, rows) in tables(r) {
        let path = dir.join(file_name(name, format));
        let file = AtomicFile::create(&path).map_err(|e| InputError::io(&path, &e))?;
        let written = (|| {
            let mut w = TableWriter::new(file, format, &table_schema(&head))?;
            for row in rows {
                w.write_record(&row)?;
            }
            w.finish()
        })();
        let file = written.map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        pending.push((path, file));
    }
    for (path, file) in pending {
        file.commit().map_err(|e| InputError::io(&path, &e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heat_bin_names_are_distinct_at_any_width() {
        assert_eq!(heat_bin_names(3, 1.5), ["0.000", "1.500", "3.000"]);
        // 0.7 ns bins: 3 decimals of us would repeat `0.001`.
        assert_eq!(
            heat_bin_names(4, 0.0007),
            ["0.0000", "0.0007", "0.0014", "0.0021"]
        );
        assert_eq!(heat_bin_names(3, 0.0), ["0", "1", "2"]);
        for (bins, width) in [(100_000, 0.0001), (200, 1e-9), (7, 3.0)] {
            let names = heat_bin_names(bins, width);
            let mut unique = names.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), bins, "{bins} x {width}");
            assert!(names.iter().all(|n| column_type(n) == ColumnType::Float64));
        }
    }
}
