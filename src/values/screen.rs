//! A run's screen as values, shared by the emulator (`term/`) that makes
//! them and the wire (`protocol/`) that carries them: a cell (glyph,
//! style, width), the modes a client mirrors, the step from one screen to
//! the next ([`ScreenUpdate`]) and the screen's size from a log offset on
//! ([`SizeChange`]). Their encodings are the wire's: `ScreenUpdate`'s
//! (`protocol::screen`) and the `sizes` file's (`protocol::run_files`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Color {
    #[default]
    Default,
    Idx(u8),
    Rgb(u8, u8, u8),
}

/// Cell attributes, as bits of [`Style::flags`].
pub mod flag {
    pub const BOLD: u8 = 1;
    pub const DIM: u8 = 2;
    pub const ITALIC: u8 = 4;
    pub const UNDERLINE: u8 = 8;
    pub const INVERSE: u8 = 16;
    /// Bits an older client ignores (it draws the others): format 1 has
    /// room for them.
    pub const STRIKE: u8 = 32;
    pub const HIDDEN: u8 = 64;
    pub const BLINK: u8 = 128;
}

/// How an underlined cell is underlined (`SGR 4:n`, `21`). Kept `Single`
/// while [`flag::UNDERLINE`] is off, so equal looks are equal styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Underline {
    #[default]
    Single = 0,
    Double = 1,
    Curly = 2,
    Dotted = 3,
    Dashed = 4,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub fg: Color,
    pub bg: Color,
    pub flags: u8,
    pub underline: Underline,
    /// `SGR 58`; `Default` draws the underline in the text's colour.
    pub underline_color: Color,
}

/// What a cell shows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Glyph {
    #[default]
    Blank,
    /// The right half of the wide character in the cell to its left.
    Continuation,
    /// A printable ASCII character.
    Ascii(u8),
    /// Any other character, with its combining marks.
    Cluster(Box<str>),
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cell {
    pub glyph: Glyph,
    pub style: Style,
    /// Takes two columns (the next cell is its `Continuation`).
    pub wide: bool,
}

impl Cell {
    /// The text drawn in the cell; empty for a blank or a continuation.
    pub fn text(&self) -> &str {
        match &self.glyph {
            Glyph::Blank | Glyph::Continuation => "",
            // Checked ASCII where made (`glyph_of`, the decoder).
            Glyph::Ascii(b) => std::str::from_utf8(std::slice::from_ref(b)).unwrap_or(""),
            Glyph::Cluster(s) => s,
        }
    }
}

pub type Row = Vec<Cell>;

/// What a client must mirror to send the right keys and show the screen:
/// bits of [`Modes::bits`], and the mouse reporting asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Modes {
    pub bits: u8,
    /// 0 none, 1 press, 2 press and release, 3 button motion, 4 any motion.
    pub mouse: u8,
    /// 0 default, 1 UTF-8, 2 SGR.
    pub mouse_encoding: u8,
}

pub mod mode {
    pub const APP_CURSOR: u8 = 1;
    pub const APP_KEYPAD: u8 = 2;
    pub const BRACKETED_PASTE: u8 = 4;
    pub const ALT_SCREEN: u8 = 8;
    pub const HIDE_CURSOR: u8 = 16;
    /// The program turned on the kitty keyboard protocol (its first flag,
    /// disambiguate escape codes): Shift-Enter and the like reach it as
    /// `CSI … u` (`tui::keys`), and attach asks the user's terminal for the
    /// same. A client that predates the bit ignores it.
    pub const KITTY_KEYBOARD: u8 = 32;
}

impl Modes {
    pub fn has(&self, bit: u8) -> bool {
        self.bits & bit != 0
    }
}

/// One step from the screen a client last acknowledged to the screen now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScreenUpdate {
    /// Counts the updates of one subscription, from 1.
    pub seq: u64,
    /// The output log offset this screen stands for.
    pub offset: u64,
    pub rows: u16,
    pub cols: u16,
    /// `(row, col)`; the column may be `cols` (a wrap pending).
    pub cursor: (u16, u16),
    pub modes: Modes,
    /// Set when the title changed (or on a full update).
    pub title: Option<String>,
    /// Every row follows: the client starts from a blank screen this size.
    pub full: bool,
    /// The rows that changed, by index.
    pub lines: Vec<(u16, Row)>,
    /// Rows that scrolled off the main screen since the last update, oldest
    /// first, as plain text.
    pub scrolled: Vec<String>,
    /// Rows that scrolled off too but are not in `scrolled` (more than one
    /// update carries), or rows of the client's history that came back onto
    /// the screen: either way the client's history has a gap there.
    pub dropped: u64,
}

/// From log offset `offset` on, the screen was `rows` × `cols` (since
/// `at_ms`, ms since the Unix epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeChange {
    pub offset: u64,
    pub at_ms: u64,
    pub rows: u16,
    pub cols: u16,
}

/// The glyph for a cell's text: printable ASCII as an `Ascii`, anything
/// else kept whole.
pub fn glyph_of(text: &str) -> Glyph {
    match text.as_bytes() {
        // A space written and a cell never written look the same.
        [] | [b' '] => Glyph::Blank,
        [b @ b'!'..=b'~'] => Glyph::Ascii(*b),
        // Never drawn as it is (a client refuses it): shown as nothing.
        _ if text.chars().any(char::is_control) => Glyph::Blank,
        _ => Glyph::Cluster(text.into()),
    }
}
