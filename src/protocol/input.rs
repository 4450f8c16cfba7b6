//! What a terminal program reads as typed input, shared by every place that
//! types into a run: the TUI's INSERT mode and the supervisor delivering a
//! queued prompt.

/// Text pasted into a program: wrapped in bracketed-paste markers when it
/// asked for them, with any end marker inside the text removed so a paste
/// cannot end the bracket early.
pub fn encode_paste(text: &str, bracketed: bool) -> Vec<u8> {
    if bracketed {
        let clean = text.replace("\x1b[201~", "");
        format!("\x1b[200~{clean}\x1b[201~").into_bytes()
    } else {
        text.replace("\r\n", "\r").replace('\n', "\r").into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paste_cannot_end_its_bracket_early_and_newlines_are_enters() {
        assert_eq!(encode_paste("a\x1b[201~b", true), b"\x1b[200~ab\x1b[201~");
        assert_eq!(encode_paste("a\nb", false), b"a\rb");
    }
}
