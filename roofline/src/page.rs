//! The roofline chart as inline SVG (`--format svg`) and as a self-contained
//! HTML page (SVG + table + a small inline script; no network access, unlike
//! the original's CanvasJS page, docs/compatibility.md#roofline-page).
//!
//! The chart is rendered here, not in the browser, so the SVG file and the
//! page show the same thing and the page works without JavaScript too; the
//! script only adds the hover box, table sorting, the search box and the
//! legend toggles.
//!
//! What the chart shows (docs/roofline.md#the-chart): one compute roof per
//! precision with operations (colour = precision), one bandwidth roof per
//! memory level (dash and marker shape = level), each kernel once per level
//! in its own precision's colour with its points joined by a line (as Intel
//! Advisor draws them: the binding level is outlined in black), labels on
//! the longest kernels, and axes fitted to the data in whole decades.

use std::fmt::Write as _;

use unitrace_core::device_config::Precision;
use unitrace_render::axis::LogScale;
use unitrace_render::escape::escape as esc;
use unitrace_render::font::text_width;
use unitrace_render::number::{decade, significant as sig};
use unitrace_render::palette::{self, series_color, Rgb};
use unitrace_render::svg::{Markup, Value, FONT_FAMILY};

use crate::model::{KernelView, Point, Roofline};

const WIDTH: f64 = 1180.0;
const HEIGHT: f64 = 640.0;
const LEFT: f64 = 86.0;
/// The legend sits right of the plot so it never hides a point.
const LEGEND_WIDTH: f64 = 250.0;
const RIGHT: f64 = LEGEND_WIDTH + 24.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 62.0;
/// Margin between the data and the frame, before rounding out to whole
/// decades: a factor of 2 (0.3 decade) on each side.
pub const HEADROOM: f64 = 2.0;
const LABEL_SIZE: f64 = 12.0;

/// Colour of a precision: fixed per precision (its place in
/// [`Precision::ALL`]), so FP32 has the same colour on every chart.
pub fn precision_color(p: Precision) -> String {
    series_color(p.index()).hex()
}

/// Marker shape of a memory level (by its place in the device file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Diamond,
    Triangle,
}

pub fn level_shape(i: usize) -> Shape {
    [
        Shape::Circle,
        Shape::Square,
        Shape::Diamond,
        Shape::Triangle,
    ][i % 4]
}

/// Dash pattern of the bandwidth roof of level `i`.
fn level_dash(i: usize) -> &'static str {
    ["none", "9 5", "2 4", "9 4 2 4"][i % 4]
}

fn hex(c: Rgb) -> String {
    c.hex()
}

/// The two log-log axes of the chart.
pub struct Axes {
    pub x: LogScale,
    pub y: LogScale,
}

impl Axes {
    /// Whole decades around the plotted points, the drawn peaks and their
    /// ridge points, with [`HEADROOM`] on each side (the original's fixed
    /// 0.001..100000 FLOP/byte and 0.1..1000000 GFLOP/s crowded the points
    /// into a corner; docs/compatibility.md#roofline-12). Without any
    /// operation the original's range is kept.
    pub fn new(r: &Roofline, views: &[KernelView]) -> Axes {
        Axes::fitted(r, views.iter().flat_map(|v| v.points.iter()))
    }

    /// As [`Axes::new`] over any plotted points (both runs' on the
    /// baseline/candidate chart, [`compare_svg`]).
    pub fn fitted<'a>(r: &Roofline, points: impl Iterator<Item = &'a Point>) -> Axes {
        let peaks: Vec<f64> = r.precisions.iter().map(|p| r.device.peak(*p)).collect();
        let bws: Vec<f64> = r
            .present_levels()
            .iter()
            .map(|(_, l)| l.bandwidth_gb_per_s)
            .collect();
        let mut xs: Vec<f64> = Vec::new();
        let mut ys: Vec<f64> = peaks.clone();
        for p in points.filter(|p| p.plotted) {
            xs.push(p.ai);
            ys.push(p.gflops);
        }
        for peak in &peaks {
            for bw in &bws {
                xs.push(peak / bw);
            }
        }
        let (xlo, xhi) = span(&xs).map_or((1e-3, 1e5), |(lo, hi)| (lo / HEADROOM, hi * HEADROOM));
        let (ylo, yhi) = span(&ys).map_or((0.1, 1e6), |(lo, hi)| (lo / HEADROOM, hi * HEADROOM));
        Axes {
            x: LogScale::covering(xlo, xhi, LEFT, WIDTH - RIGHT),
            y: LogScale::covering(ylo, yhi, HEIGHT - BOTTOM, TOP),
        }
    }
}

/// Smallest and largest positive finite value.
fn span(v: &[f64]) -> Option<(f64, f64)> {
    v.iter()
        .filter(|x| x.is_finite() && **x > 0.0)
        .fold(None, |acc, &x| match acc {
            None => Some((x, x)),
            Some((lo, hi)) => Some((f64::min(lo, x), f64::max(hi, x))),
        })
}

/// Marker size: area grows with the kernel's share of the total time.
fn radius(time_pct: f64) -> f64 {
    3.5 + 16.0 * (time_pct.clamp(0.0, 100.0) / 100.0).sqrt()
}

pub fn title(r: &Roofline, name: &str) -> String {
    format!("{name}  roofline on {}", r.device.name)
}

/// A kernel name short enough for a label: no shape suffix, template
/// arguments or parameter lists, the last scope (a lambda keeps the
/// function it is in), at most 32 characters.
pub fn short_name(full: &str) -> String {
    let mut base = full.trim();
    if base.ends_with(']') {
        if let Some(i) = base.rfind('[') {
            if i > 0 {
                base = &base[..i];
            }
        }
    }
    let mut flat = String::new();
    let mut depth = 0usize;
    for c in base.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => flat.push(c),
            _ => {}
        }
    }
    let parts: Vec<&str> = flat
        .split("::")
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let mut name = match parts.last() {
        None => base.to_string(),
        Some(last) if last.starts_with('{') => match parts.iter().find(|p| !p.starts_with('{')) {
            Some(outer) => format!("{outer}::{last}"),
            None => last.to_string(),
        },
        Some(last) => last.to_string(),
    };
    if name.chars().count() > 32 {
        name = name.chars().take(31).collect::<String>() + "…";
    }
    name
}

fn point_tooltip(r: &Roofline, v: &KernelView, p: &Point) -> String {
    let k = &r.kernels[v.kernel];
    let level = &r.levels[p.level];
    let mut s = format!(
        "{}\n{}, {}: AI {} FLOP/byte, {} GFLOP/s, {}% of roof ({} GFLOP/s), {}% of time",
        k.name,
        level.label,
        v.precision.map_or("no operations", |p| p.label()),
        sig(p.ai),
        sig(p.gflops),
        sig(p.pct_of_roof),
        sig(p.roof_gflops),
        sig(v.time_pct)
    );
    if p.above_roof {
        s.push_str("\nabove its roof: check the counters and the device file");
    }
    s
}

