//! A harness family as data (docs/design.md §7): its program and version
//! probe, config home and environment, the words that resume or fork a
//! session and that give a first prompt, and how it takes typed keys.
//! `Adapter`'s defaults read it, so a family's code is only what differs:
//! a launch with hooks or a minted session, a session found on disk.

use super::credentials::HarnessEnv;

/// What a family is, as data.
pub struct Description {
    /// The family name, as runs record it: `claude`, `codex`, …
    pub family: &'static str,
    /// The program to run when no profile names one.
    pub program: &'static str,
    /// How a user installs it (`agents doctor` says so when it is not).
    pub install: &'static str,
    /// Whether `PROGRAM --version` says which version this is.
    pub version_probe: bool,
    /// The environment variable a profile's `config_home` sets.
    pub config_home: Option<&'static str>,
    /// The variables it reads, passed on from the client by default.
    pub env: &'static HarnessEnv,
    /// Whether it keeps conversations (sessions) a run links to.
    pub sessions: bool,
    /// The words that resume a session, and that start a new one from a
    /// copy of another.
    pub resume: Words,
    pub fork: Words,
    /// How a first prompt goes on its command line.
    pub prompt: Prompt,
    /// Whether a run's first prompt always goes there (the family has no
    /// input to type one into at its start), not typed in once it runs.
    pub prompt_at_start: bool,
    /// Whether a queued prompt is typed as one bracketed paste.
    pub pastes_prompts: bool,
    /// How long after a prompt's text its Enter is typed (ms).
    pub enter_delay_ms: u64,
    /// The keys that answer yes, and no, at a permission question.
    pub yes: &'static [u8],
    pub no: &'static [u8],
    /// How long a question must have been on screen before its answer is
    /// typed (ms): keys that come sooner may be dropped.
    pub answer_settle_ms: u64,
}

/// Command-line words about a session.
pub enum Words {
    /// These, each `{}` the session's id.
    Given(&'static [&'static str]),
    /// It cannot: why, or `None` for the plain "FAMILY cannot …".
    Refused(Option<&'static str>),
}

/// How a first prompt is given on the command line (else it is typed in
/// once the harness is idle).
pub enum Prompt {
    /// Not on the command line.
    Typed,
    /// These words, each `{}` the prompt.
    Given(&'static [&'static str]),
    /// The prompt alone, unless it starts with one of these characters
    /// (it would read as an option or a file).
    Alone { unless: &'static [char] },
}

impl Description {
    /// The usual description: a program of that name with sessions, a
    /// version, no config home, nothing on its command line but the user's,
    /// the first numbered choice for yes and Esc for no.
    pub const fn new(family: &'static str, program: &'static str) -> Description {
        Description {
            family,
            install: "",
            program,
            version_probe: true,
            config_home: None,
            env: &HarnessEnv::NONE,
            sessions: true,
            resume: Words::Refused(None),
            fork: Words::Refused(None),
            prompt: Prompt::Typed,
            prompt_at_start: false,
            pastes_prompts: false,
            enter_delay_ms: 0,
            yes: b"1",
            no: b"\x1b",
            answer_settle_ms: 0,
        }
    }

    /// A harness without sessions, hooks or version of its own (`shell`,
    /// `cmd`, `demo`).
    pub const fn builtin(family: &'static str, program: &'static str) -> Description {
        Description {
            version_probe: false,
            sessions: false,
            ..Description::new(family, program)
        }
    }

    pub fn resume_args(&self, session: &str) -> Result<Vec<String>, String> {
        self.resume
            .fill(session, || format!("{} cannot resume a session", self.family))
    }

    pub fn fork_args(&self, session: &str) -> Result<Vec<String>, String> {
        self.fork
            .fill(session, || format!("{} cannot fork a session", self.family))
    }

    pub fn prompt_args(&self, prompt: &str) -> Option<Vec<String>> {
        match self.prompt {
            Prompt::Typed => None,
            Prompt::Given(words) => Some(fill(words, prompt)),
            Prompt::Alone { unless } => (!prompt.starts_with(unless)).then(|| vec![prompt.to_string()]),
        }
    }
}

impl Words {
    fn fill(&self, session: &str, refused: impl FnOnce() -> String) -> Result<Vec<String>, String> {
        match self {
            Words::Given(words) => Ok(fill(words, session)),
            Words::Refused(Some(why)) => Err(why.to_string()),
            Words::Refused(None) => Err(refused()),
        }
    }
}

/// `words` with each `{}` replaced by `value`.
fn fill(words: &[&str], value: &str) -> Vec<String> {
    words.iter().map(|w| w.replace("{}", value)).collect()
}
