//! `uniview`: open a trace in ui.perfetto.dev and serve the metric charts its
//! kernel events link to (drop-in for uniview.py, docs/compatibility.md#uniview).
//!
//! Decisions (the "fix/decide" list of docs/compatibility.md#uniview):
//! * the trace file is never modified: a truncated trace is repaired in
//!   memory ([`TracePlan`]) and the repaired bytes are served;
//! * only that one file is served (at `/<its name>`), not its directory;
//! * the file name is URL-encoded in the Perfetto link;
//! * a metrics file with neither a `GlobalInstanceId` nor an `IP[Address]`
//!   column is an error, not a stall file;
//! * http vs https follows the trace's first chart link, not any `https://`;
//! * the browser is opened only when one can be (`xdg-open` on PATH and a
//!   display), otherwise the link is printed and that is all;
//! * one-shot trace server: without `-m` it stops once the whole trace has
//!   been sent once (the original stops after the first GET, even a 404, so
//!   a stray request or a reload could leave Perfetto with nothing). With
//!   `-m` it keeps serving next to the chart server until Ctrl-C, so
//!   reloading the Perfetto tab works; the chart server is started first,
//!   so links work as soon as the trace shows.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;

use anyhow::{bail, Context};
use clap::Parser;

use super::http::{self, Limits};
use super::service::{FileKey, RoutedService};
use super::trace::{
    first_metric_link, first_metric_link_in, perfetto_url, LinkScheme, TraceHandler, TracePlan,
    LINK_PORT,
};
use unitrace_core::cli::warn;
use unitrace_core::result_dir::{parse_rank_list, ResultDir, TraceFormat};

use crate::option_file::server_options;
use crate::plan::{ChartOptions, ServePlan, StallOptions, TlsFiles};

#[derive(Parser, Debug, Clone)]
#[command(
    name = "uniview",
    version,
    about = "Open a unitrace trace in ui.perfetto.dev and serve the metric charts its kernels link to",
    infer_long_args = true
)]
pub struct UniviewArgs {
    /// Trace written by unitrace (.pftrace or legacy .json).
    #[arg(short = 't', long = "trace")]
    pub trace: Option<PathBuf>,

    /// Directory that holds metrics files and trace file (`unitrace
    /// --result-dir`).
    #[arg(long = "result-dir", value_name = "DIR")]
    pub result_dir: Option<PathBuf>,

    /// With --result-dir: only these MPI ranks (`0 2` or `0-3,7`).
    #[arg(long = "ranks", num_args = 1.., value_name = "R")]
    pub ranks: Vec<String>,

    /// Metric or stall CSV to serve charts for.
    #[arg(short = 'm', long = "metrics")]
    pub metrics: Option<PathBuf>,

    /// analyze option file (-m/-y/-b… lists) for metric CSVs.
    #[arg(short = 'f', long = "config")]
    pub config: Option<PathBuf>,

    /// IGC shader dump folder, for the stall report of stall CSVs.
    #[arg(short = 's', long = "shaderdump")]
    pub shaderdump: Option<PathBuf>,

    /// Entries per stall type in the stall report; negative = unlimited.
    #[arg(
        short = 'n',
        long = "numtopstalls",
        default_value_t = 10,
        allow_negative_numbers = true
    )]
    pub numtopstalls: i64,

    /// External demangler for the stall report.
    #[arg(short = 'g', long = "demangler")]
    pub demangler: Option<PathBuf>,

    /// Port of the trace server (127.0.0.1 only; 0 = any free port).
    #[arg(long = "trace-port", default_value_t = 9001)]
    pub trace_port: u16,

    /// Port of the chart server; the trace's links point at 8000.
    #[arg(long = "port", default_value_t = 8000)]
    pub port: u16,

    /// Only print the Perfetto link, never start a browser.
    #[arg(long = "no-browser")]
    pub no_browser: bool,

    /// With --result-dir and several traces: the largest total size of the
    /// traces merged in memory and served (MiB).
    /// From 0 (never merge: use mergetrace) to 65536 (64 GiB).
    #[arg(long = "max-merge-mib", value_name = "MIB", default_value_t = DEFAULT_MAX_MERGE_MIB,
          value_parser = clap::value_parser!(u64).range(0..=65536))]
    pub max_merge_mib: u64,
}

