//! Claude Code's session JSONL (`~/.claude/projects/<cwd>/<session>.jsonl`)
//! and its subagent sidechains (`<session>/subagents/agent-<id>.jsonl`, with
//! `agent-<id>.meta.json` naming the parent's tool call).
//!
//! Lines of type `user` and `assistant` carry an Anthropic API message;
//! `system` lines carry harness notices; `attachment`,
//! `file-history-snapshot`, `permission-mode`, `mode`, `last-prompt`,
//! `summary` and a few more are bookkeeping, read and ignored. One model
//! response is often split over several `assistant` lines (one per content
//! block) that repeat its id and usage: its tokens count once.
//!
//! Lines are deserialized into borrowed structs with only the fields used,
//! so the rest of a line is skipped without building a JSON tree (the
//! indexing budget is 100 MB in 5 s, docs/design.md §10).

use std::borrow::Cow;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::model::{self, Message, Role, ToolCall, ToolResult, Usage, bound_text};
use super::{Batch, LineReader};

/// Bookkeeping line types this reader knows and skips on purpose.
const KNOWN_SKIPPED: [&str; 11] = [
    "attachment",
    "file-history-snapshot",
    "permission-mode",
    "mode",
    "last-prompt",
    "summary",
    "queue-operation",
    "custom-title",
    "agent-name",
    "progress",
    "tag",
];

/// A subagent's transcript: which agent, and which tool call of the parent
/// conversation started it (from `agent-<id>.meta.json`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SubagentLink {
    pub agent_id: String,
    pub tool_use_id: Option<String>,
    pub agent_type: Option<String>,
    pub description: Option<String>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "toolUseId")]
    tool_use_id: Option<String>,
    #[serde(rename = "agentType")]
    agent_type: Option<String>,
    description: Option<String>,
}

impl SubagentLink {
    /// The link for `…/subagents/agent-<id>.jsonl`, from its `.meta.json`
    /// when there is one; `None` for a file that is not a subagent's.
    pub fn beside(path: &Path) -> Option<SubagentLink> {
        let name = path.file_name()?.to_str()?;
        let agent_id = name.strip_prefix("agent-")?.strip_suffix(".jsonl")?;
        if path.parent()?.file_name()? != "subagents" {
            return None;
        }
        let meta: Option<Meta> = std::fs::read(path.with_extension("meta.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        Some(SubagentLink {
            agent_id: agent_id.to_string(),
            tool_use_id: meta.as_ref().and_then(|m| m.tool_use_id.clone()),
            agent_type: meta.as_ref().and_then(|m| m.agent_type.clone()),
            description: meta.and_then(|m| m.description),
        })
    }
}

/// The subagent transcripts of a session file: `<session>/subagents/agent-*.jsonl`.
pub fn subagent_files(session_file: &Path) -> Vec<std::path::PathBuf> {
    let dir = session_file.with_extension("").join("subagents");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| SubagentLink::beside(p).is_some())
        .collect();
    files.sort();
    files
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<ApiMessage<'a>>,
    #[serde(borrow)]
    uuid: Option<Cow<'a, str>>,
    #[serde(rename = "parentUuid", borrow)]
    parent_uuid: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: bool,
    #[serde(rename = "agentId", borrow)]
    agent_id: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "isMeta", default)]
    is_meta: bool,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: bool,
    /// Only its `agentId` is read, and only when present.
    #[serde(rename = "toolUseResult", borrow)]
    tool_use_result: Option<&'a RawValue>,
    /// The text of a `system` line.
    #[serde(borrow)]
    content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ApiMessage<'a> {
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    /// A string, or an array of content blocks.
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    usage: Option<ApiUsage>,
}

#[derive(Deserialize, Default)]
struct ApiUsage {
    #[serde(default)]
    input_tokens: i64,
    #[serde(default)]
    output_tokens: i64,
    #[serde(default)]
    cache_read_input_tokens: i64,
    #[serde(default)]
    cache_creation_input_tokens: i64,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_use_id: Option<Cow<'a, str>>,
    /// A tool result's content: a string or an array of blocks.
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct AgentResult<'a> {
    #[serde(rename = "agentId", borrow)]
    agent_id: Option<Cow<'a, str>>,
}

/// Reads one Claude Code JSONL file.
#[derive(Debug, Default)]
pub struct ClaudeReader {
    link: Option<SubagentLink>,
    /// The last model response whose tokens were counted, and how many:
    /// a repeat of it adds only the difference.
    last_response: Option<(String, Usage)>,
}

impl ClaudeReader {
    pub fn new(link: Option<SubagentLink>) -> ClaudeReader {
        ClaudeReader {
            link,
            last_response: None,
        }
    }
}

