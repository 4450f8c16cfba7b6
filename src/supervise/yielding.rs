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
//! nothing is lost when the flood ends. Without privilege the kernel takes
//! one such change per 100 ms for the whole machine: the sessions change one
//! look apart, and a refused change is tried again at the next look.
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

/// One scheduling session and the nice value it was last given.
struct Group<W> {
    file: W,
    applied: i8,
}

/// The scheduling sessions of a run: the supervisor's and the harness's.
/// `W` is the `/proc/<pid>/autogroup` file (a stand-in in tests).
pub struct Yielding<W: Write = File> {
    groups: Vec<Group<W>>,
    meter: FloodMeter,
}

impl Yielding<File> {
    /// `rate`: bytes a second above which the run floods; 0 never yields.
    /// Only a session this run leads is touched: never the daemon's or the
    /// user's shell's, should a process here not have a session of its own.
    /// The files are opened while the harness is known to be ours (not yet
    /// reaped), so a reused pid can never be reached.
    pub fn new(harness: i32, rate: u64, now: Instant) -> Yielding {
        let leads = |pid: i32| identity::sid_of(pid) == Some(pid);
        let files = match rate {
            0 => Vec::new(),
            _ => [std::process::id() as i32, harness]
                .into_iter()
                .filter(|&pid| leads(pid))
                .filter_map(|pid| File::options().write(true).open(format!("/proc/{pid}/autogroup")).ok())
                .collect(),
        };
        Yielding::over(files, rate, now)
    }
}

impl<W: Write> Yielding<W> {
    fn over(files: Vec<W>, rate: u64, now: Instant) -> Yielding<W> {
        let groups = files.into_iter().map(|file| Group { file, applied: 0 }).collect();
        Yielding {
            groups,
            meter: FloodMeter::new(rate, now),
        }
    }

    fn target(&self) -> i8 {
        if self.meter.flooding { FLOODING_NICE } else { 0 }
    }

    /// When to look again even if output stops: while a group is lowered or
    /// still to be changed, at the end of the window.
    pub fn next_look(&self) -> Option<Instant> {
        let target = self.target();
        let pending = self.groups.iter().any(|g| g.applied != 0 || g.applied != target);
        pending.then_some(self.meter.since + WINDOW)
    }

    /// After a read of `n` bytes.
    pub fn output(&mut self, n: usize, now: Instant) {
        if self.groups.is_empty() {
            return;
        }
        self.meter.output(n, now);
        self.apply();
    }

    /// When output has been quiet for a while.
    pub fn quiet(&mut self, now: Instant) {
        if self.groups.is_empty() {
            return;
        }
        self.meter.look(now);
        self.apply();
    }

    /// Moves one group toward the target. Without privilege the kernel takes
    /// one change per 100 ms for the whole machine (EAGAIN otherwise), so
    /// the groups are changed one at a time, each look trying the next one
    /// still wrong. A group whose process is gone (ESRCH) is dropped.
    fn apply(&mut self) {
        let target = self.target();
        let Some(at) = self.groups.iter().position(|g| g.applied != target) else {
            return;
        };
        let group = &mut self.groups[at];
        match group.file.write_all(target.to_string().as_bytes()) {
            Ok(()) => group.applied = target,
            Err(e) if e.raw_os_error() == Some(nix::libc::ESRCH) => {
                self.groups.remove(at);
            }
            Err(_) => {}
        }
    }
}

/// The groups get their share back when the run's output ends, even mid-flood
/// (a few tries, past the kernel's 100 ms rule).
impl<W: Write> Drop for Yielding<W> {
    fn drop(&mut self) {
        for _ in 0..3 {
            for group in self.groups.iter_mut().filter(|g| g.applied != 0) {
                if group.file.write_all(b"0").is_ok() {
                    group.applied = 0;
                }
            }
            if self.groups.iter().all(|g| g.applied == 0) {
                return;
            }
            std::thread::sleep(WINDOW + Duration::from_millis(10));
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

    /// Takes one write per 100 ms across all its handles, as the kernel
    /// does for an unprivileged process; says what each handle was set to.
    #[derive(Clone)]
    struct Limited {
        last: std::rc::Rc<std::cell::Cell<Option<Instant>>>,
        clock: std::rc::Rc<std::cell::Cell<Instant>>,
        value: std::rc::Rc<std::cell::RefCell<String>>,
    }

    impl Write for Limited {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let now = self.clock.get();
            if self.last.get().is_some_and(|t| now.duration_since(t) < WINDOW) {
                return Err(std::io::Error::from_raw_os_error(nix::libc::EAGAIN));
            }
            self.last.set(Some(now));
            *self.value.borrow_mut() = String::from_utf8_lossy(buf).into_owned();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn both_groups_are_lowered_and_given_back_one_change_per_100_ms() {
        let t0 = Instant::now();
        let last = std::rc::Rc::new(std::cell::Cell::new(None));
        let clock = std::rc::Rc::new(std::cell::Cell::new(t0));
        let group = || Limited {
            last: last.clone(),
            clock: clock.clone(),
            value: Default::default(),
        };
        let (supervisor, harness) = (group(), group());
        let mut y = Yielding::over(vec![supervisor.clone(), harness.clone()], 1_000_000, t0);
        let mut at = t0;
        let mut step = |y: &mut Yielding<Limited>, ms: u64, bytes: usize| {
            at += Duration::from_millis(ms);
            clock.set(at);
            match bytes {
                0 => y.quiet(at),
                n => y.output(n, at),
            }
        };
        // A flood of 10 MB/s, read every 10 ms for half a second.
        for _ in 0..50 {
            step(&mut y, 10, 100_000);
        }
        assert_eq!(
            (supervisor.value.borrow().as_str(), harness.value.borrow().as_str()),
            ("19", "19")
        );
        // Quiet: each look gives one group back, until both are.
        for _ in 0..5 {
            step(&mut y, 110, 0);
        }
        assert_eq!(
            (supervisor.value.borrow().as_str(), harness.value.borrow().as_str()),
            ("0", "0")
        );
        assert!(y.next_look().is_none(), "nothing left to do: the reader may sleep");
    }
}
