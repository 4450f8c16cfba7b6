//! Where a [`super::Terminal`]'s rows go when they scroll off the top of
//! the main screen.

use std::collections::VecDeque;

use super::emulator::Sink;
use super::grid::Row;

/// The scrolled-off rows one [`super::Terminal`] keeps.
#[derive(Debug, Default)]
pub(super) struct Hooks {
    /// Set only when replaying for [`super::render_history`]: the live
    /// emulator keeps no history (docs/design.md §6), only the few rows a
    /// resize pulls back (`above.rs`).
    pub(super) history: Option<History>,
    /// Rows scrolled off kept for screen subscriptions, while there are.
    pub(super) scrolled: Option<Scrolled>,
    /// Where rows were pulled back onto the screen to.
    pub(super) pulls: Pulls,
}

/// The counts of scrolled rows that pulls went back to, with their number
/// among pulls, newest last: rows that scroll off after a pull are numbered
/// from there again, so a screen subscription that sent rows up to a
/// higher count must count from there too (`Terminal::pulled_to`).
#[derive(Debug, Default)]
pub(super) struct Pulls {
    pub(super) count: u64,
    recent: VecDeque<(u64, u64)>,
}

/// Pulls remembered: they come with a resize of a screen whose rows wrapped.
const PULLS_KEPT: usize = 16;

impl Pulls {
    fn push(&mut self, index: u64) {
        self.count += 1;
        if self.recent.len() == PULLS_KEPT {
            self.recent.pop_front();
        }
        self.recent.push_back((self.count, index));
    }

    /// The lowest count a pull after the `since`-th went back to: none
    /// since, `None`; pulls too old to be remembered, 0.
    pub(super) fn lowest_since(&self, since: u64) -> Option<u64> {
        if since >= self.count {
            return None;
        }
        let remembered = self.recent.front().is_some_and(|(n, _)| *n <= since + 1);
        let lowest = self.recent.iter().filter(|(n, _)| *n > since).map(|(_, i)| *i).min();
        Some(if remembered { lowest.unwrap_or(0) } else { 0 })
    }
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
}

impl Scrolled {
    pub(super) fn new(capacity: usize) -> Scrolled {
        Scrolled {
            rows: VecDeque::new(),
            capacity,
            budget: capacity,
        }
    }

    fn push(&mut self, index: u64, row: &Row) {
        if self.budget == 0 || self.capacity == 0 {
            return;
        }
        self.budget -= 1;
        let line = row.text();
        if self.rows.len() == self.capacity {
            self.rows.pop_front();
        }
        self.rows.push_back((index, line));
    }
}

/// The last `capacity` rows that scrolled off, as plain text, each with
/// whether it wrapped; rewrapped with the screen, as tmux rewraps its
/// history, so a replay's history reads as tmux's at the final width.
#[derive(Debug)]
pub(super) struct History {
    /// A wrapped row's text whole, another's with trailing blanks trimmed.
    pub(super) rows: VecDeque<(String, bool)>,
    capacity: usize,
}

impl History {
    pub(super) fn new(capacity: usize) -> Self {
        Self {
            rows: VecDeque::new(),
            capacity,
        }
    }

    fn push(&mut self, row: &Row) {
        self.push_text(row.line_text(), row.wrapped);
    }

    fn push_text(&mut self, text: String, wrapped: bool) {
        if self.capacity == 0 {
            return;
        }
        if self.rows.len() == self.capacity {
            self.rows.pop_front();
        }
        self.rows.push_back((text, wrapped));
    }

    /// Joins the rows a wrap joins and splits each line again at `cols`
    /// columns (a wide character that does not fit goes to the next row,
    /// one wider than the screen is dropped, as printing does). A line
    /// going on onto the screen stays wrapped at its end.
    fn rewrap(&mut self, cols: u16) {
        let rows = std::mem::take(&mut self.rows);
        let mut line = String::new();
        let mut continues = false;
        for (text, wrapped) in rows {
            line.push_str(&text);
            continues = wrapped;
            if !wrapped {
                self.split(&line, usize::from(cols), false);
                line.clear();
            }
        }
        if continues {
            self.split(&line, usize::from(cols), true);
        }
    }

    fn split(&mut self, line: &str, cols: usize, continues: bool) {
        use unicode_width::UnicodeWidthChar as _;
        let (mut row, mut width) = (String::new(), 0);
        for c in line.chars() {
            let w = c.width().unwrap_or(0);
            if w > cols {
                continue;
            }
            if width + w > cols {
                self.push_text(std::mem::take(&mut row), true);
                width = 0;
            }
            row.push(c);
            width += w;
        }
        if !continues {
            row.truncate(row.trim_end_matches(' ').len());
        }
        self.push_text(row, continues);
    }
}

impl Sink for Hooks {
    fn scrolled(&mut self, index: u64, row: &Row) {
        if let Some(scrolled) = &mut self.scrolled {
            scrolled.push(index, row);
        }
        if let Some(history) = &mut self.history {
            history.push(row);
        }
    }

    fn pulled(&mut self, index: u64, rows: &[Row], _: bool) {
        self.pulls.push(index);
        if let Some(scrolled) = &mut self.scrolled {
            while scrolled.rows.back().is_some_and(|(i, _)| *i >= index) {
                scrolled.rows.pop_back();
            }
        }
        if let Some(history) = &mut self.history {
            let keep = history.rows.len().saturating_sub(rows.len());
            history.rows.truncate(keep);
        }
    }

    fn rewrap(&mut self, cols: u16) {
        if let Some(history) = &mut self.history {
            history.rewrap(cols);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watcher_learns_the_lowest_count_the_pulls_since_it_looked_went_back_to() {
        let mut pulls = Pulls::default();
        assert_eq!(pulls.lowest_since(0), None, "no pull yet");
        pulls.push(40);
        pulls.push(37);
        pulls.push(39);
        assert_eq!(pulls.lowest_since(0), Some(37));
        assert_eq!(pulls.lowest_since(2), Some(39), "only the pulls after the second");
        assert_eq!(pulls.lowest_since(3), None, "none since the third");
        for i in 0..PULLS_KEPT as u64 {
            pulls.push(100 + i);
        }
        assert_eq!(pulls.lowest_since(0), Some(0), "pulls too old to know: from the start");
        assert_eq!(pulls.lowest_since(pulls.count - 1), Some(100 + PULLS_KEPT as u64 - 1));
    }
}
