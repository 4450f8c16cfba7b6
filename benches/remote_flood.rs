//! A flood from a remote run, through SSH, into the local mirror (docs/design.md
//! §8, §10), beside OpenSSH moving the same bytes.
//!
//! `cargo bench --bench remote_flood` (release build). A real `sshd` on
//! loopback (the tests' own setup, `tests/sshd`), a host added with this
//! binary as its remote agents, and a run placed there that `cat`s a file
//! of coloured log lines. Printed:
//! - agents: from `agents run --host` until the local mirror log holds the
//!   run's whole output (remote PTY, supervisor, remote daemon, `agents
//!   serve --stdio`, the russh channel, the local daemon's mirror), and
//!   when the remote log itself was complete, to tell the PTY side from the
//!   link;
//! - the link alone: the same run with the local daemon stopped until the
//!   remote log is whole, then started again; it follows the run from the
//!   mirror's length, so the whole log crosses the link in one go (daemon
//!   start, SSH connection and `serve` included, as `ssh cat`'s set-up is);
//! - the same run placed locally (PTY, supervisor, log, emulator; no SSH):
//!   the ceiling the remote run's own PTY side puts on it;
//! - a pane here (a screen subscription, as the TUI's): from the run's
//!   start until it shows the run's final screen, and how much of the log
//!   was mirrored by then (screens cross the link ahead of the mirror);
//! - OpenSSH: `ssh -p PORT user@127.0.0.1 cat FILE > /dev/null` of the same
//!   file with the system client (connection set-up included, as agents'
//!   run start is);
//! - MB/s of the file's bytes for both, and their ratio.
//!
//! `AGENTS_BENCH_MB` changes the size (default 100).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/sshd/mod.rs"]
mod sshd;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sshd::{Net, local_user};

const MB: usize = 1_000_000;

/// Coloured log lines of about 100 columns, as a build prints them.
fn coloured_log(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 200);
    let mut i: u64 = 0;
    while out.len() < bytes {
        let c = 31 + i % 6;
        out.extend_from_slice(
            format!(
                "\x1b[2m{:06}\x1b[0m \x1b[1;{c}mstep\x1b[0m crate_{:05} src/module_{:03}.rs \x1b[{c}m{}\x1b[0m\n",
                i,
                i % 99_991,
                i % 997,
                "=".repeat((i % 23) as usize + 30)
            )
            .as_bytes(),
        );
        i += 1;
    }
    out.truncate(bytes);
    out
}

