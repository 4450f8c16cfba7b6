//! The daemon's side of transcripts: which files to tail (notified by
//! inotify, never by rescanning), indexing them in bounded steps on the
//! store's thread, and the `transcript.read` / `transcripts.search` methods.
//!
//! `index_transcript` is the entry point for the harness layer: a hook that
//! names a transcript path (Claude's `transcript_path`, a subagent's
//! `agent_transcript_path`) hands it here with the session and run.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{broadcast, mpsc};

use super::Engine;
use crate::api::{
    ApiError, ErrorCode, SearchParams, SearchResults, TranscriptMessage, TranscriptPage, TranscriptParams,
};
use crate::store::transcripts as db;
use crate::store::{Store, StoreError};
use crate::transcript::claude::SubagentLink;
use crate::transcript::index::on_store::{self, Ambiguous};
use crate::transcript::index::{self, IndexError, IndexReport};
use crate::transcript::watch::Watcher;
use crate::transcript::{Format, tail};

/// A page of `transcript.read` stops growing past this many bytes of JSON,
/// so with the envelope it stays well inside the 1 MiB frame cap.
const PAGE_BYTES: usize = 768 * 1024;

/// How long `transcripts.search` reads what live runs' transcripts gained
/// before it answers from the index; the rest is read in the background.
/// Dozens of steps of `SEARCH_STEP` (≈ 7 ms each: 100 MB of JSONL index in
/// ~2.6 s of CPU, benches/transcript_index.rs): any message written since
/// the last read, unless a flood of them is pending.
const SEARCH_CATCH_UP: Duration = Duration::from_millis(200);

/// The bytes one step of that reads, so the deadline is overrun by one
/// short step at most.
const SEARCH_STEP: usize = 256 * 1024;

/// Steps of `SEARCH_STEP` a search reads at most before it answers (4 MiB,
/// ~100 ms here), however fast the machine: far more than a turn writes,
/// while a flood of backlog is left to the tailer and said so in the
/// answer (`unindexed_bytes`), not waited for.
const SEARCH_STEPS: usize = 16;

enum Job {
    /// Files registered for a session: watch them (and, for Claude, the
    /// folder its subagents will write to).
    Watch(Vec<PathBuf>),
    /// Something changed at this path.
    Changed(PathBuf),
    /// A database changed a while ago: read its sessions once more.
    Recheck(PathBuf),
    /// A run ended: stop tailing the sessions no live run uses.
    Prune,
}

/// The transcript tailer: a task that owns the file watcher and indexes
/// what changes. Cheap to share.
pub struct Transcripts {
    jobs: mpsc::UnboundedSender<Job>,
    /// Sessions whose transcript grew (notifications carry ids).
    grew: broadcast::Sender<Grew>,
}

/// A session's transcript grew: its id, and the run its files belong to
/// when known.
#[derive(Debug, Clone)]
pub struct Grew {
    pub session: String,
    pub run: Option<String>,
}

impl Transcripts {
    /// Starts the tailer, and resumes tailing the transcripts of runs that
    /// are still live (after a daemon restart).
    pub fn start(store: Store) -> Transcripts {
        let (jobs, rx) = mpsc::unbounded_channel();
        let grew = broadcast::channel(256).0;
        let tailer = Tailer {
            store: store.clone(),
            grew: grew.clone(),
            watcher: None,
            files: HashSet::new(),
            claude_dirs: HashMap::new(),
            again: None,
            rechecks: HashMap::new(),
        };
        tokio::spawn(tailer.run(jobs.clone(), rx));
        let resume = jobs.clone();
        tokio::spawn(async move {
            if let Ok(live) = store.transcripts().live_sources().await {
                let files = live.into_iter().map(|s| PathBuf::from(s.path)).collect();
                let _ = resume.send(Job::Watch(files));
            }
        });
        Transcripts { jobs, grew }
    }

