//! `mergetrace`: merge per-rank unitrace Chrome/Perfetto traces.

use std::process::ExitCode;

use mergetrace::args::Args;

fn main() -> ExitCode {
    unitrace_core::atomic::remove_temp_files_on_signals();
    let args = Args::parse_from_os(std::env::args_os());
    unitrace_core::cli::finish(mergetrace::TOOL, mergetrace::run(args))
}
