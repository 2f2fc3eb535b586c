//! What one run of `analyze` (or the server of `uniview`) does, as typed
//! values: the command line ([`crate::args::Args`]) is turned into one of
//! these once, and the modes (`list`, `charts`, `stall`, `server`) only see
//! them, never clap types.
//!
//! Checks that need no file keep the original's order
//! (docs/compatibility.md#analyze): the metric/label count before the
//! missing `-o`, `-p` with `-q` after the count. Checks that follow a look
//! at the input (its kind, its devices) stay in the modes.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use unitrace_core::metric_csv::ValidityPolicy;

use crate::args::{self, Args};
use crate::render::Format;

/// One run of `analyze`, decided by `crate::run`.
#[derive(Debug, Clone)]
pub enum Plan {
    /// `-l`: the listing of devices, metrics and kernels.
    List(ListPlan),
    /// `-q`/`-p`: the chart server.
    Serve(ServePlan),
    /// `-o` on a metric CSV: metric and throughput charts.
    Charts(ChartsPlan),
    /// `-o` on a stall CSV: stall charts and the stall-to-source report.
    Stalls(StallsPlan),
}

/// `analyze -l [-o FILE] INPUT`.
#[derive(Debug, Clone)]
pub struct ListPlan {
    pub input: PathBuf,
    /// The listing's file; standard output without one.
    pub output: Option<PathBuf>,
    /// `--result-dir`: `input` is a result directory.
    pub result_dir: bool,
}

impl ListPlan {
    pub fn from_args(args: &Args) -> ListPlan {
        ListPlan {
            input: args.input.clone(),
            output: args.output.clone(),
            result_dir: args.result_dir,
        }
    }
}

/// What the X axis of metric and throughput charts shows (`--x`,
/// docs/analyze.md#time-axis).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum XAxis {
    /// The 0-based sampling interval within the instance (the original's).
    #[default]
    Sample,
    /// Time in µs since the instance's first drawn sample, from
    /// `QueryBeginTime[ns]`.
    Time,
}

/// The chart options shared by `analyze -o` and the server: the `-m -y -b
/// -x -t --x` of the command line (or of uniview's `-f` file).
#[derive(Debug, Clone)]
pub struct ChartOptions {
    pub metrics: Vec<String>,
    pub ylabels: Vec<String>,
    pub throughput: Vec<String>,
    pub xlabel: String,
    pub x_axis: XAxis,
    pub title: String,
    /// Which flagged query reports are left out (`--keep-invalid`,
    /// `--strict`; docs/analyze.md#report-validity).
    pub validity: ValidityPolicy,
}

/// X label of `--x time` charts unless `-x` gives one.
pub const TIME_XLABEL: &str = "Time (µs)";

/// No chart set; analyze's default labels.
impl Default for ChartOptions {
    fn default() -> ChartOptions {
        ChartOptions {
            metrics: Vec::new(),
            ylabels: Vec::new(),
            throughput: Vec::new(),
            xlabel: args::DEFAULT_XLABEL.to_string(),
            x_axis: XAxis::Sample,
            title: args::DEFAULT_TITLE.to_string(),
            validity: ValidityPolicy::default(),
        }
    }
}

impl ChartOptions {
    pub fn from_args(args: &Args) -> ChartOptions {
        ChartOptions {
            metrics: args.metrics.clone(),
            ylabels: args.ylabels.clone(),
            throughput: args.throughput.clone(),
            xlabel: args.xlabel.clone(),
            x_axis: match args.x_axis {
                args::XAxis::Sample => XAxis::Sample,
                args::XAxis::Time => XAxis::Time,
            },
            title: args.title.clone(),
            validity: validity_policy(args),
        }
    }

    /// The X label: `-x`, or for `--x time` with the default `-x`
    /// `Time (µs)`.
    pub fn x_label(&self) -> &str {
        match self.x_axis {
            XAxis::Time if self.xlabel == args::DEFAULT_XLABEL => TIME_XLABEL,
            _ => &self.xlabel,
        }
    }

    /// Every `-m` set needs its `-y` label (docs/compatibility.md#analyze-input-checks).
    pub fn check_labels(&self) -> anyhow::Result<()> {
        if self.metrics.len() != self.ylabels.len() {
            bail!("Number of metric sets does not match number of Y labels");
        }
        Ok(())
    }
}

/// `--keep-invalid` / `--strict` (clap refuses both together).
pub fn validity_policy(args: &Args) -> ValidityPolicy {
    if args.keep_invalid {
        ValidityPolicy::KeepAll
    } else if args.strict {
        ValidityPolicy::Strict
    } else {
        ValidityPolicy::DropInvalid
    }
}

/// Options of the stall report (`-s -n -g`).
#[derive(Debug, Clone, Default)]
pub struct StallOptions {
    pub shaderdump: Option<PathBuf>,
    pub numtopstalls: i64,
    pub demangler: Option<PathBuf>,
}

impl StallOptions {
    pub fn from_args(args: &Args) -> StallOptions {
        StallOptions {
            shaderdump: args.shaderdump.clone(),
            numtopstalls: args.numtopstalls,
            demangler: args.demangler.clone(),
        }
    }
}

/// Certificate and key of an HTTPS server (`-c`, `-e`); a self-signed
/// certificate is made when they are missing.
#[derive(Debug, Clone, Default)]
pub struct TlsFiles {
    pub certificate: Option<PathBuf>,
    pub key: Option<PathBuf>,
}

/// The chart server of `analyze -q/-p` and `uniview`.
#[derive(Debug, Clone)]
pub struct ServePlan {
    /// Metric or stall CSV served.
    pub input: PathBuf,
    pub charts: ChartOptions,
    pub stall: StallOptions,
    /// HTTPS with these files, or plain HTTP.
    pub tls: Option<TlsFiles>,
    /// Port on 127.0.0.1 (0: any free port).
    pub port: u16,
}

