//! Approvals routed to a team's leader (`approvals = "leader"`): a member
//! that stops at a permission prompt is asked about in mail to the leader,
//! carrying the question and a permission-request id (`ask-RUN-SEQ`, the
//! member's `INTERRUPT` event); the leader answers by that id
//! (`agents answer MEMBER yes --request ID`, MCP `run_answer`). An answer
//! by an id whose question is gone — answered, or the run moved on — is
//! refused, and each request is answered at most once.

use super::Reach;
use crate::api::{ApiError, ErrorCode, MailRecord};
use crate::store::approvals::request_seq;
use crate::store::runs;

/// After the stop is committed: the request typed to the leader as mail.
pub(super) async fn hand_over(reach: &Reach, asked: MailRecord) {
    if let Err(e) = super::mail::hand_over_one(reach, &asked).await {
        tracing::warn!("approval request {} not handed to the leader: {}", asked.id, e.message);
    }
}

/// An answer by request id: refused unless the request is this run's and
/// its question is still the one waiting (no `RUN_RESUMED` since, the run
/// still at it).
pub async fn check_request(reach: &Reach, row: &runs::RunRow, request: &str) -> Result<(), ApiError> {
    let seq = request_seq(request, &row.id).ok_or_else(|| {
        ApiError::bad_request(format!(
            "request {} is not one of run {}'s",
            crate::text::bounded(request, 80),
            row.name
        ))
    })?;
    let resumed_since = reach
        .engine
        .store
        .approvals()
        .moved_on_since(&row.id, seq)
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