    /// Registers a session's transcript (with its run, when known), indexes
    /// everything it holds now, and tails it from then on.
    pub async fn index_transcript(
        &self,
        store: &Store,
        path: &Path,
        session_id: &str,
        run_id: Option<&str>,
    ) -> Result<IndexReport, ApiError> {
        let files = on_store::register_file(store, path, session_id, run_id, None)
            .await
            .map_err(storage)?
            .map_err(index_error)?;
        let mut report = IndexReport::default();
        for f in &files {
            let s = catch_up(store, f).await.map_err(index_error)?;
            report.messages += s.messages;
            report.malformed += s.malformed;
            report.unknown += s.unknown;
            report.files.push(index::key(f));
        }
        let _ = self.jobs.send(Job::Watch(files));
        let _ = self.grew.send(Grew {
            session: session_id.to_string(),
            run: run_id.map(str::to_string),
        });
        Ok(report)
    }

    /// Tells each live run whose transcript grows, as evidence it is not
    /// stalled (`harness::status`).
    pub fn mark_live_runs(engine: &Arc<Engine>) {
        let mut grew = engine.transcripts.grew.subscribe();
        let engine = Arc::downgrade(engine);
        tokio::spawn(async move {
            loop {
                let run = match grew.recv().await {
                    Ok(Grew { run: Some(run), .. }) => run,
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                let Some(engine) = engine.upgrade() else { return };
                let live = engine.runs.lock().get(&run).cloned();
                if let Some(live) = live {
                    live.stall.lock().transcript_at = Some(std::time::Instant::now());
                    live.wake.notify_waiters();
                }
            }
        });
    }

    /// A run ended: the files of sessions no live run uses are no longer
    /// tailed, and their folders no longer watched (inotify watches are a
    /// per-user resource shared with every other program).
    pub fn release(&self) {
        let _ = self.jobs.send(Job::Prune);
    }

    /// A session is resumed: tail the files it has again.
    pub async fn watch_session(&self, store: &Store, session_id: &str) {
        if let Ok(sources) = store.transcripts().session_sources(session_id).await {
            let _ = self
                .jobs
                .send(Job::Watch(sources.into_iter().map(|s| PathBuf::from(s.path)).collect()));
        }
    }
}

/// What the harness layer calls when a hook names a transcript path.
pub async fn index_transcript(
    engine: &Engine,
    path: &Path,
    session_id: &str,
    run_id: Option<&str>,
) -> Result<IndexReport, ApiError> {
    engine
        .transcripts
        .index_transcript(&engine.store, path, session_id, run_id)
        .await
}

fn storage(e: StoreError) -> ApiError {
    ApiError::new(ErrorCode::Storage, e.to_string())
}

fn index_error(e: IndexError) -> ApiError {
    match e {
        IndexError::Store(e) => storage(e),
        IndexError::UnknownFormat(_) | IndexError::NotRegistered(_) => ApiError::bad_request(e.to_string()),
        IndexError::Io { .. } => ApiError::new(ErrorCode::Internal, e.to_string()),
    }
}

/// Reads what is new in one file, one bounded step per store job, so other
/// queries run in between.
async fn catch_up(store: &Store, path: &Path) -> Result<index::Stepped, IndexError> {
    let mut total = index::Stepped::default();
    loop {
        let s = on_store::step_file(store, path, tail::CHUNK)
            .await
            .map_err(IndexError::Store)??;
        total.messages += s.messages;
        total.malformed += s.malformed;
        total.unknown += s.unknown;
        total.changed |= s.changed;
        if !s.more {
            return Ok(total);
        }
    }
}

/// A Claude session's main file (not a subagent's): its subagents' files
/// appear in a folder beside it.
fn is_claude_session(file: &Path) -> bool {
    Format::detect(file) == Some(Format::Claude) && SubagentLink::beside(file).is_none()
}

/// The folders watched to tail `file`: its own, and for a Claude session
/// `<session>/` and `<session>/subagents/`.
fn folders(file: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = file.parent().map(Path::to_path_buf).into_iter().collect();
    if is_claude_session(file) {
        let dir = file.with_extension("");
        dirs.push(dir.join("subagents"));
        dirs.push(dir);
    }
    dirs
}

struct Tailer {
    store: Store,
    grew: broadcast::Sender<Grew>,
    watcher: Option<Watcher>,
    /// Registered transcript files being tailed.
    files: HashSet<PathBuf>,
    /// A Claude session's folder (`<session>/`, where `subagents/` appears)
    /// → its session file.
    claude_dirs: HashMap<PathBuf, PathBuf>,
    /// Its own queue, to look at a database again (weak: the tailer ends
    /// when the engine drops its sender).
    again: Option<mpsc::WeakUnboundedSender<Job>>,
    /// The databases to read once more, each when its last change is
    /// `DATABASE_RECHECK` old: one read after a burst of writes, not one
    /// a write.
    rechecks: HashMap<PathBuf, std::time::Instant>,
}

/// How long after a database's change it is read once more. A harness
/// that writes SQLite in WAL mode may make its commit visible only after
/// the read its last write woke (Hermes Agent: its message, its full-text
/// rows, then the wal-index), with no later write to wake another read;
/// in its real-CLI test each missed commit was visible well within this.
const DATABASE_RECHECK: std::time::Duration = std::time::Duration::from_millis(400);

impl Tailer {
    async fn run(mut self, jobs: mpsc::UnboundedSender<Job>, mut rx: mpsc::UnboundedReceiver<Job>) {
        let tx = jobs.clone();
        self.again = Some(jobs.downgrade());
        self.watcher = Watcher::new(move |path| {
            let _ = tx.send(Job::Changed(path));
        })
        .map_err(|e| tracing::warn!("transcripts will not be tailed: {e}"))
        .ok();
        drop(jobs);
        while let Some(first) = rx.recv().await {
            // Coalesce a burst: each changed file is read once per wake-up.
            let mut changed: Vec<PathBuf> = Vec::new();
            let mut prune = false;
            let mut job = Some(first);
            while let Some(j) = job.take().or_else(|| rx.try_recv().ok()) {
                match j {
                    Job::Watch(files) => {
                        for f in files {
                            // What was appended before the watch began is
                            // read now; what comes after, inotify reports.
                            if self.watch(&f) && !changed.contains(&f) {
                                changed.push(f);
                            }
                        }
                    }
                    Job::Changed(p) => {
                        if !changed.contains(&p) {
                            changed.push(p);
                        }
                    }
                    Job::Recheck(db) => self.recheck(db).await,
                    Job::Prune => prune = true,
                }
            }
            for path in changed {
                self.changed(&path).await;
            }
            // After the reads: what a run wrote last is indexed first.
            if prune {
                self.prune().await;
            }
        }
    }

