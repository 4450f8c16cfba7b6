/// `n` visible characters of a recognisable pattern: `tag` then digits.
fn filler(tag: char, n: usize) -> String {
    std::iter::once(tag)
        .chain((0..).map(|i| char::from(b'0' + (i % 10) as u8)))
        .take(n)
        .collect()
}

/// Numbered lines filling more than the largest screen.
fn numbered_lines(count: usize) -> String {
    (1..=count)
        .map(|n| format!("line {n:02} {}\r\n", filler('.', n % 13)))
        .collect()
}

pub fn plain_text_with_wrapping() -> Vec<u8> {
    let mut s = String::new();
    for (i, n) in [0, 5, 79, 80, 81, 150, 199, 200, 201, 260, 400, 1].iter().enumerate() {
        s.push_str(&filler(char::from(b'a' + i as u8), *n));
        s.push_str("\r\n");
    }
    s.push_str(&numbered_lines(30));
    // Bare LF keeps the column; CR and BS move back over text.
    s.push_str("stairs\nstep\nstep\r\noverwritten\rOVER\x08\x08xy");
    s.into_bytes()
}

pub fn sgr_colours() -> Vec<u8> {
    let mut s = String::new();
    for code in (30..=37).chain(90..=97) {
        s.push_str(&format!("\x1b[{code}m{code} \x1b[{}mbg\x1b[m ", code + 10));
    }
    s.push_str("\r\n");
    for i in (0..256).step_by(17) {
        s.push_str(&format!("\x1b[38;5;{i}m{i}\x1b[48;5;{}m#\x1b[0m ", 255 - i));
    }
    s.push_str("\r\n");
    for i in 0..12 {
        s.push_str(&format!("\x1b[38;2;{};{};{}mrgb{i}\x1b[m ", i * 20, 255 - i * 20, 128));
    }
    s.push_str("\r\n\x1b[1mbold\x1b[22m \x1b[3mitalic\x1b[23m \x1b[4munder\x1b[24m ");
    s.push_str("\x1b[7minverse\x1b[27m \x1b[2mdim\x1b[m \x1b[1;4;7;38;5;200mall\x1b[m\r\n");
    // Background colour erase, and the colon form of truecolor.
    s.push_str("\x1b[44m\x1b[Kblue line\x1b[m\r\n\x1b[38:2::255:0:0mcolon red\x1b[m end");
    s.into_bytes()
}

pub fn wide_characters() -> Vec<u8> {
    let mut s = String::new();
    s.push_str("漢字 かな カナ 한글 中文\r\n");
    s.push_str("emoji 😀🎉🚀 mixed a漢b字c\r\n");
    // A long run of wide characters wraps; an odd start column makes a
    // wide character meet the last column.
    s.push_str(&"字".repeat(130));
    s.push_str("\r\nx");
    s.push_str(&"漢".repeat(120));
    // Overwrite half of a wide character with a narrow one.
    s.push_str("\r\n\x1b[2;1H\x1b[1Cz\x1b[2;9H?");
    // Combining accent joins the previous cell.
    s.push_str("\x1b[12;1Hcafe\u{301} naïve");
    s.into_bytes()
}

pub fn scroll_regions() -> Vec<u8> {
    let mut s = numbered_lines(60);
    s.push_str("\x1b[5;15r\x1b[15;1H");
    for n in 0..4 {
        s.push_str(&format!("\nscrolled up {n}"));
    }
    // RI at the top margin scrolls the region down.
    s.push_str("\x1b[5;1H\x1bM\x1bMreversed twice");
    // SU and SD act on the region too.
    s.push_str("\x1b[2S\x1b[1T");
    // LF below the region on the last row does not scroll anything.
    s.push_str("\x1b[r\x1b[3;8r\x1b[20;1Hbelow\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n");
    s.push_str("\x1b[60;1Hbottom\n\nagain");
    s.push_str("\x1b[r\x1b[1;1Htop after reset");
    s.into_bytes()
}

pub fn insert_delete_lines() -> Vec<u8> {
    let mut s = numbered_lines(60);
    s.push_str("\x1b[3;1H\x1b[2Linserted\x1b[10;1H\x1b[3M");
    s.push_str("\x1b[4;12r\x1b[6;1H\x1b[2L\x1b[8;1H\x1b[1Mregion");
    // Excluded: IL/DL with the cursor outside the scroll region. The VT
    // manuals and xterm ignore them, and so do we; tmux 3.3a instead
    // inserts or deletes over the rows from the cursor to the bottom.
    s.push_str("\x1b[12;1H\x1b[2Lat the bottom margin");
    s.push_str("\x1b[r\x1b[7;4H\x1b[99Mcleared below");
    s.into_bytes()
}

