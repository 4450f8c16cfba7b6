//! The daemon's open-files limit: raised at its start to the hard limit,
//! since it holds a socket to each run's supervisor (thousands of runs
//! would pass a 1 024 soft limit); the supervisors it spawns, and their
//! agents, get the user's own soft limit back (a program using `select`
//! breaks on descriptors past 1 024).

use std::sync::OnceLock;

use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// Carries the user's soft limit across an upgrade's re-exec.
pub const OPEN_FILES_VAR: &str = "AGENTS_USER_NOFILE";

static USER_SOFT: OnceLock<u64> = OnceLock::new();

/// Raises this process's soft open-files limit to its hard one, keeping
/// the user's soft limit for the processes it starts.
pub fn raise_open_files() {
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return;
    };
    let handed = std::env::var(OPEN_FILES_VAR).ok().and_then(|v| v.parse().ok());
    let _ = USER_SOFT.set(handed.unwrap_or(soft));
    if soft < hard
        && let Err(e) = setrlimit(Resource::RLIMIT_NOFILE, hard, hard)
    {
        tracing::warn!("open-files limit left at {soft}: {e}");
    }
}

/// The user's soft open-files limit, for a process the daemon starts (none
/// when the daemon did not raise its own).
pub fn user_open_files() -> Option<u64> {
    USER_SOFT.get().copied()
}
