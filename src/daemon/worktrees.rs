//! A worktree run's changes, merge and removal (`runs.changes`,
//! `runs.merge`, `worktree.rm`; docs/design.md §4): from the origin its
//! start recorded, with git run off the async threads. A merge or removal
//! is an event of the run, so its record says what became of its work.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::api::{ApiError, Changes, ErrorCode, Merged, WorktreeRemoved};
use crate::engine::Engine;
use crate::store::runs::RunRow;
use crate::worktree::{self, Origin};

pub async fn changes(engine: &Arc<Engine>, row: RunRow) -> Result<Changes, ApiError> {
    let origin = origin(engine, &row).await?;
    blocking(move || worktree::changes(&origin)).await
}

pub async fn merge(engine: &Arc<Engine>, row: RunRow, squash: bool) -> Result<Merged, ApiError> {
    let origin = origin(engine, &row).await?;
    let name = row.name.clone();
    let merged = blocking(move || worktree::merge(&origin, &name, squash)).await?;
    record(engine, &row.id, "WORKTREE_MERGED", json!(merged)).await;
    Ok(merged)
}

pub async fn remove(engine: &Arc<Engine>, row: RunRow, force: bool) -> Result<WorktreeRemoved, ApiError> {
    if row.state.is_live() {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "run {} is still running in its worktree; cancel it first (agents cancel {})",
                row.name, row.name
            ),
        ));
    }
    let origin = origin(engine, &row).await?;
    let removed = blocking(move || worktree::remove(&origin, force)).await?;
    record(engine, &row.id, "WORKTREE_REMOVED", json!(removed)).await;
    Ok(removed)
}

/// Where the run's worktree came from, or why there is none.
async fn origin(engine: &Arc<Engine>, row: &RunRow) -> Result<Origin, ApiError> {
    let Some(dir) = row.worktree.clone() else {
        return Err(ApiError::bad_request(format!(
            "run {} has no worktree (only a run started with --worktree has changes to review or merge)",
            row.name
        )));
    };
    let id = row.id.clone();
    let data = engine
        .store
        .runs()
        .first_event(&id, worktree::CREATED_EVENT)
        .await
        .map_err(ApiError::internal)?;
    data.and_then(|d| serde_json::from_value(d).ok()).ok_or_else(|| {
        ApiError::bad_request(format!(
            "run {}'s worktree {dir} was made by an older agents, which did not record where it started; use git there",
            row.name
        ))
    })
}

/// `work` on a thread that may block; its refusal is a conflict (git
/// said no, and nothing changed).
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T, String> + Send + 'static) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(ApiError::internal)?
        .map_err(|e| {
            ApiError::new(
                ErrorCode::Conflict,
                crate::text::bounded(&e, crate::text::MAX_DIAGNOSTIC),
            )
        })
}

async fn record(engine: &Arc<Engine>, id: &str, kind: &'static str, data: Value) {
    let run = id.to_string();
    let stored = engine.store.runs().append_event(&run, kind, data).await;
    if let Err(e) = stored {
        tracing::warn!("could not record {kind} of run {id}: {e}");
    }
    engine.changed(id);
}
