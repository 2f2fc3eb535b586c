//! The roofline chart as inline SVG (`--format svg`) and as a self-contained
//! HTML page (SVG + table + a small inline script; no network access, unlike
//! the original's CanvasJS page, scripts.md 6.4).
//!
//! The chart is rendered here, not in the browser, so the SVG file and the
//! page show the same thing and the page works without JavaScript too; the
//! script only adds the hover box, table sorting, the search box and the
//! level toggles.

use std::fmt::Write as _;

use crate::model::{KernelView, Point, Roofline};

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 600.0;
const LEFT: f64 = 86.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 62.0;

const COLORS: [&str; 6] = [
    "#1f6fd1", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];

pub fn level_color(i: usize) -> &'static str {
    COLORS[i % COLORS.len()]
}

/// Escapes text for HTML/SVG content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Four significant digits, plain for everyday magnitudes.
pub fn sig(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "n/a".into()
        } else {
            "∞".into()
        };
    }
    if x == 0.0 {
        return "0".into();
    }
    let a = x.abs();
    if !(1e-3..1e7).contains(&a) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn decade_label(k: i32) -> String {
    match k {
        -3..=-1 => format!("{}", 10f64.powi(k)),
        0..=6 => format!("{}", 10i64.pow(k as u32)),
        _ => format!("1e{k}"),
    }
}

