//! `compare`: did my change help? Reads a baseline and a candidate run of
//! one kind (docs/compare.md#inputs), reduces each to items
//! ([`model`]), matches the items ([`matching`]), computes the deltas
//! ([`delta`]), checks the `--fail-if` gate ([`gate`]) and writes the
//! table and files ([`output`]).

pub mod args;
pub mod delta;
pub mod gate;
pub mod html;
pub mod kinds;
pub mod matching;
pub mod model;
pub mod output;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Result};
use unitrace_core::atomic::{ensure_not_input, same_output_path, AtomicFile};
use unitrace_core::cli::warn;
use unitrace_core::InputError;
use unitrace_render::table::TableFormat;

use args::Args;
use kinds::Kind;
use model::Run;

pub const TOOL: &str = "compare";

/// Kernels named on the `--html` roofline chart (the longest in the
/// candidate).
const ROOFLINE_LABELS: usize = 8;

/// Exit code when a `--fail-if` threshold is exceeded.
pub const EXIT_GATE: u8 = 3;

fn read_run(kind: Kind, path: &Path) -> Result<Run> {
    match kind {
        Kind::Traces => kinds::traces::read(path),
        Kind::SummaryJson => kinds::summary_json::read(path),
        Kind::SummaryTarball => kinds::summary_tarball::read(path),
        Kind::MetricCsv => kinds::metrics::read(path),
        // Read in `load` (it needs the device file).
        Kind::Roofline => bail!(
            "{}: roofline profiles need --roofline DEVICE",
            path.display()
        ),
    }
}

/// Reads both sides; they must be of one kind.
pub fn load(args: &Args) -> Result<(Kind, Run, Run, String, String)> {
    let base_path = &args.baseline;
    let base_kind = if args.roofline.is_some() {
        Kind::Roofline
    } else {
        kinds::detect(base_path)?
    };
    if !args.instances.is_empty() {
        if base_kind != Kind::MetricCsv {
            bail!(
                "{}: --instances compares instances of a metric CSV; this is {}",
                base_path.display(),
                base_kind.as_str()
            );
        }
        let cand_path = args.candidate.as_ref().unwrap_or(base_path);
        if cand_path != base_path {
            let k = kinds::detect(cand_path)?;
            if k != Kind::MetricCsv {
                bail!(
                    "{}: {} against a metric CSV",
                    cand_path.display(),
                    k.as_str()
                );
            }
        }
        let mut base = kinds::metrics::read_instance(base_path, &args.instances[0])?;
        let mut cand = kinds::metrics::read_instance(cand_path, &args.instances[1])?;
        let label = format!("{} vs {}", args.instances[0], args.instances[1]);
        for run in [&mut base, &mut cand] {
            run.sections[0].items[0].name = label.clone();
        }
        let names = (
            format!("{}:{}", base_path.display(), args.instances[0]),
            format!("{}:{}", cand_path.display(), args.instances[1]),
        );
        return Ok((base_kind, base, cand, names.0, names.1));
    }
    if let Some(device) = &args.roofline {
        let Some(cand_path) = &args.candidate else {
            bail!("--roofline: give BASELINE and CANDIDATE, each COMPUTE,MEMORY");
        };
        let base = kinds::roofline::read(device, base_path)?;
        let cand = kinds::roofline::read(device, cand_path)?;
        return Ok((
            Kind::Roofline,
            base,
            cand,
            base_path.display().to_string(),
            cand_path.display().to_string(),
        ));
    }
    let Some(cand_path) = &args.candidate else {
        bail!("give a BASELINE and a CANDIDATE (or --instances K:N K:M with one metric CSV)");
    };
    let cand_kind = kinds::detect(cand_path)?;
    let (base_kind, cand_kind) = kinds::agree((base_path, base_kind), (cand_path, cand_kind))?;
    // Both sides at once: each is one streaming pass, and a reader of one
    // side leaves cores idle (docs/compare.md#speed).
    let (base, cand) = std::thread::scope(|scope| {
        let cand = scope.spawn(|| read_run(cand_kind, cand_path));
        let base = read_run(base_kind, base_path);
        let cand = cand
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("{}: reader failed", cand_path.display())));
        (base, cand)
    });
    let (base, cand) = (base?, cand?);
    Ok((
        base_kind,
        base,
        cand,
        base_path.display().to_string(),
        cand_path.display().to_string(),
    ))
}

