//! Flood throughput and history memory, `agents` beside `tmux` (docs/design.md §10).
//!
//! `cargo bench --bench flood` (release build). Prints figures and ratios:
//! - 100 MB of coloured log output `cat` into one run at 200×50: the time
//!   until the run has ended (supervisor: PTY read, output log, emulator),
//!   against the same bytes into a tmux 3.3a pane of the same size;
//! - memory for a run holding 10 000 lines of 200-column history: the
//!   supervisor's resident memory beyond an idle run's, against the tmux
//!   server's beyond an empty pane's (history-limit 10000).
//!
//! `AGENTS_BENCH_MB` changes the flood size.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agents");

/// Deterministic coloured log lines of about 100 columns, like a build or
/// test runner prints.
fn coloured_log(bytes: usize) -> Vec<u8> {
    let colours = [31, 32, 33, 34, 35, 36];
    let words = [
        "compiling",
        "checking",
        "running",
        "ok",
        "warning:",
        "test",
        "finished",
        "module",
    ];
    let mut out = Vec::with_capacity(bytes + 200);
    let mut i: u64 = 0;
    while out.len() < bytes {
        let c = colours[(i % 6) as usize];
        let w = words[(i % 8) as usize];
        let line = format!(
            "\x1b[2m{:02}:{:02}:{:02}.{:03}\x1b[0m \x1b[1;{c}m{w:>9}\x1b[0m crate_{:05} src/module_{:03}/file.rs:{:<4} \x1b[{c}m{}\x1b[0m\n",
            i / 3_600_000 % 24,
            i / 60_000 % 60,
            i / 1000 % 60,
            i % 1000,
            i % 99_991,
            i % 997,
            i % 8191,
            "=".repeat((i % 23) as usize + 10),
        );
        out.extend_from_slice(line.as_bytes());
        i += 1;
    }
    out.truncate(bytes);
    out
}

fn agents(home: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .env("AGENTS_HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .output()
        .expect("run agents");
    assert!(
        out.status.success(),
        "agents {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn tmux(sock: &Path, args: &[&str]) -> String {
    let out = Command::new("tmux")
        .arg("-S")
        .arg(sock)
        .args(args)
        .output()
        .expect("tmux is needed for the side-by-side figures (apt-get install tmux)");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn rss_kib(pid: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn supervisor_of(home: &Path, run: &str) -> String {
    let show: serde_json::Value = serde_json::from_str(&agents(home, &["show", run, "--json"])).unwrap();
    let pid = show["pid"].as_i64().expect("harness pid");
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split_whitespace().nth(1).unwrap().to_string()
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(120), "timed out: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn main() {
    let mb: usize = std::env::var("AGENTS_BENCH_MB")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join("config")).unwrap();
    let flood = dir.path().join("flood.log");
    std::fs::write(&flood, coloured_log(mb * 1_000_000)).unwrap();
    let flood_s = flood.to_str().unwrap();
    agents(&home, &["daemon", "start"]);

    // Throughput: best of three for each, alternating.
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let sock = dir.path().join("tmux.sock");
    for round in 0..3 {
        let t = Instant::now();
        let id = agents(
            &home,
            &[
                "run",
                "-d",
                "--size",
                "200x50",
                "--name",
                &format!("flood{round}"),
                "cmd",
                "--",
                "cat",
                flood_s,
            ],
        );
        agents(&home, &["wait", &id]);
        ours.push(t.elapsed());

        let t = Instant::now();
        let chan = format!("done{round}");
        tmux(
            &sock,
            &[
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "200",
                "-y",
                "50",
                &format!("cat {flood_s}; tmux -S {} wait-for -S {chan}", sock.display()),
            ],
        );
        tmux(&sock, &["wait-for", &chan]);
        theirs.push(t.elapsed());
        tmux(&sock, &["kill-server"]);
    }
    let best = |v: &[Duration]| v.iter().min().copied().unwrap();
    let rate = |d: Duration| mb as f64 / d.as_secs_f64();
    let (a, t) = (rate(best(&ours)), rate(best(&theirs)));
    println!("flood {mb} MB of coloured log at 200x50 (best of 3)");
    println!(
        "  agents (supervisor: log + emulate): {a:7.1} MB/s  ({:.2}s)",
        best(&ours).as_secs_f64()
    );
    println!(
        "  tmux 3.3a:                          {t:7.1} MB/s  ({:.2}s)",
        best(&theirs).as_secs_f64()
    );
    println!("  ratio agents/tmux:                  {:7.2}x", a / t);

    // Memory for 10 000 lines of 200-column history.
    let history = dir.path().join("history.log");
    let mut lines = Vec::new();
    for i in 0..10_000u32 {
        let body: String = (0..190).map(|k| (b'a' + ((i + k) % 26) as u8) as char).collect();
        lines.extend_from_slice(format!("\x1b[3{}m{i:>8}\x1b[0m {body}\n", i % 8).as_bytes());
    }
    std::fs::write(&history, &lines).unwrap();
    let done = dir.path().join("history.done");
    let script = format!("cat {}; touch {}; exec sleep 1000", history.display(), done.display());
    let idle = agents(
        &home,
        &[
            "run", "-d", "--size", "200x50", "--name", "idle", "cmd", "--", "sleep", "1000",
        ],
    );
    let full = agents(
        &home,
        &[
            "run", "-d", "--size", "200x50", "--name", "full", "cmd", "--", "sh", "-c", &script,
        ],
    );
    wait_for("the history is written", || done.exists());
    // The supervisor has read everything once its log holds all the bytes.
    let log = home.join("runs").join(&full).join("output.log");
    wait_for("the supervisor logged the history", || {
        std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0) >= lines.len() as u64
    });
    let ours_idle = rss_kib(&supervisor_of(&home, &idle));
    let ours_full = rss_kib(&supervisor_of(&home, &full));

    tmux(
        &sock,
        &[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-x",
            "200",
            "-y",
            "50",
            "sleep 1000",
        ],
    );
    tmux(&sock, &["set-option", "-g", "history-limit", "10000"]);
    let server = tmux(&sock, &["display-message", "-p", "#{pid}"]);
    let tmux_base = rss_kib(&server);
    let tdone = dir.path().join("tmux.done");
    let tscript = format!("cat {}; touch {}; exec sleep 1000", history.display(), tdone.display());
    tmux(&sock, &["new-window", "-d", &tscript]);
    wait_for("tmux read the history", || tdone.exists());
    wait_for("tmux holds the history", || {
        tmux(&sock, &["display-message", "-p", "-t", ":1", "#{history_size}"])
            .parse::<u64>()
            .unwrap_or(0)
            >= 9_900
    });
    let tmux_full = rss_kib(&server);
    tmux(&sock, &["kill-server"]);
    let ours_delta = ours_full.saturating_sub(ours_idle);
    let tmux_delta = tmux_full.saturating_sub(tmux_base);
    println!("memory for 10 000 lines of 200-column history");
    println!("  agents supervisor: {ours_full} KiB resident, {ours_delta} KiB beyond an idle run's");
    println!("  tmux 3.3a server:  {tmux_full} KiB resident, {tmux_delta} KiB beyond an empty pane's");
    println!(
        "  ratio agents/tmux (beyond idle): {:.2}",
        ours_delta as f64 / tmux_delta.max(1) as f64
    );
    let _ = Command::new(BIN)
        .args(["cancel", "--force", &idle])
        .env("AGENTS_HOME", &home)
        .output();
    let _ = Command::new(BIN)
        .args(["cancel", "--force", &full])
        .env("AGENTS_HOME", &home)
        .output();
    agents(&home, &["daemon", "stop"]);
}
