//! pi sessions (`<PI_CODING_AGENT_DIR, ~/.pi/agent>/sessions/--<cwd>--/<time>_<id>.jsonl`).
//!
//! As pi 0.73.1 writes them (recorded against a mock OpenAI-compatible
//! model: `tests/fixtures/transcripts/pi/`), one JSON entry a line, each
//! appended once: first the header `{type: session, version: 3, id, cwd,
//! parentSession?}`, then entries `{type, id, parentId, timestamp, …}`:
//!
//! - `message` with `message {role, content, …}`: `user` (a string or text
//!   parts), `assistant` (`text`, `thinking` and `toolCall {id, name,
//!   arguments}` parts, `model`, `usage {input, output, cacheRead,
//!   cacheWrite}` — `input` is already without the cached part),
//!   `toolResult {toolCallId, content, isError}`, and pi's own
//!   `bashExecution` (a `!` command), `custom`, `branchSummary`,
//!   `compactionSummary`;
//! - `custom_message` (an extension's text in the context), `compaction`
//!   and `branch_summary` (summaries);
//! - bookkeeping read as nothing: `model_change`, `thinking_level_change`,
//!   `custom`, `label`, `session_info`.
//!
//! The file is written only once the first reply arrives (then everything
//! so far at once). Entries form a tree (`/tree` branches in place); they
//! are read in file order, every branch included.

//!
//! Read by the chat-style reader (`chat`); this is its description.

use serde_json::Value;

use super::chat::{self, ChatFormat, Header, Read, Turn};
use super::model::{Message, Role, ToolResult, Usage};

/// A pi session as the chat-style reader reads it.
pub const FORMAT: ChatFormat = ChatFormat {
    kind: "type",
    id: "id",
    parent: "parentId",
    header: Some(Header {
        kind: "session",
        id: "/id",
        model: None,
    }),
    session_key: None,
    stamp_session: false,
    usage_record: None,
    ignored: &[
        "model_change",
        "thinking_level_change",
        "custom",
        "label",
        "session_info",
    ],
    message,
};

fn message(kind: &str, entry: &Value, offset: u64) -> Read {
    let system = |key: &str| Turn::one(Message::new(Role::System, chat::text_of(&entry[key]), offset));
    match kind {
        "message" if entry["message"].is_object() => in_message(&entry["message"], offset),
        "message" => Read::Malformed,
        "custom_message" => system("content"),
        "compaction" | "branch_summary" => system("summary"),
        _ => Read::Unknown,
    }
}

