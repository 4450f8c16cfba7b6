//! End to end with the real Claude Code CLI: `agents run claude` in a PTY
//! against a small mock of the Anthropic Messages API on loopback (SSE
//! streaming), as in `shared/reference/claude-code-2.1.197/`. The run's
//! hooks drive its status (idle → working → needs_approval → idle), its
//! session id is the one minted before spawn, and its name comes from its
//! first prompt.
//!
//! Needs the CLI: `AGENTS_TEST_CLAUDE=/path/to/claude` (`.ci/run` installs
//! `@anthropic-ai/claude-code` from npm and sets it, with
//! `AGENTS_REQUIRE_CLAUDE=1` so a missing CLI fails instead of skipping).

use crate::common;

use std::path::PathBuf;

use common::Home;
use common::claude_mock::{self, API_KEY, claude_home};
use common::real_cli::{self, BinDir, Reply, Request, hooks, last_status_why};
use serde_json::{Value, json};

/// The version the reference recordings and `.ci/run` use.
const PINNED: &str = "2.1.197";

/// The arguments that make Claude Code ask before a tool runs: none for
/// the pinned version, which asks by default; `--permission-mode manual`
/// for a newer one whose default is its auto mode (2.1.332).
fn asking(claude: &std::path::Path) -> Vec<&'static str> {
    let help = std::process::Command::new(claude).arg("--help").output().unwrap();
    match String::from_utf8_lossy(&help.stdout).contains("\"manual\"") {
        true => vec!["--", "--permission-mode", "manual"],
        false => Vec::new(),
    }
}

