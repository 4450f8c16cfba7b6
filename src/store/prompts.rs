//! A run's prompts: queued, typed in once (their state), and those not yet
//! typed in listed with when each was queued, rewritten or dropped while
//! they wait (`agents prompts`).

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::{Store, StoreError, now_ms, runs};

/// A queued prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    pub id: String,
    pub run_id: String,
    pub text: String,
    pub queued_at: i64,
}

/// The queued prompts of each of `runs`, oldest first: one statement for
/// all of them, a probe a run into the index of waiting prompts alone
/// (migration 17: few wait at any time).
pub fn waiting(conn: &Connection, runs: &[&str]) -> Result<HashMap<String, Vec<Waiting>>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, run_id, text, created_at FROM prompts INDEXED BY prompts_queued
         WHERE run_id IN (SELECT value FROM json_each(?1)) AND state = 'queued'
         ORDER BY run_id, created_at, rowid",
    )?;
    let runs = serde_json::to_string(runs).unwrap_or_else(|_| "[]".into());
    let mut all: HashMap<String, Vec<Waiting>> = HashMap::new();
    for row in stmt.query_map([runs], |r| {
        Ok(Waiting {
            id: r.get(0)?,
            run_id: r.get(1)?,
            text: r.get(2)?,
            queued_at: r.get(3)?,
        })
    })? {
        let row = row?;
        all.entry(row.run_id.clone()).or_default().push(row);
    }
    Ok(all)
}

/// `store.prompts()`: a run's prompt queue, each read and write on the
/// owner thread.
pub struct Prompts<'a>(&'a Store);

impl Store {
    pub fn prompts(&self) -> Prompts<'_> {
        Prompts(self)
    }
}

/// A change to a prompt still waiting.
pub enum Change {
    /// Its new text (see [`edit`]).
    Edit(String),
    /// Never typed in (see [`drop_waiting`]).
    Drop,
}

impl Prompts<'_> {
    pub async fn get(&self, id: &str) -> Result<Option<Prompt>, StoreError> {
        let id = id.to_string();
        self.0.call(move |c| get_prompt(c, &id)).await
    }

    /// The prompts waiting for each of `runs` (see [`waiting`]).
    pub async fn waiting(&self, runs: Vec<String>) -> Result<HashMap<String, Vec<Waiting>>, StoreError> {
        self.0
            .call(move |c| waiting(c, &runs.iter().map(String::as_str).collect::<Vec<_>>()))
            .await
    }

    /// Applies `change` to prompt `id` of `run` when it still waits, and
    /// then records `event` on the run; answers whether it waited.
    pub async fn change(&self, run: &str, id: &str, change: Change, event: &'static str) -> Result<bool, StoreError> {
        let (run, id) = (run.to_string(), id.to_string());
        self.0
            .call(move |c| {
                let changed = match &change {
                    Change::Edit(text) => edit(c, &run, &id, text)?,
                    Change::Drop => drop_waiting(c, &run, &id)?,
                };
                if changed {
                    runs::append_event(c, &run, event, &serde_json::json!({ "prompt_id": id }))?;
                }
                Ok(changed)
            })
            .await
    }

    /// Queues a prompt (see [`enqueue_prompt`]); a new one gets its
    /// `PROMPT_QUEUED` event.
    pub async fn enqueue(&self, run: &str, id: &str, text: &str) -> Result<Prompt, StoreError> {
        let (r, p, t) = (run.to_string(), id.to_string(), text.to_string());
        self.0
            .call(move |c| {
                let fresh = get_prompt(c, &p)?.is_none();
                let prompt = enqueue_prompt(c, &p, &r, &t)?;
                if fresh {
                    runs::append_event(c, &r, "PROMPT_QUEUED", &serde_json::json!({ "prompt_id": p }))?;
                }
                Ok(prompt)
            })
            .await
    }

    /// The run's queued prompts, oldest first, and its row, read together.
    pub async fn queued_with_run(&self, run: &str) -> Result<(Vec<Prompt>, Option<runs::RunRow>), StoreError> {
        let run = run.to_string();
        self.0
            .call(move |c| Ok((queued_prompts(c, &run)?, runs::get_run(c, &run)?)))
            .await
    }

    /// The prompt was typed in: `delivered`, and its `PROMPT_DELIVERED`
    /// event on the run (`on_purpose`: a user's choice).
    pub async fn delivered(&self, run: &str, id: &str, on_purpose: bool) -> Result<i64, StoreError> {
        let (run, pid) = (run.to_string(), id.to_string());
        self.0
            .call(move |c| {
                set_prompt_state(c, &pid, "delivered")?;
                let mut data = serde_json::json!({ "prompt_id": pid });
                if on_purpose {
                    data["on_purpose"] = true.into();
                }
                runs::append_event(c, &run, "PROMPT_DELIVERED", &data)
            })
            .await
    }
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
    /// Why it was never typed in (`undelivered`).
    pub reason: Option<String>,
}

