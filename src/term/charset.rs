//! DEC special graphics, the VT100 line-drawing character set.
//!
//! Full-screen programs draw boxes by designating the line-drawing set
//! (`ESC ( 0` for G0, `ESC ) 0` for G1, then SO/SI to shift between G1 and G0)
//! and printing plain letters: `lqqk` is `┌──┐`. `vt100` ignores designations,
//! so without this the user would see the letters.
//!
//! The translation happens on the byte stream, before the parser, and has to
//! know exactly where `vte` is inside an escape sequence: a `q` inside a CSI
//! parameter list or an OSC title is not a glyph. [`DecGraphics`] therefore
//! mirrors `vte` 0.15's state machine, but only as far as charsets care (every
//! CSI state looks alike from here, for instance). Its state survives between
//! chunks, so a sequence split across two reads is still recognised.
//!
//! Cost: output is copied only while a line-drawing set is in GL. The rest of
//! the time the chunk is passed through untouched and the tracker only looks
//! at the ESC, SO and SI bytes (found with `memchr`), see [`DecGraphics::skim`].

use memchr::memchr3_iter;

const ESC: u8 = 0x1b;
/// Shift Out: GL becomes G1.
const SO: u8 = 0x0e;
/// Shift In: GL becomes G0.
const SI: u8 = 0x0f;
/// CAN and SUB abort any sequence in progress.
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
/// 8-bit String Terminator; `vte` honours it only to end DCS passthrough.
const ST_8BIT: u8 = 0x9c;

/// What one of the G0/G1 slots holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Charset {
    #[default]
    Ascii,
    DecGraphics,
}

impl Charset {
    /// The set named by the final byte of a designation. Only `0` is the
    /// line-drawing set; `B` is ASCII and the national replacement sets (`A`
    /// for UK and so on) differ from ASCII in a few symbols we do not map, so
    /// they are treated as ASCII too.
    fn designated_by(final_byte: u8) -> Self {
        if final_byte == b'0' {
            Self::DecGraphics
        } else {
            Self::Ascii
        }
    }
}

/// The designated sets and which one is shifted into GL.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sets {
    g0: Charset,
    g1: Charset,
    /// SO was seen more recently than SI: GL is G1.
    shifted_out: bool,
}

impl Sets {
    fn gl(self) -> Charset {
        if self.shifted_out { self.g1 } else { self.g0 }
    }
}

/// Where `vte` is, reduced to what decides charset handling. The names follow
/// <https://vt100.net/emu/dec_ansi_parser>; states `vte` treats alike for our
/// purpose are merged (all CSI states; DCS-ignore with SOS/PM/APC).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Seq {
    #[default]
    Ground,
    Escape,
    /// After `ESC` and one or more intermediates (0x20..=0x2f).
    EscapeIntermediate {
        first: u8,
        count: u8,
    },
    Csi,
    Osc,
    DcsEntry,
    DcsParam,
    DcsIntermediate,
    DcsPassthrough,
    /// DCS ignore and SOS/PM/APC strings: only CAN, SUB or ESC end them.
    IgnoredString,
}

/// Tracks charset designations and shifts in an output stream and rewrites
/// line-drawing letters to the Unicode box-drawing characters xterm shows.
#[derive(Clone, Debug, Default)]
pub(super) struct DecGraphics {
    sets: Sets,
    /// Saved by DECSC (`ESC 7`) and restored by DECRC (`ESC 8`), as xterm and
    /// tmux do.
    saved: Sets,
    seq: Seq,
}

impl DecGraphics {
    /// Bytes that bring a fresh tracker to this one's designations and shift,
    /// appended to snapshots so a restored screen keeps drawing lines.
    pub(super) fn restore_sequence(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.sets.g0 == Charset::DecGraphics {
            out.extend_from_slice(b"\x1b(0");
        }
        if self.sets.g1 == Charset::DecGraphics {
            out.extend_from_slice(b"\x1b)0");
        }
        if self.sets.shifted_out {
            out.push(SO);
        }
        out
    }

