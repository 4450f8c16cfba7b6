//! What the TUI hears from the daemon (`Update`), applied to the app:
//! lists, screens, answers to what it asked.

use std::collections::HashMap;

use super::app::{App, Command, Tab, Update, short};
use crate::api::{RunRecord, SendResult};

impl App {
    pub fn update(&mut self, update: Update) {
        match update {
            Update::Connected => {
                self.connected = true;
                self.banner = None;
                // A new connection has no subscriptions: ask again.
                self.panes.subscribed.clear();
                self.panes.sizes.clear();
                self.commands.push(Command::Refresh);
            }
            Update::Disconnected(why) => {
                self.connected = false;
                self.banner = Some(format!("daemon unreachable ({why}); reconnecting…"));
            }
            Update::Runs(runs) => self.runs_listed(runs),
            Update::RunsChanged { asked, runs, subagents } => self.runs_changed(asked, runs, subagents),
            Update::Detail(detail) => {
                let id = detail.run.id.clone();
                if let Some(r) = self.runs.iter_mut().find(|r| r.id == id) {
                    *r = detail.run.clone();
                }
                self.details.insert(id, *detail);
            }
            // Its first update asks for what scrolled off before.
            Update::Screen { run, update } => self.commands.extend(self.panes.apply_screen(run, *update)),
            Update::History {
                run,
                ask,
                kept_from,
                lines,
            } => {
                if let Some(screen) = self.panes.screens.get_mut(&run)
                    && screen.history_asked == Some(ask)
                {
                    screen.history_asked = None;
                    screen.mirror.replace_history(lines, kept_from);
                }
            }
            Update::Changed(id) => self.changed(id),
            Update::Unknown(method) => {
                if self.unknown_heard.insert(method.clone()) {
                    self.message = Some(format!(
                        "the daemon sent {method}, which this TUI does not know: start the TUI again to use the newer build"
                    ));
                }
            }
            Update::Sent { prompt_id, result } => self.sent(prompt_id, result),
            Update::Started(result) => self.started(*result),
            Update::Failed(e) => self.message = Some(e),
            Update::Hosts(hosts) => {
                // A host added or removed is a heading more or less.
                let renamed = !hosts.iter().map(|h| &h.name).eq(self.hosts.iter().map(|h| &h.name));
                self.hosts = hosts;
                if renamed {
                    self.rebuild_tree();
                }
            }
            Update::Routines(routines) => {
                let renamed = !routines
                    .iter()
                    .map(|r| &r.name)
                    .eq(self.routines.iter().map(|r| &r.name));
                self.routines = routines;
                if renamed {
                    self.rebuild_tree();
                }
            }
            Update::Installed(found) => self.harnesses_found(found),
            Update::Teams(teams) => {
                if teams != self.teams {
                    self.teams = teams;
                    // A team's mail moves with its unread counts.
                    self.side.mail.retain(|of, _| matches!(of, super::mail::MailOf::Run(_)));
                    self.rebuild_tree();
                }
            }
            Update::Subagents(list) => {
                let mut by_run: HashMap<String, Vec<crate::api::SubagentRecord>> = HashMap::new();
                for s in list {
                    by_run.entry(s.run_id).or_default().push(s.subagent);
                }
                if by_run != self.subagents {
                    self.subagents = by_run;
                    self.rebuild_tree();
                }
            }
            Update::Transcript { run, result } => {
                self.side.transcripts.insert(run, result);
            }
            Update::Lineage { run, result } => match result {
                Ok(lineage) => {
                    self.side.lineages.insert(run, lineage);
                }
                // The tab still shows parents and children from the list.
                Err(e) => self.message = Some(format!("lineage not loaded: {e}")),
            },
            Update::Mail { of, result } => {
                self.side.mail.insert(of, result);
            }
            Update::Changes { run, result } => self.changes_read(run, result),
            Update::Merged { run, result } => self.merged(run, result),
            Update::Removed(result) => self.removed(result),
        }
    }

    /// A run started from this TUI (or why not): said, and selected.
    fn started(&mut self, result: Result<RunRecord, String>) {
        match result {
            Ok(run) => {
                self.message = Some(match run.state {
                    crate::api::RunState::Blocked => format!(
                        "{} could not start: {}",
                        run.name,
                        run.reason.as_deref().unwrap_or("no reason recorded")
                    ),
                    // A resume queued behind the run still in its conversation.
                    crate::api::RunState::Pending => {
                        format!("queued {}: it starts once the run before it ends", run.name)
                    }
                    _ => format!("started {}", run.name),
                });
                let id = run.id.clone();
                if !self.runs.iter().any(|r| r.id == id) {
                    self.runs.push(run);
                    self.index_runs();
                }
                self.rebuild_tree();
                if let Some(i) = self.tree.row_of(&id) {
                    self.tree.selected = i;
                    self.sync_subscriptions();
                }
            }
            Err(e) => self.message = Some(format!("not started: {e}")),
        }
    }

