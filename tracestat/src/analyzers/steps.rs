//! Steps (docs/tracestat.md#steps): per rank and step its length and where
//! the time went in it (compute, communication, memory, idle; kernels and
//! launches); per rank the median, p90 and longest step and the outlier
//! steps; per step across ranks the slowest rank and the spread.
//!
//! The windows themselves are found by `step_windows` before the rank is
//! prepared ([`restrict`]), so that a run that keeps only some steps
//! (`--steps`, `--skip-warmup`) restricts every other analysis to them
//! through the same clipping as `--from`/`--to`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use unitrace_render::sections::{Column, FileRows, RowSource, Section, Table, Unit, Value};

use super::breakdown::limit_rows;
use super::{median, vs, Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::classify::Class;
use crate::ingest::RankTrace;
use crate::rank_model::{class_index, clip_to_window, RankModel};
use crate::search::partition_point_near;
use crate::step_windows::{self, RankSteps, StepOptions, StepRule, StepWindow};
use crate::time::{us, Ns};

/// Rows of the per-step tables on screen.
const SCREEN_STEPS: usize = 10;

pub use crate::step_windows::{outliers, OUTLIER_MADS, OUTLIER_MIN_SHARE};

/// Finds the steps of a rank and, when the run keeps only some, cuts the
/// rank to the span of those it keeps (docs/tracestat.md#steps): from the
/// first kept step's start to the last one's end, through the clipping of
/// `--from`/`--to` (a rank with no kept step keeps nothing).
pub fn restrict(trace: RankTrace, options: &StepOptions) -> (RankTrace, RankSteps) {
    let marker = options.regex().ok();
    let found = step_windows::find(&trace, marker.as_ref());
    let steps = step_windows::select(found, options);
    if !steps.selecting || trace.last < trace.first {
        return (trace, steps);
    }
    let window = match steps.span() {
        Some((start, end)) => (start - trace.first, end - trace.first),
        None => (0, 0),
    };
    (clip_to_window(trace, window), steps)
}

/// One step of one rank, as `--partial` keeps it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepTimes {
    pub step: u64,
    pub start_ns: Ns,
    pub dur_ns: Ns,
    /// Exclusive class times inside the step (a moment counts once:
    /// compute > communication > memory, docs/tracestat.md#precedence).
    pub compute_ns: Ns,
    pub communication_ns: Ns,
    pub memory_ns: Ns,
    /// Device operations that start inside the step.
    pub kernels: u64,
    /// Device operations whose submission (launch call) is inside the step.
    pub launches: u64,
    /// Compute and memory time of the device operations launched inside
    /// the step (by their launch link, else by their start), wherever they
    /// ran: a step's own work, which an asynchronous device runs after the
    /// host has left the step (docs/tracestat.md#steps). Absent (0) in
    /// partials of format 6 and older.
    #[serde(default)]
    pub launched_ns: Ns,
}

impl StepTimes {
    fn busy_ns(&self) -> Ns {
        self.compute_ns + self.communication_ns + self.memory_ns
    }
}

