//! The command line: one subcommand per kind of output, a global `--seed`
//! (before or after the subcommand).

use anyhow::Result;
use clap::{Parser, Subcommand};

use crate::{metrics, roofline, stalls, summaries, trace};

#[derive(Debug, Parser)]
#[command(
    name = "unitrace-gen",
    version,
    about = "Synthetic unitrace outputs, deterministic per seed (docs/unitrace-gen.md)"
)]
pub struct Cli {
    /// Seed of every random choice: the same seed and options give the same bytes.
    #[arg(long, global = true, default_value_t = 1)]
    pub seed: u64,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Per-rank timelines (Chrome JSON, .pftrace, result-dir trees).
    Trace(trace::TraceArgs),
    /// A hardware-metric CSV (`unitrace -k` sampling or `-q` query).
    Metrics(metrics::MetricsArgs),
    /// A stall-sampling CSV and the shader dump that goes with it.
    Stalls(stalls::StallsArgs),
    /// A tarball of per-rank text summaries (`unitrace -h -d -r`).
    Summaries(summaries::SummariesArgs),
    /// The compute and memory profiles a roofline reads.
    Roofline(roofline::RooflineArgs),
}

pub fn run() -> Result<()> {
    dispatch(&Cli::parse())
}

/// Runs the generator on its command-line words (without the program's
/// name), in-process, as the binary would: for the tests of other crates
/// that write their inputs (tests/README.md).
pub fn run_args(args: &[&str]) -> Result<()> {
    let words = std::iter::once("unitrace-gen").chain(args.iter().copied());
    dispatch(&Cli::try_parse_from(words)?)
}

/// The run the findings' tests plant their problems in, in tracestat's
/// and compare's tests alike (docs/findings.md#tests): `trace OUT --ranks 2
/// --events 6000 --steps 4 -q`, seed 1, then `extra` (`--plant RULE`,
/// `--straggler none`, ...).
pub fn findings_run(out: &std::path::Path, extra: &[&str]) -> Result<()> {
    let out = out.to_string_lossy();
    let mut args = vec![
        "trace", &out, "--ranks", "2", "--events", "6000", "--steps", "4", "-q",
    ];
    args.extend(extra);
    run_args(&args)
}

fn dispatch(cli: &Cli) -> Result<()> {
    match &cli.command {
        Command::Trace(args) => trace::run(args, cli.seed),
        Command::Metrics(args) => metrics::run(args, cli.seed),
        Command::Stalls(args) => stalls::run(args, cli.seed),
        Command::Summaries(args) => summaries::run(args, cli.seed),
        Command::Roofline(args) => roofline::run(args, cli.seed),
    }
}
