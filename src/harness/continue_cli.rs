//! Continue's CLI (`cn`, npm `@continuedev/cli`, 1.5.47). Its folder is
//! `CONTINUE_GLOBAL_DIR`, else `~/.continue`: its `config.yaml` (the models,
//! each with its own `apiBase` and key), `permissions.yaml`, and one file
//! per session, `sessions/<id>.json`, a whole JSON document rewritten at
//! each message (`transcript::continue_cli`). It needs no login: the models
//! of its config are all it talks to.
//!
//! cn mints a new session's id itself and writes its file at the first
//! prompt, so a new session is found then: the newest file begun since the
//! run started whose workspace is the run's cwd (two cn runs started in
//! one folder at once could take each other's). (Its
//! `CONTINUE_CLI_TEST_SESSION_ID` names a session for `cn -p` only; the
//! interactive cn does not read it.) `--resume` takes no id: it continues
//! the session whose file was written last. So `--resume ID` (what
//! `agents sessions resume` passes) is taken here: the id leaves the
//! command line and its file is touched just before spawn, making it the
//! last written; another cn of the same folder writing in that moment
//! would win. A plain `--resume` is not followed. `--fork ID` copies a
//! session into a new one, found as a new session is.
//!
//! No hooks: cn 1.5.47 reads Claude-style hook settings but never runs
//! them. Its status is the screen's: the permission box ("Would you like
//! to continue?", answered with `y` or `n`) and `esc to interrupt` while a
//! turn runs.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, created_since, files_since};
use super::description::{Description, Words};

pub struct Continue;

/// Its subcommands (`cn --help`); a first word among them is not a prompt.
const SUBCOMMANDS: &[&str] = &["ls", "checks", "review", "serve", "help"];

const CONTINUE: Description = Description {
    config_home: Some("CONTINUE_GLOBAL_DIR"),
    env: &super::credentials::CONTINUE,
    // `--resume` continues the session written last; the id after it is
    // taken by `launch` (see above).
    resume: Words::Given(&["--resume", "{}"]),
    fork: Words::Given(&["--fork", "{}"]),
    // Its input reads 50 characters or more arriving at once as a paste,
    // and drops an Enter within 200–300 ms of the paste's last chunk; text
    // and Enter in one write is a newline.
    enter_delay_ms: 500,
    // Its permission box takes `y` and `n` whichever row is selected.
    yes: b"y",
    no: b"n",
    install: "npm install -g @continuedev/cli",
    ..Description::new("continue", "cn")
};

impl Adapter for Continue {
    fn description(&self) -> &'static Description {
        &CONTINUE
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let (config_home, env) = ctx.config_home_env("CONTINUE_GLOBAL_DIR");
        let dir = sessions_dir(config_home.as_deref(), ctx.var("HOME").map(Path::new));
        let mut args = ctx.args.to_vec();
        let session = take_resumed(&mut args).map(|id| KnownSession {
            transcript: dir.map(|d| d.join(format!("{id}.json"))),
            id,
        });
        let mut argv = vec![ctx.binary(self.program())];
        argv.extend(args);
        Ok(Launch {
            argv,
            env,
            touch: session.iter().filter_map(|s| s.transcript.clone()).collect(),
            session,
            ..Launch::default()
        })
    }

    /// Its variables, and those its `config.yaml` takes secrets from.
    fn env_names(&self, ctx: &LaunchContext) -> Vec<String> {
        let mut names = self.harness_env().present(ctx.env);
        let dir = ctx
            .config_home("CONTINUE_GLOBAL_DIR")
            .or_else(|| ctx.var("HOME").map(|h| Path::new(h).join(".continue")));
        for key in dir
            .map(|d| super::credentials::continue_secret_names(&d))
            .unwrap_or_default()
        {
            if ctx.var(&key).is_some() && !names.contains(&key) {
                names.push(key);
            }
        }
        names.sort();
        names
    }

    /// `cn PROMPT`: starts with it, unless it reads as an option or a
    /// subcommand (then it is typed in).
    fn prompt_args(&self, prompt: &str) -> Option<Vec<String>> {
        let first = prompt.split_whitespace().next().unwrap_or("");
        (!prompt.starts_with('-') && !SUBCOMMANDS.contains(&first)).then(|| vec![prompt.to_string()])
    }

    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        sessions_dir(q.config_home.as_deref(), q.home.as_deref())
            .into_iter()
            .collect()
    }

    /// A new session, or a fork's: the newest file begun since the run
    /// started whose workspace is the run's cwd.
    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = sessions_dir(q.config_home.as_deref(), q.home.as_deref())?;
        // Its index, `sessions.json`, is not a session.
        created_since(files_since(&dir, q.started), q.started)
            .into_iter()
            .find_map(|path| {
                let stem = path.file_stem()?.to_str()?;
                if path.extension().is_none_or(|e| e != "json") || stem == "sessions" {
                    return None;
                }
                let doc: Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
                let workspace = doc["workspaceDirectory"].as_str()?;
                (Path::new(workspace) == q.cwd).then(|| KnownSession {
                    id: doc["sessionId"].as_str().unwrap_or(stem).to_string(),
                    transcript: Some(path.clone()),
                })
            })
    }
}

/// The folder of cn's sessions: `<config home>/sessions`, else
/// `~/.continue/sessions`.
pub fn sessions_dir(config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    let base = match config_home {
        Some(dir) => dir.to_path_buf(),
        None => home?.join(".continue"),
    };
    Some(base.join("sessions"))
}

