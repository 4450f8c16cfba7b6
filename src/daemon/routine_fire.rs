//! One fire of a routine (docs/design.md §13): under its overlap rule,
//! through the same start path as `agents run` (`start::start`, or the
//! host's through `remote::start`); a fire that cannot happen is a
//! `skipped` record with its reason and no session.

use std::sync::Arc;

use super::Daemon;
use crate::api::{ApiError, ErrorCode, RoutineFired, RunRecord, RunSpec, RunState, StartParams};
use crate::config::routines::{MAX_QUEUED, Overlap, Routine};
use crate::store::runs::{NewRun, RunRow};

/// Fires `routine` for its time `scheduled_at` (the scheduler's clock).
pub async fn fire(daemon: &Arc<Daemon>, name: &str, routine: &Routine, scheduled_at: i64) -> RoutineFired {
    let fired = |outcome: &str, run: Option<RunRecord>| RoutineFired {
        routine: name.to_string(),
        outcome: outcome.to_string(),
        run,
    };
    let decided = {
        // One decision at a time: two fires never both see the routine free.
        let _one = daemon.routines.deciding.lock().await;
        match busy_with(daemon, name).await {
            Some(previous) if routine.overlap != Overlap::Parallel => Err(previous),
            _ => {
                daemon.routines.starting_now(name, true);
                Ok(())
            }
        }
    };
    if let Err(previous) = decided {
        if routine.overlap == Overlap::Queue && daemon.routines.queue(daemon, name, scheduled_at).await < MAX_QUEUED {
            return fired("queued", None);
        }
        let why = match routine.overlap {
            Overlap::Queue => format!("{MAX_QUEUED} fires already wait behind the previous run {previous}"),
            _ => format!("the previous run {previous} still runs (overlap = skip)"),
        };
        return fired("skipped", skip(daemon, name, routine, scheduled_at, why).await);
    }
    let started = match prerequisites(routine) {
        Err(why) => Err(why),
        Ok(env) => start_any(daemon, params(name, routine, env))
            .await
            .map_err(|e| e.message),
    };
    let answer = match started {
        Ok(record) => {
            let (id, key) = (record.id.clone(), name.to_string());
            let marked = daemon.engine.store.routines().mark_fire(&id, &key, scheduled_at).await;
            if let Err(e) = marked {
                tracing::warn!("cannot mark run {} as routine {name}'s: {e}", record.id);
            }
            daemon.engine.changed(&record.id);
            fired(
                "started",
                crate::engine::start::record(&daemon.engine, &record.id).await.ok(),
            )
        }
        Err(why) => fired("skipped", skip(daemon, name, routine, scheduled_at, why).await),
    };
    daemon.routines.starting_now(name, false);
    answer
}

/// The routine's run that has not ended, or whose start is under way.
async fn busy_with(daemon: &Arc<Daemon>, name: &str) -> Option<String> {
    if daemon.routines.is_starting(name) {
        return Some(format!("of {name} (starting)"));
    }
    let key = name.to_string();
    daemon
        .engine
        .store
        .routines()
        .live_run(&key)
        .await
        .ok()
        .flatten()
        .map(|(_, run_name)| run_name)
}

/// What the routine needs before its run is asked for: each variable it
/// passes by name set here. The environment its run gets.
fn prerequisites(routine: &Routine) -> Result<Vec<(String, String)>, String> {
    let env: Vec<(String, String)> = std::env::vars().collect();
    if let Some(missing) = routine.env.iter().find(|n| !env.iter().any(|(k, _)| k == *n)) {
        return Err(format!(
            "variable {missing} is not set in the daemon's environment (routines pass variables by name)"
        ));
    }
    Ok(env)
}

fn params(name: &str, routine: &Routine, env: Vec<(String, String)>) -> StartParams {
    let spec = routine.spec();
    StartParams {
        spec: RunSpec {
            name: Some(name.to_string()),
            cwd: match spec.host {
                // The host maps `~/…` and an empty cwd to its home.
                Some(_) => spec.cwd,
                None => local_cwd(routine.cwd.as_deref()),
            },
            ..spec
        },
        env,
        launch_id: Some(ulid::Ulid::new().to_string()),
        ..Default::default()
    }
}

/// A routine's cwd here: `~` and relative paths from the home.
fn local_cwd(cwd: Option<&str>) -> String {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/".into());
    let home = home.trim_end_matches('/');
    match cwd.unwrap_or("~") {
        "~" | "" => home.to_string(),
        c if c.starts_with('/') => c.to_string(),
        c => format!("{home}/{}", c.strip_prefix("~/").unwrap_or(c)),
    }
}

/// Starts a run here or on its host, as `runs.start` would.
async fn start_any(daemon: &Arc<Daemon>, mut params: StartParams) -> Result<RunRecord, ApiError> {
    // Named after the routine, the first free of `NAME`, `NAME-2`, …
    if let Some(base) = params.spec.name.take() {
        let named = daemon
            .engine
            .store
            .names()
            .unique(&base)
            .await
            .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
        params.spec.name = Some(named);
    }
    match params.spec.host.is_some() {
        true => crate::remote::start(&daemon.here(), params).await,
        false => crate::engine::start::start(&daemon.engine, params).await,
    }
}

/// Records a fire that could not happen; the record, if it could be stored.
pub async fn skip(
    daemon: &Arc<Daemon>,
    name: &str,
    routine: &Routine,
    scheduled_at: i64,
    reason: String,
) -> Option<RunRecord> {
    let row = skipped_row(name, routine, scheduled_at, reason);
    match daemon.engine.store.routines().insert_skipped(row).await {
        Ok(row) => {
            daemon.engine.changed(&row.id);
            Some(row.to_record())
        }
        Err(e) => {
            tracing::warn!("cannot record routine {name}'s skipped fire: {e}");
            None
        }
    }
}

fn skipped_row(name: &str, routine: &Routine, scheduled_at: i64, reason: String) -> RunRow {
    let mut command = vec![routine.harness().to_string()];
    command.extend(routine.args.iter().cloned());
    let remote = routine.host.clone().filter(|h| h != "local");
    let row = RunRow::new(NewRun {
        id: ulid::Ulid::new().to_string(),
        name: name.to_string(),
        harness: routine.harness().to_string(),
        host: remote.clone().unwrap_or_else(|| "local".into()),
        cwd: match remote {
            Some(_) => routine.cwd.clone().unwrap_or_default(),
            None => local_cwd(routine.cwd.as_deref()),
        },
        command,
        args: routine.args.clone(),
    });
    RunRow {
        state: RunState::Skipped,
        detached: true,
        reason: Some(crate::text::bounded(&reason, 4096)),
        ended_at: Some(row.created_at),
        timeout_secs: routine.timeout.as_ref().and_then(|t| t.secs().ok()),
        routine: Some(name.to_string()),
        scheduled_at: Some(scheduled_at),
        ..row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_routines_cwd_is_taken_from_the_home() {
        let home = std::env::var("HOME").unwrap_or_else(|_| "/".into());
        let home = home.trim_end_matches('/');
        assert_eq!(local_cwd(None), home);
        assert_eq!(local_cwd(Some("~/src/app")), format!("{home}/src/app"));
        assert_eq!(local_cwd(Some("src/app")), format!("{home}/src/app"));
        assert_eq!(local_cwd(Some("/srv/app")), "/srv/app");
    }
}
