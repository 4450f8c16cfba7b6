//! End to end with the real nanocoder: `agents run nanocoder` in a PTY with
//! a private HOME whose `~/.config/nanocoder/agents.config.json` names one
//! provider, a small mock of the chat-completions API on loopback, its key
//! a `${VARIABLE}` of the environment. Only the model is mocked; nanocoder
//! writes its real session and resumes it. Its preferences save a session
//! each second (`saveInterval`), as a user who reads its transcript live
//! would set them.
//!
//! What it proves: the variable its config names is passed by name; its
//! first start in the folder asks whether to trust it, `needs_approval`,
//! and `agents answer yes` trusts it; the prompt given with `--prompt`
//! waits for its input box, then is typed and answered; the session it
//! mints at the first prompt is found (its working directory is the
//! run's) and read: the reply, an `execute_bash` call and its result; a
//! prompt sent onto a draft the user is typing waits until it is erased;
//! "Do you want to execute tool" is `needs_approval` and `agents answer
//! yes` runs the command; `/exit` ends it `succeeded`; `agents sessions
//! resume` continues the session (`--resume ID`) in its file; a fork is
//! refused.
//!
//! Needs the CLI (on node 22): `AGENTS_TEST_NANOCODER=/path/to/nanocoder`
//! (and `AGENTS_REQUIRE_NANOCODER=1` makes a missing CLI fail instead of
//! skip).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Home;
use common::chat_mock;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::json;

/// The version its fixtures were recorded with and `.ci/run` installs.
const PINNED: &str = "1.30.0";

/// The key its config takes from the environment.
const KEY_VAR: &str = "NANOCODER_MOCK_KEY";

/// The mock OpenAI API, for the key in `KEY_VAR` only: the last user text
/// holding `SHELL` gets an `execute_bash` call (`touch perm-marker`),
/// others `Mock reply to: <the text>`; a turn sending a tool result back
/// gets `Ran it.`.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    if r.header("authorization") != Some("bearer mock-key") {
        return Reply::not_found();
    }
    let shell = || chat_mock::calls("execute_bash", json!({ "command": "touch perm-marker" }));
    let delta = chat_mock::turn(&messages, prompts, chat_mock::words, shell);
    chat_mock::streamed(delta, chat_mock::usage(false))
}

/// How long a step of a real nanocoder may take on a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// Where its input box is said to be.
const TITLE: &str = "What would you like me to help with?";

/// The text in its input box, when it shows: the first row with text in
/// the frame under its title.
fn input(lines: &[String]) -> Option<String> {
    let at = lines.iter().rposition(|l| l.contains(TITLE))?;
    let row = lines[at + 1..]
        .iter()
        .map(|l| l.trim().trim_start_matches('┃').trim())
        .find(|l| !l.is_empty())?;
    Some(if row.starts_with("> / commands") {
        String::new()
    } else {
        row.to_string()
    })
}

/// Its input box is up and empty, and no turn or question is on screen.
fn composer_up(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    let lines: Vec<String> = screen.lines().map(str::to_string).collect();
    input(&lines).is_some_and(|t| t.is_empty())
        && !screen.contains("Press Esc to cancel")
        && !screen.contains("Do you want to execute tool")
}

/// A user's nanocoder config: one provider, its key from `KEY_VAR`, and a
/// session saved each second.
fn nanocoder_home(home: &Path, api: &str) {
    let config = home.join(".config/nanocoder");
    std::fs::create_dir_all(&config).unwrap();
    let providers = json!({ "nanocoder": { "providers": [{ "name": "mock", "baseUrl": api,
        "apiKey": format!("${{{KEY_VAR}}}"), "models": ["mock-model"] }] } });
    std::fs::write(config.join("agents.config.json"), providers.to_string()).unwrap();
    let preferences = json!({ "nanocoder": { "sessions": { "saveInterval": 1000 } } });
    std::fs::write(config.join("nanocoder-preferences.json"), preferences.to_string()).unwrap();
}

#[test]
fn a_real_nanocoder_run_is_trusted_answers_asks_permission_and_resumes() {
    let Some(nanocoder) = real_cli::pinned_binary("NANOCODER", "nanocoder", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    nanocoder_home(user_home.path(), &api.url);
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&nanocoder, "nanocoder");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env(KEY_VAR, "mock-key");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&[
        "run",
        "-d",
        "nanocoder",
        "--size",
        "120x40",
        "--prompt",
        "hello narwhal",
    ]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], real_cli::version_under_test(&nanocoder, PINNED));
    assert_eq!(run["env_harness"], json!([KEY_VAR]));

    // Its first start here: the folder is not trusted yet.
    wait(&home, &id, "nanocoder asks whether to trust the folder", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Do you trust the files in this folder?"));
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the first prompt is answered", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    let run = home.show(&id);
    let session = run["session_id"].as_str().expect("the session is found").to_string();
    let file = PathBuf::from(run["transcript_path"].as_str().expect("its file is known"));
    let sessions = user_home.path().join(".local/share/nanocoder/sessions");
    assert_eq!(file, sessions.join(format!("{session}.json")));

    // A prompt never lands on the user's half-typed draft.
    wait(&home, &id, "the first turn is over", || composer_up(&home, &id));
    // Backspaces that come in one read are a paste to it; Ctrl-U erases.
    real_cli::a_draft_holds_a_prompt(&home, &id, input, &[0x15]);

    wait(&home, &id, "the draft's turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "nanocoder asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Do you want to execute tool \"execute_bash\"?"));
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    // nanocoder keeps no tokens in its session.
    let call = real_cli::the_call_without_tokens(&transcript(&home, &id), "execute_bash", "EXIT_CODE: 0");
    assert_eq!(call["input"]["command"], "touch perm-marker");
    assert_eq!(api.prompts.all(), ["hello narwhal", "QUEUED-ONE", "SHELL please"]);

    wait(&home, &id, "the second turn is over", || composer_up(&home, &id));
    exit(&home, &id);

    // Resume: `nanocoder --resume ID`, the same session in the same file.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let argv = real_cli::argv_of(&home, &again);
    assert!(argv.ends_with(&["--resume".to_string(), session.clone()]), "{argv:?}");
    real_cli::resumed_in_its_file(
        &home,
        &again,
        &session,
        &file,
        &["hello narwhal", "QUEUED-ONE", "SHELL please"],
        || composer_up(&home, &again),
    );
    exit(&home, &again);

    let refused = home.fails(&["sessions", "fork", &session]);
    assert!(refused.contains("cannot fork"), "{refused}");
}

/// `/exit`, as a user types it: its first Enter takes the command from
/// the list it opens, the second runs it. An Enter that comes as the list
/// closes can reach nanocoder's key handler before it has taken in the
/// choice, and is spent choosing again; the command stays in its box and a
/// user presses Enter once more.
fn exit(home: &Home, run: &str) {
    home.ok(&["send", run, "/exit"]);
    let taken =
        |l: &[String]| input(l).as_deref() == Some("/exit") && !l.iter().any(|r| r.contains("Available commands"));
    let mut attach = common::pty::Pty::spawn(home, &["attach", run], 40, 120, home.path(), true);
    attach.wait_screen("/exit taken from its list", taken);
    for _ in 0..5 {
        attach.type_bytes(b"\r");
        let waited = home.run(&["wait", run, "--timeout", "15"]);
        if waited.status.code() != Some(124) {
            break;
        }
    }
    let ended = home.wait_end(run);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    attach.exit_code();
}
