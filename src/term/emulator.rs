//! The emulator: what each character and control does to the screen.
//!
//! `vte` splits the byte stream into characters, controls and escape
//! sequences; [`Emulator`] is its `Perform` and applies them to the main or
//! the alternate [`Grid`]. CSI sequences are in `csi.rs`, the bytes that
//! redraw a screen in `snapshot.rs`. The behaviour follows tmux where
//! terminals differ, since tmux is what users compare a pane with
//! (`tests/term_vs_tmux.rs` checks it).
//!
//! Printing is the hot path of a flood: a printable ASCII character over a
//! narrow cell costs a few compares and one cell write.

use unicode_width::UnicodeWidthChar as _;

use super::above::{Above, KEPT_ROWS, Nowhere};
use super::charset::Charsets;
use super::grid::{Cell, Grid, PLAIN, Row, Width};
use super::keyboard::KeyboardFlags;
use crate::values::screen::Style;

/// Where rows that scroll off the top of the main screen go.
pub(crate) trait Sink {
    /// Row `index` (counted from the first row that ever scrolled off)
    /// leaves the screen.
    fn scrolled(&mut self, index: u64, row: &Row);
    /// The rows from `index` on came back onto the screen (a taller or
    /// wider screen, as tmux pulls rows back from its history): `rows`,
    /// oldest first, are those last handed to [`Sink::scrolled`], and a
    /// row that scrolls off later is numbered from `index` again.
    /// `continues`: the row left above them wrapped.
    fn pulled(&mut self, index: u64, rows: &[Row], continues: bool) {
        let _ = (index, rows, continues);
    }
    /// The screen is now `cols` wide: a sink keeping rows may rewrap them
    /// at that width, as tmux rewraps its history.
    fn rewrap(&mut self, cols: u16) {
        let _ = cols;
    }
}

/// The main screen's [`Above`]: rows to the sink, numbered.
struct Counted<'a, S> {
    sink: &'a mut S,
    count: &'a mut u64,
}

impl<S: Sink> Above for Counted<'_, S> {
    fn gone(&mut self, row: &Row) {
        self.sink.scrolled(*self.count, row);
        *self.count += 1;
    }

    fn back(&mut self, rows: &[Row], continues: bool) {
        *self.count = self.count.saturating_sub(rows.len() as u64);
        self.sink.pulled(*self.count, rows, continues);
    }

    fn rewrap(&mut self, cols: u16) {
        self.sink.rewrap(cols);
    }
}

/// Mouse reporting asked for with DECSET (0 is off), numbered as
/// [`crate::values::screen::Modes::mouse`] numbers them.
pub(crate) mod mouse {
    pub(crate) const PRESS: u8 = 1;
    pub(crate) const PRESS_RELEASE: u8 = 2;
    pub(crate) const BUTTON_MOTION: u8 = 3;
    pub(crate) const ANY_MOTION: u8 = 4;
    /// Encodings, as [`crate::values::screen::Modes::mouse_encoding`].
    pub(crate) const UTF8: u8 = 1;
    pub(crate) const SGR: u8 = 2;
}

/// The modes a program sets that change what the screen does or what a
/// client sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Modes {
    pub(crate) app_cursor: bool,
    pub(crate) app_keypad: bool,
    pub(crate) bracketed_paste: bool,
    pub(crate) hide_cursor: bool,
    /// DECAWM: a character after the last column goes to the next row.
    pub(crate) autowrap: bool,
    /// IRM: characters push the rest of the row right.
    pub(crate) insert: bool,
    pub(crate) mouse: u8,
    pub(crate) mouse_encoding: u8,
}

impl Default for Modes {
    fn default() -> Modes {
        Modes {
            app_cursor: false,
            app_keypad: false,
            bracketed_paste: false,
            hide_cursor: false,
            autowrap: true,
            insert: false,
            mouse: 0,
            mouse_encoding: 0,
        }
    }
}

