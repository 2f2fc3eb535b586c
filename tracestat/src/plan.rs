//! The typed plan of a run (docs/tracestat.md#usage): the command line is
//! checked and turned into a [`Plan`] once; the run sees only plan values.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use unitrace_core::atomic::{ensure_not_input, ensure_replaceable, same_output_path, OutputKind};
use unitrace_core::category_schema::CategorySchema;
use unitrace_core::cli::warn;
use unitrace_core::timeline::RankList;
use unitrace_core::InputError;
use unitrace_render::table::TableFormat;

use crate::analyzers::critical_path::MOST_WHAT_IF;
use crate::analyzers::{RankOptions, ReportOptions};
use crate::args::Args;
use crate::step_windows::{StepList, StepOptions};
use crate::time::{self, Ns};
use crate::TOOL;

/// Fine heatmap bins per rank (docs/tracestat.md#heatmap).
const HEAT_RESOLUTION: u32 = 1024;

/// Where the ranks come from.
#[derive(Debug, Clone)]
pub enum Source {
    /// Trace files, read and summarised in this run.
    Traces(Vec<PathBuf>),
    /// Partials of earlier runs (`--combine`).
    Partials(Vec<PathBuf>),
}

/// What the run writes.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub json: Option<PathBuf>,
    pub html: Option<PathBuf>,
    /// Table directories and their format.
    pub tables: Vec<(PathBuf, TableFormat)>,
    pub partial: Option<PathBuf>,
    pub events: Option<PathBuf>,
    /// `--annotate`: the input timeline with the analysis' tracks.
    pub annotate: Option<PathBuf>,
    /// The console report, showing at most this many ranks per table
    /// (`Some(None)`: all); `None` with `--quiet`.
    pub console: Option<Option<usize>>,
    /// `--findings`: the console shows the findings only.
    pub findings_only: bool,
}

impl Outputs {
    /// Whether anything but the events dataset is asked for.
    pub fn wants_report(&self) -> bool {
        self.json.is_some()
            || self.html.is_some()
            || !self.tables.is_empty()
            || self.annotate.is_some()
    }
}

/// One run of tracestat.
pub struct Plan {
    pub source: Source,
    pub ranks: Option<RankList>,
    pub schema: Option<(PathBuf, CategorySchema)>,
    pub rank_options: RankOptions,
    pub report: ReportOptions,
    pub outputs: Outputs,
    pub jobs: Option<usize>,
}

impl Plan {
    /// The paths the run reads (no output may be one of them).
    pub fn inputs(&self) -> Vec<&Path> {
        let mut v: Vec<&Path> = match &self.source {
            Source::Traces(p) | Source::Partials(p) => p.iter().map(PathBuf::as_path).collect(),
        };
        v.extend(self.schema.as_ref().map(|(p, _)| p.as_path()));
        v
    }
}

