//! The small answers of the tool table that no other type says, and the
//! "no parameters" and "nothing to say" of methods that take or answer
//! nothing (`api::method`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{ListPage, ListedRun, MailRecord};

/// The parameters of a method that takes none: sent as `{}`, and anything
/// is taken (older clients sent `{}` or null).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NoParams;

impl Serialize for NoParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        s.serialize_map(Some(0))?.end()
    }
}

impl<'de> Deserialize<'de> for NoParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| NoParams)
    }
}

/// The answer of a method that has nothing to say: null on the wire, and
/// whatever a daemon of another version says is taken as it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Done;

impl Serialize for Done {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_unit()
    }
}

impl<'de> Deserialize<'de> for Done {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| Done)
    }
}

/// `runs.list`: every live run and the newest ended ones, or with
/// `paged` a page of them. On the wire a bare list or a page object, told
/// apart by their first character (not buffered and tried in turn, as an
/// untagged enum is: a list of thousands of runs is read once).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RunsListed {
    All(Vec<ListedRun>),
    Page(ListPage<ListedRun>),
}

impl<'de> Deserialize<'de> for RunsListed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RunsListed, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        struct Either;
        impl<'de> serde::de::Visitor<'de> for Either {
            type Value = RunsListed;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of runs or a page of them")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<RunsListed, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(RunsListed::All)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RunsListed, A::Error> {
                ListPage::deserialize(MapAccessDeserializer::new(map)).map(RunsListed::Page)
            }
        }
        d.deserialize_any(Either)
    }
}

impl RunsListed {
    /// The runs listed, whichever the shape.
    pub fn runs(self) -> Vec<ListedRun> {
        match self {
            RunsListed::All(runs) => runs,
            RunsListed::Page(page) => page.runs,
        }
    }
}

/// `runs.cancel`: the run, and the ids asked to end (it and its owned
/// children).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Cancelling {
    pub run: String,
    pub cancelling: Vec<String>,
}

/// `teams.cancel`: the team, and the ids of its runs asked to end.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TeamCancelled {
    pub team: String,
    pub cancelled: Vec<String>,
}

/// `prompts.edit` and `prompts.drop`: the waiting prompt changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PromptChanged {
    pub prompt: String,
    pub run: String,
}

/// `mail.send`: the message, or to a team each member's copy.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MailSent {
    Copies(Vec<MailRecord>),
    One(Box<MailRecord>),
}

impl MailSent {
    /// The records sent, one or many.
    pub fn records(self) -> Vec<MailRecord> {
        match self {
            MailSent::Copies(copies) => copies,
            MailSent::One(one) => vec![*one],
        }
    }
}

/// `hooks.report`: what the daemon took of a hook.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum HookOutcome {
    /// The run had ended: the hook changed nothing.
    Ignored { run: String, ignored: String },
    Taken {
        run: String,
        /// The hook named the run's session first.
        session_learned: bool,
        /// The run's new name, from its first prompt.
        renamed: Option<String>,
    },
}

/// `output.end`: a subscription reached the end of a run's output or
/// screen, for now (`final` false: caught up, or `skipped` ahead past a
/// snapshot) or for good.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct OutputEnd {
    pub run: String,
    /// The log offset reached (a byte subscription's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    #[serde(rename = "final")]
    pub last: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    /// Why the stream ended early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Of screen subscription `sub`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub screen: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<u64>,
}

/// `output.size`: a size the run's screen took, before the bytes at its
/// offset.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OutputSize {
    pub run: String,
    pub size: crate::values::screen::SizeChange,
}

/// `run.changed`: a run's record changed (its id only). An empty id:
/// changes were missed (the client fell behind), any run may have
/// changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunChanged {
    pub run: String,
}
