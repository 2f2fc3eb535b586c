//! Chart modes of analyze: metric and throughput charts of kernel instances
//! (docs/compatibility.md#analyze-input-checks, #analyze-pages), run on a [`ChartsPlan`].
//!
//! One streaming pass over the input: rows are grouped into kernel
//! instances as they are read; only the columns the charts need are parsed,
//! only for the instances that are drawn, and an instance is dropped as soon
//! as its pages are written. Memory is therefore bounded by the series of
//! the instances being drawn (mode B buffers at most one instance per
//! kernel to keep the original's page order).
//!
//! Quirks of the original fixed here, numbered as in
//! docs/compatibility.md#analyze-quirk-1 and the items after it (each has a test in
//! `analyze/tests/charts.rs`):
//! * 1: mode C reports the instance ordinal, not ordinal x number of `-m`
//!   sets;
//! * 2, 3: the last instance of a section is drawn even when no blank line
//!   follows it, and a double blank line does not re-draw an instance with
//!   an empty kernel name;
//! * 7: the X value of a point is the 0-based ordinal of the sample within
//!   its instance (the original uses the row position in the whole section,
//!   so only the first instance of a section starts at 0). The first
//!   instance of a section therefore looks exactly like the original's;
//! * 15: a banner-less (`--result-dir`) file is device 0;
//! * 16: "has been" instead of "hsa been";
//! * 17: every handled error exits non-zero (the message is the original's,
//!   on stderr as `analyze: FILE: message`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use unitrace_core::atomic::AtomicFile;
use unitrace_core::cli::warn;
use unitrace_core::metric_csv::{
    banner_after, find_device_section, open_input, parse_number, scan_file_sections, CsvReader,
    Field, Header, InstanceEvent, InstanceReader, InstanceSpan, RawRow, ReportValidity,
    SectionKernel, ValidityColumns, ValidityTally, GLOBAL_INSTANCE_ID,
};
use unitrace_core::progress::{self, ProgressBar};
use unitrace_core::InputError;

use crate::dashboard;
use crate::dashboard::data::{Counter, InstanceLabel};
use crate::dashboard::page::{page_config, CompareSource, StaticPage, MANY_INSTANCES};
pub use crate::kernel_match::closest_names;
use crate::kernel_match::{
    ambiguous_message, did_you_mean, resolve_kernel, suggest_metrics, KernelMatch,
};
use crate::plan::{ChartOptions, ChartsPlan, XAxis};
use crate::render::data::{DataLayout, DataWriter, DataX};
use crate::render::{self, Chart, Format, Page, PageSink, Series};

/// Name of the column every throughput chart divides by (docs/compatibility.md#analyze-metric-names).
pub const GPU_TIME: &str = "GpuTime[ns]";
/// Y label of throughput charts of `[bytes]` metrics (bytes per ns are
/// GB/s), the original's label for every `-b` chart.
pub const THROUGHPUT_LABEL: &str = "Throughput(GB/s)";

/// The Y label of a throughput chart of `names` divided by `GpuTime[ns]`:
/// `[bytes]` metrics are GB/s as in the original; other metrics of one unit
/// U are `GU/s` (`[events]` -> `Gevents/s`), since the original's "GB/s"
/// is wrong for them; mixed or missing units are per ns
/// (docs/compatibility.md#analyze-throughput-label).
pub fn throughput_label(names: &[String]) -> String {
    fn unit(name: &str) -> Option<&str> {
        let (_, rest) = name.rsplit_once('[')?;
        rest.strip_suffix(']').map(str::trim)
    }
    let mut units = names.iter().map(|n| unit(n));
    let Some(Some(first)) = units.next() else {
        return "Throughput(per ns)".to_string();
    };
    if !units.all(|u| u == Some(first)) {
        return "Throughput(per ns)".to_string();
    }
    if first.eq_ignore_ascii_case("bytes") {
        THROUGHPUT_LABEL.to_string()
    } else {
        format!("Throughput(G{first}/s)")
    }
}

const TOOL: &str = "analyze";

/// Beyond this many pages a run says on stderr how many it is about to
/// write (`-i 0` on a 300 MB file writes tens of thousands).
pub const MANY_PAGES: usize = 1000;

/// Metric chart mode (docs/compatibility.md#analyze-pages): the caller has checked the input
/// and the outputs and found that the file is a metric CSV.
pub fn run(plan: &ChartsPlan) -> anyhow::Result<ExitCode> {
    let draw = &plan.draw;
    let input = draw.input.as_path();
    // Step 10, after step 8 (the device must exist) as in the original.
    if draw.charts.metrics.is_empty() {
        let sections = scan_file_sections(input)?;
        if find_device_section(&sections, draw.device).is_none() {
            return Err(device_not_found(input, draw.device).into());
        }
        bail!("-m option is missing");
    }
    let mut session = Session::new(plan)?;
    session.read(open_input(input)?)?;
    // A `-k` that is no kernel's exact name may be a unique part of one
    // or a `/regex/` (docs/compatibility.md#analyze-closest-kernel): the
    // first pass found no exact name and drew nothing, and has seen every
    // kernel of the section, so the name is resolved against them and the
    // file read again for it.
    if let Some(kernel) = session.resolved_kernel()? {
        let mut resolved = plan.clone();
        resolved.draw.kernel = Some(kernel);
        let warned = session.warned_rows_before_banner;
        let mut session = Session::new(&resolved)?;
        session.warned_rows_before_banner = warned;
        session.read(open_input(input)?)?;
        return session.finish();
    }
    session.finish()
}

/// `FILE: cannot write the --data file`: a full disk must name the file.
pub(crate) fn data_error(path: Option<&Path>) -> String {
    match path {
        Some(p) => format!("{}: cannot write the --data file", p.display()),
        None => "cannot write the --data file".to_string(),
    }
}

fn device_not_found(path: &Path, device: i64) -> InputError {
    InputError::at_file(path, format!("Device {device} not found in input file"))
}

fn format_name(format: Format) -> &'static str {
    match format {
        Format::Pdf => "PDF",
        Format::Svg => "SVG",
        Format::Html => "HTML",
    }
}

/// One `-m` set (with its `-y` label) or one `-b` set, validated against
/// the header: column indices of its metrics.
#[derive(Debug, Clone)]
pub(crate) struct ChartSet {
    names: Vec<String>,
    columns: Vec<usize>,
    y_label: String,
    throughput: bool,
}

