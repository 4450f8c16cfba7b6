//! Cline's CLI (`cline`, npm `cline`, 3.0.65: a compiled program behind a
//! node wrapper). Its folder is `CLINE_DIR`, else `~/.cline`; its data
//! `CLINE_DATA_DIR`, else `<folder>/data`: the providers it talks to
//! (`settings/providers.json`, written by `cline auth`), and one folder per
//! session, `sessions/<id>/`, whose `<id>.messages.json` is the
//! conversation, one JSON document rewritten after each message
//! (`transcript::cline`). Cline mints the id (`<epoch ms>_<5 letters>`)
//! and writes the session at its start, so it is found then: the newest
//! session begun since the run started whose cwd is the run's. `--id ID`
//! resumes one in its own file; it forks only from inside (`/fork`).
//!
//! Left to itself, Cline's screen starts a daemon (its "hub") at its first
//! prompt, whatever `CLINE_SESSION_BACKEND_MODE` says: the daemon outlives
//! it and runs later sessions, their model calls and commands, in its own
//! process with its own environment, so a later run would not be the
//! process agents supervises. Only `--data-dir DIR` keeps every session in
//! its own process, so runs get `--data-dir` naming the data folder Cline
//! would use anyway (the sessions, settings and databases it lays out under
//! it are the usual ones), unless the user chose a backend, passed
//! `--data-dir`, or moved a part of the data folder elsewhere.
//!
//! Its hooks are executable files in folders it searches (the user's
//! `~/.cline/hooks`, the project's `.clinerules/hooks`), none given for one
//! process, and none fires while it waits for an approval: its status is
//! the screen's. By default it runs tools without asking; `--auto-approve
//! false` (or Shift+Tab) makes it ask "Approve tool call?", answered with
//! `y` or `n`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, created_since, files_since};
use super::description::{Description, Prompt, Words};

pub struct Cline;

/// The user's choice of where sessions run, which stands.
const BACKEND_VAR: &str = "CLINE_SESSION_BACKEND_MODE";

/// What `--data-dir` sets to paths under it: a user who set one keeps it
/// (and the daemon).
const DATA_PARTS: [&str; 4] = [
    "CLINE_SESSION_DATA_DIR",
    "CLINE_DB_DATA_DIR",
    "CLINE_TEAM_DATA_DIR",
    "CLINE_PROVIDER_SETTINGS_PATH",
];

const CLINE: Description = Description {
    config_home: Some("CLINE_DIR"),
    env: &super::credentials::CLINE,
    resume: Words::Given(&["--id", "{}"]),
    fork: Words::Refused(Some("cline forks a session only from inside it (/fork)")),
    // `cline -i PROMPT` opens its screen with the prompt sent; a prompt
    // alone would run without a screen and end.
    prompt: Prompt::Given(&["-i", "{}"]),
    // Text and an Enter that arrive together are read as a paste whose
    // Enter is dropped.
    enter_delay_ms: 300,
    yes: b"y",
    no: b"n",
    install: "npm install -g cline",
    ..Description::new("cline", "cline")
};

impl Adapter for Cline {
    fn description(&self) -> &'static Description {
        &CLINE
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let (config_home, env) = ctx.config_home_env("CLINE_DIR");
        let data = data_dir(ctx.var("CLINE_DATA_DIR"), config_home.as_deref(), ctx.var("HOME"));
        let mut argv = ctx.argv(self.program());
        if let Some(dir) = data.as_deref().filter(|_| keeps_sessions_local(ctx)) {
            argv.splice(1..1, ["--data-dir".to_string(), dir.to_string_lossy().into_owned()]);
        }
        let session = resumed(ctx.args).map(|id| KnownSession {
            transcript: data.map(|d| messages_file(&d, &id)),
            id,
        });
        Ok(Launch {
            argv,
            env,
            session,
            ..Launch::default()
        })
    }

    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        let home = q.home.as_deref().and_then(Path::to_str);
        data_dir(None, q.config_home.as_deref(), home)
            .map(|d| d.join("sessions"))
            .into_iter()
            .collect()
    }

    /// A new session: the newest begun since the run started whose cwd is
    /// the run's (its `<id>.json` says so).
    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let home = q.home.as_deref().and_then(Path::to_str);
        let data = data_dir(None, q.config_home.as_deref(), home)?;
        let sessions = data.join("sessions");
        let folders: Vec<PathBuf> = files_since_in_folders(&sessions, q.started);
        created_since(folders, q.started).into_iter().find_map(|meta| {
            let doc: Value = serde_json::from_slice(&std::fs::read(&meta).ok()?).ok()?;
            let id = doc["session_id"].as_str()?.to_string();
            (doc["cwd"].as_str().map(Path::new) == Some(q.cwd.as_path())).then(|| KnownSession {
                transcript: Some(messages_file(&data, &id)),
                id,
            })
        })
    }
}

