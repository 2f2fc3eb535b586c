//! What an input is (docs/compare.md#inputs) and how each kind is reduced
//! to a [`Run`](crate::model::Run).

pub mod metrics;
pub mod roofline;
pub mod summary_json;
pub mod summary_tarball;
pub mod traces;

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Result};
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
