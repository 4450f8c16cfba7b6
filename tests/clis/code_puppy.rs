//! End to end with the real Code Puppy: `agents run code-puppy` in a PTY
//! with a private HOME whose `~/.code_puppy/extra_models.json` names a
//! model on a small mock of the chat-completions API on loopback, and
//! whose `puppy.cfg` picks it (and names the puppy and its owner, which it
//! would ask at its first start). Only the model is mocked; Code Puppy
//! writes its real session file.
//!
//! What it proves: the run names its session (`--resume <uuid>`, a name
//! with no file yet), so its file is known at launch and written there;
//! the prompt given with `--prompt` waits for its `>>>` input, then is
//! typed and answered; `agents transcript` reads the reply, a `shell`
//! call, its output and the tokens from that file; a prompt sent onto a
//! draft the user is typing waits until it is erased; with `--yolo false`
//! its "Requesting permission to run:" question is `needs_approval` and
//! `agents answer yes` runs the command; `/exit` ends it `succeeded`;
//! `agents sessions resume` continues the session (`--resume ID`) in its
//! own file; a fork is refused.
//!
//! Needs the CLI: `AGENTS_TEST_CODE_PUPPY=/path/to/code-puppy` (and
//! `AGENTS_REQUIRE_CODE_PUPPY=1` makes a missing CLI fail instead of
//! skip).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Home;
use common::chat_mock;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::json;

/// The version its fixtures were recorded with and `.ci/run` installs.
const PINNED: &str = "0.0.946";

/// What the mock asks to run.
const COMMAND: &str = "touch perm-marker && echo made-marker";

/// The mock OpenAI API: its model list; a turn offering the `shell` tool
/// follows the shared script (`chat_mock::turn`: a `shell` call for
/// SHELL); its side questions (a title for the session, whether a reply
/// asks to go on), which offer no `shell`, get a title.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    if r.path().ends_with("/models") {
        return chat_mock::models();
    }
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let usage = chat_mock::usage(false);
    let tools = r.json()["tools"].as_array().cloned().unwrap_or_default();
    if !tools.iter().any(|t| t["function"]["name"] == "shell") {
        let title = json!({ "title": "Narwhal greeting", "subtitle": "a mock", "tags": [] });
        return chat_mock::completed(chat_mock::says(&title.to_string()), usage);
    }
    let shell = || chat_mock::calls("shell", json!({ "command": COMMAND }));
    let delta = chat_mock::turn(&messages, prompts, chat_mock::words, shell);
    chat_mock::streamed(delta, usage)
}

/// How long a step of a real Code Puppy may take: it starts in seconds
/// (about 8 here), but CI is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(60);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// The text in its input, when it shows: the lowest row starting `>>>`
/// with its status row (`Rex [Code-Puppy 🐶] …`) below it.
fn input(lines: &[String]) -> Option<String> {
    let at = lines.iter().rposition(|l| l.starts_with(">>>"))?;
    let below = lines[at + 1..].iter().find(|l| !l.trim().is_empty())?;
    below
        .contains("[Code-Puppy")
        .then(|| lines[at].trim_start_matches(">>>").trim().to_string())
}

/// Its input is up and empty, and its status row says it is idle: no turn
/// or question is on.
fn input_up(home: &Home, run: &str) -> bool {
    let lines: Vec<String> = home.logs(run).lines().map(str::to_string).collect();
    let idle = lines
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.ends_with("| Idle"));
    idle && input(&lines).is_some_and(|t| t.is_empty())
}

/// A private HOME whose Code Puppy talks to `api` as its model `mock`.
fn user_home(api: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".code_puppy");
    std::fs::create_dir_all(&dir).unwrap();
    let models = json!({ "mock": { "type": "custom_openai", "name": "mock-model", "context_length": 128000,
        "custom_endpoint": { "url": api, "api_key": "sk-mock" } } });
    std::fs::write(dir.join("extra_models.json"), models.to_string()).unwrap();
    let config = "[puppy]\npuppy_name = Rex\nowner_name = Tester\nmodel = mock\n";
    std::fs::write(dir.join("puppy.cfg"), config).unwrap();
    home
}

#[test]
fn a_real_code_puppy_run_names_its_session_asks_permission_and_resumes() {
    let Some(puppy) = real_cli::pinned_binary("CODE_PUPPY", "code-puppy", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = user_home(&api.url);
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&puppy, "code-puppy");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            // No update check: the network is closed.
            .env("NO_VERSION_UPDATE", "1");
        // Its folders follow these; the test's are under its HOME.
        for name in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"] {
            cmd.env_remove(name);
        }
        for name in [
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "ANTHROPIC_API_KEY",
            "GEMINI_API_KEY",
        ] {
            cmd.env_remove(name);
        }
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&[
        "run",
        "-d",
        "code-puppy",
        "--size",
        "120x40",
        "--prompt",
        "hello narwhal",
        "--",
        "--yolo",
        "false",
    ]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], real_cli::version_under_test(&puppy, PINNED));
    assert_eq!(run["env_harness"], json!(["NO_VERSION_UPDATE"]));
    let session = run["session_id"].as_str().expect("a minted name").to_string();
    let file = PathBuf::from(run["transcript_path"].as_str().expect("the session file is known"));
    let autosaves = user_home.path().join(".code_puppy/autosaves");
    assert_eq!(file, autosaves.join(format!("{session}.json")));
    let argv = real_cli::argv_of(&home, &id);
    assert!(
        argv.ends_with(&["--resume", &session, "--yolo", "false"].map(String::from)),
        "{argv:?}"
    );

    wait(&home, &id, "the first prompt is answered", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    assert!(file.exists(), "the session is written where the launch said");

    // A prompt never lands on the user's half-typed draft; Ctrl-U erases.
    wait(&home, &id, "the first turn is over", || input_up(&home, &id));
    real_cli::a_draft_holds_a_prompt(&home, &id, input, &[0x15]);

    wait(&home, &id, "the draft's turn is over", || input_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "code puppy asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Requesting permission to run:"));
    assert!(!cwd.join("perm-marker").exists(), "not before the answer");
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    let call = real_cli::the_call(&transcript(&home, &id), "shell", "made-marker");
    assert_eq!(call["input"]["command"], COMMAND);
    assert_eq!(api.prompts.all(), ["hello narwhal", "QUEUED-ONE", "SHELL please"]);

    wait(&home, &id, "the command's turn is over", || input_up(&home, &id));
    exit(&home, &id);
    resume(&home, &agents, &session, &file);
}

/// `code-puppy --resume ID`: the same session, its file growing.
fn resume(home: &Home, agents: &dyn Fn(&[&str]) -> String, session: &str, file: &Path) {
    let again = agents(&["sessions", "resume", session, "-d"]);
    let argv = real_cli::argv_of(home, &again);
    assert!(
        argv.ends_with(&["--resume".to_string(), session.to_string()]),
        "{argv:?}"
    );
    real_cli::resumed_in_its_file(
        home,
        &again,
        session,
        file,
        &["hello narwhal", "QUEUED-ONE", "SHELL please"],
        || input_up(home, &again),
    );
    exit(home, &again);

    let refused = home.fails(&["sessions", "fork", session]);
    assert!(refused.contains("cannot start a session from a copy"), "{refused}");
}

/// `/exit` at its prompt: it says goodbye and ends, succeeded.
fn exit(home: &Home, run: &str) {
    home.ok(&["send", run, "/exit"]);
    let ended = home.wait_end(run);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}
