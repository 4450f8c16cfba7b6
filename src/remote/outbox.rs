//! Mail from a run on a host to addresses only this daemon knows (docs/design.md
//! §13): its host holds such a message (`daemon/outbox.rs` there) and says
//! the run changed; the run's mirror here takes what it holds over the
//! link — on every connection and whenever the host's record of the run
//! shows mail held and not yet taken — delivers each message here by its
//! id, then tells the host which were delivered so it drops them.
//!
//! What is taken is tagged with the epoch of the connection it came over
//! and delivered only while that connection is still the link's: a take
//! answered over a connection that has since been replaced is dropped
//! (the new connection takes the same messages again), and the host drops
//! a message only on the word of the connection that took it last. A cut
//! between delivering and saying so leaves the message held there; it is
//! taken again and its second delivery, by the same id, is a no-op.

use std::sync::Arc;

use serde_json::Value;

use super::Here;
use super::link::{Connection, HostLink};
use crate::api::{ErrorCode, OutboundMail, method};

/// Mail taken over the connection of `epoch`.
struct Taken {
    epoch: u64,
    mail: Vec<OutboundMail>,
}

impl Taken {
    /// What may be delivered while `current` is the link's connection (its
    /// epoch): nothing taken over another.
    fn deliverable(self, current: Option<u64>) -> Vec<OutboundMail> {
        match current == Some(self.epoch) {
            true => self.mail,
            false => Vec::new(),
        }
    }
}

/// Whether the host's record of a run (its `runs.show`) says it holds
/// mail not yet taken: a `MAIL_HELD` that no later `MAIL_TAKEN` names (a
/// message sent again by its id after it was taken is held again).
pub(super) fn holds_mail(detail: &Value) -> bool {
    let mut held: Vec<&str> = Vec::new();
    for event in detail["events"].as_array().into_iter().flatten() {
        match event["kind"].as_str() {
            Some("MAIL_HELD") => held.extend(event["data"]["id"].as_str()),
            Some("MAIL_TAKEN") => {
                let ids: Vec<&str> = event["data"]["ids"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                held.retain(|id| !ids.contains(id));
            }
            _ => {}
        }
    }
    !held.is_empty()
}

/// Takes the mail `run` holds on its host over `conn`, delivers it here,
/// and tells the host which messages were delivered.
pub(super) async fn pull(daemon: &Here, link: &Arc<HostLink>, conn: &Arc<Connection>, run: &str) {
    let epoch = link.epoch_of(conn);
    let asked = crate::api::OutboxParams {
        run: run.to_string(),
        epoch: epoch.clone(),
    };
    let mail = match conn.ask::<method::MailOutbox>(&link.name, &link.name, asked).await {
        Ok(mail) => mail,
        // A host of an older build holds no mail.
        Err(e) if e.code == ErrorCode::UnknownMethod => return,
        Err(e) => {
            tracing::info!("run {run}: cannot take its mail from host {}: {}", link.name, e.message);
            return;
        }
    };
    let taken = Taken {
        epoch: conn.epoch,
        mail,
    };
    let count = taken.mail.len();
    let mail = taken.deliverable(link.current().map(|c| c.epoch));
    if mail.len() < count {
        tracing::info!(
            "run {run}: {count} messages taken over an older connection of host {} dropped",
            link.name
        );
        return;
    }
    let mut delivered = Vec::new();
    for m in mail {
        let id = m.id.clone();
        match daemon.clone().deliver_mail(run.to_string(), m).await {
            Ok(()) => delivered.push(id),
            Err(e) => tracing::info!("run {run}: mail {id} not delivered yet: {}", e.message),
        }
    }
    if delivered.is_empty() {
        return;
    }
    let said = crate::api::OutboxTakenParams {
        run: run.to_string(),
        epoch,
        ids: delivered,
    };
    match conn.ask::<method::MailTaken>(&link.name, &link.name, said).await {
        Ok(answer) => {
            if !answer.stale.is_empty() {
                tracing::info!(
                    "run {run}: host {} kept {:?} for a newer connection",
                    link.name,
                    answer.stale
                );
            }
        }
        // Cut before the host heard it: the mail stays held there, is taken
        // again on the next connection and delivered once by its id.
        Err(e) => tracing::info!(
            "run {run}: host {} not told of delivered mail: {}",
            link.name,
            e.message
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn mail(id: &str) -> OutboundMail {
        OutboundMail {
            version: 1,
            id: id.into(),
            from: "R1".into(),
            to: "lead".into(),
            thread: id.into(),
            in_reply_to: None,
            at: "2026-12-02T00:00:00.000Z".into(),
            body: "hello".into(),
        }
    }

    #[test]
    fn mail_taken_over_an_older_connection_is_not_delivered() {
        let taken = || Taken {
            epoch: 3,
            mail: vec![mail("M1")],
        };
        assert_eq!(taken().deliverable(Some(3)).len(), 1);
        // The link was cut and made again while the answer came.
        assert!(taken().deliverable(Some(4)).is_empty());
        assert!(taken().deliverable(None).is_empty());
    }

    #[test]
    fn held_mail_shows_until_every_id_is_taken() {
        let event = |kind: &str, data: Value| json!({ "kind": kind, "data": data });
        let mut detail = json!({ "events": [event("RUN_CREATED", json!({}))] });
        assert!(!holds_mail(&detail));
        detail["events"] = json!([
            event("MAIL_HELD", json!({ "id": "M1", "to": "lead" })),
            event("MAIL_HELD", json!({ "id": "M2", "to": "team" })),
            event("MAIL_TAKEN", json!({ "ids": ["M1"] })),
        ]);
        assert!(holds_mail(&detail));
        detail["events"]
            .as_array_mut()
            .unwrap()
            .push(event("MAIL_TAKEN", json!({ "ids": ["M2"] })));
        assert!(!holds_mail(&detail));
        // Sent again by its id once taken: held again.
        detail["events"]
            .as_array_mut()
            .unwrap()
            .push(event("MAIL_HELD", json!({ "id": "M1", "to": "lead" })));
        assert!(holds_mail(&detail));
    }
}