    /// Stops tailing the files no live run uses, and unwatches the folders
    /// that only they needed (a folder holds many sessions' files).
    async fn prune(&mut self) {
        let live = match self.store.transcripts().live_sources().await {
            Ok(live) => live,
            Err(e) => return tracing::warn!("transcript watches not pruned: {e}"),
        };
        let live: HashSet<PathBuf> = live.into_iter().map(|s| PathBuf::from(s.path)).collect();
        self.files.retain(|f| live.contains(f));
        let files = &self.files;
        self.claude_dirs.retain(|_, session_file| files.contains(session_file));
        let needed: HashSet<PathBuf> = self.files.iter().flat_map(|f| folders(f)).collect();
        if let Some(w) = self.watcher.as_mut() {
            let stale: Vec<PathBuf> = w
                .watched()
                .filter(|d| !needed.contains(*d))
                .map(Path::to_path_buf)
                .collect();
            for dir in stale {
                w.unwatch_dir(&dir);
            }
        }
    }

    /// Starts tailing a file; false if it already was.
    fn watch(&mut self, file: &Path) -> bool {
        if self.files.contains(file) {
            return false;
        }
        let Some(w) = self.watcher.as_mut() else { return false };
        for dir in folders(file) {
            // A Claude session's own folders may not exist yet: their
            // creation is seen one level up.
            if let Err(e) = w.watch_dir(&dir) {
                tracing::debug!("cannot watch {}: {e}", dir.display());
            }
        }
        self.files.insert(file.to_path_buf());
        if is_claude_session(file) {
            self.claude_dirs.insert(file.with_extension(""), file.to_path_buf());
        }
        true
    }

