//! `analyze -l [-o FILE] INPUT`: devices, metrics and kernels of a metric or
//! stall CSV, in the text layout of `analyzeperfmetrics.py -l`
//! (docs/compatibility.md#analyze-list), byte for byte, except for these deliberate fixes:
//!
//! * the last instance of a section counts even when no blank line follows
//!   it (docs/compatibility.md#analyze-quirk-4);
//! * rows with an empty kernel name and the blank line before the next
//!   banner are separators, not kernels: multi-device stall files and
//!   unresolved kernel names no longer crash the listing (docs/compatibility.md#analyze-quirk-5);
//! * a file without any `=== Device #N Metrics ===` banner (`--result-dir`
//!   layout, old main logs) is listed as device 0 instead of printing
//!   nothing (docs/compatibility.md#analyze-quirk-15);
//! * the empty field after a trailing separator (files before 2024-12) is
//!   not listed as a metric (pandas calls it `Unnamed: N`);
//! * `GlobalInstanceId` is not listed as a metric: it numbers kernel
//!   instances (the id in the trace's chart links) and measures nothing.
//!
//! `SubDeviceId` of query files stays listed, as in the original: it is the
//! index of the calculated report, a value of the file like the others.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use unitrace_core::atomic::{ensure_not_input, AtomicFile};
use unitrace_core::cli::warn;
use unitrace_core::metric_csv::{
    has_unitrace_column, open_input, CsvReader, FileKind, Header, InstanceEvent, InstanceReader,
};
use unitrace_core::InputError;

use crate::plan::ListPlan;

const TOOL: &str = "analyze";

/// The warning for the first kernel name of `input` (at `line`) that is not
/// valid UTF-8, shared by every mode of analyze.
pub(crate) fn warn_non_utf8_kernel(input: &Path, line: u64) {
    warn(
        TOOL,
        format!(
            "{}:{line}: kernel name is not valid UTF-8; invalid bytes are shown as U+FFFD",
            input.display()
        ),
    );
}

