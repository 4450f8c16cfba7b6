//! What a worktree run changed: its branch against the commit it started
//! at, with the worktree's uncommitted and untracked files while it exists.
//! The files and their counts come from git whole (`--numstat`); only the
//! diff's text is cut, and it is read no further than its bound.

use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::path::Path;

use super::{Origin, git, git_capped, git_output};
use crate::api::{Changes, FileChange};

/// Untracked files shown, at most; more are listed by name only.
const MAX_UNTRACKED: usize = 200;

/// An untracked file larger than this is counted, not shown.
const MAX_SHOWN_FILE: u64 = 1024 * 1024;

/// `git diff` as this module reads it, whatever the user's config says of
/// prefixes, relative paths, colour or external diff tools.
const DIFF: &[&str] = &[
    "-c",
    "diff.noprefix=false",
    "-c",
    "diff.mnemonicPrefix=false",
    "-c",
    "diff.relative=false",
    "diff",
    "--no-color",
    "--no-ext-diff",
    "--no-relative",
    "-M",
    "--src-prefix=a/",
    "--dst-prefix=b/",
];

pub fn changes(origin: &Origin) -> Result<Changes, String> {
    let dir = Path::new(&origin.dir);
    let live = dir.is_dir();
    let repo = Path::new(&origin.repo);
    let tip = branch_tip(repo, &origin.branch)?;
    let commits = count_commits(repo, &origin.base, &tip)?;
    let target = match &origin.from {
        Some(from) => super::merge::rev(repo, &format!("refs/heads/{from}")).ok(),
        None => None,
    };
    let ahead = match &target {
        Some(target) => Some(count_commits(repo, target, &tip)?),
        None => None,
    };
    // Merged: every commit is in `from`, or (a squash) merging brings it
    // nothing — what `agents merge` would refuse as nothing to merge.
    let merged = commits > 0
        && match (&target, ahead) {
            (_, Some(0)) => true,
            (Some(target), Some(_)) => super::merge::brings_nothing(repo, target, &tip),
            _ => false,
        };
    // The working tree against the start (committed and not) while it
    // exists; the branch's commits once it is gone.
    let (at, range): (&Path, Vec<&str>) = match live {
        true => (dir, vec![origin.base.as_str()]),
        false => (repo, vec![origin.base.as_str(), tip.as_str()]),
    };
    let (dirty, untracked) = match live {
        true => (dirty_paths(dir)?, untracked(dir)?),
        false => (Vec::new(), Vec::new()),
    };
    let mut files = tracked_files(at, &range, &dirty)?;
    let (mut text, mut truncated) = git_capped(at, &[DIFF, &range].concat(), Changes::MAX_DIFF_BYTES)?;
    for (i, path) in untracked.iter().enumerate() {
        let (added, binary, size) = count_lines(&dir.join(path));
        files.push(FileChange {
            path: path.clone(),
            status: "untracked".into(),
            added,
            removed: 0,
            uncommitted: true,
        });
        let room = Changes::MAX_DIFF_BYTES.saturating_sub(text.len());
        if i >= MAX_UNTRACKED || size > MAX_SHOWN_FILE || binary || size as usize > room {
            truncated |= !binary;
            continue;
        }
        text.push_str(&new_file_diff(dir, path));
    }
    Ok(Changes {
        branch: origin.branch.clone(),
        base: origin.base.clone(),
        from: origin.from.clone(),
        worktree: live.then(|| origin.dir.clone()),
        commits,
        ahead,
        merged,
        uncommitted: dirty.len(),
        note: live.then(|| off_branch(dir, &origin.branch)).flatten(),
        files,
        diff: text,
        truncated,
    })
}

/// The branch's commit, or why there is none.
fn branch_tip(repo: &Path, branch: &str) -> Result<String, String> {
    super::merge::rev(repo, &format!("refs/heads/{branch}"))
        .map_err(|_| format!("branch {branch} no longer exists (deleted?): its changes cannot be read"))
}

/// Commits in `tip` that `from` does not have.
pub(super) fn count_commits(repo: &Path, from: &str, tip: &str) -> Result<usize, String> {
    let count = git(repo, &["rev-list", "--count", &format!("{from}..{tip}")])?;
    count.trim().parse().map_err(|_| format!("git rev-list said {count:?}"))
}