type Attrs<'a> = Vec<(&'static str, Value<'a>)>;

/// Element name and geometry attributes of a marker of `shape` centred at
/// (cx, cy), with about the area of a circle of radius `r`.
fn marker_geometry(shape: Shape, cx: f64, cy: f64, r: f64) -> (&'static str, Attrs<'static>) {
    let poly = |pts: &[(f64, f64)]| -> Value<'static> {
        pts.iter()
            .map(|(x, y)| format!("{:.2},{:.2}", cx + x, cy + y))
            .collect::<Vec<_>>()
            .join(" ")
            .into()
    };
    match shape {
        Shape::Circle => (
            "circle",
            vec![("cx", cx.into()), ("cy", cy.into()), ("r", r.into())],
        ),
        Shape::Square => {
            let h = r * 0.886;
            (
                "rect",
                vec![
                    ("x", (cx - h).into()),
                    ("y", (cy - h).into()),
                    ("width", (2.0 * h).into()),
                    ("height", (2.0 * h).into()),
                ],
            )
        }
        Shape::Diamond => {
            let h = r * 1.25;
            (
                "polygon",
                vec![("points", poly(&[(0.0, -h), (h, 0.0), (0.0, h), (-h, 0.0)]))],
            )
        }
        Shape::Triangle => {
            let h = r * 1.35;
            (
                "polygon",
                vec![(
                    "points",
                    poly(&[(0.0, -h), (h * 0.87, h * 0.5), (-h * 0.87, h * 0.5)]),
                )],
            )
        }
    }
}

/// An axis-aligned box on the page (labels and markers), to place labels
/// where they hide nothing.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Bounds {
    fn overlaps(&self, o: &Bounds) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }
    fn inside(&self, o: &Bounds) -> bool {
        self.x0 >= o.x0 && self.x1 <= o.x1 && self.y0 >= o.y0 && self.y1 <= o.y1
    }
}

/// One drawn marker: the point, its centre and radius on the page.
struct Mark<'a> {
    point: &'a Point,
    x: f64,
    y: f64,
    r: f64,
}

/// One kernel's markers, in AI order.
struct Drawn<'a> {
    view: &'a KernelView,
    marks: Vec<Mark<'a>>,
}

fn frame_and_axes(m: &mut Markup, ax: &Axes, chart_title: &str) {
    let (pl, pr, pt, pb) = (LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM);
    m.element(
        "text",
        &[
            ("x", ((pl + pr) / 2.0).into()),
            ("y", 28.0.into()),
            ("text-anchor", "middle".into()),
            ("font-size", "18".into()),
            ("font-weight", "bold".into()),
        ],
        chart_title,
    )
    .newline();
    // Grid and tick labels at every decade.
    m.open(
        "g",
        &[
            ("class", "grid".into()),
            ("stroke", hex(palette::FAINT_GRID).into()),
            ("stroke-width", "1".into()),
        ],
    )
    .newline();
    for k in ax.x.decades() {
        let x = ax.x.map(10f64.powi(k));
        m.empty(
            "line",
            &[
                ("x1", x.into()),
                ("y1", pt.into()),
                ("x2", x.into()),
                ("y2", pb.into()),
            ],
        )
        .newline();
    }
    for k in ax.y.decades() {
        let y = ax.y.map(10f64.powi(k));
        m.empty(
            "line",
            &[
                ("x1", pl.into()),
                ("y1", y.into()),
                ("x2", pr.into()),
                ("y2", y.into()),
            ],
        )
        .newline();
    }
    m.close("g").newline();
    m.open(
        "g",
        &[
            ("class", "ticks".into()),
            ("fill", hex(palette::SECONDARY_TEXT).into()),
        ],
    )
    .newline();
    for k in ax.x.decades() {
        let x = ax.x.map(10f64.powi(k));
        m.element(
            "text",
            &[
                ("class", "x-tick".into()),
                ("x", x.into()),
                ("y", (pb + 18.0).into()),
                ("text-anchor", "middle".into()),
            ],
            &decade(k),
        )
        .newline();
    }
    for k in ax.y.decades() {
        let y = ax.y.map(10f64.powi(k));
        m.element(
            "text",
            &[
                ("class", "y-tick".into()),
                ("x", (pl - 6.0).into()),
                ("y", (y + 4.0).into()),
                ("text-anchor", "end".into()),
            ],
            &decade(k),
        )
        .newline();
    }
    m.close("g").newline();
    m.empty(
        "rect",
        &[
            ("x", pl.into()),
            ("y", pt.into()),
            ("width", (pr - pl).into()),
            ("height", (pb - pt).into()),
            ("fill", "none".into()),
            ("stroke", hex(palette::FRAME).into()),
        ],
    )
    .newline();
    m.element(
        "text",
        &[
            ("x", ((pl + pr) / 2.0).into()),
            ("y", (HEIGHT - 16.0).into()),
            ("text-anchor", "middle".into()),
            ("font-size", "15".into()),
        ],
        "Arithmetic intensity (FLOP/byte)",
    )
    .newline();
    m.element(
        "text",
        &[
            (
                "transform",
                format!("translate(20 {:.1}) rotate(-90)", (pt + pb) / 2.0).into(),
            ),
            ("text-anchor", "middle".into()),
            ("font-size", "15".into()),
        ],
        "Performance (GFLOP/s)",
    )
    .newline();
}

/// Bandwidth roofs: AI × BW up to the highest compute roof, one per level
/// the profile measured, grey with the level's dash pattern and a label
/// along the line.
fn bandwidth_roofs(m: &mut Markup, r: &Roofline, ax: &Axes, top_peak: f64) {
    let (ai_lo, ai_hi) = (ax.x.lo(), ax.x.hi());
    let grey = hex(palette::FRAME);
    m.open(
        "g",
        &[
            ("class", "roofs memory".into()),
            ("clip-path", "url(#plot-area)".into()),
            ("fill", "none".into()),
            ("stroke-width", "2".into()),
        ],
    )
    .newline();
    let mut labels = Vec::new();
    for (i, level) in r.present_levels() {
        let bw = level.bandwidth_gb_per_s;
        let start = ai_lo.max(ax.y.lo() / bw);
        let end = ai_hi.min(top_peak / bw);
        if end <= start {
            continue;
        }
        let (x0, y0) = (ax.x.map(start), ax.y.map(start * bw));
        let (x1, y1) = (ax.x.map(end), ax.y.map(end * bw));
        m.open(
            "polyline",
            &[
                ("class", format!("roof level-{}", level.key).into()),
                ("data-level", (&level.key).into()),
                ("stroke", (&grey).into()),
                ("stroke-dasharray", level_dash(i).into()),
                ("points", format!("{x0:.2},{y0:.2} {x1:.2},{y1:.2}").into()),
            ],
        )
        .element(
            "title",
            &[],
            &format!("{} bandwidth roof: {} GB/s", level.label, sig(bw)),
        )
        .close("polyline")
        .newline();
        let angle = (y1 - y0).atan2(x1 - x0);
        let (lx, ly) = (x0 + (x1 - x0) * 0.05, y0 + (y1 - y0) * 0.05);
        labels.push((
            level.key.clone(),
            format!("{} {} GB/s", level.label, sig(bw)),
            lx + 6.0 * angle.sin(),
            ly - 6.0 * angle.cos(),
            angle.to_degrees(),
        ));
    }
    m.close("g").newline();
    for (key, text, x, y, deg) in &labels {
        m.element(
            "text",
            &[
                ("class", "roof-label".into()),
                ("data-level", key.into()),
                (
                    "transform",
                    format!("translate({x:.2} {y:.2}) rotate({deg:.2})").into(),
                ),
                ("fill", (&grey).into()),
                ("font-size", "12".into()),
            ],
            text,
        )
        .newline();
    }
}

