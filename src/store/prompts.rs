//! A run's prompts: queued, typed in once (their state), and those not yet
//! typed in listed with when each was queued, rewritten or dropped while
//! they wait (`agents prompts`).

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

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

#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub id: String,
    pub run_id: String,
    pub text: String,
    pub state: String,
}

/// Queues a prompt; a known id returns the existing prompt unchanged.
pub fn enqueue_prompt(conn: &Connection, id: &str, run: &str, text: &str) -> Result<Prompt, StoreError> {
    if let Some(existing) = get_prompt(conn, id)? {
        return Ok(existing);
    }
    conn.execute(
        "INSERT INTO prompts (id, run_id, text, state, created_at) VALUES (?1, ?2, ?3, 'queued', ?4)",
        params![id, run, text, now_ms()],
    )?;
    get_prompt(conn, id)?.ok_or_else(|| StoreError::Corrupt(format!("prompt {id} vanished")))
}

pub fn get_prompt(conn: &Connection, id: &str) -> Result<Option<Prompt>, StoreError> {
    Ok(conn
        .query_row("SELECT id, run_id, text, state FROM prompts WHERE id = ?1", [id], |r| {
            Ok(Prompt {
                id: r.get(0)?,
                run_id: r.get(1)?,
                text: r.get(2)?,
                state: r.get(3)?,
            })
        })
        .optional()?)
}

pub fn queued_prompts(conn: &Connection, run: &str) -> Result<Vec<Prompt>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, run_id, text, state FROM prompts WHERE run_id = ?1 AND state = 'queued' ORDER BY created_at, rowid",
    )?;
    let rows = stmt
        .query_map([run], |r| {
            Ok(Prompt {
                id: r.get(0)?,
                run_id: r.get(1)?,
                text: r.get(2)?,
                state: r.get(3)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

pub fn set_prompt_state(conn: &Connection, id: &str, state: &str) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE prompts SET state = ?2, delivered_at = CASE WHEN ?2 = 'delivered' THEN ?3 ELSE delivered_at END WHERE id = ?1",
        params![id, state, now_ms()],
    )?;
    Ok(())
}
