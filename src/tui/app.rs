//! The TUI's state and what each key and each daemon message does to it.
//! Pure: no I/O. Whatever must reach the daemon is queued as a `Command`
//! for the event loop, so tests drive keys in and read commands out.

use std::collections::HashMap;
use std::time::SystemTime;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEventKind};

use super::copy::{CopyMode, CopyOutcome};
use super::form::{Composer, NewRunForm};
use super::keymap::{Action, Keymap};
use super::keys;
use super::tree::{self, TreeRow};
use crate::api::{RunDetail, RunRecord, SendResult, StartParams};
use crate::term::Terminal;

/// Lines of scrollback each visible pane keeps by default (plain text,
/// client side); `engine.history_lines` in the config sets it.
pub const PANE_HISTORY: usize = 10_000;

/// What the event loop must ask the daemon for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Refresh,
    Show(String),
    Subscribe(String),
    Unsubscribe(String),
    Input {
        run: String,
        bytes: Vec<u8>,
    },
    Resize {
        run: String,
        rows: u16,
        cols: u16,
    },
    Send {
        run: String,
        text: String,
        prompt_id: String,
    },
    Cancel {
        run: String,
        force: bool,
    },
    Start(Box<StartParams>),
    Rerun(String),
    /// Answer the question the run's screen shows (`yes`, `no`, or text).
    Answer {
        run: String,
        answer: String,
    },
    /// Write to the user's terminal (OSC 52 clipboard, bell).
    Terminal(Vec<u8>),
}

/// What the daemon (or the link to it) tells the TUI.
#[derive(Debug, Clone)]
pub enum Update {
    Connected,
    Disconnected(String),
    Runs(Vec<RunRecord>),
    Detail(Box<RunDetail>),
    Snapshot {
        run: String,
        offset: u64,
        rows: u16,
        cols: u16,
        bytes: Vec<u8>,
    },
    Output {
        run: String,
        offset: u64,
        bytes: Vec<u8>,
    },
    Changed(String),
    Sent {
        prompt_id: String,
        result: Result<SendResult, String>,
    },
    Started(Box<Result<RunRecord, String>>),
    Failed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Insert,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Record,
    Transcript,
    Lineage,
    Events,
}

impl Tab {
    pub const ALL: [Tab; 4] = [Tab::Record, Tab::Transcript, Tab::Lineage, Tab::Events];

    pub fn title(self) -> &'static str {
        match self {
            Tab::Record => "Record",
            Tab::Transcript => "Transcript",
            Tab::Lineage => "Lineage",
            Tab::Events => "Events",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Single,
    Split,
    Grid,
}

impl Layout {
    pub fn capacity(self) -> usize {
        match self {
            Layout::Single => 1,
            Layout::Split => 2,
            Layout::Grid => 4,
        }
    }
}

/// Which part of the screen Tab cycles through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    Tree,
    Panes,
    Side,
}

pub enum Overlay {
    Help,
    NewRun(NewRunForm),
    Compose(Box<Composer>),
    Confirm { run: String, name: String, force: bool },
}

/// A run's screen as this client sees it: a local emulator fed by the
/// subscription, and where in the run's log it stands.
pub struct PaneScreen {
    pub term: Terminal,
    pub offset: u64,
    /// Lines scrolled back (0 = live).
    pub scroll: usize,
}

pub struct App {
    pub runs: Vec<RunRecord>,
    pub rows: Vec<TreeRow>,
    pub selected: usize,
    pub filter: String,
    pub filtering: bool,
    pub mode: Mode,
    pub panel: Panel,
    pub layout: Layout,
    pub zoom: bool,
    pub tab: Tab,
    pub side_scroll: u16,
    pub screens: HashMap<String, PaneScreen>,
    pub details: HashMap<String, RunDetail>,
    pub overlay: Option<Overlay>,
    /// A one-line message for the status bar (errors, confirmations).
    pub message: Option<String>,
    /// Set while the daemon cannot be reached.
    pub banner: Option<String>,
    pub prefix: bool,
    pub quit: bool,
    pub commands: Vec<Command>,
    /// Runs whose output we subscribe to (the visible panes).
    pub subscribed: Vec<String>,
    /// The pane sizes from the last draw, for PTY sizes.
    pub pane_sizes: HashMap<String, (u16, u16)>,
    /// Where each pane's screen was drawn last (x, y, width, height), for the mouse.
    pub pane_rects: Vec<(String, [u16; 4])>,
    /// "Now" for durations; fixed in snapshot tests.
    pub now: Option<SystemTime>,
    pub no_color: bool,
    /// Runs waiting for input whose bell we already rang.
    pub rang: Vec<String>,
    /// The composer's draft while the daemon has not confirmed it.
    pub pending_send: Option<(String, Box<Composer>)>,
    pub connected: bool,
    /// `a`: the selected run takes the whole terminal, keys go to it, and
    /// Ctrl-a d comes back.
    pub fullscreen: bool,
    pub keymap: Keymap,
    /// Copy mode over the selected pane, when active.
    pub copy: Option<CopyMode>,
    /// Scrollback lines per visible pane.
    pub history_lines: usize,
    /// Ring the terminal bell when a run starts waiting for an answer.
    pub bell: bool,
}

