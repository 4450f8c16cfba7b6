//! Plain-text lines of a byte stream as a terminal would have shown them:
//! the rows that scrolled off the top (history) and then the screen. Used by
//! `agents logs`, which may follow a live run.
//!
//! A line is what the program wrote up to a line feed: rows a wrap joins
//! (`Row::wrapped`) are printed as one line, whatever width they were
//! wrapped or rewrapped at, as `tmux capture-pane -J` prints them, so
//! `grep` finds a long line whole.
//!
//! Following, a line is printed once it is complete — the cursor has moved
//! below its last row — and never twice: lines are numbered from the first
//! line the screen ever had (a line that scrolls off keeps its number, and
//! rewrapping at a new width changes none), and each number is printed
//! once, unless the program redrew that line since, in which case its final
//! text is printed when it leaves the screen.

use std::collections::{BTreeMap, VecDeque};

use super::emulator::{Emulator, Sink};
use super::grid::Row;
use crate::values::screen::SizeChange;

struct Capture {
    /// Lines that scrolled off the top of the main screen, with their number.
    finished: VecDeque<(u64, String)>,
    /// How many of `finished` were already handed out.
    taken: usize,
    max: usize,
    /// How many lines scrolled off the top of the main screen so far: the
    /// number of the screen's first line.
    scrolled: u64,
    /// The rows of a line that scrolled off while it goes on below (they
    /// wrapped), joined: the screen's first line goes on from them.
    head: Option<String>,
    /// Lines handed out already that a taller or wider screen pulled back
    /// onto the screen, by number: not to be handed out again as they are.
    returned: Vec<(u64, String)>,
}

impl Sink for Capture {
    fn scrolled(&mut self, _: u64, row: &Row) {
        let mut text = self.head.take().unwrap_or_default();
        text.push_str(&row.line_text());
        if row.wrapped {
            self.head = Some(text);
            return;
        }
        self.finished.push_back((self.scrolled, text));
        self.scrolled += 1;
        if self.finished.len() > self.max {
            self.finished.pop_front();
            self.taken = self.taken.saturating_sub(1);
        }
    }

    fn pulled(&mut self, _: u64, rows: &[Row], continues: bool) {
        // The rows are the last ones scrolled off: they end as many of the
        // finished lines as do not wrap, then the head. What is left of
        // the oldest of those lines above them is the new head.
        let mut text = String::new();
        let ends = rows.iter().filter(|row| !row.wrapped).count();
        let from = self.finished.len().saturating_sub(ends);
        for (at, (n, line)) in self.finished.drain(from..).enumerate() {
            text.push_str(&line);
            if from + at < self.taken {
                self.returned.push((n, line));
            }
            self.scrolled -= 1;
        }
        self.taken = self.taken.min(self.finished.len());
        text.push_str(&self.head.take().unwrap_or_default());
        let pulled: usize = rows.iter().map(|row| row.line_text().len()).sum();
        let above = text.len().saturating_sub(pulled);
        if continues && text.is_char_boundary(above) {
            text.truncate(above);
            self.head = Some(text);
        }
    }
}

/// The screen's lines, rows a wrap joins as one (`head` going on in the
/// first), each with the index of its last row.
fn screen_lines(emu: &Emulator<Capture>) -> Vec<(String, usize)> {
    let mut lines: Vec<(String, usize)> = Vec::new();
    let head = emu.sink.head.as_ref().filter(|_| !emu.alt_on);
    let mut text = head.cloned().unwrap_or_default();
    let rows = &emu.grid().rows;
    for (r, row) in rows.iter().enumerate() {
        let last = r + 1 == rows.len();
        text.push_str(&if last { row.text() } else { row.line_text() });
        if !row.wrapped || last {
            lines.push((std::mem::take(&mut text), r));
        }
    }
    lines
}

pub struct LineFollower {
    parser: vte::Parser,
    emu: Emulator<Capture>,
    /// A UTF-8 character cut at the end of the last chunk (`utf8.rs`).
    whole: super::utf8::WholeChars,
    /// Log bytes fed so far.
    offset: u64,
    /// Sizes still to take, at their offsets (the run's `sizes` file).
    sizes: std::collections::VecDeque<SizeChange>,
    /// The offset of the last size taken.
    sized_at: u64,
    /// Lines numbered below this were handed out (`take_complete`).
    printed: u64,
    /// The text handed out for lines still on the screen, by number.
    shown: BTreeMap<u64, String>,
}