/// The chart sets of one header, in page order: every `-m` set, then every
/// `-b` set (docs/compatibility.md#analyze-pages).
#[derive(Debug, Clone, Default)]
pub(crate) struct ChartSets {
    sets: Vec<ChartSet>,
    /// The `GpuTime[ns]` column, when there is a `-b` set.
    gpu_time: Option<usize>,
    /// The `QueryBeginTime[ns]` column, with `--x time`.
    time: Option<usize>,
}

/// A name of the options that the header does not have; each tool words
/// the message its own way (docs/compatibility.md#analyze-metric-names, #analyze-server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MissingColumn {
    /// A `-m` name, as given (untrimmed, like the original's message).
    Metric(String),
    /// A `-b` name, trimmed.
    Throughput(String),
    /// `GpuTime[ns]`, needed by `-b` (the original crashes without it).
    GpuTime,
    /// `QueryBeginTime[ns]`, needed by `--x time`.
    Time,
}

impl MissingColumn {
    /// The problem with `--x time` on a file without timestamps, in every
    /// tool's words (docs/analyze.md#time-axis).
    pub(crate) const TIME_MESSAGE: &'static str = "--x time needs a QueryBeginTime[ns] column";
}

/// The column of sample timestamps (docs/formats.md#metric-csv-sampling).
pub const QUERY_BEGIN_TIME: &str = "QueryBeginTime[ns]";

impl ChartSets {
    /// Validates the `-m`/`-b` names against `header` (docs/compatibility.md#analyze-metric-names):
    /// the named metrics first, then the `GpuTime[ns]` the `-b` sets imply.
    pub(crate) fn new(options: &ChartOptions, header: &Header) -> Result<ChartSets, MissingColumn> {
        let column = |name: &str| {
            header
                .index_of(name)
                .filter(|&i| i != header.kernel_index())
        };
        let labelled = options
            .metrics
            .iter()
            .zip(&options.ylabels)
            .map(|(set, label)| (set, label.as_str(), false));
        let throughput = options.throughput.iter().map(|set| (set, "", true));
        let mut sets = Vec::new();
        for (set, label, is_throughput) in labelled.chain(throughput) {
            let mut names = Vec::new();
            let mut columns = Vec::new();
            for piece in set.split(',') {
                let name = piece.trim();
                let Some(i) = column(name) else {
                    return Err(if is_throughput {
                        MissingColumn::Throughput(name.to_string())
                    } else {
                        MissingColumn::Metric(piece.to_string())
                    });
                };
                names.push(name.to_string());
                columns.push(i);
            }
            let y_label = if is_throughput {
                throughput_label(&names)
            } else {
                label.to_string()
            };
            sets.push(ChartSet {
                names,
                columns,
                y_label,
                throughput: is_throughput,
            });
        }
        let gpu_time = if options.throughput.is_empty() {
            None
        } else {
            Some(header.index_of(GPU_TIME).ok_or(MissingColumn::GpuTime)?)
        };
        let time = match options.x_axis {
            XAxis::Sample => None,
            XAxis::Time => Some(
                header
                    .index_of(QUERY_BEGIN_TIME)
                    .ok_or(MissingColumn::Time)?,
            ),
        };
        Ok(ChartSets {
            sets,
            gpu_time,
            time,
        })
    }

    /// Whether there is a `-m` page (without one, the original draws no `-b`
    /// page either: docs/compatibility.md#analyze-pages).
    pub(crate) fn has_metric_set(&self) -> bool {
        self.sets.iter().any(|s| !s.throughput)
    }

    /// Every CSV column the pages read, each once.
    fn columns(&self) -> Vec<usize> {
        let mut columns: Vec<usize> = Vec::new();
        let all = self.sets.iter().flat_map(|s| &s.columns);
        for &c in all.chain(&self.gpu_time).chain(&self.time) {
            if !columns.contains(&c) {
                columns.push(c);
            }
        }
        columns
    }
}

/// The values of one kernel instance, by CSV column (all of the same
/// length: the instance's rows).
pub(crate) trait InstanceColumns {
    fn rows(&self) -> usize;
    /// The values of `column` (one of [`ChartSets::columns`]), row by row.
    fn column(&self, column: usize) -> Cow<'_, [f64]>;
}

/// Which instance a page shows: its 1-based ordinal among the kernel's
/// instances, and unitrace's `GlobalInstanceId` when the file has one.
/// Named in every page's title so the pages of one kernel can be told
/// apart (docs/compatibility.md#analyze-instance-names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct InstanceName {
    pub ordinal: Option<u32>,
    pub global_id: Option<u64>,
}

impl std::fmt::Display for InstanceName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.ordinal, self.global_id) {
            (Some(n), Some(id)) => write!(f, "instance {n}, GlobalInstanceId {id}"),
            (Some(n), None) => write!(f, "instance {n}"),
            (None, Some(id)) => write!(f, "GlobalInstanceId {id}"),
            (None, None) => Ok(()),
        }
    }
}

/// With `--x time`, the X value of each row of `instance`: the µs since
/// the first drawn sample with a timestamp (docs/analyze.md#time-axis);
/// `None` for the default axis, the 0-based sample ordinal within the
/// instance (docs/compatibility.md#analyze-quirk-7, fixed).
fn x_values(sets: &ChartSets, instance: &impl InstanceColumns) -> Option<Vec<f64>> {
    let times = instance.column(sets.time?);
    // ns stamps are below 2^53, so f64 holds them exactly.
    let origin = times.iter().copied().find(|t| t.is_finite()).unwrap_or(0.0);
    Some(times.iter().map(|t| (t - origin) / 1000.0).collect())
}

