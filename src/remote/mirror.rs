//! A remote run, mirrored here (docs/design.md §8): its record in the local
//! database under the same id, and its output appended to a local
//! `runs/<id>/output.log` through one lossless subscription over the host's
//! link. Local clients then attach, read logs and export exactly as for a
//! local run: the daemon's fan-out reads the mirror log.
//!
//! The mirror's length is the acked offset (docs/design.md §5): after a lost link
//! the subscription resumes from it, bytes the mirror already holds are
//! dropped by offset, and frames of an older connection's epoch are
//! rejected.
//!
//! The daemon drives the run as live here through its `RemoteRun` (typed
//! input, resizes, cancels and screens go to the host's daemon) and hears
//! the mirror's progress as `Mirrored` events.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::error::RemoteError;
use super::link::{Connection, HostLink, RunEvent};
use super::{Here, Mirrored, RemoteRun};
use crate::api::{ApiError, ErrorCode, RunRecord, RunState, method};

/// Reconnect backoff: quick first, doubling. While the host is merely
/// unreachable the wait is capped at 1 s, so output flows again within the
/// 2 s of a returning link that docs/design.md §10 allows (a loopback reconnect —
/// SSH, probe, serve — takes ~0.3 s); a failed attempt costs one TCP
/// connect. A refusal a person must fix (host key, keys, version) is
/// retried at most every 30 s.
const BACKOFF_FIRST: Duration = Duration::from_millis(250);
const BACKOFF_UNREACHABLE: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// `output.idx` gets a time sample at most this often, as the supervisor's.
const INDEX_EVERY: Duration = Duration::from_millis(100);

/// Starts following a remote run (no-op if already followed).
pub async fn follow(daemon: &Here, link: Arc<HostLink>, id: &str) -> Result<(), ApiError> {
    if daemon.is_live(id) {
        return Ok(());
    }
    let dir = daemon.paths().run_dir(id);
    std::fs::create_dir_all(&dir).map_err(ApiError::internal)?;
    let have = std::fs::metadata(daemon.paths().output_log(id))
        .map(|m| m.len())
        .unwrap_or(0);
    let driven = daemon.clone().drive(RemoteRun::new(link.clone(), id.to_string()), have);
    if let Some(events) = driven {
        tokio::spawn(run(daemon.clone(), link, id.to_string(), events));
    }
    Ok(())
}

/// The local mirror log, appended to as output arrives.
struct MirrorLog {
    log: std::fs::File,
    index: Option<std::fs::File>,
    len: u64,
    sampled: Option<Instant>,
}

/// What one event from the link means for the mirror.
#[derive(Debug, PartialEq)]
enum Step {
    /// Output taken: true when the log grew (false: a duplicate, dropped).
    Appended(bool),
    /// From a connection other than the current one: rejected.
    Stale,
    /// Bytes are missing before this frame: subscribe again from our length.
    Gap,
    /// The run's record changed there.
    Changed,
    /// Caught up with the output there; more may come.
    CaughtUp,
    /// The output ended there, and all of it is here.
    Ended,
    /// The subscription there failed (with why): subscribe again.
    Failed(String),
}

impl MirrorLog {
    fn open(daemon: &Here, id: &str) -> std::io::Result<MirrorLog> {
        MirrorLog::open_at(&daemon.paths().output_log(id), &daemon.paths().output_index(id))
    }

    fn open_at(log: &std::path::Path, index: &std::path::Path) -> std::io::Result<MirrorLog> {
        let open = |path| std::fs::OpenOptions::new().create(true).append(true).open(path);
        let log = open(log)?;
        let len = log.metadata()?.len();
        let index = open(index).ok();
        Ok(MirrorLog {
            log,
            index,
            len,
            sampled: None,
        })
    }

