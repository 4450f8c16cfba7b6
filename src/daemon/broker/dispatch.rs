//! The tool table (docs/design.md §2): every method a client can call, one place.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::connection::Subscriptions;
use super::subscribe::Outbox;
use crate::api::{AckParams, ApiError, DaemonStatus, ErrorCode, ListParams, RunState, StartParams, method};
use crate::daemon::Daemon;
use crate::engine::start::resolve_row;
use crate::pty::{Identity, Liveness};
use crate::store::runs;

pub(in crate::daemon) fn params<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    serde_json::from_value(value).map_err(|e| ApiError::bad_request(format!("bad parameters: {e}")))
}

pub(in crate::daemon) fn to_value<T: serde::Serialize>(v: T) -> Result<Value, ApiError> {
    serde_json::to_value(v).map_err(ApiError::internal)
}

pub async fn call(
    daemon: &Arc<Daemon>,
    outbox: &Outbox,
    subs: &Subscriptions,
    name: &str,
    p: Value,
) -> Result<Value, ApiError> {
    // `hosts.*`, runs placed on a remote host, and the run methods a remote
    // run's own daemon answers (docs/design.md §8).
    if let Some(answer) = crate::remote::dispatch(&daemon.here(), name, &p).await {
        return answer;
    }
    if let Some(parsed) = super::run_methods::RunCall::parse(name, &p) {
        // Parsed and checked, then the run resolved once: answered by its
        // host if it lives on one.
        let (run_call, reference) = parsed?;
        let row = resolve_row(&daemon.engine, &reference).await?;
        if row.host != "local"
            && let Some(answer) = crate::remote::forward(&daemon.here(), name, &row, &p).await
        {
            return answer;
        }
        return super::run_methods::call(daemon, outbox, subs, run_call, row).await;
    }
    match name {
        method::RUNS_START => to_value(crate::engine::start::start(&daemon.engine, params::<StartParams>(p)?).await?),
        method::SESSIONS_RM => to_value(crate::daemon::removal::remove_session(daemon, params(p)?).await?),
        method::RETENTION_PLAN => to_value(crate::daemon::retention::report(daemon).await?),
        method::RUNS_RM => to_value(crate::daemon::removal::remove(daemon, params(p)?).await?),
        method::ROUTINES_LIST => to_value(crate::daemon::routines::list(daemon).await?),
        method::ROUTINES_RUN => {
            let crate::api::RoutineRef { name } = params(p)?;
            to_value(crate::daemon::routines::run_now(daemon, &name).await?)
        }
        method::ROUTINES_PAUSE | method::ROUTINES_RESUME => {
            let crate::api::RoutineRef { name: routine } = params(p)?;
            to_value(crate::daemon::routines::pause(daemon, &routine, name == method::ROUTINES_PAUSE).await?)
        }
        method::MAIL_SEND => crate::daemon::mail::send(daemon, params(p)?).await,
        method::MAIL_LIST => crate::daemon::mail::list(daemon, params(p)?).await,
        method::MAIL_READ => to_value(crate::daemon::mail::read(daemon, &params::<crate::api::MailRef>(p)?.id).await?),
        method::MAIL_OUTBOX => crate::daemon::outbox::take(daemon, params(p)?).await,
        method::MAIL_TAKEN => crate::daemon::outbox::taken(daemon, params(p)?).await,
        method::MAIL_WAIT => to_value(
            outbox
                .unless_gone(crate::daemon::mail::wait(daemon, params(p)?))
                .await?,
        ),
        method::TEAMS_START => crate::daemon::teams::start(daemon, params(p)?).await,
        method::TEAMS_LIST => crate::daemon::teams::list(daemon).await,
        method::TEAMS_SHOW => crate::daemon::teams::show(daemon, params(p)?).await,
        method::TEAMS_CANCEL => crate::daemon::teams::cancel(daemon, params(p)?).await,
        method::RUNS_LIST => list(daemon, params(p)?).await,
        method::RUNS_ACK => ack(subs, params(p)?),
        method::SESSIONS_LIST => {
            // It took no parameters before `local_only`: none is still fine.
            let list: crate::api::SessionsListParams = if p.is_null() { Default::default() } else { params(p)? };
            let all = list.all;
            to_value(
                crate::remote::sessions_list(&daemon.here(), list, crate::daemon::sessions::list(&daemon.engine, all))
                    .await?,
            )
        }
        method::SESSIONS_RESUME => to_value(crate::daemon::sessions::resume(&daemon.engine, params(p)?, false).await?),
        method::SESSIONS_FORK => to_value(crate::daemon::sessions::resume(&daemon.engine, params(p)?, true).await?),
        method::SESSIONS_SHOW => {
            let crate::api::SessionRef { session } = params(p)?;
            to_value(crate::daemon::sessions::show(&daemon.engine, &session).await?)
        }
        method::SUBAGENTS_LIST => to_value(crate::daemon::sessions::subagents(&daemon.engine, params(p)?).await?),
        method::TRANSCRIPT_READ => to_value(crate::engine::transcripts::read(&daemon.engine, params(p)?).await?),
        method::TRANSCRIPTS_SEARCH => {
            let search: crate::api::SearchParams = params(p)?;
            let local = crate::engine::transcripts::search(&daemon.engine, search.clone());
            to_value(crate::remote::search(&daemon.here(), search, local).await?)
        }
        method::HOOKS_REPORT => crate::engine::hooks::report(&daemon.engine, params(p)?).await,
        method::DAEMON_STATUS => status(daemon).await,
        method::DAEMON_STOP => {
            let daemon = daemon.clone();
            tokio::spawn(async move {
                // Let the answer reach the client before the process ends.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                daemon.shutdown.notify_one();
            });
            Ok(Value::Null)
        }
        other => Err(ApiError::new(
            ErrorCode::UnknownMethod,
            format!("unknown method '{other}'"),
        )),
    }
}

