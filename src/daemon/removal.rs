//! `runs.rm` (docs/design.md §13): ended runs removed with their owned
//! children — records, events, prompts, attempts, output log, checkpoints
//! — here and, for a run placed on a host, there too. Nothing live is ever
//! removed: a live run is refused, or cancelled first when asked.

use std::time::Duration;

use super::Reach;
use crate::api::{ApiError, ErrorCode, RemoveParams, RemoveResult, RemovedRun};
use crate::store::removal::Plan;
use crate::store::runs::RunRow;

/// How long `rm --cancel` waits for the runs it cancelled to end: the
/// cancel's own escalation (SIGINT, SIGTERM, SIGKILL at 3 s each by
/// default) and then some.
const CANCEL_WAIT: Duration = Duration::from_secs(20);

pub async fn remove(reach: &Reach, p: RemoveParams) -> Result<RemoveResult, ApiError> {
    let (roots, left) = roots(reach, &p).await?;
    let mut plan = plan(reach, roots.clone()).await?;
    let live: Vec<&RunRow> = plan.runs.iter().filter(|r| is_live(reach, r)).collect();
    if let Some(first) = live.first() {
        if !p.cancel {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!(
                    "run {} is {}: cancel it first (agents cancel {}), or agents rm --cancel",
                    first.name,
                    first.state.as_str(),
                    first.name
                ),
            ));
        }
        if !p.dry_run {
            let ids: Vec<String> = live.iter().map(|r| r.id.clone()).collect();
            cancel_and_wait(reach, &ids).await?;
            plan = self::plan(reach, roots).await?;
        }
    }
    let mut result = RemoveResult {
        dry_run: p.dry_run,
        removed: plan.runs.iter().map(removed).collect(),
        kept: plan.detached.iter().map(removed).collect(),
        left,
        hosts_failed: Vec::new(),
    };
    if p.dry_run {
        return Ok(result);
    }
    result.hosts_failed = remove_on_hosts(reach, &plan).await;
    let ids: Vec<String> = plan.runs.iter().map(|r| r.id.clone()).collect();
    // The folders first: on a full disk their logs are what frees the
    // space the database needs to delete the rows (issue #34). A failure
    // then leaves records without logs, removed by the next `rm`.
    for id in &ids {
        if let Err(e) = std::fs::remove_dir_all(reach.engine.paths.run_dir(id))
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("run {id}: its folder not removed: {e}");
        }
    }
    let removed = reach.engine.store.removal().remove(plan).await;
    for id in &ids {
        reach.engine.changed(id);
    }
    removed.map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    for kept in &result.kept {
        reach.engine.changed(&kept.id);
    }
    Ok(result)
}

/// The runs asked for, by reference or as every ended run of the filter;
/// with `ended`, the names of those left because a run they own is live.
async fn roots(reach: &Reach, p: &RemoveParams) -> Result<(Vec<String>, Vec<String>), ApiError> {
    if !p.ended {
        if p.runs.is_empty() {
            return Err(ApiError::bad_request(
                "name the runs to remove, or --ended for every ended run",
            ));
        }
        let mut ids = Vec::new();
        for reference in &p.runs {
            ids.push(crate::engine::start::resolve_row(&reach.engine, reference).await?.id);
        }
        return Ok((ids, Vec::new()));
    }
    if !p.runs.is_empty() {
        return Err(ApiError::bad_request("name runs or give --ended, not both"));
    }
    let before = crate::clock::now_ms() - p.older_than_secs.unwrap_or(0) as i64 * 1000;
    let states: Vec<&'static str> = p.states.iter().map(|s| s.as_str()).collect();
    if let Some(live) = p.states.iter().find(|s| s.is_live()) {
        return Err(ApiError::bad_request(format!(
            "--state {}: a live run is never removed",
            live.as_str()
        )));
    }
    let ids = reach
        .engine
        .store
        .removal()
        .ended_before(before, states)
        .await
        .map_err(ApiError::internal)?;
    let (mut keep, mut left) = (Vec::new(), Vec::new());
    for id in ids {
        let one = plan(reach, vec![id.clone()]).await?;
        match one.runs.iter().find(|r| is_live(reach, r)) {
            Some(_) => left.push(one.runs.first().map(|r| r.name.clone()).unwrap_or(id)),
            None => keep.push(id),
        }
    }
    Ok((keep, left))
}

async fn plan(reach: &Reach, roots: Vec<String>) -> Result<Plan, ApiError> {
    let mut plan = reach
        .engine
        .store
        .removal()
        .plan(roots)
        .await
        .map_err(ApiError::internal)?;
    plan.runs = plan.runs.into_iter().map(|r| reach.engine.held_ends.apply(r)).collect();
    Ok(plan)
}

/// Live here, or its end not yet stored.
fn is_live(reach: &Reach, row: &RunRow) -> bool {
    row.state.is_live() || reach.engine.live(&row.id).is_some()
}

