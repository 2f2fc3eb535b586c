//! Command line of `analyze`, a drop-in for analyzeperfmetrics.py
//! (docs/compatibility.md#analyze-flags): same short and long flags, same defaults, argparse-style
//! abbreviations of long options (`infer_long_args`). The `-f` option file
//! (docs/formats.md#option-file) is expanded in place before clap sees the arguments
//! (`crate::option_file`); `crate::plan` turns the result into what a run
//! does.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// Default X-axis label of metric charts (`-x`).
pub const DEFAULT_XLABEL: &str = "Time(in sampling intervals)";
/// Default first title line of every chart (`-t`).
pub const DEFAULT_TITLE: &str = "Performance Metrics";

#[derive(Parser, Debug, Clone)]
#[command(
    name = "analyze",
    version,
    about = "Charts, listings and stall-to-source reports from unitrace metric and stall CSVs",
    infer_long_args = true
)]
pub struct Args {
    /// List devices, metrics and kernels (with instance counts) of the input.
    #[arg(short = 'l', long = "list")]
    pub list: bool,

    /// Device section to analyse (the N of `=== Device #N Metrics ===`).
    #[arg(
        short = 'd',
        long = "device",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub device: i64,

    /// Kernel to analyse: full name with shape for metric files, without
    /// shape for stall files. Default: all kernels.
    #[arg(short = 'k', long = "kernel")]
    pub kernel: Option<String>,

    /// 1-based instance of each selected kernel; 0 or negative = all.
    #[arg(
        short = 'i',
        long = "instance",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    pub instance: i64,

    /// One chart: comma-separated metric names (repeatable; pairs with -y).
    #[arg(short = 'm', long = "metrics")]
    pub metrics: Vec<String>,

    /// Y-axis label of the -m chart at the same position (repeatable).
    #[arg(short = 'y', long = "ylabel")]
    pub ylabels: Vec<String>,

    /// One throughput chart: comma-separated metrics divided by GpuTime[ns].
    #[arg(short = 'b', long = "throughput")]
    pub throughput: Vec<String>,

    /// X-axis label of metric and throughput charts.
    #[arg(
        short = 'x',
        long = "xlabel",
        default_value = DEFAULT_XLABEL
    )]
    pub xlabel: String,

    /// X axis of metric and throughput charts: `sample`, the sampling
    /// interval within the instance (the original's), or `time`, the
    /// sample's time in µs since the instance's first sample (from
    /// `QueryBeginTime[ns]`).
    #[arg(long = "x", value_enum, default_value_t = XAxis::Sample, value_name = "AXIS")]
    pub x_axis: XAxis,

    /// First title line of every chart.
    #[arg(short = 't', long = "title", default_value = DEFAULT_TITLE)]
    pub title: String,

    /// Output file: charts (PDF unless --format says otherwise), or the
    /// listing with -l (stdout without -o).
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,

    /// IGC shader dump directory: enables the stall-to-source report.
    #[arg(short = 's', long = "shaderdump")]
    pub shaderdump: Option<PathBuf>,

    /// Entries per stall type in the report; negative = unlimited.
    #[arg(
        short = 'n',
        long = "numtopstalls",
        default_value_t = 10,
        allow_negative_numbers = true
    )]
    pub numtopstalls: i64,

    /// External demangler program used instead of the built-in one.
    #[arg(short = 'g', long = "demangler")]
    pub demangler: Option<PathBuf>,

    /// Also write the stall report to this text file (needs -s).
    #[arg(short = 'r', long = "report")]
    pub report: Option<PathBuf>,

    /// Serve charts over HTTP for the links in a Perfetto trace.
    #[arg(short = 'q', long = "http")]
    pub http: bool,

    /// Serve charts over HTTPS (legacy https links).
    #[arg(short = 'p', long = "https")]
    pub https: bool,

    /// TLS certificate for -p (PEM).
    #[arg(short = 'c', long = "certificate")]
    pub certificate: Option<PathBuf>,

    /// TLS private key for -p (PEM).
    #[arg(short = 'e', long = "key")]
    pub key: Option<PathBuf>,

    /// Read more options from a file (expanded where it appears).
    #[arg(short = 'f', long = "config", value_name = "FILE")]
    pub config: Vec<PathBuf>,

    /// Chart output format (default: pdf).
    #[arg(long = "format", value_enum)]
    pub format: Option<ChartFormat>,

    /// Also write the plotted series as CSV (kernel, instance, sample,
    /// metric, value).
    #[arg(long = "data", value_name = "FILE")]
    pub data: Option<PathBuf>,

    /// Form of the stall report written with -r.
    #[arg(long = "report-format", value_enum, default_value_t = ReportFormat::Text)]
    pub report_format: ReportFormat,

    /// Stall report aggregated per source file:line.
    #[arg(long = "by-line")]
    pub by_line: bool,

    /// With --by-line: list the instructions of one source line (FILE:LINE).
    #[arg(long = "line", value_name = "FILE:LINE")]
    pub line: Option<String>,

    /// INPUT is a `unitrace --result-dir` directory: its
    /// `**/metrics/metrics_<n>.csv` files are the devices (see --rank).
    #[arg(long = "result-dir")]
    pub result_dir: bool,

    /// With --result-dir: the MPI rank whose device -d is used (needed when
    /// several ranks have that device).
    #[arg(long = "rank", value_name = "R", requires = "result_dir")]
    pub rank: Option<u32>,

    /// Keep query reports that unitrace flags as invalid (ReportError,
    /// ReportLost, OverrunOccured, ...); they are left out by default.
    #[arg(long = "keep-invalid", conflicts_with = "strict")]
    pub keep_invalid: bool,

    /// Leave out doubtful query reports too (QuerySplitOccurred,
    /// MidQuery*, CoreFrequencyChanged, ReportCtxSwitchLost).
    #[arg(long = "strict")]
    pub strict: bool,

    /// Port of the -q/-p server (127.0.0.1 only).
    #[arg(long = "port", default_value_t = 8000)]
    pub port: u16,

    /// Metric or stall CSV written by unitrace.
    pub input: PathBuf,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartFormat {
    Pdf,
    Svg,
    Html,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    Sample,
    Time,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Text,
    Json,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn accepts_argparse_abbreviations_and_attached_values() {
        let args =
            Args::try_parse_from(["analyze", "--inst", "0", "-d1", "--kern=K", "x.csv"]).unwrap();
        assert_eq!(args.instance, 0);
        assert_eq!(args.device, 1);
        assert_eq!(args.kernel.as_deref(), Some("K"));
    }

    #[test]
    fn x_names_the_axis_and_abbreviations_still_name_xlabel() {
        let parse = |argv: &[&str]| Args::try_parse_from(argv.iter().copied());
        let args = parse(&["analyze", "--x", "time", "x.csv"]).unwrap();
        assert_eq!(args.x_axis, XAxis::Time);
        assert_eq!(args.xlabel, DEFAULT_XLABEL);
        let args = parse(&["analyze", "--x=sample", "-x", "M", "x.csv"]).unwrap();
        assert_eq!(args.x_axis, XAxis::Sample);
        assert_eq!(args.xlabel, "M");
        let args = parse(&["analyze", "--xlab", "L", "x.csv"]).unwrap();
        assert_eq!((args.x_axis, args.xlabel.as_str()), (XAxis::Sample, "L"));
        // argparse read `--x LABEL` as `--xlabel LABEL`; now `--x` is the
        // axis (docs/compatibility.md#analyze-flags).
        assert!(parse(&["analyze", "--x", "Time", "x.csv"]).is_err());
    }
}