/// What the analysis keeps of one rank.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepsRank {
    pub rule: StepRule,
    pub source: String,
    pub found: u64,
    pub warmup: Vec<u64>,
    /// With `--skip-warmup`: whether the rank's step time settled (absent
    /// in partials before it was kept: nothing is said of it then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_settled: Option<bool>,
    /// Without `--skip-warmup`: the leading steps it would drop.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmup_seen: Vec<u64>,
    pub selecting: bool,
    pub steps: Vec<StepTimes>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepRow {
    pub rank: String,
    pub step: u64,
    /// Since the earliest rank's first event.
    pub start_us: f64,
    pub dur_us: f64,
    pub compute_us: f64,
    pub communication_us: f64,
    pub memory_us: f64,
    pub idle_us: f64,
    pub kernels: u64,
    pub launches: u64,
    /// Compute and memory time of the work launched in the step.
    pub launched_us: f64,
    /// Against the rank's median step.
    pub vs_median_pct: f64,
    pub outlier: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepRankRow {
    pub rank: String,
    pub rule: &'static str,
    pub source: String,
    pub steps_found: u64,
    /// Ids dropped by `--skip-warmup`.
    pub warmup: Vec<u64>,
    /// With `--skip-warmup`: whether the step time settled (`false`:
    /// nothing dropped, as it never did).
    pub warmup_settled: Option<bool>,
    /// Without `--skip-warmup`: the leading steps it would drop.
    pub warmup_seen: Vec<u64>,
    /// Steps kept (the rows of `steps`).
    pub steps: u64,
    pub median_us: f64,
    pub p90_us: f64,
    pub mean_us: f64,
    pub max_us: f64,
    pub max_step: Option<u64>,
    pub outliers: Vec<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepSpreadRow {
    pub step: u64,
    pub ranks: usize,
    pub min_us: f64,
    pub median_us: f64,
    pub max_us: f64,
    pub slowest_rank: String,
    /// `max - min`.
    pub spread_us: f64,
    /// `max / median`.
    pub max_over_median: f64,
    /// The rank with the most device time of its own in the step (compute
    /// and memory, not communication): where the step's durations agree
    /// (ranks that leave every step's collective together), the rank the
    /// others waited for.
    pub busiest_rank: String,
    pub busiest_us: f64,
}

/// The job's step time: over the steps, the slowest rank's length.
#[derive(Debug, Clone, Serialize)]
pub struct StepTime {
    pub steps: usize,
    pub median_us: f64,
    pub p90_us: f64,
    pub max_us: f64,
    pub max_step: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepsOut {
    /// A row per rank and step: shared with the table of its file, made
    /// row by row from it (docs/tracestat.md#scale).
    #[serde(serialize_with = "step_rows_json")]
    pub steps: Arc<Vec<StepRow>>,
    pub step_ranks: Vec<StepRankRow>,
    #[serde(serialize_with = "spread_rows_json")]
    pub step_spread: Vec<StepSpreadRow>,
    /// `null` when no rank has steps.
    pub step_time: Option<StepTime>,
    /// Whether the other analyses saw only the kept steps (`--steps`,
    /// `--skip-warmup`).
    pub steps_selected: bool,
}

/// `steps` as the report's writer takes it: each row as [`StepRow`]'s
/// derived `Serialize` writes it, made as text
/// ([`unitrace_render::json::serialize_rows`]).
fn step_rows_json<S: serde::Serializer>(rows: &[StepRow], s: S) -> Result<S::Ok, S::Error> {
    unitrace_render::json::serialize_rows(s, rows, |t, r| {
        t.str("rank", &r.rank);
        t.u64("step", r.step);
        t.f64("start_us", r.start_us);
        t.f64("dur_us", r.dur_us);
        t.f64("compute_us", r.compute_us);
        t.f64("communication_us", r.communication_us);
        t.f64("memory_us", r.memory_us);
        t.f64("idle_us", r.idle_us);
        t.u64("kernels", r.kernels);
        t.u64("launches", r.launches);
        t.f64("launched_us", r.launched_us);
        t.f64("vs_median_pct", r.vs_median_pct);
        t.bool("outlier", r.outlier);
    })
}

/// `step_spread` as the report's writer takes it (see [`step_rows_json`]).
fn spread_rows_json<S: serde::Serializer>(rows: &[StepSpreadRow], s: S) -> Result<S::Ok, S::Error> {
    unitrace_render::json::serialize_rows(s, rows, |t, r| {
        t.u64("step", r.step);
        t.u64("ranks", r.ranks as u64);
        t.f64("min_us", r.min_us);
        t.f64("median_us", r.median_us);
        t.f64("max_us", r.max_us);
        t.str("slowest_rank", &r.slowest_rank);
        t.f64("spread_us", r.spread_us);
        t.f64("max_over_median", r.max_over_median);
        t.str("busiest_rank", &r.busiest_rank);
        t.f64("busiest_us", r.busiest_us);
    })
}

pub struct Steps;

impl Analyzer for Steps {
    type Rank = StepsRank;
    type Output = StepsOut;

    fn observe(m: &RankModel<'_>, _: &RankOptions) -> StepsRank {
        let s = m.steps;
        StepsRank {
            rule: s.rule,
            source: s.source.clone(),
            found: s.found,
            warmup: s.warmup.clone(),
            warmup_settled: s.warmup_settled,
            warmup_seen: s.warmup_seen.clone(),
            selecting: s.selecting,
            steps: step_times(m, &s.kept),
        }
    }

    fn part(rank: &RankSummary) -> &StepsRank {
        &rank.parts.steps
    }

    fn finish(ranks: &Ranks<'_>, _: &Finished) -> StepsOut {
        let origin = ranks.origin();
        let mut steps = Vec::new();
        let mut step_ranks = Vec::new();
        for (r, label) in ranks.ranks.iter().zip(&ranks.labels) {
            let part = Self::part(r);
            let (stats, outlier) = rank_stats(label, part);
            for (t, out) in part.steps.iter().zip(outlier) {
                steps.push(StepRow {
                    rank: label.clone(),
                    step: t.step,
                    start_us: us(t.start_ns - origin),
                    dur_us: us(t.dur_ns),
                    compute_us: us(t.compute_ns),
                    communication_us: us(t.communication_ns),
                    memory_us: us(t.memory_ns),
                    idle_us: us(t.dur_ns - t.busy_ns()),
                    kernels: t.kernels,
                    launches: t.launches,
                    launched_us: us(t.launched_ns),
                    vs_median_pct: vs(us(t.dur_ns), stats.median_us),
                    outlier: out,
                });
            }
            step_ranks.push(stats);
        }
        let step_spread = spread(&steps);
        let step_time = step_time(&step_spread);
        StepsOut {
            steps: Arc::new(steps),
            step_ranks,
            step_spread,
            step_time,
            steps_selected: ranks.ranks.iter().any(|r| Self::part(r).selecting),
        }
    }

    fn sections(r: &Report, screen: &Screen) -> Vec<Section> {
        let out = &r.out.steps;
        let mut s = Section::new("steps", "Steps (docs/tracestat.md#steps)");
        s.lines = summary_lines(out);
        s.tables.push(rank_table(out, screen));
        s.tables.push(spread_table(out));
        s.tables.push(steps_table(out));
        if out.step_time.is_none() {
            // No steps anywhere: the line says so; the files keep their
            // (empty) tables.
            for t in &mut s.tables {
                t.files_only = true;
            }
        }
        vec![s]
    }
}

/// Each kept step's length and breakdown on one rank: the rank's busy
/// time, already swept into class-labelled segments by the rank model
/// (`Sweep::class_segments`), cut to each step; kernels and launches found
/// by a binary search over the steps.
fn step_times(m: &RankModel<'_>, windows: &[StepWindow]) -> Vec<StepTimes> {
    if windows.is_empty() {
        return Vec::new();
    }
    let longest = windows.iter().map(StepWindow::dur_ns).max().unwrap_or(0);
    // Steps that follow each other (every rule but markers of one id on
    // several threads) have sorted ends too: the first step ending after
    // `at` is found directly.
    let disjoint = windows.windows(2).all(|p| p[0].end_ns <= p[1].start_ns);
    // Indices of the steps holding the moment `at`: starts sorted (`kept`
    // is in time order), none longer than `longest`. Kernels and launches
    // come in time order, so each search starts where the last one ended.
    let near = std::cell::Cell::new(0);
    let holding = |at: Ns| {
        let from = if disjoint {
            partition_point_near(windows, near.get(), |w| w.end_ns <= at)
        } else {
            partition_point_near(windows, near.get(), |w| {
                w.start_ns.saturating_add(longest) <= at
            })
        };
        near.set(from);
        (from..windows.len())
            .take_while(move |&i| windows[i].start_ns <= at)
            .filter(move |&i| windows[i].end_ns > at)
    };
    let mut out: Vec<StepTimes> = windows
        .iter()
        .map(|w| StepTimes {
            step: w.step,
            start_ns: w.start_ns,
            dur_ns: w.dur_ns(),
            ..StepTimes::default()
        })
        .collect();
    for k in &m.trace.kernels {
        for i in holding(k.start) {
            out[i].kernels += 1;
        }
    }
    for &(_, ts) in m.submissions.iter().flatten() {
        for i in holding(ts) {
            out[i].launches += 1;
        }
    }
    for ((k, class), submission) in m.trace.kernels.iter().zip(&m.classes).zip(&m.submissions) {
        if matches!(class, Class::Compute | Class::Memory) {
            let at = submission.map_or(k.start, |(_, ts)| ts);
            for i in holding(at) {
                out[i].launched_ns += k.end - k.start;
            }
        }
    }
    let segments = m
        .scopes
        .first()
        .map_or(&[][..], |s| &s.sweep.class_segments[..]);
    for (t, w) in out.iter_mut().zip(windows) {
        let mut class_ns: [Ns; 3] = [0; 3];
        let from = segments.partition_point(|s| s.1 <= w.start_ns);
        for &(s, e, class) in segments[from..].iter().take_while(|s| s.0 < w.end_ns) {
            class_ns[class] += e.min(w.end_ns) - s.max(w.start_ns);
        }
        t.compute_ns = class_ns[class_index(Class::Compute)];
        t.communication_ns = class_ns[class_index(Class::Communication)];
        t.memory_ns = class_ns[class_index(Class::Memory)];
    }
    out
}

/// The `q` quantile by linear interpolation between the order statistics
/// (numpy's default); 0 for none.
fn quantile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let pos = q * (values.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    values[lo] + (values[hi] - values[lo]) * (pos - lo as f64)
}

/// A rank's statistics row and, per step, whether it is an outlier.
fn rank_stats(label: &str, part: &StepsRank) -> (StepRankRow, Vec<bool>) {
    let durations: Vec<f64> = part.steps.iter().map(|t| us(t.dur_ns)).collect();
    let outlier = outliers(&durations);
    let longest = part
        .steps
        .iter()
        .zip(&durations)
        .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.start_ns.cmp(&a.0.start_ns)));
    let n = durations.len();
    let row = StepRankRow {
        rank: label.to_string(),
        rule: part.rule.as_str(),
        source: part.source.clone(),
        steps_found: part.found,
        warmup: part.warmup.clone(),
        warmup_settled: part.warmup_settled,
        warmup_seen: part.warmup_seen.clone(),
        steps: n as u64,
        median_us: median(&mut durations.clone()),
        p90_us: quantile(&mut durations.clone(), 0.9),
        mean_us: if n > 0 {
            durations.iter().sum::<f64>() / n as f64
        } else {
            0.0
        },
        max_us: longest.map_or(0.0, |l| *l.1),
        max_step: longest.map(|l| l.0.step),
        outliers: part
            .steps
            .iter()
            .zip(&outlier)
            .filter(|(_, &o)| o)
            .map(|(t, _)| t.step)
            .collect(),
    };
    (row, outlier)
}

/// Per step id across the ranks that have it.
fn spread(rows: &[StepRow]) -> Vec<StepSpreadRow> {
    let mut by_step: BTreeMap<u64, Vec<&StepRow>> = BTreeMap::new();
    for r in rows {
        by_step.entry(r.step).or_default().push(r);
    }
    by_step
        .into_iter()
        .map(|(step, list)| {
            let mut durations: Vec<f64> = list.iter().map(|r| r.dur_us).collect();
            // The first in report order among equals.
            let slowest = list
                .iter()
                .rev()
                .max_by(|a, b| a.dur_us.total_cmp(&b.dur_us))
                .expect("a step has a rank");
            // The work launched in the step where the partials carry it,
            // else the work that ran inside it (docs/tracestat.md#steps).
            let by_launch = list.iter().any(|r| r.launched_us > 0.0);
            let own = |r: &StepRow| {
                if by_launch {
                    r.launched_us
                } else {
                    r.compute_us + r.memory_us
                }
            };
            let busiest = list
                .iter()
                .rev()
                .max_by(|a, b| own(a).total_cmp(&own(b)))
                .expect("a step has a rank");
            let min = durations.iter().copied().fold(f64::INFINITY, f64::min);
            let max = slowest.dur_us;
            let med = median(&mut durations);
            StepSpreadRow {
                step,
                ranks: list.len(),
                min_us: min,
                median_us: med,
                max_us: max,
                slowest_rank: slowest.rank.clone(),
                spread_us: max - min,
                max_over_median: if med > 0.0 { max / med } else { 0.0 },
                busiest_rank: busiest.rank.clone(),
                busiest_us: own(busiest),
            }
        })
        .collect()
}

fn step_time(spread: &[StepSpreadRow]) -> Option<StepTime> {
    let longest = spread
        .iter()
        .rev()
        .max_by(|a, b| a.max_us.total_cmp(&b.max_us))?;
    let mut job: Vec<f64> = spread.iter().map(|s| s.max_us).collect();
    Some(StepTime {
        steps: spread.len(),
        median_us: median(&mut job.clone()),
        p90_us: quantile(&mut job, 0.9),
        max_us: longest.max_us,
        max_step: longest.step,
    })
}

/// Ranks as `0-3 5` (consecutive numeric labels joined).
fn rank_span(labels: &[&str]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut run: Option<(u64, u64)> = None;
    let flush = |run: &mut Option<(u64, u64)>, out: &mut Vec<String>| {
        if let Some((a, b)) = run.take() {
            out.push(if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            });
        }
    };
    for l in labels {
        match (l.parse::<u64>().ok(), run) {
            (Some(n), Some((a, b))) if n == b + 1 => run = Some((a, n)),
            (Some(n), _) => {
                flush(&mut run, &mut out);
                run = Some((n, n));
            }
            (None, _) => {
                flush(&mut run, &mut out);
                out.push(l.to_string());
            }
        }
    }
    flush(&mut run, &mut out);
    out.join(" ")
}