/// Compute roofs: one per precision with operations, from where the
/// fastest level's bandwidth roof meets it, in the precision's colour.
/// Equal peaks (FP32 = FP64 on PVC) share the line in alternating dashes;
/// their labels share a line too. Returns the label boxes.
fn compute_roofs(m: &mut Markup, r: &Roofline, ax: &Axes) -> Vec<Bounds> {
    let (ai_lo, ai_hi) = (ax.x.lo(), ax.x.hi());
    let pr = WIDTH - RIGHT;
    let max_bw = r
        .present_levels()
        .iter()
        .map(|(_, l)| l.bandwidth_gb_per_s)
        .fold(f64::NAN, f64::max);
    let mut groups: Vec<(f64, Vec<Precision>)> = Vec::new();
    for p in &r.precisions {
        let peak = r.device.peak(*p);
        match groups.iter_mut().find(|(g, _)| *g == peak) {
            Some((_, ps)) => ps.push(*p),
            None => groups.push((peak, vec![*p])),
        }
    }
    groups.sort_by(|a, b| b.0.total_cmp(&a.0));
    m.open(
        "g",
        &[
            ("class", "roofs compute".into()),
            ("clip-path", "url(#plot-area)".into()),
            ("fill", "none".into()),
            ("stroke-width", "2.4".into()),
        ],
    )
    .newline();
    for (peak, ps) in &groups {
        let start = if max_bw.is_finite() {
            ai_lo.max(peak / max_bw)
        } else {
            ai_lo
        };
        let (x0, x1, y) = (ax.x.map(start), ax.x.map(ai_hi), ax.y.map(*peak));
        let n = ps.len();
        for (j, p) in ps.iter().enumerate() {
            let mut attrs: Attrs = vec![
                ("class", "roof compute".into()),
                ("data-precision", p.label().into()),
                ("stroke", precision_color(*p).into()),
                ("points", format!("{x0:.2},{y:.2} {x1:.2},{y:.2}").into()),
            ];
            if n > 1 {
                attrs.push(("stroke-dasharray", format!("10 {}", 10 * (n - 1)).into()));
                attrs.push(("stroke-dashoffset", (-10.0 * j as f64).into()));
            }
            m.open("polyline", &attrs)
                .element(
                    "title",
                    &[],
                    &format!(
                        "{} peak: {} GFLOP/s (ridge at {} FLOP/byte)",
                        p.label(),
                        sig(*peak),
                        sig(peak / max_bw)
                    ),
                )
                .close("polyline")
                .newline();
        }
    }
    m.close("g").newline();
    // Labels, highest first, pushed down where they would overlap.
    let mut boxes = Vec::new();
    let mut last_y = f64::NEG_INFINITY;
    for (peak, ps) in &groups {
        let y = (ax.y.map(*peak) - 6.0).max(last_y + LABEL_SIZE + 3.0);
        last_y = y;
        let names: Vec<&str> = ps.iter().map(|p| p.label()).collect();
        let tail = format!(" peak {} GFLOP/s", sig(*peak));
        let w = f64::from(text_width(&(names.join(", ") + &tail), 13.0));
        boxes.push(Bounds {
            x0: pr - 6.0 - w,
            y0: y - 12.0,
            x1: pr - 6.0,
            y1: y + 3.0,
        });
        m.open(
            "text",
            &[
                ("class", "peak-label".into()),
                ("x", (pr - 6.0).into()),
                ("y", y.into()),
                ("text-anchor", "end".into()),
                ("fill", hex(palette::SECONDARY_TEXT).into()),
            ],
        );
        for (j, p) in ps.iter().enumerate() {
            if j > 0 {
                m.text(", ");
            }
            m.element(
                "tspan",
                &[
                    ("data-precision", p.label().into()),
                    ("fill", precision_color(*p).into()),
                    ("font-weight", "bold".into()),
                ],
                p.label(),
            );
        }
        m.text(&tail).close("text").newline();
    }
    boxes
}

/// One group per kernel, longest first so small markers stay on top; a
/// line joins the kernel's points across memory levels.
fn kernels(m: &mut Markup, r: &Roofline, drawn: &[Drawn]) {
    m.open(
        "g",
        &[
            ("class", "points".into()),
            ("clip-path", "url(#plot-area)".into()),
        ],
    )
    .newline();
    let warning = hex(palette::WARNING);
    for d in drawn {
        let v = d.view;
        let Some(precision) = v.precision else {
            continue;
        };
        let color = precision_color(precision);
        let kernel = v.kernel.to_string();
        m.open(
            "g",
            &[
                ("class", "kernel".into()),
                ("data-k", (&kernel).into()),
                ("data-precision", precision.label().into()),
            ],
        )
        .newline();
        if d.marks.len() > 1 {
            let path: Vec<String> = d
                .marks
                .iter()
                .map(|mk| format!("{:.2},{:.2}", mk.x, mk.y))
                .collect();
            m.empty(
                "polyline",
                &[
                    ("class", "join".into()),
                    ("data-k", (&kernel).into()),
                    ("points", path.join(" ").into()),
                    ("fill", "none".into()),
                    ("stroke", (&color).into()),
                    ("stroke-width", "1.6".into()),
                ],
            )
            .newline();
        }
        let binding = v.binding.map(|b| v.points[b].level);
        for mk in &d.marks {
            let p = mk.point;
            let level = &r.levels[p.level];
            let warn = if p.above_roof { " above-roof" } else { "" };
            let binds = binding == Some(p.level);
            let (tag, geometry) = marker_geometry(level_shape(p.level), mk.x, mk.y, mk.r);
            let mut attrs: Attrs = vec![
                (
                    "class",
                    format!(
                        "point level-{}{warn}{}",
                        level.key,
                        if binds { " binding" } else { "" }
                    )
                    .into(),
                ),
                ("data-k", (&kernel).into()),
                ("data-level", (&level.key).into()),
                ("data-precision", precision.label().into()),
                ("data-ai", sig(p.ai).into()),
                ("data-gflops", sig(p.gflops).into()),
                ("data-roof", sig(p.roof_gflops).into()),
                ("data-pct", sig(p.pct_of_roof).into()),
            ];
            attrs.extend(geometry);
            attrs.extend([
                ("fill", Value::from(&color)),
                ("fill-opacity", "0.55".into()),
                (
                    "stroke",
                    if binds {
                        hex(Rgb::BLACK).into()
                    } else {
                        (&color).into()
                    },
                ),
                ("stroke-width", (if binds { "2" } else { "1.2" }).into()),
            ]);
            m.open(tag, &attrs)
                .element("title", &[], &point_tooltip(r, v, p))
                .close(tag)
                .newline();
            if p.above_roof {
                m.open(
                    "g",
                    &[
                        ("class", "warn-mark".into()),
                        ("data-k", (&kernel).into()),
                        ("data-level", (&level.key).into()),
                    ],
                )
                .empty(
                    "circle",
                    &[
                        ("cx", mk.x.into()),
                        ("cy", mk.y.into()),
                        ("r", (mk.r + 3.0).into()),
                        ("fill", "none".into()),
                        ("stroke", (&warning).into()),
                        ("stroke-width", "2.5".into()),
                        ("stroke-dasharray", "3 2".into()),
                    ],
                )
                .element(
                    "text",
                    &[
                        ("x", (mk.x + mk.r + 3.0).into()),
                        ("y", (mk.y - mk.r).into()),
                        ("fill", (&warning).into()),
                        ("font-weight", "bold".into()),
                        ("font-size", "16".into()),
                    ],
                    "⚠",
                )
                .close("g")
                .newline();
            }
        }
        m.close("g").newline();
    }
    m.close("g").newline();
}

