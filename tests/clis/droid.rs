//! End to end with the real Factory Droid CLI: `agents run droid` in a PTY
//! with a private HOME whose `~/.factory/settings.json` names one custom
//! model (an OpenAI-compatible `baseUrl`, as Droid's BYOK docs configure
//! it) on a small mock of the chat-completions API on loopback, and only
//! `FACTORY_AIRGAP_ENABLED` exported (without it Droid's TUI asks for a
//! Factory login first). Only the model is mocked; Droid writes its real
//! session and resumes and forks it.
//!
//! What it proves: the session Droid mints is found in
//! `~/.factory/sessions/<cwd>/<id>.jsonl`; its folder trust question and its
//! command approval box are seen on the screen as `needs_approval` and
//! `agents answer yes` (Enter) answers them; the hooks of the run's
//! settings (`--settings`) report each turn's prompt, its permission
//! notice and its `Stop`, and show nothing in Droid's chat; `agents
//! transcript` reads the
//! reply, the `Execute` call and its result, and `agents show` the tokens
//! from the settings file beside it; `/quit` ends the run `succeeded`;
//! `agents sessions resume` continues the same session (`--resume ID`) in
//! the same file; `agents sessions fork` (`--fork ID`) starts one of its own
//! in a file of its own.
//!
//! Needs the CLI: `AGENTS_TEST_DROID=/path/to/droid` (and
//! `AGENTS_REQUIRE_DROID=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Home;
use common::chat_mock;
use common::real_cli::{
    self, BinDir, MockApi, Prompts, Reply, Request, has_message, hooks, last_status_why, transcript,
};
use serde_json::json;

/// The version `.ci/run` installs and the fixture was recorded with.
const PINNED: &str = "0.225.2";

/// The mock OpenAI API. The main conversation (the requests that offer
/// tools) is answered by the last message: a user text holding `SHELL`
/// gets an `Execute` call (`touch perm-marker`), other texts `Mock reply
/// to: <the text>`, a tool result `Ran it.`. Droid's side requests (the
/// session's title) get a plain title and are not recorded as prompts.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let main = r.json()["tools"].as_array().is_some_and(|t| !t.is_empty());
    let shell = || {
        let args = json!({ "command": "touch perm-marker", "riskLevel": "medium",
            "riskLevelReason": "creates a file" });
        chat_mock::calls("Execute", args)
    };
    let delta = match main {
        true => chat_mock::turn(&messages, prompts, chat_mock::words, shell),
        false => chat_mock::says("Narwhal chat"),
    };
    chat_mock::streamed(delta, chat_mock::usage(true))
}

/// How long a step of a real Droid may take: a 250 MB binary starting on a
/// busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// Droid's composer is up with no question over it.
fn composer_up(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    screen.contains("? for help") && !screen.contains("to approve") && !screen.contains("Trust this folder?")
}

/// Answers the folder trust question when Droid asks it (the first start
/// in a folder), then waits for its composer.
fn trust_if_asked(home: &Home, run: &str) {
    wait(home, run, "droid asks to trust the folder or takes prompts", || {
        home.show(run)["status"] == "needs_approval" || composer_up(home, run)
    });
    if home.show(run)["status"] == "needs_approval" {
        assert!(home.logs(run).contains("Trust this folder?"), "{}", home.logs(run));
        home.ok(&["answer", run, "yes"]);
    }
    wait(home, run, "droid's composer is up", || composer_up(home, run));
}

