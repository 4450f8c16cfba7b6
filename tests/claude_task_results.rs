//! Task results (docs/design.md §13) reaching a real Claude Code parent,
//! against a mock of the Anthropic Messages API: a child that ends while
//! nobody awaits it is a user turn the parent's Claude sends to the model
//! once and keeps once in its own transcript; a real Claude child's last
//! words are in it; a parent busy with a turn gets it only once that turn
//! has ended.
//!
//! Needs the CLI: `AGENTS_TEST_CLAUDE=/path/to/claude` (see
//! tests/clis/claude.rs).

mod common;

use std::sync::{Arc, Condvar, Mutex};

use common::claude_mock::{self, ClaudeSetup, last_user_text, offers_tools};
use common::real_cli::{self, MockApi, Prompts, Reply, Request};
use common::{Home, PATIENCE};
use serde_json::{Value, json};

/// The version the reference recordings and `.ci/run` use.
const PINNED: &str = "2.1.197";

/// What the mock model says to a prompt with `REPORT`: a Claude child's
/// last words, which its task result must carry.
const SURVEY_SAYS: &str = "The survey found seven stale branches.";

/// What the mock model says to a task result.
const NOTED: &str = "Noted the task result.";

/// Turns held open: a turn whose prompt says `HOLD` is answered only once
/// the test opens the gate, so the parent stays busy until then.
#[derive(Default)]
struct Gate {
    /// (turns waiting at the gate, whether it is open)
    state: Mutex<(usize, bool)>,
    changed: Condvar,
}

impl Gate {
    fn pass(&self) {
        let mut state = self.state.lock().unwrap();
        state.0 += 1;
        self.changed.notify_all();
        while !state.1 {
            state = self.changed.wait(state).unwrap();
        }
    }

    fn waiting(&self) -> usize {
        self.state.lock().unwrap().0
    }

    fn open(&self) {
        self.state.lock().unwrap().1 = true;
        self.changed.notify_all();
    }
}

/// The mock model: records the user's words of each of the agent's own
/// turns (not side requests such as titles) and answers by them.
fn answer(r: &Request, asked: &Prompts, gate: &Gate) -> Reply {
    if let Some(side) = claude_mock::side_request(r) {
        return side;
    }
    let req = r.json();
    let said = last_user_text(&req).unwrap_or_default();
    let turn = offers_tools(&req) && last_user_text(&req).is_some();
    if turn {
        asked.push(said.clone());
    }
    let text = if said.contains("[task result]") {
        NOTED
    } else if said.contains("REPORT") {
        SURVEY_SAYS
    } else if said.contains("HOLD") && turn {
        gate.pass();
        "Held turn done."
    } else {
        "Hello from the mock model."
    };
    claude_mock::reply(r, &[json!({ "type": "text", "text": text })], "end_turn")
}

/// A mock API, a home, and a Claude parent named `boss` idle at its prompt.
struct Parent {
    api: MockApi,
    gate: Arc<Gate>,
    setup: ClaudeSetup,
    home: Home,
    id: String,
}

impl Parent {
    fn start(claude: &std::path::Path) -> Parent {
        let gate = Arc::new(Gate::default());
        let held = gate.clone();
        let api = MockApi::start("", move |r, asked| answer(r, asked, &held));
        let setup = ClaudeSetup::new(claude, &api.url);
        let home = Home::new();
        let run = setup.agents(&home, &["run", "-d", "claude", "--name", "boss", "--size", "120x40"]);
        let id = real_cli::stdout_of(run, "run claude");
        // Its hook, and idle: the screen may have said idle first, and an
        // unchanged status is not recorded again.
        real_cli::wait(&home, &id, PATIENCE, "claude started its session", || {
            real_cli::hooks(&home, &id).iter().any(|h| h == "SessionStart") && home.show(&id)["status"] == "idle"
        });
        Parent {
            api,
            gate,
            setup,
            home,
            id,
        }
    }

