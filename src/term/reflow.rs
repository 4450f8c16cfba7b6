//! Rewrapping the main screen's lines at a new width, as tmux's
//! `grid_reflow` does: rows joined by a wrap ([`Row::wrapped`]) are one
//! line, split again at the new width; a line feed stays a line's end.
//!
//! The emulator keeps no history (docs/design.md §6), so only the screen
//! is rewrapped: rows a narrower screen pushes off the top go to the sink as
//! any scrolled row does (wrapped, so whoever reads them can join them),
//! and where a wider screen has rows to spare, tmux pulls rows back from
//! its history and we add blank ones at the bottom. The first row of the
//! screen may go on a line whose head scrolled off: it is rewrapped as a
//! line of its own, and joined to that head where history is read.

use super::grid::{Cell, Grid, Row, Width};

/// One line: the cells of the rows a wrap joins, and the text of those
/// with combining marks, by offset.
#[derive(Default)]
struct Line {
    cells: Vec<Cell>,
    clusters: Vec<(usize, Box<str>)>,
}

/// Where the cursor is in its line: on the cell at an offset, or past the
/// line's last cell (tmux puts such a cursor just after it).
#[derive(Clone, Copy)]
enum Spot {
    At(usize),
    End,
}

impl Grid {
    /// Rewraps the screen at `cols` columns, keeping the cursor on its
    /// character; rows above the screen's new top go to `gone`.
    pub(crate) fn reflow(&mut self, cols: u16, gone: &mut impl FnMut(&Row)) {
        let height = self.rows.len();
        let (lines, cursor) = self.logical_lines();
        let mut rows = Vec::with_capacity(height);
        let mut at = (0, 0);
        for (index, line) in lines.iter().enumerate() {
            let spot = cursor.filter(|(i, _)| *i == index).map(|(_, spot)| spot);
            if let Some(found) = split(line, cols, spot, &mut rows) {
                at = found;
            }
        }
        // As tmux: the screen is the last `height` rows.
        let excess = rows.len().saturating_sub(height);
        for row in rows.drain(..excess) {
            gone(&row);
            self.top_continues = row.wrapped;
        }
        self.pushed += excess as u64;
        rows.resize_with(height, || Row::new(cols));
        self.rows = rows;
        self.cols = cols;
        // A cursor whose row went off the top goes to the top left, as tmux.
        (self.row, self.col) = match at.0.checked_sub(excess) {
            Some(row) => (row as u16, at.1 as u16),
            None => (0, 0),
        };
        self.saved.row = self.saved.row.saturating_sub(excess as u16);
    }

    /// The screen's lines, and which one the cursor is in and where.
    fn logical_lines(&self) -> (Vec<Line>, Option<(usize, Spot)>) {
        let mut lines: Vec<Line> = Vec::new();
        let mut cursor = None;
        let mut continued = false;
        for (r, row) in self.rows.iter().enumerate() {
            if !continued {
                lines.push(Line::default());
            }
            let index = lines.len() - 1;
            let line = &mut lines[index];
            let len = row.line_len();
            if r == usize::from(self.row) {
                // As tmux: a cursor past the row's last cell goes past the
                // line's.
                let col = usize::from(self.col);
                let spot = if col < len {
                    Spot::At(line.cells.len() + col)
                } else {
                    Spot::End
                };
                cursor = Some((index, spot));
            }
            for col in 0..len {
                if let Some(text) = row.cluster(col) {
                    line.clusters.push((line.cells.len(), text.into()));
                }
                line.cells.push(row.cells[col]);
            }
            continued = row.wrapped;
        }
        (lines, cursor)
    }
}

/// Appends `line` to `rows` as rows of `cols`; returns where `spot` landed
/// (row index, column), when given.
fn split(line: &Line, cols: u16, spot: Option<Spot>, rows: &mut Vec<Row>) -> Option<(usize, usize)> {
    let width = usize::from(cols);
    let mut row = Row::new(cols);
    let mut col = 0;
    let mut found = None;
    let mut marks = line.clusters.iter().peekable();
    let mut at = 0;
    while at < line.cells.len() {
        let cell = line.cells[at];
        let wide = cell.width == Width::Wide && at + 1 < line.cells.len();
        let span = if wide { 2 } else { 1 };
        if cell.width == Width::Continuation || (cell.width == Width::Wide && !wide) || span > width {
            // Half a character (cut by the row it was on), or one wider
            // than the screen: dropped, as printing drops it.
            at += 1;
            continue;
        }
        if col + span > width {
            row.wrapped = true;
            row.spacer = col < width;
            rows.push(std::mem::replace(&mut row, Row::new(cols)));
            col = 0;
        }
        row.cells[col] = cell;
        row.cells[col].set_marks(false);
        if wide {
            row.cells[col + 1] = line.cells[at + 1];
        }
        while let Some((offset, text)) = marks.next_if(|(offset, _)| *offset <= at) {
            if *offset == at {
                row.set_cluster(col, text.clone());
            }
        }
        row.touch(col + span);
        if let Some(Spot::At(offset)) = spot
            && (at..at + span).contains(&offset)
        {
            found = Some((rows.len(), col + offset - at));
        }
        col += span;
        at += span;
    }
    rows.push(row);
    match spot {
        Some(Spot::End) => Some((rows.len() - 1, col)),
        // On a cell dropped above: the line's end.
        Some(Spot::At(_)) if found.is_none() => Some((rows.len() - 1, col)),
        _ => found,
    }
}
