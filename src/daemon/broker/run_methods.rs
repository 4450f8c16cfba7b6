//! The methods of one run (those with a `run` in their parameters): the
//! route (`dispatch::call`) checks their parameters, resolves the run once,
//! has the run's host answer for a run that lives on one
//! (`remote::answer_there`), and calls these with the run's row for the rest.

use std::sync::Arc;

use serde_json::json;

use super::connection::Subscriptions;
use super::dispatch::{HISTORY_MAX_LINES, subscription_key, with_evidence};
use super::subscribe::{self, Outbox};
use crate::api::{
    AnswerParams, ApiError, AttachParams, AttachResult, CancelParams, Cancelling, DetachParams, Done, ErrorCode,
    HistoryParams, MergeParams, PromptParams, RenameParams, RerunParams, ResizeParams, RunDetail, RunRecord, RunRef,
    RunSpec, SendParams, SendResult, StartParams, WaitParams, WorktreeRmParams, bounds,
};
use crate::daemon::Daemon;
use crate::protocol::run_files::{SizeChange, TimeSample};
use crate::store::runs::RunRow;

/// The parameters of a method of one run: the run they name, and what can
/// be refused before it is looked up.
pub(super) trait OfRun {
    fn run(&self) -> &str;

    fn check(&self) -> Result<(), ApiError> {
        Ok(())
    }
}

macro_rules! of_run {
    ($($params:ty),*) => {$(
        impl OfRun for $params {
            fn run(&self) -> &str {
                &self.run
            }
        }
    )*};
}

of_run!(
    RunRef,
    WaitParams,
    CancelParams,
    AttachParams,
    DetachParams,
    RerunParams,
    HistoryParams,
    MergeParams,
    WorktreeRmParams
);

impl OfRun for SendParams {
    fn run(&self) -> &str {
        &self.run
    }

    fn check(&self) -> Result<(), ApiError> {
        // Nothing to type: refused, not stored and queued (as mail is).
        if self.text.trim().is_empty() {
            return Err(ApiError::bad_request("the prompt is empty"));
        }
        bounds::check("the prompt", &self.text, bounds::PROMPT)
    }
}

impl OfRun for AnswerParams {
    fn run(&self) -> &str {
        &self.run
    }

    fn check(&self) -> Result<(), ApiError> {
        bounds::check("the answer", &self.answer, bounds::PROMPT)
    }
}

impl OfRun for PromptParams {
    fn run(&self) -> &str {
        &self.run
    }

    fn check(&self) -> Result<(), ApiError> {
        bounds::check("the prompt", self.text.as_deref().unwrap_or(""), bounds::PROMPT)
    }
}

impl OfRun for RenameParams {
    fn run(&self) -> &str {
        &self.run
    }

    fn check(&self) -> Result<(), ApiError> {
        bounds::validate_name(&self.name)
    }
}

impl OfRun for ResizeParams {
    fn run(&self) -> &str {
        &self.run
    }

    fn check(&self) -> Result<(), ApiError> {
        let ResizeParams { rows, cols, .. } = self;
        if !(2..=1000).contains(rows) || !(2..=2000).contains(cols) {
            return Err(ApiError::bad_request(format!("size {cols}x{rows} out of range")));
        }
        Ok(())
    }
}

/// Refused for a run whose output log was pruned: every way of reading
/// its output back says so.
pub(super) fn output_kept(row: &RunRow) -> Result<(), ApiError> {
    match row.log_pruned_at {
        None => Ok(()),
        Some(at) => Err(ApiError::new(
            ErrorCode::LogPruned,
            format!(
                "the output log of run {} was pruned at {} ([retention] in config.toml); its record stays (agents show {})",
                row.name,
                crate::store::format_ms(at),
                row.name
            ),
        )),
    }
}

/// `runs.cancel`: the run and the children it owns asked to end.
pub(super) async fn cancel(daemon: &Arc<Daemon>, row: RunRow, p: CancelParams) -> Result<Cancelling, ApiError> {
    // Asked by a run only if it proves it; else by the user.
    let by = daemon.engine.proofs.vouch(p.by, p.proof.as_deref());
    let cancelling = crate::engine::cancel::cancel_tree_by(&daemon.engine, &row.id, p.force, by.as_deref()).await?;
    Ok(Cancelling {
        run: row.id,
        cancelling,
    })
}

