//! The screen as cells ([`crate::protocol::screen`]), and what changed in it
//! since a client was last sent it: the one emulator of a run feeds every
//! screen that shows the run this way.

use crate::protocol::screen::{self, Cell, Glyph, Modes, Row, ScreenUpdate, mode};

use super::Terminal;
use super::grid::Width;

/// One update carries at most this much (rows and scrolled lines; the rest
/// go in the next): under the 1 MiB frame cap with room for the header.
const UPDATE_BUDGET: usize = 768 * 1024;
/// Rows scrolled off that one update carries at most; a flood scrolls more
/// between two frames than anyone reads, and those are in the log.
const SCROLLED_MAX: usize = 2000;

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
        _ if cell.marks() => row.cluster(col).map_or(Glyph::Blank, screen::glyph_of),
        ('\0' | ' ', _) => Glyph::Blank,
        (c, _) if c.is_ascii_graphic() => Glyph::Ascii(c as u8),
        (c, _) => screen::glyph_of(c.encode_utf8(&mut [0; 4])),
    };
    Cell {
        glyph,
        style: cell.style,
        wide: cell.width == Width::Wide,
    }
}

/// A change too large to send at once (`ScreenWatch::next_small`).
#[derive(Debug, PartialEq, Eq)]
pub struct TooLarge;

/// What one screen subscription was last sent, to send it only what
/// changed since.
#[derive(Debug, Default)]
pub struct ScreenWatch {
    sent: Vec<Row>,
    size: (u16, u16),
    cursor: (u16, u16),
    modes: Modes,
    title: String,
    /// `Terminal::scrolled_lines` when last sent; `None` before the first.
    scrolled: Option<u64>,
    seq: u64,
    /// The last update left changed rows out (its budget was spent): ask
    /// for the next at once.
    pub more: bool,
    /// Reused for each row read from the screen.
    row: Row,
    /// Reused to measure a row's encoding.
    scratch: Vec<u8>,
}

impl ScreenWatch {
    pub fn new() -> ScreenWatch {
        ScreenWatch::default()
    }

    /// The step from what was last sent to `term`'s screen, standing for
    /// the log up to `offset`; `None` when nothing changed. The first, and
    /// the first after a resize, is full. Rows that would not fit one
    /// update's budget are left for the next (`more`).
    pub fn next(&mut self, term: &Terminal, offset: u64) -> Option<ScreenUpdate> {
        self.step(term, offset, None).unwrap_or_default()
    }

    /// As [`Self::next`], only if what changed is small: at most
    /// `max_rows` rows, nothing scrolled off, the same size (an echo, a
    /// spinner's frame, a status line: such a change may go out at once,
    /// a larger one waits for its frame). Otherwise `Err(TooLarge)`, and
    /// nothing is taken.
    pub fn next_small(
        &mut self,
        term: &Terminal,
        offset: u64,
        max_rows: usize,
    ) -> Result<Option<ScreenUpdate>, TooLarge> {
        self.step(term, offset, Some(max_rows))
    }

    fn step(&mut self, term: &Terminal, offset: u64, small: Option<usize>) -> Result<Option<ScreenUpdate>, TooLarge> {
        let size = term.size();
        let full = self.scrolled.is_none() || size != self.size;
        if small.is_some() && (full || self.scrolled != Some(term.scrolled_lines())) {
            return Err(TooLarge);
        }
        if full {
            self.sent = vec![Vec::new(); size.0 as usize];
            self.size = size;
            // A full update's rows replace a blank screen: blank rows need
            // not be sent.
            for row in &mut self.sent {
                row.resize(size.1 as usize, Cell::default());
            }
        }
        let mut budget = UPDATE_BUDGET;
        let mut more = false;
        let mut lines: Vec<(u16, Row)> = Vec::new();
        for index in 0..size.0 {
            term.row_cells(index, &mut self.row);
            if self.sent[index as usize] == self.row {
                continue;
            }
            if small.is_some_and(|max| lines.len() >= max) {
                return Err(TooLarge);
            }
            self.scratch.clear();
            screen::encode_row(&mut self.scratch, &self.row);
            if self.scratch.len() + 2 > budget && !lines.is_empty() {
                more = true;
                break;
            }
            budget = budget.saturating_sub(self.scratch.len() + 2);
            lines.push((index, self.row.clone()));
        }
        self.more = more;
        for (index, row) in &lines {
            self.sent[*index as usize].clone_from(row);
        }
        let (scrolled, dropped) = self.scrolled_rows(term, &mut budget);
        let (cursor, modes) = (term.cursor(), term.modes());
        let title = (full || self.title != term.title()).then(|| term.title().to_string());
        if let Some(t) = &title {
            self.title.clone_from(t);
        }
        let title = title.map(|t| screen::printable(&t).into_owned());
        let changed = full
            || !lines.is_empty()
            || !scrolled.is_empty()
            || dropped > 0
            || cursor != self.cursor
            || modes != self.modes
            || title.is_some();
        if !changed {
            return Ok(None);
        }
        self.cursor = cursor;
        self.modes = modes;
        self.seq += 1;
        Ok(Some(ScreenUpdate {
            seq: self.seq,
            offset,
            rows: size.0,
            cols: size.1,
            cursor,
            modes,
            title,
            full,
            lines,
            scrolled,
            dropped,
        }))
    }

    /// The rows scrolled off since the last update, within `budget`, and
    /// how many more scrolled that are not sent.
    fn scrolled_rows(&mut self, term: &Terminal, budget: &mut usize) -> (Vec<String>, u64) {
        let now = term.scrolled_lines();
        let Some(since) = self.scrolled.replace(now) else {
            // The first update: what scrolled before it is the log's to tell.
            return (Vec::new(), 0);
        };
        // The newest rows matter most: a gap goes before them.
        let mut rows: Vec<String> = Vec::new();
        let mut bytes = 0;
        for (_, line) in term.scrolled_since(since).rev().take(SCROLLED_MAX) {
            bytes += line.len() + 4;
            if bytes > *budget {
                break;
            }
            rows.push(screen::printable(line).into_owned());
        }
        rows.reverse();
        *budget = budget.saturating_sub(bytes);
        let dropped = now.saturating_sub(since).saturating_sub(rows.len() as u64);
        (rows, dropped)
    }
}

impl Terminal {
    /// Keeps up to `capacity` rows that scroll off the main screen (plain
    /// text) for [`ScreenWatch`] to send, reading at most `capacity` until
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
