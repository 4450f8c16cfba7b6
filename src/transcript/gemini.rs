//! Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.jsonl`).
//!
//! As Gemini CLI 0.61.0 writes them (recorded against a mock model:
//! `tests/fixtures/transcripts/gemini/`), one JSON record a line, appended:
//!
//! - first, the session: `{sessionId, projectHash, startTime, lastUpdated,
//!   kind: "main"}`;
//! - a message: `{id, timestamp, type: user|gemini|info|error|warning,
//!   content}` (a string or a part list), a `gemini` one with `model`,
//!   `tokens {input, output, cached, thoughts, tool, total}`, `thoughts` and
//!   `toolCalls [{id, name, args, status, result: [{functionResponse}]}]`.
//!   A message that changes (its tokens arrive, its tool calls run) is
//!   written again whole under the same `id`; only the newest message ever
//!   changes. The function responses are also written as a `user` message of
//!   their own (what was sent back to the model);
//! - `{"$set": {…}}`: metadata changes (`lastUpdated`, `summary`); a `$set`
//!   of `messages` replaces the whole list — a new session's hidden
//!   `<session_context>` message, and on resume the whole history again;
//! - `{"$rewindTo": id}`: `/rewind` dropped the messages from `id` on.
//!
//! So the newest message stays provisional until another message follows
//! it, and a message's tokens are counted once, the first time the record
//! carries them. Messages already read stay read: a rewind or a `$set` of
//! `messages` that drops them is not undone here.
//!
//! Older versions wrote one JSON document, rewritten whole on every change:
//! `{sessionId, projectHash, startTime, lastUpdated, messages: [the same
//! message records]}` (0.61 still reads these and turns them into `.jsonl`
//! on resume); `parse` reads that, and the older checkpoint shape, a bare
//! array of `{role: user|model, parts}`. There, "offsets" are record
//! indexes.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};
use super::{Batch, LineReader};

/// Whether a chat file is a whole JSON document (older versions) rather
/// than JSONL.
pub fn is_document(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
}

#[derive(Deserialize, Default)]
struct Record {
    #[serde(rename = "type")]
    kind: Option<String>,
    role: Option<String>,
    content: Option<Value>,
    parts: Option<Value>,
    timestamp: Option<String>,
    id: Option<String>,
    model: Option<String>,
    tokens: Option<Tokens>,
    #[serde(rename = "toolCalls", default)]
    tool_calls: Vec<CallRecord>,
}

#[derive(Deserialize)]
struct Tokens {
    #[serde(default)]
    input: i64,
    #[serde(default)]
    output: i64,
    #[serde(default)]
    cached: i64,
    #[serde(default)]
    thoughts: i64,
}

impl Tokens {
    /// Gemini's `input` (`promptTokenCount`) includes the cached part.
    fn usage(&self) -> Usage {
        Usage {
            input: self.input - self.cached.min(self.input),
            output: self.output + self.thoughts,
            cache_read: self.cached,
            cache_write: 0,
        }
    }
}

#[derive(Deserialize)]
struct CallRecord {
    id: Option<String>,
    name: Option<String>,
    #[serde(default)]
    args: Value,
    result: Option<Value>,
    status: Option<String>,
    #[serde(rename = "resultDisplay")]
    result_display: Option<Value>,
}

/// The reader of a `.jsonl` chat.
#[derive(Debug, Default)]
pub struct GeminiReader {
    /// The newest message record (it may still be written again) and the
    /// offset of the line to read again to see it whole.
    pending: Option<(u64, Value)>,
    /// The id of the last message read for good: a `$set` of `messages`
    /// adds only what follows it.
    last_id: Option<String>,
    /// The message whose tokens were counted last (only the newest message
    /// changes, so one id is enough to count each once).
    counted: Option<String>,
}

impl LineReader for GeminiReader {
    fn line(&mut self, line: &[u8], offset: u64, out: &mut Batch) {
        let Ok(Value::Object(mut record)) = serde_json::from_slice::<Value>(line) else {
            out.stats.malformed += 1;
            return;
        };
        if let Some(Value::String(id)) = record.get("id") {
            let id = id.clone();
            if self.pending.as_ref().is_some_and(|(_, p)| p["id"] == id.as_str()) {
                // The same message again, changed: it replaces the one held
                // (whose line is read again on a resumed read, so the held
                // offset stays).
                let start = self.pending.as_ref().map_or(offset, |(o, _)| *o);
                self.pending = Some((start, Value::Object(record)));
            } else {
                self.commit(out);
                self.pending = Some((offset, Value::Object(record)));
            }
            return;
        }
        if let Some(Value::String(to)) = record.get("$rewindTo") {
            if self.pending.as_ref().is_some_and(|(_, p)| p["id"] == to.as_str()) {
                self.pending = None;
            }
            return;
        }
        let list = if let Some(set) = record.get_mut("$set") {
            set.as_object_mut().and_then(|set| set.remove("messages"))
        } else if let Some(Value::String(id)) = record.get("sessionId") {
            // The session's first line (it may carry messages too).
            out.session_id = Some(id.clone());
            record.remove("messages")
        } else {
            out.stats.unknown += 1;
            return;
        };
        if let Some(Value::Array(messages)) = list {
            self.replace_all(messages, offset, out);
        }
    }

