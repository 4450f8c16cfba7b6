//! Runs that need you. A run that starts waiting for an answer, or ends,
//! while it is not the selected one becomes *unseen* until it is selected:
//! its tree row is marked, the header counts it, a key jumps to it, and the
//! moment can notify (the bell, a desktop notification through the outer
//! terminal, a command of the user's). A live run whose turn ended (working
//! to idle) while it was not selected is *done, unseen* until it is: marked
//! and counted, with no bell (nothing asks for you).

use std::collections::{HashMap, HashSet};

use super::app::{App, Command};
use crate::api::{ActivityStatus, RunRecord, RunState};

/// What happened to a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// It waits for input or an approval.
    Waiting,
    /// It ended.
    Ended,
}

impl Moment {
    pub fn said(self) -> &'static str {
        match self {
            Moment::Waiting => "waits for you",
            Moment::Ended => "ended",
        }
    }
}

#[derive(Debug, Default)]
pub struct Notices {
    /// Whether each run was waiting, and live, at the last list.
    last: HashMap<String, (bool, bool)>,
    /// Whether each live run was working at the last list.
    was_working: HashMap<String, bool>,
    /// Whether a list was seen yet: what was already so at opening is no
    /// moment (nothing rings for the runs that ended last night).
    started: bool,
    pub unseen: HashSet<String>,
    /// Live runs whose turn ended since they were last selected.
    pub done: HashSet<String>,
}

fn waiting(run: &RunRecord) -> bool {
    run.state.is_live() && matches!(run.status, ActivityStatus::WaitingInput | ActivityStatus::NeedsApproval)
}

impl Notices {
    /// After a new list of the runs: the moments since the last one, the
    /// selected run's included. Runs that waited already at opening are
    /// unseen too (they need you), but make no moment.
    pub fn update(&mut self, runs: &[RunRecord], selected: Option<&str>) -> Vec<(String, Moment)> {
        let mut moments = Vec::new();
        for run in runs {
            let now = (waiting(run), run.state.is_live());
            let before = self.last.insert(run.id.clone(), now);
            let (is_waiting, is_live) = now;
            let moment = match before {
                _ if !self.started => is_waiting.then_some(Moment::Waiting),
                // Cancelled: whoever cancelled it knows, and nothing waits on you.
                Some((_, true)) if !is_live && run.state != RunState::Cancelled => Some(Moment::Ended),
                Some((false, _)) | None if is_waiting => Some(Moment::Waiting),
                // New and already ended (it never ran here), or no change.
                _ => None,
            };
            let Some(moment) = moment else { continue };
            // The selected run is seen as it happens; it still notifies (the
            // terminal may be behind another window).
            if selected != Some(run.id.as_str()) {
                self.unseen.insert(run.id.clone());
            }
            if self.started {
                moments.push((run.id.clone(), moment));
            }
        }
        let listed: HashSet<&str> = runs.iter().map(|r| r.id.as_str()).collect();
        self.note_turns_done(runs, selected, &listed);
        self.last.retain(|id, _| listed.contains(id.as_str()));
        self.unseen.retain(|id| listed.contains(id.as_str()));
        self.started = true;
        moments
    }

    /// Marks the live runs, other than the selected one, that went from
    /// working to idle since the last list; a run that works again, or
    /// ended (unseen then), is no longer "done".
    fn note_turns_done(&mut self, runs: &[RunRecord], selected: Option<&str>, listed: &HashSet<&str>) {
        for run in runs {
            let working = run.state.is_live() && run.status.is_working();
            let was = self.was_working.insert(run.id.clone(), working);
            let ended_turn = was == Some(true) && run.state.is_live() && run.status == ActivityStatus::Idle;
            if ended_turn && self.started && selected != Some(run.id.as_str()) {
                self.done.insert(run.id.clone());
            }
            if working || !run.state.is_live() {
                self.done.remove(&run.id);
            }
        }
        self.was_working.retain(|id, _| listed.contains(id.as_str()));
        self.done.retain(|id| listed.contains(id.as_str()));
    }

    pub fn seen(&mut self, run: &str) {
        self.unseen.remove(run);
        self.done.remove(run);
    }
}

/// A desktop notification through the outer terminal: OSC 9 (iTerm2,
/// WezTerm, kitty, Windows Terminal) and OSC 777 (foot, urxvt, Ghostty); a
/// terminal that knows neither ignores both. Over SSH too.
pub fn desktop(title: &str, body: &str) -> Vec<u8> {
    let clean = |s: &str| crate::text::inert(s).replace(';', ",");
    let (title, body) = (clean(title), clean(body));
    format!("\x1b]9;{title}: {body}\x07\x1b]777;notify;{title};{body}\x07").into_bytes()
}

/// The user's `notify` command with `{name}`, `{why}`, `{id}` and `{state}`
/// filled in, each word on its own (no shell sees them).
pub fn command(template: &[String], run: &RunRecord, moment: Moment) -> Vec<String> {
    let why = match moment {
        Moment::Waiting => format!("{} waits for you ({})", run.name, run.status.as_str()),
        Moment::Ended => format!(
            "{} {}: {}",
            run.name,
            run.state.as_str(),
            run.reason.as_deref().unwrap_or("")
        ),
    };
    template
        .iter()
        .map(|word| {
            word.replace("{name}", &crate::text::inert(&run.name))
                .replace("{why}", &crate::text::inert(&why))
                .replace("{id}", &run.id)
                .replace("{state}", run.state.as_str())
        })
        .collect()
}