pub(crate) struct Emulator<S> {
    pub(crate) main: Grid,
    pub(crate) alt: Grid,
    pub(crate) alt_on: bool,
    pub(crate) rows: u16,
    pub(crate) cols: u16,
    /// The SGR state new characters take.
    pub(crate) style: Style,
    /// DECSCA: `Cell::PROTECTED` while `CSI 1 " q` holds, else 0; the bits
    /// new characters take.
    pub(crate) protect: u8,
    pub(crate) modes: Modes,
    pub(crate) charsets: Charsets,
    /// Tab stops, one per column.
    pub(crate) tabs: Vec<bool>,
    /// The last character printed, for REP.
    pub(crate) last: Option<char>,
    pub(crate) title: String,
    pub(crate) bells: u64,
    /// Bytes owed to the program on its input (query answers).
    pub(crate) replies: Vec<u8>,
    /// Rows pushed off the top of the main screen so far.
    pub(crate) scrolled_lines: u64,
    /// Where `CSI ? 1049 h` left the main screen's cursor and the style
    /// then, for `CSI ? 1049 l`: a slot of its own, not DECSC's, and
    /// without the charsets, as in tmux (a program that saved the cursor,
    /// chose line drawing and used the alternate screen must not leave the
    /// shell's prompt in line drawing after its DECRC).
    pub(crate) alt_saved: Option<(u16, u16, Style)>,
    /// The kitty keyboard protocol's flags, a stack per screen.
    pub(crate) keyboard: KeyboardFlags,
    /// The charsets when `CSI ? 1049 h` came, which `CSI ? 1049 l` brings
    /// back, as tmux: line drawing chosen on the alternate screen ends with
    /// it (alacritty's `saved_cursor` recording).
    pub(crate) alt_charsets: Charsets,
    pub(crate) sink: S,
}

fn default_tabs(cols: u16) -> Vec<bool> {
    (0..cols).map(|c| c > 0 && c % 8 == 0).collect()
}

impl<S: Sink> Emulator<S> {
    /// A blank screen; the caller makes sure neither dimension is 0.
    pub(crate) fn new(rows: u16, cols: u16, sink: S) -> Emulator<S> {
        Emulator {
            main: Grid::new(rows, cols).keeping(KEPT_ROWS),
            alt: Grid::new(rows, cols),
            alt_on: false,
            rows,
            cols,
            style: PLAIN,
            protect: 0,
            modes: Modes::default(),
            charsets: Charsets::default(),
            tabs: default_tabs(cols),
            last: None,
            title: String::new(),
            bells: 0,
            replies: Vec::new(),
            scrolled_lines: 0,
            alt_saved: None,
            keyboard: KeyboardFlags::default(),
            alt_charsets: Charsets::default(),
            sink,
        }
    }

    /// The grid being drawn on.
    pub(crate) fn grid(&self) -> &Grid {
        if self.alt_on { &self.alt } else { &self.main }
    }

    pub(crate) fn grid_mut(&mut self) -> &mut Grid {
        if self.alt_on { &mut self.alt } else { &mut self.main }
    }

    /// Runs `f` on the grid being drawn on, with where its scrolled-off
    /// rows go: the sink for the main screen; nowhere for the alternate one
    /// (a full-screen program's redraw is not history).
    pub(crate) fn with_grid<R>(&mut self, f: impl FnOnce(&mut Grid, Style, &mut dyn FnMut(&Row)) -> R) -> R {
        let style = self.style;
        if self.alt_on {
            return f(&mut self.alt, style, &mut |_| {});
        }
        let (sink, count) = (&mut self.sink, &mut self.scrolled_lines);
        f(&mut self.main, style, &mut |row| {
            sink.scrolled(*count, row);
            *count += 1;
        })
    }

    pub(crate) fn linefeed(&mut self) {
        self.with_grid(|grid, style, mut gone| grid.linefeed(style, &mut gone));
    }

    /// `(row, col)`; `col` is `cols` while a wrap is pending.
    pub(crate) fn cursor(&self) -> (u16, u16) {
        let grid = self.grid();
        (grid.row, grid.col)
    }

