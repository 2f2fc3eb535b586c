//! `tracestat`: where the time went across ranks of a unitrace run —
//! temporal breakdown, communication/compute overlap, idle gaps and their
//! causes, launch statistics, host ranges projected onto the GPU,
//! collectives matched across ranks, stragglers, kernel breakdown and a
//! rank x time heatmap (docs/tracestat.md).
//!
//! Pipeline: [`ingest`] (one streaming pass per file, files in parallel)
//! -> [`rank::summarize`] (per-rank tables, intervals dropped) ->
//! [`report::build`] (across ranks) -> writers ([`console`], [`csv_out`],
//! JSON, [`html`]). `--partial` stops after the per-rank step and
//! `--combine` starts at it.

pub mod args;
pub mod classify;
pub mod console;
pub mod csv_out;
pub mod event_index;
pub mod event_spool;
pub mod events;
pub mod html;
pub mod ingest;
pub mod partial;
pub mod rank;
pub mod rank_rows;
pub mod report;
pub mod sketch;
pub mod time;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Result};
use rayon::prelude::*;
use unitrace_core::atomic::{ensure_not_input, same_output_path, AtomicFile, OutputSet};
use unitrace_core::category_schema::CategorySchema;
use unitrace_core::cli::warn;
use unitrace_core::InputError;
use unitrace_render::table::TableFormat;

use args::Args;
use classify::Classifier;
use rank::{RankOptions, RankSummary};

pub const TOOL: &str = "tracestat";

/// Fine heatmap bins per rank (docs/tracestat.md#heatmap).
const HEAT_RESOLUTION: u32 = 1024;

/// A `--ranks` selection (the one grammar of every tool).
pub use unitrace_core::timeline::RankList as RankSet;

fn load_schema(path: &Path) -> Result<CategorySchema> {
    let bytes = std::fs::read(path).map_err(|e| InputError::io(path, &e))?;
    Ok(CategorySchema::from_json_bytes(path, &bytes)?)
}

