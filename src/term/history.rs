//! History re-rendered from the output log (docs/design.md §6).
//!
//! The live emulator keeps only its screen (and a few rows above it for a
//! resize to pull back, `above.rs`). When someone wants more (a user
//! scrolls back, `agents logs`, a search) the log is replayed, from the
//! nearest checkpoint snapshot, through an emulator that records each row as
//! it scrolls off. That costs tens of milliseconds when asked, instead of
//! tens of megabytes per run all the time.

use super::Terminal;

/// Replays `bytes` (a run's output log, or the part after a checkpoint whose
/// [`Terminal::snapshot`] is `start`) on a `rows` × `cols` emulator and
/// returns the last `max_lines` lines of history and screen as plain text,
/// oldest first: the rows that scrolled off the top of the main screen, then
/// the screen's rows with trailing blank rows dropped. Trailing spaces are
/// trimmed from every line.
pub fn render_history(
    rows: u16,
    cols: u16,
    start: Option<&[u8]>,
    bytes: impl Iterator<Item = impl AsRef<[u8]>>,
    max_lines: usize,
) -> Vec<String> {
    if max_lines == 0 {
        return Vec::new();
    }
    let mut term = Terminal::with_history(rows, cols, max_lines);
    if let Some(snapshot) = start {
        term.feed(snapshot);
    }
    for chunk in bytes {
        term.feed(chunk.as_ref());
    }

    let mut screen = term.visible_lines();
    while screen.last().is_some_and(String::is_empty) {
        screen.pop();
    }
    let mut lines = term.take_history();
    lines.extend(screen);
    let excess = lines.len().saturating_sub(max_lines);
    lines.drain(..excess);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(from: usize, to: usize) -> String {
        (from..=to).map(|n| format!("line {n}\r\n")).collect()
    }

    #[test]
    fn returns_the_last_lines_across_scrolls_oldest_first() {
        let log = numbered(1, 100);
        let lines = render_history(10, 40, None, [log.as_bytes()].into_iter(), 15);
        // 100 lines and a final newline on a 10-row screen: lines 1..=91
        // scrolled off, 92..=100 are on screen above an empty cursor row.
        let expected: Vec<String> = (86..=100).map(|n| format!("line {n}")).collect();
        assert_eq!(lines, expected);
    }

    #[test]
    fn returns_everything_when_history_is_short() {
        let lines = render_history(10, 40, None, [b"a\r\nb\r\nc".as_slice()].into_iter(), 50);
        assert_eq!(lines, ["a", "b", "c"]);
    }

    #[test]
    fn accepts_chunks_split_anywhere() {
        let log = numbered(1, 30);
        let chunks: Vec<&[u8]> = log.as_bytes().chunks(7).collect();
        let lines = render_history(5, 20, None, chunks.into_iter(), 100);
        let expected: Vec<String> = (1..=30).map(|n| format!("line {n}")).collect();
        assert_eq!(lines, expected);
    }

    #[test]
    fn continues_from_a_checkpoint_snapshot() {
        let mut live = Terminal::new(5, 20);
        live.feed(numbered(1, 20).as_bytes());
        let checkpoint = live.snapshot();
        let rest = numbered(21, 25);
        let lines = render_history(5, 20, Some(&checkpoint), [rest.as_bytes()].into_iter(), 8);
        // The checkpoint screen held lines 17..=20; replay scrolls them off.
        let expected: Vec<String> = (18..=25).map(|n| format!("line {n}")).collect();
        assert_eq!(lines, expected);
    }

    #[test]
    fn ignores_what_scrolls_on_the_alternate_screen() {
        let mut log = numbered(1, 3);
        log.push_str("\x1b[?1049h");
        log.push_str(&numbered(100, 120));
        log.push_str("\x1b[?1049l");
        let lines = render_history(5, 20, None, [log.as_bytes()].into_iter(), 50);
        assert_eq!(lines, ["line 1", "line 2", "line 3"]);
    }

    #[test]
    fn keeps_colourless_text_of_coloured_rows() {
        let log = "\x1b[31mred\x1b[m plain \x1b[44m  \x1b[m\r\n".repeat(6);
        let lines = render_history(3, 20, None, [log.as_bytes()].into_iter(), 4);
        assert_eq!(lines, ["red plain", "red plain", "red plain", "red plain"]);
    }

    #[test]
    fn zero_lines_asked_is_empty() {
        assert!(render_history(5, 20, None, [b"x".as_slice()].into_iter(), 0).is_empty());
    }
}
