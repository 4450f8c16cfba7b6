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

use super::Engine;

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
    let source = crate::transcript::index::on_store::recorded_source(&engine.store, child).await;
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
    let awaited = engine.awaited.lock().contains_key(id);
    let child = id.to_string();
    let told = engine.store.runs().mirror_ended(&child, awaited).await;
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
