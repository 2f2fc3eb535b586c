//! What an input is (docs/compare.md#inputs) and how each kind is reduced
//! to a [`Run`](crate::model::Run).

pub mod metrics;
pub mod roofline;
pub mod summary_json;
pub mod summary_tarball;
pub mod traces;

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use unitrace_core::result_dir::{TRACE_JSON, TRACE_PFTRACE};
use unitrace_core::InputError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Rank traces: a directory of `<app>.<pid>.<rank>.json|.pftrace`, a
    /// result-dir tree, a merged trace or one trace file.
    Traces,
    /// The `summary` tool's JSON output.
    SummaryJson,
    /// A tarball of unitrace `-h -d [-r]` logs (the `summary` tool's input).
    SummaryTarball,
    /// A hardware metric CSV (`unitrace -q` / `-k`).
    MetricCsv,
    /// A roofline compute and memory profile pair (`--roofline DEVICE`).
    Roofline,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Traces => "traces",
            Kind::SummaryJson => "summary JSON",
            Kind::SummaryTarball => "summary tarball",
            Kind::MetricCsv => "metric CSV",
            Kind::Roofline => "roofline profiles",
        }
    }
}

/// Whether a gzip file holds a trace (JSON or `.pftrace`, by the trace
/// source's detection of its inflated head).
fn gzipped_trace(path: &Path) -> bool {
    use unitrace_core::timeline::detect::Sniffed;
    matches!(
        unitrace_core::timeline::open(path).map(|o| o.sniffed),
        Ok(Sniffed::Json(_) | Sniffed::Pftrace)
    )
}

/// Tells the kind of `path` from what it is and its first bytes.
pub fn detect(path: &Path) -> Result<Kind> {
    let meta = std::fs::metadata(path).map_err(|e| InputError::io(path, &e))?;
    if meta.is_dir() {
        return Ok(Kind::Traces);
    }
    let mut head = Vec::with_capacity(8192);
    std::fs::File::open(path)
        .and_then(|f| f.take(8192).read_to_end(&mut head))
        .map_err(|e| InputError::io(path, &e))?;
    if unitrace_core::pftrace::sniff(&head) {
        return Ok(Kind::Traces);
    }
    if head.starts_with(&[0x1f, 0x8b]) && gzipped_trace(path) {
        // A gzipped trace (Kineto writes `*.pt.trace.json.gz`); a gzipped
        // tar is a summary tarball (below).
        return Ok(Kind::Traces);
    }
    let compressed = head.starts_with(&[0x1f, 0x8b])
        || head.starts_with(b"BZh")
        || head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z'])
        || head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]);
    if compressed || head.get(257..262) == Some(b"ustar") {
        return Ok(Kind::SummaryTarball);
    }
    let text = String::from_utf8_lossy(&head);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.starts_with('[') {
        return Ok(Kind::Traces);
    }
    if trimmed.starts_with('{') {
        if text.contains("\"traceEvents\"") || text.contains("\"ph\"") {
            return Ok(Kind::Traces);
        }
        return Ok(Kind::SummaryJson);
    }
    if text.contains("Kernel") && text.contains(',') {
        return Ok(Kind::MetricCsv);
    }
    bail!(
        "{}: not a trace, a directory of traces, a summary JSON or tarball, or a metric CSV",
        path.display()
    )
}

/// A file a directory of rank traces holds (`*.json`, `*.pftrace`).
fn is_trace_file(path: &Path) -> bool {
    path.is_file()
        && path
            .extension()
            .is_some_and(|e| e == "json" || e == "pftrace")
}

