//! The drawing primitives every writer implements: the layout draws on a
//! [`Canvas`], writers turn the calls into PDF operators or SVG elements.
//! A new output format is one more `Canvas` implementation.

use crate::palette::Rgb;

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
    /// width measured with [`crate::font::text_width`].
    fn text(&mut self, run: &TextRun<'_>);
}
