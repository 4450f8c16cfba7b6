//! Where a [`super::Terminal`]'s rows go when they scroll off the top of
//! the main screen.

use std::collections::VecDeque;

use super::emulator::Sink;
use super::grid::Row;

/// The scrolled-off rows one [`super::Terminal`] keeps.
#[derive(Debug, Default)]
pub(super) struct Hooks {
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

/// The last `capacity` rows that scrolled off, as plain text.
#[derive(Debug)]
pub(super) struct History {
    pub(super) rows: VecDeque<String>,
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
        if self.capacity == 0 {
            return;
        }
        let line = row.text();
        if self.rows.len() == self.capacity {
            self.rows.pop_front();
        }
        self.rows.push_back(line);
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
}
