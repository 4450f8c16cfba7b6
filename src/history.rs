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

/// The rows that scrolled off the main screen before log offset `before`
/// (at most the last `max_lines`, plain text, oldest first), the log
/// replayed from its start at the sizes the run's screen took
/// (`runs/<id>/sizes`, else `rows` × `cols`). A screen that began watching
/// at `before` gets the history it missed this way (`runs.history`).
pub fn scrolled_before(paths: &Paths, run: &str, before: u64, rows: u16, cols: u16, max_lines: usize) -> Vec<String> {
    let sizes = std::fs::read(paths.sizes(run)).unwrap_or_default();
    let mut sizes: std::collections::VecDeque<SizeChange> = SizeChange::decode_all(&sizes).into();
    let (rows, cols) = match sizes.front() {
        Some(first) if first.offset == 0 => (first.rows, first.cols),
        _ => (rows, cols),
    };
    let mut term = Terminal::with_history(rows, cols, max_lines);
    let Ok(mut f) = std::fs::File::open(paths.output_log(run)) else {
        return Vec::new();
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut offset = 0u64;
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
    term.take_history()
}
