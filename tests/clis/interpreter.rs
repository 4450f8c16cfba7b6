//! End to end with the real Open Interpreter: `agents run interpreter` in a
//! PTY with a private HOME, `OPENAI_API_KEY` and `OPENAI_BASE_URL`
//! exported (LiteLLM's, how a user points it at an OpenAI-compatible
//! server) and the user's own `default.yaml` naming the model, pointing
//! at a small mock of the chat-completions API on loopback. Only the
//! model is mocked; Open Interpreter writes its real conversation.
//!
//! What it proves: the run's own profile applies the user's default one
//! (its model and instructions reach the API) without writing it, and
//! names the conversation file, known at launch and written there;
//! `agents transcript` reads the reply, the code block as a call and its
//! output from it; a prompt waits for its `> ` line and never lands on a
//! draft; "Would you like to run this code? (y/n)" is `needs_approval`,
//! `agents answer yes` runs the code and `no` declines it; Ctrl-D at its
//! prompt ends the run `succeeded`; a resume (none native) starts a new
//! conversation given the old one's recent part; and a fork is refused.
//!
//! Needs the CLI: `AGENTS_TEST_INTERPRETER=/path/to/interpreter` (and
//! `AGENTS_REQUIRE_INTERPRETER=1` makes a missing CLI fail instead of
//! skip).

use crate::common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::Home;
use common::chat_mock::{self, text_of};
use common::pty::Pty;
use common::real_cli::{self, BinDir, MockApi, Prompts, Reply, Request, has_message, transcript};
use serde_json::{Value, json};

/// The version `.ci/run` installs and the fixtures were recorded with.
const PINNED: &str = "0.4.3";

/// What the user's default profile adds to the system message.
const INSTRUCTIONS: &str = "NARWHAL-PROFILE";

/// The user's `default.yaml`: the model (as its docs say, a LiteLLM
/// name; the endpoint and key come from the environment), its window and
/// tools, and instructions the mock looks for.
const DEFAULT_PROFILE: &str = "llm:\n  model: openai/mock-model\n  context_window: 8000\n  supports_functions: true\n\
custom_instructions: NARWHAL-PROFILE\nversion: 0.2.5\n";

