//! Hosts and mirrored remote runs in SQLite. The `hosts` table is migration
//! 6 (`store/migrations.rs`); remote runs live in `runs` with `host` set to
//! the host's name and the remote daemon's run id.

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use crate::api::{RunRecord, RunState, StartParams};
use crate::store::runs::{self, Ending};
use crate::store::{StoreError, now_ms};

#[derive(Debug, Clone, PartialEq)]
pub struct HostRow {
    pub name: String,
    pub target: String,
    pub remote_bin: String,
    pub remote_home: Option<String>,
    pub created_at: i64,
}

pub fn insert_host(conn: &Connection, host: &HostRow) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "INSERT OR IGNORE INTO hosts (name, target, remote_bin, remote_home, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            host.name,
            host.target,
            host.remote_bin,
            host.remote_home,
            host.created_at
        ],
    )?;
    Ok(changed == 1)
}

pub fn get_host(conn: &Connection, name: &str) -> Result<Option<HostRow>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT name, target, remote_bin, remote_home, created_at FROM hosts WHERE name = ?1",
            [name],
            host_from_row,
        )
        .optional()?)
}

pub fn list_hosts(conn: &Connection) -> Result<Vec<HostRow>, StoreError> {
    let mut stmt = conn.prepare("SELECT name, target, remote_bin, remote_home, created_at FROM hosts ORDER BY name")?;
    let rows = stmt.query_map([], host_from_row)?.collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Points the host at another agents binary (`hosts install`).
pub fn set_remote_bin(conn: &Connection, name: &str, remote_bin: &str) -> Result<bool, StoreError> {
    Ok(conn.execute("UPDATE hosts SET remote_bin = ?2 WHERE name = ?1", [name, remote_bin])? == 1)
}

pub fn remove_host(conn: &Connection, name: &str) -> Result<bool, StoreError> {
    Ok(conn.execute("DELETE FROM hosts WHERE name = ?1", [name])? == 1)
}

fn host_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<HostRow> {
    Ok(HostRow {
        name: r.get(0)?,
        target: r.get(1)?,
        remote_bin: r.get(2)?,
        remote_home: r.get(3)?,
        created_at: r.get(4)?,
    })
}

/// Ids of the runs on `host` that have not ended.
pub fn live_runs_on(conn: &Connection, host: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare("SELECT id FROM runs WHERE host = ?1 AND state IN ('pending', 'starting', 'running') ORDER BY id")?;
    let ids = stmt.query_map([host], |r| r.get(0))?.collect::<Result<_, _>>()?;
    Ok(ids)
}

/// Every live run on any remote host: (id, host).
pub fn live_remote_runs(conn: &Connection) -> Result<Vec<(String, String)>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT id, host FROM runs WHERE host != 'local' AND state IN ('pending', 'starting', 'running') ORDER BY id",
    )?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// The sessions of mirrored remote runs that `reference` names (a full id
