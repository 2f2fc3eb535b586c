//! The comparison of two sides: per section, one row per matched, new or
//! vanished item, with the time change, whether it is significant
//! ([`crate::significance`]) and every metric both sides have; and the
//! verdict (docs/compare.md#output, docs/compare.md#verdict).

use std::collections::HashMap;

use serde::Serialize;

use crate::matching::{match_items, MatchLevel};
use crate::model::{FindingItem, Item, Run, Section};
use crate::significance::{judge, Judgement, Rule, Test};
use crate::spell::{fmt_us, signed_pct, signed_us};

/// One compared item.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The candidate's name (the baseline's for a vanished item).
    pub name: String,
    /// The baseline's name when it differs (matched by shape or template).
    pub baseline_name: Option<String>,
    /// `exact`, `shape`, `template`, `new` or `vanished`.
    pub status: &'static str,
    /// Mean over the side's runs.
    pub baseline_us: f64,
    pub candidate_us: f64,
    pub delta_us: f64,
    /// candidate / baseline (`None` when the baseline is 0).
    pub ratio: Option<f64>,
    /// Percent change (`None` when the baseline is 0).
    pub change_pct: Option<f64>,
    /// This row's delta as a percent of the section's net change, when
    /// that net change is significant (else a share of noise).
    pub share_of_change_pct: Option<f64>,
    #[serde(flatten)]
    pub judgement: Judgement,
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

    pub fn significant(&self) -> bool {
        self.judgement.significant
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SectionDelta {
    pub section: &'static str,
    pub baseline_us: f64,
    pub candidate_us: f64,
    /// The section's net change (the sum of its items per run).
    pub net: Judgement,
    pub matched: usize,
    pub matched_loosely: usize,
    pub new: usize,
    pub vanished: usize,
    /// Rows significantly slower (more time) and faster.
    pub slower: usize,
    pub faster: usize,
    /// Sorted by absolute time change, biggest first, then by name.
    pub rows: Vec<Row>,
}

impl SectionDelta {
    pub fn significant_rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.significant())
    }
}

/// How significance was judged (docs/compare.md#significance).
#[derive(Debug, Clone, Serialize)]
pub struct Significance {
    #[serde(flatten)]
    pub rule: Rule,
    pub test: Test,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    Unchanged,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Unchanged => "unchanged",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub verdict: Verdict,
    /// One sentence: why the verdict is what it is.
    pub verdict_reason: String,
    pub kind: &'static str,
    /// The sides as given on the command line (`a, b, c` for several).
    pub baseline: String,
    pub candidate: String,
    /// Each run of each side.
    pub baseline_runs: Vec<String>,
    pub candidate_runs: Vec<String>,
    #[serde(rename = "match")]
    pub level: &'static str,
    pub significance: Significance,
    pub total_what: &'static str,
    pub baseline_total_us: f64,
    pub candidate_total_us: f64,
    pub total: Judgement,
    pub sections: Vec<SectionDelta>,
    /// tracestat's findings new in the candidate, resolved (in the
    /// baseline only) and kept; `None` for inputs without findings
    /// (docs/compare.md#findings).
    pub findings: Option<FindingsDelta>,
}

/// One finding of either side.
#[derive(Debug, Clone, Serialize)]
pub struct FindingRow {
    pub rule: String,
    pub rank: String,
    pub name: String,
    pub baseline_savings_us: Option<f64>,
    pub candidate_savings_us: Option<f64>,
    /// The candidate's evidence (the baseline's for a resolved finding).
    pub evidence: String,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct FindingsDelta {
    pub new: Vec<FindingRow>,
    pub resolved: Vec<FindingRow>,
    pub kept: Vec<FindingRow>,
}

/// Findings matched by rule, rank and main evidence name
/// (docs/compare.md#findings).
fn findings_delta(base: &[FindingItem], cand: &[FindingItem]) -> FindingsDelta {
    let mut out = FindingsDelta::default();
    for c in cand {
        let b = base.iter().find(|b| b.key() == c.key());
        let row = FindingRow {
            rule: c.rule.clone(),
            rank: c.rank.clone(),
            name: c.name.clone(),
            baseline_savings_us: b.map(|b| b.savings_us),
            candidate_savings_us: Some(c.savings_us),
            evidence: c.evidence.clone(),
        };
        if b.is_some() {
            out.kept.push(row);
        } else {
            out.new.push(row);
        }
    }
    for b in base
        .iter()
        .filter(|b| !cand.iter().any(|c| c.key() == b.key()))
    {
        out.resolved.push(FindingRow {
            rule: b.rule.clone(),
            rank: b.rank.clone(),
            name: b.name.clone(),
            baseline_savings_us: Some(b.savings_us),
            candidate_savings_us: None,
            evidence: b.evidence.clone(),
        });
    }
    out
}

impl Comparison {
    pub fn total_delta_us(&self) -> f64 {
        self.candidate_total_us - self.baseline_total_us
    }

