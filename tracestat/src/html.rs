//! `--html FILE`: one offline page (inline SVG and CSS, no script, no CDN)
//! with the breakdown bars per rank and the rank x time heatmap
//! (docs/tracestat.md#html-page).
//!
//! Readable from 1 to thousands of ranks: beyond [`MAX_BARS`] bars or
//! [`MAX_ROWS`] heatmap rows, consecutive ranks are grouped and a group
//! shows its mean (heatmap rows: mean utilisation per bin), labelled with
//! its rank range, so the page never needs more pixels than it has.
//!
//! The page is a `unitrace_render::html::Document` (headings, paragraphs,
//! tables, figures; offline, every text escaped); the two pictures are SVG
//! drawn here, as neither is a chart of the render model (a stacked bar per
//! rank, a rank x time grid).

use std::fmt::Write as _;
use std::io::{self, Write};

use unitrace_render::escape::escape_xml;
use unitrace_render::html::{Cell, Document, Table};

use crate::report::{BreakdownRow, Report};

/// Breakdown bars drawn at most (more ranks are grouped).
pub const MAX_BARS: usize = 64;
/// Heatmap rows drawn at most (more ranks are grouped).
pub const MAX_ROWS: usize = 256;

const COLORS: [(&str, &str); 4] = [
    ("compute", "#2b6cb0"),
    ("communication", "#dd6b20"),
    ("memory", "#38a169"),
    ("idle", "#e2e8f0"),
];

fn esc(s: &str) -> String {
    escape_xml(s)
}

/// Consecutive groups of `n` items split into at most `max` groups.
fn groups(n: usize, max: usize) -> Vec<std::ops::Range<usize>> {
    if n == 0 {
        return Vec::new();
    }
    let per = n.div_ceil(max);
    (0..n).step_by(per).map(|s| s..(s + per).min(n)).collect()
}

/// One drawn row: the ranks it stands for and its label.
pub(crate) struct Row {
    pub ranks: std::ops::Range<usize>,
    pub label: String,
    /// The straggler's own row in front of the groups (drawn taller).
    pub apart: bool,
}

/// Rows to draw: one per rank, or when there are more than `max` ranks,
/// groups of consecutive ranks with the straggler's own row first, so a
/// group mean cannot hide it. The straggler's row is marked either way.
pub(crate) fn rows_with_straggler(
    labels: &[&str],
    max: usize,
    straggler: Option<&str>,
) -> Vec<Row> {
    let label = |r: &std::ops::Range<usize>| {
        if r.len() == 1 && labels.len() > 1 && straggler == Some(labels[r.start]) {
            format!("rank {} (straggler)", labels[r.start])
        } else if r.len() == 1 {
            format!("rank {}", labels[r.start])
        } else {
            format!("ranks {}-{}", labels[r.start], labels[r.end - 1])
        }
    };
    let mut rows: Vec<Row> = groups(labels.len(), max)
        .into_iter()
        .map(|ranks| Row {
            label: label(&ranks),
            ranks,
            apart: false,
        })
        .collect();
    if labels.len() > max {
        if let Some(i) = straggler.and_then(|s| labels.iter().position(|l| *l == s)) {
            rows.insert(
                0,
                Row {
                    ranks: i..i + 1,
                    label: format!("rank {} (straggler)", labels[i]),
                    apart: true,
                },
            );
        }
    }
    rows
}

/// Left margin of both pictures: room for `ranks 4032-4095` and
/// `rank 4095 (straggler)` at 11 px.
const LABEL_WIDTH: f64 = 150.0;

/// A tick of a time axis spanning `span_us`, in the unit that keeps the
/// numbers readable (`0.25 ms`, `500 us`, `12.5 s`), trailing zeros cut.
fn time_tick(us: f64, span_us: f64) -> String {
    let (value, span, unit) = if span_us < 1e3 {
        (us, span_us, "us")
    } else if span_us < 1e7 {
        (us / 1e3, span_us / 1e3, "ms")
    } else {
        (us / 1e6, span_us / 1e6, "s")
    };
    // About four significant digits of the span: `214 ms`, not `213.577 ms`.
    let decimals = match span {
        s if s >= 100.0 => 0,
        s if s >= 10.0 => 1,
        s if s >= 1.0 => 2,
        _ => 3,
    };
    let text = format!("{value:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        &text
    };
    format!("{text} {unit}")
}

