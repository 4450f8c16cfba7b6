//! Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! Each line is `{timestamp, type, payload}`. `session_meta` names the
//! session; `turn_context` names the model of the turn; `response_item`
//! lines are the conversation as the model saw it (messages, function calls
//! and their outputs); `event_msg` lines are UI events that mostly repeat the
//! response items, except `token_count`, the only place tokens are reported.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};
use super::{Batch, LineReader};

/// Line types read and skipped on purpose.
const KNOWN_SKIPPED: [&str; 4] = ["world_state", "token_usage_record", "compacted", "ghost_snapshot"];

/// Text Codex itself puts in `user` messages.
const HARNESS_PREFIXES: [&str; 4] = [
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md",
    "<permissions instructions>",
];

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SessionMeta<'a> {
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    session_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct TurnContext<'a> {
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Vec<Part<'a>>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    /// A function call's arguments: JSON in a string.
    #[serde(borrow)]
    arguments: Option<Cow<'a, str>>,
    /// A custom tool call's input: free text.
    #[serde(borrow)]
    input: Option<Cow<'a, str>>,
    #[serde(borrow)]
    call_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    output: Option<&'a RawValue>,
    #[serde(borrow)]
    action: Option<&'a RawValue>,
    #[serde(rename = "internal_chat_message_metadata_passthrough")]
    passthrough: Option<Passthrough>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
struct Passthrough {
    #[serde(default)]
    content_item_metadata: Vec<ItemMetadata>,
}

#[derive(Deserialize)]
struct ItemMetadata {
    provenance: Option<Provenance>,
}

#[derive(Deserialize)]
struct Provenance {
    #[serde(rename = "type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    info: Option<TokenInfo>,
}

#[derive(Deserialize)]
struct TokenInfo {
    last_token_usage: Option<TokenUsage>,
}

#[derive(Deserialize)]
struct TokenUsage {
    #[serde(default)]
    input_tokens: i64,
    #[serde(default)]
    cached_input_tokens: i64,
    #[serde(default)]
    cache_write_input_tokens: i64,
    #[serde(default)]
    output_tokens: i64,
}

/// The output of a shell call as Codex encodes it: JSON in a string.
#[derive(Deserialize)]
struct ShellOutput {
    output: String,
    metadata: Option<ShellMetadata>,
}

#[derive(Deserialize)]
struct ShellMetadata {
    exit_code: Option<i64>,
}

#[derive(Deserialize)]
struct StructuredOutput {
    content: Option<String>,
    success: Option<bool>,
}

/// Reads one Codex rollout.
#[derive(Debug, Default)]
pub struct CodexReader {
    /// The model of the current turn (`turn_context`).
    model: Option<String>,
}

impl LineReader for CodexReader {
    fn line(&mut self, line: &[u8], offset: u64, out: &mut Batch) {
        let Ok(l) = serde_json::from_slice::<Line<'_>>(line) else {
            out.stats.malformed += 1;
            return;
        };
        let (Some(kind), Some(payload)) = (l.kind.as_deref(), l.payload) else {
            out.stats.malformed += 1;
            return;
        };
        let at = l.timestamp.as_deref().and_then(model::parse_time);
        let ok = match kind {
            "session_meta" => serde_json::from_str::<SessionMeta<'_>>(payload.get())
                .map(|m| {
                    if let Some(id) = m.id.or(m.session_id) {
                        out.session_id.get_or_insert_with(|| id.into_owned());
                    }
                })
                .is_ok(),
            "turn_context" => serde_json::from_str::<TurnContext<'_>>(payload.get())
                .map(|t| {
                    if let Some(m) = t.model {
                        self.model = Some(m.to_string());
                        out.model = self.model.clone();
                    }
                })
                .is_ok(),
            "response_item" => match serde_json::from_str::<Item<'_>>(payload.get()) {
                Ok(item) => {
                    self.item(item, offset, at, out);
                    true
                }
                Err(_) => false,
            },
            "event_msg" => match serde_json::from_str::<Event<'_>>(payload.get()) {
                Ok(e) => {
                    if e.kind == "token_count"
                        && let Some(u) = e.info.and_then(|i| i.last_token_usage)
                    {
                        out.usage.add(&Usage {
                            input: u.input_tokens - u.cached_input_tokens,
                            output: u.output_tokens,
                            cache_read: u.cached_input_tokens,
                            cache_write: u.cache_write_input_tokens,
                        });
                    }
                    true
                }
                Err(_) => false,
            },
            k if KNOWN_SKIPPED.contains(&k) => true,
            _ => {
                out.stats.unknown += 1;
                true
            }
        };
        if !ok {
            out.stats.malformed += 1;
        }
    }

    fn state(&self) -> serde_json::Value {
        serde_json::json!({ "model": self.model })
    }

    fn restore(&mut self, state: &serde_json::Value) {
        self.model = state["model"].as_str().map(str::to_string);
    }
}

