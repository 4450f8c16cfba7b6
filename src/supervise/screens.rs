//! Screen subscriptions on the run socket: the run's one emulator sends
//! each subscriber its whole screen, then what changed, as
//! `Frame::Screen` updates (`protocol::screen`). One update is in flight
//! per subscription: the next is computed once the last is acknowledged,
//! so a subscriber that falls behind gets the newest screen, never a
//! backlog. Updates are at most `FRAME` apart, but a change on a screen
//! that has been still goes out at once, so an echo never waits a frame.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::server::Supervised;
use crate::protocol::Frame;
use crate::protocol::rpc::Request;
use crate::protocol::screen::{FORMAT_V1, ScreenWatch};

/// Methods of screen subscriptions (the supervisor protocol).
pub use crate::protocol::supervisor::screen_method as method;

/// The shortest time between two updates of a busy screen: 60 a second,
/// the rate of the displays people watch agents on.
pub const FRAME: Duration = Duration::from_micros(16_667);

/// A change of at most this many rows, with nothing scrolled, goes out at
/// once, however soon after the last update: typing, a spinner, a status
/// line. Anything larger (a flood scrolls every row) waits for its frame.
pub const SMALL_CHANGE_ROWS: usize = 3;

/// Rows scrolled off kept for subscribers while any watches.
pub const SCROLLED_KEPT: usize = 4000;

/// Rows scrolled off read for subscribers between two updates: four
/// screens' worth. What scrolls faster than that (a flood) is only
/// counted; a client's history then has a gap, filled from the log when
/// its user scrolls back (`runs.history`). Reading every row of a 100 MB
/// flood cost a watched run a third of its throughput (`cargo bench
/// --bench remote_flood`, the pane's run).
pub fn scrolled_budget(rows: usize) -> usize {
    (rows * 4).clamp(100, SCROLLED_KEPT)
}

/// Screen subscriptions by id, each a task streaming updates and what its
/// subscriber has acknowledged.
#[derive(Default)]
struct Subscriptions {
    subs: HashMap<u64, (watch::Sender<u64>, tokio::task::JoinHandle<()>)>,
}

impl Subscriptions {
    /// Starts `stream` as subscription `sub` (one of that id is closed first).
    pub fn open(&mut self, sub: u64, stream: impl FnOnce(watch::Receiver<u64>) -> tokio::task::JoinHandle<()>) {
        self.close(sub);
        let (acked, acked_rx) = watch::channel(0);
        self.subs.insert(sub, (acked, stream(acked_rx)));
    }

    /// The subscriber has shown update `seq` (`method::ACK`'s params).
    pub fn ack(&self, params: &Value) {
        let sub = params.get("sub").and_then(Value::as_u64);
        let seq = params.get("seq").and_then(Value::as_u64).unwrap_or(0);
        if let Some((acked, _)) = sub.and_then(|sub| self.subs.get(&sub)) {
            acked.send_if_modified(|a| {
                let newer = seq > *a;
                *a = (*a).max(seq);
                newer
            });
        }
    }

    /// Ends subscription `sub`; whether there was one.
    pub fn close(&mut self, sub: u64) -> bool {
        self.subs.remove(&sub).map(|(_, task)| task.abort()).is_some()
    }

    pub fn len(&self) -> usize {
        self.subs.len()
    }

    pub fn ids(&self) -> Vec<u64> {
        self.subs.keys().copied().collect()
    }
}

/// The screen subscriptions of one connection.
#[derive(Default)]
pub struct Screens {
    subs: Subscriptions,
}

