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

use super::Daemon;
use crate::api::{ApiError, ErrorCode, SearchHit, SearchParams, TranscriptMessage, TranscriptPage, TranscriptParams};
use crate::store::transcripts as db;
use crate::store::{Store, StoreError, runs};
use crate::transcript::claude::SubagentLink;
use crate::transcript::index::{self, IndexError, IndexReport};
use crate::transcript::watch::Watcher;
use crate::transcript::{Format, tail};

/// A page of `transcript.read` stops growing past this many bytes of JSON,
/// so with the envelope it stays well inside the 1 MiB frame cap.
const PAGE_BYTES: usize = 768 * 1024;

enum Job {
    /// Files registered for a session: watch them (and, for Claude, the
    /// folder its subagents will write to).
    Watch(Vec<PathBuf>),
    /// Something changed at this path.
    Changed(PathBuf),
}

/// The transcript tailer: a task that owns the file watcher and indexes
/// what changes. Cheap to share.
pub struct Transcripts {
    jobs: mpsc::UnboundedSender<Job>,
    /// Ids of sessions whose transcript grew (notifications carry ids).
    grew: broadcast::Sender<String>,
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
        };
        tokio::spawn(tailer.run(jobs.clone(), rx));
        let resume = jobs.clone();
        tokio::spawn(async move {
            if let Ok(live) = store.call(|c| db::live_sources(c)).await {
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
        let (p, s, r) = (path.to_path_buf(), session_id.to_string(), run_id.map(str::to_string));
        let files = store
            .call(move |c| Ok(index::register(c, &p, &s, r.as_deref(), None)))
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
        let _ = self.grew.send(session_id.to_string());
        Ok(report)
    }
}

/// What the harness layer calls when a hook names a transcript path.
pub async fn index_transcript(
    daemon: &Daemon,
    path: &Path,
    session_id: &str,
    run_id: Option<&str>,
) -> Result<IndexReport, ApiError> {
    daemon
        .transcripts
        .index_transcript(&daemon.store, path, session_id, run_id)
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
        let p = path.to_path_buf();
        let s = store
            .call(move |c| Ok(index::step(c, &p, tail::CHUNK)))
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

struct Tailer {
    store: Store,
    grew: broadcast::Sender<String>,
    watcher: Option<Watcher>,
    /// Registered transcript files being tailed.
    files: HashSet<PathBuf>,
    /// A Claude session's folder (`<session>/`, where `subagents/` appears)
    /// → its session file.
    claude_dirs: HashMap<PathBuf, PathBuf>,
}

impl Tailer {
    async fn run(mut self, jobs: mpsc::UnboundedSender<Job>, mut rx: mpsc::UnboundedReceiver<Job>) {
        let tx = jobs.clone();
        self.watcher = Watcher::new(move |path| {
            let _ = tx.send(Job::Changed(path));
        })
        .map_err(|e| tracing::warn!("transcripts will not be tailed: {e}"))
        .ok();
        drop(jobs);
        while let Some(first) = rx.recv().await {
            // Coalesce a burst: each changed file is read once per wake-up.
            let mut changed: Vec<PathBuf> = Vec::new();
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
                }
            }
            for path in changed {
                self.changed(&path).await;
            }
        }
    }

    /// Starts tailing a file; false if it already was.
    fn watch(&mut self, file: &Path) -> bool {
        if self.files.contains(file) {
            return false;
        }
        let Some(w) = self.watcher.as_mut() else { return false };
        if let Some(dir) = file.parent()
            && let Err(e) = w.watch_dir(dir)
        {
            tracing::debug!("cannot watch {}: {e}", dir.display());
        }
        self.files.insert(file.to_path_buf());
        let is_claude_session = Format::detect(file) == Some(Format::Claude) && SubagentLink::beside(file).is_none();
        if is_claude_session {
            let dir = file.with_extension("");
            self.claude_dirs.insert(dir.clone(), file.to_path_buf());
            // Either may not exist yet; their creation is seen one level up.
            let _ = w.watch_dir(&dir);
            let _ = w.watch_dir(&dir.join("subagents"));
        }
        true
    }

    async fn changed(&mut self, path: &Path) {
        if self.files.contains(path) {
            self.index(path).await;
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
        let (parent, sub) = (index::key(session_file), file.to_path_buf());
        let registered = self
            .store
            .call(move |c| {
                let Some(src) = db::get_source(c, &parent)? else {
                    return Ok(None);
                };
                Ok(Some(index::register(
                    c,
                    &sub,
                    &src.session_id,
                    src.run_id.as_deref(),
                    Some(src.format),
                )))
            })
            .await;
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

    async fn index(&self, path: &Path) {
        match catch_up(&self.store, path).await {
            Ok(s) if s.changed => {
                let key = index::key(path);
                if let Ok(Some(src)) = self.store.call(move |c| db::get_source(c, &key)).await {
                    let _ = self.grew.send(src.session_id);
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("indexing {}: {e}", path.display()),
        }
    }
}

/// Finds the session a reference names: a run (id, prefix or name) whose
/// transcript is indexed or recorded, else a session id or unique prefix.
/// A transcript the harness layer recorded (`sessions.transcript_path`) but
/// nobody indexed yet is registered on the way.
async fn resolve_session(daemon: &Arc<Daemon>, reference: &str) -> Result<String, ApiError> {
    let r = reference.to_string();
    let found = daemon
        .store
        .call(move |c| {
            let run = match runs::resolve(c, &r)? {
                runs::Resolved::One(id) => Some(id),
                runs::Resolved::Many(ids) => return Ok(Err(Ambiguous::Runs(ids))),
                runs::Resolved::None => None,
            };
            let key = run.clone().unwrap_or_else(|| r.clone());
            let recorded = db::recorded_transcript(c, &key)?;
            if let Some((session, run_id, path)) = &recorded
                && db::get_source(c, &index::key(Path::new(path)))?.is_none()
            {
                // Unreadable format or path: reported when read, not here.
                let _ = index::register(c, Path::new(path), session, run_id.as_deref(), None);
            }
            if let Some(run) = &run {
                return Ok(Ok((db::session_of_run(c, run)?, Some(run.clone()))));
            }
            let sessions = db::match_sessions(c, &r)?;
            match sessions.len() {
                0 => Ok(Ok((None, None))),
                1 => Ok(Ok((sessions.into_iter().next(), None))),
                _ => Ok(Err(Ambiguous::Sessions(sessions))),
            }
        })
        .await
        .map_err(storage)?;
    match found {
        Ok((Some(session), _)) => Ok(session),
        Ok((None, Some(run))) => Err(ApiError::new(
            ErrorCode::UnknownSession,
            format!("run {run} has no transcript indexed (its harness has not named one yet)"),
        )),
        Ok((None, None)) => Err(ApiError::new(
            ErrorCode::UnknownSession,
            format!("no run or transcript session matches '{reference}'"),
        )),
        Err(Ambiguous::Runs(ids)) => Err(ApiError::new(
            ErrorCode::AmbiguousRun,
            format!("'{reference}' matches several runs: {}", ids.join(", ")),
        )),
        Err(Ambiguous::Sessions(ids)) => Err(ApiError::new(
            ErrorCode::AmbiguousRun,
            format!("'{reference}' matches several sessions: {}", ids.join(", ")),
        )),
    }
}

enum Ambiguous {
    Runs(Vec<String>),
    Sessions(Vec<String>),
}

/// `transcript.read`.
pub async fn read(daemon: &Arc<Daemon>, p: TranscriptParams) -> Result<TranscriptPage, ApiError> {
    let session = resolve_session(daemon, &p.id).await?;
    let limit = p
        .limit
        .unwrap_or(TranscriptParams::DEFAULT_LIMIT)
        .clamp(1, TranscriptParams::MAX_LIMIT);
    let wait = Duration::from_millis(p.wait_ms.unwrap_or(0).min(TranscriptParams::MAX_WAIT_MS));
    // Subscribe before reading, so growth between the read and the wait is
    // not missed.
    let mut grew = daemon.transcripts.grew.subscribe();
    let files = refresh(daemon, &session).await?;
    if !wait.is_zero() {
        // A follower: keep this session's files tailed from now on.
        let _ = daemon.transcripts.jobs.send(Job::Watch(files));
    }
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        let page = page(daemon, &session, p.after_seq, limit).await?;
        if !page.messages.is_empty() || wait.is_zero() || p.after_seq.is_none() {
            return Ok(page);
        }
        // Wait for this session to grow, or the deadline.
        loop {
            match tokio::time::timeout_at(deadline, grew.recv()).await {
                Err(_) => return Ok(page),
                Ok(Ok(s)) if s == session => break,
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => break,
                Ok(Err(broadcast::error::RecvError::Closed)) => return Ok(page),
                Ok(Ok(_)) => {}
            }
        }
    }
}

/// Reads what is new in every file of a session; returns the files.
async fn refresh(daemon: &Arc<Daemon>, session: &str) -> Result<Vec<PathBuf>, ApiError> {
    let s = session.to_string();
    let sources = daemon
        .store
        .call(move |c| db::session_sources(c, &s))
        .await
        .map_err(storage)?;
    let mut files = Vec::new();
    for src in sources {
        let path = PathBuf::from(&src.path);
        match catch_up(&daemon.store, &path).await {
            Ok(s) if s.changed => {
                let _ = daemon.transcripts.grew.send(session.to_string());
            }
            Ok(_) => {}
            // A file that cannot be read now keeps what was indexed of it.
            Err(e) => tracing::debug!("reading {}: {e}", path.display()),
        }
        files.push(path);
    }
    Ok(files)
}

async fn page(
    daemon: &Arc<Daemon>,
    session: &str,
    after_seq: Option<i64>,
    limit: usize,
) -> Result<TranscriptPage, ApiError> {
    let s = session.to_string();
    let (info, mut messages) = daemon
        .store
        .call(move |c| Ok((db::session(c, &s)?, db::messages(c, &s, after_seq, limit + 1)?)))
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

/// `transcripts.search`.
pub async fn search(daemon: &Arc<Daemon>, p: SearchParams) -> Result<Vec<SearchHit>, ApiError> {
    if p.query.trim().is_empty() {
        return Err(ApiError::bad_request("an empty search"));
    }
    let within = match &p.within {
        Some(w) => Some(resolve_session(daemon, w).await?),
        None => None,
    };
    let limit = p
        .limit
        .unwrap_or(SearchParams::DEFAULT_LIMIT)
        .clamp(1, SearchParams::MAX_LIMIT);
    let query = if p.raw {
        p.query.clone()
    } else {
        db::plain_query(&p.query)
    };
    let hits = daemon
        .store
        .call(move |c| Ok(db::search(c, &query, within.as_deref(), limit)))
        .await
        .map_err(storage)?;
    // An FTS5 syntax error (only possible with `raw`) is the caller's.
    hits.map_err(|e| match e {
        StoreError::Sqlite(e) if p.raw => ApiError::bad_request(format!("bad search query: {e}")),
        e => storage(e),
    })
}
