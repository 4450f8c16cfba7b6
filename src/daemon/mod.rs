//! `agents daemon`: the broker (docs/design.md §2) around the run engine
//! (`crate::engine`, which owns the live runs, their supervisor links and
//! the prompt queues): client connections, the tool table, fan-out of output
//! and screens to clients, remote hosts, and the features over the engine
//! (mail, teams, routines, removal, retention, sessions, worktrees). Runs
//! live in their supervisors, so this process can die or be upgraded without
//! losing one.

mod approvals;
mod broker;
mod mail;
mod outbox;
mod prompts;
mod remote;
mod removal;
mod rename;
mod retention;
mod routine_fire;
mod routines;
mod sessions;
mod teams;
mod upgrade;
mod web_view;
mod worktrees;

use parking_lot::Mutex;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context, Result};
use tokio::net::UnixListener;
use tokio::sync::Notify;

use crate::config::ConfigWatch;
use crate::engine::Engine;
use crate::paths::Paths;
use crate::store::Store;

pub use broker::subscribe::LAG_LIMIT;

/// How often the daemon looks at `config.toml` by itself (a stat; read
/// again only when it changed): an edit takes effect within this even when
/// nothing asks the daemon anything (a routine added, a quiet window).
const CONFIG_RECHECK: std::time::Duration = std::time::Duration::from_secs(5);

/// What a feature (mail, teams, the outbox, removal, approvals) is given:
/// the run engine and the way to other hosts, never the whole daemon.
#[derive(Clone)]
pub struct Reach {
    pub engine: Arc<Engine>,
    pub here: crate::remote::Here,
}

/// Shared by every task of the daemon: the run engine, and what only the
/// broker and the features above it need.
pub struct Daemon {
    /// The live runs and their records (`crate::engine`).
    pub engine: Arc<Engine>,
    pub clients: AtomicUsize,
    pub shutdown: Notify,
    /// One SSH link per remote host (docs/design.md §8).
    pub hosts: crate::remote::Links,
    /// Requests being answered (an upgrade's re-exec waits for them).
    pub requests: AtomicUsize,
    /// The routine scheduler's state (`[routines.NAME]`).
    pub routines: routines::Routines,
    /// The client connections, to make room for one more (`broker::room`).
    pub room: broker::room::Room,
    /// The web view served for `[web] listen` (`web_view`).
    pub web: web_view::Served,
}

/// What the engine asks of the daemon above it, through a weak handle
/// (`Engine::hold`): a new config read tells the routine scheduler, and a
/// stop routed to a team's leader is handed over as mail.
impl crate::engine::Upcalls for Daemon {
    fn config_read(&self, config: &crate::config::Config) {
        self.routines.config_read(&config.routines);
    }

    fn approval_asked(self: Arc<Self>, asked: crate::api::MailRecord) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(async move { approvals::hand_over(&self.reach(), asked).await })
    }
}

/// The binary this daemon runs, resolved once, at start: a symlink it was
/// started through (a host's `bin/current`) may point elsewhere later.
pub fn own_exe() -> &'static str {
    static EXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        std::env::current_exe()
            .and_then(std::fs::canonicalize)
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    })
}

/// Runs the daemon in this process until `daemon.stop`. `ready` is told once
/// the socket accepts connections (the client that started us waits for it).
pub fn main(paths: Paths, mut ready: Option<std::fs::File>) -> Result<i32> {
    match start(paths, &mut ready) {
        Ok(code) => Ok(code),
        Err(e) => {
            // The client that started us is waiting on this pipe: tell it why.
            if let Some(ready) = ready.as_mut() {
                let _ = writeln!(ready, "error: {}", format!("{e:#}").replace('\n', " "));
            }
            Err(e)
        }
    }
}

fn start(paths: Paths, ready: &mut Option<std::fs::File>) -> Result<i32> {
    own_exe();
    crate::engine::keep_user_umask();
    crate::engine::limits::raise_open_files();
    paths.ensure()?;
    // One daemon per AGENTS_HOME: an exclusive lock held for our lifetime.
    let lock_file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(paths.daemon_lock())
        .context("opening daemon.lock")?;
    let _lock = match nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(lock) => lock,
        Err(_) => {
            let msg = format!("a daemon is already running for {}", paths.home.display());
            if let Some(ready) = ready.as_mut() {
                let _ = writeln!(ready, "busy: {msg}");
            }
            eprintln!("agents: {msg}");
            return Ok(3);
        }
    };

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the daemon runtime")?;
    rt.block_on(serve(paths, ready))
}

