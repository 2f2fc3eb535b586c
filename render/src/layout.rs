//! Lays out one [`Page`] on a [`Canvas`]: axes, ticks, grid, series,
//! legend and title, with matplotlib's default geometry (see the module
//! documentation of the crate).

use crate::canvas::{Align, Canvas, TextRun};
use crate::font::{metrics, text_width};
use crate::model::{Chart, ChartKind, Page};
use crate::number::{shortest, tick_labels};
use crate::palette::{series_color, Rgb, GRID, LEGEND_EDGE};

/// Page size: matplotlib's default figure, 6.4 x 4.8 inches.
pub const PAGE_WIDTH: f32 = 460.8;
pub const PAGE_HEIGHT: f32 = 345.6;

/// Where text pages start (matplotlib's default axes corner, origin
/// top-left); chart frames are computed per chart like `tight_layout`.
const AX_LEFT: f32 = 0.125 * PAGE_WIDTH;
const AX_TOP: f32 = (1.0 - 0.88) * PAGE_HEIGHT;

const LABEL_SIZE: f32 = 10.0;
const TITLE_SIZE: f32 = 8.0;
const LEGEND_SIZE: f32 = 4.0;
const TICK_LEN: f32 = 3.5;
const TICK_PAD: f32 = 3.5;
const LABEL_PAD: f32 = 4.0;
const TITLE_PAD: f32 = 6.0;
/// Font size of metric-chart tick labels (matplotlib default) and of
/// stall-chart ticks (`fontsize=6`), and of the rotated IP labels.
const TICK_SIZE: f32 = 10.0;
const STALL_TICK_SIZE: f32 = 6.0;
const IP_LABEL_SIZE: f32 = 4.0;
/// Text pages (docs/compatibility.md#analyze-report-pages).
const TEXT_PAGE_SIZE: f32 = 4.0;

/// Draws one page.
pub fn draw_page(page: &Page, canvas: &mut dyn Canvas) {
    match page {
        Page::Chart(chart) => draw_chart(chart, canvas),
        Page::Text(lines) => draw_text_page(lines, canvas),
    }
}

fn draw_text_page(lines: &[String], canvas: &mut dyn Canvas) {
    let step = TEXT_PAGE_SIZE * 1.2;
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            continue;
        }
        canvas.text(&TextRun {
            x: AX_LEFT,
            y: AX_TOP + step * (i as f32 + 1.0),
            size: TEXT_PAGE_SIZE,
            align: Align::Left,
            rotated: false,
            color: Rgb::BLACK,
            text: line,
        });
    }
}

/// A linear mapping from data to page coordinates along one axis.
#[derive(Debug, Clone, Copy)]
struct Scale {
    lo: f64,
    hi: f64,
    p0: f32,
    p1: f32,
}

impl Scale {
    fn map(&self, v: f64) -> f32 {
        let t = if self.hi > self.lo {
            (v - self.lo) / (self.hi - self.lo)
        } else {
            0.5
        };
        self.p0 + (self.p1 - self.p0) * t as f32
    }
}

/// Data limits of the Y axis: data range plus 5 % margins (matplotlib
/// `axes.ymargin`); bars stand on 0, which stays the edge (sticky edge).
fn y_limits(chart: &Chart) -> (f64, f64) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for s in &chart.series {
        for &(_, y) in &s.points {
            if y.is_finite() {
                lo = lo.min(y);
                hi = hi.max(y);
            }
        }
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if chart.kind == ChartKind::Bar {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    let (lo, hi) = nonsingular(lo, hi);
    let m = (hi - lo) * 0.05;
    if chart.kind == ChartKind::Bar {
        let lo2 = if lo == 0.0 { 0.0 } else { lo - m };
        let hi2 = if hi == 0.0 { 0.0 } else { hi + m };
        (lo2, hi2)
    } else {
        (lo - m, hi + m)
    }
}

/// Widens an empty range the way matplotlib does for a constant series
/// (±5 % of the value, ±0.05 around zero).
fn nonsingular(lo: f64, hi: f64) -> (f64, f64) {
    if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (-0.05, 0.05)
    } else {
        let d = lo.abs() * 0.05;
        (lo - d, hi + d)
    }
}

/// The axes rectangle of one chart, origin top-left.
#[derive(Debug, Clone, Copy)]
struct Frame {
    left: f32,
    right: f32,
    top: f32,
    bottom: f32,
}

