//! Commands to a remote run across a lost link (issue #5): applied exactly
//! once, or failed with a clear `host_unreachable` that names the host.
//!
//! Every command sent here is safe to send twice: `runs.send` carries a
//! prompt id, `runs.answer` an answer id, `runs.start`, `sessions.resume`
//! and `sessions.fork` a launch id, and the
//! remote daemon answers a repeated id with the first attempt's outcome
//! (`engine::once`); `runs.cancel` is idempotent by nature. So when the link
//! drops after a command went out and before its answer came back — its
//! outcome unknown — it is sent again, with the same id, once the link is
//! back; if the link is not back within [`RETRY_WITHIN`], the command fails
//! and says whether it may have been applied.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::link::HostLink;
use crate::api::{ApiError, ErrorCode, method};

/// How long a command waits for its host's link to come back. SSH
/// keepalives (5 s × 3, `ssh.rs`) find a dead link within ~15 s and the
/// followers reconnect within a second of it returning (`mirror.rs`), so a
/// short outage is bridged; a longer one is the caller's to retry.
pub const RETRY_WITHIN: Duration = Duration::from_secs(20);
/// Between connection attempts while the host is unreachable.
const PAUSE_FIRST: Duration = Duration::from_millis(250);
const PAUSE_MAX: Duration = Duration::from_secs(2);

/// Method `M` of the host's daemon, sent as [`call`] sends it.
pub async fn ask<M: crate::api::method::Method>(link: &Arc<HostLink>, params: M::Params) -> Result<M::Reply, ApiError> {
    let params = serde_json::to_value(params).map_err(ApiError::internal)?;
    let answer = call(link, M::NAME, params).await?;
    serde_json::from_value(answer).map_err(|e| {
        ApiError::new(
            ErrorCode::Protocol,
            format!("{}: unexpected answer to {}: {e}", link.name, M::NAME),
        )
    })
}

/// Method `M` of the host's daemon, sent as [`call`] sends it, its answer
/// not read (a host of another build may say it otherwise).
pub async fn tell<M: crate::api::method::Method>(link: &Arc<HostLink>, params: M::Params) -> Result<(), ApiError> {
    let params = serde_json::to_value(params).map_err(ApiError::internal)?;
    call(link, M::NAME, params).await.map(|_| ())
}

/// Sends `method` to the host's daemon, again with the same parameters
/// after a lost answer (see the module comment: each method sent here is
/// repeat-safe). `params` carries the full run id.
pub async fn call(link: &Arc<HostLink>, method: &str, params: Value) -> Result<Value, ApiError> {
    let deadline = Instant::now() + RETRY_WITHIN;
    let mut pause = PAUSE_FIRST;
    // Whether an attempt went out and its answer was lost.
    let mut maybe_applied = false;
    let (mut attempt, mut waiting) = (0, false);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let conn = match tokio::time::timeout(left, link.connection()).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) if !transient(e.code()) => return Err(unsent(method, maybe_applied, e.into())),
            Ok(Err(e)) if Instant::now() + pause >= deadline => {
                return Err(unreachable(link, method, &params, maybe_applied, &e.to_string()));
            }
            Ok(Err(e)) => {
                if !waiting {
                    waiting = true;
                    tracing::info!(
                        "host {}: {} waits up to {}s for the link ({e})",
                        link.name,
                        logged(method, &params),
                        RETRY_WITHIN.as_secs()
                    );
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(PAUSE_MAX);
                continue;
            }
            Err(_) => {
                return Err(unreachable(
                    link,
                    method,
                    &params,
                    maybe_applied,
                    "no connection could be made",
                ));
            }
        };
        attempt += 1;
        // One line per command sent to a host: the trail that shows a
        // command was sent again with its id, never applied twice.
        tracing::info!(
            "host {}: {} sent (attempt {attempt})",
            link.name,
            logged(method, &params)
        );
        match conn.call(&link.name, &link.name, method, params.clone()).await {
            Err(e) if e.code == ErrorCode::HostUnreachable => {
                maybe_applied = true;
                tracing::info!(
                    "host {}: {} lost its answer ({e}); it goes again with the same id once the link is back",
                    link.name,
                    logged(method, &params)
                );
                // Wait for this connection to be given up (a stalled one is,
                // by keepalives) before opening the next.
                let left = deadline.saturating_duration_since(Instant::now());
                if tokio::time::timeout(left, conn.ended()).await.is_err() {
                    return Err(unreachable(link, method, &params, maybe_applied, &e.message));
                }
            }
            // A cancel whose first attempt was applied finds the run ended.
            Err(e) if maybe_applied && method == method::RUNS_CANCEL && e.code == ErrorCode::NotRunning => {
                return Ok(json!({ "run": params["run"], "cancelling": [] }));
            }
            other => return other,
        }
    }
}

