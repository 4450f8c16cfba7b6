//! Open Interpreter conversations
//! (`<XDG_CONFIG_HOME, ~/.config>/open-interpreter/conversations/<name>.json`).
//!
//! As Open Interpreter 0.4.3 writes them (recorded against a mock
//! OpenAI-compatible model: `tests/fixtures/transcripts/interpreter/`), one
//! JSON array of its "LMC" messages, written again whole after each
//! completed turn, each `{role, type, format?, content}`:
//!
//! - `user` `message`: the user's words, or its own note that the user
//!   declined a code block ("I have declined to run this code.", read as
//!   `system`);
//! - `assistant` `message`: a reply; `assistant` `code`: a code block it
//!   asked to run, `format` its language (read as a call of its one tool,
//!   `execute {language, code}`);
//! - `computer` `console` (`format: output`): what the code printed, read
//!   as the call's result; an `image` of any role is named, not kept.
//!
//! It records no ids, no times, no model and no tokens. A digest of each
//! message tells a history that changed (`%undo`, `%reset`:
//! `document::read`); a turn is saved whole, so every message is read for
//! good. A turn declined or interrupted is saved only with the next.

use serde_json::{Value, json};

use super::model::{Message, Role, ToolCall, ToolResult};
use super::{Batch, DocumentRead, document};

const SHAPE: document::Shape = document::Shape {
    records: |doc| doc.as_array().map(Vec::as_slice).unwrap_or_default(),
    about: |_, _| {},
    key: document::digest,
    settled: |msg| msg["role"].is_string(),
    convert,
};

/// What it adds as the user's when a code block is declined.
const DECLINED: &str = "I have declined to run this code.";

/// Reads the messages of `doc` after the first `done`, the last of which
/// had the digest `last`.
pub fn parse(doc: &[u8], done: usize, last: Option<&str>, finished: bool) -> DocumentRead {
    document::read(doc, done, last, finished, &SHAPE)
}

fn convert(msg: &Value, offset: u64, out: &mut Batch) {
    let text = msg["content"].as_str().unwrap_or_default();
    let kind = msg["type"].as_str().unwrap_or("message");
    let role = match msg["role"].as_str() {
        Some("user") if text == DECLINED => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("computer") => Role::Tool,
        Some(_) => {
            out.stats.unknown += 1;
            return;
        }
        None => {
            out.stats.malformed += 1;
            return;
        }
    };
    let format = msg["format"].as_str().unwrap_or_default();
    let m = match (role, kind) {
        (_, "image") => Message::new(role, format!("[image: {format}]"), offset),
        (Role::Assistant, "code") => {
            let mut m = Message::new(role, String::new(), offset);
            m.tool_calls.push(ToolCall {
                id: None,
                name: "execute".into(),
                input: json!({ "language": format, "code": text }),
            });
            m
        }
        (Role::Tool, _) => {
            let mut m = Message::new(role, text.to_string(), offset);
            m.tool_result = Some(ToolResult {
                tool_use_id: None,
                is_error: false,
                agent_id: None,
            });
            m
        }
        _ => Message::new(role, text.to_string(), offset),
    };
    out.messages.push(m);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/transcripts/interpreter/SHELLOUT__December_06_2026_06-13-14.json"
        );
        std::fs::read(path).unwrap()
    }

    #[test]
    fn a_recorded_conversation_reads_as_prompts_code_its_output_and_replies() {
        let read = parse(&recording(), 0, None, false);
        let b = &read.batch;
        assert_eq!((b.stats.malformed, b.stats.unknown, b.provisional), (0, 0, 0));
        assert_eq!((b.session_id.as_deref(), b.model.as_deref()), (None, None));
        let said: Vec<(Role, &str)> = b.messages.iter().map(|m| (m.role, m.text.as_str())).collect();
        assert_eq!(said[0], (Role::User, "SHELLOUT please"));
        assert_eq!(said[2], (Role::Tool, "\nmade-marker\nperm-marker\n"));
        assert_eq!(said[3], (Role::Assistant, "Ran it."));
        assert_eq!(said[6], (Role::System, DECLINED));
        let call = &b.messages[1].tool_calls[0];
        assert_eq!(call.name, "execute");
        assert_eq!(call.input["language"], "shell");
        assert_eq!(call.input["code"], "touch perm-marker && echo made-marker && ls");
        assert!(b.messages[2].tool_result.is_some());
        assert!(b.messages.iter().all(|m| m.usage.is_none()));
        assert_eq!(read.records_done, 16);
    }

    #[test]
    fn a_later_save_adds_the_new_turn_and_an_undone_one_is_read_again() {
        let doc = recording();
        let first = parse(&doc, 0, None, false);
        let mut more: Value = serde_json::from_slice(&doc).unwrap();
        let turn = more.as_array_mut().unwrap();
        turn.push(json!({ "role": "user", "type": "message", "content": "one more" }));
        turn.push(json!({ "role": "assistant", "type": "message", "content": "Done." }));
        let next = parse(
            more.to_string().as_bytes(),
            first.records_done,
            first.last_key.as_deref(),
            false,
        );
        assert!(!next.reset);
        let texts: Vec<&str> = next.batch.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["one more", "Done."]);
        // `%undo` took the last turn away and another took its place.
        let mut undone: Value = serde_json::from_slice(&doc).unwrap();
        undone[15]["content"] = json!("another ending");
        let again = parse(
            undone.to_string().as_bytes(),
            first.records_done,
            first.last_key.as_deref(),
            false,
        );
        assert!(again.reset);
        assert_eq!(again.batch.messages.len(), 16);
    }
}
