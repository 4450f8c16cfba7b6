//! Letta Code conversations of its local backend
//! (`~/.letta/lc-local-backend/conversations/<key>/messages.jsonl`, the key
//! the base64url of `default:<agent id>` or `conversation:<id>`).
//!
//! As Letta Code 0.25.9 writes them (recorded against a mock
//! OpenAI-compatible model: `tests/fixtures/transcripts/letta/`), one
//! message a line, in pi's message shape (`pi-ai-message-jsonl`,
//! its manifest says) without pi's entry around it: `{id, role, content,
//! …}` with `role` `user` (text parts), `assistant` (`text` and `toolCall
//! {id, name, arguments}` parts, `model`, `usage {input, output,
//! cacheRead, cacheWrite}`) or `toolResult {toolCallId, content,
//! isError}`; read by pi's reading of a message.
//!
//! The file is written whole at each change, into the same file: while a
//! reply streams in, its line is built from the stream's chunks (model
//! `local`, no tokens) and grows; once done, the finished message with its
//! model and tokens takes its place. The tail sees the rewrite (no newline
//! where it stopped) and reads the file again (`tail.rs`).
//!
//! Its own words to the model ride in the user's messages as text parts
//! starting `<system-reminder>` (the device, the agent's ids, an
//! interrupt): they are not the user's and are left out. Times are those
//! of a clock of its own (from 2026-01-01, a second a message) but for the
//! replies': only the replies' are kept.
//!
//! Read by the chat-style reader (`chat`); this is its description.

use serde_json::Value;

use super::chat::{ChatFormat, Read, Turn};
use super::model::{Message, Role};

/// A Letta conversation as the chat-style reader reads it.
pub const FORMAT: ChatFormat = ChatFormat {
    kind: "role",
    id: "id",
    parent: "parentId",
    header: None,
    session_key: None,
    stamp_session: false,
    usage_record: None,
    ignored: &[],
    message,
};

fn message(role: &str, msg: &Value, offset: u64) -> Read {
    if role == "user" {
        return Turn::one(Message::new(Role::User, users_words(&msg["content"]), offset));
    }
    let mut read = super::pi::in_message(msg, offset);
    if let Read::Turn(turn) = &mut read {
        for m in turn.messages.iter_mut().filter(|m| m.role != Role::Assistant) {
            m.at_ms = None;
        }
    }
    read
}

/// The text parts of a user's message that are the user's.
fn users_words(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p["type"] == "text")
            .filter_map(|p| p["text"].as_str())
            .filter(|t| !t.trim_start().starts_with("<system-reminder>"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::transcript::{Format, read_file};

    #[test]
    fn a_recorded_conversation_reads_as_prompts_a_call_its_result_replies_and_tokens() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts/letta/messages.jsonl");
        let b = read_file(&path, Format::Letta).unwrap();
        let got: Vec<(&str, &str)> = b.messages.iter().map(|m| (m.role.as_str(), m.text.as_str())).collect();
        assert_eq!(
            got,
            [
                ("user", "SHELL please"),
                ("assistant", ""),
                ("tool", "(Command completed with no output)"),
                ("assistant", "Ran it."),
                ("user", "hello there"),
                ("assistant", "Mock reply to: hello there"),
            ]
        );
        assert_eq!((b.stats.malformed, b.stats.unknown), (0, 0));
        let call = &b.messages[1].tool_calls[0];
        assert_eq!(
            (call.name.as_str(), &call.input["command"]),
            ("Bash", &"touch perm-marker".into())
        );
        assert_eq!(b.messages[2].tool_result.as_ref().unwrap().tool_use_id, call.id);
        assert_eq!((b.usage.input, b.usage.output), (120, 21));
        assert_eq!(b.model.as_deref(), Some("mock-model"));
        assert!(b.messages[0].at_ms.is_none(), "its own clock's time is not kept");
        assert!(b.messages[3].at_ms.is_some());
    }
}
