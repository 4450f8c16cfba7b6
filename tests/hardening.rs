//! Hardening (issue #11): a stopped daemon answers clients with a bounded
//! wait and a one-line error naming it; names that read as ids and sizes
//! out of range are refused alike, before anything is stored.

mod common;

use common::Home;
use serde_json::Value;

#[test]
fn a_stopped_daemon_gets_a_one_line_error_naming_it_and_serves_again_when_continued() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sleep", "60"]);
    let pid = home.json(&["daemon", "status", "--json"])["pid"].as_i64().unwrap() as i32;
    let pid = nix::unistd::Pid::from_raw(pid);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    // Continued however the test ends, so the home's clean-up can stop it.
    struct Continue(nix::unistd::Pid);
    impl Drop for Continue {
        fn drop(&mut self) {
            let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGCONT);
        }
    }
    let _continue = Continue(pid);
    for args in [&["ls"][..], &["daemon", "status"][..], &["send", &id, "hello"][..]] {
        let out = home.run(args);
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("the daemon (pid {pid}) does not answer")) && stderr.contains("kill -CONT"),
            "{args:?}: {stderr}"
        );
    }
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    assert_eq!(home.state(&id), "running");
}

#[test]
fn a_name_that_reads_as_an_id_and_a_size_out_of_range_are_refused_before_anything_is_stored() {
    let home = Home::new();
    let first = home.start(&["cmd", "--", "sleep", "60"]);
    let prefix: String = first.chars().take(6).collect();
    for args in [
        vec!["run", "-d", "--name", prefix.as_str(), "cmd", "--", "true"],
        vec!["run", "-d", "--name", "ABC123", "cmd", "--", "true"],
        vec!["run", "-d", "--size", "0x0", "cmd", "--", "true"],
        vec!["run", "-d", "--size", "10x", "cmd", "--", "true"],
    ] {
        let out = home.run(&args);
        assert!(!out.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    let listed: Value = home.json(&["ls", "--all", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "only the first run: {listed}");
    // The prefix still finds the run, not a run named after it.
    assert_eq!(home.show(&prefix)["id"], first.as_str());
    assert!(
        home.run(&["run", "-d", "--name", "abc-1", "cmd", "--", "true"])
            .status
            .success()
    );
}
