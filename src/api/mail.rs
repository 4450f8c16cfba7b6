//! Tool-table types of the mailbox (docs/design.md §13): a message between
//! runs (or from the user) with an envelope of its own, stored, and
//! delivered into the recipient's harness as a queued prompt marked as mail.

use serde::{Deserialize, Serialize};

/// The envelope's version: what a reader of older builds can check.
pub const MAIL_VERSION: u32 = 1;

/// `mail.send`: answers the message's record, or, sent to a team, one
/// record a member.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct MailSendParams {
    /// A run (id, prefix or name).
    pub to: String,
    pub body: String,
    /// The sending run (id, prefix or name); `None` is the user.
    #[serde(default)]
    pub from: Option<String>,
    /// `from`'s proof (`crate::proof`): without it the sender is the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<String>,
    /// Minted by the sender, so a retry after a lost answer is the same
    /// message; minted here when absent.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub thread: Option<String>,
    #[serde(default)]
    pub in_reply_to: Option<String>,
    /// Relayed by the daemon that drives the recipient here from another
    /// machine: the sender as it is called there (a run's name, or
    /// `user`). The message is stored from that name with no run here
    /// (`from` must be none); a reply to it goes back through that daemon.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relayed_from: Option<String>,
}

impl MailSendParams {
    /// A body's bound: a long message, still one prompt.
    pub const MAX_BODY: usize = 16 * 1024;
}

/// One message with its envelope and where its delivery stands.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MailRecord {
    pub version: u32,
    pub id: String,
    /// The sending run's id, or `user`.
    pub from: String,
    /// As the sender is called: its run's name, or `user`.
    pub from_name: String,
    /// The recipient run's id.
    pub to: String,
    pub to_name: String,
    /// The thread the message is part of (its own id when it starts one).
    pub thread: String,
    pub in_reply_to: Option<String>,
    pub at: String,
    pub body: String,
    /// `stored` (not yet handed to the run), `queued` (waiting for the
    /// agent to be idle), `delivered`, `read` (taken over MCP, never
    /// typed), `dropped` (taken back while it waited) or `undelivered`
    /// (the run ended first; `reason` says how).
    pub state: String,
    /// Why it was never delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `mail.list`: the messages to or from a run, or every message.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct MailListParams {
    #[serde(default)]
    pub run: Option<String>,
    /// Every member's messages (a team's name, id or id prefix).
    #[serde(default)]
    pub team: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
}

impl MailListParams {
    pub const DEFAULT_LIMIT: usize = 100;
    pub const MAX_LIMIT: usize = 1000;
}

/// `mail.wait`: until mail to `run` not yet typed into it arrives (or
/// `timeout_ms` passes), then takes it — read here, it is never typed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct MailWaitParams {
    pub run: String,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

impl MailWaitParams {
    pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
    pub const MAX_TIMEOUT_MS: u64 = 600_000;
}

/// `mail.read`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MailRef {
    pub id: String,
}

/// A message a run placed here from another daemon sent to an address
/// this daemon cannot resolve (`leader`, a member's name, a run of that
/// daemon): held on this host until the daemon that drives the run takes
/// it (`mail.outbox`) and says it is delivered (`mail.taken`). The envelope
/// is the sender's, its id too, so the daemon that takes it delivers it
/// once however often it is taken.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OutboundMail {
    pub version: u32,
    pub id: String,
    /// The sending run's id (the same id in its mirror).
    pub from: String,
    /// The address as the sender wrote it.
    pub to: String,
    pub thread: String,
    pub in_reply_to: Option<String>,
    pub at: String,
    pub body: String,
}

/// `mail.outbox`: the held mail of `run`, taken over the connection of
/// `epoch` (the asking daemon's link and the connection's epoch).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct OutboxParams {
    pub run: String,
    pub epoch: String,
}

/// `mail.taken`: the messages of `run` taken over `epoch` and delivered.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct OutboxTakenParams {
    pub run: String,
    pub epoch: String,
    pub ids: Vec<String>,
}

/// What `mail.taken` did: `taken` are dropped (or were already); `stale`
/// were taken again over a newer connection since `epoch`, and stay held
/// until that one says so.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct OutboxTaken {
    pub taken: Vec<String>,
    pub stale: Vec<String>,
}