/// Labels on the `count` longest kernels, each placed where it overlaps no
/// other label, peak label or other kernel's marker (else where it first
/// fits in the plot): right of the last point, left of the first, above or
/// below the join line.
fn labels(m: &mut Markup, r: &Roofline, drawn: &[Drawn], mut taken: Vec<Bounds>, count: usize) {
    let plot = Bounds {
        x0: LEFT,
        y0: TOP,
        x1: WIDTH - RIGHT,
        y1: HEIGHT - BOTTOM,
    };
    let markers: Vec<(usize, Bounds)> = drawn
        .iter()
        .flat_map(|d| {
            d.marks.iter().map(move |mk| {
                (
                    d.view.kernel,
                    Bounds {
                        x0: mk.x - mk.r,
                        y0: mk.y - mk.r,
                        x1: mk.x + mk.r,
                        y1: mk.y + mk.r,
                    },
                )
            })
        })
        .collect();
    m.open(
        "g",
        &[("class", "labels".into()), ("font-size", "12".into())],
    )
    .newline();
    for d in drawn.iter().take(count) {
        let v = d.view;
        let text = short_name(&r.kernels[v.kernel].name);
        let w = f64::from(text_width(&text, LABEL_SIZE as f32));
        let h = LABEL_SIZE;
        let (first, last) = (&d.marks[0], &d.marks[d.marks.len() - 1]);
        let mid_x = (first.x + last.x) / 2.0;
        let (y, rad) = (first.y, first.r);
        let candidates = [
            (last.x + rad + 4.0, y + 4.0),
            (first.x - rad - 4.0 - w, y + 4.0),
            (mid_x - w / 2.0, y - rad - 5.0),
            (mid_x - w / 2.0, y + rad + h + 2.0),
        ];
        let boxed = |(x0, base): (f64, f64)| Bounds {
            x0,
            y0: base - h + 1.0,
            x1: x0 + w,
            y1: base + 3.0,
        };
        let free = |b: &Bounds| {
            b.inside(&plot)
                && !taken.iter().any(|t| t.overlaps(b))
                && !markers
                    .iter()
                    .any(|(k, mb)| *k != v.kernel && mb.overlaps(b))
        };
        let chosen = candidates
            .iter()
            .copied()
            .find(|c| free(&boxed(*c)))
            .or_else(|| candidates.iter().copied().find(|c| boxed(*c).inside(&plot)))
            .unwrap_or(candidates[0]);
        taken.push(boxed(chosen));
        m.element(
            "text",
            &[
                ("class", "label".into()),
                ("data-k", v.kernel.to_string().into()),
                (
                    "data-precision",
                    v.precision.map_or("", |p| p.label()).into(),
                ),
                ("x", chosen.0.into()),
                ("y", chosen.1.into()),
                ("fill", hex(palette::SECONDARY_TEXT).into()),
                ("stroke", hex(Rgb::WHITE).into()),
                ("stroke-width", "3".into()),
                ("paint-order", "stroke".into()),
            ],
            &text,
        )
        .newline();
    }
    m.close("g").newline();
}

/// The `<svg>` root, background, frame, axes and both kinds of roofs,
/// shared by the one-run chart ([`svg`]) and the baseline/candidate chart
/// ([`compare_svg`]); returns the peak labels' boxes for label placement.
fn chart_open(
    m: &mut Markup,
    r: &Roofline,
    ax: &Axes,
    chart_title: &str,
    standalone: bool,
) -> Vec<Bounds> {
    let (pl, pr, pt, pb) = (LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM);
    let mut root: Attrs = vec![("id", "roofline-plot".into())];
    if standalone {
        root.push(("xmlns", "http://www.w3.org/2000/svg".into()));
    }
    root.extend([
        ("viewBox", format!("0 0 {WIDTH} {HEIGHT}").into()),
        ("width", WIDTH.into()),
        ("height", HEIGHT.into()),
        ("font-family", FONT_FAMILY.into()),
        ("font-size", "13".into()),
        ("role", "img".into()),
    ]);
    m.open("svg", &root).newline();
    m.element("title", &[], chart_title).newline();
    m.open("defs", &[])
        .open("clipPath", &[("id", "plot-area".into())])
        .empty(
            "rect",
            &[
                ("x", pl.into()),
                ("y", pt.into()),
                ("width", (pr - pl).into()),
                ("height", (pb - pt).into()),
            ],
        )
        .close("clipPath")
        .close("defs")
        .newline();
    m.empty(
        "rect",
        &[
            ("x", 0.0.into()),
            ("y", 0.0.into()),
            ("width", WIDTH.into()),
            ("height", HEIGHT.into()),
            ("fill", hex(Rgb::WHITE).into()),
        ],
    )
    .newline();
    frame_and_axes(m, ax, chart_title);
    let top_peak = r
        .precisions
        .iter()
        .map(|p| r.device.peak(*p))
        .fold(f64::NAN, f64::max);
    let top_peak = if top_peak.is_finite() {
        top_peak
    } else {
        ax.y.hi()
    };
    bandwidth_roofs(m, r, ax, top_peak);
    compute_roofs(m, r, ax)
}