/// The id after `--resume`, taken off the arguments (cn's `--resume`
/// takes none): a whole session id, not a prompt that follows it.
fn take_resumed(args: &mut Vec<String>) -> Option<String> {
    let whole = |id: &str| id.len() == 36 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    let at = args.iter().position(|a| a == "--resume")?;
    let id = args.get(at + 1).filter(|id| whole(id))?.clone();
    args.remove(at + 1);
    Some(id)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| s.to_string()).collect()
    }

    fn launch(args: &[String], env: &[(&str, &str)]) -> Launch {
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Continue
            .launch(&LaunchContext {
                args,
                env: &env,
                profile: None,
                run_dir: Path::new("/r"),
                agents_bin: Path::new("/a"),
                cwd: Path::new("/w"),
            })
            .unwrap()
    }

    #[test]
    fn a_new_session_is_found_later_in_its_config_home() {
        let l = launch(&words(&["--readonly"]), &[("HOME", "/h")]);
        assert_eq!(l.argv, ["cn", "--readonly"]);
        assert_eq!((l.session, l.env.len(), l.touch.len()), (None, 0, 0));
        let l = launch(&[], &[("HOME", "/h"), ("CONTINUE_GLOBAL_DIR", "/srv/cn")]);
        assert_eq!(l.env, [("CONTINUE_GLOBAL_DIR".to_string(), "/srv/cn".to_string())]);
        let q = SessionQuery {
            cwd: "/w".into(),
            started: SystemTime::now(),
            config_home: Some("/srv/cn".into()),
            home: Some("/h".into()),
        };
        assert_eq!(Continue.session_roots(&q), [PathBuf::from("/srv/cn/sessions")]);
    }

    #[test]
    fn resume_takes_its_id_off_the_command_line_and_touches_its_file() {
        let id = "27d493b1-9999-4711-838e-5fade3b5829b";
        let args = Continue.resume_args(id).unwrap();
        let l = launch(&args, &[("HOME", "/h")]);
        assert_eq!(l.argv, ["cn", "--resume"]);
        let file = PathBuf::from(format!("/h/.continue/sessions/{id}.json"));
        assert_eq!(l.touch, std::slice::from_ref(&file));
        assert_eq!(
            l.session,
            Some(KnownSession {
                id: id.into(),
                transcript: Some(file)
            })
        );
        // A plain `--resume`, and one followed by a prompt: cn's own choice.
        for args in [words(&["--resume"]), words(&["--resume", "go on"])] {
            let l = launch(&args, &[("HOME", "/h")]);
            assert_eq!(l.argv[1..], args[..]);
            assert_eq!(l.session, None);
        }
        let fork = Continue.fork_args(id).unwrap();
        assert_eq!(fork, ["--fork", id]);
        let l = launch(&fork, &[("HOME", "/h")]);
        assert_eq!((l.argv.len(), l.session), (3, None));
    }

    #[test]
    fn the_variables_its_config_takes_secrets_from_are_passed() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".continue");
        std::fs::create_dir_all(&dir).unwrap();
        let config = "models:\n  - name: a\n    apiKey: ${{ secrets.MOCK_KEY }}\n    apiBase: ${{secrets.BASE}}\n  - apiKey: ${{ inputs.X }}\n";
        std::fs::write(dir.join("config.yaml"), config).unwrap();
        let h = home.path().to_str().unwrap();
        let env: Vec<(String, String)> = [
            ("HOME", h),
            ("MOCK_KEY", "k"),
            ("CONTINUE_GLOBAL_DIR", ""),
            ("X", "x"),
            ("PATH", "/bin"),
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
            cwd: Path::new("/w"),
        };
        // BASE is not set; X is not a secret.
        assert_eq!(Continue.env_names(&ctx), ["MOCK_KEY"]);
    }

    #[test]
    fn a_prompt_is_given_unless_it_reads_as_an_option_or_a_subcommand() {
        assert_eq!(Continue.prompt_args("fix it"), Some(words(&["fix it"])));
        assert_eq!(Continue.prompt_args("--help"), None);
        assert_eq!(Continue.prompt_args("review my change"), None);
        assert_eq!(Continue.answer_keys(true), b"y");
        assert_eq!(Continue.answer_keys(false), b"n");
    }

    #[test]
    fn a_fork_is_the_newest_file_begun_since_the_run_of_its_workspace() {
        let home = tempfile::tempdir().unwrap();
        let dir = sessions_dir(None, Some(home.path())).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        let started = SystemTime::now() - Duration::from_secs(1);
        let doc =
            |id: &str, cwd: &str| serde_json::json!({ "sessionId": id, "workspaceDirectory": cwd, "history": [] });
        std::fs::write(dir.join("a.json"), doc("a", "/elsewhere").to_string()).unwrap();
        std::fs::write(dir.join("b.json"), doc("b", "/w").to_string()).unwrap();
        std::fs::write(dir.join("sessions.json"), "[]").unwrap();
        let query = |cwd: &str| SessionQuery {
            cwd: cwd.into(),
            started,
            config_home: None,
            home: Some(home.path().into()),
        };
        let found = Continue.find_session(&query("/w")).unwrap();
        assert_eq!((found.id.as_str(), found.transcript), ("b", Some(dir.join("b.json"))));
        assert_eq!(Continue.find_session(&query("/nowhere")), None);
    }
}
