//! Library part of `analyze`: one module per mode of analyzeperfmetrics.py.
//! Parsing lives in `unitrace-core`; this crate decides what to draw and
//! renders it.

pub mod args;
pub mod charts;
pub mod list;
pub mod render;
pub mod server;
pub mod stall;
pub mod stall_charts;

use std::process::ExitCode;

use args::Args;

/// Runs one invocation of `analyze` (the flow of scripts.md 1.2).
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    // Option files (`-f`) are inputs too: `-f opts.txt -o opts.txt` must
    // not replace them with a chart (issue 10). The data input is checked
    // by each mode.
    let option_files: Vec<&std::path::Path> = args.config.iter().map(|p| p.as_path()).collect();
    for output in [&args.output, &args.data, &args.report]
        .into_iter()
        .flatten()
    {
        unitrace_core::atomic::ensure_not_input(output, &option_files)?;
    }
    if args.list {
        let outputs = unitrace_core::atomic::OutputSet::begin();
        let code = list::run(args)?;
        outputs.commit()?;
        return Ok(code);
    }
    if args.http || args.https {
        return server::run(args);
    }
    // The PDF, `--data` and `-r` of one run appear together or not at all
    // (docs/robustness.md#outputs).
    let outputs = unitrace_core::atomic::OutputSet::begin();
    // Metric vs stall files are told apart by their header (scripts.md 1.2
    // step 9); the chart module decides and hands stall files to `stall`.
    let code = charts::run(args)?;
    outputs.commit()?;
    Ok(code)
}
