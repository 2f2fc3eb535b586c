//! Where a rank's steps are for the critical path
//! (docs/tracestat.md#critical-path): the steps analyzer's kept steps
//! (`RankModel::steps`, docs/tracestat.md#steps), so `--step`, `--steps`,
//! `--skip-warmup` and the fallback rules reach the path as they reach
//! every other table. Without steps found, the rank's whole run (its first
//! to its last event) is one step.

use crate::ingest::RankTrace;
use crate::step_windows::{RankSteps, StepRule};
use crate::time::Ns;

/// One step of one rank, on the rank's own clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepWindow {
    /// The step's number; `None` for the whole run as one step.
    pub id: Option<i64>,
    pub start: Ns,
    pub end: Ns,
    /// The host thread of the step's marker range: its time is cut at the
    /// step's end. `None` for the whole run and for steps found from the
    /// period of GPU work (their end is the end of the last work that ends
    /// in the window).
    pub tid: Option<u64>,
}

/// The steps the path follows on a rank, in time order: the kept steps,
/// less any that an earlier one holds (a step holds no other step) or that
/// is empty, each starting no earlier than the one before it ends; the whole run when no rule found steps. A rank whose steps
/// the selection (`--steps`, `--skip-warmup`) all dropped has none.
pub fn step_windows(steps: &RankSteps, trace: &RankTrace) -> Vec<StepWindow> {
    if matches!(steps.rule, StepRule::None | StepRule::NotRecorded) {
        if trace.last > trace.first {
            return vec![StepWindow {
                id: None,
                start: trace.first,
                end: trace.last,
                tid: None,
            }];
        }
        return Vec::new();
    }
    let mut kept: Vec<StepWindow> = steps
        .kept
        .iter()
        .map(|s| StepWindow {
            id: Some(s.step as i64),
            start: s.start_ns,
            end: s.end_ns,
            tid: s.tid,
        })
        .collect();
    kept.sort_by_key(|s| (s.start, s.end, s.id));
    let mut out: Vec<StepWindow> = Vec::with_capacity(kept.len());
    for mut s in kept {
        if let Some(p) = out.last() {
            if s.end <= p.end {
                // Held by the step before it.
                continue;
            }
            // Steps that follow each other may overlap by a clock tick
            // (a range's end and the next one's start rounded apart): the
            // later one starts where the earlier ends.
            s.start = s.start.max(p.end);
        }
        if s.end > s.start {
            out.push(s);
        }
    }
    out
}
