//! The critical path of each step across ranks, and what a change would buy
//! (docs/tracestat.md#critical-path, docs/tracestat.md#what-if): per step,
//! the chain of work that set the step's end, through host time, launches,
//! in-order queues, host synchronisations and collectives across ranks;
//! summed per kind and per name; and with `--what-if` the steps replayed
//! in order with changed durations.
//!
//! `graph.rs` reduces each rank to small per-step graphs (all a partial
//! carries), `packed.rs` keeps their sinks packed until `solve.rs` joins
//! them across ranks at the end, `steps.rs` says where the steps are and
//! `rules.rs` reads the what-if rules.

pub mod graph;
pub mod packed;
mod reduced;
pub mod rules;
pub mod solve;
mod spill;
pub mod steps;
pub mod stretch;
pub mod sweep;

use std::collections::BTreeMap;

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

use serde::Serialize;
use std::sync::Arc;

use serde::ser::Error as _;
use unitrace_render::json::{push_thousandths, JsonRow};
use unitrace_render::sections::{Column, Figure, FileRows, RowSource, Section, Table, Unit, Value};
use unitrace_render::table::CsvRecords;

use super::collectives::{aligned_origin, group_calls};
use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::rank_model::RankModel;
use crate::search::first_places;
use crate::time::{pct, us, Ns};
use graph::{Kind, RankPath};
use solve::{Operations, Solver, StepPath};

/// Rows of the slowest step's path on screen at most.
const TOP_ITEMS: usize = 20;
/// Names of the per-name summary on screen at most.
const TOP_NAMES: usize = 15;
/// Bars of the page's Gantt chart at most (about one per pixel).
const GANTT_BARS: usize = 1500;
/// Steps on screen at most (the slowest ones).
const TOP_STEPS: usize = 20;

/// One stretch of a step's path (`critical_path.csv`).
#[derive(Debug, Clone, Serialize)]
pub struct PathRow {
    pub step: solve::Label,
    pub seq: u64,
    pub rank: solve::Label,
    pub kind: Kind,
    pub name: solve::Label,
    /// Since the report's origin (aligned clocks).
    pub start_us: f64,
    pub dur_us: f64,
}

/// Every step's path as the rows of `critical_path.csv`, each made when
/// it is read: held as the steps' stretches (48 bytes each) rather than as
/// rows (80), and never as both (docs/tracestat.md#scale).
#[derive(Debug, Default)]
pub struct PathTable {
    /// Per step: its label and its stretches.
    steps: Vec<(solve::Label, Vec<solve::PathItem>)>,
    /// Rows before each step, then the number of rows.
    before: Vec<usize>,
    ranks: Vec<solve::Label>,
    origin: Ns,
}

impl PathTable {
    fn new(ranks: Vec<solve::Label>, origin: Ns) -> PathTable {
        PathTable {
            steps: Vec::new(),
            before: vec![0],
            ranks,
            origin,
        }
    }

    fn push(&mut self, step: solve::Label, items: Vec<solve::PathItem>) {
        self.before.push(self.len() + items.len());
        self.steps.push((step, items));
    }

    pub fn len(&self) -> usize {
        self.before.last().copied().unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn make(&self, step: &solve::Label, seq: usize, it: &solve::PathItem) -> PathRow {
        PathRow {
            step: step.clone(),
            seq: seq as u64,
            rank: self.ranks[it.rank].clone(),
            kind: it.kind,
            name: it.name.clone(),
            start_us: us(it.start - self.origin),
            dur_us: us(it.dur),
        }
    }

    /// Row `i` (`i < len()`).
    pub fn row(&self, i: usize) -> PathRow {
        let k = self.before.partition_point(|&b| b <= i) - 1;
        let (step, items) = &self.steps[k];
        let seq = i - self.before[k];
        self.make(step, seq, &items[seq])
    }

    pub fn iter(&self) -> impl Iterator<Item = PathRow> + '_ {
        self.steps.iter().flat_map(move |(step, items)| {
            items
                .iter()
                .enumerate()
                .map(move |(seq, it)| self.make(step, seq, it))
        })
    }

    /// The rows of the step labelled `step`.
    pub fn step_rows(&self, step: &str) -> std::ops::Range<usize> {
        match self.steps.iter().position(|s| &*s.0 == step) {
            Some(k) => self.before[k]..self.before[k + 1],
            None => 0..0,
        }
    }
}

/// The part of a path row from its rank to where its start's value
/// begins, spelled once per rank, kind and name for one output (JSON,
/// CSV): a report's path has a million rows over a few thousand names,
/// and escaping each name, then writing each field, for every row took
/// most of the time of writing the path's table (docs/tracestat.md#scale).
struct RowMiddles<T> {
    texts: Vec<T>,
    /// Keyed by the name's address: the rows of a name share its one
    /// `Arc`, and every `Arc` here lives as long as the table.
    index: HashMap<(usize, u8, *const u8), usize>,
}

impl<T> Default for RowMiddles<T> {
    fn default() -> Self {
        RowMiddles {
            texts: Vec::new(),
            index: HashMap::default(),
        }
    }
}

impl<T> RowMiddles<T> {
    /// The middle of `it`'s row, as `spell` writes it the first time.
    fn of<E>(
        &mut self,
        it: &solve::PathItem,
        spell: impl FnOnce() -> Result<T, E>,
    ) -> Result<&T, E> {
        let key = (it.rank, it.kind as u8, it.name.as_ptr());
        let i = match self.index.get(&key) {
            Some(&i) => i,
            None => {
                self.texts.push(spell()?);
                self.index.insert(key, self.texts.len() - 1);
                self.texts.len() - 1
            }
        };
        Ok(&self.texts[i])
    }
}

/// `text` in JSON.
fn json_text<E: serde::ser::Error>(text: &str) -> Result<Vec<u8>, E> {
    serde_json::to_vec(text).map_err(E::custom)
}

impl PathTable {
    /// The rows of `critical_path.csv`, as [`PathRows::row`]'s values
    /// would be written (the file's columns; times in microseconds with
    /// three decimals, docs/formats.md#parquet-tables): each row its
    /// step's text, its number, its middle ([`RowMiddles`]) and its two
    /// times. The generic row of values took two thirds of the time of
    /// writing the file (docs/tracestat.md#scale).
    fn write_csv(&self, csv: &mut dyn CsvRecords) -> std::io::Result<()> {
        use unitrace_render::number::push_fixed_thousandths;
        use unitrace_render::table::field_text;
        let mut middles = RowMiddles::<String>::default();
        let mut digits = itoa::Buffer::new();
        for (step, items) in &self.steps {
            let head = field_text(step) + ",";
            for (seq, it) in items.iter().enumerate() {
                // `rank,kind,name,`: three fields and the start's comma.
                let middle = match middles.of(it, || {
                    let mut text = field_text(&self.ranks[it.rank]);
                    for part in [it.kind.name(), &it.name] {
                        text.push(',');
                        text.push_str(&field_text(part));
                    }
                    Ok::<_, std::convert::Infallible>(text + ",")
                }) {
                    Ok(text) => text,
                    Err(never) => match never {},
                };
                csv.record(&mut |f| {
                    let two = f.plain_fields(2);
                    two.push_str(&head);
                    two.push_str(digits.format(seq));
                    let four = f.plain_fields(4);
                    four.push_str(middle);
                    push_fixed_thousandths(four, it.start - self.origin);
                    push_fixed_thousandths(f.plain(), it.dur);
                })?;
            }
        }
        Ok(())
    }
}

/// How many bytes of the path's JSON rows are handed to the report's
/// writer at a time ([`JsonRow`]).
const JSON_ROWS_CHUNK: usize = 64 * 1024;

/// The rows, written as JSON text by hand with the fields of [`PathRow`]
/// in a row's layout ([`unitrace_render::json::RowText`]): each row its
/// step's part, its number, its middle ([`RowMiddles`]) and its two
/// times, and the rows handed to the writer many at a time. serde's call
/// per key and value was 85% of the time of writing the JSON report of a
/// generated rank; after it, writing each field took half the time of
/// the path's rows (docs/tracestat.md#scale). For the report's writer only
/// ([`unitrace_render::json::write_report`]; [`JsonRow`]).
impl Serialize for PathTable {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut middles = RowMiddles::<Vec<u8>>::default();
        let mut digits = itoa::Buffer::new();
        let mut rows = Vec::with_capacity(JSON_ROWS_CHUNK + 4096);
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for (step, items) in &self.steps {
            let head = [
                &br#"{"step": "#[..],
                &json_text::<S::Error>(step)?,
                br#", "seq": "#,
            ]
            .concat();
            for (i, it) in items.iter().enumerate() {
                let middle = middles.of(it, || {
                    let kind = serde_json::to_vec(&it.kind).map_err(S::Error::custom)?;
                    Ok([
                        &br#", "rank": "#[..],
                        &json_text::<S::Error>(&self.ranks[it.rank])?,
                        br#", "kind": "#,
                        &kind,
                        br#", "name": "#,
                        &json_text::<S::Error>(&it.name)?,
                        br#", "start_us": "#,
                    ]
                    .concat())
                })?;
                if !rows.is_empty() {
                    rows.push(b'\n');
                }
                rows.extend_from_slice(&head);
                rows.extend_from_slice(digits.format(i).as_bytes());
                rows.extend_from_slice(middle);
                // `us` from the integer (`push_thousandths`).
                push_thousandths(&mut rows, it.start - self.origin);
                rows.extend_from_slice(br#", "dur_us": "#);
                push_thousandths(&mut rows, it.dur);
                rows.push(b'}');
                if rows.len() >= JSON_ROWS_CHUNK {
                    seq.serialize_element(&JsonRow(&rows))?;
                    rows.clear();
                }
            }
        }
        if !rows.is_empty() {
            seq.serialize_element(&JsonRow(&rows))?;
        }
        seq.end()
    }
}

