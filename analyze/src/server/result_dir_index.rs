//! The index of a `unitrace --result-dir` tree served by uniview
//! (`GET /` of `uniview --result-dir`, docs/uniview.md#result-dir-index):
//! one page in the dashboard look of `render::dashboard` (single file,
//! offline, nothing fetched) with
//!
//! * the GPU time of each rank (all its devices), the slowest rank against
//!   the median rank;
//! * per metric file its rank, device, kernels, instances, GPU time and
//!   top kernels, linked to the file's own dashboard
//!   (`/perfdashboard?rank=R&device=D`) and to instance pages
//!   (`/perfdashboard?gid=N&rank=R&device=D`), the routed URLs of
//!   docs/uniview.md#result-dir; a file that could not be read is listed
//!   with its one-line error;
//! * per kernel its GPU time on each rank: the rank with the least, the
//!   median over ranks, the rank with the most and max/median, so that a
//!   straggler stands out (the spread `tracestat` reports per kernel,
//!   docs/tracestat.md#kernels).
//!
//! GPU time is the sum of the `GpuTime[ns]` values of a kernel's rows
//! (`index_page::KernelStats::total`): its instances' times in query files,
//! the sampling periods spent in it in sampling files.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::request::strip_shape;
use crate::page_links::query_encode;
use crate::render::dashboard::{page_end, page_start, PageHead};
use crate::render::escape::escape;
use crate::render::number::{coord, shortest, significant};

/// Kernels named per file in the files table.
pub const TOP_KERNELS: usize = 3;

/// A kernel (or rank) whose slowest rank takes at least this multiple of
/// the median rank's GPU time is flagged.
pub const STRAGGLER_RATIO: f64 = 1.10;

/// Ranks up to which each kernel row gets its bar per rank (beyond, the
/// page would grow by ranks x kernels bars; min/median/max stay).
pub const STRIP_MAX_RANKS: usize = 64;

/// Characters of a kernel name shown before it is cut (the full name is
/// in the tooltip).
const SHOWN_NAME_CHARS: usize = 90;

/// The same in the narrower top-kernels column of the files table.
const TOP_NAME_CHARS: usize = 48;

/// One metric file of the tree as the index lists it.
#[derive(Debug, Clone)]
pub struct ListedFile {
    pub rank: Option<u32>,
    pub device: Option<u32>,
    /// `<app>.<pid>` of the process folder.
    pub process: Option<String>,
    /// The path shown (relative to the result dir when under it).
    pub path: String,
    /// The query that routes a request to this file: `rank=R&device=D`.
    pub route: String,
    pub content: FileContent,
}

/// What a listed file holds.
#[derive(Debug, Clone)]
pub enum FileContent {
    /// Metric sections: the kernels in order of first appearance.
    Metric { kernels: Vec<KernelTotal> },
    /// Stall sections only: how many kernels were sampled.
    Stall { kernels: usize },
    /// Neither metric nor stall rows.
    Nothing,
    /// The file could not be indexed: its one-line error.
    Unreadable(String),
}

/// A kernel of one metric file.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelTotal {
    pub name: String,
    pub instances: usize,
    /// Sum of its rows' `GpuTime[ns]`; `None` without such values.
    pub gpu_ns: Option<f64>,
    /// Its first instance with a `GlobalInstanceId` (the instance link).
    pub first_id: Option<u64>,
}

impl ListedFile {
    /// Who the file belongs to on the per-rank views: its rank, else its
    /// process folder, else the file itself.
    fn owner(&self) -> String {
        match (self.rank, &self.process) {
            (Some(rank), _) => format!("rank {rank}"),
            (None, Some(process)) => process.clone(),
            (None, None) => self.path.clone(),
        }
    }

    fn gpu_ns(&self) -> Option<f64> {
        match &self.content {
            FileContent::Metric { kernels } => kernels
                .iter()
                .filter_map(|k| k.gpu_ns)
                .fold(None, |sum, v| Some(sum.unwrap_or(0.0) + v)),
            _ => None,
        }
    }
}

/// A rank (or process) with readable metric files.
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    pub label: String,
    /// Sum over its files; `None` when none has GPU times.
    pub gpu_ns: Option<f64>,
}

/// One kernel's time on one owner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OwnerTime {
    pub gpu_ns: Option<f64>,
    /// The owner's file with the largest share of it (the link target).
    pub file: usize,
    file_ns: f64,
}

