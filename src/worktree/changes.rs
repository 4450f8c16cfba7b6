//! What a worktree run changed: its branch against the commit it started
//! at, with the worktree's uncommitted and untracked files while it exists.

use std::path::Path;

use super::{Origin, diff, git, git_output};
use crate::api::{Changes, FileChange};

/// Untracked files shown in full, at most; more are listed by name only.
const MAX_UNTRACKED: usize = 200;

pub fn changes(origin: &Origin) -> Result<Changes, String> {
    let dir = Path::new(&origin.dir);
    let live = dir.is_dir();
    let repo = Path::new(&origin.repo);
    let commits = count_commits(repo, &origin.base, &origin.branch)?;
    let (mut text, dirty, untracked) = match live {
        // The working tree against the start: committed and not.
        true => (
            git(dir, &["diff", "--no-color", "--no-ext-diff", "-M", &origin.base])?,
            dirty_paths(dir)?,
            untracked(dir)?,
        ),
        false => (
            git(
                repo,
                &[
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    "-M",
                    &origin.base,
                    &origin.branch,
                ],
            )?,
            Vec::new(),
            Vec::new(),
        ),
    };
    for path in untracked.iter().take(MAX_UNTRACKED) {
        text.push_str(&new_file_diff(dir, path));
    }
    let truncated = text.len() > Changes::MAX_DIFF_BYTES;
    if truncated {
        let cut = text[..Changes::MAX_DIFF_BYTES].rfind('\n').map_or(0, |i| i + 1);
        text.truncate(cut);
    }
    let mut files: Vec<FileChange> = diff::parse(&text)
        .into_iter()
        .map(|f| FileChange {
            uncommitted: dirty.contains(&f.path),
            status: match untracked.contains(&f.path) {
                true => "untracked".into(),
                false => f.status.into(),
            },
            path: f.path,
            added: f.added,
            removed: f.removed,
        })
        .collect();
    // Named although their text did not fit.
    let missing: Vec<&String> = untracked
        .iter()
        .filter(|p| !files.iter().any(|f| &f.path == *p))
        .collect();
    for path in missing {
        files.push(FileChange {
            path: path.clone(),
            status: "untracked".into(),
            added: 0,
            removed: 0,
            uncommitted: true,
        });
    }
    Ok(Changes {
        branch: origin.branch.clone(),
        base: origin.base.clone(),
        from: origin.from.clone(),
        worktree: live.then(|| origin.dir.clone()),
        commits,
        uncommitted: dirty.len(),
        files,
        diff: text,
        truncated,
    })
}

/// Commits on `branch` since `base`.
pub(super) fn count_commits(repo: &Path, base: &str, branch: &str) -> Result<usize, String> {
    let count = git(repo, &["rev-list", "--count", &format!("{base}..refs/heads/{branch}")])?;
    count.trim().parse().map_err(|_| format!("git rev-list said {count:?}"))
}

/// Every path with uncommitted work in the worktree `dir`, untracked ones
/// included (renames by their new name).
pub(super) fn dirty_paths(dir: &Path) -> Result<Vec<String>, String> {
    let status = git(dir, &["status", "--porcelain=v1", "-z", "--untracked-files=all"])?;
    let mut paths = Vec::new();
    let mut entries = status.split('\0').filter(|e| !e.is_empty());
    while let Some(entry) = entries.next() {
        let Some(path) = entry.get(3..) else { continue };
        // A rename's entry is followed by its old name.
        if entry.starts_with('R') || entry.starts_with('C') {
            entries.next();
        }
        paths.push(path.to_string());
    }
    Ok(paths)
}

fn untracked(dir: &Path) -> Result<Vec<String>, String> {
    let list = git(dir, &["ls-files", "--others", "--exclude-standard", "-z"])?;
    Ok(list.split('\0').filter(|p| !p.is_empty()).map(str::to_string).collect())
}

/// An untracked file as a diff that adds it (git exits 1 for "differs").
fn new_file_diff(dir: &Path, path: &str) -> String {
    match git_output(
        dir,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-index",
            "--",
            "/dev/null",
            path,
        ],
    ) {
        Ok(out) if out.status.code() == Some(1) => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => String::new(),
    }
}
