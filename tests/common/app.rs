//! A TUI `App` holding fixed runs, ids and times, so that the screens
//! drawn of it are stable (`tests/tui_screens.rs`, `tui_side.rs`,
//! `tui_headings.rs`).

use std::time::{Duration, UNIX_EPOCH};

use agents::api::{ActivityStatus, Event, RunDetail, RunRecord, RunState};
use agents::tui::app::{App, Update};
use agents::tui::mail::MailOf;

pub const T0: u64 = 1_795_939_200; // a fixed "now" for durations

/// `secs_before_now` seconds before `T0`, written as the daemon writes times.
pub fn at(secs_before_now: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_secs(T0 - secs_before_now)).to_string()
}

/// A demo run started `started_ago` seconds before `T0` (an ended one exited 0).
pub fn run(id: &str, name: &str, state: RunState, status: ActivityStatus, started_ago: u64) -> RunRecord {
    RunRecord {
        id: id.into(),
        name: name.into(),
        harness: "demo".into(),
        host: "local".into(),
        cwd: "/home/user/project".into(),
        command: vec!["agents".into(), "demo-agent".into()],
        state,
        status,
        parent_id: None,
        root_id: id.into(),
        detached: false,
        session_id: None,
        pid: Some(4242),
        exit_code: if state.is_live() { None } else { Some(0) },
        signal: None,
        reason: if state.is_live() {
            None
        } else {
            Some("exited with code 0".into())
        },
        created_at: at(started_ago + 1),
        started_at: Some(at(started_ago)),
        ended_at: if state.is_live() {
            None
        } else {
            Some(at(started_ago.saturating_sub(30)))
        },
        rows: 40,
        cols: 120,
        timeout_secs: None,
        worktree: None,
        output_bytes: 1234,
        status_since: None,
        evidence: None,
        evidence_at: None,
        routine: None,
        scheduled_at: None,
        log_pruned_at: None,
        waiting: Vec::new(),
        former_names: Vec::new(),
        sandbox: None,
    }
}

/// A tree with a parent, two children (one a detached subagent), an agent
/// waiting for an answer, and ended runs.
pub fn populated() -> App {
    let mut parent = run(
        "01AAAAAAAAAAAAAAAAAAAAAAAA",
        "fix-tests",
        RunState::Running,
        ActivityStatus::Working,
        252,
    );
    parent.command = vec!["agents".into(), "demo-agent".into(), "--subagents".into(), "2".into()];
    let mut child = run(
        "01BBBBBBBBBBBBBBBBBBBBBBBB",
        "explore",
        RunState::Running,
        ActivityStatus::Working,
        40,
    );
    child.parent_id = Some(parent.id.clone());
    child.root_id = parent.id.clone();
    let mut child2 = run(
        "01BCCCCCCCCCCCCCCCCCCCCCCC",
        "review",
        RunState::Succeeded,
        ActivityStatus::Unknown,
        100,
    );
    child2.parent_id = Some(parent.id.clone());
    child2.detached = true;
    let waiting = run(
        "01CCCCCCCCCCCCCCCCCCCCCCCC",
        "docs",
        RunState::Running,
        ActivityStatus::NeedsApproval,
        75,
    );
    let done = run(
        "01DDDDDDDDDDDDDDDDDDDDDDDD",
        "lint",
        RunState::Succeeded,
        ActivityStatus::Unknown,
        58,
    );
    let mut failed = run(
        "01EEEEEEEEEEEEEEEEEEEEEEEE",
        "broken",
        RunState::Failed,
        ActivityStatus::Unknown,
        90,
    );
    failed.exit_code = None;
    failed.signal = Some("SIGABRT".into());
    failed.reason = Some("killed by SIGABRT".into());

    let mut app = App::new();
    app.set_now(Some(UNIX_EPOCH + Duration::from_secs(T0)));
    app.set_no_color(true);
    app.set_connected(true);
    app.update(Update::Runs(vec![parent.clone(), child, child2, waiting, done, failed]));
    app.update(screen_of(parent.id.clone(), 20, 60, b"\x1b[1m\xe2\x9c\xbb demo-agent\x1b[0m\r\n> fix the failing tests\r\n\x1b[32m\xe2\x97\x8f\x1b[0m Running cargo test\r\n  \xe2\x8e\xbf 3 passed, 1 failed\r\n> "));
    let events = vec![
        Event {
            seq: 1,
            kind: "RUN_CREATED".into(),
            at: at(253),
            data: serde_json::json!({"state": "pending"}),
        },
        Event {
            seq: 2,
            kind: "RUN_STARTED".into(),
            at: at(252),
            data: serde_json::json!({"state": "running", "pid": 4242}),
        },
        Event {
            seq: 3,
            kind: "STATUS".into(),
            at: at(12),
            data: serde_json::json!({"status": "working", "why": "output in the last moment"}),
        },
    ];
    app.update(Update::Detail(Box::new(RunDetail {
        run: parent,
        events,
        harness: Default::default(),
        usage: Some(usage()),
        undelivered: Vec::new(),
    })));
    let mail =
        |id: &str, from: (&str, &str), to: (&str, &str), ago: u64, body: &str, state: &str| agents::api::MailRecord {
            version: 1,
            id: id.into(),
            from: from.0.into(),
            from_name: from.1.into(),
            to: to.0.into(),
            to_name: to.1.into(),
            thread: id.into(),
            in_reply_to: None,
            at: at(ago),
            body: body.into(),
            state: state.into(),
            reason: None,
        };
    let fix = ("01AAAAAAAAAAAAAAAAAAAAAAAA", "fix-tests");
    app.update(Update::Mail {
        of: MailOf::Run(fix.0.into()),
        result: Ok(vec![
            mail(
                "01MAIL3",
                fix,
                ("01BBBBBBBBBBBBBBBBBBBBBBBB", "explore"),
                30,
                "map the modules",
                "queued",
            ),
            mail(
                "01MAIL2",
                ("01BBBBBBBBBBBBBBBBBBBBBBBB", "explore"),
                fix,
                90,
                "parse.rs is done\n\x1b[2Jtests next",
                "delivered",
            ),
        ]),
    });
    app.take_commands();
    app
}

/// What `fix-tests` spent: its own conversation and one subagent's.
fn usage() -> agents::api::RunUsage {
    use agents::api::{ModelUsage, RunUsage, UsageShare};
    use agents::transcript::Usage;
    let tokens = |input, output, cache_read| Usage {
        input,
        output,
        cache_read,
        cache_write: 0,
    };
    RunUsage {
        tokens: tokens(12_300, 4_100, 80_000),
        messages: 42,
        subagents: UsageShare {
            tokens: tokens(1_200, 300, 9_000),
            messages: 6,
        },
        models: vec![ModelUsage {
            model: Some("claude-sonnet-4-5".into()),
            tokens: tokens(12_300, 4_100, 80_000),
            price: Some("claude-sonnet-4".into()),
            estimated_cost_usd: Some(0.1224),
        }],
        estimated_cost_usd: Some(0.1224),
    }
}

/// The update a run's emulator sends for a screen that printed `bytes`.
pub fn screen_of(run: impl Into<String>, rows: u16, cols: u16, bytes: &[u8]) -> Update {
    let mut term = agents::term::Terminal::new(rows, cols);
    term.feed(bytes);
    let update = agents::protocol::screen::ScreenWatch::new()
        .next(&term, bytes.len() as u64)
        .expect("a first update");
    Update::Screen {
        run: run.into(),
        update: Box::new(update),
    }
}

/// The sizes the snapshots are drawn at.
pub const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 50)];
