//! Key → echo latency in a pane while another visible pane floods (docs/design.md
//! §10: p99 under 10 ms, and no worse than tmux side by side).
//!
//! `cargo bench --bench tui_latency` (release build; needs tmux). Both sides
//! get a 200×50 terminal (a PTY we own) showing two panes side by side: one
//! running `cat`, one running the demo agent's flood of coloured log lines.
//! - agents: the TUI, split layout (`2`), the `cat` run focused in INSERT;
//! - tmux 3.3a: a session split in two, `tmux attach` in the PTY.
//!
//! Then single characters are typed one at a time into the `cat` pane, and
//! each one's latency is from writing it to our PTY until the chunk of the
//! terminal's output that puts it on screen, at the place it belongs, is read
//! (the output is parsed by our own emulator; chunks are stamped by the
//! reading thread as they arrive, so parsing does not count). Keys are
//! paced 3–15 ms apart, irregularly, so they do not fall in step with any
//! frame clock. Every 40 characters Ctrl-U erases the line (the terminal's
//! line discipline echoes the erase), unmeasured.
//!
//! `AGENTS_BENCH_KEYS` changes the number of keys (300);
//! `AGENTS_BENCH_HIDE_FLOOD=1` keeps the TUI in the single layout, so the
//! flood runs but no pane shows it (to tell its CPU cost from its drawing);
//! `AGENTS_BENCH_NO_YIELD=1` sets `engine.flood_bytes_per_s = 0`, so the
//! flooding run keeps its full share of the processor (docs/design.md §10).

mod common;

use std::path::Path;
use std::time::Instant;

use common::typing::{figures, focused_pane_origin, parent_of, shown_u32, type_and_time};
use common::{Home, Pty, shows, threads_cpu_ns, tmux};

const ROWS: u16 = 50;
const COLS: u16 = 200;
/// Longer than any round: the flood must still be going when typing ends.
const FLOOD_BYTES: &str = "50000000000";
const BUDGET_P99_MS: f64 = 10.0;

/// How much the run has printed: its log's length (the record's
/// `output_bytes` follows a busy run only every few seconds).
fn output_bytes(home: &Home, run: &str) -> u64 {
    let show: serde_json::Value = serde_json::from_str(&home.agents(&["show", run, "--json"])).expect("show --json");
    let id = show["id"].as_str().expect("the run's id");
    let log = home.home.join("runs").join(id).join("output.log");
    std::fs::metadata(log).map(|m| m.len()).unwrap_or(0)
}

