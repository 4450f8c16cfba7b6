//! TUI first frame with 10 000 runs in the database (docs/design.md §10: under 150 ms).
//!
//! `cargo bench --bench tui_first_frame` (release build). Builds a real
//! `AGENTS_HOME`: the daemon creates the database, then 10 000 ended runs
//! are written into it as the daemon writes them (records, their events,
//! their output logs), with a few child runs among them. With the daemon
//! running, each round spawns the TUI in a 120×40 PTY and measures until the
//! screen shows run names in the tree (the PTY's output parsed by our own
//! emulator); also until its very first frame.
//!
//! `AGENTS_BENCH_RUNS` changes the number of runs, `AGENTS_BENCH_ROUNDS` the rounds (5).

mod common;

use std::time::Instant;

use common::ended::fill;
use common::{Home, quantile, shows};

const ROWS: u16 = 40;
const COLS: u16 = 120;
const BUDGET_MS: f64 = 150.0;

fn main() {
    let n: usize = std::env::var("AGENTS_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000);
    let rounds: usize = std::env::var("AGENTS_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::Builder::new().prefix("ah").tempdir().expect("temp dir");
    let home = Home::new(dir.path());
    home.agents(&["daemon", "start"]);
    home.agents(&["daemon", "stop"]);
    let t = Instant::now();
    fill(&home, n);
    println!(
        "TUI first frame: {n} ended runs written in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    home.agents(&["daemon", "start"]);
    println!("load average: {}", common::load_average());

    let mut first_frame = Vec::new();
    let mut with_runs = Vec::new();
    let mut listed = String::new();
    let mut first_row = String::new();
    for _ in 0..rounds {
        let t0 = Instant::now();
        let mut tui = home.tui(ROWS, COLS);
        let drawn = tui.wait("the first frame", |t| shows(t, " RUNS "));
        let named = tui.wait("run names in the tree", |t| shows(t, " run-"));
        first_frame.push(drawn.duration_since(t0).as_secs_f64() * 1000.0);
        with_runs.push(named.duration_since(t0).as_secs_f64() * 1000.0);
        // How many runs the TUI holds: the header counts them.
        tui.wait("the header's count", |t| shows(t, " succeeded "));
        let lines = tui.term.visible_lines();
        listed = lines[0].clone();
        first_row = lines
            .iter()
            .filter_map(|l| l.split('│').nth(1))
            .find(|tree| tree.contains(" run-"))
            .unwrap_or_default()
            .to_string();
        tui.press(b"q");
        tui.wait_exit();
    }
    let report = |name: &str, mut ms: Vec<f64>| {
        let each: Vec<String> = ms.iter().map(|m| format!("{m:.0}")).collect();
        ms.sort_by(f64::total_cmp);
        let median = quantile(&ms, 0.5);
        println!(
            "{name:>28}: median {median:.0} ms, min {:.0} ms, max {:.0} ms  (rounds: {} ms)",
            ms[0],
            ms[ms.len() - 1],
            each.join(", ")
        );
        median
    };
    report("first frame (empty tree)", first_frame);
    let median = report("first frame with run names", with_runs);
    println!(
        "{:>28}  budget < {BUDGET_MS} ms: {}",
        "",
        if median < BUDGET_MS { "ok" } else { "OVER" }
    );
    let header: String = listed.split('─').filter(|s| s.contains("succeeded")).collect();
    println!("{:>28}  the TUI's header: {}", "", header.trim());
    println!("{:>28}  the tree's first run: {}", "", first_row.trim());
    // For comparison: every run, paged, as `agents ls --all` fetches them.
    let t = Instant::now();
    let all: serde_json::Value = serde_json::from_str(&home.agents(&["ls", "--all", "--json"])).expect("ls --json");
    println!(
        "{:>28}  `agents ls --all --json`: {} runs in {:.0} ms",
        "",
        all.as_array().map_or(0, Vec::len),
        t.elapsed().as_secs_f64() * 1000.0
    );
}
