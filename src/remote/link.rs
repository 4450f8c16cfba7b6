//! One SSH link per host, held by the daemon (docs/design.md §8). A link opens on
//! first use: SSH, then `agents --version` and the remote login
//! environment, then `agents serve --stdio` on an exec channel, over which
//! this daemon is an ordinary client of the remote one. Frames the remote
//! daemon sends unasked (output, `output.end`, `run.changed`) are routed by
//! run id to whoever follows that run (`remote::mirror`).
//!
//! Every connection has an epoch, one more than the last: frames are
//! delivered tagged with it, and a follower drops any from an epoch that is
//! not its current one (docs/design.md §5).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::error::RemoteError;
use super::ssh::shell_quote;
use super::target::{Resolved, parse_target, resolve};
use super::transport::Transport;
use crate::api::method::{self, Method};
use crate::api::{ApiError, DaemonStatus, ErrorCode, NoParams};
use crate::client::Client;
use crate::protocol::rpc::Message;
use crate::protocol::{Frame, HeaderError};
use crate::store::hosts::HostRow;

/// A request to the remote daemon gets this long. `runs.start` spawns a
/// supervisor there (≤ 10 s by its own bound), so a little more than that.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// `agents serve --stdio` may start the remote daemon (≤ 10 s by the
/// client's own bound) before it answers our header.
const SERVE_TIMEOUT: Duration = Duration::from_secs(20);
/// How often a live link's latency is measured (one `daemon.status`).
const LATENCY_EVERY: Duration = Duration::from_secs(15);
/// A link without keepalives is asked every 5 s and closed after 3
/// unanswered: a stalled command is noticed within ~15-20 s, as a stalled
/// SSH link is (`ssh::KEEPALIVE_INTERVAL`).
const PING_EVERY: Duration = Duration::from_secs(5);
const PINGS_MISSED: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Never connected since the daemon started.
    Idle,
    Connecting,
    Up,
    /// Not up, and being connected again because runs there are followed
    /// (`HostLink::follow`).
    Reconnecting,
    /// Not up, and nobody needs it until the next use.
    Down,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Idle => "idle",
            Phase::Connecting => "connecting",
            Phase::Up => "up",
            Phase::Reconnecting => "reconnecting",
            Phase::Down => "down",
        }
    }
}

#[derive(Debug, Clone)]
pub struct LinkState {
    pub phase: Phase,
    /// When the link last went up or stopped being up (ms since the epoch):
    /// retries while it is down do not move it.
    pub since_ms: Option<i64>,
    pub latency_ms: Option<u64>,
    pub error: Option<String>,
    pub remote_version: Option<String>,
}

/// What the remote daemon sends about one run, tagged with the epoch of
/// the connection it came over.
#[derive(Debug)]
pub enum RunEvent {
    Output {
        epoch: u64,
        offset: u64,
        bytes: Vec<u8>,
    },
    /// `output.end`: caught up (`final` false) or the output ended.
    End {
        epoch: u64,
        is_final: bool,
        error: Option<String>,
    },
    /// The run's record changed there.
    Changed {
        epoch: u64,
    },
}

type Routes = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<RunEvent>>>>;
/// Where the remote daemon's screen updates of each run go (encoded).
/// What comes for one screen subscription.
pub enum ScreenEvent {
    Update(Vec<u8>),
    /// The host ended it: the run ended there (its last screen sent), or,
    /// with an error, the subscription failed.
    End {
        error: Option<String>,
    },
}

/// Screen subscriptions by run and subscription id (`AttachParams::sub`).
type ScreenRoutes = Arc<Mutex<HashMap<(String, u64), mpsc::Sender<ScreenEvent>>>>;

/// What the probe learnt about the host.
#[derive(Debug, Clone, Default)]
pub struct RemoteInfo {
    /// What `agents --version` printed there (`agents 0.1.0`).
    pub version: String,
    /// The allowlisted part of the remote login environment.
    pub env: Vec<(String, String)>,
}

impl RemoteInfo {
    pub fn home(&self) -> Option<&str> {
        self.env.iter().find(|(k, _)| k == "HOME").map(|(_, v)| v.as_str())
    }
}