/// Checks the arguments and makes the plan.
pub fn plan(mut args: Args) -> Result<Plan> {
    // `--ranks 0 3 7 a.json b.json` hands the files to --ranks too (it takes
    // several values): what is not a rank list is an input.
    let (ranks, files): (Vec<String>, Vec<String>) = std::mem::take(&mut args.ranks)
        .into_iter()
        .partition(|v| RankList::looks_like_ranks(v));
    args.inputs.extend(files.into_iter().map(PathBuf::from));
    check_tree_depth(&args)?;
    let ranks = if ranks.is_empty() {
        None
    } else {
        Some(RankList::parse(&ranks).map_err(|e| anyhow::anyhow!("--ranks: {e}"))?)
    };
    let mut inputs = args.inputs.clone();
    if let Some(dir) = &args.result_dir {
        if args.combine {
            bail!("--result-dir: traces cannot be combined; give the partials");
        }
        inputs.extend(result_dir_traces(dir, ranks.as_ref())?);
    }
    // A directory stands for its traces (docs/tracestat.md#inputs).
    let found = unitrace_core::timeline::expand_inputs(&inputs)?;
    for skipped in &found.skipped {
        warn(TOOL, skipped);
    }
    let inputs = found.files;
    // A launcher's task can get an empty block of files (`mpiexec -n 16`
    // over 10 files): its partial is empty rather than an error, so the
    // recipes of docs/tracestat.md#past-one-machine need no special case.
    if inputs.is_empty() && args.partial.is_none() {
        bail!("no input: give trace files, --result-dir DIR, or partials with --combine");
    }
    let short_kernel_ns = time::parse_duration(&args.short_kernel)
        .map_err(|e| anyhow::anyhow!("--short-kernel: {e}"))?;
    if args.combine && (args.schema.is_some() || args.tree.is_some() || args.short_kernel != "10us")
    {
        bail!("--schema, --short-kernel and --tree are chosen when the partials are made, not at --combine");
    }
    let schema = match &args.schema {
        Some(p) => Some((p.clone(), load_schema(p)?)),
        None => None,
    };
    let window = window(&args)?;
    if args.what_if.len() > MOST_WHAT_IF {
        bail!("--what-if: at most {MOST_WHAT_IF} rules in one run");
    }
    if args.combine && !args.what_if.is_empty() {
        bail!("--what-if is chosen when the partials are made, not at --combine");
    }
    if let Some(a) = &args.annotate {
        let name = a.to_string_lossy();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if !(name.ends_with(".json") || name.ends_with(".pftrace")) {
            bail!(
                "--annotate {}: name it OUT.json or OUT.pftrace (.gz to gzip it)",
                a.display()
            );
        }
    }
    if args.combine && window.is_some() {
        bail!("--from and --to are chosen when the partials are made, not at --combine");
    }
    let steps = step_options(&args)?;
    let rank_options = RankOptions {
        short_kernel_ns,
        tree_depth: args.tree.unwrap_or(0),
        heat_resolution: HEAT_RESOLUTION,
        schema: args
            .schema
            .as_deref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned()),
        window,
        steps,
        what_if: args.what_if.clone(),
        annotate: args.annotate.is_some(),
        no_critical_path: args.no_critical_path,
    };
    let mut tables = Vec::new();
    tables.extend(args.csv.clone().map(|d| (d, TableFormat::Csv)));
    tables.extend(args.parquet.clone().map(|d| (d, TableFormat::Parquet)));
    let outputs = Outputs {
        json: args.json.clone(),
        html: args.html.clone(),
        tables,
        partial: args.partial.clone(),
        events: args.events.clone(),
        annotate: args.annotate.clone(),
        console: (!args.quiet).then_some(args.rank_rows.0),
        findings_only: args.findings,
    };
    let plan = Plan {
        source: if args.combine {
            Source::Partials(inputs)
        } else {
            Source::Traces(inputs)
        },
        ranks,
        schema,
        rank_options,
        report: ReportOptions {
            bins: args.bins as usize,
            heat_rows: args.heat_rows as usize,
            align: args.align,
        },
        outputs,
        jobs: args.jobs,
    };
    check_outputs(&plan)?;
    Ok(plan)
}

/// The --tree depth attaches with `=` (docs/tracestat.md#usage), so
/// `--tree 2` is the default depth and an input `2`: when no such file
/// exists, say how to write it rather than only that the file is missing.
fn check_tree_depth(args: &Args) -> Result<()> {
    if args.tree.is_none() {
        return Ok(());
    }
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
    Ok(())
}

/// `--from`/`--to` as offsets in ns (docs/tracestat.md#windows).
fn window(args: &Args) -> Result<Option<(Ns, Ns)>> {
    if args.from.is_none() && args.to.is_none() {
        return Ok(None);
    }
    let parse = |opt: &str, v: &Option<String>, default: Ns| -> Result<Ns> {
        match v {
            Some(t) => time::parse_duration(t).map_err(|e| anyhow::anyhow!("--{opt}: {e}")),
            None => Ok(default),
        }
    };
    let from = parse("from", &args.from, 0)?;
    let to = parse("to", &args.to, Ns::MAX)?;
    if to <= from {
        bail!("--to must be later than --from");
    }
    Ok(Some((from, to)))
}

