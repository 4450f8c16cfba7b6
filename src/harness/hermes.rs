//! Hermes Agent (Nous Research; PyPI `hermes-agent`, 0.19.0, `hermes`).
//! Its home is `HERMES_HOME`, else `~/.hermes`: `config.yaml` (its model,
//! provider, endpoint and key; `approvals`), `.env`, and `state.db`, the
//! SQLite database that keeps every session (`transcript::hermes`; its
//! `sessions/` folder stays empty in the CLI). It talks to many providers
//! (`custom` is any OpenAI-compatible endpoint) and needs no login of its
//! own.
//!
//! It takes no first prompt on its command line (`-z` and `chat -q` are
//! one-shot): a prompt is typed at its `❯` line, and typed while a turn
//! runs it interrupts that turn, so prompts wait for the turn's end. A
//! session's id (`20261206_071149_9cd878`) is on its banner at start, but
//! its row is written at its first message, with the cwd: a new session
//! is the newest row of the run's cwd begun since the run started.
//! `--resume ID` (`-r`) continues one; it has no fork.
//!
//! It asks before a command only when the command looks dangerous (its
//! `DANGEROUS_PATTERNS`, or its tirith scanner) — even with
//! `approvals.mode: manual`, which only skips its model's own review
//! (`smart`, the default). The question is a box, "⚠️  Dangerous Command",
//! with numbered choices: a digit picks and confirms at once (`1` allows
//! once); the place of "Deny" varies, and Ctrl-C denies whichever is shown.
//! Its hooks are in its config, accepted only by a prompt or a flag: its
//! status is the screen's.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery};
use super::description::{Description, Words};
use crate::transcript::hermes as store;

pub struct Hermes;

const HERMES: Description = Description {
    config_home: Some("HERMES_HOME"),
    env: &super::credentials::HERMES,
    resume: Words::Given(&["--resume", "{}"]),
    // `1` is "Allow once"; Ctrl-C cancels the question, which denies.
    yes: b"1",
    no: b"\x03",
    install: "pipx install hermes-agent",
    ..Description::new("hermes", "hermes")
};

impl Adapter for Hermes {
    fn description(&self) -> &'static Description {
        &HERMES
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let (home, env) = ctx.config_home_env("HERMES_HOME");
        let home = home.or_else(|| home_dir(ctx.var("HERMES_HOME"), ctx.var("HOME").map(Path::new)));
        let session = resumed(ctx.args).map(|id| KnownSession {
            transcript: home.map(|h| store::source_key(&h.join(store::DATABASE), &id)),
            id,
        });
        Ok(Launch {
            argv: ctx.argv(self.program()),
            env,
            session,
            ..Launch::default()
        })
    }

    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        self.home(q).into_iter().collect()
    }

    /// The newest session of the run's cwd whose first message came since
    /// the run started.
    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let db = self.home(q)?.join(store::DATABASE);
        let since = q.started.duration_since(UNIX_EPOCH).ok()?.as_secs_f64();
        let id = store::newest_session(&db, &q.cwd, since)?;
        Some(KnownSession {
            transcript: Some(store::source_key(&db, &id)),
            id,
        })
    }
}

impl Hermes {
    /// Its home for a run: the profile's config home, else `~/.hermes` (a
    /// `HERMES_HOME` of the user's is not followed: the query carries no
    /// environment).
    fn home(&self, q: &SessionQuery) -> Option<PathBuf> {
        q.config_home.clone().or_else(|| home_dir(None, q.home.as_deref()))
    }
}

/// `HERMES_HOME`, else `~/.hermes`.
fn home_dir(set: Option<&str>, home: Option<&Path>) -> Option<PathBuf> {
    match set {
        Some(dir) => Some(PathBuf::from(dir)),
        None => Some(home?.join(".hermes")),
    }
}

/// The session `--resume ID` (`-r ID`, `--resume=ID`) names.
fn resumed(args: &[String]) -> Option<String> {
    if let Some(id) = args.iter().find_map(|a| a.strip_prefix("--resume=")) {
        return Some(id.to_string());
    }
    let at = args.iter().position(|a| a == "--resume" || a == "-r")?;
    args.get(at + 1).filter(|id| !id.starts_with('-')).cloned()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn launch(args: &[&str], env: &[(&str, &str)]) -> Launch {
        crate::harness::adapter::launched(&Hermes, args, env).unwrap()
    }

    #[test]
    fn a_resumed_session_is_known_by_its_row_in_the_home_s_database() {
        let id = "20261206_071149_9cd878";
        let args = Hermes.resume_args(id).unwrap();
        assert_eq!(args, ["--resume", id]);
        let l = launch(&["--resume", id], &[("HOME", "/h")]);
        assert_eq!(l.argv, ["hermes", "--resume", id]);
        let s = l.session.unwrap();
        assert_eq!(s.id, id);
        let key = format!("/h/.hermes/state.db#{id}");
        assert_eq!(s.transcript, Some(PathBuf::from(key)));
        let moved = launch(&["-r", id], &[("HOME", "/h"), ("HERMES_HOME", "/elsewhere")]);
        let key = format!("/elsewhere/state.db#{id}");
        assert_eq!(moved.session.unwrap().transcript, Some(PathBuf::from(key)));
        assert_eq!(launch(&[], &[("HOME", "/h")]).session, None);
        assert!(Hermes.fork_args(id).is_err());
        assert_eq!(Hermes.prompt_args("go on"), None);
        assert_eq!(Hermes.answer_keys(true), b"1");
        assert_eq!(Hermes.answer_keys(false), b"\x03");
    }

    #[test]
    fn a_new_session_is_the_newest_row_of_the_cwd_since_the_run_started() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".hermes");
        let db = crate::transcript::hermes::tests::database(&dir);
        let started = SystemTime::now() - Duration::from_secs(1);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
        let q = SessionQuery {
            cwd: "/w".into(),
            started,
            config_home: None,
            home: Some(home.path().into()),
        };
        assert_eq!(Hermes.find_session(&q), None);
        crate::transcript::hermes::tests::conversation(&db, Path::new("/w"), now);
        let found = Hermes.find_session(&q).unwrap();
        let id = crate::transcript::hermes::tests::SESSION;
        assert_eq!(found.id, id);
        assert_eq!(found.transcript, Some(store::source_key(&db, id)));
        assert_eq!(Hermes.session_roots(&q), [dir]);
        let later = SessionQuery {
            started: SystemTime::now() + Duration::from_secs(60),
            ..q
        };
        assert_eq!(Hermes.find_session(&later), None);
    }
}