    async fn changed(&mut self, path: &Path) {
        if self.files.contains(path) {
            self.index(path).await;
            return;
        }
        // opencode, Crush and Hermes Agent write their sessions to one
        // database (and its log first): every session tailed in it may have
        // grown; it is read again a moment later for a commit made visible
        // after this read.
        let db = path.to_string_lossy();
        let db = Path::new(db.strip_suffix("-wal").unwrap_or(&db));
        if self.index_database(db).await {
            let due = std::time::Instant::now() + DATABASE_RECHECK;
            if self.rechecks.insert(db.to_path_buf(), due).is_none() {
                self.recheck_at(db.to_path_buf(), due);
            }
            return;
        }
        // `<session>/` or `<session>/subagents/` appeared: watch it, and read
        // any subagent file already in it.
        let session_dir = if path.file_name().is_some_and(|n| n == "subagents") {
            path.parent()
        } else {
            Some(path)
        };
        if let Some(dir) = session_dir
            && let Some(session_file) = self.claude_dirs.get(dir).cloned()
            && path.is_dir()
        {
            if let Some(w) = self.watcher.as_mut() {
                let _ = w.watch_dir(path);
                let _ = w.watch_dir(&dir.join("subagents"));
            }
            for sub in crate::transcript::claude::subagent_files(&session_file) {
                self.subagent(&session_file, &sub).await;
            }
            return;
        }
        // A new subagent file (or its .meta.json) in a watched session.
        let parent = path.parent();
        if parent.is_some_and(|p| p.file_name().is_some_and(|n| n == "subagents"))
            && let Some(session_file) = parent
                .and_then(Path::parent)
                .and_then(|d| self.claude_dirs.get(d))
                .cloned()
        {
            let file = if path.to_string_lossy().ends_with(".meta.json") {
                PathBuf::from(path.to_string_lossy().replace(".meta.json", ".jsonl"))
            } else {
                path.to_path_buf()
            };
            if SubagentLink::beside(&file).is_some() {
                self.subagent(&session_file, &file).await;
            }
        }
    }

    /// Registers a subagent's file under its parent session's ids and reads it.
    async fn subagent(&mut self, session_file: &Path, file: &Path) {
        if self.files.contains(file) {
            self.index(file).await;
            return;
        }
        let registered = on_store::register_beside(&self.store, &index::key(session_file), file).await;
        match registered {
            Ok(Some(Ok(_))) => {
                self.watch(file);
                self.index(file).await;
            }
            Ok(Some(Err(e))) => tracing::warn!("subagent transcript {}: {e}", file.display()),
            Ok(None) => {}
            Err(e) => tracing::warn!("subagent transcript {}: {e}", file.display()),
        }
    }

    /// A database's second read, once its last change is old enough; a
    /// change since moved the time on.
    async fn recheck(&mut self, db: PathBuf) {
        match self.rechecks.get(&db).copied() {
            Some(due) if due > std::time::Instant::now() => self.recheck_at(db, due),
            Some(_) => {
                self.rechecks.remove(&db);
                self.index_database(&db).await;
            }
            None => {}
        }
    }

    /// Asks the tailer's own queue to recheck `db` at `due`.
    fn recheck_at(&self, db: PathBuf, due: std::time::Instant) {
        let Some(again) = self.again.clone() else {
            return;
        };
        tokio::spawn(async move {
            tokio::time::sleep_until(due.into()).await;
            if let Some(tx) = again.upgrade() {
                let _ = tx.send(Job::Recheck(db));
            }
        });
    }

