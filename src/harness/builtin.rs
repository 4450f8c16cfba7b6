//! The harnesses the engine knows without an agent installed: `shell` (the
//! user's `$SHELL`), `cmd` (any command after `--`) and the built-in `demo`
//! agent. They have no sessions, hooks or versions of their own.

use super::adapter::{Adapter, Launch, LaunchContext};

pub struct Shell;
pub struct Cmd;
pub struct Demo;

fn plain(argv: Vec<String>) -> Launch {
    Launch {
        argv,
        ..Launch::default()
    }
}

impl Adapter for Shell {
    fn family(&self) -> &'static str {
        "shell"
    }

    fn program(&self) -> &'static str {
        "/bin/sh"
    }

    fn has_version(&self) -> bool {
        false
    }

    fn has_sessions(&self) -> bool {
        false
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let shell = ctx
            .profile
            .and_then(|p| p.binary.clone())
            .or_else(|| ctx.var("SHELL").map(str::to_string))
            .unwrap_or_else(|| self.program().into());
        let mut argv = vec![shell];
        argv.extend(ctx.args.iter().cloned());
        Ok(plain(argv))
    }
}

impl Adapter for Cmd {
    fn family(&self) -> &'static str {
        "cmd"
    }

    fn program(&self) -> &'static str {
        "sh"
    }

    fn has_version(&self) -> bool {
        false
    }

    fn has_sessions(&self) -> bool {
        false
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        if ctx.args.is_empty() {
            return Err("bad option: the cmd harness needs a command after --".into());
        }
        Ok(plain(ctx.args.to_vec()))
    }
}

impl Adapter for Demo {
    fn family(&self) -> &'static str {
        "demo"
    }

    fn program(&self) -> &'static str {
        "agents"
    }

    fn has_version(&self) -> bool {
        false
    }

    fn has_sessions(&self) -> bool {
        false
    }

    /// A prompt of many lines (mail, a team's first prompt) is one paste.
    fn pastes_prompts(&self) -> bool {
        true
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        let mut argv = vec![
            ctx.agents_bin.to_string_lossy().into_owned(),
            super::demo::SUBCOMMAND.into(),
        ];
        argv.extend(ctx.args.iter().cloned());
        Ok(plain(argv))
    }
}