/// One `message` entry's message, with its tokens.
pub(super) fn in_message(msg: &Value, offset: u64) -> Read {
    let text = chat::text_of(&msg["content"]);
    let mut m = match msg["role"].as_str().unwrap_or_default() {
        "user" => Message::new(Role::User, text, offset),
        "assistant" => {
            let mut m = Message::new(Role::Assistant, text, offset);
            m.tool_calls = chat::typed_calls(&msg["content"], "toolCall", "arguments");
            m.model = msg["model"].as_str().map(str::to_string);
            m.at_ms = msg["timestamp"].as_i64();
            let n = |k: &str| msg["usage"][k].as_i64().unwrap_or(0);
            let usage = Usage {
                input: n("input"),
                output: n("output"),
                cache_read: n("cacheRead"),
                cache_write: n("cacheWrite"),
            };
            return Read::Turn(Turn {
                model: m.model.clone(),
                messages: vec![m],
                usage: Some(usage),
                takes_pending: false,
            });
        }
        "toolResult" => {
            let mut m = Message::new(Role::Tool, text, offset);
            m.tool_result = Some(ToolResult {
                tool_use_id: msg["toolCallId"].as_str().map(str::to_string),
                is_error: msg["isError"].as_bool().unwrap_or(false),
                agent_id: None,
            });
            m
        }
        "bashExecution" => {
            let command = msg["command"].as_str().unwrap_or_default();
            let output = msg["output"].as_str().unwrap_or_default();
            Message::new(Role::Tool, format!("$ {command}\n{output}"), offset)
        }
        "custom" => Message::new(Role::System, text, offset),
        "branchSummary" | "compactionSummary" => {
            Message::new(Role::System, msg["summary"].as_str().unwrap_or_default().into(), offset)
        }
        _ => return Read::Unknown,
    };
    m.at_ms = msg["timestamp"].as_i64();
    Turn::one(m)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::transcript::chat::ChatReader;
    use crate::transcript::{Batch, Format, LineReader, read_file};

    /// Recorded from pi 0.73.1 against a mock model: a greeting, a `bash`
    /// call (pi asks no permission), `/quit`, then `--session ID` and one
    /// more prompt.
    fn session() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/transcripts/pi/2026-12-02T13-55-50-747Z_01a2370a-495a-7157-ab2c-799bb703a8e4.jsonl")
    }

    #[test]
    fn a_real_session_reads_into_prompts_replies_tool_calls_results_and_tokens() {
        let b = read_file(&session(), Format::Pi).unwrap();
        let got: Vec<(&str, &str)> = b.messages.iter().map(|m| (m.role.as_str(), m.text.as_str())).collect();
        assert_eq!(
            got,
            [
                ("user", "hello narwhal"),
                ("assistant", "Mock reply to: hello narwhal"),
                ("user", "SHELL please"),
                ("assistant", ""),
                ("tool", "(no output)"),
                ("assistant", "Ran it."),
                ("user", "back again"),
                ("assistant", "Mock reply to: back again"),
            ]
        );
        assert_eq!((b.stats.malformed, b.stats.unknown), (0, 0));
        assert_eq!(b.session_id.as_deref(), Some("01a2370a-495a-7157-ab2c-799bb703a8e4"));
        assert_eq!(b.model.as_deref(), Some("mock-model"));
        let call = &b.messages[3].tool_calls[0];
        assert_eq!((call.id.as_deref(), call.name.as_str()), (Some("call_1"), "bash"));
        assert_eq!(call.input["command"], "touch perm-marker");
        let result = b.messages[4].tool_result.as_ref().unwrap();
        assert_eq!(
            (result.tool_use_id.as_deref(), result.is_error),
            (Some("call_1"), false)
        );
        // Four replies of 30 new input tokens, 10 cached, 7 out.
        assert_eq!(
            b.usage,
            Usage {
                input: 120,
                output: 28,
                cache_read: 40,
                cache_write: 0
            }
        );
        assert!(b.messages.iter().all(|m| m.at_ms.is_some() && m.uuid.is_some()));
        assert_eq!(b.messages[1].parent_uuid.as_deref(), Some("3c1a7692"));
    }

    #[test]
    fn summaries_and_commands_are_read_and_odd_lines_counted() {
        let mut out = Batch::default();
        let lines = [
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-12-02T13:55:58.640Z","message":{"role":"bashExecution","command":"ls","output":"x\n","exitCode":0}}"#,
            r#"{"type":"compaction","id":"b","parentId":"a","summary":"We talked.","firstKeptEntryId":"a","tokensBefore":5}"#,
            r#"{"type":"message","id":"c","message":{"role":"toolResult","toolCallId":"t","content":[{"type":"text","text":"denied"}],"isError":true}}"#,
            r#"{"type":"label","id":"d","targetId":"a","label":"x"}"#,
            r#"{"type":"telepathy","id":"e"}"#,
            r#"{"type":"message","message":"#,
        ];
        let mut reader = ChatReader::new(&FORMAT);
        for (i, l) in lines.iter().enumerate() {
            reader.line(l.as_bytes(), i as u64, &mut out);
        }
        let got: Vec<(&str, &str)> = out
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [("tool", "$ ls\nx\n"), ("system", "We talked."), ("tool", "denied")]
        );
        assert!(out.messages[2].tool_result.as_ref().unwrap().is_error);
        assert_eq!((out.stats.malformed, out.stats.unknown), (1, 1));
    }
}
