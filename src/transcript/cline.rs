//! Cline CLI sessions (`<CLINE_DATA_DIR, ~/.cline/data>/sessions/<id>/<id>.messages.json`).
//!
//! As Cline 3.0.65 writes them (recorded against a mock OpenAI-compatible
//! model: `tests/fixtures/transcripts/cline/`), one JSON document written
//! again whole after each message: `{version, sessionId, messages: [msg…],
//! system_prompt}`. Each message is `{id, role, content: [part…], ts,
//! modelInfo?, metrics?, metadata?}`:
//!
//! - `user`: the user's words as a `text` part wrapped in `<user_input
//!   mode="act">…</user_input>` (read without the wrapper), or the results
//!   of the calls before it (`tool_result {tool_use_id, content,
//!   is_error}`), read as `tool`;
//! - `assistant`: `text` parts, `tool_use {id, name, input}` parts, the
//!   model (`modelInfo.id`) and its tokens (`metrics {inputTokens,
//!   outputTokens, cacheReadTokens, cacheWriteTokens}`); one shown only
//!   (`metadata.displayOnly`, an API error) is read as `system`.
//!
//! Messages are added at the end, read by `document::read`: the last one
//! is provisional until another follows it or it has settled (the user's,
//! or a reply with its tokens).

use serde_json::Value;

use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};
use super::{Batch, DocumentRead, document};

/// The shape of its document: messages with ids.
const SHAPE: document::Shape = document::Shape {
    records: |doc| document::array(doc, "messages"),
    about: |doc, batch| batch.session_id = doc["sessionId"].as_str().map(str::to_string),
    key: |msg| msg["id"].as_str().map_or_else(|| document::digest(msg), str::to_string),
    settled,
    convert,
};

/// Reads the messages of `doc` after the first `done`, the last of which
/// had the id `last`. With `finished`, the last message is read for good.
pub fn parse(doc: &[u8], done: usize, last: Option<&str>, finished: bool) -> DocumentRead {
    document::read(doc, done, last, finished, &SHAPE)
}

/// Whether the last message can no longer change: the user's words or
/// results, or a reply whose tokens are in (they come with its end).
fn settled(msg: &Value) -> bool {
    match msg["role"].as_str() {
        Some("user") => true,
        Some("assistant") => msg["metrics"].is_object() || msg["metadata"]["displayOnly"] == true,
        _ => false,
    }
}

/// Appends one message's messages: its results, or its words and calls.
fn convert(msg: &Value, offset: u64, out: &mut Batch) {
    let parts = msg["content"].as_array().map(Vec::as_slice).unwrap_or_default();
    let at = msg["ts"].as_i64();
    let text = parts
        .iter()
        .filter(|p| p["type"] == "text")
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    match msg["role"].as_str() {
        Some("user") => {
            for part in parts.iter().filter(|p| p["type"] == "tool_result") {
                let mut m = Message::new(Role::Tool, result_text(&part["content"]), offset);
                m.at_ms = at;
                m.tool_result = Some(ToolResult {
                    tool_use_id: part["tool_use_id"].as_str().map(str::to_string),
                    is_error: part["is_error"] == true,
                    agent_id: None,
                });
                out.messages.push(m);
            }
            if !text.is_empty() {
                let mut m = Message::new(Role::User, unwrapped(&text).to_string(), offset);
                m.at_ms = at;
                m.uuid = msg["id"].as_str().map(str::to_string);
                out.messages.push(m);
            }
        }
        Some("assistant") if msg["metadata"]["displayOnly"] == true => {
            let mut m = Message::new(Role::System, text, offset);
            m.at_ms = at;
            out.messages.push(m);
        }
        Some("assistant") => out.messages.push(assistant(msg, parts, text, offset)),
        Some(_) => out.stats.unknown += 1,
        None => out.stats.malformed += 1,
    }
}

/// An assistant message: its text, calls, model and tokens.
fn assistant(msg: &Value, parts: &[Value], text: String, offset: u64) -> Message {
    let mut m = Message::new(Role::Assistant, text, offset);
    m.at_ms = msg["ts"].as_i64();
    m.uuid = msg["id"].as_str().map(str::to_string);
    m.tool_calls = parts
        .iter()
        .filter(|p| p["type"] == "tool_use")
        .map(|p| ToolCall {
            id: p["id"].as_str().map(str::to_string),
            name: p["name"].as_str().unwrap_or_default().to_string(),
            input: model::tool_input(&p["input"].to_string()),
        })
        .collect();
    m.model = msg["modelInfo"]["id"].as_str().map(str::to_string);
    let metrics = &msg["metrics"];
    if metrics.is_object() {
        let n = |k: &str| metrics[k].as_i64().unwrap_or(0);
        m.usage = Some(Usage {
            input: n("inputTokens"),
            output: n("outputTokens"),
            cache_read: n("cacheReadTokens"),
            cache_write: n("cacheWriteTokens"),
        });
    }
    m
}

