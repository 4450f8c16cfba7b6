//! The bytes that redraw a screen on a fresh emulator of the same size: a
//! checkpoint of the log (`protocol::run_files`) is one of these.
//!
//! They carry the cells with their colours and DECSCA protection, the cursor (a pending wrap
//! too), the saved cursor, the scroll region, origin mode, the modes a
//! client mirrors (the kitty keyboard flags' stacks too), autowrap and
//! insert mode, tab stops, the charsets and the title; while the alternate screen is shown, the main screen under it
//! too. Not carried: how many rows a taller size would pull back in at the
//! top, and the last character (for REP).

use std::fmt::Write as _;

use super::charset::Charsets;
use super::emulator::{Emulator, Sink, mouse};
use super::grid::{Cell, Grid, Saved, Width};
use crate::values::screen::{Color, Style, flag};

impl<S: Sink> Emulator<S> {
    pub(crate) fn snapshot(&self) -> Vec<u8> {
        let mut out = String::new();
        let main = self.main_now();
        // The saved cursor (one for both screens) before the region: it may
        // be outside it.
        draw(&mut out, &main);
        saved_cursor(&mut out, &main, "\x1b7");
        out.push_str(&self.keyboard.snapshot(false));
        if self.alt_on {
            region(&mut out, &main);
            if main.origin {
                out.push_str("\x1b[?6h");
            }
            match self.alt_saved {
                // 1049 keeps where the main screen's cursor was, and the
                // style: both in place, then 1049 takes them.
                Some((row, col, style)) => {
                    let top = if main.origin { main.top } else { 0 };
                    // Within the screen, as leaving 1049 puts it (the
                    // screen may have shrunk since it was saved).
                    let (row, col) = (row.min(self.rows - 1), col.min(self.cols));
                    place(&mut out, &main, row, col, top);
                    pen(&mut out, style);
                    out.push_str(&charsets(self.alt_charsets));
                    out.push_str("\x1b[?1049h");
                    // The alternate screen's cells are drawn in ASCII.
                    out.push_str(&charsets(Default::default()));
                }
                // 47 keeps the main screen's cursor as it was: leaving by
                // 1049 (with nothing saved) finds it there.
                None => {
                    put_cursor(&mut out, &main);
                    out.push_str("\x1b[?47h");
                }
            }
            draw(&mut out, &self.alt);
            out.push_str(&self.keyboard.snapshot(true));
        }
        let grid = self.grid();
        region(&mut out, grid);
        self.modes_and_tabs(&mut out);
        self.cursor_and_pen(&mut out, grid);
        // After the cursor: placing it may draw a cell again, in ASCII.
        out.push_str(&charsets(self.charsets));
        if self.modes.insert {
            out.push_str("\x1b[4h");
        }
        if !self.title.is_empty() {
            // The title came out of an OSC string, which cannot hold BEL,
            // ESC, CAN or SUB, so it cannot end this one early.
            let _ = write!(out, "\x1b]2;{}\x07", self.title);
        }
        out.into_bytes()
    }

    fn modes_and_tabs(&self, out: &mut String) {
        let m = &self.modes;
        for (on, set) in [
            (m.app_cursor, "\x1b[?1h"),
            (m.app_keypad, "\x1b="),
            (m.bracketed_paste, "\x1b[?2004h"),
            (m.hide_cursor, "\x1b[?25l"),
            (!m.autowrap, "\x1b[?7l"),
            (m.mouse == mouse::PRESS, "\x1b[?9h"),
            (m.mouse == mouse::PRESS_RELEASE, "\x1b[?1000h"),
            (m.mouse == mouse::BUTTON_MOTION, "\x1b[?1002h"),
            (m.mouse == mouse::ANY_MOTION, "\x1b[?1003h"),
            (m.mouse_encoding == mouse::UTF8, "\x1b[?1005h"),
            (m.mouse_encoding == mouse::SGR, "\x1b[?1006h"),
        ] {
            if on {
                out.push_str(set);
            }
        }
        let default = (0..self.cols).all(|c| self.tabs[usize::from(c)] == (c > 0 && c % 8 == 0));
        if !default {
            out.push_str("\x1b[3g");
            for (c, _) in self.tabs.iter().enumerate().filter(|(_, stop)| **stop) {
                let _ = write!(out, "\x1b[1;{}H\x1bH", c + 1);
            }
        }
    }