/// The pages of one instance, in the order of `sets` (docs/compatibility.md#analyze-pages),
/// each with whether it is a throughput page. X values: [`x_values`].
pub(crate) fn instance_charts(
    options: &ChartOptions,
    sets: &ChartSets,
    kernel: &str,
    name: InstanceName,
    instance: &impl InstanceColumns,
) -> Vec<(Chart, bool)> {
    let mut title_lines = vec![options.title.clone(), format!("({kernel})")];
    if name != InstanceName::default() {
        title_lines.push(name.to_string());
    }
    let gpu_time = sets.gpu_time.map(|g| instance.column(g));
    let x_times = x_values(sets, instance);
    let x_at = |i: usize| match &x_times {
        None => i as f64,
        Some(xs) => xs.get(i).copied().unwrap_or(f64::NAN),
    };
    sets.sets
        .iter()
        .map(|set| {
            let series = set
                .names
                .iter()
                .zip(&set.columns)
                .map(|(name, &c)| {
                    let values = instance.column(c);
                    let points = match (set.throughput, &gpu_time) {
                        (true, Some(times)) => values
                            .iter()
                            .zip(times.iter())
                            .enumerate()
                            .map(|(i, (v, t))| (x_at(i), v / t))
                            .collect(),
                        _ => values
                            .iter()
                            .enumerate()
                            .map(|(i, v)| (x_at(i), *v))
                            .collect(),
                    };
                    Series {
                        name: name.clone(),
                        points,
                    }
                })
                .collect();
            let chart = Chart {
                title_lines: title_lines.clone(),
                x_label: options.x_label().to_string(),
                y_label: set.y_label.clone(),
                series,
                kind: Chart::kind_for_points(instance.rows()),
                x_tick_labels: None,
            };
            (chart, set.throughput)
        })
        .collect()
}

/// Which instances are drawn (docs/compatibility.md#analyze-instances).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    /// A: every instance of every kernel.
    All,
    /// B: instance N of every kernel.
    NthOfEach(u32),
    /// C: every instance of one kernel.
    AllOf(String),
    /// D: instance N of one kernel.
    One(String, u32),
}

impl Mode {
    fn from_plan(plan: &ChartsPlan) -> Mode {
        match (&plan.draw.kernel, plan.instance) {
            (None, None) => Mode::All,
            (None, Some(n)) => Mode::NthOfEach(n),
            (Some(k), None) => Mode::AllOf(k.clone()),
            (Some(k), Some(n)) => Mode::One(k.clone(), n),
        }
    }

    fn wants(&self, kernel: &str, ordinal: u32) -> bool {
        match self {
            Mode::All => true,
            Mode::NthOfEach(n) => ordinal == *n,
            Mode::AllOf(k) => k == kernel,
            Mode::One(k, n) => k == kernel && ordinal == *n,
        }
    }
}

/// `n` to two significant digits with thousands separators (`46,000`).
fn round_estimate(n: f64) -> String {
    let n = n.max(0.0).round() as u64;
    let magnitude = 10u64.pow((n.max(1).ilog10()).saturating_sub(1));
    let rounded = (n + magnitude / 2) / magnitude * magnitude;
    let digits = rounded.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Whether a section of `device` is the one `-d wanted` names.
fn is_target_section(wanted: i64, device: Option<i64>) -> bool {
    match device {
        Some(d) => d == wanted,
        // A banner-less file is device 0 (docs/compatibility.md#analyze-quirk-15, fixed).
        None => wanted == 0,
    }
}

/// The rows of one drawn instance: one value column per needed CSV column.
#[derive(Debug, Clone)]
struct Instance {
    kernel: String,
    ordinal: u32,
    /// `GlobalInstanceId` of the instance's first row, when the file has it.
    global_id: Option<u64>,
    /// `values[j][r]`: needed column j (see `Session::needed`), row r.
    values: Vec<Vec<f64>>,
    rows: usize,
    /// Validity of each kept row's query report (files with validity
    /// columns only).
    marks: Vec<ReportValidity>,
    /// Rows left out as flagged reports (docs/analyze.md#report-validity).
    left_out: usize,
}

/// The same columns for the dashboard page of `-o x.html`.
impl dashboard::data::InstanceColumns for DrawnInstance<'_> {
    fn rows(&self) -> usize {
        InstanceColumns::rows(self)
    }

    fn column(&self, column: usize) -> Cow<'_, [f64]> {
        InstanceColumns::column(self, column)
    }
}

/// A drawn instance of `analyze -o`: its values are stored by position in
/// `Session::needed`.
struct DrawnInstance<'a> {
    instance: &'a Instance,
    needed: &'a [usize],
}

impl InstanceColumns for DrawnInstance<'_> {
    fn rows(&self) -> usize {
        self.instance.rows
    }

    fn column(&self, column: usize) -> Cow<'_, [f64]> {
        let slot = self.needed.iter().position(|&c| c == column);
        Cow::Borrowed(slot.map_or(&[][..], |s| &self.instance.values[s]))
    }
}

/// The state of one chart run.
struct Session<'a> {
    plan: &'a ChartsPlan,
    path: PathBuf,
    format: Format,
    mode: Mode,
    options: ChartOptions,
    sets: ChartSets,
    /// CSV columns read for drawn instances (`Instance::values` order).
    needed: Vec<usize>,
    /// The `GlobalInstanceId` column, named in page titles.
    id_column: Option<usize>,
    sink: Option<Box<dyn PageSink>>,
    data: Option<DataWriter>,
    /// Kernel names of the device section in order of first appearance,
    /// and their instance counts (same positions), from the core's
    /// instance grouping.
    kernels: Vec<String>,
    counts: Vec<u32>,
    /// Mode B: instances waiting for an earlier kernel's turn.
    pending: HashMap<String, Instance>,
    next_turn: usize,
    progress: Option<ProgressBar>,
    stdout: std::io::Stdout,
    found_device: bool,
    done: bool,
    /// Size of the input and bytes read up to the last completed
    /// instance: the estimate of the page count past [`MANY_PAGES`].
    input_len: u64,
    input_read: u64,
    /// Drawn values that are NaN or infinite (a chart cannot show them).
    non_finite: Option<ValueFlaw>,
    /// `GpuTime[ns]` values <= 0 that a `-b` throughput divides by.
    bad_gpu_time: Option<ValueFlaw>,
    /// The section's report-validity columns, if it has any.
    validity: Option<ValidityColumns>,
    /// Reports of the drawn instances, kept and left out.
    tally: ValidityTally,
    /// Mode D: the wanted instance was read but all its reports were left
    /// out.
    wanted_left_out: bool,
    /// Mode B: kernels whose instance N was left out as flagged.
    left_out_kernels: HashSet<String>,
    /// `-o x.html`: the dashboard page (docs/analyze.md#dashboard-file),
    /// its counters and the section's header.
    dashboard: Option<StaticPage<BufWriter<AtomicFile>>>,
    counters: Vec<Counter>,
    header: Option<Header>,
    /// Messages about a section without banner read as device 0, held
    /// until the file shows that no banner follows (then they are
    /// printed) or that one does (then its rows belong to no device and
    /// the messages are dropped with them; docs/robustness.md#metric-csvs).
    /// At most [`HELD_MESSAGE_BYTES`]: past that they are printed as they
    /// come.
    held: Option<Vec<String>>,
    held_bytes: usize,
    /// The rows-before-the-first-banner warning was printed (once per
    /// run, also when `-k` makes a second pass).
    warned_rows_before_banner: bool,
}

