//! Key sequences through the app: state and what would be sent to the
//! daemon, with no terminal and no daemon.

mod common;

use agents::api::{ActivityStatus, RunRecord, RunState, SendResult};
use agents::tui::app::{App, Command, Layout, Mode, Overlay, Update};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

fn run(id: &str, name: &str, state: RunState) -> RunRecord {
    RunRecord {
        id: id.into(),
        name: name.into(),
        harness: "demo".into(),
        host: "local".into(),
        cwd: "/tmp".into(),
        command: vec![],
        state,
        status: ActivityStatus::Idle,
        parent_id: None,
        root_id: id.into(),
        detached: false,
        session_id: None,
        pid: None,
        exit_code: None,
        signal: None,
        reason: None,
        created_at: String::new(),
        started_at: None,
        ended_at: None,
        rows: 40,
        cols: 120,
        timeout_secs: None,
        worktree: None,
        output_bytes: 0,
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

fn app_with_runs() -> App {
    let mut app = App::new();
    app.update(Update::Runs(vec![
        run("01A", "alpha", RunState::Running),
        run("01B", "beta", RunState::Running),
        run("01C", "gamma", RunState::Succeeded),
    ]));
    app
}

fn press(app: &mut App, code: KeyCode) {
    app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn ctrl(app: &mut App, c: char) {
    app.handle(Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)));
}

fn typed(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn inputs(commands: &[Command]) -> Vec<u8> {
    commands
        .iter()
        .filter_map(|c| match c {
            Command::Input { bytes, .. } => Some(bytes.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[test]
fn moving_the_selection_subscribes_to_the_selected_run() {
    let mut app = app_with_runs();
    let first = app.take_commands();
    assert!(first.contains(&Command::Subscribe("01A".into())), "{first:?}");
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.selected_run().unwrap().name, "beta");
    let cmds = app.take_commands();
    assert!(cmds.contains(&Command::Subscribe("01B".into())), "{cmds:?}");
    assert!(cmds.contains(&Command::Unsubscribe("01A".into())), "{cmds:?}");
    press(&mut app, KeyCode::Char('k'));
    assert_eq!(app.selected_run().unwrap().name, "alpha");
}

/// One press of the prefix leaves INSERT at once and says so; pressed
/// again right after, it types itself into the run and goes back; any
/// other key after it is a NORMAL key, typed into nothing.
#[test]
fn one_press_of_the_prefix_leaves_insert_and_a_second_types_it() {
    let mut app = app_with_runs();
    press(&mut app, KeyCode::Enter);
    app.take_commands();
    ctrl(&mut app, 'a');
    assert_eq!(app.mode(), Mode::Normal, "one press leaves INSERT");
    assert!(
        app.message().is_some_and(|m| m.contains("Ctrl-a again")),
        "{:?}",
        app.message()
    );
    ctrl(&mut app, 'a');
    assert_eq!(app.mode(), Mode::Insert);
    assert_eq!(inputs(&app.take_commands()), b"\x01");
    // Then a NORMAL key acts as one: j moves the selection, nothing typed.
    ctrl(&mut app, 'a');
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.mode(), Mode::Normal);
    assert_eq!(app.selected_run().unwrap().name, "beta");
    assert_eq!(inputs(&app.take_commands()), b"");
    // `Ctrl-a d`, as in tmux, leaves and does nothing more.
    press(&mut app, KeyCode::Enter);
    ctrl(&mut app, 'a');
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(app.mode(), Mode::Normal);
    assert_eq!(app.selected_run().unwrap().name, "beta");
    assert_eq!(inputs(&app.take_commands()), b"");
}

/// INSERT ends by itself when the focused run ends, with a message.
#[test]
fn insert_ends_with_a_message_when_the_focused_run_ends() {
    let mut app = app_with_runs();
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.mode(), Mode::Insert);
    app.update(Update::Runs(vec![
        run("01A", "alpha", RunState::Succeeded),
        run("01B", "beta", RunState::Running),
        run("01C", "gamma", RunState::Succeeded),
    ]));
    assert_eq!(app.mode(), Mode::Normal);
    assert_eq!(app.message(), Some("alpha succeeded: back to NORMAL"));
}

#[test]
fn insert_mode_types_into_the_run_and_the_prefix_returns_to_normal() {
    let mut app = app_with_runs();
    app.take_commands();
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.mode(), Mode::Insert);
    assert!(!app.only_typed(), "entering INSERT is drawn");
    typed(&mut app, "hi");
    press(&mut app, KeyCode::Up);
    ctrl(&mut app, 'c');
    assert!(
        app.only_typed(),
        "keys typed into the run change nothing on screen: no frame for them"
    );
    // Ctrl-a Ctrl-a sends one literal Ctrl-a.
    ctrl(&mut app, 'a');
    assert!(!app.only_typed(), "the prefix shows NORMAL");
    ctrl(&mut app, 'a');
    assert!(!app.only_typed(), "back in INSERT is drawn");
    assert_eq!(app.mode(), Mode::Insert);
    assert_eq!(inputs(&app.take_commands()), b"hi\x1b[A\x03\x01");
    // `q` in INSERT is just a key for the program.
    press(&mut app, KeyCode::Char('q'));
    assert!(!app.quitting());
    ctrl(&mut app, 'a');
    press(&mut app, KeyCode::Char('d'));
    assert_eq!(app.mode(), Mode::Normal);
    press(&mut app, KeyCode::Char('q'));
    assert!(app.quitting(), "q in NORMAL quits (runs go on)");
}

#[test]
fn a_sent_prompt_keeps_its_draft_until_the_daemon_confirms() {
    let mut app = app_with_runs();
    app.take_commands();
    press(&mut app, KeyCode::Char('s'));
    assert!(matches!(app.overlay(), Some(Overlay::Compose(_))));
    typed(&mut app, "fix it");
    press(&mut app, KeyCode::Enter);
    let cmds = app.take_commands();
    let (prompt_id, text) = cmds
        .iter()
        .find_map(|c| match c {
            Command::Send { prompt_id, text, run } if run == "01A" => Some((prompt_id.clone(), text.clone())),
            _ => None,
        })
        .expect("a send command");
    assert_eq!(text, "fix it");
    // The daemon could not take it: the composer comes back with the draft.
    app.update(Update::Sent {
        prompt_id: prompt_id.clone(),
        result: Err("daemon unreachable".into()),
    });
    match app.overlay() {
        Some(Overlay::Compose(c)) => {
            assert_eq!(c.text(), "fix it");
            assert_eq!(
                c.prompt_id, prompt_id,
                "a retry reuses the id, so it is never delivered twice"
            );
        }
        _ => panic!("the draft must come back"),
    }
    press(&mut app, KeyCode::Enter);
    let retry = app.take_commands();
    assert!(
        retry
            .iter()
            .any(|c| matches!(c, Command::Send { prompt_id: p, .. } if *p == prompt_id))
    );
    app.update(Update::Sent {
        prompt_id,
        result: Ok(SendResult {
            prompt_id: "x".into(),
            state: "queued".into(),
            why: None,
        }),
    });
    assert!(app.overlay().is_none());
    assert!(app.message().unwrap().contains("queued"));
}

#[test]
fn cancel_asks_first_and_force_cancel_says_so() {
    let mut app = app_with_runs();
    app.take_commands();
    press(&mut app, KeyCode::Char('x'));
    press(&mut app, KeyCode::Char('n'));
    assert!(app.take_commands().iter().all(|c| !matches!(c, Command::Cancel { .. })));
    press(&mut app, KeyCode::Char('x'));
    press(&mut app, KeyCode::Char('y'));
    assert!(app.take_commands().contains(&Command::Cancel {
        run: "01A".into(),
        force: false
    }));
    press(&mut app, KeyCode::Char('X'));
    press(&mut app, KeyCode::Char('y'));
    assert!(app.take_commands().contains(&Command::Cancel {
        run: "01A".into(),
        force: true
    }));
    assert_eq!(app.message(), Some("cancelling alpha"));
    // Its end replaces the word that it was being cancelled.
    app.update(Update::Runs(vec![
        run("01A", "alpha", RunState::Cancelled),
        run("01B", "beta", RunState::Running),
    ]));
    assert_eq!(app.message(), Some("alpha: cancelled"));
}

/// The run the form asked to start, if it did.
fn started(app: &mut App) -> Option<Box<agents::api::StartParams>> {
    app.take_commands().into_iter().find_map(|c| match c {
        Command::Start(p) => Some(p),
        _ => None,
    })
}

#[test]
fn the_new_run_form_starts_a_run() {
    let mut app = app_with_runs();
    app.take_commands();
    press(&mut app, KeyCode::Char('n'));
    // harness → host → cwd → name
    press(&mut app, KeyCode::Tab);
    press(&mut app, KeyCode::Tab);
    if let Some(Overlay::NewRun(form)) = app.overlay_mut() {
        form.cwd = "/tmp".into();
    }
    press(&mut app, KeyCode::Tab);
    typed(&mut app, "helper");
    press(&mut app, KeyCode::Enter);
    let start = started(&mut app).expect("a start command");
    assert_eq!(start.spec.harness, "demo");
    assert_eq!(start.spec.name.as_deref(), Some("helper"));
    assert_eq!(start.spec.cwd, "/tmp");
}

/// Ctrl-W takes the word before the cursor, Ctrl-U the whole field.
#[test]
fn the_new_run_form_edits_as_a_shell_line_does() {
    use agents::tui::form::{Field, NewRunForm};
    let mut form = NewRunForm::new();
    form.field = Field::Name;
    for c in "fix the  parser ".chars() {
        form.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
    let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    form.key(ctrl('w'));
    assert_eq!(form.name, "fix the  ");
    form.key(ctrl('w'));
    assert_eq!(form.name, "fix ");
    form.key(ctrl('u'));
    assert_eq!(form.name, "");
}

/// The form's args are split as a shell splits them, and a quote left
/// open is an error shown in the form, which keeps what was typed.
#[test]
fn the_new_run_form_splits_args_as_a_shell_and_keeps_them_on_an_error() {
    let mut app = app_with_runs();
    app.take_commands();
    press(&mut app, KeyCode::Char('n'));
    let set_args = |app: &mut App, args: &str| {
        if let Some(Overlay::NewRun(form)) = app.overlay_mut() {
            form.cwd = "/tmp".into();
            form.args = args.into();
        }
    };
    set_args(&mut app, r#"--think-ms 5 "two  words" it\'s"#);
    press(&mut app, KeyCode::Enter);
    let start = started(&mut app).expect("a start command");
    assert_eq!(start.spec.args, ["--think-ms", "5", "two  words", "it's"]);

    press(&mut app, KeyCode::Char('n'));
    set_args(&mut app, r#"-c "echo a"#);
    press(&mut app, KeyCode::Enter);
    let Some(Overlay::NewRun(form)) = app.overlay() else {
        panic!("the form stays open");
    };
    assert!(
        form.error.as_deref().is_some_and(|e| e.starts_with("args:")),
        "{:?}",
        form.error
    );
    assert_eq!(form.args, r#"-c "echo a"#, "what was typed is kept");
    assert!(started(&mut app).is_none(), "nothing started");
}

fn form(app: &mut App) -> &mut agents::tui::form::NewRunForm {
    match app.overlay_mut() {
        Some(Overlay::NewRun(form)) => form,
        _ => panic!("the form is open"),
    }
}

/// Every option of `agents run` is in the form: the host chosen among the
/// configured ones (a remote one starts in its home), a worktree, a
/// timeout as a duration, variables to pass by name; a bad value is an
/// error in the form, which keeps what was typed.
#[test]
fn the_new_run_form_has_every_option_of_agents_run_and_a_host_chosen_among_the_configured() {
    use agents::tui::form::Field;
    let mut app = app_with_runs();
    let host = |name: &str| agents::api::HostRecord {
        name: name.into(),
        target: format!("user@{name}"),
        command: None,
        shell_line: false,
        remote_bin: "agents".into(),
        remote_home: None,
        created_at: String::new(),
        link: "up".into(),
        since: None,
        latency_ms: None,
        error: None,
        remote_version: None,
        live_runs: 0,
    };
    app.update(Update::Hosts(vec![host("gpu"), host("build")]));
    app.take_commands();
    press(&mut app, KeyCode::Char('n'));
    let go_to = |app: &mut App, field: Field| form(app).field = field;
    go_to(&mut app, Field::Host);
    press(&mut app, KeyCode::Right);
    let f = form(&mut app);
    assert_eq!(
        (f.host(), f.cwd.as_str()),
        ("gpu", ""),
        "a remote run starts in its home"
    );
    assert_eq!(f.value(Field::Cwd), "(its home)");
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Right);
    assert_eq!(form(&mut app).host(), "local");
    assert!(!form(&mut app).cwd.is_empty(), "back home, the cwd is here again");
    press(&mut app, KeyCode::Left);
    go_to(&mut app, Field::Worktree);
    press(&mut app, KeyCode::Char(' '));
    // The box: no → yes → offline, as `--sandbox[=offline]`.
    go_to(&mut app, Field::Sandbox);
    press(&mut app, KeyCode::Right);
    press(&mut app, KeyCode::Right);
    assert_eq!(form(&mut app).value(Field::Sandbox), "◂ offline: and no network ▸");
    go_to(&mut app, Field::Timeout);
    typed(&mut app, "ten minutes");
    go_to(&mut app, Field::Env);
    typed(&mut app, "OPENAI_API_KEY HTTPS_PROXY");
    press(&mut app, KeyCode::Enter);
    let f = form(&mut app);
    assert!(
        f.error.as_deref().is_some_and(|e| e.starts_with("timeout:")),
        "{:?}",
        f.error
    );
    assert_eq!(f.timeout, "ten minutes", "kept");
    go_to(&mut app, Field::Timeout);
    app.handle(Event::Key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)));
    typed(&mut app, "10m");
    go_to(&mut app, Field::Env);
    typed(&mut app, " X=1");
    press(&mut app, KeyCode::Enter);
    let f = form(&mut app);
    assert!(
        f.error
            .as_deref()
            .is_some_and(|e| e.contains("'X=1' is not a variable's name")),
        "{:?}",
        f.error
    );
    for _ in 0..4 {
        press(&mut app, KeyCode::Backspace);
    }
    press(&mut app, KeyCode::Enter);
    let start = started(&mut app).expect("a start command");
    assert_eq!(start.spec.host.as_deref(), Some("build"));
    assert_eq!(start.spec.cwd, "");
    assert!(start.spec.worktree);
    assert_eq!(start.spec.timeout_secs, Some(600));
    assert_eq!(start.spec.pass_env, ["OPENAI_API_KEY", "HTTPS_PROXY"]);
    assert_eq!(start.spec.sandbox, Some(agents::values::sandbox::Sandbox::Offline));
}

#[test]
fn layouts_show_more_panes_and_zoom_shows_one() {
    let mut app = app_with_runs();
    press(&mut app, KeyCode::Char('2'));
    assert_eq!(app.layout(), Layout::Split);
    assert_eq!(app.pane_runs(), ["01A", "01B"]);
    press(&mut app, KeyCode::Char('z'));
    assert_eq!(app.pane_runs(), ["01A"]);
}

/// Every pane can be focused, and each keeps its run while the focus and
/// the selection move: Tab goes tree → each pane → side, h / l from pane
/// to pane; the focused pane's run is the selected one, and choosing
/// another run in the tree puts it in the focused pane only.
#[test]
fn each_pane_can_be_focused_and_keeps_its_run_while_another_is_chosen() {
    use agents::tui::app::Panel;
    let mut app = App::new();
    app.update(Update::Runs(vec![
        run("01A", "alpha", RunState::Running),
        run("01B", "beta", RunState::Running),
        run("01C", "gamma", RunState::Running),
        run("01D", "delta", RunState::Running),
    ]));
    press(&mut app, KeyCode::Char('2'));
    assert_eq!(app.pane_runs(), ["01A", "01B"]);
    press(&mut app, KeyCode::Tab);
    assert_eq!((app.panel(), app.pane_focus()), (Panel::Panes, 0));
    press(&mut app, KeyCode::Tab);
    assert_eq!((app.panel(), app.pane_focus()), (Panel::Panes, 1));
    assert_eq!(
        app.selected_run().unwrap().name,
        "beta",
        "the focused pane's run is selected"
    );
    assert_eq!(app.pane_runs(), ["01A", "01B"], "no pane changed its run");
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.panel(), Panel::Side);
    press(&mut app, KeyCode::Tab);
    assert_eq!(app.panel(), Panel::Tree);

    // h / l: pane to pane, wrapping.
    press(&mut app, KeyCode::Char('l'));
    assert_eq!(
        (app.pane_focus(), app.selected_run().unwrap().name.as_str()),
        (0, "alpha")
    );
    press(&mut app, KeyCode::Char('h'));
    assert_eq!(
        (app.pane_focus(), app.selected_run().unwrap().name.as_str()),
        (1, "beta")
    );

    // The second pane's run is changed from the tree: gamma, then delta,
    // while the first keeps alpha.
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.pane_runs(), ["01A", "01C"]);
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.pane_runs(), ["01A", "01D"]);
    // Selecting a run already in a pane focuses that pane.
    press(&mut app, KeyCode::Char('g'));
    assert_eq!(
        (app.pane_runs(), app.pane_focus()),
        (vec!["01A".to_string(), "01D".into()], 0)
    );

    // One pane: h / l say how to get more.
    press(&mut app, KeyCode::Char('1'));
    press(&mut app, KeyCode::Char('l'));
    assert!(
        app.message().is_some_and(|m| m.starts_with("one pane")),
        "{:?}",
        app.message()
    );
}

