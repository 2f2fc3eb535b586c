//! What one run is reduced to before two sides are compared: named items in
//! sections (kernels, categories, host ranges, ranks), each with a time and
//! further metric columns (docs/compare.md#items); and one side of a
//! comparison, its runs merged item by item with the time of every run kept
//! (docs/compare.md#repeated-runs).

use std::collections::{BTreeMap, HashMap};

/// One item of a run: a kernel, a category, a host range, a rank's compute.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub name: String,
    /// The item's time in microseconds (what the table sorts by and what a
    /// gate without a metric checks); on a merged side, the mean over runs.
    pub time_us: f64,
    /// Further metric columns by name, in a fixed order per kind; on a
    /// merged side, the mean over the runs that have the item.
    pub metrics: Vec<(String, f64)>,
    /// The time in each run of the side (0 in a run without the item): the
    /// run-to-run noise is measured on these (docs/compare.md#significance).
    pub runs_us: Vec<f64>,
}

impl Item {
    pub fn new(name: impl Into<String>, time_us: f64) -> Item {
        Item {
            name: name.into(),
            time_us,
            metrics: Vec::new(),
            runs_us: vec![time_us],
        }
    }

    pub fn metric(&self, name: &str) -> Option<f64> {
        if name == "time" || name == "time_us" {
            return Some(self.time_us);
        }
        self.metrics.iter().find(|m| m.0 == name).map(|m| m.1)
    }
}

/// One section of a run: its items and whether their names are kernel
/// names (then matched by shape and template too, docs/compare.md#matching).
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: &'static str,
    pub kernel_names: bool,
    pub items: Vec<Item>,
}

/// A whole run as one input kind reads it, or one side's runs merged
/// ([`merge_runs`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The run's total time in microseconds (the `total` of a gate); on a
    /// merged side, the mean over runs.
    pub total_us: f64,
    /// The total of each run of the side.
    pub total_runs_us: Vec<f64>,
    /// What `total` is, for the reader ("kernel time, all ranks").
    pub total_what: &'static str,
    pub sections: Vec<Section>,
    /// tracestat's findings of the run (traces only; `None` for the kinds
    /// that have none, docs/compare.md#findings).
    pub findings: Option<Vec<FindingItem>>,
}

/// One finding of a run (docs/findings.md), keyed by its rule, rank and
/// main evidence name.
#[derive(Debug, Clone, PartialEq)]
pub struct FindingItem {
    pub rule: String,
    pub rank: String,
    pub name: String,
    pub savings_us: f64,
    pub evidence: String,
}

impl FindingItem {
    pub fn key(&self) -> (&str, &str, &str) {
        (&self.rule, &self.rank, &self.name)
    }
}

/// The findings of a side: those of at least half its runs (a finding of
/// one noisy run in five is not the side's), with their mean savings over
/// the runs that have them, in the first run's order
/// (docs/compare.md#findings).
fn merge_findings(runs: &[Run]) -> Option<Vec<FindingItem>> {
    let lists: Vec<&Vec<FindingItem>> = runs.iter().filter_map(|r| r.findings.as_ref()).collect();
    if lists.is_empty() {
        return None;
    }
    let mut order: Vec<FindingItem> = Vec::new();
    let mut seen: HashMap<(String, String, String), (usize, f64)> = HashMap::new();
    for list in &lists {
        for f in list.iter() {
            let key = (f.rule.clone(), f.rank.clone(), f.name.clone());
            let e = seen.entry(key).or_insert_with(|| {
                order.push(f.clone());
                (0, 0.0)
            });
            e.0 += 1;
            e.1 += f.savings_us;
        }
    }
    Some(
        order
            .into_iter()
            .filter_map(|mut f| {
                let (n, sum) = seen[&(f.rule.clone(), f.rank.clone(), f.name.clone())];
                (n * 2 >= runs.len()).then(|| {
                    f.savings_us = sum / n as f64;
                    f
                })
            })
            .collect(),
    )
}

