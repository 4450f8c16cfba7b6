use std::path::{Path, PathBuf};

use super::*;
use crate::transcript::tail::Lines;
use crate::transcript::{Format, read_file};

/// Recorded from Gemini CLI 0.61.0 against a mock model: a greeting, a
/// `list_directory` call, a `run_shell_command` call allowed at its
/// prompt, `/quit`, then `--resume` of the session and one more prompt.
fn chat() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/transcripts/gemini/session-2026-11-29T11-52-33573076.jsonl")
}

const SESSION: &str = "33573076-291a-44d6-9e5b-e71638d1cb5b";

/// Reads `bytes` fed in pieces ending at `cuts`, pausing after each piece
/// as a tail does when it reaches the end of the file for now.
fn read_in_pieces(bytes: &[u8], cuts: &[usize]) -> Vec<Message> {
    let mut reader = GeminiReader::default();
    let mut kept: Vec<Message> = Vec::new();
    let mut offset = 0u64;
    let mut state = Value::Null;
    let ends = cuts.iter().copied().filter(|c| *c < bytes.len());
    for end in ends.chain([bytes.len()]) {
        // Each piece is a new read from where the last one stopped.
        reader.restore(&state);
        let mut lines = Lines::at(offset);
        let mut out = Batch::default();
        lines.feed(&bytes[offset as usize..end], offset, &mut reader, &mut out);
        let resume = reader
            .pause(&mut out)
            .map_or(lines.consumed(), |r| r.min(lines.consumed()));
        let keep = out.messages.len() - out.provisional;
        kept.extend(out.messages.drain(..keep));
        if end == bytes.len() {
            kept.extend(out.messages);
        }
        offset = resume;
        state = reader.state();
    }
    kept
}

#[test]
fn a_real_chat_reads_into_prompts_replies_tool_calls_and_results() {
    let b = read_file(&chat(), Format::Gemini).unwrap();
    let got: Vec<(&str, &str)> = b
        .messages
        .iter()
        .map(|m| (m.role.as_str(), m.text.lines().next().unwrap_or("")))
        .collect();
    assert_eq!(
        got,
        [
            ("system", "<session_context>"),
            ("user", "hello narwhal"),
            ("assistant", "Mock reply to: hello narwhal"),
            ("user", "LISTDIR please"),
            ("assistant", "Looking."),
            ("tool", "Directory listing for /home/user/narwhal:"),
            (
                "assistant",
                "Tool said: {\"output\": \"Directory listing for /home/user/narwhal:\\nnarwhal.rs"
            ),
            ("user", "SHELL now"),
            ("assistant", ""),
            ("tool", "<untrusted_context>"),
            (
                "assistant",
                "Tool said: {\"output\": \"<untrusted_context>\\nOutput: (empty)\\nProcess Gr"
            ),
            ("user", "back again"),
            ("assistant", "Mock reply to: back again"),
        ]
    );
    assert_eq!(b.session_id.as_deref(), Some(SESSION));
    assert_eq!(b.model.as_deref(), Some("gemini-3.1-pro-preview"));
    let ls = &b.messages[4].tool_calls[0];
    assert_eq!(ls.name, "list_directory");
    assert_eq!(ls.input["dir_path"], ".");
    let result = b.messages[5].tool_result.as_ref().unwrap();
    assert_eq!(result.tool_use_id, ls.id);
    assert!(!result.is_error);
    assert!(b.messages[5].text.contains("narwhal.rs (0 bytes)"));
    assert_eq!(b.messages[8].tool_calls[0].name, "run_shell_command");
    assert_eq!(b.messages[8].tool_calls[0].input["command"], "touch perm-marker");
    assert_eq!(
        b.messages[1].at_ms,
        model::parse_time("2026-11-29T11:52:10.039Z"),
        "each message has its own time"
    );
    // Six replies of 40 input tokens (10 of them cached) and 7 output, each
    // counted once although four were written twice.
    assert_eq!(
        b.usage,
        Usage {
            input: 180,
            output: 42,
            cache_read: 60,
            cache_write: 0
        }
    );
    assert_eq!(b.stats.malformed, 0);
    assert_eq!(b.stats.unknown, 0);
}

#[test]
fn a_chat_read_a_line_at_a_time_reads_as_the_whole_file() {
    let bytes = std::fs::read(chat()).unwrap();
    let whole = read_file(&chat(), Format::Gemini).unwrap().messages;
    let ends: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    let pieces = read_in_pieces(&bytes, &ends);
    assert_eq!(pieces, whole);
}

#[test]
fn the_newest_message_stays_provisional_until_another_follows() {
    let bytes = std::fs::read(chat()).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    // Up to the first version of the `list_directory` reply: "Looking."
    // without its tool call yet.
    let cut: usize = text.split_inclusive('\n').take(10).map(str::len).sum();
    let mut reader = GeminiReader::default();
    let mut lines = Lines::default();
    let mut out = Batch::default();
    lines.feed(&text.as_bytes()[..cut], 0, &mut reader, &mut out);
    let resume = reader.pause(&mut out).unwrap();
    assert_eq!(out.provisional, 1);
    let held = out.messages.last().unwrap();
    assert_eq!(held.text, "Looking.");
    assert!(held.tool_calls.is_empty());
    assert_eq!(
        &text[resume as usize..][..7],
        "{\"id\":\"",
        "resumes at the message's line"
    );

    // Read again from there with the next version: the call and its result.
    let state = reader.state();
    let mut again = GeminiReader::default();
    again.restore(&state);
    let mut lines = Lines::at(resume);
    let mut out2 = Batch::default();
    let next: usize = text.split_inclusive('\n').take(12).map(str::len).sum();
    lines.feed(&text.as_bytes()[resume as usize..next], resume, &mut again, &mut out2);
    again.pause(&mut out2);
    let roles: Vec<&str> = out2.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["assistant", "tool"]);
    assert_eq!(out2.messages[0].tool_calls[0].name, "list_directory");
    assert!(
        out2.usage.is_zero(),
        "its tokens were counted on the first read: {:?}",
        out.usage
    );
}

