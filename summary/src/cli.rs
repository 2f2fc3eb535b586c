//! The command line of `summary` (docs/compatibility.md#summary) and the
//! run: read the archive's members in parallel, fold each summary into the
//! aggregation, write the summary JSON, the per-rank table and the coverage
//! report.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, ValueEnum};
use unitrace_core::atomic::{ensure_not_input, write_atomic};
use unitrace_core::category_schema::CategorySchema;
use unitrace_core::cli::{escape_controls, warn};
use unitrace_core::summary_tarball::for_each_member_streaming;
use unitrace_core::whole_file::{read_capped, MAX_SCHEMA_BYTES};
use unitrace_core::InputError;
use unitrace_render::table::{TableFormat, TableWriter};

use crate::aggregate::{render_output, Aggregation};
use crate::coverage::{report_coverage, Coverage};
use crate::members::{member_warnings, parse_member, parse_member_stream, Parsed, STREAM_ABOVE};
use crate::pyagg::Aggregator;
use crate::ranks::{self, RankTable};

const TOOL: &str = "summary";

#[derive(Parser, Debug, Clone)]
#[command(
    name = "summary",
    version,
    about = "Per-category device and CCL time from a tarball of unitrace summaries",
    infer_long_args = true
)]
pub struct SummaryArgs {
    /// Tar archive (gzip, plain; bzip2/xz/zstd via the system tools) of
    /// unitrace -h/-d/-r text logs, or a folder of them (a --result-dir
    /// tree, a folder of logs), read like an archive of its files.
    #[arg(long = "tarfile", visible_alias = "input", value_name = "TAR")]
    pub tarfile: PathBuf,

    /// Compiled category schema written by `categorize`.
    #[arg(long = "schema", value_name = "JSON")]
    pub schema: PathBuf,

    /// How the values of one name from different files are combined.
    #[arg(long = "aggregator", value_enum, default_value = "mean")]
    pub aggregator: Aggregator,

    /// Write nothing when the result is empty (default).
    #[arg(long = "skip-empty", overrides_with = "no_skip_empty")]
    pub skip_empty: bool,

    /// Write `{}` when the result is empty.
    #[arg(long = "no-skip-empty", overrides_with = "skip_empty")]
    pub no_skip_empty: bool,

    /// Output JSON file; stdout when absent (and no --format).
    #[arg(long = "json", visible_alias = "output", value_name = "OUT")]
    pub json: Option<PathBuf>,

    /// Per-rank table: one row per rank/process, time and calls per
    /// category; CSV, or JSON when the name ends in `.json`, or Parquet
    /// when it ends in `.parquet`.
    #[arg(long = "per-rank", value_name = "FILE")]
    pub per_rank: Option<PathBuf>,

    /// Print the per-rank table and the coverage report on stdout in this
    /// form (the summary JSON then goes only to --output).
    #[arg(long = "format", value_enum)]
    pub format: Option<ConsoleFormat>,

    /// Worker threads parsing members (default: cores - 1, at least 1; more
    /// than the cores is clamped to them with a warning).
    #[arg(long = "jobs", short = 'j', value_parser = unitrace_core::cli::jobs_parser("summary"))]
    pub jobs: Option<usize>,

