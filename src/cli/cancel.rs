//! `agents cancel`: one run, several, or every live run a filter picks
//! (`--all`, `--harness`, `--status`, `--host`), asked at once over one
//! connection and waited for together.

use std::io::{BufRead as _, IsTerminal as _, Write as _};

use anyhow::Result;
use clap::Args;
use futures::stream::{self, StreamExt as _};

use crate::api::{ActivityStatus, CancelParams, RunRecord, WaitParams, method};
use crate::client::Client;
use crate::paths::Paths;

/// Cancels asked, and ends waited for, at once over the connection (the
/// daemon answers up to 256 of one client's requests together).
const AT_ONCE: usize = 128;

#[derive(Args, Debug)]
pub struct CancelArgs {
    /// Runs: an id, an id prefix, or a name (each with the children it owns).
    pub runs: Vec<String>,
    /// Every live run (narrowed by --harness, --status and --host); asks
    /// first on a terminal.
    #[arg(long)]
    pub all: bool,
    /// Only live runs of this harness (claude, codex, cmd, a profile's family…).
    #[arg(long, value_name = "HARNESS")]
    pub harness: Option<String>,
    /// Only live runs in this status (working, idle, needs_approval,
    /// waiting_input, stalled, unknown).
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// Only live runs on this host (`local` for this machine).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// SIGKILL at once instead of SIGINT → SIGTERM → SIGKILL.
    #[arg(long)]
    pub force: bool,
    /// Return once the cancel is asked, without waiting for the end.
    #[arg(long)]
    pub no_wait: bool,
    /// Cancel the runs --all or a filter picks without asking.
    #[arg(short, long)]
    pub yes: bool,
}

impl CancelArgs {
    fn filtered(&self) -> bool {
        self.all || self.harness.is_some() || self.status.is_some() || self.host.is_some()
    }

    fn picks(&self, run: &RunRecord, status: Option<ActivityStatus>) -> bool {
        self.harness.as_ref().is_none_or(|h| *h == run.harness)
            && self.host.as_ref().is_none_or(|h| *h == run.host)
            && status.is_none_or(|s| s == run.status)
    }
}

pub async fn cancel(paths: &Paths, args: CancelArgs) -> Result<i32> {
    if args.runs.is_empty() && !args.filtered() {
        return Err(crate::cli::refused(
            "name the runs to cancel, or pick them with --all, --harness, --status or --host",
        ));
    }
    if !args.runs.is_empty() && args.filtered() {
        return Err(crate::cli::refused(
            "name runs or pick them with --all or a filter, not both",
        ));
    }
    let status = args.status.as_deref().map(parse_status).transpose()?;
    let client = Client::connect(paths, false).await?;
    let targets = match args.filtered() {
        true => match picked(&client, &args, status).await? {
            Some(targets) => targets,
            None => return Ok(1),
        },
        false => args.runs.clone(),
    };
    if targets.is_empty() {
        say!("no live run to cancel");
        return Ok(0);
    }
    let (by, proof) = crate::proof::claim();
    let asked: Vec<(String, Result<String, crate::api::ApiError>)> = stream::iter(targets)
        .map(|run| {
            let params = CancelParams {
                run: run.clone(),
                force: args.force,
                by: by.clone(),
                proof: proof.clone(),
            };
            let client = &client;
            async move { (run, client.call::<method::RunsCancel>(params).await.map(|c| c.run)) }
        })
        .buffer_unordered(AT_ONCE)
        .collect()
        .await;
    // One run: its failure is the command's, as any other verb's.
    if let [(_, Err(e))] = asked.as_slice() {
        return Err(e.clone().into());
    }
    let mut failed = 0;
    let mut ids = Vec::new();
    for (run, outcome) in asked {
        match outcome {
            Ok(id) => ids.push(id),
            Err(e) => {
                failed += 1;
                say_err!("agents: {run}: {}", e.message);
            }
        }
    }
    if args.no_wait {
        for id in &ids {
            say!("cancelling {id}");
        }
    } else {
        failed += wait_ends(&client, ids).await;
    }
    Ok(if failed == 0 { 0 } else { 1 })
}

/// The live runs the filters pick; `None` when the user said no.
async fn picked(client: &Client, args: &CancelArgs, status: Option<ActivityStatus>) -> Result<Option<Vec<String>>> {
    let live = client.list_runs(false).await?;
    let runs: Vec<&RunRecord> = live
        .iter()
        .map(|l| &l.run)
        .filter(|r| r.state.is_live() && args.picks(r, status))
        .collect();
    if runs.is_empty() || args.yes {
        return Ok(Some(runs.iter().map(|r| r.id.clone()).collect()));
    }
    if !std::io::stdin().is_terminal() {
        return Err(crate::cli::refused(format!(
            "not cancelled: {} run(s) would be; add --yes to cancel without asking",
            runs.len()
        )));
    }
    let mut listing = String::new();
    for r in &runs {
        listing.push_str(&format!(
            "would cancel {} ({}, {})\n",
            r.name,
            r.harness,
            r.status.as_str()
        ));
    }
    crate::cli::print::err(&crate::text::inert(&listing));
    eprint!("cancel {} run(s)? [y/N] ", runs.len());
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        say!("nothing cancelled");
        return Ok(None);
    }
    Ok(Some(runs.iter().map(|r| r.id.clone()).collect()))
}

/// Waits for every run asked to end, printing each end as it comes; the
/// number whose wait failed.
async fn wait_ends(client: &Client, ids: Vec<String>) -> usize {
    let many = ids.len() > 1;
    let mut ends = stream::iter(ids)
        .map(|id| async move {
            let outcome = client.call::<method::RunsWait>(WaitParams::watching(id.clone())).await;
            (id, outcome)
        })
        .buffer_unordered(AT_ONCE);
    let (mut ended, mut failed) = (0, 0);
    while let Some((id, outcome)) = ends.next().await {
        match outcome {
            Ok(record) => {
                ended += 1;
                say!(
                    "{} {}: {}",
                    record.name,
                    record.state.as_str(),
                    record.reason.as_deref().unwrap_or("")
                );
            }
            Err(e) => {
                failed += 1;
                say_err!("agents: {id}: {}", e.message);
            }
        }
    }
    if many {
        say!("{ended} run(s) ended");
    }
    failed
}

fn parse_status(s: &str) -> Result<ActivityStatus> {
    let status = ActivityStatus::parse(s);
    if status == ActivityStatus::Unknown && s != "unknown" {
        return Err(crate::cli::refused(format!(
            "--status {s}: not a status (working, idle, needs_approval, waiting_input, stalled, unknown)"
        )));
    }
    Ok(status)
}
