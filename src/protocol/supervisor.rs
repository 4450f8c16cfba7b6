//! The run socket: what a daemon and a run's supervisor say to each other, as JSON-RPC in control frames, and the
//! screen subscriptions in screen frames (`protocol::screen`).
//!
//! A supervisor outlives daemons of other builds, so this is kept stable:
//! fields are added with defaults and never renamed, and a method a peer
//! does not know is answered "unknown method" (the caller falls back).

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::exit::ExitEvidence;
use super::rpc::Request;
use crate::api::{ActivityStatus, Done};
use crate::pty::Identity;

/// Methods of the run socket.
pub mod method {
    pub const HELLO: &str = "sup.hello";
    pub const WATCH: &str = "sup.watch";
    pub const SNAPSHOT: &str = "sup.snapshot";
    pub const RESIZE: &str = "sup.resize";
    pub const CANCEL: &str = "sup.cancel";
    pub const ACK_EXIT: &str = "sup.ack_exit";
    /// Notification: the log's committed length.
    pub const OFFSET: &str = "sup.offset";
    /// Notification: the run ended; carries the evidence.
    pub const EXITED: &str = "sup.exited";
    /// Type an answer, only if the screen still shows a question right now.
    pub const ANSWER: &str = "sup.answer";
    /// Notification: what the screen says the agent waits for (or null).
    pub const SCREEN: &str = "sup.screen";
    /// Type a prompt, then Enter; with `paste`, as a bracketed paste if
    /// the program asked for one (read from the screen at that moment).
    /// With `id`, a prompt already typed is not typed again: the answer
    /// says `again`.
    pub const PROMPT: &str = "sup.prompt";
    /// `every_ms`: how long output may go on before its offset is announced
    /// (0, the default: at once). The daemon asks for more while nobody
    /// watches the run's output. With `busy_ms` (a supervisor whose `hello`
    /// says `busy`), each offset says whether output is still going
    /// (`busy`), and once it has paused `busy_ms` an offset says so: the
    /// daemon then needs no offsets in between to know the run works, and
    /// `every_ms` may be up to `BUSY_PACE_MAX_MS`. Answers the log's
    /// length, which is then announced too.
    pub const PACE: &str = "sup.pace";
    /// Notification: the daemon stops on purpose; do not start another.
    pub const RELEASE: &str = "sup.release";
    /// A hook report from a boxed run's own hook socket (`supervise::hooks`).
    pub const HOOK: &str = "sup.hook";
}

/// The spawn spec: what the daemon hands a new supervisor on its stdin.
/// Holds environment values, so it is never written to disk.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuperviseSpec {
    pub run: String,
    pub argv: Vec<String>,
    pub cwd: String,
    pub env: Vec<(String, String)>,
    pub rows: u16,
    pub cols: u16,
    pub timeout_secs: Option<u64>,
    pub grace: Grace,
    /// The harness family, for reading its screen in its own words (a
    /// login problem). Empty from a daemon older than the field.
    #[serde(default)]
    pub family: String,
    /// The user's umask, for the harness: the daemon and supervisors create
    /// their own files owner-only (`paths::OWNER_ONLY`), but what the agent
    /// writes in the user's repository keeps the user's modes.
    #[serde(default = "default_umask")]
    pub umask: u32,
    /// How long the output log may be refused by a full disk, the harness
    /// paused meanwhile, before the run is ended (`engine.disk_full_patience_ms`).
    #[serde(default)]
    pub disk_full_patience_ms: u64,
    /// Output faster than this (bytes a second) makes the run yield the
    /// processor while it lasts (`engine.flood_bytes_per_s`); 0 never.
    #[serde(default = "default_flood_rate")]
    pub flood_bytes_per_s: u64,
    /// The user's screen-rule files (family, TOML text) read beside the
    /// built-in ones (`harness::screen_rules`); none from an older daemon.
    #[serde(default)]
    pub screen_rules: Vec<(String, String)>,
    /// The user's soft limit of open files, which the supervisor takes back
    /// before the harness starts (the daemon raised its own); none: keep it.
    #[serde(default)]
    pub open_files: Option<u64>,
    /// Where to serve the run's hook socket before the harness starts (a
    /// boxed run's, bound into its box: `supervise::hooks`); none: none.
    #[serde(default)]
    pub hook_socket: Option<String>,
}

/// Ten times what a busy agent's own interface draws (Claude Code redrawing
/// a long answer stays under 0.5 MB/s), far below a `cat` of a large file.
pub const FLOOD_BYTES_PER_S: u64 = 5_000_000;