/// A kernel across the owners.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelAcross {
    pub name: String,
    pub instances: usize,
    /// Indexed like the owners; `None` where the kernel did not run.
    pub per_owner: Vec<Option<OwnerTime>>,
}

/// Least, median and most of a set of per-owner times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// `(owner, ns)` of the least time (the first owner on ties).
    pub min: (usize, f64),
    pub median: f64,
    /// `(owner, ns)` of the most time (the first owner on ties).
    pub max: (usize, f64),
}

impl Spread {
    /// Over the `(owner, ns)` values; `None` when there are none.
    pub fn of(values: &[(usize, f64)]) -> Option<Spread> {
        let first = *values.first()?;
        let (mut min, mut max) = (first, first);
        for &v in &values[1..] {
            if v.1 < min.1 {
                min = v;
            }
            if v.1 > max.1 {
                max = v;
            }
        }
        let mut sorted: Vec<f64> = values.iter().map(|v| v.1).collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        // The median of the ranks as mergetrace --stats and tracestat take
        // it: the mean of the two middle values for an even count.
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Spread { min, median, max })
    }

    /// max / median (`None` for a zero median).
    pub fn ratio(&self) -> Option<f64> {
        (self.median > 0.0).then(|| self.max.1 / self.median)
    }

    /// Several owners, and the slowest at least [`STRAGGLER_RATIO`] times
    /// the median.
    pub fn straggles(&self, owners: usize) -> bool {
        owners > 1 && self.ratio().is_some_and(|r| r >= STRAGGLER_RATIO)
    }
}

/// The per-owner views of the listed files.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub owners: Vec<Owner>,
    /// Per file, its owner (`None` for files without metric rows).
    pub owner_of_file: Vec<Option<usize>>,
    /// By total GPU time, most first (then by name); kernels without
    /// times last.
    pub kernels: Vec<KernelAcross>,
}

impl KernelAcross {
    /// Sum over the owners; `None` without any time.
    pub fn gpu_ns(&self) -> Option<f64> {
        self.times()
            .fold(None, |sum, (_, v)| Some(sum.unwrap_or(0.0) + v))
    }

    /// `(owner, ns)` of the owners that have a time for it.
    pub fn times(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.per_owner
            .iter()
            .enumerate()
            .filter_map(|(o, t)| Some((o, (*t)?.gpu_ns?)))
    }

    pub fn spread(&self) -> Option<Spread> {
        Spread::of(&self.times().collect::<Vec<_>>())
    }

    /// Owners it ran on.
    pub fn ranks(&self) -> usize {
        self.per_owner.iter().flatten().count()
    }
}

/// Groups the files' kernels by owner (files are summed per owner: the
/// devices of a rank).
pub fn summarize(files: &[ListedFile]) -> Summary {
    let mut owners: Vec<Owner> = Vec::new();
    let mut owner_at: HashMap<String, usize> = HashMap::new();
    let mut owner_of_file = Vec::with_capacity(files.len());
    let mut kernels: Vec<KernelAcross> = Vec::new();
    let mut kernel_at: HashMap<&str, usize> = HashMap::new();
    for (f, file) in files.iter().enumerate() {
        let FileContent::Metric { kernels: listed } = &file.content else {
            owner_of_file.push(None);
            continue;
        };
        let label = file.owner();
        let o = *owner_at.entry(label.clone()).or_insert_with(|| {
            owners.push(Owner {
                label,
                gpu_ns: None,
            });
            owners.len() - 1
        });
        owner_of_file.push(Some(o));
        if let Some(ns) = file.gpu_ns() {
            owners[o].gpu_ns = Some(owners[o].gpu_ns.unwrap_or(0.0) + ns);
        }
        for k in listed {
            let at = *kernel_at.entry(k.name.as_str()).or_insert_with(|| {
                kernels.push(KernelAcross {
                    name: k.name.clone(),
                    instances: 0,
                    per_owner: Vec::new(),
                });
                kernels.len() - 1
            });
            let row = &mut kernels[at];
            row.instances += k.instances;
            if row.per_owner.len() <= o {
                row.per_owner.resize(o + 1, None);
            }
            let ns = k.gpu_ns.unwrap_or(0.0);
            let slot = &mut row.per_owner[o];
            if let Some(time) = slot.as_mut() {
                if let Some(v) = k.gpu_ns {
                    time.gpu_ns = Some(time.gpu_ns.unwrap_or(0.0) + v);
                }
                if ns > time.file_ns {
                    time.file = f;
                    time.file_ns = ns;
                }
            } else {
                *slot = Some(OwnerTime {
                    gpu_ns: k.gpu_ns,
                    file: f,
                    file_ns: ns,
                });
            }
        }
    }
    for k in &mut kernels {
        k.per_owner.resize(owners.len(), None);
    }
    kernels.sort_by(|a, b| match (a.gpu_ns(), b.gpu_ns()) {
        (Some(x), Some(y)) => y.total_cmp(&x).then_with(|| a.name.cmp(&b.name)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.name.cmp(&b.name),
    });
    Summary {
        owners,
        owner_of_file,
        kernels,
    }
}

/// What the page says about the tree as a whole.
pub struct PageTitle<'a> {
    /// `-t` of the option file (the dashboards' title).
    pub title: &'a str,
    /// The result directory.
    pub root: &'a str,
}