    /// The cursor where it is, then the style new characters take.
    fn cursor_and_pen(&self, out: &mut String, grid: &Grid) {
        if grid.origin {
            out.push_str("\x1b[?6h");
        }
        put_cursor(out, grid);
        pen(out, self.style);
        protect(out, self.protect != 0);
    }
}

/// DECSCA: whether what is drawn next is protected from selective erase.
fn protect(out: &mut String, on: bool) {
    out.push_str(if on { "\x1b[1\"q" } else { "\x1b[0\"q" });
}

/// Puts the cursor where `grid` has it, origin mode already as it has it.
fn put_cursor(out: &mut String, grid: &Grid) {
    if grid.origin && !(grid.top..=grid.bottom).contains(&grid.row) {
        // Outside the region under origin mode (DECSTBM puts the
        // cursor at the screen's top, and moves from there stay out of
        // the region): no CUP reaches it, so DECSTBM again, then down
        // by CUD, which outside the region stops only at the screen's
        // edge, then across.
        region(out, grid);
        if grid.row > 0 {
            let _ = write!(out, "\x1b[{}B", grid.row);
        }
        match grid.col < grid.cols {
            true => {
                let _ = write!(out, "\x1b[{}G", grid.col + 1);
            }
            false => {
                let last = last_cell(grid, grid.row);
                let _ = write!(out, "\x1b[{}G", last + 1);
                redraw(out, grid, grid.row, last);
            }
        }
    } else {
        let top = if grid.origin { grid.top } else { 0 };
        place(out, grid, grid.row, grid.col, top);
    }
}

/// Moves the cursor to `row`, `col`, addressed from row `top` (the
/// region's, under origin mode); a pending wrap (`col` past the last
/// column) by drawing the last cell again, which leaves the cursor there as
/// it was.
fn place(out: &mut String, grid: &Grid, row: u16, col: u16, top: u16) {
    let at = row.saturating_sub(top) + 1;
    if col < grid.cols {
        let _ = write!(out, "\x1b[{at};{}H", col + 1);
        return;
    }
    let last = last_cell(grid, row);
    let _ = write!(out, "\x1b[{at};{}H", last + 1);
    redraw(out, grid, row, last);
}

/// The column of the last cell of `row` (a wide one's first half).
fn last_cell(grid: &Grid, row: u16) -> usize {
    let cells = &grid.rows[usize::from(row)].cells;
    let mut last = cells.len() - 1;
    if cells[last].width == Width::Continuation && last > 0 {
        last -= 1;
    }
    last
}

/// Draws cell `col` of `row` again where the cursor is: a pending wrap.
fn redraw(out: &mut String, grid: &Grid, row: u16, col: usize) {
    draw_cell(out, &grid.rows[usize::from(row)], col);
}

/// Cell `col` of `row` where the cursor is, in its style and protection.
fn draw_cell(out: &mut String, row: &super::grid::Row, col: usize) {
    let cell = row.cells[col];
    pen(out, cell.style);
    protect(out, cell.protected());
    row.push_text(col, out);
    if cell.protected() {
        protect(out, false);
    }
}

/// Every cell that is not blank, each row from its first such cell.
fn draw(out: &mut String, grid: &Grid) {
    let (mut style, mut protected) = (None, false);
    for (r, row) in grid.rows.iter().enumerate() {
        let mut at = None;
        for (c, cell) in row.cells.iter().enumerate() {
            if cell.width == Width::Continuation || *cell == Cell::BLANK {
                continue;
            }
            if at != Some(c) {
                let _ = write!(out, "\x1b[{};{}H", r + 1, c + 1);
            }
            if style != Some(cell.style) {
                pen(out, cell.style);
                style = Some(cell.style);
            }
            if protected != cell.protected() {
                protected = cell.protected();
                protect(out, protected);
            }
            row.push_text(c, out);
            at = Some(c + if cell.width == Width::Wide { 2 } else { 1 });
        }
    }
    if protected {
        protect(out, false);
    }
    for r in 0..grid.rows.len().saturating_sub(1) {
        if grid.rows[r].wrapped {
            wrap(out, grid, r);
        }
    }
    out.push_str("\x1b[0m\x1b[0\"q");
}

