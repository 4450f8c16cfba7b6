//! The mailbox (docs/design.md §13): `mail.send` stores a message, then
//! hands it to its run as a prompt carrying the message's id — queued until
//! the agent is idle, marked as mail. The prompt queue is idempotent by id,
//! so a retried send, or a message stored when the daemon died before
//! handing it over (handed over at the next start), is delivered once.

use super::Reach;
use crate::api::{ApiError, ErrorCode, MailListParams, MailRecord, MailSendParams, MailSent, MailWaitParams, bounds};
use crate::engine::start::resolve_row;
use crate::store::mail::NewMail;
use crate::store::runs::RunRow;

pub async fn send(reach: &Reach, p: MailSendParams) -> Result<MailSent, ApiError> {
    bounds::check("the message", &p.body, MailSendParams::MAX_BODY)?;
    if p.body.trim().is_empty() {
        return Err(ApiError::bad_request("the message is empty"));
    }
    let id = p.id.clone().unwrap_or_else(|| ulid::Ulid::new().to_string());
    crate::engine::once::validate_id("message id", &id)?;
    for reference in [&p.thread, &p.in_reply_to].into_iter().flatten() {
        crate::engine::once::validate_id("message id", reference)?;
    }
    if let Some(name) = &p.relayed_from {
        if p.from.is_some() {
            return Err(ApiError::bad_request("a relayed message has no sending run here"));
        }
        if name != "user" {
            crate::api::bounds::validate_name(name)?;
        }
    }
    let from = match &p.from {
        Some(sender) => Some(resolve_row(&reach.engine, sender).await?),
        None => None,
    };
    let to = match recipients(reach, &p.to, from.as_ref()).await {
        Ok(to) => to,
        // From a run placed here by another daemon, to an address only
        // that daemon knows: held for it to take (daemon/outbox.rs).
        Err(e) => match &from {
            Some(sender) if super::outbox::holds_for(reach, sender, &e).await => {
                return Ok(MailSent::One(Box::new(
                    super::outbox::hold(reach, &p, &id, sender).await?,
                )));
            }
            _ => return Err(e),
        },
    };
    let fanned = to.len() > 1 || p.to == "team" || p.to.ends_with("/team");
    if !fanned {
        return Ok(MailSent::One(Box::new(
            send_one(reach, &p, &id, &to[0], from.as_ref()).await?,
        )));
    }
    // Each member's copy has an id of its own, made from the sender's (a
    // retry finds the same copies), in one thread; members that have
    // ended are passed over, and so are shells and commands (they would
    // run the words as a command line).
    let p = MailSendParams {
        thread: Some(p.thread.clone().unwrap_or_else(|| id.clone())),
        ..p
    };
    let mut sent = Vec::with_capacity(to.len());
    for to in to.iter().filter(|r| !matches!(r.harness.as_str(), "shell" | "cmd")) {
        match send_one(reach, &p, &copy_id(&id, &to.id), to, from.as_ref()).await {
            Ok(m) => sent.push(m),
            Err(e) if e.code == ErrorCode::NotRunning => continue,
            Err(e) => return Err(e),
        }
    }
    if sent.is_empty() {
        return Err(ApiError::new(
            ErrorCode::NotRunning,
            "every other member has ended: mail not sent",
        ));
    }
    Ok(MailSent::Copies(sent))
}

/// A message as a client sent it: from the run it names only if it
/// carries that run's proof, else from the user (issue #34: a run's id is
/// no proof of being it).
pub fn vouched(engine: &crate::engine::Engine, mut p: MailSendParams) -> MailSendParams {
    let proof = p.proof.take();
    p.from = engine.proofs.vouch(p.from.take(), proof.as_deref());
    p
}

