//! Harness adapters (docs/design.md §7): one per family — `claude`, `codex`,
//! `gemini`, `aider`, `opencode`, `kilo`, `crush`, `qwen`, `pi`, `copilot`, `droid`, `auggie`, `continue`, `gptme`, `cline`, `grok`, `nanocoder`, `letta`, `mini`, `interpreter` (Open Interpreter), `hermes` (Hermes Agent), `code-puppy` (Code Puppy), and the engine's own `shell`, `cmd`
//! and `demo` — behind the [`Adapter`] seam. `prepare` turns a harness or profile name and the
//! user's arguments into what to spawn, or the reason the run is blocked.
//! Also here: hook payloads ([`hooks`]), status fusion ([`status`]), screen
//! evidence ([`screen`]), names from prompts ([`naming`]) and versions.

mod adapter;
pub mod aider;
pub mod auggie;
mod builtin;
pub mod claude;
pub mod cline;
pub mod code_puppy;
pub mod codex;
pub mod continue_cli;
pub mod copilot;
pub mod credentials;
pub mod crush;
pub mod demo;
pub mod description;
pub mod droid;
pub mod gemini;
pub mod gptme;
pub mod grok;
pub mod hermes;
mod hook_config;
pub mod hooks;
pub mod input_line;
pub mod interpreter;
pub mod letta;
pub mod login;
pub mod mini;
pub mod naming;
pub mod nanocoder;
pub mod opencode;
pub mod pi;
mod profile;
pub mod qwen;
pub mod roots;
pub mod sandbox;
pub mod screen;
pub mod screen_rules;
pub mod stall;
pub mod status;
pub mod user;
pub mod version;

#[cfg(test)]
mod pinned_tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use adapter::{AccountProblem, Adapter, KnownSession, Launch, LaunchContext, SessionQuery};
pub use profile::{
    MODEL_FAMILIES, Profile, apply_first_prompt, apply_model, is_env_name, validate as validate_profiles,
};

/// Harness families this build can launch.
pub const KNOWN: &[&str] = &[
    "shell",
    "cmd",
    "demo",
    "claude",
    "codex",
    "gemini",
    "aider",
    "opencode",
    "kilo",
    "crush",
    "qwen",
    "pi",
    "copilot",
    "droid",
    "auggie",
    "continue",
    "gptme",
    "cline",
    "grok",
    "nanocoder",
    "letta",
    "mini",
    "interpreter",
    "hermes",
    "code-puppy",
];

/// The adapter of a family: built in, else declared in the config in
/// force (`user`).
pub fn adapter_for(family: &str) -> Option<&'static dyn Adapter> {
    builtin_adapter(family).or_else(|| user::installed(family).map(|f| f as &'static dyn Adapter))
}

/// Every family this process can launch: built in, then those the config
/// in force declares.
pub fn known_families() -> Vec<String> {
    let mut known: Vec<String> = KNOWN.iter().map(|k| k.to_string()).collect();
    known.extend(user::installed_names());
    known
}

/// The adapter of a family built into agents.
fn builtin_adapter(family: &str) -> Option<&'static dyn Adapter> {
    Some(match family {
        "shell" => &builtin::Shell,
        "cmd" => &builtin::Cmd,
        "demo" => &builtin::Demo,
        "claude" => &claude::Claude,
        "codex" => &codex::Codex,
        "gemini" => &gemini::Gemini,
        "aider" => &aider::Aider,
        "opencode" => &opencode::OPENCODE,
        "kilo" => &opencode::KILO,
        "crush" => &crush::Crush,
        "qwen" => &qwen::Qwen,
        "pi" => &pi::Pi,
        "copilot" => &copilot::Copilot,
        "droid" => &droid::Droid,
        "auggie" => &auggie::Auggie,
        "continue" => &continue_cli::Continue,
        "gptme" => &gptme::Gptme,
        "cline" => &cline::Cline,
        "grok" => &grok::Grok,
        "nanocoder" => &nanocoder::Nanocoder,
        "letta" => &letta::Letta,
        "mini" => &mini::Mini,
        "interpreter" => &interpreter::Interpreter,
        "hermes" => &hermes::Hermes,
        "code-puppy" => &code_puppy::CodePuppy,
        _ => return None,
    })
}

/// A launch decided before spawn.
pub struct Prepared {
    pub adapter: &'static dyn Adapter,
    /// The profile the run uses, by name.
    pub profile: Option<String>,
    /// Environment variables the profile passes by name.
    pub pass_env: Vec<String>,
    /// The variables of the client's environment the harness reads
    /// (`Adapter::env_names`), passed by default.
    pub harness_env: Vec<String>,
    /// `argv[0]` is the resolved program path.
    pub launch: Launch,
}

/// What `prepare` needs besides the harness name.
pub struct Request<'a> {
    pub args: &'a [String],
    pub env: &'a [(String, String)],
    pub profiles: &'a BTreeMap<String, Profile>,
    pub run_dir: &'a Path,
    pub agents_bin: &'a Path,
    pub cwd: &'a Path,
}

