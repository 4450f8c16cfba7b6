//! Answers to the terminal queries `vt100` leaves unhandled.
//!
//! A program that asks "where is the cursor?" (DSR) or "what are you?" (DA)
//! usually blocks until the answer arrives on its input; Claude Code and
//! Codex both ask at startup. The answers are appended to a buffer that the
//! owner of the PTY writes back ([`super::Terminal::take_replies`]).

use std::io::Write as _;

/// Primary device attributes (DA1): a VT220-class terminal (62) with ANSI
/// colour (22). 62 is the level `vt100` implements (scroll regions, insert
/// and delete line/character, DECSC/DECRC); claiming VT420 or more, as xterm
/// does, would invite rectangular-area and paging sequences we ignore, and we
/// add nothing else (no sixel, no printer) because we support none of it.
/// tmux 3.3 answers `?1;2c` (VT100 with AVO), which hides colour support.
const PRIMARY_DA: &[u8] = b"\x1b[?62;22c";

/// Secondary device attributes (DA2): terminal type 1 (VT220), firmware
/// version 10, no ROM cartridge. Programs that sniff DA2 (vim does) key
/// xterm-only features off high version numbers (xterm reports its patch
/// level, in the hundreds); a low one keeps them from assuming any.
const SECONDARY_DA: &[u8] = b"\x1b[>1;10;0c";

/// Appends the reply to a CSI sequence `vt100` did not handle, if it is a
/// query we answer. `i1`/`i2` are the first two intermediates (`?`, `>`, `$`).
pub(super) fn answer(
    screen: &vt100::Screen,
    i1: Option<u8>,
    i2: Option<u8>,
    params: &[&[u16]],
    c: char,
    out: &mut Vec<u8>,
) {
    let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
    // `write!` into a `Vec` cannot fail, so the results below are ignored.
    match (i1, i2, c) {
        // DSR: operating status, "OK".
        (None, None, 'n') if first == 5 => out.extend_from_slice(b"\x1b[0n"),
        // DSR: cursor position report (CPR), 1-based.
        (None, None, 'n') if first == 6 => {
            let (row, col) = report_position(screen);
            let _ = write!(out, "\x1b[{row};{col}R");
        }
        // DECXCPR, the private form. No page number: xterm adds one only
        // when it claims VT420 or above.
        (Some(b'?'), None, 'n') if first == 6 => {
            let (row, col) = report_position(screen);
            let _ = write!(out, "\x1b[?{row};{col}R");
        }
        (None, None, 'c') if first == 0 => out.extend_from_slice(PRIMARY_DA),
        (Some(b'>'), None, 'c') if first == 0 => out.extend_from_slice(SECONDARY_DA),
        // DECRQM for a DEC private mode.
        (Some(b'?'), Some(b'$'), 'p') => {
            let state = private_mode_state(screen, first);
            let _ = write!(out, "\x1b[?{first};{}$y", state as u8);
        }
        // DECRQM for an ANSI mode: `vt100` implements none (no insert mode,
        // no newline mode), so every one is "not recognised".
        (Some(b'$'), None, 'p') => {
            let _ = write!(out, "\x1b[{first};{}$y", ModeState::Unknown as u8);
        }
        // XTWINOPS 18: text area size in characters.
        (None, None, 't') if first == 18 => {
            let (rows, cols) = screen.size();
            let _ = write!(out, "\x1b[8;{rows};{cols}t");
        }
        _ => {}
    }
}

/// The 1-based cursor position as a terminal reports it. Right after a
/// character lands in the last column `vt100` (like tmux) parks the cursor one
/// past it until the next character wraps; a real terminal reports the last
/// column then.
fn report_position(screen: &vt100::Screen) -> (u16, u16) {
    let (row, col) = screen.cursor_position();
    let (_, cols) = screen.size();
    (row + 1, col.min(cols.get() - 1) + 1)
}

/// DECRPM's status values.
#[derive(Clone, Copy)]
enum ModeState {
    Unknown = 0,
    Set = 1,
    Reset = 2,
    PermanentlySet = 3,
}

fn private_mode_state(screen: &vt100::Screen, mode: u16) -> ModeState {
    use vt100::{MouseProtocolEncoding as Enc, MouseProtocolMode as Mouse};
    let set = match mode {
        1 => screen.application_cursor(),
        // Autowrap: `vt100` always wraps and ignores attempts to turn it off.
        7 => return ModeState::PermanentlySet,
        25 => !screen.hide_cursor(),
        47 | 1049 => screen.alternate_screen(),
        9 => screen.mouse_protocol_mode() == Mouse::Press,
        1000 => screen.mouse_protocol_mode() == Mouse::PressRelease,
        1002 => screen.mouse_protocol_mode() == Mouse::ButtonMotion,
        1003 => screen.mouse_protocol_mode() == Mouse::AnyMotion,
        1005 => screen.mouse_protocol_encoding() == Enc::Utf8,
        1006 => screen.mouse_protocol_encoding() == Enc::Sgr,
        2004 => screen.bracketed_paste(),
        // Including 2026 (synchronized output): answering "unknown" tells
        // programs not to bother bracketing their frames for us.
        _ => return ModeState::Unknown,
    };
    if set { ModeState::Set } else { ModeState::Reset }
}
