//! Auggie sessions (`~/.augment/sessions/<id>.json`).
//!
//! As Auggie 0.36.0 writes them (recorded against a mock of Augment's
//! service: `tests/fixtures/transcripts/auggie/`), one JSON document,
//! written again whole (to a new file put in its place) after each
//! exchange: `{sessionId, created, modified, chatHistory: [entry…],
//! agentState, customTitle, …}`. Each entry is one exchange with the
//! model, `{exchange: {request_id, request_message, request_nodes,
//! response_text, response_nodes}, completed, finishedAt, …}`:
//!
//! - `request_nodes`: the user's text (`type` 0, `text_node.content`), the
//!   results of the tools the previous exchange called (`type` 1,
//!   `tool_result_node {tool_use_id, content, is_error}`), the editor's
//!   state (`type` 4: the workspace and cwd), images and the like;
//! - `response_text` and `response_nodes`, among them the tool calls
//!   (`type` 5, `tool_use {tool_use_id, tool_name, input_json}`).
//!
//! So an exchange that calls a tool is followed by one whose request is
//! that tool's result. The file keeps no token counts (Augment bills
//! credits) and names no model. Exchanges are added at the end; the last
//! one, while not yet `completed`, is provisional. The `request_id` of the
//! last exchange read for good tells a history that was cut or summarized
//! (`document::read`): the session is then read again from its start, and
//! what was read of it before is replaced. An
//! exchange that stands for a summary of those before it
//! (`isHistorySummary`) is read as `system`.

use serde::Deserialize;
use serde_json::Value;

use super::model::{self, Message, Role, ToolCall, ToolResult};
use super::{Batch, DocumentRead, document};

#[derive(Deserialize, Default)]
struct Entry {
    #[serde(default)]
    exchange: Exchange,
    #[serde(rename = "finishedAt")]
    finished_at: Option<String>,
    #[serde(rename = "isHistorySummary", default)]
    summary: bool,
}

#[derive(Deserialize, Default)]
struct Exchange {
    request_id: Option<String>,
    #[serde(default)]
    request_message: String,
    #[serde(default)]
    request_nodes: Vec<Value>,
    #[serde(default)]
    response_text: String,
    #[serde(default)]
    response_nodes: Vec<Value>,
}

/// Node types (`ChatRequestNodeType`, `ChatResultNodeType`).
const TEXT: u64 = 0;
const TOOL_RESULT: u64 = 1;
const TOOL_USE: u64 = 5;

const SHAPE: document::Shape = document::Shape {
    records: |doc| document::array(doc, "chatHistory"),
    about: |doc, out| out.session_id = doc["sessionId"].as_str().map(str::to_string),
    key: |entry| match entry["exchange"]["request_id"].as_str() {
        Some(id) => id.to_string(),
        None => document::digest(entry),
    },
    settled: |entry| entry["completed"] == true,
    convert: |entry, offset, out| match Entry::deserialize(entry) {
        Ok(entry) => convert(entry, offset, out),
        Err(_) => out.stats.malformed += 1,
    },
};

/// Reads the exchanges of `doc` after the first `done`, whose last was
/// `last` (read again from the start when it is no longer there). With
/// `finished`, an exchange left uncompleted is read for good too.
pub fn parse(doc: &[u8], done: usize, last: Option<&str>, finished: bool) -> DocumentRead {
    document::read(doc, done, last, finished, &SHAPE)
}

