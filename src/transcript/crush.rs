//! Crush sessions, kept in SQLite: `<project>/.crush/crush.db` (the
//! closest `.crush` from the cwd up to the git root, else the cwd's;
//! `--data-dir` names another). Read from Crush's own migrations and
//! queries (its source, at the commit of 2026-08-21 mirrored here) — **not
//! from a recording**: its npm package downloads its binary from GitHub at
//! install time, which this machine cannot reach, so no real Crush has
//! written these rows here.
//!
//! - `sessions (id, parent_session_id, title, message_count, prompt_tokens,
//!   completion_tokens, cost, created_at, updated_at)`: a title or task
//!   session names its parent; tokens are kept per session only;
//! - `messages (id, session_id, role: user|assistant|tool|system, parts,
//!   model, provider, created_at, updated_at, finished_at,
//!   is_summary_message)`, times in seconds; `parts` is a JSON list of
//!   `{type, data}`: `text {text}`, `reasoning {thinking}`, `tool_call {id,
//!   name, input (JSON text), finished}`, `tool_result {tool_call_id, name,
//!   content, is_error}`, `finish {reason, time}`, `image_url`, `binary`,
//!   `shell_command`. A message is updated in place as it streams.
//!
//! As for opencode: a source is `<database>#<session id>`, messages are
//! read in `(created_at, rowid)` order by index, and a message is read for
//! good once another follows it or it is finished. The session's tokens
//! are its row's totals: each read adds what they grew by since the last
//! (kept in the source's state).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::Batch;
use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};

/// The name of one session's transcript in `db`.
pub fn source_key(db: &Path, session: &str) -> PathBuf {
    PathBuf::from(format!("{}#{session}", db.display()))
}

/// The database and session a source's name says, if it is a Crush one.
pub fn split_source(path: &Path) -> Option<(PathBuf, String)> {
    let text = path.to_str()?;
    let (db, session) = text.rsplit_once('#')?;
    let plausible = !session.is_empty() && !session.contains('/') && db.ends_with("/crush.db");
    plausible.then(|| (PathBuf::from(db), session.to_string()))
}

/// A message row as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredMessage {
    pub role: String,
    pub parts: String,
    pub model: Option<String>,
    /// Seconds since the epoch.
    pub created_at: i64,
    pub finished: bool,
}

#[derive(Deserialize)]
struct Part {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    data: Value,
}

/// What a read of a session produced.
#[derive(Debug, Default)]
pub struct CrushRead {
    pub batch: Batch,
    /// Messages now read for good; the next read starts after them.
    pub records_done: usize,
}

/// Reads the messages of a session after the first `records_done` (the
/// rows given start there). Unless `finished`, the last message stays
/// provisional until Crush marks it finished.
pub fn parse(rows: &[StoredMessage], records_done: usize, finished: bool) -> CrushRead {
    let mut read = CrushRead {
        records_done,
        ..CrushRead::default()
    };
    let out = &mut read.batch;
    for (i, row) in rows.iter().enumerate() {
        let index = records_done + i;
        out.stats.lines += 1;
        let before = out.messages.len();
        convert(row, index as u64, out);
        if i + 1 < rows.len() || finished || row.finished {
            read.records_done = index + 1;
        } else {
            out.provisional = out.messages.len() - before;
        }
    }
    read
}

/// Appends one message's messages: its text and tool calls, or each tool
/// result it carries.
fn convert(row: &StoredMessage, offset: u64, out: &mut Batch) {
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
    let Ok(parts) = serde_json::from_str::<Vec<Part>>(&row.parts) else {
        out.stats.malformed += 1;
        return;
    };
    let at = Some(row.created_at.saturating_mul(1000));
    let (mut text, mut calls) = (String::new(), Vec::new());
    for part in parts {
        let data = &part.data;
        match part.kind.as_str() {
            "text" => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(data["text"].as_str().unwrap_or_default());
            }
            "tool_call" => calls.push(ToolCall {
                id: data["id"].as_str().map(str::to_string),
                name: data["name"].as_str().unwrap_or_default().to_string(),
                input: model::tool_input(data["input"].as_str().unwrap_or("null")),
            }),
            "tool_result" => {
                let mut m = Message::new(
                    Role::Tool,
                    data["content"].as_str().unwrap_or_default().to_string(),
                    offset,
                );
                m.tool_result = Some(ToolResult {
                    tool_use_id: data["tool_call_id"].as_str().map(str::to_string),
                    is_error: data["is_error"].as_bool().unwrap_or(false),
                    agent_id: None,
                });
                m.at_ms = at;
                out.messages.push(m);
            }
            "reasoning" | "finish" | "image_url" | "binary" | "shell_command" => {}
            _ => out.stats.unknown += 1,
        }
    }
    if role != Role::Tool && (!text.is_empty() || !calls.is_empty()) {
        let mut m = Message::new(role, text, offset);
        m.tool_calls = calls;
        m.model = row.model.clone().filter(|_| role == Role::Assistant);
        m.at_ms = at;
        if m.model.is_some() {
            out.model = m.model.clone();
        }
        out.messages.push(m);
    }
}

/// Tokens of a session as its row keeps them (Crush records no cached
/// share apart).
pub fn session_usage(prompt: i64, completion: i64) -> Usage {
    Usage {
        input: prompt,
        output: completion,
        cache_read: 0,
        cache_write: 0,
    }
}

/// At most this many messages are read in one step.
pub const STEP_MESSAGES: usize = 500;

/// Reads what is new of a session: the rows after `records_done`, parsed
/// (`finished`: nothing provisional), whether more follow, and the
/// session's token totals now.
pub fn read_session(
    db: &Path,
    session: &str,
    records_done: usize,
    finished: bool,
) -> rusqlite::Result<(CrushRead, bool, Usage)> {
    let conn = super::opencode::open(db)?;
    let mut stmt = conn.prepare(
        "SELECT role, parts, model, created_at, finished_at IS NOT NULL FROM messages
         WHERE session_id = ?1 ORDER BY created_at, rowid LIMIT ?2 OFFSET ?3",
    )?;
    let mut rows: Vec<StoredMessage> = stmt
        .query_map(
            rusqlite::params![session, (STEP_MESSAGES + 1) as i64, records_done as i64],
            |r| {
                Ok(StoredMessage {
                    role: r.get(0)?,
                    parts: r.get(1)?,
                    model: r.get(2)?,
                    created_at: r.get(3)?,
                    finished: r.get(4)?,
                })
            },
        )?
        .collect::<rusqlite::Result<_>>()?;
    let more = rows.len() > STEP_MESSAGES;
    rows.truncate(STEP_MESSAGES);
    let totals = conn
        .query_row(
            "SELECT prompt_tokens, completion_tokens FROM sessions WHERE id = ?1",
            [session],
            |r| Ok(session_usage(r.get(0)?, r.get(1)?)),
        )
        .unwrap_or_default();
    let mut read = parse(&rows, records_done, more || finished);
    read.batch.session_id = Some(session.to_string());
    Ok((read, more, totals))
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
#[path = "crush_tests.rs"]
pub(crate) mod tests;
