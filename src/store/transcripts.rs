//! Indexed transcripts: the files read so far (with their offsets), the
//! normalized messages, per-session totals, and full-text search (FTS5).

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use super::{Store, StoreError, format_ms, now_ms};
use crate::api::{SearchHit, TranscriptMessage, TranscriptSession, TranscriptSource};
use crate::values::transcript::{Batch, Format, ReadStats, Role, ToolCall, ToolResult, Usage};

/// A transcript file being indexed: where reading stopped and what the
/// reader remembered.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceRow {
    pub path: String,
    pub session_id: String,
    pub run_id: Option<String>,
    pub format: Format,
    pub agent_id: Option<String>,
    pub offset: u64,
    pub file_id: Option<String>,
    /// Size and mtime of the file when last read (`len:mtime_ns`).
    pub seen: Option<String>,
    pub state: serde_json::Value,
    pub provisional_seq: Option<i64>,
    pub stats: ReadStats,
}

const SOURCE_COLUMNS: &str = "path, session_id, run_id, format, agent_id, offset, file_id, state, provisional_seq, lines, malformed, unknown, seen";

impl SourceRow {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<SourceRow> {
        let format: String = r.get(3)?;
        let state: Option<String> = r.get(7)?;
        Ok(SourceRow {
            path: r.get(0)?,
            session_id: r.get(1)?,
            run_id: r.get(2)?,
            format: Format::parse(&format).unwrap_or(Format::Claude),
            agent_id: r.get(4)?,
            offset: r.get::<_, i64>(5)? as u64,
            file_id: r.get(6)?,
            state: state
                .and_then(|s| serde_json::from_str(&s).ok())
                .unwrap_or(serde_json::Value::Null),
            provisional_seq: r.get(8)?,
            stats: ReadStats {
                lines: r.get::<_, i64>(9)? as u64,
                malformed: r.get::<_, i64>(10)? as u64,
                unknown: r.get::<_, i64>(11)? as u64,
            },
            seen: r.get(12)?,
        })
    }
}

pub fn get_source(conn: &Connection, path: &str) -> Result<Option<SourceRow>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {SOURCE_COLUMNS} FROM transcript_sources WHERE path = ?1"),
            [path],
            SourceRow::from_row,
        )
        .optional()?)
}

pub fn session_sources(conn: &Connection, session_id: &str) -> Result<Vec<SourceRow>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {SOURCE_COLUMNS} FROM transcript_sources WHERE session_id = ?1 ORDER BY agent_id IS NOT NULL, path"
    ))?;
    let rows = stmt.query_map([session_id], SourceRow::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Sources a live run uses — the run that registered them, or a later run
/// of their session (a resume): the files to keep watching.
pub fn live_sources(conn: &Connection) -> Result<Vec<SourceRow>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {SOURCE_COLUMNS} FROM transcript_sources
         WHERE run_id IN (SELECT id FROM runs WHERE state IN ('pending', 'starting', 'running'))
            OR session_id IN (SELECT session_id FROM runs
                              WHERE state IN ('pending', 'starting', 'running') AND session_id IS NOT NULL)"
    ))?;
    let rows = stmt.query_map([], SourceRow::from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Registers a file of a session (idempotent). A run id given later is
/// filled in, on the file, the session, the messages already read and
/// their tokens.
pub fn register_source(
    conn: &mut Connection,
    path: &str,
    session_id: &str,
    run_id: Option<&str>,
    format: Format,
    agent_id: Option<&str>,
) -> Result<SourceRow, StoreError> {
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT INTO transcript_sources (path, session_id, run_id, format, agent_id) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(path) DO UPDATE SET run_id = COALESCE(transcript_sources.run_id, excluded.run_id)",
        params![path, session_id, run_id, format.as_str(), agent_id],
    )?;
    tx.execute(
        "INSERT INTO transcript_sessions (session_id, run_id, format) VALUES (?1, ?2, ?3)
         ON CONFLICT(session_id) DO UPDATE SET run_id = COALESCE(transcript_sessions.run_id, excluded.run_id)",
        params![session_id, run_id, format.as_str()],
    )?;
    if let Some(run) = run_id {
        tx.execute(
            "UPDATE transcript_messages SET run_id = ?2 WHERE session_id = ?1 AND run_id IS NULL",
            params![session_id, run],
        )?;
        tx.execute(
            "UPDATE transcript_usage SET run_id = ?2 WHERE session_id = ?1 AND run_id IS NULL",
            params![session_id, run],
        )?;
    }
    tx.commit()?;
    get_source(conn, path)?.ok_or_else(|| StoreError::Corrupt(format!("transcript source {path} vanished")))
}

