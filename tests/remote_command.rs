//! Hosts reached by a command instead of SSH (docs/design.md §8): what is
//! particular to them — adding, listing and checking one, a command that
//! takes one shell line, and the ways to get it wrong. Everything else a
//! host does is proven over a command by the `remote_*_by_command` tests
//! (the remote test files again, through `tests/sshd/gate.rs`).

mod common;
mod sshd;

use serde_json::Value;
use sshd::{Gate, Net};

/// A gate giving the host's side the environment sshd gives it.
fn gate(net: &Net) -> Gate {
    Gate::new(&net.sshd.dir.path().join("home"), net.remote.config.path())
}

fn add(net: &Net, name: &str, command: &str, extra: &[&str]) {
    let home = net.remote_home();
    let mut args = vec!["hosts", "add", name, "--command", command];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--remote-bin", common::BIN, "--remote-home", &home]);
    net.ok(&args);
}

/// Runs `echo WORD` on `host` and returns what `agents logs` shows of it.
fn echo_there(net: &Net, host: &str, word: &str) -> String {
    let id = net.start_on(host, &["cmd", "--", "sh", "-c", &format!("echo {word}")]);
    let ended: Value = serde_json::from_str(&net.ok(&["wait", &id, "--json"])).unwrap();
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert_eq!(ended["host"], host);
    assert_eq!(net.remote.show(&id)["state"], "succeeded", "the run ran there");
    net.ok(&["logs", &id])
}

#[test]
fn a_host_reached_by_a_command_is_added_checked_and_takes_runs() {
    let net = Net::new();
    let gate = gate(&net);
    add(&net, "box", &gate.command(), &[]);

    let table = net.ok(&["hosts", "ls"]);
    assert!(table.contains(&format!("$ {}", gate.command())), "{table}");
    let hosts = net.json(&["hosts", "ls", "--json"]);
    assert_eq!(hosts[0]["command"], serde_json::json!([gate.command()]), "{hosts}");
    assert_eq!(hosts[0]["target"], "");

    let check = net.json(&["hosts", "check", "box", "--json"]);
    assert_eq!(check["ok"], true, "{check}");
    assert_eq!(check["address"], gate.command());
    assert!(check["host_key"].as_str().unwrap().starts_with("none"), "{check}");
    assert_eq!(check["remote_daemon"]["home"], net.remote_home(), "{check}");
    let report = net.ok(&["hosts", "check", "box"]);
    assert!(report.contains("ok: runs can be placed"), "{report}");

    // No host key here to trust: said in one line, nothing written.
    let err = net.fails(&["hosts", "trust", "box"]);
    assert!(err.contains("reached by a command, not SSH"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(!net.known_hosts().exists());

    let logs = echo_there(&net, "box", "over-a-command");
    assert!(logs.contains("over-a-command"), "{logs}");
    assert!(gate.accepted() >= 2, "the probe and serve went through the gate");
}

#[test]
fn a_command_that_hands_a_line_to_a_shell_there_takes_it_whole() {
    // As `gcloud compute ssh VM --`: what follows is one line for a shell
    // there. Here the gate's own `sh -c` stands for that shell.
    let net = Net::new();
    let gate = gate(&net);
    add(&net, "vm", &format!("{} sh -c", gate.command()), &["--shell-line"]);
    assert_eq!(net.json(&["hosts", "ls", "--json"])[0]["shell_line"], true);
    let logs = echo_there(&net, "vm", "one-line");
    assert!(logs.contains("one-line"), "{logs}");
}

#[test]
fn a_host_command_given_wrong_is_refused_in_one_line() {
    let net = Net::new();
    let usage = |args: &[&str]| {
        let out = net.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    };
    // Neither a target nor a command; both; --shell-line alone.
    usage(&["hosts", "add", "x"]);
    usage(&["hosts", "add", "x", "me@there", "--command", "docker exec -i box"]);
    usage(&["hosts", "add", "x", "me@there", "--shell-line"]);
    for (command, says) in [("", "needs a program"), ("'unclosed", "--command")] {
        let err = net.fails(&["hosts", "add", "x", "--command", command]);
        assert!(err.contains(says), "{command:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert_eq!(net.json(&["hosts", "ls", "--json"]), serde_json::json!([]));

    // A command not installed here: the check says which.
    net.ok(&["hosts", "add", "nowhere", "--command", "no-such-cli-here exec -i box"]);
    let out = net.run(&["hosts", "check", "nowhere"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("cannot run no-such-cli-here"), "{report}");
    let err = net.fails(&["run", "--host", "nowhere", "cmd", "--", "true"]);
    assert!(err.contains("no-such-cli-here"), "{err}");
}
