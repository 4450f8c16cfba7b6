//! A host's outbox in the store (docs/design.md §13): mail a run placed
//! here by another daemon sent to an address only that daemon knows, held
//! by the sender's id until that daemon has taken it and said it is
//! delivered. Each take marks the messages with the epoch of the
//! connection that took them; only that epoch's word drops them.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{Store, StoreError, format_ms, now_ms, runs};
use crate::api::{MAIL_VERSION, OutboundMail, OutboxTaken};

/// The event a placed run gets when it starts (`runs.start` with `placed`).
pub const PLACED_EVENT: &str = "PLACED";

/// A message as it is held, before it is read back.
pub struct NewOutbound<'a> {
    pub id: &'a str,
    pub from_run: &'a str,
    pub to: &'a str,
    pub thread: &'a str,
    pub in_reply_to: Option<&'a str>,
    pub body: &'a str,
}

const COLUMNS: &str = "version, id, from_run, to_addr, thread, in_reply_to, at, body";

fn from_row(r: &Row) -> rusqlite::Result<OutboundMail> {
    Ok(OutboundMail {
        version: r.get(0)?,
        id: r.get(1)?,
        from: r.get(2)?,
        to: r.get(3)?,
        thread: r.get(4)?,
        in_reply_to: r.get(5)?,
        at: format_ms(r.get(6)?),
        body: r.get(7)?,
    })
}

/// `store.outbox()`: mail held for the daemon that placed its sender,
/// each read and write on the owner thread.
pub struct Outbox<'a>(&'a Store);

impl Store {
    pub fn outbox(&self) -> Outbox<'_> {
        Outbox(self)
    }
}

impl Outbox<'_> {
    /// See [`placed`].
    pub async fn placed(&self, run: &str) -> Result<bool, StoreError> {
        let run = run.to_string();
        self.0.call(move |c| placed(c, &run)).await
    }

    /// Holds `mail` (see [`hold`]).
    pub async fn hold(&self, mail: &NewOutbound<'_>) -> Result<OutboundMail, StoreError> {
        let (id, from_run, to) = (mail.id.to_string(), mail.from_run.to_string(), mail.to.to_string());
        let (thread, in_reply_to, body) = (
            mail.thread.to_string(),
            mail.in_reply_to.map(str::to_string),
            mail.body.to_string(),
        );
        self.0
            .call(move |c| {
                hold(
                    c,
                    &NewOutbound {
                        id: &id,
                        from_run: &from_run,
                        to: &to,
                        thread: &thread,
                        in_reply_to: in_reply_to.as_deref(),
                        body: &body,
                    },
                )
            })
            .await
    }

    /// A held message and the name of its sender (its id when its run is
    /// gone), read together.
    pub async fn get_with_sender(&self, id: &str) -> Result<Option<(OutboundMail, String)>, StoreError> {
        let id = id.to_string();
        self.0
            .call(move |c| {
                let Some(m) = get(c, &id)? else {
                    return Ok(None);
                };
                let name = runs::get_run(c, &m.from)?.map_or_else(|| m.from.clone(), |r| r.name);
                Ok(Some((m, name)))
            })
            .await
    }

    /// See [`take`].
    pub async fn take(&self, run: &str, epoch: &str) -> Result<Vec<OutboundMail>, StoreError> {
        let (run, epoch) = (run.to_string(), epoch.to_string());
        self.0.call(move |c| take(c, &run, &epoch)).await
    }

    /// See [`taken`].
    pub async fn taken(&self, run: &str, epoch: &str, ids: Vec<String>) -> Result<OutboxTaken, StoreError> {
        let (run, epoch) = (run.to_string(), epoch.to_string());
        self.0.call(move |c| taken(c, &run, &epoch, &ids)).await
    }
}

/// Whether `run` (or the run at the root of its tree here, for a child
/// started inside one) was placed here by another daemon.
pub fn placed(conn: &Connection, run: &str) -> Result<bool, StoreError> {
    let Some(row) = runs::get_run(conn, run)? else {
        return Ok(false);
    };
    let found: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM events WHERE run_id IN (?1, ?2) AND kind = ?3 LIMIT 1",
            params![row.id, row.root_run_id, PLACED_EVENT],
            |r| r.get(0),
        )
        .optional()?;
    Ok(found.is_some())
}

/// Holds `mail` unless a message of its id is held already (a retry is
/// the same message); either way answers the held one.
pub fn hold(conn: &Connection, mail: &NewOutbound) -> Result<OutboundMail, StoreError> {
    let added = conn.execute(
        "INSERT OR IGNORE INTO mail_outbox (id, version, from_run, to_addr, thread, in_reply_to, at, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            mail.id,
            MAIL_VERSION,
            mail.from_run,
            mail.to,
            mail.thread,
            mail.in_reply_to,
            now_ms(),
            mail.body
        ],
    )?;
    if added == 1 {
        let data = serde_json::json!({ "id": mail.id, "to": mail.to });
        runs::append_event(conn, mail.from_run, "MAIL_HELD", &data)?;
    }
    get(conn, mail.id)?.ok_or_else(|| StoreError::Corrupt(format!("held mail {} vanished", mail.id)))
}