/// Gives a file to a session that starts at `offset` in it (aider's history
/// holds one chat after another): read from there afresh, with no tokens of
/// its own yet. What the file's previous session read stays that session's,
/// its tokens included (`transcript_usage` is per session and file).
pub fn hand_over_source(
    conn: &Connection,
    path: &str,
    session_id: &str,
    run_id: Option<&str>,
    offset: u64,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE transcript_sources SET session_id = ?2, run_id = ?3, offset = ?4, state = NULL,
            provisional_seq = NULL, seen = NULL
         WHERE path = ?1",
        params![path, session_id, run_id, offset as i64],
    )?;
    Ok(())
}

/// Where reading a source ended, to store with its batch.
#[derive(Debug, Clone)]
pub struct Progress {
    pub offset: u64,
    pub file_id: Option<String>,
    pub seen: Option<String>,
    pub state: serde_json::Value,
    /// The file was replaced: forget what was read from it before.
    pub reset: bool,
}

/// Stores one read of a source in one transaction: drops what the last read
/// left provisional (or everything, on a reset), appends the new messages
/// with the next sequence numbers of their session, adds to the session's
/// totals and to the file's share of them, and moves the source's offset.
pub fn save_batch(
    conn: &mut Connection,
    src: &SourceRow,
    batch: &Batch,
    progress: &Progress,
) -> Result<(), StoreError> {
    let tx = conn.transaction()?;
    let removed = drop_replaced(&tx, src, progress)?;
    let next_seq: i64 = if removed > 0 {
        tx.query_row(
            "SELECT COALESCE(MAX(seq) + 1, 0) FROM transcript_messages WHERE session_id = ?1",
            [&src.session_id],
            |r| r.get(0),
        )?
    } else {
        tx.query_row(
            "SELECT next_seq FROM transcript_sessions WHERE session_id = ?1",
            [&src.session_id],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0)
    };
    insert_messages(&tx, src, batch, next_seq)?;
    let added = batch.messages.len() as i64;
    let provisional_seq = (batch.provisional > 0).then(|| next_seq + added - batch.provisional as i64);
    let (first, last) = batch
        .messages
        .iter()
        .filter_map(|m| m.at_ms)
        .fold((None::<i64>, None::<i64>), |(lo, hi), t| {
            (Some(lo.map_or(t, |l| l.min(t))), Some(hi.map_or(t, |h| h.max(t))))
        });
    let u = &batch.usage;
    tx.execute(
        "UPDATE transcript_sessions SET
            next_seq = ?2, messages = messages - ?3 + ?4,
            input_tokens = input_tokens + ?5, output_tokens = output_tokens + ?6,
            cache_read_tokens = cache_read_tokens + ?7, cache_write_tokens = cache_write_tokens + ?8,
            model = COALESCE(?9, model),
            first_at = CASE WHEN first_at IS NULL OR ?10 < first_at THEN COALESCE(?10, first_at) ELSE first_at END,
            last_at = CASE WHEN last_at IS NULL OR ?11 > last_at THEN COALESCE(?11, last_at) ELSE last_at END
         WHERE session_id = ?1",
        params![
            src.session_id,
            next_seq + added,
            removed as i64,
            added,
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            batch.model,
            first,
            last,
        ],
    )?;
    note_read(&tx, src, batch, progress, provisional_seq)?;
    tx.commit()?;
    Ok(())
}

