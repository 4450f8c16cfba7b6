//! gptme conversations (`<logs>/<name>/conversation.jsonl`).
//!
//! As gptme 0.35.1 writes them (recorded against a mock OpenAI-compatible
//! model: `tests/fixtures/transcripts/gptme/`), one message a line, `{role,
//! content, timestamp, hide?, call_id?, metadata?}`, appended as they come
//! (an undo or an edit puts a new file in its place, which the tail reads
//! again from its start):
//!
//! - `system` with `hide`: its own instructions, shown to nobody: skipped;
//! - `user`: the user's words;
//! - `assistant`: its text, each tool call a line `@TOOL(CALL_ID): {json}`
//!   within it (the `tool` format; the `markdown` format leaves code blocks
//!   in the text), its `metadata {model, usage {input_tokens,
//!   output_tokens, cache_read_tokens, cache_creation_tokens}}`;
//! - `system` with a `call_id`: that call's result (`Declined by user` when
//!   refused), read as `tool`; a `system` without one is gptme's own note.

use serde_json::Value;

use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};
use super::{Batch, LineReader};

#[derive(Default)]
pub struct GptmeReader;

impl LineReader for GptmeReader {
    fn line(&mut self, line: &[u8], offset: u64, out: &mut Batch) {
        out.stats.lines += 1;
        let Ok(msg) = serde_json::from_slice::<Value>(line) else {
            out.stats.malformed += 1;
            return;
        };
        // Its own instructions, which it shows nobody (`hide`): not part
        // of the conversation.
        if msg["hide"] == true {
            return;
        }
        let content = msg["content"].as_str().unwrap_or_default();
        let mut m = match msg["role"].as_str() {
            Some("user") => Message::new(Role::User, content.to_string(), offset),
            Some("assistant") => assistant(&msg, content, offset, out),
            Some("system") if msg["call_id"].is_string() => {
                let mut m = Message::new(Role::Tool, content.to_string(), offset);
                m.tool_result = Some(ToolResult {
                    tool_use_id: msg["call_id"].as_str().map(str::to_string),
                    is_error: content.starts_with("Declined by user"),
                    agent_id: None,
                });
                m
            }
            Some("system") => Message::new(Role::System, content.to_string(), offset),
            Some(_) => {
                out.stats.unknown += 1;
                return;
            }
            None => {
                out.stats.malformed += 1;
                return;
            }
        };
        m.at_ms = msg["timestamp"].as_str().and_then(local_time);
        out.messages.push(m);
    }
}

/// An assistant message: its text without the call lines, its calls, its
/// model and tokens (added to the batch's).
fn assistant(msg: &Value, content: &str, offset: u64, out: &mut Batch) -> Message {
    let mut text = Vec::new();
    let mut calls = Vec::new();
    for line in content.lines() {
        match call_of(line) {
            Some(call) => calls.push(call),
            None => text.push(line),
        }
    }
    let mut m = Message::new(Role::Assistant, text.join("\n").trim().to_string(), offset);
    m.tool_calls = calls;
    let meta = &msg["metadata"];
    m.model = meta["model"].as_str().map(str::to_string);
    if meta["usage"].is_object() {
        let n = |k: &str| meta["usage"][k].as_i64().unwrap_or(0);
        let u = Usage {
            input: n("input_tokens"),
            output: n("output_tokens"),
            cache_read: n("cache_read_tokens"),
            cache_write: n("cache_creation_tokens"),
        };
        out.usage.add(&u);
        m.usage = Some(u);
    }
    if m.model.is_some() {
        out.model = m.model.clone();
    }
    m
}

/// A tool call's line, `@shell(call_1): {"command": "ls"}`.
fn call_of(line: &str) -> Option<ToolCall> {
    let rest = line.strip_prefix('@')?;
    let (name, rest) = rest.split_once('(')?;
    let (id, args) = rest.split_once("): ")?;
    let named = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    (named && args.starts_with('{')).then(|| ToolCall {
        id: Some(id.to_string()),
        name: name.to_string(),
        input: model::tool_input(args),
    })
}

/// gptme's timestamps are local times without a zone
/// (`2026-12-06T03:13:00.284794`): read as UTC, which they are where
/// agents runs its tests and on most servers.
fn local_time(s: &str) -> Option<i64> {
    model::parse_time(s).or_else(|| model::parse_time(&format!("{s}Z")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Format, read_file};

    fn recording() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/transcripts/gptme/permtest-yes/conversation.jsonl")
    }

    #[test]
    fn a_recorded_conversation_reads_as_prompts_calls_results_and_replies() {
        let b = read_file(&recording(), Format::Gptme).unwrap();
        assert_eq!((b.stats.malformed, b.stats.unknown), (0, 0));
        // Its hidden instructions are not part of the conversation.
        assert_eq!(b.messages[0].role, Role::User);
        assert!(b.messages.iter().all(|m| !m.text.starts_with("You are gptme")));
        let call = b.messages.iter().find(|m| !m.tool_calls.is_empty()).unwrap();
        assert_eq!(call.tool_calls[0].name, "shell");
        assert_eq!(call.tool_calls[0].id.as_deref(), Some("call_1"));
        assert_eq!(call.tool_calls[0].input["command"], "touch perm-marker");
        assert_eq!(call.text, "");
        assert_eq!(call.model.as_deref(), Some("local/mock-model"));
        let results: Vec<&Message> = b.messages.iter().filter(|m| m.role == Role::Tool).collect();
        assert!(
            results
                .iter()
                .any(|m| m.text.starts_with("Ran command: `touch perm-marker`"))
        );
        assert!(
            results
                .iter()
                .any(|m| m.text == "Declined by user" && m.tool_result.as_ref().unwrap().is_error)
        );
        assert!(
            b.messages
                .iter()
                .any(|m| m.role == Role::Assistant && m.text == "Ran it.")
        );
        let replies = b.messages.iter().filter(|m| m.usage.is_some()).count() as i64;
        assert_eq!((b.usage.input, b.usage.output), (40 * replies, 7 * replies));
        assert!(b.messages.iter().all(|m| m.at_ms.is_some()));
    }

    #[test]
    fn only_a_whole_call_line_is_a_call() {
        assert!(call_of("@shell(call_1): {\"command\": \"ls\"}").is_some());
        assert!(call_of("@someone said (hi): there").is_none());
        assert!(call_of("an @shell(x): {} mid-line").is_none());
    }
}
