//! One client connection: the version header, then framed JSON-RPC requests
//! and input frames in; responses, notifications and output frames out.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::io::BufReader;
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::room::Activity;
use super::subscribe::Outbox;
use crate::api::ErrorCode;
use crate::daemon::Daemon;
use crate::protocol::rpc::{Message, Request, Response};
use crate::protocol::{Frame, FrameError, HeaderError, exchange_headers, read_frame_within, write_frame};

/// Control frames queued for one client. Bounded so a client that never
/// reads cannot grow the daemon; responses wait their turn instead.
const CONTROL_QUEUE: usize = 256;
/// Output frames queued for one client (each ≤ 256 KiB): the per-client
/// bound of docs/design.md §5; past it the subscription blocks, falls behind and is
/// given a snapshot.
const OUTPUT_QUEUE: usize = 16;
/// Requests of one client being answered at once. Past it the daemon stops
/// reading that client's socket until one is answered, so a client that sends
/// without reading its answers is held back instead of growing the daemon
/// (one task per request otherwise: 25 MB of unread requests took 1.8 GB).
/// Well above what a client pipelines: `attach` has two in flight at most.
const IN_FLIGHT: usize = 256;

/// A peer that connects and never says who it is gets this long.
const HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A frame begun is finished within this, or the connection closes: a
/// peer that stalls mid-frame holds its part of a frame for no longer
/// (a 1 MiB frame over a slow SSH link to a host still arrives in time).
const FRAME_WITHIN: std::time::Duration = std::time::Duration::from_secs(30);

/// A client's subscriptions by run: the streaming task, and what the client
/// has acknowledged (for windowed subscriptions).
pub struct Subscription {
    pub task: JoinHandle<()>,
    pub acked: tokio::sync::watch::Sender<u64>,
}

pub type Subscriptions = Arc<parking_lot::Mutex<HashMap<String, Subscription>>>;

pub async fn serve(daemon: Arc<Daemon>, stream: UnixStream) {
    let (r, mut w) = stream.into_split();
    let mut r = BufReader::new(r);
    if !greeted(&mut r, &mut w).await {
        return;
    }
    let (control, mut control_rx) = mpsc::channel::<Frame>(CONTROL_QUEUE);
    let (output, mut output_rx) = mpsc::channel::<Frame>(OUTPUT_QUEUE);
    let writer = tokio::spawn(async move {
        loop {
            let frame = tokio::select! {
                biased;
                Some(f) = control_rx.recv() => f,
                Some(f) = output_rx.recv() => f,
                else => break,
            };
            if write_frame(&mut w, &frame).await.is_err() {
                break;
            }
        }
    });
    let (gone_tx, gone) = tokio::sync::watch::channel(false);
    let outbox = Outbox {
        control,
        output,
        viewer: crate::engine::size::new_viewer(),
        sized: Arc::default(),
        gone,
        ahead: Arc::default(),
    };
    let subscriptions: Subscriptions = Arc::default();
    let in_flight = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT));
    let activity = Arc::new(Activity::new(in_flight.clone(), IN_FLIGHT, subscriptions.clone()));
    let place = daemon.room.enter(activity.clone());

    let forward_changes = forward_changes(&daemon, outbox.clone());

    loop {
        let read = tokio::select! {
            read = read_frame_within(&mut r, Some(FRAME_WITHIN)) => read,
            () = activity.leave.notified() => {
                let why = "closed to make room for a new client: every place was taken and this connection was the one idle longest";
                let resp = Response::err(0, ErrorCode::DaemonUnavailable.as_str(), why.into());
                let _ = outbox.control.send(Frame::control(&resp)).await;
                break;
            }
        };
        activity.heard();
        let frame = match read {
            Ok(frame) => frame,
            Err(FrameError::Closed) => break,
            Err(e) => {
                // A malformed frame ends this connection only; say why first.
                let resp = Response::err(0, ErrorCode::Protocol.as_str(), e.to_string());
                let _ = outbox.control.send(Frame::control(&resp)).await;
                break;
            }
        };
        match frame {
            Frame::Control(bytes) => match Message::parse(&bytes) {
                Ok(Message::Request(req)) => {
                    // Never closed: this function holds the semaphore.
                    let Ok(permit) = in_flight.clone().acquire_owned().await else {
                        break;
                    };
                    let daemon = daemon.clone();
                    let outbox = outbox.clone();
                    let subs = subscriptions.clone();
                    tokio::spawn(async move {
                        answer(daemon, outbox, subs, req).await;
                        drop(permit);
                    });
                }
                Ok(Message::Response(_)) => {}
                Err(e) => {
                    let resp = Response::err(0, ErrorCode::Protocol.as_str(), format!("malformed JSON-RPC: {e}"));
                    let _ = outbox.control.send(Frame::control(&resp)).await;
                }
            },
            Frame::Input { run, bytes } => typed(&daemon, &outbox, &run, bytes).await,
            Frame::Output { .. } | Frame::Snapshot { .. } | Frame::Screen { .. } => {}
        }
    }
    daemon.room.leave(place);
    let _ = gone_tx.send(true);
    for (_, sub) in subscriptions.lock().drain() {
        sub.task.abort();
    }
    forward_changes.abort();
    super::listing::Ahead::forget(&outbox);
    let sized: Vec<String> = outbox.sized.lock().drain().collect();
    crate::engine::size::release_all(&daemon.engine, outbox.viewer, &sized).await;
    drop(outbox);
    let _ = writer.await;
}

