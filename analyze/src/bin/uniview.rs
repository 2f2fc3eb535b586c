//! `uniview`: drop-in for uniview.py (docs/compatibility.md#uniview). Opens a unitrace trace
//! in ui.perfetto.dev and serves the metric charts its kernel events link
//! to; see `analyze::server::uniview`.

use std::process::ExitCode;

use analyze::option_file::OptionFileError;
use analyze::server::uniview::{run, usage_problem, UniviewArgs};
use clap::{CommandFactory, Parser};
use unitrace_core::cli::{finish, one_line, EXIT_USAGE};

fn main() -> ExitCode {
    // Ctrl-C stops the servers with `Goodbye!`; SIGTERM/SIGHUP still clean up.
    unitrace_core::atomic::remove_temp_files_on_signals();
    unitrace_core::atomic::leave_interrupt_to_caller();
    let args = UniviewArgs::parse();
    if let Some(problem) = usage_problem(&args) {
        // argparse errors of uniview.py: usage and exit 2.
        UniviewArgs::command()
            .error(clap::error::ErrorKind::ArgumentConflict, problem)
            .exit();
    }
    match run(&args) {
        // An unreadable option file is a usage error, as in `analyze -f`.
        Err(e) if e.downcast_ref::<OptionFileError>().is_some() => {
            eprintln!("uniview: {}", one_line(&format!("{e:#}")));
            ExitCode::from(EXIT_USAGE)
        }
        result => finish("uniview", result),
    }
}
