//! `uniview`: drop-in for uniview.py (scripts.md 3). Opens a unitrace trace
//! in ui.perfetto.dev and serves the metric charts its kernel events link
//! to; see `analyze::server::uniview`.

use std::process::ExitCode;

use analyze::server::uniview::{run, usage_problem, UniviewArgs};
use clap::{CommandFactory, Parser};
use unitrace_core::cli::finish;

fn main() -> ExitCode {
    let args = UniviewArgs::parse();
    if let Some(problem) = usage_problem(&args) {
        // argparse errors of uniview.py: usage and exit 2.
        UniviewArgs::command()
            .error(clap::error::ErrorKind::ArgumentConflict, problem)
            .exit();
    }
    finish("uniview", run(&args))
}
