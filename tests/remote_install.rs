//! `agents hosts install` through a real OpenSSH server on loopback
//! (DESIGN §8): this binary is copied into a versioned directory on the
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
    assert!(dir.join("complete").is_file(), "marked complete");
    assert_eq!(
        std::fs::read_link(base.join("current")).unwrap(),
        PathBuf::from(dir.file_name().unwrap()),
        "current points at the new directory"
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

    // An interrupted copy (no marker, a damaged binary) is never trusted:
    // the next install replaces it.
    std::fs::remove_file(dir.join("complete")).unwrap();
    // (Replaced, not written over: the remote daemon runs that file.)
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, b"#!/bin/sh\nexit 3\n").unwrap();
    std::fs::write(dir.join("agents.part"), b"half").unwrap();
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
