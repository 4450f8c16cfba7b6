//! The TUI end to end: the real `agents` binary with no verb, in a real PTY,
//! against a real daemon in a private `AGENTS_HOME`. What the user sees is
//! checked by feeding the PTY's bytes to our own emulator, as their terminal
//! would; every wait is on what the screen shows, never a fixed sleep.

mod common;

use std::os::fd::BorrowedFd;
use std::time::Instant;

use agents::harness::demo::{BANNER_TITLE, PROMPT};
use agents::term::Terminal;
use common::{Home, PATIENCE};
use nix::sys::signal::{Signal, kill};
use nix::sys::termios::{LocalFlags, tcgetattr};
use nix::unistd::Pid;

/// Ctrl-a d: back to NORMAL from INSERT.
const BACK_TO_NORMAL: &[u8] = &[0x01, b'd'];
const ENTER: &[u8] = b"\r";
const TAB: &[u8] = b"\t";
/// What crossterm writes to leave the alternate screen.
const LEAVE_ALTERNATE_SCREEN: &[u8] = b"\x1b[?1049l";
/// The top of the help overlay (`?`).
const HELP: &str = "╭ keys ";

/// `agents` (the TUI) in a PTY, read through an emulator.
type Tui = common::pty::Pty;

/// What the TUI tests ask of the shared PTY session beyond reading it.
trait TuiSession {
    /// Opens the TUI on `home` (its `AGENTS_HOME` and config) in a
    /// `cols`×`rows` terminal.
    fn open(home: &Home, rows: u16, cols: u16) -> Tui;
    fn press(&mut self, bytes: &[u8]);
    fn pid(&self) -> Pid;
    fn wait_text(&mut self, text: &str) -> Vec<String>;
    fn wait_pane(&mut self, what: &str, f: impl Fn(&[String]) -> bool) -> Vec<String>;
    fn local_flags(&self) -> LocalFlags;
}

impl TuiSession for Tui {
    fn open(home: &Home, rows: u16, cols: u16) -> Tui {
        // The new-run form's cwd starts there.
        Tui::spawn(home, &[], rows, cols, home.config.path(), false)
    }

    fn press(&mut self, bytes: &[u8]) {
        self.type_bytes(bytes);
    }

    fn pid(&self) -> Pid {
        Pid::from_raw(self.child.process_id().expect("the TUI's pid") as i32)
    }

    /// Reads until the screen shows `text` somewhere.
    fn wait_text(&mut self, text: &str) -> Vec<String> {
        self.wait_screen(&format!("{text:?}"), |l| shows(l, text))
    }

    /// Reads until the focused pane satisfies `f`; returns its lines.
    fn wait_pane(&mut self, what: &str, f: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let pane = focused_pane(&self.term);
            if f(&pane) {
                return pane;
            }
            assert!(
                self.read_more(deadline),
                "the focused pane never showed {what} (before {}); the screen shows:\n{}",
                if self.eof { "end of file" } else { "the timeout" },
                self.term.visible_lines().join("\n")
            );
        }
    }

    /// The terminal's line discipline flags (the TUI's raw mode shows here).
    fn local_flags(&self) -> LocalFlags {
        let fd = self.master.as_raw_fd().expect("the PTY master's fd");
        // SAFETY: the fd belongs to `self.master`, which outlives this borrow.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        tcgetattr(fd).expect("read the terminal's modes").local_flags
    }
}

fn shows(lines: &[String], text: &str) -> bool {
    lines.iter().any(|l| l.contains(text))
}

/// The run tree's row for `name`, if the screen shows one.
fn tree_row<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    // The tree is the left column: its rows start with the tree's border.
    lines
        .iter()
        .map(|l| l.split('│').nth(1).unwrap_or(""))
        .find(|row| row.split_whitespace().any(|w| w == name))
}

