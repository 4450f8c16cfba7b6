//! `agents mcp`: the tool table as a Model Context Protocol server on
//! stdin/stdout (docs/design.md §2), so an orchestrating agent can list, start,
//! steer and cancel other agents.
//!
//! Each tool is a client of the daemon, like a CLI verb: it connects (the
//! daemon is started if none runs), calls the same methods and gets the same
//! typed errors. Every failure of a call is a tool result with `isError`
//! whose text starts with the stable code (`unknown_run: no run matches
//! 'x'`) and whose structured content is `{code, message}`. Arguments that do
//! not fit a tool's schema are `bad_request` results too, not JSON-RPC
//! errors: MCP 2025-11-25 (SEP-1303) makes input validation a tool error so
//! the calling model can read it and correct itself. JSON-RPC errors are left
//! for the protocol (an unknown tool or method, a malformed message).
//! Stdout is the MCP channel: nothing else is ever written to it (logs go to
//! stderr). A line that is no JSON-RPC message is answered with -32700 or
//! -32600 (`lines.rs`), never dropped in silence.

mod args;
mod lines;
mod tools;

use anyhow::{Context, Result};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt, tool_handler};
use serde_json::{Value, json};

use crate::api::{ApiError, ErrorCode};
use crate::paths::Paths;

/// Serves MCP on stdin/stdout until the client closes stdin.
pub async fn serve(paths: &Paths) -> Result<i32> {
    init_logging();
    let running = AgentsMcp::new(paths.clone())
        .serve(lines::guarded(tokio::io::stdin(), tokio::io::stdout()))
        .await
        .context("the MCP handshake on stdin/stdout failed")?;
    running.waiting().await.context("the MCP service stopped")?;
    Ok(0)
}

/// Diagnostics to stderr only (`AGENTS_LOG`, default `warn`): stdout
/// carries the protocol, and a stray line there would corrupt it.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("AGENTS_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// The MCP server: the paths of the daemon it talks to, and its tools.
#[derive(Clone)]
pub struct AgentsMcp {
    paths: Paths,
    tool_router: ToolRouter<AgentsMcp>,
}

impl AgentsMcp {
    pub fn new(paths: Paths) -> AgentsMcp {
        AgentsMcp {
            paths,
            tool_router: AgentsMcp::tool_router(),
        }
    }
}

const INSTRUCTIONS: &str = "Manage coding-agent runs on this machine and its remote hosts: \
list them (runs_list), start one (run_start: a harness such as claude, codex, gemini, aider, \
qwen, pi, shell, or cmd with a command line), type a prompt into it (run_send), answer the question it \
waits on (run_answer), wait for it to end (run_wait), read its screen (run_logs) or the \
harness's own transcript (transcript_read, transcripts_search), and cancel it (run_cancel). \
A run is named by its id, a unique id prefix, or a name it has or had (run_rename renames it). A failed call's text starts with a \
stable error code such as unknown_run, not_running or bad_request.";

#[tool_handler(router = self.tool_router)]
impl ServerHandler for AgentsMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("agents", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let answer = self
            .tool_router
            .call(ToolCallContext::new(self, request, context))
            .await?;
        Ok(match answer {
            CallToolResponse::Complete(result) => CallToolResponse::Complete(with_code(result)),
            other => other,
        })
    }
}

/// The error results the tools make always carry `{code, message}`; one
/// without is rmcp's own, for arguments that did not deserialize, and gets
/// the code the daemon gives bad parameters.
fn with_code(result: CallToolResult) -> CallToolResult {
    if result.is_error != Some(true) || result.structured_content.is_some() {
        return result;
    }
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    error_result(&ApiError::bad_request(text.join(" ")), json!({}))
}

/// A failure that is not already a typed error (`anyhow` inside the CLI
/// code the tools reuse) keeps its code if it has one, else is `internal`.
fn typed(e: anyhow::Error) -> ApiError {
    match e.downcast::<ApiError>() {
        Ok(api) => api,
        Err(other) => ApiError::new(ErrorCode::Internal, format!("{other:#}")),
    }
}

/// A tool's answer: JSON both as text and as structured content, which
/// MCP wants to be an object (a bare answer becomes `{"result": …}`).
fn respond(outcome: Result<Value, ApiError>) -> Result<CallToolResult, ErrorData> {
    Ok(match outcome {
        Ok(value @ Value::Object(_)) => CallToolResult::structured(value),
        Ok(other) => CallToolResult::structured(json!({ "result": other })),
        Err(e) => error_result(&e, json!({})),
    })
}

/// `isError` with text `code: message`, and `{code, message, …extra}` as
/// structured content for callers that parse.
fn error_result(e: &ApiError, extra: Value) -> CallToolResult {
    error_with_code(e.code.as_str(), &e.message, extra)
}

fn error_with_code(code: &str, message: &str, extra: Value) -> CallToolResult {
    let mut structured = json!({ "code": code, "message": message });
    if let (Some(all), Value::Object(more)) = (structured.as_object_mut(), extra) {
        all.extend(more);
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(format!("{code}: {message}"))]);
    result.structured_content = Some(structured);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(result: &CallToolResult) -> String {
        result
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .unwrap_or_default()
    }

    #[test]
    fn a_daemon_error_is_a_tool_error_whose_text_starts_with_its_code() {
        let e = ApiError::new(ErrorCode::UnknownRun, "no run matches 'x'");
        let result = respond(Err(e)).expect("a result, not a protocol error");
        assert_eq!(result.is_error, Some(true));
        assert_eq!(text_of(&result), "unknown_run: no run matches 'x'");
        assert_eq!(
            result.structured_content,
            Some(json!({ "code": "unknown_run", "message": "no run matches 'x'" }))
        );
    }

    #[test]
    fn an_argument_error_from_rmcp_gets_the_bad_request_code() {
        let rmcp_own = CallToolResult::error(vec![ContentBlock::text(
            "failed to deserialize parameters: missing field `run`",
        )]);
        let result = with_code(rmcp_own);
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            text_of(&result),
            "bad_request: failed to deserialize parameters: missing field `run`"
        );
        assert_eq!(result.structured_content.unwrap()["code"], "bad_request");
        // Ours and successes pass through untouched.
        let ours = error_with_code("blocked", "run r blocked: no claude", json!({ "run": {} }));
        assert_eq!(with_code(ours.clone()), ours);
        let fine = CallToolResult::structured(json!({ "runs": [] }));
        assert_eq!(with_code(fine.clone()), fine);
    }

    #[test]
    fn a_typed_error_keeps_its_code_through_anyhow() {
        let wrapped = anyhow::Error::from(ApiError::new(ErrorCode::NotRunning, "run r has ended")).context("reading");
        assert_eq!(typed(wrapped).code, ErrorCode::NotRunning);
        assert_eq!(typed(anyhow::anyhow!("disk on fire")).code, ErrorCode::Internal);
    }

    #[test]
    fn success_carries_the_same_json_as_text_and_structured_content() {
        let result = respond(Ok(json!({ "runs": [] }))).unwrap();
        assert_eq!(result.is_error, Some(false));
        assert_eq!(result.structured_content, Some(json!({ "runs": [] })));
        assert_eq!(
            serde_json::from_str::<Value>(&text_of(&result)).unwrap(),
            json!({ "runs": [] })
        );
        let bare = respond(Ok(Value::Null)).unwrap();
        assert_eq!(bare.structured_content, Some(json!({ "result": null })));
    }
}