/// A prompt still queued when its run ended: never typed in, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undelivered {
    pub id: String,
    pub text: String,
    pub queued_at: i64,
    pub reason: String,
}

/// Every prompt still queued to `run` is `undelivered`, for `reason`:
/// written with the run's end, in its transaction. How many there were.
pub fn undeliver(conn: &Connection, run: &str, reason: &str) -> Result<usize, StoreError> {
    Ok(conn.execute(
        "UPDATE prompts SET state = 'undelivered', reason = ?2, delivered_at = ?3 WHERE run_id = ?1 AND state = 'queued'",
        params![run, reason, now_ms()],
    )?)
}

/// The prompts queued to `run` that it ended without, oldest first.
pub fn undelivered(conn: &Connection, run: &str) -> Result<Vec<Undelivered>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, text, created_at, COALESCE(reason, 'the run ended') FROM prompts
         WHERE run_id = ?1 AND state = 'undelivered' ORDER BY created_at, rowid",
    )?;
    let rows = stmt.query_map([run], |r| {
        Ok(Undelivered {
            id: r.get(0)?,
            text: r.get(1)?,
            queued_at: r.get(2)?,
            reason: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
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

/// The columns a [`Prompt`] is read from.
const PROMPT: &str = "SELECT id, run_id, text, state, reason FROM prompts";

fn prompt_of(r: &rusqlite::Row) -> rusqlite::Result<Prompt> {
    Ok(Prompt {
        id: r.get(0)?,
        run_id: r.get(1)?,
        text: r.get(2)?,
        state: r.get(3)?,
        reason: r.get(4)?,
    })
}

pub fn get_prompt(conn: &Connection, id: &str) -> Result<Option<Prompt>, StoreError> {
    Ok(conn
        .query_row(&format!("{PROMPT} WHERE id = ?1"), [id], prompt_of)
        .optional()?)
}

pub fn queued_prompts(conn: &Connection, run: &str) -> Result<Vec<Prompt>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "{PROMPT} WHERE run_id = ?1 AND state = 'queued' ORDER BY created_at, rowid"
    ))?;
    let rows = stmt.query_map([run], prompt_of)?.collect::<Result<_, _>>()?;
    Ok(rows)
}

pub fn set_prompt_state(conn: &Connection, id: &str, state: &str) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE prompts SET state = ?2, delivered_at = CASE WHEN ?2 = 'delivered' THEN ?3 ELSE delivered_at END WHERE id = ?1",
        params![id, state, now_ms()],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::runs::tests::row;

    #[test]
    fn mail_not_handed_over_when_its_run_ends_is_undelivered_with_why() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = super::super::open_connection(&dir.path().join("a.db")).unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        runs::insert_run(&conn, &row("R1", crate::api::RunState::Running)).unwrap();
        let mail = super::super::mail::NewMail {
            id: "M1",
            from_run: None,
            from_name: "user",
            to_run: "R1",
            thread: "M1",
            in_reply_to: None,
            body: "stored, never handed",
        };
        assert_eq!(super::super::mail::insert(&conn, &mail).unwrap().state, "stored");
        let ending = runs::Ending {
            state: crate::api::RunState::Cancelled,
            exit_code: None,
            signal: None,
            reason: None,
            output_bytes: None,
            event_kind: "RUN_CANCELLED",
            evidence: serde_json::json!({}),
            ended_at: None,
        };
        assert!(runs::finish(&mut conn, "R1", &ending).unwrap());
        let m = super::super::mail::get(&conn, "M1").unwrap().unwrap();
        assert_eq!(
            (m.state.as_str(), m.reason.as_deref()),
            ("undelivered", Some("the run ended (cancelled)"))
        );
        let undelivered = undelivered(&conn, "R1").unwrap();
        assert_eq!(undelivered.len(), 1);
        assert_eq!(undelivered[0].text, "stored, never handed");
    }
}
