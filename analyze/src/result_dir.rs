//! `analyze --result-dir DIR` (docs/analyze.md#result-dir): the devices of
//! a `unitrace --result-dir` tree are its `**/metrics/metrics_<n>.csv`
//! files, found by `unitrace_core::result_dir`, one per (rank, device) so
//! that ranks with the same device number stay apart (upstream lets the
//! last one listed win; docs/compatibility.md#analyze-result-dir).
//!
//! A file is named `Device <n>` when no other file has device `<n>`, else
//! `Device <n> (rank <r>)` (or `(<app>.<pid>)` for processes without a
//! rank); `-d N [--rank R]` picks one, and the modes then run on that file
//! as on a single banner-less CSV.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::bail;
use unitrace_core::result_dir::{Found, ResultDir};

use crate::plan::ListPlan;

/// One metric file of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceFile {
    pub path: PathBuf,
    pub device: u32,
    pub rank: Option<u32>,
    /// `Device <n>` or `Device <n> (rank <r>)`, as `-l` prints it.
    pub label: String,
}

/// The non-empty metric files of `dir` in rank, device, path order.
pub fn device_files(dir: &Path) -> anyhow::Result<Vec<DeviceFile>> {
    let tree = ResultDir::open(dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    // FIFOs, unreadable files, link loops: one warning each
    // (docs/robustness.md#walked-folders).
    for (path, problem) in &tree.unreadable {
        unitrace_core::cli::warn("analyze", format!("{}: {problem}", path.display()));
    }
    let found: Vec<&Found> = tree
        .metric_files(None)
        .into_iter()
        .filter(|f| std::fs::metadata(&f.path).is_ok_and(|m| m.len() > 0))
        .collect();
    let files = found
        .iter()
        .map(|f| {
            let device = f.device().unwrap_or(0);
            let shared = found
                .iter()
                .filter(|o| o.device().unwrap_or(0) == device)
                .count()
                > 1;
            let label = match (shared, f.rank, &f.process) {
                (false, _, _) => format!("Device {device}"),
                (true, Some(rank), _) => format!("Device {device} (rank {rank})"),
                (true, None, Some(p)) => format!("Device {device} ({}.{})", p.app, p.pid),
                (true, None, None) => format!("Device {device} ({})", f.path.display()),
            };
            DeviceFile {
                path: f.path.clone(),
                device,
                rank: f.rank,
                label,
            }
        })
        .collect::<Vec<_>>();
    if files.is_empty() {
        bail!(
            "{}: no metrics/metrics_<n>.csv file with data in this result directory",
            dir.display()
        );
    }
    Ok(files)
}

/// The file of device `device` (of `rank` when given).
pub fn choose(
    dir: &Path,
    files: &[DeviceFile],
    device: i64,
    rank: Option<u32>,
) -> anyhow::Result<PathBuf> {
    let matching: Vec<&DeviceFile> = files
        .iter()
        .filter(|f| i64::from(f.device) == device && rank.is_none_or(|r| f.rank == Some(r)))
        .collect();
    match matching.as_slice() {
        [one] => Ok(one.path.clone()),
        [] => {
            let have: Vec<&str> = files.iter().map(|f| f.label.as_str()).collect();
            let which = match rank {
                Some(r) => format!("device {device} of rank {r}"),
                None => format!("device {device}"),
            };
            bail!("{}: no {which} (have: {})", dir.display(), have.join(", "))
        }
        several => {
            let ranks: Vec<String> = several
                .iter()
                .map(|f| {
                    f.rank
                        .map_or_else(|| f.path.display().to_string(), |r| r.to_string())
                })
                .collect();
            bail!(
                "{}: device {device} exists in ranks {}; choose one with --rank",
                dir.display(),
                ranks.join(", ")
            )
        }
    }
}

/// `-l` of the tree: each file's listing under its own label.
pub fn listing(files: &[DeviceFile]) -> anyhow::Result<String> {
    let mut text = String::new();
    for f in files {
        let file = unitrace_core::metric_csv::open_input(&f.path)?;
        let listing = crate::list::list(file, &f.path)?;
        if let Some(line) = listing.first_non_utf8_kernel {
            crate::list::warn_non_utf8_kernel(&f.path, line);
        }
        if let Some(line) = listing.foreign_header {
            crate::list::warn_foreign_header(&f.path, line);
        }
        // A metric file of a result dir has no banner, so it is listed as
        // device 0: that line becomes its label.
        match listing.text.strip_prefix("Device 0\n") {
            Some(body) => {
                text.push_str(&f.label);
                text.push('\n');
                text.push_str(body);
            }
            None => text.push_str(&listing.text),
        }
    }
    Ok(text)
}

/// `analyze --result-dir -l DIR`.
pub fn run_list(plan: &ListPlan) -> anyhow::Result<ExitCode> {
    let files = device_files(&plan.input)?;
    let text = listing(&files)?;
    crate::list::write_listing(&text, plan.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}
