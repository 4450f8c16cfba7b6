//! What the web view reads of runs: the list, a run's record and events,
//! its screen's lines, its transcript and its lineage — each one method of
//! the tool table, its reply as JSON, its typed error with the HTTP status
//! of its class.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use super::{Web, asked, failed};
use crate::api::{ApiError, RunRef, TranscriptParams, method};
use crate::client::Client;

/// Ended runs the page lists beside every live one.
const RECENT_ENDED: usize = 200;
/// Lines a run's sheet shows unless asked otherwise, and at most.
const DEFAULT_LINES: usize = 40;
const MAX_LINES: usize = 2000;
/// Transcript messages one read brings.
const TRANSCRIPT_PAGE: usize = 200;

/// `GET /api/runs`: every live run and the newest ended ones, as
/// `runs.list` gives them (records with their usage).
pub async fn runs(State(web): State<Arc<Web>>) -> Response {
    let listed = async {
        let client = Client::connect(&web.paths, false).await?;
        client.list_pages(true, RECENT_ENDED).await
    };
    match listed.await {
        Ok(runs) => Json(json!({ "runs": runs })).into_response(),
        Err(e) => failed(e),
    }
}

/// `GET /api/runs/RUN`: `runs.show` of a run (its id, prefix or name):
/// its record, events, usage and attempts.
pub async fn run(State(web): State<Arc<Web>>, Path(run): Path<String>) -> Response {
    asked::<method::RunsShow>(&web, RunRef { run }).await
}

/// `GET /api/runs/RUN/lineage`: `runs.lineage`, the tree it is part of.
pub async fn lineage(State(web): State<Arc<Web>>, Path(run): Path<String>) -> Response {
    asked::<method::RunsLineage>(&web, RunRef { run }).await
}

/// `?after=SEQ` of `/transcript`.
#[derive(Deserialize)]
pub struct After {
    after: Option<i64>,
}

/// `GET /api/runs/RUN/transcript?after=SEQ`: `transcript.read`, a page of
/// the agent's own transcript after the message numbered `after`.
pub async fn transcript(State(web): State<Arc<Web>>, Path(run): Path<String>, Query(at): Query<After>) -> Response {
    let params = TranscriptParams {
        id: run,
        after_seq: at.after,
        limit: Some(TRANSCRIPT_PAGE),
        wait_ms: None,
    };
    asked::<method::TranscriptRead>(&web, params).await
}

/// `?last=N` of `/lines`.
#[derive(Deserialize)]
pub struct Last {
    last: Option<usize>,
}

/// `GET /api/runs/RUN/lines?last=N`: the last lines of the run's screen and
/// what scrolled off it, as `agents logs` renders them — text the emulator
/// read from the run's output, never its bytes.
pub async fn lines(State(web): State<Arc<Web>>, Path(run): Path<String>, Query(asked): Query<Last>) -> Response {
    let last = asked.last.unwrap_or(DEFAULT_LINES).clamp(1, MAX_LINES);
    match crate::client::replay::screen_lines(&web.paths, &run, MAX_LINES).await {
        Ok(mut lines) => {
            let before = lines.len().saturating_sub(last);
            lines.drain(..before);
            let lines: Vec<String> = lines.iter().map(|l| crate::text::inert(l).into_owned()).collect();
            Json(json!({ "lines": lines })).into_response()
        }
        Err(e) => match e.chain().find_map(|c| c.downcast_ref::<ApiError>()) {
            Some(api) => failed(api.clone()),
            None => failed(ApiError::internal(format!("{e:#}"))),
        },
    }
}
