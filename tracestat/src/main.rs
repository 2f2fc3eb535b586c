//! `tracestat`: where the time went across ranks.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    unitrace_core::atomic::remove_temp_files_on_signals();
    let args = tracestat::args::Args::parse();
    unitrace_core::cli::finish(tracestat::TOOL, tracestat::run(args))
}
