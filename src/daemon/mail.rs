//! The mailbox (docs/design.md §13): `mail.send` stores a message, then
//! hands it to its run as a prompt carrying the message's id — queued until
//! the agent is idle, marked as mail. The prompt queue is idempotent by id,
//! so a retried send, or a message stored when the daemon died before
//! handing it over (handed over at the next start), is delivered once.

use std::sync::Arc;

use serde_json::{Value, json};

use super::Daemon;
use super::dispatch::to_value;
use super::start::resolve_row;
use crate::api::{ApiError, ErrorCode, MailListParams, MailRecord, MailSendParams, bounds, method};
use crate::store::mail::{self, NewMail};
use crate::store::runs::RunRow;

pub async fn send(daemon: &Arc<Daemon>, p: MailSendParams) -> Result<Value, ApiError> {
    bounds::check("the message", &p.body, MailSendParams::MAX_BODY)?;
    if p.body.trim().is_empty() {
        return Err(ApiError::bad_request("the message is empty"));
    }
    let id = p.id.clone().unwrap_or_else(|| ulid::Ulid::new().to_string());
    super::once::validate_id("message id", &id)?;
    for reference in [&p.thread, &p.in_reply_to].into_iter().flatten() {
        super::once::validate_id("message id", reference)?;
    }
    let to = resolve_row(daemon, &p.to).await?;
    let from = match &p.from {
        Some(sender) => Some(resolve_row(daemon, sender).await?),
        None => None,
    };
    let (id2, to_id) = (id.clone(), to.id.clone());
    let known = daemon
        .store
        .call(move |c| mail::get(c, &id2))
        .await
        .map_err(ApiError::internal)?;
    if let Some(known) = &known
        && known.to != to_id
    {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("message id {id} was sent to another run"),
        ));
    }
    if known.is_none() && !to.state.is_live() {
        return Err(ApiError::new(
            ErrorCode::NotRunning,
            format!(
                "run {} has already ended ({}): mail not sent",
                to.name,
                to.state.as_str()
            ),
        ));
    }
    let stored = store(daemon, &p, &id, &to, from.as_ref()).await?;
    hand_over(daemon, &stored, &to).await?;
    to_value(read(daemon, &id).await?)
}

async fn store(
    daemon: &Arc<Daemon>,
    p: &MailSendParams,
    id: &str,
    to: &RunRow,
    from: Option<&RunRow>,
) -> Result<MailRecord, ApiError> {
    let (id, to_run) = (id.to_string(), to.id.clone());
    let from_run = from.map(|r| r.id.clone());
    let from_name = from.map_or_else(|| "user".to_string(), |r| r.name.clone());
    let thread = p.thread.clone().unwrap_or_else(|| id.clone());
    let (in_reply_to, body) = (p.in_reply_to.clone(), p.body.clone());
    daemon
        .store
        .call(move |c| {
            mail::insert(
                c,
                &NewMail {
                    id: &id,
                    from_run: from_run.as_deref(),
                    from_name: &from_name,
                    to_run: &to_run,
                    thread: &thread,
                    in_reply_to: in_reply_to.as_deref(),
                    body: &body,
                },
            )
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))
}

/// What the agent reads: who it is from and the message's id (to reply
/// to), then the body with its control characters made inert — an
/// agent's or a user's text is never typed into a terminal raw.
fn prompt_of(m: &MailRecord) -> String {
    format!("[mail from {} · {}] {}", m.from_name, m.id, crate::text::inert(&m.body))
}

/// Hands the message to its run as the prompt of the same id: queued here,
/// or on the host of a run that lives on one.
async fn hand_over(daemon: &Arc<Daemon>, m: &MailRecord, to: &RunRow) -> Result<(), ApiError> {
    let text = prompt_of(m);
    if to.host == "local" {
        super::queue::enqueue(daemon, &to.id, &m.id, &text).await?;
    } else {
        let p = json!({ "run": to.id, "text": text, "prompt_id": m.id });
        if let Some(answer) = crate::remote::forward(&daemon.here(), method::RUNS_SEND, to, &p).await {
            answer?;
        }
    }
    let id = m.id.clone();
    daemon
        .store
        .call(move |c| mail::mark_handed(c, &id))
        .await
        .map_err(ApiError::internal)
}

/// At start: messages stored before the last daemon could hand them over.
pub async fn hand_over_stored(daemon: &Arc<Daemon>) {
    let Ok(stored) = daemon.store.call(|c| mail::stored(c)).await else {
        return;
    };
    for m in stored {
        let Ok(to) = resolve_row(daemon, &m.to).await else {
            continue;
        };
        if let Err(e) = hand_over(daemon, &m, &to).await {
            tracing::warn!("mail {} to run {} not handed over: {}", m.id, to.id, e.message);
        }
    }
}

pub async fn list(daemon: &Arc<Daemon>, p: MailListParams) -> Result<Value, ApiError> {
    let run = match &p.run {
        Some(reference) => Some(resolve_row(daemon, reference).await?.id),
        None => None,
    };
    let limit = p
        .limit
        .unwrap_or(MailListParams::DEFAULT_LIMIT)
        .clamp(1, MailListParams::MAX_LIMIT);
    let found = daemon
        .store
        .call(move |c| mail::list(c, run.as_deref(), limit))
        .await
        .map_err(ApiError::internal)?;
    to_value(found)
}

pub async fn read(daemon: &Arc<Daemon>, id: &str) -> Result<MailRecord, ApiError> {
    let key = id.to_string();
    daemon
        .store
        .call(move |c| mail::get(c, &key))
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| ApiError::bad_request(format!("no message has id {}", crate::text::bounded(id, 80))))
}
