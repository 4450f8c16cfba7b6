//! Reading transcript files into the database: register a file under its
//! session (and run), then read what is new in bounded steps, each stored in
//! one transaction with the offset it reached. Plain functions over a
//! `Connection`: the daemon runs them on the store's thread, one step per
//! job (`on_store`, through `Store::index_step`), so a large file never
//! holds the database for long; the benchmark and tests call them directly.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::claude::{self, SubagentLink};
use super::tail::{self, Tail};
use super::{Batch, Format, aider, crush, droid, gemini, hermes, line_reader, opencode};
use crate::store::StoreError;
use crate::store::transcripts::{self as db, Progress, SourceRow};

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("reading {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error(
        "{0}: not a transcript format this version reads (Claude, Codex, Qwen, pi, Copilot, Droid or gptme JSONL, Gemini, Auggie, Continue, Cline, nanocoder, Open Interpreter or Code Puppy JSON, aider markdown, an opencode, Crush or Hermes Agent database's session)"
    )]
    UnknownFormat(String),
    #[error("{0} is not registered as a transcript")]
    NotRegistered(String),
}

impl From<rusqlite::Error> for IndexError {
    fn from(e: rusqlite::Error) -> IndexError {
        IndexError::Store(StoreError::Sqlite(e))
    }
}

/// What indexing a transcript did.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize)]
pub struct IndexReport {
    /// Every file of the session now registered (the transcript and, for
    /// Claude, its subagents' files).
    pub files: Vec<String>,
    /// Messages stored by this call (a provisional block read again counts again).
    pub messages: u64,
    pub malformed: u64,
    pub unknown: u64,
}

/// What one step did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stepped {
    pub messages: u64,
    pub malformed: u64,
    pub unknown: u64,
    /// The step stopped at its byte limit; call again.
    pub more: bool,
    /// Anything was stored.
    pub changed: bool,
    /// Bytes of the file past what has been read, as its length was when
    /// this step looked (0 for a whole-document format).
    pub left: u64,
}

/// The path as the index keys it: absolute, not resolved through symlinks
/// (a harness reports the path it writes to).
pub fn key(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// Registers a transcript file under a session and, for a Claude session
/// file, the subagent files beside it. Returns the registered paths.
pub fn register(
    conn: &mut Connection,
    path: &Path,
    session_id: &str,
    run_id: Option<&str>,
    format: Option<Format>,
) -> Result<Vec<PathBuf>, IndexError> {
    // The format of the family that wrote it: a family declared in
    // config.toml, or a built-in one named as its format (a Continue
    // session in a folder of its own looks like any JSON file).
    let declared = || {
        db::harness_of_session(conn, session_id)
            .ok()
            .flatten()
            .and_then(|h| super::declared_format(&h).or_else(|| Format::parse(&h)))
    };
    let format = format
        .or_else(declared)
        .or_else(|| Format::detect(path))
        .ok_or_else(|| IndexError::UnknownFormat(path.display().to_string()))?;
    let path = PathBuf::from(key(path));
    let link = (format == Format::Claude)
        .then(|| SubagentLink::beside(&path))
        .flatten();
    let before = db::get_source(conn, &key(&path))?;
    db::register_source(
        conn,
        &key(&path),
        session_id,
        run_id,
        format,
        link.as_ref().map(|l| l.agent_id.as_str()),
    )?;
    if format == Format::Aider {
        hand_aider_chat_to(conn, &path, before.as_ref(), session_id, run_id)?;
    }
    let mut files = vec![path.clone()];
    if format == Format::Claude && link.is_none() {
        for sub in claude::subagent_files(&path) {
            let agent = SubagentLink::beside(&sub).map(|l| l.agent_id);
            db::register_source(conn, &key(&sub), session_id, run_id, format, agent.as_deref())?;
            files.push(sub);
        }
    }
    Ok(files)
}

/// aider appends every chat in a repository to one file: a session's part
/// begins at its chat's heading. A new registration reads from there; a
/// session of a later chat takes the file over from the earlier one, which
/// keeps what it read.
fn hand_aider_chat_to(
    conn: &mut Connection,
    path: &Path,
    before: Option<&SourceRow>,
    session_id: &str,
    run_id: Option<&str>,
) -> Result<(), IndexError> {
    let later = |owner: &str| aider::session_time(owner).is_some_and(|t| Some(t) < aider::session_time(session_id));
    if before.is_some_and(|b| !later(&b.session_id)) {
        return Ok(());
    }
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(source) => {
            return Err(IndexError::Io {
                path: key(path),
                source,
            });
        }
    };
    if let Some(offset) = aider::session_offset(path, &bytes, session_id) {
        db::hand_over_source(conn, &key(path), session_id, run_id, offset)?;
    }
    Ok(())
}

