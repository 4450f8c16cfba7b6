//! How a run ended, as the supervisor saw it (the one owner of `exit.json`
//! and of the `sup.exited` notification's evidence). Written to `exit.json`
//! before the supervisor tells anyone, so a daemon that was down can still
//! learn it; read by a daemon of any later build, so fields are only added,
//! with defaults.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::api::RunState;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndedBy {
    Cancel,
    Timeout,
    LogFailure,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessNote {
    pub pid: i32,
    pub command: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitEvidence {
    pub exit_code: Option<i32>,
    /// Name of the signal that ended the harness.
    pub signal: Option<String>,
    /// The exit status was collected with wait().
    pub reaped: bool,
    /// No process was left in the harness's group after cleanup.
    pub group_gone: bool,
    /// Processes still in the group when the harness exited (then signalled).
    pub group_leftovers: Vec<ProcessNote>,
    /// Descendants that left the group (reported, not hunted).
    pub escaped: Vec<ProcessNote>,
    /// The log reached the PTY's end of file (every byte the harness wrote is in it).
    pub output_complete: bool,
    pub output_bytes: u64,
    pub ended_by: Option<EndedBy>,
    /// The last signal the supervisor sent while ending the run.
    pub last_signal_sent: Option<String>,
    pub log_error: Option<String>,
    pub ended_at: i64,
}

impl ExitEvidence {
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("json.tmp");
        let bytes = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, bytes)?;
        std::fs::File::open(&tmp)?.sync_all()?;
        std::fs::rename(&tmp, path)
    }

    pub fn read(path: &Path) -> Option<ExitEvidence> {
        ExitEvidence::read_checked(path).ok().flatten()
    }

    /// The evidence at `path`: none when there is none, an error that says
    /// why when a file is there and cannot be read as evidence.
    pub fn read_checked(path: &Path) -> Result<Option<ExitEvidence>, String> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.to_string()),
        };
        serde_json::from_slice(&bytes).map(Some).map_err(|e| e.to_string())
    }

    /// The terminal state this evidence supports, and why.
    pub fn verdict(&self) -> (RunState, String) {
        let how = match (&self.exit_code, &self.signal) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(sig)) => format!("killed by {sig}"),
            (None, None) => "exit status unknown".to_string(),
        };
        let mut notes = Vec::new();
        if !self.group_leftovers.is_empty() {
            notes.push(format!(
                "{} process(es) left in its group were signalled: {}",
                self.group_leftovers.len(),
                describe(&self.group_leftovers)
            ));
        }
        if !self.escaped.is_empty() {
            notes.push(format!(
                "{} descendant(s) left the process group and were not touched: {}",
                self.escaped.len(),
                describe(&self.escaped)
            ));
        }
        if !self.output_complete {
            notes.push("the terminal was still held open when the run ended".to_string());
        }
        let with_notes = |head: String| {
            if notes.is_empty() {
                head
            } else {
                format!("{head}; {}", notes.join("; "))
            }
        };
        if let Some(err) = &self.log_error {
            return (
                RunState::Failed,
                with_notes(format!("output log write failed: {err}; {how}")),
            );
        }
        match self.ended_by {
            Some(EndedBy::Cancel) => {
                let by = self.last_signal_sent.as_deref().unwrap_or("no signal");
                return (
                    RunState::Cancelled,
                    with_notes(format!("cancelled; ended after {by}; {how}")),
                );
            }
            Some(EndedBy::Timeout) => {
                let by = self.last_signal_sent.as_deref().unwrap_or("no signal");
                return (
                    RunState::TimedOut,
                    with_notes(format!("time limit reached; ended after {by}; {how}")),
                );
            }
            Some(EndedBy::LogFailure) | None => {}
        }
        if self.exit_code == Some(0) && self.reaped && self.group_gone {
            (RunState::Succeeded, with_notes(how))
        } else if self.exit_code == Some(0) {
            (
                RunState::Failed,
                with_notes(format!("{how} but the process group could not be confirmed gone")),
            )
        } else {
            (RunState::Failed, with_notes(how))
        }
    }
}

fn describe(notes: &[ProcessNote]) -> String {
    notes
        .iter()
        .take(8)
        .map(|n| format!("{} ({})", n.pid, n.command))
        .collect::<Vec<_>>()
        .join(", ")
}
