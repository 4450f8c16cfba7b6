//! opencode sessions, kept in SQLite: `<data home>/opencode/opencode.db`
//! (`$XDG_DATA_HOME`, else `~/.local/share`; `OPENCODE_DB` names another
//! file). As opencode 1.18.33 writes it (recorded against a mock model:
//! `tests/fixtures/transcripts/opencode/`, one stored row a line):
//!
//! - `session (id, directory, parent_id, title, version, time_created, …,
//!   tokens_*, cost)`: a subagent's session names its parent;
//! - `message (id, session_id, time_created, data)`: `data` is JSON
//!   `{role: user|assistant, time {created, completed}, modelID, tokens
//!   {input, output, reasoning, cache {read, write}}, cost, finish}`;
//! - `part (id, message_id, session_id, data)`: a message's pieces in id
//!   order, `data` `{type: text|reasoning|tool|step-start|step-finish|
//!   patch|file|…}`; a `tool` part is `{tool, callID, state {status, input,
//!   output | error}}`, rewritten in place as the call runs.
//!
//! Ids sort by time, so messages are read in `(time_created, id)` order
//! and "offsets" are message indexes, as in Gemini's whole documents. A
//! message is read for good once another follows it, or once an assistant
//! message is `completed`; until then its messages are provisional and read
//! again. Its tokens are counted when it is read for good.
//!
//! One database holds every session, so a source is named
//! `<database>#<session id>` ([`source_key`]). The rows are read with a
//! read-only connection (opencode writes in WAL mode; a reader never blocks
//! it). [`parse`] is pure: stored JSON text in, messages out.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};
use super::{Batch, ReadStats};

/// Between the database's path and the session in a source's name.
const SEPARATOR: char = '#';

/// The name of one session's transcript in `db`.
pub fn source_key(db: &Path, session: &str) -> PathBuf {
    PathBuf::from(format!("{}{SEPARATOR}{session}", db.display()))
}

/// The database and session a source's name says, if it is one.
pub fn split_source(path: &Path) -> Option<(PathBuf, String)> {
    let text = path.to_str()?;
    let (db, session) = text.rsplit_once(SEPARATOR)?;
    let plausible = session.starts_with("ses_") && !session.contains('/') && db.ends_with(".db");
    plausible.then(|| (PathBuf::from(db), session.to_string()))
}

/// A message row as stored: its id, its `data` and its parts' `data`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredMessage {
    pub id: String,
    pub data: String,
    pub parts: Vec<String>,
}

/// What a read of a session produced.
#[derive(Debug, Default)]
pub struct OpencodeRead {
    pub batch: Batch,
    /// Messages now read for good (counted from the session's first); the
    /// next read starts after them.
    pub records_done: usize,
}

#[derive(Deserialize, Default)]
struct MessageData {
    role: Option<String>,
    #[serde(default)]
    time: Times,
    #[serde(rename = "modelID")]
    model_id: Option<String>,
    tokens: Option<Tokens>,
}

#[derive(Deserialize, Default)]
struct Times {
    created: Option<i64>,
    completed: Option<i64>,
}

#[derive(Deserialize, Default)]
struct Tokens {
    #[serde(default)]
    input: i64,
    #[serde(default)]
    output: i64,
    #[serde(default)]
    reasoning: i64,
    #[serde(default)]
    cache: Cache,
}

#[derive(Deserialize, Default)]
struct Cache {
    #[serde(default)]
    read: i64,
    #[serde(default)]
    write: i64,
}

#[derive(Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    text: Option<String>,
    #[serde(default)]
    synthetic: bool,
    tool: Option<String>,
    #[serde(rename = "callID")]
    call_id: Option<String>,
    state: Option<ToolState>,
}

#[derive(Deserialize)]
struct ToolState {
    status: Option<String>,
    input: Option<Value>,
    output: Option<String>,
    error: Option<String>,
}

/// Part types that carry nothing a reader of the conversation needs.
const QUIET_PARTS: &[&str] = &[
    "reasoning",
    "step-start",
    "step-finish",
    "snapshot",
    "patch",
    "file",
    "agent",
    "subtask",
    "compaction",
    "retry",
];

