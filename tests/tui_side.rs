//! The side panel's tabs drawn whole (TestBackend + insta, `snapshots/`):
//! each tab at each size, a run's lineage, a rerun's record, the events
//! folded, and the panel scrolled. Runs, ids and times as in `common::app`.

mod common;

use common::app::{SIZES, at, populated, run};
use common::tui::screen;

use agents::api::{ActivityStatus, Event, RunDetail, RunState};
use agents::tui::app::{App, Command, Tab, Update};
use agents::tui::view;

#[test]
fn each_side_tab_renders() {
    for tab in Tab::ALL {
        for (w, h) in SIZES {
            let mut app = populated();
            app.set_tab(tab);
            if w < view::SIDE_BESIDE_MIN {
                app.set_panel(agents::tui::app::Panel::Side);
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
    app.set_tab(Tab::Lineage);
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
        undelivered: Vec::new(),
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
    app.set_side_shown(Some(true));
    for tab in [Tab::Record, Tab::Lineage] {
        app.set_tab(tab);
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
        undelivered: vec![agents::api::UndeliveredPrompt {
            id: "p1".into(),
            text: "fix the build\x1b[2J".into(),
            queued_at: "2026-12-02T01:02:00.000Z".into(),
            reason: "the run ended (blocked)".into(),
        }],
    })));
    // Focused at 80 columns, the side panel takes the screen.
    app.set_panel(agents::tui::app::Panel::Side);
    app.set_tab(Tab::Events);
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
    app.set_tab(Tab::Transcript);
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("no transcript: a cmd run keeps none"), "{text}");
    // A prompt it ended without, inert, with why.
    app.set_tab(Tab::Record);
    let text = screen(&mut app, 80, 24);
    assert!(
        text.contains("unsent   fix the build\\x1b[2J: the run ended") && text.contains("(blocked)"),
        "{text}"
    );
}

#[test]
fn the_focused_side_panel_scrolls_with_j_and_k_and_stops_at_its_end() {
    use crossterm::event::{Event as Input, KeyCode, KeyEvent, KeyModifiers};
    let key = |app: &mut App, code| app.handle(Input::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    let mut app = populated();
    // Thirty events: taller than the panel at 24 rows.
    let id = app.selected_run().map(|r| r.id.clone()).unwrap();
    let mut detail = app.detail(&id).expect("its detail").clone();
    detail.events = (1..=30)
        .map(|seq| Event {
            seq,
            kind: if seq % 2 == 0 { "HOOK" } else { "PROMPT_QUEUED" }.into(),
            at: at(30 - seq as u64),
            data: serde_json::json!({ "prompt_id": format!("p{seq}") }),
        })
        .collect();
    app.update(Update::Detail(Box::new(detail)));
    app.set_panel(agents::tui::app::Panel::Side);
    app.set_tab(Tab::Events);
    let selected = app.selected();
    screen(&mut app, 80, 24);
    let most = app.side_scroll_max();
    assert!(most > 0, "sixty lines overflow 24 rows");
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(
        (app.side_scroll(), app.selected()),
        (1, selected),
        "j scrolls the panel, not the tree"
    );
    key(&mut app, KeyCode::Char('k'));
    assert_eq!(app.side_scroll(), 0);
    for _ in 0..20 {
        key(&mut app, KeyCode::PageDown);
    }
    assert_eq!(app.side_scroll(), most, "PgDn stops at the last page");
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
fn a_boxed_runs_record_says_how_it_is_boxed() {
    let mut app = App::new();
    let mut boxed = run("01B", "boxed", RunState::Running, ActivityStatus::Working, 10);
    boxed.sandbox = Some("offline".into());
    app.update(Update::Runs(vec![boxed.clone()]));
    app.update(Update::Detail(Box::new(RunDetail {
        run: boxed,
        events: Vec::new(),
        harness: Default::default(),
        usage: None,
        undelivered: Vec::new(),
    })));
    assert_eq!(app.selected_run().map(|r| r.id.as_str()), Some("01B"));
    app.set_side_shown(Some(true));
    app.set_tab(Tab::Record);
    let text = screen(&mut app, 200, 50);
    let line = text.lines().find(|l| l.contains("sandbox")).unwrap_or_default();
    assert!(line.contains("bubblewrap, no network"), "{text}");
}