/// One live link (SSH or a host's command) with the remote daemon's
/// protocol on it.
pub struct Connection {
    pub epoch: u64,
    transport: Transport,
    client: Client,
    pub info: RemoteInfo,
    routes: Routes,
    screens: ScreenRoutes,
    closed: watch::Receiver<bool>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

/// The host's target resolved through `~/.ssh/config` of the daemon's
/// user: as `ssh -G` resolves it, or by our own reading without `ssh`.
pub async fn resolve_host(host: &HostRow) -> Result<Resolved, RemoteError> {
    let target = parse_target(&host.target).map_err(RemoteError::Other)?;
    let home = dirs::home_dir().ok_or_else(|| RemoteError::Other("cannot find the home directory".into()))?;
    if let Some(resolved) = super::ssh_config::effective(&target, &home).await {
        return resolved.map_err(RemoteError::Other);
    }
    let config = std::fs::read_to_string(home.join(".ssh/config")).ok();
    let user = nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "root".into());
    Ok(resolve(&target, config.as_deref(), &home, &user))
}

pub use super::probe::probe;

/// Starts `agents serve --stdio` there and speaks the protocol through it.
async fn serve(transport: &Transport, host: &HostRow) -> Result<(Client, Arc<Mutex<Vec<u8>>>), RemoteError> {
    let mut command = format!("{} serve --stdio", shell_quote(&host.remote_bin));
    if let Some(home) = &host.remote_home {
        command.push_str(&format!(" --home {}", shell_quote(home)));
    }
    let stream = transport.stream(&command).await?;
    let stderr = stream.stderr.clone();
    let tail = || {
        let text = String::from_utf8_lossy(&stderr.lock()).into_owned();
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            format!(": {}", crate::text::bounded(text, 500))
        }
    };
    let client = match tokio::time::timeout(SERVE_TIMEOUT, Client::over(stream.reader, stream.writer, true)).await {
        Err(_) => {
            return Err(RemoteError::RemoteUnavailable {
                name: host.name.clone(),
                why: format!(
                    "`{command}` sent no header within {}s{}",
                    SERVE_TIMEOUT.as_secs(),
                    tail()
                ),
            });
        }
        Ok(Err(HeaderError::Mismatch { peer, ours, .. })) => {
            return Err(RemoteError::Incompatible {
                name: host.name.clone(),
                why: format!("it speaks protocol {peer}, this agents speaks {ours}"),
            });
        }
        Ok(Err(e)) => {
            // Give a failing serve a moment to finish its complaint.
            tokio::time::sleep(Duration::from_millis(100)).await;
            return Err(RemoteError::RemoteUnavailable {
                name: host.name.clone(),
                why: format!("`{command}` failed: {e}{}", tail()),
            });
        }
        Ok(Ok(client)) => client,
    };
    Ok((client, stderr))
}

impl Connection {
    /// SSH, probe, serve: a connection ready for calls.
    ///
    /// `proven`: this host's binary passed the probe on an earlier
    /// connection. Then the probe and serve go on two channels at once
    /// (each starts a remote process, ~0.3 s apiece on a busy loopback
    /// host, and a reconnect waits for both), the probe's verdict still
    /// first. Otherwise serve waits for the probe, so no program that is
    /// not agents is ever started with `serve` arguments.
    pub async fn open(host: &HostRow, epoch: u64, proven: bool) -> Result<Connection, RemoteError> {
        let transport = Transport::open(host).await?;
        if !proven {
            let info = probe(&transport, host).await?;
            return Connection::open_on(transport, info, host, epoch).await;
        }
        let (info, (client, stderr)) = {
            let probing = probe(&transport, host);
            let serving = serve(&transport, host);
            tokio::pin!(probing, serving);
            let mut served = None;
            let info = loop {
                tokio::select! {
                    info = &mut probing => break info?,
                    done = &mut serving, if served.is_none() => served = Some(done),
                }
            };
            let done = match served {
                Some(done) => done,
                None => serving.await,
            };
            (info, done?)
        };
        Ok(Connection::start(transport, info, client, stderr, epoch))
    }

    /// The protocol part, on a transport already probed.
    pub async fn open_on(
        transport: Transport,
        info: RemoteInfo,
        host: &HostRow,
        epoch: u64,
    ) -> Result<Connection, RemoteError> {
        let (client, stderr) = serve(&transport, host).await?;
        Ok(Connection::start(transport, info, client, stderr, epoch))
    }

