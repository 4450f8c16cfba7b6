//! What the emulator reports besides the grid: query replies, the title,
//! bells and rows scrolled off the top.

use std::collections::VecDeque;

use vt100::capture::{BasicFormattedCaptureState, RowContents, basic_formatted_to_plain};

use super::queries;

/// The `vt100::Callbacks` state of one [`super::Terminal`].
#[derive(Debug, Default)]
pub(super) struct Hooks {
    /// Bytes owed to the program on its input (query answers), oldest first.
    pub(super) replies: Vec<u8>,
    pub(super) title: String,
    pub(super) bells: u64,
    /// Rows pushed off the top of the main screen.
    pub(super) scrolled_lines: u64,
    /// Set only when replaying for [`super::render_history`]: the live
    /// emulator keeps no history (docs/design.md §6).
    pub(super) history: Option<History>,
    /// Rows scrolled off kept for screen subscriptions, while there are.
    pub(super) scrolled: Option<Scrolled>,
}

/// Rows that scrolled off, each with its number (`scrolled_lines` before
/// it), for screen subscriptions to send: at most `capacity`, and at most
/// `budget` until the next refill. Reading a row's text is most of what a
/// flood costs beyond parsing it, and nobody reads a flood's lines as they
/// pass: past the budget, rows are only counted, and a client that wants
/// them asks the log (`runs.history`).
#[derive(Debug)]
pub(super) struct Scrolled {
    pub(super) rows: VecDeque<(u64, String)>,
    capacity: usize,
    pub(super) budget: usize,
    formatted: String,
}

impl Scrolled {
    pub(super) fn new(capacity: usize) -> Scrolled {
        Scrolled {
            rows: VecDeque::new(),
            capacity,
            budget: capacity,
            formatted: String::new(),
        }
    }

    fn push(&mut self, index: u64, row: &RowContents<'_>) {
        if self.budget == 0 || self.capacity == 0 {
            return;
        }
        self.budget -= 1;
        let line = plain_text(row, &mut self.formatted);
        if self.rows.len() == self.capacity {
            self.rows.pop_front();
        }
        self.rows.push_back((index, line));
    }
}

/// A row's text, without its attributes or trailing spaces.
fn plain_text(row: &RowContents<'_>, formatted: &mut String) -> String {
    // `RowContents` offers only its SGR-formatted text; strip the SGR.
    // A fresh capture state per row keeps rows from joining with '\n'.
    formatted.clear();
    let mut state = BasicFormattedCaptureState::new();
    if row.write_formatted_basic(formatted, &mut state).is_err() {
        // Unreachable: writing into a `String` cannot fail.
        return String::new();
    }
    let mut line: String = basic_formatted_to_plain(formatted).collect();
    line.truncate(line.trim_end_matches(' ').len());
    line
}

/// The last `capacity` rows that scrolled off, as plain text.
#[derive(Debug)]
pub(super) struct History {
    pub(super) rows: VecDeque<String>,
    capacity: usize,
    /// Reused for each row's formatted text before stripping it.
    formatted: String,
}

impl History {
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            rows: VecDeque::new(),
            capacity,
            formatted: String::new(),
        }
    }

    fn push(&mut self, row: &RowContents<'_>) {
        if self.capacity == 0 {
            return;
        }
        let line = plain_text(row, &mut self.formatted);
        if self.rows.len() == self.capacity {
            self.rows.pop_front();
        }
        self.rows.push_back(line);
    }
}

impl vt100::Callbacks for Hooks {
    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.bells += 1;
    }

    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = String::from_utf8_lossy(title).into_owned();
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        // `vte` splits OSC strings at every ';', and `vt100` only takes a
        // title that is exactly one piece, so "vim: a;b" would be lost.
        if let [b"0" | b"2", title @ ..] = params
            && title.len() > 1
        {
            self.title = String::from_utf8_lossy(&title.join(&b';')).into_owned();
        }
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        queries::answer(screen, i1, i2, params, c, &mut self.replies);
    }

    fn on_scroll(&mut self, row: RowContents<'_>, alternate_screen: bool) {
        // The alternate screen has no history in any terminal: what scrolls
        // off it is a full-screen program's redraw, not output.
        if alternate_screen {
            return;
        }
        if let Some(scrolled) = &mut self.scrolled {
            scrolled.push(self.scrolled_lines, &row);
        }
        self.scrolled_lines += 1;
        if let Some(history) = &mut self.history {
            history.push(&row);
        }
    }
}
