//! Task results in the store (docs/design.md §13, `engine::tasks`): within
//! the transaction of a child's end, its parent agent's `[task result]`
//! prompt, its orphans' `ORPHANED` events and the `[orphans]` prompt of
//! the nearest live agent above; and a mirrored child's end told to its
//! parent here.

use rusqlite::Connection;
use serde_json::json;

use super::StoreError;
use super::runs::{self, Ending, RunRow};
use crate::api::RunState;

/// The prompt id of `child`'s result: one per child.
fn prompt_id(child: &str) -> String {
    format!("task-{child}")
}

/// Within the child's end's transaction: queues its result for `parent`
/// when the parent is a live agent — or, when the parent has ended
/// without taking its children along (they are orphans), for the nearest
/// live agent above it. With `read_whole` (`read_transcript`), it quotes
/// what the child's agent said last; without, the index may hold an older
/// message, so none is quoted. Answers who was told.
fn tell_parent(conn: &Connection, child: &str, parent: &str, read_whole: bool) -> Result<Option<String>, StoreError> {
    let (Some(child), Some(boss)) = (runs::get_run(conn, child)?, nearest_agent(conn, parent)?) else {
        return Ok(None);
    };
    let id = prompt_id(&child.id);
    if super::prompts::get_prompt(conn, &id)?.is_some() || cancelled_by(conn, &child.id, parent)? {
        return Ok(None);
    }
    let last = match read_whole {
        true => super::transcripts::last_assistant_text(conn, &child.id)?,
        false => None,
    };
    super::prompts::enqueue_prompt(conn, &id, &boss.id, &said(&child, last.as_deref()))?;
    let data = json!({ "child": child.id, "parent": boss.id, "state": child.state.as_str(), "prompt_id": id });
    runs::append_event(conn, &boss.id, "TASK_RESULT", &data)?;
    runs::append_event(conn, &child.id, "TASK_RESULT", &data)?;
    Ok(Some(boss.id))
}

/// Whether `by` asked for `run`'s cancel: the end it asked for is no news
/// to it.
fn cancelled_by(conn: &Connection, run: &str, by: &str) -> Result<bool, StoreError> {
    runs::has_event_where(conn, run, "CANCEL_REQUESTED", "by", by)
}

/// `run`, or the nearest run above it, that is a live agent (a shell or a
/// command would run the words as a command line): at most 32 up.
pub(super) fn nearest_agent(conn: &Connection, run: &str) -> Result<Option<RunRow>, StoreError> {
    let mut next = Some(run.to_string());
    for _ in 0..32 {
        let Some(row) = next.as_deref().map(|id| runs::get_run(conn, id)).transpose()?.flatten() else {
            return Ok(None);
        };
        if row.state.is_live() {
            let agent = !matches!(row.harness.as_str(), "shell" | "cmd");
            return Ok(agent.then_some(row));
        }
        next = row.parent_run_id.clone();
    }
    Ok(None)
}

/// Within a run's end's transaction: the children it owned that still run
/// are orphans now (a run cancelled takes them along; a detached child
/// was meant to outlive it). Each gets an `ORPHANED` event, and the
/// nearest live agent above the run is told — their results go to it from
/// now on. Answers who was told.
fn orphans(conn: &Connection, run: &str, state: RunState) -> Result<Option<String>, StoreError> {
    if state == RunState::Cancelled {
        return Ok(None);
    }
    let left: Vec<RunRow> = runs::children(conn, run)?
        .into_iter()
        .filter(|c| c.state.is_live() && !c.detached)
        .collect();
    let Some(ended) = runs::get_run(conn, run)?.filter(|_| !left.is_empty()) else {
        return Ok(None);
    };
    for child in &left {
        let data = json!({ "parent": run, "parent_state": state.as_str() });
        runs::append_event(conn, &child.id, "ORPHANED", &data)?;
    }
    let Some(boss) = ended
        .parent_run_id
        .as_deref()
        .map(|p| nearest_agent(conn, p))
        .transpose()?
        .flatten()
    else {
        return Ok(None);
    };
    let id = format!("orphans-{run}");
    if super::prompts::get_prompt(conn, &id)?.is_some() {
        return Ok(None);
    }
    let names: Vec<&str> = left.iter().map(|c| c.name.as_str()).collect();
    let text = format!(
        "[orphans] {} {} while its children still run: {} — their results come to you now — agents show {}",
        ended.name,
        state.as_str(),
        names.join(", "),
        ended.name
    );
    super::prompts::enqueue_prompt(conn, &id, &boss.id, &crate::text::inert_line(&text))?;
    let data = json!({ "run": run, "children": left.iter().map(|c| &c.id).collect::<Vec<_>>(), "prompt_id": id });
    runs::append_event(conn, &boss.id, "ORPHANS", &data)?;
    Ok(Some(boss.id))
}

