//! Draws a run's emulated screen into a ratatui buffer. The user's terminal
//! only ever sees what ratatui writes for these cells: an agent's own escape
//! sequences never pass through (docs/design.md §6).

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

use crate::protocol::screen::{self, Glyph, ScreenMirror, flag, mode};

pub struct PaneView<'a> {
    pub screen: &'a ScreenMirror,
    /// Honour `NO_COLOR`: draw attributes but no colours.
    pub no_color: bool,
}

impl PaneView<'_> {
    /// Where the cursor should show, if the program shows it and it is inside `area`.
    pub fn cursor(&self, area: Rect) -> Option<Position> {
        if self.screen.modes.has(mode::HIDE_CURSOR) {
            return None;
        }
        let (row, col) = self.screen.cursor;
        (row < area.height && col < area.width).then(|| Position::new(area.x + col, area.y + row))
    }
}

fn color(c: screen::Color) -> Color {
    match c {
        screen::Color::Default => Color::Reset,
        screen::Color::Idx(i) => Color::Indexed(i),
        screen::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

fn modifiers(flags: u8) -> Modifier {
    let mut m = Modifier::empty();
    for (bit, modifier) in [
        (flag::BOLD, Modifier::BOLD),
        (flag::DIM, Modifier::DIM),
        (flag::ITALIC, Modifier::ITALIC),
        (flag::UNDERLINE, Modifier::UNDERLINED),
        (flag::INVERSE, Modifier::REVERSED),
        (flag::STRIKE, Modifier::CROSSED_OUT),
        (flag::HIDDEN, Modifier::HIDDEN),
        (flag::BLINK, Modifier::SLOW_BLINK),
    ] {
        if flags & bit != 0 {
            m |= modifier;
        }
    }
    m
}

impl Widget for PaneView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let rows = self.screen.rows.min(area.height);
        let cols = self.screen.cols.min(area.width);
        for row in 0..rows {
            for col in 0..cols {
                let Some(cell) = self.screen.cell(row, col) else {
                    continue;
                };
                let Some(out) = buf.cell_mut((area.x + col, area.y + row)) else {
                    continue;
                };
                if cell.glyph == Glyph::Continuation {
                    // The wide character to the left covers this cell.
                    out.set_diff_option(ratatui::buffer::CellDiffOption::Skip);
                    continue;
                }
                let mut style = Style::default();
                if !self.no_color {
                    style = style.fg(color(cell.style.fg)).bg(color(cell.style.bg));
                    // Drawn by terminals that know `SGR 58` (the rest
                    // ignore it).
                    if cell.style.underline_color != screen::Color::Default {
                        style = style.underline_color(color(cell.style.underline_color));
                    }
                }
                style = style.add_modifier(modifiers(cell.style.flags));
                if cell.style.flags & flag::UNDERLINE != 0 {
                    // ratatui has no modifier for it: `backend.rs` draws it.
                    style = style.add_modifier(super::backend::underline_style(cell.style.underline));
                }
                let text = cell.text();
                out.set_symbol(if text.is_empty() { " " } else { text });
                out.set_style(style);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::screen::{Cell, ScreenUpdate, Style, glyph_of};

    #[test]
    fn cells_are_drawn_with_their_colours_and_wide_characters_once() {
        let red = Style {
            fg: screen::Color::Idx(1),
            ..Style::default()
        };
        let mut row: Vec<Cell> = "red 界"
            .chars()
            .map(|c| Cell {
                glyph: glyph_of(&c.to_string()),
                style: if c == ' ' { Style::default() } else { red },
                wide: c == '界',
            })
            .collect();
        row.insert(
            5,
            Cell {
                glyph: Glyph::Continuation,
                ..Cell::default()
            },
        );
        let mut mirror = ScreenMirror::new(3, 10, 0);
        mirror
            .apply(ScreenUpdate {
                rows: 3,
                cols: 10,
                full: true,
                lines: vec![(0, row)],
                ..ScreenUpdate::default()
            })
            .unwrap();
        let area = Rect::new(0, 0, 10, 3);
        let mut buf = Buffer::empty(area);
        PaneView {
            screen: &mirror,
            no_color: false,
        }
        .render(area, &mut buf);
        let line: String = (0..10).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert_eq!(line.trim_end(), "red 界");
        assert_eq!(buf[(0, 0)].fg, Color::Indexed(1));
        assert_eq!(buf[(3, 0)].fg, Color::Reset);
    }

    #[test]
    fn strike_hidden_blink_and_underline_colour_reach_the_buffer() {
        let style = Style {
            flags: flag::STRIKE | flag::HIDDEN | flag::BLINK | flag::UNDERLINE,
            underline: screen::Underline::Curly,
            underline_color: screen::Color::Rgb(1, 2, 3),
            ..Style::default()
        };
        let row = vec![Cell {
            glyph: glyph_of("x"),
            style,
            wide: false,
        }];
        let mut mirror = ScreenMirror::new(1, 1, 0);
        mirror
            .apply(ScreenUpdate {
                rows: 1,
                cols: 1,
                full: true,
                lines: vec![(0, row)],
                ..ScreenUpdate::default()
            })
            .unwrap();
        let area = Rect::new(0, 0, 1, 1);
        for no_color in [false, true] {
            let mut buf = Buffer::empty(area);
            PaneView {
                screen: &mirror,
                no_color,
            }
            .render(area, &mut buf);
            let cell = &buf[(0, 0)];
            let want = Modifier::CROSSED_OUT
                | Modifier::HIDDEN
                | Modifier::SLOW_BLINK
                | Modifier::UNDERLINED
                | crate::tui::backend::underline_style(screen::Underline::Curly);
            assert_eq!(cell.modifier, want);
            let colour = if no_color { Color::Reset } else { Color::Rgb(1, 2, 3) };
            assert_eq!(cell.underline_color, colour);
        }
    }
}
