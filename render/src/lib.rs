//! Charts and report pages shared by every tool of unitrace-tools
//! (`analyze`, its chart server, `roofline`, and the report tools).
//!
//! One model, one layout, several writers:
//!
//! * [`model`]: a document is a sequence of [`Page`]s; a page holds a
//!   [`Chart`] (named [`Series`] drawn as a [`ChartKind`], with a title and
//!   axis labels) or lines of text.
//! * [`layout`] turns one page into vector primitives on a [`Canvas`] (page
//!   coordinates in PostScript points, origin top-left): axes, ticks, grid,
//!   series, legend, a title wrapped at the page width.
//! * Writers serialise those primitives into any [`std::io::Write`]:
//!   [`pdf::PdfWriter`] (multi-page PDF, DejaVu Sans embedded as a subset
//!   per document, selectable text), [`svg::SvgWriter`] (pages stacked in one
//!   SVG), [`html::HtmlWriter`] (one inline SVG per page) and
//!   [`data::DataWriter`] (the plotted series as CSV or Parquet). [`create`] opens one
//!   of the page writers on a file through `unitrace_core::AtomicFile`, so
//!   nothing is visible at the path until the document is complete; the
//!   chart server writes into a `Vec<u8>` instead ([`write_pages`]).
//! * For report pages (headings, paragraphs, tables, inline SVG charts),
//!   [`html::Document`] writes one self-contained, offline HTML page.
//! * One of each shared detail: [`escape::escape_xml`] (XML/HTML text and
//!   attributes, control bytes replaced), [`palette`] (tab10 colours),
//!   [`number`] (every number spelled in an output), [`font`] (the one
//!   embedded font and its metrics), [`json`] (the layout of a JSON
//!   report: indented sections, a line per table row).
//!
//! Pages are streamed: a writer holds one page at a time (plus, for PDF,
//! the byte offsets of the objects already written and the glyphs used),
//! so memory is bounded by the series of one chart, not by the number of
//! pages.
//!
//! The look of charts follows what matplotlib 3.x draws for the original
//! analyze script (docs/compatibility.md#analyze-pages): a 6.4 x 4.8 inch
//! page, the axes filling what `tight_layout` leaves around the labels, the
//! tab10 colours, horizontal grid lines, a centred title in 8 pt wrapped at
//! the page width, a 4 pt legend placed where it hides the fewest points, a
//! line chart for two or more points and grouped bars for one.
//!
//! We lay charts out ourselves instead of going through plotters' chart
//! builder: that look needs per-position rotated tick labels (one per
//! instruction address), a multi-line wrapped title and matplotlib's "best"
//! legend placement, none of which plotters' builder exposes, while the
//! primitives we need (lines, rectangles, text) are few.
//!
//! # A report page in a few lines
//!
//! ```
//! use unitrace_render::html::{Cell, Document, Table};
//! use unitrace_render::{Chart, ChartKind, Page, Series};
//!
//! let chart = Chart {
//!     title_lines: vec!["Time per kernel".into()],
//!     x_label: "kernel".into(),
//!     y_label: "time (ms)".into(),
//!     series: vec![Series { name: "GPU time".into(), points: vec![(0.0, 4.5), (1.0, 2.0)] }],
//!     kind: ChartKind::Bar,
//!     x_tick_labels: Some(vec!["gemm".into(), "copy".into()]),
//! };
//! let mut doc = Document::new(Vec::new(), "tracestat")?;
//! doc.heading(1, "Kernels")?;
//! doc.paragraph("Two kernels, 6.5 ms in all.")?;
//! doc.table(&Table {
//!     header: vec!["kernel".into(), "time (ms)".into()],
//!     rows: vec![
//!         vec![Cell::text("gemm"), Cell::number(4.5)],
//!         vec![Cell::text("copy"), Cell::number(2.0)],
//!     ],
//! })?;
//! doc.chart(&Page::Chart(chart))?;
//! let html = String::from_utf8(doc.finish()?).unwrap();
//! assert!(html.contains("<svg") && html.contains("<td class=\"num\">4.5</td>"));
//! # Ok::<(), std::io::Error>(())
//! ```

pub mod axis;
pub mod canvas;
pub mod dashboard;
pub mod data;
pub mod escape;
pub mod font;
pub mod html;
pub mod json;
pub mod layout;
pub mod model;
pub mod number;
pub mod palette;
pub mod parquet;
pub mod pdf;
pub mod sections;
pub mod svg;
pub mod table;

use std::io::{self, Write};
use std::path::Path;

use unitrace_core::AtomicFile;

pub use canvas::{Align, Canvas, TextRun};
pub use model::{text_pages, Chart, ChartKind, Page, Series, TEXT_LINES_PER_PAGE, TEXT_LINE_WIDTH};
pub use palette::Rgb;

