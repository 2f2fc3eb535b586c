//! `compare`: did my change help? Reads the baseline and candidate runs of
//! one kind (docs/compare.md#inputs), reduces each to items
//! ([`model`], several runs of a side merged), matches the items
//! ([`matching`]), computes the deltas and judges them against the
//! threshold and the run-to-run noise ([`delta`], [`significance`]),
//! checks the `--fail-if` gate ([`gate`]) and writes the table and files
//! ([`output`], [`html`]).

pub mod args;
pub mod delta;
pub mod gate;
pub mod html;
pub mod kinds;
pub mod matching;
pub mod model;
pub mod output;
pub mod significance;
pub mod spell;

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
use significance::Rule;

pub const TOOL: &str = "compare";

/// Kernels named on the `--html` roofline chart (the longest in the
/// candidate).
const ROOFLINE_LABELS: usize = 8;

/// Exit code when a `--fail-if` threshold is exceeded.
pub const EXIT_GATE: u8 = 3;

fn read_run(kind: Kind, path: &Path, roofline: Option<&Path>) -> Result<Run> {
    match kind {
        Kind::Traces => kinds::traces::read(path),
        Kind::SummaryJson => kinds::summary_json::read(path),
        Kind::SummaryTarball => kinds::summary_tarball::read(path),
        Kind::MetricCsv => kinds::metrics::read(path),
        Kind::Roofline => match roofline {
            Some(device) => kinds::roofline::read(device, path),
            None => bail!(
                "{}: roofline profiles need --roofline DEVICE",
                path.display()
            ),
        },
    }
}

/// A mistake in the command line (exit 2), as opposed to bad input.
#[derive(Debug)]
pub struct Usage(pub String);

/// The runs of each side as given on the command line
/// (docs/compare.md#repeated-runs): `BASELINE CANDIDATE`, or
/// `BASE... --vs CAND...`; `--instances` takes one or two files.
pub fn sides(args: &Args) -> std::result::Result<(Vec<PathBuf>, Vec<PathBuf>), Usage> {
    let runs = &args.runs;
    if !args.instances.is_empty() {
        if !args.vs.is_empty() || runs.len() > 2 {
            return Err(Usage(
                "--instances compares two instances of one or two metric CSVs: give one or two files, without --vs".into(),
            ));
        }
        return Ok((vec![runs[0].clone()], runs[1..].to_vec()));
    }
    if !args.vs.is_empty() {
        return Ok((runs.clone(), args.vs.clone()));
    }
    match runs.len() {
        2 => Ok((vec![runs[0].clone()], vec![runs[1].clone()])),
        1 => Err(Usage(
            "give a BASELINE and a CANDIDATE, or repeated runs BASE1 BASE2 ... --vs CAND1 CAND2 ... \
             (or --instances K:N K:M with one metric CSV)"
                .into(),
        )),
        n => Err(Usage(format!(
            "{n} runs given: name the candidate's runs with --vs (compare BASE1 BASE2 --vs CAND1 CAND2)"
        ))),
    }
}

/// Every run of a side, folders of runs expanded.
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        out.extend(kinds::runs_of(p)?);
    }
    Ok(out)
}

/// Reads every run at once: each is one streaming pass, and a reader of
/// one run leaves cores idle (docs/compare.md#speed). The first error in
/// the order given is the one reported.
fn read_runs(kind: Kind, paths: &[&Path], roofline: Option<&Path>) -> Result<Vec<Run>> {
    use rayon::prelude::*;
    let runs: Vec<Result<Run>> = paths
        .par_iter()
        .map(|path| read_run(kind, path, roofline))
        .collect();
    runs.into_iter().collect()
}

/// One side's runs, read and merged, with their names.
pub struct Side {
    pub run: Run,
    pub names: Vec<String>,
}

/// Reads both sides; every run must be of one kind.
pub fn load(args: &Args, base: &[PathBuf], cand: &[PathBuf]) -> Result<(Kind, Side, Side)> {
    let base_path = &base[0];
    let base_kind = if args.roofline.is_some() {
        Kind::Roofline
    } else {
        kinds::detect(base_path)?
    };
    if !args.instances.is_empty() {
        return load_instances(args, base_kind, base_path, cand.first());
    }
    let (base, cand) = (expand(base)?, expand(cand)?);
    let mut kind = base_kind;
    if args.roofline.is_none() {
        // Every run against the first baseline: a kind only guessed from
        // the first bytes follows the other's when the name allows it
        // (docs/compare.md#inputs).
        for p in base.iter().chain(&cand).skip(1) {
            kind = kinds::agree((&base[0], kind), (p, kinds::detect(p)?))?.0;
        }
    }
    let all: Vec<&Path> = base.iter().chain(&cand).map(PathBuf::as_path).collect();
    let mut runs = read_runs(kind, &all, args.roofline.as_deref())?;
    let cand_runs = runs.split_off(base.len());
    let names = |paths: &[PathBuf]| paths.iter().map(|p| p.display().to_string()).collect();
    Ok((
        kind,
        Side {
            run: model::merge_runs(runs),
            names: names(&base),
        },
        Side {
            run: model::merge_runs(cand_runs),
            names: names(&cand),
        },
    ))
}

