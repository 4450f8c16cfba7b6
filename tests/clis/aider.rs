//! End to end with the real aider: `agents run aider` in a PTY, in a git
//! repository, with `--model openai/mock` and `OPENAI_API_BASE` exported, pointing at a
//! small mock of the OpenAI chat completions API on loopback (streamed).
//! Only the model is mocked.
//!
//! What it proves: the run records aider's version; a prompt sent with
//! `agents send` is typed into aider's prompt and submitted; aider appends
//! the exchange to the repository's `.aider.chat.history.md`, which reads
//! back (`read_file`) as the prompt, the reply and aider's token notice;
//! the run finds its chat in that file as its session, so `agents
//! transcript RUN` shows the exchange and `agents search` finds it; `/exit`
//! ends the run `succeeded`; a second run in the same repository appends a
//! chat to the same file, and each run's transcript is its own chat only.
//!
//! Needs aider: `AGENTS_TEST_AIDER=/path/to/aider` (`.ci/run` installs
//! `aider-chat` from PyPI into a venv and sets it, with
//! `AGENTS_REQUIRE_AIDER=1` so a missing aider fails instead of skipping).

use crate::common;

use std::process::Command;
use std::time::Duration;

use agents::transcript::{Format, read_file};
use common::Home;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, transcript};
use serde_json::{Value, json};

/// The version the fixture was recorded with and `.ci/run` installs.
const PINNED: &str = "0.86.2";

