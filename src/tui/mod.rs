//! The full-screen interface (docs/design.md §9): a client of the daemon like any
//! other. The loop takes its input as a stream so tests can drive it.

mod access;
pub mod app;
pub mod backend;
mod bars;
pub mod broadcast;
mod burst;
pub mod changes;
pub mod connection;
pub mod copy;
mod delete;
pub mod echo;
pub mod form;
mod frames;
pub mod hits;
mod input;
mod kept;
pub mod keys;
pub mod mail;
mod notice;
mod overlay;
pub mod pane;
mod panes;
pub mod peek;
pub mod rename;
mod routines;
pub mod side;
pub mod tree;
mod updates;
pub mod view;
mod wrap;

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Result;
use crossterm::event::{DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event};
use crossterm::{cursor, execute, terminal};
use futures::{Stream, StreamExt};
use ratatui::backend::Backend;
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::mpsc;

use app::{App, Command, Update};

pub use crate::keymap;
use crate::paths::Paths;

/// Durations on screen advance once a second even when nothing else changes.
const TICK: Duration = Duration::from_secs(1);
/// Updates handled per wake before drawing again: a flooding pane must not
/// starve keys or the screen.
const UPDATE_BATCH: usize = 64;

/// Saves the window title on the terminal's stack, and takes it back.
pub(crate) const TITLE_PUSH: &str = "\x1b[22;0t";
pub(crate) const TITLE_POP: &str = "\x1b[23;0t";

/// Restores the terminal however the TUI ends, panics included.
struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        restore_terminal();
    }
}

fn restore_terminal() {
    let mut out = std::io::stdout();
    let _ = execute!(
        out,
        DisableMouseCapture,
        DisableBracketedPaste,
        crossterm::event::PopKeyboardEnhancementFlags,
        // The window title the TUI set (the count that needs you) gives way
        // to the one it found (xterm's title stack; others ignore it).
        crossterm::style::Print(TITLE_POP),
        terminal::LeaveAlternateScreen,
        cursor::Show
    );
    let _ = terminal::disable_raw_mode();
}

/// The TUI draws on a terminal and reads keys from one: without, it says
/// so before anything is started.
pub fn need_terminal() -> Result<()> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        anyhow::bail!("the TUI needs a terminal; try `agents ls`");
    }
    Ok(())
}

/// `agents` with no verb.
pub async fn main(paths: Paths) -> Result<i32> {
    need_terminal()?;
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        previous(info);
    }));
    terminal::enable_raw_mode()?;
    let restore = Restore;
    execute!(
        std::io::stdout(),
        crossterm::style::Print(TITLE_PUSH),
        terminal::EnterAlternateScreen,
        EnableBracketedPaste,
        EnableMouseCapture,
        // Keys told apart (the kitty keyboard protocol, where the terminal
        // speaks it; others ignore the request): the keypad's own keys
        // reach a program that asked for the application keypad as xterm
        // sends them (`keys::encode_key_in`), and Shift-Enter is told from
        // Enter.
        crossterm::event::PushKeyboardEnhancementFlags(
            crossterm::event::KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES
        )
    )?;
    // A fixed viewport, resized on the terminal's resize events: a
    // full-screen one asks the terminal its size before every frame (opening
    // `/dev/tty` each time, twenty times a second with four busy panes).
    let (cols, rows) = terminal::size()?;
    // Buffered: a frame goes out in one write at its end, not one per
    // escape sequence through `Stdout`'s lock and 1 KiB line buffer.
    let mut term = Terminal::with_options(
        backend::StyledBackend::new(
            std::io::BufWriter::with_capacity(1 << 16, std::io::stdout()),
            backend::terminal_draws_underline_styles(),
        ),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, cols, rows)),
        },
    )?;
    term.clear()?;

    // Read first: it declares the families (`[harnesses]`) the form offers.
    let config = crate::config::ConfigWatch::reading(&paths);
    let (commands_tx, commands_rx) = mpsc::unbounded_channel();
    let (updates_tx, updates_rx) = mpsc::channel(1024);
    // Which agents the new-run form can offer as installed: a look through
    // PATH, off the loop (a slow directory in PATH must not stall a key).
    let found = updates_tx.clone();
    tokio::task::spawn_blocking(move || {
        let path = std::env::var("PATH").ok();
        let _ = found.blocking_send(Update::Installed(form::installed_harnesses(path.as_deref())));
    });
    tokio::spawn(connection::run(paths.clone(), commands_rx, updates_tx));
    let mut app = App::new();
    app.no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    if let Some(problem) = &config.problem {
        app.message = Some(problem.clone());
    }
    app.bell = config.current.tui.bell;
    app.desktop = config.current.tui.desktop;
    app.notify = config.current.tui.notify.clone();
    app.panes.history_lines = config.current.engine.history_lines;
    match keymap::Keymap::from_config(&config.current.keys) {
        Ok(map) => {
            if !map.shadowed.is_empty() {
                app.message = Some(format!(
                    "config [keys]: a key with two actions: {}",
                    map.shadowed.join("; ")
                ));
            }
            app.keymap = map;
        }
        Err(e) => app.message = Some(format!("config [keys]: {e}; using the default keys")),
    }
    kept::Kept::load(&paths).apply(&mut app);
    let ran = run_app(
        &mut term,
        &mut app,
        terminal_input(),
        updates_rx,
        commands_tx,
        &mut std::io::stdout(),
    )
    .await;
    kept::Kept::of(&app).save(&paths);
    drop(term);
    drop(restore);
    ran?;
    // On the user's terminal again: the runs go on without the TUI.
    let live = app.runs.iter().filter(|r| r.state.is_live()).count();
    match live {
        0 => {}
        1 => println!("1 run still live; `agents` reopens it"),
        n => println!("{n} runs still live; `agents` reopens them"),
    }
    Ok(0)
}

