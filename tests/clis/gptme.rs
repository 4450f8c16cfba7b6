//! End to end with the real gptme: `agents run gptme` in a PTY with a
//! private HOME and `OPENAI_BASE_URL` and `MODEL` exported (gptme's `local`
//! provider, how its docs reach an OpenAI-compatible server), pointing at a
//! small mock of the chat-completions API on loopback. Only the model is
//! mocked; gptme writes its real conversation and resumes it.
//!
//! What it proves: the name `agents` minted (`--name`) is the conversation
//! gptme writes, `~/.local/share/gptme/logs/<name>/conversation.jsonl`,
//! indexed as it is written (search finds it unasked);
//! `agents transcript` reads the reply, a `shell` call, its result and the
//! tokens from it; a prompt sent while gptme waits for a slow model, its
//! screen still (the run reads as idle; gptme discards keys typed before
//! its `User:` line is drawn), waits for the line and lands; its
//! `Execute shell?` line is `needs_approval` and `agents answer yes` runs
//! the command;
//! `/exit` ends the run `succeeded`; `agents sessions resume` continues the
//! same conversation in the same file; and a fork is refused, saying why.
//!
//! Needs the CLI: `AGENTS_TEST_GPTME=/path/to/gptme` (and
//! `AGENTS_REQUIRE_GPTME=1` makes a missing CLI fail instead of skip).

use crate::common;

use std::path::PathBuf;
use std::time::Duration;

use common::Home;
use common::chat_mock::{self, text_of};
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::{Value, json};

/// The version `.ci/run` installs and the fixtures were recorded with.
const PINNED: &str = "0.35.1";

/// How long the mock model thinks before a slow reply, as a real one may:
/// gptme's screen stands still meanwhile.
const THINKING: Duration = Duration::from_secs(3);

/// The mock OpenAI API. The conversation (streamed, with tools) is
/// answered by the last user text: one holding `SHELL` gets a `shell` call
/// (`touch perm-marker`), others `Mock reply to: <the text>`, after
/// `THINKING` for one holding `SLOW`; a turn sending a tool result back
/// gets `Ran it.`. gptme's request for a conversation's name (not
/// streamed, on a thread of its own) gets one.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    if r.method() == "GET" && r.path().ends_with("/models") {
        return chat_mock::models();
    }
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    let usage = chat_mock::usage(false);
    if r.json()["stream"] != true {
        return chat_mock::completed(chat_mock::says("Narwhal chat"), usage);
    }
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let delta = if last["role"] == "tool" {
        chat_mock::says("Ran it.")
    } else {
        let text = text_of(&last["content"]).trim().to_string();
        prompts.push(text.clone());
        if text.contains("SHELL") {
            chat_mock::calls("shell", json!({ "command": "touch perm-marker" }))
        } else {
            if text.contains("SLOW") {
                std::thread::sleep(THINKING);
            }
            chat_mock::says(&format!("Mock reply to: {text}"))
        }
    };
    chat_mock::streamed(delta, usage)
}

/// How long a step of a real gptme may take: python starts it in seconds,
/// but CI is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// gptme's `User:` line is the last thing on screen: it takes a prompt.
fn prompt_up(home: &Home, run: &str) -> bool {
    let screen = home.logs(run);
    screen
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| l.trim() == "User:")
}

#[test]
fn a_real_gptme_run_writes_its_named_conversation_holds_a_prompt_for_its_input_asks_and_resumes() {
    let Some(gptme) = real_cli::pinned_binary("GPTME", "gptme", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&gptme, "gptme");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env("OPENAI_BASE_URL", &api.url)
            .env("MODEL", "local/mock-model")
            // gptme fetches a tokenizer from the network, which is closed.
            .env("GPTME_TIKTOKEN_TIMEOUT", "0");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&["run", "-d", "gptme", "--size", "120x40"]);
    let run = home.show(&id);
    assert_eq!(run["harness_version"], real_cli::version_under_test(&gptme, PINNED));
    assert_eq!(
        run["env_harness"],
        json!(["GPTME_TIKTOKEN_TIMEOUT", "MODEL", "OPENAI_BASE_URL"])
    );
    let name = run["session_id"].as_str().expect("a minted name").to_string();
    let file = PathBuf::from(run["transcript_path"].as_str().expect("the conversation is known"));
    assert_eq!(
        file,
        user_home
            .path()
            .join(".local/share/gptme/logs")
            .join(&name)
            .join("conversation.jsonl")
    );
    wait(&home, &id, "gptme's prompt is up", || prompt_up(&home, &id));

    home.ok(&["send", &id, "hello narwhal"]);
    // Indexed as gptme writes it, nobody asking for the transcript: search
    // finds the reply.
    wait(&home, &id, "search finds the reply", || {
        let hits = home.json(&["search", "narwhal", "--json"]);
        hits["hits"].as_array().is_some_and(|h| {
            h.iter()
                .any(|hit| hit["run_id"] == id.as_str() && hit["role"] == "assistant")
        })
    });
    assert!(has_message(
        &transcript(&home, &id),
        "assistant",
        "Mock reply to: hello narwhal"
    ));
    wait(&home, &id, "the first turn is over", || prompt_up(&home, &id));
    // Sent while the model thinks, the screen still: it waits for `User:`,
    // past the keys gptme discards before drawing it.
    home.ok(&["send", &id, "SLOW please"]);
    wait(&home, &id, "gptme waits for the model", || {
        home.logs(&id).contains("Thinking...")
    });
    home.ok(&["send", &id, "after the slow one"]);
    wait(&home, &id, "the prompt sent meanwhile is answered", || {
        has_message(
            &transcript(&home, &id),
            "assistant",
            "Mock reply to: after the slow one",
        )
    });
    wait(&home, &id, "that turn is over", || prompt_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "gptme asks to run the command", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Execute shell? [Y/n"));
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the command ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    assert_eq!(
        api.prompts.all(),
        ["hello narwhal", "SLOW please", "after the slow one", "SHELL please"]
    );
    let messages = transcript(&home, &id);
    assert!(has_message(&messages, "assistant", "Ran it."), "{messages:?}");
    let call = real_cli::the_call(&messages, "shell", "touch perm-marker");
    assert_eq!(call["input"]["command"], "touch perm-marker");

    wait(&home, &id, "the turn is over", || prompt_up(&home, &id));
    home.ok(&["send", &id, "/exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Resume: `--name NAME`, the same conversation in the same file.
    let again = agents(&["sessions", "resume", &name, "-d"]);
    let argv = real_cli::argv_of(&home, &again);
    assert!(argv.ends_with(&["--name".to_string(), name.clone()]), "{argv:?}");
    real_cli::resumed_in_its_file(
        &home,
        &again,
        &name,
        &file,
        &["hello narwhal", "SLOW please", "after the slow one", "SHELL please"],
        || prompt_up(&home, &again),
    );
    home.ok(&["send", &again, "/exit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // gptme forks only from inside a conversation: refused, saying so.
    let refused = home.fails(&["sessions", "fork", &name]);
    assert!(refused.contains("/fork"), "{refused}");
}
