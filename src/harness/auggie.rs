//! Auggie, Augment Code's CLI (`auggie`, npm `@augmentcode/auggie`,
//! 0.36.0). Its state folder is `~/.augment`: its login (`session.json`),
//! its `settings.json`, and one file per session, `sessions/<id>.json`, a
//! whole JSON document rewritten after each exchange (`transcript::auggie`).
//! Auggie mints the session id itself and writes the file only once the
//! first exchange ends, so a new session is found then: the newest file
//! begun since the run started whose workspace is the run's cwd. `--resume
//! ID` continues a session in its own file; it has no fork. A run given
//! its own `--augment-cache-dir` keeps its sessions elsewhere, and is not
//! followed to them.
//!
//! No hooks are installed: Auggie reads hooks only from settings files
//! the user owns (`~/.augment/settings.json`, the workspace's
//! `.augment/settings.json`, the system's managed settings) or from
//! plugins a settings file enables, never from a file given for one
//! process; writing into the user's own would change every Auggie they
//! run. So its status is the screen's: the tool approval box ("Tool
//! Approval Required" over "[A]llow [D]eny", answered with `a` or `d`) and
//! its first-run questions. By default Auggie runs tools without asking;
//! `--permission TOOL:ask-user` (or its settings) makes it ask. Auggie
//! 0.36 clears its screen and draws nothing more when its terminal grows
//! while the indexing question is up (in tmux too), until a key is
//! pressed; a run resized then reads as idle.
//!
//! Its model is Augment's own service, reached with a login
//! (`auggie login`, or `AUGMENT_SESSION_AUTH` holding the session JSON);
//! the tests point `AUGMENT_SESSION_AUTH`'s tenant at a loopback mock of
//! that service. Its session files keep no token counts (Augment bills
//! credits), so a run's usage is unknown.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, files_since};
use super::description::{Description, Words};

pub struct Auggie;

/// Its subcommands (`auggie --help`); a first word not among them is an
/// instruction.
const SUBCOMMANDS: &[&str] = &[
    "login", "logout", "token", "session", "sessions", "model", "account", "context", "upgrade", "command", "mcp",
    "tools", "help",
];

const AUGGIE: Description = Description {
    env: &super::credentials::AUGGIE,
    resume: Words::Given(&["--resume", "{}"]),
    fork: Words::Refused(Some("auggie cannot fork a session (it only resumes one)")),
    // Its Ink input takes text and an Enter that arrive together as one
    // key: a prompt gets a newline instead of being sent, and a choice
    // typed at a question ("2") is not chosen.
    enter_delay_ms: 100,
    // Its approval box takes `a` (Allow) and `d` (Deny).
    yes: b"a",
    no: b"d",
    install: "npm install -g @augmentcode/auggie",
    ..Description::new("auggie", "auggie")
};

impl Adapter for Auggie {
    fn description(&self) -> &'static Description {
        &AUGGIE
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let dir = ctx.var("HOME").map(|h| sessions_dir(Path::new(h)));
        let session = resumed(ctx.args).map(|id| KnownSession {
            transcript: dir.map(|d| d.join(format!("{id}.json"))),
            id,
        });
        Ok(Launch {
            argv: ctx.argv(self.program()),
            session,
            ..Launch::default()
        })
    }

    /// `auggie INSTRUCTION`: starts with it (one that reads as an option
    /// or a subcommand is typed in instead).
    fn prompt_args(&self, prompt: &str) -> Option<Vec<String>> {
        let first = prompt.split_whitespace().next().unwrap_or("");
        (!prompt.starts_with('-') && !SUBCOMMANDS.contains(&first)).then(|| vec![prompt.to_string()])
    }

    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = sessions_dir(q.home.as_deref()?);
        files_since(&dir, q.started)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .find_map(|path| {
                let (id, created, roots) = header(&path)?;
                // Each write replaces the file, so its own birth time is
                // that of its last write: an older session that another
                // run of the cwd goes on with is told by its `created`
                // (in whole milliseconds, so up to one before the start).
                let begun = created.is_none_or(|t| t + Duration::from_millis(1) >= q.started);
                (begun && roots.iter().any(|r| Path::new(r) == q.cwd)).then_some(KnownSession {
                    id,
                    transcript: Some(path),
                })
            })
    }
}

/// The folder of Auggie's sessions under `home`.
pub fn sessions_dir(home: &Path) -> PathBuf {
    home.join(".augment/sessions")
}

/// The session `--resume ID` (or `-r ID`, `--resume=ID`, `session resume
/// ID`) continues, when it is a whole id (Auggie also takes a prefix).
fn resumed(args: &[String]) -> Option<String> {
    let whole = |id: &str| id.len() == 36 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    if let Some(id) = args.iter().find_map(|a| a.strip_prefix("--resume=")) {
        return whole(id).then(|| id.to_string());
    }
    let at = match args {
        [s, r, ..] if (s == "session" || s == "sessions") && r == "resume" => 1,
        _ => args.iter().position(|a| a == "--resume" || a == "-r")?,
    };
    args.get(at + 1).filter(|id| whole(id)).cloned()
}