/// Padding of matplotlib's `tight_layout` (1.08 x the 10 pt font size),
/// which the original calls before saving every chart.
const TIGHT_PAD: f32 = 1.08 * 10.0;

/// Ticks of one axis: positions, their labels and the factor or offset
/// matplotlib writes once at the axis' end instead of in every label.
struct Ticks {
    values: Vec<f64>,
    labels: Vec<String>,
    offset: Option<String>,
}

impl Ticks {
    fn new(lo: f64, hi: f64, integer: bool) -> Ticks {
        let (values, step) = crate::axis::linear_ticks(lo, hi, 9, integer);
        let (labels, offset) = tick_labels(&values, step);
        Ticks {
            values,
            labels,
            offset,
        }
    }
}

/// Where everything of one chart goes, computed before anything is drawn:
/// the ticks and labels decide the frame, as `tight_layout` does.
struct ChartLayout {
    tick_size: f32,
    y_ticks: Ticks,
    max_ylabel_w: f32,
    x_ticks: Ticks,
    /// Labels at every category position (bars, the stall charts' IPs),
    /// drawn rotated instead of the numeric X ticks.
    category_labels: Option<Vec<String>>,
    category_size: f32,
    /// Height of the X tick labels below the ticks.
    xtick_depth: f32,
    title: Vec<String>,
    frame: Frame,
    xs: Scale,
    ys: Scale,
}

impl ChartLayout {
    fn new(chart: &Chart) -> ChartLayout {
        let stall_style = chart.x_tick_labels.is_some();
        let tick_size = if stall_style {
            STALL_TICK_SIZE
        } else {
            TICK_SIZE
        };

        // --- data limits and tick labels (independent of the frame) ------
        let (x_lo, x_hi) = x_limits(chart);
        let (y_lo, y_hi) = y_limits(chart);
        let y_ticks = Ticks::new(y_lo, y_hi, false);
        let max_ylabel_w = y_ticks
            .labels
            .iter()
            .map(|l| text_width(l, tick_size))
            .fold(0.0f32, f32::max);
        let category_labels = category_labels(chart);
        let category_size = if stall_style {
            IP_LABEL_SIZE
        } else {
            tick_size
        };
        // Whole-number steps for sample ordinals; X values with fractions
        // (analyze `--x time`, µs) get 1-2-2.5-5 steps below 1 too.
        let integer_x = chart
            .series
            .iter()
            .flat_map(|s| &s.points)
            .all(|p| p.0.fract() == 0.0 || !p.0.is_finite());
        // Large X values (times of long instances) are written once as a
        // factor at the axis' right end, as matplotlib does.
        let x_ticks = Ticks::new(x_lo, x_hi, integer_x);
        let xtick_depth = match &category_labels {
            Some(labels) => labels
                .iter()
                .map(|l| text_width(l, category_size))
                .fold(0.0f32, f32::max),
            None => tick_size * 1.17,
        };
        let right_overhang = match &category_labels {
            Some(_) => 0.0,
            None => x_ticks
                .labels
                .last()
                .map(|l| text_width(l, tick_size) / 2.0)
                .unwrap_or(0.0),
        };

        // --- frame: what tight_layout leaves for the axes -----------------
        let left = TIGHT_PAD + y_label_w_of(chart) + max_ylabel_w + TICK_PAD + TICK_LEN;
        let right = PAGE_WIDTH - TIGHT_PAD - right_overhang;
        // The title is centred over the axes, which sit right of the page's
        // centre: wrap it at the width that fits around that centre.
        let title = title_lines(&chart.title_lines, title_center(left, right));
        let title_h = title.len() as f32 * TITLE_SIZE * 1.2;
        let x_label_h = if chart.x_label.is_empty() {
            0.0
        } else {
            LABEL_SIZE * 1.17 + LABEL_PAD
        };
        let offset_h = if y_ticks.offset.is_some() {
            tick_size * 1.4
        } else {
            0.0
        };
        let frame = Frame {
            left,
            right,
            top: TIGHT_PAD + title_h.max(offset_h) + TITLE_PAD,
            bottom: PAGE_HEIGHT - TIGHT_PAD - x_label_h - xtick_depth - TICK_PAD - TICK_LEN,
        }
        .clamped();
        let xs = Scale {
            lo: x_lo,
            hi: x_hi,
            p0: frame.left,
            p1: frame.right,
        };
        let ys = Scale {
            lo: y_lo,
            hi: y_hi,
            p0: frame.bottom,
            p1: frame.top,
        };
        ChartLayout {
            tick_size,
            y_ticks,
            max_ylabel_w,
            x_ticks,
            category_labels,
            category_size,
            xtick_depth,
            title,
            frame,
            xs,
            ys,
        }
    }