/// A mock Messages API: `hello` gets a greeting; a prompt with `ASKPERM`
/// gets a `Bash(touch perm-marker)` tool call, and its tool result a
/// closing line. Side requests without tools (titles) get plain text.
fn answer(r: &Request) -> Reply {
    if let Some(side) = claude_mock::side_request(r) {
        return side;
    }
    // A model that takes its time: the user interrupts it with Esc long
    // before it would answer.
    if claude_mock::last_user_text(&r.json()).is_some_and(|t| t.contains("SLOWREPLY")) {
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
    let (blocks, stop) = reply_to(&r.json());
    claude_mock::reply(r, &blocks, stop)
}

/// The content blocks and stop reason for a request.
fn reply_to(req: &Value) -> (Vec<Value>, &'static str) {
    let messages = req["messages"].as_array().cloned().unwrap_or_default();
    let is_text = |m: &Value| {
        m["role"] == "user"
            && (m["content"].is_string()
                || m["content"]
                    .as_array()
                    .is_some_and(|c| c.iter().any(|b| b["type"] == "text")))
    };
    let is_result = |m: &Value| {
        m["content"]
            .as_array()
            .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"))
    };
    let last_text = messages.iter().rposition(is_text);
    let last_result = messages.iter().rposition(is_result);
    let text = |t: &str| json!({ "type": "text", "text": t });
    if last_result.is_some() && last_result > last_text {
        return (vec![text("Done after tool.")], "end_turn");
    }
    let asked = last_text.is_some_and(|i| messages[i].to_string().contains("ASKPERM"));
    let slow = last_text.is_some_and(|i| messages[i].to_string().contains("SLOWTOOL"));
    let has_tools = req["tools"].as_array().is_some_and(|t| !t.is_empty());
    if slow && has_tools {
        let call = json!({
            "type": "tool_use",
            "id": "toolu_mock0010",
            "name": "Bash",
            "input": { "command": "touch slow-started && sleep 8 && touch slow-done", "description": "A slow, silent step" },
        });
        return (vec![text("Running the slow step."), call], "tool_use");
    }
    if asked && has_tools {
        let call = json!({
            "type": "tool_use",
            "id": "toolu_mock0009",
            "name": "Bash",
            "input": { "command": "touch perm-marker", "description": "Create a marker file" },
        });
        return (vec![text("Running it."), call], "tool_use");
    }
    (vec![text("Hello from the mock model.")], "end_turn")
}

#[test]
fn a_real_claude_run_reports_status_hooks_and_its_session() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    let api_url = real_cli::serve(answer);
    let (user_home, _project, cwd) = claude_home(Some(API_KEY));
    let bin = BinDir::with(&claude, "claude");

    // Only exported, as a user has them in the shell: no `--env`. Claude
    // Code's own variables pass by default (issue #9).
    let home = Home::new();
    let mut run = home.cmd(&["run", "-d", "claude", "--size", "120x40"]);
    run.args(asking(&claude))
        .current_dir(&cwd)
        .env("PATH", bin.path_before("/usr/bin:/bin"))
        .env("HOME", user_home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("ANTHROPIC_BASE_URL", &api_url)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let id = real_cli::stdout_of(run, "run claude");

    let started = home.show(&id);
    assert_eq!(
        started["harness_version"],
        real_cli::version_under_test(&claude, PINNED)
    );
    // The names passed (never values): these, and whatever else of Claude
    // Code's this machine exports (`AWS_*` here).
    let passed = started["env_harness"].as_array().cloned().unwrap_or_default();
    for name in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
        "DISABLE_TELEMETRY",
    ] {
        assert!(passed.contains(&json!(name)), "{name} in {passed:?}");
    }
    let shown = home.ok(&["show", &id]);
    assert!(shown.contains("ANTHROPIC_API_KEY ANTHROPIC_BASE_URL"), "{shown}");
    assert!(!shown.contains(API_KEY) && !home.ok(&["show", &id, "--json"]).contains(API_KEY));
    let session = started["session_id"].as_str().unwrap().to_string();
    // Its SessionStart hook seen, and at rest: whichever evidence said
    // idle last (the hook, or the screen when it was quicker).
    home.wait_until("claude started its session", || {
        hooks(&home, &id).iter().any(|h| h == "SessionStart") && home.show(&id)["status"] == "idle"
    });

    home.ok(&["send", &id, "hello"]);
    home.wait_until("the first turn ended", || {
        let kinds = home.event_kinds(&id);
        kinds.iter().any(|k| k == "RENAMED") && last_status_why(&home, &id) == "hook Stop"
    });
    let run = home.show(&id);
    assert_eq!(run["name"], "hello", "named after the first prompt");
    assert_eq!(run["status"], "idle");
    assert_eq!(
        run["session_id"],
        session.as_str(),
        "the minted id is Claude's session id"
    );
    let transcript = PathBuf::from(run["transcript_path"].as_str().unwrap());
    assert!(
        transcript.ends_with(format!("{session}.jsonl")),
        "{}",
        transcript.display()
    );
    // Claude appends to its transcript on its own schedule: on a busy
    // machine the file can follow the Stop hook by a moment.
    home.wait_until("claude wrote the transcript where the record says", || {
        transcript.is_file()
    });

    // A prompt of two lines is one message in Claude's transcript, not two
    // turns (issue #12).
    home.ok(&["send", &id, "two lines\nin one prompt"]);
    let replies = |messages: &[Value]| messages.iter().filter(|m| m["role"] == "assistant").count();
    home.wait_until("Claude answered the two-line prompt", || {
        let messages = real_cli::transcript(&home, &id);
        let took = messages
            .iter()
            .any(|m| m["role"] == "user" && m["text"].as_str().is_some_and(|t| t.contains("in one prompt")));
        took && replies(&messages) >= 2
    });
    let messages = real_cli::transcript(&home, &id);
    assert!(
        real_cli::has_message(&messages, "user", "two lines\nin one prompt"),
        "one user message with both lines: {messages:?}"
    );
    assert!(
        !real_cli::has_message(&messages, "user", "in one prompt"),
        "{messages:?}"
    );

    home.ok(&["send", &id, "ASKPERM now"]);
    home.wait_until("claude asks for permission", || {
        home.show(&id)["status"] == "needs_approval"
    });
    // Said by the hook, or by the screen if it drew the question before
    // the hook's process reported (a busy machine): the hook is recorded.
    let why = last_status_why(&home, &id);
    assert!(
        why.starts_with("hook PermissionRequest")
            || why.starts_with("hook Notification")
            || why.starts_with("screen shows a permission prompt"),
        "{why}"
    );
    home.wait_until("the permission hook is recorded", || {
        home.events(&id).iter().any(|e| {
            e["kind"] == "HOOK" && matches!(e["data"]["event"].as_str(), Some("PermissionRequest" | "Notification"))
        })
    });
    // The hook fires before Claude draws the question; an answer needs it
    // on the screen.
    home.wait_until("the question is on the screen", || {
        home.logs(&id).contains("Do you want to proceed?")
    });
    home.ok(&["answer", &id, "yes"]);
    home.wait_until("the tool ran and the turn ended", || {
        cwd.join("perm-marker").exists() && last_status_why(&home, &id) == "hook Stop"
    });
    let kinds = home.event_kinds(&id);
    for kind in ["INTERRUPT", "RUN_PAUSED", "RUN_RESUMED", "SESSION"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} in {kinds:?}");
    }
    let hooks = hooks(&home, &id);
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "Stop",
    ] {
        assert!(hooks.iter().any(|h| h == event), "{event} in {hooks:?}");
    }

    home.ok(&["send", &id, "/exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert!(real_cli::hooks(&home, &id).iter().any(|h| h == "SessionEnd"));
}

/// Claude Code redraws its screen while a tool runs silently (its spinner
/// and clock), and keeps `esc to interrupt` on it: a working hook is
/// confirmed by that sign, not by output alone, so it never stalls
/// (`engine.hook_stall_secs`, 3 s here against an 8 s silent command) even
/// when a busy machine holds Claude's redraws back longer than that (a
/// loaded CI run once saw it flip); and once the turn has ended, its still
/// screen lets the `Stop` stand (no output long enough to overrule it).
#[test]
fn a_real_claude_run_stays_working_through_a_long_silent_tool() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    let api_url = real_cli::serve(answer);
    let (user_home, _project, cwd) = claude_home(Some(API_KEY));
    let bin = BinDir::with(&claude, "claude");
    let home = Home::with_config("[engine]\nhook_stall_secs = 3\nhook_overrule_ms = 2000\n");
    let mut run = home.cmd(&["run", "-d", "claude", "--size", "120x40"]);
    run.args(asking(&claude))
        .current_dir(&cwd)
        .env("PATH", bin.path_before("/usr/bin:/bin"))
        .env("HOME", user_home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("ANTHROPIC_BASE_URL", &api_url)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    let id = real_cli::stdout_of(run, "run claude");
    home.wait_until("claude at its prompt", || home.show(&id)["status"] == "idle");
    home.ok(&["send", &id, "SLOWTOOL please"]);
    home.wait_until("claude asks to run it", || {
        home.logs(&id).contains("Do you want to proceed?")
    });
    home.ok(&["answer", &id, "yes"]);
    home.wait_until("working on the approved step", || {
        cwd.join("slow-started").exists() && home.show(&id)["status"] == "working"
    });
    let mut seen = Vec::new();
    while !cwd.join("slow-done").exists() {
        let run = home.show(&id);
        seen.push(format!("{} ({})", run["status"], run["evidence"]));
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    assert!(seen.len() >= 8, "{seen:?}");
    assert!(
        seen.iter().all(|s| s.starts_with("\"working\"")),
        "working all through the silent step: {seen:?}"
    );
    home.wait_until("the turn ended", || last_status_why(&home, &id) == "hook Stop");
    // Still at its prompt past the overrule time: the Stop stands.
    let settled = std::time::Instant::now();
    while settled.elapsed() < std::time::Duration::from_secs(4) {
        let run = home.show(&id);
        assert_eq!(run["status"], "idle", "{run}");
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    home.ok(&["send", &id, "/exit"]);
    assert_eq!(home.wait_end(&id)["state"], "succeeded");
}

/// With no key in the environment and no login of its own, Claude Code
/// says "Not logged in" from its first screen: the run shows that as
/// `waiting_input` with the words, and holds a prompt rather than typing it
/// into a harness that would refuse it.
#[test]
fn a_real_claude_run_with_no_login_says_so_and_holds_prompts() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    let (user_home, _project, cwd) = claude_home(None);
    let bin = BinDir::with(&claude, "claude");
    let home = Home::new();
    let mut run = home.cmd(&["run", "-d", "claude", "--size", "120x40"]);
    run.args(asking(&claude))
        .current_dir(&cwd)
        .env("PATH", bin.path_before("/usr/bin:/bin"))
        .env("HOME", user_home.path())
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("CLAUDE_CODE_OAUTH_TOKEN");
    let id = real_cli::stdout_of(run, "run claude");
    home.wait_until("the run says it is not logged in", || {
        let shown = home.show(&id);
        shown["status"] == "waiting_input"
            && last_status_why(&home, &id).starts_with("screen says it is not logged in: Not logged in")
    });
    let out = home.ok(&["send", &id, "hello"]);
    assert!(
        out.starts_with("queued"),
        "held, not typed into a harness that refuses it: {out}"
    );
    assert!(!home.logs(&id).contains("❯ hello"), "{}", home.logs(&id));
    assert_eq!(home.show(&id)["status"], "waiting_input");
}

/// The input box's last row as the user sees it.
fn input_row(lines: &[String]) -> Option<String> {
    lines.iter().rev().find(|l| l.starts_with('❯')).cloned()
}

/// A draft typed into Claude's input box through `agents attach` holds a
/// prompt sent with `agents send` and a message: neither is typed onto it,
/// looked at again and again; once the draft is erased each goes in, once
/// and alone, and Claude's own transcript has each as its own message.
#[test]
fn a_real_claude_run_holds_prompts_while_the_user_has_a_draft_then_takes_each_once() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    let api_url = real_cli::serve(answer);
    let setup = common::claude_mock::ClaudeSetup::new(&claude, &api_url);
    let home = Home::with_config("[engine]\nhold_after_typing_ms = 500\n");
    let id = real_cli::stdout_of(
        setup.agents(&home, &["run", "-d", "claude", "--name", "cc1", "--size", "120x40"]),
        "run claude",
    );
    home.wait_until("claude at its prompt", || home.show(&id)["status"] == "idle");
    let draft = "my half written dra";
    common::pty::type_through_attach(
        &home,
        &id,
        |l| input_row(l).is_some(),
        draft.as_bytes(),
        |l| input_row(l).is_some_and(|r| r.ends_with(draft)),
    );
    home.wait_until("claude at rest after the typing", || {
        real_cli::at_rest_for(&home, &id, 1500)
    });

    let sent = home.ok(&["send", "cc1", "QUEUED-TWO"]);
    assert!(sent.starts_with("held: the input has text the user typed"), "{sent}");
    home.ok(&["mail", "send", "cc1", "MAIL-TWO"]);
    let waiting = || home.show(&id)["waiting"].as_array().cloned().unwrap_or_default();
    home.wait_until("both wait", || waiting().len() == 2);
    let first_look = waiting()[0]["checked_at"].as_str().unwrap().to_string();
    home.wait_until("the supervisor looked again, two seconds on", || {
        let look = waiting()
            .first()
            .and_then(|w| w["checked_at"].as_str().map(str::to_string));
        look.is_some_and(|l| l.as_str() > first_look.as_str()) && {
            let at = |t: &str| humantime::parse_rfc3339(t).unwrap();
            let last = waiting()[0]["checked_at"].as_str().map(at).unwrap();
            last.duration_since(at(&first_look)).unwrap_or_default() >= std::time::Duration::from_secs(2)
        }
    });
    let screen = home.logs(&id);
    let lines: Vec<String> = screen.lines().map(str::to_string).collect();
    assert!(
        input_row(&lines).is_some_and(|r| r.ends_with(draft)),
        "the draft untouched: {screen}"
    );
    assert!(!screen.contains("QUEUED-TWO"), "{screen}");
    assert_eq!(waiting().len(), 2);

    // The user erases the draft: each goes in, alone, once.
    common::pty::type_through_attach(
        &home,
        &id,
        |l| input_row(l).is_some_and(|r| r.ends_with(draft)),
        &[0x7f; 19],
        |l| input_row(l).is_some_and(|r| r.trim_end() == "❯"),
    );
    home.wait_until("both prompts answered in the transcript", || {
        let messages = real_cli::transcript(&home, &id);
        real_cli::has_message(&messages, "user", "QUEUED-TWO")
            && messages
                .iter()
                .any(|m| m["role"] == "user" && m["text"].as_str().is_some_and(|t| t.ends_with("MAIL-TWO")))
            && messages.iter().filter(|m| m["role"] == "assistant").count() >= 2
    });
    let messages = real_cli::transcript(&home, &id);
    let users: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert_eq!(users.iter().filter(|t| **t == "QUEUED-TWO").count(), 1, "{users:?}");
    assert_eq!(users.iter().filter(|t| t.contains("MAIL-TWO")).count(), 1, "{users:?}");
    assert!(!users.iter().any(|t| t.contains(draft)), "{users:?}");
    home.wait_until("nothing waits", || waiting().is_empty());
}

/// Claude's "waiting for your input" notification (`idle_prompt`, here
/// after 1.5 s rather than its minute) leaves an idle run idle: no
/// question, nothing for the user to answer. An Esc mid-turn fires no
/// `Stop`: the screen no longer showing the turn (`esc to interrupt` gone,
/// the prompt put back) says it ended, and the run is idle once that
/// screen has been still a few seconds, not `working` until its hook
/// stalls a minute later.
#[test]
fn a_real_claude_run_stays_idle_at_its_idle_notification_and_is_idle_after_an_esc_interrupt() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    let api_url = real_cli::serve(answer);
    let setup = common::claude_mock::ClaudeSetup::new(&claude, &api_url);
    let config = setup.user_home.path().join(".claude.json");
    let mut global: Value = serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    global["messageIdleNotifThresholdMs"] = json!(1500);
    std::fs::write(&config, global.to_string()).unwrap();
    let home = Home::new();
    let id = real_cli::stdout_of(
        setup.agents(&home, &["run", "-d", "claude", "--name", "cc2", "--size", "120x40"]),
        "run claude",
    );
    home.wait_until("claude at its prompt", || home.show(&id)["status"] == "idle");
    home.ok(&["send", "cc2", "hello"]);
    home.wait_until("the turn ended", || last_status_why(&home, &id) == "hook Stop");
    home.wait_until("claude said it waits for input", || {
        home.events(&id)
            .iter()
            .any(|e| e["kind"] == "HOOK" && e["data"]["notification_type"] == "idle_prompt")
    });
    let run = home.show(&id);
    assert_eq!(run["status"], "idle", "{run}");
    let statuses = real_cli::statuses_after(&home, &id, 0);
    assert!(
        !statuses.iter().any(|(_, status, _)| status == "waiting_input"),
        "{statuses:?}"
    );

    home.ok(&["send", "cc2", "SLOWREPLY please"]);
    real_cli::wait(&home, &id, common::PATIENCE, "working on it", || {
        let submitted = hooks(&home, &id).iter().filter(|h| *h == "UserPromptSubmit").count();
        submitted == 2 && home.show(&id)["status"] == "working"
    });
    // Esc once the turn shows on screen, as a person who sees it working.
    common::pty::type_through_attach(
        &home,
        &id,
        |l| input_row(l).is_some() && l.iter().any(|r| r.contains("esc to interrupt")),
        b"\x1b",
        // Interrupted before any reply, Claude puts the prompt back into
        // its input; later, it says "Interrupted".
        |l| {
            input_row(l).is_some_and(|r| r.ends_with("SLOWREPLY please")) || l.iter().any(|l| l.contains("Interrupted"))
        },
    );
    real_cli::wait(&home, &id, common::PATIENCE, "idle after the interrupt", || {
        home.show(&id)["status"] == "idle"
    });
    let why = last_status_why(&home, &id);
    assert!(
        why.contains("no turn in progress") && why.contains("interrupted"),
        "{why}"
    );
    // The prompt it put back is the user's to send again: a queued one
    // waits behind it, not typed onto it (item 1). Sent while Claude's
    // output still moves, it waits for quiet first, then is held.
    let sent = home.ok(&["send", "cc2", "QUEUED-THREE"]);
    assert!(
        sent.starts_with("held: the input has text the user typed") || sent.starts_with("queued"),
        "{sent}"
    );
    home.wait_until("the prompt held behind the user's text", || {
        let waiting = home.show(&id)["waiting"].clone();
        waiting[0]["text"] == "QUEUED-THREE" && waiting[0]["why"] == "held: the input has text the user typed"
    });
    assert!(!home.logs(&id).contains("SLOWREPLY pleaseQUEUED"));
}

