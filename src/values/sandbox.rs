//! How a run is boxed (`agents run --sandbox[=offline]`, `sandbox = true`):
//! a value the CLI, the wire, the store and the launch share.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sandbox {
    /// In a box, its network on (the agent must reach its model).
    On,
    /// In a box with no network at all.
    Offline,
}

impl Sandbox {
    pub fn as_str(self) -> &'static str {
        match self {
            Sandbox::On => "on",
            Sandbox::Offline => "offline",
        }
    }

    /// `on` (also `true`) or `offline`.
    pub fn parse(s: &str) -> Result<Sandbox, String> {
        match s {
            "on" | "true" => Ok(Sandbox::On),
            "offline" => Ok(Sandbox::Offline),
            other => Err(format!("--sandbox takes on or offline, not {other:?}")),
        }
    }
}
