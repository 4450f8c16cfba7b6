//! Run records, their events and their prompt queue.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value;

use super::{StoreError, format_ms, now_ms};
use crate::api::{ActivityStatus, Event, RunRecord, RunState};

/// A run row with the fields only the engine sees (process identity).
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub id: String,
    pub name: String,
    pub harness: String,
    pub host: String,
    pub cwd: String,
    pub command: Vec<String>,
    pub state: RunState,
    pub status: ActivityStatus,
    pub parent_run_id: Option<String>,
    pub root_run_id: String,
    pub detached: bool,
    pub session_id: Option<String>,
    pub launch_id: String,
    pub pid: Option<i64>,
    pub pgid: Option<i64>,
    pub proc_start: Option<i64>,
    pub boot_id: Option<String>,
    pub supervisor_pid: Option<i64>,
    pub supervisor_start: Option<i64>,
    pub exit_code: Option<i64>,
    pub signal: Option<String>,
    pub reason: Option<String>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub rows: u16,
    pub cols: u16,
    pub timeout_secs: Option<u64>,
    pub worktree: Option<String>,
    pub output_bytes: u64,
    /// The harness arguments as the user gave them.
    pub args: Vec<String>,
    /// The routine that started this run (or recorded this skipped fire).
    pub routine: Option<String>,
    /// The time that routine's fire was scheduled for (ms).
    pub scheduled_at: Option<i64>,
    /// When retention pruned its output log (ms).
    pub log_pruned_at: Option<i64>,
    /// How it is boxed (`--sandbox`), if it is.
    pub sandbox: Option<crate::values::sandbox::Sandbox>,
    /// The names it wore before its current one, oldest first
    /// (`former_names`: each still finds it, `store::names`).
    pub former_names: Vec<String>,
}

fn identity(pid: i64, start: i64, boot: &str) -> Option<crate::pty::Identity> {
    Some(crate::pty::Identity {
        pid: i32::try_from(pid).ok()?,
        start_ticks: u64::try_from(start).ok()?,
        boot_id: boot.to_string(),
    })
}

const COLUMNS: &str = "id, name, harness, host, cwd, command, state, status, parent_run_id, root_run_id, detached, \
     session_id, launch_id, pid, pgid, proc_start, boot_id, supervisor_pid, supervisor_start, exit_code, signal, \
     reason, created_at, started_at, ended_at, rows, cols, timeout_secs, worktree, output_bytes, args, routine, \
     scheduled_at, log_pruned_at, sandbox";

/// A live run's state, as `runs_live` (migration 17) indexes it.
const LIVE: &str = "state IN ('pending', 'starting', 'running')";

/// What a new run is, before anything else is known of it.
pub struct NewRun {
    pub id: String,
    pub name: String,
    pub harness: String,
    pub host: String,
    pub cwd: String,
    pub command: Vec<String>,
    pub args: Vec<String>,
}

impl RunRow {
    /// The harness process as recorded, once it was spawned.
    pub fn harness_identity(&self) -> Option<crate::pty::Identity> {
        identity(self.pid?, self.proc_start?, self.boot_id.as_ref()?)
    }

    /// The supervisor process as recorded (on its harness's boot).
    pub fn supervisor_identity(&self) -> Option<crate::pty::Identity> {
        identity(self.supervisor_pid?, self.supervisor_start?, self.boot_id.as_ref()?)
    }

    /// A run just created: `pending`, its own root, created now, 120×40,
    /// a launch id of its own; nothing started.
    pub fn new(run: NewRun) -> RunRow {
        RunRow {
            root_run_id: run.id.clone(),
            id: run.id,
            name: run.name,
            harness: run.harness,
            host: run.host,
            cwd: run.cwd,
            command: run.command,
            state: RunState::Pending,
            status: ActivityStatus::Unknown,
            parent_run_id: None,
            detached: false,
            session_id: None,
            launch_id: ulid::Ulid::new().to_string(),
            pid: None,
            pgid: None,
            proc_start: None,
            boot_id: None,
            supervisor_pid: None,
            supervisor_start: None,
            exit_code: None,
            signal: None,
            reason: None,
            created_at: now_ms(),
            started_at: None,
            ended_at: None,
            rows: 40,
            cols: 120,
            timeout_secs: None,
            worktree: None,
            output_bytes: 0,
            args: run.args,
            routine: None,
            scheduled_at: None,
            log_pruned_at: None,
            sandbox: None,
            former_names: Vec::new(),
        }
    }