/// Shift-Enter as the TUI sends it to Claude Code (`ESC CR`: Claude does
/// not turn on the kitty keyboard protocol in a terminal it does not know
/// by name) and as a kitty terminal sends it through `agents attach`
/// (`CSI 13;2u`): each a new line in Claude's input, and the Enter after
/// sends ONE message with every line.
#[test]
fn a_real_claude_run_takes_shift_enter_as_a_new_line_and_enter_sends_one_message() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    let api_url = real_cli::serve(answer);
    let setup = common::claude_mock::ClaudeSetup::new(&claude, &api_url);
    let home = Home::new();
    let id = real_cli::stdout_of(
        setup.agents(&home, &["run", "-d", "claude", "--name", "cc2", "--size", "120x40"]),
        "run claude",
    );
    home.wait_until("claude at its prompt", || home.show(&id)["status"] == "idle");
    common::pty::type_through_attach(
        &home,
        &id,
        |l| input_row(l).is_some(),
        b"line1\x1b\rline2\x1b[13;2uline3",
        |l| l.iter().any(|r| r.contains("line3")) && !l.iter().any(|r| r.contains("line1line2")),
    );
    common::pty::type_through_attach(&home, &id, |l| l.iter().any(|r| r.contains("line3")), b"\r", |_| true);
    home.wait_until("the message in the transcript", || {
        real_cli::transcript(&home, &id)
            .iter()
            .any(|m| m["role"] == "user" && m["text"].as_str().is_some_and(|t| t.contains("line3")))
    });
    let messages = real_cli::transcript(&home, &id);
    let users: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["text"].as_str())
        .collect();
    assert_eq!(users, ["line1\nline2\nline3"], "{messages:?}");
}
