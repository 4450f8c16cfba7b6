//! Removing a run placed on a remote host (docs/design.md §13, §8): its
//! records go on the host and here; a live one is refused on either side.
//! A real sshd on loopback (`tests/sshd`).

mod common;
mod sshd;

use sshd::Net;

#[test]
fn a_remote_run_is_removed_on_its_host_and_here() {
    let net = Net::new();
    net.know_the_host();
    net.add_host("box", &net.target());
    let id = net.start_on("box", &["--name", "far", "cmd", "--", "echo", "far away"]);
    net.wait_mirrored(&id, "far away");
    net.wait_until("it ended here", || {
        net.json(&["show", &id, "--json"])["state"] == "succeeded"
    });
    assert_eq!(net.remote.json(&["show", &id, "--json"])["state"], "succeeded");

    let live = net.start_on("box", &["--name", "farlive", "cmd", "--", "sleep", "600"]);
    net.wait_until("running", || net.json(&["show", &live, "--json"])["state"] == "running");
    let err = net.fails(&["rm", "farlive", "--yes"]);
    assert!(err.contains("cancel it first"), "{err}");

    let done = net.json(&["rm", "far", "--yes", "--json"]);
    assert_eq!(done["removed"][0]["host"], "box");
    assert!(done["hosts_failed"].as_array().unwrap().is_empty(), "{done}");
    assert!(net.fails(&["show", &id]).contains("no run matches"));
    let there = net.remote.run(&["show", &id, "--json"]);
    assert!(!there.status.success(), "removed on the host too");
    assert!(!net.remote.path().join("runs").join(&id).exists());
    net.ok(&["cancel", "--force", &live]);
}