/// The terminal's input, read on a thread of its own that does nothing else.
/// crossterm's `EventStream` keeps a thread waiting in `poll` while holding
/// the event reader's lock, and each look for input from the loop spun on
/// that lock (`sched_yield` several times per look: 840 a second with four
/// spinning panes, `cargo bench --bench spinners`). What one read brings
/// is taken together, so a paste that came as keys is one paste
/// (`burst::coalesce`). The thread ends at the first event after the loop
/// has gone, or with the process.
fn terminal_input() -> impl Stream<Item = std::io::Result<Event>> + Unpin {
    let (tx, mut rx) = mpsc::channel(256);
    let reader = std::thread::Builder::new().name("tty-input".into()).spawn(move || {
        loop {
            let events = read_events();
            let failed = events.is_err();
            let events = match events {
                Ok(events) => events.into_iter().map(Ok).collect(),
                Err(e) => vec![Err(e)],
            };
            for event in events {
                if tx.blocking_send(event).is_err() {
                    return;
                }
            }
            if failed {
                break;
            }
        }
    });
    if let Err(e) = reader {
        // No input at all: the stream ends with the reason, and the TUI with it.
        let (tx, failed) = mpsc::channel(1);
        let _ = tx.try_send(Err(e));
        rx = failed;
    }
    futures::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// Starts the user's notify command, its output nowhere near the screen,
/// reaped on a thread of its own; a command that cannot start is skipped.
fn notify(argv: &[String]) {
    let Some((program, args)) = argv.split_first() else {
        return;
    };
    let child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = child {
        let _ = std::thread::Builder::new()
            .name("notify".into())
            .spawn(move || child.wait());
    }
}

/// What the terminal sends next, a paste that came as keys made one paste
/// (`burst::coalesce`). A long paste comes in several reads: what follows a
/// paste within `PASTE_GAP`, plain characters still, is more of it.
fn read_events() -> std::io::Result<Vec<Event>> {
    let mut events = burst::coalesce(read_batch()?);
    let [Event::Paste(text)] = events.as_mut_slice() else {
        return Ok(events);
    };
    while text.len() < burst::LONGEST && crossterm::event::poll(burst::PASTE_GAP)? {
        let more = read_batch()?;
        match burst::plain_text(&more) {
            Some(more) => text.push_str(&more),
            None => {
                events.extend(more);
                break;
            }
        }
    }
    Ok(events)
}

/// One event, waiting for it, and every other one already there.
fn read_batch() -> std::io::Result<Vec<Event>> {
    let mut batch = vec![crossterm::event::read()?];
    while batch.len() < burst::MOST && crossterm::event::poll(Duration::ZERO)? {
        batch.push(crossterm::event::read()?);
    }
    Ok(batch)
}

fn send_commands(app: &mut App, commands: &mpsc::UnboundedSender<Command>, outer: &mut impl Write) {
    for cmd in app.take_commands() {
        match cmd {
            Command::Terminal(bytes) => {
                let _ = outer.write_all(&bytes);
                let _ = outer.flush();
            }
            Command::Notify(argv) => notify(&argv),
            other => {
                let _ = commands.send(other);
            }
        }
    }
}

/// The event loop: input first, then daemon updates, drawing only on change.
pub async fn run_app<B: Backend>(
    term: &mut Terminal<B>,
    app: &mut App,
    mut input: impl Stream<Item = std::io::Result<Event>> + Unpin,
    mut updates: mpsc::Receiver<Update>,
    commands: mpsc::UnboundedSender<Command>,
    outer: &mut impl Write,
) -> Result<()>
where
    B::Error: Send + Sync + 'static,
{
    let mut frames = frames::Frames::default();
    let mut tick = tokio::time::interval(TICK);
    loop {
        // Keys reach the daemon before the frame is drawn.
        send_commands(app, &commands, outer);
        if app.quit {
            return Ok(());
        }
        if frames.draw(term, app)? {
            // Drawing lays panes out, which may resize their runs.
            send_commands(app, &commands, outer);
        }
        let next_frame = frames.due_at();
        tokio::select! {
            biased;
            event = input.next() => match event {
                Some(Ok(event)) => {
                    if let Event::Resize(cols, rows) = event {
                        term.resize(Rect::new(0, 0, cols, rows))?;
                        frames.resized();
                    }
                    app.handle(event);
                    if app.mode == app::Mode::Insert {
                        frames.typed();
                    }
                    if !app.only_typed {
                        frames.changed();
                    }
                }
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            update = updates.recv() => {
                let Some(update) = update else { return Ok(()) };
                let focused = app.selected_run().map(|r| r.id.clone());
                let mut apply = |app: &mut App, update: Update| {
                    match &update {
                        // A screen no pane shows changes nothing on screen.
                        Update::Screen { run, .. } => {
                            // Its first screen too: it replaces "connecting…".
                            if app.panes.subscribed.contains(run) {
                                frames.screen_moved(run, focused.as_ref() == Some(run));
                            }
                        }
                        _ => frames.changed(),
                    }
                    app.update(update);
                };
                apply(app, update);
                for _ in 1..UPDATE_BATCH {
                    match updates.try_recv() {
                        Ok(u) => apply(app, u),
                        Err(_) => break,
                    }
                }
            }
            _ = tokio::time::sleep_until(next_frame.unwrap_or_else(Instant::now).into()), if next_frame.is_some() => {}
            _ = tick.tick() => frames.changed(),
        }
    }
}
