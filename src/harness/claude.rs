//! Claude Code. The session id is minted here and passed with
//! `--session-id`, so a run knows its conversation before the harness
//! starts; status hooks come from a per-run settings file passed with
//! `--settings`, which Claude merges with the user's own settings without
//! changing them. Transcripts: `<config home>/projects/<encoded cwd>/<session>.jsonl`
//! (see `shared/reference/claude-code-2.1.197/`).

use std::path::{Path, PathBuf};

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, files_since, new_uuid};
use super::description::{Description, Prompt, Words};
use super::hook_config::{self, HookSet};

pub struct Claude;

/// Every hook the run's settings install (docs/design.md §7).
pub const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
];

/// The hooks a run's settings install.
const HOOKS: HookSet = HookSet {
    events: HOOK_EVENTS,
    tool_events: &["PreToolUse", "PermissionRequest", "PostToolUse"],
    options: "",
};

/// The settings file's name in the run folder.
pub const SETTINGS_FILE: &str = "claude-settings.json";

const CLAUDE: Description = Description {
    config_home: Some("CLAUDE_CONFIG_DIR"),
    resume: Words::Given(&["--resume", "{}"]),
    fork: Words::Given(&["--resume", "{}", "--fork-session"]),
    // `claude [prompt]`: an interactive session that begins with it.
    prompt: Prompt::Given(&["{}"]),
    // Claude Code 2.1.197 takes text that arrives in one read with its
    // Enter as a paste once it is longer than a few dozen characters, and
    // the Enter as part of it: the prompt stays in its input box, unsent
    // (a 67-character prompt did, a 23-character one did not;
    // tests/claude_task_results.rs). Its Enter comes on its own once the
    // text is echoed and the screen quiet as long as Gemini's.
    enter_delay_ms: 100,
    // Claude Code 2.1.332 drops keys typed within a moment of drawing its
    // permission dialog: an answer 0.5 s after the dialog's hook was lost,
    // 0.8 s after it was taken (tests/clis/claude.rs against 2.1.332).
    answer_settle_ms: 1000,
    install: "npm install -g @anthropic-ai/claude-code",
    ..Description::new("claude", "claude")
};

impl Adapter for Claude {
    fn description(&self) -> &'static Description {
        &CLAUDE
    }

    /// `credentials::CLAUDE`, less the cloud credentials unless switched on.
    fn env_names(&self, ctx: &LaunchContext) -> Vec<String> {
        super::credentials::claude_names(ctx.env)
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let binary = ctx.binary(self.program());
        // Claude takes one `--settings` (the last wins): a user's own is
        // merged into the run's file rather than dropping the hooks.
        let (own, args) = hook_config::own_settings(ctx.args, ctx.cwd)?;
        let settings = ctx.run_dir.join(SETTINGS_FILE);
        let mut argv = vec![binary, "--settings".into(), settings.to_string_lossy().into_owned()];

        let given = SessionArgs::parse(&args);
        // `--session-id` may not name the session a resume continues; a fork
        // gets a new one, which we can mint.
        let session_id = match (&given.session_id, given.resumes, given.forks) {
            (Some(id), _, _) => Some(id.clone()),
            (None, true, false) => given.resumed.clone(),
            (None, _, _) => {
                let id = new_uuid();
                argv.extend(["--session-id".into(), id.clone()]);
                Some(id)
            }
        };
        argv.extend(ctx.model_args());
        argv.extend(args);

        let (config_home, env) = ctx.config_home_env("CLAUDE_CONFIG_DIR");
        let projects = projects_dir(config_home.as_deref(), ctx.var("HOME").map(Path::new), ctx.cwd);
        Ok(Launch {
            argv,
            env,
            files: vec![(settings, hook_config::settings(own, ctx.agents_bin, &HOOKS))],
            session: session_id.map(|id| KnownSession {
                transcript: projects.map(|dir| dir.join(format!("{id}.jsonl"))),
                id,
            }),
            touch: Vec::new(),
        })
    }

    /// Claude Code's own wordings: an API key or login refused, or an
    /// account out of credit or over its limits.
    fn account_problem(&self, text: &str) -> Option<super::AccountProblem> {
        super::adapter::match_account(text, ACCOUNT_PATTERNS)
    }

    /// `<config home>/projects`: every project's sessions and subagents.
    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        projects_dir(q.config_home.as_deref(), q.home.as_deref(), &q.cwd)
            .and_then(|dir| dir.parent().map(Path::to_path_buf))
            .into_iter()
            .collect()
    }

    /// Only needed when the id was not known before spawn (`--continue`)
    /// and no hook has said it: the newest transcript of this cwd.
    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = projects_dir(q.config_home.as_deref(), q.home.as_deref(), &q.cwd)?;
        let path = files_since(&dir, q.started)
            .into_iter()
            .find(|p| p.extension().is_some_and(|e| e == "jsonl"))?;
        Some(KnownSession {
            id: path.file_stem()?.to_string_lossy().into_owned(),
            transcript: Some(path),
        })
    }
}

