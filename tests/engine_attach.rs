//! The readers of a run, end to end: `agents attach` (and `agents run`, which
//! attaches) inside a real PTY, `agents logs` plain, raw and following, and
//! `agents export --cast`. What the user sees is checked by feeding the PTY's
//! bytes to our own emulator, as their terminal would.

mod common;

use std::io::{BufRead as _, BufReader};
use std::process::Stdio;
use std::sync::mpsc;

use agents::harness::demo::{BANNER_TITLE, PROMPT};
use agents::paths::Paths;
use common::{Home, PATIENCE};
use serde_json::Value;

/// The size of the terminal the tests attach from.
const ROWS: u16 = 30;
const COLS: u16 = 100;

/// `agents ARGS` running in a PTY of `COLS`×`ROWS`, read through an emulator.
type InPty = common::pty::Pty;

fn in_pty(home: &Home, args: &[&str]) -> InPty {
    InPty::spawn(home, args, ROWS, COLS, home.path(), true)
}

/// Ctrl-a d.
const DETACH: &[u8] = &[0x01, b'd'];

fn wait_for_prompt(home: &Home, run: &str) {
    home.wait_until("the demo agent shows its prompt", || {
        String::from_utf8_lossy(&std::fs::read(home.log_path(run)).unwrap_or_default()).contains(PROMPT)
    });
}

/// A process the test started, killed if the test fails before it exits.
struct Spawned(std::process::Child);

impl Spawned {
    fn exit_status(&mut self) -> std::process::ExitStatus {
        common::wait_until("the process exits", PATIENCE, &mut || {
            matches!(self.0.try_wait(), Ok(Some(_)))
        });
        self.0.wait().expect("wait for the process")
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `agents logs --follow RUN`, and the lines it prints as they come.
fn follow_logs(home: &Home, run: &str) -> (Spawned, mpsc::Receiver<String>) {
    let mut follow = Spawned(
        home.cmd(&["logs", "--follow", run])
            .stdout(Stdio::piped())
            .spawn()
            .expect("agents logs --follow"),
    );
    let stdout = follow.0.stdout.take().expect("piped stdout");
    let (tx, lines) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (follow, lines)
}

fn shows(lines: &[String], text: &str) -> bool {
    lines.iter().any(|l| l.contains(text))
}

/// The lines a program printed as a terminal would keep them (not wrapped).
fn printed_lines(text: &str) -> Vec<&str> {
    text.split(['\r', '\n']).filter(|l| !l.trim().is_empty()).collect()
}

// ── 4. Attach ───────────────────────────────────────────────────────────

#[test]
fn attach_shows_the_run_passes_keys_and_ctrl_a_d_detaches_leaving_it_running() {
    let home = Home::new();
    let id = home.start(&["demo"]);
    wait_for_prompt(&home, &id);
    let before = home.show(&id);
    assert_ne!(
        (before["rows"].as_u64(), before["cols"].as_u64()),
        (Some(30), Some(100))
    );

    let mut attach = in_pty(&home, &["attach", &id]);
    attach.wait_screen("the demo agent's banner", |l| shows(l, BANNER_TITLE));
    // The window's title says which run this is and how to leave it.
    let name = before["name"].as_str().expect("a name");
    assert_eq!(attach.term.title(), format!("{name} · Ctrl-a d detaches"));
    attach.type_bytes(b"hello\r");
    attach.wait_screen("the answer", |l| shows(l, "demo: you said \"hello\""));
    // The prompt comes back after the answer: the screen is settled.
    let screen = attach.wait_screen("the prompt after the answer", |l| {
        let answer = l.iter().position(|l| l.contains("you said \"hello\""));
        answer.is_some_and(|at| l[at + 1..].iter().any(|l| l.starts_with(PROMPT.trim_end())))
    });
    // The run's terminal took the size of the one attached to it.
    let run = home.show(&id);
    assert_eq!(
        (run["rows"].as_u64(), run["cols"].as_u64()),
        (Some(30), Some(100)),
        "{run}"
    );

    attach.type_bytes(DETACH);
    assert_eq!(attach.exit_code(), 0, "{}", attach.text());
    let text = attach.text();
    let detach_line = format!("detached from {name} ({id}); attach again with: agents attach {id}");
    assert!(text.contains(&format!("{detach_line}\r\n")), "{text}");
    assert_eq!(home.state(&id), "running");
    // Nobody shows it any more: it is back at its own size.
    home.wait_until("the run is back at its own size", || {
        let run = home.show(&id);
        (run["rows"].as_u64(), run["cols"].as_u64()) == (before["rows"].as_u64(), before["cols"].as_u64())
    });

    // Attaching again shows the same screen: the run kept it.
    let mut again = in_pty(&home, &["attach", &id]);
    again.wait_screen("the same screen as before detaching", |l| l == screen.as_slice());
    again.type_bytes(DETACH);
    assert_eq!(again.exit_code(), 0, "{}", again.text());
    assert_eq!(home.state(&id), "running");
}

#[test]
fn resizing_the_attached_terminal_resizes_the_run() {
    let home = Home::new();
    let id = home.start(&["demo"]);
    wait_for_prompt(&home, &id);
    let mut attach = in_pty(&home, &["attach", &id]);
    attach.wait_screen("the demo agent's banner", |l| shows(l, BANNER_TITLE));
    attach.resize(40, 132);
    home.wait_until("the run takes the new size", || {
        let run = home.show(&id);
        (run["rows"].as_u64(), run["cols"].as_u64()) == (Some(40), Some(132))
    });
    attach.type_bytes(b"wider\r");
    attach.wait_screen("the answer on the resized screen", |l| {
        l.len() == 40 && shows(l, "demo: you said \"wider\"")
    });
    attach.type_bytes(DETACH);
    assert_eq!(attach.exit_code(), 0, "{}", attach.text());
}

#[test]
fn ctrl_a_ctrl_a_types_one_ctrl_a_into_the_run() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "echo ready; exec cat -v"]);
    let mut attach = in_pty(&home, &["attach", &id]);
    attach.wait_screen("the run's first line", |l| shows(l, "ready"));
    attach.type_bytes(b"x\x01\x01y\r");
    // `cat -v` shows a Ctrl-a as `^A`.
    let screen = attach.wait_screen("what cat read", |l| l.iter().any(|l| l == "x^Ay"));
    assert!(!shows(&screen, "^A^A"), "two Ctrl-a reached the run: {screen:#?}");
    attach.type_bytes(DETACH);
    assert_eq!(attach.exit_code(), 0, "{}", attach.text());
}

