//! Keys as a terminal program expects them in INSERT mode: crossterm's key
//! events encoded back into the bytes an xterm would send.

use crossterm::event::{KeyCode, KeyEvent, KeyEventState, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

/// Encodes a key for a program; `app_cursor` is DECCKM (the program asked for
/// application cursor keys).
pub fn encode_key(key: &KeyEvent, app_cursor: bool) -> Vec<u8> {
    encode_key_with(key, app_cursor, false)
}

/// As `encode_key`; `app_keypad` is DECKPAM (the program asked for the
/// application keypad): a key of the keypad — told apart only by a
/// terminal that speaks the kitty keyboard protocol, which the TUI asks
/// for — is then sent as xterm sends it, `ESC O` and a letter.
pub fn encode_key_with(key: &KeyEvent, app_cursor: bool, app_keypad: bool) -> Vec<u8> {
    if app_keypad
        && key.state.contains(KeyEventState::KEYPAD)
        && let Some(letter) = keypad_letter(key.code)
    {
        return vec![0x1b, b'O', letter];
    }
    encode_plain(key, app_cursor)
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
    let (button, release) = match event.kind {
        MouseEventKind::Down(b) => (button_code(b), false),
        MouseEventKind::Up(b) => (button_code(b), true),
        MouseEventKind::Drag(b) => (button_code(b) + 32, false),
        MouseEventKind::ScrollUp => (64, false),
        MouseEventKind::ScrollDown => (65, false),
        _ => return None,
    };
    let end = if release { 'm' } else { 'M' };
    Some(format!("\x1b[<{button};{};{}{end}", col + 1, row + 1).into_bytes())
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
    fn keypad_keys_are_application_sequences_only_when_the_program_asked() {
        let pad = |code| {
            KeyEvent::new_with_kind_and_state(code, KeyModifiers::NONE, KeyEventKind::Press, KeyEventState::KEYPAD)
        };
        assert_eq!(encode_key_with(&pad(KeyCode::Char('7')), false, true), b"\x1bOw");
        assert_eq!(encode_key_with(&pad(KeyCode::Char('+')), false, true), b"\x1bOk");
        assert_eq!(encode_key_with(&pad(KeyCode::Enter), false, true), b"\x1bOM");
        // Without the application keypad, what the key says.
        assert_eq!(encode_key_with(&pad(KeyCode::Char('7')), false, false), b"7");
        assert_eq!(encode_key_with(&pad(KeyCode::Enter), false, false), b"\r");
        // The keypad's arrows follow DECCKM; a main-keyboard digit stays a digit.
        assert_eq!(encode_key_with(&pad(KeyCode::Up), true, true), b"\x1bOA");
        assert_eq!(
            encode_key_with(&key(KeyCode::Char('7'), KeyModifiers::NONE), false, true),
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
}
