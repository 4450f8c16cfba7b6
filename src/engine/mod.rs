//! The run engine (docs/architecture.md, "The run engine"): the one owner of
//! the live runs. It starts a run (`start.rs`) or adopts one a daemon before
//! it started (`adopt.rs`), keeps each live run's link to its supervisor
//! (`live.rs`, `run_link.rs`), decides its status and feeds its prompt queue
//! (`queue.rs`), reads hooks (`hooks.rs`) and transcripts (`transcripts.rs`),
//! sizes its PTY (`size.rs`), waits on it (`waits.rs`), records its end
//! (`ends.rs`), falls back to another harness (`fallback.rs`), and recovers
//! what a crash left (`recover.rs`, `once.rs`, `tasks.rs`).
//!
//! The daemon holds it and speaks to it through these modules; the engine
//! knows nothing of clients, hosts or the features above it, and asks the
//! daemon for the two things it needs of them through [`Upcalls`].

pub mod adopt;
pub mod cancel;
pub mod ends;
pub mod fallback;
pub mod hooks;
pub mod limits;
pub mod live;
pub mod once;
pub mod orphans;
pub mod queue;
pub mod reaper;
pub mod recover;
pub mod rhythm;
pub mod run_link;
pub mod size;
pub mod start;
pub mod tasks;
pub mod transcripts;
pub mod waits;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, Weak};

use futures::future::BoxFuture;
use tokio::sync::broadcast;

use crate::api::MailRecord;
use crate::config::{Config, ConfigWatch};
use crate::paths::Paths;
use crate::store::Store;

/// The live runs and what the engine keeps about them.
pub struct Engine {
    pub paths: Paths,
    pub store: Store,
    pub config: Mutex<ConfigWatch>,
    /// Live runs by id.
    pub runs: Mutex<HashMap<String, Arc<live::LiveRun>>>,
    /// `run.changed` notifications for every client (ids only).
    pub changes: broadcast::Sender<String>,
    /// Tails and indexes the harnesses' transcripts.
    pub transcripts: transcripts::Transcripts,
    /// Starts in progress by the caller's launch id (a retry waits for them).
    pub starts: once::Starts,
    /// Live runs' output offsets waiting to be stored, in one batch.
    pub output_bytes: live::OutputBytes,
    /// Ends the database refused (a full disk), until they are written.
    pub held_ends: ends::HeldEnds,
    /// How many `runs.wait` calls wait on each run now: a child that ends
    /// awaited gives its result to its waiter, not to its parent.
    pub awaited: Mutex<HashMap<String, usize>>,
    /// Runs' proofs of identity (`proof.rs`).
    pub proofs: crate::proof::Proofs,
    /// What this build heard and did not know (`daemon.status`, `doctor`).
    pub unknown: Unknowns,
    /// Runs kept `pending` until another has ended (`start::start_after`),
    /// with the run each waits behind: its id and name.
    pub queued: Mutex<HashMap<String, (String, String)>>,
    /// The daemon above, once it holds the engine.
    upcalls: OnceLock<Weak<dyn Upcalls>>,
}

/// Notifications heard that this build does not know (a newer
/// supervisor's), by what they were, with how many: counted and said once
/// in the log, not dropped unsaid.
#[derive(Default)]
pub struct Unknowns(Mutex<std::collections::BTreeMap<String, u64>>);

impl Unknowns {
    pub fn seen(&self, what: &str) {
        let mut counts = self.0.lock();
        let count = counts.entry(what.to_string()).or_default();
        if *count == 0 {
            tracing::warn!("heard a notification this build does not know: {what} (counted in `agents doctor`)");
        }
        *count += 1;
    }

    pub fn counts(&self) -> Vec<crate::api::UnknownSeen> {
        let counts = self.0.lock();
        counts
            .iter()
            .map(|(what, count)| crate::api::UnknownSeen {
                what: what.clone(),
                count: *count,
            })
            .collect()
    }
}

/// What the engine asks of the daemon that holds it.
pub trait Upcalls: Send + Sync {
    /// `config.toml` was read anew (the routine scheduler plans for it).
    fn config_read(&self, config: &Config);
    /// A stop for an answer was committed with the mail that asks a team's
    /// leader: hand that mail over.
    fn approval_asked(self: Arc<Self>, asked: MailRecord) -> BoxFuture<'static, ()>;
}