/// The wheel scrolls what is under the pointer, not the selected pane.
#[test]
fn the_wheel_scrolls_the_pane_under_the_pointer() {
    use crossterm::event::{MouseEvent, MouseEventKind};
    let mut app = app_with_runs();
    press(&mut app, KeyCode::Char('2'));
    app.update(screen_of("01A", 10, 40, b"a screen"));
    app.update(screen_of("01B", 10, 40, b"b screen"));
    // Each pane asked for what scrolled off before it opened: 30 lines.
    for command in app.take_commands() {
        if let Command::History {
            run, ask, kept_from, ..
        } = command
        {
            let lines = (0..30).map(|i| format!("{run} line {i}")).collect();
            app.update(Update::History {
                run,
                ask,
                kept_from,
                lines,
            });
        }
    }
    // Drawn, so the panes have places: the pointer is over one or the other.
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 30)).unwrap();
    term.draw(|f| agents::tui::view::draw(f, &mut app)).unwrap();
    let column = |app: &App, id: &str| app.pane_rects().iter().find(|(r, _)| r == id).expect("a pane").1[0] + 1;
    let (over_a, over_b) = (column(&app, "01A"), column(&app, "01B"));
    let wheel = |app: &mut App, kind, column| {
        app.handle(Event::Mouse(MouseEvent {
            kind,
            column,
            row: 5,
            modifiers: KeyModifiers::NONE,
        }))
    };
    wheel(&mut app, MouseEventKind::ScrollUp, over_b);
    assert_eq!(app.selected_run().unwrap().name, "alpha");
    assert_eq!((app.screens()["01A"].scroll, app.screens()["01B"].scroll), (0, 3));
    wheel(&mut app, MouseEventKind::ScrollDown, over_b);
    assert_eq!(app.screens()["01B"].scroll, 0);
    wheel(&mut app, MouseEventKind::ScrollUp, over_a);
    assert_eq!(app.screens()["01A"].scroll, 3);
}

