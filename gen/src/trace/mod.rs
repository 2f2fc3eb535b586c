//! `unitrace-gen trace`: per-rank timelines of a multi-rank job
//! (docs/unitrace-gen.md#trace).
//!
//! [`scenario`] plans the job, [`program`] is one rank's work as
//! [`event`]s, [`json`] and [`pftrace`] serialise them, [`output`] buffers
//! and cuts the bytes. This module picks the job's size, lays out the
//! files and writes the ranks in parallel.

pub mod event;
pub mod json;
pub mod output;
pub mod pftrace;
pub mod program;
pub mod scenario;
pub mod schedule;

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use unitrace_core::atomic::AtomicFile;

use crate::rng::Draw;
use crate::units;
use event::CountSink;
use output::{Counter, CutMode, Limit};
use scenario::{tag, JobSpec, MetricsLink, RangeForm, Scenario, Shape};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Json,
    Pftrace,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Layout {
    /// `<app>.<pid>.<rank>.json` files in OUTDIR (unitrace's legacy names).
    #[value(alias = "legacy")]
    Files,
    /// A `unitrace --result-dir OUTDIR` tree (docs/formats.md#result-dir).
    ResultDir,
}

/// The options of `unitrace-gen trace`.
#[derive(Debug, clap::Args)]
pub struct TraceArgs {
    /// Folder to write into (created).
    pub outdir: PathBuf,
    /// Ranks (one file per rank and format).
    #[arg(long, default_value_t = 4)]
    pub ranks: u32,
    /// Events per rank file (about; the default when --size is not given).
    #[arg(long, conflicts_with = "size")]
    pub events: Option<u64>,
    /// Bytes per rank file of the JSON form (about): 500MB, 4MiB, ...
    #[arg(long, value_parser = units::parse_size)]
    pub size: Option<u64>,
    /// Training steps, each inside a `PyTorch::ProfilerStep#<i>` range
    /// (without it the iterations carry no step range).
    #[arg(long)]
    pub steps: Option<u32>,
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    #[arg(long, value_enum, default_value = "files")]
    pub layout: Layout,
    /// The rank whose compute kernels are slower, or `none` (default: ranks/2
    /// when there are two ranks or more).
    #[arg(long, allow_hyphen_values = true)]
    pub straggler: Option<String>,
    /// Device-time factor of the straggler's compute kernels.
    #[arg(long, default_value_t = 1.45)]
    pub slowdown: f64,
    /// One slow step: RANK:STEP[:FACTOR], that rank's compute kernels in
    /// that step (0-based) take FACTOR (default 3) times as long.
    #[arg(long, value_name = "RANK:STEP[:FACTOR]", value_parser = units::parse_slow_step)]
    pub slow_step: Option<(u32, u32, f64)>,
    /// Ranks whose files are cut as if the writer was killed: `1,3-4`, with
    /// an optional mode per item (`1:event,2:block`).
    #[arg(long, num_args = 1..)]
    pub cut: Vec<String>,
    /// Mode of `--cut` items that name none.
    #[arg(long, value_enum, default_value = "block")]
    pub cut_mode: CutMode,
    /// Shift rank r's clock by a deterministic offset in [-X, X] us, as
    /// ranks on different nodes see it.
    #[arg(long, default_value_t = 0.0)]
    pub clock_offset_us: f64,
    /// Application name (file names, result-dir folders).
    #[arg(long, default_value = "python")]
    pub app: String,
    /// Ranks per node (host names; pids repeat per node with --pid-collision).
    #[arg(long, default_value_t = 12)]
    pub ranks_per_node: u32,
    /// Ranks on different nodes get the same host pids.
    #[arg(long)]
    pub pid_collision: bool,
    /// `args.metrics` chart links on device events.
    #[arg(long, value_enum, default_value = "none")]
    pub metrics_link: MetricsLink,
    /// How host ranges are written: `x`, `be` (B/E pairs), or `mixed`
    /// (steps and oneDNN ranges as B/E).
    #[arg(long, value_enum, default_value = "mixed")]
    pub ranges: RangeForm,
    /// Problems to plant on every rank, comma-separated
    /// (docs/unitrace-gen.md#planted-problems): pageable-copy, small-copy,
    /// sync-wait, launch-bound, host-bound, exposed-communication,
    /// alloc-churn, jit, serialised-copy.
    #[arg(long, value_enum, value_delimiter = ',', num_args = 1..)]
    pub plant: Vec<scenario::Plant>,
    #[arg(short, long)]
    pub quiet: bool,
}

/// What one rank file should hold.
#[derive(Debug, Clone, Copy)]
enum Target {
    Events(u64),
    Bytes(u64),
}

