//! End to end with the real Auggie CLI: `agents run auggie` in a PTY with a
//! private HOME and only what an Auggie user exports: its login as
//! `AUGMENT_SESSION_AUTH` (whose tenant is a small mock of Augment's
//! service on loopback) and `AUGMENT_DISABLE_AUTO_UPDATE`. Only the service
//! is mocked; Auggie writes its real session file and resumes it.
//!
//! What it proves: its workspace indexing question is seen on the screen
//! as a question (`needs_approval`, with its own why) and answered with a
//! choice typed in; the session Auggie mints is found in `~/.augment/sessions/<id>.json`
//! once its first exchange is written; a tool it was told to ask about
//! (`--permission launch-process:ask-user`) shows its approval box as
//! `needs_approval`, which `agents answer yes` (`a`) allows; `agents
//! transcript` reads the reply, the `launch-process` call and its result;
//! `agents sessions resume` continues the same session (`--resume ID`) in
//! the same file, and `fork` says plainly that Auggie cannot.
//!
//! Needs the CLI: `AGENTS_TEST_AUGGIE=/path/to/auggie` (and
//! `AGENTS_REQUIRE_AUGGIE=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::time::Duration;

use common::Home;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::{Value, json};

/// The version `.ci/run` installs and the fixture was recorded with.
const PINNED: &str = "0.36.0";

/// The mock service. `get-models` names one model and
/// `agents/list-remote-tools` none (Auggie waits on both before its
/// composer opens); `chat-stream` answers in Augment's NDJSON: a user text
/// holding `SHELL` gets a `launch-process` call (`touch perm-marker`), other
/// texts `Mock reply to: <the text>`, a tool result `Ran it.`; its `silent`
/// side requests (a title) get a title and are not recorded as prompts.
/// Everything else (settings, telemetry) is answered `{}`.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let json = |v: Value| Reply::ok("application/json", v.to_string());
    match r.path().trim_start_matches('/') {
        "get-models" => json(json!({ "default_model": "mock-model", "feature_flags": {},
            "models": [{ "name": "mock-model", "suggested_prefix_char_count": 1000,
                "suggested_suffix_char_count": 1000 }] })),
        "agents/list-remote-tools" => json(json!({ "tools": [] })),
        "chat-stream" => chat(&r.json(), prompts),
        _ => json(json!({})),
    }
}

/// End of turn, and the model asking for a tool (`ChatStopReason`).
const END_TURN: u64 = 1;
const TOOL_USE_REQUESTED: u64 = 3;

