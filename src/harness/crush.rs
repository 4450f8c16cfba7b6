//! Crush (npm `@charmland/crush`), from its source (the commit of
//! 2026-08-21 mirrored here), **not tried against a real Crush**: its npm
//! package downloads its binary from GitHub at install time, which this
//! machine cannot reach. What the source says: the TUI starts with
//! `crush [--yolo] [--data-dir DIR]`, continues a session with `--session
//! ID` (or `--continue`, the newest); it has no fork and no `--model` (the
//! model is chosen in its `crush.json`). Sessions live in the project's
//! SQLite database, `<project>/.crush/crush.db` (the closest `.crush` from
//! the cwd up to the git root, else the cwd's), whose top-level `sessions`
//! rows (title and task sessions name a parent) carry their start in
//! seconds. A profile's config home is `CRUSH_GLOBAL_CONFIG` (where its
//! `crush.json` is read). It has no hooks a run could set; status comes
//! from the screen (its `Permission Required` dialog, whose `a` allows
//! and `d` denies) and output.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery};
use super::description::{Description, Words};
use crate::transcript::crush as store;

pub struct Crush;

const CRUSH: Description = Description {
    config_home: Some("CRUSH_GLOBAL_CONFIG"),
    env: &super::credentials::CRUSH,
    resume: Words::Given(&["--session", "{}"]),
    // Its permission dialog: `a` allows, `d` denies.
    yes: b"a",
    no: b"d",
    install: "npm install -g @charmland/crush",
    ..Description::new("crush", "crush")
};

impl Adapter for Crush {
    fn description(&self) -> &'static Description {
        &CRUSH
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        if ctx.model().is_some() {
            return Err("crush takes no --model: choose the model in its crush.json".into());
        }
        let binary = ctx.binary(self.program());
        let mut argv = vec![binary];
        argv.extend(ctx.args.iter().cloned());
        let env = ctx
            .profile
            .and_then(|p| p.config_home_in(ctx.var("HOME")))
            .map(|dir| ("CRUSH_GLOBAL_CONFIG".to_string(), dir.to_string_lossy().into_owned()))
            .into_iter()
            .collect();
        Ok(Launch {
            argv,
            env,
            ..Launch::default()
        })
    }

    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let db = database(&q.cwd);
        let since = q.started.duration_since(UNIX_EPOCH).ok()?.as_secs() as i64;
        let conn = crate::transcript::opencode::open(&db).ok()?;
        let id: String = conn
            .query_row(
                "SELECT id FROM sessions WHERE parent_session_id IS NULL AND created_at >= ?1
                 ORDER BY created_at DESC, rowid DESC LIMIT 1",
                [since],
                |r| r.get(0),
            )
            .ok()?;
        Some(KnownSession {
            transcript: Some(store::source_key(&db, &id)),
            id,
        })
    }
}

/// The project database of `cwd`: the closest `.crush` folder from it up
/// to its git root (a folder holding `.git`), else `cwd/.crush`.
pub fn database(cwd: &Path) -> PathBuf {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if d.join(".crush").is_dir() {
            return d.join(".crush/crush.db");
        }
        if d.join(".git").exists() {
            break;
        }
        dir = d.parent();
    }
    cwd.join(".crush/crush.db")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn launch(args: &[&str], profile: Option<&super::super::Profile>) -> Result<Launch, String> {
        crate::harness::adapter::launched_with(&Crush, args, &[], profile)
    }

    #[test]
    fn launch_and_resume_take_crush_s_flags_and_a_model_is_refused() {
        assert_eq!(launch(&["--yolo"], None).unwrap().argv, ["crush", "--yolo"]);
        assert_eq!(Crush.resume_args("s1").unwrap(), ["--session", "s1"]);
        assert!(Crush.fork_args("s1").is_err());
        let model = super::super::Profile {
            model: Some("gpt".into()),
            ..Default::default()
        };
        assert!(launch(&[], Some(&model)).unwrap_err().contains("crush.json"));
        assert_eq!(Crush.answer_keys(true), b"a");
    }

    #[test]
    fn the_session_is_the_newest_top_level_one_of_the_project_database() {
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join(".git")).unwrap();
        let sub = project.path().join("src");
        std::fs::create_dir(&sub).unwrap();
        let db = crate::transcript::crush::tests::database(project.path());
        assert_eq!(database(&sub), db, "the closest .crush up to the git root");
        let started = SystemTime::now() - Duration::from_secs(2);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
        crate::transcript::crush::tests::conversation(&db, now);
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "INSERT INTO sessions (id, parent_session_id, title, updated_at, created_at)
             VALUES ('title-1', ?1, 't', ?2, ?2)",
            rusqlite::params![crate::transcript::crush::tests::SESSION, now + 1],
        )
        .unwrap();
        let query = SessionQuery {
            cwd: sub.clone(),
            started,
            config_home: None,
            home: None,
        };
        let found = Crush.find_session(&query).unwrap();
        assert_eq!(found.id, crate::transcript::crush::tests::SESSION);
        assert_eq!(
            found.transcript,
            Some(store::source_key(&db, crate::transcript::crush::tests::SESSION))
        );
        let later = SessionQuery {
            started: SystemTime::now() + Duration::from_secs(60),
            ..query
        };
        assert_eq!(Crush.find_session(&later), None);
    }
}
