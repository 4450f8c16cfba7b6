//! The screen as cells ([`crate::protocol::screen`]), and what changed in it
//! since a client was last sent it: the one emulator of a run feeds every
//! screen that shows the run this way.

use crate::protocol::screen::{self, Cell, Color, Glyph, Modes, Row, ScreenUpdate, Style, flag, mode};

use super::Terminal;

/// One update carries at most this much (rows and scrolled lines; the rest
/// go in the next): under the 1 MiB frame cap with room for the header.
const UPDATE_BUDGET: usize = 768 * 1024;
/// Rows scrolled off that one update carries at most; a flood scrolls more
/// between two frames than anyone reads, and those are in the log.
const SCROLLED_MAX: usize = 2000;

impl Terminal {
    /// Row `index` of the screen as cells.
    pub fn row_cells(&self, index: u16, out: &mut Row) {
        let screen = self.screen();
        let (_, cols) = self.size();
        out.clear();
        for col in 0..cols {
            let Some(cell) = screen.cell(index, col) else {
                out.push(Cell::default());
                continue;
            };
            let glyph = if cell.is_wide_continuation() {
                Glyph::Continuation
            } else {
                screen::glyph_of(cell.contents())
            };
            let mut flags = 0;
            for (on, bit) in [
                (cell.bold(), flag::BOLD),
                (cell.dim(), flag::DIM),
                (cell.italic(), flag::ITALIC),
                (cell.underline(), flag::UNDERLINE),
                (cell.inverse(), flag::INVERSE),
            ] {
                if on {
                    flags |= bit;
                }
            }
            out.push(Cell {
                glyph,
                style: Style {
                    fg: color(cell.fgcolor()),
                    bg: color(cell.bgcolor()),
                    flags,
                },
                wide: cell.is_wide(),
            });
        }
    }

    /// The modes a client mirrors to send the right keys.
    pub fn modes(&self) -> Modes {
        let screen = self.screen();
        let mut bits = 0;
        for (on, bit) in [
            (screen.application_cursor(), mode::APP_CURSOR),
            (screen.application_keypad(), mode::APP_KEYPAD),
            (screen.bracketed_paste(), mode::BRACKETED_PASTE),
            (screen.alternate_screen(), mode::ALT_SCREEN),
            (screen.hide_cursor(), mode::HIDE_CURSOR),
        ] {
            if on {
                bits |= bit;
            }
        }
        let mouse = match screen.mouse_protocol_mode() {
            vt100::MouseProtocolMode::None => 0,
            vt100::MouseProtocolMode::Press => 1,
            vt100::MouseProtocolMode::PressRelease => 2,
            vt100::MouseProtocolMode::ButtonMotion => 3,
            vt100::MouseProtocolMode::AnyMotion => 4,
        };
        let mouse_encoding = match screen.mouse_protocol_encoding() {
            vt100::MouseProtocolEncoding::Default => 0,
            vt100::MouseProtocolEncoding::Utf8 => 1,
            vt100::MouseProtocolEncoding::Sgr => 2,
        };
        Modes {
            bits,
            mouse,
            mouse_encoding,
        }
    }
}

fn color(c: vt100::Color) -> Color {
    match c {
        vt100::Color::Default => Color::Default,
        vt100::Color::Idx(i) => Color::Idx(i),
        vt100::Color::Rgb(r, g, b) => Color::Rgb(r, g, b),
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
        let hooks = self.parser.callbacks_mut();
        hooks.scrolled = (capacity > 0).then(|| super::hooks::Scrolled::new(capacity));
    }

    /// Lets the next `budget` rows that scroll off be kept (each update a
    /// subscription takes refills it: a frame's worth of rows).
    pub fn refill_scrolled(&mut self, budget: usize) {
        if let Some(scrolled) = &mut self.parser.callbacks_mut().scrolled {
            scrolled.budget = budget;
        }
    }

    /// The rows kept that scrolled off at or after the `index`-th scroll
    /// (counted by [`Terminal::scrolled_lines`]), oldest first, each with
    /// its number.
    pub fn scrolled_since(&self, index: u64) -> impl DoubleEndedIterator<Item = &(u64, String)> {
        static EMPTY: std::collections::VecDeque<(u64, String)> = std::collections::VecDeque::new();
        let kept = match &self.parser.callbacks().scrolled {
            Some(s) => &s.rows,
            None => &EMPTY,
        };
        let skip = kept.partition_point(|(i, _)| *i < index);
        kept.range(skip..)
    }
}
