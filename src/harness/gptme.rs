//! gptme (`gptme`, PyPI `gptme`, 0.35.1). It keeps each conversation in a
//! folder of its own, `<logs>/<name>/`, its messages in
//! `conversation.jsonl` (`transcript::gptme`), where `<logs>` is
//! `GPTME_LOGS_HOME`, else `<XDG_DATA_HOME, ~/.local/share>/gptme/logs`.
//! `--name NAME` names the conversation: a new one gets a name minted here
//! (a UUID), so its file is known at once, and the same words resume it
//! (gptme goes on with a named conversation that exists). A second gptme
//! on the same conversation is refused by gptme itself. It forks only from
//! inside (`/fork NAME`, which goes on in the copy), so no fork is offered.
//!
//! Its input is a line prompt (`User: `) that discards keys typed before it
//! is drawn (it flushes the terminal's input first): a prompt typed while a
//! command runs silently, the run reading as idle, would be lost. So a
//! prompt waits until `User: ` is at the cursor (its `[input]` rule
//! `waits`). A tool call asks `Execute shell? [Y/n/c/e/a/?]`,
//! a line answered with `y` or `n` and Enter. No hooks but a session's
//! start and end, so its status is the screen's.

use std::path::{Path, PathBuf};

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, new_uuid};
use super::description::{Description, Prompt, Words};

pub struct Gptme;

const GPTME: Description = Description {
    env: &super::credentials::GPTME,
    resume: Words::Given(&["--name", "{}"]),
    fork: Words::Refused(Some(
        "gptme forks a conversation only from inside it (/fork NAME), and goes on in the copy",
    )),
    // `gptme PROMPT`; a word starting with `-` is an option (and `-` alone
    // separates prompts).
    prompt: Prompt::Alone { unless: &['-'] },
    // Its answers are lines: the key, then Enter.
    yes: b"y\r",
    no: b"n\r",
    install: "pipx install gptme",
    ..Description::new("gptme", "gptme")
};

impl Adapter for Gptme {
    fn description(&self) -> &'static Description {
        &GPTME
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let mut argv = vec![ctx.binary(self.program())];
        argv.extend(ctx.model_args());
        let resumes = ctx.args.iter().any(|a| a == "-r" || a == "--resume");
        let id = match named(ctx.args) {
            Some(name) => Some(name),
            // `-r` goes on with gptme's own choice: not followed.
            None if resumes => None,
            None => {
                let id = new_uuid();
                argv.extend(["--name".into(), id.clone()]);
                Some(id)
            }
        };
        argv.extend(ctx.args.iter().cloned());
        let logs = logs_dir(ctx.var("GPTME_LOGS_HOME"), ctx.var("XDG_DATA_HOME"), ctx.var("HOME"));
        Ok(Launch {
            argv,
            session: id.map(|id| KnownSession {
                transcript: logs.map(|d| d.join(&id).join("conversation.jsonl")),
                id,
            }),
            ..Launch::default()
        })
    }
}

/// The conversation `--name NAME` (or `--name=NAME`) names.
fn named(args: &[String]) -> Option<String> {
    if let Some(name) = args.iter().find_map(|a| a.strip_prefix("--name=")) {
        return Some(name.to_string());
    }
    let at = args.iter().position(|a| a == "--name")?;
    args.get(at + 1).cloned()
}

/// gptme's folder of conversations.
pub fn logs_dir(logs_home: Option<&str>, data_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    if let Some(dir) = logs_home {
        return Some(PathBuf::from(dir));
    }
    let data = match data_home {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(home?).join(".local/share"),
    };
    Some(data.join("gptme/logs"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(args: &[&str], env: &[(&str, &str)]) -> Launch {
        crate::harness::adapter::launched(&Gptme, args, env).unwrap()
    }

    #[test]
    fn a_new_conversation_is_named_here_and_its_file_is_known() {
        let l = launch(&["-m", "local/x"], &[("HOME", "/h")]);
        assert_eq!(l.argv[..2], ["gptme", "--name"]);
        assert_eq!(l.argv[3..], ["-m", "local/x"]);
        let s = l.session.unwrap();
        assert_eq!(s.id, l.argv[2]);
        let file = format!("/h/.local/share/gptme/logs/{}/conversation.jsonl", s.id);
        assert_eq!(s.transcript, Some(PathBuf::from(file)));
        // Its data home, and a logs home of its own, as gptme reads them.
        let l = launch(&[], &[("HOME", "/h"), ("XDG_DATA_HOME", "/d")]);
        assert!(l.session.unwrap().transcript.unwrap().starts_with("/d/gptme/logs"));
        let l = launch(&[], &[("HOME", "/h"), ("GPTME_LOGS_HOME", "/l")]);
        assert!(l.session.unwrap().transcript.unwrap().starts_with("/l"));
    }

    #[test]
    fn resume_names_the_conversation_and_r_is_gptme_s_choice() {
        let args = Gptme.resume_args("c1").unwrap();
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let l = launch(&words, &[("HOME", "/h")]);
        assert_eq!(l.argv, ["gptme", "--name", "c1"]);
        assert_eq!(l.session.unwrap().id, "c1");
        assert_eq!(launch(&["--name=c2"], &[("HOME", "/h")]).session.unwrap().id, "c2");
        let l = launch(&["-r"], &[("HOME", "/h")]);
        assert_eq!((l.argv.len(), l.session), (2, None));
        assert!(Gptme.fork_args("c1").is_err());
        assert_eq!(Gptme.prompt_args("fix it"), Some(vec!["fix it".to_string()]));
        assert_eq!(Gptme.prompt_args("-"), None);
        assert_eq!(Gptme.answer_keys(true), b"y\r");
    }
}
