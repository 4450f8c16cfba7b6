//! `agents attach`: the run's screen, full-size, in the user's terminal. The
//! screen is drawn from a local emulator fed by the daemon, never by passing
//! the agent's bytes through.

use std::io::{IsTerminal, Read, Write};
use std::time::{Duration, Instant};

use anyhow::Result;
use crossterm::{cursor, execute, terminal};
use ratatui::Terminal as Screen;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::api::{AttachParams, AttachResult, ResizeParams, RunRecord, RunRef, method};
use crate::client::Client;
use crate::paths::Paths;
use crate::protocol::Frame;
use crate::protocol::screen::{Modes, ScreenMirror, ScreenUpdate, mode};
use crate::tui::backend::StyledBackend;
use crate::tui::pane::PaneView;

pub use super::doctor::doctor;
pub use super::logs::{export_cast, logs};

/// Ctrl-a, the prefix key: Ctrl-a d detaches, Ctrl-a Ctrl-a sends one Ctrl-a.
const PREFIX: &[u8] = b"\x01";
/// Ctrl-a as the user's terminal sends it while the run has the kitty
/// keyboard protocol on (mirrored onto that terminal): `a` (97) with Ctrl.
/// A terminal writes a key's sequence whole, so it is looked for within
/// one read.
const PREFIX_KITTY: &[u8] = b"\x1b[97;5u";
/// At most ~60 frames per second (docs/design.md §9).
const FRAME: Duration = Duration::from_millis(16);
/// How often attach to a remote run asks the daemon for its host's link
/// (`hosts.list`): the banner counts seconds, so once a second.
const LINK_POLL: Duration = Duration::from_secs(1);

/// Restores the user's terminal however we leave (error, panic, detach).
/// While attached, the window's title names the run and how to leave it
/// (the screen below is all the run's): `NAME · Ctrl-a d detaches`. The
/// title found is saved on xterm's title stack and taken back on leaving;
/// a terminal without one ignores both.
struct RawGuard;

impl RawGuard {
    fn enter(name: &str) -> Result<RawGuard> {
        terminal::enable_raw_mode()?;
        let guard = RawGuard;
        let name: String = name.chars().filter(|c| !c.is_control()).collect();
        let title = format!("{}\x1b]2;{name} · Ctrl-a d detaches\x07", crate::tui::TITLE_PUSH);
        execute!(
            std::io::stdout(),
            crossterm::style::Print(title),
            terminal::EnterAlternateScreen
        )?;
        Ok(guard)
    }
}

impl Drop for RawGuard {
    fn drop(&mut self) {
        let _ = execute!(
            std::io::stdout(),
            crossterm::style::Print(crate::tui::TITLE_POP),
            terminal::LeaveAlternateScreen,
            cursor::Show
        );
        let _ = terminal::disable_raw_mode();
    }
}

/// The input modes of the user's terminal that follow the run's: which
/// sequences its cursor keys, keypad, pastes and mouse send. All off again
/// when attach ends.
#[derive(Default)]
struct TerminalModes(Modes);

impl TerminalModes {
    fn mirror(&mut self, want: Modes) {
        let have = self.0;
        if have == want {
            return;
        }
        let mut out = String::new();
        for (bit, on, off) in [
            (mode::APP_CURSOR, "\x1b[?1h", "\x1b[?1l"),
            (mode::APP_KEYPAD, "\x1b=", "\x1b>"),
            (mode::BRACKETED_PASTE, "\x1b[?2004h", "\x1b[?2004l"),
            // Pushed and popped, so whatever the user's terminal had
            // before comes back.
            (mode::KITTY_KEYBOARD, "\x1b[>1u", "\x1b[<u"),
        ] {
            if have.has(bit) != want.has(bit) {
                out.push_str(if want.has(bit) { on } else { off });
            }
        }
        if (have.mouse, have.mouse_encoding) != (want.mouse, want.mouse_encoding) {
            out.push_str("\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l");
            let reporting = match want.mouse {
                1 | 2 => "\x1b[?1000h",
                3 => "\x1b[?1002h",
                4 => "\x1b[?1003h",
                _ => "",
            };
            out.push_str(reporting);
            if !reporting.is_empty() {
                out.push_str(match want.mouse_encoding {
                    1 => "\x1b[?1005h",
                    2 => "\x1b[?1006h",
                    _ => "",
                });
            }
        }
        use std::io::Write;
        let mut stdout = std::io::stdout();
        let _ = stdout.write_all(out.as_bytes()).and_then(|_| stdout.flush());
        self.0 = want;
    }
}

