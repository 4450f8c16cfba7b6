//! The conversation of a remote run (docs/design.md §7, §8): its harness wrote the
//! transcript on its host and the daemon there indexed it, so
//! `transcript.read`, `sessions.show`, `runs.lineage` and a search within
//! the run's transcript are asked of that daemon, and `sessions.resume` /
//! `sessions.fork` start the new run there (the native resume needs the
//! harness's own files) and mirror it here like a placement. A session is
//! found by the `session_id` of its mirrored runs; one this daemon holds
//! itself is answered here.
use std::sync::Arc;

use serde_json::{Value, json};

use super::Here;
use super::error::RemoteError;
use super::link::{Connection, HostLink};
use crate::api::method::Method;
use crate::api::{
    ApiError, ErrorCode, ResumeParams, RunRecord, SearchHit, SearchParams, SearchResults, TranscriptParams, method,
};
use crate::store::runs::RunRow;

/// A forwarded `transcript.read` waits there at most this long, so its
/// answer comes back inside the link's 30 s call timeout (`link.rs`) with
/// room for a slow link; a follower asks again anyway.
const FORWARDED_WAIT_MS: u64 = 25_000;

/// Forwards the conversation methods of remote runs. `None`: the run or
/// session is this daemon's (or nothing matches): the local dispatcher
/// answers.
pub async fn forward(daemon: &Here, name: &str, p: &Value) -> Option<Result<Value, ApiError>> {
    match name {
        method::TRANSCRIPT_READ => {
            let (host, id, what) = match remote_transcript(daemon, p.get("id")?.as_str()?).await? {
                Ok(found) => found,
                Err(e) => return Some(Err(e)),
            };
            Some(read(daemon, &host, &id, p, &what).await)
        }
        method::TRANSCRIPTS_SEARCH => {
            let params: SearchParams = serde_json::from_value(p.clone()).ok()?;
            if params.local_only {
                return None;
            }
            let (host, id, what) = match remote_transcript(daemon, params.within.as_deref()?).await? {
                Ok(found) => found,
                Err(e) => return Some(Err(e)),
            };
            Some(search(daemon, &host, &id, params, &what).await)
        }
        method::SESSIONS_RESUME | method::SESSIONS_FORK => {
            let params: ResumeParams = serde_json::from_value(p.clone()).ok()?;
            let session = match remote_session(daemon, &params.session).await? {
                Ok(s) => s,
                Err(e) => return Some(Err(e)),
            };
            Some(
                resume(daemon, name, session, params)
                    .await
                    .and_then(|r| serde_json::to_value(r).map_err(ApiError::internal)),
            )
        }
        method::SESSIONS_SHOW => {
            let reference = p.get("session")?.as_str()?;
            let session = match remote_session(daemon, reference).await? {
                Ok(s) => s,
                Err(e) => return Some(Err(e)),
            };
            let what = format!("session {}", session.id);
            let there = crate::api::SessionRef { session: session.id };
            Some(ask::<method::SessionsShow>(daemon, &session.host, there, &what).await)
        }
        _ => None,
    }
}

/// `runs.lineage` of a remote run: the host's tree has the subagents and
/// resumes its daemon saw, but not a parent here, so it is asked only for
/// a tree rooted there. `None`: the tree the mirrors make here (also while
/// the host is away).
pub(super) async fn lineage(daemon: &Here, row: &RunRow) -> Option<Result<Value, ApiError>> {
    let root = super::place::row(daemon, &row.root_run_id).await.ok()??;
    if row.host == "local" || root.host != row.host {
        return None;
    }
    let what = format!("the tree of run {}", row.id);
    let there = crate::api::RunRef { run: row.id.clone() };
    ask::<method::RunsLineage>(daemon, &row.host, there, &what)
        .await
        .ok()
        .map(Ok)
}

