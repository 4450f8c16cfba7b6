//! The cells of one screen (the main one or the alternate one), its cursor
//! and its scroll region. Nothing here parses: `emulator.rs` drives it.

use super::above::{Above, Kept};
use crate::values::screen::{Color, Style, Underline};

/// A style with nothing set: what a cell never written holds.
pub(crate) const PLAIN: Style = Style {
    fg: Color::Default,
    bg: Color::Default,
    flags: 0,
    underline: Underline::Single,
    underline_color: Color::Default,
};

/// How many columns a cell's character takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Width {
    #[default]
    Narrow,
    /// The left half of a two-column character.
    Wide,
    /// The right half: the cell to its left holds the character.
    Continuation,
}

/// Longest text a cell keeps: a character and a few combining marks. More
/// marks are dropped, so a stream of them cannot grow one cell without end.
const CLUSTER_MAX: usize = 32;

/// One cell: 20 bytes, and `Copy`, so clearing a row is a plain fill.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cell {
    /// The character shown; `'\0'` for a blank never written.
    pub(crate) ch: char,
    pub(crate) style: Style,
    pub(crate) width: Width,
    /// [`Cell::MARKS`] and [`Cell::PROTECTED`]: one byte, so the cell
    /// keeps its size.
    pub(crate) bits: u8,
}

// A flood fills rows of these: keep the size the comment above says.
const _: () = assert!(std::mem::size_of::<Cell>() == 20);

impl Cell {
    pub(crate) const BLANK: Cell = Cell {
        ch: '\0',
        style: PLAIN,
        width: Width::Narrow,
        bits: 0,
    };

    /// Combining marks follow the character: the row's `clusters` has the
    /// whole text.
    pub(crate) const MARKS: u8 = 1;
    /// Printed under DECSCA 1: selective erase (DECSED, DECSEL) leaves it.
    pub(crate) const PROTECTED: u8 = 2;

    #[inline]
    pub(crate) fn marks(&self) -> bool {
        self.bits & Cell::MARKS != 0
    }

    #[inline]
    pub(crate) fn protected(&self) -> bool {
        self.bits & Cell::PROTECTED != 0
    }

    pub(crate) fn set_marks(&mut self, on: bool) {
        match on {
            true => self.bits |= Cell::MARKS,
            false => self.bits &= !Cell::MARKS,
        }
    }