/// The text inside the focused pane (the one with the thick border), row by
/// row, trailing spaces trimmed; empty if no pane is focused.
fn focused_pane(term: &Terminal) -> Vec<String> {
    let (rows, cols) = term.size();
    let grid: Vec<Vec<agents::protocol::screen::Cell>> = (0..rows)
        .map(|r| {
            let mut row = Vec::new();
            term.row_cells(r, &mut row);
            row
        })
        .collect();
    let at = |r: u16, c: u16| grid[usize::from(r)][usize::from(c)].text();
    // An empty cell reads as a space, a wide character's second cell as nothing.
    let text = |r: u16, c: u16| {
        let cell = &grid[usize::from(r)][usize::from(c)];
        match cell.glyph {
            agents::protocol::screen::Glyph::Continuation => "",
            agents::protocol::screen::Glyph::Blank => " ",
            _ => cell.text(),
        }
    };
    let Some((top, left)) = (0..rows).find_map(|r| (0..cols).find(|&c| at(r, c) == "┏").map(|c| (r, c))) else {
        return Vec::new();
    };
    let Some(right) = (left + 1..cols).find(|&c| at(top, c) == "┓") else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for r in top + 1..rows {
        if at(r, left) != "┃" {
            break;
        }
        let mut line: String = (left + 1..right).map(|c| text(r, c)).collect();
        line.truncate(line.trim_end().len());
        lines.push(line);
    }
    lines
}

/// The demo agent answered `said` and shows its prompt again: settled.
fn answered(pane: &[String], said: &str) -> bool {
    let answer = format!("● demo: you said \"{said}\"");
    let at = pane.iter().position(|l| l.contains(&answer));
    at.is_some_and(|at| pane[at + 1..].iter().any(|l| l.starts_with(PROMPT.trim_end())))
}

/// The pane's lines from the one where `typed` was typed at the prompt,
/// without trailing blank lines.
fn since_typed<'a>(pane: &'a [String], typed: &str) -> &'a [String] {
    let line = format!("{PROMPT}{typed}");
    let Some(from) = pane.iter().position(|l| *l == line) else {
        return &[];
    };
    let to = pane.iter().rposition(|l| !l.is_empty()).map_or(from, |i| i + 1);
    &pane[from..to.max(from)]
}