impl Run {
    /// A run of one reading: every item's `runs_us` is its own time.
    pub fn new(total_us: f64, total_what: &'static str, sections: Vec<Section>) -> Run {
        Run {
            total_us,
            total_runs_us: vec![total_us],
            total_what,
            sections,
            findings: None,
        }
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// How many runs the side holds.
    pub fn runs(&self) -> usize {
        self.total_runs_us.len()
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// One item over the runs of a side: the time per run (0 where absent),
/// and each metric's values in the runs that have it.
#[derive(Default)]
struct Merging {
    runs_us: Vec<f64>,
    metrics: Vec<(String, Vec<f64>)>,
    /// Where each metric is in `metrics`: a metric CSV of 150k columns has
    /// 450k metrics per kernel, too many to look up by a scan.
    index: HashMap<String, usize>,
}

/// One section over the runs of a side: its items by name, in order of
/// first appearance.
struct MergingSection {
    name: &'static str,
    kernel_names: bool,
    order: Vec<String>,
    items: BTreeMap<String, Merging>,
}

impl MergingSection {
    fn into_section(mut self, runs: usize) -> Section {
        let items = self
            .order
            .into_iter()
            .map(|name| {
                let m = self.items.remove(&name).unwrap_or_else(|| Merging {
                    runs_us: vec![0.0; runs],
                    ..Merging::default()
                });
                Item {
                    name,
                    time_us: mean(&m.runs_us),
                    metrics: m
                        .metrics
                        .iter()
                        .map(|(k, v)| (k.clone(), mean(v)))
                        .collect(),
                    runs_us: m.runs_us,
                }
            })
            .collect();
        Section {
            name: self.name,
            kernel_names: self.kernel_names,
            items,
        }
    }
}

/// The runs of one side as one [`Run`]: per section (in the first run's
/// order, then sections only later runs have) the union of the items by
/// exact name, in order of first appearance; an item's time is its mean
/// over all runs (a run without it counts 0, as a kernel that did not run),
/// its metrics the means over the runs that have it. One run is returned
/// as it is.
pub fn merge_runs(mut runs: Vec<Run>) -> Run {
    if runs.len() == 1 {
        return runs.remove(0);
    }
    let n = runs.len();
    let mut sections: Vec<MergingSection> = Vec::new();
    for (r, run) in runs.iter().enumerate() {
        for s in &run.sections {
            let at = match sections.iter().position(|x| x.name == s.name) {
                Some(i) => i,
                None => {
                    sections.push(MergingSection {
                        name: s.name,
                        kernel_names: s.kernel_names,
                        order: Vec::new(),
                        items: BTreeMap::new(),
                    });
                    sections.len() - 1
                }
            };
            let merging = &mut sections[at];
            for item in &s.items {
                let m = merging.items.entry(item.name.clone()).or_insert_with(|| {
                    merging.order.push(item.name.clone());
                    Merging {
                        runs_us: vec![0.0; n],
                        ..Merging::default()
                    }
                });
                // Two items of one name in one run (a merged trace's
                // devices) add up, as one run's reader would add them.
                m.runs_us[r] += item.time_us;
                for (name, v) in &item.metrics {
                    match m.index.get(name) {
                        Some(&i) => m.metrics[i].1.push(*v),
                        None => {
                            m.index.insert(name.clone(), m.metrics.len());
                            m.metrics.push((name.clone(), vec![*v]));
                        }
                    }
                }
            }
        }
    }
    let total_runs_us: Vec<f64> = runs.iter().map(|r| r.total_us).collect();
    Run {
        findings: merge_findings(&runs),
        total_us: mean(&total_runs_us),
        total_runs_us,
        total_what: runs[0].total_what,
        sections: sections.into_iter().map(|s| s.into_section(n)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(items: &[(&str, f64)]) -> Run {
        let items: Vec<Item> = items.iter().map(|(n, t)| Item::new(*n, *t)).collect();
        let total = items.iter().map(|i| i.time_us).sum();
        Run::new(
            total,
            "t",
            vec![Section {
                name: "kernel",
                kernel_names: true,
                items,
            }],
        )
    }

    #[test]
    fn runs_merge_by_name_with_zero_where_absent() {
        let side = merge_runs(vec![
            run(&[("a", 10.0), ("b", 4.0)]),
            run(&[("a", 14.0)]),
            run(&[("c", 3.0), ("a", 12.0)]),
        ]);
        assert_eq!(side.total_runs_us, [14.0, 14.0, 15.0]);
        assert!((side.total_us - 43.0 / 3.0).abs() < 1e-12);
        let items = &side.sections[0].items;
        let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(items[0].runs_us, [10.0, 14.0, 12.0]);
        assert_eq!(items[0].time_us, 12.0);
        assert_eq!(items[1].runs_us, [4.0, 0.0, 0.0]);
        assert_eq!(items[2].runs_us, [0.0, 0.0, 3.0]);
        assert_eq!(side.runs(), 3);
    }
}
