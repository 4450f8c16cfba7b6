//! Open Interpreter (`interpreter`, PyPI `open-interpreter`, 0.4.3). Its
//! config folder is `<XDG_CONFIG_HOME, ~/.config>/open-interpreter`:
//! `profiles/default.yaml` (its model, endpoint and key, applied at each
//! start unless `--profile` names another) and `conversations/`, where
//! each conversation is one JSON array of messages written again whole
//! after each completed turn (`transcript::interpreter`). It talks to its
//! model through LiteLLM, so it reads LiteLLM's provider variables
//! (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, …) as well as its own flags
//! (`-m`, `-ab`, `-ak`). It needs no login of its own; any error of its
//! model's API ends the process.
//!
//! Its conversation file is named after the first words of the first
//! message and the time of the first save, unless the profile in force
//! names one (`conversation_filename`; no flag does). So a run gets a
//! profile of its own in its folder, `--profile RUN/interpreter-profile.py`:
//! a script that applies the user's `default.yaml` as Open Interpreter
//! would, then names the file with a UUID minted here, so the transcript
//! is known at launch and nothing of the user's is written. When the
//! user's words choose a profile (`-p`, `--fast`, `--local`, …) or open
//! its picker (`--conversations`), or are a prompt on their own (its
//! `interpreter WORDS…` form, which takes no flags), the run is launched
//! as given and its conversation is the newest file written since it
//! started (in `~/.config`: a config home moved by `XDG_CONFIG_HOME` is
//! not looked in, as a run's record keeps no environment).
//!
//! It resumes nothing by id (only its picker loads an old conversation)
//! and has no fork. A first prompt is typed at its `> ` line (a readline
//! `input()`); "Would you like to run this code? (y/n)" asks before each
//! code block runs, a line answered with `y` or `n` and Enter. No hooks
//! and no status line: its status is the screen's.

use std::path::{Path, PathBuf};

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, files_since, new_uuid};
use super::description::{Description, Words};

pub struct Interpreter;

const INTERPRETER: Description = Description {
    env: &super::credentials::INTERPRETER,
    resume: Words::Refused(Some(
        "Open Interpreter loads an old conversation only from its own picker (interpreter --conversations)",
    )),
    fork: Words::Refused(Some("Open Interpreter cannot fork a conversation")),
    // Its answers are lines: the key, then Enter (`yes` declines).
    yes: b"y\r",
    no: b"n\r",
    install: "pipx install open-interpreter",
    ..Description::new("interpreter", "interpreter")
};

/// The run's own profile, in its folder.
const PROFILE_FILE: &str = "interpreter-profile.py";

/// The user's words that choose the profile in force: a profile named, a
/// shortcut to one of its bundled profiles, or the picker of old
/// conversations (which names the file itself).
const CHOOSES_PROFILE: &[&str] = &[
    "-p",
    "--profile",
    "-f",
    "--fast",
    "-l",
    "--local",
    "--codestral",
    "--assistant",
    "--llama3",
    "--groq",
    "-vi",
    "--vision",
    "-os",
    "--os",
    "--conversations",
];

impl Adapter for Interpreter {
    fn description(&self) -> &'static Description {
        &INTERPRETER
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let binary = ctx.binary(self.program());
        // `interpreter WORDS…` is a prompt, and a flag before it would end
        // that form: the words go alone.
        if ctx.args.first().is_some_and(|a| !a.starts_with('-')) {
            let argv = std::iter::once(binary).chain(ctx.args.iter().cloned()).collect();
            return Ok(Launch {
                argv,
                ..Launch::default()
            });
        }
        if chooses_profile(ctx.args) {
            return Ok(Launch {
                argv: ctx.argv(self.program()),
                ..Launch::default()
            });
        }
        let id = new_uuid();
        let profile = ctx.run_dir.join(PROFILE_FILE);
        let mut argv = vec![binary, "--profile".into(), profile.display().to_string()];
        argv.extend(ctx.model_args());
        argv.extend(ctx.args.iter().cloned());
        let dir = conversations_dir(ctx.var("XDG_CONFIG_HOME"), ctx.var("HOME"));
        Ok(Launch {
            argv,
            files: vec![(profile, profile_script(&id))],
            session: Some(KnownSession {
                transcript: dir.map(|d| d.join(format!("{id}.json"))),
                id,
            }),
            ..Launch::default()
        })
    }

    fn session_roots(&self, q: &SessionQuery) -> Vec<PathBuf> {
        let home = q.home.as_deref().and_then(Path::to_str);
        conversations_dir(None, home).into_iter().collect()
    }

    /// A conversation the launch did not name: the newest file written
    /// since the run started (a file is written after each turn, so one
    /// begun before and continued counts: the picker's).
    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = self.session_roots(q).pop()?;
        files_since(&dir, q.started).into_iter().find_map(|path| {
            let id = path.file_stem()?.to_str()?.to_string();
            (path.extension()? == "json").then(|| KnownSession {
                id,
                transcript: Some(path.clone()),
            })
        })
    }
}

