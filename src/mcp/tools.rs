//! The MCP tools: one per method of the tool table, with typed arguments
//! (their JSON schemas come from these structs and their doc comments).

use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ErrorData, tool, tool_router};
use serde_json::{Value, json};

use super::args::*;
use super::{AgentsMcp, error_with_code, respond, typed};
use crate::api::method::Method;
use crate::api::{
    AnswerParams, ApiError, CancelParams, ListParams, RunDetail, RunRecord, RunRef, RunSpec, RunState, RunsListed,
    SearchParams, SendParams, SessionRef, StartParams, TranscriptParams, WaitParams, method,
};
use crate::client::Client;

/// `runs_list` answers at most this many runs unless asked for more.
const DEFAULT_RUNS: usize = 50;
/// `run_logs` lines unless asked otherwise: a screenful or two, enough to
/// see what an agent is doing without flooding the caller's context.
const DEFAULT_LOG_LINES: usize = 100;
/// `run_logs` never renders more history than this.
const MAX_LOG_LINES: usize = 5000;
/// `run_wait`: MCP clients give up on a call after about a minute by
/// default, so wait less than that unless asked, and never over ten minutes.
const DEFAULT_WAIT_SECS: u64 = 30;
const MAX_WAIT_SECS: u64 = 600;
/// `run_cancel` waits for the end at most this long: a cancel escalates to
/// SIGKILL within the configured grace periods (seconds by default).
const CANCEL_WAIT: Duration = Duration::from_secs(60);

/// A reply as a tool's structured content.
fn to_json<T: serde::Serialize>(value: T) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(ApiError::internal)
}

#[tool_router(router = tool_router, vis = "pub(super)")]
impl AgentsMcp {
    async fn client(&self) -> Result<Client, ApiError> {
        Client::connect(&self.paths, false).await
    }

