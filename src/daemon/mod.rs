//! `agents daemon`: the broker (docs/design.md §2). It owns the database, the
//! registry of live runs and their supervisor links, fan-out of output to
//! clients, and the prompt queues. Runs live in their supervisors, so this
//! process can die or be upgraded without losing one.

mod adopt;
mod approvals;
mod connection;
mod dispatch;
mod ends;
mod fallback;
mod hooks;
mod link;
mod listing;
mod mail;
mod once;
mod outbox;
mod prompts;
mod queue;
mod recover;
mod remote;
mod removal;
mod rename;
mod retention;
mod routine_fire;
mod routines;
mod run_link;
mod run_methods;
mod screens;
mod sessions;
mod size;
mod start;
mod subscribe;
mod tasks;
mod teams;
pub mod transcripts;
mod upgrade;
mod waits;
mod worktrees;

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use tokio::net::UnixListener;
use tokio::sync::{Notify, broadcast};

use crate::config::ConfigWatch;
use crate::paths::Paths;
use crate::store::Store;

pub use subscribe::LAG_LIMIT;

/// Shared by every task of the daemon.
pub struct Daemon {
    pub paths: Paths,
    pub store: Store,
    pub config: Mutex<ConfigWatch>,
    /// Live runs by id.
    pub runs: Mutex<HashMap<String, Arc<link::LiveRun>>>,
    /// `run.changed` notifications for every client (ids only).
    pub changes: broadcast::Sender<String>,
    pub clients: AtomicUsize,
    pub shutdown: Notify,
    /// Tails and indexes the harnesses' transcripts.
    pub transcripts: transcripts::Transcripts,
    /// One SSH link per remote host (docs/design.md §8).
    pub hosts: crate::remote::Links,
    /// Starts in progress by the caller's launch id (a retry waits for them).
    pub starts: once::Starts,
    /// Live runs' output offsets waiting to be stored, in one batch.
    pub output_bytes: link::OutputBytes,
    /// Requests being answered (an upgrade's re-exec waits for them).
    pub requests: AtomicUsize,
    /// Ends the database refused (a full disk), until they are written.
    pub held_ends: ends::HeldEnds,
    /// How many `runs.wait` calls wait on each run now: a child that ends
    /// awaited gives its result to its waiter, not to its parent.
    pub awaited: std::sync::Mutex<std::collections::HashMap<String, usize>>,
    /// The routine scheduler's state (`[routines.NAME]`).
    pub routines: routines::Routines,
}