/// Where [`Session::read`] is in the file.
#[derive(Default)]
struct ReadState {
    /// The current section is of the wanted device, and the first such
    /// section has been seen.
    in_target: bool,
    target_seen: bool,
    /// Device of the current section, and the header line of a section
    /// without banner: device 0 when the file has no banner at all, rows
    /// of no device when a banner follows (decided at the first banner,
    /// in this one pass; docs/robustness.md#metric-csvs).
    section_device: Option<i64>,
    rows_before_banner: Option<u64>,
    /// The drawn instance being read.
    building: Option<Instance>,
    fields: Vec<Field>,
    instances_seen: u64,
}

/// Bound of [`Session::held`]: a 1 GB banner-less file drawn with `-i 0`
/// has hundreds of thousands of instances, whose messages are not kept.
const HELD_MESSAGE_BYTES: usize = 1 << 20;

/// The first occurrence of one kind of flawed value in the file, and how
/// many there are: reported once per file, after reading it.
#[derive(Debug, Clone, PartialEq)]
struct ValueFlaw {
    line: u64,
    column: String,
    text: String,
    count: u64,
}

impl ValueFlaw {
    fn record(flaw: &mut Option<ValueFlaw>, line: u64, column: &str, text: &[u8]) {
        match flaw {
            Some(f) => f.count += 1,
            None => {
                *flaw = Some(ValueFlaw {
                    line,
                    column: column.to_string(),
                    text: String::from_utf8_lossy(text).into_owned(),
                    count: 1,
                })
            }
        }
    }

    /// `FILE:LINE: column `C`: `TEXT` <problem> (N such values in drawn
    /// instances)`.
    fn message(&self, path: &Path, problem: &str) -> String {
        format!(
            "{}:{}: column `{}`: `{}` {problem} ({} such value{} in drawn instances)",
            path.display(),
            self.line,
            self.column,
            self.text.trim(),
            self.count,
            if self.count == 1 { "" } else { "s" }
        )
    }
}

impl<'a> Session<'a> {
    fn new(plan: &'a ChartsPlan) -> anyhow::Result<Session<'a>> {
        Ok(Session {
            plan,
            path: plan.draw.input.clone(),
            format: plan.draw.format,
            mode: Mode::from_plan(plan),
            options: plan.draw.charts.clone(),
            sets: ChartSets::default(),
            needed: Vec::new(),
            id_column: None,
            sink: None,
            data: None,
            kernels: Vec::new(),
            counts: Vec::new(),
            pending: HashMap::new(),
            next_turn: 0,
            progress: None,
            stdout: std::io::stdout(),
            found_device: false,
            done: false,
            input_len: 0,
            input_read: 0,
            non_finite: None,
            bad_gpu_time: None,
            validity: None,
            tally: ValidityTally::default(),
            wanted_left_out: false,
            left_out_kernels: HashSet::new(),
            dashboard: None,
            counters: Vec::new(),
            header: None,
            held: None,
            held_bytes: 0,
            warned_rows_before_banner: false,
        })
    }

    /// Prints one message line on stdout (around the progress bar), or
    /// holds it while the section being drawn may turn out to be rows
    /// before the first banner.
    fn say(&mut self, message: String) {
        if let Some(held) = self.held.as_mut() {
            if self.held_bytes + message.len() <= HELD_MESSAGE_BYTES {
                self.held_bytes += message.len();
                held.push(message);
                return;
            }
            self.release_held();
        }
        self.print_line(message);
    }

    /// Prints the held messages; later ones are printed at once.
    fn release_held(&mut self) {
        for message in self.held.take().unwrap_or_default() {
            self.print_line(message);
        }
    }

    /// The file has a banner after the rows of the section without
    /// banner read so far as device 0 (starting at line `line`): those
    /// rows belong to no device, as for `-l` and stall files
    /// (docs/robustness.md#metric-csvs). Says so once and starts over,
    /// giving up what was drawn from them (outputs, messages, counts);
    /// the file is not read again.
    fn forget_rows_before_banner(&mut self, line: u64) -> anyhow::Result<()> {
        if !self.warned_rows_before_banner {
            let path = self.path.clone();
            let say = || crate::list::warn_rows_before_banner(&path, line);
            match &self.progress {
                Some(pb) => pb.suspend(say),
                None => say(),
            }
        }
        let plan = self.plan;
        let mut fresh = Session::new(plan)?;
        fresh.progress = self.progress.take();
        fresh.input_len = self.input_len;
        fresh.input_read = self.input_read;
        fresh.warned_rows_before_banner = true;
        let old = std::mem::replace(self, fresh);
        if let Some(sink) = old.sink {
            sink.discard();
        }
        if let Some(data) = old.data {
            data.discard();
        }
        Ok(())
    }

    fn print_line(&mut self, message: String) {
        // Kernel names are input (docs/robustness.md#messages).
        let message = unitrace_core::cli::escape_lines(&message);
        let out = &mut self.stdout;
        match &self.progress {
            Some(pb) => pb.suspend(|| {
                let _ = writeln!(out, "{message}");
            }),
            None => {
                let _ = writeln!(out, "{message}");
            }
        }
    }

    fn prepare(&mut self, header: &Header) -> Result<(), InputError> {
        self.sets = ChartSets::new(&self.options, header).map_err(|missing| {
            // A misspelt name gets the header's likely meant ones
            // (docs/compatibility.md#analyze-closest-kernel: `XVE_ACTIVE` ->
            // `XVE_ACTIVE[%]`).
            let metrics: Vec<String> = header
                .columns()
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != header.kernel_index())
                .map(|(_, c)| c.clone())
                .collect();
            let hint = |name: &str| did_you_mean(&suggest_metrics(name, &metrics));
            let message = match missing {
                MissingColumn::Metric(name) => format!("No metric data for {name}{}", hint(&name)),
                MissingColumn::Throughput(name) => {
                    format!("No throughput data for {name}{}", hint(&name))
                }
                // A file without GpuTime[ns] crashes the original; say why.
                MissingColumn::GpuTime => format!("No throughput data for {GPU_TIME}"),
                MissingColumn::Time => MissingColumn::TIME_MESSAGE.to_string(),
            };
            InputError::at_file(&self.path, message)
        })?;
        self.needed = self.sets.columns();
        if self.format == Format::Html {
            // The dashboard page offers every counter, and draws sampling
            // files over time and query files over their report id.
            self.counters = dashboard::data::counters(header);
            let x_columns = [dashboard::data::QUERY_BEGIN_TIME, "ReportId"]
                .into_iter()
                .filter_map(|name| header.index_of(name));
            for c in self.counters.iter().map(|c| c.column).chain(x_columns) {
                if !self.needed.contains(&c) {
                    self.needed.push(c);
                }
            }
            self.header = Some(header.clone());
        }
        self.id_column = header.index_of(GLOBAL_INSTANCE_ID);
        self.validity = ValidityColumns::of(header);
        Ok(())
    }