fn breakdown_svg(rows: &[&BreakdownRow], straggler: Option<&str>) -> String {
    let labels: Vec<&str> = rows.iter().map(|r| r.rank.as_str()).collect();
    let gs = rows_with_straggler(&labels, MAX_BARS, straggler);
    let (left, width, bar, gap) = (LABEL_WIDTH, 900.0, 14.0, 4.0);
    let height = 40.0 + gs.len() as f64 * (bar + gap) + 30.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\" font-family=\"sans-serif\" font-size=\"11\">",
        w = left + width + 40.0
    );
    for (i, (name, color)) in COLORS.iter().enumerate() {
        let x = left + i as f64 * 130.0;
        let _ = write!(
            s,
            "<rect x=\"{x}\" y=\"6\" width=\"12\" height=\"12\" fill=\"{color}\"/><text x=\"{}\" y=\"16\">{name}</text>",
            x + 16.0
        );
    }
    for (j, g) in gs.iter().enumerate() {
        let y = 30.0 + j as f64 * (bar + gap);
        let n = g.ranks.len() as f64;
        let mean = |f: fn(&BreakdownRow) -> f64| {
            rows[g.ranks.clone()].iter().map(|r| f(r)).sum::<f64>() / n
        };
        let parts = [
            mean(|r| r.compute_pct),
            mean(|r| r.communication_pct),
            mean(|r| r.memory_pct),
            mean(|r| r.idle_pct),
        ];
        let label = &g.label;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            left - 6.0,
            y + bar - 3.0,
            esc(label)
        );
        let mut x = left;
        for (k, p) in parts.iter().enumerate() {
            let w = width * p / 100.0;
            if w > 0.0 {
                let _ = write!(
                    s,
                    "<rect x=\"{x:.2}\" y=\"{y}\" width=\"{w:.2}\" height=\"{bar}\" fill=\"{}\"><title>{}: {} {p:.2}%</title></rect>",
                    COLORS[k].1,
                    esc(label),
                    COLORS[k].0
                );
            }
            x += w;
        }
    }
    let axis_y = 30.0 + gs.len() as f64 * (bar + gap) + 14.0;
    for t in 0..=4 {
        let x = left + width * t as f64 / 4.0;
        let _ = write!(
            s,
            "<text x=\"{x}\" y=\"{axis_y}\" text-anchor=\"middle\">{}%</text>",
            t * 25
        );
    }
    s.push_str("</svg>");
    s
}

/// White (idle) to dark blue (busy), in 32 steps so equal neighbours merge.
fn heat_color(u: f64) -> (u32, String) {
    let level = (u.clamp(0.0, 1.0) * 31.0).round() as u32;
    let t = level as f64 / 31.0;
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    (
        level,
        format!(
            "#{:02x}{:02x}{:02x}",
            lerp(247.0, 8.0),
            lerp(251.0, 48.0),
            lerp(255.0, 107.0)
        ),
    )
}

/// The heatmap as drawn: its rows (ranks or groups), each row's
/// utilisation per bin (a group's mean), and the largest of them, which
/// the colour scale ends at. Scaling to the busiest cell keeps a run whose
/// GPUs are busy 0.3% of the time readable (absolute shares would all be
/// white); the page says what dark blue stands for.
fn heat_grid(r: &Report) -> (Vec<Row>, Vec<Vec<f64>>, f64) {
    let h = &r.heatmap;
    let labels: Vec<&str> = h.rows.iter().map(|(l, _)| l.as_str()).collect();
    let straggler = r.straggler.as_ref().map(|s| s.rank.as_str());
    let rows = rows_with_straggler(&labels, MAX_ROWS, straggler);
    let cells: Vec<Vec<f64>> = rows
        .iter()
        .map(|g| {
            let n = g.ranks.len() as f64;
            (0..h.bins)
                .map(|b| g.ranks.clone().map(|i| h.rows[i].1[b]).sum::<f64>() / n)
                .collect()
        })
        .collect();
    let top = cells.iter().flatten().copied().fold(0.0, f64::max);
    (rows, cells, top)
}

/// The utilisation the colour scale ends at: the busiest cell, or 100%
/// when a cell is (about) fully busy or none is busy at all.
pub(crate) fn heat_scale(top: f64) -> f64 {
    if top >= 0.995 || top <= 0.0 {
        1.0
    } else {
        top
    }
}

/// What dark blue stands for, for the notes of the page.
fn heat_scale_note(top: f64) -> String {
    let scale = heat_scale(top);
    if scale == 1.0 {
        "white 0%, dark blue 100%".to_string()
    } else {
        format!(
            "white 0%, dark blue {:.3}%: the busiest cell; the scale ends there",
            100.0 * scale
        )
    }
}

