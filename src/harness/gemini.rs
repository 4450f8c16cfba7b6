//! Gemini CLI. No per-run hooks yet (status comes from the screen and
//! output); the session is the newest chat file of the run's project,
//! whose first line's `sessionId` names it. As 0.61.0 lays them out:
//! `~/.gemini/projects.json` maps each project folder to a short name (its
//! base name, `-1`, `-2`… on a clash), `~/.gemini/tmp/<name>/.project_root`
//! says which folder owns a name, and the chats are
//! `~/.gemini/tmp/<name>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of the
//! id>.jsonl`. Older versions used the SHA-256 of the folder as the name
//! and wrote `.json` chats. `gemini --resume ID` continues a session in its
//! own file.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::adapter::{Adapter, KnownSession, SessionQuery, files_since};
use super::description::{Description, Prompt, Words};

pub struct Gemini;

const GEMINI: Description = Description {
    env: &super::credentials::GEMINI,
    resume: Words::Given(&["--resume", "{}"]),
    // `-i` (`--prompt-interactive`): runs the prompt, then stays
    // interactive.
    prompt: Prompt::Given(&["-i", "{}"]),
    // Its window is ~30 ms; leave room for a busy machine.
    enter_delay_ms: 100,
    install: "npm install -g @google/gemini-cli",
    ..Description::new("gemini", "gemini")
};

impl Adapter for Gemini {
    fn description(&self) -> &'static Description {
        &GEMINI
    }

    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = chats_dir(q.home.as_deref()?, &q.cwd);
        files_since(&dir, q.started)
            .into_iter()
            .filter(|p| is_chat(p))
            .find_map(|path| {
                Some(KnownSession {
                    id: session_id(&path)?,
                    transcript: Some(path),
                })
            })
    }
}

/// The chats of the project in `cwd`: `~/.gemini/tmp/<project>/chats`.
pub fn chats_dir(home: &Path, cwd: &Path) -> PathBuf {
    project_dir(&home.join(".gemini"), cwd).join("chats")
}

/// `tmp/<name>` of the project in `cwd`: the name `projects.json` gives the
/// folder if that name's `.project_root` agrees (Gemini checks the same),
/// else the name whose `.project_root` is the folder, else the SHA-256 of
/// the folder (versions before the registry).
fn project_dir(gemini: &Path, cwd: &Path) -> PathBuf {
    let tmp = gemini.join("tmp");
    let owns = |name: &str| {
        std::fs::read_to_string(tmp.join(name).join(".project_root")).is_ok_and(|root| Path::new(root.trim()) == cwd)
    };
    let registered = std::fs::read(gemini.join("projects.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .and_then(|r| {
            r["projects"][cwd.to_string_lossy().as_ref()]
                .as_str()
                .map(str::to_string)
        });
    if let Some(name) = registered.filter(|n| owns(n)) {
        return tmp.join(name);
    }
    let claimed = std::fs::read_dir(&tmp).into_iter().flatten().flatten().find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        owns(&name).then_some(name)
    });
    if let Some(name) = claimed {
        return tmp.join(name);
    }
    let hash = Sha256::digest(cwd.to_string_lossy().as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    tmp.join(hex)
}

/// A chat file of a main session (`session-*.jsonl`, older `.json`); a
/// subagent's chats live in a folder beside them.
fn is_chat(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    name.starts_with("session-") && (name.ends_with(".jsonl") || name.ends_with(".json"))
}

