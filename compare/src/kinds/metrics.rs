//! Hardware metric CSVs (docs/formats.md#metric-csv): per kernel, the
//! instance count and each metric's mean, median and max over instances.
//! Rows a validity column flags are dropped first
//! (docs/formats.md#metric-csv-validity); an instance is the mean of its
//! remaining rows (one row in query mode, many samples with `-k`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Result};
use unitrace_core::cli::warn;
use unitrace_core::metric_csv::{open_input, CsvReader, InstanceEvent, InstanceReader, MetricRow};

use crate::model::{Item, Run, Section};

/// A row with any of these non-zero is not a valid report.
pub const VALIDITY_COLUMNS: [&str; 7] = [
    "ReportError",
    "ReportLost",
    "ReportInconsistent",
    "ReportWithoutWorkload",
    "ReportContextMismatch",
    "ReportQueryModeMismatch",
    "OverrunOccured",
];

/// Identity columns: not metrics.
const ID_COLUMNS: [&str; 4] = [
    "GlobalInstanceId",
    "SubDeviceId",
    "ReportId",
    "ReportsCount",
];

/// The column whose sum over instances is a kernel's time.
pub const TIME_COLUMN: &str = "GpuTime[ns]";

/// One kernel's instances: per metric, one value per instance.
#[derive(Default)]
struct KernelAcc {
    /// Metric name -> per-instance values (in instance order).
    metrics: BTreeMap<String, Vec<f64>>,
    /// Column order of first appearance.
    order: Vec<String>,
    instances: u64,
    dropped_rows: u64,
}

/// The instance being read: kernel, its columns, per-column sums and
/// counts over valid rows, and the rows dropped as invalid.
type OpenInstance = (String, Vec<String>, Vec<f64>, Vec<u64>, u64);

/// The first value of one kind of flaw in a file and how many there are,
/// for one warning per file (docs/compare.md#suspicious-values).
struct ValueFlaw {
    line: u64,
    column: String,
    value: f64,
    count: u64,
}

impl ValueFlaw {
    fn record(flaw: &mut Option<ValueFlaw>, line: u64, column: &str, value: f64) {
        match flaw {
            Some(f) => f.count += 1,
            None => {
                *flaw = Some(ValueFlaw {
                    line,
                    column: column.to_string(),
                    value,
                    count: 1,
                })
            }
        }
    }

    /// `FILE:LINE: column `C`: `V` <problem> (N such values in this file)`.
    fn warn(&self, path: &Path, problem: &str) {
        warn(
            crate::TOOL,
            format!(
                "{}:{}: column `{}`: `{}` {problem} ({} such value{} in this file)",
                path.display(),
                self.line,
                self.column,
                self.value,
                self.count,
                if self.count == 1 { "" } else { "s" }
            ),
        );
    }
}

/// Per kernel (name with shape), per metric: values per instance.
pub struct Instances {
    kernels: BTreeMap<String, KernelAcc>,
    pub dropped_rows: u64,
}

