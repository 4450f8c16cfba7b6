//! Issue #13's cases: sequences real programs send that a terminal must
//! get right, each compared with tmux in text, cursor and attributes.

use super::{SIZES, assert_like_tmux_at, assert_same_as_tmux, capture};

/// Numbered rows filling the screen, so scrolling shows.
fn rows(count: usize) -> String {
    (1..=count).map(|n| format!("row {n:02}\r\n")).collect()
}

/// A plain `|` at the end of every row, the cursor and pen kept: tmux
/// prints no cell past the last one written, so an erased row's colour
/// shows only with something after it.
fn row_ends(s: &mut String, rows: u16, cols: u16) {
    s.push_str("\x1b7\x1b[m");
    for r in 1..=rows {
        s.push_str(&format!("\x1b[{r};{cols}H|"));
    }
    s.push_str("\x1b8");
}

#[test]
fn index_and_next_line_scroll_at_the_bottom_margin_like_tmux() {
    let mut s = rows(60);
    // IND and NEL at the screen's last row scroll; NEL also returns.
    s.push_str("\x1b[999;5Hind\x1bDafter\x1bEnel");
    // Inside a region: at its bottom they scroll the region only.
    s.push_str("\x1b[3;8r\x1b[8;4Hbottom\x1bDx\x1bD\x1bEy\x1bEz");
    // Above the bottom margin they only move down.
    s.push_str("\x1b[4;2Hmid\x1bDd\x1bEe");
    // Below the region, on the last row, nothing scrolls.
    s.push_str("\x1b[999;1Hlast\x1bD\x1bEend");
    assert_same_as_tmux(s.as_bytes());
}

#[test]
fn decaln_fills_the_screen_with_e_and_homes_like_tmux() {
    let s = "text\x1b[5;10r\x1b[1;31m\x1b[7;7H\x1b#8\x1b[3;3Hx\x1b[20;1Hy";
    assert_same_as_tmux(s.as_bytes());
}

#[test]
fn tab_stops_set_and_cleared_move_tabs_like_tmux() {
    let mut s = String::from("\x1b[1;5H\x1bH\x1b[1;13H\x1bH\r\ta\tb\tc\r\n");
    // Clear the stop under the cursor (8), then at 5 with `CSI 0 g`.
    s.push_str("\x1b[3;9H\x1b[g\x1b[3;5H\x1b[0g\r\ta\tb\tc\r\n");
    // Clear all: a tab goes to the last column.
    s.push_str("\x1b[3g\tall\r\n\x1b[10;40H\x1bH\r\tone\t\ttwo");
    assert_same_as_tmux(s.as_bytes());
}

#[test]
fn insert_mode_pushes_text_right_and_off_the_margin_like_tmux() {
    let mut s = String::from("abcdefgh\r\x1b[4hXY\x1b[4lZ\r\n");
    // Wide characters inserted, and pushed along.
    s.push_str("ab漢字cd\x1b[2;3H\x1b[4h界\x1b[2;1Hx\x1b[4l\r\n");
    // At the right margin: what is pushed past it is lost, a wide
    // character pushed half over it goes.
    s.push_str(&format!(
        "\x1b[5;1H{}\x1b[5;1H\x1b[4h\x1b[31m12\x1b[4l\x1b[m",
        "0123456789".repeat(20)
    ));
    s.push_str("\x1b[6;1H");
    s.push_str(&"字".repeat(100));
    s.push_str("\x1b[6;1H\x1b[4hab\x1b[4l\x1b[8;1H\x1b[4hinsert then wrap");
    s.push_str(&"w".repeat(200));
    assert_same_as_tmux(s.as_bytes());
}

/// DECCOLM (`CSI ? 3 h/l`): xterm switches between 132 and 80 columns,
/// clears the screen, homes the cursor and resets the margins (xterm's
/// ctlseqs, "DECCOLM"), when its `allowC132` resource lets it. tmux never
/// resizes a pane for it; it clears and homes, and keeps the margins (the
/// rows after the first stream show the region still scrolling). Ours does
/// what tmux does: the size belongs to the client (docs/design.md §6), not
/// to the program, and margins a program set stay until it sets others.
#[test]
fn deccolm_clears_and_homes_without_resizing_like_tmux() {
    let mut s = rows(10);
    s.push_str("\x1b[44m\x1b[5;9r\x1b[7;7H\x1b[?3hafter 132\x1b[m\r\n\nnext");
    s.push_str("\x1b[9;1Hin region?\n\n\nscrolled");
    assert_same_as_tmux(s.as_bytes());
    let mut s = rows(10);
    s.push_str("\x1b[7;7H\x1b[?3lafter 80");
    assert_same_as_tmux(s.as_bytes());
}

