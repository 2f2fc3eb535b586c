//! `categorize`: drop-in for categorize.py (docs/compatibility.md#categorize). Compiles a
//! kernel-category INI schema into the JSON search tree read by `summary`.

use std::process::ExitCode;

use categorize::compile::{run, CategorizeArgs};
use clap::Parser;
use unitrace_core::cli::finish;

fn main() -> ExitCode {
    unitrace_core::atomic::remove_temp_files_on_signals();
    let args = CategorizeArgs::parse();
    finish("categorize", run(&args))
}