fn default_flood_rate() -> u64 {
    FLOOD_BYTES_PER_S
}

fn default_umask() -> u32 {
    0o022
}

/// Cancel escalation: SIGINT, wait, SIGTERM, wait, SIGKILL.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Grace {
    pub after_sigint_ms: u64,
    pub after_sigterm_ms: u64,
}

impl Default for Grace {
    /// Long enough for an agent to save its conversation on SIGINT and to run
    /// its exit handlers on SIGTERM; short enough that a cancel feels prompt.
    fn default() -> Self {
        Grace {
            after_sigint_ms: 3000,
            after_sigterm_ms: 3000,
        }
    }
}

/// Methods of a screen subscription on the run socket: the whole screen,
/// then what changed, in `screen` frames (`protocol::screen`).
pub mod screen_method {
    /// `{sub, frame_ms?, format?}`: start subscription `sub` (an id the
    /// caller picks), its updates in screen `format` (default 1, what
    /// daemons of older builds read).
    pub const WATCH: &str = "sup.screen_watch";
    /// `{sub, seq}`: the subscriber has shown update `seq`.
    pub const ACK: &str = "sup.screen_ack";
    /// `{sub}`: end the subscription.
    pub const CLOSE: &str = "sup.screen_close";
}

/// The longest pace the daemon may ask for (`method::PACE`).
pub const PACE_MAX_MS: u64 = 1000;
/// The longest pace with `busy_ms`: offsets then only keep the daemon's
/// count of the log's bytes fresh.
pub const BUSY_PACE_MAX_MS: u64 = 10_000;
/// The longest pause a supervisor waits for before saying output paused
/// (`Pace::busy_ms`): a run's own quiet window, which grows for a run at
/// work in a slow rhythm (`engine/rhythm.rs`).
pub const BUSY_MAX_MS: u64 = 10_000;

/// A prompt the screen shows, with the words the TUI and `agents show` use
/// to say why (the harness layer reads screens for them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenFinding {
    pub status: ActivityStatus,
    pub why: String,
    /// The question's own lines, from where it starts to the bottom of
    /// what is drawn (bounded): what a team's leader is asked to answer.
    /// `None` from older supervisors and for what is no question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// The screen rule that found it (`agents explain` names it). `None`
    /// from older supervisors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleRef>,
}

/// A screen rule: its kind (`question`, `choice_row`, `choice_list`,
/// `login`), the words it looks for, and the family whose file holds it —
/// built in, or the user's `screens/FAMILY.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleRef {
    pub kind: String,
    pub words: String,
    pub family: String,
    #[serde(default)]
    pub user: bool,
}

/// What reading a run's screen shows, as its supervisor tells its watcher
/// (`Note::Screen`). Every field but `finding` was added later: an older
/// supervisor leaves them out, and it reads as not saying.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenSigns {
    /// What the screen says the agent waits for (a question, a login).
    #[serde(default)]
    pub finding: Option<ScreenFinding>,
    /// Whether it shows a turn in progress (only for a family with a
    /// `[busy]` rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<bool>,
    /// A limit the harness says it hit, in its own words (`[[limit]]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// Whether the screen, less its spinners and counters, has been still
    /// for `sup.watch`'s `still_ms` (only when asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub still: Option<bool>,
}

impl ScreenSigns {
    /// The signs a notification carries; a malformed field reads as not
    /// said.
    fn from_params(params: &Value) -> ScreenSigns {
        let field = |name: &str| params.get(name).cloned().unwrap_or(Value::Null);
        ScreenSigns {
            finding: serde_json::from_value(field("finding")).unwrap_or(None),
            turn: params.get("turn").and_then(Value::as_bool),
            limit: serde_json::from_value(field("limit")).unwrap_or(None),
            still: params.get("still").and_then(Value::as_bool),
        }
    }
}

/// A limit a harness printed it hit: its model refused it for a while.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    pub kind: LimitKind,
    /// The line that says so, as drawn (bounded).
    pub line: String,
}

/// Which limit, in the words every family's own message maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// The account's usage allowance for a period is spent.
    UsageLimit,
    /// Too many requests for now.
    RateLimit,
    /// The provider is overloaded.
    Overloaded,
    /// No credit or quota left to bill.
    Quota,
}

impl LimitKind {
    pub fn words(self) -> &'static str {
        match self {
            LimitKind::UsageLimit => "usage limit",
            LimitKind::RateLimit => "rate limit",
            LimitKind::Overloaded => "overloaded",
            LimitKind::Quota => "quota",
        }
    }
}

