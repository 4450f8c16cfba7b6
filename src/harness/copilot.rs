//! GitHub Copilot CLI (`@github/copilot`, 1.0.102). Its state folder is
//! `COPILOT_HOME`, else `~/.copilot`; a session lives in
//! `session-state/<id>/events.jsonl` (one event a line, appended: a resume
//! continues the same file). A new session takes the id given to
//! `--session-id`, so `agents` mints it and knows the file at once;
//! `--resume=ID` continues one. Forking is only the `/fork` command inside
//! a session, so `agents sessions fork` cannot start one. Its hooks come
//! from a plugin in the run's folder (`--plugin-dir`, loaded for that
//! process only, beside the user's own hooks): each event runs `agents
//! hook`, with the payloads Claude's hooks send (its PascalCase event
//! names). `PreToolUse` is left out: Copilot denies the tool call when
//! that hook fails to run, so a missing `agents` binary would stop every
//! tool. The screen is read too: the folder trust question, which comes
//! before any hook, and its numbered permission prompts ("Do you want to
//! run this command?"). Copilot keeps an empty data folder per plugin
//! folder (`~/.copilot/plugin-data/_direct/<hash>`), so one per run.
//!
//! It works without a GitHub account when its model is a custom provider
//! (`COPILOT_PROVIDER_BASE_URL`, its BYOK mode); with `COPILOT_OFFLINE`
//! set it touches no other network. That is how it is tested; a GitHub
//! login (`COPILOT_GITHUB_TOKEN`, `GH_TOKEN`, `GITHUB_TOKEN`, or `/login`)
//! is passed on but was never tried here, nor were its file-edit, path and
//! URL questions (their words are from its source).

use std::path::{Path, PathBuf};

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, new_uuid};
use super::description::{Description, Prompt, Words};

pub struct Copilot;

/// The variable naming Copilot's state folder.
const HOME_VAR: &str = "COPILOT_HOME";

const COPILOT: Description = Description {
    config_home: Some(HOME_VAR),
    env: &super::credentials::COPILOT,
    // `--resume=ID`: the `=` keeps the id from reading as a prompt (the
    // option's value is optional; alone it opens a picker).
    resume: Words::Given(&["--resume={}"]),
    fork: Words::Refused(Some(
        "copilot forks a session only with /fork inside it, not on its command line",
    )),
    // `-i PROMPT`: runs the prompt, then stays interactive.
    prompt: Prompt::Given(&["-i", "{}"]),
    install: "npm install -g @github/copilot",
    ..Description::new("copilot", "copilot")
};

impl Adapter for Copilot {
    fn description(&self) -> &'static Description {
        &COPILOT
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let plugin = ctx.run_dir.join(PLUGIN_DIR);
        let mut argv = vec![
            ctx.binary(self.program()),
            "--plugin-dir".into(),
            plugin.to_string_lossy().into_owned(),
        ];
        let id = match given_session(ctx.args) {
            Some(id) => Some(id),
            // A session the CLI picks itself (`--continue`, a name): unknown.
            None if picks_session(ctx.args) => None,
            None => {
                let id = new_uuid();
                argv.push(format!("--session-id={id}"));
                Some(id)
            }
        };
        argv.extend(ctx.model_args());
        argv.extend(ctx.args.iter().cloned());
        let (config_home, env) = ctx.config_home_env(HOME_VAR);
        let dir = state_dir(config_home.as_deref(), ctx.var("HOME").map(Path::new));
        let session = id.map(|id| KnownSession {
            transcript: dir.map(|dir| dir.join(&id).join("events.jsonl")),
            id,
        });
        Ok(Launch {
            argv,
            env,
            files: hook_plugin(&plugin, ctx.agents_bin),
            session,
            touch: Vec::new(),
        })
    }

    /// `<COPILOT_HOME>/session-state`: every session's events.
    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        state_dir(q.config_home.as_deref(), q.home.as_deref())
            .into_iter()
            .collect()
    }
}

/// The plugin's folder in the run folder.
const PLUGIN_DIR: &str = "copilot-plugin";

/// The events the plugin reports, by their Claude-compatible names (whose
/// payloads are Claude's: `hook_event_name`, `session_id`, `tool_name`,
/// `notification_type`). Not `PreToolUse` (fails closed) nor
/// `PermissionRequest` (fires before Copilot's own rules may allow the
/// tool, and sends another shape).
const HOOK_EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PostToolUse",
    "Notification",
    "Stop",
    "SubagentStop",
    "SessionEnd",
];

/// A plugin of hooks alone: its manifest and `hooks.json`, each event
/// running `agents hook EVENT` directly (no shell between).
fn hook_plugin(dir: &Path, agents_bin: &Path) -> Vec<(PathBuf, String)> {
    let manifest = serde_json::json!({
        "name": "agents-status",
        "description": "Reports this session's status to agents",
        "version": env!("CARGO_PKG_VERSION"),
        "hooks": "hooks.json",
    });
    let program = agents_bin.to_string_lossy();
    let hooks: serde_json::Map<String, serde_json::Value> = HOOK_EVENTS
        .iter()
        .map(|event| {
            let hook = serde_json::json!({ "type": "command", "exec": program, "args": ["hook", event],
                "timeoutSec": super::hook_config::HOOK_TIMEOUT_SECS });
            (event.to_string(), serde_json::json!([hook]))
        })
        .collect();
    let hooks = serde_json::json!({ "version": 1, "hooks": hooks });
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
    vec![
        (dir.join("plugin.json"), pretty(&manifest)),
        (dir.join("hooks.json"), pretty(&hooks)),
    ]
}

