//! `compare`: two unitrace runs side by side.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = compare::args::Args::parse();
    unitrace_core::cli::finish(compare::TOOL, compare::run(args))
}
