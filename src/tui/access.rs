//! The app as those outside the TUI read it, and as tests and benches set
//! it up: its fields are the TUI's own, these are what others may see.

use std::collections::HashMap;
use std::time::SystemTime;

use super::app::{App, Layout, Mode, Overlay, PaneScreen, Panel, Tab};
use super::copy::CopyMode;
use super::keymap::Keymap;
use super::mail::MailOf;
use super::notice::Notices;
use super::tree::TreeRow;
use crate::api::{MailRecord, RoutineRecord, RunDetail, RunRecord};

impl App {
    /// The runs as last listed.
    pub fn runs(&self) -> &[RunRecord] {
        &self.runs
    }

    /// The tree's rows, and which one is selected.
    pub fn rows(&self) -> &[TreeRow] {
        &self.tree.rows
    }

    pub fn selected(&self) -> usize {
        self.tree.selected
    }

    /// Selects the tree's row `i`, as a test arranges it (no subscriptions follow).
    pub fn set_selected(&mut self, i: usize) {
        self.tree.selected = i;
    }

    /// The tree's filter, as typed after `/`.
    pub fn filter(&self) -> &str {
        &self.tree.filter
    }

    /// Runs marked for a broadcast, in the order marked.
    pub fn marked(&self) -> &[String] {
        &self.tree.marked
    }

    /// The run to select once the runs are known.
    pub fn reselect(&self) -> Option<&str> {
        self.tree.reselect.as_deref()
    }

    pub fn set_reselect(&mut self, run: Option<String>) {
        self.tree.reselect = run;
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    pub fn panel(&self) -> Panel {
        self.panel
    }

    pub fn set_panel(&mut self, panel: Panel) {
        self.panel = panel;
    }

    pub fn layout(&self) -> Layout {
        self.panes.layout
    }

    pub fn set_layout(&mut self, layout: Layout) {
        self.panes.layout = layout;
    }

    /// The pane that has the focus, in the panes' order.
    pub fn pane_focus(&self) -> usize {
        self.panes.focus
    }

    /// The side panel's tab.
    pub fn tab(&self) -> Tab {
        self.side.tab
    }

    pub fn set_tab(&mut self, tab: Tab) {
        self.side.tab = tab;
    }

    /// Lines the side panel is scrolled down.
    pub fn side_scroll(&self) -> u16 {
        self.side.scroll
    }

    /// The side panel shown or hidden by `p`; `None` until then.
    pub fn side_shown(&self) -> Option<bool> {
        self.side.shown
    }

    pub fn set_side_shown(&mut self, shown: Option<bool>) {
        self.side.shown = shown;
    }

    /// The screens of the panes' runs, by run.
    pub fn screens(&self) -> &HashMap<String, PaneScreen> {
        &self.panes.screens
    }

    pub fn screen_mut(&mut self, run: &str) -> Option<&mut PaneScreen> {
        self.panes.screens.get_mut(run)
    }

    /// The pane sizes from the last draw (rows, cols), by run.
    pub fn pane_sizes(&self) -> &HashMap<String, (u16, u16)> {
        &self.panes.sizes
    }

    /// Copy mode over the selected pane, when active.
    pub fn copy(&self) -> Option<&CopyMode> {
        self.panes.copy.as_ref()
    }

    pub fn set_copy(&mut self, copy: Option<CopyMode>) {
        self.panes.copy = copy;
    }

    /// The overlay over the screen, if one is open.
    pub fn overlay(&self) -> Option<&Overlay> {
        self.overlay.shown.as_ref()
    }

    pub fn overlay_mut(&mut self) -> Option<&mut Overlay> {
        self.overlay.shown.as_mut()
    }

    pub fn set_overlay(&mut self, overlay: Option<Overlay>) {
        self.overlay.shown = overlay;
    }

    /// The status bar's one-line message.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }

    /// Why the daemon cannot be reached, while it cannot.
    pub fn banner(&self) -> Option<&str> {
        self.banner.as_deref()
    }

    pub fn connected(&self) -> bool {
        self.connected
    }

    pub fn set_connected(&mut self, connected: bool) {
        self.connected = connected;
    }

    /// The last event only went to the focused run: no frame is drawn for it.
    pub fn only_typed(&self) -> bool {
        self.only_typed
    }

    /// The user asked to leave.
    pub fn quitting(&self) -> bool {
        self.quit
    }

    pub fn keymap(&self) -> &Keymap {
        &self.keymap
    }

    pub fn set_keymap(&mut self, keymap: Keymap) {
        self.keymap = keymap;
    }

    /// Draws without colours (`NO_COLOR`).
    pub fn set_no_color(&mut self, no_color: bool) {
        self.no_color = no_color;
    }

    /// Fixes "now" for durations, as snapshot tests do.
    pub fn set_now(&mut self, now: Option<SystemTime>) {
        self.now = now;
    }

    /// Runs that need you: unseen since they started waiting or ended.
    pub fn notices(&self) -> &Notices {
        &self.notices
    }

    /// The config's routines, as last listed.
    pub fn routines(&self) -> &[RoutineRecord] {
        &self.routines
    }

    /// A run's newest mail as loaded (the Mail tab), or why not.
    pub fn mail(&self, of: &MailOf) -> Option<&Result<Vec<MailRecord>, String>> {
        self.side.mail.get(of)
    }

    /// A run's detail as loaded (the Record and Events tabs).
    pub fn detail(&self, run: &str) -> Option<&RunDetail> {
        self.details.get(run)
    }
}
