//! Many runs that nobody watches, on one machine (issue #33), side by side
//! with one tmux server holding the same commands.
//!
//! `cargo bench --bench scale` (release build; needs tmux). For each level
//! N (by default 50, 150 and 300: `AGENTS_BENCH_LEVELS=50,150,300`), N runs
//! of `sh -c 'while :; do date; sleep 1; done'` — a line a second — are live
//! with no client attached, and the benchmark prints:
//! - the daemon's CPU and all supervisors' CPU over a steady window
//!   (`AGENTS_BENCH_SECS`, 20 s) as % of one core, and per run; beside them
//!   one tmux server holding the same N commands in N windows, nobody
//!   attached. CPU time (the daemon's `utime + stime`, its exited threads
//!   included; the others' threads' `schedstat`), not wall time;
//! - `agents ls --json` (a new process, as a user runs it; median of 5) and
//!   `tmux list-windows -a` for the same N;
//! - how fast the batch that brought the runs to N started (8 clients at
//!   once, each `agents run -d`), in runs a second; beside it how fast tmux
//!   opened the same windows from 8 clients at once (`tmux new-window`),
//!   and how many of them it refused (opened again after, one at a time);
//! - the daemon's RSS and a supervisor's PSS (`/proc/PID/smaps_rollup`);
//! - the TUI opened on them in a 120×40 PTY: until its first frame, and
//!   until the tree shows run names (median of 3);
//! - how many `run.changed` notifications one client connected to the
//!   daemon hears a second (gathered a frame long, each run once).
//!
//! Then every live run is cancelled with one `agents cancel --all --force`,
//! timed until none is live. Last, `AGENTS_BENCH_ENDED` (100 000) ended
//! runs are written into a fresh database and `runs.list` pages through
//! them as `agents ls --all` does: the time of each page.
//!
//! The engine runs with its default settings. Slopes (per run) are what the
//! large-N figures of the issue are read against.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agents::api::{ListParams, RunsListed, method};
use common::{Home, quantile, tmux};

/// A line a second, for ever.
const LINE: &str = "while :; do date; sleep 1; done";
/// Clients starting runs at once.
const CLIENTS: usize = 8;
/// Long enough for every new run to have printed and its status to settle.
const SETTLE: Duration = Duration::from_secs(3);

fn children(of: u32, parents: &HashMap<u32, u32>) -> Vec<u32> {
    parents.iter().filter(|&(_, &p)| p == of).map(|(&c, _)| c).collect()
}

fn is_supervisor(pid: u32) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| c.split(|&b| b == 0).nth(1) == Some(b"supervise"))
        .unwrap_or(false)
}

/// `Name:   1234 kB` from a `/proc` file, in kB.
fn kb(path: &str, name: &str) -> u64 {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A process's CPU time so far, in ns, its exited threads' included
/// (`utime + stime` of `/proc/PID/stat`, in clock ticks).
fn process_cpu_ns(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rfind(')')
        .map(|i| stat[i + 2..].split_whitespace().collect())
        .unwrap_or_default();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i).and_then(|f| f.parse::<u64>().ok()))
        .sum();
    ticks * 1_000_000_000 / clock_ticks()
}

fn clock_ticks() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        let out = Command::new("getconf").arg("CLK_TCK").output().expect("getconf");
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(100)
    })
}

/// How a process's CPU time is read: its live threads' exact times
/// (`/proc/PID/task/*/schedstat`, for processes whose threads stay), or
/// its own count in clock ticks, exited threads included (the daemon's
/// blocking threads come and go).
#[derive(Clone, Copy)]
enum Clock {
    Threads,
    Ticks,
}

/// The CPU of each group of processes over `window`, as % of one core.
fn cpu_percent(groups: &[(&[u32], Clock)], window: Duration) -> Vec<f64> {
    let sample = || -> Vec<u64> {
        groups
            .iter()
            .map(|(pids, clock)| {
                pids.iter()
                    .map(|&p| match clock {
                        Clock::Threads => common::threads_cpu_ns(p),
                        Clock::Ticks => process_cpu_ns(p),
                    })
                    .sum()
            })
            .collect()
    };
    let before = sample();
    let started = Instant::now();
    std::thread::sleep(window);
    let secs = started.elapsed().as_secs_f64();
    let after = sample();
    before
        .iter()
        .zip(&after)
        .map(|(b, a)| a.saturating_sub(*b) as f64 / 1e9 / secs * 100.0)
        .collect()
}

