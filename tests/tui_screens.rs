//! Whole-screen snapshots of the TUI (TestBackend + insta), stored in the
//! top-level `snapshots/` folder. Runs, ids and times are fixed so the
//! screens are stable.

mod common;

use common::tui::screen;
use std::time::{Duration, UNIX_EPOCH};

use agents::api::{ActivityStatus, Event, RunDetail, RunRecord, RunState};
use agents::tui::app::{App, Command, Overlay, Tab, Update};
use agents::tui::form::NewRunForm;
use agents::tui::mail::MailOf;
use agents::tui::view;

const T0: u64 = 1_795_939_200; // a fixed "now" for durations

fn at(secs_before_now: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_secs(T0 - secs_before_now)).to_string()
}

fn run(id: &str, name: &str, state: RunState, status: ActivityStatus, started_ago: u64) -> RunRecord {
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
    }
}

/// A tree with a parent, two children (one a detached subagent), an agent
/// waiting for an answer, and ended runs.
fn populated() -> App {
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
    app.now = Some(UNIX_EPOCH + Duration::from_secs(T0));
    app.no_color = true;
    app.connected = true;
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

macro_rules! snap {
    ($name:expr, $value:expr) => {
        insta::with_settings!({ snapshot_path => "../snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!($name, $value);
        });
    };
}

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 50)];

#[test]
fn the_empty_state_says_how_to_start() {
    for (w, h) in SIZES {
        let mut app = App::new();
        app.no_color = true;
        app.connected = true;
        snap!(format!("empty_{w}x{h}"), screen(&mut app, w, h));
    }
}

#[test]
fn the_tree_shows_parents_children_and_every_kind_of_state() {
    for (w, h) in SIZES {
        let mut app = populated();
        snap!(format!("tree_{w}x{h}"), screen(&mut app, w, h));
    }
}

/// `populated()` with two subagents of `fix-tests`: one still running with
/// its task, one done that only said its type.
fn with_subagents() -> App {
    use agents::api::{RunSubagent, SubagentRecord};
    let mut app = populated();
    let sub = |id: &str, kind: &str, task: Option<&str>, done: bool| RunSubagent {
        run_id: "01AAAAAAAAAAAAAAAAAAAAAAAA".into(),
        subagent: SubagentRecord {
            agent_id: id.into(),
            agent_type: Some(kind.into()),
            session_id: None,
            transcript_path: None,
            started_at: at(30),
            ended_at: done.then(|| at(10)),
            description: task.map(str::to_string),
        },
    };
    app.update(Update::Subagents(vec![
        sub(
            "a1b2c3d4e5f6a7b8c",
            "general-purpose",
            Some("Map the parser modules"),
            false,
        ),
        sub("f00dfeedf00dfeed0", "Explore", None, true),
    ]));
    app.take_commands();
    app
}

#[test]
fn the_tree_shows_subagents_under_their_run() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = with_subagents();
        let text = screen(&mut app, w, h);
        assert!(text.contains("├◇ Map the pars"), "{text}");
        snap!(format!("tree_subagents_{w}x{h}"), text);
    }
    // Selecting a subagent's row shows it, above the run that started it.
    let mut app = with_subagents();
    let row = app.rows.iter().position(|r| r.subagent.is_some()).unwrap();
    app.selected = row;
    assert_eq!(app.selected_run().unwrap().name, "fix-tests");
    snap!("tree_subagent_selected_120x40", screen(&mut app, 120, 40));
}

#[test]
fn each_side_tab_renders() {
    for tab in Tab::ALL {
        for (w, h) in SIZES {
            let mut app = populated();
            app.tab = tab;
            if w < view::SIDE_BESIDE_FROM {
                app.panel = agents::tui::app::Panel::Side;
            }
            snap!(
                format!("tab_{}_{w}x{h}", tab.title().to_lowercase()),
                screen(&mut app, w, h)
            );
        }
    }
}