/// One step: its length, where its path ends, its path per kind.
#[derive(Debug, Clone, Serialize)]
pub struct StepRow {
    pub step: String,
    pub start_us: f64,
    pub dur_us: f64,
    /// What the step adds to the run: its end less the end of the step
    /// numbered before (across ranks, each the last rank's); when that
    /// step is not there, its end less the last rank's start of it. The
    /// slowest step is the one that adds
    /// the most: where ranks run apart, a step's length also holds the
    /// step before on the ranks still in it (docs/tracestat.md#critical-path).
    pub adds_us: f64,
    /// Whether `adds_us` is counted from the step before's end.
    #[serde(skip)]
    pub after_before: bool,
    pub end_rank: String,
    /// Ranks the path goes through, and how often it changes rank.
    pub ranks_on_path: u64,
    pub rank_changes: u64,
    /// Path time per kind, in [`Kind::ALL`] order.
    pub kinds_us: Vec<(Kind, f64)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct KindRow {
    pub kind: Kind,
    pub items: u64,
    pub dur_us: f64,
    pub pct: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct NameRow {
    pub kind: Kind,
    pub name: String,
    /// Stretches of the paths with this name, and in how many steps.
    pub items: u64,
    pub steps: u64,
    pub dur_us: f64,
    pub pct: f64,
}

/// One step replayed under one rule (`what_if.csv`).
#[derive(Debug, Clone, Serialize)]
pub struct WhatIfRow {
    pub rule: String,
    /// The step, as in `critical_path_steps`.
    pub step: String,
    pub dur_us: f64,
    pub what_if_dur_us: f64,
    pub change_pct: f64,
}

/// `critical_path_steps` as the report's writer takes it: each row as
/// [`StepRow`]'s derived `Serialize` writes it, made as text
/// ([`unitrace_render::json::serialize_rows`]).
fn step_rows_json<S: serde::Serializer>(rows: &[StepRow], s: S) -> Result<S::Ok, S::Error> {
    use unitrace_render::json::push_f64;
    let kinds: Vec<Vec<u8>> = Kind::ALL
        .iter()
        .map(|k| serde_json::to_vec(k).map_err(S::Error::custom))
        .collect::<Result<_, _>>()?;
    let mut list = Vec::new();
    unitrace_render::json::serialize_rows(s, rows, |t, r| {
        t.str("step", &r.step);
        t.f64("start_us", r.start_us);
        t.f64("dur_us", r.dur_us);
        t.f64("adds_us", r.adds_us);
        t.str("end_rank", &r.end_rank);
        t.u64("ranks_on_path", r.ranks_on_path);
        t.u64("rank_changes", r.rank_changes);
        // `[["compute", 1.5], ...]`, as a row's lists are laid out.
        list.clear();
        list.push(b'[');
        for (i, &(kind, us)) in r.kinds_us.iter().enumerate() {
            if i > 0 {
                list.extend_from_slice(b", ");
            }
            list.push(b'[');
            list.extend_from_slice(&kinds[kind as usize]);
            list.extend_from_slice(b", ");
            push_f64(&mut list, us);
            list.push(b']');
        }
        list.push(b']');
        t.json("kinds_us", &list);
    })
}

/// `what_if` as the report's writer takes it (see [`step_rows_json`]).
fn what_if_rows_json<S: serde::Serializer>(rows: &[WhatIfRow], s: S) -> Result<S::Ok, S::Error> {
    unitrace_render::json::serialize_rows(s, rows, |t, r| {
        t.str("rule", &r.rule);
        t.str("step", &r.step);
        t.f64("dur_us", r.dur_us);
        t.f64("what_if_dur_us", r.what_if_dur_us);
        t.f64("change_pct", r.change_pct);
    })
}

/// One rule over all the steps (`what_if_totals.csv`): a table of its own,
/// not a row of `what_if`, so that `what_if`'s `step` holds step ids only
/// and its sums are not counted twice (docs/tracestat.md#what-if).
#[derive(Debug, Clone, Serialize)]
pub struct WhatIfTotalRow {
    pub rule: String,
    pub steps: u64,
    pub dur_us: f64,
    pub what_if_dur_us: f64,
    pub change_pct: f64,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct CriticalPathOut {
    /// Shared with the table of its file, made row by row from it.
    #[serde(serialize_with = "step_rows_json")]
    pub critical_path_steps: Arc<Vec<StepRow>>,
    /// Shared with the table of its file, made row by row from it.
    pub critical_path: Arc<PathTable>,
    pub critical_path_kinds: Vec<KindRow>,
    pub critical_path_names: Vec<NameRow>,
    /// Shared with the table of its file, made row by row from it.
    #[serde(serialize_with = "what_if_rows_json")]
    pub what_if: Arc<Vec<WhatIfRow>>,
    pub what_if_totals: Vec<WhatIfTotalRow>,
    /// The slowest step (index into `critical_path_steps`).
    pub slowest_step: Option<String>,
    /// The user's rules that can change nothing: a kernel rule that no
    /// kernel of any rank matches, `rank:N` of a rank not in the run
    /// (a typo would otherwise read as "no gain"); never a table.
    #[serde(skip)]
    pub unmatched_rules: Vec<String>,
    /// The slowest step's path for the page's Gantt chart: rank labels and
    /// `(rank, kind, name, start_us since the step's start, dur_us)`.
    #[serde(skip)]
    pub gantt: Option<(Vec<String>, Vec<GanttBar>)>,
    /// The replays the findings estimate their savings with, where every
    /// rank's graph carries the implicit rules' slots
    /// (docs/findings.md#savings); never a table.
    #[serde(skip)]
    pub replays: Option<ImplicitReplays>,
    /// Why the spilled steps could not be read back, if so
    /// (docs/tracestat.md#memory): the run fails with it, no report.
    #[serde(skip)]
    pub spill_error: Option<String>,
}

/// A bar of the Gantt chart: `(rank index, kind (its place in
/// [`Kind::ALL`]), name, start us since the step's start, length us)`.
pub type GanttBar = (usize, usize, String, f64, f64);

pub struct CriticalPath;

impl Analyzer for CriticalPath {
    type Rank = RankPath;
    type Output = CriticalPathOut;

    fn observe(m: &RankModel<'_>, o: &RankOptions) -> RankPath {
        if o.no_critical_path {
            return RankPath::default();
        }
        let mut rules = rules::parse_rules(&o.what_if);
        rules.extend(implicit_rules(m.trace.rank));
        let mut path = graph::observe(m, &rules, o.annotate);
        // Kept out of memory until the solve (docs/tracestat.md#memory).
        path.spill_steps();
        path
    }

    fn part(rank: &RankSummary) -> &RankPath {
        &rank.parts.critical_path
    }

    fn finish(ranks: &Ranks<'_>, done: &Finished) -> CriticalPathOut {
        if !solvable(ranks) {
            return CriticalPathOut::default();
        }
        let off = offsets(ranks, done);
        let off = &off[..];
        let rules = rules::parse_rules(&ranks.rank_options.what_if);
        // The user's rules, then the implicit ones of the findings.
        let mut all_rules = rules.clone();
        all_rules.extend(implicit_rules(None));
        let mut solver = solver(ranks, off);
        let u = rules.len();
        let implicit = has_implicit_slots(&solver, u);
        let steps = solver.steps();
        // Per step: the end of the time the steps before it cover, from
        // which its path counts in the tables over all steps.
        let mut covered_to = Ns::MIN;
        let covered_before: Vec<Ns> = steps
            .iter()
            .map(|(_, parts)| {
                let before = covered_to;
                covered_to = covered_to.max(step_window(&solver, parts).1);
                before
            })
            .collect();
        // The replays go in step order: a step takes the replayed
        // arrivals of the collectives of the steps before it. Per rule:
        // the user's, then the implicit comm=0 and launch=0, whose
        // savings the findings read.
        let slots = 2 + u + if implicit { 2 } else { 0 };
        let replays: Vec<(usize, &rules::Rule)> = (2..slots)
            .map(|slot| (slot, &all_rules[slot - 2]))
            .collect();
        let solved = solve_in_windows(&mut solver, &steps, Some(&covered_before), &replays);
        let (mut paths, windows) = match solved {
            Ok(solved) => solved,
            Err(e) => {
                return CriticalPathOut {
                    spill_error: Some(e.to_string()),
                    ..Default::default()
                }
            }
        };
        let mut saved = [0 as Ns; 2];
        if implicit {
            // Over the run: the time the steps cover, recorded less
            // replayed (docs/findings.md#savings).
            let recorded = covered(paths.iter().map(|p| (p.start, p.end)));
            for (i, s) in saved.iter_mut().enumerate() {
                *s = recorded - covered(windows.iter().map(|w| w[u + i]));
            }
        }
        for (p, w) in paths.iter_mut().zip(windows) {
            p.what_if = w[..u].to_vec();
        }
        let origin = aligned_origin(ranks, off);
        let mut out = output(&mut paths, &ranks.labels, &rules, origin);
        out.unmatched_rules = unmatched_rules(ranks, &rules);
        out.replays = implicit.then(|| ImplicitReplays {
            comm: saved[0].max(0),
            launch: saved[1].max(0),
        });
        out
    }

    fn sections(r: &Report, _: &Screen) -> Vec<Section> {
        sections(&r.out.critical_path, r.options.no_critical_path)
    }
}

fn operations(ranks: &Ranks<'_>) -> Operations {
    let mut op_of = HashMap::default();
    let mut ops = Vec::new();
    for list in group_calls(ranks).into_values() {
        for calls in list {
            if calls.len() < 2 {
                continue;
            }
            for &c in &calls {
                op_of.insert(c, ops.len());
            }
            ops.push(calls);
        }
    }
    (op_of, ops)
}

fn step_label(id: Option<i64>) -> String {
    id.map_or_else(|| "all".to_string(), |i| i.to_string())
}

/// A name's totals over the paths (`critical_path_names`).
#[derive(Default)]
struct NameTotal {
    items: u64,
    steps: u64,
    last_step: Option<usize>,
    dur: Ns,
}

/// The tables of the result.
fn output(
    paths: &mut [StepPath],
    labels: &[String],
    rules: &[rules::Rule],
    origin: Ns,
) -> CriticalPathOut {
    let mut out = CriticalPathOut::default();
    // A row per step: sized exactly, as it is a large table of a run of
    // many steps (docs/tracestat.md#scale).
    let mut step_rows: Vec<StepRow> = Vec::with_capacity(paths.len());
    let mut what_if_rows: Vec<WhatIfRow> = Vec::with_capacity(paths.len() * rules.len());
    let mut kinds: BTreeMap<Kind, (u64, Ns)> = BTreeMap::new();
    // Per kind and name: stretches, steps (counted once each: the steps
    // come in order, so the last one seen is enough), time. Hashed, not
    // ordered: the rows are sorted below by a total order.
    let mut names: HashMap<(Kind, solve::Label), NameTotal> = HashMap::default();
    let rank_labels: Vec<solve::Label> = labels.iter().map(|l| l.as_str().into()).collect();
    let mut total: Ns = 0;
    // Ranks on the step's path, as flags reset after each step.
    let mut on_path = vec![false; labels.len()];
    let mut on_path_list: Vec<usize> = Vec::new();
    for (si, p) in paths.iter().enumerate() {
        let step = step_label(p.id);
        let mut per_kind = [0 as Ns; Kind::ALL.len()];
        let mut changes = 0;
        for ((kind, _), &(_, dur)) in &p.totals {
            per_kind[*kind as usize] += dur;
        }
        // Over all steps, each moment once: a step adds the part of its
        // path after the steps before it ended.
        for ((kind, name), &(count, dur)) in p.own_totals.as_ref().unwrap_or(&p.totals) {
            let k = kinds.entry(*kind).or_default();
            k.0 += count;
            k.1 += dur;
            let nm = names.entry((*kind, name.clone())).or_default();
            nm.items += count;
            if nm.last_step != Some(si) {
                nm.last_step = Some(si);
                nm.steps += 1;
            }
            nm.dur += dur;
            total += dur;
        }
        for (seq, it) in p.items.iter().enumerate() {
            if seq > 0 && p.items[seq - 1].rank != it.rank {
                changes += 1;
            }
            if let Some(seen) = on_path.get_mut(it.rank) {
                if !*seen {
                    *seen = true;
                    on_path_list.push(it.rank);
                }
            }
        }
        let after = si.checked_sub(1).map(|b| &paths[b]).filter(|b| {
            b.id.zip(p.id)
                .is_some_and(|(b, s)| b.checked_add(1) == Some(s))
        });
        // Without the step before: from the last rank's start (not the
        // ranks' spread of starts, which the step did not make).
        let from = after.map_or(p.last_start, |b| b.end);
        let adds = p.end - from.min(p.end).max(p.start.min(p.end));
        step_rows.push(StepRow {
            step: step.clone(),
            start_us: us(p.start - origin),
            dur_us: us(p.end - p.start),
            adds_us: us(adds),
            after_before: after.is_some(),
            end_rank: labels[p.end_rank].clone(),
            ranks_on_path: on_path_list.len() as u64,
            rank_changes: changes,
            kinds_us: Kind::ALL
                .iter()
                .map(|k| (*k, us(per_kind[*k as usize])))
                .collect(),
        });
        for r in on_path_list.drain(..) {
            on_path[r] = false;
        }
        for (i, r) in rules.iter().enumerate() {
            let (s, e) = p.what_if[i];
            what_if_rows.push(what_if_row(&r.text, &step, p.end - p.start, e - s));
        }
    }
    out.critical_path_steps = Arc::new(step_rows);
    out.what_if = Arc::new(what_if_rows);
    for (i, r) in rules.iter().enumerate() {
        // The time the steps cover, each moment once: steps of ranks
        // that overlap (a rank still in step n while another began n + 1)
        // are not counted twice, and a step that begins earlier because
        // the one before ended earlier counts the gain once
        // (docs/tracestat.md#what-if).
        let before = covered(paths.iter().map(|p| (p.start, p.end)));
        let after = covered(paths.iter().map(|p| p.what_if[i]));
        out.what_if_totals.push(WhatIfTotalRow {
            rule: r.text.clone(),
            steps: paths.len() as u64,
            dur_us: us(before),
            what_if_dur_us: us(after),
            change_pct: super::vs(after as f64, before as f64),
        });
    }
    out.critical_path_kinds = kinds
        .into_iter()
        .map(|(kind, (items, d))| KindRow {
            kind,
            items,
            dur_us: us(d),
            pct: pct(d as f64, total as f64),
        })
        .collect();
    let mut by_name: Vec<NameRow> = names
        .into_iter()
        .map(|((kind, name), t)| NameRow {
            kind,
            name: name.to_string(),
            items: t.items,
            steps: t.steps,
            dur_us: us(t.dur),
            pct: pct(t.dur as f64, total as f64),
        })
        .collect();
    by_name.sort_by(|a, b| {
        b.dur_us
            .total_cmp(&a.dur_us)
            .then_with(|| (a.kind, &a.name).cmp(&(b.kind, &b.name)))
    });
    out.critical_path_names = by_name;
    slowest_step(&mut out, paths, labels);
    // The stretches move into the table of rows.
    let mut table = PathTable::new(rank_labels, origin);
    for p in paths.iter_mut() {
        table.push(
            step_label(p.id).as_str().into(),
            std::mem::take(&mut p.items),
        );
    }
    out.critical_path = Arc::new(table);
    out
}

/// The step that adds the most to the run (docs/tracestat.md#critical-path)
/// and the Gantt chart of its path.
fn slowest_step(out: &mut CriticalPathOut, paths: &[StepPath], labels: &[String]) {
    let adds = |i: usize| out.critical_path_steps[i].adds_us;
    let slowest = (0..paths.len()).max_by(|&a, &b| adds(a).total_cmp(&adds(b)).then(b.cmp(&a)));
    let Some(p) = slowest.map(|i| &paths[i]) else {
        return;
    };
    out.slowest_step = Some(step_label(p.id));
    let items = solve::join(p.items.clone(), GANTT_BARS)
        .into_iter()
        .map(|it| {
            let kind = Kind::ALL.iter().position(|k| *k == it.kind).unwrap_or(6);
            (
                it.rank,
                kind,
                it.name.to_string(),
                us(it.start - p.start),
                us(it.dur),
            )
        })
        .collect();
    out.gantt = Some((labels.to_vec(), items));
}

fn what_if_row(rule: &str, step: &str, before: Ns, after: Ns) -> WhatIfRow {
    WhatIfRow {
        rule: rule.to_string(),
        step: step.to_string(),
        dur_us: us(before),
        what_if_dur_us: us(after),
        change_pct: super::vs(after as f64, before as f64),
    }
}

/// The slowest step's longest stretch, the one place to look first: its
/// rank, kind, name, length and share of the step (the first of equal
/// ones).
fn longest_stretch(out: &CriticalPathOut, step: &str, step_us: f64) -> Option<String> {
    let rows = &out.critical_path;
    let row = rows.step_rows(step).map(|i| rows.row(i)).reduce(|a, b| {
        if b.dur_us > a.dur_us {
            b
        } else {
            a
        }
    })?;
    Some(format!(
        "Its longest stretch: rank {}, {}, {}: {:.3} ms ({:.1}% of the step)",
        row.rank,
        row.kind.name(),
        row.name,
        row.dur_us / 1000.0,
        pct(row.dur_us, step_us)
    ))
}

/// `, A ms after step N-1 ended` where the step adds less than its length
/// (ranks still in the step before when it began), else nothing.
fn after_step_before(row: &StepRow) -> String {
    let before = row.step.parse::<i64>().ok().and_then(|s| s.checked_sub(1));
    match before {
        Some(b) if row.after_before && row.adds_us < row.dur_us => {
            format!(", {:.3} ms after step {b} ended", row.adds_us / 1000.0)
        }
        _ => String::new(),
    }
}

/// The report's first lines' word on the path (docs/tracestat.md#console-report):
/// the slowest step (the one that adds the most to the run) against the
/// median step and its longest stretch; `None` without steps.
pub fn headline(out: &CriticalPathOut, median_step_us: Option<f64>) -> Option<String> {
    let step = out.slowest_step.as_deref().filter(|s| *s != "all")?;
    let row = out.critical_path_steps.iter().find(|r| r.step == step)?;
    let median = median_step_us.map_or(String::new(), |m| {
        format!(" (the median step {:.3} ms)", m / 1000.0)
    });
    let after = after_step_before(row);
    let mut line = format!("{step}, {:.3} ms", row.adds_us / 1000.0);
    if !after.is_empty() {
        line = format!("{line} after step {} ended", after_step_number(step));
    }
    line.push_str(&median);
    if let Some(longest) = longest_stretch(out, step, row.dur_us) {
        let longest = longest.replacen("Its longest stretch: ", "", 1);
        let longest = if row.adds_us < row.dur_us {
            longest.replacen(
                "of the step)",
                &format!("of its path, {:.3} ms)", row.dur_us / 1000.0),
                1,
            )
        } else {
            longest
        };
        line.push_str(&format!("; its longest stretch: {longest}"));
    }
    Some(line)
}

/// The number of the step before `step` (`step` is a number: the headline
/// names only numbered steps).
fn after_step_number(step: &str) -> String {
    step.parse::<i64>()
        .ok()
        .and_then(|s| s.checked_sub(1))
        .map_or_else(|| "before".to_string(), |b| b.to_string())
}

fn sections(out: &CriticalPathOut, left_out: bool) -> Vec<Section> {
    let mut s = Section::new("critical-path", "Critical path (per step, across ranks)");
    if left_out {
        s.lines
            .push("(not computed: --no-critical-path)".to_string());
    } else if out.critical_path_steps.is_empty() {
        s.lines.push("(no work to follow)".to_string());
    }
    if let Some(step) = &out.slowest_step {
        if let Some(row) = out.critical_path_steps.iter().find(|r| &r.step == step) {
            let parts: Vec<String> = row
                .kinds_us
                .iter()
                .filter(|(_, v)| *v > 0.0)
                .map(|(k, v)| format!("{} {:.1}%", k.name(), pct(*v, row.dur_us)))
                .collect();
            let which = if step == "all" {
                "The run".to_string()
            } else {
                format!("Slowest step {step}")
            };
            s.lines.push(format!(
                "{which}: {:.3} ms{}, ends on rank {}, path through {} rank(s): {}",
                row.dur_us / 1000.0,
                after_step_before(row),
                row.end_rank,
                row.ranks_on_path,
                parts.join(", ")
            ));
            if let Some(line) = longest_stretch(out, step, row.dur_us) {
                s.lines.push(line);
            }
        }
    }
    s.tables.push(steps_table(out));
    s.tables.push(kinds_table(out));
    s.tables.push(names_table(out));
    s.tables.push(items_table(out));
    if left_out {
        // Its files are still written (empty), as every run's; the screens
        // show the line alone.
        for t in &mut s.tables {
            t.files_only = true;
            t.notes.clear();
        }
    }
    if let Some((labels, items)) = &out.gantt {
        if !items.is_empty() {
            s.figures.push(Figure {
                svg: Some(crate::figures::path_gantt_svg(labels, items)),
                text: None,
                caption: format!(
                    "The critical path of step {} over the ranks: each bar a stretch of the path, coloured by kind; a vertical line where it crosses to another rank.",
                    out.slowest_step.as_deref().unwrap_or("all")
                ),
            });
        }
    }
    let mut sections = vec![s];
    if !out.what_if_totals.is_empty() {
        let mut w = Section::new("what-if", "What if (steps replayed with changed durations)");
        w.lines.push(
            "A model: the recorded dependencies with changed durations, no contention (docs/tracestat.md#what-if).".to_string(),
        );
        for rule in &out.unmatched_rules {
            w.lines.push(format!("{rule}: {}", UNMATCHED));
        }
        w.tables.push(what_if_totals_table(out));
        w.tables.push(what_if_table(out));
        sections.push(w);
    }
    sections
}

fn steps_table(out: &CriticalPathOut) -> Table {
    let mut cols = vec![
        Column::new("step", "step", Unit::Text),
        Column::new("start_us", "start", Unit::Us).files_only(),
        Column::new("dur_us", "length", Unit::Us),
        Column::new("adds_us", "adds", Unit::Us),
        Column::new("end_rank", "ends on", Unit::Text),
        Column::new("ranks_on_path", "ranks", Unit::Count),
        Column::new("rank_changes", "changes", Unit::Count).files_only(),
    ];
    for k in Kind::ALL {
        let name = format!("{}_us", k.name().replace('-', "_"));
        cols.push(Column::new(name, k.name(), Unit::Us));
    }
    let mut t = Table::new("critical_path_steps", "Steps and their path by kind", cols);
    let n = out.critical_path_steps.len();
    // The steps that add the most, in table order.
    let d = |i: usize| out.critical_path_steps[i].adds_us;
    let shown = first_places(n, TOP_STEPS, |a, b| d(b).total_cmp(&d(a)).then(a.cmp(&b)));
    // Only the rows shown are values; the file's (a row per step: tens
    // of thousands) are made while it is written (docs/tracestat.md#scale).
    shown_rows(&mut t, step_rows(&out.critical_path_steps), &shown);
    if n > TOP_STEPS {
        let note = format!("({TOP_STEPS} slowest of {n} steps shown; the files hold all)");
        t.show_only((0..shown.len()).collect(), note);
    }
    t
}

/// Texts that many rows repeat (a rank's label, a rule), one value each,
/// shared by the rows' values.
struct SharedTexts(HashMap<String, Value>);

impl SharedTexts {
    fn of<'a>(texts: impl Iterator<Item = &'a str>) -> SharedTexts {
        let mut values = HashMap::default();
        for t in texts {
            if !values.contains_key(t) {
                values.insert(t.to_string(), Value::from(t));
            }
        }
        SharedTexts(values)
    }

    fn value(&self, text: &str) -> Value {
        (self.0.get(text).cloned()).unwrap_or_else(|| Value::from(text))
    }
}

/// The rows `shown` of `source` as `t`'s values, and `source` as the
/// rows of its files.
fn shown_rows(t: &mut Table, source: impl RowSource + 'static, shown: &[usize]) {
    let mut row = Vec::with_capacity(t.columns.len());
    for &i in shown {
        source.row(i, &mut row);
        t.push(std::mem::take(&mut row));
    }
    t.file_rows = Some(FileRows(Arc::new(source)));
}

/// A table's rows made one at a time for its file: `fill` makes a row's
/// values, the texts its rows repeat shared ([`SharedTexts`]).
struct RowsOf<T> {
    rows: Arc<Vec<T>>,
    texts: SharedTexts,
    fill: fn(&T, &SharedTexts, &mut Vec<Value>),
}

impl<T: Send + Sync> RowSource for RowsOf<T> {
    fn count(&self) -> usize {
        self.rows.len()
    }

    fn row(&self, i: usize, out: &mut Vec<Value>) {
        out.clear();
        if let Some(r) = self.rows.get(i) {
            (self.fill)(r, &self.texts, out);
        }
    }
}

/// The rows of `critical_path_steps.csv`, a rank's label shared.
fn step_rows(rows: &Arc<Vec<StepRow>>) -> RowsOf<StepRow> {
    RowsOf {
        texts: SharedTexts::of(rows.iter().map(|r| r.end_rank.as_str())),
        rows: Arc::clone(rows),
        fill: |r, ranks, out| {
            out.extend([
                Value::from(&*r.step),
                r.start_us.into(),
                r.dur_us.into(),
                r.adds_us.into(),
                ranks.value(&r.end_rank),
                r.ranks_on_path.into(),
                r.rank_changes.into(),
            ]);
            out.extend(r.kinds_us.iter().map(|(_, v)| Value::from(*v)));
        },
    }
}

fn kinds_table(out: &CriticalPathOut) -> Table {
    let mut t = Table::new(
        "critical_path_kinds",
        "On the path, per kind (all steps)",
        vec![
            Column::new("kind", "kind", Unit::Text),
            Column::new("items", "stretches", Unit::Count),
            Column::new("dur_us", "time", Unit::Us),
            Column::new("pct", "share", Unit::Pct),
        ],
    );
    for r in &out.critical_path_kinds {
        t.push(vec![
            r.kind.name().into(),
            r.items.into(),
            r.dur_us.into(),
            r.pct.into(),
        ]);
    }
    if !t.rows.is_empty() {
        t.notes.push(ALL_STEPS_NOTE.to_string());
    }
    t
}

/// What the tables over all steps count (docs/tracestat.md#critical-path).
const ALL_STEPS_NOTE: &str =
    "(all steps: each moment once, a step counting its path after the steps before it ended)";

fn names_table(out: &CriticalPathOut) -> Table {
    let mut t = Table::new(
        "critical_path_names",
        "On the path, per name (all steps)",
        vec![
            Column::new("kind", "kind", Unit::Text).files_only(),
            Column::new("name", "name", Unit::Text).files_only(),
            Column::new("items", "times", Unit::Count),
            Column::new("steps", "steps", Unit::Count),
            Column::new("dur_us", "time", Unit::Us),
            Column::new("pct", "share", Unit::Pct),
            // On screen the long name last, so that the numbers stay in
            // view (as the kernels table; docs/tracestat.md#critical-path).
            Column::new("kind_shown", "kind", Unit::Text).screen_only(),
            Column::new("name_shown", "name", Unit::Text)
                .screen_only()
                .long_names(),
        ],
    );
    for r in &out.critical_path_names {
        t.push(vec![
            r.kind.name().into(),
            Value::from(&*r.name),
            r.items.into(),
            r.steps.into(),
            r.dur_us.into(),
            r.pct.into(),
            r.kind.name().into(),
            Value::from(&*r.name),
        ]);
    }
    if t.rows.len() > TOP_NAMES {
        let n = t.rows.len();
        t.show_only(
            (0..TOP_NAMES).collect(),
            format!("({TOP_NAMES} longest of {n} names shown; the files hold all)"),
        );
    }
    t
}

fn items_table(out: &CriticalPathOut) -> Table {
    let mut t = Table::new(
        "critical_path",
        "The slowest step's path (longest stretches, in order)",
        vec![
            Column::new("step", "step", Unit::Text),
            Column::new("seq", "seq", Unit::Count),
            Column::new("rank", "rank", Unit::Text),
            Column::new("kind", "kind", Unit::Text),
            Column::new("name", "name", Unit::Text).files_only(),
            Column::new("start_us", "start", Unit::Us),
            Column::new("dur_us", "length", Unit::Us),
            // On screen the long name last (the file's columns are fixed:
            // docs/tracestat.md#critical-path).
            Column::new("name_shown", "name", Unit::Text)
                .screen_only()
                .long_names(),
        ],
    );
    let slowest: Vec<usize> = match out.slowest_step.as_deref() {
        Some(step) => out.critical_path.step_rows(step).collect(),
        None => Vec::new(),
    };
    let all = slowest.len();
    let mut shown = slowest;
    if shown.len() > TOP_ITEMS {
        // The step's rows are in order: places compare as rows do.
        let d = |k: usize| out.critical_path.row(shown[k]).dur_us;
        let places = first_places(shown.len(), TOP_ITEMS, |a, b| {
            d(b).total_cmp(&d(a)).then(a.cmp(&b))
        });
        shown = places.into_iter().map(|k| shown[k]).collect();
    }
    // Only the rows shown are values; the file's (a row per stretch of
    // every step: hundreds of thousands) are made while it is written
    // (docs/tracestat.md#scale).
    let source = PathRows::new(Arc::clone(&out.critical_path));
    let mut row = Vec::with_capacity(t.columns.len());
    for &i in &shown {
        source.row(i, &mut row);
        let shown_name = row.len() - 1;
        row[shown_name] = Value::from(&out.critical_path.row(i).name);
        t.push(std::mem::take(&mut row));
    }
    t.file_rows = Some(FileRows(Arc::new(source)));
    let note = format!(
        "({} of the slowest step's {all} stretches shown; the files hold every step's)",
        shown.len()
    );
    let shown = (0..t.rows.len()).collect();
    t.show_only(shown, note);
    t
}

/// The rows of `critical_path.csv`, made one at a time from the path.
struct PathRows {
    rows: Arc<PathTable>,
    /// The kinds' names, shared by every row.
    kinds: Vec<Value>,
}

impl PathRows {
    fn new(rows: Arc<PathTable>) -> PathRows {
        let kinds = Kind::ALL.iter().map(|k| k.name().into()).collect();
        PathRows { rows, kinds }
    }
}

impl RowSource for PathRows {
    fn count(&self) -> usize {
        self.rows.len()
    }

    fn row(&self, i: usize, out: &mut Vec<Value>) {
        let r = self.rows.row(i);
        out.clear();
        // The row's shared texts moved, not shared once more.
        out.extend([
            Value::from(r.step),
            r.seq.into(),
            Value::from(r.rank),
            self.kinds[r.kind as usize].clone(),
            Value::from(r.name),
            r.start_us.into(),
            r.dur_us.into(),
            // The screen's name column: filled in for the rows shown only.
            Value::Empty,
        ]);
    }

    fn write_csv(&self, csv: &mut dyn CsvRecords) -> Option<std::io::Result<()>> {
        Some(self.rows.write_csv(csv))
    }
}

/// What is said of a rule in [`CriticalPathOut::unmatched_rules`].
pub const UNMATCHED: &str = "matches nothing in the run: its steps are unchanged";

/// The user's rules that can change nothing in this run (see
/// [`CriticalPathOut::unmatched_rules`]), as written.
fn unmatched_rules(ranks: &Ranks<'_>, rules: &[rules::Rule]) -> Vec<String> {
    use super::kernels::Kernels;
    rules
        .iter()
        .filter(|r| match r.target {
            rules::Target::Kernel(_) => !ranks.ranks.iter().any(|rank| {
                Kernels::part(rank)
                    .iter()
                    .any(|k| r.matches_kernel(&k.name))
            }),
            rules::Target::RankMedian(n) => !ranks.ranks.iter().any(|rank| rank.rank == Some(n)),
            _ => false,
        })
        .map(|r| r.text.clone())
        .collect()
}

fn what_if_totals_table(out: &CriticalPathOut) -> Table {
    let mut t = Table::new(
        "what_if_totals",
        "Over all steps",
        vec![
            Column::new("rule", "rule", Unit::Text),
            Column::new("steps", "steps", Unit::Count),
            Column::new("dur_us", "length", Unit::Us),
            Column::new("what_if_dur_us", "what if", Unit::Us),
            Column::new("change_pct", "change", Unit::PctChange),
        ],
    );
    for r in &out.what_if_totals {
        t.push(vec![
            r.rule.clone().into(),
            r.steps.into(),
            r.dur_us.into(),
            r.what_if_dur_us.into(),
            r.change_pct.into(),
        ]);
    }
    t.notes.push(
        "(length: the time the steps cover, each moment once; the steps replayed in order, each taking over what the one before changed)"
            .to_string(),
    );
    t
}

fn what_if_table(out: &CriticalPathOut) -> Table {
    let mut t = Table::new(
        "what_if",
        "Per step",
        vec![
            Column::new("rule", "rule", Unit::Text),
            Column::new("step", "step", Unit::Text),
            Column::new("dur_us", "length", Unit::Us),
            Column::new("what_if_dur_us", "what if", Unit::Us),
            Column::new("change_pct", "change", Unit::PctChange),
        ],
    );
    let n = out.what_if.len();
    // The steps a rule shortens most, in table order.
    let saved = |i: usize| out.what_if[i].dur_us - out.what_if[i].what_if_dur_us;
    let shown = first_places(n, TOP_STEPS, |a, b| {
        saved(b).total_cmp(&saved(a)).then(a.cmp(&b))
    });
    // Only the rows shown are values ([`steps_table`]).
    shown_rows(&mut t, what_if_rows(&out.what_if), &shown);
    if n > TOP_STEPS {
        t.show_only(
            (0..shown.len()).collect(),
            format!(
                "({TOP_STEPS} of {n} rows shown: the steps shortened most; the files hold every step)"
            ),
        );
    }
    t
}

/// The rows of `what_if.csv`, a rule's text shared.
fn what_if_rows(rows: &Arc<Vec<WhatIfRow>>) -> RowsOf<WhatIfRow> {
    RowsOf {
        texts: SharedTexts::of(rows.iter().map(|r| r.rule.as_str())),
        rows: Arc::clone(rows),
        fill: |r, rules, out| {
            out.extend([
                rules.value(&r.rule),
                Value::from(&*r.step),
                r.dur_us.into(),
                r.what_if_dur_us.into(),
                r.change_pct.into(),
            ]);
        },
    }
}

/// How many [`implicit_rules`] there are.
const IMPLICIT_RULES: usize = 3;

/// The most `--what-if` rules a run takes: with the implicit ones, as many
/// as a replay carries ([`rules::MOST_RULES`]).
pub const MOST_WHAT_IF: usize = rules::MOST_RULES - IMPLICIT_RULES;

/// The what-if rules every rank's graph keeps a slot for besides the
/// user's, after them, for the findings' savings (docs/findings.md#savings):
/// `comm=0`, `launch=0`, and the rank's own kernels taken away (the slot
/// `rank:N=median` needs on rank N, so that any rank can be replayed at
/// the median after the fact). Never in `what_if.csv`.
fn implicit_rules(rank: Option<u32>) -> Vec<rules::Rule> {
    let own = rules::Rule {
        text: "rank:SELF=median".to_string(),
        // A rank without an id is no `rank:N` target: no rank matches.
        target: rules::Target::RankMedian(rank.unwrap_or(u32::MAX)),
        change: rules::Change::Scale(1.0),
    };
    let mut out: Vec<rules::Rule> = ["comm=0", "launch=0"]
        .iter()
        .filter_map(|t| rules::parse_rule(t).ok())
        .collect();
    out.push(own);
    out
}

/// The savings of the implicit `comm=0` and `launch=0` over the run, ns
/// (docs/findings.md#savings).
#[derive(Debug, Clone, Default)]
pub struct ImplicitReplays {
    pub comm: Ns,
    pub launch: Ns,
}

/// Whether every rank's graph carries the implicit rules' slots after the
/// `user` rules', and some step has a replay (not so in a partial of an
/// older format, or without any step).
fn has_implicit_slots(solver: &Solver<'_>, user: usize) -> bool {
    let width = 2 + user + IMPLICIT_RULES;
    let mut any = false;
    for p in &solver.paths {
        // The host range ends are replayed with the same slots (a partial
        // edited to hold fewer would be read out of bounds).
        let (fewest, some) = p.lens_widths();
        if fewest < width {
            return false;
        }
        any |= some;
    }
    any
}

/// Sinks per thread in a batch of steps of [`replay_in_order`].
const REPLAY_BATCH_SINKS: usize = 4096;
/// Sinks of the steps whose spilled bodies are loaded at once, at least
/// (docs/tracestat.md#memory): about 13 MB.
const WINDOW_SINKS: usize = 1 << 15;

/// Each step's path, and its `(start, end)` under each replay.
type Solved = (Vec<StepPath>, Vec<Vec<(Ns, Ns)>>);

/// With `UNITRACE_TEST_WINDOW_SINKS=N`, windows of about N sinks: the
/// tests compare windows of one step with one window
/// (`tracestat/tests/critical_path.rs`).
fn window_sinks() -> Option<usize> {
    static N: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("UNITRACE_TEST_WINDOW_SINKS")
            .ok()?
            .parse()
            .ok()
    })
}

