//! Tool-table types of teams: a leader and members started together from a
//! definition (`crate::config::teams`), each member a run of its own under the name
//! the others mail it by.

use serde::{Deserialize, Serialize};

use super::RunRecord;

/// `teams.start`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct TeamStartParams {
    /// A team of `config.toml`; with `file`, the file's name for it.
    pub team: String,
    /// A team file's text, the team at its top level (read by the client).
    #[serde(default)]
    pub file: Option<String>,
    /// The task, told to the leader after its own prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// Where relative member paths start: the client's directory.
    pub cwd: String,
    /// The client's environment, passed to each member as to `runs.start`
    /// (through its allowlist, never stored).
    #[serde(default)]
    pub env: Vec<(String, String)>,
}

impl TeamStartParams {
    /// A team file is a page of TOML, not a document.
    pub const MAX_FILE: usize = 256 * 1024;
}

/// Who answers a team member's permission prompt (`approvals` of a
/// definition, `TeamRecord::approvals` as its word).
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Approvals {
    /// Each member's questions wait for the user, as any run's do.
    #[default]
    User,
    Leader,
}

impl Approvals {
    pub fn as_str(self) -> &'static str {
        match self {
            Approvals::User => "user",
            Approvals::Leader => "leader",
        }
    }
}

/// A team and where each member stands.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TeamRecord {
    pub id: String,
    /// This team's name: the definition's, or `NAME-2`… when one of that
    /// name was started before.
    pub name: String,
    /// The definition it was started from.
    pub definition: String,
    /// `user` or `leader`: who answers a member's permission prompt.
    pub approvals: String,
    /// `live` while any member is, else `ended`.
    pub state: String,
    pub created_at: String,
    /// Why it did not start whole (a blocked leader, or a blocked member
    /// of an all-or-nothing team).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// The leader first, then the members in their order.
    pub members: Vec<TeamMember>,
    /// Messages to its members not yet typed into them (stored, or
    /// queued while the agent works).
    #[serde(default)]
    pub unread: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TeamMember {
    /// Its name in the team.
    pub member: String,
    pub leader: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub run: RunRecord,
}

/// `teams.show`, `teams.cancel`: a team by id, id prefix or name.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct TeamRef {
    pub team: String,
    /// `teams.cancel`: SIGKILL at once.
    #[serde(default)]
    pub force: bool,
}
