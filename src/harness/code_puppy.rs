//! Code Puppy (PyPI `code-puppy`, 0.0.946, `code-puppy`). Its folder is
//! `~/.code_puppy`: `puppy.cfg` (its puppy's and owner's names, its model,
//! `yolo_mode`…), `extra_models.json` (models of the user's own, any
//! OpenAI-compatible endpoint among them) and `autosaves/`, where each
//! session is `<name>.json`, one JSON document of its pydantic-ai
//! messages written again whole after each turn, beside `<name>_meta.json`
//! (`transcript::code_puppy`). Each of `XDG_CONFIG_HOME`, `XDG_DATA_HOME`,
//! `XDG_CACHE_HOME` and `XDG_STATE_HOME`, when set, moves one part of that
//! folder to `<dir>/code_puppy` (the sessions go with the cache): there is
//! no one home to move, and those variables would reach the commands it
//! runs too, so a profile gives it no config home. It needs no login of its
//! own: its models' keys are variables (or `puppy.cfg` keys).
//!
//! Its sessions are named `auto_session_<time>` unless `--resume NAME`
//! (`-r`) names one: a name with no file yet starts an empty session of
//! that name, saved under it from then on. So a run is given
//! `--resume <uuid>` minted here, and its transcript is known at launch;
//! the same words resume it. When the user's words choose the session
//! themselves (`--resume`, `--quick-resume`) they are followed; a one-shot
//! `-p` run is launched as given, its session the newest file written
//! since it started. It has no fork of a session: its `/fork` runs a
//! sub-agent beside the conversation.
//!
//! A prompt is typed at its `>>>` line, which stays drawn while a turn
//! runs (text sent then is queued for the next turn). It runs commands
//! without asking unless `yolo_mode` is off (`--yolo false`, or
//! `/set yolo_mode off`): then "Requesting permission to run:" asks with a
//! list whose first choice, "Approve", is selected (Enter allows; Esc
//! cancels, which rejects). No hooks: its status is the screen's.

use std::path::{Path, PathBuf};

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, files_since, new_uuid};
use super::description::{Description, Words};

pub struct CodePuppy;

const CODE_PUPPY: Description = Description {
    env: &super::credentials::CODE_PUPPY,
    resume: Words::Given(&["--resume", "{}"]),
    fork: Words::Refused(Some(
        "Code Puppy cannot start a session from a copy of another (its /fork runs a sub-agent beside the conversation)",
    )),
    // "Approve" is the choice selected when it asks; Esc cancels the
    // question, which rejects the command.
    yes: b"\r",
    no: b"\x1b",
    install: "pipx install code-puppy",
    ..Description::new("code-puppy", "code-puppy")
};

/// Its sessions' folder, under its cache folder.
const AUTOSAVES: &str = "autosaves";

impl Adapter for CodePuppy {
    fn description(&self) -> &'static Description {
        &CODE_PUPPY
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let dir = autosaves_dir(ctx.var("XDG_CACHE_HOME"), ctx.var("HOME"));
        let known = |id: String| KnownSession {
            transcript: dir.as_ref().map(|d| d.join(format!("{id}.json"))),
            id,
        };
        let mut argv = vec![ctx.binary(self.program())];
        argv.extend(ctx.model_args());
        let session = match resumed(ctx.args) {
            Some(id) => Some(known(id)),
            None if follows_its_own_choice(ctx.args) => None,
            None => {
                // Before the user's words, which may end with a prompt.
                let id = new_uuid();
                argv.extend(["--resume".into(), id.clone()]);
                Some(known(id))
            }
        };
        argv.extend(ctx.args.iter().cloned());
        Ok(Launch {
            argv,
            session,
            ..Launch::default()
        })
    }

    /// Its variables, and those its `extra_models.json` takes keys from.
    fn env_names(&self, ctx: &LaunchContext) -> Vec<String> {
        let mut names = self.harness_env().present(ctx.env);
        let data = folder(ctx.var("XDG_DATA_HOME"), ctx.var("HOME"));
        let file = data.map(|d| d.join("extra_models.json"));
        for key in file.iter().flat_map(|f| super::credentials::nanocoder_config_names(f)) {
            if ctx.var(&key).is_some() && !names.contains(&key) {
                names.push(key);
            }
        }
        names.sort();
        names
    }

    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        let home = q.home.as_deref().and_then(Path::to_str);
        autosaves_dir(None, home).into_iter().collect()
    }

    /// A session the launch did not name (`--quick-resume`, `-p`): the
    /// newest session file written since the run started (not a sidecar).
    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = self.session_roots(q).pop()?;
        files_since(&dir, q.started).into_iter().find_map(|path| {
            let id = path.file_stem()?.to_str()?.to_string();
            let session = path.extension()? == "json" && !id.ends_with("_meta");
            session.then(|| KnownSession {
                id,
                transcript: Some(path.clone()),
            })
        })
    }
}

/// The session `--resume NAME` (`-r NAME`, `--resume=NAME`) names: a name,
/// or a session file's path, whose name is its stem (it saves under that
/// name in its own folder, wherever the file was).
fn resumed(args: &[String]) -> Option<String> {
    let given = match args.iter().find_map(|a| a.strip_prefix("--resume=")) {
        Some(name) => name,
        None => {
            let at = args.iter().position(|a| a == "--resume" || a == "-r")?;
            args.get(at + 1).filter(|name| !name.starts_with('-'))?
        }
    };
    let name = Path::new(given).file_name()?.to_str()?;
    let stem = name
        .strip_suffix(".json")
        .or_else(|| name.strip_suffix(".pkl"))
        .unwrap_or(name);
    Some(stem.to_string())
}

