//! End to end with the real GitHub Copilot CLI: `agents run copilot` in a
//! PTY with a private HOME and only its custom-provider variables exported
//! (`COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_API_KEY`,
//! `COPILOT_MODEL`, and `COPILOT_OFFLINE`: its documented BYOK mode, which
//! needs no GitHub account), the URL pointing at a small mock of the
//! chat-completions API on loopback. Only the model is mocked; Copilot
//! writes its real session and resumes it.
//!
//! What it proves: the id `agents` minted (`--session-id=ID`) is the
//! session Copilot writes, in `~/.copilot/session-state/<id>/events.jsonl`;
//! its folder trust question and its command prompt are seen on the screen
//! as `needs_approval` and `agents answer yes` answers them; the hooks of
//! the plugin `agents` passes (`--plugin-dir`) report each turn's prompt,
//! its permission notice, the tool's end and its `Stop`; `agents
//! transcript` reads the reply, the `bash` call, its result and the tokens
//! from that file; `/exit` ends the run `succeeded`; `agents sessions
//! resume` continues the same session (`--resume=ID`) in the same file;
//! and `agents sessions fork` says why Copilot cannot.
//!
//! Needs the CLI: `AGENTS_TEST_COPILOT=/path/to/copilot` (and
//! `AGENTS_REQUIRE_COPILOT=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::Home;
use common::chat_mock::{self, text_of};
use common::real_cli::{
    self, BinDir, MockApi, Prompts, Reply, Request, has_message, hooks, last_status_why, transcript,
};
use serde_json::{Value, json};

/// The version `.ci/run` installs and the fixture was recorded with.
const PINNED: &str = "1.0.102";

/// The mock OpenAI API. The main conversation (its system prompt is
/// Copilot's own) is answered by the last user text: one holding `SHELL`
/// gets a `bash` call (`touch perm-marker`), others `Mock reply to: <the
/// text>`; a turn sending a tool result back gets `Ran it.`. Side requests
/// (naming the session) get a plain word and are not recorded as prompts.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let main = messages
        .first()
        .is_some_and(|m| text_of(&m["content"]).starts_with("You are the GitHub Copilot CLI"));
    // Copilot puts the time before the user's words in one message.
    let words = |m: &Value| {
        let all = text_of(&m["content"]);
        all.rsplit("</current_datetime>")
            .next()
            .unwrap_or_default()
            .trim()
            .to_string()
    };
    let shell = || {
        let args = json!({ "command": "touch perm-marker", "description": "Create a marker file" });
        chat_mock::calls("bash", args)
    };
    let delta = match main {
        true => chat_mock::turn(&messages, prompts, words, shell),
        false => chat_mock::says("Narwhal session"),
    };
    chat_mock::streamed(delta, chat_mock::usage(true))
}

/// How long a step of a real Copilot may take: it unpacks its bundle into
/// a fresh HOME's cache at its first start (about 2 s here), and CI is a
/// busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// Copilot's composer is up with no question over it: its footer is drawn.
fn composer_up(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    screen.contains("/ commands") && !screen.contains("Do you ")
}

/// Answers Copilot's folder trust question, which every start in a folder
/// not remembered as trusted asks, and waits for its composer.
fn trust_the_folder(home: &Home, run: &str) {
    wait(home, run, "copilot asks whether to trust the folder", || {
        home.show(run)["status"] == "needs_approval"
    });
    assert!(home.logs(run).contains("Do you trust the files in this folder?"));
    home.ok(&["answer", run, "yes"]);
    wait(home, run, "copilot's composer is up", || composer_up(home, run));
}