#[test]
fn keys_typed_while_attach_starts_reach_the_run() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "cat", "-v"]);
    let mut attach = in_pty(&home, &["attach", &id]);
    // At once, before attach has even drawn: a user typing ahead.
    attach.type_bytes(b"early\r");
    attach.wait_screen("what cat read", |l| l.iter().any(|l| l == "early"));
    attach.type_bytes(DETACH);
    assert_eq!(attach.exit_code(), 0, "{}", attach.text());
}

#[test]
fn when_the_run_ends_while_attached_attach_exits_with_its_outcome() {
    let home = Home::new();
    for (typed, state, code) in [("exit", "succeeded", 0), ("fail", "failed", 1)] {
        let id = home.start(&["demo"]);
        wait_for_prompt(&home, &id);
        let mut attach = in_pty(&home, &["attach", &id]);
        attach.wait_screen("the demo agent's banner", |l| shows(l, BANNER_TITLE));
        attach.type_bytes(format!("{typed}\r").as_bytes());
        assert_eq!(attach.exit_code(), code, "{}", attach.text());
        let text = attach.text();
        assert!(text.contains(&format!("({id}) {state}: ")), "{text}");
        assert_eq!(home.state(&id), state);
    }
}

#[test]
fn a_run_attached_to_its_end_leaves_all_its_output_on_the_terminal() {
    let home = Home::new();
    // Taller than the terminal: the first lines scrolled off long before.
    let script = "seq 1 60 | sed 's/^/line /'; sleep 0.3";
    let mut run = in_pty(&home, &["run", "cmd", "--", "sh", "-c", script]);
    assert_eq!(run.exit_code(), 0, "{}", run.text());
    assert!(!run.term.alternate_screen());
    // What is printed after the alternate screen is left stays there.
    let text = run.text();
    let (_, after) = text
        .rsplit_once("\x1b[?1049l")
        .expect("attach left the alternate screen");
    let after = after.strip_prefix("\x1b[?25h").unwrap_or(after);
    let printed: Vec<&str> = after.lines().map(str::trim_end).collect();
    for i in 1..=60 {
        assert!(
            printed.contains(&format!("line {i}").as_str()),
            "line {i} in {printed:?}"
        );
    }
    assert!(
        printed
            .last()
            .is_some_and(|l| l.contains("succeeded: exited with code 0")),
        "{printed:?}"
    );
}

