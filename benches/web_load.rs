//! Fifty browser tabs watching a flooding run (issue #36): the flood's rate
//! and the TUI's key → echo beside it, with no web clients, with fifty,
//! and with none again (the spread of the two rounds without is the noise
//! the round with them is read against).
//!
//! `cargo bench --bench web_load` (release build). One daemon, a 200×50
//! TUI showing two panes side by side — `cat`, focused in INSERT, and the
//! demo agent flooding coloured log lines — as `tui_latency` has it. For
//! the middle round `agents web` serves, and fifty WebSocket clients (what
//! a tab opens) watch the flooding run's screen (`/api/runs/flood/screen`),
//! each reading every message it is sent. The tabs stand for browsers on
//! other machines: they run in a process and session of their own at the
//! least CPU weight, and their CPU is printed beside the rest.
//!
//! `AGENTS_BENCH_KEYS` changes the number of keys a round types (300);
//! `AGENTS_BENCH_TABS` the number of tabs (50).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::typing::{Figures, figures, focused_pane_origin, parent_of, shown_u32, type_and_time};
use common::{Home, Pty, shows, threads_cpu_ns};

const ROWS: u16 = 50;
const COLS: u16 = 200;
/// Longer than all rounds: the flood must still be going when typing ends.
const FLOOD_BYTES: &str = "50000000000";

/// What one round measured.
struct Round {
    name: String,
    keys: Figures,
    flood_mb_s: f64,
    /// % of one core: the TUI, the flooding run's supervisor, the daemon,
    /// `agents web` and the tabs' process (when they serve and watch).
    cpu: [f64; 5],
    /// Messages and bytes each tab was sent a second (the mean of tabs).
    per_tab: Option<(f64, f64)>,
}

