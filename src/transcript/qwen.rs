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

use serde::Deserialize;
use serde_json::Value;

use super::gemini::Parts;
use super::model::{self, Message, Role, ToolResult, Usage};
use super::{Batch, LineReader};

#[derive(Deserialize)]
struct Record {
    #[serde(rename = "type")]
    kind: String,
    uuid: Option<String>,
    #[serde(rename = "parentUuid")]
    parent_uuid: Option<String>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    timestamp: Option<String>,
    model: Option<String>,
    #[serde(default)]
    message: Value,
    #[serde(rename = "usageMetadata")]
    usage: Option<Tokens>,
    #[serde(rename = "toolCallResult")]
    result: Option<CallResult>,
}

#[derive(Deserialize)]
struct Tokens {
    #[serde(rename = "promptTokenCount", default)]
    prompt: i64,
    #[serde(rename = "candidatesTokenCount", default)]
    candidates: i64,
    #[serde(rename = "thoughtsTokenCount", default)]
    thoughts: i64,
    #[serde(rename = "cachedContentTokenCount", default)]
    cached: i64,
}

impl Tokens {
    fn usage(&self) -> Usage {
        Usage {
            input: self.prompt - self.cached.min(self.prompt),
            output: self.candidates + self.thoughts,
            cache_read: self.cached,
            cache_write: 0,
        }
    }
}

#[derive(Deserialize)]
struct CallResult {
    status: Option<String>,
}

/// The reader of a Qwen Code chat.
#[derive(Debug, Default)]
pub struct QwenReader;

impl LineReader for QwenReader {
    fn line(&mut self, line: &[u8], offset: u64, out: &mut Batch) {
        let Ok(r) = serde_json::from_slice::<Record>(line) else {
            out.stats.malformed += 1;
            return;
        };
        if out.session_id.is_none() {
            out.session_id.clone_from(&r.session_id);
        }
        let role = match r.kind.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool_result" => Role::Tool,
            "system" => return,
            _ => {
                out.stats.unknown += 1;
                return;
            }
        };
        let parts = &r.message["parts"];
        let mut messages = if role == Role::Tool {
            results(parts, &r, offset)
        } else {
            let mut found = Parts::default();
            found.read(parts);
            let mut m = Message::new(role, found.text, offset);
            m.tool_calls = found.calls;
            if m.text.is_empty() && m.tool_calls.is_empty() {
                return;
            }
            vec![m]
        };
        let usage = r.usage.as_ref().map(Tokens::usage).filter(|u| !u.is_zero());
        if let Some(u) = &usage {
            out.usage.add(u);
        }
        if r.model.is_some() {
            out.model.clone_from(&r.model);
        }
        let at = r.timestamp.as_deref().and_then(model::parse_time);
        for m in &mut messages {
            m.at_ms = at;
            m.uuid.clone_from(&r.uuid);
            m.parent_uuid.clone_from(&r.parent_uuid);
            m.session_id.clone_from(&r.session_id);
            m.model.clone_from(&r.model);
        }
        if let Some(first) = messages.first_mut() {
            first.usage = usage;
        }
        out.messages.extend(messages);
    }
}

/// One `tool` message per `functionResponse` part of a `tool_result` line.
fn results(parts: &Value, r: &Record, offset: u64) -> Vec<Message> {
    let failed = r
        .result
        .as_ref()
        .and_then(|c| c.status.as_deref())
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
    use crate::transcript::{Format, read_file};

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
        let mut reader = QwenReader;
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
