//! Issue #31: a taller or wider screen pulls rows back from above its top,
//! as tmux pulls them back from its history, and what stays above is
//! rewrapped at the new width. Each case compares the screen, the cursor
//! and every row of history (`capture-pane -S -`, rows as tmux keeps them,
//! not joined) with tmux's after the same resizes.

use agents::term::Terminal;

use super::{DONE_TITLE, Screen, TmuxServer, assert_lines_same_as_tmux};

/// `count` numbered lines, as `seq 1 COUNT` prints them, then a prompt.
fn seq(count: usize) -> String {
    let lines: String = (1..=count).map(|n| format!("{n}\r\n")).collect();
    format!("{lines}$ ")
}

/// `count` lines of every length from 1 to 117 (one in three longer than
/// 80 columns), each starting with its number, then a prompt.
fn ragged(count: usize) -> String {
    let lines: String = (1..=count)
        .map(|n| format!("{n}:{}\r\n", "abcdefghij".repeat(12)[..(n * 37) % 117].to_owned()))
        .collect();
    format!("{lines}$ ")
}

/// tmux's rows above its screen, oldest first, trailing spaces trimmed.
fn tmux_history(server: &TmuxServer) -> Vec<String> {
    server.wait_title(DONE_TITLE);
    let size: usize = server
        .tmux(&["display", "-p", "#{history_size}"])
        .trim()
        .parse()
        .expect("tmux prints its history's size");
    let all = server.tmux(&["capture-pane", "-p", "-S", "-", "-E", "-"]);
    all.lines().take(size).map(|l| l.trim_end().to_owned()).collect()
}

/// Ours and tmux on `before` at `rows` × `cols`, through each size of
/// `sizes`, then `after`: the screen, the cursor and the history alike.
fn assert_pulled_back_like_tmux(rows: u16, cols: u16, before: &str, sizes: &[(u16, u16)], after: &str) {
    let server = TmuxServer::start_resizes(rows, cols, before.as_bytes(), sizes, after.as_bytes());
    let tmux = server.screen();
    let tmux_history = tmux_history(&server);
    let mut term = Terminal::with_history(rows, cols, 10_000);
    term.feed(before.as_bytes());
    for &(rows, cols) in sizes {
        term.resize(rows, cols);
    }
    term.feed(after.as_bytes());
    let ours = Screen {
        lines: term.visible_lines(),
        cursor: term.cursor(),
    };
    assert_eq!(
        ours, tmux,
        "the screen differs from tmux's after {cols}x{rows} then {sizes:?}"
    );
    let history: Vec<String> = term.history().map(|row| row.to_string()).collect();
    assert_eq!(
        history, tmux_history,
        "history differs from tmux's after {cols}x{rows} then {sizes:?}"
    );
}

#[test]
fn a_taller_and_wider_screen_pulls_the_last_lines_back_from_history_like_tmux() {
    // The case: `seq 1 200` at 80x24, then the window grown to
    // 200x50 (at once, and a step at a time as a window is dragged).
    let before = seq(200);
    assert_pulled_back_like_tmux(24, 80, &before, &[(50, 200)], "typed");
    assert_pulled_back_like_tmux(24, 80, &before, &[(30, 80), (41, 120), (50, 200)], "typed");
}

#[test]
fn widening_after_narrowing_rejoins_the_lines_the_narrow_screen_pushed_off_like_tmux() {
    let before = ragged(60);
    assert_pulled_back_like_tmux(24, 80, &before, &[(24, 30), (24, 80)], "typed");
    assert_pulled_back_like_tmux(24, 80, &before, &[(24, 30), (50, 200)], "typed");
    let sizes = [(24, 50), (24, 120), (24, 33), (30, 200), (20, 41), (40, 90)];
    assert_pulled_back_like_tmux(24, 80, &before, &sizes, "typed");
}

#[test]
fn wide_characters_pulled_back_rewrap_like_tmux() {
    let wide: String = (1..=40)
        .map(|n| format!("{n}{}\r\n", "界a".repeat(n % 23 + 5)))
        .collect();
    let sizes = [(10, 35), (10, 81), (16, 40), (12, 120)];
    assert_pulled_back_like_tmux(10, 60, &wide, &sizes, "é界");
}

#[test]
fn lines_pulled_back_are_read_once_like_tmux() {
    // `agents logs` joins wrapped lines: a line the screen pulled back
    // from history is a line of the screen, not of both.
    let sizes = [(10, 30), (24, 80), (10, 120)];
    assert_lines_same_as_tmux(10, 80, ragged(40).as_bytes(), &sizes);
    assert_lines_same_as_tmux(24, 80, seq(200).as_bytes(), &[(50, 200)]);
}
