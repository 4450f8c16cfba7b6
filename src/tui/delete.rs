//! `D`: deleting ended runs from the tree — the selected one, or the
//! marked ones — with the runs they own, after a question naming every
//! run that goes. Nothing live is offered: the daemon refuses it anyway.

use super::app::{App, Command, Overlay};
use crate::api::RemoveResult;

impl App {
    pub(super) fn ask_delete(&mut self) {
        let targets: Vec<String> = match self.tree.marked.is_empty() {
            true => self.selected_run().map(|r| r.id.clone()).into_iter().collect(),
            false => self.tree.marked.clone(),
        };
        if targets.is_empty() {
            return;
        }
        // The runs they own go too, as `agents rm` does.
        let mut going = targets.clone();
        let mut i = 0;
        while i < going.len() {
            let parent = going[i].clone();
            going.extend(
                self.runs
                    .iter()
                    .filter(|r| r.parent_id.as_deref() == Some(parent.as_str()) && !r.detached)
                    .filter(|r| !targets.contains(&r.id))
                    .map(|r| r.id.clone()),
            );
            i += 1;
        }
        let named = |id: &String| self.run(id).map(|r| r.name.clone()).unwrap_or_else(|| id.clone());
        let live: Vec<String> = going
            .iter()
            .filter(|id| self.run(id).is_some_and(|r| r.state.is_live()))
            .map(named)
            .collect();
        if !live.is_empty() {
            self.message = Some(format!("not deleted: {} still live (cancel first)", live.join(", ")));
            return;
        }
        let names = going.iter().map(named).collect();
        self.overlay.shown = Some(Overlay::ConfirmDelete { runs: targets, names });
    }

    pub(super) fn removed(&mut self, result: Result<RemoveResult, String>) {
        self.message = Some(match result {
            Ok(r) => {
                self.tree.marked.retain(|id| !r.removed.iter().any(|g| g.id == *id));
                let names: Vec<&str> = r.removed.iter().map(|g| g.name.as_str()).collect();
                format!("deleted {}", names.join(", "))
            }
            Err(e) => format!("not deleted: {e}"),
        });
        self.commands.push(Command::Refresh);
    }
}

/// `Delete lint, review and 2 more? Their records and output go for good.`
pub fn question(names: &[String]) -> String {
    const SHOWN: usize = 6;
    let mut list = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        list.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    let whose = if names.len() == 1 { "Its" } else { "Their" };
    format!("Delete {list}? {whose} records and output go for good.")
}