/// Whether the file's last bytes are `tail` (read without the rest).
fn ends_with(path: &Path, tail: &str) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let n = tail.len() as u64;
    if len(path) < n || f.seek(SeekFrom::End(-(n as i64))).is_err() {
        return false;
    }
    let mut last = Vec::new();
    f.read_to_end(&mut last).is_ok() && last == tail.as_bytes()
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Runs `cat FILE` on the host through agents; returns (seconds until the
/// remote log was whole, seconds until the mirror was whole).
fn agents_flood(net: &Net, file: &Path) -> (f64, f64) {
    let started = Instant::now();
    let id = net.start_on("box", &["cmd", "--", "cat", &file.display().to_string()]);
    let (mirror, remote) = (net.local.log_path(&id), net.remote.log_path(&id));
    // Sampled until the run has ended here (the mirror ends last); the
    // final length is known only then.
    let mut samples: Vec<(Duration, u64, u64)> = Vec::new();
    let mut waiter = net
        .cmd(&["wait", &id])
        .stdout(Stdio::null())
        .spawn()
        .expect("agents wait");
    loop {
        samples.push((started.elapsed(), len(&remote), len(&mirror)));
        if waiter.try_wait().expect("agents wait").is_some() {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(600), "the flood never ended");
        std::thread::sleep(Duration::from_millis(2));
    }
    samples.push((started.elapsed(), len(&remote), len(&mirror)));
    let whole = len(&remote);
    assert_eq!(len(&mirror), whole, "the mirror holds the remote log");
    let first = |pick: fn(&(Duration, u64, u64)) -> u64| {
        samples
            .iter()
            .find(|s| pick(s) >= whole)
            .map(|s| s.0.as_secs_f64())
            .unwrap()
    };
    (first(|s| s.1), first(|s| s.2))
}

/// A pane here showing the remote run while it floods: (seconds until the
/// pane shows the run's final screen, seconds until the remote log was
/// whole, bytes in the mirror when the pane showed it). The run stays on
/// after its flood, so its screen is its host's, not the mirror's.
fn pane_flood(net: &Net, file: &Path) -> (f64, f64, u64) {
    const MARK: &str = "THE FLOOD HAS ENDED";
    let script = format!("cat '{}'; printf '\\n{MARK}'; exec sleep 600", file.display());
    let started = Instant::now();
    let id = net.start_on("box", &["cmd", "--", "sh", "-c", &script]);
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    let mut pane = rt.block_on(common::pane::Pane::open(net.local.path(), &id));
    let remote = net.remote.log_path(&id);
    let mirror = net.local.log_path(&id);
    let watcher = {
        let remote = remote.clone();
        std::thread::spawn(move || {
            loop {
                if ends_with(&remote, MARK) {
                    break started.elapsed().as_secs_f64();
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let (shown, mirrored) = rt.block_on(pane.until_shows(MARK, || (started.elapsed().as_secs_f64(), len(&mirror))));
    let remote_done = watcher.join().expect("the remote log watcher");
    net.ok(&["cancel", &id]);
    (shown, remote_done, mirrored)
}

/// The link alone (see the module comment): (bytes caught up, seconds).
fn catch_up(net: &Net, file: &Path) -> (u64, f64) {
    let id = net.start_on("box", &["cmd", "--", "cat", &file.display().to_string()]);
    net.ok(&["daemon", "stop"]);
    let started = Instant::now();
    while !matches!(net.remote.state(&id).as_str(), "succeeded" | "failed") {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the remote run never ended"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = len(&net.local.log_path(&id));
    let started = Instant::now();
    net.ok(&["wait", &id]); // starts the daemon, which follows the run again
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(len(&net.local.log_path(&id)), len(&net.remote.log_path(&id)));
    (len(&net.remote.log_path(&id)) - before, secs)
}

/// The same `cat` as a local run: seconds until it has ended here.
fn local_flood(net: &Net, file: &Path) -> f64 {
    let started = Instant::now();
    let id = net.ok(&["run", "-d", "cmd", "--", "cat", &file.display().to_string()]);
    net.ok(&["wait", id.trim()]);
    started.elapsed().as_secs_f64()
}

fn openssh_flood(net: &Net, file: &Path) -> f64 {
    let started = Instant::now();
    let status = Command::new("ssh")
        .args([
            "-F",
            "/dev/null",
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
        ])
        .arg("-o")
        .arg(format!("UserKnownHostsFile={}", net.known_hosts().display()))
        .arg("-i")
        .arg(net.ssh_dir().join("id_ed25519"))
        .args(["-p", &net.sshd.port.to_string()])
        .arg(format!("{}@127.0.0.1", local_user()))
        .arg(format!("cat {}", file.display()))
        .stdout(Stdio::null())
        .status()
        .expect("the OpenSSH client (apt-get install openssh-client)");
    assert!(status.success(), "ssh cat failed");
    started.elapsed().as_secs_f64()
}

fn main() {
    let mb: usize = std::env::var("AGENTS_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let net = Net::new();
    net.know_the_host();
    net.add_host("box", &net.target());
    let data = tempfile::tempdir().unwrap();
    let file = data.path().join("flood.log");
    std::fs::write(&file, coloured_log(mb * MB)).unwrap();

    // The link up and the remote daemon started before anything is timed.
    let warm = net.ok(&["run", "-d", "--host", "box", "cmd", "--", "true"]);
    net.ok(&["wait", warm.trim()]);
    openssh_flood(&net, &file); // the file in the page cache for both

    let (remote_done, mirror_done) = agents_flood(&net, &file);
    let (pane_shown, pane_remote_done, pane_mirrored) = pane_flood(&net, &file);
    let (caught_up, catch_up_secs) = catch_up(&net, &file);
    let local = local_flood(&net, &file);
    let ssh = openssh_flood(&net, &file);
    let rate = |secs: f64| mb as f64 / secs;
    println!("remote flood, {mb} MB of coloured log lines over SSH on loopback");
    println!(
        "  agents: remote log whole after {remote_done:.2}s, local mirror after {mirror_done:.2}s: {:.1} MB/s (link lag {:.0} ms)",
        rate(mirror_done),
        (mirror_done - remote_done) * 1000.0
    );
    println!(
        "  a pane here: the run's final screen shown after {pane_shown:.2}s (its remote log whole after {pane_remote_done:.2}s; {:.1} of {mb} MB mirrored by then)",
        pane_mirrored as f64 / MB as f64
    );
    let link_rate = caught_up as f64 / MB as f64 / catch_up_secs;
    println!(
        "  the link alone: {:.1} MB of log caught up after a daemon restart in {catch_up_secs:.2}s: {link_rate:.1} MB/s",
        caught_up as f64 / MB as f64
    );
    println!("  the same run placed locally: {local:.2}s: {:.1} MB/s", rate(local));
    println!("  ssh cat: {ssh:.2}s: {:.1} MB/s", rate(ssh));
    println!("  agents / ssh throughput: {:.2}", rate(mirror_done) / rate(ssh));
    println!("  final screen shown / ssh cat time: {:.2}", pane_shown / ssh);
    println!("  link alone / ssh throughput: {:.2}", link_rate / rate(ssh));
    println!(
        "  remote / local run throughput: {:.2}",
        rate(mirror_done) / rate(local)
    );
}