    fn print_char(&mut self, c: char) {
        // As tmux: the replacement character of bad UTF-8 and C1 controls
        // that arrived as UTF-8 are not drawn.
        if c == '\u{fffd}' || ('\u{80}'..'\u{a0}').contains(&c) {
            return;
        }
        let c = self.charsets.map(c);
        let width = if (' '..'\u{7f}').contains(&c) {
            1
        } else {
            match c.width() {
                Some(0) => return self.combine(c),
                Some(w) => w.min(2) as u16,
                None => return,
            }
        };
        if width > self.cols {
            return;
        }
        if self.grid().col + width > self.cols {
            self.wrap(width);
        }
        let (style, protect, insert) = (self.style, self.protect, self.modes.insert);
        let grid = self.grid_mut();
        let col = usize::from(grid.col);
        let row = &mut grid.rows[usize::from(grid.row)];
        if insert {
            row.insert(col, usize::from(width), style);
        }
        row.split_wide(col, style);
        if width == 2 {
            row.split_wide(col + 1, style);
            row.cells[col + 1] = Cell {
                style,
                width: Width::Continuation,
                bits: protect,
                ..Cell::BLANK
            };
        }
        row.cells[col] = Cell {
            ch: c,
            style,
            width: if width == 2 { Width::Wide } else { Width::Narrow },
            bits: protect,
        };
        row.touch(col + usize::from(width));
        grid.col += width;
        self.last = Some(c);
    }

    /// A character of `width` does not fit before the edge: on to the next
    /// row, or with autowrap off, over the last columns.
    fn wrap(&mut self, width: u16) {
        let cols = self.cols;
        if !self.modes.autowrap {
            self.grid_mut().col = cols - width;
            return;
        }
        let grid = self.grid_mut();
        let row = &mut grid.rows[usize::from(grid.row)];
        row.wrapped = true;
        row.spacer = grid.col < cols;
        grid.col = 0;
        self.linefeed();
    }

    /// LF, IND, NEL: the cursor's row ends here, whatever wrapped it before
    /// (as tmux clears its `GRID_LINE_WRAPPED`).
    fn hard_linefeed(&mut self) {
        let grid = self.grid_mut();
        grid.rows[usize::from(grid.row)].wrapped = false;
        self.linefeed();
    }

    /// A zero-width character joins the one before the cursor.
    fn combine(&mut self, mark: char) {
        let grid = self.grid_mut();
        if grid.col == 0 {
            return;
        }
        let mut col = usize::from(grid.col) - 1;
        let row = &mut grid.rows[usize::from(grid.row)];
        if row.cells[col].width == Width::Continuation && col > 0 {
            col -= 1;
        }
        row.combine(col, mark);
    }

    pub(crate) fn repeat(&mut self, count: u16) {
        let Some(c) = self.last else { return };
        // REP of more than a screenful draws nothing more than a screenful.
        let most = usize::from(self.rows) * usize::from(self.cols);
        for _ in 0..usize::from(count).min(most) {
            self.print_char(c);
        }
    }

    fn backspace(&mut self) {
        let cols = self.cols;
        let grid = self.grid_mut();
        if grid.col > 0 {
            grid.col = grid.col.min(cols) - 1;
        }
    }

    /// HT (`count` times forward) or CBT (backward).
    pub(crate) fn tab(&mut self, count: u16, forward: bool) {
        let cols = self.cols;
        let mut col = self.grid().col;
        if forward && col >= cols - 1 {
            return;
        }
        col = col.min(cols - 1);
        for _ in 0..count {
            col = if forward {
                (col + 1..cols).find(|&c| self.tabs[usize::from(c)]).unwrap_or(cols - 1)
            } else {
                (0..col).rev().find(|&c| self.tabs[usize::from(c)]).unwrap_or(0)
            };
        }
        self.grid_mut().col = col;
    }

    pub(crate) fn clear_tabs(&mut self, all: bool) {
        if all {
            self.tabs.fill(false);
        } else {
            let col = self.grid().col_index();
            self.tabs[col] = false;
        }
    }

