//! Output flowing again after a remote link returns (docs/design.md §10: within
//! 2 s, no byte lost or doubled).
//!
//! `cargo bench --bench remote_reconnect` (needs `/usr/sbin/sshd`). The
//! tests' loopback sshd with the fault-injecting proxy in front of it
//! (`tests/sshd/`); a remote run prints a numbered line every 10 ms. Each
//! round cuts the link, keeps it cut for `AGENTS_BENCH_OUTAGE_MS` (5000:
//! long enough for the daemon's reconnect backoff to reach its cap),
//! restores it, and times from the restore to the first new byte in the
//! local mirror log (`runs/<id>/output.log`, polled every millisecond).
//! At the end the mirror must equal the remote log byte for byte.
//!
//! `AGENTS_BENCH_ROUNDS` sets the number of rounds (7).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/sshd/mod.rs"]
mod sshd;

use std::time::{Duration, Instant};

use sshd::Net;

const BUDGET: Duration = Duration::from_secs(2);

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn mirror_len(net: &Net, id: &str) -> u64 {
    std::fs::metadata(net.local.log_path(id)).map(|m| m.len()).unwrap_or(0)
}

fn link(net: &Net) -> String {
    let hosts = net.json(&["hosts", "ls", "--json"]);
    hosts[0]["link"].as_str().unwrap_or_default().to_string()
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn main() {
    let rounds = env_number("AGENTS_BENCH_ROUNDS", 7).max(1) as usize;
    let outage = Duration::from_millis(env_number("AGENTS_BENCH_OUTAGE_MS", 5000));
    let net = Net::with_proxy();
    net.know_the_host();
    net.add_host("box", &net.target_via_proxy());
    let stop = tempfile::tempdir().expect("temp dir");
    let gate = stop.path().join("stop");
    let script = format!(
        "n=0; while [ ! -e '{}' ]; do echo \"line $n\"; n=$((n+1)); sleep 0.01; done",
        gate.display()
    );
    let id = net.start_on("box", &["cmd", "--", "sh", "-c", &script]);
    net.wait_until("the remote run's output arrives", || mirror_len(&net, &id) > 0);

    let mut times = Vec::with_capacity(rounds);
    for round in 1..=rounds {
        net.proxy().cut();
        net.wait_until("the cut is noticed", || link(&net) != "up");
        std::thread::sleep(outage);
        let held = mirror_len(&net, &id);
        net.proxy().restore();
        let restored = Instant::now();
        while mirror_len(&net, &id) == held {
            assert!(
                restored.elapsed() < common::PATIENCE,
                "no output within {:?} of the restore",
                common::PATIENCE
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        let took = restored.elapsed();
        println!(
            "round {round}: first new byte {:.0} ms after the restore",
            took.as_secs_f64() * 1e3
        );
        times.push(took.as_secs_f64() * 1e3);
    }

    std::fs::write(&gate, b"").expect("stop the remote run");
    net.wait_until("the mirror ends", || {
        let runs = net.json(&["ls", "--all", "--json"]);
        runs.as_array()
            .and_then(|all| all.iter().find(|r| r["id"] == id.as_str()).cloned())
            .is_some_and(|r| r["state"] == "succeeded")
    });
    let mirror = std::fs::read(net.local.log_path(&id)).expect("mirror log");
    let remote = std::fs::read(net.remote.log_path(&id)).expect("remote log");
    assert!(mirror == remote, "the mirror differs from the remote log");

    times.sort_by(f64::total_cmp);
    let (median, p90, max) = (quantile(&times, 0.5), quantile(&times, 0.9), times[times.len() - 1]);
    println!(
        "restore → first new byte here, {rounds} rounds after {} ms outages: median {median:.0} ms, p90 {p90:.0} ms, max {max:.0} ms (budget {} ms: {})",
        outage.as_millis(),
        BUDGET.as_millis(),
        if max <= BUDGET.as_secs_f64() * 1e3 {
            "met"
        } else {
            "MISSED"
        }
    );
    println!("mirror == remote log: {} bytes, none lost or doubled", mirror.len());
}