/// The session the user's arguments name by its id: `--session-id ID`,
/// `--resume ID` or their `=ID` forms.
fn given_session(args: &[String]) -> Option<String> {
    for (i, arg) in args.iter().enumerate() {
        for option in ["--session-id", "--resume", "-r"] {
            if let Some(id) = arg.strip_prefix(option).and_then(|rest| rest.strip_prefix('=')) {
                return Some(id.to_string());
            }
            if arg == option
                && let Some(id) = args.get(i + 1).filter(|v| is_session_id(v))
            {
                return Some(id.clone());
            }
        }
    }
    None
}

/// Whether the arguments choose a session some other way: `--continue`,
/// or `--resume` alone or with a name or id prefix (no id is minted
/// beside them).
fn picks_session(args: &[String]) -> bool {
    args.iter()
        .any(|a| a == "--continue" || a == "-r" || a.starts_with("--resume") || a.starts_with("--session-id"))
}

/// A whole session id (a UUID), not a prompt or an option.
fn is_session_id(word: &str) -> bool {
    word.len() == 36 && word.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// `<COPILOT_HOME, else ~/.copilot>/session-state`.
pub fn state_dir(config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    let base = match config_home {
        Some(dir) => dir.to_path_buf(),
        None => home?.join(".copilot"),
    };
    Some(base.join("session-state"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(args: &[&str], profile: Option<&super::super::Profile>) -> Launch {
        let env = [("HOME", "/home/u")];
        crate::harness::adapter::launched_with(&Copilot, args, &env, profile).unwrap()
    }

    #[test]
    fn every_run_loads_a_plugin_of_hooks_from_its_folder() {
        let l = launch(&[], None);
        assert_eq!(l.argv[1..3], ["--plugin-dir", "/r/copilot-plugin"]);
        let file = |name: &str| -> serde_json::Value {
            let (_, text) = l
                .files
                .iter()
                .find(|(p, _)| p == Path::new("/r/copilot-plugin").join(name).as_path())
                .unwrap();
            serde_json::from_str(text).unwrap()
        };
        assert_eq!(file("plugin.json")["hooks"], "hooks.json");
        let hooks = file("hooks.json");
        assert_eq!(hooks["version"], 1);
        for event in HOOK_EVENTS {
            let hook = &hooks["hooks"][event][0];
            assert_eq!(
                (&hook["exec"], &hook["args"]),
                (&"/a".into(), &serde_json::json!(["hook", event]))
            );
        }
        assert!(
            hooks["hooks"].get("PreToolUse").is_none(),
            "a failing PreToolUse denies the tool"
        );
    }

    #[test]
    fn a_new_session_gets_a_minted_id_and_its_events_file_is_known() {
        let l = launch(&["--allow-all-paths"], None);
        let s = l.session.unwrap();
        assert_eq!(
            l.argv,
            [
                "copilot",
                "--plugin-dir",
                "/r/copilot-plugin",
                &format!("--session-id={}", s.id),
                "--allow-all-paths"
            ]
        );
        assert!(is_session_id(&s.id), "{}", s.id);
        assert_eq!(
            s.transcript.unwrap(),
            PathBuf::from(format!("/home/u/.copilot/session-state/{}/events.jsonl", s.id))
        );
        assert!(l.env.is_empty());
    }

    #[test]
    fn resume_names_its_session_fork_is_refused_and_a_profile_isolates() {
        let id = "1d28b8d7-9177-43dd-822b-b229d2e65fa2";
        let args = Copilot.resume_args(id).unwrap();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let l = launch(&args, None);
        assert_eq!(l.argv[3..], [format!("--resume={id}")]);
        assert_eq!(l.session.unwrap().id, id);
        // The spaced forms name it too; a bare --resume is a picker's.
        assert_eq!(launch(&["--resume", id], None).session.unwrap().id, id);
        assert_eq!(launch(&["--session-id", id], None).argv[3..], ["--session-id", id]);
        let by_name = launch(&["--resume", "my feature"], None);
        assert_eq!(
            (by_name.argv.len(), by_name.session),
            (5, None),
            "nothing minted beside it"
        );
        assert_eq!(launch(&["--continue"], None).session, None);
        assert!(Copilot.fork_args(id).unwrap_err().contains("/fork"));
        assert_eq!(Copilot.prompt_args("go").unwrap(), ["-i", "go"]);

        let profile = super::super::Profile {
            config_home: Some("/srv/copilot".into()),
            model: Some("gpt-5.4".into()),
            ..Default::default()
        };
        let l = launch(&[], Some(&profile));
        assert_eq!(l.argv[4..], ["--model", "gpt-5.4"]);
        assert_eq!(l.env, [(HOME_VAR.to_string(), "/srv/copilot".to_string())]);
        assert!(
            l.session
                .unwrap()
                .transcript
                .unwrap()
                .starts_with("/srv/copilot/session-state")
        );
    }
}
