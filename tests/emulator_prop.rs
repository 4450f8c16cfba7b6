//! Property tests (docs/design.md §11) of the emulator wrapper, fed
//! terminal output we do not control: any chunking gives the screen fed
//! whole gives, arbitrary bytes and resizes never panic, and a snapshot
//! redraws its screen on a fresh emulator. Failures found before are kept
//! in `emulator_prop.proptest-regressions` and run first.
//! `PROPTEST_CASES=N` runs N cases of each property instead, for a longer
//! hunt.

use agents::term::Terminal;
use proptest::prelude::*;

#[path = "common/prop.rs"]
mod property;
use property::cases;

/// Pieces of terminal output: plain text, UTF-8, controls, and the escape
/// sequences the wrapper itself looks at (charsets, queries, titles, modes).
fn tty_piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        9 => tty_piece_not_raw(),
        1 => prop::collection::vec(any::<u8>(), 1..8),
    ]
}

/// The pieces of [`tty_piece`] but raw bytes.
fn tty_piece_not_raw() -> impl Strategy<Value = Vec<u8>> {
    let fixed: Vec<&'static [u8]> = vec![
        b"\r\n",
        b"\n",
        b"\r",
        b"\t",
        b"\x08",
        b"\x07",
        b"\x0e",
        b"\x0f",
        b"\x18",
        b"\x1b(0",
        b"\x1b(B",
        b"\x1b)0",
        b"\x1b)B",
        b"\x1b[6n",
        b"\x1b[c",
        b"\x1b[>c",
        b"\x1b[5n",
        b"\x1b[?2004h",
        b"\x1b[?2004$p",
        b"\x1b[?1049h",
        b"\x1b[?1049l",
        b"\x1b[?25l",
        b"\x1b[18t",
        b"\x1b[2J",
        b"\x1b[K",
        b"\x1b[H",
        b"\x1b[3;7r",
        b"\x1b[r",
        b"\x1b[1;31m",
        b"\x1b[0m",
        b"\x1b[L",
        b"\x1b[2M",
        b"\x1bM",
        b"\x1b7",
        b"\x1b8",
        b"\x1b]0;title\x07",
        b"\x1b]2;t\xc3\xa9\x1b\\",
        b"\x1bP1$r\x1b\\",
        "é".as_bytes(),
        "漢".as_bytes(),
        "🙂".as_bytes(),
        b"lqqk",
        b"x  x",
        b"mqqj",
        b"\x1b[4h",
        b"\x1b[4l",
        b"\x1b[?7l",
        b"\x1b[?7h",
        b"\x1bH",
        b"\x1b[3g",
        b"\x1b[g",
        b"\x1b[?6h",
        b"\x1b[?6l",
        b"\x1b[?47h",
        b"\x1b[?47l",
        b"\x1b[2I",
        b"\x1b[Z",
        b"\x1b[s",
        b"\x1b[u",
        b"\x1b[?1048h",
        b"\x1b[?1048l",
        b"\x1bD",
        b"\x1bE",
        b"\x1b#8",
        b"\x1b[38;2;1;2;3m",
        b"\x1b[48:5:200m",
        b"\x1b[?1000h\x1b[?1006h",
        "e\u{301}".as_bytes(),
    ];
    prop_oneof![
        4 => "[ -~]{1,12}".prop_map(String::into_bytes),
        4 => prop::sample::select(fixed).prop_map(<[u8]>::to_vec),
        1 => (1..40u16, 1..40u16, prop::sample::select(vec!['H', 'A', 'B', 'C', 'D', 'J', 'K', 'S', 'T', '@', 'P', 'X']))
            .prop_map(|(a, b, f)| format!("\x1b[{a};{b}{f}").into_bytes()),
    ]
}

fn tty_stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(tty_piece(), 0..120).prop_map(|p| p.concat())
}

/// As [`tty_stream`], without raw bytes: so every sequence is whole, and
/// there is no REP (`CSI b`), whose character (the last one printed) a
/// snapshot does not carry.
fn tty_stream_no_rep() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(tty_piece_not_raw(), 0..120).prop_map(|p| p.concat())
}

/// Everything the wrapper says about its screen.
#[derive(Debug, PartialEq)]
struct Seen {
    lines: Vec<String>,
    cursor: (u16, u16),
    title: String,
    bells: u64,
    scrolled: u64,
    snapshot: Vec<u8>,
    replies: Vec<u8>,
    history: Vec<String>,
}

fn observe(t: &mut Terminal) -> Seen {
    Seen {
        lines: t.visible_lines(),
        cursor: t.cursor(),
        title: t.title().to_string(),
        bells: t.bells(),
        scrolled: t.scrolled_lines(),
        snapshot: t.snapshot(),
        replies: t.take_replies(),
        history: t.history().map(str::to_owned).collect(),
    }
}