    /// DECSC. One slot for both screens, kept in the main grid's `saved`
    /// (which follows it through resizes): a cursor saved on the alternate
    /// screen is restored on the main one, as in tmux.
    pub(crate) fn save_cursor(&mut self) {
        let (style, protect, charsets) = (self.style, self.protect, self.charsets);
        let grid = self.grid();
        self.main.saved = super::grid::Saved {
            row: grid.row,
            col: grid.col,
            style,
            protect,
            origin: grid.origin,
            charsets,
        };
    }

    pub(crate) fn restore_cursor(&mut self) {
        let (rows, cols) = (self.rows, self.cols);
        let saved = self.main.saved;
        let grid = self.grid_mut();
        grid.row = saved.row.min(rows - 1);
        grid.col = saved.col.min(cols);
        grid.origin = saved.origin;
        grid.keep_in_region();
        self.style = saved.style;
        self.protect = saved.protect;
        self.charsets = saved.charsets;
    }

    /// Switches to a blank alternate screen, the cursor where it was.
    pub(crate) fn enter_alt(&mut self) {
        if self.alt_on {
            return;
        }
        self.alt = Grid::new(self.rows, self.cols);
        (self.alt.row, self.alt.col) = (self.main.row, self.main.col);
        self.alt_on = true;
    }

    /// Back to the main screen; unless `restore` (1049, which restores the
    /// saved cursor after), the cursor stays where it was, as in tmux.
    pub(crate) fn leave_alt(&mut self, restore: bool) {
        if !self.alt_on {
            return;
        }
        self.alt_on = false;
        // The cursor 1049 brings back follows its character through the
        // rewrap.
        let saved = self.alt_saved.filter(|_| restore);
        if let Some((row, col, _)) = saved {
            (self.main.row, self.main.col) = (row, col);
        }
        self.fit_main();
        if let Some((_, _, style)) = saved {
            self.alt_saved = Some((self.main.row, self.main.col, style));
        }
        if !restore {
            (self.main.row, self.main.col) = (self.alt.row, self.alt.col);
            self.main.keep_in_region();
        }
    }

    /// RIS: everything as a fresh emulator has it but the title, the
    /// counts and what is owed to the program.
    fn reset(&mut self) {
        self.main = Grid::new(self.rows, self.cols).keeping(KEPT_ROWS);
        self.alt = Grid::new(self.rows, self.cols);
        self.alt_on = false;
        self.style = PLAIN;
        self.protect = 0;
        self.modes = Modes::default();
        self.charsets = Charsets::default();
        self.tabs = default_tabs(self.cols);
        self.last = None;
        self.alt_saved = None;
        self.keyboard = KeyboardFlags::default();
    }

    /// DECALN: the screen filled with `E`, for aligning a CRT.
    fn alignment_test(&mut self) {
        let grid = self.grid_mut();
        for row in &mut grid.rows {
            row.clear(PLAIN);
            row.cells.fill(Cell { ch: 'E', ..Cell::BLANK });
            row.touch(row.cells.len());
        }
        (grid.top, grid.bottom) = (0, grid.height() - 1);
        grid.home();
    }

    /// A new size; a zero dimension is the caller's to prevent. Rows the
    /// main screen pushes off the top go to the sink.
    pub(crate) fn resize(&mut self, rows: u16, cols: u16) {
        if (rows, cols) == (self.rows, self.cols) {
            return;
        }
        let old_cols = self.cols;
        (self.rows, self.cols) = (rows, cols);
        // Under the alternate screen the main one keeps its size until the
        // program leaves, then rewraps once, as in tmux (`fit_main`).
        if !self.alt_on {
            self.fit_main();
        }
        // The alternate screen keeps no rows above it to pull back, and
        // crops: a full-screen program redraws at the new size (as tmux).
        self.alt.resize(rows, cols, false, &mut Nowhere);
        self.tabs.resize(usize::from(cols), false);
        for c in old_cols..cols {
            self.tabs[usize::from(c)] = c % 8 == 0;
        }
    }

