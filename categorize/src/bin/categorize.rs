//! `categorize`: compile a kernel-category INI schema into a JSON search tree
//!
//! Not implemented yet: the command line is accepted so scripts can be
//! wired up, but every run ends with a clear error and exit code 2.

use std::process::ExitCode;

use clap::Parser;

#[derive(Parser, Debug)]
#[command(
    name = "categorize",
    about = "compile a kernel-category INI schema into a JSON search tree",
    infer_long_args = true
)]
struct Args {
    /// Arguments of the original script (not interpreted yet).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

fn main() -> ExitCode {
    let _args = Args::parse();
    eprintln!("categorize: not yet implemented");
    ExitCode::from(unitrace_core::cli::EXIT_USAGE)
}
