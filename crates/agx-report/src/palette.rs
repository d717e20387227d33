//! The graph views' colours, one source: the heat scale of a block's fill,
//! the text colour on each fill, the loop regions' tint and label colour,
//! and the WCAG 2 contrast ratio they are chosen by (a test checks every
//! pair the HTML page can emit against AA, 4.5:1).
//!
//! WCAG 2.x relative luminance and contrast ratio:
//! <https://www.w3.org/TR/WCAG21/#dfn-relative-luminance>,
//! <https://www.w3.org/TR/WCAG21/#dfn-contrast-ratio>.

/// Heat scale ends: coldest (no cycles) and hottest block.
pub const HEAT_COLD: (u8, u8, u8) = (255, 250, 230);
pub const HEAT_HOT: (u8, u8, u8) = (222, 45, 38);
/// Text on a light / a dark fill. Of black and white one always has a
/// contrast of at least 4.58 with any colour (the crossover luminance
/// 0.179 gives 1.05 / 0.229 with both), so [`text_on`] meets AA on every
/// fill.
pub const TEXT_DARK: &str = "#000000";
pub const TEXT_LIGHT: &str = "#ffffff";
/// The graph panel's background.
pub const PANEL: &str = "#ffffff";
/// A loop region's tint (drawn at [`LOOP_OPACITY`], nested regions on top
/// of each other) and its label's colour.
pub const LOOP_TINT: &str = "#6366f1";
pub const LOOP_OPACITY: f64 = 0.07;
pub const LOOP_LABEL: &str = "#3730a3";
/// Nesting depth up to which the label contrast is checked (deeper loops
/// are darker still; the corpus nests 4 deep).
pub const MAX_CHECKED_DEPTH: u32 = 8;
/// WCAG AA for normal text.
pub const AA: f64 = 4.5;

/// Fill colour for a block with `t` (0..1) of the hottest block's cycles:
/// pale yellow to red. Shared by the HTML and Graphviz views.
pub fn heat_color(t: f64) -> String {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let lerp = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * t).round() as u8;
    hex((
        lerp(HEAT_COLD.0, HEAT_HOT.0),
        lerp(HEAT_COLD.1, HEAT_HOT.1),
        lerp(HEAT_COLD.2, HEAT_HOT.2),
    ))
}

/// The text colour for `fill` (`#rrggbb`): black or white, whichever
/// contrasts more.
pub fn text_on(fill: &str) -> &'static str {
    if contrast(fill, TEXT_DARK) >= contrast(fill, TEXT_LIGHT) {
        TEXT_DARK
    } else {
        TEXT_LIGHT
    }
}

/// A loop region's background at nesting `depth` (1 = outermost): the
/// tint composited `depth` times over the panel.
pub fn loop_background(depth: u32) -> String {
    let (mut c, t) = (rgb(PANEL), rgb(LOOP_TINT));
    for _ in 0..depth {
        c = (
            c.0 + (t.0 - c.0) * LOOP_OPACITY,
            c.1 + (t.1 - c.1) * LOOP_OPACITY,
            c.2 + (t.2 - c.2) * LOOP_OPACITY,
        );
    }
    hex((c.0.round() as u8, c.1.round() as u8, c.2.round() as u8))
}

fn hex(c: (u8, u8, u8)) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// `#rrggbb` as 0..255 channels (anything else: black).
fn rgb(s: &str) -> (f64, f64, f64) {
    let v = u32::from_str_radix(s.trim_start_matches('#'), 16).unwrap_or(0);
    (
        ((v >> 16) & 0xff) as f64,
        ((v >> 8) & 0xff) as f64,
        (v & 0xff) as f64,
    )
}

/// WCAG relative luminance of `#rrggbb`.
pub fn luminance(s: &str) -> f64 {
    let lin = |c: f64| {
        let c = c / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let (r, g, b) = rgb(s);
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

/// WCAG contrast ratio of two `#rrggbb` colours (1..21).
pub fn contrast(a: &str, b: &str) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// Every (text, background, what) pair the graph can draw: block text on
/// every heat fill (the fill is rounded to whole channels, so 1,001 steps
/// reach every one), loop labels on every nesting depth's region.
pub fn graph_pairs() -> Vec<(String, String, String)> {
    let mut v: Vec<(String, String, String)> = (0..=1000)
        .map(|i| {
            let fill = heat_color(i as f64 / 1000.0);
            (
                text_on(&fill).to_string(),
                fill,
                format!("block at heat {i}/1000"),
            )
        })
        .collect();
    for d in 1..=MAX_CHECKED_DEPTH {
        v.push((
            LOOP_LABEL.to_string(),
            loop_background(d),
            format!("loop label at depth {d}"),
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wcag_formula_matches_known_ratios() {
        // black on white is 21:1; #767676 on white is the AA threshold
        assert!((contrast("#000000", "#ffffff") - 21.0).abs() < 1e-9);
        assert!((contrast("#767676", "#ffffff") - 4.54).abs() < 0.01);
        assert!((luminance("#ffffff") - 1.0).abs() < 1e-12);
    }

    #[test]
    fn every_graph_colour_pair_meets_wcag_aa() {
        let pairs = graph_pairs();
        assert!(pairs.len() > 1000);
        for (fg, bg, what) in &pairs {
            let c = contrast(fg, bg);
            assert!(c >= AA, "{what}: {fg} on {bg} is {c:.2}:1");
        }
        // the old fixed dark text fails on the hot end: the check bites
        let hot = heat_color(1.0);
        assert!(contrast("#111111", &hot) < AA);
        assert_eq!(text_on(&hot), TEXT_LIGHT);
        assert_eq!(text_on(&heat_color(0.0)), TEXT_DARK);
    }

    #[test]
    fn heat_color_ends() {
        assert_eq!(heat_color(0.0), "#fffae6");
        assert_eq!(heat_color(1.0), "#de2d26");
        assert_eq!(heat_color(f64::NAN), "#fffae6");
    }

    #[test]
    fn nested_regions_darken() {
        assert_eq!(loop_background(0), PANEL);
        assert!(luminance(&loop_background(2)) < luminance(&loop_background(1)));
    }
}