/// A worktree whose checkout moved off its branch: what the diff shows
/// (the working tree) is then not what a merge takes (the branch).
fn off_branch(dir: &Path, branch: &str) -> Option<String> {
    let head = git(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"]).ok();
    match head.as_deref().map(str::trim) {
        Some(b) if b == branch => None,
        Some(other) => Some(format!(
            "the worktree is on branch {other}, not {branch}: a merge takes {branch}"
        )),
        None => Some(format!("the worktree's HEAD is detached: a merge takes {branch}")),
    }
}

/// The tracked files that changed, with whole counts and status.
fn tracked_files(at: &Path, range: &[&str], dirty: &[String]) -> Result<Vec<FileChange>, String> {
    let numstat = git(at, &[DIFF, range, &["--numstat", "-z"]].concat())?;
    let status = git(at, &[DIFF, range, &["--name-status", "-z"]].concat())?;
    let statuses = name_status(&status);
    Ok(numstat_entries(&numstat)
        .into_iter()
        .map(|(path, added, removed)| FileChange {
            status: statuses.get(&path).copied().unwrap_or("modified").into(),
            uncommitted: dirty.contains(&path),
            path,
            added,
            removed,
        })
        .collect())
}

/// `--numstat -z`: `A\tR\tPATH\0`, or `A\tR\t\0OLD\0NEW\0` for a rename
/// (`-` counts for a binary file).
fn numstat_entries(text: &str) -> Vec<(String, usize, usize)> {
    let mut out = Vec::new();
    let mut fields = text.split('\0');
    while let Some(entry) = fields.next() {
        let mut parts = entry.splitn(3, '\t');
        let (Some(a), Some(r), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let path = match path.is_empty() {
            true => {
                fields.next();
                fields.next().unwrap_or_default().to_string()
            }
            false => path.to_string(),
        };
        out.push((path, a.parse().unwrap_or(0), r.parse().unwrap_or(0)));
    }
    out
}

/// `--name-status -z`: each path's status (a rename by its new name).
fn name_status(text: &str) -> HashMap<String, &'static str> {
    let mut out = HashMap::new();
    let mut fields = text.split('\0').filter(|f| !f.is_empty());
    while let Some(code) = fields.next() {
        let status = match code.as_bytes().first() {
            Some(b'A') => "added",
            Some(b'D') => "deleted",
            Some(b'R') => "renamed",
            Some(b'C') => "copied",
            _ => "modified",
        };
        if matches!(code.as_bytes().first(), Some(b'R' | b'C')) {
            fields.next();
        }
        if let Some(path) = fields.next() {
            out.insert(path.to_string(), status);
        }
    }
    out
}

/// An untracked file's lines, whether it is binary (a NUL in its first
/// 8 KiB, as git judges), and its size; read a buffer at a time.
fn count_lines(path: &Path) -> (usize, bool, u64) {
    let Ok(file) = std::fs::File::open(path) else {
        return (0, false, 0);
    };
    let size = file.metadata().map_or(0, |m| m.len());
    let mut reader = std::io::BufReader::new(file);
    let mut head = [0u8; 8192];
    let n = reader.get_mut().read(&mut head).unwrap_or(0);
    if head[..n].contains(&0) {
        return (0, true, size);
    }
    let mut lines = head[..n].iter().filter(|&&b| b == b'\n').count();
    let mut last = head[..n].last().copied();
    while let Ok(buf) = reader.fill_buf()
        && !buf.is_empty()
    {
        lines += buf.iter().filter(|&&b| b == b'\n').count();
        last = buf.last().copied();
        let len = buf.len();
        reader.consume(len);
    }
    // A last line without its newline is a line too.
    (lines + usize::from(last.is_some_and(|b| b != b'\n')), false, size)
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
    match git_output(dir, &[DIFF, &["--no-index", "--", "/dev/null", path]].concat()) {
        Ok(out) if out.status.code() == Some(1) => String::from_utf8_lossy(&out.stdout).into_owned(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numstat_and_name_status_are_read_with_renames_and_binary_files() {
        let numstat = "3\t1\tsrc/a b.rs\0-\t-\tlogo.png\x000\t0\t\0old name.md\0new name.md\0";
        assert_eq!(
            numstat_entries(numstat),
            vec![
                ("src/a b.rs".to_string(), 3, 1),
                ("logo.png".to_string(), 0, 0),
                ("new name.md".to_string(), 0, 0)
            ]
        );
        let status = name_status("M\0src/a b.rs\0R100\0old name.md\0new name.md\0A\0x\0D\0y\0");
        assert_eq!(status["src/a b.rs"], "modified");
        assert_eq!(status["new name.md"], "renamed");
        assert_eq!((status["x"], status["y"]), ("added", "deleted"));
    }

    #[test]
    fn an_untracked_files_lines_are_counted_whole() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("t.txt");
        std::fs::write(&text, "a\n".repeat(20_000) + "last").unwrap();
        assert_eq!(count_lines(&text), (20_001, false, 40_004));
        let bin = dir.path().join("b.bin");
        std::fs::write(&bin, b"PNG\0\x01\x02").unwrap();
        assert!(count_lines(&bin).1, "a NUL makes it binary");
    }
}