    /// Returns the bytes to hand to the parser for `input`: `input` itself
    /// when nothing needed translating, otherwise the translation, built in
    /// `scratch`.
    pub(super) fn translate<'a>(&mut self, input: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
        scratch.clear();
        // `input[..copied]` is already in `scratch`; only meaningful once the
        // first glyph was translated (`scratch` non-empty).
        let mut copied = 0;
        let mut i = 0;
        while i < input.len() {
            if self.sets.gl() == Charset::Ascii && !self.in_escape() {
                i = self.skim(input, i);
                continue;
            }
            match self.seq {
                Seq::Ground => {
                    // GL holds the line-drawing set.
                    let byte = input[i];
                    if let Some(glyph) = glyph(byte) {
                        scratch.extend_from_slice(&input[copied..i]);
                        let mut utf8 = [0; 4];
                        scratch.extend_from_slice(glyph.encode_utf8(&mut utf8).as_bytes());
                        copied = i + 1;
                    } else {
                        self.ground_control(byte);
                    }
                    i += 1;
                }
                Seq::Csi => {
                    // The common case (SGR and cursor motion) is parameters
                    // then a final byte; run through those without the
                    // general state machine.
                    while i < input.len() {
                        let byte = input[i];
                        i += 1;
                        match byte {
                            0x20..=0x3f => {}
                            0x40..=0x7e => {
                                self.seq = Seq::Ground;
                                break;
                            }
                            _ => {
                                self.step(byte);
                                if self.seq != Seq::Csi {
                                    break;
                                }
                            }
                        }
                    }
                }
                _ => {
                    self.step(input[i]);
                    i += 1;
                }
            }
        }
        if scratch.is_empty() {
            input
        } else {
            scratch.extend_from_slice(&input[copied..]);
            scratch
        }
    }

    /// Right after an ESC, where the next bytes may complete a designation,
    /// DECSC/DECRC or a reset.
    fn in_escape(&self) -> bool {
        matches!(self.seq, Seq::Escape | Seq::EscapeIntermediate { .. })
    }

    /// The fast path, while GL holds ASCII and nothing needs translating:
    /// visits only ESC, SO and SI (found with `memchr`) instead of every byte.
    /// Two facts make that exact. An ESC moves `vte` to the escape state from
    /// any state, so the bytes before it do not matter; and what follows an
    /// ESC can touch charsets only if its very next byte says so (`(`, `)`,
    /// `7`, `8`, `c`, or a byte that leaves `vte` in the escape state). SO and
    /// SI are rare, so at one the parser state is recovered by stepping from
    /// the last ESC. Returns where byte-by-byte tracking must take over
    /// (`input.len()` if nowhere): at such an ESC, or after a shift that put
    /// the line-drawing set into GL.
    fn skim(&mut self, input: &[u8], start: usize) -> usize {
        // `self.seq` is the parser state just before `input[tracked]`.
        let mut tracked = start;
        for offset in memchr3_iter(ESC, SO, SI, &input[start..]) {
            let at = start + offset;
            if input[at] == ESC {
                match input.get(at + 1) {
                    None | Some(b'(' | b')' | b'7' | b'8' | b'c' | 0x00..=0x1f | 0x7f..=0xff) => {
                        self.seq = Seq::Escape;
                        return at + 1;
                    }
                    Some(_) => {
                        self.seq = Seq::Escape;
                        tracked = at + 1;
                    }
                }
            } else {
                self.catch_up(&input[tracked..at]);
                self.step(input[at]);
                tracked = at + 1;
                if self.sets.gl() == Charset::DecGraphics {
                    return tracked;
                }
            }
        }
        self.catch_up(&input[tracked..]);
        input.len()
    }

    /// Steps over bytes that contain no ESC, SO or SI. Once in the ground
    /// state nothing but those three can change it, so the rest is skipped.
    fn catch_up(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if self.seq == Seq::Ground {
                return;
            }
            self.step(byte);
        }
    }

    /// A byte in the ground state that is not a translated glyph. Printable
    /// bytes and other controls leave the charset state alone.
    fn ground_control(&mut self, byte: u8) {
        match byte {
            ESC => self.seq = Seq::Escape,
            SO => self.sets.shifted_out = true,
            SI => self.sets.shifted_out = false,
            _ => {}
        }
    }

    /// One byte through the state machine, following `vte::Parser`'s
    /// `advance_*` functions state by state.
    fn step(&mut self, byte: u8) {
        // Transitions `vte` takes from every state but ground.
        match byte {
            CAN | SUB => {
                self.seq = Seq::Ground;
                return;
            }
            ESC => {
                self.seq = Seq::Escape;
                return;
            }
            _ => {}
        }
        match self.seq {
            Seq::Ground => self.ground_control(byte),
            Seq::Escape => self.escape(byte),
            Seq::EscapeIntermediate { first, count } => match byte {
                0x00..=0x1f => self.executed_control(byte),
                0x20..=0x2f => {
                    self.seq = Seq::EscapeIntermediate {
                        first,
                        count: count.saturating_add(1),
                    };
                }
                0x30..=0x7e => {
                    if count == 1 {
                        let set = Charset::designated_by(byte);
                        match first {
                            b'(' => self.sets.g0 = set,
                            b')' => self.sets.g1 = set,
                            // G2/G3 (`*`, `+`) are only reachable through
                            // single shifts, which vt100 does not implement.
                            _ => {}
                        }
                    }
                    self.seq = Seq::Ground;
                }
                _ => {}
            },
            Seq::Csi => match byte {
                0x00..=0x1f => self.executed_control(byte),
                0x40..=0x7e => self.seq = Seq::Ground,
                _ => {}
            },
            // BEL ends an OSC; other controls inside it are dropped, not
            // executed, so SO/SI there do not shift.
            Seq::Osc => {
                if byte == 0x07 {
                    self.seq = Seq::Ground;
                }
            }
            Seq::DcsEntry | Seq::DcsParam => match byte {
                0x20..=0x2f => self.seq = Seq::DcsIntermediate,
                0x3c..=0x3f if self.seq == Seq::DcsParam => self.seq = Seq::IgnoredString,
                0x30..=0x3f => self.seq = Seq::DcsParam,
                0x40..=0x7e => self.seq = Seq::DcsPassthrough,
                _ => {}
            },
            Seq::DcsIntermediate => match byte {
                0x30..=0x3f => self.seq = Seq::IgnoredString,
                0x40..=0x7e => self.seq = Seq::DcsPassthrough,
                _ => {}
            },
            Seq::DcsPassthrough => {
                if byte == ST_8BIT {
                    self.seq = Seq::Ground;
                }
            }
            Seq::IgnoredString => {}
        }
    }

    /// The byte after `ESC`.
    fn escape(&mut self, byte: u8) {
        self.seq = match byte {
            0x00..=0x1f => {
                self.executed_control(byte);
                Seq::Escape
            }
            0x20..=0x2f => Seq::EscapeIntermediate { first: byte, count: 1 },
            b'[' => Seq::Csi,
            b']' => Seq::Osc,
            b'P' => Seq::DcsEntry,
            b'X' | b'^' | b'_' => Seq::IgnoredString,
            0x30..=0x7e => {
                match byte {
                    b'7' => self.saved = self.sets,
                    b'8' => self.sets = self.saved,
                    // RIS: a full reset returns both slots to ASCII.
                    b'c' => *self = Self::default(),
                    _ => {}
                }
                Seq::Ground
            }
            // DEL and 8-bit bytes are ignored inside an escape.
            _ => Seq::Escape,
        };
    }

    /// A C0 control that `vte` executes in the middle of a sequence (it does
    /// so in the escape and CSI states); only SO and SI matter here.
    fn executed_control(&mut self, byte: u8) {
        match byte {
            SO => self.sets.shifted_out = true,
            SI => self.sets.shifted_out = false,
            _ => {}
        }
    }
}

/// The character xterm shows for `byte` in the DEC special graphics set, or
/// `None` outside 0x5f..=0x7e, where the set matches ASCII. The table is the
/// VT100 User Guide's (table 3-9) with the Unicode equivalents xterm uses;
/// 0x5f is a blank, here a no-break space so it still occupies its cell.
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

#[cfg(test)]
#[path = "charset_tests.rs"]
mod tests;