#[test]
fn a_run_that_starts_waiting_rings_the_bell_once() {
    let mut app = app_with_runs();
    app.take_commands();
    let mut waiting = run("01A", "alpha", RunState::Running);
    waiting.status = ActivityStatus::NeedsApproval;
    app.update(Update::Runs(vec![
        waiting.clone(),
        run("01B", "beta", RunState::Running),
    ]));
    let bells = |cmds: Vec<Command>| cmds.iter().filter(|c| **c == Command::Terminal(vec![7])).count();
    assert_eq!(bells(app.take_commands()), 1);
    app.update(Update::Runs(vec![waiting, run("01B", "beta", RunState::Running)]));
    assert_eq!(bells(app.take_commands()), 0);
}

#[test]
fn a_lost_daemon_shows_a_banner_and_the_app_keeps_answering_keys() {
    let mut app = app_with_runs();
    app.update(Update::Disconnected("connection refused".into()));
    assert!(app.banner().unwrap().contains("reconnecting"));
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.selected_run().unwrap().name, "beta");
    app.update(Update::Connected);
    assert!(app.banner().is_none());
    assert!(app.take_commands().contains(&Command::Refresh));
}

#[test]
fn copy_mode_selects_and_copies_through_osc_52() {
    let mut app = app_with_runs();
    app.update(screen_of("01A", 5, 20, b"alpha one\r\nbeta two"));
    app.take_commands();
    press(&mut app, KeyCode::Char('v'));
    assert!(app.copy().is_some());
    // The cursor starts on the last line with text: select it whole.
    press(&mut app, KeyCode::Char('V'));
    press(&mut app, KeyCode::Char('k'));
    press(&mut app, KeyCode::Char('y'));
    assert!(app.copy().is_none());
    let osc: Vec<u8> = app
        .take_commands()
        .into_iter()
        .find_map(|c| match c {
            Command::Terminal(bytes) => Some(bytes),
            _ => None,
        })
        .expect("an OSC 52 write");
    // base64("alpha one\nbeta two")
    assert_eq!(osc, b"\x1b]52;c;YWxwaGEgb25lCmJldGEgdHdv\x07");
}

