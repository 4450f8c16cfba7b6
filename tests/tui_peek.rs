//! Peek and reply (`o`), and one prompt to marked runs (Space, `s`): key
//! sequences through the app (state and what would go to the daemon) and
//! whole-screen snapshots in `snapshots/` at 80×24, 120×40 and 200×50.

mod common;

use common::tui::screen;
use std::time::{Duration, UNIX_EPOCH};

use agents::api::{ActivityStatus, RunRecord, RunState, SendResult};
use agents::tui::app::{App, Command, Mode, Overlay, Update};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

const T0: u64 = 1_795_939_200; // a fixed "now" for durations

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 50)];

fn at(secs_before_now: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_secs(T0 - secs_before_now)).to_string()
}

fn run(id: &str, name: &str, state: RunState, status: ActivityStatus) -> RunRecord {
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
        exit_code: (!state.is_live()).then_some(0),
        signal: None,
        reason: None,
        created_at: at(121),
        started_at: Some(at(120)),
        ended_at: (!state.is_live()).then(|| at(60)),
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

/// The update a run's emulator sends for a screen that printed `bytes`.
fn screen_of(run: &str, bytes: &[u8]) -> Update {
    let mut term = agents::term::Terminal::new(20, 70);
    term.feed(bytes);
    let update = agents::protocol::screen::ScreenWatch::new()
        .next(&term, bytes.len() as u64)
        .expect("a first update");
    Update::Screen {
        run: run.into(),
        update: Box::new(update),
    }
}

/// Thirty numbered lines of output, the last ones on screen, then the prompt.
fn busy_output() -> Vec<u8> {
    let mut out = Vec::new();
    for n in 1..=30 {
        out.extend(format!("\x1b[32mstep {n:02}\x1b[0m compiling crate {n}\r\n").as_bytes());
    }
    out.extend(b"\r\n> ");
    out
}

const QUESTION: &[u8] = b"\xe2\x97\x8f Bash(cargo test --workspace)\r\n Bash command\r\n   cargo test --workspace\r\n \
Do you want to proceed?\r\n \xe2\x9d\xaf 1. Yes\r\n   2. No\r\n Esc to cancel\r\n";

/// alpha working, docs waiting at a permission prompt, lint ended; alpha
/// selected, with its screen.
fn app() -> App {
    let mut app = App::new();
    app.set_now(Some(UNIX_EPOCH + Duration::from_secs(T0)));
    app.set_no_color(true);
    app.set_connected(true);
    app.update(Update::Runs(vec![
        run("01A", "alpha", RunState::Running, ActivityStatus::Working),
        run("01B", "docs", RunState::Running, ActivityStatus::NeedsApproval),
        run("01C", "lint", RunState::Succeeded, ActivityStatus::Unknown),
    ]));
    show(&mut app, "alpha", &busy_output());
    app
}

/// Selects `name` and gives its pane the screen that printed `bytes` (a
/// screen comes to a pane that shows the run).
fn show(app: &mut App, name: &str, bytes: &[u8]) {
    select(app, name);
    let id = app.selected_run().map(|r| r.id.clone()).unwrap();
    app.update(screen_of(&id, bytes));
    app.take_commands();
}

fn select(app: &mut App, name: &str) {
    let at = app
        .rows()
        .iter()
        .position(|r| {
            r.run
                .as_deref()
                .and_then(|id| app.run(id))
                .is_some_and(|r| r.name == name)
        })
        .unwrap_or_else(|| panic!("{name} in the tree"));
    app.set_selected(at);
    app.sync_subscriptions();
}

fn press(app: &mut App, code: KeyCode) {
    app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn sends(commands: &[Command]) -> Vec<(String, String, String)> {
    commands
        .iter()
        .filter_map(|c| match c {
            Command::Send { run, text, prompt_id } => Some((run.clone(), text.clone(), prompt_id.clone())),
            _ => None,
        })
        .collect()
}

/// The peek box's rows (its top border to its bottom one) as drawn.
fn peek_box(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let top = lines
        .iter()
        .position(|l| l.contains("╭ peek · "))
        .unwrap_or_else(|| panic!("no peek box in\n{text}"));
    let left = lines[top].find("╭ peek").unwrap();
    let col = lines[top][..left].chars().count();
    let bottom = (top + 1..lines.len())
        .find(|&y| lines[y].chars().nth(col) == Some('╰'))
        .unwrap_or_else(|| panic!("the peek box has no bottom in\n{text}"));
    let width = lines[top]
        .chars()
        .skip(col)
        .position(|c| c == '╮')
        .expect("the top right corner")
        + 1;
    lines[top..=bottom]
        .iter()
        .map(|l| l.chars().skip(col).take(width).collect::<String>())
        .collect()
}

#[test]
fn peek_shows_the_last_lines_of_the_selected_run_within_the_screen_at_each_size() {
    for (w, h) in SIZES {
        let mut app = app();
        press(&mut app, KeyCode::Char('o'));
        assert!(matches!(app.overlay(), Some(Overlay::Peek(_))));
        typed(&mut app, "run the tests again");
        let text = screen(&mut app, w, h);
        let peek = peek_box(&text);
        let width = peek[0].chars().count();
        assert!(width <= usize::from(w) - 4, "{w}x{h}: {width} columns\n{text}");
        assert!(peek.len() <= usize::from(h) - 2, "{w}x{h}: {} rows\n{text}", peek.len());
        assert!(peek[0].contains("peek · alpha · running · working"), "{text}");
        // The newest lines, the prompt last, just above what a reply does.
        let inner: Vec<&str> = peek.iter().map(|l| l.trim_matches(['│', ' '])).collect();
        let about = inner
            .iter()
            .position(|l| l.starts_with("reply: sent as a prompt"))
            .expect("what a reply does");
        assert_eq!(inner[about - 1], ">", "{text}");
        assert_eq!(inner[about - 2], "step 30 compiling crate 30", "{text}");
        assert!(inner[about + 1].contains("› run the tests again"), "{text}");
        assert!(!text.contains("step 01 "), "only the last lines: {text}");
        snap!(format!("peek_{w}x{h}"), text);
    }
}

#[test]
fn a_reply_from_peek_is_sent_as_a_prompt_without_focusing_the_pane() {
    let mut app = app();
    press(&mut app, KeyCode::Char('o'));
    typed(&mut app, "and the docs");
    press(&mut app, KeyCode::Enter);
    assert!(app.overlay().is_none(), "Enter sends and closes");
    assert_eq!(app.mode(), Mode::Normal, "the pane is not focused");
    let sent = sends(&app.take_commands());
    assert_eq!(sent.len(), 1, "{sent:?}");
    let (to, text, prompt_id) = sent[0].clone();
    assert_eq!((to.as_str(), text.as_str()), ("01A", "and the docs"));
    assert_eq!(app.message(), Some("sending to alpha…"));

    // The daemon could not take it: the peek box comes back with the reply
    // and the same prompt id, so a retry is never delivered twice.
    app.update(Update::Sent {
        prompt_id: prompt_id.clone(),
        result: Err("daemon unreachable".into()),
    });
    match app.overlay() {
        Some(Overlay::Peek(p)) => assert_eq!((p.text(), &p.prompt_id), ("and the docs".into(), &prompt_id)),
        _ => panic!("the reply must come back"),
    }
    press(&mut app, KeyCode::Enter);
    assert_eq!(sends(&app.take_commands())[0].2, prompt_id);
    app.update(Update::Sent {
        prompt_id: prompt_id.clone(),
        result: Ok(SendResult {
            prompt_id: prompt_id.clone(),
            state: "queued".into(),
            why: None,
        }),
    });
    let said = app.message().map(String::from).unwrap_or_default();
    assert!(
        said.starts_with("prompt queued to alpha (") && said.contains(&prompt_id[..10]),
        "{said}"
    );
    assert_eq!(app.mode(), Mode::Normal);
}

/// A run holding a prompt for the user's draft: the reply line says a
/// reply waits behind it, and why, before it is typed.
#[test]
fn peek_says_a_reply_waits_behind_a_prompt_held_for_the_draft() {
    let mut app = app();
    let mut alpha = run("01A", "alpha", RunState::Running, ActivityStatus::Idle);
    alpha.waiting = vec![agents::api::WaitingPrompt {
        id: "01P".into(),
        text: "run the tests".into(),
        queued_at: at(30),
        why: "held: the input has text the user typed".into(),
        held: true,
        checked_at: Some(at(1)),
    }];
    app.update(Update::Runs(vec![alpha]));
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('o'));
    let text = screen(&mut app, 120, 40);
    let peek = peek_box(&text).join("\n");
    assert!(
        peek.contains("reply: queued behind 1 waiting, held: the input has text the user typed"),
        "{text}"
    );
}

#[test]
fn peek_on_a_run_waiting_at_a_question_shows_it_and_the_reply_answers_it() {
    for (w, h) in [(80, 24), (120, 40)] {
        let mut app = app();
        show(&mut app, "docs", QUESTION);
        press(&mut app, KeyCode::Char('o'));
        let text = screen(&mut app, w, h);
        let peek = peek_box(&text).join("\n");
        assert!(peek.contains("peek · docs · waits for approval"), "{text}");
        assert!(peek.contains("Do you want to proceed?"), "{text}");
        assert!(peek.contains("❯ 1. Yes") && peek.contains("Esc to cancel"), "{text}");
        assert!(peek.contains("Bash(cargo test"), "what it asks about too: {text}");
        assert!(peek.contains("answer: yes picks the first choice"), "{text}");
        snap!(format!("peek_question_{w}x{h}"), text);
    }
    let mut app = app();
    show(&mut app, "docs", QUESTION);
    press(&mut app, KeyCode::Char('o'));
    typed(&mut app, "yes");
    press(&mut app, KeyCode::Enter);
    let commands: Vec<Command> = app
        .take_commands()
        .into_iter()
        .filter(|c| matches!(c, Command::Answer { .. } | Command::Send { .. }))
        .collect();
    assert_eq!(
        commands,
        vec![Command::Answer {
            run: "01B".into(),
            answer: "yes".into()
        }],
        "an answer, not a prompt"
    );
    assert_eq!(app.message(), Some("answered yes to docs"));
    assert!(app.overlay().is_none());
}

#[test]
fn peek_on_an_ended_run_shows_its_last_lines_and_refuses_a_reply() {
    let mut app = app();
    show(&mut app, "lint", b"all checks passed\r\nlint: 0 warnings\r\n");
    press(&mut app, KeyCode::Char('o'));
    let text = screen(&mut app, 80, 24);
    let peek = peek_box(&text).join("\n");
    assert!(peek.contains("peek · lint · succeeded · ended"), "{text}");
    assert!(
        peek.contains("lint: 0 warnings") && peek.contains("lint has ended: no reply"),
        "{text}"
    );
    snap!("peek_ended_80x24", text);
    // Drawn in a pane of another size, its last screen is asked for again
    // at the pane's: that, not a reply.
    app.take_commands();
    typed(&mut app, "hello");
    press(&mut app, KeyCode::Enter);
    assert!(app.take_commands().is_empty(), "nothing sent");
    assert_eq!(app.message(), Some("lint has ended: no reply sent"));
    assert!(matches!(app.overlay(), Some(Overlay::Peek(p)) if p.text().is_empty()));
    press(&mut app, KeyCode::Esc);
    assert!(app.overlay().is_none());
}

#[test]
fn esc_on_a_typed_reply_asks_before_dropping_it() {
    let mut app = app();
    press(&mut app, KeyCode::Char('o'));
    typed(&mut app, "half a thought");
    press(&mut app, KeyCode::Esc);
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("throw the reply away?"), "{text}");
    press(&mut app, KeyCode::Char('n'));
    assert!(matches!(app.overlay(), Some(Overlay::Peek(p)) if p.text() == "half a thought"));
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('y'));
    assert!(app.overlay().is_none());
    assert!(sends(&app.take_commands()).is_empty());
    // An empty box closes at once.
    press(&mut app, KeyCode::Char('o'));
    press(&mut app, KeyCode::Esc);
    assert!(app.overlay().is_none());
}

