//! Command line of `compare` (docs/compare.md#usage).

use std::path::PathBuf;

use clap::Parser;

use crate::matching::MatchLevel;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "compare",
    version,
    about = "Did my change help? Two unitrace runs side by side, per-item deltas, thresholds for CI",
    long_about = "Compares a BASELINE run with a CANDIDATE run of the same kind: rank traces (files, \
                  directories, result-dir trees, merged traces), summary JSONs or metric CSVs. \
                  Exit 3 when a --fail-if threshold is exceeded, 1 on bad input, 2 on usage errors.",
    infer_long_args = true
)]
pub struct Args {
    /// The baseline run.
    #[arg(value_name = "BASELINE")]
    pub baseline: PathBuf,

    /// The candidate run (with --instances, may be left out: the baseline
    /// file's instances are compared).
    #[arg(value_name = "CANDIDATE")]
    pub candidate: Option<PathBuf>,

    /// How far kernel names are matched: exact, also without the launch
    /// shape, also with template arguments normalised.
    #[arg(long = "match", value_enum, default_value = "shape")]
    pub level: MatchLevel,

    /// Fail (exit 3) when a change exceeds a threshold:
    /// `SELECTOR[@METRIC](>|<)THRESHOLD`, e.g. `total>+2%`,
    /// `kernel:gemm*>+5%`, `category:allreduce>+10%`, `kernel:*@XVE_ACTIVE[%].mean<-5`.
    #[arg(long = "fail-if", value_name = "RULE")]
    pub fail_if: Vec<String>,

    /// Metric CSVs: compare two instances, `KERNEL:N KERNEL:M` (N, M from 1).
    #[arg(long, num_args = 2, value_names = ["KERNEL:N", "KERNEL:M"])]
    pub instances: Vec<String>,

    /// Roofline profile pairs on this device file (as `roofline --device`):
    /// BASELINE and CANDIDATE are each `COMPUTE,MEMORY`.
    #[arg(long, value_name = "DEVICE.csv")]
    pub roofline: Option<PathBuf>,

    /// Every row, one line per item and metric (Parquet when FILE ends in
    /// `.parquet`).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,

    /// The whole comparison as one JSON document.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// A pull-request comment: total, gate verdict, top rows per section.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,

    /// One offline HTML page: bars per item and the tables.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// No console table.
    #[arg(short, long)]
    pub quiet: bool,
}
