//! What the web view asks of a run: a prompt, an answer, a cancel — each
//! one method of the tool table, as the CLI and MCP ask it, with the
//! caller's id where the method takes one (a retry is applied once).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::Deserialize;

use super::{Web, failed};
use crate::api::{AnswerParams, ApiError, CancelParams, ErrorCode, ResumeParams, RunRef, SendParams, method};
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
    call::<method::RunsSend, _>(&web, body, |b| SendParams {
        run,
        text: b.text,
        prompt_id: b.prompt_id,
    })
    .await
}

/// `POST /api/runs/RUN/answer`: `runs.answer` — typed only while the
/// question is on screen, once per answer id.
pub async fn answer(State(web): State<Arc<Web>>, Path(run): Path<String>, body: Body<Answer>) -> Response {
    call::<method::RunsAnswer, _>(&web, body, |b| AnswerParams {
        run,
        answer: b.answer,
        answer_id: b.answer_id,
        request: b.request,
    })
    .await
}

/// `POST /api/runs/RUN/cancel`: `runs.cancel`, asked by the user (the
/// run and the children it owns).
pub async fn cancel(State(web): State<Arc<Web>>, Path(run): Path<String>, body: Body<Cancel>) -> Response {
    call::<method::RunsCancel, _>(&web, body, |b| CancelParams {
        run,
        force: b.force,
        by: None,
        proof: None,
    })
    .await
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    #[serde(default)]
    queue: bool,
    #[serde(default)]
    launch_id: Option<String>,
}

/// `POST /api/runs/RUN/resume`: `sessions.resume` of the run's session —
/// the conversation continued in a new run, with the web view's
/// environment as the CLI's is passed (through the harness's allowlist,
/// never stored); with `queue`, once the run holding it has ended.
pub async fn resume(State(web): State<Arc<Web>>, Path(run): Path<String>, body: Body<Resume>) -> Response {
    let session = async {
        let client = Client::connect(&web.paths, false).await?;
        let shown = client.call::<method::RunsShow>(RunRef { run: run.clone() }).await?;
        shown
            .run
            .session_id
            .ok_or_else(|| ApiError::new(ErrorCode::UnknownSession, format!("run {run} has no session to resume")))
    };
    let session = match session.await {
        Ok(session) => session,
        Err(e) => return failed(e),
    };
    call::<method::SessionsResume, _>(&web, body, |b| ResumeParams {
        session,
        args: Vec::new(),
        env: std::env::vars().collect(),
        launch_id: b.launch_id,
        placed: false,
        queue: b.queue,
    })
    .await
}

/// Method `M` with the parameters `made` of the call's body: its reply,
/// or the typed error (a body that is no such call's: `bad_request`).
async fn call<M: method::Method, B>(web: &Web, body: Body<B>, made: impl FnOnce(B) -> M::Params) -> Response {
    match body {
        Ok(Json(body)) => super::asked::<M>(web, made(body)).await,
        Err(e) => failed(ApiError::bad_request(e.body_text())),
    }
}

/// A call's JSON body, or why it is none.
pub type Body<T> = Result<Json<T>, axum::extract::rejection::JsonRejection>;
