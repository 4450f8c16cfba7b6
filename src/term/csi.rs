//! Control sequences (`CSI … final`): cursor movement, erasing, scrolling,
//! colours and modes. Queries are answered in `queries.rs`.

use super::emulator::{Emulator, Sink, mouse};
use super::grid::PLAIN;
use crate::values::screen::{Color, Style, Underline, flag};

/// Parameter `i`, or `default` when it is missing or 0.
fn arg(params: &vte::Params, i: usize, default: u16) -> u16 {
    match params.iter().nth(i).and_then(|p| p.first().copied()) {
        None | Some(0) => default,
        Some(n) => n,
    }
}

impl<S: Sink> Emulator<S> {
    pub(crate) fn csi(&mut self, params: &vte::Params, intermediates: &[u8], action: char) {
        let n = arg(params, 0, 1);
        match (intermediates, action) {
            ([], '@') => self.edit_row(|row, col, style| row.insert(col, usize::from(n), style)),
            ([], 'A') => self.grid_mut().move_rows(true, n),
            ([], 'B' | 'e') => self.grid_mut().move_rows(false, n),
            ([], 'C' | 'a') => {
                let cols = self.cols;
                let grid = self.grid_mut();
                grid.col = (grid.col_index() as u16).saturating_add(n).min(cols - 1);
            }
            ([], 'D') => {
                let grid = self.grid_mut();
                grid.col = grid.col.saturating_sub(n);
            }
            ([], 'E' | 'F') => {
                let grid = self.grid_mut();
                grid.col = 0;
                grid.move_rows(action == 'F', n);
            }
            ([], 'G' | '`') => {
                let cols = self.cols;
                self.grid_mut().col = (n - 1).min(cols - 1);
            }
            ([], 'H' | 'f') => self.grid_mut().go_to(n - 1, arg(params, 1, 1) - 1),
            ([], 'I') => self.tab(n, true),
            ([], 'Z') => self.tab(n, false),
            ([], 'J') => self.erase_display(arg(params, 0, 0)),
            // DECSED / DECSEL: ED / EL sparing what DECSCA protected.
            ([b'?'], 'J' | 'K') => {
                let style = self.style;
                self.grid_mut().erase_selective(action == 'K', arg(params, 0, 0), style);
            }
            // DECSCA: 1 protects what is printed next, 0 and 2 do not.
            ([b'"'], 'q') => {
                self.protect = match arg(params, 0, 0) {
                    1 => super::grid::Cell::PROTECTED,
                    _ => 0,
                };
            }
            ([], 'K') => {
                let style = self.style;
                let grid = self.grid_mut();
                match arg(params, 0, 0) {
                    0 => grid.erase_right(style),
                    1 => grid.erase_left(style),
                    2 => grid.rows[usize::from(grid.row)].clear(style),
                    _ => {}
                }
            }
            ([], 'L') => {
                let style = self.style;
                self.grid_mut().insert_lines(n, style);
            }
            ([], 'M') => {
                let style = self.style;
                self.grid_mut().delete_lines(n, style);
            }
            ([], 'P') => self.edit_row(|row, col, style| row.delete(col, usize::from(n), style)),
            ([], 'S') => self.with_grid(|grid, style, mut gone| grid.scroll_up(n, style, &mut gone)),
            ([], 'T') => {
                let style = self.style;
                self.grid_mut().scroll_down(n, style);
            }
            ([], 'X') => {
                let style = self.style;
                self.grid_mut().erase_chars(n, style);
            }
            ([], 'b') => self.repeat(n),
            ([], 'd') => {
                let grid = self.grid_mut();
                let col = grid.col;
                grid.go_to(n - 1, 0);
                grid.col = col;
            }
            ([], 'g') => match arg(params, 0, 0) {
                0 => self.clear_tabs(false),
                3 => self.clear_tabs(true),
                _ => {}
            },
            ([], 'h' | 'l') => {
                if params.iter().any(|p| p.first() == Some(&4)) {
                    self.modes.insert = action == 'h';
                }
            }
            ([], 'm') => self.sgr(params),
            ([], 'r') => {
                let rows = self.rows;
                self.grid_mut()
                    .set_region(arg(params, 0, 1) - 1, arg(params, 1, rows) - 1);
            }
            // `vte` hands a bare `CSI s` one empty parameter; with margins
            // (`CSI l;r s`, DECSLRM, not kept) it is not a save.
            ([], 's') if params.len() <= 1 && arg(params, 0, 0) == 0 => self.save_cursor(),
            ([], 'u') if params.len() <= 1 && arg(params, 0, 0) == 0 => self.restore_cursor(),
            // The kitty keyboard protocol (`keyboard.rs`).
            ([b'>'], 'u') => {
                let alt = self.alt_on;
                self.keyboard.push(alt, arg(params, 0, 0));
            }
            ([b'<'], 'u') => {
                let alt = self.alt_on;
                self.keyboard.pop(alt, arg(params, 0, 1));
            }
            ([b'='], 'u') => {
                let alt = self.alt_on;
                self.keyboard.set(alt, arg(params, 0, 0), arg(params, 1, 1));
            }
            ([b'?'], 'h' | 'l') => {
                for p in params.iter() {
                    self.private_mode(p.first().copied().unwrap_or(0), action == 'h');
                }
            }
            _ => {
                let mut out = std::mem::take(&mut self.replies);
                super::queries::answer(self, intermediates, params, action, &mut out);
                self.replies = out;
            }
        }
    }