/// The chart as an `<svg>` element (standalone when `standalone`), drawn
/// with the shared render crate's markup writer, scales, palette and
/// number spelling; the classes and `data-*` attributes are what the
/// page's script (and the tests) read. The `label_count` longest kernels
/// get their short name next to their points.
pub fn svg(
    r: &Roofline,
    views: &[KernelView],
    name: &str,
    standalone: bool,
    label_count: usize,
) -> String {
    let ax = Axes::new(r, views);
    let (pr, pt) = (WIDTH - RIGHT, TOP);
    let mut m = Markup::new();
    let taken = chart_open(&mut m, r, &ax, &title(r, name), standalone);
    let mut drawn: Vec<Drawn> = views
        .iter()
        .filter(|v| v.selected && v.precision.is_some())
        .map(|v| {
            let rad = radius(v.time_pct);
            let mut marks: Vec<Mark> = v
                .points
                .iter()
                .filter(|p| p.plotted)
                .map(|p| Mark {
                    point: p,
                    x: ax.x.map(p.ai),
                    y: ax.y.map(p.gflops),
                    r: rad,
                })
                .collect();
            marks.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.point.level.cmp(&b.point.level)));
            Drawn { view: v, marks }
        })
        .filter(|d| !d.marks.is_empty())
        .collect();
    drawn.sort_by(|a, b| {
        b.view
            .time_pct
            .total_cmp(&a.view.time_pct)
            .then(a.view.kernel.cmp(&b.view.kernel))
    });
    kernels(&mut m, r, &drawn);
    labels(&mut m, r, &drawn, taken, label_count);
    legend(&mut m, r, pr + 16.0, pt);
    m.close("svg").newline();
    m.into_string()
}

/// A kernel's binding point when it is drawn.
fn plotted_binding(v: &KernelView) -> Option<&Point> {
    v.binding
        .map(|b| &v.points[b])
        .filter(|p| v.selected && p.plotted)
}

/// A kernel of both runs (matched by name) and its plotted binding point
/// in each: one arrow of the baseline -> candidate chart.
struct Move<'a> {
    base: &'a KernelView,
    base_point: &'a Point,
    cand: &'a KernelView,
    cand_point: &'a Point,
}

/// The baseline -> candidate chart of two runs on one device
/// (docs/compare.md#html-page): the roofs of both runs' precisions, axes
/// fitted to both runs' points, and per kernel present in both (matched by
/// name) one arrow from its baseline point to its candidate point, each at
/// that run's binding level, in the colour of its precision; the
/// `label_count` kernels longest in the candidate are named at the arrow's
/// head.
pub fn compare_svg(base: &Roofline, cand: &Roofline, name: &str, label_count: usize) -> String {
    let (base_views, cand_views) = (base.views(), cand.views());
    let moves = kernel_moves(base, &base_views, cand, &cand_views);
    let roofs = roofs_of_both(base, cand);
    let ax = Axes::fitted(
        &roofs,
        moves.iter().flat_map(|mv| [mv.base_point, mv.cand_point]),
    );
    let mut m = Markup::new();
    chart_open(
        &mut m,
        &roofs,
        &ax,
        &format!("{name} on {}", base.device.name),
        false,
    );
    arrowheads(&mut m, &moves);
    m.open(
        "g",
        &[
            ("class", "arrows".into()),
            ("clip-path", "url(#plot-area)".into()),
        ],
    )
    .newline();
    for mv in &moves {
        arrow(&mut m, base, cand, &ax, mv);
    }
    m.close("g").newline();
    arrow_labels(&mut m, cand, &ax, &moves, label_count);
    legend(&mut m, &roofs, WIDTH - RIGHT + 16.0, TOP);
    m.close("svg").newline();
    m.into_string()
}

/// The kernels drawn in both runs, longest in the candidate first (ties by
/// name).
fn kernel_moves<'a>(
    base: &Roofline,
    base_views: &'a [KernelView],
    cand: &Roofline,
    cand_views: &'a [KernelView],
) -> Vec<Move<'a>> {
    let by_name: std::collections::HashMap<&str, &KernelView> = base_views
        .iter()
        .map(|v| (base.kernels[v.kernel].name.as_str(), v))
        .collect();
    let mut moves: Vec<Move> = cand_views
        .iter()
        .filter_map(|c| {
            let b = by_name.get(cand.kernels[c.kernel].name.as_str())?;
            Some(Move {
                base: b,
                base_point: plotted_binding(b)?,
                cand: c,
                cand_point: plotted_binding(c)?,
            })
        })
        .collect();
    moves.sort_by(|a, b| {
        b.cand.time_pct.total_cmp(&a.cand.time_pct).then(
            cand.kernels[a.cand.kernel]
                .name
                .cmp(&cand.kernels[b.cand.kernel].name),
        )
    });
    moves
}

/// The baseline's roofline with the roofs of every precision either run
/// computed in.
fn roofs_of_both(base: &Roofline, cand: &Roofline) -> Roofline {
    let mut roofs = base.clone();
    for p in &cand.precisions {
        if !roofs.precisions.contains(p) {
            roofs.precisions.push(*p);
        }
    }
    roofs.precisions.sort_by_key(|p| p.index());
    roofs
}

/// One arrowhead marker per precision of the candidate's arrows, in its
/// colour.
fn arrowheads(m: &mut Markup, moves: &[Move]) {
    let mut precisions: Vec<Precision> = moves.iter().filter_map(|mv| mv.cand.precision).collect();
    precisions.sort_by_key(|p| p.index());
    precisions.dedup();
    m.open("defs", &[]).newline();
    for p in &precisions {
        m.open(
            "marker",
            &[
                ("id", format!("arrowhead-{}", p.label()).into()),
                ("viewBox", "0 0 10 10".into()),
                ("refX", "9".into()),
                ("refY", "5".into()),
                ("markerWidth", "7".into()),
                ("markerHeight", "7".into()),
                ("orient", "auto-start-reverse".into()),
            ],
        )
        .empty(
            "path",
            &[
                ("d", "M 0 0 L 10 5 L 0 10 z".into()),
                ("fill", precision_color(*p).into()),
            ],
        )
        .close("marker")
        .newline();
    }
    m.close("defs").newline();
}