/// The user's words without Cline's `<user_input mode="…">` wrapper.
fn unwrapped(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("<user_input") else {
        return text;
    };
    let Some((_, inner)) = rest.split_once('>') else {
        return text;
    };
    inner.strip_suffix("</user_input>").unwrap_or(inner)
}

/// A result's content: text, or Cline's list of `{query, result}` (a
/// command and its output), as text.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(
                |i| match (i["query"].as_str(), i["result"].as_str(), i["text"].as_str()) {
                    (Some(q), Some(r), _) => format!("$ {q}\n{r}").trim_end().to_string(),
                    (_, _, Some(t)) => t.to_string(),
                    _ => i.to_string(),
                },
            )
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn recording() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/transcripts/cline/1796527564673_8vu81.messages.json"
        );
        std::fs::read(path).unwrap()
    }

    #[test]
    fn a_recorded_session_reads_as_its_prompts_call_result_and_replies() {
        let read = parse(&recording(), 0, None, true);
        let b = &read.batch;
        assert_eq!(b.session_id.as_deref(), Some("1796527564673_8vu81"));
        assert_eq!((b.stats.malformed, b.stats.unknown), (0, 0));
        let first = &b.messages[0];
        assert_eq!(
            (first.role, first.text.as_str()),
            (Role::User, "hello from home screen")
        );
        let call = b.messages.iter().find(|m| !m.tool_calls.is_empty()).unwrap();
        assert_eq!(call.tool_calls[0].name, "run_commands");
        assert_eq!(call.tool_calls[0].input["commands"][0], "touch perm-marker");
        let result = b.messages.iter().find(|m| m.role == Role::Tool).unwrap();
        assert_eq!(result.text, "$ touch perm-marker");
        assert_eq!(
            result.tool_result.as_ref().unwrap().tool_use_id.as_deref(),
            Some("call_1")
        );
        assert!(
            b.messages
                .iter()
                .any(|m| m.role == Role::Assistant && m.text == "Ran it.")
        );
        let replies = b.messages.iter().filter(|m| m.usage.is_some()).count() as i64;
        assert_eq!((b.usage.input, b.usage.output), (40 * replies, 7 * replies));
        assert_eq!(b.model.as_deref(), Some("mock-model"));
        assert_eq!(read.records_done, read.batch.messages.len());
    }

    #[test]
    fn a_reply_without_its_tokens_is_provisional_and_a_cut_history_is_read_again() {
        let doc = recording();
        // Its last message, the user's, has settled.
        let whole = parse(&doc, 0, None, false);
        assert_eq!(whole.batch.provisional, 0);
        // A reply still being written: no tokens yet.
        let mut writing: Value = serde_json::from_slice(&doc).unwrap();
        let reply = json!({ "id": "msg_x", "role": "assistant", "content": [{ "type": "text", "text": "Half" }] });
        writing["messages"].as_array_mut().unwrap().push(reply);
        let writing = writing.to_string().into_bytes();
        let first = parse(&writing, 0, None, false);
        assert_eq!((first.records_done, first.batch.provisional), (whole.records_done, 1));
        let again = parse(&writing, first.records_done, first.last_key.as_deref(), false);
        assert!(!again.reset);
        assert_eq!(again.batch.messages.len(), 1);
        let mut cut: Value = serde_json::from_slice(&doc).unwrap();
        let kept = cut["messages"].as_array().unwrap()[first.records_done - 1..].to_vec();
        cut["messages"] = Value::Array(kept);
        let read = parse(
            cut.to_string().as_bytes(),
            first.records_done,
            first.last_key.as_deref(),
            false,
        );
        assert!(read.reset);
        let torn = parse(
            &doc[..doc.len() / 2],
            first.records_done,
            first.last_key.as_deref(),
            false,
        );
        assert_eq!((torn.batch.stats.malformed, torn.records_done), (0, first.records_done));
    }

    #[test]
    fn a_prompt_is_read_without_its_wrapper() {
        assert_eq!(unwrapped("<user_input mode=\"act\">fix it</user_input>"), "fix it");
        assert_eq!(unwrapped("plain"), "plain");
    }
}
