//! One screen per run: a client's screen, kept only by applying the
//! updates the run's emulator sends (`ScreenWatch` → encode → decode →
//! `ScreenMirror`), equals the emulator's screen cell for cell, whatever the
//! program printed, however the output was cut, whenever updates were taken
//! and whatever resizes happened in between. And the rows that scrolled off
//! while it watched are its history, in order.

use agents::protocol::screen::{Row, ScreenMirror, ScreenUpdate, ScreenWatch};
use agents::term::Terminal;
use proptest::prelude::*;

#[path = "common/prop.rs"]
mod property;
use property::cases;

/// Pieces of what agents print: text (wide, combining), newlines, colours,
/// cursor moves, erases, scroll regions, the alternate screen, modes, titles,
/// line drawing, and raw bytes.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "[a-z ]{1,30}".prop_map(String::into_bytes),
        Just(b"\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just("界e\u{301}🙂".as_bytes().to_vec()),
        (0u8..8, 0u8..8).prop_map(|(f, b)| format!("\x1b[3{f};4{b};1m").into_bytes()),
        Just(b"\x1b[38;2;10;20;30m\x1b[7;3;4m".to_vec()),
        Just(b"\x1b[m".to_vec()),
        (1u8..40, 1u8..90).prop_map(|(r, c)| format!("\x1b[{r};{c}H").into_bytes()),
        Just(b"\x1b[2J".to_vec()),
        Just(b"\x1b[K".to_vec()),
        Just(b"\x1b[3;8r".to_vec()),
        Just(b"\x1b[r".to_vec()),
        Just(b"\x1b[?1049h".to_vec()),
        Just(b"\x1b[?1049l".to_vec()),
        Just(b"\x1b[?1h\x1b[?2004h\x1b[?1000h\x1b[?1006h".to_vec()),
        Just(b"\x1b[?1l\x1b[?2004l\x1b[?1000l\x1b[?25l".to_vec()),
        Just(b"\x1b[?25h".to_vec()),
        "[a-z]{0,12}".prop_map(|t| format!("\x1b]2;{t}\x07").into_bytes()),
        Just(b"\x1b(0lqqk\x1b(B".to_vec()),
        Just(b"\x1b[5S\x1b[2T\x1b[3L\x1b[2M".to_vec()),
        prop::collection::vec(any::<u8>(), 1..16),
    ]
}

#[derive(Debug, Clone)]
enum Step {
    Feed(Vec<u8>),
    /// Take an update now (a frame).
    Update,
    Resize(u16, u16),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => prop::collection::vec(piece(), 1..6).prop_map(|p| Step::Feed(p.concat())),
        3 => Just(Step::Update),
        1 => (1u16..30, 1u16..100).prop_map(|(r, c)| Step::Resize(r, c)),
    ]
}

fn row_of(term: &Terminal, index: u16) -> Row {
    let mut row = Row::new();
    term.row_cells(index, &mut row);
    row
}

/// Sends what changed through the wire form, as a subscription does.
fn send(watch: &mut ScreenWatch, term: &Terminal, offset: u64, mirror: &mut ScreenMirror) -> bool {
    let Some(update) = watch.next(term, offset) else {
        return false;
    };
    let decoded = ScreenUpdate::decode(&update.encode()).expect("an update decodes");
    assert_eq!(decoded, update);
    mirror.apply(decoded).expect("an update applies");
    true
}

