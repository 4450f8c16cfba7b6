//! Sessions as their own records, and resuming or forking one natively
//! (docs/design.md §7): a new run of the same harness family in the same cwd, never
//! another family, refused while a run of that session may still be alive.

use std::sync::Arc;

use rusqlite::{OptionalExtension, params};
use serde_json::json;

use super::Daemon;
use crate::api::{
    ApiError, ErrorCode, Lineage, ResumeParams, RunRecord, RunState, RunSubagent, SessionDetail, SessionRecord,
    StartParams, SubagentsParams,
};
use crate::store::{StoreError, format_ms, lineage, runs};

/// Which of a session's runs holds it: the live one, else the newest.
const HOLDER_ORDER: &str = "ORDER BY state IN ('pending', 'starting', 'running') DESC, created_at DESC, id DESC";

/// Every session, newest first, with the run that last held it.
/// `sessions.list`: without `all`, child conversations (a subagent's, or
/// a child run's) are left out, as a conversation list shows its top ones.
pub async fn list(daemon: &Arc<Daemon>, all: bool) -> Result<Vec<SessionRecord>, ApiError> {
    daemon
        .store
        .call(move |c| {
            // The holder: the newest run that held the session, the live
            // one first (a resumed run, not the cancelled one it resumed);
            // else the run it was recorded with. Whether it is a child
            // conversation is the first run's to say.
            let mut stmt = c.prepare(&format!(
                "WITH holders AS (
                     SELECT session_id, id, ROW_NUMBER() OVER (PARTITION BY session_id {HOLDER_ORDER}) AS n
                     FROM runs WHERE session_id IS NOT NULL)
                 SELECT s.id, s.harness, r.id, r.name, r.state, r.cwd, s.transcript_path, s.created_at
                 FROM sessions s
                 LEFT JOIN holders h ON h.session_id = s.id AND h.n = 1
                 LEFT JOIN runs r ON r.id = COALESCE(h.id, s.run_id)
                 LEFT JOIN runs o ON o.id = s.run_id
                 WHERE ?1 OR (o.parent_run_id IS NULL AND s.id NOT IN (
                     SELECT sa.session_id FROM subagents sa JOIN runs p ON p.id = sa.run_id
                     WHERE sa.session_id IS NOT NULL AND sa.session_id != COALESCE(p.session_id, '')))
                 ORDER BY s.created_at DESC LIMIT 1000",
            ))?;
            let rows = stmt
                .query_map([all], |r| {
                    let state: Option<String> = r.get(4)?;
                    Ok(SessionRecord {
                        id: r.get(0)?,
                        harness: r.get(1)?,
                        run_id: r.get(2)?,
                        run_name: r.get(3)?,
                        run_state: state.as_deref().and_then(RunState::parse),
                        cwd: r.get(5)?,
                        transcript_path: r.get(6)?,
                        created_at: format_ms(r.get(7)?),
                        host: "local".into(),
                    })
                })?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
        .await
        .map_err(ApiError::internal)
}

/// `sessions.show`: one session with its runs, totals and subagents.
pub async fn show(daemon: &Arc<Daemon>, reference: &str) -> Result<SessionDetail, ApiError> {
    let (session, _, _) = find(daemon, reference).await?;
    let id = session.clone();
    daemon
        .store
        .call(move |c| lineage::session_detail(c, &id))
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::new(ErrorCode::UnknownSession, format!("no session matches '{reference}'")))
}

/// `runs.lineage`: the tree around a run.
pub async fn tree(daemon: &Arc<Daemon>, run: &str) -> Result<Lineage, ApiError> {
    let row = super::start::resolve_row(daemon, run).await?;
    let id = row.id.clone();
    daemon
        .store
        .call(move |c| lineage::lineage(c, &id))
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::new(ErrorCode::UnknownRun, format!("no run matches '{run}'")))
}

/// `subagents.list`: the subagents of the runs named (full ids).
pub async fn subagents(daemon: &Arc<Daemon>, p: SubagentsParams) -> Result<Vec<RunSubagent>, ApiError> {
    if p.runs.len() > SubagentsParams::MAX_RUNS {
        return Err(ApiError::bad_request(format!(
            "at most {} runs at a time",
            SubagentsParams::MAX_RUNS
        )));
    }
    daemon
        .store
        .call(move |c| lineage::subagents_of(c, &p.runs))
        .await
        .map_err(ApiError::internal)
}

enum Found {
    One(String, String, Option<Box<runs::RunRow>>),
    Many(Vec<String>),
    Nothing,
}

