//! Task results (docs/design.md §13): a child run that ends while nobody
//! awaits it gives its parent agent a turn nobody typed — a queued prompt
//! marked `[task result]`, written in the same transaction as the child's
//! end (its id taken from the child's, so it is queued once however often
//! the end is written), and a `TASK_RESULT` event on both runs. A child
//! that is awaited (`agents wait`, MCP `run_wait`) returns to its waiter
//! instead. Only an agent is told: a shell or a command would run the
//! words as a command line.
//!
//! What a child's agent said last comes from the index of its transcript,
//! which a tailer follows on its own schedule: the child's last message
//! can still be unread when its end is written (a harness writes it and
//! exits; a hook that names the file may never arrive). So the end first
//! reads the transcript to its end, for a moment at most.

use std::sync::Arc;
use std::time::Duration;

use rusqlite::Connection;
use serde_json::json;

use super::Engine;
use crate::api::RunState;
use crate::store::StoreError;
use crate::store::runs::{self, RunRow};

/// How long a child's end waits for its transcript to be read to its end.
/// A turn's tail is a few KiB, read in one step of a few milliseconds
/// (benches/transcript_index.rs: 100 MB in ~2.6 s of CPU); 250 ms leaves
/// room for a busy machine, and a day's backlog is not waited for.
const READ_WAIT: Duration = Duration::from_millis(250);

/// Steps of 256 KiB that read takes at most, however fast the machine:
/// 4 MiB, far more than a turn writes.
const READ_STEPS: usize = 16;

/// Before `child`'s end is written: reads what its transcript gained since
/// the tailer last read it (registering the file the harness layer recorded
/// at launch, if no hook has named it yet), within `READ_WAIT` and
/// `READ_STEPS`. Answers whether the index holds it whole, so its last
/// message is what the agent said last — true too for a run without one.
pub(crate) async fn read_transcript(engine: &Arc<Engine>, child: &str) -> bool {
    let started = std::time::Instant::now();
    let run = child.to_string();
    let source = engine
        .store
        .call(move |c| {
            let Some((session, run_id, path)) = crate::store::transcripts::recorded_transcript(c, &run)? else {
                return Ok(None);
            };
            let key = crate::transcript::index::key(std::path::Path::new(&path));
            if crate::store::transcripts::get_source(c, &key)?.is_none() {
                // An unreadable format or path is reported when read.
                let _ = crate::transcript::index::register(
                    c,
                    std::path::Path::new(&path),
                    &session,
                    run_id.as_deref(),
                    None,
                );
            }
            crate::store::transcripts::get_source(c, &key)
        })
        .await;
    let src = match source {
        Ok(Some(src)) => src,
        Ok(None) => return true,
        Err(e) => {
            tracing::debug!("transcript of {child} not read before its end: {e}");
            return false;
        }
    };
    let mut budget = super::transcripts::Budget::new(READ_WAIT, READ_STEPS);
    let read = super::transcripts::read_within(engine, &src, &mut budget).await;
    tracing::debug!(
        "read {} messages of {child}'s transcript before its end in {:?}, {} bytes left",
        read.messages,
        started.elapsed(),
        read.left
    );
    read.left == 0
}

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
pub(crate) fn tell_parent(
    conn: &Connection,
    child: &str,
    parent: &str,
    read_whole: bool,
) -> Result<Option<String>, StoreError> {
    let (Some(child), Some(boss)) = (runs::get_run(conn, child)?, nearest_agent(conn, parent)?) else {
        return Ok(None);
    };
    let id = prompt_id(&child.id);
    if crate::store::prompts::get_prompt(conn, &id)?.is_some() || cancelled_by(conn, &child.id, parent)? {
        return Ok(None);
    }
    let last = match read_whole {
        true => crate::store::transcripts::last_assistant_text(conn, &child.id)?,
        false => None,
    };
    crate::store::prompts::enqueue_prompt(conn, &id, &boss.id, &said(&child, last.as_deref()))?;
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
fn nearest_agent(conn: &Connection, run: &str) -> Result<Option<RunRow>, StoreError> {
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
pub(crate) fn orphans(conn: &Connection, run: &str, state: RunState) -> Result<Option<String>, StoreError> {
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
    if crate::store::prompts::get_prompt(conn, &id)?.is_some() {
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
    crate::store::prompts::enqueue_prompt(conn, &id, &boss.id, &crate::text::inert_line(&text))?;
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

/// A run mirrored from its host has ended there and its mirror here is
/// ended (`remote::Mirrored::Ended`): its parent here hears of it as of a
/// local child's end — `CHILD_ENDED`, its task result unless it is
/// awaited, its orphans. The host knows nothing of a parent here, so this
/// daemon tells it (a parent on the host is told there); once: a parent
/// that has its `CHILD_ENDED` is not told again (and the result's prompt
/// id is the child's). The mirror's end is stored first, so a daemon that
/// stops between the two tells it at its next start
/// (`tell_untold_mirror_ends`).
pub(crate) async fn mirror_ended(engine: &Arc<Engine>, id: &str) {
    let awaited = engine.awaited.lock().is_ok_and(|a| a.contains_key(id));
    let child = id.to_string();
    let told = engine
        .store
        .call(move |c| {
            let tx = c.transaction()?;
            let Some(row) = runs::get_run(&tx, &child)?.filter(|r| !r.state.is_live()) else {
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
                && told_of(&tx, &parent.id, &child)?
            {
                return Ok(Vec::new());
            }
            let mut told = Vec::new();
            if let Some(parent) = parent.as_ref().map(|p| p.id.as_str()) {
                let data = json!({ "child": child, "state": row.state.as_str() });
                runs::append_event(&tx, parent, "CHILD_ENDED", &data)?;
                told.push(parent.to_string());
                if !awaited {
                    told.extend(tell_parent(&tx, &child, parent, false)?);
                }
            }
            told.extend(orphans(&tx, &child, row.state)?);
            tx.commit()?;
            Ok(told)
        })
        .await;
    match told {
        Ok(told) => {
            for run in told {
                wake(engine, &run);
                engine.changed(&run);
            }
        }
        Err(e) => tracing::warn!("run {id}: its end not told to its parent: {e}"),
    }
}

/// Whether `parent` has the `CHILD_ENDED` of `child`.
fn told_of(conn: &Connection, parent: &str, child: &str) -> Result<bool, StoreError> {
    runs::has_event_where(conn, parent, "CHILD_ENDED", "child", child)
}

/// At start: the ended mirrors whose parent here was never told of their
/// end (the daemon stopped between storing the end and telling) are told
/// now, at most `UNTOLD_MAX` of them. Only ends a run reached: a mirror
/// `lost` with its link may still come back, and one blocked or skipped
/// never started.
pub(crate) async fn tell_untold_mirror_ends(engine: &Arc<Engine>) {
    const UNTOLD_MAX: usize = 256;
    let untold = engine.store.mirrors().untold_ends(UNTOLD_MAX).await.unwrap_or_default();
    for id in untold {
        mirror_ended(engine, &id).await;
    }
}

/// After the end is stored: the parent's delivery loop looks at its queue.
pub(crate) fn wake(engine: &Arc<Engine>, parent: &str) {
    if let Some(live) = engine.live(parent) {
        live.wake.notify_waiters();
    }
}
