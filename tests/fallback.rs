//! Account fallback through the real binary: a profile whose harness fails
//! on its account (authentication, quota) hands the run to the next
//! profile of its `fallback` list, as a new attempt of the same run; any
//! other failure ends the run.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{Home, kill9, pid_alive};
use serde_json::Value;

/// A stand-in for Claude Code that answers --version, then runs `body`.
fn fake(dir: &Path, name: &str, body: &str) -> String {
    let script =
        format!("#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then echo \"2.1.197 (Claude Code)\"; exit 0; fi\n{body}\n");
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn setup() -> (Home, tempfile::TempDir) {
    let bin = tempfile::tempdir().unwrap();
    let refused = fake(
        bin.path(),
        "claude-refused",
        "echo 'Invalid API key · Please run /login'; exit 1",
    );
    let broke = fake(bin.path(), "claude-broke", "echo 'Credit balance is too low'; exit 1");
    let good = fake(
        bin.path(),
        "claude-good",
        "printf 'good account, args:'; printf ' %s' \"$@\"; echo; exit 0",
    );
    let crash = fake(bin.path(), "claude-crash", "echo 'panic: index out of range'; exit 3");
    // Refused only once told to: after the test has restarted the daemon.
    let go = bin.path().join("go").display().to_string().replace('\'', r"'\''");
    let patient = fake(
        bin.path(),
        "claude-patient",
        &format!(
            "echo waiting; while [ ! -e '{go}' ]; do sleep 0.02; done; echo 'Invalid API key · Please run /login'; exit 1"
        ),
    );
    let crash_later = fake(
        bin.path(),
        "claude-crash-later",
        &format!("echo waiting; while [ ! -e '{go}' ]; do sleep 0.02; done; echo 'panic: index out of range'; exit 3"),
    );
    let config = format!(
        r#"[engine]
quiet_ms = 300
cancel_sigint_grace_ms = 700
cancel_sigterm_grace_ms = 700

[profiles.work]
family = "claude"
binary = "{refused}"
fallback = ["spare"]

[profiles.spare]
family = "claude"
binary = "{good}"

[profiles.crashy]
family = "claude"
binary = "{crash}"
fallback = ["spare"]

[profiles.patient]
family = "claude"
binary = "{patient}"
fallback = ["spare"]

[profiles.twice]
family = "claude"
binary = "{refused}"
fallback = ["later", "spare"]

[profiles.later]
family = "claude"
binary = "{crash_later}"

[profiles.poor]
family = "claude"
binary = "{refused}"
fallback = ["poorer"]

[profiles.poorer]
family = "claude"
binary = "{broke}"
"#
    );
    (Home::with_config(&config), bin)
}

fn attempts(run: &Value) -> Vec<(String, String, String)> {
    run["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["profile"].as_str().unwrap_or_default().to_string(),
                a["outcome"].as_str().unwrap_or_default().to_string(),
                a["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn an_account_failure_falls_back_to_the_next_profile_as_a_new_attempt_of_the_run() {
    let (home, _bin) = setup();
    let id = home.start(&["work"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    let run = home.show(&id);
    assert_eq!(run["profile"], "spare", "the record says which profile ran");
    assert!(run["command"][0].as_str().unwrap().ends_with("claude-good"));
    let tried = attempts(&run);
    assert_eq!(tried.len(), 2, "{tried:?}");
    assert_eq!((tried[0].0.as_str(), tried[0].1.as_str()), ("work", "failed"));
    assert!(
        tried[0].2.contains("account problem (authentication)"),
        "{}",
        tried[0].2
    );
    assert_eq!((tried[1].0.as_str(), tried[1].1.as_str()), ("spare", "succeeded"));
    let failed = home
        .events(&id)
        .into_iter()
        .find(|e| e["kind"] == "ATTEMPT_FAILED")
        .expect("an ATTEMPT_FAILED event");
    assert_eq!(failed["data"]["next_profile"], "spare");
    let log = String::from_utf8_lossy(&home.raw_log(&id)).into_owned();
    assert!(log.contains("Invalid API key") && log.contains("good account"), "{log}");
    let text = home.ok(&["show", &id]);
    assert!(
        text.contains("attempt    1 profile work · failed: account problem"),
        "{text}"
    );
    assert!(text.contains("(profile spare)"), "{text}");
}

#[test]
fn other_failures_never_fall_back_and_the_last_fallback_ends_the_run() {
    let (home, _bin) = setup();
    let crashed = home.start(&["crashy"]);
    assert_eq!(home.wait_end(&crashed)["state"], "failed");
    let run = home.show(&crashed);
    assert_eq!(attempts(&run).len(), 1, "a crash is not an account problem");
    assert_eq!(run["profile"], "crashy");
    assert!(!home.event_kinds(&crashed).contains(&"ATTEMPT_FAILED".to_string()));

    let poor = home.start(&["poor"]);
    assert_eq!(home.wait_end(&poor)["state"], "failed");
    let tried = attempts(&home.show(&poor));
    assert_eq!(
        tried.len(),
        2,
        "{tried:?} {:?} {}",
        home.event_kinds(&poor),
        home.logs(&poor)
    );
    assert_eq!((tried[1].0.as_str(), tried[1].1.as_str()), ("poorer", "failed"));
    assert!(tried[1].2.contains("exited with code 1"), "{}", tried[1].2);
}

#[test]
fn a_run_re_adopted_after_a_daemon_crash_still_falls_back_when_its_account_fails() {
    let (home, bin) = setup();
    let id = home.start(&["patient"]);
    home.wait_until("the first attempt is running", || home.logs(&id).contains("waiting"));
    let old_daemon = home.daemon_pid().expect("daemon.pid");
    kill9(old_daemon);
    home.wait_until("the daemon is dead", || !pid_alive(old_daemon));

    // Any command brings a new daemon, which re-adopts the run; only then
    // does the first profile's account fail.
    assert_eq!(home.state(&id), "running");
    assert_ne!(home.daemon_pid(), Some(old_daemon));
    std::fs::write(bin.path().join("go"), b"").unwrap();

    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    let run = home.show(&id);
    let tried = attempts(&run);
    assert_eq!(tried.len(), 2, "{tried:?} {:?}", home.event_kinds(&id));
    assert_eq!((tried[0].0.as_str(), tried[0].1.as_str()), ("patient", "failed"));
    assert!(
        tried[0].2.contains("account problem (authentication)"),
        "{}",
        tried[0].2
    );
    assert_eq!((tried[1].0.as_str(), tried[1].1.as_str()), ("spare", "succeeded"));
    assert_eq!(run["attempts"][1]["n"], 2, "{}", run["attempts"]);
    assert_eq!(run["profile"], "spare");
    let failed = home
        .events(&id)
        .into_iter()
        .find(|e| e["kind"] == "ATTEMPT_FAILED")
        .expect("an ATTEMPT_FAILED event");
    assert_eq!(failed["data"]["attempt"], 1);
    assert_eq!(failed["data"]["next_profile"], "spare");
    let log = String::from_utf8_lossy(&home.raw_log(&id)).into_owned();
    assert!(log.contains("Invalid API key") && log.contains("good account"), "{log}");
}

#[test]
fn after_a_daemon_crash_only_the_current_attempts_output_decides() {
    let (home, bin) = setup();
    // The first attempt is refused at once; the second waits, then
    // crashes after the restart: the first one's words are in the log but
    // are not the second's.
    let id = home.start(&["twice"]);
    home.wait_until("the second attempt is running", || {
        home.logs(&id).contains("waiting") && attempts(&home.show(&id)).len() == 2
    });
    let old_daemon = home.daemon_pid().expect("daemon.pid");
    kill9(old_daemon);
    home.wait_until("the daemon is dead", || !pid_alive(old_daemon));
    assert_eq!(home.state(&id), "running");
    std::fs::write(bin.path().join("go"), b"").unwrap();

    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "failed", "{ended}");
    let tried = attempts(&home.show(&id));
    assert_eq!(tried.len(), 2, "a crash is not an account problem: {tried:?}");
    assert_eq!((tried[1].0.as_str(), tried[1].1.as_str()), ("later", "failed"));
    assert!(tried[1].2.contains("exited with code 3"), "{}", tried[1].2);
}