impl Drop for TerminalModes {
    fn drop(&mut self) {
        self.mirror(Modes::default());
    }
}

enum Leave {
    Detached,
    Ended,
    DaemonGone,
    /// The run's host was removed: its link will not come back.
    HostGone,
}

/// The link of a remote run's host while it is not up, as the banner says it.
#[derive(Debug, Clone, PartialEq)]
struct LinkTrouble {
    host: String,
    phase: String,
    since: Option<std::time::SystemTime>,
    error: Option<String>,
}

impl LinkTrouble {
    /// `None` while the link is up (or has not been needed yet).
    fn of(host: &crate::api::HostRecord) -> Option<LinkTrouble> {
        if matches!(host.link.as_str(), "up" | "idle") {
            return None;
        }
        Some(LinkTrouble {
            host: host.name.clone(),
            phase: host.link.clone(),
            since: host.since.as_deref().and_then(|s| humantime::parse_rfc3339(s).ok()),
            error: host.error.clone(),
        })
    }

    /// ` link to gpu1 reconnecting 34s · the run goes on there · Ctrl-a d detaches · the link was lost `
    fn banner(&self, now: std::time::SystemTime) -> String {
        let secs = self
            .since
            .and_then(|t| now.duration_since(t).ok())
            .map(|d| format!(" {}s", d.as_secs()))
            .unwrap_or_default();
        let why = self
            .error
            .as_deref()
            .map(|e| {
                format!(
                    " · {}",
                    crate::text::bounded(&e.split_whitespace().collect::<Vec<_>>().join(" "), 200)
                )
            })
            .unwrap_or_default();
        // The reason last: a narrow terminal cuts it, not the hint.
        format!(
            " link to {} {}{secs} · the run goes on there · Ctrl-a d detaches{why} ",
            self.host, self.phase
        )
    }
}

/// Asks the daemon for `host`'s link once a second and reports each
/// answer: `Some(None)` while up, `None` once the host is gone.
fn poll_link(client: std::sync::Arc<Client>, host: String) -> mpsc::Receiver<Option<Option<LinkTrouble>>> {
    let (tx, rx) = mpsc::channel(4);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(LINK_POLL);
        loop {
            tick.tick().await;
            let Ok(hosts) = client.call::<method::HostsList>(crate::api::NoParams).await else {
                return;
            };
            let report = hosts.iter().find(|h| h.name == host).map(LinkTrouble::of);
            let gone = report.is_none();
            if tx.send(report).await.is_err() || gone {
                return;
            }
        }
    });
    rx
}

/// The command that takes the user back to this run's work: its
/// conversation when the harness named one, else the run.
fn way_back(run: &str, session: Option<&str>) -> String {
    match session {
        Some(session) => format!("agents sessions resume {session}"),
        None => format!("agents attach {run}"),
    }
}

/// What of a run's output stays on the user's terminal when the run ends
/// while attached: the attach took the alternate screen, so without this
/// `agents run cmd -- make test` would leave only its end line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// All of it, as `agents logs` prints it: the run was started attached,
    /// as if the command had run in this terminal.
    All,
    /// Its last screen: attached to a run that was already going.
    LastScreen,
}