    fn read(&mut self, file: File) -> anyhow::Result<()> {
        let total = file.metadata().map(|m| m.len()).unwrap_or(0);
        self.input_len = total;
        let path = self.path.clone();
        // Rows are shown only for the instances the mode draws, in the
        // wanted device's section; the others are only counted.
        let device = self.plan.draw.device;
        let mode = self.mode.clone();
        let mut reader = InstanceReader::with_selection(
            CsvReader::new(file, &path),
            Box::new(move |head| {
                is_target_section(device, head.device) && mode.wants(head.kernel, head.ordinal)
            }),
        );
        if !matches!(self.mode, Mode::One(..)) {
            self.progress = progress::bytes_bar(total);
        }
        let mut state = ReadState::default();
        while let Some(event) = reader.next_event()? {
            let ended = match event {
                InstanceEvent::SectionStart { device, .. } => {
                    if !self.section_start(&mut state, device)? {
                        break;
                    }
                    None
                }
                InstanceEvent::Header(header) => {
                    self.section_header(&mut state, header)?;
                    None
                }
                InstanceEvent::Row { instance, row } => {
                    self.add_row(&mut state, instance.ordinal, &row)?;
                    None
                }
                InstanceEvent::End(span) => state.in_target.then_some(span),
                InstanceEvent::SectionEnd { .. } => None,
            };
            let Some(span) = ended else {
                continue;
            };
            let offset = reader.csv().offset();
            self.end_instance(&mut state, span, reader.section_kernels(), offset)?;
            if self.done {
                // Mode D found its instance in a section without banner:
                // it is device 0's only if no banner follows (a fast scan
                // of the rest, only for such files); otherwise read on to
                // the banner, which starts over.
                if state.rows_before_banner.is_some() && banner_after(&path, offset)? {
                    self.done = false;
                    continue;
                }
                break;
            }
        }
        self.release_held();
        if let Some(pb) = self.progress.take() {
            pb.finish_and_clear();
        }
        if let Some(line) = reader.csv().first_non_utf8_kernel() {
            crate::list::warn_non_utf8_kernel(&path, line);
        }
        self.warn_flaws(&path);
        Ok(())
    }

    /// A section starts; false when reading stops there: only the first
    /// section of the wanted device is used
    /// (docs/compatibility.md#analyze-sections).
    fn section_start(
        &mut self,
        state: &mut ReadState,
        device: Option<i64>,
    ) -> anyhow::Result<bool> {
        if device.is_some() {
            if let Some(line) = state.rows_before_banner.take() {
                self.forget_rows_before_banner(line)?;
                state.target_seen = false;
                state.building = None;
            }
        }
        if state.target_seen {
            return Ok(false);
        }
        state.in_target = is_target_section(self.plan.draw.device, device);
        state.section_device = device;
        if state.in_target && device.is_none() {
            self.held = Some(Vec::new());
        }
        Ok(true)
    }

    /// The header of a section: the charts are planned from the wanted
    /// device's.
    fn section_header(&mut self, state: &mut ReadState, header: &Header) -> anyhow::Result<()> {
        if state.section_device.is_none() {
            state.rows_before_banner = Some(header.line());
        }
        if state.in_target && !state.target_seen {
            state.target_seen = true;
            self.found_device = true;
            self.prepare(header)?;
        }
        Ok(())
    }

    /// A row of an instance the mode draws: its needed values, unless the
    /// validity policy leaves its report out.
    fn add_row(
        &mut self,
        state: &mut ReadState,
        ordinal: u32,
        row: &RawRow<'_>,
    ) -> anyhow::Result<()> {
        let fields = &mut state.fields;
        let inst = state.building.get_or_insert_with(|| Instance {
            kernel: row.kernel().into_owned(),
            ordinal,
            global_id: self.id_column.and_then(|c| {
                row.split(fields).ok()?;
                let text = row.field_bytes(fields.get(c)?);
                std::str::from_utf8(text).ok()?.trim().parse().ok()
            }),
            values: vec![Vec::new(); self.needed.len()],
            rows: 0,
            marks: Vec::new(),
            left_out: 0,
        });
        row.split(fields)?;
        if let Some(columns) = &self.validity {
            let report = columns.classify_raw(row, fields);
            if !self.tally.count(self.options.validity, report) {
                inst.left_out += 1;
                return Ok(());
            }
            inst.marks.push(report);
        }
        inst.rows += 1;
        for (slot, &col) in self.needed.iter().enumerate() {
            let text = fields.get(col).map_or(&b""[..], |f| row.field_bytes(f));
            let column = || row.header().columns().get(col).map_or("?", |c| c.as_str());
            let v = parse_number(text).ok_or_else(|| {
                row.error(format!(
                    "column `{}`: `{}` is not a number",
                    column(),
                    String::from_utf8_lossy(text)
                ))
            })?;
            // Drawn as read, like the original's matplotlib, but the user
            // is told (once per file).
            if !v.is_finite() {
                ValueFlaw::record(&mut self.non_finite, row.line(), column(), text);
            } else if self.sets.gpu_time == Some(col) && v <= 0.0 {
                ValueFlaw::record(&mut self.bad_gpu_time, row.line(), column(), text);
            }
            inst.values[slot].push(v);
        }
        Ok(())
    }