/// Every step's path and its replays under `replays`, a window of steps
/// at a time: the bodies of a window's steps are loaded, its paths solved
/// apart, in parallel (the cross-rank part runs after every rank is read,
/// so on many cores it would otherwise set the wall time,
/// docs/tracestat.md#scale), its steps replayed in order, and the bodies
/// dropped. The results keep the steps' order.
/// Without `covered_before` (each step's, `finish`), only the replays.
fn solve_in_windows(
    solver: &mut Solver<'_>,
    steps: &[solve::StepParts],
    covered_before: Option<&[Ns]>,
    replays: &[(usize, &rules::Rule)],
) -> std::io::Result<Solved> {
    let mut carried: Vec<solve::Carried> = replays
        .iter()
        .map(|_| solve::Carried::new(solver))
        .collect();
    let threads = rayon::current_num_threads().max(1);
    let most = window_sinks().unwrap_or(WINDOW_SINKS.max(2 * threads * REPLAY_BATCH_SINKS));
    let per_step = solver.sinks / steps.len().max(1) + 1;
    let mut paths = Vec::with_capacity(steps.len());
    let mut windows = Vec::with_capacity(steps.len());
    let mut from = 0;
    while from < steps.len() {
        let mut to = from;
        let mut sinks = 0;
        while to < steps.len() && (to == from || sinks < most) {
            let parts = &steps[to].1;
            sinks += parts
                .iter()
                .map(|&(r, k)| solver.paths[r].sink_count(k))
                .sum::<usize>();
            to += 1;
        }
        solver.load_window(&steps[from..to])?;
        let solver = &*solver;
        if let Some(covered) = covered_before.and_then(|c| c.get(from..to)) {
            paths.par_extend(steps[from..to].par_iter().zip(covered).map_init(
                solve::PathScratch::default,
                |scratch, ((id, parts), &covered_to)| {
                    solver.path_in(scratch, *id, parts, covered_to)
                },
            ));
        }
        let window = &steps[from..to];
        windows.extend(replay_in_order(
            solver,
            window,
            replays,
            &mut carried,
            per_step,
        ));
        from = to;
    }
    solver.load_window(&[])?;
    Ok((paths, windows))
}