/// Wall time of a command, median of five, in ms.
fn median_ms(mut run: impl FnMut()) -> f64 {
    let mut ms: Vec<f64> = (0..5)
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    quantile(&ms, 0.5)
}

/// `agents ARGS` as a user runs it; false if it failed.
fn agents(home: &Home, args: &[&str]) -> bool {
    home.command(args).output().is_ok_and(|o| o.status.success())
}

/// Runs `each(i)` for `from..to` from `CLIENTS` threads at once; the time taken.
fn at_once(from: usize, to: usize, each: impl Fn(usize) + Sync) -> Duration {
    let next = AtomicUsize::new(from);
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..CLIENTS {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= to {
                        break;
                    }
                    each(i);
                }
            });
        }
    });
    t.elapsed()
}

fn live_ids(home: &Home) -> Vec<String> {
    let out = home.agents(&["ls", "--json"]);
    let runs: serde_json::Value = serde_json::from_str(&out).expect("ls --json");
    runs.as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect()
}

/// One level's figures, agents beside tmux.
struct Level {
    n: usize,
    daemon: f64,
    supervisors: f64,
    tmux: f64,
    /// `agents ls` (the table), and `agents ls --json`.
    ls_ms: (f64, f64),
    tmux_ls_ms: f64,
    start_rate: f64,
    tmux_rate: f64,
    rss_kb: u64,
    pss_kb: u64,
    /// The TUI's first frame, and its tree with run names, in ms.
    tui_ms: (f64, f64),
    /// `run.changed` notifications a client hears a second.
    changes: f64,
}

struct Agents {
    home: Home,
    daemon: u32,
}

impl Agents {
    fn new(dir: &Path) -> Agents {
        let home = Home::new(dir);
        // The engine's defaults, as a user runs it (not the tests' settings).
        std::fs::write(home.config.join("agents/config.toml"), "").expect("config file");
        home.agents(&["daemon", "start"]);
        let daemon = std::fs::read_to_string(home.home.join("daemon.pid"))
            .expect("daemon.pid")
            .trim()
            .parse()
            .expect("a pid");
        Agents { home, daemon }
    }

    /// Starts runs `from..to`; runs a second.
    fn grow(&self, from: usize, to: usize) -> f64 {
        let took = at_once(from, to, |i| {
            let name = format!("line{i:05}");
            assert!(
                agents(
                    &self.home,
                    &["run", "-d", "--name", &name, "cmd", "--", "sh", "-c", LINE]
                ),
                "agents run {name}"
            );
        });
        (to - from) as f64 / took.as_secs_f64()
    }

    fn supervisors(&self) -> Vec<u32> {
        children(self.daemon, &common::parents())
            .into_iter()
            .filter(|&p| is_supervisor(p))
            .collect()
    }

    fn measure(&self, n: usize, window: Duration) -> (f64, f64, (f64, f64), u64, u64) {
        let supervisors = self.supervisors();
        assert_eq!(supervisors.len(), n, "one supervisor per live run");
        std::thread::sleep(SETTLE);
        let cpu = cpu_percent(
            &[(&[self.daemon], Clock::Ticks), (&supervisors, Clock::Threads)],
            window,
        );
        let ls_ms = (
            median_ms(|| assert!(agents(&self.home, &["ls"]), "agents ls")),
            median_ms(|| assert!(agents(&self.home, &["ls", "--json"]), "agents ls --json")),
        );
        let rss = kb(&format!("/proc/{}/status", self.daemon), "VmRSS:");
        let sample: Vec<u64> = supervisors
            .iter()
            .take(20)
            .map(|p| kb(&format!("/proc/{p}/smaps_rollup"), "Pss:"))
            .collect();
        let pss = sample.iter().sum::<u64>() / sample.len().max(1) as u64;
        (cpu[0], cpu[1], ls_ms, rss, pss)
    }

    /// The TUI opened on the runs: until its first frame, and until the
    /// tree shows run names (median of 3), in ms.
    fn tui_ms(&self) -> (f64, f64) {
        let mut drawn = Vec::new();
        let mut named = Vec::new();
        for _ in 0..3 {
            let t0 = Instant::now();
            let mut tui = self.home.tui(40, 120);
            let first = tui.wait("the first frame", |t| common::shows(t, " RUNS "));
            let names = tui.wait("run names in the tree", |t| common::shows(t, " line0"));
            drawn.push(first.duration_since(t0).as_secs_f64() * 1000.0);
            named.push(names.duration_since(t0).as_secs_f64() * 1000.0);
            tui.press(b"q");
            tui.wait_exit();
        }
        drawn.sort_by(f64::total_cmp);
        named.sort_by(f64::total_cmp);
        (quantile(&drawn, 0.5), quantile(&named, 0.5))
    }