/// Whether the user's words choose the profile in force (`-p NAME`,
/// `-pNAME`, `--profile=NAME` too).
fn chooses_profile(args: &[String]) -> bool {
    args.iter().any(|a| {
        CHOOSES_PROFILE.contains(&a.as_str())
            || a.starts_with("--profile=")
            || (a.starts_with("-p") && !a.starts_with("--"))
    })
}

/// The run's profile: Open Interpreter's own default one, applied as it
/// would apply it (creating it at a first start), then the run's file
/// name. Flags still go over both.
fn profile_script(id: &str) -> String {
    format!(
        "# Written by agents for one run: the user's default profile, then\n\
         # the name of this run's conversation file.\n\
         from interpreter.terminal_interface.profiles.profiles import profile\n\
         profile(interpreter, \"default.yaml\")\n\
         interpreter.conversation_filename = \"{id}.json\"\n"
    )
}

/// Its folder of conversations: `<XDG_CONFIG_HOME, ~/.config>/open-interpreter/conversations`.
fn conversations_dir(config_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let config = match config_home {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(home?).join(".config"),
    };
    Some(config.join("open-interpreter/conversations"))
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    fn launch(args: &[&str], env: &[(&str, &str)]) -> Launch {
        crate::harness::adapter::launched(&Interpreter, args, env).unwrap()
    }

    #[test]
    fn a_run_names_its_conversation_in_a_profile_of_its_own() {
        let l = launch(&["-m", "openai/x", "-y"], &[("HOME", "/h")]);
        assert_eq!(
            l.argv,
            [
                "interpreter",
                "--profile",
                "/r/interpreter-profile.py",
                "-m",
                "openai/x",
                "-y"
            ]
        );
        let s = l.session.unwrap();
        let file = format!("/h/.config/open-interpreter/conversations/{}.json", s.id);
        assert_eq!(s.transcript, Some(PathBuf::from(file)));
        let (path, script) = &l.files[0];
        assert_eq!(path, Path::new("/r/interpreter-profile.py"));
        assert!(script.contains("profile(interpreter, \"default.yaml\")"), "{script}");
        assert!(script.ends_with(&format!("interpreter.conversation_filename = \"{}.json\"\n", s.id)));
        // Its config home moved, as platformdirs reads it.
        let l = launch(&[], &[("HOME", "/h"), ("XDG_CONFIG_HOME", "/c")]);
        let file = l.session.unwrap().transcript.unwrap();
        assert!(file.starts_with("/c/open-interpreter/conversations"), "{file:?}");
    }

    #[test]
    fn a_profile_of_the_user_s_or_a_prompt_alone_is_launched_as_given() {
        for args in [
            &["-p", "work.yaml"][..],
            &["--profile=x.py"],
            &["-pwork"],
            &["--fast"],
            &["--conversations"],
        ] {
            let l = launch(args, &[("HOME", "/h")]);
            assert_eq!(l.argv[1..], *args);
            assert_eq!((l.session, l.files.len()), (None, 0));
        }
        let l = launch(&["list", "the", "files"], &[("HOME", "/h")]);
        assert_eq!(l.argv, ["interpreter", "list", "the", "files"]);
        assert!(Interpreter.resume_args("c1").is_err());
        assert!(Interpreter.fork_args("c1").is_err());
        assert_eq!(Interpreter.prompt_args("fix it"), None);
        assert_eq!(Interpreter.answer_keys(true), b"y\r");
        assert_eq!(Interpreter.answer_keys(false), b"n\r");
    }

    #[test]
    fn a_conversation_not_named_is_the_newest_written_since_the_run() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".config/open-interpreter/conversations");
        std::fs::create_dir_all(&dir).unwrap();
        let started = SystemTime::now() - Duration::from_secs(60);
        let old = dir.join("hello__December_06_2026_06-12-06.json");
        std::fs::write(&old, "[]").unwrap();
        let at = std::fs::File::options().write(true).open(&old).unwrap();
        at.set_modified(started - Duration::from_secs(3600)).unwrap();
        let query = SessionQuery {
            cwd: "/w".into(),
            started,
            config_home: None,
            home: Some(home.path().into()),
        };
        assert_eq!(Interpreter.find_session(&query), None);
        std::fs::write(dir.join("SHELL__December_06_2026_06-13-14.json"), "[]").unwrap();
        let found = Interpreter.find_session(&query).unwrap();
        assert_eq!(found.id, "SHELL__December_06_2026_06-13-14");
        assert_eq!(Interpreter.session_roots(&query), [dir]);
    }
}