/// Reads every trace (in parallel) into per-rank summaries, in input order.
pub fn summarize_files(
    inputs: &[PathBuf],
    schema: Option<&CategorySchema>,
    opts: &RankOptions,
    ranks: Option<&RankSet>,
) -> Result<Vec<RankSummary>> {
    let results: Vec<Result<Vec<RankSummary>, InputError>> = inputs
        .par_iter()
        .enumerate()
        .map(|(i, path)| {
            let path_rank = unitrace_core::timeline::rank::rank_from_path(path).map(|r| r.0);
            if let (Some(set), Some(r)) = (ranks, path_rank) {
                if !set.contains(r) {
                    return Ok(Vec::new());
                }
            }
            let traces = ingest::read_trace_file(path, i)?;
            let mut classifier = Classifier::new(schema);
            Ok(traces
                .into_iter()
                .filter(|t| match (ranks, t.rank) {
                    (Some(set), Some(r)) => set.contains(r),
                    _ => true,
                })
                .map(|t| rank::summarize(t, &mut classifier, opts))
                .collect())
        })
        .collect();
    let mut out = Vec::new();
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

/// One warning line for all implausible events, one per cut input.
fn warn_about_inputs(ranks: &[RankSummary]) {
    let total: u64 = ranks.iter().flat_map(|r| &r.implausible).map(|i| i.1).sum();
    if total > 0 {
        let mut kinds: Vec<(String, u64)> = Vec::new();
        for (k, n) in ranks.iter().flat_map(|r| &r.implausible) {
            match kinds.iter_mut().find(|x| &x.0 == k) {
                Some(x) => x.1 += n,
                None => kinds.push((k.clone(), *n)),
            }
        }
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let examples: Vec<&str> = ranks
            .iter()
            .flat_map(|r| &r.implausible_examples)
            .take(3)
            .map(String::as_str)
            .collect();
        warn(
            TOOL,
            format!(
                "{total} implausible event{} left out ({}); e.g. {}",
                if total == 1 { "" } else { "s" },
                kinds.join(", "),
                examples.join("; ")
            ),
        );
    }
    for r in ranks {
        if let Some(t) = &r.truncated {
            warn(TOOL, format!("{}: {t}", r.file));
        }
    }
    // Once per file (a merged file holds several ranks), in input order.
    let mut trailing: Vec<(usize, &str, u64)> = ranks
        .iter()
        .filter_map(|r| Some((r.input_index, r.file.as_str(), r.trailing_data_line?)))
        .collect();
    trailing.sort();
    trailing.dedup();
    for (_, file, line) in trailing {
        warn(
            TOOL,
            format!("{file}:{line}: data after the end of the trace; ignored"),
        );
    }
}

pub fn run(mut args: Args) -> Result<ExitCode> {
    // `--ranks 0 3 7 a.json b.json` hands the files to --ranks too (it takes
    // several values): what is not a rank list is an input.
    let (ranks, files): (Vec<String>, Vec<String>) =
        std::mem::take(&mut args.ranks).into_iter().partition(|v| {
            v.chars()
                .all(|c| c.is_ascii_digit() || c == '-' || c == ',' || c == ' ')
        });
    args.ranks = ranks;
    args.inputs.extend(files.into_iter().map(PathBuf::from));
    // The --tree depth attaches with `=` (docs/tracestat.md#usage), so
    // `--tree 2` is the default depth and an input `2`: when no such file
    // exists, say how to write it rather than only that the file is missing.
    if args.tree.is_some() {
        let number = |p: &PathBuf| {
            p.to_str()
                .is_some_and(|s| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
        };
        if let Some(p) = args.inputs.iter().find(|p| number(p) && !p.exists()) {
            bail!(
                "{}: no such file; a --tree depth attaches with `=`: --tree={}",
                p.display(),
                p.display()
            );
        }
    }
    if let Some(dir) = &args.result_dir {
        if args.combine {
            bail!("--result-dir: traces cannot be combined; give the partials");
        }
        args.inputs.extend(result_dir_traces(dir, &args.ranks)?);
    }
    // A launcher's task can get an empty block of files (`mpiexec -n 16`
    // over 10 files): its partial is empty rather than an error, so the
    // recipes of docs/tracestat.md#past-one-machine need no special case.
    if args.inputs.is_empty() && args.partial.is_none() {
        bail!("no input: give trace files, --result-dir DIR, or partials with --combine");
    }
    let short_kernel_ns = time::parse_duration(&args.short_kernel)
        .map_err(|e| anyhow::anyhow!("--short-kernel: {e}"))?;
    let rank_set = if args.ranks.is_empty() {
        None
    } else {
        Some(RankSet::parse(&args.ranks).map_err(|e| anyhow::anyhow!("--ranks: {e}"))?)
    };
    let schema = args.schema.as_deref().map(load_schema).transpose()?;

    // No output may overwrite an input, nor two outputs the same file.
    let mut inputs: Vec<&Path> = args.inputs.iter().map(PathBuf::as_path).collect();
    inputs.extend(args.schema.as_deref());
    let outputs: Vec<&Path> = [
        args.json.as_deref(),
        args.html.as_deref(),
        args.partial.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    for (i, o) in outputs.iter().enumerate() {
        ensure_not_input(o, &inputs)?;
        for p in &outputs[..i] {
            if same_output_path(o, p) {
                bail!("{}: given as two outputs", o.display());
            }
        }
    }
    let table_dirs = [
        ("csv", &args.csv, TableFormat::Csv),
        ("parquet", &args.parquet, TableFormat::Parquet),
    ];
    for (option, dir, format) in table_dirs {
        let Some(dir) = dir else { continue };
        for input in &inputs {
            if input.parent().is_some_and(|p| same_output_path(p, dir)) {
                // Table names are fixed; refuse only a real clash.
                for (name, _, _) in csv_out::tables(&empty_report()) {
                    if same_output_path(&dir.join(csv_out::file_name(name, format)), input) {
                        bail!(
                            "--{option} {}: would overwrite the input {}",
                            dir.display(),
                            input.display()
                        );
                    }
                }
            }
        }
    }

    if let Some(dir) = &args.events {
        events::check_out_dir(dir, &inputs)?;
    }

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.jobs.unwrap_or(0))
        .build()?;
    if let Some(dir) = &args.events {
        let plan = events::EventsPlan {
            out: dir,
            inputs: &args.inputs,
            schema: schema.as_ref(),
            schema_name: opts_schema_name(&args),
            ranks: rank_set.as_ref(),
            passes: events::Passes::One,
            spool_chunk: event_spool::SPOOL_CHUNK,
        };
        let stats = pool.install(|| events::export(&plan))?;
        if stats.dropped > 0 {
            warn(
                TOOL,
                format!(
                    "{} implausible event{} left out of {} (docs/tracestat.md#implausible-events)",
                    stats.dropped,
                    if stats.dropped == 1 { "" } else { "s" },
                    dir.display()
                ),
            );
        }
        // Alone, --events writes only the dataset: no report is computed.
        // Any report output (--parquet included) asks for the report too.
        if args.csv.is_none()
            && args.parquet.is_none()
            && args.json.is_none()
            && args.html.is_none()
        {
            if !args.quiet {
                println!(
                    "{}: {} rows in {} part{} of {} rank{} written, {} rank{} already complete",
                    dir.display(),
                    stats.rows,
                    stats.parts,
                    if stats.parts == 1 { "" } else { "s" },
                    stats.ranks_written,
                    if stats.ranks_written == 1 { "" } else { "s" },
                    stats.ranks_skipped,
                    if stats.ranks_skipped == 1 { "" } else { "s" },
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
    }
    let opts = RankOptions {
        short_kernel_ns,
        tree_depth: args.tree.unwrap_or(0),
        heat_resolution: HEAT_RESOLUTION,
        schema: args
            .schema
            .as_deref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned()),
    };

    if args.combine && (args.schema.is_some() || args.tree.is_some() || args.short_kernel != "10us")
    {
        bail!("--schema, --short-kernel and --tree are chosen when the partials are made, not at --combine");
    }
    let (ranks, opts) = if args.combine {
        let mut all = Vec::new();
        let mut first: Option<(RankOptions, PathBuf)> = None;
        for path in &args.inputs {
            let p = partial::read(path)?;
            match &first {
                None => first = Some((p.options.clone(), path.clone())),
                Some((o, f)) if *o != p.options => bail!(
                    "{}: made with other options than {} ({:?} against {:?})",
                    path.display(),
                    f.display(),
                    p.options,
                    o
                ),
                Some(_) => {}
            }
            all.extend(p.ranks.into_iter().filter(|r| match (&rank_set, r.rank) {
                (Some(set), Some(x)) => set.contains(x),
                _ => true,
            }));
        }
        let opts = first.map(|f| f.0).unwrap_or(opts);
        (all, opts)
    } else {
        let ranks = pool
            .install(|| summarize_files(&args.inputs, schema.as_ref(), &opts, rank_set.as_ref()))?;
        (ranks, opts)
    };
    warn_about_inputs(&ranks);
    check_duplicate_ranks(&ranks);

    if let Some(path) = &args.partial {
        let mut ranks = ranks;
        report::sort_ranks(&mut ranks);
        let p = partial::Partial {
            format: partial::FORMAT.to_string(),
            version: partial::VERSION,
            options: opts,
            ranks,
        };
        let mut f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
        serde_json::to_writer(&mut f, &p)?;
        f.write_all(b"\n")?;
        f.commit().map_err(|e| InputError::io(path, &e))?;
        return Ok(ExitCode::SUCCESS);
    }

    let report = report::build(ranks, opts, args.bins as usize);
    // Write every file first (temporary names), commit them together: the
    // set renames the report files and the table directories at once.
    let output_set = OutputSet::begin();
    let mut pending: Vec<(PathBuf, AtomicFile)> = Vec::new();
    if let Some(path) = &args.json {
        let mut f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
        serde_json::to_writer_pretty(&mut f, &report)?;
        f.write_all(b"\n")?;
        pending.push((path.clone(), f));
    }
    if let Some(path) = &args.html {
        let mut f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
        html::write(&mut f, &report)?;
        pending.push((path.clone(), f));
    }
    if let Some(dir) = &args.csv {
        csv_out::write_dir(dir, &report, TableFormat::Csv)?;
    }
    if let Some(dir) = &args.parquet {
        csv_out::write_dir(dir, &report, TableFormat::Parquet)?;
    }
    for (path, f) in pending {
        f.commit().map_err(|e| InputError::io(&path, &e))?;
    }
    output_set.commit()?;
    if !args.quiet {
        let stdout = std::io::stdout();
        let mut lock = stdout.lock();
        let written =
            console::write(&mut lock, &report, args.rank_rows.0).and_then(|_| lock.flush());
        match written {
            // `tracestat ... | head`: the reader has seen enough.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other?,
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The timelines of a result dir (docs/formats.md#result-dir-tree), those
/// of `ranks` only when given; a requested rank without one is a warning.
fn result_dir_traces(dir: &Path, ranks: &[String]) -> Result<Vec<PathBuf>> {
    use unitrace_core::result_dir::{parse_rank_list, ResultDir};
    let tree = ResultDir::open(dir).map_err(|e| anyhow::anyhow!("--result-dir: {e}"))?;
    for (path, problem) in &tree.unreadable {
        warn(TOOL, format!("{}: {problem}", path.display()));
    }
    let wanted = if ranks.is_empty() {
        None
    } else {
        Some(parse_rank_list(ranks).map_err(|e| anyhow::anyhow!("--ranks: {e}"))?)
    };
    let sel = tree.traces(wanted.as_deref());
    for r in &sel.missing_ranks {
        warn(TOOL, format!("{}: no trace of rank {r}", dir.display()));
    }
    if sel.files.is_empty() {
        bail!(
            "{}: no chrome_trace.json or chrome_trace.pftrace below it{}",
            dir.display(),
            if wanted.is_some() {
                " for these ranks"
            } else {
                ""
            }
        );
    }
    Ok(sel.files.into_iter().map(|f| f.path).collect())
}

fn opts_schema_name(args: &Args) -> Option<String> {
    args.schema
        .as_deref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
}

/// Two inputs with the same rank are both kept, with a warning. Files
/// without a rank are labelled by their input position, which partials
/// made of different files share: `--combine` warns about those too
/// (docs/tracestat.md#past-one-machine).
fn check_duplicate_ranks(ranks: &[RankSummary]) {
    let mut seen = std::collections::HashMap::new();
    for r in ranks {
        let label = r.label();
        if let Some(prev) = seen.insert(label.clone(), &r.file) {
            let what = if r.rank.is_some() {
                format!("rank {label}")
            } else {
                format!("rank {label} (a file without a rank, labelled by its input position)")
            };
            warn(
                TOOL,
                format!("{what} is in both {prev} and {}; both are kept", r.file),
            );
        }
    }
}

fn empty_report() -> report::Report {
    report::build(
        Vec::new(),
        RankOptions {
            short_kernel_ns: 0,
            tree_depth: 1,
            heat_resolution: 1,
            schema: None,
        },
        1,
    )
}