#[test]
fn a_resume_that_sets_the_whole_history_again_adds_nothing() {
    let bytes = std::fs::read(chat()).unwrap();
    let whole = read_file(&chat(), Format::Gemini).unwrap().messages;
    let texts: Vec<&str> = whole.iter().map(|m| m.text.as_str()).collect();
    for text in ["hello narwhal", "LISTDIR please", "SHELL now"] {
        assert_eq!(texts.iter().filter(|t| **t == text).count(), 1, "{text}");
    }
    // Read in pieces cut just after the resume's `$set` of messages.
    let text = String::from_utf8(bytes.clone()).unwrap();
    let cut: usize = text.split_inclusive('\n').take(26).map(str::len).sum();
    assert_eq!(read_in_pieces(&bytes, &[cut]), whole);
}

#[test]
fn a_rewind_drops_the_message_still_held() {
    let doc = concat!(
        r#"{"sessionId":"s1","projectHash":"h","startTime":"2026-11-29T11:00:00Z","lastUpdated":"2026-11-29T11:00:00Z","kind":"main"}"#,
        "\n",
        r#"{"id":"u1","timestamp":"2026-11-29T11:00:01Z","type":"user","content":[{"text":"first"}]}"#,
        "\n",
        r#"{"id":"u2","timestamp":"2026-11-29T11:00:02Z","type":"user","content":[{"text":"second"}]}"#,
        "\n",
        r#"{"$rewindTo":"u2"}"#,
        "\n",
        r#"{"id":"i1","timestamp":"2026-11-29T11:00:03Z","type":"info","content":"Rewound."}"#,
        "\n",
    );
    let texts: Vec<String> = read_in_pieces(doc.as_bytes(), &[])
        .into_iter()
        .map(|m| m.text)
        .collect();
    assert_eq!(texts, ["first", "Rewound."]);
}

#[test]
fn chats_are_told_apart_by_their_extension() {
    assert!(is_document(Path::new(
        "/h/.gemini/tmp/p/chats/session-2026-01-01T00-00-abcd1234.json"
    )));
    let chat = Path::new("/h/.gemini/tmp/narwhal/chats/session-2026-11-29T11-52-33573076.jsonl");
    assert!(!is_document(chat));
    assert_eq!(Format::detect(chat), Some(Format::Gemini));
}

/// The whole-document shape older versions wrote (and 0.61 still reads).
const DOCUMENT: &str = r#"{"sessionId": "old-1", "projectHash": "h", "messages": [
    {"id": "a", "timestamp": "2026-11-29T08:00:01.000Z", "type": "user", "content": "what is here?"},
    {"id": "b", "timestamp": "2026-11-29T08:00:03.000Z", "type": "gemini", "content": "Looking.",
     "model": "gemini-2.5-pro", "tokens": {"input": 120, "output": 8, "cached": 20, "thoughts": 2},
     "toolCalls": [{"id": "c1", "name": "read_file", "args": {"absolute_path": "/nope"},
                    "status": "error", "resultDisplay": "File not found: /nope"}]},
    {"id": "c", "timestamp": "2026-11-29T08:00:09.000Z", "type": "gemini", "content": [{"text": "Nothing."}]}
]}"#;

#[test]
fn a_whole_document_chat_reads_too_its_last_record_provisional() {
    let read = parse(DOCUMENT.as_bytes(), 0, false);
    let b = &read.batch;
    let roles: Vec<&str> = b.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(b.session_id.as_deref(), Some("old-1"));
    assert!(b.messages[2].tool_result.as_ref().unwrap().is_error);
    assert_eq!(b.messages[2].text, "File not found: /nope");
    assert_eq!(b.provisional, 1);
    assert_eq!(read.records_done, 2);
    assert_eq!(
        b.usage,
        Usage {
            input: 100,
            output: 10,
            cache_read: 20,
            cache_write: 0
        }
    );
    let rest = parse(DOCUMENT.as_bytes(), read.records_done, true);
    assert_eq!(rest.batch.messages.len(), 1);
    assert_eq!(rest.batch.messages[0].text, "Nothing.");
}

#[test]
fn a_half_written_document_is_counted_and_read_later() {
    let read = parse(&DOCUMENT.as_bytes()[..DOCUMENT.len() / 2], 0, false);
    assert_eq!(read.batch.stats.malformed, 1);
    assert_eq!(read.records_done, 0);
    assert!(read.batch.messages.is_empty());
}

#[test]
fn the_older_checkpoint_shape_reads_too() {
    let doc = br#"[{"role":"user","parts":[{"text":"hi"}]},
        {"role":"model","parts":[{"text":"calling"},{"functionCall":{"name":"ls","args":{"path":"."}}}]},
        {"role":"user","parts":[{"functionResponse":{"name":"ls","response":{"output":"a b"}}}]}]"#;
    let b = parse(doc, 0, true).batch;
    let roles: Vec<&str> = b.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert_eq!(b.messages[1].tool_calls[0].name, "ls");
    assert_eq!(b.messages[2].text, "a b");
}