    fn from_row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
        let command: String = r.get(5)?;
        let state: String = r.get(6)?;
        let status: String = r.get(7)?;
        Ok(RunRow {
            id: r.get(0)?,
            name: r.get(1)?,
            harness: r.get(2)?,
            host: r.get(3)?,
            cwd: r.get(4)?,
            command: serde_json::from_str(&command).unwrap_or_default(),
            // An unknown state string can only come from a newer binary, which
            // the schema version check keeps out; treat it as unverifiable.
            state: RunState::parse(&state).unwrap_or(RunState::Lost),
            status: ActivityStatus::parse(&status),
            parent_run_id: r.get(8)?,
            root_run_id: r.get(9)?,
            detached: r.get(10)?,
            session_id: r.get(11)?,
            launch_id: r.get(12)?,
            pid: r.get(13)?,
            pgid: r.get(14)?,
            proc_start: r.get(15)?,
            boot_id: r.get(16)?,
            supervisor_pid: r.get(17)?,
            supervisor_start: r.get(18)?,
            exit_code: r.get(19)?,
            signal: r.get(20)?,
            reason: r.get(21)?,
            created_at: r.get(22)?,
            started_at: r.get(23)?,
            ended_at: r.get(24)?,
            rows: r.get(25)?,
            cols: r.get(26)?,
            timeout_secs: r.get::<_, Option<i64>>(27)?.map(|t| t as u64),
            worktree: r.get(28)?,
            output_bytes: r.get::<_, i64>(29)? as u64,
            args: serde_json::from_str(&r.get::<_, String>(30)?).unwrap_or_default(),
            routine: r.get(31)?,
            scheduled_at: r.get(32)?,
            log_pruned_at: r.get(33)?,
            sandbox: r
                .get::<_, Option<String>>(34)?
                .and_then(|s| crate::values::sandbox::Sandbox::parse(&s).ok()),
            // Read for all the rows at once (see `with_former`).
            former_names: Vec::new(),
        })
    }

    pub fn to_record(&self) -> RunRecord {
        self.clone().into_record()
    }

    /// [`RunRow::to_record`], its strings moved, not copied (a list of
    /// thousands).
    pub fn into_record(self) -> RunRecord {
        RunRecord {
            id: self.id,
            name: self.name,
            harness: self.harness,
            host: self.host,
            cwd: self.cwd,
            command: self.command,
            state: self.state,
            status: if self.state.is_live() {
                self.status
            } else {
                ActivityStatus::Unknown
            },
            parent_id: self.parent_run_id,
            root_id: self.root_run_id,
            detached: self.detached,
            session_id: self.session_id,
            pid: self.pid,
            exit_code: self.exit_code,
            signal: self.signal,
            reason: self.reason,
            created_at: format_ms(self.created_at),
            started_at: self.started_at.map(format_ms),
            ended_at: self.ended_at.map(format_ms),
            rows: self.rows,
            cols: self.cols,
            timeout_secs: self.timeout_secs,
            worktree: self.worktree,
            output_bytes: self.output_bytes,
            status_since: None,
            evidence: None,
            evidence_at: None,
            routine: self.routine,
            scheduled_at: self.scheduled_at.map(format_ms),
            log_pruned_at: self.log_pruned_at.map(format_ms),
            sandbox: self.sandbox.map(|s| s.as_str().to_string()),
            waiting: Vec::new(),
            former_names: self.former_names,
        }
    }
}

