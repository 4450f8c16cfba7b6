//! Differential test: `agents::term::Terminal` against real tmux.
//!
//! Each byte stream is written to a file and `cat` into a tmux pane of the
//! same size (with output post-processing off, so tmux sees exactly the
//! bytes `Terminal` gets), then the visible text and cursor of both are
//! compared, and then every cell's attributes (colours, bold, underline and
//! its style and colour, strike-through, …) as `capture-pane -e` prints
//! them (`term_vs_tmux/capture.rs`). tmux is the reference users compare us with (docs/design.md §6, §10).
//!
//! Every case runs its own tmux server on a private socket, so cases run in
//! parallel and a failing case still kills its server (`TmuxServer::drop`).
//! Completion is detected in-band: after the stream the pane prints an OSC 2
//! title marker, and since tmux parses its input in order, seeing that title
//! means every earlier byte has been applied.
//!
//! Where tmux and our emulator legitimately differ, the stream says so in a
//! comment beginning "Excluded:" and leaves out exactly that operation.
//! Where tmux is not xterm, the test says so and compares ours with a
//! stream that does in tmux what xterm documents (`fidelity.rs`).

// A test crate's root finds its modules beside it, not under its name.
#[path = "term_vs_tmux/capture.rs"]
mod capture;
#[path = "term_vs_tmux/fidelity.rs"]
mod fidelity;
#[path = "term_vs_tmux/pull_back.rs"]
mod pull_back;
#[path = "term_vs_tmux/recorded.rs"]
mod recorded;
#[path = "term_vs_tmux/streams.rs"]
mod streams;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use agents::term::Terminal;

/// The sizes every synthetic stream is checked at: a classic terminal and a
/// large pane like the ones the throughput budget is measured at.
pub(crate) const SIZES: [(u16, u16); 2] = [(24, 80), (50, 200)];

/// The title the pane sets after the stream, as an "all applied" marker.
const DONE_TITLE: &str = "agents-term-vs-tmux-done";

/// How long tmux gets to apply a stream; generous because CI machines are
/// slow and many servers run in parallel, and only reached on failure.
const TIMEOUT: Duration = Duration::from_secs(20);

/// Poll interval while waiting for the marker title.
const POLL: Duration = Duration::from_millis(10);

/// What a screen shows: rows with trailing spaces trimmed, and the cursor
/// as `(row, col)`.
#[derive(Debug, PartialEq, Eq)]
struct Screen {
    lines: Vec<String>,
    cursor: (u16, u16),
}

/// A screen and its cells' attributes, compared after the text.
struct Captured {
    screen: Screen,
    pens: Vec<capture::PenRow>,
}

/// A tmux server on a socket in a private directory, killed on drop.
struct TmuxServer {
    /// Holds the socket and the stream file; removed after the server.
    _dir: tempfile::TempDir,
    socket: PathBuf,
}

