//! Self-contained SVG output: no scripts, no external fonts or stylesheets
//! (text names DejaVu Sans, the font the layout was measured with, and
//! falls back to any sans-serif font), so the file opens offline in any
//! browser or viewer. Several pages are stacked vertically in one SVG.
//!
//! Pages are streamed to a temporary spill file because the root element
//! must state the total height before the pages; the spill is copied into
//! the output when [`SvgWriter::into_inner`] completes the document.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};

use crate::canvas::{Align, Canvas, TextRun};
use crate::escape::escape;
use crate::layout::{draw_page, PAGE_HEIGHT, PAGE_WIDTH};
use crate::model::Page;
use crate::number::coord as num;
use crate::palette::Rgb;

/// CSS font list used for all text.
pub const FONT_FAMILY: &str = "'DejaVu Sans', 'Bitstream Vera Sans', Verdana, sans-serif";

/// Renders one page as an `<svg>` element placed at vertical offset `y`
/// (points) inside its parent; `standalone` adds the namespace.
pub fn page_svg(page: &Page, y: f32, standalone: bool) -> String {
    let mut canvas = SvgCanvas {
        body: String::with_capacity(16 * 1024),
    };
    draw_page(page, &mut canvas);
    let ns = if standalone {
        " xmlns=\"http://www.w3.org/2000/svg\""
    } else {
        ""
    };
    format!(
        "<svg{ns} x=\"0\" y=\"{y}\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"{FONT_FAMILY}\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\n{body}</svg>\n",
        w = PAGE_WIDTH,
        h = PAGE_HEIGHT,
        body = canvas.body
    )
}

/// Draws on a string of SVG elements (the body of one page).
pub struct SvgCanvas {
    pub body: String,
}

impl Canvas for SvgCanvas {
    fn polyline(&mut self, points: &[(f32, f32)], color: Rgb, width: f32) {
        if points.is_empty() {
            return;
        }
        self.body.push_str("<polyline points=\"");
        for (i, (x, y)) in points.iter().enumerate() {
            if i > 0 {
                self.body.push(' ');
            }
            let _ = write!(self.body, "{},{}", num(*x), num(*y));
        }
        let _ = writeln!(
            self.body,
            "\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" stroke-linejoin=\"round\"/>",
            color.hex(),
            num(width)
        );
    }

    fn rect(&mut self, x: f32, y: f32, w: f32, h: f32, fill: Rgb, stroke: Option<(Rgb, f32)>) {
        let stroke = match stroke {
            Some((c, sw)) => format!(" stroke=\"{}\" stroke-width=\"{}\"", c.hex(), num(sw)),
            None => String::new(),
        };
        let _ = writeln!(
            self.body,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"{stroke}/>",
            num(x),
            num(y),
            num(w),
            num(h),
            fill.hex()
        );
    }

    fn text(&mut self, run: &TextRun<'_>) {
        let anchor = match run.align {
            Align::Left => "start",
            Align::Center => "middle",
            Align::Right => "end",
        };
        let rotate = if run.rotated {
            format!(" transform=\"rotate(-90 {} {})\"", num(run.x), num(run.y))
        } else {
            String::new()
        };
        let fill = if run.color == Rgb::BLACK {
            String::new()
        } else {
            format!(" fill=\"{}\"", run.color.hex())
        };
        let _ = writeln!(
            self.body,
            "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{anchor}\" xml:space=\"preserve\"{rotate}{fill}>{}</text>",
            num(run.x),
            num(run.y),
            num(run.size),
            escape(run.text)
        );
    }
}

/// Writes all pages into one SVG in `W`, stacked top to bottom.
pub struct SvgWriter<W: Write> {
    out: W,
    spill: BufWriter<std::fs::File>,
    pages: usize,
}

impl<W: Write> SvgWriter<W> {
    pub fn new(out: W) -> io::Result<SvgWriter<W>> {
        let spill = BufWriter::new(tempfile::tempfile()?);
        Ok(SvgWriter {
            out,
            spill,
            pages: 0,
        })
    }

    pub fn add_page(&mut self, page: &Page) -> io::Result<()> {
        let y = self.pages as f32 * PAGE_HEIGHT;
        self.spill.write_all(page_svg(page, y, false).as_bytes())?;
        self.pages += 1;
        Ok(())
    }

