//! `tracestat`: where the time went across ranks.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    fixed_mmap_threshold();
    unitrace_core::atomic::remove_temp_files_on_signals();
    let args = tracestat::args::Args::parse();
    unitrace_core::cli::finish(tracestat::TOOL, tracestat::run(args))
}

/// Lists of 8 MiB or more get pages of their own, given back when freed.
/// glibc's default threshold rises to the largest block freed (up to 32
/// MiB), after which a rank's large lists live in the shared heap and their
/// freed space is kept. Smaller lists live in the heap, whose free pages are
/// given back after each rank (`give_back_freed_pages`): on 8 x 500 MB, one
/// core, 8 MiB took 1.3-1.8% less CPU than 1 MiB (fewer page faults) for 2
/// MB more memory; 16 MiB and more kept 30-70 MB more (docs/tracestat.md#scale).
/// The heap keeps 32 MiB free at its top instead of giving back every page
/// (which the next rank's smaller lists then fault in again, zeroed): on 8 x
/// 500 MB, one core, 13% fewer page faults and about 2.5% less CPU for the
/// same peak memory (64 MiB: 4%, but 16 MB more memory).
fn fixed_mmap_threshold() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 8 << 20);
        libc::mallopt(libc::M_TOP_PAD, 32 << 20);
    }
}
