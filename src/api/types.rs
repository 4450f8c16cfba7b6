//! Parameter and result types of the tool table. Field names and state strings
//! are a public contract (`--json` output): keep them stable.

use serde::{Deserialize, Serialize};

use super::ListedRun;
use super::RunSpec;
use super::error::ApiError;

/// A run's lifecycle state (docs/design.md §4), as stored and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Pending,
    Starting,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    TimedOut,
    Blocked,
    Interrupted,
    Lost,
    /// A routine's fire that could not happen (the daemon was down at its
    /// time, the previous run still ran, a prerequisite of the routine
    /// failed): a record with its reason and no session.
    Skipped,
}

impl RunState {
    pub const ALL: [RunState; 11] = [
        RunState::Pending,
        RunState::Starting,
        RunState::Running,
        RunState::Succeeded,
        RunState::Failed,
        RunState::Cancelled,
        RunState::TimedOut,
        RunState::Blocked,
        RunState::Interrupted,
        RunState::Lost,
        RunState::Skipped,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Pending => "pending",
            RunState::Starting => "starting",
            RunState::Running => "running",
            RunState::Succeeded => "succeeded",
            RunState::Failed => "failed",
            RunState::Cancelled => "cancelled",
            RunState::TimedOut => "timed_out",
            RunState::Blocked => "blocked",
            RunState::Interrupted => "interrupted",
            RunState::Lost => "lost",
            RunState::Skipped => "skipped",
        }
    }

    pub fn parse(s: &str) -> Option<RunState> {
        RunState::ALL.into_iter().find(|state| state.as_str() == s)
    }

    /// Not yet ended.
    pub fn is_live(self) -> bool {
        matches!(self, RunState::Pending | RunState::Starting | RunState::Running)
    }
}

/// What a live run's agent is doing (docs/design.md §7), fused from hooks, the
/// screen and output (`harness::status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityStatus {
    Working,
    /// Working, but neither its screen (spinners and counters aside) nor
    /// its transcript has changed for `engine.stalled_after_secs`: waiting
    /// on a limit, a hung tool, a stream that never ends.
    Stalled,
    WaitingInput,
    NeedsApproval,
    Idle,
    /// Evidence that contradicts itself, or a word nothing confirmed; a
    /// status a newer build names reads as this.
    #[serde(other)]
    Unknown,
}

impl ActivityStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ActivityStatus::Working => "working",
            ActivityStatus::Stalled => "stalled",
            ActivityStatus::WaitingInput => "waiting_input",
            ActivityStatus::NeedsApproval => "needs_approval",
            ActivityStatus::Idle => "idle",
            ActivityStatus::Unknown => "unknown",
        }
    }

    /// At work, stalled or not: a prompt waits, a parent waits on it.
    pub fn is_working(self) -> bool {
        matches!(self, ActivityStatus::Working | ActivityStatus::Stalled)
    }

    pub fn parse(s: &str) -> ActivityStatus {
        match s {
            "working" => ActivityStatus::Working,
            "stalled" => ActivityStatus::Stalled,
            "waiting_input" => ActivityStatus::WaitingInput,
            "needs_approval" => ActivityStatus::NeedsApproval,
            "idle" => ActivityStatus::Idle,
            _ => ActivityStatus::Unknown,
        }
    }
}

/// A run's record as `agents ls --json` and `agents show --json` print it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunRecord {
    pub id: String,
    pub name: String,
    pub harness: String,
    pub host: String,
    pub cwd: String,
    /// The command line that was (or would have been) spawned.
    pub command: Vec<String>,
    pub state: RunState,
    pub status: ActivityStatus,
    pub parent_id: Option<String>,
    pub root_id: String,
    /// A detached child survives its parent's cancellation.
    pub detached: bool,
    pub session_id: Option<String>,
    pub pid: Option<i64>,
    pub exit_code: Option<i64>,
    /// The signal that ended the harness, by name (`SIGKILL`).
    pub signal: Option<String>,
    pub reason: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub rows: u16,
    pub cols: u16,
    pub timeout_secs: Option<u64>,
    pub worktree: Option<String>,
    /// Bytes in the run's output log.
    pub output_bytes: u64,
    /// A live run: since when its activity status holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_since: Option<String>,
    /// A live run: what its status rests on (`hook Stop`, `screen shows a
    /// permission prompt`, `no output for a while`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// A live run: when that evidence was seen (the hook ran, the screen
    /// changed, the last output came).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_at: Option<String>,
    /// The routine that started this run, or whose fire this `skipped`
    /// record stands for (`[routines.NAME]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routine: Option<String>,
    /// The time that routine's fire was scheduled for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_at: Option<String>,
    /// When retention pruned this ended run's output log (`[retention]`):
    /// its record stays, its output is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_pruned_at: Option<String>,
    /// A live run's prompts not typed in yet, oldest first, each with why
    /// it waits (`agents prompts`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<WaitingPrompt>,
    /// The names the run wore before its current one, oldest first: each
    /// still finds it (unless a newer run wears or wore it since).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub former_names: Vec<String>,
    /// How it is boxed (`on`, `offline`), when it runs in a sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
}

