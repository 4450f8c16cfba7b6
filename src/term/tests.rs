//! Bytes in, lines / cursor / replies out.

use super::*;

fn term_with(rows: u16, cols: u16, bytes: &[u8]) -> Terminal {
    let mut term = Terminal::new(rows, cols);
    term.feed(bytes);
    term
}

#[test]
fn zero_size_is_clamped_to_one() {
    let term = Terminal::new(0, 0);
    assert_eq!(term.size(), (1, 1));
}

#[test]
fn plain_text_and_cursor() {
    let term = term_with(3, 10, b"hello\r\nworld   ");
    assert_eq!(term.visible_lines(), ["hello", "world", ""]);
    assert_eq!(term.cursor(), (1, 8));
}

#[test]
fn cursor_position_query_is_answered_one_based() {
    let mut term = term_with(24, 80, b"\x1b[5;10Hx\x1b[6n");
    assert_eq!(term.take_replies(), b"\x1b[5;11R");
    assert!(term.take_replies().is_empty(), "replies are drained");
}

#[test]
fn cursor_position_query_split_across_feeds_is_answered() {
    let mut term = Terminal::new(24, 80);
    term.feed(b"abc\x1b[");
    assert!(term.take_replies().is_empty());
    term.feed(b"6n");
    assert_eq!(term.take_replies(), b"\x1b[1;4R");
}

#[test]
fn cursor_report_with_pending_wrap_names_the_last_column() {
    let mut term = term_with(2, 5, b"abcde\x1b[6n");
    assert_eq!(term.cursor(), (0, 5));
    assert_eq!(term.take_replies(), b"\x1b[1;5R");
}

#[test]
fn status_and_private_cursor_reports() {
    let mut term = term_with(24, 80, b"\x1b[5n\x1b[3;4H\x1b[?6n");
    assert_eq!(term.take_replies(), b"\x1b[0n\x1b[?3;4R");
}

#[test]
fn device_attribute_queries_are_answered() {
    let mut term = term_with(24, 80, b"\x1b[c\x1b[0c\x1b[>c\x1b[>0c");
    assert_eq!(
        term.take_replies(),
        b"\x1b[?62;22c\x1b[?62;22c\x1b[>1;10;0c\x1b[>1;10;0c"
    );
}

#[test]
fn mode_queries_report_what_the_screen_holds() {
    let mut term = term_with(24, 80, b"\x1b[?2004h\x1b[?25l");
    term.feed(b"\x1b[?2004$p\x1b[?25$p\x1b[?1$p\x1b[?2026$p\x1b[4$p");
    assert_eq!(
        term.take_replies(),
        b"\x1b[?2004;1$y\x1b[?25;2$y\x1b[?1;2$y\x1b[?2026;0$y\x1b[4;2$y"
    );
}

#[test]
fn text_area_size_query_is_answered() {
    let mut term = term_with(50, 200, b"\x1b[18t");
    assert_eq!(term.take_replies(), b"\x1b[8;50;200t");
}

#[test]
fn other_sequences_get_no_reply() {
    let mut term = term_with(24, 80, b"\x1b[>4;2m\x1b[1c\x1b[31mx\x1b]11;?\x07");
    assert!(term.take_replies().is_empty());
}

#[test]
fn dec_graphics_box_is_drawn_with_box_characters() {
    let term = term_with(4, 10, b"\x1b(0lqqk\r\nx  x\r\nmqqj\x1b(B\r\nlqqk");
    assert_eq!(term.visible_lines(), ["┌──┐", "│  │", "└──┘", "lqqk"]);
}

#[test]
fn dec_graphics_maps_the_whole_range() {
    let term = term_with(1, 40, b"\x1b(0`afgjklmnopqrstuvwxyz{|}~\x1b(B");
    assert_eq!(term.visible_lines(), ["◆▒°±┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·"]);
}

#[test]
fn dec_graphics_leaves_digits_capitals_and_utf8_alone() {
    let term = term_with(1, 20, "\x1b(0AZ09 é─q\x1b(B".as_bytes());
    assert_eq!(term.visible_lines(), ["AZ09 é──"]);
}