/// Removes the messages a read replaces: a reset file's all (its tokens
/// out of the session's totals), else those read provisionally last time.
/// How many went.
fn drop_replaced(tx: &rusqlite::Transaction, src: &SourceRow, progress: &Progress) -> Result<usize, StoreError> {
    let mut removed = 0usize;
    if progress.reset {
        removed += tx.execute("DELETE FROM transcript_messages WHERE source = ?1", [&src.path])?;
        // The old file's tokens leave the session's totals with it.
        let old: Option<(i64, i64, i64, i64)> = tx
            .query_row(
                "SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens
                 FROM transcript_usage WHERE session_id = ?1 AND source = ?2",
                params![src.session_id, src.path],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()?;
        if let Some(old) = old {
            tx.execute(
                "UPDATE transcript_sessions SET input_tokens = input_tokens - ?2, output_tokens = output_tokens - ?3,
                    cache_read_tokens = cache_read_tokens - ?4, cache_write_tokens = cache_write_tokens - ?5
                 WHERE session_id = ?1",
                params![src.session_id, old.0, old.1, old.2, old.3],
            )?;
            tx.execute(
                "UPDATE transcript_usage SET input_tokens = 0, output_tokens = 0, cache_read_tokens = 0,
                    cache_write_tokens = 0 WHERE session_id = ?1 AND source = ?2",
                params![src.session_id, src.path],
            )?;
        }
    } else if let Some(from) = src.provisional_seq {
        removed += tx.execute(
            "DELETE FROM transcript_messages WHERE session_id = ?1 AND seq >= ?2 AND source = ?3",
            params![src.session_id, from, src.path],
        )?;
    }
    Ok(removed)
}

/// Where the source's reading stands now (offset, state, counts), and its
/// tokens added to its row of usage (every file read gets one).
fn note_read(
    tx: &rusqlite::Transaction,
    src: &SourceRow,
    batch: &Batch,
    progress: &Progress,
    provisional_seq: Option<i64>,
) -> Result<(), StoreError> {
    let u = &batch.usage;
    let mut stats = if progress.reset {
        ReadStats::default()
    } else {
        src.stats
    };
    stats.add(&batch.stats);
    tx.execute(
        "UPDATE transcript_sources SET offset = ?2, file_id = ?3, state = ?4, provisional_seq = ?5,
            lines = ?6, malformed = ?7, unknown = ?8, indexed_at = ?9, seen = ?10
         WHERE path = ?1",
        params![
            src.path,
            progress.offset as i64,
            progress.file_id,
            serde_json::to_string(&progress.state).ok(),
            provisional_seq,
            stats.lines as i64,
            stats.malformed as i64,
            stats.unknown as i64,
            now_ms(),
            progress.seen,
        ],
    )?;
    // Every file read gets its row, tokens or not: a run's files are the
    // rows under it (`store::usage`).
    tx.execute(
        "INSERT INTO transcript_usage (session_id, source, run_id, agent_id, input_tokens, output_tokens,
            cache_read_tokens, cache_write_tokens)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT(session_id, source) DO UPDATE SET
            run_id = COALESCE(transcript_usage.run_id, excluded.run_id),
            input_tokens = input_tokens + excluded.input_tokens,
            output_tokens = output_tokens + excluded.output_tokens,
            cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
            cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens",
        params![
            src.session_id,
            src.path,
            src.run_id,
            src.agent_id,
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
        ],
    )?;
    Ok(())
}

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Parts {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<ToolResult>,
}

