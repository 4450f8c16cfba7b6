//! A prompt never lands on the user's draft, against the real binary and
//! the demo agent: a draft typed through `agents attach` holds every prompt
//! that comes — `send`, mail, a task result — untyped, listed with why it
//! waits; once the draft is erased each goes in, once and alone. Typing
//! into a run holds prompts a moment too. An Enter the program dropped is
//! pressed again. The real Claude Code and Codex
//! are tried the same way in their own tests (`clis/claude.rs`,
//! `clis/codex.rs`).

mod common;

use agents::harness::demo::PROMPT;
use common::Home;
use common::pty::Pty;
use serde_json::Value;

/// Ctrl-a d.
const DETACH: &[u8] = &[0x01, b'd'];

fn home() -> Home {
    Home::with_config("[engine]\nquiet_ms = 300\nhold_after_typing_ms = 500\n")
}

fn at_prompt(home: &Home, run: &str) -> bool {
    home.logs(run).lines().last().is_some_and(|l| l == PROMPT.trim_end())
}

/// Attaches, types `keys` and waits for the screen's last line to read
/// `shows`, then detaches.
fn type_through_attach(home: &Home, run: &str, keys: &[u8], shows: &str) {
    let mut attach = Pty::spawn(home, &["attach", run], 30, 100, home.path(), true);
    attach.wait_screen("the run's prompt", |l| {
        l.iter().any(|l| l.starts_with(PROMPT.trim_end()))
    });
    attach.type_bytes(keys);
    attach.wait_screen(shows, |l| {
        l.iter().rev().find(|l| !l.is_empty()).is_some_and(|l| l == shows)
    });
    attach.type_bytes(DETACH);
    assert_eq!(attach.exit_code(), 0, "{}", attach.text());
}

fn waiting(home: &Home, run: &str) -> Vec<Value> {
    home.show(run)["waiting"].as_array().cloned().unwrap_or_default()
}

#[test]
fn prompts_sent_onto_a_half_typed_draft_are_held_until_it_is_erased_then_each_goes_in_once_alone() {
    let home = home();
    let boss = home.start(&["--name", "boss", "demo"]);
    home.wait_until("the demo agent at its prompt", || at_prompt(&home, &boss));
    type_through_attach(&home, &boss, b"half written dra", "> half written dra");

    home.wait_until("the run at rest after the user's typing", || {
        common::real_cli::at_rest_for(&home, &boss, 1000)
    });
    // `send`: held, said so, the prompt's id given.
    let sent = home.ok(&["send", "boss", "QUEUED-ONE"]);
    assert!(
        sent.starts_with("held: the input has text the user typed (prompt "),
        "{sent}"
    );
    // Mail, and a child's end told as a task result, wait behind it.
    home.ok(&["mail", "send", "boss", "MAIL-ONE"]);
    let child = home.start(&["--parent", "boss", "--name", "lint", "cmd", "--", "true"]);
    home.wait_end(&child);
    home.wait_until("three prompts wait", || waiting(&home, &boss).len() == 3);
    let first = &waiting(&home, &boss)[0];
    assert_eq!(first["text"], "QUEUED-ONE");
    assert_eq!(first["held"], true);
    assert_eq!(first["why"], "held: the input has text the user typed");
    let kinds = home.event_kinds(&boss);
    assert!(kinds.iter().any(|k| k == "PROMPT_HELD"), "{kinds:?}");

    // Looked at again, seconds later, by then past the typing window: the
    // draft still holds them, untouched.
    let since = first["checked_at"].as_str().unwrap().to_string();
    home.wait_until("the supervisor looked again, two seconds on", || {
        let checked = waiting(&home, &boss)[0]["checked_at"].as_str().map(str::to_string);
        checked.is_some_and(|c| elapsed_ms(&since, &c) >= 2000)
    });
    assert_eq!(waiting(&home, &boss).len(), 3);
    assert_eq!(home.logs(&boss).lines().last(), Some("> half written dra"));
    let human = home.ok(&["show", "boss"]);
    assert!(
        human.contains("\"QUEUED-ONE\": held: the input has text the user typed"),
        "{human}"
    );

    // Erased (Ctrl-U, the line's kill key): each goes in, once and alone.
    type_through_attach(&home, &boss, b"\x15", ">");
    home.wait_until("all three answered", || {
        let logs = home.logs(&boss);
        logs.contains("you said \"QUEUED-ONE\"")
            && logs.contains("MAIL-ONE\"")
            && logs.contains("you said \"[task result] lint succeeded")
    });
    let logs = home.logs(&boss);
    assert_eq!(logs.matches("you said \"QUEUED-ONE\"").count(), 1, "{logs}");
    assert_eq!(logs.matches("MAIL-ONE\"").count(), 1, "{logs}");
    assert!(!logs.contains("draQUEUED") && !logs.contains("dra["), "{logs}");
    home.wait_until("nothing waits", || waiting(&home, &boss).is_empty());
}