impl RunRecord {
    /// What a live run's status rests on and how old it is: `hook Stop,
    /// 40 s ago (status since 10:21:03 UTC)`.
    pub fn evidence_line(&self, now: std::time::SystemTime) -> Option<String> {
        let why = self.evidence.as_ref()?;
        let age = self
            .evidence_at
            .as_deref()
            .and_then(|t| humantime::parse_rfc3339(t).ok())
            .map(|t| format!(", {} ago", ago(now.duration_since(t).unwrap_or_default())))
            .unwrap_or_default();
        let since = self
            .status_since
            .as_deref()
            .and_then(|s| s.get(11..19))
            .map(|t| format!(" (status since {t} UTC)"))
            .unwrap_or_default();
        Some(format!("{why}{age}{since}"))
    }
}

/// A prompt queued for a run that ended without it: never typed in.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct UndeliveredPrompt {
    pub id: String,
    pub text: String,
    pub queued_at: String,
    /// Why it was never typed in: `the run ended (cancelled)` …
    pub reason: String,
}

/// A prompt queued for a run and not typed in yet.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct WaitingPrompt {
    pub id: String,
    pub text: String,
    pub queued_at: String,
    /// Why it waits: `held: the input has text the user typed`, `the
    /// agent is working`, `behind 2 earlier prompts` …
    pub why: String,
    /// Held by the run's supervisor (the user's draft or typing), not
    /// merely waiting its turn.
    #[serde(default)]
    pub held: bool,
    /// When the supervisor last looked and held it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked_at: Option<String>,
}

/// A duration as a person says it: `3 s`, `4 min`, `2 h`.
pub fn ago(d: std::time::Duration) -> String {
    match d.as_secs() {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s => format!("{} h", s / 3600),
    }
}

/// One row of a run's event log (docs/design.md §4): `seq` is dense per run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Event {
    pub seq: i64,
    pub kind: String,
    pub at: String,
    pub data: serde_json::Value,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunDetail {
    #[serde(flatten)]
    pub run: RunRecord,
    pub events: Vec<Event>,
    /// What the harness layer knows (version, profile, transcript,
    /// subagents), flattened into the same object.
    #[serde(flatten, default)]
    pub harness: super::HarnessDetail,
    /// Tokens and estimated cost from the run's transcripts; absent when
    /// none recorded usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<super::RunUsage>,
    /// The prompts queued to it that it ended without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub undelivered: Vec<UndeliveredPrompt>,
}

/// `runs.start`: the normalized intent, resolved by the client where only the
/// client can (absolute cwd, its environment): what the run is asked to be,
/// and how it is asked. On the wire it is `spec::StartWire`, flat.
#[derive(Debug, Clone, Serialize, Deserialize, Default, PartialEq)]
#[serde(from = "super::spec::StartWire", into = "super::spec::StartWire")]
pub struct StartParams {
    pub spec: RunSpec,
    pub parent: Option<String>,
    pub rows: Option<u16>,
    pub cols: Option<u16>,
    /// The client's environment. Passed to the harness through an allowlist
    /// and never stored.
    pub env: Vec<(String, String)>,
    /// The run's launch id (docs/design.md §1), minted by the caller so a retried
    /// start returns the run the first attempt created instead of starting
    /// a second one (the local daemon sets it when it places a run on a
    /// host). Letters and digits, at most 64.
    pub launch_id: Option<String>,
    /// A team member's seat: told to its harness as `AGENTS_TEAM` and
    /// `AGENTS_MEMBER`, on whatever host it runs.
    pub team: Option<TeamSeat>,
    /// Started by another daemon that places the run here and drives it
    /// over its link (`remote::place`): mail the run sends to an address
    /// this daemon cannot resolve is held for that daemon to take
    /// (`mail.outbox`), not refused.
    pub placed: bool,
}

