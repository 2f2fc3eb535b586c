//! Multi-page PDF writer: vector pages, the DejaVu Sans font embedded as a
//! CID TrueType font (Identity-H, with a ToUnicode map so text is
//! selectable and searchable, e.g. by `pdftotext`).
//!
//! The file is streamed into any `io::Write`: each page's content stream
//! is compressed and written as soon as the page is added; only the object
//! offsets, the page references and the glyphs used are kept until
//! [`PdfWriter::into_inner`] completes the document with the font objects,
//! the page tree and the cross-reference table. Objects are serialised
//! with pdf-writer, one chunk per object.
//!
//! The font is embedded as a subset holding only the glyphs the document
//! uses (typst's `subsetter`): a one-page chart carries a few kilobytes of
//! font instead of the whole 740 KB DejaVu Sans (380 KB deflated). Glyphs
//! are renumbered in order of first use while pages are written (the
//! numbers go into content streams that are already on their way), which is
//! the numbering `subsetter` gives the subset.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use pdf_writer::types::{CidFontType, FontFlags, LineCapStyle, LineJoinStyle, SystemInfo};
use pdf_writer::{Chunk, Content, Filter, Name, Primitive, Rect, Ref, Str, TextStr};
use subsetter::GlyphRemapper;
use unitrace_core::AtomicFile;

use crate::canvas::{Align, Canvas, TextRun};
use crate::font::{metrics, FONT_BYTES, FONT_NAME};
use crate::layout::{draw_page, PAGE_HEIGHT, PAGE_WIDTH};
use crate::model::Page;
use crate::palette::Rgb;

const CATALOG: Ref = Ref::new(1);
const PAGE_TREE: Ref = Ref::new(2);
const TYPE0_FONT: Ref = Ref::new(3);
const CID_FONT: Ref = Ref::new(4);
const FONT_DESCRIPTOR: Ref = Ref::new(5);
const FONT_FILE: Ref = Ref::new(6);
const TO_UNICODE: Ref = Ref::new(7);
const INFO: Ref = Ref::new(8);
const FIRST_FREE: i32 = 9;
const FONT_RESOURCE: Name<'static> = Name(b"F1");

/// Writes a PDF document into `W`.
pub struct PdfWriter<W: Write> {
    out: W,
    written: u64,
    /// Byte offset of every object, indexed by object number.
    offsets: Vec<u64>,
    next_id: i32,
    page_refs: Vec<Ref>,
    glyphs: SubsetGlyphs,
    /// Reused for every content stream (allocating a deflate state per page
    /// costs more than compressing the page).
    compressor: flate2::Compress,
    compressed: Vec<u8>,
}

/// The glyphs a document uses, numbered as in its font subset.
struct SubsetGlyphs {
    remapper: GlyphRemapper,
    /// Subset glyph id of each glyph id of the font (`UNUSED` until used):
    /// the remapper's own map is a hash map, looked up per character.
    subset_id: Vec<u16>,
    /// Subset glyph id → (font glyph id, the character it was used for),
    /// for the widths and the ToUnicode map.
    used: BTreeMap<u16, (u16, char)>,
}

const UNUSED: u16 = u16::MAX;

impl SubsetGlyphs {
    fn new() -> SubsetGlyphs {
        SubsetGlyphs {
            // .notdef is glyph 0 of every subset.
            remapper: GlyphRemapper::new(),
            subset_id: vec![UNUSED; usize::from(metrics().glyph_count())],
            used: BTreeMap::new(),
        }
    }

    /// The subset glyph id that draws `ch` (font glyph `gid`).
    fn id(&mut self, gid: u16, ch: char) -> u16 {
        let slot = usize::from(gid);
        match self.subset_id.get(slot) {
            Some(&known) if known != UNUSED => return known,
            _ => {}
        }
        let id = self.remapper.remap(gid);
        if let Some(s) = self.subset_id.get_mut(slot) {
            *s = id;
        }
        self.used.entry(id).or_insert((gid, ch));
        id
    }

