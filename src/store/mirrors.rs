//! Mirrored remote runs: rows of `runs` with `host` set to the host's name
//! and the remote daemon's run id, kept up to date from the host's record.
//! They are inserted through the one `runs::insert_run`.

use rusqlite::{Connection, params};
use serde_json::json;

use super::runs::{self, Ending, NewRun, RunRow};
use super::{Store, StoreError, now_ms};
use crate::api::{RunRecord, RunState, StartParams};

/// Where a new mirror sits in the tree here: a parent only this daemon
/// knows (the remote side knows only remote ones), and its root.
#[derive(Debug, Clone, Default)]
pub struct Placed {
    pub parent: Option<String>,
    pub root: Option<String>,
}

/// `store.mirrors()`: the runs mirrored from other hosts.
pub struct Mirrors<'a>(&'a Store);

impl Store {
    pub fn mirrors(&self) -> Mirrors<'_> {
        Mirrors(self)
    }
}

impl Mirrors<'_> {
    /// Ids of the runs on `host` that have not ended.
    pub async fn live_on(&self, host: &str) -> Result<Vec<String>, StoreError> {
        let host = host.to_string();
        self.0.call(move |c| live_on(c, &host)).await
    }

    /// Every live run on any remote host: (id, host).
    pub async fn live(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.0
            .call(|c| {
                let mut stmt = c.prepare(
                    "SELECT id, host FROM runs WHERE host != 'local' AND state IN ('pending', 'starting', 'running') ORDER BY id",
                )?;
                let rows = stmt
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<_, _>>()?;
                Ok(rows)
            })
            .await
    }

    /// A run the host's daemon just started, recorded here — or, when the
    /// parent's mirror learnt of it first (`CHILD_STARTED` there), given
    /// the harness arguments as given here, which only this side knows.
    pub async fn started(
        &self,
        record: RunRecord,
        host: &str,
        at: Placed,
        args: Vec<String>,
    ) -> Result<(), StoreError> {
        let host = host.to_string();
        self.0
            .call(move |c| {
                if runs::get_run(c, &record.id)?.is_some() {
                    return set_args(c, &record.id, &args);
                }
                insert(c, &record, &host, &at, &args)
            })
            .await
    }

    /// A child a mirror started on its host, recorded here unless it is
    /// already; answers whether this call recorded it.
    pub async fn child_started(&self, record: RunRecord, host: &str, root: &str) -> Result<bool, StoreError> {
        let (host, at) = (
            host.to_string(),
            Placed {
                parent: None,
                root: Some(root.to_string()),
            },
        );
        self.0
            .call(move |c| {
                if runs::get_run(c, &record.id)?.is_some() {
                    return Ok(false);
                }
                insert(c, &record, &host, &at, &[])?;
                Ok(true)
            })
            .await
    }

    /// Of `ids`, those no run here has.
    pub async fn missing(&self, ids: Vec<String>) -> Result<Vec<String>, StoreError> {
        self.0
            .call(move |c| {
                let mut missing = Vec::new();
                for id in ids {
                    if runs::get_run(c, &id)?.is_none() {
                        missing.push(id);
                    }
                }
                Ok(missing)
            })
            .await
    }

    /// Brings a live mirror up to date with the remote record. With
    /// `may_end` (its output is all here), an ended remote run ends the
    /// mirror with the remote state, reason and exit. Returns whether the
    /// mirror is now ended.
    pub async fn update(&self, record: RunRecord, output_bytes: u64, may_end: bool) -> Result<bool, StoreError> {
        self.0.call(move |c| update(c, &record, output_bytes, may_end)).await
    }

    /// Ends a mirror whose remote side cannot tell us how it ended.
    pub async fn end(&self, id: &str, state: RunState, reason: String) -> Result<(), StoreError> {
        let id = id.to_string();
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
        self.0.call(move |c| runs::finish(c, &id, &ending).map(|_| ())).await
    }

    /// A run the host could not take, recorded here and ended `blocked`
    /// with the reason (docs/design.md §4: before anything starts). A name
    /// given and worn by a live run is an error (`Corrupt` carries the
    /// message); none given gets `harness-N`.
    pub async fn blocked(
        &self,
        id: &str,
        params: StartParams,
        host: &str,
        at: Placed,
        reason: String,
    ) -> Result<(), StoreError> {
        let (id, host) = (id.to_string(), host.to_string());
        self.0
            .call(move |c| insert_blocked(c, &id, &params, &host, &at, reason))
            .await
    }

    /// Ended mirrors whose local parent has no `CHILD_ENDED` of them,
    /// oldest first, at most `limit`. Only ends a run reached: a mirror
    /// `lost` with its link may still come back, and one blocked or
    /// skipped never started.
    pub async fn untold_ends(&self, limit: usize) -> Result<Vec<String>, StoreError> {
        self.0
            .call(move |c| {
                let mut stmt = c.prepare(
                    "SELECT r.id FROM runs r JOIN runs p ON p.id = r.parent_run_id \
                     WHERE r.host != 'local' AND p.host = 'local' \
                     AND r.state IN ('succeeded', 'failed', 'cancelled', 'timed_out', 'interrupted') \
                     AND NOT EXISTS (SELECT 1 FROM events e WHERE e.run_id = p.id AND e.kind = 'CHILD_ENDED' \
                                     AND json_extract(e.data, '$.child') = r.id) \
                     ORDER BY r.created_at LIMIT ?1",
                )?;
                let ids = stmt
                    .query_map([limit as i64], |r| r.get::<_, String>(0))?
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(ids)
            })
            .await
    }

    /// The sessions of mirrored remote runs that `reference` names (a full
    /// id or a prefix; at most 3), each with its newest mirrored run and
    /// that run's host. The remote daemon indexes them; here only the
    /// mirror's `session_id` says where they live.
    pub async fn sessions(&self, reference: &str) -> Result<Vec<(String, String, String)>, StoreError> {
        let reference = reference.to_string();
        self.0.call(move |c| sessions(c, &reference)).await
    }
}