/// Appends one exchange's messages: the request's text or tool results,
/// then the response with its tool calls.
fn convert(entry: Entry, offset: u64, out: &mut Batch) {
    let at = entry.finished_at.as_deref().and_then(model::parse_time);
    let ex = entry.exchange;
    let asker = if entry.summary { Role::System } else { Role::User };
    let mut text = ex.request_message.trim_end().to_string();
    for node in &ex.request_nodes {
        match node["type"].as_u64() {
            Some(TEXT) if text.is_empty() => {
                text = node["text_node"]["content"].as_str().unwrap_or("").trim_end().into()
            }
            Some(TOOL_RESULT) => {
                let r = &node["tool_result_node"];
                let mut m = Message::new(Role::Tool, r["content"].as_str().unwrap_or("").to_string(), offset);
                m.at_ms = at;
                m.tool_result = Some(ToolResult {
                    tool_use_id: r["tool_use_id"].as_str().map(str::to_string),
                    is_error: r["is_error"] == true,
                    agent_id: None,
                });
                out.messages.push(m);
            }
            _ => {}
        }
    }
    if !text.is_empty() {
        let mut m = Message::new(asker, text, offset);
        m.at_ms = at;
        m.uuid = ex.request_id.clone();
        out.messages.push(m);
    }
    let calls: Vec<ToolCall> = ex
        .response_nodes
        .iter()
        .filter(|n| n["type"].as_u64() == Some(TOOL_USE))
        .map(|n| {
            let call = &n["tool_use"];
            ToolCall {
                id: call["tool_use_id"].as_str().map(str::to_string),
                name: call["tool_name"].as_str().unwrap_or_default().to_string(),
                input: model::tool_input(call["input_json"].as_str().unwrap_or("null")),
            }
        })
        .collect();
    if !ex.response_text.is_empty() || !calls.is_empty() {
        let mut m = Message::new(Role::Assistant, ex.response_text, offset);
        m.at_ms = at;
        m.tool_calls = calls;
        out.messages.push(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/transcripts/auggie/7940b1a3-83cb-4dfb-8ef2-4cb5387f434a.json"
        );
        std::fs::read(path).unwrap()
    }

    #[test]
    fn a_recorded_session_reads_as_its_prompts_tool_call_result_and_replies() {
        let read = parse(&recording(), 0, None, false);
        let b = &read.batch;
        assert_eq!(b.session_id.as_deref(), Some("7940b1a3-83cb-4dfb-8ef2-4cb5387f434a"));
        let roles: Vec<Role> = b.messages.iter().map(|m| m.role).collect();
        use Role::{Assistant, Tool, User};
        assert_eq!(roles, [User, Assistant, Tool, Assistant, User, Assistant]);
        let texts: Vec<&str> = b.messages.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts[..2], ["please run a command", ""]);
        assert_eq!(
            texts[3..],
            ["The command ran.", "say hello again", "Hello from the mock."]
        );
        let call = &b.messages[1].tool_calls[0];
        assert_eq!(call.name, "launch-process");
        assert_eq!(call.id.as_deref(), Some("toolu_01"));
        assert_eq!(call.input["command"], "echo hi > ran.txt");
        assert!(b.messages[2].text.contains("<return-code>\n0\n</return-code>"));
        let result = b.messages[2].tool_result.as_ref().unwrap();
        assert_eq!(result.tool_use_id.as_deref(), Some("toolu_01"));
        assert!(b.messages.iter().all(|m| m.at_ms.is_some()));
        assert_eq!((read.records_done, b.provisional, b.stats.malformed), (3, 0, 0));
        assert!(b.usage.is_zero(), "the file keeps no tokens");
    }

    #[test]
    fn a_later_read_adds_only_new_exchanges_and_a_cut_history_is_read_again() {
        let whole = recording();
        let mut doc: Value = serde_json::from_slice(&whole).unwrap();
        let third = doc["chatHistory"].as_array_mut().unwrap().pop().unwrap();
        let first = parse(doc.to_string().as_bytes(), 0, None, false);
        assert_eq!(first.records_done, 2);
        let last = first.last_key.clone();
        let next = parse(&whole, first.records_done, last.as_deref(), false);
        assert!(!next.reset);
        assert_eq!(next.batch.messages.len(), 2, "{:?}", next.batch.messages);
        assert_eq!(next.batch.messages[0].text, "say hello again");
        // Summarized down to its last exchange: the session is read again.
        doc["chatHistory"] = serde_json::json!([third]);
        let cut = parse(doc.to_string().as_bytes(), 3, next.last_key.as_deref(), false);
        assert!(cut.reset);
        assert_eq!((cut.records_done, cut.batch.messages.len()), (1, 2));
        // As long as before, but another exchange where the last read was.
        let mut other: Value = serde_json::from_slice(&whole).unwrap();
        other["chatHistory"][2]["exchange"]["request_id"] = "another".into();
        other["chatHistory"][2]["isHistorySummary"] = true.into();
        let moved = parse(other.to_string().as_bytes(), 3, next.last_key.as_deref(), false);
        assert!(moved.reset);
        assert_eq!(moved.records_done, 3);
        assert_eq!(moved.last_key.as_deref(), Some("another"));
        assert_eq!(
            moved.batch.messages[4].role,
            Role::System,
            "a summary is not the user's"
        );
    }

    #[test]
    fn an_exchange_still_running_is_provisional_and_a_cut_file_is_tried_again() {
        let mut doc: Value = serde_json::from_slice(&recording()).unwrap();
        doc["chatHistory"][2]["completed"] = false.into();
        let read = parse(doc.to_string().as_bytes(), 0, None, false);
        assert_eq!((read.records_done, read.batch.provisional), (2, 2));
        assert_eq!(parse(doc.to_string().as_bytes(), 0, None, true).records_done, 3);
        // One left uncompleted before others is over.
        doc["chatHistory"][2]["completed"] = true.into();
        doc["chatHistory"][0]["completed"] = false.into();
        let read = parse(doc.to_string().as_bytes(), 0, None, false);
        assert_eq!((read.records_done, read.batch.provisional), (3, 0));
        let whole = recording();
        let cut = parse(&whole[..whole.len() / 2], 2, Some("x"), false);
        assert_eq!((cut.batch.stats.malformed, cut.records_done), (0, 2));
        assert_eq!(cut.last_key.as_deref(), Some("x"));
        let ended = parse(&whole[..whole.len() / 2], 2, Some("x"), true);
        assert_eq!(
            ended.batch.stats.malformed, 1,
            "a finished file that does not read is malformed"
        );
    }
}
