//! `roofline`: GPU roofline from unitrace compute and memory profiles.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    unitrace_core::atomic::remove_temp_files_on_signals();
    roofline::main_with(roofline::Args::parse())
}
