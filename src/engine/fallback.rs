//! Account fallback (docs/design.md §7): a run started with a profile that names
//! `fallback = [...]` profiles, and that ends early on an account problem
//! (the adapter reads authentication or quota failures from the end of
//! its screen), goes on as a new attempt of the same run with the next
//! profile of the same family. Any other failure ends the run as usual.
//!
//! What a next attempt needs — the client's environment, the arguments —
//! is kept in memory only, for the run's life: environment values are
//! never stored. A daemon restart forgets it; the plan of a run it
//! re-adopts is derived again from what is stored ([`recover`]): the
//! profiles still to try from the first attempt's profile, the config's
//! `fallback` list and the `attempts` rows; the arguments and `--env` names
//! from the run's record; the environment values from the daemon's own
//! (the client's are gone).

use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};

use super::Engine;
use super::live::LiveRun;
use crate::api::{RunSpec, RunState, StartParams};
use crate::harness::Profile;
use crate::protocol::exit::ExitEvidence;
use crate::store::attempts::Failover;
use crate::store::{attempts, now_ms, runs};

/// An attempt that ran longer than this did not fail on its account at
/// start-up: Claude and Codex refuse a bad key or an exhausted account on
/// their first request, within seconds; a generous bound for slow starts
/// and a first prompt typed late.
const EARLY: Duration = Duration::from_secs(300);

/// How much of the end of the output is read for the harness's words:
/// a full screen of a large terminal, with its escape sequences.
const TAIL_BYTES: u64 = 64 * 1024;

/// How long the last attempt's supervisor gets to let go of the run's
/// socket once told its exit was recorded (it does so at once).
const RELEASE: Duration = Duration::from_secs(5);

pub struct Plan {
    /// Profiles still to try, in order.
    remaining: Vec<String>,
    profile: String,
    params: StartParams,
    /// When the attempt started, ms since the epoch (as `attempts` says).
    started_ms: i64,
    /// Where this attempt's output begins in the run's log.
    log_start: u64,
}

/// Plans by run id. Process-wide: run ids are unique, and a daemon is one
/// per process.
fn plans() -> &'static Mutex<HashMap<String, Plan>> {
    static PLANS: OnceLock<Mutex<HashMap<String, Plan>>> = OnceLock::new();
    PLANS.get_or_init(Default::default)
}

/// Keeps what a next attempt needs, when the run's profile has fallbacks.
pub fn remember(run: &str, profile: Option<&str>, profiles: &BTreeMap<String, Profile>, params: &StartParams) {
    let Some(name) = profile else { return };
    let Some(p) = profiles.get(name).filter(|p| !p.fallback.is_empty()) else {
        return;
    };
    start_adopter();
    plans().lock().insert(
        run.to_string(),
        Plan {
            remaining: p.fallback.clone(),
            profile: name.to_string(),
            params: params.clone(),
            started_ms: now_ms(),
            log_start: 0,
        },
    );
}

/// Derives again, after a daemon restart, the plan of a run about to be
/// re-adopted (before its exit can be heard), from what is stored.
pub async fn recover(engine: &Arc<Engine>, row: &runs::RunRow) {
    let id = row.id.clone();
    let stored = engine.store.attempts().tried_and_pass_env(&id).await;
    let Ok((tried, pass_env)) = stored else { return };
    let config = engine.config();
    let Some((profile, remaining)) = still_to_try(&tried, &config.profiles) else {
        return;
    };
    let Some(current) = tried.last() else { return };
    // Where this attempt's output begins: where the last one's ended, as
    // its kept evidence says. Without it, the end of the log as it is now:
    // an earlier attempt's words must never count for this one.
    let log_start = match tried.len() {
        1 => 0,
        n => crate::protocol::exit::ExitEvidence::read(
            &engine.paths.run_dir(&row.id).join(format!("exit.{}.json", n - 1)),
        )
        .map(|e| e.output_bytes)
        .unwrap_or_else(|| {
            std::fs::metadata(engine.paths.output_log(&row.id))
                .map(|m| m.len())
                .unwrap_or(0)
        }),
    };
    let params = StartParams {
        spec: RunSpec {
            harness: row.harness.clone(),
            args: row.args.clone(),
            cwd: row.cwd.clone(),
            pass_env,
            ..RunSpec::default()
        },
        env: std::env::vars().collect(),
        ..StartParams::default()
    };
    start_adopter();
    plans().lock().insert(
        row.id.clone(),
        Plan {
            remaining,
            profile,
            params,
            started_ms: current.started_at,
            log_start,
        },
    );
}

/// The profile of a run's last attempt and those still to try after it:
/// the first attempt's profile's `fallback` list, past the ones tried.
/// `None` when that profile has no fallbacks (or is no longer configured).
fn still_to_try(tried: &[attempts::Tried], profiles: &BTreeMap<String, Profile>) -> Option<(String, Vec<String>)> {
    let first = tried.first()?.profile.as_deref()?;
    let current = tried.last()?.profile.clone()?;
    let fallback = &profiles.get(first)?.fallback;
    let after = if tried.len() == 1 {
        0
    } else {
        fallback.iter().position(|p| *p == current)? + 1
    };
    let remaining: Vec<String> = fallback[after..]
        .iter()
        .filter(|p| !tried.iter().any(|t| t.profile.as_ref() == Some(*p)))
        .cloned()
        .collect();
    (!remaining.is_empty()).then_some((current, remaining))
}

