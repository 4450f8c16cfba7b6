//! `agents hosts install` through a real OpenSSH server on loopback
//! (docs/design.md §8): this binary is copied into a versioned directory on the
//! host, verified, marked complete, and `current` switched to it.
//!
//! The host is added without `--remote-bin`, so until the install it has
//! no agents (none in the remote login PATH) and runs placed there are
//! blocked. Installs go under `--remote-home`, never the user's HOME.

mod common;
mod sshd;

use std::path::{Path, PathBuf};

use serde_json::Value;
use sshd::Net;

fn sha256_of(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum").arg(path).output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// `.current.*` links left in BASE (a switch that did not finish).
fn temporary_links(base: &Path) -> Vec<String> {
    std::fs::read_dir(base)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".current."))
        .collect()
}

/// A file's permission bits.
fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// A released directory made writable again, as a user would to change it.
fn writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for path in [dir.to_path_buf(), dir.join("agents"), dir.join("complete")] {
        if path.exists() {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
}

/// What an install runs on the host to switch `current` to `dir`.
fn switch_current(base: &Path, dir: &Path) -> std::process::Output {
    std::process::Command::new(common::BIN)
        .args(["hosts", "switch-current"])
        .arg(base)
        .arg(dir.file_name().unwrap())
        .output()
        .unwrap()
}

fn place(net: &Net, script: &str) -> (String, std::process::Output) {
    let out = net.run(&["run", "-d", "--host", "box", "cmd", "--", "sh", "-c", script]);
    (String::from_utf8_lossy(&out.stdout).trim().to_string(), out)
}

#[test]
fn install_copies_this_binary_verifies_it_and_the_host_then_takes_runs() {
    let net = Net::new();
    net.know_the_host();
    net.ok(&[
        "hosts",
        "add",
        "box",
        &net.target(),
        "--remote-home",
        &net.remote_home(),
    ]);

    // No agents there yet: a run is blocked and says so.
    let (id, out) = place(&net, "echo never");
    assert!(!out.status.success());
    let reason = net.json(&["show", &id, "--json"])["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(reason.contains("not found"), "{reason}");

    let first: Value = net.json(&["hosts", "install", "box", "--json"]);
    assert_eq!(first["installed"], true, "{first}");
    assert_eq!(first["version"], format!("agents {}", env!("CARGO_PKG_VERSION")));
    let base = net.remote.path().join("bin");
    let current = base.join("current/agents");
    assert_eq!(first["current"], current.display().to_string());
    assert_eq!(first["remote_bin"], current.display().to_string(), "{first}");
    assert_eq!(first["remote_bin_changed"], true);
    let path = PathBuf::from(first["path"].as_str().unwrap());
    let dir = path.parent().unwrap().to_path_buf();
    let sha = first["sha256"].as_str().unwrap().to_string();
    assert_eq!(
        dir.file_name().unwrap().to_string_lossy(),
        format!("{}-{}", env!("CARGO_PKG_VERSION"), &sha[..12])
    );
    assert_eq!(sha256_of(&path), sha, "the copy is the daemon's binary, byte for byte");
    let manifest = std::fs::read_to_string(dir.join("complete")).expect("marked complete");
    assert_eq!(
        manifest,
        format!("agents {}\nsha256 {sha} agents\n", env!("CARGO_PKG_VERSION")),
        "its manifest"
    );
    assert_eq!(
        [mode_of(&dir), mode_of(&path), mode_of(&dir.join("complete"))],
        [0o555, 0o555, 0o444],
        "a released directory is read-only"
    );
    assert_eq!(
        std::fs::read_link(base.join("current")).unwrap(),
        PathBuf::from(dir.file_name().unwrap()),
        "current points at the new directory"
    );
    assert_eq!(
        temporary_links(&base),
        Vec::<String>::new(),
        "the switch renamed its temporary link onto current"
    );
    let hosts = net.json(&["hosts", "ls", "--json"]);
    assert_eq!(hosts[0]["remote_bin"], current.display().to_string());

    let report = net.ok(&["hosts", "check", "box"]);
    assert!(report.contains("ok: runs can be placed"), "{report}");
    let (id, out) = place(&net, "echo installed-ok");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ended = net.json(&["wait", &id, "--json"]);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert!(net.ok(&["logs", &id]).contains("installed-ok"));

    // The same version again copies nothing and says so.
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    let again = net.ok(&["hosts", "install", "box"]);
    assert!(
        again.contains("already installed") && again.contains("nothing copied"),
        "{again}"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified);

    // A released binary changed since (a damaged disk, a hand edit) is
    // never switched to: the switch checks it against the manifest, and
    // the next install, finding it changed, copies it again.
    writable(&dir);
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, b"#!/bin/sh\nexit 3\n").unwrap();
    let refused = switch_current(&base, &dir);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("does not match its manifest") && said.lines().count() == 1,
        "{said}"
    );
    let again: Value = net.json(&["hosts", "install", "box", "--json"]);
    assert_eq!(again["installed"], true, "copied again: {again}");
    assert_eq!(sha256_of(&path), sha);
    assert_eq!(mode_of(&dir), 0o555, "read-only again");

    // An interrupted copy (no marker, a damaged binary) is never trusted:
    // the next install replaces it.
    writable(&dir);
    std::fs::remove_file(dir.join("complete")).unwrap();
    // (Replaced, not written over: the remote daemon runs that file.)
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, b"#!/bin/sh\nexit 3\n").unwrap();
    std::fs::write(dir.join("agents.part"), b"half").unwrap();
    // What the install runs on the host refuses a directory without its marker.
    let refused = switch_current(&base, &dir);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("not a complete install") && said.lines().count() == 1,
        "{said}"
    );
    let third: Value = net.json(&["hosts", "install", "box", "--json"]);
    assert_eq!(third["installed"], true, "{third}");
    assert_eq!(third["path"], first["path"]);
    assert_eq!(sha256_of(&path), sha);
    assert!(dir.join("complete").is_file());
    assert!(!dir.join("agents.part").exists());
    assert_eq!(third["remote_bin_changed"], false, "already following current");
}