    /// Reads the sessions tailed in the database `db`; false when none is.
    async fn index_database(&self, db: &Path) -> bool {
        let sessions: Vec<PathBuf> = self
            .files
            .iter()
            .filter(|f| crate::transcript::database_source(f).is_some_and(|(_, d, _)| d == db))
            .cloned()
            .collect();
        for f in &sessions {
            self.index(f).await;
        }
        !sessions.is_empty()
    }

    async fn index(&self, path: &Path) {
        match catch_up(&self.store, path).await {
            Ok(s) if s.changed => {
                let key = index::key(path);
                if let Ok(Some(src)) = self.store.transcripts().source(&key).await {
                    let _ = self.grew.send(Grew {
                        session: src.session_id,
                        run: src.run_id,
                    });
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("indexing {}: {e}", path.display()),
        }
    }
}

/// Why a run has no transcript: its family keeps none (its output is
/// `agents logs`), or it has not named one yet.
async fn no_transcript(engine: &Arc<Engine>, run: &str) -> String {
    let family = engine.store.runs().get(run).await.ok().flatten().map(|r| r.harness);
    match family.as_deref().and_then(crate::harness::adapter_for) {
        Some(adapter) if !adapter.has_sessions() => format!(
            "run {run} has no transcript: {} keeps none; its output is in `agents logs {run}`",
            adapter.family()
        ),
        _ => format!("run {run} has no transcript indexed (its harness has not named one yet)"),
    }
}

/// Finds the session a reference names: a run (id, prefix or name) whose
/// transcript is indexed or recorded, else a session id or unique prefix.
/// A transcript the harness layer recorded (`sessions.transcript_path`) but
/// nobody indexed yet is registered on the way.
async fn resolve_session(engine: &Arc<Engine>, reference: &str) -> Result<String, ApiError> {
    let found = on_store::find_session(&engine.store, reference)
        .await
        .map_err(storage)?;
    match found {
        Ok((Some(session), _)) => Ok(session),
        Ok((None, Some(run))) => Err(ApiError::new(
            ErrorCode::UnknownSession,
            no_transcript(engine, &run).await,
        )),
        Ok((None, None)) => Err(ApiError::new(
            ErrorCode::UnknownSession,
            format!("no run or transcript session matches '{reference}'"),
        )),
        Err(Ambiguous::Runs(ids)) => Err(ApiError::new(
            ErrorCode::AmbiguousRun,
            format!(
                "'{reference}' matches several runs: {}",
                crate::store::runs::several(&ids)
            ),
        )),
        Err(Ambiguous::Sessions(ids)) => Err(ApiError::new(
            ErrorCode::AmbiguousRun,
            format!("'{reference}' matches several sessions: {}", ids.join(", ")),
        )),
    }
}

/// `transcript.read`.
pub async fn read(engine: &Arc<Engine>, p: TranscriptParams) -> Result<TranscriptPage, ApiError> {
    let session = resolve_session(engine, &p.id).await?;
    let limit = p
        .limit
        .unwrap_or(TranscriptParams::DEFAULT_LIMIT)
        .clamp(1, TranscriptParams::MAX_LIMIT);
    let wait = Duration::from_millis(p.wait_ms.unwrap_or(0).min(TranscriptParams::MAX_WAIT_MS));
    // Subscribe before reading, so growth between the read and the wait is
    // not missed.
    let mut grew = engine.transcripts.grew.subscribe();
    let files = refresh(engine, &session).await?;
    if !wait.is_zero() {
        // A follower: keep this session's files tailed from now on.
        let _ = engine.transcripts.jobs.send(Job::Watch(files));
    }
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let page = page(engine, &session, p.after_seq, limit).await?;
        if !page.messages.is_empty() || wait.is_zero() || p.after_seq.is_none() {
            return Ok(page);
        }
        // Wait for this session to grow, or the deadline.
        loop {
            match tokio::time::timeout_at(deadline, grew.recv()).await {
                Err(_) => return Ok(page),
                Ok(Ok(g)) if g.session == session => break,
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => break,
                Ok(Err(broadcast::error::RecvError::Closed)) => return Ok(page),
                Ok(Ok(_)) => {}
            }
        }
    }
}

/// Reads what is new in every file of a session; returns the files.
async fn refresh(engine: &Arc<Engine>, session: &str) -> Result<Vec<PathBuf>, ApiError> {
    let sources = engine
        .store
        .transcripts()
        .session_sources(session)
        .await
        .map_err(storage)?;
    let mut files = Vec::new();
    for src in sources {
        let path = PathBuf::from(&src.path);
        match catch_up(&engine.store, &path).await {
            Ok(s) if s.changed => {
                let _ = engine.transcripts.grew.send(Grew {
                    session: session.to_string(),
                    run: src.run_id.clone(),
                });
            }
            Ok(_) => {}
            // A file that cannot be read now keeps what was indexed of it.
            Err(e) => tracing::debug!("reading {}: {e}", path.display()),
        }
        files.push(path);
    }
    Ok(files)
}

/// What a search's catch-up left for the tailer.
#[derive(Default)]
struct Unread {
    files: Vec<PathBuf>,
    bytes: u64,
}

/// Reads what is new in the files live runs use (and `also`'s), in short
/// steps, for `SEARCH_CATCH_UP` from when the files are known and at most
/// `SEARCH_STEPS` steps; the first step is always taken, however busy the
/// machine. Returns what it left.
async fn catch_up_live(engine: &Arc<Engine>, also: Option<String>) -> Unread {
    let sources = engine.store.transcripts().live_sources_and(also).await;
    let sources = match sources {
        Ok(s) => s,
        Err(e) => {
            tracing::debug!("transcripts not caught up before a search: {e}");
            return Unread::default();
        }
    };
    let mut budget = Budget::new(SEARCH_CATCH_UP, SEARCH_STEPS);
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut unread = Unread::default();
    for src in sources {
        let path = PathBuf::from(&src.path);
        if !seen.insert(path.clone()) {
            continue;
        }
        let read = read_within(engine, &src, &mut budget).await;
        if read.left > 0 {
            unread.bytes += read.left;
            unread.files.push(path);
        }
    }
    unread
}

/// How long, and how many steps of `SEARCH_STEP`, a bounded read may take
/// in all; the first step is always taken, however busy the machine.
pub(crate) struct Budget {
    deadline: tokio::time::Instant,
    steps: usize,
    max_steps: usize,
}

impl Budget {
    pub(crate) fn new(time: Duration, max_steps: usize) -> Budget {
        Budget {
            deadline: tokio::time::Instant::now() + time,
            steps: 0,
            max_steps,
        }
    }