#[test]
fn shift_out_selects_g1_and_shift_in_returns_to_g0() {
    let term = term_with(1, 20, b"\x1b)0q\x0eqx\x0fq\x0eq");
    assert_eq!(term.visible_lines(), ["q─│q─"]);
}

#[test]
fn dec_graphics_designation_split_across_feeds() {
    let mut term = Terminal::new(1, 20);
    for chunk in [b"a\x1b".as_slice(), b"(", b"0q", b"q\x1b(", b"Bq"] {
        term.feed(chunk);
    }
    assert_eq!(term.visible_lines(), ["a──q"]);
}

#[test]
fn dec_graphics_is_not_applied_inside_escape_sequences() {
    let mut term = term_with(2, 20, b"\x1b(0\x1b]2;lqqk title\x07q\x1b[1;2Hq");
    assert_eq!(term.title(), "lqqk title");
    // CSI parameters and final bytes (`H`, and `q` is a valid CSI final too)
    // stay untranslated: the sequence below moves the cursor, then draws.
    term.feed(b"\x1b[2;3Hx\x1b[0 qn\x1b(B");
    assert_eq!(term.visible_lines(), ["──", "  │┼"]);
}

#[test]
fn title_comes_from_osc_0_and_2() {
    let mut term = term_with(1, 10, b"\x1b]0;first\x07");
    assert_eq!(term.title(), "first");
    term.feed(b"\x1b]2;second\x1b\\");
    assert_eq!(term.title(), "second");
    term.feed(b"\x1b]2;with;semicolons\x07");
    assert_eq!(term.title(), "with;semicolons");
    term.feed(b"\x1b]1;icon only\x07");
    assert_eq!(term.title(), "with;semicolons");
}

#[test]
fn bells_are_counted_but_not_inside_osc_terminators() {
    let term = term_with(1, 10, b"a\x07b\x07\x1b]2;t\x07");
    assert_eq!(term.bells(), 2);
}

#[test]
fn scrolled_lines_counts_rows_pushed_off_the_main_screen() {
    let mut term = term_with(3, 10, b"1\r\n2\r\n3\r\n4\r\n5");
    assert_eq!(term.scrolled_lines(), 2);
    assert_eq!(term.visible_lines(), ["3", "4", "5"]);
    // The alternate screen does not count.
    term.feed(b"\x1b[?1049h\r\n\r\n\r\n\r\n\x1b[?1049l");
    assert_eq!(term.scrolled_lines(), 2);
    // Wrapping counts like a newline.
    term.feed(b"\r\n0123456789abc");
    assert_eq!(term.scrolled_lines(), 4);
}

#[test]
fn a_new_height_keeps_a_pending_wrap() {
    // The line fills the row: the next character wraps. A taller or
    // shorter screen of the same width must not make it overwrite the
    // last one (a character lost in `agents logs`).
    for rows in [2, 4, 19] {
        let mut term = term_with(3, 15, b"abcdefghijklmno");
        term.resize(rows, 15);
        term.feed(b"pqr");
        let text = term.visible_lines().join("|");
        assert!(text.contains("abcdefghijklmno|pqr"), "{rows} rows: {text}");
    }
}

#[test]
fn resize_keeps_the_bottom_rows_and_rewraps_the_cursor_s_line() {
    let mut term = term_with(4, 10, b"a\r\nb\r\nc\r\nd012345678");
    term.resize(2, 5);
    assert_eq!(term.size(), (2, 5));
    // As tmux: the last line rewrapped in two, `c` pushed off after `a`
    // and `b`, the cursor still after the `8` (its wrap pending).
    assert_eq!(term.visible_lines(), ["d0123", "45678"]);
    assert_eq!(term.cursor(), (1, 5));
    assert_eq!(term.scrolled_lines(), 3);
    term.resize(0, 0);
    assert_eq!(term.size(), (1, 1));
}

