//! aider. It has no session ids and no resume: its transcript is the
//! project's `.aider.chat.history.md` (aider 0.86: at the root of the git
//! repository it runs in, else in its cwd; `--chat-history-file` moves it),
//! appended to by every chat there; status comes from the screen and
//! output. A run's session is the first chat in that file that started
//! after the run did (`transcript::aider::session_id`); the index reads the
//! file from that chat's heading on.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::adapter::{Adapter, KnownSession, SessionQuery};
use super::description::Description;
use crate::transcript::aider as history;

pub struct Aider;

/// aider's chat log, at the repository root (or the cwd outside one).
pub const HISTORY_FILE: &str = ".aider.chat.history.md";

/// No resume, no fork: a chat goes on only in its history file.
const AIDER: Description = Description {
    env: &super::credentials::AIDER,
    install: "pipx install aider-chat",
    ..Description::new("aider", "aider")
};

impl Adapter for Aider {
    fn description(&self) -> &'static Description {
        &AIDER
    }

    /// The first chat written to the history file at or after the run's
    /// start. Headings are local time to the second, so the start is too.
    fn find_session(&self, q: &SessionQuery) -> Option<KnownSession> {
        let file = history_file(&q.cwd);
        let bytes = std::fs::read(&file).ok()?;
        let since = local_ms(q.started)?;
        let since = since - since.rem_euclid(1000);
        let chat = history::chats(&bytes)
            .into_iter()
            .find(|c| c.started_ms().is_some_and(|t| t >= since))?;
        Some(KnownSession {
            id: history::session_id(&file, &chat),
            transcript: Some(file),
        })
    }
}

/// Where aider keeps the history of a chat run in `cwd`: the root of its
/// git repository (a `.git` folder, or file in a worktree), else `cwd`.
pub fn history_file(cwd: &Path) -> PathBuf {
    let root = cwd.ancestors().find(|d| d.join(".git").exists()).unwrap_or(cwd);
    root.join(HISTORY_FILE)
}

/// `at` as this machine's local wall clock, in ms since the epoch of that
/// clock (the form `Chat::started_ms` reads headings in); `None` before 1970.
fn local_ms(at: SystemTime) -> Option<i64> {
    let since_epoch = at.duration_since(UNIX_EPOCH).ok()?;
    let secs = nix::libc::time_t::try_from(since_epoch.as_secs()).ok()?;
    let mut tm = std::mem::MaybeUninit::<nix::libc::tm>::zeroed();
    // SAFETY: localtime_r writes only into `tm`, which it is given whole,
    // and reads only `secs`; a null return leaves `tm` zeroed (offset 0).
    let offset = unsafe {
        nix::libc::localtime_r(&secs, tm.as_mut_ptr());
        tm.assume_init().tm_gmtoff
    };
    Some(since_epoch.as_millis() as i64 + offset * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::adapter::LaunchContext;

    #[test]
    fn aider_launches_with_its_model_and_cannot_resume() {
        let profile = super::super::Profile {
            model: Some("sonnet".into()),
            ..Default::default()
        };
        let launch = Aider
            .launch(&LaunchContext {
                args: &["--no-git".to_string()],
                env: &[],
                profile: Some(&profile),
                run_dir: Path::new("/r"),
                agents_bin: Path::new("/a"),
                cwd: Path::new("/w"),
            })
            .unwrap();
        assert_eq!(launch.argv, vec!["aider", "--model", "sonnet", "--no-git"]);
        assert!(Aider.resume_args("x").unwrap_err().contains("cannot resume"));
    }

    fn query(cwd: &Path, started: SystemTime) -> SessionQuery {
        SessionQuery {
            cwd: cwd.to_path_buf(),
            started,
            config_home: None,
            home: None,
        }
    }

    /// A heading for `at` as aider writes it (local time).
    fn heading(at: SystemTime) -> String {
        let ms = local_ms(at).unwrap();
        let t = humantime::format_rfc3339_seconds(UNIX_EPOCH + std::time::Duration::from_millis(ms as u64));
        format!(
            "# aider chat started at {}\n",
            t.to_string().replacen('T', " ", 1).trim_end_matches('Z')
        )
    }

    #[test]
    fn a_runs_session_is_the_first_chat_in_its_repositorys_history_since_it_started() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        let sub = repo.path().join("src");
        std::fs::create_dir(&sub).unwrap();
        let now = SystemTime::now();
        let hour = std::time::Duration::from_secs(3600);
        let file = repo.path().join(HISTORY_FILE);
        assert_eq!(history_file(&sub), file);
        assert!(Aider.find_session(&query(&sub, now)).is_none(), "no history yet");
        std::fs::write(&file, heading(now - hour) + "#### old  \n").unwrap();
        assert!(Aider.find_session(&query(&sub, now)).is_none(), "only an older chat");
        let ours = heading(now);
        std::fs::write(
            &file,
            heading(now - hour) + "#### old  \n" + &ours + "#### ours  \n" + &heading(now + hour),
        )
        .unwrap();
        let found = Aider.find_session(&query(&sub, now)).unwrap();
        assert_eq!(found.transcript.as_deref(), Some(file.as_path()));
        let chats = history::chats(&std::fs::read(&file).unwrap());
        assert_eq!(found.id, history::session_id(&file, &chats[1]));
    }

    #[test]
    fn outside_a_repository_the_history_is_in_the_cwd() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(history_file(dir.path()), dir.path().join(HISTORY_FILE));
    }
}