/// Reads the messages of a session after the first `records_done` (the
/// rows given start there). Unless `finished`, the last message stays
/// provisional unless it is a completed assistant message.
pub fn parse(rows: &[StoredMessage], records_done: usize, finished: bool) -> OpencodeRead {
    let mut read = OpencodeRead {
        records_done,
        ..OpencodeRead::default()
    };
    let out = &mut read.batch;
    for (i, row) in rows.iter().enumerate() {
        let index = records_done + i;
        out.stats.lines += 1;
        let before = out.messages.len();
        let Ok(data) = serde_json::from_str::<MessageData>(&row.data) else {
            out.stats.malformed += 1;
            if i + 1 < rows.len() || finished {
                read.records_done = index + 1;
            }
            continue;
        };
        let completed = data.role.as_deref() == Some("assistant") && data.time.completed.is_some();
        let usage = convert(&row.id, &data, &row.parts, index as u64, out);
        if i + 1 < rows.len() || finished || completed {
            out.usage.add(&usage.unwrap_or_default());
            read.records_done = index + 1;
        } else {
            out.provisional = out.messages.len() - before;
        }
    }
    read
}

/// Appends one message's messages (its text, its tool calls, each call's
/// result); returns its tokens, if it has any.
fn convert(id: &str, data: &MessageData, parts: &[String], offset: u64, out: &mut Batch) -> Option<Usage> {
    let role = match data.role.as_deref() {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        _ => {
            out.stats.unknown += 1;
            return None;
        }
    };
    let mut text = String::new();
    let mut injected = String::new();
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for raw in parts {
        let Ok(part) = serde_json::from_str::<Part>(raw) else {
            out.stats.malformed += 1;
            continue;
        };
        match part.kind.as_str() {
            "text" => {
                let into = if part.synthetic { &mut injected } else { &mut text };
                if !into.is_empty() {
                    into.push('\n');
                }
                into.push_str(part.text.as_deref().unwrap_or_default());
            }
            "tool" => {
                let state = part.state;
                let input = state.as_ref().and_then(|s| s.input.clone()).unwrap_or(Value::Null);
                let input = match serde_json::to_string(&input) {
                    Ok(json) if json.len() > model::MAX_TOOL_INPUT => model::tool_input(&json),
                    _ => input,
                };
                calls.push(ToolCall {
                    id: part.call_id.clone(),
                    name: part.tool.unwrap_or_default(),
                    input,
                });
                if let Some(s) = state {
                    match s.status.as_deref() {
                        Some("completed") => results.push((part.call_id, s.output.unwrap_or_default(), false)),
                        Some("error") => results.push((part.call_id, s.error.unwrap_or_default(), true)),
                        _ => {}
                    }
                }
            }
            kind if QUIET_PARTS.contains(&kind) => {}
            _ => out.stats.unknown += 1,
        }
    }
    let at = data.time.created;
    let model_name = data.model_id.clone().filter(|_| role == Role::Assistant);
    let usage = data.tokens.as_ref().map(|t| Usage {
        input: t.input,
        // Reasoning is billed as output.
        output: t.output + t.reasoning,
        cache_read: t.cache.read,
        cache_write: t.cache.write,
    });
    if !injected.is_empty() {
        let mut m = Message::new(Role::System, injected, offset);
        m.at_ms = at;
        out.messages.push(m);
    }
    if !text.is_empty() || !calls.is_empty() {
        let mut m = Message::new(role, text, offset);
        m.tool_calls = calls;
        m.usage = usage.filter(|u| !u.is_zero());
        m.model = model_name.clone();
        m.at_ms = at;
        m.uuid = Some(id.to_string());
        out.messages.push(m);
    }
    for (call, output, is_error) in results {
        let mut m = Message::new(Role::Tool, output, offset);
        m.tool_result = Some(ToolResult {
            tool_use_id: call,
            is_error,
            agent_id: None,
        });
        m.at_ms = at;
        out.messages.push(m);
    }
    if model_name.is_some() {
        out.model = model_name;
    }
    usage
}