fn heatmap_svg(r: &Report) -> String {
    let h = &r.heatmap;
    let (gs, cells, top) = heat_grid(r);
    let scale = heat_scale(top);
    let (left, width) = (LABEL_WIDTH, 1000.0);
    // The straggler's own row (when ranks are grouped) is at least 12 px
    // high and set 4 px apart, so that it shows at a glance however thin
    // the group rows get; the groups share the rest of 800 px.
    let apart = gs.iter().filter(|g| g.apart).count();
    let groups = (gs.len() - apart).max(1) as f64;
    let row_h = ((800.0 - 16.0 * apart as f64) / groups).clamp(2.0, 18.0);
    let apart_h = row_h.max(12.0);
    let mut tops = Vec::with_capacity(gs.len());
    let mut y = 10.0;
    for g in &gs {
        tops.push(y);
        y += if g.apart { apart_h + 4.0 } else { row_h };
    }
    let bottom = y;
    let height = bottom + 40.0;
    let cell = width / h.bins.max(1) as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{height:.0}\" viewBox=\"0 0 {w} {height:.0}\" font-family=\"sans-serif\" font-size=\"11\" shape-rendering=\"crispEdges\">",
        w = left + width + 60.0
    );
    // Label every row when there is room, else the next row at least
    // 12 px below the last label.
    let mut last_label = f64::NEG_INFINITY;
    for (j, g) in gs.iter().enumerate() {
        let (y, row_h) = (tops[j], if g.apart { apart_h } else { row_h });
        // Centred on the row when it is high enough, else on its top.
        let baseline = y + (row_h / 2.0).max(6.0) + 4.0;
        if baseline - last_label >= 12.0 {
            last_label = baseline;
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{baseline:.1}\" text-anchor=\"end\">{}</text>",
                left - 6.0,
                esc(&g.label)
            );
        }
        let mut b = 0;
        while b < h.bins {
            let u = |b: usize| cells[j][b] / scale;
            let (level, color) = heat_color(u(b));
            let mut e = b + 1;
            while e < h.bins && heat_color(u(e)).0 == level {
                e += 1;
            }
            if level > 0 {
                let _ = write!(
                    s,
                    "<rect x=\"{:.2}\" y=\"{y:.2}\" width=\"{:.2}\" height=\"{row_h:.2}\" fill=\"{color}\"/>",
                    left + b as f64 * cell,
                    (e - b) as f64 * cell
                );
            }
            b = e;
        }
    }
    let _ = write!(
        s,
        "<rect x=\"{left}\" y=\"10\" width=\"{width}\" height=\"{:.2}\" fill=\"none\" stroke=\"#718096\"/>",
        bottom - 10.0
    );
    let span_us = h.bin_us * h.bins as f64;
    for t in 0..=5 {
        let x = left + width * t as f64 / 5.0;
        let _ = write!(
            s,
            "<text x=\"{x}\" y=\"{:.0}\" text-anchor=\"middle\">{}</text>",
            bottom + 16.0,
            time_tick(span_us * t as f64 / 5.0, span_us)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{:.0}\" text-anchor=\"middle\">time since the earliest rank's first event; colour: GPU busy share of the bin ({})</text>",
        left + width / 2.0,
        bottom + 34.0,
        esc(&heat_scale_note(top))
    );
    s.push_str("</svg>");
    s
}

fn text_row(cells: Vec<String>) -> Vec<Cell> {
    let last = cells.len().saturating_sub(1);
    cells
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            if i == last {
                Cell::Text(c)
            } else {
                Cell::Formatted(c)
            }
        })
        .collect()
}

fn table<W: Write>(
    doc: &mut Document<W>,
    head: &[&str],
    rows: impl Iterator<Item = Vec<String>>,
) -> io::Result<()> {
    doc.table(&Table {
        header: head.iter().map(|h| h.to_string()).collect(),
        rows: rows.map(text_row).collect(),
    })
}