struct Axes {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
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
            x0: xlo.log10().floor(),
            x1: xhi.log10().ceil().max(xlo.log10().floor() + 1.0),
            y0: ylo.log10().floor(),
            y1: yhi.log10().ceil().max(ylo.log10().floor() + 1.0),
        }
    }

    fn sx(&self, v: f64) -> f64 {
        LEFT + (v.log10() - self.x0) / (self.x1 - self.x0) * (WIDTH - LEFT - RIGHT)
    }

    fn sy(&self, v: f64) -> f64 {
        TOP + (HEIGHT - TOP - BOTTOM) * (1.0 - (v.log10() - self.y0) / (self.y1 - self.y0))
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

/// The chart as an `<svg>` element (standalone when `standalone`).
pub fn svg(r: &Roofline, views: &[KernelView], name: &str, standalone: bool) -> String {
    let ax = Axes::new(r, views);
    let mut s = String::with_capacity(16 * 1024);
    let (pl, pr, pt, pb) = (LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM);
    let _ = writeln!(
        s,
        "<svg id=\"roofline-plot\" {}viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\" role=\"img\">",
        if standalone { "xmlns=\"http://www.w3.org/2000/svg\" " } else { "" }
    );
    let _ = writeln!(
        s,
        "<title>{}</title>\n<defs><clipPath id=\"plot-area\"><rect x=\"{pl}\" y=\"{pt}\" width=\"{}\" height=\"{}\"/></clipPath></defs>",
        esc(&title(r, name)),
        pr - pl,
        pb - pt
    );
    let _ = writeln!(
        s,
        "<rect x=\"0\" y=\"0\" width=\"{WIDTH}\" height=\"{HEIGHT}\" fill=\"#fff\"/>"
    );
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"28\" text-anchor=\"middle\" font-size=\"18\" font-weight=\"bold\">{}</text>",
        WIDTH / 2.0,
        esc(&title(r, name))
    );
    // Grid and tick labels at every decade.
    s.push_str("<g class=\"grid\" stroke=\"#e3e3e3\" stroke-width=\"1\">\n");
    for k in ax.x0 as i32..=ax.x1 as i32 {
        let x = ax.sx(10f64.powi(k));
        let _ = writeln!(
            s,
            "<line x1=\"{x:.2}\" y1=\"{pt}\" x2=\"{x:.2}\" y2=\"{pb}\"/>"
        );
    }
    for k in ax.y0 as i32..=ax.y1 as i32 {
        let y = ax.sy(10f64.powi(k));
        let _ = writeln!(
            s,
            "<line x1=\"{pl}\" y1=\"{y:.2}\" x2=\"{pr}\" y2=\"{y:.2}\"/>"
        );
    }
    s.push_str("</g>\n<g class=\"ticks\" fill=\"#333\">\n");
    for k in ax.x0 as i32..=ax.x1 as i32 {
        let x = ax.sx(10f64.powi(k));
        let _ = writeln!(
            s,
            "<text x=\"{x:.2}\" y=\"{:.2}\" text-anchor=\"middle\">{}</text>",
            pb + 18.0,
            decade_label(k)
        );
    }
    for k in ax.y0 as i32..=ax.y1 as i32 {
        let y = ax.sy(10f64.powi(k));
        let _ = writeln!(
            s,
            "<text x=\"{:.2}\" y=\"{:.2}\" text-anchor=\"end\">{}</text>",
            pl - 6.0,
            y + 4.0,
            decade_label(k)
        );
    }
    s.push_str("</g>\n");
    let _ = writeln!(
        s,
        "<rect x=\"{pl}\" y=\"{pt}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#555\"/>",
        pr - pl,
        pb - pt
    );
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"15\">Arithmetic intensity (FLOP/byte)</text>",
        (pl + pr) / 2.0,
        HEIGHT - 16.0
    );
    let _ = writeln!(
        s,
        "<text transform=\"translate(20 {:.1}) rotate(-90)\" text-anchor=\"middle\" font-size=\"15\">Performance (GFLOP/s)</text>",
        (pt + pb) / 2.0
    );
    // Roofs: min(AI × BW, peak) for every level the profile has.
    let peak = r.device.peak(r.precision);
    let (ai_lo, ai_hi) = (10f64.powf(ax.x0), 10f64.powf(ax.x1));
    s.push_str(
        "<g class=\"roofs\" clip-path=\"url(#plot-area)\" fill=\"none\" stroke-width=\"2.2\">\n",
    );
    for (i, level) in r.present_levels() {
        let bw = level.bandwidth_gb_per_s;
        let start = ai_lo.max(10f64.powf(ax.y0) / bw);
        let ridge = peak / bw;
        let mut pts = vec![(start, (start * bw).min(peak))];
        if ridge > start && ridge < ai_hi {
            pts.push((ridge, peak));
        }
        pts.push((ai_hi, (ai_hi * bw).min(peak)));
        let path: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{:.2},{:.2}", ax.sx(*x), ax.sy(*y)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline class=\"roof level-{}\" data-level=\"{}\" stroke=\"{}\" points=\"{}\"><title>{} roof: {} GB/s, ridge at {} FLOP/byte</title></polyline>",
            esc(&level.key),
            esc(&level.key),
            level_color(i),
            path.join(" "),
            esc(&level.label),
            sig(bw),
            sig(ridge)
        );
    }
    s.push_str("</g>\n");
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#333\">{} peak {} GFLOP/s</text>",
        pr - 6.0,
        ax.sy(peak) - 6.0,
        r.precision.label(),
        sig(peak)
    );
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
    s.push_str("<g class=\"points\" clip-path=\"url(#plot-area)\">\n");
    for (v, p) in order {
        let level = &r.levels[p.level];
        let (cx, cy, rad) = (ax.sx(p.ai), ax.sy(p.gflops), radius(v.time_pct));
        let warn = if p.above_roof { " above-roof" } else { "" };
        let _ = writeln!(
            s,
            "<circle class=\"point level-{key}{warn}\" data-k=\"{k}\" data-level=\"{key}\" data-ai=\"{ai}\" data-gflops=\"{gf}\" data-roof=\"{roof}\" data-pct=\"{pct}\" cx=\"{cx:.2}\" cy=\"{cy:.2}\" r=\"{rad:.2}\" fill=\"{color}\" fill-opacity=\"0.55\" stroke=\"{color}\" stroke-width=\"1.2\"><title>{tip}</title></circle>",
            key = esc(&level.key),
            k = v.kernel,
            ai = sig(p.ai),
            gf = sig(p.gflops),
            roof = sig(p.roof_gflops),
            pct = sig(p.pct_of_roof),
            color = level_color(p.level),
            tip = esc(&point_tooltip(r, v, p)),
        );
        if p.above_roof {
            let _ = writeln!(
                s,
                "<g class=\"warn-mark\" data-k=\"{}\" data-level=\"{}\"><circle cx=\"{cx:.2}\" cy=\"{cy:.2}\" r=\"{:.2}\" fill=\"none\" stroke=\"#e08000\" stroke-width=\"2.5\" stroke-dasharray=\"3 2\"/><text x=\"{:.2}\" y=\"{:.2}\" fill=\"#e08000\" font-weight=\"bold\" font-size=\"16\">⚠</text></g>",
                v.kernel,
                esc(&level.key),
                rad + 3.0,
                cx + rad + 3.0,
                cy - rad
            );
        }
    }
    s.push_str("</g>\n");
    // Legend.
    let present = r.present_levels();
    let lx = pl + 12.0;
    let mut ly = pt + 18.0;
    let _ = writeln!(
        s,
        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"250\" height=\"{:.1}\" fill=\"#fff\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>",
        pl + 4.0,
        pt + 4.0,
        present.len() as f64 * 20.0 + 30.0
    );
    for (i, level) in &present {
        let _ = writeln!(
            s,
            "<g class=\"legend-item\" data-level=\"{}\" style=\"cursor:pointer\"><line x1=\"{lx:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{}\" stroke-width=\"3\"/><circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"5\" fill=\"{}\" fill-opacity=\"0.55\"/><text x=\"{:.1}\" y=\"{:.1}\">{} ({} GB/s)</text></g>",
            esc(&level.key),
            ly - 4.0,
            lx + 26.0,
            ly - 4.0,
            level_color(*i),
            lx + 13.0,
            ly - 4.0,
            level_color(*i),
            lx + 34.0,
            ly,
            esc(&level.label),
            sig(level.bandwidth_gb_per_s)
        );
        ly += 20.0;
    }
    let _ = writeln!(
        s,
        "<text x=\"{lx:.1}\" y=\"{ly:.1}\" fill=\"#555\" font-size=\"12\">dot area ∝ share of GPU time; <tspan fill=\"#e08000\">⚠</tspan> above roof</text>"
    );
    s.push_str("</svg>\n");
    s
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits_for_labels() {
        assert_eq!(sig(252713.43995799552), "252713");
        assert_eq!(sig(153.42136083618567), "153.4");
        assert_eq!(sig(0.036002751885922085), "0.036");
        assert_eq!(sig(2.0), "2");
        assert_eq!(sig(3.5e12), "3.500e12");
        assert_eq!(sig(0.0), "0");
        assert_eq!(sig(f64::INFINITY), "∞");
        assert_eq!(sig(f64::NAN), "n/a");
    }

    #[test]
    fn names_are_escaped_for_html_and_attributes() {
        assert_eq!(
            esc("f<a, \"b\">(x&y)'"),
            "f&lt;a, &quot;b&quot;&gt;(x&amp;y)&#39;"
        );
    }

    #[test]
    fn decade_labels() {
        assert_eq!(decade_label(-3), "0.001");
        assert_eq!(decade_label(0), "1");
        assert_eq!(decade_label(5), "100000");
        assert_eq!(decade_label(7), "1e7");
    }
}
