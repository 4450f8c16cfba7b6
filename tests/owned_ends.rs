//! The seeds' contracts (#35). Every owned operation ends with evidence: a
//! prompt or mail queued to a run that then ends does not stay `queued`
//! forever; it gets a terminal state that says why, in `show`, in a retry
//! of its id, and in the run's end event. A stop answers what was asked
//! before it. Diagnostics keep no message: an answer's words are not
//! stored.

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
