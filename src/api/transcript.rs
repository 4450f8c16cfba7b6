//! Parameters and results of `transcript.read` and `transcripts.search`.
//! Field names are a public contract (`--json` output).

use serde::{Deserialize, Serialize};

use crate::values::transcript::{Format as TranscriptFormat, Role, ToolCall, ToolResult, Usage};

/// `transcript.read`: one session's normalized messages, a page at a time.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct TranscriptParams {
    /// A run (id, unique prefix or name) or a session id (or unique prefix).
    pub id: String,
    /// Only messages after this sequence number (the `last_seq` of the
    /// previous page).
    pub after_seq: Option<i64>,
    /// Page size (default 200, at most 1000; a page is also cut before it
    /// outgrows one frame).
    pub limit: Option<usize>,
    /// With `after_seq`: when nothing newer exists yet, wait up to this long
    /// (at most 30 s) for the transcript to grow.
    pub wait_ms: Option<u64>,
}

impl TranscriptParams {
    pub const DEFAULT_LIMIT: usize = 200;
    pub const MAX_LIMIT: usize = 1000;
    pub const MAX_WAIT_MS: u64 = 30_000;
}

/// One normalized message of a session.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TranscriptMessage {
    /// Dense per session, in the order the messages were read.
    pub seq: i64,
    pub session_id: String,
    pub run_id: Option<String>,
    pub role: Role,
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<ToolResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    pub model: Option<String>,
    /// RFC 3339, when the harness recorded a time.
    pub at: Option<String>,
    pub uuid: Option<String>,
    pub parent_uuid: Option<String>,
    /// Part of a subagent's conversation (`agent_id` says which).
    pub sidechain: bool,
    pub agent_id: Option<String>,
    /// For a subagent's message: the parent's tool call that started it.
    pub parent_tool_use_id: Option<String>,
    /// The file it was read from, and where (bytes; Gemini: record index).
    pub source: String,
    pub offset: u64,
}

/// A transcript file of a session and what reading it skipped.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TranscriptSource {
    pub path: String,
    pub format: TranscriptFormat,
    pub agent_id: Option<String>,
    pub lines: u64,
    pub malformed: u64,
    pub unknown: u64,
}

/// A session as indexed: totals over all its files.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TranscriptSession {
    pub session_id: String,
    pub run_id: Option<String>,
    pub format: TranscriptFormat,
    pub model: Option<String>,
    pub messages: i64,
    pub tokens: Usage,
    pub first_at: Option<String>,
    pub last_at: Option<String>,
    pub sources: Vec<TranscriptSource>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TranscriptPage {
    pub session: TranscriptSession,
    pub messages: Vec<TranscriptMessage>,
    /// The seq of the last message in this page (or the `after_seq` asked
    /// for, when the page is empty): pass it back as `after_seq`.
    pub last_seq: Option<i64>,
    /// More messages exist after this page.
    pub more: bool,
}

/// `transcripts.search`: full-text search over every indexed message.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct SearchParams {
    pub query: String,
    /// Default 50, at most 500.
    pub limit: Option<usize>,
    /// Only this session (id or unique prefix) or run.
    pub within: Option<String>,
    /// Pass `query` to FTS5 as is (`AND`, `OR`, `NEAR`, `"phrases"`,
    /// `prefix*`); otherwise each word must appear, as typed.
    #[serde(default)]
    pub raw: bool,
    /// This daemon's transcripts only (what a daemon asks of its hosts).
    #[serde(default)]
    pub local_only: bool,
}

impl SearchParams {
    pub const DEFAULT_LIMIT: usize = 50;
    pub const MAX_LIMIT: usize = 500;
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SearchHit {
    pub session_id: String,
    pub run_id: Option<String>,
    pub seq: i64,
    pub role: Role,
    pub at: Option<String>,
    pub agent_id: Option<String>,
    /// Tools the message called, space-separated.
    pub tool_names: Option<String>,
    /// Words around the match; matches are wrapped in `«` and `»`.
    pub snippet: String,
    /// Where the transcript lives: `local`, or the host that found it.
    #[serde(default = "local_host")]
    pub host: String,
}

fn local_host() -> String {
    "local".into()
}

/// `transcripts.search`: the hits here and on every host that answered.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SearchResults {
    /// Each place's hits in its own rank order, interleaved (bm25 scores
    /// of two indexes do not compare).
    pub hits: Vec<SearchHit>,
    /// Some host did not answer: its hits are missing.
    pub partial: bool,
    pub hosts_unreachable: Vec<super::HostUnreachable>,
    /// Bytes that live runs' transcripts hold beyond what was indexed when
    /// the search answered (here and on the hosts that answered): the
    /// tailer is reading them, and a search a moment later finds them.
    #[serde(default)]
    pub unindexed_bytes: u64,
}