#[test]
fn a_prompt_waits_a_moment_after_the_user_types_into_the_run() {
    let home = Home::with_config("[engine]\nquiet_ms = 300\nhold_after_typing_ms = 60000\n");
    let run = home.start(&["--name", "typist", "demo"]);
    home.wait_until("the demo agent at its prompt", || at_prompt(&home, &run));
    // A line typed and sent by the user: the input is empty again, but they
    // were typing a moment ago.
    type_through_attach(&home, &run, b"mine\r", ">");
    home.wait_until("the agent answered the user", || {
        home.logs(&run).contains("you said \"mine\"") && common::real_cli::at_rest_for(&home, &run, 1000)
    });
    let sent = home.ok(&["send", "typist", "QUEUED-TWO"]);
    assert!(
        sent.starts_with("held: the user typed into the run in the last 60 s (prompt "),
        "{sent}"
    );
    // Delivered on purpose, now: typed as things stand.
    let id = waiting(&home, &run)[0]["id"].as_str().unwrap().to_string();
    home.ok(&["prompts", "send", "typist", &id]);
    home.wait_until("the prompt went in", || {
        home.logs(&run).contains("you said \"QUEUED-TWO\"")
    });
    home.wait_until("nothing waits", || waiting(&home, &run).is_empty());
    // `explain` says what guards the draft: the demo's input line, or for
    // a command with no rule, the typing window alone.
    let explained = home.ok(&["explain", "typist"]);
    assert!(
        explained.contains("prompts     held while demo's input line has text"),
        "{explained}"
    );
    let plain = home.start(&["--name", "plain", "cmd", "--", "sleep", "600"]);
    home.wait_until("the command runs", || home.state(&plain) == "running");
    let explained = home.ok(&["explain", "plain"]);
    assert!(
        explained.contains("no input-line rule for cmd: held only while a key was typed into it in the last 60 s"),
        "{explained}"
    );
}

/// Milliseconds from one RFC 3339 time to another.
fn elapsed_ms(from: &str, to: &str) -> i64 {
    let at = |t: &str| {
        humantime::parse_rfc3339(t)
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64
    };
    at(to) - at(from)
}

/// A program that drops the first Enter typed into it, as a CLI still
/// settling in may (Gemini CLI did, on a busy machine): its `> ` line
/// keeps the text. Keys are read one at a time, the terminal raw.
const DROPS_AN_ENTER: &str = r#"#!/bin/sh
stty raw -echo
cr=$(printf '\r')
dropped=no
line=""
printf '> '
while :; do
  c=$(dd bs=1 count=1 2>/dev/null)
  [ -z "$c" ] && continue
  if [ "$c" = "$cr" ]; then
    if [ "$dropped" = no ]; then dropped=yes; continue; fi
    printf '\r\ngot: %s\r\n> ' "$line"
    line=""
  else
    printf '%s' "$c"
    line="$line$c"
  fi
done
"#;

/// A prompt whose Enter the program dropped stays in its input line on a
/// still screen; the supervisor presses Enter again, and the prompt goes
/// in once.
#[test]
fn a_prompt_whose_enter_was_dropped_is_entered_again() {
    let bin = tempfile::tempdir().unwrap();
    let script = common::executable(bin.path(), "dropper", DROPS_AN_ENTER);
    let config = format!(
        "[engine]\nquiet_ms = 300\n\n[harnesses.dropper]\nbinary = \"{}\"\nversion = false\n",
        script.display()
    );
    let home = Home::with_config(&config);
    home.screen_rules("dropper", "[input]\nmarker = \">\"\nat_cursor = true\n");
    let run = home.start(&["--name", "dropper", "dropper"]);
    home.wait_until("its input line", || home.logs(&run).trim_end() == ">");
    home.ok(&["send", "dropper", "hello there"]);
    home.wait_until("the prompt went in", || home.logs(&run).contains("got: hello there"));
    home.ok(&["send", "dropper", "and again"]);
    home.wait_until("the next one too", || home.logs(&run).contains("got: and again"));
    let logs = home.logs(&run);
    let got: Vec<&str> = logs.lines().filter(|l| l.starts_with("got:")).collect();
    assert_eq!(
        got,
        ["got: hello there", "got: and again"],
        "each prompt entered once:\n{logs}"
    );
}