/// Which team a run is a member of, and under which name.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct TeamSeat {
    pub team: String,
    pub member: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct ListParams {
    /// Include ended runs.
    #[serde(default)]
    pub all: bool,
    /// Page size: the newest runs first (default 500, at most 1000, so an
    /// answer always fits in one frame).
    pub limit: Option<usize>,
    /// Only runs older than this id (the oldest id of the previous page).
    pub before: Option<String>,
    /// Answer a [`ListPage`]: runs older than `before`, newest first, as
    /// many as fit in `api::bounds::LIST_BYTES`, and where the next page
    /// starts. Without it: a bare list (every live run and the newest
    /// `limit`), cut to the same bytes, ended runs first.
    #[serde(default)]
    pub paged: bool,
    /// Only these runs, by full id, live or ended (at most `MAX_LIMIT`):
    /// what a client that holds the list reads again of the runs it heard
    /// changed. A run not answered is gone. `all`, `limit`, `before` and
    /// `paged` do not apply.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
    /// Answer each run as a [`BriefRun`] (the columns of `agents ls`),
    /// not its whole record: a table of thousands of runs is a third of
    /// the bytes to write and to read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub brief: bool,
    /// Only runs in this state: `live`, `ended`, or one state (`failed`,
    /// …); any but `live` takes in ended runs without `all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Only runs on this host (`local`: this machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl ListParams {
    /// The states `state` names (none: any), or why it names none.
    pub fn states(&self) -> Result<Vec<RunState>, ApiError> {
        let Some(named) = self.state.as_deref() else {
            return Ok(Vec::new());
        };
        let live = |want: bool| RunState::ALL.into_iter().filter(move |s| s.is_live() == want).collect();
        match named {
            "live" => Ok(live(true)),
            "ended" => Ok(live(false)),
            one => RunState::parse(one).map(|s| vec![s]).ok_or_else(|| {
                let states: Vec<&str> = RunState::ALL.iter().map(|s| s.as_str()).collect();
                ApiError::bad_request(format!(
                    "state '{one}' is not one of: live, ended, {}",
                    states.join(", ")
                ))
            }),
        }
    }
}

/// One page of `runs.list` with `paged`: the runs (oldest first) and the
/// `before` of the next page, if more may remain.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ListPage<T> {
    pub runs: Vec<T>,
    pub next: Option<String>,
}

/// A run as `runs.list` with `brief` gives it: what `agents ls` shows of
/// it (its status as in its record, children working included).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BriefRun {
    pub id: String,
    pub name: String,
    pub harness: String,
    pub host: String,
    pub cwd: String,
    pub state: RunState,
    pub status: ActivityStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i64>,
    /// All of its tokens, cache included; absent when no transcript of the
    /// run recorded any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<i64>,
}

impl From<ListedRun> for BriefRun {
    fn from(ListedRun { run, usage }: ListedRun) -> Self {
        BriefRun {
            tokens: usage.map(|u| u.tokens.input + u.tokens.output + u.tokens.cache_read + u.tokens.cache_write),
            id: run.id,
            name: run.name,
            harness: run.harness,
            host: run.host,
            cwd: run.cwd,
            state: run.state,
            status: run.status,
            started_at: run.started_at,
            ended_at: run.ended_at,
            pid: run.pid,
        }
    }
}

impl ListParams {
    pub const DEFAULT_LIMIT: usize = 500;
    pub const MAX_LIMIT: usize = 1000;
}

