//! The daemon's connection to one run's supervisor, and what the daemon
//! keeps about a live run.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::BufReader;
use tokio::net::UnixStream;
use tokio::sync::{Notify, mpsc, oneshot, watch};

use super::Daemon;
use crate::api::{ApiError, ErrorCode};
use crate::harness::screen::ScreenFinding;
use crate::harness::status::{Evidence, HookSeen};
use crate::protocol::rpc::{Message, Request, Response};
use crate::protocol::{Frame, exchange_headers, read_frame, write_frame};
use crate::supervise::ExitEvidence;
use crate::supervise::server_method as sup;

/// What the daemon holds for a run that has not ended.
pub struct LiveRun {
    pub id: String,
    /// Bytes in the run's output log, as the supervisor last reported.
    pub committed: watch::Sender<u64>,
    pub ended: watch::Sender<bool>,
    pub last_output: Mutex<Option<Instant>>,
    pub link: Link,
    /// Woken when a prompt is queued or output arrives.
    pub wake: Notify,
    /// Held while a prompt is being delivered, so one is never typed twice.
    pub delivery: tokio::sync::Mutex<()>,
    /// What the run's screen says it waits for (a permission prompt …).
    pub screen: Mutex<Option<ScreenFinding>>,
    /// When `screen` last changed: a change after a hook outranks it.
    pub screen_at: Mutex<Option<Instant>>,
    /// The newest status a harness hook reported (`hooks.report`).
    pub hook: Mutex<Option<HookSeen>>,
}

impl LiveRun {
    pub fn new(id: String, link: Link, offset: u64) -> LiveRun {
        LiveRun {
            id,
            committed: watch::Sender::new(offset),
            ended: watch::Sender::new(false),
            last_output: Mutex::new(None),
            link,
            wake: Notify::new(),
            delivery: tokio::sync::Mutex::new(()),
            screen: Mutex::new(None),
            screen_at: Mutex::new(None),
            hook: Mutex::new(None),
        }
    }

    /// Everything known about the run's activity, for status fusion.
    pub fn evidence(&self) -> Evidence {
        Evidence {
            hook: self.hook.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            screen: self.screen.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            screen_at: *self.screen_at.lock().unwrap_or_else(|p| p.into_inner()),
            last_output: *self.last_output.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }

    /// Quiet means no output for `quiet`: the weakest evidence of status
    /// fusion (`harness::status`), and the condition for typing a prompt.
    pub fn quiet_for(&self, quiet: Duration) -> Option<Duration> {
        let last = *self.last_output.lock().unwrap_or_else(|p| p.into_inner());
        match last {
            None => None,
            Some(t) => {
                let since = t.elapsed();
                (since < quiet).then(|| quiet - since)
            }
        }
    }
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Response>>>>;

/// A framed connection to a supervisor's run socket.
#[derive(Clone)]
pub struct Link {
    frames: mpsc::Sender<Frame>,
    pending: Pending,
    next_id: Arc<AtomicU64>,
}

/// What a supervisor tells the daemon unasked.
pub enum SupervisorNote {
    Offset(u64),
    Screen(Option<ScreenFinding>),
    Exited(Box<ExitEvidence>),
}

/// How long a supervisor has to answer one request.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

impl Link {
    pub async fn connect(socket: &Path) -> std::io::Result<(Link, mpsc::Receiver<SupervisorNote>)> {
        let stream = UnixStream::connect(socket).await?;
        let (r, w) = stream.into_split();
        Link::over(r, w).await
    }

    /// A link over any stream that speaks the supervisor protocol (a remote
    /// run's stand-in supervisor, `remote::mirror`, is one).
    pub async fn over<R, W>(r: R, mut w: W) -> std::io::Result<(Link, mpsc::Receiver<SupervisorNote>)>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let mut r = BufReader::new(r);
        exchange_headers(&mut r, &mut w).await.map_err(std::io::Error::other)?;
        let (frames, mut frames_rx) = mpsc::channel::<Frame>(256);
        tokio::spawn(async move {
            while let Some(frame) = frames_rx.recv().await {
                if write_frame(&mut w, &frame).await.is_err() {
                    break;
                }
            }
        });
        let pending: Pending = Arc::default();
        let (notes, notes_rx) = mpsc::channel(64);
        let reader_pending = pending.clone();
        tokio::spawn(async move {
            while let Ok(frame) = read_frame(&mut r).await {
                let Frame::Control(bytes) = frame else { continue };
                match Message::parse(&bytes) {
                    Ok(Message::Response(resp)) => {
                        let waiter = reader_pending
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .remove(&resp.id);
                        if let Some(waiter) = waiter {
                            let _ = waiter.send(resp);
                        }
                    }
                    Ok(Message::Request(note)) => {
                        let note = match note.method.as_str() {
                            sup::OFFSET => note
                                .params
                                .get("offset")
                                .and_then(Value::as_u64)
                                .map(SupervisorNote::Offset),
                            sup::SCREEN => Some(SupervisorNote::Screen(
                                serde_json::from_value(note.params.get("finding").cloned().unwrap_or(Value::Null))
                                    .unwrap_or(None),
                            )),
                            sup::EXITED => note
                                .params
                                .get("evidence")
                                .and_then(|e| serde_json::from_value(e.clone()).ok())
                                .map(|e| SupervisorNote::Exited(Box::new(e))),
                            _ => None,
                        };
                        if let Some(note) = note
                            && notes.send(note).await.is_err()
                        {
                            break;
                        }
                    }
                    Err(_) => {}
                }
            }
            // Dropping `notes` tells the monitor the link is gone.
            reader_pending.lock().unwrap_or_else(|p| p.into_inner()).clear();
        });
        Ok((
            Link {
                frames,
                pending,
                next_id: Arc::new(AtomicU64::new(1)),
            },
            notes_rx,
        ))
    }

    pub async fn call(&self, method: &str, params: Value) -> Result<Value, ApiError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).insert(id, tx);
        let unreachable = || ApiError::new(ErrorCode::NotRunning, "the run's supervisor is not reachable");
        self.frames
            .send(Frame::control(&Request::new(id, method, params)))
            .await
            .map_err(|_| unreachable())?;
        let resp = tokio::time::timeout(CALL_TIMEOUT, rx)
            .await
            .map_err(|_| ApiError::new(ErrorCode::NotRunning, "the run's supervisor did not answer in time"))?
            .map_err(|_| unreachable())?;
        match (resp.result, resp.error) {
            (_, Some(err)) => Err(ApiError::bad_request(err.message)),
            (Some(v), None) => Ok(v),
            (None, None) => Ok(Value::Null),
        }
    }

    /// Types a prompt and Enter (`sup.prompt`); with `paste`, the
    /// supervisor pastes it if the program asked for bracketed paste.
    pub async fn prompt(&self, run: &str, text: &str, paste: bool, enter_ms: u64) -> Result<(), ApiError> {
        match self
            .call(
                sup::PROMPT,
                serde_json::json!({ "text": text, "paste": paste, "enter_ms": enter_ms }),
            )
            .await
        {
            Ok(_) => Ok(()),
            // A supervisor started by an older `agents` (re-adopted after an
            // upgrade) only takes raw input: the text, then Enter.
            Err(e) if e.message.starts_with("unknown method") => {
                let mut bytes = text.as_bytes().to_vec();
                bytes.push(b'\r');
                self.input(run, bytes).await
            }
            Err(e) => Err(e),
        }
    }

    pub async fn input(&self, run: &str, bytes: Vec<u8>) -> Result<(), ApiError> {
        self.frames
            .send(Frame::Input {
                run: run.to_string(),
                bytes,
            })
            .await
            .map_err(|_| ApiError::new(ErrorCode::NotRunning, "the run's supervisor is not reachable"))
    }
}

