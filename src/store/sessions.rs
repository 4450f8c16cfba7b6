//! Conversations as their own records (`sessions`, docs/design.md §7): the
//! list of them, each with the run that holds it, and finding one by a
//! reference. Their edges and detail are `store::lineage`'s.

use rusqlite::{Connection, OptionalExtension, params};

use super::runs::{self, RunRow};
use super::{Store, StoreError, format_ms};
use crate::api::{RunState, SessionRecord};

/// Which of a session's runs holds it: the live one, else the newest.
const HOLDER_ORDER: &str = "ORDER BY state IN ('pending', 'starting', 'running') DESC, created_at DESC, id DESC";

/// What a session reference names.
pub enum Found {
    /// The session, its harness family and the run that last held it.
    One(String, String, Option<Box<RunRow>>),
    Many(Vec<String>),
    Nothing,
}

/// `store.sessions()`: this daemon's conversations.
pub struct Sessions<'a>(&'a Store);

impl Store {
    pub fn sessions(&self) -> Sessions<'_> {
        Sessions(self)
    }
}

impl Sessions<'_> {
    /// Every session, newest first, with the run that last held it.
    /// Without `all`, child conversations (a subagent's, or a child run's)
    /// are left out, as a conversation list shows its top ones.
    pub async fn list(&self, all: bool) -> Result<Vec<SessionRecord>, StoreError> {
        self.0.call(move |c| list(c, all)).await
    }

    /// The session a reference names (full id or unique prefix).
    pub async fn find(&self, reference: &str) -> Result<Found, StoreError> {
        let reference = reference.to_string();
        self.0.call(move |c| find(c, &reference)).await
    }

    /// Whether this daemon holds a session (its own runs' conversations,
    /// or a transcript indexed here) that `reference` names or prefixes.
    pub async fn matches(&self, reference: &str) -> Result<bool, StoreError> {
        let reference = reference.to_string();
        self.0
            .call(move |c| {
                Ok(c.query_row(
                    "SELECT 1 FROM sessions WHERE id = ?1 OR id LIKE ?1 || '%'
                     UNION ALL SELECT 1 FROM transcript_sessions WHERE session_id = ?1 OR session_id LIKE ?1 || '%'
                     LIMIT 1",
                    [reference],
                    |_| Ok(()),
                )
                .optional()?
                .is_some())
            })
            .await
    }

    /// The transcript file the harness layer recorded for the session.
    pub async fn transcript_path(&self, session: &str) -> Result<Option<String>, StoreError> {
        let session = session.to_string();
        self.0
            .call(move |c| {
                Ok(
                    c.query_row("SELECT transcript_path FROM sessions WHERE id = ?1", [&session], |r| {
                        r.get(0)
                    })
                    .ok()
                    .flatten(),
                )
            })
            .await
    }
}

fn list(c: &Connection, all: bool) -> Result<Vec<SessionRecord>, StoreError> {
    // The holder: the newest run that held the session, the live one
    // first (a resumed run, not the cancelled one it resumed); else the
    // run it was recorded with. Whether it is a child conversation is the
    // first run's to say.
    let mut stmt = c.prepare(&format!(
        "WITH holders AS (
             SELECT session_id, id, ROW_NUMBER() OVER (PARTITION BY session_id {HOLDER_ORDER}) AS n
             FROM runs WHERE session_id IS NOT NULL)
         SELECT s.id, s.harness, r.id, r.name, r.state, r.cwd, s.transcript_path, s.created_at, ts.messages
         FROM sessions s
         LEFT JOIN transcript_sessions ts ON ts.session_id = s.id
         LEFT JOIN holders h ON h.session_id = s.id AND h.n = 1
         LEFT JOIN runs r ON r.id = COALESCE(h.id, s.run_id)
         LEFT JOIN runs o ON o.id = s.run_id
         WHERE ?1 OR (o.parent_run_id IS NULL AND s.id NOT IN (
             SELECT sa.session_id FROM subagents sa JOIN runs p ON p.id = sa.run_id
             WHERE sa.session_id IS NOT NULL AND sa.session_id != COALESCE(p.session_id, '')))
         ORDER BY s.created_at DESC LIMIT 1000",
    ))?;
    let rows = stmt
        .query_map([all], |r| {
            let state: Option<String> = r.get(4)?;
            Ok(SessionRecord {
                id: r.get(0)?,
                harness: r.get(1)?,
                run_id: r.get(2)?,
                run_name: r.get(3)?,
                run_state: state.as_deref().and_then(RunState::parse),
                cwd: r.get(5)?,
                transcript_path: r.get(6)?,
                created_at: format_ms(r.get(7)?),
                messages: r.get::<_, Option<i64>>(8)?.map(|n| n.max(0) as u64),
                host: "local".into(),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

fn find(c: &Connection, reference: &str) -> Result<Found, StoreError> {
    let mut stmt = c.prepare("SELECT id, harness FROM sessions WHERE id = ?1 OR id LIKE ?1 || '%' LIMIT 3")?;
    let hits: Vec<(String, String)> = stmt
        .query_map(params![reference], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let (id, harness) = match hits.iter().find(|(id, _)| id == reference) {
        Some(exact) => exact.clone(),
        None if hits.len() == 1 => hits[0].clone(),
        None if hits.is_empty() => return Ok(Found::Nothing),
        None => return Ok(Found::Many(hits.into_iter().map(|h| h.0).collect())),
    };
    let run_id: Option<String> = c
        .query_row(
            &format!("SELECT id FROM runs WHERE session_id = ?1 {HOLDER_ORDER} LIMIT 1"),
            [&id],
            |row| row.get(0),
        )
        .optional()?;
    let run = match run_id {
        Some(run_id) => runs::get_run(c, &run_id)?.map(Box::new),
        None => None,
    };
    Ok(Found::One(id, harness, run))
}