    /// Takes one event that came over the connection of epoch `current`.
    fn take(&mut self, current: u64, event: RunEvent) -> std::io::Result<Step> {
        let epoch = match &event {
            RunEvent::Output { epoch, .. } | RunEvent::End { epoch, .. } | RunEvent::Changed { epoch } => *epoch,
        };
        if epoch != current {
            return Ok(Step::Stale);
        }
        Ok(match event {
            RunEvent::Output { offset, bytes, .. } => {
                let before = self.len;
                match self.append(offset, &bytes)? {
                    true => Step::Appended(self.len > before),
                    false => Step::Gap,
                }
            }
            RunEvent::Changed { .. } => Step::Changed,
            // A failed subscription also says `final`: it is not the end
            // of the output.
            RunEvent::End { error: Some(e), .. } => Step::Failed(e),
            RunEvent::End { is_final: true, .. } => Step::Ended,
            RunEvent::End { .. } => Step::CaughtUp,
        })
    }

    /// Appends the part of `bytes` (starting at `offset`) not yet held.
    /// Returns false on a gap: bytes missing before `offset`.
    fn append(&mut self, offset: u64, bytes: &[u8]) -> std::io::Result<bool> {
        let end = offset + bytes.len() as u64;
        if end <= self.len {
            return Ok(true); // a duplicate: already held
        }
        if offset > self.len {
            return Ok(false);
        }
        let fresh = &bytes[(self.len - offset) as usize..];
        if self.sampled.is_none_or(|t| t.elapsed() >= INDEX_EVERY) {
            self.sampled = Some(Instant::now());
            if let Some(index) = &mut self.index {
                let mut sample = [0u8; 16];
                sample[..8].copy_from_slice(&self.len.to_le_bytes());
                sample[8..].copy_from_slice(&(crate::store::now_ms() as u64).to_le_bytes());
                let _ = index.write_all(&sample);
            }
        }
        self.log.write_all(fresh)?;
        self.len = end;
        Ok(true)
    }
}

/// How long to wait before connecting again after `error`.
fn next_backoff(backoff: Duration, error: &RemoteError) -> Duration {
    let cap = match error {
        RemoteError::Unreachable { .. } | RemoteError::RemoteUnavailable { .. } | RemoteError::Other(_) => {
            BACKOFF_UNREACHABLE
        }
        _ => BACKOFF_MAX,
    };
    (backoff * 2).min(cap)
}

/// Follows one run until it has ended there and its output is all here.
/// The daemon drives this whoever is attached: the link is retried for as
/// long as the run lives there.
async fn run(daemon: Here, link: Arc<HostLink>, id: String, events: mpsc::Sender<Mirrored>) {
    let _following = link.follow();
    let mut log = match MirrorLog::open(&daemon, &id) {
        Ok(log) => log,
        Err(e) => {
            let reason = format!("cannot write the mirror log: {e}");
            end(&daemon, &id, &events, 0, RunState::Lost, reason).await;
            return;
        }
    };
    let mut backoff = BACKOFF_FIRST;
    let mut removed = link.removed.subscribe();
    loop {
        if *removed.borrow() {
            let reason = format!("host {} was removed while the run was live", link.name);
            end(&daemon, &id, &events, log.len, RunState::Lost, reason).await;
            return;
        }
        let conn = match link.connection().await {
            Ok(conn) => conn,
            Err(e) => {
                tracing::debug!("run {id}: host {} unreachable, retrying: {e}", link.name);
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = removed.changed() => {}
                }
                backoff = next_backoff(backoff, &e);
                continue;
            }
        };
        backoff = BACKOFF_FIRST;
        match follow_on(&daemon, &link, &conn, &id, &events, &mut log).await {
            Followed::Ended => break,
            Followed::Unknown(reason) => {
                end(&daemon, &id, &events, log.len, RunState::Lost, reason).await;
                return;
            }
            Followed::LinkLost => continue,
            Followed::Again => {
                // Same connection: give the host a moment before asking again.
                tokio::time::sleep(BACKOFF_FIRST).await;
                continue;
            }
        }
    }
    // The output is complete; the record there is final. Fetch it (over
    // whichever connection is up) and end the mirror with it.
    loop {
        let failure = match link.connection().await {
            Ok(conn) => match refresh(&daemon, &link, &conn, &id, log.len, true).await {
                Ok(true) => break,
                // Final output before the final record: rare; look again shortly.
                Ok(false) => None,
                Err(_) => None,
            },
            Err(e) => Some(e),
        };
        if *removed.borrow() {
            break;
        }
        tokio::time::sleep(backoff).await;
        backoff = match failure {
            Some(e) => next_backoff(backoff, &e),
            None => BACKOFF_FIRST,
        };
    }
    let _ = events.send(Mirrored::Ended(log.len)).await;
}

