//! The built-in demo agent, `agents demo-agent`: a pretend coding-agent
//! harness that lives in a PTY the way Claude Code does — a banner, a `> `
//! prompt, a thinking spinner, answers, permission prompts, subagents, log
//! floods — and, on request, each awkward thing a supervisor must survive:
//! ignoring SIGTERM, hanging, crashing, leaving descendants behind.
//! `agents demo` runs it so a newcomer sees agents at work without any real
//! agent installed; the integration tests run it to reach every run state
//! and cancel path on real PTYs and processes.
//!
//! # Life of the agent
//!
//! 1. `--slow-start MS`: wait before anything is printed.
//! 2. The banner ([`BANNER_TITLE`], version, cwd).
//! 3. `--descendant`, `--escaped-descendant`: start the lingering children and
//!    print their pids ([`DESCENDANT_PID`], [`ESCAPED_DESCENDANT_PID`]).
//! 4. The **opening turn**, made of whichever of `--flood`, `--ask`,
//!    `--subagents`, `--prompt` were given, in that order. Only `--prompt`
//!    thinks first; it goes through the same commands as a typed line.
//! 5. `--crash` aborts here; `--hang` blocks here, forever.
//! 6. The agent exits with `--exit-code` (default 0) after its first turn —
//!    the opening turn, or else the first typed prompt — when `--once`
//!    (`--exit-after-prompt`) or `--exit-code` is given, or when the opening
//!    turn was only a flood (`--flood N` alone is a one-shot job).
//! 7. Otherwise it loops: `> `, read a line, think, answer.
//!
//! Typed lines: `exit`, `/exit` (exit 0, prints [`BYE`]); `fail` (exit
//! [`EXIT_FAIL`]); `ask`; `flood BYTES`; `spawn N`; `stall [rate|usage|
//! overloaded|quota]` (a turn that spins until interrupted, after saying
//! the limit it hit); anything else is answered
//! with `● demo: you said "<line>"`. A bracketed paste (the terminal asks
//! for them) is one prompt, its lines joined. End of input (Ctrl-D) exits 0.
//!
//! # Signals
//!
//! SIGINT during a turn (thinking, flooding, asking, waiting for subagents)
//! stops the turn and prints [`INTERRUPTED`], like real agents; a one-shot
//! run then exits [`EXIT_INTERRUPTED`], an interactive one shows its prompt
//! again. SIGINT anywhere else (idle prompt, slow start) exits
//! [`EXIT_INTERRUPTED`] after printing `^C exit`. SIGTERM prints
//! [`TERMINATED`] and exits [`EXIT_TERMINATED`]. `--ignore-sigint` and
//! `--ignore-sigterm` set the signal to ignored instead. While hanging, the
//! signals that are not ignored have their default action (the process dies
//! by the signal). An internal error exits 1 with a message on stderr.
//!
//! All output goes to stdout except the `--crash` message (stderr). The
//! terminal stays in cooked mode, so typed lines are echoed by the PTY; only
//! the permission prompt reads single keys, and only the flood turns off
//! `\n` → `\r\n` translation (see [`flood_payload`]).

mod args;
mod children;
mod command;
mod flood;
mod input;
mod screen;
mod signals;
mod tty;

use std::io;
use std::time::{Duration, Instant};

use anyhow::Context as _;

pub use args::DemoArgs;
pub use flood::flood_payload;

use children::Subagent;
use command::{Command, parse_command};
use input::Input;
use screen::Screen;
use signals::Signals;

/// The subcommand that runs the demo agent; children re-execute the current
/// binary with it, so every binary embedding [`DemoArgs`] must use this name.
pub const SUBCOMMAND: &str = "demo-agent";

/// `fail` at the prompt: a harness that gave up with an error.
pub const EXIT_FAIL: i32 = 3;
/// SIGINT outside a turn, or during a one-shot turn: 128 + SIGINT, as shells report it.
pub const EXIT_INTERRUPTED: i32 = 130;
/// SIGTERM (when not ignored): 128 + SIGTERM.
pub const EXIT_TERMINATED: i32 = 143;

