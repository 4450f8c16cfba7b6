//! A run at work in a rhythm slower than the quiet window: a loop printing
//! every second, a build's progress line, a poller. Judged by the window
//! alone, such a run falls `idle` a moment before each beat and is
//! `working` again a millisecond later — a status that flickers, a row
//! written and a change sent twice a beat, for every run so printing.
//!
//! So each run keeps its own window: when output comes back within one
//! configured window of the run's being called idle by the quiet rule, and
//! no key, prompt or answer went in meanwhile (an echo is not a beat), that
//! is a beat; from the second beat in a row the run's window doubles with
//! each, up to `MAX_FACTOR` times the configured one (one pause, as an
//! agent starting up makes, is no rhythm). A run that stays idle for
//! `RESET_AFTER` of its windows, or that is given input, is back to the
//! configured window. The supervisor is paced by the run's window too, so a
//! beat slower than the configured window costs the daemon no message.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::api::ActivityStatus;
use crate::harness::status::Rule;

/// The longest a run's window grows to, in configured windows (8 s with
/// the default second).
const MAX_FACTOR: u32 = 8;
/// Idle for this many of its windows, a run's window is the configured one again.
const RESET_AFTER: u32 = 4;

pub struct Rhythm {
    /// The run's window, in configured windows (1, 2, 4, 8).
    factor: AtomicU32,
    /// Beats in a row.
    beats: AtomicU32,
    /// When the quiet rule last called the run idle, while it still is.
    quiet_since: Mutex<Option<Instant>>,
    /// Keys, a prompt or an answer went in since.
    input: AtomicBool,
}

impl Default for Rhythm {
    fn default() -> Rhythm {
        Rhythm {
            factor: AtomicU32::new(1),
            beats: AtomicU32::new(0),
            quiet_since: Mutex::new(None),
            input: AtomicBool::new(false),
        }
    }
}

impl Rhythm {
    /// The run's quiet window, given the configured one.
    pub fn quiet(&self, configured: Duration) -> Duration {
        configured * self.factor.load(Ordering::Relaxed)
    }

    /// Keys, a prompt or an answer went into the run: output that follows
    /// is their echo, not a beat, and what comes next is a new exchange,
    /// judged by the configured window. Returns the factor it had.
    pub fn input(&self) -> u32 {
        self.input.store(true, Ordering::Relaxed);
        self.beats.store(0, Ordering::Relaxed);
        self.factor.swap(1, Ordering::Relaxed)
    }

    /// The run's status went from `was` to `now` by `rule`; says whether its
    /// window changed.
    pub fn changed(&self, was: ActivityStatus, now: ActivityStatus, rule: Rule, configured: Duration) -> bool {
        let at = Instant::now();
        if now == ActivityStatus::Idle && rule == Rule::Quiet {
            *self.quiet_since.lock() = Some(at);
            self.input.store(false, Ordering::Relaxed);
            return false;
        }
        let Some(since) = self.quiet_since.lock().take() else {
            return false;
        };
        let keyed = self.input.swap(false, Ordering::Relaxed);
        // Output back is a working verdict, or a stalled one when the
        // screen stood still but for its counters (a clock printed each
        // second).
        let by_output = now.is_working() && matches!(rule, Rule::Output | Rule::Stalled);
        if was != ActivityStatus::Idle || !by_output || keyed {
            return false;
        }
        let factor = self.factor.load(Ordering::Relaxed);
        let idle_for = at.saturating_duration_since(since);
        let next = if idle_for < configured {
            match self.beats.fetch_add(1, Ordering::Relaxed) {
                0 => factor,
                _ => (factor * 2).min(MAX_FACTOR),
            }
        } else {
            self.beats.store(0, Ordering::Relaxed);
            match idle_for >= configured * factor * RESET_AFTER {
                true => 1,
                false => factor,
            }
        };
        self.factor.store(next, Ordering::Relaxed);
        next != factor
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ActivityStatus::{Idle, NeedsApproval, Working};

    const SECOND: Duration = Duration::from_secs(1);

    /// Idle by the quiet rule, then output `after` later.
    fn beat(r: &Rhythm, after: Duration) -> bool {
        r.changed(Working, Idle, Rule::Quiet, SECOND);
        *r.quiet_since.lock() = Some(Instant::now() - after);
        r.changed(Idle, Working, Rule::Output, SECOND)
    }

    #[test]
    fn from_the_second_beat_in_a_row_the_window_doubles_up_to_eight() {
        let r = Rhythm::default();
        assert_eq!(r.quiet(SECOND), SECOND);
        for expected in [1, 2, 4, 8, 8] {
            beat(&r, Duration::from_millis(3));
            assert_eq!(r.quiet(SECOND), SECOND * expected);
        }
    }

    /// Output back on a screen that stood still but for a clock is a
    /// stalled verdict: a beat all the same.
    #[test]
    fn output_back_on_a_screen_standing_still_is_a_beat() {
        let r = Rhythm::default();
        for expected in [1, 2, 4] {
            r.changed(ActivityStatus::Stalled, Idle, Rule::Quiet, SECOND);
            *r.quiet_since.lock() = Some(Instant::now() - Duration::from_millis(3));
            r.changed(Idle, ActivityStatus::Stalled, Rule::Stalled, SECOND);
            assert_eq!(r.quiet(SECOND), SECOND * expected);
        }
    }

    #[test]
    fn a_long_idle_or_input_brings_the_window_back_and_a_moderate_idle_keeps_it() {
        let r = Rhythm::default();
        beat(&r, Duration::from_millis(3));
        beat(&r, Duration::from_millis(3));
        assert!(!beat(&r, Duration::from_secs(3)), "1.5 windows of 2 s: kept");
        assert_eq!(r.quiet(SECOND), SECOND * 2);
        assert!(beat(&r, Duration::from_secs(8)), "4 windows of 2 s: reset");
        assert_eq!(r.quiet(SECOND), SECOND);
        beat(&r, Duration::from_millis(3));
        beat(&r, Duration::from_millis(3));
        assert_eq!(r.quiet(SECOND), SECOND * 2);
        r.input();
        assert_eq!(r.quiet(SECOND), SECOND, "a prompt or keys: a new exchange");
    }

    #[test]
    fn one_pause_is_no_rhythm() {
        let r = Rhythm::default();
        beat(&r, Duration::from_millis(30));
        assert!(!beat(&r, Duration::from_secs(2)), "a beat, then a long idle");
        assert!(!beat(&r, Duration::from_millis(30)), "a single beat again");
        assert_eq!(r.quiet(SECOND), SECOND);
    }

    #[test]
    fn an_echo_of_input_or_another_rule_is_no_beat() {
        let r = Rhythm::default();
        r.changed(Working, Idle, Rule::Quiet, SECOND);
        r.input();
        assert!(!r.changed(Idle, Working, Rule::Output, SECOND));
        r.changed(Working, Idle, Rule::Quiet, SECOND);
        assert!(!r.changed(Idle, Working, Rule::Hook, SECOND));
        r.changed(Working, Idle, Rule::Hook, SECOND);
        assert!(
            !r.changed(Idle, Working, Rule::Output, SECOND),
            "idle by a hook is no quiet"
        );
        r.changed(Working, Idle, Rule::Quiet, SECOND);
        r.changed(Idle, NeedsApproval, Rule::Screen, SECOND);
        assert!(!r.changed(NeedsApproval, Working, Rule::Output, SECOND));
        assert_eq!(r.quiet(SECOND), SECOND);
    }
}