#[test]
fn the_transcript_tab_loads_the_native_transcript_and_shows_it() {
    use ratatui::{Terminal, backend::TestBackend};
    let mut app = app_with_runs();
    app.take_commands();
    press(&mut app, KeyCode::Char(']'));
    assert_eq!(app.tab(), agents::tui::app::Tab::Transcript);
    assert!(app.take_commands().contains(&Command::Transcript("01A".into())));
    let message = |seq: i64, role: &str, text: &str, tools: serde_json::Value| {
        serde_json::from_value::<agents::api::TranscriptMessage>(serde_json::json!({
            "seq": seq, "session_id": "s", "run_id": "01A", "role": role, "text": text,
            "tool_calls": tools, "model": null, "at": null, "uuid": null, "parent_uuid": null,
            "sidechain": false, "agent_id": null, "parent_tool_use_id": null, "source": "f", "offset": 0
        }))
        .unwrap()
    };
    app.update(Update::Transcript {
        run: "01A".into(),
        result: Ok(vec![
            message(1, "user", "fix the parser", serde_json::json!([])),
            message(
                2,
                "assistant",
                "running the tests",
                serde_json::json!([{ "name": "Bash", "input": { "command": "cargo test" } }]),
            ),
        ]),
    });
    let mut term = Terminal::new(TestBackend::new(160, 40)).unwrap();
    term.draw(|f| agents::tui::view::draw(f, &mut app)).unwrap();
    let text: String = term
        .backend()
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol().to_string())
        .collect();
    assert!(text.contains("fix the parser"), "the user's prompt shows");
    assert!(
        text.contains("⏵ Bash(cargo test)"),
        "the tool call is folded to one line"
    );
}

