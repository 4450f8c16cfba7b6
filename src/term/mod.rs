//! Terminal emulation: bytes in, screen out (docs/design.md §6).
//!
//! [`Terminal`] wraps `vt100` and adds what it lacks: answers to terminal
//! queries (`queries.rs`), the DEC line-drawing charset (`charset.rs`), the
//! title, a bell count and a count of rows scrolled away (`hooks.rs`). It
//! keeps no scrollback: history is re-rendered from the output log on demand
//! with [`render_history`] (`history.rs`). No I/O happens here.

mod charset;
mod follow;
mod history;
mod hooks;
mod queries;
mod state;
mod utf8;

use std::num::NonZeroU16;

pub use follow::LineFollower;
pub use history::render_history;
pub use state::ScreenWatch;

use charset::DecGraphics;
use hooks::{History, Hooks};
use utf8::WholeChars;

/// One run's terminal screen.
pub struct Terminal {
    parser: vt100::Parser<Hooks>,
    graphics: DecGraphics,
    /// Reused buffer for chunks that needed line-drawing translation.
    translated: Vec<u8>,
    /// A UTF-8 character cut at the end of the last chunk (`utf8.rs`).
    whole: WholeChars,
}

impl Terminal {
    /// A blank `rows` × `cols` screen; a zero dimension becomes 1.
    pub fn new(rows: u16, cols: u16) -> Self {
        Self::with_hooks(rows, cols, Hooks::default())
    }

    /// A terminal that also keeps the last `max_lines` rows scrolled off the
    /// main screen (plain text), for [`render_history`] and for a client's
    /// own scrollback (the TUI's panes). The supervisor never uses this.
    pub fn with_history(rows: u16, cols: u16, max_lines: usize) -> Self {
        let hooks = Hooks {
            history: Some(History::new(max_lines)),
            ..Hooks::default()
        };
        Self::with_hooks(rows, cols, hooks)
    }

    fn with_hooks(rows: u16, cols: u16, hooks: Hooks) -> Self {
        let (rows, cols) = (non_zero(rows), non_zero(cols));
        // Scrollback capacity 0: rows that leave the screen are dropped (after
        // `on_scroll` has seen them); docs/design.md §6 explains why.
        Self {
            parser: vt100::Parser::new_with_callbacks(rows, cols, 0, hooks),
            graphics: DecGraphics::default(),
            translated: Vec::new(),
            whole: WholeChars::default(),
        }
    }

    /// Advances the emulator over program output. Chunks may split anywhere,
    /// including inside an escape sequence or a UTF-8 character.
    pub fn feed(&mut self, bytes: &[u8]) {
        let bytes = self.graphics.translate(bytes, &mut self.translated);
        let bytes = self.whole.pass(bytes);
        self.parser.process(bytes);
    }

    /// Drains the bytes the program expects back on its input: answers to
    /// the queries it sent (cursor position, device attributes, modes).
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.parser.callbacks_mut().replies)
    }

    /// The grid, cursor and modes, for drawing a pane.
    pub fn screen(&self) -> &vt100::Screen {
        self.parser.screen()
    }

    /// Resizes the screen; a zero dimension becomes 1. Shrinking pushes rows
    /// off the top (counted in [`Self::scrolled_lines`]) until the cursor
    /// fits. Growing after output has scrolled adds blank rows at the top,
    /// where a terminal with scrollback would pull history back down, so the
    /// cursor keeps its distance from the bottom as it would in tmux.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.set_size(non_zero(rows), non_zero(cols));
    }

    /// `(rows, cols)`.
    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.screen().size();
        (rows.get(), cols.get())
    }

    /// The last title set with OSC 0 or OSC 2; empty if none.
    pub fn title(&self) -> &str {
        &self.parser.callbacks().title
    }

    /// How many BEL characters the program has sent.
    pub fn bells(&self) -> u64 {
        self.parser.callbacks().bells
    }

    /// Total rows pushed off the top of the main screen so far.
    pub fn scrolled_lines(&self) -> u64 {
        self.parser.callbacks().scrolled_lines
    }

    /// Bytes that redraw this screen on a fresh `Terminal` of the same size:
    /// contents, colours, cursor, input modes (`vt100`'s `state_formatted`),
    /// plus the alternate-screen flag, line-drawing charsets and title.
    ///
    /// Not carried, because `vt100` does not expose them: the scroll region,
    /// origin mode, the saved cursor, and what the main screen held while the
    /// alternate one is shown (it comes back blank).
    pub fn snapshot(&self) -> Vec<u8> {
        let screen = self.screen();
        let mut out = Vec::new();
        if screen.alternate_screen() {
            out.extend_from_slice(b"\x1b[?1049h");
        }
        out.extend_from_slice(screen.state_formatted().as_bytes());
        out.extend_from_slice(&self.graphics.restore_sequence());
        let title = self.title();
        if !title.is_empty() {
            // The title came out of an OSC string, which cannot hold BEL,
            // ESC, CAN or SUB, so it cannot end this one early.
            out.extend_from_slice(b"\x1b]2;");
            out.extend_from_slice(title.as_bytes());
            out.push(0x07);
        }
        out
    }

    /// The screen's rows as text, trailing spaces trimmed.
    pub fn visible_lines(&self) -> Vec<String> {
        let (_, cols) = self.size();
        self.screen()
            .rows(0, cols)
            .map(|mut row| {
                row.truncate(row.trim_end_matches(' ').len());
                row
            })
            .collect()
    }

    /// `(row, col)`, 0-based. After a character lands in the last column the
    /// column is `cols` (the wrap is pending), as tmux reports it.
    pub fn cursor(&self) -> (u16, u16) {
        self.screen().cursor_position()
    }

    /// The rows captured so far (oldest first), when made `with_history`.
    pub fn history(&self) -> impl ExactSizeIterator<Item = &String> + DoubleEndedIterator {
        static EMPTY: std::collections::VecDeque<String> = std::collections::VecDeque::new();
        match &self.parser.callbacks().history {
            Some(h) => h.rows.iter(),
            None => EMPTY.iter(),
        }
    }

    /// Takes the rows captured so far (made `with_history`).
    pub fn take_history(&mut self) -> Vec<String> {
        self.parser
            .callbacks_mut()
            .history
            .take()
            .map(|history| history.rows.into())
            .unwrap_or_default()
    }
}

fn non_zero(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

#[cfg(test)]
mod tests;
