use std::process::ExitCode;

fn main() -> ExitCode {
    unitrace_core::atomic::remove_temp_files_on_signals();
    unitrace_core::cli::finish(
        "unitrace-gen",
        unitrace_gen::cli::run().map(|()| ExitCode::SUCCESS),
    )
}