/// Who `to` names: a run (id, prefix or name); a member of the sender's
/// team by its name, `leader`, or `team` (every member but the sender);
/// or `TEAM/MEMBER`, `TEAM/leader`, `TEAM/team` from anyone.
async fn recipients(reach: &Reach, to: &str, from: Option<&RunRow>) -> Result<Vec<RunRow>, ApiError> {
    let (team, member) = match to.split_once('/') {
        Some((team, member)) => (Some(team.to_string()), member.to_string()),
        None => (None, to.to_string()),
    };
    let sender = from.map(|r| r.id.clone());
    let (reference, sender2) = (team.clone(), sender.clone());
    let seats = reach
        .engine
        .store
        .mail()
        .seats(reference, sender2)
        .await
        .map_err(ApiError::internal)?;
    if team.is_some() && seats.is_empty() {
        return Err(ApiError::bad_request(format!(
            "no team matches '{}'",
            crate::text::bounded(to, 80)
        )));
    }
    let chosen: Vec<&str> = match member.as_str() {
        "team" => seats
            .iter()
            .filter(|s| Some(&s.run_id) != sender.as_ref())
            .map(|s| s.run_id.as_str())
            .collect(),
        "leader" => seats.iter().filter(|s| s.leader).map(|s| s.run_id.as_str()).collect(),
        name => seats
            .iter()
            .filter(|s| s.member == name)
            .map(|s| s.run_id.as_str())
            .collect(),
    };
    if chosen.is_empty() {
        if team.is_some() || (member == "team" && !seats.is_empty()) {
            return Err(ApiError::bad_request(format!(
                "'{}' names no member of the team",
                crate::text::bounded(to, 80)
            )));
        }
        if member == "team" {
            return Err(ApiError::bad_request(
                "`team` is the sender's team, and the sender is in none",
            ));
        }
        return Ok(vec![resolve_row(&reach.engine, to).await?]);
    }
    let mut rows = Vec::with_capacity(chosen.len());
    for run in chosen {
        rows.push(resolve_row(&reach.engine, run).await?);
    }
    Ok(rows)
}

/// The id of a copy of message `id` for `run`: stable, within the id bound.
fn copy_id(id: &str, run: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{id}\n{run}").as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{}-{hex}", &id[..id.len().min(40)])
}

async fn send_one(
    reach: &Reach,
    p: &MailSendParams,
    id: &str,
    to: &RunRow,
    from: Option<&RunRow>,
) -> Result<MailRecord, ApiError> {
    let (id2, to_id) = (id.to_string(), to.id.clone());
    let known = reach.engine.store.mail().get(&id2).await.map_err(ApiError::internal)?;
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
    let stored = store(reach, p, id, to, from).await?;
    hand_over(reach, &stored, to).await?;
    // Both runs' Mail tabs read it again.
    for run in std::iter::once(&to.id).chain(from.map(|f| &f.id)) {
        reach.engine.changed(run);
    }
    read(reach, id).await
}

