//! Routines' records (migration 14): each routine's pause, the time up to
//! which its fires were handled and its queue; the runs and `skipped`
//! records its fires made.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use super::runs::{self, RunRow};
use super::{Store, StoreError};

/// `store.routines()`: routines' states and the runs their fires made,
/// each on the owner thread.
pub struct Routines<'a>(&'a Store);

impl Store {
    pub fn routines(&self) -> Routines<'_> {
        Routines(self)
    }
}

impl Routines<'_> {
    /// See [`all`].
    pub async fn all(&self) -> Result<HashMap<String, RoutineState>, StoreError> {
        self.0.call(|c| all(c)).await
    }

    /// See [`save`].
    pub async fn save(&self, name: &str, state: RoutineState) -> Result<(), StoreError> {
        let name = name.to_string();
        self.0.call(move |c| save(c, &name, &state)).await
    }

    /// See [`mark_fire`].
    pub async fn mark_fire(&self, run: &str, routine: &str, scheduled_at: i64) -> Result<(), StoreError> {
        let (run, routine) = (run.to_string(), routine.to_string());
        self.0.call(move |c| mark_fire(c, &run, &routine, scheduled_at)).await
    }

    /// See [`insert_skipped`].
    pub async fn insert_skipped(&self, row: RunRow) -> Result<RunRow, StoreError> {
        self.0.call(move |c| insert_skipped(c, row)).await
    }

    /// See [`live_run`].
    pub async fn live_run(&self, routine: &str) -> Result<Option<(String, String)>, StoreError> {
        let routine = routine.to_string();
        self.0.call(move |c| live_run(c, &routine)).await
    }

    /// See [`last_fire`].
    pub async fn last_fire(&self, routine: &str) -> Result<Option<RunRow>, StoreError> {
        let routine = routine.to_string();
        self.0.call(move |c| last_fire(c, &routine)).await
    }
}

/// What the daemon keeps of a routine between its restarts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoutineState {
    pub paused: bool,
    /// Every fire up to this time (the scheduler's clock, ms) was handled:
    /// started, queued or recorded as skipped. `None`: never seen yet.
    pub checked_to: Option<i64>,
    /// Fires waiting for the previous run to end (`overlap = "queue"`),
    /// oldest first.
    pub queued: Vec<i64>,
}

pub fn all(conn: &Connection) -> Result<HashMap<String, RoutineState>, StoreError> {
    let mut stmt = conn.prepare("SELECT name, paused, checked_to, queued FROM routines")?;
    let rows = stmt.query_map([], |r| {
        let queued: String = r.get(3)?;
        Ok((
            r.get::<_, String>(0)?,
            RoutineState {
                paused: r.get(1)?,
                checked_to: r.get(2)?,
                queued: serde_json::from_str(&queued).unwrap_or_default(),
            },
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn save(conn: &Connection, name: &str, state: &RoutineState) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO routines (name, paused, checked_to, queued) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT(name) DO UPDATE SET paused = ?2, checked_to = ?3, queued = ?4",
        params![
            name,
            state.paused,
            state.checked_to,
            serde_json::to_string(&state.queued).unwrap_or_else(|_| "[]".into())
        ],
    )?;
    Ok(())
}

/// Names a run by the routine whose fire started it.
pub fn mark_fire(conn: &Connection, run: &str, routine: &str, scheduled_at: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE runs SET routine = ?2, scheduled_at = ?3 WHERE id = ?1",
        params![run, routine, scheduled_at],
    )?;
    runs::append_event(
        conn,
        run,
        "ROUTINE_FIRED",
        &json!({ "routine": routine, "scheduled_at": super::format_ms(scheduled_at) }),
    )?;
    Ok(())
}

/// A fire that could not happen, as an ended record with its reason and
/// no session: `row` is its `skipped` row, named after its routine here.
pub fn insert_skipped(conn: &Connection, mut row: RunRow) -> Result<RunRow, StoreError> {
    let base = row.routine.clone().unwrap_or_else(|| "routine".into());
    row.name = super::harness::unique_name(conn, &base)?;
    runs::insert_run(conn, &row)?;
    runs::append_event(
        conn,
        &row.id,
        "RUN_SKIPPED",
        &json!({
            "state": "skipped",
            "routine": row.routine,
            "scheduled_at": row.scheduled_at.map(super::format_ms),
            "reason": row.reason,
        }),
    )?;
    Ok(row)
}

/// A run of the routine that has not ended, if any.
pub fn live_run(conn: &Connection, routine: &str) -> Result<Option<(String, String)>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT id, name FROM runs WHERE routine = ?1 AND state IN ('pending', 'starting', 'running')
             ORDER BY id DESC LIMIT 1",
            [routine],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// The newest record a routine's fires made: its last outcome.
pub fn last_fire(conn: &Connection, routine: &str) -> Result<Option<RunRow>, StoreError> {
    let id: Option<String> = conn
        .query_row(
            "SELECT id FROM runs WHERE routine = ?1 ORDER BY scheduled_at DESC, id DESC LIMIT 1",
            [routine],
            |r| r.get(0),
        )
        .optional()?;
    match id {
        Some(id) => runs::get_run(conn, &id),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_routines_state_is_kept_and_read_back() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        assert!(all(&conn).unwrap().is_empty());
        let state = RoutineState {
            paused: true,
            checked_to: Some(42),
            queued: vec![7, 9],
        };
        save(&conn, "nightly", &state).unwrap();
        save(&conn, "hourly", &RoutineState::default()).unwrap();
        let read = all(&conn).unwrap();
        assert_eq!(read["nightly"], state);
        assert_eq!(read["hourly"], RoutineState::default());
    }
}