/// Writes the page.
pub fn write(out: impl Write, r: &Report) -> io::Result<()> {
    let mut doc = Document::new(out, "tracestat")?;
    doc.heading(
        1,
        &format!(
            "tracestat: {} rank{}",
            r.ranks,
            if r.ranks == 1 { "" } else { "s" }
        ),
    )?;
    if let Some((straggler, comparison)) = crate::report::straggler_lines(r) {
        doc.paragraph(&format!("Straggler: {straggler}"))?;
        doc.paragraph(&format!("GPU time against the median: {comparison}"))?;
    }
    let straggler = r.straggler.as_ref().map(|s| s.rank.as_str());
    let all: Vec<&BreakdownRow> = r.breakdown.iter().filter(|b| b.device == "all").collect();
    doc.heading(2, "Where the time went, per rank")?;
    let mut note = "Share of each rank's wall time; a moment counts once: compute > communication > memory > idle.".to_string();
    if all.len() > MAX_BARS {
        let _ = write!(
            note,
            " {} ranks in groups of {}: each bar is the group's mean; the straggler's own bar comes first.",
            all.len(),
            all.len().div_ceil(MAX_BARS)
        );
    }
    doc.paragraph(&note)?;
    doc.figure(&breakdown_svg(&all, straggler))?;
    doc.heading(2, "GPU utilisation per rank over time")?;
    let mut note = format!(
        "Time since the earliest rank's first event; colour: GPU busy share of the bin ({}).",
        heat_scale_note(heat_grid(r).2)
    );
    if r.heatmap.rows.len() > MAX_ROWS {
        let _ = write!(
            note,
            " {} ranks in groups of {}: each row is the group's mean utilisation; the straggler's own row comes first.",
            r.heatmap.rows.len(),
            r.heatmap.rows.len().div_ceil(MAX_ROWS)
        );
    }
    doc.paragraph(&note)?;
    doc.figure(&heatmap_svg(r))?;
    if !r.collective_summary.is_empty() {
        doc.heading(2, "Collectives across ranks")?;
        table(
            &mut doc,
            &[
                "instances",
                "skew mean us",
                "skew max us",
                "transfer mean us",
                "wait ms",
                "bytes",
                "bus GB/s",
                "most often last",
                "collective",
            ],
            r.collective_summary.iter().map(|c| {
                vec![
                    c.instances.to_string(),
                    format!("{:.3}", c.skew_mean_us),
                    format!("{:.3}", c.skew_max_us),
                    format!("{:.3}", c.transfer_mean_us),
                    format!("{:.3}", c.wait_total_us / 1e3),
                    c.bytes_total.to_string(),
                    c.bus_gbps_mean.map_or("-".into(), |b| format!("{b:.2}")),
                    c.most_often_last.clone(),
                    c.name.clone(),
                ]
            }),
        )?;
    }
    doc.heading(2, "Stragglers")?;
    let mut worst: Vec<&crate::report::StragglerRow> = r.stragglers.iter().collect();
    worst.sort_by(|a, b| {
        b.wait_caused_us
            .total_cmp(&a.wait_caused_us)
            .then(b.compute_vs_median_pct.total_cmp(&a.compute_vs_median_pct))
    });
    if worst.len() > 20 {
        doc.paragraph("The 20 ranks that caused the most wait, then the most compute time; all ranks are in the CSV/JSON.")?;
    }
    table(
        &mut doc,
        &[
            "GPU ms",
            "vs median %",
            "compute ms",
            "vs median %",
            "arrived last",
            "caused wait ms",
            "waited ms",
            "rank",
        ],
        worst.iter().take(20).map(|x| {
            vec![
                format!("{:.3}", x.gpu_time_us / 1e3),
                format!("{:+.1}", x.vs_median_pct),
                format!("{:.3}", x.compute_us / 1e3),
                format!("{:+.1}", x.compute_vs_median_pct),
                format!("{}/{}", x.arrived_last, x.collectives),
                format!("{:.3}", x.wait_caused_us / 1e3),
                format!("{:.3}", x.own_wait_us / 1e3),
                x.rank.clone(),
            ]
        }),
    )?;
    doc.heading(2, "Top kernels")?;
    table(
        &mut doc,
        &[
            "count",
            "total ms",
            "share %",
            "mean us",
            "p50 us",
            "p95 us",
            "max us",
            "kernel [category]",
        ],
        r.kernels.iter().take(20).map(|k| {
            vec![
                k.count.to_string(),
                format!("{:.3}", k.total_us / 1e3),
                format!("{:.2}", k.share_pct),
                format!("{:.3}", k.mean_us),
                format!("{:.3}", k.p50_us),
                format!("{:.3}", k.p95_us),
                format!("{:.3}", k.max_us),
                format!("{} [{}]", k.name, k.category),
            ]
        }),
    )?;
    doc.finish()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ticks_in_a_readable_unit() {
        assert_eq!(time_tick(0.0, 500.0), "0 us");
        assert_eq!(time_tick(100.0, 500.0), "100 us");
        assert_eq!(time_tick(220.0, 1100.0), "0.22 ms");
        assert_eq!(time_tick(1180.0, 5900.0), "1.18 ms");
        assert_eq!(time_tick(12.5e6, 60e6), "12.5 s");
        assert_eq!(time_tick(213_577.0, 1_067_885.0), "214 ms");
        assert_eq!(time_tick(0.0, 1_067_885.0), "0 ms");
        assert_eq!(time_tick(210_000.0, 1_050_000.0), "210 ms");
    }

    #[test]
    fn groups_never_exceed_the_maximum() {
        assert_eq!(groups(3, 64), vec![0..1, 1..2, 2..3]);
        let g = groups(4096, 256);
        assert_eq!(g.len(), 256);
        assert_eq!(g[0], 0..16);
        let g = groups(1000, 256);
        assert!(g.len() <= 256);
        assert_eq!(g.last().unwrap().end, 1000);
    }
}
