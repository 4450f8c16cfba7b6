//! `agents transcript` and `agents search`: the harnesses' own conversations
//! as the daemon indexed them.

use std::time::Duration;

use anyhow::Result;

use crate::api::{
    ApiError, ErrorCode, SearchParams, SearchResults, TranscriptMessage, TranscriptPage, TranscriptParams, method,
};
use crate::client::Client;
use crate::paths::Paths;
use crate::transcript::Role;
use crate::transcript::model::input_summary;

/// How long one follow request waits for the transcript to grow before it
/// asks again (the daemon caps it at 30 s).
const FOLLOW_WAIT_MS: u64 = 25_000;

/// How often a follower asks again while a remote run's link is down (the
/// daemon reconnects on its own; this only asks whether it has).
const LINK_RETRY: Duration = Duration::from_secs(1);

/// A tool's output longer than this many lines is folded in human output.
const RESULT_LINES: usize = 12;

pub async fn transcript(paths: &Paths, id: String, follow: bool, json: bool) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let mut after: Option<i64> = None;
    let mut first = true;
    // Following a remote run's transcript while its host's link is down.
    let mut link_down = false;
    loop {
        let answer: Result<TranscriptPage, ApiError> = client
            .call::<method::TranscriptRead>(TranscriptParams {
                id: id.clone(),
                // Following: even an empty session waits for its first message.
                after_seq: if follow { Some(after.unwrap_or(-1)) } else { after },
                limit: None,
                wait_ms: (follow && !first).then_some(FOLLOW_WAIT_MS),
            })
            .await;
        let page = match answer {
            // The conversation lives on the host and carries on there: a
            // follower waits for the link like an attached pane does.
            Err(e) if follow && !first && e.code == ErrorCode::HostUnreachable => {
                if !link_down {
                    say_err!("agents: {}; still following", e.message);
                    link_down = true;
                }
                tokio::time::sleep(LINK_RETRY).await;
                continue;
            }
            answer => answer?,
        };
        if std::mem::take(&mut link_down) {
            say_err!("agents: link back; following from where it stopped");
        }
        if first && !json {
            crate::cli::print::out(&crate::text::inert(&session_header(&page)));
        }
        first = false;
        for m in &page.messages {
            if json {
                crate::cli::print::out(&format!("{}\n", serde_json::to_string(m)?));
            } else {
                crate::cli::print::out(&crate::text::inert(&render(m)));
            }
        }
        after = page.last_seq.or(after);
        if !page.more && !follow {
            return Ok(0);
        }
    }
}

fn session_header(page: &TranscriptPage) -> String {
    let s = &page.session;
    let t = &s.tokens;
    let mut out = format!(
        "session {} ({}{}) · {} messages · tokens in {} out {} cache read {} write {}\n",
        s.session_id,
        s.format.as_str(),
        s.model.as_deref().map(|m| format!(", {m}")).unwrap_or_default(),
        s.messages,
        t.input,
        t.output,
        t.cache_read,
        t.cache_write
    );
    for src in s.sources.iter().filter(|src| src.malformed > 0) {
        out.push_str(&format!(
            "  note: {} malformed line(s) skipped in {}\n",
            src.malformed, src.path
        ));
    }
    out
}

/// One message for a person: a header line, the text, each tool call folded
/// to one line, a failed tool result marked.
pub fn render(m: &TranscriptMessage) -> String {
    let indent = if m.sidechain { "  " } else { "" };
    let mut head = format!("{indent}── {}", m.role.as_str());
    if let Some(agent) = &m.agent_id {
        head.push_str(&format!(" · agent {}", agent.chars().take(8).collect::<String>()));
    }
    if m.role == Role::Assistant
        && let Some(model) = &m.model
    {
        head.push_str(&format!(" · {model}"));
    }
    if let Some(at) = &m.at {
        // RFC 3339 → the time of day.
        head.push_str(&format!(" · {}", at.get(11..19).unwrap_or(at)));
    }
    let failed = m.tool_result.as_ref().is_some_and(|r| r.is_error);
    if failed {
        head.push_str(" · ✗ error");
    }
    let mut out = format!("{head}\n");
    let lines: Vec<&str> = m.text.lines().collect();
    let shown = if m.role == Role::Tool && lines.len() > RESULT_LINES {
        RESULT_LINES
    } else {
        lines.len()
    };
    for line in &lines[..shown] {
        out.push_str(&format!("{indent}{line}\n"));
    }
    if shown < lines.len() {
        out.push_str(&format!("{indent}… ({} more lines)\n", lines.len() - shown));
    }
    for call in &m.tool_calls {
        out.push_str(&format!(
            "{indent}⏵ {}({})\n",
            call.name,
            input_summary(&call.input, 60)
        ));
    }
    out.push('\n');
    out
}

