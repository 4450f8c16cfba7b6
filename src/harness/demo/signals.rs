//! SIGINT and SIGTERM as the demo agent sees them. The handler only records
//! the signal and writes a byte to a self-pipe; every wait of the agent
//! (idle prompt, spinner, slow start, subagents) polls that pipe next to its
//! own descriptors, so a signal can never slip in between a check and a
//! blocking call.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Instant;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};

use super::Stop;

static INTERRUPT_PENDING: AtomicBool = AtomicBool::new(false);
static TERMINATE_PENDING: AtomicBool = AtomicBool::new(false);
/// The self-pipe's write end, or -1 when no [`Signals`] is installed.
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn record(signal: nix::libc::c_int) {
    if signal == nix::libc::SIGTERM {
        TERMINATE_PENDING.store(true, Ordering::SeqCst);
    } else {
        INTERRUPT_PENDING.store(true, Ordering::SeqCst);
    }
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let errno = Errno::last_raw();
        // SAFETY: write(2) is async-signal-safe and the buffer outlives the
        // call. The pipe is non-blocking: when it is full the byte is dropped,
        // which is fine because a wake-up is already pending.
        unsafe { nix::libc::write(fd, [1u8].as_ptr().cast(), 1) };
        Errno::set_raw(errno);
    }
}

/// Whether a SIGTERM arrived and was not handled yet (a write blocked on a
/// stalled reader uses this to give up).
pub(super) fn terminate_requested() -> bool {
    TERMINATE_PENDING.load(Ordering::SeqCst)
}

/// The installed handlers and the read end of their self-pipe. One per process.
pub(super) struct Signals {
    wake: OwnedFd,
    _wake_write: OwnedFd,
    ignore_interrupt: bool,
    ignore_terminate: bool,
}

impl Signals {
    /// Catches SIGINT and SIGTERM, or ignores the ones asked for.
    pub(super) fn install(ignore_interrupt: bool, ignore_terminate: bool) -> nix::Result<Self> {
        let (wake, wake_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK)?;
        WAKE_FD.store(wake_write.as_raw_fd(), Ordering::SeqCst);
        let signals = Self {
            wake,
            _wake_write: wake_write,
            ignore_interrupt,
            ignore_terminate,
        };
        // No SA_RESTART: a write blocked on a stalled PTY returns EINTR, so
        // SIGTERM is still honoured.
        let catch = SigHandler::Handler(record);
        signals.set(catch)?;
        Ok(signals)
    }

    /// Gives the signals that are not ignored their default action back
    /// (for `--hang`: the process then dies by the signal).
    pub(super) fn restore_defaults(&self) -> nix::Result<()> {
        self.set(SigHandler::SigDfl)
    }

    fn set(&self, handler: SigHandler) -> nix::Result<()> {
        let action = |ignored: bool| {
            let handler = if ignored { SigHandler::SigIgn } else { handler };
            SigAction::new(handler, SaFlags::empty(), SigSet::empty())
        };
        // SAFETY: `record` is async-signal-safe (atomics and write(2) only).
        unsafe {
            sigaction(Signal::SIGINT, &action(self.ignore_interrupt))?;
            sigaction(Signal::SIGTERM, &action(self.ignore_terminate))?;
        }
        Ok(())
    }

    /// Takes the pending signal, SIGTERM first.
    pub(super) fn check(&self) -> Result<(), Stop> {
        if TERMINATE_PENDING.swap(false, Ordering::SeqCst) {
            return Err(Stop::Terminated);
        }
        if INTERRUPT_PENDING.swap(false, Ordering::SeqCst) {
            return Err(Stop::Interrupted);
        }
        Ok(())
    }

    pub(super) fn sleep_until(&self, deadline: Instant) -> Result<(), Stop> {
        while Instant::now() < deadline {
            self.wait(&[], Some(deadline))?;
        }
        Ok(())
    }

    /// Waits until one of `fds` is readable (or hung up), `deadline` passes,
    /// or a signal arrives. Returns which descriptors are ready (none when
    /// the deadline passed).
    pub(super) fn wait(&self, fds: &[BorrowedFd<'_>], deadline: Option<Instant>) -> Result<Vec<bool>, Stop> {
        let readable = PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR;
        loop {
            self.check()?;
            let timeout = match deadline {
                None => PollTimeout::NONE,
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(vec![false; fds.len()]);
                    }
                    // Round up, or the last poll would spin at 0 ms.
                    let millis = left.as_micros().div_ceil(1000);
                    PollTimeout::try_from(millis).unwrap_or(PollTimeout::MAX)
                }
            };
            let mut polled: Vec<PollFd<'_>> = std::iter::once(self.wake.as_fd())
                .chain(fds.iter().copied())
                .map(|fd| PollFd::new(fd, PollFlags::POLLIN))
                .collect();
            match poll(&mut polled, timeout) {
                Err(Errno::EINTR) | Ok(0) => continue,
                Err(err) => return Err(err.into()),
                Ok(_) => {}
            }
            let ready: Vec<bool> = polled
                .iter()
                .map(|fd| fd.revents().is_some_and(|got| got.intersects(readable)))
                .collect();
            if ready[0] {
                // Signals first: the loop's top takes the pending one.
                self.drain();
                continue;
            }
            if ready[1..].iter().any(|&ready| ready) {
                return Ok(ready[1..].to_vec());
            }
        }
    }

    fn drain(&self) {
        let mut sink = [0u8; 64];
        while matches!(nix::unistd::read(&self.wake, &mut sink), Ok(n) if n > 0) {}
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        // The pipe closes next; a late handler must not write into whatever
        // reuses its descriptor.
        WAKE_FD.store(-1, Ordering::SeqCst);
    }
}