    /// Number of pages added so far.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// Completes the document and hands back its destination.
    pub fn into_inner(mut self) -> io::Result<W> {
        let height = self.pages.max(1) as f32 * PAGE_HEIGHT;
        write!(
            self.out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}pt\" height=\"{h}pt\" viewBox=\"0 0 {w} {h}\">\n",
            w = PAGE_WIDTH,
            h = num(height)
        )?;
        let mut spill = self.spill.into_inner().map_err(|e| e.into_error())?;
        spill.seek(SeekFrom::Start(0))?;
        io::copy(&mut spill, &mut self.out)?;
        self.out.write_all(b"</svg>\n")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes SVG (or HTML) elements into a string, escaping every attribute
/// value and text through [`crate::escape`]: for charts a tool draws
/// itself (roofline) with elements the page's script needs (classes,
/// `data-*` attributes, tooltips), which the [`Canvas`] primitives do not
/// carry.
#[derive(Debug, Default, Clone)]
pub struct Markup {
    out: String,
}

/// An attribute value: text (escaped) or a page coordinate (spelled by
/// [`crate::number::coord`]).
pub enum Value<'a> {
    Text(&'a str),
    Owned(String),
    Coord(f64),
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Value<'a> {
        Value::Text(s)
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(s: &'a String) -> Value<'a> {
        Value::Text(s)
    }
}

impl From<String> for Value<'_> {
    fn from(s: String) -> Self {
        Value::Owned(s)
    }
}

impl From<f64> for Value<'_> {
    fn from(v: f64) -> Self {
        Value::Coord(v)
    }
}

impl Markup {
    pub fn new() -> Markup {
        Markup::default()
    }

    fn tag(&mut self, name: &str, attrs: &[(&str, Value<'_>)]) {
        self.out.push('<');
        self.out.push_str(name);
        for (key, value) in attrs {
            self.out.push(' ');
            self.out.push_str(key);
            self.out.push_str("=\"");
            match value {
                Value::Text(t) => self.out.push_str(&escape(t)),
                Value::Owned(t) => self.out.push_str(&escape(t)),
                Value::Coord(v) => self.out.push_str(&num(*v as f32)),
            }
            self.out.push('"');
        }
    }

    /// `<name a="v" ...>`
    pub fn open(&mut self, name: &str, attrs: &[(&str, Value<'_>)]) -> &mut Markup {
        self.tag(name, attrs);
        self.out.push('>');
        self
    }

    /// `<name a="v" .../>`
    pub fn empty(&mut self, name: &str, attrs: &[(&str, Value<'_>)]) -> &mut Markup {
        self.tag(name, attrs);
        self.out.push_str("/>");
        self
    }

    /// Escaped text content.
    pub fn text(&mut self, text: &str) -> &mut Markup {
        self.out.push_str(&escape(text));
        self
    }

    /// `</name>`
    pub fn close(&mut self, name: &str) -> &mut Markup {
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push('>');
        self
    }

    /// `<name a="v" ...>text</name>`
    pub fn element(&mut self, name: &str, attrs: &[(&str, Value<'_>)], text: &str) -> &mut Markup {
        self.open(name, attrs).text(text).close(name)
    }

    /// A line break between elements (keeps the output diffable).
    pub fn newline(&mut self) -> &mut Markup {
        self.out.push('\n');
        self
    }

    /// Markup the caller built and trusts (another fragment).
    pub fn raw(&mut self, markup: &str) -> &mut Markup {
        self.out.push_str(markup);
        self
    }

    pub fn as_str(&self) -> &str {
        &self.out
    }

    pub fn into_string(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_escapes_attributes_and_text() {
        let mut m = Markup::new();
        m.open("g", &[("class", "a\"b".into()), ("x", 1.5f64.into())])
            .element("title", &[], "k<1>\u{1}")
            .empty("circle", &[("r", 2.0f64.into())])
            .close("g");
        assert_eq!(
            m.as_str(),
            "<g class=\"a&quot;b\" x=\"1.5\"><title>k&lt;1&gt;\u{fffd}</title><circle r=\"2\"/></g>"
        );
    }
}
