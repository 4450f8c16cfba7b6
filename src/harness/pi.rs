//! pi (`@mariozechner/pi-coding-agent`). Its agent folder is
//! `PI_CODING_AGENT_DIR`, else `~/.pi/agent`: custom providers in
//! `models.json` (an `apiKey` there may name the variable it is read from),
//! defaults in `settings.json`, sessions in
//! `sessions/--<cwd without its leading slash, / \ and : as ->--/<time>_<id>.jsonl`
//! (0.73.1). pi mints the session id itself and writes the file only once
//! the first reply arrives, so the session is found then: the newest file
//! of the cwd's folder, created since the run began, whose header names
//! this cwd (a resume's file is known at launch). `--session ID`
//! continues a session in its own file, `--fork ID` copies it into a new one
//! under a new id. pi asks no permission for its tools, and its hooks are
//! TypeScript extensions (not wired here), so status comes from the screen
//! and output. A session folder moved elsewhere (`PI_CODING_AGENT_SESSION_DIR`,
//! `--session-dir`) is not looked in.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, SessionQuery, created_since, files_since};
use super::description::{Description, Prompt, Words};

pub struct Pi;

/// The variable naming pi's agent folder.
const AGENT_DIR: &str = "PI_CODING_AGENT_DIR";

const PI: Description = Description {
    config_home: Some(AGENT_DIR),
    env: &super::credentials::PI,
    resume: Words::Given(&["--session", "{}"]),
    fork: Words::Given(&["--fork", "{}"]),
    // `pi PROMPT`: an interactive session that begins with it (a prompt
    // that reads as an option or an `@file` is typed in instead).
    prompt: Prompt::Alone { unless: &['-', '@'] },
    install: "npm install -g @mariozechner/pi-coding-agent",
    ..Description::new("pi", "pi")
};

impl Adapter for Pi {
    fn description(&self) -> &'static Description {
        &PI
    }

    /// Its own names, and each variable an `apiKey` or header of its
    /// `models.json` providers names.
    fn env_names(&self, ctx: &LaunchContext) -> Vec<String> {
        let mut names = self.harness_env().present(ctx.env);
        if let Some(dir) = agent_dir(ctx.config_home(AGENT_DIR).as_deref(), ctx.var("HOME").map(Path::new)) {
            for key in super::credentials::pi_provider_keys(&dir) {
                if ctx.var(&key).is_some() && !names.contains(&key) {
                    names.push(key);
                }
            }
        }
        names.sort();
        names
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let argv = ctx.argv(self.program());
        let (config_home, env) = ctx.config_home_env(AGENT_DIR);
        let dir = sessions_dir(config_home.as_deref(), ctx.var("HOME").map(Path::new), ctx.cwd);
        let session = resumed(ctx.args).and_then(|id| {
            let file = session_file(&dir?, &id)?;
            Some(KnownSession {
                id,
                transcript: Some(file),
            })
        });
        Ok(Launch {
            argv,
            env,
            files: Vec::new(),
            session,
            touch: Vec::new(),
        })
    }

    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = sessions_dir(q.config_home.as_deref(), q.home.as_deref(), &q.cwd)?;
        // A new session's file or a fork's copy, not the source it came
        // from (a resume's session is known at launch).
        created_since(files_since(&dir, q.started), q.started)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .find_map(|path| {
                let (id, cwd) = header(&path)?;
                (Path::new(&cwd) == q.cwd).then_some(KnownSession {
                    id,
                    transcript: Some(path),
                })
            })
    }
}

/// The session `--session ID` continues (a whole id, not a path).
fn resumed(args: &[String]) -> Option<String> {
    let i = args.iter().position(|a| a == "--session")?;
    args.get(i + 1)
        .filter(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .cloned()
}

/// The file of session `id` in `dir`: `<time>_<id>.jsonl`.
fn session_file(dir: &Path, id: &str) -> Option<PathBuf> {
    let suffix = format!("_{id}.jsonl");
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(&suffix)))
}

/// pi's agent folder: the config home, else `~/.pi/agent`.
fn agent_dir(config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    match config_home {
        Some(dir) => Some(dir.to_path_buf()),
        None => home.map(|h| h.join(".pi/agent")),
    }
}

/// The folder of the sessions begun in `cwd`.
pub fn sessions_dir(config_home: Option<&Path>, home: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
    Some(agent_dir(config_home, home)?.join("sessions").join(encode_cwd(cwd)))
}

