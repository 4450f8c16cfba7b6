//! Sessions: listed as their own records; resumed natively in the same
//! harness and cwd, and refused while a run of the session may be alive.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::Home;

/// A stand-in for Claude Code: answers --version, prints its arguments and
/// waits for input, like the interactive CLI.
fn fake_claude(dir: &std::path::Path) {
    let script = "#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then echo \"2.1.197 (Claude Code)\"; exit 0; fi\nprintf 'args:'; printf ' %s' \"$@\"; printf '\\n'\nread -r line\n";
    let path = dir.join("claude");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_session_resumes_natively_once_its_run_is_gone_and_not_before() {
    let home = Home::new();
    let bin = tempfile::tempdir().unwrap();
    fake_claude(bin.path());
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let start = |args: &[&str]| {
        let out = home.cmd(args).env("PATH", &path).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let first = start(&["run", "-d", "claude"]);
    let session = home.show(&first)["session_id"]
        .as_str()
        .expect("claude runs get a session id")
        .to_string();

    let list = home.json(&["sessions", "list", "--json"]);
    let row = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session.as_str())
        .expect("listed");
    assert_eq!(row["harness"], "claude");
    assert_eq!(row["run_id"], first.as_str());

    // While the first run may be alive, resuming is refused, nothing started.
    let refused = home
        .cmd(&["sessions", "resume", "-d", &session])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("may still be alive"), "{err}");
    assert_eq!(home.json(&["ls", "--all", "--json"]).as_array().unwrap().len(), 1);

    home.ok(&["cancel", "--force", &first]);
    let second = start(&["sessions", "resume", "-d", &session[..8]]);
    assert_ne!(second, first);
    let run = home.show(&second);
    assert_eq!(run["harness"], "claude", "never another family");
    assert_eq!(run["cwd"], home.show(&first)["cwd"]);
    home.wait_until("the resumed harness got --resume with the session", || {
        String::from_utf8_lossy(&home.raw_log(&second)).contains(&format!("--resume {session}"))
    });
    assert!(home.event_kinds(&second).contains(&"RESUME_OF".to_string()));

    let unknown = home.run(&["sessions", "resume", "no-such-session"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no session matches"));
}
