//! The translator alone: bytes in, bytes for the parser out.

use super::*;

fn translate_chunks(chunks: &[&[u8]]) -> Vec<u8> {
    let mut graphics = DecGraphics::default();
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend_from_slice(graphics.translate(chunk, &mut scratch));
    }
    out
}

fn translate(bytes: &[u8]) -> Vec<u8> {
    translate_chunks(&[bytes])
}

#[test]
fn ascii_output_passes_through_without_copying() {
    let mut graphics = DecGraphics::default();
    let mut scratch = Vec::new();
    let input = b"plain \x1b[1;31mred\x1b[m \x1b]2;title\x07 text\n";
    let out = graphics.translate(input, &mut scratch);
    assert!(std::ptr::eq(out, input.as_slice()));
    assert!(scratch.is_empty());
}

#[test]
fn line_drawing_letters_become_box_characters() {
    assert_eq!(translate(b"\x1b(0lqk\x1b(Blqk"), "\x1b(0┌─┐\x1b(Blqk".as_bytes());
}

#[test]
fn every_split_point_gives_the_same_output() {
    let input: &[u8] = b"a\x1b(0lq\x1b[1;31mqk\x1b]2;lqk\x07x\x0e\x1b)0q\x0fq\x1b(Bq";
    let whole = translate(input);
    for split in 0..=input.len() {
        let (a, b) = input.split_at(split);
        assert_eq!(translate_chunks(&[a, b]), whole, "split at {split}");
    }
    let bytewise: Vec<&[u8]> = input.chunks(1).collect();
    assert_eq!(translate_chunks(&bytewise), whole);
}

#[test]
fn csi_parameters_and_finals_are_not_translated() {
    // `q` is the final byte of DECSCUSR; `p`..`~` appear as CSI finals.
    assert_eq!(
        translate(b"\x1b(0\x1b[2 q\x1b[?25lq"),
        "\x1b(0\x1b[2 q\x1b[?25l─".as_bytes()
    );
}

#[test]
fn osc_dcs_and_apc_strings_are_not_translated() {
    let input: &[u8] = b"\x1b(0\x1b]0;lqk\x1b\\\x1bPqlqk\x1b\\\x1b_lqk\x1b\\x";
    let mut expected = input[..input.len() - 1].to_vec();
    expected.extend_from_slice("│".as_bytes());
    assert_eq!(translate(input), expected);
}

#[test]
fn shift_out_and_in_switch_between_g1_and_g0() {
    assert_eq!(translate(b"\x1b)0q\x0eq\x0fq"), "\x1b)0q\x0e─\x0fq".as_bytes());
}

#[test]
fn shift_out_before_the_designation_still_counts() {
    assert_eq!(translate(b"\x0eq\x1b)0q"), "\x0eq\x1b)0─".as_bytes());
}

#[test]
fn shift_controls_inside_csi_are_executed_but_not_inside_osc() {
    assert_eq!(translate(b"\x1b)0\x1b[1\x0emq"), "\x1b)0\x1b[1\x0em─".as_bytes());
    assert_eq!(translate(b"\x1b)0\x1b]2;\x0e\x07q"), b"\x1b)0\x1b]2;\x0e\x07q");
}

#[test]
fn cancel_aborts_a_designation() {
    assert_eq!(translate(b"\x1b(\x180q"), b"\x1b(\x180q");
}

#[test]
fn two_intermediates_are_not_a_g0_designation() {
    // `ESC ( % 5` would designate a 96-character set in xterm; not ours.
    assert_eq!(translate(b"\x1b(%0q"), b"\x1b(%0q");
}

#[test]
fn save_and_restore_cursor_carry_the_charsets() {
    assert_eq!(
        translate(b"\x1b(0\x1b7\x1b(Bq\x1b8q"),
        "\x1b(0\x1b7\x1b(Bq\x1b8─".as_bytes()
    );
}

#[test]
fn full_reset_returns_to_ascii() {
    assert_eq!(translate(b"\x1b(0\x1bcq"), b"\x1b(0\x1bcq");
}

#[test]
fn restore_sequence_reproduces_the_state() {
    let mut graphics = DecGraphics::default();
    let _ = graphics.translate(b"\x1b(0\x1b)0\x0e", &mut Vec::new());
    let mut fresh = DecGraphics::default();
    let _ = fresh.translate(&graphics.restore_sequence(), &mut Vec::new());
    assert_eq!(fresh.sets, graphics.sets);
    assert!(DecGraphics::default().restore_sequence().is_empty());
}

/// The definition the fast path must agree with: every byte through the
/// state machine, one at a time.
fn reference_translate(bytes: &[u8]) -> Vec<u8> {
    let mut graphics = DecGraphics::default();
    let mut out = Vec::new();
    for &byte in bytes {
        let glyph = glyph(byte).filter(|_| graphics.seq == Seq::Ground && graphics.sets.gl() == Charset::DecGraphics);
        match glyph {
            Some(glyph) => out.extend_from_slice(glyph.to_string().as_bytes()),
            None => {
                graphics.step(byte);
                out.push(byte);
            }
        }
    }
    out
}

#[test]
fn fast_path_agrees_with_byte_by_byte_tracking_on_random_streams() {
    // Bytes that matter to charsets and sequence boundaries, plus text.
    const ALPHABET: &[u8] = b"\x1b\x1b\x1b()0B[]P_X^\\;7 8c1qxlk \x0e\x0f\x07\x18\x7f\x9c\xc3\xa9a$%#";
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let len = (next() % 64) as usize;
        let stream: Vec<u8> = (0..len)
            .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
            .collect();
        let expected = reference_translate(&stream);
        assert_eq!(translate(&stream), expected, "stream {stream:?}");
        let mut chunks = Vec::new();
        let mut rest = stream.as_slice();
        while !rest.is_empty() {
            let (chunk, tail) = rest.split_at((next() as usize % 5).min(rest.len()).max(1));
            chunks.push(chunk);
            rest = tail;
        }
        assert_eq!(translate_chunks(&chunks), expected, "stream {stream:?} in {chunks:?}");
    }
}