impl TmuxServer {
    fn start(rows: u16, cols: u16, stream: &[u8]) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let socket = dir.path().join("tmux.sock");
        let input = dir.path().join("stream.bin");
        std::fs::write(&input, stream).expect("write stream file");
        let server = Self { _dir: dir, socket };
        // `stty -opost`: no LF→CRLF or tab expansion on the way to tmux.
        // `-echo`: tmux answers queries in the stream (vim's DSR and DA) on
        // the pane's input; unechoed, they cannot reach the screen.
        // `exec sleep`: keep the pane (and its screen) alive after the stream.
        let script = format!(
            "stty -opost -echo; cat '{}'; printf '\\033]2;{DONE_TITLE}\\033\\\\'; exec sleep 100000",
            input.display()
        );
        let (cols, rows) = (cols.to_string(), rows.to_string());
        server.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            &cols,
            "-y",
            &rows,
            &script,
        ]);
        server
    }

    fn tmux(&self, args: &[&str]) -> String {
        let output = tmux_command(&self.socket, args)
            .unwrap_or_else(|err| panic!("cannot run tmux ({err}); this test needs tmux installed (CI installs it)"));
        assert!(
            output.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("tmux prints UTF-8")
    }

    /// Waits until the stream has been applied, then reads the screen.
    fn screen(&self) -> Screen {
        self.captured().screen
    }

    /// As [`Self::screen`], with the attributes.
    fn captured(&self) -> Captured {
        let started = Instant::now();
        while self.tmux(&["display", "-p", "#{pane_title}"]).trim_end() != DONE_TITLE {
            assert!(
                started.elapsed() < TIMEOUT,
                "tmux did not finish the stream within {TIMEOUT:?}"
            );
            std::thread::sleep(POLL);
        }
        // `-e` keeps attributes, which is how tmux reveals line-drawing
        // cells: it stores them as ASCII letters between SO and SI.
        // `-N`: trailing blanks too, whose background matters.
        let captured = self.tmux(&["capture-pane", "-p", "-e", "-N"]);
        let lines = captured.lines().map(plain_line).collect();
        let pens = capture::pens(&captured);
        let cursor = self.tmux(&["display", "-p", "#{cursor_y} #{cursor_x}"]);
        let mut numbers = cursor.split_whitespace().map(|n| n.parse::<u16>());
        let cursor = match (numbers.next(), numbers.next()) {
            (Some(Ok(row)), Some(Ok(col))) => (row, col),
            _ => panic!("unexpected cursor report {cursor:?}"),
        };
        Captured {
            screen: Screen { lines, cursor },
            pens,
        }
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        // Best effort, and never a panic while a failed test unwinds: the
        // server may be gone already, or tmux missing altogether.
        let _ = tmux_command(&self.socket, &["kill-server"]);
    }
}

impl TmuxServer {
    /// `before` applied at `rows` × `cols`, the window resized to `to`, then
    /// `after` applied: the pane waits for a file between the two.
    fn start_resized(rows: u16, cols: u16, before: &[u8], to: (u16, u16), after: &[u8]) -> Self {
        Self::start_resizes(rows, cols, before, &[to], after)
    }

    /// As [`Self::start_resized`], through each size of `sizes` in turn.
    fn start_resizes(rows: u16, cols: u16, before: &[u8], sizes: &[(u16, u16)], after: &[u8]) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let socket = dir.path().join("tmux.sock");
        let (first, second, go) = (
            dir.path().join("before.bin"),
            dir.path().join("after.bin"),
            dir.path().join("go"),
        );
        std::fs::write(&first, before).expect("write stream file");
        std::fs::write(&second, after).expect("write stream file");
        let server = Self { _dir: dir, socket };
        // The pane polls for `go` (tmux cannot be told to wait otherwise);
        // this test waits on the pane's title only.
        let script = format!(
            "stty -opost -echo; cat '{}'; printf '\\033]2;{RESIZE_TITLE}\\033\\\\'; \
             while [ ! -e '{}' ]; do sleep 0.01; done; \
             cat '{}'; printf '\\033]2;{DONE_TITLE}\\033\\\\'; exec sleep 100000",
            first.display(),
            go.display(),
            second.display()
        );
        let (c, r) = (cols.to_string(), rows.to_string());
        server.tmux(&["-f", "/dev/null", "new-session", "-d", "-x", &c, "-y", &r, &script]);
        server.wait_title(RESIZE_TITLE);
        for &(rows, cols) in sizes {
            let (c, r) = (cols.to_string(), rows.to_string());
            server.tmux(&["resize-window", "-x", &c, "-y", &r]);
            // Each size reaches the pane before the next is asked for.
            let want = format!("{cols} {rows}");
            let started = Instant::now();
            while server
                .tmux(&["display", "-p", "#{pane_width} #{pane_height}"])
                .trim_end()
                != want
            {
                assert!(
                    started.elapsed() < TIMEOUT,
                    "the pane did not take {want} within {TIMEOUT:?}"
                );
                std::thread::sleep(POLL);
            }
        }
        std::fs::write(go, b"").expect("write the go file");
        server
    }

    fn wait_title(&self, title: &str) {
        let started = Instant::now();
        while self.tmux(&["display", "-p", "#{pane_title}"]).trim_end() != title {
            assert!(
                started.elapsed() < TIMEOUT,
                "tmux did not show {title:?} within {TIMEOUT:?}"
            );
            std::thread::sleep(POLL);
        }
    }
}

