//! Answers to terminal queries.
//!
//! A program that asks "where is the cursor?" (DSR) or "what are you?" (DA)
//! usually blocks until the answer arrives on its input; Claude Code and
//! Codex both ask at startup. The answers are appended to a buffer that the
//! owner of the PTY writes back ([`super::Terminal::take_replies`]).

use std::io::Write as _;

use super::emulator::{Emulator, Sink, mouse};

/// Primary device attributes (DA1): a VT220-class terminal (62) with ANSI
/// colour (22). 62 is the level the emulator implements (scroll regions, insert
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

/// XTVERSION's answer (`CSI > q`): the terminal's name and version in a
/// DCS string, as xterm (`XTerm(370)`), kitty and tmux (`tmux 3.4`) send
/// theirs. Claude Code asks it first at startup and, without an answer,
/// takes the terminal for one that answers nothing more.
const XTVERSION: &str = concat!("\x1bP>|agents ", env!("CARGO_PKG_VERSION"), "\x1b\\");

/// Appends the reply to a CSI sequence the emulator does not act on, if it
/// is a query we answer. `intermediates` are `?`, `>`, `$` and the like.
pub(super) fn answer<S: Sink>(
    emu: &Emulator<S>,
    intermediates: &[u8],
    params: &vte::Params,
    c: char,
    out: &mut Vec<u8>,
) {
    let first = params.iter().next().and_then(|p| p.first()).copied().unwrap_or(0);
    // `write!` into a `Vec` cannot fail, so the results below are ignored.
    match (intermediates, c) {
        // DSR: operating status, "OK".
        ([], 'n') if first == 5 => out.extend_from_slice(b"\x1b[0n"),
        // DSR: cursor position report (CPR), 1-based.
        ([], 'n') if first == 6 => {
            let (row, col) = report_position(emu);
            let _ = write!(out, "\x1b[{row};{col}R");
        }
        // DECXCPR, the private form. No page number: xterm adds one only
        // when it claims VT420 or above.
        ([b'?'], 'n') if first == 6 => {
            let (row, col) = report_position(emu);
            let _ = write!(out, "\x1b[?{row};{col}R");
        }
        ([], 'c') if first == 0 => out.extend_from_slice(PRIMARY_DA),
        ([b'>'], 'c') if first == 0 => out.extend_from_slice(SECONDARY_DA),
        ([b'>'], 'q') if first == 0 => out.extend_from_slice(XTVERSION.as_bytes()),
        // The kitty keyboard protocol's flags in effect (`keyboard.rs`), as
        // kitty, foot and WezTerm answer it: a terminal that stays silent
        // is one that does not speak it.
        ([b'?'], 'u') => {
            let _ = write!(out, "\x1b[?{}u", emu.keyboard.current(emu.alt_on));
        }
        // DECRQM for a DEC private mode.
        ([b'?', b'$'], 'p') => {
            let state = private_mode_state(emu, first);
            let _ = write!(out, "\x1b[?{first};{}$y", state as u8);
        }
        // DECRQM for an ANSI mode: only insert mode (IRM) is implemented.
        ([b'$'], 'p') => {
            let state = match first {
                4 => set_or_reset(emu.modes.insert),
                _ => ModeState::Unknown,
            };
            let _ = write!(out, "\x1b[{first};{}$y", state as u8);
        }
        // XTWINOPS 18: text area size in characters.
        ([], 't') if first == 18 => {
            let _ = write!(out, "\x1b[8;{};{}t", emu.rows, emu.cols);
        }
        _ => {}
    }
}

/// The 1-based cursor position as a terminal reports it. Right after a
/// character lands in the last column the emulator (like tmux) parks the
/// cursor one past it until the next character wraps; a real terminal
/// reports the last column then.
fn report_position<S: Sink>(emu: &Emulator<S>) -> (u16, u16) {
    let (row, col) = emu.cursor();
    let row = if emu.grid().origin {
        row.saturating_sub(emu.grid().top)
    } else {
        row
    };
    (row + 1, col.min(emu.cols - 1) + 1)
}

/// DECRPM's status values.
#[derive(Clone, Copy)]
enum ModeState {
    Unknown = 0,
    Set = 1,
    Reset = 2,
}

fn set_or_reset(on: bool) -> ModeState {
    if on { ModeState::Set } else { ModeState::Reset }
}

fn private_mode_state<S: Sink>(emu: &Emulator<S>, mode: u16) -> ModeState {
    let m = &emu.modes;
    let set = match mode {
        1 => m.app_cursor,
        6 => emu.grid().origin,
        7 => m.autowrap,
        25 => !m.hide_cursor,
        47 | 1047 | 1049 => emu.alt_on,
        9 => m.mouse == mouse::PRESS,
        1000 => m.mouse == mouse::PRESS_RELEASE,
        1002 => m.mouse == mouse::BUTTON_MOTION,
        1003 => m.mouse == mouse::ANY_MOTION,
        1005 => m.mouse_encoding == mouse::UTF8,
        1006 => m.mouse_encoding == mouse::SGR,
        2004 => m.bracketed_paste,
        // Including 2026 (synchronized output): answering "unknown" tells
        // programs not to bother bracketing their frames for us.
        _ => return ModeState::Unknown,
    };
    set_or_reset(set)
}
