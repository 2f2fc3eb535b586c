//! Command line of `tracestat` (docs/tracestat.md#usage).

use std::path::PathBuf;

use clap::Parser;

use crate::analyzers::heatmap::MAX_HEAT_ROWS;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "tracestat",
    version,
    about = "Where the time went across ranks: breakdown, overlap, idle gaps, launches, host ranges, collectives, stragglers, heatmap",
    long_about = "Reads unitrace Chrome traces (one per rank, or a merged trace) in one streaming pass per \
                  file, files in parallel, and prints a report per rank and across ranks. --csv, --json \
                  and --html write the same tables to files; they combine in one run.",
    infer_long_args = true
)]
pub struct Args {
    /// Trace files (`<app>.<pid>.<rank>.json`, `chrome_trace.json`, a merged
    /// trace), or with --combine the partials to reduce.
    #[arg(value_name = "TRACE")]
    pub inputs: Vec<PathBuf>,

    /// Read the traces of a `unitrace --result-dir` tree (every
    /// `chrome_trace.json`, or the `.pftrace` ones when there is no JSON);
    /// with --ranks only those ranks' folders.
    #[arg(long, value_name = "DIR")]
    pub result_dir: Option<PathBuf>,

    /// Only these ranks, e.g. `0-3,7` or `0 3 7`.
    #[arg(long, value_name = "LIST", num_args = 1.., value_delimiter = ',')]
    pub ranks: Vec<String>,

    /// Classify kernels with a compiled categorize schema (JSON).
    #[arg(long, value_name = "X.json")]
    pub schema: Option<PathBuf>,

    /// Write one CSV file per table into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    pub csv: Option<PathBuf>,

    /// Write the same tables as Parquet files into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    pub parquet: Option<PathBuf>,

    /// Write the whole report as one JSON document.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write an offline HTML page (breakdown bars and the rank x time heatmap).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Write every trace event as a row of a Parquet dataset partitioned by
    /// rank (`DIR/rank=N/part-*.parquet`, docs/sql.md). Alone it writes
    /// only the dataset (no report); with --csv/--parquet/--json/--html the
    /// report too. A re-run skips ranks already complete.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["combine", "partial"])]
    pub events: Option<PathBuf>,

    /// Write a mergeable partial (per-rank summaries) instead of a report;
    /// with --combine, one partial holding every rank of the partials given
    /// (a combine of combines).
    #[arg(long, value_name = "OUT.json", conflicts_with_all = ["csv", "parquet", "json", "html"])]
    pub partial: Option<PathBuf>,

    /// The inputs are partials written by --partial: reduce them to one report.
    #[arg(long)]
    pub combine: bool,

    /// Time bins of the heatmap (1 to 4096: a column per pixel of a 4K
    /// screen).
    #[arg(long, value_name = "N", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=MAX_BINS as i64))]
    pub bins: u32,

    /// Rows of the heatmap table at most (1 to 4096): with more ranks,
    /// consecutive ranks share a row (their mean). The table also keeps
    /// to 1,048,576 cells (rows x bins).
    #[arg(long, value_name = "N", default_value_t = MAX_HEAT_ROWS as u32, value_parser = clap::value_parser!(u32).range(1..=MAX_HEAT_ROWS as i64))]
    pub heat_rows: u32,

    /// Only from this time on, since each rank's first event (ns, us, ms,
    /// s; bare = us): every analysis sees the stretch --from..--to.
    #[arg(long, value_name = "TIME")]
    pub from: Option<String>,

    /// Only up to this time, since each rank's first event.
    #[arg(long, value_name = "TIME")]
    pub to: Option<String>,

    /// What marks a step: a regular expression matched anywhere in host
    /// range names, its first group the step id (default
    /// `ProfilerStep#(\d+)`). Without such ranges, steps are found from a
    /// repeated top-level range or the period of the GPU work
    /// (docs/tracestat.md#steps).
    #[arg(long = "step", value_name = "REGEX")]
    pub step_pattern: Option<String>,

    /// Keep only these steps (ids, e.g. `3-10` or `2,4,6`): every other
    /// analysis sees only the stretch from the first kept step to the last.
    #[arg(long, value_name = "LIST")]
    pub steps: Vec<String>,

    /// Drop the leading steps whose length is more than 20% off the median
    /// of the steps after them (warm-up); every other analysis sees only
    /// the steps kept.
    #[arg(long)]
    pub skip_warmup: bool,

    /// How to line up the ranks' clocks before collectives are compared
    /// (docs/tracestat.md#clock-alignment): `collectives` offsets each rank
    /// so that the ends of matched collectives coincide, when that makes
    /// more of them consistent; `none` takes the clocks as read.
    #[arg(long, value_name = "HOW", default_value = "collectives", value_parser = parse_align)]
    pub align: crate::analyzers::clocks::Align,

    /// Kernels shorter than this count as short (ns, us, ms, s; bare = us;
    /// at most 1 hour).
    #[arg(long, value_name = "DUR", default_value = "10us", value_parser = check_short_kernel)]
    pub short_kernel: String,

