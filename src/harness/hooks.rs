//! What a harness hook says, in our words. Pure: a hook's JSON payload in,
//! a small bounded [`HookReport`] out (never whole messages, tool inputs or
//! outputs), and the activity status each hook event stands for (docs/design.md §7).
//! `agents hook` builds the report in the harness's process, so only the
//! report crosses the socket; the daemon bounds it again.

use serde_json::Value;

use crate::api::{ActivityStatus, HookReport};

/// Longest id kept (session, agent, run): real ones are 17–40 characters.
const MAX_ID: usize = 128;
/// Longest path kept.
const MAX_PATH: usize = 4096;
/// A harness's own notice ("Claude needs your permission"), cut to a line.
const MAX_MESSAGE: usize = 160;
/// Enough of the first prompt to name a run after it.
const MAX_PROMPT: usize = 200;

/// Reads a hook payload. `event` is what the hook was installed as; the
/// payload's own `hook_event_name` (Claude) or `type` (Codex `notify`) wins.
pub fn report_from(event: &str, payload: &Value) -> HookReport {
    let text = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_string);
    let codex = event == super::codex::NOTIFY_EVENT;
    let mut report = HookReport {
        event: text("hook_event_name")
            .or_else(|| if codex { text("type") } else { None })
            .unwrap_or_else(|| event.to_string()),
        session_id: text("session_id").or_else(|| text("thread-id")),
        transcript_path: text("transcript_path"),
        cwd: text("cwd"),
        tool: text("tool_name"),
        notification_type: text("notification_type"),
        message: text("message"),
        source: text("source").or_else(|| text("reason")),
        agent_id: text("agent_id"),
        agent_type: text("agent_type"),
        agent_transcript_path: text("agent_transcript_path"),
        prompt: text("prompt").or_else(|| {
            payload
                .get("input-messages")
                .and_then(|m| m.get(0))
                .and_then(Value::as_str)
                .map(str::to_string)
        }),
        background: background_tasks(payload),
        ..HookReport::default()
    };
    bound(&mut report);
    report
}

/// The most background tasks a report names, and the longest kind.
const MAX_BACKGROUND: usize = 16;
const MAX_KIND: usize = 64;

/// The kind of each task Claude's `Stop` says is still in flight
/// (`background_tasks`: `type` "subagent", "shell", "monitor", …, and a
/// subagent's `agent_type`): the session is paused waiting for that work
/// to wake it, not done.
fn background_tasks(payload: &Value) -> Vec<String> {
    let Some(tasks) = payload.get("background_tasks").and_then(Value::as_array) else {
        return Vec::new();
    };
    let field = |task: &Value, key: &str| task.get(key).and_then(Value::as_str).map(str::to_string);
    tasks
        .iter()
        .take(MAX_BACKGROUND)
        .map(|task| match (field(task, "type"), field(task, "agent_type")) {
            (Some(kind), Some(agent)) => format!("{kind} {agent}"),
            (Some(kind), None) => kind,
            (None, _) => "task".to_string(),
        })
        .collect()
}

/// Cuts every field to its limit and drops values that are not what they
/// claim to be (an id with odd characters, a relative path). The daemon
/// calls this again on what it receives: a peer is never trusted.
pub fn bound(r: &mut HookReport) {
    let word = |v: &mut Option<String>, max: usize| {
        if v.as_ref().is_some_and(|s| {
            s.is_empty()
                || s.len() > max
                || !s
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
        }) {
            *v = None;
        }
    };
    let path = |v: &mut Option<String>| {
        if v.as_ref()
            .is_some_and(|p| p.len() > MAX_PATH || !p.starts_with('/') || p.contains('\0') || p.contains("/../"))
        {
            *v = None;
        }
    };
    let prose = |v: &mut Option<String>, max: usize| {
        if let Some(s) = v {
            let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
            *s = crate::text::bounded(&flat, max);
        }
    };
    if r.event.is_empty()
        || r.event.len() > 64
        || !r
            .event
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
    {
        r.event = "unknown".into();
    }
    word(&mut r.run, MAX_ID);
    word(&mut r.launch_id, MAX_ID);
    word(&mut r.session_id, MAX_ID);
    word(&mut r.agent_id, MAX_ID);
    word(&mut r.tool, 64);
    word(&mut r.notification_type, 64);
    word(&mut r.source, 64);
    word(&mut r.agent_type, 64);
    path(&mut r.transcript_path);
    path(&mut r.cwd);
    path(&mut r.agent_transcript_path);
    prose(&mut r.message, MAX_MESSAGE);
    prose(&mut r.prompt, MAX_PROMPT);
    r.background.truncate(MAX_BACKGROUND);
    for kind in &mut r.background {
        let flat: String = kind.split_whitespace().collect::<Vec<_>>().join(" ");
        *kind = crate::text::bounded(&flat, MAX_KIND);
    }
}