impl Screens {
    /// Handles a screen method; `None` when `req` is not one.
    pub fn handle(
        &mut self,
        run: &Arc<Supervised>,
        req: &Request,
        out: &mpsc::Sender<Frame>,
    ) -> Option<Result<Value, String>> {
        let sub = req.params.get("sub").and_then(Value::as_u64);
        let result = match req.method.as_str() {
            method::WATCH => {
                let sub = sub?;
                let frame = req
                    .params
                    .get("frame_ms")
                    .and_then(Value::as_u64)
                    .map_or(FRAME, |ms| Duration::from_millis(ms.clamp(1, 1000)));
                // A daemon of an older build asks for none: it relays to
                // clients that read format 1 only.
                let format = req
                    .params
                    .get("format")
                    .and_then(Value::as_u64)
                    .map_or(FORMAT_V1, |f| f.min(u64::from(u8::MAX)) as u8);
                self.close(run, sub);
                if self.subs.len() >= MAX_SUBSCRIPTIONS {
                    return Some(Err("too many screen subscriptions on one connection".into()));
                }
                watching(run, 1);
                let (run, out) = (run.clone(), out.clone());
                self.subs
                    .open(sub, |acked| tokio::spawn(stream(run, sub, frame, format, out, acked)));
                Ok(json!({ "sub": sub }))
            }
            method::ACK => {
                self.subs.ack(&req.params);
                Ok(Value::Null)
            }
            method::CLOSE => {
                self.close(run, sub?);
                Ok(Value::Null)
            }
            _ => return None,
        };
        Some(result)
    }

    fn close(&mut self, run: &Arc<Supervised>, sub: u64) {
        if self.subs.close(sub) {
            watching(run, -1);
        }
    }

    /// The connection ended: its subscriptions with it.
    pub fn close_all(&mut self, run: &Arc<Supervised>) {
        for sub in self.subs.ids() {
            self.close(run, sub);
        }
    }
}

/// A connection (the daemon's) holds one subscription per client screen
/// of the run: 256 is more than the daemon's client connections.
const MAX_SUBSCRIPTIONS: usize = 256;

/// Counts subscriptions; the emulator keeps scrolled rows while there are.
fn watching(run: &Supervised, delta: isize) {
    let before = if delta > 0 {
        run.screen_watchers.fetch_add(1, Ordering::AcqRel)
    } else {
        run.screen_watchers.fetch_sub(1, Ordering::AcqRel)
    };
    let now = before as isize + delta;
    if (before == 0) != (now == 0) {
        let mut screen = run.screen.lock();
        screen.term.keep_scrolled(if now > 0 { SCROLLED_KEPT } else { 0 });
    }
}

async fn stream(
    run: Arc<Supervised>,
    sub: u64,
    frame: Duration,
    format: u8,
    out: mpsc::Sender<Frame>,
    mut acked: watch::Receiver<u64>,
) {
    let mut watch = ScreenWatch::new();
    let mut parsed = run.parsed.subscribe();
    let mut redrawn = run.redrawn.subscribe();
    let mut sent_seq = 0;
    let mut sent_at: Option<tokio::time::Instant> = None;
    loop {
        // One update in flight: wait until the last is shown.
        if acked.wait_for(|a| *a >= sent_seq).await.is_err() {
            return;
        }
        // Marked seen before the screen is read: a change after is new.
        parsed.borrow_and_update();
        redrawn.borrow_and_update();
        let update = {
            let mut screen = run.screen.lock();
            let due = sent_at.is_none_or(|at| at.elapsed() >= frame);
            let offset = screen.offset;
            let update = match due {
                true => Some(watch.next(&screen.term, offset)),
                false => watch.next_small(&screen.term, offset, SMALL_CHANGE_ROWS).ok(),
            };
            if update.as_ref().is_some_and(Option::is_some) {
                let rows = screen.term.size().0 as usize;
                screen.term.refill_scrolled(scrolled_budget(rows));
            }
            update
        };
        let Some(update) = update else {
            // A large change within a frame of the last: in its frame, with
            // whatever else changes until then.
            if let Some(at) = sent_at {
                tokio::time::sleep_until(at + frame).await;
            }
            continue;
        };
        if let Some(update) = update {
            sent_seq = update.seq;
            sent_at = Some(tokio::time::Instant::now());
            let frame = Frame::Screen {
                run: run.run.clone(),
                sub,
                bytes: update.encode_as(format),
            };
            if out.send(frame).await.is_err() {
                return;
            }
            if watch.more {
                continue;
            }
        }
        tokio::select! {
            r = parsed.changed() => if r.is_err() { return },
            r = redrawn.changed() => if r.is_err() { return },
        }
    }
}