    /// An instance of the wanted section ended (`offset`: where the
    /// reader is): it is counted, and completed when the mode draws it.
    fn end_instance(
        &mut self,
        state: &mut ReadState,
        span: InstanceSpan,
        section_kernels: &[SectionKernel],
        offset: u64,
    ) -> anyhow::Result<()> {
        // The section's kernels in order of first appearance, with their
        // instance counts so far (mode B's turns, messages).
        for kernel in &section_kernels[self.kernels.len()..] {
            self.kernels.push(kernel.name.clone());
            self.counts.push(0);
        }
        self.counts[span.kernel] = span.ordinal;
        state.instances_seen += 1;
        self.input_read = offset;
        if let Some(inst) = state.building.take() {
            if inst.rows == 0 && inst.left_out > 0 {
                // Every report of the instance was left out: nothing to
                // draw (its ordinal still counts, as in `-l`).
                match self.mode {
                    Mode::One(..) => {
                        self.wanted_left_out = true;
                        self.done = true;
                    }
                    Mode::NthOfEach(_) => {
                        self.left_out_kernels.insert(inst.kernel);
                    }
                    Mode::All | Mode::AllOf(_) => {}
                }
            } else if !inst.values.is_empty() {
                self.complete(inst)?;
            }
        }
        if let Some(pb) = &self.progress {
            if state.instances_seen.is_multiple_of(64) {
                pb.set_position(offset);
                pb.set_message(format!("{} instances", state.instances_seen));
            }
        }
        Ok(())
    }

    /// The warnings about the file as a whole, once it is read: reports
    /// left out, values a chart cannot show.
    fn warn_flaws(&self, path: &Path) {
        if let Some(message) = self.tally.warning(path, self.options.validity) {
            warn(TOOL, message);
        }
        if let Some(flaw) = &self.non_finite {
            warn(
                TOOL,
                flaw.message(path, "is not a finite number; the charts cannot show it"),
            );
        }
        if let Some(flaw) = &self.bad_gpu_time {
            warn(
                TOOL,
                flaw.message(
                    path,
                    "is not a positive duration; the -b throughput divided by it is meaningless",
                ),
            );
        }
    }

    /// An instance the mode wants has been read completely.
    fn complete(&mut self, inst: Instance) -> anyhow::Result<()> {
        match self.mode.clone() {
            Mode::All => {
                self.draw(&inst)?;
                self.say(format!("Analyzed kernel {}", inst.kernel));
            }
            Mode::AllOf(_) => {
                self.draw(&inst)?;
                self.say(format!(
                    "Analyzed instance {} of kernel {}",
                    inst.ordinal, inst.kernel
                ));
            }
            Mode::One(_, _) => {
                self.draw(&inst)?;
                self.say(format!(
                    "Performance metric chart for instance {} of kernel {} has been successfully generated",
                    inst.ordinal, inst.kernel
                ));
                self.done = true;
            }
            Mode::NthOfEach(_) => {
                self.pending.insert(inst.kernel.clone(), inst);
                self.flush_turns(false)?;
            }
        }
        Ok(())
    }

    /// Mode B: draws buffered instances in the order the kernels first
    /// appeared; at the end of the input (`at_end`) kernels without
    /// instance N get the original's message.
    fn flush_turns(&mut self, at_end: bool) -> anyhow::Result<()> {
        let Mode::NthOfEach(n) = self.mode else {
            return Ok(());
        };
        while self.next_turn < self.kernels.len() {
            let kernel = self.kernels[self.next_turn].clone();
            match self.pending.remove(&kernel) {
                Some(inst) => {
                    self.draw(&inst)?;
                    self.say(format!("Analyzed kernel {kernel}"));
                }
                None if at_end && self.left_out_kernels.contains(&kernel) => {
                    self.say(format!(
                        "No metric data for instance {n} of kernel {kernel}: its query report is flagged and left out; --keep-invalid keeps it"
                    ));
                }
                None if at_end => {
                    self.say(format!(
                        "No metric data for instance {n} of kernel {kernel}"
                    ));
                }
                None => {
                    // Instance N of this kernel may still come; a kernel
                    // already seen fewer than N times blocks the later
                    // ones only until then.
                    return Ok(());
                }
            }
            self.next_turn += 1;
        }
        Ok(())
    }

    /// The pages of one instance (docs/compatibility.md#analyze-pages): every `-m` page, then
    /// every `-b` page.
    fn draw(&mut self, inst: &Instance) -> anyhow::Result<()> {
        if self.format == Format::Html {
            self.add_to_dashboard(inst)?;
        }
        let columns = DrawnInstance {
            instance: inst,
            needed: &self.needed,
        };
        let name = InstanceName {
            ordinal: Some(inst.ordinal),
            global_id: inst.global_id,
        };
        let pages = instance_charts(&self.options, &self.sets, &inst.kernel, name, &columns);
        let mut entry = Some(name.to_string());
        let marks: Vec<&str> = inst.marks.iter().map(|m| m.label()).collect();
        for (chart, throughput) in pages {
            let suffix = if throughput {
                format!("/{GPU_TIME}")
            } else {
                String::new()
            };
            self.emit(
                &inst.kernel,
                inst.ordinal,
                chart,
                &suffix,
                entry.take(),
                &marks,
            )?;
        }
        Ok(())
    }

    /// `-o x.html`: one more instance on the dashboard page (created with
    /// the first one).
    fn add_to_dashboard(&mut self, inst: &Instance) -> anyhow::Result<()> {
        let output = self.plan.draw.output.clone();
        let Some(header) = &self.header else {
            return Ok(());
        };
        let columns = DrawnInstance {
            instance: inst,
            needed: &self.needed,
        };
        let label = InstanceLabel {
            kernel: &inst.kernel,
            ordinal: Some(inst.ordinal),
            of: None,
            global_id: inst.global_id,
        };
        let data =
            dashboard::data::instance_json(&label, header, &self.counters, &columns, &inst.marks);
        if self.dashboard.is_none() {
            let selected = dashboard::data::default_selection(&self.options, &self.counters);
            let config = page_config(&self.counters, &selected, CompareSource::Inline);
            let file = AtomicFile::create(&output)
                .with_context(|| format!("{}: cannot create output", output.display()))?;
            self.dashboard = Some(
                StaticPage::new(
                    BufWriter::new(file),
                    &self.options.title,
                    &self.path.display().to_string(),
                    &config,
                )
                .with_context(|| format!("{}: cannot write output", output.display()))?,
            );
        }
        if let Some(page) = self.dashboard.as_mut() {
            page.add(&label, &data)
                .with_context(|| format!("{}: cannot write output", output.display()))?;
            if page.instances() == MANY_INSTANCES + 1 {
                let message = format!(
                    "{}: more than {MANY_INSTANCES} instances on one page; their charts are drawn as they are scrolled into view (-k and -i select fewer)",
                    output.display()
                );
                match &self.progress {
                    Some(pb) => pb.suspend(|| warn(TOOL, &message)),
                    None => warn(TOOL, &message),
                }
            }
        }
        Ok(())
    }