impl Default for App {
    fn default() -> Self {
        App::new()
    }
}

impl App {
    pub fn new() -> App {
        App {
            runs: Vec::new(),
            rows: Vec::new(),
            selected: 0,
            filter: String::new(),
            filtering: false,
            mode: Mode::Normal,
            panel: Panel::Tree,
            layout: Layout::Single,
            zoom: false,
            tab: Tab::Record,
            side_scroll: 0,
            screens: HashMap::new(),
            details: HashMap::new(),
            overlay: None,
            message: None,
            banner: None,
            prefix: false,
            quit: false,
            commands: Vec::new(),
            subscribed: Vec::new(),
            pane_sizes: HashMap::new(),
            pane_rects: Vec::new(),
            now: None,
            no_color: false,
            rang: Vec::new(),
            pending_send: None,
            connected: false,
            fullscreen: false,
            keymap: Keymap::default(),
            copy: None,
            history_lines: PANE_HISTORY,
            bell: true,
        }
    }

    pub fn take_commands(&mut self) -> Vec<Command> {
        std::mem::take(&mut self.commands)
    }

    pub fn selected_run(&self) -> Option<&RunRecord> {
        let id = self.rows.get(self.selected)?.run.as_deref()?;
        self.runs.iter().find(|r| r.id == id)
    }

    pub fn run(&self, id: &str) -> Option<&RunRecord> {
        self.runs.iter().find(|r| r.id == id)
    }

    /// The runs shown as panes: the selected one first, then other live
    /// runs in tree order, up to the layout's capacity.
    pub fn pane_runs(&self) -> Vec<String> {
        let capacity = if self.zoom { 1 } else { self.layout.capacity() };
        let mut out: Vec<String> = Vec::new();
        if let Some(r) = self.selected_run() {
            out.push(r.id.clone());
        }
        for row in &self.rows {
            if out.len() >= capacity {
                break;
            }
            if let Some(id) = &row.run
                && !out.contains(id)
                && self.run(id).is_some_and(|r| r.state.is_live())
            {
                out.push(id.clone());
            }
        }
        out
    }

    fn rebuild_tree(&mut self) {
        let keep = self.rows.get(self.selected).and_then(|r| r.run.clone());
        self.rows = tree::build(&self.runs, &self.filter);
        self.selected = keep
            .and_then(|id| self.rows.iter().position(|r| r.run.as_deref() == Some(&id)))
            .or_else(|| self.rows.iter().position(|r| r.run.is_some()))
            .unwrap_or(0);
        self.sync_subscriptions();
    }

    /// Subscribes to the visible panes' runs and drops the rest.
    pub fn sync_subscriptions(&mut self) {
        let want = self.pane_runs();
        for id in self.subscribed.clone() {
            if !want.contains(&id) {
                self.commands.push(Command::Unsubscribe(id.clone()));
                self.screens.remove(&id);
            }
        }
        for id in &want {
            if !self.subscribed.contains(id) {
                self.commands.push(Command::Subscribe(id.clone()));
            }
        }
        self.subscribed = want;
        if let Some(id) = self.selected_run().map(|r| r.id.clone())
            && !self.details.contains_key(&id)
        {
            self.commands.push(Command::Show(id));
        }
    }

