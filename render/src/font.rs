//! The one font of all charts: DejaVu Sans (Bitstream Vera licence, see
//! `render/fonts/LICENSE-DejaVu.txt`), the font matplotlib uses by default,
//! compiled into the binary so PDFs embed it and layout needs no system
//! fonts. Widths come from the font's own tables (ttf-parser).

use std::sync::OnceLock;

/// The TrueType file as shipped under `render/fonts/`.
pub static FONT_BYTES: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// PostScript name of the embedded font.
pub const FONT_NAME: &str = "DejaVuSans";

/// Metrics of the embedded font, read once.
pub struct FontMetrics {
    face: ttf_parser::Face<'static>,
    units_per_em: f32,
    /// Glyph ids and advances (1/1000 em) of the first [`CACHED_CHARS`]
    /// code points: layout measures the same few characters millions of
    /// times on large runs.
    cache: Vec<(u16, f32)>,
}

const CACHED_CHARS: u32 = 0x500;

/// The shipped font; it is part of the binary, so failing to parse it is a
/// build defect, caught by the tests of this module.
pub fn metrics() -> &'static FontMetrics {
    static METRICS: OnceLock<FontMetrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let face = ttf_parser::Face::parse(FONT_BYTES, 0)
            .expect("the DejaVu Sans file compiled into unitrace-render is a valid TrueType font");
        let units_per_em = f32::from(face.units_per_em());
        let mut m = FontMetrics {
            face,
            units_per_em,
            cache: Vec::new(),
        };
        m.cache = (0..CACHED_CHARS)
            .map(|c| {
                let gid = char::from_u32(c).map_or(0, |c| m.lookup(c));
                (gid, m.advance_milli(gid))
            })
            .collect();
        m
    })
}

impl FontMetrics {
    /// Glyph id of `c` (0, the .notdef box, when the font lacks it).
    pub fn glyph(&self, c: char) -> u16 {
        match self.cache.get(c as usize) {
            Some(&(gid, _)) => gid,
            None => self.lookup(c),
        }
    }

    fn lookup(&self, c: char) -> u16 {
        self.face.glyph_index(c).map(|g| g.0).unwrap_or(0)
    }

    /// Glyph id and advance (1/1000 em) of `c`.
    pub fn glyph_and_advance(&self, c: char) -> (u16, f32) {
        match self.cache.get(c as usize) {
            Some(&entry) => entry,
            None => {
                let gid = self.lookup(c);
                (gid, self.advance_milli(gid))
            }
        }
    }

    /// Number of glyphs in the font.
    pub fn glyph_count(&self) -> u16 {
        self.face.number_of_glyphs()
    }

    /// Advance width of a glyph in 1/1000 em (PDF glyph space).
    pub fn advance_milli(&self, gid: u16) -> f32 {
        let adv = self
            .face
            .glyph_hor_advance(ttf_parser::GlyphId(gid))
            .unwrap_or(0);
        f32::from(adv) * 1000.0 / self.units_per_em
    }

    /// Width of `text` set at `size` points.
    pub fn text_width(&self, text: &str, size: f32) -> f32 {
        let milli: f32 = text.chars().map(|c| self.glyph_and_advance(c).1).sum();
        milli * size / 1000.0
    }

    /// Ascender, descender (negative) and bounding box in 1/1000 em.
    pub fn vertical_milli(&self) -> (f32, f32, [f32; 4]) {
        let s = 1000.0 / self.units_per_em;
        let bb = self.face.global_bounding_box();
        (
            f32::from(self.face.ascender()) * s,
            f32::from(self.face.descender()) * s,
            [
                f32::from(bb.x_min) * s,
                f32::from(bb.y_min) * s,
                f32::from(bb.x_max) * s,
                f32::from(bb.y_max) * s,
            ],
        )
    }
}

/// Width of `text` at `size` points in the embedded font.
pub fn text_width(text: &str, size: f32) -> f32 {
    metrics().text_width(text, size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn font_parses_and_measures() {
        let m = metrics();
        assert_ne!(m.glyph('A'), 0);
        assert_ne!(m.glyph('{'), 0);
        // DejaVu Sans: "M" is wider than "i"; widths scale with size.
        assert!(text_width("M", 10.0) > text_width("i", 10.0));
        let w = text_width("abc", 10.0);
        assert!((text_width("abc", 20.0) - 2.0 * w).abs() < 1e-3);
        assert!(w > 10.0 && w < 30.0);
    }
}
