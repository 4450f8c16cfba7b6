//! The tool table's methods: each name on the wire, and for each a marker
//! type that says what it takes and what it answers ([`Method`]). The names
//! are stable: clients and daemons of other versions use them.
//!
//! A client calls `client.call::<method::RunsList>(params)` and gets
//! `RunsList::Reply`; the daemon routes each request by its marker
//! (`daemon::dispatch`), so a method's types are said once, here.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::api::{self, ApiError};

/// A method of the tool table: its name on the wire, its parameters, its
/// answer.
pub trait Method: 'static {
    const NAME: &'static str;
    type Params: Serialize + DeserializeOwned + Send + 'static;
    type Reply: Serialize + DeserializeOwned + Send + 'static;

    /// The parameters a request carries, refused as `bad_request` when
    /// they do not fit.
    fn params(value: Value) -> Result<Self::Params, ApiError> {
        serde_json::from_value(value).map_err(|e| ApiError::bad_request(format!("bad parameters: {e}")))
    }
}

/// A notification the daemon sends a client unasked, and its name.
pub trait Notice: Serialize {
    const NAME: &'static str;
}

impl Notice for api::OutputEnd {
    const NAME: &'static str = OUTPUT_END;
}

impl Notice for api::OutputSize {
    const NAME: &'static str = OUTPUT_SIZE;
}

impl Notice for api::RunChanged {
    const NAME: &'static str = RUN_CHANGED;
}

