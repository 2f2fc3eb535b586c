//! The dashboard look shared by every interactive HTML page of the
//! workspace (the metric dashboard of `analyze`, the stall pages, any
//! tool's report that wants charts a reader can hover and toggle).
//!
//! What it offers:
//! * [`STYLE`]: the CSS (header bar, cards, sortable tables, legends as
//!   toggle buttons, the tooltip, chart text >= 11 px);
//! * [`SCRIPT`]: a small hand-written script defining `window.UD` (no
//!   framework, no network; a page's own script runs after it):
//!   - `UD.lineChart(box, spec)`: an SVG line chart drawn into element
//!     `box`. `spec = {x: [..], xLabel, yLabel, title, height, series:
//!     [{name, values: [..], color?, dash?}], doubtful?: [row indices],
//!     xNames?: [..]}`. Y starts at 0, lines can be toggled in the legend,
//!     hovering shows every visible value at the nearest X;
//!   - `UD.barChart(box, spec)`: grouped bars, `spec = {categories: [..],
//!     xLabel, yLabel, title, height, series: [{name, values}], doubtful?}`;
//!   - `UD.sortable(table)`: click a `<th>` to sort (cells sort by their
//!     `data-v` number when they have one, else by text);
//!   - `UD.filter(input, items, textOf)`: hides items whose text does not
//!     contain every word typed;
//!   - `UD.lazy(element, draw)`: calls `draw` once the element comes near
//!     the viewport (big static pages);
//!   - `UD.fmt(v)` (4 significant digits, thousands separators),
//!     `UD.short(v)` (axis labels: `12k`, `3.4M`),
//!     `UD.color(i)` (tab10, as the PDF charts), `UD.el(tag, attrs,
//!     text)`, `UD.tip.show(event, text)` / `UD.tip.hide()`;
//! * [`page_start`] / [`page_end`]: the document around a page's body (the
//!   header bar with title, subtitle and links; `STYLE`; `SCRIPT` then the
//!   page's script at the end);
//! * [`script_json`]: JSON made safe to inline in `<script
//!   type="application/json">`.
//!
//! Pages stay single files that work offline (docs/analyze.md#dashboard).

use std::fmt::Write as _;

use crate::escape::escape;

/// A link in the header bar: `(text, href)`.
pub type HeaderLink<'a> = (&'a str, &'a str);

/// What the header bar of a page says.
#[derive(Debug, Clone, Default)]
pub struct PageHead<'a> {
    /// The document title and the header's `<h1>`.
    pub title: &'a str,
    /// A line under the title (e.g. the input file), plain text.
    pub subtitle: &'a str,
    /// Links shown at the right of the header bar.
    pub links: &'a [HeaderLink<'a>],
}

/// Starts a page: doctype, head with [`STYLE`] (and `extra_style`), the
/// header bar, and `<main>` opened. Close with [`page_end`].
pub fn page_start(html: &mut String, head: &PageHead<'_>, extra_style: &str) {
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{STYLE}{extra_style}</style>\n</head>\n<body>\n\
         <header class=\"top\">\n<div>\n<h1>{title}</h1>\n<p class=\"file\">{subtitle}</p>\n</div>\n<nav>",
        title = escape(head.title),
        subtitle = escape(head.subtitle),
    );
    for (text, href) in head.links {
        let _ = write!(html, "<a href=\"{}\">{}</a>", escape(href), escape(text));
    }
    html.push_str("</nav>\n</header>\n<main>\n");
}

/// Ends a page: closes `<main>`, adds the tooltip element, [`SCRIPT`], then
/// `page_script` (which can use `window.UD`).
pub fn page_end(html: &mut String, page_script: &str) {
    html.push_str("</main>\n<div id=\"ud-tip\" hidden></div>\n<script>\n");
    html.push_str(SCRIPT);
    html.push_str("</script>\n<script>\n");
    html.push_str(page_script);
    html.push_str("</script>\n</body>\n</html>\n");
}

/// `json` made safe inside `<script type="application/json">`: `<` is
/// written `\u003c` (valid JSON, and no `</script>` can end the element).
pub fn script_json(json: &str) -> String {
    json.replace('<', "\\u003c")
}