fn insert_messages(tx: &Transaction<'_>, src: &SourceRow, batch: &Batch, first_seq: i64) -> Result<(), StoreError> {
    if batch.messages.is_empty() {
        return Ok(());
    }
    let mut stmt = tx.prepare_cached(
        "INSERT INTO transcript_messages (session_id, run_id, seq, role, text, tool_names, parts,
            input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, model, at,
            uuid, parent_uuid, agent_id, sidechain, parent_tool_use_id, source, offset)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
    )?;
    for (i, m) in batch.messages.iter().enumerate() {
        let parts = if m.tool_calls.is_empty() && m.tool_result.is_none() {
            None
        } else {
            serde_json::to_string(&Parts {
                calls: m.tool_calls.clone(),
                result: m.tool_result.clone(),
            })
            .ok()
        };
        let names = m.tool_names();
        let u = m.usage;
        stmt.execute(params![
            src.session_id,
            src.run_id,
            first_seq + i as i64,
            m.role.as_str(),
            m.text,
            (!names.is_empty()).then_some(names),
            parts,
            u.map(|u| u.input),
            u.map(|u| u.output),
            u.map(|u| u.cache_read),
            u.map(|u| u.cache_write),
            m.model,
            m.at_ms,
            m.uuid,
            m.parent_uuid,
            m.agent_id,
            m.sidechain,
            m.parent_tool_use_id,
            src.path,
            m.offset as i64,
        ])?;
    }
    Ok(())
}

const MESSAGE_COLUMNS: &str = "seq, session_id, run_id, role, text, parts, input_tokens, output_tokens, \
     cache_read_tokens, cache_write_tokens, model, at, uuid, parent_uuid, sidechain, agent_id, parent_tool_use_id, \
     source, offset";

fn message_from_row(r: &Row<'_>) -> rusqlite::Result<TranscriptMessage> {
    let parts: Option<String> = r.get(5)?;
    let parts: Parts = parts.and_then(|p| serde_json::from_str(&p).ok()).unwrap_or_default();
    let input: Option<i64> = r.get(6)?;
    let usage = input.map(|input| Usage {
        input,
        output: r.get::<_, Option<i64>>(7).ok().flatten().unwrap_or(0),
        cache_read: r.get::<_, Option<i64>>(8).ok().flatten().unwrap_or(0),
        cache_write: r.get::<_, Option<i64>>(9).ok().flatten().unwrap_or(0),
    });
    Ok(TranscriptMessage {
        seq: r.get(0)?,
        session_id: r.get(1)?,
        run_id: r.get(2)?,
        role: Role::parse(&r.get::<_, String>(3)?),
        text: r.get(4)?,
        tool_calls: parts.calls,
        tool_result: parts.result,
        usage,
        model: r.get(10)?,
        at: r.get::<_, Option<i64>>(11)?.map(format_ms),
        uuid: r.get(12)?,
        parent_uuid: r.get(13)?,
        sidechain: r.get(14)?,
        agent_id: r.get(15)?,
        parent_tool_use_id: r.get(16)?,
        source: r.get(17)?,
        offset: r.get::<_, i64>(18)? as u64,
    })
}

/// Messages of a session after `after_seq`, oldest first.
pub fn messages(
    conn: &Connection,
    session_id: &str,
    after_seq: Option<i64>,
    limit: usize,
) -> Result<Vec<TranscriptMessage>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {MESSAGE_COLUMNS} FROM transcript_messages WHERE session_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3"
    ))?;
    let rows = stmt.query_map(
        params![session_id, after_seq.unwrap_or(-1), limit as i64],
        message_from_row,
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// `store.transcripts()`: the transcript index.
pub struct Transcripts<'a>(&'a Store);

impl Store {
    pub fn transcripts(&self) -> Transcripts<'_> {
        Transcripts(self)
    }
}

