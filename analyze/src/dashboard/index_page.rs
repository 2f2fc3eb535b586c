//! The dashboard index (`GET /` of the chart server, docs/analyze.md#dashboard):
//! every kernel with its instance count and links to its instances' pages,
//! a search box, and per kernel the mean and max over its instances of
//! each counter (an instance's value being the mean of its samples),
//! columns chosen among all counters and sortable.
//!
//! [`KernelStats`] gathers those numbers during the server's one start-up
//! pass over the file (`server::index::FileIndex::build`); it holds one
//! accumulator per kernel and counter, whatever the number of rows.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{json, Map, Value};
use unitrace_core::csv_sections::{Field, Header, RawRow};
use unitrace_core::metric_csv::parse_number;

use super::data::{counters, default_selection, number, unit_groups, Counter};
use crate::charts::GPU_TIME;
use crate::page_links::PageLinks;
use crate::plan::ChartOptions;
use crate::render::dashboard::{page_end, page_start, script_json, HeaderLink, PageHead};

/// Instance links listed per kernel on the index (the rest are counted).
pub const LINKS_PER_KERNEL: usize = 500;

/// Mean of the instance means, their maximum, how many instances had a
/// value, and the sum of every row's value (a kernel's total GPU time on
/// the result-dir index, docs/uniview.md#result-dir-index).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stat {
    sum: f64,
    max: f64,
    instances: u32,
    total: f64,
}

impl Default for Stat {
    fn default() -> Stat {
        Stat {
            sum: 0.0,
            max: f64::NEG_INFINITY,
            instances: 0,
            total: 0.0,
        }
    }
}

/// Per-kernel counter statistics, fed row by row.
#[derive(Debug, Default)]
pub struct KernelStats {
    /// Every counter seen in a metric section, in first-appearance order.
    counters: Vec<Counter>,
    counter_ids: HashMap<String, usize>,
    /// Current section: `(column, counter id)`.
    columns: Vec<(usize, usize)>,
    /// Current instance: `(sum, samples)` per entry of `columns`.
    current: Vec<(f64, u32)>,
    /// Per kernel (positions of the index's kernel list), per counter id.
    kernels: Vec<Vec<Stat>>,
}

impl KernelStats {
    /// A metric section's header: which of its columns are counters.
    pub fn header(&mut self, header: &Header) {
        self.columns.clear();
        for c in counters(header) {
            let id = match self.counter_ids.get(&c.name) {
                Some(&id) => id,
                None => {
                    let id = self.counters.len();
                    self.counter_ids.insert(c.name.clone(), id);
                    self.counters.push(c.clone());
                    id
                }
            };
            self.columns.push((c.column, id));
        }
        self.current.clear();
        self.current.resize(self.columns.len(), (0.0, 0));
    }

    /// One kept row of the current instance (`fields` split from it).
    pub fn row(&mut self, row: &RawRow<'_>, fields: &[Field]) {
        for (slot, &(column, _)) in self.columns.iter().enumerate() {
            let Some(field) = fields.get(column) else {
                continue;
            };
            let text = row.field_bytes(field);
            let Some(v) = plain_decimal(text).or_else(|| parse_number(text)) else {
                continue;
            };
            if v.is_finite() {
                let acc = &mut self.current[slot];
                acc.0 += v;
                acc.1 += 1;
            }
        }
    }

    /// The current instance ended; it belongs to kernel `kernel`.
    pub fn end_instance(&mut self, kernel: usize) {
        if self.kernels.len() <= kernel {
            self.kernels.resize_with(kernel + 1, Vec::new);
        }
        let stats = &mut self.kernels[kernel];
        if stats.len() < self.counters.len() {
            stats.resize(self.counters.len(), Stat::default());
        }
        for (slot, acc) in self.current.iter_mut().enumerate() {
            if acc.1 > 0 {
                let mean = acc.0 / f64::from(acc.1);
                let stat = &mut stats[self.columns[slot].1];
                stat.sum += mean;
                stat.max = stat.max.max(mean);
                stat.instances += 1;
                stat.total += acc.0;
            }
            *acc = (0.0, 0);
        }
    }

