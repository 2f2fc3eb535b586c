//! `uniview`: drop-in for uniview.py (docs/compatibility.md#uniview). Opens a unitrace trace
//! in ui.perfetto.dev and serves the metric charts its kernel events link
//! to; see `analyze::server::uniview`.

use std::process::ExitCode;

use analyze::server::uniview::{run, UniviewArgs};
use clap::Parser;
use unitrace_core::cli::finish;

fn main() -> ExitCode {
    let args = UniviewArgs::parse();
    finish("uniview", run(&args))
}