#[test]
fn a_wrapped_line_is_rejoined_when_the_screen_widens_and_split_when_it_narrows() {
    let mut term = term_with(6, 10, b"0123456789abcdefghijKLMNO\r\nshort\r\n$ ");
    assert_eq!(
        term.visible_lines(),
        ["0123456789", "abcdefghij", "KLMNO", "short", "$", ""]
    );
    term.resize(6, 30);
    // No history to pull rows back from: blank rows come in at the bottom.
    assert_eq!(
        term.visible_lines(),
        ["0123456789abcdefghijKLMNO", "short", "$", "", "", ""]
    );
    assert_eq!(term.cursor(), (2, 2));
    term.resize(6, 8);
    // As tmux: the blank rows below the cursor are lines too, so the
    // rewrapped line's first rows go off the top.
    assert_eq!(term.visible_lines(), ["O", "short", "$", "", "", ""]);
    assert_eq!(term.cursor(), (2, 2));
    assert_eq!(term.scrolled_lines(), 3);
}

#[test]
fn a_hard_line_end_stays_one_when_the_screen_widens() {
    // Exactly as wide as the screen, then CR LF: two lines, not one.
    let mut term = term_with(4, 5, b"01234\r\n56789\r\n");
    term.resize(4, 20);
    assert_eq!(term.visible_lines(), ["01234", "56789", "", ""]);
}

#[test]
fn the_cursor_keeps_its_character_through_a_reflow() {
    // Back over the `M`, mid-line, on a screen the line fills.
    let mut term = term_with(3, 10, b"0123456789abcdefghijKLMNO\x1b[3D");
    assert_eq!(term.cursor(), (2, 2));
    term.resize(3, 13);
    assert_eq!(term.visible_lines(), ["0123456789abc", "defghijKLMNO", ""]);
    assert_eq!(term.cursor(), (1, 9));
    term.feed(b"*");
    assert_eq!(term.visible_lines()[1], "defghijKL*NO");
    term.resize(3, 7);
    // 25 characters at 7 and the blank row: the first two rows went off
    // the top; the cursor is still on the `N`.
    assert_eq!(term.visible_lines(), ["efghijK", "L*NO", ""]);
    assert_eq!(term.cursor(), (1, 2));
}

#[test]
fn a_wide_character_that_does_not_fit_moves_to_the_next_row() {
    let mut term = Terminal::with_history(3, 10, 100);
    term.feed("abcde界x\r\n".as_bytes());
    term.resize(3, 6);
    // `界` does not fit in the sixth column: the row wraps before it.
    assert_eq!(term.history().collect::<Vec<_>>(), ["abcde"]);
    assert_eq!(term.visible_lines(), ["界x", "", ""]);
    // Wider, the line is rewrapped whole with its row above the screen,
    // and the screen is its last rows, as tmux (checked by hand: `x`).
    term.resize(3, 7);
    assert_eq!(term.history().collect::<Vec<_>>(), ["abcde界"]);
    assert_eq!(term.visible_lines(), ["x", "", ""]);
}

#[test]
fn the_alternate_screen_is_cropped_and_the_main_one_rewrapped_once_left() {
    let mut term = term_with(4, 10, b"0123456789abc\x1b[?1049h\x1b[Hmenu 123456");
    term.resize(4, 5);
    assert_eq!(term.visible_lines(), ["menu", "6", "", ""]);
    term.resize(4, 20);
    // Rewrapped from 10 columns to 20 at once, as tmux: the narrow size
    // between pushed nothing off.
    term.feed(b"\x1b[?1049lZ");
    assert_eq!(term.visible_lines(), ["0123456789abcZ", "", "", ""]);
    assert_eq!(term.scrolled_lines(), 0);
}

#[test]
fn a_line_feed_or_erasing_the_row_unwraps_it() {
    // The program goes back up to the wrapped row and ends it with LF.
    let mut term = term_with(4, 5, b"0123456789\x1b[1;1H\n");
    term.resize(4, 20);
    assert_eq!(term.visible_lines(), ["01234", "56789", "", ""]);
    let mut term = term_with(4, 5, b"0123456789\x1b[1;1H\x1b[2K\x1b[2;3H");
    term.resize(4, 20);
    assert_eq!(term.visible_lines(), ["", "56789", "", ""]);
}