/// or a prefix; at most 3), each with its newest mirrored run and that
/// run's host. The remote daemon indexes them; here only the mirror's
/// `session_id` says where they live.
pub fn remote_sessions(conn: &Connection, reference: &str) -> Result<Vec<(String, String, String)>, StoreError> {
    if reference.is_empty() {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare(
        "SELECT r.session_id, r.id, r.host FROM runs r
         WHERE r.host != 'local' AND r.session_id IS NOT NULL AND (r.session_id = ?1 OR r.session_id LIKE ?1 || '%')
           AND r.created_at = (SELECT MAX(o.created_at) FROM runs o WHERE o.session_id = r.session_id AND o.host != 'local')
         GROUP BY r.session_id ORDER BY r.session_id LIMIT 3",
    )?;
    let rows = stmt
        .query_map([reference], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    // An exact id is never ambiguous with the longer ids it prefixes.
    if let Some(exact) = rows.iter().find(|(s, _, _)| s == reference) {
        return Ok(vec![exact.clone()]);
    }
    Ok(rows)
}

/// Whether this daemon holds a session (its own runs' conversations, or
/// a transcript indexed here) that `reference` names or prefixes.
pub fn local_session_matches(conn: &Connection, reference: &str) -> Result<bool, StoreError> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM sessions WHERE id = ?1 OR id LIKE ?1 || '%'
             UNION ALL SELECT 1 FROM transcript_sessions WHERE session_id = ?1 OR session_id LIKE ?1 || '%'
             LIMIT 1",
            [reference],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

fn ms(time: &Option<String>) -> Option<i64> {
    time.as_deref()
        .and_then(|t| humantime::parse_rfc3339(t).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
}

/// A name for the mirror: the remote one if it is free here, else the
/// remote name with the host appended, else with part of the id.
fn free_name(conn: &Connection, record: &RunRecord, host: &str) -> Result<String, StoreError> {
    let candidates = [
        record.name.clone(),
        format!("{}.{host}", record.name),
        format!(
            "{}.{host}.{}",
            record.name,
            &record.id[record.id.len().saturating_sub(6)..]
        ),
    ];
    for name in &candidates {
        if !runs::name_taken(conn, name)? {
            return Ok(name.clone());
        }
    }
    Ok(record.id.clone())
}

/// Records a run the remote daemon created, under the same id, before its
/// state is known to be final. `parent` is a local parent (the remote side
/// knows only remote ones). `args` are the harness arguments as given.
pub fn insert_mirror(
    conn: &mut Connection,
    record: &RunRecord,
    host: &str,
    parent: Option<&str>,
    root: Option<&str>,
    args: &[String],
) -> Result<(), StoreError> {
    let tx = conn.transaction()?;
    let name = free_name(&tx, record, host)?;
    let created = ms(&Some(record.created_at.clone())).unwrap_or_else(now_ms);
    // Inserted live; an ended remote run is finished below, with its event.
    let state = if record.state.is_live() {
        record.state
    } else {
        RunState::Starting
    };
    let parent = parent.map(str::to_string).or_else(|| record.parent_id.clone());
    tx.execute(
        "INSERT INTO runs (id, name, harness, host, cwd, command, state, status, parent_run_id, root_run_id,
                           detached, session_id, launch_id, pid, created_at, started_at, rows, cols,
                           timeout_secs, worktree, output_bytes, args)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, 0, ?21)",
        params![
            record.id,
            name,
            record.harness,
            host,
            record.cwd,
            serde_json::to_string(&record.command).unwrap_or_else(|_| "[]".into()),
            state.as_str(),
            record.status.as_str(),
            parent,
            root.map(str::to_string).unwrap_or_else(|| record.root_id.clone()),
            record.detached,
            record.session_id,
            // The remote launch id is the remote daemon's; ours correlates by run id.
            record.id,
            record.pid,
            created,
            ms(&record.started_at),
            record.rows,
            record.cols,
            record.timeout_secs.map(|t| t as i64),
            record.worktree,
            serde_json::to_string(args).unwrap_or_else(|_| "[]".into()),
        ],
    )?;
    runs::append_event(
        &tx,
        &record.id,
        "RUN_CREATED",
        &json!({ "state": state.as_str(), "harness": record.harness, "name": name, "host": host }),
    )?;
    tx.commit()?;
    // Blocked there before anything started: no output will follow.
    if record.state == RunState::Blocked {
        update_mirror(conn, record, 0, true)?;
    }
    Ok(())
}

/// The harness arguments of a mirror, as given here (a mirror first
/// recorded from its host's record has none).
pub fn set_args(conn: &Connection, id: &str, args: &[String]) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE runs SET args = ?2 WHERE id = ?1",
        params![id, serde_json::to_string(args).unwrap_or_else(|_| "[]".into())],
    )?;
    Ok(())
}

