//! End to end with the real pi CLI: `agents run pi` in a PTY with a private
//! HOME whose `~/.pi/agent/models.json` adds an OpenAI-compatible provider
//! on loopback (how pi's docs add a local model), its key read from the
//! variable it names (`MOCK_API_KEY`, exported) and `settings.json` making
//! it the default; `PI_OFFLINE=1` keeps pi from downloading its search
//! tools at start. Only the model is mocked (chat completions, streamed as
//! SSE); pi writes its real session file and resumes its real session.
//!
//! What it proves: the key variable a `models.json` provider names passes
//! by default; the run finds its session in pi's folder for the cwd
//! (`sessions/--<cwd>--/<time>_<id>.jsonl`, written at the first reply);
//! `agents transcript` reads the reply, a `bash` call, its result and the
//! tokens from it; `/quit` ends the run `succeeded`; and `agents sessions
//! resume` continues the same session (`--session ID`) in the same file,
//! and `agents sessions fork` starts one of its own (`--fork ID`).
//! pi asks no permission before its tools, so there is no prompt to see.
//!
//! Needs the CLI: `AGENTS_TEST_PI=/path/to/pi` (and `AGENTS_REQUIRE_PI=1`
//! makes a missing CLI fail instead of skip).

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::Home;
use common::chat_mock;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::json;

/// The version `.ci/run` installs and the fixture was recorded with.
const PINNED: &str = "0.73.1";

/// The mock OpenAI API: a turn whose last user text holds `SHELL` gets a
/// `bash` call (`touch perm-marker`), a turn sending a tool result back
/// `Ran it.`, any other `Mock reply to: <the text>`.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let shell = || chat_mock::calls("bash", json!({ "command": "touch perm-marker" }));
    let delta = chat_mock::turn(&messages, prompts, chat_mock::words, shell);
    chat_mock::streamed(delta, chat_mock::usage(true))
}

/// How long a step of a real pi may take: node starts it in seconds, but
/// CI is a busy 2-core machine (and a session is found by polling, up to
/// 15 s after the first reply).
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// pi's editor and footer are drawn: its footer names the model.
fn ready(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    screen.contains("pi v0.73.1") && screen.contains("mock-model")
}

#[test]
fn a_real_pi_run_finds_its_session_runs_a_tool_and_resumes() {
    let Some(pi) = real_cli::pinned_binary("PI", "pi", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let agent = user_home.path().join(".pi/agent");
    std::fs::create_dir_all(&agent).unwrap();
    let provider = json!({ "baseUrl": api.url, "api": "openai-completions", "apiKey": "MOCK_API_KEY",
        "compat": { "supportsDeveloperRole": false, "supportsReasoningEffort": false },
        "models": [{ "id": "mock-model" }] });
    std::fs::write(
        agent.join("models.json"),
        json!({ "providers": { "mock": provider } }).to_string(),
    )
    .unwrap();
    std::fs::write(
        agent.join("settings.json"),
        json!({ "defaultProvider": "mock", "defaultModel": "mock-model" }).to_string(),
    )
    .unwrap();
    let bin = BinDir::with(&pi, "pi");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CODING_AGENT_SESSION_DIR")
            .env("MOCK_API_KEY", "mock-key")
            .env("PI_OFFLINE", "1");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&["run", "-d", "pi", "--size", "120x40"]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], PINNED);
    assert_eq!(run["env_harness"], json!(["MOCK_API_KEY", "PI_OFFLINE"]));
    wait(&home, &id, "pi is up", || ready(&home, &id));

    home.ok(&["send", &id, "hello narwhal"]);
    wait(&home, &id, "the run found its session", || {
        home.show(&id)["session_id"].is_string()
    });
    let run = home.show(&id);
    let session = run["session_id"].as_str().unwrap().to_string();
    let file = PathBuf::from(run["transcript_path"].as_str().expect("the session file is known"));
    let folder = format!(
        "--{}--",
        cwd.to_string_lossy().trim_start_matches('/').replace('/', "-")
    );
    assert_eq!(file.parent().unwrap(), agent.join("sessions").join(folder));
    assert!(
        file.file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with(&format!("_{session}.jsonl")),
        "{}",
        file.display()
    );
    wait(&home, &id, "the reply is in the transcript", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    assert!(has_message(&transcript(&home, &id), "user", "hello narwhal"));
    assert_eq!(api.prompts.all(), ["hello narwhal"]);

    // pi runs its tools without asking.
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    let messages = transcript(&home, &id);
    let call = messages
        .iter()
        .find(|m| m["tool_calls"][0]["name"] == "bash")
        .unwrap_or_else(|| panic!("the call is in the transcript: {messages:?}"));
    assert_eq!(call["tool_calls"][0]["input"]["command"], "touch perm-marker");
    assert!(messages.iter().any(|m| m["role"] == "tool"), "{messages:?}");
    assert!(
        messages
            .iter()
            .any(|m| m["usage"]["output"] == 7 && m["usage"]["cache_read"] == 10),
        "the reply's tokens are read: {messages:?}"
    );

    home.ok(&["send", &id, "/quit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Resume: `pi --session ID`, the same session in the same file.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let argv = real_cli::argv_of(&home, &again);
    assert!(argv.ends_with(&["--session".to_string(), session.clone()]), "{argv:?}");
    wait(&home, &again, "the resumed session is on screen", || {
        ready(&home, &again) && home.logs(&again).contains("hello narwhal")
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
        std::fs::read_to_string(&file).unwrap().contains("back again"),
        "the resume wrote to the session's own file"
    );
    home.ok(&["send", &again, "/quit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Fork: `pi --fork ID`, a session of its own in a file of its own.
    let fork = agents(&["sessions", "fork", &session, "-d"]);
    let argv = home.show(&fork)["command"].clone();
    let tail = ["--fork", session.as_str()].map(|a| json!(a));
    assert!(argv.as_array().unwrap().ends_with(&tail), "{argv}");
    wait(&home, &fork, "the fork is on screen", || {
        ready(&home, &fork) && home.logs(&fork).contains("hello narwhal")
    });
    home.ok(&["send", &fork, "forked here"]);
    wait(&home, &fork, "the fork's reply is in its transcript", || {
        has_message(&transcript(&home, &fork), "assistant", "Mock reply to: forked here")
    });
    let forked = home.show(&fork);
    let branch = forked["session_id"].as_str().expect("the fork's session is known");
    assert_ne!(branch, session, "a fork is a session of its own");
    let branch_file = PathBuf::from(forked["transcript_path"].as_str().unwrap());
    assert_eq!(branch_file.parent(), file.parent());
    assert_ne!(branch_file, file);
    assert!(
        !std::fs::read_to_string(&file).unwrap().contains("forked here"),
        "the forked session is left as it was"
    );
    home.ok(&["send", &fork, "/quit"]);
    let ended = home.wait_end(&fork);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}
