//! End to end with the real Grok CLI: `agents run grok` in a PTY with a
//! private HOME and `GROK_API_KEY`, `GROK_BASE_URL` and `GROK_MODEL`
//! exported (how its README reaches a server of one's own), the URL
//! pointing at a small mock of the chat-completions API on loopback. Only
//! the model is mocked.
//!
//! What it proves: its variables are passed by name; a prompt given at the
//! start (`--prompt`) and one sent later are answered on its screen; its "Do you want
//! to proceed with this operation?" is `needs_approval` and `agents answer
//! yes` runs the command; `exit` ends the run `succeeded`, with no
//! session (it keeps none). The first prompt waits for its input box: keys
//! typed while it starts come to it as one paste, their Enter kept.
//!
//! Needs the CLI: `AGENTS_TEST_GROK=/path/to/grok` (and
//! `AGENTS_REQUIRE_GROK=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::time::Duration;

use common::Home;
use common::chat_mock;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request};
use serde_json::json;

/// What it says it is (`--version`, fixed in its code); `.ci/run`
/// installs its package 0.0.34.
const PINNED: &str = "1.0.1";

/// The mock OpenAI API: the last user text holding `SHELL` gets a `bash`
/// call (`touch perm-marker`), others `Mock reply to: <the text>`; a turn
/// sending a tool result back gets `Ran it.`.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let shell = || chat_mock::calls("bash", json!({ "command": "touch perm-marker" }));
    let delta = chat_mock::turn(&messages, prompts, chat_mock::words, shell);
    chat_mock::streamed(delta, chat_mock::usage(false))
}

/// How long a step of a real Grok CLI may take on a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// Its input box is up, empty, and no turn or question is on screen.
fn composer_up(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    screen.contains("❯ Ask me anything") && !screen.contains("esc to interrupt") && !screen.contains("Do you want to")
}

#[test]
fn a_real_grok_run_answers_asks_permission_and_ends() {
    let Some(grok) = real_cli::pinned_binary("GROK", "grok", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&grok, "grok");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env("GROK_API_KEY", "mock-key")
            .env("GROK_BASE_URL", &api.url)
            .env("GROK_MODEL", "mock-model");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&["run", "-d", "grok", "--size", "120x40", "--prompt", "hello narwhal"]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], real_cli::version_under_test(&grok, PINNED));
    assert_eq!(
        run["env_harness"],
        json!(["GROK_API_KEY", "GROK_BASE_URL", "GROK_MODEL"])
    );
    wait(&home, &id, "the first prompt is answered", || {
        home.logs(&id).contains("Mock reply to: hello narwhal") && composer_up(&home, &id)
    });

    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "grok asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Do you want to proceed with this operation?"));
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && home.logs(&id).contains("Ran it.") && composer_up(&home, &id)
    });
    assert_eq!(api.prompts.all(), ["hello narwhal", "SHELL please"]);

    home.ok(&["send", &id, "exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert!(home.show(&id)["session_id"].is_null(), "it keeps no sessions");
    let said = home.fails(&["transcript", &id]);
    assert!(
        said.contains("grok keeps none") && said.contains("agents logs"),
        "{said}"
    );
}
