//! A run's screen and history re-rendered from its output log, starting at the
//! nearest screen checkpoint (docs/design.md §6): the emulator keeps no scrollback.

use std::io::Read;

use crate::paths::Paths;
use crate::protocol::run_files::{Checkpoint, SizeChange};
use crate::term::Terminal;

/// Every complete checkpoint of the run; a torn last record is ignored.
pub fn checkpoints(paths: &Paths, run: &str) -> Vec<Checkpoint> {
    std::fs::read(paths.checkpoints(run))
        .map(|bytes| Checkpoint::decode_all(&bytes))
        .unwrap_or_default()
}

/// The screen at the end of the log: the last checkpoint plus what followed.
/// Returns (offset, rows, cols, snapshot bytes).
pub fn final_screen(paths: &Paths, run: &str, rows: u16, cols: u16) -> (u64, u16, u16, Vec<u8>) {
    let start = checkpoints(paths, run).pop();
    let (mut term, from) = match &start {
        Some(cp) => {
            let mut t = Terminal::new(cp.rows, cp.cols);
            t.feed(&cp.screen);
            (t, cp.offset)
        }
        None => (Terminal::new(rows, cols), 0),
    };
    let mut offset = from;
    if let Ok(mut f) = std::fs::File::open(paths.output_log(run)) {
        use std::io::Seek;
        if f.seek(std::io::SeekFrom::Start(from)).is_ok() {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n) = f.read(&mut buf) {
                if n == 0 {
                    break;
                }
                term.feed(&buf[..n]);
                offset += n as u64;
            }
        }
    }
    let (r, c) = term.size();
    (offset, r, c, term.snapshot())
}

/// A history replay starts at most this much log before what it is asked
/// for (from the checkpoint there): 16 MiB is well over the 10 000 rows a
/// pane keeps (`engine.history_lines`) at any line length agents print,
/// and replays in well under a second, where a 1 GB log replayed from its
/// start took many.
const HISTORY_REPLAY_MAX: u64 = 16 << 20;

/// The rows that scrolled off the main screen before log offset `before`
/// (at most the last `max_lines`, plain text, oldest first): the log
/// replayed at the sizes the run's screen took, up to one taken at
/// `before` (`runs/<id>/sizes`, else `rows` × `cols`), from its start
/// or, for a long log, from the newest
/// checkpoint `HISTORY_REPLAY_MAX` before `before`. A screen that began
/// watching at `before` gets the history it missed this way
/// (`runs.history`).
pub fn scrolled_before(paths: &Paths, run: &str, before: u64, rows: u16, cols: u16, max_lines: usize) -> Vec<String> {
    scrolled_within(paths, run, before, (rows, cols), max_lines, HISTORY_REPLAY_MAX)
}