/// The baseline point (a hollow circle) and the arrow to the candidate
/// point, with both points in its tooltip; nothing for a kernel without
/// precision in either run.
fn arrow(m: &mut Markup, base: &Roofline, cand: &Roofline, ax: &Axes, mv: &Move) {
    let (bp, cp) = (mv.base_point, mv.cand_point);
    let Some(precision) = mv.cand.precision.or(mv.base.precision) else {
        return;
    };
    let color = precision_color(precision);
    let (x1, y1, x2, y2) = (
        ax.x.map(bp.ai),
        ax.y.map(bp.gflops),
        ax.x.map(cp.ai),
        ax.y.map(cp.gflops),
    );
    let kernel = &cand.kernels[mv.cand.kernel].name;
    m.empty(
        "circle",
        &[
            ("class", "baseline-point".into()),
            ("cx", x1.into()),
            ("cy", y1.into()),
            ("r", 3.0.into()),
            ("fill", "none".into()),
            ("stroke", (&color).into()),
            ("stroke-width", "1.5".into()),
        ],
    )
    .newline();
    m.open(
        "line",
        &[
            ("class", "arrow".into()),
            ("data-kernel", kernel.into()),
            ("data-precision", precision.label().into()),
            ("data-base-level", (&base.levels[bp.level].key).into()),
            ("data-cand-level", (&cand.levels[cp.level].key).into()),
            ("x1", x1.into()),
            ("y1", y1.into()),
            ("x2", x2.into()),
            ("y2", y2.into()),
            ("stroke", (&color).into()),
            ("stroke-width", "2".into()),
            ("marker-end", format!("url(#arrowhead-{})", precision.label()).into()),
        ],
    )
    .element(
        "title",
        &[],
        &format!(
            "{kernel}\nbaseline {} FLOP/byte, {} GFLOP/s ({})\ncandidate {} FLOP/byte, {} GFLOP/s ({})",
            sig(bp.ai),
            sig(bp.gflops),
            base.levels[bp.level].key,
            sig(cp.ai),
            sig(cp.gflops),
            cand.levels[cp.level].key
        ),
    )
    .close("line")
    .newline();
}

/// The short names of the `label_count` longest kernels at their arrows'
/// heads.
fn arrow_labels(m: &mut Markup, cand: &Roofline, ax: &Axes, moves: &[Move], label_count: usize) {
    m.open(
        "g",
        &[("class", "labels".into()), ("font-size", "12".into())],
    )
    .newline();
    for mv in moves.iter().take(label_count) {
        let text = short_name(&cand.kernels[mv.cand.kernel].name);
        let (x, y) = (
            ax.x.map(mv.cand_point.ai) + 8.0,
            ax.y.map(mv.cand_point.gflops) + 4.0,
        );
        m.element(
            "text",
            &[
                ("class", "label".into()),
                ("x", x.into()),
                ("y", y.into()),
                ("fill", hex(palette::SECONDARY_TEXT).into()),
                ("stroke", hex(Rgb::WHITE).into()),
                ("stroke-width", "3".into()),
                ("paint-order", "stroke".into()),
            ],
            &text,
        )
        .newline();
    }
    m.close("g").newline();
}

/// The legend right of the plot: compute roofs by colour, memory levels by
/// marker and dash, and how to read the marks.
fn legend(m: &mut Markup, r: &Roofline, x: f64, top: f64) {
    let mut y = top + 12.0;
    let heading = |m: &mut Markup, y: f64, text: &str| {
        m.element(
            "text",
            &[
                ("x", x.into()),
                ("y", y.into()),
                ("font-weight", "bold".into()),
            ],
            text,
        )
        .newline();
    };
    heading(m, y, "Precision (colour, roof)");
    y += 20.0;
    for p in &r.precisions {
        let color = precision_color(*p);
        m.open(
            "g",
            &[
                ("class", "legend-item".into()),
                ("data-precision", p.label().into()),
                ("style", "cursor:pointer".into()),
            ],
        )
        .empty(
            "line",
            &[
                ("x1", x.into()),
                ("y1", (y - 4.0).into()),
                ("x2", (x + 26.0).into()),
                ("y2", (y - 4.0).into()),
                ("stroke", (&color).into()),
                ("stroke-width", "3".into()),
            ],
        )
        .element(
            "text",
            &[("x", (x + 34.0).into()), ("y", y.into())],
            &format!("{} ({} GFLOP/s)", p.label(), sig(r.device.peak(*p))),
        )
        .close("g")
        .newline();
        y += 20.0;
    }
    if r.precisions.is_empty() {
        m.element(
            "text",
            &[("x", x.into()), ("y", y.into())],
            "no operations counted",
        )
        .newline();
        y += 20.0;
    }
    y += 8.0;
    heading(m, y, "Memory level (marker, roof)");
    y += 20.0;
    let grey = hex(palette::FRAME);
    for (i, level) in r.present_levels() {
        let (tag, geometry) = marker_geometry(level_shape(i), x + 13.0, y - 4.0, 5.5);
        let mut attrs: Attrs = geometry;
        attrs.extend([
            ("fill", Value::from(&grey)),
            ("fill-opacity", "0.55".into()),
        ]);
        m.open(
            "g",
            &[
                ("class", "legend-item".into()),
                ("data-level", (&level.key).into()),
                ("style", "cursor:pointer".into()),
            ],
        )
        .empty(
            "line",
            &[
                ("x1", x.into()),
                ("y1", (y - 4.0).into()),
                ("x2", (x + 26.0).into()),
                ("y2", (y - 4.0).into()),
                ("stroke", (&grey).into()),
                ("stroke-width", "2".into()),
                ("stroke-dasharray", level_dash(i).into()),
            ],
        )
        .empty(tag, &attrs)
        .element(
            "text",
            &[("x", (x + 34.0).into()), ("y", y.into())],
            &format!("{} ({} GB/s)", level.label, sig(level.bandwidth_gb_per_s)),
        )
        .close("g")
        .newline();
        y += 20.0;
    }
    y += 8.0;
    let note = |m: &mut Markup, y: f64| -> Attrs<'static> {
        let _ = m;
        vec![
            ("x", x.into()),
            ("y", y.into()),
            ("fill", hex(palette::FRAME).into()),
            ("font-size", "12".into()),
        ]
    };
    for line in [
        "Marker area ∝ share of GPU time.",
        "A line joins one kernel's levels;",
        "black outline: the binding level.",
    ] {
        let attrs = note(m, y);
        m.element("text", &attrs, line).newline();
        y += 17.0;
    }
    let attrs = note(m, y);
    m.open("text", &attrs)
        .element("tspan", &[("fill", hex(palette::WARNING).into())], "⚠")
        .text(" above its roof (check the counters).")
        .close("text")
        .newline();
}

