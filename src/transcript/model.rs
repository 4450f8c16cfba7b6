//! The normalized message: what every reader turns its harness's lines into,
//! what the index stores and what `transcript.read` returns.

use serde::{Deserialize, Serialize};

/// Who speaks. Tool results are their own role (a harness usually files them
/// under `user`), so a reader of the conversation can tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    /// Text the harness itself injected (instructions, summaries, notices).
    System,
    /// The result of a tool call.
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Tool => "tool",
        }
    }

    pub fn parse(s: &str) -> Role {
        match s {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            _ => Role::System,
        }
    }
}

/// A tool the assistant asked to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The harness's call id (`toolu_…`, Codex `call_…`), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    /// The call's arguments as JSON; a string when they were too long to keep
    /// whole (`MAX_TOOL_INPUT`) or not JSON at all.
    pub input: serde_json::Value,
}

/// The answer to one tool call; its text is the message's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub is_error: bool,
    /// The subagent this call ran (Claude's `toolUseResult.agentId`): its
    /// sidechain messages carry the same `agent_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
}

/// Tokens, in the sense of the Anthropic API: `input` excludes the cached
/// part, which is `cache_read`; `cache_write` is what was written to the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input: i64,
    pub output: i64,
    pub cache_read: i64,
    pub cache_write: i64,
}

impl Usage {
    pub fn is_zero(&self) -> bool {
        *self == Usage::default()
    }

    pub fn add(&mut self, other: &Usage) {
        self.input += other.input;
        self.output += other.output;
        self.cache_read += other.cache_read;
        self.cache_write += other.cache_write;
    }

    pub fn minus(&self, other: &Usage) -> Usage {
        Usage {
            input: self.input - other.input,
            output: self.output - other.output,
            cache_read: self.cache_read - other.cache_read,
            cache_write: self.cache_write - other.cache_write,
        }
    }
}

/// One normalized message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// The message's text; for a `tool` message, the tool's output. Bounded
    /// to `MAX_TEXT` bytes.
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<ToolResult>,
    /// Tokens of the model response this message is part of, as the harness
    /// recorded them (a response split over several lines repeats them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_uuid: Option<String>,
    /// The session the line names (Claude `sessionId`); the indexer files
    /// the message under the session it was asked to index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Part of a subagent's conversation rather than the main one.
    #[serde(default)]
    pub sidechain: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// For a subagent's message: the parent's tool call that started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_tool_use_id: Option<String>,
    /// Byte offset of the line (or block) it came from in its source file.
    #[serde(default)]
    pub offset: u64,
}

/// Message texts are cut to this many bytes. A tool that reads a large file
/// would otherwise store it twice (once in the harness's file, once here);
/// 64 KiB keeps every result searchable by its head and a page of messages
/// well inside the 1 MiB frame cap.
pub const MAX_TEXT: usize = 64 * 1024;

/// Tool-call arguments longer than this are kept as a cut string (a `Write`
/// call carries a whole file).
pub const MAX_TOOL_INPUT: usize = 4 * 1024;

impl Message {
    pub fn new(role: Role, text: String, offset: u64) -> Message {
        Message {
            role,
            text: bound_text(text),
            tool_calls: Vec::new(),
            tool_result: None,
            usage: None,
            model: None,
            at_ms: None,
            uuid: None,
            parent_uuid: None,
            session_id: None,
            sidechain: false,
            agent_id: None,
            parent_tool_use_id: None,
            offset,
        }
    }

    /// Names of the tools this message calls, space-separated (`Bash Read`).
    pub fn tool_names(&self) -> String {
        let mut names = String::new();
        for c in &self.tool_calls {
            if !names.is_empty() {
                names.push(' ');
            }
            names.push_str(&c.name);
        }
        names
    }
}

pub fn bound_text(text: String) -> String {
    if text.len() <= MAX_TEXT {
        text
    } else {
        crate::text::bounded(&text, MAX_TEXT)
    }
}

/// A tool call's input from its JSON text, cut when long.
pub fn tool_input(json: &str) -> serde_json::Value {
    if json.len() > MAX_TOOL_INPUT {
        return serde_json::Value::String(crate::text::bounded(json, MAX_TOOL_INPUT));
    }
    serde_json::from_str(json).unwrap_or_else(|_| serde_json::Value::String(json.to_string()))
}

/// RFC 3339 (`2026-11-29T07:48:41.602Z`) to milliseconds since the epoch.
pub fn parse_time(s: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339_weak(s.trim()).ok()?;
    t.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_millis() as i64)
}

/// A short one-line summary of a tool call's input, for `⏵ Bash(cmd…)`:
/// the field a person would look for first, else the compact JSON.
pub fn input_summary(input: &serde_json::Value, max_chars: usize) -> String {
    const KEYS: [&str; 10] = [
        "command",
        "cmd",
        "file_path",
        "path",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
        "skill",
    ];
    let raw = match input {
        serde_json::Value::Object(map) => KEYS
            .iter()
            .find_map(|k| match map.get(*k) {
                Some(serde_json::Value::String(s)) => Some(s.clone()),
                // Codex shell calls: `["bash", "-lc", "ls"]`.
                Some(serde_json::Value::Array(parts)) => {
                    Some(parts.iter().filter_map(|p| p.as_str()).collect::<Vec<_>>().join(" "))
                }
                _ => None,
            })
            .unwrap_or_else(|| input.to_string()),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    };
    let flat: String = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max_chars {
        flat
    } else {
        let mut cut: String = flat.chars().take(max_chars.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_summary_prefers_the_command_and_cuts_long_ones() {
        let v = serde_json::json!({ "command": "cargo test --all", "description": "run tests" });
        assert_eq!(input_summary(&v, 40), "cargo test --all");
        assert_eq!(input_summary(&v, 6), "cargo…");
        let v = serde_json::json!({ "command": ["bash", "-lc", "ls"] });
        assert_eq!(input_summary(&v, 40), "bash -lc ls");
        let v = serde_json::json!({ "x": 1 });
        assert_eq!(input_summary(&v, 40), "{\"x\":1}");
    }

    #[test]
    fn times_parse_to_milliseconds() {
        assert_eq!(parse_time("1970-01-01T00:00:01.500Z"), Some(1500));
        assert_eq!(parse_time("not a time"), None);
    }

    #[test]
    fn long_tool_inputs_are_kept_as_a_cut_string() {
        let long = format!("{{\"content\": \"{}\"}}", "x".repeat(MAX_TOOL_INPUT));
        assert!(tool_input(&long).is_string());
        assert!(tool_input("{\"a\": 1}").is_object());
    }
}
