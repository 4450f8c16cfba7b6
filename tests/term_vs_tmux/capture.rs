//! tmux's screen as `capture-pane -p -e -N` prints it, read back into
//! text and per-cell attributes, and ours in the same terms.
//!
//! The SGR reader here is written apart from `agents::term`'s, from the
//! ECMA-48 / xterm tables, so the comparison checks ours rather than
//! repeating it.

use agents::protocol::screen::{Color, Glyph, Underline, flag};
use agents::term::Terminal;
use unicode_width::UnicodeWidthChar as _;

/// Attribute bits of a [`Pen`] (the test's own numbering).
pub mod attr {
    pub const BOLD: u16 = 1;
    pub const DIM: u16 = 2;
    pub const ITALIC: u16 = 4;
    pub const BLINK: u16 = 8;
    pub const INVERSE: u16 = 16;
    pub const HIDDEN: u16 = 32;
    pub const STRIKE: u16 = 64;
}

/// What a cell looks like besides its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pen {
    pub fg: Color,
    pub bg: Color,
    pub attrs: u16,
    /// 0 none, 1 single, 2 double, 3 curly, 4 dotted, 5 dashed (`SGR 4:n`).
    pub underline: u8,
    pub underline_color: Color,
}

/// One row: a pen for each column tmux printed, `None` for the right half
/// of a wide character. tmux leaves out cells past the last one written
/// (even with `-N`), so a row may be shorter than the screen.
pub type PenRow = Vec<Option<Pen>>;

/// A cell as `capture-pane -e` printed it: its text (a base character and
/// any combining ones after it; line drawing mapped through the DEC table)
/// and pen. The right half of a wide character is a cell of its own, with
/// no text, marked `tail`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printed {
    pub text: String,
    pub pen: Pen,
    pub tail: bool,
}

/// Reads the whole capture: tmux carries the SGR state from one line to
/// the next, as a terminal printing it would.
pub fn pens(captured: &str) -> Vec<PenRow> {
    cells(captured)
        .into_iter()
        .map(|row| row.into_iter().map(|c| (!c.tail).then_some(c.pen)).collect())
        .collect()
}

/// The capture cell by cell, row by row.
pub fn cells(captured: &str) -> Vec<Vec<Printed>> {
    let mut pen = Pen::default();
    let mut rows = Vec::new();
    for line in captured.lines() {
        let mut row: Vec<Printed> = Vec::new();
        let mut line_drawing = false;
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\x1b' => {
                    if chars.next() != Some('[') {
                        continue;
                    }
                    let mut params = String::new();
                    for c in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            if c == 'm' {
                                apply_sgr(&mut pen, &params);
                            }
                            break;
                        }
                        params.push(c);
                    }
                }
                // tmux shows line-drawing cells as ASCII letters between SO and SI.
                '\x0e' => line_drawing = true,
                '\x0f' => line_drawing = false,
                c => {
                    let c = if line_drawing { dec_graphics(c) } else { c };
                    match (c.width(), row.last_mut()) {
                        (Some(0), Some(last)) => last.text.push(c),
                        (width, _) => {
                            row.push(Printed {
                                text: c.to_string(),
                                pen,
                                tail: false,
                            });
                            if width == Some(2) {
                                row.push(Printed {
                                    text: String::new(),
                                    pen,
                                    tail: true,
                                });
                            }
                        }
                    }
                }
            }
        }
        rows.push(row);
    }
    rows
}

/// The DEC special graphics table (VT100 User Guide table 3-9), written out
/// independently of the one in `agents::term` so the tests check it.
pub fn dec_graphics(c: char) -> char {
    const FROM: &str = "_`abcdefghijklmnopqrstuvwxyz{|}~";
    const TO: &str = "\u{a0}◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·";
    FROM.chars()
        .position(|from| from == c)
        .and_then(|index| TO.chars().nth(index))
        .unwrap_or(c)
}

