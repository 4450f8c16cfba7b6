//! The programs and the keys pressed in them: each program in an
//! environment of its own (the same on both sides), on files the test
//! writes, and its keys in steps that each change what tmux shows.

use std::process::{Child, Command};

use super::Via;
use super::tmux::Tmux;

/// A key: by tmux's name, or text typed as it is.
pub enum Key {
    Named(&'static str),
    Text(&'static str),
}

impl Key {
    pub fn press(&self, pane: &Tmux) {
        if let Some(bytes) = self.as_xterm(pane) {
            return pane.bytes(&bytes);
        }
        match self {
            Key::Named(name) => pane.keys(&[name]),
            Key::Text(text) => pane.text(text),
        }
    }

    /// What xterm sends for this key where tmux sends something else.
    ///
    /// tmux is not xterm for Home and End: it sends `CSI 1 ~` and `CSI 4 ~`
    /// (its own terminal type's `khome` / `kend`) whatever the modes, which
    /// a program told TERM=xterm-256color (as a run is) does not know.
    /// xterm sends `CSI H` / `CSI F`, or `SS3 H` / `SS3 F` under
    /// application cursor keys (xterm's ctlseqs, "PC-Style Function
    /// Keys"): each pane gets those, by its own mode — on attach's
    /// terminal, the mode attach mirrored from the run.
    pub fn as_xterm(&self, pane: &Tmux) -> Option<Vec<u8>> {
        let final_byte = match self {
            Key::Named("Home") => b'H',
            Key::Named("End") => b'F',
            _ => return None,
        };
        let intro: &[u8] = if pane.flag("keypad_cursor_flag") {
            b"\x1bO"
        } else {
            b"\x1b["
        };
        Some([intro, &[final_byte]].concat())
    }

    fn describe(&self) -> String {
        match self {
            Key::Named(name) => name.to_string(),
            Key::Text(text) => format!("{text:?}"),
        }
    }
}

/// Keys pressed together, then both screens compared.
pub struct Step {
    pub keys: Vec<Key>,
    /// Compared only through attach (see the program's notes).
    attach_only: bool,
}

impl Step {
    pub fn describe(&self) -> String {
        self.keys.iter().map(Key::describe).collect::<Vec<_>>().join(" ")
    }
}

fn step(keys: Vec<Key>) -> Step {
    Step {
        keys,
        attach_only: false,
    }
}

use Key::{Named as K, Text as T};

/// `argv` under a fixed environment: the run's supervisor adds its own
/// variables, tmux its own; `env -i` leaves the program the same ones.
/// `{dir}` in an argument is the program's folder (its `HOME`).
fn in_fixed_env(dir: &std::path::Path, argv: &[&str]) -> Vec<String> {
    let dir = dir.display().to_string();
    let mut all: Vec<String> = ["env", "-i", "PATH=/usr/bin:/bin", "TERM=xterm-256color", "LANG=C.UTF-8"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    all.push(format!("HOME={dir}"));
    all.extend(argv.iter().map(|s| s.replace("{dir}", &dir)));
    all
}

pub struct Program {
    pub name: &'static str,
    pub argv: Vec<String>,
    /// The program has drawn its first screen in tmux.
    pub ready: fn(&[String]) -> bool,
    steps: Vec<Step>,
    /// Holds the files the program reads and its `HOME`.
    _dir: tempfile::TempDir,
    /// Processes the program shows (htop's), killed on drop.
    shown: Vec<Child>,
}

impl Drop for Program {
    fn drop(&mut self) {
        for child in &mut self.shown {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Program {
    pub fn steps(&self, via: Via) -> impl Iterator<Item = &Step> {
        self.steps.iter().filter(move |s| via == Via::Attach || !s.attach_only)
    }

    /// vim on a Rust file with syntax colours, a status line and search
    /// highlighting: cursor keys in normal and insert mode, paging,
    /// Home / End, the keypad typing digits in insert mode (vim maps
    /// `<k1>` to `1`), F1 for help.
    pub fn vim() -> Program {
        let dir = tempfile::tempdir().expect("temporary directory");
        let source: String = (1..=200)
            .map(|n| {
                let tail = if n % 17 == 0 {
                    " and a comment long enough to wrap ".repeat(4)
                } else {
                    String::new()
                };
                format!("fn item_{n}() -> u32 {{\n    {n} // the {n}th item{tail}\n}}\n")
            })
            .collect();
        std::fs::write(dir.path().join("sample.rs"), source).expect("write the sample");
        let argv = in_fixed_env(
            dir.path(),
            &[
                "vim",
                "-u",
                "NONE",
                "-i",
                "NONE",
                "-N",
                "-n",
                "--cmd",
                "syntax on",
                "-c",
                "set ruler laststatus=2 hlsearch",
                "{dir}/sample.rs",
            ],
        );
        let steps = vec![
            step(vec![K("Down"), K("Down"), K("Down")]),
            step(vec![K("NPage")]),
            step(vec![K("NPage"), K("PPage"), K("Up")]),
            step(vec![K("End")]),
            step(vec![K("Home")]),
            step(vec![K("Right"), K("Right"), K("Right")]),
            step(vec![T("/item_1"), K("Enter")]),
            step(vec![T("o")]),
            step(vec![K("KP1"), K("KP2"), K("KP+"), K("KP*"), K("KPEnter"), K("KP.")]),
            step(vec![K("Up"), K("End"), K("Left")]),
            step(vec![K("Escape"), K("PPage")]),
            step(vec![K("F1")]),
            step(vec![K("NPage")]),
            step(vec![T(":q"), K("Enter")]),
        ];
        Program {
            name: "vim",
            argv,
            ready: |lines| lines.iter().any(|l| l.contains("sample.rs")) && lines.iter().any(|l| l.contains("item_1")),
            steps,
            _dir: dir,
            shown: Vec::new(),
        }
    }

    /// less on long numbered lines: scrolling by line and page, Home / End,
    /// a search (its matches in standout), sideways with Left / Right.
    pub fn less() -> Program {
        let dir = tempfile::tempdir().expect("temporary directory");
        let text: String = (1..=300)
            .map(|n| format!("line {n:03} {}\n", "of a file wider than the screen ".repeat(1 + n % 5)))
            .collect();
        std::fs::write(dir.path().join("file.txt"), text).expect("write the file");
        let argv = in_fixed_env(dir.path(), &["less", "{dir}/file.txt"]);
        let mut steps = vec![
            step(vec![K("Down"), K("Down")]),
            step(vec![K("NPage")]),
            step(vec![K("PPage")]),
            step(vec![K("End"), K("Up")]),
            step(vec![K("Home"), K("Down")]),
            step(vec![T("/line 02"), K("Enter")]),
            step(vec![K("Right")]),
            step(vec![K("Left"), K("Down")]),
            step(vec![K("F1"), K("Up")]),
        ];
        // The keypad through the TUI: see `Program::htop`.
        steps.push(Step {
            keys: vec![K("KP2"), K("KP8"), K("Down")],
            attach_only: true,
        });
        Program {
            name: "less",
            argv,
            ready: |lines| lines.iter().any(|l| l.starts_with("line 001")),
            steps,
            _dir: dir,
            shown: Vec::new(),
        }
    }

    /// htop made still: no meters, three sleeping processes (`-p`), the
    /// columns PID, state and command, sorted by PID. The process list,
    /// the setup screen, help, the sort menu and the tree.
    ///
    /// The keypad is compared through attach only. The TUI reads its keys
    /// from a terminal left in numeric keypad mode (crossterm cannot read
    /// the application keypad's `SS3 p`…`SS3 y`), so a keypad key reaches
    /// the program as the character on it, as a terminal without keypad
    /// mode would send; tmux, like xterm, sends `SS3 m` for the keypad's
    /// minus when the program asked for the application keypad.
    pub fn htop() -> Program {
        let dir = tempfile::tempdir().expect("temporary directory");
        let config = dir.path().join(".config/htop");
        std::fs::create_dir_all(&config).expect("htop's config folder");
        std::fs::write(config.join("htoprc"), HTOPRC).expect("write htoprc");
        let shown: Vec<Child> = (0..3)
            .map(|_| Command::new("sleep").arg("1000").spawn().expect("start sleep"))
            .collect();
        let pids = shown.iter().map(|c| c.id().to_string()).collect::<Vec<_>>().join(",");
        let argv = in_fixed_env(dir.path(), &["htop", "-p", &pids]);
        let mut steps = vec![
            step(vec![K("Down")]),
            step(vec![K("End")]),
            step(vec![K("Home")]),
            step(vec![K("NPage")]),
            step(vec![K("PPage")]),
            step(vec![K("F2")]),
            step(vec![K("Down"), K("Down")]),
            step(vec![K("Right"), K("Down")]),
            step(vec![K("Left"), K("Up")]),
            step(vec![K("F10")]),
            step(vec![K("F1")]),
            step(vec![T("q")]),
            step(vec![K("F6")]),
            step(vec![K("Down"), K("Down")]),
            step(vec![K("Escape")]),
            step(vec![K("F5")]),
        ];
        steps.push(Step {
            keys: vec![K("KP-")],
            attach_only: true,
        });
        Program {
            name: "htop",
            argv,
            ready: |lines| lines.iter().filter(|l| l.contains("sleep 1000")).count() == 3,
            steps,
            _dir: dir,
            shown,
        }
    }
}

impl Program {
    /// A program that prints every attribute the emulator keeps and
    /// waits: how attach and the TUI draw them on a terminal that knows
    /// them all (tmux), checked against tmux drawing the same bytes.
    pub fn attributes() -> Program {
        let dir = tempfile::tempdir().expect("temporary directory");
        let mut s = String::new();
        for (sgr, word) in [
            ("1", "bold"),
            ("2", "dim"),
            ("3", "italic"),
            ("5", "blink"),
            ("7", "inverse"),
            ("8", "hidden"),
            ("9", "strike"),
        ] {
            s.push_str(&format!("\x1b[{sgr}m{word}\x1b[m "));
        }
        s.push_str("\r\n");
        for (n, word) in [(1, "single"), (2, "double"), (3, "curly"), (4, "dotted"), (5, "dashed")] {
            s.push_str(&format!("\x1b[4:{n}m{word}\x1b[m "));
        }
        s.push_str("\r\n\x1b[4:3;58;5;1mred curly\x1b[m \x1b[4:4;58;2;0;128;255;31;44mdotted on blue\x1b[m");
        s.push_str(" \x1b[21mdouble by 21\x1b[24m plain\r\n");
        s.push_str("\x1b[1;3;4:5;9;38;5;200;48;2;10;20;30mall at once\x1b[m \x1b[4:3m漢字\x1b[m end");
        std::fs::write(dir.path().join("attributes.bin"), s).expect("write the attributes");
        let argv = in_fixed_env(dir.path(), &["sh", "-c", "cat {dir}/attributes.bin; exec sleep 100000"]);
        Program {
            name: "attributes",
            argv,
            ready: |lines| lines.iter().any(|l| l.contains("all at once")),
            steps: Vec::new(),
            _dir: dir,
            shown: Vec::new(),
        }
    }
}

/// htop with nothing that changes by itself on screen: no meters, the
/// columns PID, state and command, sorted by PID.
const HTOPRC: &str = include_str!("../fixtures/htoprc");