impl CodexReader {
    fn item(&mut self, item: Item<'_>, offset: u64, at: Option<i64>, out: &mut Batch) {
        let mut push = |mut m: Message| {
            m.at_ms = at;
            out.messages.push(m);
        };
        match item.kind.as_ref() {
            "message" => {
                let text = item
                    .content
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|p| p.text)
                    .collect::<Vec<_>>()
                    .join("\n\n");
                let from_harness = item.passthrough.is_some_and(|p| {
                    p.content_item_metadata.iter().any(|m| {
                        m.provenance
                            .as_ref()
                            .and_then(|p| p.kind.as_deref())
                            .is_some_and(|k| k != "user")
                    })
                });
                let role = match item.role.as_deref() {
                    Some("assistant") => Role::Assistant,
                    Some("user") if !from_harness && !HARNESS_PREFIXES.iter().any(|p| text.starts_with(p)) => {
                        Role::User
                    }
                    _ => Role::System,
                };
                let mut m = Message::new(role, text, offset);
                if role == Role::Assistant {
                    m.model = self.model.clone();
                }
                push(m);
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                let input = match (item.arguments, item.input, item.action) {
                    (Some(args), _, _) => model::tool_input(&args),
                    (_, Some(text), _) => serde_json::Value::String(crate::text::bounded(&text, model::MAX_TOOL_INPUT)),
                    (_, _, Some(action)) => model::tool_input(action.get()),
                    _ => serde_json::Value::Null,
                };
                let mut m = Message::new(Role::Assistant, String::new(), offset);
                m.model = self.model.clone();
                m.tool_calls.push(ToolCall {
                    id: item.call_id.map(Cow::into_owned),
                    name: item.name.map(Cow::into_owned).unwrap_or_else(|| "shell".into()),
                    input,
                });
                push(m);
            }
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
                let (text, is_error) = item.output.map(output_text).unwrap_or_default();
                let mut m = Message::new(Role::Tool, text, offset);
                m.tool_result = Some(ToolResult {
                    tool_use_id: item.call_id.map(Cow::into_owned),
                    is_error,
                    agent_id: None,
                });
                push(m);
            }
            // Reasoning is encrypted scratch work; searches and web calls
            // carry nothing to show.
            _ => {}
        }
    }
}

