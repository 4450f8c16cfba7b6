//! Harness families a user declares in `config.toml` (`[harnesses.NAME]`,
//! docs/design.md §7): an agent CLI this build has no adapter for, told as
//! data — its program, how it takes a first prompt, how it starts, resumes
//! and forks a session, where a session's file lives and in which of the
//! known transcript formats, the variables it reads, whether it may be
//! boxed, and the keys that answer it. Its screen rules are a file like
//! the built-in ones, `<config>/agents/screens/NAME.toml`.
//!
//! Such a family gets what a built-in one gets that its description
//! allows: status from its screen, held prompts, resume, lineage, teams and
//! routines. The adapter seam hands out `&'static` adapters, so each
//! distinct declaration read is kept for the life of the process (a few a
//! config edit; an unchanged one is found again, never kept twice).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, PoisonError, RwLock};

use serde::Deserialize;

use super::adapter::{
    Adapter, KnownSession, Launch, LaunchContext, SessionQuery, created_since, files_since, new_uuid,
};
use super::credentials::HarnessEnv;
use super::description::{Description, Prompt, Words};
use crate::values::transcript::Format;

/// `[harnesses.NAME]`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct FamilyDef {
    /// The program: a path, or a name searched in PATH.
    pub binary: String,
    /// The words that give a first prompt on its command line, `{}` the
    /// prompt; none: the prompt is typed in once it is idle.
    pub prompt: Vec<String>,
    /// The words that start a new session under an id agents chooses,
    /// `{}` the id (`["--session-id", "{}"]`); none: it picks its own,
    /// found as the newest file of `sessions` once it runs.
    pub session_id: Vec<String>,
    /// The words that resume a session, and that start a new one from a
    /// copy of another, `{}` its id; none: it cannot.
    pub resume: Vec<String>,
    pub fork: Vec<String>,
    /// Where a session's file lives, `{}` its id in the file's name
    /// (`~/.mycli/sessions/{}.jsonl`); none: it keeps no sessions agents
    /// can see.
    pub sessions: Option<String>,
    /// That file's format: one of the known transcript formats; none:
    /// sessions are linked and resumed, not read.
    pub transcript: Option<String>,
    /// The variables it reads (its keys, endpoint, model): names, or
    /// prefixes ending in `*`. Those set where a run starts are passed to
    /// it by name, as a built-in family's are.
    pub env: Vec<String>,
    /// Whether its runs may be boxed (`--sandbox`): it needs nothing
    /// written outside its work tree (its sessions folder included, which
    /// the box hides unless it lies in the tree).
    pub sandbox_ready: bool,
    /// The keys that answer yes, and no, at its permission question
    /// (default: `1`, and Esc).
    pub yes: Option<String>,
    pub no: Option<String>,
    /// Whether `BINARY --version` prints its version (default: yes);
    /// `false` for a CLI that takes no such flag and would start a session.
    pub version: Option<bool>,
}

/// The formats a session's own file is in: a declaration may name these
/// (opencode's and Crush's databases, aider's history and Auggie's
/// documents are laid out for their own CLIs).
const SESSION_FILES: &[Format] = &[
    Format::Claude,
    Format::Codex,
    Format::Gemini,
    Format::Qwen,
    Format::Pi,
    Format::Copilot,
    Format::Droid,
    Format::Gptme,
];

/// Families that have their own adapter, which a declaration may not take.
const TAKEN: &[&str] = &["shell", "cmd", "demo"];
/// The most families a config may declare, and words a list may hold.
const MAX_FAMILIES: usize = 64;
const MAX_WORDS: usize = 16;

/// A declared family, ready to launch.
pub struct UserFamily {
    def: FamilyDef,
    description: &'static Description,
    format: Option<Format>,
    /// `sessions`, split where the id goes.
    sessions: Option<SessionFile>,
}

/// A session file's path around its id: `~/.mycli/sessions/` + `{}` + `.jsonl`.
#[derive(Debug, Clone)]
struct SessionFile {
    folder: String,
    before: String,
    after: String,
}

