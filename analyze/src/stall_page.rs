//! The stall dashboard as HTML (docs/analyze.md#stall-dashboard): what the
//! chart server answers for a stall file (`GET /`, `/perfdashboard?kernel=`,
//! `/<kernel>/<instance>?format=html`) and what `analyze -o x.html` writes
//! for one (docs/compatibility.md#analyze-stall-dashboard).
//!
//! One self-contained page, offline: inline CSS and a small inline script
//! (sortable tables, a kernel filter, legend toggles that rescale the bars,
//! tooltips); the bars are plain HTML elements whose widths are computed
//! here, so the page reads the same without the script. Every text is
//! escaped. The numbers come from [`crate::stall_summary`]; the assembly
//! and source lines from the shader dump's annotated listing
//! (`unitrace_core::shader_dump`) and the stall report
//! (`unitrace_core::stall_report`).

use std::collections::HashMap;
use std::fmt::Write as _;

use unitrace_core::shader_dump::{AsmListing, LineKind};
use unitrace_core::stall_csv::StallType;
use unitrace_core::stall_report::{analyze_kernel, by_line, source_location, source_text};

use crate::page_links::{query_encode, PageLinks};
use crate::render::dashboard::{self, HeaderLink, PageHead};
use crate::render::escape::escape_xml as esc;
use crate::render::palette::Rgb;
use crate::stall_summary::{
    all_events, hex_ip, key, label, stall_events, Counts, IpStalls, KernelStalls, StallSummary,
};

/// Hot spots per kernel unless `?top=N` says otherwise (perfdashboard's 20).
pub const DEFAULT_TOP: usize = 20;
/// The most `?top=` may ask for: the page stays small.
pub const MAX_TOP: usize = 500;
/// Source lines listed per kernel.
const TOP_LINES: usize = 20;
/// Assembly lines shown above and below a stalled instruction.
const CONTEXT_LINES: usize = 6;

/// The colour of a stall type: stable across pages and kernels (tab10
/// colours, active cycles in grey).
pub fn colour(t: StallType) -> Rgb {
    use crate::render::palette::TAB10;
    match t {
        StallType::Active => Rgb(0xb0, 0xb0, 0xb0),
        StallType::Sbid => TAB10[0],
        StallType::Send => TAB10[1],
        StallType::Dist => TAB10[2],
        StallType::Pipe => TAB10[3],
        StallType::Sync => TAB10[4],
        StallType::InstrFetch => TAB10[5],
        StallType::Control => TAB10[6],
        StallType::PSDep => TAB10[8],
        StallType::Other => TAB10[9],
    }
}

/// What the source of a kernel's hot spots is known from.
#[derive(Debug, Clone)]
pub enum Source {
    /// No shader dump was given: no links, a note saying how to get them.
    NoDump,
    /// The dump has no `.asm` for the kernel.
    NoAsm { dump: String },
    /// The annotated listing of the kernel's `.asm`.
    Listing(KernelDetail),
}

/// One line of assembly shown around a stalled instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextLine {
    pub text: String,
    /// The stalled instruction itself.
    pub stalled: bool,
    /// A `// Line` / `// File` marker of IGC.
    pub marker: bool,
}

/// Where one stalled address is in the dump.
#[derive(Debug, Clone)]
pub struct Spot {
    /// `file:line` of the nearest markers (`unknown` parts).
    pub location: String,
    /// The source text IGC copied into the `// Line` marker.
    pub source: Option<String>,
    pub context: Vec<ContextLine>,
}

/// A source line with its stall events (Active excluded).
#[derive(Debug, Clone)]
pub struct LineRow {
    pub location: String,
    pub text: Option<String>,
    /// Counts of the eight reported stall types, by [`StallType::index`].
    pub counts: Counts,
    pub instructions: usize,
}

/// The dump's view of one kernel: the listing's name, the hot spots'
/// assembly context, the busiest source lines and the stall report text.
#[derive(Debug, Clone)]
pub struct KernelDetail {
    pub asm: String,
    pub source_available: bool,
    pub spots: HashMap<u64, Spot>,
    pub lines: Vec<LineRow>,
    /// The stall report (docs/compatibility.md#analyze-stall-report) of the
    /// kernel's summed rows.
    pub report: String,
}