#[test]
fn the_lineage_tab_shows_the_run_this_one_resumed_and_the_runs_that_forked_it() {
    let mut app = populated();
    app.tab = Tab::Lineage;
    // Beside the panes at 120 columns (it starts hidden there).
    app.side_shown = Some(true);
    app.want_tab_data();
    let focus = "01AAAAAAAAAAAAAAAAAAAAAAAA";
    assert_eq!(app.take_commands(), vec![Command::Lineage(focus.into())]);
    // `runs.lineage`: fix-tests resumed lint's conversation natively, and
    // docs forked fix-tests' conversation.
    let node = |edge: &str, id: &str, name: &str, state: &str, mode: Option<&str>, children: serde_json::Value| {
        serde_json::json!({
            "edge": edge, "id": id, "name": name, "state": state, "harness": "claude",
            "resume_mode": mode, "detached": false, "children": children,
        })
    };
    let tree = node(
        "root",
        "01DDDDDDDDDDDDDDDDDDDDDDDD",
        "lint",
        "succeeded",
        None,
        serde_json::json!([node(
            "resume_of",
            focus,
            "fix-tests",
            "running",
            Some("native"),
            serde_json::json!([
                node(
                    "child",
                    "01BBBBBBBBBBBBBBBBBBBBBBBB",
                    "explore",
                    "running",
                    None,
                    serde_json::json!([])
                ),
                node(
                    "fork_of",
                    "01CCCCCCCCCCCCCCCCCCCCCCCC",
                    "docs",
                    "running",
                    None,
                    serde_json::json!([])
                ),
            ]),
        )]),
    );
    app.update(Update::Lineage {
        run: focus.into(),
        result: Ok(serde_json::from_value(serde_json::json!({ "focus": focus, "root": tree })).unwrap()),
    });
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("resumes ✓ lint  succeeded · native"), "{text}");
    assert!(text.contains("forked by ◉ docs  running"), "{text}");
    snap!("tab_lineage_resumes_and_forks_120x40", text);
}

#[test]
fn the_new_run_form_and_the_help_overlay_render() {
    for (w, h) in SIZES {
        let mut app = populated();
        let mut form = NewRunForm::new();
        form.cwd = "/home/user/project".into();
        form.name = "refactor".into();
        app.overlay = Some(Overlay::NewRun(form));
        snap!(format!("new_run_{w}x{h}"), screen(&mut app, w, h));

        let mut app = populated();
        app.overlay = Some(Overlay::Help);
        snap!(format!("help_{w}x{h}"), screen(&mut app, w, h));
    }
}

#[test]
fn hints_and_help_name_the_configured_keys() {
    let keys = std::collections::HashMap::from([
        ("prefix".to_string(), "ctrl-b".to_string()),
        ("new".to_string(), "N".to_string()),
    ]);
    let keymap = agents::tui::keymap::Keymap::from_config(&keys).expect("the keys parse");
    assert_eq!(
        keymap.shadowed,
        ["N: new, not deny"],
        "N no longer answers no, and that is said"
    );
    let mut app = populated();
    app.keymap = keymap;
    let normal = screen(&mut app, 120, 40);
    assert!(normal.contains("N new") && !normal.contains("n new"), "{normal}");
    app.overlay = Some(Overlay::Help);
    let help = screen(&mut app, 120, 40);
    for said in [
        "Enter/i / Ctrl-b  type into the run (INSERT) / back to NORMAL",
        "N  new run",
        "Y / -  answer a run",
        "(Ctrl-b returns)",
    ] {
        assert!(help.contains(said), "{said:?} in {help}");
    }
    assert!(!help.contains("Ctrl-a"), "{help}");
}

#[test]
fn a_run_that_could_not_start_says_why_in_the_status_line_and_its_pane() {
    let mut app = App::new();
    let mut blocked = run("01X", "claude-1", RunState::Blocked, ActivityStatus::Unknown, 5);
    blocked.harness = "claude".into();
    blocked.reason = Some("binary not found: claude (searched PATH)".into());
    app.update(Update::Started(Box::new(Ok(blocked))));
    for (w, h) in SIZES {
        let text = screen(&mut app, w, h);
        assert!(text.contains("claude-1 could not start: binary not found"), "{text}");
        assert!(text.contains("This run could not start:"), "{text}");
        assert!(text.contains("r starts it again"), "{text}");
    }
}