proptest! {
    // Chunk boundaries inside UTF-8 found the `vte` bug only after
    // thousands of cases; this one is cheap, so it runs the most.
    #![proptest_config(cases(1024))]

    /// Output read in pieces, cut anywhere (inside an escape sequence, a
    /// UTF-8 character, a charset designation), leaves exactly the screen
    /// it leaves when fed whole.
    #[test]
    fn any_output_cut_anywhere_gives_the_screen_it_gives_whole(
        bytes in tty_stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..24),
        rows in 1..30u16,
        cols in 1..90u16,
    ) {
        let mut whole = Terminal::with_history(rows, cols, 50);
        whole.feed(&bytes);
        let mut cut: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cut.sort_unstable();
        let mut pieces = Terminal::with_history(rows, cols, 50);
        let mut start = 0;
        for end in cut.into_iter().chain([bytes.len()]) {
            pieces.feed(&bytes[start..end]);
            start = end;
        }
        prop_assert_eq!(observe(&mut whole), observe(&mut pieces));
    }

}

proptest! {
    #![proptest_config(cases(256))]

    /// Arbitrary bytes and resizes in any order never panic the wrapper.
    #[test]
    fn arbitrary_bytes_and_resizes_never_panic(
        steps in prop::collection::vec(
            prop_oneof![
                3 => prop::collection::vec(any::<u8>(), 0..200).prop_map(Ok),
                2 => tty_stream().prop_map(Ok),
                1 => (0..50u16, 0..120u16).prop_map(Err),
            ],
            0..12,
        ),
    ) {
        let mut t = Terminal::new(24, 80);
        for step in steps {
            match step {
                Ok(bytes) => t.feed(&bytes),
                Err((rows, cols)) => t.resize(rows, cols),
            }
        }
        observe(&mut t);
        let mut copy = Terminal::new(t.size().0, t.size().1);
        copy.feed(&t.snapshot());
    }
}

/// The screen as a client gets it: every cell, the cursor, the modes.
fn screen_of(
    t: &Terminal,
) -> (
    Vec<agents::protocol::screen::Row>,
    (u16, u16),
    agents::protocol::screen::Modes,
    String,
) {
    let rows = (0..t.size().0)
        .map(|r| {
            let mut row = Vec::new();
            t.row_cells(r, &mut row);
            row
        })
        .collect();
    (rows, t.cursor(), t.modes(), t.title().to_string())
}

proptest! {
    #![proptest_config(cases(512))]

    /// A checkpoint's snapshot redraws the screen it was taken of, cell for
    /// cell, and carries what the screen does not show (the saved cursor,
    /// the scroll region, origin and insert mode, tab stops, charsets, the
    /// main screen under the alternate one): what follows plays out the
    /// same on the copy as on the original.
    #[test]
    fn a_snapshot_redraws_the_screen_and_what_follows_plays_out_the_same(
        // Whole sequences before: a snapshot is of the screen, not of a
        // parser left inside an escape sequence.
        before in tty_stream_no_rep(),
        after in tty_stream_no_rep(),
        rows in 1..30u16,
        cols in 1..90u16,
    ) {
        let mut live = Terminal::new(rows, cols);
        live.feed(&before);
        let mut copy = Terminal::new(rows, cols);
        copy.feed(&live.snapshot());
        prop_assert_eq!(screen_of(&copy), screen_of(&live));
        live.feed(&after);
        copy.feed(&after);
        prop_assert_eq!(screen_of(&copy), screen_of(&live));
    }
}

/// A line of text: words of letters and wide characters, ending in one.
fn text_line() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![4 => "[a-z]{1,12}", 1 => "[界中文]{1,4}"], 1..30)
        .prop_map(|words| words.join(" "))
}

proptest! {
    #![proptest_config(cases(256))]

    /// Lines printed at one size and viewed at any others, or printed
    /// while the size changes: `agents logs` prints each whole, neither cut
    /// nor split, nor twice when a taller or wider screen pulls it back
    /// from above its top.
    #[test]
    fn the_text_of_wrapped_lines_survives_any_sequence_of_sizes(
        lines in prop::collection::vec(text_line(), 1..40),
        sizes in prop::collection::vec((2u16..30, 3u16..200), 1..8),
        cuts in prop::collection::vec(0.0f64..1.0, 8),
    ) {
        use agents::protocol::run_files::SizeChange;
        let log: String = lines.iter().map(|l| format!("{l}\r\n")).collect();
        let end = log.len() as u64;
        // The first size from the start, each other one at some point of
        // the output (sorted), or after it all; never between a CR and its
        // LF, where the cursor is on the line's first character and stays
        // on it through the rewrap (as in tmux), so the LF leaves it there.
        let at = |c: &f64| {
            let offset = (c * end as f64) as usize;
            (offset + usize::from(offset > 0 && log.as_bytes()[offset - 1] == b'\r')) as u64
        };
        let mut offsets: Vec<u64> = cuts.iter().map(at).collect();
        offsets.sort_unstable();
        let changes = sizes.iter().enumerate().map(|(i, &(rows, cols))| SizeChange {
            offset: if i == 0 { 0 } else { offsets[i].max(offsets[i - 1]) },
            at_ms: 0,
            rows,
            cols,
        });
        let mut follower = agents::term::LineFollower::with_sizes(24, 80, 1000, changes.collect());
        for piece in log.as_bytes().chunks(61) {
            follower.feed(piece);
        }
        prop_assert_eq!(follower.finish(), lines);
    }
}