    fn pause(&mut self, out: &mut Batch) -> Option<u64> {
        let (start, record) = self.pending.take()?;
        let before = out.messages.len();
        self.messages(&record, start, out);
        out.provisional = out.messages.len() - before;
        Some(start)
    }

    fn state(&self) -> Value {
        serde_json::json!({ "last_id": self.last_id, "counted": self.counted })
    }

    fn restore(&mut self, state: &Value) {
        self.pending = None;
        self.last_id = state["last_id"].as_str().map(str::to_string);
        self.counted = state["counted"].as_str().map(str::to_string);
    }
}

impl GeminiReader {
    /// The held message is final: another followed it.
    fn commit(&mut self, out: &mut Batch) {
        if let Some((start, record)) = self.pending.take() {
            self.messages(&record, start, out);
            self.last_id = record["id"].as_str().map(str::to_string);
        }
    }

    /// A `$set` of the whole message list: the messages after the last one
    /// read are new (all of them when none was read yet; none when the
    /// list no longer has it — the history was rewritten, not extended).
    fn replace_all(&mut self, messages: Vec<Value>, offset: u64, out: &mut Batch) {
        self.commit(out);
        let from = match &self.last_id {
            None => 0,
            Some(last) => match messages.iter().position(|m| m["id"] == last.as_str()) {
                Some(i) => i + 1,
                None => messages.len(),
            },
        };
        for m in messages.into_iter().skip(from) {
            // The last may still be written again, as any newest message.
            self.commit(out);
            self.pending = Some((offset, m));
        }
    }

    /// Appends one message record's messages, counting its tokens the first
    /// time they appear.
    fn messages(&mut self, record: &Value, offset: u64, out: &mut Batch) {
        let Ok(r) = Record::deserialize(record) else {
            out.stats.malformed += 1;
            return;
        };
        let id = r.id.clone();
        let usage = convert(r, offset, out);
        if usage.is_some() && self.counted != id {
            out.usage.add(&usage.unwrap_or_default());
            self.counted = id;
        }
    }
}

