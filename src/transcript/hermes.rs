//! Hermes Agent sessions, kept only in SQLite: `$HERMES_HOME/state.db`
//! (`~/.hermes/state.db`), written in WAL mode; its `sessions/` folder
//! stays empty in the CLI. Read from rows a real Hermes Agent 0.19.0
//! wrote against a mock (/work/research/hermes.md):
//!
//! - `sessions (id YYYYMMDD_HHMMSS_xxxxxx, source cli, cwd, model,
//!   started_at, ended_at, parent_session_id, input_tokens, output_tokens,
//!   cache_read_tokens, cache_write_tokens, …)`, times in seconds (REAL);
//!   the row is written at the session's first message, not at its start;
//!   tokens are kept per session only;
//! - `messages (id INTEGER, session_id, role user|assistant|tool|system,
//!   content, tool_call_id, tool_calls, tool_name, timestamp, …)`: one row
//!   per message, inserted whole; `tool_calls` is the OpenAI list
//!   (`[{id, type, function: {name, arguments}}]`, the arguments JSON
//!   text), a tool's row its output (JSON text) and the call it answers.
//!
//! As for Crush: a source is `<database>#<session id>`, rows are read in
//! `id` order by index, and the session's tokens are its row's totals.
//! Rows are never rewritten, so each is read for good at once.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Batch;
use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};

/// The file name of its database in its home.
pub const DATABASE: &str = "state.db";

/// The name of one session's transcript in `db`.
pub fn source_key(db: &Path, session: &str) -> PathBuf {
    PathBuf::from(format!("{}#{session}", db.display()))
}

/// The database and session a source's name says, if it is a Hermes one:
/// a `state.db` and an id shaped as Hermes makes them.
pub fn split_source(path: &Path) -> Option<(PathBuf, String)> {
    let text = path.to_str()?;
    let (db, session) = text.rsplit_once('#')?;
    let plausible = is_session_id(session) && db.ends_with(&format!("/{DATABASE}"));
    plausible.then(|| (PathBuf::from(db), session.to_string()))
}

/// `20261206_071149_9cd878`: its start's date and time, then hex.
pub fn is_session_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split('_').collect();
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    parts.len() == 3
        && digits(parts[0], 8)
        && digits(parts[1], 6)
        && !parts[2].is_empty()
        && parts[2].bytes().all(|b| b.is_ascii_hexdigit())
}

/// A message row as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredMessage {
    pub role: String,
    pub content: Option<String>,
    pub tool_call_id: Option<String>,
    /// The OpenAI list of calls, as JSON text.
    pub tool_calls: Option<String>,
    /// Seconds since the epoch.
    pub timestamp: f64,
}

/// Reads rows of a session (the first of them the record `done`): each a
/// message, the assistant's named with the session's `model`.
pub fn parse(rows: &[StoredMessage], done: usize, model: Option<&str>) -> Batch {
    let mut out = Batch::default();
    for (i, row) in rows.iter().enumerate() {
        out.stats.lines += 1;
        convert(row, (done + i) as u64, model, &mut out);
    }
    out
}

fn convert(row: &StoredMessage, offset: u64, model: Option<&str>, out: &mut Batch) {
    let role = match row.role.as_str() {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        "system" => Role::System,
        _ => {
            out.stats.unknown += 1;
            return;
        }
    };
    let mut m = Message::new(role, row.content.clone().unwrap_or_default(), offset);
    m.at_ms = Some((row.timestamp * 1000.0) as i64);
    match role {
        Role::Tool => {
            m.tool_result = Some(ToolResult {
                tool_use_id: row.tool_call_id.clone(),
                is_error: is_error(row.content.as_deref()),
                agent_id: None,
            })
        }
        Role::Assistant => {
            match row.tool_calls.as_deref().map(serde_json::from_str::<Vec<Value>>) {
                Some(Ok(calls)) => m.tool_calls = calls.iter().map(tool_call).collect(),
                Some(Err(_)) => out.stats.malformed += 1,
                None => {}
            }
            m.model = model.map(str::to_string);
            out.model = m.model.clone().or(out.model.take());
        }
        Role::User | Role::System => {}
    }
    if m.text.is_empty() && m.tool_calls.is_empty() && m.tool_result.is_none() {
        return;
    }
    out.messages.push(m);
}

