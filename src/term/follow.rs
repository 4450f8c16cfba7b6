//! Plain-text lines of a byte stream as a terminal would have shown them:
//! the rows that scrolled off the top (history) and then the screen. Used by
//! `agents logs`, which may follow a live run.

use std::collections::VecDeque;
use std::num::NonZeroU16;

use vt100::capture::{BasicFormattedCaptureState, RowContents, basic_formatted_to_plain};

struct Capture {
    finished: VecDeque<String>,
    /// How many of `finished` were already handed out by `take_finished`.
    taken: usize,
    max: usize,
}

impl vt100::Callbacks for Capture {
    fn on_scroll(&mut self, row: RowContents<'_>, alternate_screen: bool) {
        // A full-screen program's alternate screen is not history.
        if alternate_screen {
            return;
        }
        let mut formatted = String::new();
        let _ = row.write_formatted_basic(&mut formatted, &mut BasicFormattedCaptureState::new());
        let plain: String = basic_formatted_to_plain(&formatted).collect();
        self.finished.push_back(plain.trim_end().to_string());
        if self.finished.len() > self.max {
            self.finished.pop_front();
            self.taken = self.taken.saturating_sub(1);
        }
    }
}

pub struct LineFollower {
    parser: vt100::Parser<Capture>,
    /// A UTF-8 character cut at the end of the last chunk (`utf8.rs`).
    whole: super::utf8::WholeChars,
}

fn nz(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n.max(1)).unwrap_or(NonZeroU16::MIN)
}

impl LineFollower {
    /// Keeps at most `max_lines` of history.
    pub fn new(rows: u16, cols: u16, max_lines: usize) -> LineFollower {
        let capture = Capture {
            finished: VecDeque::new(),
            taken: 0,
            max: max_lines.max(1),
        };
        LineFollower {
            parser: vt100::Parser::new_with_callbacks(nz(rows), nz(cols), 0, capture),
            whole: Default::default(),
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(self.whole.pass(bytes));
    }

    /// Lines that scrolled off since the last call: final, never redrawn.
    pub fn take_finished(&mut self) -> Vec<String> {
        let capture = self.parser.callbacks_mut();
        let fresh: Vec<String> = capture.finished.iter().skip(capture.taken).cloned().collect();
        capture.taken = capture.finished.len();
        fresh
    }

    /// The current screen's rows, trailing blank rows dropped.
    pub fn take_screen(&mut self) -> Vec<String> {
        let (_, cols) = self.parser.screen().size();
        let mut rows: Vec<String> = self
            .parser
            .screen()
            .rows(0, cols.get())
            .map(|r| r.trim_end().to_string())
            .collect();
        while rows.last().is_some_and(|r| r.is_empty()) {
            rows.pop();
        }
        rows
    }

    /// Everything: the history (at most `max_lines` in all) then the screen.
    pub fn finish(mut self) -> Vec<String> {
        let screen = self.take_screen();
        let capture = self.parser.callbacks_mut();
        let max = capture.max;
        let mut all: Vec<String> = capture.finished.drain(..).collect();
        all.extend(screen);
        let cut = all.len().saturating_sub(max);
        all.drain(..cut);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrolled_lines_come_first_then_the_screen() {
        let mut f = LineFollower::new(3, 20, 100);
        for i in 0..6 {
            f.feed(format!("\x1b[3{}mline {i}\x1b[0m\r\n", i % 8).as_bytes());
        }
        assert_eq!(f.take_finished(), vec!["line 0", "line 1", "line 2", "line 3"]);
        assert!(f.take_finished().is_empty());
        assert_eq!(
            f.finish(),
            vec!["line 0", "line 1", "line 2", "line 3", "line 4", "line 5"]
        );
    }

    #[test]
    fn history_is_bounded() {
        let mut f = LineFollower::new(2, 10, 3);
        for i in 0..10 {
            f.feed(format!("{i}\r\n").as_bytes());
        }
        assert_eq!(f.finish(), vec!["7", "8", "9"]);
    }
}