fn scrolled_within(
    paths: &Paths,
    run: &str,
    before: u64,
    (rows, cols): (u16, u16),
    max_lines: usize,
    replay_max: u64,
) -> Vec<String> {
    let sizes = std::fs::read(paths.sizes(run)).unwrap_or_default();
    let mut sizes: std::collections::VecDeque<SizeChange> = SizeChange::decode_all(&sizes).into();
    let (rows, cols) = match sizes.front() {
        Some(first) if first.offset == 0 => (first.rows, first.cols),
        _ => (rows, cols),
    };
    let start = checkpoints(paths, run)
        .into_iter()
        .rev()
        .find(|c| c.offset <= before.saturating_sub(replay_max));
    let mut term = match &start {
        Some(c) => {
            let mut term = Terminal::with_history(c.rows, c.cols, max_lines);
            term.feed(&c.screen);
            term
        }
        None => Terminal::with_history(rows, cols, max_lines),
    };
    let mut offset = start.as_ref().map_or(0, |c| c.offset);
    // The checkpoint's screen holds the size taken before it.
    sizes.retain(|s| s.offset > offset || (start.is_none() && s.offset == 0));
    let Ok(mut f) = std::fs::File::open(paths.output_log(run)) else {
        return Vec::new();
    };
    use std::io::Seek;
    if f.seek(std::io::SeekFrom::Start(offset)).is_err() {
        return Vec::new();
    }
    let mut buf = vec![0u8; 64 * 1024];
    while offset < before {
        let want = (before - offset).min(buf.len() as u64) as usize;
        let n = match f.read(&mut buf[..want]) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &buf[..n];
        // Each size is taken at the offset it was recorded at.
        while let Some(next) = sizes.front().filter(|s| s.offset < offset + chunk.len() as u64) {
            let (now, rest) = chunk.split_at(next.offset.saturating_sub(offset) as usize);
            term.feed(now);
            offset += now.len() as u64;
            term.resize(next.rows, next.cols);
            chunk = rest;
            sizes.pop_front();
        }
        term.feed(chunk);
        offset += chunk.len() as u64;
        term.take_replies();
    }
    // A size taken at `before` itself: the screen there is at it, and the
    // rows its rewrap pushed off are history.
    for size in sizes.iter().take_while(|s| s.offset <= offset) {
        term.resize(size.rows, size.cols);
    }
    term.take_history()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run folder holding `lines` numbered lines printed on a 5-row
    /// screen, with a checkpoint after the first `at` of them.
    fn run_with_checkpoint(lines: usize, at: usize) -> (tempfile::TempDir, Paths) {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path().to_path_buf());
        std::fs::create_dir_all(paths.run_dir("r")).unwrap();
        let line = |n: usize| format!("line {n}\r\n");
        let head: String = (0..at).map(line).collect();
        let tail: String = (at..lines).map(line).collect();
        let mut term = Terminal::new(5, 20);
        term.feed(head.as_bytes());
        let checkpoint = Checkpoint {
            offset: head.len() as u64,
            scrolled: term.scrolled_lines(),
            rows: 5,
            cols: 20,
            screen: term.snapshot(),
        };
        std::fs::write(paths.checkpoints("r"), checkpoint.encode()).unwrap();
        std::fs::write(paths.output_log("r"), format!("{head}{tail}")).unwrap();
        (dir, paths)
    }

    #[test]
    fn a_long_log_is_replayed_from_the_checkpoint_before_what_is_asked() {
        let (_dir, paths) = run_with_checkpoint(1000, 900);
        let end = std::fs::metadata(paths.output_log("r")).unwrap().len();
        // Asked for far less than the log before the checkpoint: the rows
        // from the checkpoint's screen on, not the log's first ones.
        let rows = scrolled_within(&paths, "r", end, (5, 20), 50, 1000);
        let expected: Vec<String> = (946..996).map(|n| format!("line {n}")).collect();
        assert_eq!(rows, expected);
        let from_checkpoint = scrolled_within(&paths, "r", end, (5, 20), 10_000, 1000);
        assert_eq!(from_checkpoint.first().map(String::as_str), Some("line 896"));
        // Unbounded, the log is replayed from its start.
        let whole = scrolled_within(&paths, "r", end, (5, 20), 10_000, u64::MAX);
        assert_eq!(whole.first().map(String::as_str), Some("line 0"));
        assert_eq!(whole.len(), 996);
    }

    /// A size taken at the offset asked for is the screen's there: its
    /// history is rewrapped at it, with the rows the narrower screen
    /// pushed off.
    #[test]
    fn a_size_taken_where_history_is_asked_for_is_in_it() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths::at(dir.path().to_path_buf());
        std::fs::create_dir_all(paths.run_dir("r")).unwrap();
        let log: String = (0..6).map(|n| format!("{}{n}\r\n", "x".repeat(15))).collect();
        std::fs::write(paths.output_log("r"), &log).unwrap();
        let end = log.len() as u64;
        let at = |offset, rows, cols| SizeChange {
            offset,
            at_ms: 0,
            rows,
            cols,
        };
        let sizes = [at(0, 4, 20), at(end, 4, 10)].map(|s| s.encode()).concat();
        std::fs::write(paths.sizes("r"), sizes).unwrap();
        let rows = scrolled_before(&paths, "r", end, 4, 20, 100);
        // Six lines of 16 on 4 rows of 10: the last line and a half and
        // the cursor's row stay on the screen.
        let mut expected = Vec::new();
        for n in 0..4 {
            expected.extend(["x".repeat(10), format!("xxxxx{n}")]);
        }
        expected.push("x".repeat(10));
        assert_eq!(rows, expected);
    }
}