fn summary_lines(out: &StepsOut) -> Vec<String> {
    let mut lines = Vec::new();
    let mut rules: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for r in &out.step_ranks {
        rules
            .entry((r.rule, r.source.as_str()))
            .or_default()
            .push(&r.rank);
    }
    for ((rule, source), ranks) in &rules {
        let what = match *rule {
            "marker" => format!("host ranges matching `{source}`"),
            "top-level-range" => format!("the repeated top-level range `{source}`"),
            "top-level-sequence" => format!("the repeated sequence of top-level ranges `{source}`"),
            "gpu-period" => format!("the period of the GPU work, {source}"),
            "not-recorded" => "not recorded (a partial of an older version)".to_string(),
            _ => String::new(),
        };
        lines.push(if what.is_empty() {
            format!("rank {}: no steps (no host range matches the --step pattern, no top-level range repeats, no period in the GPU work)", rank_span(ranks))
        } else {
            format!("rank {}: steps by {what}", rank_span(ranks))
        });
    }
    if let Some(t) = &out.step_time {
        lines.push(format!(
            "step time (the slowest rank's, over {} step{}): median {:.3} ms, p90 {:.3} ms, longest step {} {:.3} ms",
            t.steps,
            if t.steps == 1 { "" } else { "s" },
            t.median_us / 1e3,
            t.p90_us / 1e3,
            t.max_step,
            t.max_us / 1e3
        ));
    }
    if let Some(line) = warmup_line(&out.step_ranks) {
        lines.push(line);
    }
    if out.steps_selected {
        lines.push("Every other table holds only the kept steps: on each rank, the stretch from its first kept step's start to its last kept step's end".to_string());
        if out.steps.is_empty() {
            lines.push("No rank kept a step: every other table is empty".to_string());
        }
    }
    lines
}