/// pi's folder name for a cwd: `--`, the path without its leading slash
/// with each `/`, `\` and `:` a dash, `--`.
pub fn encode_cwd(cwd: &Path) -> String {
    let text = cwd.to_string_lossy();
    let bare = text.strip_prefix(['/', '\\']).unwrap_or(&text);
    format!("--{}--", bare.replace(['/', '\\', ':'], "-"))
}

/// The id and cwd of a session file's header (its first line).
fn header(path: &Path) -> Option<(String, String)> {
    let file = std::fs::File::open(path).ok()?;
    let mut line = String::new();
    std::io::BufReader::new(std::io::Read::take(file, 64 * 1024))
        .read_line(&mut line)
        .ok()?;
    let head: Value = serde_json::from_str(&line).ok()?;
    if head["type"] != "session" {
        return None;
    }
    Some((head["id"].as_str()?.to_string(), head["cwd"].as_str()?.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx<'a>(
        args: &'a [String],
        env: &'a [(String, String)],
        profile: Option<&'a super::super::Profile>,
    ) -> LaunchContext<'a> {
        LaunchContext {
            args,
            env,
            profile,
            run_dir: Path::new("/r"),
            agents_bin: Path::new("/a"),
            cwd: Path::new("/w"),
        }
    }

    #[test]
    fn launch_resume_and_fork_take_pi_s_own_options() {
        let args = vec!["--session".to_string(), "01a2".to_string()];
        let l = Pi.launch(&ctx(&args, &[], None)).unwrap();
        assert_eq!(l.argv, ["pi", "--session", "01a2"]);
        assert!(l.env.is_empty() && l.session.is_none());
        assert_eq!(Pi.resume_args("01a2").unwrap(), ["--session", "01a2"]);
        assert_eq!(Pi.fork_args("01a2").unwrap(), ["--fork", "01a2"]);
        assert_eq!(Pi.prompt_args("go on").unwrap(), ["go on"]);
        assert_eq!(Pi.prompt_args("@notes.md"), None);

        let profile = super::super::Profile {
            config_home: Some("/srv/pi".into()),
            model: Some("mock/m1".into()),
            ..Default::default()
        };
        let l = Pi.launch(&ctx(&[], &[], Some(&profile))).unwrap();
        assert_eq!(l.argv, ["pi", "--model", "mock/m1"]);
        assert_eq!(l.env, [(AGENT_DIR.to_string(), "/srv/pi".to_string())]);
        assert_eq!(encode_cwd(Path::new("/home/u/my proj:x")), "--home-u-my proj-x--");
    }

    #[test]
    fn a_provider_s_key_variable_passes_and_the_session_is_the_newest_of_the_cwd() {
        let home = tempfile::tempdir().unwrap();
        let agent = home.path().join(".pi/agent");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(
            agent.join("models.json"),
            r#"{"providers": {"mock": {"baseUrl": "http://x", "apiKey": "MOCK_API_KEY", "headers": {"X-Org": "MOCK_ORG"}},
                "local": {"apiKey": "ollama"}, "cmd": {"apiKey": "!pass show x"}}}"#,
        )
        .unwrap();
        let env: Vec<(String, String)> = [
            ("HOME", home.path().to_str().unwrap()),
            ("MOCK_API_KEY", "k"),
            ("OPENAI_API_KEY", "o"),
            ("UNRELATED", "u"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(Pi.env_names(&ctx(&[], &env, None)), ["MOCK_API_KEY", "OPENAI_API_KEY"]);

        let dir = sessions_dir(None, Some(home.path()), Path::new("/w")).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        let head =
            |id: &str, cwd: &str| format!("{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"cwd\":\"{cwd}\"}}\n");
        std::fs::write(dir.join("2026_other.jsonl"), head("other", "/elsewhere")).unwrap();
        std::fs::write(dir.join("2026_01a2.jsonl"), head("01a2", "/w")).unwrap();
        let found = Pi
            .find_session(&SessionQuery {
                cwd: PathBuf::from("/w"),
                started: std::time::SystemTime::now() - std::time::Duration::from_secs(2),
                config_home: None,
                home: Some(home.path().to_path_buf()),
            })
            .unwrap();
        assert_eq!(found.id, "01a2");
        assert_eq!(found.transcript.unwrap(), dir.join("2026_01a2.jsonl"));

        // A resume names its session, whose file is known at launch.
        let args = Pi.resume_args("01a2").unwrap();
        let known = Pi.launch(&ctx(&args, &env, None)).unwrap().session.unwrap();
        assert_eq!(
            (known.id.as_str(), known.transcript),
            ("01a2", Some(dir.join("2026_01a2.jsonl")))
        );
    }
}
