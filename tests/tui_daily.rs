//! What a user trying the TUI at 80×24, 120×40 and 200×50 found wrong in
//! daily use, each drawn or keyed as they met it: the help cut, the Changes
//! tab's keys cut (`tui_changes.rs`'s snapshots), the delete question's
//! keys, Esc on a kept filter, a routine's runs under it and a far fire's
//! date, copy mode from a scrolled-back pane, the README's tab names.

mod common;

use std::time::{Duration, UNIX_EPOCH};

use common::app::{SIZES, T0, populated, run};
use common::tui::screen;

use agents::api::{ActivityStatus, RoutineRecord, RunState};
use agents::tui::app::{App, Overlay, Update};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

fn press(app: &mut App, code: KeyCode) {
    app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

/// Selects the run named `name` with `j`.
fn select(app: &mut App, name: &str) {
    press(app, KeyCode::Char('g'));
    for _ in 0..20 {
        if app.selected_run().is_some_and(|r| r.name == name) {
            return;
        }
        press(app, KeyCode::Char('j'));
    }
    panic!("{name} not in the tree");
}

/// The keys that answer, in the box and the status line (not NORMAL's
/// hints, which no longer apply), however many runs the question names.
#[test]
fn the_delete_question_says_which_key_deletes_at_every_size() {
    for (w, h) in SIZES {
        let mut app = populated();
        select(&mut app, "lint");
        press(&mut app, KeyCode::Char('D'));
        assert!(matches!(app.overlay(), Some(Overlay::ConfirmDelete { .. })));
        let text = screen(&mut app, w, h);
        assert!(text.contains("Delete lint?"), "{text}");
        let status = text.lines().last().unwrap_or_default();
        assert!(status.contains("y deletes"), "{w}x{h}: {text}");
        assert_eq!(text.matches("y deletes").count(), 2, "{w}x{h}: {text}");
    }
    let ended = |i: usize| {
        let name = format!("a-long-named-ended-run-number-{i}");
        run(
            &format!("01X{i}"),
            &name,
            RunState::Succeeded,
            ActivityStatus::Unknown,
            60,
        )
    };
    let mut app = App::new();
    app.set_no_color(true);
    app.update(Update::Runs((0..8).map(ended).collect()));
    for _ in 0..8 {
        press(&mut app, KeyCode::Char(' '));
        press(&mut app, KeyCode::Char('j'));
    }
    press(&mut app, KeyCode::Char('D'));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains("more? Their records"), "{text}");
    assert_eq!(text.matches("y deletes").count(), 2, "{text}");
}

#[test]
fn esc_in_normal_clears_a_kept_filter() {
    let mut app = populated();
    press(&mut app, KeyCode::Char('/'));
    typed(&mut app, "lint");
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.filter(), "lint");
    let text = screen(&mut app, 120, 40);
    assert!(!text.contains("fix-tests"), "{text}");
    assert!(text.contains("Esc clears the filter"), "{text}");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.filter(), "");
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("fix-tests"), "every run again: {text}");
}

fn routine(name: &str, next: Option<String>) -> RoutineRecord {
    RoutineRecord {
        name: name.into(),
        schedule: "0 4 1 * *".into(),
        timezone: "local".into(),
        harness: "claude".into(),
        host: "local".into(),
        overlap: "skip".into(),
        catch_up: "none".into(),
        enabled: true,
        paused: false,
        next_fire: next,
        queued: 0,
        last: None,
    }
}

#[test]
fn a_routine_fire_more_than_six_days_off_shows_its_date() {
    let at = |secs: u64| UNIX_EPOCH + Duration::from_secs(T0 + secs);
    let far = at(33 * 86_400);
    let near = at(3 * 86_400);
    let rfc = |t| humantime::format_rfc3339_millis(t).to_string();
    let mut app = populated();
    app.update(Update::Routines(vec![
        routine("monthly", Some(rfc(far))),
        routine("soon", Some(rfc(near))),
    ]));
    let text = screen(&mut app, 120, 40);
    let row = |name: &str| text.lines().find(|l| l.contains(name)).unwrap_or_default().to_string();
    let far: chrono::DateTime<chrono::Local> = far.into();
    let near: chrono::DateTime<chrono::Local> = near.into();
    assert!(
        row("monthly").contains(&far.format("%-d %b %H:%M").to_string()),
        "{text}"
    );
    assert!(row("soon").contains(&near.format("%a %H:%M").to_string()), "{text}");
}

#[test]
fn a_routines_runs_and_skipped_fires_are_under_its_row() {
    let mut app = populated();
    let mut runs = app.runs().to_vec();
    let fired = |id: &str, name: &str, state: RunState| {
        let mut r = run(id, name, state, ActivityStatus::Unknown, 600);
        r.routine = Some("nightly".into());
        r
    };
    // Ids minted before the others': they would sort first among the host's.
    runs.push(fired("00AAAAAAAAAAAAAAAAAAAAAAAA", "n-ran", RunState::Succeeded));
    runs.push(fired("00BBBBBBBBBBBBBBBBBBBBBBBB", "n-skipped", RunState::Skipped));
    app.update(Update::Runs(runs));
    app.update(Update::Routines(vec![
        routine("nightly", None),
        routine("weekly", None),
    ]));
    for (w, h) in SIZES {
        let text = screen(&mut app, w, h);
        let row = |what: &str| text.lines().position(|l| l.contains(what)).expect(&text);
        assert!(row("▾ local") < row("● fix-tests"), "{text}");
        assert!(row("broken") < row("▾ routines"), "{text}");
        assert!(row("▾ routines") < row("◷  nightly"), "{text}");
        assert_eq!(row("n-ran"), row("◷  nightly") + 1, "{text}");
        assert_eq!(row("n-skipped"), row("◷  nightly") + 2, "{text}");
        assert_eq!(row("◷  weekly"), row("◷  nightly") + 3, "{text}");
        assert!(text.contains(" ├✓ n-ran") && text.contains(" └↷ n-skipped"), "{text}");
    }
    // Runs, so selected as any other.
    select(&mut app, "n-skipped");
}

