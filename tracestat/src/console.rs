//! The console report (docs/tracestat.md#console-report): the straggler
//! lines, which ranks the per-rank tables show, then every analysis'
//! sections through the shared table model (`unitrace_render::sections`).

use std::io::{self, Write};

use unitrace_render::sections::{write_console, Section};

use crate::analyzers::stragglers::straggler_lines;
use crate::analyzers::Report;
use crate::rank_rows::Shown;

/// The console report.
pub fn write(
    out: &mut impl Write,
    r: &Report,
    shown: &Shown,
    sections: &[Section],
) -> io::Result<()> {
    header(out, r)?;
    if let Some((straggler, comparison)) = straggler_lines(r) {
        let esc = unitrace_core::cli::escape_controls;
        writeln!(out, "straggler: {}", esc(&straggler))?;
        writeln!(out, "GPU time against the median: {}", esc(&comparison))?;
    }
    if let Some(slowest) = slowest_step_line(r) {
        let esc = unitrace_core::cli::escape_controls;
        writeln!(out, "slowest step: {}", esc(&slowest))?;
    }
    shown_ranks(out, shown)?;
    write_console(out, sections)
}

/// The slowest step and its longest stretch on the critical path; when
/// that step looks like warm-up on every rank with steps, so
/// (docs/tracestat.md#steps). On one rank only it is more likely that
/// rank's problem right after its warm-up (a straggler's sleep in the
/// second step) than a warm-up of the run.
pub fn slowest_step_line(r: &Report) -> Option<String> {
    let median = r.out.steps.step_time.as_ref().map(|t| t.median_us);
    let line = crate::analyzers::critical_path::headline(&r.out.critical_path, median)?;
    let step: Option<u64> = r.out.critical_path.slowest_step.as_deref()?.parse().ok();
    let mut with_steps = r
        .out
        .steps
        .step_ranks
        .iter()
        .filter(|s| s.steps > 0)
        .peekable();
    let warm = with_steps.peek().is_some()
        && with_steps.all(|s| step.is_some_and(|id| s.warmup_seen.contains(&id)));
    Some(if warm {
        format!("{line}; it looks like warm-up on every rank (--skip-warmup leaves it out)")
    } else {
        line
    })
}

/// The first line: how many ranks.
fn header(out: &mut impl Write, r: &Report) -> io::Result<()> {
    writeln!(
        out,
        "tracestat: {} rank{}",
        r.ranks,
        if r.ranks == 1 { "" } else { "s" }
    )
}

/// `--findings`: the header line and the findings only.
pub fn write_findings(out: &mut impl Write, r: &Report, sections: &[Section]) -> io::Result<()> {
    header(out, r)?;
    write_console(out, sections)
}

/// Which ranks the per-rank tables show, when not all: how many, which
/// and why, and how to get them all.
fn shown_ranks(out: &mut impl Write, shown: &Shown) -> io::Result<()> {
    if !shown.is_capped() {
        return Ok(());
    }
    writeln!(
        out,
        "\nPer-rank tables show {} of {} ranks (every rank: --rank-rows all, or --csv DIR / --json FILE):",
        shown.shown(),
        shown.total
    )?;
    for (why, ranks) in &shown.picked {
        writeln!(out, "  {why}: {}", ranks.join(" "))?;
    }
    Ok(())
}
