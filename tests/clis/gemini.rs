//! End to end with the real Gemini CLI: `agents run gemini` in a PTY with
//! a private HOME whose settings choose API-key auth and trust the project,
//! and `GOOGLE_GEMINI_BASE_URL` pointing at a small mock of the Gemini API
//! on loopback (`models/M:streamGenerateContent?alt=sse`, and the
//! `generateContent` its model router asks first). Only the model is
//! mocked; Gemini writes its real chat file and resumes its real session.
//!
//! What it proves: the run finds its session and chat file in Gemini's
//! project registry (`~/.gemini/projects.json` → `tmp/<name>/chats`);
//! `agents transcript` reads the reply from the real JSONL chat, a tool
//! call and its result included; a `run_shell_command` permission prompt
//! (drawn in a box) is seen on the screen as `needs_approval` and
//! `agents answer yes` allows it; `/quit` ends the run `succeeded`; and
//! `agents sessions resume` continues the same session (`--resume ID`) in
//! the same file.
//!
//! Needs the CLI: `AGENTS_TEST_GEMINI=/path/to/gemini` (and
//! `AGENTS_REQUIRE_GEMINI=1` makes a missing CLI fail instead of skip).
//!
//! Gemini 0.61 takes an Enter that comes within 30 ms of typed text (its
//! `FAST_RETURN_TIMEOUT`) as a newline; its adapter holds the Enter back
//! (`Adapter::enter_delay_ms`), which this test depends on.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Home;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::{Value, json};

/// The version the fixture was recorded with and `.ci/run` installs.
const PINNED: &str = "0.61.0";

/// The mock Gemini API. A conversation turn whose last user text holds
/// `SHELL` is answered with a `run_shell_command` call (`touch
/// perm-marker`); a turn that sends function responses back gets `Ran
/// it.`; any other turn `Mock reply to: <the text>`. The model router's
/// `generateContent` gets a low complexity score; other paths 404.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let path = r.path();
    if path.contains(":streamGenerateContent") {
        let (parts, prompt) = turn(&r.json());
        if let Some(prompt) = prompt {
            prompts.push(prompt);
        }
        let chunk = json!({
            "candidates": [{ "content": { "role": "model", "parts": parts }, "finishReason": "STOP", "index": 0 }],
            "usageMetadata": { "promptTokenCount": 40, "candidatesTokenCount": 7, "cachedContentTokenCount": 10, "totalTokenCount": 47 },
        });
        Reply::ok("text/event-stream", format!("data: {chunk}\r\n\r\n"))
    } else if path.contains(":generateContent") {
        let routed = json!({ "complexity_reasoning": "a mock", "complexity_score": 5 }).to_string();
        let reply = json!({
            "candidates": [{ "content": { "role": "model", "parts": [{ "text": routed }] }, "finishReason": "STOP", "index": 0 }],
            "usageMetadata": { "promptTokenCount": 5, "candidatesTokenCount": 3, "totalTokenCount": 8 },
        });
        Reply::ok("application/json", reply.to_string())
    } else if path.contains(":countTokens") {
        Reply::ok("application/json", json!({ "totalTokens": 7 }).to_string())
    } else {
        Reply::not_found()
    }
}

/// The model's parts for a conversation turn, and the user's text if the
/// turn was a prompt (not function responses going back).
fn turn(req: &Value) -> (Value, Option<String>) {
    let last = req["contents"]
        .as_array()
        .and_then(|c| c.last())
        .cloned()
        .unwrap_or(Value::Null);
    let parts = last["parts"].as_array().cloned().unwrap_or_default();
    if parts.iter().any(|p| p.get("functionResponse").is_some()) {
        return (json!([{ "text": "Ran it." }]), None);
    }
    let text = parts
        .iter()
        .rev()
        .find_map(|p| p["text"].as_str())
        .unwrap_or_default()
        .to_string();
    let reply = if text.contains("SHELL") {
        json!([{ "functionCall": { "name": "run_shell_command",
            "args": { "command": "touch perm-marker", "description": "Create a marker file" } } }])
    } else {
        json!([{ "text": format!("Mock reply to: {text}") }])
    };
    (reply, Some(text))
}

/// How long a step of a real Gemini may take: node starts it in seconds,
/// but CI is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// Gemini's composer is up and empty: the run takes a prompt.
fn composer_up(home: &Home, run: &str) -> bool {
    home.logs(run).contains("Type your message")
}