    /// -v warnings and the coverage report, -vv each member, -vvv every
    /// name that got the default category.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// An INI category schema (categorize's input) given where the compiled
/// JSON is expected: a `.ini` name, or text whose first meaningful line is
/// a `[section]` header or a `;`/`#` comment (JSON starts with `{`).
pub fn looks_like_ini(path: &Path, bytes: &[u8]) -> bool {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ini"))
    {
        return true;
    }
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let first = text
        .trim_start_matches('\u{feff}')
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty());
    match first {
        Some(l) => {
            (l.starts_with('[') && l.ends_with(']') && !l.contains('"'))
                || l.starts_with(';')
                || l.starts_with('#')
        }
        None => false,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ConsoleFormat {
    Csv,
    Json,
    Table,
}

pub fn run(args: &SummaryArgs) -> Result<ExitCode> {
    let mut outputs: Vec<&Path> = Vec::new();
    if let Some(p) = &args.json {
        outputs.push(p);
    }
    if let Some(p) = &args.per_rank {
        outputs.push(p);
    }
    for out in &outputs {
        ensure_not_input(out, &[&args.tarfile, &args.schema])?;
    }
    let schema = read_schema(&args.schema)?;
    let mut agg = Aggregation::new(&schema, args.aggregator);
    fold_members(args, &mut agg)?;
    let (output, coverage) = agg.finish(args.aggregator, args.verbose);

    // Summary JSON (docs/compatibility.md#summary).
    let skip_empty = !args.no_skip_empty;
    if !output.is_empty() || !skip_empty {
        let text = render_output(&output);
        match &args.json {
            Some(path) => write_atomic(path, text.as_bytes())
                .map_err(|e| InputError::at_file(path, format!("cannot write: {e}")))?,
            None if args.format.is_none() => print(&text)?,
            None => {}
        }
    }

    let table = agg.rank_table(&output);
    if let Some(path) = &args.per_rank {
        write_per_rank(path, &table, &coverage)?;
    }
    if let Some(format) = args.format {
        let text = match format {
            ConsoleFormat::Csv => ranks::render_csv(&table),
            ConsoleFormat::Json => ranks::render_json(&table, &coverage),
            ConsoleFormat::Table => ranks::render_table(&table, &coverage),
        };
        print(&text)?;
    } else {
        report_coverage(&coverage, args.verbose);
    }
    Ok(ExitCode::SUCCESS)
}

/// The compiled category schema; an INI one is refused with how to
/// compile it.
fn read_schema(path: &Path) -> Result<CategorySchema> {
    let bytes = read_capped(path, MAX_SCHEMA_BYTES, "compiled category schema")?;
    if looks_like_ini(path, &bytes) {
        // The INI is categorize's input; summary reads what categorize
        // compiles from it (docs/compatibility.md#summary-schema-ini).
        return Err(InputError::at_file(
            path,
            format!(
                "an INI category schema, not a compiled one: compile it with categorize first (categorize --ini {} --json SCHEMA.json) and pass the JSON to --schema",
                path.display()
            ),
        )
        .into());
    }
    Ok(CategorySchema::from_json_bytes(path, &bytes)?)
}

/// Parses the members of the archive in parallel and folds each summary
/// into `agg`, in archive order.
fn fold_members(args: &SummaryArgs, agg: &mut Aggregation) -> Result<()> {
    let workers = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get().saturating_sub(1))
            .unwrap_or(1)
            .clamp(1, 8)
    });
    let tar = &args.tarfile;
    let mut summaries = 0usize;
    let stats = for_each_member_streaming(
        tar,
        workers,
        STREAM_ABOVE,
        parse_member,
        parse_member_stream,
        |member, parsed| {
            if fold_member(agg, tar, args.verbose, member, parsed)? {
                summaries += 1;
            }
            Ok(())
        },
    )?;
    // A folder's FIFOs, unreadable files and link loops
    // (docs/robustness.md#walked-folders).
    for skipped in &stats.skipped {
        warn(TOOL, skipped);
    }
    if summaries == 0 {
        let what = if stats.members == 0 {
            "archive holds no files".to_string()
        } else {
            format!(
                "none of the {} files is a unitrace text summary",
                stats.members
            )
        };
        return Err(InputError::at_file(tar, what).into());
    }
    Ok(())
}

/// One parsed member of archive `tar`: its summary folded into `agg`
/// (true), or skipped with the message its kind gets.
fn fold_member(
    agg: &mut Aggregation,
    tar: &Path,
    verbose: u8,
    member: &str,
    parsed: Parsed,
) -> Result<bool, InputError> {
    match parsed {
        Parsed::Summary(s, _) if !s.has_summary() && s.timeline_lines > 0 => {
            // `tar cfz x.tgz output.*` picks up the `-t` logs too;
            // summary.py finds no label in them and moves on.
            warn(
                TOOL,
                format!(
                    "{}: {member}: only a device timeline (unitrace -t), no summary; skipped",
                    tar.display()
                ),
            );
        }
        Parsed::Summary(s, non_utf8) => {
            if !s.has_summary() {
                return Err(InputError::at_file(
                    tar,
                    format!(
                        "{member}: no summary section (no \"API Timing Summary\", \"Device Timing Summary\" \
                         or CCL block): run unitrace with -h/-d/-r, or did this rank crash?"
                    ),
                ));
            }
            if verbose >= 2 {
                eprintln!("{TOOL}: processing {}", escape_controls(member));
            }
            if verbose >= 1 {
                for note in &s.notes {
                    warn(TOOL, format!("{}: {member}: {note}", tar.display()));
                }
            }
            for warning in member_warnings(&s, non_utf8) {
                warn(TOOL, format!("{}: {member}:{warning}", tar.display()));
            }
            agg.fold(member, &s);
            return Ok(true);
        }
        Parsed::SideFile => {
            if verbose >= 2 {
                eprintln!(
                    "{TOOL}: skipping {} (not a text summary)",
                    escape_controls(member)
                );
            }
        }
        Parsed::Binary => warn(
            TOOL,
            format!("{}: {member}: binary member skipped", tar.display()),
        ),
        Parsed::Bad(line, problem) => {
            return Err(InputError::at_file(
                tar,
                format!("{member}:{line}: {problem}"),
            ));
        }
    }
    Ok(false)
}

/// `--per-rank`: JSON or Parquet by the name's extension, else CSV.
fn write_per_rank(path: &Path, table: &RankTable, coverage: &Coverage) -> Result<()> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let written = if is_json {
        write_atomic(path, ranks::render_json(table, coverage).as_bytes())
    } else if TableFormat::of_path(path) == TableFormat::Parquet {
        TableWriter::create(path, &ranks::per_rank_schema(table))
            .and_then(|mut w| ranks::write_table(table, &mut w).and_then(|()| w.commit()))
    } else {
        write_atomic(path, ranks::render_csv(table).as_bytes())
    };
    written.map_err(|e| InputError::at_file(path, format!("cannot write: {e}")))?;
    Ok(())
}

fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