fn agents_side(dir: &Path, keys: usize) -> Vec<f64> {
    let home = Home::new(dir);
    if std::env::var_os("AGENTS_BENCH_NO_YIELD").is_some() {
        let config = home.config.join("agents/config.toml");
        let mut text = std::fs::read_to_string(&config).expect("the bench's config");
        text.push_str("flood_bytes_per_s = 0\n");
        std::fs::write(&config, text).expect("the bench's config");
    }
    home.agents(&["daemon", "start"]);
    home.agents(&["run", "-d", "--name", "echo", "cmd", "--", "cat"]);
    home.agents(&["run", "-d", "--name", "flood", "demo", "--", "--flood", FLOOD_BYTES]);
    let mut tui = home.tui(ROWS, COLS);
    tui.wait("the runs", |t| shows(t, " echo ") && shows(t, " flood "));
    if std::env::var_os("AGENTS_BENCH_HIDE_FLOOD").is_none() {
        tui.press(b"2");
        tui.wait("the flood pane", |t| shows(t, "demo · flood"));
    }
    tui.press(b"\r");
    tui.wait("INSERT mode", |t| shows(t, " INSERT "));
    let origin = focused_pane_origin(&tui.term).expect("the focused pane");
    let processes = [
        ("TUI", Some(tui.pid())),
        (
            "flood's supervisor",
            shown_u32(&home, &["show", "flood", "--json"], "pid").and_then(parent_of),
        ),
        ("daemon", shown_u32(&home, &["daemon", "status", "--json"], "pid")),
    ];
    let cpu_before: Vec<u64> = processes.iter().map(|(_, p)| p.map_or(0, threads_cpu_ns)).collect();
    let before = (Instant::now(), output_bytes(&home, "flood"));
    let latencies = type_and_time(&mut tui, origin, keys);
    let secs = before.0.elapsed().as_secs_f64();
    let flooded = output_bytes(&home, "flood") - before.1;
    println!(
        "agents: the flood pane took {:.0} MB/s meanwhile ({:.0} KB/s of frames to the terminal)",
        flooded as f64 / secs / 1e6,
        tui.bytes as f64 / secs / 1e3,
    );
    // docs/design.md §10: a flooding run's sessions yield while it floods.
    if let Some(pid) = processes[1].1 {
        let group = std::fs::read_to_string(format!("/proc/{pid}/autogroup")).unwrap_or_default();
        println!("agents: the flooding supervisor's scheduling group: {}", group.trim());
    }
    let percent: Vec<f64> = processes
        .iter()
        .zip(&cpu_before)
        .map(|((_, p), was)| p.map_or(0, threads_cpu_ns).saturating_sub(*was) as f64 / 1e9 / secs * 100.0)
        .collect();
    let shares: Vec<String> = processes
        .iter()
        .zip(&percent)
        .map(|((name, pid), pc)| match pid {
            Some(_) => format!("{name} {pc:.1} %"),
            None => format!("{name} not found"),
        })
        .collect();
    println!("agents: CPU meanwhile, % of one core: {}", shares.join(", "));
    if percent[1] > 0.0 {
        println!(
            "agents: the TUI's CPU / the flooding supervisor's: {:.3} (aim: under 0.1)",
            percent[0] / percent[1]
        );
    }
    tui.press(&[0x01, b'd']);
    tui.press(b"q");
    tui.wait_exit();
    latencies
}

fn tmux_side(dir: &Path, keys: usize) -> Vec<f64> {
    let sock = dir.join("tmux.sock");
    common::cat_beside_flood(&sock, (ROWS, COLS), FLOOD_BYTES);
    let sock_s = sock.to_str().expect("a UTF-8 path");
    let mut client = Pty::spawn("tmux", &["-S", sock_s, "attach", "-t", "lat"], &[], ROWS, COLS);
    client.wait("the flood pane", |t| shows(t, "INFO"));
    let started = Instant::now();
    let latencies = type_and_time(&mut client, (0, 0), keys);
    println!(
        "tmux: {:.0} KB/s to the terminal meanwhile",
        client.bytes as f64 / started.elapsed().as_secs_f64() / 1e3
    );
    tmux(&sock, &["kill-server"]);
    client.wait_exit();
    latencies
}

fn main() {
    let keys: usize = std::env::var("AGENTS_BENCH_KEYS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let dir = tempfile::Builder::new().prefix("ah").tempdir().expect("temp dir");
    println!("key → echo latency, {keys} keys, while the other visible pane floods ({COLS}×{ROWS} terminal)");
    println!("load average: {}", common::load_average());
    let ours = figures(agents_side(&dir.path().join("agents"), keys));
    let theirs = figures(tmux_side(dir.path(), keys));
    println!("load average: {}", common::load_average());
    for (name, f) in [("agents TUI", &ours), ("tmux 3.3a", &theirs)] {
        println!(
            "{name:>12}: p50 {:.2} ms, p99 {:.2} ms, mean {:.2} ms, max {:.2} ms",
            f.p50, f.p99, f.mean, f.max
        );
    }
    println!(
        "{:>12}  agents / tmux: p50 {:.2}×, p99 {:.2}×",
        "",
        ours.p50 / theirs.p50,
        ours.p99 / theirs.p99
    );
    let within = ours.p99 < BUDGET_P99_MS && ours.p99 <= theirs.p99;
    println!(
        "{:>12}  budget p99 < {BUDGET_P99_MS} ms and no worse than tmux: {}",
        "",
        if within { "ok" } else { "OVER" }
    );
}
