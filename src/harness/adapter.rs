//! The seam every harness family plugs into (docs/design.md §7): how to launch it
//! interactively, resume and fork its sessions, where its transcripts live,
//! how a run learns its session id, and which status hooks it takes. Pure
//! apart from reading the harness's own files in `find_session`; the daemon
//! does the spawning.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::Profile;
use super::credentials::HarnessEnv;
use super::description::Description;

/// Everything an adapter may look at to build a launch.
pub struct LaunchContext<'a> {
    /// The user's arguments for the harness (after `--`).
    pub args: &'a [String],
    /// The client's environment, for lookups (PATH, SHELL, HOME). Values are
    /// passed to the harness through the start's allowlist, never stored.
    pub env: &'a [(String, String)],
    pub profile: Option<&'a Profile>,
    /// The run's folder: per-run files (hook settings) go here.
    pub run_dir: &'a Path,
    /// This `agents` binary, which harness hooks call (`agents hook EVENT`).
    pub agents_bin: &'a Path,
    pub cwd: &'a Path,
}

impl LaunchContext<'_> {
    pub fn var(&self, key: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    }

    /// The harness's config home: the profile's, else the user's own
    /// setting (passed on), else none (the harness default under HOME).
    pub fn config_home(&self, var: &str) -> Option<PathBuf> {
        self.profile
            .and_then(|p| p.config_home_in(self.var("HOME")))
            .or_else(|| self.var(var).map(PathBuf::from))
    }

    pub fn model(&self) -> Option<&str> {
        self.profile.and_then(|p| p.model.as_deref())
    }

    /// The profile's binary, else `program` (found in PATH later).
    pub fn binary(&self, program: &str) -> String {
        self.profile
            .and_then(|p| p.binary.clone())
            .unwrap_or_else(|| program.into())
    }

    /// `--model M` when the profile sets one.
    pub fn model_args(&self) -> Vec<String> {
        self.model()
            .map(|m| vec!["--model".into(), m.to_string()])
            .unwrap_or_default()
    }

    /// The config home the launch gives the harness (`config_home`), and
    /// the variable that says so to it, if any.
    pub fn config_home_env(&self, var: &str) -> (Option<PathBuf>, Vec<(String, String)>) {
        let dir = self.config_home(var);
        let env = dir
            .iter()
            .map(|d| (var.to_string(), d.to_string_lossy().into_owned()))
            .collect();
        (dir, env)
    }

    /// The usual command line: the binary, `--model M` when set, then the
    /// user's arguments.
    pub fn argv(&self, program: &str) -> Vec<String> {
        let mut argv = vec![self.binary(program)];
        argv.extend(self.model_args());
        argv.extend(self.args.iter().cloned());
        argv
    }
}

/// What to spawn, decided before spawn.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Launch {
    /// argv; `argv[0]` is the program name or path, resolved in PATH later.
    pub argv: Vec<String>,
    /// Extra environment for the harness (config home), over the allowlist.
    pub env: Vec<(String, String)>,
    /// Files to write before spawn (per-run hook settings): path, contents.
    pub files: Vec<(PathBuf, String)>,
    /// Files of the harness's own whose modification time is set to now
    /// just before spawn (an existing one only): Continue resumes the
    /// session it wrote last.
    pub touch: Vec<PathBuf>,
    /// The session, when its id is known before spawn.
    pub session: Option<KnownSession>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KnownSession {
    pub id: String,
    /// Where the harness will write the transcript (it may not exist yet).
    pub transcript: Option<PathBuf>,
}

/// What `find_session` needs to pick a run's session among the harness's
/// transcripts: the newest one for this cwd, started after the run.
pub struct SessionQuery {
    pub cwd: PathBuf,
    pub started: SystemTime,
    /// The harness's config home, as the launch set it (None: the default).
    pub config_home: Option<PathBuf>,
    pub home: Option<PathBuf>,
}

pub trait Adapter: Sync {
    /// What the family is, as data: everything below that is not
    /// overridden reads it.
    fn description(&self) -> &'static Description;

