//! GitHub Copilot CLI sessions
//! (`<COPILOT_HOME, ~/.copilot>/session-state/<session>/events.jsonl`).
//!
//! As Copilot CLI 1.0.102 writes them (recorded against a mock
//! OpenAI-compatible provider: `tests/fixtures/transcripts/copilot/`; the
//! event shapes are those of its `schemas/session-events.schema.json`), one
//! event a line, appended once: `{type, data, id, timestamp, parentId}`
//! where `type` is
//!
//! - `session.start` (`data.sessionId`, `selectedModel`) and, for each
//!   resume, `session.resume` in the same file;
//! - `user.message` (`data.content`, the words typed; `transformedContent`
//!   is what the model got);
//! - `assistant.message` (`data.content`, `toolRequests [{toolCallId, name,
//!   arguments}]`, `model`);
//! - `tool.execution_complete` (`data.toolCallId`, `success`, `result
//!   {content}` or `error {message}`);
//! - `session.usage_record` (`data.usage {model, inputTokens,
//!   outputTokens, cacheReadTokens, cacheWriteTokens}`), written just
//!   before the reply it counts; its `inputTokens` include the cached ones
//!   (its code adds them: `input + cacheRead + cacheWrite`);
//! - `session.error` (`data.message`), shown as a system message;
//! - and many kinds of bookkeeping (turns, permissions, tools starting,
//!   the system prompt as `system.message`, shutdown totals), read as
//!   nothing.
//!
//! Read by the chat-style reader (`chat`); this is its description.

use serde_json::Value;

use super::chat::{ChatFormat, Header, Read, Turn, UsageRecord};
use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};

/// A Copilot session as the chat-style reader reads it.
pub const FORMAT: ChatFormat = ChatFormat {
    kind: "type",
    id: "id",
    parent: "parentId",
    header: Some(Header {
        kind: "session.start",
        id: "/data/sessionId",
        model: Some("/data/selectedModel"),
    }),
    session_key: None,
    stamp_session: true,
    usage_record: Some(UsageRecord {
        kind: "session.usage_record",
        at: "/data/usage",
        tokens,
    }),
    ignored: BOOKKEEPING,
    message,
};

fn message(kind: &str, event: &Value, offset: u64) -> Read {
    let data = &event["data"];
    let text = |key: &str| data[key].as_str().unwrap_or_default().to_string();
    match kind {
        "user.message" => Turn::one(Message::new(Role::User, text("content"), offset)),
        "assistant.message" => {
            let mut m = Message::new(Role::Assistant, text("content"), offset);
            m.tool_calls = tool_calls(&data["toolRequests"]);
            m.model = data["model"].as_str().map(str::to_string);
            Read::Turn(Turn {
                model: m.model.clone(),
                messages: vec![m],
                takes_pending: true,
                ..Turn::default()
            })
        }
        "tool.execution_complete" => Turn::one(result(data, offset)),
        "session.error" => Turn::one(Message::new(Role::System, text("message"), offset)),
        _ => Read::Unknown,
    }
}

/// Events of the session's own bookkeeping: its turns, permissions, tools
/// starting and streaming, hooks, subagents, the system prompt, the
/// totals at shutdown (the schema's namespaces that carry no message).
const BOOKKEEPING: &[&str] = &[
    "session.",
    "assistant.",
    "tool.",
    "permission.",
    "hook.",
    "subagent.",
    "skill.",
    "system.",
    "model.",
    "mcp.",
    "user_input.",
    "elicitation.",
    "command.",
    "exit_plan_mode.",
];

/// A usage record's tokens, `input` without the cached part.
fn tokens(usage: &Value) -> Usage {
    let n = |k: &str| usage[k].as_i64().unwrap_or(0);
    let (cache_read, cache_write) = (n("cacheReadTokens"), n("cacheWriteTokens"));
    Usage {
        input: (n("inputTokens") - cache_read - cache_write).max(0),
        output: n("outputTokens"),
        cache_read,
        cache_write,
    }
}

fn tool_calls(requests: &Value) -> Vec<ToolCall> {
    let Some(requests) = requests.as_array() else {
        return Vec::new();
    };
    requests
        .iter()
        .filter_map(|r| {
            Some(ToolCall {
                id: r["toolCallId"].as_str().map(str::to_string),
                name: r["name"].as_str()?.to_string(),
                // Kept as JSON text when long, cut as other readers cut it.
                input: match &r["arguments"] {
                    Value::String(s) => model::tool_input(s),
                    args => model::tool_input(&args.to_string()),
                },
            })
        })
        .collect()
}