#[test]
fn a_reruns_record_and_lineage_say_which_run_it_repeats() {
    let mut app = App::new();
    let first = run("01W", "worker", RunState::Succeeded, ActivityStatus::Unknown, 100);
    let again = run("01X", "worker-2", RunState::Running, ActivityStatus::Working, 10);
    app.update(Update::Runs(vec![first, again.clone()]));
    let events = vec![Event {
        seq: 1,
        kind: "RERUN_OF".into(),
        at: at(10),
        data: serde_json::json!({"run": "01W", "name": "worker"}),
    }];
    app.update(Update::Detail(Box::new(RunDetail {
        run: again,
        events,
        harness: Default::default(),
        usage: None,
    })));
    // Select worker-2, wherever the tree puts it.
    for _ in 0..3 {
        if app.selected_run().map(|r| r.id.as_str()) == Some("01X") {
            break;
        }
        app.handle(crossterm::event::Event::Key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('j'),
            crossterm::event::KeyModifiers::NONE,
        )));
    }
    assert_eq!(app.selected_run().map(|r| r.id.as_str()), Some("01X"));
    app.side_shown = Some(true);
    for tab in [Tab::Record, Tab::Lineage] {
        app.tab = tab;
        let text = screen(&mut app, 200, 50);
        let line = text.lines().find(|l| l.contains("rerun of")).unwrap_or_default();
        assert!(
            line.contains("rerun of worker") || line.contains("rerun of  worker"),
            "{tab:?}: {text}"
        );
        assert!(!text.contains("no parent, no children"), "{text}");
    }
}

#[test]
fn the_events_tab_says_what_matters_folds_status_flapping_and_the_transcript_tab_says_when_there_is_none() {
    let mut app = App::new();
    let mut ended = run("01E", "builder", RunState::Blocked, ActivityStatus::Unknown, 30);
    ended.harness = "cmd".into();
    app.update(Update::Runs(vec![ended.clone()]));
    let event = |seq: i64, kind: &str, data: serde_json::Value| Event {
        seq,
        kind: kind.into(),
        at: "2026-12-02T01:02:03.000Z".into(),
        data,
    };
    let mut events = vec![event(1, "RUN_CREATED", serde_json::json!({"state": "pending"}))];
    for (i, status) in ["working", "idle", "working", "idle"].iter().enumerate() {
        events.push(event(
            2 + i as i64,
            "STATUS",
            serde_json::json!({"status": status, "why": "output"}),
        ));
    }
    events.push(event(
        9,
        "RUN_ERROR",
        serde_json::json!({"state": "blocked", "reason": "binary not found: make"}),
    ));
    app.update(Update::Detail(Box::new(RunDetail {
        run: ended,
        events,
        harness: Default::default(),
        usage: None,
    })));
    // Focused at 80 columns, the side panel takes the screen.
    app.panel = agents::tui::app::Panel::Side;
    app.tab = Tab::Events;
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("RUN_ERROR") && text.contains("state blocked · reason binary not found: make"),
        "{text}"
    );
    assert!(text.contains("status idle · why output  (+3 status"), "{text}");
    assert_eq!(
        text.matches("STATUS").count(),
        1,
        "four status changes in a row are one row: {text}"
    );
    assert!(!text.contains("{\""), "no raw JSON: {text}");
    app.tab = Tab::Transcript;
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("no transcript: a cmd run keeps none"), "{text}");
}

#[test]
fn the_tree_widens_for_long_names_within_bounds_and_cuts_the_rest_with_an_ellipsis() {
    let mut app = App::new();
    let long = "refactor-the-parser-module";
    app.update(Update::Runs(vec![run(
        "01L",
        long,
        RunState::Running,
        ActivityStatus::Working,
        5,
    )]));
    let tree_row = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("│ ●"))
            .unwrap_or_default()
            .to_string()
    };
    let wide = screen(&mut app, 200, 50);
    assert!(
        tree_row(&wide).contains(long),
        "room for the whole name at 200 columns: {wide}"
    );
    let narrow = screen(&mut app, 120, 40);
    let row = tree_row(&narrow);
    assert!(
        !row.contains(long) && row.contains("refactor-the-parse…"),
        "cut with an ellipsis: {narrow}"
    );
}

