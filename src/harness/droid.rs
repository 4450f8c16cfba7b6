//! Factory Droid (`droid`, npm `@factory/cli`, 0.225.2). Its state folder is
//! `<FACTORY_HOME_OVERRIDE, else HOME>/.factory`: `settings.json` (its
//! `customModels`, each with a `baseUrl`, `apiKey` and `provider`), and the
//! sessions in `sessions/<cwd>/<id>.jsonl`, the cwd's real path without
//! its leading slash, each run of slashes a dash, after a dash
//! (`/tmp/p` → `-tmp-p`); beside each, `<id>.settings.json` holds the
//! session's model and token totals. Droid mints the session id itself, so
//! a new session is found once its file appears: the newest of the cwd's
//! folder created since the run began whose `session_start` names the cwd.
//! `--resume ID` continues a session in its own file, `--fork ID` copies it
//! into a new one. Its hooks take Claude's shape: a per-run settings file
//! passed with `--settings` (which Droid merges over the user's own for
//! that process) runs `agents hook` on each event, and says nothing in
//! Droid's chat (`--suppress-output`). Their payloads name the session and
//! its file as soon as it starts. The screen is read too: its folder trust
//! question, which comes before any hook, and its approval box (`Yes,
//! allow` … `No, cancel`), both answered with Enter on the first choice.
//!
//! Its TUI asks for a Factory login first unless it runs airgapped
//! (`FACTORY_AIRGAP_ENABLED`), where only the custom models of its
//! settings are offered: how the tests run it. A Factory login
//! (`FACTORY_API_KEY`, its browser login) and Factory's own models were
//! never tried here, nor its approval boxes for edits (only a command's).

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, created_since, files_since};
use super::description::{Description, Prompt, Words};
use super::hook_config::{self, HookSet};

pub struct Droid;

/// The variable naming the folder Droid takes for HOME.
const HOME_VAR: &str = "FACTORY_HOME_OVERRIDE";

/// Droid's subcommands (`droid --help`); a first word not among them is
/// a prompt.
const SUBCOMMANDS: &[&str] = &[
    "resume", "exec", "daemon", "search", "find", "update", "mcp", "plugin", "computer", "doctor", "help",
];

/// The run's settings file, in the run folder.
pub const SETTINGS_FILE: &str = "droid-settings.json";

/// Droid's hook events (the ones its settings accept), each reported.
/// Without `--suppress-output` each would add a "Hooks Stop … Exit code 0"
/// line to Droid's chat.
const HOOKS: HookSet = HookSet {
    events: &[
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Notification",
        "Stop",
        "SubagentStop",
        "SessionEnd",
    ],
    tool_events: &["PreToolUse", "PostToolUse"],
    options: "--suppress-output",
};

const DROID: Description = Description {
    config_home: Some(HOME_VAR),
    env: &super::credentials::DROID,
    resume: Words::Given(&["--resume", "{}"]),
    fork: Words::Given(&["--fork", "{}"]),
    // `droid PROMPT`: starts with it (one that reads as an option is
    // typed in instead).
    prompt: Prompt::Alone { unless: &['-'] },
    // Enter takes the first choice (`Trust this folder`, `Yes, allow`),
    // which is selected when the question opens; Esc refuses.
    yes: b"\r",
    install: "npm install -g @factory/cli",
    ..Description::new("droid", "droid")
};