    /// Print the op -> kernel tree of host ranges, DEPTH ranges deep (3 when
    /// bare). The depth attaches with `=` (`--tree=2`), so a bare `--tree`
    /// can stand before the trace files.
    #[arg(long, value_name = "DEPTH", num_args = 0..=1, require_equals = true, default_missing_value = "3", value_parser = parse_tree_depth)]
    pub tree: Option<usize>,

    /// Console only: show at most N ranks in each per-rank table (default
    /// 32): the straggler, then in turn the ranks with the most and least GPU
    /// busy time and wait at collectives, in rank order, with a line saying
    /// how many are left out. `all` shows every rank. --csv, --json,
    /// --parquet and --html always hold every rank.
    #[arg(long, value_name = "N|all", default_value = "32", value_parser = parse_rank_rows)]
    pub rank_rows: RankRows,

    /// Print only the findings on the console: what to fix first and what
    /// it would save (docs/findings.md). The files hold the whole report.
    #[arg(long)]
    pub findings: bool,

    /// Replay every step with changed durations (docs/tracestat.md#what-if),
    /// repeatable: `kernel:GLOB=-20%` (or `=5us`, `=-3us`; GLOB matches the
    /// name without its launch shape), `range:GLOB=-30%`, `rank:N=median`,
    /// `comm=0`, `launch=0`.
    #[arg(long = "what-if", value_name = "RULE", value_parser = check_what_if)]
    pub what_if: Vec<String>,

    /// Leave out the critical path and its replays (docs/tracestat.md#no-critical-path):
    /// about a third less time on runs of many short steps. The steps, the
    /// findings (their savings then estimated without replays) and every
    /// other analysis are kept. Chosen when partials are made.
    #[arg(long, conflicts_with_all = ["what_if", "annotate", "combine"])]
    pub no_critical_path: bool,

    /// Write the input timeline with tracks added: the steps, the critical
    /// path, and per engine its queue depth (docs/tracestat.md#annotated-trace).
    /// `.json` from Chrome/Kineto JSON inputs, `.pftrace` from `.pftrace` ones.
    #[arg(long, value_name = "OUT.json|OUT.pftrace", conflicts_with_all = ["combine", "partial"])]
    pub annotate: Option<PathBuf>,

    /// Do not print the console report.
    #[arg(short, long)]
    pub quiet: bool,

    /// Worker threads (default: one per core; more than the cores is
    /// clamped to them with a warning).
    #[arg(long, value_name = "N", value_parser = unitrace_core::cli::jobs_parser("tracestat"))]
    pub jobs: Option<usize>,
}

/// Largest `--bins` (docs/tracestat.md#usage).
pub const MAX_BINS: u32 = 4096;

/// Largest `--rank-rows` N: more than the ranks any run has
/// (docs/tracestat.md#usage).
pub const MAX_RANK_ROWS: usize = 1 << 20;

/// Deepest `--tree=DEPTH`: host ranges nest a few levels, never 64.
pub const MAX_TREE_DEPTH: usize = 64;

/// Longest `--short-kernel`, in ns (1 hour).
const MAX_SHORT_KERNEL_NS: u64 = 3_600_000_000_000;

/// `--short-kernel`: a duration of at most 1 hour, checked here so that a
/// bad one is a usage error (exit 2); kept as written (the run parses it).
fn check_short_kernel(s: &str) -> Result<String, String> {
    let ns = crate::time::parse_duration(s)?;
    if ns as u64 > MAX_SHORT_KERNEL_NS {
        return Err(format!("`{s}` is longer than 1 hour"));
    }
    Ok(s.to_string())
}

/// `--what-if`: a rule of docs/tracestat.md#what-if, checked here so that
/// a bad one is a usage error; kept as written.
fn check_what_if(s: &str) -> Result<String, String> {
    crate::analyzers::critical_path::rules::parse_rule(s)?;
    Ok(s.to_string())
}

fn parse_tree_depth(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_TREE_DEPTH).contains(&n) => Ok(n),
        _ => Err(format!("`{s}`: a depth from 1 to {MAX_TREE_DEPTH} ranges")),
    }
}

/// `--rank-rows`: a number of ranks, or `None` for all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankRows(pub Option<usize>);

fn parse_rank_rows(s: &str) -> Result<RankRows, String> {
    if s.eq_ignore_ascii_case("all") {
        return Ok(RankRows(None));
    }
    match s.parse::<usize>() {
        Ok(n) if (1..=MAX_RANK_ROWS).contains(&n) => Ok(RankRows(Some(n))),
        _ => Err(format!(
            "`{s}`: a number of ranks from 1 to {MAX_RANK_ROWS}, or `all`"
        )),
    }
}

fn parse_align(s: &str) -> Result<crate::analyzers::clocks::Align, String> {
    use crate::analyzers::clocks::Align;
    match s {
        "collectives" => Ok(Align::Collectives),
        "none" => Ok(Align::None),
        _ => Err(format!("`{s}`: `collectives` or `none`")),
    }
}
