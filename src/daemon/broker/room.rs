//! Room for one more client (issue #34): the daemon serves a bounded
//! number of connections, and 256 that said their header and then nothing
//! used to lock every client out. Each connection past its header is
//! known here with what it is doing; when all places are taken, the one
//! quiet the longest — no request in flight, following nothing — is asked
//! to close, and the newest client takes its place.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::{Notify, Semaphore};

use super::connection::Subscriptions;

/// A connection this young is never the one asked to leave: it has not
/// had the time to send its first request.
const SETTLING: Duration = Duration::from_secs(1);

/// The open connections past their header.
#[derive(Default)]
pub struct Room {
    open: Mutex<HashMap<u64, Arc<Activity>>>,
    next: AtomicU64,
}

/// What one connection is doing, as far as making room is concerned.
pub struct Activity {
    /// When its last frame arrived (or it was greeted).
    last: Mutex<Instant>,
    /// Its requests being answered hold permits of this.
    in_flight: Arc<Semaphore>,
    in_flight_max: usize,
    subscriptions: Subscriptions,
    /// Told to close to make room; said once.
    leaving: AtomicBool,
    pub leave: Notify,
}

impl Activity {
    pub fn new(in_flight: Arc<Semaphore>, in_flight_max: usize, subscriptions: Subscriptions) -> Activity {
        Activity {
            last: Mutex::new(Instant::now()),
            in_flight,
            in_flight_max,
            subscriptions,
            leaving: AtomicBool::new(false),
            leave: Notify::new(),
        }
    }

    /// A frame arrived.
    pub fn heard(&self) {
        *self.last.lock() = Instant::now();
    }

    /// Quiet since when, if it may be asked to leave: nothing asked of the
    /// daemon and nothing followed (a TUI watching a screen, an `agents
    /// wait`, a host's link following its runs are never idle).
    fn idle_since(&self) -> Option<Instant> {
        let last = *self.last.lock();
        let idle = !self.leaving.load(Ordering::Relaxed)
            && last.elapsed() >= SETTLING
            && self.in_flight.available_permits() == self.in_flight_max
            && self.subscriptions.lock().is_empty();
        idle.then_some(last)
    }
}

impl Room {
    /// A connection greeted; its key, to leave with.
    pub fn enter(&self, activity: Arc<Activity>) -> u64 {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.open.lock().insert(key, activity);
        key
    }

    pub fn leave(&self, key: u64) {
        self.open.lock().remove(&key);
    }

    /// Asks the connection idle the longest to close; false when every
    /// one is busy.
    pub fn make_room(&self) -> bool {
        let open = self.open.lock();
        let idlest = open
            .values()
            .filter_map(|a| a.idle_since().map(|since| (since, a)))
            .min_by_key(|(since, _)| *since);
        match idlest {
            Some((_, activity)) => {
                activity.leaving.store(true, Ordering::Relaxed);
                activity.leave.notify_one();
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity(quiet_for: Duration) -> Arc<Activity> {
        let a = Arc::new(Activity::new(Arc::new(Semaphore::new(4)), 4, Arc::default()));
        *a.last.lock() = Instant::now() - quiet_for;
        a
    }

    #[test]
    fn the_longest_quiet_leaves_first_and_a_busy_or_new_one_never() {
        let room = Room::default();
        let (old, older, new) = (
            activity(Duration::from_secs(5)),
            activity(Duration::from_secs(50)),
            activity(Duration::ZERO),
        );
        let busy = activity(Duration::from_secs(500));
        let _permit = busy.in_flight.clone().try_acquire_owned().unwrap();
        for a in [&old, &older, &new, &busy] {
            room.enter(a.clone());
        }
        assert!(room.make_room());
        assert!(older.leaving.load(Ordering::Relaxed));
        assert!(room.make_room());
        assert!(old.leaving.load(Ordering::Relaxed));
        assert!(!room.make_room(), "the new one and the busy one stay");
        assert!(!new.leaving.load(Ordering::Relaxed) && !busy.leaving.load(Ordering::Relaxed));
    }
}
