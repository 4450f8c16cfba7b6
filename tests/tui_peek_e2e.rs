//! Peek and reply, and one prompt to marked runs, end to end: the real
//! `agents` TUI in a real PTY against a real daemon and real demo agents.
//! Every wait is on what the screen, the database or a run's log shows,
//! never a fixed sleep.

mod common;

use agents::harness::demo::{APPROVED, BANNER_TITLE, PERMISSION_QUESTION, PROMPT};
use common::Home;
use common::pty::Pty;

const ENTER: &[u8] = b"\r";

fn open(home: &Home) -> Pty {
    Pty::spawn(home, &[], 40, 120, home.config.path(), false)
}

fn shows(lines: &[String], text: &str) -> bool {
    lines.iter().any(|l| l.contains(text))
}

fn wait_text(tui: &mut Pty, text: &str) -> Vec<String> {
    tui.wait_screen(&format!("{text:?}"), |l| shows(l, text))
}

/// The run tree's row for `name`, if the screen shows one.
fn tree_row<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    // The tree is the left column: its rows start with the tree's border.
    lines.iter().map(|l| l.split('│').nth(1).unwrap_or("")).find(|row| {
        row.split_whitespace()
            .any(|w| w.trim_start_matches(['*', '•']).ends_with(name))
    })
}

/// How many times the demo agent said it got `text`, in its log.
fn answers(home: &Home, run: &str, text: &str) -> usize {
    home.logs(run).matches(&format!("you said \"{text}\"")).count()
}

#[test]
fn a_reply_typed_in_peek_reaches_the_run_and_the_pane_is_never_focused() {
    let home = Home::new();
    let id = home.start(&["--name", "echoer", "demo"]);
    let mut tui = open(&home);
    tui.wait_screen("the run's prompt in its pane", |l| {
        tree_row(l, "echoer").is_some() && shows(l, BANNER_TITLE) && shows(l, PROMPT.trim_end())
    });

    tui.type_bytes(b"o");
    wait_text(&mut tui, "╭ peek · echoer · running");
    wait_text(&mut tui, "reply: sent as a prompt");
    tui.type_bytes(b"hello from peek");
    wait_text(&mut tui, "› hello from peek");
    tui.type_bytes(ENTER);
    home.wait_until("the reply is taken as a prompt", || !home.prompts(&id).is_empty());
    assert_eq!(home.prompts(&id), ["hello from peek"]);
    let lines = tui.wait_screen("the prompt's fate in the status line", |l| {
        shows(l, "prompt delivered to echoer (") || shows(l, "prompt queued to echoer (")
    });
    assert!(!shows(&lines, "╭ peek · "), "the box closed: {lines:#?}");
    home.wait_until("the agent answers it", || answers(&home, &id, "hello from peek") == 1);
    let lines = wait_text(&mut tui, "● demo: you said \"hello from peek\"");
    assert!(
        shows(&lines, " NORMAL ") && !shows(&lines, " INSERT "),
        "never focused: {lines:#?}"
    );

    // Still NORMAL: q quits the TUI, it is not typed into the run.
    tui.type_bytes(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());
    assert_eq!(home.prompts(&id), ["hello from peek"], "one prompt, once");
    assert_eq!(home.state(&id), "running");
}

#[test]
fn peek_on_a_run_at_a_permission_prompt_shows_the_question_and_its_reply_answers_it() {
    let home = Home::new();
    let id = home.start(&["--name", "asker", "demo", "--", "--ask"]);
    let mut tui = open(&home);
    tui.wait_screen("the run waiting in the tree", |l| {
        tree_row(l, "asker").is_some_and(|row| row.contains('◉'))
    });
    tui.type_bytes(b"o");
    let lines = wait_text(&mut tui, "╭ peek · asker · waits for approval");
    assert!(shows(&lines, PERMISSION_QUESTION), "{lines:#?}");
    tui.type_bytes(b"yes");
    tui.type_bytes(ENTER);
    wait_text(&mut tui, "answered yes to asker");
    home.wait_until("the agent approved", || home.logs(&id).contains(APPROVED));
    assert!(home.prompts(&id).is_empty(), "an answer, not a prompt");
    tui.type_bytes(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());
}

#[test]
fn a_prompt_sent_with_three_runs_marked_reaches_each_of_them_once() {
    let home = Home::new();
    let names = ["first", "second", "third"];
    let ids: Vec<String> = names.iter().map(|n| home.start(&["--name", n, "demo"])).collect();
    let mut tui = open(&home);
    tui.wait_screen("the three runs in the tree", |l| {
        names.iter().all(|n| tree_row(l, n).is_some()) && shows(l, BANNER_TITLE)
    });
    // The first run is selected: Space marks it, j moves down.
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            tui.type_bytes(b"j");
            wait_text(&mut tui, &format!(" demo · {name} · "));
        }
        tui.type_bytes(b" ");
        let lines = wait_text(&mut tui, &format!("RUNS · {} marked", i + 1));
        assert!(
            tree_row(&lines, name).is_some_and(|row| row.starts_with('*')),
            "{name} marked: {lines:#?}"
        );
    }
    tui.type_bytes(b"s");
    wait_text(&mut tui, "╭ send to 3 runs ");
    tui.type_bytes(b"hello all");
    wait_text(&mut tui, "hello all");
    tui.type_bytes(ENTER);
    let lines = tui.wait_screen("each run's fate in the status line", |l| {
        shows(l, "sent to 3 runs: first ")
    });
    let status = lines.last().cloned().unwrap_or_default();
    for name in names {
        assert!(
            status.contains(&format!("{name} delivered")) || status.contains(&format!("{name} queued")),
            "{name} in {status:?}"
        );
    }
    for (id, name) in ids.iter().zip(names) {
        home.wait_until(&format!("{name} answers the prompt"), || {
            answers(&home, id, "hello all") == 1
        });
        assert_eq!(home.prompts(id), ["hello all"], "{name} got it once");
    }
    // Esc clears the marks.
    tui.type_bytes(b"\x1b");
    tui.wait_screen("the marks cleared", |l| shows(l, "╭ RUNS ─") && !shows(l, " marked"));
    tui.type_bytes(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());
    for (id, name) in ids.iter().zip(names) {
        assert_eq!(answers(&home, id, "hello all"), 1, "{name} answered once");
    }
}
