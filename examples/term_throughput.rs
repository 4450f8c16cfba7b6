//! Emulator throughput on coloured log output (docs/design.md §6, §10).
//!
//! `cargo run --release --example term_throughput [MB]`
//!
//! Feeds ~50 MB (or MB) of generated coloured log lines to `agents::term` at
//! 200×50 in 64 KiB chunks (a typical PTY read size) and prints MB/s, next to
//! the `vt100` crate (the emulator `agents::term` replaced) on the same bytes.

use std::num::NonZeroU16;
use std::time::{Duration, Instant};

use agents::term::Terminal;

const ROWS: u16 = 50;
const COLS: u16 = 200;
const CHUNK: usize = 64 * 1024;
/// Timed runs of each; the best counts (the machine may be shared).
const RUNS: usize = 5;

fn main() {
    let megabytes: usize = std::env::args().nth(1).and_then(|arg| arg.parse().ok()).unwrap_or(50);
    let log = coloured_log(megabytes * 1_000_000);
    let mb = log.len() as f64 / 1e6;

    // Alternate the two and keep each one's best run, so frequency scaling
    // and a neighbour's load hit both alike.
    let (mut wrapper, mut bare) = (Duration::MAX, Duration::MAX);
    let mut scrolled = 0;
    for _ in 0..RUNS {
        let start = Instant::now();
        let mut term = Terminal::new(ROWS, COLS);
        for chunk in log.chunks(CHUNK) {
            term.feed(chunk);
        }
        scrolled = std::hint::black_box(term.scrolled_lines());
        wrapper = wrapper.min(start.elapsed());

        let start = Instant::now();
        let mut parser = vt100::Parser::new(
            NonZeroU16::new(ROWS).expect("non-zero constant"),
            NonZeroU16::new(COLS).expect("non-zero constant"),
            0,
        );
        for chunk in log.chunks(CHUNK) {
            parser.process(chunk);
        }
        std::hint::black_box(parser.screen().cursor_position());
        bare = bare.min(start.elapsed());
    }

    println!("{mb:.1} MB of coloured log at {COLS}x{ROWS}, {scrolled} lines scrolled");
    println!("agents::term  {:7.1} MB/s", mb / wrapper.as_secs_f64());
    println!("vt100 crate   {:7.1} MB/s", mb / bare.as_secs_f64());
    println!("ratio         {:7.2}x", bare.as_secs_f64() / wrapper.as_secs_f64());
}

/// Log lines in the style of a build or test run: a dim timestamp, a coloured
/// level, a 256-colour module name, occasional truecolor, text of varying
/// length (some longer than 200 columns, so they wrap), CRLF endings.
fn coloured_log(target: usize) -> Vec<u8> {
    use std::io::Write as _;
    const LEVELS: [(&str, u8); 4] = [("INFO", 32), ("WARN", 33), ("ERROR", 31), ("DEBUG", 36)];
    const WORDS: [&str; 8] = [
        "compiling",
        "request",
        "handled",
        "in",
        "cache",
        "miss",
        "for",
        "session",
    ];
    let mut out = Vec::with_capacity(target + 4096);
    // A fixed-seed xorshift keeps the stream the same from run to run.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut n: u64 = 0;
    while out.len() < target {
        n += 1;
        let (level, colour) = LEVELS[(next() % 4) as usize];
        let _ = write!(
            out,
            "\x1b[2m2025-01-01T12:{:02}:{:02}.{:03}Z\x1b[0m \x1b[1;{colour}m{level:5}\x1b[0m \
             \x1b[38;5;{}magents::module{}\x1b[0m: ",
            n / 60 % 60,
            n % 60,
            n % 1000,
            next() % 256,
            next() % 16,
        );
        if n.is_multiple_of(7) {
            let _ = write!(
                out,
                "\x1b[38;2;{};{};{}mhighlight\x1b[0m ",
                next() % 256,
                next() % 256,
                next() % 256
            );
        }
        for _ in 0..(next() % 40) {
            out.extend_from_slice(WORDS[(next() % 8) as usize].as_bytes());
            out.push(b' ');
        }
        out.extend_from_slice(b"\r\n");
    }
    out
}
