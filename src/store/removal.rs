//! Removing run records (docs/design.md §13): a run with everything
//! recorded of it, in one transaction. The caller decides which runs may
//! go (ended ones, their owned children with them); conversations stay,
//! pointing at no run.

use rusqlite::{Connection, params_from_iter};

use super::runs::{self, RunRow};
use super::{Store, StoreError};

/// The runs `roots` name and, following ownership edges, the children
/// they own, parents before children. A detached child is not owned: it
/// is in `detached`, to be kept.
pub struct Plan {
    pub runs: Vec<RunRow>,
    pub detached: Vec<RunRow>,
}

/// `store.removal()`: what a removal takes, and taking it, each on the
/// owner thread.
pub struct Removal<'a>(&'a Store);

impl Store {
    pub fn removal(&self) -> Removal<'_> {
        Removal(self)
    }
}

impl Removal<'_> {
    /// See [`plan`].
    pub async fn plan(&self, roots: Vec<String>) -> Result<Plan, StoreError> {
        self.0.call(move |c| plan(c, &roots)).await
    }

    /// See [`ended_before`].
    pub async fn ended_before(&self, before: i64, states: Vec<&'static str>) -> Result<Vec<String>, StoreError> {
        self.0.call(move |c| ended_before(c, before, &states)).await
    }

    /// See [`remove`].
    pub async fn remove(&self, plan: Plan) -> Result<(), StoreError> {
        self.0.call(move |c| remove(c, &plan)).await
    }

    /// See [`session_parts`].
    pub async fn session_parts(&self, session: &str) -> Result<SessionGone, StoreError> {
        let session = session.to_string();
        self.0.call(move |c| session_parts(c, &session)).await
    }

    /// See [`remove_session`].
    pub async fn remove_session(&self, session: &str) -> Result<SessionGone, StoreError> {
        let session = session.to_string();
        self.0.call(move |c| remove_session(c, &session)).await
    }
}

pub fn plan(conn: &Connection, roots: &[String]) -> Result<Plan, StoreError> {
    let mut plan = Plan {
        runs: Vec::new(),
        detached: Vec::new(),
    };
    let mut seen = std::collections::HashSet::new();
    let mut todo: std::collections::VecDeque<String> = roots.iter().cloned().collect();
    while let Some(id) = todo.pop_front() {
        if !seen.insert(id.clone()) {
            continue;
        }
        let Some(row) = runs::get_run(conn, &id)? else { continue };
        for child in runs::children(conn, &id)? {
            match child.detached {
                true if !roots.contains(&child.id) => plan.detached.push(child),
                _ => todo.push_back(child.id),
            }
        }
        plan.runs.push(row);
    }
    Ok(plan)
}

