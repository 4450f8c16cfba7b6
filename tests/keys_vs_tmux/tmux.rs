//! A tmux server of the test's own and what its pane shows: text, every
//! cell's attributes (`capture-pane -e`, read by `capture.rs`) and the
//! cursor, whole or cut to a rectangle (a TUI pane inside its border).

use std::path::PathBuf;
use std::process::Command;

use super::capture::{self, Printed};

/// A tmux server on a socket in a private directory, killed on drop.
pub struct Tmux {
    _dir: tempfile::TempDir,
    socket: PathBuf,
}

impl Tmux {
    /// `argv` in a `cols`×`rows` pane, with `env` added to tmux's own.
    pub fn start(rows: u16, cols: u16, env: &[(&str, String)], argv: &[String]) -> Tmux {
        let dir = tempfile::tempdir().expect("temporary directory");
        let socket = dir.path().join("tmux.sock");
        let server = Tmux { _dir: dir, socket };
        let command = argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ");
        let (cols, rows) = (cols.to_string(), rows.to_string());
        let mut args = vec!["-f", "/dev/null", "new-session", "-d", "-x", &cols, "-y", &rows];
        let env: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for e in &env {
            args.extend(["-e", e.as_str()]);
        }
        // `remain-on-exit`: a program that quits leaves its last screen to
        // compare (and to report) rather than ending the server.
        let command = format!("exec {command}");
        args.push(&command);
        server.tmux(&args);
        server.tmux(&["set-option", "-g", "remain-on-exit", "on"]);
        server
    }

    fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            // The pane's programs see only what the test gives them.
            .env_remove("NO_COLOR")
            .env_remove("TMUX")
            .env_remove("AGENTS_RUN_ID")
            .output()
            .unwrap_or_else(|err| panic!("cannot run tmux ({err}); this test needs tmux installed (CI installs it)"));
        assert!(
            output.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("tmux prints UTF-8")
    }

    /// Presses keys by tmux's names (`Down`, `NPage`, `F1`, `KP1`, text).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Types text as it is (`send-keys -l`: no key names looked up).
    pub fn text(&self, text: &str) {
        self.tmux(&["send-keys", "-l", text]);
    }

    /// Sends bytes as they are, as a terminal's key would.
    pub fn bytes(&self, bytes: &[u8]) {
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut args = vec!["send-keys", "-H"];
        args.extend(hex.iter().map(String::as_str));
        self.tmux(&args);
    }

    /// The window (and its one pane) resized, as a user's terminal would be.
    pub fn resize(&self, rows: u16, cols: u16) {
        self.tmux(&["resize-window", "-x", &cols.to_string(), "-y", &rows.to_string()]);
    }

    /// A pane flag as tmux's formats name it (`keypad_cursor_flag`, …).
    pub fn flag(&self, name: &str) -> bool {
        self.tmux(&["display", "-p", &format!("#{{{name}}}")]).trim() == "1"
    }

    /// What the pane shows now.
    pub fn shot(&self) -> Shot {
        // `-N`: trailing blanks too, whose background matters.
        let captured = self.tmux(&["capture-pane", "-p", "-e", "-N"]);
        let cursor = self.tmux(&["display", "-p", "#{cursor_flag} #{cursor_y} #{cursor_x}"]);
        let numbers: Vec<u16> = cursor.split_whitespace().filter_map(|n| n.parse().ok()).collect();
        let [shown, row, col] = numbers[..] else {
            panic!("unexpected cursor report {cursor:?}")
        };
        Shot {
            rows: capture::cells(&captured),
            cursor: (row, col),
            cursor_shown: shown == 1,
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        // Best effort, and never a panic while a failed test unwinds.
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// A word for `sh -c`, quoted.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A screen: cells by row, and the cursor.
#[derive(Clone, PartialEq, Eq)]
pub struct Shot {
    pub rows: Vec<Vec<Printed>>,
    pub cursor: (u16, u16),
    pub cursor_shown: bool,
}

impl Shot {
    /// Each row's text, trailing blanks cut.
    pub fn lines(&self) -> Vec<String> {
        self.rows
            .iter()
            .map(|row| {
                let line: String = row.iter().map(|c| c.text.as_str()).collect();
                line.trim_end().to_string()
            })
            .collect()
    }

    /// The `height`×`width` rectangle at (`top`, `left`), the cursor in its
    /// coordinates (hidden when outside it).
    pub fn crop(&self, top: usize, left: usize, height: usize, width: usize) -> Shot {
        let rows = self
            .rows
            .iter()
            .skip(top)
            .take(height)
            .map(|row| row.iter().skip(left).take(width).cloned().collect())
            .collect();
        let (row, col) = (usize::from(self.cursor.0), usize::from(self.cursor.1));
        let inside = (top..top + height).contains(&row) && (left..left + width).contains(&col);
        Shot {
            rows,
            cursor: if inside {
                ((row - top) as u16, (col - left) as u16)
            } else {
                (0, 0)
            },
            cursor_shown: self.cursor_shown && inside,
        }
    }

    /// How this screen differs from `reference`, as report lines: text,
    /// cursor, then the attributes of every cell both printed.
    pub fn differences(&self, reference: &Shot) -> Vec<String> {
        let mut out = Vec::new();
        let (ours, theirs) = (self.lines(), reference.lines());
        if ours.len() != theirs.len() {
            out.push(format!("{} rows, the reference {}", ours.len(), theirs.len()));
        }
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            if a != b {
                out.push(format!("row {i:2}: {a:?}\n   tmux: {b:?}"));
            }
        }
        let cursor = |s: &Shot| s.cursor_shown.then_some(s.cursor);
        if cursor(self) != cursor(reference) {
            out.push(format!("cursor {:?}, tmux {:?}", cursor(self), cursor(reference)));
        }
        let pens = |s: &Shot| -> Vec<capture::PenRow> {
            s.rows
                .iter()
                .map(|row| row.iter().map(|c| (!c.tail).then_some(c.pen)).collect())
                .collect()
        };
        out.extend(capture::pen_differences(&pens(self), &pens(reference), 6));
        out
    }
}