    fn emit(
        &mut self,
        kernel: &str,
        ordinal: u32,
        chart: Chart,
        suffix: &str,
        outline_entry: Option<String>,
        marks: &[&str],
    ) -> anyhow::Result<()> {
        let output = self.plan.draw.output.as_path();
        if self.sink.is_none() && self.data.is_none() {
            // Created with the first page, like the original's PDF (the
            // HTML page is the dashboard's: `add_to_dashboard`).
            if self.format != Format::Html {
                self.sink = Some(
                    render::create(output, self.format)
                        .with_context(|| format!("{}: cannot create output", output.display()))?,
                );
            }
            if let Some(data) = self.plan.draw.data.as_deref() {
                // The `report` column only for files that say which
                // reports are doubtful, the time column only with `--x
                // time`: default --data files stay as they were.
                let layout = DataLayout {
                    x: match self.options.x_axis {
                        XAxis::Time => DataX::Time,
                        XAxis::Sample => DataX::Sample,
                    },
                    marked: self.validity.is_some(),
                };
                self.data = Some(
                    DataWriter::create(data, layout)
                        .with_context(|| format!("{}: cannot create data file", data.display()))?,
                );
            }
        }
        if let Some(data) = self.data.as_mut() {
            data.write_marked_chart(kernel, Some(u64::from(ordinal)), &chart, suffix, marks)
                .with_context(|| data_error(self.plan.draw.data.as_deref()))?;
        }
        if let Some(sink) = self.sink.as_mut() {
            // The first page of an instance is its entry in the outline
            // under its kernel (a PDF viewer's sidebar).
            if let Some(entry) = outline_entry {
                sink.outline_entry(kernel, &entry);
            }
            sink.add_page(&Page::Chart(chart))
                .with_context(|| format!("{}: cannot write output", output.display()))?;
            if sink.pages() == MANY_PAGES + 1 {
                self.tell_page_count();
            }
        }
        Ok(())
    }

    /// One line on stderr once a run passes [`MANY_PAGES`]: about how many
    /// pages it will write, estimated from the share of the input read.
    fn tell_page_count(&mut self) {
        let written = MANY_PAGES + 1;
        let estimate = if self.input_read > 0 && self.input_len >= self.input_read {
            written as f64 * self.input_len as f64 / self.input_read as f64
        } else {
            written as f64
        };
        let message = format!(
            "{}: writing about {} pages ({written} so far, {:.0}% of the input read); -k and -i draw fewer",
            self.plan.draw.output.display(),
            round_estimate(estimate),
            100.0 * self.input_read as f64 / self.input_len.max(1) as f64
        );
        match &self.progress {
            Some(pb) => pb.suspend(|| warn(TOOL, &message)),
            None => warn(TOOL, &message),
        }
    }

    fn finish(mut self) -> anyhow::Result<ExitCode> {
        let path = self.path.clone();
        if !self.found_device {
            return Err(device_not_found(&path, self.plan.draw.device).into());
        }
        self.flush_turns(true)?;
        match self.mode.clone() {
            Mode::AllOf(k) | Mode::One(k, _) if self.instances_of(&k).is_none() => {
                return Err(InputError::at_file(&path, self.unknown_kernel_message(&k)).into());
            }
            Mode::One(k, n) if self.nothing_drawn() && self.wanted_left_out => {
                return Err(InputError::at_file(
                    &path,
                    format!(
                        "No metric data for instance {n} of kernel {k}: its query report is flagged and left out; --keep-invalid keeps it"
                    ),
                )
                .into());
            }
            Mode::One(k, n) if self.nothing_drawn() => {
                let have = self.instances_of(&k).unwrap_or(0);
                return Err(InputError::at_file(
                    &path,
                    format!(
                        "No metric data for instance {n} of kernel {k} (it has {have} instance{})",
                        if have == 1 { "" } else { "s" }
                    ),
                )
                .into());
            }
            _ => {}
        }
        let output = self.plan.draw.output.clone();
        if let Some(page) = self.dashboard.take() {
            page.finish()
                .and_then(|out| out.into_inner().map_err(|e| e.into_error()))
                .and_then(AtomicFile::commit)
                .with_context(|| format!("{}: cannot write output", output.display()))?;
        } else {
            let Some(sink) = self.sink.take() else {
                return Err(InputError::at_file(
                    &path,
                    "No performance metric data for kernel or kernel instance",
                )
                .into());
            };
            sink.finish()
                .with_context(|| format!("{}: cannot write output", output.display()))?;
        }
        if let Some(data) = self.data.take() {
            data.finish()
                .with_context(|| data_error(self.plan.draw.data.as_deref()))?;
        }
        self.say(format!(
            "Performance metric charts are successfully generated in {} format",
            format_name(self.format)
        ));
        Ok(ExitCode::SUCCESS)
    }

    /// No page and no dashboard instance was written.
    fn nothing_drawn(&self) -> bool {
        self.sink.is_none() && self.dashboard.is_none()
    }

    /// After a pass that found no kernel of exactly the `-k` name: the
    /// full name of the one kernel it matches as a part or `/regex/`;
    /// several matches are an error listing them.
    fn resolved_kernel(&self) -> anyhow::Result<Option<String>> {
        let (Mode::AllOf(wanted) | Mode::One(wanted, _)) = &self.mode else {
            return Ok(None);
        };
        if !self.found_device || self.instances_of(wanted).is_some() {
            return Ok(None);
        }
        match resolve_kernel(wanted, &self.kernels)? {
            KernelMatch::Unique(name) => Ok(Some(name.to_string())),
            KernelMatch::Ambiguous(candidates) => {
                Err(InputError::at_file(&self.path, ambiguous_message(wanted, &candidates)).into())
            }
            KernelMatch::NoMatch => Ok(None),
        }
    }

    /// How many instances `kernel` has in the section read so far.
    fn instances_of(&self, kernel: &str) -> Option<u32> {
        let position = self.kernels.iter().position(|k| k == kernel)?;
        self.counts.get(position).copied()
    }