    /// Runs `f` on the cursor's row at the cursor's column, unless a wrap is
    /// pending (ICH and DCH do nothing there, as in tmux).
    fn edit_row(&mut self, f: impl FnOnce(&mut super::grid::Row, usize, crate::values::screen::Style)) {
        let style = self.style;
        let grid = self.grid_mut();
        if grid.col >= grid.cols {
            return;
        }
        let col = usize::from(grid.col);
        f(&mut grid.rows[usize::from(grid.row)], col, style);
    }

    fn erase_display(&mut self, how: u16) {
        let style = self.style;
        let grid = self.grid_mut();
        match how {
            0 => grid.erase_below(style),
            1 => grid.erase_above(style),
            2 => grid.erase_all(style),
            // The scrollback: the rows kept above the screen are
            // forgotten, so growing it brings none back, as tmux clears
            // its history.
            3 => grid.kept.clear(),
            _ => {}
        }
    }

    /// DECSET (`on`) or DECRST of one private mode.
    fn private_mode(&mut self, mode: u16, on: bool) {
        let set_mouse = |current: &mut u8, value: u8| {
            if on {
                *current = value;
            } else if *current == value {
                *current = 0;
            }
        };
        match mode {
            1 => self.modes.app_cursor = on,
            // DECCOLM: tmux clears and homes but keeps the size (the
            // client's, docs/design.md §6); see tests/term_vs_tmux.
            3 => {
                let style = self.style;
                let grid = self.grid_mut();
                grid.erase_all(style);
                grid.home();
            }
            6 => {
                let grid = self.grid_mut();
                grid.origin = on;
                grid.home();
            }
            7 => self.modes.autowrap = on,
            9 => set_mouse(&mut self.modes.mouse, mouse::PRESS),
            25 => self.modes.hide_cursor = !on,
            47 | 1047 if on => self.enter_alt(),
            // What 1049 saved belongs to the alternate screen it entered:
            // left another way, it is gone, so a later 1049l without its
            // 1049h restores nothing.
            47 | 1047 => {
                self.leave_alt(false);
                self.alt_saved = None;
            }
            1000 => set_mouse(&mut self.modes.mouse, mouse::PRESS_RELEASE),
            1002 => set_mouse(&mut self.modes.mouse, mouse::BUTTON_MOTION),
            1003 => set_mouse(&mut self.modes.mouse, mouse::ANY_MOTION),
            1005 => set_mouse(&mut self.modes.mouse_encoding, mouse::UTF8),
            1006 => set_mouse(&mut self.modes.mouse_encoding, mouse::SGR),
            1048 if on => self.save_cursor(),
            1048 => self.restore_cursor(),
            1049 if on => {
                if !self.alt_on {
                    self.alt_saved = Some((self.main.row, self.main.col, self.style));
                    self.alt_charsets = self.charsets;
                }
                self.enter_alt();
            }
            1049 if self.alt_on => {
                self.leave_alt(true);
                if let Some((row, col, style)) = self.alt_saved.take() {
                    self.charsets = self.alt_charsets;
                    (self.main.row, self.main.col) = (row.min(self.rows - 1), col.min(self.cols));
                    self.main.keep_in_region();
                    self.style = style;
                }
            }
            2004 => self.modes.bracketed_paste = on,
            _ => {}
        }
    }

