//! The mailbox in the store (docs/design.md §13): each message once, by the
//! id its sender minted; its delivery is the prompt of the same id.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{Store, StoreError, format_ms, now_ms, teams};
use crate::api::{MAIL_VERSION, MailRecord};

/// A message as it is stored, before its names and delivery are read.
pub struct NewMail<'a> {
    pub id: &'a str,
    pub from_run: Option<&'a str>,
    pub from_name: &'a str,
    pub to_run: &'a str,
    pub thread: &'a str,
    pub in_reply_to: Option<&'a str>,
    pub body: &'a str,
}

const COLUMNS: &str = "m.version, m.id, COALESCE(m.from_run, 'user'), m.from_name, m.to_run, r.name, m.thread,
    m.in_reply_to, m.at, m.body, m.state, p.state, p.reason";

fn from_row(r: &Row) -> rusqlite::Result<MailRecord> {
    let stored: String = r.get(10)?;
    let prompt: Option<String> = r.get(11)?;
    Ok(MailRecord {
        version: r.get(0)?,
        id: r.get(1)?,
        from: r.get(2)?,
        from_name: r.get(3)?,
        to: r.get(4)?,
        to_name: r.get(5)?,
        thread: r.get(6)?,
        in_reply_to: r.get(7)?,
        at: format_ms(r.get(8)?),
        body: r.get(9)?,
        // Handed over: where its prompt stands (a run on a host keeps its
        // prompts there).
        state: match (stored.as_str(), prompt) {
            ("stored", _) => "stored".into(),
            (_, Some(state)) => state,
            (_, None) => SENT_TO_HOST.into(),
        },
        reason: r.get(12)?,
    })
}

/// The state of a message handed to a run on a host, until that host says
/// where its prompt there stands.
pub const SENT_TO_HOST: &str = "sent to its host";

/// The messages to `run` not handed over yet as it ends (stored, the
/// daemon gone before it handed them): undelivered, for `reason`, as the
/// prompts of their ids. How many.
pub fn undeliver_stored(conn: &Connection, run: &str, reason: &str) -> Result<usize, StoreError> {
    let undelivered = conn.execute(
        "INSERT INTO prompts (id, run_id, text, state, created_at, reason, delivered_at)
         SELECT id, to_run, body, 'undelivered', at, ?2, ?3 FROM mail WHERE to_run = ?1 AND state = 'stored'
         ON CONFLICT(id) DO NOTHING",
        params![run, reason, now_ms()],
    )?;
    conn.execute(
        "UPDATE mail SET state = 'handed' WHERE to_run = ?1 AND state = 'stored'",
        [run],
    )?;
    Ok(undelivered)
}

/// `store.mail()`: the mailbox's reads and writes, each on the owner thread.
pub struct Mailbox<'a>(&'a Store);

impl Store {
    pub fn mail(&self) -> Mailbox<'_> {
        Mailbox(self)
    }
}

impl Mailbox<'_> {
    pub async fn get(&self, id: &str) -> Result<Option<MailRecord>, StoreError> {
        let id = id.to_string();
        self.0.call(move |c| get(c, &id)).await
    }

    /// Stores `mail` (see [`insert`]).
    pub async fn insert(&self, mail: &NewMail<'_>) -> Result<MailRecord, StoreError> {
        let (id, from_run, from_name, to_run) = (
            mail.id.to_string(),
            mail.from_run.map(str::to_string),
            mail.from_name.to_string(),
            mail.to_run.to_string(),
        );
        let (thread, in_reply_to, body) = (
            mail.thread.to_string(),
            mail.in_reply_to.map(str::to_string),
            mail.body.to_string(),
        );
        self.0
            .call(move |c| {
                insert(
                    c,
                    &NewMail {
                        id: &id,
                        from_run: from_run.as_deref(),
                        from_name: &from_name,
                        to_run: &to_run,
                        thread: &thread,
                        in_reply_to: in_reply_to.as_deref(),
                        body: &body,
                    },
                )
            })
            .await
    }

    pub async fn mark_handed(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.0.call(move |c| mark_handed(c, &id)).await
    }

    /// See [`take_unread`].
    pub async fn take_unread(&self, run: &str) -> Result<Vec<MailRecord>, StoreError> {
        let run = run.to_string();
        self.0.call(move |c| take_unread(c, &run)).await
    }

    /// See [`stored`].
    pub async fn stored(&self) -> Result<Vec<MailRecord>, StoreError> {
        self.0.call(|c| stored(c)).await
    }

    /// See [`list`].
    /// Keeps what became of a message on the host of its run, once it is
    /// over there (delivered, undelivered, dropped): as the prompt of its
    /// id here, so it is said without asking the host again.
    pub async fn settled_there(&self, there: MailRecord) -> Result<(), StoreError> {
        self.0
            .call(move |c| {
                c.execute(
                    "INSERT INTO prompts (id, run_id, text, state, created_at, reason, delivered_at)
                     SELECT id, to_run, body, ?2, at, ?3, ?4 FROM mail WHERE id = ?1 AND state = 'handed'
                     ON CONFLICT(id) DO NOTHING",
                    params![there.id, there.state, there.reason, now_ms()],
                )?;
                Ok(())
            })
            .await
    }

    pub async fn list(&self, runs: Option<Vec<String>>, limit: usize) -> Result<Vec<MailRecord>, StoreError> {
        self.0.call(move |c| list(c, runs.as_deref(), limit)).await
    }

    /// The seats of the team a message is addressed to: the team `team`
    /// names, else the sender's; none when neither is.
    pub async fn seats(
        &self,
        team: Option<String>,
        sender: Option<String>,
    ) -> Result<Vec<teams::MemberRow>, StoreError> {
        self.0
            .call(move |c| {
                let team = match (team, sender) {
                    (Some(reference), _) => teams::resolve(c, &reference)?.ok().flatten().map(|t| t.id),
                    (None, Some(run)) => teams::seat_of(c, &run)?.map(|s| s.team_id),
                    (None, None) => None,
                };
                match team {
                    Some(team) => teams::members(c, &team),
                    None => Ok(Vec::new()),
                }
            })
            .await
    }
}