    /// A cell erased while `style` is current: blank, in its background
    /// colour only, as xterm and tmux erase.
    pub(crate) fn erased(style: Style) -> Cell {
        Cell {
            style: Style { bg: style.bg, ..PLAIN },
            ..Cell::BLANK
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Row {
    pub(crate) cells: Vec<Cell>,
    /// The text of cells with combining marks, by column. An entry whose
    /// cell no longer has `marks` set is stale and ignored.
    clusters: Vec<(u16, Box<str>)>,
    /// Every cell from here on is [`Cell::BLANK`]: clearing a row clears
    /// only what was written (a scroll in a flood clears one line's worth).
    used: usize,
    /// The line goes on in the row below: a character after the last column
    /// wrapped there (autowrap), not a line feed (`reflow.rs` joins them).
    pub(crate) wrapped: bool,
    /// Wrapped before a wide character that did not fit: the last cell is
    /// no part of the line.
    pub(crate) spacer: bool,
}

impl Row {
    pub(crate) fn new(cols: u16) -> Row {
        Row {
            cells: vec![Cell::BLANK; usize::from(cols)],
            clusters: Vec::new(),
            used: 0,
            wrapped: false,
            spacer: false,
        }
    }

    pub(crate) fn clear(&mut self, style: Style) {
        let erased = Cell::erased(style);
        if erased == Cell::BLANK {
            self.cells[..self.used].fill(erased);
            self.used = 0;
        } else {
            self.cells.fill(erased);
            self.used = self.cells.len();
        }
        self.clusters.clear();
        self.wrapped = false;
        self.spacer = false;
    }

    /// Cells before `end` may have been written.
    #[inline]
    pub(crate) fn touch(&mut self, end: usize) {
        if end > self.used {
            self.used = end.min(self.cells.len());
        }
    }

    /// Cells before `end` were erased in `style`.
    pub(crate) fn erased_to(&mut self, end: usize, style: Style) {
        if Cell::erased(style) != Cell::BLANK {
            self.touch(end);
        }
    }

    /// DECSEL / DECSED: blanks the cells of `cols` that DECSCA did not
    /// protect (both halves of a wide character are protected alike).
    pub(crate) fn erase_unprotected(&mut self, cols: std::ops::Range<usize>, style: Style) {
        let end = cols.end.min(self.cells.len());
        for col in cols.start..end {
            if !self.cells[col].protected() {
                self.split_wide(col, style);
                self.cells[col] = Cell::erased(style);
            }
        }
        self.erased_to(end, style);
    }

    /// The text of the cell at `col` with its combining marks, if it has any.
    pub(crate) fn cluster(&self, col: usize) -> Option<&str> {
        if !self.cells[col].marks() {
            return None;
        }
        let col = col as u16;
        self.clusters.iter().rev().find(|(c, _)| *c == col).map(|(_, s)| &**s)
    }

    /// Appends the text of the cell at `col` to `out` (a blank as a space).
    pub(crate) fn push_text(&self, col: usize, out: &mut String) {
        match (self.cluster(col), self.cells[col].ch) {
            (Some(s), _) => out.push_str(s),
            (None, '\0') => out.push(' '),
            (None, c) => out.push(c),
        }
    }

    /// Adds a combining mark to the character at `col`.
    pub(crate) fn combine(&mut self, col: usize, mark: char) {
        let mut text = String::new();
        self.push_text(col, &mut text);
        if text.len() + mark.len_utf8() <= CLUSTER_MAX {
            text.push(mark);
        }
        let at = col as u16;
        self.clusters.retain(|(c, _)| *c != at);
        self.clusters.push((at, text.into()));
        self.cells[col].set_marks(true);
    }

    /// How many cells hold something: those after the last one that is not
    /// [`Cell::BLANK`] were never written or were erased plainly (tmux's
    /// `cellused`).
    pub(crate) fn content_len(&self) -> usize {
        self.cells[..self.used.min(self.cells.len())]
            .iter()
            .rposition(|cell| *cell != Cell::BLANK)
            .map_or(0, |last| last + 1)
    }

    /// Sets the text of the cell at `col`, which has combining marks.
    pub(crate) fn set_cluster(&mut self, col: usize, text: Box<str>) {
        self.clusters.push((col as u16, text));
        self.cells[col].set_marks(true);
    }

    /// How many of its cells the row gives its line: a wrapped row all
    /// (blanks before the wrap are part of the line, as in tmux) but a
    /// spacer; any other up to its last written cell.
    pub(crate) fn line_len(&self) -> usize {
        match self.wrapped {
            true => self.cells.len() - usize::from(self.spacer),
            false => self.content_len(),
        }
    }

    /// The row's text as a piece of its line: a wrapped row whole, any
    /// other with trailing blanks trimmed.
    pub(crate) fn line_text(&self) -> String {
        if !self.wrapped {
            return self.text();
        }
        let mut out = String::with_capacity(self.cells.len());
        for col in 0..self.line_len() {
            if self.cells[col].width != Width::Continuation {
                self.push_text(col, &mut out);
            }
        }
        out
    }

    /// The row's text, trailing blanks trimmed.
    pub(crate) fn text(&self) -> String {
        let mut out = String::with_capacity(self.cells.len());
        for (col, cell) in self.cells.iter().enumerate() {
            if cell.width != Width::Continuation {
                self.push_text(col, &mut out);
            }
        }
        out.truncate(out.trim_end_matches(' ').len());
        out
    }

    /// Blanks the other half of a wide character that `col` is part of.
    #[inline]
    pub(crate) fn split_wide(&mut self, col: usize, style: Style) {
        match self.cells[col].width {
            Width::Narrow => {}
            Width::Wide if col + 1 < self.cells.len() => self.cells[col + 1] = Cell::erased(style),
            Width::Continuation if col > 0 => self.cells[col - 1] = Cell::erased(style),
            _ => {}
        }
        self.erased_to(col + 2, style);
    }

    /// Cells move apart at `col`: a wide character across it is blanked.
    fn split_at(&mut self, col: usize, style: Style) {
        if self.cells[col].width == Width::Continuation {
            self.split_wide(col, style);
            self.cells[col] = Cell::erased(style);
        }
    }

    /// Inserts `count` blanks at `col`; what is pushed past the end is lost.
    pub(crate) fn insert(&mut self, col: usize, count: usize, style: Style) {
        let count = count.min(self.cells.len() - col);
        self.split_at(col, style);
        let tail = &mut self.cells[col..];
        tail.rotate_right(count);
        tail[..count].fill(Cell::erased(style));
        self.touch(self.cells.len());
        self.fix_last_cell(style);
        self.moved_cells();
    }

    /// Deletes `count` cells at `col`; blanks come in at the end.
    pub(crate) fn delete(&mut self, col: usize, count: usize, style: Style) {
        let count = count.min(self.cells.len() - col);
        self.split_at(col, style);
        let tail = &mut self.cells[col..];
        tail.rotate_left(count);
        let len = tail.len();
        tail[len - count..].fill(Cell::erased(style));
        self.touch(self.cells.len());
        // A continuation moved to `col` without its head.
        if self.cells[col].width == Width::Continuation {
            self.cells[col] = Cell::erased(style);
        }
        self.moved_cells();
    }

    /// Cells moved sideways: their combining marks are let go (rare enough
    /// that keeping them is not worth following each one).
    fn moved_cells(&mut self) {
        for cell in &mut self.cells {
            cell.set_marks(false);
        }
        self.clusters.clear();
    }

    /// A wide character pushed half off the end is blanked.
    fn fix_last_cell(&mut self, style: Style) {
        if let Some(last) = self.cells.last_mut()
            && last.width == Width::Wide
        {
            *last = Cell::erased(style);
        }
    }

    fn resize(&mut self, cols: u16) {
        self.cells.resize(usize::from(cols), Cell::BLANK);
        self.used = self.used.min(self.cells.len());
        self.fix_last_cell(PLAIN);
        self.clusters.retain(|(c, _)| *c < cols);
    }
}

/// What DECSC keeps and DECRC brings back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Saved {
    pub(crate) row: u16,
    pub(crate) col: u16,
    pub(crate) style: Style,
    /// DECSCA's state (`Cell::PROTECTED` or 0), as xterm saves it.
    pub(crate) protect: u8,
    pub(crate) origin: bool,
    pub(crate) charsets: super::charset::Charsets,
}

#[derive(Clone, Debug)]
pub(crate) struct Grid {
    pub(crate) rows: Vec<Row>,
    pub(crate) cols: u16,
    pub(crate) row: u16,
    /// `cols` when a character landed in the last column and the next one
    /// wraps (as tmux reports the cursor then).
    pub(crate) col: u16,
    /// The scroll region, inclusive.
    pub(crate) top: u16,
    pub(crate) bottom: u16,
    /// DECOM: cursor addresses count from the region's top and stay in it.
    pub(crate) origin: bool,
    pub(crate) saved: Saved,
    /// The newest rows pushed off the top, which a taller or wider screen
    /// pulls back (`above.rs`); none on the alternate screen.
    pub(crate) kept: Kept,
}

impl Grid {
    pub(crate) fn new(rows: u16, cols: u16) -> Grid {
        Grid {
            rows: (0..rows).map(|_| Row::new(cols)).collect(),
            cols,
            row: 0,
            col: 0,
            top: 0,
            bottom: rows - 1,
            origin: false,
            saved: Saved::default(),
            kept: Kept::default(),
        }
    }

    /// A screen that keeps the newest rows pushed off its top (the main
    /// one).
    pub(crate) fn keeping(mut self, rows: usize) -> Grid {
        self.kept = Kept::new(rows);
        self
    }

    pub(crate) fn height(&self) -> u16 {
        self.rows.len() as u16
    }

    pub(crate) fn full_region(&self) -> bool {
        self.top == 0 && self.bottom == self.height() - 1
    }

    /// The cursor's column as a cell index (a pending wrap is the last cell).
    pub(crate) fn col_index(&self) -> usize {
        usize::from(self.col.min(self.cols - 1))
    }

    pub(crate) fn in_region(&self) -> bool {
        (self.top..=self.bottom).contains(&self.row)
    }

    /// Scrolls the region up `count` rows; each row leaving the top of the
    /// screen is handed to `gone` first.
    pub(crate) fn scroll_up(&mut self, count: u16, style: Style, gone: &mut impl FnMut(&Row)) {
        let (top, bottom) = (usize::from(self.top), usize::from(self.bottom));
        let count = usize::from(count).min(bottom - top + 1);
        let region = &mut self.rows[top..=bottom];
        for row in &mut region[..count] {
            if top == 0 {
                gone(row);
                self.kept.swap(row, self.cols);
            }
            row.clear(style);
        }
        region.rotate_left(count);
    }

    /// Scrolls the region down `count` rows; blank rows come in at its top.
    pub(crate) fn scroll_down(&mut self, count: u16, style: Style) {
        let (top, bottom) = (usize::from(self.top), usize::from(self.bottom));
        let count = usize::from(count).min(bottom - top + 1);
        let region = &mut self.rows[top..=bottom];
        region.rotate_right(count);
        for row in &mut region[..count] {
            row.clear(style);
        }
    }

    /// IL: blank rows at the cursor, inside the region; the rows below move
    /// down and the bottom ones are lost.
    pub(crate) fn insert_lines(&mut self, count: u16, style: Style) {
        if !self.in_region() {
            return;
        }
        let region = &mut self.rows[usize::from(self.row)..=usize::from(self.bottom)];
        let count = usize::from(count).min(region.len());
        region.rotate_right(count);
        for row in &mut region[..count] {
            row.clear(style);
        }
    }

    /// DL: the rows at the cursor go, the rest of the region moves up.
    pub(crate) fn delete_lines(&mut self, count: u16, style: Style) {
        if !self.in_region() {
            return;
        }
        let region = &mut self.rows[usize::from(self.row)..=usize::from(self.bottom)];
        let count = usize::from(count).min(region.len());
        for row in &mut region[..count] {
            row.clear(style);
        }
        region.rotate_left(count);
    }

    /// LF: down a row, scrolling at the region's bottom.
    pub(crate) fn linefeed(&mut self, style: Style, gone: &mut impl FnMut(&Row)) {
        if self.row == self.bottom {
            self.scroll_up(1, style, gone);
        } else if self.row + 1 < self.height() {
            self.row += 1;
        }
    }

    /// RI: up a row, scrolling down at the region's top.
    pub(crate) fn reverse_index(&mut self, style: Style) {
        if self.row == self.top {
            self.scroll_down(1, style);
        } else if self.row > 0 {
            self.row -= 1;
        }
    }

    /// Moves to `row`, `col` (0-based; in the region when origin mode is on).
    pub(crate) fn go_to(&mut self, row: u16, col: u16) {
        self.row = if self.origin {
            self.top.saturating_add(row).min(self.bottom)
        } else {
            row.min(self.height() - 1)
        };
        self.col = col.min(self.cols - 1);
    }

    /// CUU/CUD: up or down, stopping at the region's edge when inside it.
    pub(crate) fn move_rows(&mut self, up: bool, count: u16) {
        let inside = self.in_region();
        if up {
            let floor = if inside { self.top } else { 0 };
            self.row = self.row.saturating_sub(count).max(floor);
        } else {
            let ceiling = if inside { self.bottom } else { self.height() - 1 };
            self.row = self.row.saturating_add(count).min(ceiling);
        }
    }

    /// With origin mode on the cursor stays in the region (a cursor brought
    /// from elsewhere, by DECRC or from the alternate screen, is moved in).
    pub(crate) fn keep_in_region(&mut self) {
        if self.origin {
            self.row = self.row.clamp(self.top, self.bottom);
        }
    }

    pub(crate) fn home(&mut self) {
        self.go_to(0, 0);
    }

    pub(crate) fn set_region(&mut self, top: u16, bottom: u16) {
        let bottom = bottom.min(self.height() - 1);
        if top < bottom {
            (self.top, self.bottom) = (top, bottom);
        } else {
            (self.top, self.bottom) = (0, self.height() - 1);
        }
        // The screen's top left even under origin mode, as tmux does.
        (self.row, self.col) = (0, 0);
    }

    pub(crate) fn erase_below(&mut self, style: Style) {
        self.erase_right(style);
        for row in &mut self.rows[usize::from(self.row) + 1..] {
            row.clear(style);
        }
    }

    pub(crate) fn erase_above(&mut self, style: Style) {
        self.erase_left(style);
        for row in &mut self.rows[..usize::from(self.row)] {
            row.clear(style);
        }
    }

    pub(crate) fn erase_all(&mut self, style: Style) {
        for row in &mut self.rows {
            row.clear(style);
        }
    }

    /// EL 0: from the cursor to the end of the row (nothing while a wrap
    /// is pending, as in tmux).
    pub(crate) fn erase_right(&mut self, style: Style) {
        let col = usize::from(self.col);
        let row = &mut self.rows[usize::from(self.row)];
        if col >= row.cells.len() {
            return;
        }
        row.split_wide(col, style);
        row.cells[col..].fill(Cell::erased(style));
        row.erased_to(row.cells.len(), style);
    }

    pub(crate) fn erase_left(&mut self, style: Style) {
        let col = self.col_index();
        let row = &mut self.rows[usize::from(self.row)];
        row.split_wide(col, style);
        row.cells[..=col].fill(Cell::erased(style));
        row.erased_to(col + 1, style);
    }

    /// DECSEL (`line`) or DECSED with `how` as EL / ED take it: only the
    /// cells DECSCA did not protect. Nothing right of a pending wrap, as
    /// EL 0.
    pub(crate) fn erase_selective(&mut self, line: bool, how: u16, style: Style) {
        let (row, width) = (usize::from(self.row), usize::from(self.cols));
        let (right, left) = (usize::from(self.col)..width, 0..self.col_index() + 1);
        let (here, above, below) = match (line, how) {
            (_, 0) => (right, 0..0, row + 1..self.rows.len()),
            (_, 1) => (left, 0..row, 0..0),
            (_, 2) => (0..width, 0..row, row + 1..self.rows.len()),
            _ => return,
        };
        self.rows[row].erase_unprotected(here, style);
        if !line {
            for r in above.chain(below) {
                self.rows[r].erase_unprotected(0..width, style);
            }
        }
    }

    /// ECH: blanks `count` cells from the cursor, not moving it.
    pub(crate) fn erase_chars(&mut self, count: u16, style: Style) {
        let col = usize::from(self.col);
        let row = &mut self.rows[usize::from(self.row)];
        if col >= row.cells.len() {
            return;
        }
        let end = (col + usize::from(count)).min(row.cells.len());
        row.split_wide(col, style);
        row.split_wide(end - 1, style);
        row.cells[col..end].fill(Cell::erased(style));
        row.erased_to(end, style);
    }

    /// A new size. Shrinking pushes rows off the top (handed to `above`)
    /// until the cursor's row fits; growing pulls the rows kept above the
    /// top back in there, then adds blank ones at the bottom, as tmux's
    /// `screen_resize_y` (which has all its history to pull from: rows
    /// older than those kept stay in the sink's history). The region
    /// becomes the whole screen.
    /// With `reflow` (the main screen), a new width rewraps the lines
    /// (`reflow.rs`); without, rows are cropped or padded.
    pub(crate) fn resize(&mut self, rows: u16, cols: u16, reflow: bool, above: &mut impl Above) {
        let height = self.height();
        if rows < height {
            let below = height - self.row - 1;
            let pushed = (height - rows).saturating_sub(below);
            (self.top, self.bottom) = (0, height - 1);
            self.scroll_up(pushed, PLAIN, &mut |row: &Row| above.gone(row));
            self.rows.truncate(usize::from(rows));
            self.row -= pushed;
            self.saved.row = self.saved.row.saturating_sub(pushed).min(rows - 1);
        } else if rows > height {
            let pulled = self.pull_back(rows - height, above);
            self.rows.resize_with(usize::from(rows), || Row::new(self.cols));
            self.row += pulled;
            self.saved.row += pulled;
        }
        if cols != self.cols && reflow {
            self.reflow(cols, above);
        } else {
            if cols != self.cols {
                for row in &mut self.rows {
                    row.resize(cols);
                }
                self.col = self.col.min(cols - 1);
            }
            // Of the same width, a pending wrap stays pending: the next
            // character goes on the next row, not over the last one.
            self.cols = cols;
        }
        self.saved.col = self.saved.col.min(cols - 1);
        (self.top, self.bottom) = (0, rows - 1);
    }

    /// Brings back to the top of the screen up to `wanted` of the rows
    /// kept above it; returns how many.
    fn pull_back(&mut self, wanted: u16, above: &mut impl Above) -> u16 {
        let kept = self.kept.take_newest(usize::from(wanted));
        if kept.is_empty() {
            return 0;
        }
        above.back(&kept, self.kept.ends_wrapped());
        let pulled = kept.len() as u16;
        self.rows.splice(0..0, kept);
        pulled
    }
}