#[test]
fn a_pasted_reply_stays_on_one_line_and_the_keys_are_in_the_help_and_hints() {
    let mut app = app();
    press(&mut app, KeyCode::Char('o'));
    app.handle(Event::Paste("first\r\nsecond\rthird".into()));
    assert!(matches!(app.overlay(), Some(Overlay::Peek(p)) if p.text() == "first second third"));
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("Enter send without focusing · Esc close"), "{text}");
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('y'));
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("o peek"), "{text}");
    press(&mut app, KeyCode::Char('?'));
    let help = screen(&mut app, 120, 40);
    assert!(help.contains("o  peek and reply without focusing"), "{help}");
    // Configured elsewhere, hints and help follow.
    let keys = std::collections::HashMap::from([("peek".to_string(), "ctrl-o".to_string())]);
    app.set_keymap(agents::tui::keymap::Keymap::from_config(&keys).expect("the keys parse"));
    let help = screen(&mut app, 120, 40);
    assert!(help.contains("Ctrl-o  peek and reply"), "{help}");
}

/// alpha, docs and lint marked with Space, in that order; lint has ended.
fn marked() -> App {
    let mut app = app();
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(app.message(), Some("marked alpha"));
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char(' '));
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char(' '));
    assert_eq!(app.marked(), ["01A", "01B", "01C"]);
    app.take_commands();
    app
}

