//! `agents demo-agent` on real PTYs: each test starts the binary in a PTY
//! the way the supervisor does (new session, PTY as controlling terminal),
//! talks to it through the master, and waits on what it prints or on its exit
//! status — never on a fixed sleep.

use std::io::{Read as _, Write as _};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use agents::harness::demo::{
    self, APPROVED, BANNER_TITLE, DENIED, DESCENDANT_PID, ESCAPED_DESCENDANT_PID, FLOOD_END, FLOOD_START, INTERRUPTED,
    PERMISSION_QUESTION, PROMPT, SUBAGENTS_DONE, TERMINATED, THINKING,
};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::{Pid, getpgid, getsid};
use portable_pty::{CommandBuilder, ExitStatus, MasterPty, PtySize, native_pty_system};

/// Generous: debug builds on a loaded 2-core machine. Only a failing test waits this long.
const TIMEOUT: Duration = Duration::from_secs(20);

/// A demo agent running in its own PTY.
struct DemoAgent {
    pid: Pid,
    keys: Box<dyn std::io::Write + Send>,
    output: Receiver<Vec<u8>>,
    /// Everything read from the PTY so far.
    seen: Vec<u8>,
    /// Where the next `wait_for` starts looking.
    cursor: usize,
    eof: bool,
    exit: Receiver<ExitStatus>,
    exited: bool,
    _master: Box<dyn MasterPty + Send>,
    /// The agent's cwd, `AGENTS_HOME` and XDG homes: nothing of the user's is touched.
    _home: tempfile::TempDir,
}

impl DemoAgent {
    fn start(args: &[&str]) -> Self {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 120,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a PTY");
        let home = tempfile::tempdir().expect("a temporary home");
        let mut command = CommandBuilder::new(env!("CARGO_BIN_EXE_agents"));
        command.arg(demo::SUBCOMMAND);
        command.args(args);
        command.cwd(home.path());
        command.env("TERM", "xterm-256color");
        command.env("AGENTS_HOME", home.path().join("agents"));
        command.env("XDG_CONFIG_HOME", home.path().join("config"));
        command.env("XDG_STATE_HOME", home.path().join("state"));
        let mut child = pty.slave.spawn_command(command).expect("spawn demo-agent");
        // Only the agent (and what it leaves behind) may hold the slave, or
        // the master never reads end of file.
        drop(pty.slave);
        let pid = Pid::from_raw(child.process_id().expect("a pid") as i32);

        let mut reader = pty.master.try_clone_reader().expect("PTY reader");
        let (output_tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            // Linux reports the slave's last close as EIO: both mean end of file.
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                if output_tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let (exit_tx, exit) = mpsc::channel();
        std::thread::spawn(move || {
            if let Ok(status) = child.wait() {
                let _ = exit_tx.send(status);
            }
        });
        let keys = pty.master.take_writer().expect("PTY writer");
        Self {
            pid,
            keys,
            output,
            seen: Vec::new(),
            cursor: 0,
            eof: false,
            exit,
            exited: false,
            _master: pty.master,
            _home: home,
        }
    }

    /// Reads until `marker` appears after the previous one; returns the
    /// output from there up to the end of `marker`.
    fn wait_for(&mut self, marker: &str) -> String {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(at) = find(&self.seen[self.cursor..], marker.as_bytes()) {
                let end = self.cursor + at + marker.len();
                let text = String::from_utf8_lossy(&self.seen[self.cursor..end]).into_owned();
                self.cursor = end;
                return text;
            }
            assert!(
                self.read_more(deadline),
                "no {marker:?} before {}; output so far:\n{}",
                if self.eof { "end of file" } else { "the timeout" },
                String::from_utf8_lossy(&self.seen)
            );
        }
    }

    /// Waits for a line starting with `prefix`; returns the rest of it.
    fn line_after(&mut self, prefix: &str) -> String {
        let at_line_start = format!("\n{prefix}");
        self.wait_for(&at_line_start);
        self.wait_for("\r\n").trim_end().to_string()
    }

    /// Appends the next chunk of output; false at end of file or timeout.
    fn read_more(&mut self, deadline: Instant) -> bool {
        if self.eof {
            return false;
        }
        match self
            .output
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(chunk) => {
                self.seen.extend_from_slice(&chunk);
                true
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                false
            }
            Err(RecvTimeoutError::Timeout) => false,
        }
    }

    /// Reads until the PTY's end of file; returns everything read.
    fn read_to_end(&mut self) -> &[u8] {
        let deadline = Instant::now() + TIMEOUT;
        while self.read_more(deadline) {}
        assert!(
            self.eof,
            "the PTY is still open; output:\n{}",
            String::from_utf8_lossy(&self.seen)
        );
        &self.seen
    }

    fn type_keys(&mut self, keys: &str) {
        self.keys.write_all(keys.as_bytes()).expect("type into the PTY");
        self.keys.flush().expect("flush the PTY");
    }

    fn signal(&self, signal: Signal) {
        kill(self.pid, signal).expect("signal the agent");
    }

    fn exit_status(&mut self) -> ExitStatus {
        let status = self.exit.recv_timeout(TIMEOUT).unwrap_or_else(|_| {
            panic!(
                "the agent did not exit; output:\n{}",
                String::from_utf8_lossy(&self.seen)
            )
        });
        self.exited = true;
        status
    }
}

