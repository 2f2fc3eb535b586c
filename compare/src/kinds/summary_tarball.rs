//! Summary tarballs (docs/formats.md#summary-tarball): per kernel of the
//! device tables and per CCL function, time and calls summed over the
//! processes' reports. Categories need a
//! schema: compare the `summary` tool's JSONs for those.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Result};
use unitrace_core::summary_tarball::for_each_member;
use unitrace_core::summary_text::parse_summary;
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

pub fn read(path: &Path) -> Result<Run> {
    let mut kernels: BTreeMap<String, Acc> = BTreeMap::new();
    let mut comm: BTreeMap<String, Acc> = BTreeMap::new();
    let mut processes = 0usize;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    for_each_member(
        path,
        workers,
        |m| parse_summary(&String::from_utf8_lossy(&m.data)),
        |member, parsed| {
            let summary = parsed.map_err(|e| {
                InputError::at_file(path, format!("{member}:{}: {}", e.line, e.problem))
            })?;
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
