//! Grok CLI (`grok`, npm `@vibe-kit/grok-cli`, 0.0.34). It reaches any
//! OpenAI-compatible server through `GROK_BASE_URL` with `GROK_API_KEY`
//! (flags `-k`/`-u` would save them in `~/.grok/user-settings.json`), its
//! model `GROK_MODEL`, else the one `<cwd>/.grok/settings.json` names (it
//! writes that file into the project at every start). It says it is 1.0.1
//! (`--version`, fixed in its code) whatever its package's version.
//!
//! It keeps no sessions: the conversation lives in its process only, so
//! there is nothing to resume, fork or read; a run's record is its output.
//! No hooks: its status is the screen's. A tool call asks "Do you want to
//! proceed with this operation?" over numbered choices, chosen with the
//! arrows and Enter (digits and y/n do nothing): Enter takes the first,
//! Yes; Esc refuses. Its input takes text and an Enter that arrive together
//! as one paste and keeps the Enter in the text; and a prompt whose first
//! word is a shell command (`ls`, `cat`, `touch`, …) it runs as that
//! command, asking first, without its model.

use super::adapter::{Adapter, Launch, LaunchContext};
use super::description::{Description, Prompt, Words};

pub struct Grok;

const GROK: Description = Description {
    env: &super::credentials::GROK,
    sessions: false,
    resume: Words::Refused(Some(
        "grok keeps no sessions: its conversation lives in its process only",
    )),
    fork: Words::Refused(Some(
        "grok keeps no sessions: its conversation lives in its process only",
    )),
    // `grok PROMPT` opens its screen with the prompt sent.
    prompt: Prompt::Alone { unless: &['-'] },
    enter_delay_ms: 200,
    // Enter takes the selected choice, the first (Yes) as drawn.
    yes: b"\r",
    no: b"\x1b",
    install: "npm install -g @vibe-kit/grok-cli",
    ..Description::new("grok", "grok")
};

impl Adapter for Grok {
    fn description(&self) -> &'static Description {
        &GROK
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        Ok(Launch {
            argv: ctx.argv(self.program()),
            ..Launch::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn a_run_is_grok_with_the_user_s_words_and_nothing_to_resume() {
        let args = vec!["-d".to_string(), "/w".to_string()];
        let env = [("HOME".to_string(), "/h".to_string())];
        let l = Grok
            .launch(&LaunchContext {
                args: &args,
                env: &env,
                profile: None,
                run_dir: Path::new("/r"),
                agents_bin: Path::new("/a"),
                cwd: Path::new("/w"),
            })
            .unwrap();
        assert_eq!(l.argv, ["grok", "-d", "/w"]);
        assert_eq!(l.session, None);
        assert!(!Grok.has_sessions());
        assert!(Grok.resume_args("x").unwrap_err().contains("no sessions"));
        assert_eq!(Grok.prompt_args("fix it"), Some(vec!["fix it".to_string()]));
        assert_eq!(
            (Grok.answer_keys(true), Grok.answer_keys(false)),
            (b"\r".to_vec(), b"\x1b".to_vec())
        );
    }
}