/// Marker types, one per method: `NAME = "wire.name": Params => Reply`.
macro_rules! methods {
    ($($(#[$doc:meta])* $marker:ident = $name:ident : $params:ty => $reply:ty;)*) => {$(
        $(#[$doc])*
        pub enum $marker {}
        impl Method for $marker {
            const NAME: &'static str = $name;
            type Params = $params;
            type Reply = $reply;
        }
    )*};
}

methods! {
    RunsStart = RUNS_START: api::StartParams => api::RunRecord;
    RunsList = RUNS_LIST: api::ListParams => api::RunsListed;
    RunsShow = RUNS_SHOW: api::RunRef => api::RunDetail;
    RunsSend = RUNS_SEND: api::SendParams => api::SendResult;
    RunsCancel = RUNS_CANCEL: api::CancelParams => api::Cancelling;
    RunsAttach = RUNS_ATTACH: api::AttachParams => api::AttachResult;
    RunsDetach = RUNS_DETACH: api::DetachParams => api::Done;
    RunsResize = RUNS_RESIZE: api::ResizeParams => api::Done;
    RunsAck = RUNS_ACK: api::AckParams => api::Done;
    RunsWait = RUNS_WAIT: api::WaitParams => api::RunRecord;
    RunsWaitChildren = RUNS_WAIT_CHILDREN: api::RunRef => api::ChildrenOutcome;
    RunsRerun = RUNS_RERUN: api::RerunParams => api::RunRecord;
    RunsRename = RUNS_RENAME: api::RenameParams => api::RunRecord;
    /// Answers what the run's supervisor said of the answer it typed
    /// (`{"answered": why}`), kept as it came: runs of older supervisors
    /// say other things.
    RunsAnswer = RUNS_ANSWER: api::AnswerParams => Value;
    PromptsList = PROMPTS_LIST: api::PromptParams => Vec<api::WaitingPrompt>;
    PromptsEdit = PROMPTS_EDIT: api::PromptParams => api::PromptChanged;
    PromptsDrop = PROMPTS_DROP: api::PromptParams => api::PromptChanged;
    PromptsSend = PROMPTS_SEND: api::PromptParams => api::SendResult;
    RunsChanges = RUNS_CHANGES: api::RunRef => api::Changes;
    RunsMerge = RUNS_MERGE: api::MergeParams => api::Merged;
    WorktreeRm = WORKTREE_RM: api::WorktreeRmParams => api::WorktreeRemoved;
    MailSend = MAIL_SEND: api::MailSendParams => api::MailSent;
    MailList = MAIL_LIST: api::MailListParams => Vec<api::MailRecord>;
    MailRead = MAIL_READ: api::MailRef => api::MailRecord;
    MailOutbox = MAIL_OUTBOX: api::OutboxParams => Vec<api::OutboundMail>;
    MailTaken = MAIL_TAKEN: api::OutboxTakenParams => api::OutboxTaken;
    MailWait = MAIL_WAIT: api::MailWaitParams => Vec<api::MailRecord>;
    TeamsStart = TEAMS_START: api::TeamStartParams => api::TeamRecord;
    TeamsList = TEAMS_LIST: api::NoParams => Vec<api::TeamRecord>;
    TeamsShow = TEAMS_SHOW: api::TeamRef => api::TeamRecord;
    TeamsCancel = TEAMS_CANCEL: api::TeamRef => api::TeamCancelled;
    SessionsResume = SESSIONS_RESUME: api::ResumeParams => api::RunRecord;
    SessionsFork = SESSIONS_FORK: api::ResumeParams => api::RunRecord;
    SessionsShow = SESSIONS_SHOW: api::SessionRef => api::SessionDetail;
    RunsLineage = RUNS_LINEAGE: api::RunRef => api::Lineage;
    RunsExplain = RUNS_EXPLAIN: api::RunRef => api::StatusExplanation;
    SubagentsList = SUBAGENTS_LIST: api::SubagentsParams => Vec<api::RunSubagent>;
    /// `[offset, at_ms]` samples of the run's output log.
    RunsIndex = RUNS_INDEX: api::RunRef => Vec<[u64; 2]>;
    RunsSizes = RUNS_SIZES: api::RunRef => Vec<crate::values::screen::SizeChange>;
    RunsHistory = RUNS_HISTORY: api::HistoryParams => Vec<String>;
    RunsRm = RUNS_RM: api::RemoveParams => api::RemoveResult;
    SessionsRm = SESSIONS_RM: api::SessionRemoveParams => api::SessionRemoved;
    RetentionPlan = RETENTION_PLAN: api::NoParams => api::RetentionReport;
    RoutinesList = ROUTINES_LIST: api::NoParams => Vec<api::RoutineRecord>;
    RoutinesRun = ROUTINES_RUN: api::RoutineRef => api::RoutineFired;
    RoutinesPause = ROUTINES_PAUSE: api::RoutineRef => api::RoutineRecord;
    RoutinesResume = ROUTINES_RESUME: api::RoutineRef => api::RoutineRecord;
    DaemonStatus = DAEMON_STATUS: api::NoParams => api::DaemonStatus;
    DaemonStop = DAEMON_STOP: api::NoParams => api::Done;
    HooksReport = HOOKS_REPORT: api::HookReport => api::HookOutcome;
    HostsAdd = HOSTS_ADD: api::HostAddParams => api::HostRecord;
    HostsList = HOSTS_LIST: api::NoParams => Vec<api::HostRecord>;
    HostsRm = HOSTS_RM: api::HostRef => api::Done;
    HostsCheck = HOSTS_CHECK: api::HostRef => api::HostCheck;
    HostsTrust = HOSTS_TRUST: api::HostTrustParams => api::HostTrustResult;
    HostsInstall = HOSTS_INSTALL: api::HostRef => api::HostInstallResult;
    TranscriptRead = TRANSCRIPT_READ: api::TranscriptParams => api::TranscriptPage;
    TranscriptsSearch = TRANSCRIPTS_SEARCH: api::SearchParams => api::SearchResults;
}

/// `sessions.list`: it took no parameters before `local_only`, so none
/// (null) is still every session of the default view.
pub enum SessionsList {}

impl Method for SessionsList {
    const NAME: &'static str = SESSIONS_LIST;
    type Params = api::SessionsListParams;
    type Reply = api::SessionList;

    fn params(value: Value) -> Result<Self::Params, ApiError> {
        match value {
            Value::Null => Ok(Default::default()),
            value => serde_json::from_value(value).map_err(|e| ApiError::bad_request(format!("bad parameters: {e}"))),
        }
    }
}

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
