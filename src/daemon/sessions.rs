//! Sessions as their own records, and resuming or forking one natively
//! (docs/design.md §7): a new run of the same harness family in the same cwd, never
//! another family, refused while a run of that session may still be alive.

use std::sync::Arc;

use serde_json::json;

use crate::api::{
    ApiError, ErrorCode, Lineage, ResumeParams, RunRecord, RunSpec, RunSubagent, SessionDetail, SessionRecord,
    StartParams, SubagentsParams,
};
use crate::engine::Engine;
use crate::store::runs;
use crate::store::sessions::Found;

/// Every session, newest first, with the run that last held it.
/// `sessions.list`: without `all`, child conversations (a subagent's, or
/// a child run's) are left out, as a conversation list shows its top ones.
pub async fn list(engine: &Arc<Engine>, all: bool) -> Result<Vec<SessionRecord>, ApiError> {
    engine.store.sessions().list(all).await.map_err(ApiError::internal)
}

/// `sessions.show`: one session with its runs, totals and subagents.
pub async fn show(engine: &Arc<Engine>, reference: &str) -> Result<SessionDetail, ApiError> {
    let (session, _, _) = find(engine, reference).await?;
    engine
        .store
        .lineage()
        .session(&session)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::new(ErrorCode::UnknownSession, format!("no session matches '{reference}'")))
}

/// `runs.lineage`: the tree around a run.
pub async fn tree(engine: &Arc<Engine>, run: &str) -> Result<Lineage, ApiError> {
    let row = crate::engine::start::resolve_row(engine, run).await?;
    engine
        .store
        .lineage()
        .around(&row.id)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::new(ErrorCode::UnknownRun, format!("no run matches '{run}'")))
}

/// `subagents.list`: the subagents of the runs named (full ids).
pub async fn subagents(engine: &Arc<Engine>, p: SubagentsParams) -> Result<Vec<RunSubagent>, ApiError> {
    if p.runs.len() > SubagentsParams::MAX_RUNS {
        return Err(ApiError::bad_request(format!(
            "at most {} runs at a time",
            SubagentsParams::MAX_RUNS
        )));
    }
    engine
        .store
        .lineage()
        .subagents_of(p.runs)
        .await
        .map_err(ApiError::internal)
}

/// The session a reference names (full id or unique prefix), its harness
/// family, and the run that last held it.
pub(super) async fn find(
    engine: &Arc<Engine>,
    reference: &str,
) -> Result<(String, String, Option<runs::RunRow>), ApiError> {
    let found = engine
        .store
        .sessions()
        .find(reference)
        .await
        .map_err(ApiError::internal)?;
    match found {
        Found::One(id, harness, run) => Ok((id, harness, run.map(|r| engine.held_ends.apply(*r)))),
        Found::Many(ids) => Err(ApiError::new(
            ErrorCode::AmbiguousRun,
            format!("'{reference}' matches several sessions: {}", ids.join(", ")),
        )),
        Found::Nothing => Err(ApiError::new(
            ErrorCode::UnknownSession,
            format!("no session matches '{reference}'"),
        )),
    }
}

/// Starts a run that resumes (or forks) a session in its own harness.
pub async fn resume(engine: &Arc<Engine>, p: ResumeParams, fork: bool) -> Result<RunRecord, ApiError> {
    // A repeat of a launch id gets the run the first attempt started, even
    // though that run now makes the session's last run live (issue #5).
    let _once = match &p.launch_id {
        Some(launch_id) => match crate::engine::once::resuming(engine, launch_id).await? {
            Ok(guard) => Some(guard),
            Err(run) => return Ok(run.to_record()),
        },
        None => None,
    };
    let (session, family, last) = find(engine, &p.session).await?;
    let Some(last) = last else {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("session {session} has no run to take its cwd and harness from"),
        ));
    };
    let behind = (!fork && last.state.is_live()).then_some(&last);
    if behind.is_some() && !p.queue {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "run {} ({}) of session {session} may still be alive: attach to it, cancel it, or queue the resume behind it (--queue)",
                last.name, last.id
            ),
        ));
    }
    let adapter = crate::harness::adapter_for(&family)
        .ok_or_else(|| ApiError::bad_request(format!("no adapter for harness family '{family}'")))?;
    // Started with a profile: again with it (same family, same account).
    // The variables named with `--env` are passed again, values from this
    // request's environment.
    let info = engine
        .store
        .harness()
        .info(&last.id)
        .await
        .map_err(ApiError::internal)?;
    let pass_env = info.pass_env;
    let profile = info.profile.filter(|p| engine.config().profiles.contains_key(p));
    let blocker = if fork {
        None
    } else {
        crate::engine::recover::native_blocker(engine, adapter, &session, &last, &p.env).await?
    };
    let mut launch = launch_args(engine, adapter, &session, &family, blocker.as_deref(), fork).await?;
    launch.args.extend(p.args);
    let name = resumed_name(engine, &last, fork, blocker.is_some()).await?;
    let start = StartParams {
        spec: RunSpec {
            harness: profile.unwrap_or_else(|| last.harness.clone()),
            args: launch.args.clone(),
            name,
            cwd: last.cwd.clone(),
            detached: false,
            timeout_secs: None,
            worktree: false,
            prompt: launch.prompt.clone(),
            pass_env,
            // The conversation goes on in the box it had.
            sandbox: last.sandbox,
            ..RunSpec::default()
        },
        parent: None,
        rows: Some(last.rows),
        cols: Some(last.cols),
        env: p.env,
        launch_id: p.launch_id.clone(),
        placed: p.placed,
        ..StartParams::default()
    };
    let record = match behind {
        Some(behind) => crate::engine::start::start_after(engine, start, behind).await?,
        None => crate::engine::start::start(engine, start).await?,
    };
    if !fork && blocker.is_none() {
        // The conversation goes on in the same files: tail them again.
        engine.transcripts.watch_session(&engine.store, &session).await;
    }
    note_resumed(
        engine,
        &record.id,
        &session,
        &last.id,
        &launch,
        blocker.as_deref(),
        fork,
    )
    .await;
    Ok(record)
}

