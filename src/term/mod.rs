//! Terminal emulation: bytes in, screen out (docs/design.md §6).
//!
//! [`Terminal`] is one run's screen: `vte` splits the bytes, our own
//! emulator (`emulator.rs`, `csi.rs`, on the cells of `grid.rs`) applies
//! them, answers terminal queries (`queries.rs`), maps the DEC line-drawing
//! charset (`charset.rs`), keeps the title and counts bells and rows
//! scrolled away; `hooks.rs` says where those rows go. It keeps no scrollback,
//! only the newest rows above the main screen for a resize to pull back
//! (`above.rs`): history is re-rendered from the output log on demand with
//! [`render_history`] (`history.rs`). No I/O happens here.
//!
//! Our own rather than a crate's: the one we used (`vt100`) bounded a flood
//! at half the speed the supervisor needs, and neither it nor the faster
//! ones tell where scrolled-off rows go or redraw a screen whole.

mod above;
mod charset;
mod csi;
mod emulator;
mod follow;
mod grid;
mod history;
mod hooks;
mod keyboard;
mod queries;
mod reflow;
mod snapshot;
mod state;
mod utf8;

pub use follow::LineFollower;
pub use history::render_history;

use emulator::Emulator;
use hooks::{History, Hooks};
use utf8::WholeChars;

/// One run's terminal screen.
pub struct Terminal {
    parser: vte::Parser,
    emu: Emulator<Hooks>,
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
        Self {
            parser: vte::Parser::new(),
            emu: Emulator::new(rows.max(1), cols.max(1), hooks),
            whole: WholeChars::default(),
        }
    }

    /// Advances the emulator over program output. Chunks may split anywhere,
    /// including inside an escape sequence or a UTF-8 character.
    pub fn feed(&mut self, bytes: &[u8]) {
        let bytes = self.whole.pass(bytes);
        self.parser.advance(&mut self.emu, bytes);
    }

    /// Drains the bytes the program expects back on its input: answers to
    /// the queries it sent (cursor position, device attributes, modes).
    pub fn take_replies(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.emu.replies)
    }

    /// The program asked for pasted text to be bracketed (mode 2004).
    pub fn bracketed_paste(&self) -> bool {
        self.emu.modes.bracketed_paste
    }

    /// The alternate screen (a full-screen program's) is shown.
    pub fn alternate_screen(&self) -> bool {
        self.emu.alt_on
    }

    /// Resizes the screen; a zero dimension becomes 1. Shrinking pushes rows
    /// off the top (counted in [`Self::scrolled_lines`]) until the cursor
    /// fits. Growing pulls rows kept above the screen back in at the top,
    /// as tmux pulls them from its history (taking them out of the
    /// count), then adds blank rows at the bottom. A new width rewraps the
    /// main screen's lines with those rows (`reflow.rs`).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.emu.resize(rows.max(1), cols.max(1));
    }

    /// `(rows, cols)`.
    pub fn size(&self) -> (u16, u16) {
        (self.emu.rows, self.emu.cols)
    }

    /// The last title set with OSC 0 or OSC 2; empty if none.
    pub fn title(&self) -> &str {
        &self.emu.title
    }

    /// How many BEL characters the program has sent.
    pub fn bells(&self) -> u64 {
        self.emu.bells
    }

    /// Total rows pushed off the top of the main screen so far, less those
    /// a resize pulled back onto it.
    pub fn scrolled_lines(&self) -> u64 {
        self.emu.scrolled_lines
    }

    /// How many times a resize pulled scrolled rows back onto the main
    /// screen: rows scrolling off after it are numbered from a lower count.
    pub fn pulls(&self) -> u64 {
        self.emu.sink.pulls.count
    }

    /// The lowest [`Self::scrolled_lines`] a pull after the `since`-th
    /// (of [`Self::pulls`]) went back to; `None` if none did.
    pub fn pulled_to(&self, since: u64) -> Option<u64> {
        self.emu.sink.pulls.lowest_since(since)
    }

    /// Bytes that redraw this screen on a fresh `Terminal` of the same size
    /// (`snapshot.rs` says what they carry).
    pub fn snapshot(&self) -> Vec<u8> {
        self.emu.snapshot()
    }

    /// The screen's rows as text, trailing spaces trimmed.
    pub fn visible_lines(&self) -> Vec<String> {
        self.emu.lines()
    }

    /// `(row, col)`, 0-based. After a character lands in the last column the
    /// column is `cols` (the wrap is pending), as tmux reports it.
    pub fn cursor(&self) -> (u16, u16) {
        self.emu.cursor()
    }

    /// The rows captured so far (oldest first, trailing blanks trimmed),
    /// when made `with_history`.
    pub fn history(&self) -> impl ExactSizeIterator<Item = &str> + DoubleEndedIterator {
        static EMPTY: std::collections::VecDeque<(String, bool)> = std::collections::VecDeque::new();
        let rows = match &self.emu.sink.history {
            Some(h) => h.rows.iter(),
            None => EMPTY.iter(),
        };
        rows.map(|(text, _)| text.trim_end_matches(' '))
    }

    /// Takes the rows captured so far (made `with_history`), trailing
    /// blanks trimmed.
    pub fn take_history(&mut self) -> Vec<String> {
        let rows = self.emu.sink.history.take().map(|history| history.rows);
        rows.unwrap_or_default()
            .into_iter()
            .map(|(mut text, _)| {
                text.truncate(text.trim_end_matches(' ').len());
                text
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