    /// Counters sorted as the chooser shows them (unit, then name).
    fn sorted_counters(&self) -> Vec<Counter> {
        let mut all = self.counters.clone();
        all.sort_by_cached_key(|c| (c.unit.to_lowercase(), c.name.to_lowercase()));
        all
    }

    /// `(mean, max)` of counter `name` over kernel `kernel`'s instances.
    pub fn mean_max(&self, kernel: usize, name: &str) -> Option<(f64, f64)> {
        let id = *self.counter_ids.get(name)?;
        let stat = self.kernels.get(kernel)?.get(id)?;
        (stat.instances > 0).then(|| (stat.sum / f64::from(stat.instances), stat.max))
    }

    /// Sum of counter `name` over every kept row of kernel `kernel`
    /// (`None` when no row had a value). For `GpuTime[ns]` this is the
    /// kernel's GPU time: one row per instance in query files, and the
    /// sampling periods that fell inside the kernel in sampling files
    /// (docs/formats.md#metric-csv-sampling).
    pub fn total(&self, kernel: usize, name: &str) -> Option<f64> {
        let id = *self.counter_ids.get(name)?;
        let stat = self.kernels.get(kernel)?.get(id)?;
        (stat.instances > 0).then_some(stat.total)
    }
}

/// `[-]digits[.digits]` with at most 15 significant digits, exactly as
/// `str::parse` would give it (an integer below 2^53 divided by an exact
/// power of ten rounds once); `None` for anything else (exponents, `nan`,
/// longer numbers: the caller falls back to the full parser). The one
/// start-up pass parses every counter of every row for the index, and
/// unitrace writes plain decimals: this keeps the pass fast.
fn plain_decimal(text: &[u8]) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    let mut mantissa: u64 = 0;
    let mut count = 0usize;
    let mut fraction: Option<usize> = None;
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(b - b'0');
                count += 1;
                if let Some(f) = fraction.as_mut() {
                    *f += 1;
                }
                if count > 15 {
                    return None;
                }
            }
            b'.' if fraction.is_none() => fraction = Some(0),
            _ => return None,
        }
    }
    if count == 0 {
        return None;
    }
    let value = mantissa as f64 / POW10[fraction.unwrap_or(0)];
    Some(if negative { -value } else { value })
}

/// A kernel as the index lists it.
pub struct IndexKernel<'a> {
    pub name: &'a str,
    pub ids: &'a [Option<u64>],
}