/// `len:mtime_ns` of a file: unchanged means there is nothing new to read.
fn signature(meta: &std::fs::Metadata) -> String {
    format!("{}:{}:{}", meta.len(), meta.mtime(), meta.mtime_nsec())
}

/// Reads what is new in one registered file (at most about `max` bytes) and
/// stores it.
pub fn step(conn: &mut Connection, path: &Path, max: usize) -> Result<Stepped, IndexError> {
    // FTS5 segment merges reread recent pages: with SQLite's default 2 MiB
    // page cache they come from the file again. 32 MiB took 100 MB of JSONL
    // from 3.7 s to 3.5 s of CPU and less I/O (benches/transcript_index.rs).
    // Only the cache's upper bound: the connection grows to it only if used.
    conn.pragma_update(None, "cache_size", -32 * 1024)?;
    let k = key(path);
    let src = db::get_source(conn, &k)?.ok_or_else(|| IndexError::NotRegistered(k.clone()))?;
    let io = |source| IndexError::Io {
        path: k.clone(),
        source,
    };
    if src.format == Format::Opencode {
        return step_opencode(conn, &src, path, io);
    }
    if src.format == Format::Crush {
        return step_crush(conn, &src, path, io);
    }
    if src.format == Format::Hermes {
        return step_hermes(conn, &src, path, io);
    }
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        // Not written yet (Claude creates the file at the first message).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Stepped::default()),
        Err(e) => return Err(io(e)),
    };
    let mut seen = signature(&meta);
    if src.format == Format::Droid {
        // Its tokens are in the settings file beside it, rewritten after
        // the lines they count: a change there alone is news too.
        let settings = std::fs::metadata(droid::settings_file(path)).map(|m| signature(&m));
        seen = format!("{seen}+{}", settings.unwrap_or_default());
    }
    if src.seen.as_deref() == Some(seen.as_str()) && src.file_id.as_deref() == Some(&tail::file_id(&meta)) {
        return Ok(Stepped::default());
    }
    let (batch, progress, more) = if src.format == Format::Gemini && gemini::is_document(path) {
        read_gemini(&src, path, &meta).map_err(io)?
    } else if let Some(parse) = super::document_parser(src.format) {
        read_document(&src, path, &meta, parse).map_err(io)?
    } else {
        let link = (src.format == Format::Claude)
            .then(|| SubagentLink::beside(path))
            .flatten();
        let mut reader = line_reader(src.format, link).expect("every format reads lines but whole documents");
        reader.restore(&src.state);
        let mut t = Tail::new(path, src.offset, src.file_id.clone());
        let mut batch = Batch::default();
        let s = t.read(reader.as_mut(), &mut batch, max).map_err(io)?;
        let mut progress = Progress {
            offset: t.offset,
            file_id: t.file_id,
            // Only a read that reached the end has seen this version whole.
            seen: (!s.more).then_some(seen),
            state: reader.state(),
            reset: s.reset,
        };
        if src.format == Format::Droid {
            droid_tokens(&src.state, path, &mut batch, &mut progress);
        }
        (batch, progress, s.more)
    };
    db::save_batch(conn, &src, &batch, &progress)?;
    let left = if more {
        meta.len().saturating_sub(progress.offset)
    } else {
        0
    };
    Ok(Stepped {
        messages: batch.messages.len() as u64,
        malformed: batch.stats.malformed,
        unknown: batch.stats.unknown,
        more,
        changed: true,
        left,
    })
}