/// Exchanges version headers: false (the connection to close) when the
/// client sends none in time or one this build cannot speak, which it is
/// told in a frame it can still read.
async fn greeted(r: &mut BufReader<tokio::net::unix::OwnedReadHalf>, w: &mut tokio::net::unix::OwnedWriteHalf) -> bool {
    let header = match tokio::time::timeout(HEADER_TIMEOUT, exchange_headers(r, w)).await {
        Ok(result) => result,
        Err(_) => {
            tracing::info!("client sent no header in {}s; closed", HEADER_TIMEOUT.as_secs());
            return false;
        }
    };
    if let Err(e) = header {
        tracing::info!("client refused: {e}");
        // Tell a wrong-version peer why, in a frame it can still read if it
        // speaks frames at all; a peer that is not agents at all is a
        // protocol error, not a version it could upgrade from.
        let code = match e {
            HeaderError::Mismatch { .. } => ErrorCode::VersionMismatch,
            _ => ErrorCode::Protocol,
        };
        let resp = Response::err(0, code.as_str(), e.to_string());
        let _ = write_frame(w, &Frame::control(&resp)).await;
        return false;
    }
    true
}

/// Run-change notifications to the client, ids only (STYLE:
/// notifications carry ids), until it is gone: those heard within a
/// frame's time (`CHANGES_EVERY`) sent together, each run once, so a
/// thousand runs changing feed a client at its frame rate, not theirs.
fn forward_changes(daemon: &Arc<Daemon>, outbox: Outbox) -> tokio::task::JoinHandle<()> {
    use tokio::sync::broadcast::error::RecvError;
    let mut changes = daemon.engine.changes.subscribe();
    tokio::spawn(async move {
        let mut heard = std::collections::BTreeSet::new();
        loop {
            match changes.recv().await {
                Ok(id) => heard.insert(id),
                // Missed: say any may have changed.
                Err(RecvError::Lagged(_)) => heard.insert(String::new()),
                Err(RecvError::Closed) => break,
            };
            let due = tokio::time::Instant::now() + CHANGES_EVERY;
            loop {
                tokio::select! {
                    change = changes.recv() => match change {
                        Ok(id) => heard.insert(id),
                        Err(RecvError::Lagged(_)) => heard.insert(String::new()),
                        Err(RecvError::Closed) => break,
                    },
                    _ = tokio::time::sleep_until(due) => break,
                };
            }
            for run in std::mem::take(&mut heard) {
                if !outbox.tell(crate::api::RunChanged { run }).await {
                    return;
                }
            }
        }
    })
}

/// How long run changes are gathered before they go to a client: about a
/// frame of a terminal UI.
const CHANGES_EVERY: std::time::Duration = std::time::Duration::from_millis(30);

/// Keys a client typed into a run: passed on, its size taken by who types
/// (tmux's `window-size latest`), the time noted for the echo.
async fn typed(daemon: &Arc<Daemon>, outbox: &Outbox, run: &str, bytes: Vec<u8>) {
    if let Some(live) = daemon.engine.live(run) {
        // Who types sets the size (tmux's `window-size latest`).
        crate::engine::size::touch(&daemon.engine, &live, outbox.viewer).await;
        // Keys typed: their echo follows. Enter hands the line
        // to the agent: what follows is its answer, not an echo.
        let submits = bytes.iter().any(|b| matches!(b, b'\r' | b'\n'));
        *live.keyed_at.lock() = (!submits).then(std::time::Instant::now);
        live.input_went_in();
        let _ = live.link.input(run, bytes).await;
    }
}

async fn answer(daemon: Arc<Daemon>, outbox: Outbox, subs: Subscriptions, req: Request) {
    daemon.requests.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    let result = super::dispatch::call(&daemon, &outbox, &subs, &req.method, req.params).await;
    if let Some(id) = req.id {
        let size = result.as_ref().map_or(0, |value| value.get().len()) + 64;
        let resp = match result {
            Ok(value) => Response::ok(id, value),
            Err(e) => Response::err(id, e.code.as_str(), e.message),
        };
        let mut frame = Frame::control_of_size(&resp, size);
        // An answer that does not fit its frame would end the connection
        // with nothing said: say so instead (answers are bounded by
        // construction, so this is a bug to report, never a silent break).
        if let Frame::Control(bytes) = &frame
            && bytes.len() >= crate::protocol::MAX_FRAME
        {
            let why = format!(
                "the answer to {} is {} bytes, more than one frame holds; please report this",
                req.method,
                bytes.len()
            );
            tracing::error!("{why}");
            frame = Frame::control(&Response::err(id, ErrorCode::Internal.as_str(), why));
        }
        let _ = outbox.control.send(frame).await;
    }
    daemon.requests.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
}
