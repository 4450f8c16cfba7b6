//! A client's copy of a run's screen ([`ScreenMirror`]): updates applied
//! to it, and the rows that scrolled off while it watched.

use std::collections::VecDeque;

use super::{Cell, Glyph, Malformed, Modes, Row, ScreenUpdate};

/// A client's copy of a run's screen, kept by applying updates; plus the
/// rows that scrolled off while it watched (plain text, the newest
/// `history_max`).
#[derive(Debug, Clone)]
pub struct ScreenMirror {
    pub rows: u16,
    pub cols: u16,
    lines: Vec<Row>,
    pub cursor: (u16, u16),
    pub modes: Modes,
    pub title: String,
    /// The log offset the screen stands for.
    pub offset: u64,
    /// The `seq` of the last update applied.
    pub seq: u64,
    history: VecDeque<String>,
    history_max: usize,
    /// Rows scrolled off that this mirror never got (`ScreenUpdate::dropped`),
    /// or all of them after a resize rewrapped them: its history is not
    /// whole until it asks the log again.
    pub history_gap: bool,
}

impl ScreenMirror {
    /// A blank `rows` × `cols` screen that keeps `history_max` rows of history.
    pub fn new(rows: u16, cols: u16, history_max: usize) -> ScreenMirror {
        let (rows, cols) = (rows.max(1), cols.max(1));
        ScreenMirror {
            rows,
            cols,
            lines: vec![vec![Cell::default(); cols as usize]; rows as usize],
            cursor: (0, 0),
            modes: Modes::default(),
            title: String::new(),
            offset: 0,
            seq: 0,
            history: VecDeque::new(),
            history_max,
            history_gap: false,
        }
    }

    /// Applies an update. One that is not full must be of this size (the
    /// sender sends a full one after a resize); another is refused.
    pub fn apply(&mut self, update: ScreenUpdate) -> Result<(), Malformed> {
        if !update.full && (update.rows, update.cols) != (self.rows, self.cols) {
            return Err(Malformed("a partial update of another size"));
        }
        if update.full && self.seq > 0 && (update.rows, update.cols) != (self.rows, self.cols) {
            // The run's screen took a new size: it rewrapped its history
            // and may have pulled rows of it back onto the screen, as tmux
            // does. The rows here are at the old width and may be on the
            // screen too: the log has them as they are now (`runs.history`).
            self.history.clear();
            self.history_gap = true;
        }
        if update.full {
            self.rows = update.rows;
            self.cols = update.cols;
            self.lines = vec![vec![Cell::default(); update.cols as usize]; update.rows as usize];
        }
        for (index, row) in update.lines {
            if let Some(line) = self.lines.get_mut(index as usize) {
                *line = row;
            }
        }
        self.cursor = update.cursor;
        self.modes = update.modes;
        if let Some(title) = update.title {
            self.title = title;
        }
        self.offset = update.offset;
        self.seq = update.seq;
        self.history_gap |= update.dropped > 0;
        self.push_history(update.scrolled);
        Ok(())
    }

    pub(super) fn push_history(&mut self, rows: impl IntoIterator<Item = String>) {
        for row in rows {
            if self.history.len() == self.history_max {
                self.history.pop_front();
            }
            if self.history_max > 0 {
                self.history.push_back(row);
            }
        }
    }

    /// Puts `older` rows (history fetched from the log, oldest first) in
    /// front of the `kept_from`-th row onward of this mirror's history:
    /// the rows it got before asking are in `older` already.
    pub fn replace_history(&mut self, older: Vec<String>, kept_from: usize) {
        let newer: Vec<String> = self.history.drain(..).skip(kept_from).collect();
        self.history_gap = false;
        self.push_history(older);
        self.push_history(newer);
    }

    pub fn cell(&self, row: u16, col: u16) -> Option<&Cell> {
        self.lines.get(row as usize)?.get(col as usize)
    }

    pub fn history(&self) -> impl ExactSizeIterator<Item = &String> + DoubleEndedIterator {
        self.history.iter()
    }

    /// The screen's rows as text, trailing spaces trimmed.
    pub fn visible_lines(&self) -> Vec<String> {
        self.lines
            .iter()
            .map(|row| {
                let mut line: String = row
                    .iter()
                    .map(|c| if c.glyph == Glyph::Blank { " " } else { c.text() })
                    .collect();
                line.truncate(line.trim_end_matches(' ').len());
                line
            })
            .collect()
    }
}