#[test]
fn the_focused_side_panel_scrolls_with_j_and_k_and_stops_at_its_end() {
    use crossterm::event::{Event as Input, KeyCode, KeyEvent, KeyModifiers};
    let key = |app: &mut App, code| app.handle(Input::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    let mut app = populated();
    // Thirty events: taller than the panel at 24 rows.
    let id = app.selected_run().map(|r| r.id.clone()).unwrap();
    let mut detail = app.details[&id].clone();
    detail.events = (1..=30)
        .map(|seq| Event {
            seq,
            kind: if seq % 2 == 0 { "HOOK" } else { "PROMPT_QUEUED" }.into(),
            at: at(30 - seq as u64),
            data: serde_json::json!({ "prompt_id": format!("p{seq}") }),
        })
        .collect();
    app.update(Update::Detail(Box::new(detail)));
    app.panel = agents::tui::app::Panel::Side;
    app.tab = Tab::Events;
    let selected = app.selected;
    screen(&mut app, 80, 24);
    let most = app.side_scroll_max.get();
    assert!(most > 0, "sixty lines overflow 24 rows");
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(
        (app.side_scroll, app.selected),
        (1, selected),
        "j scrolls the panel, not the tree"
    );
    key(&mut app, KeyCode::Char('k'));
    assert_eq!(app.side_scroll, 0);
    for _ in 0..20 {
        key(&mut app, KeyCode::PageDown);
    }
    assert_eq!(app.side_scroll, most, "PgDn stops at the last page");
    let text = screen(&mut app, 80, 24);
    assert!(
        !text
            .lines()
            .nth(2)
            .unwrap_or_default()
            .trim_matches(['│', ' '])
            .is_empty(),
        "{text}"
    );
}

#[test]
fn a_click_selects_a_tree_row_or_shows_a_side_tab() {
    use crossterm::event::{Event as Input, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    let click = |app: &mut App, column: u16, row: u16| {
        app.handle(Input::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }))
    };
    let at = |text: &str, needle: &str| {
        text.lines().enumerate().find_map(|(y, l)| {
            let x = l.find(needle)?;
            Some((l[..x].chars().count() as u16, y as u16))
        })
    };
    let mut app = populated();
    let text = screen(&mut app, 200, 50);
    let (x, y) = at(&text, "lint").expect("lint in the tree");
    click(&mut app, x, y);
    assert_eq!(app.selected_run().map(|r| r.name.as_str()), Some("lint"));
    let text = screen(&mut app, 200, 50);
    // At 200 columns the panel has room for the others only by their
    // first letters: those are where a click lands.
    let (x, y) = at(&text, "Eve ").expect("the Events tab's title");
    click(&mut app, x + 1, y);
    assert_eq!(app.tab, Tab::Events);
    let text = screen(&mut app, 200, 50);
    let (x, y) = at(&text, "Cha ").expect("the Changes tab's title");
    click(&mut app, x + 2, y);
    assert_eq!(app.tab, Tab::Changes);
}

#[test]
fn a_window_below_80x24_says_it_is_too_small() {
    let mut app = populated();
    let text = screen(&mut app, 79, 23);
    assert!(text.contains("at least 80×24"), "{text}");
    snap!("too_small_79x23", text);
}

fn host(
    name: &str,
    link: &str,
    since_ago: u64,
    latency_ms: Option<u64>,
    error: Option<&str>,
) -> agents::api::HostRecord {
    agents::api::HostRecord {
        name: name.into(),
        target: format!("user@{name}"),
        remote_bin: "agents".into(),
        remote_home: None,
        created_at: at(86_400),
        link: link.into(),
        since: Some(at(since_ago)),
        latency_ms,
        error: error.map(str::to_string),
        remote_version: Some("agents 0.1.0".into()),
        live_runs: 1,
    }
}

#[test]
fn each_hosts_link_state_shows_in_its_tree_row_and_the_header() {
    for (w, h) in SIZES {
        let mut app = populated();
        let mut runs = app.runs.clone();
        for (id, name, on, state) in [
            ("01XAAAAAAAAAAAAAAAAAAAAAAA", "train", "gpu1", RunState::Running),
            ("01XBBBBBBBBBBBBBBBBBBBBBBB", "eval", "lab", RunState::Running),
            ("01XCCCCCCCCCCCCCCCCCCCCCCC", "sweep", "old", RunState::Failed),
        ] {
            let mut r = run(id, name, state, ActivityStatus::Working, 721);
            r.host = on.into();
            runs.push(r);
        }
        app.update(Update::Runs(runs));
        app.update(Update::Hosts(vec![
            host("gpu1", "up", 900, Some(12), None),
            host("lab", "reconnecting", 34, None, Some("the link was lost")),
            host(
                "old",
                "down",
                600,
                None,
                Some("host old (user@10.0.0.9:22) is unreachable: Connection refused"),
            ),
        ]));
        app.take_commands();
        let text = screen(&mut app, w, h);
        assert!(text.contains("▾ gpu1 up 12ms"), "{text}");
        assert!(text.contains("▾ lab reconnecting 34s"), "{text}");
        assert!(text.contains("▾ old down: host old"), "{text}");
        if w >= 120 {
            assert!(text.contains("local ● gpu1 ● lab ◌ old ✗"), "{text}");
        }
        snap!(format!("hosts_{w}x{h}"), text);
    }
}

