//! The methods of one run (those with a `run` in their parameters): the
//! dispatcher resolves the reference once, has the run's host answer for a
//! run that lives on one (`remote::forward`), and calls [`call`] with the
//! run's row for the rest.

use std::sync::Arc;

use serde_json::{Value, json};

use super::Daemon;
use super::connection::Subscriptions;
use super::dispatch::{HISTORY_MAX_LINES, cancel_tree_by, params, subscription_key, to_value, with_evidence};
use super::subscribe::{self, Outbox};
use crate::api::{
    AnswerParams, ApiError, AttachParams, AttachResult, CancelParams, DetachParams, ErrorCode, HistoryParams,
    MergeParams, PromptParams, RenameParams, RerunParams, ResizeParams, RunDetail, RunRef, RunSpec, SendParams,
    StartParams, WaitParams, WorktreeRmParams, bounds, method,
};
use crate::protocol::run_files::{SizeChange, TimeSample};
use crate::store::runs::{self, RunRow};

/// A method of one run, its parameters parsed and checked before the run
/// is resolved.
pub enum RunCall {
    Show,
    Send(SendParams),
    Cancel(CancelParams),
    Attach(AttachParams),
    Detach(DetachParams),
    Resize(ResizeParams),
    Answer(AnswerParams),
    Rerun(RerunParams),
    Rename(RenameParams),
    Wait(WaitParams),
    WaitChildren,
    Index,
    History(HistoryParams),
    Sizes,
    Lineage,
    Explain,
    Changes,
    Merge(MergeParams),
    WorktreeRm(WorktreeRmParams),
    /// `prompts.*`: the method's name, and its parameters.
    Prompts(&'static str, PromptParams),
}

impl RunCall {
    /// `name` with parameters `p`, and the reference to its run; `None`
    /// when `name` is not a method of one run.
    pub fn parse(name: &str, p: &Value) -> Option<Result<(RunCall, String), ApiError>> {
        let p = p.clone();
        let parsed = match name {
            method::RUNS_SHOW => of(p, |r: &RunRef| &r.run, |_| RunCall::Show),
            method::RUNS_WAIT => of(p, |w: &WaitParams| &w.run, RunCall::Wait),
            method::RUNS_WAIT_CHILDREN => of(p, |r: &RunRef| &r.run, |_| RunCall::WaitChildren),
            method::RUNS_INDEX => of(p, |r: &RunRef| &r.run, |_| RunCall::Index),
            method::RUNS_SIZES => of(p, |r: &RunRef| &r.run, |_| RunCall::Sizes),
            method::RUNS_LINEAGE => of(p, |r: &RunRef| &r.run, |_| RunCall::Lineage),
            method::RUNS_EXPLAIN => of(p, |r: &RunRef| &r.run, |_| RunCall::Explain),
            method::RUNS_SEND => of(p, |s: &SendParams| &s.run, RunCall::Send),
            method::RUNS_CANCEL => of(p, |c: &CancelParams| &c.run, RunCall::Cancel),
            method::RUNS_ATTACH => of(p, |a: &AttachParams| &a.run, RunCall::Attach),
            method::RUNS_DETACH => of(p, |d: &DetachParams| &d.run, RunCall::Detach),
            method::RUNS_RESIZE => of(p, |r: &ResizeParams| &r.run, RunCall::Resize),
            method::RUNS_ANSWER => of(p, |a: &AnswerParams| &a.run, RunCall::Answer),
            method::RUNS_RERUN => of(p, |r: &RerunParams| &r.run, RunCall::Rerun),
            method::RUNS_RENAME => of(p, |r: &RenameParams| &r.run, RunCall::Rename),
            method::RUNS_HISTORY => of(p, |h: &HistoryParams| &h.run, RunCall::History),
            method::RUNS_CHANGES => of(p, |r: &RunRef| &r.run, |_| RunCall::Changes),
            method::RUNS_MERGE => of(p, |m: &MergeParams| &m.run, RunCall::Merge),
            method::WORKTREE_RM => of(p, |w: &WorktreeRmParams| &w.run, RunCall::WorktreeRm),
            method::PROMPTS_LIST => of(
                p,
                |q: &PromptParams| &q.run,
                |q| RunCall::Prompts(method::PROMPTS_LIST, q),
            ),
            method::PROMPTS_EDIT => of(
                p,
                |q: &PromptParams| &q.run,
                |q| RunCall::Prompts(method::PROMPTS_EDIT, q),
            ),
            method::PROMPTS_DROP => of(
                p,
                |q: &PromptParams| &q.run,
                |q| RunCall::Prompts(method::PROMPTS_DROP, q),
            ),
            method::PROMPTS_SEND => of(
                p,
                |q: &PromptParams| &q.run,
                |q| RunCall::Prompts(method::PROMPTS_SEND, q),
            ),
            _ => return None,
        };
        Some(parsed.and_then(|(call, run)| call.check().map(|()| (call, run))))
    }

