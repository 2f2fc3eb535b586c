//! The report's two pictures (docs/tracestat.md#html-page): the breakdown
//! bars per rank and the rank x time heatmap, as SVG for the page (drawn
//! with `unitrace_render`'s markup writer, palette and axis steps) and the
//! heatmap as text for the console.
//!
//! Readable from 1 to thousands of ranks: beyond [`MAX_BARS`] bars or
//! [`MAX_ROWS`] heatmap rows, consecutive ranks are grouped and a group
//! shows its mean, labelled with its rank range; the straggler keeps a row
//! of its own in front, so a group mean cannot hide it.

use unitrace_render::axis::linear_ticks;
use unitrace_render::palette::{self, Rgb};
use unitrace_render::svg::{Markup, FONT_FAMILY};

/// The data of the heatmap: the rows of its table (ranks, or groups of
/// consecutive ranks), the straggler's own row, the bins and their width.
pub struct HeatData<'a> {
    pub rows: Vec<HeatItem<'a>>,
    /// `(rank, utilisation per bin)` of the straggler, if one is named.
    pub straggler: Option<(&'a str, &'a [f64])>,
    pub bins: usize,
    pub bin_us: f64,
}

/// One row of the heatmap table: the ranks it stands for (the first and
/// last label, how many) and their mean utilisation 0..1 per bin.
pub struct HeatItem<'a> {
    pub first: &'a str,
    pub last: &'a str,
    pub ranks: usize,
    pub util: &'a [f64],
}

/// One drawn heatmap row: its label, whether it is the straggler's own
/// row set apart in front, and its utilisation per bin.
struct HeatLine {
    label: String,
    apart: bool,
    util: Vec<f64>,
}

/// One bar of the breakdown: the rank and its shares of its active window
/// (compute, communication, memory, idle).
pub struct Bar<'a> {
    pub rank: &'a str,
    pub shares: [f64; 4],
}

/// Breakdown bars drawn at most (more ranks are grouped).
pub const MAX_BARS: usize = 64;
/// Heatmap rows drawn at most (more ranks are grouped).
pub const MAX_ROWS: usize = 256;
/// The console heatmap: at most this many columns and rows.
const HEAT_COLUMNS: usize = 64;
const HEAT_ROWS: usize = 16;
/// Idle to busy, one character per tenth.
const HEAT_RAMP: &[u8] = b" .:-=+*#%@";

/// The classes of the breakdown and their colours (tab10; idle grey).
const CLASSES: [(&str, Rgb); 4] = [
    ("compute", palette::TAB10[0]),
    ("communication", palette::TAB10[1]),
    ("memory", palette::TAB10[2]),
    ("idle", palette::FAINT_GRID),
];

/// Left margin of both pictures: room for `ranks 4032-4095` and
/// `rank 4095 (straggler)` at 11 px.
const LABEL_WIDTH: f64 = 150.0;

/// Consecutive groups of `n` items split into at most `max` groups.
fn groups(n: usize, max: usize) -> Vec<std::ops::Range<usize>> {
    if n == 0 {
        return Vec::new();
    }
    let per = n.div_ceil(max);
    (0..n).step_by(per).map(|s| s..(s + per).min(n)).collect()
}

/// One drawn row: the ranks it stands for and its label.
pub struct Row {
    pub ranks: std::ops::Range<usize>,
    pub label: String,
    /// The straggler's own row in front of the groups (drawn taller).
    pub apart: bool,
}

/// Rows to draw: one per rank, or when there are more than `max` ranks,
/// groups of consecutive ranks with the straggler's own row first. The
/// straggler's row is marked either way.
pub fn rows_with_straggler(labels: &[&str], max: usize, straggler: Option<&str>) -> Vec<Row> {
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

/// The unit that keeps the numbers of a time axis spanning `span_us`
/// readable, and its size in us.
fn time_unit(span_us: f64) -> (&'static str, f64) {
    if span_us < 1e3 {
        ("us", 1.0)
    } else if span_us < 1e7 {
        ("ms", 1e3)
    } else {
        ("s", 1e6)
    }
}

/// A tick label: the value in `unit` with no more decimals than the step
/// needs (`0.25 ms`, `500 us`, `12.5 s`).
fn tick_label(value: f64, step: f64, unit: &str) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize
    };
    format!("{value:.decimals$} {unit}")
}

