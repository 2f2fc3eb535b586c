//! Rank traces through the `tracestat` library (docs/tracestat.md): per
//! category, per kernel, per host range, per collective type and per rank
//! (compute, communication and memory time).

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use tracestat::analyzers::breakdown::BreakdownRow;
use tracestat::analyzers::kernels::KernelRow;
use tracestat::analyzers::{self, RankOptions, Report, ReportOptions};
use unitrace_core::cli::warn;

use crate::model::{Item, Run, Section};

/// The trace files of one side: a file as it is; a directory's
/// `chrome_trace.*` of a result-dir tree, else its `*.json`, `*.json.gz`,
/// `*.pftrace`, `*.pftrace.gz` files (byte order of the names, so the run
/// is deterministic): `unitrace_core::timeline::trace_files`, whose walks
/// skip what is not a regular file or cannot be opened, with one warning
/// each (docs/robustness.md#walked-folders).
pub fn trace_files(path: &Path) -> Result<Vec<PathBuf>> {
    let found = unitrace_core::timeline::trace_files(path)?;
    for skipped in &found.skipped {
        warn(crate::TOOL, skipped);
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
        steps: Default::default(),
        what_if: Vec::new(),
        annotate: false,
        // The findings' savings come from the path's replays.
        no_critical_path: false,
    };
    let found = tracestat::summarize_files(&files, None, &opts, None)?;
    // A side whose traces yielded no event is an error, never a side that
    // measured nothing (docs/compare.md#inputs); an empty file among
    // others is left out with a warning, as tracestat does.
    tracestat::check_inputs(crate::TOOL, &found, files.len())?;
    let ranks = found.ranks;
    if ranks.is_empty() {
        bail!("{}: no rank in these traces", path.display());
    }
    // What tracestat warns about each file (data after a trace's end,
    // bytes after its gzip stream, ...), in its words.
    tracestat::warn_file_notes(crate::TOOL, &ranks);
    Ok(analyzers::build(
        ranks,
        opts,
        &ReportOptions {
            bins: 1,
            heat_rows: tracestat::analyzers::heatmap::MAX_HEAT_ROWS,
            align: tracestat::analyzers::clocks::Align::Collectives,
        },
    ))
}

/// A rank's compute, communication and memory time (tracestat's breakdown:
/// exclusive, a moment counts once, docs/tracestat.md#breakdown), one item
/// each, so a straggler shows as one rank's change
/// (docs/compare.md#items); a part the rank spent no time on is left out
/// (it shows as new or vanished when the other side has it).
fn rank_items(b: &BreakdownRow) -> Vec<Item> {
    let rank = if b.device.is_empty() || b.device == "all" {
        format!("rank {}", b.rank)
    } else {
        format!("rank {} {}", b.rank, b.device)
    };
    let context = [
        ("wall_us", b.wall_us),
        ("active_us", b.active_us),
        ("busy_us", b.busy_us),
        ("idle_us", b.idle_us),
        ("idle_between_us", b.idle_between_us),
    ];
    let item = |what: &str, time_us: f64, own: &[(&str, f64)]| {
        let mut item = Item::new(format!("{rank} {what}"), time_us);
        item.metrics = own
            .iter()
            .chain(&context)
            .map(|(n, v)| (n.to_string(), *v))
            .collect();
        item
    };
    [
        item(
            "compute",
            b.compute_us,
            &[
                ("pct_of_active", b.compute_active_pct),
                ("pct_of_wall", b.compute_pct),
            ],
        ),
        item(
            "communication",
            b.communication_us,
            &[
                ("pct_of_active", b.communication_active_pct),
                ("pct_of_wall", b.communication_pct),
                ("communication_total_us", b.communication_total_us),
                ("overlap_pct", b.overlap_pct),
                ("exposed_communication_us", b.exposed_communication_us),
            ],
        ),
        item(
            "memory",
            b.memory_us,
            &[
                ("pct_of_active", b.memory_active_pct),
                ("pct_of_wall", b.memory_pct),
            ],
        ),
    ]
    .into_iter()
    .filter(|i| i.time_us > 0.0)
    .collect()
}

/// The steps (tracestat's, docs/tracestat.md#steps), when the run has
/// some: `median step` (the job's: over the steps, the slowest rank's
/// length) and each rank's median step, so two runs are matched median
/// step against median step whatever their step ids (docs/compare.md#items).
fn step_items(r: &Report) -> Option<Vec<Item>> {
    let steps = &r.out.steps;
    let job = steps.step_time.as_ref()?;
    let mut whole = Item::new("median step", job.median_us);
    whole.metrics = vec![
        ("steps".into(), job.steps as f64),
        ("p90_us".into(), job.p90_us),
        ("max_us".into(), job.max_us),
    ];
    let mut items = vec![whole];
    for rank in steps.step_ranks.iter().filter(|s| s.steps > 0) {
        let mut item = Item::new(format!("rank {} median step", rank.rank), rank.median_us);
        item.metrics = vec![
            ("steps".into(), rank.steps as f64),
            ("p90_us".into(), rank.p90_us),
            ("mean_us".into(), rank.mean_us),
            ("max_us".into(), rank.max_us),
        ];
        items.push(item);
    }
    Some(items)
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
        .flat_map(rank_items)
        .collect();
    let findings = r
        .out
        .findings
        .findings
        .iter()
        .map(|f| crate::model::FindingItem {
            rule: f.rule.clone(),
            rank: f.rank.clone(),
            name: f.name.clone(),
            savings_us: f.savings_us,
            evidence: f.evidence.clone(),
        })
        .collect();
    let total_us = kernels.iter().map(|k| k.time_us).sum();
    let mut sections = vec![
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
    ];
    if let Some(items) = step_items(r) {
        sections.push(Section {
            name: "step",
            kernel_names: false,
            items,
        });
    }
    let mut run = Run::new(total_us, "kernel time, all ranks", sections);
    run.findings = Some(findings);
    run
}

pub fn read(path: &Path) -> Result<Run> {
    let r = report(path)?;
    // Events but no device work is a profile taken without the device
    // activity: its kernel time is not 0, it was not recorded, and a
    // verdict against it would read as everything vanished
    // (docs/compare.md#inputs).
    if !r.out.breakdown.breakdown.iter().any(|b| b.busy_us > 0.0) {
        bail!(
            "{}: no device work (no kernel, copy or fill) in these traces: nothing to compare \
             (was the device activity recorded? torch.profiler records it with \
             ProfilerActivity.XPU or CUDA)",
            path.display()
        );
    }
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