/// Reads every instance of `path`; `only` keeps one (kernel, ordinal).
fn read_instances(path: &Path, only: Option<(&str, u32)>) -> Result<Instances> {
    let file = open_input(path)?;
    let mut reader = InstanceReader::new(CsvReader::new(file, path));
    let mut kernels: BTreeMap<String, KernelAcc> = BTreeMap::new();
    let mut fields = Vec::new();
    // The open instance: (kernel, ordinal) -> column sums and counts.
    let mut open: Option<OpenInstance> = None;
    let mut dropped_total = 0;
    let mut non_finite: Option<ValueFlaw> = None;
    let mut negative_time: Option<ValueFlaw> = None;
    let finish = |open: &mut Option<OpenInstance>, kernels: &mut BTreeMap<String, KernelAcc>| {
        if let Some((kernel, cols, sums, counts, dropped)) = open.take() {
            let acc = kernels.entry(kernel).or_default();
            acc.dropped_rows += dropped;
            if counts.iter().all(|&c| c == 0) {
                return; // every row invalid: no instance
            }
            acc.instances += 1;
            for ((name, sum), n) in cols.into_iter().zip(sums).zip(counts) {
                if n == 0 {
                    continue;
                }
                if !acc.metrics.contains_key(&name) {
                    acc.order.push(name.clone());
                }
                acc.metrics.entry(name).or_default().push(sum / n as f64);
            }
        }
    };
    while let Some(event) = reader.next_event()? {
        match event {
            InstanceEvent::Row { instance, row } => {
                let header = row.header();
                let parsed = MetricRow::from_raw(&row, &mut fields)?;
                if let Some((k, ord)) = only {
                    if parsed.kernel != k || instance.ordinal != ord {
                        continue;
                    }
                }
                if open.is_none() {
                    let cols: Vec<String> =
                        header.data_columns().map(|(_, n)| n.to_string()).collect();
                    let n = cols.len();
                    open = Some((parsed.kernel.clone(), cols, vec![0.0; n], vec![0; n], 0));
                }
                let Some((_, cols, sums, counts, dropped)) = open.as_mut() else {
                    continue;
                };
                let invalid = VALIDITY_COLUMNS.iter().any(|c| {
                    header
                        .index_of(c)
                        .is_some_and(|i| parsed.value(i) != 0.0 && !parsed.value(i).is_nan())
                });
                if invalid {
                    *dropped += 1;
                    dropped_total += 1;
                    continue;
                }
                for (slot, (i, name)) in header.data_columns().enumerate() {
                    let v = parsed.value(i);
                    if slot >= cols.len() {
                        continue;
                    }
                    // Not finite: left out of its metric; a negative
                    // time: summed as read (docs/compare.md#suspicious-values).
                    if !v.is_finite() {
                        ValueFlaw::record(&mut non_finite, row.line(), name, v);
                        continue;
                    }
                    if v < 0.0 && name == TIME_COLUMN {
                        ValueFlaw::record(&mut negative_time, row.line(), name, v);
                    }
                    sums[slot] += v;
                    counts[slot] += 1;
                }
            }
            InstanceEvent::End(_) => finish(&mut open, &mut kernels),
            _ => {}
        }
    }
    finish(&mut open, &mut kernels);
    if let Some(line) = reader.csv().first_non_utf8_kernel() {
        warn(
            crate::TOOL,
            format!(
                "{}:{line}: kernel name is not valid UTF-8; invalid bytes are shown as U+FFFD",
                path.display()
            ),
        );
    }
    if let Some(flaw) = &non_finite {
        flaw.warn(path, "is not a finite number; left out of its metric");
    }
    if let Some(flaw) = &negative_time {
        flaw.warn(path, "is a negative duration; summed as read");
    }
    Ok(Instances {
        kernels,
        dropped_rows: dropped_total,
    })
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn is_metric(name: &str) -> bool {
    !VALIDITY_COLUMNS.contains(&name) && !ID_COLUMNS.contains(&name)
}

pub fn read(path: &Path) -> Result<Run> {
    let inst = read_instances(path, None)?;
    let mut items = Vec::new();
    for (name, acc) in &inst.kernels {
        if acc.instances == 0 {
            continue;
        }
        let times = acc.metrics.get(TIME_COLUMN);
        let time_us = times.map_or(0.0, |t| t.iter().sum::<f64>() / 1e3);
        let mut item = Item::new(name.clone(), time_us);
        item.metrics
            .push(("instances".into(), acc.instances as f64));
        for col in acc.order.iter().filter(|c| is_metric(c)) {
            let mut v = acc.metrics[col].clone();
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let max = v.iter().copied().fold(f64::MIN, f64::max);
            item.metrics.push((format!("{col}.mean"), mean));
            item.metrics.push((format!("{col}.median"), median(&mut v)));
            item.metrics.push((format!("{col}.max"), max));
        }
        items.push(item);
    }
    if items.is_empty() {
        bail!(
            "{}: no valid kernel instance in this metric CSV",
            path.display()
        );
    }
    Ok(Run::new(
        items.iter().map(|i| i.time_us).sum(),
        "GpuTime of valid instances",
        vec![Section {
            name: "kernel",
            kernel_names: true,
            items,
        }],
    ))
}

/// One instance `KERNEL:N` of a file as a run of one item named `KERNEL`
/// (`--instances`), so two instances compare like two runs.
pub fn read_instance(path: &Path, spec: &str) -> Result<Run> {
    let (kernel, ord) = spec
        .rsplit_once(':')
        .and_then(|(k, n)| n.parse::<u32>().ok().filter(|&n| n > 0).map(|n| (k, n)))
        .ok_or_else(|| anyhow::anyhow!("--instances '{spec}': expected KERNEL:N (N from 1)"))?;
    let inst = read_instances(path, Some((kernel, ord)))?;
    let Some(acc) = inst.kernels.get(kernel).filter(|a| a.instances > 0) else {
        bail!(
            "{}: no valid instance {ord} of kernel '{kernel}'",
            path.display()
        );
    };
    let time_us = acc.metrics.get(TIME_COLUMN).map_or(0.0, |t| t[0] / 1e3);
    let mut item = Item::new(kernel, time_us);
    for col in acc.order.iter().filter(|c| is_metric(c)) {
        item.metrics.push((col.clone(), acc.metrics[col][0]));
    }
    Ok(Run::new(
        time_us,
        "GpuTime of the instance",
        vec![Section {
            name: "kernel",
            kernel_names: true,
            items: vec![item],
        }],
    ))
}
