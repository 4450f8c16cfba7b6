//! opencode (npm `opencode-ai`). As 1.18.33 does it: the TUI starts with
//! `opencode [--model PROVIDER/MODEL] [--prompt TEXT]`, continues a session
//! with `--session ID` and forks one with `--session ID --fork` (a new
//! session holding a copy of the messages). Sessions live in one SQLite
//! database, `<data home>/opencode/opencode.db` (`OPENCODE_DB` names
//! another), whose `session` rows name their folder and start time: the
//! run's session is the newest top-level one of its cwd begun after it.
//! A profile's config home is opencode's `OPENCODE_CONFIG_DIR`, and its
//! sessions are kept there too (`OPENCODE_DB`), apart from the user's.
//! Its plugins could report status, but would need a JavaScript file of
//! ours loaded into it; status comes from the screen and output instead.
//!
//! Kilo Code's CLI (npm `@kilocode/cli`, binary `kilo`) is opencode under
//! other names, as 7.7.7 is: the same flags (`--model`, `--prompt`,
//! `--session ID [--fork]`), the same permission prompt and the same
//! tables, in `<data home>/kilo/kilo.db` (`KILO_DB`), its config home
//! `KILO_CONFIG_DIR`, its config files `kilo.json(c)` (it still reads
//! `opencode.json(c)`), its own variables `KILO_*`. One adapter serves
//! both, each with its [`Names`].

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery};
use super::credentials::HarnessEnv;
use super::description::{Description, Prompt, Words};
use crate::transcript::opencode as store;

/// What differs between opencode and its forks: names only.
pub struct Names {
    description: Description,
    /// The variable naming its database.
    db_var: &'static str,
    /// Its folder under the config and data homes.
    dir: &'static str,
    /// Its database's file name.
    db_file: &'static str,
    /// The config files it reads in each folder, and the project's folders.
    config_files: &'static [&'static str],
    project_dirs: &'static [&'static str],
}

/// An opencode-built family: its names, and what they all share.
const fn described(
    family: &'static str,
    install: &'static str,
    config_dir_var: &'static str,
    env: &'static HarnessEnv,
) -> Description {
    Description {
        install,
        config_home: Some(config_dir_var),
        env,
        resume: Words::Given(&["--session", "{}"]),
        fork: Words::Given(&["--session", "{}", "--fork"]),
        // `--prompt TEXT`: the TUI starts and sends it.
        prompt: Prompt::Given(&["--prompt", "{}"]),
        // opencode 1.18 takes an Enter that arrives with the typed text as
        // part of it (a `/exit` so typed stays in the composer, its command
        // list open); a tenth of a second later it submits.
        enter_delay_ms: 150,
        // Its permission prompt has its choices on one row, `Allow once`
        // selected: Enter takes it; Esc rejects.
        yes: b"\r",
        ..Description::new(family, family)
    }
}

/// An opencode-built harness.
pub struct Opencode(&'static Names);

pub static OPENCODE: Opencode = Opencode(&Names {
    description: described(
        "opencode",
        "npm install -g opencode-ai",
        "OPENCODE_CONFIG_DIR",
        &super::credentials::OPENCODE,
    ),
    db_var: "OPENCODE_DB",
    dir: "opencode",
    db_file: "opencode.db",
    config_files: &["opencode.json", "opencode.jsonc", "config.json"],
    project_dirs: &[".opencode"],
});

/// Kilo Code 7.7.7, as its binary names its files and variables.
pub static KILO: Opencode = Opencode(&Names {
    description: described(
        "kilo",
        "npm install -g @kilocode/cli",
        "KILO_CONFIG_DIR",
        &super::credentials::KILO,
    ),
    db_var: "KILO_DB",
    dir: "kilo",
    db_file: "kilo.db",
    config_files: &[
        "kilo.json",
        "kilo.jsonc",
        "opencode.json",
        "opencode.jsonc",
        "config.json",
    ],
    project_dirs: &[".kilo", ".kilocode", ".opencode"],
});

impl Adapter for Opencode {
    fn description(&self) -> &'static Description {
        &self.0.description
    }

    /// Its own names, and each `{env:NAME}` of the config files it reads:
    /// the global one, the config home's, the project's.
    fn env_names(&self, ctx: &LaunchContext) -> Vec<String> {
        let mut names = self.harness_env().present(ctx.env);
        let global = ctx
            .var("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| ctx.var("HOME").map(|h| Path::new(h).join(".config")))
            .map(|c| c.join(self.0.dir));
        let dirs: Vec<PathBuf> = global
            .into_iter()
            .chain(self.config_home_var().and_then(|var| ctx.config_home(var)))
            .chain([ctx.cwd.to_path_buf()])
            .chain(self.0.project_dirs.iter().map(|d| ctx.cwd.join(d)))
            .collect();
        for key in super::credentials::opencode_config_keys(&dirs, self.0.config_files) {
            if ctx.var(&key).is_some() && !names.contains(&key) {
                names.push(key);
            }
        }
        names.sort();
        names
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let argv = ctx.argv(self.program());
        let mut env = Vec::new();
        let dir = ctx.profile.and_then(|p| p.config_home_in(ctx.var("HOME")));
        if let (Some(var), Some(dir)) = (self.config_home_var(), dir) {
            env.push((var.to_string(), dir.to_string_lossy().into_owned()));
            env.push((
                self.0.db_var.to_string(),
                dir.join(self.0.db_file).to_string_lossy().into_owned(),
            ));
        }
        Ok(Launch {
            argv,
            env,
            ..Launch::default()
        })
    }

    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let db = self.database(q.config_home.as_deref(), q.home.as_deref())?;
        let id = newest_session(&db, &q.cwd, q.started)?;
        Some(KnownSession {
            transcript: Some(store::source_key(&db, &id)),
            id,
        })
    }
}