/// `runs.explain`: how a live run's status was decided, and what would
/// decide it next.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StatusExplanation {
    pub run: String,
    pub name: String,
    pub status: ActivityStatus,
    pub why: String,
    /// The rule that decided: `login`, `hook`, `screen`, `output`,
    /// `decayed` or `quiet`, and the rule in words.
    pub rule: String,
    pub rule_words: String,
    /// Every piece of evidence held, strongest kind first.
    pub evidence: Vec<EvidenceSeen>,
    /// With no new evidence the status changes in this many ms (output
    /// falling quiet, a hook decaying), to `next`; `None`: it holds.
    pub recheck_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next: Option<NextStatus>,
    /// What keeps a prompt off the user's draft for this run: its family's
    /// input-line rule and the typing window, or the window alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<String>,
    /// For a boxed run (`--sandbox`): its box, and the failures it causes
    /// (a tool that cannot write or find a file outside its work tree).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EvidenceSeen {
    /// `hook`, `screen` or `output`.
    pub kind: String,
    pub said: String,
    /// How long ago it was seen (the screen: its finding last changed).
    pub age_ms: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct NextStatus {
    pub status: ActivityStatus,
    pub rule: String,
    pub why: String,
}

/// `runs.wait_children`: once every child of the run has ended, the run's
/// record then and each child's, oldest first.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChildrenOutcome {
    pub run: RunRecord,
    pub children: Vec<RunRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRef {
    /// Full id, unique prefix, or name.
    pub run: String,
}

/// `runs.wait`: until the run ends.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WaitParams {
    /// Full id, unique prefix, or name.
    pub run: String,
    /// The waiter takes the run's result, so its parent gets no task
    /// result while the wait lasts (`agents wait`, MCP `run_wait`). False
    /// for a wait that only watches the end (`agents cancel`, an attach).
    #[serde(default = "takes_result")]
    pub takes_result: bool,
}

fn takes_result() -> bool {
    true
}

impl WaitParams {
    /// A wait that takes the run's result.
    pub fn taking(run: impl Into<String>) -> WaitParams {
        WaitParams {
            run: run.into(),
            takes_result: true,
        }
    }