#[test]
fn growing_after_scrolling_pulls_rows_back_on_top() {
    let mut term = term_with(3, 10, b"1\r\n2\r\n3\r\n4\r\n5");
    term.resize(5, 10);
    // As tmux brings lines 1 and 2 back from its history.
    assert_eq!(term.visible_lines(), ["1", "2", "3", "4", "5"]);
    assert_eq!(term.cursor(), (4, 1));
    // Rows no longer kept (ED 3 clears them, as tmux its history) do not
    // come back: the screen grows at the bottom, as tmux's does then.
    let mut cleared = term_with(3, 10, b"1\r\n2\r\n3\r\n4\r\n5\x1b[3J");
    cleared.resize(5, 10);
    assert_eq!(cleared.visible_lines(), ["3", "4", "5", "", ""]);
    // A screen that never scrolled grows at the bottom.
    let mut fresh = term_with(3, 10, b"a\r\nb");
    fresh.resize(5, 10);
    assert_eq!(fresh.visible_lines(), ["a", "b", "", "", ""]);
}

fn assert_snapshot_round_trips(term: &Terminal) {
    let (rows, cols) = term.size();
    let mut copy = Terminal::new(rows, cols);
    copy.feed(&term.snapshot());
    assert_eq!(copy.visible_lines(), term.visible_lines());
    assert_eq!(copy.cursor(), term.cursor());
    assert_eq!(copy.title(), term.title());
    assert_eq!(copy.modes(), term.modes());
    assert_eq!(copy.alternate_screen(), term.alternate_screen());
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for row in 0..rows {
        copy.row_cells(row, &mut a);
        term.row_cells(row, &mut b);
        assert_eq!(a, b, "row {row}");
    }
}

/// Feeds `then` to `term` and to a copy made from its snapshot: both show
/// the same afterwards (what the snapshot carries that the screen does not
/// show yet: the saved cursor, the region, the main screen under the
/// alternate one, modes and charsets).
fn assert_behaves_the_same_after_snapshot(mut term: Terminal, then: &[u8]) {
    let (rows, cols) = term.size();
    let mut copy = Terminal::new(rows, cols);
    copy.feed(&term.snapshot());
    term.feed(then);
    copy.feed(then);
    assert_snapshot_round_trips(&term);
    assert_eq!(copy.visible_lines(), term.visible_lines());
    assert_eq!(copy.cursor(), term.cursor());
}

#[test]
fn a_snapshot_carries_the_main_screen_under_the_alternate_one() {
    let term = term_with(4, 20, b"shell $ ls\r\nfile\x1b[?1049h\x1b[2;3Hmenu");
    assert_behaves_the_same_after_snapshot(term, b"\x1b[?1049lafter");
}

#[test]
fn a_snapshot_carries_which_cells_decsca_protected_and_its_state() {
    // Protected cells (a wrapped row's last and next first too), DECSCA
    // still on, and saved off with the cursor.
    let term = term_with(
        4,
        10,
        b"ab\x1b[1\"qcd\x1b[0\"qef\x1b7\x1b[2;9Hgh\x1b[1\"qij\x1b[0\"qk\x1b[4;1H\x1b[1\"q",
    );
    assert_behaves_the_same_after_snapshot(term, b"pq\x1b8rs\x1b[?2J");
}

#[test]
fn a_snapshot_carries_the_saved_cursor_region_and_origin_mode() {
    let term = term_with(6, 20, b"\x1b[3;5H\x1b[1;32m\x1b7\x1b[m\x1b[2;5r\x1b[?6h\x1b[2;1Hin");
    assert_behaves_the_same_after_snapshot(term, b"\r\nx\r\ny\r\nz\r\nw\x1b8saved\x1b[1;1Htop");
}

#[test]
fn a_snapshot_carries_a_pending_wrap_modes_tabs_and_charsets() {
    let term = term_with(3, 10, b"\x1b[3g\x1b[1;4H\x1bH\x1b)0\x0e\x1b[4h\x1b[2;1H0123456789");
    assert!(term.cursor().1 == 10, "a wrap is pending");
    assert_behaves_the_same_after_snapshot(term, b"q\tq\x0fq\x1b[1;1Hab");
}

