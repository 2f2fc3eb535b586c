//! Turning the rows of one request into a document: the chart pages of a
//! metric instance (scripts.md 1.6.2 as the server applies it, 1.9), and
//! the PDF or HTML bytes of a list of pages (drawn by `crate::render`).

use std::fmt::Write as _;

use unitrace_core::csv_sections::Header;
use unitrace_core::metric_csv::MetricRow;

use crate::charts::{GPU_TIME, THROUGHPUT_LABEL};
use crate::render::svg::{escape_xml, page_svg};
use crate::render::{self, Chart, Page, Series};

/// The chart options of the server (the `-m -y -b -x -t` of the command
/// line or of uniview's `-f` file).
#[derive(Debug, Clone, Default)]
pub struct ChartOptions {
    pub metrics: Vec<String>,
    pub ylabels: Vec<String>,
    pub throughput: Vec<String>,
    pub xlabel: String,
    pub title: String,
}

/// One validated chart set: metric names and their columns.
struct Set<'a> {
    names: Vec<&'a str>,
    columns: Vec<usize>,
    y_label: &'a str,
    throughput: bool,
}

/// The pages of one metric instance, in the original's order: every `-m`
/// set, then every `-b` set (scripts.md 1.6.2). A name the header does not
/// have gives the server's message `No metric data for <name>. Is the
/// metric name correctly spelled?` (scripts.md 1.9; the `-m` name is shown
/// as given, the `-b` name stripped, as the original does).
///
/// X values are the 0-based sample ordinals within the instance (the
/// original uses row positions in the section: scripts.md 1.11 quirk 7, the
/// same choice as `analyze -o`).
pub fn metric_pages(
    options: &ChartOptions,
    header: &Header,
    rows: &[MetricRow],
) -> Result<Vec<Chart>, String> {
    let column = |name: &str| {
        header
            .index_of(name)
            .filter(|&i| i != header.kernel_index())
    };
    let mut sets = Vec::new();
    for (set, label) in options.metrics.iter().zip(&options.ylabels) {
        let mut names = Vec::new();
        let mut columns = Vec::new();
        for piece in set.split(',') {
            let Some(i) = column(piece.trim()) else {
                return Err(format!(
                    "No metric data for {piece}. Is the metric name correctly spelled?"
                ));
            };
            names.push(piece.trim());
            columns.push(i);
        }
        sets.push(Set {
            names,
            columns,
            y_label: label,
            throughput: false,
        });
    }
    let gpu_time = column(GPU_TIME);
    for set in &options.throughput {
        let mut names = Vec::new();
        let mut columns = Vec::new();
        for piece in set.split(',') {
            let name = piece.trim();
            let Some(i) = column(name) else {
                return Err(format!(
                    "No metric data for {name}. Is the metric name correctly spelled?"
                ));
            };
            names.push(name);
            columns.push(i);
        }
        if gpu_time.is_none() {
            // The original crashes on a file without it; say why instead.
            return Err(format!(
                "No metric data for {GPU_TIME}. Is the metric name correctly spelled?"
            ));
        }
        sets.push(Set {
            names,
            columns,
            y_label: THROUGHPUT_LABEL,
            throughput: true,
        });
    }
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    // No `-m` page means no `-b` page either (scripts.md 1.6.2).
    if !sets.iter().any(|s| !s.throughput) {
        return Ok(Vec::new());
    }
    let title_lines = vec![options.title.clone(), format!("({})", first.kernel)];
    let charts = sets
        .iter()
        .map(|set| {
            let series = set
                .names
                .iter()
                .zip(&set.columns)
                .map(|(name, &c)| Series {
                    name: name.to_string(),
                    points: rows
                        .iter()
                        .enumerate()
                        .map(|(i, row)| {
                            let value = row.value(c);
                            let value = match (set.throughput, gpu_time) {
                                (true, Some(g)) => value / row.value(g),
                                _ => value,
                            };
                            (i as f64, value)
                        })
                        .collect(),
                })
                .collect();
            Chart {
                title_lines: title_lines.clone(),
                x_label: options.xlabel.clone(),
                y_label: set.y_label.to_string(),
                series,
                kind: Chart::kind_for_points(rows.len()),
                x_tick_labels: None,
            }
        })
        .collect();
    Ok(charts)
}

/// A PDF of `pages`, drawn by the PDF writer of `crate::render` (which
/// writes files: it goes through a private temporary directory, as the
/// original's server does).
pub fn pdf_bytes(pages: &[Page]) -> std::io::Result<Vec<u8>> {
    let dir = tempfile::Builder::new()
        .prefix("analyze-server-")
        .tempdir()?;
    let path = dir.path().join("charts.pdf");
    let mut sink = render::create(&path, render::Format::Pdf)?;
    for page in pages {
        sink.add_page(page)?;
    }
    sink.finish()?;
    std::fs::read(&path)
}

/// What an HTML page is about (its heading).
pub struct HtmlContext<'a> {
    pub title: &'a str,
    pub kernel: &'a str,
    /// `instance <id>` or `stall samples`, shown under the title.
    pub subject: String,
    /// Link to the same page as PDF.
    pub pdf_link: String,
}

/// One self-contained HTML page: the charts as inline SVG, then the text
/// pages (the stall report) as preformatted text. No scripts, no network.
pub fn html_bytes(context: &HtmlContext<'_>, charts: &[Page], report: Option<&str>) -> Vec<u8> {
    let mut html = String::with_capacity(64 * 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title} - {kernel}</title>\n<style>\n\
         body {{ background: #eeeeee; margin: 0; padding: 1em; font-family: sans-serif; }}\n\
         header {{ max-width: 960px; margin: 0 auto 1em auto; }}\n\
         header h1 {{ font-size: 1.2em; margin: 0 0 0.3em 0; }}\n\
         header p {{ margin: 0.2em 0; overflow-wrap: anywhere; }}\n\
         figure {{ background: #ffffff; margin: 0 auto 1em auto; max-width: 960px; \
         box-shadow: 0 1px 3px rgba(0,0,0,0.3); }}\n\
         figure svg {{ display: block; width: 100%; height: auto; }}\n\
         section.report {{ background: #ffffff; margin: 0 auto 1em auto; max-width: 960px; \
         padding: 0.5em 1em; box-shadow: 0 1px 3px rgba(0,0,0,0.3); }}\n\
         section.report pre {{ font-size: 0.8em; white-space: pre; overflow-x: auto; }}\n\
         </style>\n</head>\n<body>\n<header>\n<h1>{title}</h1>\n\
         <p>Kernel <code>{kernel}</code>, {subject}</p>\n\
         <p><a href=\"{pdf}\">PDF</a></p>\n</header>\n",
        title = escape_xml(context.title),
        kernel = escape_xml(context.kernel),
        subject = escape_xml(&context.subject),
        pdf = escape_xml(&context.pdf_link),
    );
    for (i, page) in charts.iter().enumerate() {
        let _ = writeln!(html, "<figure id=\"chart-{}\">", i + 1);
        html.push_str(&page_svg(page, 0.0, true));
        html.push_str("</figure>\n");
    }
    if let Some(report) = report {
        let _ = write!(
            html,
            "<section class=\"report\">\n<h2>Stall report</h2>\n<pre>{}</pre>\n</section>\n",
            escape_xml(report)
        );
    }
    html.push_str("</body>\n</html>\n");
    html.into_bytes()
}