/// Resolves a harness or profile name to what to spawn. A profile of that
/// name wins over the family of that name. `Err` is the task-level reason
/// the run is blocked before spawn (unknown harness, missing binary, bad
/// option).
pub fn prepare(name: &str, req: &Request) -> Result<Prepared, String> {
    let profile = req.profiles.get(name);
    let family = profile.map_or(name, |p| p.family_for(name));
    let adapter = adapter_for(family).ok_or_else(|| unknown(name, req.profiles).unwrap_or_default())?;
    let ctx = LaunchContext {
        args: req.args,
        env: req.env,
        profile,
        run_dir: req.run_dir,
        agents_bin: req.agents_bin,
        cwd: req.cwd,
    };
    let mut launch = adapter.launch(&ctx)?;
    let program = launch.argv.first().cloned().unwrap_or_default();
    let found =
        find_binary(&program, ctx.var("PATH")).ok_or_else(|| format!("binary not found: {program} (searched PATH)"))?;
    launch.argv[0] = found.to_string_lossy().into_owned();
    Ok(Prepared {
        adapter,
        profile: profile.map(|_| name.to_string()),
        pass_env: profile.map(|p| p.pass_env.clone()).unwrap_or_default(),
        harness_env: adapter.env_names(&ctx),
        launch,
    })
}

/// Why `name` names no harness this process can launch (no family, and no
/// profile of a family), with the known name nearest it; none if it does.
pub fn unknown(name: &str, profiles: &BTreeMap<String, Profile>) -> Option<String> {
    let profile = profiles.get(name);
    let family = profile.map_or(name, |p| p.family_for(name));
    if adapter_for(family).is_some() {
        return None;
    }
    let mut known = known_families();
    known.extend(profiles.keys().cloned());
    let nearest = known
        .iter()
        .map(|k| (strsim::levenshtein(name, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min();
    let guess = nearest
        .map(|(_, k)| format!("did you mean '{k}'? "))
        .unwrap_or_default();
    Some(format!(
        "unknown harness '{family}': {guess}(known: {})",
        known.join(", ")
    ))
}

/// The variables of `env` the harness `name` (a family or profile) reads
/// and would be passed by default: what a remote start carries across by
/// name, its values from here.
pub fn harness_env_names(
    name: &str,
    profiles: &BTreeMap<String, Profile>,
    env: &[(String, String)],
    cwd: &Path,
) -> Vec<String> {
    let profile = profiles.get(name);
    let family = profile.map_or(name, |p| p.family_for(name));
    let Some(adapter) = adapter_for(family) else {
        return Vec::new();
    };
    let ctx = LaunchContext {
        args: &[],
        env,
        profile,
        run_dir: Path::new("/"),
        agents_bin: Path::new("agents"),
        cwd,
    };
    adapter.env_names(&ctx)
}

/// This `agents` binary, which harness hooks and the demo agent run. When
/// the file was replaced since the daemon started (an upgrade, a rebuild),
/// Linux names it `… (deleted)`: the new file at the same path is meant.
pub fn agents_binary() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the agents binary: {e}"))?;
    let text = exe.to_string_lossy();
    match text.strip_suffix(" (deleted)") {
        Some(path) if is_executable(Path::new(path)) => Ok(PathBuf::from(path)),
        _ => Ok(exe),
    }
}

/// Finds an executable the way a shell would: a path with a slash is taken
/// as is, a bare name is searched in PATH.
pub fn find_binary(name: &str, path_var: Option<&str>) -> Option<PathBuf> {
    if name.contains('/') {
        let p = Path::new(name);
        return is_executable(p).then(|| p.to_path_buf());
    }
    let path_var = path_var.unwrap_or("/usr/local/bin:/usr/bin:/bin");
    std::env::split_paths(path_var)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepare_with(name: &str, args: &[&str], profiles: &BTreeMap<String, Profile>) -> Result<Prepared, String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        prepare(
            name,
            &Request {
                args: &args,
                env: &env,
                profiles,
                run_dir: Path::new("/tmp/run"),
                agents_bin: Path::new("/bin/true"),
                cwd: Path::new("/"),
            },
        )
    }

    #[test]
    fn missing_binaries_and_unknown_harnesses_are_reasons_not_panics() {
        let none = BTreeMap::new();
        let err = prepare_with("cmd", &["no-such-binary-xyz"], &none).err().unwrap();
        assert!(err.contains("binary not found: no-such-binary-xyz"), "{err}");
        assert!(
            prepare_with("nope", &[], &none)
                .err()
                .unwrap()
                .contains("unknown harness")
        );
        assert!(prepare_with("cmd", &[], &none).err().unwrap().contains("bad option"));
        let cmd = prepare_with("cmd", &["sh", "-c", "true"], &none).ok().unwrap();
        assert!(cmd.launch.argv[0].ends_with("/sh"));
        assert_eq!(cmd.adapter.family(), "cmd");
        let claude = prepare_with("claude", &[], &none).err();
        assert!(
            claude.is_none() || claude.unwrap().contains("binary not found: claude"),
            "claude is blocked only by its missing binary"
        );
    }

    #[test]
    fn a_profile_name_selects_its_family_and_binary() {
        let mut profiles = BTreeMap::new();
        profiles.insert(
            "work".to_string(),
            Profile {
                family: Some("claude".into()),
                binary: Some("/bin/sh".into()),
                pass_env: vec!["ANTHROPIC_API_KEY".into()],
                ..Profile::default()
            },
        );
        let p = prepare_with("work", &[], &profiles).ok().unwrap();
        assert_eq!(p.adapter.family(), "claude");
        assert_eq!(p.profile.as_deref(), Some("work"));
        assert_eq!(p.launch.argv[0], "/bin/sh");
        assert_eq!(p.pass_env, vec!["ANTHROPIC_API_KEY".to_string()]);
        let unknown = prepare_with("play", &[], &profiles).err().unwrap();
        assert!(unknown.contains("work"), "profiles are listed as known: {unknown}");
    }
}