/// Every step's window replayed under each of `replays` (`(slot, rule)`),
/// per step in the order of `steps`. The steps go in order, each rule with
/// its own [`Carried`] arrivals, so a step that waits on a collective of
/// an earlier step sees that step's replayed arrivals
/// (docs/tracestat.md#what-if); the rules go in parallel.
fn replay_in_order(
    solver: &Solver<'_>,
    steps: &[solve::StepParts],
    replays: &[(usize, &rules::Rule)],
    carried: &mut [solve::Carried],
    per_step: usize,
) -> Vec<Vec<(Ns, Ns)>> {
    let mut out: Vec<Vec<(Ns, Ns)>> = vec![Vec::with_capacity(replays.len()); steps.len()];
    if replays.is_empty() {
        return out;
    }
    // Plans prepared in parallel and held at once, a batch of about
    // REPLAY_BATCH_SINKS sinks per thread: a plan holds the chains of every
    // rank's step, so a batch of many steps of many ranks would hold much
    // memory, and a batch of one step of few ranks spends more time handing
    // work to the threads than replaying (docs/tracestat.md#scale).
    let threads = rayon::current_num_threads().max(1);
    let batch_len = (threads * REPLAY_BATCH_SINKS / per_step).clamp(threads, 1024);
    for (batch, rows) in steps.chunks(batch_len).zip(out.chunks_mut(batch_len)) {
        let plans: Vec<solve::StepReplay> = batch
            .par_iter()
            .map(|(_, parts)| solver.prepare(parts))
            .collect();
        let per_rule: Vec<Vec<(Ns, Ns)>> = carried
            .par_iter_mut()
            .zip(replays)
            .map(|(c, &(slot, rule))| {
                (plans.iter())
                    .map(|plan| solver.replay_prepared(plan, slot, Some(rule), c))
                    .collect()
            })
            .collect();
        for lens in per_rule {
            for (row, l) in rows.iter_mut().zip(lens) {
                row.push(l);
            }
        }
    }
    out
}