/// File format of a page document (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pdf,
    Svg,
    Html,
}

/// A destination file for pages. Nothing is visible at the destination
/// path until [`PageSink::finish`] succeeds (the file writers go through
/// `unitrace_core::AtomicFile`).
pub trait PageSink {
    fn add_page(&mut self, page: &Page) -> io::Result<()>;
    /// Number of pages added so far.
    fn pages(&self) -> usize;
    /// Completes the file and moves it into place.
    fn finish(self: Box<Self>) -> io::Result<()>;
    /// Files the next page added under `group` -> `entry` in the
    /// document's outline (a PDF viewer's sidebar); formats without an
    /// outline ignore it.
    fn outline_entry(&mut self, _group: &str, _entry: &str) {}
    /// Gives the file up: nothing appears at the destination, and the
    /// run's other outputs are still committed (see
    /// `unitrace_core::AtomicFile::discard`). The default drops the
    /// writer, which leaves no file but fails the run's `OutputSet`: file
    /// writers override it.
    fn discard(self: Box<Self>) {}
}

/// Opens a page writer for `format` on the file `path`.
pub fn create(path: &Path, format: Format) -> io::Result<Box<dyn PageSink>> {
    let out = AtomicFile::create(path)?;
    Ok(match format {
        Format::Pdf => Box::new(pdf::PdfWriter::new(out)?),
        Format::Svg => Box::new(svg::SvgWriter::new(out)?),
        Format::Html => {
            let title = html::title_for(path);
            Box::new(html::HtmlWriter::new(out, &title)?)
        }
    })
}

/// Writes `pages` as one complete document in `format` into `out` and
/// returns it (e.g. a `Vec<u8>` holding the whole file). `title` names
/// an HTML document; the other formats have none.
pub fn write_pages<'a, W: Write>(
    out: W,
    format: Format,
    title: &str,
    pages: impl IntoIterator<Item = &'a Page>,
) -> io::Result<W> {
    match format {
        Format::Pdf => {
            let mut w = pdf::PdfWriter::new(out)?;
            for page in pages {
                w.add_page(page)?;
            }
            w.into_inner()
        }
        Format::Svg => {
            let mut w = svg::SvgWriter::new(out)?;
            for page in pages {
                w.add_page(page)?;
            }
            w.into_inner()
        }
        Format::Html => {
            let mut w = html::HtmlWriter::new(out, title)?;
            for page in pages {
                w.add_page(page)?;
            }
            w.into_inner()
        }
    }
}

/// The page writers on a file: complete the document, then commit the file.
macro_rules! file_sink {
    ($writer:ty) => {
        impl PageSink for $writer {
            fn add_page(&mut self, page: &Page) -> io::Result<()> {
                <$writer>::add_page(self, page)
            }
            fn pages(&self) -> usize {
                <$writer>::pages(self)
            }
            fn finish(self: Box<Self>) -> io::Result<()> {
                self.into_inner()?.commit()
            }
            fn discard(self: Box<Self>) {
                if let Ok(file) = self.into_inner() {
                    file.discard();
                }
            }
        }
    };
}
file_sink!(svg::SvgWriter<AtomicFile>);
file_sink!(html::HtmlWriter<AtomicFile>);

