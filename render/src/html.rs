//! Self-contained HTML: inline SVG charts, inline CSS, no scripts and no
//! network resources, so every page works offline.
//!
//! * [`HtmlWriter`] writes a page document (`analyze --format html`): one
//!   `<figure>` with an inline SVG per page, streamed as pages are added.
//! * [`Document`] writes a report page for any tool: headings, paragraphs,
//!   tables and charts in the order they are added (see the crate example).

use std::io::{self, Write};
use std::path::Path;

use crate::escape::escape;
use crate::model::Page;
use crate::number::shortest;
use crate::svg::page_svg;

/// The title of a page document written to `path`: its file name.
pub fn title_for(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Writes pages as one HTML document in `W`.
pub struct HtmlWriter<W: Write> {
    out: W,
    pages: usize,
}

impl<W: Write> HtmlWriter<W> {
    /// Starts the document (its head, titled `title`).
    pub fn new(mut out: W, title: &str) -> io::Result<HtmlWriter<W>> {
        write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{}</title>\n<style>\n\
             body {{ background: #eeeeee; margin: 0; padding: 1em; }}\n\
             figure {{ background: #ffffff; margin: 0 auto 1em auto; max-width: 960px; \
             box-shadow: 0 1px 3px rgba(0,0,0,0.3); }}\n\
             figure svg {{ display: block; width: 100%; height: auto; }}\n\
             </style>\n</head>\n<body>\n",
            escape(title)
        )?;
        Ok(HtmlWriter { out, pages: 0 })
    }

    pub fn add_page(&mut self, page: &Page) -> io::Result<()> {
        self.pages += 1;
        writeln!(self.out, "<figure id=\"page-{}\">", self.pages)?;
        self.out.write_all(page_svg(page, 0.0, true).as_bytes())?;
        self.out.write_all(b"</figure>\n")
    }

    /// Number of pages added so far.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// Completes the document and hands back its destination.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.out.write_all(b"</body>\n</html>\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// One cell of a [`Table`].
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text, left-aligned.
    Text(String),
    /// A number, right-aligned in tabular figures, spelled by
    /// [`crate::number::shortest`].
    Number(f64),
    /// A number with its own spelling (rounded, with a unit), right-aligned.
    Formatted(String),
    /// A name that may run long (a demangled kernel, a Python frame):
    /// text that breaks anywhere (an identifier, not prose: its lines fill
    /// up), whose first 4 lines show (the page style's `line-clamp`), and
    /// all of it on hover, on focus and in its tooltip.
    Name(String),
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Cell {
        Cell::Text(text.into())
    }

    pub fn number(value: f64) -> Cell {
        Cell::Number(value)
    }
}

/// A text column with a value longer than this many characters wraps
/// anywhere (long tokens too) and is at least `16em` wide.
const LONG_TEXT: usize = 40;

/// A name longer than this is folded to 4 lines until hovered or focused:
/// demangled kernel names of 500 characters made rows 5 to 15 lines tall
/// (docs/tracestat.md#html-page).
const FOLDED_NAME: usize = 120;

/// A table: a header row and rows of cells.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

/// The style of report pages: readable text, figures as cards, tables with
/// right-aligned numbers.
const DOCUMENT_STYLE: &str = "\
body { font-family: 'DejaVu Sans', Verdana, sans-serif; color: #222222; background: #eeeeee; margin: 0; padding: 1em; }
main { max-width: 1180px; margin: 0 auto; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; } h3 { font-size: 1.05em; }
p { overflow-wrap: anywhere; }
figure { background: #ffffff; margin: 0 0 1em 0; max-width: 960px; box-shadow: 0 1px 3px rgba(0,0,0,0.3); }
figure svg { display: block; width: 100%; height: auto; }
div.table { max-width: 100%; overflow-x: auto; margin: 0 0 1em 0; }
table { border-collapse: collapse; background: #ffffff; font-size: 0.9em; }
th, td { border: 1px solid #dddddd; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.long > div { min-width: 16em; white-space: normal; overflow-wrap: anywhere; }
td.long > div.name { word-break: break-all; }
td.long > div.fold { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 4; line-clamp: 4; overflow: hidden; }
td.long > div.fold:hover, td.long > div.fold:focus { display: block; overflow: visible; }
@media print { td.long > div.fold { display: block; overflow: visible; } }
pre { background: #ffffff; padding: 0.5em 1em; overflow-x: auto; font-size: 0.8em; }
";

/// Per column, whether it holds text longer than [`LONG_TEXT`] characters.
fn long_columns(table: &Table) -> Vec<bool> {
    let mut long = vec![false; table.header.len()];
    for row in &table.rows {
        for (c, cell) in row.iter().enumerate() {
            if let (Cell::Text(t) | Cell::Name(t), Some(l)) = (cell, long.get_mut(c)) {
                *l = *l || t.chars().count() > LONG_TEXT;
            }
        }
    }
    long
}

/// A report page written top to bottom into `W`: no scripts, no network
/// resources, every text escaped.
pub struct Document<W: Write> {
    out: W,
    figures: usize,
}

impl<W: Write> Document<W> {
    /// Starts the page (its head, titled `title`).
    pub fn new(mut out: W, title: &str) -> io::Result<Document<W>> {
        write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>\n{DOCUMENT_STYLE}</style>\n</head>\n<body>\n<main>\n",
            escape(title)
        )?;
        Ok(Document { out, figures: 0 })
    }

    /// A heading of `level` 1 to 6 (clamped).
    pub fn heading(&mut self, level: u8, text: &str) -> io::Result<()> {
        let level = level.clamp(1, 6);
        writeln!(self.out, "<h{level}>{}</h{level}>", escape(text))
    }

    /// A paragraph of text.
    pub fn paragraph(&mut self, text: &str) -> io::Result<()> {
        writeln!(self.out, "<p>{}</p>", escape(text))
    }

    /// Preformatted text (a console report).
    pub fn preformatted(&mut self, text: &str) -> io::Result<()> {
        writeln!(self.out, "<pre>{}</pre>", escape(text))
    }

    /// A table inside the page's width: its long text columns wrap (a
    /// column with a value over [`LONG_TEXT`] characters breaks long
    /// tokens too), numbers and short labels never do, and a table that still does not fit
    /// (many number columns) scrolls as a whole (docs/tracestat.md#html-page).
    pub fn table(&mut self, table: &Table) -> io::Result<()> {
        let long = long_columns(table);
        self.out
            .write_all(b"<div class=\"table\"><table>\n<thead><tr>")?;
        for h in &table.header {
            write!(self.out, "<th>{}</th>", escape(h))?;
        }
        self.out.write_all(b"</tr></thead>\n<tbody>\n")?;
        for row in &table.rows {
            self.out.write_all(b"<tr>")?;
            for (c, cell) in row.iter().enumerate() {
                let long = long.get(c).copied().unwrap_or(false);
                match cell {
                    Cell::Number(v) => write!(self.out, "<td class=\"num\">{}</td>", shortest(*v))?,
                    Cell::Formatted(t) => write!(self.out, "<td class=\"num\">{}</td>", escape(t))?,
                    Cell::Text(t) | Cell::Name(t) if !long => {
                        write!(self.out, "<td>{}</td>", escape(t))?
                    }
                    Cell::Name(t) if t.chars().count() > FOLDED_NAME => write!(
                        self.out,
                        "<td class=\"long\"><div class=\"name fold\" tabindex=\"0\" title=\"{0}\">{0}</div></td>",
                        escape(t)
                    )?,
                    Cell::Name(t) => write!(
                        self.out,
                        "<td class=\"long\"><div class=\"name\">{}</div></td>",
                        escape(t)
                    )?,
                    Cell::Text(t) => {
                        write!(self.out, "<td class=\"long\"><div>{}</div></td>", escape(t))?
                    }
                }
            }
            self.out.write_all(b"</tr>\n")?;
        }
        self.out.write_all(b"</tbody>\n</table></div>\n")
    }

    /// A chart page (or a text page) as an inline SVG figure.
    pub fn chart(&mut self, page: &Page) -> io::Result<()> {
        self.figure(&page_svg(page, 0.0, true))
    }

    /// A figure holding SVG markup the caller drew itself (e.g. with
    /// [`crate::svg::Markup`]); the markup is written as given.
    pub fn figure(&mut self, svg: &str) -> io::Result<()> {
        self.figures += 1;
        writeln!(self.out, "<figure id=\"figure-{}\">", self.figures)?;
        self.out.write_all(svg.as_bytes())?;
        self.out.write_all(b"</figure>\n")
    }

    /// Completes the page and hands back its destination.
    pub fn finish(mut self) -> io::Result<W> {
        self.out.write_all(b"</main>\n</body>\n</html>\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_escapes_text_and_aligns_numbers() {
        let mut doc = Document::new(Vec::new(), "a <b>").unwrap();
        doc.heading(9, "h & h").unwrap();
        doc.table(&Table {
            header: vec!["k".into(), "n".into()],
            rows: vec![vec![Cell::text("x\"y"), Cell::number(2.0)]],
        })
        .unwrap();
        doc.preformatted("a < b").unwrap();
        let html = String::from_utf8(doc.finish().unwrap()).unwrap();
        assert!(html.contains("<title>a &lt;b&gt;</title>"));
        assert!(html.contains("<h6>h &amp; h</h6>"));
        assert!(html.contains("<td>x&quot;y</td><td class=\"num\">2</td>"));
        assert!(html.contains("<div class=\"table\"><table>"));
        assert!(html.contains("<pre>a &lt; b</pre>"));
        assert!(html.ends_with("</html>\n"));
        assert!(
            !html.contains("<script") && !html.contains("http://") && !html.contains("https://")
        );
    }

    /// Short text as it was; a column with a long value wraps inside a
    /// minimum width; a long name folds, its whole text in its tooltip.
    #[test]
    fn long_text_wraps_and_long_names_fold() {
        let name = format!("void k<{}>(int)", "float, ".repeat(30));
        let evidence = "a sentence of evidence longer than forty characters";
        let mut doc = Document::new(Vec::new(), "t").unwrap();
        doc.table(&Table {
            header: vec![
                "rule".into(),
                "n".into(),
                "evidence".into(),
                "kernel".into(),
            ],
            rows: vec![
                vec![
                    Cell::text("host-bound"),
                    Cell::number(1.0),
                    Cell::text(evidence),
                    Cell::Name(name.clone()),
                ],
                vec![
                    Cell::text("x"),
                    Cell::number(2.0),
                    Cell::text("short"),
                    Cell::Name("gemm".into()),
                ],
            ],
        })
        .unwrap();
        let html = String::from_utf8(doc.finish().unwrap()).unwrap();
        assert!(html.contains("<tr><td>host-bound</td><td class=\"num\">1</td>"));
        assert!(html.contains(&format!("<td class=\"long\"><div>{evidence}</div></td>")));
        assert!(html.contains("<td class=\"long\"><div>short</div></td>"));
        let shown = escape(&name);
        assert!(html.contains(&format!(
            "<td class=\"long\"><div class=\"name fold\" tabindex=\"0\" title=\"{shown}\">{shown}</div></td>"
        )));
        assert!(html.contains("<td class=\"long\"><div class=\"name\">gemm</div></td>"));
        assert!(html.contains("-webkit-line-clamp: 4;"));
    }
}
