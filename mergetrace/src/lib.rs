//! `mergetrace`: merge per-rank unitrace Chrome/Perfetto traces
//! (drop-in for `tracemerge/mergetrace.py`, scripts.md 7), streaming, with
//! pid remapping, alignment, filters and GPU-time statistics.

pub mod args;
pub mod fasthash;
pub mod merge;
pub mod select;
pub mod stats;

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use regex::Regex;
use unitrace_core::atomic::{ensure_not_input, same_output_path, AtomicFile, OutputSet};
use unitrace_core::category_schema::CategorySchema;
use unitrace_core::cli::warn;
use unitrace_core::InputError;

use args::{Align, Args};
use merge::{InputPlan, MergeOptions, Merger};
use select::{rank_from_path, read_head, RankSet, Window};

pub const TOOL: &str = "mergetrace";

/// Checks every input before anything is written: a missing or unreadable
/// input is an error (the original fails halfway, scripts.md 7 quirk 4); a
/// path given twice is merged once, with a warning.
fn check_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut seen: HashSet<(u64, u64)> = HashSet::new();
    let mut kept = Vec::with_capacity(inputs.len());
    for path in inputs {
        let meta = std::fs::metadata(path).map_err(|e| InputError::io(path, &e))?;
        if meta.is_dir() {
            return Err(InputError::at_file(path, "is a directory, not a trace file").into());
        }
        std::fs::File::open(path).map_err(|e| InputError::io(path, &e))?;
        #[cfg(unix)]
        let key = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::fs::canonicalize(path)
                .unwrap_or_else(|_| path.clone())
                .hash(&mut h);
            (h.finish(), 0)
        };
        if !seen.insert(key) {
            warn(
                TOOL,
                format!("{}: given more than once; merged once", path.display()),
            );
            continue;
        }
        kept.push(path.clone());
    }
    Ok(kept)
}

pub fn run(args: Args) -> Result<ExitCode> {
    let inputs = check_inputs(&args.inputs)?;
    let mut input_refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    // Read before anything is written: a bad schema leaves no output.
    let schema = args.schema.as_deref().map(load_schema).transpose()?;
    input_refs.extend(args.schema.as_deref());
    ensure_not_input(&args.output, &input_refs)?;
    if let Some(csv) = args.stats_csv() {
        ensure_not_input(csv, &input_refs)?;
        if same_output_path(csv, &args.output) {
            anyhow::bail!("--stats {}: same file as the merged trace", csv.display());
        }
    }
    let filter = args
        .filter
        .as_deref()
        .map(Regex::new)
        .transpose()
        .context("--filter")?;
    let rank_set = args.ranks.as_deref().map(RankSet::parse).transpose()?;
    let window = args.time_window.as_deref().map(Window::parse).transpose()?;

    // Plan each input: rank, and the head (first timestamp) when alignment
    // or a window needs it.
    let need_head = args.align == Align::Start || window.is_some();
    let mut plans = Vec::with_capacity(inputs.len());
    let mut heads = Vec::new();
    for path in &inputs {
        let name_rank = rank_from_path(path);
        let head = if need_head || (rank_set.is_some() && name_rank.is_none()) {
            Some(read_head(path))
        } else {
            None
        };
        let rank = name_rank.or(head.as_ref().and_then(|h| h.rank_label));
        if let Some(set) = &rank_set {
            match rank {
                Some(r) if set.contains(r) => {}
                Some(_) => continue,
                None => {
                    warn(
                        TOOL,
                        format!(
                            "{}: cannot tell its rank (no APP.PID.RANK.json name, no RANK label); \
                             left out by --ranks",
                            path.display()
                        ),
                    );
                    continue;
                }
            }
        }
        plans.push(InputPlan {
            path: path.clone(),
            rank,
            rank_from_name: name_rank.is_some(),
            shift: None,
        });
        heads.push(head.and_then(|h| h.first_ts));
    }
    let origin = heads.iter().flatten().min().copied();
    if args.align == Align::Start {
        for (plan, first) in plans.iter_mut().zip(&heads) {
            match (first, origin) {
                (Some(first), Some(origin)) => plan.shift = first.checked_sub(origin),
                _ => warn(
                    TOOL,
                    format!(
                        "{}: no timestamp found at its start; not aligned",
                        plan.path.display()
                    ),
                ),
            }
        }
    }
    let window = match (window, origin) {
        (Some(w), Some(o)) => Some(w.absolute(o)),
        (Some(w), None) => Some(w),
        (None, _) => None,
    };

    let opts = MergeOptions {
        remap_pids: args.remap_pids,
        filter,
        window,
        stats: args.stats.is_some(),
        skip_invalid: args.skip_invalid,
        max_event_bytes: args.max_event_mib.max(1) << 20,
    };
    let progress = std::io::stderr().is_terminal().then(|| {
        let total: u64 = plans
            .iter()
            .map(|p| std::fs::metadata(&p.path).map_or(0, |m| m.len()))
            .sum();
        let pb = indicatif::ProgressBar::new(total);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb
    });
    // The trace and `--stats` CSV appear together, once both are written
    // (docs/robustness.md#outputs).
    let outputs = OutputSet::begin();
    let out = AtomicFile::create(&args.output).map_err(|e| InputError::io(&args.output, &e))?;
    let merger = Merger::new(&plans, &opts, out, progress.clone())
        .map_err(|e| e.context(args.output.display().to_string()))?;
    let (out, mut outcome) = merger
        .run()
        .map_err(|e| name_output_on_write_error(e, &args.output))?;
    if let Some(pb) = progress {
        pb.finish_and_clear();
    }
    if let Some(schema) = &schema {
        stats::apply_schema(&mut outcome.ranks, schema);
    }
    if let Some(csv) = args.stats_csv() {
        let mut f = AtomicFile::create(csv).map_err(|e| InputError::io(csv, &e))?;
        stats::write_csv(&mut f, &outcome.ranks)?;
        f.commit().map_err(|e| InputError::io(csv, &e))?;
    }
    out.commit().map_err(|e| InputError::io(&args.output, &e))?;
    outputs.commit()?;
    if opts.stats {
        let stdout = std::io::stdout();
        let mut lock = stdout.lock();
        stats::write_report(&mut lock, &outcome.ranks, 20)?;
        lock.flush()?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Input errors of the merge name their input; a bare I/O error can only
/// come from writing the output (e.g. a full disk): name the output, never
/// its temporary file.
fn name_output_on_write_error(e: anyhow::Error, output: &Path) -> anyhow::Error {
    if e.downcast_ref::<std::io::Error>().is_some() {
        e.context(format!("{}: cannot write", output.display()))
    } else {
        e
    }
}

/// Reads a compiled category schema (`--schema`).
fn load_schema(path: &Path) -> Result<CategorySchema> {
    let bytes = unitrace_core::error::read_capped(path, unitrace_core::error::caps::SCHEMA_BYTES)
        .map_err(|e| InputError::io(path, &e))?;
    Ok(CategorySchema::from_json_bytes(path, &bytes)?)
}
