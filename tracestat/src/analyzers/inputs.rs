//! What the inputs held that the report left out
//! (docs/tracestat.md#implausible-events): events whose times cannot be
//! right, per rank and kind, and the files cut short.

use serde::{Deserialize, Serialize};
use unitrace_render::sections::{Column, Section, Table, Unit, Value};

use super::{Analyzer, Finished, RankOptions, RankSummary, Ranks, Report, Screen};
use crate::rank_model::RankModel;

/// One rank's left-out events: `(kind, count)` and up to three examples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    pub implausible: Vec<(String, u64)>,
    pub implausible_examples: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ImplausibleRow {
    pub rank: String,
    pub kind: String,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TruncatedRow {
    pub rank: String,
    pub file: String,
    pub problem: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct InputsOut {
    pub implausible: Vec<ImplausibleRow>,
    pub truncated: Vec<TruncatedRow>,
}

pub struct Inputs;

impl Analyzer for Inputs {
    type Rank = LeftOut;
    type Output = InputsOut;

    fn observe(m: &RankModel<'_>, _: &RankOptions) -> LeftOut {
        let i = &m.trace.implausible;
        LeftOut {
            implausible: i.counts.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            implausible_examples: i.examples.clone(),
        }
    }

    fn part(rank: &RankSummary) -> &Self::Rank {
        &rank.parts.inputs
    }

    fn finish(ranks: &Ranks<'_>, _: &Finished) -> InputsOut {
        let mut implausible = Vec::new();
        let mut truncated = Vec::new();
        for (r, label) in ranks.ranks.iter().zip(&ranks.labels) {
            for (kind, n) in &Self::part(r).implausible {
                implausible.push(ImplausibleRow {
                    rank: label.clone(),
                    kind: kind.clone(),
                    count: *n,
                });
            }
            if let Some(t) = &r.truncated {
                truncated.push(TruncatedRow {
                    rank: label.clone(),
                    file: r.file.clone(),
                    problem: t.clone(),
                });
            }
        }
        InputsOut {
            implausible,
            truncated,
        }
    }

    fn sections(r: &Report, screen: &Screen) -> Vec<Section> {
        let out = &r.out.inputs;
        let mut t = Table::new(
            "implausible",
            "",
            vec![
                Column::new("rank", "rank", Unit::Text),
                Column::new("kind", "kind", Unit::Text),
                Column::new("count", "count", Unit::Count),
            ],
        );
        t.files_only = true;
        for i in &out.implausible {
            t.push(vec![
                Value::from(&i.rank),
                Value::from(&i.kind),
                i.count.into(),
            ]);
        }
        let mut s = Section::new("inputs", "Truncated inputs");
        s.tables.push(t);
        if out.truncated.is_empty() {
            s.page_only = true;
            s.title = "Inputs".to_string();
            s.lines.push("Every input was read to its end.".to_string());
            return vec![s];
        }
        // A killed job cuts every rank: the list is capped like the
        // per-rank tables.
        let cap = screen.rank_rows.unwrap_or(usize::MAX);
        for t in out.truncated.iter().take(cap) {
            s.lines
                .push(format!("rank {}: {}: {}", t.rank, t.file, t.problem));
        }
        if out.truncated.len() > cap {
            s.lines.push(format!(
                "({} more truncated inputs not shown: --rank-rows all, or --json FILE)",
                out.truncated.len() - cap
            ));
        }
        vec![s]
    }
}
