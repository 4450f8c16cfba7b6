//! What a run is asked to be (`RunSpec`), wherever the asking is written:
//! `agents run`, MCP's `run_start`, a routine's fire, a team member, the
//! TUI's new-run form. `StartParams` is a spec and how it travels (the
//! client's environment, size, parent, launch id, team seat); its wire
//! form is `StartWire`, the same JSON as before the spec had a name.

use serde::{Deserialize, Serialize};

use super::{StartParams, TeamSeat};

/// What a run is asked to be.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSpec {
    /// A harness family or a profile.
    pub harness: String,
    /// Arguments for the harness.
    pub args: Vec<String>,
    pub name: Option<String>,
    /// Where it starts; on a remote host a path there.
    pub cwd: String,
    /// A first prompt, given once the agent is ready.
    pub prompt: Option<String>,
    /// In its own git worktree and branch.
    pub worktree: bool,
    /// Placement (docs/design.md §4): a host from `agents hosts`; `None` or
    /// `local` runs here.
    pub host: Option<String>,
    /// Survives its parent's end.
    pub detached: bool,
    pub timeout_secs: Option<u64>,
    /// Names of extra environment variables to pass through.
    pub pass_env: Vec<String>,
    /// A model for a harness that takes one, made its `--model` by the
    /// daemon that starts it (`harness::apply_model`).
    pub model: Option<String>,
    /// In a bubblewrap box (`harness::sandbox`).
    pub sandbox: Option<crate::values::sandbox::Sandbox>,
}

/// `runs.start` on the wire: the fields in their order since protocol 1.
#[derive(Serialize, Deserialize)]
pub(super) struct StartWire {
    harness: String,
    #[serde(default)]
    args: Vec<String>,
    name: Option<String>,
    cwd: String,
    parent: Option<String>,
    #[serde(default)]
    detached: bool,
    timeout_secs: Option<u64>,
    rows: Option<u16>,
    cols: Option<u16>,
    #[serde(default)]
    worktree: bool,
    prompt: Option<String>,
    #[serde(default)]
    env: Vec<(String, String)>,
    #[serde(default)]
    pass_env: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    launch_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    team: Option<TeamSeat>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    placed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sandbox: Option<crate::values::sandbox::Sandbox>,
}

impl From<StartWire> for StartParams {
    fn from(w: StartWire) -> StartParams {
        StartParams {
            spec: RunSpec {
                harness: w.harness,
                args: w.args,
                name: w.name,
                cwd: w.cwd,
                prompt: w.prompt,
                worktree: w.worktree,
                host: w.host,
                detached: w.detached,
                timeout_secs: w.timeout_secs,
                pass_env: w.pass_env,
                model: w.model,
                sandbox: w.sandbox,
            },
            parent: w.parent,
            rows: w.rows,
            cols: w.cols,
            env: w.env,
            launch_id: w.launch_id,
            team: w.team,
            placed: w.placed,
        }
    }
}

impl From<StartParams> for StartWire {
    fn from(p: StartParams) -> StartWire {
        let s = p.spec;
        StartWire {
            harness: s.harness,
            args: s.args,
            name: s.name,
            cwd: s.cwd,
            parent: p.parent,
            detached: s.detached,
            timeout_secs: s.timeout_secs,
            rows: p.rows,
            cols: p.cols,
            worktree: s.worktree,
            prompt: s.prompt,
            env: p.env,
            pass_env: s.pass_env,
            host: s.host,
            launch_id: p.launch_id,
            team: p.team,
            placed: p.placed,
            model: s.model,
            sandbox: s.sandbox,
        }
    }
}
