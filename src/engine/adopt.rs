//! Re-adoption after a daemon restart, and what happens when a supervisor
//! ends or disappears (docs/design.md §4 "Daemon restart").

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::Engine;
use super::live::{Link, LiveRun, monitor};
use super::run_link::RunLink;
use crate::api::{ErrorCode, RunState};
use crate::protocol::exit::ExitEvidence;
use crate::protocol::supervisor::{Hello, calls};
use crate::pty::Liveness;
use crate::store::runs::{self, Ending, RunRow};

/// How long a supervisor has to greet the daemon when adopted again: one
/// that accepts and never answers (stopped, stuck) holds up nobody else,
/// and is tried again while it lives ([`adopt_later`]).
const GREETING: Duration = Duration::from_secs(2);

/// Supervisors greeted at once after a restart.
const ADOPTING_AT_ONCE: usize = 32;

/// The longest wait between tries to adopt a supervisor that lives but
/// did not answer.
const RETRY_AT_MOST: Duration = Duration::from_secs(30);

/// Checks every run the database says is live, several at once, each
/// bounded: a restart waits on no one supervisor (issue #34).
pub async fn reconcile_all(engine: &Arc<Engine>) {
    use futures::StreamExt;
    let rows = match engine.store.runs().list(false).await {
        Ok(rows) => rows,
        Err(e) => {
            tracing::error!("cannot list live runs: {e}");
            return;
        }
    };
    // A remote run's supervisor is on its host: `remote::resume` follows it.
    let local = rows.into_iter().filter(|row| row.host == "local");
    futures::stream::iter(local)
        .for_each_concurrent(ADOPTING_AT_ONCE, |row| async move {
            // Before the run's exit can be heard: a run of a profile with
            // fallbacks may have failed on its account while we were away.
            super::fallback::recover(engine, &row).await;
            if let Err(e) = adopt_again(engine, &row).await {
                not_adopted(engine, row, e).await;
            }
        })
        .await;
}

/// [`adopt`], its greeting bounded by [`GREETING`].
async fn adopt_again(engine: &Arc<Engine>, row: &RunRow) -> anyhow::Result<Arc<LiveRun>> {
    let greeted = greet_bounded(&engine.paths.run_socket(&row.id)).await?;
    follow(engine, row, greeted).await
}

/// [`greet`], within [`GREETING`].
pub(super) async fn greet_bounded(socket: &std::path::Path) -> anyhow::Result<Greeted> {
    tokio::time::timeout(GREETING, greet(socket))
        .await
        .map_err(|_| anyhow::anyhow!("its supervisor did not answer within {}s", GREETING.as_secs()))?
}

/// A supervisor not adopted: tried again later while its process lives
/// (verified by its identity), else the run's end is decided without it.
async fn not_adopted(engine: &Arc<Engine>, row: RunRow, e: anyhow::Error) {
    if supervisor_lives(&row) {
        tracing::info!(
            "run {}: its supervisor lives but was not adopted ({e}); trying again",
            row.id
        );
        tokio::spawn(adopt_later(engine.clone(), row));
    } else {
        tracing::info!("run {} not re-adopted: {e}", row.id);
        supervisor_gone(engine, &row.id).await;
    }
}

/// Whether the run's recorded supervisor is still that process.
fn supervisor_lives(row: &RunRow) -> bool {
    row.supervisor_identity()
        .is_some_and(|supervisor| supervisor.liveness() == Liveness::Alive)
}

/// Tries to adopt a live supervisor again, backing off, until it answers,
/// its run ends, or it is verified gone.
async fn adopt_later(engine: Arc<Engine>, row: RunRow) {
    let mut wait = Duration::from_secs(1);
    loop {
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RETRY_AT_MOST);
        if engine.live(&row.id).is_some() {
            return;
        }
        let Ok(Some(now)) = engine.store.runs().get(&row.id).await else {
            return;
        };
        if !now.state.is_live() {
            return;
        }
        match adopt_again(&engine, &now).await {
            Ok(_) => {
                tracing::info!("run {}: its supervisor answered and is adopted again", row.id);
                return;
            }
            Err(_) if supervisor_lives(&now) => continue,
            Err(e) => {
                tracing::info!("run {} not re-adopted: {e}", row.id);
                supervisor_gone(&engine, &row.id).await;
                return;
            }
        }
    }
}