/// A Droid session's tokens: the growth of its settings file's totals
/// since the last step (the totals counted are its reader's state, which
/// has none of its own).
fn droid_tokens(state: &serde_json::Value, path: &Path, batch: &mut Batch, progress: &mut Progress) {
    let counted: crate::transcript::Usage = if progress.reset {
        Default::default()
    } else {
        serde_json::from_value(state.clone()).unwrap_or_default()
    };
    let totals = droid::totals(path).unwrap_or(counted);
    batch.usage = totals.minus(&counted);
    progress.state = serde_json::to_value(totals).unwrap_or_default();
}

fn read_gemini(src: &SourceRow, path: &Path, meta: &std::fs::Metadata) -> std::io::Result<(Batch, Progress, bool)> {
    let bytes = std::fs::read(path)?;
    let id = tail::file_id(meta);
    let reset = src.file_id.as_ref().is_some_and(|old| *old != id);
    let done = if reset { 0 } else { src.offset as usize };
    let read = gemini::parse(&bytes, done, false);
    let progress = Progress {
        offset: read.records_done as u64,
        file_id: Some(id),
        seen: Some(signature(meta)),
        state: serde_json::Value::Null,
        reset,
    };
    Ok((read.batch, progress, false))
}

/// A session that is one document, after the records read for good. Each
/// write may put a new file in its place, so a new file id is no reset
/// here: the reader tells a history that changed under it by the key of
/// its last record (kept as `last_request`, Auggie's name for it).
fn read_document(
    src: &SourceRow,
    path: &Path,
    meta: &std::fs::Metadata,
    parse: super::DocumentParser,
) -> std::io::Result<(Batch, Progress, bool)> {
    let bytes = std::fs::read(path)?;
    let last = src.state["last_request"].as_str();
    let read = parse(&bytes, src.offset as usize, last, false);
    let progress = Progress {
        offset: read.records_done as u64,
        file_id: Some(tail::file_id(meta)),
        seen: Some(signature(meta)),
        state: serde_json::json!({ "last_request": read.last_key }),
        reset: read.reset,
    };
    Ok((read.batch, progress, false))
}

/// What one step read of a session kept in a database: the batch, how
/// many of its records are read for good, whether more follow, and the
/// state the next step starts from.
struct DatabaseRead {
    batch: Batch,
    records_done: usize,
    more: bool,
    state: serde_json::Value,
}

/// One step of an opencode session: the messages after those read for
/// good, from its database (read only).
fn step_opencode(
    conn: &mut Connection,
    src: &SourceRow,
    path: &Path,
    io: impl Fn(std::io::Error) -> IndexError,
) -> Result<Stepped, IndexError> {
    let split = opencode::split_source(path);
    step_database(conn, src, split, "not an opencode session", io, |db, session, done| {
        let (read, more) = opencode::read_session(db, session, done, false)?;
        Ok(DatabaseRead {
            batch: read.batch,
            records_done: read.records_done,
            more,
            state: serde_json::Value::Null,
        })
    })
}

/// One step of a Crush session, as of opencode; its tokens are the growth
/// of its session row's totals since the last step (kept in the state).
fn step_crush(
    conn: &mut Connection,
    src: &SourceRow,
    path: &Path,
    io: impl Fn(std::io::Error) -> IndexError,
) -> Result<Stepped, IndexError> {
    let split = crush::split_source(path);
    step_database(conn, src, split, "not a Crush session", io, |db, session, done| {
        let (mut read, more, totals) = crush::read_session(db, session, done, false)?;
        let counted: crate::transcript::Usage = serde_json::from_value(src.state.clone()).unwrap_or_default();
        read.batch.usage = totals.minus(&counted);
        Ok(DatabaseRead {
            batch: read.batch,
            records_done: read.records_done,
            more,
            state: serde_json::to_value(totals).unwrap_or_default(),
        })
    })
}

