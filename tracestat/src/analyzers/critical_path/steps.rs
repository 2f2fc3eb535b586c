//! Where a rank's steps are (docs/tracestat.md#critical-path): the one
//! seam between the critical path and the way steps are found. A step is a
//! host range whose name holds `ProfilerStep#<n>` (unitrace's ITT range
//! `PyTorch::ProfilerStep#3`, Kineto's `ProfilerStep#3`); `n` is the step's
//! id. Without such ranges the rank's whole active window is one step.

use rustc_hash::FxHashMap as FastMap;

use crate::ingest::RankTrace;
use crate::time::Ns;

/// One step of one rank, on the rank's own clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepWindow {
    /// The step's number; `None` for the whole run as one step.
    pub id: Option<i64>,
    pub start: Ns,
    pub end: Ns,
    /// The host thread of the step's marker (none for the whole run).
    pub tid: Option<u64>,
}

/// The marker text a step range's name holds.
const MARKER: &str = "ProfilerStep#";

/// The step number a range name carries (`ProfilerStep#<digits>`).
fn step_number(name: &str) -> Option<i64> {
    let at = name.find(MARKER)?;
    let digits: &str = &name[at + MARKER.len()..];
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// The steps of a rank, in time order: `(id, start, end, marker thread)`.
/// One range per id (the longest when a step is marked twice); steps that
/// overlap an earlier one are left out (a step holds no other step).
pub fn step_windows(trace: &RankTrace) -> Vec<StepWindow> {
    let mut numbers: FastMap<u32, Option<i64>> = FastMap::default();
    let mut by_id: FastMap<i64, StepWindow> = FastMap::default();
    for h in &trace.host {
        let n = *numbers
            .entry(h.name.0)
            .or_insert_with(|| step_number(trace.name(h.name)));
        let Some(id) = n else { continue };
        let w = StepWindow {
            id: Some(id),
            start: h.start,
            end: h.end,
            tid: Some(h.tid),
        };
        let e = by_id.entry(id).or_insert(w);
        if w.end - w.start > e.end - e.start {
            *e = w;
        }
    }
    let mut steps: Vec<StepWindow> = by_id.into_values().collect();
    steps.sort_by_key(|s| (s.start, s.end, s.id));
    let mut out: Vec<StepWindow> = Vec::with_capacity(steps.len());
    for s in steps {
        if out.last().is_none_or(|p| s.start >= p.end) && s.end > s.start {
            out.push(s);
        }
    }
    if out.is_empty() && trace.last > trace.first {
        out.push(StepWindow {
            id: None,
            start: trace.first,
            end: trace.last,
            tid: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::step_number;

    #[test]
    fn step_numbers_from_both_markers() {
        assert_eq!(step_number("ProfilerStep#3"), Some(3));
        assert_eq!(step_number("PyTorch::ProfilerStep#12"), Some(12));
        assert_eq!(step_number("ProfilerStep#"), None);
        assert_eq!(step_number("aten::mm"), None);
    }
}