/// Brings a live mirror up to date with the remote record. With `may_end`
/// (its output is all here), an ended remote run ends the mirror with the
/// remote state, reason and exit. Returns whether the mirror is now ended.
pub fn update_mirror(
    conn: &mut Connection,
    record: &RunRecord,
    output_bytes: u64,
    may_end: bool,
) -> Result<bool, StoreError> {
    let Some(local) = runs::get_run(conn, &record.id)? else {
        return Ok(true);
    };
    if !local.state.is_live() {
        return Ok(true);
    }
    if !record.state.is_live() && may_end {
        let ending = Ending {
            state: record.state,
            exit_code: record.exit_code,
            signal: record.signal.clone(),
            reason: record.reason.clone(),
            output_bytes: Some(output_bytes),
            event_kind: match record.state {
                RunState::Succeeded => "RUN_FINISHED",
                RunState::Cancelled => "RUN_CANCELLED",
                _ => "RUN_ERROR",
            },
            evidence: json!({ "host": local.host, "remote": true }),
            ended_at: None,
        };
        runs::finish(conn, &record.id, &ending)?;
        return Ok(true);
    }
    let tx = conn.transaction()?;
    let started = tx.execute(
        "UPDATE runs SET state = 'running', started_at = ?2 WHERE id = ?1 AND state IN ('pending', 'starting') AND ?2 IS NOT NULL",
        params![record.id, ms(&record.started_at)],
    )?;
    if started == 1 {
        runs::append_event(
            &tx,
            &record.id,
            "RUN_STARTED",
            &json!({ "state": "running", "host": local.host, "pid": record.pid }),
        )?;
    }
    tx.execute(
        "UPDATE runs SET status = ?2, pid = ?3, session_id = ?4, rows = ?5, cols = ?6, output_bytes = MAX(output_bytes, ?7)
         WHERE id = ?1",
        params![
            record.id,
            record.status.as_str(),
            record.pid,
            record.session_id,
            record.rows,
            record.cols,
            output_bytes as i64,
        ],
    )?;
    tx.commit()?;
    Ok(false)
}

/// A run the host could not take, recorded here and ended `blocked` with
/// the reason (docs/design.md §4: before anything starts). A name given and
/// worn by a live run is an error (`Corrupt` carries the message); none given gets `harness-N`.
#[allow(clippy::too_many_arguments)]
pub fn insert_blocked(
    conn: &mut Connection,
    id: &str,
    params: &StartParams,
    host: &str,
    parent: Option<&str>,
    root: Option<&str>,
    reason: &str,
) -> Result<(), StoreError> {
    let name = match &params.name {
        Some(name) if crate::store::names::live_holder(conn, name)?.is_some() => {
            return Err(StoreError::Corrupt(format!("a live run is named '{name}' already")));
        }
        Some(name) => name.clone(),
        None => {
            let base: String = params
                .harness
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .take(24)
                .collect();
            let base = if base.is_empty() { "run".to_string() } else { base };
            let mut n = 1;
            while runs::name_taken(conn, &format!("{base}-{n}"))? {
                n += 1;
            }
            format!("{base}-{n}")
        }
    };
    let mut command = vec![params.harness.clone()];
    command.extend(params.args.iter().cloned());
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT INTO runs (id, name, harness, host, cwd, command, state, status, parent_run_id, root_run_id,
                           detached, launch_id, created_at, rows, cols, timeout_secs, output_bytes, args)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', 'unknown', ?7, ?8, ?9, ?1, ?10, ?11, ?12, ?13, 0, ?14)",
        params![
            id,
            name,
            params.harness,
            host,
            params.cwd,
            serde_json::to_string(&command).unwrap_or_else(|_| "[]".into()),
            parent,
            root.unwrap_or(id),
            params.detached,
            now_ms(),
            params.rows.unwrap_or(40),
            params.cols.unwrap_or(120),
            params.timeout_secs.map(|t| t as i64),
            serde_json::to_string(&params.args).unwrap_or_else(|_| "[]".into()),
        ],
    )?;
    runs::append_event(
        &tx,
        id,
        "RUN_CREATED",
        &json!({ "state": "pending", "harness": params.harness, "name": name, "host": host }),
    )?;
    tx.commit()?;
    let ending = Ending {
        state: RunState::Blocked,
        exit_code: None,
        signal: None,
        reason: Some(reason.to_string()),
        output_bytes: None,
        event_kind: "RUN_ERROR",
        evidence: json!({ "host": host }),
        ended_at: None,
    };
    runs::finish(conn, id, &ending)?;
    Ok(())
}