/// Worth waiting out: the host or its agents may come back by themselves.
fn transient(code: ErrorCode) -> bool {
    matches!(code, ErrorCode::HostUnreachable | ErrorCode::RemoteUnavailable)
}

/// What the command is, as `daemon.log` keeps it: a session is named by
/// the launch that asked for it, never by its id (diagnostics keep no
/// session ids, #35).
fn logged(method: &str, params: &Value) -> String {
    match method {
        method::SESSIONS_RESUME | method::SESSIONS_FORK => format!(
            "the {} of a session (launch {})",
            if method == method::SESSIONS_FORK {
                "fork"
            } else {
                "resume"
            },
            params["launch_id"].as_str().unwrap_or("?")
        ),
        _ => what(method, params),
    }
}

/// What the command is, for the person who asked: enough to retry it.
fn what(method: &str, params: &Value) -> String {
    let run = params["run"].as_str().unwrap_or("?");
    match method {
        method::RUNS_SEND => format!("prompt {} to run {run}", params["prompt_id"].as_str().unwrap_or("?")),
        method::RUNS_ANSWER => format!("the answer to run {run}"),
        method::MAIL_SEND => format!(
            "message {} to run {}",
            params["id"].as_str().unwrap_or("?"),
            params["to"].as_str().unwrap_or("?")
        ),
        method::RUNS_CANCEL => format!("the cancel of run {run}"),
        method::RUNS_START => format!("the start of launch {}", params["launch_id"].as_str().unwrap_or("?")),
        method::SESSIONS_RESUME | method::SESSIONS_FORK => format!(
            "the {} of session {} (launch {})",
            if method == method::SESSIONS_FORK {
                "fork"
            } else {
                "resume"
            },
            params["session"].as_str().unwrap_or("?"),
            params["launch_id"].as_str().unwrap_or("?")
        ),
        other => format!("{other} for run {run}"),
    }
}

fn unreachable(link: &HostLink, method: &str, params: &Value, maybe_applied: bool, why: &str) -> ApiError {
    let what = what(method, params);
    // `RemoteError::Unreachable` names the host already: keep its reason.
    let why = why.split_once(" is unreachable: ").map_or(why, |(_, reason)| reason);
    let outcome = if !maybe_applied {
        format!("{what} was not sent")
    } else if method == method::RUNS_SEND {
        format!(
            "{what} may have been queued there; `agents send --id {} RUN TEXT` again delivers it at most once",
            params["prompt_id"].as_str().unwrap_or("?")
        )
    } else {
        format!("{what} may have been applied there")
    };
    ApiError::new(
        ErrorCode::HostUnreachable,
        format!(
            "host {} is unreachable and did not come back within {}s ({}): {outcome}",
            link.name,
            RETRY_WITHIN.as_secs(),
            crate::text::bounded(why.trim(), 300)
        ),
    )
}

/// A refusal that waiting will not fix (host key, keys, version): said as
/// is, with what became of the command when an earlier attempt went out.
fn unsent(method: &str, maybe_applied: bool, e: ApiError) -> ApiError {
    if maybe_applied {
        ApiError::new(
            e.code,
            format!(
                "{} (an earlier attempt of {method} may have been applied there)",
                e.message
            ),
        )
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_prompt_says_how_to_send_it_again_once() {
        let params = json!({ "run": "R1", "prompt_id": "P1", "text": "hi" });
        assert_eq!(what(method::RUNS_SEND, &params), "prompt P1 to run R1");
        assert_eq!(what(method::RUNS_CANCEL, &params), "the cancel of run R1");
        let resume = json!({ "session": "S1", "launch_id": "L1" });
        assert_eq!(
            what(method::SESSIONS_FORK, &resume),
            "the fork of session S1 (launch L1)"
        );
        // The log names the launch, not the session.
        assert_eq!(
            logged(method::SESSIONS_FORK, &resume),
            "the fork of a session (launch L1)"
        );
        assert_eq!(logged(method::RUNS_SEND, &params), "prompt P1 to run R1");
        assert!(transient(ErrorCode::HostUnreachable));
        assert!(!transient(ErrorCode::HostKeyChanged));
        assert!(!transient(ErrorCode::AuthFailed));
    }
}