proptest! {
    #![proptest_config(cases(200))]

    #[test]
    fn a_mirror_fed_updates_equals_the_emulators_screen(
        steps in prop::collection::vec(step(), 1..40),
        rows in 1u16..30,
        cols in 1u16..100,
    ) {
        let mut term = Terminal::new(rows, cols);
        term.keep_scrolled(10_000);
        // What scrolled off while watched, kept by a second emulator.
        let mut watched = Terminal::new(rows, cols);
        watched.keep_scrolled(10_000);
        let mut watch = ScreenWatch::new();
        let mut mirror = ScreenMirror::new(1, 1, 10_000);
        let mut offset = 0u64;
        let mut scrolled_at_start = None;
        let mut pulls_at_start = None;
        // The sizes the mirror took: after a new one its history is the
        // log's to give again, rewrapped (`runs.history`).
        let mut sizes = std::collections::HashSet::new();
        for step in steps {
            match step {
                Step::Feed(bytes) => {
                    term.feed(&bytes);
                    watched.feed(&bytes);
                    offset += bytes.len() as u64;
                }
                Step::Update => {
                    if send(&mut watch, &term, offset, &mut mirror) {
                        scrolled_at_start.get_or_insert(term.scrolled_lines());
                        pulls_at_start.get_or_insert(term.pulls());
                        sizes.insert((mirror.rows, mirror.cols));
                    }
                }
                Step::Resize(r, c) => {
                    term.resize(r, c);
                    watched.resize(r, c);
                }
            }
            // Lines that scrolled off before it watched, pulled back into a
            // screen that grew meanwhile (the main screen, resized while the
            // alternate one showed, pulls them back when it shows again),
            // are not scrolled any more: the lines after them are counted
            // from where they were.
            if let Some(start) = scrolled_at_start.as_mut() {
                *start = (*start).min(term.scrolled_lines());
            }
        }
        while send(&mut watch, &term, offset, &mut mirror) {
            scrolled_at_start.get_or_insert(term.scrolled_lines());
            pulls_at_start.get_or_insert(term.pulls());
            sizes.insert((mirror.rows, mirror.cols));
        }
        let (rows, cols) = term.size();
        prop_assert_eq!((mirror.rows, mirror.cols), (rows, cols));
        for index in 0..rows {
            let mut mine = Row::new();
            for col in 0..cols {
                mine.push(mirror.cell(index, col).cloned().unwrap_or_default());
            }
            prop_assert_eq!(mine, row_of(&term, index), "row {}", index);
        }
        prop_assert_eq!(mirror.cursor, term.cursor());
        prop_assert_eq!(mirror.modes, term.modes());
        prop_assert_eq!(&mirror.title, term.title());
        // Bytes that changed nothing on screen (an SGR alone) send nothing.
        prop_assert!(mirror.offset <= offset);
        prop_assert_eq!(mirror.visible_lines(), term.visible_lines());
        if sizes.len() > 1 {
            // Resized while watched: it says its history must be asked for.
            prop_assert!(mirror.history_gap);
        } else if mirror.history_gap {
            // Its screen kept its size, but the main screen fitted a size
            // taken under the alternate one when that ended, pulling back
            // rows it had: asked for again, rewrapped, they are not twice.
            prop_assert!(term.pulls() > pulls_at_start.unwrap_or(0));
        } else {
            let history: Vec<String> = mirror.history().cloned().collect();
            let expected: Vec<String> = watched
                .scrolled_since(scrolled_at_start.unwrap_or(0))
                .map(|(_, line)| line.clone())
                .collect();
            prop_assert_eq!(history, expected);
            prop_assert!(!mirror.history_gap);
        }
    }
}

#[test]
fn a_screen_too_big_for_one_frame_arrives_over_several_updates() {
    // 1000 × 2000 cells of distinct colours: megabytes, over the 1 MiB
    // frame cap; each update stays under it and the mirror ends whole.
    let mut term = Terminal::new(1000, 2000);
    let mut bytes = Vec::new();
    for row in 0..1000u32 {
        bytes.extend_from_slice(format!("\x1b[{};1H", row + 1).as_bytes());
        for col in 0..2000u32 {
            bytes.extend_from_slice(
                format!("\x1b[38;2;{};{};{}m界", row % 256, col % 256, (row + col) % 256).as_bytes(),
            );
        }
    }
    term.feed(&bytes);
    let mut watch = ScreenWatch::new();
    let mut mirror = ScreenMirror::new(1, 1, 0);
    let mut updates = 0;
    while let Some(update) = watch.next(&term, 1) {
        let encoded = update.encode();
        assert!(
            encoded.len() < agents::protocol::MAX_FRAME - 128,
            "{} bytes",
            encoded.len()
        );
        mirror.apply(ScreenUpdate::decode(&encoded).unwrap()).unwrap();
        updates += 1;
        if !watch.more {
            break;
        }
    }
    assert!(updates > 1, "{updates}");
    assert!(watch.next(&term, 1).is_none(), "everything was sent");
    assert_eq!(mirror.visible_lines(), term.visible_lines());
}
