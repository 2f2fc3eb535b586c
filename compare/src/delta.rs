//! The comparison of two runs: per section, one row per matched, new or
//! vanished item, with the time change and every metric both sides have
//! (docs/compare.md#output).

use std::collections::HashMap;

use serde::Serialize;

use crate::matching::{match_items, MatchLevel};
use crate::model::{Item, Run};

/// One compared item.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The candidate's name (the baseline's for a vanished item).
    pub name: String,
    /// The baseline's name when it differs (matched by shape or template).
    pub baseline_name: Option<String>,
    /// `exact`, `shape`, `template`, `new` or `vanished`.
    pub status: &'static str,
    pub baseline_us: f64,
    pub candidate_us: f64,
    pub delta_us: f64,
    /// candidate / baseline (`None` when the baseline is 0).
    pub ratio: Option<f64>,
    /// Percent change (`None` when the baseline is 0).
    pub change_pct: Option<f64>,
    /// This row's delta as a percent of the section's total delta.
    pub share_of_change_pct: Option<f64>,
    pub baseline_spread_us: Option<f64>,
    pub candidate_spread_us: Option<f64>,
    /// The change per rank/instance is smaller than the larger spread.
    pub within_noise: bool,
    /// `(metric, baseline, candidate)` for every metric both sides have.
    pub metrics: Vec<(String, f64, f64)>,
}

impl Row {
    /// `(baseline, candidate)` of a metric (`time` is the row's time).
    pub fn metric(&self, name: &str) -> Option<(f64, f64)> {
        if name == "time" || name == "time_us" {
            return Some((self.baseline_us, self.candidate_us));
        }
        self.metrics
            .iter()
            .find(|m| m.0 == name)
            .map(|m| (m.1, m.2))
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SectionDelta {
    pub section: &'static str,
    pub baseline_us: f64,
    pub candidate_us: f64,
    pub matched: usize,
    pub matched_loosely: usize,
    pub new: usize,
    pub vanished: usize,
    /// Sorted by absolute time change, biggest first, then by name.
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub kind: &'static str,
    pub baseline: String,
    pub candidate: String,
    #[serde(rename = "match")]
    pub level: &'static str,
    pub total_what: &'static str,
    pub baseline_total_us: f64,
    pub candidate_total_us: f64,
    pub sections: Vec<SectionDelta>,
}

fn ratio(base: f64, cand: f64) -> Option<f64> {
    (base != 0.0).then(|| cand / base)
}

fn row(name: &str, base: Option<&Item>, cand: Option<&Item>, status: &'static str) -> Row {
    let b = base.map_or(0.0, |i| i.time_us);
    let c = cand.map_or(0.0, |i| i.time_us);
    let mut metrics = Vec::new();
    if let (Some(bi), Some(ci)) = (base, cand) {
        // By name through a map: a metric CSV of 150k columns has 450k
        // metrics per kernel, and a scan per metric was quadratic
        // (docs/compare.md#speed). The first of a repeated name counts, as
        // the scan took it.
        let mut by_name: HashMap<&str, f64> = HashMap::with_capacity(ci.metrics.len());
        for (m, cv) in &ci.metrics {
            by_name.entry(m.as_str()).or_insert(*cv);
        }
        for (m, bv) in &bi.metrics {
            if let Some(&cv) = by_name.get(m.as_str()) {
                metrics.push((m.clone(), *bv, cv));
            }
        }
    }
    let bs = base.and_then(|i| i.spread_us);
    let cs = cand.and_then(|i| i.spread_us);
    let per = base
        .map_or(1.0, |i| i.noise_per)
        .max(cand.map_or(1.0, |i| i.noise_per))
        .max(1.0);
    let spread = bs.unwrap_or(0.0).max(cs.unwrap_or(0.0));
    let within_noise =
        base.is_some() && cand.is_some() && spread > 0.0 && ((c - b) / per).abs() < spread;
    Row {
        name: name.to_string(),
        baseline_name: None,
        status,
        baseline_us: b,
        candidate_us: c,
        delta_us: c - b,
        ratio: ratio(b, c),
        change_pct: (b != 0.0).then(|| (c - b) * 100.0 / b),
        share_of_change_pct: None,
        baseline_spread_us: bs,
        candidate_spread_us: cs,
        within_noise,
        metrics,
    }
}

/// Compares every section both runs have (in the baseline's order).
pub fn compare(
    kind: &'static str,
    names: (&str, &str),
    base: &Run,
    cand: &Run,
    level: MatchLevel,
) -> Comparison {
    let mut sections = Vec::new();
    for bs in &base.sections {
        let Some(cs) = cand.section(bs.name) else {
            continue;
        };
        let bkeys: Vec<(&str, f64)> = bs
            .items
            .iter()
            .map(|i| (i.name.as_str(), i.time_us))
            .collect();
        let ckeys: Vec<(&str, f64)> = cs
            .items
            .iter()
            .map(|i| (i.name.as_str(), i.time_us))
            .collect();
        let m = match_items(&bkeys, &ckeys, level, bs.kernel_names);
        let mut rows = Vec::new();
        let mut loosely = 0;
        for &(i, j, by) in &m.pairs {
            let (bi, ci) = (&bs.items[i], &cs.items[j]);
            let by = by.map_or("exact", |b| b.as_str());
            if by != "exact" {
                loosely += 1;
            }
            let mut r = row(&ci.name, Some(bi), Some(ci), by);
            if bi.name != ci.name {
                r.baseline_name = Some(bi.name.clone());
            }
            rows.push(r);
        }
        for &j in &m.new {
            rows.push(row(&cs.items[j].name, None, Some(&cs.items[j]), "new"));
        }
        for &i in &m.vanished {
            rows.push(row(&bs.items[i].name, Some(&bs.items[i]), None, "vanished"));
        }
        let bt: f64 = bs.items.iter().map(|i| i.time_us).sum();
        let ct: f64 = cs.items.iter().map(|i| i.time_us).sum();
        let total_change: f64 = rows.iter().map(|r| r.delta_us).sum();
        for r in &mut rows {
            r.share_of_change_pct =
                (total_change != 0.0).then(|| r.delta_us / total_change * 100.0);
        }
        rows.sort_by(|a, b| {
            b.delta_us
                .abs()
                .total_cmp(&a.delta_us.abs())
                .then_with(|| a.name.cmp(&b.name))
        });
        sections.push(SectionDelta {
            section: bs.name,
            baseline_us: bt,
            candidate_us: ct,
            matched: m.pairs.len(),
            matched_loosely: loosely,
            new: m.new.len(),
            vanished: m.vanished.len(),
            rows,
        });
    }
    Comparison {
        kind,
        baseline: names.0.to_string(),
        candidate: names.1.to_string(),
        level: level.as_str(),
        total_what: base.total_what,
        baseline_total_us: base.total_us,
        candidate_total_us: cand.total_us,
        sections,
    }
}