/// The update a run's emulator sends for a screen that printed `bytes`.
fn screen_of(run: impl Into<String>, rows: u16, cols: u16, bytes: &[u8]) -> Update {
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

#[test]
fn scrolling_back_over_a_gap_in_a_panes_history_asks_the_log_for_it() {
    let mut app = app_with_runs();
    let mut term = agents::term::Terminal::new(5, 20);
    term.feed(b"one\r\n");
    let mut watch = agents::protocol::screen::ScreenWatch::new();
    let first = watch.next(&term, 5).unwrap();
    app.update(Update::Screen {
        run: "01A".into(),
        update: Box::new(first),
    });
    app.take_commands();
    // A flood scrolled rows past faster than they were sent.
    term.feed(b"1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n");
    let flooded = watch.next(&term, 17).unwrap();
    assert!(flooded.dropped > 0);
    app.update(Update::Screen {
        run: "01A".into(),
        update: Box::new(flooded),
    });
    app.take_commands();
    press(&mut app, KeyCode::PageUp);
    let asked = app.take_commands();
    assert!(
        asked
            .iter()
            .any(|c| matches!(c, Command::History { run, before: 17, .. } if run == "01A")),
        "{asked:?}"
    );
}

/// Scrolled back, the view stays on its lines while output arrives (and
/// counts what came below); PgUp and PgDn move a page of the pane; a pane
/// with nothing above its screen does not scroll.
#[test]
fn a_scrolled_back_pane_stays_on_its_lines_and_pages_by_its_height() {
    let mut app = app_with_runs();
    let mut term = agents::term::Terminal::new(5, 20);
    term.keep_scrolled(100);
    term.refill_scrolled(100);
    let mut watch = agents::protocol::screen::ScreenWatch::new();
    term.feed(b"only\r\n");
    let first = watch.next(&term, 6).unwrap();
    app.update(Update::Screen {
        run: "01A".into(),
        update: Box::new(first),
    });
    app.panes_laid_out(vec![("01A".into(), 5, 20)]);
    press(&mut app, KeyCode::PageUp);
    assert_eq!(app.screens()["01A"].scroll, 0, "nothing above the screen yet");
    assert!(app.message().is_some());

    let mut offset = 6;
    let mut print = |app: &mut App, from: usize, to: usize| {
        let text: String = (from..to).map(|i| format!("line {i}\r\n")).collect();
        term.feed(text.as_bytes());
        offset += text.len() as u64;
        term.refill_scrolled(100);
        let update = watch.next(&term, offset).unwrap();
        app.update(Update::Screen {
            run: "01A".into(),
            update: Box::new(update),
        });
    };
    print(&mut app, 0, 20);
    press(&mut app, KeyCode::PageUp);
    // A page of a 5-row pane: 3 lines (the banner, and one kept in view).
    assert_eq!(app.screens()["01A"].scroll, 3);
    print(&mut app, 20, 24);
    let screen = &app.screens()["01A"];
    assert_eq!((screen.scroll, screen.unseen), (7, 4), "the view kept its lines");
    for _ in 0..3 {
        press(&mut app, KeyCode::PageDown);
    }
    let screen = &app.screens()["01A"];
    assert_eq!((screen.scroll, screen.unseen), (0, 0), "back at the live screen");
}

/// `r` on a live run asks before it starts another copy (another paid
/// agent); on an ended one it starts again at once.
#[test]
fn rerun_of_a_live_run_asks_first() {
    let mut app = app_with_runs();
    app.take_commands();
    press(&mut app, KeyCode::Char('r'));
    assert!(matches!(app.overlay(), Some(Overlay::ConfirmRerun { .. })));
    assert!(!app.take_commands().iter().any(|c| matches!(c, Command::Rerun(_))));
    press(&mut app, KeyCode::Char('n'));
    assert!(app.overlay().is_none());
    assert!(!app.take_commands().iter().any(|c| matches!(c, Command::Rerun(_))));
    press(&mut app, KeyCode::Char('r'));
    press(&mut app, KeyCode::Char('y'));
    assert!(app.take_commands().contains(&Command::Rerun("01A".into())));
    // gamma has ended: again at once.
    press(&mut app, KeyCode::Char('G'));
    assert_eq!(app.selected_run().unwrap().name, "gamma");
    press(&mut app, KeyCode::Char('r'));
    assert!(app.overlay().is_none());
    assert!(app.take_commands().contains(&Command::Rerun("01C".into())));
}

/// `r` on a live run that is in a conversation offers to queue a resume
/// of it behind the run (#35 §6), not another copy; `y` queues it.
#[test]
fn rerun_of_a_live_run_in_a_conversation_offers_to_queue_its_resume() {
    let mut talking = run("01A", "alpha", RunState::Running);
    talking.session_id = Some("S-1".into());
    let mut app = App::new();
    app.update(Update::Runs(vec![talking]));
    app.take_commands();
    press(&mut app, KeyCode::Char('r'));
    assert!(matches!(app.overlay(), Some(Overlay::ConfirmRerun { session: Some(s), .. }) if s == "S-1"));
    press(&mut app, KeyCode::Char('y'));
    let commands = app.take_commands();
    assert!(
        commands.contains(&Command::Resume {
            session: "S-1".into(),
            queue: true
        }),
        "{commands:?}"
    );
    assert!(!commands.iter().any(|c| matches!(c, Command::Rerun(_))));
}

/// The header counts a pending run (a resume queued behind its run) as
/// pending, never as idle.
#[test]
fn the_header_counts_a_pending_run_as_pending_not_idle() {
    let mut idle = run("01A", "alpha", RunState::Running);
    idle.status = ActivityStatus::Idle;
    let queued = run("01B", "beta", RunState::Pending);
    let mut app = App::new();
    app.update(Update::Runs(vec![idle, queued]));
    let text = common::tui::screen(&mut app, 160, 30);
    let header = text.lines().next().unwrap_or_default();
    assert!(header.contains("· 1 idle · 1 pending ·"), "{header}");
}

#[test]
fn the_run_selected_when_the_tui_closed_is_selected_when_it_opens() {
    let mut app = App::new();
    app.set_reselect(Some("01B".into()));
    app.update(Update::Runs(vec![
        run("01A", "alpha", RunState::Running),
        run("01B", "beta", RunState::Running),
    ]));
    assert_eq!(app.selected_run().map(|r| r.name.as_str()), Some("beta"));
    // Only at opening: later lists keep what the user selected.
    press(&mut app, KeyCode::Char('k'));
    let chosen = app.selected_run().map(|r| r.id.clone());
    app.update(Update::Runs(vec![
        run("01A", "alpha", RunState::Running),
        run("01B", "beta", RunState::Running),
    ]));
    assert_eq!(app.selected_run().map(|r| r.id.clone()), chosen);
    assert!(app.reselect().is_none());
}

#[test]
fn d_deletes_an_ended_run_and_those_it_owns_after_naming_them_and_never_a_live_one() {
    let mut parent = run("01C", "gamma", RunState::Succeeded);
    parent.root_id = "01C".into();
    let mut owned = run("01D", "delta", RunState::Failed);
    owned.parent_id = Some("01C".into());
    let mut loner = run("01E", "epsilon", RunState::Succeeded);
    loner.parent_id = Some("01C".into());
    loner.detached = true;
    let mut app = App::new();
    app.update(Update::Runs(vec![
        run("01A", "alpha", RunState::Running),
        parent,
        owned,
        loner.clone(),
    ]));
    app.take_commands();

    // A live run: refused with a word, no question.
    assert_eq!(app.selected_run().unwrap().name, "alpha");
    press(&mut app, KeyCode::Char('D'));
    assert!(app.overlay().is_none());
    assert!(
        app.message().is_some_and(|m| m.contains("alpha still live")),
        "{:?}",
        app.message()
    );

    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.selected_run().unwrap().name, "gamma");
    press(&mut app, KeyCode::Char('D'));
    match app.overlay() {
        Some(Overlay::ConfirmDelete { names, .. }) => assert_eq!(names, &["gamma", "delta"]),
        _ => panic!("a question naming the runs that go"),
    }
    // Anything but y keeps them.
    press(&mut app, KeyCode::Enter);
    assert!(app.overlay().is_none());
    assert!(!app.take_commands().iter().any(|c| matches!(c, Command::Remove(_))));
    press(&mut app, KeyCode::Char('D'));
    press(&mut app, KeyCode::Char('y'));
    assert!(app.take_commands().contains(&Command::Remove(vec!["01C".into()])));
    // Gone: the selection stays where it was, on the run in its row, not
    // back at the top of the tree.
    app.update(Update::Runs(vec![run("01A", "alpha", RunState::Running), loner]));
    assert_eq!(app.selected_run().unwrap().name, "epsilon");
}