/// The runs a path names (docs/compare.md#repeated-runs). A **folder of
/// runs** is a directory that holds no trace file of its own, is not a
/// `--result-dir` tree (none of its folders holds a `chrome_trace.json` or
/// `.pftrace` directly), and has subfolders: each (but hidden ones) is one
/// run, in name order. Anything else is one run: a file, a directory of
/// one run's rank traces, a result-dir tree.
pub fn runs_of(path: &Path) -> Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| InputError::io(path, &e))? {
        let p = entry.map_err(|e| InputError::io(path, &e))?.path();
        let hidden = p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if p.is_dir() {
            folders.push(p);
        } else if is_trace_file(&p) {
            return Ok(vec![path.to_path_buf()]);
        }
    }
    let process_folder = |f: &PathBuf| {
        [TRACE_JSON, TRACE_PFTRACE]
            .iter()
            .any(|name| f.join(name).is_file())
    };
    if folders.is_empty() || folders.iter().any(process_folder) {
        return Ok(vec![path.to_path_buf()]);
    }
    folders.sort();
    Ok(folders)
}

/// The kinds a file's name allows (`None`: the name says nothing).
fn kinds_of_name(path: &Path) -> Option<&'static [Kind]> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    if name.ends_with(".json.gz") {
        return Some(&[Kind::Traces]);
    }
    let ext = name.rsplit_once('.')?.1;
    Some(match ext {
        "csv" => &[Kind::MetricCsv],
        "json" => &[Kind::Traces, Kind::SummaryJson],
        "pftrace" => &[Kind::Traces],
        "tgz" | "tar" | "gz" | "bz2" | "xz" | "zst" | "tbz2" | "txz" | "tzst" => {
            &[Kind::SummaryTarball]
        }
        _ => return None,
    })
}

/// Two sides detected as different kinds (docs/compare.md#inputs). A side
/// whose kind was only a guess from its first bytes (a JSON object without
/// `traceEvents` is taken for a summary JSON; a `.csv` whose bytes look
/// like a trace) and whose name allows the other side's kind is read as
/// that kind, so that its own reader names what is wrong with it (a cut
/// trace, a malformed CSV). Otherwise the kinds differ for real: an error
/// naming first the side whose name disagrees with its bytes.
pub fn agree(base: (&Path, Kind), cand: (&Path, Kind)) -> Result<(Kind, Kind)> {
    if base.1 == cand.1 {
        return Ok((base.1, cand.1));
    }
    let contradicts = |(path, kind): (&Path, Kind)| {
        kinds_of_name(path).is_some_and(|allowed| !allowed.contains(&kind))
    };
    let guessed = |side: (&Path, Kind)| side.1 == Kind::SummaryJson || contradicts(side);
    let allows = |path: &Path, kind: Kind| kinds_of_name(path).is_some_and(|k| k.contains(&kind));
    if guessed(base) && allows(base.0, cand.1) {
        return Ok((cand.1, cand.1));
    }
    if guessed(cand) && allows(cand.0, base.1) {
        return Ok((base.1, base.1));
    }
    let (first, second, role) = if contradicts(cand) && !contradicts(base) {
        (cand, base, "baseline")
    } else {
        (base, cand, "candidate")
    };
    bail!(
        "{}: {} against a {} {role} ({}); compare two of one kind",
        first.0.display(),
        first.1.as_str(),
        second.1.as_str(),
        second.0.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guessed_kind_follows_the_other_side_when_the_name_allows_it() {
        let p = Path::new;
        // A cut trace `{"traceEv` reads as a summary JSON at first.
        assert_eq!(
            agree(
                (p("cut.json"), Kind::SummaryJson),
                (p("b.json"), Kind::Traces)
            )
            .unwrap(),
            (Kind::Traces, Kind::Traces)
        );
        // A `.csv` whose bytes looked like a trace.
        assert_eq!(
            agree((p("a.csv"), Kind::MetricCsv), (p("b.csv"), Kind::Traces)).unwrap(),
            (Kind::MetricCsv, Kind::MetricCsv)
        );
        // Kinds that differ for real, the odd name first.
        let e = agree((p("a.json"), Kind::Traces), (p("m.csv"), Kind::MetricCsv)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a.json: traces against a metric CSV candidate (m.csv); compare two of one kind"
        );
        let e = agree(
            (p("s.tgz"), Kind::SummaryTarball),
            (p("dir.csv"), Kind::Traces),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "dir.csv: traces against a summary tarball baseline (s.tgz); compare two of one kind"
        );
    }
}