/// The time windows `(start, end)` cover, each moment once.
fn covered(windows: impl Iterator<Item = (Ns, Ns)>) -> Ns {
    let mut w: Vec<(Ns, Ns)> = windows.filter(|w| w.1 > w.0).collect();
    w.sort_unstable();
    let mut total = 0;
    let mut at = Ns::MIN;
    for (s, e) in w {
        let s = s.max(at);
        if e > s {
            total += e - s;
            at = e;
        }
    }
    total
}

/// A step's window, from the earliest start of its ranks to the latest
/// end (aligned): what a replay's savings are measured from.
fn step_window(solver: &Solver<'_>, parts: &[(usize, usize)]) -> (Ns, Ns) {
    let start = parts
        .iter()
        .map(|&(r, k)| solver.paths[r].steps[k].start - solver.off[r])
        .min()
        .unwrap_or(0);
    let end = parts
        .iter()
        .map(|&(r, k)| solver.paths[r].steps[k].end - solver.off[r])
        .max()
        .unwrap_or(start);
    (start, end)
}

/// The clock offsets the critical path subtracts: the collectives
/// analyzer's, or none.
fn offsets(ranks: &Ranks<'_>, done: &Finished) -> Vec<Ns> {
    let n = ranks.ranks.len();
    match done.collectives.as_ref() {
        Some(c) if c.clock_alignment.offset_ns.len() == n => c.clock_alignment.offset_ns.clone(),
        _ => vec![0; n],
    }
}

