//! Recovery by context reconstruction (docs/design.md §7): when a session cannot
//! be resumed natively — its harness cannot resume, its transcript file is
//! gone, or the harness installed now is a version that cannot read it — a
//! new conversation of the *same* family is started with, as its first
//! prompt, the recent part of the old one from the transcript index.

use std::sync::Arc;

use super::Engine;
use crate::api::{ApiError, ErrorCode, TranscriptMessage};
use crate::harness::Adapter;
use crate::store::runs::RunRow;
use crate::transcript::Role;

/// How much of the old conversation is given back, newest kept. Chosen to
/// carry the last few turns of work while staying a small fraction of any
/// harness's context window and a sane command-line argument (Linux takes
/// up to 128 KiB per argument).
pub const MAX_MESSAGES: usize = 40;
pub const MAX_CHARS: usize = 12_000;
/// One message's text, one tool call's input, one tool result's text.
const TEXT_CHARS: usize = 1_500;
const CALL_CHARS: usize = 120;
const RESULT_CHARS: usize = 300;

/// Why a session cannot be resumed natively, or `None` when it can.
pub async fn native_blocker(
    engine: &Arc<Engine>,
    adapter: &'static dyn Adapter,
    session: &str,
    last: &RunRow,
    env: &[(String, String)],
) -> Result<Option<String>, ApiError> {
    if let Err(why) = adapter.resume_args(session) {
        return Ok(Some(why));
    }
    let transcript = engine
        .store
        .sessions()
        .transcript_path(session)
        .await
        .map_err(ApiError::internal)?;
    let info = engine
        .store
        .harness()
        .info(&last.id)
        .await
        .map_err(ApiError::internal)?;
    if let Some(path) = transcript
        && !crate::transcript::source_exists(std::path::Path::new(&path))
    {
        return Ok(Some(format!("its transcript {path} is gone")));
    }
    let Some(recorded) = info.version else {
        return Ok(None);
    };
    let profile = info.profile.and_then(|p| engine.config().profiles.get(&p).cloned());
    let program = profile
        .and_then(|p| p.binary)
        .unwrap_or_else(|| adapter.program().to_string());
    let path_var = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.clone());
    let Some(binary) = crate::harness::find_binary(&program, path_var.as_deref()) else {
        // Not installed at all: the start says so (blocked), whichever way.
        return Ok(None);
    };
    let current = tokio::task::spawn_blocking(move || crate::harness::version::version_of(&binary))
        .await
        .ok()
        .flatten();
    Ok(current.and_then(|current| {
        (!adapter.resume_compatible(&recorded, &current)).then(|| {
            format!(
                "it was written by {} {recorded}, which {current} cannot resume",
                adapter.family()
            )
        })
    }))
}

/// The recent part of a session's conversation, as the store has it
/// (subagents' sidechains left out), oldest first, and how many messages
/// the session has in all.
pub async fn recent_messages(engine: &Arc<Engine>, session: &str) -> Result<(Vec<TranscriptMessage>, i64), ApiError> {
    engine
        .store
        .transcripts()
        .recent(session, MAX_MESSAGES)
        .await
        .map_err(ApiError::internal)
}

/// The first prompt of the new conversation: what happened, then the old
/// conversation's recent messages, tool calls summarised to one line each.
/// Pure; bounded by [`MAX_CHARS`] (oldest messages dropped first).
pub fn reconstruct(family: &str, session: &str, why: &str, messages: &[TranscriptMessage], total: i64) -> String {
    let mut blocks: Vec<String> = messages.iter().map(block).filter(|b| !b.is_empty()).collect();
    let head = |kept: usize| {
        format!(
            "This conversation continues an earlier {family} session ({session}) that cannot be resumed natively: \
             {why}. Below is its most recent part, reconstructed from the agents transcript index \
             ({kept} of {total} messages; tool calls summarised, long texts cut). Read it, then carry on \
             where it left off; say briefly what you understand the state of the work to be.\n\n\
             --- earlier conversation ---\n"
        )
    };
    const TAIL: &str = "--- end of earlier conversation ---\n";
    while !blocks.is_empty()
        && chars(&head(blocks.len())) + blocks.iter().map(|b| chars(b)).sum::<usize>() + TAIL.len() > MAX_CHARS
    {
        blocks.remove(0);
    }
    let mut out = head(blocks.len());
    for b in &blocks {
        out.push_str(b);
    }
    out.push_str(TAIL);
    out
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn cut(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max).collect();
    s.push_str(" […]");
    s
}

