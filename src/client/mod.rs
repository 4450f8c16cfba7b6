//! A client's connection to the daemon, which it starts on demand (detached,
//! in its own session) like tmux starts its server.

pub mod replay;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::{BufRead, BufReader as StdBufReader};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::net::UnixStream;
use tokio::sync::{mpsc, oneshot};

use crate::api::method::Method;
use crate::api::{ApiError, ErrorCode};
use crate::paths::Paths;
use crate::protocol::rpc::{Message, Request, Response};
use crate::protocol::{Frame, HeaderError, exchange_headers, read_frame, write_frame};

/// Callers waiting for an answer, by request id; `None` once the connection
/// is gone, so a call made after that fails at once instead of waiting on an
/// answer that can never come.
type Pending = Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Response>>>>>;

pub struct Client {
    frames: mpsc::Sender<Frame>,
    pending: Pending,
    next_id: AtomicU64,
    /// Notifications, output and snapshots, when asked for.
    pub events: Option<mpsc::Receiver<Frame>>,
    /// The daemon's binary version, from its header.
    pub peer_version: String,
}

/// How long a freshly started daemon has to accept connections.
/// How long a daemon that accepted a connection has to send its header:
/// milliseconds on a busy machine; a stopped daemon never does.
const DAEMON_ANSWER: Duration = Duration::from_secs(5);

const DAEMON_READY: Duration = Duration::from_secs(10);
/// How often to look for a daemon that another client is starting: a debug
/// build's daemon takes tens of milliseconds to listen.
const RETRY_CONNECT: Duration = Duration::from_millis(20);

fn unavailable(msg: String) -> ApiError {
    ApiError::new(ErrorCode::DaemonUnavailable, msg)
}

