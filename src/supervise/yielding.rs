//! A run that floods its terminal yields the processor to the others while
//! it floods (docs/design.md §10).
//!
//! Our parser keeps up with a flood several times faster than tmux's, so a
//! flooding run and its harness can keep both cores of a small machine busy,
//! and every other run's echo then waits in the kernel's run queue: key →
//! echo p99 beside a flood measured 4–6 ms here against tmux's 3–4.5 ms
//! (`cargo bench --bench tui_latency`). Linux groups processes by session
//! for scheduling (autogroup): the supervisor and its harness are each the
//! leader of one. While the run prints faster than `engine.flood_bytes_per_s`
//! (5 MB/s), both sessions get a higher nice value; once it calms down they
//! get their own back. Unlike a process's nice value, a session's may be
//! lowered again by its owner (only values below 0 need privilege), so
//! nothing is lost when the flood ends. The kernel takes such a change once
//! per 100 ms for the whole machine; a refused one is tried again at the
//! next look.
//!
//! Where the kernel does not group by session (no `/proc/<pid>/autogroup`,
//! or the processes sit in a cgroup of their own), this does nothing.

use std::fs::File;
use std::io::Write;
use std::time::{Duration, Instant};

use crate::pty::identity;

/// How long output is counted before the run is said to flood or not.
pub const WINDOW: Duration = Duration::from_millis(100);
/// The nice value of a flooding run's sessions: the least weight there is
/// (1.5 % of a session at 0), so the others' wake-ups find a core first.
/// At 10 the benchmark's p99 stayed above tmux's.
const FLOODING_NICE: i8 = 19;

/// Whether a run floods, from what it printed in the last window.
#[derive(Debug)]
pub struct FloodMeter {
    /// Bytes a second above which the run floods.
    rate: u64,
    since: Instant,
    bytes: u64,
    flooding: bool,
}

impl FloodMeter {
    pub fn new(rate: u64, now: Instant) -> FloodMeter {
        FloodMeter {
            rate,
            since: now,
            bytes: 0,
            flooding: false,
        }
    }

    /// Counts a read; at the end of a window, says whether the run floods.
    pub fn output(&mut self, n: usize, now: Instant) -> bool {
        self.bytes += n as u64;
        self.look(now)
    }

    /// Whether the run floods, once a window has passed; the same as before
    /// within one.
    pub fn look(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.since);
        if elapsed >= WINDOW {
            let rate = self.bytes as u128 * 1_000_000 / elapsed.as_micros().max(1);
            self.flooding = rate >= self.rate as u128;
            self.since = now;
            self.bytes = 0;
        }
        self.flooding
    }
}

/// The scheduling sessions of a run: the supervisor's and the harness's.
pub struct Yielding {
    /// `/proc/<pid>/autogroup` of each, opened while the harness is known to
    /// be ours (not yet reaped), so a reused pid can never be reached.
    groups: Vec<File>,
    meter: FloodMeter,
    /// The nice value the groups were last given.
    applied: i8,
}

impl Yielding {
    /// `rate`: bytes a second above which the run floods; 0 never yields.
    /// Only a session this run leads is touched: never the daemon's or the
    /// user's shell's, should a process here not have a session of its own.
    pub fn new(harness: i32, rate: u64, now: Instant) -> Yielding {
        let leads = |pid: i32| identity::sid_of(pid) == Some(pid);
        let groups = match rate {
            0 => Vec::new(),
            _ => [std::process::id() as i32, harness]
                .into_iter()
                .filter(|&pid| leads(pid))
                .filter_map(|pid| File::options().write(true).open(format!("/proc/{pid}/autogroup")).ok())
                .collect(),
        };
        Yielding {
            groups,
            meter: FloodMeter::new(rate, now),
            applied: 0,
        }
    }

    /// When to look again even if output stops: while the groups are lowered
    /// or a change is still to be made, at the end of the window.
    pub fn next_look(&self) -> Option<Instant> {
        let pending = !self.groups.is_empty() && (self.applied != 0 || self.meter.flooding);
        pending.then_some(self.meter.since + WINDOW)
    }

    /// After a read of `n` bytes.
    pub fn output(&mut self, n: usize, now: Instant) {
        if self.groups.is_empty() {
            return;
        }
        let flooding = self.meter.output(n, now);
        self.apply(flooding);
    }

    /// When output has been quiet for a while.
    pub fn quiet(&mut self, now: Instant) {
        if self.groups.is_empty() {
            return;
        }
        let flooding = self.meter.look(now);
        self.apply(flooding);
    }

    fn apply(&mut self, flooding: bool) {
        let nice = if flooding { FLOODING_NICE } else { 0 };
        if nice == self.applied {
            return;
        }
        let text = nice.to_string();
        // A harness that has ended leaves ESRCH; the kernel's once-per-100-ms
        // rule leaves EAGAIN, and the next look tries again.
        let all = self.groups.iter_mut().all(|g| g.write_all(text.as_bytes()).is_ok());
        if all {
            self.applied = nice;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_floods_only_while_it_prints_faster_than_the_rate() {
        let t0 = Instant::now();
        let mut meter = FloodMeter::new(5_000_000, t0);
        // 1 MB in 100 ms is 10 MB/s.
        for i in 1..=10 {
            meter.output(100_000, t0 + Duration::from_millis(i * 9));
        }
        assert!(meter.output(0, t0 + WINDOW), "10 MB/s floods");
        // Within the next window nothing is decided.
        assert!(meter.output(10, t0 + WINDOW + Duration::from_millis(50)));
        // 10 bytes in a window is calm again.
        assert!(!meter.look(t0 + WINDOW * 2));
        // A busy agent's interface, 300 KB/s, never floods.
        let mut at = t0 + WINDOW * 2;
        for _ in 0..50 {
            at += Duration::from_millis(10);
            assert!(!meter.output(3_000, at));
        }
    }
}