/// The PDF writer also keeps an outline.
impl PageSink for pdf::PdfWriter<AtomicFile> {
    fn add_page(&mut self, page: &Page) -> io::Result<()> {
        pdf::PdfWriter::add_page(self, page)
    }
    fn pages(&self) -> usize {
        pdf::PdfWriter::pages(self)
    }
    fn finish(self: Box<Self>) -> io::Result<()> {
        self.into_inner()?.commit()
    }
    fn discard(self: Box<Self>) {
        if let Ok(file) = self.into_inner() {
            file.discard();
        }
    }
    fn outline_entry(&mut self, group: &str, entry: &str) {
        pdf::PdfWriter::outline_entry(self, group, entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One page of each kind; written where `RENDER_SAMPLE_DIR` points when
    /// set (to look at the pictures), else into a temporary folder.
    pub(crate) fn sample_pages() -> Vec<Page> {
        let line = Chart {
            title_lines: vec![
                "Performance Metrics".into(),
                "(main::{lambda(auto:1)#4}[SIMD32 {4096; 1; 1} {256; 1; 1}])".into(),
            ],
            x_label: "Time(in sampling intervals)".into(),
            y_label: "XVE Stall and ALU Utilizations (%)".into(),
            series: vec![
                Series {
                    name: "XVE_STALL[%]".into(),
                    points: vec![
                        (1.0, 5.0),
                        (2.0, 38.0),
                        (3.0, 59.0),
                        (4.0, 60.0),
                        (5.0, 62.0),
                        (6.0, 33.0),
                    ],
                },
                Series {
                    name: "XVE_INST_EXECUTED_ALU0_ALL_UTILIZATION[%]".into(),
                    points: vec![
                        (1.0, 1.0),
                        (2.0, 8.0),
                        (3.0, 12.5),
                        (4.0, 13.0),
                        (5.0, 15.0),
                        (6.0, 8.0),
                    ],
                },
            ],
            kind: ChartKind::Line,
            x_tick_labels: None,
        };
        let bar = Chart {
            title_lines: vec!["Performance Metrics".into(), "(gen_conv)".into()],
            x_label: "Time(in sampling intervals)".into(),
            y_label: "Throughput(GB/s)".into(),
            series: vec![
                Series {
                    name: "L3_BYTE_READ[bytes]".into(),
                    points: vec![(1.0, 46.0)],
                },
                Series {
                    name: "L3_BYTE_WRITE[bytes]".into(),
                    points: vec![(1.0, 22.3)],
                },
            ],
            kind: ChartKind::Bar,
            x_tick_labels: None,
        };
        let n = 40;
        let stall = Chart {
            title_lines: vec![
                "Performance Metrics".into(),
                "(main::{lambda(auto:1)#3})(1/2)".into(),
            ],
            x_label: "IP[Address]".into(),
            y_label: "Events".into(),
            series: vec![
                Series {
                    name: "ControlStall[Events]".into(),
                    points: (0..n).map(|i| (i as f64, (i * 7 % 13) as f64)).collect(),
                },
                Series {
                    name: "SbidStall[Events]".into(),
                    points: (0..n)
                        .map(|i| (i as f64, (i * 5 % 23) as f64 * 100.0))
                        .collect(),
                },
            ],
            kind: ChartKind::Line,
            x_tick_labels: Some((0..n).map(|i| format!("{:08x}", i * 16)).collect()),
        };
        let mut pages = vec![Page::Chart(line), Page::Chart(bar), Page::Chart(stall)];
        pages.extend(text_pages("Stall report\n\nline with $ and ünïcode\n"));
        pages
    }

    #[test]
    fn text_pages_cut_lines_and_keep_blank_lines_single() {
        let long = "x".repeat(TEXT_LINE_WIDTH * 2 + 5);
        let report = format!("a\n\n{long}\n");
        let pages = text_pages(&report);
        assert_eq!(pages.len(), 1);
        let Page::Text(lines) = &pages[0] else {
            panic!("text page expected")
        };
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[1], "");
        assert_eq!(lines[4].len(), 5);
        let many: String = (0..100).map(|i| format!("{i}\n")).collect();
        let pages = text_pages(&many);
        assert_eq!(pages.len(), 3);
        assert!(text_pages("").is_empty());
    }

    #[test]
    fn documents_in_memory_equal_the_files() {
        let tmp = tempfile::tempdir().unwrap();
        for (format, name) in [
            (Format::Pdf, "m.pdf"),
            (Format::Svg, "m.svg"),
            (Format::Html, "m.html"),
        ] {
            let path = tmp.path().join(name);
            let mut sink = create(&path, format).unwrap();
            for p in sample_pages() {
                sink.add_page(&p).unwrap();
            }
            sink.finish().unwrap();
            let pages = sample_pages();
            let bytes = write_pages(Vec::new(), format, name, &pages).unwrap();
            assert_eq!(bytes, std::fs::read(&path).unwrap(), "{name}");
        }
    }

    #[test]
    fn writers_produce_complete_files() {
        let keep = std::env::var_os("RENDER_SAMPLE_DIR");
        let tmp = tempfile::tempdir().unwrap();
        let dir = keep
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| tmp.path().to_path_buf());
        for (format, name) in [
            (Format::Pdf, "s.pdf"),
            (Format::Svg, "s.svg"),
            (Format::Html, "s.html"),
        ] {
            let path = dir.join(name);
            let mut sink = create(&path, format).unwrap();
            assert!(!path.exists(), "nothing visible before finish");
            for p in sample_pages() {
                sink.add_page(&p).unwrap();
            }
            assert_eq!(sink.pages(), 4);
            sink.finish().unwrap();
            let bytes = std::fs::read(&path).unwrap();
            match format {
                Format::Pdf => {
                    assert!(bytes.starts_with(b"%PDF-1.7"));
                    assert!(bytes.ends_with(b"%%EOF\n"));
                }
                Format::Svg => assert!(bytes.ends_with(b"</svg>\n")),
                Format::Html => {
                    let text = String::from_utf8(bytes).unwrap();
                    assert_eq!(text.matches("<figure").count(), 4);
                    assert!(!text.contains("http://") || !text.contains("<script"));
                }
            }
        }
    }
}