/// The detail of `kernel` from its annotated listing: context for every
/// address of `top`, source lines, and the report with the top
/// `report_top` per stall type (`-n`).
pub fn kernel_detail(
    listing: &AsmListing,
    kernel: &KernelStalls,
    top: &[IpStalls],
    report_top: i64,
) -> KernelDetail {
    let rows: Vec<_> = kernel
        .stalled_ips()
        .iter()
        .map(|ip| ip.to_row(&kernel.name))
        .collect();
    let report = analyze_kernel(&kernel.name, listing, &rows, report_top).to_text(listing);
    let mut spots = HashMap::new();
    for ip in top {
        let Some(at) = listing.line_of_address(ip.ip) else {
            continue;
        };
        let first = at.saturating_sub(CONTEXT_LINES);
        let last = (at + CONTEXT_LINES).min(listing.len().saturating_sub(1));
        let context = (first..=last)
            .map(|i| ContextLine {
                text: listing.line(i).to_string(),
                stalled: i == at,
                marker: matches!(listing.kind(i), LineKind::LineMarker | LineKind::FileMarker),
            })
            .collect();
        let loc = source_location(listing, at);
        spots.insert(
            ip.ip,
            Spot {
                location: location_label(&loc.file, loc.line),
                source: source_text(listing, at).filter(|t| !t.is_empty()),
                context,
            },
        );
    }
    let lines = by_line(listing, &rows)
        .into_iter()
        .take(TOP_LINES)
        .map(|l| {
            let mut counts = [0u64; StallType::COUNT];
            counts[..8].copy_from_slice(&l.counts);
            LineRow {
                location: location_label(&l.location.file, l.location.line),
                text: l.text.clone().filter(|t| !t.is_empty()),
                counts,
                instructions: l.instructions.len(),
            }
        })
        .collect();
    KernelDetail {
        asm: listing.shown.clone(),
        source_available: listing.source_available(),
        spots,
        lines,
        report,
    }
}

/// `file:line`; `line N` when IGC wrote no `// File` marker above.
fn location_label(file: &Option<String>, line: Option<u64>) -> String {
    match (file, line) {
        (Some(file), Some(line)) => format!("{file}:{line}"),
        (Some(file), None) => format!("{file}:unknown"),
        (None, Some(line)) => format!("line {line}"),
        (None, None) => "no source marker".to_string(),
    }
}

/// What the page is about and where it links to.
#[derive(Debug, Clone)]
pub struct PageInfo {
    /// The input file as shown to the reader.
    pub file: String,
    /// Whether this is the chart server (links to other pages, forms) or a
    /// single static file (links are anchors).
    pub served: bool,
    /// Hot spots per kernel.
    pub top: usize,
    /// A shader dump was given (`-s`): hot spots link to their assembly.
    pub dump: bool,
    /// The file's routing keys on a result-dir server, kept in every link
    /// and form (docs/uniview.md#result-dir-links).
    pub links: PageLinks,
}

/// `GET /` of the chart server for a stall file: per-kernel totals (chart
/// and sortable table) and the hottest addresses over all kernels.
pub fn dashboard_page(info: &PageInfo, summary: &StallSummary) -> String {
    let header: Vec<HeaderLink<'_>> = info.links.index_link().into_iter().collect();
    let mut html = page_start("EU Stall Sampling", &subtitle(info, summary), &header);
    kernel_selector(&mut html, info, summary, None);
    totals_sections(&mut html, info, summary);
    global_hotspots(&mut html, info, summary, &[]);
    page_end(&mut html);
    html
}

/// A kernel's page on the chart server (`/perfdashboard?kernel=K`, and
/// `/<kernel>/<instance>?format=html` of a stall file).
pub fn kernel_page(
    info: &PageInfo,
    summary: &StallSummary,
    kernel: &KernelStalls,
    source: &Source,
    pdf_link: Option<&str>,
) -> String {
    // On a result-dir server "All kernels" is this file's dashboard, and
    // `/` the index (docs/uniview.md#result-dir-links).
    let home = info.links.home();
    let mut links: Vec<HeaderLink<'_>> = info.links.index_link().into_iter().collect();
    links.push(("All kernels", &home));
    if let Some(link) = pdf_link {
        links.push(("PDF (original charts)", link));
    }
    let mut html = page_start(
        &format!("EU Stall Sampling - {}", kernel.name),
        &info.file,
        &links,
    );
    kernel_selector(&mut html, info, summary, Some(&kernel.name));
    let position = summary
        .kernels()
        .iter()
        .position(|k| k.name == kernel.name)
        .unwrap_or(0);
    kernel_section(&mut html, info, summary, kernel, position, source, "");
    page_end(&mut html);
    html
}

/// `analyze -o x.html` on a stall file: the dashboard, then every kernel
/// with its hot spots and, with a dump, its source lines and report, all
/// in one file linked by anchors. `sources` is parallel to
/// `summary.kernels()`.
pub fn static_page(
    info: &PageInfo,
    title: &str,
    summary: &StallSummary,
    sources: &[Source],
) -> String {
    let mut html = page_start(title, &subtitle(info, summary), &[]);
    totals_sections(&mut html, info, summary);
    // With one kernel its own section below lists the same hot spots.
    if summary.kernels().len() > 1 {
        global_hotspots(&mut html, info, summary, sources);
    }
    for (position, kernel) in summary.kernels().iter().enumerate() {
        let source = sources.get(position).unwrap_or(&Source::NoDump);
        let prefix = format!("k{}-", position + 1);
        kernel_section(&mut html, info, summary, kernel, position, source, &prefix);
    }
    page_end(&mut html);
    html
}

