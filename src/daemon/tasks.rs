//! Task results (docs/design.md §13): a child run that ends while nobody
//! awaits it gives its parent agent a turn nobody typed — a queued prompt
//! marked `[task result]`, written in the same transaction as the child's
//! end (its id taken from the child's, so it is queued once however often
//! the end is written), and a `TASK_RESULT` event on both runs. A child
//! that is awaited (`agents wait`, MCP `run_wait`) returns to its waiter
//! instead. Only an agent is told: a shell or a command would run the
//! words as a command line.

use std::sync::Arc;

use rusqlite::Connection;
use serde_json::json;

use super::Daemon;
use crate::store::StoreError;
use crate::store::runs::{self, RunRow};

/// The prompt id of `child`'s result: one per child.
fn prompt_id(child: &str) -> String {
    format!("task-{child}")
}

/// Within the child's end's transaction: queues its result for `parent`
/// when the parent is a live agent.
pub(super) fn tell_parent(conn: &Connection, child: &str, parent: &str) -> Result<(), StoreError> {
    let (Some(child), Some(boss)) = (runs::get_run(conn, child)?, runs::get_run(conn, parent)?) else {
        return Ok(());
    };
    if !boss.state.is_live() || matches!(boss.harness.as_str(), "shell" | "cmd") {
        return Ok(());
    }
    let id = prompt_id(&child.id);
    if runs::get_prompt(conn, &id)?.is_some() {
        return Ok(());
    }
    let last = crate::store::transcripts::last_assistant_text(conn, &child.id)?;
    runs::enqueue_prompt(conn, &id, parent, &said(&child, last.as_deref()))?;
    let data = json!({ "child": child.id, "parent": parent, "state": child.state.as_str(), "prompt_id": id });
    runs::append_event(conn, parent, "TASK_RESULT", &data)?;
    runs::append_event(conn, &child.id, "TASK_RESULT", &data)?;
    Ok(())
}

/// `[task result] review-1 succeeded after 3m12s: exited with code 0 —
/// agents show review-1`, with what its agent said last when its
/// transcript has it (bounded, on one line), its words made inert (they
/// are typed).
fn said(child: &RunRow, last: Option<&str>) -> String {
    let took = match (child.started_at, child.ended_at) {
        (Some(start), Some(end)) if end >= start => {
            let secs = (end - start) / 1000;
            match secs {
                s if s >= 60 => format!(" after {}m{:02}s", s / 60, s % 60),
                s => format!(" after {s}s"),
            }
        }
        _ => String::new(),
    };
    let why = child
        .reason
        .as_deref()
        .map(|r| format!(": {}", crate::text::bounded(r, 300)))
        .unwrap_or_default();
    let last = last
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|t| !t.is_empty())
        .map(|t| format!(": \"{}\"", crate::text::bounded(&t, 500)))
        .unwrap_or_default();
    let text = format!(
        "[task result] {} {}{took}{why}{last} — agents show {}",
        child.name,
        child.state.as_str(),
        child.name
    );
    crate::text::inert_line(&text).into_owned()
}

/// After the end is stored: the parent's delivery loop looks at its queue.
pub(super) fn wake(daemon: &Arc<Daemon>, parent: &str) {
    if let Some(live) = daemon.live(parent) {
        live.wake.notify_waiters();
    }
}
