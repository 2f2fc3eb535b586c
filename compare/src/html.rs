//! `--html`: one offline page through the render crate
//! (docs/compare.md#html-page): the total and the gate's verdict, and per
//! section the match line, baseline and candidate bars per item (the items
//! that changed most) and the table.

use std::io::{self, Write};

use unitrace_render::html::{Cell, Document, Table};
use unitrace_render::{Chart, ChartKind, Page, Series};

use crate::delta::Comparison;
use crate::output::{fmt_us, match_line};

/// Items drawn per section (the table lists as many as the console).
const BARS: usize = 15;
/// Tick labels longer than this are cut.
const LABEL_CHARS: usize = 28;

fn label(name: &str) -> String {
    if name.chars().count() <= LABEL_CHARS {
        return name.to_string();
    }
    let mut s: String = name.chars().take(LABEL_CHARS - 3).collect();
    s.push_str("...");
    s
}

pub fn write<W: Write>(
    out: W,
    c: &Comparison,
    violations: &[String],
    gated: bool,
    roofline_svg: Option<&str>,
) -> io::Result<W> {
    let title = format!("compare: {} -> {}", c.baseline, c.candidate);
    let mut doc = Document::new(out, &title)?;
    doc.heading(1, &title)?;
    let d = c.candidate_total_us - c.baseline_total_us;
    doc.paragraph(&format!(
        "{} comparison, kernels matched by {}. Total ({}): {} -> {} ({}{}).",
        c.kind,
        c.level,
        c.total_what,
        fmt_us(c.baseline_total_us),
        fmt_us(c.candidate_total_us),
        if d > 0.0 { "+" } else { "" },
        fmt_us(d)
    ))?;
    if gated {
        if violations.is_empty() {
            doc.paragraph("Gate: every threshold holds.")?;
        } else {
            doc.paragraph(&format!(
                "Gate: {} threshold(s) exceeded:",
                violations.len()
            ))?;
            doc.preformatted(&violations.join("\n"))?;
        }
    }
    if let Some(svg) = roofline_svg {
        // Already markup, drawn by the roofline crate (one arrow per kernel).
        doc.figure(svg)?;
    }
    for s in c.sections.iter().filter(|s| !s.rows.is_empty()) {
        doc.heading(2, s.section)?;
        doc.paragraph(&match_line(s))?;
        let top: Vec<_> = s.rows.iter().take(BARS).collect();
        let series = |name: &str, f: &dyn Fn(&crate::delta::Row) -> f64| Series {
            name: name.into(),
            points: top
                .iter()
                .enumerate()
                .map(|(i, r)| (i as f64, f(r)))
                .collect(),
        };
        doc.chart(&Page::Chart(Chart {
            title_lines: vec![format!("{}: the {} biggest changes", s.section, top.len())],
            x_label: s.section.into(),
            y_label: "time (us)".into(),
            series: vec![
                series("baseline", &|r| r.baseline_us),
                series("candidate", &|r| r.candidate_us),
            ],
            kind: ChartKind::Bar,
            x_tick_labels: Some(top.iter().map(|r| label(&r.name)).collect()),
        }))?;
        doc.table(&Table {
            header: [
                "name",
                "status",
                "baseline",
                "candidate",
                "delta",
                "change",
                "ratio",
                "within noise",
            ]
            .iter()
            .map(|h| h.to_string())
            .collect(),
            rows: s
                .rows
                .iter()
                .take(crate::output::TOP_ROWS)
                .map(|r| {
                    vec![
                        Cell::text(r.name.clone()),
                        Cell::text(r.status),
                        Cell::Formatted(fmt_us(r.baseline_us)),
                        Cell::Formatted(fmt_us(r.candidate_us)),
                        Cell::Formatted(fmt_us(r.delta_us)),
                        Cell::Formatted(r.change_pct.map_or("-".into(), |v| format!("{v:+.1}%"))),
                        Cell::Formatted(r.ratio.map_or("-".into(), |v| format!("{v:.3}x"))),
                        Cell::text(if r.within_noise { "yes" } else { "" }),
                    ]
                })
                .collect(),
        })?;
    }
    doc.finish()
}
