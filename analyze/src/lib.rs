//! Library part of `analyze`: one module per mode of analyzeperfmetrics.py.
//! Parsing lives in `unitrace-core`; this crate decides what to draw and
//! renders it.
//!
//! Layers, each importing only those below it: `args` (clap) and
//! `option_file` (`-f`) read the command line; `plan` turns it into a
//! [`plan::Plan`]; [`run`] opens the input, decides metric vs stall and
//! dispatches to the modes (`list`, `charts`, `stall`, `server`), which see
//! only plan values.

/// Charts and their writers live in the `unitrace-render` crate, shared with
/// roofline and the report tools; re-exported under the old path.
pub use unitrace_render as render;

pub mod args;
pub mod charts;
pub mod dashboard;
pub mod kernel_match;
pub mod list;
pub mod option_file;
pub mod page_links;
pub mod plan;
pub mod result_dir;
pub mod server;
pub mod stall;
pub mod stall_charts;
pub mod stall_page;
pub mod stall_summary;

use std::process::ExitCode;

use unitrace_core::atomic::{ensure_not_input, same_output_path};
use unitrace_core::metric_csv::{open_input, sniff_kind, FileKind};

use args::Args;
use plan::{ChartsPlan, DrawPlan, ListPlan, Plan, ServePlan, StallsPlan};

/// Runs one invocation of `analyze` (the flow of docs/compatibility.md#analyze-input-checks).
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let plan = plan(args)?;
    // The outputs of one run (`-l -o`; the PDF, `--data` and `-r`) appear
    // together or not at all (docs/robustness.md#outputs). The server
    // writes no file.
    let outputs = unitrace_core::atomic::OutputSet::begin();
    let code = match &plan {
        Plan::List(plan) if plan.result_dir => result_dir::run_list(plan)?,
        Plan::List(plan) => list::run(plan)?,
        Plan::Serve(plan) => server::run(plan)?,
        Plan::Charts(plan) => charts::run(plan)?,
        Plan::Stalls(plan) => stall::run(plan)?,
    };
    outputs.commit()?;
    Ok(code)
}

/// What `args` asks for, checked in the original's order (docs/compatibility.md#analyze-input-checks):
/// the input first, then the options; for `-o`, the input's header decides
/// between metric charts and stall charts (step 9).
pub fn plan(args: &Args) -> anyhow::Result<Plan> {
    // Option files (`-f`) are inputs too: `-f opts.txt -o opts.txt` must
    // not replace them with a chart (docs/errors.md#inputs-never-modified).
    // The data input is checked
    // by each mode.
    let option_files: Vec<&std::path::Path> = args.config.iter().map(|p| p.as_path()).collect();
    for output in [&args.output, &args.data, &args.report]
        .into_iter()
        .flatten()
    {
        ensure_not_input(output, &option_files)?;
    }
    if args.list {
        return Ok(Plan::List(ListPlan::from_args(args)));
    }
    if args.result_dir {
        // The other modes run on the chosen device's file as on a single
        // banner-less CSV (docs/analyze.md#result-dir).
        let files = result_dir::device_files(&args.input)?;
        let chosen = result_dir::choose(&args.input, &files, args.device, args.rank)?;
        let mut one = args.clone();
        one.input = chosen;
        one.device = 0;
        one.result_dir = false;
        one.rank = None;
        return plan(&one);
    }
    if args.http || args.https {
        server::check_input(&args.input)?;
        return Ok(Plan::Serve(ServePlan::from_args(args)?));
    }
    // Steps 1-2: the input exists, is a file, is not empty.
    let input = args.input.as_path();
    let file = open_input(input)?;
    // Steps 4 and 7 (checked before anything else, also for stall files).
    let draw = DrawPlan::from_args(args)?;
    ensure_not_input(&draw.output, &[input])?;
    if let Some(data) = draw.data.as_deref() {
        ensure_not_input(data, &[input])?;
        if same_output_path(data, &draw.output) {
            anyhow::bail!("{}: --data and -o name the same file", data.display());
        }
    }
    // Step 9: metric and stall files are told apart by their header.
    Ok(match sniff_kind(file, input)? {
        FileKind::Metric => Plan::Charts(ChartsPlan::new(draw, args)),
        FileKind::Stall => Plan::Stalls(StallsPlan::new(draw, args)?),
    })
}
