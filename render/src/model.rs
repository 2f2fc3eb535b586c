//! What a document is made of, independent of how it is drawn: [`Page`]s
//! holding a [`Chart`] (named [`Series`] of points drawn as a [`ChartKind`])
//! or lines of text.
//!
//! A new chart kind is a new [`ChartKind`] variant plus one arm in
//! `layout::draw_chart` (and in `layout::draw_legend` for its legend
//! handle); every writer draws it without change, since writers only see
//! the canvas primitives.

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
    /// Line chart for >= 2 points, bar chart for one (docs/compatibility.md#analyze-pages).
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
    /// Lines of monospace-like text (stall report pages,
    /// docs/compatibility.md#analyze-report-pages);
    /// at most [`TEXT_LINES_PER_PAGE`] lines, each at most
    /// [`TEXT_LINE_WIDTH`] characters (see [`text_pages`]).
    Text(Vec<String>),
}

/// Lines per text page (docs/compatibility.md#analyze-report-pages).
pub const TEXT_LINES_PER_PAGE: usize = 48;
/// Characters per text line before it is cut (docs/compatibility.md#analyze-report-pages).
pub const TEXT_LINE_WIDTH: usize = 160;

/// Splits a report into text pages as the original does
/// (docs/compatibility.md#analyze-report-pages):
/// every line is cut into chunks of at most 160 characters, 48 chunks per
/// page. An empty line is one line of the page; unlike the original it is
/// not drawn as two line breaks (docs/compatibility.md#analyze-quirk-16). A trailing
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
