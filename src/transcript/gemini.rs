//! Gemini CLI chats (`~/.gemini/tmp/<project hash>/chats/*.json`).
//!
//! BEST EFFORT: there is no recording of this format in
//! `../shared/reference/`; this follows the documented shape of Gemini
//! CLI's conversation record — one JSON document, rewritten whole on every
//! change:
//!
//! ```json
//! {"sessionId": "…", "messages": [
//!   {"id": "…", "timestamp": "…", "type": "user", "content": "text or [{text}]"},
//!   {"type": "gemini", "content": "…", "model": "gemini-2.5-pro",
//!    "tokens": {"input": 10, "output": 5, "cached": 0},
//!    "toolCalls": [{"id": "…", "name": "…", "args": {…}, "status": "success",
//!                   "result": [{"functionResponse": {"response": {"output": "…"}}}]}]}]}
//! ```
//!
//! and the older checkpoint shape, a bare array of `{role: user|model,
//! parts: [{text} | {functionCall} | {functionResponse}]}`. Because the file
//! is rewritten rather than appended, "offsets" here are record indexes, and
//! the last record stays provisional (its tool results may still be filled
//! in) until another follows it.

use serde::Deserialize;
use serde_json::Value;

use super::Batch;
use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};

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

/// What one read of a Gemini chat produced.
#[derive(Debug, Default)]
pub struct GeminiRead {
    pub batch: Batch,
    /// Records now read for good; the next read starts after them.
    pub records_done: usize,
}

/// Reads the records after the first `records_done`. Unless `finished`, the
/// last record's messages are provisional.
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
        let usage = record(r, i as u64, out);
        if last {
            out.provisional = out.messages.len() - before;
        } else {
            out.usage.add(&usage);
            read.records_done = i + 1;
        }
    }
    read
}

/// Appends one record's messages; returns its tokens.
fn record(r: Record, index: u64, out: &mut Batch) -> Usage {
    let kind = r.kind.as_deref().or(r.role.as_deref()).unwrap_or("");
    let role = match kind {
        "user" => Role::User,
        "gemini" | "model" | "assistant" => Role::Assistant,
        "info" | "error" | "warning" | "system" => Role::System,
        _ => {
            out.stats.unknown += 1;
            return Usage::default();
        }
    };
    let at = r.timestamp.as_deref().and_then(model::parse_time);
    let mut parts = Parts::default();
    for content in [&r.content, &r.parts].into_iter().flatten() {
        parts.read(content);
    }
    let mut m = Message::new(role, parts.text, index);
    m.at_ms = at;
    m.uuid = r.id;
    m.model = r.model.clone();
    if r.model.is_some() {
        out.model = r.model;
    }
    let usage = r
        .tokens
        .map(|t| Usage {
            input: t.input - t.cached,
            output: t.output + t.thoughts,
            cache_read: t.cached,
            cache_write: 0,
        })
        .unwrap_or_default();
    if !usage.is_zero() {
        m.usage = Some(usage);
    }
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
        let mut t = Message::new(Role::Tool, text, index);
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
struct Parts {
    text: String,
    calls: Vec<ToolCall>,
    /// (function name, output) of `functionResponse` parts.
    results: Vec<(Option<String>, String)>,
}

impl Parts {
    fn read(&mut self, v: &Value) {
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
mod tests {
    use std::path::Path;

    use super::*;

    fn chat() -> Vec<u8> {
        std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/transcripts/gemini/session-2026-11-29T08-00-7f3c2b1a.json"),
        )
        .unwrap()
    }

    #[test]
    fn a_chat_reads_into_messages_with_tool_calls_and_results() {
        let read = parse(&chat(), 0, true);
        let b = &read.batch;
        let roles: Vec<&str> = b.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "tool", "system", "assistant"]);
        assert_eq!(b.session_id.as_deref(), Some("7f3c2b1a-0000-4000-8000-000000000001"));
        let calls = &b.messages[1].tool_calls;
        assert_eq!(calls[0].name, "list_directory");
        assert_eq!(calls[0].input["path"], "/home/user/project");
        assert!(b.messages[2].text.contains("narwhal.rs"));
        assert!(!b.messages[2].tool_result.as_ref().unwrap().is_error);
        assert!(b.messages[3].tool_result.as_ref().unwrap().is_error);
        assert_eq!(b.messages[5].text, "Three files, one is narwhal.rs.");
        assert_eq!(b.model.as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(
            b.usage,
            Usage {
                input: 250,
                output: 19,
                cache_read: 20,
                cache_write: 0
            }
        );
        assert_eq!(read.records_done, 4);
    }

    #[test]
    fn the_last_record_stays_provisional_until_another_follows() {
        let read = parse(&chat(), 0, false);
        assert_eq!(read.records_done, 3);
        assert_eq!(read.batch.provisional, 1);
        let again = parse(&chat(), read.records_done, false);
        assert_eq!(again.batch.messages.len(), 1);
        assert_eq!(again.batch.messages[0].text, "Three files, one is narwhal.rs.");
    }

    #[test]
    fn a_half_written_file_is_counted_and_read_later() {
        let doc = chat();
        let read = parse(&doc[..doc.len() / 2], 0, false);
        assert_eq!(read.batch.stats.malformed, 1);
        assert_eq!(read.records_done, 0);
        assert!(read.batch.messages.is_empty());
    }

    #[test]
    fn the_older_checkpoint_shape_reads_too() {
        let doc = br#"[{"role":"user","parts":[{"text":"hi"}]},
            {"role":"model","parts":[{"text":"calling"},{"functionCall":{"name":"ls","args":{"path":"."}}}]},
            {"role":"user","parts":[{"functionResponse":{"name":"ls","response":{"output":"a b"}}}]}]"#;
        let b = parse(doc, 0, true).batch;
        let roles: Vec<&str> = b.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool"]);
        assert_eq!(b.messages[1].tool_calls[0].name, "ls");
        assert_eq!(b.messages[2].text, "a b");
    }
}