/// Drops a run's plan (its run ended, or took its next attempt).
pub fn forget(run: &str) -> Option<Plan> {
    plans().lock().remove(run)
}

/// Called when a run's supervisor reports the harness's exit, before the
/// run is ended. Returns whether a next attempt took the run over; then
/// the caller must not end it.
pub async fn on_exit(engine: &Arc<Engine>, live: &Arc<LiveRun>, evidence: &ExitEvidence) -> bool {
    let Some(plan) = forget(&live.id) else {
        return false;
    };
    let (state, how) = evidence.verdict();
    let elapsed = Duration::from_millis(now_ms().saturating_sub(plan.started_ms).max(0) as u64);
    if state != RunState::Failed || elapsed > EARLY || plan.remaining.is_empty() {
        return false;
    }
    let Ok(Some(row)) = engine.store.runs().get(&live.id).await else {
        return false;
    };
    let Some(adapter) = crate::harness::adapter_for(&row.harness) else {
        return false;
    };
    let text = screen_text(engine, &row, plan.log_start);
    let Some(problem) = adapter.account_problem(&text) else {
        return false;
    };
    let reason = format!(
        "account problem ({}): the harness said \"{}\"; {how}",
        problem.kind, problem.pattern
    );
    next_attempt(engine, live, row, plan, reason).await
}

/// The end of the attempt's output as text: its last screen and the lines
/// that scrolled off before it.
fn screen_text(engine: &Engine, row: &runs::RunRow, log_start: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut log) = std::fs::File::open(engine.paths.output_log(&row.id)) else {
        return String::new();
    };
    let len = log.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(TAIL_BYTES).max(log_start.min(len));
    let mut bytes = Vec::new();
    if log.seek(SeekFrom::Start(from)).is_err() || log.read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let mut term = crate::term::Terminal::with_history(row.rows, row.cols, 500);
    term.feed(&bytes);
    let mut lines: Vec<String> = term.history().map(str::to_owned).collect();
    lines.extend(term.visible_lines());
    lines.join("\n")
}

/// Starts the next profile as a new attempt of the same run.
async fn next_attempt(
    engine: &Arc<Engine>,
    live: &Arc<LiveRun>,
    row: runs::RunRow,
    mut plan: Plan,
    reason: String,
) -> bool {
    let id = row.id.clone();
    let next = plan.remaining.remove(0);
    let Some(prepared) = prepare_next(engine, &row, &plan, &next).await else {
        return false;
    };
    release_last(engine, live, &id).await;
    let Some(n) = record_attempt(engine, &row, &prepared, &plan, &next, &reason).await else {
        return false;
    };
    // On the run's socket; a boxed run's next attempt is boxed as its first was.
    let config = engine.config();
    let (sup_pid, sup_start) = match super::start::supervise(engine, &row, &prepared, &plan.params, &config).await {
        Ok(identity) => identity,
        Err(why) => {
            let ending = runs::Ending {
                state: RunState::Failed,
                exit_code: None,
                signal: None,
                reason: Some(format!("attempt {n} (profile {next}) could not start: {why}")),
                output_bytes: None,
                event_kind: "RUN_ERROR",
                evidence: json!({}),
                ended_at: None,
            };
            super::adopt::finish(engine, &id, ending).await;
            return true;
        }
    };
    let key = id.clone();
    let row = engine.store.attempts().supervised(&key, sup_pid, sup_start).await;
    let Ok(Some(row)) = row else { return true };
    plan.profile = next;
    plan.started_ms = now_ms();
    plan.log_start = std::fs::metadata(engine.paths.output_log(&id))
        .map(|m| m.len())
        .unwrap_or(0);
    plans().lock().insert(id.clone(), plan);
    match adopter().get() {
        Some(tx) if tx.send((engine.clone(), row)).is_ok() => {}
        _ => {
            forget(&id);
            super::adopt::supervisor_gone(engine, &id).await;
        }
    }
    true
}

/// The launch of profile `next` for the run, its files written; none when
/// it cannot be (a profile that does not prepare is noted on the run).
async fn prepare_next(
    engine: &Arc<Engine>,
    row: &runs::RunRow,
    plan: &Plan,
    next: &str,
) -> Option<crate::harness::Prepared> {
    let config = engine.config();
    let agents_bin = crate::harness::agents_binary().ok()?;
    let run_dir = engine.paths.run_dir(&row.id);
    let prepared = crate::harness::prepare(
        next,
        &crate::harness::Request {
            args: &plan.params.spec.args,
            env: &plan.params.env,
            profiles: &config.profiles,
            run_dir: &run_dir,
            agents_bin: &agents_bin,
            cwd: std::path::Path::new(&row.cwd),
        },
    );
    let prepared = match prepared {
        Ok(p) if p.adapter.family() == row.harness => p,
        Ok(_) => return None, // validated at config load; never another family
        Err(why) => {
            let blocked = json!({ "profile": next, "reason": why });
            note(engine, &row.id, "FALLBACK_BLOCKED", blocked).await;
            return None;
        }
    };
    super::start::write_run_files(&run_dir, &prepared.launch.files).ok()?;
    super::start::touch_files(&prepared.launch.touch);
    Some(prepared)
}

