//! `agents attach` in a tmux pane against a plain tmux pane running the same
//! command, through the same resizes (issue #31): after output scrolled, a
//! taller or wider window shows the rows tmux pulls back from its history,
//! and lines a narrower one pushed off come back rejoined.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{BIN, Home, PATIENCE, wait_until};

/// A tmux server on a private socket, killed on drop.
struct Tmux {
    _dir: tempfile::TempDir,
    socket: PathBuf,
}

impl Tmux {
    fn new() -> Tmux {
        let dir = tempfile::tempdir().expect("temporary directory");
        let socket = dir.path().join("tmux.sock");
        Tmux { _dir: dir, socket }
    }

    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run tmux ({e}); this test needs tmux installed"));
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn screen(&self, session: &str) -> Vec<String> {
        let text = self.run(&["capture-pane", "-p", "-t", session]);
        text.lines().map(|l| l.trim_end().to_owned()).collect()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

/// The same `script` in a plain tmux pane and in an agents run attached in
/// another, both 80x24; then each size of `sizes` given to both windows,
/// the screens compared after each.
fn assert_attach_resizes_like_tmux(script: &str, sizes: &[(u16, u16)]) {
    let home = Home::new();
    let tmux = Tmux::new();
    let plain = format!("stty -echo; sh -c '{script}'");
    tmux.run(&[
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "plain",
        "-x",
        "80",
        "-y",
        "24",
        &plain,
    ]);
    let env = |name: &str, value: &std::path::Path| format!("{name}={}", value.display());
    let (agents_home, config) = (
        env("AGENTS_HOME", home.path()),
        env("XDG_CONFIG_HOME", home.config.path()),
    );
    let attached = format!("{BIN} run --size 80x24 cmd -- sh -c 'stty -echo; {script}'");
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "agents",
        "-x",
        "80",
        "-y",
        "24",
        "-e",
        &agents_home,
        "-e",
        &config,
        &attached,
    ]);
    let done = |screen: &[String]| screen.iter().any(|row| row == "$");
    wait_until("both panes show the prompt", PATIENCE, &mut || {
        done(&tmux.screen("plain")) && done(&tmux.screen("agents"))
    });
    for &(rows, cols) in sizes {
        let (r, c) = (rows.to_string(), cols.to_string());
        for session in ["plain", "agents"] {
            tmux.run(&["resize-window", "-t", session, "-x", &c, "-y", &r]);
        }
        let same = || tmux.screen("agents") == tmux.screen("plain");
        let settled = std::time::Instant::now();
        while !same() && settled.elapsed() < PATIENCE / 6 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(
            tmux.screen("agents"),
            tmux.screen("plain"),
            "agents attach differs from tmux at {cols}x{rows} after {sizes:?}"
        );
    }
}

#[test]
fn attach_grown_after_output_pulls_the_last_lines_back_like_tmux() {
    // The case: `seq 1 200` at 80x24, the window grown to 200x50.
    assert_attach_resizes_like_tmux("seq 1 200; printf \"\\$ \"; exec sleep 100000", &[(50, 200)]);
}

#[test]
fn attach_narrowed_then_widened_rejoins_lines_like_tmux() {
    // Lines of every length up to 116 columns: a narrow window pushes
    // their rows off the top; widened, they come back rejoined.
    let ragged = "awk \"BEGIN { for (i = 1; i <= 60; i++) { s = sprintf(\\\"%*s\\\", (i * 37) % 117, \\\"\\\"); \
                  gsub(/ /, \\\"x\\\", s); print i \\\":\\\" s } }\"; printf \"\\$ \"; exec sleep 100000";
    assert_attach_resizes_like_tmux(ragged, &[(24, 30), (24, 80), (50, 200)]);
}
