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
//! Both sides are set up at once and take turns (`AGENTS_BENCH_BLOCKS`, 10):
//! a turn lets its side's flood go on, types 30 keys untimed while the
//! flood gets going, then its share of the timed ones, and stops its flood
//! again (`SIGSTOP`), so the side not typing costs nothing; the turns
//! alternate which side goes first. Each side so meets whatever else the
//! machine does over the same half minute: typed one side after the other
//! (`AGENTS_BENCH_BLOCKS=1`), one side had the first ten seconds and the
//! other the next, and one build's p99 ratio read from 0.71× to 1.08× in
//! eight runs.
//!
//! Keys are paced 3–15 ms apart, irregularly; every 40 characters Ctrl-U
//! erases the line, unmeasured. `AGENTS_BENCH_KEYS` changes the number of
//! keys a side (2000: about twenty seconds of typing, so the p99 is the
//! twentieth slowest key, not the second of a two-second burst; at 1000 one
//! side's unusually quiet tail moved the ratio by a fifth). Resolution: one
//! `capture-pane` round trip (well under a millisecond here) and the pause
//! between looks (`AGENTS_BENCH_POLL_US`, 200 µs), the same on both sides.
//! `AGENTS_BENCH_STAMPS=FILE` writes each key's time, to line up with a
//! scheduler trace (docs/benchmarks.md); `AGENTS_BENCH_BIN` measures another
//! build of `agents` (beside tmux, in the same run).

mod common;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use common::{Home, bin, quantile, tmux};

const ROWS: u16 = 50;
const COLS: u16 = 200;
const LINE: usize = 40;
const WARMUP: usize = 30;
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

/// One side: an outer terminal with its inner one (the TUI, or `tmux
/// attach`) split beside a flood, where its focused pane's first cell is,
/// and its keys so far. Its flood is stopped while the other side types.
struct Side {
    outer: Outer,
    /// The tmux servers it started, ended with it.
    servers: Vec<PathBuf>,
    origin: (usize, usize),
    /// The flood's process, checked to be the flood when found.
    flood: i32,
    col: usize,
    typed: usize,
    first: Option<Instant>,
    echoes: Vec<Echo>,
}

impl Side {
    fn new(outer: Outer, servers: Vec<PathBuf>, origin: (usize, usize), flood: i32) -> Side {
        Side {
            outer,
            servers,
            origin,
            flood,
            col: 0,
            typed: 0,
            first: None,
            echoes: Vec::new(),
        }
    }

