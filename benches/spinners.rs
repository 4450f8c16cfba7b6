//! CPU with 50 runs each redrawing a spinner at 10 Hz (docs/design.md §10: daemon +
//! TUI no worse than tmux side by side; no per-run polling, no per-pane
//! process scans).
//!
//! `cargo bench --bench spinners` (release build; needs tmux and python3).
//! Each side gets 50 spinners (a tiny Python loop printing `\r⠋ working… Ns`
//! on a 100 ms deadline, so its own cost stays small and steady) and a
//! 200×50 terminal (a PTY we own, read through our emulator) showing four of
//! them:
//! - agents: 50 `cmd` runs, the TUI in the grid layout (`3`: the tree and
//!   four panes);
//! - tmux 3.3a: one session, a first window tiled in four panes, 46 more
//!   windows, `tmux attach` in the PTY showing the first window. (The tmux
//!   server writes to the client's terminal itself; the client sleeps.)
//!
//! After a warm-up, CPU time is read over a steady window (by default 10 s):
//! the sum of every thread's time on a CPU (`/proc/PID/task/*/schedstat`,
//! nanoseconds) plus reaped children's (`cutime + cstime`), for each process
//! group, as % of one core. CPU time, not wall time: the machine may be busy
//! with other work. The spinners are measured too and reported apart.
//!
//! `AGENTS_BENCH_SECS` changes the window; `AGENTS_BENCH_RUNS` the number of
//! spinners (50). The engine runs with its default settings.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Home, Pty, shows, tmux};

const ROWS: u16 = 50;
const COLS: u16 = 200;
/// Long enough for every spinner to be drawn and every run's status to
/// settle before the window opens.
const WARMUP: Duration = Duration::from_secs(3);

/// A spinner redrawing its line every 100 ms (deadline-paced, so it never
/// drifts), with the seconds elapsed, like an agent's "working" line.
const SPINNER: &str = r#"
import sys, time
frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
out = sys.stdout
tick = time.monotonic()
i = 0
while True:
    out.write("\r%s working… %ds " % (frames[i % len(frames)], i // 10))
    out.flush()
    i += 1
    tick += 0.1
    time.sleep(max(0.0, tick - time.monotonic()))
"#;

/// The Python interpreter itself, not a version manager's shim script.
fn python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 is needed for the spinners");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Fields of `/proc/PID/stat` after the command name: `[0]` is the state,
/// `[1]` the ppid, `[13]`/`[14]` cutime/cstime.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 2..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

fn descendants(root: u32, parents: &HashMap<u32, u32>) -> Vec<u32> {
    let mut found = vec![];
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (&child, &parent) in parents {
            if parent == p {
                found.push(child);
                frontier.push(child);
            }
        }
    }
    found
}

fn is_supervisor(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| c.split(|&b| b == 0).nth(1) == Some(b"supervise"))
        .unwrap_or(false)
}

fn clock_ticks() -> u64 {
    let out = Command::new("getconf").arg("CLK_TCK").output().expect("getconf");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(100)
}

/// CPU time a process has used so far, in ns: its threads' time on a CPU
/// (exact, unlike the tick-rounded `utime`) and its reaped children's.
fn cpu_ns(pid: u32, tick_ns: u64) -> u64 {
    let mut ns = common::threads_cpu_ns(pid);
    if let Some(f) = stat_fields(pid) {
        let children: u64 = f[13].parse::<u64>().unwrap_or(0) + f[14].parse::<u64>().unwrap_or(0);
        ns += children * tick_ns;
    }
    ns
}