/// Default of `--max-merge-mib`: the merge of several traces is held in
/// memory and the browser loads it whole; beyond ~1 GB ui.perfetto.dev
/// runs out of memory anyway (docs/uniview.md#result-dir).
pub const DEFAULT_MAX_MERGE_MIB: u64 = 1024;

/// Which kind of CSV `-m` names (docs/compatibility.md#uniview-checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricsKind {
    Metric,
    Stall,
}

/// Bytes of the metrics file searched for its header: headers follow the
/// device banner within a few lines; a file whose first MiB has none is not
/// a unitrace CSV.
const KIND_SCAN_BYTES: u64 = 1 << 20;

/// Reads lines until one holds `GlobalInstanceId` (metric CSV) or
/// `IP[Address]` (stall CSV). Neither is an error (the original falls back
/// to stall mode).
pub fn metrics_kind(path: &Path) -> anyhow::Result<MetricsKind> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("Metrics file {} cannot be read", path.display()))?;
    let mut reader = BufReader::new(std::io::Read::take(file, KIND_SCAN_BYTES));
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("Metrics file {} cannot be read", path.display()))?;
        if n == 0 {
            bail!(
                "Metrics file {} is neither a metric CSV (no GlobalInstanceId column) nor a stall CSV (no IP[Address] column)",
                path.display()
            );
        }
        if memchr::memmem::find(&line, b"GlobalInstanceId").is_some() {
            return Ok(MetricsKind::Metric);
        }
        if memchr::memmem::find(&line, b"IP[Address]").is_some() {
            return Ok(MetricsKind::Stall);
        }
    }
}

/// The argument checks of uniview.py's `--result-dir` version, argparse
/// errors there (usage, exit 2): the message, or `None` when the arguments
/// fit together.
pub fn usage_problem(args: &UniviewArgs) -> Option<String> {
    match &args.result_dir {
        Some(dir) => {
            if !dir.exists() {
                return Some(format!(
                    "Result directory '{}' does not exist",
                    dir.display()
                ));
            }
            if !dir.is_dir() {
                return Some(format!(
                    "Result directory '{}' is not a directory",
                    dir.display()
                ));
            }
            if args.trace.is_some() {
                return Some("--result-dir cannot be used together with --trace".into());
            }
            if args.metrics.is_some() {
                return Some("--result-dir cannot be used together with --metrics".into());
            }
            if let Err(e) = parse_rank_list(&args.ranks) {
                return Some(format!("--ranks: {e}"));
            }
            None
        }
        None if args.trace.is_none() => {
            Some("--trace is required when --result-dir is not provided".into())
        }
        None if !args.ranks.is_empty() => Some("--ranks can only be used with --result-dir".into()),
        None => None,
    }
}

/// One metric file of a result dir, with the rank and device it answers
/// for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricFile {
    pub path: PathBuf,
    pub key: FileKey,
}

/// The query uniview appends to the metric links of a trace of the tree
/// (docs/uniview.md#result-dir): `rank=R`, else `process=<app>.<pid>`
/// (percent-encoded) of its folder.
fn link_tag(found: &unitrace_core::result_dir::Found) -> Option<String> {
    match (found.rank, &found.process) {
        (Some(rank), _) => Some(format!("rank={rank}")),
        (None, Some(p)) => Some(format!(
            "process={}",
            super::trace::encode_component(&format!("{}.{}", p.app, p.pid))
        )),
        (None, None) => None,
    }
}

/// `<app>.<pid>` of a file's process folder.
fn process_name(found: &unitrace_core::result_dir::Found) -> Option<String> {
    found
        .process
        .as_ref()
        .map(|p| format!("{}.{}", p.app, p.pid))
}

/// What `--result-dir DIR [--ranks ...]` resolves to.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The arguments of a `-t -m` run: `trace` is the one trace file (or,
    /// when several are merged, the first of them, for the checks), `metrics`
    /// the first metric file.
    pub args: UniviewArgs,
    /// Several traces: their merge, built in memory, and the name it is
    /// served under.
    pub merged: Option<(PathBuf, Vec<u8>)>,
    /// Every metric file of the selected ranks (rank, device order).
    pub metric_files: Vec<MetricFile>,
}

/// The file name uniview.py gives the merge of several traces
/// (`combined_trace[_ranks_<sorted ranks>].<ext>`); here it only names the
/// merge served from memory.
pub fn combined_name(ranks: Option<&[u32]>, ext: &str) -> String {
    match ranks {
        None => format!("combined_trace.{ext}"),
        Some(ranks) => {
            let mut sorted = ranks.to_vec();
            sorted.sort_unstable();
            let joined: Vec<String> = sorted.iter().map(u32::to_string).collect();
            format!("combined_trace_ranks_{}.{ext}", joined.join("_"))
        }
    }
}

