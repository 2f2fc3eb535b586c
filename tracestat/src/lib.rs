//! `tracestat`: where the time went across ranks of a unitrace or PyTorch
//! profiler run — temporal breakdown, communication/compute overlap, idle
//! gaps and their causes, launch statistics, host ranges projected onto
//! the device, collectives matched across ranks, stragglers, kernel
//! breakdown and a rank x time heatmap (docs/tracestat.md).
//!
//! Pipeline: [`plan`] (the command line, checked once) -> [`ingest`] (one
//! streaming pass per file through the trace source, files in parallel)
//! -> [`rank_model::summarize`] (each rank prepared once, observed by every
//! analyzer, intervals dropped) -> [`analyzers::build`] (across ranks) ->
//! the sections of the table model, written by [`console`], the table
//! files and [`html`]; JSON is the report itself. `--partial` stops after
//! the per-rank step and `--combine` starts at it.

pub mod analyzers;
pub mod annotate;
pub mod args;
pub mod classify;
pub mod console;
pub mod event_index;
pub mod event_spool;
pub mod events;
pub mod figures;
pub mod html;
pub mod ingest;
pub mod labels;
pub mod memory_budget;
pub mod partial;
pub mod plan;
pub mod rank_model;
pub mod rank_rows;
pub mod search;
pub mod sketch;
pub mod step_windows;
pub mod time;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Result};
use rayon::prelude::*;
use unitrace_core::atomic::{AtomicFile, OutputSet};
use unitrace_core::category_schema::CategorySchema;
use unitrace_core::cli::warn;
use unitrace_core::timeline::rank::rank_from_path;
use unitrace_core::InputError;
use unitrace_render::sections::Section;

use analyzers::{RankOptions, RankSummary, Report, ReportOptions, Screen};
use args::Args;
use classify::Classifier;
use plan::{Plan, Source};

pub const TOOL: &str = "tracestat";

/// A `--ranks` selection (the one grammar of every tool).
pub use unitrace_core::timeline::RankList as RankSet;

/// What reading the traces found.
#[derive(Debug, Default)]
pub struct Summaries {
    /// The ranks kept (of the `--ranks` selection), in input order.
    pub ranks: Vec<RankSummary>,
    /// Every rank the inputs hold, kept or not.
    pub seen: std::collections::BTreeSet<u32>,
    /// Inputs without a single event, and why
    /// ([`ingest::TraceFile::no_events`]).
    pub empty: Vec<(PathBuf, String)>,
}

/// Reads every trace (in parallel) into per-rank summaries, in input order.
pub fn summarize_files(
    inputs: &[PathBuf],
    schema: Option<&CategorySchema>,
    opts: &RankOptions,
    ranks: Option<&RankSet>,
) -> Result<Summaries> {
    type FileResult = Result<(Vec<RankSummary>, Vec<u32>, Option<String>), InputError>;
    let results: Vec<FileResult> = inputs
        .par_iter()
        .enumerate()
        .map(|(i, path)| {
            let path_rank = rank_from_path(path).map(|r| r.0);
            if let (Some(set), Some(r)) = (ranks, path_rank) {
                if !set.contains(r) {
                    return Ok((Vec::new(), vec![r], None));
                }
            }
            let file = ingest::read_trace_file(path, i)?;
            let (traces, empty) = (file.ranks, file.no_events);
            let seen = traces.iter().filter_map(|t| t.rank).collect();
            let mut classifier = Classifier::new(schema);
            let kept = traces
                .into_iter()
                .filter(|t| match (ranks, t.rank) {
                    (Some(set), Some(r)) => set.contains(r),
                    _ => true,
                })
                .map(|t| analyzers::summarize(t, &mut classifier, opts))
                .collect();
            give_back_freed_pages();
            Ok((kept, seen, empty))
        })
        .collect();
    let mut out = Summaries::default();
    for (path, r) in inputs.iter().zip(results) {
        let (kept, seen, empty) = r?;
        out.ranks.extend(kept);
        out.seen.extend(seen);
        if let Some(why) = empty {
            out.empty.push((path.clone(), why));
        }
    }
    Ok(out)
}

