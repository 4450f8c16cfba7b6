//! Key → echo beside a flooding pane, measured from outside: a real
//! terminal around each side, keys sent to that terminal and the echo read
//! back from its screen (issue #33), as a user sees it. `tui_latency`
//! stamps the TUI's output as it is read, before any terminal parses it;
//! here the outer terminal must parse every byte before the echo (the
//! flood's frames included), as the user's terminal must.
//!
//! `cargo bench --bench echo_outside` (release build; needs tmux). The
//! outer terminal is a tmux 3.3a server (its own socket) with one 200×50
//! window, nobody attached, driven over one control-mode connection
//! (`tmux -C`, its pane output left out): `send-keys -l` types a
//! character, `capture-pane` of the one row reads its screen, again and
//! again until the character shows where it belongs. Inside it:
//! - agents: the TUI, split layout (`2`), a `cat` run focused in INSERT
//!   beside the demo agent's flood of coloured log lines;
//! - tmux: `tmux attach` to a session of its own split in the same two.
//!
//! Keys are paced 3–15 ms apart, irregularly; every 40 characters Ctrl-U
//! erases the line, unmeasured. `AGENTS_BENCH_KEYS` changes the number of
//! keys (1000: about ten seconds of typing, so the p99 is the tenth slowest
//! key, not the second of a two-second burst). Resolution: one
//! `capture-pane` round trip (well under a millisecond here) and the pause
//! between looks (`AGENTS_BENCH_POLL_US`, 200 µs), the same on both sides.
//! `AGENTS_BENCH_STAMPS=FILE` writes each key's time, to line up with a
//! scheduler trace (docs/benchmarks.md).

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use common::{BIN, Home, quantile, tmux};

const ROWS: u16 = 50;
const COLS: u16 = 200;
const LINE: usize = 40;
const WARMUP: usize = 20;
const FLOOD_BYTES: &str = "50000000000";
const CTRL_U: &str = "C-u";

