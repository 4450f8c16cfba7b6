//! Sessions: listed as their own records; resumed natively in the same
//! harness and cwd, and refused while a run of the session may be alive.

mod common;

use common::Home;
use common::fake_claude::{WithClaude, fake_claude};

#[test]
fn a_session_resumes_natively_once_its_run_is_gone_and_not_before() {
    let home = Home::new();
    let claude = WithClaude::new();
    let start = |args: &[&str]| claude.ok(&home, args);
    let first = start(&["run", "-d", "claude"]);
    let session = home.show(&first)["session_id"]
        .as_str()
        .expect("claude runs get a session id")
        .to_string();

    let list = home.json(&["sessions", "list", "--json"]);
    assert_eq!(list["partial"], false, "{list}");
    let row = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session.as_str())
        .expect("listed");
    assert_eq!(row["harness"], "claude");
    assert_eq!(row["run_id"], first.as_str());

    // While the first run may be alive, resuming is refused, nothing started.
    let refused = claude
        .cmd(&home, &["sessions", "resume", "-d", &session])
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

#[test]
fn a_resumed_session_is_passed_the_variables_its_run_named_with_env_again() {
    let home = Home::new();
    let bin = tempfile::tempdir().unwrap();
    fake_claude(bin.path());
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let user_home = tempfile::tempdir().unwrap();
    // Each command runs with its own value of the variable: a resumed run
    // gets the resuming client's value, by the name the first run gave.
    let agents = |args: &[&str], value: &str| {
        let out = home
            .cmd(args)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env("AGENTS_TEST_KEY", value)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let out = String::from_utf8_lossy(&out.stdout).into_owned();
        out.trim().lines().last().unwrap_or_default().to_string()
    };
    let logged = |run: &str, text: &str| {
        let text = text.to_string();
        home.wait_until(&format!("{run} printed {text}"), || {
            String::from_utf8_lossy(&home.raw_log(run)).contains(&text)
        });
    };
    let first = agents(&["run", "-d", "--env", "AGENTS_TEST_KEY", "claude"], "value-at-launch");
    logged(&first, "key=value-at-launch");
    let session = home.show(&first)["session_id"].as_str().unwrap().to_string();
    let record = home.ok(&["show", &first, "--json"]);
    assert!(record.contains("AGENTS_TEST_KEY"), "the name is kept: {record}");
    assert!(!record.contains("value-at-launch"), "never the value: {record}");
    // Indexed now, so a reconstruction below has the conversation to give.
    // The stand-in writes its transcript line after it prints the key (a
    // `sed` later): wait until a read of the transcript returns that line.
    home.wait_until("the first run's transcript line is written and indexed", || {
        let out = home.run(&["transcript", &first, "--json"]);
        out.status.success()
            && String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .any(|m| m["role"] == "user" && m["text"] == "hello")
    });
    home.ok(&["cancel", "--force", &first]);

    let native = agents(&["sessions", "resume", "-d", &session], "value-at-resume");
    logged(&native, &format!("--resume {session}"));
    logged(&native, "key=value-at-resume");
    home.ok(&["cancel", "--force", &native]);

    // The transcript gone, the session is resumed by reconstruction.
    let transcript = home.show(&first)["transcript_path"].as_str().unwrap().to_string();
    std::fs::remove_file(&transcript).unwrap();
    let rebuilt = agents(&["sessions", "resume", "-d", &session], "value-at-rebuild");
    assert_eq!(home.show(&rebuilt)["resume_mode"], "reconstructed");
    logged(&rebuilt, "key=value-at-rebuild");

    let forked = agents(&["sessions", "fork", "-d", &session], "value-at-fork");
    logged(&forked, "key=value-at-fork");
}

