//! The tool table (docs/design.md §2): every method a client can call, one place.

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::Daemon;
use super::client::Subscriptions;
use super::start::{record, resolve_row};
use super::subscribe::{self, Outbox};
use crate::api::{
    AckParams, AnswerParams, ApiError, AttachParams, AttachResult, CancelParams, DaemonStatus, ErrorCode, ListParams,
    RerunParams, ResizeParams, RunDetail, RunRef, RunState, SendParams, StartParams, method,
};
use crate::protocol::run_files::{SizeChange, TimeSample};
use crate::protocol::supervisor::method as sup;
use crate::pty::{Identity, Liveness};
use crate::store::runs;

fn params<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    serde_json::from_value(value).map_err(|e| ApiError::bad_request(format!("bad parameters: {e}")))
}

fn to_value<T: serde::Serialize>(v: T) -> Result<Value, ApiError> {
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
    if let Some(answer) = crate::remote::dispatch(daemon, name, &p).await {
        return answer;
    }
    match name {
        method::RUNS_START => to_value(super::start::start(daemon, params::<StartParams>(p)?).await?),
        method::RUNS_LIST => {
            let ListParams {
                all,
                limit,
                before,
                paged,
            } = params(p)?;
            let limit = limit
                .unwrap_or(ListParams::DEFAULT_LIMIT)
                .clamp(1, ListParams::MAX_LIMIT);
            let (rows, sources) = daemon
                .store
                .call(move |c| {
                    let rows = match paged {
                        true => runs::list_older(c, all, limit, before.as_deref())?,
                        false => runs::list_page(c, all, limit, before.as_deref())?,
                    };
                    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
                    Ok((rows, crate::store::usage::runs_sources(c, &ids)?))
                })
                .await
                .map_err(ApiError::internal)?;
            let rows: Vec<_> = rows.into_iter().map(|r| daemon.held_ends.apply(r)).collect();
            let prices = crate::transcript::price::PriceTable::new(daemon.config().prices);
            let fetched = rows.len();
            let rules = super::queue::rules(daemon);
            let listed: Vec<crate::api::ListedRun> = rows
                .iter()
                .map(|r| crate::api::ListedRun {
                    run: with_evidence(daemon, &rules, r.to_record()),
                    usage: sources
                        .get(&r.id)
                        .and_then(|s| crate::transcript::usage::run_usage(s, &prices))
                        .map(|u| (&u).into()),
                })
                .collect();
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
        method::RUNS_SHOW => {
            let RunRef { run } = params(p)?;
            let row = resolve_row(daemon, &run).await?;
            let id = row.id.clone();
            let (events, info, subagents, edge, attempts, sources) = daemon
                .store
                .call(move |c| {
                    Ok((
                        runs::events(c, &id)?,
                        crate::store::harness::harness_info(c, &id)?,
                        crate::store::harness::subagents(c, &id)?,
                        crate::store::lineage::edge_of(c, &id)?,
                        crate::store::attempts::list(c, &id)?,
                        crate::store::usage::run_sources(c, &id)?,
                    ))
                })
                .await
                .map_err(ApiError::internal)?;
            let prices = crate::transcript::price::PriceTable::new(daemon.config().prices);
            to_value(RunDetail {
                run: with_evidence(daemon, &super::queue::rules(daemon), row.to_record()),
                events,
                harness: crate::api::HarnessDetail {
                    harness_version: info.version,
                    profile: info.profile,
                    transcript_path: info.transcript_path,
                    subagents,
                    resume_mode: edge.as_ref().and_then(|e| e.mode.clone()),
                    resumed_from: edge.and_then(|e| e.session),
                    attempts,
                    env_passed: info.pass_env,
                    env_harness: info.harness_env,
                },
                usage: crate::transcript::usage::run_usage(&sources, &prices),
            })
        }
        method::RUNS_SEND => {
            let SendParams { run, text, prompt_id } = params(p)?;
            crate::api::bounds::check("the prompt", &text, crate::api::bounds::PROMPT)?;
            let row = resolve_row(daemon, &run).await?;
            // A retry of a prompt this run holds learns its state, even
            // once the run has ended.
            if let Some(id) = &prompt_id
                && let Some(known) = super::once::known_prompt(daemon, &row.id, id).await?
            {
                return to_value(known);
            }
            if !row.state.is_live() {
                return Err(super::start::ended_state_error(&row));
            }
            if text.len() > 64 * 1024 {
                return Err(ApiError::bad_request("prompt longer than 64 KiB"));
            }
            let prompt_id = prompt_id.unwrap_or_else(|| ulid::Ulid::new().to_string());
            to_value(super::queue::enqueue(daemon, &row.id, &prompt_id, &text).await?)
        }
        method::RUNS_CANCEL => {
            let CancelParams { run, force } = params(p)?;
            let row = resolve_row(daemon, &run).await?;
            let cancelled = cancel_tree(daemon, &row.id, force).await?;
            Ok(json!({ "run": row.id, "cancelling": cancelled }))
        }
        method::RUNS_ATTACH => {
            let attach: AttachParams = params(p)?;
            let row = resolve_row(daemon, &attach.run).await?;
            if let Some(offset) = attach.offset {
                // The log only grows, so no frame ever named an offset past
                // its end: refuse one rather than report it "caught up".
                let len = std::fs::metadata(daemon.paths.output_log(&row.id))
                    .map(|m| m.len())
                    .unwrap_or(0);
                if offset > len {
                    return Err(ApiError::bad_request(format!(
                        "offset {offset} is past the end of run {}'s output ({len} bytes)",
                        row.id
                    )));
                }
            }
            let id = row.id.clone();
            let record = row.to_record();
            let screen = attach.screen;
            let acked = tokio::sync::watch::Sender::new(if screen { 0 } else { attach.offset.unwrap_or(0) });
            let acks = acked.subscribe();
            let task = tokio::spawn({
                let (daemon, outbox, id) = (daemon.clone(), outbox.clone(), id.clone());
                async move {
                    let streamed = if attach.screen {
                        super::screens::stream(daemon, outbox.clone(), row, acks).await
                    } else {
                        subscribe::stream(daemon, outbox.clone(), row, attach).await
                    };
                    if let Err(e) = streamed {
                        outbox
                            .notify_in_stream(
                                method::OUTPUT_END,
                                json!({ "run": id, "final": true, "error": e.message }),
                            )
                            .await;
                    }
                }
            });
            let sub = super::client::Subscription { task, acked };
            let key = subscription_key(&id, screen);
            if let Some(old) = subs.lock().unwrap_or_else(|p| p.into_inner()).insert(key, sub) {
                old.task.abort();
            }
            to_value(AttachResult { run: record })
        }
        method::RUNS_ACK => {
            let AckParams { run, offset, screen } = params(p)?;
            // Acks name full ids (they come from output frames): no lookup.
            if let Some(sub) = subs
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&subscription_key(&run, screen))
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
        method::RUNS_DETACH => {
            let crate::api::DetachParams { run, screen } = params(p)?;
            let row = resolve_row(daemon, &run).await?;
            let still_shown = {
                let mut subs = subs.lock().unwrap_or_else(|p| p.into_inner());
                for kind in [false, true] {
                    if screen.is_none_or(|s| s == kind)
                        && let Some(sub) = subs.remove(&subscription_key(&row.id, kind))
                    {
                        sub.task.abort();
                    }
                }
                subs.contains_key(&subscription_key(&row.id, true))
            };
            // A connection that still shows the run keeps its size.
            if !still_shown && let Some(live) = daemon.live(&row.id) {
                super::size::release(daemon, &live, outbox.viewer).await;
            }
            Ok(Value::Null)
        }
        method::RUNS_RESIZE => {
            let ResizeParams { run, rows, cols } = params(p)?;
            if !(2..=1000).contains(&rows) || !(2..=2000).contains(&cols) {
                return Err(ApiError::bad_request(format!("size {cols}x{rows} out of range")));
            }
            let row = resolve_row(daemon, &run).await?;
            let live = daemon
                .live(&row.id)
                .ok_or_else(|| super::start::ended_state_error(&row))?;
            super::size::hold(daemon, &live, outbox.viewer, (rows, cols)).await?;
            Ok(Value::Null)
        }
        method::RUNS_ANSWER => {
            let AnswerParams { run, answer, answer_id } = params(p)?;
            crate::api::bounds::check("the answer", &answer, crate::api::bounds::PROMPT)?;
            let row = resolve_row(daemon, &run).await?;
            if let Some(id) = &answer_id {
                super::once::validate_id("answer id", id)?;
                if let Some(outcome) = super::once::answered(daemon, &row.id, id).await {
                    return outcome;
                }
            }
            let live = daemon
                .live(&row.id)
                .ok_or_else(|| super::start::ended_state_error(&row))?;
            // One answer (or prompt) typed at a time; a repeat of this
            // answer's id waits here, then finds its outcome.
            let _typing = live.delivery.lock().await;
            if let Some(id) = &answer_id
                && let Some(outcome) = super::once::answered(daemon, &row.id, id).await
            {
                return outcome;
            }
            let mut typed = super::queue::answer_input(&row.harness, &answer);
            // When a hook already said the agent asks, its question may not
            // be drawn yet: let the supervisor wait a moment for it.
            let wait_ms = if row.status == crate::api::ActivityStatus::NeedsApproval {
                1500
            } else {
                0
            };
            typed["wait_ms"] = wait_ms.into();
            let answered = live.link.call(sup::ANSWER, typed).await;
            match answered {
                // The supervisor looked and refused (no question on screen).
                Err(e) if e.code == ErrorCode::BadRequest => {
                    let refused = Err(ApiError::new(ErrorCode::Conflict, e.message));
                    super::once::record_answer(daemon, &row.id, &answer, answer_id.as_deref(), &refused).await;
                    refused
                }
                Err(e) => Err(ApiError::new(ErrorCode::Conflict, e.message)),
                Ok(result) => {
                    let answered = Ok(result);
                    super::once::record_answer(daemon, &row.id, &answer, answer_id.as_deref(), &answered).await;
                    answered
                }
            }
        }
        method::SESSIONS_LIST => {
            // It took no parameters before `local_only`: none is still fine.
            let list = if p.is_null() { Default::default() } else { params(p)? };
            to_value(crate::remote::sessions_list(daemon, list, super::sessions::list(daemon)).await?)
        }
        method::SESSIONS_RESUME => to_value(super::sessions::resume(daemon, params(p)?, false).await?),
        method::SESSIONS_FORK => to_value(super::sessions::resume(daemon, params(p)?, true).await?),
        method::SESSIONS_SHOW => {
            let crate::api::SessionRef { session } = params(p)?;
            to_value(super::sessions::show(daemon, &session).await?)
        }
        method::RUNS_LINEAGE => {
            let RunRef { run } = params(p)?;
            to_value(super::sessions::tree(daemon, &run).await?)
        }
        method::SUBAGENTS_LIST => to_value(super::sessions::subagents(daemon, params(p)?).await?),
        method::RUNS_RERUN => {
            let RerunParams { run, env } = params(p)?;
            let row = resolve_row(daemon, &run).await?;
            // Started with a profile: again with it, not just its family.
            let id = row.id.clone();
            let info = daemon
                .store
                .call(move |c| crate::store::harness::harness_info(c, &id))
                .await
                .map_err(ApiError::internal)?;
            let profile = info.profile;
            let again = StartParams {
                harness: profile.unwrap_or_else(|| row.harness.clone()),
                args: row.args.clone(),
                name: None,
                cwd: row.cwd.clone(),
                parent: row.parent_run_id.clone(),
                detached: row.detached,
                timeout_secs: row.timeout_secs,
                rows: Some(row.rows),
                cols: Some(row.cols),
                worktree: false,
                prompt: None,
                env,
                pass_env: info.pass_env,
                host: (row.host != "local").then(|| row.host.clone()),
                launch_id: None,
            };
            if again.host.is_some() {
                return to_value(crate::remote::start(daemon, again).await?);
            }
            to_value(super::start::start(daemon, again).await?)
        }
        method::RUNS_WAIT => {
            let RunRef { run } = params(p)?;
            let row = resolve_row(daemon, &run).await?;
            // Each attempt of a run is its own live run (account fallback):
            // between two, the run is live with no supervisor for a moment.
            const BETWEEN: std::time::Duration = std::time::Duration::from_secs(10);
            let mut between = tokio::time::Instant::now() + BETWEEN;
            loop {
                let mut changes = daemon.changes.subscribe();
                if let Some(live) = daemon.live(&row.id).filter(|l| !*l.ended.borrow()) {
                    let mut ended = live.ended.subscribe();
                    let _ = ended.wait_for(|e| *e).await;
                    between = tokio::time::Instant::now() + BETWEEN;
                    continue;
                }
                let now = record(daemon, &row.id).await?;
                if !now.state.is_live() || tokio::time::Instant::now() >= between {
                    return to_value(now);
                }
                let _ = tokio::time::timeout(std::time::Duration::from_millis(500), changes.recv()).await;
            }
        }
        method::RUNS_INDEX => {
            let RunRef { run } = params(p)?;
            let row = resolve_row(daemon, &run).await?;
            let bytes = std::fs::read(daemon.paths.output_index(&row.id)).unwrap_or_default();
            let samples: Vec<[u64; 2]> = TimeSample::decode_all(&bytes)
                .into_iter()
                .map(|s| [s.offset, s.at_ms])
                .collect();
            to_value(samples)
        }
        method::RUNS_HISTORY => {
            let crate::api::HistoryParams { run, before, max_lines } = params(p)?;
            let row = resolve_row(daemon, &run).await?;
            let paths = daemon.paths.clone();
            let max_lines = max_lines.min(HISTORY_MAX_LINES);
            let mut lines = tokio::task::spawn_blocking(move || {
                crate::history::scrolled_before(&paths, &row.id, before, row.rows, row.cols, max_lines)
            })
            .await
            .map_err(ApiError::internal)?;
            // The newest lines that fit one answer.
            let mut bytes = 0;
            let keep = lines
                .iter()
                .rev()
                .take_while(|l| {
                    bytes += l.len() + 8;
                    bytes <= crate::api::bounds::LIST_BYTES
                })
                .count();
            lines.drain(..lines.len() - keep);
            to_value(lines)
        }
        method::RUNS_SIZES => {
            let RunRef { run } = params(p)?;
            let row = resolve_row(daemon, &run).await?;
            // Empty for a run from before sizes were kept, or mirrored from
            // a host: replays then take the run's size.
            let bytes = std::fs::read(daemon.paths.sizes(&row.id)).unwrap_or_default();
            to_value(SizeChange::decode_all(&bytes))
        }
        method::TRANSCRIPT_READ => to_value(super::transcripts::read(daemon, params(p)?).await?),
        method::TRANSCRIPTS_SEARCH => {
            let search: crate::api::SearchParams = params(p)?;
            let local = super::transcripts::search(daemon, search.clone());
            to_value(crate::remote::search(daemon, search, local).await?)
        }
        method::HOOKS_REPORT => super::hooks::report(daemon, params(p)?).await,
        method::DAEMON_STATUS => {
            let live: Vec<String> = daemon
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
                home: daemon.paths.home.display().to_string(),
                live_runs,
                clients: daemon.clients.load(std::sync::atomic::Ordering::Relaxed),
                exe: super::own_exe().to_string(),
                supervisors: super::upgrade::supervisor_builds(daemon, live).await,
                screens: true,
            })
        }
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

/// Cancels a run and, following ownership edges, its non-detached children
/// (docs/design.md §4). Returns the ids asked to end.
pub async fn cancel_tree(daemon: &Arc<Daemon>, root: &str, force: bool) -> Result<Vec<String>, ApiError> {
    let mut asked = Vec::new();
    let mut todo = vec![root.to_string()];
    let mut first = true;
    while let Some(id) = todo.pop() {
        let key = id.clone();
        let (row, children) = daemon
            .store
            .call(move |c| Ok((runs::get_run(c, &key)?, runs::children(c, &key)?)))
            .await
            .map_err(ApiError::internal)?;
        let Some(row) = row.map(|r| daemon.held_ends.apply(r)) else {
            continue;
        };
        match cancel_one(daemon, &row, force).await {
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

async fn cancel_one(daemon: &Arc<Daemon>, row: &runs::RunRow, force: bool) -> Result<bool, ApiError> {
    if let Some(live) = daemon.live(&row.id) {
        let id = row.id.clone();
        let _ = daemon
            .store
            .call(move |c| runs::append_event(c, &id, "CANCEL_REQUESTED", &json!({ "force": force })))
            .await;
        live.link.call(sup::CANCEL, json!({ "force": force })).await?;
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
                        row.id
                    ),
                ));
            }
            Liveness::Unknown => {
                return Err(ApiError::new(
                    ErrorCode::NotRunning,
                    format!("run {} is lost and pid {pid} cannot be verified; not signalled", row.id),
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
            let id = row.id.clone();
            let _ = daemon
                .store
                .call(move |c| runs::append_event(c, &id, "SIGNALLED", &json!({ "signal": signal.as_str() })))
                .await;
            return Ok(true);
        }
    }
    if row.state.is_live() {
        return Err(ApiError::new(
            ErrorCode::NotRunning,
            format!("run {} is still starting; try again", row.id),
        ));
    }
    Err(super::start::ended_state_error(row))
}

/// A live run's record with what its status rests on and how old that is
/// (`rules` read once per answer: a list holds many runs).
fn with_evidence(
    daemon: &Daemon,
    rules: &crate::harness::status::Rules,
    mut record: crate::api::RunRecord,
) -> crate::api::RunRecord {
    if let Some(live) = daemon.live(&record.id) {
        super::queue::status_evidence(&live, rules, &mut record);
    }
    record
}

/// The most history rows one `runs.history` answer renders: the TUI's
/// default scrollback (`engine.history_lines`) and then some.
const HISTORY_MAX_LINES: usize = 50_000;

/// A connection's subscriptions by run: its byte stream and its screen are
/// two (a remote host's link mirrors a run's log and shows its screen).
fn subscription_key(run: &str, screen: bool) -> String {
    if screen {
        format!("{run}/screen")
    } else {
        run.to_string()
    }
}
