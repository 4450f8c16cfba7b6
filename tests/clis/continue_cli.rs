//! End to end with the real Continue CLI (`cn`): `agents run continue` in a
//! PTY with a private HOME whose `~/.continue/config.yaml` names one model
//! on a small mock of the chat-completions API on loopback, its key taken
//! from the environment (`${{ secrets.MOCK_KEY }}`), as Continue's docs
//! configure a local model. Only the model is mocked; cn writes its real
//! session file and resumes and forks its real sessions.
//!
//! What it proves: the session cn mints at the first prompt is found, in
//! `~/.continue/sessions/<id>.json`, and linked to the run; the key its
//! config names is passed by name; `agents transcript` reads the reply, a `Bash` call, its result
//! and the tokens from that file; a prompt sent onto a draft the user is
//! typing waits until it is erased; the permission box is seen on the screen
//! as `needs_approval` and `agents answer yes` allows the command; `/exit`
//! ends the run `succeeded`; `agents sessions resume` continues that
//! session in its file although another session was written after it (cn
//! resumes the one written last: the run touches its file); `agents
//! sessions fork` starts a session of its own (`--fork ID`), found in a
//! file of its own.
//!
//! Needs the CLI: `AGENTS_TEST_CONTINUE=/path/to/cn` (and
//! `AGENTS_REQUIRE_CONTINUE=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Home;
use common::chat_mock;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::{Value, json};

/// The version `.ci/run` installs and the fixtures were recorded with.
const PINNED: &str = "1.5.47";

/// The mock OpenAI API. The main conversation (its system prompt is cn's
/// own) is answered by the last user text: one holding `SHELL` gets a
/// `Bash` call (`touch perm-marker`), others `Mock reply to: <the text>`;
/// a turn sending a tool result back gets `Ran it.`. cn's request for a
/// session title (not streamed, no tools) gets one and is not a prompt.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let usage = chat_mock::usage(false);
    if r.json()["stream"] != true {
        return chat_mock::completed(chat_mock::says("Mock title"), usage);
    }
    let shell = || chat_mock::calls("Bash", json!({ "command": "touch perm-marker" }));
    let delta = chat_mock::turn(&messages, prompts, chat_mock::words, shell);
    chat_mock::streamed(delta, usage)
}

/// How long a step of a real cn may take: node loads its 13 MB bundle in
/// seconds, but CI is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// cn's input box is up, empty and idle: the run takes a prompt.
fn composer_up(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    screen.contains("Ask anything") && !screen.contains("esc to interrupt") && !screen.contains("Would you like")
}

/// The text in cn's input box (its placeholder: none), when it shows.
fn input(lines: &[String]) -> Option<String> {
    let row = lines.iter().rev().find(|l| l.trim_start().starts_with("│ ●"))?;
    let text = row.trim().trim_matches('│').trim().trim_start_matches('●').trim();
    let empty = text.starts_with("▋Ask anything");
    Some(if empty {
        String::new()
    } else {
        text.trim_end_matches('▋').to_string()
    })
}

/// A user's `~/.continue`: one model on the mock, its key a secret read
/// from the environment, and the first start's questions behind it.
fn continue_home(dir: &Path, api: &str) {
    let config = format!(
        "name: local\nversion: 0.0.1\nschema: v1\nmodels:\n  - name: gpt-mock\n    provider: openai\n    \
         model: mock-model\n    apiBase: {api}\n    apiKey: ${{{{ secrets.MOCK_KEY }}}}\n"
    );
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("config.yaml"), config).unwrap();
    std::fs::write(dir.join(".onboarding_complete"), "2026-12-06T00:00:00.000Z").unwrap();
}

fn argv(home: &Home, run: &str) -> Vec<String> {
    real_cli::argv_of(home, run)
}

