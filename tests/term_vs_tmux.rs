//! Differential test: `agents::term::Terminal` against real tmux.
//!
//! Each byte stream is written to a file and `cat` into a tmux pane of the
//! same size (with output post-processing off, so tmux sees exactly the
//! bytes `Terminal` gets), then the visible text and cursor of both are
//! compared. tmux is the reference users compare us with (docs/design.md §6, §10).
//!
//! Every case runs its own tmux server on a private socket, so cases run in
//! parallel and a failing case still kills its server (`TmuxServer::drop`).
//! Completion is detected in-band: after the stream the pane prints an OSC 2
//! title marker, and since tmux parses its input in order, seeing that title
//! means every earlier byte has been applied.
//!
//! Where tmux and our emulator legitimately differ, the stream says so in a
//! comment beginning "Excluded:" and leaves out exactly that operation.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use agents::term::Terminal;

/// The sizes every synthetic stream is checked at: a classic terminal and a
/// large pane like the ones the throughput budget is measured at.
const SIZES: [(u16, u16); 2] = [(24, 80), (50, 200)];

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
        let captured = self.tmux(&["capture-pane", "-p", "-e"]);
        let lines = captured.lines().map(plain_line).collect();
        let cursor = self.tmux(&["display", "-p", "#{cursor_y} #{cursor_x}"]);
        let mut numbers = cursor.split_whitespace().map(|n| n.parse::<u16>());
        let cursor = match (numbers.next(), numbers.next()) {
            (Some(Ok(row)), Some(Ok(col))) => (row, col),
            _ => panic!("unexpected cursor report {cursor:?}"),
        };
        Screen { lines, cursor }
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
        let (c, r) = (to.1.to_string(), to.0.to_string());
        server.tmux(&["resize-window", "-x", &c, "-y", &r]);
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
            c if line_drawing => out.push(dec_graphics(c)),
            c => out.push(c),
        }
    }
    out.truncate(out.trim_end_matches(' ').len());
    out
}

/// The DEC special graphics table (VT100 User Guide table 3-9), written out
/// independently of the one in `agents::term` so this test checks it.
fn dec_graphics(c: char) -> char {
    const FROM: &str = "_`abcdefghijklmnopqrstuvwxyz{|}~";
    const TO: &str = "\u{a0}◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·";
    FROM.chars()
        .position(|from| from == c)
        .and_then(|index| TO.chars().nth(index))
        .unwrap_or(c)
}

/// The same stream through `agents::term`, fed in uneven chunks so escape
/// sequences and UTF-8 characters are split between calls.
fn ours(rows: u16, cols: u16, stream: &[u8]) -> Screen {
    let mut term = Terminal::new(rows, cols);
    for chunk in stream.chunks(97) {
        term.feed(chunk);
    }
    Screen {
        lines: term.visible_lines(),
        cursor: term.cursor(),
    }
}

fn assert_same_as_tmux_at(rows: u16, cols: u16, stream: &[u8]) {
    let tmux = TmuxServer::start(rows, cols, stream).screen();
    let ours = ours(rows, cols, stream);
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
}

fn assert_same_as_tmux(stream: &[u8]) {
    for (rows, cols) in SIZES {
        assert_same_as_tmux_at(rows, cols, stream);
    }
}

// Resizes. Excluded: shrinking the width under a line longer than the new
// width (tmux rewraps it, ours crops it; docs/design.md §6 keeps no reflow), and
// growing the height after output scrolled (tmux pulls rows back from its
// history; the supervisor keeps none, so blank rows come on top). A program
// that repaints on SIGWINCH draws over both.

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

/// The synthetic streams. Each ends with the cursor somewhere telling, and
/// most print text at every place an operation could go wrong, since only
/// text and the cursor are compared.
mod streams {
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
}