pub fn insert_run(conn: &Connection, run: &RunRow) -> Result<(), StoreError> {
    conn.execute(
        &format!("INSERT INTO runs ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35)"),
        params![
            run.id,
            run.name,
            run.harness,
            run.host,
            run.cwd,
            serde_json::to_string(&run.command).unwrap_or_else(|_| "[]".into()),
            run.state.as_str(),
            run.status.as_str(),
            run.parent_run_id,
            run.root_run_id,
            run.detached,
            run.session_id,
            run.launch_id,
            run.pid,
            run.pgid,
            run.proc_start,
            run.boot_id,
            run.supervisor_pid,
            run.supervisor_start,
            run.exit_code,
            run.signal,
            run.reason,
            run.created_at,
            run.started_at,
            run.ended_at,
            run.rows,
            run.cols,
            run.timeout_secs.map(|t| t as i64),
            run.worktree,
            run.output_bytes as i64,
            serde_json::to_string(&run.args).unwrap_or_else(|_| "[]".into()),
            run.routine,
            run.scheduled_at,
            run.log_pruned_at,
            run.sandbox.map(|s| s.as_str()),
        ],
    )?;
    Ok(())
}

pub fn get_run(conn: &Connection, id: &str) -> Result<Option<RunRow>, StoreError> {
    let row = conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM runs WHERE id = ?1"))?
        .query_row([id], RunRow::from_row)
        .optional()?;
    Ok(with_former(conn, row.into_iter().collect())?.pop())
}

/// The rows with their former names, oldest first: one read over the
/// rows' span of ids (a correlated subquery per row sorted each run's
/// names apart, the most of a long list's time).
fn with_former(conn: &Connection, mut rows: Vec<RunRow>) -> Result<Vec<RunRow>, StoreError> {
    let (Some(first), Some(last)) = (rows.iter().map(|r| &r.id).min(), rows.iter().map(|r| &r.id).max()) else {
        return Ok(rows);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT run_id, name FROM former_names WHERE run_id BETWEEN ?1 AND ?2 ORDER BY run_id, until, name",
    )?;
    let mut former: HashMap<String, Vec<String>> = HashMap::new();
    for named in stmt.query_map([first, last], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
        let (run, name) = named?;
        former.entry(run).or_default().push(name);
    }
    if !former.is_empty() {
        for row in &mut rows {
            row.former_names = former.remove(&row.id).unwrap_or_default();
        }
    }
    Ok(rows)
}

/// Whether a run wears `name` or wore it: a name the engine makes up
/// (`claude-2`, one from a prompt) is never one a user may still type for
/// another run.
pub fn name_taken(conn: &Connection, name: &str) -> Result<bool, StoreError> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM runs WHERE name = ?1 UNION ALL SELECT 1 FROM former_names WHERE name = ?1",
            [name],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// How a reference matched.
#[derive(Debug, PartialEq)]
pub enum Resolved {
    One(String),
    None,
    Many(Vec<String>),
}

/// Full id; then the run wearing that name (a live one, else the newest);
/// then the newest run that wore it (`store::names`); then a unique id
/// prefix (case-insensitive).
pub fn resolve(conn: &Connection, reference: &str) -> Result<Resolved, StoreError> {
    if reference.is_empty() {
        return Ok(Resolved::None);
    }
    let by_name = [
        "SELECT id FROM runs WHERE id = ?1 OR name = ?1
         ORDER BY id = ?1 DESC, state IN ('pending', 'starting', 'running') DESC, id DESC LIMIT 1",
        "SELECT run_id FROM former_names WHERE name = ?1 ORDER BY run_id DESC LIMIT 1",
    ];
    for sql in by_name {
        if let Some(id) = conn.query_row(sql, [reference], |r| r.get::<_, String>(0)).optional()? {
            return Ok(Resolved::One(id));
        }
    }
    let prefix = reference.to_ascii_uppercase();
    if !prefix.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Ok(Resolved::None);
    }
    // One more than is named, to tell there are more (see [`several`]).
    let mut stmt = conn.prepare(&format!(
        "SELECT id FROM runs WHERE id >= ?1 AND id < ?2 ORDER BY id LIMIT {}",
        NAMED_AT_MOST + 1
    ))?;
    let upper = format!("{prefix}\u{7f}");
    let ids: Vec<String> = stmt
        .query_map(params![prefix, upper], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(match ids.len() {
        0 => Resolved::None,
        1 => Resolved::One(ids.into_iter().next().unwrap_or_default()),
        _ => Resolved::Many(ids),
    })
}