pub(super) fn live_on(conn: &Connection, host: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare("SELECT id FROM runs WHERE host = ?1 AND state IN ('pending', 'starting', 'running') ORDER BY id")?;
    let ids = stmt.query_map([host], |r| r.get(0))?.collect::<Result<_, _>>()?;
    Ok(ids)
}

fn sessions(conn: &Connection, reference: &str) -> Result<Vec<(String, String, String)>, StoreError> {
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

fn ms(time: &Option<String>) -> Option<i64> {
    time.as_deref()
        .and_then(|t| humantime::parse_rfc3339(t).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
}

/// A name for the mirror: the remote one if it is free here, else the
/// remote name with the host appended, else with part of the id. A name a
/// local start holds is not free: its row is about to wear it.
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
        if !runs::name_taken(conn, name)? && !super::names::is_held(name) {
            return Ok(name.clone());
        }
    }
    Ok(record.id.clone())
}

/// Records a run the remote daemon created, under the same id, before its
/// state is known to be final. `args` are the harness arguments as given.
fn insert(
    conn: &mut Connection,
    record: &RunRecord,
    host: &str,
    at: &Placed,
    args: &[String],
) -> Result<(), StoreError> {
    let tx = conn.transaction()?;
    let name = free_name(&tx, record, host)?;
    // Inserted live; an ended remote run is finished below, with its event.
    let state = if record.state.is_live() {
        record.state
    } else {
        RunState::Starting
    };
    let row = RunRow {
        state,
        status: record.status,
        parent_run_id: at.parent.clone().or_else(|| record.parent_id.clone()),
        root_run_id: at.root.clone().unwrap_or_else(|| record.root_id.clone()),
        detached: record.detached,
        session_id: record.session_id.clone(),
        // The remote launch id is the remote daemon's; ours correlates by run id.
        launch_id: record.id.clone(),
        pid: record.pid,
        created_at: ms(&Some(record.created_at.clone())).unwrap_or_else(now_ms),
        started_at: ms(&record.started_at),
        rows: record.rows,
        cols: record.cols,
        timeout_secs: record.timeout_secs,
        worktree: record.worktree.clone(),
        // Boxed there, by the host: said here as there.
        sandbox: record
            .sandbox
            .as_deref()
            .and_then(|s| crate::values::sandbox::Sandbox::parse(s).ok()),
        ..RunRow::new(NewRun {
            id: record.id.clone(),
            name: name.clone(),
            harness: record.harness.clone(),
            host: host.to_string(),
            cwd: record.cwd.clone(),
            command: record.command.clone(),
            args: args.to_vec(),
        })
    };
    runs::insert_run(&tx, &row)?;
    runs::append_event(
        &tx,
        &record.id,
        "RUN_CREATED",
        &json!({ "state": state.as_str(), "harness": record.harness, "name": name, "host": host }),
    )?;
    tx.commit()?;
    // Blocked there before anything started: no output will follow.
    if record.state == RunState::Blocked {
        update(conn, record, 0, true)?;
    }
    Ok(())
}