    /// A wait that only watches the run end.
    pub fn watching(run: impl Into<String>) -> WaitParams {
        WaitParams {
            run: run.into(),
            takes_result: false,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SendParams {
    pub run: String,
    pub text: String,
    /// Minted by the client so a retry never delivers twice.
    pub prompt_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SendResult {
    pub prompt_id: String,
    /// `queued`, `held` (the run's input has the user's draft, or they
    /// just typed into it: it goes in once that is over) or `delivered`.
    pub state: String,
    /// Why a `held` prompt waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CancelParams {
    pub run: String,
    #[serde(default)]
    pub force: bool,
    /// The run that asks (its `AGENTS_RUN_ID`); none for the user. A child
    /// its own parent cancels is no task result for that parent: it asked
    /// for the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// `by`'s proof (`crate::proof`): without it the user asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AttachParams {
    pub run: String,
    /// Replay from this offset; `None` starts from the current screen.
    pub offset: Option<u64>,
    /// Never replace missed bytes with a snapshot (`agents logs`).
    #[serde(default)]
    pub lossless: bool,
    /// Screen updates instead of bytes (`protocol::screen`): the whole
    /// screen, then what changed, in `screen` frames; each acknowledged
    /// with `runs.ack` (`offset`: the update's `seq`) before the next is
    /// sent. `offset` and `lossless` do not apply.
    #[serde(default)]
    pub screen: bool,
    /// With a byte subscription: every size the run's screen took (as
    /// `runs.sizes` gives them), each in an `output.size` notification sent
    /// before the bytes at its offset, and each later one as it is taken —
    /// so a follower of the bytes wraps them as the screen did.
    #[serde(default)]
    pub sizes: bool,
    /// Which of the connection's screen subscriptions of the run this is
    /// (its updates' `screen` frames carry it; `runs.ack` and
    /// `runs.detach` name it): a daemon showing one remote run in several
    /// places holds one on the host for each. Attaching again with the
    /// same id starts that one over.
    #[serde(default)]
    pub sub: u64,
    /// With `screen`: the newest screen format this client decodes
    /// (`protocol::screen::FORMAT`); a client of an older build sends none
    /// and is sent format 1, which it reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_format: Option<u8>,
    /// With `screen`, for a run that has ended: its last screen rewrapped
    /// to these `[rows, cols]`, where the client shows it at a size the
    /// run no longer takes (a pane narrower than it was): nothing is cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<[u16; 2]>,
}

impl AttachParams {
    /// A client's one screen subscription of `run` (`sub` 0), in the
    /// screen `format` it decodes: what a pane, `agents attach` and the
    /// web view ask for.
    pub fn screen(run: String, format: u8) -> AttachParams {
        AttachParams {
            run,
            screen: true,
            screen_format: Some(format),
            ..AttachParams::default()
        }
    }
}

/// `runs.history`: the rows that scrolled off the run's main screen before
/// log offset `before` (a screen subscription's first update names the
/// offset it stands for), the newest `max_lines` that fit one answer,
/// oldest first, as plain text.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HistoryParams {
    pub run: String,
    pub before: u64,
    pub max_lines: usize,
}

/// `runs.ack`: the client has shown a run's output up to `offset`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AckParams {
    pub run: String,
    pub offset: u64,
    /// Of the screen subscription (`offset`: the update's `seq`).
    #[serde(default)]
    pub screen: bool,
    /// Which screen subscription (`AttachParams::sub`).
    #[serde(default)]
    pub sub: u64,
}

/// `runs.detach`: ends this connection's subscriptions to a run: its
/// screen, its byte stream (`screen: false`), or both (no `screen`). The
/// size the connection held is released once it shows the run no more.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DetachParams {
    pub run: String,
    #[serde(default)]
    pub screen: Option<bool>,
    /// Only this screen subscription (`AttachParams::sub`); without, all
    /// of the run's.
    #[serde(default)]
    pub sub: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AttachResult {
    pub run: RunRecord,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResizeParams {
    pub run: String,
    pub rows: u16,
    pub cols: u16,
}

/// `runs.answer`: answer the question a run waits on (a permission prompt).
/// `yes` picks the first choice, `no` dismisses (Esc), anything else is typed
/// followed by Enter. Refused when no question is on the screen any more.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct AnswerParams {
    pub run: String,
    pub answer: String,
    /// Minted by the caller so a retry is applied at most once: a repeated
    /// id gets the first attempt's outcome, never a second answer typed
    /// into whatever question came next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_id: Option<String>,
    /// The permission request answered (`ask-…`, from a team's approval
    /// mail): refused once its question is gone, applied at most once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}

/// `runs.rerun`: start a run's command again (same harness, arguments, cwd).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RerunParams {
    pub run: String,
    /// The client's environment, as for `runs.start`.
    #[serde(default)]
    pub env: Vec<(String, String)>,
}

/// `runs.rename`: the run's new name (its old one keeps finding it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RenameParams {
    pub run: String,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DaemonStatus {
    pub pid: u32,
    pub version: String,
    pub home: String,
    pub live_runs: usize,
    pub clients: usize,
    /// The binary this daemon runs, resolved when it started: it tells
    /// builds of one version apart (`hosts install` restarts a host's
    /// daemon that runs another). Empty from a daemon older than the field.
    #[serde(default)]
    pub exe: String,
    /// The binaries the live runs' supervisors run, with how many runs
    /// each (a file replaced since shows as `… (deleted)`: an older build,
    /// still served through the versioned protocol).
    #[serde(default)]
    pub supervisors: Vec<SupervisorBuild>,
    /// Serves screen subscriptions (`runs.attach` with `screen`); false
    /// from a daemon older than them, whose runs' screens a daemon that
    /// links to it builds from its mirror instead.
    #[serde(default)]
    pub screens: bool,
    /// Runs a wait in flight awaits (`runs.wait`, `runs.wait_children`):
    /// their results go to the waiter, not to their parents.
    #[serde(default)]
    pub awaited: usize,
    /// Keeps several screen subscriptions of one run on a connection,
    /// each by its `sub` (`AttachParams::sub`), and marks each one's
    /// `output.end` with `screen` and `sub`; false from a daemon older than
    /// them, which keeps one a run.
    #[serde(default)]
    pub screen_subs: bool,
    /// Boxes runs (`--sandbox`); false from an older daemon, which would
    /// drop the box: a boxed start is never placed on such a host.
    #[serde(default)]
    pub sandbox: bool,
    /// Notifications the daemon heard and did not know, with how many
    /// (a supervisor of a newer build): none from an older daemon.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown: Vec<UnknownSeen>,
    /// Where the web view the daemon serves (`[web] listen`) is, once it
    /// serves; open it with a device's token (`agents web tokens add`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub web: Option<String>,
}

/// A kind of notification heard and not known, and how often.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct UnknownSeen {
    pub what: String,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SupervisorBuild {
    pub exe: String,
    pub runs: usize,
}
