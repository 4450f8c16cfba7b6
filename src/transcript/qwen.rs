//! Qwen Code chats (`<QWEN_HOME, ~/.qwen>/projects/<cwd>/chats/<session>.jsonl`).
//!
//! As Qwen Code 0.24.4 writes them (recorded against a mock OpenAI-compatible
//! model: `tests/fixtures/transcripts/qwen/`), one JSON record a line, each
//! appended once and never rewritten: `{uuid, parentUuid, sessionId,
//! timestamp, type, cwd, version, …}` where `type` is
//!
//! - `user`: a prompt, `message {role: user, parts}` (Gemini's part list);
//! - `assistant`: a reply, `message {role: model, parts}` with text and
//!   `functionCall {id, name, args}` parts, its `model` and its tokens
//!   (`usageMetadata`, Gemini's counts: `promptTokenCount` includes the
//!   cached part `cachedContentTokenCount`);
//! - `tool_result`: the results sent back, `functionResponse {id, name,
//!   response {output | error}}` parts, and `toolCallResult {callId,
//!   status}`;
//! - `system`: the CLI's bookkeeping (`subtype` `ui_telemetry`,
//!   `attribution_snapshot`, `file_history_snapshot`, …), read as nothing.
//!
//! A resumed session appends to its own file; a fork (`--fork-session`)
//! copies the history into a new file under a new id. So the reader keeps no
//! state: every line stands alone.

//!
//! Read by the chat-style reader (`chat`); this is its description.

use serde_json::Value;

use super::chat::{ChatFormat, Read, Turn};
use super::gemini::Parts;
use super::model::{Message, Role, ToolResult, Usage};

/// A Qwen Code chat as the chat-style reader reads it.
pub const FORMAT: ChatFormat = ChatFormat {
    kind: "type",
    id: "uuid",
    parent: "parentUuid",
    header: None,
    session_key: Some("sessionId"),
    stamp_session: true,
    usage_record: None,
    ignored: &["system"],
    message,
};

fn message(kind: &str, record: &Value, offset: u64) -> Read {
    let role = match kind {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool_result" => Role::Tool,
        _ => return Read::Unknown,
    };
    let parts = &record["message"]["parts"];
    let mut messages = if role == Role::Tool {
        results(parts, record, offset)
    } else {
        let mut found = Parts::default();
        found.read(parts);
        let mut m = Message::new(role, found.text, offset);
        m.tool_calls = found.calls;
        if m.text.is_empty() && m.tool_calls.is_empty() {
            return Read::Nothing;
        }
        vec![m]
    };
    let model = record["model"].as_str().map(str::to_string);
    for m in &mut messages {
        m.model.clone_from(&model);
    }
    Read::Turn(Turn {
        messages,
        model,
        usage: Some(tokens(&record["usageMetadata"])),
        takes_pending: false,
    })
}

/// Gemini's counts: `promptTokenCount` includes the cached part.
fn tokens(t: &Value) -> Usage {
    let n = |k: &str| t[k].as_i64().unwrap_or(0);
    let (prompt, cached) = (n("promptTokenCount"), n("cachedContentTokenCount"));
    Usage {
        input: prompt - cached.min(prompt),
        output: n("candidatesTokenCount") + n("thoughtsTokenCount"),
        cache_read: cached,
        cache_write: 0,
    }
}

/// One `tool` message per `functionResponse` part of a `tool_result` line.
fn results(parts: &Value, record: &Value, offset: u64) -> Vec<Message> {
    let failed = record["toolCallResult"]["status"]
        .as_str()
        .is_some_and(|s| s != "success");
    let Some(parts) = parts.as_array() else {
        return Vec::new();
    };
    parts
        .iter()
        .filter_map(|p| p.get("functionResponse"))
        .map(|resp| {
            let response = &resp["response"];
            let (text, error) = match (response.get("output"), response.get("error")) {
                (Some(Value::String(s)), _) => (s.clone(), false),
                (_, Some(Value::String(s))) => (s.clone(), true),
                _ => (response.to_string(), false),
            };
            let mut m = Message::new(Role::Tool, text, offset);
            m.tool_result = Some(ToolResult {
                tool_use_id: resp["id"].as_str().map(str::to_string),
                is_error: error || failed,
                agent_id: None,
            });
            m
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::transcript::chat::ChatReader;
    use crate::transcript::{Batch, Format, LineReader, read_file};

    /// Recorded from Qwen Code 0.24.4 against a mock model: a greeting, a
    /// `run_shell_command` call allowed at its prompt, `/quit`, then
    /// `--resume` of the session and one more prompt.
    fn chat() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/transcripts/qwen/11111111-2222-4333-8444-555555555555.jsonl")
    }

    #[test]
    fn a_real_chat_reads_into_prompts_replies_tool_calls_and_results() {
        let b = read_file(&chat(), Format::Qwen).unwrap();
        let got: Vec<(&str, &str)> = b
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.text.lines().next().unwrap_or("")))
            .collect();
        assert_eq!(
            got,
            [
                ("user", "hello narwhal"),
                ("assistant", "Mock reply to: hello narwhal"),
                ("user", "SHELL please"),
                ("assistant", ""),
                ("tool", "Command: touch perm-marker"),
                ("assistant", "Ran it."),
                ("user", "back again"),
                ("assistant", "Mock reply to: back again"),
            ]
        );
        assert_eq!((b.stats.malformed, b.stats.unknown), (0, 0));
        assert_eq!(b.session_id.as_deref(), Some("11111111-2222-4333-8444-555555555555"));
        assert_eq!(b.model.as_deref(), Some("mock-model"));
        let call = &b.messages[3].tool_calls[0];
        assert_eq!(
            (call.id.as_deref(), call.name.as_str()),
            (Some("call_1"), "run_shell_command")
        );
        assert_eq!(call.input["command"], "touch perm-marker");
        let result = b.messages[4].tool_result.as_ref().unwrap();
        assert_eq!(result.tool_use_id.as_deref(), Some("call_1"));
        assert!(!result.is_error);
        // Four replies of 40 prompt tokens (10 of them cached) and 7 out.
        assert_eq!(
            b.usage,
            Usage {
                input: 120,
                output: 28,
                cache_read: 40,
                cache_write: 0
            }
        );
        assert_eq!(b.messages[1].usage.map(|u| u.output), Some(7));
        assert!(b.messages.iter().all(|m| m.at_ms.is_some() && m.uuid.is_some()));
    }

    #[test]
    fn a_failed_call_s_result_is_an_error_and_odd_lines_are_counted() {
        let mut out = Batch::default();
        let mut reader = ChatReader::new(&FORMAT);
        let lines = [
            r#"{"type":"tool_result","sessionId":"s","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"x","response":{"error":"denied"}}}]},"toolCallResult":{"callId":"c1","status":"error"}}"#,
            r#"{"type":"checkpoint","sessionId":"s"}"#,
            r#"{"type":"user""#,
            r#"{"type":"system","subtype":"ui_telemetry"}"#,
        ];
        for (i, l) in lines.iter().enumerate() {
            reader.line(l.as_bytes(), i as u64, &mut out);
        }
        assert_eq!(out.messages.len(), 1);
        assert_eq!(out.messages[0].text, "denied");
        assert!(out.messages[0].tool_result.as_ref().unwrap().is_error);
        assert_eq!((out.stats.malformed, out.stats.unknown), (1, 1));
    }
}
