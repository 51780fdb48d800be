//! What the plot and the heat map share: the policies' colours, a text width to lay labels
//! out by, and labels shortened to a width.
//!
//! plotters draws SVG text without measuring it (the viewer's font does), so layout here uses
//! a width per character that is at least that of the common sans-serif fonts' digits and
//! lower-case letters (DejaVu Sans, the widest of them, draws a digit 0.64 em wide); the
//! pictures' test renders them with a real font and checks that no text overlaps.

use plotters::style::RGBColor;

/// One colour per run, in order (the "tab10" palette's first six).
pub(crate) const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// The colour of run `index`.
pub(crate) fn colour_of(index: usize) -> RGBColor {
    COLOURS[index % COLOURS.len()]
}

/// Width of one character in em, for layout (see the module documentation).
const EM_PER_CHAR: f64 = 0.68;

/// The SVG font size, in pixels, of plotters' font `size` (its SVG backend writes
/// `size / 1.24`).
pub(crate) fn svg_px(size: f64) -> f64 {
    size / 1.24
}

/// The width in pixels that `text` takes in plotters' font `size`, for layout.
pub(crate) fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * EM_PER_CHAR * svg_px(size)
}

/// `text`, or as much of it as fits in `width` pixels followed by `…`; `None` when not even
/// one character and the ellipsis fit.
pub(crate) fn fitted(text: &str, size: f64, width: f64) -> Option<String> {
    if text_width(text, size) <= width {
        return Some(text.to_string());
    }
    let room = (width / (EM_PER_CHAR * svg_px(size))).floor() as usize;
    if room < 2 {
        return None;
    }
    Some(text.chars().take(room - 1).chain(['…']).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_shortened_to_its_width() {
        let one = text_width("x", 14.0);
        assert_eq!(fitted("vision", 14.0, one * 6.0).as_deref(), Some("vision"));
        assert_eq!(fitted("vision", 14.0, one * 4.5).as_deref(), Some("vis…"));
        assert_eq!(fitted("vision", 14.0, one * 1.5), None);
        assert_eq!(text_width("10630", 14.0), 5.0 * one);
    }
}
