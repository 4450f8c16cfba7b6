//! Keys as a terminal program expects them in INSERT mode: crossterm's key
//! events encoded back into the bytes a terminal would send, by the modes
//! the program set (`protocol::screen::Modes`).
//!
//! Enter with Shift is the key agents read as "a new line, not yet sent":
//! to a program that turned on the kitty keyboard protocol (Codex does once
//! the run's terminal answers its query; `term/keyboard.rs`) it is
//! `CSI 13;2u`; to one that did not (Claude Code, which turns it on only in
//! terminals it knows by name) it is `ESC CR`, the bytes Claude Code's
//! `/terminal-setup` binds Shift-Enter to in terminals without the protocol
//! and Alt-Enter's in every terminal — never a bare CR, which would send a
//! half-written prompt. Ctrl-J stays LF.

use crossterm::event::{KeyCode, KeyEvent, KeyEventState, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use crate::protocol::screen::{Modes, mode};

/// Encodes a key for a program; `app_cursor` is DECCKM (the program asked for
/// application cursor keys).
pub fn encode_key(key: &KeyEvent, app_cursor: bool) -> Vec<u8> {
    let bits = if app_cursor { mode::APP_CURSOR } else { 0 };
    encode_key_in(
        key,
        Modes {
            bits,
            ..Modes::default()
        },
    )
}

/// As `encode_key`, by every mode that changes a key's bytes: DECCKM, the
/// application keypad (DECKPAM) — a key of the keypad, told apart only by
/// a terminal that speaks the kitty keyboard protocol, which the TUI asks
/// for, is then sent as xterm sends it, `ESC O` and a letter — and the
/// kitty keyboard protocol the program turned on.
pub fn encode_key_in(key: &KeyEvent, modes: Modes) -> Vec<u8> {
    if modes.has(mode::APP_KEYPAD)
        && key.state.contains(KeyEventState::KEYPAD)
        && let Some(letter) = keypad_letter(key.code)
    {
        return vec![0x1b, b'O', letter];
    }
    if modes.has(mode::KITTY_KEYBOARD)
        && let Some(bytes) = kitty_disambiguated(key)
    {
        return bytes;
    }
    if key.code == KeyCode::Enter && key.modifiers.contains(KeyModifiers::SHIFT) {
        return b"\x1b\r".to_vec();
    }
    encode_plain(key, modes.has(mode::APP_CURSOR))
}

/// A key the kitty keyboard protocol's first flag ("disambiguate escape
/// codes") sends as `CSI code ; modifiers u`: Esc, and Enter, Tab,
/// Backspace or a character with a modifier other than Shift alone on a
/// character. `None` for the keys it sends as they always were (plain
/// text, unmodified Enter, Tab and Backspace, cursor and function keys,
/// whose modified forms are already unambiguous).
fn kitty_disambiguated(key: &KeyEvent) -> Option<Vec<u8>> {
    let m = key.modifiers;
    let (shift, alt, ctrl, sup) = (
        m.contains(KeyModifiers::SHIFT),
        m.contains(KeyModifiers::ALT),
        m.contains(KeyModifiers::CONTROL),
        m.contains(KeyModifiers::SUPER),
    );
    // The protocol's modifier bits: shift 1, alt 2, ctrl 4, super 8; sent
    // plus one.
    let param = 1 + u8::from(shift) + 2 * u8::from(alt) + 4 * u8::from(ctrl) + 8 * u8::from(sup);
    let code = match key.code {
        KeyCode::Esc => 27,
        KeyCode::Enter if param > 1 => 13,
        KeyCode::Tab if param > 1 => 9,
        KeyCode::Backspace if param > 1 => 127,
        // The key's own (unshifted) character: Shift is in the modifiers.
        KeyCode::Char(c) if alt || ctrl || sup => u32::from(c.to_ascii_lowercase()),
        _ => return None,
    };
    Some(if param > 1 {
        format!("\x1b[{code};{param}u").into_bytes()
    } else {
        format!("\x1b[{code}u").into_bytes()
    })
}

/// The final letter of a keypad key's application sequence (xterm's);
/// `None` for the keypad's cursor keys, which follow DECCKM.
fn keypad_letter(code: KeyCode) -> Option<u8> {
    Some(match code {
        KeyCode::Char(c @ '0'..='9') => b'p' + (c as u8 - b'0'),
        KeyCode::Char('.') => b'n',
        KeyCode::Char('/') => b'o',
        KeyCode::Char('*') => b'j',
        KeyCode::Char('-') => b'm',
        KeyCode::Char('+') => b'k',
        KeyCode::Char(',') => b'l',
        KeyCode::Char('=') => b'X',
        KeyCode::Enter => b'M',
        _ => return None,
    })
}

fn encode_plain(key: &KeyEvent, app_cursor: bool) -> Vec<u8> {
    let m = key.modifiers;
    let alt = m.contains(KeyModifiers::ALT);
    let ctrl = m.contains(KeyModifiers::CONTROL);
    let shift = m.contains(KeyModifiers::SHIFT);
    // xterm's modifier parameter: 1 + shift(1) + alt(2) + ctrl(4).
    let param = 1 + u8::from(shift) + 2 * u8::from(alt) + 4 * u8::from(ctrl);
    let csi_letter = |letter: u8| -> Vec<u8> {
        if param > 1 {
            format!("\x1b[1;{param}{}", letter as char).into_bytes()
        } else if app_cursor {
            vec![0x1b, b'O', letter]
        } else {
            vec![0x1b, b'[', letter]
        }
    };
    let tilde = |n: u8| -> Vec<u8> {
        if param > 1 {
            format!("\x1b[{n};{param}~").into_bytes()
        } else {
            format!("\x1b[{n}~").into_bytes()
        }
    };
    let mut out = match key.code {
        KeyCode::Char(c) => {
            if ctrl {
                let b = match c.to_ascii_lowercase() {
                    c @ 'a'..='z' => c as u8 - b'a' + 1,
                    '@' | ' ' | '2' => 0,
                    '[' | '3' => 0x1b,
                    '\\' | '4' => 0x1c,
                    ']' | '5' => 0x1d,
                    '^' | '6' => 0x1e,
                    '_' | '/' | '7' => 0x1f,
                    '8' | '?' => 0x7f,
                    other => {
                        let mut s = [0u8; 4];
                        return with_alt(alt, other.encode_utf8(&mut s).as_bytes().to_vec());
                    }
                };
                vec![b]
            } else {
                let mut s = [0u8; 4];
                c.encode_utf8(&mut s).as_bytes().to_vec()
            }
        }
        KeyCode::Enter => vec![b'\r'],
        KeyCode::Tab => vec![b'\t'],
        KeyCode::BackTab => b"\x1b[Z".to_vec(),
        KeyCode::Backspace => vec![if ctrl { 0x08 } else { 0x7f }],
        KeyCode::Esc => vec![0x1b],
        KeyCode::Up => return csi_letter(b'A'),
        KeyCode::Down => return csi_letter(b'B'),
        KeyCode::Right => return csi_letter(b'C'),
        KeyCode::Left => return csi_letter(b'D'),
        KeyCode::Home => return csi_letter(b'H'),
        KeyCode::End => return csi_letter(b'F'),
        KeyCode::Insert => return tilde(2),
        KeyCode::Delete => return tilde(3),
        KeyCode::PageUp => return tilde(5),
        KeyCode::PageDown => return tilde(6),
        KeyCode::F(n) => {
            return match n {
                1..=4 => {
                    let letter = b"PQRS"[(n - 1) as usize];
                    if param > 1 {
                        format!("\x1b[1;{param}{}", letter as char).into_bytes()
                    } else {
                        vec![0x1b, b'O', letter]
                    }
                }
                5 => tilde(15),
                6..=10 => tilde(n + 11),
                11..=12 => tilde(n + 12),
                _ => Vec::new(),
            };
        }
        _ => Vec::new(),
    };
    if alt && !out.is_empty() {
        out = with_alt(true, out);
    }
    out
}

fn with_alt(alt: bool, bytes: Vec<u8>) -> Vec<u8> {
    if alt {
        let mut v = vec![0x1b];
        v.extend(bytes);
        v
    } else {
        bytes
    }
}

/// A mouse event in SGR encoding (1006), at a position relative to the pane.
pub fn encode_mouse(event: &MouseEvent, col: u16, row: u16) -> Option<Vec<u8>> {
    encode_mouse_in(
        event,
        col,
        row,
        MouseModes {
            reporting: 4,
            encoding: 2,
        },
    )
}

/// What the program asked of the mouse: which events it hears (1 presses,
/// 2 and releases, 3 and drags, 4 and any motion) and how they are encoded
/// (0 xterm's bytes, 1 UTF-8, 2 SGR) — `Modes::mouse` and `mouse_encoding`.
#[derive(Debug, Clone, Copy)]
pub struct MouseModes {
    pub reporting: u8,
    pub encoding: u8,
}

/// A mouse event as xterm reports it to a program in `modes`, at a
/// position relative to the pane; `None` for an event the program did not
/// ask to hear, or a position its encoding cannot say (beyond column or row
/// 223 in xterm's bytes, 2015 in UTF-8).
pub fn encode_mouse_in(event: &MouseEvent, col: u16, row: u16, modes: MouseModes) -> Option<Vec<u8>> {
    let (button, release) = match event.kind {
        MouseEventKind::Down(b) => (button_code(b), false),
        MouseEventKind::Up(b) if modes.reporting >= 2 => (button_code(b), true),
        MouseEventKind::Drag(b) if modes.reporting >= 3 => (button_code(b) + 32, false),
        MouseEventKind::Moved if modes.reporting >= 4 => (35, false),
        MouseEventKind::ScrollUp => (64, false),
        MouseEventKind::ScrollDown => (65, false),
        _ => return None,
    };
    let m = event.modifiers;
    let held = 4 * u16::from(m.contains(KeyModifiers::SHIFT))
        + 8 * u16::from(m.contains(KeyModifiers::ALT))
        + 16 * u16::from(m.contains(KeyModifiers::CONTROL));
    let (x, y) = (col + 1, row + 1);
    if modes.encoding == 2 {
        let end = if release { 'm' } else { 'M' };
        return Some(format!("\x1b[<{};{x};{y}{end}", button + held).into_bytes());
    }
    // xterm's older forms: a release is button 3, each value offset by 32.
    let code = if release { 3 } else { button } + held;
    let mut out = b"\x1b[M".to_vec();
    for value in [code, x, y] {
        let value = u32::from(value) + 32;
        match modes.encoding {
            1 => out.extend(char::from_u32(value).filter(|_| value < 2048)?.to_string().bytes()),
            _ => out.push(u8::try_from(value).ok()?),
        }
    }
    Some(out)
}

fn button_code(b: MouseButton) -> u16 {
    match b {
        MouseButton::Left => 0,
        MouseButton::Middle => 1,
        MouseButton::Right => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyEventKind;

    fn key(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    #[test]
    fn mouse_events_follow_the_programs_reporting_and_encoding() {
        let at = |kind| MouseEvent {
            kind,
            column: 0,
            row: 0,
            modifiers: KeyModifiers::NONE,
        };
        let (down, up) = (
            MouseEventKind::Down(MouseButton::Left),
            MouseEventKind::Up(MouseButton::Left),
        );
        let modes = |reporting, encoding| MouseModes { reporting, encoding };
        // xterm's bytes (no 1005/1006): button, column, row, each plus 32.
        assert_eq!(encode_mouse_in(&at(down), 4, 9, modes(2, 0)).unwrap(), b"\x1b[M %*");
        assert_eq!(encode_mouse_in(&at(up), 4, 9, modes(2, 0)).unwrap(), b"\x1b[M#%*");
        // Beyond column 223 xterm's bytes cannot say where: nothing is sent.
        assert_eq!(encode_mouse_in(&at(down), 300, 9, modes(2, 0)), None);
        // UTF-8 (1005) says it in two bytes.
        assert_eq!(
            encode_mouse_in(&at(down), 300, 9, modes(2, 1)).unwrap(),
            "\x1b[M \u{14d}*".as_bytes()
        );
        // SGR (1006).
        assert_eq!(encode_mouse_in(&at(up), 4, 9, modes(2, 2)).unwrap(), b"\x1b[<0;5;10m");
        // Only what the program asked to hear: presses alone (9), no drags
        // without 1002, no motion without 1003.
        assert_eq!(encode_mouse_in(&at(up), 4, 9, modes(1, 2)), None);
        let drag = MouseEventKind::Drag(MouseButton::Left);
        assert_eq!(encode_mouse_in(&at(drag), 4, 9, modes(2, 2)), None);
        assert_eq!(
            encode_mouse_in(&at(drag), 4, 9, modes(3, 2)).unwrap(),
            b"\x1b[<32;5;10M"
        );
        assert_eq!(encode_mouse_in(&at(MouseEventKind::Moved), 4, 9, modes(3, 2)), None);
        assert_eq!(
            encode_mouse_in(&at(MouseEventKind::Moved), 4, 9, modes(4, 2)).unwrap(),
            b"\x1b[<35;5;10M"
        );
    }

    #[test]
    fn keypad_keys_are_application_sequences_only_when_the_program_asked() {
        let pad = |code| {
            KeyEvent::new_with_kind_and_state(code, KeyModifiers::NONE, KeyEventKind::Press, KeyEventState::KEYPAD)
        };
        let modes = |bits| Modes {
            bits,
            ..Modes::default()
        };
        let keypad = modes(mode::APP_KEYPAD);
        assert_eq!(encode_key_in(&pad(KeyCode::Char('7')), keypad), b"\x1bOw");
        assert_eq!(encode_key_in(&pad(KeyCode::Char('+')), keypad), b"\x1bOk");
        assert_eq!(encode_key_in(&pad(KeyCode::Enter), keypad), b"\x1bOM");
        // Without the application keypad, what the key says.
        assert_eq!(encode_key_in(&pad(KeyCode::Char('7')), modes(0)), b"7");
        assert_eq!(encode_key_in(&pad(KeyCode::Enter), modes(0)), b"\r");
        // The keypad's arrows follow DECCKM; a main-keyboard digit stays a digit.
        assert_eq!(
            encode_key_in(&pad(KeyCode::Up), modes(mode::APP_KEYPAD | mode::APP_CURSOR)),
            b"\x1bOA"
        );
        assert_eq!(
            encode_key_in(&key(KeyCode::Char('7'), KeyModifiers::NONE), keypad),
            b"7"
        );
    }

    #[test]
    fn keys_encode_as_an_xterm_would_send_them() {
        assert_eq!(encode_key(&key(KeyCode::Char('a'), KeyModifiers::NONE), false), b"a");
        assert_eq!(encode_key(&key(KeyCode::Char('c'), KeyModifiers::CONTROL), false), [3]);
        assert_eq!(encode_key(&key(KeyCode::Char('x'), KeyModifiers::ALT), false), b"\x1bx");
        assert_eq!(encode_key(&key(KeyCode::Up, KeyModifiers::NONE), false), b"\x1b[A");
        assert_eq!(encode_key(&key(KeyCode::Up, KeyModifiers::NONE), true), b"\x1bOA");
        assert_eq!(
            encode_key(&key(KeyCode::Right, KeyModifiers::CONTROL), false),
            b"\x1b[1;5C"
        );
        assert_eq!(encode_key(&key(KeyCode::F(5), KeyModifiers::NONE), false), b"\x1b[15~");
        assert_eq!(encode_key(&key(KeyCode::F(1), KeyModifiers::NONE), false), b"\x1bOP");
        assert_eq!(encode_key(&key(KeyCode::Enter, KeyModifiers::NONE), false), b"\r");
        assert_eq!(
            encode_key(&key(KeyCode::Char('é'), KeyModifiers::NONE), false),
            "é".as_bytes()
        );
    }

    #[test]
    fn shift_enter_is_a_new_line_whether_or_not_the_program_speaks_the_kitty_protocol() {
        let kitty = Modes {
            bits: mode::KITTY_KEYBOARD,
            ..Modes::default()
        };
        let legacy = Modes::default();
        let enter = |m| key(KeyCode::Enter, m);
        // The program turned the protocol on (Codex): Shift-Enter is told
        // apart from Enter, as kitty, foot and WezTerm send it.
        assert_eq!(encode_key_in(&enter(KeyModifiers::SHIFT), kitty), b"\x1b[13;2u");
        assert_eq!(encode_key_in(&enter(KeyModifiers::ALT), kitty), b"\x1b[13;3u");
        assert_eq!(encode_key_in(&enter(KeyModifiers::CONTROL), kitty), b"\x1b[13;5u");
        assert_eq!(encode_key_in(&enter(KeyModifiers::NONE), kitty), b"\r");
        // It did not (Claude Code): ESC CR, Alt-Enter's bytes, a new line
        // to Claude Code and Codex alike; never the CR that sends.
        assert_eq!(encode_key_in(&enter(KeyModifiers::SHIFT), legacy), b"\x1b\r");
        assert_eq!(encode_key_in(&enter(KeyModifiers::ALT), legacy), b"\x1b\r");
        assert_eq!(encode_key_in(&enter(KeyModifiers::NONE), legacy), b"\r");
        // Ctrl-J: LF without the protocol, the key with Ctrl under it.
        let ctrl_j = key(KeyCode::Char('j'), KeyModifiers::CONTROL);
        assert_eq!(encode_key_in(&ctrl_j, legacy), b"\n");
        assert_eq!(encode_key_in(&ctrl_j, kitty), b"\x1b[106;5u");
    }

    #[test]
    fn the_kitty_protocol_disambiguates_esc_and_modified_keys_and_leaves_the_rest() {
        let kitty = Modes {
            bits: mode::KITTY_KEYBOARD,
            ..Modes::default()
        };
        let enc = |code, m| encode_key_in(&key(code, m), kitty);
        assert_eq!(enc(KeyCode::Esc, KeyModifiers::NONE), b"\x1b[27u");
        assert_eq!(enc(KeyCode::Char('c'), KeyModifiers::CONTROL), b"\x1b[99;5u");
        assert_eq!(enc(KeyCode::Char('x'), KeyModifiers::ALT), b"\x1b[120;3u");
        assert_eq!(enc(KeyCode::Tab, KeyModifiers::CONTROL), b"\x1b[9;5u");
        assert_eq!(enc(KeyCode::Backspace, KeyModifiers::ALT), b"\x1b[127;3u");
        // Text, unmodified Enter, Tab and Backspace, and cursor keys as
        // ever.
        assert_eq!(enc(KeyCode::Char('a'), KeyModifiers::NONE), b"a");
        assert_eq!(enc(KeyCode::Char('A'), KeyModifiers::SHIFT), b"A");
        assert_eq!(enc(KeyCode::Tab, KeyModifiers::NONE), b"\t");
        assert_eq!(enc(KeyCode::Backspace, KeyModifiers::NONE), b"\x7f");
        assert_eq!(enc(KeyCode::Up, KeyModifiers::CONTROL), b"\x1b[1;5A");
    }
}