/// The status a hook event stands for, with the words that say why.
/// `None`: the event says nothing about what the agent is doing.
pub fn status_of(r: &HookReport) -> Option<(ActivityStatus, String)> {
    let with = |detail: &Option<String>| match detail {
        Some(d) => format!("hook {} {d}", r.event),
        None => format!("hook {}", r.event),
    };
    let in_parens = |detail: &Option<String>| match detail {
        Some(d) => format!("hook {} ({d})", r.event),
        None => format!("hook {}", r.event),
    };
    Some(match r.event.as_str() {
        "UserPromptSubmit" => (ActivityStatus::Working, with(&None)),
        "PreToolUse" | "PostToolUse" => (ActivityStatus::Working, with(&r.tool)),
        "SubagentStart" | "SubagentStop" => (ActivityStatus::Working, with(&r.agent_type)),
        "PermissionRequest" => (ActivityStatus::NeedsApproval, with(&r.tool)),
        "Notification" => match r.notification_type.as_deref() {
            Some("permission_prompt") => (ActivityStatus::NeedsApproval, in_parens(&r.notification_type)),
            // "Claude is waiting for your input", a minute after a turn
            // ended: the agent is idle at its prompt, asking nothing.
            Some("idle_prompt") => (ActivityStatus::Idle, in_parens(&r.notification_type)),
            Some("elicitation_dialog") => (ActivityStatus::WaitingInput, in_parens(&r.notification_type)),
            _ => return None,
        },
        // The turn stopped with work still in flight: the session waits
        // for it to wake it (Claude's background subagents and shells).
        "Stop" if !r.background.is_empty() => (ActivityStatus::Working, background_words(r)),
        // The turn ended: the agent sits at its prompt.
        "Stop" | "agent-turn-complete" => (ActivityStatus::Idle, with(&None)),
        "SessionStart" | "SessionEnd" => (ActivityStatus::Idle, in_parens(&r.source)),
        _ => return None,
    })
}

/// "hook Stop, 2 background tasks running (subagent general-purpose, shell)".
fn background_words(r: &HookReport) -> String {
    let n = r.background.len();
    let tasks = if n == 1 { "task" } else { "tasks" };
    format!(
        "hook {}, {n} background {tasks} running ({})",
        r.event,
        r.background.join(", ")
    )
}

/// The hook ran inside one of the session's subagents (Claude names its
/// `agent_id` then), not in the main conversation.
pub fn from_subagent(r: &HookReport) -> bool {
    r.agent_id.is_some()
}