/// Warns (as `tool`) about the inputs without events, which are left out;
/// an error when no input has any, so that nothing is ever reported as
/// measured from a trace that yielded no event (docs/tracestat.md#inputs).
/// `inputs`: how many files were read.
pub fn check_inputs(tool: &str, s: &Summaries, inputs: usize) -> Result<()> {
    check_empty_inputs(tool, &s.empty, inputs)
}

/// [`check_inputs`] of the inputs `empty` (path, why) among `inputs`.
pub fn check_empty_inputs(tool: &str, empty: &[(PathBuf, String)], inputs: usize) -> Result<()> {
    if !empty.is_empty() && empty.len() == inputs {
        match empty {
            [(one, why)] => bail!("{}: {why}", one.display()),
            many => bail!(
                "no trace events in any of the {} inputs, e.g. {}: {}",
                many.len(),
                many[0].0.display(),
                many[0].1
            ),
        }
    }
    for (path, why) in empty {
        warn(tool, format!("{}: {why}; left out", path.display()));
    }
    Ok(())
}

/// `--ranks` that no input holds: an error when none of them is there, a
/// warning for those missing otherwise.
fn check_ranks(s: &Summaries, wanted: Option<&RankSet>) -> Result<()> {
    let Some(wanted) = wanted else {
        return Ok(());
    };
    let missing: Vec<u32> = wanted
        .ranks()
        .filter(|r| !s.seen.contains(r))
        .take(1000)
        .collect();
    let found = || {
        let list: Vec<String> = s.seen.iter().take(16).map(u32::to_string).collect();
        let more = if s.seen.len() > 16 { " ..." } else { "" };
        format!("the inputs hold rank(s) {}{more}", list.join(" "))
    };
    if s.ranks.is_empty() && !s.seen.is_empty() {
        bail!("--ranks: no input holds these ranks ({})", found());
    }
    if !missing.is_empty() && !s.seen.is_empty() {
        let list: Vec<String> = missing.iter().take(16).map(u32::to_string).collect();
        let more = if missing.len() > 16 { " ..." } else { "" };
        warn(
            TOOL,
            format!("--ranks: no input holds rank(s) {}{more}", list.join(" ")),
        );
    }
    Ok(())
}

