//! Aggregation of summary.py (docs/compatibility.md#summary): every name's
//! time and calls collected per bucket (device, CCL) across processes, then
//! aggregated and summed per category into the summary JSON; the process
//! rows of the per-rank table and the coverage report are filled on the way.

use std::collections::HashMap;

use unitrace_core::category_schema::{
    write_python_string, CategorySchema, RuleId, DEFAULT_COMM_CATEGORY, DEFAULT_DEVICE_CATEGORY,
};
use unitrace_core::summary_text::{
    MemberSummary, NameIndex, NameTotals, ProcessReport, L0_BACKEND, WALLCLOCK,
};

use crate::coverage::Coverage;
use crate::pyagg::{Aggregator, PyNum, Samples};
use crate::ranks::{self, Categories, ProcessId, ProcessRow, RankTable};

const TOOL: &str = "summary";

/// One name's samples across files.
struct NameStats {
    name: String,
    time: Samples,
    calls: Samples,
    rule: Option<RuleId>,
}

#[derive(Default)]
struct Bucket {
    names: Vec<NameStats>,
    index: NameIndex,
}

/// The state of one run: the samples of every name, which schema rules
/// matched, and the process rows of the per-rank table.
pub struct Aggregation<'a> {
    schema: &'a CategorySchema,
    keep_all: bool,
    buckets: [Bucket; 2],
    rule_hits: Vec<u64>,
    categories: Categories,
    processes: Vec<ProcessRow>,
    /// Row of each (process key, report line).
    process_index: HashMap<(String, Option<u64>), usize>,
}

const DEFAULT_CATEGORY: [&str; 2] = [DEFAULT_DEVICE_CATEGORY, DEFAULT_COMM_CATEGORY];

/// The summary JSON in key order (`category_time`, `category_calls`).
pub type Output = Vec<(String, PyNum)>;