/// Start of the banner's first line.
pub const BANNER_TITLE: &str = "✻ demo-agent";
/// The idle prompt: the agent waits for a line.
pub const PROMPT: &str = "> ";
/// Part of the spinner line while a turn thinks.
pub const THINKING: &str = "Thinking…";
/// Printed when SIGINT stops a turn.
pub const INTERRUPTED: &str = "^C interrupted";
/// Printed when SIGTERM ends the agent.
pub const TERMINATED: &str = "terminated";
/// Printed when the agent leaves on `exit` or end of input.
pub const BYE: &str = "bye";
/// The permission prompt's question, as Claude Code words it.
pub const PERMISSION_QUESTION: &str = "Do you want to proceed?";
/// Printed after the permission prompt is answered `1`, `y` or Enter.
pub const APPROVED: &str = "approved";
/// Printed after the permission prompt is answered `2`, `n` or Esc.
pub const DENIED: &str = "denied";
/// Line before a flood's payload: `● flood: writing <N> bytes`.
pub const FLOOD_START: &str = "● flood: writing ";
/// Line after a flood's payload: `● flood: wrote <N> bytes`.
pub const FLOOD_END: &str = "● flood: wrote ";
/// Line after all subagents ended: `● subagents done: <ok> succeeded, <n> failed`.
pub const SUBAGENTS_DONE: &str = "● subagents done: ";
/// Line start naming the descendant that stays in the agent's process group.
pub const DESCENDANT_PID: &str = "descendant pid=";
/// Line start naming the descendant that left the agent's session.
pub const ESCAPED_DESCENDANT_PID: &str = "escaped descendant pid=";

/// Runs the demo agent on the current stdin/stdout (a PTY); returns the
/// process exit code.
pub fn run(args: &DemoArgs) -> anyhow::Result<i32> {
    if let Some(secs) = args.linger_secs {
        children::linger(Duration::from_secs(secs));
        return Ok(0);
    }
    let signals = Signals::install(args.ignore_sigint, args.ignore_sigterm).context("installing signal handlers")?;
    let _paste = tty::bracketed_paste().context("asking for bracketed paste")?;
    let mut agent = Agent {
        args,
        signals,
        screen: Screen::new(),
        input: Input::new(),
    };
    let ended = agent.session();
    // The signal that ended the session may have cut a line short.
    let screen = &agent.screen;
    match ended {
        Ok(code) => Ok(code),
        Err(Stop::Interrupted) => {
            // Best effort: the exit code is the message that matters.
            let _ = screen.end_line("^C exit");
            Ok(EXIT_INTERRUPTED)
        }
        Err(Stop::Terminated) => {
            let _ = screen.end_line(TERMINATED);
            Ok(EXIT_TERMINATED)
        }
        Err(Stop::Io(err)) => Err(err).context("demo agent terminal I/O"),
    }
}

/// What cuts the agent's current activity short.
#[derive(Debug)]
enum Stop {
    /// SIGINT: a turn ends and the agent goes on; outside a turn the agent exits 130.
    Interrupted,
    /// SIGTERM: the agent exits 143.
    Terminated,
    /// The terminal went away or refused a read or write.
    Io(io::Error),
}

impl From<io::Error> for Stop {
    fn from(err: io::Error) -> Self {
        Stop::Io(err)
    }
}

impl From<nix::Error> for Stop {
    fn from(err: nix::Error) -> Self {
        Stop::Io(err.into())
    }
}

struct Agent<'a> {
    args: &'a DemoArgs,
    signals: Signals,
    screen: Screen,
    input: Input,
}