impl Engine {
    pub fn new(paths: Paths, store: Store, config: ConfigWatch, proofs: crate::proof::Proofs) -> Arc<Engine> {
        let transcripts = transcripts::Transcripts::start(store.clone());
        Arc::new(Engine {
            paths,
            store,
            config: Mutex::new(config),
            runs: Mutex::new(HashMap::new()),
            changes: broadcast::channel(1024).0,
            transcripts,
            starts: Default::default(),
            output_bytes: Default::default(),
            held_ends: Default::default(),
            awaited: Default::default(),
            unknown: Default::default(),
            queued: Default::default(),
            proofs,
            upcalls: OnceLock::new(),
        })
    }

    /// The daemon that holds this engine, told once, before any run is
    /// adopted or started.
    pub fn hold(&self, upcalls: Weak<dyn Upcalls>) {
        let _ = self.upcalls.set(upcalls);
    }

    fn upcalls(&self) -> Option<Arc<dyn Upcalls>> {
        self.upcalls.get().and_then(Weak::upgrade)
    }

    pub fn live(&self, id: &str) -> Option<Arc<live::LiveRun>> {
        self.runs.lock().get(id).cloned()
    }

    /// Every live run now.
    pub fn live_runs(&self) -> Vec<Arc<live::LiveRun>> {
        self.runs.lock().values().cloned().collect()
    }

    pub fn config(&self) -> Config {
        let mut watch = self.config.lock();
        if watch.refresh()
            && let Some(upcalls) = self.upcalls()
        {
            upcalls.config_read(&watch.current);
        }
        watch.current.clone()
    }

    /// The engine settings as last read, without looking at the file: for
    /// loops that run often (each run's status loop wakes every quiet
    /// window; with 50 runs a `stat` each was 50 a second). Every
    /// `config()` call and the minute's tick read edits.
    pub fn engine_as_read(&self) -> crate::config::Engine {
        let watch = self.config.lock();
        watch.current.engine.clone()
    }

    pub fn changed(&self, id: &str) {
        let _ = self.changes.send(id.to_string());
    }

    /// A stop routed to a team's leader: its mail handed over by the daemon.
    async fn approval_asked(&self, asked: MailRecord) {
        if let Some(upcalls) = self.upcalls() {
            upcalls.approval_asked(asked).await;
        }
    }
}

/// The user's screen-rule files, for a new run's supervisor; one that does
/// not read is replaced by its last valid revision, kept in the state
/// directory, or passed over, with a warning (`agents doctor` names it).
pub fn user_screen_rules(paths: &Paths) -> Vec<(String, String)> {
    let Some(dir) = Paths::screen_rules_dir() else {
        return Vec::new();
    };
    let kept = crate::harness::screen_rules::Kept {
        dir: &paths.kept_screen_rules(),
        keeps: true,
    };
    let (files, faults) = crate::harness::screen_rules::read_user_files_kept(&dir, kept);
    for fault in faults {
        tracing::warn!("screen rules: {}", fault.says);
    }
    files
}

/// The user's umask, which harnesses get (`SuperviseSpec::umask`): read at
/// start, before this daemon makes its own files owner-only (a daemon
/// re-executed on an upgrade is handed it in `AGENTS_USER_UMASK`).
pub fn user_umask() -> u32 {
    *USER_UMASK.get().unwrap_or(&0o022)
}

static USER_UMASK: OnceLock<u32> = OnceLock::new();

/// Reads the user's umask once, at the daemon's start, and makes this
/// process's own files owner-only.
pub fn keep_user_umask() {
    let was = crate::paths::create_owner_only();
    let handed = std::env::var(UMASK_VAR)
        .ok()
        .and_then(|v| u32::from_str_radix(&v, 8).ok());
    let _ = USER_UMASK.set(handed.unwrap_or(was));
}

/// Carries the user's umask across an upgrade's re-exec.
pub const UMASK_VAR: &str = "AGENTS_USER_UMASK";

#[cfg(test)]
mod tests {
    use super::Unknowns;

    #[test]
    fn unknown_notifications_are_counted_by_what_they_were() {
        let unknown = Unknowns::default();
        for what in [
            "supervisor: sup.future",
            "supervisor: sup.later",
            "supervisor: sup.future",
        ] {
            unknown.seen(what);
        }
        let counts: Vec<(String, u64)> = unknown.counts().into_iter().map(|u| (u.what, u.count)).collect();
        assert_eq!(
            counts,
            [
                ("supervisor: sup.future".to_string(), 2),
                ("supervisor: sup.later".to_string(), 1)
            ]
        );
    }
}