/// What one read of a whole-document chat produced.
#[derive(Debug, Default)]
pub struct GeminiRead {
    pub batch: Batch,
    /// Records now read for good; the next read starts after them.
    pub records_done: usize,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Document {
    Conversation {
        #[serde(rename = "sessionId")]
        session_id: Option<String>,
        messages: Vec<Value>,
    },
    Checkpoint(Vec<Value>),
}

/// Reads the records of a whole-document chat (older versions) after the
/// first `records_done`. Unless `finished`, the last record's messages are
/// provisional.
pub fn parse(doc: &[u8], records_done: usize, finished: bool) -> GeminiRead {
    let mut read = GeminiRead {
        records_done,
        ..GeminiRead::default()
    };
    let out = &mut read.batch;
    out.stats.lines = 1;
    let (session_id, records) = match serde_json::from_slice::<Document>(doc) {
        Ok(Document::Conversation { session_id, messages }) => (session_id, messages),
        Ok(Document::Checkpoint(records)) => (None, records),
        Err(_) => {
            // Caught mid-rewrite, or not a chat at all: try again next time.
            out.stats.malformed = 1;
            return read;
        }
    };
    out.session_id = session_id;
    let total = records.len();
    for (i, value) in records.into_iter().enumerate().skip(records_done) {
        let last = i + 1 == total && !finished;
        let before = out.messages.len();
        let Ok(r) = serde_json::from_value::<Record>(value) else {
            out.stats.malformed += 1;
            continue;
        };
        let usage = convert(r, i as u64, out);
        if last {
            out.provisional = out.messages.len() - before;
        } else {
            out.usage.add(&usage.unwrap_or_default());
            read.records_done = i + 1;
        }
    }
    read
}

/// Appends one record's messages; returns its tokens, if it has any.
fn convert(r: Record, offset: u64, out: &mut Batch) -> Option<Usage> {
    let kind = r.kind.as_deref().or(r.role.as_deref()).unwrap_or("");
    let mut role = match kind {
        "user" => Role::User,
        "gemini" | "model" | "assistant" => Role::Assistant,
        "info" | "error" | "warning" | "system" => Role::System,
        _ => {
            out.stats.unknown += 1;
            return None;
        }
    };
    let at = r.timestamp.as_deref().and_then(model::parse_time);
    let mut parts = Parts::default();
    for content in [&r.content, &r.parts].into_iter().flatten() {
        parts.read(content);
    }
    // A `user` record of only function responses repeats the results of the
    // calls before it (a JSONL chat has them on the call's record too).
    let echoes_results = r.kind.as_deref() == Some("user") && !parts.results.is_empty() && parts.text.is_empty();
    if echoes_results {
        return None;
    }
    // Context the CLI itself sent as a user turn (Gemini skips these when
    // it resumes, too).
    if role == Role::User
        && ["<session_context>", "<hook_context>"]
            .iter()
            .any(|p| parts.text.starts_with(p))
    {
        role = Role::System;
    }
    let mut m = Message::new(role, parts.text, offset);
    m.at_ms = at;
    m.uuid = r.id;
    m.model = r.model.clone();
    if r.model.is_some() {
        out.model = r.model;
    }
    let usage = r.tokens.map(|t| t.usage());
    m.usage = usage.filter(|u| !u.is_zero());
    m.tool_calls = parts.calls;
    // The record's own message first, then one `tool` message per result.
    let mut results = Vec::new();
    for c in r.tool_calls {
        m.tool_calls.push(ToolCall {
            id: c.id.clone(),
            name: c.name.unwrap_or_default(),
            input: c.args,
        });
        let text = match (&c.result, &c.result_display) {
            (Some(result), _) if !result.is_null() => {
                let mut p = Parts::default();
                p.read(result);
                let outputs: Vec<String> = p.results.into_iter().map(|(_, t)| t).collect();
                Some(if outputs.is_empty() { p.text } else { outputs.join("\n") })
            }
            (_, Some(Value::String(s))) => Some(s.clone()),
            _ => None,
        };
        if let Some(text) = text {
            let is_error = matches!(c.status.as_deref(), Some("error" | "cancelled"));
            results.push((c.id, text, is_error));
        }
    }
    // Checkpoint-style function responses stand on their own.
    results.extend(parts.results.into_iter().map(|(name, text)| (name, text, false)));
    if !m.text.is_empty() || !m.tool_calls.is_empty() {
        out.messages.push(m);
    }
    for (id, text, is_error) in results {
        let mut t = Message::new(Role::Tool, text, offset);
        t.at_ms = at;
        t.tool_result = Some(ToolResult {
            tool_use_id: id,
            is_error,
            agent_id: None,
        });
        out.messages.push(t);
    }
    usage
}

/// Text, calls and results found in a `PartListUnion`.
#[derive(Default)]
pub(super) struct Parts {
    pub(super) text: String,
    pub(super) calls: Vec<ToolCall>,
    /// (function name, output) of `functionResponse` parts.
    pub(super) results: Vec<(Option<String>, String)>,
}

impl Parts {
    pub(super) fn read(&mut self, v: &Value) {
        match v {
            Value::String(s) => self.push_text(s),
            Value::Array(items) => items.iter().for_each(|i| self.read(i)),
            Value::Object(o) => {
                if let Some(Value::String(t)) = o.get("text") {
                    if o.get("thought") != Some(&Value::Bool(true)) {
                        self.push_text(t);
                    }
                } else if let Some(call) = o.get("functionCall") {
                    self.calls.push(ToolCall {
                        id: call["id"].as_str().map(str::to_string),
                        name: call["name"].as_str().unwrap_or_default().to_string(),
                        input: call.get("args").cloned().unwrap_or(Value::Null),
                    });
                } else if let Some(resp) = o.get("functionResponse") {
                    let r = &resp["response"];
                    let text = match (r.get("output"), r.get("error")) {
                        (Some(Value::String(s)), _) | (_, Some(Value::String(s))) => s.clone(),
                        _ => r.to_string(),
                    };
                    self.results.push((resp["name"].as_str().map(str::to_string), text));
                }
            }
            _ => {}
        }
    }

    fn push_text(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        self.text.push_str(s);
    }
}

#[cfg(test)]
#[path = "gemini_tests.rs"]
mod tests;