/// What `--skip-warmup` did on each rank: the steps it dropped, or why
/// it dropped none (docs/tracestat.md#steps). `None` without the option.
fn warmup_line(ranks: &[StepRankRow]) -> Option<String> {
    let mut said: Vec<String> = ranks
        .iter()
        .filter(|r| !r.warmup.is_empty())
        .map(|r| format!("rank {}: {}", r.rank, ids(&r.warmup)))
        .collect();
    let none = |settled: bool| -> Vec<&str> {
        ranks
            .iter()
            .filter(|r| r.warmup.is_empty() && r.warmup_settled == Some(settled))
            .map(|r| r.rank.as_str())
            .collect()
    };
    let (settled, unsettled) = (none(true), none(false));
    if !settled.is_empty() {
        said.push(format!(
            "nothing on rank {} (the step time settled from the first kept step)",
            rank_span(&settled)
        ));
    }
    if !unsettled.is_empty() {
        said.push(format!(
            "nothing on rank {} (the step time never settled: over half the steps more than {:.0}% off it)",
            rank_span(&unsettled),
            crate::step_windows::WARMUP_TOLERANCE * 100.0
        ));
    }
    (!said.is_empty()).then(|| format!("--skip-warmup dropped {}", said.join("; ")))
}

fn ids(v: &[u64]) -> String {
    let t: Vec<String> = v.iter().map(u64::to_string).collect();
    t.join(" ")
}

