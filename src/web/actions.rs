//! What the web view asks of a run: a prompt, an answer, a cancel — each
//! one method of the tool table, as the CLI and MCP ask it, with the
//! caller's id where the method takes one (a retry is applied once).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::{Web, failed};
use crate::api::{AnswerParams, ApiError, CancelParams, SendParams, method};
use crate::client::Client;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Send {
    text: String,
    #[serde(default)]
    prompt_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    answer: String,
    #[serde(default)]
    answer_id: Option<String>,
    #[serde(default)]
    request: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Cancel {
    #[serde(default)]
    force: bool,
}

/// `POST /api/runs/RUN/send`: `runs.send` — typed now, queued or held.
pub async fn send(State(web): State<Arc<Web>>, Path(run): Path<String>, body: Body<Send>) -> Response {
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) => return refused(e),
    };
    let params = SendParams {
        run,
        text: body.text,
        prompt_id: body.prompt_id,
    };
    answered(ask::<method::RunsSend>(&web, params).await)
}

/// `POST /api/runs/RUN/answer`: `runs.answer` — typed only while the
/// question is on screen, once per answer id.
pub async fn answer(State(web): State<Arc<Web>>, Path(run): Path<String>, body: Body<Answer>) -> Response {
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) => return refused(e),
    };
    let params = AnswerParams {
        run,
        answer: body.answer,
        answer_id: body.answer_id,
        request: body.request,
    };
    answered(ask::<method::RunsAnswer>(&web, params).await)
}

/// `POST /api/runs/RUN/cancel`: `runs.cancel`, asked by the user (the
/// run and the children it owns).
pub async fn cancel(State(web): State<Arc<Web>>, Path(run): Path<String>, body: Body<Cancel>) -> Response {
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) => return refused(e),
    };
    let params = CancelParams {
        run,
        force: body.force,
        by: None,
        proof: None,
    };
    answered(ask::<method::RunsCancel>(&web, params).await)
}

/// A call's JSON body, or why it is none.
type Body<T> = Result<Json<T>, axum::extract::rejection::JsonRejection>;

/// A body that is no such call's: `bad_request`, typed as every failure.
fn refused(e: axum::extract::rejection::JsonRejection) -> Response {
    failed(ApiError::bad_request(e.body_text()))
}

async fn ask<M: method::Method>(web: &Web, params: M::Params) -> Result<M::Reply, ApiError> {
    let client = Client::connect(&web.paths, false).await?;
    client.call::<M>(params).await
}

fn answered<T: serde::Serialize>(outcome: Result<T, ApiError>) -> Response {
    match outcome {
        Ok(reply) => Json(reply).into_response(),
        Err(e) => failed(e),
    }
}
