//! Recordings of real programs, made by the test itself: each program runs
//! in a PTY of the size compared, is given its keys once its screen shows
//! what it waits for, and every byte it printed is fed to tmux and to ours
//! (`assert_same_as_tmux_at`). Nothing recorded elsewhere is committed;
//! the recording is whatever the program printed this time, and both
//! emulators get the same bytes, so timing cannot make them differ.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use agents::term::Terminal;
use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use super::assert_same_as_tmux_at;

/// How long a program may take to show what a step waits for.
const PATIENCE: Duration = Duration::from_secs(30);

/// A program in a PTY, its output kept.
struct Recorder {
    child: Box<dyn Child + Send + Sync>,
    keys: Box<dyn std::io::Write + Send>,
    _master: Box<dyn MasterPty + Send>,
    output: Receiver<Vec<u8>>,
    /// Every byte the program printed.
    bytes: Vec<u8>,
    /// Where the waits look; it answers the program's queries as a
    /// terminal would (vim and vttest ask).
    screen: Terminal,
}

impl Recorder {
    /// `argv` at `rows`×`cols` in `cwd`, with only the environment given.
    fn start(rows: u16, cols: u16, cwd: &Path, env: &[(&str, &str)], argv: &[&str]) -> Recorder {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a PTY");
        let mut command = CommandBuilder::new(argv[0]);
        command.args(&argv[1..]);
        command.cwd(cwd);
        command.env_clear();
        command.env("PATH", "/usr/bin:/bin");
        command.env("TERM", "xterm-256color");
        command.env("LANG", "C.UTF-8");
        command.env("HOME", cwd);
        for (k, v) in env {
            command.env(k, v);
        }
        let child = pty.slave.spawn_command(command).expect("spawn the program");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("PTY reader");
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                if tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        let keys = pty.master.take_writer().expect("PTY writer");
        Recorder {
            child,
            keys,
            _master: pty.master,
            output,
            bytes: Vec::new(),
            screen: Terminal::new(rows, cols),
        }
    }

    /// Reads until the screen shows `text`.
    fn wait_for(&mut self, text: &str) -> &mut Recorder {
        let deadline = Instant::now() + PATIENCE;
        while !self.screen.visible_lines().iter().any(|l| l.contains(text)) {
            let left = deadline.saturating_duration_since(Instant::now());
            let chunk = self.output.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "the program never showed {text:?}; it shows:\n{}",
                    self.screen.visible_lines().join("\n")
                )
            });
            self.bytes.extend_from_slice(&chunk);
            self.screen.feed(&chunk);
            let replies = self.screen.take_replies();
            if !replies.is_empty() {
                let _ = self.keys.write_all(&replies);
            }
        }
        self
    }

    fn keys(&mut self, bytes: &[u8]) -> &mut Recorder {
        self.keys.write_all(bytes).expect("type into the PTY");
        self.keys.flush().expect("flush the PTY");
        self
    }

    /// The recording so far; the program is stopped.
    fn take(&mut self) -> Vec<u8> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::take(&mut self.bytes)
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// vttest's menus and the first screens of its tests: cursor movement
/// (the E-filled frame with DECALN, margins, 132 columns asked by DECCOLM),
/// screen features (wrap, tab stops, scroll regions, attributes),
/// character sets, double-size lines (ours and tmux's both draw them
/// single), and the terminal reports it asks for.
#[test]
fn vttest_menus_and_screens_match_tmux() {
    let dir = tempfile::tempdir().expect("temporary directory");
    // Each path: the keys at each menu, the text waited for before each.
    let paths: &[&[(&str, &[u8])]] = &[
        &[("Enter choice number", b"")],
        &[("Enter choice number", b"1\r"), ("Push <RETURN>", b"")],
        &[
            ("Enter choice number", b"1\r"),
            ("Push <RETURN>", b"\r"),
            ("Push <RETURN>", b""),
        ],
        &[("Enter choice number", b"2\r"), ("Push <RETURN>", b"")],
        &[
            ("Enter choice number", b"2\r"),
            ("Push <RETURN>", b"\r"),
            ("Push <RETURN>", b"\r"),
            ("Push <RETURN>", b""),
        ],
        &[("Enter choice number", b"3\r"), ("Enter choice number", b"")],
        &[("Enter choice number", b"8\r"), ("Push <RETURN>", b"")],
    ];
    for path in paths {
        let mut vttest = Recorder::start(24, 80, dir.path(), &[], &["vttest"]);
        for (wait, keys) in *path {
            vttest.wait_for(wait).keys(keys);
        }
        // The last wait shows the screen compared.
        assert_same_as_tmux_at(24, 80, &vttest.take());
    }
}

fn numbered_file(dir: &Path) {
    let text: String = (1..=400)
        .map(|n| format!("{n:03} {}\n", "a line of a file longer than the screen ".repeat(n % 4)))
        .collect();
    std::fs::write(dir.join("file.txt"), text).expect("write the file");
}