pub async fn search(paths: &Paths, words: Vec<String>, within: Option<String>, raw: bool, json: bool) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let results: SearchResults = client
        .call::<method::TranscriptsSearch>(SearchParams {
            query: words.join(" "),
            within,
            raw,
            ..SearchParams::default()
        })
        .await?;
    if json {
        crate::cli::print::out(&format!("{}\n", serde_json::to_string_pretty(&results)?));
        return Ok(0);
    }
    let hits = results.hits;
    if hits.is_empty() {
        say!("no matches");
        super::print::unreachable_hosts(&results.hosts_unreachable, "matches");
        super::print::unindexed(results.unindexed_bytes);
        return Ok(1);
    }
    for h in &hits {
        let mut run = h
            .run_id
            .as_deref()
            .map(|r| format!(" run {}", r.chars().take(10).collect::<String>()))
            .unwrap_or_default();
        if h.host != "local" {
            run.push_str(&format!(" on {}", h.host));
        }
        let at = h.at.as_deref().and_then(|a| a.get(..19)).unwrap_or("");
        say!(
            "{}#{}{run} {} {at}\n  {}",
            h.session_id,
            h.seq,
            h.role.as_str(),
            h.snippet.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    super::print::unreachable_hosts(&results.hosts_unreachable, "matches");
    super::print::unindexed(results.unindexed_bytes);
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{ToolCall, ToolResult};

    fn message(role: Role, text: &str) -> TranscriptMessage {
        TranscriptMessage {
            seq: 0,
            session_id: "s".into(),
            run_id: None,
            role,
            text: text.into(),
            tool_calls: Vec::new(),
            tool_result: None,
            usage: None,
            model: None,
            at: Some("2026-11-29T07:48:45.739Z".into()),
            uuid: None,
            parent_uuid: None,
            sidechain: false,
            agent_id: None,
            parent_tool_use_id: None,
            source: "/x.jsonl".into(),
            offset: 0,
        }
    }

    #[test]
    fn tool_calls_fold_to_one_line_and_errors_are_marked() {
        let mut m = message(Role::Assistant, "");
        m.model = Some("claude-opus-4-8".into());
        m.tool_calls.push(ToolCall {
            id: Some("toolu_1".into()),
            name: "Bash".into(),
            input: serde_json::json!({ "command": "cargo test\n  --quiet", "description": "tests" }),
        });
        assert_eq!(
            render(&m),
            "── assistant · claude-opus-4-8 · 07:48:45\n⏵ Bash(cargo test --quiet)\n\n"
        );
        let mut r = message(Role::Tool, "FAILED");
        r.tool_result = Some(ToolResult {
            tool_use_id: Some("toolu_1".into()),
            is_error: true,
            agent_id: None,
        });
        assert_eq!(render(&r), "── tool · 07:48:45 · ✗ error\nFAILED\n\n");
    }

    #[test]
    fn long_tool_output_is_folded_and_sidechains_indented() {
        let text: String = (0..30).map(|i| format!("line {i}\n")).collect();
        let mut r = message(Role::Tool, &text);
        r.sidechain = true;
        r.agent_id = Some("a0b1c2d3e4f5".into());
        let out = render(&r);
        assert!(out.starts_with("  ── tool · agent a0b1c2d3 · 07:48:45\n  line 0\n"));
        assert!(out.contains("  … (18 more lines)\n"), "{out}");
    }
}