fn rank_table(out: &StepsOut, screen: &Screen) -> Table {
    let mut t = Table::new(
        "step_ranks",
        "Per rank",
        vec![
            Column::new("rank", "rank", Unit::Text),
            Column::new("rule", "rule", Unit::Text).files_only(),
            Column::new("source", "source", Unit::Text).files_only(),
            Column::new("steps_found", "found", Unit::Count).files_only(),
            Column::new("warmup_dropped", "warm-up", Unit::Count).files_only(),
            Column::new("steps", "steps", Unit::Count),
            Column::new("median_us", "median", Unit::Us),
            Column::new("p90_us", "p90", Unit::Us),
            Column::new("mean_us", "mean", Unit::Us).files_only(),
            Column::new("max_us", "max", Unit::Us),
            Column::new("max_step", "max step", Unit::Count),
            Column::new("outliers", "outliers", Unit::Text),
        ],
    );
    for r in &out.step_ranks {
        t.push(vec![
            Value::from(&r.rank),
            Value::from(r.rule),
            Value::from(&r.source),
            r.steps_found.into(),
            (r.warmup.len() as u64).into(),
            r.steps.into(),
            r.median_us.into(),
            r.p90_us.into(),
            r.mean_us.into(),
            r.max_us.into(),
            r.max_step.into(),
            Value::from(ids(&r.outliers)),
        ]);
    }
    let shown: Vec<usize> = (0..out.step_ranks.len())
        .filter(|&i| screen.ranks.contains(&out.step_ranks[i].rank))
        .collect();
    limit_rows(&mut t, &shown, screen);
    t.notes.push(format!(
        "(outliers: further from the rank's median than {OUTLIER_MADS} x 1.4826 x its median absolute deviation and than {:.0}% of it)",
        OUTLIER_MIN_SHARE * 100.0
    ));
    t
}

