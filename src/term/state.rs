//! The screen as cells ([`crate::values::screen`]) for a client: what
//! the one emulator of a run shows every screen that shows the run, and
//! the rows that scrolled off it since a subscription was last sent them
//! (`protocol::screen::ScreenWatch` makes the updates).

use crate::values::screen::{Cell, Glyph, Modes, Row, glyph_of, mode};

use super::Terminal;
use super::grid::Width;

impl Terminal {
    /// Row `index` of the screen as cells.
    pub fn row_cells(&self, index: u16, out: &mut Row) {
        out.clear();
        let Some(row) = self.emu.grid().rows.get(usize::from(index)) else {
            return;
        };
        out.extend((0..row.cells.len()).map(|col| client_cell(row, col)));
    }

    /// The cell at `row`, `col`, as a client gets it.
    pub fn cell(&self, row: u16, col: u16) -> Option<Cell> {
        let row = self.emu.grid().rows.get(usize::from(row))?;
        (usize::from(col) < row.cells.len()).then(|| client_cell(row, usize::from(col)))
    }

    /// The modes a client mirrors to send the right keys.
    pub fn modes(&self) -> Modes {
        let m = &self.emu.modes;
        let mut bits = 0;
        for (on, bit) in [
            (m.app_cursor, mode::APP_CURSOR),
            (m.app_keypad, mode::APP_KEYPAD),
            (m.bracketed_paste, mode::BRACKETED_PASTE),
            (self.emu.alt_on, mode::ALT_SCREEN),
            (m.hide_cursor, mode::HIDE_CURSOR),
            (
                self.emu.keyboard.current(self.emu.alt_on) & super::keyboard::DISAMBIGUATE != 0,
                mode::KITTY_KEYBOARD,
            ),
        ] {
            if on {
                bits |= bit;
            }
        }
        Modes {
            bits,
            mouse: m.mouse,
            mouse_encoding: m.mouse_encoding,
        }
    }
}

fn client_cell(row: &super::grid::Row, col: usize) -> Cell {
    let cell = &row.cells[col];
    let glyph = match (cell.ch, cell.width) {
        (_, Width::Continuation) => Glyph::Continuation,
        _ if cell.marks() => row.cluster(col).map_or(Glyph::Blank, glyph_of),
        ('\0' | ' ', _) => Glyph::Blank,
        (c, _) if c.is_ascii_graphic() => Glyph::Ascii(c as u8),
        (c, _) => glyph_of(c.encode_utf8(&mut [0; 4])),
    };
    Cell {
        glyph,
        style: cell.style,
        wide: cell.width == Width::Wide,
    }
}

impl Terminal {
    /// Keeps up to `capacity` rows that scroll off the main screen (plain
    /// text) for `protocol::screen::ScreenWatch` to send, reading at most `capacity` until
    /// [`Terminal::refill_scrolled`]; 0 keeps none. The supervisor keeps
    /// them only while a screen subscription watches the run.
    pub fn keep_scrolled(&mut self, capacity: usize) {
        self.emu.sink.scrolled = (capacity > 0).then(|| super::hooks::Scrolled::new(capacity));
    }

    /// Lets the next `budget` rows that scroll off be kept (each update a
    /// subscription takes refills it: a frame's worth of rows).
    pub fn refill_scrolled(&mut self, budget: usize) {
        if let Some(scrolled) = &mut self.emu.sink.scrolled {
            scrolled.budget = budget;
        }
    }

    /// The rows kept that scrolled off at or after the `index`-th scroll
    /// (counted by [`Terminal::scrolled_lines`]), oldest first, each with
    /// its number.
    pub fn scrolled_since(&self, index: u64) -> impl DoubleEndedIterator<Item = &(u64, String)> {
        static EMPTY: std::collections::VecDeque<(u64, String)> = std::collections::VecDeque::new();
        let kept = match &self.emu.sink.scrolled {
            Some(s) => &s.rows,
            None => &EMPTY,
        };
        let skip = kept.partition_point(|(i, _)| *i < index);
        kept.range(skip..)
    }
}
