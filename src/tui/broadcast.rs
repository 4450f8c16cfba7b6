//! One prompt to several runs (docs/design.md §9): Space marks the
//! selected run (`*` in its tree row, the count in the RUNS title), Esc
//! clears the marks, and `s` with runs marked opens the composer to all of
//! them. Enter sends the prompt to each marked run that is still live, each
//! with a prompt id of its own (the daemon queues each as a single send's);
//! the status line says, run by run, where it went, naming the ended runs
//! it skipped. The marks stay after a send, for the next prompt to the same
//! runs.

use super::app::{App, Command, Overlay};
use super::form::Composer;
use crate::api::SendResult;

/// What became of a broadcast's prompt at each marked run, as the daemon
/// answers, in the order the runs were marked.
#[derive(Debug, Clone, Default)]
pub struct Broadcast {
    pub runs: Vec<Sent>,
}

#[derive(Debug, Clone)]
pub struct Sent {
    pub name: String,
    /// `None` for a run that was skipped.
    pub prompt_id: Option<String>,
    /// `delivered`, `queued`, `not sent (why)`, `ended (skipped)`; `None`
    /// until the daemon answers.
    pub outcome: Option<String>,
}

impl Broadcast {
    /// For the status line: `sent to 2 of 3 runs: alpha delivered, beta
    /// queued, gamma ended (skipped)`.
    pub fn said(&self) -> String {
        let sent = self.runs.iter().filter(|r| r.prompt_id.is_some()).count();
        let verb = match self.runs.iter().any(|r| r.outcome.is_none()) {
            true => "sending",
            false => "sent",
        };
        let of = match sent == self.runs.len() {
            true if sent == 1 => "1 run".to_string(),
            true => format!("{sent} runs"),
            false => format!("{sent} of {} runs", self.runs.len()),
        };
        let each: Vec<String> = self
            .runs
            .iter()
            .map(|r| format!("{} {}", r.name, r.outcome.as_deref().unwrap_or("…")))
            .collect();
        format!("{verb} to {of}: {}", each.join(", "))
    }
}

impl App {
    /// Space: marks the selected run, or unmarks it.
    pub(super) fn toggle_mark(&mut self) {
        let Some((id, name)) = self.selected_run().map(|r| (r.id.clone(), r.name.clone())) else {
            return;
        };
        // The status line's hints say what the marks do.
        self.message = Some(match self.tree.marked.iter().position(|m| *m == id) {
            Some(at) => {
                self.tree.marked.remove(at);
                format!("unmarked {name}")
            }
            None => {
                self.tree.marked.push(id);
                format!("marked {name}")
            }
        });
    }

    /// Esc: no run marked any more.
    pub(super) fn clear_marks(&mut self) {
        if !self.tree.marked.is_empty() {
            self.message = Some(format!("{} marks cleared", self.tree.marked.len()));
            self.tree.marked.clear();
        }
    }

    /// `s` with runs marked: the composer, to each of them.
    pub(super) fn compose_to_marked(&mut self) {
        let targets: Vec<(String, String)> = self
            .tree
            .marked
            .iter()
            .filter_map(|id| self.run(id))
            .map(|r| (r.id.clone(), r.name.clone()))
            .collect();
        if !targets.iter().any(|(id, _)| self.is_live(id)) {
            self.message = Some("the marked runs have all ended: nothing to send to".into());
            return;
        }
        self.overlay.shown = Some(Overlay::Compose(Box::new(Composer::to_each(targets))));
    }

    fn is_live(&self, id: &str) -> bool {
        self.run(id).is_some_and(|r| r.state.is_live())
    }

    /// Enter in a broadcast's composer: the prompt to each marked run
    /// still live, each with its own id; the ended ones skipped, by name.
    pub(super) fn send_to_marked(&mut self, composer: &Composer, text: &str) {
        let mut runs = Vec::new();
        for (id, name) in &composer.targets {
            if !self.is_live(id) {
                runs.push(Sent {
                    name: name.clone(),
                    prompt_id: None,
                    outcome: Some("ended (skipped)".into()),
                });
                continue;
            }
            let prompt_id = ulid::Ulid::new().to_string();
            self.commands.push(Command::Send {
                run: id.clone(),
                text: text.to_string(),
                prompt_id: prompt_id.clone(),
            });
            runs.push(Sent {
                name: name.clone(),
                prompt_id: Some(prompt_id),
                outcome: None,
            });
        }
        let broadcast = Broadcast { runs };
        self.message = Some(broadcast.said());
        self.broadcast = Some(broadcast);
    }

    /// The daemon's answer to one of a broadcast's prompts, said with the
    /// others'; false when the prompt was not a broadcast's.
    pub(super) fn broadcast_sent(&mut self, prompt_id: &str, result: &Result<SendResult, String>) -> bool {
        let Some(broadcast) = &mut self.broadcast else {
            return false;
        };
        let Some(sent) = broadcast
            .runs
            .iter_mut()
            .find(|r| r.prompt_id.as_deref() == Some(prompt_id))
        else {
            return false;
        };
        sent.outcome = Some(match result {
            Ok(sent) => sent.state.clone(),
            Err(e) => format!("not sent ({e})"),
        });
        self.message = Some(broadcast.said());
        true
    }
}

/// The broadcast composer's title: `send to 3 runs`, naming the marked
/// runs that have ended, which it will skip.
pub(super) fn title(app: &App, targets: &[(String, String)]) -> String {
    let (live, ended): (Vec<_>, Vec<_>) = targets.iter().partition(|(id, _)| app.is_live(id));
    let skipped: Vec<&str> = ended.iter().map(|(_, name)| name.as_str()).collect();
    let n = live.len();
    let runs = if n == 1 { "run" } else { "runs" };
    match skipped.is_empty() {
        true => format!(" send to {n} {runs} "),
        false => format!(" send to {n} {runs} · {} ended, skipped ", skipped.join(", ")),
    }
}
