//! A remote run, mirrored here (DESIGN §8): its record in the local
//! database under the same id, and its output appended to a local
//! `runs/<id>/output.log` through one lossless subscription over the host's
//! link. Local clients then attach, read logs and export exactly as for a
//! local run: the daemon's fan-out reads the mirror log.
//!
//! The mirror's length is the acked offset (DESIGN §5): after a lost link
//! the subscription resumes from it, bytes the mirror already holds are
//! dropped by offset, and frames of an older connection's epoch are
//! rejected.
//!
//! The run's `LiveRun` needs a supervisor link; a remote run's is a stand-in
//! served here that forwards typed input, resize and cancel to the remote
//! daemon.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};

use super::link::{Connection, HostLink, RunEvent};
use super::store as mirror_store;
use crate::api::{ApiError, ErrorCode, RunRecord, RunState, method};
use crate::daemon::{Daemon, Link, LiveRun};
use crate::protocol::rpc::{Message, Response};
use crate::protocol::{Frame, exchange_headers, read_frame, write_frame};
use crate::supervise::server_method as sup;

/// Reconnect backoff: quick first, capped so a host that comes back is
/// noticed within half a minute.
const BACKOFF_FIRST: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(30);
/// `output.idx` gets a time sample at most this often, as the supervisor's.
const INDEX_EVERY: Duration = Duration::from_millis(100);

/// Starts following a remote run (no-op if already followed).
pub async fn follow(daemon: &Arc<Daemon>, link: Arc<HostLink>, id: &str) -> Result<(), ApiError> {
    if daemon.live(id).is_some() {
        return Ok(());
    }
    let dir = daemon.paths.run_dir(id);
    std::fs::create_dir_all(&dir).map_err(ApiError::internal)?;
    let have = std::fs::metadata(daemon.paths.output_log(id))
        .map(|m| m.len())
        .unwrap_or(0);
    let stand_in = stand_in(link.clone(), id.to_string())
        .await
        .map_err(ApiError::internal)?;
    let live = Arc::new(LiveRun::new(id.to_string(), stand_in, have));
    {
        let mut runs = daemon.runs.lock().unwrap_or_else(|p| p.into_inner());
        if runs.contains_key(id) {
            return Ok(());
        }
        runs.insert(id.to_string(), live.clone());
    }
    tokio::spawn(run(daemon.clone(), link, live));
    daemon.changed(id);
    Ok(())
}

/// The local mirror log, appended to as output arrives.
struct MirrorLog {
    log: std::fs::File,
    index: Option<std::fs::File>,
    len: u64,
    sampled: Option<Instant>,
}