    fn start(
        transport: Transport,
        info: RemoteInfo,
        mut client: Client,
        stderr: Arc<Mutex<Vec<u8>>>,
        epoch: u64,
    ) -> Connection {
        let events = client.events.take().unwrap_or_else(|| mpsc::channel(1).1);
        let routes: Routes = Arc::default();
        let screens: ScreenRoutes = Arc::default();
        let (closed_tx, closed) = watch::channel(false);
        tokio::spawn(route(events, routes.clone(), screens.clone(), closed_tx, epoch));
        Connection {
            epoch,
            transport,
            client,
            info,
            routes,
            screens,
            closed,
            stderr,
        }
    }

    pub fn alive(&self) -> bool {
        !*self.closed.borrow() && !self.transport.is_closed()
    }

    /// Resolves once the connection has ended.
    pub async fn ended(&self) {
        let mut closed = self.closed.clone();
        let _ = closed.wait_for(|c| *c).await;
    }

    /// Method `M` of the remote daemon, as [`Connection::call`].
    pub async fn ask<M: Method>(&self, name: &str, host: &str, params: M::Params) -> Result<M::Reply, ApiError> {
        let answer = self.ask_raw::<M>(name, host, params).await?;
        serde_json::from_value(answer).map_err(|e| {
            ApiError::new(
                ErrorCode::Protocol,
                format!("{name}: unexpected answer to {}: {e}", M::NAME),
            )
        })
    }

    /// Method `M` of the remote daemon, its answer as it came: for what
    /// reads the answers of hosts of older builds in their own shapes.
    pub async fn ask_raw<M: Method>(&self, name: &str, host: &str, params: M::Params) -> Result<Value, ApiError> {
        let params = serde_json::to_value(params).map_err(ApiError::internal)?;
        self.call(name, host, M::NAME, params).await
    }

    /// A call to the remote daemon, by name: what relays a request passes
    /// its parameters and answer as they are. A link that drops meanwhile is
    /// `host_unreachable`; the remote daemon's own errors pass through.
    pub async fn call(&self, name: &str, host: &str, method: &str, params: Value) -> Result<Value, ApiError> {
        match tokio::time::timeout(CALL_TIMEOUT, self.client.call_raw(method, params)).await {
            Err(_) => Err(ApiError::new(
                ErrorCode::HostUnreachable,
                format!("host {host} did not answer {method} within {}s", CALL_TIMEOUT.as_secs()),
            )),
            Ok(Err(e)) if e.code == ErrorCode::DaemonUnavailable => {
                let stderr = String::from_utf8_lossy(&self.stderr.lock()).into_owned();
                let stderr = stderr.trim();
                Err(ApiError::new(
                    ErrorCode::HostUnreachable,
                    format!(
                        "the link to host {host} ended during {method}{}",
                        if stderr.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", crate::text::bounded(stderr, 300))
                        }
                    ),
                ))
            }
            Ok(other) => other.map_err(|e| ApiError::new(e.code, format!("{name}: {}", e.message))),
        }
    }

    /// Frames for `run` from now on, until the connection ends.
    pub fn route(&self, run: &str) -> mpsc::UnboundedReceiver<RunEvent> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.routes.lock().insert(run.to_string(), tx);
        rx
    }

    /// The remote daemon's screen updates of `run` from now on (one in
    /// flight: each waits for `runs.ack` with `screen`), until the
    /// connection ends.
    pub fn route_screen(&self, run: &str, sub: u64) -> mpsc::Receiver<ScreenEvent> {
        let (tx, rx) = mpsc::channel(4);
        self.screens.lock().insert((run.to_string(), sub), tx);
        rx
    }

    pub fn unroute_screen(&self, run: &str, sub: u64) {
        self.screens.lock().remove(&(run.to_string(), sub));
    }

    pub async fn notify<M: Method>(&self, params: M::Params) -> Result<(), ApiError> {
        self.client.notify::<M>(params).await
    }

    pub fn unroute(&self, run: &str) {
        self.routes.lock().remove(run);
    }

    pub async fn send_frame(&self, frame: Frame) -> Result<(), ApiError> {
        self.client.send_frame(frame).await
    }

    /// One round trip to the remote daemon: its status and how long it took.
    pub async fn status(&self, host: &str) -> Result<(DaemonStatus, u64), ApiError> {
        let started = Instant::now();
        let status = self.ask::<method::DaemonStatus>(host, host, NoParams).await?;
        Ok((status, started.elapsed().as_millis() as u64))
    }

    pub async fn close(&self) {
        self.transport.disconnect().await;
    }
}