enum Followed {
    Ended,
    /// The connection ended: connect again.
    LinkLost,
    /// The subscription ended but the connection lives: subscribe again.
    Again,
    /// The remote daemon does not know the run (its state was wiped).
    Unknown(String),
}

/// One connection's worth of following: subscribe from the mirror's length
/// (what the mirror holds is what it has acknowledged), append until the
/// output ends or the connection does.
async fn follow_on(
    daemon: &Here,
    link: &Arc<HostLink>,
    conn: &Arc<Connection>,
    id: &str,
    mirrored: &mpsc::Sender<Mirrored>,
    log: &mut MirrorLog,
) -> Followed {
    let mut events = conn.route(id);
    let attach = crate::api::AttachParams {
        run: id.to_string(),
        offset: Some(log.len),
        lossless: true,
        ..Default::default()
    };
    match conn.ask_raw::<method::RunsAttach>(&link.name, &link.name, attach).await {
        Ok(_) => {}
        Err(e) if e.code == ErrorCode::UnknownRun => {
            return Followed::Unknown(format!("the daemon on host {} no longer knows this run", link.name));
        }
        Err(e) => {
            tracing::info!("run {id}: cannot subscribe on host {}: {e}", link.name);
            conn.unroute(id);
            return if conn.alive() {
                Followed::Again
            } else {
                Followed::LinkLost
            };
        }
    }
    // Mail the run sent there while no connection was up.
    super::outbox::pull(daemon, link, conn, id).await;
    let _ = refresh(daemon, link, conn, id, log.len, false).await;
    while let Some(event) = events.recv().await {
        let step = match log.take(conn.epoch, event) {
            Ok(step) => step,
            Err(e) => return Followed::Unknown(format!("cannot write the mirror log: {e}")),
        };
        match step {
            Step::Appended(true) => {
                let _ = mirrored.send(Mirrored::Output(log.len)).await;
            }
            Step::Appended(false) | Step::CaughtUp => {}
            Step::Stale => tracing::debug!("run {id}: a frame of an older connection dropped"),
            Step::Gap => {
                tracing::warn!("run {id}: a gap before our {} bytes; subscribing again", log.len);
                conn.unroute(id);
                return Followed::Again;
            }
            Step::Changed => {
                let _ = refresh(daemon, link, conn, id, log.len, false).await;
            }
            Step::Ended => {
                conn.unroute(id);
                return Followed::Ended;
            }
            Step::Failed(e) => {
                tracing::warn!("run {id}: the subscription on host {} failed: {e}", link.name);
                conn.unroute(id);
                return Followed::Again;
            }
        }
    }
    Followed::LinkLost
}

/// Fetches the remote record and brings the mirror up to date. Returns
/// whether the run has ended.
async fn refresh(
    daemon: &Here,
    link: &Arc<HostLink>,
    conn: &Arc<Connection>,
    id: &str,
    have: u64,
    may_end: bool,
) -> Result<bool, ApiError> {
    let detail = conn
        .ask_raw::<method::RunsShow>(&link.name, &link.name, crate::api::RunRef { run: id.to_string() })
        .await?;
    super::place::mirror_children(daemon, link, conn, &detail).await;
    // Mail it sent there since (before its end is mirrored, so the mail
    // reaches its recipient ahead of its task result).
    if super::outbox::holds_mail(&detail) {
        super::outbox::pull(daemon, link, conn, id).await;
    }
    let record: RunRecord = serde_json::from_value(detail).map_err(ApiError::internal)?;
    let ended = daemon
        .store()
        .mirrors()
        .update(record, have, may_end)
        .await
        .map_err(ApiError::internal)?;
    daemon.changed(id);
    Ok(ended)
}

