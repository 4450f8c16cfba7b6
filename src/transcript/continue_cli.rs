//! Continue CLI sessions (`<CONTINUE_GLOBAL_DIR, ~/.continue>/sessions/<id>.json`).
//!
//! As cn 1.5.47 writes them (recorded against a mock OpenAI-compatible
//! model: `tests/fixtures/transcripts/continue/`), one pretty-printed JSON
//! document, written again whole at each message: `{sessionId, title,
//! workspaceDirectory, history: [item…], usage}`. Each item is
//! `{message, contextItems, toolCallStates?}`:
//!
//! - `message {role, content}`: `user` (its words: a string or text parts),
//!   `assistant` (its text, `toolCalls [{id, function {name, arguments}}]`
//!   and `usage {prompt_tokens, completion_tokens, model, …}`), `system`,
//!   `thinking`, and `tool` (a result sent back on its own);
//! - `toolCallStates [{toolCallId, status, output [{content}]}]` beside an
//!   assistant message: its calls' results (`done`, or `errored` and
//!   `canceled` with the reason as output).
//!
//! Items are added at the end; the last one may still change (a call's
//! state, a reply being written), so it is provisional until another
//! follows it or it has settled (the user's words, or a reply with its
//! tokens whose calls have ended). A digest of the last item read for good
//! tells a history that was compacted (`document::read`): the session is
//! then read again from its start.

use serde_json::Value;

use super::model::{self, Message, Role, ToolCall, ToolResult, Usage};
use super::{Batch, DocumentRead, document};

const SHAPE: document::Shape = document::Shape {
    records: |doc| document::array(doc, "history"),
    about: |doc, out| {
        out.session_id = doc["sessionId"].as_str().map(str::to_string);
        out.model = document::array(doc, "history")
            .iter()
            .rev()
            .find_map(|i| i["message"]["usage"]["model"].as_str())
            .map(str::to_string);
    },
    // Its message alone: its calls' states change under it.
    key: |item| document::digest(&item["message"]),
    settled,
    convert,
};

/// Reads the items of `doc` after the first `done`, the last of which had
/// the digest `last`. With `finished`, the last item is read for good too.
pub fn parse(doc: &[u8], done: usize, last: Option<&str>, finished: bool) -> DocumentRead {
    document::read(doc, done, last, finished, &SHAPE)
}

/// Whether the last item can no longer change: the user's words, or a
/// reply whose tokens are in (they come with its end) and whose calls
/// have all ended.
fn settled(item: &Value) -> bool {
    let msg = &item["message"];
    let calls_over = item["toolCallStates"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|c| matches!(c["status"].as_str(), Some("done" | "errored" | "canceled")));
    let calls = msg["toolCalls"].as_array().map_or(0, Vec::len);
    let states = item["toolCallStates"].as_array().map_or(0, Vec::len);
    match msg["role"].as_str() {
        Some("user") => true,
        Some("assistant") => msg["usage"].is_object() && calls_over && states >= calls,
        _ => false,
    }
}

/// Appends one history item's messages: its message, then its calls'
/// results.
fn convert(item: &Value, offset: u64, out: &mut Batch) {
    let msg = &item["message"];
    let Some(role) = msg["role"].as_str() else {
        out.stats.malformed += 1;
        return;
    };
    let text = super::chat::text_of(&msg["content"]);
    let m = match role {
        "user" => Message::new(Role::User, text, offset),
        "assistant" => assistant(msg, text, offset),
        "system" | "thinking" => Message::new(Role::System, text, offset),
        "tool" => {
            let mut m = Message::new(Role::Tool, text, offset);
            m.tool_result = Some(ToolResult {
                tool_use_id: msg["toolCallId"].as_str().map(str::to_string),
                is_error: false,
                agent_id: None,
            });
            m
        }
        _ => {
            out.stats.unknown += 1;
            return;
        }
    };
    if !m.text.is_empty() || !m.tool_calls.is_empty() {
        out.messages.push(m);
    }
    for state in item["toolCallStates"].as_array().into_iter().flatten() {
        out.messages.push(result(state, offset));
    }
}

/// An assistant message, its calls, model and tokens.
fn assistant(msg: &Value, text: String, offset: u64) -> Message {
    let mut m = Message::new(Role::Assistant, text, offset);
    m.tool_calls = msg["toolCalls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|call| ToolCall {
            id: call["id"].as_str().map(str::to_string),
            name: call["function"]["name"].as_str().unwrap_or_default().to_string(),
            input: model::tool_input(call["function"]["arguments"].as_str().unwrap_or("null")),
        })
        .collect();
    let usage = &msg["usage"];
    if usage.is_object() {
        let n = |v: &Value| v.as_i64().unwrap_or(0);
        let cached = n(&usage["prompt_tokens_details"]["cached_tokens"]);
        let u = Usage {
            input: n(&usage["prompt_tokens"]) - cached,
            output: n(&usage["completion_tokens"]),
            cache_read: cached,
            cache_write: n(&usage["prompt_tokens_details"]["cache_write_tokens"]),
        };
        m.usage = Some(u);
        m.model = usage["model"].as_str().map(str::to_string);
    }
    m
}