/// `sup.watch`'s parameters (a daemon of an older build sends none).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Watch {
    /// Say `still` once the screen has not changed for this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub still_ms: Option<u64>,
}

/// The answer to `sup.hello`: who is supervising what, and where it stands.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    pub run: String,
    /// The supervisor itself (checked against the record before adopting).
    pub supervisor: Option<Identity>,
    /// The harness, leader of its process group.
    pub leader: Identity,
    pub rows: u16,
    pub cols: u16,
    /// Bytes in the output log.
    pub offset: u64,
    /// How the run ended, once it has.
    #[serde(default)]
    pub exited: Option<ExitEvidence>,
    /// What the screen says the agent waits for.
    #[serde(default)]
    pub screen: Option<ScreenFinding>,
    /// Says when output pauses (`method::PACE` with `busy_ms`); false from
    /// a supervisor older than the field.
    #[serde(default)]
    pub busy: bool,
    /// The longest `busy_ms` it takes (`method::PACE`); absent from a
    /// supervisor that took at most `PACE_MAX_MS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_max_ms: Option<u64>,
    /// When the harness was spawned (ms since the Unix epoch): when the run
    /// started, whenever its daemon hears of it. Absent from a supervisor
    /// older than the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<i64>,
}

/// `sup.pace`'s parameters.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Pace {
    pub every_ms: u64,
    /// Absent for a supervisor that does not say `busy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_ms: Option<u64>,
}

/// `sup.prompt`'s parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Prompt {
    /// The queued prompt's id: typed once however often asked.
    #[serde(default)]
    pub id: Option<String>,
    pub text: String,
    #[serde(default)]
    pub paste: bool,
    /// How long Enter waits after the text (bounded by the supervisor).
    #[serde(default)]
    pub enter_ms: u64,
    /// Hold the prompt, untyped, while the run's input line holds text or
    /// the user typed into the run within this many ms: the answer is then
    /// [`Held`]. None types it as things stand (a prompt sent on purpose,
    /// or a daemon older than holding).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_typing_ms: Option<u64>,
}

/// `sup.prompt`'s answer when it held the prompt: why, and when to ask
/// again (the keystroke window's end; a draft is looked at again sooner).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    pub held: String,
    pub retry_ms: u64,
}

/// `sup.answer`'s parameters: the keys of the answer, or with `text` a
/// prompt typed like `sup.prompt`'s; waiting up to `wait_ms` for the
/// question to be drawn. With `id`, typed once however often asked, as a
/// prompt with its id is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub bytes: Vec<u8>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub paste: bool,
    #[serde(default)]
    pub wait_ms: u64,
    #[serde(default)]
    pub enter_ms: u64,
    /// How long the question must have been seen on the screen before the
    /// answer is typed: a CLI that ignores keys for a moment after it
    /// draws its dialog (Claude Code 2.1.332) would drop an answer typed
    /// sooner. An older supervisor leaves it out and types at once.
    #[serde(default)]
    pub settle_ms: u64,
}

/// `sup.resize`'s parameters.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Resize {
    pub rows: u16,
    pub cols: u16,
}

/// `sup.cancel`'s parameters.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Cancel {
    #[serde(default)]
    pub force: bool,
}

/// A method of the run socket: its name, what the daemon sends, what the
/// supervisor answers (`api::method::Method` is the tool table's).
pub trait Method: 'static {
    const NAME: &'static str;
    type Params: Serialize + DeserializeOwned + Send + 'static;
    type Reply: Serialize + DeserializeOwned + Send + 'static;
}

