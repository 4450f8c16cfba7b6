//! DEC special graphics, the VT100 line-drawing character set.
//!
//! Full-screen programs draw boxes by designating the line-drawing set
//! (`ESC ( 0` for G0, `ESC ) 0` for G1, then SO/SI to shift between G1 and
//! G0) and printing plain letters: `lqqk` is `┌──┐`. The emulator keeps
//! which set is where ([`Charsets`]) and maps each printed character.

/// The designated sets and which one is shifted into GL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Charsets {
    /// G0 and G1 hold the line-drawing set (otherwise ASCII: the national
    /// replacement sets differ from ASCII in a few symbols we do not map).
    pub(crate) graphics: [bool; 2],
    /// SO was seen more recently than SI: GL is G1.
    pub(crate) shifted_out: bool,
}

impl Charsets {
    /// `ESC ( F` (slot 0) or `ESC ) F` (slot 1); only `0` is line drawing.
    pub(crate) fn designate(&mut self, slot: usize, final_byte: u8) {
        self.graphics[slot] = final_byte == b'0';
    }

    /// What `c` prints as under the set in GL.
    pub(crate) fn map(&self, c: char) -> char {
        if !self.graphics[usize::from(self.shifted_out)] || !('_'..='~').contains(&c) {
            return c;
        }
        glyph(c as u8).unwrap_or(c)
    }
}

fn glyph(byte: u8) -> Option<char> {
    const TABLE: [char; 32] = [
        '\u{a0}', // _ blank
        '◆',      // ` diamond
        '▒',      // a checkerboard
        '␉',      // b HT
        '␌',      // c FF
        '␍',      // d CR
        '␊',      // e LF
        '°',      // f degree
        '±',      // g plus/minus
        '␤',      // h NL
        '␋',      // i VT
        '┘',      // j
        '┐',      // k
        '┌',      // l
        '└',      // m
        '┼',      // n
        '⎺',      // o scan line 1
        '⎻',      // p scan line 3
        '─',      // q scan line 5
        '⎼',      // r scan line 7
        '⎽',      // s scan line 9
        '├',      // t
        '┤',      // u
        '┴',      // v
        '┬',      // w
        '│',      // x
        '≤',      // y
        '≥',      // z
        'π',      // {
        '≠',      // |
        '£',      // }
        '·',      // ~
    ];
    byte.checked_sub(0x5f)
        .and_then(|index| TABLE.get(usize::from(index)))
        .copied()
}