/// Hands each unasked frame to the follower of its run.
async fn route(
    mut events: mpsc::Receiver<Frame>,
    routes: Routes,
    screens: ScreenRoutes,
    closed: watch::Sender<bool>,
    epoch: u64,
) {
    while let Some(frame) = events.recv().await {
        let (run, event) = match frame {
            Frame::Screen { run, sub, bytes } => {
                let route = screens.lock().get(&(run, sub)).cloned();
                // One update is in flight per subscription: a full route
                // is a misbehaving peer, dropped, never waited on.
                if let Some(route) = route {
                    let _ = route.try_send(ScreenEvent::Update(bytes));
                }
                continue;
            }
            Frame::Output { run, offset, bytes } => (run, RunEvent::Output { epoch, offset, bytes }),
            Frame::Control(bytes) => {
                let Ok(Message::Request(note)) = Message::parse(&bytes) else {
                    continue;
                };
                let Some(run) = note.params.get("run").and_then(Value::as_str).map(str::to_string) else {
                    continue;
                };
                let error = note.params.get("error").and_then(Value::as_str).map(str::to_string);
                match note.method.as_str() {
                    // A screen subscription's end is its own, never the
                    // byte stream's: the mirror would stop short of the
                    // output still to come.
                    method::OUTPUT_END if note.params.get("screen").and_then(Value::as_bool) == Some(true) => {
                        let sub = note.params.get("sub").and_then(Value::as_u64).unwrap_or(0);
                        let route = screens.lock().remove(&(run, sub));
                        if let Some(route) = route {
                            let _ = route.try_send(ScreenEvent::End { error });
                        }
                        continue;
                    }
                    method::OUTPUT_END => (
                        run,
                        RunEvent::End {
                            epoch,
                            is_final: note.params.get("final").and_then(Value::as_bool) == Some(true),
                            error,
                        },
                    ),
                    method::RUN_CHANGED => (run, RunEvent::Changed { epoch }),
                    _ => continue,
                }
            }
            // Lossless subscriptions never get snapshots; input is ours to send.
            Frame::Snapshot { .. } | Frame::Input { .. } => continue,
        };
        let mut routes = routes.lock();
        if let Some(tx) = routes.get(&run)
            && tx.send(event).is_err()
        {
            routes.remove(&run);
        }
    }
    closed.send_replace(true);
    // Followers see their channel end and connect again.
    routes.lock().clear();
    screens.lock().clear();
}

/// The daemon's link to one host.
pub struct HostLink {
    pub name: String,
    /// Minted when this daemon made the link: with a connection's epoch,
    /// what names that connection to the host (`HostLink::epoch_of`), the
    /// same on no other link and after no restart.
    pub instance: String,
    host: Mutex<HostRow>,
    state: Mutex<LinkState>,
    current: tokio::sync::Mutex<Option<Arc<Connection>>>,
    /// The live connection, for callers that must not wait (typed input).
    live: Mutex<Option<Arc<Connection>>>,
    epochs: AtomicU64,
    /// Connection attempts so far, and how the last one failed: callers
    /// that waited on an attempt share its outcome instead of making their
    /// own at once (many runs followed on one host retry as one).
    attempts: AtomicU64,
    last_failure: Mutex<Option<RemoteError>>,
    /// Runs followed over this link (their followers retry while it is down).
    followers: AtomicUsize,
    /// The host as it was when its binary last passed the probe.
    proven: Mutex<Option<HostRow>>,
    /// Set when the host is removed: followers stop.
    pub removed: watch::Sender<bool>,
    /// The epoch of the last connection that came up: whoever waits for
    /// the link wakes the moment anyone has brought it back.
    pub connected: watch::Sender<u64>,
    /// The host's daemon serves screen subscriptions (its `daemon.status`
    /// says so; true until a connection has asked).
    pub serves_screens: std::sync::atomic::AtomicBool,
    /// And keeps several of one run on a connection, each by its `sub`.
    pub screen_subs: std::sync::atomic::AtomicBool,
}

/// A run followed over a link, while it lives: the link counts as
/// `reconnecting` (someone will retry it), not `down`, while it has any.
pub struct Following(Arc<HostLink>);

