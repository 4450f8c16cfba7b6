//! Merging a run's branch into the branch it started from, and removing
//! its worktree. Neither forces: the merge is computed in git's object
//! store first (`merge-tree`), so a conflict changes nothing, and the
//! target only ever moves forward — by `update-ref` checked against its
//! old tip, or by a fast-forward in the checkout that has it, which git
//! refuses where it would overwrite the user's uncommitted work.

use std::path::Path;

use super::changes::{count_commits, dirty_paths};
use super::{Origin, git, git_output};
use crate::api::{Merged, WorktreeRemoved};

pub fn merge(origin: &Origin, run_name: &str, squash: bool) -> Result<Merged, String> {
    let repo = Path::new(&origin.repo);
    let branch = &origin.branch;
    let Some(into) = &origin.from else {
        return Err(format!(
            "run {run_name} started on a detached HEAD: there is no branch to merge {branch} into; merge it yourself"
        ));
    };
    let tip = rev(repo, &format!("refs/heads/{branch}"))
        .map_err(|_| format!("branch {branch} no longer exists (deleted?): nothing to merge"))?;
    let target = rev(repo, &format!("refs/heads/{into}"))
        .map_err(|_| format!("branch {into}, where run {run_name} started, no longer exists: nothing to merge into"))?;
    if is_ancestor(repo, &tip, &target)? {
        return Err(nothing_to_merge(origin, &tip, into));
    }
    let commits = count_commits(repo, &target, &tip)?;
    let (commit, how) = if !squash && is_ancestor(repo, &target, &tip)? {
        (tip.clone(), "fast-forward")
    } else {
        let tree = merged_tree(repo, &target, &tip, branch, into)?;
        // A squash (or merge) that brings no change is no commit at all.
        let before = git(repo, &["rev-parse", "--verify", &format!("{target}^{{tree}}")]).unwrap_or_default();
        if tree == before.trim() {
            return Err(format!("nothing to merge: {into} already has the changes of {branch}"));
        }
        let (parents, message) = match squash {
            true => (
                vec![target.as_str()],
                squash_message(repo, run_name, branch, &target, &tip),
            ),
            false => (
                vec![target.as_str(), tip.as_str()],
                format!("Merge {branch} (run {run_name})"),
            ),
        };
        (
            commit_tree(repo, &tree, &parents, &message)?,
            if squash { "squash" } else { "merge" },
        )
    };
    advance(repo, into, &target, &commit)?;
    let uncommitted = match Path::new(&origin.dir).is_dir() {
        true => dirty_paths(Path::new(&origin.dir))?.len(),
        false => 0,
    };
    Ok(Merged {
        branch: branch.clone(),
        into: into.clone(),
        commit,
        commits,
        how: how.into(),
        uncommitted,
    })
}

/// Why there is nothing to merge: all merged already, or the run's work
/// is not committed yet.
fn nothing_to_merge(origin: &Origin, tip: &str, into: &str) -> String {
    let dirty = match Path::new(&origin.dir).is_dir() {
        true => dirty_paths(Path::new(&origin.dir)).map_or(0, |d| d.len()),
        false => 0,
    };
    match (tip == origin.base, dirty) {
        (true, 1) => format!(
            "nothing committed on {} yet (1 uncommitted file in its worktree)",
            origin.branch
        ),
        (true, n) if n > 1 => format!(
            "nothing committed on {} yet ({n} uncommitted files in its worktree)",
            origin.branch
        ),
        _ => format!("nothing to merge: {into} already has every commit of {}", origin.branch),
    }
}

/// Whether merging `tip` into `target` would change nothing (a squash of
/// it is in `target` already). A conflict, or a git too old to tell,
/// counts as something to merge.
pub(super) fn brings_nothing(repo: &Path, target: &str, tip: &str) -> bool {
    let Ok(tree) = merged_tree(repo, target, tip, "", "") else {
        return false;
    };
    let before = git(repo, &["rev-parse", "--verify", &format!("{target}^{{tree}}")]).unwrap_or_default();
    tree == before.trim()
}

/// The tree of `tip` merged into `target`, or the conflict that stops it.
fn merged_tree(repo: &Path, target: &str, tip: &str, branch: &str, into: &str) -> Result<String, String> {
    let out = git_output(
        repo,
        &[
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            target,
            tip,
        ],
    )?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let tree = lines.next().unwrap_or_default().trim().to_string();
    match out.status.code() {
        Some(0) => Ok(tree),
        Some(1) => {
            let files: Vec<&str> = lines.take_while(|l| !l.is_empty()).collect();
            Err(format!(
                "conflict: merging {branch} into {into} conflicts in {}; nothing was changed",
                files.join(", ")
            ))
        }
        // `--write-tree` came with git 2.38; an older one prints its usage.
        _ if String::from_utf8_lossy(&out.stderr).contains("usage:") => {
            Err("agents merge needs git 2.38 or newer (`git merge-tree --write-tree`); nothing was changed".into())
        }
        _ => Err(format!("git merge-tree failed: {}", super::git_error(&out.stderr))),
    }
}