/// One step of a Hermes Agent session, as of Crush: its rows are never
/// rewritten, and its tokens are the growth of its session row's totals.
fn step_hermes(
    conn: &mut Connection,
    src: &SourceRow,
    path: &Path,
    io: impl Fn(std::io::Error) -> IndexError,
) -> Result<Stepped, IndexError> {
    let split = hermes::split_source(path);
    step_database(conn, src, split, "not a Hermes session", io, |db, session, done| {
        let (mut batch, records_done, more, totals) = hermes::read_session(db, session, done)?;
        let counted: crate::transcript::Usage = serde_json::from_value(src.state.clone()).unwrap_or_default();
        batch.usage = totals.minus(&counted);
        Ok(DatabaseRead {
            batch,
            records_done,
            more,
            state: serde_json::to_value(totals).unwrap_or_default(),
        })
    })
}

/// One step of a session an agent keeps in its own SQLite database
/// (`split`: the database and the session its source names, if it names
/// one; `not_one` says it does not): `read` reads what is new after the
/// records done. Nothing to do while the database and its log are as they
/// were last time.
fn step_database(
    conn: &mut Connection,
    src: &SourceRow,
    split: Option<(PathBuf, String)>,
    not_one: &str,
    io: impl Fn(std::io::Error) -> IndexError,
    read: impl FnOnce(&Path, &str, usize) -> rusqlite::Result<DatabaseRead>,
) -> Result<Stepped, IndexError> {
    let Some((db, session)) = split else {
        return Err(io(std::io::Error::new(std::io::ErrorKind::InvalidInput, not_one)));
    };
    let Some(seen) = opencode::signature(&db) else {
        // Not written yet: the agent makes its database at its first start.
        return Ok(Stepped::default());
    };
    if src.seen.as_deref() == Some(seen.as_str()) {
        return Ok(Stepped::default());
    }
    let read = read(&db, &session, src.offset as usize).map_err(|e| io(std::io::Error::other(e)))?;
    let progress = Progress {
        offset: read.records_done as u64,
        file_id: src.file_id.clone(),
        seen: (!read.more && settled(&db)).then_some(seen),
        state: read.state,
        reset: false,
    };
    db::save_batch(conn, src, &read.batch, &progress)?;
    // A read again only because the database had not settled may find
    // nothing: that is no change.
    let news = !read.batch.messages.is_empty()
        || read.records_done != src.offset as usize
        || read.batch.usage != crate::transcript::Usage::default();
    Ok(Stepped {
        messages: read.batch.messages.len() as u64,
        malformed: read.batch.stats.malformed,
        unknown: read.batch.stats.unknown,
        more: read.more,
        changed: news,
        left: 0,
    })
}

/// How long a database must have been still before its signature is
/// trusted to say it has not changed since.
const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether a database and its log were last written long enough ago that
/// a write made since would show in their signature. Their times are the
/// kernel's coarse clock (a few ms), and a log reused after a checkpoint
/// keeps its size: a commit landing just after a read can leave the
/// signature as it was (as git's index treats a "racily clean" file).
fn settled(db: &Path) -> bool {
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let now = std::time::SystemTime::now();
    [db, wal.as_path()].iter().all(|f| {
        std::fs::metadata(f)
            .and_then(|m| m.modified())
            .map_or(true, |t| now.duration_since(t).is_ok_and(|age| age >= SETTLE))
    })
}

/// Reads everything new in a registered file, step by step.
pub fn catch_up(conn: &mut Connection, path: &Path) -> Result<Stepped, IndexError> {
    let mut total = Stepped::default();
    loop {
        let s = step(conn, path, tail::CHUNK)?;
        total.messages += s.messages;
        total.malformed += s.malformed;
        total.unknown += s.unknown;
        total.changed |= s.changed;
        if !s.more {
            return Ok(total);
        }
    }
}

/// Registers a transcript under a session (and run) and indexes all of it,
/// subagent files included. What the harness layer calls when a hook names
/// a transcript path; the daemon's version also watches the files.
pub fn index_transcript(
    conn: &mut Connection,
    path: &Path,
    session_id: &str,
    run_id: Option<&str>,
) -> Result<IndexReport, IndexError> {
    let files = register(conn, path, session_id, run_id, None)?;
    let mut report = IndexReport::default();
    for f in &files {
        let s = catch_up(conn, f)?;
        report.messages += s.messages;
        report.malformed += s.malformed;
        report.unknown += s.unknown;
        report.files.push(key(f));
    }
    Ok(report)
}