/// `--result-dir DIR [--ranks ...]`: the trace(s) and metric files of the
/// tree (docs/uniview.md#result-dir), found by `unitrace_core::result_dir`
/// (JSON preferred over .pftrace, rank order). Several traces are merged in
/// memory as `mergetrace` merges them, with `?rank=R` added to every metric
/// link; nothing is written into the tree. `None` after the original's
/// message when there is no trace.
pub fn resolve_result_dir(
    args: &UniviewArgs,
    out: &mut impl Write,
) -> anyhow::Result<Option<Resolved>> {
    let Some(dir) = &args.result_dir else {
        return Ok(Some(Resolved {
            args: args.clone(),
            merged: None,
            metric_files: Vec::new(),
        }));
    };
    let ranks = if args.ranks.is_empty() {
        None
    } else {
        Some(parse_rank_list(&args.ranks).map_err(|e| anyhow::anyhow!("--ranks: {e}"))?)
    };
    let tree = ResultDir::open(dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    // FIFOs, unreadable files, link loops: one warning each, and the
    // server starts without them (docs/robustness.md#walked-folders).
    for (path, problem) in &tree.unreadable {
        warn("uniview", format!("{}: {problem}", path.display()));
    }
    let traces = tree.traces(ranks.as_deref());
    let mut merged = None;
    let trace = match traces.files.as_slice() {
        [] => {
            let _ = writeln!(out, "Trace file is missing under {}", shown(dir));
            return Ok(None);
        }
        [one] => {
            let _ = writeln!(out, "Using trace file: {}", shown(&one.path));
            one.path.clone()
        }
        several => {
            let format = traces.format.unwrap_or(TraceFormat::Json);
            let ext = match format {
                TraceFormat::Json => "json",
                TraceFormat::Pftrace => "pftrace",
            };
            // uniview.py's line (it says chrome_trace.json for both formats;
            // we name the format found).
            let _ = write!(
                out,
                "Multiple {} files found under {}",
                format.file_name(),
                shown(dir)
            );
            if let Some(ranks) = &ranks {
                let list: Vec<String> = ranks.iter().map(u32::to_string).collect();
                let _ = write!(out, " for ranks [{}]", list.join(", "));
            }
            let _ = writeln!(out);
            for r in &traces.missing_ranks {
                warn(
                    "uniview",
                    format!("{}: no trace of rank {r}; merged without it", dir.display()),
                );
            }
            let total: u64 = several
                .iter()
                .map(|f| std::fs::metadata(&f.path).map_or(0, |m| m.len()))
                .sum();
            let cap = args.max_merge_mib.saturating_mul(1 << 20);
            if total > cap {
                bail!(
                    "{}: the {} traces hold {} MiB, more than the {} MiB uniview merges in memory (--max-merge-mib): merge them with `mergetrace --result-dir {} -o merged.{ext}` and run `uniview -t merged.{ext}`",
                    dir.display(),
                    several.len(),
                    total.div_ceil(1 << 20),
                    args.max_merge_mib,
                    dir.display()
                );
            }
            let inputs: Vec<mergetrace::MemoryInput> = several
                .iter()
                .map(|f| mergetrace::MemoryInput {
                    path: f.path.clone(),
                    rank: f.rank,
                    link_tag: link_tag(f),
                })
                .collect();
            let bytes = mergetrace::merge_in_memory(&inputs)?;
            let name = combined_name(ranks.as_deref(), ext);
            let _ = writeln!(
                out,
                "Merged {} trace files in memory as {name} ({} bytes); nothing is written under {}",
                several.len(),
                bytes.len(),
                shown(dir)
            );
            merged = Some((PathBuf::from(name), bytes));
            several[0].path.clone()
        }
    };
    let metric_files: Vec<MetricFile> = tree
        .metric_files(ranks.as_deref())
        .into_iter()
        .map(|f| MetricFile {
            path: f.path.clone(),
            key: FileKey {
                rank: f.rank,
                device: f.device(),
                process: process_name(f),
            },
        })
        .collect();
    let mut resolved = args.clone();
    resolved.trace = Some(trace);
    resolved.metrics = metric_files.first().map(|f| f.path.clone());
    resolved.result_dir = None;
    resolved.ranks.clear();
    Ok(Some(Resolved {
        args: resolved,
        merged,
        metric_files,
    }))
}

/// The checks of docs/compatibility.md#uniview-checks, in the original's order and with
/// its words (each exits 1), in the `FILE: problem` style of all tools
/// (docs/errors.md#one-line). Returns the kind of `-m`, if given.
pub fn check(args: &UniviewArgs) -> anyhow::Result<Option<MetricsKind>> {
    let Some(trace) = &args.trace else {
        bail!("Trace file is missing");
    };
    if !trace.exists() {
        bail!("{}: trace file is not found", trace.display());
    }
    if trace.is_dir() {
        bail!("{}: trace file is a directory", trace.display());
    }
    let Some(metrics) = &args.metrics else {
        if args.config.is_some() || args.shaderdump.is_some() {
            bail!("Metrics file is missing");
        }
        return Ok(None);
    };
    if !metrics.is_file() {
        bail!("{}: metrics file is not found", metrics.display());
    }
    let kind = metrics_kind(metrics)?;
    if kind == MetricsKind::Metric {
        match &args.config {
            None => bail!("Config file is missing: metric charts need their options, e.g. -f pvc/ComputeBasic.txt (a built-in preset) or -f FILE (docs/uniview.md)"),
            // An option file that cannot be read is a usage error (exit 2)
            // in both uniview and analyze -f (docs/robustness.md#exit-codes).
            // `-f pvc/ComputeBasic.txt` names a built-in preset when no such file
            // exists, as for `analyze -f` (docs/compatibility.md#analyze-option-file).
            Some(config)
                if !config.is_file() && crate::option_file::builtin_preset(config).is_none() =>
            {
                let reason = match std::fs::metadata(config) {
                    Ok(_) => "is a directory".to_string(),
                    Err(e) => unitrace_core::InputError::io(config, &e).problem,
                };
                return Err(crate::option_file::OptionFileError::Open {
                    path: config.display().to_string(),
                    reason,
                }
                .into());
            }
            Some(_) => {}
        }
    }
    if let Some(dump) = &args.shaderdump {
        if !dump.exists() {
            bail!("{}: shader dump folder is not found", dump.display());
        }
    }
    Ok(Some(kind))
}

/// The chart server uniview starts for the metrics file
/// (docs/compatibility.md#uniview-trace-server): for metric CSVs the chart options of the `-f` option file, for
/// stall CSVs the `-s -g -n` of uniview; HTTP or HTTPS as the trace's links
/// say, on `--port`.
pub fn serve_plan(args: &UniviewArgs, kind: MetricsKind, https: bool) -> anyhow::Result<ServePlan> {
    let Some(metrics) = &args.metrics else {
        bail!("Metrics file is missing");
    };
    let (charts, stall, tls) = match (kind, &args.config) {
        (MetricsKind::Metric, Some(config)) => {
            let options = server_options(config, metrics)?;
            (options.charts, options.stall, options.tls)
        }
        (MetricsKind::Metric, None) => bail!("Config file is missing: metric charts need their options, e.g. -f pvc/ComputeBasic.txt (a built-in preset) or -f FILE (docs/uniview.md)"),
        (MetricsKind::Stall, _) => (
            ChartOptions::default(),
            StallOptions {
                shaderdump: args.shaderdump.clone(),
                numtopstalls: args.numtopstalls,
                demangler: args.demangler.clone(),
            },
            TlsFiles::default(),
        ),
    };
    ServePlan::new(
        metrics.clone(),
        charts,
        stall,
        https.then_some(tls),
        args.port,
    )
}

/// Starts `xdg-open URL` when a browser can be shown: `xdg-open` is on PATH
/// and a display (X11 or Wayland) is set. Never fails the run.
fn open_browser(url: &str) -> bool {
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
    if !has_display || !on_path("xdg-open") {
        return false;
    }
    match Command::new("xdg-open")
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(mut child) => {
            // Reap it in the background so it never lingers as a zombie.
            std::thread::spawn(move || {
                let _ = child.wait();
            });
            true
        }
        Err(_) => false,
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let candidate = dir.join(program);
            candidate.metadata().is_ok_and(|m| {
                m.is_file()
                    && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
            })
        })
    })
}