/// A squash commit's message: the run, then each commit's subject.
fn squash_message(repo: &Path, run_name: &str, branch: &str, target: &str, tip: &str) -> String {
    let subjects = git(
        repo,
        &["log", "--reverse", "--format=* %s", &format!("{target}..{tip}")],
    )
    .unwrap_or_default();
    format!("Squashed {branch} (run {run_name})\n\n{subjects}")
}

fn commit_tree(repo: &Path, tree: &str, parents: &[&str], message: &str) -> Result<String, String> {
    let mut args = vec!["commit-tree", tree];
    for p in parents {
        args.extend(["-p", p]);
    }
    args.extend(["-m", message]);
    git(repo, &args)
        .map(|c| c.trim().to_string())
        .map_err(|e| format!("git could not make the commit: {e}"))
}

/// Moves `into` from `old` to `new`: by a fast-forward in the checkout
/// that has it checked out (its files follow; git refuses, changing
/// nothing, where the user's own changes would be overwritten), else by
/// `update-ref`, which refuses if the branch moved meanwhile.
fn advance(repo: &Path, into: &str, old: &str, new: &str) -> Result<(), String> {
    match checkout_of(repo, into)? {
        Some(checkout) => git(Path::new(&checkout), &["merge", "--ff-only", "--quiet", new])
            .map(drop)
            .map_err(|e| {
                format!("{into} is checked out in {checkout}, which git would not update: {e}; nothing was changed")
            }),
        None => git(
            repo,
            &[
                "update-ref",
                "-m",
                "agents merge",
                &format!("refs/heads/{into}"),
                new,
                old,
            ],
        )
        .map(drop)
        .map_err(|e| format!("cannot move {into}: {e}; nothing was changed")),
    }
}

/// The worktree (main checkout included) that has `branch` checked out.
fn checkout_of(repo: &Path, branch: &str) -> Result<Option<String>, String> {
    let list = git(repo, &["worktree", "list", "--porcelain", "-z"])?;
    let wanted = format!("branch refs/heads/{branch}");
    let mut dir = None;
    for field in list.split('\0') {
        if let Some(d) = field.strip_prefix("worktree ") {
            dir = Some(d.to_string());
        } else if field == wanted {
            return Ok(dir);
        }
    }
    Ok(None)
}

pub(super) fn rev(repo: &Path, name: &str) -> Result<String, String> {
    git(
        repo,
        &["rev-parse", "--verify", "--quiet", &format!("{name}^{{commit}}")],
    )
    .map(|r| r.trim().to_string())
    .map_err(|_| format!("{} does not exist", name.trim_start_matches("refs/heads/")))
}

fn is_ancestor(repo: &Path, a: &str, b: &str) -> Result<bool, String> {
    let out = git_output(repo, &["merge-base", "--is-ancestor", a, b])?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => Err(format!("git merge-base failed: {}", super::git_error(&out.stderr))),
    }
}

/// Removes the run's worktree, keeping its branch; refuses uncommitted
/// work unless `force`.
pub fn remove(origin: &Origin, force: bool) -> Result<WorktreeRemoved, String> {
    let dir = Path::new(&origin.dir);
    if !dir.is_dir() {
        return Err(format!("the worktree {} was already removed", origin.dir));
    }
    let dirty = dirty_paths(dir)?;
    if !dirty.is_empty() && !force {
        return Err(format!(
            "the worktree {} holds uncommitted work ({} file{}: {}); nothing was removed; --force removes it anyway",
            origin.dir,
            dirty.len(),
            if dirty.len() == 1 { "" } else { "s" },
            name_some(&dirty),
        ));
    }
    let mut args = vec!["worktree", "remove"];
    if force {
        args.push("--force");
    }
    args.push(&origin.dir);
    git(Path::new(&origin.repo), &args).map_err(|e| format!("git worktree remove failed: {e}"))?;
    Ok(WorktreeRemoved {
        worktree: origin.dir.clone(),
        branch: origin.branch.clone(),
        discarded: dirty.len(),
    })
}

/// The first few of `paths`, then how many more.
fn name_some(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(3).map(String::as_str).collect();
    match paths.len().saturating_sub(3) {
        0 => shown.join(", "),
        more => format!("{}, and {more} more", shown.join(", ")),
    }
}