/// The run's lines, printed inert, once the terminal is the user's again:
/// the last screen as this attach drew it, or all of them replayed from the
/// log as `agents logs` does.
async fn print_kept(paths: &Paths, run: &str, kept: Kept, last: &ScreenMirror) -> Result<()> {
    let mut lines = match kept {
        Kept::LastScreen => last.visible_lines(),
        Kept::All => {
            let history = crate::config::ConfigWatch::reading(paths).current.engine.history_lines;
            crate::client::replay::screen_lines(paths, run, history).await?
        }
    };
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let mut out = std::io::stdout().lock();
    for line in lines {
        writeln!(out, "{}", crate::text::inert(&line))?;
    }
    Ok(())
}

pub async fn attach(paths: &Paths, run: &str, kept: Kept) -> Result<i32> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(crate::cli::refused(format!(
            "attach needs a terminal; read a run's output with `agents logs {run}`"
        )));
    }
    let mut client = Client::connect(paths, true).await?;
    let mut events = client.events.take().expect("asked for events");
    let client = std::sync::Arc::new(client);
    let record = live_record(&client, run).await?;
    let id = record.id.clone();
    if let Some(session) = &record.session_id {
        // On stderr, before the screen is taken: the id stays in the scrollback.
        say_err!("attaching to {} (session {session})", record.id);
    }
    let (cols, rows) = terminal::size()?;
    let _ = client
        .call::<method::RunsResize>(ResizeParams {
            run: id.clone(),
            rows,
            cols,
        })
        .await;
    let guard = RawGuard::enter(&record.name)?;
    let _: AttachResult = client
        .call::<method::RunsAttach>(AttachParams::screen(id.clone(), crate::protocol::screen::FORMAT))
        .await?;
    let mut view = View::new(rows, cols)?;
    let (leave, trouble) = follow(&client, &mut events, &record, &mut view).await?;
    let mirror = view.mirror.clone();
    drop(view);
    drop(guard);
    // The session may have been learnt while attached.
    let session = match tokio::time::timeout(
        Duration::from_secs(2),
        client.call::<method::RunsShow>(RunRef { run: id.clone() }),
    )
    .await
    {
        Ok(Ok(detail)) => detail.run.session_id,
        _ => record.session_id.clone(),
    };
    let left = Left {
        record: &record,
        session: session.as_deref(),
        link_down: trouble.is_some(),
    };
    match leave {
        Leave::Ended => ended(paths, &client, &id, kept, &mirror).await,
        Leave::Detached => Ok(left.detached()),
        Leave::HostGone => Ok(left.host_gone()),
        Leave::DaemonGone => Ok(left.daemon_gone()),
    }
}

/// The run's record, refused when it has ended (its output is for `logs`).
async fn live_record(client: &Client, run: &str) -> Result<RunRecord> {
    let record: RunRecord = client
        .call::<method::RunsShow>(RunRef { run: run.into() })
        .await
        .map(|d: crate::api::RunDetail| d.run)?;
    if !record.state.is_live() {
        return Err(crate::api::ApiError::new(
            crate::api::ErrorCode::NotRunning,
            format!(
                "run {} ({}) has ended: {}; read its output with `agents logs {}`",
                record.id,
                record.state.as_str(),
                record.reason.as_deref().unwrap_or("-"),
                record.id
            ),
        )
        .into());
    }
    Ok(record)
}

/// What attach draws on: the user's terminal, the run's screen as its
/// emulator sent it, and the input modes mirrored from it.
struct View {
    screen: Screen<StyledBackend<std::io::Stdout>>,
    mirror: ScreenMirror,
    /// The modes the run asked of its terminal, mirrored on the user's, so
    /// the keys it sends are the ones the run expects.
    modes: TerminalModes,
    no_color: bool,
}