#[test]
fn marked_runs_show_in_the_tree_and_its_title_at_each_size() {
    for (w, h) in SIZES {
        let mut app = marked();
        let text = screen(&mut app, w, h);
        assert!(text.contains("╭ RUNS · 3 marked "), "{text}");
        for name in ["alpha", "docs", "lint"] {
            let row = text
                .lines()
                .find(|l| {
                    l.split('│')
                        .nth(1)
                        .is_some_and(|tree| tree.contains(&format!(" {name} ")))
                })
                .unwrap_or_default();
            assert!(row.starts_with("│*"), "{name} marked: {row:?}\n{text}");
        }
        assert!(text.contains("3 marked · s sends to each · Esc clears"), "{text}");
        snap!(format!("marks_{w}x{h}"), text);
    }
}

#[test]
fn send_with_runs_marked_gives_each_live_one_the_prompt_with_its_own_id_and_skips_the_ended() {
    let mut app = marked();
    press(&mut app, KeyCode::Char('s'));
    let text = screen(&mut app, 80, 24);
    assert!(text.contains(" send to 2 runs · lint ended, skipped "), "{text}");
    snap!("marks_compose_80x24", text);
    typed(&mut app, "ship it");
    press(&mut app, KeyCode::Enter);
    assert!(app.overlay().is_none());
    let sent = sends(&app.take_commands());
    let to: Vec<(&str, &str)> = sent
        .iter()
        .map(|(run, text, _)| (run.as_str(), text.as_str()))
        .collect();
    assert_eq!(
        to,
        [("01A", "ship it"), ("01B", "ship it")],
        "once each, the ended run skipped"
    );
    assert_ne!(sent[0].2, sent[1].2, "a prompt id each");
    assert_eq!(
        app.message(),
        Some("sending to 2 of 3 runs: alpha …, docs …, lint ended (skipped)")
    );
    for ((_, _, prompt_id), state) in sent.iter().zip(["delivered", "queued"]) {
        app.update(Update::Sent {
            prompt_id: prompt_id.clone(),
            result: Ok(SendResult {
                prompt_id: prompt_id.clone(),
                state: state.into(),
                why: None,
            }),
        });
    }
    let said = "sent to 2 of 3 runs: alpha delivered, docs queued, lint ended (skipped)";
    assert_eq!(app.message(), Some(said));
    assert!(screen(&mut app, 120, 40).contains(said));
    // The marks stay for the next prompt; Esc clears them.
    assert_eq!(app.marked().len(), 3);
    press(&mut app, KeyCode::Esc);
    assert!(app.marked().is_empty());
    assert_eq!(app.message(), Some("3 marks cleared"));
    select(&mut app, "alpha");
    press(&mut app, KeyCode::Char('s'));
    assert!(
        matches!(app.overlay(), Some(Overlay::Compose(c)) if c.targets.is_empty() && c.run == "01A"),
        "unmarked, s is for the selected run alone"
    );
}