pub fn get(conn: &Connection, id: &str) -> Result<Option<OutboundMail>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM mail_outbox WHERE id = ?1");
    Ok(conn.query_row(&sql, [id], from_row).optional()?)
}

/// The mail `run` holds, oldest first, marked as taken over `epoch`.
pub fn take(conn: &mut Connection, run: &str, epoch: &str) -> Result<Vec<OutboundMail>, StoreError> {
    let tx = conn.transaction()?;
    tx.execute(
        "UPDATE mail_outbox SET pulled_by = ?2 WHERE from_run = ?1",
        params![run, epoch],
    )?;
    let sql = format!("SELECT {COLUMNS} FROM mail_outbox WHERE from_run = ?1 ORDER BY at, rowid");
    let held = tx
        .prepare(&sql)?
        .query_map([run], from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    tx.commit()?;
    Ok(held)
}

/// Drops the messages `ids` of `run` that were last taken over `epoch`;
/// those taken over another connection since are stale and stay; ids no
/// longer held count as taken (a repeated word).
pub fn taken(conn: &mut Connection, run: &str, epoch: &str, ids: &[String]) -> Result<OutboxTaken, StoreError> {
    let tx = conn.transaction()?;
    let mut answer = OutboxTaken::default();
    for id in ids {
        let dropped = tx.execute(
            "DELETE FROM mail_outbox WHERE id = ?1 AND from_run = ?2 AND pulled_by = ?3",
            params![id, run, epoch],
        )?;
        let still: Option<i64> = tx
            .query_row(
                "SELECT 1 FROM mail_outbox WHERE id = ?1 AND from_run = ?2",
                params![id, run],
                |r| r.get(0),
            )
            .optional()?;
        match (dropped, still) {
            (0, Some(_)) => answer.stale.push(id.clone()),
            _ => answer.taken.push(id.clone()),
        }
    }
    if !answer.taken.is_empty() {
        runs::append_event(&tx, run, "MAIL_TAKEN", &serde_json::json!({ "ids": answer.taken }))?;
    }
    tx.commit()?;
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_with_run() -> Connection {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        conn.execute(
            "INSERT INTO runs (id, name, harness, host, cwd, command, state, status, root_run_id, detached,
                               launch_id, created_at, rows, cols, output_bytes, args)
             VALUES ('R1', 'member', 'demo', 'local', '/', '[]', 'running', 'idle', 'R1', 0, 'R1', 0, 40, 120, 0, '[]')",
            [],
        )
        .unwrap();
        conn
    }

    fn held(conn: &Connection, id: &str) -> OutboundMail {
        hold(
            conn,
            &NewOutbound {
                id,
                from_run: "R1",
                to: "lead",
                thread: id,
                in_reply_to: None,
                body: "hello",
            },
        )
        .unwrap()
    }

    #[test]
    fn only_the_newest_take_drops_held_mail() {
        let mut conn = store_with_run();
        assert_eq!(held(&conn, "M1").to, "lead");
        held(&conn, "M1"); // a retry: still one
        assert_eq!(take(&mut conn, "R1", "link.1").unwrap().len(), 1);
        // Taken again over a newer connection (the first was cut before it
        // said it had delivered).
        assert_eq!(take(&mut conn, "R1", "link.2").unwrap().len(), 1);
        let ids = vec!["M1".to_string()];
        let stale = taken(&mut conn, "R1", "link.1", &ids).unwrap();
        assert_eq!((stale.taken.len(), stale.stale), (0, ids.clone()));
        assert!(get(&conn, "M1").unwrap().is_some(), "kept for the newer connection");
        let done = taken(&mut conn, "R1", "link.2", &ids).unwrap();
        assert_eq!(done.taken, ids);
        assert!(get(&conn, "M1").unwrap().is_none());
        // Said again: nothing left to drop, nothing stale.
        assert_eq!(taken(&mut conn, "R1", "link.2", &ids).unwrap().taken, ids);
        assert!(take(&mut conn, "R1", "link.3").unwrap().is_empty());
    }

    #[test]
    fn a_run_is_placed_when_it_or_its_root_was() {
        let conn = store_with_run();
        assert!(!placed(&conn, "R1").unwrap());
        runs::append_event(&conn, "R1", PLACED_EVENT, &serde_json::json!({})).unwrap();
        assert!(placed(&conn, "R1").unwrap());
        assert!(!placed(&conn, "NOPE").unwrap());
    }
}
