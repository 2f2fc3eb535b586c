//! The kernel-instance pages of the metric dashboard (docs/analyze.md#dashboard):
//! the server's `/perfdashboard?gid=N` and `/<kernel>/<gid>?format=html`
//! (one instance; "compare with" asks the server for the other one's JSON),
//! and `analyze -o x.html` (every selected instance in one offline file,
//! contents list, charts drawn when scrolled into view).
//!
//! The HTML holds the data (JSON inline) and the controls; the charts are
//! drawn by [`PAGE_SCRIPT`] over the shared `window.UD` of
//! `render::dashboard`.

use std::fmt::Write as _;
use std::io::{self, Write};

use serde_json::{json, Value};

use super::data::{unit_groups, Counter, InstanceLabel};
use crate::page_links::PageLinks;
use crate::render::dashboard::{page_end, page_start, script_json, HeaderLink, PageHead};
use crate::render::escape::escape;

/// Where a page gets the instances "compare with" names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareSource {
    /// From the server: `/perfdashboard?gid=N&format=json`.
    Server,
    /// From the instances inlined in the same file.
    Inline,
}

/// The page-wide settings the script reads: counters by unit, their
/// order, the first selection, where compared instances come from.
pub fn page_config(counters: &[Counter], selected: &[String], source: CompareSource) -> Value {
    json!({
        "units": unit_groups(counters),
        "order": counters.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        "selected": selected,
        "source": match source { CompareSource::Server => "server", CompareSource::Inline => "inline" },
    })
}

/// `instance 3 of 12, GlobalInstanceId 57` (the parts the file has).
pub fn instance_words(label: &InstanceLabel<'_>) -> String {
    let mut words = Vec::new();
    match (label.ordinal, label.of) {
        (Some(n), Some(of)) => words.push(format!("instance {n} of {of}")),
        (Some(n), None) => words.push(format!("instance {n}")),
        _ => {}
    }
    if let Some(id) = label.global_id {
        words.push(format!("GlobalInstanceId {id}"));
    }
    words.join(", ")
}

/// The controls every instance page has: view switch, counter chooser
/// (filled by the script from the config).
fn controls(html: &mut String, config: &Value) {
    let _ = write!(
        html,
        "<script type=\"application/json\" id=\"dash-config\">{}</script>\n\
         <section class=\"card controls\" id=\"controls\">\n<div class=\"toolbar\">\n\
         <span class=\"seg-buttons\" role=\"group\" aria-label=\"View\">\
         <button type=\"button\" id=\"view-overlaid\" aria-pressed=\"true\">Overlaid</button>\
         <button type=\"button\" id=\"view-stacked\" aria-pressed=\"false\">Stacked</button></span>\n\
         <input type=\"search\" id=\"counter-filter\" placeholder=\"Find a counter\" aria-label=\"Find a counter\">\n\
         <button type=\"button\" id=\"counters-default\">Default counters</button>\n\
         <button type=\"button\" id=\"counters-clear\">Clear</button>\n\
         <span class=\"hint\" id=\"counter-count\"></span>\n</div>\n\
         <details id=\"chooser-box\"><summary>Counters to plot, by unit</summary><div id=\"chooser\"></div></details>\n\
         </section>\n",
        script_json(&config.to_string())
    );
}

/// One instance: heading, compare box, chart area, its data.
fn instance_section(
    html: &mut String,
    seq: usize,
    label: &InstanceLabel<'_>,
    data: &Value,
    pdf_link: Option<&str>,
    heading: &str,
) {
    let _ = write!(
        html,
        "<section class=\"card instance\" id=\"inst-{seq}\"{gid}>\n<{heading} class=\"kernel\">{kernel}</{heading}>\n\
         <p class=\"hint\">{words}{samples}{pdf}</p>\n\
         <div class=\"toolbar\"><label>Compare with GlobalInstanceId \
         <input type=\"text\" class=\"compare\" inputmode=\"numeric\" size=\"14\"></label>\
         <button type=\"button\" class=\"compare-go\">Compare</button>\
         <span class=\"compare-msg\" role=\"status\"></span></div>\n\
         <div class=\"charts\"></div>\n\
         <script type=\"application/json\" class=\"inst-data\">{json}</script>\n</section>\n",
        gid = label
            .global_id
            .map(|id| format!(" data-gid=\"{id}\""))
            .unwrap_or_default(),
        kernel = escape(label.kernel),
        words = escape(&instance_words(label)),
        samples = match data["samples"].as_u64() {
            Some(n) => format!(", {n} sample{}", if n == 1 { "" } else { "s" }),
            None => String::new(),
        },
        pdf = pdf_link
            .map(|l| format!(" &middot; <a href=\"{}\">PDF</a>", escape(l)))
            .unwrap_or_default(),
        json = script_json(&data.to_string()),
    );
}