/// What makes a rank's part unusable by the cross-rank solve, if anything:
/// its collective calls not those of the collectives analyzer's part (`calls`
/// of them), an index past its lists, or fewer what-if lengths than the
/// `user_rules` need. A partial written before the critical path has none of
/// it; one edited or mixed from two runs gets an error when read
/// (docs/tracestat.md#partial-and-combine).
pub fn part_problem(path: &RankPath, calls: usize, user_rules: usize) -> Option<String> {
    if path.colls.len() != calls {
        return Some(format!(
            "its critical path holds {} collective calls, its collectives {calls}",
            path.colls.len()
        ));
    }
    let bad_call = |j: Option<u32>| j.is_some_and(|j| j as usize >= calls);
    // A chain's source: the step's start, device work before it, or a call.
    let bad_source = |j: Option<u32>| j != Some(graph::BEFORE) && bad_call(j);
    for (i, c) in path.colls.iter().enumerate() {
        let in_steps = |(s, k): (u32, u32)| {
            path.steps
                .get(s as usize)
                .is_some_and(|st| (k as usize) < st.sinks.len())
        };
        if c.sink.is_some_and(|at| !in_steps(at)) {
            return Some(format!(
                "collective call {i} names a sink that is not there"
            ));
        }
    }
    let names = path.names.len();
    if let Some(i) = path.colls.iter().position(|c| c.name as usize >= names) {
        return Some(format!(
            "collective call {i} names a name that is not there"
        ));
    }
    let width = 2 + user_rules;
    for (i, step) in path.steps.iter().enumerate() {
        let named = |s: &graph::Sink| {
            s.items.iter().all(|it| (it.name as usize) < names)
                && s.totals.iter().all(|t| (t.1 as usize) < names)
        };
        if !step.sinks.iter().all(named) {
            return Some(format!("step {i} names a name that is not there"));
        }
        // A step ends with its last sink, after it starts.
        if step.sinks.is_empty() || step.end < step.start {
            return Some(format!("step {i} has no end after its start"));
        }
        let host_end = step.host_end.iter().map(|h| &h.1);
        for lens in step.sinks.iter().map(|s| &s.lens).chain(host_end) {
            if lens.shape().any(|(src, _)| bad_source(src)) {
                return Some(format!(
                    "step {i} names a collective call that is not there"
                ));
            }
            if lens.shape().any(|(_, n)| n < width) {
                return Some(format!(
                    "step {i} has fewer what-if lengths than its {user_rules} rules need"
                ));
            }
        }
        for sink in &step.sinks {
            if bad_call(sink.source) {
                return Some(format!(
                    "step {i} names a collective call that is not there"
                ));
            }
            if sink.lens.shape().any(|(_, n)| n < width) {
                return Some(format!(
                    "step {i} has fewer what-if lengths than its {user_rules} rules need"
                ));
            }
        }
    }
    None
}