    /// `run.changed` notifications one client hears a second over `window`.
    fn changes_heard(&self, window: Duration) -> f64 {
        let paths = agents::paths::Paths::at(self.home.home.clone());
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        rt.block_on(async {
            let mut client = agents::client::Client::connect_existing(&paths, true)
                .await
                .expect("connect to the daemon");
            let mut events = client.events.take().expect("events were asked for");
            let mut heard = 0usize;
            let until = tokio::time::Instant::now() + window;
            while let Ok(Some(frame)) = tokio::time::timeout_at(until, events.recv()).await {
                if let agents::protocol::Frame::Control(bytes) = frame
                    && String::from_utf8_lossy(&bytes).contains(method::RUN_CHANGED)
                {
                    heard += 1;
                }
            }
            heard as f64 / window.as_secs_f64()
        })
    }

    /// Cancels every live run with one `agents cancel --all --force`; the
    /// time until it returned (every end recorded) and none is live.
    fn cancel_all(&self) -> (usize, Duration) {
        let n = live_ids(&self.home).len();
        let t = Instant::now();
        self.home.agents(&["cancel", "--all", "--force", "--yes"]);
        while !live_ids(&self.home).is_empty() {
            std::thread::sleep(Duration::from_millis(50));
        }
        (n, t.elapsed())
    }
}

/// tmux's side of a level.
struct TmuxLevel {
    cpu: f64,
    ls_ms: f64,
    /// Windows opened a second, from `CLIENTS` at once.
    rate: f64,
    /// `new-window`s it refused among them.
    refused: usize,
}

/// One tmux server with `n` windows of the same command, nobody attached;
/// the windows past `have` opened from `CLIENTS` at once, as the runs were.
fn tmux_level(sock: &Path, have: usize, n: usize, window: Duration) -> TmuxLevel {
    let command = format!("sh -c '{LINE}'");
    if have == 0 {
        tmux(sock, &["-f", "/dev/null", "new-session", "-d", "-s", "lines", &command]);
    }
    // `lines:`, the session's next free index; a window refused is opened
    // again after, one at a time, so the server holds the same N.
    let new_window = ["new-window", "-d", "-t", "lines:", &command];
    let refused = AtomicUsize::new(0);
    let from = have.max(1);
    let took = at_once(from, n, |_| {
        let out = Command::new("tmux").arg("-S").arg(sock).args(new_window).output();
        if !out.is_ok_and(|o| o.status.success()) {
            refused.fetch_add(1, Ordering::Relaxed);
        }
    });
    let refused = refused.into_inner();
    for _ in 0..refused {
        tmux(sock, &new_window);
    }
    let rate = (n - from - refused) as f64 / took.as_secs_f64();
    let server: u32 = tmux(sock, &["display-message", "-p", "#{pid}"])
        .parse()
        .expect("the server's pid");
    std::thread::sleep(SETTLE);
    let cpu = cpu_percent(&[(&[server], Clock::Threads)], window)[0];
    let ls_ms = median_ms(|| {
        tmux(sock, &["list-windows", "-a"]);
    });
    TmuxLevel {
        cpu,
        ls_ms,
        rate,
        refused,
    }
}

/// `runs.list` paged through `n` ended runs, as `agents ls --all --json` does:
/// each page's time, in ms.
fn paging(dir: &Path, n: usize) -> Vec<f64> {
    let home = Home::new(dir);
    home.agents(&["daemon", "start"]);
    home.agents(&["daemon", "stop"]);
    common::ended::fill(&home, n);
    home.agents(&["daemon", "start"]);
    let paths = agents::paths::Paths::at(home.home.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let client = agents::client::Client::connect_existing(&paths, false)
            .await
            .expect("connect to the daemon");
        let mut pages = Vec::new();
        let mut before = None;
        loop {
            let t = Instant::now();
            let listed = client
                .call::<method::RunsList>(ListParams {
                    all: true,
                    limit: Some(ListParams::MAX_LIMIT),
                    before: before.clone(),
                    paged: true,
                    ..Default::default()
                })
                .await
                .expect("runs.list");
            pages.push(t.elapsed().as_secs_f64() * 1000.0);
            match listed {
                RunsListed::Page(page) if page.next.is_some() => before = page.next,
                _ => break,
            }
        }
        pages
    })
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