/// The mock OpenAI API, for the key `sk-mock` only: the last user text
/// starting with `SHELL` gets a call of its one tool, `execute`, with a shell
/// command; others `Mock reply to: <the text>`; a turn sending the
/// code's output back gets `Ran it.`. Each request's model and system
/// message are kept in `seen`.
fn answer(r: &Request, prompts: &Prompts, seen: &Mutex<Vec<(String, String)>>) -> Reply {
    let Some(messages) = chat_mock::messages(r) else {
        return Reply::not_found();
    };
    if r.header("authorization") != Some("bearer sk-mock") {
        return Reply::not_found();
    }
    let system = messages.iter().find(|m| m["role"] == "system");
    let model = r.json()["model"].as_str().unwrap_or_default().to_string();
    seen.lock()
        .unwrap()
        .push((model, system.map(|m| text_of(&m["content"])).unwrap_or_default()));
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let delta = if last["role"] == "tool" {
        chat_mock::says("Ran it.")
    } else {
        let text = text_of(&last["content"]).trim().to_string();
        prompts.push(text.clone());
        if text.starts_with("SHELL") {
            let code = "touch perm-marker && echo made-marker";
            chat_mock::calls("execute", json!({ "language": "shell", "code": code }))
        } else {
            chat_mock::says(&format!("Mock reply to: {text}"))
        }
    };
    let usage = json!({ "prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47 });
    chat_mock::streamed(delta, usage)
}

/// How long a step of a real Open Interpreter may take: it starts in
/// seconds (LiteLLM, its Jupyter kernel), but CI is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(60);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// Its input line's text, when its `> ` line is the last on screen.
fn input(lines: &[String]) -> Option<String> {
    let last = lines.iter().rev().find(|l| !l.trim().is_empty())?;
    last.strip_prefix('>').map(|t| t.trim().to_string())
}

/// Its empty `> ` line is the last thing on screen: it takes a prompt.
fn prompt_up(home: &Home, run: &str) -> bool {
    let lines: Vec<String> = home.logs(run).lines().map(str::to_string).collect();
    input(&lines).is_some_and(|t| t.is_empty())
}

#[test]
fn a_real_interpreter_run_names_its_conversation_asks_before_code_and_ends_at_ctrl_d() {
    let Some(interpreter) = real_cli::pinned_binary("INTERPRETER", "interpreter", PINNED) else {
        return;
    };
    let seen = Arc::new(Mutex::new(Vec::new()));
    let api = {
        let seen = seen.clone();
        MockApi::start("/v1", move |r, p| answer(r, p, &seen))
    };
    let user_home = tempfile::tempdir().unwrap();
    let profiles = user_home.path().join(".config/open-interpreter/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(profiles.join("default.yaml"), DEFAULT_PROFILE).unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let bin = BinDir::with(&interpreter, "interpreter");
    let path = bin.path();

    let home = Home::new();
    let agents = |args: &[&str]| -> String {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&cwd)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env_remove("XDG_CONFIG_HOME")
            .env("OPENAI_API_KEY", "sk-mock")
            .env("OPENAI_BASE_URL", &api.url)
            // No update check, telemetry or price list from the network,
            // which is closed.
            .env("DISABLE_TELEMETRY", "true")
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True");
        // The machine's own provider settings (an AWS CA bundle) are not
        // this test's.
        for (name, _) in std::env::vars().filter(|(k, _)| k.starts_with("AWS_")) {
            cmd.env_remove(name);
        }
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    };
    let id = agents(&[
        "run",
        "-d",
        "interpreter",
        "--size",
        "120x40",
        "--prompt",
        "hello narwhal",
        "--",
        "--offline",
    ]);
    let run = home.show(&id);
    assert_eq!(
        run["harness_version"],
        real_cli::version_under_test(&interpreter, PINNED)
    );
    assert_eq!(
        run["env_harness"],
        json!([
            "DISABLE_TELEMETRY",
            "LITELLM_LOCAL_MODEL_COST_MAP",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL"
        ])
    );
    let session = run["session_id"].as_str().expect("a minted name").to_string();
    let file = PathBuf::from(run["transcript_path"].as_str().expect("the conversation is known"));
    let conversations = user_home.path().join(".config/open-interpreter/conversations");
    assert_eq!(file, conversations.join(format!("{session}.json")));

    wait(&home, &id, "the first prompt is answered", || {
        has_message(&transcript(&home, &id), "assistant", "Mock reply to: hello narwhal")
    });
    assert!(file.exists(), "the conversation is written where the launch said");
    // The user's profile was applied, and left as it was.
    let (model, system) = seen.lock().unwrap()[0].clone();
    assert_eq!(model, "mock-model");
    assert!(system.contains(INSTRUCTIONS), "{system}");
    let kept = std::fs::read_to_string(profiles.join("default.yaml")).unwrap();
    assert_eq!(kept, DEFAULT_PROFILE);

    // A prompt never lands on the user's half-typed draft; Ctrl-U erases.
    wait(&home, &id, "the first turn is over", || prompt_up(&home, &id));
    real_cli::a_draft_holds_a_prompt(&home, &id, input, &[0x15]);

    wait(&home, &id, "the draft's turn is over", || prompt_up(&home, &id));
    home.ok(&["send", &id, "SHELL please"]);
    wait(&home, &id, "it asks to run the code", || {
        home.show(&id)["status"] == "needs_approval"
    });
    assert!(home.logs(&id).contains("Would you like to run this code? (y/n)"));
    home.ok(&["answer", &id, "yes"]);
    wait(&home, &id, "the code ran and the reply came", || {
        cwd.join("perm-marker").exists() && has_message(&transcript(&home, &id), "assistant", "Ran it.")
    });
    // It keeps no tokens.
    let call = real_cli::the_call_without_tokens(&transcript(&home, &id), "execute", "made-marker");
    assert_eq!(call["input"]["code"], "touch perm-marker && echo made-marker");

    // Declined: no request; its note goes with the next turn.
    wait(&home, &id, "the code's turn is over", || prompt_up(&home, &id));
    std::fs::remove_file(cwd.join("perm-marker")).unwrap();
    home.ok(&["send", &id, "SHELL again"]);
    wait(&home, &id, "it asks again", || {
        home.show(&id)["status"] == "needs_approval"
    });
    home.ok(&["answer", &id, "no"]);
    wait(&home, &id, "the declined turn is over", || prompt_up(&home, &id));
    home.ok(&["send", &id, "after the refusal"]);
    wait(&home, &id, "the next turn is saved with the refusal", || {
        let messages = transcript(&home, &id);
        has_message(&messages, "assistant", "Mock reply to: after the refusal")
            && has_message(&messages, "system", "I have declined to run this code.")
    });
    assert!(!cwd.join("perm-marker").exists(), "declined code did not run");
    assert_eq!(
        api.prompts.all(),
        [
            "hello narwhal",
            "QUEUED-ONE",
            "SHELL please",
            "SHELL again",
            "after the refusal"
        ]
    );

    wait(&home, &id, "the last turn is over", || prompt_up(&home, &id));
    exit(&home, &id);

    // It loads an old conversation only from its picker: a resume is a
    // new conversation given the old one's recent part, typed in.
    let said = agents(&["sessions", "resume", &session, "-d"]);
    assert!(said.contains("cannot be resumed natively"), "{said}");
    assert!(said.contains("--conversations"), "{said}");
    let again = said.lines().last().unwrap().to_string();
    let rebuilt = home.show(&again);
    assert_eq!(rebuilt["resume_mode"], "reconstructed", "{rebuilt}");
    assert_ne!(rebuilt["session_id"], session.as_str());
    wait(&home, &again, "the old conversation is told and answered", || {
        transcript(&home, &again).iter().any(|m| {
            m["role"] == "assistant"
                && m["text"].as_str().is_some_and(|t| {
                    t.starts_with("Mock reply to: This conversation continues") && t.contains("hello narwhal")
                })
        })
    });
    wait(&home, &again, "that turn is over", || prompt_up(&home, &again));
    exit(&home, &again);
    let refused = home.fails(&["sessions", "fork", &session]);
    assert!(refused.contains("cannot fork"), "{refused}");
}

/// Ctrl-D at its prompt, as a user types it: it says goodbye and ends,
/// succeeded (attach leaves with 0 only then).
fn exit(home: &Home, run: &str) {
    let mut attach = Pty::spawn(home, &["attach", run], 40, 120, home.path(), true);
    attach.wait_screen("its prompt, attached", |l| input(l).is_some_and(|t| t.is_empty()));
    attach.type_bytes(&[0x04]);
    assert_eq!(attach.exit_code(), 0, "{}", attach.screen());
    let ended = home.wait_end(run);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}