/// What a server instance page says about itself.
pub struct ServerPage<'a> {
    pub title: &'a str,
    pub file: &'a str,
    pub label: InstanceLabel<'a>,
    pub pdf_link: &'a str,
    /// The file's routing keys on a result-dir server
    /// (docs/uniview.md#result-dir-links).
    pub links: &'a PageLinks,
    /// A note shown above the charts (e.g. doubtful reports).
    pub note: Option<String>,
    /// The instance of `?compare=N`, drawn beside this one from the start.
    pub compare: Option<Value>,
}

/// The server's page of one instance.
pub fn server_page(page: &ServerPage<'_>, config: &Value, data: &Value) -> String {
    let mut html = String::with_capacity(64 * 1024);
    // On a result-dir server "All kernels" is this file's dashboard and
    // `/` the result-dir index.
    let home = page.links.home();
    let mut links: Vec<HeaderLink<'_>> = page.links.index_link().into_iter().collect();
    links.extend([("All kernels", home.as_str()), ("PDF", page.pdf_link)]);
    page_start(
        &mut html,
        &PageHead {
            title: page.title,
            subtitle: page.file,
            links: &links,
        },
        EXTRA_STYLE,
    );
    controls(&mut html, config);
    if let Some(note) = &page.note {
        let _ = writeln!(html, "<p class=\"note\">{}</p>", escape(note));
    }
    instance_section(&mut html, 1, &page.label, data, Some(page.pdf_link), "h2");
    if let Some(compare) = &page.compare {
        let _ = writeln!(
            html,
            "<script type=\"application/json\" id=\"compare-data\">{}</script>",
            script_json(&compare.to_string())
        );
    }
    page_end(&mut html, PAGE_SCRIPT);
    html
}

/// Past this many instances `analyze -o x.html` says so on stderr: the
/// file is big, but the page draws only what is scrolled into view.
pub const MANY_INSTANCES: usize = 200;

/// `analyze -o x.html`: instances streamed into `out` as they are read;
/// the contents list (kernel -> instances) is written after them and
/// placed beside them by CSS, so nothing but the list is held in memory.
pub struct StaticPage<W: Write> {
    out: W,
    /// Kernels in order of first appearance, each with its instances'
    /// `(seq, words)`.
    contents: Vec<(String, Vec<(usize, String)>)>,
    count: usize,
}

impl<W: Write> StaticPage<W> {
    /// Starts the page: header, controls, the instances' container.
    pub fn new(mut out: W, title: &str, file: &str, config: &Value) -> io::Result<StaticPage<W>> {
        let mut html = String::new();
        page_start(
            &mut html,
            &PageHead {
                title,
                subtitle: file,
                links: &[],
            },
            EXTRA_STYLE,
        );
        controls(&mut html, config);
        html.push_str("<div class=\"layout\">\n<div id=\"instances\">\n");
        out.write_all(html.as_bytes())?;
        Ok(StaticPage {
            out,
            contents: Vec::new(),
            count: 0,
        })
    }

    /// Adds one instance (its data from `data::instance_json`).
    pub fn add(&mut self, label: &InstanceLabel<'_>, data: &Value) -> io::Result<()> {
        self.count += 1;
        let mut html = String::new();
        instance_section(&mut html, self.count, label, data, None, "h2");
        self.out.write_all(html.as_bytes())?;
        let words = instance_words(label);
        match self.contents.iter_mut().find(|(k, _)| k == label.kernel) {
            Some((_, list)) => list.push((self.count, words)),
            None => self
                .contents
                .push((label.kernel.to_string(), vec![(self.count, words)])),
        }
        Ok(())
    }