#[test]
fn copy_mode_starts_where_the_pane_was_scrolled_back_to() {
    let mut app = App::new();
    app.set_no_color(true);
    app.update(Update::Runs(vec![run(
        "01A",
        "alpha",
        RunState::Running,
        ActivityStatus::Working,
        60,
    )]));
    let text: String = (0..100).map(|i| format!("line {i}\r\n")).collect();
    let mut term = agents::term::Terminal::new(20, 60);
    term.keep_scrolled(200);
    let mut watch = agents::protocol::screen::ScreenWatch::new();
    // The rows that scroll off come with the updates after the first.
    for (bytes, offset) in [(&b"$ "[..], 2), (text.as_bytes(), 2 + text.len() as u64)] {
        term.feed(bytes);
        term.refill_scrolled(200);
        let update = watch.next(&term, offset).expect("an update");
        app.update(Update::Screen {
            run: "01A".into(),
            update: Box::new(update),
        });
    }
    screen(&mut app, 80, 24);
    for _ in 0..3 {
        press(&mut app, KeyCode::PageUp);
    }
    let numbers = |text: &str| -> Vec<u32> {
        text.split("line ")
            .skip(1)
            .filter_map(|s| s.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
            .collect()
    };
    let scrolled = numbers(&screen(&mut app, 80, 24));
    assert!(
        !scrolled.is_empty() && !scrolled.contains(&99),
        "scrolled back: {scrolled:?}"
    );
    press(&mut app, KeyCode::Char('v'));
    assert!(app.copy().is_some());
    let copying = numbers(&screen(&mut app, 80, 24));
    for n in &scrolled {
        assert!(copying.contains(n), "line {n} still shown: {copying:?}");
    }
    assert!(!copying.contains(&99), "not the live screen: {copying:?}");
}

#[test]
fn the_readme_names_the_side_panels_tabs_as_the_tui_does() {
    use agents::tui::app::Tab;
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let names: Vec<&str> = Tab::ALL.iter().map(|t| t.title()).collect();
    let said = format!("{} and {}", names[..names.len() - 1].join(", "), names[names.len() - 1]);
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(readme.contains(&said), "README names the tabs: {said}");
}

/// Every entry of the help whole at every size: beside the keys where
/// they fit, under them and scrolled to where not.
#[test]
fn the_help_shows_every_entry_whole_at_every_size() {
    let entries = [
        "interrupted: supervisor and agent gone",
        "lost: supervisor gone, agent may live",
        "skipped: a routine's fire did not run",
        "marked: a prompt sent goes to each",
        "Changes: hunks, comment on one, merge (asks)",
        "filter runs / quit (runs keep going)",
        "move in the run tree; first, last",
    ];
    for (w, h) in SIZES {
        let mut app = populated();
        press(&mut app, KeyCode::Char('?'));
        let mut seen = screen(&mut app, w, h);
        for _ in 0..40 {
            press(&mut app, KeyCode::Char('j'));
            seen.push_str(&screen(&mut app, w, h));
        }
        for entry in entries {
            assert!(seen.contains(entry), "{w}x{h}: {entry:?} in {seen}");
        }
        assert!(app.overlay().is_some(), "j scrolls, it does not close");
    }
}

/// `n` starts on the first agent installed here (the demo while none is,
/// or before the look through PATH has answered) and says of each agent
/// whether it is installed.
#[test]
fn the_new_run_form_starts_on_an_installed_agent_and_says_which_are() {
    let harnesses = agents::tui::form::harnesses();
    let harness = |app: &App| match app.overlay() {
        Some(Overlay::NewRun(form)) => harnesses[form.harness],
        _ => panic!("the form is open"),
    };
    let mut app = populated();
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(harness(&app), "demo", "nothing known yet");
    // The answer comes while the form is open: it moves there.
    app.update(Update::Installed(vec!["codex".into(), "gemini".into()]));
    assert_eq!(harness(&app), "codex");
    for (w, h) in SIZES {
        let text = screen(&mut app, w, h);
        assert!(text.contains("◂ codex ▸  installed"), "{w}x{h}: {text}");
    }
    press(&mut app, KeyCode::Right);
    assert!(screen(&mut app, 80, 24).contains("◂ gemini ▸  installed"));
    press(&mut app, KeyCode::Right);
    assert!(screen(&mut app, 80, 24).contains("◂ aider ▸  not installed"));
    press(&mut app, KeyCode::Esc);
    // Opened again after: on the first installed at once.
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(harness(&app), "codex");
    press(&mut app, KeyCode::Esc);
    app.update(Update::Installed(vec![]));
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(harness(&app), "demo", "none installed");
}

#[test]
fn installed_agents_are_those_whose_program_is_on_path() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    for (name, mode) in [("claude", 0o755), ("codex", 0o644), ("demo", 0o755)] {
        let path = dir.path().join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let path = dir.path().to_string_lossy().to_string();
    assert_eq!(agents::tui::form::installed_harnesses(Some(&path)), ["claude"]);
}
