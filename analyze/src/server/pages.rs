//! Turning the rows of one request into a document: the chart pages of a
//! metric instance (docs/compatibility.md#analyze-pages as the server applies it, #analyze-server), and
//! the PDF or HTML bytes of a list of pages (drawn by `crate::render`).

use std::borrow::Cow;
use std::fmt::Write as _;

use unitrace_core::csv_sections::Header;
use unitrace_core::metric_csv::MetricRow;

use crate::charts::{
    instance_charts, ChartSets, InstanceColumns, InstanceName, MissingColumn, GPU_TIME,
};
pub use crate::plan::ChartOptions;
use crate::render::escape::escape_xml;
use crate::render::svg::page_svg;
use crate::render::{self, Chart, Page};

/// The pages of one metric instance, built by `crate::charts` as for
/// `analyze -o`: every `-m` set, then every `-b` set (docs/compatibility.md#analyze-pages); no
/// page without rows or without a `-m` set. A name the header does not
/// have gives the server's message `No metric data for <name>. Is the
/// metric name correctly spelled?` (docs/compatibility.md#analyze-server; the `-m` name is shown
/// as given, the `-b` name stripped, as the original does). With no rows,
/// this only validates the options against `header`.
pub fn metric_pages(
    options: &ChartOptions,
    header: &Header,
    rows: &[MetricRow],
) -> Result<Vec<Chart>, String> {
    let sets = ChartSets::new(options, header).map_err(|missing| {
        let name = match &missing {
            MissingColumn::Metric(name) | MissingColumn::Throughput(name) => name.as_str(),
            // The original crashes on a file without it; say why instead.
            MissingColumn::GpuTime => GPU_TIME,
            MissingColumn::Time => return MissingColumn::TIME_MESSAGE.to_string(),
        };
        format!("No metric data for {name}. Is the metric name correctly spelled?")
    })?;
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    if !sets.has_metric_set() {
        return Ok(Vec::new());
    }
    let name = InstanceName {
        ordinal: None,
        global_id: first.global_instance_id,
    };
    let charts = instance_charts(options, &sets, &first.kernel, name, &RowColumns(rows));
    Ok(charts.into_iter().map(|(chart, _)| chart).collect())
}

/// The rows of one instance as read by the server's index.
struct RowColumns<'a>(&'a [MetricRow]);

impl InstanceColumns for RowColumns<'_> {
    fn rows(&self) -> usize {
        self.0.len()
    }

    fn column(&self, column: usize) -> Cow<'_, [f64]> {
        Cow::Owned(self.0.iter().map(|row| row.value(column)).collect())
    }
}

/// A PDF of `pages`, drawn in memory by the PDF writer of `crate::render`
/// (the original's server goes through a file; nothing here touches the
/// disk).
pub fn pdf_bytes(pages: &[Page]) -> std::io::Result<Vec<u8>> {
    render::write_pages(Vec::new(), render::Format::Pdf, "", pages)
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