impl View {
    fn new(rows: u16, cols: u16) -> Result<View> {
        let screen = Screen::new(StyledBackend::new(
            std::io::stdout(),
            crate::tui::backend::terminal_draws_underline_styles(),
        ))?;
        // Not `screen.clear()`: it asks the terminal where its cursor is, and
        // crossterm reads the answer from stdin, swallowing keys typed ahead
        // (and failing after 2 s on a terminal that does not answer).
        execute!(std::io::stdout(), terminal::Clear(terminal::ClearType::All))?;
        Ok(View {
            screen,
            mirror: ScreenMirror::new(rows, cols, 0),
            modes: TerminalModes::default(),
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
        })
    }

    /// The run's screen, and over its top line the link's banner while the
    /// link is in trouble (drawn by agents, not sent by the run).
    fn draw(&mut self, trouble: Option<&LinkTrouble>) -> Result<()> {
        let (mirror, no_color) = (&self.mirror, self.no_color);
        self.screen.draw(|f| {
            let view = PaneView {
                screen: mirror,
                no_color,
            };
            let area = f.area();
            let cursor = view.cursor(area);
            f.render_widget(view, area);
            if let Some(trouble) = trouble {
                let line = ratatui::layout::Rect { height: 1, ..area };
                let style = ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::REVERSED);
                f.render_widget(ratatui::widgets::Clear, line);
                f.render_widget(
                    ratatui::widgets::Paragraph::new(trouble.banner(std::time::SystemTime::now())).style(style),
                    line,
                );
            } else if let Some(pos) = cursor {
                f.set_cursor_position(pos);
            }
        })?;
        Ok(())
    }
}