#[test]
fn attach_says_so_when_the_daemon_stops_and_the_run_goes_on() {
    let home = Home::new();
    let id = home.start(&["demo"]);
    wait_for_prompt(&home, &id);
    let mut attach = in_pty(&home, &["attach", &id]);
    attach.wait_screen("the demo agent's banner", |l| shows(l, BANNER_TITLE));
    home.ok(&["daemon", "stop"]);
    assert_eq!(attach.exit_code(), 1, "{}", attach.text());
    assert!(
        attach
            .text()
            .contains(&format!("Attach again with: agents attach {id}")),
        "{}",
        attach.text()
    );
    // The next command starts a daemon, which finds the run still going.
    assert_eq!(home.state(&id), "running");
    let mut again = in_pty(&home, &["attach", &id]);
    again.wait_screen("the demo agent's banner", |l| shows(l, BANNER_TITLE));
    again.type_bytes(DETACH);
    assert_eq!(again.exit_code(), 0, "{}", again.text());
}

#[test]
fn run_without_background_attaches_to_the_new_run() {
    let home = Home::new();
    let mut run = in_pty(&home, &["run", "demo"]);
    run.wait_screen("the demo agent's banner", |l| shows(l, BANNER_TITLE));
    run.type_bytes(DETACH);
    assert_eq!(run.exit_code(), 0, "{}", run.text());
    let text = run.text();
    let id = text
        .split("agents attach ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no `agents attach <id>` in:\n{text}"))
        .to_string();
    let record = home.show(&id);
    assert_eq!(record["state"], "running", "{record}");
    assert_eq!(record["cwd"], home.path().to_str().unwrap());
}

#[test]
fn attaching_to_an_ended_run_is_a_one_line_error() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "true"]);
    assert_eq!(home.wait_end(&id)["state"], "succeeded");
    let mut attach = in_pty(&home, &["attach", &id]);
    assert_eq!(attach.exit_code(), 4, "not_running: the state of what it names");
    let text = attach.text();
    let lines = printed_lines(&text);
    assert_eq!(lines.len(), 1, "{text:?}");
    assert!(lines[0].contains("has ended") && lines[0].contains(&id), "{text}");
    assert!(
        !text.contains("\x1b[?1049h"),
        "the error comes before any full-screen drawing"
    );
}

// ── 5. Logs ─────────────────────────────────────────────────────────────

#[test]
fn logs_prints_every_line_of_a_run_taller_than_its_screen() {
    let home = Home::new();
    let id = home.start(&["--size", "80x24", "cmd", "--", "sh", "-c", "seq 1 500"]);
    assert_eq!(home.wait_end(&id)["state"], "succeeded");
    let want: String = (1..=500).map(|i| format!("{i}\n")).collect();
    assert_eq!(home.logs(&id), want);
}

#[test]
fn logs_of_a_busy_run_nobody_watches_show_all_its_log_held_when_asked() {
    // While nobody watches a run, its supervisor announces its output at a
    // pace (half of `quiet_ms`: 500 ms here, slower than the run's 10
    // lines a second); `agents logs` must still show every line already
    // written.
    let home = Home::with_config("[engine]\nquiet_ms = 1000\n");
    let id = home.start(&[
        "cmd",
        "--",
        "sh",
        "-c",
        "i=0; while :; do i=$((i+1)); echo line $i; sleep 0.1; done",
    ]);
    let last_line = |text: &str, end: &str| -> u64 {
        text.split(end)
            .filter_map(|l| l.trim().strip_prefix("line ")?.parse().ok())
            .max()
            .unwrap_or(0)
    };
    let on_disk = || String::from_utf8_lossy(&std::fs::read(home.log_path(&id)).unwrap_or_default()).into_owned();
    home.wait_until("three lines", || last_line(&on_disk(), "\r\n") >= 3);
    for _ in 0..10 {
        // Complete lines only: the one being written may be cut short.
        let text = on_disk();
        let written = last_line(&text[..text.rfind("\r\n").unwrap_or(0)], "\r\n");
        let shown = last_line(&home.logs(&id), "\n");
        assert!(
            shown >= written,
            "logs showed up to line {shown}, the log held line {written}"
        );
    }
    home.ok(&["cancel", &id]);
}

#[test]
fn logs_raw_to_a_pipe_is_the_output_log_byte_for_byte() {
    let home = Home::new();
    let id = home.start(&[
        "cmd",
        "--",
        "sh",
        "-c",
        "printf '\\033[31mred\\033[0m \\342\\234\\223 \\001\\n'; seq 1 50000",
    ]);
    home.wait_end(&id);
    let raw = home.raw_log(&id);
    let log = std::fs::read(home.log_path(&id)).expect("the output log");
    assert!(raw.starts_with(b"\x1b[31mred\x1b[0m \xe2\x9c\x93 \x01\r\n"));
    assert!(
        raw == log,
        "logs --raw: {} bytes, output.log: {} bytes",
        raw.len(),
        log.len()
    );
}