#[test]
fn setting_the_scroll_region_homes_the_cursor_like_tmux() {
    let mut s = rows(30);
    s.push_str("\x1b[10;12H\x1b[5;15rhome");
    assert_same_as_tmux(s.as_bytes());
    // Under origin mode, home is the region's top.
    let mut s = rows(30);
    s.push_str("\x1b[?6h\x1b[10;12H\x1b[5;15rtop of region\x1b[?6l");
    assert_same_as_tmux(s.as_bytes());
}

/// Selective erase (DECSED `CSI ? J`, DECSEL `CSI ? K`) erases what
/// DECSCA did not protect (xterm's ctlseqs). tmux 3.3a has no DECSCA and
/// ignores both sequences; with nothing protected xterm erases as ED and
/// EL do, and so does ours: tmux is fed ED / EL to show that.
#[test]
fn selective_erase_erases_like_xterm_where_tmux_ignores_it() {
    let mut ours = String::new();
    for r in 1..=50 {
        ours.push_str(&format!("\x1b[{r};1H{}", "#".repeat(200)));
    }
    ours.push_str("\x1b[43m\x1b[3;10H\x1b[?K\x1b[4;10H\x1b[?1K\x1b[5;10H\x1b[?2K");
    ours.push_str("\x1b[20;10H\x1b[?0J\x1b[8;5H\x1b[?1J\x1b[m\x1b[12;3Hkept");
    let tmux = ours.replace("\x1b[?", "\x1b[");
    for (rows, cols) in SIZES {
        assert_like_tmux_at(rows, cols, ours.as_bytes(), tmux.as_bytes());
    }
    let all = "text\x1b[5;5H\x1b[?2Jx";
    for (rows, cols) in SIZES {
        assert_like_tmux_at(rows, cols, all.as_bytes(), all.replace("\x1b[?", "\x1b[").as_bytes());
    }
}

/// DECSCA (`CSI 1 " q`) protects what is printed after it until `CSI 0 " q`
/// or `CSI 2 " q`; DECSED and DECSEL then leave those cells, ED and EL
/// erase them like any (xterm's ctlseqs). tmux 3.3a ignores all three, so
/// it is fed what xterm shows. The first stream is alacritty's
/// `selective_erasure` recording (its reference set, 10x3), where
/// alacritty, which has no selective erase, keeps every cell.
#[test]
fn decsca_protects_cells_from_selective_erase_but_not_from_ed_and_el_like_xterm() {
    let recording = "\x1b[HA\x1b[1\"qB\x1b[2\"qC\x1b[?2J\r\nA\x1b[1\"qB\x1b[2\"qC\x1b[?2K\r\n";
    let xterm = "\x1b[1;2HB\x1b[2;2HB\x1b[3;1H";
    for (rows, cols) in [(3, 10)].into_iter().chain(SIZES) {
        assert_like_tmux_at(rows, cols, recording.as_bytes(), xterm.as_bytes());
    }

    // Protected `A` and `C`, not `b` and `d` (`CSI " q` is `CSI 0 " q`).
    let line = "\x1b[1\"qAAAA\x1b[0\"qbbbb\x1b[1\"qCC\x1b[\"qdd";
    let mut ours: String = (1..=6).map(|r| format!("\x1b[{r};1H{line}")).collect();
    ours.push_str("\x1b[1;3H\x1b[?K\x1b[2;10H\x1b[?1K\x1b[3;1H\x1b[?2K");
    ours.push_str("\x1b[4;1H\x1b[2K\x1b[5;3H\x1b[?J");
    let mut xterm: String = [1, 3, 5, 6].map(|r| format!("\x1b[{r};1HAAAA\x1b[{r};9HCC")).concat();
    xterm.push_str("\x1b[2;1HAAAA\x1b[2;9HCCdd\x1b[5;3H");
    for (rows, cols) in SIZES {
        assert_like_tmux_at(rows, cols, ours.as_bytes(), xterm.as_bytes());
    }

    // ED and EL erase protected cells too; a wide character is protected whole.
    // DECSEL from the right half of `世` leaves it and what follows.
    let plain = "\x1b[1\"qkept\x1b[2J\x1b[Hwide \u{4e16}\u{754c} x\x1b[0\"q\x1b[1;7H\x1b[?K\x1b[1;10H\x1b[K";
    let xterm = "\x1b[Hwide \u{4e16}\u{754c}\x1b[1;10H";
    for (rows, cols) in SIZES {
        assert_like_tmux_at(rows, cols, plain.as_bytes(), xterm.as_bytes());
    }
}