#[test]
fn a_real_continue_run_finds_its_session_asks_permission_resumes_and_forks() {
    let Some(cn) = real_cli::pinned_binary("CONTINUE", "cn", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    let dot = user_home.path().join(".continue");
    continue_home(&dot, &api.url);
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&cn, "cn");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("CONTINUE_GLOBAL_DIR")
            .env("MOCK_KEY", "mock-key");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&["run", "-d", "continue", "--size", "120x40", "--prompt", "hello narwhal"]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], real_cli::version_under_test(&cn, PINNED));
    assert_eq!(run["env_harness"], json!(["MOCK_KEY"]), "the key its config names");
    // The first prompt, typed once its input is drawn (keys typed while it
    // starts would be lost).
    wait(&home, &id, "the reply is in the transcript", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    // The session cn began at the prompt, found in its folder.
    let run = home.show(&id);
    let session = run["session_id"].as_str().expect("the session is found").to_string();
    let file = PathBuf::from(run["transcript_path"].as_str().expect("its file is known"));
    assert_eq!(file, dot.join("sessions").join(format!("{session}.json")));
    let written: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(written["sessionId"], session.as_str());
    assert_eq!(written["workspaceDirectory"], cwd.to_str().unwrap());
    assert!(has_message(&transcript(&home, &id), "user", "hello narwhal"));

    // A prompt never lands on the user's half-typed draft. (cn takes
    // keys that come together as a paste, Backspaces dropped: Ctrl-U, its
    // kill-line key, erases the draft.)
    wait(&home, &id, "the first turn is over", || composer_up(&home, &id));
    real_cli::a_draft_holds_a_prompt(&home, &id, input, &[0x15]);

    // A shell command asks first: the box on screen is the evidence.
    wait(&home, &id, "the draft's turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "cn asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Would you like to continue?"));
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    let messages = transcript(&home, &id);
    let call = real_cli::the_call(&messages, "Bash", "");
    assert_eq!(call["input"]["command"], "touch perm-marker");
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["tool_result"]["tool_use_id"] == call["id"]),
        "{messages:?}"
    );
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
    home.ok(&["send", &id, "/exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Another session of the folder, written after this one: a bare
    // `cn --resume` would go on with it.
    let other = dot.join("sessions/00000000-1111-4222-8333-444444444444.json");
    let mut decoy = written.clone();
    decoy["sessionId"] = json!("00000000-1111-4222-8333-444444444444");
    std::fs::write(&other, decoy.to_string()).unwrap();
    let decoy_text = std::fs::read_to_string(&other).unwrap();

    // Resume: `cn --resume`, its session made the one written last.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    assert_eq!(argv(&home, &again).last().map(String::as_str), Some("--resume"));
    real_cli::resumed_in_its_file(
        &home,
        &again,
        &session,
        &file,
        &["hello narwhal", "QUEUED-ONE", "SHELL please"],
        || composer_up(&home, &again),
    );
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        decoy_text,
        "the other session is untouched"
    );
    home.ok(&["send", &again, "/exit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Fork: `--fork ID`, a session of its own in a file of its own, which
    // the run finds (cn mints its id).
    let fork = agents(&["sessions", "fork", &session, "-d"]);
    assert!(argv(&home, &fork).ends_with(&["--fork".to_string(), session.clone()]));
    wait(&home, &fork, "the fork's input box is up", || composer_up(&home, &fork));
    home.ok(&["send", &fork, "forked here"]);
    wait(&home, &fork, "the fork's reply is in its transcript", || {
        has_message(&transcript(&home, &fork), "assistant", "Mock reply to: forked here")
    });
    let forked = home.show(&fork);
    let branch = forked["session_id"].as_str().expect("the fork's session is known");
    assert_ne!(branch, session, "a fork is a session of its own");
    let branch_file = PathBuf::from(forked["transcript_path"].as_str().unwrap());
    assert_eq!(branch_file, dot.join("sessions").join(format!("{branch}.json")));
    assert!(
        !std::fs::read_to_string(&file).unwrap().contains("forked here"),
        "the forked session is left as it was"
    );
    wait(&home, &fork, "the fork's turn is over", || composer_up(&home, &fork));
    home.ok(&["send", &fork, "/exit"]);
    let ended = home.wait_end(&fork);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}
