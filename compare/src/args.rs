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
                  directories, result-dir trees, merged traces), summary JSONs or metric CSVs; or \
                  repeated runs, BASE1 BASE2 ... --vs CAND1 CAND2 ... (or folders of runs), whose \
                  run-to-run noise then decides what is significant. \
                  Exit 3 when a --fail-if threshold is exceeded, 1 on bad input, 2 on usage errors.",
    override_usage = "compare [OPTIONS] BASELINE CANDIDATE\n       \
                      compare [OPTIONS] BASE1 BASE2 ... --vs CAND1 CAND2 ...\n       \
                      compare [OPTIONS] METRICS.csv [METRICS2.csv] --instances KERNEL:N KERNEL:M",
    infer_long_args = true
)]
pub struct Args {
    /// The baseline run and the candidate run; with --vs, every one is a
    /// baseline run (repeated runs), and --vs names the candidate runs.
    #[arg(value_name = "RUN", required = true, num_args = 1..)]
    pub runs: Vec<PathBuf>,

    /// The candidate runs, when the positional runs are all baselines:
    /// `compare BASE1 BASE2 BASE3 --vs CAND1 CAND2 CAND3`.
    #[arg(long, value_name = "CANDIDATE", num_args = 1..)]
    pub vs: Vec<PathBuf>,

    /// A change is significant when it exceeds this, relative AND absolute:
    /// `REL%,ABS` with a time unit (`5%,10us`, the default); either part
    /// alone keeps the other's default.
    #[arg(long, value_name = "REL%,ABS")]
    pub threshold: Option<String>,

    /// Level of the run-to-run test with repeated runs (two-sided).
    #[arg(long, value_name = "P", default_value_t = crate::significance::DEFAULT_ALPHA)]
    pub alpha: f64,

    /// How far kernel names are matched: exact, also without the launch
    /// shape, also with template arguments normalised.
    #[arg(long = "match", value_enum, default_value = "shape")]
    pub level: MatchLevel,

    /// Fail (exit 3) when a change exceeds a threshold:
    /// `SELECTOR[@METRIC](>|<)THRESHOLD` with a unit or %, e.g. `total>+2%`,
    /// `kernel:gemm*>+5%`, `kernel:gemm*>+100us`, `kernel:*@XVE_ACTIVE[%].mean<-5pt`.
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