#[test]
fn install_leaves_an_explicit_remote_bin_alone() {
    let net = Net::new();
    net.know_the_host();
    net.add_host("box", &net.target());
    let done: Value = net.json(&["hosts", "install", "box", "--json"]);
    assert_eq!(done["remote_bin"], common::BIN, "{done}");
    assert_eq!(done["remote_bin_changed"], false);
    let said = net.ok(&["hosts", "install", "box"]);
    assert!(said.contains("keeps its --remote-bin"), "{said}");
}

/// This binary with bytes appended: another build (another SHA-256, so
/// another versioned directory) that runs exactly the same.
fn another_build(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let copy = dir.join("agents");
    let mut bytes = std::fs::read(common::BIN).unwrap();
    bytes.extend_from_slice(b"\nanother build\n");
    std::fs::write(&copy, bytes).unwrap();
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
    copy
}

/// The host's daemon, asked on the host itself.
fn remote_daemon(net: &Net) -> Value {
    net.remote.json(&["daemon", "status", "--json"])
}

#[test]
fn installing_another_build_restarts_the_hosts_daemon_and_its_runs_live_on() {
    let net = Net::new();
    net.know_the_host();
    net.ok(&[
        "hosts",
        "add",
        "box",
        &net.target(),
        "--remote-home",
        &net.remote_home(),
    ]);
    let first: Value = net.json(&["hosts", "install", "box", "--json"]);
    assert_eq!(first["daemon_restarted"], false, "no daemon ran there: {first}");
    let first_path = std::fs::canonicalize(first["path"].as_str().unwrap()).unwrap();

    // A run live on the host, echoing each line typed into it.
    let id = net.start_on(
        "box",
        &[
            "cmd",
            "--",
            "sh",
            "-c",
            "echo ready; while read l; do echo got-$l; done",
        ],
    );
    net.wait_mirrored(&id, "ready");
    net.ok(&["send", &id, "before"]);
    net.wait_mirrored(&id, "got-before");
    let before = remote_daemon(&net);
    assert_eq!(before["exe"], first_path.display().to_string(), "{before}");
    let harness_pid = net.remote.show(&id)["pid"].clone();
    assert!(harness_pid.is_i64(), "{harness_pid}");

    // The same build again leaves the daemon alone.
    let same: Value = net.json(&["hosts", "install", "box", "--json"]);
    assert_eq!(same["installed"], false);
    assert_eq!(same["daemon_restarted"], false, "{same}");
    assert_eq!(same["daemon_pid"], before["pid"]);
    assert_eq!(remote_daemon(&net)["pid"], before["pid"]);

    // Here, another build takes over (the daemon is started by its client's
    // binary) and installs itself on the host.
    let build = tempfile::tempdir().unwrap();
    let other = another_build(build.path());
    net.ok(&["daemon", "stop"]);
    let template = net.cmd(&[]);
    let mut install = std::process::Command::new(&other);
    install.args(["hosts", "install", "box"]);
    for (key, value) in template.get_envs() {
        match value {
            Some(v) => install.env(key, v),
            None => install.env_remove(key),
        };
    }
    let out = install.output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.starts_with("installed agents"), "{said}");
    assert!(
        said.contains("restarted the daemon on box on this build")
            && said.contains(&format!("(pid {} → ", before["pid"]))
            && said.contains("its 1 live run(s) carry on"),
        "{said}"
    );

    let after = remote_daemon(&net);
    assert_ne!(after["pid"], before["pid"], "{after}");
    let second = std::fs::canonicalize(net.remote.path().join("bin/current/agents")).unwrap();
    assert_ne!(second, first_path);
    assert_eq!(after["exe"], second.display().to_string(), "{after}");
    assert_eq!(after["live_runs"], 1, "{after}");

    // The same run, the same harness process, still takes input and its
    // output still reaches this side.
    assert_eq!(net.remote.state(&id), "running");
    assert_eq!(net.remote.show(&id)["pid"], harness_pid);
    net.ok(&["send", &id, "after"]);
    net.wait_mirrored(&id, "got-after");
    assert_eq!(net.json(&["show", &id, "--json"])["state"], "running");
    let local_daemon = net.json(&["daemon", "status", "--json"]);
    assert_eq!(local_daemon["exe"], other.display().to_string());
}