impl Adapter for Droid {
    fn description(&self) -> &'static Description {
        &DROID
    }

    /// No `--model` on its interactive command line: its settings choose.
    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let mut argv = vec![ctx.binary(self.program())];
        // Its `exec` and `resume` take their own `--settings`; its other
        // subcommands (`mcp`, `update` …) start no session to report on,
        // and take the arguments as given.
        let subcommand = ctx.args.first().filter(|a| SUBCOMMANDS.contains(&a.as_str()));
        let reports = subcommand.is_none_or(|s| s == "exec" || s == "resume");
        let mut files = Vec::new();
        if reports {
            // One `--settings` per process: a user's own is merged into the
            // run's file rather than dropping the hooks.
            let (own, mut args) = hook_config::own_settings(ctx.args, ctx.cwd)?;
            if subcommand.is_some() {
                argv.push(args.remove(0));
            }
            let settings = ctx.run_dir.join(SETTINGS_FILE);
            argv.extend(["--settings".into(), settings.to_string_lossy().into_owned()]);
            argv.extend(args);
            files.push((settings, hook_config::settings(own, ctx.agents_bin, &HOOKS)));
        } else {
            argv.extend(ctx.args.iter().cloned());
        }
        let (config_home, env) = ctx.config_home_env(HOME_VAR);
        let dir = sessions_dir(config_home.as_deref(), ctx.var("HOME").map(Path::new), ctx.cwd);
        let session = resumed(ctx.args).map(|id| KnownSession {
            transcript: dir.map(|d| d.join(format!("{id}.jsonl"))),
            id,
        });
        Ok(Launch {
            argv,
            env,
            files,
            session,
            touch: Vec::new(),
        })
    }

    /// `.factory/sessions`: every cwd's sessions.
    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        sessions_dir(q.config_home.as_deref(), q.home.as_deref(), &q.cwd)
            .and_then(|dir| dir.parent().map(Path::to_path_buf))
            .into_iter()
            .collect()
    }

    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = sessions_dir(q.config_home.as_deref(), q.home.as_deref(), &q.cwd)?;
        created_since(files_since(&dir, q.started), q.started)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .find_map(|path| {
                let (id, cwd) = header(&path)?;
                (Path::new(&cwd) == q.cwd).then_some(KnownSession {
                    id,
                    transcript: Some(path),
                })
            })
    }
}

