//! End to end with the real Letta Code: `agents run letta` in a PTY with a
//! private HOME, its local backend switched on and pointed at a small mock
//! of the chat-completions API on loopback as a llama.cpp server
//! (`LETTA_LOCAL_BACKEND_EXPERIMENTAL=1`, `LLAMA_CPP_BASE_URL`: no Letta
//! account). Only the model is mocked; Letta Code keeps its real agent and
//! conversation, and resumes it.
//!
//! What it proves: its variables are passed by name; the prompt given with
//! `--prompt` waits for its input box, then is typed and answered; the
//! conversation its start names in the cwd's `.letta/settings.local.json`
//! is found and its `messages.jsonl` read: the reply, a `Bash` call, its
//! result and the tokens; a prompt sent onto a draft the user is typing
//! waits until it is erased; with `--permission-mode standard` its "Run
//! this command?" is `needs_approval` and `agents answer yes` runs the
//! command; `/exit` ends it `succeeded`; `agents sessions resume`
//! continues the conversation (`--conv ID`) in its file; a fork is
//! refused.
//!
//! Needs the CLI: `AGENTS_TEST_LETTA=/path/to/letta` (and
//! `AGENTS_REQUIRE_LETTA=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::Home;
use common::chat_mock::{self, text_of};
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::{Value, json};

/// The version its fixtures were recorded with and `.ci/run` installs.
const PINNED: &str = "0.25.9";

/// The mock OpenAI API (as a llama.cpp server): the last user text holding
/// `SHELL` gets a `Bash` call (`touch perm-marker`), others `Mock reply to:
/// <the text>`; a turn sending a tool result back gets `Ran it.`. Its own
/// words (`<system-reminder>` parts) ride in the user's message: the
/// user's are its last part.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    if r.path().ends_with("/models") {
        return chat_mock::models();
    }
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let shell = || chat_mock::calls("Bash", json!({ "command": "touch perm-marker" }));
    let delta = chat_mock::turn(&messages, prompts, |m| users_part(&m["content"]), shell);
    chat_mock::streamed(delta, chat_mock::usage(false))
}

/// The user's words of a message: its last text part.
fn users_part(content: &Value) -> String {
    match content.as_array().and_then(|parts| parts.last()) {
        Some(part) => part["text"].as_str().unwrap_or_default().trim().to_string(),
        None => text_of(content).trim().to_string(),
    }
}

/// How long a step of a real Letta Code may take on a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(60);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// The text in its input box, when it shows: the lowest row starting `›`
/// (its history's prompts start so too, higher up).
fn input(lines: &[String]) -> Option<String> {
    let at = lines.iter().rposition(|l| l.starts_with('›'))?;
    let below = lines[at + 1..].iter().find(|l| !l.trim().is_empty())?;
    below
        .starts_with('─')
        .then(|| lines[at].trim_start_matches('›').trim().to_string())
}

/// Its input box is up and empty, and no turn or question is on screen.
fn composer_up(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    let lines: Vec<String> = screen.lines().map(str::to_string).collect();
    input(&lines).is_some_and(|t| t.is_empty()) && !screen.contains("esc to interrupt")
}

#[test]
fn a_real_letta_run_answers_asks_permission_and_resumes() {
    let Some(letta) = real_cli::pinned_binary("LETTA", "letta", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&letta, "letta");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env("LETTA_LOCAL_BACKEND_EXPERIMENTAL", "1")
            .env("LLAMA_CPP_BASE_URL", &api.url)
            .env_remove("LETTA_API_KEY")
            .env_remove("LETTA_LOCAL_BACKEND_DIR");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&[
        "run",
        "-d",
        "letta",
        "--size",
        "120x40",
        "--prompt",
        "hello narwhal",
        "--",
        "-m",
        "llama.cpp/mock-model",
        "--permission-mode",
        "standard",
    ]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], real_cli::version_under_test(&letta, PINNED));
    let passed = run["env_harness"].as_array().unwrap();
    for var in ["LETTA_LOCAL_BACKEND_EXPERIMENTAL", "LLAMA_CPP_BASE_URL"] {
        assert!(passed.contains(&json!(var)), "{passed:?}");
    }
    wait(&home, &id, "the first prompt is answered", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    let run = home.show(&id);
    let session = run["session_id"].as_str().expect("the session is found").to_string();
    assert!(
        session.starts_with("agent-local-"),
        "its agent's own conversation: {session}"
    );
    let file = PathBuf::from(run["transcript_path"].as_str().expect("its file is known"));
    let store = user_home.path().join(".letta/lc-local-backend/conversations");
    assert!(file.starts_with(&store) && file.ends_with("messages.jsonl"), "{file:?}");

    // A prompt never lands on the user's half-typed draft.
    wait(&home, &id, "the first turn is over", || composer_up(&home, &id));
    real_cli::a_draft_holds_a_prompt(&home, &id, input, &[0x15]);

    wait(&home, &id, "the draft's turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "letta asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Run this command?"));
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    let call = real_cli::the_call(&transcript(&home, &id), "Bash", "Command completed");
    assert_eq!(call["input"]["command"], "touch perm-marker");
    assert_eq!(api.prompts.all(), ["hello narwhal", "QUEUED-ONE", "SHELL please"]);

    wait(&home, &id, "the second turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "/exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Resume: `letta --conv ID`, the same conversation in the same file.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let argv = real_cli::argv_of(&home, &again);
    assert!(argv.ends_with(&["--conv".to_string(), session.clone()]), "{argv:?}");
    real_cli::resumed_in_its_file(
        &home,
        &again,
        &session,
        &file,
        &["hello narwhal", "QUEUED-ONE", "SHELL please"],
        || composer_up(&home, &again),
    );
    home.ok(&["send", &again, "/exit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    let refused = home.fails(&["sessions", "fork", &session]);
    assert!(refused.contains("cannot fork"), "{refused}");
}