    /// What can be refused before the run is looked up.
    fn check(&self) -> Result<(), ApiError> {
        match self {
            RunCall::Send(s) => bounds::check("the prompt", &s.text, bounds::PROMPT),
            RunCall::Answer(a) => bounds::check("the answer", &a.answer, bounds::PROMPT),
            RunCall::Prompts(_, q) => bounds::check("the prompt", q.text.as_deref().unwrap_or(""), bounds::PROMPT),
            RunCall::Rename(r) => bounds::validate_name(&r.name),
            RunCall::Resize(ResizeParams { rows, cols, .. })
                if !(2..=1000).contains(rows) || !(2..=2000).contains(cols) =>
            {
                Err(ApiError::bad_request(format!("size {cols}x{rows} out of range")))
            }
            _ => Ok(()),
        }
    }
}

/// Parameters of type `T`, the run they name, and the call they make.
fn of<T: serde::de::DeserializeOwned>(
    p: Value,
    run: fn(&T) -> &String,
    call: fn(T) -> RunCall,
) -> Result<(RunCall, String), ApiError> {
    let typed: T = params(p)?;
    let reference = run(&typed).clone();
    Ok((call(typed), reference))
}

/// Answers `call` for the run `row` (its reference resolved).
pub async fn call(
    daemon: &Arc<Daemon>,
    outbox: &Outbox,
    subs: &Subscriptions,
    call: RunCall,
    row: RunRow,
) -> Result<Value, ApiError> {
    // Its output is gone: every way of reading it back says so.
    let reads_output = match &call {
        RunCall::Attach(a) => !a.screen,
        RunCall::Index | RunCall::History(_) | RunCall::Sizes => true,
        _ => false,
    };
    if let Some(at) = row.log_pruned_at.filter(|_| reads_output) {
        return Err(ApiError::new(
            ErrorCode::LogPruned,
            format!(
                "the output log of run {} was pruned at {} ([retention] in config.toml); its record stays (agents show {})",
                row.name,
                crate::store::format_ms(at),
                row.name
            ),
        ));
    }
    match call {
        RunCall::Changes => super::worktrees::changes(daemon, row).await,
        RunCall::Explain => to_value(super::queue::explain(daemon, &row)?),
        RunCall::Merge(MergeParams { run: _, squash }) => super::worktrees::merge(daemon, row, squash).await,
        RunCall::WorktreeRm(WorktreeRmParams { run: _, force }) => super::worktrees::remove(daemon, row, force).await,
        RunCall::Show => show(daemon, row).await,
        RunCall::Prompts(name, q) => super::prompts::call(daemon, name, q, row).await,
        RunCall::Rename(RenameParams { run: _, name }) => to_value(super::rename::rename(daemon, row, name).await?),
        RunCall::Send(send) => send_prompt(daemon, row, send).await,
        RunCall::Cancel(CancelParams { run: _, force, by }) => {
            let cancelled = cancel_tree_by(daemon, &row.id, force, by.as_deref()).await?;
            Ok(json!({ "run": row.id, "cancelling": cancelled }))
        }
        RunCall::Attach(attach) => attach_run(daemon, outbox, subs, row, attach),
        RunCall::Detach(DetachParams { run: _, screen, sub }) => {
            detach_run(daemon, outbox, subs, &row, screen, sub).await
        }
        RunCall::Resize(ResizeParams { run: _, rows, cols }) => {
            let live = daemon
                .live(&row.id)
                .ok_or_else(|| super::start::ended_state_error(&row))?;
            super::size::hold(daemon, &live, outbox.viewer, (rows, cols)).await?;
            Ok(Value::Null)
        }
        RunCall::Answer(answer) => answer_run(daemon, row, answer).await,
        RunCall::Rerun(RerunParams { run: _, env }) => rerun(daemon, row, env).await,
        // A wait whose client has gone no longer counts as awaiting.
        RunCall::Wait(WaitParams { takes_result, .. }) => to_value(
            outbox
                .unless_gone(super::waits::wait(daemon, &row.id, takes_result))
                .await?,
        ),
        RunCall::WaitChildren => to_value(outbox.unless_gone(super::waits::children(daemon, &row)).await?),
        RunCall::Index => {
            let bytes = std::fs::read(daemon.paths.output_index(&row.id)).unwrap_or_default();
            let samples: Vec<[u64; 2]> = TimeSample::decode_all(&bytes)
                .into_iter()
                .map(|s| [s.offset, s.at_ms])
                .collect();
            to_value(samples)
        }
        RunCall::History(HistoryParams {
            run: _,
            before,
            max_lines,
        }) => history(daemon, row, before, max_lines).await,
        RunCall::Sizes => {
            // Empty for a run from before sizes were kept, or mirrored from
            // a host: replays then take the run's size.
            let bytes = std::fs::read(daemon.paths.sizes(&row.id)).unwrap_or_default();
            to_value(SizeChange::decode_all(&bytes))
        }
        RunCall::Lineage => to_value(super::sessions::tree(daemon, &row.id).await?),
    }
}

/// `runs.send`: the prompt queued (or its retry's known state).
async fn send_prompt(daemon: &Arc<Daemon>, row: RunRow, send: SendParams) -> Result<Value, ApiError> {
    let SendParams {
        run: _,
        text,
        prompt_id,
    } = send;
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

/// `runs.attach`: a subscription to the run's output or screen, streamed
/// by a task of the connection's (one per run and screen id).
fn attach_run(
    daemon: &Arc<Daemon>,
    outbox: &Outbox,
    subs: &Subscriptions,
    row: RunRow,
    attach: AttachParams,
) -> Result<Value, ApiError> {
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
    let (screen, screen_sub) = (attach.screen, attach.sub);
    let acked = tokio::sync::watch::Sender::new(if screen { 0 } else { attach.offset.unwrap_or(0) });
    let acks = acked.subscribe();
    let task = tokio::spawn({
        let (daemon, outbox, id) = (daemon.clone(), outbox.clone(), id.clone());
        async move {
            let screen = attach.screen.then_some(attach.sub);
            let streamed = if attach.screen {
                let format = attach.screen_format.unwrap_or(crate::protocol::screen::FORMAT_V1);
                super::screens::stream(daemon, outbox.clone(), row, attach.sub, format, acks).await
            } else {
                subscribe::stream(daemon, outbox.clone(), row, attach).await
            };
            if let Err(e) = streamed {
                let mut end = json!({ "run": id, "final": true, "error": e.message });
                if let Some(sub) = screen {
                    end["screen"] = true.into();
                    end["sub"] = sub.into();
                }
                outbox.notify_in_stream(method::OUTPUT_END, end).await;
            }
        }
    });
    let sub = super::connection::Subscription { task, acked };
    let key = subscription_key(&id, screen.then_some(screen_sub));
    if let Some(old) = subs.lock().unwrap_or_else(|p| p.into_inner()).insert(key, sub) {
        old.task.abort();
    }
    to_value(AttachResult { run: record })
}

/// `runs.detach`: the connection's subscriptions to the run ended (all,
/// its output's, or one screen's); its size let go once none shows it.
async fn detach_run(
    daemon: &Arc<Daemon>,
    outbox: &Outbox,
    subs: &Subscriptions,
    row: &RunRow,
    screen: Option<bool>,
    sub: Option<u64>,
) -> Result<Value, ApiError> {
    let still_shown = {
        let mut subs = subs.lock().unwrap_or_else(|p| p.into_inner());
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
    if !still_shown && let Some(live) = daemon.live(&row.id) {
        super::size::release(daemon, &live, outbox.viewer).await;
    }
    Ok(Value::Null)
}

/// `runs.answer`: typed only while the question is on screen, once per
/// answer (or request) id.
async fn answer_run(daemon: &Arc<Daemon>, row: RunRow, params: AnswerParams) -> Result<Value, ApiError> {
    let AnswerParams {
        run: _,
        answer,
        answer_id,
        request,
    } = params;
    // A request is answered once: its id is the answer's.
    let answer_id = answer_id.or_else(|| request.clone());
    if let Some(id) = &answer_id {
        super::once::validate_id("answer id", id)?;
        if let Some(outcome) = super::once::answered(daemon, &row.id, id).await {
            return outcome;
        }
    }
    if let Some(request) = &request {
        super::approvals::check_request(daemon, &row, request).await?;
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
    let answered = live.link.answer(typed).await;
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

/// `runs.rerun`: the run started again as it was asked to be (its
/// profile, arguments, place and size), marked as a rerun of it.
async fn rerun(daemon: &Arc<Daemon>, row: RunRow, env: Vec<(String, String)>) -> Result<Value, ApiError> {
    // Started with a profile: again with it, not just its family.
    let id = row.id.clone();
    let info = daemon
        .store
        .call(move |c| crate::store::harness::harness_info(c, &id))
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
        .store
        .call(move |c| crate::store::runs::append_event(c, &new, "RERUN_OF", &json!({ "run": old, "name": old_name })))
        .await;
    to_value(started)
}

/// `runs.history`: the newest rows that scrolled off before `before`,
/// as many as fit one answer.
async fn history(daemon: &Arc<Daemon>, row: RunRow, before: u64, max_lines: usize) -> Result<Value, ApiError> {
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
async fn start_placed(daemon: &Arc<Daemon>, params: StartParams) -> Result<crate::api::RunRecord, ApiError> {
    match params.spec.host {
        Some(_) => crate::remote::start(&daemon.here(), params).await,
        None => super::start::start(daemon, params).await,
    }
}

/// `runs.show`: the run's record with its events, harness, lineage edge,
/// attempts and usage.
async fn show(daemon: &Arc<Daemon>, row: RunRow) -> Result<Value, ApiError> {
    let id = row.id.clone();
    let (events, info, subagents, edge, attempts, sources, mut waiting, children) = daemon
        .store
        .call(move |c| {
            Ok((
                runs::events(c, &id)?,
                crate::store::harness::harness_info(c, &id)?,
                crate::store::harness::subagents(c, &id)?,
                crate::store::lineage::edge_of(c, &id)?,
                crate::store::attempts::list(c, &id)?,
                crate::store::usage::run_sources(c, &id)?,
                crate::store::prompts::waiting(c, &[id.as_str()])?,
                runs::children(c, &id)?,
            ))
        })
        .await
        .map_err(ApiError::internal)?;
    let prices = crate::transcript::price::PriceTable::new(daemon.config().prices);
    let mut run = with_evidence(
        daemon,
        &super::queue::rules(daemon),
        row.to_record(),
        waiting.remove(&row.id),
    );
    let working = children
        .iter()
        .filter(|c| c.state.is_live() && c.status.is_working())
        .count();
    super::listing::show_children_working(&mut run, working);
    to_value(RunDetail {
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
    })
}