/// The breakdown bars: one bar per rank (or group), stacked shares of its
/// active window, with a legend and a 0-100% axis.
pub fn breakdown_svg(rows: &[Bar<'_>], straggler: Option<&str>) -> String {
    let labels: Vec<&str> = rows.iter().map(|r| r.rank).collect();
    let gs = rows_with_straggler(&labels, MAX_BARS, straggler);
    let (left, width, bar, gap) = (LABEL_WIDTH, 900.0, 14.0, 4.0);
    let height = 40.0 + gs.len() as f64 * (bar + gap) + 30.0;
    let w = left + width + 40.0;
    let mut m = Markup::new();
    svg_open(&mut m, w, height);
    legend(&mut m, left, 130.0, &CLASSES);
    for (j, g) in gs.iter().enumerate() {
        let y = 30.0 + j as f64 * (bar + gap);
        let n = g.ranks.len() as f64;
        let mean = |k: usize| {
            rows[g.ranks.clone()]
                .iter()
                .map(|r| r.shares[k])
                .sum::<f64>()
                / n
        };
        let parts = [mean(0), mean(1), mean(2), mean(3)];
        m.element(
            "text",
            &[
                ("class", "row-label".into()),
                ("x", (left - 6.0).into()),
                ("y", (y + bar - 3.0).into()),
                ("text-anchor", "end".into()),
            ],
            &g.label,
        );
        let mut x = left;
        for (k, p) in parts.iter().enumerate() {
            let wk = width * p / 100.0;
            if wk > 0.0 {
                m.open(
                    "rect",
                    &[
                        ("x", x.into()),
                        ("y", y.into()),
                        ("width", wk.into()),
                        ("height", bar.into()),
                        ("fill", CLASSES[k].1.hex().into()),
                    ],
                );
                m.element(
                    "title",
                    &[],
                    &format!("{}: {} {p:.2}%", g.label, CLASSES[k].0),
                );
                m.close("rect");
            }
            x += wk;
        }
    }
    let axis_y = 30.0 + gs.len() as f64 * (bar + gap) + 14.0;
    for t in 0..=4 {
        let x = left + width * t as f64 / 4.0;
        m.element(
            "text",
            &[
                ("x", x.into()),
                ("y", axis_y.into()),
                ("text-anchor", "middle".into()),
            ],
            &format!("{}%", t * 25),
        );
    }
    m.close("svg");
    m.into_string()
}

fn svg_open(m: &mut Markup, w: f64, h: f64) {
    m.open(
        "svg",
        &[
            ("xmlns", "http://www.w3.org/2000/svg".into()),
            ("width", w.into()),
            ("height", h.into()),
            ("viewBox", format!("0 0 {} {}", w.round(), h.round()).into()),
            ("font-family", FONT_FAMILY.into()),
            ("font-size", "11".into()),
        ],
    );
}

/// The heatmap's drawn rows: one per table row, or when there are more
/// than `max`, groups of consecutive table rows (their mean over ranks,
/// labelled with the rank range); whenever a drawn row stands for several
/// ranks, the straggler's own row comes first (as
/// [`rows_with_straggler`] does for bars).
fn heat_lines(hm: &HeatData<'_>, max: usize) -> Vec<HeatLine> {
    let ranks: usize = hm.rows.iter().map(|r| r.ranks).sum();
    let straggler = hm.straggler.map(|s| s.0);
    let mut lines: Vec<HeatLine> = groups(hm.rows.len(), max)
        .into_iter()
        .map(|g| {
            let items = &hm.rows[g];
            let (first, last) = (items[0].first, items[items.len() - 1].last);
            let n: usize = items.iter().map(|r| r.ranks).sum();
            let label = if n > 1 {
                format!("ranks {first}-{last}")
            } else if ranks > 1 && straggler == Some(first) {
                format!("rank {first} (straggler)")
            } else {
                format!("rank {first}")
            };
            let util = (0..hm.bins)
                .map(|b| {
                    items
                        .iter()
                        .map(|r| r.util[b] * r.ranks as f64)
                        .sum::<f64>()
                        / n.max(1) as f64
                })
                .collect();
            HeatLine {
                label,
                apart: false,
                util,
            }
        })
        .collect();
    if lines.len() < ranks {
        if let Some((rank, util)) = hm.straggler {
            lines.insert(
                0,
                HeatLine {
                    label: format!("rank {rank} (straggler)"),
                    apart: true,
                    util: util.to_vec(),
                },
            );
        }
    }
    lines
}

/// The utilisation the colour scale ends at: the busiest cell, or 100%
/// when a cell is (about) fully busy or none is busy at all.
pub fn heat_scale(top: f64) -> f64 {
    if top >= 0.995 || top <= 0.0 {
        1.0
    } else {
        top
    }
}

/// The rank x time heatmap: a row per rank (or group), a cell per bin
/// coloured by busy share (hover: rank, time, share), time ticks at round
/// values, and a colour bar.
pub fn heatmap_svg(hm: &HeatData<'_>) -> String {
    let gs = heat_lines(hm, MAX_ROWS);
    let top = gs.iter().flat_map(|g| &g.util).copied().fold(0.0, f64::max);
    let scale = heat_scale(top);
    let (left, width) = (LABEL_WIDTH, 1000.0);
    // The straggler's own row (when ranks are grouped) is at least 12 px
    // high and set 4 px apart; the groups share the rest of 800 px.
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
    let height = bottom + 80.0;
    let cell = width / hm.bins.max(1) as f64;
    let span_us = hm.bin_us * hm.bins as f64;
    let (unit, size) = time_unit(span_us);
    let mut m = Markup::new();
    svg_open(&mut m, left + width + 60.0, height);
    m.raw("<g shape-rendering=\"crispEdges\">");
    let mut last_label = f64::NEG_INFINITY;
    for (j, g) in gs.iter().enumerate() {
        let (y, rh) = (tops[j], if g.apart { apart_h } else { row_h });
        let baseline = y + (rh / 2.0).max(6.0) + 4.0;
        // Label every row when there is room, else the next row at least
        // 12 px below the last label.
        if baseline - last_label >= 12.0 {
            last_label = baseline;
            m.element(
                "text",
                &[
                    ("class", "row-label".into()),
                    ("x", (left - 6.0).into()),
                    ("y", baseline.into()),
                    ("text-anchor", "end".into()),
                ],
                &g.label,
            );
        }
        let mut b = 0;
        while b < hm.bins {
            let u = |b: usize| g.util[b] / scale;
            let (level, color) = palette::sequential(u(b));
            let mut e = b + 1;
            while e < hm.bins && palette::sequential(u(e)).0 == level {
                e += 1;
            }
            if level > 0 {
                let t0 = b as f64 * hm.bin_us / size;
                let t1 = e as f64 * hm.bin_us / size;
                m.open(
                    "rect",
                    &[
                        ("class", "cell".into()),
                        ("x", (left + b as f64 * cell).into()),
                        ("y", y.into()),
                        ("width", ((e - b) as f64 * cell).into()),
                        ("height", rh.into()),
                        ("fill", color.hex().into()),
                    ],
                );
                m.element(
                    "title",
                    &[],
                    &format!(
                        "{}: {t0:.3}-{t1:.3} {unit}: {:.1}% busy",
                        g.label,
                        100.0 * g.util[b]
                    ),
                );
                m.close("rect");
            }
            b = e;
        }
    }
    m.raw("</g>");
    m.empty(
        "rect",
        &[
            ("x", left.into()),
            ("y", 10.0.into()),
            ("width", width.into()),
            ("height", (bottom - 10.0).into()),
            ("fill", "none".into()),
            ("stroke", palette::FRAME.hex().into()),
        ],
    );
    time_axis(&mut m, span_us, (left, width, bottom));
    colour_bar(&mut m, scale, (left, bottom + 44.0));
    m.close("svg");
    m.into_string()
}

/// Ticks at round times below the heatmap, and the axis title.
fn time_axis(m: &mut Markup, span_us: f64, (left, width, bottom): (f64, f64, f64)) {
    let (unit, size) = time_unit(span_us);
    let span = span_us / size;
    let (ticks, step) = linear_ticks(0.0, span, 6, false);
    for t in ticks {
        let x = if span > 0.0 {
            left + width * t / span
        } else {
            left
        };
        m.empty(
            "line",
            &[
                ("x1", x.into()),
                ("y1", bottom.into()),
                ("x2", x.into()),
                ("y2", (bottom + 4.0).into()),
                ("stroke", palette::FRAME.hex().into()),
            ],
        );
        m.element(
            "text",
            &[
                ("x", x.into()),
                ("y", (bottom + 16.0).into()),
                ("text-anchor", "middle".into()),
            ],
            &tick_label(t, step, unit),
        );
    }
    m.element(
        "text",
        &[
            ("x", (left + width / 2.0).into()),
            ("y", (bottom + 32.0).into()),
            ("text-anchor", "middle".into()),
        ],
        "time since the earliest rank's first event",
    );
}

/// The colour scale: idle white to the darkest blue, labelled in percent
/// busy (the darkest blue is the busiest cell when none is fully busy).
fn colour_bar(m: &mut Markup, scale: f64, (x0, y0): (f64, f64)) {
    let (w, h) = (300.0, 10.0);
    let steps = palette::SEQUENTIAL_STEPS;
    for k in 0..steps {
        let (_, color) = palette::sequential(k as f64 / (steps - 1) as f64);
        m.empty(
            "rect",
            &[
                ("x", (x0 + w * k as f64 / steps as f64).into()),
                ("y", y0.into()),
                ("width", (w / steps as f64 + 0.5).into()),
                ("height", h.into()),
                ("fill", color.hex().into()),
            ],
        );
    }
    m.empty(
        "rect",
        &[
            ("x", x0.into()),
            ("y", y0.into()),
            ("width", w.into()),
            ("height", h.into()),
            ("fill", "none".into()),
            ("stroke", palette::FRAME.hex().into()),
        ],
    );
    let end = if scale == 1.0 {
        "100% busy".to_string()
    } else {
        format!("{:.3}% busy (the busiest cell)", 100.0 * scale)
    };
    m.element(
        "text",
        &[("x", x0.into()), ("y", (y0 + h + 13.0).into())],
        "idle",
    );
    m.element(
        "text",
        &[
            ("x", (x0 + w).into()),
            ("y", (y0 + h + 13.0).into()),
            ("text-anchor", "end".into()),
        ],
        &end,
    );
    m.element(
        "text",
        &[("x", (x0 + w + 10.0).into()), ("y", (y0 + h - 1.0).into())],
        "GPU busy share of the bin",
    );
}

/// The heatmap as text: one line per rank (or group of ranks, the
/// straggler on its own line first, as on the page), one character per
/// column of bins; and the caption saying what a character stands for.
pub fn heatmap_text(hm: &HeatData<'_>) -> Option<(String, String)> {
    if hm.rows.is_empty() || hm.bins == 0 {
        return None;
    }
    // `per` bins to a column (the last one may have fewer).
    let per = hm.bins.div_ceil(HEAT_COLUMNS);
    let cols = hm.bins.div_ceil(per);
    let rows = heat_lines(hm, HEAT_ROWS);
    let grid: Vec<Vec<f64>> = rows
        .iter()
        .map(|g| {
            (0..cols)
                .map(|c| {
                    let (b0, b1) = (c * per, ((c + 1) * per).min(hm.bins));
                    g.util[b0..b1].iter().sum::<f64>() / (b1 - b0).max(1) as f64
                })
                .collect()
        })
        .collect();
    // As on the page, the scale ends at the busiest cell when no cell is
    // fully busy, so that a mostly idle run still shows its pattern.
    let scale = heat_scale(grid.iter().flatten().copied().fold(0.0, f64::max));
    let caption = format!(
        // Under the section's heading, which names the figure already.
        "(a column = {:.3} ms; ' ' idle, then .:-=+*#% to '@' {})",
        hm.bin_us * per as f64 / 1e3,
        if scale == 1.0 {
            "fully busy".to_string()
        } else {
            format!("{:.3}% busy, the busiest cell", 100.0 * scale)
        }
    );
    let width = rows.iter().map(|g| g.label.len()).max().unwrap_or(0);
    let mut text = String::new();
    for (g, values) in rows.iter().zip(&grid) {
        let mut line = String::with_capacity(cols);
        for &value in values {
            let u = value / scale;
            let level = (u * (HEAT_RAMP.len() - 1) as f64).round() as usize;
            // Any real activity shows ('.'), but not the sliver that the
            // fine grid spreads past a busy stretch's edge
            // (docs/tracestat.md#heatmap).
            let level = if u >= 0.01 { level.max(1) } else { 0 };
            line.push(HEAT_RAMP[level.min(HEAT_RAMP.len() - 1)] as char);
        }
        text.push_str(&format!("{:>width$} |{line}|\n", g.label));
    }
    Some((caption, text))
}

/// The kinds of the critical path and their colours (tab10; idle grey), in
/// the order of its kinds (docs/tracestat.md#critical-path).
pub const PATH_KINDS: [(&str, Rgb); 7] = [
    ("compute", palette::TAB10[0]),
    ("communication", palette::TAB10[1]),
    ("memory", palette::TAB10[2]),
    ("launch", palette::TAB10[3]),
    ("host", palette::TAB10[4]),
    ("sync-wait", palette::TAB10[5]),
    ("idle", palette::FAINT_GRID),
];

/// A Gantt chart of one step's critical path over the ranks
/// (docs/tracestat.md#html-page): a row per rank the path visits, each
/// stretch a bar coloured by kind, a vertical line where the path moves to
/// another rank. `items`: `(rank index, kind index into [`PATH_KINDS`],
/// name, start us since the step's start, length us)`, in path order.
pub fn path_gantt_svg(labels: &[String], items: &[(usize, usize, String, f64, f64)]) -> String {
    let mut ranks: Vec<usize> = items.iter().map(|i| i.0).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let row_of = |r: usize| ranks.iter().position(|&x| x == r).unwrap_or(0);
    let span = items
        .iter()
        .map(|i| i.3 + i.4)
        .fold(0.0, f64::max)
        .max(1e-9);
    let (left, width, bar, gap) = (LABEL_WIDTH, 900.0, 16.0, 6.0);
    let top = 30.0;
    let height = top + ranks.len() as f64 * (bar + gap) + 40.0;
    let w = left + width + 40.0;
    let x_of = |t: f64| left + width * t / span;
    let mut m = Markup::new();
    svg_open(&mut m, w, height);
    legend(&mut m, left, 125.0, &PATH_KINDS);
    for (row, r) in ranks.iter().enumerate() {
        let y = top + row as f64 * (bar + gap);
        let label = format!("rank {}", labels.get(*r).map_or("?", String::as_str));
        m.element(
            "text",
            &[
                ("class", "row-label".into()),
                ("x", (left - 6.0).into()),
                ("y", (y + bar - 3.0).into()),
                ("text-anchor", "end".into()),
            ],
            &label,
        );
    }
    let (unit, scale) = time_unit(span);
    let mut prev: Option<(usize, f64)> = None;
    for (r, kind, name, start, dur) in items {
        let row = row_of(*r);
        let y = top + row as f64 * (bar + gap);
        let k = (*kind).min(PATH_KINDS.len() - 1);
        if let Some((prow, px)) = prev {
            if prow != row {
                let (y0, y1) = (top + prow as f64 * (bar + gap) + bar / 2.0, y + bar / 2.0);
                m.empty(
                    "line",
                    &[
                        ("x1", px.into()),
                        ("x2", px.into()),
                        ("y1", y0.into()),
                        ("y2", y1.into()),
                        ("stroke", "#333333".into()),
                        ("stroke-dasharray", "3,2".into()),
                    ],
                );
            }
        }
        let (x0, x1) = (x_of(*start), x_of(start + dur));
        m.open(
            "rect",
            &[
                ("x", x0.into()),
                ("y", y.into()),
                ("width", (x1 - x0).max(0.5).into()),
                ("height", bar.into()),
                ("fill", PATH_KINDS[k].1.hex().into()),
            ],
        );
        m.element(
            "title",
            &[],
            &format!(
                "rank {}: {} {name}: {} at {}",
                labels.get(*r).map_or("?", String::as_str),
                PATH_KINDS[k].0,
                tick_label(dur / scale, dur / scale / 10.0, unit),
                tick_label(start / scale, span / scale / 1000.0, unit)
            ),
        );
        m.close("rect");
        prev = Some((row, x1));
    }
    let axis_y = top + ranks.len() as f64 * (bar + gap) + 14.0;
    let (ticks, step) = linear_ticks(0.0, span / scale, 6, false);
    for t in ticks {
        m.element(
            "text",
            &[
                ("x", x_of(t * scale).into()),
                ("y", axis_y.into()),
                ("text-anchor", "middle".into()),
            ],
            &tick_label(t, step, unit),
        );
    }
    m.close("svg");
    m.into_string()
}

/// A legend row at the top of a figure: a swatch and a name per entry,
/// `step` apart from `left` on.
fn legend(m: &mut Markup, left: f64, step: f64, entries: &[(&str, Rgb)]) {
    for (i, (name, color)) in entries.iter().enumerate() {
        let x = left + i as f64 * step;
        m.empty(
            "rect",
            &[
                ("x", x.into()),
                ("y", 6.0.into()),
                ("width", 12.0.into()),
                ("height", 12.0.into()),
                ("fill", color.hex().into()),
            ],
        );
        m.element(
            "text",
            &[("x", (x + 16.0).into()), ("y", 16.0.into())],
            name,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_in_a_readable_unit() {
        assert_eq!(time_unit(500.0), ("us", 1.0));
        assert_eq!(time_unit(5900.0), ("ms", 1e3));
        assert_eq!(time_unit(60e6), ("s", 1e6));
        let (ticks, step) = linear_ticks(0.0, 1.0679, 6, false);
        assert_eq!(step, 0.2);
        assert_eq!(tick_label(ticks[2], step, "ms"), "0.4 ms");
        let (ticks, step) = linear_ticks(0.0, 586.0, 6, false);
        assert_eq!(step, 100.0);
        assert_eq!(tick_label(ticks[3], step, "ms"), "300 ms");
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
