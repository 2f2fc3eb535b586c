//! Rank traces through the `tracestat` library (docs/tracestat.md): per
//! category, per kernel, per host range, per collective type and per rank
//! (wall time, GPU busy time, breakdown shares).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use tracestat::analyzers::kernels::KernelRow;
use tracestat::analyzers::{self, RankOptions, Report, ReportOptions};
use unitrace_core::cli::warn;
use unitrace_core::result_dir::ResultDir;
use unitrace_core::walk::{walk, Depth};
use unitrace_core::InputError;

use crate::model::{Item, Run, Section};

/// The trace files of one side: a file as it is; a directory's
/// `chrome_trace.*` of a result-dir tree, else its `*.json` / `*.pftrace`
/// files (byte order of the names, so the run is deterministic). Both
/// walks skip what is not a regular file or cannot be opened, with one
/// warning each (docs/robustness.md#walked-folders).
pub fn trace_files(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    if let Ok(tree) = ResultDir::open(path) {
        let sel = tree.traces(None);
        if !sel.files.is_empty() {
            for (entry, problem) in &tree.unreadable {
                warn(crate::TOOL, format!("{}: {problem}", entry.display()));
            }
            return Ok(sel.files.into_iter().map(|f| f.path).collect());
        }
    }
    let is_trace = |p: &Path| p.extension().is_some_and(|e| e == "json" || e == "pftrace");
    let found = walk(path, Depth::Flat, &is_trace).map_err(|e| InputError::io(path, &e))?;
    for skipped in &found.skipped {
        warn(crate::TOOL, skipped);
    }
    if found.files.is_empty() {
        bail!(
            "{}: no *.json or *.pftrace trace and no result-dir tree in it",
            path.display()
        );
    }
    Ok(found.files)
}

fn kernel_item(row: &KernelRow, name: &str) -> Item {
    let mut item = Item::new(name, row.total_us);
    item.metrics = vec![
        ("count".into(), row.count as f64),
        ("mean_us".into(), row.mean_us),
        ("p50_us".into(), row.p50_us),
        ("p95_us".into(), row.p95_us),
        ("max_us".into(), row.max_us),
        ("share_pct".into(), row.share_pct),
    ];
    if row.ranks > 1 {
        // Per-rank totals differ by this much; the change per rank is held
        // against it (docs/compare.md#noise).
        item.spread_us = Some(row.rank_max_us - row.rank_min_us);
        item.noise_per = row.ranks as f64;
    }
    item
}

/// The report of one side, as `tracestat` computes it.
pub fn report(path: &Path) -> Result<Report> {
    let files = trace_files(path)?;
    let opts = RankOptions {
        short_kernel_ns: 10_000,
        tree_depth: 0,
        heat_resolution: 1,
        schema: None,
        window: None,
    };
    let ranks = tracestat::summarize_files(&files, None, &opts, None)?;
    if ranks.is_empty() {
        bail!("{}: no rank in these traces", path.display());
    }
    // Data after a trace's end is ignored, with tracestat's warning: once
    // per file (a merged file holds several ranks), in input order.
    let mut trailing: Vec<(usize, &str, u64)> = ranks
        .iter()
        .filter_map(|r| Some((r.input_index, r.file.as_str(), r.trailing_data_line?)))
        .collect();
    trailing.sort();
    trailing.dedup();
    for (_, file, line) in trailing {
        warn(
            crate::TOOL,
            format!("{file}:{line}: data after the end of the trace; ignored"),
        );
    }
    Ok(analyzers::build(
        ranks,
        opts,
        &ReportOptions {
            bins: 1,
            align: tracestat::analyzers::clocks::Align::Collectives,
        },
    ))
}

pub fn from_report(r: &Report) -> Run {
    let categories = r
        .out
        .kernels
        .categories
        .iter()
        .map(|k| kernel_item(k, &k.category))
        .collect();
    let kernels: Vec<Item> = r
        .out
        .kernels
        .kernels
        .iter()
        .map(|k| kernel_item(k, &k.name))
        .collect();
    let host_ranges = r
        .out
        .host_ranges
        .host_ranges
        .iter()
        .map(|h| {
            let mut item = Item::new(h.name.clone(), h.host_us);
            item.metrics = vec![
                ("calls".into(), h.calls as f64),
                ("launches".into(), h.launches as f64),
                ("gpu_inclusive_us".into(), h.gpu_inclusive_us),
                ("gpu_self_us".into(), h.gpu_self_us),
            ];
            item
        })
        .collect();
    let collectives = r
        .out
        .collectives
        .collective_summary
        .iter()
        .map(|c| {
            let mut item = Item::new(c.name.clone(), c.duration_mean_us * c.instances as f64);
            item.metrics = vec![
                ("instances".into(), c.instances as f64),
                ("duration_mean_us".into(), c.duration_mean_us),
                ("skew_mean_us".into(), c.skew_mean_us),
                ("skew_max_us".into(), c.skew_max_us),
                ("wait_total_us".into(), c.wait_total_us),
            ];
            item
        })
        .collect();
    let ranks = r
        .out
        .breakdown
        .breakdown
        .iter()
        .map(|b| {
            let name = if b.device.is_empty() || b.device == "all" {
                format!("rank {}", b.rank)
            } else {
                format!("rank {} {}", b.rank, b.device)
            };
            let mut item = Item::new(name, b.wall_us);
            item.metrics = vec![
                ("wall_us".into(), b.wall_us),
                ("busy_us".into(), b.busy_us),
                ("kernel_time_us".into(), b.kernel_time_us),
                ("compute_us".into(), b.compute_us),
                ("communication_us".into(), b.communication_us),
                ("memory_us".into(), b.memory_us),
                ("idle_us".into(), b.idle_us),
                ("busy_pct".into(), b.busy_pct),
                ("compute_pct".into(), b.compute_pct),
                ("communication_pct".into(), b.communication_pct),
                ("memory_pct".into(), b.memory_pct),
                ("idle_pct".into(), b.idle_pct),
                ("overlap_pct".into(), b.overlap_pct),
                (
                    "exposed_communication_us".into(),
                    b.exposed_communication_us,
                ),
            ];
            item
        })
        .collect();
    Run {
        total_us: kernels.iter().map(|k| k.time_us).sum(),
        total_what: "kernel time, all ranks",
        sections: vec![
            Section {
                name: "category",
                kernel_names: false,
                items: categories,
            },
            Section {
                name: "kernel",
                kernel_names: true,
                items: kernels,
            },
            Section {
                name: "host_range",
                kernel_names: false,
                items: host_ranges,
            },
            Section {
                name: "collective",
                kernel_names: false,
                items: collectives,
            },
            Section {
                name: "rank",
                kernel_names: false,
                items: ranks,
            },
        ],
    }
}

pub fn read(path: &Path) -> Result<Run> {
    let r = report(path)?;
    // A cut trace or left-out events change the totals: say so, as
    // tracestat does (docs/tracestat.md).
    for t in &r.out.inputs.truncated {
        warn(crate::TOOL, format!("{}: {}", t.file, t.problem));
    }
    let implausible: u64 = r.out.inputs.implausible.iter().map(|i| i.count).sum();
    if implausible > 0 {
        warn(
            crate::TOOL,
            format!(
                "{}: {implausible} implausible event(s) left out",
                path.display()
            ),
        );
    }
    Ok(from_report(&r))
}
