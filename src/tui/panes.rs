//! Which runs the panes show (docs/design.md §9). Each pane keeps its run
//! while the selection moves: selecting a run already in a pane focuses
//! that pane; selecting another puts it in the focused pane. Panes not yet
//! chosen show the other live runs in tree order. Tab, `h` and `l` move the
//! focus from pane to pane, which selects the focused pane's run.

use std::collections::HashMap;

use super::app::{App, Command, Layout, PANE_HISTORY, PaneScreen, Panel};
use super::copy::CopyMode;
use super::keymap::Action;
use crate::protocol::screen::{ScreenMirror, ScreenUpdate};

/// The panes: the runs they show and how they are laid out, each run's
/// screen as sent, and what the daemon is told of them.
pub struct Panes {
    /// The runs in the panes, in their order, and the pane that has the
    /// focus (the selected run's).
    pub(super) order: Vec<String>,
    pub(super) focus: usize,
    pub(super) layout: Layout,
    pub(super) zoom: bool,
    /// `a`: the selected run takes the whole terminal, keys go to it, and
    /// Ctrl-a d comes back.
    pub(super) fullscreen: bool,
    pub(super) screens: HashMap<String, PaneScreen>,
    /// Runs whose output we subscribe to (the visible panes).
    pub(super) subscribed: Vec<String>,
    /// The pane sizes from the last draw, for PTY sizes.
    pub(super) sizes: HashMap<String, (u16, u16)>,
    /// Output applied since the last acks went out, by run.
    pub(super) unacked: HashMap<String, u64>,
    /// Scrollback lines per visible pane.
    pub(super) history_lines: usize,
    /// Copy mode over the selected pane, when active.
    pub(super) copy: Option<CopyMode>,
}

impl Default for Panes {
    fn default() -> Self {
        Panes {
            order: Vec::new(),
            focus: 0,
            layout: Layout::Single,
            zoom: false,
            fullscreen: false,
            screens: HashMap::new(),
            subscribed: Vec::new(),
            sizes: HashMap::new(),
            unacked: HashMap::new(),
            history_lines: PANE_HISTORY,
            copy: None,
        }
    }
}

impl Panes {
    /// A screen update of a pane's run: applied to its mirror, the view
    /// kept on its lines when scrolled back; what to ask of its history.
    pub(super) fn apply_screen(&mut self, run: String, update: ScreenUpdate) -> Option<Command> {
        if !self.subscribed.contains(&run) {
            return None;
        }
        let history_lines = self.history_lines;
        let screen = self.screens.entry(run.clone()).or_insert_with(|| PaneScreen {
            mirror: ScreenMirror::new(update.rows, update.cols, history_lines),
            scroll: 0,
            unseen: 0,
            history_asked: None,
            history_asks: 0,
        });
        // A new subscription (this pane's first, or after a
        // reconnect) counts from 1; it carries no scrolled rows.
        let (seq, first) = (update.seq, update.seq == 1);
        // A refused update leaves the screen as it was; the next
        // full one (a resize, a reconnect) mends it.
        // Scrolled back, the view stays on its lines: as many more
        // back as rows went into history below it.
        let pushed = update.scrolled.len();
        let size = (screen.mirror.rows, screen.mirror.cols);
        let applied = screen.mirror.apply(update).is_ok();
        let resized = applied && size != (screen.mirror.rows, screen.mirror.cols);
        if applied && screen.scroll > 0 {
            screen.scroll = (screen.scroll + pushed).min(screen.mirror.history().len().max(screen.scroll));
            screen.unseen += pushed;
        }
        if resized {
            // An answer asked for before is at the old width.
            screen.history_asked = None;
        }
        let mut ask = None;
        if applied && (first || (resized && screen.scroll > 0)) {
            // What scrolled off before it began watching; or, scrolled
            // back through a resize, the history rewrapped at the new
            // width (not scrolled back, the pane asks once it is).
            ask = Some(screen.ask_history(&run, history_lines));
        }
        self.unacked.insert(run, seq);
        ask
    }

    /// One ack per run for the updates applied since the last.
    pub(super) fn take_acks(&mut self) -> impl Iterator<Item = Command> + '_ {
        self.unacked.drain().map(|(run, offset)| Command::Ack { run, offset })
    }
}

impl App {
    /// The runs shown as panes, in order (only the focused one when zoomed).
    pub fn pane_runs(&self) -> Vec<String> {
        let (panes, focus) = self.arranged();
        match self.panes.zoom {
            true => panes.into_iter().nth(focus).into_iter().collect(),
            false => panes,
        }
    }