    /// The original's message plus the closest kernel names of the section.
    fn unknown_kernel_message(&self, kernel: &str) -> String {
        let close = closest_names(kernel, &self.kernels, 3);
        if close.is_empty() {
            format!("No metric data for kernel {kernel}")
        } else {
            let list: Vec<String> = close.iter().map(|k| format!("\"{k}\"")).collect();
            format!(
                "No metric data for kernel {kernel}; closest names: {}",
                list.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Columns(Vec<Vec<f64>>);

    impl InstanceColumns for Columns {
        fn rows(&self) -> usize {
            self.0[0].len()
        }
        fn column(&self, column: usize) -> Cow<'_, [f64]> {
            Cow::Borrowed(&self.0[column])
        }
    }

    fn options(metrics: &[&str], throughput: &[&str]) -> ChartOptions {
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        ChartOptions {
            metrics: owned(metrics),
            ylabels: metrics.iter().map(|m| format!("Y {m}")).collect(),
            throughput: owned(throughput),
            xlabel: "X".to_string(),
            x_axis: XAxis::Sample,
            title: "T".to_string(),
            validity: Default::default(),
        }
    }

    #[test]
    fn chart_sets_report_the_first_missing_name_then_gpu_time() {
        let path = Path::new("m.csv");
        let header = Header::parse(b"Kernel,A[x],B[x]", 1, path).unwrap();
        let missing = |m: &[&str], b: &[&str]| ChartSets::new(&options(m, b), &header).err();
        assert_eq!(
            missing(&["A[x], C[x]"], &[]),
            Some(MissingColumn::Metric(" C[x]".into()))
        );
        assert_eq!(
            missing(&["Kernel"], &[]),
            Some(MissingColumn::Metric("Kernel".into()))
        );
        assert_eq!(
            missing(&["A[x]"], &["B[x]", " D[x]"]),
            Some(MissingColumn::Throughput("D[x]".into()))
        );
        assert_eq!(missing(&["A[x]"], &["B[x]"]), Some(MissingColumn::GpuTime));
        assert_eq!(missing(&["A[x],B[x]"], &[]), None);
    }

    #[test]
    fn instance_charts_divide_throughput_by_gpu_time() {
        let path = Path::new("m.csv");
        let header = Header::parse(b"Kernel,A[x],GpuTime[ns]", 1, path).unwrap();
        let opts = options(&["A[x]"], &["A[x]"]);
        let sets = ChartSets::new(&opts, &header).unwrap();
        assert!(sets.has_metric_set());
        let values = Columns(vec![vec![], vec![4.0, 9.0], vec![2.0, 3.0]]);
        let name = InstanceName {
            ordinal: Some(2),
            global_id: Some(17),
        };
        let charts = instance_charts(&opts, &sets, "k", name, &values);
        assert_eq!(charts.len(), 2);
        let (metric, is_throughput) = &charts[0];
        assert!(!is_throughput);
        assert_eq!(
            metric.title_lines,
            ["T", "(k)", "instance 2, GlobalInstanceId 17"]
        );
        assert_eq!(metric.y_label, "Y A[x]");
        assert_eq!(metric.series[0].points, [(0.0, 4.0), (1.0, 9.0)]);
        let (throughput, is_throughput) = &charts[1];
        assert!(is_throughput);
        assert_eq!(throughput.y_label, "Throughput(Gx/s)");
        assert_eq!(throughput.series[0].points, [(0.0, 2.0), (1.0, 3.0)]);
    }

    #[test]
    fn time_axis_points_are_microseconds_since_the_first_timed_sample() {
        let path = Path::new("m.csv");
        let header = Header::parse(b"Kernel,A[x],GpuTime[ns],QueryBeginTime[ns]", 1, path).unwrap();
        let mut opts = options(&["A[x]"], &["A[x]"]);
        opts.x_axis = XAxis::Time;
        opts.xlabel = crate::args::DEFAULT_XLABEL.to_string();
        let sets = ChartSets::new(&opts, &header).unwrap();
        let values = Columns(vec![
            vec![0.0; 3],
            vec![4.0, 9.0, 1.0],
            vec![2.0, 3.0, 1.0],
            vec![f64::NAN, 143_559_269_028.0, 143_559_319_009.5],
        ]);
        let charts = instance_charts(&opts, &sets, "k", InstanceName::default(), &values);
        let (metric, _) = &charts[0];
        assert_eq!(metric.x_label, "Time (µs)");
        let points = &metric.series[0].points;
        assert!(points[0].0.is_nan(), "a sample without a time has no X");
        assert_eq!(points[1], (0.0, 9.0));
        assert_eq!(points[2], (49.9815, 1.0));
        assert_eq!(charts[1].0.series[0].points[2], (49.9815, 1.0));
        // Without the column: refused, in the words of every tool.
        let plain = Header::parse(b"Kernel,A[x],GpuTime[ns]", 1, path).unwrap();
        assert_eq!(
            ChartSets::new(&opts, &plain).err(),
            Some(MissingColumn::Time)
        );
        opts.xlabel = "mine".into();
        assert_eq!(opts.x_label(), "mine");
    }

    #[test]
    fn throughput_label_follows_the_metrics_unit() {
        let label = |names: &[&str]| {
            throughput_label(&names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(label(&["A[bytes]", "B[bytes]"]), "Throughput(GB/s)");
        assert_eq!(label(&["XVE_BUSY[events]"]), "Throughput(Gevents/s)");
        assert_eq!(label(&["A[bytes]", "B[events]"]), "Throughput(per ns)");
        assert_eq!(label(&["Plain"]), "Throughput(per ns)");
    }

    #[test]
    fn page_estimates_are_rounded_to_two_digits() {
        assert_eq!(round_estimate(46_123.0), "46,000");
        assert_eq!(round_estimate(1_001.0), "1,000");
        assert_eq!(round_estimate(1_071.4), "1,100");
        assert_eq!(round_estimate(987_654_321.0), "990,000,000");
        assert_eq!(round_estimate(7.0), "7");
    }

    #[test]
    fn mode_selection() {
        assert!(Mode::One("k".into(), 2).wants("k", 2));
        assert!(!Mode::One("k".into(), 2).wants("k", 1));
        assert!(Mode::NthOfEach(1).wants("x", 1));
        assert!(Mode::AllOf("k".into()).wants("k", 7));
        assert!(!Mode::AllOf("k".into()).wants("j", 1));
    }
}