    #[tool(
        description = "List runs, newest first, with their state (pending, running, succeeded, \
        failed, cancelled, …) and activity (working, stalled, waiting_input, needs_approval, idle, unknown)."
    )]
    async fn runs_list(&self, Parameters(args): Parameters<RunsListArgs>) -> Result<CallToolResult, ErrorData> {
        let limit = args.limit.unwrap_or(DEFAULT_RUNS).clamp(1, ListParams::MAX_LIMIT);
        let asked = ListParams {
            all: true,
            limit: Some(limit),
            paged: true,
            state: args.state,
            host: args.host,
            ..Default::default()
        };
        respond(self.list(asked).await)
    }

    /// Pages through `runs.list` (each page fits one frame; the daemon
    /// keeps the runs asked for) until `limit` runs or the pages run out.
    async fn list(&self, mut asked: ListParams) -> Result<Value, ApiError> {
        let client = self.client().await?;
        let limit = asked.limit.unwrap_or(DEFAULT_RUNS);
        let mut found: Vec<RunRecord> = Vec::new();
        loop {
            let (runs, next) = match client.call::<method::RunsList>(asked.clone()).await? {
                RunsListed::Page(page) => (page.runs, page.next),
                RunsListed::All(runs) => (runs, None),
            };
            found.extend(runs.into_iter().map(|listed| listed.run));
            match next {
                Some(next) if found.len() < limit => asked.before = Some(next),
                _ => break,
            }
        }
        // Ids are ULIDs: the newest sort last.
        found.sort_by(|a, b| b.id.cmp(&a.id));
        found.truncate(limit);
        Ok(json!({ "runs": found }))
    }

    #[tool(
        description = "One run's record (state, exit code, reason, harness, session, …) and \
        its events."
    )]
    async fn run_show(&self, Parameters(args): Parameters<RunRefArgs>) -> Result<CallToolResult, ErrorData> {
        respond(self.show(&args.run).await.and_then(to_json))
    }

    async fn show(&self, run: &str) -> Result<RunDetail, ApiError> {
        let client = self.client().await?;
        client.call::<method::RunsShow>(RunRef { run: run.into() }).await
    }

    #[tool(description = "Start a run in the background and answer its record. A run blocked \
        before spawn (missing binary, bad cwd, unknown host) is an error result with code \
        `blocked` and the reason.")]
    async fn run_start(&self, Parameters(args): Parameters<RunStartArgs>) -> Result<CallToolResult, ErrorData> {
        let params = match self.start_params(args) {
            Ok(p) => p,
            Err(e) => return respond(Err(e)),
        };
        let started: Result<RunRecord, ApiError> = async {
            let client = self.client().await?;
            client.call::<method::RunsStart>(params).await
        }
        .await;
        match started {
            Ok(record) if record.state == RunState::Blocked => {
                let message = format!(
                    "run {} ({}) blocked: {}",
                    record.id,
                    record.name,
                    record.reason.as_deref().unwrap_or("no reason recorded")
                );
                Ok(error_with_code("blocked", &message, json!({ "run": record })))
            }
            other => respond(other.and_then(to_json)),
        }
    }

    /// The same intent `agents run -d` sends: paths resolved here, this
    /// server's environment (so `AGENTS_RUN_ID` makes the new run a child).
    fn start_params(&self, args: RunStartArgs) -> Result<StartParams, ApiError> {
        let remote = args.host.clone().filter(|h| h != "local");
        let sandbox = match args.sandbox.as_deref() {
            Some(mode) => Some(crate::values::sandbox::Sandbox::parse(mode).map_err(ApiError::bad_request)?),
            None => None,
        };
        let cwd = match (&remote, args.cwd) {
            // A path on the host, sent as given (docs/design.md §4: explicit mapping).
            (Some(_), cwd) => cwd.unwrap_or_default(),
            (None, Some(dir)) => std::path::absolute(&dir)
                .map_err(|e| ApiError::bad_request(format!("cwd '{dir}': {e}")))?
                .to_string_lossy()
                .into_owned(),
            (None, None) => {
                let cwd = std::env::current_dir()
                    .map_err(|e| ApiError::internal(format!("reading the current directory: {e}")))?;
                crate::text::path_text(&cwd).map_err(ApiError::bad_request)?.to_string()
            }
        };
        Ok(StartParams {
            spec: RunSpec {
                harness: args.harness,
                args: args.args,
                model: args.model,
                name: args.name,
                cwd,
                detached: args.detached,
                timeout_secs: args.timeout_secs,
                worktree: args.worktree,
                prompt: args.prompt,
                pass_env: args.env,
                host: remote,
                sandbox,
            },
            parent: args.parent,
            env: std::env::vars().collect(),
            launch_id: args.launch_id,
            ..StartParams::default()
        })
    }

    #[tool(
        description = "Type text and Enter into a run: now if its agent is idle, else queued \
        until it is. Answers the prompt id and `delivered` or `queued`."
    )]
    async fn run_send(&self, Parameters(args): Parameters<RunSendArgs>) -> Result<CallToolResult, ErrorData> {
        let params = SendParams {
            run: args.run,
            text: args.text,
            prompt_id: args.prompt_id,
        };
        respond(self.call::<method::RunsSend>(params).await)
    }

    #[tool(description = "Send a message to a run: typed into its agent as a prompt marked \
        `[mail from SENDER · ID]` once it is idle, exactly once per id. The sender is the run \
        this server's AGENTS_RUN_ID names, else the user.")]
    async fn mail_send(&self, Parameters(args): Parameters<MailSendArgs>) -> Result<CallToolResult, ErrorData> {
        let thread = match &args.in_reply_to {
            Some(reply) => match self
                .call::<method::MailRead>(crate::api::MailRef { id: reply.clone() })
                .await
            {
                Ok(m) => m["thread"].as_str().map(str::to_string),
                Err(e) => return respond(Err(e)),
            },
            None => None,
        };
        let (from, proof) = crate::proof::claim();
        let params = crate::api::MailSendParams {
            to: args.to,
            body: args.body,
            from,
            proof,
            id: args.id,
            thread,
            in_reply_to: args.in_reply_to,
            relayed_from: None,
        };
        respond(self.call::<method::MailSend>(params).await)
    }

    #[tool(
        description = "Read mail: one message whole by its id, or the newest messages to or \
        from a run (every run's without one)."
    )]
    async fn mail_read(&self, Parameters(args): Parameters<MailReadArgs>) -> Result<CallToolResult, ErrorData> {
        match args.id {
            Some(id) => respond(self.call::<method::MailRead>(crate::api::MailRef { id }).await),
            None => {
                let params = crate::api::MailListParams {
                    run: args.run,
                    team: None,
                    limit: None,
                };
                respond(self.call::<method::MailList>(params).await)
            }
        }
    }

    #[tool(
        description = "Wait for mail to this run (the run this server's AGENTS_RUN_ID names) \
        and take it: the messages not yet typed into the agent, oldest first, as soon as there \
        are any. Mail read here is never also typed in. Answers [] once the timeout passes."
    )]
    async fn mail_wait(&self, Parameters(args): Parameters<MailWaitArgs>) -> Result<CallToolResult, ErrorData> {
        let Some(run) = args
            .run
            .or_else(|| std::env::var("AGENTS_RUN_ID").ok().filter(|r| !r.is_empty()))
        else {
            return respond(Err(ApiError::bad_request(
                "mail_wait reads a run's mail: give `run`, or call it from inside a run (AGENTS_RUN_ID)",
            )));
        };
        let secs = args.timeout_secs.unwrap_or(DEFAULT_WAIT_SECS).min(MAX_WAIT_SECS);
        let params = crate::api::MailWaitParams {
            run,
            timeout_ms: Some(secs * 1000),
        };
        respond(self.call::<method::MailWait>(params).await)
    }

    #[tool(description = "Start a team: the leader of `[teams.NAME]` in config.toml (or of a \
        team file), then its members as the leader's children, each a run told who it is and \
        how to mail the others. Answers the team with each member's record; a member that \
        could not start is recorded as blocked with its reason.")]
    async fn team_start(&self, Parameters(args): Parameters<TeamStartArgs>) -> Result<CallToolResult, ErrorData> {
        match crate::config::teams::start_request(&args.team, args.prompt) {
            Ok(params) => respond(self.call::<method::TeamsStart>(params).await),
            Err(e) => respond(Err(ApiError::bad_request(e))),
        }
    }

    #[tool(description = "A team: each member's name, role and run record (state, status).")]
    async fn team_show(&self, Parameters(args): Parameters<TeamShowArgs>) -> Result<CallToolResult, ErrorData> {
        let params = crate::api::TeamRef {
            team: args.team,
            force: false,
        };
        respond(self.call::<method::TeamsShow>(params).await)
    }

    #[tool(description = "Answer the question (permission prompt) a run waits on: yes, no, or \
        text.")]
    async fn run_answer(&self, Parameters(args): Parameters<RunAnswerArgs>) -> Result<CallToolResult, ErrorData> {
        let params = AnswerParams {
            run: args.run,
            answer: args.answer,
            answer_id: args.answer_id,
            request: args.request,
        };
        respond(self.call::<method::RunsAnswer>(params).await)
    }

    #[tool(description = "Give a run a new name; the names it had keep finding it. Refused \
        when another live run wears the name, or for a run on a remote host. Answers the run's \
        record, its former names in former_names.")]
    async fn run_rename(&self, Parameters(args): Parameters<RunRenameArgs>) -> Result<CallToolResult, ErrorData> {
        let params = crate::api::RenameParams {
            run: args.run,
            name: args.name,
        };
        respond(self.call::<method::RunsRename>(params).await)
    }

    #[tool(
        description = "A run's prompts not typed in yet (sent, mail, task results), each with \
        why it waits: held while the user has a draft in the run's input or just typed into it, \
        or the agent's turn. `action`: list (default), edit (prompt, text), drop (prompt), send \
        (prompt: typed in now, on purpose)."
    )]
    async fn run_prompts(&self, Parameters(args): Parameters<RunPromptsArgs>) -> Result<CallToolResult, ErrorData> {
        let params = crate::api::PromptParams {
            run: args.run,
            prompt: args.prompt,
            text: args.text,
        };
        respond(match args.action.as_deref().unwrap_or("list") {
            "list" => self.call::<method::PromptsList>(params).await,
            "edit" => self.call::<method::PromptsEdit>(params).await,
            "drop" => self.call::<method::PromptsDrop>(params).await,
            "send" => self.call::<method::PromptsSend>(params).await,
            other => Err(ApiError::bad_request(format!(
                "action {other:?}: list, edit, drop or send"
            ))),
        })
    }

    #[tool(
        description = "Cancel a run and the children it owns (SIGINT → SIGTERM → SIGKILL, or \
        SIGKILL at once with force), then wait for it to end and answer its record."
    )]
    async fn run_cancel(&self, Parameters(args): Parameters<RunCancelArgs>) -> Result<CallToolResult, ErrorData> {
        respond(self.cancel(args).await)
    }

    async fn cancel(&self, args: RunCancelArgs) -> Result<Value, ApiError> {
        let client = self.client().await?;
        let (by, proof) = crate::proof::claim();
        let asked = client
            .call::<method::RunsCancel>(CancelParams {
                run: args.run.clone(),
                force: args.force,
                by,
                proof,
            })
            .await?;
        if args.no_wait {
            return to_json(asked);
        }
        let (ended, record) = self.wait(&client, WaitParams::watching(asked.run), CANCEL_WAIT).await?;
        Ok(json!({ "cancelling": asked.cancelling, "ended": ended, "run": record }))
    }

    #[tool(
        description = "Wait until a run ends (or the timeout passes) and answer its record; \
        `ended` says which. With `children: true`, until every child of the run has ended, \
        answering each child's record in `children`: results to synthesize only once all the \
        work is done."
    )]
    async fn run_wait(&self, Parameters(args): Parameters<RunWaitArgs>) -> Result<CallToolResult, ErrorData> {
        let secs = args.timeout_secs.unwrap_or(DEFAULT_WAIT_SECS).min(MAX_WAIT_SECS);
        respond(
            async {
                let client = self.client().await?;
                if args.children {
                    let waiting = client.call::<method::RunsWaitChildren>(RunRef { run: args.run.clone() });
                    return match tokio::time::timeout(Duration::from_secs(secs), waiting).await {
                        Ok(outcome) => {
                            let outcome = outcome?;
                            Ok(json!({ "ended": true, "run": outcome.run, "children": outcome.children }))
                        }
                        Err(_) => Ok(json!({ "ended": false, "run": self.show(&args.run).await?.run })),
                    };
                }
                let wait = WaitParams::taking(args.run.clone());
                let (ended, record) = self.wait(&client, wait, Duration::from_secs(secs)).await?;
                Ok(json!({ "ended": ended, "run": record }))
            }
            .await,
        )
    }

    /// `runs.wait` bounded by `limit`; past it, the record as it is.
    async fn wait(&self, client: &Client, wait: WaitParams, limit: Duration) -> Result<(bool, RunRecord), ApiError> {
        let run = wait.run.clone();
        let waited = tokio::time::timeout(limit, client.call::<method::RunsWait>(wait)).await;
        match waited {
            Ok(record) => Ok((true, record?)),
            Err(_) => Ok((false, self.show(&run).await?.run)),
        }
    }

    #[tool(description = "A run's output as its terminal shows it: the last lines of its \
        history and screen, as plain text.")]
    async fn run_logs(&self, Parameters(args): Parameters<RunLogsArgs>) -> Result<CallToolResult, ErrorData> {
        let max = args.lines.unwrap_or(DEFAULT_LOG_LINES).clamp(1, MAX_LOG_LINES);
        let lines = match crate::client::replay::screen_lines(&self.paths, &args.run, max).await {
            Ok(lines) => lines,
            Err(e) => return respond(Err(typed(e))),
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(lines.join("\n"))]);
        result.structured_content = Some(json!({ "lines": lines }));
        Ok(result)
    }

    #[tool(description = "A run's or a session's transcript (the harness's own conversation, \
        normalized: role, text, tool calls and results, tokens), a page at a time.")]
    async fn transcript_read(
        &self,
        Parameters(args): Parameters<TranscriptReadArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let params = TranscriptParams {
            id: args.id,
            after_seq: args.after_seq,
            limit: args.limit,
            wait_ms: args.wait_ms,
        };
        respond(self.call::<method::TranscriptRead>(params).await)
    }

    #[tool(description = "Full-text search over every indexed transcript, here and on every \
        host; hits carry the session, run, host, message seq and a snippet with matches in « ». \
        `partial` with `hosts_unreachable` names hosts that did not answer; `unindexed_bytes` > 0 \
        means live transcripts held that much not yet indexed (search again shortly).")]
    async fn transcripts_search(
        &self,
        Parameters(args): Parameters<TranscriptsSearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let params = SearchParams {
            query: args.query,
            limit: args.limit,
            within: args.within,
            raw: args.raw,
            local_only: false,
        };
        // Already an object: `hits`, `partial`, `hosts_unreachable`, `unindexed_bytes`.
        respond(self.call::<method::TranscriptsSearch>(params).await)
    }

    #[tool(
        description = "Harness conversations (sessions) here and on every host, newest first, \
        with the run that last held each and its host. `partial` with `hosts_unreachable` names \
        hosts that did not answer."
    )]
    async fn sessions_list(&self) -> Result<CallToolResult, ErrorData> {
        // Already an object: `sessions`, `partial`, `hosts_unreachable`.
        respond(self.call::<method::SessionsList>(Default::default()).await)
    }

    #[tool(description = "One session (a harness conversation): its runs in order, each \
        with how it came to hold the session (started, resume-of, fork-of), the transcript's \
        title and token totals, and the subagents.")]
    async fn sessions_show(&self, Parameters(args): Parameters<SessionRefArgs>) -> Result<CallToolResult, ErrorData> {
        respond(
            self.call::<method::SessionsShow>(SessionRef { session: args.session })
                .await,
        )
    }

    #[tool(description = "The tree around a run, from its root down: child runs, subagents, \
        and the runs that resumed or forked a conversation, each with its edge.")]
    async fn run_lineage(&self, Parameters(args): Parameters<RunRefArgs>) -> Result<CallToolResult, ErrorData> {
        respond(self.call::<method::RunsLineage>(RunRef { run: args.run }).await)
    }

    /// Calls `M` and answers its reply as the tool's JSON.
    async fn call<M: Method>(&self, params: M::Params) -> Result<Value, ApiError> {
        let client = self.client().await?;
        to_json(client.call::<M>(params).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_input_schema() {
        let tools = AgentsMcp::tool_router().list_all();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        for expected in ["runs_list", "run_start", "run_send", "run_cancel", "transcript_read"] {
            assert!(names.contains(&expected), "{names:?}");
        }
        for tool in &tools {
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")), "{}", tool.name);
        }
    }
}
