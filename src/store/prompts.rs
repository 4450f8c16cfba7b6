//! A run's prompts not yet typed in: listed with when each was queued,
//! rewritten or dropped while they wait (`agents prompts`).

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::{StoreError, now_ms};

/// A queued prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    pub id: String,
    pub run_id: String,
    pub text: String,
    pub queued_at: i64,
}

/// The queued prompts of each of `runs`, oldest first (one index probe a
/// run: `prompts_by_run`).
pub fn waiting(conn: &Connection, runs: &[&str]) -> Result<HashMap<String, Vec<Waiting>>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, run_id, text, created_at FROM prompts WHERE run_id = ?1 AND state = 'queued'
         ORDER BY created_at, rowid",
    )?;
    let mut all = HashMap::new();
    for run in runs {
        let rows: Vec<Waiting> = stmt
            .query_map([run], |r| {
                Ok(Waiting {
                    id: r.get(0)?,
                    run_id: r.get(1)?,
                    text: r.get(2)?,
                    queued_at: r.get(3)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        if !rows.is_empty() {
            all.insert(run.to_string(), rows);
        }
    }
    Ok(all)
}

/// Rewrites a prompt of `run` still waiting; false when it is not one
/// (typed in, dropped, another run's, unknown).
pub fn edit(conn: &Connection, run: &str, id: &str, text: &str) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "UPDATE prompts SET text = ?3 WHERE id = ?1 AND run_id = ?2 AND state = 'queued'",
        params![id, run, text],
    )?;
    Ok(changed == 1)
}

/// Drops a prompt of `run` still waiting: it is never typed in; false
/// when it is not one.
pub fn drop_waiting(conn: &Connection, run: &str, id: &str) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "UPDATE prompts SET state = 'dropped', delivered_at = ?3 WHERE id = ?1 AND run_id = ?2 AND state = 'queued'",
        params![id, run, now_ms()],
    )?;
    Ok(changed == 1)
}
