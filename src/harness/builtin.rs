//! The harnesses the engine knows without an agent installed: `shell` (the
//! user's `$SHELL`), `cmd` (any command after `--`) and the built-in `demo`
//! agent. They have no sessions, hooks or versions of their own.

use super::adapter::{Adapter, Launch, LaunchContext};
use super::description::Description;

pub struct Shell;
pub struct Cmd;
pub struct Demo;

fn plain(argv: Vec<String>) -> Launch {
    Launch {
        argv,
        ..Launch::default()
    }
}

const SHELL: Description = Description::builtin("shell", "/bin/sh");

impl Adapter for Shell {
    fn description(&self) -> &'static Description {
        &SHELL
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

const CMD: Description = Description::builtin("cmd", "sh");

impl Adapter for Cmd {
    fn description(&self) -> &'static Description {
        &CMD
    }

    fn launch(&self, ctx: &LaunchContext) -> Result<Launch, String> {
        if ctx.args.is_empty() {
            return Err("bad option: the cmd harness needs a command after --".into());
        }
        Ok(plain(ctx.args.to_vec()))
    }
}

/// A prompt of many lines (mail, a team's first prompt) is one paste.
const DEMO: Description = Description {
    pastes_prompts: true,
    ..Description::builtin("demo", "agents")
};

impl Adapter for Demo {
    fn description(&self) -> &'static Description {
        &DEMO
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
