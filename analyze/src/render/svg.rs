//! Self-contained SVG output: no scripts, no external fonts or stylesheets
//! (text names DejaVu Sans, the font the layout was measured with, and
//! falls back to any sans-serif font), so the file opens offline in any
//! browser or viewer. Several pages are stacked vertically in one SVG.
//!
//! Pages are streamed to a temporary spill file because the root element
//! must state the total height before the pages; the spill is copied into
//! the atomic output on [`SvgWriter`]'s finish.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use unitrace_core::AtomicFile;

use super::layout::{draw_page, PAGE_HEIGHT, PAGE_WIDTH};
use super::{Align, Canvas, Page, PageSink, Rgb, TextRun};

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

/// Escapes text for XML content and attributes.
pub fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 forbids (control bytes from a damaged
            // kernel name) become U+FFFD.
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' && c != '\r' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

pub struct SvgCanvas {
    pub body: String,
}

fn num(v: f32) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
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
            escape_xml(run.text)
        );
    }
}

/// Writes all pages into one SVG, stacked top to bottom.
pub struct SvgWriter {
    out: AtomicFile,
    spill: BufWriter<std::fs::File>,
    pages: usize,
}

impl SvgWriter {
    pub fn create(path: &Path) -> io::Result<SvgWriter> {
        let out = AtomicFile::create(path)?;
        let spill = BufWriter::new(tempfile::tempfile()?);
        Ok(SvgWriter {
            out,
            spill,
            pages: 0,
        })
    }
}

impl PageSink for SvgWriter {
    fn add_page(&mut self, page: &Page) -> io::Result<()> {
        let y = self.pages as f32 * PAGE_HEIGHT;
        self.spill.write_all(page_svg(page, y, false).as_bytes())?;
        self.pages += 1;
        Ok(())
    }

    fn pages(&self) -> usize {
        self.pages
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
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
        self.out.commit()
    }
}
