//! The seeds' contracts (#35). Every owned operation ends with evidence: a
//! prompt or mail queued to a run that then ends does not stay `queued`
//! forever; it gets a terminal state that says why, in `show`, in a retry
//! of its id, and in the run's end event. A stop answers what was asked
//! before it. Diagnostics keep no message: an answer's words are not
//! stored. Queued mail and task results end or arrive once across a
//! supervisor's death and a daemon's.

mod common;

use common::Home;
use serde_json::Value;

/// The demo agent at its prompt, seen idle by the engine.
fn wait_idle(home: &Home, run: &str) {
    home.wait_until(&format!("run {run} is idle"), || home.show(run)["status"] == "idle");
}

#[test]
fn a_prompt_queued_to_a_run_that_ends_is_undelivered_and_says_why() {
    let home = Home::new();
    // The agent thinks until `go` exists, which never comes: the prompts
    // sent after the first wait for good.
    let hold = tempfile::tempdir().unwrap();
    let go = hold.path().join("go").to_string_lossy().into_owned();
    let id = home.start(&["demo", "--", "--think-ms", "300", "--think-until", &go]);
    wait_idle(&home, &id);
    assert!(home.ok(&["send", &id, "one"]).starts_with("delivered"));
    let queued = home.ok(&["send", &id, "two", "--id", "p-two"]);
    assert_eq!(queued.trim(), "queued (prompt p-two)");
    home.ok(&["send", &id, "three", "--id", "p-three"]);
    let mail = home.json(&["mail", "send", &id, "when you can: review parse.rs", "--json"]);
    assert_eq!(mail["state"], "queued", "{mail}");

    home.ok(&["cancel", &id]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "cancelled", "{ended}");

    let shown = home.show(&id);
    let undelivered: Vec<(&str, &str)> = shown["undelivered"]
        .as_array()
        .unwrap_or_else(|| panic!("undelivered prompts in show: {shown:#}"))
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["reason"].as_str().unwrap()))
        .collect();
    let mail_id = mail["id"].as_str().unwrap();
    assert_eq!(
        undelivered,
        [
            ("p-two", "the run ended (cancelled)"),
            ("p-three", "the run ended (cancelled)"),
            (mail_id, "the run ended (cancelled)")
        ],
        "{shown:#}"
    );
    // The mail says so in its own list.
    let listed = home.json(&["mail", "ls", &id, "--json"]);
    let mail = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == mail_id)
        .unwrap()
        .clone();
    assert_eq!(
        (mail["state"].as_str(), mail["reason"].as_str()),
        (Some("undelivered"), Some("the run ended (cancelled)")),
        "{listed:#}"
    );
    assert!(home.ok(&["mail", "ls"]).contains("undelivered"));
    assert!(shown["waiting"].as_array().is_none_or(Vec::is_empty), "{shown:#}");
    let end = shown["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["data"]["state"] == "cancelled")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(end["data"]["undelivered_prompts"], 3, "the end says how many: {end:#}");
    let text = home.ok(&["show", &id]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("unsent ") && l.contains("p-two") && l.contains("the run ended (cancelled)")),
        "{text}"
    );

    // A retry of the prompt learns what became of it.
    let again = home.ok(&["send", &id, "two", "--id", "p-two"]);
    assert_eq!(again.trim(), "undelivered: the run ended (cancelled) (prompt p-two)");
    // The one typed in is the only one the agent saw.
    let typed = home.logs(&id);
    assert!(typed.contains("> one") && !typed.contains("two"), "{typed}");
}

/// A stop answers what was asked before it, as an upgrade does: a cancel
/// whose end its client waits for is answered, not cut off.
#[test]
fn a_stop_answers_the_cancel_asked_before_it() {
    let home = Home::with_config("[engine]\ncancel_sigint_grace_ms = 1000\ncancel_sigterm_grace_ms = 1000\n");
    let id = home.start(&["cmd", "--", "sh", "-c", "trap '' INT; echo ready; exec sleep 600"]);
    home.wait_until("the run ready", || home.logs(&id).contains("ready"));
    let cancel = home
        .cmd(&["cancel", &id])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("agents cancel");
    home.wait_until("the cancel asked", || {
        let events = home.show(&id)["events"].clone();
        events
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["kind"] == "CANCEL_REQUESTED"))
    });
    home.ok(&["daemon", "stop"]);
    let out = cancel.wait_with_output().expect("the cancel's end");
    assert!(
        out.status.success(),
        "the cancel was answered: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(home.wait_end(&id)["state"], "cancelled");
}

/// The words of an answer are a message to the agent: its event says which
/// kind of answer it was, never the words (#35 §4), in the database or not.
#[test]
fn an_answer_s_words_are_not_kept_in_its_event() {
    let home = Home::new();
    let id = home.start(&["demo"]);
    wait_idle(&home, &id);
    home.ok(&["send", &id, "ask"]);
    home.wait_until("the question", || home.show(&id)["status"] == "needs_approval");
    let words = "use the key sk-live-0123456789";
    let _ = home.run(&["answer", &id, words]);
    let shown = home.show(&id);
    let answers: Vec<Value> = shown["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"].as_str().is_some_and(|k| k.starts_with("ANSWER")))
        .cloned()
        .collect();
    assert_eq!(answers.len(), 1, "{shown:#}");
    assert_eq!(answers[0]["data"]["answer"], "text", "{:#}", answers[0]);
    for file in ["agents.db", "agents.db-wal", "daemon.log"] {
        let bytes = std::fs::read(home.path().join(file)).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("sk-live-0123456789"),
            "{file} keeps the answer's words"
        );
    }
}