impl SessionFile {
    fn parse(template: &str) -> Result<SessionFile, String> {
        let (folder, name) = template.rsplit_once('/').ok_or("sessions must be a path: ~/… or /…")?;
        if !(template.starts_with('/') || template.starts_with("~/")) {
            return Err("sessions must start with / or ~/".into());
        }
        if folder.contains("{}") || name.matches("{}").count() != 1 {
            return Err("sessions needs {} once, in the file's name (where the session id goes)".into());
        }
        let (before, after) = name.split_once("{}").unwrap_or_default();
        Ok(SessionFile {
            folder: folder.to_string(),
            before: before.to_string(),
            after: after.to_string(),
        })
    }

    /// The folder, `~/` taken under `home`.
    fn folder_in(&self, home: Option<&Path>) -> Option<PathBuf> {
        match self.folder.strip_prefix('~') {
            Some(rest) => Some(home?.join(rest.trim_start_matches('/'))),
            None => Some(PathBuf::from(&self.folder)),
        }
    }

    fn path_of(&self, id: &str, home: Option<&Path>) -> Option<PathBuf> {
        Some(self.folder_in(home)?.join(format!("{}{id}{}", self.before, self.after)))
    }

    /// The session id a file of this shape is named for.
    fn id_of(&self, path: &Path) -> Option<String> {
        let name = path.file_name()?.to_str()?;
        let id = name.strip_prefix(&self.before)?.strip_suffix(&self.after)?;
        (!id.is_empty()).then(|| id.to_string())
    }
}

impl UserFamily {
    /// The family `name` as `def` declares it, or what is wrong with it.
    fn read(name: &str, def: &FamilyDef) -> Result<UserFamily, String> {
        let at = |e: String| format!("harnesses.{name}: {e}");
        check_name(name).map_err(at)?;
        if def.binary.trim().is_empty() {
            return Err(at("binary is needed (a path, or a name searched in PATH)".into()));
        }
        for (key, words, needs_id) in [
            ("prompt", &def.prompt, true),
            ("session_id", &def.session_id, true),
            ("resume", &def.resume, true),
            ("fork", &def.fork, true),
        ] {
            if words.len() > MAX_WORDS {
                return Err(at(format!("{key} has {} words; at most {MAX_WORDS}", words.len())));
            }
            if needs_id && !words.is_empty() && !words.iter().any(|w| w.contains("{}")) {
                return Err(at(format!("{key} needs {{}} in one of its words")));
            }
        }
        let sessions = def
            .sessions
            .as_deref()
            .map(SessionFile::parse)
            .transpose()
            .map_err(at)?;
        let format = match def.transcript.as_deref() {
            None => None,
            Some(name) => Some(Format::parse(name).filter(|f| SESSION_FILES.contains(f)).ok_or_else(|| {
                at(format!(
                    "transcript '{name}' is not a format agents reads (claude, codex, gemini, qwen, pi, copilot, droid, gptme)"
                ))
            })?),
        };
        if format.is_some() && sessions.is_none() {
            return Err(at("transcript needs sessions (where a session's file lives)".into()));
        }
        if let Some(bad) = def
            .env
            .iter()
            .find(|n| !crate::values::is_env_name(n.strip_suffix('*').unwrap_or(n)))
        {
            return Err(at(format!(
                "env: '{bad}' is not a variable name (or a prefix ending in *)"
            )));
        }
        for (key, keys) in [("yes", &def.yes), ("no", &def.no)] {
            if keys.as_ref().is_some_and(|k| k.is_empty() || k.len() > 16) {
                return Err(at(format!("{key} must be 1 to 16 bytes of keys")));
            }
        }
        Ok(UserFamily {
            description: Box::leak(Box::new(describe(name, def))),
            def: def.clone(),
            format,
            sessions,
        })
    }

    /// The format its sessions' files are in, if declared.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    pub fn declared(&self) -> &FamilyDef {
        &self.def
    }

    /// The session a launch of `args` goes on in, when they resume one (the
    /// `resume` words with an id where `{}` stands).
    fn resumed_in(&self, args: &[String]) -> Option<String> {
        let words = &self.def.resume;
        if words.is_empty() || args.len() < words.len() {
            return None;
        }
        args.windows(words.len()).find_map(|window| {
            let mut id = None;
            for (word, arg) in words.iter().zip(window) {
                match word.split_once("{}") {
                    Some((before, after)) => {
                        let inner = arg.strip_prefix(before)?.strip_suffix(after)?;
                        id = Some(inner.to_string());
                    }
                    None if word == arg => {}
                    None => return None,
                }
            }
            id.filter(|i| !i.is_empty())
        })
    }
}

