//! `roofline`: GPU roofline from unitrace compute and memory profiles, a
//! drop-in for roofline.py (docs/compatibility.md#roofline) with an offline page.

pub mod app;
pub mod data;
pub mod model;
pub mod page;
pub mod summary;

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{CommandFactory, Parser, ValueEnum};
use unitrace_core::atomic::{ensure_not_input, AtomicFile, OutputSet};
use unitrace_core::cli::warn;
use unitrace_core::device_config::DeviceConfig;
use unitrace_core::roofline_profile::{read_compute_profile, read_memory_profile, ProfileInput};
use unitrace_core::InputError;
use unitrace_render::table::TableWriter;

use crate::model::Roofline;

pub const TOOL: &str = "roofline";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Self-contained page: chart, kernel table, search (works offline).
    Html,
    /// The chart alone, for papers.
    Svg,
}

#[derive(Parser, Debug)]
#[command(
    name = "roofline",
    version,
    about = "GPU roofline from unitrace compute and memory profiles",
    long_about = "GPU roofline from unitrace compute and memory profiles (drop-in for roofline.py).\n\n\
Either profile an application:\n  roofline --app \"./a.out args\" --device pvc --output r.html\n\
or use profiles recorded before:\n  unitrace -g VectorEngine138 -q -o flops.csv ./a.out   (compute profile)\n  \
unitrace -g ComputeBasic -q -o bytes.csv ./a.out      (memory profile)\n  \
roofline --compute flops.metrics.<pid>.csv --memory bytes.metrics.<pid>.csv --device pvc --output r.html",
    after_help = "The summary table goes to stdout like the original's; warnings and errors go to stderr.",
    infer_long_args = true
)]
pub struct Args {
    /// Compute profile: metric file of `unitrace -q -g VectorEngine138`
    #[arg(long, value_name = "FILE")]
    pub compute: Option<PathBuf>,
    /// Memory profile: metric file of `unitrace -q -g ComputeBasic`
    #[arg(long, value_name = "FILE")]
    pub memory: Option<PathBuf>,
    /// Application to profile (one string, split with shell quoting rules,
    /// run without a shell); wins over --compute/--memory
    #[arg(long, value_name = "CMD", allow_hyphen_values = true)]
    pub app: Option<String>,
    /// unitrace executable for --app (default: search PATH)
    #[arg(long, value_name = "PATH")]
    pub unitrace: Option<PathBuf>,
    /// Device: a bundled name (pvc, pvc_2tile, bmg_b580: device_configs/*.json)
    /// or a file, JSON or the original's CSV; an existing file wins
    #[arg(long, value_name = "NAME|FILE", required = true)]
    pub device: PathBuf,
    /// Output file; `.html` (or `.svg`) is appended when the name lacks it
    #[arg(long, value_name = "NAME", required = true)]
    pub output: PathBuf,
    /// Also write one CSV row per kernel and memory level to FILE
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Html)]
    pub format: Format,
    /// Name the N longest plotted kernels on the chart (0: no labels; at
    /// most 1000)
    #[arg(long, value_name = "N", default_value_t = 5,
          value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub labels: u16,
}

/// The device files shipped in device_configs/, compiled in so that
/// `--device pvc` works from any directory (docs/roofline.md#usage).
pub const BUNDLED_DEVICES: [(&str, &str); 3] = [
    ("pvc", include_str!("../../device_configs/pvc.json")),
    (
        "pvc_2tile",
        include_str!("../../device_configs/pvc_2tile.json"),
    ),
    (
        "bmg_b580",
        include_str!("../../device_configs/bmg_b580.json"),
    ),
];

/// `--device`: an existing file is read; otherwise a bundled name (with or
/// without `.json`, any case) selects the compiled-in file; anything else
/// is an error naming the file and the bundled names.
pub fn load_device(given: &Path) -> Result<(DeviceConfig, bool), InputError> {
    if given.is_file() {
        return DeviceConfig::from_path(given).map(|d| (d, true));
    }
    let wanted = given.to_string_lossy().to_ascii_lowercase();
    let wanted = wanted.strip_suffix(".json").unwrap_or(&wanted);
    if let Some((name, json)) = BUNDLED_DEVICES.iter().find(|(n, _)| *n == wanted) {
        let shown = PathBuf::from(format!("device_configs/{name}.json"));
        return DeviceConfig::from_bytes(&shown, json.as_bytes()).map(|d| (d, false));
    }
    let names: Vec<&str> = BUNDLED_DEVICES.iter().map(|(n, _)| *n).collect();
    Err(InputError::at_file(
        given,
        format!(
            "no such device file, and not a bundled device name ({})",
            names.join(", ")
        ),
    ))
}

/// `--output x` writes `x.html`, `--output x.html` writes `x.html` (the
/// original always appended `.html`, docs/compatibility.md#roofline-3).
pub fn output_path(given: &Path, format: Format) -> PathBuf {
    let (wanted, add): (&[&str], &str) = match format {
        Format::Html => (&["html", "htm"], "html"),
        Format::Svg => (&["svg"], "svg"),
    };
    let has = given
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| wanted.contains(&e.as_str()));
    if has {
        given.to_path_buf()
    } else {
        let mut s = given.as_os_str().to_os_string();
        s.push(".");
        s.push(add);
        PathBuf::from(s)
    }
}

pub fn main_with(args: Args) -> ExitCode {
    if args.app.is_none() && (args.compute.is_none() || args.memory.is_none()) {
        Args::command()
            .error(
                clap::error::ErrorKind::MissingRequiredArgument,
                "You must provide either --app or both --compute and --memory",
            )
            .exit();
    }
    unitrace_core::cli::finish(TOOL, run(&args))
}

