//! End to end with the real opencode: `agents run opencode` in a PTY with a
//! private HOME (and XDG folders under it) whose `opencode.json` defines a
//! provider `mock` (`@ai-sdk/openai-compatible`) at a small mock of the
//! OpenAI chat completions API on loopback (`POST /v1/chat/completions`,
//! streamed as server-sent events), its key read from `{env:…}`. Only the
//! model is mocked; opencode writes its real SQLite database and resumes
//! its real session.
//!
//! What it proves: the key variable its config names passes by default
//! (issue #9); the run finds its session in opencode's database
//! (`~/.local/share/opencode/opencode.db`, the `session` row of its cwd);
//! `agents transcript` reads the reply from that database, a tool call and
//! its result included; a `bash` permission prompt (choices on one row) is
//! seen on the screen as `needs_approval` and `agents answer yes` allows
//! it; `/exit` ends the run `succeeded`; and `agents sessions resume`
//! continues the same session (`--session ID`), adding to its rows.
//!
//! Needs the CLI: `AGENTS_TEST_OPENCODE=/path/to/opencode` (and
//! `AGENTS_REQUIRE_OPENCODE=1` makes a missing CLI fail instead of skip).
//!
//! Kilo Code's CLI is opencode under other names: the same test drives
//! the real `kilo` (`AGENTS_TEST_KILO`, `AGENTS_REQUIRE_KILO`), its config
//! in `~/.config/kilo/kilo.json`, its sessions in `~/.local/share/kilo/kilo.db`.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::Home;
use common::chat_mock::{self, text_of};
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::{Value, json};

/// What differs between opencode and Kilo Code in this test: names.
struct Cli {
    /// Its `AGENTS_TEST_<CLI>` suffix, its program name, and the version
    /// `.ci/run` installs (opencode's: the one the fixture was recorded with).
    var: &'static str,
    program: &'static str,
    pinned: &'static str,
    /// Its folder under the config and data homes, its config and database files.
    dir: &'static str,
    config: &'static str,
    db: &'static str,
    /// Its own variables: a config home and database to unset, and the
    /// switch that keeps it from fetching the models list.
    unset: [&'static str; 2],
    no_fetch: &'static str,
}

const OPENCODE: Cli = Cli {
    var: "OPENCODE",
    program: "opencode",
    pinned: "1.18.33",
    dir: "opencode",
    config: "opencode.json",
    db: "opencode.db",
    unset: ["OPENCODE_CONFIG_DIR", "OPENCODE_DB"],
    no_fetch: "OPENCODE_DISABLE_MODELS_FETCH",
};

const KILO: Cli = Cli {
    var: "KILO",
    program: "kilo",
    pinned: "7.7.7",
    dir: "kilo",
    config: "kilo.json",
    db: "kilo.db",
    unset: ["KILO_CONFIG_DIR", "KILO_DB"],
    no_fetch: "KILO_DISABLE_MODELS_FETCH",
};

/// The mock chat completions API. opencode asks for a title on a request
/// of its own (its system prompt says "title generator"): that gets `Mock
/// title`. A turn whose last message is a tool result gets `Ran it.`; one
/// whose prompt holds `SHELL`, a `bash` call (`touch perm-marker`); any
/// other `Mock reply to: <the prompt>`. Other paths 404.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let Some(messages) = chat_mock::messages(r).filter(|_| r.method() == "POST") else {
        return Reply::not_found();
    };
    let titling = messages
        .first()
        .is_some_and(|m| text_of(&m["content"]).contains("title generator"));
    // Kilo adds `<environment_details>` (time, folders) to each prompt.
    let words = |m: &Value| {
        let text = text_of(&m["content"]);
        text.split("<environment_details>")
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let shell = || {
        let args = json!({ "command": "touch perm-marker", "description": "Create a marker file" });
        chat_mock::calls("bash", args)
    };
    let delta = match titling {
        true => chat_mock::says("Mock title"),
        false => chat_mock::turn(&messages, prompts, words, shell),
    };
    chat_mock::streamed(delta, chat_mock::usage(false))
}

/// How long a step of a real opencode may take: it starts in seconds, but
/// CI is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(60);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// The run's agent is idle (the screen is still, nothing asked).
fn idle(home: &Home, run: &str) -> bool {
    home.show(run)["status"] == "idle"
}

/// opencode's own `opencode.json` for the user (Kilo's `kilo.json`): the
/// mock provider and model, a question before every shell command, no
/// update check.
fn configure(cli: &Cli, home: &Path, api: &str) {
    let dir = home.join(".config").join(cli.dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = json!({
        "provider": { "mock": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Mock",
            "options": { "baseURL": api, "apiKey": "{env:MOCK_OPENCODE_KEY}" },
            "models": { "mock-model": { "name": "Mock Model" } },
        } },
        "model": "mock/mock-model",
        "small_model": "mock/mock-model",
        "permission": { "bash": "ask" },
        "autoupdate": false,
        "share": "disabled",
    });
    std::fs::write(dir.join(cli.config), config.to_string()).unwrap();
}