/// A family's name: a word a run records and a file of screen rules takes.
fn check_name(name: &str) -> Result<(), String> {
    let fits = !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !fits {
        return Err("a family's name is 1 to 32 of a-z, 0-9, - and _".into());
    }
    if TAKEN.contains(&name) || super::builtin_adapter(name).is_some() {
        return Err(format!(
            "{name} is a family agents knows already (use [profiles.{name}] to change how it starts)"
        ));
    }
    Ok(())
}

/// Leaks what the adapter seam holds for the life of the process (once per
/// distinct declaration: `Families::read` finds an unchanged one again).
fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

fn leak_words(words: &[String]) -> &'static [&'static str] {
    Box::leak(words.iter().map(|w| leak(w)).collect::<Vec<_>>().into_boxed_slice())
}

fn describe(name: &str, def: &FamilyDef) -> Description {
    let given_or_refused = |words: &[String]| match words.is_empty() {
        true => Words::Refused(None),
        false => Words::Given(leak_words(words)),
    };
    let (names, prefixes): (Vec<String>, Vec<String>) = def.env.iter().cloned().partition(|n| !n.ends_with('*'));
    let prefixes: Vec<String> = prefixes.iter().map(|p| p.trim_end_matches('*').to_string()).collect();
    let env: &'static HarnessEnv = Box::leak(Box::new(HarnessEnv {
        shared: &[],
        names: leak_words(&names),
        prefixes: leak_words(&prefixes),
    }));
    let keys = |k: &Option<String>, default: &'static [u8]| -> &'static [u8] {
        k.as_deref().map_or(default, |k| leak(k).as_bytes())
    };
    Description {
        env,
        sessions: def.sessions.is_some() || !def.session_id.is_empty(),
        resume: given_or_refused(&def.resume),
        fork: given_or_refused(&def.fork),
        prompt: match def.prompt.is_empty() {
            true => Prompt::Typed,
            false => Prompt::Given(leak_words(&def.prompt)),
        },
        yes: keys(&def.yes, b"1"),
        no: keys(&def.no, b"\x1b"),
        version_probe: def.version != Some(false),
        ..Description::new(leak(name), leak(&def.binary))
    }
}

impl Adapter for UserFamily {
    fn description(&self) -> &'static Description {
        self.description
    }

    /// The program, its session's id when it takes one from agents (none
    /// when it resumes or forks one), then the user's arguments.
    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let mut argv = vec![ctx.binary(&self.def.binary)];
        let home = ctx.var("HOME").map(Path::new);
        let resumed = self.resumed_in(ctx.args);
        let forks = !self.def.fork.is_empty() && self.forked(ctx.args);
        let id = match (resumed, forks) {
            (Some(id), false) => Some(id),
            (None, false) if !self.def.session_id.is_empty() => {
                let id = new_uuid();
                argv.extend(self.def.session_id.iter().map(|w| w.replace("{}", &id)));
                Some(id)
            }
            _ => None,
        };
        argv.extend(ctx.args.iter().cloned());
        Ok(Launch {
            argv,
            session: id.map(|id| KnownSession {
                transcript: self.sessions.as_ref().and_then(|s| s.path_of(&id, home)),
                id,
            }),
            ..Launch::default()
        })
    }

    fn sandbox_ready(&self) -> bool {
        self.def.sandbox_ready
    }

    fn session_roots(&self, query: &SessionQuery) -> Vec<PathBuf> {
        let folder = self.sessions.as_ref().and_then(|s| s.folder_in(query.home.as_deref()));
        folder.into_iter().collect()
    }

    /// The newest file of the session's shape made since the run began.
    fn find_session(&self, query: &SessionQuery) -> Option<KnownSession> {
        let shape = self.sessions.as_ref()?;
        let folder = shape.folder_in(query.home.as_deref())?;
        created_since(files_since(&folder, query.started), query.started)
            .into_iter()
            .find_map(|path| {
                Some(KnownSession {
                    id: shape.id_of(&path)?,
                    transcript: Some(path),
                })
            })
    }
}

