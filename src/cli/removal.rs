//! `agents rm`: ended runs removed with their owned children, after saying
//! which (docs/design.md §13). The list comes from the daemon (a dry run),
//! the question from here, then the removal.

use std::io::{BufRead, IsTerminal, Write};

use crate::api::{RemoveParams, RemoveResult, RunState, method};
use crate::client::Client;
use crate::paths::Paths;

#[derive(clap::Args, Debug)]
pub struct RmArgs {
    /// Runs: an id, an id prefix, or a name (each with the children it owns).
    pub runs: Vec<String>,
    /// Every ended run (narrowed by --older-than and --state).
    #[arg(long)]
    pub ended: bool,
    /// With --ended: only runs that ended longer ago than this (7d, 12h).
    #[arg(long, value_name = "DURATION", requires = "ended")]
    pub older_than: Option<String>,
    /// With --ended: only runs in this state (failed, blocked, skipped, …). Repeatable.
    #[arg(long = "state", value_name = "STATE", requires = "ended")]
    pub states: Vec<String>,
    /// Cancel the live runs among them first, instead of refusing.
    #[arg(long)]
    pub cancel: bool,
    /// Remove without asking.
    #[arg(short, long)]
    pub yes: bool,
    /// What was removed, as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `--state S` of `rm`: a run state (a live one is refused by the daemon,
/// which never removes a live run), or why not, naming those an ended run
/// has.
fn ended_state(s: &str) -> anyhow::Result<RunState> {
    RunState::parse(s).ok_or_else(|| {
        let ended: Vec<&str> = RunState::ALL
            .iter()
            .filter(|st| !st.is_live())
            .map(|st| st.as_str())
            .collect();
        crate::cli::refused(format!(
            "--state {s}: not a run state (an ended run's is one of: {})",
            ended.join(", ")
        ))
    })
}

pub async fn rm(paths: &Paths, args: RmArgs) -> anyhow::Result<i32> {
    let older_than_secs = match &args.older_than {
        Some(d) => Some(
            humantime::parse_duration(d)
                .map_err(|e| crate::cli::refused(format!("--older-than {d}: {e}")))?
                .as_secs(),
        ),
        None => None,
    };
    let states = args
        .states
        .iter()
        .map(|s| ended_state(s))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut params = RemoveParams {
        runs: args.runs.clone(),
        ended: args.ended,
        older_than_secs,
        states,
        cancel: args.cancel,
        dry_run: true,
    };
    let client = Client::connect(paths, false).await?;
    let plan: RemoveResult = client.call::<method::RunsRm>(params.clone()).await?;
    if plan.removed.is_empty() {
        if args.json {
            crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&plan)?));
        } else {
            say!("nothing to remove");
            for name in &plan.left {
                say!("left {name}: a run it owns is still live");
            }
        }
        return Ok(0);
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(crate::cli::refused(format!(
                "not removed: {} run(s) would go; add --yes to remove without asking",
                plan.removed.len()
            )));
        }
        crate::cli::print::err(&listing(&plan, "would remove"));
        if !confirm(plan.removed.len())? {
            say!("nothing removed");
            return Ok(1);
        }
    }
    params.dry_run = false;
    let done: RemoveResult = client.call::<method::RunsRm>(params.clone()).await?;
    match args.json {
        true => crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&done)?)),
        false => crate::cli::print::out(&listing(&done, "removed")),
    }
    Ok(0)
}

/// `removed NAME (state, id)` for each, then what stays and why.
fn listing(r: &RemoveResult, verb: &str) -> String {
    let mut out = String::new();
    for run in &r.removed {
        let host = match run.host.as_str() {
            "local" => String::new(),
            h => format!(" on {h}"),
        };
        out.push_str(&format!(
            "{verb} {} ({}{host}, {})\n",
            run.name,
            run.state.as_str(),
            run.id
        ));
        if let Some(w) = &run.worktree {
            out.push_str(&format!(
                "  its worktree stays: {w} (agents worktree rm before, to remove it)\n"
            ));
        }
    }
    for run in &r.kept {
        out.push_str(&format!("kept {} (detached: it survives its parent)\n", run.name));
    }
    for name in &r.left {
        out.push_str(&format!("left {name}: a run it owns is still live\n"));
    }
    for host in &r.hosts_failed {
        out.push_str(&format!("not removed on host {host}\n"));
    }
    crate::text::inert(&out).into_owned()
}

fn confirm(n: usize) -> anyhow::Result<bool> {
    eprint!("remove {n} run(s)? [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

/// `agents sessions rm SESSION [--purge-transcripts]`.
pub async fn session_rm(client: &Client, session: String, purge: bool, json: bool) -> anyhow::Result<i32> {
    let params = crate::api::SessionRemoveParams {
        session,
        purge_transcripts: purge,
        dry_run: false,
    };
    let gone: crate::api::SessionRemoved = client.call::<method::SessionsRm>(params).await?;
    if json {
        crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&gone)?));
        return Ok(0);
    }
    say!("removed session {}", gone.session);
    for run in &gone.runs {
        say!("run {run} keeps its record (its conversation is removed)");
    }
    for file in &gone.files {
        say!("deleted {file}");
    }
    if !purge {
        say!("the harness's transcript files are left alone (--purge-transcripts deletes them)");
    }
    Ok(0)
}