#[test]
fn a_real_gemini_run_finds_its_chat_asks_permission_and_resumes() {
    let Some(gemini) = real_cli::pinned_binary("GEMINI", "gemini", PINNED) else {
        return;
    };
    let api = MockApi::start("", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let dot = user_home.path().join(".gemini");
    std::fs::create_dir_all(&dot).unwrap();
    // API-key auth without the first-run dialog, no telemetry or update
    // check, and the project trusted (else Gemini asks first).
    std::fs::write(
        dot.join("settings.json"),
        json!({
            "security": { "auth": { "selectedType": "gemini-api-key" } },
            "privacy": { "usageStatisticsEnabled": false },
            "general": { "enableAutoUpdate": false, "enableAutoUpdateNotification": false },
        })
        .to_string(),
    )
    .unwrap();
    let mut trusted = serde_json::Map::new();
    trusted.insert(cwd.to_string_lossy().into_owned(), json!("TRUST_FOLDER"));
    std::fs::write(dot.join("trustedFolders.json"), Value::Object(trusted).to_string()).unwrap();
    let bin = BinDir::with(&gemini, "gemini");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("GEMINI_CLI_HOME")
            .env("GEMINI_API_KEY", "mock-key")
            .env("GOOGLE_GEMINI_BASE_URL", &api.url);
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    // The key and endpoint are only exported, as in a user's shell: Gemini
    // CLI's own variables pass by default (issue #9).
    let id = agents(&["run", "-d", "gemini", "--size", "120x40"]);
    assert_eq!(home.show(&id)["harness_version"], PINNED);
    assert_eq!(
        home.show(&id)["env_harness"],
        serde_json::json!(["GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"])
    );
    wait(&home, &id, "gemini's composer is up", || composer_up(&home, &id));
    assert!(!home.logs(&id).contains("Do you trust"), "the project is trusted");

    home.ok(&["send", &id, "hello narwhal"]);
    wait(&home, &id, "the run found its session", || {
        home.show(&id)["session_id"].is_string()
    });
    let run = home.show(&id);
    let session = run["session_id"].as_str().unwrap().to_string();
    let chat = PathBuf::from(run["transcript_path"].as_str().expect("the chat file is known"));
    let name = cwd.file_name().unwrap().to_string_lossy().to_lowercase();
    let chats = chat.parent().unwrap();
    assert!(chats.ends_with("chats"), "{}", chat.display());
    let registered: Value = serde_json::from_slice(&std::fs::read(dot.join("projects.json")).unwrap()).unwrap();
    let slug = registered["projects"][cwd.to_string_lossy().as_ref()].as_str().unwrap();
    assert_eq!(chats.parent().unwrap(), dot.join("tmp").join(slug), "{name}");
    assert!(
        chat.file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with(&format!("-{}.jsonl", &session[..8])),
        "{}",
        chat.display()
    );
    wait(&home, &id, "the reply is in the transcript", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    let messages = transcript(&home, &id);
    assert!(has_message(&messages, "user", "hello narwhal"), "{messages:?}");
    assert_eq!(api.prompts.all(), ["hello narwhal"]);

    // A shell command asks first: the box on screen is the evidence.
    wait(&home, &id, "the first turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "gemini asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Allow execution of"));
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    let messages = transcript(&home, &id);
    let call = messages
        .iter()
        .find(|m| m["tool_calls"][0]["name"] == "run_shell_command")
        .unwrap_or_else(|| panic!("the call is in the transcript: {messages:?}"));
    assert_eq!(call["tool_calls"][0]["input"]["command"], "touch perm-marker");
    assert!(messages.iter().any(|m| m["role"] == "tool"), "{messages:?}");

    wait(&home, &id, "the second turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "/quit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Resume: `gemini --resume ID`, the same session in the same file.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let argv = real_cli::argv_of(&home, &again);
    assert!(argv.ends_with(&["--resume".to_string(), session.clone()]), "{argv:?}");
    wait(&home, &again, "the resumed composer is up", || {
        composer_up(&home, &again) && home.logs(&again).contains("hello narwhal")
    });
    home.ok(&["send", &again, "back again"]);
    wait(
        &home,
        &again,
        "the resumed reply is in the session's transcript",
        || has_message(&transcript(&home, &session), "assistant", "Mock reply to: back again"),
    );
    real_cli::each_user_text_once(&home, &session, &["hello narwhal", "SHELL please", "back again"]);
    assert!(
        read_lines(&chat).iter().any(|l| l.contains("back again")),
        "the resume wrote to the session's own file"
    );
    wait(&home, &again, "the resumed turn is over", || composer_up(&home, &again));
    home.ok(&["send", &again, "/quit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}

fn read_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}