    /// The conversation in Claude's own transcript, the JSONL file it
    /// writes: `(role, text)` of each user and model line with text, in
    /// the file's order. (Read from the file, not the index: Claude 2.1.197
    /// may write a turn's lines out of order.)
    fn conversation(&self) -> Vec<(String, String)> {
        let shown = self.home.show(&self.id);
        let Some(path) = shown["transcript_path"].as_str() else {
            return Vec::new();
        };
        let text = std::fs::read_to_string(path).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| (l["type"] == "user" || l["type"] == "assistant") && l["isMeta"] != true)
            .filter_map(|l| {
                let role = l["message"]["role"].as_str()?.to_string();
                let text = match &l["message"]["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(blocks) => blocks
                        .iter()
                        .filter(|b| b["type"] == "text")
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
                (!text.is_empty()).then_some((role, text))
            })
            .collect()
    }

    /// What the user said in the parent's conversation that contains `text`.
    fn turns_with(&self, text: &str) -> Vec<String> {
        self.conversation()
            .into_iter()
            .filter(|(role, t)| role == "user" && t.contains(text))
            .map(|(_, t)| t)
            .collect()
    }

    /// The user's words of the parent's turns the model was asked, that
    /// contain `text` (every turn sends the whole conversation: only its
    /// last message counts).
    fn asked_with(&self, text: &str) -> Vec<String> {
        self.api
            .prompts
            .all()
            .into_iter()
            .filter(|t| t.contains(text))
            .collect()
    }

    /// Waits until the model has answered the parent's task result about
    /// `child` and Claude has written both to its transcript.
    fn wait_told(&self, child: &str) {
        let marker = format!("[task result] {child} ");
        let what = format!("the parent's Claude took the result of {child}");
        real_cli::wait(&self.home, &self.id, PATIENCE, &what, || {
            let said = self.conversation();
            let at = said.iter().position(|(role, t)| role == "user" && t.contains(&marker));
            at.is_some_and(|i| said[i..].iter().any(|(role, t)| role == "assistant" && t == NOTED))
        });
    }

    fn prompt_state(&self, prompt_id: &str) -> String {
        let db = rusqlite::Connection::open_with_flags(
            self.home.path().join("agents.db"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap();
        db.query_row("SELECT state FROM prompts WHERE id = ?1", [prompt_id], |r| r.get(0))
            .unwrap()
    }
}

/// A child's end as its parent's database has it, without awaiting it
/// (`agents wait` would take its result for itself).
fn wait_ended(home: &Home, run: &str) -> Value {
    home.wait_until(&format!("{run} ended"), || {
        !matches!(home.state(run).as_str(), "running" | "starting" | "")
    });
    home.show(run)
}

#[test]
fn a_real_claude_parent_takes_each_unawaited_childs_result_as_one_user_turn() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    let boss = Parent::start(&claude);
    let home = &boss.home;

    // A command child that fails.
    let lint = home.start(&["--parent", "boss", "--name", "lint", "cmd", "--", "sh", "-c", "exit 3"]);
    boss.wait_told("lint");
    let told = boss.turns_with("[task result] lint");
    assert_eq!(told.len(), 1, "once in Claude's transcript: {told:?}");
    assert!(
        told[0].starts_with("[task result] lint failed after ")
            && told[0].ends_with(": exited with code 3 — agents show lint"),
        "{told:?}"
    );
    assert_eq!(
        boss.asked_with("[task result] lint"),
        told,
        "sent to the model once, as typed"
    );
    assert_eq!(boss.prompt_state(&format!("task-{lint}")), "delivered");

    // A Claude child that does its one prompt and ends: what it said last
    // is in the result.
    let run = boss.setup.agents(
        home,
        &[
            "run",
            "-d",
            "claude",
            "--parent",
            "boss",
            "--name",
            "survey",
            "--",
            "-p",
            "REPORT on the branches",
        ],
    );
    let survey = real_cli::stdout_of(run, "run claude -p");
    let ended = wait_ended(home, &survey);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    boss.wait_told("survey");
    let told = boss.turns_with("[task result] survey");
    assert_eq!(told.len(), 1, "once in Claude's transcript: {told:?}");
    assert!(
        told[0].starts_with("[task result] survey succeeded after ")
            && told[0].ends_with(&format!(": \"{SURVEY_SAYS}\" — agents show survey")),
        "the child's last words: {told:?}"
    );
    assert_eq!(boss.asked_with("[task result] survey"), told);
    // Still once each, now that more turns have gone by.
    assert_eq!(boss.asked_with("[task result] lint").len(), 1);
    assert_eq!(boss.turns_with("[task result] lint").len(), 1);
    let kinds = |run: &str| home.event_kinds(run).into_iter().filter(|k| k == "TASK_RESULT").count();
    assert_eq!((kinds(&boss.id), kinds(&lint), kinds(&survey)), (2, 1, 1));
}

#[test]
fn a_busy_real_claude_parent_gets_a_task_result_only_once_its_turn_has_ended() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    let boss = Parent::start(&claude);
    let home = &boss.home;
    home.ok(&["send", "boss", "HOLD this turn"]);
    real_cli::wait(home, &boss.id, PATIENCE, "the model holds the parent's turn", || {
        boss.gate.waiting() == 1
    });
    home.wait_until("the parent works", || home.show(&boss.id)["status"] == "working");