impl Drop for Following {
    fn drop(&mut self) {
        let link = &self.0;
        if link.followers.fetch_sub(1, Ordering::Relaxed) == 1 && link.state().phase == Phase::Reconnecting {
            // The last run followed there ended: nobody retries any more.
            let error = link.state().error;
            link.set_phase(Phase::Down, error);
        }
    }
}

impl HostLink {
    fn new(host: HostRow) -> HostLink {
        HostLink {
            name: host.name.clone(),
            instance: ulid::Ulid::new().to_string(),
            host: Mutex::new(host),
            state: Mutex::new(LinkState {
                phase: Phase::Idle,
                since_ms: None,
                latency_ms: None,
                error: None,
                remote_version: None,
            }),
            current: tokio::sync::Mutex::new(None),
            live: Mutex::new(None),
            epochs: AtomicU64::new(0),
            attempts: AtomicU64::new(0),
            last_failure: Mutex::new(None),
            followers: AtomicUsize::new(0),
            proven: Mutex::new(None),
            removed: watch::Sender::new(false),
            connected: watch::Sender::new(0),
            serves_screens: std::sync::atomic::AtomicBool::new(true),
            screen_subs: std::sync::atomic::AtomicBool::new(true),
        }
    }

    /// Counts a follower until the guard is dropped.
    pub fn follow(self: &Arc<Self>) -> Following {
        self.followers.fetch_add(1, Ordering::Relaxed);
        Following(self.clone())
    }

    /// What a link that is not up is: retried by its followers, or left
    /// until the next use.
    fn not_up(&self) -> Phase {
        if self.followers.load(Ordering::Relaxed) > 0 {
            Phase::Reconnecting
        } else {
            Phase::Down
        }
    }

    pub fn state(&self) -> LinkState {
        self.state.lock().clone()
    }

    pub fn host(&self) -> HostRow {
        self.host.lock().clone()
    }

    fn set_phase(&self, phase: Phase, error: Option<String>) {
        let mut state = self.state.lock();
        // `since` is when the link went up, or when it stopped being up.
        if (state.phase == Phase::Up) != (phase == Phase::Up) || state.since_ms.is_none() {
            state.since_ms = Some(crate::store::now_ms());
        }
        state.phase = phase;
        state.error = error;
    }

    /// The live connection, if there is one right now.
    pub fn current(&self) -> Option<Arc<Connection>> {
        self.live.lock().clone().filter(|c| c.alive())
    }

    /// The live connection, opening one if there is none (one attempt at a
    /// time; callers arriving meanwhile share its outcome).
    pub async fn connection(self: &Arc<Self>) -> Result<Arc<Connection>, RemoteError> {
        let seen = self.attempts.load(Ordering::SeqCst);
        let mut current = self.current.lock().await;
        if let Some(conn) = current.as_ref().filter(|c| c.alive()) {
            return Ok(conn.clone());
        }
        if *self.removed.borrow() {
            return Err(RemoteError::UnknownHost(self.name.clone()));
        }
        if self.attempts.load(Ordering::SeqCst) != seen
            && let Some(failure) = self.last_failure.lock().clone()
        {
            return Err(failure);
        }
        let state = self.state();
        if state.remote_version.is_some() || self.not_up() == Phase::Reconnecting {
            // Still saying why it went down (or why the last retry failed).
            self.set_phase(Phase::Reconnecting, state.error);
        } else {
            self.set_phase(Phase::Connecting, None);
        }
        let epoch = self.epochs.fetch_add(1, Ordering::Relaxed) + 1;
        let host = self.host();
        let proven = self.proven.lock().as_ref() == Some(&host);
        let started = Instant::now();
        let opened = Connection::open(&host, epoch, proven).await;
        self.attempts.fetch_add(1, Ordering::SeqCst);
        *self.last_failure.lock() = opened.as_ref().err().cloned();
        match opened {
            Ok(conn) => {
                let conn = Arc::new(conn);
                *self.proven.lock() = Some(host.clone());
                let status = conn.status(&self.name).await.ok();
                let latency = status.as_ref().map(|(_, ms)| *ms);
                // Unknown (no answer): as this build, which serves them.
                let screens = status.as_ref().is_none_or(|(s, _)| s.screens);
                self.serves_screens.store(screens, Ordering::Relaxed);
                let subs = status.as_ref().is_none_or(|(s, _)| s.screen_subs);
                self.screen_subs.store(subs, Ordering::Relaxed);
                {
                    self.set_phase(Phase::Up, None);
                    let mut state = self.state.lock();
                    state.latency_ms = latency;
                    state.remote_version = Some(conn.info.version.clone());
                }
                *current = Some(conn.clone());
                *self.live.lock() = Some(conn.clone());
                tokio::spawn(watch_connection(self.clone(), conn.clone()));
                self.connected.send_replace(epoch);
                tracing::info!(
                    "host {}: link up (epoch {epoch}, {}) in {} ms",
                    self.name,
                    conn.info.version,
                    started.elapsed().as_millis()
                );
                Ok(conn)
            }
            Err(e) => {
                tracing::info!("host {}: cannot connect: {e}", self.name);
                self.set_phase(self.not_up(), Some(e.to_string()));
                Err(e)
            }
        }
    }

