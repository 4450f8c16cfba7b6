//! Gemini CLI. No per-run hooks yet (status comes from the screen and
//! output); the session is the newest chat file of the run's project:
//! `~/.gemini/tmp/<sha256 of cwd>/chats/session-*.json`, whose `sessionId`
//! names it.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::adapter::{Adapter, KnownSession, SessionQuery, files_since};

pub struct Gemini;

impl Adapter for Gemini {
    fn family(&self) -> &'static str {
        "gemini"
    }

    fn program(&self) -> &'static str {
        "gemini"
    }

    fn resume_args(&self, session: &str) -> Result<Vec<String>, String> {
        Ok(vec!["--resume".into(), session.into()])
    }

    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let dir = chats_dir(q.home.as_deref()?, &q.cwd);
        files_since(&dir, q.started)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .find_map(|path| {
                Some(KnownSession {
                    id: session_id(&path)?,
                    transcript: Some(path),
                })
            })
    }
}

/// `~/.gemini/tmp/<sha256 hex of the cwd>/chats`.
pub fn chats_dir(home: &Path, cwd: &Path) -> PathBuf {
    let hash = Sha256::digest(cwd.to_string_lossy().as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    home.join(".gemini/tmp").join(hex).join("chats")
}

/// The `sessionId` near the top of a chat file (read bounded: a chat file
/// holds the whole conversation).
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
    }

    #[test]
    fn the_newest_chat_of_the_project_is_the_session() {
        let home = tempfile::tempdir().unwrap();
        let started = std::time::SystemTime::now() - std::time::Duration::from_secs(2);
        let dir = chats_dir(home.path(), Path::new("/w"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("session-2026-01-01T00-00-3b44.json"),
            r#"{ "sessionId": "3b44bc68-aaaa", "projectHash": "x", "messages": [] }"#,
        )
        .unwrap();
        let found = Gemini
            .find_session(&SessionQuery {
                cwd: PathBuf::from("/w"),
                started,
                config_home: None,
                home: Some(home.path().to_path_buf()),
            })
            .unwrap();
        assert_eq!(found.id, "3b44bc68-aaaa");
    }
}
