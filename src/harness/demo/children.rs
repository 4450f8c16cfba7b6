//! Processes the demo agent starts: subagents (a turn's helpers, which it
//! waits for) and descendants (left running on purpose, so supervisors can be
//! tested on process groups and sessions). Both re-execute the current
//! binary's `demo-agent`, so nothing but this binary has to be installed.

use std::io::{self, Read as _};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::process::CommandExt as _;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{SigHandler, Signal, signal};

use super::screen::Screen;
use super::signals::Signals;
use super::{DemoArgs, SUBCOMMAND, Stop};

/// How long a descendant lingers before leaving by itself: long enough for
/// any test, short enough that a test which forgot it does not leave it for good.
const DESCENDANT_LINGER_SECS: u64 = 1000;

/// `agents demo-agent <args>` from the binary that runs now.
fn demo_agent(args: &DemoArgs) -> io::Result<Command> {
    let mut command = Command::new(std::env::current_exe()?);
    command.arg(SUBCOMMAND).args(args.to_cli_args());
    Ok(command)
}

/// A descendant's whole life: nothing, for `duration`. Its signal
/// dispositions were set by [`spawn_descendant`] before exec.
pub(super) fn linger(duration: Duration) {
    std::thread::sleep(duration);
}

/// Starts a descendant and returns its pid. It is never waited for.
///
/// - `escaped == false`: it stays in the agent's process group and session,
///   and keeps the PTY open through its stderr, like a dev server an agent's
///   shell tool started with `nohup … &`: it outlives the agent, and the PTY
///   reaches end of file only when the group is cleaned up.
///
///   SIGHUP is ignored from exec on, as `nohup` does: when the agent (the
///   PTY's session leader) exits, the kernel hangs up its foreground process
///   group, and the descendant must outlive that, even if the agent dies
///   before the descendant's own code runs.
/// - `escaped == true`: it calls setsid() before it runs, so it is in
///   another session and process group, with all stdio on /dev/null: the PTY
///   closes when the agent exits, and the descendant lives on.
pub(super) fn spawn_descendant(escaped: bool) -> io::Result<u32> {
    let mut command = demo_agent(&DemoArgs {
        linger_secs: Some(DESCENDANT_LINGER_SECS),
        ..DemoArgs::default()
    })?;
    command.stdin(Stdio::null()).stdout(Stdio::null());
    if escaped {
        command.stderr(Stdio::null());
    }
    // SAFETY: sigaction(2) and setsid(2) are async-signal-safe, as required
    // between fork and exec. setsid cannot fail here: the forked child is
    // never a group leader. Both happen before exec, so when spawn() returns,
    // the pid we print already has its final session and dispositions.
    unsafe {
        command.pre_exec(move || {
            // A parent started with `--ignore-sigterm` (or `--ignore-sigint`)
            // must not pass that on: the descendant dies to both.
            signal(Signal::SIGINT, SigHandler::SigDfl)?;
            signal(Signal::SIGTERM, SigHandler::SigDfl)?;
            signal(Signal::SIGHUP, SigHandler::SigIgn)?;
            if escaped {
                nix::unistd::setsid()?;
            }
            Ok(())
        });
    }
    // Dropping a std Child neither kills nor waits for it.
    Ok(command.spawn()?.id())
}

/// A subagent: `demo-agent --once --prompt "subtask K"` on a pipe.
pub(super) struct Subagent {
    number: u16,
    child: Child,
    stdout: Option<ChildStdout>,
    /// The end of its output that is not a whole line yet.
    partial: Vec<u8>,
}

impl Subagent {
    pub(super) fn spawn(number: u16, think_ms: u64) -> io::Result<Self> {
        let mut child = demo_agent(&DemoArgs {
            prompt: Some(format!("subtask {number}")),
            exit_after_prompt: true,
            think_ms,
            ..DemoArgs::default()
        })?
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()?;
        let stdout = child.stdout.take();
        Ok(Self {
            number,
            child,
            stdout,
            partial: Vec::new(),
        })
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(super) fn number(&self) -> u16 {
        self.number
    }

    pub(super) fn wait(&mut self) -> io::Result<ExitStatus> {
        self.child.wait()
    }

    /// Ends it now (SIGKILL) and reaps it.
    pub(super) fn kill(&mut self) {
        // It may have exited already; either way it is gone afterwards.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Reads what is ready and returns the whole lines; at end of output,
    /// also the last line if it had no newline.
    fn read_lines(&mut self) -> io::Result<Vec<String>> {
        let Some(stdout) = &mut self.stdout else {
            return Ok(Vec::new());
        };
        let mut buf = [0u8; 4096];
        match stdout.read(&mut buf) {
            Ok(0) => {
                self.stdout = None;
                Ok(lines(&std::mem::take(&mut self.partial)))
            }
            Ok(n) => {
                self.partial.extend_from_slice(&buf[..n]);
                let whole = self.partial.iter().rposition(|&b| b == b'\n').map_or(0, |at| at + 1);
                let whole: Vec<u8> = self.partial.drain(..whole).collect();
                Ok(lines(&whole))
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => Ok(Vec::new()),
            Err(err) => Err(err),
        }
    }
}

/// The non-empty lines of `bytes`, without line endings.
fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|line| line.trim_end_matches('\r').to_string())
        .filter(|line| !line.is_empty())
        .collect()
}

/// Shows the subagents' lines as they come, each tagged with its subtask,
/// until every one has closed its output. Lines of different subagents
/// interleave in whatever order they arrive; each one's own lines keep order.
pub(super) fn relay(subagents: &mut [Subagent], signals: &Signals, screen: &Screen) -> Result<(), Stop> {
    loop {
        let open: Vec<usize> = (0..subagents.len())
            .filter(|&i| subagents[i].stdout.is_some())
            .collect();
        if open.is_empty() {
            return Ok(());
        }
        let ready = {
            let fds: Vec<BorrowedFd<'_>> = open
                .iter()
                .filter_map(|&i| subagents[i].stdout.as_ref().map(AsFd::as_fd))
                .collect();
            signals.wait(&fds, None)?
        };
        for (&i, _) in open.iter().zip(ready).filter(|(_, ready)| *ready) {
            let subagent = &mut subagents[i];
            for line in subagent.read_lines()? {
                screen.line(&format!("  ⎿  [subtask {}] {line}", subagent.number))?;
            }
        }
    }
}
