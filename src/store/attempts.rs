//! A run's attempts (docs/design.md §7, "which attempt actually ran is recorded"):
//! the first is written with the run (`harness::record_launch`); an account
//! fallback adds the next under the same run, and each attempt is closed
//! with its outcome and reason.

use rusqlite::{Connection, params};

use super::{Store, StoreError, format_ms, now_ms, runs};
use crate::api::AttemptRecord;

/// Closes the run's open attempt: `outcome` is a run state string.
pub fn close(conn: &Connection, run: &str, outcome: &str, reason: Option<&str>) -> Result<(), StoreError> {
    let reason = reason.map(|r| crate::text::bounded(r, crate::text::MAX_DIAGNOSTIC));
    conn.execute(
        "UPDATE attempts SET ended_at = ?2, outcome = ?3, reason = ?4
         WHERE run_id = ?1 AND ended_at IS NULL AND n = (SELECT MAX(n) FROM attempts WHERE run_id = ?1)",
        params![run, now_ms(), outcome, reason],
    )?;
    Ok(())
}

/// `store.attempts()`: a run's attempts under its profile's fallbacks,
/// each read and write on the owner thread.
pub struct Attempts<'a>(&'a Store);

impl Store {
    pub fn attempts(&self) -> Attempts<'_> {
        Attempts(self)
    }
}

/// The attempt that failed and the one after it (see [`Attempts::next`]).
pub struct Failover {
    pub run: String,
    /// Why the attempt failed.
    pub why: String,
    /// The profile that failed, the next attempt's, and its launch.
    pub from_profile: String,
    pub profile: String,
    pub harness: String,
    pub version: Option<String>,
    pub argv: Vec<String>,
    /// The session the next launch made known, and its transcript's path.
    pub session: Option<(String, Option<String>)>,
}

impl Attempts<'_> {
    /// The run's attempts so far and the variables it passes by name, read
    /// together.
    pub async fn tried_and_pass_env(&self, run: &str) -> Result<(Vec<Tried>, Vec<String>), StoreError> {
        let run = run.to_string();
        self.0
            .call(move |c| Ok((tried(c, &run)?, super::harness::harness_info(c, &run)?.pass_env)))
            .await
    }

    /// The attempt's supervisor started (see [`supervised`]); answers the
    /// run's row.
    pub async fn supervised(&self, run: &str, pid: i64, start: i64) -> Result<Option<runs::RunRow>, StoreError> {
        let run = run.to_string();
        self.0
            .call(move |c| {
                supervised(c, &run, pid, start)?;
                runs::get_run(c, &run)
            })
            .await
    }

    /// Closes the failed attempt, begins the next (see [`begin`]), records
    /// `ATTEMPT_FAILED` and the session the next launch made known;
    /// answers the next attempt's number.
    pub async fn next(&self, f: Failover) -> Result<i64, StoreError> {
        self.0
            .call(move |c| {
                let key = &f.run;
                close(c, key, crate::api::RunState::Failed.as_str(), Some(&f.why))?;
                let n = begin(
                    c,
                    key,
                    &Next {
                        harness: &f.harness,
                        version: f.version.as_deref(),
                        profile: &f.profile,
                        argv: &f.argv,
                    },
                )?;
                runs::append_event(
                    c,
                    key,
                    "ATTEMPT_FAILED",
                    &serde_json::json!({ "attempt": n - 1, "profile": f.from_profile, "reason": f.why, "next_profile": f.profile }),
                )?;
                if let Some((session, path)) = &f.session {
                    super::harness::learn_session(c, key, &f.harness, session, path.as_deref(), "launch")?;
                }
                Ok(n)
            })
            .await
    }
}

/// What the next attempt runs.
pub struct Next<'a> {
    pub harness: &'a str,
    pub version: Option<&'a str>,
    pub profile: &'a str,
    pub argv: &'a [String],
}

/// Adds the run's next attempt and points the run at it: its command, and
/// `starting` again until its supervisor is adopted. Returns its number.
pub fn begin(conn: &mut Connection, run: &str, next: &Next) -> Result<i64, StoreError> {
    let tx = conn.transaction()?;
    let n: i64 = tx.query_row(
        "SELECT COALESCE(MAX(n), 0) + 1 FROM attempts WHERE run_id = ?1",
        [run],
        |r| r.get(0),
    )?;
    tx.execute(
        "INSERT INTO attempts (run_id, n, harness, version, profile, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![run, n, next.harness, next.version, next.profile, now_ms()],
    )?;
    tx.execute(
        "UPDATE runs SET command = ?2, state = 'starting', pid = NULL, pgid = NULL, proc_start = NULL,
                exit_code = NULL, signal = NULL
         WHERE id = ?1 AND state IN ('starting', 'running')",
        params![run, serde_json::to_string(next.argv).unwrap_or_else(|_| "[]".into())],
    )?;
    tx.commit()?;
    Ok(n)
}

/// The new attempt's supervisor, once it is ready.
pub fn supervised(conn: &Connection, run: &str, pid: i64, start: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE runs SET supervisor_pid = ?2, supervisor_start = ?3 WHERE id = ?1",
        params![run, pid, start],
    )?;
    Ok(())
}

/// One attempt as account fallback reads it back after a daemon restart.
#[derive(Debug, Clone, PartialEq)]
pub struct Tried {
    pub profile: Option<String>,
    /// ms since the epoch.
    pub started_at: i64,
}

/// The run's attempts, first to last.
pub fn tried(conn: &Connection, run: &str) -> Result<Vec<Tried>, StoreError> {
    let mut stmt = conn.prepare("SELECT profile, started_at FROM attempts WHERE run_id = ?1 ORDER BY n")?;
    let rows = stmt
        .query_map([run], |r| {
            Ok(Tried {
                profile: r.get(0)?,
                started_at: r.get(1)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

pub fn list(conn: &Connection, run: &str) -> Result<Vec<AttemptRecord>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT n, harness, version, profile, started_at, ended_at, outcome, reason FROM attempts
         WHERE run_id = ?1 ORDER BY n",
    )?;
    let rows = stmt
        .query_map([run], |r| {
            Ok(AttemptRecord {
                n: r.get(0)?,
                harness: r.get(1)?,
                version: r.get(2)?,
                profile: r.get(3)?,
                started_at: format_ms(r.get(4)?),
                ended_at: r.get::<_, Option<i64>>(5)?.map(format_ms),
                outcome: r.get(6)?,
                reason: r.get(7)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}
