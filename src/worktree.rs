//! `--worktree`: a run gets its own git worktree and branch (docs/design.md §4), so
//! parallel agents never edit the same checkout. Nothing existing is ever
//! overwritten: an existing branch or directory blocks the run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Branch name for a run's worktree.
pub fn branch_for(run_name: &str) -> String {
    format!("agents/{run_name}")
}

/// Creates `dest` as a worktree of the repository containing `cwd`, on a new
/// branch `agents/<name>` from HEAD. Returns the directory the run should use
/// (the same relative position inside the new worktree as `cwd` had in its
/// repository), or the reason the run is blocked.
pub fn create(cwd: &Path, run_name: &str, dest: &Path) -> Result<PathBuf, String> {
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
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let dest_str = dest.to_string_lossy();
    git(&top, &["worktree", "add", "--quiet", "-b", &branch, &dest_str])
        .map_err(|e| format!("git worktree add failed: {e}"))?;
    let relative = cwd
        .canonicalize()
        .ok()
        .and_then(|c| c.strip_prefix(top.canonicalize().ok()?).ok().map(Path::to_path_buf))
        .unwrap_or_default();
    // `join("")` would add a trailing slash to the recorded cwd.
    if relative.as_os_str().is_empty() {
        Ok(dest.to_path_buf())
    } else {
        Ok(dest.join(relative))
    }
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(err.lines().next().unwrap_or("git failed").to_string())
    }
}
