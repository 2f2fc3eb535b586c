//! `mergetrace`: merge per-rank unitrace Chrome/Perfetto traces.

use std::process::ExitCode;

use mergetrace::args::Args;

fn main() -> ExitCode {
    let args = Args::parse_from_os(std::env::args_os());
    unitrace_core::cli::finish(mergetrace::TOOL, mergetrace::run(args))
}
