//! A run's screen and history re-rendered from its output log, starting at the
//! nearest screen checkpoint (DESIGN §6): the emulator keeps no scrollback.

use std::io::Read;

use crate::paths::Paths;
use crate::term::Terminal;

#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    pub offset: u64,
    pub scrolled: u64,
    pub rows: u16,
    pub cols: u16,
    pub screen: Vec<u8>,
}

/// Reads every complete checkpoint record; a torn last record is ignored.
pub fn checkpoints(paths: &Paths, run: &str) -> Vec<Checkpoint> {
    let Ok(bytes) = std::fs::read(paths.checkpoints(run)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 28 <= bytes.len() {
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or([0; 8]));
        let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        let len = u32::from_le_bytes(bytes[at + 24..at + 28].try_into().unwrap_or([0; 4])) as usize;
        if at + 28 + len > bytes.len() {
            break;
        }
        out.push(Checkpoint {
            offset: u64_at(at),
            scrolled: u64_at(at + 8),
            rows: u16_at(at + 16),
            cols: u16_at(at + 18),
            screen: bytes[at + 28..at + 28 + len].to_vec(),
        });
        at += 28 + len;
    }
    out
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