/// Ended runs older than `before` (ms; their end, else their creation),
/// in one of `states` when any is given, oldest first.
pub fn ended_before(conn: &Connection, before: i64, states: &[&str]) -> Result<Vec<String>, StoreError> {
    let mut sql = String::from(
        "SELECT id FROM runs WHERE state NOT IN ('pending', 'starting', 'running')
         AND COALESCE(ended_at, created_at) < ?1",
    );
    if !states.is_empty() {
        let marks: Vec<String> = (0..states.len()).map(|i| format!("?{}", i + 2)).collect();
        sql.push_str(&format!(" AND state IN ({})", marks.join(", ")));
    }
    sql.push_str(" ORDER BY id");
    let mut values: Vec<rusqlite::types::Value> = vec![before.into()];
    values.extend(states.iter().map(|s| rusqlite::types::Value::from(s.to_string())));
    let mut stmt = conn.prepare(&sql)?;
    let ids = stmt
        .query_map(params_from_iter(values), |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(ids)
}

/// Deletes the runs and what refers to them; their detached children
/// become roots.
pub fn remove(conn: &mut Connection, plan: &Plan) -> Result<(), StoreError> {
    let tx = conn.transaction()?;
    for child in &plan.detached {
        tx.execute(
            "UPDATE runs SET parent_run_id = NULL, root_run_id = id WHERE id = ?1",
            [&child.id],
        )?;
        runs::append_event(
            &tx,
            &child.id,
            "PARENT_REMOVED",
            &serde_json::json!({ "parent": child.parent_run_id }),
        )?;
    }
    // Unlinked first, so the order they go in never matters to the
    // parent_run_id key (the user may name a child before its parent).
    for run in &plan.runs {
        tx.execute("UPDATE runs SET parent_run_id = NULL WHERE id = ?1", [&run.id])?;
    }
    for run in &plan.runs {
        let id = run.id.as_str();
        for sql in [
            "DELETE FROM events WHERE run_id = ?1",
            "DELETE FROM prompts WHERE run_id = ?1",
            "DELETE FROM attempts WHERE run_id = ?1",
            "DELETE FROM subagents WHERE run_id = ?1",
            "DELETE FROM former_names WHERE run_id = ?1",
            "DELETE FROM mail WHERE to_run = ?1",
            // Its mail held on this host for the daemon that placed it.
            "DELETE FROM mail_outbox WHERE from_run = ?1",
            // A team keeps its other members; its leader gone, it has none.
            "DELETE FROM team_members WHERE run_id = ?1",
            "UPDATE teams SET leader_run = NULL WHERE leader_run = ?1",
            // Conversations are the harness's: they stay, held by no run.
            "UPDATE sessions SET run_id = NULL WHERE run_id = ?1",
            "UPDATE transcript_sources SET run_id = NULL WHERE run_id = ?1",
            "UPDATE transcript_sessions SET run_id = NULL WHERE run_id = ?1",
            "UPDATE transcript_usage SET run_id = NULL WHERE run_id = ?1",
            "UPDATE transcript_messages SET run_id = NULL WHERE run_id = ?1",
            "DELETE FROM runs WHERE id = ?1",
        ] {
            tx.execute(sql, [id])?;
        }
    }
    // A team none of whose runs is left is gone with them.
    tx.execute(
        "DELETE FROM teams WHERE id NOT IN (SELECT team_id FROM team_members)",
        [],
    )?;
    tx.commit()?;
    Ok(())
}

/// What a conversation's removal leaves: the runs that held it (their
/// records stay, each with `SESSION_REMOVED`) and its transcript files.
pub struct SessionGone {
    pub runs: Vec<String>,
    pub files: Vec<String>,
}

/// The runs and transcript files of a session, removing nothing.
pub fn session_parts(conn: &Connection, session: &str) -> Result<SessionGone, StoreError> {
    let mut stmt = conn.prepare("SELECT id FROM runs WHERE session_id = ?1 ORDER BY id")?;
    let runs = stmt.query_map([session], |r| r.get(0))?.collect::<Result<_, _>>()?;
    let mut stmt = conn.prepare(
        "SELECT transcript_path FROM sessions WHERE id = ?1 AND transcript_path IS NOT NULL
         UNION SELECT path FROM transcript_sources WHERE session_id = ?1",
    )?;
    let files = stmt.query_map([session], |r| r.get(0))?.collect::<Result<_, _>>()?;
    Ok(SessionGone { runs, files })
}

/// Removes a conversation's records and index from agents, in one
/// transaction; its runs keep theirs, marked.
pub fn remove_session(conn: &mut Connection, session: &str) -> Result<SessionGone, StoreError> {
    let tx = conn.transaction()?;
    let gone = session_parts(&tx, session)?;
    for sql in [
        "DELETE FROM transcript_messages WHERE session_id = ?1",
        "DELETE FROM transcript_usage WHERE session_id = ?1",
        "DELETE FROM transcript_sources WHERE session_id = ?1",
        "DELETE FROM transcript_sessions WHERE session_id = ?1",
        "DELETE FROM sessions WHERE id = ?1",
    ] {
        tx.execute(sql, [session])?;
    }
    for run in &gone.runs {
        runs::append_event(
            &tx,
            run,
            "SESSION_REMOVED",
            &serde_json::json!({ "session_id": session }),
        )?;
    }
    tx.commit()?;
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::RunState;

    fn insert(conn: &Connection, id: &str, parent: Option<&str>, detached: bool) {
        conn.execute(
            "INSERT INTO runs (id, name, harness, cwd, command, state, root_run_id, launch_id, created_at, rows, cols, parent_run_id, detached, ended_at)
             VALUES (?1, ?1, 'cmd', '/', '[]', 'succeeded', ?1, ?1, 1, 40, 120, ?2, ?3, 5)",
            rusqlite::params![id, parent, detached],
        )
        .unwrap();
        runs::append_event(conn, id, "RUN_CREATED", &serde_json::json!({})).unwrap();
    }

    #[test]
    fn a_parent_goes_with_its_owned_children_and_a_detached_child_stays_as_a_root() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        insert(&conn, "p", None, false);
        insert(&conn, "c", Some("p"), false);
        insert(&conn, "g", Some("c"), false);
        insert(&conn, "d", Some("p"), true);
        insert(&conn, "other", None, false);
        let plan = plan(&conn, &["p".into()]).unwrap();
        let ids: Vec<&str> = plan.runs.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["p", "c", "g"]);
        assert_eq!(plan.detached.len(), 1);
        remove(&mut conn, &plan).unwrap();
        for gone in ["p", "c", "g"] {
            assert!(runs::get_run(&conn, gone).unwrap().is_none());
        }
        let kept = runs::get_run(&conn, "d").unwrap().unwrap();
        assert_eq!((kept.parent_run_id, kept.root_run_id.as_str()), (None, "d"));
        assert!(runs::get_run(&conn, "other").unwrap().is_some());
        let events: i64 = conn
            .query_row("SELECT COUNT(*) FROM events WHERE run_id = 'p'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(events, 0);
        assert_eq!(ended_before(&conn, 10, &[]).unwrap(), ["d", "other"]);
        assert!(
            ended_before(&conn, 10, &[RunState::Failed.as_str()])
                .unwrap()
                .is_empty()
        );
        assert!(ended_before(&conn, 5, &[]).unwrap().is_empty());
    }
}