#[test]
fn logs_raw_to_a_terminal_is_refused_with_a_one_line_error() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "printf '\\033[2J\\033]0;pwned\\007'"]);
    home.wait_end(&id);
    let mut logs = in_pty(&home, &["logs", "--raw", &id]);
    assert_eq!(logs.exit_code(), 2, "bad_request");
    let text = logs.text();
    let lines = printed_lines(&text);
    assert_eq!(lines.len(), 1, "{text:?}");
    assert!(lines[0].contains("refusing"), "{text}");
    assert!(!text.contains('\x1b'), "no raw byte reached the terminal: {text:?}");
}

#[test]
fn logs_follow_prints_lines_as_they_scroll_and_exits_when_the_run_ends() {
    let home = Home::new();
    let go = home.path().join("go");
    let script = format!(
        "seq 1 10; while [ ! -e '{}' ]; do sleep 0.05; done; seq 11 20",
        go.display()
    );
    let id = home.start(&["--size", "80x4", "cmd", "--", "sh", "-c", &script]);

    let (mut follow, lines) = follow_logs(&home, &id);
    let mut got = Vec::new();
    let next_line = |got: &mut Vec<String>| {
        let line = lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("no more lines from logs --follow; got {got:?}"));
        got.push(line);
    };

    // Ten lines on a four-row screen: the first seven have scrolled away
    // and are printed while the run still waits.
    while got.len() < 7 {
        next_line(&mut got);
    }
    let first: Vec<String> = (1..=7).map(|i| i.to_string()).collect();
    assert_eq!(got, first);
    assert_eq!(home.state(&id), "running");
    assert!(
        follow.0.try_wait().expect("poll logs --follow").is_none(),
        "follow ended early"
    );

    std::fs::write(&go, b"").expect("create the go file");
    home.wait_end(&id);
    let status = follow.exit_status();
    assert!(status.success(), "logs --follow exited with {status}");
    while let Ok(line) = lines.recv_timeout(PATIENCE) {
        got.push(line);
    }
    let all: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
    assert_eq!(got, all);
}

#[test]
fn logs_follow_prints_each_line_once_it_is_complete_and_never_twice() {
    let home = Home::new();
    let (go, go2) = (home.path().join("go"), home.path().join("go2"));
    let wait = |f: &std::path::Path| format!("while [ ! -e '{}' ]; do sleep 0.05; done", f.display());
    // A screen taller than the output: nothing ever scrolls off.
    let script = format!(
        "echo alpha; echo beta; {}; printf gam; {}; echo ma; echo delta",
        wait(&go),
        wait(&go2)
    );
    let id = home.start(&["--size", "80x24", "cmd", "--", "sh", "-c", &script]);
    home.wait_until("the run printed its first lines", || {
        String::from_utf8_lossy(&home.raw_log(&id)).contains("beta")
    });

    let (mut follow, lines) = follow_logs(&home, &id);
    let mut got: Vec<String> = Vec::new();
    let mut next_line = || {
        let line = lines.recv_timeout(PATIENCE).expect("a line from logs --follow");
        got.push(line.clone());
        line
    };

    // The screen's completed lines, at once, while the run waits.
    assert_eq!(next_line(), "alpha");
    assert_eq!(next_line(), "beta");
    assert_eq!(home.state(&id), "running");

    // A line is printed when it is complete, not in pieces.
    std::fs::write(&go, b"").expect("create the go file");
    std::fs::write(&go2, b"").expect("create the go2 file");
    assert_eq!(next_line(), "gamma");
    assert_eq!(next_line(), "delta");

    home.wait_end(&id);
    let status = follow.exit_status();
    assert!(status.success(), "logs --follow exited with {status}");
    while let Ok(line) = lines.recv_timeout(PATIENCE) {
        got.push(line);
    }
    assert_eq!(got, ["alpha", "beta", "gamma", "delta"], "each line once");
}

// ── 6. Export ───────────────────────────────────────────────────────────