    pub fn total_change_pct(&self) -> Option<f64> {
        (self.baseline_total_us != 0.0)
            .then(|| self.total_delta_us() * 100.0 / self.baseline_total_us)
    }
}

fn ratio(base: f64, cand: f64) -> Option<f64> {
    (base != 0.0).then(|| cand / base)
}

fn row(
    name: &str,
    (base, cand): (Option<&Item>, Option<&Item>),
    runs: (usize, usize),
    status: &'static str,
    rule: &Rule,
) -> Row {
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
    let zeros = |n: usize| vec![0.0; n];
    let base_runs = base.map_or_else(|| zeros(runs.0), |i| i.runs_us.clone());
    let cand_runs = cand.map_or_else(|| zeros(runs.1), |i| i.runs_us.clone());
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
        judgement: judge(&base_runs, &cand_runs, rule),
        metrics,
    }
}

/// The per-run sums of a section's items.
fn section_runs(s: &Section, runs: usize) -> Vec<f64> {
    let mut sums = vec![0.0; runs];
    for item in &s.items {
        for (sum, v) in sums.iter_mut().zip(&item.runs_us) {
            *sum += v;
        }
    }
    sums
}

fn section_delta(
    bs: &Section,
    cs: &Section,
    runs: (usize, usize),
    level: MatchLevel,
    rule: &Rule,
) -> SectionDelta {
    fn keys(s: &Section) -> Vec<(&str, f64)> {
        s.items
            .iter()
            .map(|i| (i.name.as_str(), i.time_us))
            .collect()
    }
    let m = match_items(&keys(bs), &keys(cs), level, bs.kernel_names);
    let mut rows = Vec::new();
    let mut loosely = 0;
    for &(i, j, by) in &m.pairs {
        let (bi, ci) = (&bs.items[i], &cs.items[j]);
        let by = by.map_or("exact", |b| b.as_str());
        if by != "exact" {
            loosely += 1;
        }
        let mut r = row(&ci.name, (Some(bi), Some(ci)), runs, by, rule);
        if bi.name != ci.name {
            r.baseline_name = Some(bi.name.clone());
        }
        rows.push(r);
    }
    for &j in &m.new {
        let item = &cs.items[j];
        rows.push(row(&item.name, (None, Some(item)), runs, "new", rule));
    }
    for &i in &m.vanished {
        let item = &bs.items[i];
        rows.push(row(&item.name, (Some(item), None), runs, "vanished", rule));
    }
    let (base_sums, cand_sums) = (section_runs(bs, runs.0), section_runs(cs, runs.1));
    let net = judge(&base_sums, &cand_sums, rule);
    let net_change: f64 = rows.iter().map(|r| r.delta_us).sum();
    for r in &mut rows {
        // A share of a change that is itself noise reads as a fact
        // (1237% of nothing): only of a significant net change.
        r.share_of_change_pct =
            (net.significant && net_change != 0.0).then(|| r.delta_us / net_change * 100.0);
    }
    rows.sort_by(|a, b| {
        b.delta_us
            .abs()
            .total_cmp(&a.delta_us.abs())
            .then_with(|| a.name.cmp(&b.name))
    });
    let count = |slower: bool| {
        rows.iter()
            .filter(|r| r.significant() && (r.delta_us > 0.0) == slower)
            .count()
    };
    SectionDelta {
        section: bs.name,
        baseline_us: bs.items.iter().map(|i| i.time_us).sum(),
        candidate_us: cs.items.iter().map(|i| i.time_us).sum(),
        net,
        matched: m.pairs.len(),
        matched_loosely: loosely,
        new: m.new.len(),
        vanished: m.vanished.len(),
        slower: count(true),
        faster: count(false),
        rows,
    }
}

/// The section whose rows decide the verdict when the total does not: the
/// kernels, else the categories (a summary JSON has only those).
const VERDICT_SECTIONS: [&str; 2] = ["kernel", "category"];

/// The section of the steps (trace inputs with steps on both sides) and
/// its row that the verdict reads after the total.
const STEP_SECTION: &str = "step";
const MEDIAN_STEP: &str = "median step";

/// Rows named in a verdict's reason.
const REASON_ROWS: usize = 3;

