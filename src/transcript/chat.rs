//! One reader for the chat-style JSONL family: Copilot, Droid, Qwen Code
//! and pi each write one JSON record a line, appended once, with a `type`,
//! an id, its parent's id and a `timestamp`. They differ in where the
//! session's id is, which kinds of line are bookkeeping, where tokens are
//! counted and how a message's content is laid out. A `ChatFormat` says
//! the first three as data; the last is the format's own `message`
//! function (its module), which may use the part readers here.
//!
//! The reader holds one thing between lines: the tokens of a usage record
//! not yet given to its reply (Copilot writes them just before it).

use serde_json::Value;

use super::model::{self, Message, ToolCall, Usage};
use super::{Batch, LineReader};

/// What the shared reader knows of one format.
pub struct ChatFormat {
    /// The key naming a line's kind (`type`; Letta's lines are bare
    /// messages, known by their `role`).
    pub kind: &'static str,
    /// The keys of a line's own id and of its parent's.
    pub id: &'static str,
    pub parent: &'static str,
    /// The line that opens a session and says its id (and model).
    pub header: Option<Header>,
    /// The key every line names its session by (the batch keeps the first).
    pub session_key: Option<&'static str>,
    /// Whether messages carry their session's id: the line's own when
    /// `session_key` is set, else the header's.
    pub stamp_session: bool,
    /// The line counting the tokens of the reply that follows it.
    pub usage_record: Option<UsageRecord>,
    /// Kinds of line read as nothing; one ending in `.` is a namespace.
    pub ignored: &'static [&'static str],
    /// Reads a line of any other kind: its `type`, the line, its offset.
    pub message: fn(&str, &Value, u64) -> Read,
}

/// A session's opening line.
pub struct Header {
    pub kind: &'static str,
    /// JSON pointers to the session's id and to the model it starts with.
    pub id: &'static str,
    pub model: Option<&'static str>,
}

/// A line of tokens for the next reply.
pub struct UsageRecord {
    pub kind: &'static str,
    /// A JSON pointer to the tokens, and how they read.
    pub at: &'static str,
    pub tokens: fn(&Value) -> Usage,
}

/// What a format makes of one line.
pub enum Read {
    Turn(Turn),
    /// A line that holds no message (it stays uncounted).
    Nothing,
    /// A kind the format does not know (unless `ignored` names it).
    Unknown,
    Malformed,
}

/// The messages of one line, with what the batch learns from it.
#[derive(Default)]
pub struct Turn {
    pub messages: Vec<Message>,
    /// The model that answered, for the batch.
    pub model: Option<String>,
    /// The tokens this line counts, put on its first message.
    pub usage: Option<Usage>,
    /// Whether the first message takes the last usage record's tokens.
    pub takes_pending: bool,
}

impl Turn {
    pub fn of(messages: Vec<Message>) -> Read {
        Read::Turn(Turn {
            messages,
            ..Turn::default()
        })
    }

    pub fn one(message: Message) -> Read {
        Turn::of(vec![message])
    }
}

/// The reader of a chat-style JSONL transcript, configured by its format.
pub struct ChatReader {
    format: &'static ChatFormat,
    /// The last usage record's tokens, for the reply that follows it.
    pending: Option<Usage>,
}

impl ChatReader {
    pub fn new(format: &'static ChatFormat) -> ChatReader {
        ChatReader { format, pending: None }
    }

    /// A session's header or a usage record: read into the batch, `true`.
    fn bookkeeping(&mut self, kind: &str, line: &Value, out: &mut Batch) -> bool {
        let f = self.format;
        if let Some(h) = f.header.as_ref().filter(|h| h.kind == kind) {
            out.session_id = pointer_str(line, h.id);
            if let Some(model) = h.model.and_then(|m| pointer_str(line, m)) {
                out.model = Some(model);
            }
            return true;
        }
        if let Some(u) = f.usage_record.as_ref().filter(|u| u.kind == kind) {
            let usage = (u.tokens)(line.pointer(u.at).unwrap_or(&Value::Null));
            if !usage.is_zero() {
                out.usage.add(&usage);
                self.pending = Some(usage);
            }
            return true;
        }
        false
    }

    fn is_ignored(&self, kind: &str) -> bool {
        let namespace = |i: &str| i.ends_with('.') && kind.starts_with(i);
        self.format.ignored.iter().any(|i| *i == kind || namespace(i))
    }
}

impl LineReader for ChatReader {
    fn line(&mut self, line: &[u8], offset: u64, out: &mut Batch) {
        let Ok(record @ Value::Object(_)) = serde_json::from_slice::<Value>(line) else {
            out.stats.malformed += 1;
            return;
        };
        let Some(kind) = record.get(self.format.kind).and_then(Value::as_str) else {
            out.stats.malformed += 1;
            return;
        };
        let f = self.format;
        let line_session = f.session_key.and_then(|k| record[k].as_str()).map(str::to_string);
        if f.session_key.is_some() && out.session_id.is_none() {
            out.session_id.clone_from(&line_session);
        }
        if self.bookkeeping(kind, &record, out) {
            return;
        }
        let mut turn = match (f.message)(kind, &record, offset) {
            Read::Turn(turn) => turn,
            Read::Nothing => return,
            Read::Unknown if self.is_ignored(kind) => return,
            Read::Unknown => {
                out.stats.unknown += 1;
                return;
            }
            Read::Malformed => {
                out.stats.malformed += 1;
                return;
            }
        };
        if turn.model.is_some() {
            out.model = turn.model.take();
        }
        let pending = if turn.takes_pending { self.pending.take() } else { None };
        let usage = turn.usage.filter(|u| !u.is_zero());
        if let Some(u) = &usage {
            out.usage.add(u);
        }
        if let Some(first) = turn.messages.first_mut() {
            first.usage = usage.or(pending);
        }
        let at = record["timestamp"].as_str().and_then(model::parse_time);
        let session = if f.session_key.is_some() {
            line_session
        } else {
            out.session_id.clone()
        };
        for mut m in turn.messages {
            if m.text.is_empty() && m.tool_calls.is_empty() && m.tool_result.is_none() {
                continue;
            }
            m.at_ms = at.or(m.at_ms);
            m.uuid = record[f.id].as_str().map(str::to_string);
            m.parent_uuid = record[f.parent].as_str().map(str::to_string);
            if f.stamp_session {
                m.session_id.clone_from(&session);
            }
            out.messages.push(m);
        }
    }

    fn state(&self) -> Value {
        self.pending
            .map(|u| serde_json::to_value(u).unwrap_or_default())
            .unwrap_or(Value::Null)
    }

    fn restore(&mut self, state: &Value) {
        self.pending = serde_json::from_value(state.clone()).ok();
    }
}

/// The string at a JSON pointer.
pub fn pointer_str(v: &Value, pointer: &str) -> Option<String> {
    v.pointer(pointer).and_then(Value::as_str).map(str::to_string)
}

/// The text of a `content`: a string, or its non-empty `text` parts (not
/// thinking, images or tool calls) one a line.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The tool calls among a `content`'s parts: those of type `kind`, each
/// with its `id`, `name` and arguments under `input` (cut when long).
pub fn typed_calls(content: &Value, kind: &str, input: &str) -> Vec<ToolCall> {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["type"] == kind)
        .map(|p| ToolCall {
            id: p["id"].as_str().map(str::to_string),
            name: p["name"].as_str().unwrap_or_default().to_string(),
            input: model::tool_input(&p.get(input).unwrap_or(&Value::Null).to_string()),
        })
        .collect()
}
