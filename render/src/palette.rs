//! The one set of colours of every chart: matplotlib's tab10 cycle (what
//! the original analyze script's charts use, docs/compatibility.md#analyze-pages)
//! for series, and the greys of grid lines and frames.

/// An RGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    pub const BLACK: Rgb = Rgb(0, 0, 0);
    pub const WHITE: Rgb = Rgb(255, 255, 255);

    /// `#rrggbb`, as SVG, HTML and CSS take it.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// Components in 0..=1, as PDF operators take them.
    pub fn unit(self) -> [f32; 3] {
        [
            self.0 as f32 / 255.0,
            self.1 as f32 / 255.0,
            self.2 as f32 / 255.0,
        ]
    }
}

/// matplotlib's tab10 colours, in cycle order.
pub const TAB10: [Rgb; 10] = [
    Rgb(0x1f, 0x77, 0xb4),
    Rgb(0xff, 0x7f, 0x0e),
    Rgb(0x2c, 0xa0, 0x2c),
    Rgb(0xd6, 0x27, 0x28),
    Rgb(0x94, 0x67, 0xbd),
    Rgb(0x8c, 0x56, 0x4b),
    Rgb(0xe3, 0x77, 0xc2),
    Rgb(0x7f, 0x7f, 0x7f),
    Rgb(0xbc, 0xbd, 0x22),
    Rgb(0x17, 0xbe, 0xcf),
];

/// Grid lines.
pub const GRID: Rgb = Rgb(0xb0, 0xb0, 0xb0);
/// Legend frames.
pub const LEGEND_EDGE: Rgb = Rgb(0xcc, 0xcc, 0xcc);
/// Faint grid lines of charts with many (logarithmic) grid lines.
pub const FAINT_GRID: Rgb = Rgb(0xe3, 0xe3, 0xe3);
/// Secondary text (tick labels, notes).
pub const SECONDARY_TEXT: Rgb = Rgb(0x33, 0x33, 0x33);
/// Axes frames drawn in grey.
pub const FRAME: Rgb = Rgb(0x55, 0x55, 0x55);
/// Highlight of a value that needs a look (e.g. a point above its roof).
pub const WARNING: Rgb = Rgb(0xe0, 0x80, 0x00);

/// Steps of [`sequential`]: neighbours of one step draw as one rectangle.
pub const SEQUENTIAL_STEPS: u32 = 32;

/// A sequential scale from white (0) to the darkest blue (1), in
/// [`SEQUENTIAL_STEPS`] steps: heatmaps. Returns the step and its colour.
pub fn sequential(u: f64) -> (u32, Rgb) {
    let top = SEQUENTIAL_STEPS - 1;
    let level = (u.clamp(0.0, 1.0) * top as f64).round() as u32;
    let t = level as f64 / top as f64;
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    (
        level,
        Rgb(lerp(247.0, 8.0), lerp(251.0, 48.0), lerp(255.0, 107.0)),
    )
}

/// Colour of series `i` (tab10, cycling).
pub fn series_color(i: usize) -> Rgb {
    TAB10[i % TAB10.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_cycle_and_spell_as_hex() {
        assert_eq!(series_color(0).hex(), "#1f77b4");
        assert_eq!(series_color(10), series_color(0));
        assert_eq!(Rgb::WHITE.unit(), [1.0, 1.0, 1.0]);
    }
}