#[test]
fn a_failed_send_is_said_for_its_run_and_space_unmarks_and_only_ended_marks_send_nothing() {
    let mut app = marked();
    press(&mut app, KeyCode::Char('s'));
    typed(&mut app, "go");
    press(&mut app, KeyCode::Enter);
    let sent = sends(&app.take_commands());
    app.update(Update::Sent {
        prompt_id: sent[1].2.clone(),
        result: Err("run not found".into()),
    });
    assert_eq!(
        app.message(),
        Some("sending to 2 of 3 runs: alpha …, docs not sent (run not found), lint ended (skipped)")
    );
    // Space on a marked run unmarks it: lint alone stays marked.
    for name in ["alpha", "docs"] {
        select(&mut app, name);
        press(&mut app, KeyCode::Char(' '));
        assert_eq!(app.message(), Some(format!("unmarked {name}").as_str()));
    }
    assert_eq!(app.marked(), ["01C"]);
    app.take_commands();
    press(&mut app, KeyCode::Char('s'));
    assert!(app.overlay().is_none());
    assert_eq!(
        app.message(),
        Some("the marked runs have all ended: nothing to send to")
    );
    assert!(sends(&app.take_commands()).is_empty());
    // A run gone from the list is no longer marked.
    app.update(Update::Runs(vec![run(
        "01A",
        "alpha",
        RunState::Running,
        ActivityStatus::Working,
    )]));
    assert!(app.marked().is_empty());
}

