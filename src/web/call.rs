//! `POST /api/call`: the tool table over HTTP, as JSON-RPC's call and reply
//! (`{"method": "runs.show", "params": {"run": "helper"}}` →
//! `{"result": …}`, or the typed error with the HTTP status of its class).
//! The methods offered are those a person or an agent steers runs with —
//! every one MCP's tools call, and the CLI's verbs for the same — never the
//! daemon's own plumbing (attaching streams, hooks, hosts, stopping it):
//! another method is `unknown_method` (400) and never reaches the daemon.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Web, failed};
use crate::api::method as m;
use crate::api::{ApiError, ErrorCode};
use crate::client::Client;

/// The methods `/api/call` offers.
pub const METHODS: &[&str] = &[
    m::RUNS_LIST,
    m::RUNS_SHOW,
    m::RUNS_START,
    m::RUNS_SEND,
    m::RUNS_ANSWER,
    m::RUNS_CANCEL,
    m::RUNS_WAIT,
    m::RUNS_WAIT_CHILDREN,
    m::RUNS_RENAME,
    m::RUNS_RERUN,
    m::RUNS_LINEAGE,
    m::RUNS_EXPLAIN,
    m::PROMPTS_LIST,
    m::PROMPTS_EDIT,
    m::PROMPTS_DROP,
    m::PROMPTS_SEND,
    m::MAIL_SEND,
    m::MAIL_LIST,
    m::MAIL_READ,
    m::MAIL_WAIT,
    m::SESSIONS_LIST,
    m::SESSIONS_SHOW,
    m::SESSIONS_RESUME,
    m::SESSIONS_FORK,
    m::TEAMS_LIST,
    m::TEAMS_SHOW,
    m::TEAMS_START,
    m::TEAMS_CANCEL,
    m::TRANSCRIPT_READ,
    m::TRANSCRIPTS_SEARCH,
    m::SUBAGENTS_LIST,
    m::ROUTINES_LIST,
    m::ROUTINES_RUN,
    m::ROUTINES_PAUSE,
    m::ROUTINES_RESUME,
];

/// A JSON-RPC 2.0 request (`jsonrpc` and `id` optional; the `id` is
/// given back).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    method: String,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    jsonrpc: Option<String>,
    #[serde(default)]
    id: Option<Value>,
}

pub async fn call(State(web): State<Arc<Web>>, body: super::actions::Body<Call>) -> Response {
    let Call {
        method,
        params,
        jsonrpc,
        id,
    } = match body {
        Ok(Json(call)) => call,
        Err(e) => return failed(ApiError::bad_request(e.body_text())),
    };
    if !METHODS.contains(&method.as_str()) {
        let e = ApiError::new(
            ErrorCode::UnknownMethod,
            format!("{} is not offered over the web view", crate::text::bounded(&method, 64)),
        );
        return failed(e);
    }
    let params = params.unwrap_or_else(|| json!({}));
    // A daemon placing a run here says so; a browser is no daemon.
    if params.get("placed") == Some(&Value::Bool(true)) {
        return failed(ApiError::bad_request("`placed` is a daemon's to say, not a web view's"));
    }
    let asked = async {
        let client = Client::connect(&web.paths, false).await?;
        client.call_raw(&method, params).await
    };
    match asked.await {
        Ok(result) => {
            let mut reply = json!({ "result": result });
            if jsonrpc.is_some() || id.is_some() {
                reply["jsonrpc"] = json!("2.0");
                reply["id"] = id.unwrap_or(Value::Null);
            }
            Json(reply).into_response()
        }
        Err(e) => failed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::METHODS;

    /// `RunsWaitChildren` → `runs.wait_children`: a marker type's wire name.
    fn wire_name(marker: &str) -> String {
        let mut name = String::new();
        for (i, c) in marker.chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                name.push(if name.contains('.') { '_' } else { '.' });
            }
            name.push(c.to_ascii_lowercase());
        }
        name
    }

    #[test]
    fn every_method_an_mcp_tool_calls_is_offered_over_http() {
        let tools = include_str!("../mcp/tools.rs");
        let called: std::collections::BTreeSet<String> = tools
            .split("method::")
            .skip(1)
            .filter_map(|rest| {
                let marker: String = rest.chars().take_while(char::is_ascii_alphanumeric).collect();
                (marker.len() > 1 && marker != "Method").then(|| wire_name(&marker))
            })
            .collect();
        assert!(called.len() > 20, "{called:?}");
        for method in &called {
            assert!(
                METHODS.contains(&method.as_str()),
                "{method} is an MCP tool's, not offered over HTTP"
            );
        }
    }
}