#[test]
fn every_configured_host_has_a_row_with_its_link_even_without_runs() {
    let hosts = || {
        vec![
            host("gpu1", "up", 900, Some(12), None),
            host("lab", "reconnecting", 34, None, Some("the link was lost")),
            host(
                "old",
                "down",
                600,
                None,
                Some("host old (user@10.0.0.9:22) is unreachable: Connection refused"),
            ),
            host("spare", "idle", 0, None, None),
        ]
    };
    for (w, h) in SIZES {
        // Runs here and on gpu1 only: lab, old and spare have none.
        let mut app = populated();
        let mut runs = app.runs.clone();
        let mut r = run(
            "01XAAAAAAAAAAAAAAAAAAAAAAA",
            "train",
            RunState::Running,
            ActivityStatus::Working,
            721,
        );
        r.host = "gpu1".into();
        runs.push(r);
        app.update(Update::Runs(runs));
        app.update(Update::Hosts(hosts()));
        app.take_commands();
        let headings: Vec<&str> = app
            .rows
            .iter()
            .filter(|r| r.run.is_none())
            .map(|r| r.host.as_str())
            .collect();
        assert_eq!(headings, ["local", "gpu1", "lab", "old", "spare"]);
        let text = screen(&mut app, w, h);
        assert!(text.contains("▾ gpu1 up 12ms"), "{text}");
        assert!(text.contains("▾ lab reconnecting 34s"), "{text}");
        assert!(text.contains("▾ old down: host old"), "{text}");
        assert!(text.contains("▾ spare idle"), "{text}");
        snap!(format!("hosts_without_runs_{w}x{h}"), text);
    }

    // No runs anywhere yet: the hosts' rows, then how to start one.
    let mut app = App::new();
    app.now = Some(UNIX_EPOCH + Duration::from_secs(T0));
    app.no_color = true;
    app.connected = true;
    app.update(Update::Hosts(hosts()));
    app.take_commands();
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("▾ local"), "{text}");
    assert!(text.contains("▾ lab reconnecting 34s"), "{text}");
    assert!(text.contains("no runs yet"), "{text}");
    snap!("hosts_without_runs_empty_80x24", text);
}

/// The update a run's emulator sends for a screen that printed `bytes`.
fn screen_of(run: impl Into<String>, rows: u16, cols: u16, bytes: &[u8]) -> Update {
    let mut term = agents::term::Terminal::new(rows, cols);
    term.feed(bytes);
    let update = agents::term::ScreenWatch::new()
        .next(&term, bytes.len() as u64)
        .expect("a first update");
    Update::Screen {
        run: run.into(),
        update: Box::new(update),
    }
}

/// At 120 columns the agent's pane gets the room (the side panel starts
/// hidden below 140: Claude Code's first screen was cut at 54 columns);
/// `p` puts the side panel beside the panes, and takes it away again.
#[test]
fn the_side_panel_starts_hidden_below_140_columns_and_p_toggles_it() {
    use crossterm::event::{Event as Input, KeyCode, KeyEvent, KeyModifiers};
    let p = || Input::Key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::NONE));
    let mut app = populated();
    screen(&mut app, 120, 40);
    let alone = app_pane_width(&app);
    assert!(alone >= 90, "the pane has {alone} columns at 120");
    app.handle(p());
    screen(&mut app, 120, 40);
    let beside = app_pane_width(&app);
    assert!(beside + 30 < alone, "the side panel took its room: {beside} of {alone}");
    app.handle(p());
    screen(&mut app, 120, 40);
    assert_eq!(app_pane_width(&app), alone);
}

/// The widest pane's columns as last drawn.
fn app_pane_width(app: &App) -> u16 {
    app.pane_sizes.values().map(|(_, cols)| *cols).max().unwrap_or(0)
}