/// The most runs an ambiguous reference's error names.
const NAMED_AT_MOST: usize = 6;

/// The runs a reference matched, as an error names them: the first
/// [`NAMED_AT_MOST`], and whether there are more.
pub fn several(ids: &[String]) -> String {
    let named = ids[..ids.len().min(NAMED_AT_MOST)].join(", ");
    match ids.len() > NAMED_AT_MOST {
        true => format!("{named} and more"),
        false => named,
    }
}

pub fn list_runs(conn: &Connection, all: bool) -> Result<Vec<RunRow>, StoreError> {
    let sql = if all {
        format!("SELECT {COLUMNS} FROM runs ORDER BY id")
    } else {
        format!("SELECT {COLUMNS} FROM runs WHERE {LIVE} ORDER BY id")
    };
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([], RunRow::from_row)?.collect::<Result<_, _>>()?;
    with_former(conn, rows)
}

/// Which runs a listing keeps beside its own rule: those in one of
/// `states` (none: any), on `host` (none: any).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Only {
    pub states: Vec<RunState>,
    pub host: Option<String>,
}

impl Only {
    fn keeps(&self, row: &RunRow) -> bool {
        (self.states.is_empty() || self.states.contains(&row.state))
            && self.host.as_ref().is_none_or(|h| *h == row.host)
    }

    /// `states` as the JSON array `json_each` reads; none when any will do.
    fn states_json(&self) -> Option<String> {
        let named: Vec<&str> = self.states.iter().map(|s| s.as_str()).collect();
        (!named.is_empty()).then(|| serde_json::to_string(&named).unwrap_or_else(|_| "[]".into()))
    }
}

/// One page of runs, newest first by id: `limit` runs older than `before`
/// (live ones only unless `all`) that `only` keeps. The first page (no
/// `before`) also carries every live run it keeps, however old, so a client
/// sees all of them at once. Returned in ascending id order.
pub fn list_page(
    conn: &Connection,
    all: bool,
    limit: usize,
    before: Option<&str>,
    only: &Only,
) -> Result<Vec<RunRow>, StoreError> {
    let mut rows = older(conn, all, limit, before, only)?;
    if before.is_none() {
        let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} FROM runs INDEXED BY runs_live WHERE {LIVE}"))?;
        let extra = stmt.query_map([], RunRow::from_row)?;
        let extra: Vec<RunRow> = extra
            .filter(|r| r.as_ref().map_or(true, |r| only.keeps(r)))
            .collect::<Result<_, _>>()?;
        let listed: std::collections::HashSet<String> = rows.iter().map(|r| r.id.clone()).collect();
        rows.extend(extra.into_iter().filter(|r| !listed.contains(&r.id)));
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    with_former(conn, rows)
}

/// The runs of `ids` that are stored and their parents, by id.
pub fn these_and_parents(conn: &Connection, ids: &[String]) -> Result<Vec<RunRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} FROM runs WHERE id = ?1"))?;
    let mut rows = Vec::with_capacity(ids.len());
    for id in ids {
        rows.extend(stmt.query_row([id], RunRow::from_row).optional()?);
    }
    let asked: std::collections::HashSet<&String> = ids.iter().collect();
    let parents: std::collections::BTreeSet<String> = rows.iter().filter_map(|r| r.parent_run_id.clone()).collect();
    for id in parents.iter().filter(|p| !asked.contains(p)) {
        rows.extend(stmt.query_row([id], RunRow::from_row).optional()?);
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    rows.dedup_by(|a, b| a.id == b.id);
    with_former(conn, rows)
}

