//! A run's screen as the page draws it: rows of runs of text that share a
//! style, each style named once per message with its colours as CSS. What
//! the page gets is the emulator's cells — text set with `textContent`,
//! never bytes of the agent's and never markup.

use serde_json::{Value, json};

use crate::protocol::screen::{Cell, Color, Glyph, ScreenMirror, Style, flag, mode};

/// The screen's rows `which` (all of them with `None`) as a `screen`
/// message of version `version`: size, cursor, title, the rows, and the
/// styles they name by index (0 is the terminal's default).
pub fn message(mirror: &ScreenMirror, which: Option<&[u16]>, version: u64, ended: bool) -> Value {
    let mut styles = Styles::default();
    let all: Vec<u16>;
    let which = match which {
        Some(rows) => rows,
        None => {
            all = (0..mirror.rows).collect();
            &all
        }
    };
    let lines: Vec<Value> = which
        .iter()
        .filter(|&&row| row < mirror.rows)
        .map(|&row| json!([row, runs(mirror, row, &mut styles)]))
        .collect();
    json!({ "screen": {
        "version": version,
        "full": which.len() == usize::from(mirror.rows),
        "rows": mirror.rows,
        "cols": mirror.cols,
        "cursor": [mirror.cursor.0, mirror.cursor.1],
        "cursor_shown": !mirror.modes.has(mode::HIDE_CURSOR),
        // What a focused terminal view needs to type as a terminal would.
        "app_cursor": mirror.modes.has(mode::APP_CURSOR),
        "bracketed_paste": mirror.modes.has(mode::BRACKETED_PASTE),
        "title": crate::text::inert(&mirror.title),
        "lines": lines,
        "styles": styles.list,
        "ended": ended,
    }})
}

/// A row as `[text, style]` pairs, its trailing default blanks left out.
fn runs(mirror: &ScreenMirror, row: u16, styles: &mut Styles) -> Vec<Value> {
    let cells: Vec<&Cell> = (0..mirror.cols).filter_map(|col| mirror.cell(row, col)).collect();
    let kept = cells
        .iter()
        .rposition(|c| c.glyph != Glyph::Blank || c.style.bg != Color::Default || c.style.flags & flag::INVERSE != 0)
        .map_or(0, |last| last + 1);
    let mut out = Vec::new();
    let mut text = String::new();
    let mut style = None;
    for cell in &cells[..kept] {
        if cell.glyph == Glyph::Continuation {
            continue;
        }
        if style != Some(cell.style) {
            if let Some(s) = style {
                out.push(json!([std::mem::take(&mut text), styles.index(s)]));
            }
            style = Some(cell.style);
        }
        text.push_str(match cell.glyph {
            Glyph::Blank => " ",
            _ => cell.text(),
        });
    }
    if let Some(s) = style {
        out.push(json!([text, styles.index(s)]));
    }
    out
}

/// The styles one message names, in the order first met (a screen has a
/// handful: a scan finds one sooner than a hash would).
#[derive(Default)]
struct Styles {
    seen: Vec<Style>,
    list: Vec<Value>,
}

impl Styles {
    fn index(&mut self, style: Style) -> usize {
        if self.seen.is_empty() {
            self.seen.push(Style::default());
            self.list.push(described(Style::default()));
        }
        if let Some(known) = self.seen.iter().position(|s| *s == style) {
            return known;
        }
        self.seen.push(style);
        self.list.push(described(style));
        self.seen.len() - 1
    }
}

/// A style as the page applies it: colours as CSS (`null`: the page's
/// own), and its attributes by name.
fn described(style: Style) -> Value {
    let has = |bit| style.flags & bit != 0;
    json!({
        "fg": css(style.fg),
        "bg": css(style.bg),
        "bold": has(flag::BOLD),
        "dim": has(flag::DIM),
        "italic": has(flag::ITALIC),
        "underline": has(flag::UNDERLINE),
        "inverse": has(flag::INVERSE),
        "strike": has(flag::STRIKE),
        "hidden": has(flag::HIDDEN),
    })
}

/// A colour as CSS: the 16 named ones as xterm draws them, the 6×6×6
/// cube and the grey ramp of the 256, and true colour as it is.
pub fn css(color: Color) -> Option<String> {
    let (r, g, b) = match color {
        Color::Default => return None,
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Idx(i) => indexed(i),
    };
    Some(format!("#{r:02x}{g:02x}{b:02x}"))
}

fn indexed(i: u8) -> (u8, u8, u8) {
    const SIXTEEN: [(u8, u8, u8); 16] = [
        (0x00, 0x00, 0x00),
        (0xcd, 0x00, 0x00),
        (0x00, 0xcd, 0x00),
        (0xcd, 0xcd, 0x00),
        (0x00, 0x00, 0xee),
        (0xcd, 0x00, 0xcd),
        (0x00, 0xcd, 0xcd),
        (0xe5, 0xe5, 0xe5),
        (0x7f, 0x7f, 0x7f),
        (0xff, 0x00, 0x00),
        (0x00, 0xff, 0x00),
        (0xff, 0xff, 0x00),
        (0x5c, 0x5c, 0xff),
        (0xff, 0x00, 0xff),
        (0x00, 0xff, 0xff),
        (0xff, 0xff, 0xff),
    ];
    match i {
        0..16 => SIXTEEN[usize::from(i)],
        16..232 => {
            let n = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            (level(n / 36), level(n / 6 % 6), level(n % 6))
        }
        _ => {
            let grey = 8 + 10 * (i - 232);
            (grey, grey, grey)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::screen::ScreenWatch;

    fn mirror_of(bytes: &[u8]) -> ScreenMirror {
        let mut term = crate::term::Terminal::new(3, 20);
        term.feed(bytes);
        let mut mirror = ScreenMirror::new(3, 20, 0);
        let full = ScreenWatch::new().next(&term, 0).expect("a first update");
        mirror.apply(full).unwrap();
        mirror
    }

    #[test]
    fn a_row_is_runs_of_text_with_their_styles_and_no_trailing_blanks() {
        let mirror = mirror_of(b"a \x1b[1;31mred\x1b[0m <b>\r\n\x1b[44m  \x1b[0m");
        let shown = message(&mirror, None, 7, false);
        let screen = &shown["screen"];
        assert_eq!(screen["version"], 7);
        assert_eq!(screen["full"], true);
        assert_eq!(screen["lines"][0], json!([0, [["a ", 0], ["red", 1], [" <b>", 0]]]));
        assert_eq!(screen["styles"][1]["fg"], "#cd0000");
        assert_eq!(screen["styles"][1]["bold"], true);
        // A coloured blank is kept: it is drawn.
        assert_eq!(screen["lines"][1], json!([1, [["  ", 2]]]));
        assert_eq!(screen["styles"][2]["bg"], "#0000ee");
        assert_eq!(screen["lines"][2], json!([2, []]));
        assert_eq!(screen["cursor"], json!([1, 2]));
    }

    #[test]
    fn the_256_colours_and_true_colour_are_css() {
        assert_eq!(css(Color::Default), None);
        assert_eq!(css(Color::Idx(16)).as_deref(), Some("#000000"));
        assert_eq!(css(Color::Idx(196)).as_deref(), Some("#ff0000"));
        assert_eq!(css(Color::Idx(231)).as_deref(), Some("#ffffff"));
        assert_eq!(css(Color::Idx(232)).as_deref(), Some("#080808"));
        assert_eq!(css(Color::Idx(255)).as_deref(), Some("#eeeeee"));
        assert_eq!(css(Color::Rgb(1, 2, 255)).as_deref(), Some("#0102ff"));
    }
}