    /// Top of the X tick labels.
    fn tick_top(&self) -> f32 {
        self.frame.bottom + TICK_LEN + TICK_PAD
    }

    /// Baseline of the text under the X tick labels (axis label, factor).
    fn below_ticks_baseline(&self) -> f32 {
        (self.tick_top() + self.xtick_depth + LABEL_PAD + LABEL_SIZE * 0.76).min(PAGE_HEIGHT - 2.0)
    }
}

impl Frame {
    /// Pathological labels (a huge IP text) must not invert the frame.
    fn clamped(self) -> Frame {
        Frame {
            left: self.left.min(PAGE_WIDTH * 0.5),
            right: self.right.max(PAGE_WIDTH * 0.6),
            top: self.top.min(PAGE_HEIGHT * 0.4),
            bottom: self.bottom.max(PAGE_HEIGHT * 0.5),
        }
    }
}

/// Data limits of the X axis. Bars: one category per point of the longest
/// series at 0..n-1; lines: data X values with 5 % margins.
fn x_limits(chart: &Chart) -> (f64, f64) {
    match chart.kind {
        ChartKind::Bar => {
            let n_points = chart
                .series
                .iter()
                .map(|s| s.points.len())
                .max()
                .unwrap_or(0);
            (-0.5, n_points.max(1) as f64 - 0.5)
        }
        ChartKind::Line => {
            let mut lo = f64::INFINITY;
            let mut hi = f64::NEG_INFINITY;
            for s in &chart.series {
                for &(x, _) in &s.points {
                    if x.is_finite() {
                        lo = lo.min(x);
                        hi = hi.max(x);
                    }
                }
            }
            if !lo.is_finite() {
                (0.0, 1.0)
            } else {
                let (lo, hi) = nonsingular(lo, hi);
                let m = (hi - lo) * 0.05;
                (lo - m, hi + m)
            }
        }
    }
}

/// Category labels (every position, rotated 90°: pandas bar charts and
/// the stall charts' IP labels), or `None` for numeric X ticks.
fn category_labels(chart: &Chart) -> Option<Vec<String>> {
    match (&chart.x_tick_labels, chart.kind) {
        (Some(l), _) => Some(l.clone()),
        (None, ChartKind::Bar) => Some(
            chart
                .series
                .first()
                .map(|s| s.points.iter().map(|p| shortest(p.0)).collect())
                .unwrap_or_default(),
        ),
        (None, ChartKind::Line) => None,
    }
}

fn draw_chart(chart: &Chart, canvas: &mut dyn Canvas) {
    let layout = ChartLayout::new(chart);
    draw_y_ticks(&layout, canvas);
    match chart.kind {
        ChartKind::Line => draw_lines(chart, &layout, canvas),
        ChartKind::Bar => draw_bars(chart, &layout, canvas),
    }
    draw_spines(&layout.frame, canvas);
    draw_x_ticks(&layout, canvas);
    draw_axis_labels(chart, &layout, canvas);
    draw_title(&layout.title, &layout.frame, canvas);
    draw_legend(chart, &layout.frame, &layout.xs, &layout.ys, canvas);
}

/// The horizontal grid, the Y ticks with their labels and the Y factor.
fn draw_y_ticks(layout: &ChartLayout, canvas: &mut dyn Canvas) {
    let (frame, tick_size) = (&layout.frame, layout.tick_size);
    for (v, label) in layout.y_ticks.values.iter().zip(&layout.y_ticks.labels) {
        let y = layout.ys.map(*v);
        canvas.polyline(&[(frame.left, y), (frame.right, y)], GRID, 0.8);
        canvas.polyline(
            &[(frame.left - TICK_LEN, y), (frame.left, y)],
            Rgb::BLACK,
            0.8,
        );
        canvas.text(&TextRun {
            x: frame.left - TICK_LEN - TICK_PAD,
            y: y + tick_size * 0.36,
            size: tick_size,
            align: Align::Right,
            rotated: false,
            color: Rgb::BLACK,
            text: label,
        });
    }
    if let Some(off) = &layout.y_ticks.offset {
        canvas.text(&TextRun {
            x: frame.left,
            y: frame.top - 4.0,
            size: tick_size,
            align: Align::Left,
            rotated: false,
            color: Rgb::BLACK,
            text: off,
        });
    }
}

