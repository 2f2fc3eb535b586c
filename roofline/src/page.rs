//! The roofline chart as inline SVG (`--format svg`) and as a self-contained
//! HTML page (SVG + table + a small inline script; no network access, unlike
//! the original's CanvasJS page, docs/compatibility.md#roofline-page).
//!
//! The chart is rendered here, not in the browser, so the SVG file and the
//! page show the same thing and the page works without JavaScript too; the
//! script only adds the hover box, table sorting, the search box and the
//! level toggles.

use std::fmt::Write as _;

use unitrace_render::axis::LogScale;
use unitrace_render::escape::escape as esc;
use unitrace_render::number::{decade, significant as sig};
use unitrace_render::palette::{self, series_color, Rgb};
use unitrace_render::svg::{Markup, Value, FONT_FAMILY};

use crate::model::{KernelView, Point, Roofline};

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 600.0;
const LEFT: f64 = 86.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 62.0;

/// Colour of memory level `i`: the shared chart palette.
pub fn level_color(i: usize) -> String {
    series_color(i).hex()
}

fn hex(c: Rgb) -> String {
    c.hex()
}

/// The two log-log axes of the chart.
struct Axes {
    x: LogScale,
    y: LogScale,
}

impl Axes {
    fn new(r: &Roofline, views: &[KernelView]) -> Axes {
        let peak = r.device.peak(r.precision);
        // The original's fixed range (AI 0.001..100000, GFLOP/s from 0.1),
        // widened to whatever the data needs.
        let (mut xlo, mut xhi, mut ylo, mut yhi) = (1e-3f64, 1e5f64, 0.1f64, peak * 2.0);
        for v in views {
            for p in v.points.iter().filter(|p| p.plotted) {
                xlo = xlo.min(p.ai);
                xhi = xhi.max(p.ai);
                ylo = ylo.min(p.gflops);
                yhi = yhi.max(p.gflops * 2.0);
            }
        }
        Axes {
            x: LogScale::covering(xlo, xhi, LEFT, WIDTH - RIGHT),
            y: LogScale::covering(ylo, yhi, HEIGHT - BOTTOM, TOP),
        }
    }
}

/// Dot radius: area grows with the kernel's share of the total time.
fn radius(time_pct: f64) -> f64 {
    3.5 + 16.0 * (time_pct.clamp(0.0, 100.0) / 100.0).sqrt()
}

pub fn title(r: &Roofline, name: &str) -> String {
    format!(
        "{name}  {} roofline on {}",
        r.precision.label(),
        r.device.name
    )
}

