//! The public tool table: method names, their parameter and result types, and
//! the typed errors every transport carries (docs/design.md §2). The daemon implements
//! it (`daemon::dispatch`); the CLI, the socket and later MCP call it.

pub mod bounds;
mod error;
mod harness;
mod hosts;
mod lineage;
mod mail;
mod prompts;
mod removal;
mod routines;
mod spec;
mod team;
mod transcript;
mod types;
mod usage;
mod worktree;

#[cfg(test)]
mod wire_tests;

pub use error::{ApiError, ErrorCode};
pub use harness::*;
pub use hosts::*;
pub use lineage::*;
pub use mail::*;
pub use prompts::*;
pub use removal::*;
pub use routines::*;
pub use spec::RunSpec;
pub use team::*;
pub use transcript::*;
pub use types::*;
pub use usage::*;
pub use worktree::*;

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
    /// Notification from a client: output of a run shown up to an offset.
    pub const RUNS_ACK: &str = "runs.ack";
    pub const RUNS_WAIT: &str = "runs.wait";
    /// Until every child of a run has ended (`RunRef` → `ChildrenOutcome`).
    pub const RUNS_WAIT_CHILDREN: &str = "runs.wait_children";
    pub const RUNS_RERUN: &str = "runs.rerun";
    /// Gives a run a new name (`RenameParams` → `RunRecord`); the names it
    /// wore before keep finding it.
    pub const RUNS_RENAME: &str = "runs.rename";
    pub const RUNS_ANSWER: &str = "runs.answer";
    /// A run's prompts not typed in yet, each with why it waits
    /// (`PromptParams` → `[WaitingPrompt]`).
    pub const PROMPTS_LIST: &str = "prompts.list";
    /// Rewrites a waiting prompt (`PromptParams` with `prompt`, `text`).
    pub const PROMPTS_EDIT: &str = "prompts.edit";
    /// Drops a waiting prompt: never typed in.
    pub const PROMPTS_DROP: &str = "prompts.drop";
    /// Types a waiting prompt now, on purpose: past the user's draft or
    /// typing and the agent's turn (never into a question) → `SendResult`.
    pub const PROMPTS_SEND: &str = "prompts.send";
    /// What a worktree run changed (`Changes`).
    pub const RUNS_CHANGES: &str = "runs.changes";
    /// Merges a worktree run's branch into the branch it started from.
    pub const RUNS_MERGE: &str = "runs.merge";
    /// Removes a worktree run's worktree, keeping its branch.
    pub const WORKTREE_RM: &str = "worktree.rm";
    /// A message to a run (`MailSendParams`), delivered as a queued prompt.
    pub const MAIL_SEND: &str = "mail.send";
    pub const MAIL_LIST: &str = "mail.list";
    pub const MAIL_READ: &str = "mail.read";
    /// A host's daemon: the mail a run placed from another daemon sent to
    /// addresses only that daemon knows (`OutboxParams` → `[OutboundMail]`),
    /// marked as taken over the asking connection's epoch.
    pub const MAIL_OUTBOX: &str = "mail.outbox";
    /// A host's daemon: those messages delivered by the daemon that took
    /// them (`OutboxTakenParams` → `OutboxTaken`), dropped unless a newer
    /// connection has taken them since.
    pub const MAIL_TAKEN: &str = "mail.taken";
    /// Waits for mail to a run and takes it (`MailWaitParams`).
    pub const MAIL_WAIT: &str = "mail.wait";
    /// Starts a team's leader and members (`TeamStartParams`).
    pub const TEAMS_START: &str = "teams.start";
    pub const TEAMS_LIST: &str = "teams.list";
    pub const TEAMS_SHOW: &str = "teams.show";
    /// Cancels every member of a team, detached ones included.
    pub const TEAMS_CANCEL: &str = "teams.cancel";
    pub const SESSIONS_LIST: &str = "sessions.list";
    pub const SESSIONS_RESUME: &str = "sessions.resume";
    pub const SESSIONS_FORK: &str = "sessions.fork";
    /// One session with its runs, totals and subagents.
    pub const SESSIONS_SHOW: &str = "sessions.show";
    /// The lineage tree around a run: ancestors to the root, then its descendants.
    pub const RUNS_LINEAGE: &str = "runs.lineage";
    /// Which rule and evidence decide a live run's status (`RunRef` →
    /// `StatusExplanation`).
    pub const RUNS_EXPLAIN: &str = "runs.explain";
    /// The subagents of a set of runs (the TUI's tree).
    pub const SUBAGENTS_LIST: &str = "subagents.list";
    pub const RUNS_INDEX: &str = "runs.index";
    /// The screen's size from each log offset on (`[{offset, at_ms, rows, cols}]`).
    pub const RUNS_SIZES: &str = "runs.sizes";
    /// The rows that scrolled off a run's screen before an offset (`HistoryParams`).
    pub const RUNS_HISTORY: &str = "runs.history";
    /// Removes ended runs with their owned children (`RemoveParams`).
    pub const RUNS_RM: &str = "runs.rm";
    /// Removes a conversation's records (`SessionRemoveParams`).
    pub const SESSIONS_RM: &str = "sessions.rm";
    /// The disk the state directory uses and what `[retention]` would prune.
    pub const RETENTION_PLAN: &str = "retention.plan";
    /// The routines of the config, with their next fire and last outcome.
    pub const ROUTINES_LIST: &str = "routines.list";
    /// A routine's fire now (`RoutineRef`), under its overlap rule.
    pub const ROUTINES_RUN: &str = "routines.run";
    pub const ROUTINES_PAUSE: &str = "routines.pause";
    pub const ROUTINES_RESUME: &str = "routines.resume";
    pub const DAEMON_STATUS: &str = "daemon.status";
    pub const DAEMON_STOP: &str = "daemon.stop";
    /// From `agents hook EVENT`: a harness hook fired in a run.
    pub const HOOKS_REPORT: &str = "hooks.report";
    pub const HOSTS_ADD: &str = "hosts.add";
    pub const HOSTS_LIST: &str = "hosts.list";
    pub const HOSTS_RM: &str = "hosts.rm";
    pub const HOSTS_CHECK: &str = "hosts.check";
    pub const HOSTS_TRUST: &str = "hosts.trust";
    pub const HOSTS_INSTALL: &str = "hosts.install";
    /// A run's or a session's normalized transcript, a page at a time.
    pub const TRANSCRIPT_READ: &str = "transcript.read";
    /// Full-text search over every indexed transcript.
    pub const TRANSCRIPTS_SEARCH: &str = "transcripts.search";
    /// Notification from the daemon: a subscription reached the end of a run's output.
    pub const OUTPUT_END: &str = "output.end";
    /// Notification from the daemon, in a byte stream asked `sizes`: a size
    /// the run's screen took, before the bytes at its offset.
    pub const OUTPUT_SIZE: &str = "output.size";
    /// Notification from the daemon: a run's record changed (carries the id only).
    pub const RUN_CHANGED: &str = "run.changed";
}
