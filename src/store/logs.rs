//! Which runs' output logs retention pruned (`log_pruned_at`, migration
//! 14, and a `LOG_PRUNED` event): the logs themselves are files under the
//! run's folder, deleted by the daemon; the record stays.

use rusqlite::params;
use serde_json::json;

use super::{Store, StoreError, now_ms, runs};
use crate::api::RunState;

/// A run whose output log is still on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    pub id: String,
    pub name: String,
    pub state: RunState,
    /// When it ended, or was created while it has not.
    pub ended_at: i64,
}

/// `store.logs()`: the record of pruned output logs.
pub struct Logs<'a>(&'a Store);

impl Store {
    pub fn logs(&self) -> Logs<'_> {
        Logs(self)
    }
}

impl Logs<'_> {
    /// Every run whose log has not been pruned.
    pub async fn kept(&self) -> Result<Vec<Kept>, StoreError> {
        self.0
            .call(|c| {
                let mut stmt = c.prepare(
                    "SELECT id, name, state, COALESCE(ended_at, created_at) FROM runs WHERE log_pruned_at IS NULL",
                )?;
                let rows = stmt
                    .query_map([], |r| {
                        let state: String = r.get(2)?;
                        Ok(Kept {
                            id: r.get(0)?,
                            name: r.get(1)?,
                            // Unknown only from a newer binary: unverifiable.
                            state: RunState::parse(&state).unwrap_or(RunState::Lost),
                            ended_at: r.get(3)?,
                        })
                    })?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(rows)
            })
            .await
    }

    /// Records that the run's log is gone, and why, with its event.
    pub async fn pruned(&self, id: &str, reason: &str, bytes: u64) -> Result<(), StoreError> {
        let (id, data) = (id.to_string(), json!({ "reason": reason, "bytes": bytes }));
        self.0
            .call(move |c| {
                c.execute(
                    "UPDATE runs SET log_pruned_at = ?2 WHERE id = ?1",
                    params![id, now_ms()],
                )?;
                runs::append_event(c, &id, "LOG_PRUNED", &data)?;
                Ok(())
            })
            .await
    }
}