impl LineFollower {
    /// Keeps at most `max_lines` of history.
    pub fn new(rows: u16, cols: u16, max_lines: usize) -> LineFollower {
        let capture = Capture {
            finished: VecDeque::new(),
            taken: 0,
            max: max_lines.max(1),
            scrolled: 0,
            head: None,
            returned: Vec::new(),
        };
        LineFollower {
            parser: vte::Parser::new(),
            emu: Emulator::new(rows.max(1), cols.max(1), capture),
            whole: Default::default(),
            offset: 0,
            sizes: Default::default(),
            sized_at: 0,
            printed: 0,
            shown: BTreeMap::new(),
        }
    }

    /// A follower of a log from its start that takes each size at the
    /// offset the run's screen took it, so its lines wrap and crop as the
    /// run's screen did; `rows` × `cols` until the first.
    pub fn with_sizes(rows: u16, cols: u16, max_lines: usize, sizes: Vec<SizeChange>) -> LineFollower {
        let mut f = LineFollower::new(rows, cols, max_lines);
        f.sizes = sizes.into();
        f.take_sizes_due();
        f
    }

    /// Takes a size the run's screen took at its offset, learned while
    /// following: from that offset on, or now if the bytes there were fed
    /// already. One known already, or older than one taken, is let be.
    pub fn take_size(&mut self, size: SizeChange) {
        if size.offset < self.sized_at || self.sizes.contains(&size) {
            return;
        }
        let at = self.sizes.partition_point(|s| s.offset <= size.offset);
        self.sizes.insert(at, size);
        self.take_sizes_due();
    }