    /// The panes as the selection and the layout have them now, and the
    /// focused one.
    fn arranged(&self) -> (Vec<String>, usize) {
        let capacity = self.panes.layout.capacity();
        let mut panes: Vec<String> = self
            .panes
            .order
            .iter()
            .filter(|id| self.run(id).is_some())
            .take(capacity)
            .cloned()
            .collect();
        let mut focus = self.panes.focus.min(capacity - 1);
        if let Some(selected) = self.selected_run().map(|r| r.id.clone()) {
            match panes.iter().position(|p| *p == selected) {
                Some(i) => focus = i,
                None if focus < panes.len() => panes[focus] = selected,
                None => {
                    panes.push(selected);
                    focus = panes.len() - 1;
                }
            }
        }
        for row in &self.tree.rows {
            if panes.len() >= capacity {
                break;
            }
            if let Some(id) = &row.run
                && !panes.contains(id)
                && self.run(id).is_some_and(|r| r.state.is_live())
            {
                panes.push(id.clone());
            }
        }
        let focus = focus.min(panes.len().saturating_sub(1));
        (panes, focus)
    }

    /// Keeps the arrangement: panes hold their runs from here on.
    pub(super) fn arrange_panes(&mut self) {
        (self.panes.order, self.panes.focus) = self.arranged();
    }

    /// Moves the focus `by` panes (wrapping), selecting that pane's run.
    /// False when there is only one pane.
    pub(super) fn focus_pane(&mut self, by: isize) -> bool {
        self.arrange_panes();
        let count = match self.panes.zoom {
            true => 1,
            false => self.panes.order.len(),
        };
        if count < 2 {
            return false;
        }
        let to = (self.panes.focus as isize + by).rem_euclid(count as isize) as usize;
        self.focus_pane_at(to);
        true
    }

    /// Focuses pane `index`: its run becomes the selected one.
    pub(super) fn focus_pane_at(&mut self, index: usize) {
        let Some(id) = self.panes.order.get(index).cloned() else {
            return;
        };
        if let Some(i) = self
            .tree
            .rows
            .iter()
            .position(|r| r.run.as_deref() == Some(&id) && r.subagent.is_none() && r.team.is_none())
        {
            self.panes.focus = index;
            self.tree.selected = i;
            self.panel = Panel::Panes;
            self.sync_subscriptions();
        }
    }

    /// The actions that change what is shown where: layouts, zoom, the
    /// side panel, the focus from panel to panel and pane to pane, scrolling.
    pub(super) fn view_action(&mut self, action: Action) {
        match action {
            Action::Zoom => {
                self.panes.zoom = !self.panes.zoom;
                self.sync_subscriptions();
            }
            Action::ToggleSide => {
                let shown = self.side.shown.unwrap_or(self.measured.side_beside_by_width);
                self.side.shown = Some(!shown);
                // Its room goes to the panes: their runs take the new size.
                self.panes.sizes.clear();
            }
            Action::Single | Action::Split | Action::Grid => {
                self.panes.layout = match action {
                    Action::Single => Layout::Single,
                    Action::Split => Layout::Split,
                    _ => Layout::Grid,
                };
                self.panes.zoom = false;
                self.sync_subscriptions();
            }
            // Tree, then each pane in turn, then the side panel.
            Action::NextPanel => match self.panel {
                Panel::Tree => {
                    self.arrange_panes();
                    self.focus_pane_at(0);
                    self.panel = Panel::Panes;
                }
                Panel::Panes if !self.panes.zoom && self.panes.focus + 1 < self.pane_runs().len() => {
                    self.focus_pane_at(self.panes.focus + 1)
                }
                Panel::Panes => self.panel = Panel::Side,
                Panel::Side => self.panel = Panel::Tree,
            },
            Action::NextPane | Action::PrevPane => {
                let by = if action == Action::NextPane { 1 } else { -1 };
                if !self.focus_pane(by) {
                    self.message = Some(format!(
                        "one pane: {} shows two, {} four",
                        self.keymap.key_of(Action::Split),
                        self.keymap.key_of(Action::Grid)
                    ));
                }
            }
            Action::ScrollUp => {
                if self.panel == Panel::Side {
                    self.scroll_side(-10);
                } else {
                    self.scroll_pane(self.pane_page())
                }
            }
            Action::ScrollDown => {
                if self.panel == Panel::Side {
                    self.scroll_side(10);
                } else {
                    self.scroll_pane(-self.pane_page())
                }
            }
            _ => {}
        }
    }
}