/// Whether every rank's part can be solved: otherwise (partials written
/// before the critical path) the run has no critical path.
fn solvable(ranks: &Ranks<'_>) -> bool {
    if ranks.rank_options.no_critical_path {
        return false;
    }
    // A part made in this run is whole; a partial's was checked whole when
    // it was read (`part_problem`), one written before the path has none:
    // its calls are then missing from it.
    ranks.ranks.iter().all(|r| {
        let calls = super::collectives::Collectives::part(r).len();
        CriticalPath::part(r).colls.len() == calls
    })
}

fn solver<'a>(ranks: &'a Ranks<'_>, off: &'a [Ns]) -> Solver<'a> {
    Solver::new(
        ranks.ranks.iter().map(CriticalPath::part).collect(),
        off,
        operations(ranks),
        ranks.ranks.iter().map(|r| r.rank).collect(),
    )
}

/// What `rank:N=median` saves over the run for each rank index of `who`
/// (docs/findings.md#savings): `None` where the graphs lack the implicit
/// slots or the rank has no id. For the few ranks the findings name, after
/// the critical path finished (the whole run's replays per rank would be
/// quadratic in the ranks).
pub fn rank_median_savings(ranks: &Ranks<'_>, done: &Finished, who: &[usize]) -> Vec<Option<Ns>> {
    if who.is_empty() {
        return Vec::new();
    }
    if !solvable(ranks) {
        return vec![None; who.len()];
    }
    let user = rules::parse_rules(&ranks.rank_options.what_if);
    let off = offsets(ranks, done);
    // Per rank asked for: the last implicit rule, `rank:N=median` for that
    // rank's id.
    let per_rank: Vec<Option<rules::Rule>> = who
        .iter()
        .map(|&i| implicit_rules(Some(ranks.ranks[i].rank?)).pop())
        .collect();
    let mut s = solver(ranks, &off);
    if !has_implicit_slots(&s, user.len()) {
        return vec![None; who.len()];
    }
    let slot = 2 + user.len() + IMPLICIT_RULES - 1;
    // Per rank, what its replay saves: the time the steps cover, recorded
    // less replayed (never below 0); the steps replayed in order, as in
    // `finish`.
    let steps = s.steps();
    let replays: Vec<(usize, &rules::Rule)> =
        per_rank.iter().flatten().map(|rule| (slot, rule)).collect();
    let Ok((_, windows)) = solve_in_windows(&mut s, &steps, None, &replays) else {
        // The report's own solve fails the run with the reason.
        return vec![None; who.len()];
    };
    let recorded = covered(steps.iter().map(|(_, parts)| step_window(&s, parts)));
    let sums: Vec<Ns> = (0..replays.len())
        .map(|i| recorded - covered(windows.iter().map(|w| w[i])))
        .collect();
    let mut sums = sums.into_iter();
    let saved: Vec<Ns> = per_rank
        .iter()
        .map(|rule| match rule {
            Some(_) => sums.next().unwrap_or(0),
            None => 0,
        })
        .collect();
    per_rank
        .iter()
        .zip(saved)
        .map(|(rule, saved)| rule.as_ref().map(|_| saved.max(0)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::graph::{Sink, StepGraph, BEFORE};
    use super::packed::SinkLens;
    use super::*;

    /// The table's rows are its steps' stretches in order, numbered per
    /// step, an empty step taking no row.
    #[test]
    fn the_path_table_numbers_its_steps_rows() {
        let item = |rank, start, dur| solve::PathItem {
            rank,
            kind: Kind::Host,
            name: "f".into(),
            start,
            dur,
        };
        let mut t = PathTable::new(vec!["0".into(), "1".into()], 1_000);
        t.push("1".into(), vec![item(0, 1_000, 500), item(1, 1_500, 2_000)]);
        t.push("2".into(), Vec::new());
        t.push("3".into(), vec![item(1, 3_500, 1_000)]);
        assert_eq!((t.len(), t.is_empty()), (3, false));
        let rows: Vec<(String, u64, String, f64, f64)> = t
            .iter()
            .map(|r| {
                (
                    r.step.to_string(),
                    r.seq,
                    r.rank.to_string(),
                    r.start_us,
                    r.dur_us,
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("1".into(), 0, "0".into(), 0.0, 0.5),
                ("1".into(), 1, "1".into(), 0.5, 2.0),
                ("3".into(), 0, "1".into(), 2.5, 1.0),
            ]
        );
        for (i, r) in t.iter().enumerate() {
            let at = t.row(i);
            assert_eq!((at.step, at.seq, at.start_us), (r.step, r.seq, r.start_us));
        }
        assert_eq!(
            (t.step_rows("1"), t.step_rows("2"), t.step_rows("3")),
            (0..2, 2..2, 2..3)
        );
        assert_eq!(t.step_rows("4"), 0..0);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&report_json(&t)).unwrap()["critical_path"]
                [2],
            serde_json::json!({"step": "3", "seq": 0, "rank": "1", "kind": "host", "name": "f", "start_us": 2.5, "dur_us": 1.0})
        );
    }

    /// The JSON report's rows, written from texts escaped once per name,
    /// are byte for byte those of each row serialized whole, names that
    /// JSON escapes included; a name shared by rows, or equal to another
    /// name held apart, reads the same in each.
    #[test]
    fn the_path_tables_json_rows_are_those_of_its_rows() {
        let odd: solve::Label = "k<\"q\", \\b>\n\t\u{1}\u{7f} µs 名".into();
        let plain: solve::Label = "gemm_kernel".into();
        let item = |rank, name: &solve::Label, start| solve::PathItem {
            rank,
            kind: Kind::Compute,
            name: name.clone(),
            start,
            dur: 1_234,
        };
        let mut t = PathTable::new(vec!["0".into(), "r\"1".into()], 1_000);
        t.push(
            "1".into(),
            vec![
                item(0, &odd, 1_000),
                item(1, &plain, 2_500),
                item(1, &odd, 4_000),
            ],
        );
        t.push(
            "s\\2".into(),
            // A start before the origin; one too far for the integer spelling.
            vec![
                item(0, &"gemm_kernel".into(), 7_001),
                item(0, &plain, -3),
                item(1, &plain, 1 << 50),
            ],
        );
        let whole: Vec<PathRow> = t.iter().collect();
        assert_eq!(report_json(&t), report_json(&whole));
        assert!(report_json(&t).contains(r#""name": "k<\"q\", \\b>\n\t\u0001"#));
    }

    /// A path longer than the rows handed to the writer at a time, whose
    /// rows share a rank and name with different kinds, and a name with
    /// different ranks: each row reads as its own, wherever the chunks
    /// are cut, at a depth where rows take a line each and at one where
    /// a table is on one line.
    #[test]
    fn a_long_paths_json_rows_are_those_of_its_rows() {
        let names: Vec<solve::Label> = (0..40)
            .map(|i| format!("kernel_{i}_{}", "x".repeat(i * 7)).into())
            .collect();
        let mut t = PathTable::new(vec!["0".into(), "1".into(), "2".into()], 0);
        for step in 0..30 {
            let items = (0..60)
                .map(|i| solve::PathItem {
                    rank: (i + step) % 3,
                    kind: Kind::ALL[i % Kind::ALL.len()],
                    name: names[(i * 7 + step) % names.len()].clone(),
                    start: (step * 1_000_000 + i * 1_001) as i64,
                    dur: (i * 37) as i64,
                })
                .collect();
            t.push(format!("{step}").into(), items);
        }
        let whole: Vec<PathRow> = t.iter().collect();
        let text = report_json(&t);
        assert!(text.len() > 3 * unitrace_render::json::ROWS_CHUNK);
        let rows: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(rows["critical_path"].as_array().unwrap().len(), 1_800);
        unitrace_render::json::assert_same_report(
            &BTreeMap::from([("critical_path", &whole)]),
            &BTreeMap::from([("critical_path", &t)]),
        );
    }

    /// `critical_path_steps` and `what_if` made as text are byte for byte
    /// their rows serialized, at every depth of the report's layout and
    /// over more rows than the writer takes at a time.
    #[test]
    fn the_step_and_what_if_rows_are_those_serialized() {
        let x = unitrace_render::json::test_floats();
        let text = ["0", "s\"1\n", "名 µs", ""];
        let steps: Vec<StepRow> = (0..1_500)
            .map(|i| StepRow {
                step: text[i % 4].to_string(),
                start_us: x[i % 12],
                dur_us: x[(i + 1) % 12],
                adds_us: x[(i + 2) % 12],
                after_before: i % 2 == 0,
                end_rank: text[(i + 1) % 4].to_string(),
                ranks_on_path: [0, 1, u64::MAX][i % 3],
                rank_changes: i as u64,
                kinds_us: Kind::ALL[..i % 8]
                    .iter()
                    .enumerate()
                    .map(|(k, &kind)| (kind, x[(i + k) % 12]))
                    .collect(),
            })
            .collect();
        let what_if: Vec<WhatIfRow> = (0..3_000)
            .map(|i| WhatIfRow {
                rule: text[(i + 2) % 4].to_string(),
                step: text[i % 4].to_string(),
                dur_us: x[i % 12],
                what_if_dur_us: x[(i + 5) % 12],
                change_pct: x[(i + 7) % 12],
            })
            .collect();
        #[derive(Serialize)]
        struct Plain<'a> {
            steps: &'a [StepRow],
            what_if: &'a [WhatIfRow],
        }
        #[derive(Serialize)]
        struct Text<'a> {
            #[serde(serialize_with = "step_rows_json")]
            steps: &'a [StepRow],
            #[serde(serialize_with = "what_if_rows_json")]
            what_if: &'a [WhatIfRow],
        }
        let text = Text {
            steps: &steps,
            what_if: &what_if,
        };
        assert!(report_json(&text).len() > 4 * 64 * 1024);
        let plain = Plain {
            steps: &steps,
            what_if: &what_if,
        };
        unitrace_render::json::assert_same_report(&plain, &text);
    }

    /// `critical_path.csv` written straight from the stretches is byte for
    /// byte the file of the same rows as values: names CSV quotes, a start
    /// before the origin, times too long for the integer spelling.
    #[test]
    fn the_path_tables_csv_rows_are_those_of_its_values() {
        let odd: solve::Label = "k<\"q\", b>\n\r µs 名".into();
        let plain: solve::Label = "gemm_kernel".into();
        let item = |rank, name: &solve::Label, start, dur| solve::PathItem {
            rank,
            kind: Kind::Communication,
            name: name.clone(),
            start,
            dur,
        };
        let long = 1i64 << 50;
        let mut t = PathTable::new(vec!["0".into(), "r,1".into()], 1_000);
        t.push(
            "1".into(),
            vec![
                item(0, &odd, 1_000, 1_234),
                item(1, &plain, 500, 7),
                item(1, &odd, 4_000, 0),
            ],
        );
        t.push("s\"2".into(), vec![item(0, &plain, long, long + 5)]);
        // The same rank and name as a row before, another kind.
        let mut compute = item(1, &plain, 1_500, 9);
        compute.kind = Kind::Compute;
        t.push("3".into(), vec![compute]);
        let out = CriticalPathOut {
            critical_path: Arc::new(t),
            ..Default::default()
        };
        let direct = items_table(&out);
        let mut values = direct.clone();
        values.file_rows = None;
        values.rows = (0..out.critical_path.len())
            .map(|i| {
                let mut row = Vec::new();
                PathRows::new(Arc::clone(&out.critical_path)).row(i, &mut row);
                row
            })
            .collect();
        let files = |table: &Table| {
            let dir = tempfile::tempdir().unwrap();
            let format = unitrace_render::table::TableFormat::Csv;
            unitrace_render::sections::write_dir(dir.path(), [table], format).unwrap();
            std::fs::read_to_string(dir.path().join("critical_path.csv")).unwrap()
        };
        let (direct, values) = (files(&direct), files(&values));
        assert_eq!(direct, values);
        let names: Vec<String> = csv::Reader::from_reader(direct.as_bytes())
            .records()
            .map(|r| r.unwrap()[4].to_string())
            .collect();
        assert_eq!(names, [&*odd, &*plain, &*odd, &*plain, &*plain]);
        assert!(direct.ends_with(
            "\n3,0,r,1,compute,gemm_kernel,0.500,0.009\n"
                .replace("r,1", "\"r,1\"")
                .as_str()
        ));
        assert!(direct.contains("\"k<\"\"q\"\", b>\n\r µs 名\",0.000,1.234\n"));
        assert!(direct.contains("1,1,\"r,1\",communication,gemm_kernel,-0.500,0.007\n"));
    }

    /// `table` as the report's one field, through the report's writer (its
    /// rows on lines of their own).
    fn report_json<T: Serialize>(table: &T) -> String {
        let mut report = BTreeMap::new();
        report.insert("critical_path", table);
        let mut out = Vec::new();
        unitrace_render::json::write_report(&mut out, &report, 1).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// A partial's step whose host range end names a call the rank does
    /// not have is refused; one from device work before the step is not
    /// a call, and is read.
    #[test]
    fn a_host_range_end_is_checked_as_a_sink_is() {
        let path = |src: Option<u32>| RankPath {
            steps: vec![StepGraph {
                id: Some(1),
                host_end: Some((10, SinkLens::from(vec![(src, vec![10, 0, 10, 10, 10])]))),
                // Its end.
                sinks: vec![Sink::default()],
                ..Default::default()
            }],
            ..Default::default()
        };
        let problem = part_problem(&path(Some(3)), 0, 0);
        assert_eq!(
            problem.as_deref(),
            Some("step 0 names a collective call that is not there")
        );
        assert_eq!(part_problem(&path(Some(BEFORE)), 0, 0), None);
        assert_eq!(part_problem(&path(None), 0, 0), None);
        let short = RankPath {
            steps: vec![StepGraph {
                host_end: Some((10, SinkLens::from(vec![(None, vec![10, 0])]))),
                sinks: vec![Sink::default()],
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(part_problem(&short, 0, 1).is_some_and(|p| p.contains("fewer what-if lengths")));
    }

    /// A partial's chain or total that names a name past its rank's list
    /// is refused (the report would print it empty).
    #[test]
    fn a_name_past_the_list_is_refused() {
        let item = |name| graph::Item {
            start: 0,
            dur: 10,
            kind: graph::Kind::Compute,
            name,
        };
        let path = |names: usize, items: Vec<graph::Item>, totals| RankPath {
            names: vec![crate::labels::Label::from("k"); names],
            steps: vec![StepGraph {
                end: 10,
                sinks: vec![Sink {
                    time: 10,
                    items: packed::ChainItems::new(&items),
                    totals,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let says = Some("step 0 names a name that is not there");
        assert_eq!(part_problem(&path(2, vec![item(1)], vec![]), 0, 0), None);
        assert_eq!(
            part_problem(&path(1, vec![item(1)], vec![]), 0, 0).as_deref(),
            says
        );
        let total = vec![(graph::Kind::Compute, 4, 1, 10)];
        assert_eq!(
            part_problem(&path(2, vec![item(0)], total), 0, 0).as_deref(),
            says
        );
    }
}