#[test]
fn routines_are_a_group_after_the_hosts_with_their_next_fire() {
    use agents::api::RoutineRecord;
    let routine = |name: &str, next: Option<String>, paused: bool, enabled: bool| RoutineRecord {
        name: name.into(),
        schedule: "0 3 * * 1-5".into(),
        timezone: "local".into(),
        harness: "claude".into(),
        host: "local".into(),
        overlap: "skip".into(),
        catch_up: "none".into(),
        enabled,
        paused,
        next_fire: next,
        queued: 0,
        last: None,
    };
    let soon = humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_secs(T0 + 7200)).to_string();
    let local: chrono::DateTime<chrono::Local> = (UNIX_EPOCH + Duration::from_secs(T0 + 7200)).into();
    let mut app = populated();
    let mut last = run(
        "01FFFFFFFFFFFFFFFFFFFFFFFF",
        "weekly",
        RunState::Skipped,
        ActivityStatus::Unknown,
        30,
    );
    last.routine = Some("weekly".into());
    app.update(Update::Routines(vec![
        routine("nightly", Some(soon), false, true),
        routine("weekly", None, true, true),
        routine("old", None, false, false),
    ]));
    app.routines[1].last = Some(last);
    let text = screen(&mut app, 120, 40);
    let lines: Vec<&str> = text.lines().collect();
    let heading = lines.iter().position(|l| l.contains("▾ routines")).expect(&text);
    assert!(lines[heading + 1].contains("◷  nightly"), "{text}");
    assert!(
        lines[heading + 1].contains(&local.format("%H:%M").to_string()),
        "{text}"
    );
    assert!(
        lines[heading + 2].contains("◷↷ weekly") && lines[heading + 2].contains("paused"),
        "{text}"
    );
    assert!(
        lines[heading + 3].contains("old") && lines[heading + 3].contains("off"),
        "{text}"
    );
    // Not runs: the selection never lands on them.
    for _ in 0..20 {
        use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
        app.handle(Event::Key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::NONE)));
    }
    assert!(app.selected_run().is_some());
    assert!(app.rows[app.selected].routine.is_none());
}

#[test]
fn a_team_is_a_heading_over_its_leader_with_its_mail_not_yet_typed_in() {
    let mut app = populated();
    let member = |member: &str, leader: bool, run: &RunRecord| agents::api::TeamMember {
        member: member.into(),
        leader,
        role: None,
        run: run.clone(),
    };
    let (lead, explore) = (app.runs[0].clone(), app.runs[1].clone());
    assert_eq!((lead.name.as_str(), explore.name.as_str()), ("fix-tests", "explore"));
    app.update(Update::Teams(vec![agents::api::TeamRecord {
        id: "01TEAM".into(),
        name: "review".into(),
        definition: "review".into(),
        approvals: "user".into(),
        state: "live".into(),
        created_at: at(300),
        problem: None,
        members: vec![member("lead", true, &lead), member("explore", false, &explore)],
        unread: 2,
    }]));
    let heading = app.rows.iter().position(|r| r.team.is_some()).expect("a team heading");
    assert_eq!(
        app.rows[heading + 1].run.as_deref(),
        Some(lead.id.as_str()),
        "just above its leader"
    );
    assert_eq!(
        app.rows[heading].run.as_deref(),
        Some(lead.id.as_str()),
        "selecting it selects the leader"
    );
    assert_ne!(app.selected, heading, "the selection stays on a run's own row");
    snap!("team_heading_120x40", screen(&mut app, 120, 40));

    // On the heading, the Mail tab is the team's: read by its name.
    app.selected = heading;
    app.tab = Tab::Mail;
    app.take_commands();
    app.want_tab_data();
    let asked = app.take_commands();
    assert!(
        asked
            .iter()
            .any(|c| matches!(c, Command::Mail(MailOf::Team(t)) if t == "review")),
        "{asked:?}"
    );
    let mut between = app.mail[&MailOf::Run(lead.id.clone())].clone().unwrap();
    between[0].body = "the team's own thread".into();
    app.update(Update::Mail {
        of: MailOf::Team("review".into()),
        result: Ok(between),
    });
    let text = screen(&mut app, 160, 40);
    assert!(text.contains("2 message(s) in team review"), "{text}");
    assert!(text.contains("fix-tests → explore"), "{text}");
    assert!(text.contains("the team's own thread"), "{text}");
    // Back on the leader's own row, its own mail again.
    app.selected = heading + 1;
    let text = screen(&mut app, 160, 40);
    assert!(text.contains("2 message(s) to or from fix-tests"), "{text}");
    assert!(!text.contains("the team's own thread"), "{text}");
}