/// The `HOOK` event's data: what happened, never what was said.
pub fn summary(r: &HookReport) -> Value {
    let mut data = serde_json::Map::new();
    data.insert("event".into(), r.event.clone().into());
    let mut put = |key: &str, v: &Option<String>| {
        if let Some(v) = v {
            data.insert(key.into(), v.clone().into());
        }
    };
    put("tool", &r.tool);
    put("notification_type", &r.notification_type);
    put("source", &r.source);
    put("agent_id", &r.agent_id);
    put("agent_type", &r.agent_type);
    put("session_id", &r.session_id);
    if let Some(p) = &r.prompt {
        data.insert("prompt_chars".into(), p.chars().count().into());
    }
    if !r.background.is_empty() {
        data.insert("background".into(), r.background.clone().into());
    }
    Value::Object(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of `shared/reference/claude-code-2.1.197/hooks.jsonl`, shortened.
    const PERMISSION_REQUEST: &str = r#"{"session_id": "22222222-3333-4444-8555-666666666666", "transcript_path": "/home/user/.claude/projects/-home-user-project/22222222-3333-4444-8555-666666666666.jsonl", "cwd": "/home/user/project", "permission_mode": "default", "hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "touch perm-marker", "description": "Create a marker file"}}"#;
    const NOTIFICATION: &str = r#"{"session_id": "22222222-3333-4444-8555-666666666666", "cwd": "/home/user/project", "hook_event_name": "Notification", "message": "Claude needs your permission", "notification_type": "permission_prompt"}"#;
    const SUBAGENT_STOP: &str = r#"{"session_id": "22222222-3333-4444-8555-666666666666", "agent_id": "aabcf44c67ae8ff7a", "agent_type": "general-purpose", "hook_event_name": "SubagentStop", "agent_transcript_path": "/home/user/.claude/projects/-home-user-project/22222222-3333-4444-8555-666666666666/subagents/agent-aabcf44c67ae8ff7a.jsonl", "last_assistant_message": "Subagent result: 3 files."}"#;

    fn report(event: &str, payload: &str) -> HookReport {
        report_from(event, &serde_json::from_str(payload).unwrap())
    }

    #[test]
    fn claude_payloads_become_small_reports_and_statuses() {
        let r = report("PermissionRequest", PERMISSION_REQUEST);
        assert_eq!(r.session_id.as_deref(), Some("22222222-3333-4444-8555-666666666666"));
        assert!(r.transcript_path.as_deref().unwrap().ends_with(".jsonl"));
        assert_eq!(r.tool.as_deref(), Some("Bash"));
        assert_eq!(
            status_of(&r),
            Some((ActivityStatus::NeedsApproval, "hook PermissionRequest Bash".into()))
        );
        let data = summary(&r).to_string();
        assert!(!data.contains("touch perm-marker"), "tool input never stored: {data}");

        let n = report("Notification", NOTIFICATION);
        assert_eq!(
            status_of(&n),
            Some((
                ActivityStatus::NeedsApproval,
                "hook Notification (permission_prompt)".into()
            ))
        );

        let s = report("SubagentStop", SUBAGENT_STOP);
        assert_eq!(s.agent_id.as_deref(), Some("aabcf44c67ae8ff7a"));
        assert!(
            s.agent_transcript_path
                .as_deref()
                .unwrap()
                .contains("/subagents/agent-")
        );
        assert!(!summary(&s).to_string().contains("Subagent result"));
        assert!(from_subagent(&s));
        assert!(!from_subagent(&n));
    }

    /// Claude Code 2.1.197's `Stop` names the work still in flight; its
    /// schema, from its shipped code: `{id, type, status, description,
    /// command?, agent_type?}`.
    #[test]
    fn a_stop_with_background_work_in_flight_is_working_and_names_only_its_kinds() {
        let stop = r#"{"session_id": "s1", "hook_event_name": "Stop", "background_tasks": [
            {"id": "t1", "type": "subagent", "status": "running", "description": "review the diff", "agent_type": "code-reviewer"},
            {"id": "t2", "type": "shell", "status": "running", "description": "tests", "command": "cargo test --secret-flag"}
        ], "session_crons": []}"#;
        let r = report("Stop", stop);
        assert_eq!(r.background, ["subagent code-reviewer", "shell"]);
        assert_eq!(
            status_of(&r),
            Some((
                ActivityStatus::Working,
                "hook Stop, 2 background tasks running (subagent code-reviewer, shell)".into()
            ))
        );
        let data = summary(&r).to_string();
        assert!(
            !data.contains("cargo test") && !data.contains("review the diff"),
            "{data}"
        );
        let done = report(
            "Stop",
            r#"{"session_id": "s1", "hook_event_name": "Stop", "background_tasks": []}"#,
        );
        assert_eq!(status_of(&done), Some((ActivityStatus::Idle, "hook Stop".into())));
    }

    #[test]
    fn every_installed_claude_hook_has_a_meaning() {
        let expect = [
            ("SessionStart", Some(ActivityStatus::Idle)),
            ("UserPromptSubmit", Some(ActivityStatus::Working)),
            ("PreToolUse", Some(ActivityStatus::Working)),
            ("PermissionRequest", Some(ActivityStatus::NeedsApproval)),
            ("PostToolUse", Some(ActivityStatus::Working)),
            ("Notification", None),
            ("Stop", Some(ActivityStatus::Idle)),
            ("SubagentStart", Some(ActivityStatus::Working)),
            ("SubagentStop", Some(ActivityStatus::Working)),
            ("SessionEnd", Some(ActivityStatus::Idle)),
        ];
        assert_eq!(expect.len(), super::super::claude::HOOK_EVENTS.len());
        for (event, status) in expect {
            let r = report(event, "{}");
            assert_eq!(status_of(&r).map(|s| s.0), status, "{event}");
        }
        let idle = report("Notification", r#"{"notification_type": "idle_prompt"}"#);
        assert_eq!(
            status_of(&idle).unwrap().0,
            ActivityStatus::Idle,
            "idle, not a question"
        );
        let asked = report("Notification", r#"{"notification_type": "elicitation_dialog"}"#);
        assert_eq!(status_of(&asked).unwrap().0, ActivityStatus::WaitingInput);
    }

    #[test]
    fn a_codex_turn_completion_names_the_session_and_the_prompt() {
        let r = report(
            "codex-notify",
            r#"{"type": "agent-turn-complete", "thread-id": "01a22645-9705-7352-9a7c-e05a97022f2e", "turn-id": "t1", "cwd": "/w", "input-messages": ["say hi"], "last-assistant-message": "hi"}"#,
        );
        assert_eq!(r.event, "agent-turn-complete");
        assert_eq!(r.session_id.as_deref(), Some("01a22645-9705-7352-9a7c-e05a97022f2e"));
        assert_eq!(r.prompt.as_deref(), Some("say hi"));
        assert_eq!(status_of(&r).unwrap().0, ActivityStatus::Idle);
    }

    #[test]
    fn odd_values_are_dropped_and_long_ones_cut() {
        let long = "word ".repeat(500);
        let payload = serde_json::json!({
            "hook_event_name": "Stop; rm -rf /",
            "session_id": "../../etc",
            "transcript_path": "relative/path.jsonl",
            "message": long,
            "prompt": long,
        });
        let r = report_from("Stop", &payload);
        assert_eq!(r.event, "unknown");
        assert_eq!(r.session_id, None);
        assert_eq!(r.transcript_path, None);
        assert!(r.message.unwrap().len() <= MAX_MESSAGE);
        assert!(r.prompt.unwrap().len() <= MAX_PROMPT);
    }
}