pub fn run(args: Args) -> Result<ExitCode> {
    let rules = args
        .fail_if
        .iter()
        .map(|r| gate::parse_rule(r))
        .collect::<Result<Vec<_>>>();
    let rules = match rules {
        Ok(r) => r,
        Err(e) => {
            // A malformed rule is a usage error (exit 2), like clap's.
            eprintln!(
                "{TOOL}: {}",
                unitrace_core::cli::one_line(&format!("{e:#}"))
            );
            return Ok(ExitCode::from(unitrace_core::cli::EXIT_USAGE));
        }
    };
    let mut inputs: Vec<&Path> = vec![args.baseline.as_path()];
    inputs.extend(args.candidate.as_deref());
    let outputs: Vec<&PathBuf> = [&args.csv, &args.json, &args.markdown, &args.html]
        .into_iter()
        .flatten()
        .collect();
    for (i, o) in outputs.iter().enumerate() {
        ensure_not_input(o, &inputs)?;
        for p in &outputs[..i] {
            if same_output_path(o, p) {
                bail!("{}: given as two outputs", o.display());
            }
        }
    }

    let (kind, base, cand, bname, cname) = load(&args)?;
    let cmp = delta::compare(kind.as_str(), (&bname, &cname), &base, &cand, args.level);
    let verdict = gate::evaluate(&rules, &cmp);
    for w in &verdict.warnings {
        warn(TOOL, w);
    }

    let mut pending: Vec<(&PathBuf, AtomicFile)> = Vec::new();
    if let Some(path) = &args.csv {
        let f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
        let f = output::write_table(f, TableFormat::of_path(path), &cmp)?;
        pending.push((path, f));
    }
    if let Some(path) = &args.json {
        let mut f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
        output::write_json(&mut f, &cmp, &verdict.violations)?;
        pending.push((path, f));
    }
    if let Some(path) = &args.markdown {
        let mut f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
        output::write_markdown(&mut f, &cmp, &verdict.violations, !rules.is_empty())?;
        pending.push((path, f));
    }
    if let Some(path) = &args.html {
        let f = AtomicFile::create(path).map_err(|e| InputError::io(path, &e))?;
        // The roofline kind gets the baseline -> candidate chart; its
        // models are read again (profiles are small) rather than carried
        // through every kind's Run.
        let chart = match (&args.roofline, &args.candidate) {
            (Some(device), Some(cand)) => Some(roofline::page::compare_svg(
                &kinds::roofline::model(device, &args.baseline)?,
                &kinds::roofline::model(device, cand)?,
                "roofline: baseline -> candidate",
                ROOFLINE_LABELS,
            )),
            _ => None,
        };
        let f = html::write(
            f,
            &cmp,
            &verdict.violations,
            !rules.is_empty(),
            chart.as_deref(),
        )?;
        pending.push((path, f));
    }
    for (path, f) in pending {
        f.commit().map_err(|e| InputError::io(path, &e))?;
    }
    if !args.quiet {
        let stdout = std::io::stdout();
        let mut lock = stdout.lock();
        match output::write_console(&mut lock, &cmp).and_then(|_| lock.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other?,
        }
    }
    // Kernel names in a violation are input: escaped (docs/robustness.md#messages).
    for v in &verdict.violations {
        eprintln!("{TOOL}: {}", unitrace_core::cli::escape_controls(v));
    }
    Ok(if verdict.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_GATE)
    })
}