/// One marker type per method of the run socket, under `calls`:
/// `Marker = NAME: Params => Reply`.
macro_rules! calls {
    ($($(#[$doc:meta])* $marker:ident = $name:path : $params:ty => $reply:ty;)*) => {
        /// The run socket's methods as types ([`Method`]).
        pub mod calls {
            use super::*;
            $(
                $(#[$doc])*
                pub enum $marker {}
                impl Method for $marker {
                    const NAME: &'static str = $name;
                    type Params = $params;
                    type Reply = $reply;
                }
            )*
        }
    };
}

calls! {
    /// Sent with no parameters (null), as every daemon did.
    Hello = method::HELLO: () => super::Hello;
    Watch = method::WATCH: super::Watch => Done;
    Snapshot = method::SNAPSHOT: () => super::Snapshot;
    Resize = method::RESIZE: super::Resize => Done;
    Cancel = method::CANCEL: super::Cancel => Done;
    AckExit = method::ACK_EXIT: () => Done;
    /// The supervisor's word on the answer it typed (`{"answered": why}`),
    /// kept as it came: `runs.answer` gives it back.
    Answer = method::ANSWER: super::Answer => Value;
    /// Null when the prompt was typed now.
    Prompt = method::PROMPT: super::Prompt => Option<super::Prompted>;
    Pace = method::PACE: super::Pace => super::Paced;
    Release = method::RELEASE: () => Done;
    ScreenWatch = screen_method::WATCH: super::ScreenWatch => Done;
    ScreenAck = screen_method::ACK: super::ScreenAck => Done;
    ScreenClose = screen_method::CLOSE: super::ScreenClose => Done;
}

/// `sup.snapshot`'s answer: the screen and the log offset it stands for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    #[serde(default)]
    pub offset: u64,
    /// The screen's size; none said, the run's.
    #[serde(default)]
    pub rows: Option<u16>,
    #[serde(default)]
    pub cols: Option<u16>,
    /// The screen's text and escapes, as the emulator draws it.
    #[serde(default)]
    pub screen: String,
}

/// `sup.pace`'s answer: the log's length, now announced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paced {
    #[serde(default)]
    pub offset: Option<u64>,
}

/// `sup.prompt`'s answer when not typed now: typed before (`again`), or
/// held ([`Held`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompted {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub again: bool,
    #[serde(default, flatten)]
    pub held: Option<Held>,
}

/// `sup.screen_watch`'s parameters: subscription `sub`, an update at most
/// every `frame_ms`, in screen `format` (none: format 1, what daemons of
/// older builds read).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct ScreenWatch {
    pub sub: u64,
    #[serde(default)]
    pub frame_ms: Option<u64>,
    #[serde(default)]
    pub format: Option<u8>,
}

/// `sup.screen_ack`'s parameters: subscription `sub` has shown update `seq`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct ScreenAck {
    pub sub: u64,
    pub seq: u64,
}

/// `sup.screen_close`'s parameters.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct ScreenClose {
    pub sub: u64,
}

/// What a supervisor tells its watcher (`sup.watch`) unasked.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// The log's length, and whether output is going on (`sup.pace`'s
    /// `busy_ms`; `None` when not asked).
    Offset {
        offset: u64,
        busy: Option<bool>,
    },
    /// What the screen says (`ScreenSigns`).
    Screen(ScreenSigns),
    Exited(Box<ExitEvidence>),
    /// A hook fired in the run, told on its hook socket: the link it came
    /// over is the run's proof.
    Hook(Box<crate::api::HookReport>),
    /// A notification this build does not know (a newer supervisor's), or
    /// one it cannot read: its method, counted where it lands.
    Unknown(String),
}

impl Note {
    pub fn to_request(&self) -> Request {
        match self {
            Note::Offset { offset, busy } => {
                let params = OffsetNote {
                    offset: *offset,
                    busy: *busy,
                };
                Request::notification(method::OFFSET, serde_json::to_value(params).unwrap_or(Value::Null))
            }
            Note::Screen(signs) => {
                let params = serde_json::to_value(signs).unwrap_or(Value::Null);
                Request::notification(method::SCREEN, params)
            }
            Note::Exited(evidence) => {
                let params = ExitedNote { evidence };
                Request::notification(method::EXITED, serde_json::to_value(params).unwrap_or(Value::Null))
            }
            Note::Hook(report) => {
                Request::notification(method::HOOK, serde_json::to_value(report).unwrap_or(Value::Null))
            }
            Note::Unknown(method) => Request::notification(method, Value::Null),
        }
    }

    /// The note a notification carries: [`Note::Unknown`] for one this
    /// build does not know or cannot read, never dropped unsaid.
    pub fn from_request(req: &Request) -> Note {
        let param = |name: &str| req.params.get(name).cloned().unwrap_or(Value::Null);
        let known = match req.method.as_str() {
            method::OFFSET => req
                .params
                .get("offset")
                .and_then(Value::as_u64)
                .map(|offset| Note::Offset {
                    offset,
                    busy: req.params.get("busy").and_then(Value::as_bool),
                }),
            method::SCREEN => Some(Note::Screen(ScreenSigns::from_params(&req.params))),
            method::EXITED => serde_json::from_value(param("evidence"))
                .ok()
                .map(|e| Note::Exited(Box::new(e))),
            method::HOOK => serde_json::from_value(req.params.clone())
                .ok()
                .map(|r| Note::Hook(Box::new(r))),
            other => return Note::Unknown(crate::text::bounded(other, 64)),
        };
        known.unwrap_or_else(|| Note::Unknown(format!("{} (unreadable)", req.method)))
    }
}