/// `--step`, `--steps`, `--skip-warmup` (docs/tracestat.md#steps).
fn step_options(args: &Args) -> Result<StepOptions> {
    let options = StepOptions {
        pattern: args.step_pattern.clone(),
        keep: if args.steps.is_empty() {
            None
        } else {
            Some(StepList::parse(&args.steps).map_err(|e| anyhow::anyhow!("--steps: {e}"))?)
        },
        skip_warmup: args.skip_warmup,
    };
    if let Err(e) = options.regex() {
        // The regex crate's message spans lines; one line here.
        let first = e.to_string();
        let last = first.lines().last().unwrap_or_default().trim().to_string();
        bail!(
            "--step {:?}: not a regular expression ({last})",
            options.pattern_text()
        );
    }
    if args.combine && options != StepOptions::default() {
        bail!("--step, --steps and --skip-warmup are chosen when the partials are made, not at --combine");
    }
    Ok(options)
}

fn load_schema(path: &Path) -> Result<CategorySchema> {
    let bytes = std::fs::read(path).map_err(|e| InputError::io(path, &e))?;
    Ok(CategorySchema::from_json_bytes(path, &bytes)?)
}

/// No output may overwrite an input, nor two outputs the same file.
fn check_outputs(plan: &Plan) -> Result<()> {
    let inputs = plan.inputs();
    let o = &plan.outputs;
    let files: Vec<&Path> = [
        o.json.as_deref(),
        o.html.as_deref(),
        o.partial.as_deref(),
        o.annotate.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    for (i, f) in files.iter().enumerate() {
        ensure_not_input(f, &inputs)?;
        for p in &files[..i] {
            if same_output_path(f, p) {
                bail!("{}: given as two outputs", f.display());
            }
        }
    }
    let kinds = [
        (o.json.as_deref(), OutputKind::Report),
        (o.html.as_deref(), OutputKind::Page),
        (o.partial.as_deref(), OutputKind::Report),
        (o.annotate.as_deref(), OutputKind::Trace),
    ];
    for (path, kind) in kinds {
        if let Some(path) = path {
            ensure_replaceable(path, kind)?;
        }
    }
    for (dir, format) in &o.tables {
        let option = match format {
            TableFormat::Csv => "csv",
            TableFormat::Parquet => "parquet",
        };
        for input in &inputs {
            let in_dir = input.parent().is_some_and(|p| same_output_path(p, dir));
            // Table names are fixed; refuse only a real clash.
            let clash = crate::table_files().iter().any(|name| {
                same_output_path(&dir.join(format!("{name}.{}", format.extension())), input)
            });
            if in_dir && clash {
                bail!(
                    "--{option} {}: would overwrite the input {}",
                    dir.display(),
                    input.display()
                );
            }
        }
        for name in crate::table_files() {
            ensure_replaceable(
                &dir.join(format!("{name}.{}", format.extension())),
                OutputKind::Table,
            )?;
        }
    }
    if let Some(dir) = &o.events {
        crate::events::check_out_dir(dir, &inputs)?;
    }
    Ok(())
}

/// The timelines of a result dir (docs/formats.md#result-dir-tree), those
/// of `ranks` only when given; a requested rank without one is a warning.
fn result_dir_traces(dir: &Path, ranks: Option<&RankList>) -> Result<Vec<PathBuf>> {
    use unitrace_core::result_dir::ResultDir;
    let tree = ResultDir::open(dir).map_err(|e| anyhow::anyhow!("--result-dir: {e}"))?;
    for (path, problem) in &tree.unreadable {
        warn(TOOL, format!("{}: {problem}", path.display()));
    }
    let wanted: Option<Vec<u32>> = ranks.map(|r| r.ranks().collect());
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
