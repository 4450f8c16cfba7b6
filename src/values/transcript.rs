//! The values of a harness's transcript that every layer shares: the
//! normalized message every reader produces, what the index stores and what
//! `transcript.read` returns (docs/design.md §7). Reading them is
//! `transcript/`'s; storing them `store/`'s; carrying them `api/`'s.

use serde::{Deserialize, Serialize};

/// Which harness wrote a transcript file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Claude Code: `~/.claude/projects/<cwd>/<session>.jsonl` and its
    /// `<session>/subagents/agent-<id>.jsonl` sidechains.
    Claude,
    /// Codex CLI: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`.
    Codex,
    /// Gemini CLI: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (older
    /// versions: one `.json` document).
    Gemini,
    /// aider: `.aider.chat.history.md`.
    Aider,
    /// opencode: one session's rows in its SQLite database, named
    /// `<data home>/opencode/opencode.db#<session id>`.
    Opencode,
    /// Crush: one session's rows in its project's SQLite database, named
    /// `<project>/.crush/crush.db#<session id>`.
    Crush,
    /// Qwen Code: `~/.qwen/projects/<cwd>/chats/<session>.jsonl`.
    Qwen,
    /// pi: `~/.pi/agent/sessions/--<cwd>--/<time>_<session>.jsonl`.
    Pi,
    /// GitHub Copilot CLI: `~/.copilot/session-state/<session>/events.jsonl`.
    Copilot,
    /// Factory Droid: `~/.factory/sessions/<cwd>/<session>.jsonl`, its
    /// tokens in `<session>.settings.json` beside it.
    Droid,
    /// Auggie: `~/.augment/sessions/<session>.json`, one document
    /// rewritten whole after each exchange.
    Auggie,
    /// Continue's CLI: `~/.continue/sessions/<session>.json`, one
    /// document rewritten whole at each message.
    Continue,
    /// gptme: `~/.local/share/gptme/logs/<name>/conversation.jsonl`.
    Gptme,
    /// Cline's CLI: `~/.cline/data/sessions/<id>/<id>.messages.json`, one
    /// document rewritten whole after each message.
    Cline,
    /// nanocoder: `~/.local/share/nanocoder/sessions/<uuid>.json`, one
    /// document rewritten whole at each save.
    Nanocoder,
    /// Letta Code's local backend:
    /// `~/.letta/lc-local-backend/conversations/<key>/messages.jsonl`.
    Letta,
    /// mini-swe-agent: a run's trajectory (`-o FILE`), one document
    /// rewritten whole after each step.
    Mini,
    /// Open Interpreter: `~/.config/open-interpreter/conversations/<name>.json`,
    /// one JSON array of messages rewritten whole after each turn.
    Interpreter,
    /// Hermes Agent: one session's rows in its SQLite database, named
    /// `<HERMES_HOME, ~/.hermes>/state.db#<session id>`.
    Hermes,
    /// Code Puppy: `~/.code_puppy/autosaves/<name>.json`, one document of
    /// pydantic-ai messages rewritten whole after each turn.
    CodePuppy,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Claude => "claude",
            Format::Codex => "codex",
            Format::Gemini => "gemini",
            Format::Aider => "aider",
            Format::Opencode => "opencode",
            Format::Crush => "crush",
            Format::Qwen => "qwen",
            Format::Pi => "pi",
            Format::Copilot => "copilot",
            Format::Droid => "droid",
            Format::Auggie => "auggie",
            Format::Continue => "continue",
            Format::Gptme => "gptme",
            Format::Cline => "cline",
            Format::Nanocoder => "nanocoder",
            Format::Letta => "letta",
            Format::Mini => "mini",
            Format::Interpreter => "interpreter",
            Format::Hermes => "hermes",
            Format::CodePuppy => "code-puppy",
        }
    }

    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "claude" => Some(Format::Claude),
            "codex" => Some(Format::Codex),
            "gemini" => Some(Format::Gemini),
            "aider" => Some(Format::Aider),
            "opencode" => Some(Format::Opencode),
            "crush" => Some(Format::Crush),
            "qwen" => Some(Format::Qwen),
            "pi" => Some(Format::Pi),
            "copilot" => Some(Format::Copilot),
            "droid" => Some(Format::Droid),
            "auggie" => Some(Format::Auggie),
            "continue" => Some(Format::Continue),
            "gptme" => Some(Format::Gptme),
            "cline" => Some(Format::Cline),
            "nanocoder" => Some(Format::Nanocoder),
            "letta" => Some(Format::Letta),
            "mini" => Some(Format::Mini),
            "interpreter" => Some(Format::Interpreter),
            "hermes" => Some(Format::Hermes),
            "code-puppy" => Some(Format::CodePuppy),
            _ => None,
        }
    }
}

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
    /// whole (`transcript::model::MAX_TOOL_INPUT`) or not JSON at all.
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
    /// to `transcript::model::MAX_TEXT` bytes.
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

impl Message {
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

/// What reading some input produced.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Batch {
    pub messages: Vec<Message>,
    /// The last `provisional` messages may still change (a block whose end
    /// has not been written yet): the next read replaces them.
    pub provisional: usize,
    /// Tokens to add to the session's totals. Not the sum of the messages'
    /// usage: a response split over lines repeats it, and Codex reports
    /// tokens on lines of their own.
    pub usage: Usage,
    /// The model last named (Codex names it once per turn).
    pub model: Option<String>,
    /// The session id the transcript names for itself, if it does.
    pub session_id: Option<String>,
    pub stats: ReadStats,
}

/// Counts kept while reading, so a caller can say what was skipped.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadStats {
    /// Lines (or documents) read.
    pub lines: u64,
    /// Lines that were not valid JSON of the expected shape: skipped.
    pub malformed: u64,
    /// Valid lines of a kind this reader does not know: ignored.
    pub unknown: u64,
}

impl ReadStats {
    pub fn add(&mut self, other: &ReadStats) {
        self.lines += other.lines;
        self.malformed += other.malformed;
        self.unknown += other.unknown;
    }
}