fn set_args(conn: &Connection, id: &str, args: &[String]) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE runs SET args = ?2 WHERE id = ?1",
        params![id, serde_json::to_string(args).unwrap_or_else(|_| "[]".into())],
    )?;
    Ok(())
}

fn update(conn: &mut Connection, record: &RunRecord, output_bytes: u64, may_end: bool) -> Result<bool, StoreError> {
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

fn insert_blocked(
    conn: &mut Connection,
    id: &str,
    params: &StartParams,
    host: &str,
    at: &Placed,
    reason: String,
) -> Result<(), StoreError> {
    let name = match &params.spec.name {
        Some(name) if super::names::live_holder(conn, name)?.is_some() => {
            return Err(StoreError::Corrupt(format!("a live run is named '{name}' already")));
        }
        Some(name) => name.clone(),
        None => {
            let base: String = params
                .spec
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
    let mut command = vec![params.spec.harness.clone()];
    command.extend(params.spec.args.iter().cloned());
    let row = RunRow {
        parent_run_id: at.parent.clone(),
        root_run_id: at.root.clone().unwrap_or_else(|| id.to_string()),
        detached: params.spec.detached,
        launch_id: id.to_string(),
        rows: params.rows.unwrap_or(40),
        cols: params.cols.unwrap_or(120),
        timeout_secs: params.spec.timeout_secs,
        ..RunRow::new(NewRun {
            id: id.to_string(),
            name: name.clone(),
            harness: params.spec.harness.clone(),
            host: host.to_string(),
            cwd: params.spec.cwd.clone(),
            command,
            args: params.spec.args.clone(),
        })
    };
    let tx = conn.transaction()?;
    runs::insert_run(&tx, &row)?;
    runs::append_event(
        &tx,
        id,
        "RUN_CREATED",
        &json!({ "state": "pending", "harness": params.spec.harness, "name": name, "host": host }),
    )?;
    tx.commit()?;
    let ending = Ending {
        state: RunState::Blocked,
        exit_code: None,
        signal: None,
        reason: Some(reason),
        output_bytes: None,
        event_kind: "RUN_ERROR",
        evidence: json!({ "host": host }),
        ended_at: None,
    };
    runs::finish(conn, id, &ending)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::ActivityStatus;
    use crate::store::hosts::HostRow;

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
            sandbox: None,
        }
    }

    fn store() -> (tempfile::TempDir, Store, tokio::runtime::Runtime) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("a.db")).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        (dir, store, rt)
    }

    #[test]
    fn a_mirror_keeps_the_remote_id_and_ends_with_the_remote_state() {
        let (_dir, store, rt) = store();
        rt.block_on(async {
            let gpu = HostRow {
                name: "gpu".into(),
                target: "me@gpu".into(),
                remote_bin: "agents".into(),
                remote_home: None,
                created_at: 1,
                command: None,
            };
            assert!(store.hosts().add(gpu).await?);
            assert!(store.hosts().get("gpu").await?.is_some());
            let mut first = record("01REMOTE", "cmd-1", RunState::Starting);
            let mirrors = store.mirrors();
            mirrors
                .started(first.clone(), "gpu", Placed::default(), Vec::new())
                .await?;
            // A name taken here gets the host appended.
            let other = record("01OTHER", "cmd-1", RunState::Starting);
            mirrors.started(other, "gpu", Placed::default(), Vec::new()).await?;
            assert_eq!(store.runs().get("01OTHER").await?.unwrap().name, "cmd-1.gpu");
            // So does a name a local start holds, its row not yet stored.
            let held = store.names().hold_given("cmd-9").await?.expect("free");
            let racing = record("01RACING", "cmd-9", RunState::Starting);
            mirrors.started(racing, "gpu", Placed::default(), Vec::new()).await?;
            assert_eq!(store.runs().get("01RACING").await?.unwrap().name, "cmd-9.gpu");
            drop(held);
            assert_eq!(mirrors.live_on("gpu").await?.len(), 3);

            first.state = RunState::Running;
            first.started_at = Some("2026-01-01T00:00:01.000Z".into());
            assert!(!mirrors.update(first.clone(), 10, false).await?);
            let row = store.runs().get("01REMOTE").await?.unwrap();
            assert_eq!(
                (row.state, row.host.as_str(), row.output_bytes),
                (RunState::Running, "gpu", 10)
            );

            first.state = RunState::Failed;
            first.exit_code = Some(3);
            first.reason = Some("exit code 3".into());
            assert!(
                !mirrors.update(first.clone(), 11, false).await?,
                "not before its output is here"
            );
            assert!(mirrors.update(first, 12, true).await?);
            let row = store.runs().get("01REMOTE").await?.unwrap();
            assert_eq!((row.state, row.exit_code), (RunState::Failed, Some(3)));
            let kinds: Vec<String> = store
                .runs()
                .events("01REMOTE")
                .await?
                .into_iter()
                .map(|e| e.kind)
                .collect();
            assert_eq!(kinds, ["RUN_CREATED", "RUN_STARTED", "RUN_ERROR"]);
            Ok::<_, StoreError>(())
        })
        .unwrap();
    }

    #[test]
    fn a_remote_session_is_found_by_its_mirrors_newest_run() {
        let (_dir, store, rt) = store();
        rt.block_on(async {
            for (id, session, at) in [
                ("01OLD", "abc-1", "2026-01-01T00:00:00.000Z"),
                ("01NEW", "abc-1", "2026-01-02T00:00:00.000Z"),
                ("01SIB", "abc-12", "2026-01-01T00:00:00.000Z"),
            ] {
                let mut r = record(id, id, RunState::Running);
                r.session_id = Some(session.into());
                r.created_at = at.into();
                store.mirrors().started(r, "gpu", Placed::default(), Vec::new()).await?;
            }
            let found = store.mirrors().sessions("abc-1").await?;
            assert_eq!(found, [("abc-1".to_string(), "01NEW".to_string(), "gpu".to_string())]);
            assert_eq!(
                store.mirrors().sessions("abc").await?.len(),
                2,
                "a prefix of two is ambiguous"
            );
            assert!(store.mirrors().sessions("zzz").await?.is_empty());
            assert!(!store.sessions().matches("abc").await?, "mirrors hold no session here");
            Ok::<_, StoreError>(())
        })
        .unwrap();
    }

    #[test]
    fn a_blocked_run_and_a_mirror_are_rows_like_any_other() {
        let (_dir, store, rt) = store();
        rt.block_on(async {
            let params = StartParams {
                spec: crate::api::RunSpec {
                    harness: "claude".into(),
                    cwd: "/w".into(),
                    args: vec!["-p".into()],
                    ..crate::api::RunSpec::default()
                },
                ..StartParams::default()
            };
            let at = Placed {
                parent: None,
                root: None,
            };
            store
                .mirrors()
                .blocked("01BLOCKED", params, "gpu", at, "no route".into())
                .await?;
            let row = store.runs().get("01BLOCKED").await?.unwrap();
            assert_eq!(
                (
                    row.name.as_str(),
                    row.state,
                    row.launch_id.as_str(),
                    row.root_run_id.as_str()
                ),
                ("claude-1", RunState::Blocked, "01BLOCKED", "01BLOCKED")
            );
            assert_eq!(
                (row.command, row.args, row.rows, row.cols),
                (vec!["claude".to_string(), "-p".into()], vec!["-p".to_string()], 40, 120)
            );
            assert_eq!(row.reason.as_deref(), Some("no route"));
            Ok::<_, StoreError>(())
        })
        .unwrap();
    }
}