/// One SGR's parameters (`;`-separated, each maybe with `:` sub-parameters).
fn apply_sgr(pen: &mut Pen, params: &str) {
    let groups: Vec<Vec<Option<u16>>> = params
        .split(';')
        .map(|g| g.split(':').map(|n| n.parse().ok()).collect())
        .collect();
    let mut i = 0;
    while i < groups.len() {
        let g = &groups[i];
        let head = g[0].unwrap_or(0);
        i += 1;
        let on = |pen: &mut Pen, bit: u16| pen.attrs |= bit;
        let off = |pen: &mut Pen, bit: u16| pen.attrs &= !bit;
        match head {
            0 => *pen = Pen::default(),
            1 => on(pen, attr::BOLD),
            2 => on(pen, attr::DIM),
            3 => on(pen, attr::ITALIC),
            4 => pen.underline = g.get(1).copied().flatten().unwrap_or(1).min(5) as u8,
            5 | 6 => on(pen, attr::BLINK),
            7 => on(pen, attr::INVERSE),
            8 => on(pen, attr::HIDDEN),
            9 => on(pen, attr::STRIKE),
            21 => pen.underline = 2,
            22 => off(pen, attr::BOLD | attr::DIM),
            23 => off(pen, attr::ITALIC),
            24 => pen.underline = 0,
            25 => off(pen, attr::BLINK),
            27 => off(pen, attr::INVERSE),
            28 => off(pen, attr::HIDDEN),
            29 => off(pen, attr::STRIKE),
            n @ 30..=37 => pen.fg = Color::Idx((n - 30) as u8),
            n @ 40..=47 => pen.bg = Color::Idx((n - 40) as u8),
            n @ 90..=97 => pen.fg = Color::Idx((n - 90 + 8) as u8),
            n @ 100..=107 => pen.bg = Color::Idx((n - 100 + 8) as u8),
            39 => pen.fg = Color::Default,
            49 => pen.bg = Color::Default,
            59 => pen.underline_color = Color::Default,
            n @ (38 | 48 | 58) => {
                // Sub-parameters (`38:5:n`, `38:2::r:g:b`) or the groups after.
                let numbers: Vec<u16> = if g.len() > 1 {
                    let mut rest: Vec<u16> = g[1..].iter().map(|n| n.unwrap_or(0)).collect();
                    if rest.first() == Some(&2) && rest.len() == 5 {
                        rest.remove(1); // the colour space id
                    }
                    rest
                } else {
                    let take = match groups.get(i).and_then(|g| g[0]) {
                        Some(5) => 2,
                        Some(2) => 4,
                        _ => 0,
                    };
                    let taken = groups[i..(i + take).min(groups.len())]
                        .iter()
                        .map(|g| g[0].unwrap_or(0))
                        .collect();
                    i += take;
                    taken
                };
                let color = match numbers[..] {
                    [5, n] => Color::Idx(n as u8),
                    [2, r, g, b] => Color::Rgb(r as u8, g as u8, b as u8),
                    _ => continue,
                };
                match n {
                    38 => pen.fg = color,
                    48 => pen.bg = color,
                    _ => pen.underline_color = color,
                }
            }
            _ => {}
        }
    }
}

/// Our screen's pens, row by row, every column.
pub fn our_pens(term: &Terminal) -> Vec<PenRow> {
    let (rows, cols) = term.size();
    (0..rows)
        .map(|r| {
            (0..cols)
                .map(|c| {
                    let cell = term.cell(r, c)?;
                    (cell.glyph != Glyph::Continuation).then(|| pen_of(cell.style))
                })
                .collect()
        })
        .collect()
}

fn pen_of(style: agents::protocol::screen::Style) -> Pen {
    let mut attrs = 0;
    for (bit, a) in [
        (flag::BOLD, attr::BOLD),
        (flag::DIM, attr::DIM),
        (flag::ITALIC, attr::ITALIC),
        (flag::BLINK, attr::BLINK),
        (flag::INVERSE, attr::INVERSE),
        (flag::HIDDEN, attr::HIDDEN),
        (flag::STRIKE, attr::STRIKE),
    ] {
        if style.flags & bit != 0 {
            attrs |= a;
        }
    }
    let underline = match (style.flags & flag::UNDERLINE != 0, style.underline) {
        (false, _) => 0,
        (true, Underline::Single) => 1,
        (true, Underline::Double) => 2,
        (true, Underline::Curly) => 3,
        (true, Underline::Dotted) => 4,
        (true, Underline::Dashed) => 5,
    };
    Pen {
        fg: style.fg,
        bg: style.bg,
        attrs,
        underline,
        underline_color: style.underline_color,
    }
}

/// Every cell both sides printed whose pens differ, as report lines (at
/// most `max`); empty when they agree.
pub fn pen_differences(ours: &[PenRow], tmux: &[PenRow], max: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (r, (a, b)) in ours.iter().zip(tmux).enumerate() {
        for (c, (a, b)) in a.iter().zip(b).enumerate() {
            if let (Some(a), Some(b)) = (a, b)
                && a != b
            {
                out.push(format!("cell ({r}, {c}) ours {a:?}\n             tmux {b:?}"));
                if out.len() == max {
                    return out;
                }
            }
        }
    }
    out
}