/// What the property test found: a cursor DECSTBM left outside the region
/// under origin mode (above it, below it after CUD, at a pending wrap),
/// the main screen's cursor under a 47 alternate screen, and a 1049 save
/// left behind by leaving with 47.
#[test]
fn a_snapshot_carries_a_cursor_outside_the_region_and_the_main_cursor_under_47() {
    let above = term_with(8, 1, b"\x1b[?6h\x1b[3;7r");
    assert_behaves_the_same_after_snapshot(above, b"x");
    let below = term_with(8, 1, b"\x1b[?6h\x1b[3;7r\x1b[7B");
    assert_behaves_the_same_after_snapshot(below, b"x\x1b[2Ay");
    let wrapped = term_with(4, 1, b"\x1b[?7l\x1b[?6h\x1b[3;7r A");
    assert_behaves_the_same_after_snapshot(wrapped, b"B");
    let under_47 = term_with(1, 2, b"a\x1b[?47h");
    assert_behaves_the_same_after_snapshot(under_47, b"\x1b[?1049l ");
    let left_by_47 = term_with(1, 2, b"\x1b[?1049h\x1b[?47l");
    assert_behaves_the_same_after_snapshot(left_by_47, b"a\x1b[?47h \x1b[?1049l AA");
    let origin_under_47 = term_with(4, 1, b"\x1b[?6h\x1b[3;7r\x1b[?47h");
    assert_behaves_the_same_after_snapshot(origin_under_47, b"\x1b[?1049lz");
}

#[test]
fn snapshot_round_trips_screen_cursor_and_title() {
    let term = term_with(
        5,
        20,
        "\x1b]2;my title\x07\x1b[1;31mred\x1b[m \x1b[48;5;33mbg\x1b[m 漢字\r\n\
         \x1b(0lqk\x1b(B\r\nwrapped line that is long\x1b[?2004h\x1b[3;7H"
            .as_bytes(),
    );
    assert_snapshot_round_trips(&term);
}

#[test]
fn snapshot_keeps_line_drawing_active() {
    let mut term = term_with(2, 10, b"\x1b)0\x0eqq");
    assert_snapshot_round_trips(&term);
    let mut copy = Terminal::new(2, 10);
    copy.feed(&term.snapshot());
    copy.feed(b"x");
    term.feed(b"x");
    assert_eq!(copy.visible_lines(), ["──│", ""]);
    assert_eq!(copy.visible_lines(), term.visible_lines());
}

#[test]
fn snapshot_of_the_alternate_screen_restores_into_it() {
    let term = term_with(3, 10, b"main\x1b[?1049h\x1b[2;2Halt");
    assert_snapshot_round_trips(&term);
}

/// Regression (tests/emulator_prop.rs): `vte` 0.15 dropped the space here
/// when the `é` was cut between two reads.
#[test]
fn a_character_cut_between_reads_and_followed_by_a_bad_byte_loses_nothing() {
    let whole = term_with(3, 17, b"\xc3\xa9 \x80x");
    let mut cut = Terminal::new(3, 17);
    cut.feed(b"\xc3");
    cut.feed(b"\xa9 \x80x");
    assert_eq!(cut.visible_lines(), whole.visible_lines());
    assert_eq!(cut.cursor(), whole.cursor());
    assert!(
        whole.visible_lines()[0].starts_with("é "),
        "{:?}",
        whole.visible_lines()
    );
}

#[test]
fn rows_scrolled_past_the_budget_are_counted_not_kept() {
    let mut term = Terminal::new(5, 20);
    term.keep_scrolled(1000);
    term.refill_scrolled(10);
    let lines: String = (0..100).map(|n| format!("line {n}\r\n")).collect();
    term.feed(lines.as_bytes());
    // 96 scrolled off; the first 10 were kept, the rest only counted.
    assert_eq!(term.scrolled_lines(), 96);
    let kept: Vec<_> = term.scrolled_since(0).cloned().collect();
    assert_eq!(kept.len(), 10);
    assert_eq!(kept[9], (9, "line 9".to_string()));
}

#[test]
fn insert_mode_pushes_the_rest_of_the_row_right() {
    let term = term_with(2, 10, b"abcdef\x1b[1;3H\x1b[4hXY\x1b[4lZ");
    assert_eq!(term.visible_lines()[0], "abXYZdef");
}