fn tool_call(call: &Value) -> ToolCall {
    let function = &call["function"];
    ToolCall {
        id: call["id"].as_str().map(str::to_string),
        name: function["name"].as_str().unwrap_or_default().to_string(),
        input: model::tool_input(function["arguments"].as_str().unwrap_or("null")),
    }
}

/// Whether a tool's output says it failed: its terminal tool's JSON names
/// an error, or a command refused (`BLOCKED: …`).
fn is_error(content: Option<&str>) -> bool {
    let Some(text) = content else { return false };
    match serde_json::from_str::<Value>(text) {
        Ok(v) => !v["error"].is_null() || v["status"] == "blocked",
        Err(_) => text.starts_with("BLOCKED"),
    }
}

/// At most this many messages are read in one step.
pub const STEP_MESSAGES: usize = 500;

/// Reads what is new of a session: the messages after `records_done`,
/// how many are now read, whether more follow, and the session's token
/// totals now.
pub fn read_session(db: &Path, session: &str, records_done: usize) -> rusqlite::Result<(Batch, usize, bool, Usage)> {
    let conn = super::opencode::open(db)?;
    let mut stmt = conn.prepare(
        "SELECT role, content, tool_call_id, tool_calls, timestamp FROM messages
         WHERE session_id = ?1 ORDER BY id LIMIT ?2 OFFSET ?3",
    )?;
    let mut rows: Vec<StoredMessage> = stmt
        .query_map(
            rusqlite::params![session, (STEP_MESSAGES + 1) as i64, records_done as i64],
            |r| {
                Ok(StoredMessage {
                    role: r.get(0)?,
                    content: r.get(1)?,
                    tool_call_id: r.get(2)?,
                    tool_calls: r.get(3)?,
                    timestamp: r.get(4)?,
                })
            },
        )?
        .collect::<rusqlite::Result<_>>()?;
    let more = rows.len() > STEP_MESSAGES;
    rows.truncate(STEP_MESSAGES);
    let (model, totals) = conn
        .query_row(
            "SELECT model, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens
             FROM sessions WHERE id = ?1",
            [session],
            |r| {
                let usage = Usage {
                    input: r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                    output: r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                    cache_read: r.get::<_, Option<i64>>(3)?.unwrap_or(0),
                    cache_write: r.get::<_, Option<i64>>(4)?.unwrap_or(0),
                };
                Ok((r.get::<_, Option<String>>(0)?, usage))
            },
        )
        .unwrap_or_default();
    let mut batch = parse(&rows, records_done, model.as_deref());
    batch.session_id = Some(session.to_string());
    Ok((batch, records_done + rows.len(), more, totals))
}

/// The newest top-level session of `cwd` in `db` that began at or after
/// `since` (seconds since the epoch).
pub fn newest_session(db: &Path, cwd: &Path, since: f64) -> Option<String> {
    let conn = super::opencode::open(db).ok()?;
    conn.query_row(
        "SELECT id FROM sessions WHERE cwd = ?1 AND parent_session_id IS NULL AND started_at >= ?2
         ORDER BY started_at DESC LIMIT 1",
        rusqlite::params![cwd.to_string_lossy(), since],
        |r| r.get(0),
    )
    .ok()
}

/// Whether `db` holds the session `id`.
pub fn has_session(db: &Path, id: &str) -> bool {
    db.is_file()
        && super::opencode::open(db)
            .and_then(|c| {
                c.query_row("SELECT COUNT(*) FROM sessions WHERE id = ?1", [id], |r| {
                    r.get::<_, i64>(0)
                })
            })
            .is_ok_and(|n| n > 0)
}

#[cfg(test)]
#[path = "hermes_tests.rs"]
pub(crate) mod tests;