/// Connects to a run's supervisor, verifies it is the one recorded, and
/// starts following it. Used for new runs and after a restart.
pub async fn adopt(engine: &Arc<Engine>, row: &RunRow) -> anyhow::Result<Arc<LiveRun>> {
    let greeted = greet(&engine.paths.run_socket(&row.id)).await?;
    follow(engine, row, greeted).await
}

/// A supervisor's link and what it says of its run.
pub(super) type Greeted = (
    Link,
    tokio::sync::mpsc::Receiver<crate::protocol::supervisor::Note>,
    Hello,
);

/// Connects to a run's socket and asks its supervisor who it is.
async fn greet(socket: &std::path::Path) -> anyhow::Result<Greeted> {
    let (link, notes) = Link::connect(socket).await?;
    let hello: Hello = link.ask::<calls::Hello>(()).await?;
    Ok((link, notes, hello))
}

/// Verifies the supervisor that greeted is the one recorded, and follows it.
pub(super) async fn follow(
    engine: &Arc<Engine>,
    row: &RunRow,
    (link, notes, hello): Greeted,
) -> anyhow::Result<Arc<LiveRun>> {
    if hello.run != row.id {
        anyhow::bail!("the socket answered for another run");
    }
    if let (Some(sup), Some(pid), Some(start)) = (&hello.supervisor, row.supervisor_pid, row.supervisor_start)
        && (i64::from(sup.pid) != pid || sup.start_ticks as i64 != start)
    {
        anyhow::bail!("the supervisor's identity does not match the record");
    }
    let leader = hello.leader;
    if row.state != RunState::Running {
        let spawned = runs::Spawned {
            pid: leader.pid.into(),
            pgid: leader.pid.into(),
            proc_start: leader.start_ticks as i64,
            boot_id: leader.boot_id.clone(),
            // When the harness was spawned, not when this daemon heard:
            // a quick run may have ended before that.
            started_at: hello.started_ms.unwrap_or_else(crate::store::now_ms),
        };
        let id = row.id.clone();
        engine.store.runs().mark_running(&id, spawned).await?;
    }
    let live = Arc::new(LiveRun::new(row.id.clone(), RunLink::Local(link.clone()), hello.offset));
    // Only offsets past the hello's are noted from here on: what the log
    // held by then is stored too (a run that printed before it was adopted,
    // then nothing, said 0 bytes for good).
    if hello.offset > row.output_bytes {
        engine.output_bytes.note(engine, &row.id, hello.offset);
    }
    live.says_busy.store(hello.busy, std::sync::atomic::Ordering::Relaxed);
    let busy_max = hello.busy_max_ms.unwrap_or(crate::protocol::supervisor::PACE_MAX_MS);
    live.busy_max_ms.store(busy_max, std::sync::atomic::Ordering::Relaxed);
    *live.screen.lock() = hello.screen;
    // Queued prompts wait for a quiet moment. A harness that just started is
    // busy starting; one re-adopted after a daemon restart may be mid-turn,
    // and its log's mtime says when it last wrote (unknown: assume just now).
    let now = std::time::Instant::now();
    let last_output = if row.state == RunState::Running {
        std::fs::metadata(engine.paths.output_log(&row.id))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .and_then(|ago| now.checked_sub(ago))
            .unwrap_or(now)
    } else {
        now
    };
    *live.last_output.lock() = Some(last_output);
    // Adopted again: its status goes on from the stored one, since when it
    // was stored, so a question asked before the restart is the same
    // question after it (its request id and its `INTERRUPT` kept).
    let status = match row.state == RunState::Running {
        true => {
            let since = engine.store.runs().status_since(&row.id).await.ok().flatten();
            live.status_since_ms
                .store(since.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
            row.status
        }
        false => crate::api::ActivityStatus::Unknown,
    };
    engine.runs.lock().insert(row.id.clone(), live.clone());
    tokio::spawn(monitor(engine.clone(), live.clone(), notes));
    super::queue::spawn(engine.clone(), live.clone(), status);
    // Offsets and the exit arrive as notifications from here on.
    let still_ms = super::live::still_ms(&engine.config().engine);
    let watch = crate::protocol::supervisor::Watch {
        still_ms: (still_ms > 0).then_some(still_ms),
    };
    link.ask::<calls::Watch>(watch).await?;
    engine.changed(&row.id);
    Ok(live)
}

/// Writes a run's end from its supervisor's evidence, and tells its parent.
pub async fn record_exit(engine: &Arc<Engine>, id: &str, evidence: &ExitEvidence) -> Recorded {
    let (mut state, mut reason) = evidence.verdict();
    let key = id.to_string();
    let recorded = engine.store.runs().get(&key).await.ok().flatten();
    if let Some(other) = recorded.and_then(|r| evidence.not_of(r.pid, r.proc_start)) {
        state = RunState::Failed;
        reason = format!("{reason}; {other}");
    }
    let ending = Ending {
        state,
        exit_code: evidence.exit_code.map(i64::from),
        signal: evidence.signal.clone(),
        reason: Some(reason),
        output_bytes: Some(evidence.output_bytes),
        event_kind: event_kind(state),
        evidence: serde_json::to_value(evidence).unwrap_or(Value::Null),
        ended_at: Some(evidence.ended_at),
    };
    finish(engine, id, ending).await
}

fn event_kind(state: RunState) -> &'static str {
    match state {
        RunState::Succeeded => "RUN_FINISHED",
        RunState::Cancelled => "RUN_CANCELLED",
        _ => "RUN_ERROR",
    }
}