    /// The font file holding exactly the used glyphs (plus the parts of
    /// composite glyphs), numbered as [`SubsetGlyphs::id`] returned them.
    fn font_file(&self) -> io::Result<Vec<u8>> {
        subsetter::subset(FONT_BYTES, 0, &self.remapper)
            .map_err(|e| io::Error::other(format!("cannot subset the embedded font: {e}")))
    }

    /// The six-letter tag PDF asks for in front of a subset font's name
    /// (ISO 32000 9.6.4), derived from the glyph set so equal documents
    /// stay byte-identical.
    fn tag(&self) -> String {
        let mut h: u32 = 0x811c_9dc5;
        for &(gid, _) in self.used.values() {
            for b in gid.to_le_bytes() {
                h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
            }
        }
        (0..6)
            .map(|i| char::from(b'A' + ((h >> (i * 5)) % 26) as u8))
            .collect()
    }
}

impl PdfWriter<AtomicFile> {
    /// Starts the file `path`; nothing is visible there before the
    /// document is complete and committed ([`crate::PageSink::finish`]).
    pub fn create(path: &Path) -> io::Result<PdfWriter<AtomicFile>> {
        PdfWriter::new(AtomicFile::create(path)?)
    }
}

impl<W: Write> PdfWriter<W> {
    /// Starts a document in `out` (writes the PDF header).
    pub fn new(out: W) -> io::Result<PdfWriter<W>> {
        let mut w = PdfWriter {
            out,
            written: 0,
            offsets: vec![0; FIRST_FREE as usize],
            next_id: FIRST_FREE,
            page_refs: Vec::new(),
            glyphs: SubsetGlyphs::new(),
            compressor: flate2::Compress::new(Compression::fast(), true),
            compressed: Vec::new(),
        };
        // A binary comment after the header marks the file as binary.
        w.write_raw(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")?;
        Ok(w)
    }

    fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    fn alloc(&mut self) -> Ref {
        let r = Ref::new(self.next_id);
        self.next_id += 1;
        self.offsets.push(0);
        r
    }

    /// Writes one chunk holding exactly the object `id`.
    fn write_object(&mut self, id: Ref, chunk: Chunk) -> io::Result<()> {
        self.offsets[id.get() as usize] = self.written;
        self.write_raw(chunk.as_bytes())
    }

    fn write_font(&mut self) -> io::Result<()> {
        let m = metrics();
        let (ascent, descent, bbox) = m.vertical_milli();
        let font_file = self.glyphs.font_file()?;
        let base_font = format!("{}+{FONT_NAME}", self.glyphs.tag());
        let base_font = Name(base_font.as_bytes());

        let mut c = Chunk::new();
        c.type0_font(TYPE0_FONT)
            .base_font(base_font)
            .encoding_predefined(Name(b"Identity-H"))
            .descendant_font(CID_FONT)
            .to_unicode(TO_UNICODE);
        self.write_object(TYPE0_FONT, c)?;

        let mut c = Chunk::new();
        {
            let mut cid = c.cid_font(CID_FONT);
            cid.subtype(CidFontType::Type2)
                .base_font(base_font)
                .system_info(system_info())
                .font_descriptor(FONT_DESCRIPTOR)
                .default_width(m.advance_milli(0))
                .cid_to_gid_map_predefined(Name(b"Identity"));
            let mut widths = cid.widths();
            for (&id, &(gid, _)) in &self.glyphs.used {
                widths.consecutive(id, [m.advance_milli(gid)]);
            }
        }
        self.write_object(CID_FONT, c)?;

        let mut c = Chunk::new();
        c.font_descriptor(FONT_DESCRIPTOR)
            .name(base_font)
            .flags(FontFlags::NON_SYMBOLIC)
            .bbox(Rect::new(bbox[0], bbox[1], bbox[2], bbox[3]))
            .italic_angle(0.0)
            .ascent(ascent)
            .descent(descent)
            .cap_height(ascent * 0.75)
            .stem_v(80.0)
            .font_file2(FONT_FILE);
        self.write_object(FONT_DESCRIPTOR, c)?;

        let mut c = Chunk::new();
        c.stream(FONT_FILE, &deflate(&font_file))
            .filter(Filter::FlateDecode)
            .pair(Name(b"Length1"), font_file.len() as i32);
        self.write_object(FONT_FILE, c)?;

        let mut cmap = pdf_writer::types::UnicodeCmap::new(Name(b"Custom"), system_info());
        for (&id, &(_, ch)) in &self.glyphs.used {
            cmap.pair(id, ch);
        }
        let cmap_bytes = cmap.finish();
        let mut c = Chunk::new();
        c.cmap(TO_UNICODE, &cmap_bytes);
        self.write_object(TO_UNICODE, c)
    }

    pub fn add_page(&mut self, page: &Page) -> io::Result<()> {
        let mut canvas = PdfCanvas {
            content: Content::new(),
            glyphs: &mut self.glyphs,
        };
        canvas.content.set_line_join(LineJoinStyle::RoundJoin);
        canvas.content.set_line_cap(LineCapStyle::ButtCap);
        draw_page(page, &mut canvas);
        let content = canvas.content.finish();
        let mut data = std::mem::take(&mut self.compressed);
        deflate_reusing(&mut self.compressor, &mut data, &content)?;

        let page_ref = self.alloc();
        let content_ref = self.alloc();
        let mut c = Chunk::new();
        {
            let mut p = c.page(page_ref);
            p.parent(PAGE_TREE)
                .media_box(Rect::new(0.0, 0.0, PAGE_WIDTH, PAGE_HEIGHT))
                .contents(content_ref);
            p.resources().fonts().pair(FONT_RESOURCE, TYPE0_FONT);
        }
        self.write_object(page_ref, c)?;
        let mut c = Chunk::new();
        c.stream(content_ref, &data).filter(Filter::FlateDecode);
        self.compressed = data;
        self.write_object(content_ref, c)?;
        self.page_refs.push(page_ref);
        Ok(())
    }

    /// Number of pages added so far.
    pub fn pages(&self) -> usize {
        self.page_refs.len()
    }

    /// Completes the document (font, page tree, cross-reference table) and
    /// hands back its destination.
    pub fn into_inner(mut self) -> io::Result<W> {
        self.write_font()?;

        let mut c = Chunk::new();
        c.pages(PAGE_TREE)
            .kids(self.page_refs.iter().copied())
            .count(self.page_refs.len() as i32);
        self.write_object(PAGE_TREE, c)?;

        let mut c = Chunk::new();
        c.indirect(CATALOG)
            .start::<pdf_writer::writers::Catalog>()
            .pages(PAGE_TREE);
        self.write_object(CATALOG, c)?;

        let mut c = Chunk::new();
        c.indirect(INFO)
            .start::<pdf_writer::writers::DocumentInfo>()
            .producer(TextStr("unitrace-tools"));
        self.write_object(INFO, c)?;

        let xref_at = self.written;
        let mut xref = format!("xref\n0 {}\n0000000000 65535 f\r\n", self.offsets.len());
        for off in &self.offsets[1..] {
            xref.push_str(&format!("{off:010} 00000 n\r\n"));
        }
        xref.push_str(&format!(
            "trailer\n<<\n  /Size {}\n  /Root {} 0 R\n  /Info {} 0 R\n>>\nstartxref\n{}\n%%EOF\n",
            self.offsets.len(),
            CATALOG.get(),
            INFO.get(),
            xref_at
        ));
        self.write_raw(xref.as_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }
}

fn system_info() -> SystemInfo<'static> {
    SystemInfo {
        registry: Str(b"Adobe"),
        ordering: Str(b"Identity"),
        supplement: 0,
    }
}

fn deflate(bytes: &[u8]) -> Vec<u8> {
    deflate_level(bytes, Compression::new(6))
}

/// Compresses a page content stream with the writer's reused compressor,
/// at the fastest level: content streams are small, repetitive operator
/// text, and large runs write hundreds of thousands of them.
fn deflate_reusing(c: &mut flate2::Compress, out: &mut Vec<u8>, bytes: &[u8]) -> io::Result<()> {
    c.reset();
    out.clear();
    out.reserve(bytes.len() / 2 + 64);
    loop {
        let before = c.total_in() as usize;
        let status = c
            .compress_vec(
                &bytes[before.min(bytes.len())..],
                out,
                flate2::FlushCompress::Finish,
            )
            .map_err(io::Error::other)?;
        if status == flate2::Status::StreamEnd {
            return Ok(());
        }
        out.reserve(out.capacity().max(4096));
    }
}

fn deflate_level(bytes: &[u8], level: Compression) -> Vec<u8> {
    let mut enc = ZlibEncoder::new(Vec::new(), level);
    // Writing into a Vec cannot fail.
    let _ = enc.write_all(bytes);
    enc.finish().unwrap_or_default()
}

/// The glyph ids of a text run as a hex string: four bytes per glyph.
/// pdf-writer's `Str` writes ASCII-only bytes as a literal string, where
/// each two-byte id costs five bytes (`\000` for the high byte) or eight
/// (ids below 32, which a subset gives to the first glyphs used).
struct GlyphIds<'a>(&'a [u8]);

