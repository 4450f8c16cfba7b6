//! Tool-table types of sessions (docs/design.md §7, "Recovery"): the harness
//! conversations listed, and a new run that resumes or forks one.

use serde::{Deserialize, Serialize};

use super::RunState;

/// A harness conversation (`agents sessions list`), with the run that
/// last held it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionRecord {
    pub id: String,
    pub harness: String,
    pub run_id: Option<String>,
    pub run_name: Option<String>,
    pub run_state: Option<RunState>,
    pub cwd: Option<String>,
    pub transcript_path: Option<String>,
    pub created_at: String,
    /// Messages read from its transcript so far; none while nothing of it
    /// was read (a session minted at launch whose run never got a prompt,
    /// or a family whose files agents does not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
    /// Where the session lives: `local`, or the host whose daemon listed it.
    #[serde(default = "local_host")]
    pub host: String,
}

fn local_host() -> String {
    "local".into()
}

/// `sessions.list`.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct SessionsListParams {
    /// This daemon's sessions only: what a daemon asks of its hosts, so a
    /// host never asks its own hosts in turn.
    #[serde(default)]
    pub local_only: bool,
    /// Child conversations too (subagents', child runs').
    #[serde(default)]
    pub all: bool,
}

/// `sessions.list`: the sessions here and on every host that answered,
/// newest first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SessionList {
    pub sessions: Vec<SessionRecord>,
    /// Some host did not answer: its sessions are missing.
    pub partial: bool,
    pub hosts_unreachable: Vec<super::HostUnreachable>,
}

/// `sessions.resume` / `sessions.fork`: a new run that continues (or copies)
/// a session natively, in the same harness family and cwd.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResumeParams {
    /// Session id or unique prefix.
    pub session: String,
    /// More arguments for the harness, after its own resume (or fork) ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The client's environment, as for `runs.start`.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// As `StartParams::launch_id`: a repeat with the same id returns the
    /// run the first attempt started (the local daemon mints one for a
    /// session on a host, and sends it again after a lost answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_id: Option<String>,
    /// As `StartParams::placed`: another daemon resumes the session here
    /// and drives the run over its link.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub placed: bool,
    /// While the run that last held the session still runs: start the
    /// resume once it has ended (the new run waits `pending`), instead of
    /// refusing it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub queue: bool,
}