impl<'a> Aggregation<'a> {
    pub fn new(schema: &'a CategorySchema, aggregator: Aggregator) -> Aggregation<'a> {
        Aggregation {
            schema,
            keep_all: aggregator == Aggregator::Median,
            buckets: [Bucket::default(), Bucket::default()],
            rule_hits: vec![0; schema.rules.len()],
            categories: Categories::default(),
            processes: Vec::new(),
            process_index: HashMap::new(),
        }
    }

    /// Adds the reports of one member: each report is one process, so one
    /// sample per name for the aggregators and one row of the per-rank
    /// table (docs/compatibility.md#summary).
    pub fn fold(&mut self, member: &str, summary: &MemberSummary) {
        let several = summary.reports.len() > 1;
        for report in &summary.reports {
            // A job log's name says nothing about the processes in it.
            let (line, id) = if several {
                (Some(report.first_line), ProcessId::default())
            } else {
                (None, ProcessId::from_member_path(member))
            };
            self.fold_report(ranks::process_key(member), line, id, report);
        }
    }

    fn fold_report(
        &mut self,
        process_key: String,
        report_line: Option<u64>,
        id: ProcessId,
        summary: &ProcessReport,
    ) {
        let index_key = (process_key, report_line);
        let row_index = match self.process_index.get(&index_key) {
            Some(&i) => i,
            None => {
                self.processes
                    .push(ProcessRow::new(index_key.0.clone(), report_line, id));
                self.process_index
                    .insert(index_key, self.processes.len() - 1);
                self.processes.len() - 1
            }
        };
        let buckets: [&NameTotals; 2] = [&summary.device, &summary.comm];
        for (b, totals) in buckets.into_iter().enumerate() {
            for entry in totals.iter() {
                let Bucket { names, index } = &mut self.buckets[b];
                let next = names.len() as u32;
                let found = index.find_or_insert(entry.hash, entry.name, next, |i| {
                    names[i as usize].name.as_str()
                });
                let i = match found {
                    Ok(i) => i as usize,
                    Err(i) => {
                        let rule = self.schema.classify(entry.name);
                        if let Some(r) = rule {
                            self.rule_hits[r as usize] += 1;
                        }
                        names.push(NameStats {
                            name: entry.name.to_string(),
                            time: Samples::new(),
                            calls: Samples::new(),
                            rule,
                        });
                        i as usize
                    }
                };
                let bucket = &mut self.buckets[b];
                let stats = &mut bucket.names[i];
                stats.time.push(entry.time_ns, self.keep_all);
                stats.calls.push(entry.calls, self.keep_all);
                if entry.name != WALLCLOCK && entry.name != L0_BACKEND {
                    let category = match stats.rule {
                        Some(r) => self.schema.category_of(r),
                        None => DEFAULT_CATEGORY[b],
                    };
                    let cat = self.categories.id(category);
                    self.processes[row_index].add(cat, entry.time_ns, entry.calls);
                }
            }
        }
        self.processes[row_index].absorb(summary);
    }

    /// The per-rank table, its category columns in the order of `output`.
    pub fn rank_table(&self, output: &Output) -> RankTable {
        RankTable::build(
            &self.processes,
            &self.categories,
            &output_category_order(output),
        )
    }

    /// Categorises and aggregates (docs/compatibility.md#summary): device
    /// bucket then CCL bucket, names in first-seen order, `time` then
    /// `calls`; -vvv prints every name that got the default category.
    pub fn finish(&mut self, aggregator: Aggregator, verbose: u8) -> (Output, Coverage) {
        let mut output: Output = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut kernel_time = 0.0;
        let mut default_time = 0.0;
        let mut default_names: Vec<(String, f64)> = Vec::new();
        for (b, bucket) in self.buckets.iter_mut().enumerate() {
            for stats in &mut bucket.names {
                let category = match stats.rule {
                    Some(r) => self.schema.category_of(r).to_string(),
                    None => {
                        if verbose >= 3 {
                            eprintln!(
                                "{TOOL}: U: {}",
                                unitrace_core::cli::escape_controls(&stats.name)
                            );
                        }
                        DEFAULT_CATEGORY[b].to_string()
                    }
                };
                // summary.py skips a name whose category is the empty string
                // (`if ( category := ... ):` is false).
                if category.is_empty() {
                    continue;
                }
                for (label, samples) in [("time", &mut stats.time), ("calls", &mut stats.calls)] {
                    let value = samples.aggregate(aggregator);
                    let key = format!("{category}_{label}");
                    match index.get(&key) {
                        Some(&i) => output[i].1 = output[i].1.py_add(value),
                        None => {
                            index.insert(key.clone(), output.len());
                            output.push((key, value));
                        }
                    }
                    if b == 0
                        && label == "time"
                        && stats.name != WALLCLOCK
                        && stats.name != L0_BACKEND
                    {
                        let t = value.as_f64();
                        kernel_time += t;
                        if stats.rule.is_none() {
                            default_time += t;
                            default_names.push((stats.name.clone(), t));
                        }
                    }
                }
            }
        }
        default_names.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let count = default_names.len();
        default_names.truncate(10);
        let unmatched_rules = self
            .schema
            .rules
            .iter()
            .zip(&self.rule_hits)
            .filter(|(_, hits)| **hits == 0)
            .map(|(r, _)| {
                (
                    r.kind.describe().to_string(),
                    r.tag.clone(),
                    r.category.clone(),
                )
            })
            .collect();
        let coverage = Coverage {
            default_category: DEFAULT_CATEGORY[0],
            kernel_time,
            default_time,
            default_names: count,
            top: default_names,
            unmatched_rules,
            rules_total: self.schema.rules.len(),
        };
        (output, coverage)
    }
}

/// Categories in output-key order (`x_time` keys), for the table columns.
fn output_category_order(output: &[(String, PyNum)]) -> Vec<String> {
    output
        .iter()
        .filter_map(|(k, _)| k.strip_suffix("_time").map(str::to_string))
        .collect()
}

/// The summary JSON as summary.py writes it: `json.dump(output, f, indent=2)`.
pub fn render_output(output: &Output) -> String {
    if output.is_empty() {
        return "{}".to_string();
    }
    let mut s = String::from("{");
    for (i, (k, v)) in output.iter().enumerate() {
        s.push_str(if i == 0 { "\n  " } else { ",\n  " });
        write_python_string(&mut s, k);
        s.push_str(": ");
        s.push_str(&v.to_string());
    }
    s.push_str("\n}");
    s
}