#[test]
fn less_paging_and_searching_matches_tmux() {
    let dir = tempfile::tempdir().expect("temporary directory");
    numbered_file(dir.path());
    for (rows, cols) in [(24, 80), (50, 200)] {
        let mut less = Recorder::start(rows, cols, dir.path(), &[], &["less", "-N", "file.txt"]);
        less.wait_for("001").keys(b" ").wait_for(&format!("{:03}", rows));
        less.keys(b"/line of\r").wait_for("a line").keys(b"G").wait_for("(END)");
        less.keys(b"g\x1b[6~").wait_for(":");
        assert_same_as_tmux_at(rows, cols, &less.take());
    }
}

#[test]
fn htop_screens_match_tmux() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let config = dir.path().join(".config/htop");
    std::fs::create_dir_all(&config).expect("htop's config folder");
    std::fs::write(config.join("htoprc"), include_str!("../fixtures/htoprc")).expect("write htoprc");
    let mut sleeps: Vec<std::process::Child> = (0..3)
        .map(|_| {
            std::process::Command::new("sleep")
                .arg("1000")
                .spawn()
                .expect("start sleep")
        })
        .collect();
    let pids = sleeps.iter().map(|c| c.id().to_string()).collect::<Vec<_>>().join(",");
    for keys in [&b""[..], b"\x1bOQ", b"\x1bOP", b"\x1b[17~", b"\x1b[15~"] {
        let mut htop = Recorder::start(24, 80, dir.path(), &[], &["htop", "-p", &pids]);
        htop.wait_for("F10Quit")
            .keys(keys)
            .keys(b"\x1b[B")
            .wait_for("sleep 1000");
        // A key htop answers by drawing again, then the screen compared.
        htop.keys(b"\x1b[B\x0c").wait_for("sleep 1000");
        assert_same_as_tmux_at(24, 80, &htop.take());
    }
    for sleep in &mut sleeps {
        let _ = sleep.kill();
        let _ = sleep.wait();
    }
}

#[test]
fn git_log_graph_in_colour_through_less_matches_tmux() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env("GIT_AUTHOR_NAME", "A U Thor")
            .env("GIT_AUTHOR_EMAIL", "a@example.invalid")
            .env("GIT_COMMITTER_NAME", "A U Thor")
            .env("GIT_COMMITTER_EMAIL", "a@example.invalid")
            .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "-b", "main"]);
    for n in 1..=30 {
        if n % 7 == 0 {
            git(&["checkout", "-q", "-b", &format!("topic-{n}")]);
        }
        git(&[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("change {n}: a subject line of some length"),
        ]);
        if n % 7 == 3 && n > 7 {
            git(&["checkout", "-q", "main"]);
            git(&[
                "merge",
                "-q",
                "--no-ff",
                "-m",
                &format!("merge at {n}"),
                &format!("topic-{}", n - n % 7),
            ]);
        }
    }
    for (rows, cols) in [(24, 80), (40, 120)] {
        let argv = [
            "git",
            "-c",
            "core.pager=less -R",
            "log",
            "--graph",
            "--decorate",
            "--all",
            "--color=always",
        ];
        let mut log = Recorder::start(rows, cols, dir.path(), &[], &argv);
        log.wait_for("change 30")
            .keys(b"\x1b[6~")
            .wait_for(":")
            .keys(b"/merge\r")
            .wait_for("merge");
        assert_same_as_tmux_at(rows, cols, &log.take());
    }
}

/// bash with its own completion (no bashrc): a listing of candidates, a
/// completed name, a coloured `ls`, a line edited with the cursor keys.
#[test]
fn a_shell_completing_names_matches_tmux() {
    let dir = tempfile::tempdir().expect("temporary directory");
    for name in ["alpha.txt", "alpine.md", "alps", "beta"] {
        std::fs::write(dir.path().join(name), name).expect("write a file");
    }
    std::fs::create_dir(dir.path().join("almanac")).expect("make a folder");
    let env = [
        ("PS1", "\\[\\e[1;32m\\]demo\\[\\e[m\\] \\w $ "),
        ("INPUTRC", "/dev/null"),
    ];
    let mut bash = Recorder::start(24, 80, dir.path(), &env, &["bash", "--norc", "--noprofile", "-i"]);
    bash.wait_for("~ $").keys(b"ls al\t\t").wait_for("almanac/");
    bash.keys(b"m\t").wait_for("ls almanac/");
    bash.keys(b"\x15ls --color=always -F\r").wait_for("beta");
    bash.keys(b"echo one two three\x1b[D\x1b[D\x1b[Dx\r").wait_for("thxree");
    bash.keys(b"for i in 1 2 3; do printf '\\e[3%dmcolour %d\\e[m\\n' $i $i; done\r")
        .wait_for("colour 3");
    assert_same_as_tmux_at(24, 80, &bash.take());
}