    /// SGR: the style new characters take. Unknown attributes are skipped
    /// (an unknown colour's own parameters with it, or `58;5;1` would read
    /// as blink and bold).
    fn sgr(&mut self, params: &vte::Params) {
        let mut style = self.style;
        let mut it = params.iter();
        if params.is_empty() {
            style = PLAIN;
        }
        let underline = |style: &mut Style, how: Option<Underline>| match how {
            Some(how) => {
                style.flags |= flag::UNDERLINE;
                style.underline = how;
            }
            None => {
                style.flags &= !flag::UNDERLINE;
                style.underline = Underline::Single;
            }
        };
        while let Some(p) = it.next() {
            match p {
                [0] => style = PLAIN,
                [1] => style.flags |= flag::BOLD,
                [2] => style.flags |= flag::DIM,
                [3] => style.flags |= flag::ITALIC,
                [4, 0] | [24] => underline(&mut style, None),
                [4] | [4, 1] => underline(&mut style, Some(Underline::Single)),
                [4, 2] | [21] => underline(&mut style, Some(Underline::Double)),
                [4, 3] => underline(&mut style, Some(Underline::Curly)),
                [4, 4] => underline(&mut style, Some(Underline::Dotted)),
                [4, 5] => underline(&mut style, Some(Underline::Dashed)),
                // Slow and rapid blink are one blink, as in tmux.
                [5] | [6] => style.flags |= flag::BLINK,
                [7] => style.flags |= flag::INVERSE,
                [8] => style.flags |= flag::HIDDEN,
                [9] => style.flags |= flag::STRIKE,
                [22] => style.flags &= !(flag::BOLD | flag::DIM),
                [23] => style.flags &= !flag::ITALIC,
                [25] => style.flags &= !flag::BLINK,
                [27] => style.flags &= !flag::INVERSE,
                [28] => style.flags &= !flag::HIDDEN,
                [29] => style.flags &= !flag::STRIKE,
                [n @ 30..=37] => style.fg = Color::Idx((n - 30) as u8),
                [38, rest @ ..] => {
                    if let Some(c) = extended_color(rest, &mut it) {
                        style.fg = c;
                    }
                }
                [39] => style.fg = Color::Default,
                [n @ 40..=47] => style.bg = Color::Idx((n - 40) as u8),
                [48, rest @ ..] => {
                    if let Some(c) = extended_color(rest, &mut it) {
                        style.bg = c;
                    }
                }
                [49] => style.bg = Color::Default,
                [58, rest @ ..] => {
                    if let Some(c) = extended_color(rest, &mut it) {
                        style.underline_color = c;
                    }
                }
                [59] => style.underline_color = Color::Default,
                [n @ 90..=97] => style.fg = Color::Idx((n - 90 + 8) as u8),
                [n @ 100..=107] => style.bg = Color::Idx((n - 100 + 8) as u8),
                _ => {}
            }
        }
        self.style = style;
    }
}

/// The colour after a 38 or 48: in its sub-parameters (`38:5:n`,
/// `38:2:r:g:b`, `38:2:space:r:g:b`) or in the parameters after it
/// (`38;5;n`, `38;2;r;g;b`), which are then taken.
fn extended_color<'a>(sub: &[u16], it: &mut impl Iterator<Item = &'a [u16]>) -> Option<Color> {
    let byte = |n: u16| u8::try_from(n).ok();
    match sub {
        [5, i] => byte(*i).map(Color::Idx),
        [2, r, g, b] | [2, _, r, g, b] => Some(Color::Rgb(byte(*r)?, byte(*g)?, byte(*b)?)),
        [] => {
            let mut next = || it.next().and_then(|p| p.first().copied());
            match next()? {
                5 => byte(next()?).map(Color::Idx),
                2 => {
                    let (r, g, b) = (next()?, next()?, next()?);
                    Some(Color::Rgb(byte(r)?, byte(g)?, byte(b)?))
                }
                _ => None,
            }
        }
        _ => None,
    }
}
