//! Tool-table types of a run's worktree (docs/design.md §4): what the run
//! changed (`runs.changes`), merging its branch into the one it started
//! from (`runs.merge`), and removing the worktree (`worktree.rm`).

use serde::{Deserialize, Serialize};

/// `runs.changes`: the run's branch against the commit it started at,
/// its uncommitted work included while the worktree exists.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Changes {
    /// `agents/<run name>`.
    pub branch: String,
    /// The commit the branch started at.
    pub base: String,
    /// The branch a merge goes into; `None` when the run started on a
    /// detached HEAD.
    pub from: Option<String>,
    /// The worktree; `None` once it was removed (the diff is then the
    /// branch's commits alone).
    pub worktree: Option<String>,
    /// Commits on the branch since `base`.
    pub commits: usize,
    /// Commits on the branch that `from` does not have yet: what a merge
    /// would bring (`None` when `from` is gone or was never known).
    #[serde(default)]
    pub ahead: Option<usize>,
    /// `from` has all the branch's work (merged, fast-forwarded or
    /// squashed): nothing is left to merge.
    #[serde(default)]
    pub merged: bool,
    /// Files with changes not committed in the worktree (untracked ones
    /// included), which a merge leaves behind.
    pub uncommitted: usize,
    /// Something the reader should know (the worktree moved off its
    /// branch, so the diff and a merge differ).
    #[serde(default)]
    pub note: Option<String>,
    /// Every changed file with its whole counts, however much of the
    /// diff's text fits.
    pub files: Vec<FileChange>,
    /// The unified diff, cut at a line once it passes
    /// [`Changes::MAX_DIFF_BYTES`]. The agent's own bytes: made inert
    /// before any terminal sees them.
    pub diff: String,
    pub truncated: bool,
}

impl Changes {
    /// Half a frame: the rest of the answer always fits.
    pub const MAX_DIFF_BYTES: usize = 512 * 1024;
}

/// One file of [`Changes`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FileChange {
    pub path: String,
    /// `added`, `modified`, `deleted`, `renamed`, `copied`, or `untracked`.
    pub status: String,
    pub added: usize,
    pub removed: usize,
    /// Not committed in the worktree.
    pub uncommitted: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MergeParams {
    pub run: String,
    /// One new commit on the target with the branch's changes, instead of
    /// a merge (or fast-forward) of its commits.
    #[serde(default)]
    pub squash: bool,
}

/// What `runs.merge` did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Merged {
    pub branch: String,
    pub into: String,
    /// The target's new tip.
    pub commit: String,
    /// The branch's commits that were merged.
    pub commits: usize,
    /// `fast-forward`, `merge` or `squash`.
    pub how: String,
    /// Uncommitted files in the worktree, not part of the merge.
    pub uncommitted: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorktreeRmParams {
    pub run: String,
    /// Remove it although it holds uncommitted work.
    #[serde(default)]
    pub force: bool,
}

/// What `worktree.rm` did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WorktreeRemoved {
    pub worktree: String,
    /// Kept: its commits stay reachable.
    pub branch: String,
    /// Uncommitted files thrown away with `force`.
    pub discarded: usize,
}