#[test]
fn with_autowrap_off_the_last_column_is_written_over() {
    let term = term_with(2, 5, b"\x1b[?7labcdefg");
    assert_eq!(term.visible_lines(), ["abcdg", ""]);
}

#[test]
fn tab_stops_can_be_set_and_cleared() {
    let term = term_with(
        2,
        30,
        b"\x1b[3g\x1b[1;5H\x1bH\x1b[1;12H\x1bH\r\ta\tb\tc\x1b[2;1H\x1b[2Id",
    );
    assert_eq!(term.visible_lines(), ["    a      b                 c", "           d"]);
}

#[test]
fn combining_marks_stay_with_their_character() {
    let term = term_with(1, 10, "e\u{301}x".as_bytes());
    assert_eq!(term.visible_lines(), ["e\u{301}x"]);
    assert_eq!(term.cursor(), (0, 2));
}

#[test]
fn erased_cells_take_only_the_background_colour() {
    use crate::values::screen::{Color, Glyph};
    let term = term_with(1, 10, b"\x1b[1;7;31;44mab\x1b[K");
    let cell = term.cell(0, 5).expect("a cell");
    assert_eq!(cell.glyph, Glyph::Blank);
    assert_eq!(
        (cell.style.fg, cell.style.bg, cell.style.flags),
        (Color::Default, Color::Idx(4), 0)
    );
}

#[test]
fn a_wide_character_written_over_loses_both_halves() {
    let term = term_with(1, 10, "漢字\x1b[1;2Hx".as_bytes());
    assert_eq!(term.visible_lines(), [" x字"]);
}

#[test]
fn csi_s_and_u_save_and_restore_the_cursor() {
    let term = term_with(24, 80, b"\x1b[s\x1b[10;10Hx\x1b[uy");
    assert_eq!(term.cursor(), (0, 1));
}

fn style_at(term: &Terminal, row: u16, col: u16) -> crate::values::screen::Style {
    term.cell(row, col).expect("a cell there").style
}

#[test]
fn strike_hidden_and_blink_are_kept_and_reset_one_by_one() {
    use crate::values::screen::flag;
    let term = term_with(2, 20, b"\x1b[9ms\x1b[8mh\x1b[5mb\x1b[6mr\x1b[29mx\x1b[28my\x1b[25mz");
    let flags = |col| style_at(&term, 0, col).flags;
    assert_eq!(flags(0), flag::STRIKE);
    assert_eq!(flags(1), flag::STRIKE | flag::HIDDEN);
    assert_eq!(flags(2), flag::STRIKE | flag::HIDDEN | flag::BLINK);
    assert_eq!(
        flags(3),
        flag::STRIKE | flag::HIDDEN | flag::BLINK,
        "rapid blink is blink"
    );
    assert_eq!(flags(4), flag::HIDDEN | flag::BLINK);
    assert_eq!(flags(5), flag::BLINK);
    assert_eq!(flags(6), 0);
}

#[test]
fn underline_styles_come_from_sub_parameters_and_21() {
    use crate::values::screen::{Underline, flag};
    let term = term_with(
        2,
        20,
        b"\x1b[4ma\x1b[4:2mb\x1b[4:3mc\x1b[4:4md\x1b[4:5me\x1b[21mf\x1b[4:1mg\x1b[4:0mh\x1b[4:3m\x1b[24mi",
    );
    let expect = [
        Some(Underline::Single),
        Some(Underline::Double),
        Some(Underline::Curly),
        Some(Underline::Dotted),
        Some(Underline::Dashed),
        Some(Underline::Double),
        Some(Underline::Single),
        None,
        None,
    ];
    for (col, want) in expect.into_iter().enumerate() {
        let style = style_at(&term, 0, col as u16);
        assert_eq!(style.flags & flag::UNDERLINE != 0, want.is_some(), "col {col}");
        assert_eq!(style.underline, want.unwrap_or_default(), "col {col}");
    }
}