    /// The family name, as runs record it: `claude`, `codex`, …
    fn family(&self) -> &'static str {
        self.description().family
    }

    /// The program to run when no profile names one.
    fn program(&self) -> &'static str {
        self.description().program
    }

    /// Interactive launch: the argv (program first), extra environment,
    /// per-run files and the session id if known before spawn. `Err` is the
    /// reason the run is blocked. By default: the program (or the profile's
    /// binary), `--model` when one is set, then the user's arguments; and
    /// the config home, when the description names its variable.
    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let env = match self.config_home_var() {
            Some(var) => ctx.config_home_env(var).1,
            None => Vec::new(),
        };
        Ok(Launch {
            argv: ctx.argv(self.program()),
            env,
            ..Launch::default()
        })
    }

    /// The arguments that resume a session.
    fn resume_args(&self, session: &str) -> Result<Vec<String>, String> {
        self.description().resume_args(session)
    }

    /// The arguments that start a new session from a copy of another.
    fn fork_args(&self, session: &str) -> Result<Vec<String>, String> {
        self.description().fork_args(session)
    }

    /// Arguments that start an interactive session with `prompt` as its
    /// first message, when the harness takes one on its command line
    /// (`None`: the prompt is typed in once the harness is idle).
    fn prompt_args(&self, prompt: &str) -> Option<Vec<String>> {
        self.description().prompt_args(prompt)
    }

    /// Whether a session written by version `recorded` of the harness can be
    /// resumed natively by version `current`. By default: the same major
    /// version (the first number), and any version that cannot be read is
    /// given the benefit of the doubt.
    fn resume_compatible(&self, recorded: &str, current: &str) -> bool {
        match (major_version(recorded), major_version(current)) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
    }

    /// Whether a run that ended early did so on an account problem, read
    /// from the end of its screen and output: the kind and the words that
    /// said so. Only these fall back to another profile (docs/design.md §7). By
    /// default, wordings common to many CLIs.
    fn account_problem(&self, text: &str) -> Option<AccountProblem> {
        match_account(text, GENERIC_ACCOUNT_PATTERNS)
    }

    /// The variables this harness reads (its documented keys, endpoints,
    /// model names and switches): those set in the client's environment
    /// are passed to it by default, as the same command typed in that
    /// shell would see them. Names only; values are never stored.
    fn env_names(&self, ctx: &LaunchContext) -> Vec<String> {
        self.harness_env().present(ctx.env)
    }

    /// The names and prefixes `env_names` admits by default.
    fn harness_env(&self) -> &'static HarnessEnv {
        self.description().env
    }

    /// The environment variable a profile's `config_home` sets.
    fn config_home_var(&self) -> Option<&'static str> {
        self.description().config_home
    }

    /// Whether `PROGRAM --version` says which version this is.
    fn has_version(&self) -> bool {
        self.description().version_probe
    }

    /// Whether a queued prompt is typed as one bracketed paste (when the
    /// program asked for bracketed paste) rather than as keystrokes. Codex
    /// 0.171 takes fast keystrokes followed by Enter as a paste with a
    /// newline and never submits it; Claude Code 2.1 drops an Enter that
    /// arrives with a paste. So each harness gets what it submits.
    fn pastes_prompts(&self) -> bool {
        self.description().pastes_prompts
    }

    /// How long after a prompt's text its Enter is typed (ms). Gemini CLI
    /// 0.61 takes an Enter that comes within ~30 ms of typed text as a
    /// newline in the prompt, so a prompt written in one go never submits.
    fn enter_delay_ms(&self) -> u64 {
        self.description().enter_delay_ms
    }

    /// The keys `agents answer RUN yes` (or `no`) types at a permission
    /// prompt (in the usual description the first numbered choice, and Esc).
    fn answer_keys(&self, yes: bool) -> Vec<u8> {
        let d = self.description();
        if yes { d.yes.to_vec() } else { d.no.to_vec() }
    }

    /// How long a question must have been on screen before its answer is
    /// typed (ms). Claude Code 2.1.332 drops the keys of an answer typed
    /// just after it draws its permission dialog.
    fn answer_settle_ms(&self) -> u64 {
        self.description().answer_settle_ms
    }

    /// Whether its runs may be boxed (`--sandbox`). Every built-in family
    /// may; a family declared in `config.toml` says so itself.
    fn sandbox_ready(&self) -> bool {
        true
    }

    /// Whether the harness keeps conversations (sessions) a run links to.
    fn has_sessions(&self) -> bool {
        self.description().sessions
    }

    /// The folders this family keeps its sessions' files in, for a run
    /// launched as `query` says. A transcript path a hook reports (the
    /// words of a process, not ours) is taken only inside one, and
    /// `sessions rm --purge-transcripts` deletes only files inside one.
    /// Empty: its hooks name no transcript (the daemon finds them itself).
    fn session_roots(&self, _query: &SessionQuery) -> Vec<PathBuf> {
        Vec::new()
    }

    /// Finds the session a run started when its id was not known before
    /// spawn: the newest transcript for the run's cwd begun after the run.
    fn find_session(&self, query: &SessionQuery) -> Option<KnownSession> {
        let _ = query;
        None
    }
}

