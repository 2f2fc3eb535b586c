//! `mergetrace`: merge per-rank unitrace Chrome/Perfetto traces
//! (drop-in for `tracemerge/mergetrace.py`, docs/compatibility.md#mergetrace), streaming, with
//! pid remapping, alignment, filters and GPU-time statistics.

pub mod args;
pub mod input;
pub mod merge;
pub mod pfmerge;
pub mod select;
pub mod stats;

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use regex::Regex;
use unitrace_core::atomic::{
    ensure_not_input, ensure_replaceable, same_output_path, AtomicFile, OutputKind, OutputSet,
};
use unitrace_core::category_schema::CategorySchema;
use unitrace_core::cli::{escape_controls, escape_lines, warn};
use unitrace_core::result_dir::ResultDir;
use unitrace_core::InputError;
use unitrace_render::table::TableFormat;

use args::{Align, Args};
use merge::{InputPlan, MergeOptions, Merger};
use select::{rank_from_path, read_head, RankSet, Window};
use unitrace_core::trace::decimal::Decimal;

pub const TOOL: &str = "mergetrace";

/// Checks every input before anything is written: a missing or unreadable
/// input is an error (the original fails halfway, docs/compatibility.md#mergetrace-4); a
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

/// Python's `repr` of a list of path strings (the mixed-formats message
/// quotes the inputs as mergetrace.py prints its lists).
fn py_list(paths: &[&PathBuf]) -> String {
    let items: Vec<String> = paths
        .iter()
        .map(|p| {
            let s = p.to_string_lossy();
            let quote = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            let mut out = String::from(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
            out
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// `str(Path(dir))` as Python prints it: no trailing slash, no `./`.
fn py_path(dir: &Path) -> String {
    use std::path::Component;
    let comps: Vec<Component> = dir.components().collect();
    let kept: PathBuf = if comps.iter().all(|c| matches!(c, Component::CurDir)) {
        PathBuf::from(".")
    } else {
        comps
            .into_iter()
            .filter(|c| !matches!(c, Component::CurDir))
            .collect()
    };
    kept.display().to_string()
}

fn is_pftrace_name(p: &Path) -> bool {
    let name = p.as_os_str().as_encoded_bytes();
    name.ends_with(b".pftrace") || name.ends_with(b".pftrace.gz")
}

/// A `.pftrace` input: by its name as mergetrace.py routes, or, when
/// gzipped, by its inflated content (docs/mergetrace.md#usage).
fn is_pftrace_input(p: &Path) -> bool {
    is_pftrace_name(p) || (input::is_gzip_file(p) && input::inspect(p).is_ok_and(|i| i.pftrace))
}

/// The inputs: the given files, or the traces found under `--result-dir`
/// (`Err(code)`: a message was printed, exit with it).
fn find_inputs(args: &Args, ranks: Option<&[u32]>) -> Result<Result<Vec<PathBuf>, ExitCode>> {
    let Some(dir) = &args.result_dir else {
        return Ok(Ok(args.inputs.clone()));
    };
    let tree = ResultDir::open(dir).map_err(|e| InputError::at_file(dir, e.to_string()))?;
    for (folder, e) in &tree.unreadable {
        // The walk's words end in "; skipped" or "; followed"
        // (docs/robustness.md#walked-folders).
        warn(TOOL, format!("{}: {e}", folder.display()));
    }
    let sel = tree.traces(ranks);
    if sel.files.is_empty() {
        // mergetrace.py's message and exit code.
        println!("Trace file is missing under {}", py_path(dir));
        return Ok(Err(ExitCode::from(1)));
    }
    for r in &sel.missing_ranks {
        // Upstream skips such a rank silently.
        warn(
            TOOL,
            format!("{}: no trace of rank {r}; merged without it", dir.display()),
        );
    }
    Ok(Ok(sel.files.into_iter().map(|f| f.path).collect()))
}

pub fn run(mut args: Args) -> Result<ExitCode> {
    let ranks = args
        .rank_list()
        .map_err(|e| anyhow::anyhow!("--ranks: {e}"))?;
    let given = match find_inputs(&args, ranks.as_deref())? {
        Ok(files) => files,
        Err(code) => return Ok(code),
    };
    // Route by format as mergetrace.py does: any `.pftrace` input or output
    // means a protobuf merge, and every input must then be one.
    let pf: Vec<&PathBuf> = given.iter().filter(|p| is_pftrace_input(p)).collect();
    let pftrace = !pf.is_empty() || is_pftrace_name(&args.output);
    if pftrace && pf.len() != given.len() {
        let others: Vec<&PathBuf> = given.iter().filter(|p| !is_pftrace_input(p)).collect();
        println!(
            "[ERROR] cannot merge mixed trace formats; got .pftrace inputs {} and non-perfetto \
             inputs {}. Merge each format separately.",
            py_list(&pf),
            py_list(&others)
        );
        return Ok(ExitCode::from(1));
    }
    if pftrace && !args.output_given {
        // The original keeps `unitrace.all.json` and writes protobuf into it
        // (docs/compatibility.md#mergetrace-pftrace).
        args.output = PathBuf::from("unitrace.all.pftrace");
    }
    let inputs = check_inputs(&given)?;
    let mut input_refs: Vec<&Path> = inputs.iter().map(PathBuf::as_path).collect();
    // Read before anything is written: a bad schema leaves no output.
    let schema = args.schema.as_deref().map(load_schema).transpose()?;
    input_refs.extend(args.schema.as_deref());
    ensure_not_input(&args.output, &input_refs)?;
    ensure_replaceable(&args.output, OutputKind::Trace)?;
    if let Some(csv) = args.stats_csv() {
        ensure_not_input(csv, &input_refs)?;
        ensure_replaceable(csv, OutputKind::Table)?;
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
    // With --result-dir the ranks chose the files already.
    let rank_set = match (&args.result_dir, ranks) {
        (None, Some(r)) => Some(RankSet::new(r)),
        _ => None,
    };
    let window = args.time_window.as_deref().map(Window::parse).transpose()?;

    let (plans, window) = plan_inputs(&args, &inputs, rank_set.as_ref(), window)?;

    let opts = MergeOptions {
        remap_pids: args.remap_pids,
        filter,
        window,
        stats: args
            .stats
            .is_some()
            .then(|| stats::StatsPlan::new(schema, args.schema.as_deref())),
        skip_invalid: args.skip_invalid,
        max_event_bytes: usize::from(args.max_event_mib) << 20,
    };
    let total: u64 = plans
        .iter()
        .map(|p| std::fs::metadata(&p.path).map_or(0, |m| m.len()))
        .sum();
    let progress = unitrace_core::progress::bytes_bar(total);
    // The trace and `--stats` CSV appear together, once both are written
    // (docs/robustness.md#outputs).
    let outputs = OutputSet::begin();
    let out = AtomicFile::create(&args.output).map_err(|e| InputError::io(&args.output, &e))?;
    // gzip when the output's name ends in `.gz` (docs/mergetrace.md#usage).
    let out = input::Output::new(out, &args.output);
    let (out, outcome) = if pftrace {
        pfmerge::merge(&plans, &opts, out, progress.as_ref())
            .map_err(|e| name_output_on_write_error(e, &args.output))?
    } else {
        let merger = Merger::new(&plans, &opts, out, progress.clone())
            .map_err(|e| e.context(args.output.display().to_string()))?;
        merger
            .run()
            .map_err(|e| name_output_on_write_error(e, &args.output))?
    };
    let out = out
        .finish()
        .map_err(|e| name_output_on_write_error(e.into(), &args.output))?;
    if let Some(pb) = progress {
        pb.finish_and_clear();
    }
    let merge_stats = opts
        .stats
        .as_ref()
        .map(|plan| stats::MergeStats::build(outcome.ranks, plan));
    if let (Some(path), Some(merge_stats)) = (args.stats_csv(), &merge_stats) {
        write_stats_table(path, merge_stats)?;
    }
    out.commit().map_err(|e| InputError::io(&args.output, &e))?;
    outputs.commit()?;
    // The newest mergetrace.py's success line (N = inputs found, skipped
    // ones included); its .pftrace merge prints nothing
    // (docs/compatibility.md#mergetrace-upstream-newest).
    let success = (!pftrace).then(|| {
        format!(
            "Successfully merged {} files into {}",
            given.len(),
            escape_controls(&args.output.display().to_string())
        )
    });
    print_results(merge_stats.as_ref(), success)?;
    Ok(ExitCode::SUCCESS)
}

/// stdout once the outputs are in place: the `--stats` report, then the
/// success line. A reader that stopped early (`mergetrace ... | head`)
/// has seen enough: the outputs are written, so that is no error.
fn print_results(merge_stats: Option<&stats::MergeStats>, success: Option<String>) -> Result<()> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    let mut print = || -> Result<()> {
        if let Some(merge_stats) = merge_stats {
            // Kernel and range names are input: no raw control byte on the
            // console (docs/robustness.md#messages).
            let mut report = Vec::new();
            stats::write_report(&mut report, merge_stats, 20)?;
            lock.write_all(escape_lines(&String::from_utf8_lossy(&report)).as_bytes())?;
        }
        if let Some(line) = &success {
            writeln!(lock, "{line}")?;
        }
        lock.flush()?;
        Ok(())
    };
    match print() {
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            Ok(())
        }
        other => other,
    }
}

/// The `--stats FILE.csv|FILE.parquet` table.
fn write_stats_table(path: &Path, merge_stats: &stats::MergeStats) -> Result<()> {
    let f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
    let f = stats::write_table(f, TableFormat::of_path(path), merge_stats)?;
    f.commit().map_err(|e| InputError::io(path, &e))?;
    Ok(())
}

/// One trace of [`merge_in_memory`].
#[derive(Debug, Clone)]
pub struct MemoryInput {
    pub path: PathBuf,
    pub rank: Option<u32>,
    /// Query appended to this input's metric links (`rank=R`, …;
    /// [`merge::InputPlan::link_tag`]).
    pub link_tag: Option<String>,
}

/// The merge `mergetrace -o OUT INPUTS...` writes (default options: no pid
/// remapping, inputs in the given order; `.pftrace` when every input is
/// one, else JSON), built in memory for uniview's `--result-dir`
/// (docs/uniview.md#result-dir); every metric link of an input with a
/// `link_tag` gets it as a query. The caller bounds the input size. Mixed
/// formats are an error.
pub fn merge_in_memory(inputs: &[MemoryInput]) -> Result<Vec<u8>> {
    let pf = inputs.iter().filter(|i| is_pftrace_input(&i.path)).count();
    if pf != 0 && pf != inputs.len() {
        anyhow::bail!("cannot merge JSON and .pftrace traces together");
    }
    let mut plans: Vec<InputPlan> = Vec::with_capacity(inputs.len());
    for i in inputs {
        let info = input::inspect(&i.path)?;
        plans.push(InputPlan {
            path: i.path.clone(),
            rank: i.rank.or(info.rank),
            rank_from_name: false,
            shift: None,
            kineto: info.kineto,
            clock_base: info.clock_base,
            link_tag: i.link_tag.clone(),
        });
    }
    let shifts = kineto_clock_shifts(&plans);
    for (plan, k) in plans.iter_mut().zip(shifts) {
        plan.shift = k;
    }
    let opts = MergeOptions {
        remap_pids: false,
        filter: None,
        window: None,
        stats: None,
        skip_invalid: false,
        max_event_bytes: 256 << 20,
    };
    let capacity: u64 = inputs
        .iter()
        .map(|i| std::fs::metadata(&i.path).map_or(0, |m| m.len()))
        .sum();
    let out = Vec::with_capacity(usize::try_from(capacity).unwrap_or(0) + 4096);
    let (out, _) = if pf != 0 {
        pfmerge::merge(&plans, &opts, out, None)?
    } else {
        Merger::new(&plans, &opts, out, None)?.run()?
    };
    Ok(out)
}

/// Plans each input: its rank (file name, `RANK` label or Kineto's
/// `distributedInfo`), what it is by content, its time shift (Kineto clock
/// bases, `--align start`), and the window on the merged clock. Inputs
/// `--ranks` leaves out are dropped here.
fn plan_inputs(
    args: &Args,
    inputs: &[PathBuf],
    rank_set: Option<&RankSet>,
    window: Option<Window>,
) -> Result<(Vec<InputPlan>, Option<Window>)> {
    // Plan each input: rank, and the head (first timestamp) when alignment
    // or a window needs it.
    let need_head = args.align == Align::Start || window.is_some();
    let mut plans = Vec::with_capacity(inputs.len());
    let mut heads = Vec::new();
    for path in inputs {
        let name_rank = rank_from_path(path);
        // What the file is by content: gzip, a Kineto trace (its rank and
        // clock base), docs/mergetrace.md#kineto.
        let info = match input::inspect(path) {
            Ok(info) => info,
            // A gzip file whose content cannot even be opened: with
            // --skip-invalid it is skipped like any invalid input
            // (docs/mergetrace.md#usage).
            Err(e) if args.skip_invalid => {
                warn(TOOL, format!("{e}; skipping this file"));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        for w in &info.warnings {
            warn(TOOL, format!("{}: {w}", path.display()));
        }
        let head =
            if need_head || (rank_set.is_some() && name_rank.is_none() && info.rank.is_none()) {
                Some(read_head(path))
            } else {
                None
            };
        let rank = name_rank
            .or(head.as_ref().and_then(|h| h.rank_label))
            .or(info.rank);
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
            kineto: info.kineto,
            clock_base: info.clock_base,
            link_tag: None,
        });
        heads.push(head.and_then(|h| h.first_ts));
    }
    // Kineto inputs count from their own clock base: each is shifted onto
    // the earliest base (docs/formats.md#kineto-json-time).
    let clock_shifts = kineto_clock_shifts(&plans);
    for ((plan, first), k) in plans.iter_mut().zip(heads.iter_mut()).zip(&clock_shifts) {
        if let Some(k) = k {
            plan.shift = Some(*k);
            *first = first.and_then(|f| f.checked_sub(*k));
        }
    }
    let origin = heads.iter().flatten().min().copied();
    if args.align == Align::Start {
        for ((plan, first), k) in plans.iter_mut().zip(&heads).zip(&clock_shifts) {
            // `first` is on the common clock; the shift applies to the
            // file's own times.
            let own_first = first.and_then(|f| match k {
                Some(k) => f.checked_add(*k),
                None => Some(f),
            });
            match (own_first, origin) {
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

    Ok((plans, window))
}

/// The shift (µs, subtracted from `ts`) that puts each Kineto input with a
/// clock base onto the earliest base (docs/formats.md#kineto-json-time).
fn kineto_clock_shifts(plans: &[InputPlan]) -> Vec<Option<Decimal>> {
    let bases: Vec<Option<i64>> = plans.iter().map(InputPlan::kineto_clock_base).collect();
    unitrace_core::trace::merged_input::clock_shifts(&bases)
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
    let bytes = unitrace_core::whole_file::read_capped(
        path,
        unitrace_core::whole_file::MAX_SCHEMA_BYTES,
        "compiled category schema",
    )?;
    Ok(CategorySchema::from_json_bytes(path, &bytes)?)
}