    fn take(&mut self) -> bool {
        let ok = self.steps == 0 || (self.steps < self.max_steps && tokio::time::Instant::now() < self.deadline);
        self.steps += ok as usize;
        ok
    }
}

/// What a bounded read of one file did.
#[derive(Default)]
pub(crate) struct Read {
    /// Anything was stored.
    pub changed: bool,
    /// Messages stored.
    pub messages: u64,
    /// Bytes left unread when the budget ran out (0: read to its end, or
    /// unreadable now, which keeps what was indexed of it).
    pub left: u64,
}

/// Reads what is new in a registered file, in steps of `SEARCH_STEP`
/// (each one store job, so other queries run in between), while `budget`
/// lasts; followers of its session hear that it grew.
pub(crate) async fn read_within(engine: &Engine, src: &db::SourceRow, budget: &mut Budget) -> Read {
    let read = steps_within(engine, src, budget).await;
    if read.changed {
        let _ = engine.transcripts.grew.send(Grew {
            session: src.session_id.clone(),
            run: src.run_id.clone(),
        });
    }
    read
}

async fn steps_within(engine: &Engine, src: &db::SourceRow, budget: &mut Budget) -> Read {
    let path = PathBuf::from(&src.path);
    // Until a step says otherwise, what the file holds past its offset
    // (a whole-document format counts records, not bytes: none).
    let document = crate::transcript::is_document(src.format, &path);
    let mut read = Read {
        left: match document {
            true => 0,
            false => std::fs::metadata(&path).map_or(0, |m| m.len().saturating_sub(src.offset)),
        },
        ..Read::default()
    };
    while budget.take() {
        match on_store::step_file(&engine.store, &path, SEARCH_STEP).await {
            Ok(Ok(s)) => {
                read.changed |= s.changed;
                read.messages += s.messages;
                read.left = if s.more { s.left } else { 0 };
                if !s.more {
                    return read;
                }
            }
            // A file that cannot be read now keeps what was indexed of it.
            Ok(Err(e)) => {
                tracing::debug!("reading {}: {e}", path.display());
                read.left = 0;
                return read;
            }
            Err(e) => {
                tracing::debug!("transcript {} not caught up: {e}", path.display());
                return read;
            }
        }
    }
    read
}

async fn page(
    engine: &Arc<Engine>,
    session: &str,
    after_seq: Option<i64>,
    limit: usize,
) -> Result<TranscriptPage, ApiError> {
    let (info, mut messages) = engine
        .store
        .transcripts()
        .page(session, after_seq, limit + 1)
        .await
        .map_err(storage)?;
    let info = info.ok_or_else(|| ApiError::new(ErrorCode::UnknownSession, format!("no session {session}")))?;
    let mut more = messages.len() > limit;
    messages.truncate(limit);
    let mut bytes = 0;
    let mut keep = 0;
    for m in &messages {
        bytes += serde_json::to_vec(m).map(|v| v.len()).unwrap_or(0);
        if keep > 0 && bytes > PAGE_BYTES {
            more = true;
            break;
        }
        keep += 1;
    }
    messages.truncate(keep);
    let last_seq = messages.last().map(|m: &TranscriptMessage| m.seq).or(after_seq);
    Ok(TranscriptPage {
        session: info,
        messages,
        last_seq,
        more,
    })
}

/// `transcripts.search`: first reads what the files of live runs' sessions
/// (and of the session searched within) gained since they were last read,
/// for `SEARCH_CATCH_UP` and `SEARCH_STEPS` at most, so what a harness
/// just wrote is found; the answer says how much it left to the tailer (`unindexed_bytes`).
pub async fn search(engine: &Arc<Engine>, p: SearchParams) -> Result<SearchResults, ApiError> {
    if p.query.trim().is_empty() {
        return Err(ApiError::bad_request("an empty search"));
    }
    let within = match &p.within {
        Some(w) => Some(resolve_session(engine, w).await?),
        None => None,
    };
    let unread = catch_up_live(engine, within.clone()).await;
    let limit = p
        .limit
        .unwrap_or(SearchParams::DEFAULT_LIMIT)
        .clamp(1, SearchParams::MAX_LIMIT);
    let query = if p.raw {
        p.query.clone()
    } else {
        db::plain_query(&p.query)
    };
    let hits = engine
        .store
        .transcripts()
        .search(query, within, limit)
        .await
        .map_err(storage)?;
    // Only now, so the tailer's larger steps do not queue before the query
    // on the store's one thread: it reads the rest (watching a file first if
    // it did not yet).
    for path in unread.files {
        let _ = engine.transcripts.jobs.send(Job::Watch(vec![path.clone()]));
        let _ = engine.transcripts.jobs.send(Job::Changed(path));
    }
    // An FTS5 syntax error (only possible with `raw`) is the caller's.
    let hits = hits.map_err(|e| match e {
        StoreError::Sqlite(e) if p.raw => ApiError::bad_request(format!("bad search query: {e}")),
        e => storage(e),
    })?;
    Ok(SearchResults {
        hits,
        partial: false,
        hosts_unreachable: Vec::new(),
        unindexed_bytes: unread.bytes,
    })
}

#[cfg(test)]
#[path = "transcripts_tests.rs"]
mod tests;