/// One control-mode connection to the outer tmux.
struct Outer {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Outer {
    fn attach(sock: &Path) -> Outer {
        let mut child = Command::new("tmux")
            .arg("-S")
            .arg(sock)
            .args(["-C", "attach", "-f", "no-output,ignore-size", "-t", "outer"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tmux -C");
        let input = child.stdin.take().expect("its stdin");
        let output = BufReader::new(child.stdout.take().expect("its stdout"));
        let mut outer = Outer { child, input, output };
        // The attach's own answer.
        outer.answer();
        outer
    }

    /// Sends one command; its answer's lines.
    fn ask(&mut self, command: &str) -> Vec<String> {
        writeln!(self.input, "{command}").expect("a command to tmux");
        self.input.flush().expect("a command to tmux");
        self.answer()
    }

    /// The lines of the next `%begin` … `%end` (or `%error`) block;
    /// notifications between are passed over.
    fn answer(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        let mut inside = false;
        loop {
            let mut line = String::new();
            if self.output.read_line(&mut line).expect("tmux's answer") == 0 {
                panic!("tmux closed the control connection");
            }
            let line = line.trim_end_matches(['\r', '\n']).to_string();
            if line.starts_with("%begin") {
                inside = true;
            } else if line.starts_with("%end") || line.starts_with("%error") {
                if inside {
                    return lines;
                }
            } else if inside {
                lines.push(line);
            }
        }
    }

    /// The outer screen's row `row`, as characters.
    fn row(&mut self, row: usize) -> Vec<char> {
        let answer = self.ask(&format!("capture-pane -p -t outer -S {row} -E {row}"));
        answer.first().map(|l| l.chars().collect()).unwrap_or_default()
    }

    fn screen(&mut self) -> Vec<String> {
        self.ask("capture-pane -p -t outer")
    }

    /// Waits until the screen shows `text`.
    fn wait_for(&mut self, what: &str, text: &str) {
        let until = Instant::now() + common::PATIENCE;
        while !self.screen().iter().any(|l| l.contains(text)) {
            assert!(Instant::now() < until, "waited too long for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn keys(&mut self, keys: &str) {
        self.ask(&format!("send-keys -t outer {keys}"));
    }
}

impl Drop for Outer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One key's echo: its latency in ms, its column in the line, when it was
/// sent, in ms from the first measured key, and on the system's monotonic
/// clock (what `perf record -k CLOCK_MONOTONIC` stamps its events with).
struct Echo {
    ms: f64,
    col: usize,
    at: f64,
    monotonic: Duration,
}

fn monotonic() -> Duration {
    let now = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC");
    Duration::from(now)
}

/// Types `keys` characters where the pane's first cell is `(row, left)`;
/// each one's latency, until the outer screen shows it.
fn type_and_time(outer: &mut Outer, (row, left): (usize, usize), keys: usize, poll_gap: Duration) -> Vec<Echo> {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let blank = |line: &[char], at: usize| line.get(at).is_none_or(|c| *c == ' ');
    let mut col = 0;
    let mut latencies = Vec::with_capacity(keys);
    let mut first = None;
    for k in 0..keys + WARMUP {
        if col == LINE {
            outer.keys(CTRL_U);
            let until = Instant::now() + common::PATIENCE;
            while !(left..left + LINE).all(|c| blank(&outer.row(row), c)) {
                assert!(Instant::now() < until, "the line was not erased");
            }
            col = 0;
        }
        std::thread::sleep(Duration::from_millis(3 + (k as u64 * 7) % 13));
        let ch = ALPHABET[k % ALPHABET.len()] as char;
        assert!(
            blank(&outer.row(row), left + col),
            "the pane is not blank where the key should land"
        );
        let (sent, sent_monotonic) = (Instant::now(), monotonic());
        outer.keys(&format!("-l {ch}"));
        let until = sent + common::PATIENCE;
        while outer.row(row).get(left + col) != Some(&ch) {
            assert!(Instant::now() < until, "the typed character never showed");
            std::thread::sleep(poll_gap);
        }
        if k >= WARMUP {
            let first = *first.get_or_insert(sent);
            latencies.push(Echo {
                ms: sent.elapsed().as_secs_f64() * 1000.0,
                col,
                at: sent.duration_since(first).as_secs_f64() * 1000.0,
                monotonic: sent_monotonic,
            });
        }
        col += 1;
    }
    latencies
}

/// The pause between two looks at the outer screen while an echo is
/// awaited (`AGENTS_BENCH_POLL_US`, default 200 µs; 0 looks again at once).
/// Looking again at once kept the bench and the outer tmux waking each
/// other every 40 µs, a core between them: on two cores, the kernel's work
/// that hands a key to the terminal inside then waited behind them for up
/// to 5 ms (a `perf` trace, docs/benchmarks.md), on either side.
fn poll_gap() -> Duration {
    let us = std::env::var("AGENTS_BENCH_POLL_US")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    Duration::from_micros(us)
}

/// An outer tmux server whose one window runs `command` (with `env`).
fn outer_terminal(sock: &Path, command: &str, env: &[(&str, &Path)]) -> Outer {
    let (cols, rows) = (COLS.to_string(), ROWS.to_string());
    let mut args = vec![
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "outer",
        "-x",
        &cols,
        "-y",
        &rows,
    ];
    let pairs: Vec<String> = env.iter().map(|(k, v)| format!("{k}={}", v.display())).collect();
    for pair in &pairs {
        args.extend(["-e", pair.as_str()]);
    }
    args.push(command);
    tmux(sock, &args);
    tmux(sock, &["set", "-g", "window-size", "manual"]);
    Outer::attach(sock)
}

fn agents_side(dir: &Path, keys: usize) -> Vec<Echo> {
    let home = Home::new(dir);
    home.agents(&["daemon", "start"]);
    home.agents(&["run", "-d", "--name", "echo", "cmd", "--", "cat"]);
    home.agents(&["run", "-d", "--name", "flood", "demo", "--", "--flood", FLOOD_BYTES]);
    let sock = dir.join("outer.sock");
    let env = [
        ("AGENTS_HOME", home.home.as_path()),
        ("XDG_CONFIG_HOME", home.config.as_path()),
    ];
    let mut outer = outer_terminal(&sock, BIN, &env);
    outer.wait_for("the runs", " flood ");
    outer.keys("2");
    outer.wait_for("the flood pane", "demo · flood");
    outer.keys("Enter");
    outer.wait_for("INSERT mode", " INSERT ");
    // The focused pane's thick border's corner: its first cell is inside.
    let origin = outer
        .screen()
        .iter()
        .enumerate()
        .find_map(|(r, l)| l.chars().position(|c| c == '┏').map(|c| (r + 1, c + 1)))
        .expect("the focused pane");
    let latencies = type_and_time(&mut outer, origin, keys, poll_gap());
    drop(outer);
    tmux(&sock, &["kill-server"]);
    latencies
}

fn tmux_side(dir: &Path, keys: usize) -> Vec<Echo> {
    let inner = dir.join("inner.sock");
    common::cat_beside_flood(&inner, (ROWS, COLS), FLOOD_BYTES);
    let sock = dir.join("outer.sock");
    let attach = format!("tmux -S {} attach -t lat", inner.display());
    let mut outer = outer_terminal(&sock, &attach, &[]);
    outer.wait_for("the flood pane", "INFO");
    let latencies = type_and_time(&mut outer, (0, 0), keys, poll_gap());
    drop(outer);
    tmux(&sock, &["kill-server"]);
    tmux(&inner, &["kill-server"]);
    latencies
}

fn figures(echoes: &[Echo]) -> (f64, f64, f64) {
    let mut ms: Vec<f64> = echoes.iter().map(|e| e.ms).collect();
    ms.sort_by(f64::total_cmp);
    (quantile(&ms, 0.5), quantile(&ms, 0.99), ms[ms.len() - 1])
}

/// The slowest keys, where they were: the tail's story (a key at column 0
/// follows an erased line; keys a second apart, a clock).
fn slowest(echoes: &[Echo]) -> String {
    let mut by_ms: Vec<&Echo> = echoes.iter().collect();
    by_ms.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    by_ms
        .iter()
        .take(4)
        .map(|e| format!("{:.2} ms (col {}, at {:.0} ms)", e.ms, e.col, e.at))
        .collect::<Vec<_>>()
        .join(", ")
}

/// With `AGENTS_BENCH_STAMPS=FILE`: a line per key, its side, when it was
/// sent (monotonic seconds) and its latency, to line up with a `perf`
/// trace of the scheduler taken meanwhile (docs/benchmarks.md).
fn write_stamps(sides: &[(&str, &[Echo])]) {
    let Some(path) = std::env::var_os("AGENTS_BENCH_STAMPS") else {
        return;
    };
    let mut lines = String::new();
    for (side, echoes) in sides {
        for e in *echoes {
            lines.push_str(&format!("{side} {:.6} {:.3}\n", e.monotonic.as_secs_f64(), e.ms));
        }
    }
    std::fs::write(&path, lines).expect("write the stamps");
}

fn main() {
    let keys: usize = std::env::var("AGENTS_BENCH_KEYS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let dir = tempfile::Builder::new().prefix("eo").tempdir().expect("temp dir");
    println!("key → echo read from an outer terminal's screen (tmux), {keys} keys, beside a flooding pane");
    println!("load average: {}", common::load_average());
    let ours_keys = agents_side(&dir.path().join("agents"), keys);
    let theirs_keys = tmux_side(dir.path(), keys);
    write_stamps(&[("agents", &ours_keys), ("tmux", &theirs_keys)]);
    let (ours, theirs) = (figures(&ours_keys), figures(&theirs_keys));
    println!("load average: {}", common::load_average());
    for (name, (p50, p99, max), echoes) in [("agents TUI", ours, &ours_keys), ("tmux 3.3a", theirs, &theirs_keys)] {
        println!("{name:>12}: p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms");
        println!("{:>12}  slowest: {}", "", slowest(echoes));
    }
    println!(
        "{:>12}  agents / tmux: p50 {:.2}×, p99 {:.2}×",
        "",
        ours.0 / theirs.0,
        ours.1 / theirs.1
    );
}