/// `ready` is taken only once the socket accepts connections: an error before
/// that leaves it with `main`, which tells the waiting client why.
async fn serve(paths: Paths, ready: &mut Option<std::fs::File>) -> Result<i32> {
    let lost = paths.lost_database();
    if let Some(runs) = lost {
        tracing::warn!(
            "{} is empty but {runs} run folder(s) exist: the records were lost; starting a new database, live runs adopted from their folders (see agents doctor)",
            paths.db().display()
        );
    }
    let (daemon, listener, socket) = open(paths)?;
    crate::engine::adopt::reconcile_all(&daemon.engine).await;
    // Only a database made anew holds no record of a live run.
    if lost.is_some() {
        crate::engine::orphans::adopt_all(&daemon.engine).await;
    }
    crate::remote::resume(&daemon.here()).await;
    mail::hand_over_stored(&daemon.reach()).await;
    crate::engine::tasks::tell_untold_mirror_ends(&daemon.engine).await;
    // After re-adoption: a routine's run that lives on is seen as running.
    tokio::spawn(routines::run(daemon.clone()));
    tokio::spawn(retention::run(daemon.clone()));
    let web_keeper = tokio::spawn(web_view::keep(daemon.clone()));
    crate::engine::transcripts::Transcripts::mark_live_runs(&daemon.engine);
    tracing::info!("daemon {} listening on {}", std::process::id(), socket.display());
    if let Some(mut ready) = ready.take() {
        let _ = ready.write_all(b"ready\n");
    }
    let mut config_tick = tokio::time::interval(CONFIG_RECHECK);
    let binary = Arc::new(Mutex::new(upgrade::Binary::new(own_exe().into())));
    let mut upgrade_tick = tokio::time::interval(upgrade::CHECK_EVERY);
    let mut upgrade_to = None;
    let mut refusing = AcceptBackoff::default();
    let open = Arc::new(tokio::sync::Semaphore::new(MAX_CLIENTS));
    let mut full = false;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => {
                        refusing.ok();
                        stream
                    }
                    Err(e) => {
                        // Out of descriptors (EMFILE) the same connection
                        // waits again at once: back off rather than spin,
                        // say so once, keep serving the connections we have.
                        tokio::time::sleep(refusing.failed(&e)).await;
                        continue;
                    }
                };
                admit(&daemon, stream, &open, &mut full);
            }
            _ = config_tick.tick() => {
                daemon.engine.config();
            }
            _ = upgrade_tick.tick() => {
                let binary = binary.clone();
                // Off the runtime: a replaced file is run once (`--version`).
                let replaced = tokio::task::spawn_blocking(move || {
                    binary.lock().replaced().map(std::path::Path::to_path_buf)
                })
                .await
                .ok()
                .flatten();
                if replaced.is_some() {
                    upgrade_to = replaced;
                    break;
                }
            }
            _ = daemon.shutdown.notified() => break,
        }
    }
    let _ = std::fs::remove_file(&socket);
    // The web view goes first: the next daemon (this one re-executed)
    // starts its own on the same address.
    web_keeper.abort();
    let _ = web_keeper.await;
    web_view::stop(&daemon).await;
    if let Some(binary) = upgrade_to {
        return Err(reexec(&daemon, &binary).await);
    }
    // As an upgrade does: what was asked before the stop is answered.
    drain(&daemon).await;
    release_supervisors(&daemon).await;
    // A clean stop leaves one file, not a small database beside a large WAL.
    let _ = daemon.engine.store.checkpoint().await;
    let _ = std::fs::remove_file(daemon.engine.paths.daemon_pid());
    Ok(0)
}

/// Opens the database and the socket, and the daemon over them.
fn open(paths: Paths) -> Result<(Arc<Daemon>, UnixListener, std::path::PathBuf)> {
    let store = Store::open(&paths.db()).with_context(|| format!("cannot open {}", paths.db().display()))?;
    paths.make_database_owner_only();
    // We hold the lock, so any socket file left here is from a dead daemon.
    std::fs::write(paths.daemon_pid(), format!("{}\n", std::process::id()))?;
    let socket = paths.daemon_socket();
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket).with_context(|| format!("binding {}", socket.display()))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
    }
    let config = ConfigWatch::keeping(Paths::config_file(), Some(paths.kept_config()));
    let proofs = crate::proof::Proofs::open(&paths.proof_key()).map_err(anyhow::Error::msg)?;
    let engine = Engine::new(paths, store, config, proofs);
    let daemon = Arc::new(Daemon {
        engine,
        clients: AtomicUsize::new(0),
        shutdown: Notify::new(),
        hosts: Default::default(),
        requests: AtomicUsize::new(0),
        routines: routines::Routines::new(crate::clock::Clock::from_env()),
        room: Default::default(),
        web: Default::default(),
    });
    let upcalls: std::sync::Weak<dyn crate::engine::Upcalls> = Arc::downgrade(&daemon) as _;
    daemon.engine.hold(upcalls);
    Ok((daemon, listener, socket))
}

