//! A routine placed on a remote host (docs/design.md §13, §8): its fire
//! starts the run there through the same placement as `agents run --host`,
//! mirrored here with its routine and scheduled time; a fire on a host
//! that is not configured is a `skipped` record saying so. A real sshd on
//! loopback (`tests/sshd`); the daemon's schedule read from a clock file.

mod common;
mod sshd;

use serde_json::Value;
use sshd::Net;

fn ms(rfc3339: &str) -> String {
    let t = humantime::parse_rfc3339(rfc3339).unwrap();
    (t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64).to_string()
}

fn records(net: &Net, routine: &str) -> Vec<Value> {
    let all = net.json(&["ls", "--all", "--json"]);
    all.as_array()
        .unwrap()
        .iter()
        .filter(|r| r["routine"] == routine)
        .cloned()
        .collect()
}

#[test]
fn a_routine_on_a_host_fires_there_and_is_mirrored_here_with_its_routine() {
    let net = Net::new();
    net.know_the_host();
    net.add_host("box", &net.target());
    let config = net.local.config.path().join("agents/config.toml");
    std::fs::write(
        &config,
        "[routines.remote]\nschedule = \"0 3 * * *\"\ntimezone = \"UTC\"\nhost = \"box\"\nharness = \"cmd\"\nargs = [\"sh\", \"-c\", \"echo ran on the host\"]\n\
         [routines.nowhere]\nschedule = \"0 3 * * *\"\ntimezone = \"UTC\"\nhost = \"nosuchhost\"\nharness = \"cmd\"\nargs = [\"true\"]\n",
    )
    .unwrap();
    let clock = net.local.path().join("test-clock");
    std::fs::write(&clock, ms("2026-01-05T02:59:00Z")).unwrap();
    net.ok(&["daemon", "stop"]);
    let out = net
        .cmd(&["daemon", "start"])
        .env(agents::clock::TEST_CLOCK_VAR, &clock)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    net.wait_until("the scheduler saw its routines", || {
        net.json(&["routines", "ls", "--json"])
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["next_fire"] == "2026-01-05T03:00:00.000Z")
    });

    std::fs::write(&clock, ms("2026-01-05T03:00:02Z")).unwrap();
    net.wait_until("the remote routine's run", || records(&net, "remote").len() == 1);
    let run = records(&net, "remote").remove(0);
    let id = run["id"].as_str().unwrap();
    assert_eq!(run["host"], "box");
    assert_eq!(run["scheduled_at"], "2026-01-05T03:00:00.000Z");
    net.wait_mirrored(id, "ran on the host");
    net.wait_until("it ended", || net.json(&["show", id, "--json"])["state"] == "succeeded");
    // The host's own daemon ran it under the same id.
    let there = net.remote.json(&["show", id, "--json"]);
    assert_eq!(there["state"], "succeeded");

    net.wait_until("the other routine's skipped fire", || {
        records(&net, "nowhere").len() == 1
    });
    let skipped = records(&net, "nowhere").remove(0);
    assert_eq!(skipped["state"], "skipped");
    let reason = skipped["reason"].as_str().unwrap();
    assert!(reason.contains("nosuchhost"), "{reason}");
}
