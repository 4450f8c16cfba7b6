//! Removing runs against the real binary (docs/design.md §13): an ended run
//! goes with the children it owns — record, events, output — after saying
//! which; a detached child stays; a live run is refused, or cancelled first
//! with --cancel; --ended cleans up in bulk by state and age.

mod common;

use common::Home;
use common::fake_claude::fake_claude;
use serde_json::Value;

fn ended(home: &Home, args: &[&str]) -> String {
    let id = home.start(args);
    home.wait_end(&id);
    id
}

fn names(list: &Value) -> Vec<String> {
    let mut names: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn rm_removes_an_ended_run_with_the_children_it_owns_and_keeps_a_detached_one() {
    let home = Home::new();
    let parent = ended(&home, &["--name", "parent", "cmd", "--", "echo", "parent output"]);
    let child = ended(&home, &["--name", "child", "--parent", "parent", "cmd", "--", "true"]);
    let grandchild = ended(
        &home,
        &["--name", "grandchild", "--parent", "child", "cmd", "--", "true"],
    );
    let detached = ended(
        &home,
        &[
            "--name",
            "loner",
            "--parent",
            "parent",
            "--detached",
            "cmd",
            "--",
            "true",
        ],
    );
    assert!(home.path().join("runs").join(&parent).exists());

    // Not asked and not a terminal: nothing goes.
    let err = home.fails(&["rm", "parent"]);
    assert!(err.contains("3 run(s) would go; add --yes"), "{err}");
    assert_eq!(home.state(&parent), "succeeded");

    let done = home.json(&["rm", "parent", "--yes", "--json"]);
    assert_eq!(names(&done["removed"]), ["child", "grandchild", "parent"]);
    assert_eq!(names(&done["kept"]), ["loner"]);
    for gone in [&parent, &child, &grandchild] {
        let err = home.fails(&["show", gone]);
        assert!(err.contains("no run matches"), "{err}");
        assert!(!home.path().join("runs").join(gone).exists(), "its folder is gone");
    }
    let kept = home.show(&detached);
    assert!(kept["parent_id"].is_null(), "{kept}");
    assert_eq!(kept["root_id"], detached.as_str());
    let listed = home.json(&["ls", "--all", "--json"]);
    assert_eq!(names(&listed), ["loner"]);

    let err = home.fails(&["rm", "nosuch", "--yes"]);
    assert!(err.contains("no run matches 'nosuch'"), "{err}");
}

#[test]
fn a_live_run_is_refused_and_rm_cancel_cancels_it_first() {
    let home = Home::new();
    let id = home.start(&["--name", "sleeper", "cmd", "--", "sleep", "600"]);
    home.wait_until("running", || home.state(&id) == "running");
    let err = home.fails(&["rm", "sleeper", "--yes"]);
    assert!(err.contains("run sleeper is running: cancel it first"), "{err}");
    assert_eq!(home.state(&id), "running");

    let done = home.json(&["rm", "sleeper", "--cancel", "--yes", "--json"]);
    assert_eq!(done["removed"][0]["id"], id.as_str());
    assert!(home.fails(&["show", &id]).contains("no run matches"));
}

#[test]
fn rm_ended_cleans_up_by_state_and_age_and_never_a_live_run() {
    let home = Home::new();
    let out = home.run(&["run", "-d", "--name", "typo", "cmd", "--", "no-such-binary-xyz"]);
    assert!(!out.status.success());
    let ok = ended(&home, &["--name", "fine", "cmd", "--", "true"]);
    let live = home.start(&["--name", "alive", "cmd", "--", "sleep", "600"]);
    home.wait_until("running", || home.state(&live) == "running");
    assert_eq!(home.json(&["show", "typo", "--json"])["state"], "blocked");

    let none = home.json(&["rm", "--ended", "--older-than", "7d", "--yes", "--json"]);
    assert!(none["removed"].as_array().unwrap().is_empty(), "nothing is a week old");
    let done = home.json(&["rm", "--ended", "--state", "blocked", "--yes", "--json"]);
    assert_eq!(names(&done["removed"]), ["typo"]);
    let done = home.json(&["rm", "--ended", "--yes", "--json"]);
    assert_eq!(names(&done["removed"]), ["fine"]);
    assert_eq!(home.state(&live), "running", "a live run is never removed");
    assert!(home.fails(&["show", &ok]).contains("no run matches"));

    let err = home.fails(&["rm", "--ended", "--state", "running", "--yes"]);
    assert!(err.contains("a live run is never removed"), "{err}");
    let err = home.fails(&["rm", "--ended", "--state", "nosuch", "--yes"]);
    assert!(err.contains("not a run state"), "{err}");
}

#[test]
fn sessions_rm_removes_the_conversation_and_keeps_its_runs_and_files_unless_purged() {
    let home = Home::new();
    let bin = tempfile::tempdir().unwrap();
    fake_claude(bin.path());
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let user_home = tempfile::tempdir().unwrap();
    let agents = |args: &[&str]| {
        home.cmd(args)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .output()
            .unwrap()
    };
    let ok = |args: &[&str]| {
        let out = agents(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let session_of = |run: &str| home.show(run)["session_id"].as_str().unwrap().to_string();
    let listed = |all: bool| -> Vec<String> {
        let args: &[&str] = if all {
            &["sessions", "list", "--all", "--json"]
        } else {
            &["sessions", "list", "--json"]
        };
        let list: Value = serde_json::from_str(&ok(args)).unwrap();
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect()
    };

    let first = ok(&["run", "-d", "--name", "first", "claude"]);
    let child = ok(&["run", "-d", "--name", "helper", "--parent", "first", "claude"]);
    let (session, child_session) = (session_of(&first), session_of(&child));
    let transcript = home.show(&first)["transcript_path"].as_str().unwrap().to_string();
    home.wait_until("the transcript is written", || {
        std::path::Path::new(&transcript).exists()
    });
    // A child run's conversation is a child conversation: shown with --all.
    assert!(listed(false).contains(&session));
    assert!(!listed(false).contains(&child_session));
    assert!(listed(true).contains(&child_session));

    let out = agents(&["sessions", "rm", &session]);
    assert!(!out.status.success(), "held by a live run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cancel it first"));
    ok(&["cancel", "--force", &child]);
    ok(&["cancel", "--force", &first]);

    let said = ok(&["sessions", "rm", &session]);
    assert!(said.contains("left alone"), "{said}");
    assert!(!listed(true).contains(&session));
    assert!(std::path::Path::new(&transcript).exists(), "the harness's file stays");
    let shown = ok(&["show", "first"]);
    assert!(shown.contains("(conversation removed)"), "{shown}");

    let child_transcript = home.show(&child)["transcript_path"].as_str().unwrap().to_string();
    home.wait_until("the child's transcript", || {
        std::path::Path::new(&child_transcript).exists()
    });
    let gone: Value = serde_json::from_str(&ok(&[
        "sessions",
        "rm",
        &child_session,
        "--purge-transcripts",
        "--json",
    ]))
    .unwrap();
    assert_eq!(gone["files"][0], child_transcript.as_str());
    assert!(!std::path::Path::new(&child_transcript).exists());
    assert_eq!(gone["runs"][0], child.as_str());
    let out = agents(&["sessions", "rm", "nosuchsession"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session matches"));
}

#[test]
fn an_ended_team_goes_with_its_leader() {
    let home = Home::with_config(
        "[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\n\
         [teams.pair]\nleader = { name = \"lead\", harness = \"cmd\", args = [\"true\"] }\n\
         [[teams.pair.members]]\nname = \"helper\"\nharness = \"cmd\"\nargs = [\"true\"]\n",
    );
    home.ok(&["team", "start", "pair", "-d"]);
    let team = home.json(&["team", "show", "pair", "--json"]);
    let runs: Vec<String> = team["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["run"]["id"].as_str().unwrap().to_string())
        .collect();
    for run in &runs {
        home.wait_end(run);
    }
    let lead = team["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["leader"] == true)
        .unwrap()["run"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let done = home.json(&["rm", &lead, "--yes", "--json"]);
    assert_eq!(done["removed"].as_array().unwrap().len(), runs.len(), "{done}");
    let listed = home.json(&["team", "ls", "--json"]);
    assert!(listed.as_array().unwrap().is_empty(), "{listed}");
}
