use serde_json::json;

use super::*;

fn recording() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/transcripts/code-puppy/254491c8-b1ab-4ae7-a8e6-773d84fd4a43.json"
    );
    std::fs::read(path).unwrap()
}

#[test]
fn a_recorded_session_reads_as_prompts_a_call_its_answers_and_replies() {
    let read = parse(&recording(), 0, None, false);
    let b = &read.batch;
    assert_eq!((b.stats.malformed, b.stats.unknown, b.provisional), (0, 0, 0));
    let said: Vec<(Role, &str)> = b.messages.iter().map(|m| (m.role, m.text.as_str())).collect();
    assert_eq!(said[0], (Role::User, "hello narwhal"));
    assert_eq!(said[1], (Role::Assistant, "Mock reply to: hello narwhal"));
    assert_eq!(said[4], (Role::User, "SHELL please"));
    assert_eq!(
        said[6],
        (Role::Tool, "$ touch perm-marker && echo made-marker\nmade-marker")
    );
    assert_eq!(said[7], (Role::Assistant, "Ran it."));
    // Refused at its question: the call's answer says so, as an error.
    assert_eq!(
        said[9],
        (
            Role::Tool,
            "$ touch perm-marker && echo made-marker\nUser rejected the command!"
        )
    );
    assert!(b.messages[9].tool_result.as_ref().unwrap().is_error);
    assert!(!b.messages[6].tool_result.as_ref().unwrap().is_error);
    assert_eq!(said.last(), Some(&(Role::Assistant, "Mock reply to: back again")));
    let call = &b.messages[5].tool_calls[0];
    assert_eq!((call.id.as_deref(), call.name.as_str()), (Some("call_1"), "shell"));
    assert_eq!(call.input["command"], "touch perm-marker && echo made-marker");
    assert_eq!(
        b.messages[6].tool_result.as_ref().unwrap().tool_use_id.as_deref(),
        Some("call_1")
    );
    // Each reply's tokens (the mock's 40 in, 7 out) and model.
    let replies: Vec<&Message> = b.messages.iter().filter(|m| m.role == Role::Assistant).collect();
    assert!(replies.iter().all(|m| m.model.as_deref() == Some("mock-model")));
    assert_eq!(b.usage.output, 7 * replies.len() as i64);
    assert_eq!(b.usage.input, 40 * replies.len() as i64);
    assert_eq!(b.model.as_deref(), Some("mock-model"));
    assert!(b.messages[0].at_ms.is_some());
    assert_eq!(read.records_done, 15);
}

#[test]
fn a_later_save_adds_the_new_turn_and_a_compacted_history_is_read_again() {
    let doc = recording();
    let first = parse(&doc, 0, None, false);
    let mut more: Value = serde_json::from_slice(&doc).unwrap();
    let turn = more["messages"].as_array_mut().unwrap();
    turn.push(json!({ "kind": "request", "state": "complete",
        "parts": [{ "part_kind": "user-prompt", "content": ["one more", { "kind": "image-url" }] }] }));
    // A reply still streaming is provisional.
    turn.push(
        json!({ "kind": "response", "state": "incomplete", "model_name": "mock-model",
        "parts": [{ "part_kind": "text", "content": "Do" }] }),
    );
    let next = parse(
        more.to_string().as_bytes(),
        first.records_done,
        first.last_key.as_deref(),
        false,
    );
    assert!(!next.reset);
    let texts: Vec<&str> = next.batch.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["one more\n[image-url]", "Do"]);
    assert_eq!((next.records_done, next.batch.provisional), (16, 1));
    // `/compact` put a summary in place of the history.
    let compacted = json!({ "format": 2, "messages": [
        { "kind": "request", "state": "complete", "parts": [{ "part_kind": "user-prompt", "content": "summary" }] }
    ] });
    let again = parse(
        compacted.to_string().as_bytes(),
        first.records_done,
        first.last_key.as_deref(),
        false,
    );
    assert!(again.reset);
    assert_eq!(again.batch.messages.len(), 1);
}

#[test]
fn a_retried_call_and_unknown_parts_are_counted_not_fatal() {
    let doc = json!({ "messages": [
        { "kind": "request", "state": "complete", "parts": [
            { "part_kind": "system-prompt", "content": "You are Rex" },
            { "part_kind": "retry-prompt", "content": "Unknown tool name: 'x'", "tool_name": "x", "tool_call_id": "c9" },
            { "part_kind": "video", "content": "?" }
        ] },
        { "kind": "surprise", "parts": [] },
        { "parts": [] }
    ] });
    let read = parse(doc.to_string().as_bytes(), 0, None, true);
    let b = &read.batch;
    assert_eq!((b.stats.unknown, b.stats.malformed), (2, 1));
    assert_eq!(b.messages.len(), 1);
    assert_eq!(b.messages[0].text, "Unknown tool name: 'x'");
    let result = b.messages[0].tool_result.as_ref().unwrap();
    assert_eq!((result.tool_use_id.as_deref(), result.is_error), (Some("c9"), true));
}