/// The host, run or session id, and a description of the transcript a
/// reference names when it lives on a host; `None` as `remote_run`.
async fn remote_transcript(daemon: &Here, reference: &str) -> Option<Result<(String, String, String), ApiError>> {
    Some(match remote_run(daemon, reference).await? {
        Some((host, run)) => Ok((host, run.clone(), format!("the transcript of run {run}"))),
        None => remote_session(daemon, reference)
            .await?
            .map(|s| (s.host, s.id.clone(), format!("the transcript of session {}", s.id))),
    })
}

/// A session that lives on a host, and the newest run here that held it.
struct RemoteSession {
    id: String,
    run: String,
    host: String,
}

/// `Some(Some((host, id)))` for a remote run, `Some(None)` when the
/// reference names no run, `None` for a local run (or a lookup failure,
/// which the local dispatcher reports).
async fn remote_run(daemon: &Here, reference: &str) -> Option<Option<(String, String)>> {
    let row = super::place::row(daemon, reference).await.ok()?;
    match row {
        Some(row) if row.host == "local" => None,
        Some(row) => Some(Some((row.host, row.id))),
        None => Some(None),
    }
}

/// The session a reference names among the mirrored remote runs' ones.
/// `None`: none of them, or one this daemon holds too (answered here).
async fn remote_session(daemon: &Here, reference: &str) -> Option<Result<RemoteSession, ApiError>> {
    let remote = daemon.store().mirrors().sessions(reference).await.ok()?;
    let here = daemon.store().sessions().matches(reference).await.ok()?;
    match remote.as_slice() {
        [] => None,
        [(id, ..)] if here && id != reference => Some(Err(ambiguous(reference))),
        [_] if here => None,
        [(id, run, host)] => Some(Ok(RemoteSession {
            id: id.clone(),
            run: run.clone(),
            host: host.clone(),
        })),
        _ => Some(Err(ambiguous(reference))),
    }
}

fn ambiguous(reference: &str) -> ApiError {
    ApiError::new(
        ErrorCode::AmbiguousRun,
        format!("'{reference}' matches several sessions; give more of the id"),
    )
}

/// `transcript.read` of a remote run or session: the host's page, as is.
async fn read(daemon: &Here, host: &str, id: &str, p: &Value, what: &str) -> Result<Value, ApiError> {
    let mut params: TranscriptParams =
        serde_json::from_value(p.clone()).map_err(|e| ApiError::bad_request(format!("bad parameters: {e}")))?;
    params.id = id.to_string();
    params.wait_ms = params.wait_ms.map(|w| w.min(FORWARDED_WAIT_MS));
    ask::<method::TranscriptRead>(daemon, host, params, what).await
}

/// `transcripts.search` within a remote run or session: the host's hits,
/// each saying its host.
async fn search(daemon: &Here, host: &str, id: &str, p: SearchParams, what: &str) -> Result<Value, ApiError> {
    let params = SearchParams {
        within: Some(id.to_string()),
        local_only: true,
        ..p
    };
    let answer = ask::<method::TranscriptsSearch>(daemon, host, params, what).await?;
    let unindexed_bytes = answer.get("unindexed_bytes").and_then(Value::as_u64).unwrap_or(0);
    let hits: Vec<SearchHit> = super::gather::rows(answer, "hits")
        .map_err(|e| ApiError::new(ErrorCode::Protocol, format!("host {host} gave {e}")))?;
    let hits = hits
        .into_iter()
        .map(|h| SearchHit {
            host: host.to_string(),
            ..h
        })
        .collect();
    serde_json::to_value(SearchResults {
        hits,
        partial: false,
        hosts_unreachable: Vec::new(),
        unindexed_bytes,
    })
    .map_err(ApiError::internal)
}

/// Method `M` of the host's daemon; its answer, or its typed error, as
/// is. A host that cannot be reached is one `host_unreachable` line
/// naming it and saying `what` lives there: never an answer made up here.
async fn ask<M: Method>(daemon: &Here, host: &str, params: M::Params, what: &str) -> Result<Value, ApiError> {
    let link = super::place::link_of(daemon, host).await?;
    let conn = connect(&link, what).await?;
    conn.ask_raw::<M>(&link.name, &link.name, params)
        .await
        .map_err(|e| one_line(e, what))
}

