//! What the TUI benchmarks share: a program in a PTY whose output is read on
//! its own thread (each chunk stamped the moment it was read) and shown on
//! our own emulator, as the user's terminal would show it; and `agents`
//! against a private `AGENTS_HOME`.

#![allow(dead_code)]

pub mod ended;
pub mod typing;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use agents::term::Terminal;
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// The `agents` binary the benches drive: this build's, or the one
/// `AGENTS_BENCH_BIN` names, to measure another build on the same machine
/// in the same hour (docs/benchmarks.md).
pub fn bin() -> &'static str {
    static CHOSEN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    CHOSEN
        .get_or_init(|| std::env::var("AGENTS_BENCH_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_agents").to_string()))
}

/// How long any one wait may take before the benchmark gives up.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// A private `AGENTS_HOME` and config directory, under `dir`. The config is
/// the tests' (`tests/common`): short quiet window and cancel grace periods.
pub struct Home {
    pub home: PathBuf,
    pub config: PathBuf,
}

impl Home {
    pub fn new(dir: &Path) -> Home {
        let home = dir.join("home");
        let config = dir.join("config");
        std::fs::create_dir_all(config.join("agents")).expect("config dir");
        std::fs::write(
            config.join("agents/config.toml"),
            "[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\n",
        )
        .expect("config file");
        Home { home, config }
    }

    /// `agents ARGS` against this home, as a user runs it.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(bin());
        command
            .args(args)
            .env("AGENTS_HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config)
            .env_remove("AGENTS_RUN_ID");
        command
    }

