//! The sender's half of a screen subscription ([`ScreenWatch`]): what one
//! subscriber was last sent, and the next update from a run's emulator
//! (`term::Terminal`) to it, cut to fit a frame. The receiver's half is
//! the mirror (`mirror.rs`).

use super::{Cell, Modes, Row, ScreenUpdate, encode_row, printable};
use crate::term::Terminal;

/// One update carries at most this much (rows and scrolled lines; the rest
/// go in the next): under the 1 MiB frame cap with room for the header.
const UPDATE_BUDGET: usize = 768 * 1024;
/// Rows scrolled off that one update carries at most; a flood scrolls more
/// between two frames than anyone reads, and those are in the log.
const SCROLLED_MAX: usize = 2000;

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
    /// `Terminal::pulls` when last sent.
    pulls: u64,
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
        let moved = self.scrolled != Some(term.scrolled_lines()) || self.pulls != term.pulls();
        if small.is_some() && (full || moved) {
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
            encode_row(&mut self.scratch, &self.row);
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
        let title = title.map(|t| printable(&t).into_owned());
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
    /// how many more scrolled that are not sent (or were pulled back).
    fn scrolled_rows(&mut self, term: &Terminal, budget: &mut usize) -> (Vec<String>, u64) {
        let now = term.scrolled_lines();
        // Rows pulled back onto the screen since: those scrolling off again
        // are numbered from where the pull went.
        let pulled_to = term.pulled_to(self.pulls);
        self.pulls = term.pulls();
        let Some(since) = self.scrolled.replace(now) else {
            // The first update: what scrolled before it is the log's to tell.
            return (Vec::new(), 0);
        };
        // Rows the client holds as history (sent, or the log's from before
        // its first update) came back onto the screen: they may leave it
        // again rewrapped (the main screen fits its size when an alternate
        // screen ends), so its history is to be asked of the log again.
        let pulled_back = pulled_to.map_or(0, |to| since.saturating_sub(to));
        let since = pulled_to.map_or(since, |to| since.min(to));
        // The newest rows matter most: a gap goes before them.
        let mut rows: Vec<String> = Vec::new();
        let mut bytes = 0;
        for (_, line) in term.scrolled_since(since).rev().take(SCROLLED_MAX) {
            bytes += line.len() + 4;
            if bytes > *budget {
                break;
            }
            rows.push(printable(line).into_owned());
        }
        rows.reverse();
        *budget = budget.saturating_sub(bytes);
        let dropped = now.saturating_sub(since).saturating_sub(rows.len() as u64);
        (rows, dropped.max(pulled_back))
    }
}