impl Agent<'_> {
    fn session(&mut self) -> Result<i32, Stop> {
        if let Some(ms) = self.args.slow_start {
            self.signals.sleep_until(Instant::now() + Duration::from_millis(ms))?;
        }
        self.screen.banner()?;
        if self.args.descendant {
            let pid = children::spawn_descendant(false)?;
            self.screen.line(&format!("{DESCENDANT_PID}{pid}"))?;
        }
        if self.args.escaped_descendant {
            let pid = children::spawn_descendant(true)?;
            self.screen.line(&format!("{ESCAPED_DESCENDANT_PID}{pid}"))?;
        }
        let one_shot = self.args.one_shot();
        let success = self.args.exit_code.map_or(0, i32::from);
        if self.args.has_opening_turn() {
            match self.opening_turn() {
                Ok(Some(code)) => return Ok(code),
                Ok(None) => {}
                Err(Stop::Interrupted) => {
                    self.screen.end_line(INTERRUPTED)?;
                    if one_shot {
                        return Ok(EXIT_INTERRUPTED);
                    }
                }
                Err(stop) => return Err(stop),
            }
        }
        if self.args.crash {
            self.screen.crash();
        }
        if self.args.hang {
            match self.hang()? {}
        }
        if one_shot && self.args.has_opening_turn() {
            return Ok(success);
        }
        loop {
            self.screen.write(PROMPT.as_bytes())?;
            let Some(line) = self.input.line(&self.signals)? else {
                self.screen.end_line(BYE)?;
                return Ok(0);
            };
            let command = parse_command(&line);
            if command == Command::Empty {
                continue;
            }
            match self.command(command) {
                Ok(Some(code)) => return Ok(code),
                Ok(None) => {}
                Err(Stop::Interrupted) => {
                    self.screen.end_line(INTERRUPTED)?;
                    if one_shot {
                        return Ok(EXIT_INTERRUPTED);
                    }
                    continue;
                }
                Err(stop) => return Err(stop),
            }
            if one_shot {
                return Ok(success);
            }
        }
    }

    /// Returns the exit code when the turn ends the agent (`--prompt exit`).
    fn opening_turn(&mut self) -> Result<Option<i32>, Stop> {
        if let Some(bytes) = self.args.flood {
            self.flood(bytes)?;
        }
        if self.args.ask {
            self.ask()?;
        }
        if let Some(count) = self.args.subagents {
            self.subagents(count)?;
        }
        if let Some(prompt) = &self.args.prompt {
            // Shown as if typed: the terminal only echoes what it was sent.
            self.screen.line(&format!("{PROMPT}{prompt}"))?;
            return self.command(parse_command(prompt));
        }
        Ok(None)
    }

    /// Runs one command; returns the exit code when it ends the agent.
    fn command(&mut self, command: Command) -> Result<Option<i32>, Stop> {
        match command {
            Command::Empty => {}
            Command::Exit => {
                self.screen.line(BYE)?;
                return Ok(Some(0));
            }
            Command::Fail => {
                self.screen
                    .line(&format!("● demo: failing as asked (exit {EXIT_FAIL})"))?;
                return Ok(Some(EXIT_FAIL));
            }
            Command::Usage(usage) => self.screen.line(&format!("● demo: {usage}"))?,
            Command::Ask => {
                self.think()?;
                self.ask()?;
            }
            Command::Flood(bytes) => {
                self.think()?;
                self.flood(bytes)?;
            }
            Command::Spawn(count) => {
                self.think()?;
                self.subagents(count)?;
            }
            Command::Stall(cause) => {
                if let Some(cause) = cause {
                    self.screen.line(&format!("  ⎿  {}", cause.message()))?;
                }
                self.stall()?;
            }
            Command::Say(text) => {
                self.think()?;
                self.screen.line(&format!("● demo: you said \"{text}\""))?;
            }
        }
        Ok(None)
    }

    /// The spinner, redrawn in place until `--think-ms` has passed (and
    /// the `--think-until` file exists).
    fn think(&mut self) -> Result<(), Stop> {
        let deadline = Instant::now() + Duration::from_millis(self.args.think_ms);
        let held = || self.args.think_until.as_ref().is_some_and(|p| !p.exists());
        if self.args.think_ms == 0 && !held() {
            return Ok(());
        }
        if !self.screen.is_tty() {
            // A pipe (a subagent's stdout) gets one line, not frames.
            self.screen.line(&format!("✻ {THINKING}"))?;
            self.signals.sleep_until(deadline)?;
            while self.args.think_until.as_ref().is_some_and(|p| !p.exists()) {
                self.signals.sleep_until(Instant::now() + screen::SPINNER_INTERVAL)?;
            }
            return Ok(());
        }
        for frame in 0.. {
            self.screen.spinner(frame)?;
            let now = Instant::now();
            let held = self.args.think_until.as_ref().is_some_and(|p| !p.exists());
            if now >= deadline && !held {
                break;
            }
            let next = now + screen::SPINNER_INTERVAL;
            self.signals.sleep_until(if held { next } else { deadline.min(next) })?;
        }
        self.screen.clear_line()
    }

    /// A turn that goes nowhere until interrupted: the spinner and its
    /// clock tick, nothing else changes.
    fn stall(&mut self) -> Result<(), Stop> {
        let started = Instant::now();
        for frame in 0.. {
            self.screen.ticking(frame, started.elapsed())?;
            self.signals.sleep_until(Instant::now() + screen::SPINNER_INTERVAL)?;
        }
        Ok(())
    }

    fn ask(&mut self) -> Result<(), Stop> {
        self.screen.permission_prompt()?;
        let approved = {
            let _single_keys = tty::single_keys()?;
            loop {
                let Some(key) = self.input.key(&self.signals)? else {
                    // Nobody can answer any more: a real harness denies.
                    break false;
                };
                match key {
                    b'1' | b'y' | b'Y' | b'\r' | b'\n' => break true,
                    b'2' | b'n' | b'N' => break false,
                    // A lone Esc cancels; Esc with more bytes is an arrow or
                    // another key sequence, which this prompt ignores.
                    0x1b if self.input.buffered() == 0 => break false,
                    0x1b => self.input.discard(),
                    _ => {}
                }
            }
        };
        // `1` typed with Enter is one answer, not an answer and an empty line.
        self.input.skip_newline();
        self.screen
            .line(&format!("  ⎿  {}", if approved { APPROVED } else { DENIED }))
    }

    fn flood(&mut self, bytes: u64) -> Result<(), Stop> {
        self.screen.line(&format!("{FLOOD_START}{bytes} bytes"))?;
        {
            let _exact_newlines = tty::exact_newlines()?;
            let mut flood = flood::Flood::new(bytes);
            let mut chunk = Vec::with_capacity(flood::CHUNK_BYTES + flood::MAX_LINE_BYTES);
            while flood.fill(&mut chunk, flood::CHUNK_BYTES) {
                self.screen.write(&chunk)?;
                chunk.clear();
                self.signals.check()?;
            }
        }
        self.screen.line(&format!("{FLOOD_END}{bytes} bytes"))
    }

    fn subagents(&mut self, count: u16) -> Result<(), Stop> {
        let mut subagents = Vec::new();
        let started = (1..=count).try_for_each(|k| {
            let subagent = Subagent::spawn(k, self.args.think_ms)?;
            self.screen
                .line(&format!("● Agent(subtask {k}) pid={}", subagent.pid()))?;
            subagents.push(subagent);
            Ok(())
        });
        let relayed = started.and_then(|()| children::relay(&mut subagents, &self.signals, &self.screen));
        if let Err(stop) = relayed {
            // The turn is over: its subagents go with it.
            for subagent in &mut subagents {
                subagent.kill();
            }
            return Err(stop);
        }
        let mut succeeded = 0;
        for subagent in &mut subagents {
            let status = subagent.wait()?;
            succeeded += u16::from(status.success());
            self.screen
                .line(&format!("  ⎿  subtask {} ended: {status}", subagent.number()))?;
        }
        self.screen.line(&format!(
            "{SUBAGENTS_DONE}{succeeded} succeeded, {} failed",
            count - succeeded
        ))
    }

    /// Never returns `Ok`: blocks until a signal's default action ends the process.
    fn hang(&mut self) -> Result<std::convert::Infallible, Stop> {
        self.signals.restore_defaults()?;
        // A signal that came just before the defaults were back gets the
        // default action too, so a hanging agent always dies by the signal.
        match self.signals.check() {
            Err(Stop::Terminated) => nix::sys::signal::raise(nix::sys::signal::Signal::SIGTERM)?,
            Err(Stop::Interrupted) => nix::sys::signal::raise(nix::sys::signal::Signal::SIGINT)?,
            _ => {}
        }
        loop {
            nix::unistd::pause();
        }
    }
}