impl App {
    /// Rings the terminal bell once when a run starts waiting for input.
    /// After a new list: each run that started waiting or ended notifies
    /// as configured (the bell once for any that started waiting), and the
    /// window title counts the runs that need you.
    pub(super) fn notify_moments(&mut self) {
        let selected = self.selected_run().map(|r| r.id.clone());
        let moments = self.notices.update(&self.runs, selected.as_deref());
        if self.bell && moments.iter().any(|(_, m)| *m == Moment::Waiting) {
            self.commands.push(Command::Terminal(vec![0x07]));
        }
        for (id, moment) in moments {
            let Some(run) = self.run(&id).cloned() else { continue };
            if self.desktop {
                let body = format!("{} {}", run.name, moment.said());
                self.commands.push(Command::Terminal(desktop("agents", &body)));
            }
            if !self.notify.is_empty() {
                self.commands.push(Command::Notify(command(&self.notify, &run, moment)));
            }
        }
        self.retitle();
    }

    /// Marks the selected run seen, and says the count in the window title
    /// when it changed.
    pub fn retitle(&mut self) {
        if let Some(id) = self.selected_run().map(|r| r.id.clone()) {
            self.notices.seen(&id);
        }
        let count = self.notices.unseen.len();
        if self.titled != Some(count) {
            self.titled = Some(count);
            let title = match count {
                0 => "agents".to_string(),
                n => format!("agents · {n} need you"),
            };
            self.commands
                .push(Command::Terminal(format!("\x1b]2;{title}\x07").into_bytes()));
        }
    }

    /// The next run after the selected one that needs you, wrapping.
    pub fn next_unseen(&mut self) -> bool {
        let n = self.tree.rows.len();
        let found = (1..=n).map(|k| (self.tree.selected + k) % n.max(1)).find(|&i| {
            self.tree.rows[i].subagent.is_none()
                && self.tree.rows[i].team.is_none()
                && self.tree.rows[i]
                    .run
                    .as_ref()
                    .is_some_and(|id| self.notices.unseen.contains(id))
        });
        let Some(i) = found else { return false };
        self.tree.selected = i;
        self.sync_subscriptions();
        self.retitle();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, state: RunState, status: ActivityStatus) -> RunRecord {
        let mut r: RunRecord = serde_json::from_value(serde_json::json!({
            "id": id, "name": id, "harness": "demo", "host": "local", "cwd": "/", "command": [],
            "state": "running", "status": "working", "root_id": id, "detached": false,
            "created_at": "2026-12-02T00:00:00Z", "rows": 24, "cols": 80, "output_bytes": 0,
        }))
        .expect("a run record");
        r.state = state;
        r.status = status;
        r
    }

    #[test]
    fn a_run_that_starts_waiting_or_ends_unselected_is_unseen_once() {
        let mut n = Notices::default();
        let at_opening = [
            run("a", RunState::Running, ActivityStatus::Working),
            run("b", RunState::Running, ActivityStatus::NeedsApproval),
            run("c", RunState::Succeeded, ActivityStatus::Unknown),
        ];
        assert!(n.update(&at_opening, Some("a")).is_empty(), "no moment at opening");
        assert_eq!(
            n.unseen,
            HashSet::from(["b".to_string()]),
            "a run already waiting needs you"
        );
        let later = [
            run("a", RunState::Running, ActivityStatus::WaitingInput),
            run("b", RunState::Running, ActivityStatus::NeedsApproval),
            run("c", RunState::Succeeded, ActivityStatus::Unknown),
            run("d", RunState::Failed, ActivityStatus::Unknown),
        ];
        // a is selected: seen as it happens, yet a moment. d is new and
        // already ended: it never ran here, no moment.
        assert_eq!(n.update(&later, Some("a")), [("a".to_string(), Moment::Waiting)]);
        assert!(!n.unseen.contains("a"));
        let ends = [
            run("a", RunState::Succeeded, ActivityStatus::Unknown),
            run("b", RunState::Running, ActivityStatus::NeedsApproval),
            run("c", RunState::Succeeded, ActivityStatus::Unknown),
        ];
        assert_eq!(n.update(&ends, Some("b")), [("a".to_string(), Moment::Ended)]);
        assert!(n.update(&ends, Some("b")).is_empty(), "once");
        n.seen("a");
        assert_eq!(n.unseen, HashSet::from(["b".to_string()]));
        // A run cancelled, by the user or by the agent that owns it, needs
        // no one: no moment, not unseen.
        let mut more = ends.to_vec();
        more.push(run("e", RunState::Running, ActivityStatus::Working));
        assert!(n.update(&more, Some("b")).is_empty());
        more[3] = run("e", RunState::Cancelled, ActivityStatus::Unknown);
        assert!(n.update(&more, Some("b")).is_empty(), "a cancel is no moment");
        assert_eq!(n.unseen, HashSet::from(["b".to_string()]));
    }

    #[test]
    fn a_notification_carries_no_control_bytes() {
        let bytes = desktop("agents", "evil\x1b]0;x\x07 waits");
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(
            text.matches('\x1b').count(),
            2,
            "only the two notifications' own: {text:?}"
        );
        let r = run("01A", RunState::Running, ActivityStatus::NeedsApproval);
        let argv = command(
            &["notify-send".into(), "{name}".into(), "{why}".into()],
            &r,
            Moment::Waiting,
        );
        assert_eq!(argv, ["notify-send", "01A", "01A waits for you (needs_approval)"]);
    }
}