/// A finished tool call's output (its error's words when it failed).
fn result(data: &Value, offset: u64) -> Message {
    let failed = data["success"].as_bool() == Some(false);
    let text = data["result"]["content"]
        .as_str()
        .or_else(|| data["error"]["message"].as_str())
        .unwrap_or_default();
    let mut m = Message::new(Role::Tool, text.to_string(), offset);
    m.tool_result = Some(ToolResult {
        tool_use_id: data["toolCallId"].as_str().map(str::to_string),
        is_error: failed,
        agent_id: None,
    });
    m
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::transcript::chat::ChatReader;
    use crate::transcript::{Batch, Format, LineReader, read_file};

    /// Recorded from Copilot CLI 1.0.102 against a mock provider: two
    /// greetings, a `bash` call allowed at its prompt, `/exit`, then
    /// `--resume=ID` and one more prompt (its system prompt cut short).
    fn session() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/transcripts/copilot/1d28b8d7-9177-43dd-822b-b229d2e65fa2.jsonl")
    }

    #[test]
    fn a_real_session_reads_into_prompts_replies_tool_calls_and_results() {
        let b = read_file(&session(), Format::Copilot).unwrap();
        let got: Vec<(&str, &str)> = b
            .messages
            .iter()
            .map(|m| (m.role.as_str(), m.text.lines().next().unwrap_or("")))
            .collect();
        assert_eq!(
            got,
            [
                ("user", "hello narwhal"),
                ("assistant", "MOCK REPLY pong"),
                ("user", "again"),
                ("assistant", "MOCK REPLY pong"),
                ("user", "SHELL please"),
                ("assistant", ""),
                ("tool", ""),
                ("assistant", "Ran it."),
                ("user", "back again"),
                ("assistant", "MOCK REPLY pong"),
            ]
        );
        assert_eq!((b.stats.malformed, b.stats.unknown), (0, 0));
        assert_eq!(b.session_id.as_deref(), Some("1d28b8d7-9177-43dd-822b-b229d2e65fa2"));
        assert_eq!(b.model.as_deref(), Some("mock-model"));
        let call = &b.messages[5].tool_calls[0];
        assert_eq!((call.id.as_deref(), call.name.as_str()), (Some("call_1"), "bash"));
        assert_eq!(call.input["command"], "touch perm-marker");
        let result = b.messages[6].tool_result.as_ref().unwrap();
        assert_eq!(result.tool_use_id.as_deref(), Some("call_1"));
        assert!(!result.is_error);
        assert!(b.messages[6].text.contains("completed with exit code 0"));
        // Five replies of 11 prompt tokens and 3 out, each on its reply.
        assert_eq!(
            b.usage,
            Usage {
                input: 55,
                output: 15,
                cache_read: 0,
                cache_write: 0
            }
        );
        assert!(
            b.messages
                .iter()
                .filter(|m| m.role == Role::Assistant)
                .all(|m| m.usage.is_some())
        );
        assert!(b.messages.iter().all(|m| m.at_ms.is_some() && m.uuid.is_some()));
    }

    #[test]
    fn cached_tokens_are_taken_out_of_the_input_and_a_failure_is_an_error() {
        let mut out = Batch::default();
        let mut reader = ChatReader::new(&FORMAT);
        let lines = [
            r#"{"type":"session.usage_record","data":{"usage":{"inputTokens":40,"outputTokens":7,"cacheReadTokens":10,"cacheWriteTokens":0}}}"#,
            r#"{"type":"assistant.message","data":{"content":"hi","model":"m"}}"#,
            r#"{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":false,"error":{"message":"denied"}}}"#,
            r#"{"type":"session.error","data":{"errorType":"authentication","message":"Authentication failed"}}"#,
            r#"{"type":"assistant.turn_end","data":{}}"#,
            r#"{"type":"workflow.run_started","data":{}}"#,
            r#"{"type":"user.message""#,
        ];
        for (i, l) in lines.iter().enumerate() {
            reader.line(l.as_bytes(), i as u64, &mut out);
        }
        let usage = Usage {
            input: 30,
            output: 7,
            cache_read: 10,
            cache_write: 0,
        };
        assert_eq!((out.usage, out.messages[0].usage), (usage, Some(usage)));
        assert_eq!(out.messages[1].text, "denied");
        assert!(out.messages[1].tool_result.as_ref().unwrap().is_error);
        assert_eq!(
            (out.messages[2].role, out.messages[2].text.as_str()),
            (Role::System, "Authentication failed")
        );
        assert_eq!((out.stats.malformed, out.stats.unknown), (1, 1));
    }

    #[test]
    fn a_usage_record_read_just_before_a_pause_still_reaches_its_reply() {
        let mut first = ChatReader::new(&FORMAT);
        let mut out = Batch::default();
        first.line(
            br#"{"type":"session.usage_record","data":{"usage":{"inputTokens":5,"outputTokens":2}}}"#,
            0,
            &mut out,
        );
        let mut next = ChatReader::new(&FORMAT);
        next.restore(&first.state());
        next.line(br#"{"type":"assistant.message","data":{"content":"ok"}}"#, 90, &mut out);
        assert_eq!(out.messages[0].usage.map(|u| u.output), Some(2));
    }
}