#[test]
fn sessions_list_names_the_resumed_run_that_holds_a_session_not_the_cancelled_one() {
    let home = Home::new();
    let bin = tempfile::tempdir().unwrap();
    fake_claude(bin.path());
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let user_home = tempfile::tempdir().unwrap();
    let start = |args: &[&str]| {
        let out = home
            .cmd(args)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let first = start(&["run", "-d", "--name", "original", "claude"]);
    let session = home.show(&first)["session_id"].as_str().unwrap().to_string();
    home.ok(&["cancel", "--force", &first]);
    let second = start(&["sessions", "resume", "-d", &session]);
    home.wait_until("the resumed run runs", || home.state(&second) == "running");
    assert_eq!(home.show(&second)["session_id"], session.as_str());
    let resumed_name = home.show(&second)["name"].as_str().unwrap().to_string();

    let list = home.json(&["sessions", "list", "--json"]);
    let row = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session.as_str())
        .expect("listed")
        .clone();
    assert_eq!(row["run_id"], second.as_str(), "{row}");
    assert_eq!(row["run_name"], resumed_name.as_str(), "{row}");
    assert_eq!(row["run_state"], "running", "{row}");
    let human = home.ok(&["sessions", "list"]);
    let line = human.lines().find(|l| l.starts_with(&session)).unwrap();
    assert!(line.contains("running") && !line.contains("cancelled"), "{line}");

    // Ended too, the newest run that held it is named, not the first.
    home.ok(&["cancel", "--force", &second]);
    let list = home.json(&["sessions", "list", "--json"]);
    let row = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session.as_str())
        .unwrap()
        .clone();
    assert_eq!(row["run_id"], second.as_str(), "{row}");
}

/// Issue #35 (§6): a resume of a session whose run still runs may be
/// queued behind it: the new run waits `pending`, says behind which run,
/// and starts natively once that run has ended; one queued behind it in
/// turn and cancelled never starts; and a queue the daemon held when it
/// stopped ends its run `interrupted`, saying so, never started.
#[test]
fn a_resume_queued_behind_the_sessions_live_run_starts_once_it_ends() {
    let home = Home::new();
    let claude = WithClaude::new();
    let agents = |args: &[&str]| claude.ok(&home, args);
    let first = agents(&["run", "-d", "claude"]);
    let session = home.show(&first)["session_id"].as_str().unwrap().to_string();
    let second = agents(&["sessions", "resume", "-d", "--queue", &session]);
    let third = agents(&["sessions", "resume", "-d", "--queue", &session]);
    let queued_behind = |run: &str| {
        let events = home.events(run);
        let queued = events.iter().find(|e| e["kind"] == "QUEUED").cloned();
        queued.map(|e| e["data"]["behind"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(home.state(&second), "pending");
    let first_name = home.show(&first)["name"].as_str().unwrap().to_string();
    assert_eq!(
        home.show(&second)["evidence"].as_str(),
        Some(format!("queued behind run {first_name}: starts once it ends").as_str())
    );
    let explained = home.run(&["explain", &second]);
    let said = String::from_utf8_lossy(&explained.stderr);
    assert!(said.contains(&format!("is queued behind run {first_name}")), "{said}");
    assert_eq!(queued_behind(&second).as_deref(), Some(first.as_str()));
    assert_eq!(queued_behind(&third).as_deref(), Some(second.as_str()), "in turn");

    home.ok(&["cancel", &third]);
    let cancelled = home.show(&third);
    assert_eq!(cancelled["state"], "cancelled");
    assert!(
        cancelled["reason"]
            .as_str()
            .unwrap()
            .starts_with("cancelled while queued behind run "),
        "{cancelled}"
    );
    // The first run ends (the stand-in leaves on its first line): the
    // queued resume starts, natively, and the cancelled one never.
    home.ok(&["send", &first, "bye"]);
    assert_eq!(home.wait_end(&first)["state"], "succeeded");
    home.wait_until("the queued resume got --resume with the session", || {
        String::from_utf8_lossy(&home.raw_log(&second)).contains(&format!("--resume {session}"))
    });
    assert_eq!(home.state(&second), "running");
    assert!(!home.event_kinds(&third).contains(&"RUN_STARTED".to_string()));

    // Queued when the daemon stops: the queue is gone with it.
    let fourth = agents(&["sessions", "resume", "-d", "--queue", &session]);
    assert_eq!(queued_behind(&fourth).as_deref(), Some(second.as_str()));
    home.ok(&["daemon", "stop"]);
    let ended = home.wait_end(&fourth);
    assert_eq!(ended["state"], "interrupted", "{ended}");
    assert!(
        ended["reason"].as_str().unwrap().contains("queued behind another"),
        "{ended}"
    );
    home.ok(&["cancel", "--force", &second]);
}