/// The title the pane sets once the bytes before a resize are applied.
const RESIZE_TITLE: &str = "agents-term-vs-tmux-resize";

/// Ours and tmux on `before`, a resize from `rows` × `cols` to `to`, then
/// `after`.
fn assert_resize_same_as_tmux(rows: u16, cols: u16, before: &[u8], to: (u16, u16), after: &[u8]) {
    let tmux = TmuxServer::start_resized(rows, cols, before, to, after).screen();
    let mut term = Terminal::new(rows, cols);
    term.feed(before);
    term.resize(to.0, to.1);
    term.feed(after);
    let ours = Screen {
        lines: term.visible_lines(),
        cursor: term.cursor(),
    };
    assert_eq!(
        ours, tmux,
        "differs from tmux after a resize from {cols}x{rows} to {}x{}",
        to.1, to.0
    );
}

/// Ours and tmux on `before` at `rows` × `cols`, through each size of
/// `sizes`, then `after`: the screen and cursor alike, and every line of
/// history and screen alike joined where it wrapped (`capture-pane -J`
/// against `agents logs`'s lines).
fn assert_resizes_same_as_tmux(rows: u16, cols: u16, before: &[u8], sizes: &[(u16, u16)], after: &[u8]) {
    let server = TmuxServer::start_resizes(rows, cols, before, sizes, after);
    let tmux = server.screen();
    let mut term = Terminal::new(rows, cols);
    term.feed(before);
    for &(rows, cols) in sizes {
        term.resize(rows, cols);
    }
    term.feed(after);
    let ours = Screen {
        lines: term.visible_lines(),
        cursor: term.cursor(),
    };
    assert_eq!(
        ours, tmux,
        "differs from tmux after resizes from {cols}x{rows} through {sizes:?}"
    );
}

/// Ours and tmux on `before`, through each size of `sizes`: history and
/// screen alike line for line, rows a wrap joins as one (`capture-pane -J`
/// against `agents logs`'s lines, trailing blank lines dropped).
fn assert_lines_same_as_tmux(rows: u16, cols: u16, before: &[u8], sizes: &[(u16, u16)]) {
    use agents::protocol::run_files::SizeChange;
    let server = TmuxServer::start_resizes(rows, cols, before, sizes, b"");
    server.wait_title(DONE_TITLE);
    let captured = server.tmux(&["capture-pane", "-p", "-J", "-S", "-"]);
    let mut tmux: Vec<String> = captured.lines().map(|l| l.trim_end().to_owned()).collect();
    while tmux.last().is_some_and(String::is_empty) {
        tmux.pop();
    }
    let end = before.len() as u64;
    let mut changes = vec![SizeChange {
        offset: 0,
        at_ms: 0,
        rows,
        cols,
    }];
    changes.extend(sizes.iter().map(|&(rows, cols)| SizeChange {
        offset: end,
        at_ms: 0,
        rows,
        cols,
    }));
    let mut follower = agents::term::LineFollower::with_sizes(rows, cols, 10_000, changes);
    follower.feed(before);
    assert_eq!(follower.finish(), tmux, "lines differ from tmux's after {sizes:?}");
}

fn tmux_command(socket: &Path, args: &[&str]) -> std::io::Result<Output> {
    Command::new("tmux").arg("-S").arg(socket).args(args).output()
}