/// `runs.resize`: the size this connection's viewer asks the run's screen to take.
pub(super) async fn resize(
    daemon: &Arc<Daemon>,
    outbox: &Outbox,
    row: RunRow,
    p: ResizeParams,
) -> Result<Done, ApiError> {
    let live = daemon
        .engine
        .live(&row.id)
        .ok_or_else(|| crate::engine::start::ended_state_error(&row))?;
    outbox.sized.lock().insert(row.id.clone());
    crate::engine::size::hold(&daemon.engine, &live, outbox.viewer, (p.rows, p.cols)).await?;
    Ok(Done)
}

/// `runs.index`: `[offset, at_ms]` samples of the run's output log.
pub(super) fn index(daemon: &Daemon, row: RunRow) -> Result<Vec<[u64; 2]>, ApiError> {
    output_kept(&row)?;
    let bytes = std::fs::read(daemon.engine.paths.output_index(&row.id)).unwrap_or_default();
    Ok(TimeSample::decode_all(&bytes)
        .into_iter()
        .map(|s| [s.offset, s.at_ms])
        .collect())
}

/// `runs.sizes`: the screen's size from each offset of the log on.
pub(super) fn sizes(daemon: &Daemon, row: RunRow) -> Result<Vec<SizeChange>, ApiError> {
    output_kept(&row)?;
    // Empty for a run from before sizes were kept, or mirrored from a
    // host: replays then take the run's size.
    let bytes = std::fs::read(daemon.engine.paths.sizes(&row.id)).unwrap_or_default();
    Ok(SizeChange::decode_all(&bytes))
}

/// `runs.send`: the prompt queued (or its retry's known state).
pub(super) async fn send_prompt(daemon: &Arc<Daemon>, row: RunRow, send: SendParams) -> Result<SendResult, ApiError> {
    let SendParams {
        run: _,
        text,
        prompt_id,
    } = send;
    // A retry of a prompt this run holds learns its state, even
    // once the run has ended.
    if let Some(id) = &prompt_id
        && let Some(known) = crate::engine::once::known_prompt(&daemon.engine, &row.id, id).await?
    {
        return Ok(known);
    }
    if !row.state.is_live() {
        return Err(crate::engine::start::ended_state_error(&row));
    }
    let prompt_id = prompt_id.unwrap_or_else(|| ulid::Ulid::new().to_string());
    crate::engine::queue::enqueue(&daemon.engine, &row.id, &prompt_id, &text).await
}

