//! Set-up calls (docs/tracestat.md#set-up-calls): per rank, the host API
//! calls that build modules or programs (JIT), allocate or free device and
//! pinned memory, in all and inside the rank's steady state
//! (docs/findings.md#steady-state), where a run that has warmed up should
//! make none: the numbers the findings `jit` and `alloc-churn` read.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use unitrace_render::sections::{Column, Section, Table, Unit, Value};

use super::breakdown::limit_rows;
use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::ingest::SetupKind;
use crate::rank_model::RankModel;
use crate::time::{us, Ns};

/// The calls of one kind on one rank.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SetupTally {
    /// `module-build`, `alloc` or `free`.
    pub kind: String,
    pub calls: u64,
    pub ns: Ns,
    /// Inside the steady state.
    pub steady_calls: u64,
    pub steady_ns: Ns,
    /// The part of `steady_ns` in which the rank's device was busy: a free
    /// (and a blocking allocation) waits for the device's work, which that
    /// time costs nothing (docs/findings.md#alloc-churn). 0 in partials
    /// written before it (the calls' whole time then counts).
    #[serde(default)]
    pub steady_busy_ns: Ns,
    /// The first steady call's start and the last one's end.
    pub steady_first_ns: Ns,
    pub steady_last_ns: Ns,
    /// The call name with the most steady time (else the most time).
    pub top_name: String,
}

/// One rank's set-up calls, one tally per kind, and its steady state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankSetup {
    pub kinds: Vec<SetupTally>,
    /// `(start, end, rule)` of the steady state, when the rank has one.
    pub steady: Option<(Ns, Ns, String)>,
}

impl RankSetup {
    pub fn kind(&self, kind: SetupKind) -> Option<&SetupTally> {
        self.kinds.iter().find(|k| k.kind == kind.name())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SetupRow {
    pub rank: String,
    pub kind: String,
    pub calls: u64,
    pub time_us: f64,
    pub steady_calls: u64,
    pub steady_us: f64,
    pub name: String,
    pub steady_state: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SetupOut {
    pub setup_calls: Vec<SetupRow>,
}

pub struct SetupCalls;

impl Analyzer for SetupCalls {
    type Rank = RankSetup;
    type Output = SetupOut;

    fn observe(m: &RankModel<'_>, _: &RankOptions) -> Self::Rank {
        observe(m)
    }

    fn part(rank: &RankSummary) -> &Self::Rank {
        &rank.parts.setup_calls
    }

    fn finish(ranks: &Ranks<'_>, _: &Finished) -> SetupOut {
        let mut setup_calls = Vec::new();
        for (r, label) in ranks.ranks.iter().zip(&ranks.labels) {
            let part = Self::part(r);
            let rule = part.steady.as_ref().map_or("none", |s| s.2.as_str());
            for k in &part.kinds {
                setup_calls.push(SetupRow {
                    rank: label.clone(),
                    kind: k.kind.clone(),
                    calls: k.calls,
                    time_us: us(k.ns),
                    steady_calls: k.steady_calls,
                    steady_us: us(k.steady_ns),
                    name: k.top_name.clone(),
                    steady_state: rule.to_string(),
                });
            }
        }
        SetupOut { setup_calls }
    }

    fn sections(r: &Report, screen: &Screen) -> Vec<Section> {
        let rows = &r.out.setup_calls.setup_calls;
        let mut s = Section::new(
            "setup-calls",
            "Module builds, allocations and frees (in all, and inside the steady state)",
        );
        if rows.is_empty() {
            s.lines
                .push("(no module build, allocation or free call)".to_string());
        }
        let shown: Vec<usize> = (0..rows.len())
            .filter(|&i| screen.ranks.contains(&rows[i].rank))
            .collect();
        let mut t = Table::new(
            "setup_calls",
            "",
            vec![
                Column::new("rank", "rank", Unit::Text),
                Column::new("kind", "kind", Unit::Text),
                Column::new("calls", "calls", Unit::Count),
                Column::new("time_us", "time", Unit::Us),
                Column::new("steady_calls", "steady", Unit::Count),
                Column::new("steady_us", "steady", Unit::Us),
                Column::new("steady_state", "steady state", Unit::Text).files_only(),
                Column::new("name", "name", Unit::Text),
            ],
        );
        for k in rows {
            t.push(vec![
                Value::from(&k.rank),
                Value::from(&k.kind),
                k.calls.into(),
                k.time_us.into(),
                k.steady_calls.into(),
                k.steady_us.into(),
                Value::from(&k.steady_state),
                Value::from(&k.name),
            ]);
        }
        limit_rows(&mut t, &shown, screen);
        t.files_only = rows.is_empty();
        t.notes.push("(steady: inside the steady state, from the second kept step (the steps table's) to the end of the last, else the first to last device operation; name: the call with the most steady time, else the most time)".to_string());
        s.tables.push(t);
        vec![s]
    }
}

/// Per call name: its steady time and its time.
type ByName<'a> = BTreeMap<&'a str, (Ns, Ns)>;

fn observe(m: &RankModel<'_>) -> RankSetup {
    let steady = m.steady;
    let busy: &[(Ns, Ns)] = m.scopes.first().map_or(&[], |s| &s.sweep.segments);
    let mut by_kind: BTreeMap<SetupKind, (SetupTally, ByName<'_>)> = BTreeMap::new();
    for c in &m.trace.setup_calls {
        let (tally, names) = by_kind.entry(c.kind).or_insert_with(|| {
            (
                SetupTally {
                    kind: c.kind.name().to_string(),
                    ..SetupTally::default()
                },
                BTreeMap::new(),
            )
        });
        let ns = c.end - c.start;
        tally.calls += 1;
        tally.ns += ns;
        let inside = steady.is_some_and(|s| c.start >= s.start && c.start < s.end);
        let by_name = names.entry(m.name(c.name)).or_default();
        by_name.1 += ns;
        if inside {
            if tally.steady_calls == 0 {
                (tally.steady_first_ns, tally.steady_last_ns) = (c.start, c.end);
            }
            tally.steady_calls += 1;
            tally.steady_ns += ns;
            tally.steady_busy_ns += busy_within(busy, c.start, c.end);
            tally.steady_first_ns = tally.steady_first_ns.min(c.start);
            tally.steady_last_ns = tally.steady_last_ns.max(c.end);
            by_name.0 += ns;
        }
    }
    let kinds = by_kind
        .into_values()
        .map(|(mut tally, names)| {
            // Most steady time, then most time; the first name on a tie.
            let mut top: Option<(&str, (Ns, Ns))> = None;
            for (n, t) in names {
                if top.is_none_or(|best| t > best.1) {
                    top = Some((n, t));
                }
            }
            tally.top_name = top.map(|t| t.0.to_string()).unwrap_or_default();
            tally
        })
        .collect();
    RankSetup {
        kinds,
        steady: steady.map(|s| (s.start, s.end, s.rule.to_string())),
    }
}

/// The time of `start..end` covered by `busy` (disjoint, in time order).
fn busy_within(busy: &[(Ns, Ns)], start: Ns, end: Ns) -> Ns {
    let from = busy.partition_point(|b| b.1 <= start);
    busy[from..]
        .iter()
        .take_while(|b| b.0 < end)
        .map(|b| b.1.min(end) - b.0.max(start))
        .sum()
}