/// The session `--resume ID` (or `-r ID`, or `resume ID`) continues, when
/// it is a whole id.
fn resumed(args: &[String]) -> Option<String> {
    let i = match args.first().map(String::as_str) {
        Some("resume") => 0,
        _ => args.iter().position(|a| a == "--resume" || a == "-r")?,
    };
    args.get(i + 1)
        .filter(|id| id.len() == 36 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-'))
        .cloned()
}

/// The folder of the sessions begun in `cwd`.
pub fn sessions_dir(config_home: Option<&Path>, home: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
    let base = config_home.or(home)?;
    Some(base.join(".factory/sessions").join(encode_cwd(cwd)))
}

/// Droid's folder name for a cwd: a dash, then the path without its
/// leading and trailing slashes, each run of slashes a dash.
pub fn encode_cwd(cwd: &Path) -> String {
    let text = cwd.to_string_lossy();
    let bare = text.trim_matches('/');
    let mut out = String::from("-");
    let mut slash = false;
    for c in bare.chars() {
        if c == '/' {
            if !slash {
                out.push('-');
            }
            slash = true;
        } else {
            out.push(c);
            slash = false;
        }
    }
    out
}

/// The id and cwd of a session file's `session_start` (its first line).
fn header(path: &Path) -> Option<(String, String)> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(std::io::Read::take(file, 64 * 1024))
        .read_line(&mut line)
        .ok()?;
    let head: Value = serde_json::from_str(&line).ok()?;
    if head["type"] != "session_start" {
        return None;
    }
    Some((head["id"].as_str()?.to_string(), head["cwd"].as_str()?.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx<'a>(
        args: &'a [String],
        env: &'a [(String, String)],
        profile: Option<&'a super::super::Profile>,
    ) -> LaunchContext<'a> {
        LaunchContext {
            args,
            env,
            profile,
            run_dir: Path::new("/r"),
            agents_bin: Path::new("/a"),
            cwd: Path::new("/w/my proj"),
        }
    }

    #[test]
    fn every_run_reports_its_hooks_quietly_and_a_user_s_own_settings_are_kept() {
        let args: Vec<String> = [
            "--settings",
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"mine"}]}]},"x":1}"#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let l = Droid.launch(&ctx(&args, &[], None)).unwrap();
        assert_eq!(l.argv, ["droid", "--settings", "/r/droid-settings.json"]);
        let (path, text) = &l.files[0];
        assert_eq!(path, Path::new("/r/droid-settings.json"));
        let settings: Value = serde_json::from_str(text).unwrap();
        assert_eq!(settings["x"], 1);
        let stop = settings["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop[0]["hooks"][0]["command"], "mine", "the user's own hook runs first");
        assert_eq!(stop[1]["hooks"][0]["command"], "/a hook --suppress-output Stop");
        for event in HOOKS.events {
            let ours = settings["hooks"][event].as_array().unwrap().last().unwrap().clone();
            assert_eq!(
                ours["hooks"][0]["command"],
                format!("/a hook --suppress-output {event}")
            );
            assert_eq!(ours.get("matcher").is_some(), event.ends_with("ToolUse"), "{event}");
        }
        // `exec` and `resume` take it after their name; `mcp` none.
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let exec = Droid.launch(&ctx(&words(&["exec", "go"]), &[], None)).unwrap();
        assert_eq!(
            exec.argv,
            ["droid", "exec", "--settings", "/r/droid-settings.json", "go"]
        );
        let id = "5d74fe8e-c559-46da-954f-bb811ddde92e";
        let resume = Droid.launch(&ctx(&words(&["resume", id]), &[], None)).unwrap();
        assert_eq!(
            resume.argv,
            ["droid", "resume", "--settings", "/r/droid-settings.json", id]
        );
        assert_eq!(resume.session.unwrap().id, id);
        let mcp = Droid
            .launch(&ctx(&words(&["mcp", "list", "--settings", "s.json"]), &[], None))
            .unwrap();
        assert_eq!(
            (mcp.argv, mcp.files.len()),
            (words(&["droid", "mcp", "list", "--settings", "s.json"]), 0),
            "as given"
        );
        let prompt = Droid.launch(&ctx(&words(&["fix the tests"]), &[], None)).unwrap();
        assert_eq!(
            prompt.argv[1..],
            words(&["--settings", "/r/droid-settings.json", "fix the tests"])
        );
        let bad = vec!["--settings".to_string(), "{oops".to_string()];
        assert!(
            Droid
                .launch(&ctx(&bad, &[], None))
                .unwrap_err()
                .contains("not a JSON object")
        );
    }

    #[test]
    fn resume_and_fork_take_droid_s_options_and_a_resume_s_file_is_known() {
        let id = "5d74fe8e-c559-46da-954f-bb811ddde92e";
        let env = vec![("HOME".to_string(), "/home/u".to_string())];
        let args = Droid.resume_args(id).unwrap();
        let l = Droid.launch(&ctx(&args, &env, None)).unwrap();
        assert_eq!(
            l.argv,
            ["droid", "--settings", "/r/droid-settings.json", "--resume", id]
        );
        let s = l.session.unwrap();
        assert_eq!(
            (s.id.as_str(), s.transcript.unwrap()),
            (
                id,
                PathBuf::from(format!("/home/u/.factory/sessions/-w-my proj/{id}.jsonl"))
            )
        );
        assert_eq!(Droid.fork_args(id).unwrap(), ["--fork", id]);
        assert_eq!(Droid.launch(&ctx(&[], &env, None)).unwrap().session, None);
        assert_eq!(Droid.prompt_args("go on").unwrap(), ["go on"]);
        assert_eq!(Droid.prompt_args("--help"), None);
        assert_eq!(
            (Droid.answer_keys(true), Droid.answer_keys(false)),
            (b"\r".to_vec(), vec![0x1b])
        );
        assert_eq!(encode_cwd(Path::new("/tmp/clis//ws2/")), "-tmp-clis-ws2");

        let profile = super::super::Profile {
            config_home: Some("/srv/droid".into()),
            model: Some("ignored".into()),
            ..Default::default()
        };
        let l = Droid.launch(&ctx(&[], &env, Some(&profile))).unwrap();
        assert_eq!(
            l.argv,
            ["droid", "--settings", "/r/droid-settings.json"],
            "its settings choose the model"
        );
        assert_eq!(l.env, [(HOME_VAR.to_string(), "/srv/droid".to_string())]);
    }

    #[test]
    fn a_new_session_is_the_newest_file_of_the_cwd_naming_it() {
        let home = tempfile::tempdir().unwrap();
        let dir = sessions_dir(None, Some(home.path()), Path::new("/w")).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        let head = |id: &str, cwd: &str| format!("{{\"type\":\"session_start\",\"id\":\"{id}\",\"cwd\":\"{cwd}\"}}\n");
        std::fs::write(dir.join("other.jsonl"), head("other", "/elsewhere")).unwrap();
        std::fs::write(dir.join("5d74.settings.json"), "{}").unwrap();
        std::fs::write(dir.join("5d74.jsonl"), head("5d74", "/w")).unwrap();
        let found = Droid
            .find_session(&SessionQuery {
                cwd: PathBuf::from("/w"),
                started: std::time::SystemTime::now() - std::time::Duration::from_secs(2),
                config_home: None,
                home: Some(home.path().to_path_buf()),
            })
            .unwrap();
        assert_eq!(found.id, "5d74");
        assert_eq!(found.transcript.unwrap(), dir.join("5d74.jsonl"));
    }
}