/// On the store's thread (`Store::index_step`), for the daemon: each call
/// one job there, in order with the store's other jobs. The outer error is
/// the store's (closed), the inner the index's.
pub mod on_store {
    use std::path::{Path, PathBuf};

    use super::{IndexError, Stepped, key, register, step};
    use crate::store::runs::{self, Resolved};
    use crate::store::transcripts::{self as db, SourceRow};
    use crate::store::{Store, StoreError};
    use crate::values::transcript::Format;

    /// See [`register`].
    pub async fn register_file(
        store: &Store,
        path: &Path,
        session_id: &str,
        run_id: Option<&str>,
        format: Option<Format>,
    ) -> Result<Result<Vec<PathBuf>, IndexError>, StoreError> {
        let (p, s, r) = (path.to_path_buf(), session_id.to_string(), run_id.map(str::to_string));
        store
            .index_step(move |c| register(c, &p, &s, r.as_deref(), format))
            .await
    }

    /// One step of at most `max` bytes (see [`step`]).
    pub async fn step_file(store: &Store, path: &Path, max: usize) -> Result<Result<Stepped, IndexError>, StoreError> {
        let p = path.to_path_buf();
        store.index_step(move |c| step(c, &p, max)).await
    }

    /// A subagent's file registered under the session of the file
    /// `parent` keys; `None` when that file is not registered.
    pub async fn register_beside(
        store: &Store,
        parent: &str,
        sub: &Path,
    ) -> Result<Option<Result<Vec<PathBuf>, IndexError>>, StoreError> {
        let (parent, sub) = (parent.to_string(), sub.to_path_buf());
        store
            .index_step(move |c| {
                let Some(src) = db::get_source(c, &parent)? else {
                    return Ok(None);
                };
                Ok(Some(register(
                    c,
                    &sub,
                    &src.session_id,
                    src.run_id.as_deref(),
                    Some(src.format),
                )))
            })
            .await?
    }

    /// The source of the transcript the harness layer recorded for `run`
    /// at launch, registered now if no hook named it yet (an unreadable
    /// format or path is reported when read).
    pub async fn recorded_source(store: &Store, run: &str) -> Result<Option<SourceRow>, StoreError> {
        let run = run.to_string();
        store
            .index_step(move |c| {
                let Some((session, run_id, path)) = db::recorded_transcript(c, &run)? else {
                    return Ok(None);
                };
                let k = key(Path::new(&path));
                if db::get_source(c, &k)?.is_none() {
                    let _ = register(c, Path::new(&path), &session, run_id.as_deref(), None);
                }
                db::get_source(c, &k)
            })
            .await?
    }

    /// A reference that names several runs or sessions.
    pub enum Ambiguous {
        Runs(Vec<String>),
        Sessions(Vec<String>),
    }

    /// The session a reference names, and the run when it names one: a run
    /// (id, prefix or name) whose transcript is indexed or recorded, else a
    /// session id or unique prefix. A transcript the harness layer recorded
    /// but nobody indexed yet is registered on the way.
    pub async fn find_session(
        store: &Store,
        reference: &str,
    ) -> Result<Result<(Option<String>, Option<String>), Ambiguous>, StoreError> {
        let r = reference.to_string();
        store
            .index_step(move |c| {
                let run = match runs::resolve(c, &r)? {
                    Resolved::One(id) => Some(id),
                    Resolved::Many(ids) => return Ok(Err(Ambiguous::Runs(ids))),
                    Resolved::None => None,
                };
                let k = run.clone().unwrap_or_else(|| r.clone());
                let recorded = db::recorded_transcript(c, &k)?;
                if let Some((session, run_id, path)) = &recorded
                    && db::get_source(c, &key(Path::new(path)))?.is_none()
                {
                    // Unreadable format or path: reported when read, not here.
                    let _ = register(c, Path::new(path), session, run_id.as_deref(), None);
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
            .await?
    }
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
