//! Tool-table types of lineage (docs/design.md §7): one session with its runs
//! (`sessions.show`), the tree around a run (`runs.lineage`), and the
//! subagents of many runs at once for the TUI's tree (`subagents.list`).

use serde::{Deserialize, Serialize};

use super::{RunState, SubagentRecord};

/// `sessions.show`: a session id or a unique prefix of one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionRef {
    pub session: String,
}

/// How a run came to hold a session.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// The run started the conversation.
    Started,
    /// The run continues the conversation of an earlier run.
    ResumeOf,
    /// The run started a new conversation from a copy of this one.
    ForkOf,
    /// The run is the same command started again (`r`, `runs.rerun`),
    /// with a conversation of its own.
    RerunOf,
}

impl Relation {
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Started => "started",
            Relation::ResumeOf => "resume-of",
            Relation::ForkOf => "fork-of",
            Relation::RerunOf => "rerun-of",
        }
    }
}

/// One run of a session, oldest first in [`SessionDetail::runs`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionRun {
    pub id: String,
    pub name: String,
    pub state: RunState,
    pub created_at: String,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub relation: Relation,
    /// The run this one resumed or forked, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_run: Option<String>,
    /// `native` (the harness's own resume) or `reconstructed` (a new
    /// conversation given the old one's context), for a resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_mode: Option<String>,
}

/// What the transcript index knows of a session's conversation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct SessionTotals {
    pub messages: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub model: Option<String>,
}

/// `sessions.show`: one conversation as its own record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionDetail {
    pub id: String,
    /// The harness family that holds the conversation.
    pub harness: String,
    pub cwd: Option<String>,
    /// The first user prompt, cut to one line, once the transcript is indexed.
    pub title: Option<String>,
    pub transcript_path: Option<String>,
    /// Whether the transcript file is still there.
    pub transcript_exists: bool,
    pub first_seen: String,
    pub last_seen: String,
    /// `None` until the transcript is indexed.
    pub totals: Option<SessionTotals>,
    pub runs: Vec<SessionRun>,
    pub subagents: Vec<RunSubagent>,
}

/// A subagent with the run that started it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunSubagent {
    pub run_id: String,
    #[serde(flatten)]
    pub subagent: SubagentRecord,
}

/// `subagents.list`: the subagents of these runs (at most
/// [`SubagentsParams::MAX_RUNS`] ids).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct SubagentsParams {
    pub runs: Vec<String>,
}

impl SubagentsParams {
    pub const MAX_RUNS: usize = 1000;
}

/// `runs.lineage`: the tree around a run, from its root down.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Lineage {
    /// The run asked about.
    pub focus: String,
    pub root: LineageNode,
    /// Nodes left out because the tree was too large.
    #[serde(default)]
    pub truncated: usize,
}

/// How a node hangs under its parent in the tree.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Edge {
    /// The tree's root.
    Root,
    /// Started by its parent run (`run --parent`, or from inside it).
    Child,
    /// A subagent of its parent run's harness (Claude's `Agent`/`Task`).
    Subagent,
    /// Continues its parent run's conversation.
    ResumeOf,
    /// Started from a copy of its parent run's conversation.
    ForkOf,
    /// Its parent run's command started again.
    RerunOf,
}

impl Edge {
    pub fn as_str(self) -> &'static str {
        match self {
            Edge::Root => "root",
            Edge::Child => "child",
            Edge::Subagent => "subagent",
            Edge::ResumeOf => "resume-of",
            Edge::ForkOf => "fork-of",
            Edge::RerunOf => "rerun-of",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LineageNode {
    pub edge: Edge,
    /// A run id, or a subagent's agent id.
    pub id: String,
    /// A run's name, or a subagent's type.
    pub name: String,
    /// A run's state (`running`, `succeeded`, …); a subagent's `running` or `done`.
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// A subagent's task description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_mode: Option<String>,
    #[serde(default)]
    pub detached: bool,
    pub children: Vec<LineageNode>,
}