impl Drop for DemoAgent {
    fn drop(&mut self) {
        // A failed test must not leave its agent running.
        if !self.exited && self.exit.try_recv().is_err() {
            let _ = kill(self.pid, Signal::SIGKILL);
        }
    }
}

/// Processes a test must kill whatever happens.
struct Leftovers(Vec<Pid>);

impl Drop for Leftovers {
    fn drop(&mut self) {
        for &pid in &self.0 {
            let _ = kill(pid, Signal::SIGKILL);
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

fn parse_pid(text: &str) -> Pid {
    Pid::from_raw(text.trim().parse().expect("a pid"))
}

/// Alive and not a zombie waiting to be reaped.
fn is_running(pid: Pid) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(") ")?.1.chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

#[test]
fn a_prompt_gets_an_answer_and_the_prompt_comes_back() {
    let mut agent = DemoAgent::start(&["--think-ms", "50"]);
    agent.wait_for(BANNER_TITLE);
    agent.wait_for(PROMPT);
    agent.type_keys("fix the tests\r");
    agent.wait_for(THINKING);
    agent.wait_for("● demo: you said \"fix the tests\"\r\n");
    agent.wait_for(PROMPT);
    agent.type_keys("exit\r");
    assert_eq!(agent.exit_status().exit_code(), 0);
}

#[test]
fn once_exits_zero_after_answering_the_first_prompt() {
    let mut agent = DemoAgent::start(&["--once", "--prompt", "hello", "--think-ms", "10"]);
    agent.wait_for("you said \"hello\"");
    let status = agent.exit_status();
    assert!(status.success(), "{status:?}");
}

#[test]
fn exit_code_is_the_status_after_the_first_typed_prompt() {
    let mut agent = DemoAgent::start(&["--exit-code", "7", "--think-ms", "10"]);
    agent.wait_for(PROMPT);
    agent.type_keys("hi\r");
    agent.wait_for("you said \"hi\"");
    assert_eq!(agent.exit_status().exit_code(), 7);
}

#[test]
fn fail_at_the_prompt_exits_3() {
    let mut agent = DemoAgent::start(&["--prompt", "fail"]);
    agent.wait_for("failing as asked");
    assert_eq!(agent.exit_status().exit_code(), demo::EXIT_FAIL as u32);
}

/// The agent turns off `\n` → `\r\n` translation while it floods, so the
/// bytes between the start and end lines are the payload exactly as written.
#[test]
fn flood_alone_writes_exactly_the_requested_bytes_then_exits_zero() {
    let bytes: u64 = 1_000_003;
    let mut agent = DemoAgent::start(&["--flood", &bytes.to_string()]);
    let start_line = format!("{FLOOD_START}{bytes} bytes\r\n");
    let end_line = format!("{FLOOD_END}{bytes} bytes\r\n");
    let output = agent.read_to_end().to_vec();
    assert!(agent.exit_status().success());

    let start = find(&output, start_line.as_bytes()).expect("flood start line") + start_line.len();
    let end = start + find(&output[start..], end_line.as_bytes()).expect("flood end line");
    let payload = &output[start..end];
    assert_eq!(payload.len() as u64, bytes);
    assert!(payload == demo::flood_payload(bytes).as_slice());
    assert!(output.ends_with(end_line.as_bytes()), "nothing after the flood");
}

#[test]
fn ask_shows_a_permission_prompt_and_1_approves() {
    let mut agent = DemoAgent::start(&["--ask"]);
    agent.wait_for(PERMISSION_QUESTION);
    agent.wait_for("❯ 1. Yes");
    agent.wait_for("2. No");
    agent.type_keys("1");
    agent.wait_for(APPROVED);
    agent.wait_for(PROMPT);
    agent.type_keys("/exit\r");
    assert!(agent.exit_status().success());
}

#[test]
fn a_typed_ask_answered_2_is_denied_and_the_agent_goes_on() {
    let mut agent = DemoAgent::start(&["--think-ms", "10"]);
    agent.wait_for(PROMPT);
    agent.type_keys("ask\r");
    agent.wait_for(PERMISSION_QUESTION);
    agent.type_keys("2\r");
    agent.wait_for(DENIED);
    agent.wait_for(PROMPT);
    agent.type_keys("still there?\r");
    agent.wait_for("you said \"still there?\"");
}

#[test]
fn ctrl_c_while_thinking_interrupts_the_turn_and_at_the_prompt_exits_130() {
    let mut agent = DemoAgent::start(&["--think-ms", "600000"]);
    agent.wait_for(PROMPT);
    agent.type_keys("a long task\r");
    agent.wait_for(THINKING);
    agent.type_keys("\x03");
    agent.wait_for(INTERRUPTED);
    agent.wait_for(PROMPT);
    agent.type_keys("\x03");
    assert_eq!(agent.exit_status().exit_code(), demo::EXIT_INTERRUPTED as u32);
}

#[test]
fn sigterm_prints_terminated_and_exits_143() {
    let mut agent = DemoAgent::start(&[]);
    agent.wait_for(PROMPT);
    agent.signal(Signal::SIGTERM);
    agent.wait_for(TERMINATED);
    assert_eq!(agent.exit_status().exit_code(), demo::EXIT_TERMINATED as u32);
}

#[test]
fn ignore_sigterm_survives_sigterm_and_dies_to_sigkill() {
    let mut agent = DemoAgent::start(&["--ignore-sigterm", "--think-ms", "10"]);
    agent.wait_for(PROMPT);
    // An ignored signal is discarded when sent, so the answer below comes
    // from an agent that has already had its SIGTERM.
    agent.signal(Signal::SIGTERM);
    agent.type_keys("are you alive\r");
    agent.wait_for("you said \"are you alive\"");
    agent.signal(Signal::SIGKILL);
    let status = agent.exit_status();
    assert!(status.signal().is_some(), "{status:?}");
}

#[test]
fn hang_stops_answering_and_dies_to_the_default_sigterm() {
    let mut agent = DemoAgent::start(&["--hang", "--prompt", "last words", "--think-ms", "10"]);
    agent.wait_for("you said \"last words\"");
    agent.signal(Signal::SIGTERM);
    let status = agent.exit_status();
    assert!(status.signal().is_some(), "{status:?}");
    assert!(!String::from_utf8_lossy(agent.read_to_end()).contains(TERMINATED));
}

#[test]
fn crash_dies_by_a_signal_after_a_panic_message() {
    let mut agent = DemoAgent::start(&["--crash"]);
    agent.wait_for("panicked at");
    let status = agent.exit_status();
    assert!(!status.success());
    assert!(status.signal().is_some(), "{status:?}");
}

#[test]
fn subagents_run_as_child_processes_and_end_with_a_summary() {
    let mut agent = DemoAgent::start(&["--subagents", "2", "--once", "--think-ms", "10"]);
    agent.wait_for("[subtask 1] ● demo: you said \"subtask 1\"");
    agent.wait_for(&format!("{SUBAGENTS_DONE}2 succeeded, 0 failed"));
    assert!(agent.exit_status().success());
}

#[test]
fn descendant_stays_in_the_process_group_and_outlives_the_agent() {
    let mut agent = DemoAgent::start(&["--descendant"]);
    let descendant = parse_pid(&agent.line_after(DESCENDANT_PID));
    let _cleanup = Leftovers(vec![descendant]);
    agent.wait_for(PROMPT);
    // The agent leads its session, so its pid is its process group.
    assert_eq!(getpgid(Some(descendant)), Ok(agent.pid));

    agent.signal(Signal::SIGKILL);
    agent.exit_status();
    assert!(is_running(descendant), "the descendant died with the agent");
    // It keeps the PTY open until the group is cleaned up.
    killpg(agent.pid, Signal::SIGKILL).expect("kill the agent's group");
    agent.read_to_end();
}

#[test]
fn escaped_descendant_leaves_the_session_and_lets_the_pty_close() {
    let mut agent = DemoAgent::start(&["--escaped-descendant", "--once", "--prompt", "hi"]);
    let escaped = parse_pid(&agent.line_after(ESCAPED_DESCENDANT_PID));
    let _cleanup = Leftovers(vec![escaped]);
    assert_eq!(getsid(Some(escaped)), Ok(escaped), "it leads a session of its own");
    assert_ne!(getpgid(Some(escaped)), Ok(agent.pid));

    assert!(agent.exit_status().success());
    agent.read_to_end();
    assert!(is_running(escaped), "the escaped descendant lives on");
}

#[test]
fn slow_start_shows_the_banner_only_after_the_delay() {
    let started = Instant::now();
    let mut agent = DemoAgent::start(&["--slow-start", "300"]);
    agent.wait_for(BANNER_TITLE);
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[test]
fn a_bracketed_paste_of_many_lines_is_one_prompt() {
    let mut agent = DemoAgent::start(&["--think-ms", "10"]);
    agent.wait_for("\x1b[?2004h");
    agent.wait_for(PROMPT);
    agent.type_keys("\x1b[200~first line\nsecond line\x1b[201~\r");
    let said = agent.wait_for("● demo: you said \"first line\r\nsecond line\"\r\n");
    assert!(!said.contains("you said \"second line"), "{said:?}");
    // The markers are echoed as the sequence they are, never as `^[[200~`.
    assert!(!said.contains("^["), "{said:?}");
    agent.wait_for(PROMPT);
    agent.type_keys("third\r");
    agent.wait_for("● demo: you said \"third\"\r\n");
    agent.type_keys("exit\r");
    assert_eq!(agent.exit_status().exit_code(), 0);
}