impl MirrorLog {
    fn open(daemon: &Daemon, id: &str) -> std::io::Result<MirrorLog> {
        let open = |path| std::fs::OpenOptions::new().create(true).append(true).open(path);
        let log = open(daemon.paths.output_log(id))?;
        let len = log.metadata()?.len();
        let index = open(daemon.paths.output_index(id)).ok();
        Ok(MirrorLog {
            log,
            index,
            len,
            sampled: None,
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

/// Follows one run until it has ended there and its output is all here.
async fn run(daemon: Arc<Daemon>, link: Arc<HostLink>, live: Arc<LiveRun>) {
    let id = live.id.clone();
    let mut log = match MirrorLog::open(&daemon, &id) {
        Ok(log) => log,
        Err(e) => {
            end(
                &daemon,
                &live,
                RunState::Lost,
                format!("cannot write the mirror log: {e}"),
            )
            .await;
            return;
        }
    };
    let mut backoff = BACKOFF_FIRST;
    let mut removed = link.removed.subscribe();
    loop {
        if *removed.borrow() {
            end(
                &daemon,
                &live,
                RunState::Lost,
                format!("host {} was removed while the run was live", link.name),
            )
            .await;
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
                backoff = (backoff * 2).min(BACKOFF_MAX);
                continue;
            }
        };
        backoff = BACKOFF_FIRST;
        match follow_on(&daemon, &link, &conn, &live, &mut log).await {
            Followed::Ended => break,
            Followed::Unknown(reason) => {
                end(&daemon, &live, RunState::Lost, reason).await;
                return;
            }
            Followed::LinkLost => continue,
        }
    }
    // The output is complete; the record there is final. Fetch it (over
    // whichever connection is up) and end the mirror with it.
    loop {
        if let Ok(conn) = link.connection().await
            && let Ok(ended) = refresh(&daemon, &link, &conn, &id, log.len, true).await
        {
            if !ended {
                // Final output before the final record: rare; look again shortly.
                tokio::time::sleep(BACKOFF_FIRST).await;
                continue;
            }
            break;
        }
        if *removed.borrow() {
            break;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
    live.committed.send_replace(log.len);
    release(&daemon, &live);
}

enum Followed {
    Ended,
    LinkLost,
    /// The remote daemon does not know the run (its state was wiped).
    Unknown(String),
}

/// One connection's worth of following: subscribe from the mirror's length,
/// append until the output ends or the connection does.
async fn follow_on(
    daemon: &Arc<Daemon>,
    link: &Arc<HostLink>,
    conn: &Arc<Connection>,
    live: &Arc<LiveRun>,
    log: &mut MirrorLog,
) -> Followed {
    let id = live.id.clone();
    let mut events = conn.route(&id);
    let attach = json!({ "run": id, "offset": log.len, "lossless": true });
    match conn.call(&link.name, &link.name, method::RUNS_ATTACH, attach).await {
        Ok(_) => {}
        Err(e) if e.code == ErrorCode::UnknownRun => {
            return Followed::Unknown(format!("the daemon on host {} no longer knows this run", link.name));
        }
        Err(e) => {
            tracing::info!("run {id}: cannot subscribe on host {}: {e}", link.name);
            conn.unroute(&id);
            tokio::time::sleep(BACKOFF_FIRST).await;
            return Followed::LinkLost;
        }
    }
    let _ = refresh(daemon, link, conn, &id, log.len, false).await;
    while let Some(event) = events.recv().await {
        match event {
            RunEvent::Output { epoch, .. } | RunEvent::End { epoch, .. } | RunEvent::Changed { epoch }
                if epoch != conn.epoch =>
            {
                // A frame from an older connection: stale, rejected.
                continue;
            }
            RunEvent::Output { offset, bytes, .. } => match log.append(offset, &bytes) {
                Ok(true) => {
                    if live.committed.send_replace(log.len) < log.len {
                        *live.last_output.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
                        live.wake.notify_waiters();
                    }
                }
                Ok(false) => {
                    tracing::warn!("run {id}: gap before offset {offset} (have {}); resubscribing", log.len);
                    conn.unroute(&id);
                    return Followed::LinkLost;
                }
                Err(e) => {
                    return Followed::Unknown(format!("cannot write the mirror log: {e}"));
                }
            },
            RunEvent::Changed { .. } => {
                let _ = refresh(daemon, link, conn, &id, log.len, false).await;
            }
            RunEvent::End { is_final: true, .. } => {
                conn.unroute(&id);
                return Followed::Ended;
            }
            RunEvent::End { error: Some(e), .. } => {
                tracing::warn!("run {id}: the remote subscription failed: {e}");
                conn.unroute(&id);
                return Followed::LinkLost;
            }
            RunEvent::End { .. } => {}
        }
    }
    Followed::LinkLost
}

/// Fetches the remote record and brings the mirror up to date. Returns
/// whether the run has ended.
async fn refresh(
    daemon: &Arc<Daemon>,
    link: &Arc<HostLink>,
    conn: &Arc<Connection>,
    id: &str,
    have: u64,
    may_end: bool,
) -> Result<bool, ApiError> {
    let detail = conn
        .call(&link.name, &link.name, method::RUNS_SHOW, json!({ "run": id }))
        .await?;
    let record: RunRecord = serde_json::from_value(detail).map_err(ApiError::internal)?;
    let ended = daemon
        .store
        .call(move |c| mirror_store::update_mirror(c, &record, have, may_end))
        .await
        .map_err(ApiError::internal)?;
    daemon.changed(id);
    Ok(ended)
}

/// Ends a mirror we can no longer follow, with the reason.
async fn end(daemon: &Arc<Daemon>, live: &Arc<LiveRun>, state: RunState, reason: String) {
    let id = live.id.clone();
    let _ = daemon
        .store
        .call(move |c| mirror_store::end_mirror(c, &id, state, reason))
        .await;
    release(daemon, live);
}

fn release(daemon: &Arc<Daemon>, live: &Arc<LiveRun>) {
    live.ended.send_replace(true);
    live.wake.notify_waiters();
    daemon.runs.lock().unwrap_or_else(|p| p.into_inner()).remove(&live.id);
    daemon.changed(&live.id);
}

/// A stand-in supervisor for a remote run, on an in-memory stream: the
/// daemon's usual `Link` talks to it.
async fn stand_in(link: Arc<HostLink>, id: String) -> std::io::Result<Link> {
    let (ours, theirs) = tokio::io::duplex(64 * 1024);
    tokio::spawn(serve_stand_in(link, id, ours));
    let (r, w) = tokio::io::split(theirs);
    let (stand_in, _notes) = Link::over(r, w).await?;
    Ok(stand_in)
}

async fn serve_stand_in(link: Arc<HostLink>, id: String, stream: tokio::io::DuplexStream) {
    let (r, mut w) = tokio::io::split(stream);
    let mut r = BufReader::new(r);
    if exchange_headers(&mut r, &mut w).await.is_err() {
        return;
    }
    let (answers, mut answers_rx) = tokio::sync::mpsc::channel::<Frame>(16);
    tokio::spawn(async move {
        while let Some(frame) = answers_rx.recv().await {
            if write_frame(&mut w, &frame).await.is_err() {
                break;
            }
            let _ = w.flush().await;
        }
    });
    while let Ok(frame) = read_frame(&mut r).await {
        match frame {
            Frame::Control(bytes) => {
                let Ok(Message::Request(req)) = Message::parse(&bytes) else {
                    continue;
                };
                let Some(request_id) = req.id else { continue };
                let (link, id, answers) = (link.clone(), id.clone(), answers.clone());
                tokio::spawn(async move {
                    let result = stand_in_call(&link, &id, &req.method, req.params).await;
                    let resp = match result {
                        Ok(v) => Response::ok(request_id, v),
                        Err(e) => Response::err(request_id, e.code.as_str(), e.message),
                    };
                    let _ = answers.send(Frame::control(&resp)).await;
                });
            }
            Frame::Input { bytes, .. } => {
                // Keys typed while the link is down are dropped, not queued
                // to land later in a different screen.
                if let Some(conn) = link.current() {
                    let _ = conn.send_frame(Frame::Input { run: id.clone(), bytes }).await;
                }
            }
            Frame::Output { .. } | Frame::Snapshot { .. } => {}
        }
    }
}

async fn stand_in_call(link: &Arc<HostLink>, id: &str, name: &str, params: Value) -> Result<Value, ApiError> {
    match name {
        sup::CANCEL => {
            let force = params.get("force").and_then(Value::as_bool).unwrap_or(false);
            link.call(method::RUNS_CANCEL, json!({ "run": id, "force": force }))
                .await
                .map(|_| Value::Null)
        }
        sup::RESIZE => {
            link.call(
                method::RUNS_RESIZE,
                json!({ "run": id, "rows": params["rows"], "cols": params["cols"] }),
            )
            .await
        }
        // The screen of a remote run is rebuilt here from its mirror log
        // (the fan-out falls back to that when this is refused).
        _ => Err(ApiError::new(
            ErrorCode::NotRunning,
            format!("{name} is not available for a remote run"),
        )),
    }
}
