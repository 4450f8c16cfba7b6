//! `runs.rm`: removing ended runs with their owned children (docs/design.md
//! §13), and `sessions.rm`: a conversation's records.

use serde::{Deserialize, Serialize};

use super::RunState;

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct RemoveParams {
    /// Runs by id, id prefix or name.
    #[serde(default)]
    pub runs: Vec<String>,
    /// Every ended run instead (narrowed by `older_than_secs`, `states`);
    /// one whose owned child still runs is left.
    #[serde(default)]
    pub ended: bool,
    /// Only runs that ended longer ago than this.
    #[serde(default)]
    pub older_than_secs: Option<u64>,
    /// Only runs in one of these states.
    #[serde(default)]
    pub states: Vec<RunState>,
    /// Cancel the live runs among them first (else they are refused).
    #[serde(default)]
    pub cancel: bool,
    /// Say what would go, remove nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// A run that goes (or, under `kept`, a detached child that stays).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RemovedRun {
    pub id: String,
    pub name: String,
    pub state: RunState,
    pub host: String,
    pub parent_id: Option<String>,
    /// A --worktree run's worktree: left on disk, with its branch.
    pub worktree: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RemoveResult {
    pub dry_run: bool,
    pub removed: Vec<RemovedRun>,
    /// Detached children of removed runs: kept, now roots.
    pub kept: Vec<RemovedRun>,
    /// With `ended`: runs left because a run they own is still live.
    pub left: Vec<String>,
    /// Hosts whose own records could not be removed there, with why (the
    /// records here are gone all the same).
    pub hosts_failed: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct SessionRemoveParams {
    pub session: String,
    /// Delete the harness's own transcript files too.
    #[serde(default)]
    pub purge_transcripts: bool,
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionRemoved {
    pub session: String,
    pub dry_run: bool,
    /// Runs that held it: their records stay, marked as pointing to a
    /// removed conversation.
    pub runs: Vec<String>,
    /// Transcript files deleted (with `purge_transcripts`) or that would be.
    pub files: Vec<String>,
}

/// `retention.plan`: the disk the state directory uses and what the
/// `[retention]` policy would prune now (`agents doctor`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RetentionReport {
    /// Everything under AGENTS_HOME.
    pub home_bytes: u64,
    /// The runs' output logs (with their indexes and checkpoints) still kept.
    pub logs_bytes: u64,
    pub keep_days: u64,
    pub max_log_bytes: Option<u64>,
    pub max_total_bytes: Option<u64>,
    pub would_prune: Vec<crate::values::retention::Prune>,
}