/// Joins row `r` to the next as a wrap does (`reflow.rs` reads it): its
/// last cell drawn again and the next row's first after it, then what was
/// blank of the two blanked again (ECH keeps the wrap).
fn wrap(out: &mut String, grid: &Grid, r: usize) {
    let (row, next) = (&grid.rows[r], &grid.rows[r + 1]);
    let cols = grid.cols;
    let head = next.cells[0];
    if row.spacer && head.width == Width::Wide {
        // The wide character does not fit in the last cell, as it did not.
        let _ = write!(out, "\x1b[{};{}H", r + 1, cols);
        draw_cell(out, next, 0);
        return;
    }
    let last = last_cell(grid, r as u16);
    let _ = write!(out, "\x1b[{};{}H", r + 1, last + 1);
    let blank_last = row.cells[last] == Cell::BLANK;
    match blank_last {
        true => out.push_str("\x1b[0m "),
        false => redraw(out, grid, r as u16, last),
    }
    let blank_head = head == Cell::BLANK || head.width == Width::Continuation;
    match blank_head {
        true => out.push_str("\x1b[0m "),
        false => draw_cell(out, next, 0),
    }
    if blank_last {
        let _ = write!(out, "\x1b[0m\x1b[{};{}H\x1b[X", r + 1, last + 1);
    }
    if blank_head {
        let _ = write!(out, "\x1b[0m\x1b[{};1H\x1b[X", r + 2);
    }
}

fn region(out: &mut String, grid: &Grid) {
    if !grid.full_region() {
        let _ = write!(out, "\x1b[{};{}r", grid.top + 1, grid.bottom + 1);
    }
}

/// Puts the cursor, style, origin mode and charsets `grid` saved in place
/// and saves them with `save` (DECSC).
fn saved_cursor(out: &mut String, grid: &Grid, save: &str) {
    let Saved {
        row,
        col,
        style,
        protect: protected,
        origin,
        charsets: sets,
    } = grid.saved;
    if origin {
        out.push_str("\x1b[?6h");
    }
    // The region is set after this: under origin mode it is the screen.
    place(out, grid, row, col, 0);
    pen(out, style);
    protect(out, protected != 0);
    out.push_str(&charsets(sets));
    out.push_str(save);
    if origin {
        out.push_str("\x1b[?6l");
    }
    out.push_str("\x1b[0m\x1b[0\"q\x1b(B\x1b)B\x0f");
}

/// Designations of both slots and the shift, whatever they were before.
fn charsets(sets: Charsets) -> String {
    let slot = |graphics| if graphics { '0' } else { 'B' };
    let shift = if sets.shifted_out { '\x0e' } else { '\x0f' };
    format!("\x1b({}\x1b){}{shift}", slot(sets.graphics[0]), slot(sets.graphics[1]))
}

/// SGR that sets `style` whatever was set before.
fn pen(out: &mut String, style: Style) {
    out.push_str("\x1b[0");
    for (bit, code) in [
        (flag::BOLD, 1),
        (flag::DIM, 2),
        (flag::ITALIC, 3),
        (flag::BLINK, 5),
        (flag::INVERSE, 7),
        (flag::HIDDEN, 8),
        (flag::STRIKE, 9),
    ] {
        if style.flags & bit != 0 {
            let _ = write!(out, ";{code}");
        }
    }
    if style.flags & flag::UNDERLINE != 0 {
        let _ = write!(out, ";4:{}", style.underline as u8 + 1);
    }
    for (color, base) in [(style.fg, 38), (style.bg, 48), (style.underline_color, 58)] {
        match color {
            Color::Default => {}
            Color::Idx(i) => {
                let _ = write!(out, ";{base};5;{i}");
            }
            Color::Rgb(r, g, b) => {
                let _ = write!(out, ";{base};2;{r};{g};{b}");
            }
        }
    }
    out.push('m');
}
