//! Draws a run's emulated screen into a ratatui buffer. The user's terminal
//! only ever sees what ratatui writes for these cells: an agent's own escape
//! sequences never pass through (DESIGN §6).

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::widgets::Widget;

pub struct PaneView<'a> {
    pub screen: &'a vt100::Screen,
    /// Honour `NO_COLOR`: draw attributes but no colours.
    pub no_color: bool,
}

impl PaneView<'_> {
    /// Where the cursor should show, if the program shows it and it is inside `area`.
    pub fn cursor(&self, area: Rect) -> Option<Position> {
        if self.screen.hide_cursor() {
            return None;
        }
        let (row, col) = self.screen.cursor_position();
        (row < area.height && col < area.width).then(|| Position::new(area.x + col, area.y + row))
    }
}

fn color(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Reset,
        vt100::Color::Idx(i) => Color::Indexed(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
    }
}

impl Widget for PaneView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let (rows, cols) = self.screen.size();
        let (rows, cols) = (rows.get().min(area.height), cols.get().min(area.width));
        for row in 0..rows {
            for col in 0..cols {
                let Some(cell) = self.screen.cell(row, col) else {
                    continue;
                };
                let Some(out) = buf.cell_mut((area.x + col, area.y + row)) else {
                    continue;
                };
                if cell.is_wide_continuation() {
                    // The wide character to the left covers this cell.
                    out.set_diff_option(ratatui::buffer::CellDiffOption::Skip);
                    continue;
                }
                let mut style = Style::default();
                if !self.no_color {
                    style = style.fg(color(cell.fgcolor())).bg(color(cell.bgcolor()));
                }
                let mut m = Modifier::empty();
                if cell.bold() {
                    m |= Modifier::BOLD;
                }
                if cell.dim() {
                    m |= Modifier::DIM;
                }
                if cell.italic() {
                    m |= Modifier::ITALIC;
                }
                if cell.underline() {
                    m |= Modifier::UNDERLINED;
                }
                if cell.inverse() {
                    m |= Modifier::REVERSED;
                }
                style = style.add_modifier(m);
                let text = cell.contents();
                out.set_symbol(if text.is_empty() { " " } else { text });
                out.set_style(style);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_cells_not_bytes() {
        let mut parser = vt100::Parser::new(
            std::num::NonZeroU16::new(3).unwrap(),
            std::num::NonZeroU16::new(10).unwrap(),
            0,
        );
        parser.process(b"\x1b[31mred\x1b[0m \x1b]52;c;aGk=\x07ok");
        let area = Rect::new(0, 0, 10, 3);
        let mut buf = Buffer::empty(area);
        PaneView {
            screen: parser.screen(),
            no_color: false,
        }
        .render(area, &mut buf);
        let line: String = (0..10).map(|x| buf[(x, 0)].symbol().to_string()).collect();
        assert_eq!(line.trim_end(), "red ok");
        assert_eq!(buf[(0, 0)].fg, Color::Indexed(1));
        for x in 0..10 {
            assert!(!buf[(x, 0)].symbol().contains('\x1b'));
        }
    }
}