async fn connect(link: &Arc<HostLink>, what: &str) -> Result<Arc<Connection>, ApiError> {
    link.connection().await.map_err(|e| {
        let why = match &e {
            // Says the host, its address and why already.
            RemoteError::Unreachable { .. } => e.to_string(),
            RemoteError::RemoteUnavailable { .. } | RemoteError::Other(_) => {
                format!("host {} is unreachable ({e})", link.name)
            }
            // A refusal a person must fix (host key, keys, version): as is.
            _ => return one_line(e.into(), what),
        };
        one_line(ApiError::new(ErrorCode::HostUnreachable, why), what)
    })
}

/// Keeps an error to one line (a remote stderr may hold several).
fn one_line(e: ApiError, what: &str) -> ApiError {
    let mut message = e.message.split_whitespace().collect::<Vec<_>>().join(" ");
    if e.code == ErrorCode::HostUnreachable && !message.contains(what) {
        message = format!("{message}; {what} is kept there: try again once the link is back");
    }
    ApiError::new(e.code, message)
}

/// `sessions.resume` / `sessions.fork` of a session that lives on a host:
/// the host's daemon starts the run (its refusals are its own and pass
/// through), exactly once across a lost answer (a launch id, `retry`), and
/// the run is mirrored here under its id.
async fn resume(
    daemon: &Here,
    name: &str,
    session: RemoteSession,
    params: ResumeParams,
) -> Result<RunRecord, ApiError> {
    let host = super::hosts::stored(daemon, &session.host).await?;
    let link = daemon.hosts().for_host(&host);
    let what = format!("session {}", session.id);
    let conn = connect(&link, &what).await?;
    // The variables the session's run named with `--env` go again, with
    // this client's values, as for a placement (docs/design.md §8): the host's
    // record of that run says which.
    let shown = conn
        .ask_raw::<method::RunsShow>(
            &link.name,
            &link.name,
            crate::api::RunRef {
                run: session.run.clone(),
            },
        )
        .await
        .map_err(|e| one_line(e, &what))?;
    let mut names: Vec<String> = shown["events"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["kind"] == "RUN_CREATED")
        .and_then(|e| serde_json::from_value(e["data"]["pass_env"].clone()).ok())
        .unwrap_or_default();
    // And the variables its harness reads, from this client's environment
    // (issue #9), as a placement passes them.
    if let Some(family) = shown["harness"].as_str() {
        let cwd = std::path::Path::new(shown["cwd"].as_str().unwrap_or("/"));
        let profiles = daemon.config().profiles;
        names.extend(crate::harness::harness_env_names(family, &profiles, &params.env, cwd));
    }
    let remote = ResumeParams {
        session: session.id.clone(),
        args: params.args.clone(),
        env: super::place::remote_env(&names, &params.env, &conn.info, &host),
        // Minted here, as for a placement: sent again after an answer lost
        // with the link, the host returns the run the first attempt started.
        launch_id: Some(
            params
                .launch_id
                .clone()
                .unwrap_or_else(|| ulid::Ulid::new().to_string()),
        ),
        // Its mail to addresses the host cannot resolve is held for us.
        placed: true,
        queue: params.queue,
    };
    let value = super::retry::call(&link, name, serde_json::to_value(remote).map_err(ApiError::internal)?)
        .await
        .map_err(|e| one_line(e, &what))?;
    let record: RunRecord = serde_json::from_value(value).map_err(ApiError::internal)?;
    let host_name = link.name.clone();
    let record = super::place::mirror_started(daemon, link, record, None, &[]).await?;
    // The edge, here too: the local tree of the mirrors shows the resume.
    let kind = if name == method::SESSIONS_FORK {
        "FORK_OF"
    } else {
        "RESUME_OF"
    };
    let data = json!({ "session": session.id, "run": session.run, "host": host_name });
    let _ = daemon.store().runs().append_event(&record.id, kind, data).await;
    Ok(record)
}