/// A connection accepted: served if it is the daemon's user's and a place
/// is free (full: closed at once, said once a run of them).
fn admit(daemon: &Arc<Daemon>, stream: tokio::net::UnixStream, open: &Arc<tokio::sync::Semaphore>, full: &mut bool) {
    if !crate::protocol::peer::is_same_user(&stream) {
        tracing::warn!("refused a connection from another user");
        return;
    }
    let daemon = daemon.clone();
    if let Ok(permit) = open.clone().try_acquire_owned() {
        *full = false;
        tokio::spawn(serve_client(daemon, stream, permit));
        return;
    }
    // Full: the connection idle longest makes room for this one, which
    // waits for its place a moment; none idle, this one is closed (said
    // once a run of them).
    if daemon.room.make_room() {
        let open = open.clone();
        tokio::spawn(async move {
            if let Ok(Ok(permit)) = tokio::time::timeout(MAKING_ROOM, open.acquire_owned()).await {
                serve_client(daemon, stream, permit).await;
            }
        });
    } else if !*full {
        tracing::warn!("{MAX_CLIENTS} connections open, none idle: refusing more until one closes");
        *full = true;
    }
}

/// How long a new client waits for the place an idle one was asked to give.
const MAKING_ROOM: std::time::Duration = std::time::Duration::from_secs(2);

async fn serve_client(daemon: Arc<Daemon>, stream: tokio::net::UnixStream, permit: tokio::sync::OwnedSemaphorePermit) {
    daemon.clients.fetch_add(1, Ordering::Relaxed);
    broker::connection::serve(daemon.clone(), stream).await;
    daemon.clients.fetch_sub(1, Ordering::Relaxed);
    drop(permit);
}

/// A stop on purpose: each live run's supervisor is told, so it does not
/// start a daemon in this one's place (`supervise::keeper`). Bounded: a
/// supervisor that does not answer within a second is not waited for.
async fn release_supervisors(daemon: &Arc<Daemon>) {
    let live = daemon.engine.live_runs();
    let told = live
        .iter()
        .map(|run| tokio::time::timeout(std::time::Duration::from_secs(1), run.link.release()));
    futures::future::join_all(told).await;
}

/// Client connections the daemon serves at once: TUIs, attaches, CLI verbs,
/// MCP servers, hooks of every live agent firing together. Each may hold a
/// 1 MiB partial frame, so this bounds what peers can make it hold (256
/// MiB at worst); a silent one is closed after its header timeout.
const MAX_CLIENTS: usize = 256;

/// Accept failures in a row: the wait before the next try (10 ms doubling to
/// 1 s: a descriptor freed by a closing client is taken within a second),
/// and whether they were reported (once a run of them).
#[derive(Default)]
struct AcceptBackoff {
    wait: Option<std::time::Duration>,
}

impl AcceptBackoff {
    fn failed(&mut self, e: &std::io::Error) -> std::time::Duration {
        let wait = match self.wait {
            None => {
                tracing::warn!("cannot accept connections ({e}); trying again, serving the ones already open");
                std::time::Duration::from_millis(10)
            }
            Some(w) => (w * 2).min(std::time::Duration::from_secs(1)),
        };
        self.wait = Some(wait);
        wait
    }

    fn ok(&mut self) {
        if self.wait.take().is_some() {
            tracing::info!("accepting connections again");
        }
    }
}

/// No new connections (the socket is gone), and the requests in flight
/// answered, for `upgrade::DRAIN` at most (a `wait` on a run that goes on
/// is not waited out), their answers let go to their clients.
async fn drain(daemon: &Daemon) {
    let deadline = tokio::time::Instant::now() + upgrade::DRAIN;
    while daemon.requests.load(Ordering::Acquire) > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The last answers are queued to their clients' writers: let them go out.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
}

/// Hands this daemon over to the binary that replaced its file: no new
/// connections (the socket is gone: clients wait for the new one), the
/// requests in flight answered (for `upgrade::DRAIN` at most), the store's
/// queue written, then the new image in this process. Returns only if
/// that failed, with why.
async fn reexec(daemon: &Daemon, binary: &std::path::Path) -> anyhow::Error {
    tracing::info!("{} was replaced: re-executing on the new binary", binary.display());
    drain(daemon).await;
    daemon.engine.store.flush().await;
    let e = upgrade::exec(binary, &daemon.engine.paths.home);
    anyhow::anyhow!("cannot re-execute on {}: {e}", binary.display())
}
