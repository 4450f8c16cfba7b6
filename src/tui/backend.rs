//! The backend attach and the TUI draw through: crossterm's, plus the
//! underline styles (double, curly, dotted, dashed) ratatui has no
//! modifier for. A pane marks such a cell with [`underline_style`]'s
//! bits, which ratatui keeps and crossterm's backend ignores; after each
//! frame those cells are drawn again with `SGR 4:n` on a terminal known
//! to draw it, and stay single-underlined on the others (where `4:3`
//! could read as underline and italic).

use std::io::{self, Write};

use crossterm::queue;
use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::style::{Color, Modifier};

use crate::protocol::screen::Underline;

/// The bits past ratatui's own modifiers that hold the underline style.
const SHIFT: u32 = 12;
const MASK: u16 = 0b111 << SHIFT;

/// The modifier bits that mark a cell's underline style (none for single).
pub fn underline_style(style: Underline) -> Modifier {
    let n: u16 = match style {
        Underline::Single => 0,
        Underline::Double => 2,
        Underline::Curly => 3,
        Underline::Dotted => 4,
        Underline::Dashed => 5,
    };
    Modifier::from_bits_retain(n << SHIFT)
}

/// Whether the user's terminal draws `SGR 4:n`, from what it says of
/// itself: tmux (which draws them, or passes them on, since 3.0), kitty,
/// WezTerm, foot, Ghostty, Alacritty, iTerm2, VS Code's terminal and VTE
/// since 0.51.2 (GNOME Terminal and others).
pub fn terminal_draws_underline_styles() -> bool {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let term = var("TERM");
    let program = var("TERM_PROGRAM");
    std::env::var_os("TMUX").is_some()
        || std::env::var_os("KITTY_WINDOW_ID").is_some()
        || ["kitty", "wezterm", "foot", "ghostty", "alacritty", "tmux"]
            .iter()
            .any(|t| term.contains(t))
        || ["WezTerm", "iTerm.app", "ghostty", "vscode", "tmux"].contains(&program.as_str())
        || var("VTE_VERSION").parse::<u32>().is_ok_and(|v| v >= 5102)
}

pub struct StyledBackend<W: Write> {
    inner: CrosstermBackend<W>,
    styles: bool,
}

impl<W: Write> StyledBackend<W> {
    /// `styles`: draw underline styles (else single).
    pub fn new(writer: W, styles: bool) -> Self {
        StyledBackend {
            inner: CrosstermBackend::new(writer),
            styles,
        }
    }
}

/// One cell's whole SGR, from a reset: what crossterm's backend drew for
/// it, with the underline's style.
fn sgr(cell: &Cell, style: u16) -> String {
    let mut s = String::from("\x1b[0");
    for (m, n) in [
        (Modifier::BOLD, "1"),
        (Modifier::DIM, "2"),
        (Modifier::ITALIC, "3"),
        (Modifier::SLOW_BLINK, "5"),
        (Modifier::RAPID_BLINK, "6"),
        (Modifier::REVERSED, "7"),
        (Modifier::HIDDEN, "8"),
        (Modifier::CROSSED_OUT, "9"),
    ] {
        if cell.modifier.contains(m) {
            s.push(';');
            s.push_str(n);
        }
    }
    s.push_str(&format!(";4:{style}"));
    for (color, base) in [(cell.fg, 38), (cell.bg, 48), (cell.underline_color, 58)] {
        if let Some(c) = color_param(color) {
            s.push_str(&format!(";{base};{c}"));
        }
    }
    s.push('m');
    s
}

/// `5;N` or `2;R;G;B` for a colour, `None` for the default.
fn color_param(color: Color) -> Option<String> {
    let named = [
        Color::Black,
        Color::Red,
        Color::Green,
        Color::Yellow,
        Color::Blue,
        Color::Magenta,
        Color::Cyan,
        Color::Gray,
        Color::DarkGray,
        Color::LightRed,
        Color::LightGreen,
        Color::LightYellow,
        Color::LightBlue,
        Color::LightMagenta,
        Color::LightCyan,
        Color::White,
    ];
    match color {
        Color::Reset => None,
        Color::Indexed(i) => Some(format!("5;{i}")),
        Color::Rgb(r, g, b) => Some(format!("2;{r};{g};{b}")),
        other => named.iter().position(|c| *c == other).map(|i| format!("5;{i}")),
    }
}

impl<W: Write> Backend for StyledBackend<W> {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        if !self.styles {
            return self.inner.draw(content);
        }
        let cells: Vec<(u16, u16, &Cell)> = content.collect();
        self.inner.draw(cells.iter().copied())?;
        let mut any = false;
        for (x, y, cell) in cells {
            let style = (cell.modifier.bits() & MASK) >> SHIFT;
            if style == 0 || !cell.modifier.contains(Modifier::UNDERLINED) {
                continue;
            }
            any = true;
            // The backend writes through to its writer.
            queue!(self.inner, crossterm::cursor::MoveTo(x, y))?;
            write!(self.inner, "{}{}", sgr(cell, style), cell.symbol())?;
        }
        if any {
            self.inner.write_all(b"\x1b[0m")?;
        }
        Ok(())
    }

    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        self.inner.size()
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;
    use std::sync::Arc;

    /// A writer the test reads back after the backend wrote to it.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn drawn(styles: bool, cells: &[(u16, u16, &Cell)]) -> String {
        let out = Shared::default();
        let mut backend = StyledBackend::new(out.clone(), styles);
        backend.draw(cells.iter().copied()).unwrap();
        Backend::flush(&mut backend).unwrap();
        String::from_utf8(out.0.lock().clone()).unwrap()
    }

    #[test]
    fn a_curly_red_underline_is_drawn_again_with_its_style() {
        let mut cell = Cell::new("x");
        cell.fg = Color::Indexed(1);
        cell.underline_color = Color::Rgb(255, 0, 0);
        cell.modifier = Modifier::BOLD | Modifier::UNDERLINED | underline_style(Underline::Curly);
        let mut plain = Cell::new("y");
        plain.modifier = Modifier::UNDERLINED;
        let out = drawn(true, &[(3, 1, &cell), (4, 1, &plain)]);
        assert!(
            out.ends_with("\x1b[2;4H\x1b[0;1;4:3;38;5;1;58;2;255;0;0mx\x1b[0m"),
            "{out:?}"
        );
        let out = drawn(true, &[(4, 1, &plain)]);
        assert!(!out.contains("4:"), "a single underline is crossterm's: {out:?}");
        let out = drawn(false, &[(3, 1, &cell)]);
        assert!(!out.contains("4:3"), "{out:?}");
    }
}