/// A tool output's text and whether it failed. Codex writes a string (for
/// shell calls, JSON with the exit code inside it) or `{content, success}`.
fn output_text(raw: &RawValue) -> (String, bool) {
    let s = raw.get();
    if s.starts_with('"') {
        let text: String = serde_json::from_str(s).unwrap_or_default();
        if text.starts_with('{')
            && let Ok(shell) = serde_json::from_str::<ShellOutput>(&text)
        {
            let failed = shell.metadata.and_then(|m| m.exit_code).is_some_and(|c| c != 0);
            return (shell.output, failed);
        }
        return (text, false);
    }
    match serde_json::from_str::<StructuredOutput>(s) {
        Ok(o) => (o.content.unwrap_or_default(), o.success == Some(false)),
        Err(_) => (s.to_string(), false),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::transcript::{Format, read_file};

    fn rollout() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "tests/fixtures/transcripts/codex/rollout-2026-11-29T07-47-04-01a22645-9705-7352-9a7c-e05a97022f2e.jsonl",
        )
    }

    #[test]
    fn a_rollout_reads_into_messages_tool_calls_and_results() {
        let b = read_file(&rollout(), Format::Codex).unwrap();
        let roles: Vec<&str> = b.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(
            roles,
            [
                "system",
                "system",
                "user",
                "assistant",
                "tool",
                "assistant",
                "tool",
                "assistant",
                "tool",
                "assistant"
            ]
        );
        assert_eq!(b.session_id.as_deref(), Some("01a22645-9705-7352-9a7c-e05a97022f2e"));
        assert_eq!(b.model.as_deref(), Some("mock-model"));
        assert_eq!(b.messages[2].text, "list the files");
        let shell = &b.messages[3].tool_calls[0];
        assert_eq!((shell.name.as_str(), shell.id.as_deref()), ("shell", Some("call_1")));
        assert_eq!(shell.input["command"][2], "ls");
        let out = &b.messages[4];
        assert!(out.text.contains("wombat.rs"));
        assert!(!out.tool_result.as_ref().unwrap().is_error);
        assert_eq!(b.messages[5].tool_calls[0].name, "apply_patch");
        assert!(
            b.messages[5].tool_calls[0]
                .input
                .as_str()
                .unwrap()
                .contains("Begin Patch")
        );
        assert!(b.messages[8].tool_result.as_ref().unwrap().is_error);
        let last = b.messages.last().unwrap();
        assert!(last.text.contains("capybara"));
        assert_eq!(last.model.as_deref(), Some("mock-model"));
        assert_eq!(last.at_ms, model::parse_time("2026-11-29T07:47:04.696Z"));
    }

    /// Recorded from the interactive Codex 0.171.0 TUI against a mock
    /// model (tests/clis/codex.rs does the same): two prompts, then a third
    /// after `codex resume ID`, all in one rollout. Long harness texts are
    /// elided and paths normalized.
    fn interactive_rollout() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "tests/fixtures/transcripts/codex/rollout-2026-11-29T10-47-05-01a226ea-66f4-7fc3-bbaa-d4aa6bcff7b0.jsonl",
        )
    }

    #[test]
    fn an_interactive_and_resumed_rollout_reads_every_turn_and_skips_nothing() {
        let b = read_file(&interactive_rollout(), Format::Codex).unwrap();
        let said: Vec<(&str, &str)> = b
            .messages
            .iter()
            .filter(|m| m.role != Role::System)
            .map(|m| (m.role.as_str(), m.text.as_str()))
            .collect();
        let reply = "Hello from the mock model.";
        assert_eq!(
            said,
            [
                ("user", "hello there"),
                ("assistant", reply),
                ("user", "second"),
                ("assistant", reply),
                ("user", "third"),
                ("assistant", reply)
            ]
        );
        // The developer instructions and the environment context.
        assert_eq!(b.messages.iter().filter(|m| m.role == Role::System).count(), 2);
        assert_eq!(b.session_id.as_deref(), Some("01a226ea-66f4-7fc3-bbaa-d4aa6bcff7b0"));
        assert_eq!(b.model.as_deref(), Some("mock-model"));
        assert_eq!((b.stats.malformed, b.stats.unknown), (0, 0), "{:?}", b.stats);
        assert_eq!((b.usage.input, b.usage.output), (30, 15));
    }

    #[test]
    fn tokens_come_from_token_count_events_only() {
        let b = read_file(&rollout(), Format::Codex).unwrap();
        assert_eq!(
            b.usage,
            Usage {
                input: 60,
                output: 6,
                cache_read: 40,
                cache_write: 0
            }
        );
    }

    #[test]
    fn a_truncated_last_line_is_counted_and_unknown_types_are_ignored() {
        let b = read_file(&rollout(), Format::Codex).unwrap();
        assert_eq!(b.stats.malformed, 1, "{:?}", b.stats);
        assert_eq!(b.stats.unknown, 0, "{:?}", b.stats);
        let mut r = CodexReader::default();
        let mut out = Batch::default();
        r.line(br#"{"type":"from_the_future","payload":{}}"#, 0, &mut out);
        r.line(br#"{"type":"response_item","payload":42}"#, 0, &mut out);
        assert_eq!((out.stats.unknown, out.stats.malformed), (1, 1));
    }
}
