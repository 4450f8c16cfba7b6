//! Code Puppy sessions (`<XDG_CACHE_HOME/code_puppy, ~/.code_puppy>/autosaves/<name>.json`).
//!
//! As Code Puppy 0.0.946 writes them (recorded against a mock
//! OpenAI-compatible model: `tests/fixtures/transcripts/code-puppy/`), one
//! JSON document written again whole after each turn, `{format: 2,
//! code_puppy, pydantic_ai, encoding: "pydantic-ai-messages", messages}`,
//! each message pydantic-ai's own: `{kind, parts: [part…], timestamp,
//! state}`.
//!
//! - `request`: the user's words (`user-prompt`, whose `content` is text
//!   or a list holding text), the results of the calls before it
//!   (`tool-return {tool_name, tool_call_id, content}`, `content` often an
//!   object: a command's `{command, stdout, stderr, error, success}`), or a
//!   call it sent back to the model (`retry-prompt`: an unknown tool, bad
//!   arguments), read as a failed result. Its system prompt is the
//!   request's `instructions`, not read;
//! - `response`: `text` parts, `tool-call {tool_name, args, tool_call_id}`
//!   parts (`args` a JSON string or an object), the model (`model_name`)
//!   and its tokens (`usage {input_tokens, output_tokens,
//!   cache_read_tokens, cache_write_tokens}`, the input counting the
//!   cached part too). Its reasoning (`thinking`) is not read.
//!
//! Messages are added at the end, read by `document::read` with a digest
//! of each as its key (it keeps no ids of its own that every message
//! has): a history it compacted or cleared (`/clear`, `/compact`) reads as
//! changed, and is read again. A message whose `state` is `complete` can
//! no longer change.

use serde_json::Value;

use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};
use super::{Batch, DocumentRead, document};

const SHAPE: document::Shape = document::Shape {
    records: |doc| document::array(doc, "messages"),
    about: |_, _| {},
    key: document::digest,
    settled: |msg| msg["state"] == "complete",
    convert,
};

/// Reads the messages of `doc` after the first `done`, the last of which
/// had the digest `last`. With `finished`, the last is read for good.
pub fn parse(doc: &[u8], done: usize, last: Option<&str>, finished: bool) -> DocumentRead {
    document::read(doc, done, last, finished, &SHAPE)
}

/// Appends one message's messages: the user's words and the results of
/// calls, or a reply with its calls.
fn convert(msg: &Value, offset: u64, out: &mut Batch) {
    let parts = document::array(msg, "parts");
    let at = msg["timestamp"].as_str().and_then(model::parse_time);
    match msg["kind"].as_str() {
        Some("request") => {
            for part in parts {
                if let Some(mut m) = request_part(part, offset, &mut out.stats) {
                    m.at_ms = part["timestamp"].as_str().and_then(model::parse_time).or(at);
                    out.messages.push(m);
                }
            }
        }
        Some("response") => {
            let mut m = response(msg, parts, offset);
            m.at_ms = at;
            out.messages.push(m);
        }
        Some(_) => out.stats.unknown += 1,
        None => out.stats.malformed += 1,
    }
}

/// One part of a request: the user's words, or the answer to a call.
fn request_part(part: &Value, offset: u64, stats: &mut super::ReadStats) -> Option<Message> {
    let kind = part["part_kind"].as_str().unwrap_or_default();
    let failed = match kind {
        "user-prompt" => return Some(Message::new(Role::User, prompt_text(&part["content"]), offset)),
        // Its system prompt, when not given as the request's instructions.
        "system-prompt" => return None,
        "tool-return" | "builtin-tool-return" => {
            part["outcome"].as_str().is_some_and(|o| o != "success") || part["content"]["success"] == false
        }
        "retry-prompt" => true,
        _ => {
            stats.unknown += 1;
            return None;
        }
    };
    let mut m = Message::new(Role::Tool, result_text(&part["content"]), offset);
    m.tool_result = Some(ToolResult {
        tool_use_id: part["tool_call_id"].as_str().map(str::to_string),
        is_error: failed,
        agent_id: None,
    });
    Some(m)
}

/// A reply: its text, its calls, its model and tokens.
fn response(msg: &Value, parts: &[Value], offset: u64) -> Message {
    let text = parts
        .iter()
        .filter(|p| p["part_kind"] == "text")
        .filter_map(|p| p["content"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut m = Message::new(Role::Assistant, text, offset);
    m.tool_calls = parts
        .iter()
        .filter(|p| matches!(p["part_kind"].as_str(), Some("tool-call" | "builtin-tool-call")))
        .map(|p| ToolCall {
            id: p["tool_call_id"].as_str().map(str::to_string),
            name: p["tool_name"].as_str().unwrap_or_default().to_string(),
            input: match &p["args"] {
                Value::String(args) => model::tool_input(args),
                args => model::tool_input(&args.to_string()),
            },
        })
        .collect();
    m.model = msg["model_name"].as_str().map(str::to_string);
    let usage = &msg["usage"];
    if usage.is_object() {
        let n = |k: &str| usage[k].as_i64().unwrap_or(0);
        let (read, written) = (n("cache_read_tokens"), n("cache_write_tokens"));
        m.usage = Some(Usage {
            input: (n("input_tokens") - read - written).max(0),
            output: n("output_tokens"),
            cache_read: read,
            cache_write: written,
        });
    }
    m
}

/// The user's words: text, or the text items of a list (images and
/// other attachments named only).
fn prompt_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => s.clone(),
                other => format!("[{}]", other["kind"].as_str().unwrap_or("attachment")),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A call's answer: text, or a command's run (`$ COMMAND`, then what it
/// printed and its error), or any other object as JSON.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Object(run) if run.get("command").is_some_and(Value::is_string) => {
            let field = |k: &str| run.get(k).and_then(Value::as_str).filter(|s| !s.trim().is_empty());
            let command = format!("$ {}", field("command").unwrap_or_default());
            std::iter::once(command.as_str())
                .chain(["stdout", "stderr", "error"].into_iter().filter_map(field))
                .map(str::trim_end)
                .collect::<Vec<_>>()
                .join("\n")
        }
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
#[path = "code_puppy_tests.rs"]
mod tests;