/// Ends a mirror whose remote side cannot tell us how it ended.
pub fn end_mirror(conn: &mut Connection, id: &str, state: RunState, reason: String) -> Result<(), StoreError> {
    let ending = Ending {
        state,
        exit_code: None,
        signal: None,
        reason: Some(reason),
        output_bytes: None,
        event_kind: "RUN_ERROR",
        evidence: json!({ "remote": true }),
        ended_at: None,
    };
    runs::finish(conn, id, &ending)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ActivityStatus;

    fn record(id: &str, name: &str, state: RunState) -> RunRecord {
        RunRecord {
            id: id.into(),
            name: name.into(),
            harness: "cmd".into(),
            host: "local".into(),
            cwd: "/srv".into(),
            command: vec!["/bin/sh".into()],
            state,
            status: ActivityStatus::Working,
            parent_id: None,
            root_id: id.into(),
            detached: false,
            session_id: None,
            pid: Some(42),
            exit_code: None,
            signal: None,
            reason: None,
            created_at: "2026-01-01T00:00:00.000Z".into(),
            started_at: None,
            ended_at: None,
            rows: 40,
            cols: 120,
            timeout_secs: None,
            worktree: None,
            output_bytes: 0,
            status_since: None,
            evidence: None,
            evidence_at: None,
            routine: None,
            scheduled_at: None,
            log_pruned_at: None,
            waiting: Vec::new(),
            former_names: Vec::new(),
        }
    }

    #[test]
    fn a_mirror_keeps_the_remote_id_and_ends_with_the_remote_state() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("a.db")).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(store.call(|c| {
            insert_host(
                c,
                &HostRow {
                    name: "gpu".into(),
                    target: "me@gpu".into(),
                    remote_bin: "agents".into(),
                    remote_home: None,
                    created_at: 1,
                },
            )?;
            assert!(get_host(c, "gpu")?.is_some());
            let mut first = record("01REMOTE", "cmd-1", RunState::Starting);
            insert_mirror(c, &first, "gpu", None, None, &[])?;
            // A name taken here gets the host appended.
            insert_mirror(
                c,
                &record("01OTHER", "cmd-1", RunState::Starting),
                "gpu",
                None,
                None,
                &[],
            )?;
            assert_eq!(runs::get_run(c, "01OTHER")?.unwrap().name, "cmd-1.gpu");
            assert_eq!(live_runs_on(c, "gpu")?.len(), 2);

            first.state = RunState::Running;
            first.started_at = Some("2026-01-01T00:00:01.000Z".into());
            assert!(!update_mirror(c, &first, 10, false)?);
            let row = runs::get_run(c, "01REMOTE")?.unwrap();
            assert_eq!(
                (row.state, row.host.as_str(), row.output_bytes),
                (RunState::Running, "gpu", 10)
            );

            first.state = RunState::Failed;
            first.exit_code = Some(3);
            first.reason = Some("exit code 3".into());
            assert!(!update_mirror(c, &first, 11, false)?, "not before its output is here");
            assert!(update_mirror(c, &first, 12, true)?);
            let row = runs::get_run(c, "01REMOTE")?.unwrap();
            assert_eq!((row.state, row.exit_code), (RunState::Failed, Some(3)));
            let kinds: Vec<String> = runs::events(c, "01REMOTE")?.into_iter().map(|e| e.kind).collect();
            assert_eq!(kinds, ["RUN_CREATED", "RUN_STARTED", "RUN_ERROR"]);
            Ok(())
        }))
        .unwrap();
    }

    #[test]
    fn a_remote_session_is_found_by_its_mirrors_newest_run() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("a.db")).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(store.call(|c| {
            let mirror = |c: &mut Connection, id: &str, session: &str, at: &str| {
                let mut r = record(id, id, RunState::Running);
                r.session_id = Some(session.into());
                r.created_at = at.into();
                insert_mirror(c, &r, "gpu", None, None, &[])
            };
            mirror(c, "01OLD", "abc-1", "2026-01-01T00:00:00.000Z")?;
            mirror(c, "01NEW", "abc-1", "2026-01-02T00:00:00.000Z")?;
            mirror(c, "01SIB", "abc-12", "2026-01-01T00:00:00.000Z")?;
            let found = remote_sessions(c, "abc-1")?;
            assert_eq!(found, [("abc-1".to_string(), "01NEW".to_string(), "gpu".to_string())]);
            assert_eq!(remote_sessions(c, "abc")?.len(), 2, "a prefix of two is ambiguous");
            assert!(remote_sessions(c, "zzz")?.is_empty());
            assert!(!local_session_matches(c, "abc")?, "mirrors hold no session here");
            Ok(())
        }))
        .unwrap();
    }
}
