//! `--partial` / `--combine` (docs/tracestat.md#partial-and-combine): the
//! per-rank summaries of some ranks, written as JSON, reduced later by one
//! `--combine` run to the report a single run over all files gives.

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};
use unitrace_core::InputError;

use crate::analyzers::{RankOptions, RankSummary};

pub const FORMAT: &str = "tracestat-partial";
/// 3: one part per analyzer (docs/tracestat.md#analyzers), the file's rank
/// from the path first (docs/formats.md#timeline-ranks); 4: the copies and
/// set-up calls analyzers' parts, the gaps the findings read; 5: the steps
/// (docs/tracestat.md#steps) and their options; 6: the critical path's
/// reduced steps (docs/tracestat.md#critical-path); 7: the chains from
/// device work before a step, and each step's host range end, which the
/// what-if replay carries from step to step (docs/tracestat.md#what-if);
/// 8: when a collective on the device was called on the host, which the
/// matching across ranks of kept steps reads (docs/tracestat.md#collectives),
/// and the steps `--skip-warmup` would drop (docs/tracestat.md#steps).
pub const VERSION: u32 = 8;

/// Versions `--combine` still reads: a version 4 or 5 partial is a version
/// 8 one without what it lacks (its ranks' steps read as not recorded, no
/// critical path); a version 6 one replays each step from its recorded
/// start (its chains hold no step-to-step moves); in a version 7 one a
/// collective on the device reads as called when its work started.
pub const READABLE: std::ops::RangeInclusive<u32> = 4..=VERSION;

#[derive(Debug, Serialize, Deserialize)]
pub struct Partial {
    pub format: String,
    pub version: u32,
    pub options: RankOptions,
    pub ranks: Vec<RankSummary>,
}

pub fn read(path: &Path) -> Result<Partial, InputError> {
    let file = std::fs::File::open(path).map_err(|e| InputError::io(path, &e))?;
    let reader = std::io::BufReader::new(file);
    let p: Partial = serde_json::from_reader(reader).map_err(|e| {
        let problem = format!("not a tracestat partial (--partial output): {e}");
        if e.line() > 0 {
            InputError::at_line(path, e.line() as u64, problem)
        } else {
            InputError::at_file(path, problem)
        }
    })?;
    if p.format != FORMAT || !READABLE.contains(&p.version) {
        return Err(InputError::at_file(
            path,
            format!(
                "not a tracestat partial of this version: format {:?} version {} (expected {FORMAT:?} {} to {VERSION})",
                p.format,
                p.version,
                READABLE.start()
            ),
        ));
    }
    let mut p = p;
    if let Some(problem) = p.ranks.iter().find_map(summary_problem) {
        return Err(InputError::at_file(path, problem));
    }
    if p.version >= 6 {
        check_paths(&p).map_err(|problem| InputError::at_file(path, problem))?;
    } else {
        // Written before the critical path: whatever path one holds (an
        // edit) is not read (docs/tracestat.md#partial-and-combine).
        for r in &mut p.ranks {
            r.parts.critical_path = Default::default();
        }
    }
    Ok(p)
}

/// What no rank summary that `--partial` writes can hold: a rank ending
/// before it starts, a negative time, or no breakdown of the whole rank
/// (every rank has one, devices or not). An edited or damaged partial is
/// an error, not a report with negative walls or a rank gone
/// (docs/tracestat.md#partial-and-combine).
fn summary_problem(r: &crate::analyzers::RankSummary) -> Option<String> {
    use crate::analyzers::{breakdown::Breakdown, Analyzer};
    let scopes = Breakdown::part(r);
    let problem = if r.first_ns > r.last_ns {
        "its last event before its first".to_string()
    } else if scopes.first().is_none_or(|s| s.device != "all") {
        "no breakdown of the whole rank".to_string()
    } else {
        let negative = scopes.iter().find_map(|s| {
            [
                ("wall_ns", s.wall_ns),
                ("busy_ns", s.busy_ns),
                ("compute_ns", s.compute_ns),
                ("communication_ns", s.communication_ns),
                ("memory_ns", s.memory_ns),
                ("idle_ns", s.idle_ns),
                ("active_ns", s.active_ns),
            ]
            .into_iter()
            .find(|f| f.1 < 0)
            .map(|(name, v)| format!("breakdown {} {name} {v}", s.device))
        });
        negative?
    };
    Some(format!(
        "rank {}: not a tracestat partial as --partial writes it: {problem}",
        r.label()
    ))
}

/// A partial's critical path parts agree with its collectives parts and
/// with themselves: an edited or cut partial is an error, not a wrong
/// path (docs/tracestat.md#partial-and-combine).
fn check_paths(p: &Partial) -> Result<(), String> {
    use crate::analyzers::{collectives::Collectives, critical_path, Analyzer};
    let user_rules = p.options.what_if.len();
    for r in &p.ranks {
        let calls = Collectives::part(r).len();
        let path = critical_path::CriticalPath::part(r);
        // Made with --no-critical-path: no rank has a path part at all.
        let problem = if p.options.no_critical_path {
            (*path != Default::default()).then(|| {
                "a critical path part in a partial made with --no-critical-path".to_string()
            })
        } else {
            critical_path::part_problem(path, calls, user_rules)
        };
        if let Some(problem) = problem {
            return Err(format!(
                "rank {}: not a tracestat partial as --partial writes it: {problem}",
                r.label()
            ));
        }
    }
    Ok(())
}