/// How a resumed or forked session is launched.
struct Launch {
    args: Vec<String>,
    /// `native`, or `reconstructed` from the old conversation's messages.
    mode: &'static str,
    /// The context typed in as a first prompt, for a harness that takes
    /// none on its command line.
    prompt: Option<String>,
    /// Messages kept of how many, when reconstructed.
    kept: (usize, i64),
}

/// The harness's own resume or fork arguments, or, where `blocker` says
/// native resume is impossible, the same family started on the old
/// conversation's recent part.
async fn launch_args(
    engine: &Arc<Engine>,
    adapter: &'static dyn crate::harness::Adapter,
    session: &str,
    family: &str,
    blocker: Option<&str>,
    fork: bool,
) -> Result<Launch, ApiError> {
    let Some(why) = blocker else {
        let args = match fork {
            true => adapter.fork_args(session),
            false => adapter.resume_args(session),
        }
        .map_err(|e| ApiError::new(ErrorCode::Conflict, e))?;
        return Ok(Launch {
            args,
            mode: "native",
            prompt: None,
            kept: (0, 0),
        });
    };
    let (messages, total) = crate::engine::recover::recent_messages(engine, session).await?;
    if messages.is_empty() {
        return Err(crate::engine::recover::nothing_to_rebuild(session, why));
    }
    let context = crate::engine::recover::reconstruct(family, session, why, &messages, total);
    let (args, prompt) = match adapter.prompt_args(&context) {
        Some(args) => (args, None),
        // Typed in: one line, so no newline submits it early.
        None => (Vec::new(), Some(context.lines().collect::<Vec<_>>().join(" / "))),
    };
    Ok(Launch {
        args,
        mode: "reconstructed",
        prompt,
        kept: (messages.len(), total),
    })
}

/// The name of the run a session goes on in.
async fn resumed_name(
    engine: &Arc<Engine>,
    last: &crate::store::runs::RunRow,
    fork: bool,
    reconstructed: bool,
) -> Result<Option<String>, ApiError> {
    // A resumed conversation keeps the name the user (or its first prompt)
    // gave the run it goes on from, numbered while a live run wears it; a
    // fork is a new conversation. A reconstructed one keeps even a
    // placeholder, numbered (its first prompt is the context, not a task
    // to name it after).
    let names = engine.store.names();
    let repeated = match fork {
        true => None,
        false => names.repeated(&last.id).await.map_err(ApiError::internal)?,
    };
    Ok(match repeated {
        Some(name) => Some(name),
        None if reconstructed => Some(names.unique(&last.name).await.map_err(ApiError::internal)?),
        None => None,
    })
}

/// The new run says which run and session it goes on from, and what of
/// the old conversation it was rebuilt from.
async fn note_resumed(
    engine: &Arc<Engine>,
    run: &str,
    session: &str,
    last: &str,
    launch: &Launch,
    blocker: Option<&str>,
    fork: bool,
) {
    let kind = if fork { "FORK_OF" } else { "RESUME_OF" };
    let mut data = json!({ "session": session, "run": last, "mode": launch.mode });
    if let Some(why) = blocker {
        data["why"] = json!(why);
    }
    let runs = engine.store.runs();
    if runs.append_event(run, kind, data).await.is_ok()
        && let Some(why) = blocker
    {
        let data = json!({ "session": session, "why": why, "messages": launch.kept.0, "of": launch.kept.1 });
        let _ = runs.append_event(run, "CONTEXT_RECONSTRUCTED", data).await;
    }
}
