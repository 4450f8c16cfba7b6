//! The flood: coloured log lines like a build or a test run prints, made
//! from nothing but the line number, so the same byte count always gives the
//! same bytes and a test can compare what came out of the PTY byte for byte.

use std::io::Write as _;

/// Bytes per write(2): large enough that system calls do not dominate, small
/// enough that a pending signal is noticed within a fraction of a millisecond.
pub(super) const CHUNK_BYTES: usize = 64 * 1024;
/// No rendered line is longer than this (checked by a test).
pub(super) const MAX_LINE_BYTES: usize = 256;

/// Exactly `len` bytes of flood payload, as `--flood len` writes them.
///
/// Lines end in `\r\n` (the agent turns the terminal's `\n` → `\r\n`
/// translation off while it floods, so the reader of the PTY gets these
/// bytes unchanged). The payload is ASCII plus complete SGR sequences; when
/// `len` does not end on a line, the last line is plain dots (so no escape
/// sequence is cut) ending in `\r\n`. So the payload ends in `\r\n` unless
/// `len` is 1 (a single `.`).
pub fn flood_payload(len: u64) -> Vec<u8> {
    let mut flood = Flood::new(len);
    let mut payload = Vec::new();
    while flood.fill(&mut payload, CHUNK_BYTES) {}
    payload
}

/// A flood in progress.
pub(super) struct Flood {
    next_line: u64,
    remaining: u64,
    line: Vec<u8>,
}

impl Flood {
    pub(super) fn new(len: u64) -> Self {
        Self {
            next_line: 0,
            remaining: len,
            line: Vec::with_capacity(MAX_LINE_BYTES),
        }
    }

    /// Appends whole lines to `out` until it grows by at least `target`
    /// bytes or the flood is over; returns false once nothing is left.
    pub(super) fn fill(&mut self, out: &mut Vec<u8>, target: usize) -> bool {
        let start = out.len();
        while self.remaining > 0 && out.len() - start < target {
            self.line.clear();
            render_line(self.next_line, &mut self.line);
            self.next_line += 1;
            let len = self.line.len() as u64;
            // A line that would leave one byte would leave a lone `.`
            // without a line end: dots fill the rest instead.
            if len <= self.remaining && self.remaining - len != 1 {
                out.extend_from_slice(&self.line);
                self.remaining -= len;
            } else {
                // `remaining` < one line, so it fits in usize.
                let left = self.remaining as usize;
                if left >= 2 {
                    out.extend(std::iter::repeat_n(b'.', left - 2));
                    out.extend_from_slice(b"\r\n");
                } else {
                    out.push(b'.');
                }
                self.remaining = 0;
            }
        }
        out.len() > start
    }
}

const LEVELS: [(&str, &str); 8] = [
    ("INFO ", "32"),
    ("DEBUG", "34"),
    ("INFO ", "32"),
    ("TRACE", "90"),
    ("INFO ", "32"),
    ("WARN ", "33"),
    ("DEBUG", "34"),
    ("ERROR", "1;31"),
];
const TARGETS: [&str; 6] = [
    "build::compile",
    "test::runner",
    "http::server",
    "cache::store",
    "agent::tools",
    "fs::watch",
];
const CRATES: [&str; 10] = [
    "serde", "tokio", "clap", "regex", "vt100", "rusqlite", "ratatui", "anyhow", "memchr", "nix",
];

