//! Tool-table types of the harness layer: what a hook reports
//! (`hooks.report`), and what a run's record adds about its harness.

use serde::{Deserialize, Serialize};

/// `hooks.report`: one harness hook, as `agents hook EVENT` saw it. Small
/// and bounded (`harness::hooks::bound`): ids, paths and names, never whole
/// messages, tool inputs or outputs.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct HookReport {
    /// `AGENTS_RUN_ID` of the harness that ran the hook.
    pub run: Option<String>,
    /// `AGENTS_LAUNCH_ID`: must match the run's, or the report is refused.
    pub launch_id: Option<String>,
    /// The run's proof (`crate::proof`): a report without it is refused.
    /// Checked, then dropped: never stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
    /// The hook event: `PreToolUse`, `Stop`, `agent-turn-complete`, …
    pub event: String,
    /// Wall-clock ms when the hook ran: hooks are separate processes and
    /// may arrive out of order.
    pub at_ms: i64,
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub tool: Option<String>,
    pub notification_type: Option<String>,
    /// The harness's own short notice ("Claude needs your permission").
    pub message: Option<String>,
    /// `SessionStart` source or `SessionEnd` reason.
    pub source: Option<String>,
    pub agent_id: Option<String>,
    pub agent_type: Option<String>,
    pub agent_transcript_path: Option<String>,
    /// The start of a submitted prompt: used to name the run, never stored.
    pub prompt: Option<String>,
    /// Work of the session still in flight when its turn stopped (Claude's
    /// `Stop` `background_tasks`): each task's kind ("subagent
    /// general-purpose", "shell"), never its command or description.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<String>,
}

/// A subagent a run's harness started (Claude's `Agent`/`Task` tool): a
/// child in the run tree, with its own transcript.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SubagentRecord {
    pub agent_id: String,
    pub agent_type: Option<String>,
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// The task the parent gave it (Claude's `description`), once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// What `runs.show` says about a run's harness, beside its record.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(default)]
pub struct HarnessDetail {
    /// The harness version the run started (`claude --version`), if it said.
    pub harness_version: Option<String>,
    /// The `[profiles.NAME]` the run was started with.
    pub profile: Option<String>,
    /// The session's native transcript, once known.
    pub transcript_path: Option<String>,
    /// Subagents the harness started, oldest first.
    pub subagents: Vec<SubagentRecord>,
    /// For a run that resumed a session: `native` (the harness's own
    /// resume) or `reconstructed` (a new conversation given the old one's
    /// context, when native resume was impossible).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_mode: Option<String>,
    /// The session a resumed or forked run came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumed_from: Option<String>,
    /// Each attempt of the run, first to last: more than one when an
    /// account problem made it fall back to another profile.
    pub attempts: Vec<AttemptRecord>,
    /// Variables named with `--env` at launch (names, never values).
    pub env_passed: Vec<String>,
    /// The harness's own variables (keys, endpoints, models) passed from
    /// the client's environment at launch, by default (names only).
    pub env_harness: Vec<String>,
}

/// One attempt of a run: which harness version and profile ran, and how
/// that attempt ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AttemptRecord {
    pub n: i64,
    pub harness: String,
    pub version: Option<String>,
    pub profile: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
    /// The run state this attempt ended in.
    pub outcome: Option<String>,
    pub reason: Option<String>,
}
