//! Cancelling a run and the children it did not detach: through its
//! supervisor while it is live; a lost run's harness signalled here, only
//! once its recorded identity is verified.

use std::sync::Arc;

use serde_json::json;

use super::Engine;
use crate::api::{ApiError, ErrorCode, RunState};
use crate::pty::Liveness;
use crate::store::runs;

/// Cancels a run and, following ownership edges, its non-detached children
/// (docs/design.md §4). Returns the ids asked to end.
pub async fn cancel_tree(engine: &Arc<Engine>, root: &str, force: bool) -> Result<Vec<String>, ApiError> {
    cancel_tree_by(engine, root, force, None).await
}

/// As `cancel_tree`, asked by run `by` (none: the user), which each
/// `CANCEL_REQUESTED` names.
pub async fn cancel_tree_by(
    engine: &Arc<Engine>,
    root: &str,
    force: bool,
    by: Option<&str>,
) -> Result<Vec<String>, ApiError> {
    let mut asked = Vec::new();
    let mut todo = vec![root.to_string()];
    let mut first = true;
    while let Some(id) = todo.pop() {
        let key = id.clone();
        let (row, children) = engine
            .store
            .runs()
            .with_children(&key)
            .await
            .map_err(ApiError::internal)?;
        let Some(row) = row.map(|r| engine.held_ends.apply(r)) else {
            continue;
        };
        match cancel_one(engine, &row, force, by).await {
            Ok(true) => asked.push(id.clone()),
            Ok(false) => {}
            Err(e) if first => return Err(e),
            Err(_) => {}
        }
        first = false;
        todo.extend(children.into_iter().filter(|c| !c.detached).map(|c| c.id));
    }
    Ok(asked)
}

async fn cancel_one(engine: &Arc<Engine>, row: &runs::RunRow, force: bool, by: Option<&str>) -> Result<bool, ApiError> {
    if crate::engine::start::cancel_queued(engine, &row.id).await {
        return Ok(true);
    }
    if let Some(live) = engine.live(&row.id) {
        let data = json!({ "force": force, "by": by.unwrap_or("user") });
        let _ = engine
            .store
            .runs()
            .append_event(&row.id, "CANCEL_REQUESTED", data)
            .await;
        live.cancelling.store(true, std::sync::atomic::Ordering::Release);
        live.link.cancel(force).await?;
        return Ok(true);
    }
    if row.state == RunState::Lost
        && let Some(leader) = row.harness_identity()
    {
        // A harness whose supervisor died: signal it ourselves, after
        // verifying it is still the process we recorded.
        let pid = leader.pid;
        match leader.liveness() {
            Liveness::Gone => {
                return Err(ApiError::new(
                    ErrorCode::NotRunning,
                    format!(
                        "run {} is lost and pid {pid} no longer names its harness (it exited, or the pid was reused); not signalled",
                        row.name
                    ),
                ));
            }
            Liveness::Unknown => {
                return Err(ApiError::new(
                    ErrorCode::NotRunning,
                    format!(
                        "run {} is lost and pid {pid} cannot be verified; not signalled",
                        row.name
                    ),
                ));
            }
            Liveness::Alive => {}
        }
        {
            let signal = if force {
                nix::sys::signal::Signal::SIGKILL
            } else {
                nix::sys::signal::Signal::SIGTERM
            };
            crate::pty::signal::signal_group(&leader, leader.pid, signal)
                .map_err(|e| ApiError::new(ErrorCode::NotRunning, e.to_string()))?;
            let data = json!({ "signal": signal.as_str() });
            let _ = engine.store.runs().append_event(&row.id, "SIGNALLED", data).await;
            return Ok(true);
        }
    }
    if row.state.is_live() {
        // Running, not followed: its supervisor did not answer when the
        // daemon started (`adopt::adopt_later` tries it again).
        let why = match row.supervisor_pid {
            Some(pid) if row.state == RunState::Running => format!(
                "run {}'s supervisor (pid {pid}) does not answer: it may be stopped (kill -CONT {pid}); the daemon keeps trying it",
                row.name
            ),
            _ => format!("run {} is still starting; try again", row.name),
        };
        return Err(ApiError::new(ErrorCode::NotRunning, why));
    }
    Err(crate::engine::start::ended_state_error(row))
}
