//! Command line of `analyze`, a drop-in for analyzeperfmetrics.py
//! (scripts.md 1.1): same short and long flags, same defaults, argparse-style
//! abbreviations of long options (`infer_long_args`) and the `-f` option file
//! (formats (h)), which is expanded in place before clap sees the arguments.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{Parser, ValueEnum};

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
        default_value = "Time(in sampling intervals)"
    )]
    pub xlabel: String,

    /// First title line of every chart.
    #[arg(short = 't', long = "title", default_value = "Performance Metrics")]
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
pub enum ReportFormat {
    Text,
    Json,
}

/// Problem while expanding an option file; reported as a usage error (exit 2)
/// like argparse does.
#[derive(Debug, thiserror::Error)]
pub enum OptionFileError {
    #[error("{path}: cannot open option file: {reason}")]
    Open { path: String, reason: String },
    #[error("{path}: {problem}")]
    Syntax { path: String, problem: String },
    #[error("-f/--config needs a file name")]
    MissingValue,
}

/// Replaces every `-f FILE` / `-fFILE` / `--config FILE` / `--config=FILE`
/// (and unambiguous abbreviations `--co`…`--config`) by the options the file
/// holds, so repeatable options accumulate in command-line order and later
/// single-valued options win (formats (h)).
pub fn expand_option_files(argv: Vec<OsString>) -> Result<Vec<OsString>, OptionFileError> {
    let mut out = Vec::with_capacity(argv.len());
    let mut iter = argv.into_iter();
    if let Some(program) = iter.next() {
        out.push(program);
    }
    let mut only_positionals = false;
    while let Some(arg) = iter.next() {
        let text = arg.to_string_lossy().into_owned();
        if only_positionals {
            out.push(arg);
            continue;
        }
        if text == "--" {
            only_positionals = true;
            out.push(arg);
            continue;
        }
        let file = if text == "-f" || is_config_long(&text) {
            match iter.next() {
                Some(v) => Some(PathBuf::from(v)),
                None => return Err(OptionFileError::MissingValue),
            }
        } else if let Some(rest) = text.strip_prefix("-f").filter(|r| !r.is_empty()) {
            Some(PathBuf::from(rest.strip_prefix('=').unwrap_or(rest)))
        } else if let Some((name, value)) = text.split_once('=') {
            if is_config_long(name) {
                Some(PathBuf::from(value))
            } else {
                None
            }
        } else {
            None
        };
        match file {
            Some(path) => {
                for token in read_option_file(&path)? {
                    out.push(OsString::from(token));
                }
                // Keep the file in `Args::config`: it is an input, which
                // no output may overwrite (issue 10).
                let mut config = OsString::from("--config=");
                config.push(path.as_os_str());
                out.push(config);
            }
            None => out.push(arg),
        }
    }
    Ok(out)
}

/// `--co`, `--con`, … `--config`: the prefixes argparse accepts for
/// `--config` (`--c` is ambiguous with `--certificate`).
fn is_config_long(text: &str) -> bool {
    text.len() >= 4 && text.starts_with("--") && "--config".starts_with(text)
}

/// Reads an option file and splits it like `shlex.split` (POSIX mode).
pub fn read_option_file(path: &Path) -> Result<Vec<String>, OptionFileError> {
    let bytes =
        match unitrace_core::error::read_capped(path, unitrace_core::error::caps::SMALL_FILE_BYTES)
        {
            Ok(bytes) => bytes,
            // `-f pvc/ComputeBasic.txt` and the original's preset paths name
            // our built-in presets when no such file exists (charts.rs).
            Err(e) => match crate::charts::builtin_preset(path) {
                Some(text) if e.kind() == std::io::ErrorKind::NotFound => text.as_bytes().to_vec(),
                _ => {
                    return Err(OptionFileError::Open {
                        path: path.display().to_string(),
                        reason: e.to_string(),
                    })
                }
            },
        };
    let text = String::from_utf8_lossy(&bytes);
    let syntax = |problem| OptionFileError::Syntax {
        path: path.display().to_string(),
        problem,
    };
    let words = shell_split(&text).map_err(syntax)?;
    crate::charts::check_option_words(&words).map_err(syntax)?;
    Ok(words)
}

/// Splits an option file like Python's `shlex.split` (formats (h)); the
/// splitter is shared with roofline's `--app` in `unitrace_core::shell_words`.
pub fn shell_split(text: &str) -> Result<Vec<String>, String> {
    use unitrace_core::shell_words::{split, Dialect};
    split(text, Dialect::Shlex).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_shlex() {
        assert_eq!(
            shell_split("-m \"A[%],B[%]\" -y 'Y label'\n-b x\\ y #z").unwrap(),
            vec!["-m", "A[%],B[%]", "-y", "Y label", "-b", "x y", "#z"]
        );
        assert_eq!(shell_split("a\"b\\\"c\"d").unwrap(), vec!["ab\"cd"]);
        assert!(shell_split("-m \"open").is_err());
        assert_eq!(shell_split("  \n ").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn expands_option_file_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let opts = dir.path().join("opts.txt");
        std::fs::write(&opts, "-m \"B[x]\" -y 'Y2' -t Later").unwrap();
        let argv: Vec<OsString> = [
            "analyze",
            "-m",
            "A[x]",
            "-y",
            "Y1",
            "--conf",
            opts.to_str().unwrap(),
            "-m",
            "C[x]",
            "-y",
            "Y3",
            "in.csv",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let expanded = expand_option_files(argv).unwrap();
        let args = Args::try_parse_from(expanded).unwrap();
        assert_eq!(args.metrics, vec!["A[x]", "B[x]", "C[x]"]);
        assert_eq!(args.ylabels, vec!["Y1", "Y2", "Y3"]);
        assert_eq!(args.title, "Later");
        assert_eq!(args.input, PathBuf::from("in.csv"));
        assert_eq!(args.config, vec![opts]);
    }

    #[test]
    fn accepts_argparse_abbreviations_and_attached_values() {
        let args =
            Args::try_parse_from(["analyze", "--inst", "0", "-d1", "--kern=K", "x.csv"]).unwrap();
        assert_eq!(args.instance, 0);
        assert_eq!(args.device, 1);
        assert_eq!(args.kernel.as_deref(), Some("K"));
    }
}