/// `runs.attach`: a subscription to the run's output or screen, streamed
/// by a task of the connection's (one per run and screen id).
pub(super) fn attach_run(
    daemon: &Arc<Daemon>,
    outbox: &Outbox,
    subs: &Subscriptions,
    row: RunRow,
    attach: AttachParams,
) -> Result<AttachResult, ApiError> {
    if !attach.screen {
        output_kept(&row)?;
    }
    if let Some(offset) = attach.offset {
        // The log only grows, so no frame ever named an offset past
        // its end: refuse one rather than report it "caught up".
        let len = std::fs::metadata(daemon.engine.paths.output_log(&row.id))
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
    let (screen, screen_sub) = (attach.screen, attach.sub);
    let acked = tokio::sync::watch::Sender::new(if screen { 0 } else { attach.offset.unwrap_or(0) });
    let acks = acked.subscribe();
    let task = tokio::spawn({
        let (daemon, outbox, id) = (daemon.clone(), outbox.clone(), id.clone());
        async move {
            let screen = attach.screen.then_some(attach.sub);
            let streamed = if attach.screen {
                let format = attach.screen_format.unwrap_or(crate::protocol::screen::FORMAT_V1);
                let to = super::screen_relay::To {
                    sub: attach.sub,
                    format,
                    fit: attach.fit,
                };
                super::screen_relay::stream(daemon.engine.clone(), outbox.clone(), row, to, acks).await
            } else {
                subscribe::stream(daemon.engine.clone(), outbox.clone(), row, attach).await
            };
            if let Err(e) = streamed {
                let end = crate::api::OutputEnd {
                    run: id,
                    last: true,
                    error: Some(e.message),
                    screen: screen.is_some(),
                    sub: screen,
                    ..Default::default()
                };
                outbox.tell_in_stream(end).await;
            }
        }
    });
    let sub = super::connection::Subscription { task, acked };
    let key = subscription_key(&id, screen.then_some(screen_sub));
    if let Some(old) = subs.lock().insert(key, sub) {
        old.task.abort();
    }
    Ok(AttachResult { run: record })
}

/// `runs.detach`: the connection's subscriptions to the run ended (all,
/// its output's, or one screen's); its size let go once none shows it.
pub(super) async fn detach_run(
    daemon: &Arc<Daemon>,
    outbox: &Outbox,
    subs: &Subscriptions,
    row: &RunRow,
    p: DetachParams,
) -> Result<Done, ApiError> {
    let DetachParams { run: _, screen, sub } = p;
    let still_shown = {
        let mut subs = subs.lock();
        let bytes = subscription_key(&row.id, None);
        let screens = subscription_key(&row.id, Some(0));
        subs.retain(|key, held| {
            let ends = match key == &bytes {
                true => screen != Some(true),
                false => {
                    key.starts_with(&screens)
                        && screen != Some(false)
                        && sub.is_none_or(|n| key == &subscription_key(&row.id, Some(n)))
                }
            };
            if ends {
                held.task.abort();
            }
            !ends
        });
        subs.keys().any(|key| key.starts_with(&screens))
    };
    // A connection that still shows the run keeps its size.
    if !still_shown && let Some(live) = daemon.engine.live(&row.id) {
        crate::engine::size::release(&daemon.engine, &live, outbox.viewer).await;
    }
    Ok(Done)
}

/// `runs.answer`: typed only while the question is on screen, once per
/// answer (or request) id.
pub(super) async fn answer_run(
    daemon: &Arc<Daemon>,
    row: RunRow,
    params: AnswerParams,
) -> Result<serde_json::Value, ApiError> {
    let AnswerParams {
        run: _,
        answer,
        answer_id,
        request,
    } = params;
    // A request is answered once: its id is the answer's.
    let answer_id = answer_id.or_else(|| request.clone());
    if let Some(id) = &answer_id {
        crate::engine::once::validate_id("answer id", id)?;
        if let Some(outcome) = crate::engine::once::answered(&daemon.engine, &row.id, id).await {
            return outcome;
        }
    }
    // An ended run's question is gone with it: said as its end.
    let live = daemon
        .engine
        .live(&row.id)
        .ok_or_else(|| crate::engine::start::ended_state_error(&row))?;
    if let Some(request) = &request {
        crate::daemon::approvals::check_request(&daemon.reach(), &row, request).await?;
    }
    // One answer (or prompt) typed at a time; a repeat of this
    // answer's id waits here, then finds its outcome.
    let _typing = live.delivery.lock().await;
    if let Some(id) = &answer_id
        && let Some(outcome) = crate::engine::once::answered(&daemon.engine, &row.id, id).await
    {
        return outcome;
    }
    let mut typed = crate::engine::queue::answer_input(&row.harness, &answer);
    // When a hook already said the agent asks, its question may not
    // be drawn yet: let the supervisor wait a moment for it.
    let wait_ms = if row.status == crate::api::ActivityStatus::NeedsApproval {
        1500
    } else {
        0
    };
    typed.wait_ms = wait_ms;
    // Once-only there too: a daemon that dies between typing it and
    // recording so is asked again by the caller, and the supervisor knows.
    typed.id = answer_id.clone();
    live.input_went_in();
    let answered = live.link.answer(typed).await;
    match answered {
        // The supervisor looked and refused (no question on screen).
        Err(e) if e.code == ErrorCode::BadRequest => {
            let refused = Err(ApiError::new(ErrorCode::Conflict, e.message));
            crate::engine::once::record_answer(&daemon.engine, &row.id, &answer, answer_id.as_deref(), &refused).await;
            refused
        }
        Err(e) => Err(ApiError::new(ErrorCode::Conflict, e.message)),
        Ok(result) => {
            let answered = Ok(result);
            crate::engine::once::record_answer(&daemon.engine, &row.id, &answer, answer_id.as_deref(), &answered).await;
            answered
        }
    }
}

/// `runs.rerun`: the run started again as it was asked to be (its
/// profile, arguments, place and size), marked as a rerun of it.
pub(super) async fn rerun(
    daemon: &Arc<Daemon>,
    row: RunRow,
    env: Vec<(String, String)>,
) -> Result<RunRecord, ApiError> {
    // Started with a profile: again with it, not just its family.
    let id = row.id.clone();
    let info = daemon
        .engine
        .store
        .harness()
        .info(&id)
        .await
        .map_err(ApiError::internal)?;
    let profile = info.profile;
    let again = StartParams {
        spec: RunSpec {
            harness: profile.unwrap_or_else(|| row.harness.clone()),
            args: row.args.clone(),
            name: None,
            cwd: row.cwd.clone(),
            detached: row.detached,
            timeout_secs: row.timeout_secs,
            worktree: false,
            prompt: None,
            pass_env: info.pass_env,
            host: (row.host != "local").then(|| row.host.clone()),
            // In its arguments already.
            model: None,
            sandbox: row.sandbox,
        },
        parent: row.parent_run_id.clone(),
        rows: Some(row.rows),
        cols: Some(row.cols),
        env,
        launch_id: None,
        team: None,
        placed: false,
    };
    let started = start_rerun(daemon, &row, again).await?;
    // On the new run: which run it is a rerun of (Record, Lineage).
    let (new, old, old_name) = (started.id.clone(), row.id.clone(), row.name.clone());
    let _ = daemon
        .engine
        .store
        .runs()
        .append_event(&new, "RERUN_OF", json!({ "run": old, "name": old_name }))
        .await;
    Ok(started)
}

/// `runs.history`: the newest rows that scrolled off before `before`,
/// as many as fit one answer.
pub(super) async fn history(daemon: &Arc<Daemon>, row: RunRow, p: HistoryParams) -> Result<Vec<String>, ApiError> {
    output_kept(&row)?;
    let HistoryParams {
        run: _,
        before,
        max_lines,
    } = p;
    let paths = daemon.engine.paths.clone();
    let max_lines = max_lines.min(HISTORY_MAX_LINES);
    let mut lines = tokio::task::spawn_blocking(move || {
        crate::protocol::rebuild::scrolled_before(&paths, &row.id, before, row.rows, row.cols, max_lines)
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
    Ok(lines)
}

/// Starts `again` as a rerun of `row`, named as it is (`worker`, or
/// `worker-2` while a live run is named `worker`: `store::names::repeated`). Two reruns at once may
/// pick the same name: the one that loses picks again; a name that cannot
/// be had lets the engine name the run.
async fn start_rerun(
    daemon: &Arc<Daemon>,
    row: &RunRow,
    mut again: StartParams,
) -> Result<crate::api::RunRecord, ApiError> {
    for _ in 0..3 {
        let name = daemon
            .engine
            .store
            .names()
            .repeated(&row.id)
            .await
            .map_err(ApiError::internal)?;
        again.spec.name = name.filter(|n| crate::api::bounds::validate_name(n).is_ok());
        match start_placed(daemon, again.clone()).await {
            Err(e) if e.code == crate::api::ErrorCode::Conflict && again.spec.name.is_some() => continue,
            other => return other,
        }
    }
    again.spec.name = None;
    start_placed(daemon, again).await
}

/// A start on its host: a remote one through the host's link (`runs.start`
/// from a client is placed before dispatch, `remote::place`).
async fn start_placed(daemon: &Arc<Daemon>, params: StartParams) -> Result<RunRecord, ApiError> {
    match params.spec.host {
        Some(_) => crate::remote::start(&daemon.here(), params).await,
        None => crate::engine::start::start(&daemon.engine, params).await,
    }
}

/// `runs.show`: the run's record with its events, harness, lineage edge,
/// attempts and usage.
pub(super) async fn show(daemon: &Arc<Daemon>, row: RunRow) -> Result<RunDetail, ApiError> {
    let id = row.id.clone();
    let crate::store::run_calls::Detail {
        events,
        harness: info,
        subagents,
        edge,
        attempts,
        sources,
        mut waiting,
        undelivered,
        children,
    } = daemon
        .engine
        .store
        .runs()
        .detail(&id)
        .await
        .map_err(ApiError::internal)?;
    let prices = crate::transcript::price::PriceTable::new(daemon.engine.config().prices);
    let mut run = with_evidence(
        &daemon.engine,
        daemon.engine.live(&row.id).as_deref(),
        &crate::engine::queue::rules(&daemon.engine),
        row.to_record(),
        waiting.remove(&row.id),
    );
    let working = children
        .iter()
        .filter(|c| c.state.is_live() && c.status.is_working())
        .count();
    super::listing::show_children_working(&mut run, working);
    // A live run here: its log's length now (the stored count trails an
    // unwatched run by its supervisor's pace, up to ten seconds).
    if run.state.is_live() && row.host == "local" {
        let log = std::fs::metadata(daemon.engine.paths.output_log(&row.id));
        run.output_bytes = run.output_bytes.max(log.map_or(0, |m| m.len()));
    }
    Ok(RunDetail {
        run,
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
        undelivered: undelivered
            .into_iter()
            .map(|u| crate::api::UndeliveredPrompt {
                id: u.id,
                text: u.text,
                queued_at: crate::store::format_ms(u.queued_at),
                reason: u.reason,
            })
            .collect(),
    })
}