impl LineReader for ClaudeReader {
    fn line(&mut self, line: &[u8], offset: u64, out: &mut Batch) {
        let Ok(l) = serde_json::from_slice::<Line<'_>>(line) else {
            out.stats.malformed += 1;
            return;
        };
        if out.session_id.is_none()
            && let Some(s) = &l.session_id
        {
            out.session_id = Some(s.to_string());
        }
        let kind = l.kind.as_deref().unwrap_or("");
        let base = |role: Role, text: String| {
            let mut m = Message::new(role, text, offset);
            m.at_ms = l.timestamp.as_deref().and_then(model::parse_time);
            m.uuid = l.uuid.as_deref().map(str::to_string);
            m.parent_uuid = l.parent_uuid.as_deref().map(str::to_string);
            m.session_id = l.session_id.as_deref().map(str::to_string);
            m.sidechain = l.is_sidechain || self.link.is_some();
            m.agent_id = l
                .agent_id
                .as_deref()
                .map(str::to_string)
                .or_else(|| self.link.as_ref().map(|k| k.agent_id.clone()));
            m.parent_tool_use_id = self.link.as_ref().and_then(|k| k.tool_use_id.clone());
            m
        };
        match kind {
            "user" | "assistant" => {
                let Some(msg) = &l.message else {
                    out.stats.malformed += 1;
                    return;
                };
                let Some(content) = msg.content else {
                    out.stats.malformed += 1;
                    return;
                };
                let Some(parsed) = Content::parse(content) else {
                    out.stats.malformed += 1;
                    return;
                };
                if kind == "assistant" || msg.role.as_deref() == Some("assistant") {
                    let mut m = base(Role::Assistant, parsed.text);
                    m.tool_calls = parsed.calls;
                    m.model = msg.model.as_deref().map(str::to_string);
                    if let Some(u) = &msg.usage {
                        let usage = Usage {
                            input: u.input_tokens,
                            output: u.output_tokens,
                            cache_read: u.cache_read_input_tokens,
                            cache_write: u.cache_creation_input_tokens,
                        };
                        m.usage = Some(usage);
                        self.count_usage(msg.id.as_deref(), usage, out);
                    }
                    if m.model.is_some() && m.model.as_deref() != Some("<synthetic>") {
                        out.model = m.model.clone();
                    }
                    if !m.text.is_empty() || !m.tool_calls.is_empty() {
                        out.messages.push(m);
                    }
                } else {
                    let role = if l.is_meta || l.is_compact_summary {
                        Role::System
                    } else {
                        Role::User
                    };
                    if !parsed.text.is_empty() {
                        out.messages.push(base(role, parsed.text));
                    }
                    let agent = l.tool_use_result.and_then(|r| {
                        serde_json::from_str::<AgentResult<'_>>(r.get())
                            .ok()
                            .and_then(|a| a.agent_id.map(|s| s.to_string()))
                    });
                    for r in parsed.results {
                        let mut m = base(Role::Tool, r.text);
                        m.tool_result = Some(ToolResult {
                            tool_use_id: r.tool_use_id,
                            is_error: r.is_error,
                            agent_id: agent.clone(),
                        });
                        out.messages.push(m);
                    }
                }
            }
            "system" => {
                if let Some(text) = l.content.as_deref().filter(|t| !t.trim().is_empty()) {
                    out.messages.push(base(Role::System, text.to_string()));
                }
            }
            k if KNOWN_SKIPPED.contains(&k) => {}
            _ => out.stats.unknown += 1,
        }
    }

    fn state(&self) -> serde_json::Value {
        match &self.last_response {
            Some((id, u)) => serde_json::json!({ "last_response": id, "usage": u }),
            None => serde_json::Value::Null,
        }
    }

    fn restore(&mut self, state: &serde_json::Value) {
        self.last_response = state["last_response"].as_str().map(|id| {
            let usage = serde_json::from_value(state["usage"].clone()).unwrap_or_default();
            (id.to_string(), usage)
        });
    }
}

impl ClaudeReader {
    fn count_usage(&mut self, id: Option<&str>, usage: Usage, out: &mut Batch) {
        match (&self.last_response, id) {
            (Some((last, counted)), Some(id)) if last == id => {
                out.usage.add(&usage.minus(counted));
            }
            _ => out.usage.add(&usage),
        }
        if let Some(id) = id {
            self.last_response = Some((id.to_string(), usage));
        }
    }
}

struct ResultPart {
    tool_use_id: Option<String>,
    is_error: bool,
    text: String,
}

/// A message's content blocks, sorted into what the normalized model keeps.
#[derive(Default)]
struct Content {
    text: String,
    calls: Vec<ToolCall>,
    results: Vec<ResultPart>,
}

