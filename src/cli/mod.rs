//! The command line: clap definitions, each verb a client of the dispatcher.

/// `println!` for human output: what is printed is made inert first
/// (`text::inert`), so no byte an agent, a transcript or a path carried can
/// drive the user's terminal. JSON output is printed exactly, with
/// `println!`.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::print::out(&format!("{}\n", $crate::text::inert(&format!($($arg)*))))
    };
}

/// `eprintln!` made inert, as `say!`.
macro_rules! say_err {
    ($($arg:tt)*) => {
        $crate::cli::print::err(&format!("{}\n", $crate::text::inert(&format!($($arg)*))))
    };
}

mod attach;
mod cancel;
mod commands;
mod doctor;
mod hook;
mod hosts;
mod lineage;
mod logs;
mod mail;
pub(crate) mod print;
mod prompts;
mod removal;
mod routines;
mod teams;
mod transcript;
mod web;
mod worktree;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::harness::demo::DemoArgs;

#[derive(Parser, Debug)]
#[command(name = "agents", version, about = "A terminal session manager for coding agents")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Start a run (attaches unless -d).
    Run(RunArgs),
    /// List runs.
    Ls(ListArgs),
    /// Runs: `agents runs list`.
    Runs {
        #[command(subcommand)]
        command: RunsCommand,
    },
    /// Which rule and which evidence decided a live run's status, and what
    /// would decide it next.
    Explain {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Show one run's record and events (--tree: its lineage tree).
    Show {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
        /// The lineage around the run: ancestors to the root, then child
        /// runs, subagents, resumes and forks.
        #[arg(long)]
        tree: bool,
    },
    /// Attach full-screen to a run; Ctrl-a d detaches.
    Attach {
        /// A run: its id, an id prefix, or its name.
        run: String,
    },
    /// Type TEXT and Enter into a run (queued while the agent is busy).
    Send {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// The prompt; newlines in it stay one message.
        text: String,
        /// Your own id for this prompt; resending the same id never delivers twice.
        #[arg(long)]
        id: Option<String>,
        /// What became of the prompt (or why it failed) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// A run's prompts not typed in yet: ls (with why each waits), edit,
    /// drop, send now.
    Prompts {
        #[command(subcommand)]
        command: prompts::PromptsCommand,
    },
    /// Harness conversations: list them, resume or fork one natively.
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Answer the question a run waits on: yes, no, or text.
    Answer {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// `yes` or `no` to a permission prompt, or TEXT typed as the answer.
        #[arg(value_name = "yes|no|TEXT")]
        answer: String,
        /// The permission request this answers (`ask-…`, from a team's
        /// approval mail): refused when its question is gone.
        #[arg(long, value_name = "ID")]
        request: Option<String>,
        /// What the supervisor saw answered (or why it failed) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Cancel runs and the children they own: named ones, or every live
    /// run --all or a filter picks (asks first on a terminal).
    Cancel(cancel::CancelArgs),
    /// Give a run a new name; its old name keeps finding it.
    Rename {
        /// A run: its id, an id prefix, or a name it has or had.
        run: String,
        /// The new name: up to 64 letters, digits, '-', '_' or '.'; not
        /// the name of another live run.
        name: String,
    },
    /// Remove ended runs with the children they own: records, events,
    /// output (asks first; --yes does not). A live run is refused.
    Rm(removal::RmArgs),
    /// What a --worktree run changed: its files, then the diff against
    /// where its branch began (uncommitted work included).
    Diff {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// Only the files and their line counts.
        #[arg(long)]
        stat: bool,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Merge a --worktree run's branch into the branch it started from,
    /// when that applies cleanly; a conflict changes nothing.
    Merge {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// One new commit with the run's changes instead of its commits.
        #[arg(long)]
        squash: bool,
    },
    /// Messages between runs (and from you): send, ls, read.
    Mail {
        #[command(subcommand)]
        command: mail::MailCommand,
    },
    /// Runs started on a schedule ([routines.NAME] in config.toml): ls,
    /// run, pause, resume.
    Routines {
        #[command(subcommand)]
        command: routines::RoutinesCommand,
    },
    /// Teams of runs, started together: start, ls, show, cancel.
    Team {
        #[command(subcommand)]
        command: teams::TeamCommand,
    },
    /// A --worktree run's worktree: `rm` removes it.
    Worktree {
        #[command(subcommand)]
        command: worktree::WorktreeCommand,
    },
    /// Print a run's output: its screen lines with scrollback, or raw bytes.
    Logs {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// Keep printing output as the run writes it, until it ends.
        #[arg(short, long)]
        follow: bool,
        /// The raw bytes (only to a file or pipe, never to a terminal).
        #[arg(long)]
        raw: bool,
    },
    /// Export a run as an asciicast v2 recording.
    Export {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// Write the recording here (asciinema plays it).
        #[arg(long, value_name = "FILE")]
        cast: PathBuf,
    },
    /// Wait for a run to end; exits 0 if it succeeded.
    Wait {
        /// A run: its id, an id prefix, or its name.
        run: String,
        /// The ended run's record as JSON.
        #[arg(long)]
        json: bool,
        /// Give up after SECS (exit 124), leaving the run as it is.
        #[arg(long, value_name = "SECS")]
        timeout: Option<u64>,
        /// Wait for every child of the run instead (those it starts while
        /// waiting too), then print each child's outcome.
        #[arg(long)]
        children: bool,
    },
    /// Start, stop or inspect the daemon.
    Daemon {
        #[command(subcommand)]
        command: Option<DaemonCommand>,
    },
    /// Check the state directory, socket, database, config and harness binaries.
    Doctor,
    /// Remote hosts reached over SSH: add, ls, rm, check, trust.
    Hosts {
        #[command(subcommand)]
        command: hosts::HostsCommand,
    },
    /// Bridge the protocol on stdin/stdout to this host's daemon (what a
    /// remote host runs over SSH).
    Serve(hosts::ServeArgs),
    /// Print a run's or a session's transcript: the harness's own
    /// conversation, normalized (--json: one message per line).
    Transcript {
        /// A run (id, prefix or name) or a session id (or prefix).
        id: String,
        /// Keep printing messages as the transcript grows.
        #[arg(short, long)]
        follow: bool,
        /// One JSON message per line.
        #[arg(long)]
        json: bool,
    },
    /// Search every indexed transcript (each word must appear).
    Search {
        /// Words that must all appear in a message.
        #[arg(required = true, num_args = 1..)]
        words: Vec<String>,
        /// Only in this run's or session's transcript.
        #[arg(long = "in", value_name = "RUN|SESSION")]
        within: Option<String>,
        /// The words are an FTS5 query (AND, OR, NEAR, "phrase", prefix*).
        #[arg(long)]
        raw: bool,
        /// One JSON hit per line.
        #[arg(long)]
        json: bool,
    },
    /// Serve the tool table over MCP on stdin/stdout (list, start, send,
    /// answer, wait, cancel runs; read their logs and transcripts).
    Mcp,
    /// Serve the web view until stopped: the runs from a browser or a
    /// phone. Prints the URL to open first, a fresh key in its fragment.
    /// `agents web tokens` keeps a key per device.
    Web(web::WebArgs),
    /// Open the TUI on a few demo agents (started for you, nothing to
    /// install): the quickest look at what agents does.
    Demo,
    /// The built-in demo agent (what `agents run demo` spawns).
    #[command(hide = true)]
    DemoAgent(DemoArgs),
    /// A run's supervisor (started by the daemon).
    #[command(hide = true)]
    Supervise,
    /// What harness hooks run: report EVENT (JSON on stdin, or PAYLOAD) to
    /// the daemon; `--suppress-output` first prints Droid's line that keeps
    /// the hook out of its chat. Always exits 0, within about a second and
    /// a half.
    #[command(hide = true)]
    Hook {
        /// EVENT [PAYLOAD]
        #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
        words: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum SessionsCommand {
    /// Sessions, newest first, with the run that last held each (child
    /// conversations — subagents', child runs' — with --all).
    List {
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
        /// Child conversations too.
        #[arg(long)]
        all: bool,
    },
    /// Remove a conversation's records and index from agents; its runs
    /// keep theirs. The harness's transcript files stay unless asked.
    Rm {
        /// A session id or id prefix.
        session: String,
        /// Delete the harness's own transcript files of it too (each named).
        #[arg(long)]
        purge_transcripts: bool,
        /// What was removed, as JSON.
        #[arg(long)]
        json: bool,
    },
    /// One session: its harness, cwd, transcript, totals, runs and subagents.
    Show {
        /// A session id or id prefix.
        session: String,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A new run that continues the session in its own harness (attaches unless -d).
    Resume {
        /// A session id or id prefix (`agents sessions list`).
        session: String,
        /// Don't attach; print the new run's id.
        #[arg(short = 'd', long = "background")]
        background: bool,
        /// While its last run still runs: start the resume once that run
        /// has ended (the new run waits as `pending`), not refuse it.
        #[arg(long)]
        queue: bool,
        /// Don't attach; print the new run's record as JSON.
        #[arg(long)]
        json: bool,
        /// More arguments for the harness, after its own resume flags
        /// (those the session's first run was given are not repeated).
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// A new run that starts from a copy of the session (attaches unless -d).
    Fork {
        /// A session id or id prefix (`agents sessions list`).
        session: String,
        /// Don't attach; print the new run's id.
        #[arg(short = 'd', long = "background")]
        background: bool,
        /// Don't attach; print the new run's record as JSON.
        #[arg(long)]
        json: bool,
        /// More arguments for the harness, after its own fork flags.
        #[arg(last = true)]
        args: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum RunsCommand {
    /// List runs.
    List(ListArgs),
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// Include runs that have ended.
    #[arg(short, long)]
    pub all: bool,
    /// Only runs in this state: live, ended, or one state (failed, …);
    /// ended runs are taken in without --all.
    #[arg(long, value_name = "STATE")]
    pub state: Option<String>,
    /// Only runs on this host (`local`: this machine).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// One JSON array of run records.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum DaemonCommand {
    /// Start the daemon in the background (if none is running).
    Start,
    /// Stop the daemon; runs keep going under their supervisors.
    Stop,
    /// Is the daemon running, and with what.
    Status {
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run the daemon in the foreground.
    Run {
        /// Print `ready` on stdout once the socket accepts connections.
        #[arg(long, hide = true)]
        ready: bool,
    },
}

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// shell, cmd, demo, claude, codex, gemini, aider, opencode, kilo,
    /// crush, qwen, pi, copilot, droid, auggie, continue, gptme, cline, grok,
    /// nanocoder, letta, mini, interpreter, hermes, code-puppy, a
    /// [harnesses.NAME] or a [profiles.NAME] from config.toml.
    #[arg(default_value = "shell")]
    pub harness: String,
    /// A name to call the run by (default: the harness and a number; an
    /// agent's run is renamed after its first prompt).
    #[arg(long)]
    pub name: Option<String>,
    /// Where the harness starts (default: here).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// The run that owns this one (default: $AGENTS_RUN_ID when started from a run).
    #[arg(long)]
    pub parent: Option<String>,
    /// Survive the parent's cancellation.
    #[arg(long)]
    pub detached: bool,
    /// End the run (timed_out) after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
    /// PTY size while no client is attached, COLSxROWS (default 120x40).
    #[arg(long, value_name = "COLSxROWS")]
    pub size: Option<String>,
    /// Give the run its own git worktree and branch agents/<name>.
    #[arg(long)]
    pub worktree: bool,
    /// A first prompt, typed in once the agent is idle.
    #[arg(long)]
    pub prompt: Option<String>,
    /// The model, for a harness that takes one (claude, codex, gemini, …):
    /// its own --model, put before the arguments after --.
    #[arg(long)]
    pub model: Option<String>,
    /// Run it in a bubblewrap box: the file system read-only but for its
    /// cwd, your home and the agents state out of sight, the network on;
    /// `--sandbox=offline`: no network at all.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "on", value_name = "offline", value_parser = crate::values::sandbox::Sandbox::parse)]
    pub sandbox: Option<crate::values::sandbox::Sandbox>,
    /// Pass this environment variable (by name) to the harness. Repeatable.
    #[arg(long = "env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Don't attach; print the new run's id.
    #[arg(short = 'd', long = "background")]
    pub background: bool,
    /// Don't attach; print the new run's record as JSON (a blocked one
    /// too, exiting 1), or why it could not be asked.
    #[arg(long)]
    pub json: bool,
    /// Run on this host (`agents hosts`); --cwd is then a path there
    /// (default: the remote home).
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Arguments for the harness.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// Parses the command line and runs it; returns the process exit code.
pub fn main() -> i32 {
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let json = asks_json(&matches);
    let cli = <Cli as clap::FromArgMatches>::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match commands::dispatch(cli) {
        Ok(code) => code,
        // `agents logs | head`: the reader left; nothing to say to it.
        Err(e) if is_closed_pipe(&e) => print::CLOSED_PIPE,
        Err(e) => failed(&e, json),
    }
}

/// A command that failed: its one line on stderr, or with `--json` its
/// code and message as JSON on stdout; the exit status of its class.
/// A failure of the command itself (no code from the tool table: a file
/// it could not write) is `failed`, 1 — as is a run that did not succeed.
fn failed(e: &anyhow::Error, json: bool) -> i32 {
    let api = e.chain().find_map(|c| c.downcast_ref::<crate::api::ApiError>());
    let message = print::one_line(&format!("{e:#}"));
    match json {
        true => {
            let code = api.map_or("failed", |a| a.code.as_str());
            let said = serde_json::json!({ "error": { "code": code, "message": message } });
            print::out(&format!("{said}\n"));
        }
        false => say_err!("agents: {message}"),
    }
    api.map_or(1, |a| a.code.exit_status())
}

/// Whether the command line asked for JSON, at any level of verbs.
fn asks_json(matches: &clap::ArgMatches) -> bool {
    let here = matches.try_get_one::<bool>("json").ok().flatten() == Some(&true);
    here || matches.subcommand().is_some_and(|(_, sub)| asks_json(sub))
}

/// A command line that cannot be carried out as asked (`bad_request`).
pub(crate) fn refused(message: impl Into<String>) -> anyhow::Error {
    crate::api::ApiError::bad_request(message).into()
}

fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every verb and every argument a user can see says what it is for.
    fn unexplained(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        if cmd.is_hide_set() {
            return;
        }
        let here = format!("{path} {}", cmd.get_name()).trim().to_string();
        if cmd.get_about().is_none() && !path.is_empty() {
            out.push(here.clone());
        }
        for arg in cmd.get_arguments() {
            let builtin = matches!(arg.get_id().as_str(), "help" | "version");
            if !arg.is_hide_set() && !builtin && arg.get_help().is_none() {
                out.push(format!("{here} {}", arg.get_id()));
            }
        }
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            unexplained(sub, &here, out);
        }
    }

    /// `agents help run` names every family built in: a newcomer reads it
    /// to learn what runs.
    #[test]
    fn the_harness_argument_names_every_family() {
        let cli = super::Cli::command();
        let run = cli.find_subcommand("run").expect("run");
        let harness = run
            .get_arguments()
            .find(|a| a.get_id() == "harness")
            .expect("its harness");
        let help = harness.get_help().map(ToString::to_string).unwrap_or_default();
        let words: Vec<&str> = help.split([',', ' ', '\n']).collect();
        for family in crate::harness::KNOWN {
            assert!(words.contains(family), "help run does not name {family}: {help}");
        }
    }

    #[test]
    fn every_verb_option_and_argument_has_help() {
        let mut missing = Vec::new();
        unexplained(&super::Cli::command(), "", &mut missing);
        assert!(missing.is_empty(), "without help text: {missing:?}");
    }
}