/// One `capture-pane -e` row as plain text: SGR sequences dropped, cells
/// between SO and SI mapped through the DEC special graphics table, trailing
/// spaces trimmed.
fn plain_line(line: &str) -> String {
    let mut out = String::new();
    let mut line_drawing = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                // tmux 3.3 only emits CSI here: skip to the final byte.
                if chars.next() == Some('[') {
                    for c in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            break;
                        }
                    }
                }
            }
            '\x0e' => line_drawing = true,
            '\x0f' => line_drawing = false,
            c if line_drawing => out.push(capture::dec_graphics(c)),
            c => out.push(c),
        }
    }
    out.truncate(out.trim_end_matches(' ').len());
    out
}

/// The same stream through `agents::term`, fed in uneven chunks so escape
/// sequences and UTF-8 characters are split between calls.
fn ours(rows: u16, cols: u16, stream: &[u8]) -> Captured {
    let mut term = Terminal::new(rows, cols);
    for chunk in stream.chunks(97) {
        term.feed(chunk);
    }
    Captured {
        screen: Screen {
            lines: term.visible_lines(),
            cursor: term.cursor(),
        },
        pens: capture::our_pens(&term),
    }
}

fn assert_same_as_tmux_at(rows: u16, cols: u16, stream: &[u8]) {
    assert_like_tmux_at(rows, cols, stream, stream);
}

/// Ours fed `stream` against tmux fed `in_tmux`: the same bytes, or where
/// tmux is not xterm, bytes that make tmux show what xterm documents.
fn assert_like_tmux_at(rows: u16, cols: u16, stream: &[u8], in_tmux: &[u8]) {
    let Captured { screen: tmux, pens } = TmuxServer::start(rows, cols, in_tmux).captured();
    let Captured {
        screen: ours,
        pens: our_pens,
    } = ours(rows, cols, stream);
    assert_eq!(tmux.lines.len(), usize::from(rows), "tmux pane has the wrong size");
    if ours != tmux {
        let mut report = format!("differs from tmux at {cols}x{rows}\n");
        for (i, (a, b)) in ours.lines.iter().zip(&tmux.lines).enumerate() {
            if a != b {
                report.push_str(&format!("row {i:2} ours: {a:?}\n       tmux: {b:?}\n"));
            }
        }
        report.push_str(&format!("cursor ours {:?} tmux {:?}", ours.cursor, tmux.cursor));
        panic!("{report}");
    }
    let differences = capture::pen_differences(&our_pens, &pens, 8);
    assert!(
        differences.is_empty(),
        "attributes differ from tmux at {cols}x{rows}\n{}",
        differences.join("\n")
    );
}

fn assert_same_as_tmux(stream: &[u8]) {
    for (rows, cols) in SIZES {
        assert_same_as_tmux_at(rows, cols, stream);
    }
}

// Resizes. Rows pulled back from above the screen are `pull_back.rs`'s.
// Excluded from the screens compared: a line longer than the 150 rows the
// emulator keeps above the screen, its first rows off the top and out of
// them (tmux rewraps the line whole with its rows in history; ours rewraps
// the rows it has). A program that repaints on SIGWINCH draws over all;
// the lines themselves are compared through history below.

#[test]
fn shrinking_the_height_keeps_the_rows_around_the_cursor_like_tmux() {
    let lines: String = (1..=8).map(|i| format!("line {i}\r\n")).collect();
    assert_resize_same_as_tmux(10, 40, format!("{lines}prompt$ ").as_bytes(), (5, 40), b"typed");
}

#[test]
fn growing_a_screen_that_never_scrolled_adds_rows_below_like_tmux() {
    assert_resize_same_as_tmux(
        6,
        30,
        b"one\r\ntwo\r\nthree",
        (12, 60),
        b"\r\nfour wider than thirty columns, yes",
    );
}

#[test]
fn narrowing_short_lines_then_printing_wraps_at_the_new_width_like_tmux() {
    let before = b"short\r\nlines only\r\n";
    let after = "then a line that is longer than twenty columns\r\nend".as_bytes();
    assert_resize_same_as_tmux(8, 60, before, (8, 20), after);
}

