//! `tracestat`: where the time went across ranks.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = tracestat::args::Args::parse();
    unitrace_core::cli::finish(tracestat::TOOL, tracestat::run(args))
}