/// The file and perfdashboard's status line.
fn subtitle(info: &PageInfo, summary: &StallSummary) -> String {
    format!(
        "{} — {} IP row(s) of {} kernel(s), aggregated by kernel name across invocations.",
        info.file,
        count(summary.rows() as u64),
        summary.kernels().len()
    )
}

/// Where a kernel's section is: its page on the server (of the same file
/// on a result-dir server), its anchor in a static file.
fn kernel_href(info: &PageInfo, kernel: &KernelStalls, position: usize) -> String {
    if info.served {
        let mut href = format!("/perfdashboard?kernel={}", query_encode(&kernel.name));
        if info.top != DEFAULT_TOP {
            let _ = write!(href, "&top={}", info.top);
        }
        info.links.keep(&href)
    } else {
        format!("#kernel-{}", position + 1)
    }
}

/// The anchor of a hot spot of the kernel at `position` (relative to its
/// kernel page on the server, or the section's prefix in a static file).
fn spot_href(info: &PageInfo, kernel: &KernelStalls, position: usize, ip: u64) -> String {
    if info.served {
        format!("{}#ip-{}", kernel_href(info, kernel, position), hex_ip(ip))
    } else {
        format!("#k{}-ip-{}", position + 1, hex_ip(ip))
    }
}

fn kernel_selector(
    html: &mut String,
    info: &PageInfo,
    summary: &StallSummary,
    current: Option<&str>,
) {
    let top = info.top;
    // The file's routing keys ride along as hidden fields.
    let _ = write!(
        html,
        "<form class=\"card selector\" method=\"get\" action=\"/perfdashboard\">{}\n\
         <label>Kernel <input name=\"kernel\" list=\"kernel-names\" size=\"60\" \
         placeholder=\"name, or a unique part of it\"",
        info.links.hidden_inputs()
    );
    if let Some(current) = current {
        let _ = write!(html, " value=\"{}\"", esc(current));
    }
    let _ = write!(
        html,
        "></label>\n<label>Top <input name=\"top\" type=\"number\" min=\"1\" max=\"{MAX_TOP}\" value=\"{top}\"></label>\n\
         <button type=\"submit\">Show</button>\n<datalist id=\"kernel-names\">\n"
    );
    for k in summary.kernels() {
        let _ = writeln!(html, "<option value=\"{}\"></option>", esc(&k.name));
    }
    html.push_str("</datalist>\n</form>\n");
}