/// The `sessionId` near the top of a chat file: on its first line (or near
/// the top of an older whole document). Read bounded: a chat file holds the
/// whole conversation.
fn session_id(path: &Path) -> Option<String> {
    let mut head = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(64 * 1024)
        .read_to_string(&mut head)
        .ok()?;
    let after = &head[head.find("\"sessionId\"")? + "\"sessionId\"".len()..];
    let value = after.trim_start().strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let id = &value[..value.find('"')?];
    (!id.is_empty() && id.len() <= 128).then(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::adapter::LaunchContext;

    #[test]
    fn launch_and_resume_take_the_user_s_arguments() {
        let args = vec!["-y".to_string()];
        let launch = Gemini
            .launch(&LaunchContext {
                args: &args,
                env: &[],
                profile: None,
                run_dir: Path::new("/r"),
                agents_bin: Path::new("/a"),
                cwd: Path::new("/w"),
            })
            .unwrap();
        assert_eq!(launch.argv, vec!["gemini", "-y"]);
        assert_eq!(Gemini.resume_args("s1").unwrap(), vec!["--resume", "s1"]);
        assert!(Gemini.fork_args("s1").is_err());
        assert_eq!(
            Gemini.prompt_args("go on\nfrom here").unwrap(),
            vec!["-i", "go on\nfrom here"]
        );
    }

    fn query(home: &Path, cwd: &str) -> SessionQuery {
        SessionQuery {
            cwd: PathBuf::from(cwd),
            started: std::time::SystemTime::now() - std::time::Duration::from_secs(2),
            config_home: None,
            home: Some(home.to_path_buf()),
        }
    }

    /// Gemini 0.61.0's layout for a project `/home/user/narwhal`, with the
    /// recorded chat in it.
    #[test]
    fn the_session_is_the_newest_chat_of_the_project_s_registered_folder() {
        let home = tempfile::tempdir().unwrap();
        let gemini = home.path().join(".gemini");
        std::fs::create_dir_all(gemini.join("tmp/narwhal/chats")).unwrap();
        std::fs::write(
            gemini.join("projects.json"),
            r#"{"projects": {"/home/user/narwhal": "narwhal", "/srv/narwhal": "narwhal-1"}}"#,
        )
        .unwrap();
        std::fs::write(gemini.join("tmp/narwhal/.project_root"), "/home/user/narwhal").unwrap();
        let chat = gemini.join("tmp/narwhal/chats/session-2026-11-29T11-52-33573076.jsonl");
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/transcripts/gemini/session-2026-11-29T11-52-33573076.jsonl"),
            &chat,
        )
        .unwrap();
        // Logs and a subagent's folder sit beside the chats; neither is one.
        std::fs::write(gemini.join("tmp/narwhal/logs.json"), "[]").unwrap();
        std::fs::create_dir_all(gemini.join("tmp/narwhal/chats/33573076-291a-44d6-9e5b-e71638d1cb5b")).unwrap();

        let found = Gemini.find_session(&query(home.path(), "/home/user/narwhal")).unwrap();
        assert_eq!(found.id, "33573076-291a-44d6-9e5b-e71638d1cb5b");
        assert_eq!(found.transcript.as_deref(), Some(chat.as_path()));
        assert_eq!(
            Gemini.find_session(&query(home.path(), "/srv/narwhal")),
            None,
            "another project's folder is not this one's"
        );
    }

    #[test]
    fn a_project_folder_is_found_by_its_marker_or_by_its_hash() {
        let home = tempfile::tempdir().unwrap();
        let tmp = home.path().join(".gemini/tmp");
        std::fs::create_dir_all(tmp.join("w-2")).unwrap();
        std::fs::write(tmp.join("w-2/.project_root"), "/w\n").unwrap();
        assert_eq!(chats_dir(home.path(), Path::new("/w")), tmp.join("w-2/chats"));
        // Before the registry: the SHA-256 of the folder.
        assert_eq!(
            chats_dir(home.path(), Path::new("/v")),
            tmp.join("1f807e6b8d5495c0403a1c3b7d7331b178aabbaa07babd0f767fb240e00509f6")
                .join("chats")
        );
    }

    #[test]
    fn an_older_whole_document_chat_names_its_session_too() {
        let home = tempfile::tempdir().unwrap();
        let dir = chats_dir(home.path(), Path::new("/w"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("session-2026-01-01T00-00-3b44bc68.json"),
            r#"{ "sessionId": "3b44bc68-aaaa", "projectHash": "x", "messages": [] }"#,
        )
        .unwrap();
        assert_eq!(
            Gemini.find_session(&query(home.path(), "/w")).unwrap().id,
            "3b44bc68-aaaa"
        );
    }
}
