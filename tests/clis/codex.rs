//! End to end with the real Codex CLI: `agents run codex` in a PTY, in a
//! trusted git repository, with a profile that pins an isolated
//! `CODEX_HOME` whose `config.toml` names a custom model provider: a small
//! mock of the OpenAI Responses API on loopback (SSE streaming). Only the
//! model is mocked; Codex writes its real rollout, calls its real `notify`
//! program, and resumes its real session.
//!
//! What it proves: the TUI starts without a trust prompt; a prompt sent
//! with `agents send` reaches the model and the reply comes back; the run
//! learns its session id and rollout from `notify` (and not from Codex's
//! task-title side thread, which notifies too but has no rollout); its
//! status goes working → idle on each turn; `agents transcript` reads the
//! reply from the real rollout; `agents sessions resume` continues the same
//! session (`codex resume ID`) in the same rollout; `agents sessions fork`
//! starts a session of its own (`codex fork ID`) with a rollout of its own.
//! Prompts are pasted (Codex takes fast keystrokes and Enter as a paste
//! with a newline), `/exit` included, and each run ends `succeeded`.
//! Keys typed through `agents attach` one at a time, as a person types,
//! reach Codex as its own terminal would send them: Shift-Enter (in the
//! kitty form Codex asks for), Alt-Enter and Ctrl-J make new lines, and
//! Enter sends them as one message.
//!
//! Needs the CLI: `AGENTS_TEST_CODEX=/path/to/codex` (`.ci/run` installs
//! `@openai/codex` from npm and sets it, with `AGENTS_REQUIRE_CODEX=1` so a
//! missing CLI fails instead of skipping).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agents::protocol::screen::mode::KITTY_KEYBOARD;
use agents::term::Terminal;
use common::Home;
use common::pty::Pty;
use common::real_cli::{
    self, BinDir, MockApi, Prompts, Reply, Request, has_message, hooks, last_seq, statuses_after, transcript,
};
use serde_json::{Value, json};

/// The version of the reference recordings and `.ci/run`.
const PINNED: &str = "0.171.0";

/// The provider's `env_key`: Codex refuses to start a turn without it.
const KEY_VAR: &str = "AGENTS_E2E_CODEX_KEY";

/// A mock Responses API (`POST /v1/responses`, always streamed). A turn of
/// the conversation is answered `Mock reply to: <the last user text>`;
/// Codex's task-title request (its turn metadata says `thread_title`) gets
/// a title. Everything else is 404.
fn answer(r: &Request, prompts: &Prompts, titles: &AtomicUsize) -> Reply {
    if !r.line.starts_with("POST /v1/responses ") {
        return Reply::not_found();
    }
    let title = r
        .header("x-codex-turn-metadata")
        .is_some_and(|v| v.contains("\"thread_source\":\"thread_title\""));
    let text = if title {
        titles.fetch_add(1, Ordering::SeqCst);
        "Greet the capybara".to_string()
    } else {
        let prompt = last_user_text(&r.json());
        prompts.push(prompt.clone());
        format!("Mock reply to: {prompt}")
    };
    Reply::ok("text/event-stream", sse(&text))
}

