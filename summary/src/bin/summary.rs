//! `summary`: drop-in for summary.py (docs/compatibility.md#summary). Per-category time and
//! calls from a tarball of unitrace text summaries, plus a per-rank table.

use std::process::ExitCode;

use clap::Parser;
use summary::cli::{run, SummaryArgs};
use unitrace_core::cli::finish;

fn main() -> ExitCode {
    unitrace_core::atomic::remove_temp_files_on_signals();
    let args = SummaryArgs::parse();
    finish("summary", run(&args))
}