/// `sup.offset`'s parameters.
#[derive(Serialize)]
struct OffsetNote {
    offset: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    busy: Option<bool>,
}

/// `sup.exited`'s parameters.
#[derive(Serialize)]
struct ExitedNote<'a> {
    evidence: &'a ExitEvidence,
}

/// A request's parameters as `T`, or the error answered for them.
pub fn params<T: serde::de::DeserializeOwned>(req: &Request) -> Result<T, String> {
    serde_json::from_value(req.params.clone()).map_err(|e| format!("{}: {e}", req.method))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence() -> ExitEvidence {
        crate::protocol::exit::tests::clean()
    }

    #[test]
    fn every_note_reads_back_as_sent() {
        let finding = ScreenFinding {
            status: ActivityStatus::NeedsApproval,
            why: "screen shows a permission prompt".into(),
            question: Some("Allow?\n1. Yes".into()),
            rule: Some(RuleRef {
                kind: "question".into(),
                words: "Allow?".into(),
                family: "claude".into(),
                user: true,
            }),
        };
        for note in [
            Note::Offset { offset: 7, busy: None },
            Note::Offset {
                offset: 9,
                busy: Some(false),
            },
            Note::Screen(ScreenSigns::default()),
            Note::Screen(ScreenSigns {
                finding: Some(finding),
                turn: Some(false),
                limit: Some(Limit {
                    kind: LimitKind::RateLimit,
                    line: "API Error: 429 rate limited".into(),
                }),
                still: Some(true),
            }),
            Note::Exited(Box::new(evidence())),
        ] {
            assert_eq!(Note::from_request(&note.to_request()), note);
        }
    }

    /// A newer supervisor's notification, or one that cannot be read, is
    /// a note of its own for the daemon to count, not dropped.
    #[test]
    fn a_notification_this_build_does_not_know_is_an_unknown_note() {
        let future = Request::notification("sup.future", serde_json::json!({ "x": 1 }));
        assert_eq!(Note::from_request(&future), Note::Unknown("sup.future".into()));
        let bad = Request::notification(method::OFFSET, serde_json::json!({ "offset": "ten" }));
        assert_eq!(
            Note::from_request(&bad),
            Note::Unknown("sup.offset (unreadable)".into())
        );
    }

    #[test]
    fn a_hello_from_a_supervisor_older_than_busy_reads_as_not_saying_it() {
        let old = serde_json::json!({
            "run": "R", "supervisor": null, "rows": 24, "cols": 80, "offset": 3,
            "leader": { "pid": 5, "start_ticks": 6, "boot_id": "b" },
            "exited": null, "screen": null,
        });
        let hello: Hello = serde_json::from_value(old).unwrap();
        assert!(!hello.busy && hello.exited.is_none() && hello.offset == 3);
    }

    #[test]
    fn a_prompts_answer_reads_as_typed_before_held_or_typed_now() {
        type Reply = <calls::Prompt as Method>::Reply;
        let read = |v: Value| serde_json::from_value::<Reply>(v).unwrap();
        let again = read(serde_json::json!({ "again": true })).unwrap();
        assert!(again.again && again.held.is_none());
        let held = read(serde_json::json!({ "held": "a draft", "retry_ms": 300 })).unwrap();
        assert_eq!(
            (held.again, held.held),
            (
                false,
                Some(Held {
                    held: "a draft".into(),
                    retry_ms: 300
                })
            )
        );
        assert_eq!(read(Value::Null), None, "typed now");
        // Sent as every supervisor has said it.
        let said = serde_json::to_value(Prompted {
            again: true,
            held: None,
        })
        .unwrap();
        assert_eq!(said, serde_json::json!({ "again": true }));
    }

    #[test]
    fn prompt_params_from_an_older_daemon_have_no_id_and_type_at_once() {
        let req = Request::new(1, method::PROMPT, serde_json::json!({ "text": "hi" }));
        let p: Prompt = params(&req).unwrap();
        assert_eq!((p.id, p.text.as_str(), p.paste, p.enter_ms), (None, "hi", false, 0));
        let bad = Request::new(2, method::RESIZE, serde_json::json!({ "rows": "x" }));
        assert!(params::<Resize>(&bad).unwrap_err().starts_with("sup.resize"));
    }
}
