//! `--html FILE`: one offline page (inline SVG and CSS, no script, no CDN;
//! docs/tracestat.md#html-page): the straggler lines, the breakdown bars,
//! then every section of the console report with its figures, written by
//! `unitrace_render` (`html::Document`, `sections::write_page`).

use std::io::{self, Write};

use unitrace_render::html::Document;
use unitrace_render::sections::{write_page, Figure, Section};

use crate::analyzers::stragglers::straggler_lines;
use crate::analyzers::Report;
use crate::figures::{breakdown_svg, Bar, MAX_BARS};

/// Writes the page.
/// `sections` are taken, not copied: with many steps their tables hold
/// hundreds of thousands of rows (docs/tracestat.md#scale).
pub fn write(out: impl Write, r: &Report, sections: &[Section]) -> io::Result<()> {
    let mut doc = Document::new(out, "tracestat")?;
    doc.heading(
        1,
        &format!(
            "tracestat: {} rank{}",
            r.ranks,
            if r.ranks == 1 { "" } else { "s" }
        ),
    )?;
    if let Some((straggler, comparison)) = straggler_lines(r) {
        doc.paragraph(&format!("Straggler: {straggler}"))?;
        doc.paragraph(&format!("GPU time against the median: {comparison}"))?;
    }
    if let Some(slowest) = crate::console::slowest_step_line(r) {
        doc.paragraph(&format!("Slowest step: {slowest}"))?;
    }
    // The findings first (docs/findings.md#output), then the bars.
    let findings = |s: &&Section| s.id == crate::analyzers::findings::SECTION_ID;
    for s in sections.iter().filter(findings) {
        write_page(&mut doc, std::slice::from_ref(s))?;
    }
    write_page(&mut doc, &[bars(r)])?;
    for s in sections.iter().filter(|s| !findings(s)) {
        write_page(&mut doc, std::slice::from_ref(s))?;
    }
    doc.finish()?;
    Ok(())
}

/// The breakdown bars per rank, as a section of their own.
fn bars(r: &Report) -> Section {
    let straggler = r.out.stragglers.straggler.as_ref().map(|s| s.rank.as_str());
    let all: Vec<Bar<'_>> = r
        .out
        .breakdown
        .breakdown
        .iter()
        .filter(|b| b.device == "all")
        .map(|b| Bar {
            rank: &b.rank,
            shares: [
                b.compute_active_pct,
                b.communication_active_pct,
                b.memory_active_pct,
                b.idle_active_pct,
            ],
        })
        .collect();
    let mut caption = "Share of each rank's active window (its first to last device operation; start-up and shutdown are outside it, see the table); a moment counts once: compute > communication > memory > idle.".to_string();
    if all.len() > MAX_BARS {
        caption.push_str(&format!(
            " {} ranks in groups of {}: each bar is the group's mean; the straggler's own bar comes first.",
            all.len(),
            all.len().div_ceil(MAX_BARS)
        ));
    }
    let mut s = Section::new("bars", "Where the time went, per rank");
    s.page_only = true;
    s.figures.push(Figure {
        svg: Some(breakdown_svg(&all, straggler)),
        text: None,
        caption,
    });
    s
}