    /// The connection's epoch as the host is told it (`mail.outbox`).
    pub fn epoch_of(&self, conn: &Connection) -> String {
        format!("{}.{}", self.instance, conn.epoch)
    }

    /// A call on the live connection, opening one if needed.
    pub async fn call(self: &Arc<Self>, method: &str, params: Value) -> Result<Value, ApiError> {
        let conn = self.connection().await?;
        conn.call(&self.name, &self.name, method, params).await
    }

    /// Method `M` on the live connection, opening one if needed.
    pub async fn ask<M: Method>(self: &Arc<Self>, params: M::Params) -> Result<M::Reply, ApiError> {
        let conn = self.connection().await?;
        conn.ask::<M>(&self.name, &self.name, params).await
    }
}

/// Measures latency while the connection lives; marks the link down when
/// it ends. A link without keepalives of its own (a command host's) is
/// pinged every [`PING_EVERY`] and closed after [`PINGS_MISSED`] pings
/// unanswered in a row, as SSH's keepalives close a stalled one.
async fn watch_connection(link: Arc<HostLink>, conn: Arc<Connection>) {
    let mut tick = tokio::time::interval(LATENCY_EVERY);
    tick.tick().await;
    let pinging = !conn.transport.has_keepalives();
    let mut ping = tokio::time::interval(PING_EVERY);
    let mut missed = 0;
    loop {
        tokio::select! {
            _ = conn.ended() => break,
            // (A pinged link's pings measure it: a stalled one must not
            // hold the loop here for a whole call's timeout.)
            _ = tick.tick(), if !pinging => {
                if let Ok((_, ms)) = conn.status(&link.name).await {
                    link.state.lock().latency_ms = Some(ms);
                }
            }
            _ = ping.tick(), if pinging => {
                match tokio::time::timeout(PING_EVERY, conn.status(&link.name)).await {
                    Ok(Ok((_, ms))) => {
                        missed = 0;
                        link.state.lock().latency_ms = Some(ms);
                    }
                    _ => missed += 1,
                }
                if missed == PINGS_MISSED {
                    tracing::info!("host {}: {missed} pings unanswered; closing the link", link.name);
                    conn.close().await;
                }
            }
        }
    }
    tracing::info!("host {}: link lost (epoch {})", link.name, conn.epoch);
    let mut live = link.live.lock();
    if live.as_ref().is_some_and(|c| c.epoch == conn.epoch) {
        *live = None;
        drop(live);
        link.set_phase(link.not_up(), Some("the link was lost".into()));
    }
}

/// Every host's link, by name.
#[derive(Default)]
pub struct Links {
    hosts: Mutex<HashMap<String, Arc<HostLink>>>,
}

impl Links {
    /// The link for a stored host (created idle on first use).
    pub fn for_host(&self, host: &HostRow) -> Arc<HostLink> {
        let mut hosts = self.hosts.lock();
        let link = hosts
            .entry(host.name.clone())
            .or_insert_with(|| Arc::new(HostLink::new(host.clone())));
        *link.host.lock() = host.clone();
        link.clone()
    }

    pub fn get(&self, name: &str) -> Option<Arc<HostLink>> {
        self.hosts.lock().get(name).cloned()
    }

    /// Drops a removed host's link and closes its connection.
    pub async fn forget(&self, name: &str) {
        let link = self.hosts.lock().remove(name);
        if let Some(link) = link {
            link.removed.send_replace(true);
            if let Some(conn) = link.current() {
                conn.close().await;
            }
        }
    }
}