/// The custom model of Droid's settings, on the mock.
fn write_settings(user_home: &Path, url: &str) {
    let dir = user_home.join(".factory");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({ "customModels": [{ "model": "mock-model", "displayName": "Mock", "baseUrl": url,
        "apiKey": "mock-key", "provider": "generic-chat-completion-api", "maxOutputTokens": 1000 }] });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

#[test]
fn a_real_droid_run_finds_its_session_asks_permission_resumes_and_forks() {
    let Some(droid) = real_cli::pinned_binary("DROID", "droid", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    write_settings(user_home.path(), &api.url);
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&droid, "droid");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("FACTORY_API_KEY")
            .env_remove("FACTORY_HOME_OVERRIDE")
            .env("FACTORY_AIRGAP_ENABLED", "true");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&["run", "-d", "droid", "--size", "120x40"]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], PINNED);
    assert_eq!(run["env_harness"], json!(["FACTORY_AIRGAP_ENABLED"]));
    trust_if_asked(&home, &id);

    home.ok(&["send", &id, "hello narwhal"]);
    wait(&home, &id, "the reply is in the transcript", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    // Its hooks report the turn.
    wait(&home, &id, "the turn's Stop hook is the evidence", || {
        last_status_why(&home, &id) == "hook Stop"
    });
    let seen = hooks(&home, &id);
    for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
        assert!(seen.iter().any(|h| h == event), "{event} in {seen:?}");
    }
    // Droid minted the session: named by its hooks, as the file found.
    let run = home.show(&id);
    let session = run["session_id"].as_str().expect("the session is found").to_string();
    let file = PathBuf::from(run["transcript_path"].as_str().unwrap());
    let folder = format!("-{}", cwd.to_string_lossy().trim_start_matches('/').replace('/', "-"));
    assert_eq!(
        file,
        user_home
            .path()
            .join(".factory/sessions")
            .join(folder)
            .join(format!("{session}.jsonl"))
    );
    assert_eq!(api.prompts.all(), ["hello narwhal"]);

    // A shell command asks first: the approval box is the evidence.
    wait(&home, &id, "the first turn is over", || composer_up(&home, &id));
    // Its hooks leave no line in Droid's chat once they are done (while one
    // runs, Droid may show it running).
    let chat = home.logs(&id);
    assert!(
        !chat.contains("Exit code 0") && !chat.contains("hook · 1 completed"),
        "{chat}"
    );
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "droid asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    // Its permission hook may say so before the question is drawn; an
    // answer needs it on the screen.
    wait(&home, &id, "the question is on the screen", || {
        home.logs(&id).contains("Command to approve")
    });
    wait(&home, &id, "the permission hook is recorded", || {
        hooks(&home, &id).iter().any(|h| h == "Notification")
    });
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    wait(&home, &id, "the turn ended by its hook", || {
        last_status_why(&home, &id) == "hook Stop"
    });
    let messages = transcript(&home, &id);
    let call = messages
        .iter()
        .find(|m| m["tool_calls"][0]["name"] == "Execute")
        .unwrap_or_else(|| panic!("the call is in the transcript: {messages:?}"));
    assert_eq!(call["tool_calls"][0]["input"]["command"], "touch perm-marker");
    assert!(
        messages.iter().any(|m| m["role"] == "tool"
            && m["text"]
                .as_str()
                .is_some_and(|t| t.contains("Command completed successfully"))),
        "{messages:?}"
    );
    // Three calls of the main conversation so far (and its title's), 40
    // in of which 10 cached and 7 out each, as the settings file beside the
    // session totals them: the input without the cached part.
    wait(&home, &id, "the session's tokens are read", || {
        let tokens = home.show(&id)["usage"]["tokens"].clone();
        let n = |k: &str| tokens[k].as_i64().unwrap_or(0);
        n("output") >= 21 && n("input") == 3 * n("cache_read") && n("output") * 10 == 7 * n("cache_read")
    });

    wait(&home, &id, "the second turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "/quit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Resume: `droid --resume ID`, the same session in the same file.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let argv = real_cli::argv_of(&home, &again);
    assert!(argv.ends_with(&["--resume".to_string(), session.clone()]), "{argv:?}");
    assert_eq!(home.show(&again)["session_id"], session.as_str());
    trust_if_asked(&home, &again);
    home.ok(&["send", &again, "back again"]);
    wait(
        &home,
        &again,
        "the resumed reply is in the session's transcript",
        || has_message(&transcript(&home, &session), "assistant", "Mock reply to: back again"),
    );
    real_cli::each_user_text_once(&home, &session, &["hello narwhal", "SHELL please", "back again"]);
    assert!(std::fs::read_to_string(&file).unwrap().contains("back again"));
    wait(&home, &again, "the resumed turn is over", || composer_up(&home, &again));
    home.ok(&["send", &again, "/quit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Fork: `droid --fork ID`, a session of its own in a file of its own.
    let fork = agents(&["sessions", "fork", &session, "-d"]);
    let argv = real_cli::argv_of(&home, &fork);
    assert!(argv.ends_with(&["--fork".to_string(), session.clone()]), "{argv:?}");
    trust_if_asked(&home, &fork);
    home.ok(&["send", &fork, "forked here"]);
    wait(&home, &fork, "the fork's reply is in its transcript", || {
        has_message(&transcript(&home, &fork), "assistant", "Mock reply to: forked here")
    });
    let forked = home.show(&fork);
    let branch = forked["session_id"].as_str().expect("the fork's session is known");
    assert_ne!(branch, session, "a fork is a session of its own");
    assert_eq!(
        PathBuf::from(forked["transcript_path"].as_str().unwrap()),
        file.with_file_name(format!("{branch}.jsonl"))
    );
    assert!(!std::fs::read_to_string(&file).unwrap().contains("forked here"));
    wait(&home, &fork, "the fork's turn is over", || composer_up(&home, &fork));
    home.ok(&["send", &fork, "/quit"]);
    let ended = home.wait_end(&fork);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}