impl Client {
    /// Connects, starting the daemon if none is running. With `events`, the
    /// client keeps notifications and output for `events`.
    pub async fn connect(paths: &Paths, events: bool) -> Result<Client, ApiError> {
        match Client::connect_existing(paths, events).await {
            Ok(c) => Ok(c),
            Err(e) if e.code == ErrorCode::DaemonUnavailable => {
                // Off the runtime's thread: it waits for the daemon's ready
                // line, and the TUI's current-thread runtime must keep drawing.
                let starting = paths.clone();
                tokio::task::spawn_blocking(move || start_daemon(&starting))
                    .await
                    .map_err(|e| unavailable(format!("cannot start the daemon: {e}")))??;
                // A daemon another client started at the same moment holds the
                // lock but may not listen yet: give it the same time to.
                let deadline = tokio::time::Instant::now() + DAEMON_READY;
                loop {
                    match Client::connect_existing(paths, events).await {
                        Err(e) if e.code == ErrorCode::DaemonUnavailable && tokio::time::Instant::now() < deadline => {
                            tokio::time::sleep(RETRY_CONNECT).await;
                        }
                        other => return other,
                    }
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Connects to a running daemon only.
    pub async fn connect_existing(paths: &Paths, events: bool) -> Result<Client, ApiError> {
        let socket = paths.daemon_socket();
        // Never a request to a socket another user could have put there.
        paths
            .trust_socket_dir()
            .map_err(|e| ApiError::new(ErrorCode::Protocol, e))?;
        let stream = UnixStream::connect(&socket)
            .await
            .map_err(|e| unavailable(format!("no daemon at {}: {e}", socket.display())))?;
        if !crate::protocol::peer::is_same_user(&stream) {
            let uid = stream
                .peer_cred()
                .map_or_else(|_| "unknown".into(), |c| c.uid().to_string());
            return Err(ApiError::new(
                ErrorCode::Protocol,
                format!(
                    "refusing the daemon socket {}: the process holding it runs as another user (uid {uid}); see agents doctor",
                    socket.display()
                ),
            ));
        }
        let (r, w) = stream.into_split();
        // A daemon that accepted (the kernel does, even for a stopped
        // process) but never says its header is stopped or stuck: say so
        // rather than wait forever.
        let Ok(over) = tokio::time::timeout(DAEMON_ANSWER, Client::over(r, w, events)).await else {
            let pid = std::fs::read_to_string(paths.daemon_pid()).unwrap_or_default();
            let pid = pid.trim();
            return Err(ApiError::new(
                ErrorCode::DaemonNotAnswering,
                format!(
                    "the daemon (pid {pid}) does not answer within {}s: it may be stopped (kill -CONT {pid}) or stuck (agents daemon stop)",
                    DAEMON_ANSWER.as_secs()
                ),
            ));
        };
        over.map_err(|e| match e {
            HeaderError::Mismatch { .. } => ApiError::new(
                ErrorCode::VersionMismatch,
                format!("{e}; stop the old daemon with `agents daemon stop`"),
            ),
            // A daemon that is going away (killed, stopping) resets or
            // closes: that is "no daemon", and the caller may start one.
            HeaderError::Closed | HeaderError::Io(_) => {
                unavailable(format!("the daemon at {} went away: {e}", socket.display()))
            }
            other => ApiError::new(ErrorCode::Protocol, other.to_string()),
        })
    }

    /// A client over any byte stream to a daemon: the version header, then
    /// frames (the SSH link to a remote daemon uses this too).
    pub async fn over<R, W>(r: R, mut w: W, events: bool) -> Result<Client, HeaderError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let mut r = BufReader::new(r);
        let peer_version = exchange_headers(&mut r, &mut w).await?;
        let (frames, mut frames_rx) = mpsc::channel::<Frame>(64);
        tokio::spawn(async move {
            while let Some(frame) = frames_rx.recv().await {
                if write_frame(&mut w, &frame).await.is_err() {
                    break;
                }
            }
        });
        let pending: Pending = Arc::new(Mutex::new(Some(HashMap::new())));
        let (events_tx, events_rx) = if events {
            let (tx, rx) = mpsc::channel(256);
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        let reader_pending = pending.clone();
        tokio::spawn(async move {
            while let Ok(frame) = read_frame(&mut r).await {
                if let Frame::Control(bytes) = &frame
                    && let Ok(Message::Response(resp)) = Message::parse(bytes)
                {
                    let waiter = reader_pending
                        .lock()
                        .as_mut()
                        .and_then(|waiters| waiters.remove(&resp.id));
                    if let Some(waiter) = waiter {
                        let _ = waiter.send(resp);
                    }
                    continue;
                }
                if let Some(tx) = &events_tx
                    && tx.send(frame).await.is_err()
                {
                    break;
                }
            }
            // Dropping the waiters tells every caller the daemon went away;
            // later calls see `None` and fail without waiting.
            reader_pending.lock().take();
        });
        Ok(Client {
            frames,
            pending,
            next_id: AtomicU64::new(1),
            events: events_rx,
            peer_version,
        })
    }

    /// Calls method `M` and waits for its answer.
    pub async fn call<M: Method>(&self, params: M::Params) -> Result<M::Reply, ApiError> {
        let params = serde_json::to_value(params).map_err(ApiError::internal)?;
        let resp = self.request(M::NAME, params).await?;
        resp.result_as()
            .map_err(|e| ApiError::new(ErrorCode::Protocol, format!("unexpected answer: {e}")))
    }

    /// A call by name, its parameters and answer as they are on the wire:
    /// for what only relays a method it does not know (a remote host's
    /// link forwarding a request, a hook's report).
    pub async fn call_raw(&self, method: &str, params: Value) -> Result<Value, ApiError> {
        let resp = self.request(method, params).await?;
        resp.result_as()
            .map_err(|e| ApiError::new(ErrorCode::Protocol, format!("unexpected answer: {e}")))
    }

    /// Sends a request and waits for its response; a refusal as its error.
    async fn request(&self, method: &str, params: Value) -> Result<Response, ApiError> {
        let asked = self.ask(method, params).await?;
        Self::answer(asked).await
    }

    /// Sends a request; its response comes to the receiver.
    async fn ask(&self, method: &str, params: Value) -> Result<oneshot::Receiver<Response>, ApiError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = Frame::control(&Request::new(id, method, params));
        if let Frame::Control(bytes) = &frame
            && bytes.len() >= crate::protocol::MAX_FRAME
        {
            return Err(ApiError::bad_request(format!(
                "the request is {} bytes; one holds at most {} (1 MiB)",
                bytes.len(),
                crate::protocol::MAX_FRAME - 1
            )));
        }
        let (tx, rx) = oneshot::channel();
        self.pending.lock().as_mut().ok_or_else(gone)?.insert(id, tx);
        self.frames.send(frame).await.map_err(|_| gone())?;
        Ok(rx)
    }

    /// The response to a request sent; a refusal as its error.
    async fn answer(asked: oneshot::Receiver<Response>) -> Result<Response, ApiError> {
        let mut resp = asked.await.map_err(|_| gone())?;
        match resp.error.take() {
            Some(err) => {
                let code = err
                    .data
                    .map(|d| ErrorCode::parse(&d.code))
                    .unwrap_or(ErrorCode::Internal);
                Err(ApiError::new(code, err.message))
            }
            None => Ok(resp),
        }
    }

    /// Every live run (`all`: every run), page by page (each answer fits
    /// in one frame, by rows and by bytes), oldest first.
    pub async fn list_runs(&self, all: bool) -> Result<Vec<crate::api::ListedRun>, ApiError> {
        self.list_pages(all, usize::MAX).await
    }

    /// Every run `asked` picks (`all`, `state`, `host`), whole records or
    /// `brief` ones as it says, oldest first.
    pub async fn list_picked<T: serde::de::DeserializeOwned>(
        &self,
        asked: crate::api::ListParams,
    ) -> Result<Vec<T>, ApiError> {
        self.pages_of(asked, usize::MAX).await
    }

    /// The newest `n` (or fewer) of the runs `asked` picks, oldest first.
    pub async fn newest<T: serde::de::DeserializeOwned>(
        &self,
        asked: crate::api::ListParams,
        n: usize,
    ) -> Result<Vec<T>, ApiError> {
        let mut runs = self.pages_of(asked, n).await?;
        Ok(runs.split_off(runs.len().saturating_sub(n)))
    }

    /// The newest runs, page by page, until `at_least` are had or the
    /// pages run out (live ones only unless `all`); oldest first. Each
    /// page's `next` is read first and the next page asked for before the
    /// page is read whole: the daemon builds one while this reads the other.
    pub async fn list_pages(&self, all: bool, at_least: usize) -> Result<Vec<crate::api::ListedRun>, ApiError> {
        let asked = crate::api::ListParams {
            all,
            ..Default::default()
        };
        self.pages_of(asked, at_least).await
    }

    /// [`Client::list_pages`] of the runs `asked` picks, whole records or
    /// `brief` ones.
    async fn pages_of<T: serde::de::DeserializeOwned>(
        &self,
        asked: crate::api::ListParams,
        at_least: usize,
    ) -> Result<Vec<T>, ApiError> {
        use crate::api::{ListParams, method::RunsList};
        let limit = at_least.min(ListParams::MAX_LIMIT);
        let ask = |before: Option<String>| {
            let params = ListParams {
                limit: Some(limit),
                before,
                paged: true,
                ..asked.clone()
            };
            self.ask(RunsList::NAME, serde_json::to_value(params).unwrap_or_default())
        };
        let unexpected = |e: serde_json::Error| ApiError::new(ErrorCode::Protocol, format!("unexpected answer: {e}"));
        // Newest page first; each page oldest first.
        let mut pages: Vec<Vec<T>> = Vec::new();
        let (mut had, mut asked) = (0, Some(ask(None).await?));
        while let Some(waiting) = asked.take() {
            let resp = Self::answer(waiting).await?;
            let raw = resp.result.as_deref().map_or("null", |r| r.get());
            let page = Skim::read(raw).map_err(unexpected)?;
            // Surely not enough yet, whatever this page holds: ask on now.
            if let Some(next) = page.next.clone().filter(|_| had + limit < at_least) {
                asked = Some(ask(Some(next)).await?);
            }
            let runs: Vec<T> = serde_json::from_str(page.runs.get()).map_err(unexpected)?;
            had += runs.len();
            pages.push(runs);
            if asked.is_none()
                && let Some(next) = page.next.filter(|_| had < at_least)
            {
                asked = Some(ask(Some(next)).await?);
            }
        }
        Ok(pages.into_iter().rev().flatten().collect())
    }

    pub async fn notify<M: Method>(&self, params: M::Params) -> Result<(), ApiError> {
        let params = serde_json::to_value(params).map_err(ApiError::internal)?;
        self.send_frame(Frame::control(&Request::notification(M::NAME, params)))
            .await
    }

    pub async fn send_frame(&self, frame: Frame) -> Result<(), ApiError> {
        self.frames
            .send(frame)
            .await
            .map_err(|_| unavailable("the daemon closed the connection".into()))
    }
}

/// A `runs.list` answer with its runs not yet read: a page (its runs and
/// the `before` of the next), or a bare list (no more pages).
struct Skim<'a> {
    runs: &'a serde_json::value::RawValue,
    next: Option<String>,
}

impl<'a> Skim<'a> {
    fn read(raw: &'a str) -> serde_json::Result<Skim<'a>> {
        if raw.trim_start().starts_with('[') {
            return Ok(Skim {
                runs: serde_json::from_str(raw)?,
                next: None,
            });
        }
        #[derive(serde::Deserialize)]
        struct Page<'a> {
            #[serde(borrow)]
            runs: &'a serde_json::value::RawValue,
            next: Option<String>,
        }
        let page: Page<'a> = serde_json::from_str(raw)?;
        Ok(Skim {
            runs: page.runs,
            next: page.next,
        })
    }
}

fn gone() -> ApiError {
    unavailable("the daemon closed the connection".into())
}

/// Starts `agents daemon run` detached and waits for its ready line.
pub fn start_daemon(paths: &Paths) -> Result<(), ApiError> {
    paths.ensure().map_err(|e| unavailable(format!("{e:#}")))?;
    let exe = std::env::current_exe().map_err(|e| unavailable(format!("cannot find the agents binary: {e}")))?;
    let log = paths.open_daemon_log().map_err(unavailable)?;
    let mut cmd = Command::new(exe);
    cmd.args(["daemon", "run", "--ready"])
        .env_clear()
        .envs(crate::paths::process_env())
        .env("AGENTS_HOME", &paths.home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log);
    // SAFETY: setsid is async-signal-safe. The daemon must outlive this
    // client and never get its terminal's signals.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| unavailable(format!("cannot start the daemon: {e}")))?;
    let stdout = child.stdout.take();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        if let Some(out) = stdout {
            let _ = StdBufReader::new(out).read_line(&mut line);
        }
        let _ = tx.send(line);
    });
    // Reap it if it exits early (another daemon won the race); otherwise it
    // is re-parented when we exit.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    match rx.recv_timeout(DAEMON_READY) {
        Ok(line) if line.trim() == "ready" => Ok(()),
        Ok(line) if line.starts_with("error: ") => Err(unavailable(format!(
            "the daemon cannot start: {}",
            line.trim_start_matches("error: ").trim()
        ))),
        // Another client started a daemon at the same moment; it will answer.
        Ok(_) => Ok(()),
        Err(_) => Err(unavailable(format!(
            "the daemon did not start within {}s; see {}",
            DAEMON_READY.as_secs(),
            paths.daemon_log().display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn a_call_after_the_daemon_went_away_fails_instead_of_waiting() {
        let (client_read, mut daemon_write) = tokio::io::duplex(1024);
        // The daemon's reading side stays open, so writes still succeed: only
        // the answers can never come.
        let (client_write, _daemon_read) = tokio::io::duplex(64 * 1024);
        let header = format!("agents/{} test\n", crate::protocol::PROTOCOL_VERSION);
        daemon_write.write_all(header.as_bytes()).await.unwrap();
        let client = Client::over(client_read, client_write, false).await.unwrap();
        drop(daemon_write);
        for _ in 0..2 {
            let answer = tokio::time::timeout(Duration::from_secs(10), client.call_raw("runs.list", Value::Null))
                .await
                .expect("a call on a closed connection must not wait forever");
            assert_eq!(answer.unwrap_err().code, ErrorCode::DaemonUnavailable);
        }
    }
}