fn open_all(paths: &[PathBuf]) -> Result<Vec<ProfileInput<'_>>, InputError> {
    paths
        .iter()
        .map(|p| {
            let f = File::open(p).map_err(|e| InputError::io(p, &e))?;
            Ok((
                p.as_path(),
                Box::new(BufReader::with_capacity(1 << 16, f)) as Box<dyn BufRead>,
            ))
        })
        .collect()
}

fn list(names: &[String]) -> String {
    names.join("; ")
}

pub fn run(args: &Args) -> Result<ExitCode> {
    let (device, device_is_file) = load_device(&args.device)?;
    let out = output_path(&args.output, args.format);
    let mut inputs: Vec<&Path> = Vec::new();
    if device_is_file {
        inputs.push(args.device.as_path());
    }
    if args.app.is_none() {
        inputs.extend(args.compute.iter().map(PathBuf::as_path));
        inputs.extend(args.memory.iter().map(PathBuf::as_path));
    }
    ensure_not_input(&out, &inputs)?;
    if let Some(d) = &args.data {
        ensure_not_input(d, &inputs)?;
        if d == &out {
            bail!("{}: --data and --output name the same file", d.display());
        }
    }

    // --app: profile first (the temporary directory goes away on drop, also
    // when a later step fails).
    let mut workdir = None;
    let (memory_files, compute_files) = if let Some(app) = &args.app {
        let unitrace = app::find_unitrace(args.unitrace.as_deref())?;
        let argv = app::split_command(app)?;
        let dir = tempfile::Builder::new()
            .prefix("Unitrace_result_")
            .rand_bytes(8)
            .tempdir_in(".")
            .context("cannot create the profiling directory in the current directory")?;
        // A relative prefix without dots: see app.rs.
        let rel = PathBuf::from(dir.path().file_name().unwrap_or_default());
        let files = app::profile(&unitrace, &argv, &rel)?;
        workdir = Some(dir);
        files
    } else {
        (
            args.memory.clone().into_iter().collect::<Vec<_>>(),
            args.compute.clone().into_iter().collect::<Vec<_>>(),
        )
    };

    let memory = read_memory_profile(open_all(&memory_files)?, &device.levels)?;
    let compute = read_compute_profile(open_all(&compute_files)?)?;
    let r = Roofline::join(memory, compute, device);

    // docs/compatibility.md#roofline-6: the original drops these silently.
    if !r.only_in_memory.is_empty() {
        warn(
            TOOL,
            format!(
                "{} kernel(s) only in the memory profile (no operation counts; not plotted, their time still counts in the total): {}",
                r.only_in_memory.len(),
                list(&r.only_in_memory)
            ),
        );
    }
    if !r.only_in_compute.is_empty() {
        warn(
            TOOL,
            format!(
                "{} kernel(s) only in the compute profile (no time or bytes; not plotted): {}",
                r.only_in_compute.len(),
                list(&r.only_in_compute)
            ),
        );
    }
    if !r.instance_mismatch.is_empty() {
        let items: Vec<String> = r
            .instance_mismatch
            .iter()
            .map(|(name, m, c)| format!("{name} (memory {m}, compute {c})"))
            .collect();
        warn(
            TOOL,
            format!(
                "{} kernel(s) ran a different number of times in the two profiles (the runs differ; sums are compared as they are): {}",
                items.len(),
                list(&items)
            ),
        );
    }
    if r.kernels.is_empty() {
        let mem = memory_files.first().map_or(Path::new(""), PathBuf::as_path);
        return Err(InputError::at_file(
            mem,
            "no kernel appears in both the memory and the compute profile",
        )
        .into());
    }

    {
        let stdout = std::io::stdout();
        let mut lock = std::io::BufWriter::new(stdout.lock());
        summary::write_summary(&r, &mut lock)?;
        lock.flush()?;
    }

    let views = r.views();
    for v in views.iter().filter(|v| v.selected) {
        for p in v.points.iter().filter(|p| !p.ai.is_finite()) {
            // docs/compatibility.md#roofline-2: the original divides by zero here.
            warn(
                TOOL,
                format!(
                    "{}: no bytes through {}; not plotted at that level",
                    r.kernels[v.kernel].name, r.levels[p.level].label
                ),
            );
        }
    }
    let name = out
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "roofline".into());
    let body = match args.format {
        Format::Html => page::html(&r, &views, &name, usize::from(args.labels)),
        Format::Svg => page::svg(&r, &views, &name, true, usize::from(args.labels)),
    };
    // The page and `--data` appear together (docs/robustness.md#outputs).
    let outputs = OutputSet::begin();
    let mut data_file = None;
    if let Some(d) = &args.data {
        let written = (|| {
            let mut t = TableWriter::create(d, &data::schema())?;
            data::write_table(&r, &views, &mut t)?;
            t.finish()
        })();
        data_file = Some(written.with_context(|| d.display().to_string())?);
    }
    let mut f = AtomicFile::create(&out).with_context(|| out.display().to_string())?;
    f.write_all(body.as_bytes())
        .with_context(|| out.display().to_string())?;
    f.commit().with_context(|| out.display().to_string())?;
    if let Some(f) = data_file {
        let p = f.path().to_path_buf();
        f.commit().with_context(|| p.display().to_string())?;
    }
    outputs.commit()?;
    if let Some(dir) = workdir {
        let shown = std::env::current_dir()
            .map(|c| c.join(dir.path().file_name().unwrap_or_default()))
            .unwrap_or_else(|_| dir.path().to_path_buf());
        dir.close()
            .with_context(|| format!("cannot remove {}", shown.display()))?;
        println!("Output directory {} has been removed.", shown.display());
    }
    Ok(ExitCode::SUCCESS)
}
