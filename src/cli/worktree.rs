//! `agents diff`, `agents merge` and `agents worktree rm`: a worktree run's
//! work reviewed, merged into the branch it started from, and its
//! worktree removed (docs/design.md §4).

use std::io::IsTerminal;

use clap::Subcommand;

use crate::api::{Changes, MergeParams, Merged, RunRef, WorktreeRemoved, WorktreeRmParams, method};
use crate::client::Client;
use crate::paths::Paths;

#[derive(Subcommand, Debug)]
pub enum WorktreeCommand {
    /// Remove a run's worktree, keeping its branch; refuses uncommitted work.
    Rm {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// Remove it even though it holds uncommitted work (which is lost).
        #[arg(long)]
        force: bool,
    },
}

/// `agents diff RUN`: what the run changed against where its branch began.
pub async fn diff(paths: &Paths, run: String, stat: bool, json: bool) -> anyhow::Result<i32> {
    let client = Client::connect(paths, false).await?;
    let changes: Changes = client.call::<method::RunsChanges>(RunRef { run }).await?;
    if json {
        crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&changes)?));
        return Ok(0);
    }
    say!("{}", summary(&changes));
    if let Some(note) = &changes.note {
        say_err!("note: {note}");
    }
    for f in &changes.files {
        let mark = if f.uncommitted { "  (uncommitted)" } else { "" };
        say!("  {:<9} {} +{} -{}{mark}", f.status, f.path, f.added, f.removed);
    }
    if !stat && !changes.diff.is_empty() {
        say!("");
        crate::cli::print::out(&coloured(&changes.diff, std::io::stdout().is_terminal()));
    }
    if changes.truncated {
        say_err!("note: the diff was cut at {} KiB", Changes::MAX_DIFF_BYTES / 1024);
    }
    Ok(0)
}

/// `agents/worker: 3 commits since 1a2b3c4, 2 files uncommitted; merges into main`,
/// or `agents/worker: merged into main, nothing left to merge` once it was.
fn summary(c: &Changes) -> String {
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let mut line = match &c.from {
        Some(from) if c.merged => format!("{}: merged into {from}, nothing left to merge", c.branch),
        _ => format!("{}: {} since {}", c.branch, plural(c.commits, "commit"), short(&c.base)),
    };
    if c.uncommitted > 0 {
        line.push_str(&format!(", {} uncommitted", plural(c.uncommitted, "file")));
    }
    match &c.from {
        _ if c.merged => {}
        Some(from) => line.push_str(&format!("; merges into {from}")),
        None => line.push_str("; started on a detached HEAD"),
    }
    if c.worktree.is_none() {
        line.push_str(" (worktree removed)");
    }
    line
}

/// The diff made inert (it is the agent's text), coloured for a terminal.
fn coloured(diff: &str, colour: bool) -> String {
    let mut out = String::with_capacity(diff.len() + 64);
    for line in diff.lines() {
        let safe = crate::text::inert_line(line);
        let paint = match line.as_bytes().first() {
            _ if !colour => None,
            Some(b'+') if !line.starts_with("+++") => Some("32"),
            Some(b'-') if !line.starts_with("---") => Some("31"),
            Some(b'@') => Some("36"),
            Some(b'd') if line.starts_with("diff --git") => Some("1"),
            _ => None,
        };
        match paint {
            Some(sgr) => out.push_str(&format!("\x1b[{sgr}m{safe}\x1b[0m\n")),
            None => {
                out.push_str(&safe);
                out.push('\n');
            }
        }
    }
    out
}

fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// `agents merge RUN [--squash]`.
pub async fn merge(paths: &Paths, run: String, squash: bool) -> anyhow::Result<i32> {
    let client = Client::connect(paths, false).await?;
    let merged: Merged = client
        .call::<method::RunsMerge>(MergeParams {
            run: run.clone(),
            squash,
        })
        .await?;
    let commits = format!(
        "{} commit{}",
        merged.commits,
        if merged.commits == 1 { "" } else { "s" }
    );
    say!(
        "merged {} ({commits}) into {} as {} ({})",
        merged.branch,
        merged.into,
        short(&merged.commit),
        merged.how
    );
    if merged.uncommitted > 0 {
        let files = match merged.uncommitted {
            1 => "1 uncommitted file".to_string(),
            n => format!("{n} uncommitted files"),
        };
        say_err!("note: {files} in run {run}'s worktree not merged (commit them there, then merge again)");
    }
    Ok(0)
}

/// `agents worktree rm RUN [--force]`.
pub async fn worktree(paths: &Paths, command: WorktreeCommand) -> anyhow::Result<i32> {
    let WorktreeCommand::Rm { run, force } = command;
    let client = Client::connect(paths, false).await?;
    let removed: WorktreeRemoved = client
        .call::<method::WorktreeRm>(WorktreeRmParams { run, force })
        .await?;
    say!(
        "removed {}; branch {} kept",
        crate::cli::print::home_relative(&removed.worktree),
        removed.branch
    );
    if removed.discarded > 0 {
        say_err!(
            "note: {} uncommitted file{} discarded (--force)",
            removed.discarded,
            if removed.discarded == 1 { "" } else { "s" }
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_diff_is_made_inert_and_coloured_only_for_a_terminal() {
        let diff = "diff --git a/x b/x\n@@ -1 +1 @@\n-old\n+new \x1b]52;c;aGk=\x07\n";
        let plain = super::coloured(diff, false);
        assert!(
            !plain.contains('\x1b') && plain.contains("+new \\x1b]52;c;aGk=\\x07"),
            "{plain}"
        );
        let painted = super::coloured(diff, true);
        assert!(painted.contains("\x1b[32m+new \\x1b]52"), "{painted}");
        assert!(painted.contains("\x1b[31m-old\x1b[0m"), "{painted}");
    }
}