/// `--instances K:N K:M`: two instances of one metric CSV (or of two).
fn load_instances(
    args: &Args,
    base_kind: Kind,
    base_path: &Path,
    cand_path: Option<&PathBuf>,
) -> Result<(Kind, Side, Side)> {
    if base_kind != Kind::MetricCsv {
        bail!(
            "{}: --instances compares instances of a metric CSV; this is {}",
            base_path.display(),
            base_kind.as_str()
        );
    }
    let cand_path = cand_path.map_or(base_path, PathBuf::as_path);
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
    Ok((
        base_kind,
        Side {
            run: base,
            names: vec![format!("{}:{}", base_path.display(), args.instances[0])],
        },
        Side {
            run: cand,
            names: vec![format!("{}:{}", cand_path.display(), args.instances[1])],
        },
    ))
}

fn usage_exit(message: &str) -> ExitCode {
    eprintln!("{TOOL}: {}", unitrace_core::cli::one_line(message));
    ExitCode::from(unitrace_core::cli::EXIT_USAGE)
}

/// `--threshold REL%,ABS` over the defaults (docs/compare.md#significance).
pub fn significance_rule(args: &Args) -> std::result::Result<Rule, Usage> {
    let mut rule = Rule {
        alpha: args.alpha,
        ..Rule::default()
    };
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(Usage(format!(
            "--alpha {}: a level between 0 and 1, e.g. 0.05",
            args.alpha
        )));
    }
    let Some(text) = &args.threshold else {
        return Ok(rule);
    };
    for part in text.split(',') {
        match gate::parse_threshold(part, gate::MetricUnit::Time) {
            Ok(gate::Threshold::Relative(v)) if v >= 0.0 => rule.threshold_pct = v,
            Ok(gate::Threshold::Absolute(v)) if v >= 0.0 => rule.threshold_us = v,
            _ => {
                return Err(Usage(format!(
                    "--threshold '{text}': expected REL%,ABS with a time unit, e.g. '5%,10us', '2%', '1ms' (not negative)"
                )))
            }
        }
    }
    Ok(rule)
}

pub fn run(args: Args) -> Result<ExitCode> {
    let rules = args
        .fail_if
        .iter()
        .map(|r| gate::parse_rule(r))
        .collect::<Result<Vec<_>>>();
    let rules = match rules {
        Ok(r) => r,
        // A malformed rule is a usage error (exit 2), like clap's.
        Err(e) => return Ok(usage_exit(&format!("{e:#}"))),
    };
    let (base_paths, cand_paths) = match sides(&args) {
        Ok(s) => s,
        Err(Usage(m)) => return Ok(usage_exit(&m)),
    };
    let rule = match significance_rule(&args) {
        Ok(r) => r,
        Err(Usage(m)) => return Ok(usage_exit(&m)),
    };
    let inputs: Vec<&Path> = base_paths
        .iter()
        .chain(&cand_paths)
        .map(PathBuf::as_path)
        .collect();
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

    let (kind, base, cand) = load(&args, &base_paths, &cand_paths)?;
    let label = |given: &[PathBuf], side: &Side| {
        if args.instances.is_empty() {
            let given: Vec<&Path> = given.iter().map(PathBuf::as_path).collect();
            delta::side_label(&given)
        } else {
            side.names.join(", ")
        }
    };
    let names = (
        delta::SideNames {
            label: label(&base_paths, &base),
            runs: &base.names,
        },
        delta::SideNames {
            label: label(&cand_paths, &cand),
            runs: &cand.names,
        },
    );
    let cmp = delta::compare(
        kind.as_str(),
        names,
        &base.run,
        &cand.run,
        args.level,
        &rule,
    );
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
        // With repeated runs, the first of each side is drawn.
        let chart = match (&args.roofline, cand_paths.first()) {
            (Some(device), Some(cand)) => Some(roofline::page::compare_svg(
                &kinds::roofline::model(device, &base_paths[0])?,
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
