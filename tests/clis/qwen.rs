//! End to end with the real Qwen Code CLI: `agents run qwen` in a PTY with a
//! private HOME and `OPENAI_API_KEY`, `OPENAI_BASE_URL` and `OPENAI_MODEL`
//! exported (how Qwen Code's docs configure an OpenAI-compatible provider),
//! the URL pointing at a small mock of the chat-completions API on loopback
//! (streamed as SSE). Only the model is mocked; Qwen writes its real chat
//! file and resumes its real session.
//!
//! What it proves: the id `agents` minted (`--session-id`) is the session
//! Qwen writes, in `~/.qwen/projects/<cwd>/chats/<id>.jsonl`; `agents
//! transcript` reads the reply, a tool call, its result and the tokens from
//! that file; a `run_shell_command` permission prompt is seen on the screen
//! as `needs_approval` and `agents answer yes` allows it; `/quit` ends the
//! run `succeeded`; and `agents sessions resume` continues the same session
//! (`--resume ID`) in the same file; `agents sessions fork` starts a
//! session of its own (`--resume ID --fork-session`) in a file of its own.
//!
//! Needs the CLI: `AGENTS_TEST_QWEN=/path/to/qwen` (and
//! `AGENTS_REQUIRE_QWEN=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::Home;
use common::chat_mock::{self, text_of};
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::{Value, json};

/// The version `.ci/run` installs and the fixture was recorded with.
const PINNED: &str = "0.24.4";

/// The mock OpenAI API. The main conversation (its system prompt is Qwen
/// Code's own) is answered by the last user text: one holding `SHELL` gets
/// a `run_shell_command` call (`touch perm-marker`), others `Mock reply to:
/// <the text>`; a turn sending a tool result back gets `Ran it.`. Qwen's
/// side conversations (its memory extractor) get a plain word and are not
/// recorded as prompts.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    if r.method() == "GET" && r.path().ends_with("/models") {
        return Reply::ok(
            "application/json",
            json!({ "object": "list", "data": [{ "id": "mock-model", "object": "model" }] }).to_string(),
        );
    }
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let main = messages
        .first()
        .is_some_and(|m| text_of(&m["content"]).starts_with("You are Qwen Code"));
    // Qwen puts its reminders before the user's words in one message.
    let words = |m: &Value| {
        let all = text_of(&m["content"]);
        all.rsplit("</system-reminder>")
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let shell = || {
        let args = json!({ "command": "touch perm-marker", "description": "Create a marker file" });
        chat_mock::calls("run_shell_command", args)
    };
    let delta = match main {
        true => chat_mock::turn(&messages, prompts, words, shell),
        false => chat_mock::says("Nothing to note."),
    };
    chat_mock::streamed(delta, chat_mock::usage(true))
}

/// How long a step of a real Qwen may take: node starts it in seconds, but
/// CI is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// Qwen's composer is up and empty: the run takes a prompt.
fn composer_up(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    screen.contains("Type your message") && !screen.contains("Waiting for user confirmation")
}

#[test]
fn a_real_qwen_run_writes_its_minted_session_asks_permission_and_resumes() {
    let Some(qwen) = real_cli::pinned_binary("QWEN", "qwen", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&qwen, "qwen");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("QWEN_HOME")
            .env("OPENAI_API_KEY", "mock-key")
            .env("OPENAI_BASE_URL", &api.url)
            .env("OPENAI_MODEL", "mock-model");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    // The key, endpoint and model are only exported, as in a user's shell;
    // the approval mode asks before each command (its default is an LLM
    // classifier, which would ask the mock).
    let id = agents(&[
        "run",
        "-d",
        "qwen",
        "--size",
        "120x40",
        "--",
        "--approval-mode",
        "default",
    ]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], PINNED);
    assert_eq!(
        run["env_harness"],
        json!(["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL"])
    );
    // The session is known before spawn: the id given to `--session-id`.
    let session = run["session_id"].as_str().expect("a minted session id").to_string();
    let chat = PathBuf::from(run["transcript_path"].as_str().expect("the chat file is known"));
    let encoded: String = cwd
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    assert_eq!(
        chat,
        user_home
            .path()
            .join(".qwen/projects")
            .join(encoded)
            .join("chats")
            .join(format!("{session}.jsonl"))
    );
    wait(&home, &id, "qwen's composer is up", || composer_up(&home, &id));

    home.ok(&["send", &id, "hello narwhal"]);
    wait(&home, &id, "the reply is in the transcript", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    assert!(chat.is_file(), "qwen wrote the chat the run named");
    let first = std::fs::read_to_string(&chat).unwrap();
    assert!(first.contains(&format!("\"sessionId\":\"{session}\"")), "{first}");
    let messages = transcript(&home, &id);
    assert!(has_message(&messages, "user", "hello narwhal"), "{messages:?}");
    assert_eq!(api.prompts.all(), ["hello narwhal"]);

    // A shell command asks first: the question on screen is the evidence.
    wait(&home, &id, "the first turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "qwen asks to run the command", || {
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
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["text"].as_str().is_some_and(|t| t.contains("touch perm-marker"))),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m["usage"]["output"] == 7),
        "the reply's tokens are read: {messages:?}"
    );

    wait(&home, &id, "the second turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "/quit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Resume: `qwen --resume ID`, the same session in the same file.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let resumed = home.show(&again);
    let argv: Vec<String> = resumed["command"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    assert!(argv.ends_with(&["--resume".to_string(), session.clone()]), "{argv:?}");
    assert_eq!(resumed["session_id"], session.as_str());
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
        std::fs::read_to_string(&chat).unwrap().contains("back again"),
        "the resume wrote to the session's own file"
    );
    wait(&home, &again, "the resumed turn is over", || composer_up(&home, &again));
    home.ok(&["send", &again, "/quit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Fork: `--resume ID --fork-session`, a session of its own in a file of
    // its own, which the run finds (Qwen mints its id).
    let fork = agents(&["sessions", "fork", &session, "-d"]);
    let argv = home.show(&fork)["command"].clone();
    let tail = ["--resume", session.as_str(), "--fork-session"].map(|a| json!(a));
    assert!(argv.as_array().unwrap().ends_with(&tail), "{argv}");
    wait(&home, &fork, "the fork's composer is up", || {
        composer_up(&home, &fork) && home.logs(&fork).contains("hello narwhal")
    });
    home.ok(&["send", &fork, "forked here"]);
    wait(&home, &fork, "the fork's reply is in its transcript", || {
        has_message(&transcript(&home, &fork), "assistant", "Mock reply to: forked here")
    });
    let forked = home.show(&fork);
    let branch = forked["session_id"].as_str().expect("the fork's session is known");
    assert_ne!(branch, session, "a fork is a session of its own");
    let branch_file = PathBuf::from(forked["transcript_path"].as_str().unwrap());
    assert_eq!(branch_file, chat.with_file_name(format!("{branch}.jsonl")));
    assert!(
        !std::fs::read_to_string(&chat).unwrap().contains("forked here"),
        "the forked session is left as it was"
    );
    wait(&home, &fork, "the fork's turn is over", || composer_up(&home, &fork));
    home.ok(&["send", &fork, "/quit"]);
    let ended = home.wait_end(&fork);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}
