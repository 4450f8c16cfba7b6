//! Factory Droid sessions
//! (`<FACTORY_HOME_OVERRIDE, HOME>/.factory/sessions/<cwd>/<session>.jsonl`).
//!
//! As Droid 0.225.2 writes them (recorded against a mock OpenAI-compatible
//! custom model: `tests/fixtures/transcripts/droid/`), one JSON record a
//! line, appended once:
//!
//! - `session_start {id, title, cwd, version}` first;
//! - `message {id, parentId, timestamp, message {role, content}}` with
//!   Anthropic-style content parts: `text`, `tool_use {id, name, input}`
//!   (assistant), `tool_result {tool_use_id, is_error, content}` (user);
//!   the assistant's `modelId`. The first user message of a turn may be
//!   Droid's own context (its id `context-…`, a `<system-reminder>`), read
//!   as a system message;
//! - `agent_turn_outcome` (how a turn ended), read as nothing.
//!
//! Its tokens are not on the messages: the session's totals are in
//! `<session>.settings.json` beside the file (`tokenUsage {inputTokens,
//! outputTokens, cacheCreationTokens, cacheReadTokens, thinkingTokens}`),
//! rewritten as the session goes on; the index counts their growth
//! (`totals`).

//!
//! Read by the chat-style reader (`chat`); this is its description.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::chat::{self, ChatFormat, Header, Read, Turn};
use super::model::{Message, Role, ToolResult, Usage};

/// A Droid session as the chat-style reader reads it.
pub const FORMAT: ChatFormat = ChatFormat {
    kind: "type",
    id: "id",
    parent: "parentId",
    header: Some(Header {
        kind: "session_start",
        id: "/id",
        model: None,
    }),
    session_key: None,
    stamp_session: true,
    usage_record: None,
    ignored: &["agent_turn_outcome"],
    message,
};

fn message(kind: &str, record: &Value, offset: u64) -> Read {
    if kind != "message" {
        return Read::Unknown;
    }
    let msg = &record["message"];
    let content = &msg["content"];
    let context = record["id"].as_str().is_some_and(|i| i.starts_with("context-"));
    match msg["role"].as_str() {
        Some("user") if context => Turn::one(Message::new(Role::System, chat::text_of(content), offset)),
        Some("user") => Turn::of(user(content, offset)),
        Some("assistant") => {
            let mut m = Message::new(Role::Assistant, chat::text_of(content), offset);
            m.tool_calls = chat::typed_calls(content, "tool_use", "input");
            m.model = msg["modelId"].as_str().map(str::to_string);
            Read::Turn(Turn {
                model: m.model.clone(),
                messages: vec![m],
                ..Turn::default()
            })
        }
        _ => Read::Malformed,
    }
}

/// A user message: its words, or one `tool` message per result it sends.
fn user(content: &Value, offset: u64) -> Vec<Message> {
    let results: Vec<Message> = content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["type"] == "tool_result")
        .map(|p| {
            let mut m = Message::new(Role::Tool, chat::text_of(&p["content"]), offset);
            m.tool_result = Some(ToolResult {
                tool_use_id: p["tool_use_id"].as_str().map(str::to_string),
                is_error: p["is_error"].as_bool().unwrap_or(false),
                agent_id: None,
            });
            m
        })
        .collect();
    if results.is_empty() {
        vec![Message::new(Role::User, chat::text_of(content), offset)]
    } else {
        results
    }
}

/// `<session>.settings.json` beside a session file.
pub fn settings_file(session: &Path) -> PathBuf {
    let stem = session.file_stem().unwrap_or_default().to_string_lossy();
    session.with_file_name(format!("{stem}.settings.json"))
}

/// The session's token totals so far, from its settings file (none while
/// it is missing or unreadable). Its `inputTokens` leave out the cached
/// part (40 prompt tokens of which 10 cached read as 30 and 10 from a
/// chat-completions model); thinking is output.
pub fn totals(session: &Path) -> Option<Usage> {
    let bytes = std::fs::read(settings_file(session)).ok()?;
    let settings: Value = serde_json::from_slice(&bytes).ok()?;
    let t = settings.get("tokenUsage")?;
    let n = |k: &str| t[k].as_i64().unwrap_or(0);
    Some(Usage {
        input: n("inputTokens"),
        output: n("outputTokens") + n("thinkingTokens"),
        cache_read: n("cacheReadTokens"),
        cache_write: n("cacheCreationTokens"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::chat::ChatReader;
    use crate::transcript::{Batch, Format, LineReader, read_file};

    /// Recorded from Droid 0.225.2 (airgapped, a custom model on a mock
    /// chat-completions API): a greeting, an `Execute` call allowed at its
    /// prompt, `/quit`; and its settings file beside it.
    fn session() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/transcripts/droid/5d74fe8e-c559-46da-954f-bb811ddde92e.jsonl")
    }

    #[test]
    fn a_real_session_reads_into_prompts_replies_tool_calls_results_and_tokens() {
        let b = read_file(&session(), Format::Droid).unwrap();
        let got: Vec<(&str, &str)> = b
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.text.lines().next().unwrap_or("")))
            .collect();
        assert_eq!(
            got,
            [
                ("system", "<system-reminder>"),
                ("user", "hello narwhal"),
                ("assistant", "MOCK REPLY pong"),
                ("user", "SHELL please"),
                ("assistant", ""),
                ("tool", "Command completed successfully"),
                ("assistant", "Ran it."),
            ]
        );
        assert_eq!((b.stats.malformed, b.stats.unknown), (0, 0));
        assert_eq!(b.session_id.as_deref(), Some("5d74fe8e-c559-46da-954f-bb811ddde92e"));
        assert_eq!(b.model.as_deref(), Some("custom:Mock-0"));
        let call = &b.messages[4].tool_calls[0];
        assert_eq!((call.id.as_deref(), call.name.as_str()), (Some("call_1"), "Execute"));
        assert_eq!(call.input["command"], "touch perm-marker");
        let result = b.messages[5].tool_result.as_ref().unwrap();
        assert_eq!(
            (result.tool_use_id.as_deref(), result.is_error),
            (Some("call_1"), false)
        );
        // Four model calls of 11 prompt tokens and 3 out, from the settings file.
        assert_eq!(
            b.usage,
            Usage {
                input: 44,
                output: 12,
                cache_read: 0,
                cache_write: 0
            }
        );
        assert!(b.messages.iter().all(|m| m.at_ms.is_some() && m.uuid.is_some()));
    }

    #[test]
    fn a_failed_result_is_an_error_and_odd_lines_are_counted() {
        let mut out = Batch::default();
        let lines = [
            r#"{"type":"message","id":"m1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","is_error":true,"content":"denied"}]}}"#,
            r#"{"type":"todo_state","id":"t"}"#,
            r#"{"type":"message","id":"m2","message":{"role":"nobody"}}"#,
            r#"{"type":"agent_turn_outcome","reason":"completed"}"#,
        ];
        let mut reader = ChatReader::new(&FORMAT);
        for (i, l) in lines.iter().enumerate() {
            reader.line(l.as_bytes(), i as u64, &mut out);
        }
        assert_eq!(out.messages.len(), 1);
        assert!(out.messages[0].tool_result.as_ref().unwrap().is_error);
        assert_eq!((out.stats.malformed, out.stats.unknown), (1, 1));
        assert_eq!(totals(Path::new("/nowhere/x.jsonl")), None);
    }
}
