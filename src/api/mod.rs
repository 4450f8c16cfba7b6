//! The public tool table: method names, their parameter and result types, and
//! the typed errors every transport carries (DESIGN §2). The daemon implements
//! it (`daemon::dispatch`); the CLI, the socket and later MCP call it.

mod error;
mod types;

pub use error::{ApiError, ErrorCode};
pub use types::*;

/// Method names of the tool table. Stable: clients of older versions use them.
pub mod method {
    pub const RUNS_START: &str = "runs.start";
    pub const RUNS_LIST: &str = "runs.list";
    pub const RUNS_SHOW: &str = "runs.show";
    pub const RUNS_SEND: &str = "runs.send";
    pub const RUNS_CANCEL: &str = "runs.cancel";
    pub const RUNS_ATTACH: &str = "runs.attach";
    pub const RUNS_DETACH: &str = "runs.detach";
    pub const RUNS_RESIZE: &str = "runs.resize";
    pub const RUNS_WAIT: &str = "runs.wait";
    pub const RUNS_RERUN: &str = "runs.rerun";
    pub const RUNS_ANSWER: &str = "runs.answer";
    pub const RUNS_INDEX: &str = "runs.index";
    pub const DAEMON_STATUS: &str = "daemon.status";
    pub const DAEMON_STOP: &str = "daemon.stop";
    /// Notification from the daemon: a subscription reached the end of a run's output.
    pub const OUTPUT_END: &str = "output.end";
    /// Notification from the daemon: a run's record changed (carries the id only).
    pub const RUN_CHANGED: &str = "run.changed";
}