/// How many live child runs each of `parents` has working (or stalled),
/// for those that have any: an index probe a parent.
pub fn working_children(conn: &Connection, parents: &[String]) -> Result<HashMap<String, usize>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT parent_run_id, COUNT(*) FROM runs INDEXED BY runs_by_parent WHERE parent_run_id IN (SELECT value FROM json_each(?1)) \
         AND {LIVE} AND status IN ('working', 'stalled') GROUP BY parent_run_id"
    ))?;
    let parents = serde_json::to_string(parents).unwrap_or_else(|_| "[]".into());
    let counted = stmt.query_map([parents], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as usize))
    })?;
    Ok(counted.collect::<Result<_, _>>()?)
}

/// At most `limit` runs older than `before` (live ones only unless `all`)
/// that `only` keeps, oldest first.
pub fn list_older(
    conn: &Connection,
    all: bool,
    limit: usize,
    before: Option<&str>,
    only: &Only,
) -> Result<Vec<RunRow>, StoreError> {
    let rows = older(conn, all, limit, before, only)?;
    with_former(conn, rows)
}

/// [`list_older`] without former names.
fn older(
    conn: &Connection,
    all: bool,
    limit: usize,
    before: Option<&str>,
    only: &Only,
) -> Result<Vec<RunRow>, StoreError> {
    // The live ones by their own index, in id order (the planner would
    // take `runs_by_state` and sort).
    let (from, filter) = if all {
        ("runs", "1")
    } else {
        ("runs INDEXED BY runs_live", LIVE)
    };
    let before = before.unwrap_or("\u{7f}");
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM {from} WHERE id < ?1 AND {filter} AND (?3 IS NULL OR host = ?3) \
         AND (?4 IS NULL OR state IN (SELECT value FROM json_each(?4))) ORDER BY id DESC LIMIT ?2"
    ))?;
    let mut rows: Vec<RunRow> = stmt
        .query_map(
            params![before, limit as i64, only.host, only.states_json()],
            RunRow::from_row,
        )?
        .collect::<Result<_, _>>()?;
    rows.reverse();
    Ok(rows)
}

pub fn children(conn: &Connection, parent: &str) -> Result<Vec<RunRow>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM runs WHERE parent_run_id = ?1 ORDER BY id"
    ))?;
    let rows = stmt.query_map([parent], RunRow::from_row)?.collect::<Result<_, _>>()?;
    with_former(conn, rows)
}

/// Appends an event with the next dense `seq` for the run.
pub fn append_event(conn: &Connection, run: &str, kind: &str, data: &Value) -> Result<i64, StoreError> {
    let seq: i64 = conn
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE run_id = ?1")?
        .query_row([run], |r| r.get(0))?;
    conn.prepare_cached("INSERT INTO events (run_id, seq, kind, at, data) VALUES (?1, ?2, ?3, ?4, ?5)")?
        .execute(params![run, seq, kind, now_ms(), data.to_string()])?;
    Ok(seq)
}

/// Whether the run has an event of `kind` whose data's `field` is `value`.
pub fn has_event_where(conn: &Connection, run: &str, kind: &str, field: &str, value: &str) -> Result<bool, StoreError> {
    let found: i64 = conn.query_row(
        "SELECT COUNT(*) FROM events WHERE run_id = ?1 AND kind = ?2 AND json_extract(data, '$.' || ?3) = ?4",
        params![run, kind, field, value],
        |r| r.get(0),
    )?;
    Ok(found > 0)
}

/// The data of the run's first event of `kind` (`WORKTREE_CREATED`).
pub fn first_event(conn: &Connection, run: &str, kind: &str) -> Result<Option<Value>, StoreError> {
    let data: Option<String> = conn
        .query_row(
            "SELECT data FROM events WHERE run_id = ?1 AND kind = ?2 ORDER BY seq LIMIT 1",
            params![run, kind],
            |r| r.get(0),
        )
        .optional()?;
    Ok(data.map(|d| serde_json::from_str(&d).unwrap_or(Value::Null)))
}