    /// Panes were laid out at these sizes: resize the runs' PTYs to match.
    pub fn panes_laid_out(&mut self, sizes: Vec<(String, u16, u16)>) {
        for (id, rows, cols) in sizes {
            let live = self.run(&id).is_some_and(|r| r.state.is_live());
            if self.pane_sizes.get(&id) != Some(&(rows, cols)) {
                self.pane_sizes.insert(id.clone(), (rows, cols));
                // Our copy of the screen follows the PTY's new size at once;
                // the program's redraw arrives as output.
                if live
                    && rows >= 2
                    && cols >= 2
                    && let Some(screen) = self.screens.get_mut(&id)
                {
                    screen.term.resize(rows, cols);
                }
                if live && rows >= 2 && cols >= 2 {
                    self.commands.push(Command::Resize { run: id, rows, cols });
                }
            }
        }
    }

    pub fn update(&mut self, update: Update) {
        match update {
            Update::Connected => {
                self.connected = true;
                self.banner = None;
                // A new connection has no subscriptions: ask again.
                self.subscribed.clear();
                self.pane_sizes.clear();
                self.commands.push(Command::Refresh);
            }
            Update::Disconnected(why) => {
                self.connected = false;
                self.banner = Some(format!("daemon unreachable ({why}); reconnecting…"));
            }
            Update::Runs(runs) => {
                self.runs = runs;
                self.ring_for_waiting();
                self.rebuild_tree();
            }
            Update::Detail(detail) => {
                let id = detail.run.id.clone();
                if let Some(r) = self.runs.iter_mut().find(|r| r.id == id) {
                    *r = detail.run.clone();
                }
                self.details.insert(id, *detail);
            }
            Update::Snapshot {
                run,
                offset,
                rows,
                cols,
                bytes,
            } => {
                // A snapshot starts the pane over: history from here on is
                // kept for scrolling back.
                let mut term = Terminal::with_history(rows, cols, self.history_lines);
                term.feed(&bytes);
                self.screens.insert(
                    run,
                    PaneScreen {
                        term,
                        offset,
                        scroll: 0,
                    },
                );
            }
            Update::Output { run, offset, bytes } => {
                if let Some(screen) = self.screens.get_mut(&run) {
                    let end = offset + bytes.len() as u64;
                    if end > screen.offset {
                        let skip = screen.offset.saturating_sub(offset) as usize;
                        screen.term.feed(&bytes[skip..]);
                        screen.offset = end;
                    }
                }
            }
            Update::Changed(id) => {
                self.details.remove(&id);
                if self.selected_run().is_some_and(|r| r.id == id) {
                    self.commands.push(Command::Show(id));
                }
            }
            Update::Sent { prompt_id, result } => {
                let pending = self.pending_send.take();
                match (result, pending) {
                    (Ok(sent), _) => {
                        self.message = Some(format!("prompt {} ({})", sent.state, short(&prompt_id)));
                    }
                    (Err(e), Some((_, composer))) => {
                        // Keep the draft: nothing is lost when the daemon could not take it.
                        self.message = Some(format!("not sent: {e}"));
                        self.overlay = Some(Overlay::Compose(composer));
                    }
                    (Err(e), None) => self.message = Some(format!("not sent: {e}")),
                }
            }
            Update::Started(result) => match *result {
                Ok(run) => {
                    self.message = Some(format!("started {}", run.name));
                    let id = run.id.clone();
                    if !self.runs.iter().any(|r| r.id == id) {
                        self.runs.push(run);
                    }
                    self.rebuild_tree();
                    if let Some(i) = self.rows.iter().position(|r| r.run.as_deref() == Some(&id)) {
                        self.selected = i;
                        self.sync_subscriptions();
                    }
                }
                Err(e) => self.message = Some(format!("not started: {e}")),
            },
            Update::Failed(e) => self.message = Some(e),
        }
    }

    /// Rings the terminal bell once when a run starts waiting for input.
    fn ring_for_waiting(&mut self) {
        use crate::api::ActivityStatus::{NeedsApproval, WaitingInput};
        let waiting: Vec<String> = self
            .runs
            .iter()
            .filter(|r| r.state.is_live() && matches!(r.status, WaitingInput | NeedsApproval))
            .map(|r| r.id.clone())
            .collect();
        if self.bell && waiting.iter().any(|id| !self.rang.contains(id)) {
            self.commands.push(Command::Terminal(vec![0x07]));
        }
        self.rang = waiting;
    }

