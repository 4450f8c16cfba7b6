//! mini-swe-agent trajectories (`-o FILE`, else
//! `<MSWEA_GLOBAL_CONFIG_DIR, ~/.config/mini-swe-agent>/last_mini_run.traj.json`).
//!
//! As mini-swe-agent 2.4.6 writes them (recorded against a mock
//! OpenAI-compatible model: `tests/fixtures/transcripts/mini/`), one JSON
//! document written again whole, in place, after each step:
//! `{info {model_stats, config, mini_version, exit_status}, messages:
//! [msg…], trajectory_format: "mini-swe-agent-1.1"}`, each message in the
//! chat-completions shape with an `extra` of its own:
//!
//! - `system`: its instructions to the model, left out;
//! - `user`: the task in its template ("Please solve this issue: TASK" and
//!   its instructions), a later one ("The user added a new task: TASK"),
//!   a refusal's words, or a command's output; read as the user's words;
//! - `assistant`: `content` and `tool_calls [{id, function {name,
//!   arguments}}]`, its tokens in `extra.response.usage`, its time in
//!   `extra.timestamp` (epoch seconds);
//! - `tool`: the call's `{returncode, output}` as text, with
//!   `tool_call_id`;
//! - `exit`: the run's end (`extra.exit_status`), left out.
//!
//! Messages have no ids: a digest of each tells a history that changed
//! (`document::read`). A step is written whole, so every message is read
//! for good; a read that catches the file half written tries again.

use serde_json::Value;

use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};
use super::{Batch, DocumentRead, document};

const SHAPE: document::Shape = document::Shape {
    records: |doc| document::array(doc, "messages"),
    about: |doc, batch| {
        batch.model = doc["info"]["config"]["model"]["model_name"]
            .as_str()
            .map(str::to_string);
    },
    key: document::digest,
    settled: |msg| msg["role"].is_string(),
    convert,
};

/// Reads the messages of `doc` after the first `done`, the last of which
/// had the digest `last`.
pub fn parse(doc: &[u8], done: usize, last: Option<&str>, finished: bool) -> DocumentRead {
    document::read(doc, done, last, finished, &SHAPE)
}

/// What its templates put around the user's task.
const TASK: &str = "Please solve this issue: ";
const TASK_ENDS: &str = "\n\nYou can execute bash commands";
const ADDED: &str = "The user added a new task: ";

fn convert(msg: &Value, offset: u64, out: &mut Batch) {
    let text = msg["content"].as_str().unwrap_or_default();
    let at = msg["extra"]["timestamp"].as_f64().map(|s| (s * 1000.0) as i64);
    let mut m = match msg["role"].as_str() {
        Some("user") => Message::new(Role::User, users_words(text).to_string(), offset),
        Some("assistant") => {
            let mut m = Message::new(Role::Assistant, text.to_string(), offset);
            m.tool_calls = document::array(msg, "tool_calls")
                .iter()
                .map(|call| ToolCall {
                    id: call["id"].as_str().map(str::to_string),
                    name: call["function"]["name"].as_str().unwrap_or_default().to_string(),
                    input: model::tool_input(call["function"]["arguments"].as_str().unwrap_or("{}")),
                })
                .collect();
            let usage = &msg["extra"]["response"]["usage"];
            if usage.is_object() {
                let n = |k: &str| usage[k].as_i64().unwrap_or(0);
                let tokens = Usage {
                    input: n("prompt_tokens"),
                    output: n("completion_tokens"),
                    ..Usage::default()
                };
                m.usage = Some(tokens);
            }
            m
        }
        Some("tool") => {
            let mut m = Message::new(Role::Tool, text.to_string(), offset);
            m.tool_result = Some(ToolResult {
                tool_use_id: msg["tool_call_id"].as_str().map(str::to_string),
                is_error: msg["extra"]["returncode"].as_i64().is_some_and(|c| c != 0),
                agent_id: None,
            });
            m
        }
        Some("system" | "exit") => return,
        Some(_) => {
            out.stats.unknown += 1;
            return;
        }
        None => {
            out.stats.malformed += 1;
            return;
        }
    };
    m.at_ms = at;
    out.messages.push(m);
}

/// The user's own words of a user message: the task out of its template.
fn users_words(text: &str) -> &str {
    if let Some(task) = text.strip_prefix(TASK) {
        return task.split(TASK_ENDS).next().unwrap_or(task);
    }
    text.strip_prefix(ADDED).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/transcripts/mini/interactive.traj.json"
        );
        std::fs::read(path).unwrap()
    }

    #[test]
    fn a_recorded_trajectory_reads_as_tasks_calls_results_replies_and_tokens() {
        let read = parse(&recording(), 0, None, false);
        let b = &read.batch;
        assert_eq!((b.stats.malformed, b.stats.unknown, b.provisional), (0, 0, 0));
        assert_eq!(b.model.as_deref(), Some("openai/mock-model"));
        let users: Vec<&str> = b
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.text.as_str())
            .collect();
        assert_eq!(users[..2], ["SHELL please", "SHELL again"]);
        let call = &b.messages[1].tool_calls[0];
        assert_eq!(
            (call.name.as_str(), &call.input["command"]),
            ("bash", &"touch perm-marker".into())
        );
        let result = &b.messages[2];
        assert_eq!(
            result.tool_result.as_ref().unwrap().tool_use_id.as_deref(),
            Some("call_1")
        );
        assert_eq!(b.usage.output, 7 * 7);
        assert!(b.messages[1].at_ms.is_some_and(|t| t > 1_700_000_000_000));
        // Its instructions and its end are not the conversation.
        assert!(b.messages.iter().all(|m| m.role != Role::System));
        assert_eq!(read.records_done, 21);
    }

    #[test]
    fn a_task_is_read_out_of_its_template() {
        assert_eq!(
            users_words("Please solve this issue: fix it\n\nYou can execute bash commands and…"),
            "fix it"
        );
        assert_eq!(users_words("The user added a new task: and this"), "and this");
        assert_eq!(users_words("plain words"), "plain words");
    }
}
