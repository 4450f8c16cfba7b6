//! Mail across hosts, from a run placed on a host (docs/design.md §13).
//!
//! On the host: a run placed there by another daemon (`runs.start` with
//! `placed`) mails `leader`, a member's name or a run of the daemon that
//! placed it — addresses this daemon cannot resolve. Such a message is
//! held in the outbox under the id its sender minted (`hold`), and the run
//! is said to have changed; the daemon that drives the run takes it
//! (`mail.outbox`, marking it with its connection's epoch) and, once it
//! has delivered it, says so (`mail.taken`), which drops it — unless a
//! newer connection has taken it since (that word is stale).
//!
//! On the daemon that drives the run: each message taken is delivered
//! here by its id (`deliver`, through `mail.send`: the second delivery of
//! an id is the first one's record, never a second prompt), so a link cut
//! between delivering and saying so delivers nothing twice; one refused
//! here goes back to its sender.

use serde_json::json;

use super::Reach;
use crate::api::{
    ApiError, ErrorCode, MailRecord, MailSendParams, OutboundMail, OutboxParams, OutboxTaken, OutboxTakenParams,
};
use crate::store::outbox::NewOutbound;
use crate::store::runs::RunRow;

/// Whether mail `from` sends to an address this daemon cannot resolve
/// (`refused` is why) is held for the daemon that placed the run here.
pub async fn holds_for(reach: &Reach, from: &RunRow, refused: &ApiError) -> bool {
    if !matches!(refused.code, ErrorCode::UnknownRun | ErrorCode::BadRequest) {
        return false;
    }
    let run = from.id.clone();
    reach.engine.store.outbox().placed(&run).await.unwrap_or(false)
}

/// Holds the message for the daemon that drives `from`; answers its record
/// as the sender sees it (`outbound`: to be taken by that daemon).
pub async fn hold(reach: &Reach, p: &MailSendParams, id: &str, from: &RunRow) -> Result<MailRecord, ApiError> {
    let (id, run, to) = (id.to_string(), from.id.clone(), p.to.clone());
    let thread = p.thread.clone().unwrap_or_else(|| id.clone());
    let (in_reply_to, body) = (p.in_reply_to.clone(), p.body.clone());
    let held = reach
        .engine
        .store
        .outbox()
        .hold(&NewOutbound {
            id: &id,
            from_run: &run,
            to: &to,
            thread: &thread,
            in_reply_to: in_reply_to.as_deref(),
            body: &body,
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    if held.from != from.id {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("message id {} was sent by another run", held.id),
        ));
    }
    // The daemon that drives the run hears of it as a change of the run.
    reach.engine.changed(&from.id);
    Ok(record_of(&held, &from.name))
}

fn record_of(m: &OutboundMail, from_name: &str) -> MailRecord {
    MailRecord {
        version: m.version,
        id: m.id.clone(),
        from: m.from.clone(),
        from_name: from_name.to_string(),
        to: m.to.clone(),
        to_name: m.to.clone(),
        thread: m.thread.clone(),
        in_reply_to: m.in_reply_to.clone(),
        at: m.at.clone(),
        body: m.body.clone(),
        state: "outbound".into(),
        reason: None,
    }
}

/// `mail.read` of a message held here.
pub async fn read(reach: &Reach, id: &str) -> Result<Option<MailRecord>, ApiError> {
    let key = id.to_string();
    reach
        .engine
        .store
        .outbox()
        .get_with_sender(&key)
        .await
        .map(|held| held.map(|(m, name)| record_of(&m, &name)))
        .map_err(ApiError::internal)
}

/// `mail.outbox`: what the run holds, taken over `p.epoch`.
pub async fn take(reach: &Reach, p: OutboxParams) -> Result<Vec<OutboundMail>, ApiError> {
    let (run, epoch) = (p.run, p.epoch);
    let held = reach
        .engine
        .store
        .outbox()
        .take(&run, &epoch)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    Ok(held)
}

/// `mail.taken`: drops what was delivered, unless taken again since.
pub async fn taken(reach: &Reach, p: OutboxTakenParams) -> Result<OutboxTaken, ApiError> {
    let (run, epoch, ids) = (p.run.clone(), p.epoch, p.ids);
    let answer = reach
        .engine
        .store
        .outbox()
        .taken(&run, &epoch, ids)
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    if !answer.stale.is_empty() {
        tracing::info!(
            "run {}: mail {:?} was taken again over a newer connection; kept for it",
            p.run,
            answer.stale
        );
    }
    reach.engine.changed(&p.run);
    Ok(answer)
}

/// Here, on the daemon that drives `run` on its host: delivers one message
/// it sent there, by its id. `Err` leaves it held there for the next take
/// (a failure that may pass: storage, another host away). A message this
/// daemon refuses for good (no such member, the recipient ended) is
/// recorded on the run as `MAIL_REFUSED` and goes back to its sender as
/// the prompt of its own id there (`bounce`), so it counts as delivered
/// and is not taken for ever.
pub async fn deliver(reach: &Reach, run: &str, m: OutboundMail) -> Result<(), ApiError> {
    if m.from != run {
        return Err(ApiError::bad_request(format!("mail {} is not from run {run}", m.id)));
    }
    let (id, to) = (m.id.clone(), m.to.clone());
    let params = MailSendParams {
        to: m.to,
        body: m.body,
        from: Some(run.to_string()),
        proof: None,
        id: Some(m.id),
        thread: Some(m.thread),
        in_reply_to: m.in_reply_to,
        relayed_from: None,
    };
    let refused = match super::mail::send(reach, params).await {
        Ok(_) => return Ok(()),
        Err(e) if may_pass(&e) => return Err(e),
        Err(e) => e,
    };
    tracing::info!("run {run}: mail {id} to '{to}' refused: {}", refused.message);
    let data = json!({ "id": id, "to": to, "error": refused.message });
    reach
        .engine
        .store
        .runs()
        .append_event(run, "MAIL_REFUSED", data)
        .await
        .map_err(ApiError::internal)?;
    reach.engine.changed(run);
    match bounce(reach, run, &id, &to, &refused.message).await {
        Err(e) if may_pass(&e) => Err(e),
        _ => Ok(()),
    }
}

/// A failure that may pass: the message stays held, to be taken again.
fn may_pass(e: &ApiError) -> bool {
    matches!(
        e.code,
        ErrorCode::Storage | ErrorCode::Internal | ErrorCode::HostUnreachable
    )
}

/// Tells the sender on its host that its message was not delivered:
/// `[mail not delivered · ID] to ADDR: WHY`, queued there as the prompt of
/// the message's id (which no prompt there has: the host held the
/// message), so it is typed once however often the message is taken. A
/// shell or a command is not typed into.
async fn bounce(reach: &Reach, run: &str, id: &str, to: &str, why: &str) -> Result<(), ApiError> {
    let sender = crate::engine::start::resolve_row(&reach.engine, run).await?;
    if matches!(sender.harness.as_str(), "shell" | "cmd") || !sender.state.is_live() {
        return Ok(());
    }
    let text = format!(
        "[mail not delivered · {id}] to {}: {}",
        crate::text::bounded(to, 80),
        crate::text::bounded(why, 300)
    );
    let p = crate::api::SendParams {
        run: sender.id.clone(),
        text: crate::text::inert_line(&text).into_owned(),
        prompt_id: Some(id.to_string()),
    };
    let p = serde_json::to_value(p).map_err(ApiError::internal)?;
    match crate::remote::answer_there(&reach.here, crate::api::method::RUNS_SEND, Some(&sender), &p).await {
        Some(answer) => answer.map(|_| ()),
        None => Ok(()),
    }
}