/// The text of the last `user` message of a request's `input`.
fn last_user_text(req: &Value) -> String {
    req["input"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .find(|item| item["role"] == "user")
        .and_then(|item| item["content"].as_array())
        .and_then(|parts| parts.iter().find_map(|p| p["text"].as_str()))
        .unwrap_or_default()
        .to_string()
}

/// One assistant message, streamed in two deltas, then the usage.
fn sse(text: &str) -> String {
    static RESPONSES: AtomicUsize = AtomicUsize::new(0);
    let n = RESPONSES.fetch_add(1, Ordering::SeqCst);
    let (id, item) = (format!("resp_mock{n}"), format!("msg_mock{n}"));
    let (head, tail) = text.split_at(text.len() / 2);
    let mut out = String::new();
    let mut event = |data: Value| out.push_str(&format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap()));
    event(json!({ "type": "response.created", "response": { "id": id } }));
    event(json!({
        "type": "response.output_item.added", "output_index": 0,
        "item": { "type": "message", "id": item, "role": "assistant", "status": "in_progress", "content": [] },
    }));
    for delta in [head, tail] {
        event(json!({
            "type": "response.output_text.delta", "item_id": item,
            "output_index": 0, "content_index": 0, "delta": delta,
        }));
    }
    event(json!({
        "type": "response.output_item.done", "output_index": 0,
        "item": {
            "type": "message", "id": item, "role": "assistant", "status": "completed",
            "content": [{ "type": "output_text", "text": text, "annotations": [] }],
        },
    }));
    event(json!({
        "type": "response.completed",
        "response": {
            "id": id,
            "usage": {
                "input_tokens": 40, "input_tokens_details": { "cached_tokens": 10 },
                "output_tokens": 7, "output_tokens_details": { "reasoning_tokens": 0 },
                "total_tokens": 47,
            },
        },
    }));
    out
}

/// How long a step of a real Codex may take: it starts in seconds, but CI
/// is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(60);

fn wait(home: &Home, run: &str, what: &str, f: impl FnMut() -> bool) {
    real_cli::wait(home, run, PATIENCE, what, f)
}

/// Every rollout Codex wrote under its config home.
fn rollouts(codex_home: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
            {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&codex_home.join("sessions"), &mut out);
    out
}

/// Sends a prompt and waits for its turn to end: the mock answered it, a
/// `notify` said the turn is complete, and the run went working → idle.
fn turn(home: &Home, run: &str, api: &MockApi, prompt: &str) {
    let mark = last_seq(home, run);
    home.ok(&["send", run, prompt]);
    wait(home, run, &format!("codex's turn for '{prompt}' completed"), || {
        statuses_after(home, run, mark)
            .last()
            .is_some_and(|(_, status, why)| status == "idle" && why == "hook agent-turn-complete")
    });
    assert_eq!(api.prompts.all().last().map(String::as_str), Some(prompt));
    let seen = statuses_after(home, run, mark);
    let working = seen.iter().position(|(_, status, _)| status == "working");
    let idle = seen.iter().rposition(|(_, status, _)| status == "idle");
    assert!(working.is_some() && working < idle, "working, then idle: {seen:?}");
}

/// Codex in a trusted git repository, with a profile named like the
/// family that pins an isolated config home whose provider is `api`, and
/// `engine` added to the `[engine]` table of the config.
struct CodexSetup {
    home: Home,
    user_home: tempfile::TempDir,
    codex_home: tempfile::TempDir,
    _project: tempfile::TempDir,
    cwd: PathBuf,
    path: String,
    _bin: BinDir,
}

impl CodexSetup {
    fn new(codex: &Path, api: &MockApi, engine: &str) -> CodexSetup {
        let user_home = tempfile::tempdir().unwrap();
        let codex_home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let cwd = std::fs::canonicalize(project.path()).unwrap();
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&cwd)
            .status()
            .unwrap();
        assert!(git.success(), "git init");
        let bin = BinDir::with(codex, "codex");
        // JSON string escapes are valid in TOML basic strings.
        let quoted = |p: &Path| serde_json::to_string(&p.to_string_lossy()).unwrap();
        std::fs::write(
            codex_home.path().join("config.toml"),
            format!(
                "model = \"mock-model\"\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\n\
                 [model_providers.mock]\nname = \"mock\"\nbase_url = \"{}\"\nwire_api = \"responses\"\nenv_key = \"{KEY_VAR}\"\n\n\
                 [projects.{}]\ntrust_level = \"trusted\"\n",
                api.url,
                quoted(&cwd),
            ),
        )
        .unwrap();
        // A profile named like the family changes what `agents run codex`
        // means: its own config home. The provider's key is only exported:
        // it passes because that config's provider names it (`env_key`), on
        // every start and resume (issue #9).
        let home = Home::with_config(&format!(
            "[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\n{engine}\n\
             [profiles.codex]\nconfig_home = {}\n",
            quoted(codex_home.path()),
        ));
        CodexSetup {
            home,
            user_home,
            codex_home,
            _project: project,
            cwd,
            path: bin.path(),
            _bin: bin,
        }
    }

    /// `agents ARGS` in the project, with Codex's key exported as a user
    /// has it; its output.
    fn agents(&self, args: &[&str]) -> String {
        let mut cmd = self.home.cmd(args);
        cmd.current_dir(&self.cwd)
            .env("PATH", &self.path)
            .env("HOME", self.user_home.path())
            .env_remove("CODEX_HOME")
            .env(KEY_VAR, "sk-mock");
        real_cli::stdout_of(cmd, &format!("{args:?}"))
    }
}

