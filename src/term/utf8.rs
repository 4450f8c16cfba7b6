//! Whole UTF-8 characters for the parser.
//!
//! `vte` 0.15 finishes a character it was handed in two reads, but when an
//! invalid byte follows within the next three, it also skips the bytes in
//! between (`advance_partial_utf8` returns the valid length, not the
//! character's): `é` cut after its first byte and followed by ` \x80`
//! loses the space. Found by `tests/emulator_prop.rs`. Holding back a
//! character cut at the end of a read, and handing it over whole with the
//! next one, keeps the parser off that path; what it shows is the same,
//! since it never draws half a character anyway.

/// Holds back the cut character at the end of each chunk (at most 3 bytes).
#[derive(Debug, Default)]
pub(crate) struct WholeChars {
    held: Vec<u8>,
    joined: Vec<u8>,
}

impl WholeChars {
    /// The part of (what was held + `bytes`) that ends on a character
    /// boundary; a character cut at the end is kept for the next call.
    pub(crate) fn pass<'a>(&'a mut self, bytes: &'a [u8]) -> &'a [u8] {
        let input: &[u8] = if self.held.is_empty() {
            bytes
        } else {
            self.joined.clear();
            self.joined.append(&mut self.held);
            self.joined.extend_from_slice(bytes);
            &self.joined
        };
        let keep = cut_char_len(input);
        self.held.extend_from_slice(&input[input.len() - keep..]);
        &input[..input.len() - keep]
    }
}

/// How many bytes at the end of `b` are the start of a character whose
/// remaining bytes have not arrived (0 if none).
fn cut_char_len(b: &[u8]) -> usize {
    // A character is at most 4 bytes: its lead is among the last 3 if it is cut.
    let reach = b.len().saturating_sub(3);
    let Some(lead) = (reach..b.len()).rev().find(|&i| b[i] & 0xc0 != 0x80) else {
        return 0;
    };
    match std::str::from_utf8(&b[lead..]) {
        Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => b.len() - lead,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_character_cut_at_the_end_is_held_back() {
        assert_eq!(cut_char_len(b"abc"), 0);
        assert_eq!(cut_char_len("é".as_bytes()), 0);
        assert_eq!(cut_char_len(b"a\xc3"), 1);
        assert_eq!(cut_char_len(b"\xf0\x9f\x99"), 3);
        assert_eq!(cut_char_len(b"\xf0\x9f"), 2);
        // Invalid already: the parser replaces it now, nothing to wait for.
        assert_eq!(cut_char_len(b"\xc3A"), 0);
        assert_eq!(cut_char_len(b"\x80\x80\x80"), 0);
        assert_eq!(cut_char_len(b"\xc0"), 0);
        assert_eq!(cut_char_len(b""), 0);
    }

    #[test]
    fn a_cut_character_is_handed_over_whole_with_the_next_chunk() {
        let mut w = WholeChars::default();
        assert_eq!(w.pass(b"a\xf0\x9f"), b"a");
        assert_eq!(w.pass(b"\x99"), b"");
        assert_eq!(w.pass(b"\x82 b"), "🙂 b".as_bytes());
        assert_eq!(w.pass(b"c"), b"c");
    }
}