pub fn run(plan: &ListPlan) -> anyhow::Result<ExitCode> {
    let input = plan.input.as_path();
    if let Some(out) = &plan.output {
        ensure_not_input(out, &[input])?;
    }
    let file = open_input(input)?;
    let listing = list(file, input)?;
    if let Some(line) = listing.first_non_utf8_kernel {
        warn_non_utf8_kernel(input, line);
    }
    if let Some(line) = listing.foreign_header {
        warn_foreign_header(input, line);
    }
    if let Some(line) = listing.rows_before_banner {
        warn_rows_before_banner(input, line);
    }
    write_listing(&listing.text, plan.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

/// Writes a listing to `output` (atomically) or to standard output.
pub(crate) fn write_listing(text: &str, output: Option<&Path>) -> anyhow::Result<()> {
    match output {
        Some(out) => {
            let mut f = AtomicFile::create(out)
                .with_context(|| format!("{}: cannot create output file", out.display()))?;
            f.write_all(text.as_bytes())
                .and_then(|()| f.commit())
                .with_context(|| format!("{}: cannot write output file", out.display()))?;
        }
        None => {
            let mut stdout = io::stdout().lock();
            // Kernel names are input: no raw control byte on a terminal
            // (docs/robustness.md#messages); `-o` keeps them as read.
            let shown = unitrace_core::cli::escape_lines(text);
            match stdout
                .write_all(shown.as_bytes())
                .and_then(|()| stdout.flush())
            {
                // `analyze -l big.csv | head` is not an error.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {}
                other => other.context("cannot write to standard output")?,
            }
        }
    }
    Ok(())
}

/// The warning for rows before the first device banner of a file that has
/// banners, which every mode drops (docs/robustness.md#metric-csvs).
pub(crate) fn warn_rows_before_banner(input: &Path, line: u64) {
    warn(
        TOOL,
        format!(
            "{}:{line}: rows before the first device banner belong to no device; dropped",
            input.display()
        ),
    );
}

/// The warning for a header without any column unitrace writes (listed
/// all the same; docs/compatibility.md#analyze-foreign-csv).
pub(crate) fn warn_foreign_header(input: &Path, line: u64) {
    warn(
        TOOL,
        format!(
            "{}:{line}: header has a Kernel column but no column unitrace writes (GpuTime[ns], \
             GlobalInstanceId, stall columns, ...): this may not be a unitrace file",
            input.display()
        ),
    );
}

/// The listing text and what the caller should warn about.
#[derive(Debug)]
pub struct Listing {
    pub text: String,
    /// First line whose kernel name is not valid UTF-8.
    pub first_non_utf8_kernel: Option<u64>,
    /// Line of the first header without any column unitrace writes.
    pub foreign_header: Option<u64>,
    /// First line of rows before the first device banner of a file that
    /// has banners: not listed (they belong to no device).
    pub rows_before_banner: Option<u64>,
}

/// What one device section contributes to the listing.
struct SectionListing {
    device: Option<i64>,
    header: Option<Header>,
    /// Kernels in order of first appearance with their instance counts
    /// (stall sections: count unused).
    kernels: Vec<(String, u64)>,
}

/// Reads the whole input once and renders the listing. Metric kernels and
/// their instance counts come from the core's instance grouping
/// ([`InstanceReader`]); stall sections list every distinct kernel of
/// their rows.
pub fn list<R: Read>(reader: R, path: &Path) -> Result<Listing, InputError> {
    // Only the rows of stall sections are looked at; metric instances are
    // counted without showing their rows.
    let mut reader = InstanceReader::with_selection(
        CsvReader::new(reader, path),
        Box::new(|head| head.kind == FileKind::Stall),
    );
    let mut sections: Vec<SectionListing> = Vec::new();
    // Distinct kernels of the current stall section.
    let mut stall_kernels: HashSet<String> = HashSet::new();
    let mut foreign_header = None;
    while let Some(event) = reader.next_event()? {
        match event {
            InstanceEvent::SectionStart { device, .. } => {
                sections.push(SectionListing {
                    device,
                    header: None,
                    kernels: Vec::new(),
                });
                stall_kernels.clear();
            }
            InstanceEvent::Header(h) => {
                if foreign_header.is_none() && !has_unitrace_column(h) {
                    foreign_header = Some(h.line());
                }
                if let Some(s) = sections.last_mut() {
                    s.header = Some(h.clone());
                }
            }
            InstanceEvent::Row { row, .. } => {
                let Some(s) = sections.last_mut() else {
                    continue;
                };
                let kernel = row.kernel();
                let name = if row.header().index_of("IP[Address]").is_none() {
                    // Before 2024-03 the address followed the name:
                    // `name!0x000001b8` (docs/formats.md#stall-csv-layout).
                    kernel.rsplit_once('!').map_or(&*kernel, |(n, _)| n)
                } else {
                    &kernel
                };
                if !stall_kernels.contains(name) {
                    stall_kernels.insert(name.to_string());
                    s.kernels.push((name.to_string(), 1));
                }
            }
            InstanceEvent::End(_) => {}
            InstanceEvent::SectionEnd { .. } => {
                let Some(s) = sections.last_mut() else {
                    continue;
                };
                // An instance is named after its first row and counted
                // once (docs/compatibility.md#analyze-list / #analyze-instances numbering).
                if s.header
                    .as_ref()
                    .is_some_and(|h| h.kind() == FileKind::Metric)
                {
                    s.kernels = reader
                        .section_kernels()
                        .iter()
                        .map(|k| (k.name.clone(), u64::from(k.instances)))
                        .collect();
                }
            }
        }
    }
    let has_banner = sections.iter().any(|s| s.device.is_some());
    let rows_before_banner = sections
        .first()
        .filter(|s| has_banner && s.device.is_none())
        .and_then(|s| s.header.as_ref())
        .map(|h| h.line());
    Ok(Listing {
        rows_before_banner,
        text: render(&sections),
        first_non_utf8_kernel: reader.csv().first_non_utf8_kernel(),
        foreign_header,
    })
}

fn render(sections: &[SectionListing]) -> String {
    let has_banner = sections.iter().any(|s| s.device.is_some());
    let mut out = String::new();
    for s in sections {
        // Data before the first banner of a file that has banners is not a
        // section (the original never reads it).
        if has_banner && s.device.is_none() {
            continue;
        }
        // The original lists a device number that appears in two banners
        // twice, both times with the data of its first section.
        let shown = match s.device {
            Some(d) => sections.iter().find(|o| o.device == Some(d)).unwrap_or(s),
            None => s,
        };
        let Some(header) = &shown.header else {
            continue;
        };
        let _ = writeln!(out, "Device {}", s.device.unwrap_or(0));
        out.push_str("    Metric\n");
        for m in header.listed_metrics() {
            let _ = writeln!(out, "        {m}");
        }
        match header.kind() {
            FileKind::Metric => {
                out.push_str("    Kernel, Number of Instances\n");
                for (k, n) in &shown.kernels {
                    let _ = writeln!(out, "        \"{k}\", {n}");
                }
            }
            FileKind::Stall => {
                out.push_str("    Kernel\n");
                for (k, _) in &shown.kernels {
                    let _ = writeln!(out, "        \"{k}\"");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(text: &str) -> String {
        list(text.as_bytes(), Path::new("t.csv")).unwrap().text
    }

    #[test]
    fn metric_listing_counts_instances_per_section() {
        let text = "\n=== Device #0 Metrics ===\n\nKernel, GlobalInstanceId, GpuTime[ns], StreamMarker, Extra\n\"a\", 1, 2, 0, 1\n\"a\", 1, 2, 0, 1\n\n\"b\", 2, 2, 0, 1\n\n\"a\", 3, 2, 0, 1\n";
        assert_eq!(
            listing(text),
            "Device 0\n    Metric\n        GpuTime[ns]\n        StreamMarker\n    Kernel, Number of Instances\n        \"a\", 2\n        \"b\", 1\n"
        );
    }

    #[test]
    fn duplicate_device_banner_repeats_first_section() {
        let text =
            "=== Device #1 Metrics ===\nKernel,A\nx,1\n=== Device #1 Metrics ===\nKernel,A\ny,1\n";
        let one =
            "Device 1\n    Metric\n        A\n    Kernel, Number of Instances\n        \"x\", 1\n";
        assert_eq!(listing(text), format!("{one}{one}"));
    }

    #[test]
    fn stall_listing_skips_blank_and_lists_distinct_kernels() {
        let text = "\n=== Device #0 Metrics ===\n\n  Kernel, IP[Address], Active[Events], OtherStall[Events]\n\"k\", 10, 1, 0\n\"j\", 10, 1, 0\n\"k\", 20, 1, 0\n\n=== Device #1 Metrics ===\n\n  Kernel, IP[Address], Active[Events], OtherStall[Events]\n\"z\", 10, 1, 0\n";
        assert_eq!(
            listing(text),
            "Device 0\n    Metric\n        Active[Events]\n        OtherStall[Events]\n    Kernel\n        \"k\"\n        \"j\"\nDevice 1\n    Metric\n        Active[Events]\n        OtherStall[Events]\n    Kernel\n        \"z\"\n"
        );
    }
}
