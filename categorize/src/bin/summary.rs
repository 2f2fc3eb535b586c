//! `summary`: drop-in for summary.py (scripts.md 4). Per-category time and
//! calls from a tarball of unitrace text summaries, plus a per-rank table.

use std::process::ExitCode;

use categorize::summary::{run, SummaryArgs};
use clap::Parser;
use unitrace_core::cli::finish;

fn main() -> ExitCode {
    unitrace_core::atomic::remove_temp_files_on_signals();
    let args = SummaryArgs::parse();
    finish("summary", run(&args))
}