/// Whether a run's end is in the database yet.
pub enum Recorded {
    Now,
    /// The database refused it (a full disk): it is held in memory and
    /// written again; the task ends once it is stored.
    Later(tokio::task::JoinHandle<()>),
}

/// Ends a run (once) and tells its parent.
pub async fn finish(engine: &Arc<Engine>, id: &str, ending: Ending) -> Recorded {
    super::fallback::forget(id);
    let recorded = match store_end(engine, id, ending.clone()).await {
        Ok(()) => Recorded::Now,
        Err(e) => {
            tracing::error!("cannot record the end of run {id}: {e}; holding it in memory and trying again");
            Recorded::Later(super::ends::hold(engine, id, ending))
        }
    };
    engine.changed(id);
    engine.transcripts.release();
    recorded
}

/// Writes a run's end, its attempt's close and its parent's `CHILD_ENDED`
/// in one transaction: a write refused halfway (a full disk) leaves none
/// of them, so writing it again writes all.
pub(crate) async fn store_end(engine: &Arc<Engine>, id: &str, ending: Ending) -> Result<(), crate::store::StoreError> {
    let awaited = engine.awaited.lock().contains_key(id);
    // A result for the parent quotes the child's last words: read them first.
    let read_whole = !awaited && ending_child(engine, id).await && super::tasks::read_transcript(engine, id).await;
    // The parent, and whoever was told of the end (or of orphans).
    let told = engine.store.runs().end(id, ending, awaited, read_whole).await?;
    for run in told {
        super::tasks::wake(engine, &run);
        engine.changed(&run);
    }
    Ok(())
}