/// Ends a mirror we can no longer follow, with the reason.
async fn end(daemon: &Here, id: &str, events: &mpsc::Sender<Mirrored>, held: u64, state: RunState, reason: String) {
    let _ = daemon.store().mirrors().end(id, state, reason).await;
    let _ = events.send(Mirrored::Ended(held)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mirror() -> (tempfile::TempDir, MirrorLog) {
        let dir = tempfile::tempdir().unwrap();
        let log = MirrorLog::open_at(&dir.path().join("output.log"), &dir.path().join("output.idx")).unwrap();
        (dir, log)
    }

    fn output(epoch: u64, offset: u64, bytes: &[u8]) -> RunEvent {
        RunEvent::Output {
            epoch,
            offset,
            bytes: bytes.to_vec(),
        }
    }

    fn held(dir: &tempfile::TempDir) -> Vec<u8> {
        std::fs::read(dir.path().join("output.log")).unwrap()
    }

    #[test]
    fn frames_of_an_older_epoch_are_rejected() {
        let (dir, mut log) = mirror();
        assert_eq!(log.take(2, output(2, 0, b"new ")).unwrap(), Step::Appended(true));
        // The old connection's frame carries what the new one has not sent
        // yet: taking it would put bytes of a stale stream in the log.
        assert_eq!(log.take(2, output(1, 4, b"stale")).unwrap(), Step::Stale);
        let end = RunEvent::End {
            epoch: 1,
            is_final: true,
            error: None,
        };
        assert_eq!(log.take(2, end).unwrap(), Step::Stale);
        assert_eq!(log.take(2, RunEvent::Changed { epoch: 1 }).unwrap(), Step::Stale);
        assert_eq!(log.take(2, output(2, 4, b"link")).unwrap(), Step::Appended(true));
        assert_eq!(held(&dir), b"new link");
        assert_eq!(log.len, 8);
    }

    #[test]
    fn replayed_bytes_are_kept_once() {
        let (dir, mut log) = mirror();
        assert_eq!(log.take(1, output(1, 0, b"hello ")).unwrap(), Step::Appended(true));
        // A resubscription from an older offset replays: a whole duplicate
        // is dropped, an overlapping frame adds only what is new.
        assert_eq!(log.take(1, output(1, 0, b"hello ")).unwrap(), Step::Appended(false));
        assert_eq!(log.take(1, output(1, 3, b"lo world")).unwrap(), Step::Appended(true));
        assert_eq!(held(&dir), b"hello world");
    }

    #[test]
    fn a_gap_is_not_written_and_asks_for_a_resubscription() {
        let (dir, mut log) = mirror();
        log.take(1, output(1, 0, b"abc")).unwrap();
        assert_eq!(log.take(1, output(1, 5, b"fgh")).unwrap(), Step::Gap);
        assert_eq!(held(&dir), b"abc");
        // Reopened, the mirror resumes from what it holds.
        drop(log);
        let log = MirrorLog::open_at(&dir.path().join("output.log"), &dir.path().join("output.idx")).unwrap();
        assert_eq!(log.len, 3);
    }

    #[test]
    fn a_failed_subscription_is_not_the_end_of_the_output() {
        let (_dir, mut log) = mirror();
        let failed = RunEvent::End {
            epoch: 1,
            is_final: true,
            error: Some("no output log".into()),
        };
        assert_eq!(log.take(1, failed).unwrap(), Step::Failed("no output log".into()));
        let ended = RunEvent::End {
            epoch: 1,
            is_final: true,
            error: None,
        };
        assert_eq!(log.take(1, ended).unwrap(), Step::Ended);
        let caught_up = RunEvent::End {
            epoch: 1,
            is_final: false,
            error: None,
        };
        assert_eq!(log.take(1, caught_up).unwrap(), Step::CaughtUp);
    }

    #[test]
    fn only_a_host_that_is_merely_unreachable_is_retried_within_a_second() {
        let unreachable = RemoteError::Unreachable {
            name: "box".into(),
            address: "u@h:22".into(),
            why: "connection refused".into(),
        };
        let mut wait = BACKOFF_FIRST;
        for _ in 0..10 {
            wait = next_backoff(wait, &unreachable);
        }
        assert_eq!(wait, BACKOFF_UNREACHABLE);
        let refused = RemoteError::AuthFailed {
            address: "u@h:22".into(),
            tried: "id_ed25519".into(),
        };
        for _ in 0..10 {
            wait = next_backoff(wait, &refused);
        }
        assert_eq!(wait, BACKOFF_MAX);
    }
}
