//! The TUI's state and what each key and each daemon message does to it.
//! Pure: no I/O. Whatever must reach the daemon is queued as a `Command`
//! for the event loop, so tests drive keys in and read commands out.

use std::collections::HashMap;
use std::time::SystemTime;

use super::form::{Composer, NewRunForm};
use super::keymap::Keymap;
use super::peek::Peek;
use crate::api::{RunDetail, RunRecord, SendResult, StartParams};
use crate::protocol::screen::{ScreenMirror, ScreenUpdate};

/// Lines of scrollback each visible pane keeps by default (plain text,
/// client side); `engine.history_lines` in the config sets it.
pub const PANE_HISTORY: usize = 10_000;

/// What the event loop must ask the daemon for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// The whole list again: every live run and the newest ended ones.
    Refresh,
    /// These runs again (heard changed), with their parents.
    RefreshRuns(Vec<String>),
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
    /// Subscribe again to an ended run's screen, rewrapped to its pane's
    /// size (it can no longer take the pane's size itself).
    Fit {
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
    /// Resume a session natively (`r` on an ended run that had one), or
    /// queue its resume behind its run still in it (`queue`).
    Resume {
        session: String,
        queue: bool,
    },
    /// Load the run's native transcript (the Transcript tab).
    Transcript(String),
    /// Load the tree around the run (the Lineage tab: resumes and forks).
    Lineage(String),
    /// Load what a worktree run changed (the Changes tab).
    Changes(String),
    /// Load the newest mail of a run or a team (the Mail tab).
    Mail(super::mail::MailOf),
    /// Merge a worktree run's branch into the branch it started from.
    Merge {
        run: String,
        squash: bool,
    },
    /// Ask for the rows that scrolled off a run's screen before `before`,
    /// when the pane had `kept_from` rows of its own history; the pane's
    /// `ask`-th ask.
    History {
        run: String,
        ask: u64,
        before: u64,
        kept_from: usize,
        max_lines: usize,
    },
    /// Tell the daemon a pane has shown its run's screen update `offset`
    /// (its `seq`).
    Ack {
        run: String,
        offset: u64,
    },
    /// Answer the question the run's screen shows (`yes`, `no`, or text).
    Answer {
        run: String,
        answer: String,
    },
    /// Delete ended runs with the runs they own (`runs.rm`).
    Remove(Vec<String>),
    /// Give a run a new name (`runs.rename`).
    Rename {
        run: String,
        name: String,
    },
    /// Write to the user's terminal (OSC 52 clipboard, bell).
    Terminal(Vec<u8>),
    /// Start the user's notify command (argv, no shell), never waited on.
    Notify(Vec<String>),
}

