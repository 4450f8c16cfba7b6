//! `agents …` in a real PTY, its output read through an emulator, as a
//! person's terminal would show it. Shared by the attach and TUI tests.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Instant;

use agents::term::Terminal;
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use super::{BIN, Home, PATIENCE};

pub struct Pty {
    pub child: Box<dyn Child + Send + Sync>,
    keys: Box<dyn std::io::Write + Send>,
    output: Receiver<Vec<u8>>,
    /// Every byte read so far.
    pub seen: Vec<u8>,
    /// What a terminal showing those bytes would show.
    pub term: Terminal,
    pub eof: bool,
    pub master: Box<dyn MasterPty + Send>,
}

impl Pty {
    /// `agents ARGS` on `home`, in `cwd`, in a `cols`×`rows` terminal.
    pub fn spawn(home: &Home, args: &[&str], rows: u16, cols: u16, cwd: &Path, no_color: bool) -> Pty {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a PTY");
        let mut command = CommandBuilder::new(BIN);
        command.args(args);
        command.cwd(cwd);
        command.env("AGENTS_HOME", home.path());
        command.env("XDG_CONFIG_HOME", home.config.path());
        command.env("TERM", "xterm-256color");
        if no_color {
            command.env("NO_COLOR", "1");
        } else {
            command.env_remove("NO_COLOR");
        }
        command.env_remove("AGENTS_RUN_ID");
        let child = pty.slave.spawn_command(command).expect("spawn agents in a PTY");
        // Only the child may hold the slave, or the master never reads end of file.
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("PTY reader");
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            // Linux reports the slave's last close as EIO: both mean end of file.
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                if tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let keys = pty.master.take_writer().expect("PTY writer");
        Pty {
            child,
            keys,
            output,
            seen: Vec::new(),
            term: Terminal::new(rows, cols),
            eof: false,
            master: pty.master,
        }
    }

    /// Takes the next chunk of output; false at end of file or at `deadline`.
    pub fn read_more(&mut self, deadline: Instant) -> bool {
        if self.eof {
            return false;
        }
        match self
            .output
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(chunk) => {
                self.seen.extend_from_slice(&chunk);
                self.term.feed(&chunk);
                // Answer what the program asks its terminal, as a terminal would.
                let replies = self.term.take_replies();
                if !replies.is_empty() {
                    let _ = self.keys.write_all(&replies);
                }
                true
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                false
            }
            Err(RecvTimeoutError::Timeout) => false,
        }
    }

    /// Reads until the screen satisfies `f`; returns the screen's lines.
    pub fn wait_screen(&mut self, what: &str, f: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let lines = self.term.visible_lines();
            if f(&lines) {
                return lines;
            }
            assert!(
                self.read_more(deadline),
                "the screen never showed {what} (before {}); it shows:\n{}",
                if self.eof { "end of file" } else { "the timeout" },
                lines.join("\n")
            );
        }
    }

    pub fn type_bytes(&mut self, bytes: &[u8]) {
        self.keys.write_all(bytes).expect("type into the PTY");
        self.keys.flush().expect("flush the PTY");
    }

    /// Reads to the end of the output, then returns the exit code.
    pub fn exit_code(&mut self) -> u32 {
        let deadline = Instant::now() + PATIENCE;
        while self.read_more(deadline) {}
        assert!(self.eof, "still running; the screen shows:\n{}", self.screen());
        loop {
            if let Some(status) = self.child.try_wait().expect("poll the child") {
                return status.exit_code();
            }
            assert!(Instant::now() < deadline, "closed its terminal but did not exit");
            std::thread::yield_now();
        }
    }

    /// Resizes the terminal, as a user dragging its window would.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize the PTY");
        self.term.resize(rows, cols);
    }

    /// Everything printed so far, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen).into_owned()
    }

    pub fn screen(&self) -> String {
        self.term.visible_lines().join("\n")
    }
}

/// `agents attach RUN` at 120×40: waits for `ready`, types `keys`, waits
/// for `shows`, then detaches (Ctrl-a d), as a person would.
pub fn type_through_attach(
    home: &Home,
    run: &str,
    ready: impl Fn(&[String]) -> bool,
    keys: &[u8],
    shows: impl Fn(&[String]) -> bool,
) {
    let mut attach = Pty::spawn(home, &["attach", run], 40, 120, home.path(), true);
    attach.wait_screen("the run ready for keys", ready);
    attach.type_bytes(keys);
    attach.wait_screen("what the keys did", shows);
    attach.type_bytes(&[0x01, b'd']);
    assert_eq!(attach.exit_code(), 0, "{}", attach.text());
}

impl Drop for Pty {
    fn drop(&mut self) {
        // A failed test must not leave its client running (nor stopped).
        if matches!(self.child.try_wait(), Ok(None)) {
            if let Some(pid) = self.child.process_id() {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGCONT,
                );
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