/// The index page.
pub fn result_dir_html(head: &PageTitle<'_>, files: &[ListedFile]) -> String {
    let summary = summarize(files);
    let unreadable = files
        .iter()
        .filter(|f| matches!(f.content, FileContent::Unreadable(_)))
        .count();
    let instances: usize = summary.kernels.iter().map(|k| k.instances).sum();
    let total_ns = summary
        .owners
        .iter()
        .filter_map(|o| o.gpu_ns)
        .fold(None, |sum, v| Some(sum.unwrap_or(0.0) + v));
    let mut subtitle = format!(
        "{} \u{b7} {} metric file{}",
        head.root,
        files.len(),
        plural(files.len())
    );
    if unreadable > 0 {
        let _ = write!(subtitle, " ({unreadable} unreadable)");
    }
    let _ = write!(
        subtitle,
        " \u{b7} {} rank{} \u{b7} {} kernel{} \u{b7} {} instance{}",
        summary.owners.len(),
        plural(summary.owners.len()),
        summary.kernels.len(),
        plural(summary.kernels.len()),
        instances,
        plural(instances)
    );
    if let Some(ns) = total_ns {
        let _ = write!(subtitle, " \u{b7} GPU time {} ms", ms(ns));
    }
    let mut html = String::with_capacity(64 * 1024);
    page_start(
        &mut html,
        &PageHead {
            title: head.title,
            subtitle: &subtitle,
            links: &[],
        },
        STYLE,
    );
    // The straggler views first: the files table grows with the ranks
    // and devices.
    rank_card(&mut html, &summary);
    kernels_card(&mut html, files, &summary);
    files_card(&mut html, files);
    page_end(&mut html, SCRIPT);
    html
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Nanoseconds as milliseconds, four significant digits.
fn ms(ns: f64) -> String {
    significant(ns / 1e6)
}

/// `+12.3%` of `value` against `reference`.
fn versus(value: f64, reference: f64) -> String {
    if reference > 0.0 {
        format!("{:+.1}%", 100.0 * (value - reference) / reference)
    } else {
        String::new()
    }
}

/// A kernel name as shown: without its launch shape, cut after
/// [`SHOWN_NAME_CHARS`] characters.
fn shown_name(name: &str) -> String {
    cut_name(name, SHOWN_NAME_CHARS)
}

/// `name` without its launch shape, cut after `chars` characters.
fn cut_name(name: &str, chars: usize) -> String {
    let short = strip_shape(name);
    match short.char_indices().nth(chars) {
        Some((cut, _)) => format!("{}\u{2026}", &short[..cut]),
        None => short.to_string(),
    }
}

/// GPU time per owner, the slowest against the median.
fn rank_card(html: &mut String, summary: &Summary) {
    let times: Vec<(usize, f64)> = summary
        .owners
        .iter()
        .enumerate()
        .filter_map(|(o, owner)| Some((o, owner.gpu_ns?)))
        .collect();
    let Some(spread) = Spread::of(&times) else {
        return;
    };
    html.push_str("<section class=\"card\" id=\"rank-times\">\n<h2>GPU time per rank</h2>\n");
    let slowest = &summary.owners[spread.max.0].label;
    let fastest = &summary.owners[spread.min.0].label;
    let class = if spread.straggles(times.len()) {
        "note"
    } else {
        "hint"
    };
    // One rank has no slowest.
    if times.len() > 1 {
        let _ = writeln!(
        html,
        "<p class=\"{class}\" id=\"slowest-rank\">Slowest: <b>{}</b>, {} ms, {} against the median rank ({} ms); fastest: {}, {} ms.</p>",
        escape(slowest),
        ms(spread.max.1),
        versus(spread.max.1, spread.median),
        ms(spread.median),
        escape(fastest),
        ms(spread.min.1),
    );
    }
    html.push_str(
        "<p class=\"hint\">Sum of <code>GpuTime[ns]</code> over the kernels of the rank's metric files (all its devices).</p>\n\
         <div class=\"scroll tall\"><table class=\"sortable\" id=\"rank-table\"><thead><tr><th>Rank</th>\
         <th class=\"num\">GPU time [ms]</th><th class=\"num\">vs median</th><th class=\"barcell\"></th></tr></thead>\n<tbody>\n",
    );
    for &(o, ns) in &times {
        let slow = o == spread.max.0 && spread.straggles(times.len());
        let width = if spread.max.1 > 0.0 {
            100.0 * ns / spread.max.1
        } else {
            0.0
        };
        let _ = writeln!(
            html,
            "<tr{row}><td>{label}</td><td class=\"num\" data-v=\"{v}\">{ms}</td><td class=\"num\" data-v=\"{v}\">{vs}</td>\
             <td class=\"barcell\"><div class=\"bar{bar}\" style=\"width:{w}%\"></div></td></tr>",
            row = if slow { " class=\"slow\"" } else { "" },
            label = escape(&summary.owners[o].label),
            v = shortest(ns),
            ms = ms(ns),
            vs = versus(ns, spread.median),
            bar = if slow { " slow" } else { "" },
            w = coord(width as f32),
        );
    }
    html.push_str("</tbody></table></div>\n</section>\n");
}

/// One row per metric file.
fn files_card(html: &mut String, files: &[ListedFile]) {
    html.push_str(
        "<section class=\"card\" id=\"files\">\n<h2>Metric files</h2>\n\
         <p class=\"hint\">A file opens its own dashboard (every kernel, counters, instances); a kernel its first instance.</p>\n\
         <div class=\"scroll\"><table class=\"sortable\" id=\"file-table\"><thead><tr><th>Rank</th><th class=\"num\">Device</th>\
         <th>File</th><th class=\"num\">Kernels</th><th class=\"num\">Instances</th><th class=\"num\">GPU time [ms]</th>\
         <th>Top kernels by GPU time</th></tr></thead>\n<tbody>\n",
    );
    for file in files {
        let rank = match (file.rank, &file.process) {
            (Some(rank), _) => rank.to_string(),
            (None, Some(process)) => process.clone(),
            (None, None) => String::new(),
        };
        let device = file.device.map(|d| d.to_string()).unwrap_or_default();
        let dashboard = format!("/perfdashboard?{}", file.route);
        let _ = write!(
            html,
            "<tr data-file=\"{path}\"><td data-v=\"{rank_v}\">{rank}</td><td class=\"num\">{device}</td>",
            path = escape(&file.path),
            rank_v = file.rank.map(|r| r.to_string()).unwrap_or_default(),
            rank = escape(&rank),
        );
        match &file.content {
            FileContent::Unreadable(error) => {
                let _ = writeln!(
                    html,
                    "<td class=\"path\"><code>{}</code></td><td colspan=\"4\"><p class=\"error\">{}</p></td></tr>",
                    escape(&file.path),
                    escape(error)
                );
            }
            FileContent::Nothing => {
                let _ = writeln!(
                    html,
                    "<td class=\"path\"><code>{}</code></td><td class=\"num\" data-v=\"0\">0</td><td class=\"num\" data-v=\"0\">0</td>\
                     <td class=\"num\" data-v=\"\"></td><td class=\"hint\">no metric or stall rows</td></tr>",
                    escape(&file.path)
                );
            }
            FileContent::Stall { kernels } => {
                let _ = writeln!(
                    html,
                    "<td class=\"path\"><a href=\"{}\"><code>{}</code></a></td><td class=\"num\" data-v=\"{kernels}\">{kernels}</td>\
                     <td class=\"num\" data-v=\"\"></td><td class=\"num\" data-v=\"\"></td>\
                     <td class=\"hint\">stall samples: the file's link opens its stall dashboard</td></tr>",
                    escape(&dashboard),
                    escape(&file.path)
                );
            }
            FileContent::Metric { kernels } => {
                let instances: usize = kernels.iter().map(|k| k.instances).sum();
                let gpu = file.gpu_ns();
                let _ = write!(
                    html,
                    "<td class=\"path\"><a href=\"{}\" title=\"this file's dashboard\"><code>{}</code></a></td>\
                     <td class=\"num\" data-v=\"{n}\">{n}</td><td class=\"num\" data-v=\"{instances}\">{instances}</td>\
                     <td class=\"num\" data-v=\"{gv}\">{g}</td><td>",
                    escape(&dashboard),
                    escape(&file.path),
                    n = kernels.len(),
                    gv = gpu.map(shortest).unwrap_or_default(),
                    g = gpu.map(ms).unwrap_or_default(),
                );
                top_kernels(html, file, kernels, gpu);
                html.push_str("</td></tr>\n");
            }
        }
    }
    html.push_str("</tbody></table></div>\n</section>\n");
}

/// The file's [`TOP_KERNELS`] kernels with the most GPU time (without
/// times: the first ones), each linked to its first instance.
fn top_kernels(html: &mut String, file: &ListedFile, kernels: &[KernelTotal], gpu: Option<f64>) {
    let mut order: Vec<&KernelTotal> = kernels.iter().collect();
    order.sort_by(|a, b| {
        b.gpu_ns
            .unwrap_or(0.0)
            .total_cmp(&a.gpu_ns.unwrap_or(0.0))
            .then_with(|| a.name.cmp(&b.name))
    });
    html.push_str("<ol class=\"top\">");
    for k in order.iter().take(TOP_KERNELS) {
        let name = escape(&cut_name(&k.name, TOP_NAME_CHARS)).into_owned();
        match k.first_id {
            Some(id) => {
                let _ = write!(
                    html,
                    "<li><a href=\"{}\" title=\"{}\"><code>{name}</code></a>",
                    escape(&format!("/perfdashboard?gid={id}&{}", file.route)),
                    escape(&k.name),
                );
            }
            None => {
                let _ = write!(
                    html,
                    "<li><code title=\"{}\">{name}</code>",
                    escape(&k.name)
                );
            }
        }
        if let Some(ns) = k.gpu_ns {
            let _ = write!(html, " <span class=\"num\">{} ms</span>", ms(ns));
            if let Some(total) = gpu.filter(|&t| t > 0.0) {
                let _ = write!(
                    html,
                    " <span class=\"hint\">({:.0}%)</span>",
                    100.0 * ns / total
                );
            }
        }
        html.push_str("</li>");
    }
    html.push_str("</ol>");
    if kernels.len() > TOP_KERNELS {
        let _ = write!(
            html,
            "<span class=\"hint\">and {} more</span>",
            kernels.len() - TOP_KERNELS
        );
    }
}

/// One row per kernel: its time on each rank.
fn kernels_card(html: &mut String, files: &[ListedFile], summary: &Summary) {
    if summary.kernels.is_empty() {
        return;
    }
    let owners = summary.owners.len();
    let _ = write!(
        html,
        "<section class=\"card\" id=\"kernels-across\">\n<h2>Kernels across ranks</h2>\n\
         <div class=\"toolbar\"><input type=\"search\" id=\"kernel-filter\" placeholder=\"Filter kernels (words, any order)\" \
         aria-label=\"Filter kernels\" size=\"40\"><span class=\"hint\" id=\"shown-count\"></span></div>\n\
         <p class=\"hint\">Per kernel: its GPU time on each rank (all the rank's devices); the rank with the least, \
         the median over the ranks that ran it, the rank with the most. max/median of {ratio} or more is flagged. \
         A rank's time opens that rank's dashboard filtered to the kernel.</p>\n\
         <div class=\"scroll\"><table class=\"sortable\" id=\"across\"><thead><tr><th>Kernel</th>\
         <th class=\"num\">Ranks</th><th class=\"num\">Instances</th><th class=\"num\">GPU time [ms]</th>\
         <th class=\"num\">min [ms]</th><th class=\"num\">median [ms]</th><th class=\"num\">max [ms]</th>\
         <th class=\"num\">max / median</th><th>per rank</th></tr></thead>\n<tbody>\n",
        ratio = STRAGGLER_RATIO,
    );
    for k in &summary.kernels {
        let spread = k.spread();
        let slow = spread.is_some_and(|s| s.straggles(k.times().count()));
        let missing: Vec<&str> = k
            .per_owner
            .iter()
            .enumerate()
            .filter(|(_, t)| t.is_none())
            .map(|(o, _)| summary.owners[o].label.as_str())
            .collect();
        let ranks_title = if missing.is_empty() {
            String::new()
        } else {
            format!(" title=\"not on {}\"", escape(&missing.join(", ")))
        };
        let _ = write!(
            html,
            "<tr data-kernel=\"{name}\"{row}><td class=\"kname\" title=\"{name}\"><code>{shown}</code>{shape}</td>\
             <td class=\"num\" data-v=\"{ranks}\"{ranks_title}>{ranks}/{owners}</td><td class=\"num\" data-v=\"{inst}\">{inst}</td>",
            name = escape(&k.name),
            row = if slow { " class=\"slow\"" } else { "" },
            shown = escape(&shown_name(&k.name)),
            shape = match k.name[strip_shape(&k.name).len()..].trim() {
                "" => String::new(),
                shape => format!(" <span class=\"shape\">{}</span>", escape(shape)),
            },
            ranks = k.ranks(),
            inst = k.instances,
        );
        let total = k.gpu_ns();
        let _ = write!(
            html,
            "<td class=\"num\" data-v=\"{}\">{}</td>",
            total.map(shortest).unwrap_or_default(),
            total.map(ms).unwrap_or_default()
        );
        match spread {
            Some(s) => {
                let link = |o: usize, ns: f64| -> String {
                    let file = k.per_owner[o].map(|t| t.file);
                    let label = &summary.owners[o].label;
                    match file.and_then(|f| files.get(f)) {
                        Some(file) => format!(
                            "<a href=\"{}\" title=\"{} on {}\">{}</a> <span class=\"hint\">{}</span>",
                            escape(&format!(
                                "/perfdashboard?{}&q={}",
                                file.route,
                                query_encode(&k.name)
                            )),
                            escape(&k.name),
                            escape(label),
                            ms(ns),
                            escape(label)
                        ),
                        None => ms(ns),
                    }
                };
                let _ = write!(
                    html,
                    "<td class=\"num\" data-v=\"{}\">{}</td><td class=\"num\" data-v=\"{}\">{}</td>\
                     <td class=\"num\" data-v=\"{}\">{}</td><td class=\"num ratio\" data-v=\"{}\">{}</td>",
                    shortest(s.min.1),
                    link(s.min.0, s.min.1),
                    shortest(s.median),
                    ms(s.median),
                    shortest(s.max.1),
                    link(s.max.0, s.max.1),
                    s.ratio().map(shortest).unwrap_or_default(),
                    s.ratio().map(|r| format!("{r:.2}")).unwrap_or_default(),
                );
            }
            None => html.push_str(
                "<td class=\"num\" data-v=\"\"></td><td class=\"num\" data-v=\"\"></td>\
                 <td class=\"num\" data-v=\"\"></td><td class=\"num\" data-v=\"\"></td>",
            ),
        }
        html.push_str("<td>");
        if owners <= STRIP_MAX_RANKS {
            strip(html, k, summary, spread, slow);
        }
        html.push_str("</td></tr>\n");
    }
    html.push_str("</tbody></table></div>\n</section>\n");
}

/// A small bar per rank (rank order), the slowest red when flagged, a
/// grey tick where the kernel did not run; each bar's tooltip names its
/// rank and time.
fn strip(
    html: &mut String,
    k: &KernelAcross,
    summary: &Summary,
    spread: Option<Spread>,
    slow: bool,
) {
    const HEIGHT: f32 = 22.0;
    let n = summary.owners.len().max(1);
    let bar = (160.0 / n as f32).clamp(2.0, 14.0);
    let width = bar * n as f32;
    let top = spread.map_or(0.0, |s| s.max.1);
    let _ = write!(
        html,
        "<svg class=\"strip\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"GPU time per rank\">",
        w = coord(width),
        h = coord(HEIGHT),
    );
    for (o, time) in k.per_owner.iter().enumerate() {
        let x = coord(o as f32 * bar);
        let label = escape(&summary.owners[o].label);
        match time.and_then(|t| t.gpu_ns) {
            Some(ns) => {
                let h = if top > 0.0 {
                    ((ns / top) as f32 * (HEIGHT - 1.0)).max(1.0)
                } else {
                    1.0
                };
                let color = if slow && spread.is_some_and(|s| s.max.0 == o) {
                    "#d62728"
                } else {
                    "#4a90d9"
                };
                let _ = write!(
                    html,
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{bw}\" height=\"{h}\" fill=\"{color}\"><title>{label}: {t} ms</title></rect>",
                    y = coord(HEIGHT - h),
                    bw = coord((bar - 1.0).max(1.0)),
                    h = coord(h),
                    t = ms(ns),
                );
            }
            None => {
                let what = if time.is_some() {
                    "no GPU time"
                } else {
                    "did not run"
                };
                let _ = write!(
                    html,
                    "<rect x=\"{x}\" y=\"{y}\" width=\"{bw}\" height=\"2\" fill=\"#b0b7bf\"><title>{label}: {what}</title></rect>",
                    y = coord(HEIGHT - 2.0),
                    bw = coord((bar - 1.0).max(1.0)),
                );
            }
        }
    }
    html.push_str("</svg>");
}

const STYLE: &str = "\
main { max-width: 1600px; }
#rank-times .barcell { width: 55%; }
#rank-times .bar { height: 0.85em; background: #4a90d9; border-radius: 2px; min-width: 1px; }
#rank-times .bar.slow { background: #d62728; }
#rank-times tr.slow td { font-weight: 600; }
.scroll.tall { max-height: 26em; overflow-y: auto; }
td.path code, td.kname code { font-size: 0.88em; }
td.path { white-space: nowrap; }
ol.top { margin: 0; padding-left: 1.4em; }
ol.top li { margin: 0.05em 0; overflow-wrap: anywhere; }
td.kname { min-width: 26em; overflow-wrap: anywhere; }
#across tr.slow td.ratio { color: #cf222e; font-weight: 600; }
td .error { margin: 0; }
td.kname .shape { color: var(--muted); font-size: 0.8em; white-space: nowrap; }
svg.strip { display: block; }
";

const SCRIPT: &str = r#"(function () {
  'use strict';
  var UD = window.UD;
  Array.prototype.forEach.call(document.querySelectorAll('table.sortable'), function (t) { UD.sortable(t); });
  var input = document.getElementById('kernel-filter'), table = document.getElementById('across');
  if (!input || !table) { return; }
  var rows = Array.prototype.slice.call(table.tBodies[0].rows), count = document.getElementById('shown-count');
  function shown() {
    count.textContent = rows.filter(function (r) { return !r.hidden; }).length + ' of ' + rows.length + ' kernels shown';
  }
  UD.filter(input, rows, function (r) { return r.getAttribute('data-kernel'); });
  input.addEventListener('input', shown);
  shown();
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(name: &str, ns: Option<f64>, id: u64) -> KernelTotal {
        KernelTotal {
            name: name.to_string(),
            instances: 2,
            gpu_ns: ns,
            first_id: Some(id),
        }
    }

    fn file(rank: u32, device: u32, kernels: Vec<KernelTotal>) -> ListedFile {
        ListedFile {
            rank: Some(rank),
            device: Some(device),
            process: None,
            path: format!("rank_{rank}/metrics/metrics_{device}.csv"),
            route: format!("rank={rank}&device={device}"),
            content: FileContent::Metric { kernels },
        }
    }

    #[test]
    fn a_rank_sums_its_devices_and_the_straggler_is_the_max_rank() {
        let files = vec![
            file(
                0,
                0,
                vec![kernel("gemm", Some(10e6), 1), kernel("copy", Some(1e6), 2)],
            ),
            file(0, 1, vec![kernel("gemm", Some(2e6), 7)]),
            file(1, 0, vec![kernel("gemm", Some(12e6), 1)]),
            file(
                2,
                0,
                vec![kernel("gemm", Some(18e6), 1), kernel("copy", Some(1e6), 2)],
            ),
        ];
        let s = summarize(&files);
        let labels: Vec<&str> = s.owners.iter().map(|o| o.label.as_str()).collect();
        assert_eq!(labels, ["rank 0", "rank 1", "rank 2"]);
        assert_eq!(s.owners[0].gpu_ns, Some(13e6));
        assert_eq!(s.owner_of_file, [Some(0), Some(0), Some(1), Some(2)]);
        assert_eq!(s.kernels[0].name, "gemm");
        assert_eq!(s.kernels[0].instances, 8);
        // Rank 0's gemm: 12 ms over two devices, linked to device 0 (10 ms).
        assert_eq!(s.kernels[0].per_owner[0].unwrap().gpu_ns, Some(12e6));
        assert_eq!(s.kernels[0].per_owner[0].unwrap().file, 0);
        let spread = s.kernels[0].spread().unwrap();
        assert_eq!(spread.min, (0, 12e6));
        assert_eq!(spread.median, 12e6);
        assert_eq!(spread.max, (2, 18e6));
        assert!(spread.straggles(3));
        // copy did not run on rank 1: two ranks, median the mean of both.
        assert_eq!(s.kernels[1].ranks(), 2);
        assert_eq!(s.kernels[1].per_owner[1], None);
        let copy = s.kernels[1].spread().unwrap();
        assert_eq!((copy.min, copy.median, copy.max), ((0, 1e6), 1e6, (0, 1e6)));
        assert!(!copy.straggles(2));
    }

    #[test]
    fn bars_per_rank_only_up_to_the_cap() {
        let many = |n: u32| -> Vec<ListedFile> {
            (0..n)
                .map(|r| file(r, 0, vec![kernel("k", Some(1e6), 1)]))
                .collect()
        };
        let title = PageTitle {
            title: "t",
            root: "r",
        };
        let html = result_dir_html(&title, &many(STRIP_MAX_RANKS as u32));
        assert_eq!(html.matches("<svg class=\"strip\"").count(), 1);
        assert_eq!(html.matches("<rect ").count(), STRIP_MAX_RANKS);
        let html = result_dir_html(&title, &many(STRIP_MAX_RANKS as u32 + 1));
        assert!(!html.contains("<svg class=\"strip\""));
        assert!(html.contains("65/65"));
    }

    #[test]
    fn the_page_lists_errors_links_and_the_spread() {
        let mut files = vec![
            file(
                0,
                0,
                vec![kernel(
                    "gemm<a&b>[SIMD32 {1; 1; 1} {1; 1; 1}]",
                    Some(10e6),
                    3,
                )],
            ),
            file(
                1,
                0,
                vec![kernel(
                    "gemm<a&b>[SIMD32 {1; 1; 1} {1; 1; 1}]",
                    Some(15e6),
                    4,
                )],
            ),
        ];
        files.push(ListedFile {
            content: FileContent::Unreadable(
                "m.csv:3: column `GlobalInstanceId`: `x` is not an instance id".into(),
            ),
            ..file(2, 0, Vec::new())
        });
        let html = result_dir_html(
            &PageTitle {
                title: "Performance Metrics",
                root: "run/",
            },
            &files,
        );
        assert!(html.contains("run/ \u{b7} 3 metric files (1 unreadable) \u{b7} 2 ranks \u{b7} 1 kernel \u{b7} 4 instances \u{b7} GPU time 25 ms"));
        assert!(html.contains(
            "<p class=\"error\">m.csv:3: column `GlobalInstanceId`: `x` is not an instance id</p>"
        ));
        assert!(html.contains("href=\"/perfdashboard?gid=4&amp;rank=1&amp;device=0\""));
        assert!(html
            .contains("href=\"/perfdashboard?rank=1&amp;device=0&amp;q=gemm%3Ca%26b%3E%5BSIMD32"));
        assert!(html.contains("<code>gemm&lt;a&amp;b&gt;</code>"));
        assert!(html.contains("Slowest: <b>rank 1</b>, 15 ms, +20.0% against the median rank (12.5 ms); fastest: rank 0, 10 ms."));
        assert!(html.contains("<td class=\"num ratio\" data-v=\"1.2\">1.20</td>"));
        // Offline: nothing loaded from elsewhere.
        assert!(!html.contains("<script src") && !html.contains("<link"));
    }
}