/// The options of each kind of file of a result dir, which may hold both
/// (docs/uniview.md#result-dir): `metric` (the `-f` options) for metric
/// files, `stall` (uniview's `-s -n -g`) for stall files.
struct KindPlans {
    metric: ServePlan,
    stall: ServePlan,
}

impl KindPlans {
    /// `first`: the plan of the first file, of kind `kind`. The other
    /// kind's plan from `args`; metric files without `-f` (a tree whose
    /// first file is a stall file) get `first`'s options, as before.
    fn new(
        args: &UniviewArgs,
        first: &ServePlan,
        kind: MetricsKind,
        https: bool,
    ) -> anyhow::Result<KindPlans> {
        Ok(match kind {
            MetricsKind::Metric => KindPlans {
                metric: first.clone(),
                stall: serve_plan(args, MetricsKind::Stall, https)?,
            },
            MetricsKind::Stall => KindPlans {
                metric: match args.config {
                    Some(_) => serve_plan(args, MetricsKind::Metric, https)?,
                    None => first.clone(),
                },
                stall: first.clone(),
            },
        })
    }

    /// The plan of `path` (a file of neither kind fails its check later
    /// and is listed with its error).
    fn of(&self, path: &Path) -> ServePlan {
        let mut plan = match metrics_kind(path) {
            Ok(MetricsKind::Stall) => self.stall.clone(),
            _ => self.metric.clone(),
        };
        plan.input = path.to_path_buf();
        plan
    }
}