/// One polyline per run of finite points of each series: a missing value
/// breaks the line, as in matplotlib.
fn draw_lines(chart: &Chart, layout: &ChartLayout, canvas: &mut dyn Canvas) {
    for (i, s) in chart.series.iter().enumerate() {
        let color = series_color(i);
        let mut run: Vec<(f32, f32)> = Vec::with_capacity(s.points.len());
        for &(x, y) in &s.points {
            if x.is_finite() && y.is_finite() {
                run.push((layout.xs.map(x), layout.ys.map(y)));
            } else {
                if run.len() >= 2 {
                    canvas.polyline(&run, color, 1.5);
                }
                run.clear();
            }
        }
        if run.len() >= 2 {
            canvas.polyline(&run, color, 1.5);
        }
    }
}

fn draw_bars(chart: &Chart, layout: &ChartLayout, canvas: &mut dyn Canvas) {
    let (xs, ys) = (&layout.xs, &layout.ys);
    // pandas: the group of k bars spans 0.5 of a category.
    let k = chart.series.len().max(1) as f64;
    let w = 0.5 / k;
    for (i, s) in chart.series.iter().enumerate() {
        for (pos, &(_, y)) in s.points.iter().enumerate() {
            if !y.is_finite() {
                continue;
            }
            let left = pos as f64 - 0.25 + w * i as f64;
            let (px0, px1) = (xs.map(left), xs.map(left + w));
            let (py0, py1) = (ys.map(y.max(0.0).max(ys.lo)), ys.map(y.min(0.0).max(ys.lo)));
            canvas.rect(px0, py0, px1 - px0, py1 - py0, series_color(i), None);
        }
    }
}

fn draw_spines(frame: &Frame, canvas: &mut dyn Canvas) {
    canvas.polyline(
        &[
            (frame.left, frame.top),
            (frame.right, frame.top),
            (frame.right, frame.bottom),
            (frame.left, frame.bottom),
            (frame.left, frame.top),
        ],
        Rgb::BLACK,
        0.8,
    );
}

/// The X ticks: rotated labels at every category, or numeric ticks with
/// their factor at the axis' right end.
fn draw_x_ticks(layout: &ChartLayout, canvas: &mut dyn Canvas) {
    let (frame, tick_top) = (&layout.frame, layout.tick_top());
    let tick = |canvas: &mut dyn Canvas, x: f32| {
        canvas.polyline(
            &[(x, frame.bottom), (x, frame.bottom + TICK_LEN)],
            Rgb::BLACK,
            0.8,
        )
    };
    if let Some(labels) = &layout.category_labels {
        for (pos, label) in labels.iter().enumerate() {
            let x = layout.xs.map(pos as f64);
            tick(canvas, x);
            canvas.text(&TextRun {
                x: x + layout.category_size * 0.36,
                y: tick_top,
                size: layout.category_size,
                align: Align::Right,
                rotated: true,
                color: Rgb::BLACK,
                text: label,
            });
        }
        return;
    }
    for (v, label) in layout.x_ticks.values.iter().zip(&layout.x_ticks.labels) {
        let x = layout.xs.map(*v);
        tick(canvas, x);
        canvas.text(&TextRun {
            x,
            y: tick_top + layout.tick_size * 0.76,
            size: layout.tick_size,
            align: Align::Center,
            rotated: false,
            color: Rgb::BLACK,
            text: label,
        });
    }
    if let Some(off) = &layout.x_ticks.offset {
        canvas.text(&TextRun {
            x: frame.right,
            y: layout.below_ticks_baseline(),
            size: layout.tick_size,
            align: Align::Right,
            rotated: false,
            color: Rgb::BLACK,
            text: off,
        });
    }
}

fn draw_axis_labels(chart: &Chart, layout: &ChartLayout, canvas: &mut dyn Canvas) {
    let frame = &layout.frame;
    if !chart.x_label.is_empty() {
        canvas.text(&TextRun {
            x: (frame.left + frame.right) / 2.0,
            y: layout.below_ticks_baseline(),
            size: LABEL_SIZE,
            align: Align::Center,
            rotated: false,
            color: Rgb::BLACK,
            text: &chart.x_label,
        });
    }
    if !chart.y_label.is_empty() {
        let right = frame.left - TICK_LEN - TICK_PAD - layout.max_ylabel_w - LABEL_PAD;
        canvas.text(&TextRun {
            x: (right - LABEL_SIZE * 0.24).max(LABEL_SIZE),
            y: (frame.top + frame.bottom) / 2.0,
            size: LABEL_SIZE,
            align: Align::Center,
            rotated: true,
            color: Rgb::BLACK,
            text: &chart.y_label,
        });
    }
}