/// A session file's id, when it was begun, and the workspace roots its
/// exchanges name (the `ide_state_node` of each request).
fn header(path: &Path) -> Option<(String, Option<SystemTime>, Vec<String>)> {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    let id = doc["sessionId"].as_str()?.to_string();
    let created = doc["created"]
        .as_str()
        .and_then(|t| humantime::parse_rfc3339_weak(t).ok());
    let mut roots = Vec::new();
    for entry in doc["chatHistory"].as_array().into_iter().flatten() {
        for node in entry["exchange"]["request_nodes"].as_array().into_iter().flatten() {
            let state = &node["ide_state_node"];
            let folders = state["workspace_folders"].as_array().into_iter().flatten();
            roots.extend(folders.filter_map(|f| f["folder_root"].as_str()).map(str::to_string));
            if let Some(cwd) = state["current_terminal"]["current_working_directory"].as_str() {
                roots.push(cwd.to_string());
            }
        }
    }
    Some((id, created, roots))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    fn launch(args: &[String]) -> Launch {
        let env = [("HOME".to_string(), "/h".to_string())];
        let ctx = LaunchContext {
            args,
            env: &env,
            profile: None,
            run_dir: Path::new("/r"),
            agents_bin: Path::new("/a"),
            cwd: Path::new("/w"),
        };
        Auggie.launch(&ctx).unwrap()
    }

    #[test]
    fn a_run_is_auggie_with_the_user_s_arguments_and_a_resumed_session_is_known_at_once() {
        assert_eq!(launch(&words(&["-m", "x"])).argv, ["auggie", "-m", "x"]);
        assert_eq!(launch(&[]).session, None);
        let id = "7940b1a3-83cb-4dfb-8ef2-4cb5387f434a";
        for args in [
            words(&["--resume", id]),
            words(&["-r", id]),
            vec![format!("--resume={id}")],
            words(&["session", "resume", id]),
        ] {
            let session = launch(&args).session.unwrap_or_else(|| panic!("{args:?}"));
            assert_eq!(session.id, id);
            assert_eq!(
                session.transcript,
                Some(PathBuf::from(format!("/h/.augment/sessions/{id}.json")))
            );
        }
        // A prefix is Auggie's to resolve: not known here.
        assert_eq!(launch(&words(&["--resume", "7940b1a3"])).session, None);
        assert_eq!(Auggie.resume_args(id).unwrap(), ["--resume", id]);
        assert!(Auggie.fork_args(id).is_err());
    }

    #[test]
    fn a_prompt_is_its_instruction_unless_it_reads_as_an_option_or_a_subcommand() {
        assert_eq!(Auggie.prompt_args("fix it"), Some(words(&["fix it"])));
        assert_eq!(Auggie.prompt_args("--help"), None);
        assert_eq!(Auggie.prompt_args("login now"), None);
        assert_eq!(Auggie.answer_keys(true), b"a");
        assert_eq!(Auggie.answer_keys(false), b"d");
    }

    #[test]
    fn a_new_session_is_the_newest_file_of_the_run_s_workspace() {
        let home = tempfile::tempdir().unwrap();
        let dir = sessions_dir(home.path());
        std::fs::create_dir_all(&dir).unwrap();
        let started = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
        let session = |id: &str, root: &str| {
            let created = humantime::format_rfc3339_millis(std::time::SystemTime::now());
            serde_json::json!({ "sessionId": id, "created": created.to_string(), "chatHistory": [{ "exchange": { "request_nodes": [
                { "id": 1, "type": 0, "text_node": { "content": "hi" } },
                { "id": 2, "type": 4, "ide_state_node": { "workspace_folders": [{ "folder_root": root }] } },
            ] } }] })
            .to_string()
        };
        std::fs::write(dir.join("a.json"), session("a", "/elsewhere")).unwrap();
        std::fs::write(dir.join("b.json"), session("b", "/w")).unwrap();
        std::fs::write(dir.join("c.json"), "{ cut").unwrap();
        // Begun yesterday, written again just now by another run.
        let mut old: Value = serde_json::from_str(&session("old", "/w")).unwrap();
        old["created"] = "2026-01-01T00:00:00.000Z".into();
        std::fs::write(dir.join("old.json"), old.to_string()).unwrap();
        let query = |cwd: &str| SessionQuery {
            cwd: cwd.into(),
            started,
            config_home: None,
            home: Some(home.path().into()),
        };
        let found = Auggie.find_session(&query("/w")).unwrap();
        assert_eq!(found.id, "b");
        assert_eq!(found.transcript, Some(dir.join("b.json")));
        assert_eq!(Auggie.find_session(&query("/nowhere")), None);
    }
}