fn report(levels: &[Level]) {
    println!();
    println!(
        "{:>6} {:>9} {:>9} {:>9} {:>8} {:>13} {:>8} {:>9} {:>9} {:>8} {:>8} {:>13} {:>7}",
        "runs",
        "daemon %",
        "sups %",
        "tmux %",
        "ratio",
        "ls / json ms",
        "tmux ls",
        "starts/s",
        "tmux w/s",
        "RSS MB",
        "PSS MB",
        "TUI ms",
        "chg/s"
    );
    for l in levels {
        println!(
            "{:>6} {:>9.2} {:>9.2} {:>9.2} {:>7.2}× {:>6.1}/{:<6.1} {:>8.1} {:>9.0} {:>9.0} {:>8.1} {:>8.2} {:>6.0}/{:<6.0} {:>7.1}",
            l.n,
            l.daemon,
            l.supervisors,
            l.tmux,
            (l.daemon + l.supervisors) / l.tmux,
            l.ls_ms.0,
            l.ls_ms.1,
            l.tmux_ls_ms,
            l.start_rate,
            l.tmux_rate,
            l.rss_kb as f64 / 1024.0,
            l.pss_kb as f64 / 1024.0,
            l.tui_ms.0,
            l.tui_ms.1,
            l.changes,
        );
    }
    if let [first, .., last] = levels {
        let runs = (last.n - first.n) as f64;
        let slope = |a: f64, b: f64| (b - a) / runs;
        println!(
            "per run (slope {}→{}): daemon {:.4} %, supervisors {:.4} %, tmux {:.4} % of a core; \
             ls {:.4} ms, ls --json {:.4} ms; daemon RSS {:.1} kB",
            first.n,
            last.n,
            slope(first.daemon, last.daemon),
            slope(first.supervisors, last.supervisors),
            slope(first.tmux, last.tmux),
            slope(first.ls_ms.0, last.ls_ms.0),
            slope(first.ls_ms.1, last.ls_ms.1),
            slope(first.rss_kb as f64, last.rss_kb as f64),
        );
    }
}

fn main() {
    let window = Duration::from_secs(env_or("AGENTS_BENCH_SECS", 20));
    let levels: Vec<usize> = std::env::var("AGENTS_BENCH_LEVELS")
        .unwrap_or_else(|_| "50,150,300".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let ended: usize = env_or("AGENTS_BENCH_ENDED", 100_000);
    let dir = tempfile::Builder::new().prefix("sc").tempdir().expect("temp dir");
    println!(
        "{} s windows; levels {levels:?}; each run `sh -c '{LINE}'`, nobody watching",
        window.as_secs()
    );
    println!("load average: {}", common::load_average());
    let ours = Agents::new(&dir.path().join("agents"));
    let sock = dir.path().join("tmux.sock");
    let mut figures = Vec::new();
    let mut have = 0;
    for &n in &levels {
        let start_rate = ours.grow(have, n);
        let (daemon, supervisors, ls_ms, rss_kb, pss_kb) = ours.measure(n, window);
        let tui_ms = ours.tui_ms();
        let changes = ours.changes_heard(Duration::from_secs(5));
        let theirs = tmux_level(&sock, have, n, window);
        println!(
            "  {n} runs: daemon {daemon:.2} %, supervisors {supervisors:.2} %, tmux {:.2} %; ls {:.1} ms, --json {:.1} ms; \
             started {start_rate:.0}/s, tmux opened {:.0}/s and refused {}",
            theirs.cpu, ls_ms.0, ls_ms.1, theirs.rate, theirs.refused
        );
        figures.push(Level {
            n,
            daemon,
            supervisors,
            tmux: theirs.cpu,
            ls_ms,
            tmux_ls_ms: theirs.ls_ms,
            start_rate,
            tmux_rate: theirs.rate,
            rss_kb,
            pss_kb,
            tui_ms,
            changes,
        });
        have = n;
    }
    tmux(&sock, &["kill-server"]);
    let (cancelled, took) = ours.cancel_all();
    println!("load average: {}", common::load_average());
    report(&figures);
    println!(
        "`agents cancel --all --force` of {cancelled} runs: {:.1} s until none is live",
        took.as_secs_f64()
    );
    drop(ours);
    if ended > 0 {
        let mut pages = paging(&dir.path().join("ended"), ended);
        let count = pages.len();
        pages.sort_by(f64::total_cmp);
        println!(
            "ls --all through {ended} ended runs: {count} pages, median {:.1} ms, max {:.1} ms a page",
            quantile(&pages, 0.5),
            pages[count - 1]
        );
    }
}