/// `[task result] review-1 succeeded after 3m12s: exited with code 0 —
/// agents show review-1`, with what its agent said last when its
/// transcript has it (bounded, on one line), its words made inert (they
/// are typed).
fn said(child: &RunRow, last: Option<&str>) -> String {
    let took = match (child.started_at, child.ended_at) {
        // A child that ends at once may end before it is adopted (when its
        // start is stamped): it took no time.
        (Some(start), Some(end)) => {
            let secs = (end - start).max(0) / 1000;
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

/// Whether `parent` has the `CHILD_ENDED` of `child`.
fn told_of(conn: &Connection, parent: &str, child: &str) -> Result<bool, StoreError> {
    runs::has_event_where(conn, parent, "CHILD_ENDED", "child", child)
}

/// Writes a run's end, its attempt's close and its parent's `CHILD_ENDED`
/// in one transaction, with the parent's task result unless the child is
/// `awaited` (quoting its last words when its transcript was `read_whole`)
/// and its orphans' news. Answers who was told.
pub(super) fn end(
    conn: &mut Connection,
    id: &str,
    ending: &Ending,
    awaited: bool,
    read_whole: bool,
) -> Result<Vec<String>, StoreError> {
    let state = ending.state;
    let tx = conn.transaction()?;
    let ended = runs::finish_in(&tx, id, ending)?;
    if ended {
        super::attempts::close(&tx, id, state.as_str(), ending.reason.as_deref())?;
    }
    let parent = runs::get_run(&tx, id)?.and_then(|r| r.parent_run_id);
    let mut told = Vec::new();
    if ended && let Some(parent) = &parent {
        runs::append_event(
            &tx,
            parent,
            "CHILD_ENDED",
            &json!({ "child": id, "state": state.as_str() }),
        )?;
        told.push(parent.clone());
        if !awaited {
            told.extend(tell_parent(&tx, id, parent, read_whole)?);
        }
    }
    if ended {
        told.extend(orphans(&tx, id, state)?);
    }
    tx.commit()?;
    Ok(told)
}

/// A mirrored child's end, stored already, told to its parent here (see
/// `engine::tasks::mirror_ended`), in one transaction. Answers who was
/// told.
pub(super) fn mirror_ended(conn: &mut Connection, child: &str, awaited: bool) -> Result<Vec<String>, StoreError> {
    let tx = conn.transaction()?;
    let Some(row) = runs::get_run(&tx, child)?.filter(|r| !r.state.is_live()) else {
        return Ok(Vec::new());
    };
    // A parent on the child's host is told there, by its daemon.
    let parent = match &row.parent_run_id {
        Some(parent) => runs::get_run(&tx, parent)?,
        None => None,
    };
    if parent.as_ref().is_some_and(|p| p.host != "local") {
        return Ok(Vec::new());
    }
    if let Some(parent) = &parent
        && told_of(&tx, &parent.id, child)?
    {
        return Ok(Vec::new());
    }
    let mut told = Vec::new();
    if let Some(parent) = parent.as_ref().map(|p| p.id.as_str()) {
        let data = json!({ "child": child, "state": row.state.as_str() });
        runs::append_event(&tx, parent, "CHILD_ENDED", &data)?;
        told.push(parent.to_string());
        if !awaited {
            told.extend(tell_parent(&tx, child, parent, false)?);
        }
    }
    told.extend(orphans(&tx, child, row.state)?);
    tx.commit()?;
    Ok(told)
}