impl ServePlan {
    /// A server plan; the `-m`/`-y` counts must match.
    pub fn new(
        input: PathBuf,
        charts: ChartOptions,
        stall: StallOptions,
        tls: Option<TlsFiles>,
        port: u16,
    ) -> anyhow::Result<ServePlan> {
        charts.check_labels()?;
        Ok(ServePlan {
            input,
            charts,
            stall,
            tls,
            port,
        })
    }

    /// `analyze -q|-p` (docs/compatibility.md#analyze-input-checks, after the input checks).
    pub fn from_args(args: &Args) -> anyhow::Result<ServePlan> {
        let charts = ChartOptions::from_args(args);
        charts.check_labels()?;
        if args.http && args.https {
            bail!("Options -p and -q cannot be used at the same time");
        }
        let tls = args.https.then(|| TlsFiles {
            certificate: args.certificate.clone(),
            key: args.key.clone(),
        });
        ServePlan::new(
            args.input.clone(),
            charts,
            StallOptions::from_args(args),
            tls,
            args.port,
        )
    }
}

/// What `-o` mode needs before the input's kind is known: the chart
/// output and what every chart shares.
#[derive(Debug, Clone)]
pub struct DrawPlan {
    pub input: PathBuf,
    pub output: PathBuf,
    pub data: Option<PathBuf>,
    pub format: Format,
    pub device: i64,
    pub kernel: Option<String>,
    pub charts: ChartOptions,
}

impl DrawPlan {
    /// docs/compatibility.md#analyze-input-checks, in that order.
    pub fn from_args(args: &Args) -> anyhow::Result<DrawPlan> {
        let charts = ChartOptions::from_args(args);
        charts.check_labels()?;
        let Some(output) = args.output.clone() else {
            bail!("Error: -o/--output is missing");
        };
        Ok(DrawPlan {
            input: args.input.clone(),
            format: chart_format(args.format, &output),
            output,
            data: args.data.clone(),
            device: args.device,
            kernel: args.kernel.clone(),
            charts,
        })
    }
}

/// Metric charts of a metric CSV (docs/compatibility.md#analyze-pages).
#[derive(Debug, Clone)]
pub struct ChartsPlan {
    pub draw: DrawPlan,
    /// `-i N` with N >= 1; `None` draws every instance.
    pub instance: Option<u32>,
}

impl ChartsPlan {
    pub fn new(draw: DrawPlan, args: &Args) -> ChartsPlan {
        let instance =
            (args.instance >= 1).then(|| u32::try_from(args.instance).unwrap_or(u32::MAX));
        ChartsPlan { draw, instance }
    }
}

/// Form of the `-r` stall report file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportFormat {
    Text,
    Json,
}

/// Which form of the report is produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportView {
    /// The original's report (docs/compatibility.md#analyze-stall-report).
    Standard,
    /// Stall events summed per source line.
    ByLine,
    /// The stalled instructions of one source line.
    Line { file: String, line: u64 },
}

/// `FILE:LINE` of `--line` (the file may itself contain colons).
pub fn parse_line_spec(spec: &str) -> anyhow::Result<(String, u64)> {
    let parsed = spec.rsplit_once(':').and_then(|(file, line)| {
        let n: u64 = line.trim().parse().ok()?;
        (!file.is_empty()).then(|| (file.to_string(), n))
    });
    parsed.with_context(|| format!("--line {spec}: expected FILE:LINE, e.g. grf.cpp:40"))
}

/// Stall charts and report of a stall CSV (docs/compatibility.md#analyze-stall-charts, #analyze-stall-report).
#[derive(Debug, Clone)]
pub struct StallsPlan {
    pub draw: DrawPlan,
    pub stall: StallOptions,
    pub view: ReportView,
    /// The `-r` file.
    pub report: Option<PathBuf>,
    pub report_format: ReportFormat,
}

impl StallsPlan {
    /// The report options; those that need `-s` are refused without it.
    /// (`--report-format json` without `-r` is refused by the mode, after
    /// the dump folder is opened, as before.)
    pub fn new(draw: DrawPlan, args: &Args) -> anyhow::Result<StallsPlan> {
        let view = match &args.line {
            Some(spec) => {
                let (file, line) = parse_line_spec(spec)?;
                ReportView::Line { file, line }
            }
            None if args.by_line => ReportView::ByLine,
            None => ReportView::Standard,
        };
        let report_format = match args.report_format {
            args::ReportFormat::Text => ReportFormat::Text,
            args::ReportFormat::Json => ReportFormat::Json,
        };
        let wants_report_options = args.report.is_some()
            || args.by_line
            || args.line.is_some()
            || report_format == ReportFormat::Json;
        if args.shaderdump.is_none() && wants_report_options {
            bail!("-r/--report, --report-format, --by-line and --line need -s/--shaderdump");
        }
        Ok(StallsPlan {
            draw,
            stall: StallOptions::from_args(args),
            view,
            report: args.report.clone(),
            report_format,
        })
    }
}

/// `--format`, else the output's extension (`.svg`, `.html`/`.htm`), else
/// PDF like the original.
pub fn chart_format(flag: Option<args::ChartFormat>, output: &Path) -> Format {
    match flag {
        Some(args::ChartFormat::Pdf) => Format::Pdf,
        Some(args::ChartFormat::Svg) => Format::Svg,
        Some(args::ChartFormat::Html) => Format::Html,
        None => match output
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .as_deref()
        {
            Some("svg") => Format::Svg,
            Some("html") | Some("htm") => Format::Html,
            _ => Format::Pdf,
        },
    }
}