#[test]
fn a_real_copilot_run_writes_its_minted_session_asks_permission_and_resumes() {
    let Some(copilot) = real_cli::pinned_binary("COPILOT", "copilot", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&copilot, "copilot");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("COPILOT_HOME")
            .env_remove("COPILOT_GITHUB_TOKEN")
            .env_remove("GH_TOKEN")
            .env_remove("GITHUB_TOKEN")
            .env("COPILOT_PROVIDER_BASE_URL", &api.url)
            .env("COPILOT_PROVIDER_API_KEY", "mock-key")
            .env("COPILOT_MODEL", "mock-model")
            .env("COPILOT_OFFLINE", "true");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&["run", "-d", "copilot", "--size", "120x40"]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], PINNED);
    assert_eq!(
        run["env_harness"],
        json!([
            "COPILOT_MODEL",
            "COPILOT_OFFLINE",
            "COPILOT_PROVIDER_API_KEY",
            "COPILOT_PROVIDER_BASE_URL"
        ])
    );
    // The session is known before spawn: the id given to `--session-id`.
    let session = run["session_id"].as_str().expect("a minted session id").to_string();
    let events = PathBuf::from(run["transcript_path"].as_str().expect("the events file is known"));
    assert_eq!(
        events,
        user_home
            .path()
            .join(".copilot/session-state")
            .join(&session)
            .join("events.jsonl")
    );
    trust_the_folder(&home, &id);

    home.ok(&["send", &id, "hello narwhal"]);
    wait(&home, &id, "the reply is in the transcript", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    // Its plugin's hooks report the turn.
    wait(&home, &id, "the turn's Stop hook is the evidence", || {
        last_status_why(&home, &id) == "hook Stop"
    });
    let seen = hooks(&home, &id);
    for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
        assert!(seen.iter().any(|h| h == event), "{event} in {seen:?}");
    }
    let first = std::fs::read_to_string(&events).unwrap();
    assert!(first.contains(&format!("\"sessionId\":\"{session}\"")), "{first}");
    let messages = transcript(&home, &id);
    assert!(has_message(&messages, "user", "hello narwhal"), "{messages:?}");
    assert_eq!(api.prompts.all(), ["hello narwhal"]);

    // A shell command asks first: the question on screen is the evidence.
    wait(&home, &id, "the first turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "copilot asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    // Its permission hook may say so before the question is drawn; an
    // answer needs it on the screen.
    wait(&home, &id, "the question is on the screen", || {
        home.logs(&id).contains("Do you want to run this command?")
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
    assert!(hooks(&home, &id).iter().any(|h| h == "PostToolUse"));
    let messages = transcript(&home, &id);
    let call = messages
        .iter()
        .find(|m| m["tool_calls"][0]["name"] == "bash")
        .unwrap_or_else(|| panic!("the call is in the transcript: {messages:?}"));
    assert_eq!(call["tool_calls"][0]["input"]["command"], "touch perm-marker");
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["text"].as_str().is_some_and(|t| t.contains("exit code 0"))),
        "{messages:?}"
    );
    // 40 prompt tokens of which 10 cached, 7 out: the input is the rest.
    assert!(
        messages
            .iter()
            .any(|m| m["usage"]["output"] == 7 && m["usage"]["input"] == 30 && m["usage"]["cache_read"] == 10),
        "the reply's tokens are read: {messages:?}"
    );

    wait(&home, &id, "the second turn is over", || composer_up(&home, &id));
    home.ok(&["send", &id, "/exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Resume: `copilot --resume=ID`, the same session in the same file.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let argv = real_cli::argv_of(&home, &again);
    assert_eq!(argv.last(), Some(&format!("--resume={session}")), "{argv:?}");
    assert_eq!(home.show(&again)["session_id"], session.as_str());
    trust_the_folder(&home, &again);
    home.ok(&["send", &again, "back again"]);
    wait(
        &home,
        &again,
        "the resumed reply is in the session's transcript",
        || has_message(&transcript(&home, &session), "assistant", "Mock reply to: back again"),
    );
    real_cli::each_user_text_once(&home, &session, &["hello narwhal", "SHELL please", "back again"]);
    assert!(
        std::fs::read_to_string(&events).unwrap().contains("back again"),
        "the resume wrote to the session's own file"
    );
    wait(&home, &again, "the resumed turn is over", || composer_up(&home, &again));
    home.ok(&["send", &again, "/exit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Copilot forks only with `/fork` inside a session: a fork from here
    // is refused with that reason, and nothing starts.
    let fork = home
        .cmd(&["sessions", "fork", &session, "-d"])
        .current_dir(&cwd)
        .env("PATH", &path)
        .env("HOME", user_home.path())
        .output()
        .unwrap();
    assert!(!fork.status.success());
    assert!(String::from_utf8_lossy(&fork.stderr).contains("/fork"), "{fork:?}");
}