#[test]
fn underline_colour_in_every_form_and_59_resets_it() {
    use crate::values::screen::Color;
    let term = term_with(
        2,
        20,
        b"\x1b[58;5;1ma\x1b[58:5:2mb\x1b[58;2;1;2;3mc\x1b[58:2::4:5:6md\x1b[58:2:7:8:9me\x1b[59mf",
    );
    let colors: Vec<Color> = (0..6).map(|c| style_at(&term, 0, c).underline_color).collect();
    assert_eq!(
        colors,
        [
            Color::Idx(1),
            Color::Idx(2),
            Color::Rgb(1, 2, 3),
            Color::Rgb(4, 5, 6),
            Color::Rgb(7, 8, 9),
            Color::Default
        ]
    );
}

#[test]
fn an_underline_colour_is_not_read_as_blink_and_bold() {
    let term = term_with(2, 20, b"\x1b[4;58;5;1mx");
    let style = style_at(&term, 0, 0);
    assert_eq!(style.flags, crate::values::screen::flag::UNDERLINE);
    assert_eq!(style.fg, crate::values::screen::Color::Default);
}

#[test]
fn snapshot_keeps_the_new_attributes() {
    let term = term_with(
        3,
        30,
        b"\x1b[9;8;5ma\x1b[m \x1b[4:3;58;2;1;2;3mcurly\x1b[21;58;5;9mdouble\x1b[m\x1b[4:5;9m",
    );
    assert_snapshot_round_trips(&term);
    assert_behaves_the_same_after_snapshot(term, b"pen");
}

#[test]
fn deccolm_clears_and_homes_but_keeps_the_size() {
    let term = term_with(3, 10, b"one\r\ntwo\x1b[44m\x1b[?3hx");
    assert_eq!(term.visible_lines(), ["x", "", ""]);
    assert_eq!(term.size(), (3, 10));
    assert_eq!(term.cursor(), (0, 1));
    assert_eq!(style_at(&term, 2, 9).bg, crate::values::screen::Color::Idx(4));
}

#[test]
fn setting_a_region_homes_to_the_screen_top_even_under_origin_mode() {
    let term = term_with(10, 10, b"\x1b[?6h\x1b[5;5H\x1b[3;8r");
    assert_eq!(term.cursor(), (0, 0));
}

#[test]
fn leaving_the_alternate_screen_does_not_bring_back_its_charsets() {
    // DECSC, line drawing, 1049 in and out, DECRC: the prompt is ASCII.
    let term = term_with(2, 20, b"\x1b7\x1b(0\x1b[?1049hq\x1b[?1049l\x1b8qq");
    assert_eq!(term.visible_lines(), ["qq", ""]);
    // 1049 alone leaves the designation as the program made it.
    let term = term_with(2, 20, b"\x1b(0\x1b[?1049h\x1b[?1049lqq");
    assert_eq!(term.visible_lines(), ["──", ""]);
}

#[test]
fn the_saved_cursor_is_one_for_both_screens() {
    let term = term_with(5, 20, b"\x1b[?1049h\x1b[3;3H\x1b7\x1b[?1049l\x1b[1;1H\x1b8x");
    assert_eq!(term.cursor(), (2, 3));
}

#[test]
fn snapshot_in_an_alternate_screen_keeps_where_1049_returns_to() {
    let term = term_with(5, 20, b"main\x1b[1;31m\x1b[?1049h\x1b[m\x1b[3;3Halt\x1b[4;1H\x1b7");
    assert_snapshot_round_trips(&term);
    assert_behaves_the_same_after_snapshot(term, b"\x1b[?1049lback\x1b8saved");
}

#[test]
fn xtversion_is_answered_with_the_name_and_version() {
    let mut term = term_with(24, 80, b"\x1b[>q\x1b[>0q\x1b[>1q");
    let version = env!("CARGO_PKG_VERSION");
    let once = format!("\x1bP>|agents {version}\x1b\\");
    assert_eq!(String::from_utf8(term.take_replies()).unwrap(), once.repeat(2));
}

fn kitty_flags(term: &mut Terminal) -> Vec<u8> {
    term.take_replies();
    term.feed(b"\x1b[?u");
    term.take_replies()
}