/// How often the stored `output_bytes` of a flooding run is brought up to date.
const PERSIST_OFFSET_EVERY: Duration = Duration::from_secs(1);

/// Follows one live run until it ends: offsets, activity, and the exit.
pub async fn monitor(daemon: Arc<Daemon>, live: Arc<LiveRun>, mut notes: mpsc::Receiver<SupervisorNote>) {
    // The stored `output_bytes` trails the live offset by at most this long.
    let mut persist_at: Option<tokio::time::Instant> = None;
    loop {
        let note = tokio::select! {
            note = notes.recv() => note,
            _ = async { tokio::time::sleep_until(persist_at.unwrap_or_else(tokio::time::Instant::now)).await }, if persist_at.is_some() => {
                persist_at = None;
                let (id, offset) = (live.id.clone(), *live.committed.borrow());
                let _ = daemon
                    .store
                    .call(move |c| crate::store::runs::set_output_bytes(c, &id, offset))
                    .await;
                continue;
            }
        };
        match note {
            Some(SupervisorNote::Offset(offset)) => {
                let previous = live.committed.send_replace(offset);
                if offset > previous {
                    *live.last_output.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
                    live.wake.notify_waiters();
                    persist_at.get_or_insert_with(|| tokio::time::Instant::now() + PERSIST_OFFSET_EVERY);
                }
            }
            Some(SupervisorNote::Screen(finding)) => {
                let mut screen = live.screen.lock().unwrap_or_else(|p| p.into_inner());
                if *screen != finding {
                    *screen = finding;
                    *live.screen_at.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
                }
                drop(screen);
                live.wake.notify_waiters();
            }
            Some(SupervisorNote::Exited(evidence)) => {
                live.committed.send_replace(evidence.output_bytes);
                // An account problem may hand the run to its next profile.
                if !super::fallback::on_exit(&daemon, &live, &evidence).await {
                    super::adopt::record_exit(&daemon, &live.id, &evidence).await;
                    let _ = live.link.call(sup::ACK_EXIT, Value::Null).await;
                }
                break;
            }
            None => {
                // The link closed without an exit: the supervisor died.
                super::adopt::supervisor_gone(&daemon, &live.id).await;
                break;
            }
        }
    }
    live.ended.send_replace(true);
    live.wake.notify_waiters();
    {
        // A next attempt of the run (account fallback) may hold the id now.
        let mut live_runs = daemon.runs.lock().unwrap_or_else(|p| p.into_inner());
        if live_runs.get(&live.id).is_some_and(|l| Arc::ptr_eq(l, &live)) {
            live_runs.remove(&live.id);
        }
    }
    daemon.changed(&live.id);
}
