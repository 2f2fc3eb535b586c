//! `analyze`: drop-in for analyzeperfmetrics.py (docs/compatibility.md#analyze). Parses the
//! command line and dispatches to the mode modules of the library.

use std::process::ExitCode;

use analyze::args::Args;
use analyze::option_file::expand_option_files;
use clap::Parser;
use unitrace_core::cli::{finish, one_line, EXIT_USAGE};

const TOOL: &str = "analyze";

fn main() -> ExitCode {
    unitrace_core::atomic::remove_temp_files_on_signals();
    let argv = match expand_option_files(std::env::args_os().collect()) {
        Ok(argv) => argv,
        Err(e) => {
            eprintln!("{TOOL}: {}", one_line(&e.to_string()));
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let args = Args::parse_from(argv);
    finish(TOOL, analyze::run(&args))
}