    /// Lets its flood go on (`true`) or stops it, and waits until it has.
    fn flood(&self, on: bool) {
        let signal = if on { Signal::SIGCONT } else { Signal::SIGSTOP };
        kill(Pid::from_raw(self.flood), signal).expect("signal the flood");
        let until = Instant::now() + common::PATIENCE;
        while stopped(self.flood) == on {
            assert!(
                Instant::now() < until,
                "the flood did not {}",
                if on { "go on" } else { "stop" }
            );
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Types `warmup` keys, then `keys` timed ones, each until the outer
    /// screen shows it.
    fn type_keys(&mut self, warmup: usize, keys: usize, poll_gap: Duration) {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let blank = |line: &[char], at: usize| line.get(at).is_none_or(|c| *c == ' ');
        let (row, left) = self.origin;
        for k in 0..warmup + keys {
            if self.col == LINE {
                self.outer.keys(CTRL_U);
                let until = Instant::now() + common::PATIENCE;
                while !(left..left + LINE).all(|c| blank(&self.outer.row(row), c)) {
                    assert!(Instant::now() < until, "the line was not erased");
                }
                self.col = 0;
            }
            let n = self.typed;
            self.typed += 1;
            std::thread::sleep(Duration::from_millis(3 + (n as u64 * 7) % 13));
            let ch = ALPHABET[n % ALPHABET.len()] as char;
            assert!(
                blank(&self.outer.row(row), left + self.col),
                "the pane is not blank where the key should land"
            );
            let (sent, sent_monotonic) = (Instant::now(), monotonic());
            self.outer.keys(&format!("-l {ch}"));
            let until = sent + common::PATIENCE;
            while self.outer.row(row).get(left + self.col) != Some(&ch) {
                assert!(Instant::now() < until, "the typed character never showed");
                std::thread::sleep(poll_gap);
            }
            if k >= warmup {
                let first = *self.first.get_or_insert(sent);
                self.echoes.push(Echo {
                    ms: sent.elapsed().as_secs_f64() * 1000.0,
                    col: self.col,
                    at: sent.duration_since(first).as_secs_f64() * 1000.0,
                    monotonic: sent_monotonic,
                });
            }
            self.col += 1;
        }
    }
}

impl Drop for Side {
    /// Its flood let go on and its servers ended, also after a panic: a
    /// flood left stopped would outlive them.
    fn drop(&mut self) {
        let _ = kill(Pid::from_raw(self.flood), Signal::SIGCONT);
        for server in &self.servers {
            let _ = Command::new("tmux").arg("-S").arg(server).arg("kill-server").output();
        }
    }
}

/// Whether process `pid` is stopped (`/proc/PID/stat`'s state `T`).
fn stopped(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the command's closing parenthesis.
    stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('T'))
}

/// `pid`, once its command line shows it is the demo agent's flood (no
/// other process is ever signalled).
fn flood_process(pid: i32) -> i32 {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(
        cmdline.contains("demo-agent --flood"),
        "pid {pid} is not the flood: {cmdline}"
    );
    pid
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

/// The TUI in its outer terminal, a `cat` run focused in INSERT beside the
/// demo agent's flood; `home` keeps its daemon.
fn agents_side(dir: &Path) -> (Home, Side) {
    let home = Home::new(dir);
    home.agents(&["daemon", "start"]);
    home.agents(&["run", "-d", "--name", "echo", "cmd", "--", "cat"]);
    home.agents(&["run", "-d", "--name", "flood", "demo", "--", "--flood", FLOOD_BYTES]);
    let shown: serde_json::Value =
        serde_json::from_str(&home.agents(&["show", "flood", "--json"])).expect("show --json");
    let pid = shown["pid"].as_i64().expect("the flood's pid") as i32;
    let sock = dir.join("outer.sock");
    let env = [
        ("AGENTS_HOME", home.home.as_path()),
        ("XDG_CONFIG_HOME", home.config.as_path()),
    ];
    let mut outer = outer_terminal(&sock, bin(), &env);
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
    (home, Side::new(outer, vec![sock], origin, flood_process(pid)))
}

/// `tmux attach` in its outer terminal, to a session split the same way.
fn tmux_side(dir: &Path) -> Side {
    let inner = dir.join("inner.sock");
    common::cat_beside_flood(&inner, (ROWS, COLS), FLOOD_BYTES);
    let sock = dir.join("outer.sock");
    let attach = format!("tmux -S {} attach -t lat", inner.display());
    let mut outer = outer_terminal(&sock, &attach, &[]);
    outer.wait_for("the flood pane", "INFO");
    // The flood shows, so it runs: the pane's shell's child (tmux continues
    // a pane's own process when it stops).
    let shell = tmux(&inner, &["display", "-p", "-t", "lat:0.1", "#{pane_pid}"]);
    let children =
        std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).expect("the shell's children");
    let pid = children.split_whitespace().next().expect("the flood").to_string();
    Side::new(
        outer,
        vec![sock, inner],
        (0, 0),
        flood_process(pid.parse().expect("a pid")),
    )
}

/// Types `keys` keys on each side, in `blocks` turns that alternate which
/// side goes first; only the side typing floods (the other's is stopped),
/// and each turn begins with `WARMUP` keys untimed while its flood gets
/// going again. Both sides so share whatever else the machine does in
/// those seconds, instead of one having the first half and the other the
/// second.
fn take_turns(sides: &mut [&mut Side; 2], keys: usize, blocks: usize) {
    let gap = poll_gap();
    for side in sides.iter() {
        side.flood(false);
    }
    for block in 0..blocks {
        let each = keys / blocks + usize::from(block < keys % blocks);
        for turn in 0..2 {
            let side = &mut sides[(block + turn) % 2];
            side.flood(true);
            side.type_keys(WARMUP, each, gap);
            side.flood(false);
        }
    }
    for side in sides.iter() {
        side.flood(true);
    }
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
        .unwrap_or(2000);
    let blocks: usize = std::env::var("AGENTS_BENCH_BLOCKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10)
        .clamp(1, keys);
    let dir = tempfile::Builder::new().prefix("eo").tempdir().expect("temp dir");
    println!(
        "key → echo read from an outer terminal's screen (tmux), {keys} keys a side in {blocks} turns, beside a flooding pane"
    );
    println!("load average: {}", common::load_average());
    let (home, mut ours) = agents_side(&dir.path().join("agents"));
    let mut theirs = tmux_side(dir.path());
    take_turns(&mut [&mut ours, &mut theirs], keys, blocks);
    let (ours_keys, theirs_keys) = (std::mem::take(&mut ours.echoes), std::mem::take(&mut theirs.echoes));
    drop((ours, theirs, home));
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
