//! Whole-screen snapshots of the TUI (TestBackend + insta), stored in the
//! top-level `snapshots/` folder: the empty state, the run tree, the
//! overlays, the layout at each size. Runs, ids and times are fixed
//! (`common::app`) so the screens are stable; the side panel's tabs are
//! in `tui_side.rs`, the tree's hosts, routines and teams in
//! `tui_headings.rs`.

mod common;

use std::time::{Duration, UNIX_EPOCH};

use common::app::{SIZES, T0, at, populated, run};
use common::tui::screen;

use agents::api::{ActivityStatus, RunState};
use agents::tui::app::{App, Overlay, Tab, Update};
use agents::tui::form::NewRunForm;

#[test]
fn the_empty_state_says_how_to_start() {
    for (w, h) in SIZES {
        let mut app = App::new();
        app.set_no_color(true);
        app.set_connected(true);
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
    let row = app.rows().iter().position(|r| r.subagent.is_some()).unwrap();
    app.set_selected(row);
    assert_eq!(app.selected_run().unwrap().name, "fix-tests");
    snap!("tree_subagent_selected_120x40", screen(&mut app, 120, 40));
}

#[test]
fn the_new_run_form_and_the_help_overlay_render() {
    for (w, h) in SIZES {
        let mut app = populated();
        let mut form = NewRunForm::new();
        form.cwd = "/home/user/project".into();
        form.name = "refactor".into();
        app.set_overlay(Some(Overlay::NewRun(Box::new(form))));
        snap!(format!("new_run_{w}x{h}"), screen(&mut app, w, h));

        let mut app = populated();
        app.set_overlay(Some(Overlay::Help));
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
    app.set_keymap(keymap);
    let normal = screen(&mut app, 120, 40);
    assert!(normal.contains("N new") && !normal.contains("n new"), "{normal}");
    app.set_overlay(Some(Overlay::Help));
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
fn the_tree_widens_for_long_names_within_bounds_and_cuts_the_rest_with_an_ellipsis() {
    let mut app = App::new();
    // Durations as of T0, the runs' own "now": not today's.
    app.set_now(Some(UNIX_EPOCH + Duration::from_secs(T0)));
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
    // At 120 columns with the side panel hidden the tree is at most 30
    // wide (with it, the tree shares its 38 columns).
    app.set_side_shown(Some(false));
    let narrow = screen(&mut app, 120, 40);
    let row = tree_row(&narrow);
    assert!(
        !row.contains(long) && row.contains("refactor-the-parse…"),
        "cut with an ellipsis: {narrow}"
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
    assert_eq!(app.tab(), Tab::Events);
    let text = screen(&mut app, 200, 50);
    let (x, y) = at(&text, "Cha ").expect("the Changes tab's title");
    click(&mut app, x + 2, y);
    assert_eq!(app.tab(), Tab::Changes);
}

#[test]
fn a_window_below_80x24_says_it_is_too_small() {
    let mut app = populated();
    let text = screen(&mut app, 79, 23);
    assert!(text.contains("at least 80×24"), "{text}");
    snap!("too_small_79x23", text);
}

/// The side panel shows wherever the agent's pane keeps 80 columns beside
/// it: right of the panes at 200, under the tree at 120 (the panes keep
/// 80), not at 80 (Tab shows it there); `p` hides it and shows it again.
#[test]
fn the_side_panel_shows_where_the_agents_pane_keeps_80_columns_and_p_toggles_it() {
    use crossterm::event::{Event as Input, KeyCode, KeyEvent, KeyModifiers};
    let p = || Input::Key(KeyEvent::new(KeyCode::Char('p'), KeyModifiers::NONE));
    let has_panel = |text: &str| text.contains("Record");
    let mut app = populated();
    let small = screen(&mut app, 80, 24);
    assert!(!has_panel(&small), "{small}");
    let wide = screen(&mut app, 200, 50);
    assert!(has_panel(&wide), "{wide}");
    let text = screen(&mut app, 120, 40);
    assert!(has_panel(&text), "{text}");
    let beside = app_pane_width(&app);
    assert_eq!(beside, 80, "the agent keeps 80 columns at 120");
    app.handle(p());
    let text = screen(&mut app, 120, 40);
    assert!(!has_panel(&text), "{text}");
    let alone = app_pane_width(&app);
    assert!(alone >= beside + 8, "the side panel's room went to the pane: {alone}");
    app.handle(p());
    let text = screen(&mut app, 120, 40);
    assert!(has_panel(&text), "{text}");
    assert_eq!(app_pane_width(&app), beside);
}

/// The widest pane's columns as last drawn.
fn app_pane_width(app: &App) -> u16 {
    app.pane_sizes().values().map(|(_, cols)| *cols).max().unwrap_or(0)
}

#[test]
fn a_run_holding_a_prompt_for_the_user_s_draft_is_marked_in_the_tree_and_says_why_in_the_status_line() {
    let mut app = populated();
    let mut runs: Vec<_> = app.runs().to_vec();
    let docs = runs.iter_mut().find(|r| r.name == "fix-tests").unwrap();
    docs.status = ActivityStatus::Idle;
    docs.waiting = vec![agents::api::WaitingPrompt {
        id: "01P".into(),
        text: "run the tests".into(),
        queued_at: at(5),
        why: "held: the input has text the user typed".into(),
        held: true,
        checked_at: Some(at(1)),
    }];
    app.update(Update::Runs(runs));
    let text = screen(&mut app, 120, 40);
    let row = text
        .lines()
        .find(|l| l.starts_with("│") && l.contains("fix-tests"))
        .unwrap();
    assert!(row.contains("✎04:12"), "{row}");
    assert!(
        text.contains("1 prompt waiting, held: the input has text the user typed"),
        "{text}"
    );
}

#[test]
fn the_header_counts_each_way_a_run_ended_as_itself() {
    let mut app = populated();
    let mut runs = app.runs().to_vec();
    runs.push(run("01F", "stopped", RunState::Cancelled, ActivityStatus::Unknown, 50));
    runs.push(run("01G", "slow", RunState::TimedOut, ActivityStatus::Unknown, 50));
    runs.push(run("01H", "no-binary", RunState::Blocked, ActivityStatus::Unknown, 50));
    app.update(Update::Runs(runs));
    let wide = screen(&mut app, 200, 50);
    let header = wide.lines().next().unwrap();
    assert!(
        header.contains("· 1 failed · 1 cancelled · 1 timed out · 1 blocked"),
        "{header}"
    );
    let narrow = screen(&mut app, 80, 24);
    let header = narrow.lines().next().unwrap();
    assert!(header.contains("✗ 1 · ⊘ 1 · ⧗ 1 · ⊗ 1"), "{header}");
}