impl Transcripts<'_> {
    /// See [`live_sources`].
    pub async fn live_sources(&self) -> Result<Vec<SourceRow>, StoreError> {
        self.0.call(|c| live_sources(c)).await
    }

    /// See [`session_sources`].
    pub async fn session_sources(&self, session: &str) -> Result<Vec<SourceRow>, StoreError> {
        let session = session.to_string();
        self.0.call(move |c| session_sources(c, &session)).await
    }

    /// The live runs' sources, and `also`'s session's, read together.
    pub async fn live_sources_and(&self, also: Option<String>) -> Result<Vec<SourceRow>, StoreError> {
        self.0
            .call(move |c| {
                let mut sources = live_sources(c)?;
                if let Some(s) = also {
                    sources.extend(session_sources(c, &s)?);
                }
                Ok(sources)
            })
            .await
    }

    /// See [`get_source`].
    pub async fn source(&self, key: &str) -> Result<Option<SourceRow>, StoreError> {
        let key = key.to_string();
        self.0.call(move |c| get_source(c, &key)).await
    }

    /// A session's totals and up to `limit` of its messages after
    /// `after_seq`, read together.
    pub async fn page(
        &self,
        session: &str,
        after_seq: Option<i64>,
        limit: usize,
    ) -> Result<(Option<TranscriptSession>, Vec<TranscriptMessage>), StoreError> {
        let s = session.to_string();
        self.0
            .call(move |c| Ok((self::session(c, &s)?, messages(c, &s, after_seq, limit)?)))
            .await
    }

    /// See [`search`]; its own error (a bad query) inside.
    pub async fn search(
        &self,
        query: String,
        within: Option<String>,
        limit: usize,
    ) -> Result<Result<Vec<SearchHit>, StoreError>, StoreError> {
        self.0
            .call(move |c| Ok(search(c, &query, within.as_deref(), limit)))
            .await
    }

    /// The last `max` messages of a session's own conversation
    /// (subagents' sidechains and system messages left out), oldest
    /// first, and how many messages the session has in all.
    pub async fn recent(&self, session: &str, max: usize) -> Result<(Vec<TranscriptMessage>, i64), StoreError> {
        let s = session.to_string();
        self.0
            .call(move |c| {
                let Some(info) = self::session(c, &s)? else {
                    return Ok((Vec::new(), 0));
                };
                let next: i64 = c
                    .query_row(
                        "SELECT next_seq FROM transcript_sessions WHERE session_id = ?1",
                        [&s],
                        |r| r.get(0),
                    )
                    .unwrap_or(0);
                // Room for sidechain messages interleaved with the main ones.
                let window = (max * 4) as i64;
                let mut all = messages(c, &s, Some(next - window - 1), window as usize)?;
                all.retain(|m| !m.sidechain && m.role != Role::System);
                let cut = all.len().saturating_sub(max);
                Ok((all.split_off(cut), info.messages))
            })
            .await
    }
}

/// A session's totals and files.
pub fn session(conn: &Connection, session_id: &str) -> Result<Option<TranscriptSession>, StoreError> {
    let Some(mut s) = conn
        .query_row(
            "SELECT session_id, run_id, format, model, messages, input_tokens, output_tokens,
                cache_read_tokens, cache_write_tokens, first_at, last_at
             FROM transcript_sessions WHERE session_id = ?1",
            [session_id],
            |r| {
                Ok(TranscriptSession {
                    session_id: r.get(0)?,
                    run_id: r.get(1)?,
                    format: Format::parse(&r.get::<_, String>(2)?).unwrap_or(Format::Claude),
                    model: r.get(3)?,
                    messages: r.get(4)?,
                    tokens: super::usage::tokens_at(r, 5)?,
                    first_at: r.get::<_, Option<i64>>(9)?.map(format_ms),
                    last_at: r.get::<_, Option<i64>>(10)?.map(format_ms),
                    sources: Vec::new(),
                })
            },
        )
        .optional()?
    else {
        return Ok(None);
    };
    s.sources = session_sources(conn, session_id)?
        .into_iter()
        .map(|src| TranscriptSource {
            path: src.path,
            format: src.format,
            agent_id: src.agent_id,
            lines: src.stats.lines,
            malformed: src.stats.malformed,
            unknown: src.stats.unknown,
        })
        .collect();
    Ok(Some(s))
}