fn point_tooltip(r: &Roofline, v: &KernelView, p: &Point) -> String {
    let k = &r.kernels[v.kernel];
    let level = &r.levels[p.level];
    let mut s = format!(
        "{}\n{}: AI {} FLOP/byte, {} GFLOP/s, {}% of roof ({} GFLOP/s), {}% of time",
        k.name,
        level.label,
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

/// The chart as an `<svg>` element (standalone when `standalone`), drawn
/// with the shared render crate's markup writer, scales, palette and
/// number spelling; the classes and `data-*` attributes are what the
/// page's script reads.
pub fn svg(r: &Roofline, views: &[KernelView], name: &str, standalone: bool) -> String {
    let ax = Axes::new(r, views);
    let (pl, pr, pt, pb) = (LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM);
    let chart_title = title(r, name);
    let mut m = Markup::new();
    let mut root: Vec<(&str, Value)> = vec![("id", "roofline-plot".into())];
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
    m.element("title", &[], &chart_title).newline();
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
    m.element(
        "text",
        &[
            ("x", (WIDTH / 2.0).into()),
            ("y", 28.0.into()),
            ("text-anchor", "middle".into()),
            ("font-size", "18".into()),
            ("font-weight", "bold".into()),
        ],
        &chart_title,
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
    // Roofs: min(AI × BW, peak) for every level the profile has.
    let peak = r.device.peak(r.precision);
    let (ai_lo, ai_hi) = (ax.x.lo(), ax.x.hi());
    m.open(
        "g",
        &[
            ("class", "roofs".into()),
            ("clip-path", "url(#plot-area)".into()),
            ("fill", "none".into()),
            ("stroke-width", "2.2".into()),
        ],
    )
    .newline();
    for (i, level) in r.present_levels() {
        let bw = level.bandwidth_gb_per_s;
        let start = ai_lo.max(ax.y.lo() / bw);
        let ridge = peak / bw;
        let mut pts = vec![(start, (start * bw).min(peak))];
        if ridge > start && ridge < ai_hi {
            pts.push((ridge, peak));
        }
        pts.push((ai_hi, (ai_hi * bw).min(peak)));
        let path: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{:.2},{:.2}", ax.x.map(*x), ax.y.map(*y)))
            .collect();
        m.open(
            "polyline",
            &[
                ("class", format!("roof level-{}", level.key).into()),
                ("data-level", (&level.key).into()),
                ("stroke", level_color(i).into()),
                ("points", path.join(" ").into()),
            ],
        )
        .element(
            "title",
            &[],
            &format!(
                "{} roof: {} GB/s, ridge at {} FLOP/byte",
                level.label,
                sig(bw),
                sig(ridge)
            ),
        )
        .close("polyline")
        .newline();
    }
    m.close("g").newline();
    m.element(
        "text",
        &[
            ("x", (pr - 6.0).into()),
            ("y", (ax.y.map(peak) - 6.0).into()),
            ("text-anchor", "end".into()),
            ("fill", hex(palette::SECONDARY_TEXT).into()),
        ],
        &format!("{} peak {} GFLOP/s", r.precision.label(), sig(peak)),
    )
    .newline();
    // Points, largest first so small dots stay visible on top.
    let mut order: Vec<(&KernelView, &Point)> = views
        .iter()
        .flat_map(|v| v.points.iter().filter(|p| p.plotted).map(move |p| (v, p)))
        .collect();
    order.sort_by(|a, b| {
        b.0.time_pct
            .total_cmp(&a.0.time_pct)
            .then(a.0.kernel.cmp(&b.0.kernel))
    });
    m.open(
        "g",
        &[
            ("class", "points".into()),
            ("clip-path", "url(#plot-area)".into()),
        ],
    )
    .newline();
    let warning = hex(palette::WARNING);
    for (v, p) in order {
        let level = &r.levels[p.level];
        let (cx, cy, rad) = (ax.x.map(p.ai), ax.y.map(p.gflops), radius(v.time_pct));
        let warn = if p.above_roof { " above-roof" } else { "" };
        let color = level_color(p.level);
        let kernel = v.kernel.to_string();
        m.open(
            "circle",
            &[
                ("class", format!("point level-{}{warn}", level.key).into()),
                ("data-k", (&kernel).into()),
                ("data-level", (&level.key).into()),
                ("data-ai", sig(p.ai).into()),
                ("data-gflops", sig(p.gflops).into()),
                ("data-roof", sig(p.roof_gflops).into()),
                ("data-pct", sig(p.pct_of_roof).into()),
                ("cx", cx.into()),
                ("cy", cy.into()),
                ("r", rad.into()),
                ("fill", (&color).into()),
                ("fill-opacity", "0.55".into()),
                ("stroke", (&color).into()),
                ("stroke-width", "1.2".into()),
            ],
        )
        .element("title", &[], &point_tooltip(r, v, p))
        .close("circle")
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
                    ("cx", cx.into()),
                    ("cy", cy.into()),
                    ("r", (rad + 3.0).into()),
                    ("fill", "none".into()),
                    ("stroke", (&warning).into()),
                    ("stroke-width", "2.5".into()),
                    ("stroke-dasharray", "3 2".into()),
                ],
            )
            .element(
                "text",
                &[
                    ("x", (cx + rad + 3.0).into()),
                    ("y", (cy - rad).into()),
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
    // Legend.
    let present = r.present_levels();
    let lx = pl + 12.0;
    let mut ly = pt + 18.0;
    m.empty(
        "rect",
        &[
            ("x", (pl + 4.0).into()),
            ("y", (pt + 4.0).into()),
            ("width", "250".into()),
            ("height", (present.len() as f64 * 20.0 + 30.0).into()),
            ("fill", hex(Rgb::WHITE).into()),
            ("fill-opacity", "0.85".into()),
            ("stroke", hex(palette::LEGEND_EDGE).into()),
        ],
    )
    .newline();
    for (i, level) in &present {
        let color = level_color(*i);
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
                ("x1", lx.into()),
                ("y1", (ly - 4.0).into()),
                ("x2", (lx + 26.0).into()),
                ("y2", (ly - 4.0).into()),
                ("stroke", (&color).into()),
                ("stroke-width", "3".into()),
            ],
        )
        .empty(
            "circle",
            &[
                ("cx", (lx + 13.0).into()),
                ("cy", (ly - 4.0).into()),
                ("r", "5".into()),
                ("fill", (&color).into()),
                ("fill-opacity", "0.55".into()),
            ],
        )
        .element(
            "text",
            &[("x", (lx + 34.0).into()), ("y", ly.into())],
            &format!("{} ({} GB/s)", level.label, sig(level.bandwidth_gb_per_s)),
        )
        .close("g")
        .newline();
        ly += 20.0;
    }
    m.open(
        "text",
        &[
            ("x", lx.into()),
            ("y", ly.into()),
            ("fill", hex(palette::FRAME).into()),
            ("font-size", "12".into()),
        ],
    )
    .text("dot area ∝ share of GPU time; ")
    .element("tspan", &[("fill", (&warning).into())], "⚠")
    .text(" above roof")
    .close("text")
    .newline();
    m.close("svg").newline();
    m.into_string()
}

const STYLE: &str = r#"
body { font-family: Helvetica, Arial, sans-serif; margin: 16px 24px; color: #222; }
h1 { font-size: 20px; margin: 0 0 4px 0; }
.meta { color: #555; margin: 0 0 12px 0; }
#chart { position: relative; max-width: 960px; }
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
circle.point.dim { opacity: 0.08; }
circle.point.hl { stroke: #000; stroke-width: 3; }
.hidden-level { display: none; }
.notes { color: #555; font-size: 13px; max-width: 960px; }
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
  var points = Array.prototype.slice.call(svg.querySelectorAll('circle.point'));
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
        (label ? label.textContent : level),
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

  function highlight(k, on) {
    points.forEach(function (c) {
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
    points.forEach(function (c) { c.classList.toggle('dim', q !== '' && !keep[c.getAttribute('data-k')]); });
    count.textContent = shown + ' of ' + rows.length + ' kernels';
  }
  search.addEventListener('input', filter);

  Array.prototype.slice.call(svg.querySelectorAll('.legend-item')).forEach(function (item) {
    item.addEventListener('click', function () {
      var level = item.getAttribute('data-level');
      var hidden = item.classList.toggle('off');
      item.style.opacity = hidden ? '0.35' : '1';
      Array.prototype.slice.call(svg.querySelectorAll('[data-level="' + level + '"]')).forEach(function (el) {
        if (el !== item) { el.classList.toggle('hidden-level', hidden); }
      });
    });
  });

  document.getElementById('download-svg').addEventListener('click', function () {
    var copy = svg.cloneNode(true);
    copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
    Array.prototype.slice.call(copy.querySelectorAll('.dim, .hl, .hidden-level')).forEach(function (el) {
      el.classList.remove('dim', 'hl', 'hidden-level');
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

pub fn html(r: &Roofline, views: &[KernelView], name: &str) -> String {
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
    let _ = writeln!(
        s,
        "<p class=\"meta\">Device {}{}; plotted precision {} (largest total operation count; peak {} GFLOP/s); {} kernels in both profiles, {} plotted (more than {}% of the time and a non-zero {} count); total GPU time {} ms.</p>",
        esc(&r.device.name),
        r.device
            .description
            .as_deref()
            .map(|d| format!(" ({})", esc(d)))
            .unwrap_or_default(),
        r.precision.label(),
        sig(r.device.peak(r.precision)),
        r.kernels.len(),
        selected,
        crate::model::MIN_TIME_PCT,
        r.precision.label(),
        sig(total_ms)
    );
    s.push_str("<div id=\"chart\">\n");
    s.push_str(&svg(r, views, name, false));
    s.push_str("</div>\n<div id=\"tooltip\" hidden></div>\n");
    s.push_str("<div class=\"controls\"><label for=\"search\">Search kernels: </label><input id=\"search\" type=\"search\" placeholder=\"part of a kernel name\" autocomplete=\"off\"> <span id=\"match-count\"></span> <button id=\"download-svg\" type=\"button\">Download chart (SVG)</button></div>\n");
    // Kernel table: sortable; default order is by time, longest first.
    let present = r.present_levels();
    s.push_str("<table id=\"kernels\">\n<thead><tr><th data-type=\"str\">Kernel</th><th data-type=\"num\" aria-sort=\"descending\">Time (ms)</th><th data-type=\"num\">% of time</th><th data-type=\"num\">GFLOP/s</th><th data-type=\"str\">Largest op type</th><th data-type=\"str\">Bound</th><th data-type=\"num\">% of binding roof</th>");
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
            None => format!("no {} ops", r.precision.label()),
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
        s.push_str(&num_cell(v.gflops));
        let own = v.own_precision.label();
        let _ = write!(s, "<td data-v=\"{own}\">{own}</td>");
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
    let _ = writeln!(
        s,
        "<p class=\"notes\">Roof = min(AI × bandwidth, peak) in decimal units (GB/s = 10<sup>9</sup> bytes/s, GFLOP/s = 10<sup>9</sup> operations/s). AI and performance use the {} operation count of each kernel; the bound is the level whose roof is lowest at the kernel's AI. Greyed rows are not plotted. ⚠ marks points above their roof, which points to a counting or unit error rather than a fast kernel.</p>",
        r.precision.label()
    );
    s.push_str("<div id=\"roofline-status\" hidden></div>\n<script>");
    s.push_str(SCRIPT);
    s.push_str("</script>\n</body>\n</html>\n");
    s
}