fn find_last(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

fn run_named(home: &Home, name: &str) -> serde_json::Value {
    let all = home.json(&["ls", "--all", "--json"]);
    all.as_array()
        .and_then(|runs| runs.iter().find(|r| r["name"] == name).cloned())
        .unwrap_or_else(|| panic!("no run named {name} in {all}"))
}

#[test]
fn a_run_started_in_the_tui_outlives_it_keeps_its_screen_and_is_cancelled_from_it() {
    let home = Home::new();
    // The TUI starts the daemon itself, as on a first use.
    let mut tui = Tui::open(&home, 40, 120);
    tui.wait_text("no runs yet");
    tui.wait_text("local ●");

    // n: the new-run form, on the first agent installed here (the demo
    // where none is): → back round to the demo; harness → host → cwd → name.
    use agents::tui::form::{harnesses, installed_harnesses};
    let harnesses = harnesses();
    let installed = installed_harnesses(std::env::var("PATH").ok().as_deref());
    let first = installed.first().map_or("demo", String::as_str);
    tui.press(b"n");
    tui.wait_text(" new run ");
    tui.wait_text(&format!("◂ {first} ▸"));
    let at = harnesses.iter().position(|h| *h == first).unwrap_or(0);
    for _ in 0..(harnesses.len() - at) % harnesses.len() {
        tui.press(b"\x1b[C");
    }
    tui.wait_text("◂ demo ▸");
    tui.press(TAB);
    tui.press(TAB);
    tui.press(TAB);
    tui.press(b"greeter");
    tui.wait_screen("the name typed into the form", |l| {
        l.iter().any(|l| l.contains("name greeter"))
    });
    tui.press(ENTER);
    tui.wait_screen("the new run in the tree", |l| tree_row(l, "greeter").is_some());
    tui.wait_pane("the demo agent's banner", |p| shows(p, BANNER_TITLE));

    // Enter: INSERT, keys go to the agent.
    tui.press(ENTER);
    tui.wait_text(" INSERT ");
    tui.press(b"hello\r");
    let pane = tui.wait_pane("the agent's answer and its prompt", |p| answered(p, "hello"));

    // One press of Ctrl-a: NORMAL again, shown at once, so q quits rather
    // than typing a q.
    tui.press(&[0x01]);
    tui.wait_text(" NORMAL ");
    assert!(
        !tui.local_flags().contains(LocalFlags::ICANON),
        "the TUI runs its terminal raw"
    );
    tui.press(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());

    // The terminal is the user's again: the alternate screen is left last,
    // after the final frame, and the modes the TUI turned on are off. Then
    // one line says the run goes on.
    let leave = find_last(&tui.seen, LEAVE_ALTERNATE_SCREEN).expect("the TUI leaves the alternate screen");
    let after = String::from_utf8_lossy(&tui.seen[leave + LEAVE_ALTERNATE_SCREEN.len()..]).into_owned();
    let after = after.strip_prefix("\x1b[?25h").unwrap_or(&after);
    assert_eq!(
        after.trim_end(),
        "1 run still live; `agents` reopens it",
        "only showing the cursor and that line may follow"
    );
    let modes = tui.term.modes();
    assert!(!tui.term.alternate_screen());
    assert!(!modes.has(agents::protocol::screen::mode::HIDE_CURSOR));
    assert!(!tui.term.bracketed_paste());
    assert_eq!(modes.mouse, 0, "mouse reporting is off");
    let flags = tui.local_flags();
    assert!(
        flags.contains(LocalFlags::ICANON | LocalFlags::ECHO),
        "raw mode is off again: {flags:?}"
    );

    // Quitting detached: the run goes on.
    let live = home.json(&["ls", "--json"]);
    let run = live
        .as_array()
        .and_then(|runs| runs.iter().find(|r| r["name"] == "greeter"))
        .unwrap_or_else(|| panic!("greeter is not listed as live: {live}"));
    assert_eq!(run["state"], "running", "{run}");
    let id = run["id"].as_str().expect("an id").to_string();

    // Opened again, the TUI shows the run and the same screen.
    let mut again = Tui::open(&home, 40, 120);
    again.wait_screen("the run in the tree", |l| tree_row(l, "greeter").is_some());
    // Compared from the typed line on: the banner was printed while the
    // pane's size was still changing, and where a resize lands between those
    // bytes differs between the run's emulator and the TUI's copy of it.
    let typed = since_typed(&pane, "hello");
    assert!(!typed.is_empty(), "no typed line in {pane:#?}");
    again.wait_pane("the same screen as before quitting", |p| {
        shows(p, BANNER_TITLE) && since_typed(p, "hello") == typed
    });

    // x, then y: cancelled, and the tree says so.
    again.press(b"x");
    again.wait_text("Cancel greeter and the runs it owns?");
    again.press(b"y");
    let lines = again.wait_screen("the run cancelled in the tree", |l| {
        tree_row(l, "greeter").is_some_and(|row| row.contains("cancelled"))
    });
    let row = tree_row(&lines, "greeter").unwrap_or_default();
    assert!(row.contains('⊘'), "the cancelled glyph: {row:?}");
    let record = home.show(&id);
    assert_eq!(record["state"], "cancelled", "{record}");
    again.press(b"q");
    assert_eq!(again.exit_code(), 0, "{}", again.screen());
}

#[test]
fn a_terminal_too_small_says_so_and_the_tui_fills_it_once_it_grows() {
    let home = Home::new();
    let mut tui = Tui::open(&home, 20, 70);
    tui.wait_text("agents needs at least 80×24; this window is 70×20");
    tui.resize(40, 120);
    tui.wait_screen("the whole interface", |l| {
        shows(l, " RUNS ") && shows(l, " NORMAL ") && !shows(l, "needs at least")
    });
    tui.press(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());
}

/// A file where a directory belongs, removed however the test ends (so the
/// temporary home can be cleaned up after a failure too).
struct InTheWay(std::path::PathBuf);

impl Drop for InTheWay {
    fn drop(&mut self) {
        if self.0.is_file() {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

#[test]
fn a_tui_started_where_no_daemon_can_start_says_so_and_connects_once_one_can() {
    let home = Home::new();
    // A file where AGENTS_HOME should be: the daemon cannot make its home.
    std::fs::remove_dir(home.path()).expect("empty temporary home");
    let in_the_way = InTheWay(home.path().to_path_buf());
    std::fs::write(&in_the_way.0, b"not a directory").expect("a file in the way");
    let mut tui = Tui::open(&home, 40, 120);
    tui.wait_text("daemon unreachable");
    tui.wait_text("local ◌");
    // The TUI keeps answering keys meanwhile.
    tui.press(b"?");
    tui.wait_text(HELP);
    tui.press(b"?");
    tui.wait_screen("the help closed", |l| !shows(l, HELP));

    drop(in_the_way);
    home.ok(&["daemon", "start"]);
    tui.wait_screen("the banner gone and the link up", |l| {
        !shows(l, "daemon unreachable") && shows(l, "local ●")
    });
    tui.press(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());
}

#[test]
fn killing_the_daemon_under_the_tui_shows_the_banner_and_the_tui_reconnects_by_itself() {
    let home = Home::new();
    let id = home.start(&["--name", "steady", "demo"]);
    let mut tui = Tui::open(&home, 40, 120);
    tui.wait_screen("the run in the tree", |l| tree_row(l, "steady").is_some());
    tui.wait_pane("the demo agent's prompt", |p| {
        shows(p, BANNER_TITLE) && shows(p, PROMPT.trim_end())
    });
    tui.wait_text("local ●");

    // Kill the daemon while the TUI is stopped, then hold the daemon's lock,
    // so the TUI's own attempts to start one fail until we let go.
    let daemon = home.daemon_pid().expect("the daemon's pid");
    kill(tui.pid(), Signal::SIGSTOP).expect("stop the TUI");
    common::kill9(daemon);
    let mut lock = None;
    home.wait_until("the daemon's lock is free (its last thread has exited)", || {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(home.path().join("daemon.lock"))
            .expect("open daemon.lock");
        lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock).ok();
        lock.is_some()
    });
    kill(tui.pid(), Signal::SIGCONT).expect("continue the TUI");

    tui.wait_text("daemon unreachable");
    tui.wait_text("local ◌");
    // Still answering keys without a daemon.
    tui.press(b"?");
    tui.wait_text(HELP);
    tui.press(b"?");
    tui.wait_screen("the help closed", |l| !shows(l, HELP));

    drop(lock);
    home.ok(&["daemon", "start"]);
    tui.wait_screen("the banner gone and the link up", |l| {
        !shows(l, "daemon unreachable") && shows(l, "local ●")
    });
    // The run was re-adopted and its pane is live again.
    assert_eq!(home.state(&id), "running");
    tui.press(ENTER);
    tui.wait_text(" INSERT ");
    tui.press(b"again\r");
    tui.wait_pane("the agent's answer after the reconnection", |p| answered(p, "again"));
    tui.press(BACK_TO_NORMAL);
    tui.wait_text(" NORMAL ");
    tui.press(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());
    assert_eq!(run_named(&home, "steady")["state"], "running");
}

/// The prompts the daemon took for `run`, oldest first, from its database.
fn prompts_of(home: &Home, run: &str) -> Vec<String> {
    home.prompts(run)
}

#[test]
fn a_paste_into_the_composer_marked_or_not_is_one_prompt_and_esc_asks_before_dropping_a_draft() {
    let home = Home::new();
    let id = home.start(&["--name", "paster", "demo"]);
    let mut tui = Tui::open(&home, 40, 120);
    tui.wait_screen("the run in the tree", |l| tree_row(l, "paster").is_some());

    // A bracketed paste, its lines ended with CR as terminals send them.
    tui.press(b"s");
    tui.wait_text(" send to paster ");
    tui.press(b"\x1b[200~line one\rline two\rline three\x1b[201~");
    let lines = tui.wait_text("line three");
    assert!(
        shows(&lines, "line one") && shows(&lines, "line two"),
        "three lines: {lines:#?}"
    );
    tui.press(ENTER);
    home.wait_until("the pasted prompt is taken", || !prompts_of(&home, &id).is_empty());
    assert_eq!(prompts_of(&home, &id), ["line one\nline two\nline three"]);

    // A paste a terminal sent as keys, in one write: the `i` of "insert"
    // must not switch to INSERT, nor the first line go alone.
    tui.wait_screen("the composer closed", |l| !shows(l, " send to paster "));
    tui.press(b"s");
    tui.wait_text(" send to paster ");
    tui.press(b"alpha\rbeta\rinsert");
    tui.wait_text("insert");
    tui.press(ENTER);
    home.wait_until("the second prompt is taken", || prompts_of(&home, &id).len() == 2);
    assert_eq!(prompts_of(&home, &id)[1], "alpha\nbeta\ninsert");
    tui.wait_text(" NORMAL ");

    // Esc on a draft asks first; any key but y keeps it.
    tui.wait_screen("the composer closed", |l| !shows(l, " send to paster "));
    tui.press(b"s");
    tui.wait_text(" send to paster ");
    tui.press(b"a draft");
    tui.wait_text("a draft");
    tui.press(b"\x1b");
    tui.wait_text("throw the draft away?");
    tui.press(b"n");
    tui.wait_screen("the draft kept", |l| {
        shows(l, "a draft") && !shows(l, "throw the draft away?")
    });
    tui.press(b"\x1b");
    tui.wait_text("throw the draft away?");
    tui.press(b"y");
    tui.wait_screen("the composer closed", |l| !shows(l, " send to paster "));
    assert_eq!(prompts_of(&home, &id).len(), 2, "nothing more was sent");
    tui.press(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());
}

#[test]
fn agents_demo_without_a_terminal_refuses_before_it_starts_anything() {
    let home = Home::new();
    let out = home
        .cmd(&["demo"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("agents demo");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim(), "agents: the TUI needs a terminal; try `agents ls`");
    assert_eq!(
        home.json(&["ls", "--all", "--json"]),
        serde_json::json!([]),
        "no demo run started"
    );
}

#[test]
fn a_notify_command_runs_once_for_each_run_that_starts_waiting_and_the_header_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let said = dir.path().join("notified");
    let home = Home::with_config(&format!(
        "[tui]\nnotify = [\"sh\", \"-c\", \"echo \\\"$1\\\" >> {}\", \"notify\", \"{{name}}\"]\n",
        said.display()
    ));
    let mut tui = Tui::open(&home, 40, 120);
    tui.wait_text("no runs yet");
    // Started while the TUI is open: each one's question is a moment.
    for name in ["asker1", "asker2"] {
        home.start(&["--name", name, "demo", "--", "--ask"]);
    }
    let lines = || std::fs::read_to_string(&said).unwrap_or_default();
    home.wait_until("both runs notified", || {
        lines().lines().any(|l| l == "asker1") && lines().lines().any(|l| l == "asker2")
    });
    tui.wait_text("need you (u)");
    // More lists of the runs come (a third run): no second notice.
    home.start(&["--name", "calm", "demo"]);
    tui.wait_screen("the third run in the tree", |l| tree_row(l, "calm").is_some());
    for name in ["asker1", "asker2"] {
        assert_eq!(
            lines().lines().filter(|l| *l == name).count(),
            1,
            "{name} once: {}",
            lines()
        );
    }
    tui.press(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());
}

#[test]
fn the_keypad_reaches_a_program_that_asked_for_the_application_keypad_as_xterm_sends_it() {
    let home = Home::new();
    // Asks for the application keypad (DECKPAM), then shows the bytes of
    // the next six keys it reads.
    let script = "printf '\\033=keypad-ready\\n'; stty raw -echo; od -An -tx1 -N 6; sleep 60";
    home.start(&["--name", "pad", "cmd", "--", "sh", "-c", script]);
    let mut tui = Tui::open(&home, 40, 120);
    tui.wait_pane("the program ready", |p| shows(p, "keypad-ready"));
    // The TUI asks the terminal to tell keys apart (kitty's protocol).
    assert!(
        tui.seen.windows(5).any(|w| w == b"\x1b[>1u"),
        "the TUI asks for the kitty keyboard protocol"
    );
    tui.press(ENTER);
    tui.wait_text(" INSERT ");
    // Keypad 1 and keypad Enter, as a terminal speaking that protocol
    // sends them: the program gets `ESC O q` and `ESC O M`.
    tui.press(b"\x1b[57400u\x1b[57414u");
    tui.wait_pane("the keypad's application sequences", |p| shows(p, "1b 4f 71 1b 4f 4d"));
    tui.press(BACK_TO_NORMAL);
    tui.wait_text(" NORMAL ");
    tui.press(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());
    assert!(
        tui.seen.windows(4).any(|w| w == b"\x1b[<1"),
        "and gives the terminal its keys back on the way out"
    );
}

/// Shift-Enter as a terminal speaking the kitty keyboard protocol sends it
/// to the TUI (`CSI 13;2u`, which the TUI asked for), typed into a run:
/// a program that did not turn the protocol on gets Alt-Enter's `ESC CR`
/// (a new line to Claude Code), one that did gets `CSI 13;2u` — never
/// the CR that sends.
#[test]
fn shift_enter_typed_in_the_tui_reaches_the_program_as_a_new_line_in_the_form_it_asked_for() {
    let home = Home::new();
    // Each shows the bytes of the keys it reads; the second turns on the
    // kitty keyboard protocol first, as Codex does.
    let script =
        |push: &str, n: usize| format!("printf '{push}ready\\n'; stty raw -echo; od -An -tx1 -N {n}; sleep 60");
    home.start(&["--name", "plain", "cmd", "--", "sh", "-c", &script("", 3)]);
    let mut tui = Tui::open(&home, 40, 120);
    tui.wait_pane("the program ready", |p| shows(p, "ready"));
    tui.press(ENTER);
    tui.wait_text(" INSERT ");
    tui.press(b"a\x1b[13;2u");
    tui.wait_pane("Shift-Enter as ESC CR", |p| shows(p, "61 1b 0d"));
    tui.press(BACK_TO_NORMAL);
    tui.wait_text(" NORMAL ");
    tui.press(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());

    let home = Home::new();
    home.start(&["--name", "kitty", "cmd", "--", "sh", "-c", &script("\\033[>1u", 8)]);
    let mut tui = Tui::open(&home, 40, 120);
    tui.wait_pane("the program ready", |p| shows(p, "ready"));
    tui.press(ENTER);
    tui.wait_text(" INSERT ");
    tui.press(b"a\x1b[13;2u");
    tui.wait_pane("Shift-Enter as CSI 13;2u", |p| shows(p, "61 1b 5b 31 33 3b 32 75"));
    tui.press(BACK_TO_NORMAL);
    tui.wait_text(" NORMAL ");
    tui.press(b"q");
    assert_eq!(tui.exit_code(), 0, "{}", tui.screen());
}
