//! SQLite, owned by one thread (docs/design.md §3): every query runs there, in order,
//! and async callers await the answer.

pub mod approvals;
pub mod attempts;
pub mod harness;
pub mod hosts;
pub mod lineage;
pub mod logs;
pub mod mail;
mod migrations;
pub mod mirrors;
pub mod names;
pub mod outbox;
pub mod prompts;
pub mod removal;
pub mod routines;
pub mod run_calls;
pub mod runs;
pub mod sessions;
mod tasks;
pub mod teams;
pub mod transcripts;
pub mod usage;

use std::path::Path;
use std::sync::mpsc;

use rusqlite::Connection;

pub use migrations::LATEST_VERSION;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(
        "the database has schema version {found}, newer than this agents understands ({latest}); upgrade agents instead of downgrading the database"
    )]
    TooNew { found: i64, latest: i64 },
    #[error("database is closed")]
    Closed,
    #[error("corrupt record: {0}")]
    Corrupt(String),
}

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// A handle to the owner thread. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    jobs: mpsc::Sender<Job>,
}

impl Store {
    /// Opens (creating if needed) and migrates the database, then starts its
    /// owner thread.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        // A database from a newer version is refused before it is touched:
        // even switching it to WAL would rewrite its header.
        if path.exists() {
            let peek = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)?;
            migrations::refuse_newer(&peek)?;
        }
        let mut conn = open_connection(path)?;
        migrations::migrate(&mut conn)?;
        let (jobs, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("store".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job(&mut conn);
                }
            })
            .map_err(|_| StoreError::Closed)?;
        Ok(Store { jobs })
    }

    /// Runs `f` on the owner thread and awaits its result. The store's
    /// own: everything outside it asks a typed method.
    async fn call<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.jobs
            .send(Box::new(move |conn| {
                let _ = tx.send(f(conn));
            }))
            .map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    /// Runs a step of the transcript index on the owner thread: the one
    /// door to the connection outside the store. The index
    /// (`transcript::index`) parses other programs' files (a layer above
    /// the store) and stores what one step read, with the offset it
    /// reached, in one transaction; moving its parsers under the store
    /// would be larger than this door. Nothing else takes it (tests/imports.rs).
    pub async fn index_step<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> T + Send + 'static,
    {
        self.call(move |c| Ok(f(c))).await
    }

    /// Waits until every job sent before it is done (a write queued before
    /// a re-exec lands before it).
    pub async fn flush(&self) {
        let _ = self.call(|_| Ok(())).await;
    }

    /// Folds the write-ahead log into the database file: a clean stop
    /// leaves one file, not a small database beside a large WAL.
    pub async fn checkpoint(&self) -> Result<(), StoreError> {
        self.call(|c| Ok(c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?))
            .await
    }
}

/// A migrated connection of its own, outside the owner thread: for tests and
/// benchmarks that call the plain query functions directly.
pub fn open_migrated(path: &Path) -> Result<Connection, StoreError> {
    let mut conn = open_connection(path)?;
    migrations::migrate(&mut conn)?;
    Ok(conn)
}

pub fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // WAL + NORMAL: a power cut may lose the last transactions but never
    // corrupts the file; each run's output lives in its own log anyway.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // The statements run often (a status, an event, a row read, a list
    // page) are prepared once and kept: parsing SQL was a sixth of the
    // store thread's time with hundreds of runs.
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

pub use crate::clock::now_ms;

/// RFC 3339 in UTC with milliseconds, as `--json` shows times.
pub fn format_ms(ms: i64) -> String {
    use std::fmt::Write as _;
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
    // Sized once: `2026-12-05T06:08:07.452Z`.
    let mut text = String::with_capacity(24);
    let _ = write!(text, "{}", humantime::format_rfc3339_millis(t));
    text
}