#[test]
fn shift_enter_in_insert_mode_reaches_the_run_as_a_new_line_in_the_form_its_program_asked_for() {
    let shift_enter = |app: &mut App| app.handle(Event::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::SHIFT)));
    let mut app = app_with_runs();
    // A program that did not turn on the kitty keyboard protocol (Claude
    // Code in a terminal it does not know by name).
    app.update(screen_of("01A", 24, 80, b"> "));
    press(&mut app, KeyCode::Enter);
    assert_eq!(app.mode(), Mode::Insert);
    app.take_commands();
    typed(&mut app, "line1");
    shift_enter(&mut app);
    typed(&mut app, "line2");
    press(&mut app, KeyCode::Enter);
    assert_eq!(inputs(&app.take_commands()), b"line1\x1b\rline2\r");
    // One that did (Codex, once the run's terminal answered `CSI ? u`).
    app.update(screen_of("01A", 24, 80, b"\x1b[>7u> "));
    typed(&mut app, "a");
    shift_enter(&mut app);
    app.handle(Event::Key(KeyEvent::new(KeyCode::Char('j'), KeyModifiers::CONTROL)));
    press(&mut app, KeyCode::Enter);
    assert_eq!(inputs(&app.take_commands()), b"a\x1b[13;2u\x1b[106;5u\r");
}

