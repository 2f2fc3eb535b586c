//! Summary tarballs (docs/formats.md#summary-tarball): per kernel of the
//! device tables and per CCL function, time and calls summed over the
//! processes' reports. Categories need a
//! schema: compare the `summary` tool's JSONs for those.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Result};
use summary::members::{member_warnings, parse_member, parse_member_stream, Parsed, STREAM_ABOVE};
use unitrace_core::cli::warn;
use unitrace_core::summary_tarball::for_each_member_streaming;
use unitrace_core::InputError;

use crate::model::{Item, Run, Section};

/// Device-table rows that are not kernels (docs/summary.md).
const PSEUDO_KERNELS: [&str; 2] = ["Wallclock", "L0_backend"];

#[derive(Default)]
struct Acc {
    time_ns: i64,
    calls: i64,
}

fn add(map: &mut BTreeMap<String, Acc>, name: &str, time_ns: i64, calls: i64) {
    let a = map.entry(name.to_string()).or_default();
    a.time_ns += time_ns;
    a.calls += calls;
}

fn items(map: BTreeMap<String, Acc>) -> Vec<Item> {
    map.into_iter()
        .map(|(name, a)| {
            let mut item = Item::new(name, a.time_ns as f64 / 1e3);
            item.metrics.push(("calls".into(), a.calls as f64));
            item
        })
        .collect()
}

/// Reads the reports of every member as `summary` does
/// (docs/compare.md#inputs): members are parsed on worker threads, one
/// larger than `summary::members::STREAM_ABOVE` line by line while it
/// streams out of the archive, so memory stays bounded whatever a member
/// inflates to; side files (traces, CSVs) are skipped, a binary member is
/// skipped with a warning, and a flawed but usable member is used with
/// summary's warnings (a negative time is summed as read, with a warning:
/// docs/compare.md#suspicious-values).
pub fn read(path: &Path) -> Result<Run> {
    let mut kernels: BTreeMap<String, Acc> = BTreeMap::new();
    let mut comm: BTreeMap<String, Acc> = BTreeMap::new();
    let mut processes = 0usize;
    // As `summary` by default: a few parsers are enough to keep up with
    // one inflating reader.
    let workers = unitrace_core::cli::cores().clamp(1, 8);
    for_each_member_streaming(
        path,
        workers,
        STREAM_ABOVE,
        parse_member,
        parse_member_stream,
        |member, parsed| {
            let summary = match parsed {
                // `tar cfz x.tgz output.*` picks up the `-t` logs too.
                Parsed::Summary(summary, _)
                    if !summary.has_summary() && summary.timeline_lines > 0 =>
                {
                    warn(
                        crate::TOOL,
                        format!(
                            "{}: {member}: only a device timeline (unitrace -t), no summary; skipped",
                            path.display()
                        ),
                    );
                    return Ok(());
                }
                // A log without any summary section is a rank that
                // crashed or ran without -h/-d/-r: an error, as in summary.
                Parsed::Summary(summary, _) if !summary.has_summary() => {
                    return Err(InputError::at_file(
                        path,
                        format!(
                            "{member}: no summary section (no \"API Timing Summary\", \"Device Timing Summary\" \
                             or CCL block): run unitrace with -h/-d/-r, or did this rank crash?"
                        ),
                    ));
                }
                Parsed::Summary(summary, non_utf8) => {
                    for warning in member_warnings(&summary, non_utf8) {
                        warn(
                            crate::TOOL,
                            format!("{}: {member}:{warning}", path.display()),
                        );
                    }
                    summary
                }
                Parsed::SideFile => return Ok(()),
                Parsed::Binary => {
                    warn(
                        crate::TOOL,
                        format!("{}: {member}: binary member skipped", path.display()),
                    );
                    return Ok(());
                }
                Parsed::Bad(line, problem) => {
                    return Err(InputError::at_file(
                        path,
                        format!("{member}:{line}: {problem}"),
                    ))
                }
            };
            for report in &summary.reports {
                processes += 1;
                for t in report.device.iter() {
                    if !PSEUDO_KERNELS.contains(&t.name) {
                        add(&mut kernels, t.name, t.time_ns, t.calls);
                    }
                }
                for t in report.comm.iter() {
                    add(&mut comm, t.name, t.time_ns, t.calls);
                }
            }
            Ok(())
        },
    )?;
    if processes == 0 {
        bail!("{}: no unitrace summary in this tarball", path.display());
    }
    let kernels = items(kernels);
    Ok(Run::new(
        kernels.iter().map(|k| k.time_us).sum(),
        "device kernel time, all processes",
        vec![
            Section {
                name: "kernel",
                kernel_names: true,
                items: kernels,
            },
            Section {
                name: "ccl",
                kernel_names: false,
                items: items(comm),
            },
        ],
    ))
}
