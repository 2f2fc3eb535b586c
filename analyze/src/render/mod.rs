//! Chart rendering, independent of how the data was parsed.
//!
//! The modes of `analyze` build a small chart model ([`Chart`], [`Page`]);
//! [`layout`] turns one page into vector primitives on a [`Canvas`] (page
//! coordinates in PostScript points, origin top-left), and the writers
//! serialise those primitives: [`pdf::PdfWriter`] (multi-page PDF with the
//! embedded DejaVu Sans font, selectable text), [`svg::SvgWriter`] and
//! [`html::HtmlWriter`] (self-contained, no network). [`data::DataWriter`]
//! writes the plotted series as CSV.
//!
//! Pages are streamed: a writer holds one page at a time (plus, for PDF, the
//! byte offsets of the objects already written), so memory is bounded by the
//! series of one chart, not by the number of pages.
//!
//! The look follows what matplotlib 3.x draws for the original script
//! (scripts.md 1.6.2, 1.7.1 step 3, 1.8.8): a 6.4 x 4.8 inch page, the axes
//! filling what `tight_layout` leaves around the labels, the tab10 colours,
//! horizontal grid lines, a two-line centred title in 8 pt wrapped when long,
//! a 4 pt legend placed where it hides the fewest points, a line chart for
//! two or more points and grouped bars for one.
//!
//! We lay charts out ourselves instead of going through plotters' chart
//! builder: the original's look needs per-position rotated tick labels (one
//! per instruction address), a multi-line wrapped title and matplotlib's
//! "best" legend placement, none of which plotters' builder exposes, while
//! the primitives we need (lines, rectangles, text) are few.

pub mod data;
pub mod font;
pub mod html;
pub mod layout;
pub mod pdf;
pub mod svg;

use std::io;
use std::path::Path;

/// How a chart draws its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChartKind {
    /// One polyline per series (two or more points).
    Line,
    /// Grouped bars, one group per X position (used for a single point).
    Bar,
}

/// One named series of (x, y) points. Non-finite Y values (a division by a
/// zero `GpuTime[ns]`) are kept in the data but not drawn, as matplotlib
/// skips them.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// One chart page.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Title lines, drawn centred above the axes; each is wrapped to the
    /// page width when too long.
    pub title_lines: Vec<String>,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<Series>,
    pub kind: ChartKind,
    /// Text labels for the X positions 0, 1, 2, … (stall charts: the
    /// `IP[Address]` of each row), drawn rotated 90° in a tiny font; `None`
    /// draws numeric ticks.
    pub x_tick_labels: Option<Vec<String>>,
}

impl Chart {
    /// Line chart for >= 2 points, bar chart for one (scripts.md 1.6.2).
    pub fn kind_for_points(points: usize) -> ChartKind {
        if points >= 2 {
            ChartKind::Line
        } else {
            ChartKind::Bar
        }
    }
}

/// One page of output.
#[derive(Debug, Clone, PartialEq)]
pub enum Page {
    Chart(Chart),
    /// Lines of monospace-like text (stall report pages, scripts.md 1.8.8);
    /// at most [`TEXT_LINES_PER_PAGE`] lines, each at most
    /// [`TEXT_LINE_WIDTH`] characters (see [`text_pages`]).
    Text(Vec<String>),
}

/// Lines per text page (scripts.md 1.8.8).
pub const TEXT_LINES_PER_PAGE: usize = 48;
/// Characters per text line before it is cut (scripts.md 1.8.8).
pub const TEXT_LINE_WIDTH: usize = 160;

/// Splits a report into text pages as the original does (scripts.md 1.8.8):
/// every line is cut into chunks of at most 160 characters, 48 chunks per
/// page. An empty line is one line of the page; unlike the original it is
/// not drawn as two line breaks (scripts.md 1.11 quirk 16). A trailing
/// newline of the report does not make an extra empty line.
pub fn text_pages(report: &str) -> Vec<Page> {
    let mut pages = Vec::new();
    let mut page: Vec<String> = Vec::new();
    let body = report.strip_suffix('\n').unwrap_or(report);
    if body.is_empty() && report.is_empty() {
        return pages;
    }
    for line in body.split('\n') {
        let chars: Vec<char> = line.chars().collect();
        let chunks: Vec<String> = if chars.is_empty() {
            vec![String::new()]
        } else {
            chars
                .chunks(TEXT_LINE_WIDTH)
                .map(|c| c.iter().collect())
                .collect()
        };
        for chunk in chunks {
            page.push(chunk);
            if page.len() == TEXT_LINES_PER_PAGE {
                pages.push(Page::Text(std::mem::take(&mut page)));
            }
        }
    }
    if !page.is_empty() {
        pages.push(Page::Text(page));
    }
    pages
}

/// File format of the chart output (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pdf,
    Svg,
    Html,
}

/// A destination for pages. Nothing is visible at the destination path
/// until [`PageSink::finish`] succeeds (all writers go through
/// `unitrace_core::AtomicFile`).
pub trait PageSink {
    fn add_page(&mut self, page: &Page) -> io::Result<()>;
    /// Number of pages added so far.
    fn pages(&self) -> usize;
    /// Completes the file and moves it into place.
    fn finish(self: Box<Self>) -> io::Result<()>;
}

/// Opens a writer for `format` at `path`.
pub fn create(path: &Path, format: Format) -> io::Result<Box<dyn PageSink>> {
    Ok(match format {
        Format::Pdf => Box::new(pdf::PdfWriter::create(path)?),
        Format::Svg => Box::new(svg::SvgWriter::create(path)?),
        Format::Html => Box::new(html::HtmlWriter::create(path)?),
    })
}

/// An RGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    pub const BLACK: Rgb = Rgb(0, 0, 0);
    pub const WHITE: Rgb = Rgb(255, 255, 255);

    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    fn unit(self) -> [f32; 3] {
        [
            self.0 as f32 / 255.0,
            self.1 as f32 / 255.0,
            self.2 as f32 / 255.0,
        ]
    }
}

/// Horizontal anchor of a text run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Center,
    Right,
}

/// One run of text: `(x, y)` is the anchor point on the baseline (before
/// rotation); `rotated` turns the run 90° counter-clockwise about it.
#[derive(Debug, Clone, PartialEq)]
pub struct TextRun<'a> {
    pub x: f32,
    pub y: f32,
    pub size: f32,
    pub align: Align,
    pub rotated: bool,
    pub color: Rgb,
    pub text: &'a str,
}

/// Vector drawing primitives, page coordinates in points, origin top-left.
pub trait Canvas {
    /// A polyline.
    fn polyline(&mut self, points: &[(f32, f32)], color: Rgb, width: f32);
    /// A filled rectangle, optionally outlined.
    fn rect(&mut self, x: f32, y: f32, w: f32, h: f32, fill: Rgb, stroke: Option<(Rgb, f32)>);
    /// A run of text in the embedded font. `align` refers to the text
    /// width measured with [`font::text_width`].
    fn text(&mut self, run: &TextRun<'_>);
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