/// Panel 1: totals per kernel (chart and table) with the kernel filter.
fn totals_sections(html: &mut String, info: &PageInfo, summary: &StallSummary) {
    let types = summary.shown_types();
    html.push_str(
        "<section class=\"card\" id=\"totals\">\n<h2>Stall Category Totals per Kernel</h2>\n\
         <p class=\"hint\">All runs of a kernel name together. Click a legend entry to hide or show \
         a category; click a kernel for its hot spots.</p>\n\
         <p><input id=\"kernel-filter\" type=\"search\" placeholder=\"Filter kernels\" size=\"40\"> \
         <span id=\"kernel-count\"></span></p>\n",
    );
    legend(html, &types, "totals-chart");
    let max = summary
        .kernels()
        .iter()
        .map(|k| types.iter().map(|t| k.totals[t.index()]).sum::<u64>())
        .max()
        .unwrap_or(0);
    html.push_str("<div class=\"hbars\" id=\"totals-chart\">\n");
    for (position, kernel) in summary.kernels().iter().enumerate() {
        let label_html = format!(
            "<a href=\"{}\" title=\"{}\">{}</a>",
            esc(&kernel_href(info, kernel, position)),
            esc(&kernel.name),
            esc(&kernel.name)
        );
        bar_row(
            html,
            &label_html,
            &kernel.totals,
            &types,
            max,
            &format!("{} events", count(all_events(&kernel.totals))),
            &format!(" data-kernel=\"{}\"", esc(&kernel.name)),
            &kernel.name,
        );
    }
    html.push_str("</div>\n");
    // The table: every shown type, then the stall sum without Active.
    html.push_str(
        "<div class=\"scroll\"><table class=\"sortable\" id=\"totals-table\">\n<thead><tr><th>Kernel</th>\
         <th class=\"num\">Runs</th><th class=\"num\">IP rows</th>",
    );
    for t in &types {
        let _ = write!(
            html,
            "<th class=\"num\" data-type=\"{}\"><i class=\"sw\" style=\"background:{}\"></i>{}</th>",
            key(*t),
            colour(*t).hex(),
            esc(label(*t))
        );
    }
    html.push_str("<th class=\"num\" data-default-sort=\"desc\">Stalls (no Active)</th></tr></thead>\n<tbody>\n");
    for (position, kernel) in summary.kernels().iter().enumerate() {
        let _ = write!(
            html,
            "<tr data-kernel=\"{}\"><td><a href=\"{}\">{}</a></td>{}{}",
            esc(&kernel.name),
            esc(&kernel_href(info, kernel, position)),
            esc(&kernel.name),
            num_cell(kernel.runs as u64),
            num_cell(kernel.rows as u64),
        );
        for t in &types {
            html.push_str(&num_cell(kernel.totals[t.index()]));
        }
        html.push_str(&num_cell(kernel.stalls()));
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table></div>\n</section>\n");
}

/// Panel 2: the hottest addresses over all kernels. A bar links to the
/// address in its kernel's assembly when the dump has it (in a static
/// file: when `sources` has its spot), else to the kernel.
fn global_hotspots(html: &mut String, info: &PageInfo, summary: &StallSummary, sources: &[Source]) {
    let types = stall_types(summary);
    let spots = summary.top_hotspots(info.top);
    let _ = write!(
        html,
        "<section class=\"card\" id=\"hotspots\">\n<h2>Top {} IP Hotspots (Stall Events by Category)</h2>\n",
        info.top
    );
    if spots.is_empty() {
        html.push_str("<p>No stall events in this file (only active cycles).</p>\n</section>\n");
        return;
    }
    legend(html, &types, "hotspots-chart");
    let max = spots.first().map_or(0, |s| s.ip.stalls());
    html.push_str("<div class=\"hbars\" id=\"hotspots-chart\">\n");
    let positions: HashMap<&str, usize> = summary
        .kernels()
        .iter()
        .enumerate()
        .map(|(i, k)| (k.name.as_str(), i))
        .collect();
    for spot in &spots {
        let position = positions
            .get(spot.kernel.name.as_str())
            .copied()
            .unwrap_or(0);
        let linked = if info.served {
            info.dump
        } else {
            matches!(sources.get(position), Some(Source::Listing(d)) if d.spots.contains_key(&spot.ip.ip))
        };
        let href = if linked {
            spot_href(info, spot.kernel, position, spot.ip.ip)
        } else {
            kernel_href(info, spot.kernel, position)
        };
        let label_html = format!(
            "<a href=\"{}\" title=\"{}\"><code>{}</code> {}</a>",
            esc(&href),
            esc(&spot.kernel.name),
            spot.ip.hex(),
            esc(&short_name(&spot.kernel.name, 40))
        );
        bar_row(
            html,
            &label_html,
            &spot.ip.counts,
            &types,
            max,
            &count(spot.ip.stalls()),
            &format!(" data-kernel=\"{}\"", esc(&spot.kernel.name)),
            &format!("{} {}", spot.ip.hex(), spot.kernel.name),
        );
    }
    html.push_str("</div>\n</section>\n");
}

/// The stall types of the hot-spot charts: the shown ones but `Active`
/// (perfdashboard ranks and draws stall events only).
fn stall_types(summary: &StallSummary) -> Vec<StallType> {
    summary
        .shown_types()
        .into_iter()
        .filter(|t| *t != StallType::Active)
        .collect()
}

fn kernel_section(
    html: &mut String,
    info: &PageInfo,
    summary: &StallSummary,
    kernel: &KernelStalls,
    position: usize,
    source: &Source,
    prefix: &str,
) {
    let types = stall_types(summary);
    let _ = write!(
        html,
        "<section class=\"card kernel\" id=\"kernel-{}\">\n<h2>{}</h2>\n\
         <p>{} run(s), {} IP row(s), {} address(es); {} stall events, {} active cycles.</p>\n",
        position + 1,
        esc(&kernel.name),
        count(kernel.runs as u64),
        count(kernel.rows as u64),
        count(kernel.addresses() as u64),
        count(kernel.stalls()),
        count(kernel.totals[StallType::Active.index()]),
    );
    // The kernel's mix of stall types, one bar; one legend for it and the
    // hot-spot bars below.
    let chart_id = format!("{prefix}mix-{}", position + 1);
    let top_id = format!("{prefix}top-{}", position + 1);
    legend(html, &types, &format!("{chart_id} {top_id}"));
    let _ = writeln!(html, "<div class=\"hbars\" id=\"{chart_id}\">");
    bar_row(
        html,
        "All stall events",
        &kernel.totals,
        &types,
        stall_events(&kernel.totals),
        &count(kernel.stalls()),
        "",
        &kernel.name,
    );
    html.push_str("</div>\n");

    let top = kernel.top_ips(info.top);
    let detail = match source {
        Source::Listing(detail) => Some(detail),
        _ => None,
    };
    let _ = writeln!(html, "<h3>Top {} stalled IPs</h3>", top.len());
    if top.is_empty() {
        html.push_str("<p>No stall events for this kernel (only active cycles).</p>\n</section>\n");
        return;
    }
    match source {
        Source::NoDump => html.push_str(
            "<p class=\"note\">No shader dump was given: addresses are not linked to assembly or \
             source. Run the application with <code>IGC_ShaderDumpEnable=1</code> \
             (and <code>IGC_DumpToCustomDir=DIR</code>), then pass the folder with \
             <code>-s DIR</code> to see each IP's instruction and source line.</p>\n",
        ),
        Source::NoAsm { dump } => {
            let _ = writeln!(
                html,
                "<p class=\"note\">The shader dump {} has no .asm file for this kernel: addresses \
                 are not linked.</p>",
                esc(dump)
            );
        }
        Source::Listing(_) => html
            .push_str("<p class=\"hint\">Click an IP for its instruction and source line.</p>\n"),
    }
    let max = top.first().map_or(0, |s| s.stalls());
    let _ = writeln!(html, "<div class=\"hbars ips\" id=\"{top_id}\">");
    for ip in &top {
        let spot = detail.and_then(|d| d.spots.get(&ip.ip));
        let label_html = match spot {
            Some(spot) => format!(
                "<a href=\"#{prefix}ip-{hex}\" title=\"{loc}\"><code>{hex}</code> {short}</a>",
                hex = ip.hex(),
                loc = esc(&spot.location),
                short = esc(file_name(&spot.location)),
            ),
            None => format!("<code>{}</code>", ip.hex()),
        };
        bar_row(
            html,
            &label_html,
            &ip.counts,
            &types,
            max,
            &count(ip.stalls()),
            &format!(" data-ip=\"{}\"", ip.hex()),
            &ip.hex(),
        );
    }
    html.push_str("</div>\n");
    // The same numbers as a table, folded: the bars come first.
    let _ = writeln!(
        html,
        "<details class=\"numbers\"><summary>The {} IPs as a table</summary>",
        top.len()
    );
    html.push_str("<div class=\"scroll\"><table class=\"sortable ips\">\n<thead><tr><th>IP</th>");
    if detail.is_some() {
        html.push_str("<th>Source line</th>");
    }
    html.push_str("<th class=\"num\" data-default-sort=\"desc\">Stalls</th>");
    for t in &types {
        let _ = write!(html, "<th class=\"num\">{}</th>", esc(label(*t)));
    }
    html.push_str("<th class=\"num\">Active</th></tr></thead>\n<tbody>\n");
    for ip in &top {
        let spot = detail.and_then(|d| d.spots.get(&ip.ip));
        match spot {
            Some(_) => {
                let _ = write!(
                    html,
                    "<tr><td class=\"ip\" data-v=\"{v}\"><a href=\"#{prefix}ip-{hex}\"><code>{hex}</code></a></td>",
                    v = ip.ip,
                    hex = ip.hex()
                );
            }
            None => {
                let _ = write!(
                    html,
                    "<tr><td class=\"ip\" data-v=\"{}\"><code>{}</code></td>",
                    ip.ip,
                    ip.hex()
                );
            }
        }
        if detail.is_some() {
            let _ = write!(
                html,
                "<td class=\"loc\">{}</td>",
                esc(spot.map_or("not an instruction of the .asm", |s| s.location.as_str()))
            );
        }
        html.push_str(&num_cell(ip.stalls()));
        for t in &types {
            html.push_str(&num_cell(ip.counts[t.index()]));
        }
        html.push_str(&num_cell(ip.counts[StallType::Active.index()]));
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody>\n</table></div>\n</details>\n");

    if let Some(detail) = detail {
        detail_sections(html, kernel, &top, &types, detail, prefix);
    }
    html.push_str("</section>\n");
}

fn detail_sections(
    html: &mut String,
    kernel: &KernelStalls,
    top: &[IpStalls],
    types: &[StallType],
    detail: &KernelDetail,
    prefix: &str,
) {
    let _ = writeln!(
        html,
        "<p>Assembly with instruction addresses: <code>{}</code>{}</p>",
        esc(&detail.asm),
        if detail.source_available {
            ""
        } else {
            " (built without line information: no <code>// Line</code> markers)"
        }
    );
    // Busiest source lines.
    if !detail.lines.is_empty() {
        html.push_str(
            "<h3>Stall events per source line</h3>\n<div class=\"scroll\"><table class=\"sortable lines\">\n\
             <thead><tr><th>Source line</th><th>Text</th><th class=\"num\">Instructions</th>\
             <th class=\"num\" data-default-sort=\"desc\">Stalls</th>",
        );
        let reported: Vec<StallType> = types
            .iter()
            .copied()
            .filter(|t| StallType::REPORTED.contains(t))
            .collect();
        for t in &reported {
            let _ = write!(html, "<th class=\"num\">{}</th>", esc(label(*t)));
        }
        html.push_str("</tr></thead>\n<tbody>\n");
        for line in &detail.lines {
            let _ = write!(
                html,
                "<tr><td class=\"loc\"><code>{}</code></td><td class=\"text\"><code>{}</code></td>{}{}",
                esc(&line.location),
                esc(line.text.as_deref().unwrap_or("")),
                num_cell(line.instructions as u64),
                num_cell(stall_events(&line.counts)),
            );
            for t in &reported {
                html.push_str(&num_cell(line.counts[t.index()]));
            }
            html.push_str("</tr>\n");
        }
        html.push_str("</tbody>\n</table></div>\n");
    }
    // Every hot spot in its assembly.
    html.push_str("<h3>Hot spots in the assembly</h3>\n");
    for ip in top {
        let Some(spot) = detail.spots.get(&ip.ip) else {
            continue;
        };
        let mut mix = String::new();
        for t in types {
            let n = ip.counts[t.index()];
            if n > 0 {
                let _ = write!(
                    mix,
                    "<span class=\"chip\"><i class=\"sw\" style=\"background:{}\"></i>{} {}</span> ",
                    colour(*t).hex(),
                    esc(label(*t)),
                    count(n)
                );
            }
        }
        let _ = write!(
            html,
            "<div class=\"spot\" id=\"{prefix}ip-{hex}\">\n<h4><code>{hex}</code> · <code>{loc}</code> · {n} stall events</h4>\n<p>{mix}</p>\n",
            hex = ip.hex(),
            loc = esc(&spot.location),
            n = count(ip.stalls()),
        );
        if let Some(text) = &spot.source {
            let _ = writeln!(
                html,
                "<p class=\"source\">Source: <code>{}</code></p>",
                esc(text)
            );
        }
        html.push_str("<pre class=\"asm\">");
        for line in &spot.context {
            let class = if line.stalled {
                " class=\"stalled\""
            } else if line.marker {
                " class=\"marker\""
            } else {
                ""
            };
            // Block spans, no newline between them: one line each.
            let _ = write!(html, "<span{class}>{}</span>", esc(&line.text));
        }
        html.push_str("</pre>\n</div>\n");
    }
    let _ = write!(
        html,
        "<details class=\"report\" open>\n<summary>Stall report of {}</summary>\n<pre>{}</pre>\n</details>\n",
        esc(&kernel.name),
        esc(&detail.report)
    );
}

/// A legend whose entries toggle the categories of the charts `charts`
/// (element ids, separated by spaces).
fn legend(html: &mut String, types: &[StallType], charts: &str) {
    let _ = write!(html, "<div class=\"legend\" data-chart=\"{charts}\">");
    for t in types {
        let _ = write!(
            html,
            "<button type=\"button\" data-type=\"{}\" aria-pressed=\"true\"><i class=\"sw\" style=\"background:{}\"></i>{}</button>",
            key(*t),
            colour(*t).hex(),
            esc(label(*t))
        );
    }
    html.push_str("</div>\n");
}

/// One horizontal stacked bar: a segment per type with a non-zero count,
/// scaled so that `max` fills the track.
#[allow(clippy::too_many_arguments)]
fn bar_row(
    html: &mut String,
    label_html: &str,
    counts: &Counts,
    types: &[StallType],
    max: u64,
    total_text: &str,
    attributes: &str,
    subject: &str,
) {
    let row_total: u64 = types.iter().map(|t| counts[t.index()]).sum();
    let _ = write!(
        html,
        "<div class=\"hrow\"{attributes}><div class=\"label\">{label_html}</div><div class=\"track\">"
    );
    for t in types {
        let n = counts[t.index()];
        if n == 0 {
            continue;
        }
        let width = if max == 0 {
            0.0
        } else {
            n as f64 * 100.0 / max as f64
        };
        let _ = write!(
            html,
            "<span class=\"seg\" data-type=\"{k}\" data-n=\"{n}\" style=\"width:{width:.3}%;background:{c}\" \
             data-tip=\"{tip}\"></span>",
            k = key(*t),
            c = colour(*t).hex(),
            tip = esc(&format!(
                "{subject}\n{}: {} ({})",
                label(*t),
                count(n),
                percent(n, row_total)
            )),
        );
    }
    let _ = writeln!(
        html,
        "</div><div class=\"total\">{}</div></div>",
        esc(total_text)
    );
}

/// The last path component of a `file:line` label.
fn file_name(location: &str) -> &str {
    location.rsplit('/').next().unwrap_or(location)
}

fn num_cell(n: u64) -> String {
    format!("<td class=\"num\" data-v=\"{n}\">{}</td>", count(n))
}

/// `n` with thousands separators.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn percent(n: u64, total: u64) -> String {
    if total == 0 {
        return "0%".to_string();
    }
    format!("{:.1}%", n as f64 * 100.0 / total as f64)
}

/// The first `max` characters of a long name, then `…` (perfdashboard cuts
/// legend names at 40).
fn short_name(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        return name.to_string();
    }
    let mut cut: String = name.chars().take(max).collect();
    cut.push('…');
    cut
}