    /// A new list of the runs: the tree, the marks and the notices follow.
    fn runs_listed(&mut self, runs: Vec<RunRecord>) {
        // A new run may resume or fork one whose tree is loaded.
        if runs.iter().any(|r| self.run(&r.id).is_none()) {
            self.side.lineages.clear();
        }
        self.runs = runs;
        self.index_runs();
        // A run no longer listed cannot be sent to.
        let listed: std::collections::HashSet<&str> = self.runs.iter().map(|r| r.id.as_str()).collect();
        self.tree.marked.retain(|id| listed.contains(id.as_str()));
        self.leave_insert_if_ended();
        self.say_cancelled();
        self.notify_moments();
        self.rebuild_tree();
        if let Some(id) = self.tree.reselect.take()
            && let Some(i) = self.tree.row_of(&id)
        {
            self.tree.selected = i;
            self.sync_subscriptions();
        }
    }

    /// The run cancelled from here ended: the status bar says so, unless
    /// it says something else by now.
    fn say_cancelled(&mut self) {
        let Some((id, name)) = &self.cancelling else { return };
        if self.run(id).is_some_and(|r| r.state.is_live()) {
            return;
        }
        if self.message.as_deref() == Some(cancelling_said(name).as_str()) {
            let state = self.run(id).map_or("ended", |r| r.state.as_str());
            self.message = Some(format!("{name}: {state}"));
        }
        self.cancelling = None;
    }

    /// Some runs read again: each put in its place in the list, one asked
    /// for and not answered taken out; their subagents replaced.
    fn runs_changed(
        &mut self,
        asked: Vec<String>,
        runs: Vec<RunRecord>,
        subagents: Option<Vec<crate::api::RunSubagent>>,
    ) {
        let mut all: std::collections::BTreeMap<String, RunRecord> =
            self.runs.iter().map(|r| (r.id.clone(), r.clone())).collect();
        for id in &asked {
            all.remove(id);
        }
        // The tree is built again below, with them.
        if let Some(list) = subagents {
            for id in asked.iter().chain(runs.iter().map(|r| &r.id)) {
                self.subagents.remove(id);
            }
            for s in list {
                self.subagents.entry(s.run_id).or_default().push(s.subagent);
            }
        }
        all.extend(runs.into_iter().map(|r| (r.id.clone(), r)));
        self.runs_listed(all.into_values().collect());
    }

    /// A run changed: what is loaded of it is read again when next shown.
    fn changed(&mut self, id: String) {
        self.details.remove(&id);
        // Reloaded when next shown: hooks and output change it often.
        // Changes being looked at stay on screen (and M answers)
        // while they are read again.
        let looking = self.side.tab == Tab::Changes && self.selected_run().is_some_and(|r| r.id == id);
        if looking {
            self.commands.push(Command::Changes(id.clone()));
        }
        let loaded = self.side.transcripts.remove(&id).is_some()
            | self.side.lineages.remove(&id).is_some()
            | super::mail::forget(self, &id)
            | (!looking && self.side.changes.loaded.remove(&id).is_some());
        if loaded {
            self.want_tab_data();
        }
        if self.selected_run().is_some_and(|r| r.id == id) {
            self.commands.push(Command::Show(id));
        }
    }

    /// The daemon's answer to a prompt sent from here.
    fn sent(&mut self, prompt_id: String, result: Result<SendResult, String>) {
        if self.broadcast_sent(&prompt_id, &result) {
            return;
        }
        // Only this prompt's draft: another answer leaves it waiting.
        let pending = match &self.overlay.pending_send {
            Some((id, _)) if *id == prompt_id => self.overlay.pending_send.take(),
            _ => None,
        };
        match (result, pending) {
            (Ok(sent), draft) => {
                let to = draft.map(|(_, d)| format!(" to {}", d.run_name())).unwrap_or_default();
                let why = sent.why.map(|w| format!(": {w}")).unwrap_or_default();
                self.message = Some(format!("prompt {}{to}{why} ({})", sent.state, short(&prompt_id)));
            }
            (Err(e), Some((_, draft))) => {
                // Keep the draft: nothing is lost when the daemon could not take it.
                self.message = Some(format!("not sent: {e}"));
                self.overlay.shown = Some(draft.into_overlay());
            }
            (Err(e), None) => self.message = Some(format!("not sent: {e}")),
        }
    }
}

/// What the status bar says while a cancel asked here is under way.
pub(super) fn cancelling_said(name: &str) -> String {
    format!("cancelling {name}")
}
