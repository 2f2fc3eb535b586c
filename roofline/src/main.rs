//! `roofline`: GPU roofline from unitrace compute and memory profiles.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    roofline::main_with(roofline::Args::parse())
}