/// One warning line for all implausible events, one per cut input.
fn warn_about_inputs(ranks: &[RankSummary]) {
    fn left_out(r: &RankSummary) -> &analyzers::inputs::LeftOut {
        &r.parts.inputs
    }
    let total: u64 = ranks
        .iter()
        .flat_map(|r| &left_out(r).implausible)
        .map(|i| i.1)
        .sum();
    if total > 0 {
        let mut kinds: Vec<(String, u64)> = Vec::new();
        for (k, n) in ranks.iter().flat_map(|r| &left_out(r).implausible) {
            match kinds.iter_mut().find(|x| &x.0 == k) {
                Some(x) => x.1 += n,
                None => kinds.push((k.clone(), *n)),
            }
        }
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let examples: Vec<&str> = ranks
            .iter()
            .flat_map(|r| &left_out(r).implausible_examples)
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
    warn_file_notes(TOOL, ranks);
}

/// The warnings about each file's recoverable damage, by `tool`: data
/// after a trace's end (ignored), bytes after its gzip stream, an
/// unusable Kineto clock base or rank; once per file (a merged file holds
/// several ranks), in input order.
pub fn warn_file_notes(tool: &str, ranks: &[RankSummary]) {
    let mut files: Vec<&RankSummary> = ranks.iter().collect();
    files.sort_by_key(|r| r.input_index);
    let mut said = std::collections::HashSet::new();
    for r in files {
        let file = r.file.as_str();
        let trailing = r
            .trailing_data_line
            .map(|line| format!("{file}:{line}: data after the end of the trace; ignored"));
        let others = r.warnings.iter().map(|w| format!("{file}: {w}"));
        for line in trailing.into_iter().chain(others) {
            if said.insert((r.input_index, line.clone())) {
                warn(tool, line);
            }
        }
    }
}

/// Without `--jobs`: fewer files read at once than the cores when that
/// many would not fit in half the available memory, with a warning
/// (docs/tracestat.md#scale).
fn memory_capped_jobs(plan: &plan::Plan) -> Option<usize> {
    let Source::Traces(paths) = &plan.source else {
        return None;
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (jobs, held, available) = memory_budget::capped_jobs(cores, paths)?;
    warn(
        TOOL,
        format!(
            "reading {jobs} files at a time, not one per core ({cores}): each holds up to about \
             {} MB while it is read and {} MB of memory are available (--jobs N sets it; \
             docs/tracestat.md#scale)",
            held >> 20,
            available >> 20
        ),
    );
    Some(jobs)
}

/// The tool, as its `main` runs it once per process: the report is not
/// freed at the end (the process exits right after).
pub fn run(args: Args) -> Result<ExitCode> {
    let plan = plan::plan(args)?;
    // The process's one pool, of `--jobs` threads, reads the ranks and
    // solves the steps across ranks. The cross-rank part is driven from
    // this thread, not from a worker: from a worker, its allocations went
    // to the arena glibc gives that thread, among the freed pages of the
    // ranks it read, and the peak was 15 MB higher on 8 x 500 MB
    // (docs/tracestat.md#scale). A pool set up earlier in the process
    // (the tool sets up none) would be kept.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(plan.jobs.or_else(|| memory_capped_jobs(&plan)).unwrap_or(0))
        .build_global();
    if let Some(dir) = &plan.outputs.events {
        let dataset_only = !plan.outputs.wants_report();
        export_events(&plan, dir, dataset_only)?;
        // Alone, --events writes only the dataset: no report is computed.
        if dataset_only {
            return Ok(ExitCode::SUCCESS);
        }
    }
    let (mut ranks, options) = match &plan.source {
        Source::Partials(paths) => combine(paths, &plan)?,
        Source::Traces(paths) => {
            let schema = plan.schema.as_ref().map(|(_, s)| s);
            let found = summarize_files(paths, schema, &plan.rank_options, plan.ranks.as_ref())?;
            check_inputs(TOOL, &found, paths.len())?;
            check_ranks(&found, plan.ranks.as_ref())?;
            (found.ranks, plan.rank_options.clone())
        }
    };
    warn_about_inputs(&ranks);
    warn_duplicate_ranks(TOOL, &ranks);
    if let Some(path) = &plan.outputs.partial {
        write_partial(path, ranks, options)?;
        return Ok(ExitCode::SUCCESS);
    }
    let marks = plan
        .outputs
        .annotate
        .is_some()
        .then(|| annotate::collect(&mut ranks));
    let report = analyzers::build(ranks, options, &plan.report);
    if let Some(why) = &report.out.critical_path.spill_error {
        bail!("the critical path's steps could not be read back: {why}");
    }
    for rule in &report.out.critical_path.unmatched_rules {
        let why = analyzers::critical_path::UNMATCHED;
        warn(TOOL, format!("--what-if {rule}: {why}"));
    }
    give_back_freed_pages();
    write_report(&plan, &report, marks.as_deref())?;
    // The process ends here: its memory goes back whole, so the report's
    // many small allocations (a path row holds three shared labels) are
    // not freed one by one first.
    std::mem::forget(report);
    Ok(ExitCode::SUCCESS)
}

/// `--events DIR`: the dataset (docs/tracestat.md#events).
fn export_events(plan: &Plan, dir: &Path, dataset_only: bool) -> Result<()> {
    let Source::Traces(inputs) = &plan.source else {
        bail!("--events reads traces, not partials");
    };
    let events_plan = events::EventsPlan {
        out: dir,
        inputs,
        schema: plan.schema.as_ref().map(|(_, s)| s),
        schema_name: plan.rank_options.schema.clone(),
        ranks: plan.ranks.as_ref(),
        passes: events::Passes::One,
        spool_chunk: event_spool::SPOOL_CHUNK,
        warn_cuts: dataset_only,
    };
    let stats = events::export(&events_plan)?;
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
    if dataset_only && plan.outputs.console.is_some() {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        println!(
            "{}: {} rows in {} part{} of {} rank{} written, {} rank{} already complete",
            dir.display(),
            stats.rows,
            stats.parts,
            s(stats.parts as usize),
            stats.ranks_written,
            s(stats.ranks_written as usize),
            stats.ranks_skipped,
            s(stats.ranks_skipped as usize),
        );
    }
    Ok(())
}

/// `--combine`: the partials' ranks, made with the same options.
fn combine(paths: &[PathBuf], plan: &Plan) -> Result<(Vec<RankSummary>, RankOptions)> {
    let mut all = Vec::new();
    let mut first: Option<(RankOptions, PathBuf)> = None;
    let mut given = std::collections::HashSet::new();
    for path in paths {
        // The same partial twice would count its ranks twice.
        let same = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if !given.insert(same) {
            bail!("{}: given twice to --combine", path.display());
        }
        let p = partial::read(path)?;
        match &first {
            None => first = Some((p.options.clone(), path.clone())),
            Some((o, f)) if *o != p.options => bail!(
                "{}: made with other options than {} ({})",
                path.display(),
                f.display(),
                options_difference(&p.options, o)
            ),
            Some(_) => {}
        }
        let kept = p.ranks.into_iter().filter(|r| match (&plan.ranks, r.rank) {
            (Some(set), Some(x)) => set.contains(x),
            _ => true,
        });
        // A partial's steps leave memory as a read rank's do
        // (docs/tracestat.md#memory).
        all.extend(kept.map(|mut r| {
            r.parts.critical_path.spill_steps();
            r
        }));
    }
    let options = first.map_or_else(|| plan.rank_options.clone(), |f| f.0);
    Ok((all, options))
}

fn write_partial(path: &Path, mut ranks: Vec<RankSummary>, options: RankOptions) -> Result<()> {
    analyzers::sort_ranks(&mut ranks);
    let p = partial::Partial {
        format: partial::FORMAT.to_string(),
        version: partial::VERSION,
        options,
        ranks,
    };
    let mut f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
    // As the report: the serializer's small writes buffered here.
    let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut f);
    serde_json::to_writer(&mut w, &p)?;
    w.write_all(b"\n")?;
    w.flush()?;
    drop(w);
    f.commit().map_err(|e| InputError::io(path, &e))?;
    Ok(())
}

/// The report's sections for the screens.
pub fn sections(report: &Report, rank_rows: Option<usize>) -> (Screen, Vec<Section>) {
    let st = &report.out.stragglers;
    // One look-up per rank: a search of the breakdown per rank would be
    // quadratic in the ranks (docs/tracestat.md#many-ranks).
    let busy_of: std::collections::HashMap<&str, f64> = report
        .out
        .breakdown
        .breakdown
        .iter()
        .filter(|b| b.device == "all")
        .map(|b| (b.rank.as_str(), b.busy_us))
        .collect();
    let facts = rank_rows::RankFacts {
        labels: st.stragglers.iter().map(|s| s.rank.as_str()).collect(),
        busy: st
            .stragglers
            .iter()
            .map(|s| busy_of.get(s.rank.as_str()).copied().unwrap_or(0.0))
            .collect(),
        wait: st.stragglers.iter().map(|s| s.own_wait_us).collect(),
        straggler: st.straggler.as_ref().map(|s| s.rank.as_str()),
        collectives: !report.out.collectives.collectives.is_empty(),
    };
    let screen = Screen {
        ranks: rank_rows::choose(&facts, rank_rows),
        rank_rows,
    };
    let mut sections = analyzers::sections_all(report, &screen);
    // The findings open the report (docs/findings.md#output).
    if let Some(i) = sections
        .iter()
        .position(|s| s.id == analyzers::findings::SECTION_ID)
    {
        let findings = sections.remove(i);
        sections.insert(0, findings);
    }
    (screen, sections)
}

/// Writes every output of the report: files first (temporary names),
/// committed together, then the console.
fn write_report(plan: &Plan, report: &Report, marks: Option<&[annotate::RankMarks]>) -> Result<()> {
    let out = &plan.outputs;
    let output_set = OutputSet::begin();
    let mut pending: Vec<(PathBuf, AtomicFile)> = Vec::new();
    if let Some(path) = &out.json {
        let mut f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
        // The serializer's many small writes buffered here, where the
        // copy is inlined, not through the file's writer.
        let mut w = std::io::BufWriter::with_capacity(1 << 16, &mut f);
        unitrace_render::json::write_report(&mut w, report, unitrace_render::json::TABLE_DEPTH)?;
        w.flush()?;
        drop(w);
        pending.push((path.clone(), f));
    }
    // The page shows what the console shows (capped per-rank tables):
    // the same sections, built once.
    let page = (out.html.is_some() || out.console.is_some())
        .then(|| sections(report, out.console.unwrap_or(Some(32))));
    if let (Some(path), Some((_, shown))) = (&out.html, &page) {
        let mut f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
        html::write(&mut f, report, shown)?;
        pending.push((path.clone(), f));
    }
    if let (Some(path), Some(marks)) = (&out.annotate, marks) {
        pending.push((path.clone(), annotate::write(path, marks, report)?));
    }
    // Files hold every rank: the sections without a screen cap (built only
    // for table files: they hold every rank's rows), or the page's where
    // its cap leaves nothing out (building them again took 0.9% of a report
    // with every output: docs/tracestat.md#scale).
    let uncapped;
    let all: &[Section] = match &page {
        _ if out.tables.is_empty() => &[],
        Some((screen, shown)) if screen.cuts_nothing(report) => shown,
        _ => {
            uncapped = sections(report, None).1;
            &uncapped
        }
    };
    for (dir, format) in &out.tables {
        let tables = all.iter().flat_map(|s| &s.tables);
        unitrace_render::sections::write_dir(dir, tables, *format)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    for (path, f) in pending {
        f.commit().map_err(|e| InputError::io(&path, &e))?;
    }
    output_set.commit()?;
    if let (Some(_), Some((screen, shown))) = (out.console, &page) {
        let findings: Vec<Section>;
        let shown = match out.findings_only {
            true => {
                let only = shown
                    .iter()
                    .filter(|s| s.id == analyzers::findings::SECTION_ID);
                findings = only.cloned().collect();
                &findings
            }
            false => shown,
        };
        let stdout = std::io::stdout();
        let mut lock = stdout.lock();
        let written = if out.findings_only {
            console::write_findings(&mut lock, report, shown)
        } else {
            console::write(&mut lock, report, &screen.ranks, shown)
        }
        .and_then(|_| lock.flush());
        match written {
            // `tracestat ... | head`: the reader has seen enough.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other?,
        }
    }
    Ok(())
}

/// The options two partials were made with that differ, as `name: this
/// against that` (their names as a partial writes them), for the one-line
/// error of `--combine`.
fn options_difference(this: &RankOptions, that: &RankOptions) -> String {
    let fields = |o: &RankOptions| match serde_json::to_value(o) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    let (a, b) = (fields(this), fields(that));
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    let null = serde_json::Value::Null;
    let differ: Vec<String> = names
        .into_iter()
        .filter_map(|n| {
            let (x, y) = (a.get(n).unwrap_or(&null), b.get(n).unwrap_or(&null));
            (x != y).then(|| format!("{n}: {x} against {y}"))
        })
        .collect();
    if differ.is_empty() {
        "options that differ in what a partial does not write".to_string()
    } else {
        differ.join("; ")
    }
}

/// Two inputs with the same rank are both kept, with a warning by `tool`
/// (tracestat, and `mergetrace --stats`, which reports the same ranks). Files
/// without a rank are labelled by their input position, which partials
/// made of different files share: `--combine` warns about those too
/// (docs/tracestat.md#past-one-machine).
pub fn warn_duplicate_ranks(tool: &str, ranks: &[RankSummary]) {
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
                tool,
                format!("{what} is in both {prev} and {}; both are kept", r.file),
            );
        }
    }
}

