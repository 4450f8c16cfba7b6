//! Soak: many runs for minutes while the daemon is killed again and again
//! and the disk fills once; prints what was lost (issue #11, "Done means").
//!
//! `cargo bench --bench soak` (release build; the full disk needs root to
//! mount a tmpfs, and is skipped with a line saying so without it).
//! - 200 `cmd` runs, each a bash script printing five numbered lines every
//!   10 s (idle at its prompt in between, as an agent is) and answering
//!   each prompt it reads with `got <text>`;
//! - a prompt every 250 ms, to each run in turn, by `agents send --id`
//!   (a send that fails, as one racing a killed daemon can, is sent again
//!   with the same id, as a user would: the id makes it count once);
//! - the daemon `kill -9`ed every 30 s (its runs' supervisors start it
//!   again, or the next command does);
//! - halfway, the home's file system filled to its last byte for 5 s;
//! - every 5 s a hook forged for a run by its id alone (no proof), as any
//!   process that read `agents ls` could; each one the daemon took would
//!   be a `HOOK` event on a `cmd` run, which has no hooks of its own;
//! - every 45 s the daemon's every place taken for 5 s by 256 connections
//!   that say their header and nothing more;
//! - every 40 s one run's supervisor stopped (SIGSTOP) for 10 s, across a
//!   daemon kill when one falls in that time.
//!
//! At the end every run is sent `stop`; each then prints `last N` and
//! exits. Its output log must hold `line 0` … `line N-1` once each, in
//! order, and `got P` exactly once for each prompt it was sent. Printed:
//! lines lost, prompts lost or duplicated, runs not `succeeded` (stuck or
//! lost), forged hooks taken, the faults injected, the daemon's peak RSS (VmHWM of each daemon process, the largest) and peak
//! open descriptors, sampled every second.
//!
//! `AGENTS_SOAK_RUNS` (200) and `AGENTS_SOAK_SECS` (300) change the size.

mod common;
#[path = "../tests/common/disk.rs"]
mod disk;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::Home;

const KILL_EVERY: Duration = Duration::from_secs(30);
const PROMPT_EVERY: Duration = Duration::from_millis(250);
const FULL_FOR: Duration = Duration::from_secs(5);
const FORGE_EVERY: Duration = Duration::from_secs(5);
const CROWD_EVERY: Duration = Duration::from_secs(45);
const CROWD_FOR: Duration = Duration::from_secs(5);
/// The daemon's places (`MAX_CLIENTS`), every one taken.
const CROWD: usize = 256;
const STOP_EVERY: Duration = Duration::from_secs(40);
const STOP_FOR: Duration = Duration::from_secs(10);

/// Works as an agent does, in bursts (in the background): five numbered
/// lines every 10 s, each with its number also in letters (`line 12 bc`),
/// so the screen changes in more than a counter (a screen changing only in
/// its digits is a stalled agent's); quiet in between, so it is idle at its
/// prompt between bursts (a line every half second is an agent at work for
/// good: `engine/rhythm.rs`, and no prompt would go in). Answers each
/// prompt read with `got <prompt>`; `stop` ends it with `last N`. No echo:
/// the log holds only what the loop printed. The reading never times out
/// (bash's `read -t` drops the first byte of a line that arrives as it
/// times out), and the printer stops only between lines, so `last N` is
/// exact.
const LOOP: &str = r#"stty -echo
( i=0; trap 'stop=1' TERM
  while [ -z "$stop" ]; do
    for k in 1 2 3 4 5; do
      w=$i; for d in 0:a 1:b 2:c 3:d 4:e 5:f 6:g 7:h 8:i 9:j; do w=${w//${d%:*}/${d#*:}}; done
      echo "line $i $w"; i=$((i+1))
    done
    [ -z "$stop" ] && { sleep 10 & wait $!; }
  done
  echo "last $i" ) &
while IFS= read -r p; do echo "got $p"; [ "$p" = stop ] && break; done
kill -TERM $!; wait $!"#;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn agents(home: &Home, args: &[&str]) -> Output {
    home.command(args).output().expect("run agents")
}