const DEFAULT_EVENTS: u64 = 20_000;
const DEFAULT_LAYERS: u32 = 24;

pub fn run(args: &TraceArgs, seed: u64) -> Result<()> {
    if args.ranks == 0 {
        bail!("--ranks must be at least 1");
    }
    if !(args.slowdown.is_finite() && args.slowdown > 0.0) {
        bail!("--slowdown must be a positive number");
    }
    if !(args.clock_offset_us.is_finite() && args.clock_offset_us >= 0.0) {
        bail!("--clock-offset-us must be a number >= 0");
    }
    let cuts = units::parse_cuts(&args.cut, args.cut_mode).map_err(anyhow::Error::msg)?;
    if let Some((r, _)) = cuts.iter().find(|(r, _)| *r >= args.ranks) {
        bail!("--cut names rank {r}, but there are {} ranks", args.ranks);
    }
    let straggler = match &args.straggler {
        Some(s) => units::parse_straggler(s).map_err(anyhow::Error::msg)?,
        None if args.ranks >= 2 => Some(args.ranks / 2),
        None => None,
    };
    if let Some(s) = straggler.filter(|&s| s >= args.ranks) {
        bail!("--straggler {s}: there are {} ranks", args.ranks);
    }
    if let Some((r, _, _)) = args.slow_step.filter(|s| s.0 >= args.ranks) {
        bail!("--slow-step {r}: there are {} ranks", args.ranks);
    }
    let target = match (args.events, args.size) {
        (_, Some(bytes)) => Target::Bytes(bytes),
        (Some(events), None) => Target::Events(events),
        (None, None) => Target::Events(DEFAULT_EVENTS),
    };
    let spec = JobSpec {
        seed,
        ranks: args.ranks,
        app: args.app.clone(),
        ranks_per_node: args.ranks_per_node.max(1),
        straggler,
        slowdown: args.slowdown,
        slow_step: args.slow_step,
        clock_offset_us: args.clock_offset_us,
        pid_collision: args.pid_collision,
        metrics_link: args.metrics_link,
        ranges: args.ranges,
        step_ranges: args.steps.is_some(),
        lean_init: match target {
            Target::Events(n) => n < 400,
            Target::Bytes(b) => b < 80_000,
        },
        plants: scenario::Plants::new(&args.plant),
    };
    let shape = choose_shape(&spec, target, args.steps);
    let sc = schedule::plan(spec, shape);
    let written = write_files(&sc, args, &cuts)?;
    if !args.quiet {
        eprintln!(
            "unitrace-gen: {} ranks x {} steps x {} layers: {} files, {:.1} MB in {}",
            sc.ranks(),
            shape.steps,
            shape.layers,
            written.0,
            written.1 as f64 / 1e6,
            args.outdir.display()
        );
    }
    Ok(())
}

/// Steps and layers that give about `target` per rank file: the count is
/// affine in steps and in layers per step (`a + steps * (b + layers * c)`),
/// measured on rank 0 for three small shapes; then measured again with
/// instance ids as long as the chosen shape's (they grow with the job).
fn choose_shape(spec: &JobSpec, target: Target, steps: Option<u32>) -> Shape {
    let first = solve_shape(spec, target, steps, 1);
    // About 1.3 device commands per layer and 4 per step; the average id.
    let mean_id = (first.steps as f64 * (first.layers as f64 * 1.3 + 4.0) / 2.0) as u64;
    if mean_id < 1000 {
        return first;
    }
    solve_shape(spec, target, steps, mean_id)
}

fn solve_shape(spec: &JobSpec, target: Target, steps: Option<u32>, first_id: u64) -> Shape {
    let measure = |steps, layers| measure(spec, target, Shape { steps, layers }, first_id);
    // Whole blocks: the operations of a block differ in size.
    let block = crate::names::BLOCK.len() as u32;
    let (l1, l2) = (block, 2 * block);
    let m11 = measure(1, l1);
    let m21 = measure(2, l1);
    let m12 = measure(1, l2);
    let c = ((m12 - m11) / (l2 - l1) as f64).max(1.0);
    let b = (m21 - m11 - l1 as f64 * c).max(0.0);
    let a = m11 - b - l1 as f64 * c;
    let want = match target {
        Target::Events(n) => n as f64,
        Target::Bytes(n) => n as f64,
    };
    let layers_for = |steps: u32| ((want - a) / steps as f64 - b) / c;
    match steps {
        Some(steps) => {
            let steps = steps.max(1);
            Shape {
                steps,
                layers: layers_for(steps).round().clamp(1.0, 1e7) as u32,
            }
        }
        None => {
            let one = layers_for(1);
            if one <= DEFAULT_LAYERS as f64 {
                Shape {
                    steps: 1,
                    layers: one.round().max(1.0) as u32,
                }
            } else {
                let per_step = b + DEFAULT_LAYERS as f64 * c;
                let steps = ((want - a) / per_step).round().clamp(1.0, 1e9) as u32;
                Shape {
                    steps,
                    layers: DEFAULT_LAYERS,
                }
            }
        }
    }
}