/// The shared dashboard look (`render::dashboard`): header bar with
/// `links`, its CSS plus the stall pages' own.
fn page_start(title: &str, subtitle: &str, links: &[HeaderLink<'_>]) -> String {
    let mut html = String::with_capacity(64 * 1024);
    let head = PageHead {
        title,
        subtitle,
        links,
    };
    dashboard::page_start(&mut html, &head, STYLE);
    html
}

fn page_end(html: &mut String) {
    dashboard::page_end(html, SCRIPT);
}

const STYLE: &str = "\
h4 { font-size: 0.95em; margin: 0 0 0.3em 0; font-weight: normal; }
pre { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 0.92em; }
.selector { display: flex; flex-wrap: wrap; gap: 0.8em; align-items: center; }
.selector input[name=kernel] { max-width: 70vw; }
.hbars { display: flex; flex-direction: column; gap: 3px; margin: 0 0 1em 0; }
.hrow { display: grid; grid-template-columns: minmax(10em, 32%) 1fr 7.5em; gap: 0.6em; align-items: center; }
.hrow .label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: 0.9em; }
.hrow .track { display: flex; height: 1.15em; background: #f6f8fa; border-radius: 2px; overflow: hidden; }
.hrow .seg { display: block; height: 100%; min-width: 1px; }
.hrow .seg:hover { filter: brightness(0.85); }
.hrow:has(.label a) .track { cursor: pointer; }
.hrow .total { text-align: right; font-variant-numeric: tabular-nums; color: var(--muted); font-size: 0.9em; white-space: nowrap; }
.hrow[hidden] { display: none; }
td:first-child, td.loc { overflow-wrap: anywhere; }
td.ip { white-space: nowrap; }
td.loc { min-width: 14em; }
td.text { min-width: 18em; }
#totals-table td:first-child { min-width: 18em; }
th { font-size: 0.92em; }
th.num { min-width: 4.5em; }
.spot { border-top: 1px solid var(--line); padding: 0.6em 0 0.2em 0; }
.spot:target { background: #fffbe6; outline: 2px solid #f0b400; }
.chip { display: inline-block; margin-right: 0.6em; font-size: 0.88em; }
.source code { background: #eef4fb; padding: 0.1em 0.3em; }
pre.asm { background: #f6f8fa; padding: 0.4em 0.6em; overflow-x: auto; margin: 0.3em 0 0.6em 0; line-height: 1.35; }
pre.asm span { display: block; white-space: pre; }
pre.asm .stalled { background: #ffe1e1; font-weight: bold; }
pre.asm .marker { color: #1a7f37; }
details.report pre { background: #f6f8fa; padding: 0.5em 0.8em; overflow-x: auto; max-height: 40em; }
";

/// The stall pages' script, run after `render::dashboard`'s `window.UD`:
/// sortable tables (with a default sort column), the kernel filter (also
/// from `?q=`), legend toggles that rescale the bars (also from `?hide=`),
/// and tooltips through `UD.tip`. No network, no framework.
const SCRIPT: &str = r#"(function () {
  'use strict';
  var doc = document;
  function cellValue(row, i) {
    var cell = row.cells[i];
    if (!cell) return '';
    var v = cell.getAttribute('data-v');
    return v === null ? cell.textContent.trim().toLowerCase() : Number(v);
  }
  function sortBy(table, th, descending) {
    var i = Array.prototype.indexOf.call(th.parentNode.children, th);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, i), y = cellValue(b, i);
      var c = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(th.parentNode.children, function (h) { h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
  }
  Array.prototype.forEach.call(doc.querySelectorAll('table.sortable'), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
      th.addEventListener('click', function () {
        var numeric = th.classList.contains('num');
        var current = th.getAttribute('aria-sort');
        var descending = current ? current === 'ascending' : numeric;
        sortBy(table, th, descending);
      });
      if (th.getAttribute('data-default-sort') === 'desc') sortBy(table, th, true);
    });
  });
  // Bars: widths from the counts of the categories shown.
  function rescale(chart) {
    var hidden = {};
    var legendEl = doc.querySelector('.legend[data-chart~="' + chart.id + '"]');
    if (legendEl) {
      Array.prototype.forEach.call(legendEl.querySelectorAll('button'), function (b) {
        if (b.getAttribute('aria-pressed') === 'false') hidden[b.getAttribute('data-type')] = true;
      });
    }
    var rows = chart.querySelectorAll('.hrow');
    var max = 0;
    var sums = [];
    Array.prototype.forEach.call(rows, function (row) {
      var sum = 0;
      Array.prototype.forEach.call(row.querySelectorAll('.seg'), function (s) {
        if (!hidden[s.getAttribute('data-type')]) sum += Number(s.getAttribute('data-n'));
      });
      sums.push(sum);
      if (sum > max) max = sum;
    });
    Array.prototype.forEach.call(rows, function (row, r) {
      Array.prototype.forEach.call(row.querySelectorAll('.seg'), function (s) {
        var off = hidden[s.getAttribute('data-type')];
        s.style.display = off ? 'none' : '';
        s.style.width = (max > 0 ? Number(s.getAttribute('data-n')) * 100 / max : 0) + '%';
      });
      var total = row.querySelector('.total');
      if (total && Object.keys(hidden).length) total.textContent = sums[r].toLocaleString('en-US');
    });
  }
  Array.prototype.forEach.call(doc.querySelectorAll('.legend'), function (legendEl) {
    var charts = legendEl.getAttribute('data-chart').split(' ').map(function (id) {
      return doc.getElementById(id);
    }).filter(function (c) { return c; });
    legendEl.addEventListener('click', function (e) {
      var b = e.target.closest('button');
      if (!b) return;
      b.setAttribute('aria-pressed', b.getAttribute('aria-pressed') === 'false' ? 'true' : 'false');
      charts.forEach(rescale);
    });
  });
  // `?hide=active,sbid` starts with those categories hidden (a link can
  // carry the view).
  var hide = new URLSearchParams(window.location.search).get('hide');
  if (hide) {
    var keys = hide.toLowerCase().split(',');
    Array.prototype.forEach.call(doc.querySelectorAll('.legend button'), function (b) {
      if (keys.indexOf(b.getAttribute('data-type')) >= 0) b.setAttribute('aria-pressed', 'false');
    });
    Array.prototype.forEach.call(doc.querySelectorAll('.hbars'), rescale);
  }
  // Kernel filter over the totals chart, its table and the hot spots.
  var filter = doc.getElementById('kernel-filter');
  var counter = doc.getElementById('kernel-count');
  function applyFilter() {
    var q = filter.value.trim().toLowerCase();
    var shown = 0, all = 0;
    Array.prototype.forEach.call(doc.querySelectorAll('[data-kernel]'), function (e) {
      var hit = !q || e.getAttribute('data-kernel').toLowerCase().indexOf(q) >= 0;
      if (hit) e.removeAttribute('hidden'); else e.setAttribute('hidden', '');
      if (e.tagName === 'TR') { all++; if (hit) shown++; }
    });
    var noun = all === 1 ? ' kernel' : ' kernels';
    if (counter) counter.textContent = q ? shown + ' of ' + all + noun : all + noun;
  }
  if (filter) {
    var q = new URLSearchParams(window.location.search).get('q');
    if (q) filter.value = q;
    filter.addEventListener('input', applyFilter);
    applyFilter();
  }
  // A click on a bar follows its label's link (the IP's place in the
  // assembly and report, or the kernel).
  doc.addEventListener('click', function (e) {
    if (!e.target.closest || e.target.closest('a')) return;
    var row = e.target.closest('.hrow');
    var link = row ? row.querySelector('.label a') : null;
    if (link) link.click();
  });
  // Tooltips of the bar segments (the shared tooltip of render::dashboard).
  doc.addEventListener('mousemove', function (e) {
    var t = e.target.closest ? e.target.closest('[data-tip]') : null;
    if (t) window.UD.tip.show(e, t.getAttribute('data-tip')); else window.UD.tip.hide();
  });
  doc.body.setAttribute('data-ready', '1');
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use unitrace_core::stall_csv::{KernelRun, StallRow};

    fn summary() -> StallSummary {
        let mut s = StallSummary::new();
        let rows = [
            (0x1b8u64, StallType::Sbid, 40u64),
            (0x20, StallType::Pipe, 3),
            (0x30, StallType::Active, 9),
        ];
        s.add_run(&KernelRun {
            section: 0,
            device: Some(0),
            kernel: "k<T>&\"x\"".to_string(),
            first_line: 1,
            byte_range: 0..0,
            rows: rows
                .iter()
                .map(|&(ip, t, n)| {
                    let mut counts = [0u64; StallType::COUNT];
                    counts[t.index()] = n;
                    StallRow {
                        kernel: "k<T>&\"x\"".to_string(),
                        ip,
                        ip_text: format!("{ip:x}"),
                        counts,
                        line: 0,
                        offset: 0,
                    }
                })
                .collect(),
        });
        s
    }

    #[test]
    fn names_are_escaped_and_ips_hex() {
        let s = summary();
        let info = PageInfo {
            file: "s.csv".into(),
            served: true,
            top: DEFAULT_TOP,
            dump: false,
            links: PageLinks::single_file(),
        };
        let html = dashboard_page(&info, &s);
        assert!(html.contains("k&lt;T&gt;&amp;&quot;x&quot;"));
        assert!(!html.contains("k<T>"));
        assert!(html.contains("/perfdashboard?kernel=k%3CT%3E%26%22x%22"));
        assert!(html.contains("<code>0x01b8</code>"));
        let k = &s.kernels()[0];
        let page = kernel_page(&info, &s, k, &Source::NoDump, None);
        assert!(page.contains("IGC_ShaderDumpEnable=1"));
        assert!(!page.contains("href=\"#ip-"));
        assert!(page.contains("<script>") && !page.contains("src=\"http"));
    }

    #[test]
    fn counts_have_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(short_name("abcdef", 3), "abc…");
    }
}
