//! `runs.rename`: a run's new name, given by the user. The old one stays a
//! former name that keeps finding the run (`store::names`).

use std::sync::Arc;

use crate::api::{ApiError, ErrorCode, RunRecord};
use crate::engine::Engine;
use crate::store::names::Refused;
use crate::store::runs::RunRow;

/// Renames `row` (its name checked by the dispatcher) and answers its
/// record. A run on a host is refused: the host's daemon knows it by the
/// name it wears there, and this one mirrors that record.
pub async fn rename(engine: &Arc<Engine>, row: RunRow, name: String) -> Result<RunRecord, ApiError> {
    if row.host != "local" {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "run {} lives on host {}: rename it there (agents rename on that host)",
                row.name, row.host
            ),
        ));
    }
    let renamed = engine
        .store
        .names()
        .rename(&row.id, &name)
        .await
        .map_err(ApiError::internal)?;
    match renamed {
        Ok(old) => {
            if old != name {
                tracing::info!("run {} renamed {old} → {name}", row.id);
                engine.changed(&row.id);
            }
            crate::engine::start::record(engine, &row.id).await
        }
        Err(Refused::NoRun) => Err(ApiError::new(ErrorCode::UnknownRun, format!("no run {}", row.id))),
        Err(Refused::Taken(holder)) => Err(ApiError::new(
            ErrorCode::Conflict,
            format!("the live run {holder} is named '{name}' already; rename it or pick another name"),
        )),
    }
}