/// Session ids matching a reference: an exact id, else a unique prefix.
pub fn match_sessions(conn: &Connection, reference: &str) -> Result<Vec<String>, StoreError> {
    if reference.is_empty() {
        return Ok(Vec::new());
    }
    if conn
        .query_row(
            "SELECT 1 FROM transcript_sessions WHERE session_id = ?1",
            [reference],
            |_| Ok(()),
        )
        .optional()?
        .is_some()
    {
        return Ok(vec![reference.to_string()]);
    }
    let mut stmt = conn
        .prepare("SELECT session_id FROM transcript_sessions WHERE substr(session_id, 1, length(?1)) = ?1 LIMIT 5")?;
    let rows = stmt.query_map([reference], |r| r.get::<_, String>(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The session a run's transcript belongs to: the run's own `session_id`
/// when it is indexed, else the last session indexed for the run.
pub fn session_of_run(conn: &Connection, run_id: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT ts.session_id FROM transcript_sessions ts
             LEFT JOIN runs r ON r.id = ?1
             WHERE ts.session_id = r.session_id OR ts.run_id = ?1
             ORDER BY ts.session_id = r.session_id DESC, ts.rowid DESC LIMIT 1",
            [run_id],
            |r| r.get(0),
        )
        .optional()?)
}

/// The harness family a session was recorded for (the `sessions` table),
/// if any.
pub fn harness_of_session(conn: &Connection, session_id: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row("SELECT harness FROM sessions WHERE id = ?1", [session_id], |r| r.get(0))
        .optional()?)
}

/// What the run's agent said last (its main conversation, not a
/// subagent's), as far as its transcript is read.
pub fn last_assistant_text(conn: &Connection, run_id: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT text FROM transcript_messages
             WHERE run_id = ?1 AND role = 'assistant' AND sidechain = 0 AND text != ''
             ORDER BY id DESC LIMIT 1",
            [run_id],
            |r| r.get(0),
        )
        .optional()?)
}

/// Files recorded for a session outside the index (the `sessions` table the
/// harness layer fills): `(session id, run id, transcript path)`.
pub fn recorded_transcript(
    conn: &Connection,
    session_or_run: &str,
) -> Result<Option<(String, Option<String>, String)>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT s.id, COALESCE(s.run_id, r.id), s.transcript_path FROM sessions s
             LEFT JOIN runs r ON r.session_id = s.id
             WHERE s.transcript_path IS NOT NULL AND (s.id = ?1 OR s.run_id = ?1 OR r.id = ?1)
             ORDER BY s.created_at DESC LIMIT 1",
            [session_or_run],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?)
}

/// Words of a plain query, each quoted for FTS5 so punctuation is literal
/// (`foo-bar` is a phrase, not a column filter); all must match.
pub fn plain_query(text: &str) -> String {
    text.split_whitespace()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Full-text search, best matches first. `within` limits it to a session.
pub fn search(
    conn: &Connection,
    fts_query: &str,
    within: Option<&str>,
    limit: usize,
) -> Result<Vec<SearchHit>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.session_id, m.run_id, m.seq, m.role, m.at, m.agent_id, m.tool_names,
            snippet(transcript_fts, 0, '«', '»', '…', 16)
         FROM transcript_fts JOIN transcript_messages m ON m.id = transcript_fts.rowid
         WHERE transcript_fts MATCH ?1 AND (?2 IS NULL OR m.session_id = ?2)
         ORDER BY bm25(transcript_fts), m.id DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(params![fts_query, within, limit as i64], |r| {
        Ok(SearchHit {
            session_id: r.get(0)?,
            run_id: r.get(1)?,
            seq: r.get(2)?,
            role: Role::parse(&r.get::<_, String>(3)?),
            at: r.get::<_, Option<i64>>(4)?.map(format_ms),
            agent_id: r.get(5)?,
            tool_names: r.get(6)?,
            snippet: r.get(7)?,
            host: "local".into(),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