fn select(conditions: &str) -> String {
    format!(
        "SELECT {COLUMNS} FROM mail m JOIN runs r ON r.id = m.to_run LEFT JOIN prompts p ON p.id = m.id {conditions}"
    )
}

/// Stores `mail` unless a message of its id is stored already; either way
/// answers the stored one (a retry is the same message).
pub fn insert(conn: &Connection, mail: &NewMail) -> Result<MailRecord, StoreError> {
    conn.execute(
        "INSERT OR IGNORE INTO mail (id, version, from_run, from_name, to_run, thread, in_reply_to, at, body, state)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'stored')",
        params![
            mail.id,
            MAIL_VERSION,
            mail.from_run,
            mail.from_name,
            mail.to_run,
            mail.thread,
            mail.in_reply_to,
            now_ms(),
            mail.body
        ],
    )?;
    get(conn, mail.id)?.ok_or_else(|| StoreError::Corrupt(format!("mail {} vanished", mail.id)))
}

pub fn get(conn: &Connection, id: &str) -> Result<Option<MailRecord>, StoreError> {
    Ok(conn.query_row(&select("WHERE m.id = ?1"), [id], from_row).optional()?)
}

/// Handed to its run (as the prompt of the same id).
pub fn mark_handed(conn: &Connection, id: &str) -> Result<(), StoreError> {
    conn.execute("UPDATE mail SET state = 'handed' WHERE id = ?1", [id])?;
    Ok(())
}

/// Takes the messages to `run` not yet typed into it (stored, or queued
/// while the agent works), oldest first: read over MCP instead, their
/// prompts are never typed (state `read`).
pub fn take_unread(conn: &mut Connection, run: &str) -> Result<Vec<MailRecord>, StoreError> {
    let tx = conn.transaction()?;
    let ids: Vec<String> = {
        let mut stmt = tx.prepare(
            "SELECT m.id FROM mail m LEFT JOIN prompts p ON p.id = m.id
             WHERE m.to_run = ?1 AND (m.state = 'stored' OR p.state = 'queued') ORDER BY m.at, m.rowid",
        )?;
        stmt.query_map([run], |r| r.get(0))?.collect::<Result<_, _>>()?
    };
    let mut taken = Vec::with_capacity(ids.len());
    for id in &ids {
        tx.execute("UPDATE mail SET state = 'handed' WHERE id = ?1", [id])?;
        // Held in the queue under the message's id: never typed now.
        tx.execute(
            "INSERT INTO prompts (id, run_id, text, state, created_at) VALUES (?1, ?2, '', 'read', ?3)
             ON CONFLICT(id) DO UPDATE SET state = 'read' WHERE state = 'queued'",
            params![id, run, now_ms()],
        )?;
        taken.extend(get(&tx, id)?);
    }
    tx.commit()?;
    Ok(taken)
}

/// Messages stored but not handed over (the daemon died between the two).
pub fn stored(conn: &Connection) -> Result<Vec<MailRecord>, StoreError> {
    let mut stmt = conn.prepare(&select("WHERE m.state = 'stored' ORDER BY m.at"))?;
    let rows = stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The newest messages to or from any of `runs` (every run's when `None`),
/// newest first.
pub fn list(conn: &Connection, runs: Option<&[String]>, limit: usize) -> Result<Vec<MailRecord>, StoreError> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = match runs {
        Some(runs) => {
            // The ids as one JSON array: any number of them, one statement.
            let ids = serde_json::to_string(runs).map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let mut stmt = conn.prepare(&select(
                "WHERE m.to_run IN (SELECT value FROM json_each(?1)) OR m.from_run IN (SELECT value FROM json_each(?1))
                 ORDER BY m.at DESC LIMIT ?2",
            ))?;
            stmt.query_map(params![ids, limit], from_row)?
                .collect::<Result<_, _>>()?
        }
        None => {
            let mut stmt = conn.prepare(&select("ORDER BY m.at DESC LIMIT ?1"))?;
            stmt.query_map(params![limit], from_row)?.collect::<Result<_, _>>()?
        }
    };
    Ok(rows)
}