/// Why a run whose supervisor never started ended so: the daemon stopped
/// while it started, or while it was queued behind another run (a queue
/// lives in the daemon, with the environment it was asked with, which is
/// never stored).
async fn never_started(engine: &Arc<Engine>, row: &RunRow) -> String {
    let queued = engine.store.runs().first_event(&row.id, "QUEUED").await.ok().flatten();
    match queued {
        Some(_) => "the daemon stopped while the run was queued behind another; start it again".to_string(),
        None => "the daemon stopped before the run's supervisor started".to_string(),
    }
}

/// Whether `id` is a live run with a parent: only its end tells anyone.
async fn ending_child(engine: &Arc<Engine>, id: &str) -> bool {
    let key = id.to_string();
    let row = engine.store.runs().get(&key).await;
    row.ok()
        .flatten()
        .is_some_and(|r| r.state.is_live() && r.parent_run_id.is_some())
}

/// How long a harness gets to die of the hangup after its supervisor died,
/// before we call it still running.
const HANGUP_GRACE: Duration = Duration::from_millis(2000);

/// The supervisor is gone without telling us how the run ended.
pub async fn supervisor_gone(engine: &Arc<Engine>, id: &str) {
    let unreadable = match ExitEvidence::read_checked(&engine.paths.exit_evidence(id)) {
        Ok(Some(evidence)) => {
            // Held or not, the evidence is on disk for a next daemon.
            let _ = record_exit(engine, id, &evidence).await;
            return;
        }
        Ok(None) => None,
        Err(e) => Some(e),
    };
    let key = id.to_string();
    let Ok(Some(row)) = engine.store.runs().get(&key).await else {
        return;
    };
    if !row.state.is_live() {
        return;
    }
    let (state, reason) = match row.harness_identity() {
        Some(harness) => {
            let pid = harness.pid;
            // The PTY closed with the supervisor, so the harness got a hangup.
            let deadline = tokio::time::Instant::now() + HANGUP_GRACE;
            let mut seen = harness.liveness();
            while seen == Liveness::Alive && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
                seen = harness.liveness();
            }
            match seen {
                Liveness::Gone => (
                    RunState::Interrupted,
                    "the run's supervisor died while the run was live; the harness is gone".to_string(),
                ),
                Liveness::Alive => (
                    RunState::Lost,
                    format!(
                        "the run's supervisor died; harness pid {pid} is still running but can no longer be observed (agents cancel signals it after verifying it)"
                    ),
                ),
                Liveness::Unknown => (
                    RunState::Lost,
                    format!("the run's supervisor died and harness pid {pid} cannot be verified either way"),
                ),
            }
        }
        _ if row.supervisor_pid.is_none() => (RunState::Interrupted, never_started(engine, &row).await),
        _ => (
            RunState::Lost,
            "the run's supervisor died before it reported the harness; whether it ran cannot be verified".to_string(),
        ),
    };
    // Evidence there but unreadable: how the run ended is not known, and
    // the reason says so before what is.
    let reason = match unreadable {
        Some(e) => format!("its exit evidence (exit.json) cannot be read ({e}), so how it ended is unknown: {reason}"),
        None => reason,
    };
    let ending = Ending {
        state,
        exit_code: None,
        signal: None,
        reason: Some(reason),
        output_bytes: std::fs::metadata(engine.paths.output_log(id)).ok().map(|m| m.len()),
        event_kind: "RUN_ERROR",
        evidence: json!({ "supervisor_pid": row.supervisor_pid }),
        ended_at: None,
    };
    let _ = finish(engine, id, ending).await;
}

/// Error code for operations on a run that has ended, naming it as the
/// user does.
pub fn not_running(name: &str, state: RunState) -> crate::api::ApiError {
    let said = match state {
        RunState::Blocked | RunState::Skipped => format!("run {name} never started ({})", state.as_str()),
        state if !state.is_live() => format!("run {name} has already ended ({})", state.as_str()),
        state => format!("run {name} is {}", state.as_str()),
    };
    crate::api::ApiError::new(ErrorCode::NotRunning, said)
}
