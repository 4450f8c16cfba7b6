//! Approvals routed to a team's leader (`approvals = "leader"`): a member
//! that stops at a permission prompt is asked about in mail to the leader,
//! carrying the question and a permission-request id (`ask-RUN-SEQ`, the
//! member's `INTERRUPT` event); the leader answers by that id
//! (`agents answer MEMBER yes --request ID`, MCP `run_answer`). An answer
//! by an id whose question is gone — answered, or the run moved on — is
//! refused, and each request is answered at most once.

use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension};

use super::Daemon;
use crate::api::{ApiError, ErrorCode, MailRecord};
use crate::store::StoreError;
use crate::store::mail::{self, NewMail};
use crate::store::runs;
use crate::store::teams;

const PREFIX: &str = "ask-";

/// The request id of a question: the member's run and its `INTERRUPT`.
fn request_id(run: &str, seq: i64) -> String {
    format!("{PREFIX}{run}-{seq}")
}

/// Within the transaction that stored the member's stop at `seq`: stores
/// the request to its leader when the member's team routes approvals
/// there. Handed over (as the leader's prompt) once committed.
pub(super) fn ask_leader(
    conn: &Connection,
    run: &str,
    seq: i64,
    why: &str,
    question: Option<&str>,
) -> Result<Option<MailRecord>, StoreError> {
    let Some(seat) = teams::seat_of(conn, run)? else {
        return Ok(None);
    };
    let Some(team) = teams::get(conn, &seat.team_id)? else {
        return Ok(None);
    };
    let (Some(leader), false) = (team.leader_run.as_deref(), seat.leader) else {
        return Ok(None);
    };
    if team.approvals != crate::team::Approvals::Leader.as_str() {
        return Ok(None);
    }
    let (Some(member), Some(boss)) = (runs::get_run(conn, run)?, runs::get_run(conn, leader)?) else {
        return Ok(None);
    };
    if !boss.state.is_live() {
        return Ok(None);
    }
    let id = request_id(run, seq);
    let asked = question.filter(|q| !q.trim().is_empty()).unwrap_or(why);
    let body = format!(
        "[approval request {id}] {} ({}) waits at a permission prompt ({why}):\n{asked}\nAnswer it: agents answer {} yes|no|TEXT --request {id}",
        member.name, seat.member, member.name
    );
    let stored = mail::insert(
        conn,
        &NewMail {
            id: &id,
            from_run: Some(run),
            from_name: &member.name,
            to_run: leader,
            thread: &id,
            in_reply_to: None,
            body: &body,
        },
    )?;
    Ok(Some(stored))
}

/// After the stop is committed: the request typed to the leader as mail.
pub(super) async fn hand_over(daemon: &Arc<Daemon>, asked: MailRecord) {
    if let Err(e) = super::mail::hand_over_one(daemon, &asked).await {
        tracing::warn!("approval request {} not handed to the leader: {}", asked.id, e.message);
    }
}

/// An answer by request id: refused unless the request is this run's and
/// its question is still the one waiting (no `RUN_RESUMED` since, the run
/// still at it).
pub async fn check_request(daemon: &Arc<Daemon>, row: &runs::RunRow, request: &str) -> Result<(), ApiError> {
    let seq = request
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_prefix(row.id.as_str()))
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|seq| seq.parse::<i64>().ok())
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "request {} is not one of run {}'s",
                crate::text::bounded(request, 80),
                row.name
            ))
        })?;
    let run = row.id.clone();
    let resumed_since = daemon
        .store
        .call(move |c| {
            Ok(c.query_row(
                "SELECT 1 FROM events WHERE run_id = ?1 AND seq > ?2 AND kind IN ('RUN_RESUMED', 'INTERRUPT') LIMIT 1",
                rusqlite::params![run, seq],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
        })
        .await
        .map_err(ApiError::internal)?;
    let waiting = row.status == crate::api::ActivityStatus::NeedsApproval && row.state.is_live();
    if resumed_since || !waiting {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "the question of request {request} is gone (answered, or run {} moved on); nothing typed",
                row.name
            ),
        ));
    }
    Ok(())
}