/// The supervisor of a live run: its harness's parent process.
fn supervisor_of(home: &Home, run: &str) -> i32 {
    let pid = home.show(run)["pid"].as_i64().expect("a live run's pid");
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split(' ').nth(1).unwrap().parse().unwrap()
}

/// A demo agent busy with its first prompt until `go` exists.
fn busy_agent(home: &Home, go: &std::path::Path) -> String {
    let go = go.to_string_lossy().into_owned();
    let id = home.start(&["demo", "--", "--think-ms", "300", "--think-until", &go]);
    wait_idle(home, &id);
    assert!(home.ok(&["send", &id, "one"]).starts_with("delivered"));
    id
}

fn mail_state(home: &Home, id: &str) -> (String, String) {
    let read = home.json(&["mail", "read", id, "--json"]);
    let text = |k: &str| read[k].as_str().unwrap_or_default().to_string();
    (text("state"), text("reason"))
}

/// #35 (mail, worker crash): mail queued to a run whose supervisor dies
/// is `undelivered`, saying the run was interrupted.
#[test]
fn mail_queued_to_a_run_whose_supervisor_dies_is_undelivered_and_says_why() {
    let home = Home::new();
    let hold = tempfile::tempdir().unwrap();
    let id = busy_agent(&home, &hold.path().join("go"));
    let mail = home.json(&["mail", "send", &id, "when you can", "--json"]);
    let mail = mail["id"].as_str().unwrap().to_string();
    assert_eq!(mail_state(&home, &mail).0, "queued");
    common::kill9(supervisor_of(&home, &id));
    home.wait_until("the run interrupted", || home.state(&id) == "interrupted");
    assert_eq!(
        mail_state(&home, &mail),
        ("undelivered".into(), "the run ended (interrupted)".into())
    );
}

/// #35 (mail, orphan recovery): mail queued to a busy run survives its
/// daemon's death: the next daemon adopts the run and delivers it once,
/// when the agent is free.
#[test]
fn mail_queued_before_the_daemon_dies_is_delivered_once_by_the_next() {
    let home = Home::new();
    let hold = tempfile::tempdir().unwrap();
    let go = hold.path().join("go");
    let id = busy_agent(&home, &go);
    let mail = home.json(&["mail", "send", &id, "after the crash", "--json"]);
    let mail = mail["id"].as_str().unwrap().to_string();
    common::kill9(home.daemon_pid().expect("a daemon"));
    std::fs::write(&go, b"").unwrap();
    home.wait_until("delivered by the next daemon", || {
        mail_state(&home, &mail).0 == "delivered"
    });
    home.wait_until("the agent took it", || home.logs(&id).contains("after the crash"));
    let typed = home
        .prompts(&id)
        .iter()
        .filter(|p| p.contains("after the crash"))
        .count();
    assert_eq!(typed, 1, "{:?}", home.prompts(&id));
}

/// #35 (task results, a daemon away): a child that ends while no daemon
/// runs is told to its parent once the next daemon starts, once.
#[test]
fn a_child_that_ends_while_the_daemon_is_stopped_is_told_to_its_parent_once() {
    let home = Home::new();
    let parent = home.start(&["--name", "boss", "demo"]);
    wait_idle(&home, &parent);
    let hold = tempfile::tempdir().unwrap();
    let go = hold.path().join("go");
    let script = format!("while [ ! -e {} ]; do sleep 0.05; done; echo done", go.display());
    let child = home.start(&["--parent", &parent, "--name", "kid", "cmd", "--", "sh", "-c", &script]);
    home.wait_until("the child runs", || home.state(&child) == "running");
    home.ok(&["daemon", "stop"]);
    std::fs::write(&go, b"").unwrap();
    // Any command starts the next daemon.
    home.wait_until("the child's end recorded", || home.state(&child) == "succeeded");
    home.wait_until("the child told, by the next daemon", || {
        home.prompts(&parent)
            .iter()
            .any(|p| p.starts_with("[task result] kid succeeded"))
    });
    home.wait_until("the parent took it", || {
        home.logs(&parent).contains("[task result] kid")
    });
    let told = home
        .prompts(&parent)
        .iter()
        .filter(|p| p.starts_with("[task result] kid"))
        .count();
    assert_eq!(told, 1, "{:?}", home.prompts(&parent));
}

/// A run whose home is deleted under it (`rm -rf` of `AGENTS_HOME`, a test's
/// temporary home) can be reached and recorded by no daemon: its harness
/// is ended and its supervisor exits, rather than both living on unseen.
#[test]
fn a_run_whose_home_is_removed_ends_and_its_supervisor_with_it() {
    let home = Home::new();
    let id = home.start(&["--name", "left", "cmd", "--", "sleep", "600"]);
    let harness = home.show(&id)["pid"].as_i64().unwrap() as i32;
    let supervisor = supervisor_of(&home, &id);
    home.ok(&["daemon", "stop"]);
    std::fs::remove_dir_all(home.path()).unwrap();
    common::wait_until("the harness ended", common::PATIENCE, &mut || {
        !common::pid_alive(harness)
    });
    common::wait_until("and its supervisor", common::PATIENCE, &mut || {
        !common::pid_alive(supervisor)
    });
}