/// What Claude Code says when the account cannot serve the run.
const ACCOUNT_PATTERNS: super::adapter::AccountPatterns = &[
    ("invalid api key", "authentication"),
    ("please run /login", "authentication"),
    ("oauth token has expired", "authentication"),
    ("authentication_error", "authentication"),
    ("not logged in", "authentication"),
    ("credit balance is too low", "quota"),
    ("usage limit", "quota"),
    ("rate limit", "quota"),
    ("rate_limit_error", "quota"),
];

/// The session options a user passed through to Claude (Qwen Code takes
/// the same ones).
#[derive(Debug, Default, PartialEq)]
pub(super) struct SessionArgs {
    pub(super) session_id: Option<String>,
    pub(super) resumes: bool,
    /// The session `--resume ID` names (not `--continue`, nor a bare `--resume`).
    pub(super) resumed: Option<String>,
    pub(super) forks: bool,
}

impl SessionArgs {
    pub(super) fn parse(args: &[String]) -> SessionArgs {
        let mut found = SessionArgs::default();
        let value_after = |i: usize| args.get(i + 1).filter(|v| !v.starts_with('-')).cloned();
        for (i, arg) in args.iter().enumerate() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (arg.as_str(), None),
            };
            match flag {
                "--session-id" => found.session_id = inline.or_else(|| value_after(i)),
                "--resume" | "-r" => {
                    found.resumes = true;
                    found.resumed = inline.or_else(|| value_after(i));
                }
                "--continue" | "-c" | "--from-pr" => found.resumes = true,
                "--fork-session" => found.forks = true,
                _ => {}
            }
        }
        found
    }
}

/// `<config home>/projects/<cwd with every other character a dash>`.
pub fn projects_dir(config_home: Option<&Path>, home: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
    let base = match config_home {
        Some(dir) => dir.to_path_buf(),
        None => home?.join(".claude"),
    };
    Some(base.join("projects").join(encode_cwd(cwd)))
}