    /// Brings the main screen to the screen's size, rewrapping its lines;
    /// rows it pushes off go to the sink.
    fn fit_main(&mut self) {
        let (rows, cols) = (self.rows, self.cols);
        if (self.main.height(), self.main.cols) == (rows, cols) {
            return;
        }
        let mut above = Counted {
            sink: &mut self.sink,
            count: &mut self.scrolled_lines,
        };
        self.main.resize(rows, cols, true, &mut above);
    }

    /// The main screen at the screen's size: itself, or under the
    /// alternate screen after a resize, a copy rewrapped as leaving will.
    pub(crate) fn main_now(&self) -> std::borrow::Cow<'_, Grid> {
        let (rows, cols) = (self.rows, self.cols);
        if (self.main.height(), self.main.cols) == (rows, cols) {
            return std::borrow::Cow::Borrowed(&self.main);
        }
        let mut main = self.main.clone();
        main.resize(rows, cols, true, &mut Nowhere);
        std::borrow::Cow::Owned(main)
    }

    /// Each row of the screen shown, as text with trailing blanks trimmed.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.grid().rows.iter().map(Row::text).collect()
    }
}

impl<S: Sink> vte::Perform for Emulator<S> {
    #[inline]
    fn print(&mut self, c: char) {
        // The common case, kept small enough to inline into the parser's
        // loop: ASCII in the ASCII set, not in insert mode, onto a narrow
        // cell with room before the edge.
        if (' '..='~').contains(&c)
            && !self.charsets.graphics[usize::from(self.charsets.shifted_out)]
            && !self.modes.insert
        {
            let (style, protect, cols) = (self.style, self.protect, self.cols);
            let grid = if self.alt_on { &mut self.alt } else { &mut self.main };
            if grid.col < cols
                && let Some(row) = grid.rows.get_mut(usize::from(grid.row))
                && let Some(cell) = row.cells.get_mut(usize::from(grid.col))
                && cell.width == Width::Narrow
            {
                *cell = Cell {
                    ch: c,
                    style,
                    width: Width::Narrow,
                    bits: protect,
                };
                row.touch(usize::from(grid.col) + 1);
                grid.col += 1;
                self.last = Some(c);
                return;
            }
        }
        self.print_char(c);
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            0x07 => self.bells += 1,
            0x08 => self.backspace(),
            0x09 => self.tab(1, true),
            0x0a..=0x0c => self.hard_linefeed(),
            0x0d => self.grid_mut().col = 0,
            0x0e => self.charsets.shifted_out = true,
            0x0f => self.charsets.shifted_out = false,
            _ => {}
        }
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], ignore: bool, byte: u8) {
        if ignore {
            return;
        }
        match (intermediates, byte) {
            ([], b'7') => self.save_cursor(),
            ([], b'8') => self.restore_cursor(),
            ([], b'=') => self.modes.app_keypad = true,
            ([], b'>') => self.modes.app_keypad = false,
            ([], b'D') => self.hard_linefeed(),
            ([], b'E') => {
                self.grid_mut().col = 0;
                self.hard_linefeed();
            }
            ([], b'H') => {
                let col = self.grid().col_index();
                self.tabs[col] = true;
            }
            ([], b'M') => {
                let style = self.style;
                self.grid_mut().reverse_index(style);
            }
            ([], b'c') => self.reset(),
            ([b'('], f) => self.charsets.designate(0, f),
            ([b')'], f) => self.charsets.designate(1, f),
            ([b'#'], b'8') => self.alignment_test(),
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &vte::Params, intermediates: &[u8], ignore: bool, action: char) {
        if !ignore {
            self.csi(params, intermediates, action);
        }
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], _bell_terminated: bool) {
        // `vte` splits an OSC string at every ';': a title holding one is
        // joined back.
        if let [b"0" | b"2", title @ ..] = params
            && !title.is_empty()
        {
            self.title = String::from_utf8_lossy(&title.join(&b';')).into_owned();
        }
    }
}