#[test]
fn a_repaint_after_a_resize_matches_tmux() {
    let before: String = (1..=30).map(|i| format!("{i} {}\r\n", "x".repeat(70))).collect();
    let mut after = String::from("\x1b[H\x1b[2J");
    for row in 1..=15 {
        after.push_str(&format!("\x1b[{row};1H{row}/15x50|"));
    }
    assert_resize_same_as_tmux(24, 80, before.as_bytes(), (15, 50), after.as_bytes());
}

/// Three lines of `width` characters, each starting with its number.
fn long_lines(width: usize) -> String {
    (1..=3)
        .map(|n| format!("{n}{}\r\n", "abcdefghij".repeat(width / 10 + 1)[..width - 1].to_owned()))
        .collect()
}

#[test]
fn narrowing_rewraps_long_lines_like_tmux() {
    let before = format!("{}$ ", long_lines(240));
    assert_resizes_same_as_tmux(30, 120, before.as_bytes(), &[(30, 50)], b"typed");
}

#[test]
fn widening_rejoins_wrapped_lines_and_narrowing_splits_them_again_like_tmux() {
    // Printed at 50 columns, then wider and wider (no history for tmux to
    // pull back), or at 200 and narrower at once.
    let before = format!("{}short\r\n{}$ ", long_lines(120), "x".repeat(50));
    let sizes = [(30, 73), (30, 120), (30, 200)];
    assert_resizes_same_as_tmux(30, 50, before.as_bytes(), &sizes, b"typed");
    assert_resizes_same_as_tmux(30, 200, before.as_bytes(), &[(30, 37)], b"typed");
}

#[test]
fn a_line_as_wide_as_the_screen_stays_its_own_line_like_tmux() {
    let before = format!("{}\r\n{}\r\nend", "a".repeat(40), "b".repeat(40));
    assert_resizes_same_as_tmux(10, 40, before.as_bytes(), &[(10, 80), (10, 40), (10, 90)], b"!");
}

#[test]
fn the_cursor_mid_line_keeps_its_character_through_resizes_like_tmux() {
    // Back into the middle of a wrapped line, then up onto another: `*`
    // lands where the cursor went.
    let before = format!("{}\x1b[17D", long_lines(100));
    let (wider, narrower) = ([(12, 77), (12, 130)], [(12, 61)]);
    assert_resizes_same_as_tmux(12, 40, before.as_bytes(), &wider, b"*");
    assert_resizes_same_as_tmux(12, 130, before.as_bytes(), &narrower, b"*");
    let up = format!("{}\x1b[2A\x1b[5C", long_lines(100));
    assert_resizes_same_as_tmux(12, 40, up.as_bytes(), &wider, b"*");
    assert_resizes_same_as_tmux(12, 130, up.as_bytes(), &narrower, b"*");
}

#[test]
fn a_cursor_past_the_end_of_its_line_goes_to_the_end_like_tmux() {
    assert_resizes_same_as_tmux(6, 40, b"abc\r\n\x1b[10Cdef\x1b[5C", &[(6, 30)], b"*");
}

#[test]
fn wide_characters_at_the_margin_rewrap_like_tmux() {
    let line: String = "界a".repeat(30);
    let before = format!("{line}\r\n{line}\r\n");
    let wider = [(12, 40), (12, 80), (12, 81)];
    assert_resizes_same_as_tmux(12, 35, before.as_bytes(), &wider, "é界".as_bytes());
    let narrower = [(12, 41)];
    assert_resizes_same_as_tmux(12, 81, before.as_bytes(), &narrower, "é界".as_bytes());
}

#[test]
fn the_alternate_screen_is_cropped_not_rewrapped_like_tmux() {
    // Excluded: widening it again (tmux keeps the cells cropped off and
    // shows them again; ours are gone). A full-screen program redraws.
    let before = format!("{}\x1b[?1049h\x1b[H{}", long_lines(100), long_lines(60));
    assert_resizes_same_as_tmux(12, 60, before.as_bytes(), &[(12, 30)], b"*");
}