/// Events or JSON bytes of rank 0 for `shape`.
fn measure(spec: &JobSpec, target: Target, shape: Shape, first_id: u64) -> f64 {
    let mut one = spec.clone();
    one.ranks = 1;
    one.straggler = None;
    let mut sc = schedule::plan(one, shape);
    sc.first_id = first_id;
    match target {
        Target::Events(_) => {
            let mut sink = CountSink::default();
            schedule::write_rank(&sc, 0, &mut sink).expect("counting cannot fail");
            sink.events as f64
        }
        Target::Bytes(_) => {
            let id = sc.identity(0);
            let mut sink = json::JsonSink::new(Counter::default(), &id, sc.spec.metrics_link, None);
            schedule::write_rank(&sc, 0, &mut sink).expect("counting cannot fail");
            sink.into_inner().bytes as f64
        }
    }
}

/// Writes every rank's files; returns (files, bytes).
fn write_files(sc: &Scenario, args: &TraceArgs, cuts: &[(u32, CutMode)]) -> Result<(u64, u64)> {
    fs::create_dir_all(&args.outdir)
        .with_context(|| format!("{}: cannot create the folder", args.outdir.display()))?;
    let formats: &[Format] = match args.format {
        Format::Both => &[Format::Json, Format::Pftrace],
        Format::Json => &[Format::Json],
        Format::Pftrace => &[Format::Pftrace],
    };
    let totals = (0..sc.ranks())
        .into_par_iter()
        .map(|rank| -> Result<(u64, u64)> {
            let id = sc.identity(rank);
            let dir = match args.layout {
                Layout::Files => args.outdir.clone(),
                Layout::ResultDir => {
                    let d = args
                        .outdir
                        .join(format!("rank_{rank}.{}.{}", sc.spec.app, id.pid));
                    fs::create_dir_all(&d)
                        .with_context(|| format!("{}: cannot create", d.display()))?;
                    write_run_config(sc, args, rank, &id)?;
                    d
                }
            };
            let cut = cuts.iter().find(|(r, _)| *r == rank).map(|c| c.1);
            let mut out = (0, 0);
            for &format in formats {
                let path = dir.join(file_name(sc, args.layout, format, &id));
                let bytes = write_rank_file(sc, rank, format, &path, cut)?;
                out.0 += 1;
                out.1 += bytes;
            }
            Ok(out)
        })
        .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))?;
    Ok(totals)
}

fn file_name(sc: &Scenario, layout: Layout, format: Format, id: &scenario::Identity) -> String {
    let ext = if format == Format::Pftrace {
        "pftrace"
    } else {
        "json"
    };
    match layout {
        Layout::Files => format!("{}.{}.{}.{ext}", sc.spec.app, id.pid, id.rank),
        Layout::ResultDir => format!("chrome_trace.{ext}"),
    }
}

/// One rank file, written to a temporary name and renamed when complete.
fn write_rank_file(
    sc: &Scenario,
    rank: u32,
    format: Format,
    path: &Path,
    cut: Option<CutMode>,
) -> Result<u64> {
    let limit = cut.map(|mode| cut_limit(sc, rank, format, mode));
    let file =
        AtomicFile::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
    let mut counted = CountingWriter {
        inner: file,
        bytes: 0,
    };
    serialise(sc, rank, format, &mut counted, limit)
        .with_context(|| format!("{}: write failed", path.display()))?;
    let bytes = counted.bytes;
    counted
        .inner
        .commit()
        .with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(bytes)
}

fn serialise<W: Write>(
    sc: &Scenario,
    rank: u32,
    format: Format,
    out: W,
    limit: Option<Limit>,
) -> io::Result<()> {
    let id = sc.identity(rank);
    let link = sc.spec.metrics_link;
    match format {
        Format::Pftrace => {
            let mut sink = pftrace::PftraceSink::new(out, &id, link, limit);
            schedule::write_rank(sc, rank, &mut sink)
        }
        _ => {
            let mut sink = json::JsonSink::new(out, &id, link, limit);
            schedule::write_rank(sc, rank, &mut sink)
        }
    }
}

