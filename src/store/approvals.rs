//! Approvals routed to a team's leader, as the store keeps them: a
//! member's stop at a permission prompt (`INTERRUPT`, `RUN_PAUSED`) and,
//! when its team routes approvals to the leader, the mail that asks the
//! leader, all in one transaction; its request id is `ask-RUN-SEQ`, the
//! member's run and the `seq` of that `INTERRUPT`. The daemon hands the
//! mail over once committed (`daemon::approvals`).

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use super::mail::{self, NewMail};
use super::{Store, StoreError, runs, teams};
use crate::api::{ActivityStatus, MailRecord};

const PREFIX: &str = "ask-";

/// The request id of a question: the member's run and its `INTERRUPT`.
fn request_id(run: &str, seq: i64) -> String {
    format!("{PREFIX}{run}-{seq}")
}

/// The `seq` of the `INTERRUPT` a request id names, when it is `run`'s.
pub fn request_seq(request: &str, run: &str) -> Option<i64> {
    request
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_prefix(run))
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|seq| seq.parse::<i64>().ok())
}

/// A run's activity status changing from `was` to `now`, and why.
pub struct StatusChange {
    pub run: String,
    pub was: ActivityStatus,
    pub now: ActivityStatus,
    pub why: String,
    /// The question on its screen, when it stops at one.
    pub question: Option<String>,
}

/// `store.approvals()`: status changes and the questions they ask.
pub struct Approvals<'a>(&'a Store);

impl Store {
    pub fn approvals(&self) -> Approvals<'_> {
        Approvals(self)
    }
}

impl Approvals<'_> {
    /// Records the change. An agent stopped for an answer: `INTERRUPT`,
    /// then `RUN_PAUSED`; answered: `RUN_RESUMED` (docs/design.md §4). A
    /// team that routes approvals to its leader asks it: the mail is
    /// answered, to be handed over.
    pub async fn status_changed(&self, change: StatusChange) -> Result<Option<MailRecord>, StoreError> {
        self.0
            .call(move |c| {
                let StatusChange {
                    run,
                    was,
                    now,
                    why,
                    question,
                } = change;
                let tx = c.transaction()?;
                runs::set_status(&tx, &run, now, &why)?;
                let mut asked = None;
                if now == ActivityStatus::NeedsApproval {
                    let seq = runs::append_event(&tx, &run, "INTERRUPT", &json!({ "why": why }))?;
                    runs::append_event(&tx, &run, "RUN_PAUSED", &json!({}))?;
                    asked = ask_leader(&tx, &run, seq, &why, question.as_deref())?;
                } else if was == ActivityStatus::NeedsApproval {
                    runs::append_event(&tx, &run, "RUN_RESUMED", &json!({}))?;
                }
                tx.commit()?;
                Ok(asked)
            })
            .await
    }

    /// Whether the run moved on since its `INTERRUPT` at `seq`: resumed,
    /// or stopped at another question.
    pub async fn moved_on_since(&self, run: &str, seq: i64) -> Result<bool, StoreError> {
        let run = run.to_string();
        self.0
            .call(move |c| {
                Ok(c.query_row(
                    "SELECT 1 FROM events WHERE run_id = ?1 AND seq > ?2 AND kind IN ('RUN_RESUMED', 'INTERRUPT') LIMIT 1",
                    params![run, seq],
                    |_| Ok(()),
                )
                .optional()?
                .is_some())
            })
            .await
    }
}

/// Beside the member's stop at `seq`: stores the request to its leader
/// when the member's team routes approvals there — or, the leader ended,
/// to the nearest live agent above it, told so; none: the question waits
/// for the user, as any run's.
fn ask_leader(
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
    if team.approvals != crate::api::Approvals::Leader.as_str() {
        return Ok(None);
    }
    let (Some(member), Some(boss)) = (runs::get_run(conn, run)?, super::tasks::nearest_agent(conn, leader)?) else {
        return Ok(None);
    };
    let id = request_id(run, seq);
    let asked = question.filter(|q| !q.trim().is_empty()).unwrap_or(why);
    let instead = match boss.id != leader {
        true => match runs::get_run(conn, leader)? {
            Some(ended) => format!(" (its leader {} has ended: you are asked instead)", ended.name),
            None => " (its leader has ended: you are asked instead)".into(),
        },
        false => String::new(),
    };
    let body = format!(
        "[approval request {id}] {} ({}) waits at a permission prompt ({why}){instead}:\n{asked}\nAnswer it: agents answer {} yes|no|TEXT --request {id}",
        member.name, seat.member, member.name
    );
    let stored = mail::insert(
        conn,
        &NewMail {
            id: &id,
            from_run: Some(run),
            from_name: &member.name,
            to_run: &boss.id,
            thread: &id,
            in_reply_to: None,
            body: &body,
        },
    )?;
    Ok(Some(stored))
}