    pub fn handle(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.key(key),
            Event::Paste(text) => self.paste(&text),
            Event::Mouse(m) => match m.kind {
                MouseEventKind::ScrollUp if !self.program_wants_mouse() => self.scroll_pane(3),
                MouseEventKind::ScrollDown if !self.program_wants_mouse() => self.scroll_pane(-3),
                _ => self.mouse(&m),
            },
            Event::Resize(..) => self.pane_sizes.clear(),
            _ => {}
        }
    }

    fn paste(&mut self, text: &str) {
        match (&mut self.overlay, self.mode) {
            (Some(Overlay::Compose(c)), _) => c.paste(text),
            (Some(Overlay::NewRun(f)), _) => f.paste(text),
            (None, Mode::Insert) => {
                if let Some(run) = self.selected_run().map(|r| r.id.clone()) {
                    let bracketed = self
                        .screens
                        .get(&run)
                        .is_some_and(|s| s.term.screen().bracketed_paste());
                    self.commands.push(Command::Input {
                        run,
                        bytes: keys::encode_paste(text, bracketed),
                    });
                }
            }
            _ => {}
        }
    }

    fn pane_at(&self, col: u16, row: u16) -> Option<(String, u16, u16)> {
        self.pane_rects.iter().find_map(|(id, [x, y, w, h])| {
            (col >= *x && col < x + w && row >= *y && row < y + h).then(|| (id.clone(), col - x, row - y))
        })
    }

    /// A click on a pane selects its run; in INSERT, mouse events go to a
    /// program that asked for them, in the pane's own coordinates.
    fn mouse(&mut self, m: &crossterm::event::MouseEvent) {
        let Some((id, col, row)) = self.pane_at(m.column, m.row) else {
            return;
        };
        if self.mode == Mode::Normal {
            if matches!(m.kind, MouseEventKind::Down(_))
                && let Some(i) = self.rows.iter().position(|r| r.run.as_deref() == Some(&id))
            {
                self.selected = i;
                self.panel = Panel::Panes;
                self.sync_subscriptions();
            }
            return;
        }
        if self.selected_run().is_none_or(|r| r.id != id) {
            return;
        }
        let Some(screen) = self.screens.get(&id) else { return };
        if screen.term.screen().mouse_protocol_mode() == vt100::MouseProtocolMode::None {
            return;
        }
        if let Some(bytes) = keys::encode_mouse(m, col, row) {
            self.commands.push(Command::Input { run: id, bytes });
        }
    }

    /// In INSERT, a program with mouse reporting on gets the wheel itself.
    fn program_wants_mouse(&self) -> bool {
        self.mode == Mode::Insert
            && self
                .selected_run()
                .and_then(|r| self.screens.get(&r.id))
                .is_some_and(|s| s.term.screen().mouse_protocol_mode() != vt100::MouseProtocolMode::None)
    }

    fn scroll_pane(&mut self, lines: isize) {
        let Some(run) = self.selected_run().map(|r| r.id.clone()) else {
            return;
        };
        if let Some(screen) = self.screens.get_mut(&run) {
            screen.scroll = (screen.scroll as isize + lines).max(0) as usize;
        }
    }

    fn key(&mut self, key: KeyEvent) {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        // The prefix key works in every mode: back to NORMAL.
        if self.mode == Mode::Insert {
            if self.prefix {
                self.prefix = false;
                match key.code {
                    _ if self.keymap.is_prefix(&key) => self.type_key(&key),
                    KeyCode::Char('d') => {
                        self.mode = Mode::Normal;
                        self.fullscreen = false;
                    }
                    _ => {
                        self.mode = Mode::Normal;
                        self.fullscreen = false;
                        self.key(key);
                    }
                }
                return;
            }
            if self.keymap.is_prefix(&key) {
                self.prefix = true;
                return;
            }
            self.type_key(&key);
            return;
        }
        if let Some(mut copy) = self.copy.take() {
            match copy.key(key) {
                CopyOutcome::Keep => self.copy = Some(copy),
                CopyOutcome::Exit => {}
                CopyOutcome::Copy(text) => self.copy_text(&text),
            }
            return;
        }
        if let Some(overlay) = self.overlay.take() {
            self.overlay = self.overlay_key(overlay, key);
            return;
        }
        if self.filtering {
            match key.code {
                KeyCode::Esc => {
                    self.filtering = false;
                    self.filter.clear();
                    self.rebuild_tree();
                }
                KeyCode::Enter => self.filtering = false,
                KeyCode::Backspace => {
                    self.filter.pop();
                    self.rebuild_tree();
                }
                KeyCode::Char(c) if !ctrl => {
                    self.filter.push(c);
                    self.rebuild_tree();
                }
                _ => {}
            }
            return;
        }
        self.message = None;
        if ctrl && key.code == KeyCode::Char('c') {
            self.quit = true;
            return;
        }
        // A run waiting at a question: Y approves, N denies, from NORMAL.
        if let Some((id, name)) = self
            .selected_run()
            .filter(|r| r.state.is_live() && r.status == crate::api::ActivityStatus::NeedsApproval)
            .map(|r| (r.id.clone(), r.name.clone()))
            && matches!(key.code, KeyCode::Char('Y') | KeyCode::Char('N'))
        {
            let answer = if key.code == KeyCode::Char('Y') { "yes" } else { "no" };
            self.commands.push(Command::Answer {
                run: id,
                answer: answer.into(),
            });
            self.message = Some(format!("answered {answer} to {name}"));
            return;
        }
        let Some(action) = self.keymap.action(&key) else { return };
        match action {
            Action::Quit => self.quit = true,
            Action::Down => self.move_selection(1),
            Action::Up => self.move_selection(-1),
            Action::Top => self.select_index(0),
            Action::Bottom => self.select_index(usize::MAX),
            Action::Focus => {
                if self.selected_run().is_some_and(|r| r.state.is_live()) {
                    self.mode = Mode::Insert;
                    if let Some(id) = self.selected_run().map(|r| r.id.clone())
                        && let Some(s) = self.screens.get_mut(&id)
                    {
                        s.scroll = 0;
                    }
                } else if self.selected_run().is_some() {
                    self.message = Some("that run has ended: r runs it again".into());
                }
            }
            Action::New => self.overlay = Some(Overlay::NewRun(NewRunForm::new())),
            Action::Send => {
                if let Some(r) = self.selected_run() {
                    if r.state.is_live() {
                        self.overlay = Some(Overlay::Compose(Box::new(Composer::new(&r.id, &r.name))));
                    } else {
                        self.message = Some("that run has ended: nothing to send to".into());
                    }
                }
            }
            Action::Cancel | Action::ForceCancel => {
                if let Some(r) = self.selected_run()
                    && r.state.is_live()
                {
                    self.overlay = Some(Overlay::Confirm {
                        run: r.id.clone(),
                        name: r.name.clone(),
                        force: action == Action::ForceCancel,
                    });
                }
            }
            Action::Rerun => {
                if let Some(r) = self.selected_run() {
                    self.commands.push(Command::Rerun(r.id.clone()));
                }
            }
            Action::Attach => {
                if self.selected_run().is_some_and(|r| r.state.is_live()) {
                    self.fullscreen = true;
                    self.mode = Mode::Insert;
                }
            }
            Action::Zoom => {
                self.zoom = !self.zoom;
                self.sync_subscriptions();
            }
            Action::Single | Action::Split | Action::Grid => {
                self.layout = match action {
                    Action::Single => Layout::Single,
                    Action::Split => Layout::Split,
                    _ => Layout::Grid,
                };
                self.zoom = false;
                self.sync_subscriptions();
            }
            Action::NextPanel => {
                self.panel = match self.panel {
                    Panel::Tree => Panel::Panes,
                    Panel::Panes => Panel::Side,
                    Panel::Side => Panel::Tree,
                }
            }
            Action::NextTab => self.cycle_tab(1),
            Action::PrevTab => self.cycle_tab(-1),
            Action::Filter => self.filtering = true,
            Action::Help => self.overlay = Some(Overlay::Help),
            Action::ScrollUp => {
                if self.panel == Panel::Side {
                    self.side_scroll = self.side_scroll.saturating_sub(10);
                } else {
                    self.scroll_pane(10)
                }
            }
            Action::ScrollDown => {
                if self.panel == Panel::Side {
                    self.side_scroll = self.side_scroll.saturating_add(10);
                } else {
                    self.scroll_pane(-10)
                }
            }
            Action::Copy => self.copy_screen(),
        }
    }

    fn cycle_tab(&mut self, by: isize) {
        let i = Tab::ALL.iter().position(|t| *t == self.tab).unwrap_or(0) as isize;
        self.tab = Tab::ALL[(i + by).rem_euclid(Tab::ALL.len() as isize) as usize];
        self.side_scroll = 0;
    }

    fn type_key(&mut self, key: &KeyEvent) {
        let Some(run) = self.selected_run().map(|r| r.id.clone()) else {
            self.mode = Mode::Normal;
            return;
        };
        let app_cursor = self
            .screens
            .get(&run)
            .is_some_and(|s| s.term.screen().application_cursor());
        let bytes = keys::encode_key(key, app_cursor);
        if !bytes.is_empty() {
            self.commands.push(Command::Input { run, bytes });
        }
    }

    /// `v`: copy mode over the selected pane's history and screen.
    fn copy_screen(&mut self) {
        let Some(run) = self.selected_run().map(|r| r.id.clone()) else {
            return;
        };
        let Some(screen) = self.screens.get(&run) else { return };
        let mut lines: Vec<String> = screen.term.history().cloned().collect();
        lines.extend(screen.term.visible_lines());
        self.copy = Some(CopyMode::new(&run, lines));
    }

    /// Puts text on the clipboard of the user's terminal with OSC 52.
    fn copy_text(&mut self, text: &str) {
        let encoded = base64_encode(text.as_bytes());
        self.commands
            .push(Command::Terminal(format!("\x1b]52;c;{encoded}\x07").into_bytes()));
        let lines = text.lines().count().max(1);
        self.message = Some(format!("copied {lines} line(s) to the clipboard"));
    }

    fn move_selection(&mut self, by: isize) {
        if self.rows.is_empty() {
            return;
        }
        let mut i = self.selected as isize;
        loop {
            i += by;
            if i < 0 || i >= self.rows.len() as isize {
                return;
            }
            if self.rows[i as usize].run.is_some() {
                break;
            }
        }
        self.selected = i as usize;
        self.side_scroll = 0;
        self.sync_subscriptions();
    }

    fn select_index(&mut self, i: usize) {
        let candidates: Vec<usize> = (0..self.rows.len()).filter(|&k| self.rows[k].run.is_some()).collect();
        let pick = if i == usize::MAX {
            candidates.last()
        } else {
            candidates.first()
        };
        if let Some(&k) = pick {
            self.selected = k;
            self.sync_subscriptions();
        }
    }

    fn overlay_key(&mut self, overlay: Overlay, key: KeyEvent) -> Option<Overlay> {
        match overlay {
            Overlay::Help => match key.code {
                KeyCode::Esc | KeyCode::Char('q') | KeyCode::Char('?') | KeyCode::Enter => None,
                _ => Some(Overlay::Help),
            },
            Overlay::Confirm { run, name, force } => match key.code {
                KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => {
                    self.commands.push(Command::Cancel { run, force });
                    self.message = Some(format!("cancelling {name}"));
                    None
                }
                _ => None,
            },
            Overlay::Compose(mut composer) => match composer.key(key) {
                super::form::Outcome::Keep => Some(Overlay::Compose(composer)),
                super::form::Outcome::Close => None,
                super::form::Outcome::Submit => {
                    let text = composer.text();
                    if text.trim().is_empty() {
                        return Some(Overlay::Compose(composer));
                    }
                    let prompt_id = composer.prompt_id.clone();
                    self.commands.push(Command::Send {
                        run: composer.run.clone(),
                        text,
                        prompt_id: prompt_id.clone(),
                    });
                    self.message = Some(format!("sending to {}…", composer.run_name));
                    self.pending_send = Some((prompt_id, composer));
                    None
                }
            },
            Overlay::NewRun(mut form) => match form.key(key) {
                super::form::Outcome::Keep => Some(Overlay::NewRun(form)),
                super::form::Outcome::Close => None,
                super::form::Outcome::Submit => match form.params() {
                    Ok(params) => {
                        self.commands.push(Command::Start(Box::new(params)));
                        None
                    }
                    Err(e) => {
                        form.error = Some(e);
                        Some(Overlay::NewRun(form))
                    }
                },
            },
        }
    }
}

pub fn short(id: &str) -> &str {
    &id[..id.len().min(10)]
}

/// Standard base64, for OSC 52 (a few lines; not worth a crate).
fn base64_encode(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(base64_encode(b"hi"), "aGk=");
        assert_eq!(base64_encode(b"hello world"), "aGVsbG8gd29ybGQ=");
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"abc"), "YWJj");
    }
}
