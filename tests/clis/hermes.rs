//! End to end with the real Hermes Agent: `agents run hermes` in a PTY
//! with a private HOME whose `~/.hermes/config.yaml` points its `custom`
//! provider at a small mock of the chat-completions API on loopback. Only
//! the model is mocked; Hermes keeps its real sessions in its SQLite
//! `state.db`, and resumes one.
//!
//! What it proves: the prompt given with `--prompt` waits for its `❯`
//! input, then is typed and answered; the session is found as its row in
//! `state.db` (the newest of the cwd since the run began) and its rows
//! read: the reply, a `terminal` call, its result and the tokens; a
//! prompt sent onto a draft the user is typing waits until it is erased;
//! its "Dangerous Command" question (a command Hermes counts dangerous:
//! it asks for no other) is `needs_approval` and `agents answer yes` runs
//! it; `/exit` ends it `succeeded`; `agents sessions resume` continues the
//! session (`--resume ID`) in the same rows; a fork is refused.
//!
//! Needs the CLI: `AGENTS_TEST_HERMES=/path/to/hermes` (and
//! `AGENTS_REQUIRE_HERMES=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::time::Duration;

use common::Home;
use common::chat_mock;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::json;

/// The version its fixtures were recorded with and `.ci/run` installs.
const PINNED: &str = "0.19.0";

/// What the mock asks to run: `touch` alone is not asked about, a
/// world-writable file is ("world/other-writable permissions").
const COMMAND: &str = "touch perm-marker && chmod 666 perm-marker";

/// The mock OpenAI API: its model list for Hermes' probes; a title for
/// the conversation when asked one (no tools offered); the last user text
/// holding `SHELL` gets a `terminal` call, others `Mock reply to: <the
/// text>`; a turn sending a tool result back gets `Ran it.`.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    if r.path().ends_with("/models") {
        return chat_mock::models();
    }
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let usage = chat_mock::usage(false);
    if r.json()["tools"].as_array().is_none_or(Vec::is_empty) {
        return chat_mock::completed(chat_mock::says("Narwhal greeting"), usage);
    }
    let shell = || chat_mock::calls("terminal", json!({ "command": COMMAND }));
    let delta = chat_mock::turn(&messages, prompts, chat_mock::words, shell);
    chat_mock::streamed(delta, usage)
}

/// How long a step of a real Hermes may take on a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(60);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// The text in its input, when it shows: the lowest row starting `❯`
/// with a rule below it (while it works or asks, the row starts `⚕ ❯` or
/// `⚠ ❯`).
fn input(lines: &[String]) -> Option<String> {
    let at = lines.iter().rposition(|l| l.starts_with('❯'))?;
    let below = lines[at + 1..].iter().find(|l| !l.trim().is_empty())?;
    below
        .starts_with('─')
        .then(|| lines[at].trim_start_matches('❯').trim().to_string())
}

/// Its input is up and empty: no turn or question is on.
fn input_up(home: &Home, run: &str) -> bool {
    let lines: Vec<String> = home.logs(run).lines().map(str::to_string).collect();
    input(&lines).is_some_and(|t| t.is_empty())
}

/// A private HOME whose Hermes talks to `api`, asking before a dangerous
/// command without its model's review first, and waiting for the answer.
fn user_home(api: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join(".hermes");
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!(
        "model:\n  provider: custom\n  default: mock-model\n  base_url: {api}\n  api_key: sk-mock\n\
         approvals:\n  mode: manual\n  timeout: 600\n"
    );
    std::fs::write(dir.join("config.yaml"), config).unwrap();
    home
}

#[test]
fn a_real_hermes_run_answers_asks_permission_and_resumes() {
    let Some(hermes) = real_cli::pinned_binary("HERMES", "hermes", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = user_home(&api.url);
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&hermes, "hermes");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("HERMES_HOME")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&["run", "-d", "hermes", "--size", "120x40", "--prompt", "hello narwhal"]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], real_cli::version_under_test(&hermes, PINNED));
    wait(&home, &id, "the first prompt is answered", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    let run = home.show(&id);
    let session = run["session_id"].as_str().expect("the session is found").to_string();
    let db = user_home.path().join(".hermes/state.db");
    assert_eq!(run["transcript_path"], format!("{}#{session}", db.display()));
    assert!(
        home.logs(&id).contains(&format!("Session: {session}")),
        "its banner names it"
    );

    // A prompt never lands on the user's half-typed draft.
    wait(&home, &id, "the first turn is over", || input_up(&home, &id));
    real_cli::a_draft_holds_a_prompt(&home, &id, input, &[0x15]);

    wait(&home, &id, "the draft's turn is over", || input_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "hermes asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Dangerous Command"));
    assert!(!cwd.join("perm-marker").exists(), "not before the answer");
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    // Its tokens are kept per session, not per message.
    let call = real_cli::the_call_without_tokens(&transcript(&home, &id), "terminal", "approved by the user");
    assert_eq!(call["input"]["command"], COMMAND);
    assert_eq!(api.prompts.all(), ["hello narwhal", "QUEUED-ONE", "SHELL please"]);

    wait(&home, &id, "the second turn is over", || input_up(&home, &id));
    home.ok(&["send", &id, "/exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    resume(&home, &agents, &session);
}

/// `hermes --resume ID`: the same session, its rows growing.
fn resume(home: &Home, agents: &dyn Fn(&[&str]) -> String, session: &str) {
    let again = agents(&["sessions", "resume", session, "-d"]);
    let argv = real_cli::argv_of(home, &again);
    assert!(
        argv.ends_with(&["--resume".to_string(), session.to_string()]),
        "{argv:?}"
    );
    assert_eq!(home.show(&again)["session_id"], session);
    wait(home, &again, "the resumed input is up", || {
        input_up(home, &again) && home.logs(&again).contains("Resumed session")
    });
    home.ok(&["send", &again, "back again"]);
    wait(home, &again, "the resumed reply is in the session's transcript", || {
        has_message(&transcript(home, session), "assistant", "Mock reply to: back again")
    });
    real_cli::each_user_text_once(
        home,
        session,
        &["hello narwhal", "QUEUED-ONE", "SHELL please", "back again"],
    );
    wait(home, &again, "the resumed turn is over", || input_up(home, &again));
    home.ok(&["send", &again, "/exit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    let refused = home.fails(&["sessions", "fork", session]);
    assert!(refused.contains("cannot fork"), "{refused}");
}
