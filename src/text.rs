//! Small text rules shared by every diagnostic the program stores or prints.

/// docs/design.md §4: reasons and diagnostics are bounded to 4096 UTF-8 bytes.
pub const MAX_DIAGNOSTIC: usize = 4096;

/// Cuts `s` to at most `max` bytes on a character boundary, marking the cut.
pub fn bounded(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    const MARK: &str = "…";
    let mut end = max.saturating_sub(MARK.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{MARK}", &s[..end])
}

/// Text for a terminal with every control character made inert, shown
/// escaped (`\x1b`, `\x07`, `\u{9b}`): an agent's output, a transcript's
/// words or a path can then neither move the cursor, set the title, write
/// the clipboard (OSC 52) nor hide what is printed. Newlines and tabs stay
/// (a `\r` before a newline is dropped); see [`inert_line`] for one line.
pub fn inert(s: &str) -> std::borrow::Cow<'_, str> {
    escape_controls(s, false)
}

/// [`inert`] for a value that must stay on one line (a name, a cwd, a
/// table cell): newlines and tabs are shown escaped too.
pub fn inert_line(s: &str) -> std::borrow::Cow<'_, str> {
    escape_controls(s, true)
}

fn escape_controls(s: &str, one_line: bool) -> std::borrow::Cow<'_, str> {
    let kept = |c: char| !one_line && (c == '\n' || c == '\t');
    let is_control = |c: char| (c.is_control() && !kept(c)) || c == '\u{2028}' || c == '\u{2029}';
    if !s.chars().any(is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if !is_control(c) {
            out.push(c);
        } else if c == '\r' && !one_line && chars.peek() == Some(&'\n') {
            // A CRLF line ending is a line ending.
        } else if (c as u32) < 0x100 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A path as the text agents keeps (records, the wire): refused when it is
/// not UTF-8, since a lossy copy would name another folder. The error
/// shows the path with its odd bytes escaped (`\xff`).
pub fn path_text(path: &std::path::Path) -> Result<&str, String> {
    path.to_str().ok_or_else(|| {
        let mut shown = String::new();
        for chunk in path.as_os_str().as_encoded_bytes().utf8_chunks() {
            shown.push_str(&inert_line(chunk.valid()));
            for b in chunk.invalid() {
                shown.push_str(&format!("\\x{b:02x}"));
            }
        }
        format!("the path {shown} is not UTF-8 text, which agents cannot keep: use a folder whose name is")
    })
}

/// Bytes as lowercase hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The bytes of a hexadecimal string; none when it is not one.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|pair| u8::from_str_radix(pair, 16).ok()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_goes_there_and_back() {
        assert_eq!(hex(&[0, 0xab, 0x7f]), "00ab7f");
        assert_eq!(unhex("00ab7f"), Some(vec![0, 0xab, 0x7f]));
        assert_eq!(unhex("0g"), None);
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("+1"), None);
    }

    #[test]
    fn control_bytes_are_shown_escaped_and_nothing_else_changes() {
        // A title set, a clipboard write, a CSI in its one-character form.
        let hostile = "a\x1b]2;pwned\x07b\x1b]52;c;ZXZpbA==\x07c\u{9b}31md";
        assert_eq!(inert(hostile), "a\\x1b]2;pwned\\x07b\\x1b]52;c;ZXZpbA==\\x07c\\x9b31md");
        assert_eq!(inert("two\r\nlines\tand é ✓"), "two\nlines\tand é ✓");
        assert!(matches!(inert("plain"), std::borrow::Cow::Borrowed("plain")));
        assert_eq!(inert_line("a\nb\tc\rd"), "a\\x0ab\\x09c\\x0dd");
    }

    #[test]
    fn bounded_cuts_on_a_char_boundary_within_the_limit() {
        let s = "é".repeat(3000);
        let b = bounded(&s, MAX_DIAGNOSTIC);
        assert!(b.len() <= MAX_DIAGNOSTIC);
        assert!(b.ends_with('…'));
        assert_eq!(bounded("short", 10), "short");
    }
}