/// What the daemon (or the link to it) tells the TUI.
#[derive(Debug, Clone)]
pub enum Update {
    Connected,
    Disconnected(String),
    Runs(Vec<RunRecord>),
    /// The runs `asked` for again as they are now (one not among `runs`
    /// is gone), their parents, and their subagents (`None` when the
    /// daemon cannot say).
    RunsChanged {
        asked: Vec<String>,
        runs: Vec<RunRecord>,
        subagents: Option<Vec<crate::api::RunSubagent>>,
    },
    Detail(Box<RunDetail>),
    /// A screen update of a pane's run (`runs.attach` with `screen`).
    Screen {
        run: String,
        update: Box<ScreenUpdate>,
    },
    /// The rows that scrolled off a run's screen before a pane began
    /// watching it (`runs.history`), for the history the pane asked at
    /// `kept_from` rows (its `ask`-th ask).
    History {
        run: String,
        ask: u64,
        kept_from: usize,
        lines: Vec<String>,
    },
    Changed(String),
    /// A notification this TUI does not know (a newer daemon's).
    Unknown(String),
    Sent {
        prompt_id: String,
        result: Result<SendResult, String>,
    },
    Started(Box<Result<RunRecord, String>>),
    Failed(String),
    /// The remote hosts and their links, when `hosts.list` changed.
    Hosts(Vec<crate::api::HostRecord>),
    /// The config's routines, when `routines.list` changed.
    Routines(Vec<crate::api::RoutineRecord>),
    /// The agent harnesses whose program is on PATH here (looked up once,
    /// off the loop: `form::installed_harnesses`).
    Installed(Vec<String>),
    /// The subagents of the listed runs (rows under them in the tree).
    Subagents(Vec<crate::api::RunSubagent>),
    /// The teams (headings over their leaders in the tree).
    Teams(Vec<crate::api::TeamRecord>),
    /// The newest messages of a run's transcript, or why there are none.
    Transcript {
        run: String,
        result: Result<Vec<crate::api::TranscriptMessage>, String>,
    },
    /// The tree around a run (`runs.lineage`), or why it could not be read.
    Lineage {
        run: String,
        result: Result<crate::api::Lineage, String>,
    },
    /// The newest mail of a run or a team (the Mail tab), or why not.
    Mail {
        of: super::mail::MailOf,
        result: Result<Vec<crate::api::MailRecord>, String>,
    },
    /// What a worktree run changed (`runs.changes`), or why not.
    Changes {
        run: String,
        result: Result<crate::api::Changes, String>,
    },
    /// What `runs.merge` did, or why it did nothing.
    Merged {
        run: String,
        result: Result<crate::api::Merged, String>,
    },
    /// What `runs.rm` removed, or why nothing.
    Removed(Result<crate::api::RemoveResult, String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Insert,
}

pub use super::side::Tab;

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
    NewRun(Box<NewRunForm>),
    Compose(Box<Composer>),
    Confirm {
        run: String,
        name: String,
        force: bool,
    },
    /// `r` on a live run: another copy of it (another paid agent) only
    /// when confirmed.
    ConfirmRerun {
        run: String,
        name: String,
        /// The run's conversation: its resume is queued behind it instead.
        session: Option<String>,
    },
    /// `M`: merge the run's branch into `into` (or squash it) when confirmed.
    ConfirmMerge {
        run: String,
        branch: String,
        into: String,
    },
    /// `o`: the selected run's last lines or question, and a reply.
    Peek(Box<Peek>),
    /// `D`: delete these ended runs (the ones named and those they own).
    ConfirmDelete {
        runs: Vec<String>,
        names: Vec<String>,
    },
    /// `R`: the selected run's new name, as typed.
    Rename(Box<super::rename::Rename>),
}

/// A prompt typed in an overlay, kept until the daemon has taken it: if it
/// could not, its overlay comes back with it.
pub enum Draft {
    Compose(Box<Composer>),
    Peek(Box<Peek>),
}

impl Draft {
    pub(super) fn run_name(&self) -> &str {
        match self {
            Draft::Compose(c) => &c.run_name,
            Draft::Peek(p) => &p.run_name,
        }
    }

    pub(super) fn into_overlay(self) -> Overlay {
        match self {
            Draft::Compose(c) => Overlay::Compose(c),
            Draft::Peek(p) => Overlay::Peek(p),
        }
    }
}

/// A run's screen as this client sees it: the cells its emulator sent.
pub struct PaneScreen {
    pub mirror: ScreenMirror,
    /// Lines scrolled back (0 = live). Output arriving meanwhile adds to
    /// it, so the view stays on the same lines.
    pub scroll: usize,
    /// Lines that arrived below the view while scrolled back.
    pub unseen: usize,
    /// The number of the newest `runs.history` asked for and not yet
    /// answered: only its answer is taken (an older one may come later,
    /// and one asked before a resize at the same offset is at the old
    /// width).
    pub history_asked: Option<u64>,
    /// How many times this pane has asked for its history.
    pub history_asks: u64,
}

impl PaneScreen {
    /// Asks for the rows that scrolled off before the screen shown now.
    pub fn ask_history(&mut self, run: &str, max_lines: usize) -> Command {
        self.history_asks += 1;
        self.history_asked = Some(self.history_asks);
        Command::History {
            run: run.to_string(),
            ask: self.history_asks,
            before: self.mirror.offset,
            kept_from: self.mirror.history().len(),
            max_lines,
        }
    }
}