/// The CSS of dashboard pages.
pub const STYLE: &str = "\
:root { --ink: #1f2328; --muted: #59636e; --line: #d8dee4; --accent: #0b5cad; }
* { box-sizing: border-box; }
body { margin: 0; background: #f2f4f7; color: var(--ink); font: 14px/1.45 'DejaVu Sans', Verdana, sans-serif; }
header.top { background: #1d3557; color: #ffffff; padding: 0.8em 1.5em; display: flex; justify-content: space-between; align-items: center; gap: 1em; }
header.top h1 { margin: 0; font-size: 1.35em; overflow-wrap: anywhere; }
header.top p { margin: 0.2em 0 0 0; color: #d7e3f4; overflow-wrap: anywhere; }
header.top nav { display: flex; gap: 1em; white-space: nowrap; }
header.top a { color: #ffffff; }
main { max-width: 1280px; margin: 0 auto; padding: 1em; }
.card { background: #ffffff; border: 1px solid var(--line); border-radius: 6px; padding: 0.8em 1.2em; margin: 0 0 1em 0; box-shadow: 0 1px 2px rgba(0,0,0,0.06); }
h2 { font-size: 1.15em; margin: 0.2em 0 0.5em 0; overflow-wrap: anywhere; }
h3 { font-size: 1.02em; margin: 0.8em 0 0.4em 0; overflow-wrap: anywhere; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 0.92em; overflow-wrap: anywhere; }
.hint, .file { color: var(--muted); }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.5em 0.8em; margin: 0.5em 0; }
.error { background: #ffebe9; border-left: 4px solid #cf222e; padding: 0.5em 0.8em; margin: 0.5em 0; }
input, button, select { font: inherit; }
input[type=search], input[type=text] { padding: 0.25em 0.5em; border: 1px solid var(--line); border-radius: 4px; }
.toolbar { display: flex; flex-wrap: wrap; gap: 0.6em 1.2em; align-items: center; margin: 0.3em 0 0.6em 0; }
.seg-buttons button { border: 1px solid var(--line); background: #ffffff; padding: 0.15em 0.7em; cursor: pointer; }
.seg-buttons button[aria-pressed=true] { background: var(--accent); color: #ffffff; border-color: var(--accent); }
.legend { display: flex; flex-wrap: wrap; gap: 0.3em 0.6em; margin: 0.3em 0 0.4em 0; }
.legend button { border: 1px solid var(--line); background: #ffffff; border-radius: 4px; padding: 0.1em 0.5em; cursor: pointer; font-size: 12px; }
.legend button[aria-pressed=false] { opacity: 0.4; text-decoration: line-through; }
i.sw { display: inline-block; width: 0.85em; height: 0.85em; border-radius: 2px; margin-right: 0.35em; vertical-align: -0.05em; }
.chart { position: relative; min-height: 2em; }
.chart svg { display: block; width: 100%; height: auto; overflow: visible; }
.chart svg text { font-size: 12px; fill: var(--ink); font-family: 'DejaVu Sans', Verdana, sans-serif; }
.chart svg text.title { font-size: 13px; font-weight: 600; }
.chart svg .grid { stroke: #e6e9ed; }
.chart svg .axis { stroke: #8c959f; }
.chart svg .rule { stroke: #59636e; stroke-dasharray: 3 3; }
.chart svg .doubt { fill: #f0b400; }
.charts-row { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1em 0; font-size: 0.9em; width: 100%; }
th, td { border-bottom: 1px solid var(--line); padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; vertical-align: bottom; }
td.name { overflow-wrap: anywhere; }
.scroll { overflow-x: auto; }
table.sortable th { cursor: pointer; user-select: none; }
th[aria-sort=ascending]::after { content: ' \\25B2'; font-size: 0.75em; }
th[aria-sort=descending]::after { content: ' \\25BC'; font-size: 0.75em; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr[hidden], li[hidden] { display: none; }
details summary { cursor: pointer; color: var(--accent); margin: 0.3em 0; }
#ud-tip { position: fixed; z-index: 10; pointer-events: none; background: #1f2328; color: #ffffff; padding: 0.3em 0.6em; border-radius: 4px; font-size: 12px; white-space: pre; max-width: 70vw; overflow: hidden; }
";

/// `window.UD`: charts, tooltips, sortable tables, filters (see the module
/// head).
pub const SCRIPT: &str = r#"(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var TAB10 = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  function color(i) { return TAB10[i % TAB10.length]; }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) { e.setAttribute(k, attrs[k]); }
    if (text !== undefined && text !== null) { e.textContent = text; }
    return e;
  }
  function sv(tag, attrs, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs || {}) { e.setAttribute(k, attrs[k]); }
    if (text !== undefined && text !== null) { e.textContent = text; }
    return e;
  }
  function fmt(v) {
    if (v === null || v === undefined || typeof v !== 'number' || !isFinite(v)) { return 'n/a'; }
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e15 || a < 1e-4)) { return v.toExponential(3); }
    var digits = a >= 1000 ? 0 : Math.max(0, 3 - Math.floor(Math.log10(a || 1)));
    return v.toLocaleString('en-US', { maximumFractionDigits: digits });
  }
  // Axis labels: 12k, 3.4M, 1.2G (values of one axis share a step).
  function short(v) {
    var a = Math.abs(v), units = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];
    for (var i = 0; i < units.length; i++) {
      if (a >= units[i][0]) { return +(v / units[i][0]).toPrecision(4) + units[i][1]; }
    }
    return a !== 0 && a < 1e-3 ? v.toExponential(1) : String(+v.toPrecision(4));
  }
  function ticks(lo, hi, n) {
    if (!(hi > lo)) { hi = lo + 1; }
    var raw = (hi - lo) / n, step = Math.pow(10, Math.floor(Math.log10(raw))), r = raw / step;
    step *= r >= 7.5 ? 10 : r >= 3.5 ? 5 : r >= 1.5 ? 2 : 1;
    var out = [];
    for (var v = Math.floor(lo / step) * step; v <= hi + step * 1e-9; v += step) { out.push(+v.toPrecision(12)); }
    if (out[out.length - 1] < hi) { out.push(+(out[out.length - 1] + step).toPrecision(12)); }
    return out;
  }
  var tipBox = null;
  var tip = {
    show: function (e, text) {
      tipBox = tipBox || document.getElementById('ud-tip');
      if (!tipBox) { return; }
      tipBox.textContent = text;
      tipBox.hidden = false;
      tipBox.style.left = Math.max(0, Math.min(e.clientX + 14, window.innerWidth - tipBox.offsetWidth - 4)) + 'px';
      tipBox.style.top = Math.max(0, Math.min(e.clientY + 14, window.innerHeight - tipBox.offsetHeight - 4)) + 'px';
    },
    hide: function () { if (tipBox) { tipBox.hidden = true; } }
  };
  function finite(v) { return typeof v === 'number' && isFinite(v); }
  // The frame of a chart: SVG, scales, grid, axes, labels. `xs` are the
  // X tick values to label (or category names via xName).
  function frame(box, spec, xLo, xHi, yHi) {
    var W = Math.max(320, Math.round(box.clientWidth || 860)), H = spec.height || 300;
    var m = { l: 62, r: 14, t: spec.title ? 26 : 10, b: 44 };
    var svg = sv('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img' });
    var yt = ticks(0, yHi > 0 ? yHi * 1.04 : 1, 5);
    var yMax = yt[yt.length - 1];
    var f = {
      svg: svg, W: W, H: H, m: m,
      x: function (v) { return m.l + (xHi > xLo ? (v - xLo) / (xHi - xLo) : 0.5) * (W - m.l - m.r); },
      y: function (v) { return H - m.b - (v / yMax) * (H - m.t - m.b); }
    };
    yt.forEach(function (t) {
      var y = f.y(t).toFixed(1);
      svg.appendChild(sv('line', { 'class': 'grid', x1: m.l, x2: W - m.r, y1: y, y2: y }));
      svg.appendChild(sv('text', { x: m.l - 6, y: +y + 4, 'text-anchor': 'end' }, short(t)));
    });
    svg.appendChild(sv('line', { 'class': 'axis', x1: m.l, x2: m.l, y1: m.t, y2: H - m.b }));
    svg.appendChild(sv('line', { 'class': 'axis', x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b }));
    if (spec.title) { svg.appendChild(sv('text', { 'class': 'title', x: m.l, y: 16 }, spec.title)); }
    svg.appendChild(sv('text', { x: (m.l + W - m.r) / 2, y: H - 6, 'text-anchor': 'middle' }, spec.xLabel || ''));
    svg.appendChild(sv('text', { x: 14, y: (m.t + H - m.b) / 2, 'text-anchor': 'middle',
      transform: 'rotate(-90 14 ' + ((m.t + H - m.b) / 2) + ')' }, spec.yLabel || ''));
    return f;
  }
  function legend(box, series, hidden, redraw) {
    var lg = el('div', { 'class': 'legend' });
    series.forEach(function (s, i) {
      var b = el('button', { type: 'button', 'aria-pressed': hidden[i] ? 'false' : 'true', title: 'show or hide ' + s.name });
      var sw = el('i', { 'class': 'sw' });
      sw.style.background = s.color || color(i);
      b.appendChild(sw);
      b.appendChild(document.createTextNode(s.name));
      b.addEventListener('click', function () { hidden[i] = !hidden[i]; redraw(); });
      lg.appendChild(b);
    });
    return lg;
  }
  function lineChart(box, spec) {
    var hidden = spec.series.map(function () { return false; });
    var doubt = {};
    (spec.doubtful || []).forEach(function (i) { doubt[i] = true; });
    function draw() {
      box.textContent = '';
      var xs = spec.x, n = xs.length, xLo = Infinity, xHi = -Infinity, yHi = 0;
      xs.forEach(function (v) { if (finite(v)) { xLo = Math.min(xLo, v); xHi = Math.max(xHi, v); } });
      if (!(xHi >= xLo)) { xLo = 0; xHi = 1; }
      spec.series.forEach(function (s, i) {
        if (hidden[i]) { return; }
        s.values.forEach(function (v) { if (finite(v)) { yHi = Math.max(yHi, v); } });
      });
      var f = frame(box, spec, xLo, xHi, yHi), svg = f.svg;
      var xt = ticks(xLo, xHi, Math.max(2, Math.floor((f.W - 90) / 90)));
      xt.forEach(function (t) {
        if (t < xLo - 1e-9 || t > xHi + 1e-9) { return; }
        var x = f.x(t).toFixed(1);
        svg.appendChild(sv('line', { 'class': 'axis', x1: x, x2: x, y1: f.H - f.m.b, y2: f.H - f.m.b + 4 }));
        svg.appendChild(sv('text', { x: x, y: f.H - f.m.b + 17, 'text-anchor': 'middle' }, short(t)));
      });
      Object.keys(doubt).forEach(function (i) {
        if (i < n && finite(xs[i])) {
          var x = f.x(xs[i]), y = f.H - f.m.b;
          svg.appendChild(sv('path', { 'class': 'doubt', d: 'M' + x + ' ' + (y - 7) + 'l-4 7h8z' }));
        }
      });
      spec.series.forEach(function (s, i) {
        if (hidden[i]) { return; }
        var pts = [], c = s.color || color(i);
        for (var k = 0; k < n; k++) {
          if (finite(xs[k]) && finite(s.values[k])) { pts.push(f.x(xs[k]).toFixed(1) + ',' + f.y(s.values[k]).toFixed(1)); }
        }
        var attrs = { points: pts.join(' '), fill: 'none', stroke: c, 'stroke-width': 1.8, 'data-series': s.name };
        if (s.dash) { attrs['stroke-dasharray'] = '6 3'; }
        svg.appendChild(sv('polyline', attrs));
        if (pts.length <= 60) {
          pts.forEach(function (p) { var q = p.split(','); svg.appendChild(sv('circle', { cx: q[0], cy: q[1], r: 2.6, fill: c })); });
        }
      });
      var rule = sv('line', { 'class': 'rule', y1: f.m.t, y2: f.H - f.m.b, visibility: 'hidden' });
      svg.appendChild(rule);
      var hit = sv('rect', { x: f.m.l, y: f.m.t, width: f.W - f.m.l - f.m.r, height: f.H - f.m.t - f.m.b, fill: 'transparent' });
      hit.addEventListener('mousemove', function (e) {
        var r = svg.getBoundingClientRect(), px = (e.clientX - r.left) * f.W / r.width, best = -1, dist = Infinity;
        for (var k = 0; k < n; k++) { if (finite(xs[k])) { var d = Math.abs(f.x(xs[k]) - px); if (d < dist) { dist = d; best = k; } } }
        if (best < 0) { return; }
        var x = f.x(xs[best]).toFixed(1);
        rule.setAttribute('x1', x); rule.setAttribute('x2', x); rule.setAttribute('visibility', 'visible');
        var lines = [(spec.xLabel || 'x') + ': ' + (spec.xNames ? spec.xNames[best] : fmt(xs[best]))];
        spec.series.forEach(function (s, i) { if (!hidden[i]) { lines.push(s.name + ': ' + fmt(s.values[best])); } });
        if (doubt[best]) { lines.push('doubtful report' + (spec.doubtNote ? ': ' + spec.doubtNote[best] : '')); }
        tip.show(e, lines.join('\n'));
      });
      hit.addEventListener('mouseleave', function () { rule.setAttribute('visibility', 'hidden'); tip.hide(); });
      svg.appendChild(hit);
      box.appendChild(svg);
      if (spec.series.length > 1 || spec.legend) { box.appendChild(legend(box, spec.series, hidden, draw)); }
    }
    draw();
  }
  function barChart(box, spec) {
    var hidden = spec.series.map(function () { return false; });
    var doubt = {};
    (spec.doubtful || []).forEach(function (i) { doubt[i] = true; });
    function draw() {
      box.textContent = '';
      var cats = spec.categories, n = cats.length, yHi = 0;
      var shown = [];
      spec.series.forEach(function (s, i) {
        if (hidden[i]) { return; }
        shown.push(i);
        s.values.forEach(function (v) { if (finite(v)) { yHi = Math.max(yHi, v); } });
      });
      var f = frame(box, spec, 0, Math.max(n, 1), yHi), svg = f.svg;
      var slot = (f.W - f.m.l - f.m.r) / Math.max(n, 1), bw = Math.min(slot * 0.8 / Math.max(shown.length, 1), 48);
      var pad = (slot - bw * shown.length) / 2;
      var every = Math.max(1, Math.ceil(n / Math.floor((f.W - 90) / 50)));
      cats.forEach(function (c, k) {
        var x0 = f.m.l + k * slot;
        if (k % every === 0) {
          svg.appendChild(sv('text', { x: (x0 + slot / 2).toFixed(1), y: f.H - f.m.b + 17, 'text-anchor': 'middle' }, String(c)));
        }
        if (doubt[k]) { svg.appendChild(sv('path', { 'class': 'doubt', d: 'M' + (x0 + slot / 2) + ' ' + (f.H - f.m.b - 7) + 'l-4 7h8z' })); }
        shown.forEach(function (i, j) {
          var s = spec.series[i], v = s.values[k];
          if (!finite(v)) { return; }
          var y = f.y(Math.max(v, 0)), r = sv('rect', { x: (x0 + pad + j * bw).toFixed(1), y: y.toFixed(1),
            width: Math.max(bw - 1, 1).toFixed(1), height: Math.max(f.H - f.m.b - y, 0).toFixed(1), fill: s.color || color(i), 'data-series': s.name });
          r.addEventListener('mousemove', function (e) {
            tip.show(e, (spec.xLabel || '') + ' ' + c + '\n' + s.name + ': ' + fmt(v) + (doubt[k] ? '\ndoubtful report' : ''));
          });
          r.addEventListener('mouseleave', tip.hide);
          svg.appendChild(r);
        });
      });
      box.appendChild(svg);
      if (spec.series.length > 1 || spec.legend) { box.appendChild(legend(box, spec.series, hidden, draw)); }
    }
    draw();
  }
  function sortable(table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener('click', function () {
        var down = th.getAttribute('aria-sort') !== 'descending';
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute('aria-sort'); });
        th.setAttribute('aria-sort', down ? 'descending' : 'ascending');
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        function key(r) {
          var c = r.cells[col], v = c && c.getAttribute('data-v');
          return v !== null && v !== undefined ? (v === '' ? -Infinity : +v) : (c ? c.textContent.toLowerCase() : '');
        }
        rows.sort(function (a, b) {
          var x = key(a), y = key(b), o = x < y ? -1 : x > y ? 1 : 0;
          return down ? -o : o;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  }
  function filter(input, items, textOf) {
    function apply() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      items.forEach(function (it) {
        var t = textOf(it).toLowerCase();
        it.hidden = !words.every(function (w) { return t.indexOf(w) >= 0; });
      });
    }
    input.addEventListener('input', apply);
    apply();
    return apply;
  }
  function lazy(element, draw) {
    if (!('IntersectionObserver' in window)) { draw(); return; }
    var io = new IntersectionObserver(function (entries) {
      if (entries.some(function (e) { return e.isIntersecting; })) { io.disconnect(); draw(); }
    }, { rootMargin: '600px' });
    io.observe(element);
  }
  window.UD = { el: el, svg: sv, fmt: fmt, short: short, color: color, ticks: ticks, tip: tip, lineChart: lineChart,
    barChart: barChart, sortable: sortable, filter: filter, lazy: lazy };
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_has_header_links_and_script_after_main() {
        let mut html = String::new();
        page_start(
            &mut html,
            &PageHead {
                title: "a <b>",
                subtitle: "f.csv",
                links: &[("Index", "/"), ("PDF", "x?y=1&z=2")],
            },
            ".x{}",
        );
        html.push_str("<p>body</p>\n");
        page_end(&mut html, "UD.fmt(1);");
        assert!(html.contains("<title>a &lt;b&gt;</title>"));
        assert!(html.contains("<a href=\"x?y=1&amp;z=2\">PDF</a>"));
        assert!(html.contains(".x{}</style>"));
        let main_end = html.find("</main>").unwrap();
        assert!(html.find("window.UD").unwrap() > main_end);
        assert!(html.ends_with("UD.fmt(1);</script>\n</body>\n</html>\n"));
    }

    #[test]
    fn inline_json_cannot_close_the_script() {
        assert_eq!(
            script_json(r#"{"k":"</script><b>"}"#),
            r#"{"k":"\u003c/script>\u003cb>"}"#
        );
    }
}