/// The rows of the `SCREEN_STEPS` largest `key`s, in their table order.
fn largest(n: usize, key: impl Fn(usize) -> f64) -> Vec<usize> {
    crate::search::first_places(n, SCREEN_STEPS, |a, b| {
        key(b).total_cmp(&key(a)).then(a.cmp(&b))
    })
}

fn spread_table(out: &StepsOut) -> Table {
    let mut t = Table::new(
        "step_spread",
        "Per step across ranks",
        vec![
            Column::new("step", "step", Unit::Count),
            Column::new("ranks", "ranks", Unit::Count),
            Column::new("min_us", "min", Unit::Us),
            Column::new("median_us", "median", Unit::Us),
            Column::new("max_us", "max", Unit::Us),
            Column::new("spread_us", "spread", Unit::Us),
            Column::new("max_over_median", "max/median", Unit::Fraction),
            Column::new("slowest_rank", "slowest", Unit::Text),
            Column::new("busiest_rank", "busiest", Unit::Text),
            Column::new("busiest_us", "busiest own", Unit::Us).files_only(),
        ],
    );
    for s in &out.step_spread {
        t.push(vec![
            s.step.into(),
            s.ranks.into(),
            s.min_us.into(),
            s.median_us.into(),
            s.max_us.into(),
            s.spread_us.into(),
            s.max_over_median.into(),
            Value::from(&s.slowest_rank),
            Value::from(&s.busiest_rank),
            s.busiest_us.into(),
        ]);
    }
    let n = out.step_spread.len();
    if n > SCREEN_STEPS {
        let rows = largest(n, |i| out.step_spread[i].max_us);
        t.show_only(
            rows,
            format!(
                "({} slowest of {n} steps shown; every step in --csv/--json)",
                SCREEN_STEPS
            ),
        );
    }
    t.notes.push("(busiest: the rank whose work launched in the step has the most compute and memory time, wherever it ran; when ranks leave each step's collective together their step lengths agree, and the busiest is the one the others waited for)".to_string());
    t
}

/// The rows of `steps.csv`, made one at a time from the steps.
struct StepTableRows(Arc<Vec<StepRow>>);

impl RowSource for StepTableRows {
    fn count(&self) -> usize {
        self.0.len()
    }

    fn row(&self, i: usize, out: &mut Vec<Value>) {
        out.clear();
        let Some(s) = self.0.get(i) else {
            return;
        };
        out.extend([
            Value::from(&s.rank),
            s.step.into(),
            s.start_us.into(),
            s.dur_us.into(),
            s.compute_us.into(),
            s.communication_us.into(),
            s.memory_us.into(),
            s.idle_us.into(),
            s.kernels.into(),
            s.launches.into(),
            s.launched_us.into(),
            s.vs_median_pct.into(),
            s.outlier.into(),
        ]);
    }
}