fn removed(row: &RunRow) -> RemovedRun {
    RemovedRun {
        id: row.id.clone(),
        name: row.name.clone(),
        state: row.state,
        host: row.host.clone(),
        parent_id: row.parent_run_id.clone(),
        worktree: row.worktree.clone(),
    }
}

async fn cancel_and_wait(reach: &Reach, ids: &[String]) -> Result<(), ApiError> {
    for id in ids {
        // Already ending, or ended meanwhile: what matters is the wait.
        let _ = crate::engine::cancel::cancel_tree(&reach.engine, id, false).await;
    }
    let deadline = tokio::time::Instant::now() + CANCEL_WAIT;
    loop {
        let pending = ids.to_vec();
        let rows = reach
            .engine
            .store
            .runs()
            .get_many(pending)
            .await
            .map_err(ApiError::internal)?;
        let still = rows
            .into_iter()
            .flatten()
            .map(|r| reach.engine.held_ends.apply(r))
            .find(|r| is_live(reach, r));
        let Some(still) = still else { return Ok(()) };
        if tokio::time::Instant::now() > deadline {
            return Err(ApiError::new(
                ErrorCode::NotRunning,
                format!("run {} did not end after its cancel; nothing removed", still.name),
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Asks each host to remove its own records of the runs placed there.
/// The hosts that could not, with why.
async fn remove_on_hosts(reach: &Reach, plan: &Plan) -> Vec<String> {
    let mut by_host: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for run in plan.runs.iter().filter(|r| r.host != "local") {
        by_host.entry(&run.host).or_default().push(run.id.clone());
    }
    let mut failed = Vec::new();
    for (host, ids) in by_host {
        if let Err(e) = crate::remote::remove_there(&reach.here, host, ids).await {
            failed.push(format!("{host}: {}", e.message));
        }
    }
    failed
}

/// `sessions.rm`: the conversation's records and index removed from
/// agents, refused while a run of it lives; the harness's own transcript
/// files deleted only with `purge_transcripts`, and only files that are
/// recognisably this session's (named after it, or in a folder that is).
pub async fn remove_session(
    reach: &Reach,
    p: crate::api::SessionRemoveParams,
) -> Result<crate::api::SessionRemoved, ApiError> {
    let (session, family, run) = super::sessions::find(&reach.engine, &p.session).await?;
    if let Some(run) = run.as_ref().filter(|r| is_live(reach, r)) {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "session {session} is held by run {}, still live: cancel it first",
                run.name
            ),
        ));
    }
    let key = session.clone();
    let gone = match p.dry_run {
        true => reach.engine.store.removal().session_parts(&key).await,
        false => reach.engine.store.removal().remove_session(&key).await,
    }
    .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    let mut files = Vec::new();
    if p.purge_transcripts {
        let roots = purge_roots(reach, &family, run.as_ref());
        for file in &gone.files {
            let path = std::path::Path::new(file);
            if !is_transcript_of(path, &session) || !within(path, &roots) {
                continue;
            }
            if !p.dry_run
                && let Err(e) = std::fs::remove_file(path)
            {
                tracing::warn!("cannot delete {file}: {e}");
                continue;
            }
            files.push(file.clone());
        }
    }
    for run in &gone.runs {
        reach.engine.changed(run);
    }
    Ok(crate::api::SessionRemoved {
        session,
        dry_run: p.dry_run,
        runs: gone.runs,
        files,
    })
}

/// Where `sessions rm --purge-transcripts` may delete: the session
/// folders of the run that held the session (as its start wrote them) and
/// the family's own; none for a family whose hooks name no transcripts
/// (the daemon found those files itself, in the family's folders).
fn purge_roots(
    reach: &Reach,
    family: &str,
    run: Option<&crate::store::runs::RunRow>,
) -> Option<Vec<std::path::PathBuf>> {
    let defaults = crate::harness::roots::defaults(family, run.map_or("/", |r| r.cwd.as_str()));
    if defaults.is_empty() {
        return None;
    }
    let mut roots = defaults;
    if let Some(run) = run {
        roots.extend(crate::harness::roots::of_run(
            &reach.engine.paths.run_dir(&run.id),
            family,
            &run.cwd,
        ));
    }
    Some(roots)
}

/// Inside one of `roots`, when there are any to keep to.
fn within(path: &std::path::Path, roots: &Option<Vec<std::path::PathBuf>>) -> bool {
    roots
        .as_ref()
        .is_none_or(|roots| crate::harness::roots::inside(path, roots))
}

/// A path a hook reported is untrusted (an agent's own words): only a
/// regular file of a transcript's kind, named after the session or in a
/// folder that is, is ever deleted.
fn is_transcript_of(path: &std::path::Path, session: &str) -> bool {
    let kind = matches!(path.extension().and_then(|e| e.to_str()), Some("jsonl" | "json"));
    let named = !session.is_empty()
        && path
            .iter()
            .rev()
            .take(3)
            .any(|part| part.to_string_lossy().contains(session));
    let file = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file());
    kind && named && file && path.is_absolute()
}