/// When the run's activity status last changed (its last `STATUS` event).
pub fn status_since(conn: &Connection, run: &str) -> Result<Option<i64>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT at FROM events WHERE run_id = ?1 AND kind = 'STATUS' ORDER BY seq DESC LIMIT 1",
            [run],
            |r| r.get(0),
        )
        .optional()?)
}

pub fn events(conn: &Connection, run: &str) -> Result<Vec<Event>, StoreError> {
    let mut stmt = conn.prepare("SELECT seq, kind, at, data FROM events WHERE run_id = ?1 ORDER BY seq")?;
    let rows = stmt
        .query_map([run], |r| {
            let data: String = r.get(3)?;
            Ok(Event {
                seq: r.get(0)?,
                kind: r.get(1)?,
                at: format_ms(r.get(2)?),
                data: serde_json::from_str(&data).unwrap_or(Value::Null),
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Moves a live run to `starting`, recording its supervisor's identity.
pub fn mark_starting(
    conn: &Connection,
    id: &str,
    supervisor_pid: i64,
    supervisor_start: i64,
) -> Result<(), StoreError> {
    let changed = conn.execute(
        "UPDATE runs SET state = 'starting', supervisor_pid = ?2, supervisor_start = ?3 WHERE id = ?1 AND state = 'pending'",
        params![id, supervisor_pid, supervisor_start],
    )?;
    if changed == 1 {
        append_event(
            conn,
            id,
            "SUPERVISOR_STARTED",
            &serde_json::json!({ "state": "starting", "supervisor_pid": supervisor_pid }),
        )?;
    }
    Ok(())
}

/// The harness is spawned: its identity, in one transaction with its event.
pub fn mark_running(conn: &mut Connection, id: &str, spawned: &Spawned) -> Result<(), StoreError> {
    let tx = conn.transaction()?;
    let changed = tx.execute(
        "UPDATE runs SET state = 'running', status = 'working', pid = ?2, pgid = ?3, proc_start = ?4, boot_id = ?5, started_at = ?6
         WHERE id = ?1 AND state IN ('pending', 'starting')",
        params![id, spawned.pid, spawned.pgid, spawned.proc_start, spawned.boot_id, spawned.started_at],
    )?;
    if changed == 1 {
        append_event(
            &tx,
            id,
            "RUN_STARTED",
            &serde_json::json!({ "state": "running", "pid": spawned.pid, "pgid": spawned.pgid }),
        )?;
    }
    tx.commit()?;
    Ok(())
}

#[derive(Debug, Clone)]
pub struct Spawned {
    pub pid: i64,
    pub pgid: i64,
    pub proc_start: i64,
    pub boot_id: String,
    pub started_at: i64,
}

/// How a run ended, with the evidence.
#[derive(Debug, Clone)]
pub struct Ending {
    pub state: RunState,
    pub exit_code: Option<i64>,
    pub signal: Option<String>,
    pub reason: Option<String>,
    pub output_bytes: Option<u64>,
    pub event_kind: &'static str,
    pub evidence: Value,
    /// When the run ended, if known better than "now" (an end written late).
    pub ended_at: Option<i64>,
}

/// Writes the terminal state and its event in one transaction. A run that
/// already ended is left as it is; returns whether this call ended it.
pub fn finish(conn: &mut Connection, id: &str, ending: &Ending) -> Result<bool, StoreError> {
    let tx = conn.transaction()?;
    let ended = finish_in(&tx, id, ending)?;
    tx.commit()?;
    Ok(ended)
}

/// `finish` inside the caller's transaction (with what else the end
/// writes: nothing of it may be stored without the rest).
pub fn finish_in(tx: &Connection, id: &str, ending: &Ending) -> Result<bool, StoreError> {
    let reason = ending
        .reason
        .as_deref()
        .map(|r| crate::text::bounded(r, crate::text::MAX_DIAGNOSTIC));
    let changed = tx.execute(
        "UPDATE runs SET state = ?2, exit_code = ?3, signal = ?4, reason = ?5, ended_at = MAX(?6, COALESCE(started_at, ?6)),
                output_bytes = COALESCE(?7, output_bytes), status = 'unknown'
         WHERE id = ?1 AND state IN ('pending', 'starting', 'running')",
        params![
            id,
            ending.state.as_str(),
            ending.exit_code,
            ending.signal,
            reason,
            ending.ended_at.unwrap_or_else(now_ms),
            ending.output_bytes.map(|b| b as i64),
        ],
    )?;
    if changed == 1 {
        // Nothing more will be typed into it.
        let why = format!("the run ended ({})", ending.state.as_str());
        let undelivered = super::prompts::undeliver(tx, id, &why)? + super::mail::undeliver_stored(tx, id, &why)?;
        let mut data = ending.evidence.clone();
        if let Value::Object(map) = &mut data {
            map.insert("state".into(), ending.state.as_str().into());
            if undelivered > 0 {
                map.insert("undelivered_prompts".into(), undelivered.into());
            }
            // Why, in the event too: the Events tab and `show` read it there.
            if let Some(reason) = &reason {
                map.entry("reason").or_insert_with(|| reason.clone().into());
            }
        }
        append_event(tx, id, ending.event_kind, &data)?;
    }
    Ok(changed == 1)
}

pub fn set_status(conn: &Connection, id: &str, status: ActivityStatus, why: &str) -> Result<(), StoreError> {
    let changed = conn
        .prepare_cached("UPDATE runs SET status = ?2 WHERE id = ?1 AND status != ?2 AND state = 'running'")?
        .execute(params![id, status.as_str()])?;
    if changed == 1 {
        append_event(
            conn,
            id,
            "STATUS",
            &serde_json::json!({ "status": status.as_str(), "why": why }),
        )?;
    }
    Ok(())
}

pub fn set_output_bytes(conn: &Connection, id: &str, bytes: u64) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE runs SET output_bytes = ?2 WHERE id = ?1")?
        .execute(params![id, bytes as i64])?;
    Ok(())
}

pub fn set_size(conn: &Connection, id: &str, rows: u16, cols: u16) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE runs SET rows = ?2, cols = ?3 WHERE id = ?1",
        params![id, rows, cols],
    )?;
    Ok(())
}

/// The run whose launch id is `launch_id` (a retried `runs.start`, issue
/// #5). No index: only starts that carry a caller's launch id look, and a
/// scan of 10 000 rows takes about a millisecond.
pub fn run_by_launch_id(conn: &Connection, launch_id: &str) -> Result<Option<RunRow>, StoreError> {
    let row = conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM runs WHERE launch_id = ?1 LIMIT 1"),
            [launch_id],
            RunRow::from_row,
        )
        .optional()?;
    Ok(with_former(conn, row.into_iter().collect())?.pop())
}

/// What became of the answer `answer_id` to a run's question: its
/// `ANSWERED` or `ANSWER_REFUSED` event, if there is one.
pub fn answer_outcome(conn: &Connection, run: &str, answer_id: &str) -> Result<Option<Event>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT seq, kind, at, data FROM events
             WHERE run_id = ?1 AND kind IN ('ANSWERED', 'ANSWER_REFUSED')
               AND json_extract(data, '$.answer_id') = ?2
             ORDER BY seq LIMIT 1",
            [run, answer_id],
            |r| {
                let data: String = r.get(3)?;
                Ok(Event {
                    seq: r.get(0)?,
                    kind: r.get(1)?,
                    at: format_ms(r.get(2)?),
                    data: serde_json::from_str(&data).unwrap_or(Value::Null),
                })
            },
        )
        .optional()?)
}

#[cfg(test)]
#[path = "runs_tests.rs"]
pub(super) mod tests;