#[test]
fn charsets_around_save_restore_and_the_alternate_screen_like_tmux() {
    // The shell's prompt after a program that saved the cursor, chose line
    // drawing, used the alternate screen and left it.
    let s = "$ \x1b7\x1b(0\x1b[?1049hlqqk\x1b[?1049l\x1b8qqq prompt\r\n";
    assert_same_as_tmux(s.as_bytes());
    // Without DECSC / DECRC, 1049 leaves the designation as it is.
    let s = "$ \x1b(0\x1b[?1049hlqk\x1b[?1049lqqq\x1b(B plain";
    assert_same_as_tmux(s.as_bytes());
    // DECSC keeps G0, G1 and the shift; DECRC brings them back.
    let s = "\x1b)0\x0e\x1b7\x0f\x1b(B\x1b)Bqq \x1b8qq\x0f\x1b(0 qq\x1b(B\r\n";
    assert_same_as_tmux(s.as_bytes());
    // The saved cursor is one for both screens, as in tmux.
    let s = "\x1b[5;5H\x1b7\x1b[?1049h\x1b[1;1Halt\x1b8saved";
    assert_same_as_tmux(s.as_bytes());
    let s = "\x1b[?1049h\x1b[3;3H\x1b7\x1b[?1049l\x1b[1;1H\x1b8from alt";
    assert_same_as_tmux(s.as_bytes());
    // CSI s / u are DECSC / DECRC by other names.
    let s = "\x1b(0\x1b[s\x1b(B\x1b[10;10Hx\x1b[uqq";
    assert_same_as_tmux(s.as_bytes());
    // So is `CSI ? 1048 h/l` in xterm (ctlseqs: "Save cursor as in DECSC");
    // tmux 3.3a ignores it, so tmux is fed DECSC / DECRC.
    let s = "\x1b(0\x1b[?1048h\x1b(B\x1b[12;1Hx\x1b[?1048lqq";
    let in_tmux = s.replace("\x1b[?1048h", "\x1b7").replace("\x1b[?1048l", "\x1b8");
    for (rows, cols) in SIZES {
        assert_like_tmux_at(rows, cols, s.as_bytes(), in_tmux.as_bytes());
    }
}

/// Background colour erase: the rows a scroll brings in take the current
/// background, as vim relies on when it scrolls a coloured window.
#[test]
fn lines_scrolled_into_a_region_take_the_background_like_tmux() {
    for (rows, cols) in SIZES {
        let mut s = self::rows(60);
        s.push_str("\x1b[5;15r\x1b[44m\x1b[15;1H\n\nblue\x1b[5;1H\x1bM\x1bM");
        s.push_str("\x1b[42m\x1b[2S\x1b[1T\x1b[8;1H\x1b[2L\x1b[10;1H\x1b[1M");
        s.push_str("\x1b[45m\x1b[15;1H\x1bD\x1bE\x1b[r\x1b[46m\x1b[999;1H\n\n\x1b[m");
        row_ends(&mut s, rows, cols);
        assert_like_tmux_at(rows, cols, s.as_bytes(), s.as_bytes());
    }
}

#[test]
fn every_attribute_and_underline_style_and_colour_like_tmux() {
    let mut s = String::new();
    for (on, off) in [
        (1, 22),
        (2, 22),
        (3, 23),
        (4, 24),
        (5, 25),
        (7, 27),
        (8, 28),
        (9, 29),
        (21, 24),
    ] {
        s.push_str(&format!("\x1b[{on}m{on}\x1b[{off}m-"));
    }
    s.push_str("\r\n\x1b[6mrapid\x1b[m ");
    for n in 0..=5 {
        s.push_str(&format!("\x1b[4:{n}mu{n}\x1b[m "));
    }
    s.push_str("\r\n\x1b[4;58;5;1mindexed\x1b[59mreset\x1b[58:2::1:2:3mcolon\x1b[58;2;9;8;7msemi");
    s.push_str("\x1b[58:5:200mcolon indexed\x1b[24mno line\x1b[m\r\n");
    // The `58;5;1` that once read as blink and bold.
    s.push_str("\x1b[58;5;1mnot bold\x1b[m \x1b[1;2;3;4:3;5;7;8;9;31;42;58;5;3mall\x1b[0mnone\r\n");
    s.push_str("\x1b[9;44m\x1b[Kstruck blue line\x1b[m\r\n\x1b[4:3;58;2;255;0;0m漢字\x1b[m");
    assert_same_as_tmux(s.as_bytes());
}

/// The comparison itself: a stream that differs only in a colour must be
/// reported, or every attribute check above could pass on nothing.
#[test]
fn the_attribute_comparison_sees_a_colour_that_differs() {
    let ours = super::ours(24, 80, b"\x1b[31mred\x1b[m");
    let tmux = super::TmuxServer::start(24, 80, b"\x1b[32mred\x1b[m").captured();
    assert_eq!(ours.screen, tmux.screen, "the text is the same");
    assert!(!capture::pen_differences(&ours.pens, &tmux.pens, 1).is_empty());
}