impl Daemon {
    pub fn live(&self, id: &str) -> Option<Arc<link::LiveRun>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner()).get(id).cloned()
    }

    /// Every live run now.
    pub fn live_runs(&self) -> Vec<Arc<link::LiveRun>> {
        self.runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    pub fn config(&self) -> crate::config::Config {
        let mut watch = self.config.lock().unwrap_or_else(|p| p.into_inner());
        if watch.refresh() {
            self.routines.config_read(&watch.current.routines);
        }
        watch.current.clone()
    }

    /// The engine settings as last read, without looking at the file: for
    /// loops that run often (each run's status loop wakes every quiet
    /// window; with 50 runs a `stat` each was 50 a second). Every
    /// `config()` call and the minute's tick read edits.
    pub fn engine_as_read(&self) -> crate::config::Engine {
        let watch = self.config.lock().unwrap_or_else(|p| p.into_inner());
        watch.current.engine.clone()
    }

    pub fn changed(&self, id: &str) {
        let _ = self.changes.send(id.to_string());
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

/// The user's screen-rule files, for a new run's supervisor; one that does
/// not read is passed over with a warning (`agents doctor` names it).
pub fn user_screen_rules() -> Vec<(String, String)> {
    let Some(dir) = Paths::screen_rules_dir() else {
        return Vec::new();
    };
    let (files, faults) = crate::harness::screen_rules::read_user_files(&dir);
    for fault in faults {
        tracing::warn!("screen rules passed over: {fault}");
    }
    files
}

/// The user's umask, which harnesses get (`SuperviseSpec::umask`): read at
/// start, before this daemon makes its own files owner-only (a daemon
/// re-executed on an upgrade is handed it in `AGENTS_USER_UMASK`).
pub fn user_umask() -> u32 {
    *USER_UMASK.get().unwrap_or(&0o022)
}

static USER_UMASK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

fn keep_user_umask() {
    let was = crate::paths::create_owner_only();
    let handed = std::env::var(UMASK_VAR)
        .ok()
        .and_then(|v| u32::from_str_radix(&v, 8).ok());
    let _ = USER_UMASK.set(handed.unwrap_or(was));
}

/// Carries the user's umask across an upgrade's re-exec.
pub const UMASK_VAR: &str = "AGENTS_USER_UMASK";

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
    keep_user_umask();
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
    let (daemon, listener, socket) = open(paths)?;
    adopt::reconcile_all(&daemon).await;
    crate::remote::resume(&daemon.here()).await;
    mail::hand_over_stored(&daemon).await;
    tasks::tell_untold_mirror_ends(&daemon).await;
    // After re-adoption: a routine's run that lives on is seen as running.
    tokio::spawn(routines::run(daemon.clone()));
    tokio::spawn(retention::run(daemon.clone()));
    transcripts::Transcripts::mark_live_runs(&daemon);
    tracing::info!("daemon {} listening on {}", std::process::id(), socket.display());
    if let Some(mut ready) = ready.take() {
        let _ = ready.write_all(b"ready\n");
    }
    let mut config_tick = tokio::time::interval(std::time::Duration::from_secs(60));
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
                daemon.config();
            }
            _ = upgrade_tick.tick() => {
                let binary = binary.clone();
                // Off the runtime: a replaced file is run once (`--version`).
                let replaced = tokio::task::spawn_blocking(move || {
                    binary.lock().unwrap_or_else(|p| p.into_inner()).replaced().map(std::path::Path::to_path_buf)
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
    if let Some(binary) = upgrade_to {
        return Err(reexec(&daemon, &binary).await);
    }
    release_supervisors(&daemon).await;
    // A clean stop leaves one file, not a small database beside a large WAL.
    let _ = daemon.store.checkpoint().await;
    let _ = std::fs::remove_file(daemon.paths.daemon_pid());
    Ok(0)
}

/// Opens the database and the socket, and the daemon over them.
fn open(paths: Paths) -> Result<(Arc<Daemon>, UnixListener, std::path::PathBuf)> {
    if let Some(runs) = paths.lost_database() {
        tracing::warn!(
            "{} is empty but {runs} run folder(s) exist: the records were lost; starting a new database (see agents doctor)",
            paths.db().display()
        );
    }
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
    let transcripts = transcripts::Transcripts::start(store.clone());
    let config = ConfigWatch::keeping(Paths::config_file(), Some(paths.kept_config()));
    let daemon = Arc::new(Daemon {
        paths,
        store,
        config: Mutex::new(config),
        runs: Mutex::new(HashMap::new()),
        changes: broadcast::channel(1024).0,
        clients: AtomicUsize::new(0),
        shutdown: Notify::new(),
        transcripts,
        hosts: Default::default(),
        starts: Default::default(),
        output_bytes: Default::default(),
        requests: AtomicUsize::new(0),
        held_ends: Default::default(),
        awaited: Default::default(),
        routines: routines::Routines::new(crate::clock::Clock::from_env()),
    });
    Ok((daemon, listener, socket))
}

/// A connection accepted: served if it is the daemon's user's and a place
/// is free (full: closed at once, said once a run of them).
fn admit(daemon: &Arc<Daemon>, stream: tokio::net::UnixStream, open: &Arc<tokio::sync::Semaphore>, full: &mut bool) {
    if !crate::protocol::peer::is_same_user(&stream) {
        tracing::warn!("refused a connection from another user");
        return;
    }
    // Full: closed at once, said once a run of them.
    let Ok(permit) = open.clone().try_acquire_owned() else {
        if !*full {
            tracing::warn!("{MAX_CLIENTS} connections open: refusing more until one closes");
            *full = true;
        }
        return;
    };
    *full = false;
    let daemon = daemon.clone();
    daemon.clients.fetch_add(1, Ordering::Relaxed);
    tokio::spawn(async move {
        connection::serve(daemon.clone(), stream).await;
        daemon.clients.fetch_sub(1, Ordering::Relaxed);
        drop(permit);
    });
}

/// A stop on purpose: each live run's supervisor is told, so it does not
/// start a daemon in this one's place (`supervise::keeper`). Bounded: a
/// supervisor that does not answer within a second is not waited for.
async fn release_supervisors(daemon: &Arc<Daemon>) {
    let live = daemon.live_runs();
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

/// Hands this daemon over to the binary that replaced its file: no new
/// connections (the socket is gone: clients wait for the new one), the
/// requests in flight answered (for `upgrade::DRAIN` at most), the store's
/// queue written, then the new image in this process. Returns only if
/// that failed, with why.
async fn reexec(daemon: &Daemon, binary: &std::path::Path) -> anyhow::Error {
    tracing::info!("{} was replaced: re-executing on the new binary", binary.display());
    let deadline = tokio::time::Instant::now() + upgrade::DRAIN;
    while daemon.requests.load(Ordering::Acquire) > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // The last answers are queued to their clients' writers: let them go out.
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let _ = daemon.store.call(|_| Ok(())).await;
    let e = upgrade::exec(binary, &daemon.paths.home);
    anyhow::anyhow!("cannot re-execute on {}: {e}", binary.display())
}