    pub fn instances(&self) -> usize {
        self.count
    }

    /// Writes the contents list and the script; hands back the output.
    pub fn finish(mut self) -> io::Result<W> {
        let mut html =
            String::from("</div>\n<nav id=\"contents\" class=\"card\">\n<h2>Contents</h2>\n");
        let _ = writeln!(
            html,
            "<input type=\"search\" id=\"contents-filter\" placeholder=\"Filter kernels\" aria-label=\"Filter kernels\">\n<ol class=\"kernels\">"
        );
        for (kernel, list) in &self.contents {
            let _ = write!(
                html,
                "<li><span class=\"kname\">{}</span> <span class=\"hint\">({})</span>\n<ol>",
                escape(kernel),
                list.len()
            );
            for (seq, words) in list {
                let _ = write!(
                    html,
                    "<li><a href=\"#inst-{seq}\">{}</a></li>",
                    escape(words)
                );
            }
            html.push_str("</ol></li>\n");
        }
        html.push_str("</ol>\n</nav>\n</div>\n");
        page_end(&mut html, PAGE_SCRIPT);
        self.out.write_all(html.as_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// CSS of the instance pages (beyond the shared look).
const EXTRA_STYLE: &str = "\
section.controls { position: sticky; top: 0; z-index: 5; }
#chooser { display: flex; flex-wrap: wrap; gap: 0.6em; max-height: 40vh; overflow: auto; }
#chooser fieldset { border: 1px solid var(--line); border-radius: 4px; margin: 0; padding: 0.2em 0.6em 0.4em 0.6em; }
#chooser legend { font-weight: 600; font-size: 0.92em; }
#chooser label { display: block; font-size: 0.9em; white-space: nowrap; }
#chooser label[hidden], #chooser fieldset[hidden] { display: none; }
.compare-msg { color: #cf222e; }
.layout { display: grid; grid-template-columns: minmax(14em, 22em) 1fr; gap: 1em; align-items: start; }
.layout #instances { grid-column: 2; grid-row: 1; min-width: 0; }
.layout #contents { grid-column: 1; grid-row: 1; position: sticky; top: 6.5em; max-height: calc(100vh - 7.5em); overflow: auto; font-size: 0.9em; }
#contents ol { margin: 0.2em 0; padding-left: 1.2em; }
#contents .kname { overflow-wrap: anywhere; font-weight: 600; }
#contents input { width: 100%; }
h2.kernel { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 1em; }
.stack > div { margin-bottom: 0.4em; }
@media (max-width: 900px) { .layout { display: block; } .layout #contents { position: static; max-height: none; } }
";

/// The instance pages' script: counter chooser, views, compare, lazy
/// drawing (perfdashboard's messages for compare ids).
pub const PAGE_SCRIPT: &str = r#"(function () {
  'use strict';
  var UD = window.UD, el = UD.el;
  var cfg = JSON.parse(document.getElementById('dash-config').textContent);
  var selected = {}, view = 'overlaid';
  cfg.selected.forEach(function (n) { selected[n] = true; });
  var slots = Array.prototype.map.call(document.querySelectorAll('section.instance'), function (s) {
    return { el: s, data: null, compare: null, drawn: false };
  });
  function dataOf(slot) {
    if (!slot.data) { slot.data = JSON.parse(slot.el.querySelector('script.inst-data').textContent); }
    return slot.data;
  }
  function short(name) { return name.length > 50 ? name.slice(0, 50) + '...' : name; }
  function names() { return cfg.order.filter(function (n) { return selected[n]; }); }
  function unitOf(n) { var m = /\[([^\]]*)\]\s*$/.exec(n); return m ? m[1].trim() : ''; }
  function yLabel(list) {
    var units = list.map(unitOf).filter(function (u, i, a) { return a.indexOf(u) === i; });
    return units.length === 1 ? units[0] : 'value (' + units.join(', ') + ')';
  }
  // The largest value of `list` over `parts`: instances compared side by
  // side share the Y scale.
  function top(parts, list) {
    var m = 0;
    parts.forEach(function (p) {
      list.forEach(function (n) {
        (p.counters[n] || []).forEach(function (v) { if (typeof v === 'number' && v > m) { m = v; } });
      });
    });
    return m;
  }
  function chart(box, d, list, title, height, yMax) {
    var series = list.filter(function (n) { return n in d.counters; }).map(function (n) {
      return { name: n, values: d.counters[n], color: UD.color(names().indexOf(n)) };
    });
    var div = el('div', { 'class': 'chart' });
    box.appendChild(div);
    if (!series.length) { div.appendChild(el('p', { 'class': 'hint' }, 'This instance has none of the selected counters.')); return; }
    var spec = { x: d.x.values, xLabel: d.x.label, yLabel: yLabel(list), series: series, title: title,
      height: height, doubtful: d.doubtful, doubtNote: d.doubtNote, legend: true, yMax: yMax };
    if (d.query) {
      spec.categories = d.x.values.map(function (v) { return v === null ? '' : String(v); });
      UD.barChart(div, spec);
    } else {
      UD.lineChart(div, spec);
    }
  }
  function draw(slot) {
    slot.drawn = true;
    var box = slot.el.querySelector('.charts'), d = dataOf(slot), list = names();
    box.textContent = '';
    if (!list.length) { box.appendChild(el('p', { 'class': 'hint' }, 'Counters cleared.')); return; }
    var parts = slot.compare ? [d, slot.compare] : [d];
    var row = el('div', { 'class': parts.length > 1 ? 'charts-row' : 'single' });
    box.appendChild(row);
    // Every column in place before drawing: a chart takes its column's width.
    var cols = parts.map(function () { var c = el('div'); row.appendChild(c); return c; });
    parts.forEach(function (p, k) {
      var col = cols[k];
      var who = 'Kernel ' + (p.gid === null ? '' : p.gid + ': ') + short(p.kernel);
      if (parts.length > 1) { col.appendChild(el('h3', { title: p.kernel }, who)); }
      if (p.doubtful.length) {
        col.appendChild(el('p', { 'class': 'hint' }, '\u25B2 ' + p.doubtful.length + ' doubtful report(s) marked on the X axis'));
      }
      if (view === 'overlaid') {
        // One chart per unit: a [bytes] counter would flatten a [%] one.
        var units = [];
        list.forEach(function (n) { if (units.indexOf(unitOf(n)) < 0) { units.push(unitOf(n)); } });
        units.forEach(function (u) {
          var same = list.filter(function (n) { return unitOf(n) === u; });
          chart(col, p, same, '[' + u + ']', units.length > 1 ? 260 : 320, parts.length > 1 ? top(parts, same) : 0);
        });
      } else {
        var stack = el('div', { 'class': 'stack' });
        col.appendChild(stack);
        list.forEach(function (n) { chart(stack, p, [n], n, 170, parts.length > 1 ? top(parts, [n]) : 0); });
      }
    });
  }
  function redraw() {
    slots.forEach(function (s) { if (s.drawn) { draw(s); } });
    var c = document.getElementById('counter-count');
    if (c) { c.textContent = names().length + ' of ' + cfg.order.length + ' counters selected'; }
  }
  // Counter chooser, grouped by unit.
  var chooser = document.getElementById('chooser'), boxes = [];
  cfg.units.forEach(function (g) {
    var fs = el('fieldset'), lg = el('legend', {}, '[' + g.unit + ']');
    fs.appendChild(lg);
    g.counters.forEach(function (n) {
      var lab = el('label'), cb = el('input', { type: 'checkbox', value: n });
      cb.checked = !!selected[n];
      cb.addEventListener('change', function () { selected[n] = cb.checked; redraw(); });
      lab.appendChild(cb);
      lab.appendChild(document.createTextNode(' ' + n));
      fs.appendChild(lab);
      boxes.push(cb);
    });
    chooser.appendChild(fs);
  });
  var filterBox = document.getElementById('counter-filter');
  filterBox.addEventListener('input', function () {
    document.getElementById('chooser-box').open = true;
    var w = filterBox.value.toLowerCase();
    Array.prototype.forEach.call(chooser.querySelectorAll('fieldset'), function (fs) {
      var any = false;
      Array.prototype.forEach.call(fs.querySelectorAll('label'), function (l) {
        l.hidden = l.textContent.toLowerCase().indexOf(w) < 0;
        any = any || !l.hidden;
      });
      fs.hidden = !any;
    });
  });
  function setAll(list) {
    selected = {};
    list.forEach(function (n) { selected[n] = true; });
    boxes.forEach(function (cb) { cb.checked = !!selected[cb.value]; });
    redraw();
  }
  document.getElementById('counters-default').addEventListener('click', function () { setAll(cfg.selected); });
  document.getElementById('counters-clear').addEventListener('click', function () { setAll([]); });
  ['overlaid', 'stacked'].forEach(function (v) {
    var b = document.getElementById('view-' + v);
    b.addEventListener('click', function () {
      view = v;
      ['overlaid', 'stacked'].forEach(function (w) { document.getElementById('view-' + w).setAttribute('aria-pressed', w === v ? 'true' : 'false'); });
      redraw();
    });
  });
  // Compare with another GlobalInstanceId (perfdashboard's messages). On
  // a page of one file of a result dir the other instance is asked of the
  // same file: `cfg.route` holds its routing keys, as the server knows
  // them, whatever URL reached the page (docs/uniview.md#result-dir-links).
  var route = cfg.route ? '&' + cfg.route : '';
  var byGid = {};
  slots.forEach(function (s) { var g = s.el.getAttribute('data-gid'); if (g !== null && !(g in byGid)) { byGid[g] = s; } });
  slots.forEach(function (slot) {
    var input = slot.el.querySelector('input.compare'), msg = slot.el.querySelector('.compare-msg');
    function done(d) { slot.compare = d; msg.textContent = ''; draw(slot); }
    function go() {
      var text = input.value.trim();
      msg.textContent = '';
      if (text === '') { done(null); return; }
      if (!/^[0-9]{1,20}$/.test(text)) { msg.textContent = 'Kernel ID must be a non-negative whole number (up to 20 digits).'; return; }
      var id = text.replace(/^0+(?=[0-9])/, '');
      var own = slot.el.getAttribute('data-gid');
      if (own !== null && id === own) { msg.textContent = 'Comparison kernel must differ from the primary kernel.'; return; }
      if (cfg.source === 'inline') {
        var other = byGid[id];
        if (!other) { msg.textContent = 'Kernel ID ' + id + ' not found.'; return; }
        done(dataOf(other));
        return;
      }
      fetch('/perfdashboard?gid=' + id + '&format=json' + route).then(function (r) {
        if (!r.ok) { throw new Error(String(r.status)); }
        return r.json();
      }).then(done, function () { msg.textContent = 'Kernel ID ' + id + ' not found.'; });
    }
    slot.el.querySelector('.compare-go').addEventListener('click', go);
    input.addEventListener('keydown', function (e) { if (e.key === 'Enter') { go(); } });
    var want = new URLSearchParams(location.search).get('compare');
    var pre = document.getElementById('compare-data');
    if (want && slots.length === 1) {
      input.value = want;
      if (pre) { slot.compare = JSON.parse(pre.textContent); } else { go(); }
    }
  });
  // Contents filter of the static page.
  var cf = document.getElementById('contents-filter');
  if (cf) {
    UD.filter(cf, Array.prototype.slice.call(document.querySelectorAll('#contents ol.kernels > li')), function (li) {
      return li.querySelector('.kname').textContent;
    });
  }
  // The first instances at once, the others when scrolled near (a page
  // of thousands stays responsive).
  slots.forEach(function (s, i) {
    if (i < 3) { draw(s); } else { UD.lazy(s.el, function () { if (!s.drawn) { draw(s); } }); }
  });
  redraw();
})();
"#;