/// Named groups of processes whose CPU is reported together.
struct Groups(Vec<(&'static str, Vec<u32>)>);

impl Groups {
    fn sample(&self, tick_ns: u64) -> Vec<HashMap<u32, u64>> {
        self.0
            .iter()
            .map(|(_, pids)| pids.iter().map(|&p| (p, cpu_ns(p, tick_ns))).collect())
            .collect()
    }

    /// Each group's CPU between `before` and now, as % of one core over `secs`.
    fn percent(&self, before: &[HashMap<u32, u64>], secs: f64, tick_ns: u64) -> Vec<(&'static str, f64)> {
        let after = self.sample(tick_ns);
        self.0
            .iter()
            .zip(before.iter().zip(&after))
            .map(|((name, _), (b, a))| {
                let ns: u64 = a
                    .iter()
                    .map(|(p, &t)| t.saturating_sub(b.get(p).copied().unwrap_or(0)))
                    .sum();
                (*name, ns as f64 / 1e9 / secs * 100.0)
            })
            .collect()
    }
}

/// Runs the steady window; returns each group's CPU in % of a core.
fn measure(groups: &Groups, window: Duration, tick_ns: u64, terminal: &mut Pty) -> Vec<(&'static str, f64)> {
    // Keep reading the terminal as a real one would, so neither side is
    // throttled by a full PTY.
    let settle = Instant::now() + WARMUP;
    while terminal.next(settle).is_some() {}
    let before = groups.sample(tick_ns);
    let started = Instant::now();
    let bytes = terminal.bytes;
    let end = started + window;
    while Instant::now() < end {
        terminal.next(end);
    }
    let secs = started.elapsed().as_secs_f64();
    let figures = groups.percent(&before, secs, tick_ns);
    println!(
        "  ({:.1} KB/s to the terminal, {} processes)",
        (terminal.bytes - bytes) as f64 / secs / 1e3,
        groups.0.iter().map(|(_, p)| p.len()).sum::<usize>()
    );
    figures
}

fn agents_side(dir: &Path, runs: usize, window: Duration, tick_ns: u64) -> Vec<(&'static str, f64)> {
    let home = Home::new(dir);
    // The engine as a user runs it: the tests' short quiet window (300 ms)
    // also shortens the pace at which the daemon hears the offsets of runs
    // nobody watches (to half of it, 150 ms).
    // `AGENTS_BENCH_TEST_CONFIG=1` keeps the tests' settings.
    if std::env::var_os("AGENTS_BENCH_TEST_CONFIG").is_none() {
        std::fs::write(home.config.join("agents/config.toml"), "").expect("config file");
    }
    home.agents(&["daemon", "start"]);
    let python = python();
    for i in 0..runs {
        let name = format!("spin{i:02}");
        home.agents(&["run", "-d", "--name", &name, "cmd", "--", &python, "-c", SPINNER]);
    }
    let mut tui = home.tui(ROWS, COLS);
    tui.wait("the runs", |t| shows(t, " spin00 "));
    tui.press(b"3");
    tui.wait("four spinning panes", |t| spinners_shown(t) >= 4);
    let daemon: u32 = std::fs::read_to_string(home.home.join("daemon.pid"))
        .expect("daemon.pid")
        .trim()
        .parse()
        .expect("a pid");
    let tree = common::parents();
    let supervisors: Vec<u32> = descendants(daemon, &tree)
        .into_iter()
        .filter(|&p| is_supervisor(p))
        .collect();
    assert_eq!(supervisors.len(), runs, "one supervisor per run");
    let spinners: Vec<u32> = supervisors.iter().flat_map(|&s| descendants(s, &tree)).collect();
    let groups = Groups(vec![
        ("daemon", vec![daemon]),
        ("supervisors", supervisors),
        (
            "TUI",
            std::iter::once(tui.pid())
                .chain(descendants(tui.pid(), &tree))
                .collect(),
        ),
        ("spinners", spinners),
    ]);
    println!("agents: {runs} runs, TUI grid of four");
    let figures = measure(&groups, window, tick_ns, &mut tui);
    tui.press(b"q");
    tui.wait_exit();
    figures
}

fn spinners_shown(term: &agents::term::Terminal) -> usize {
    term.visible_lines()
        .iter()
        .map(|l| l.matches(" working… ").count())
        .sum()
}

fn tmux_side(dir: &Path, runs: usize, window: Duration, tick_ns: u64) -> Vec<(&'static str, f64)> {
    let sock = dir.join("tmux.sock");
    let python = python();
    // tmux runs a pane's command through the shell; quote the script once.
    let spinner = format!("exec {python} -c '{SPINNER}'");
    let (cols, rows) = (COLS.to_string(), ROWS.to_string());
    tmux(
        &sock,
        &[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "spin",
            "-x",
            &cols,
            "-y",
            &rows,
            &spinner,
        ],
    );
    for _ in 1..4.min(runs) {
        tmux(&sock, &["split-window", "-t", "spin:0", &spinner]);
        tmux(&sock, &["select-layout", "-t", "spin:0", "tiled"]);
    }
    for _ in 4..runs {
        tmux(&sock, &["new-window", "-d", "-t", "spin", &spinner]);
    }
    let server: u32 = tmux(&sock, &["display-message", "-p", "#{pid}"])
        .parse()
        .expect("the server's pid");
    let sock_s = sock.to_str().expect("a UTF-8 path");
    let mut client = Pty::spawn("tmux", &["-S", sock_s, "attach", "-t", "spin:0"], &[], ROWS, COLS);
    client.wait("four spinning panes", |t| spinners_shown(t) >= 4);
    let tree = common::parents();
    let panes = descendants(server, &tree);
    assert_eq!(panes.len(), runs, "one spinner per pane");
    let groups = Groups(vec![
        ("server", vec![server]),
        ("client", vec![client.pid()]),
        ("spinners", panes),
    ]);
    println!("tmux: {runs} panes, a window of four attached");
    let figures = measure(&groups, window, tick_ns, &mut client);
    tmux(&sock, &["kill-server"]);
    client.wait_exit();
    figures
}

fn total(figures: &[(&str, f64)]) -> f64 {
    figures.iter().filter(|(n, _)| *n != "spinners").map(|(_, p)| p).sum()
}

fn main() {
    let secs: u64 = std::env::var("AGENTS_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let runs: usize = std::env::var("AGENTS_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let window = Duration::from_secs(secs);
    let tick_ns = 1_000_000_000 / clock_ticks();
    let dir = tempfile::Builder::new().prefix("as").tempdir().expect("temp dir");
    println!("CPU over {secs} s, {runs} spinners at 10 Hz, four of them on a {COLS}×{ROWS} terminal");
    println!("load average: {}", common::load_average());
    let ours = agents_side(&dir.path().join("agents"), runs, window, tick_ns);
    let theirs = tmux_side(dir.path(), runs, window, tick_ns);
    println!("load average: {}", common::load_average());
    println!("{:>24}  % of one core", "");
    for (side, figures) in [("agents", &ours), ("tmux 3.3a", &theirs)] {
        for (name, pct) in figures.iter() {
            println!("{:>24}  {pct:6.3}", format!("{side} {name}"));
        }
        println!("{:>24}  {:6.3}", format!("{side} total (no spinners)"), total(figures));
    }
    let ratio = total(&ours) / total(&theirs);
    println!("{:>24}  {ratio:.2}×", "agents / tmux");
    println!(
        "{:>24}  budget no worse than tmux: {}",
        "",
        if ratio <= 1.0 { "ok" } else { "OVER" }
    );
}