/// `agents ARGS` until it succeeds; how many tries it took.
fn until_ok(home: &Home, args: &[&str]) -> u32 {
    let mut tries = 1;
    loop {
        let out = agents(home, args);
        if out.status.success() {
            return tries;
        }
        assert!(
            tries < 600,
            "agents {args:?} kept failing: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
        tries += 1;
    }
}

fn daemon_pid(home: &Home) -> Option<i32> {
    std::fs::read_to_string(home.home.join("daemon.pid"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `VmHWM` (peak resident set) of a process, in KiB.
fn peak_rss_kib(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn open_fds(pid: i32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count())
}

/// The faults injected, by kind.
#[derive(Default, Debug)]
struct Injected {
    kills: u32,
    forged: u32,
    crowds: u32,
    stops: u32,
}

/// A fault that repeats: when it is next due, and when the one under way
/// is undone.
struct Every {
    every: Duration,
    next: Instant,
}

impl Every {
    fn new(start: Instant, every: Duration) -> Every {
        Every {
            every,
            next: start + every,
        }
    }

    /// Due now: counted from the last time it was due.
    fn due(&mut self, now: Instant) -> bool {
        let due = now >= self.next;
        if due {
            self.next += self.every;
        }
        due
    }
}

/// Injects every fault until `done`: the daemon killed, the disk filled at
/// `full_at`, hooks forged, the daemon's places taken, a supervisor
/// stopped; each undone on time, and all before it returns.
fn faults(home: &Home, ids: &[String], done: &AtomicBool, start: Instant, mut full_at: Option<Instant>) -> Injected {
    let mut injected = Injected::default();
    let (mut kill, mut forge) = (Every::new(start, KILL_EVERY), Every::new(start, FORGE_EVERY));
    let (mut crowd, mut stop) = (Every::new(start, CROWD_EVERY), Every::new(start, STOP_EVERY));
    let mut filler: Option<(PathBuf, Instant)> = None;
    let mut crowded: Option<(Vec<std::os::unix::net::UnixStream>, Instant)> = None;
    let mut stopped: Option<(nix::unistd::Pid, Instant)> = None;
    while !done.load(Ordering::Relaxed) || filler.is_some() || crowded.is_some() || stopped.is_some() {
        let now = Instant::now();
        let going = !done.load(Ordering::Relaxed);
        if kill.due(now)
            && going
            && let Some(pid) = daemon_pid(home)
        {
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            injected.kills += 1;
        }
        if forge.due(now) && going {
            forge_hook(home, &ids[injected.forged as usize % ids.len()]);
            injected.forged += 1;
        }
        if crowd.due(now) && going && crowded.is_none() {
            crowded = Some((take_every_place(home), now));
            injected.crowds += 1;
        }
        if stop.due(now)
            && going
            && stopped.is_none()
            && let Some(pid) = supervisor_of(home, &ids[injected.stops as usize % ids.len()])
        {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP);
            stopped = Some((pid, now));
            injected.stops += 1;
        }
        if full_at.is_some_and(|at| now >= at) {
            full_at = None;
            filler = Some((disk::fill(&home.home, "filler"), now));
            println!("disk full at {:.0} s", now.duration_since(start).as_secs_f64());
        }
        if let Some((path, since)) = &filler
            && now.duration_since(*since) >= FULL_FOR
        {
            std::fs::remove_file(path).expect("free the disk");
            filler = None;
        }
        if crowded
            .as_ref()
            .is_some_and(|(_, since)| now.duration_since(*since) >= CROWD_FOR)
        {
            crowded = None;
        }
        if let Some((pid, since)) = stopped
            && now.duration_since(since) >= STOP_FOR
        {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT);
            stopped = None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    injected
}

/// A hook for `run` from outside it: its id and nothing else, the payload
/// one that would make it wait for an approval.
fn forge_hook(home: &Home, run: &str) {
    let payload = r#"{"session_id":"forged","hook_event_name":"Notification","notification_type":"permission_prompt","message":"forged"}"#;
    let _ = home
        .command(&["hook", "Notification", payload])
        .env("AGENTS_RUN_ID", run)
        .env_remove("AGENTS_RUN_PROOF")
        .output();
}

/// `CROWD` connections that say their header and then nothing.
fn take_every_place(home: &Home) -> Vec<std::os::unix::net::UnixStream> {
    use std::io::Write;
    (0..CROWD)
        .filter_map(|_| {
            let mut s = std::os::unix::net::UnixStream::connect(home.home.join("daemon.sock")).ok()?;
            s.write_all(b"agents/1 crowd\n").ok()?;
            Some(s)
        })
        .collect()
}

/// The pid of `run`'s supervisor, as the daemon recorded it.
fn supervisor_of(home: &Home, run: &str) -> Option<nix::unistd::Pid> {
    let db =
        rusqlite::Connection::open_with_flags(home.home.join("agents.db"), rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .ok()?;
    let pid: i64 = db
        .query_row("SELECT supervisor_pid FROM runs WHERE id = ?1", [run], |r| r.get(0))
        .ok()?;
    Some(nix::unistd::Pid::from_raw(pid as i32))
}

#[derive(Default)]
struct Peaks {
    rss_kib: u64,
    fds: usize,
    daemons: HashSet<i32>,
}

/// Samples the daemon every second until `done`.
fn watch_daemon(home: &Home, peaks: &Mutex<Peaks>, done: &AtomicBool) {
    while !done.load(Ordering::Relaxed) {
        if let Some(pid) = daemon_pid(home) {
            let mut p = peaks.lock().unwrap();
            p.daemons.insert(pid);
            p.rss_kib = p.rss_kib.max(peak_rss_kib(pid).unwrap_or(0));
            p.fds = p.fds.max(open_fds(pid).unwrap_or(0));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// What one run's log says: the numbered lines, `last N`, prompts got.
struct Heard {
    lines: Vec<u64>,
    last: Option<u64>,
    got: HashMap<String, u32>,
}

fn hear(log: &[u8]) -> Heard {
    let text = String::from_utf8_lossy(log);
    let mut heard = Heard {
        lines: Vec::new(),
        last: None,
        got: HashMap::new(),
    };
    for line in text.split('\n').map(|l| l.trim_end_matches('\r')) {
        let number = |rest: &str| rest.split(' ').next().and_then(|n| n.parse().ok());
        if let Some(n) = line.strip_prefix("line ").and_then(number) {
            heard.lines.push(n);
        } else if let Some(n) = line.strip_prefix("last ").and_then(|n| n.parse().ok()) {
            heard.last = Some(n);
        } else if let Some(p) = line.strip_prefix("got ") {
            *heard.got.entry(p.to_string()).or_default() += 1;
        }
    }
    heard
}

fn main() {
    let runs = env_or("AGENTS_SOAK_RUNS", 200) as usize;
    let secs = env_or("AGENTS_SOAK_SECS", 300);
    let dir = tempfile::tempdir().expect("temp dir");
    let mount = disk::Tmpfs::mount(&dir.path().join("home"), "512m").ok();
    let home = Home::new(dir.path());
    println!(
        "soak: {runs} runs for {secs} s, daemon kill -9 every {} s, disk full once for {} s{}",
        KILL_EVERY.as_secs(),
        FULL_FOR.as_secs(),
        if mount.is_some() {
            ""
        } else {
            " (skipped: no tmpfs mount without root)"
        }
    );
    home.agents(&["daemon", "start"]);
    let ids: Vec<String> = (0..runs)
        .map(|_| home.agents(&["run", "-d", "cmd", "--", "bash", "-c", LOOP]))
        .collect();

    let home = Arc::new(home);
    let (peaks, done) = (Arc::new(Mutex::new(Peaks::default())), Arc::new(AtomicBool::new(false)));
    let sampled = Arc::new(AtomicBool::new(false));
    let watcher = std::thread::spawn({
        let (home, peaks, sampled) = (home.clone(), peaks.clone(), sampled.clone());
        move || watch_daemon(&home, &peaks, &sampled)
    });
    let start = Instant::now();
    let until = start + Duration::from_secs(secs);
    let faults = std::thread::spawn({
        let (home, done, full, ids) = (home.clone(), done.clone(), mount.is_some(), ids.clone());
        move || {
            faults(
                &home,
                &ids,
                &done,
                start,
                full.then(|| start + Duration::from_secs(secs / 2)),
            )
        }
    });
    let mut sent: Vec<HashSet<String>> = vec![HashSet::new(); runs];
    let (mut retries, mut prompt) = (0u32, 0usize);
    while Instant::now() < until {
        let now = Instant::now();
        let run = prompt % runs;
        let text = format!("p{prompt}");
        retries += until_ok(&home, &["send", "--id", &text, &ids[run], &text]) - 1;
        sent[run].insert(text);
        prompt += 1;
        std::thread::sleep(PROMPT_EVERY.saturating_sub(now.elapsed()));
    }
    done.store(true, Ordering::Relaxed);
    let injected = faults.join().expect("faults thread");
    for id in &ids {
        retries += until_ok(&home, &["send", "--id", &format!("stop-{id}"), id, "stop"]) - 1;
    }
    let mut not_succeeded = Vec::new();
    for id in &ids {
        let out = agents(&home, &["wait", id, "--json", "--timeout", "120"]);
        let end: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if end["state"] != "succeeded" {
            let shown = agents(&home, &["show", id, "--json"]);
            let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap_or_default();
            not_succeeded.push(format!(
                "{id}: {} · {} ({}); wait said: {}",
                shown["state"],
                shown["status"],
                shown["reason"],
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    sampled.store(true, Ordering::Relaxed);
    let watching = watcher.join();
    assert!(watching.is_ok(), "the daemon's sampler");
    report(&home, &ids, &sent, &not_succeeded);
    let taken = forged_taken(&home, &ids);
    println!(
        "faults: {} kill -9, {} hooks forged ({taken} taken), {} times every place taken, {} supervisors stopped",
        injected.kills, injected.forged, injected.crowds, injected.stops
    );
    let peaks = peaks.lock().unwrap();
    println!(
        "daemon: {} daemon processes seen, peak RSS {:.1} MiB, peak fds {}",
        peaks.daemons.len(),
        peaks.rss_kib as f64 / 1024.0,
        peaks.fds
    );
    println!("prompts sent: {prompt} (+{runs} stop); sends tried again after a failure: {retries}");
    drop(home);
    drop(mount);
}

/// Hooks the daemon took for the runs: each one forged (a `cmd` run has
/// no hooks of its own).
fn forged_taken(home: &Home, ids: &[String]) -> usize {
    ids.iter()
        .map(|id| {
            let shown = agents(home, &["show", id, "--json"]);
            let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap_or_default();
            let events = shown["events"].as_array().cloned().unwrap_or_default();
            events.iter().filter(|e| e["kind"] == "HOOK").count()
        })
        .sum()
}

/// Lines lost, prompts lost and duplicated, runs not succeeded.
fn report(home: &Home, ids: &[String], sent: &[HashSet<String>], not_succeeded: &[String]) {
    let (mut lines_lost, mut lines_twice, mut lost, mut twice) = (0u64, 0u64, 0u64, 0u64);
    let mut unknown = Vec::new();
    for (run, id) in ids.iter().enumerate() {
        let log = std::fs::read(home.home.join("runs").join(id).join("output.log")).unwrap_or_default();
        let heard = hear(&log);
        let last = heard
            .last
            .unwrap_or_else(|| heard.lines.iter().max().map_or(0, |m| m + 1));
        let mut seen = vec![0u32; last as usize];
        for n in &heard.lines {
            match seen.get_mut(*n as usize) {
                Some(count) => *count += 1,
                None => lines_twice += 1,
            }
        }
        lines_lost += seen.iter().filter(|c| **c == 0).count() as u64;
        lines_twice += seen.iter().map(|c| c.saturating_sub(1) as u64).sum::<u64>();
        for p in &sent[run] {
            match heard.got.get(p).copied().unwrap_or(0) {
                0 => lost += 1,
                1 => {}
                n => twice += u64::from(n - 1),
            }
        }
        unknown.extend(
            heard
                .got
                .keys()
                .filter(|p| *p != "stop" && !sent[run].contains(*p))
                .map(|p| format!("{id}: got {p:?}")),
        );
    }
    println!("lines lost: {lines_lost}; lines twice: {lines_twice}");
    println!(
        "prompts lost: {lost}; delivered twice: {twice}; not sent to that run: {}",
        unknown.len()
    );
    for line in unknown.iter().take(5) {
        println!("  {line}");
    }
    println!("runs not succeeded: {}", not_succeeded.len());
    for line in not_succeeded.iter().take(5) {
        println!("  {line}");
    }
}