/// The file stems of every table a report writes.
pub fn table_files() -> Vec<String> {
    let options = RankOptions {
        short_kernel_ns: 0,
        tree_depth: 1,
        heat_resolution: 1,
        schema: None,
        window: None,
        steps: Default::default(),
        what_if: Vec::new(),
        annotate: false,
        no_critical_path: false,
    };
    let empty = analyzers::build(
        Vec::new(),
        options,
        &ReportOptions {
            bins: 1,
            heat_rows: analyzers::heatmap::MAX_HEAT_ROWS,
            align: analyzers::clocks::Align::Collectives,
        },
    );
    let (_, all) = sections(&empty, None);
    let mut files: Vec<String> = all
        .iter()
        .flat_map(|s| &s.tables)
        .map(|t| t.file.clone())
        .filter(|f| !f.is_empty())
        .collect();
    files.push("host_tree".to_string());
    files
}

/// Gives the pages of freed memory back to the system. A rank's lists
/// under the mmap threshold are freed among the summaries kept of earlier
/// ranks, where glibc keeps them (it trims only the top of its heap): on 8
/// x 500 MB with every output, one core, the peak was 70 MB higher
/// without this, for no measurable CPU (docs/tracestat.md#scale).
pub fn give_back_freed_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages; it is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}
