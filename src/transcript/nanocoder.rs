//! nanocoder sessions (`<NANOCODER_DATA_DIR, ~/.local/share/nanocoder>/sessions/<uuid>.json`).
//!
//! As nanocoder 1.30.0 writes them (recorded against a mock
//! OpenAI-compatible model: `tests/fixtures/transcripts/nanocoder/`), one
//! pretty-printed JSON document written again whole (to a new file renamed
//! over the old): `{id, title, createdAt, lastAccessedAt, messageCount,
//! provider, model, workingDirectory, messages: [msg…]}`, each message in
//! the chat-completions shape:
//!
//! - `user`: `content`, the user's words;
//! - `assistant`: `content` and `tool_calls [{id, function {name,
//!   arguments}}]`, the arguments an object;
//! - `tool`: `content`, the call's output, with `tool_call_id` and `name`
//!   (a call the user refused: "Tool execution was cancelled by the user.").
//!
//! It records no times and no tokens (those are only on its screen); the
//! session's model is the document's. Messages have no ids: a digest of
//! each tells a history that changed (`document::read`). nanocoder saves a
//! message whole, so every one is read for good.

use serde_json::Value;

use super::model::{self, Message, Role, ToolCall, ToolResult};
use super::{Batch, DocumentRead, document};

const SHAPE: document::Shape = document::Shape {
    records: |doc| document::array(doc, "messages"),
    about: |doc, batch| {
        batch.session_id = doc["id"].as_str().map(str::to_string);
        batch.model = doc["model"].as_str().map(str::to_string);
    },
    key: document::digest,
    settled: |msg| msg["role"].is_string(),
    convert,
};

/// Reads the messages of `doc` after the first `done`, the last of which
/// had the digest `last`.
pub fn parse(doc: &[u8], done: usize, last: Option<&str>, finished: bool) -> DocumentRead {
    document::read(doc, done, last, finished, &SHAPE)
}

fn convert(msg: &Value, offset: u64, out: &mut Batch) {
    let text = msg["content"].as_str().unwrap_or_default().to_string();
    let m = match msg["role"].as_str() {
        Some("user") => Message::new(Role::User, text, offset),
        Some("assistant") => {
            let mut m = Message::new(Role::Assistant, text, offset);
            m.tool_calls = document::array(msg, "tool_calls")
                .iter()
                .map(|call| ToolCall {
                    id: call["id"].as_str().map(str::to_string),
                    name: call["function"]["name"].as_str().unwrap_or_default().to_string(),
                    input: arguments(&call["function"]["arguments"]),
                })
                .collect();
            m
        }
        Some("tool") => {
            let mut m = Message::new(Role::Tool, text, offset);
            m.tool_result = Some(ToolResult {
                tool_use_id: msg["tool_call_id"].as_str().map(str::to_string),
                is_error: false,
                agent_id: None,
            });
            m
        }
        Some("system") => Message::new(Role::System, text, offset),
        Some(_) => {
            out.stats.unknown += 1;
            return;
        }
        None => {
            out.stats.malformed += 1;
            return;
        }
    };
    out.messages.push(m);
}

/// A call's arguments: an object as nanocoder keeps them, or the JSON
/// text the API sent.
fn arguments(args: &Value) -> Value {
    match args.as_str() {
        Some(text) => model::tool_input(text),
        None => model::tool_input(&args.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn recording() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/transcripts/nanocoder/99288c67-ac2a-4954-87a3-d3bdf90a693f.json"
        );
        std::fs::read(path).unwrap()
    }

    #[test]
    fn a_recorded_session_reads_as_its_prompts_call_result_and_replies() {
        let read = parse(&recording(), 0, None, false);
        let b = &read.batch;
        assert_eq!(b.session_id.as_deref(), Some("99288c67-ac2a-4954-87a3-d3bdf90a693f"));
        assert_eq!(b.model.as_deref(), Some("mock-model"));
        assert_eq!((b.stats.malformed, b.stats.unknown, b.provisional), (0, 0, 0));
        let said: Vec<(Role, &str)> = b.messages.iter().map(|m| (m.role, m.text.as_str())).collect();
        assert_eq!(said[0], (Role::User, "hello nanocoder"));
        assert_eq!(said[1], (Role::Assistant, "Mock reply to: hello nanocoder"));
        assert_eq!(said[5], (Role::Assistant, "Ran it."));
        let call = &b.messages[3].tool_calls[0];
        assert_eq!(
            (call.name.as_str(), call.id.as_deref()),
            ("execute_bash", Some("call_1"))
        );
        assert_eq!(call.input["command"], "touch perm-marker");
        let result = &b.messages[4];
        assert_eq!((result.role, result.text.as_str()), (Role::Tool, "EXIT_CODE: 0\n"));
        assert_eq!(
            result.tool_result.as_ref().unwrap().tool_use_id.as_deref(),
            Some("call_1")
        );
        assert_eq!(read.records_done, 10);
    }

    #[test]
    fn a_later_read_takes_the_new_messages_and_a_cut_history_is_read_again() {
        let doc = recording();
        let first = parse(&doc, 0, None, false);
        let mut more: Value = serde_json::from_slice(&doc).unwrap();
        more["messages"]
            .as_array_mut()
            .unwrap()
            .push(json!({ "role": "user", "content": "one more" }));
        let next = parse(
            more.to_string().as_bytes(),
            first.records_done,
            first.last_key.as_deref(),
            false,
        );
        assert!(!next.reset);
        assert_eq!(next.batch.messages.len(), 1);
        assert_eq!(next.batch.messages[0].text, "one more");
        // The same count of messages, an earlier one changed: read again.
        more["messages"][9]["content"] = json!("another ending");
        let again = parse(
            more.to_string().as_bytes(),
            first.records_done,
            first.last_key.as_deref(),
            false,
        );
        assert!(again.reset);
        assert_eq!(again.batch.messages.len(), 11);
    }
}