#[test]
fn the_main_screen_rewraps_once_when_the_alternate_screen_is_left_like_tmux() {
    let before = format!("{}$ \x1b[?1049h\x1b[H{}", long_lines(100), long_lines(60));
    let sizes = [(12, 30), (12, 150), (12, 45), (12, 120)];
    assert_resizes_same_as_tmux(12, 60, before.as_bytes(), &sizes, b"\x1b[?1049lq");
}

#[test]
fn lines_stay_whole_through_narrowing_and_widening_several_times_like_tmux() {
    // The case: three 240-column lines at 120, viewed at 50, then
    // at 120 again; then more sizes, with the cursor mid-line.
    let before = format!("{}$ ", long_lines(240));
    assert_lines_same_as_tmux(24, 120, before.as_bytes(), &[(24, 50), (24, 120)]);
    let sizes = [(10, 50), (10, 120), (10, 33), (10, 200), (10, 41)];
    let mid = format!("{}short\r\n{}\x1b[30D", long_lines(240), long_lines(90));
    assert_lines_same_as_tmux(10, 120, mid.as_bytes(), &sizes);
    let wide: String = "界a".repeat(70);
    assert_lines_same_as_tmux(8, 35, format!("{wide}\r\n{wide}").as_bytes(), &sizes);
}

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/term")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("read {}: {err}", path.display()))
}

#[test]
fn plain_text_wraps_and_scrolls_like_tmux() {
    assert_same_as_tmux(&streams::plain_text_with_wrapping());
}

#[test]
fn sgr_colours_leave_text_like_tmux() {
    assert_same_as_tmux(&streams::sgr_colours());
}

#[test]
fn wide_characters_are_placed_like_tmux() {
    assert_same_as_tmux(&streams::wide_characters());
}

#[test]
fn scroll_regions_with_lf_and_ri_match_tmux() {
    assert_same_as_tmux(&streams::scroll_regions());
}

#[test]
fn insert_and_delete_lines_match_tmux() {
    assert_same_as_tmux(&streams::insert_delete_lines());
}

#[test]
fn insert_delete_and_erase_characters_match_tmux() {
    assert_same_as_tmux(&streams::insert_delete_chars());
}

#[test]
fn erase_in_line_and_display_match_tmux() {
    assert_same_as_tmux(&streams::erase_line_and_display());
}

#[test]
fn alternate_screen_enter_and_leave_match_tmux() {
    assert_same_as_tmux(&streams::alternate_screen());
}

#[test]
fn dec_graphics_boxes_match_tmux() {
    assert_same_as_tmux(&streams::dec_graphics_box());
}

#[test]
fn cursor_movement_matches_tmux() {
    assert_same_as_tmux(&streams::cursor_movement());
}

#[test]
fn tabs_match_tmux() {
    assert_same_as_tmux(&streams::tabs());
}

#[test]
fn recorded_vim_session_matches_tmux() {
    assert_same_as_tmux_at(24, 80, &fixture("vim.bin"));
}

#[test]
fn recorded_top_refresh_matches_tmux() {
    assert_same_as_tmux_at(24, 80, &fixture("top.bin"));
}

#[test]
fn recorded_curses_boxes_via_shift_out_match_tmux() {
    assert_same_as_tmux_at(24, 80, &fixture("curses_boxes.bin"));
}

// The cases of alacritty's `saved_cursor` recording (its reference set),
// written out here.

#[test]
fn decsc_and_decrc_save_and_restore_the_charsets_like_tmux() {
    let stream = b"\x1b7 \x1b(0 test \x1b8 xxx\r\n\
        \x1b[?1049h \x1b(0 test \x1b[?1049l xxx\r\n\x1b(B\
        \x1b7 \x1b(0 \x1b[?1049h test \x1b[?1049l \x1b8 xxx\r\n\
        \x1b)0\x0e\x1b7\x1b(0\x0f\x1b)B\x1b8 q\x0fq\r\n";
    assert_same_as_tmux(stream);
}