#[test]
fn the_kitty_keyboard_flags_are_pushed_popped_set_and_answered() {
    use crate::values::screen::mode::KITTY_KEYBOARD;
    let mut term = Terminal::new(24, 80);
    // Nothing pushed yet: the protocol is spoken, no flags are on.
    assert_eq!(kitty_flags(&mut term), b"\x1b[?0u");
    assert!(!term.modes().has(KITTY_KEYBOARD));
    // Claude Code pushes 1, Codex 1|2|4: only disambiguation is kept.
    term.feed(b"\x1b[>1u");
    assert_eq!(kitty_flags(&mut term), b"\x1b[?1u");
    assert!(term.modes().has(KITTY_KEYBOARD));
    term.feed(b"\x1b[>7u");
    assert_eq!(kitty_flags(&mut term), b"\x1b[?1u");
    term.feed(b"\x1b[>0u");
    assert_eq!(kitty_flags(&mut term), b"\x1b[?0u");
    assert!(!term.modes().has(KITTY_KEYBOARD));
    // Popping comes back to the flags pushed before.
    term.feed(b"\x1b[<u");
    assert_eq!(kitty_flags(&mut term), b"\x1b[?1u");
    // `=`: 3 takes flags away, 2 adds them, 1 sets them.
    term.feed(b"\x1b[=1;3u");
    assert_eq!(kitty_flags(&mut term), b"\x1b[?0u");
    term.feed(b"\x1b[=1;2u");
    assert_eq!(kitty_flags(&mut term), b"\x1b[?1u");
    // Popping more than was pushed leaves none on.
    term.feed(b"\x1b[<9u");
    assert_eq!(kitty_flags(&mut term), b"\x1b[?0u");
    assert!(!term.modes().has(KITTY_KEYBOARD));
    // A plain `CSI u` is still the cursor's restore, not a pop.
    term.feed(b"\x1b[2;3H\x1b[s\x1b[H\x1b[u");
    assert_eq!(term.cursor(), (1, 2));
}

#[test]
fn each_screen_keeps_its_own_kitty_keyboard_flags_and_a_reset_clears_them() {
    let mut term = term_with(24, 80, b"\x1b[>1u\x1b[?1049h");
    assert_eq!(kitty_flags(&mut term), b"\x1b[?0u");
    term.feed(b"\x1b[>1u\x1b[<u\x1b[?1049l");
    assert_eq!(kitty_flags(&mut term), b"\x1b[?1u");
    term.feed(b"\x1bc");
    assert_eq!(kitty_flags(&mut term), b"\x1b[?0u");
}

#[test]
fn a_snapshot_carries_the_kitty_keyboard_flags_of_both_screens() {
    let term = term_with(4, 20, b"\x1b[>1u\x1b[>0u\x1b[?1049h\x1b[>1u");
    let mut copy = Terminal::new(4, 20);
    copy.feed(&term.snapshot());
    assert_eq!(copy.modes(), term.modes());
    assert_eq!(kitty_flags(&mut copy), b"\x1b[?1u");
    copy.feed(b"\x1b[?1049l");
    assert_eq!(kitty_flags(&mut copy), b"\x1b[?0u");
    copy.feed(b"\x1b[<u");
    assert_eq!(kitty_flags(&mut copy), b"\x1b[?1u");
}

#[test]
fn a_snapshot_carries_which_rows_wrapped() {
    // A wrapped row ending in a blank before a row starting with one, a
    // row wrapped before a wide character that did not fit, and a row a
    // line feed ended.
    let bytes = "abcdefghij\x1b[1;5H\x1b[X\x1b[2;1H\x1b[X\x1b[3;1Hqrst界\r\n01234\r\nend".as_bytes();
    let mut term = term_with(6, 5, bytes);
    let mut copy = Terminal::new(6, 5);
    copy.feed(&term.snapshot());
    assert_snapshot_round_trips(&term);
    term.resize(6, 40);
    copy.resize(6, 40);
    assert_eq!(copy.visible_lines(), term.visible_lines());
    assert_eq!(term.visible_lines()[..4], ["abcd  ghij", "qrst界", "01234", "end"]);
}