    /// Feeds the next log bytes.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(next) = self.sizes.front() {
            let before = next.offset.saturating_sub(self.offset);
            if before >= bytes.len() as u64 {
                break;
            }
            let (now, rest) = bytes.split_at(before as usize);
            self.process(now);
            bytes = rest;
            self.take_sizes_due();
        }
        self.process(bytes);
        // A size taken right after the last byte (a resize once output
        // stopped) counts now, not at a next feed that may never come.
        self.take_sizes_due();
    }

    fn process(&mut self, bytes: &[u8]) {
        self.offset += bytes.len() as u64;
        self.parser.advance(&mut self.emu, self.whole.pass(bytes));
    }

    /// Takes every size whose offset has been reached.
    fn take_sizes_due(&mut self) {
        while let Some(next) = self.sizes.front().copied()
            && next.offset <= self.offset
        {
            self.sizes.pop_front();
            self.sized_at = next.offset;
            self.emu.resize(next.rows.max(1), next.cols.max(1));
        }
    }

    /// The lines completed since the last call, in order: those that
    /// scrolled off, then the screen's lines above the cursor's (none while
    /// a full-screen program has the alternate screen). A line that wrapped
    /// is one line, complete once the cursor is below its last row.
    pub fn take_complete(&mut self) -> Vec<String> {
        let mut out = self.take_scrolled();
        if self.emu.alt_on {
            return out;
        }
        let (cursor_row, _) = self.emu.cursor();
        let top = self.emu.sink.scrolled;
        for (i, (text, last)) in screen_lines(&self.emu).into_iter().enumerate() {
            if last >= usize::from(cursor_row) {
                break;
            }
            let n = top + i as u64;
            if n >= self.printed {
                self.shown.insert(n, text.clone());
                out.push(text);
                self.printed = n + 1;
            }
        }
        out
    }

    /// At the end of the output: what `take_complete` has not handed out of
    /// the screen (trailing blank lines dropped), and the final text of
    /// lines redrawn since they were handed out.
    pub fn take_rest(&mut self) -> Vec<String> {
        let mut out = self.take_scrolled();
        let top = self.emu.sink.scrolled;
        let mut lines = self.take_screen();
        if self.emu.alt_on {
            lines.clear();
        }
        for (i, text) in lines.into_iter().enumerate() {
            out.extend(self.leaving(top + i as u64, text));
        }
        self.shown.clear();
        out
    }

    /// Rows that scrolled off since the last call, less those handed out
    /// already with the same text.
    fn take_scrolled(&mut self) -> Vec<String> {
        let capture = &mut self.emu.sink;
        self.shown.extend(capture.returned.drain(..));
        let fresh: Vec<(u64, String)> = capture.finished.iter().skip(capture.taken).cloned().collect();
        capture.taken = capture.finished.len();
        let top = capture.scrolled;
        let out = fresh
            .into_iter()
            .filter_map(|(n, text)| self.leaving(n, text))
            .collect();
        // Numbers above the screen's top row are gone for good.
        self.shown = self.shown.split_off(&top);
        out
    }

    /// Line `n` leaves the screen with `text`: handed out unless it was
    /// already, as it is now.
    fn leaving(&mut self, n: u64, text: String) -> Option<String> {
        let shown = self.shown.remove(&n);
        let new = n >= self.printed || shown.as_deref() != Some(text.as_str());
        self.printed = self.printed.max(n + 1);
        new.then_some(text)
    }

    /// The current screen's lines, trailing blank ones dropped.
    fn take_screen(&mut self) -> Vec<String> {
        let mut lines: Vec<String> = screen_lines(&self.emu).into_iter().map(|(text, _)| text).collect();
        while lines.last().is_some_and(|r| r.is_empty()) {
            lines.pop();
        }
        lines
    }

    /// Everything: the history (at most `max_lines` in all) then the screen.
    pub fn finish(mut self) -> Vec<String> {
        let screen = self.take_screen();
        let capture = &mut self.emu.sink;
        let max = capture.max;
        let mut all: Vec<String> = capture.finished.drain(..).map(|(_, text)| text).collect();
        all.extend(screen);
        let cut = all.len().saturating_sub(max);
        all.drain(..cut);
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrolled_lines_come_first_then_the_screen() {
        let mut f = LineFollower::new(3, 20, 100);
        for i in 0..6 {
            f.feed(format!("\x1b[3{}mline {i}\x1b[0m\r\n", i % 8).as_bytes());
        }
        assert_eq!(
            f.finish(),
            vec!["line 0", "line 1", "line 2", "line 3", "line 4", "line 5"]
        );
    }

    #[test]
    fn history_is_bounded() {
        let mut f = LineFollower::new(2, 10, 3);
        for i in 0..10 {
            f.feed(format!("{i}\r\n").as_bytes());
        }
        assert_eq!(f.finish(), vec!["7", "8", "9"]);
    }

    #[test]
    fn a_line_is_handed_out_once_it_is_complete_and_only_once() {
        let mut f = LineFollower::new(3, 20, 100);
        f.feed(b"one\r\ntw");
        assert_eq!(f.take_complete(), ["one"]);
        f.feed(b"o");
        assert!(f.take_complete().is_empty(), "'two' is not complete yet");
        // Completed, then scrolled off: handed out once.
        f.feed(b"\r\nthree\r\nfour\r\nfive");
        assert_eq!(f.take_complete(), ["two", "three", "four"]);
        assert!(f.take_complete().is_empty());
        assert_eq!(f.take_rest(), ["five"]);
    }

    #[test]
    fn a_redrawn_line_is_handed_out_again_when_it_leaves_the_screen() {
        let mut f = LineFollower::new(3, 20, 100);
        f.feed(b"50%\r\n");
        assert_eq!(f.take_complete(), ["50%"]);
        // The program goes back up and rewrites it, then output scrolls on.
        f.feed(b"\x1b[1;1H100%\x1b[3;1Ha\r\nb");
        assert_eq!(f.take_complete(), ["100%", "", "a"]);
        assert_eq!(f.take_rest(), ["b"]);
    }

    #[test]
    fn sizes_are_taken_at_their_offsets_as_the_run_s_screen_took_them() {
        let size = |offset, rows, cols| SizeChange {
            offset,
            at_ms: 0,
            rows,
            cols,
        };
        // 12 columns, then 6 from the second line on: the first line wrapped
        // at 12 and was rewrapped at 6, the second wraps at 6; each is one
        // line.
        let log = b"abcdefghijklmnop\r\n0123456789\r\n";
        let mut f = LineFollower::with_sizes(24, 80, 100, vec![size(0, 4, 12), size(18, 4, 6)]);
        // Fed in pieces that do not line up with the size change.
        for piece in log.chunks(5) {
            f.feed(piece);
        }
        assert_eq!(f.finish(), ["abcdefghijklmnop", "0123456789"]);
    }

    #[test]
    fn a_size_taken_after_the_last_byte_is_taken() {
        let size = |offset, cols| SizeChange {
            offset,
            at_ms: 0,
            rows: 3,
            cols,
        };
        let mut f = LineFollower::with_sizes(24, 80, 100, vec![size(0, 12), size(10, 4)]);
        f.feed(b"abcdefgh\r\n");
        assert_eq!(f.finish(), ["abcdefgh"]);
    }

    #[test]
    fn line_drawing_glyphs_are_drawn_as_lines() {
        let mut f = LineFollower::new(3, 20, 100);
        f.feed(b"\x1b(0lqk\x1b(B ok\r\n");
        assert_eq!(f.finish(), ["┌─┐ ok"]);
    }

    #[test]
    fn a_full_screen_program_hands_out_no_lines_until_it_leaves() {
        let mut f = LineFollower::new(3, 20, 100);
        f.feed(b"before\r\n");
        assert_eq!(f.take_complete(), ["before"]);
        f.feed(b"\x1b[?1049hmenu\r\nitem\r\n");
        assert!(f.take_complete().is_empty());
        f.feed(b"\x1b[?1049lafter\r\n");
        assert_eq!(f.take_complete(), ["after"]);
    }

    fn size(offset: u64, rows: u16, cols: u16) -> SizeChange {
        SizeChange {
            offset,
            at_ms: 0,
            rows,
            cols,
        }
    }

    #[test]
    fn lines_wider_than_the_screen_survive_narrowing_and_widening_whole() {
        // Three 240-column lines at 120, viewed at 50, then at 120 again:
        // each is one line, as `tmux capture-pane -J` prints it.
        let lines: Vec<String> = (1..=3).map(|n| format!("{n}{}", "x".repeat(239))).collect();
        let log = format!("{}$ ", lines.iter().map(|l| format!("{l}\r\n")).collect::<String>());
        let end = log.len() as u64;
        let sizes = vec![size(0, 24, 120), size(end, 24, 50), size(end, 24, 120)];
        let mut f = LineFollower::with_sizes(24, 80, 100, sizes);
        f.feed(log.as_bytes());
        let mut expected = lines.clone();
        expected.push("$".into());
        assert_eq!(f.finish(), expected);
        // Narrowed to 50 for good, 9 rows went off the top.
        let sizes = vec![size(0, 24, 120), size(end, 24, 50)];
        let mut f = LineFollower::with_sizes(24, 80, 100, sizes);
        f.feed(log.as_bytes());
        assert_eq!(f.finish(), expected);
    }

    #[test]
    fn a_wrapped_line_is_handed_out_once_whole_when_the_cursor_is_below_it() {
        let mut f = LineFollower::new(3, 10, 100);
        f.feed(b"0123456789abc");
        assert!(f.take_complete().is_empty(), "the cursor is on the line's second row");
        f.feed(b"\r\n");
        assert_eq!(f.take_complete(), ["0123456789abc"]);
        // Scrolling off in pieces hands nothing out twice.
        f.feed(b"next\r\nmore\r\nlast");
        assert_eq!(f.take_complete(), ["next", "more"]);
        assert_eq!(f.take_rest(), ["last"]);
    }

    #[test]
    fn a_line_whose_first_rows_scrolled_off_is_still_one_line() {
        let mut f = LineFollower::new(2, 5, 100);
        f.feed(b"abcdefghijklm\r\nz");
        assert_eq!(f.take_complete(), ["abcdefghijklm"]);
        assert_eq!(f.finish(), ["abcdefghijklm", "z"]);
    }
}