#[test]
fn the_mark_keys_are_configurable_and_in_the_help() {
    let mut app = app();
    press(&mut app, KeyCode::Char('?'));
    let help = screen(&mut app, 80, 24);
    assert!(help.contains("Space / Esc  mark runs for s to send to each"), "{help}");
    assert!(
        help.contains("/ / q  filter runs / quit"),
        "every key still fits at 80x24: {help}"
    );
    let keys = std::collections::HashMap::from([
        ("mark".to_string(), "m".to_string()),
        ("clear_marks".to_string(), "C".to_string()),
    ]);
    app.set_keymap(agents::tui::keymap::Keymap::from_config(&keys).expect("the keys parse"));
    assert!(app.keymap().shadowed.is_empty(), "{:?}", app.keymap().shadowed);
    press(&mut app, KeyCode::Esc);
    press(&mut app, KeyCode::Char('m'));
    assert_eq!(app.marked(), ["01A"]);
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("1 marked · s sends to each · C clears"), "{text}");
    press(&mut app, KeyCode::Esc);
    assert_eq!(app.marked(), ["01A"], "Esc no longer clears");
    app.handle(Event::Key(KeyEvent::new(KeyCode::Char('C'), KeyModifiers::SHIFT)));
    assert!(app.marked().is_empty());
}