impl Content {
    fn parse(raw: &RawValue) -> Option<Content> {
        let s = raw.get();
        let mut c = Content::default();
        if s.starts_with('"') {
            c.text = bound_text(serde_json::from_str::<String>(s).ok()?);
            return Some(c);
        }
        let blocks: Vec<Block<'_>> = serde_json::from_str(s).ok()?;
        for b in blocks {
            match b.kind.as_ref() {
                "text" => push_text(&mut c.text, b.text.as_deref().unwrap_or("")),
                "tool_use" | "server_tool_use" => c.calls.push(ToolCall {
                    id: b.id.map(|s| s.into_owned()),
                    name: b.name.map(|s| s.into_owned()).unwrap_or_default(),
                    input: b
                        .input
                        .map(|i| model::tool_input(i.get()))
                        .unwrap_or(serde_json::Value::Null),
                }),
                "tool_result" => c.results.push(ResultPart {
                    tool_use_id: b.tool_use_id.map(|s| s.into_owned()),
                    is_error: b.is_error.unwrap_or(false),
                    text: bound_text(b.content.map(result_text).unwrap_or_default()),
                }),
                "image" => push_text(&mut c.text, "[image]"),
                // Thinking is the model's scratch work, not the conversation.
                _ => {}
            }
        }
        c.text = bound_text(c.text);
        Some(c)
    }
}

fn push_text(into: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    if !into.is_empty() {
        into.push_str("\n\n");
    }
    into.push_str(text);
}

/// A tool result's content: a string, or text (and image) blocks.
fn result_text(raw: &RawValue) -> String {
    let s = raw.get();
    if s.starts_with('"') {
        return serde_json::from_str(s).unwrap_or_default();
    }
    let Ok(blocks) = serde_json::from_str::<Vec<Block<'_>>>(s) else {
        return String::new();
    };
    let mut text = String::new();
    for b in blocks {
        match b.kind.as_ref() {
            "text" => {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(b.text.as_deref().unwrap_or(""));
            }
            "image" => text.push_str("[image]"),
            _ => {}
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Format, read_file};

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/transcripts")
            .join(name)
    }

    const SESSION: &str = "claude/11111111-2222-4333-8444-555555555555.jsonl";

    #[test]
    fn a_session_reads_into_user_assistant_tool_and_system_messages() {
        let b = read_file(&fixture(SESSION), Format::Claude).unwrap();
        let roles: Vec<&str> = b.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(
            roles,
            [
                "user",
                "assistant",
                "user",
                "assistant",
                "tool",
                "assistant",
                "user",
                "assistant",
                "assistant",
                "tool",
                "assistant",
                "system"
            ]
        );
        assert_eq!(b.session_id.as_deref(), Some("11111111-2222-4333-8444-555555555555"));
        assert_eq!(b.model.as_deref(), Some("claude-opus-4-8"));
        let first = &b.messages[0];
        assert_eq!(first.text, "hello");
        assert_eq!(first.uuid.as_deref(), Some("u-0001"));
        assert_eq!(first.at_ms, model::parse_time("2026-11-29T07:48:41.602Z"));
        let bash = &b.messages[3];
        assert_eq!(bash.tool_calls[0].name, "Bash");
        assert_eq!(bash.tool_calls[0].id.as_deref(), Some("toolu_0009"));
        assert_eq!(bash.tool_calls[0].input["command"], "cargo test --quiet");
        let result = &b.messages[4];
        assert!(result.tool_result.as_ref().unwrap().is_error);
        assert!(result.text.contains("zebrafish"), "{}", result.text);
        assert_eq!(result.parent_uuid.as_deref(), Some("u-0004"));
        let agent_result = &b.messages[9];
        assert_eq!(
            agent_result.tool_result.as_ref().unwrap().agent_id.as_deref(),
            Some("a0b1c2d3e4f5a6b7c")
        );
        assert_eq!(b.stats.malformed, 0);
    }

    #[test]
    fn a_split_response_counts_its_tokens_once() {
        let b = read_file(&fixture(SESSION), Format::Claude).unwrap();
        // Five responses of 10 in / 12 out, one of them split over two lines.
        assert_eq!(b.usage.input, 50);
        assert_eq!(b.usage.output, 60);
        assert_eq!(b.usage.cache_read, 100);
    }

    #[test]
    fn malformed_truncated_and_unknown_lines_are_counted_and_skipped() {
        let b = read_file(&fixture("claude/damaged.jsonl"), Format::Claude).unwrap();
        let texts: Vec<&str> = b.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["before the damage", "after the damage", "the end"]);
        assert_eq!(b.stats.malformed, 3, "{:?}", b.stats);
        assert_eq!(b.stats.unknown, 1, "{:?}", b.stats);
    }

    #[test]
    fn subagent_messages_link_to_the_parent_tool_call() {
        let path = fixture("claude/11111111-2222-4333-8444-555555555555/subagents/agent-a0b1c2d3e4f5a6b7c.jsonl");
        let link = SubagentLink::beside(&path).unwrap();
        assert_eq!(link.agent_id, "a0b1c2d3e4f5a6b7c");
        assert_eq!(link.tool_use_id.as_deref(), Some("toolu_0012"));
        let b = read_file(&path, Format::Claude).unwrap();
        assert_eq!(b.messages.len(), 2);
        for m in &b.messages {
            assert!(m.sidechain);
            assert_eq!(m.agent_id.as_deref(), Some("a0b1c2d3e4f5a6b7c"));
            assert_eq!(m.parent_tool_use_id.as_deref(), Some("toolu_0012"));
        }
        assert_eq!(subagent_files(&fixture(SESSION)), vec![path]);
    }
}
