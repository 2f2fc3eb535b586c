//! The `summary` tool's JSON (docs/summary.md): `<category>_time` (ns) and
//! `<category>_calls` per category.

use std::path::Path;

use anyhow::{bail, Result};
use unitrace_core::cli::warn;
use unitrace_core::InputError;

use crate::model::{Item, Run, Section};

/// Keys that are not categories: the wall clock, and `total`, which is the
/// run's total.
const NOT_CATEGORIES: [&str; 2] = ["wallclock", "total"];

pub fn read(path: &Path) -> Result<Run> {
    let bytes = std::fs::read(path).map_err(|e| InputError::io(path, &e))?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
        InputError::at_line(path, e.line() as u64, format!("not a summary JSON: {e}"))
    })?;
    let Some(map) = value.as_object() else {
        bail!("{}: not a summary JSON: not an object", path.display());
    };
    let mut items: Vec<Item> = Vec::new();
    let mut total = None;
    // (first key, its value, count): one warning per file
    // (docs/compare.md#suspicious-values).
    let mut negative: Option<(String, f64, usize)> = None;
    for (key, v) in map {
        let Some(cat) = key.strip_suffix("_time") else {
            continue;
        };
        let Some(ns) = v.as_f64() else {
            bail!(
                "{}: not a summary JSON: '{key}' is not a number",
                path.display()
            );
        };
        if ns < 0.0 {
            match &mut negative {
                Some((_, _, n)) => *n += 1,
                None => negative = Some((key.clone(), ns, 1)),
            }
        }
        if cat == "total" {
            total = Some(ns / 1e3);
        }
        if NOT_CATEGORIES.contains(&cat) {
            continue;
        }
        let mut item = Item::new(cat, ns / 1e3);
        if let Some(calls) = map.get(&format!("{cat}_calls")).and_then(|c| c.as_f64()) {
            item.metrics.push(("calls".into(), calls));
        }
        items.push(item);
    }
    if items.is_empty() && total.is_none() {
        bail!(
            "{}: not a summary JSON: no '<category>_time' key",
            path.display()
        );
    }
    if let Some((key, ns, n)) = negative {
        warn(
            crate::TOOL,
            format!(
                "{}: `{key}` is negative ({ns}); compared as read ({n} negative time{} in this file)",
                path.display(),
                if n == 1 { "" } else { "s" }
            ),
        );
    }
    let sum: f64 = items.iter().map(|i| i.time_us).sum();
    Ok(Run::new(
        total.unwrap_or(sum),
        "summary total_time",
        vec![Section {
            name: "category",
            kernel_names: false,
            items,
        }],
    ))
}
