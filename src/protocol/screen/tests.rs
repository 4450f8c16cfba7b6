//! The screen format and the mirror: round trips, old formats, refusals.

use super::*;

fn row_of(text: &str, cols: u16, style: Style) -> Row {
    let mut row: Row = text
        .chars()
        .map(|c| Cell {
            glyph: glyph_of(&c.to_string()),
            style,
            wide: false,
        })
        .collect();
    row.resize(cols as usize, Cell::default());
    row
}

fn sample() -> ScreenUpdate {
    let red = Style {
        fg: Color::Idx(1),
        bg: Color::Rgb(1, 2, 3),
        flags: flag::BOLD | flag::INVERSE | flag::UNDERLINE | flag::STRIKE | flag::BLINK,
        underline: Underline::Curly,
        underline_color: Color::Rgb(9, 8, 7),
    };
    let mut wide = row_of("a", 10, Style::default());
    wide[1] = Cell {
        glyph: Glyph::Cluster("界".into()),
        style: red,
        wide: true,
    };
    wide[2] = Cell {
        glyph: Glyph::Continuation,
        style: red,
        wide: false,
    };
    wide[3] = Cell {
        glyph: Glyph::Cluster("e\u{301}".into()),
        ..Cell::default()
    };
    ScreenUpdate {
        seq: 7,
        offset: 1 << 33,
        rows: 3,
        cols: 10,
        cursor: (2, 10),
        modes: Modes {
            bits: mode::APP_CURSOR | mode::BRACKETED_PASTE,
            mouse: 2,
            mouse_encoding: 2,
        },
        title: Some("vim: a;b".into()),
        full: true,
        lines: vec![
            (0, row_of("hello", 10, red)),
            (1, wide),
            (2, row_of("", 10, Style::default())),
        ],
        scrolled: vec!["gone".into(), String::new()],
        dropped: 3,
    }
}

#[test]
fn an_update_round_trips() {
    let update = sample();
    assert_eq!(ScreenUpdate::decode(&update.encode()).unwrap(), update);
}

/// What a build before format 2 wrote for one row "ab" in bold red
/// with strike-through (the bit it never used), cursor at (0, 2).
const V1_BYTES: &[u8] = &[
    1, // format
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    5, // seq
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    9, // offset
    0,
    1,
    0,
    4,
    0,
    0,
    0,
    2, // rows, cols, cursor
    0,
    0,
    0, // modes
    1, // full, no title
    0,
    1, // one row
    0,
    0, // index 0
    0,
    1, // one run
    1,
    1,
    0,
    flag::BOLD | flag::STRIKE, // fg 1, bg default, flags
    0,
    2,
    b'a',
    b'b', // two cells
    0,
    0,
    0,
    0, // nothing scrolled
    0,
    0,
    0,
    0,
    0,
    0,
    0,
    0, // none dropped
];

fn v1_update() -> ScreenUpdate {
    let style = Style {
        fg: Color::Idx(1),
        flags: flag::BOLD | flag::STRIKE,
        ..Style::default()
    };
    ScreenUpdate {
        seq: 5,
        offset: 9,
        rows: 1,
        cols: 4,
        cursor: (0, 2),
        full: true,
        lines: vec![(0, row_of("ab", 4, style))],
        ..ScreenUpdate::default()
    }
}

#[test]
fn format_1_is_written_byte_for_byte_as_older_builds_wrote_it() {
    assert_eq!(v1_update().encode_as(FORMAT_V1), V1_BYTES);
}

#[test]
fn an_update_of_an_older_build_still_decodes() {
    assert_eq!(ScreenUpdate::decode(V1_BYTES).unwrap(), v1_update());
}

#[test]
fn format_1_leaves_out_only_underline_styles_and_colours() {
    let update = sample();
    let decoded = ScreenUpdate::decode(&update.encode_as(FORMAT_V1)).unwrap();
    let mut expected = update.clone();
    for (_, row) in &mut expected.lines {
        for cell in row {
            cell.style.underline = Underline::Single;
            cell.style.underline_color = Color::Default;
        }
    }
    assert_eq!(decoded, expected);
    assert_eq!(decoded.lines[0].1[0].style.flags & flag::STRIKE, flag::STRIKE);
}

#[test]
fn a_format_newer_than_this_build_is_refused() {
    let mut bytes = sample().encode();
    bytes[0] = FORMAT + 1;
    assert!(ScreenUpdate::decode(&bytes).is_err());
}