pub fn insert_delete_chars() -> Vec<u8> {
    let mut s = String::new();
    for row in 1..=6 {
        s.push_str(&format!("\x1b[{row};1H{}", filler(char::from(b'A' + row), 100)));
    }
    s.push_str("\x1b[1;5H\x1b[3@ins\x1b[2;5H\x1b[4P\x1b[3;5H\x1b[6X");
    // Excluded: ICH inserting more blanks than it keeps characters (a
    // count above half the columns left). tmux 3.3a blanks only as many
    // cells as it moved (`grid_move_cells`), leaving stale text in the
    // gap, or the whole line when the count reaches the margin; xterm and
    // ours blank the full count. With 6 columns left, 3 is safe.
    s.push_str("\x1b[4;75H\x1b[3@\x1b[5;78H\x1b[9P\x1b[6;2H\x1b[200X");
    // Excluded: DCH on the left half of a wide character. tmux removes
    // the whole character, ours removes one cell and blanks the orphaned
    // right half; splitting a wide character has no defined result.
    // Inserting in front of one is well defined and kept.
    s.push_str("\x1b[9;1Hab漢字cd\x1b[9;3H\x1b[2@\x1b[9;9H\x1b[1P");
    s.into_bytes()
}

pub fn erase_line_and_display() -> Vec<u8> {
    let mut s = String::new();
    for row in 1..=50 {
        s.push_str(&format!("\x1b[{row};1H{}", filler('#', 200)));
    }
    s.push_str("\x1b[2;10H\x1b[K\x1b[3;10H\x1b[1K\x1b[4;10H\x1b[2K");
    s.push_str("\x1b[6;20H\x1b[1J\x1b[20;30H\x1b[J\x1b[12;5Hkept");
    s.push_str("\x1b[10;1H\x1b[0K\x1b[11;50H\x1b[0J\x1b[2;2H");
    s.into_bytes()
}

pub fn alternate_screen() -> Vec<u8> {
    let mut s = numbered_lines(8);
    s.push_str("prompt$ \x1b[?1049h\x1b[H\x1b[2Jfull screen app");
    s.push_str("\x1b[10;10Hmiddle\x1b[?1049lback\r\n");
    s.push_str("\x1b[?1049h\x1b[5;5Hstill in the alternate screen");
    s.into_bytes()
}

pub fn dec_graphics_box() -> Vec<u8> {
    let mut s = String::from("\x1b[2;3H\x1b(0lqqqqqqqqqqqqk\x1b(B");
    s.push_str("\x1b[3;3H\x1b(0x\x1b(B plain text \x1b(0x\x1b(B");
    // A CSI in the middle of a line-drawing run stays a CSI.
    s.push_str("\x1b[4;3H\x1b(0tqq\x1b[31mqq\x1b[mqqqqqqqqu");
    s.push_str("\x1b[5;3Hx\x1b[1;34m  blue   \x1b[mx");
    s.push_str("\x1b[6;3Hmqqqqqqqqqqqqj\x1b(B");
    // G1 via SO/SI, with the designation split from its use.
    s.push_str("\x1b)0\x1b[8;3H\x0elqwqk\x0f \x0ex x x\x0f \x0emqvqj\x0f after");
    // The whole table, and an OSC title while line drawing is on.
    s.push_str("\x1b[10;1H\x1b(0\x1b]2;lqk title\x07_`abcdefghijklmnopqrstuvwxyz{|}~\x1b(B ascii");
    s.into_bytes()
}

pub fn cursor_movement() -> Vec<u8> {
    let mut s = String::from("\x1b[Ha\x1b[5;10Hb\x1b[;20Hc\x1b[7Hd\x1b[999;999He");
    s.push_str("\x1b[10;10H\x1b[3Cf\x1b[5Dg\x1b[2Ah\x1b[4Bi\x1b[999Cj\x1b[999Dk");
    s.push_str("\x1b[1;1H\x1b[5Al\x1b[20Gm\x1b[15dn\x1b[2Eo\x1b[Fp\x1b[30`q");
    s.push_str("\x1b[18;40H\x1b7\x1b[1;1Hr\x1b8s\x08\x08\x08t\rU");
    s.push_str("\x1b[20;5H\x1b[0Cv\x1b[0Dw\x1b[0Ax\x1b[0By");
    s.into_bytes()
}

pub fn tabs() -> Vec<u8> {
    let mut s = String::from("a\tb\tc\td\r\n\tindented\t\ttwice\r\n");
    s.push_str("1234567\tat 8\r\n12345678\tat 16\r\n");
    s.push_str(&format!("{}\tend\r\n", filler('x', 76)));
    s.push_str(&"\t".repeat(40));
    s.push_str("last\r\n\x1b[5;1H\t\x08back");
    s.into_bytes()
}