impl Opencode {
    /// Where the run's sessions are kept: the profile's config home when it
    /// holds the database (the launch put it there), else the default under
    /// HOME. A data home moved with `XDG_DATA_HOME` or `OPENCODE_DB` is not
    /// followed (the query carries no environment): such a run links no
    /// session unless a profile gives it a config home.
    pub fn database(&self, config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
        let file = self.0.db_file;
        if let Some(db) = config_home.map(|c| c.join(file)).filter(|d| d.is_file()) {
            return Some(db);
        }
        Some(home?.join(".local/share").join(self.0.dir).join(file))
    }
}

/// The newest top-level session of `cwd` created at or after `since`.
fn newest_session(db: &Path, cwd: &Path, since: std::time::SystemTime) -> Option<String> {
    let since_ms = since.duration_since(UNIX_EPOCH).ok()?.as_millis() as i64;
    let conn = store::open(db).ok()?;
    conn.query_row(
        "SELECT id FROM session WHERE directory = ?1 AND parent_id IS NULL AND time_created >= ?2
         ORDER BY time_created DESC LIMIT 1",
        rusqlite::params![cwd.to_string_lossy(), since_ms],
        |r| r.get(0),
    )
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn launch(args: &[&str]) -> Launch {
        crate::harness::adapter::launched(&OPENCODE, args, &[]).unwrap()
    }

    #[test]
    fn the_keys_its_config_substitutes_pass_with_its_own() {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join(".config/opencode");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("opencode.json"),
            r#"{"provider": {"mock": {"options": {"apiKey": "{env:MOCK_KEY}", "baseURL": "{env:NOT SET}"}}}}"#,
        )
        .unwrap();
        let env: Vec<(String, String)> = [
            ("HOME", home.path().to_str().unwrap()),
            ("MOCK_KEY", "k"),
            ("OPENAI_API_KEY", "o"),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let ctx = LaunchContext {
            args: &[],
            env: &env,
            profile: None,
            run_dir: Path::new("/r"),
            agents_bin: Path::new("/a"),
            cwd: home.path(),
        };
        assert_eq!(
            OPENCODE.env_names(&ctx),
            ["MOCK_KEY", "OPENAI_API_KEY", "OPENCODE_DISABLE_AUTOUPDATE"]
        );
    }

    #[test]
    fn launch_resume_and_fork_take_opencode_s_flags() {
        assert_eq!(launch(&["--agent", "plan"]).argv, ["opencode", "--agent", "plan"]);
        assert!(launch(&[]).env.is_empty(), "the user's own config home by default");
        assert_eq!(OPENCODE.resume_args("ses_1").unwrap(), ["--session", "ses_1"]);
        assert_eq!(OPENCODE.fork_args("ses_1").unwrap(), ["--session", "ses_1", "--fork"]);
        assert_eq!(OPENCODE.prompt_args("go").unwrap(), ["--prompt", "go"]);
    }

    /// The tables as opencode 1.18.33 made them, the columns read here.
    fn database_with(dir: &Path, sessions: &[(&str, &str, Option<&str>, i64)]) -> PathBuf {
        let db = dir.join("opencode.db");
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text,
                directory text NOT NULL, title text NOT NULL, version text NOT NULL,
                time_created integer NOT NULL, time_updated integer NOT NULL);",
        )
        .unwrap();
        for (id, cwd, parent, at) in sessions {
            conn.execute(
                "INSERT INTO session VALUES (?1, 'global', ?3, ?2, 't', '1.18.33', ?4, ?4)",
                rusqlite::params![id, cwd, parent, at],
            )
            .unwrap();
        }
        db
    }

    #[test]
    fn the_session_is_the_newest_top_level_one_of_the_cwd_begun_after_the_run() {
        let home = tempfile::tempdir().unwrap();
        let data = home.path().join(".local/share/opencode");
        std::fs::create_dir_all(&data).unwrap();
        // The run started before its session: however slow the machine.
        let started = SystemTime::now() - Duration::from_secs(2);
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
        let db = database_with(
            &data,
            &[
                ("ses_old", "/w", None, now - 60_000),
                ("ses_run", "/w", None, now),
                ("ses_sub", "/w", Some("ses_run"), now + 5),
                ("ses_elsewhere", "/v", None, now + 10),
            ],
        );
        let query = SessionQuery {
            cwd: "/w".into(),
            started,
            config_home: None,
            home: Some(home.path().to_path_buf()),
        };
        let found = OPENCODE.find_session(&query).unwrap();
        assert_eq!(found.id, "ses_run");
        assert_eq!(found.transcript, Some(store::source_key(&db, "ses_run")));
        let later = SessionQuery {
            started: SystemTime::now() + Duration::from_secs(60),
            ..query
        };
        assert_eq!(OPENCODE.find_session(&later), None);
    }
    #[test]
    fn kilo_is_opencode_under_its_own_names() {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join(".config/kilo");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("kilo.jsonc"),
            r#"{"provider": {"mock": {"options": {"apiKey": "{env:MOCK_KEY}"}}}}"#,
        )
        .unwrap();
        let env: Vec<(String, String)> = [
            ("HOME", home.path().to_str().unwrap()),
            ("MOCK_KEY", "k"),
            ("KILO_API_KEY", "g"),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let profile = crate::harness::Profile {
            config_home: Some(home.path().join("kilo-home").display().to_string()),
            ..crate::harness::Profile::default()
        };
        let args = vec!["--agent".to_string(), "plan".to_string()];
        let ctx = LaunchContext {
            args: &args,
            env: &env,
            profile: Some(&profile),
            run_dir: Path::new("/r"),
            agents_bin: Path::new("/a"),
            cwd: home.path(),
        };
        assert_eq!(KILO.family(), "kilo");
        assert_eq!(KILO.env_names(&ctx), ["KILO_API_KEY", "MOCK_KEY"]);
        let launch = KILO.launch(&ctx).unwrap();
        assert_eq!(launch.argv, ["kilo", "--agent", "plan"]);
        let dir = home.path().join("kilo-home");
        assert_eq!(
            launch.env,
            [
                ("KILO_CONFIG_DIR".to_string(), dir.display().to_string()),
                ("KILO_DB".to_string(), dir.join("kilo.db").display().to_string()),
            ]
        );
        assert_eq!(KILO.fork_args("ses_1").unwrap(), ["--session", "ses_1", "--fork"]);

        // Its sessions: the same table, in `<data home>/kilo/kilo.db`.
        let data = home.path().join(".local/share/kilo");
        std::fs::create_dir_all(&data).unwrap();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
        let made = database_with(&data, &[("ses_k", "/w", None, now)]);
        let db = data.join("kilo.db");
        std::fs::rename(&made, &db).unwrap();
        let query = SessionQuery {
            cwd: "/w".into(),
            started: SystemTime::now() - Duration::from_secs(2),
            config_home: None,
            home: Some(home.path().to_path_buf()),
        };
        let found = KILO.find_session(&query).unwrap();
        assert_eq!(found.id, "ses_k");
        assert_eq!(found.transcript, Some(store::source_key(&db, "ses_k")));
        assert_eq!(
            OPENCODE.find_session(&query),
            None,
            "opencode's own database is elsewhere"
        );
    }
}
