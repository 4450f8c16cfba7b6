//! How a run ended, as the supervisor saw it (the one owner of `exit.json`
//! and of the `sup.exited` notification's evidence). Written to `exit.json`
//! before the supervisor tells anyone, so a daemon that was down can still
//! learn it; read by a daemon of any later build, so fields are only added,
//! with defaults.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::api::RunState;
use crate::pty::Identity;

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
    /// The harness whose status this is: the process the supervisor
    /// spawned and reaped (none from a supervisor older than this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leader: Option<Identity>,
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

    /// The terminal state this evidence supports, and why. A run succeeds
    /// only from a durable exit status of 0 that was collected (reaped),
    /// every byte of its output in the log (the terminal's end reached),
    /// its process group gone, and no log failure: anything short of that
    /// is `failed`, saying what was missing.
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
        if self.exit_code != Some(0) {
            return (RunState::Failed, with_notes(how));
        }
        let unmet: Vec<&str> = [
            (!self.reaped).then_some("its exit status was not collected"),
            (!self.group_gone).then_some("the process group could not be confirmed gone"),
            (!self.output_complete).then_some("its output could not be confirmed complete"),
        ]
        .into_iter()
        .flatten()
        .collect();
        match unmet.is_empty() {
            true => (RunState::Succeeded, with_notes(how)),
            false => (
                RunState::Failed,
                with_notes(format!("{how} but {}", unmet.join(" and "))),
            ),
        }
    }

    /// Why this evidence is not of the harness recorded as `pid` started
    /// at `start_ticks`, when it names another (a supervisor's evidence
    /// supports only its own harness's end).
    pub fn not_of(&self, pid: Option<i64>, start_ticks: Option<i64>) -> Option<String> {
        let leader = self.leader.as_ref()?;
        let (pid, start) = (pid?, start_ticks?);
        (i64::from(leader.pid) != pid || leader.start_ticks as i64 != start).then(|| {
            format!(
                "the exit evidence is of pid {} (started at tick {}), not of the recorded harness (pid {pid})",
                leader.pid, leader.start_ticks
            )
        })
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A harness that exited 0, reaped, its group gone, every byte read.
    pub(crate) fn clean() -> ExitEvidence {
        ExitEvidence {
            exit_code: Some(0),
            signal: None,
            reaped: true,
            group_gone: true,
            group_leftovers: vec![],
            escaped: vec![],
            output_complete: true,
            output_bytes: 10,
            ended_by: None,
            last_signal_sent: None,
            log_error: None,
            ended_at: 1,
            leader: Some(Identity {
                pid: 42,
                start_ticks: 7,
                boot_id: "b".into(),
            }),
        }
    }

    fn verdict(change: impl FnOnce(&mut ExitEvidence)) -> (RunState, String) {
        let mut evidence = clean();
        change(&mut evidence);
        evidence.verdict()
    }

    #[test]
    fn a_run_succeeds_only_with_its_status_collected_its_output_whole_and_its_group_gone() {
        assert_eq!(verdict(|_| {}), (RunState::Succeeded, "exited with code 0".into()));
        let failed = |change: fn(&mut ExitEvidence), why: &str| {
            let (state, reason) = verdict(change);
            assert_eq!(state, RunState::Failed, "{reason}");
            assert!(reason.starts_with(&format!("exited with code 0 but {why}")), "{reason}");
        };
        failed(|e| e.reaped = false, "its exit status was not collected");
        failed(
            |e| e.group_gone = false,
            "the process group could not be confirmed gone",
        );
        failed(
            |e| e.output_complete = false,
            "its output could not be confirmed complete",
        );
        let (_, reason) = verdict(|e| e.output_complete = false);
        assert!(
            reason.ends_with("; the terminal was still held open when the run ended"),
            "{reason}"
        );
        let (state, reason) = verdict(|e| {
            e.reaped = false;
            e.group_gone = false;
        });
        assert_eq!(state, RunState::Failed);
        assert!(reason.contains("not collected and the process group"), "{reason}");
    }

    #[test]
    fn a_nonzero_status_a_signal_a_log_failure_a_cancel_and_a_timeout_are_each_named() {
        assert_eq!(
            verdict(|e| e.exit_code = Some(3)),
            (RunState::Failed, "exited with code 3".into())
        );
        assert_eq!(
            verdict(|e| {
                e.exit_code = None;
                e.signal = Some("SIGSEGV".into());
            }),
            (RunState::Failed, "killed by SIGSEGV".into())
        );
        assert_eq!(
            verdict(|e| e.exit_code = None).1,
            "exit status unknown",
            "no status: never a success"
        );
        let (state, reason) = verdict(|e| e.log_error = Some("No space left on device".into()));
        assert_eq!(state, RunState::Failed);
        assert!(reason.starts_with("output log write failed: No space left"), "{reason}");
        let ended = |by: EndedBy| {
            verdict(move |e| {
                e.exit_code = None;
                e.signal = Some("SIGTERM".into());
                e.ended_by = Some(by);
                e.last_signal_sent = Some("SIGTERM".into());
            })
        };
        assert_eq!(
            ended(EndedBy::Cancel),
            (
                RunState::Cancelled,
                "cancelled; ended after SIGTERM; killed by SIGTERM".into()
            )
        );
        assert_eq!(ended(EndedBy::Timeout).0, RunState::TimedOut);
    }

    #[test]
    fn leftovers_and_escaped_descendants_are_named_beside_the_verdict() {
        let note = |pid| ProcessNote {
            pid,
            command: "sleep".into(),
        };
        let (state, reason) = verdict(|e| {
            e.group_leftovers = vec![note(5)];
            e.escaped = vec![note(6)];
        });
        assert_eq!(state, RunState::Succeeded, "signalled and gone: cleaned up");
        assert_eq!(
            reason,
            "exited with code 0; 1 process(es) left in its group were signalled: 5 (sleep); \
             1 descendant(s) left the process group and were not touched: 6 (sleep)"
        );
    }

    #[test]
    fn evidence_is_of_its_own_harness_only() {
        let evidence = clean();
        assert_eq!(evidence.not_of(Some(42), Some(7)), None);
        let other = evidence
            .not_of(Some(42), Some(8))
            .expect("another start: another process");
        assert!(other.contains("not of the recorded harness (pid 42)"), "{other}");
        assert!(evidence.not_of(Some(43), Some(7)).is_some());
        // Nothing recorded to compare with, or evidence from an older
        // supervisor that names no harness: the status it reaped stands.
        assert_eq!(evidence.not_of(None, None), None);
        let older = ExitEvidence {
            leader: None,
            ..clean()
        };
        assert_eq!(older.not_of(Some(1), Some(1)), None);
    }

    #[test]
    fn evidence_written_by_an_older_supervisor_is_read() {
        let mut json = serde_json::to_value(clean()).unwrap();
        json.as_object_mut().unwrap().remove("leader");
        let read: ExitEvidence = serde_json::from_value(json).unwrap();
        assert_eq!(read.leader, None);
        assert_eq!(read.verdict().0, RunState::Succeeded);
    }
}