/// Breaks `text` into lines no wider than `max_w` at `size`, preferring
/// spaces, else cutting inside a word (kernel names can be long tokens).
pub fn wrap(text: &str, size: f32, max_w: f32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_inclusive(' ') {
        let candidate = format!("{line}{word}");
        if text_width(candidate.trim_end(), size) <= max_w {
            line = candidate;
            continue;
        }
        if !line.trim_end().is_empty() {
            lines.push(line.trim_end().to_string());
            line = String::new();
        }
        // The word alone may still be too wide: cut it by characters.
        for c in word.chars() {
            line.push(c);
            if text_width(line.trim_end(), size) > max_w && line.chars().count() > 1 {
                line.pop();
                lines.push(std::mem::take(&mut line));
                line.push(c);
            }
        }
    }
    if !line.trim_end().is_empty() || lines.is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// Width of the Y axis label and its padding.
fn y_label_w_of(chart: &Chart) -> f32 {
    if chart.y_label.is_empty() {
        0.0
    } else {
        LABEL_SIZE * 1.17 + LABEL_PAD
    }
}

/// Where title lines are centred: over the axes (`left..right` before the
/// frame is clamped), as matplotlib centres `Axes.set_title`.
fn title_center(left: f32, right: f32) -> f32 {
    let left = left.min(PAGE_WIDTH * 0.5);
    let right = right.max(PAGE_WIDTH * 0.6);
    (left + right) / 2.0
}

/// Space kept between a title line and the page edge.
const TITLE_MARGIN: f32 = 6.0;

/// The title lines, each wrapped so that, centred at `center`, it stays
/// inside the page with [`TITLE_MARGIN`] to spare (matplotlib `wrap=True`
/// wraps at the figure edge the same way: twice the distance from the
/// anchor to the nearer edge). Nothing is cut: a token wider than that is
/// broken between characters.
fn title_lines(title_lines: &[String], center: f32) -> Vec<String> {
    let max_w = 2.0 * (center.min(PAGE_WIDTH - center) - TITLE_MARGIN);
    title_lines
        .iter()
        .flat_map(|l| wrap(l, TITLE_SIZE, max_w))
        .collect()
}

fn draw_title(lines: &[String], frame: &Frame, canvas: &mut dyn Canvas) {
    let step = TITLE_SIZE * 1.2;
    let last_baseline = frame.top - TITLE_PAD - TITLE_SIZE * 0.24;
    let n = lines.len();
    for (i, line) in lines.iter().enumerate() {
        let y = last_baseline - step * (n - 1 - i) as f32;
        canvas.text(&TextRun {
            x: (frame.left + frame.right) / 2.0,
            y: y.max(TITLE_SIZE),
            size: TITLE_SIZE,
            align: Align::Center,
            rotated: false,
            color: Rgb::BLACK,
            text: line,
        });
    }
}

/// Legend placement candidates in matplotlib's order for `loc='best'`
/// (ties keep the earlier one): fractions of the free axes space.
const LEGEND_SPOTS: [(f32, f32); 9] = [
    (1.0, 0.0), // upper right
    (0.0, 0.0), // upper left
    (0.0, 1.0), // lower left
    (1.0, 1.0), // lower right
    (0.0, 0.5), // center left
    (1.0, 0.5), // center right
    (0.5, 1.0), // lower center
    (0.5, 0.0), // upper center
    (0.5, 0.5), // center
];

fn draw_legend(chart: &Chart, frame: &Frame, xs: &Scale, ys: &Scale, canvas: &mut dyn Canvas) {
    if chart.series.is_empty() {
        return;
    }
    let size = LEGEND_SIZE;
    let border_pad = 0.4 * size;
    let handle_len = 2.0 * size;
    let handle_pad = 0.8 * size;
    let row_h = size * 1.17;
    let row_gap = 0.5 * size;
    let axes_pad = 0.5 * size;
    let text_w = chart
        .series
        .iter()
        .map(|s| text_width(&s.name, size))
        .fold(0.0f32, f32::max);
    let n = chart.series.len() as f32;
    let box_w = 2.0 * border_pad + handle_len + handle_pad + text_w;
    let box_h = 2.0 * border_pad + n * row_h + (n - 1.0) * row_gap;

    // What the legend would hide at each candidate spot, scored like
    // matplotlib's `loc='best'`: data vertices inside the box plus line
    // segments crossing it (bars: bars overlapping it).
    let runs: Vec<Vec<(f32, f32)>> = match chart.kind {
        ChartKind::Line => chart
            .series
            .iter()
            .map(|s| {
                s.points
                    .iter()
                    .filter(|(x, y)| x.is_finite() && y.is_finite())
                    .map(|&(x, y)| (xs.map(x), ys.map(y)))
                    .collect()
            })
            .collect(),
        ChartKind::Bar => Vec::new(),
    };
    let bars: Vec<[f32; 4]> = match chart.kind {
        ChartKind::Bar => {
            let k = chart.series.len().max(1) as f64;
            let w = 0.5 / k;
            chart
                .series
                .iter()
                .enumerate()
                .flat_map(|(i, s)| {
                    s.points
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| p.1.is_finite())
                        .map(move |(pos, p)| {
                            let left = pos as f64 - 0.25 + w * i as f64;
                            (left, left + w, p.1)
                        })
                })
                .map(|(x0, x1, y)| {
                    let (a, b) = (ys.map(y.max(0.0)), ys.map(y.min(0.0)));
                    [xs.map(x0), a.min(b), xs.map(x1), a.max(b)]
                })
                .collect()
        }
        ChartKind::Line => Vec::new(),
    };
    let free_w = (frame.right - frame.left - 2.0 * axes_pad - box_w).max(0.0);
    let free_h = (frame.bottom - frame.top - 2.0 * axes_pad - box_h).max(0.0);
    let mut best = (usize::MAX, frame.left, frame.top);
    for (fx, fy) in LEGEND_SPOTS {
        let bx = frame.left + axes_pad + fx * free_w;
        let by = frame.top + axes_pad + fy * free_h;
        let r = [bx, by, bx + box_w, by + box_h];
        let inside = |p: &(f32, f32)| p.0 >= r[0] && p.0 <= r[2] && p.1 >= r[1] && p.1 <= r[3];
        let mut hidden = 0usize;
        for run in &runs {
            hidden += run.iter().filter(|p| inside(p)).count();
            hidden += run
                .windows(2)
                .filter(|w| segment_hits_rect(w[0], w[1], r))
                .count();
        }
        hidden += bars
            .iter()
            .filter(|b| b[0] < r[2] && b[2] > r[0] && b[1] < r[3] && b[3] > r[1])
            .count();
        if hidden < best.0 {
            best = (hidden, bx, by);
        }
        if hidden == 0 {
            break;
        }
    }
    let (_, bx, by) = best;
    canvas.rect(bx, by, box_w, box_h, Rgb::WHITE, Some((LEGEND_EDGE, 0.5)));
    let (asc, _, _) = metrics().vertical_milli();
    for (i, s) in chart.series.iter().enumerate() {
        let top = by + border_pad + i as f32 * (row_h + row_gap);
        let mid = top + row_h / 2.0;
        let hx = bx + border_pad;
        match chart.kind {
            ChartKind::Line => {
                canvas.polyline(&[(hx, mid), (hx + handle_len, mid)], series_color(i), 1.0)
            }
            ChartKind::Bar => canvas.rect(
                hx,
                top + row_h * 0.15,
                handle_len,
                row_h * 0.7,
                series_color(i),
                None,
            ),
        }
        canvas.text(&TextRun {
            x: hx + handle_len + handle_pad,
            y: top + size * asc / 1000.0 * 0.9,
            size,
            align: Align::Left,
            rotated: false,
            color: Rgb::BLACK,
            text: &s.name,
        });
    }
}