/// Each session folder's `<id>.json` written since `since`, newest first.
fn files_since_in_folders(sessions: &Path, since: std::time::SystemTime) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(sessions) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .flat_map(|e| {
            let id = e.file_name().to_string_lossy().into_owned();
            files_since(&e.path(), since).into_iter().filter(move |p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy() == format!("{id}.json"))
            })
        })
        .collect();
    found.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).and_then(|m| m.modified()).ok()));
    found
}

/// Cline's data folder: `CLINE_DATA_DIR`, else `<CLINE_DIR, ~/.cline>/data`.
pub fn data_dir(data: Option<&str>, config_home: Option<&Path>, home: Option<&str>) -> Option<PathBuf> {
    if let Some(dir) = data {
        return Some(PathBuf::from(dir));
    }
    let base = match config_home {
        Some(dir) => dir.to_path_buf(),
        None => Path::new(home?).join(".cline"),
    };
    Some(base.join("data"))
}

/// Whether the run's sessions are to stay in its own process: unless the
/// user chose otherwise.
fn keeps_sessions_local(ctx: &LaunchContext) -> bool {
    let chosen = ctx.var(BACKEND_VAR).is_some() || DATA_PARTS.iter().any(|v| ctx.var(v).is_some());
    let given = ctx
        .args
        .iter()
        .any(|a| a == "--data-dir" || a.starts_with("--data-dir="));
    !chosen && !given
}

/// A session's conversation file.
fn messages_file(data: &Path, id: &str) -> PathBuf {
    data.join("sessions").join(id).join(format!("{id}.messages.json"))
}

/// The session `--id ID` (or `--id=ID`) resumes.
fn resumed(args: &[String]) -> Option<String> {
    if let Some(id) = args.iter().find_map(|a| a.strip_prefix("--id=")) {
        return Some(id.to_string());
    }
    let at = args.iter().position(|a| a == "--id")?;
    args.get(at + 1).cloned()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn launch(args: &[&str], env: &[(&str, &str)]) -> Launch {
        crate::harness::adapter::launched(&Cline, args, env).unwrap()
    }

    #[test]
    fn a_run_keeps_its_session_in_its_own_process_and_a_resumed_one_is_known() {
        let l = launch(&["--auto-approve", "false"], &[("HOME", "/h")]);
        let argv = ["cline", "--data-dir", "/h/.cline/data", "--auto-approve", "false"];
        assert_eq!(l.argv, argv);
        assert!(l.env.is_empty());
        assert_eq!(l.session, None);
        let l = launch(&[], &[("HOME", "/h"), ("CLINE_DIR", "/c")]);
        assert_eq!(l.argv, ["cline", "--data-dir", "/c/data"]);
        // The user's own choices stand.
        for env in [(BACKEND_VAR, "hub"), ("CLINE_SESSION_DATA_DIR", "/s")] {
            assert_eq!(launch(&[], &[("HOME", "/h"), env]).argv, ["cline"]);
        }
        assert_eq!(
            launch(&["--data-dir=/x"], &[("HOME", "/h")]).argv,
            ["cline", "--data-dir=/x"]
        );
        let args = Cline.resume_args("1796527564673_8vu81").unwrap();
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let s = launch(&words, &[("HOME", "/h")]).session.unwrap();
        assert_eq!(s.id, "1796527564673_8vu81");
        assert_eq!(
            s.transcript,
            Some(PathBuf::from(
                "/h/.cline/data/sessions/1796527564673_8vu81/1796527564673_8vu81.messages.json"
            ))
        );
        let s = launch(&["--id=x1"], &[("HOME", "/h"), ("CLINE_DATA_DIR", "/d")])
            .session
            .unwrap();
        assert_eq!(s.transcript, Some(PathBuf::from("/d/sessions/x1/x1.messages.json")));
        assert!(Cline.fork_args("x1").is_err());
        assert_eq!(Cline.prompt_args("go on").unwrap(), ["-i", "go on"]);
    }

    #[test]
    fn a_new_session_is_the_newest_begun_since_the_run_in_its_cwd() {
        let home = tempfile::tempdir().unwrap();
        let data = home.path().join(".cline/data");
        let started = SystemTime::now() - Duration::from_secs(1);
        let session = |id: &str, cwd: &str| {
            let dir = data.join("sessions").join(id);
            std::fs::create_dir_all(&dir).unwrap();
            let meta = serde_json::json!({ "session_id": id, "cwd": cwd, "status": "running" });
            std::fs::write(dir.join(format!("{id}.json")), meta.to_string()).unwrap();
            std::fs::write(dir.join(format!("{id}.messages.json")), "{}").unwrap();
        };
        session("1_other", "/elsewhere");
        session("2_mine", "/w");
        let query = |cwd: &str| SessionQuery {
            cwd: cwd.into(),
            started,
            config_home: None,
            home: Some(home.path().into()),
        };
        let found = Cline.find_session(&query("/w")).unwrap();
        assert_eq!(found.id, "2_mine");
        assert_eq!(found.transcript, Some(messages_file(&data, "2_mine")));
        assert_eq!(Cline.find_session(&query("/nowhere")), None);
        assert_eq!(Cline.session_roots(&query("/w")), [data.join("sessions")]);
    }
}