/// Raw bytes from the user's terminal, read on a thread (stdin is blocking).
fn read_keys() -> mpsc::Receiver<Vec<u8>> {
    let (keys_tx, keys) = mpsc::channel::<Vec<u8>>(64);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdin.read(&mut buf) {
            if n == 0 || keys_tx.blocking_send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    keys
}

/// The prefix key in what the user types: `Ctrl-a d` detaches, `Ctrl-a
/// Ctrl-a` is one Ctrl-a for the run, `Ctrl-a` and another key are both.
/// Ctrl-a is its byte or, while the kitty keyboard protocol is mirrored,
/// its `CSI u` form, and goes to the run as it came.
#[derive(Default)]
struct Prefix {
    /// How the pressed prefix came, until the next key says what it was.
    pressed: Option<&'static [u8]>,
}

impl Prefix {
    /// The bytes for the run, and whether the user detached.
    fn split(&mut self, bytes: &[u8]) -> (Vec<u8>, bool) {
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = bytes;
        while let Some(&b) = rest.first() {
            let prefix = [PREFIX, PREFIX_KITTY].into_iter().find(|p| rest.starts_with(p));
            let step = prefix.map_or(1, <[u8]>::len);
            match (self.pressed.take(), prefix) {
                (Some(_), None) if b == b'd' => return (out, true),
                (Some(_), Some(p)) => out.extend_from_slice(p),
                (Some(pressed), None) => {
                    out.extend_from_slice(pressed);
                    out.push(b);
                }
                (None, Some(p)) => self.pressed = Some(p),
                (None, None) => out.push(b),
            }
            rest = &rest[step..];
        }
        (out, false)
    }
}

/// Draws the run's screen as updates come, types the user's keys into the
/// run and follows the terminal's size and, for a remote run, its host's
/// link — until the user detaches, the run ends or the daemon goes.
async fn follow(
    client: &std::sync::Arc<Client>,
    events: &mut mpsc::Receiver<Frame>,
    record: &RunRecord,
    view: &mut View,
) -> Result<(Leave, Option<LinkTrouble>)> {
    let id = record.id.clone();
    let mut keys = read_keys();
    let mut winch = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change())?;
    let mut prefix = Prefix::default();
    let (mut dirty, mut unacked) = (true, false);
    let mut last_draw = Instant::now() - FRAME;
    // Whether the run's host link is being watched (a remote run, until the
    // watcher stops).
    let mut remote = record.host != "local";
    let mut link_reports = if remote {
        poll_link(client.clone(), record.host.clone())
    } else {
        mpsc::channel(1).1 // never read: `remote` is false
    };
    let mut trouble: Option<LinkTrouble> = None;
    let leave = loop {
        let next_draw = last_draw + FRAME;
        tokio::select! {
            frame = events.recv() => {
                let Some(frame) = frame else { break Leave::DaemonGone };
                match frame {
                    Frame::Screen { run, bytes, .. } if run == id => {
                        // A refused update leaves the screen as it was.
                        if let Ok(update) = ScreenUpdate::decode(&bytes)
                            && view.mirror.apply(update).is_ok()
                        {
                            (unacked, dirty) = (true, true);
                            view.modes.mirror(view.mirror.modes);
                        }
                    }
                    other if ended_now(&other, &id) => break Leave::Ended,
                    _ => {}
                }
            }
            bytes = keys.recv() => {
                let Some(bytes) = bytes else { break Leave::Detached };
                let (out, detach) = prefix.split(&bytes);
                if !out.is_empty() {
                    let _ = client.send_frame(Frame::Input { run: id.clone(), bytes: out }).await;
                }
                if detach {
                    break Leave::Detached;
                }
            }
            _ = winch.recv() => {
                if let Ok((cols, rows)) = terminal::size() {
                    let _ = view.screen.autoresize();
                    // Not awaited here: while this loop waits on an answer it
                    // would stop draining output, and the answer could queue
                    // behind that output.
                    let (resizing, run) = (client.clone(), id.clone());
                    tokio::spawn(async move {
                        let _ = resizing
                            .call::<method::RunsResize>(ResizeParams { run, rows, cols })
                            .await;
                    });
                    dirty = true;
                }
            }
            report = link_reports.recv(), if remote => match report {
                // The host was removed: its link ends for good.
                Some(None) => break Leave::HostGone,
                Some(Some(now)) => {
                    // Redrawn each report while in trouble: the banner counts seconds.
                    dirty |= now.is_some() || trouble.is_some();
                    trouble = now;
                }
                None => remote = false,
            },
            _ = tokio::time::sleep_until(next_draw.into()), if dirty => {}
        }
        if unacked {
            unacked = false;
            let ack = crate::api::AckParams {
                run: id.clone(),
                offset: view.mirror.seq,
                screen: true,
                sub: 0,
            };
            let _ = client.notify::<method::RunsAck>(ack).await;
        }
        if dirty && Instant::now() >= last_draw + FRAME {
            dirty = false;
            last_draw = Instant::now();
            view.draw(trouble.as_ref())?;
        }
    };
    Ok((leave, trouble))
}

/// Whether `frame` says run `id`'s output has ended for good.
fn ended_now(frame: &Frame, id: &str) -> bool {
    crate::protocol::rpc::notification_of(frame).is_some_and(|note| {
        note.method == method::OUTPUT_END
            && note.params.get("run").and_then(Value::as_str) == Some(id)
            && note.params.get("final").and_then(Value::as_bool) == Some(true)
    })
}

/// How attach ended, for the lines it says on the user's shell.
struct Left<'a> {
    record: &'a RunRecord,
    session: Option<&'a str>,
    /// Detached while the run's host link was down.
    link_down: bool,
}

/// Each says how to get back and answers the exit code.
impl Left<'_> {
    fn detached(&self) -> i32 {
        let (id, name, host) = (&self.record.id, &self.record.name, &self.record.host);
        if self.link_down {
            say!("detached from {name} ({id}) while the link to {host} is down; the run goes on there");
            say!("back to it with: {}", way_back(id, self.session));
        } else {
            say!("detached from {name} ({id}); attach again with: agents attach {id}");
        }
        0
    }

    fn host_gone(&self) -> i32 {
        let (id, name, host) = (&self.record.id, &self.record.name, &self.record.host);
        say!("host {host} was removed, so the link to run {name} ({id}) is gone for good");
        say!("back to its work with: {}", way_back(id, self.session));
        1
    }

    fn daemon_gone(&self) -> i32 {
        let id = &self.record.id;
        say!("lost the daemon; the run goes on. Attach again with: agents attach {id}");
        if let Some(session) = self.session {
            say!("or resume its conversation with: agents sessions resume {session}");
        }
        1
    }
}