/// The messages opencode stored for `session`, and the folder its row names.
fn stored(db: &Path, session: &str) -> (i64, String) {
    let conn = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let count = conn
        .query_row("SELECT COUNT(*) FROM message WHERE session_id = ?1", [session], |r| {
            r.get(0)
        })
        .unwrap();
    let dir = conn
        .query_row("SELECT directory FROM session WHERE id = ?1", [session], |r| r.get(0))
        .unwrap();
    (count, dir)
}

#[test]
fn a_real_opencode_run_finds_its_session_asks_permission_and_resumes() {
    run_finds_its_session_asks_permission_and_resumes(&OPENCODE);
}

#[test]
fn a_real_kilo_run_finds_its_session_asks_permission_and_resumes() {
    run_finds_its_session_asks_permission_and_resumes(&KILO);
}

fn run_finds_its_session_asks_permission_and_resumes(cli: &Cli) {
    let Some(binary) = real_cli::pinned_binary(cli.var, cli.program, cli.pinned) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    configure(cli, user_home.path(), &api.url);
    let bin = BinDir::with(&binary, cli.program);
    let path = bin.path();
    let under = |rest: &str| user_home.path().join(rest);

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env("XDG_CONFIG_HOME", under(".config"))
            .env("XDG_DATA_HOME", under(".local/share"))
            .env("XDG_STATE_HOME", under(".local/state"))
            .env("XDG_CACHE_HOME", under(".cache"))
            .env_remove(cli.unset[0])
            .env_remove(cli.unset[1])
            .env("MOCK_OPENCODE_KEY", "mock-key")
            .env(cli.no_fetch, "1");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    // The key its config reads and its own switch are only exported, as
    // in a user's shell: they pass by default (issue #9).
    let id = agents(&["run", "-d", cli.program, "--size", "120x40"]);
    assert_eq!(home.show(&id)["harness_version"], cli.pinned);
    let mut passed = vec!["MOCK_OPENCODE_KEY", cli.no_fetch];
    passed.sort();
    assert_eq!(home.show(&id)["env_harness"], json!(passed));
    wait(&home, &id, "the composer is up", || {
        home.logs(&id).contains("Ask anything") && idle(&home, &id)
    });

    home.ok(&["send", &id, "hello narwhal"]);
    wait(&home, &id, "the run found its session", || {
        home.show(&id)["session_id"].is_string()
    });
    let run = home.show(&id);
    let session = run["session_id"].as_str().unwrap().to_string();
    let db = under(".local/share").join(cli.dir).join(cli.db);
    assert_eq!(
        run["transcript_path"].as_str(),
        Some(format!("{}#{session}", db.display()).as_str()),
        "the session's rows in its database"
    );
    assert_eq!(
        stored(&db, &session).1,
        cwd.to_string_lossy(),
        "its row names the run's cwd"
    );
    wait(&home, &id, "the reply is in the transcript", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    assert!(has_message(&transcript(&home, &id), "user", "hello narwhal"));
    assert_eq!(api.prompts.all(), ["hello narwhal"]);

    // A shell command asks first: the row of choices on screen is the evidence.
    wait(&home, &id, "the first turn is over", || idle(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "it asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Permission required"));
    home.ok(&["answer", &id, "yes"]);
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

    // Every answer of the mock costs 40 tokens in and 7 out: three model
    // steps (the reply, the call, the reply after it) as opencode stored them.
    wait(&home, &id, "the second turn's tokens are counted", || {
        home.show(&id)["usage"]["tokens"] == json!({ "input": 120, "output": 21, "cache_read": 0, "cache_write": 0 })
    });
    assert_eq!(home.show(&id)["usage"]["models"][0]["model"], "mock-model");

    wait(&home, &id, "the second turn is over", || idle(&home, &id));
    home.ok(&["send", &id, "/exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    let before = stored(&db, &session).0;

    // Resume: `opencode --session ID`, the same session in the same database.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let argv = real_cli::argv_of(&home, &again);
    assert!(argv.ends_with(&["--session".to_string(), session.clone()]), "{argv:?}");
    wait(&home, &again, "the resumed session is on screen", || {
        home.logs(&again).contains("Ran it.") && idle(&home, &again)
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
        stored(&db, &session).0 > before,
        "the resume wrote to the session's own rows"
    );
    wait(&home, &again, "the resumed turn is over", || idle(&home, &again));
    home.ok(&["send", &again, "/exit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}