impl Primitive for GlyphIds<'_> {
    fn write(self, buf: &mut Vec<u8>) {
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        buf.reserve(2 + 2 * self.0.len());
        buf.push(b'<');
        for &b in self.0 {
            buf.push(HEX[usize::from(b >> 4)]);
            buf.push(HEX[usize::from(b & 15)]);
        }
        buf.push(b'>');
    }
}

/// `Tj` with a [`GlyphIds`] operand.
trait ShowHex {
    fn show_hex(&mut self, ids: &[u8]) -> &mut Self;
}

impl ShowHex for Content {
    fn show_hex(&mut self, ids: &[u8]) -> &mut Self {
        self.op("Tj").operand(GlyphIds(ids));
        self
    }
}

/// Canvas that appends PDF content-stream operators.
struct PdfCanvas<'a> {
    content: Content,
    glyphs: &'a mut SubsetGlyphs,
}

fn flip(y: f32) -> f32 {
    PAGE_HEIGHT - y
}

impl Canvas for PdfCanvas<'_> {
    fn polyline(&mut self, points: &[(f32, f32)], color: Rgb, width: f32) {
        let Some((first, rest)) = points.split_first() else {
            return;
        };
        let [r, g, b] = color.unit();
        self.content
            .set_stroke_rgb(r, g, b)
            .set_line_width(width)
            .move_to(first.0, flip(first.1));
        for p in rest {
            self.content.line_to(p.0, flip(p.1));
        }
        self.content.stroke();
    }

    fn rect(&mut self, x: f32, y: f32, w: f32, h: f32, fill: Rgb, stroke: Option<(Rgb, f32)>) {
        let [r, g, b] = fill.unit();
        self.content
            .set_fill_rgb(r, g, b)
            .rect(x, flip(y + h), w, h);
        match stroke {
            Some((color, width)) => {
                let [r, g, b] = color.unit();
                self.content
                    .set_stroke_rgb(r, g, b)
                    .set_line_width(width)
                    .fill_nonzero_and_stroke();
            }
            None => {
                self.content.fill_nonzero();
            }
        }
    }

    fn text(&mut self, run: &TextRun<'_>) {
        let m = metrics();
        let mut encoded = Vec::with_capacity(run.text.len() * 2);
        let mut width_milli = 0.0;
        for ch in run.text.chars() {
            let (gid, advance) = m.glyph_and_advance(ch);
            width_milli += advance;
            let id = self.glyphs.id(gid, ch);
            encoded.extend_from_slice(&id.to_be_bytes());
        }
        let width = width_milli * run.size / 1000.0;
        let shift = match run.align {
            Align::Left => 0.0,
            Align::Center => width / 2.0,
            Align::Right => width,
        };
        let matrix = if run.rotated {
            // Text running upwards: the run direction is +y in PDF space.
            [0.0, 1.0, -1.0, 0.0, run.x, flip(run.y) - shift]
        } else {
            [1.0, 0.0, 0.0, 1.0, run.x - shift, flip(run.y)]
        };
        let [r, g, b] = run.color.unit();
        self.content
            .begin_text()
            .set_fill_rgb(r, g, b)
            .set_font(FONT_RESOURCE, run.size)
            .set_text_matrix(matrix)
            .show_hex(&encoded)
            .end_text();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::text_pages;

    #[test]
    fn subset_keeps_the_used_glyphs_under_their_new_ids() {
        let m = metrics();
        let mut glyphs = SubsetGlyphs::new();
        // ü is a composite glyph in DejaVu Sans; 中 is not in the font.
        let text = "Mi{1024; 1; 1}\u{2212}∞ü中M";
        let ids: Vec<u16> = text.chars().map(|c| glyphs.id(m.glyph(c), c)).collect();
        assert_eq!(ids[0], 1, "first glyph used is glyph 1 of the subset");
        assert_eq!(ids.first(), ids.last(), "one id per glyph");
        assert_eq!(ids[ids.len() - 2], 0, "a missing character is .notdef");
        let font = glyphs.font_file().unwrap();
        assert!(font.len() < FONT_BYTES.len() / 10);
        let face = ttf_parser::Face::parse(&font, 0).unwrap();
        assert!(usize::from(face.number_of_glyphs()) >= glyphs.used.len());
        let full = ttf_parser::Face::parse(FONT_BYTES, 0).unwrap();
        for (c, id) in text.chars().zip(&ids) {
            let gid = ttf_parser::GlyphId(m.glyph(c));
            let sub = ttf_parser::GlyphId(*id);
            assert_eq!(
                face.glyph_hor_advance(sub),
                full.glyph_hor_advance(gid),
                "{c}"
            );
            assert_eq!(
                face.glyph_bounding_box(sub),
                full.glyph_bounding_box(gid),
                "outline of {c}"
            );
        }
    }

    #[test]
    fn a_document_without_text_still_completes() {
        let empty = PdfWriter::new(Vec::new()).unwrap().into_inner().unwrap();
        assert!(empty.ends_with(b"%%EOF\n"));
        let mut w = PdfWriter::new(Vec::new()).unwrap();
        w.add_page(&Page::Text(vec![String::new()])).unwrap();
        assert!(w.into_inner().unwrap().ends_with(b"%%EOF\n"));
    }

    #[test]
    fn in_memory_document_is_deterministic_and_complete() {
        let pages = text_pages("Stall report\n\u{2212}12 ∞ ünïcode\n");
        let write = || {
            let mut w = PdfWriter::new(Vec::new()).unwrap();
            for p in &pages {
                w.add_page(p).unwrap();
            }
            assert_eq!(w.pages(), 1);
            w.into_inner().unwrap()
        };
        let a = write();
        assert_eq!(a, write(), "same pages, same bytes");
        assert!(a.starts_with(b"%PDF-1.7") && a.ends_with(b"%%EOF\n"));
        let text = String::from_utf8_lossy(&a);
        assert!(text.contains("+DejaVuSans"));
        assert!(text.contains("/FontFile2"));
        assert!(a.len() < 40_000, "{} bytes", a.len());
    }
}
