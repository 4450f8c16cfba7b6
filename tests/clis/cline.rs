//! End to end with the real Cline CLI: `agents run cline` in a PTY with a
//! private HOME whose `~/.cline/data/settings/providers.json` points its
//! `openai-compatible` provider at a small mock of the chat-completions API
//! on loopback (what `cline auth -p openai-compatible -b URL` writes), its
//! key `OPENAI_API_KEY` from the environment. Only the model is mocked;
//! Cline writes its real session and resumes it.
//!
//! What it proves: the session Cline mints at its start is found (its cwd
//! is the run's) and its `<id>.messages.json` read: the reply, a
//! `run_commands` call, its result and the tokens; a prompt sent onto a
//! draft the user is typing waits until it is erased; with `--auto-approve
//! false` its "Approve tool call?" is `needs_approval` and `agents answer
//! yes` runs the command; the run is Cline's own process and, when it is
//! resumed, so is the resumed one, no daemon of Cline's started or left
//! behind (`--data-dir`); `/quit` ends it `succeeded`; `agents sessions
//! resume` continues the session (`--id ID`) in its file; a fork is
//! refused, saying why.
//!
//! Needs the CLI: `AGENTS_TEST_CLINE=/path/to/cline` (and
//! `AGENTS_REQUIRE_CLINE=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Home;
use common::chat_mock;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::{Value, json};

/// The version `.ci/run` installs and the fixtures were recorded with.
const PINNED: &str = "3.0.65";

/// The mock OpenAI API: the last user text holding `SHELL` gets a
/// `run_commands` call (`touch perm-marker`), others `Mock reply to: <the
/// text>`; a turn sending a tool result back gets `Ran it.`.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let shell = || chat_mock::calls("run_commands", json!({ "commands": ["touch perm-marker"] }));
    let delta = chat_mock::turn(&messages, prompts, chat_mock::words, shell);
    chat_mock::streamed(delta, chat_mock::usage(false))
}

/// How long a step of a real Cline may take: its 150 MB program loads in
/// seconds, but CI is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// Cline's input box is up and no turn or question is on screen.
fn composer_up(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    (screen.contains("❯ Ask anything") || screen.contains("❯ What can I do for you?"))
        && !screen.contains("Thinking...")
        && !screen.contains("Approve tool call?")
}

/// The text in Cline's input box (its placeholders: none), when it shows:
/// the lowest row starting `❯` (its history's prompts start so too).
fn input(lines: &[String]) -> Option<String> {
    let row = lines.iter().rev().find(|l| l.trim_start().starts_with('❯'))?;
    let text = row.trim().trim_start_matches('❯').trim();
    let empty = text == "Ask anything..." || text == "What can I do for you?";
    Some(if empty { String::new() } else { text.to_string() })
}

/// A user's `~/.cline` after `cline auth` for a local server, with its
/// start-up notices seen and its self-update off.
fn cline_home(home: &Path, api: &str) {
    let settings = home.join(".cline/data/settings");
    std::fs::create_dir_all(&settings).unwrap();
    let providers = json!({ "version": 1, "lastUsedProvider": "openai-compatible", "modes": {},
        "providers": { "openai-compatible": { "settings": { "provider": "openai-compatible",
            "model": "mock-model", "baseUrl": api }, "updatedAt": "2026-12-06T00:00:00.000Z",
            "tokenSource": "manual" } } });
    std::fs::write(settings.join("providers.json"), providers.to_string()).unwrap();
    let global = json!({ "autoUpdateEnabled": false, "telemetryOptOut": true });
    std::fs::write(settings.join("global-settings.json"), global.to_string()).unwrap();
    let notices = json!({ "shown": { "cline-cli-cline-pass-intro": true, "cline-cli-desktop-launch": true } });
    std::fs::write(settings.join("cli-notices.json"), notices.to_string()).unwrap();
}