/// The data of the index page: counters by unit, the default columns, and
/// per kernel its instances and statistics.
pub fn index_json(
    file: &str,
    kernels: &[IndexKernel<'_>],
    stats: &KernelStats,
    options: &ChartOptions,
) -> Value {
    let sorted = stats.sorted_counters();
    let list: Vec<Value> = kernels
        .iter()
        .enumerate()
        .map(|(at, k)| {
            let ids: Vec<u64> = k.ids.iter().flatten().copied().collect();
            let mut values = Map::new();
            for c in &sorted {
                if let Some((mean, max)) = stats.mean_max(at, &c.name) {
                    values.insert(c.name.clone(), json!([number(mean), number(max)]));
                }
            }
            json!({
                "name": k.name,
                "instances": k.ids.len(),
                "ids": ids.iter().take(LINKS_PER_KERNEL).collect::<Vec<_>>(),
                "unlinked": ids.len().saturating_sub(LINKS_PER_KERNEL),
                "stats": values,
            })
        })
        .collect();
    json!({
        "file": file,
        "units": unit_groups(&sorted),
        "order": sorted.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        "selected": index_columns(options, &sorted),
        "kernels": list,
    })
}

/// The index's first columns: the GPU time, then the instance pages'
/// default counters.
fn index_columns(options: &ChartOptions, counters: &[Counter]) -> Vec<String> {
    let mut columns = default_selection(options, counters);
    if counters.iter().any(|c| c.name == GPU_TIME) && !columns.iter().any(|c| c == GPU_TIME) {
        columns.insert(0, GPU_TIME.to_string());
    }
    columns
}

/// The index page. `links`: the file's routing keys on a result-dir
/// server, for the header's link back to the index; the instance links
/// take them from `data.route` (docs/uniview.md#result-dir-links).
pub fn index_html(title: &str, data: &Value, links: &PageLinks) -> String {
    let kernels = data["kernels"].as_array().map_or(0, Vec::len);
    let instances: u64 = data["kernels"].as_array().map_or(0, |k| {
        k.iter().filter_map(|k| k["instances"].as_u64()).sum()
    });
    let file = data["file"].as_str().unwrap_or_default();
    let mut html = String::with_capacity(64 * 1024);
    let header: Vec<HeaderLink<'_>> = links.index_link().into_iter().collect();
    let subtitle = format!(
        "{file} \u{b7} {kernels} kernel{} \u{b7} {instances} instance{}",
        if kernels == 1 { "" } else { "s" },
        if instances == 1 { "" } else { "s" }
    );
    page_start(
        &mut html,
        &PageHead {
            title,
            subtitle: &subtitle,
            links: &header,
        },
        INDEX_STYLE,
    );
    let _ = write!(
        html,
        "<script type=\"application/json\" id=\"index-data\">{}</script>\n\
         <section class=\"card\">\n<div class=\"toolbar\">\n\
         <input type=\"search\" id=\"kernel-filter\" placeholder=\"Filter kernels (words, any order)\" aria-label=\"Filter kernels\" size=\"40\">\n\
         <span class=\"hint\" id=\"shown-count\"></span>\n</div>\n\
         <details id=\"columns-box\"><summary>Counters shown as columns, by unit</summary><div id=\"columns\"></div></details>\n\
         <p class=\"hint\">Per kernel: the mean and the max over its instances of each instance's mean. \
         Click a column to sort, a kernel to list its instances.</p>\n\
         <div class=\"scroll\"><table id=\"kernels\" class=\"sortable\"><thead></thead><tbody></tbody></table></div>\n\
         <noscript><p class=\"note\">This page draws its table with a script.</p></noscript>\n</section>\n",
        script_json(&data.to_string())
    );
    page_end(&mut html, INDEX_SCRIPT);
    html
}

const INDEX_STYLE: &str = "\
#columns { display: flex; flex-wrap: wrap; gap: 0.6em; max-height: 40vh; overflow: auto; }
#columns fieldset { border: 1px solid var(--line); border-radius: 4px; margin: 0; padding: 0.2em 0.6em 0.4em 0.6em; }
#columns legend { font-weight: 600; font-size: 0.92em; }
#columns label { display: block; font-size: 0.9em; white-space: nowrap; }
#kernels td.name { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 0.92em; min-width: 30em; }
#kernels td.name details summary { color: var(--ink); }
#kernels td.name .ids { display: flex; flex-wrap: wrap; gap: 0.2em 0.7em; margin: 0.3em 0; font-family: 'DejaVu Sans', Verdana, sans-serif; }
#kernels th.c { min-width: 6em; max-width: 9em; white-space: normal; overflow-wrap: break-word; font-weight: 600; }
#kernels th .hint { font-weight: normal; }
main { max-width: 1700px; }
";

const INDEX_SCRIPT: &str = r#"(function () {
  'use strict';
  var UD = window.UD, el = UD.el;
  var data = JSON.parse(document.getElementById('index-data').textContent);
  var shown = {};
  data.selected.forEach(function (n) { shown[n] = true; });
  var table = document.getElementById('kernels');
  var filter = document.getElementById('kernel-filter');
  // Served for one file of a result dir, the instance links keep its
  // routing keys as the server wrote them (docs/uniview.md#result-dir-links).
  var params = new URLSearchParams(location.search);
  var route = data.route ? '&' + data.route : '';
  function link(k, id) {
    return '/perfdashboard?gid=' + id + '&kernel=' + encodeURIComponent(k.name) + route;
  }
  function build() {
    // The first columns in their order (GPU time first), the others as chosen.
    var cols = data.selected.filter(function (n) { return shown[n]; }).concat(
      data.order.filter(function (n) { return shown[n] && data.selected.indexOf(n) < 0; }));
    var head = el('tr');
    head.appendChild(el('th', {}, 'Kernel'));
    head.appendChild(el('th', { 'class': 'num' }, 'Instances'));
    var top = {};
    cols.forEach(function (n) {
      ['mean', 'max'].forEach(function (what) {
        // Long counter names break after `_` and before `[`.
        var th = el('th', { 'class': 'num c', title: n + ': ' + what + ' over instances' });
        n.split(/(?=\[)|(?<=_)/).forEach(function (part, i) {
          if (i) { th.appendChild(el('wbr')); }
          th.appendChild(document.createTextNode(part));
        });
        th.appendChild(el('br'));
        th.appendChild(el('span', { 'class': 'hint' }, what));
        head.appendChild(th);
      });
      top[n] = 0;
      data.kernels.forEach(function (k) { var s = k.stats[n]; if (s && s[1] > top[n]) { top[n] = s[1]; } });
    });
    table.tHead.textContent = '';
    table.tHead.appendChild(head);
    var body = el('tbody');
    data.kernels.forEach(function (k) {
      var tr = el('tr', { 'data-kernel': k.name });
      var name = el('td', { 'class': 'name' });
      var det = el('details'), sum = el('summary', { title: k.name }, k.name);
      det.appendChild(sum);
      var ids = el('div', { 'class': 'ids' });
      if (!k.ids.length) { ids.appendChild(el('span', { 'class': 'hint' }, 'no GlobalInstanceId: no instance page')); }
      k.ids.forEach(function (id, i) {
        ids.appendChild(el('a', { href: link(k, id), title: 'instance ' + (i + 1) + ', GlobalInstanceId ' + id }, '#' + (i + 1) + ' (' + id + ')'));
      });
      if (k.unlinked) { ids.appendChild(el('span', { 'class': 'hint' }, '+ ' + k.unlinked + ' more')); }
      det.appendChild(ids);
      name.appendChild(det);
      tr.appendChild(name);
      tr.appendChild(el('td', { 'class': 'num', 'data-v': k.instances }, UD.fmt(k.instances)));
      cols.forEach(function (n) {
        var s = k.stats[n];
        [0, 1].forEach(function (j) {
          var v = s ? s[j] : null, td = el('td', { 'class': 'num', 'data-v': v === null ? '' : v }, v === null ? '' : UD.fmt(v));
          if (v !== null && top[n] > 0) {
            var p = Math.max(0, Math.min(100, 100 * v / top[n])).toFixed(1);
            td.style.background = 'linear-gradient(90deg, ' + (j ? '#f4a261' : '#4a90d9') + ' ' + p + '%, transparent ' + p + '%) no-repeat left bottom / 100% 3px';
          }
          tr.appendChild(td);
        });
      });
      body.appendChild(tr);
    });
    table.replaceChild(body, table.tBodies[0]);
    UD.sortable(table);
    applyFilter();
  }
  function applyFilter() {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean), rows = table.tBodies[0].rows, n = 0;
    Array.prototype.forEach.call(rows, function (r) {
      var t = r.getAttribute('data-kernel').toLowerCase();
      r.hidden = !words.every(function (w) { return t.indexOf(w) >= 0; });
      if (!r.hidden) { n++; }
    });
    document.getElementById('shown-count').textContent = n + ' of ' + rows.length + ' kernels shown';
  }
  filter.addEventListener('input', applyFilter);
  var box = document.getElementById('columns');
  data.units.forEach(function (g) {
    var fs = el('fieldset');
    fs.appendChild(el('legend', {}, '[' + g.unit + ']'));
    g.counters.forEach(function (n) {
      var lab = el('label'), cb = el('input', { type: 'checkbox', value: n });
      cb.checked = !!shown[n];
      cb.addEventListener('change', function () { shown[n] = cb.checked; build(); });
      lab.appendChild(cb);
      lab.appendChild(document.createTextNode(' ' + n));
      fs.appendChild(lab);
    });
    box.appendChild(fs);
  });
  var q = params.get('q');
  if (q) { filter.value = q; }
  build();
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_decimals_parse_exactly_like_std() {
        for text in [
            "0",
            "12",
            "-3",
            "1.5",
            "27.091116",
            "143559269028",
            "0.000001",
            "99999.9999999999",
            "123456789012345",
            "-0.5",
            "5.",
        ] {
            assert_eq!(
                plain_decimal(text.as_bytes()),
                text.parse::<f64>().ok(),
                "{text}"
            );
        }
        for other in [
            "",
            "-",
            ".",
            "1e5",
            "nan",
            "1.2.3",
            "1234567890123456",
            " 1",
        ] {
            assert_eq!(plain_decimal(other.as_bytes()), None, "{other}");
        }
    }
}
