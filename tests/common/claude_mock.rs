//! What the tests driving the real Claude Code CLI share: the wire of the
//! Anthropic Messages API a mock answers with (a message, or the same as
//! SSE events when the request streams), a HOME past Claude's onboarding
//! with a project it trusts, and the `agents run claude` command that
//! points it at the mock.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::Home;
use super::real_cli::{BinDir, Reply, Request};

/// The API key the mock accepts; Claude asks once about a key it has not
/// seen, so `.claude.json` approves its last 20 characters in advance.
pub const API_KEY: &str = "sk-ant-mock-0123456789abcdefghij";

/// `blocks` as the reply to `r` (a `/v1/messages` request), streamed when
/// it asked for a stream.
pub fn reply(r: &Request, blocks: &[Value], stop: &str) -> Reply {
    let req = r.json();
    if req["stream"] == true {
        Reply::ok("text/event-stream", sse(&req, blocks, stop))
    } else {
        Reply::ok("application/json", message(&req, blocks, stop).to_string())
    }
}

/// The answer to `count_tokens`, or `None` when `r` asks for a message.
pub fn side_request(r: &Request) -> Option<Reply> {
    let path = r.path();
    if r.method() != "POST" || !path.starts_with("/v1/messages") {
        Some(Reply::not_found())
    } else if path.starts_with("/v1/messages/count_tokens") {
        Some(Reply::ok("application/json", br#"{"input_tokens": 10}"#.to_vec()))
    } else {
        None
    }
}

pub fn message(req: &Value, blocks: &[Value], stop: &str) -> Value {
    json!({
        "id": "msg_mock", "type": "message", "role": "assistant",
        "model": req["model"].as_str().unwrap_or("mock"),
        "content": blocks, "stop_reason": stop, "stop_sequence": null,
        "usage": { "input_tokens": 10, "output_tokens": 12 },
    })
}

pub fn sse(req: &Value, blocks: &[Value], stop: &str) -> String {
    let mut out = String::new();
    let mut event = |name: &str, data: Value| out.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    let mut start = message(req, &[], "");
    start["stop_reason"] = Value::Null;
    event("message_start", json!({ "type": "message_start", "message": start }));
    for (index, block) in blocks.iter().enumerate() {
        let (opening, delta) = if block["type"] == "tool_use" {
            let mut opening = block.clone();
            opening["input"] = json!({});
            let partial = block["input"].to_string();
            (opening, json!({ "type": "input_json_delta", "partial_json": partial }))
        } else {
            (
                json!({ "type": "text", "text": "" }),
                json!({ "type": "text_delta", "text": block["text"] }),
            )
        };
        event(
            "content_block_start",
            json!({ "type": "content_block_start", "index": index, "content_block": opening }),
        );
        event(
            "content_block_delta",
            json!({ "type": "content_block_delta", "index": index, "delta": delta }),
        );
        event(
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": index }),
        );
    }
    event(
        "message_delta",
        json!({ "type": "message_delta", "delta": { "stop_reason": stop, "stop_sequence": null }, "usage": { "output_tokens": 12 } }),
    );
    event("message_stop", json!({ "type": "message_stop" }));
    out
}

/// The user's words of a request's last turn: the text blocks (each on a
/// line, Claude's own `<system-reminder>` blocks left out) of its last
/// message from the user or the model, when that is the user's; `None`
/// when it is a tool's result or the model's. Claude Code 2.1 may send a
/// `system` message after it: that is not a turn.
pub fn last_user_text(req: &Value) -> Option<String> {
    let last = req["messages"]
        .as_array()?
        .iter()
        .rev()
        .find(|m| m["role"] == "user" || m["role"] == "assistant")?;
    if last["role"] != "user" {
        return None;
    }
    match &last["content"] {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .filter(|t| !t.starts_with("<system-reminder>"))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

/// Whether a request is the agent's own turn (it offers tools), not a side
/// request such as a title.
pub fn offers_tools(req: &Value) -> bool {
    req["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// A HOME for Claude Code past its onboarding, and a project folder it
/// trusts; with `key`, that API key approved in advance (Claude asks once
/// about a key it has not seen). The folders live as long as the values.
pub fn claude_home(key: Option<&str>) -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let mut projects = serde_json::Map::new();
    projects.insert(
        cwd.to_string_lossy().into_owned(),
        json!({ "hasTrustDialogAccepted": true }),
    );
    let mut config = json!({ "hasCompletedOnboarding": true, "projects": projects });
    if let Some(key) = key {
        config["customApiKeyResponses"] = json!({ "approved": [&key[key.len() - 20..]], "rejected": [] });
    }
    std::fs::write(user_home.path().join(".claude.json"), config.to_string()).unwrap();
    (user_home, project, cwd)
}

/// Claude Code set up against a mock API: its HOME, the project it works
/// in, and a PATH that finds it.
pub struct ClaudeSetup {
    pub user_home: tempfile::TempDir,
    _project: tempfile::TempDir,
    pub cwd: PathBuf,
    bin: BinDir,
    api_url: String,
}

impl ClaudeSetup {
    pub fn new(claude: &Path, api_url: &str) -> ClaudeSetup {
        let (user_home, project, cwd) = claude_home(Some(API_KEY));
        ClaudeSetup {
            user_home,
            _project: project,
            cwd,
            bin: BinDir::with(claude, "claude"),
            api_url: api_url.to_string(),
        }
    }

    /// `agents ARGS` in the project, with Claude's environment exported as
    /// a user has it in the shell.
    pub fn agents(&self, home: &Home, args: &[&str]) -> Command {
        let mut cmd = home.cmd(args);
        cmd.current_dir(&self.cwd)
            .env("PATH", self.bin.path_before("/usr/bin:/bin"))
            .env("HOME", self.user_home.path())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env("ANTHROPIC_BASE_URL", &self.api_url)
            .env("ANTHROPIC_API_KEY", API_KEY)
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        cmd
    }
}