/// A call's result, from its state: its output's text, an error when it
/// failed or was refused.
fn result(state: &Value, offset: u64) -> Message {
    let text: Vec<&str> = state["output"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["content"].as_str())
        .collect();
    let status = state["status"].as_str().unwrap_or_default();
    let mut m = Message::new(Role::Tool, text.join("\n"), offset);
    m.tool_result = Some(ToolResult {
        tool_use_id: state["toolCallId"].as_str().map(str::to_string),
        is_error: matches!(status, "errored" | "canceled"),
        agent_id: None,
    });
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording() -> Vec<u8> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/transcripts/continue/27d493b1-9999-4711-838e-5fade3b5829b.json"
        );
        std::fs::read(path).unwrap()
    }

    #[test]
    fn a_recorded_session_reads_as_its_prompts_calls_results_and_replies() {
        let read = parse(&recording(), 0, None, true);
        let b = &read.batch;
        assert_eq!(b.session_id.as_deref(), Some("27d493b1-9999-4711-838e-5fade3b5829b"));
        assert_eq!(b.stats.malformed, 0);
        let user: Vec<&str> = b
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.text.as_str())
            .collect();
        assert_eq!(user[..3], ["SLOW please wait", "SLOW second", "SHELL please"]);
        let call = b.messages.iter().find(|m| !m.tool_calls.is_empty()).unwrap();
        assert_eq!(call.tool_calls[0].name, "Bash");
        assert_eq!(call.tool_calls[0].input["command"], "touch perm-marker");
        assert_eq!(call.model.as_deref(), Some("mock-model"));
        let result = b.messages.iter().find(|m| m.role == Role::Tool).unwrap();
        assert_eq!(
            result.tool_result.as_ref().unwrap().tool_use_id.as_deref(),
            Some("call_1")
        );
        assert!(
            b.messages
                .iter()
                .any(|m| m.role == Role::Assistant && m.text == "Ran it.")
        );
        // A refused call is a failed result with cn's words.
        assert!(b.messages.iter().any(|m| m.role == Role::Tool
            && m.text == "Permission denied by user"
            && m.tool_result.as_ref().unwrap().is_error));
        let replies = b.messages.iter().filter(|m| m.usage.is_some()).count() as i64;
        assert_eq!((b.usage.input, b.usage.output), (40 * replies, 7 * replies));
        assert_eq!(read.records_done, 21);
    }

    #[test]
    fn a_last_reply_still_being_written_is_provisional_and_a_compacted_history_is_read_again() {
        // As written: its last reply has its tokens, so it has settled.
        let doc = recording();
        let whole = parse(&doc, 0, None, false);
        assert_eq!((whole.records_done, whole.batch.provisional), (21, 0));
        // Its last reply without its tokens yet: still being written.
        let mut writing: Value = serde_json::from_slice(&doc).unwrap();
        let last = writing["history"].as_array_mut().unwrap().last_mut().unwrap();
        last["message"]["usage"] = Value::Null;
        let writing = writing.to_string().into_bytes();
        let first = parse(&writing, 0, None, false);
        assert_eq!(first.records_done, 20);
        assert!(first.batch.provisional > 0);
        // Nothing new: the last item again, provisional, its tokens not
        // counted twice.
        let again = parse(&writing, 20, first.last_key.as_deref(), false);
        assert!(!again.reset);
        assert_eq!(again.batch.messages.len(), first.batch.provisional);
        assert_eq!(again.batch.usage.output, 0);
        // The history cut to its last items: read from the start.
        let mut cut: Value = serde_json::from_slice(&doc).unwrap();
        let items = cut["history"].as_array().unwrap()[18..].to_vec();
        cut["history"] = Value::Array(items);
        let read = parse(cut.to_string().as_bytes(), 20, first.last_key.as_deref(), false);
        assert!(read.reset);
        assert_eq!(read.records_done, 3);
        // Caught half written: nothing read, nothing lost, nothing called
        // malformed (only a finished file that does not read is).
        let torn = parse(&doc[..doc.len() / 2], 20, first.last_key.as_deref(), false);
        assert_eq!((torn.batch.stats.malformed, torn.records_done), (0, 20));
        assert_eq!(torn.last_key, first.last_key);
        assert_eq!(parse(&doc[..doc.len() / 2], 0, None, true).batch.stats.malformed, 1);
    }
}
