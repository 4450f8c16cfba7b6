//! What a supervisor tells its watcher unasked (`sup.watch`): the log's
//! committed offset, whether output is going on, what the screen shows
//! (a question, a turn in progress, a limit, a still screen), a boxed
//! run's hook reports, and finally the exit evidence.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::server::Supervised;
use crate::protocol::Frame;
use crate::protocol::supervisor::{Note, ScreenSigns};

/// The shortest gap between two offset notifications to a watcher: 200 a
/// second is smooth for a screen and costs the daemon little in a flood.
const OFFSET_EVERY: Duration = Duration::from_millis(5);

/// Streams the committed offset (coalesced: one notification per change
/// seen, however many writes happened), the screen's signs as they change,
/// and finally the exit evidence. With `still`, the signs say whether the
/// screen has been still that long: once when it becomes so, once when it
/// moves again.
pub async fn watch_loop(run: Arc<Supervised>, out: mpsc::Sender<Frame>, still: Option<Duration>) {
    let mut committed = run.committed.subscribe();
    let mut exited = run.exited.subscribe();
    let mut finding = run.signs.finding.subscribe();
    let mut turn = run.signs.turn.subscribe();
    let mut limit = run.signs.limit.subscribe();
    let mut moved = run.signs.moved.subscribe();
    let mut busy = run.busy.subscribe();
    // The watcher learns the screen's current signs first, whatever they are.
    let mut signs_sent: Option<ScreenSigns> = None;
    let mut last_sent = u64::MAX;
    let mut busy_sent: Option<bool> = None;
    let mut last_sent_at = tokio::time::Instant::now() - OFFSET_EVERY;
    loop {
        // A flood commits a chunk every few microseconds; the watcher hears
        // at most one offset per OFFSET_EVERY, while a lone keystroke's echo
        // (nothing sent for a while) goes out at once.
        let since = last_sent_at.elapsed();
        if since < OFFSET_EVERY && *committed.borrow() != last_sent {
            tokio::time::sleep(OFFSET_EVERY - since).await;
        }
        let offset = *committed.borrow_and_update();
        // Marked seen whatever the daemon asked, so `changed` waits.
        let going = *busy.borrow_and_update();
        let going = (run.busy_ms.load(std::sync::atomic::Ordering::Relaxed) > 0).then_some(going);
        if offset != last_sent || going != busy_sent {
            last_sent = offset;
            busy_sent = going;
            last_sent_at = tokio::time::Instant::now();
            let note = Note::Offset { offset, busy: going }.to_request();
            if out.send(Frame::control(&note)).await.is_err() {
                return;
            }
        }
        let moved_at = *moved.borrow_and_update();
        let seen = ScreenSigns {
            finding: finding.borrow_and_update().clone(),
            turn: *turn.borrow_and_update(),
            limit: limit.borrow_and_update().clone(),
            still: still.map(|still| moved_at.elapsed() >= still),
        };
        if signs_sent.as_ref() != Some(&seen) {
            let note = Note::Screen(seen.clone()).to_request();
            signs_sent = Some(seen);
            if out.send(Frame::control(&note)).await.is_err() {
                return;
            }
        }
        for report in run.hooks.take() {
            let note = Note::Hook(Box::new(report)).to_request();
            if out.send(Frame::control(&note)).await.is_err() {
                return;
            }
        }
        let evidence = exited.borrow_and_update().clone();
        if let Some(evidence) = evidence {
            let note = Note::Exited(Box::new(evidence)).to_request();
            let _ = out.send(Frame::control(&note)).await;
            return;
        }
        let goes_still = still_at(moved_at, still, signs_sent.as_ref());
        tokio::select! {
            changed = committed.changed() => if changed.is_err() { return },
            changed = busy.changed() => if changed.is_err() { return },
            changed = finding.changed() => if changed.is_err() { return },
            changed = turn.changed() => if changed.is_err() { return },
            changed = limit.changed() => if changed.is_err() { return },
            changed = moved.changed() => if changed.is_err() { return },
            changed = exited.changed() => if changed.is_err() { return },
            () = run.hooks.arrived() => {}
            () = sleep_until(goes_still) => {}
        }
    }
}

/// When a screen that moved at `moved_at` will have been still for
/// `still`, if the watcher has not been told it is yet.
fn still_at(moved_at: Instant, still: Option<Duration>, sent: Option<&ScreenSigns>) -> Option<Instant> {
    let told = sent.and_then(|s| s.still) == Some(true);
    still.filter(|_| !told).map(|still| moved_at + still)
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