#[test]
fn a_real_codex_run_reports_its_turns_session_and_transcript_and_resumes_and_forks() {
    let Some(codex) = real_cli::pinned_binary("CODEX", "codex", PINNED) else {
        return;
    };
    let titles = Arc::new(AtomicUsize::new(0));
    let asked = titles.clone();
    let api = MockApi::start("/v1", move |r, prompts| answer(r, prompts, &asked));
    let setup = CodexSetup::new(&codex, &api, "");
    let (home, codex_home) = (&setup.home, &setup.codex_home);
    let agents = |args: &[&str]| setup.agents(args);

    let id = agents(&["run", "-d", "codex", "--size", "120x40"]);
    let started = home.show(&id);
    assert_eq!(started["harness_version"], PINNED, "{started}");
    assert_eq!(started["env_harness"], serde_json::json!([KEY_VAR]), "{started}");
    assert!(started["session_id"].is_null(), "codex names its session only later");
    wait(home, &id, "codex's composer is up", || {
        home.logs(&id).contains("? for shortcuts")
    });
    assert!(!home.logs(&id).contains("Trust this folder"), "the cwd is trusted");

    turn(home, &id, &api, "hello capybara");
    // After the first prompt Codex asks for a task title on a thread of its
    // own, which notifies too: it must not become the run's session.
    wait(home, &id, "the title thread's notify was recorded", || {
        hooks(home, &id).iter().any(|h| h == "side-turn-complete")
    });
    assert!(titles.load(Ordering::SeqCst) >= 1);
    let files = rollouts(codex_home.path());
    assert_eq!(files.len(), 1, "one rollout, the conversation's: {files:?}");
    let rollout = &files[0];
    let run = home.show(&id);
    let session = run["session_id"].as_str().expect("the session is known").to_string();
    assert!(
        rollout.to_string_lossy().ends_with(&format!("-{session}.jsonl")),
        "{session} is the rollout's thread: {}",
        rollout.display()
    );
    assert_eq!(run["transcript_path"], rollout.to_string_lossy().as_ref());
    assert_eq!(
        run["name"], "hello-capybara",
        "named after the first prompt, not the title's"
    );
    let sessions: Vec<Value> = home
        .events(&id)
        .into_iter()
        .filter(|e| e["kind"] == "SESSION")
        .map(|e| e["data"]["session_id"].clone())
        .collect();
    assert!(
        !sessions.is_empty() && sessions.iter().all(|s| *s == session.as_str()),
        "{sessions:?}"
    );

    wait(home, &id, "the reply is in the transcript", || {
        has_message(&transcript(home, &id), "assistant", "Mock reply to: hello capybara")
    });
    let messages = transcript(home, &id);
    assert!(has_message(&messages, "user", "hello capybara"), "{messages:?}");
    let reply = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(reply["model"], "mock-model");
    assert_eq!(reply["session_id"], session.as_str());
    assert_eq!(reply["source"], rollout.to_string_lossy().as_ref());

    // A second turn: the prompt's delivery says working, notify says idle.
    turn(home, &id, &api, "second capybara");
    wait(home, &id, "the second reply is in the transcript", || {
        has_message(&transcript(home, &id), "assistant", "Mock reply to: second capybara")
    });
    assert_eq!(home.show(&id)["status"], "idle");

    home.ok(&["send", &id, "/exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Resume: `codex resume ID`, the same session, the same rollout.
    let again = agents(&["sessions", "resume", &session, "-d"]);
    let resumed = home.show(&again);
    let argv: Vec<&str> = resumed["command"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(argv.ends_with(&["resume", session.as_str()]), "{argv:?}");
    assert!(home.event_kinds(&again).iter().any(|k| k == "RESUME_OF"));
    wait(home, &again, "the resumed composer is up", || {
        let screen = home.logs(&again);
        screen.contains("? for shortcuts") && screen.contains("Mock reply to: second capybara")
    });
    turn(home, &again, &api, "third capybara");
    assert_eq!(home.show(&again)["session_id"], session.as_str());
    assert_eq!(
        rollouts(codex_home.path()),
        files,
        "resume appends to the session's rollout"
    );
    wait(home, &again, "the resumed reply is in the transcript", || {
        has_message(&transcript(home, &again), "assistant", "Mock reply to: third capybara")
    });
    let whole = transcript(home, &again);
    for text in ["hello capybara", "second capybara", "third capybara"] {
        assert!(has_message(&whole, "user", text), "{text} in {whole:?}");
    }
    home.ok(&["send", &again, "/exit"]);
    let ended = home.wait_end(&again);
    assert_eq!(ended["state"], "succeeded", "{ended}");

    // Fork: `codex fork ID`, a new thread with its own rollout and the
    // history copied; the run learns the new session, not the old one.
    let fork = agents(&["sessions", "fork", &session, "-d"]);
    let argv = home.show(&fork)["command"].clone();
    assert_eq!(argv.as_array().unwrap()[3..], [json!("fork"), json!(session)], "{argv}");
    assert!(home.event_kinds(&fork).iter().any(|k| k == "FORK_OF"));
    wait(home, &fork, "the fork's composer is up", || {
        home.logs(&fork).contains("? for shortcuts")
    });
    turn(home, &fork, &api, "fourth capybara");
    let forked = home.show(&fork);
    let branch = forked["session_id"].as_str().expect("the fork's session is known");
    assert_ne!(branch, session, "a fork is a session of its own");
    let files = rollouts(codex_home.path());
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(
        forked["transcript_path"]
            .as_str()
            .is_some_and(|p| p.ends_with(&format!("-{branch}.jsonl"))),
        "{forked}"
    );
    wait(home, &fork, "the fork's reply is in its transcript", || {
        has_message(&transcript(home, &fork), "assistant", "Mock reply to: fourth capybara")
    });
    assert!(
        !has_message(&transcript(home, &session), "user", "fourth capybara"),
        "the forked session is left as it was"
    );
    home.ok(&["send", &fork, "/exit"]);
    let ended = home.wait_end(&fork);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}

/// The composer's row as the user sees it.
fn composer(lines: &[String]) -> Option<String> {
    lines.iter().rev().find(|l| l.starts_with('›')).cloned()
}

/// A draft typed into Codex's composer through `agents attach` holds a
/// prompt and a message: neither reaches the model while it is there,
/// looked at again and again; once the draft is erased each goes in, once
/// and alone.
#[test]
fn a_real_codex_run_holds_prompts_while_the_user_has_a_draft_then_takes_each_once() {
    let Some(codex) = real_cli::pinned_binary("CODEX", "codex", PINNED) else {
        return;
    };
    let titles = Arc::new(AtomicUsize::new(0));
    let api = MockApi::start("/v1", move |r, prompts| answer(r, prompts, &titles));
    let setup = CodexSetup::new(&codex, &api, "hold_after_typing_ms = 500");
    let home = &setup.home;
    let id = setup.agents(&["run", "-d", "codex", "--name", "cx1", "--size", "120x40"]);
    wait(home, &id, "codex's composer is up", || {
        home.logs(&id).contains("? for shortcuts")
    });
    let draft = "my half written dra";
    common::pty::type_through_attach(
        home,
        &id,
        |l| composer(l).is_some(),
        draft.as_bytes(),
        |l| composer(l).is_some_and(|r| r.ends_with(draft)),
    );
    wait(home, &id, "codex at rest after the typing", || {
        real_cli::at_rest_for(home, &id, 1500)
    });

    let sent = home.ok(&["send", "cx1", "QUEUED-CX"]);
    assert!(sent.starts_with("held: the input has text the user typed"), "{sent}");
    home.ok(&["mail", "send", "cx1", "MAIL-CX"]);
    let waiting = || home.show(&id)["waiting"].as_array().cloned().unwrap_or_default();
    wait(home, &id, "both wait", || waiting().len() == 2);
    let at = |t: &str| humantime::parse_rfc3339(t).unwrap();
    let first_look = at(waiting()[0]["checked_at"].as_str().unwrap());
    wait(home, &id, "the supervisor looked again, two seconds on", || {
        let look = waiting().first().and_then(|w| w["checked_at"].as_str().map(at));
        look.is_some_and(|l| l.duration_since(first_look).unwrap_or_default() >= Duration::from_secs(2))
    });
    assert!(api.prompts.all().is_empty(), "{:?}", api.prompts.all());
    let lines: Vec<String> = home.logs(&id).lines().map(str::to_string).collect();
    assert!(composer(&lines).is_some_and(|r| r.ends_with(draft)), "{lines:#?}");

    // The user erases the draft: each goes in, alone, once.
    common::pty::type_through_attach(
        home,
        &id,
        |l| composer(l).is_some_and(|r| r.ends_with(draft)),
        &[0x7f; 19],
        |l| composer(l).is_some_and(|r| !r.contains("half")),
    );
    wait(home, &id, "the model got both", || api.prompts.all().len() >= 2);
    wait(home, &id, "nothing waits", || waiting().is_empty());
    let asked = api.prompts.all();
    assert_eq!(asked.iter().filter(|p| *p == "QUEUED-CX").count(), 1, "{asked:?}");
    assert_eq!(asked.iter().filter(|p| p.ends_with("MAIL-CX")).count(), 1, "{asked:?}");
    assert!(!asked.iter().any(|p| p.contains("half")), "{asked:?}");
}

/// Types one key into the attached run and reads the screen until `done`,
/// as a person waits to see a key land before the next. Typed faster
/// (under ~8 ms apart) Codex takes keys for a paste, where a plain Enter
/// is a new line too, and the forms of Shift-Enter would prove nothing.
fn press(attach: &mut Pty, key: &[u8], what: &str, done: impl Fn(&Terminal) -> bool) {
    attach.type_bytes(key);
    let deadline = Instant::now() + PATIENCE;
    while !done(&attach.term) {
        assert!(
            attach.read_more(deadline),
            "the screen never showed {what}; it shows:\n{}",
            attach.screen()
        );
    }
}

/// The rows of Codex's composer: from its `›` down to the blank row over
/// its footer (which names the model).
fn draft(term: &Terminal) -> Vec<String> {
    let lines = term.visible_lines();
    let top = lines.iter().rposition(|l| l.starts_with('›'));
    let footer = top.and_then(|top| {
        lines[top..]
            .iter()
            .position(|l| l.starts_with("  mock-model"))
            .map(|n| top + n)
    });
    match (top, footer) {
        (Some(top), Some(footer)) if footer > top + 1 => lines[top..footer - 1].to_vec(),
        _ => Vec::new(),
    }
}

/// Types `word` (ASCII) a letter at a time at the end of the composer.
fn type_word(attach: &mut Pty, word: &str) {
    for (at, key) in word.bytes().enumerate() {
        let typed = &word[..=at];
        press(attach, &[key], typed, |t| {
            draft(t).last().is_some_and(|row| row.ends_with(typed))
        });
    }
}

/// Shift-Enter, in each form a terminal sends it, makes a new line in
/// Codex's composer through `agents attach`; Enter sends the lines as one
/// message. The run's terminal told Codex it speaks the kitty keyboard
/// protocol: Codex pushed its flags (mirrored onto the user's terminal, so
/// a kitty terminal sends Shift-Enter as `CSI 13;2u`) and lists Shift-Enter
/// as its new-line key, which it does only when its `CSI ? u` was answered
/// (in a terminal that does not answer, tmux 3.3 for one, it lists Ctrl-J).
#[test]
fn a_real_codex_run_takes_shift_enter_alt_enter_and_ctrl_j_as_new_lines_and_enter_sends_one_message() {
    let Some(codex) = real_cli::pinned_binary("CODEX", "codex", PINNED) else {
        return;
    };
    let titles = Arc::new(AtomicUsize::new(0));
    let api = MockApi::start("/v1", move |r, prompts| answer(r, prompts, &titles));
    let setup = CodexSetup::new(&codex, &api, "");
    let home = &setup.home;
    let id = setup.agents(&["run", "-d", "codex", "--name", "cx2", "--size", "120x40"]);
    // Keys typed while Codex still starts its session are read and lost;
    // its footer offers the agents view once it takes them.
    wait(home, &id, "codex takes keys", || {
        home.logs(&id).contains("← for agents · ? for shortcuts")
    });
    let mut attach = Pty::spawn(home, &["attach", &id], 40, 120, home.path(), true);
    attach.wait_screen("codex's composer", |l| composer(l).is_some());
    assert!(
        attach.term.modes().has(KITTY_KEYBOARD),
        "codex's kitty keyboard flags are mirrored onto the user's terminal"
    );
    let new_line_key = |t: &Terminal| t.visible_lines().into_iter().find(|r| r.contains("New line"));
    press(&mut attach, b"?", "codex's shortcuts", |t| new_line_key(t).is_some());
    let listed = new_line_key(&attach.term).unwrap();
    assert!(listed.trim_start().starts_with("shift+enter"), "{listed}");
    press(&mut attach, b"?", "the shortcuts closed", |t| new_line_key(t).is_none());

    let lines = ["line1", "line2", "line3", "line4"];
    // Shift-Enter as a kitty terminal sends it; Alt-Enter (ESC CR, what
    // terminals set up for Claude Code send for Shift-Enter); Ctrl-J.
    let new_lines: [&[u8]; 3] = [b"\x1b[13;2u", b"\x1b\r", b"\n"];
    type_word(&mut attach, lines[0]);
    for (new_line, line) in new_lines.iter().zip(&lines[1..]) {
        let rows = draft(&attach.term).len();
        press(&mut attach, new_line, "a new line in the composer", |t| {
            let now = draft(t);
            now.len() == rows + 1 && now.last().is_some_and(String::is_empty)
        });
        type_word(&mut attach, line);
    }
    assert_eq!(
        draft(&attach.term),
        ["› line1", "  line2", "  line3", "  line4"],
        "{}",
        attach.screen()
    );
    assert!(
        api.prompts.all().is_empty(),
        "nothing sent yet: {:?}",
        api.prompts.all()
    );

    attach.type_bytes(b"\r");
    wait(home, &id, "the model got the message", || !api.prompts.all().is_empty());
    wait(home, &id, "codex's turn completed", || {
        hooks(home, &id).iter().any(|h| h == "agent-turn-complete")
    });
    assert_eq!(api.prompts.all(), ["line1\nline2\nline3\nline4"]);
    attach.type_bytes(&[0x01, b'd']);
    assert_eq!(attach.exit_code(), 0, "{}", attach.text());
}