/// Whether the segment a-b crosses the rectangle `[x0, y0, x1, y1]`
/// (Liang-Barsky clipping).
fn segment_hits_rect(a: (f32, f32), b: (f32, f32), r: [f32; 4]) -> bool {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let mut t0 = 0.0f32;
    let mut t1 = 1.0f32;
    for (p, q) in [
        (-dx, a.0 - r[0]),
        (dx, r[2] - a.0),
        (-dy, a.1 - r[1]),
        (dy, r[3] - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
        } else {
            let t = q / p;
            if p < 0.0 {
                t0 = t0.max(t);
            } else {
                t1 = t1.min(t);
            }
            if t0 > t1 {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_crossing_rectangles() {
        let r = [0.0, 0.0, 10.0, 10.0];
        assert!(segment_hits_rect((-5.0, 5.0), (15.0, 5.0), r));
        assert!(segment_hits_rect((1.0, 1.0), (2.0, 2.0), r));
        assert!(!segment_hits_rect((-5.0, -5.0), (-1.0, 20.0), r));
        assert!(!segment_hits_rect((11.0, 0.0), (20.0, 10.0), r));
    }

    #[test]
    fn ticks_match_matplotlib_steps() {
        // Data 0..60 with margins: matplotlib shows 0,10,…,60.
        let (t, s) = crate::axis::linear_ticks(-3.0, 64.75, 9, false);
        assert_eq!(s, 10.0);
        assert_eq!(t, vec![0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]);
        // A constant 1550 series: 1480..1620 in steps of 20.
        let (lo, hi) = nonsingular(1550.0, 1550.0);
        let m = (hi - lo) * 0.05;
        let (t, _) = crate::axis::linear_ticks(lo - m, hi + m, 9, false);
        assert_eq!(t.first(), Some(&1480.0));
        assert_eq!(t.last(), Some(&1620.0));
        // Integer X ticks never go below a step of 1.
        let (t, s) = crate::axis::linear_ticks(-0.25, 5.25, 9, true);
        assert_eq!(s, 1.0);
        assert_eq!(t.len(), 6);
    }

    /// Records the horizontal extent of every text run.
    struct Extents(Vec<(f32, f32, String)>);

    impl Canvas for Extents {
        fn polyline(&mut self, _: &[(f32, f32)], _: Rgb, _: f32) {}
        fn rect(&mut self, _: f32, _: f32, _: f32, _: f32, _: Rgb, _: Option<(Rgb, f32)>) {}
        fn text(&mut self, run: &TextRun<'_>) {
            if run.rotated {
                return;
            }
            let w = text_width(run.text, run.size);
            let left = match run.align {
                Align::Left => run.x,
                Align::Center => run.x - w / 2.0,
                Align::Right => run.x - w,
            };
            self.0.push((left, left + w, run.text.to_string()));
        }
    }

    #[test]
    fn titles_stay_inside_the_page_whatever_the_frame() {
        let name = "main::{lambda(sycl::_V1::handler&)#1}::operator()(sycl::_V1::handler&) \
                    const::{lambda(sycl::_V1::nd_item<1>)#1}[SIMD16 {1024; 1; 1} {256; 1; 1}]";
        let token = "x".repeat(400);
        for y in [1.0, 1e9, -123456.789] {
            let chart = Chart {
                title_lines: vec![
                    "Performance Metrics".into(),
                    format!("({name})"),
                    token.clone(),
                ],
                x_label: "Time(in sampling intervals)".into(),
                y_label: "Throughput(GB/s)".into(),
                series: vec![crate::model::Series {
                    name: "A".into(),
                    points: vec![(1.0, y), (2.0, y * 2.0)],
                }],
                kind: ChartKind::Line,
                x_tick_labels: None,
            };
            let mut canvas = Extents(Vec::new());
            draw_page(&Page::Chart(chart), &mut canvas);
            let mut drawn = String::new();
            for (left, right, text) in &canvas.0 {
                assert!(
                    *left >= 0.0 && *right <= PAGE_WIDTH,
                    "{text:?}: {left}..{right}"
                );
                drawn.push_str(text);
            }
            let squeezed: String = drawn.split_whitespace().collect();
            let name: String = name.split_whitespace().collect();
            assert!(squeezed.contains(&name), "the name is drawn whole");
            assert!(squeezed.contains(&token), "the long token is drawn whole");
        }
    }

    #[test]
    fn wrap_breaks_long_titles() {
        let long = "(".to_string() + &"abc ".repeat(60) + ")";
        let lines = wrap(&long, 8.0, 200.0);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| text_width(l, 8.0) <= 200.0));
        let token = "x".repeat(300);
        let lines = wrap(&token, 8.0, 200.0);
        assert_eq!(lines.concat(), token);
        assert_eq!(wrap("short", 8.0, 200.0), vec!["short"]);
    }
}