#[test]
fn export_writes_an_asciicast_v2_whose_text_is_the_output_log() {
    let home = Home::new();
    // A check mark split across two writes, 200 ms apart: two samples of
    // the output index cut it in the middle.
    let script = "printf 'h\\303\\251llo \\342\\234'; sleep 0.2; printf '\\223 w\\303\\266rld\\n'; sleep 0.2; \
                  printf '\\033[1m日本語\\033[0m\\n'; seq 1 300";
    let id = home.start(&["--size", "90x20", "cmd", "--", "sh", "-c", script]);
    assert_eq!(home.wait_end(&id)["state"], "succeeded");
    let cast_path = home.path().join("run.cast");
    home.ok(&["export", &id, "--cast", cast_path.to_str().unwrap()]);

    let cast = std::fs::read_to_string(&cast_path).expect("the cast file");
    let mut lines = cast.lines();
    let header: Value = serde_json::from_str(lines.next().expect("a header line")).expect("a JSON header");
    assert_eq!(header["version"], 2, "{header}");
    assert_eq!(header["width"], 90, "{header}");
    assert_eq!(header["height"], 20, "{header}");

    let mut text = String::new();
    let mut last_t = 0.0f64;
    let mut events = 0;
    for line in lines {
        let event: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let t = event[0].as_f64().unwrap_or_else(|| panic!("a time: {line}"));
        assert!(t >= last_t, "time went back from {last_t} to {t}");
        last_t = t;
        assert_eq!(event[1], "o", "{line}");
        let chunk = event[2].as_str().unwrap_or_else(|| panic!("text: {line}"));
        assert!(!chunk.contains('\u{fffd}'), "a mangled character in {line}");
        text.push_str(chunk);
        events += 1;
    }
    let log = String::from_utf8(std::fs::read(home.log_path(&id)).expect("the output log")).expect("UTF-8 output");
    assert_eq!(text, log);
    assert!(events >= 3, "one event per pause at least: {cast}");
    assert!(last_t >= 0.3, "the pauses are in the timing: {last_t}");
}

// ── 7. A deep AGENTS_HOME ───────────────────────────────────────────────

#[test]
fn a_home_too_deep_for_a_socket_path_still_runs_attaches_and_reads_logs() {
    let mut home = Home::new();
    home.dir = tempfile::Builder::new()
        .prefix(&"deep-".repeat(24))
        .tempdir()
        .expect("a deep temp home");
    assert!(home.path().as_os_str().len() > 110);
    let paths = Paths::at(home.path().to_path_buf());
    let socket_dir = paths
        .socket_dir()
        .expect("sockets move out of a deep home")
        .to_path_buf();

    let id = home.start(&["demo"]);
    wait_for_prompt(&home, &id);
    assert!(paths.daemon_socket().starts_with(&socket_dir));
    assert!(paths.daemon_socket().exists());

    let mut attach = in_pty(&home, &["attach", &id]);
    attach.wait_screen("the demo agent's banner", |l| shows(l, BANNER_TITLE));
    attach.type_bytes(b"deep\r");
    attach.wait_screen("the answer", |l| shows(l, "demo: you said \"deep\""));
    attach.type_bytes(DETACH);
    assert_eq!(attach.exit_code(), 0, "{}", attach.text());
    assert!(home.logs(&id).contains("demo: you said \"deep\""));

    home.ok(&["cancel", &id]);
    drop(home);
    let _ = std::fs::remove_dir_all(&socket_dir);
}

/// The supervisor's checkpoints (a screen every ~1 MiB of output) are read
/// back as written, so an ended run's screen is rebuilt from the last one
/// and the log after it, not from the whole log.
#[test]
fn the_checkpoints_a_supervisor_writes_are_read_back() {
    let home = Home::new();
    let id = home.start(&[
        "cmd",
        "--size",
        "100x30",
        "--",
        "sh",
        "-c",
        "yes 'a line of output for the checkpoints' | head -c 3500000; echo; echo END; exec sleep 600",
    ]);
    home.wait_until("the output is all written", || {
        std::fs::read(home.log_path(&id)).is_ok_and(|b| b.ends_with(b"END\r\n"))
    });
    let paths = agents::paths::Paths::at(home.path().to_path_buf());
    home.wait_until("three checkpoints are written", || {
        agents::protocol::rebuild::checkpoints(&paths, &id).len() >= 3
    });
    let checkpoints = agents::protocol::rebuild::checkpoints(&paths, &id);
    let log_len = std::fs::metadata(home.log_path(&id)).unwrap().len();
    for (i, c) in checkpoints.iter().enumerate() {
        assert_eq!((c.rows, c.cols), (30, 100), "checkpoint {i}");
        assert!(
            c.offset <= log_len && c.scrolled > 0 && !c.screen.is_empty(),
            "checkpoint {i}"
        );
        if i > 0 {
            assert!(c.offset > checkpoints[i - 1].offset);
        }
    }
    home.ok(&["cancel", &id]);
}