/// Claude's folder name for a project: each character that is not an ASCII
/// letter or digit becomes `-` (one per UTF-16 unit, as JavaScript counts).
pub fn encode_cwd(cwd: &Path) -> String {
    let mut out = String::new();
    for c in cwd.to_string_lossy().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn account_problems_are_told_from_other_failures_by_claudes_words() {
        let auth = Claude.account_problem("Invalid API key · Please run /login").unwrap();
        assert_eq!((auth.kind, auth.pattern), ("authentication", "invalid api key"));
        let quota = Claude
            .account_problem("API Error: 400 Your credit balance is too low to access the Anthropic API")
            .unwrap();
        assert_eq!(quota.kind, "quota");
        assert_eq!(
            Claude
                .account_problem("Claude usage limit reached. Your limit will reset at 5pm")
                .unwrap()
                .kind,
            "quota"
        );
        assert_eq!(
            Claude.account_problem("error: cannot find module 'x'\nsegmentation fault"),
            None
        );
    }

    fn ctx<'a>(
        args: &'a [String],
        env: &'a [(String, String)],
        profile: Option<&'a super::super::Profile>,
    ) -> LaunchContext<'a> {
        LaunchContext {
            args,
            env,
            profile,
            run_dir: Path::new("/state/runs/R1"),
            agents_bin: Path::new("/opt/agents/bin/agents"),
            cwd: Path::new("/home/user/project"),
        }
    }

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_new_session_gets_a_minted_id_and_the_run_s_hook_settings() {
        let env = vec![("HOME".to_string(), "/home/user".to_string())];
        let launch = Claude.launch(&ctx(&strings(&["--verbose"]), &env, None)).unwrap();
        let id = launch.session.as_ref().unwrap().id.clone();
        assert_eq!(
            launch.argv,
            strings(&[
                "claude",
                "--settings",
                "/state/runs/R1/claude-settings.json",
                "--session-id",
                &id,
                "--verbose"
            ])
        );
        assert_eq!(
            launch.session.unwrap().transcript.unwrap(),
            PathBuf::from(format!("/home/user/.claude/projects/-home-user-project/{id}.jsonl"))
        );
        assert!(launch.env.is_empty(), "the user's own config home is left alone");
        let (path, settings) = &launch.files[0];
        assert_eq!(path, Path::new("/state/runs/R1/claude-settings.json"));
        let settings: Value = serde_json::from_str(settings).unwrap();
        for event in HOOK_EVENTS {
            let group = &settings["hooks"][event][0];
            assert_eq!(
                group["hooks"][0]["command"],
                format!("/opt/agents/bin/agents hook {event}"),
                "{event}"
            );
        }
        assert_eq!(settings["hooks"]["PreToolUse"][0]["matcher"], "*");
        assert!(settings["hooks"]["Stop"][0].get("matcher").is_none());
    }

    #[test]
    fn a_profile_sets_binary_model_and_an_isolated_config_home() {
        let profile = super::super::Profile {
            family: Some("claude".into()),
            binary: Some("/opt/claude-2/claude".into()),
            config_home: Some("~/.claude-work".into()),
            model: Some("opus".into()),
            pass_env: vec![],
            fallback: vec![],
            sandbox: None,
        };
        let env = vec![("HOME".to_string(), "/home/user".to_string())];
        let launch = Claude.launch(&ctx(&[], &env, Some(&profile))).unwrap();
        assert_eq!(launch.argv[0], "/opt/claude-2/claude");
        assert_eq!(launch.argv[5..], strings(&["--model", "opus"]));
        assert_eq!(
            launch.env,
            vec![("CLAUDE_CONFIG_DIR".to_string(), "/home/user/.claude-work".to_string())]
        );
        let transcript = launch.session.unwrap().transcript.unwrap();
        assert!(transcript.starts_with("/home/user/.claude-work/projects/-home-user-project/"));
    }

    #[test]
    fn resuming_continues_the_named_session_and_forking_mints_a_new_one() {
        let resume = Claude.resume_args("abc").unwrap();
        assert_eq!(resume, strings(&["--resume", "abc"]));
        let launch = Claude.launch(&ctx(&resume, &[], None)).unwrap();
        assert!(!launch.argv.contains(&"--session-id".to_string()));
        assert_eq!(launch.session.unwrap().id, "abc");

        let fork = Claude.fork_args("abc").unwrap();
        let launch = Claude.launch(&ctx(&fork, &[], None)).unwrap();
        let minted = launch.session.unwrap().id;
        assert_ne!(minted, "abc");
        let at = launch.argv.iter().position(|a| a == "--session-id").unwrap();
        assert_eq!(launch.argv[at + 1], minted);

        let cont = Claude.launch(&ctx(&strings(&["--continue"]), &[], None)).unwrap();
        assert_eq!(cont.session, None, "learned later from hooks or the transcript");

        let own = Claude
            .launch(&ctx(&strings(&["--session-id=1234"]), &[], None))
            .unwrap();
        assert_eq!(own.session.unwrap().id, "1234");
        assert_eq!(own.argv.iter().filter(|a| a.starts_with("--session-id")).count(), 1);
    }

    #[test]
    fn a_user_s_own_settings_are_merged_with_the_run_s_hooks() {
        let args = strings(&[
            "--settings",
            r#"{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}"#,
            "--verbose",
        ]);
        let launch = Claude.launch(&ctx(&args, &[], None)).unwrap();
        assert_eq!(launch.argv.iter().filter(|a| *a == "--settings").count(), 1);
        assert_eq!(launch.argv.last().unwrap(), "--verbose");
        let merged: Value = serde_json::from_str(&launch.files[0].1).unwrap();
        assert_eq!(merged["model"], "opus");
        let stop = merged["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 2, "theirs, then ours");
        assert_eq!(stop[0]["hooks"][0]["command"], "say done");
        assert_eq!(merged["hooks"]["PreToolUse"][0]["matcher"], "*");

        let missing = strings(&["--settings", "no-such-file.json"]);
        let err = Claude.launch(&ctx(&missing, &[], None)).unwrap_err();
        assert!(err.contains("cannot read --settings no-such-file.json"), "{err}");
    }

    #[test]
    fn project_folders_are_named_as_claude_names_them() {
        assert_eq!(encode_cwd(Path::new("/home/user/project")), "-home-user-project");
        assert_eq!(encode_cwd(Path::new("/a/b.c_d é")), "-a-b-c-d--");
    }

    #[test]
    fn the_newest_transcript_of_the_cwd_is_the_session() {
        let home = tempfile::tempdir().unwrap();
        let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
        let dir = home.path().join(".claude/projects/-w");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("s-1.jsonl"), "{}\n").unwrap();
        let found = Claude
            .find_session(&SessionQuery {
                cwd: PathBuf::from("/w"),
                started,
                config_home: None,
                home: Some(home.path().to_path_buf()),
            })
            .unwrap();
        assert_eq!(found.id, "s-1");
    }
}
