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

    /// What the box is, in words (`agents show`, the Record tab).
    pub fn describe(self) -> &'static str {
        match self {
            Sandbox::On => "bubblewrap, network on: only its cwd is written, the home and state hidden",
            Sandbox::Offline => "bubblewrap, no network: only its cwd is written, the home and state hidden",
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

/// `sandbox = …` in config.toml (a profile, a routine, a team member):
/// `true` (boxed, network on), `false`, or `"offline"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Setting {
    Flag(bool),
    Mode(Sandbox),
}

impl Setting {
    /// The box it asks for, if any.
    pub fn mode(self) -> Option<Sandbox> {
        match self {
            Setting::Flag(true) => Some(Sandbox::On),
            Setting::Flag(false) => None,
            Setting::Mode(mode) => Some(mode),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_is_a_flag_or_a_mode() {
        #[derive(Deserialize)]
        struct Holder {
            sandbox: Setting,
        }
        let read = |text: &str| toml::from_str::<Holder>(text).map(|h| h.sandbox.mode());
        assert_eq!(read("sandbox = true").unwrap(), Some(Sandbox::On));
        assert_eq!(read("sandbox = false").unwrap(), None);
        assert_eq!(read("sandbox = \"offline\"").unwrap(), Some(Sandbox::Offline));
        assert!(read("sandbox = \"maybe\"").is_err());
    }
}