fn steps_table(out: &StepsOut) -> Table {
    let mut t = Table::new(
        "steps",
        "Outlier steps",
        vec![
            Column::new("rank", "rank", Unit::Text),
            Column::new("step", "step", Unit::Count),
            Column::new("start_us", "start", Unit::Us),
            Column::new("dur_us", "dur", Unit::Us),
            Column::new("compute_us", "compute", Unit::Us),
            Column::new("communication_us", "comm", Unit::Us),
            Column::new("memory_us", "memory", Unit::Us),
            Column::new("idle_us", "idle", Unit::Us),
            Column::new("kernels", "kernels", Unit::Count),
            Column::new("launches", "launches", Unit::Count),
            Column::new("launched_us", "launched", Unit::Us),
            Column::new("vs_median_pct", "vs median", Unit::PctChange),
            Column::new("outlier", "outlier", Unit::Bool).files_only(),
        ],
    );
    let outliers: Vec<usize> = (0..out.steps.len())
        .filter(|&i| out.steps[i].outlier)
        .collect();
    let picked: Vec<usize> = {
        let picked = largest(outliers.len(), |k| out.steps[outliers[k]].dur_us);
        picked.into_iter().map(|k| outliers[k]).collect()
    };
    // Only the rows shown are values; the file's (a row per rank and
    // step: hundreds of thousands over many ranks) are made while it is
    // written (docs/tracestat.md#scale).
    let source = StepTableRows(Arc::clone(&out.steps));
    let mut row = Vec::with_capacity(t.columns.len());
    for &i in &picked {
        source.row(i, &mut row);
        t.push(std::mem::take(&mut row));
    }
    t.file_rows = Some(FileRows(Arc::new(source)));
    let shown: Vec<usize> = (0..picked.len()).collect();
    let note = if outliers.len() > shown.len() {
        format!(
            "({} longest of {} outlier steps shown; every step of every rank in --csv/--json)",
            shown.len(),
            outliers.len()
        )
    } else {
        "(every step of every rank in --csv/--json)".to_string()
    };
    t.show_only(shown, note);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `steps` and `step_spread` made as text are byte for byte their
    /// rows serialized, at every depth of the report's layout and over
    /// more rows than the writer takes at a time.
    #[test]
    fn the_step_and_spread_rows_are_those_serialized() {
        let x = unitrace_render::json::test_floats();
        let text = ["0", "r\"1\n", "名 µs", ""];
        let steps: Vec<StepRow> = (0..2_000)
            .map(|i| StepRow {
                rank: text[i % 4].to_string(),
                step: [0, 7, u64::MAX][i % 3],
                start_us: x[i % 12],
                dur_us: x[(i + 1) % 12],
                compute_us: x[(i + 2) % 12],
                communication_us: x[(i + 3) % 12],
                memory_us: x[(i + 4) % 12],
                idle_us: x[(i + 5) % 12],
                kernels: i as u64,
                launches: u64::MAX - i as u64,
                launched_us: x[(i + 6) % 12],
                vs_median_pct: x[(i + 7) % 12],
                outlier: i % 3 == 0,
            })
            .collect();
        let spread: Vec<StepSpreadRow> = (0..2_000)
            .map(|i| StepSpreadRow {
                step: i as u64,
                ranks: [0, 1, usize::MAX][i % 3],
                min_us: x[i % 12],
                median_us: x[(i + 1) % 12],
                max_us: x[(i + 2) % 12],
                slowest_rank: text[i % 4].to_string(),
                spread_us: x[(i + 3) % 12],
                max_over_median: x[(i + 4) % 12],
                busiest_rank: text[(i + 1) % 4].to_string(),
                busiest_us: x[(i + 5) % 12],
            })
            .collect();
        #[derive(Serialize)]
        struct Plain<'a> {
            steps: &'a [StepRow],
            step_spread: &'a [StepSpreadRow],
        }
        #[derive(Serialize)]
        struct Text<'a> {
            #[serde(serialize_with = "step_rows_json")]
            steps: &'a [StepRow],
            #[serde(serialize_with = "spread_rows_json")]
            step_spread: &'a [StepSpreadRow],
        }
        let text = Text {
            steps: &steps,
            step_spread: &spread,
        };
        let mut out = Vec::new();
        unitrace_render::json::write_report(&mut out, &text, 1).unwrap();
        assert!(out.len() > 4 * 64 * 1024);
        let plain = Plain {
            steps: &steps,
            step_spread: &spread,
        };
        unitrace_render::json::assert_same_report(&plain, &text);
    }
}