fn one_line(text: &str, max: usize) -> String {
    cut(&text.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

/// One message: `[user]`, `[assistant]` with its tool calls, or a tool result.
fn block(m: &TranscriptMessage) -> String {
    let mut out = String::new();
    match m.role {
        Role::Tool => {
            let error = m.tool_result.as_ref().is_some_and(|r| r.is_error);
            let label = if error { "tool error" } else { "tool result" };
            out.push_str(&format!("[{label}] {}\n", one_line(&m.text, RESULT_CHARS)));
        }
        Role::User | Role::Assistant => {
            let who = if m.role == Role::User { "user" } else { "assistant" };
            if !m.text.trim().is_empty() {
                out.push_str(&format!("[{who}] {}\n", cut(&m.text, TEXT_CHARS)));
            }
            for call in &m.tool_calls {
                let input = match &call.input {
                    serde_json::Value::Object(map) => map
                        .iter()
                        .map(|(k, v)| {
                            format!(
                                "{k}={}",
                                v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                out.push_str(&format!("  [called {}: {}]\n", call.name, one_line(&input, CALL_CHARS)));
            }
        }
        Role::System => {}
    }
    out
}

/// The error when neither way works: nothing indexed to rebuild from.
pub fn nothing_to_rebuild(session: &str, why: &str) -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        format!(
            "session {session} cannot be resumed natively ({why}) and none of its conversation was indexed to reconstruct it from"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{ToolCall, ToolResult};

    fn msg(seq: i64, role: Role, text: &str) -> TranscriptMessage {
        TranscriptMessage {
            seq,
            session_id: "S".into(),
            run_id: None,
            role,
            text: text.into(),
            tool_calls: Vec::new(),
            tool_result: None,
            usage: None,
            model: None,
            at: None,
            uuid: None,
            parent_uuid: None,
            sidechain: false,
            agent_id: None,
            parent_tool_use_id: None,
            source: "s.jsonl".into(),
            offset: 0,
        }
    }

    #[test]
    fn the_context_names_the_session_and_summarises_tool_calls() {
        let mut asks = msg(1, Role::Assistant, "Running the tests.");
        asks.tool_calls.push(ToolCall {
            id: Some("toolu_1".into()),
            name: "Bash".into(),
            input: serde_json::json!({"command": "cargo test\n  --all"}),
        });
        let mut result = msg(2, Role::Tool, "3 passed\n1 failed");
        result.tool_result = Some(ToolResult {
            tool_use_id: Some("toolu_1".into()),
            is_error: false,
            agent_id: None,
        });
        let messages = [msg(0, Role::User, "fix the parser tests"), asks, result];
        let text = reconstruct("claude", "S1", "its transcript is gone", &messages, 3);
        assert!(text.contains("earlier claude session (S1)"), "{text}");
        assert!(text.contains("its transcript is gone"));
        assert!(text.contains("(3 of 3 messages"));
        assert!(text.contains("[user] fix the parser tests\n"));
        assert!(text.contains("  [called Bash: command=cargo test --all]\n"), "{text}");
        assert!(text.contains("[tool result] 3 passed 1 failed\n"), "{text}");
        assert!(text.ends_with("--- end of earlier conversation ---\n"));
    }

    #[test]
    fn the_context_is_bounded_and_keeps_the_newest_messages() {
        let long = "word ".repeat(1000);
        let messages: Vec<TranscriptMessage> = (0..40)
            .map(|i| msg(i, Role::User, &format!("message {i} {long}")))
            .collect();
        let text = reconstruct("claude", "S1", "why", &messages, 400);
        assert!(text.chars().count() <= MAX_CHARS, "{}", text.chars().count());
        assert!(text.contains("message 39 "), "the newest is kept");
        assert!(!text.contains("message 0 "), "the oldest is dropped");
        assert!(text.contains(" […]"), "long texts are cut");
    }
}