#[test]
fn a_real_cline_run_is_found_asks_permission_and_resumes() {
    let Some(cline) = real_cli::pinned_binary("CLINE", "cline", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    cline_home(user_home.path(), &api.url);
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&cline, "cline");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("CLINE_DIR")
            .env_remove("CLINE_DATA_DIR")
            .env_remove("CLINE_SESSION_BACKEND_MODE")
            .env("OPENAI_API_KEY", "mock-key");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&[
        "run",
        "-d",
        "cline",
        "--size",
        "120x40",
        "--prompt",
        "hello narwhal",
        "--",
        "--auto-approve",
        "false",
    ]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], real_cli::version_under_test(&cline, PINNED));
    let passed = run["env_harness"].as_array().unwrap();
    assert!(passed.contains(&json!("OPENAI_API_KEY")), "{passed:?}");
    // The first prompt, typed once its input is drawn (an Enter typed
    // while it starts would be lost).
    wait(&home, &id, "the reply is in the transcript", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    let run = home.show(&id);
    let session = run["session_id"].as_str().expect("the session is found").to_string();
    let file = PathBuf::from(run["transcript_path"].as_str().expect("its file is known"));
    let data = user_home.path().join(".cline/data/sessions");
    assert_eq!(file, data.join(&session).join(format!("{session}.messages.json")));
    assert!(has_message(&transcript(&home, &id), "user", "hello narwhal"));
    // The session runs in the run's own process, not in a daemon of Cline's.
    let meta_file = data.join(&session).join(format!("{session}.json"));
    let meta = || -> Value { serde_json::from_slice(&std::fs::read(&meta_file).unwrap()).unwrap() };
    assert_eq!(meta()["pid"], run["pid"], "{}", meta());

    // A prompt never lands on the user's half-typed draft.
    wait(&home, &id, "the first turn is over", || composer_up(&home, &id));
    real_cli::a_draft_holds_a_prompt(&home, &id, input, &[0x7f; 19]);

    wait(&home, &id, "the draft's turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "cline asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Approve tool call?"));
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    let messages = transcript(&home, &id);
    let call = real_cli::the_call(&messages, "run_commands", "touch perm-marker");
    assert_eq!(call["input"]["commands"][0], "touch perm-marker");
    assert_eq!(api.prompts.all(), ["hello narwhal", "QUEUED-ONE", "SHELL please"]);

    wait(&home, &id, "the second turn is over", || composer_up(&home, &id));
    // The run's tokens: every reply's, the last one's too.
    let replies = transcript(&home, &id)
        .iter()
        .filter(|m| m["usage"]["output"] == 7)
        .count();
    wait(&home, &id, "the run's tokens count every reply", || {
        home.show(&id)["usage"]["tokens"]["output"] == json!(7 * replies)
    });
    home.ok(&["send", &id, "/quit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Resume: `cline --id ID`, the same session in the same file.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let argv = real_cli::argv_of(&home, &again);
    assert!(argv.ends_with(&["--id".to_string(), session.clone()]), "{argv:?}");
    real_cli::resumed_in_its_file(
        &home,
        &again,
        &session,
        &file,
        &["hello narwhal", "QUEUED-ONE", "SHELL please"],
        || composer_up(&home, &again),
    );
    home.ok(&["send", &again, "/quit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    let daemons = stop_hub_daemons(&cwd);
    assert!(daemons.is_empty(), "Cline started its daemon: {daemons:?}");
    assert!(!user_home.path().join(".cline/data/locks/hub/production.json").exists());

    let refused = home.fails(&["sessions", "fork", &session]);
    assert!(refused.contains("/fork"), "{refused}");
}

/// Stops the daemons Cline started for `cwd` (so that a failing test
/// leaves none behind), saying which.
fn stop_hub_daemons(cwd: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let words: Vec<String> = cmdline
            .split(|b| *b == 0)
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        let ours = words.windows(2).any(|w| w[0] == "--cwd" && Path::new(&w[1]) == cwd);
        if ours && words.iter().any(|w| w == "--cline-hub-daemon") {
            // Its command line was just read: Cline's daemon for this
            // test's folder.
            let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGTERM);
            found.push(words.join(" "));
        }
    }
    found
}