    let quick = home.start(&["--parent", "boss", "--name", "quick", "cmd", "--", "true"]);
    wait_ended(home, &quick);
    home.wait_until("the result queued for the parent", || {
        home.event_kinds(&boss.id).iter().any(|k| k == "TASK_RESULT")
    });
    // A prompt sent now is queued after the result (a send tries to deliver
    // the oldest queued prompt before it answers): the busy parent takes
    // neither.
    let sent = home.ok(&["send", "boss", "after the hold"]);
    assert!(sent.starts_with("queued"), "{sent}");
    assert_eq!(boss.prompt_state(&format!("task-{quick}")), "queued");
    assert!(
        !home.logs(&boss.id).contains("[task result]"),
        "{}",
        home.logs(&boss.id)
    );
    assert!(boss.asked_with("[task result]").is_empty());

    boss.gate.open();
    boss.wait_told("quick");
    real_cli::wait(home, &boss.id, PATIENCE, "the prompt after it answered too", || {
        boss.conversation()
            .iter()
            .filter(|(role, _)| role == "assistant")
            .count()
            >= 3
    });
    let users: Vec<String> = boss
        .conversation()
        .into_iter()
        .filter(|(role, _)| role == "user")
        .map(|(_, t)| t)
        .collect();
    assert_eq!(users.len(), 3, "{users:?}");
    assert_eq!(users[0], "HOLD this turn");
    assert!(users[1].starts_with("[task result] quick succeeded"), "{users:?}");
    assert_eq!(users[2], "after the hold");
    assert_eq!(
        boss.api.prompts.all(),
        users,
        "the model asked each once, in that order"
    );
}

/// The daemon learns where a Claude run's transcript is at launch, but
/// indexes it once a hook names it, and tails it as it grows: a child whose
/// hooks never reached the daemon (switched off here) has its transcript
/// read to its end before its end is written, so its last words still
/// reach its parent.
#[test]
fn a_claude_childs_last_words_reach_its_parent_even_when_no_hook_named_its_transcript() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    let boss = Parent::start(&claude);
    let home = &boss.home;
    let quiet = r#"{"disableAllHooks": true}"#;
    let run = boss.setup.agents(
        home,
        &[
            "run",
            "-d",
            "claude",
            "--parent",
            "boss",
            "--name",
            "survey",
            "--",
            "--settings",
            quiet,
            "-p",
            "REPORT on the branches",
        ],
    );
    let survey = real_cli::stdout_of(run, "run claude -p");
    let ended = wait_ended(home, &survey);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert!(real_cli::hooks(home, &survey).is_empty(), "no hook ran");
    boss.wait_told("survey");
    let told = boss.turns_with("[task result] survey");
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].ends_with(&format!(": \"{SURVEY_SAYS}\" — agents show survey")),
        "{told:?}"
    );
}