async fn store(
    reach: &Reach,
    p: &MailSendParams,
    id: &str,
    to: &RunRow,
    from: Option<&RunRow>,
) -> Result<MailRecord, ApiError> {
    let (id, to_run) = (id.to_string(), to.id.clone());
    let from_run = from.map(|r| r.id.clone());
    let from_name = match (&p.relayed_from, from) {
        (Some(name), _) => name.clone(),
        (None, Some(r)) => r.name.clone(),
        (None, None) => "user".to_string(),
    };
    let thread = p.thread.clone().unwrap_or_else(|| id.clone());
    let (in_reply_to, body) = (p.in_reply_to.clone(), p.body.clone());
    reach
        .engine
        .store
        .mail()
        .insert(&NewMail {
            id: &id,
            from_run: from_run.as_deref(),
            from_name: &from_name,
            to_run: &to_run,
            thread: &thread,
            in_reply_to: in_reply_to.as_deref(),
            body: &body,
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
/// or, for a run on a host, relayed to the host's mailbox by its id (the
/// host hands it over there: its `mail ls` has it, an agent there that
/// reads its mail over MCP takes it, and a second relay is the first).
async fn hand_over(reach: &Reach, m: &MailRecord, to: &RunRow) -> Result<(), ApiError> {
    if to.host == "local" {
        crate::engine::queue::enqueue(&reach.engine, &to.id, &m.id, &prompt_of(m)).await?;
    } else {
        let relayed = MailSendParams {
            to: to.id.clone(),
            body: m.body.clone(),
            from: None,
            proof: None,
            id: Some(m.id.clone()),
            thread: Some(m.thread.clone()),
            in_reply_to: m.in_reply_to.clone(),
            relayed_from: Some(m.from_name.clone()),
        };
        crate::remote::relay_mail(&reach.here, &to.host, relayed).await?;
    }
    let id = m.id.clone();
    reach
        .engine
        .store
        .mail()
        .mark_handed(&id)
        .await
        .map_err(ApiError::internal)
}

/// Hands a stored message to its run (an approval request to a leader).
pub(super) async fn hand_over_one(reach: &Reach, m: &MailRecord) -> Result<(), ApiError> {
    let to = resolve_row(&reach.engine, &m.to).await?;
    hand_over(reach, m, &to).await?;
    reach.engine.changed(&to.id);
    Ok(())
}

/// At start: messages stored before the last daemon could hand them over.
pub async fn hand_over_stored(reach: &Reach) {
    let Ok(stored) = reach.engine.store.mail().stored().await else {
        return;
    };
    for m in stored {
        let Ok(to) = resolve_row(&reach.engine, &m.to).await else {
            continue;
        };
        if let Err(e) = hand_over(reach, &m, &to).await {
            tracing::warn!("mail {} to run {} not handed over: {}", m.id, to.id, e.message);
        }
    }
}

pub async fn list(reach: &Reach, p: MailListParams) -> Result<Vec<MailRecord>, ApiError> {
    let mut runs = match &p.run {
        Some(reference) => vec![resolve_row(&reach.engine, reference).await?.id],
        None => Vec::new(),
    };
    if let Some(team) = &p.team {
        let team = super::teams::resolve(reach, team).await?;
        runs = reach
            .engine
            .store
            .teams()
            .members(&team.id)
            .await
            .map_err(ApiError::internal)?
            .into_iter()
            .map(|m| m.run_id)
            .collect();
    }
    let every = p.run.is_none() && p.team.is_none();
    let limit = p
        .limit
        .unwrap_or(MailListParams::DEFAULT_LIMIT)
        .clamp(1, MailListParams::MAX_LIMIT);
    let found = reach
        .engine
        .store
        .mail()
        .list((!every).then_some(runs), limit)
        .await
        .map_err(ApiError::internal)?;
    Ok(asked_of_hosts(reach, found).await)
}

/// `mail.wait`: the messages to the run not yet typed into it, taken as
/// soon as there are any (or none once the timeout passes). Taken while
/// the run's delivery is held, so a message is either typed or read here,
/// never both.
pub async fn wait(reach: &Reach, p: MailWaitParams) -> Result<Vec<MailRecord>, ApiError> {
    let run = resolve_row(&reach.engine, &p.run).await?;
    let limit = p
        .timeout_ms
        .unwrap_or(MailWaitParams::DEFAULT_TIMEOUT_MS)
        .min(MailWaitParams::MAX_TIMEOUT_MS);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(limit);
    loop {
        let mut changes = reach.engine.changes.subscribe();
        let live = reach.engine.live(&run.id);
        let _typing = match &live {
            Some(live) => Some(live.delivery.lock().await),
            None => None,
        };
        let key = run.id.clone();
        let taken = reach
            .engine
            .store
            .mail()
            .take_unread(&key)
            .await
            .map_err(ApiError::internal)?;
        drop(_typing);
        if !taken.is_empty() {
            reach.engine.changed(&run.id);
            return Ok(taken);
        }
        if tokio::time::timeout_at(deadline, changes.recv()).await.is_err() {
            return Ok(Vec::new());
        }
    }
}

pub async fn read(reach: &Reach, id: &str) -> Result<MailRecord, ApiError> {
    let key = id.to_string();
    let stored = reach.engine.store.mail().get(&key).await.map_err(ApiError::internal)?;
    match stored {
        Some(m) => Ok(asked_of_hosts(reach, vec![m]).await.remove(0)),
        // Held on this host for the daemon that placed its sender.
        None => super::outbox::read(reach, id)
            .await?
            .ok_or_else(|| ApiError::bad_request(format!("no message has id {}", crate::text::bounded(id, 80)))),
    }
}

/// How long a listing waits for a host to say where a message stands.
const HOST_LOOK: std::time::Duration = std::time::Duration::from_secs(2);
/// At most this many messages a listing asks hosts about.
const HOST_LOOKS: usize = 32;

/// Messages handed to runs on hosts, with where each stands there (a host
/// that does not answer soon, or one asked nothing more this listing after
/// it did not: as sent). One whose prompt there is over is kept so here.
async fn asked_of_hosts(reach: &Reach, mut found: Vec<MailRecord>) -> Vec<MailRecord> {
    use crate::store::mail::SENT_TO_HOST;
    let pending: Vec<usize> = (0..found.len())
        .filter(|&i| found[i].state == SENT_TO_HOST)
        .take(HOST_LOOKS)
        .collect();
    if pending.is_empty() {
        return found;
    }
    let ids = pending.iter().map(|&i| found[i].to.clone()).collect();
    let rows = reach.engine.store.runs().get_many(ids).await.unwrap_or_default();
    let mut silent: Vec<String> = Vec::new();
    for (&i, row) in pending.iter().zip(rows) {
        let Some(host) = row.map(|r| r.host).filter(|h| h != "local" && !silent.contains(h)) else {
            continue;
        };
        let asked = crate::remote::mail_there(&reach.here, &host, &found[i].id);
        let Ok(Ok(there)) = tokio::time::timeout(HOST_LOOK, asked).await else {
            silent.push(host);
            continue;
        };
        if matches!(there.state.as_str(), "delivered" | "undelivered" | "dropped") {
            let _ = reach.engine.store.mail().settled_there(there.clone()).await;
        }
        found[i].state = there.state;
        found[i].reason = there.reason;
    }
    found
}
