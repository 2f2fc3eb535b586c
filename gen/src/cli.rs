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
    let cli = Cli::parse();
    match &cli.command {
        Command::Trace(args) => trace::run(args, cli.seed),
        Command::Metrics(args) => metrics::run(args, cli.seed),
        Command::Stalls(args) => stalls::run(args, cli.seed),
        Command::Summaries(args) => summaries::run(args, cli.seed),
        Command::Roofline(args) => roofline::run(args, cli.seed),
    }
}