/// `agents web` and its tabs: a process of their own (this bench run as
/// [`tabs_elsewhere`]), each tab a thread reading its WebSocket.
struct Tabs {
    web: Child,
    tabs: Child,
    messages: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

/// Set in the tabs' process: the screen's URL, the token and how many.
const TABS_VAR: &str = "AGENTS_BENCH_TABS_OF";

impl Tabs {
    fn open(home: &Home, n: usize) -> Tabs {
        let mut web = home
            .command(&["web", "--listen", "127.0.0.1:0", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("agents web");
        let mut first = String::new();
        BufReader::new(web.stdout.take().expect("its stdout"))
            .read_line(&mut first)
            .expect("its URL");
        let said: serde_json::Value = serde_json::from_str(&first).expect("--json");
        let token = said["token"].as_str().expect("a token").to_string();
        let url = said["url"].as_str().expect("a URL");
        let authority = url.trim_start_matches("http://").split('/').next().expect("host:port");
        let screen = format!("ws://{authority}/api/runs/flood/screen");
        let mut tabs = std::process::Command::new(std::env::current_exe().expect("this bench"))
            .env(TABS_VAR, format!("{screen} {token} {n}"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("the tabs' process");
        let (messages, bytes): (Arc<AtomicU64>, Arc<AtomicU64>) = (Arc::default(), Arc::default());
        let counts = BufReader::new(tabs.stdout.take().expect("its stdout"));
        let (m, b) = (Arc::clone(&messages), Arc::clone(&bytes));
        std::thread::spawn(move || {
            for line in counts.lines().map_while(Result::ok) {
                let mut said = line.split(' ').map(|n| n.parse::<u64>().unwrap_or(0));
                m.store(said.next().unwrap_or(0), Ordering::Relaxed);
                b.store(said.next().unwrap_or(0), Ordering::Relaxed);
            }
        });
        Tabs {
            web,
            tabs,
            messages,
            bytes,
        }
    }
}

/// `agents web` and the tabs end with the round, also when it fails
/// half-way.
impl Drop for Tabs {
    fn drop(&mut self) {
        for child in [&mut self.tabs, &mut self.web] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The tabs' process: they stand for browsers on other machines, so they
/// run in a session of their own at the least CPU weight (its autogroup's
/// nice 19), not as a load on the TUI and the run measured beside them.
/// Says the messages and bytes read so far, every 50 ms, until killed.
fn tabs_elsewhere(said: &str) {
    let mut words = said.split(' ');
    let (url, token) = (words.next().expect("a URL"), words.next().expect("a token"));
    let n: usize = words.next().and_then(|n| n.parse().ok()).expect("how many");
    let _ = nix::unistd::setsid();
    let _ = std::fs::write("/proc/self/autogroup", "19");
    let (messages, bytes): (Arc<AtomicU64>, Arc<AtomicU64>) = (Arc::default(), Arc::default());
    for _ in 0..n {
        let (m, b) = (Arc::clone(&messages), Arc::clone(&bytes));
        let (url, token) = (url.to_string(), token.to_string());
        std::thread::spawn(move || watch(&url, &token, &m, &b));
    }
    loop {
        std::thread::sleep(Duration::from_millis(50));
        let line = format!("{} {}", messages.load(Ordering::Relaxed), bytes.load(Ordering::Relaxed));
        if writeln!(std::io::stdout(), "{line}").is_err() {
            return;
        }
    }
}

/// One tab: its token said, then every message read.
fn watch(url: &str, token: &str, messages: &AtomicU64, bytes: &AtomicU64) {
    let (mut socket, _) = tungstenite::connect(url).expect("the screen's WebSocket");
    socket
        .send(tungstenite::Message::text(format!(r#"{{"token":"{token}"}}"#)))
        .expect("the token said");
    loop {
        match socket.read() {
            Ok(message) => {
                messages.fetch_add(1, Ordering::Relaxed);
                bytes.fetch_add(message.len() as u64, Ordering::Relaxed);
            }
            Err(e) => panic!("a tab's WebSocket: {e}"),
        }
    }
}

fn log_len(home: &Home, id: &str) -> u64 {
    let log = home.home.join("runs").join(id).join("output.log");
    std::fs::metadata(log).map(|m| m.len()).unwrap_or(0)
}

/// Types a round's keys with `tabs` tabs watching (none with 0).
fn round(name: &str, home: &Home, tui: &mut Pty, flood: &str, tabs: usize, keys: usize) -> Round {
    let watching = (tabs > 0).then(|| Tabs::open(home, tabs));
    if let Some(open) = &watching {
        let opened = Instant::now();
        while open.messages.load(Ordering::Relaxed) < tabs as u64 {
            assert!(
                opened.elapsed() < Duration::from_secs(30),
                "every tab was sent the screen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let pids = [
        Some(tui.pid()),
        shown_u32(home, &["show", "flood", "--json"], "pid").and_then(parent_of),
        shown_u32(home, &["daemon", "status", "--json"], "pid"),
        watching.as_ref().map(|t| t.web.id()),
        watching.as_ref().map(|t| t.tabs.id()),
    ];
    let cpu_before = pids.map(|p| p.map_or(0, threads_cpu_ns));
    let sent_before = watching
        .as_ref()
        .map(|t| (t.messages.load(Ordering::Relaxed), t.bytes.load(Ordering::Relaxed)));
    let (started, flooded) = (Instant::now(), log_len(home, flood));
    let origin = focused_pane_origin(&tui.term).expect("the focused pane");
    let latencies = type_and_time(tui, origin, keys);
    let secs = started.elapsed().as_secs_f64();
    let flood_mb_s = (log_len(home, flood) - flooded) as f64 / secs / 1e6;
    let mut cpu = [0.0; 5];
    for (i, pid) in pids.iter().enumerate() {
        cpu[i] = pid.map_or(0, threads_cpu_ns).saturating_sub(cpu_before[i]) as f64 / 1e9 / secs * 100.0;
    }
    let per_tab = watching.as_ref().zip(sent_before).map(|(t, (m, b))| {
        let n = tabs as f64 * secs;
        (
            (t.messages.load(Ordering::Relaxed) - m) as f64 / n,
            (t.bytes.load(Ordering::Relaxed) - b) as f64 / n,
        )
    });
    drop(watching);
    Round {
        name: name.to_string(),
        keys: figures(latencies),
        flood_mb_s,
        cpu,
        per_tab,
    }
}

fn main() {
    if let Ok(said) = std::env::var(TABS_VAR) {
        return tabs_elsewhere(&said);
    }
    let number = |name: &str, default: usize| std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default);
    let (keys, tabs) = (number("AGENTS_BENCH_KEYS", 300), number("AGENTS_BENCH_TABS", 50));
    let dir = tempfile::Builder::new().prefix("aw").tempdir().expect("temp dir");
    let home = Home::new(&dir.path().join("agents"));
    home.agents(&["daemon", "start"]);
    home.agents(&["run", "-d", "--name", "echo", "cmd", "--", "cat"]);
    let flood = home.agents(&["run", "-d", "--name", "flood", "demo", "--", "--flood", FLOOD_BYTES]);
    let flood = flood.trim().to_string();
    let mut tui = home.tui(ROWS, COLS);
    tui.wait("the runs", |t| shows(t, " echo ") && shows(t, " flood "));
    tui.press(b"2");
    tui.wait("the flood pane", |t| shows(t, "demo · flood"));
    tui.press(b"\r");
    tui.wait("INSERT mode", |t| shows(t, " INSERT "));

    println!("{tabs} web tabs watching a flooding run; key → echo in the TUI beside it, {keys} keys a round");
    println!("load average: {}", common::load_average());
    let rounds = [
        round("no web clients", &home, &mut tui, &flood, 0, keys),
        round(&format!("{tabs} tabs"), &home, &mut tui, &flood, tabs, keys),
        round("none again", &home, &mut tui, &flood, 0, keys),
    ];
    println!("load average: {}", common::load_average());
    for r in &rounds {
        println!(
            "{:>15}: flood {:.0} MB/s; key → echo p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; \
             CPU % of a core: TUI {:.1}, flood's supervisor {:.1}, daemon {:.1}, agents web {:.1}, \
             the tabs (nice 19) {:.1}",
            r.name, r.flood_mb_s, r.keys.p50, r.keys.p99, r.keys.max, r.cpu[0], r.cpu[1], r.cpu[2], r.cpu[3], r.cpu[4]
        );
        if let Some((messages, bytes)) = r.per_tab {
            println!(
                "{:>15}  each tab was sent {messages:.1} messages/s, {:.1} KB/s",
                "",
                bytes / 1e3
            );
        }
    }
    let (without, with, again) = (&rounds[0], &rounds[1], &rounds[2]);
    let spread = |f: fn(&Round) -> f64| {
        let (lo, hi) = (f(without).min(f(again)), f(without).max(f(again)));
        (lo, hi, f(with))
    };
    for (what, (lo, hi, at)) in [
        ("flood MB/s", spread(|r| r.flood_mb_s)),
        ("key → echo p50 ms", spread(|r| r.keys.p50)),
        ("key → echo p99 ms", spread(|r| r.keys.p99)),
    ] {
        println!(
            "{what:>18}: without tabs {lo:.2}–{hi:.2}, with {tabs}: {at:.2} ({:.2}× the mean without)",
            at / ((lo + hi) / 2.0)
        );
    }
    tui.press(&[0x01, b'd']);
    tui.press(b"q");
    tui.wait_exit();
}