const STYLE: &str = r#"
body { font-family: Helvetica, Arial, sans-serif; margin: 16px 24px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
.meta { color: #555; margin: 0 0 12px 0; }
#chart { position: relative; max-width: 1180px; }
#chart svg { width: 100%; height: auto; }
#tooltip { position: fixed; pointer-events: none; background: #fff; border: 1px solid #888; padding: 6px 8px; font-size: 13px; box-shadow: 0 2px 6px rgba(0,0,0,.2); max-width: 520px; white-space: pre-wrap; z-index: 10; }
.controls { margin: 16px 0 8px 0; }
#search { width: 360px; padding: 4px 6px; font-size: 14px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 7px; }
th { background: #f2f2f2; cursor: pointer; user-select: none; position: sticky; top: 0; }
th[aria-sort="descending"]::after { content: " \25BC"; }
th[aria-sort="ascending"]::after { content: " \25B2"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.name { min-width: 340px; max-width: 560px; overflow-wrap: anywhere; }
tr.not-plotted td { color: #888; }
tr.hl td { background: #fff6cc; }
.warn { color: #c06000; font-weight: bold; }
.point.dim, .join.dim, .label.dim { opacity: 0.08; }
.point.hl { stroke: #000; stroke-width: 3; }
.join.hl { stroke-width: 3.5; }
.hidden-level, .hidden-precision { display: none; }
.notes { color: #555; font-size: 13px; max-width: 1180px; }
"#;

const SCRIPT: &str = r#"
(function () {
  'use strict';
  var status = document.getElementById('roofline-status');
  var errors = 0;
  window.addEventListener('error', function () {
    errors += 1;
    status.setAttribute('data-errors', String(errors));
  });
  var svg = document.getElementById('roofline-plot');
  var points = Array.prototype.slice.call(svg.querySelectorAll('.point'));
  var tip = document.getElementById('tooltip');
  var table = document.getElementById('kernels');
  var tbody = table.tBodies[0];
  var rows = Array.prototype.slice.call(tbody.rows);
  var names = {};
  rows.forEach(function (r) { names[r.getAttribute('data-k')] = r.getAttribute('data-name'); });

  function place(e) {
    var x = e.clientX + 14, y = e.clientY + 14;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth) { x = Math.max(0, e.clientX - w - 14); }
    if (y + h > window.innerHeight) { y = Math.max(0, e.clientY - h - 14); }
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  points.forEach(function (c) {
    c.addEventListener('mouseenter', function (e) {
      var level = c.getAttribute('data-level');
      var label = document.querySelector('.legend-item[data-level="' + level + '"] text');
      var lines = [
        names[c.getAttribute('data-k')],
        (label ? label.textContent : level) + ', ' + c.getAttribute('data-precision'),
        'AI: ' + c.getAttribute('data-ai') + ' FLOP/byte',
        'Performance: ' + c.getAttribute('data-gflops') + ' GFLOP/s',
        c.getAttribute('data-pct') + '% of roof (' + c.getAttribute('data-roof') + ' GFLOP/s)'
      ];
      if (c.classList.contains('above-roof')) { lines.push('\u26A0 above its roof: check the counters and the device file'); }
      tip.textContent = lines.join('\n');
      tip.hidden = false;
      place(e);
      highlight(c.getAttribute('data-k'), true);
    });
    c.addEventListener('mousemove', place);
    c.addEventListener('mouseleave', function () {
      tip.hidden = true;
      highlight(c.getAttribute('data-k'), false);
    });
  });

  var joins = Array.prototype.slice.call(svg.querySelectorAll('.join, .label'));
  function highlight(k, on) {
    points.concat(joins).forEach(function (c) {
      if (c.getAttribute('data-k') === k) { c.classList.toggle('hl', on); }
    });
    rows.forEach(function (r) {
      if (r.getAttribute('data-k') === k) { r.classList.toggle('hl', on); }
    });
  }
  rows.forEach(function (r) {
    r.addEventListener('mouseenter', function () { highlight(r.getAttribute('data-k'), true); });
    r.addEventListener('mouseleave', function () { highlight(r.getAttribute('data-k'), false); });
  });

  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  function sortBy(col, dir) {
    var numeric = headers[col].getAttribute('data-type') === 'num';
    var sorted = rows.slice().sort(function (a, b) {
      var va = a.cells[col].getAttribute('data-v'), vb = b.cells[col].getAttribute('data-v');
      var c;
      if (numeric) {
        var na = parseFloat(va), nb = parseFloat(vb);
        if (isNaN(na)) { na = -Infinity; }
        if (isNaN(nb)) { nb = -Infinity; }
        c = na < nb ? -1 : (na > nb ? 1 : 0);
      } else {
        c = va < vb ? -1 : (va > vb ? 1 : 0);
      }
      if (c === 0) { c = parseInt(a.getAttribute('data-k'), 10) - parseInt(b.getAttribute('data-k'), 10); return c; }
      return dir === 'ascending' ? c : -c;
    });
    sorted.forEach(function (r) { tbody.appendChild(r); });
    headers.forEach(function (h, i) {
      if (i === col) { h.setAttribute('aria-sort', dir); } else { h.removeAttribute('aria-sort'); }
    });
  }
  headers.forEach(function (h, i) {
    h.addEventListener('click', function () {
      var cur = h.getAttribute('aria-sort');
      var dir = cur === 'descending' ? 'ascending' : (cur === 'ascending' ? 'descending' : (h.getAttribute('data-type') === 'num' ? 'descending' : 'ascending'));
      sortBy(i, dir);
    });
  });

  var search = document.getElementById('search');
  var count = document.getElementById('match-count');
  function filter() {
    var q = search.value.trim().toLowerCase();
    var shown = 0, keep = {};
    rows.forEach(function (r) {
      var ok = q === '' || r.getAttribute('data-name').toLowerCase().indexOf(q) !== -1;
      r.hidden = !ok;
      if (ok) { shown += 1; keep[r.getAttribute('data-k')] = true; }
    });
    points.concat(joins).forEach(function (c) { c.classList.toggle('dim', q !== '' && !keep[c.getAttribute('data-k')]); });
    count.textContent = shown + ' of ' + rows.length + ' kernels';
  }
  search.addEventListener('input', filter);

  Array.prototype.slice.call(svg.querySelectorAll('.legend-item')).forEach(function (item) {
    // A legend entry names a memory level or a precision; clicking it
    // hides (or shows again) everything drawn for it.
    item.addEventListener('click', function () {
      var attr = item.hasAttribute('data-level') ? 'data-level' : 'data-precision';
      var cls = attr === 'data-level' ? 'hidden-level' : 'hidden-precision';
      var value = item.getAttribute(attr);
      var hidden = item.classList.toggle('off');
      item.style.opacity = hidden ? '0.35' : '1';
      Array.prototype.slice.call(svg.querySelectorAll('[' + attr + '="' + value + '"]')).forEach(function (el) {
        if (el !== item && el.tagName !== 'tspan') { el.classList.toggle(cls, hidden); }
      });
    });
  });

  document.getElementById('download-svg').addEventListener('click', function () {
    var copy = svg.cloneNode(true);
    copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
    Array.prototype.slice.call(copy.querySelectorAll('.dim, .hl, .hidden-level, .hidden-precision')).forEach(function (el) {
      el.classList.remove('dim', 'hl', 'hidden-level', 'hidden-precision');
    });
    var blob = new Blob([new XMLSerializer().serializeToString(copy)], { type: 'image/svg+xml' });
    var a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = (document.title || 'roofline').replace(/[^A-Za-z0-9_.-]+/g, '_') + '.svg';
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 0);
  });

  filter();
  // Exercise the sort once (a no-op: the table is rendered longest first)
  // and record what the headless test checks.
  sortBy(1, 'descending');
  var unmatched = points.filter(function (c) { return !names[c.getAttribute('data-k')]; }).length;
  status.setAttribute('data-unmatched', String(unmatched));
  status.setAttribute('data-first-row', tbody.rows.length ? tbody.rows[0].getAttribute('data-k') : '');
  var perLevel = {};
  points.forEach(function (c) {
    var l = c.getAttribute('data-level');
    perLevel[l] = (perLevel[l] || 0) + 1;
  });
  Object.keys(perLevel).forEach(function (l) { status.setAttribute('data-points-' + l, String(perLevel[l])); });
  status.setAttribute('data-points', String(points.length));
  status.setAttribute('data-rows', String(rows.length));
  status.setAttribute('data-errors', String(errors));
  status.setAttribute('data-ready', '1');
})();
"#;

pub fn html(r: &Roofline, views: &[KernelView], name: &str, label_count: usize) -> String {
    let mut s = String::with_capacity(64 * 1024);
    let t = title(r, name);
    let selected = views.iter().filter(|v| v.selected).count();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&t),
        esc(&t)
    );
    let total_ms = r.total_time_ns.as_f64() / 1e6;
    let precisions: Vec<String> = r
        .precisions
        .iter()
        .map(|p| format!("{} (peak {} GFLOP/s)", p.label(), sig(r.device.peak(*p))))
        .collect();
    let _ = writeln!(
        s,
        "<p class=\"meta\">Device {}{}; precisions with operations: {}; each kernel is placed against its own dominant precision (largest operation count); {} kernels in both profiles, {} plotted (more than {}% of the time and some operations); total GPU time {} ms.</p>",
        esc(&r.device.name),
        r.device
            .description
            .as_deref()
            .map(|d| format!(" ({})", esc(d)))
            .unwrap_or_default(),
        if precisions.is_empty() {
            "none".to_string()
        } else {
            precisions.join(", ")
        },
        r.kernels.len(),
        selected,
        crate::model::MIN_TIME_PCT,
        sig(total_ms)
    );
    s.push_str("<div id=\"chart\">\n");
    s.push_str(&svg(r, views, name, false, label_count));
    s.push_str("</div>\n<div id=\"tooltip\" hidden></div>\n");
    s.push_str("<div class=\"controls\"><label for=\"search\">Search kernels: </label><input id=\"search\" type=\"search\" placeholder=\"part of a kernel name\" autocomplete=\"off\"> <span id=\"match-count\"></span> <button id=\"download-svg\" type=\"button\">Download chart (SVG)</button></div>\n");
    // Kernel table: sortable; default order is by time, longest first.
    let present = r.present_levels();
    s.push_str("<table id=\"kernels\">\n<thead><tr><th data-type=\"str\">Kernel</th><th data-type=\"num\" aria-sort=\"descending\">Time (ms)</th><th data-type=\"num\">% of time</th><th data-type=\"str\">Precision</th><th data-type=\"num\">GFLOP/s</th><th data-type=\"str\">Bound</th><th data-type=\"num\">% of binding roof</th>");
    for (_, level) in &present {
        let _ = write!(
            s,
            "<th data-type=\"num\">AI {} (FLOP/byte)</th>",
            esc(&level.label)
        );
    }
    s.push_str("<th data-type=\"num\">Instances</th></tr></thead>\n<tbody>\n");
    for v in views {
        let k = &r.kernels[v.kernel];
        let binding = v.binding.map(|b| &v.points[b]);
        let bound = match binding {
            Some(p) if p.memory_bound => format!("memory ({})", r.levels[p.level].label),
            Some(_) => "compute".to_string(),
            None => "no operations".to_string(),
        };
        let pct = binding.map_or(f64::NAN, |p| p.pct_of_roof);
        let above = v.points.iter().any(|p| p.above_roof);
        let _ = write!(
            s,
            "<tr data-k=\"{}\" data-name=\"{}\"{}><td class=\"name\" data-v=\"{}\">{}{}</td>",
            v.kernel,
            esc(&k.name),
            if v.selected {
                ""
            } else {
                " class=\"not-plotted\""
            },
            esc(&k.name),
            if above {
                "<span class=\"warn\" title=\"above its roof\">⚠ </span>"
            } else {
                ""
            },
            esc(&k.name)
        );
        let ms = k.time_ns.as_f64() / 1e6;
        let num_cell = |x: f64| format!("<td class=\"num\" data-v=\"{x}\">{}</td>", sig(x));
        s.push_str(&num_cell(ms));
        s.push_str(&num_cell(v.time_pct));
        let own = v.precision.map_or("", |p| p.label());
        let _ = write!(s, "<td data-v=\"{own}\">{own}</td>");
        s.push_str(&num_cell(v.gflops));
        let _ = write!(s, "<td data-v=\"{}\">{}</td>", esc(&bound), esc(&bound));
        s.push_str(&num_cell(pct));
        for (li, _) in &present {
            let ai = v
                .points
                .iter()
                .find(|p| p.level == *li)
                .map_or(f64::NAN, |p| p.ai);
            s.push_str(&num_cell(ai));
        }
        let _ = writeln!(
            s,
            "<td class=\"num\" data-v=\"{0}\">{0}</td></tr>",
            k.memory_instances
        );
    }
    s.push_str("</tbody>\n</table>\n");
    s.push_str("<p class=\"notes\">Roof = min(AI × bandwidth, peak of the kernel's precision) in decimal units (GB/s = 10<sup>9</sup> bytes/s, GFLOP/s = 10<sup>9</sup> operations/s). AI and performance use the operation count of each kernel's own dominant precision; the bound is the level whose roof is lowest at the kernel's AI (outlined in black on the chart). Greyed rows are not plotted. ⚠ marks points above their roof, which points to a counting or unit error rather than a fast kernel.</p>\n");
    s.push_str("<div id=\"roofline-status\" hidden></div>\n<script>");
    s.push_str(SCRIPT);
    s.push_str("</script>\n</body>\n</html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_drop_shape_templates_and_parameters() {
        let cases = [
            (
                "xpu::xetla::hgemm_caller<sycl::_V1::ext::oneapi::bfloat16, 256, 256, 32, 64, 32, 1, true, false>[SIMD_ANY {16; 16; 1} {8; 4; 1}]",
                "hgemm_caller",
            ),
            ("gen_conv[SIMD16 {28; 28; 8} {16; 1; 1}]", "gen_conv"),
            (
                "main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}]",
                "main::{lambda#4}",
            ),
            (
                "(anonymous namespace)::softmax_kernel<sycl::_V1::ext::oneapi::bfloat16, 1024>[SIMD32 {512; 1; 1} {1024; 1; 1}]",
                "softmax_kernel",
            ),
            ("plain", "plain"),
            (
                "a_kernel_name_that_is_much_longer_than_thirty_two_characters",
                "a_kernel_name_that_is_much_long…",
            ),
        ];
        for (full, short) in cases {
            assert_eq!(short_name(full), short, "{full}");
        }
    }
}