/// `runs.list`: a page of runs with their status's evidence, waiting
/// prompts and usage; without `paged`, every live run and the newest ended
/// ones that fit one answer.
async fn list(daemon: &Arc<Daemon>, list: ListParams) -> Result<Value, ApiError> {
    let ListParams {
        all,
        limit,
        before,
        paged,
    } = list;
    let limit = limit
        .unwrap_or(ListParams::DEFAULT_LIMIT)
        .clamp(1, ListParams::MAX_LIMIT);
    let (rows, sources, mut waiting) = daemon
        .engine
        .store
        .runs()
        .page(all, limit, before, paged)
        .await
        .map_err(ApiError::internal)?;
    let rows: Vec<_> = rows.into_iter().map(|r| daemon.engine.held_ends.apply(r)).collect();
    let prices = crate::transcript::price::PriceTable::new(daemon.engine.config().prices);
    let fetched = rows.len();
    let rules = crate::engine::queue::rules(&daemon.engine);
    let listed: Vec<crate::api::ListedRun> = rows
        .iter()
        .map(|r| crate::api::ListedRun {
            run: with_evidence(daemon, &rules, r.to_record(), waiting.remove(&r.id)),
            usage: sources
                .get(&r.id)
                .and_then(|s| crate::transcript::usage::run_usage(s, &prices))
                .map(|u| (&u).into()),
        })
        .collect();
    let mut listed = listed;
    super::listing::show_each_parents_children(&mut listed);
    let kept = super::listing::fit(listed, !paged);
    if !paged {
        return to_value(kept);
    }
    // More may follow when the page was full, or cut to fit.
    let next = (kept.len() < fetched || fetched == limit)
        .then(|| kept.first().map(|r| r.run.id.clone()))
        .flatten();
    to_value(crate::api::ListPage { runs: kept, next })
}

/// `runs.ack`: a client has shown a subscription's output up to `offset`.
fn ack(subs: &Subscriptions, ack: AckParams) -> Result<Value, ApiError> {
    let AckParams {
        run,
        offset,
        screen,
        sub,
    } = ack;
    // Acks name full ids (they come from output frames): no lookup.
    if let Some(sub) = subs
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&subscription_key(&run, screen.then_some(sub)))
    {
        sub.acked.send_if_modified(|a| {
            let newer = offset > *a;
            if newer {
                *a = offset;
            }
            newer
        });
    }
    Ok(Value::Null)
}

/// `daemon.status`: who it is, what it holds, which builds supervise.
async fn status(daemon: &Arc<Daemon>) -> Result<Value, ApiError> {
    let live: Vec<String> = daemon
        .engine
        .runs
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .keys()
        .cloned()
        .collect();
    let live_runs = live.len();
    to_value(DaemonStatus {
        pid: std::process::id(),
        version: env!("CARGO_PKG_VERSION").into(),
        home: daemon.engine.paths.home.display().to_string(),
        live_runs,
        clients: daemon.clients.load(std::sync::atomic::Ordering::Relaxed),
        exe: crate::daemon::own_exe().to_string(),
        supervisors: crate::daemon::upgrade::supervisor_builds(daemon, live).await,
        screens: true,
        screen_subs: true,
        awaited: daemon.engine.awaited.lock().map_or(0, |a| a.len()),
    })
}

/// Cancels a run and, following ownership edges, its non-detached children
/// (docs/design.md §4). Returns the ids asked to end.
pub async fn cancel_tree(daemon: &Arc<Daemon>, root: &str, force: bool) -> Result<Vec<String>, ApiError> {
    cancel_tree_by(daemon, root, force, None).await
}