fn chat(req: &Value, prompts: &Prompts) -> Reply {
    let nodes = req["nodes"].as_array().cloned().unwrap_or_default();
    let text: String = nodes
        .iter()
        .filter_map(|n| n["text_node"]["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let has_result = nodes.iter().any(|n| n["type"] == 1);
    let says = |text: &str| {
        vec![
            json!({ "text": text, "nodes": [] }),
            json!({ "text": "", "nodes": [], "stop_reason": END_TURN }),
        ]
    };
    let lines = if req["silent"] == true {
        says("Mock title")
    } else if has_result {
        says("Ran it.")
    } else {
        let text = text.trim().to_string();
        prompts.push(text.clone());
        if text.contains("SHELL") {
            let input = json!({ "command": "touch perm-marker", "wait": true, "max_wait_seconds": 30 });
            let call = json!({ "id": 1, "type": 5, "content": "", "tool_use": { "tool_use_id": "toolu_mock1",
                "tool_name": "launch-process", "input_json": input.to_string() } });
            vec![json!({ "text": "", "nodes": [call], "stop_reason": TOOL_USE_REQUESTED })]
        } else {
            says(&format!("Mock reply to: {text}"))
        }
    };
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    Reply::ok("application/json", body)
}

/// How long a step of a real Auggie may take: a 13 MB script starting in
/// node on a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// Auggie's composer is up with no question over it.
fn composer_up(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    screen.contains("? to show shortcuts")
        && !screen.contains("[A]llow")
        && home.show(run)["status"] != "needs_approval"
}

/// Its status's why.
fn why(home: &Home, run: &str) -> String {
    home.show(run)["evidence"].as_str().unwrap_or("").to_string()
}

#[test]
fn a_real_auggie_run_asks_finds_its_session_and_resumes_it() {
    let Some(auggie) = real_cli::pinned_binary("AUGGIE", "auggie", PINNED) else {
        return;
    };
    let api = MockApi::start("", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&auggie, "auggie");
    let path = bin.path();
    // Past its first-run welcome, as anyone who has run it once is.
    let state = user_home.path().join(".augment");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join(".auggie.json"), r#"{"onboardingVersion":"1.0.0"}"#).unwrap();
    let login = json!({ "accessToken": "mock-token", "tenantURL": format!("{}/", api.url),
        "scopes": ["read", "write"] });

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env("AUGMENT_SESSION_AUTH", login.to_string())
            .env("AUGMENT_DISABLE_AUTO_UPDATE", "1");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&[
        "run",
        "-d",
        "auggie",
        "--size",
        "120x40",
        "--",
        "--permission",
        "launch-process:ask-user",
    ]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], PINNED);
    assert_eq!(
        run["env_harness"],
        json!(["AUGMENT_DISABLE_AUTO_UPDATE", "AUGMENT_SESSION_AUTH"])
    );

    // In a workspace new to it: whether to index it, answered in the pane
    // with "2" (never).
    wait(&home, &id, "the indexing question is a question", || {
        why(&home, &id).contains("indexing question")
    });
    home.ok(&["answer", &id, "2"]);
    wait(&home, &id, "auggie's composer is up", || composer_up(&home, &id));

    home.ok(&["send", &id, "hello narwhal"]);
    wait(&home, &id, "the reply is in the transcript", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    // Auggie minted the session; its file is found once written.
    let run = home.show(&id);
    let session = run["session_id"].as_str().expect("the session is found").to_string();
    let file = user_home.path().join(format!(".augment/sessions/{session}.json"));
    assert_eq!(run["transcript_path"], file.to_string_lossy().as_ref());
    assert_eq!(api.prompts.all(), ["hello narwhal"]);

    // A command it was told to ask about: its approval box is the evidence.
    wait(&home, &id, "the first turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "auggie asks to run the command", || {
        home.show(&id)["status"] == "needs_approval" && home.logs(&id).contains("[A]llow")
    });
    assert!(home.logs(&id).contains("Tool Approval Required"), "{}", home.logs(&id));
    assert!(!cwd.join("perm-marker").exists(), "it asked before it ran");
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    let messages = transcript(&home, &id);
    let call = messages
        .iter()
        .find(|m| m["tool_calls"][0]["name"] == "launch-process")
        .unwrap_or_else(|| panic!("the call is in the transcript: {messages:?}"));
    assert_eq!(call["tool_calls"][0]["input"]["command"], "touch perm-marker");
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["text"].as_str().is_some_and(|t| t.contains("<return-code>"))),
        "{messages:?}"
    );

    wait(&home, &id, "the second turn is over", || composer_up(&home, &id));
    home.ok(&["cancel", &id]);
    home.wait_end(&id);

    // Resume: `auggie --resume ID`, the same session in the same file.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let argv = real_cli::argv_of(&home, &again);
    assert!(argv.ends_with(&["--resume".to_string(), session.clone()]), "{argv:?}");
    assert_eq!(home.show(&again)["session_id"], session.as_str());
    wait(&home, &again, "the resumed composer is up", || {
        composer_up(&home, &again)
    });
    home.ok(&["send", &again, "back again"]);
    wait(
        &home,
        &again,
        "the resumed reply is in the session's transcript",
        || has_message(&transcript(&home, &session), "assistant", "Mock reply to: back again"),
    );
    real_cli::each_user_text_once(&home, &session, &["hello narwhal", "SHELL please", "back again"]);
    assert!(std::fs::read_to_string(&file).unwrap().contains("back again"));
    home.ok(&["cancel", &again]);
    home.wait_end(&again);

    // No fork: said plainly, nothing started.
    let mut cmd = home.cmd(&["sessions", "fork", &session, "-d"]);
    cmd.current_dir(&cwd).env("PATH", &path).env("HOME", user_home.path());
    let out = cmd.output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("auggie cannot fork a session"), "{err}");
}
