//! Renaming from the TUI (`R`) and the filter finding a run by a name it
//! wore: keys through the app, the command it would send, the box it draws.

mod common;

use agents::api::{ActivityStatus, RunState};
use agents::tui::app::{App, Command, Overlay, Update};
use common::app::run;
use common::tui::screen;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

fn app_with_runs() -> App {
    let mut app = App::new();
    let mut renamed = run("01B", "askperm-x", RunState::Running, ActivityStatus::Idle, 20);
    renamed.former_names = vec!["claude-1".into()];
    app.update(Update::Runs(vec![
        run("01A", "alpha", RunState::Running, ActivityStatus::Working, 30),
        renamed,
    ]));
    app.take_commands();
    app
}

fn press(app: &mut App, code: KeyCode) {
    app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// The renames among commands (a drawn pane also asks for its size).
fn renames(commands: Vec<Command>) -> Vec<Command> {
    commands
        .into_iter()
        .filter(|c| matches!(c, Command::Rename { .. }))
        .collect()
}

#[test]
fn capital_r_opens_a_box_with_the_name_and_enter_asks_for_the_new_one() {
    let mut app = app_with_runs();
    press(&mut app, KeyCode::Char('R'));
    assert!(matches!(app.overlay(), Some(Overlay::Rename(_))), "R opens the box");
    let drawn = screen(&mut app, 120, 40);
    assert!(drawn.contains("rename alpha"), "{drawn}");
    assert!(drawn.contains("'alpha' keeps finding it"), "{drawn}");

    for _ in 0.."alpha".len() {
        press(&mut app, KeyCode::Backspace);
    }
    typed(&mut app, "cc1");
    press(&mut app, KeyCode::Enter);
    assert!(app.overlay().is_none());
    assert_eq!(
        renames(app.take_commands()),
        [Command::Rename {
            run: "01A".into(),
            name: "cc1".into()
        }]
    );
    assert_eq!(app.message(), Some("renaming alpha → cc1…"));

    // Esc, or Enter on the same name, asks nothing.
    press(&mut app, KeyCode::Char('R'));
    press(&mut app, KeyCode::Enter);
    press(&mut app, KeyCode::Char('R'));
    typed(&mut app, "-2");
    press(&mut app, KeyCode::Esc);
    assert!(app.overlay().is_none());
    assert!(renames(app.take_commands()).is_empty());

    // The daemon's refusal is said.
    app.update(Update::Failed(
        "not renamed: the live run 01B is named 'cc1' already".into(),
    ));
    assert!(app.message().is_some_and(|m| m.contains("not renamed")));
}

#[test]
fn the_filter_finds_a_run_by_a_name_it_wore() {
    let mut app = app_with_runs();
    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "claude-1");
    press(&mut app, KeyCode::Enter);
    let shown: Vec<String> = app
        .rows()
        .iter()
        .filter(|r| r.subagent.is_none())
        .filter_map(|r| r.run.as_ref())
        .filter_map(|id| app.run(id).map(|r| r.name.clone()))
        .collect();
    assert_eq!(shown, ["askperm-x"]);
}

#[test]
fn help_names_the_rename_key() {
    let mut app = app_with_runs();
    press(&mut app, KeyCode::Char('?'));
    let help = screen(&mut app, 120, 40);
    assert!(help.contains("R  rename (the old name still finds it)"), "{help}");
}