    /// `agents ARGS`, insisting on success; returns stdout, trimmed.
    pub fn agents(&self, args: &[&str]) -> String {
        let out = self.command(args).output().expect("run agents");
        assert!(
            out.status.success(),
            "agents {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The TUI (`agents` with no verb) in a `cols`×`rows` PTY.
    pub fn tui(&self, rows: u16, cols: u16) -> Pty {
        Pty::spawn(
            bin(),
            &[],
            &[
                ("AGENTS_HOME", self.home.as_os_str()),
                ("XDG_CONFIG_HOME", self.config.as_os_str()),
            ],
            rows,
            cols,
        )
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        // Leave nothing running: force-cancel live runs, stop the daemon.
        let ls = Command::new(bin())
            .args(["ls", "--json"])
            .env("AGENTS_HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config)
            .output();
        if let Ok(out) = ls
            && let Ok(serde_json::Value::Array(runs)) = serde_json::from_slice(&out.stdout)
        {
            for r in runs {
                if let Some(id) = r["id"].as_str() {
                    let _ = Command::new(bin())
                        .args(["cancel", "--force", id])
                        .env("AGENTS_HOME", &self.home)
                        .env("XDG_CONFIG_HOME", &self.config)
                        .output();
                }
            }
        }
        let _ = Command::new(bin())
            .args(["daemon", "stop"])
            .env("AGENTS_HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.config)
            .output();
    }
}

/// A program in a PTY, read through an emulator.
pub struct Pty {
    child: Box<dyn Child + Send + Sync>,
    keys: Box<dyn std::io::Write + Send>,
    /// Output chunks, each with the moment it was read.
    chunks: Receiver<(Instant, Vec<u8>)>,
    /// What a terminal showing the output so far would show.
    pub term: Terminal,
    pub bytes: u64,
    eof: bool,
    _master: Box<dyn MasterPty + Send>,
}

impl Pty {
    pub fn spawn(program: &str, args: &[&str], env: &[(&str, &std::ffi::OsStr)], rows: u16, cols: u16) -> Pty {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a PTY");
        let mut command = CommandBuilder::new(program);
        command.args(args);
        command.env("TERM", "xterm-256color");
        command.env_remove("NO_COLOR");
        command.env_remove("AGENTS_RUN_ID");
        command.env_remove("TMUX");
        for (k, v) in env {
            command.env(k, v);
        }
        let child = pty.slave.spawn_command(command).expect("spawn in a PTY");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("PTY reader");
        let (tx, chunks) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 256 * 1024];
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                let at = Instant::now();
                if tx.send((at, buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        });
        let keys = pty.master.take_writer().expect("PTY writer");
        Pty {
            child,
            keys,
            chunks,
            term: Terminal::new(rows, cols),
            bytes: 0,
            eof: false,
            _master: pty.master,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("a pid")
    }

    /// Feeds the next chunk to the emulator; returns when it was read, or
    /// `None` at end of file or at `deadline`.
    pub fn next(&mut self, deadline: Instant) -> Option<Instant> {
        if self.eof {
            return None;
        }
        match self
            .chunks
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok((at, chunk)) => {
                self.bytes += chunk.len() as u64;
                self.term.feed(&chunk);
                // Answer what the program asks its terminal, as a terminal would.
                let replies = self.term.take_replies();
                if !replies.is_empty() {
                    let _ = self.keys.write_all(&replies);
                }
                Some(at)
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.eof = true;
                None
            }
            Err(RecvTimeoutError::Timeout) => None,
        }
    }

    /// Reads until `f` holds for the screen; returns when the chunk that
    /// made it hold was read (now, if it holds already).
    pub fn wait(&mut self, what: &str, mut f: impl FnMut(&Terminal) -> bool) -> Instant {
        let deadline = Instant::now() + PATIENCE;
        if f(&self.term) {
            return Instant::now();
        }
        loop {
            let Some(at) = self.next(deadline) else {
                panic!(
                    "the screen never showed {what}; it shows:\n{}",
                    self.term.visible_lines().join("\n")
                );
            };
            if f(&self.term) {
                return at;
            }
        }
    }

    /// Reads whatever has arrived, without waiting.
    pub fn drain(&mut self) {
        while self.next(Instant::now()).is_some() {}
    }

    pub fn press(&mut self, bytes: &[u8]) {
        self.keys.write_all(bytes).expect("type into the PTY");
        self.keys.flush().expect("flush the PTY");
    }

    /// Waits (bounded) for the program to exit, reading its output meanwhile.
    pub fn wait_exit(&mut self) {
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            self.next(Instant::now() + Duration::from_millis(20));
        }
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn shows(term: &Terminal, text: &str) -> bool {
    term.visible_lines().iter().any(|l| l.contains(text))
}

/// Sorted copy's value at quantile `q` (0..=1).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The 1, 5 and 15 minute load averages: wall-clock figures on a busy
/// machine include waiting for a CPU.
pub fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// Runs a tmux command against the server on `sock`; its stdout, trimmed.
pub fn tmux(sock: &Path, args: &[&str]) -> String {
    let out = Command::new("tmux")
        .arg("-S")
        .arg(sock)
        .args(args)
        .output()
        .expect("tmux is needed for the side-by-side figures (apt-get install tmux)");
    assert!(
        out.status.success(),
        "tmux {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A tmux session `lat` on `sock`, `size` (rows, cols), split in two:
/// `cat` (selected) beside the demo agent flooding `bytes` of log lines,
/// a child of the pane's shell.
pub fn cat_beside_flood(sock: &Path, (rows, cols): (u16, u16), bytes: &str) {
    // The shell stays the flood's parent (`exec` would make the flood the
    // pane's process, which tmux continues when a bench stops it).
    let flood = format!("{} demo-agent --flood {bytes}; exit", bin());
    let (cols, rows) = (cols.to_string(), rows.to_string());
    let session = [
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "lat",
        "-x",
        &cols,
        "-y",
        &rows,
        "cat",
    ];
    tmux(sock, &session);
    tmux(sock, &["split-window", "-h", "-t", "lat", &flood]);
    tmux(sock, &["select-pane", "-t", "lat:0.0"]);
}

/// CPU time a process's threads have had so far, in ns
/// (`/proc/PID/task/*/schedstat`: exact, unlike the tick-rounded `utime`).
pub fn threads_cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| {
            let schedstat = std::fs::read_to_string(task.path().join("schedstat")).ok()?;
            schedstat.split_whitespace().next()?.parse::<u64>().ok()
        })
        .sum()
}

/// `ppid` of every process on the machine.
pub fn parents() -> std::collections::HashMap<u32, u32> {
    let mut map = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if let Some(ppid) = stat
            .rfind(')')
            .and_then(|i| stat[i + 2..].split_whitespace().nth(1))
            .and_then(|p| p.parse().ok())
        {
            map.insert(pid, ppid);
        }
    }
    map
}
