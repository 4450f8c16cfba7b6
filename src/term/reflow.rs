//! Rewrapping the main screen's lines at a new width, as tmux's
//! `grid_reflow` does: rows joined by a wrap ([`Row::wrapped`]) are one
//! line, split again at the new width; a line feed stays a line's end.
//!
//! As in tmux, the lines above the screen are rewrapped with it and the
//! screen is the last rows of the result: a wider screen, whose lines take
//! fewer rows, pulls rows back from above its top, and a narrower one
//! pushes rows off. The emulator keeps only the newest rows above the
//! screen (`above.rs`); those are taken back from the first that begins a
//! line and rewrapped here, and whoever keeps the history further back
//! (the sink) rewraps the rest ([`Above::rewrap`]). When no line begins in
//! the rows kept, the screen's first row may go on a line whose head is
//! further up: it is rewrapped as a line of its own, and joined to that
//! head where history is read.

use super::above::Above;
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
    /// Rewraps the screen, and the rows kept above it, at `cols` columns,
    /// keeping the cursor on its character; rows above the screen's new
    /// top go to `above` (and are kept again), rows taken back come from
    /// it.
    pub(crate) fn reflow(&mut self, cols: u16, above: &mut impl Above) {
        let height = self.rows.len();
        let taken = self.kept.take_lines();
        if !taken.is_empty() {
            above.back(&taken, self.kept.ends_wrapped());
        }
        above.rewrap(cols);
        let old_row = self.row;
        let cursor_row = usize::from(self.row) + taken.len();
        let (lines, cursor) = logical_lines(taken.iter().chain(&self.rows), cursor_row, usize::from(self.col));
        let mut rows = Vec::with_capacity(height);
        let mut at = (0, 0);
        for (index, line) in lines.iter().enumerate() {
            let spot = cursor.filter(|(i, _)| *i == index).map(|(_, spot)| spot);
            if let Some(found) = split(line, cols, spot, &mut rows) {
                at = found;
            }
        }
        // As tmux: the screen is the last `height` rows, blank ones added
        // at the bottom when there are fewer.
        let excess = rows.len().saturating_sub(height);
        for row in rows.drain(..excess) {
            above.gone(&row);
            self.kept.push(row);
        }
        rows.resize_with(height, || Row::new(cols));
        self.rows = rows;
        self.cols = cols;
        // A cursor whose row went off the top goes to the top left, as tmux.
        (self.row, self.col) = match at.0.checked_sub(excess) {
            Some(row) => (row as u16, at.1 as u16),
            None => (0, 0),
        };
        // The saved cursor moves with the rows around the cursor.
        let moved = i32::from(self.row) - i32::from(old_row);
        let saved = (i32::from(self.saved.row) + moved).clamp(0, height as i32 - 1);
        self.saved.row = saved as u16;
    }
}

/// The lines of `rows`, and which one the cursor (on row `cursor_row`,
/// column `cursor_col`) is in and where.
fn logical_lines<'a>(
    rows: impl Iterator<Item = &'a Row>,
    cursor_row: usize,
    cursor_col: usize,
) -> (Vec<Line>, Option<(usize, Spot)>) {
    let mut lines: Vec<Line> = Vec::new();
    let mut cursor = None;
    let mut continued = false;
    for (r, row) in rows.enumerate() {
        if !continued {
            lines.push(Line::default());
        }
        let index = lines.len() - 1;
        let line = &mut lines[index];
        let len = row.line_len();
        if r == cursor_row {
            // As tmux: a cursor past the row's last cell goes past the
            // line's.
            let spot = if cursor_col < len {
                Spot::At(line.cells.len() + cursor_col)
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
