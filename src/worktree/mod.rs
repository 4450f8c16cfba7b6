//! `--worktree`: a run gets its own git worktree and branch (docs/design.md §4), so
//! parallel agents never edit the same checkout. Nothing existing is ever
//! overwritten: an existing branch or directory blocks the run. What the run
//! changed is read back (`changes`), merged into the branch it started from
//! (`merge`) and the worktree removed (`remove`), each refusing rather than
//! forcing.

mod changes;
pub mod diff;
mod merge;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

pub use changes::changes;
pub use merge::{merge, remove};

/// The kind of the event that records a run's [`Origin`].
pub const CREATED_EVENT: &str = "WORKTREE_CREATED";

/// Where a run's worktree came from, recorded when it is made (the
/// `WORKTREE_CREATED` event) so its changes, merge and removal need no
/// guessing later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Origin {
    /// The checkout the run was started in (its top level).
    pub repo: String,
    /// The run's worktree.
    pub dir: String,
    /// `agents/<run name>`.
    pub branch: String,
    /// The commit the branch started at.
    pub base: String,
    /// The branch checked out in `repo` then; `None` on a detached HEAD.
    pub from: Option<String>,
}

/// A new worktree: the directory the run works in, and where it came from.
pub struct Created {
    pub cwd: PathBuf,
    pub origin: Origin,
}

/// Branch name for a run's worktree.
pub fn branch_for(run_name: &str) -> String {
    format!("agents/{run_name}")
}

/// Creates `dest` as a worktree of the repository containing `cwd`, on a new
/// branch `agents/<name>` from HEAD. Returns the directory the run should use
/// (the same relative position inside the new worktree as `cwd` had in its
/// repository) and its origin, or the reason the run is blocked.
pub fn create(cwd: &Path, run_name: &str, dest: &Path) -> Result<Created, String> {
    let top =
        git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|e| format!("--worktree needs a git repository: {e}"))?;
    let top = PathBuf::from(top.trim());
    let branch = branch_for(run_name);
    if git(
        &top,
        &["show-ref", "--verify", "--quiet", &format!("refs/heads/{branch}")],
    )
    .is_ok()
    {
        return Err(format!(
            "worktree conflict: branch {branch} already exists; nothing was changed"
        ));
    }
    if dest.exists() {
        return Err(format!(
            "worktree conflict: {} already exists; nothing was changed",
            dest.display()
        ));
    }
    let base = git(&top, &["rev-parse", "--verify", "HEAD^{commit}"])
        .map_err(|e| format!("--worktree needs a commit to start from: {e}"))?;
    // Not an error when detached: the run still gets its branch, only a
    // merge has nowhere to go.
    let from = git(&top, &["symbolic-ref", "--quiet", "--short", "HEAD"])
        .ok()
        .map(|b| b.trim().to_string());
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let dest_str = dest.to_string_lossy();
    git(
        &top,
        &["worktree", "add", "--quiet", "-b", &branch, &dest_str, base.trim()],
    )
    .map_err(|e| format!("git worktree add failed: {e}"))?;
    let relative = cwd
        .canonicalize()
        .ok()
        .and_then(|c| c.strip_prefix(top.canonicalize().ok()?).ok().map(Path::to_path_buf))
        .unwrap_or_default();
    // `join("")` would add a trailing slash to the recorded cwd.
    let run_cwd = match relative.as_os_str().is_empty() {
        true => dest.to_path_buf(),
        false => dest.join(relative),
    };
    Ok(Created {
        cwd: run_cwd,
        origin: Origin {
            repo: top.to_string_lossy().into_owned(),
            dir: dest_str.into_owned(),
            branch,
            base: base.trim().to_string(),
            from,
        },
    })
}

/// Runs git in `dir`; its standard output, or the line of its error that
/// says what went wrong.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = git_output(dir, args)?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(git_error(&out.stderr))
    }
}

/// git's standard output read no further than `max` bytes, cut at the
/// last whole line within them, and whether anything was left unread. A
/// diff of a huge generated file never sits whole in the daemon.
fn git_capped(dir: &Path, args: &[&str], max: usize) -> Result<(String, bool), String> {
    use std::io::Read;
    let mut child = git_command(dir, args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let mut bytes = Vec::new();
    let stdout = child.stdout.take().ok_or("git gave no output")?;
    stdout
        .take(max as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("reading git: {e}"))?;
    let cut = bytes.len() > max;
    if cut {
        // The rest is not wanted: git stops at the closed pipe.
        let _ = child.kill();
        let end = bytes[..max].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(end);
    }
    let out = child.wait_with_output().map_err(|e| format!("waiting for git: {e}"))?;
    if !cut && !out.status.success() {
        return Err(git_error(&out.stderr));
    }
    Ok((String::from_utf8_lossy(&bytes).into_owned(), cut))
}

fn git_output(dir: &Path, args: &[&str]) -> Result<std::process::Output, String> {
    git_command(dir, args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))
}

fn git_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(dir)
        // Paths as they are (UTF-8), not octal-quoted, so a diff's names
        // match status's and read as the user named them.
        .args(["-c", "core.quotePath=false"])
        .args(args)
        // Never a pager, an editor or a credential prompt: nobody is there
        // to answer (the daemon has no terminal).
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_EDITOR", "true")
        .env("GIT_PAGER", "cat");
    command
}

/// git's error in one line: its `fatal:`/`error:` line when it has one
/// (an unknown author identity says so only on its last line), else its
/// first.
fn git_error(stderr: &[u8]) -> String {
    let err = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .unwrap_or(0);
    let Some(said) = lines.get(at) else {
        return "git failed".into();
    };
    // The paths git lists, indented, under the line that names them.
    let paths: Vec<&str> = lines[at + 1..]
        .iter()
        .take_while(|l| l.starts_with(['\t', ' ']))
        .map(|l| l.trim())
        .collect();
    match paths.is_empty() {
        true => said.trim().to_string(),
        false => format!("{} {}", said.trim(), paths.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn git_errors_are_told_by_their_fatal_line() {
        let err =
            b"*** Please tell me who you are.\n\nRun\n\n  git config\nfatal: unable to auto-detect email address\n";
        assert_eq!(super::git_error(err), "fatal: unable to auto-detect email address");
        assert_eq!(super::git_error(b"something odd\nmore\n"), "something odd");
        assert_eq!(super::git_error(b""), "git failed");
        let untracked = b"error: The following untracked working tree files would be overwritten by merge:\n\tnew.txt\n\tdir/two.txt\nPlease move or remove them before you merge.\nAborting\n";
        assert_eq!(
            super::git_error(untracked),
            "error: The following untracked working tree files would be overwritten by merge: new.txt, dir/two.txt"
        );
    }
}