/// One log line, about 100 visible columns, from its number alone.
fn render_line(number: u64, out: &mut Vec<u8>) {
    let hash = splitmix64(number);
    let pick = |shift: u32, len: usize| ((hash >> shift) as usize) % len;
    // Lines 7 ms apart from 09:00 on a fixed day, wrapping at midnight.
    let millis = (9 * 3_600_000 + number * 7) % 86_400_000;
    let (hours, minutes) = (millis / 3_600_000, millis / 60_000 % 60);
    let (seconds, millis) = (millis / 1000 % 60, millis % 1000);
    let (level, colour) = LEVELS[pick(0, LEVELS.len())];
    let target = TARGETS[pick(8, TARGETS.len())];
    let krate = CRATES[pick(16, CRATES.len())];
    let small = (hash >> 24) % 1000;
    let tiny = (hash >> 34) % 100;
    // Writing into a Vec cannot fail.
    let _ = write!(
        out,
        "\x1b[2m2025-01-01T{hours:02}:{minutes:02}:{seconds:02}.{millis:03}Z\x1b[0m \
         \x1b[{colour}m{level}\x1b[0m \x1b[35m{target:<14}\x1b[0m "
    );
    let _ = match number % 5 {
        0 => write!(
            out,
            "\x1b[1;32mCompiling\x1b[0m {krate} v0.{tiny}.{small} (unit {number} of {}) in {}.{}s",
            number + 1 + small,
            tiny / 10,
            tiny % 10
        ),
        1 => write!(
            out,
            "test {krate}::tests::case_{small:04} ... \x1b[32mok\x1b[0m ({tiny} ms, {} assertions)",
            small % 50 + 1
        ),
        2 => write!(
            out,
            "GET /api/v1/runs/{:08x} -> \x1b[32m200\x1b[0m in {tiny} ms ({} bytes, keep-alive)",
            hash as u32,
            small * 37
        ),
        3 => write!(
            out,
            "cache miss key={hash:016x} size={} evicted={tiny} entries",
            small * 1024
        ),
        _ => write!(
            out,
            "wrote target/debug/deps/lib{krate}-{:016x}.rlib ({small} KiB)",
            hash.rotate_left(17)
        ),
    };
    out.extend_from_slice(b"\r\n");
}

/// A fixed, well-mixed hash of the line number (SplitMix64's finaliser).
fn splitmix64(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every escape sequence is a complete SGR (`ESC [ digits;… m`).
    fn escapes_are_complete(bytes: &[u8]) -> bool {
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == 0x1b {
                let Some(end) = bytes[i..].iter().position(|&b| b == b'm') else {
                    return false;
                };
                let body = &bytes[i + 1..i + end];
                if body.first() != Some(&b'[') || !body[1..].iter().all(|&b| b.is_ascii_digit() || b == b';') {
                    return false;
                }
                i += end;
            }
            i += 1;
        }
        true
    }

    #[test]
    fn the_payload_has_exactly_the_requested_length() {
        for len in [0, 1, 2, 3, 99, 100, 101, 257, 4096, 65_535, 65_536, 1_000_003] {
            assert_eq!(flood_payload(len).len() as u64, len, "len {len}");
        }
    }

    #[test]
    fn the_same_length_gives_the_same_bytes() {
        assert_eq!(flood_payload(300_001), flood_payload(300_001));
    }

    #[test]
    fn lines_look_like_coloured_logs_of_about_a_hundred_columns() {
        let payload = flood_payload(1 << 20);
        let text = std::str::from_utf8(&payload).expect("the flood is ASCII");
        assert!(text.is_ascii());
        assert!(text.ends_with("\r\n"));
        for line in text.split_terminator("\r\n").take(1000) {
            assert!(line.len() <= MAX_LINE_BYTES, "{line:?}");
            let visible = strip_sgr(line);
            assert!((60..=130).contains(&visible.len()), "{visible:?}");
            assert!(visible.starts_with("2025-01-01T09:"), "{visible:?}");
            assert!(!line.contains('\n') && !line.contains('\r'));
        }
    }

    #[test]
    fn a_cut_never_splits_an_escape_sequence() {
        for len in (0..2000).chain(65_000..65_600) {
            let payload = flood_payload(len);
            assert!(escapes_are_complete(&payload), "len {len}");
            if len >= 2 {
                assert!(payload.ends_with(b"\r\n"), "len {len}");
            }
        }
    }

    #[test]
    fn fill_hands_out_whole_lines_in_chunks_of_at_least_the_target() {
        let mut flood = Flood::new(10 * CHUNK_BYTES as u64 + 5);
        let mut chunk = Vec::new();
        let mut total = 0;
        while flood.fill(&mut chunk, CHUNK_BYTES) {
            let last = chunk.len() as u64 + total == 10 * CHUNK_BYTES as u64 + 5;
            assert!(last || chunk.len() >= CHUNK_BYTES);
            assert!(chunk.len() < CHUNK_BYTES + MAX_LINE_BYTES);
            assert!(chunk.ends_with(b"\r\n"));
            total += chunk.len() as u64;
            chunk.clear();
        }
        assert_eq!(total, 10 * CHUNK_BYTES as u64 + 5);
    }

    fn strip_sgr(line: &str) -> String {
        let mut out = String::new();
        let mut in_escape = false;
        for c in line.chars() {
            match (in_escape, c) {
                (false, '\x1b') => in_escape = true,
                (false, c) => out.push(c),
                (true, 'm') => in_escape = false,
                (true, _) => {}
            }
        }
        out
    }
}