/// A turn that ended while another run was selected is "done, unseen":
/// marked in the tree and counted in the header until the run is selected.
#[test]
fn a_turn_that_ended_unseen_is_marked_until_the_run_is_selected() {
    let mut app = app_with_runs();
    let mut working = run("01B", "beta", RunState::Running);
    working.status = ActivityStatus::Working;
    let list = |b: RunRecord| {
        vec![
            run("01A", "alpha", RunState::Running),
            b,
            run("01C", "gamma", RunState::Succeeded),
        ]
    };
    app.update(Update::Runs(list(working)));
    assert!(app.notices().done.is_empty());
    app.update(Update::Runs(list(run("01B", "beta", RunState::Running))));
    assert!(
        app.notices().done.contains("01B"),
        "beta's turn ended while alpha was selected"
    );
    let text = common::tui::screen(&mut app, 120, 40);
    assert!(text.contains("1 done, unseen"), "{text}");
    assert!(text.lines().any(|l| l.contains("○◦beta")), "{text}");
    press(&mut app, KeyCode::Char('j'));
    assert_eq!(app.selected_run().map(|r| r.name.as_str()), Some("beta"));
    assert!(app.notices().done.is_empty(), "seen once selected");
}

/// A pane's history asked for before its run's screen took a new size at
/// the same offset is at the old width: its answer is let go, and
/// scrolling back asks again.
#[test]
fn a_history_answer_asked_before_a_resize_is_not_taken() {
    let mut app = app_with_runs();
    let mut term = agents::term::Terminal::new(5, 20);
    term.feed(b"one\r\n");
    let mut watch = agents::protocol::screen::ScreenWatch::new();
    app.update(Update::Screen {
        run: "01A".into(),
        update: Box::new(watch.next(&term, 5).unwrap()),
    });
    let asked = |commands: Vec<Command>| {
        commands.into_iter().find_map(|c| match c {
            Command::History {
                run, ask, kept_from, ..
            } if run == "01A" => Some((ask, kept_from)),
            _ => None,
        })
    };
    let (first, kept_from) = asked(app.take_commands()).expect("its first update asks for the history");
    term.resize(5, 10);
    app.update(Update::Screen {
        run: "01A".into(),
        update: Box::new(watch.next(&term, 5).unwrap()),
    });
    app.take_commands();
    let answer = |ask, line: &str| Update::History {
        run: "01A".into(),
        ask,
        kept_from,
        lines: vec![line.to_string()],
    };
    app.update(answer(first, "at the old width"));
    let history = |app: &App| app.screens()["01A"].mirror.history().cloned().collect::<Vec<_>>();
    assert!(history(&app).is_empty(), "{:?}", history(&app));
    press(&mut app, KeyCode::PageUp);
    let (again, _) = asked(app.take_commands()).expect("scrolling back asks again");
    app.update(answer(again, "at the new width"));
    assert_eq!(history(&app), ["at the new width"]);
}

/// Runs heard changed are read again by id: each answered one takes its
/// place (a new one joins the list), one asked for and not answered is
/// gone, and the others stay as they were.
#[test]
fn runs_read_again_by_id_take_their_place_and_one_not_answered_is_gone() {
    let mut app = app_with_runs();
    let mut beta = run("01B", "beta", RunState::Running);
    beta.status = agents::api::ActivityStatus::Working;
    app.update(Update::RunsChanged {
        asked: vec!["01B".into(), "01C".into(), "01D".into()],
        runs: vec![beta, run("01D", "delta", RunState::Running)],
        subagents: None,
    });
    let listed: Vec<(&str, &str, agents::api::ActivityStatus)> = app
        .runs()
        .iter()
        .map(|r| (r.id.as_str(), r.name.as_str(), r.status))
        .collect();
    let idle = run("01A", "alpha", RunState::Running).status;
    assert_eq!(
        listed,
        [
            ("01A", "alpha", idle),
            ("01B", "beta", agents::api::ActivityStatus::Working),
            ("01D", "delta", idle)
        ]
    );
}
