//! Parameter and result types of the `hosts.*` methods (docs/design.md §8). Field
//! names are a public contract (`agents hosts ls --json`).

use serde::{Deserialize, Serialize};

/// `hosts.add`: name a machine reached over SSH, or by a command.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostAddParams {
    pub name: String,
    /// `user@host[:port]`, or a `Host` alias from `~/.ssh/config`; empty
    /// with `command`.
    #[serde(default)]
    pub target: String,
    /// Instead of SSH, a command run here that yields a stdin/stdout on
    /// the host (`["docker", "exec", "-i", "devbox"]`): agents appends
    /// `sh -c LINE` for each command it runs there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// `command` takes the remote command as one line for a shell there,
    /// as `ssh` does (`gcloud compute ssh VM --`): LINE is appended alone.
    #[serde(default)]
    pub shell_line: bool,
    /// The `agents` binary on the host (default: `agents`, found in the
    /// remote login PATH).
    pub remote_bin: Option<String>,
    /// `AGENTS_HOME` on the host (default: the remote user's default).
    pub remote_home: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostRef {
    pub name: String,
}

/// `hosts.trust`: accept the key the host offers now, when known_hosts has
/// none for it. A changed key is never accepted this way.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostTrustParams {
    pub name: String,
    /// Refuse unless the offered key has this fingerprint (`SHA256:…`).
    pub fingerprint: Option<String>,
}

/// A host as `agents hosts ls` shows it: the stored record and the link the
/// daemon holds to it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostRecord {
    pub name: String,
    /// Empty for a host reached by `command`.
    pub target: String,
    /// The command that reaches the host, when not SSH (`hosts.add`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub shell_line: bool,
    pub remote_bin: String,
    pub remote_home: Option<String>,
    pub created_at: String,
    /// `idle` (no link yet), `connecting`, `up`, `reconnecting`, `down`.
    pub link: String,
    /// When the link went up, or stopped being up (retries while it is
    /// `reconnecting` do not move it).
    pub since: Option<String>,
    /// Round trip of a request to the remote daemon, last measured.
    pub latency_ms: Option<u64>,
    /// Why the link is down or reconnecting.
    pub error: Option<String>,
    pub remote_version: Option<String>,
    /// Runs on this host that have not ended.
    pub live_runs: usize,
}

/// `hosts.check`: what a fresh connection to the host found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostCheck {
    pub name: String,
    /// `user@hostname:port` after `~/.ssh/config`, or the command that
    /// reaches the host.
    pub address: String,
    /// The host key's type and SHA-256 fingerprint; `none` for a host
    /// reached by a command (its own tool authenticates it).
    pub host_key: String,
    pub remote_bin: String,
    /// What `agents --version` printed on the host.
    pub remote_version: Option<String>,
    /// The remote daemon's version and home, once reached through `agents serve --stdio`.
    pub remote_daemon: Option<super::DaemonStatus>,
    pub latency_ms: Option<u64>,
    /// Everything works: runs can be placed on this host.
    pub ok: bool,
    /// What is missing or incompatible, one line each.
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostTrustResult {
    pub name: String,
    /// The known_hosts file written to.
    pub known_hosts: String,
    /// The known_hosts host field (`[host]:port` or `host`).
    pub entry: String,
    pub host_key: String,
    /// False when the key was already known (nothing written).
    pub added: bool,
}

/// `hosts.install`: what copying this daemon's binary to the host did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostInstallResult {
    pub name: String,
    /// `agents X.Y.Z`, as the installed copy printed it.
    pub version: String,
    /// SHA-256 of the binary, hex.
    pub sha256: String,
    pub bytes: u64,
    /// The binary in its versioned directory (never changed once complete).
    pub path: String,
    /// `…/bin/current/agents`: the symlink that now points at `path`'s directory.
    pub current: String,
    /// False when that version was already installed there (nothing copied).
    pub installed: bool,
    /// The host's `remote_bin` after the install.
    pub remote_bin: String,
    /// Whether `remote_bin` was switched to `current` (it is only when the
    /// user had not named a binary with `--remote-bin`).
    pub remote_bin_changed: bool,
    /// The host's daemon ran another build and was stopped; the link
    /// started this one there, which re-adopted the runs (they live on
    /// under their supervisors).
    #[serde(default)]
    pub daemon_restarted: bool,
    /// The host's daemon after the install, when it was reached.
    #[serde(default)]
    pub daemon_pid: Option<u32>,
    /// The daemon it replaced, when it was restarted.
    #[serde(default)]
    pub previous_daemon_pid: Option<u32>,
    /// Live runs the host's daemon holds after the install.
    #[serde(default)]
    pub daemon_live_runs: Option<usize>,
    /// Why the host's daemon was not checked or not moved to this build.
    #[serde(default)]
    pub daemon_problem: Option<String>,
}

/// A host that did not answer a question asked of every host
/// (`sessions.list`, `transcripts.search`): the answer is partial.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostUnreachable {
    pub host: String,
    /// Why, one line.
    pub error: String,
}