/// An account problem a harness reported: `authentication` or `quota`,
/// and the (lower-case) words it was recognised by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountProblem {
    pub kind: &'static str,
    pub pattern: &'static str,
}

/// Lower-case phrases and the account problem each means.
pub type AccountPatterns = &'static [(&'static str, &'static str)];

pub const GENERIC_ACCOUNT_PATTERNS: AccountPatterns = &[
    ("invalid api key", "authentication"),
    ("authentication failed", "authentication"),
    ("401 unauthorized", "authentication"),
    ("not logged in", "authentication"),
    ("quota exceeded", "quota"),
    ("insufficient_quota", "quota"),
    ("usage limit", "quota"),
    ("rate limit", "quota"),
    ("credit balance is too low", "quota"),
];

/// The first phrase of `patterns` found in `text`, case-insensitively.
pub fn match_account(text: &str, patterns: AccountPatterns) -> Option<AccountProblem> {
    let text = text.to_lowercase();
    patterns
        .iter()
        .find(|(p, _)| text.contains(p))
        .map(|(pattern, kind)| AccountProblem { kind, pattern })
}

/// The first number of a version string (`2` of `2.1.197 (Claude Code)`).
pub fn major_version(version: &str) -> Option<u64> {
    let start = version.find(|c: char| c.is_ascii_digit())?;
    let digits: String = version[start..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Shell-quotes one word for a hook command line (`sh -c`).
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '+' | ':' | '='))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// A random (version 4) UUID, the form Claude wants for `--session-id`.
pub fn new_uuid() -> String {
    let mut bytes = [0u8; 16];
    let filled = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .is_ok();
    if !filled {
        // No /dev/urandom (a chroot): a ULID's 80 random bits and its time.
        bytes = ulid::Ulid::new().0.to_be_bytes();
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The files in `dir` (not recursive) modified at or after `since`, newest
/// first.
pub fn files_since(dir: &Path, since: SystemTime) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            let modified = meta.modified().ok()?;
            (meta.is_file() && modified >= since).then(|| (modified, e.path()))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, p)| p).collect()
}

/// The `files` created at or after `since`: a fork's new file, not the
/// source it was copied from, which its own run may have written to just
/// before (and which is there before the fork's copy is). A file whose
/// file system keeps no creation time is kept.
pub fn created_since(files: Vec<PathBuf>, since: SystemTime) -> Vec<PathBuf> {
    files
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.created().map_or(true, |t| t >= since)))
        .collect()
}

/// What `adapter` launches for `args` in `env` (and `profile`), in the
/// run folder `/r` and the cwd `/w`: the adapters' unit tests.
#[cfg(test)]
pub fn launched_with(
    adapter: &dyn Adapter,
    args: &[&str],
    env: &[(&str, &str)],
    profile: Option<&Profile>,
) -> Result<Launch, String> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    adapter.launch(&LaunchContext {
        args: &args,
        env: &env,
        profile,
        run_dir: Path::new("/r"),
        agents_bin: Path::new("/a"),
        cwd: Path::new("/w"),
    })
}

/// As [`launched_with`], without a profile.
#[cfg(test)]
pub fn launched(adapter: &dyn Adapter, args: &[&str], env: &[(&str, &str)]) -> Result<Launch, String> {
    launched_with(adapter, args, env, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_4_and_differ() {
        let a = new_uuid();
        let b = new_uuid();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
    }

    #[test]
    fn sessions_resume_natively_only_within_a_major_version() {
        struct Any;
        impl Adapter for Any {
            fn description(&self) -> &'static Description {
                const ANY: Description = Description::new("any", "any");
                &ANY
            }
        }
        assert_eq!(major_version("2.1.197 (Claude Code)"), Some(2));
        assert_eq!(major_version("codex-cli 0.171.0"), Some(0));
        assert!(Any.resume_compatible("2.1.197 (Claude Code)", "2.3.0 (Claude Code)"));
        assert!(!Any.resume_compatible("2.1.197 (Claude Code)", "3.0.0 (Claude Code)"));
        assert!(Any.resume_compatible("unknown", "3.0.0"));
    }

    #[test]
    fn words_are_quoted_only_when_a_shell_would_split_them() {
        assert_eq!(shell_quote("/usr/bin/agents"), "/usr/bin/agents");
        assert_eq!(shell_quote("/tmp/my dir/agents"), "'/tmp/my dir/agents'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