/// A path as the lines on stdout show it: the names of a result dir are
/// input, so their control bytes are escaped (docs/robustness.md#messages).
fn shown(path: &Path) -> String {
    unitrace_core::cli::escape_controls(&path.display().to_string())
}

/// The chart server of several metric files (docs/uniview.md#result-dir):
/// one [`RoutedService`] over them, indexed in parallel, each file with
/// the options of its kind; the listener (port, TLS) of `plan`, made for
/// the first file.
fn prepare_routed(
    plan: &ServePlan,
    kinds: &KindPlans,
    root: &Path,
    files: &[MetricFile],
    out: &mut impl Write,
) -> anyhow::Result<super::ChartServer> {
    // The notices of `super::prepare` (the original's chart server prints them).
    let _ = writeln!(out, "No output to file");
    let _ = writeln!(
        out,
        "Options -o/--output, -r/--report, -k/--kernel, -i/--instance and -d/--device are ignored if they are present"
    );
    let _ = writeln!(
        out,
        "Serving charts of {} metric files: {}",
        files.len(),
        files
            .iter()
            .map(|f| shown(&f.path))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let tls = match &plan.tls {
        Some(files) => Some(super::tls::server_config(
            files.certificate.as_deref(),
            files.key.as_deref(),
            out,
        )?),
        None => None,
    };
    let plans: Vec<(ServePlan, FileKey)> = files
        .iter()
        .map(|f| (kinds.of(&f.path), f.key.clone()))
        .collect();
    // A file that is empty, of neither kind or malformed is listed on the
    // index with its error and not served; the others are
    // (docs/uniview.md#result-dir-index).
    let service =
        RoutedService::open(&plans, &routed_file_check)?.with_root(root, &plan.charts.title);
    for (_, error) in service.unreadable() {
        warn(
            "uniview",
            format!("{error} (this metric file is not served; the others are)"),
        );
    }
    let listener = http::bind_loopback(plan.port)
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", plan.port))?;
    Ok(super::ChartServer {
        listener,
        tls,
        service: Arc::new(service),
        limits: Limits::default(),
    })
}

/// The checks a metric file of a result dir passes before it is indexed:
/// those `-m` gets (docs/compatibility.md#uniview-checks).
fn routed_file_check(path: &Path) -> anyhow::Result<()> {
    super::check_input(path)?;
    metrics_kind(path)?;
    Ok(())
}

/// The whole uniview flow (docs/compatibility.md#uniview).
pub fn run(args: &UniviewArgs) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout();
    let root = args.result_dir.clone().unwrap_or_default();
    let Some(mut resolved) = resolve_result_dir(args, &mut stdout)? else {
        return Ok(ExitCode::from(unitrace_core::cli::EXIT_FAILURE));
    };
    // The checks and the chart options go by the first metric file that
    // passes them: one bad file of a result dir must not stop the others
    // from being served (when none passes, the first one's error stands).
    if let Some(good) = resolved
        .metric_files
        .iter()
        .find(|f| routed_file_check(&f.path).is_ok())
    {
        resolved.args.metrics = Some(good.path.clone());
    }
    let args = &resolved.args;
    let kind = check(args)?;
    let (trace, plan) = match resolved.merged {
        Some((name, bytes)) => (name.clone(), TracePlan::in_memory(name, bytes)),
        None => {
            let trace = args.trace.clone().unwrap_or_default();
            let plan = TracePlan::for_file(&trace)?;
            (trace, plan)
        }
    };
    if let Some(note) = &plan.gzip_note {
        unitrace_core::cli::warn(
            "uniview",
            format!("{}: {note}; serving it inflated", shown(&trace)),
        );
    }
    if let Some(dropped) = plan.dropped_bytes {
        let _ = writeln!(
            stdout,
            "Trace file {} is truncated: serving it repaired in memory ({dropped} bytes after the last complete event left out); the file is not modified",
            shown(&trace)
        );
    }
    // The chart server is prepared (file indexed, port bound) before the
    // trace is offered, so a problem shows before the browser opens.
    let charts = match kind {
        Some(kind) => {
            let link = match &plan.memory {
                Some(bytes) => first_metric_link_in(&bytes[..]),
                None => first_metric_link(&trace),
            }
            .with_context(|| format!("Trace file {} cannot be read", trace.display()))?;
            // The trace's links name port 8000; charts on another port are
            // out of their reach: one warning, not silence
            // (docs/compatibility.md#analyze-option-file).
            if link.is_some() && args.port != LINK_PORT {
                unitrace_core::cli::warn(
                    "uniview",
                    format!(
                        "{}: the trace's metric links point at localhost:{LINK_PORT}, but --port {} serves the charts elsewhere; the links will not reach them",
                        trace.display(),
                        args.port
                    ),
                );
            }
            let https = link == Some(LinkScheme::Https);
            let plan = serve_plan(args, kind, https)?;
            super::check_input(&plan.input)?;
            // From a result dir even one file is routed: a link tagged with
            // another rank must not be answered from this rank's file.
            if !resolved.metric_files.is_empty() {
                let kinds = KindPlans::new(args, &plan, kind, https)?;
                Some(prepare_routed(
                    &plan,
                    &kinds,
                    &root,
                    &resolved.metric_files,
                    &mut stdout,
                )?)
            } else {
                Some(super::prepare(&plan, &mut stdout)?)
            }
        }
        None => None,
    };
    let limits = Limits::default();
    let listener = http::bind_loopback(args.trace_port)
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.trace_port))?;
    let port = listener.local_addr()?.port();
    let file_name = plan
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let url = perfetto_url(port, &file_name);
    let runtime = http::runtime(&limits).context("cannot start the server threads")?;
    let ctrl_c = {
        let _inside = runtime.enter();
        super::CtrlC::watch().context("cannot watch Ctrl-C")?
    };
    let delivered = Arc::new(tokio::sync::Notify::new());
    let notify = delivered.clone();
    let handler = Arc::new(TraceHandler::new(
        plan,
        Arc::new(move || notify.notify_one()),
    ));
    let _ = writeln!(stdout, "Open {url} in a browser to view the trace");
    if let Some(charts) = &charts {
        let _ = writeln!(
            stdout,
            "Serving charts on {} (Ctrl-C to stop)",
            charts.url()
        );
    }
    let _ = stdout.flush();
    if !args.no_browser && open_browser(&url) {
        let _ = writeln!(stdout, "Opened the trace in the browser");
    }
    runtime.block_on(async move {
        match charts {
            None => {
                // One-shot: stop once the trace has been sent whole.
                let stop = async move { delivered.notified().await };
                tokio::select! {
                    served = http::serve(listener, None, handler, limits, stop) => served.map(|_| false),
                    _ = ctrl_c.pressed() => Ok(true),
                }
            }
            Some(charts) => {
                let trace = http::serve(listener, None, handler, limits, ctrl_c.clone().pressed());
                let charts = charts.serve(ctrl_c.pressed());
                let (trace, charts) = tokio::join!(trace, charts);
                trace.and(charts).map(|_| true)
            }
        }
    })
    .map(|interrupted| {
        if interrupted {
            println!("Goodbye!");
        } else {
            println!("Trace file {} has been served", shown(&trace));
        }
        ExitCode::SUCCESS
    })
    .map_err(anyhow::Error::from)
}
