//! What the demo agent draws, styled after Claude Code's screens in
//! `reference/claude-code-2.1.197/screens/`. Writes go straight to fd 1,
//! unbuffered, so the PTY shows each state the moment the agent is in it.

use std::io::{self, Write as _};
use std::time::Duration;

use nix::errno::Errno;

use super::signals::terminate_requested;
use super::{BANNER_TITLE, PERMISSION_QUESTION, Stop, THINKING};

/// Spinner frames, as Claude Code cycles them.
const SPINNER_FRAMES: [char; 6] = ['·', '✢', '✳', '✶', '✻', '✽'];
/// 10 Hz: the redraw rate docs/design.md §10's spinner budget assumes.
pub(super) const SPINNER_INTERVAL: Duration = Duration::from_millis(100);
/// Rule width when the terminal does not say (a pipe, or no size set).
const DEFAULT_COLUMNS: u16 = 80;

pub(super) struct Screen {
    out: io::Stdout,
    tty: bool,
}

impl Screen {
    pub(super) fn new() -> Self {
        let out = io::stdout();
        let tty = nix::unistd::isatty(&out).unwrap_or(false);
        Self { out, tty }
    }

    pub(super) fn is_tty(&self) -> bool {
        self.tty
    }

    /// Writes all of `bytes`. A write blocked on a reader that stopped
    /// reading gives up only for SIGTERM; SIGINT waits for the next check.
    pub(super) fn write(&self, bytes: &[u8]) -> Result<(), Stop> {
        let mut rest = bytes;
        while !rest.is_empty() {
            match nix::unistd::write(&self.out, rest) {
                Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero).into()),
                Ok(n) => rest = &rest[n..],
                Err(Errno::EINTR) if terminate_requested() => return Err(Stop::Terminated),
                Err(Errno::EINTR) => {}
                Err(err) => return Err(err.into()),
            }
        }
        Ok(())
    }

    /// `text` and a newline, in one write.
    pub(super) fn line(&self, text: &str) -> Result<(), Stop> {
        self.write(format!("{text}\n").as_bytes())
    }

    /// `text` on a line of its own, over whatever the current line showed
    /// (a spinner frame, the prompt, an echoed `^C`).
    pub(super) fn end_line(&self, text: &str) -> Result<(), Stop> {
        if self.tty {
            self.write(format!("\r\x1b[2K{text}\n").as_bytes())
        } else {
            self.line(text)
        }
    }

    pub(super) fn clear_line(&self) -> Result<(), Stop> {
        if self.tty {
            self.write(b"\r\x1b[2K")?;
        }
        Ok(())
    }

    pub(super) fn spinner(&self, frame: usize) -> Result<(), Stop> {
        self.write(spinner_frame(frame).as_bytes())
    }

    /// A spinner frame with the turn's clock, as Claude Code's.
    pub(super) fn ticking(&self, frame: usize, elapsed: Duration) -> Result<(), Stop> {
        let glyph = SPINNER_FRAMES[frame % SPINNER_FRAMES.len()];
        let secs = elapsed.as_secs();
        self.write(
            format!("\r\x1b[2K\x1b[38;5;174m{glyph} {THINKING}\x1b[0m \x1b[2m({secs}s · ctrl+c to interrupt)\x1b[0m")
                .as_bytes(),
        )
    }

    pub(super) fn banner(&self) -> Result<(), Stop> {
        let cwd = std::env::current_dir()
            .map(|dir| dir.display().to_string())
            .unwrap_or_else(|_| "?".into());
        // A pipe is a subagent's output, read by its parent: no hints.
        self.write(banner(&cwd, self.tty).as_bytes())
    }

    pub(super) fn permission_prompt(&self) -> Result<(), Stop> {
        let columns = if self.tty {
            crossterm::terminal::window_size()
                .ok()
                .map(|size| size.columns)
                .filter(|&columns| columns > 0)
                .unwrap_or(DEFAULT_COLUMNS)
        } else {
            DEFAULT_COLUMNS
        };
        self.write(permission_prompt(columns).as_bytes())
    }

    /// Prints what a Rust panic prints, then aborts: the process dies by SIGABRT.
    pub(super) fn crash(&self) -> ! {
        let message = format!(
            "\nthread 'main' panicked at {}:{}:{}:\ndemo-agent: crash requested with --crash\n\
             note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
            file!(),
            line!(),
            column!()
        );
        // Best effort: the abort is what the test looks for.
        let _ = io::stderr().write_all(message.as_bytes());
        std::process::abort()
    }
}

fn spinner_frame(frame: usize) -> String {
    let glyph = SPINNER_FRAMES[frame % SPINNER_FRAMES.len()];
    format!("\r\x1b[2K\x1b[38;5;174m{glyph} {THINKING}\x1b[0m \x1b[2m(ctrl+c to interrupt)\x1b[0m")
}

fn banner(cwd: &str, hints: bool) -> String {
    let mut banner = format!(
        "{BANNER_TITLE} {} — the built-in demo harness of agents\n  cwd: {cwd}\n",
        env!("CARGO_PKG_VERSION")
    );
    if hints {
        banner.push_str("  try: hello · ask · flood 100K · spawn 2 · stall rate · fail · exit\n");
    }
    banner
}

/// Claude Code's permission prompt for a Bash command, with Yes and No.
fn permission_prompt(columns: u16) -> String {
    let rule = "─".repeat(usize::from(columns.clamp(20, 200)));
    format!(
        "● Bash(cargo test --workspace)\n  ⎿  Waiting…\n{rule}\n Bash command\n   \
         cargo test --workspace\n   Run the test suite\n {PERMISSION_QUESTION}\n \
         ❯ 1. Yes\n   2. No\n Esc to cancel\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_permission_prompt_reads_like_claude_codes() {
        let prompt = permission_prompt(100);
        for line in [" Do you want to proceed?", " ❯ 1. Yes", "   2. No", " Esc to cancel"] {
            assert!(prompt.lines().any(|l| l == line), "{line:?} in {prompt}");
        }
        assert!(prompt.contains(&"─".repeat(100)));
    }

    #[test]
    fn the_spinner_redraws_one_line_in_place() {
        let frames: Vec<String> = (0..7).map(spinner_frame).collect();
        assert!(frames.iter().all(|f| f.starts_with('\r') && !f.contains('\n')));
        assert!(frames.iter().all(|f| f.contains(THINKING)));
        assert_ne!(frames[0], frames[1]);
        assert_eq!(frames[0], frames[6]);
    }

    #[test]
    fn the_banner_names_the_harness_version_and_cwd() {
        let banner = banner("/src/app", true);
        assert!(banner.starts_with(&format!("{BANNER_TITLE} {}", env!("CARGO_PKG_VERSION"))));
        assert!(banner.contains("cwd: /src/app\n"));
        assert!(banner.contains("try: "));
        assert!(!super::banner("/src/app", false).contains("try: "));
    }
}
