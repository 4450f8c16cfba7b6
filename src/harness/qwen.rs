//! Qwen Code (a fork of Gemini CLI). It takes Claude's session options: a
//! new session gets an id minted before spawn (`--session-id`), so its chat
//! file is known at once: `<QWEN_HOME, else ~/.qwen>/projects/<cwd, each
//! character not a letter or digit a dash>/chats/<id>.jsonl` (0.24.4).
//! `--resume ID` continues a session in its own file; `--resume ID
//! --fork-session` copies it into a new file under a new id (it refuses a
//! `--session-id` beside it), which `find_session` finds as the newest chat
//! of the cwd. Its hooks are configured only in settings files (no per-run
//! file on its command line), so status comes from the screen and output.

use std::path::{Path, PathBuf};

use super::adapter::{
    Adapter, KnownSession, Launch, LaunchContext, SessionQuery, created_since, files_since, new_uuid,
};
use super::claude::{SessionArgs, encode_cwd};
use super::description::{Description, Prompt, Words};

pub struct Qwen;

const QWEN: Description = Description {
    config_home: Some("QWEN_HOME"),
    env: &super::credentials::QWEN,
    resume: Words::Given(&["--resume", "{}"]),
    fork: Words::Given(&["--resume", "{}", "--fork-session"]),
    // `-i` (`--prompt-interactive`): runs the prompt, then stays
    // interactive.
    prompt: Prompt::Given(&["-i", "{}"]),
    // Gemini CLI's fast-return window, inherited: an Enter within ~30 ms
    // of typed text is a newline.
    enter_delay_ms: 100,
    install: "npm install -g @qwen-code/qwen-code",
    ..Description::new("qwen", "qwen")
};

impl Adapter for Qwen {
    fn description(&self) -> &'static Description {
        &QWEN
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let binary = ctx.binary(self.program());
        let mut argv = vec![binary];
        let given = SessionArgs::parse(ctx.args);
        let session_id = match (&given.session_id, given.resumes, given.forks) {
            (Some(id), _, _) => Some(id.clone()),
            (None, true, false) => given.resumed.clone(),
            // A fork's new id is Qwen's own: found once its file appears.
            (None, true, true) => None,
            (None, false, _) => {
                let id = new_uuid();
                argv.extend(["--session-id".into(), id.clone()]);
                Some(id)
            }
        };
        argv.extend(ctx.model_args());
        argv.extend(ctx.args.iter().cloned());
        let (config_home, env) = ctx.config_home_env("QWEN_HOME");
        let chats = chats_dir(config_home.as_deref(), ctx.var("HOME").map(Path::new), ctx.cwd);
        Ok(Launch {
            argv,
            env,
            files: Vec::new(),
            session: session_id.map(|id| KnownSession {
                transcript: chats.map(|dir| dir.join(format!("{id}.jsonl"))),
                id,
            }),
            touch: Vec::new(),
        })
    }

    /// A fork's session: the newest chat of the cwd created since the run
    /// began (its copy, written at start). A `--continue` goes on in an
    /// older file, and is not linked to it.
    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = chats_dir(q.config_home.as_deref(), q.home.as_deref(), &q.cwd)?;
        let path = created_since(files_since(&dir, q.started), q.started)
            .into_iter()
            .find(|p| p.extension().is_some_and(|e| e == "jsonl"))?;
        Some(KnownSession {
            id: path.file_stem()?.to_string_lossy().into_owned(),
            transcript: Some(path),
        })
    }
}

/// `<config home>/projects/<encoded cwd>/chats`: Qwen encodes the folder as
/// Claude does (each UTF-16 unit not an ASCII letter or digit a dash).
pub fn chats_dir(config_home: Option<&Path>, home: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
    let base = match config_home {
        Some(dir) => dir.to_path_buf(),
        None => home?.join(".qwen"),
    };
    Some(base.join("projects").join(encode_cwd(cwd)).join("chats"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(args: &[&str], env: &[(&str, &str)], profile: Option<&super::super::Profile>) -> Launch {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Qwen.launch(&LaunchContext {
            args: &args,
            env: &env,
            profile,
            run_dir: Path::new("/r"),
            agents_bin: Path::new("/a"),
            cwd: Path::new("/home/u/my proj"),
        })
        .unwrap()
    }

    #[test]
    fn a_new_session_gets_a_minted_id_and_its_chat_file_is_known() {
        let l = launch(&["--approval-mode", "default"], &[("HOME", "/home/u")], None);
        assert_eq!(l.argv[..2], ["qwen", "--session-id"]);
        assert_eq!(l.argv[3..], ["--approval-mode", "default"]);
        let s = l.session.unwrap();
        assert_eq!(s.id, l.argv[2]);
        assert_eq!(
            s.transcript.unwrap(),
            PathBuf::from(format!("/home/u/.qwen/projects/-home-u-my-proj/chats/{}.jsonl", s.id))
        );
        assert!(l.env.is_empty());
    }

    #[test]
    fn resume_continues_its_session_a_fork_is_found_later_and_a_profile_isolates() {
        let args = Qwen.resume_args("s1").unwrap();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let l = launch(&args, &[("HOME", "/home/u")], None);
        assert_eq!(l.argv, ["qwen", "--resume", "s1"]);
        assert_eq!(l.session.unwrap().id, "s1");

        let fork = Qwen.fork_args("s1").unwrap();
        let fork: Vec<&str> = fork.iter().map(String::as_str).collect();
        let l = launch(&fork, &[("HOME", "/home/u")], None);
        assert_eq!(l.argv, ["qwen", "--resume", "s1", "--fork-session"]);
        assert_eq!(l.session, None);

        let profile = super::super::Profile {
            config_home: Some("/srv/qwen".into()),
            model: Some("qwen3-coder".into()),
            ..Default::default()
        };
        let l = launch(&[], &[("HOME", "/home/u")], Some(&profile));
        assert_eq!(l.argv[3..], ["--model", "qwen3-coder"]);
        assert_eq!(l.env, [("QWEN_HOME".to_string(), "/srv/qwen".to_string())]);
        assert!(
            l.session
                .unwrap()
                .transcript
                .unwrap()
                .starts_with("/srv/qwen/projects/-home-u-my-proj/chats")
        );
        assert_eq!(Qwen.prompt_args("go").unwrap(), ["-i", "go"]);
    }

    #[test]
    fn the_newest_chat_of_the_cwd_is_a_fork_s_session() {
        let home = tempfile::tempdir().unwrap();
        let dir = chats_dir(None, Some(home.path()), Path::new("/w")).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("54eccd0e.runtime.json"), "{}").unwrap();
        std::fs::write(dir.join("54eccd0e.jsonl"), "{}\n").unwrap();
        let found = Qwen
            .find_session(&SessionQuery {
                cwd: PathBuf::from("/w"),
                started: std::time::SystemTime::now() - std::time::Duration::from_secs(2),
                config_home: None,
                home: Some(home.path().to_path_buf()),
            })
            .unwrap();
        assert_eq!(found.id, "54eccd0e");
        assert_eq!(found.transcript.unwrap(), dir.join("54eccd0e.jsonl"));
    }
}