/// The session a reference names (full id or unique prefix), its harness
/// family, and the run that last held it.
pub(super) async fn find(
    daemon: &Arc<Daemon>,
    reference: &str,
) -> Result<(String, String, Option<runs::RunRow>), ApiError> {
    let r = reference.to_string();
    let found = daemon
        .store
        .call(move |c| {
            let mut stmt = c.prepare("SELECT id, harness FROM sessions WHERE id = ?1 OR id LIKE ?1 || '%' LIMIT 3")?;
            let hits: Vec<(String, String)> = stmt
                .query_map(params![r], |row| Ok((row.get(0)?, row.get(1)?)))?
                .collect::<Result<_, _>>()?;
            let (id, harness) = match hits.iter().find(|(id, _)| *id == r) {
                Some(exact) => exact.clone(),
                None if hits.len() == 1 => hits[0].clone(),
                None if hits.is_empty() => return Ok::<_, StoreError>(Found::Nothing),
                None => return Ok(Found::Many(hits.into_iter().map(|h| h.0).collect())),
            };
            let run_id: Option<String> = c
                .query_row(
                    &format!("SELECT id FROM runs WHERE session_id = ?1 {HOLDER_ORDER} LIMIT 1"),
                    [&id],
                    |row| row.get(0),
                )
                .optional()?;
            let run = match run_id {
                Some(run_id) => runs::get_run(c, &run_id)?.map(Box::new),
                None => None,
            };
            Ok(Found::One(id, harness, run))
        })
        .await
        .map_err(ApiError::internal)?;
    match found {
        Found::One(id, harness, run) => Ok((id, harness, run.map(|r| daemon.held_ends.apply(*r)))),
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
pub async fn resume(daemon: &Arc<Daemon>, p: ResumeParams, fork: bool) -> Result<RunRecord, ApiError> {
    // A repeat of a launch id gets the run the first attempt started, even
    // though that run now makes the session's last run live (issue #5).
    let _once = match &p.launch_id {
        Some(launch_id) => match super::once::resuming(daemon, launch_id).await? {
            Ok(guard) => Some(guard),
            Err(run) => return Ok(run.to_record()),
        },
        None => None,
    };
    let (session, family, last) = find(daemon, &p.session).await?;
    let Some(last) = last else {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("session {session} has no run to take its cwd and harness from"),
        ));
    };
    if !fork && last.state.is_live() {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "run {} ({}) of session {session} may still be alive: attach to it, or cancel it before resuming",
                last.name, last.id
            ),
        ));
    }
    let adapter = crate::harness::adapter_for(&family)
        .ok_or_else(|| ApiError::bad_request(format!("no adapter for harness family '{family}'")))?;
    // Started with a profile: again with it (same family, same account).
    // The variables named with `--env` are passed again, values from this
    // request's environment.
    let id = last.id.clone();
    let info = daemon
        .store
        .call(move |c| crate::store::harness::harness_info(c, &id))
        .await
        .map_err(ApiError::internal)?;
    let pass_env = info.pass_env;
    let profile = info.profile.filter(|p| daemon.config().profiles.contains_key(p));
    let blocker = if fork {
        None
    } else {
        super::recover::native_blocker(daemon, adapter, &session, &last, &p.env).await?
    };
    let mut prompt = None;
    let mut kept = (0, 0);
    let (args, mode) = match &blocker {
        None => (
            if fork {
                adapter.fork_args(&session)
            } else {
                adapter.resume_args(&session)
            }
            .map_err(|e| ApiError::new(ErrorCode::Conflict, e))?,
            "native",
        ),
        Some(why) => {
            // Native resume is impossible: the same family, a new
            // conversation, the old one's recent part as its first prompt.
            let (messages, total) = super::recover::recent_messages(daemon, &session).await?;
            if messages.is_empty() {
                return Err(super::recover::nothing_to_rebuild(&session, why));
            }
            let context = super::recover::reconstruct(&family, &session, why, &messages, total);
            kept = (messages.len(), total);
            let args = match adapter.prompt_args(&context) {
                Some(args) => args,
                None => {
                    // Typed in: one line, so no newline submits it early.
                    prompt = Some(context.lines().collect::<Vec<_>>().join(" / "));
                    Vec::new()
                }
            };
            (args, "reconstructed")
        }
    };
    // A resumed conversation keeps the name the user (or its first prompt)
    // gave the run it goes on from, numbered while a live run wears it; a
    // fork is a new conversation. A reconstructed one keeps even a
    // placeholder, numbered (its first prompt is the context, not a task
    // to name it after).
    let (last_id, last_name, rebuilt) = (last.id.clone(), last.name.clone(), blocker.is_some());
    let name = daemon
        .store
        .call(move |c| match crate::store::names::repeated(c, &last_id)? {
            Some(name) if !fork => Ok(Some(name)),
            _ if rebuilt => Ok(Some(crate::store::harness::unique_name(c, &last_name)?)),
            _ => Ok(None),
        })
        .await
        .map_err(ApiError::internal)?;
    let start = StartParams {
        harness: profile.unwrap_or_else(|| last.harness.clone()),
        args,
        name,
        cwd: last.cwd.clone(),
        parent: None,
        detached: false,
        timeout_secs: None,
        rows: Some(last.rows),
        cols: Some(last.cols),
        worktree: false,
        prompt,
        env: p.env,
        pass_env,
        launch_id: p.launch_id.clone(),
        placed: p.placed,
        ..StartParams::default()
    };
    let record = super::start::start(daemon, start).await?;
    if !fork && blocker.is_none() {
        // The conversation goes on in the same files: tail them again.
        daemon.transcripts.watch_session(&daemon.store, &session).await;
    }
    let (new_id, old_id, kind) = (
        record.id.clone(),
        last.id.clone(),
        if fork { "FORK_OF" } else { "RESUME_OF" },
    );
    let _ = daemon
        .store
        .call(move |c| {
            let mut data = json!({ "session": session, "run": old_id, "mode": mode });
            if let Some(why) = &blocker {
                data["why"] = json!(why);
            }
            runs::append_event(c, &new_id, kind, &data)?;
            if let Some(why) = &blocker {
                runs::append_event(
                    c,
                    &new_id,
                    "CONTEXT_RECONSTRUCTED",
                    &json!({ "session": session, "why": why, "messages": kept.0, "of": kept.1 }),
                )?;
            }
            Ok(())
        })
        .await;
    Ok(record)
}