/// The run ended while attached: what it left on screen (as `kept` asks),
/// then how it ended; exit 0 only when it succeeded.
async fn ended(paths: &Paths, client: &Client, id: &str, kept: Kept, mirror: &ScreenMirror) -> Result<i32> {
    let end: RunRecord = client
        .call::<method::RunsWait>(crate::api::WaitParams::watching(id))
        .await?;
    if let Err(e) = print_kept(paths, id, kept, mirror).await {
        say_err!("agents: the run's output is in `agents logs {id}` ({e})");
    }
    say!(
        "run {} ({}) {}: {}",
        end.name,
        id,
        end.state.as_str(),
        end.reason.as_deref().unwrap_or("")
    );
    Ok(if end.state == crate::api::RunState::Succeeded {
        0
    } else {
        1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_detaches_in_its_byte_and_in_its_kitty_form() {
        assert_eq!(Prefix::default().split(b"ab\x01d"), (b"ab".to_vec(), true));
        assert_eq!(Prefix::default().split(b"ab\x1b[97;5ud"), (b"ab".to_vec(), true));
        // Pressed twice: one, as it came.
        let mut prefix = Prefix::default();
        assert_eq!(prefix.split(b"\x1b[97;5u"), (Vec::new(), false));
        assert_eq!(prefix.split(b"\x1b[97;5ux"), (b"\x1b[97;5ux".to_vec(), false));
        // Then another key: both, the prefix as it came.
        assert_eq!(prefix.split(b"\x1b[97;5u"), (Vec::new(), false));
        assert_eq!(prefix.split(b"x"), (b"\x1b[97;5ux".to_vec(), false));
        assert_eq!(
            Prefix::default().split(b"\x01\x01\x01x"),
            (b"\x01\x01x".to_vec(), false)
        );
        // Shift-Enter as a kitty terminal sends it goes through whole.
        assert_eq!(
            Prefix::default().split(b"line1\x1b[13;2uline2\r"),
            (b"line1\x1b[13;2uline2\r".to_vec(), false)
        );
    }

    fn host(link: &str, error: Option<&str>) -> crate::api::HostRecord {
        crate::api::HostRecord {
            name: "gpu1".into(),
            target: "u@gpu1".into(),
            command: None,
            shell_line: false,
            remote_bin: "agents".into(),
            remote_home: None,
            created_at: "2026-01-01T00:00:00Z".into(),
            link: link.into(),
            since: Some("2026-01-01T00:00:00Z".into()),
            latency_ms: None,
            error: error.map(str::to_string),
            remote_version: None,
            live_runs: 1,
        }
    }

    #[test]
    fn the_banner_counts_seconds_and_puts_the_reason_last() {
        assert_eq!(LinkTrouble::of(&host("up", None)), None);
        assert_eq!(LinkTrouble::of(&host("idle", None)), None);
        let trouble = LinkTrouble::of(&host("reconnecting", Some("the link\nwas lost"))).unwrap();
        let now = humantime::parse_rfc3339("2026-01-01T00:00:34Z").unwrap();
        assert_eq!(
            trouble.banner(now),
            " link to gpu1 reconnecting 34s · the run goes on there · Ctrl-a d detaches · the link was lost "
        );
    }

    #[test]
    fn the_way_back_is_the_conversation_when_there_is_one() {
        assert_eq!(way_back("01RUN", Some("5c1e")), "agents sessions resume 5c1e");
        assert_eq!(way_back("01RUN", None), "agents attach 01RUN");
    }
}