impl UserFamily {
    /// Whether `args` hold the `fork` words (with any id): each of its
    /// words without the id (`--resume {} --fork-session` is a fork only
    /// with `--fork-session`, not every resume).
    fn forked(&self, args: &[String]) -> bool {
        let mut fixed = self.def.fork.iter().filter(|w| !w.contains("{}")).peekable();
        fixed.peek().is_some() && fixed.all(|w| args.contains(w))
    }
}

/// Every declaration read in this process, and those in force now.
#[derive(Default)]
struct Declared {
    made: Vec<&'static UserFamily>,
    current: HashMap<String, &'static UserFamily>,
}

static DECLARED: LazyLock<RwLock<Declared>> = LazyLock::new(Default::default);

/// The families of one config, read and checked.
#[derive(Clone, Default)]
pub struct Families {
    by_name: BTreeMap<String, &'static UserFamily>,
}

impl std::fmt::Debug for Families {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.by_name.keys()).finish()
    }
}

impl Families {
    /// The `[harnesses]` of a config, each checked; the first that is
    /// wrong is the error, naming it.
    pub fn read(defs: &BTreeMap<String, FamilyDef>) -> Result<Families, String> {
        if defs.len() > MAX_FAMILIES {
            return Err(format!("harnesses: {} families; at most {MAX_FAMILIES}", defs.len()));
        }
        let mut by_name = BTreeMap::new();
        for (name, def) in defs {
            by_name.insert(name.clone(), kept(name, def)?);
        }
        Ok(Families { by_name })
    }

    /// The families of the config in force in this process.
    pub fn in_force() -> Families {
        let declared = DECLARED.read().unwrap_or_else(PoisonError::into_inner);
        let by_name = declared.current.iter().map(|(n, f)| (n.clone(), *f)).collect();
        Families { by_name }
    }

    /// The adapter of `family`: built in, else declared here.
    pub fn adapter(&self, family: &str) -> Option<&'static dyn Adapter> {
        super::builtin_adapter(family).or_else(|| self.by_name.get(family).map(|f| *f as &'static dyn Adapter))
    }

    /// Every family name, built in first.
    pub fn known(&self) -> Vec<&str> {
        let mut known: Vec<&str> = super::KNOWN.to_vec();
        known.extend(self.by_name.keys().map(String::as_str));
        known
    }

    /// Makes these the families in force for this process (`adapter_for`).
    pub fn install(&self) {
        let mut declared = DECLARED.write().unwrap_or_else(PoisonError::into_inner);
        declared.current = self.by_name.iter().map(|(n, f)| (n.clone(), *f)).collect();
        let formats = self
            .by_name
            .iter()
            .filter_map(|(n, f)| Some((n.clone(), f.format?)))
            .collect();
        crate::transcript::declare_formats(formats);
    }
}

/// The family `name` as `def` declares it: one read before if unchanged.
fn kept(name: &str, def: &FamilyDef) -> Result<&'static UserFamily, String> {
    let mut declared = DECLARED.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(same) = declared
        .made
        .iter()
        .find(|f| f.description.family == name && f.def == *def)
    {
        return Ok(same);
    }
    let family: &'static UserFamily = Box::leak(Box::new(UserFamily::read(name, def)?));
    declared.made.push(family);
    Ok(family)
}

/// The declared family in force named `name`, if any.
pub fn installed(name: &str) -> Option<&'static UserFamily> {
    DECLARED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .current
        .get(name)
        .copied()
}

/// The names of the declared families in force.
pub fn installed_names() -> Vec<String> {
    let declared = DECLARED.read().unwrap_or_else(PoisonError::into_inner);
    let mut names: Vec<String> = declared.current.keys().cloned().collect();
    names.sort();
    names
}

#[cfg(test)]
#[path = "user_tests.rs"]
mod tests;