/// Where a cut file stops: a fraction (35-85%, per rank and seed) of its
/// full length, on an 8 KiB block boundary or the last event before it;
/// the header cut keeps the first event (JSON) or the first two records.
fn cut_limit(sc: &Scenario, rank: u32, format: Format, mode: CutMode) -> Limit {
    let whole = |bytes, whole_units| Limit {
        bytes,
        whole_units,
        max_units: None,
    };
    match mode {
        CutMode::Empty => whole(0, false),
        CutMode::Header => Limit {
            bytes: u64::MAX,
            whole_units: true,
            max_units: Some(if format == Format::Pftrace { 2 } else { 1 }),
        },
        CutMode::Block | CutMode::Event => {
            let mut counter = Counter::default();
            serialise(sc, rank, format, &mut counter, None).expect("counting cannot fail");
            let f = Draw::new(sc.spec.seed, &[tag::CUT, rank as u64]).uniform(0.35, 0.85);
            let at = (counter.bytes as f64 * f) as u64;
            if mode == CutMode::Event {
                whole(at, true)
            } else if at >= 8192 {
                whole(at - at % 8192, false)
            } else {
                whole(at, false)
            }
        }
    }
}

/// `rank_<r>.unitrace.<launcher pid>/run_config.json`, written by the
/// unitrace launcher process (docs/formats.md#result-dir-launcher).
fn write_run_config(
    sc: &Scenario,
    args: &TraceArgs,
    rank: u32,
    id: &scenario::Identity,
) -> Result<()> {
    let launcher = id.pid - 2;
    let dir = args.outdir.join(format!("rank_{rank}.unitrace.{launcher}"));
    fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let mut unitrace_args = vec![
        "--chrome-kernel-logging",
        "--chrome-call-logging",
        "--chrome-mpi-logging",
        "--chrome-ccl-logging",
        "--chrome-itt-logging",
    ];
    if sc.spec.metrics_link != MetricsLink::None {
        unitrace_args.push("-q");
    }
    if args.format == Format::Pftrace {
        unitrace_args.extend(["--output-format", "protobuf"]);
    }
    let base = args
        .outdir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "results".into());
    let list = |items: &[&str]| {
        items
            .iter()
            .map(|a| format!("\"{a}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let text = format!(
        "{{ \"unitrace version\": \"2.1.3 (fcd0ca8)\",\n  \"app\": \"{app}\",\n  \"unitrace_args\": [{ua}, \"--result-dir\", \"{base}\"],\n  \"app_args\": [\"train.py\", \"--steps\", \"{steps}\"],\n  \"Host\": \"{host}\",\n  \"pid\": \"{launcher}\"\n}}\n",
        app = sc.spec.app,
        ua = list(&unitrace_args),
        steps = sc.shape.steps,
        host = id.host,
    );
    unitrace_core::atomic::write_atomic(&dir.join("run_config.json"), text.as_bytes())
        .with_context(|| format!("{}: cannot write", dir.display()))
}

struct CountingWriter<W: Write> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(b)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes one rank of `sc` as JSON into memory (tests, calibration).
pub fn rank_json(sc: &Scenario, rank: u32) -> Vec<u8> {
    let id = sc.identity(rank);
    let mut sink = json::JsonSink::new(Vec::new(), &id, sc.spec.metrics_link, None);
    schedule::write_rank(sc, rank, &mut sink).expect("writing to memory cannot fail");
    sink.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> JobSpec {
        JobSpec {
            seed: 1,
            ranks: 2,
            app: "python".into(),
            ranks_per_node: 12,
            straggler: Some(1),
            slowdown: 1.45,
            slow_step: None,
            clock_offset_us: 0.0,
            pid_collision: false,
            metrics_link: MetricsLink::Http,
            ranges: RangeForm::Mixed,
            step_ranges: true,
            lean_init: false,
            plants: scenario::Plants::default(),
        }
    }

    #[test]
    fn the_json_form_parses_and_counts_match() {
        let sc = schedule::plan(
            spec(),
            Shape {
                steps: 2,
                layers: 7,
            },
        );
        let bytes = rank_json(&sc, 1);
        let doc: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
        let events = doc["traceEvents"].as_array().unwrap();
        let mut count = CountSink::default();
        schedule::write_rank(&sc, 1, &mut count).unwrap();
        assert_eq!(events.len() as u64, count.events);
    }

    #[test]
    fn shapes_meet_their_targets() {
        let s = choose_shape(&spec(), Target::Events(5_000), None);
        let sc = schedule::plan(spec(), s);
        let mut count = CountSink::default();
        schedule::write_rank(&sc, 0, &mut count).unwrap();
        let n = count.events as f64;
        assert!((n - 5000.0).abs() < 250.0, "{n} events for 5000 ({s:?})");
        let s = choose_shape(&spec(), Target::Events(3_000), Some(6));
        assert_eq!(s.steps, 6);
    }
}
