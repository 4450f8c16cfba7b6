//! The rows just above the main screen: the newest rows that scrolled off
//! its top, kept as cells so a taller or wider screen can pull them back,
//! as tmux pulls rows back from its history (`screen_resize_y`,
//! `grid_reflow`).
//!
//! Only a few screens' worth is kept, not a scrollback: history is the
//! sink's (`hooks.rs`, `follow.rs`), and whoever keeps it is told when
//! rows come back out of it ([`Above::back`]) and when its rows are
//! rewrapped ([`Above::rewrap`]).

use std::collections::VecDeque;

use super::grid::Row;

/// How many rows scrolled off the main screen it keeps as cells: enough to
/// refill a screen grown by up to 150 rows (a 24-row window maximised on
/// a tall monitor), or a 50-row screen narrowed to a third of its width
/// and widened back. At 200 columns that is 600 KB of cells, a tenth of
/// tmux's history for one pane (docs/design.md §10), and scrolling a full
/// ring costs no allocation: the row leaving it is cleared and reused.
pub(crate) const KEPT_ROWS: usize = 150;

/// Where rows go above the main screen's top, and how they come back.
pub(crate) trait Above {
    /// `row` went off the top.
    fn gone(&mut self, row: &Row);
    /// The newest `rows` that went off the top (oldest first) came back
    /// onto the screen; `continues`: the row left above them wrapped, so
    /// the line it is part of goes on in the first of them.
    fn back(&mut self, rows: &[Row], continues: bool);
    /// The screen is now `cols` wide: rows above it that were not taken
    /// back may be rewrapped at that width, as tmux rewraps its history.
    fn rewrap(&mut self, cols: u16);
}

/// Nowhere: a copy of a screen, or the alternate screen.
pub(crate) struct Nowhere;

impl Above for Nowhere {
    fn gone(&mut self, _: &Row) {}
    fn back(&mut self, _: &[Row], _: bool) {}
    fn rewrap(&mut self, _: u16) {}
}

/// The newest rows that scrolled off, oldest first, all as wide as the
/// screen.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kept {
    rows: VecDeque<Row>,
    capacity: usize,
    /// The row before the oldest kept one wrapped: the oldest goes on its
    /// line.
    continues: bool,
}

impl Kept {
    pub(crate) fn new(capacity: usize) -> Kept {
        Kept {
            capacity,
            ..Kept::default()
        }
    }

    /// Whether the newest kept row (or, with none, the row before them)
    /// wrapped.
    pub(crate) fn ends_wrapped(&self) -> bool {
        self.rows.back().map_or(self.continues, |row| row.wrapped)
    }

    /// Keeps `row`, which scrolled off, putting in its place a row `cols`
    /// wide for the caller to clear: the oldest kept one when full, else a
    /// new one. With no capacity, `row` stays as it is.
    #[inline]
    pub(crate) fn swap(&mut self, row: &mut Row, cols: u16) {
        if self.capacity == 0 {
            return;
        }
        let fresh = match self.rows.len() == self.capacity {
            true => self.rows.pop_front().filter(|old| {
                self.continues = old.wrapped;
                old.cells.len() == usize::from(cols)
            }),
            false => None,
        };
        let fresh = fresh.unwrap_or_else(|| Row::new(cols));
        self.rows.push_back(std::mem::replace(row, fresh));
    }

    /// Takes the newest `count` rows (fewer when fewer are kept), oldest
    /// first.
    pub(crate) fn take_newest(&mut self, count: usize) -> Vec<Row> {
        let from = self.rows.len().saturating_sub(count);
        self.rows.drain(from..).collect()
    }

    /// Takes every kept row from the first that begins a line: what a new
    /// width can rewrap with the screen. Rows before it (the rest of a
    /// line whose head is no longer kept) are let go: they stay only in
    /// the sink's history, which rewraps them itself.
    pub(crate) fn take_lines(&mut self) -> Vec<Row> {
        let mut start = match self.continues {
            true => None,
            false => Some(0),
        };
        if start.is_none() {
            start = self.rows.iter().position(|row| !row.wrapped).map(|i| i + 1);
        }
        let Some(start) = start.filter(|&s| s <= self.rows.len()) else {
            // One line longer than all that is kept: none of it can come
            // back whole.
            self.continues = self.ends_wrapped();
            self.rows.clear();
            return Vec::new();
        };
        if start > 0 {
            self.continues = self.rows[start - 1].wrapped;
            self.rows.drain(..start);
        }
        self.rows.drain(..).collect()
    }

    /// Keeps `row` (rewrapped rows going back above the screen).
    pub(crate) fn push(&mut self, row: Row) {
        if self.capacity == 0 {
            return;
        }
        if self.rows.len() == self.capacity
            && let Some(old) = self.rows.pop_front()
        {
            self.continues = old.wrapped;
        }
        self.rows.push_back(row);
    }

    /// Forgets every row (ED 3 clears the scrollback).
    pub(crate) fn clear(&mut self) {
        self.rows.clear();
        self.continues = false;
    }
}