#[test]
fn a_cell_or_title_holding_a_control_character_is_refused() {
    let mut update = sample();
    update.lines[0].1[0].glyph = Glyph::Cluster("\x1b]52;c;aGk=\x07".into());
    assert!(ScreenUpdate::decode(&update.encode()).is_err());
    let mut update = sample();
    update.title = Some("\x1b[2J".into());
    assert!(ScreenUpdate::decode(&update.encode()).is_err());
}

#[test]
fn a_relay_renumbers_an_update_in_place() {
    let mut bytes = sample().encode();
    set_seq(&mut bytes, 99);
    assert_eq!(seq_of(&bytes), Some(99));
    assert_eq!(ScreenUpdate::decode(&bytes).unwrap().seq, 99);
}

#[test]
fn every_truncation_and_corruption_is_an_error_not_a_panic() {
    let bytes = sample().encode();
    for end in 0..bytes.len() {
        assert!(ScreenUpdate::decode(&bytes[..end]).is_err(), "prefix {end}");
    }
    for at in 0..bytes.len() {
        for b in [0u8, 1, 0x7f, 0xff] {
            let mut bad = bytes.clone();
            bad[at] = b;
            let _ = ScreenUpdate::decode(&bad);
        }
    }
}

#[test]
fn a_mirror_takes_full_then_partial_updates() {
    let mut mirror = ScreenMirror::new(1, 1, 10);
    mirror.apply(sample()).unwrap();
    assert_eq!(mirror.visible_lines(), ["hello", "a界e\u{301}", ""]);
    assert_eq!(mirror.title, "vim: a;b");
    assert_eq!(mirror.history().cloned().collect::<Vec<_>>(), ["gone", ""]);
    assert!(mirror.history_gap);
    let next = ScreenUpdate {
        seq: 8,
        rows: 3,
        cols: 10,
        lines: vec![(2, row_of("$ ls", 10, Style::default()))],
        ..ScreenUpdate::default()
    };
    mirror.apply(next).unwrap();
    assert_eq!(mirror.visible_lines(), ["hello", "a界e\u{301}", "$ ls"]);
    assert_eq!(mirror.title, "vim: a;b", "a title is sent when it changes");
    let other_size = ScreenUpdate {
        rows: 4,
        cols: 10,
        ..ScreenUpdate::default()
    };
    assert!(mirror.apply(other_size).is_err());
}

#[test]
fn a_resize_leaves_the_history_to_fetch_again_at_the_new_width() {
    let mut mirror = ScreenMirror::new(3, 10, 10);
    let first = ScreenUpdate {
        seq: 1,
        rows: 3,
        cols: 10,
        full: true,
        scrolled: vec!["0123456789".into(), "abc".into()],
        ..ScreenUpdate::default()
    };
    mirror.apply(first).unwrap();
    mirror.replace_history(Vec::new(), 0);
    assert!(!mirror.history_gap);
    // Wider, the run rewrapped those rows (and pulled them back on
    // screen, as tmux): kept here they would show twice, cut at 10.
    let wider = ScreenUpdate {
        seq: 2,
        rows: 3,
        cols: 20,
        full: true,
        ..ScreenUpdate::default()
    };
    mirror.apply(wider).unwrap();
    assert_eq!(mirror.history().count(), 0);
    assert!(mirror.history_gap, "the pane asks the log for its history again");
}

#[test]
fn fetched_history_goes_before_rows_received_since_asking() {
    let mut mirror = ScreenMirror::new(2, 5, 4);
    mirror.push_history(["x".to_string(), "y".into(), "z".into()]);
    // Asked when it held one row ("x", which the log has too).
    mirror.replace_history(vec!["a".into(), "b".into(), "x".into()], 1);
    assert_eq!(mirror.history().cloned().collect::<Vec<_>>(), ["b", "x", "y", "z"]);
}

#[test]
fn a_watch_sends_the_rows_kept_and_counts_the_rest_as_dropped() {
    let mut term = crate::term::Terminal::new(5, 20);
    term.keep_scrolled(1000);
    let mut watch = ScreenWatch::new();
    watch.next(&term, 0);
    term.refill_scrolled(10);
    term.feed(b"more\r\n\r\n\r\n\r\n\r\n");
    let update = watch.next(&term, 1).unwrap();
    assert_eq!(update.scrolled, ["more"]);
    assert_eq!(update.dropped, 0);
    term.refill_scrolled(0);
    term.feed(b"a\r\nb\r\n");
    let update = watch.next(&term, 2).unwrap();
    assert!(update.scrolled.is_empty());
    assert_eq!(update.dropped, 2, "a client's history has a gap there");
}
