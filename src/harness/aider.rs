//! aider. It has no session ids and no resume: its transcript is the
//! project's `.aider.chat.history.md` (aider 0.86: at the root of the git
//! repository it runs in, else in its cwd; `--chat-history-file` moves it),
//! appended to by every chat there; status comes from the screen and
//! output.

use super::adapter::Adapter;

pub struct Aider;

/// aider's chat log, at the repository root (or the cwd outside one).
pub const HISTORY_FILE: &str = ".aider.chat.history.md";

impl Adapter for Aider {
    fn family(&self) -> &'static str {
        "aider"
    }

    fn program(&self) -> &'static str {
        "aider"
    }

    /// Its chat history is per directory, not per conversation.
    fn has_sessions(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::adapter::LaunchContext;
    use std::path::Path;

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
}