pub struct App {
    pub(super) runs: Vec<RunRecord>,
    /// The run tree: rows, selection, filter, marks (`tree.rs`).
    pub(super) tree: super::tree::Tree,
    /// The side panel and what its tabs loaded (`side.rs`).
    pub(super) side: super::side::SidePanel,
    /// The panes: which runs, laid out how, their screens (`panes.rs`).
    pub(super) panes: super::panes::Panes,
    /// The overlay over the screen and the draft sent from one (`overlay.rs`).
    pub(super) overlay: super::overlay::Overlays,
    pub(super) mode: Mode,
    pub(super) panel: Panel,
    pub(super) details: HashMap<String, RunDetail>,
    /// A one-line message for the status bar (errors, confirmations).
    pub(super) message: Option<String>,
    /// Notifications heard from the daemon that this TUI does not know,
    /// each said once in the status bar.
    pub(super) unknown_heard: std::collections::BTreeSet<String>,
    /// The run a cancel was asked for here, and its name: its end replaces
    /// "cancelling NAME" with what became of it.
    pub(super) cancelling: Option<(String, String)>,
    /// Set while the daemon cannot be reached.
    pub(super) banner: Option<String>,
    /// INSERT was just left by the prefix key, from full screen or not:
    /// the prefix pressed again right after types itself into the run and
    /// goes back (tmux's `send-prefix`).
    pub(super) prefix: Option<bool>,
    /// The last event only went to the focused run (a key or a paste in
    /// INSERT): nothing on screen changed, so no frame is drawn for it, and
    /// the run's echo is not kept waiting behind one.
    pub(super) only_typed: bool,
    pub(super) quit: bool,
    pub(super) commands: Vec<Command>,
    /// What the last frames measured: where things were drawn, how far
    /// they scroll (`hits.rs`).
    pub(super) measured: super::hits::Measured,
    /// "Now" for durations; fixed in snapshot tests.
    pub(super) now: Option<SystemTime>,
    pub(super) no_color: bool,
    pub(super) connected: bool,
    pub(super) keymap: Keymap,
    /// Ring the terminal bell when a run starts waiting for an answer.
    pub(super) bell: bool,
    /// Desktop notifications through the outer terminal (`[tui] desktop`).
    pub(super) desktop: bool,
    /// The user's notify command (`[tui] notify`), empty for none.
    pub(super) notify: Vec<String>,
    /// Runs that need you: unseen since they started waiting or ended.
    pub(super) notices: super::notice::Notices,
    /// The count of unseen runs the window title last said.
    pub(super) titled: Option<usize>,
    /// The remote hosts with their link state (header and host rows).
    pub(super) hosts: Vec<crate::api::HostRecord>,
    /// Each run's subagents, shown as rows under it.
    pub(super) subagents: HashMap<String, Vec<crate::api::SubagentRecord>>,
    /// The config's routines (`routines.list`), a group after the hosts.
    pub(super) routines: Vec<crate::api::RoutineRecord>,
    /// The agent harnesses installed here; `None` until looked up.
    pub(super) installed: Option<Vec<String>>,
    /// The teams, newest first: each a heading over its leader in the tree.
    pub(super) teams: Vec<crate::api::TeamRecord>,
    /// Each run's place in `runs`.
    run_index: HashMap<String, usize>,
    /// Where the last broadcast's prompt went, run by run.
    pub(super) broadcast: Option<super::broadcast::Broadcast>,
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
            tree: Default::default(),
            side: Default::default(),
            panes: Default::default(),
            overlay: Default::default(),
            mode: Mode::Normal,
            panel: Panel::Tree,
            details: HashMap::new(),
            message: None,
            unknown_heard: Default::default(),
            cancelling: None,
            banner: None,
            prefix: None,
            only_typed: false,
            quit: false,
            commands: Vec::new(),
            measured: Default::default(),
            now: None,
            no_color: false,
            desktop: false,
            notify: Vec::new(),
            notices: Default::default(),
            titled: None,
            connected: false,
            keymap: Keymap::default(),
            bell: true,
            hosts: Vec::new(),
            subagents: HashMap::new(),
            routines: Vec::new(),
            installed: None,
            teams: Vec::new(),
            run_index: HashMap::new(),
            broadcast: None,
        }
    }

    pub fn take_commands(&mut self) -> Vec<Command> {
        let mut commands = std::mem::take(&mut self.commands);
        // One ack per run per batch of updates, after they were applied.
        commands.extend(self.panes.take_acks());
        commands
    }

    /// INSERT ends with the focused run, saying so: its keys would go
    /// nowhere.
    pub(super) fn leave_insert_if_ended(&mut self) {
        if self.mode != Mode::Insert {
            return;
        }
        let ended = match self.selected_run() {
            Some(run) if run.state.is_live() => return,
            Some(run) => format!("{} {}: back to NORMAL", run.name, run.state.as_str()),
            None => "the run is gone: back to NORMAL".to_string(),
        };
        self.mode = Mode::Normal;
        self.panes.fullscreen = false;
        self.prefix = None;
        self.message = Some(ended);
    }

    pub fn selected_run(&self) -> Option<&RunRecord> {
        let id = self.tree.rows.get(self.tree.selected)?.run.as_deref()?;
        self.run(id)
    }

    /// The subagent on the selected row, if the row is one.
    pub fn selected_subagent(&self) -> Option<&crate::api::SubagentRecord> {
        let row = self.tree.rows.get(self.tree.selected)?;
        let (run, agent) = (row.run.as_deref()?, row.subagent.as_deref()?);
        self.subagents.get(run)?.iter().find(|s| s.agent_id == agent)
    }

    /// The run of `id`: by the index when it is current (each frame looks
    /// runs up many times, among thousands), else by a search.
    pub fn run(&self, id: &str) -> Option<&RunRecord> {
        match self.run_index.get(id).and_then(|&i| self.runs.get(i)) {
            Some(r) if r.id == id => Some(r),
            _ => self.runs.iter().find(|r| r.id == id),
        }
    }

    pub(super) fn index_runs(&mut self) {
        self.run_index = self.runs.iter().enumerate().map(|(i, r)| (r.id.clone(), i)).collect();
    }

    /// The tree built again from what it shows (runs, subagents, hosts,
    /// routines, teams), the selection kept on its run.
    pub(super) fn rebuild_tree(&mut self) {
        let hosts: Vec<&str> = self.hosts.iter().map(|h| h.name.as_str()).collect();
        let routines: Vec<&str> = self.routines.iter().map(|r| r.name.as_str()).collect();
        self.tree
            .rebuild(&self.runs, &self.subagents, &hosts, &routines, &self.teams);
        self.sync_subscriptions();
    }

    /// Subscribes to the visible panes' runs and drops the rest.
    pub fn sync_subscriptions(&mut self) {
        self.arrange_panes();
        let want = self.pane_runs();
        for id in self.panes.subscribed.clone() {
            if !want.contains(&id) {
                self.commands.push(Command::Unsubscribe(id.clone()));
                self.panes.screens.remove(&id);
                // Left by its last viewer, the run is back at its own size:
                // shown again, its pane's size is asked for again.
                self.panes.sizes.remove(&id);
            }
        }
        for id in &want {
            if !self.panes.subscribed.contains(id) {
                self.commands.push(Command::Subscribe(id.clone()));
                self.fit_ended(id);
            }
        }
        self.panes.subscribed = want;
        if let Some(id) = self.selected_run().map(|r| r.id.clone())
            && !self.details.contains_key(&id)
        {
            self.commands.push(Command::Show(id));
        }
        self.want_tab_data();
    }

    /// Panes were laid out at these sizes: resize the runs' PTYs to match.
    pub fn panes_laid_out(&mut self, sizes: Vec<(String, u16, u16)>) {
        for (id, rows, cols) in sizes {
            let live = self.run(&id).is_some_and(|r| r.state.is_live());
            if self.panes.sizes.get(&id) != Some(&(rows, cols)) {
                self.panes.sizes.insert(id.clone(), (rows, cols));
                // The run's screen at the new size arrives as an update.
                if live && rows >= 2 && cols >= 2 {
                    self.commands.push(Command::Resize { run: id, rows, cols });
                } else if !live {
                    self.fit_ended(&id);
                }
            }
        }
    }

    /// An ended run shown in a pane of another size than it ended at: its
    /// last screen is asked for again, rewrapped to the pane (else a pane
    /// narrower than the run was cuts its lines).
    fn fit_ended(&mut self, id: &str) {
        let Some(run) = self.run(id).filter(|r| !r.state.is_live()) else {
            return;
        };
        let Some(&(rows, cols)) = self.panes.sizes.get(id) else {
            return;
        };
        if (rows, cols) != (run.rows, run.cols) && rows >= 2 && cols >= 2 {
            let run = id.to_string();
            self.commands.push(Command::Fit { run, rows, cols });
        }
    }
}

pub fn short(id: &str) -> &str {
    &id[..id.len().min(10)]
}
