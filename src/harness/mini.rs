//! mini-swe-agent (PyPI `mini-swe-agent`, 2.4.6, `mini`). Its folder is
//! `MSWEA_GLOBAL_CONFIG_DIR`, else `~/.config/mini-swe-agent`: a `.env` of
//! its settings (the model, keys, `MSWEA_CONFIGURED`, read into its
//! environment), the history of what was typed at it, and by default the
//! last run's trajectory. It reaches its model through LiteLLM (`-m
//! openai/NAME` with `OPENAI_BASE_URL`, any provider's keys).
//!
//! A run is one task, then more typed at its "Type new task" line; it keeps
//! no sessions to resume. Its record is a trajectory, one JSON document
//! rewritten after each step (`transcript::mini`), which `-o FILE` names.
//! Each run gets one of its own, `<folder>/agents/<id>.traj.json` (its
//! default file would be written over by the next run), unless the user
//! names one: so its transcript is known at once. Its id is no session to
//! resume: resume and fork are refused.
//!
//! `-t TASK` starts it on a task (without one it asks in a box that Esc
//! then Enter sends). In its default mode it asks before each command,
//! the one that ends the task too: "Execute N action(s)? Enter to confirm,
//! type comment to reject", answered with Enter, or refused with words
//! for the model. No hooks: its status is the screen's.

use std::path::{Path, PathBuf};

use super::adapter::{Adapter, KnownSession, Launch, LaunchContext, new_uuid};
use super::description::{Description, Prompt, Words};

pub struct Mini;

const MINI: Description = Description {
    config_home: Some("MSWEA_GLOBAL_CONFIG_DIR"),
    env: &super::credentials::MINI,
    resume: Words::Refused(Some(
        "mini-swe-agent keeps no sessions to resume: a run is one task and those typed after it",
    )),
    fork: Words::Refused(Some("mini-swe-agent keeps no sessions to fork")),
    prompt: Prompt::Given(&["-t", "{}"]),
    // Without `-t` it asks for its task in a box Esc then Enter sends.
    prompt_at_start: true,
    // Its question takes an empty line for yes and any words for no, sent
    // to the model as why.
    yes: b"\r",
    no: b"no\r",
    install: "pipx install mini-swe-agent",
    ..Description::new("mini", "mini")
};

impl Adapter for Mini {
    fn description(&self) -> &'static Description {
        &MINI
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let (config_home, env) = ctx.config_home_env("MSWEA_GLOBAL_CONFIG_DIR");
        let mut argv = ctx.argv(self.program());
        let session = match named_output(ctx.args) {
            Some(file) => Some(KnownSession {
                id: new_uuid(),
                transcript: Some(ctx.cwd.join(file)),
            }),
            None => config_dir(config_home.as_deref(), ctx.var("HOME").map(Path::new)).map(|dir| {
                let id = new_uuid();
                let file = dir.join("agents").join(format!("{id}.traj.json"));
                argv.splice(1..1, ["-o".to_string(), file.to_string_lossy().into_owned()]);
                KnownSession {
                    id,
                    transcript: Some(file),
                }
            }),
        };
        Ok(Launch {
            argv,
            env,
            session,
            ..Launch::default()
        })
    }
}

/// Its folder: the config home, else `~/.config/mini-swe-agent`.
fn config_dir(config_home: Option<&Path>, home: Option<&Path>) -> Option<PathBuf> {
    match config_home {
        Some(dir) => Some(dir.to_path_buf()),
        None => Some(home?.join(".config/mini-swe-agent")),
    }
}

/// The trajectory file the user named: `-o FILE`, `--output FILE`.
fn named_output(args: &[String]) -> Option<&str> {
    if let Some(file) = args.iter().find_map(|a| a.strip_prefix("--output=")) {
        return Some(file);
    }
    let at = args.iter().position(|a| a == "-o" || a == "--output")?;
    args.get(at + 1).map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(args: &[&str], env: &[(&str, &str)]) -> Launch {
        crate::harness::adapter::launched(&Mini, args, env).unwrap()
    }

    #[test]
    fn each_run_writes_a_trajectory_of_its_own_unless_the_user_names_one() {
        let l = launch(&["-m", "openai/x"], &[("HOME", "/h")]);
        let s = l.session.unwrap();
        let file = format!("/h/.config/mini-swe-agent/agents/{}.traj.json", s.id);
        assert_eq!(l.argv, ["mini", "-o", file.as_str(), "-m", "openai/x"]);
        assert_eq!(s.transcript, Some(PathBuf::from(&file)));
        let other = launch(&[], &[("HOME", "/h")]).session.unwrap();
        assert_ne!(other.id, s.id);
        let l = launch(&[], &[("HOME", "/h"), ("MSWEA_GLOBAL_CONFIG_DIR", "/c")]);
        assert!(l.argv[2].starts_with("/c/agents/"), "{:?}", l.argv);
        let l = launch(&["-o", "out.json"], &[("HOME", "/h")]);
        assert_eq!(l.argv, ["mini", "-o", "out.json"]);
        assert_eq!(l.session.unwrap().transcript, Some(PathBuf::from("/w/out.json")));
        assert_eq!(Mini.prompt_args("fix it").unwrap(), ["-t", "fix it"]);
        assert!(Mini.resume_args("x").is_err() && Mini.fork_args("x").is_err());
    }
}
