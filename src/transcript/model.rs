//! The normalized message as readers build it: bounded text and tool
//! inputs, times, summaries. The message's values are
//! `values::transcript`'s, re-exported here.

pub use crate::values::transcript::{Message, Role, ToolCall, ToolResult, Usage};

/// Message texts are cut to this many bytes. A tool that reads a large file
/// would otherwise store it twice (once in the harness's file, once here);
/// 64 KiB keeps every result searchable by its head and a page of messages
/// well inside the 1 MiB frame cap.
pub const MAX_TEXT: usize = 64 * 1024;

/// Tool-call arguments longer than this are kept as a cut string (a `Write`
/// call carries a whole file).
pub const MAX_TOOL_INPUT: usize = 4 * 1024;

/// A reader's message: its text bounded (`MAX_TEXT`).
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