/// The last attempt's supervisor lets go of the run (its socket) once
/// told its exit is recorded; its evidence is kept beside the next one's.
async fn release_last(engine: &Arc<Engine>, live: &Arc<LiveRun>, id: &str) {
    live.link.ack_exit().await;
    let socket = engine.paths.run_socket(id);
    let deadline = tokio::time::Instant::now() + RELEASE;
    while socket.exists() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Closes the failed attempt and begins the next (its version, its
/// session), in one transaction; the last attempt's exit evidence is kept
/// as `exit.N.json`. The new attempt's number.
async fn record_attempt(
    engine: &Arc<Engine>,
    row: &runs::RunRow,
    prepared: &crate::harness::Prepared,
    plan: &Plan,
    next: &str,
    reason: &str,
) -> Option<i64> {
    let binary = std::path::PathBuf::from(&prepared.launch.argv[0]);
    let version = if prepared.adapter.has_version() {
        tokio::task::spawn_blocking(move || crate::harness::version::version_of(&binary))
            .await
            .ok()
            .flatten()
    } else {
        None
    };
    let session = prepared.launch.session.as_ref().map(|s| {
        let path = s.transcript.as_ref().map(|p| p.to_string_lossy().into_owned());
        (s.id.clone(), path)
    });
    let failover = Failover {
        run: row.id.clone(),
        why: reason.to_string(),
        from_profile: plan.profile.clone(),
        profile: next.to_string(),
        harness: row.harness.clone(),
        version,
        argv: prepared.launch.argv.clone(),
        session,
    };
    let begun = engine.store.attempts().next(failover).await;
    let n = begun.ok()?;
    let numbered = engine.paths.run_dir(&row.id).join(format!("exit.{}.json", n - 1));
    let _ = std::fs::rename(engine.paths.exit_evidence(&row.id), numbered);
    Some(n)
}

/// A run handed to its next attempt's supervisor, to adopt.
type Adoption = (Arc<Engine>, runs::RunRow);

/// Adoption happens on a task of its own: it starts the run's monitor,
/// which is what called [`on_exit`], and a direct call would make each
/// future contain the other.
fn adopter() -> &'static OnceLock<tokio::sync::mpsc::UnboundedSender<Adoption>> {
    static ADOPTER: OnceLock<tokio::sync::mpsc::UnboundedSender<Adoption>> = OnceLock::new();
    &ADOPTER
}

fn start_adopter() {
    adopter().get_or_init(|| {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Adoption>();
        tokio::spawn(async move {
            while let Some((engine, row)) = rx.recv().await {
                if let Err(e) = super::adopt::adopt(&engine, &row).await {
                    tracing::warn!("cannot adopt the next attempt of run {}: {e}", row.id);
                    forget(&row.id);
                    super::adopt::supervisor_gone(&engine, &row.id).await;
                }
            }
        });
        tx
    });
}

async fn note(engine: &Arc<Engine>, run: &str, kind: &'static str, data: Value) {
    let run = run.to_string();
    let _ = engine.store.runs().append_event(&run, kind, data).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profiles() -> BTreeMap<String, Profile> {
        let with = |fallback: &[&str]| Profile {
            family: Some("claude".into()),
            fallback: fallback.iter().map(|p| p.to_string()).collect(),
            ..Profile::default()
        };
        [
            ("work".to_string(), with(&["spare", "last"])),
            ("spare".to_string(), with(&[])),
            ("last".to_string(), with(&[])),
        ]
        .into_iter()
        .collect()
    }

    fn tried(names: &[&str]) -> Vec<attempts::Tried> {
        names
            .iter()
            .map(|p| attempts::Tried {
                profile: Some(p.to_string()),
                started_at: 0,
            })
            .collect()
    }

    #[test]
    fn the_profiles_still_to_try_follow_the_first_attempts_fallbacks_past_those_tried() {
        let p = profiles();
        let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            still_to_try(&tried(&["work"]), &p),
            Some(("work".into(), owned(&["spare", "last"])))
        );
        assert_eq!(
            still_to_try(&tried(&["work", "spare"]), &p),
            Some(("spare".into(), owned(&["last"])))
        );
        assert_eq!(still_to_try(&tried(&["work", "spare", "last"]), &p), None, "all tried");
        assert_eq!(still_to_try(&tried(&["spare"]), &p), None, "no fallbacks");
        assert_eq!(still_to_try(&tried(&["gone"]), &p), None, "no longer configured");
        assert_eq!(still_to_try(&[], &p), None);
    }
}