/// A mock `POST /v1/chat/completions`: `Mock reply to: <the first line of
/// the last user message>`, streamed in two deltas and a usage chunk.
fn answer(r: &Request, prompts: &Prompts) -> Reply {
    if !r.line.starts_with("POST /v1/chat/completions ") {
        return Reply::not_found();
    }
    let req = r.json();
    let prompt = req["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .and_then(|c| c.lines().next())
        .unwrap_or_default()
        .to_string();
    prompts.push(prompt.clone());
    let text = format!("Mock reply to: {prompt}");
    let (head, tail) = text.split_at(text.len() / 2);
    let chunk = |choices: Value, usage: Value| {
        json!({ "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0,
                "model": "mock", "choices": choices, "usage": usage })
    };
    let events = [
        chunk(
            json!([{ "index": 0, "delta": { "role": "assistant", "content": head }, "finish_reason": null }]),
            Value::Null,
        ),
        chunk(
            json!([{ "index": 0, "delta": { "content": tail }, "finish_reason": null }]),
            Value::Null,
        ),
        chunk(
            json!([{ "index": 0, "delta": {}, "finish_reason": "stop" }]),
            Value::Null,
        ),
        chunk(
            json!([]),
            json!({ "prompt_tokens": 700, "completion_tokens": 9, "total_tokens": 709 }),
        ),
    ];
    let mut payload: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    payload.push_str("data: [DONE]\n\n");
    Reply::ok("text/event-stream", payload)
}

/// How long a step of a real aider may take: its imports take seconds, and
/// CI is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

#[test]
fn a_real_aider_run_takes_a_prompt_and_writes_its_chat_history() {
    let Some(aider) = real_cli::pinned_binary("AIDER", "aider", PINNED) else {
        return;
    };
    let api = MockApi::start("/v1", answer);
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.email=ci@agents.invalid", "-c", "user.name=ci"])
            .args(args)
            .current_dir(&cwd)
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(cwd.join("hello.py"), "print(\"hi\")\n").unwrap();
    git(&["add", "hello.py"]);
    git(&["commit", "-qm", "init"]);
    let bin = BinDir::with(&aider, "aider");
    let path = bin.path();

    let home = Home::new();
    let start = || {
        let mut cmd = home.cmd(&[
            "run",
            "-d",
            "aider",
            "--size",
            "120x40",
            "--",
            "--model",
            "openai/mock",
            "--no-check-update",
            "--analytics-disable",
            "--no-show-model-warnings",
            "--no-show-release-notes",
            "--no-gitignore",
            "--no-auto-commits",
            "--yes-always",
            "hello.py",
        ]);
        // The endpoint and key only exported, as in a user's shell: they
        // pass by default (issue #9). litellm fetches its model price list
        // from GitHub at start unless told to use the copy it ships.
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env("OPENAI_API_BASE", &api.url)
            .env("OPENAI_API_KEY", "sk-mock")
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True");
        real_cli::stdout_of(cmd, "run aider")
    };
    let id = start();
    assert_eq!(home.show(&id)["harness_version"], PINNED);
    wait(&home, &id, "aider's prompt is up", || {
        home.logs(&id).lines().any(|l| l.trim_end() == ">")
    });

    home.ok(&["send", &id, "what does hello.py print?"]);
    wait(&home, &id, "the reply is on the screen", || {
        home.logs(&id).contains("Mock reply to: what does hello.py print?")
    });
    assert_eq!(api.prompts.all(), ["what does hello.py print?"]);
    let history = cwd.join(".aider.chat.history.md");
    wait(&home, &id, "the exchange is in the chat history", || {
        std::fs::read_to_string(&history).is_ok_and(|h| h.contains("Tokens:"))
    });
    let b = read_file(&history, Format::Aider).unwrap();
    let said: Vec<(&str, &str)> = b
        .messages
        .iter()
        .filter(|m| m.role.as_str() != "system")
        .map(|m| (m.role.as_str(), m.text.as_str()))
        .collect();
    assert_eq!(
        said,
        [
            ("user", "what does hello.py print?"),
            ("assistant", "Mock reply to: what does hello.py print?"),
        ],
        "{b:?}"
    );
    // aider counts the tokens itself when the stream has no usage it asked
    // for: some sent, some received.
    assert!(b.usage.input > 0 && b.usage.output > 0, "{:?}", b.usage);

    // The run found its chat in the history and reads it as its transcript.
    let first = vec![
        ("user", "what does hello.py print?".to_string()),
        ("assistant", "Mock reply to: what does hello.py print?".to_string()),
    ];
    wait(&home, &id, "the run's transcript has the exchange", || {
        conversation(&home, &id) == first
    });
    let session = home.show(&id)["session_id"].as_str().unwrap_or_default().to_string();
    assert!(session.starts_with("aider-"), "{}", home.show(&id));
    let hits = home.json(&["search", "hello.py", "--json"]);
    assert!(
        hits["hits"]
            .as_array()
            .is_some_and(|h| h.iter().any(|hit| hit["run_id"] == id.as_str())),
        "{hits}"
    );
    home.ok(&["send", &id, "/exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // A second run in the same repository appends to the same file; each
    // run's transcript is its own chat only.
    let second = start();
    wait(&home, &second, "aider's prompt is up", || {
        home.logs(&second).lines().any(|l| l.trim_end() == ">")
    });
    home.ok(&["send", &second, "say goodbye"]);
    let own = vec![
        ("user", "say goodbye".to_string()),
        ("assistant", "Mock reply to: say goodbye".to_string()),
    ];
    wait(&home, &second, "the second run's transcript has its exchange", || {
        conversation(&home, &second) == own
    });
    assert_ne!(home.show(&second)["session_id"], session.as_str());
    // The first run's chat (its `/exit` included) has none of the second's.
    let kept = conversation(&home, &id);
    assert!(
        kept.starts_with(&first) && !kept.iter().any(|m| own.contains(m)),
        "{kept:?}"
    );
    home.ok(&["send", &second, "/exit"]);
    let ended = home.wait_end(&second);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}

/// What the user and the model said in a run, by `agents transcript --json`
/// (aider's own notices left out); empty while none is indexed.
fn conversation(home: &Home, run: &str) -> Vec<(&'static str, String)> {
    transcript(home, run)
        .iter()
        .filter_map(|m| {
            let role = match m["role"].as_str()? {
                "user" => "user",
                "assistant" => "assistant",
                _ => return None,
            };
            Some((role, m["text"].as_str()?.to_string()))
        })
        .collect()
}