/// The verdict (docs/compare.md#verdict): the total's significant change;
/// else a significantly slower row of the verdict section makes it worse,
/// a significantly faster one (and none slower) better; else unchanged.
fn verdict(c: &Comparison) -> (Verdict, String) {
    let total = format!(
        "the total ({}) {}",
        c.total_what,
        match c.total_change_pct() {
            _ if c.total_delta_us() == 0.0 => "did not change".to_string(),
            Some(p) => format!(
                "{} {:.1}% ({})",
                if p > 0.0 { "rose" } else { "fell" },
                p.abs(),
                signed_us(c.total_delta_us())
            ),
            None => format!("changed by {}", signed_us(c.total_delta_us())),
        }
    );
    if c.total.significant {
        let v = if c.total_delta_us() > 0.0 {
            Verdict::Worse
        } else {
            Verdict::Better
        };
        return (v, format!("{}, a significant change", capitalised(&total)));
    }
    if let Some(v) = step_verdict(c, &total) {
        return v;
    }
    let Some(s) = VERDICT_SECTIONS
        .iter()
        .find_map(|name| c.sections.iter().find(|s| s.section == *name))
    else {
        return (
            Verdict::Unchanged,
            format!("{}, within the threshold", capitalised(&total)),
        );
    };
    let named = |slower: bool| -> String {
        let rows: Vec<String> = s
            .significant_rows()
            .filter(|r| (r.delta_us > 0.0) == slower)
            .take(REASON_ROWS)
            .map(|r| {
                let change = r
                    .change_pct
                    .map_or_else(|| r.status.to_string(), signed_pct);
                format!("{} {change}", r.name)
            })
            .collect();
        rows.join(", ")
    };
    let rows_word = |n: usize| if n == 1 { "row" } else { "rows" };
    if s.slower > 0 {
        let also = if s.faster > 0 {
            format!(" ({} faster)", s.faster)
        } else {
            String::new()
        };
        return (
            Verdict::Worse,
            format!(
                "{} {} {} significantly slower{also}: {}; {total}, within the threshold",
                s.slower,
                s.section,
                rows_word(s.slower),
                named(true)
            ),
        );
    }
    if s.faster > 0 {
        return (
            Verdict::Better,
            format!(
                "{} {} {} significantly faster: {}; {total}, within the threshold",
                s.faster,
                s.section,
                rows_word(s.faster),
                named(false)
            ),
        );
    }
    (
        Verdict::Unchanged,
        format!(
            "No significant change: {total}, no {} row beyond the threshold{}",
            s.section,
            if c.significance.test == Test::ThresholdOnly {
                ""
            } else {
                " and the noise"
            }
        ),
    )
}

/// When both sides have steps: the job's median step, when its change is
/// significant (docs/compare.md#verdict).
fn step_verdict(c: &Comparison, total: &str) -> Option<(Verdict, String)> {
    let row = c
        .sections
        .iter()
        .find(|s| s.section == STEP_SECTION)?
        .rows
        .iter()
        .find(|r| r.name == MEDIAN_STEP && r.status == "exact" && r.significant())?;
    let change = row
        .change_pct
        .map_or_else(|| signed_us(row.delta_us), signed_pct);
    let (v, word) = if row.delta_us > 0.0 {
        (Verdict::Worse, "slower")
    } else {
        (Verdict::Better, "faster")
    };
    Some((
        v,
        format!(
            "The median step is significantly {word} ({} -> {}, {change}); {total}, within the threshold",
            fmt_us(row.baseline_us),
            fmt_us(row.candidate_us)
        ),
    ))
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The label of a side: the paths given for it, as given (a folder of
/// runs stays one path), joined by `, `.
pub fn side_label(paths: &[&std::path::Path]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}

/// The names of a side: its label and its runs.
pub struct SideNames<'a> {
    pub label: String,
    pub runs: &'a [String],
}

/// Compares every section both sides have (in the baseline's order).
pub fn compare(
    kind: &'static str,
    names: (SideNames<'_>, SideNames<'_>),
    base: &Run,
    cand: &Run,
    level: MatchLevel,
    rule: &Rule,
) -> Comparison {
    let runs = (base.runs(), cand.runs());
    let sections = base
        .sections
        .iter()
        .filter_map(|bs| {
            let cs = cand.section(bs.name)?;
            Some(section_delta(bs, cs, runs, level, rule))
        })
        .collect();
    let mut c = Comparison {
        verdict: Verdict::Unchanged,
        verdict_reason: String::new(),
        kind,
        baseline: names.0.label,
        candidate: names.1.label,
        baseline_runs: names.0.runs.to_vec(),
        candidate_runs: names.1.runs.to_vec(),
        level: level.as_str(),
        significance: Significance {
            rule: *rule,
            test: Test::of(runs.0, runs.1),
        },
        total_what: base.total_what,
        baseline_total_us: base.total_us,
        candidate_total_us: cand.total_us,
        total: judge(&base.total_runs_us, &cand.total_runs_us, rule),
        sections,
        findings: match (&base.findings, &cand.findings) {
            (Some(b), Some(c)) => Some(findings_delta(b, c)),
            _ => None,
        },
    };
    (c.verdict, c.verdict_reason) = verdict(&c);
    c
}