/// Whether the user's words pick the session themselves: the newest of a
/// folder (`--quick-resume`, `-qr`), or none kept going (`-p`, one prompt
/// and out).
fn follows_its_own_choice(args: &[String]) -> bool {
    args.iter().any(|a| {
        matches!(a.as_str(), "-qr" | "--quick-resume" | "-p" | "--prompt")
            || a.starts_with("--quick-resume=")
            || a.starts_with("--prompt=")
    })
}

/// Its sessions' folder, in its cache folder.
fn autosaves_dir(cache_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    Some(folder(cache_home, home)?.join(AUTOSAVES))
}

/// One part of its folder: `<dir>/code_puppy` when the XDG variable of
/// that part names `dir`, else `~/.code_puppy`.
fn folder(xdg: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    match xdg {
        Some(dir) => Some(Path::new(dir).join("code_puppy")),
        None => Some(Path::new(home?).join(".code_puppy")),
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn launch(args: &[&str], env: &[(&str, &str)]) -> Launch {
        crate::harness::adapter::launched(&CodePuppy, args, env).unwrap()
    }

    #[test]
    fn a_run_names_its_session_and_its_file_is_known_at_launch() {
        let l = launch(&["--yolo", "false"], &[("HOME", "/h")]);
        let s = l.session.unwrap();
        assert_eq!(l.argv, ["code-puppy", "--resume", s.id.as_str(), "--yolo", "false"]);
        let file = format!("/h/.code_puppy/autosaves/{}.json", s.id);
        assert_eq!(s.transcript, Some(PathBuf::from(file)));
        // Its cache moved, as it reads it.
        let l = launch(&[], &[("HOME", "/h"), ("XDG_CACHE_HOME", "/c")]);
        let file = l.session.unwrap().transcript.unwrap();
        assert!(file.starts_with("/c/code_puppy/autosaves"), "{file:?}");
    }

    #[test]
    fn a_session_the_user_names_is_followed_and_a_quick_resume_is_found_later() {
        let id = "a5c0ffee-0000-4000-8000-000000000001";
        assert_eq!(CodePuppy.resume_args(id).unwrap(), ["--resume", id]);
        for args in [
            &["--resume", id][..],
            &["-r", id],
            &[&format!("--resume={id}")],
            &["-r", &format!("/elsewhere/{id}.json")],
        ] {
            let l = launch(args, &[("HOME", "/h")]);
            assert_eq!(l.argv[1..], *args);
            let s = l.session.unwrap();
            assert_eq!(s.id, id);
            let file = format!("/h/.code_puppy/autosaves/{id}.json");
            assert_eq!(s.transcript, Some(PathBuf::from(file)));
        }
        for args in [&["-qr"][..], &["--quick-resume", "/w"], &["-p", "fix it"]] {
            let l = launch(args, &[("HOME", "/h")]);
            assert_eq!(l.argv[1..], *args);
            assert_eq!(l.session, None);
        }
        let refused = CodePuppy.fork_args(id).unwrap_err();
        assert!(refused.contains("/fork runs a sub-agent"), "{refused}");
        assert_eq!(CodePuppy.prompt_args("fix it"), None);
        assert_eq!(CodePuppy.answer_keys(true), b"\r");
        assert_eq!(CodePuppy.answer_keys(false), b"\x1b");
    }

    #[test]
    fn the_variables_its_models_take_keys_from_are_passed() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".code_puppy");
        std::fs::create_dir_all(&dir).unwrap();
        let models =
            r#"{"mock":{"type":"custom_openai","custom_endpoint":{"url":"http://x/v1","api_key":"$MOCK_KEY"}}}"#;
        std::fs::write(dir.join("extra_models.json"), models).unwrap();
        let h = home.path().to_str().unwrap();
        let env: Vec<(String, String)> = [
            ("HOME", h),
            ("MOCK_KEY", "k"),
            ("OPENAI_API_KEY", "o"),
            ("CODE_PUPPY_LOCALE", "en-US"),
            ("SECRET_TOKEN", "s"),
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
        assert_eq!(
            CodePuppy.env_names(&ctx),
            ["CODE_PUPPY_LOCALE", "MOCK_KEY", "OPENAI_API_KEY"]
        );
    }

    #[test]
    fn a_session_not_named_is_the_newest_file_written_since_the_run() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".code_puppy/autosaves");
        std::fs::create_dir_all(&dir).unwrap();
        let started = SystemTime::now() - Duration::from_secs(60);
        let old = dir.join("auto_session_20261206_080000_000000_1.json");
        std::fs::write(&old, "{}").unwrap();
        let at = std::fs::File::options().write(true).open(&old).unwrap();
        at.set_modified(started - Duration::from_secs(3600)).unwrap();
        let query = SessionQuery {
            cwd: "/w".into(),
            started,
            config_home: None,
            home: Some(home.path().into()),
        };
        assert_eq!(CodePuppy.find_session(&query), None);
        std::fs::write(dir.join("auto_session_20261206_085116_965262_25529_meta.json"), "{}").unwrap();
        assert_eq!(CodePuppy.find_session(&query), None, "a sidecar is no session");
        std::fs::write(dir.join("auto_session_20261206_085116_965262_25529.json"), "{}").unwrap();
        let found = CodePuppy.find_session(&query).unwrap();
        assert_eq!(found.id, "auto_session_20261206_085116_965262_25529");
        assert_eq!(CodePuppy.session_roots(&query), [dir]);
    }
}