/// `len:mtime` of the database and its write-ahead log: unchanged means
/// nothing new was written (a write lands in the log first).
pub fn signature(db: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let main = std::fs::metadata(db).ok()?;
    let wal = std::fs::metadata(PathBuf::from(format!("{}-wal", db.display()))).ok();
    let part = |m: &std::fs::Metadata| format!("{}:{}:{}", m.len(), m.mtime(), m.mtime_nsec());
    Some(format!(
        "{}/{}",
        part(&main),
        wal.as_ref().map(part).unwrap_or_default()
    ))
}

/// Opens opencode's database for reading only, waiting a little while
/// opencode holds a write lock.
pub fn open(db: &Path) -> rusqlite::Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let conn =
        rusqlite::Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    conn.busy_timeout(std::time::Duration::from_millis(500))?;
    Ok(conn)
}

/// Whether `db` holds the session `id`.
pub fn has_session(db: &Path, id: &str) -> bool {
    db.is_file()
        && open(db)
            .and_then(|c| {
                c.query_row("SELECT COUNT(*) FROM session WHERE id = ?1", [id], |r| {
                    r.get::<_, i64>(0)
                })
            })
            .is_ok_and(|n| n > 0)
}

/// At most this many messages are read in one step (a long session is read
/// over several).
pub const STEP_MESSAGES: usize = 500;

/// The messages of `session` after the first `skip`, at most `limit`, with
/// their parts, and whether more follow.
pub fn read_rows(
    conn: &rusqlite::Connection,
    session: &str,
    skip: usize,
    limit: usize,
) -> rusqlite::Result<(Vec<StoredMessage>, bool)> {
    let mut messages = conn
        .prepare("SELECT id, data FROM message WHERE session_id = ?1 ORDER BY time_created, id LIMIT ?2 OFFSET ?3")?;
    let mut parts = conn.prepare("SELECT data FROM part WHERE message_id = ?1 ORDER BY id")?;
    let mut rows: Vec<StoredMessage> = messages
        .query_map(rusqlite::params![session, (limit + 1) as i64, skip as i64], |r| {
            Ok(StoredMessage {
                id: r.get(0)?,
                data: r.get(1)?,
                parts: Vec::new(),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let more = rows.len() > limit;
    rows.truncate(limit);
    for row in &mut rows {
        row.parts = parts
            .query_map([&row.id], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
    }
    Ok((rows, more))
}

/// Reads what is new of a session: the rows after `records_done`, parsed
/// (`finished`: the session is over, nothing is provisional), and whether
/// more rows follow. A step that stops at its limit reads its rows for good.
pub fn read_session(
    db: &Path,
    session: &str,
    records_done: usize,
    finished: bool,
) -> rusqlite::Result<(OpencodeRead, bool)> {
    let conn = open(db)?;
    let (rows, more) = read_rows(&conn, session, records_done, STEP_MESSAGES)?;
    let mut read = parse(&rows, records_done, more || finished);
    read.batch.session_id = Some(session.to_string());
    Ok((read, more))
}

/// Every message of a recorded session (tests, one-off imports): the rows
/// of a fixture written one JSON object a line, `{"table": "message" |
/// "part", "id", "message_id", "data"}`, as the database holds them.
pub fn parse_recording(bytes: &[u8]) -> (Vec<StoredMessage>, ReadStats) {
    let mut rows: Vec<StoredMessage> = Vec::new();
    let mut stats = ReadStats::default();
    for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        stats.lines += 1;
        let Ok(row) = serde_json::from_slice::<Value>(line) else {
            stats.malformed += 1;
            continue;
        };
        let data = row["data"].to_string();
        match (row["table"].as_str(), row["id"].as_str()) {
            (Some("message"), Some(id)) => rows.push(StoredMessage {
                id: id.to_string(),
                data,
                parts: Vec::new(),
            }),
            (Some("part"), Some(_)) => match rows.iter_mut().rfind(|m| row["message_id"] == m.id.as_str()) {
                Some(m) => m.parts.push(data),
                None => stats.unknown += 1,
            },
            _ => stats.unknown += 1,
        }
    }
    (rows, stats)
}

#[cfg(test)]
#[path = "opencode_tests.rs"]
pub(crate) mod tests;
