//! nanocoder (npm `@nanocollective/nanocoder`, 1.30.0; it asks for node
//! 22). Its config folder is `NANOCODER_CONFIG_DIR`, else
//! `~/.config/nanocoder`: `agents.config.json` (the providers it talks to,
//! each an OpenAI-compatible `baseUrl` with its key or a `$VARIABLE`; a
//! project's own `agents.config.json` in the cwd goes first) and
//! `nanocoder-preferences.json` (the folders it trusts, how often it saves
//! a session). It needs no login.
//!
//! Its sessions are `~/.local/share/nanocoder/sessions/<uuid>.json`, one
//! JSON document written again whole (`transcript::nanocoder`), beside an
//! index, `sessions.json`. nanocoder mints the id and writes the file at
//! the first prompt, so a new session is found then: the newest begun
//! since the run started whose working directory is the run's. (A data
//! folder moved by `NANOCODER_DATA_DIR`, `XDG_DATA_HOME` or its
//! preferences is not looked in: a run's record keeps no environment.)
//! After its first save it saves at most once per `saveInterval` of its
//! preferences (30 s by default) and when it ends, so its transcript lags
//! its screen by up to that. `--resume ID` continues a session in its own
//! file; it has no fork.
//!
//! It takes no first prompt on its command line: a prompt is typed once
//! its input box is drawn. No hooks: its status is the screen's, where
//! "Do you want to execute tool …?" asks before each command (answered
//! with `1` or `2`) and "Do you trust the files in this folder?" at its
//! first start in a folder.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde_json::Value;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, files_since};
use super::description::{Description, Words};

pub struct Nanocoder;

const NANOCODER: Description = Description {
    config_home: Some("NANOCODER_CONFIG_DIR"),
    env: &super::credentials::NANOCODER,
    resume: Words::Given(&["--resume", "{}"]),
    // Text and its Enter in one read are a paste holding a newline; an
    // Enter that follows too soon is dropped.
    enter_delay_ms: 200,
    // Its questions take their choice's number.
    yes: b"1",
    no: b"2",
    install: "npm install -g @nanocollective/nanocoder, on node 22",
    ..Description::new("nanocoder", "nanocoder")
};

impl Adapter for Nanocoder {
    fn description(&self) -> &'static Description {
        &NANOCODER
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let (_, env) = ctx.config_home_env("NANOCODER_CONFIG_DIR");
        let dir = sessions_dir(ctx.var("HOME").map(Path::new));
        let session = resumed(ctx.args).map(|id| KnownSession {
            transcript: dir.map(|d| d.join(format!("{id}.json"))),
            id,
        });
        Ok(Launch {
            argv: ctx.argv(self.program()),
            env,
            session,
            ..Launch::default()
        })
    }

    /// Its variables, and those its configs take values from.
    fn env_names(&self, ctx: &LaunchContext) -> Vec<String> {
        let mut names = self.harness_env().present(ctx.env);
        let global = ctx
            .config_home("NANOCODER_CONFIG_DIR")
            .or_else(|| ctx.var("HOME").map(|h| Path::new(h).join(".config/nanocoder")));
        let files = [
            global.map(|d| d.join("agents.config.json")),
            Some(ctx.cwd.join("agents.config.json")),
        ];
        for key in files
            .iter()
            .flatten()
            .flat_map(|f| super::credentials::nanocoder_config_names(f))
        {
            if ctx.var(&key).is_some() && !names.contains(&key) {
                names.push(key);
            }
        }
        names.sort();
        names
    }

    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        sessions_dir(q.home.as_deref()).into_iter().collect()
    }

    /// A new session: the newest begun since the run started (by its own
    /// `createdAt`: each save puts a new file in its place) whose working
    /// directory is the run's cwd.
    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = sessions_dir(q.home.as_deref())?;
        let started = q.started.duration_since(UNIX_EPOCH).ok()?.as_millis() as i64;
        files_since(&dir, q.started).into_iter().find_map(|path| {
            let id = path.file_stem()?.to_str()?;
            if path.extension().is_none_or(|e| e != "json") || id == "sessions" {
                return None;
            }
            let doc: Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            let created = doc["createdAt"]
                .as_str()
                .and_then(crate::transcript::model::parse_time)?;
            let here = doc["workingDirectory"].as_str().map(Path::new) == Some(q.cwd.as_path());
            (here && created >= started).then(|| KnownSession {
                id: doc["id"].as_str().unwrap_or(id).to_string(),
                transcript: Some(path.clone()),
            })
        })
    }
}

/// The folder of its sessions: `~/.local/share/nanocoder/sessions`.
fn sessions_dir(home: Option<&Path>) -> Option<PathBuf> {
    Some(home?.join(".local/share/nanocoder/sessions"))
}

/// The session `--resume ID` (or `-r ID`) names: a whole id, not `last`
/// or a number in its list.
fn resumed(args: &[String]) -> Option<String> {
    let whole = |id: &str| id.len() == 36 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    let at = args.iter().position(|a| a == "--resume" || a == "-r")?;
    args.get(at + 1).filter(|id| whole(id)).cloned()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn launch(args: &[&str]) -> Launch {
        crate::harness::adapter::launched(&Nanocoder, args, &[("HOME", "/h")]).unwrap()
    }

    #[test]
    fn a_resumed_session_is_known_by_its_file_and_a_prompt_is_typed() {
        let id = "99288c67-ac2a-4954-87a3-d3bdf90a693f";
        let args = Nanocoder.resume_args(id).unwrap();
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let l = launch(&words);
        assert_eq!(l.argv, ["nanocoder", "--resume", id]);
        let s = l.session.unwrap();
        assert_eq!(s.id, id);
        let file = format!("/h/.local/share/nanocoder/sessions/{id}.json");
        assert_eq!(s.transcript, Some(PathBuf::from(file)));
        assert_eq!(launch(&["--resume", "last"]).session, None);
        assert!(Nanocoder.fork_args(id).is_err());
        assert_eq!(Nanocoder.prompt_args("go on"), None);
    }

    #[test]
    fn a_new_session_is_the_newest_begun_since_the_run_in_its_cwd() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".local/share/nanocoder/sessions");
        std::fs::create_dir_all(&dir).unwrap();
        let started = SystemTime::now() - Duration::from_secs(60);
        let at = |t: SystemTime| humantime::format_rfc3339_millis(t).to_string();
        let session = |id: &str, cwd: &str, created: SystemTime| {
            let doc =
                serde_json::json!({ "id": id, "createdAt": at(created), "workingDirectory": cwd, "messages": [] });
            std::fs::write(dir.join(format!("{id}.json")), doc.to_string()).unwrap();
        };
        let old = started - Duration::from_secs(3600);
        session("00000000-0000-4000-8000-000000000001", "/w", old);
        session("00000000-0000-4000-8000-000000000002", "/elsewhere", SystemTime::now());
        std::fs::write(dir.join("sessions.json"), "[]").unwrap();
        let query = |cwd: &str| SessionQuery {
            cwd: cwd.into(),
            started,
            config_home: None,
            home: Some(home.path().into()),
        };
        // Saved again since, but begun before the run: not its own.
        assert_eq!(Nanocoder.find_session(&query("/w")), None);
        session("00000000-0000-4000-8000-000000000003", "/w", SystemTime::now());
        let found = Nanocoder.find_session(&query("/w")).unwrap();
        assert_eq!(found.id, "00000000-0000-4000-8000-000000000003");
        assert_eq!(Nanocoder.session_roots(&query("/w")), [dir]);
    }
}