/// As `cancel_tree`, asked by run `by` (none: the user), which each
/// `CANCEL_REQUESTED` names.
pub async fn cancel_tree_by(
    daemon: &Arc<Daemon>,
    root: &str,
    force: bool,
    by: Option<&str>,
) -> Result<Vec<String>, ApiError> {
    let mut asked = Vec::new();
    let mut todo = vec![root.to_string()];
    let mut first = true;
    while let Some(id) = todo.pop() {
        let key = id.clone();
        let (row, children) = daemon
            .engine
            .store
            .runs()
            .with_children(&key)
            .await
            .map_err(ApiError::internal)?;
        let Some(row) = row.map(|r| daemon.engine.held_ends.apply(r)) else {
            continue;
        };
        match cancel_one(daemon, &row, force, by).await {
            Ok(true) => asked.push(id.clone()),
            Ok(false) => {}
            Err(e) if first => return Err(e),
            Err(_) => {}
        }
        first = false;
        todo.extend(children.into_iter().filter(|c| !c.detached).map(|c| c.id));
    }
    Ok(asked)
}

async fn cancel_one(daemon: &Arc<Daemon>, row: &runs::RunRow, force: bool, by: Option<&str>) -> Result<bool, ApiError> {
    if let Some(live) = daemon.engine.live(&row.id) {
        let data = json!({ "force": force, "by": by.unwrap_or("user") });
        let _ = daemon
            .engine
            .store
            .runs()
            .append_event(&row.id, "CANCEL_REQUESTED", data)
            .await;
        live.link.cancel(force).await?;
        return Ok(true);
    }
    if row.state == RunState::Lost
        && let (Some(pid), Some(start), Some(boot)) = (row.pid, row.proc_start, &row.boot_id)
    {
        // A harness whose supervisor died: signal it ourselves, after
        // verifying it is still the process we recorded.
        let leader = Identity {
            pid: pid as i32,
            start_ticks: start as u64,
            boot_id: boot.clone(),
        };
        match leader.liveness() {
            Liveness::Gone => {
                return Err(ApiError::new(
                    ErrorCode::NotRunning,
                    format!(
                        "run {} is lost and pid {pid} no longer names its harness (it exited, or the pid was reused); not signalled",
                        row.name
                    ),
                ));
            }
            Liveness::Unknown => {
                return Err(ApiError::new(
                    ErrorCode::NotRunning,
                    format!(
                        "run {} is lost and pid {pid} cannot be verified; not signalled",
                        row.name
                    ),
                ));
            }
            Liveness::Alive => {}
        }
        {
            let signal = if force {
                nix::sys::signal::Signal::SIGKILL
            } else {
                nix::sys::signal::Signal::SIGTERM
            };
            crate::pty::signal::signal_group(&leader, leader.pid, signal)
                .map_err(|e| ApiError::new(ErrorCode::NotRunning, e.to_string()))?;
            let data = json!({ "signal": signal.as_str() });
            let _ = daemon
                .engine
                .store
                .runs()
                .append_event(&row.id, "SIGNALLED", data)
                .await;
            return Ok(true);
        }
    }
    if row.state.is_live() {
        return Err(ApiError::new(
            ErrorCode::NotRunning,
            format!("run {} is still starting; try again", row.name),
        ));
    }
    Err(crate::engine::start::ended_state_error(row))
}

/// A live run's record with what its status rests on and how old that is
/// (`rules` read once per answer: a list holds many runs),
/// and its prompts still waiting (`waiting`: as stored).
pub(in crate::daemon) fn with_evidence(
    daemon: &Daemon,
    rules: &crate::harness::status::Rules,
    mut record: crate::api::RunRecord,
    waiting: Option<Vec<crate::store::prompts::Waiting>>,
) -> crate::api::RunRecord {
    if let Some(live) = daemon.engine.live(&record.id) {
        crate::engine::queue::status_evidence(&live, rules, &mut record);
        record.waiting = crate::engine::queue::waiting(&live, rules, waiting.unwrap_or_default());
    }
    record
}

/// The most history rows one `runs.history` answer renders: the TUI's
/// default scrollback (`engine.history_lines`) and then some.
pub(in crate::daemon) const HISTORY_MAX_LINES: usize = 50_000;

/// A connection's subscription of `run`: its bytes, or screen `sub`. A
/// connection may hold both, and several screens (a remote host's link
/// mirrors a run's log and shows its screen in each pane here).
pub(in crate::daemon) fn subscription_key(run: &str, screen: Option<u64>) -> String {
    match screen {
        None => run.to_string(),
        Some(0) => format!("{run}/screen"),
        Some(sub) => format!("{run}/screen/{sub}"),
    }
}
