//! The MCP tools' arguments: their JSON schemas come from these structs
//! and their doc comments.

use rmcp::schemars;
use serde::Deserialize;

/// Describes the `run` argument every run tool takes.
pub const RUN_REF: &str = "The run: its full id, a unique id prefix, or a name it has or had.";

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunsListArgs {
    /// Only runs in this state: `live` (pending, starting or running),
    /// `ended`, or one exact state: pending, starting, running, succeeded,
    /// failed, cancelled, timed_out, blocked, interrupted, lost.
    pub state: Option<String>,
    /// Only runs on this host (`local`, or a name from `agents hosts`).
    pub host: Option<String>,
    /// At most this many runs, newest first (default 50, at most 1000).
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRefArgs {
    #[schemars(description = RUN_REF)]
    pub run: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionRefArgs {
    /// The session: its full id or a unique id prefix.
    pub session: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunStartArgs {
    /// shell, cmd, demo, claude, codex, gemini, aider, opencode, kilo,
    /// crush, qwen, pi, copilot, droid, auggie, continue, gptme, cline, grok,
    /// nanocoder, letta, mini, interpreter, hermes, code-puppy, or a family
    /// or profile from config.toml.
    pub harness: String,
    /// Arguments for the harness. For `cmd`, the command and its arguments
    /// (`["sh", "-c", "make test"]`).
    #[serde(default)]
    pub args: Vec<String>,
    /// Working directory (default: this server's). On a remote host, a path
    /// there (default: the remote home).
    pub cwd: Option<String>,
    /// Run on this host (`agents hosts`); default here.
    pub host: Option<String>,
    /// A name to refer to the run by (default: from the prompt).
    pub name: Option<String>,
    /// The model, passed as the harness's `--model` (claude, codex, gemini,
    /// aider, opencode and kilo: `PROVIDER/MODEL`, qwen, pi, copilot).
    pub model: Option<String>,
    /// A first prompt, typed in once the agent is idle.
    pub prompt: Option<String>,
    /// The run that owns this one (default: $AGENTS_RUN_ID of this server,
    /// when an agent run started it).
    pub parent: Option<String>,
    /// Survive the parent's cancellation.
    #[serde(default)]
    pub detached: bool,
    /// End the run (timed_out) after this many seconds.
    pub timeout_secs: Option<u64>,
    /// Give the run its own git worktree and branch agents/<name>.
    #[serde(default)]
    pub worktree: bool,
    /// Names of environment variables of this server to pass to the harness.
    #[serde(default)]
    pub env: Vec<String>,
    /// Your id for this start (letters and digits, at most 64): a retry with
    /// the same id returns the run the first attempt created.
    pub launch_id: Option<String>,
    /// Run it in a bubblewrap box: "on" (the file system read-only but
    /// for its work tree, the home and agents state hidden, network on) or
    /// "offline" (no network either).
    pub sandbox: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunSendArgs {
    #[schemars(description = RUN_REF)]
    pub run: String,
    /// Text typed into the run, then Enter; queued while the agent is busy.
    pub text: String,
    /// Your id for this prompt: resending the same id never delivers twice.
    pub prompt_id: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailSendArgs {
    /// The run to write to: its id, an id prefix, or its name.
    pub to: String,
    /// The message; it reaches the agent as a prompt marked as mail.
    pub body: String,
    /// Your id for the message: sending the same id again never delivers twice.
    pub id: Option<String>,
    /// The id of the message this one answers.
    pub in_reply_to: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailReadArgs {
    /// A message's id, to read that one; without it, the newest messages
    /// to or from `run`.
    pub id: Option<String>,
    #[schemars(description = RUN_REF)]
    pub run: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunAnswerArgs {
    #[schemars(description = RUN_REF)]
    pub run: String,
    /// `yes` picks the first choice, `no` dismisses, anything else is typed
    /// followed by Enter. Refused when no question is on the screen.
    pub answer: String,
    /// Your id for this answer: a retry with the same id is applied once.
    pub answer_id: Option<String>,
    /// The permission request answered (`ask-…`, from a team member's
    /// approval mail): refused once its question is gone.
    pub request: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRenameArgs {
    #[schemars(description = RUN_REF)]
    pub run: String,
    /// The new name: up to 64 letters, digits, '-', '_' or '.'; refused
    /// when another live run wears it.
    pub name: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunPromptsArgs {
    #[schemars(description = RUN_REF)]
    pub run: String,
    /// `list` (the default): the prompts not typed in yet, each with why it
    /// waits; `edit` rewrites one (`prompt`, `text`); `drop` drops one;
    /// `send` types one in now, past a held draft and the agent's turn.
    #[serde(default)]
    pub action: Option<String>,
    /// The waiting prompt's id (from `list`).
    pub prompt: Option<String>,
    /// Its new text (`edit`).
    pub text: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCancelArgs {
    #[schemars(description = RUN_REF)]
    pub run: String,
    /// SIGKILL at once instead of SIGINT → SIGTERM → SIGKILL.
    #[serde(default)]
    pub force: bool,
    /// Return once the cancel is asked, without waiting for the run to end.
    #[serde(default)]
    pub no_wait: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunWaitArgs {
    #[schemars(description = RUN_REF)]
    pub run: String,
    /// Give up after this many seconds (default 30, at most 600) and answer
    /// with the run as it is.
    pub timeout_secs: Option<u64>,
    /// Wait for every child of the run instead (those it starts meanwhile
    /// too) and answer each child's record.
    #[serde(default)]
    pub children: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunLogsArgs {
    #[schemars(description = RUN_REF)]
    pub run: String,
    /// The last this many lines of the run's history and screen (default
    /// 100, at most 5000).
    pub lines: Option<usize>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptReadArgs {
    /// A run (id, prefix or name) or a transcript session id (or prefix).
    pub id: String,
    /// Only messages after this sequence number (the `last_seq` of the
    /// previous page).
    pub after_seq: Option<i64>,
    /// Page size (default 200, at most 1000).
    pub limit: Option<usize>,
    /// With `after_seq`: when nothing newer exists yet, wait up to this many
    /// milliseconds (at most 30000) for the transcript to grow.
    pub wait_ms: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptsSearchArgs {
    /// Words that must all appear (or an FTS5 query with `raw`).
    pub query: String,
    /// Only in this run's or session's transcript.
    pub within: Option<String>,
    /// At most this many hits (default 50, at most 500).
    pub limit: Option<usize>,
    /// Pass `query` to FTS5 as is (AND, OR, NEAR, "phrase", prefix*).
    #[serde(default)]
    pub raw: bool,
}

/// Which runs `runs_list` keeps.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamStartArgs {
    /// A team of config.toml (`[teams.NAME]`), or the path of a team file.
    pub team: String,
    /// The task, told to the leader after its own prompt.
    pub prompt: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamShowArgs {
    /// The team: its name, id or id prefix.
    pub team: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MailWaitArgs {
    /// Whose mail: the run this server runs in (its AGENTS_RUN_ID) unless
    /// given. The run's id, an id prefix, or its name.
    pub run: Option<String>,
    /// Give up after this many seconds (default 30, at most 600) and
    /// answer no messages.
    pub timeout_secs: Option<u64>,
}

#[cfg(test)]
mod tests {
    /// The tool that starts a run names every family built in: an agent
    /// reads it to learn what it may start.
    #[test]
    fn the_harness_argument_names_every_family() {
        let schema = rmcp::schemars::schema_for!(super::RunStartArgs);
        let said = schema.as_value()["properties"]["harness"]["description"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let words: Vec<&str> = said.split([',', ' ', '\n']).collect();
        for family in crate::harness::KNOWN {
            assert!(words.contains(family), "run_start does not name {family}: {said}");
        }
    }
}
