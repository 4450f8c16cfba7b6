//! Signalling with the identity checked first (docs/design.md §4 process safety).

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use super::identity::{Identity, Liveness};

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SignalError {
    #[error("process {0} is gone (or its pid now names another process); not signalled")]
    NotVerified(i32),
    #[error("cannot tell whether process {0} is still the one recorded; not signalled")]
    Unverifiable(i32),
    #[error("signal failed: {0}")]
    Os(#[from] nix::Error),
}

fn verify(leader: &Identity) -> Result<(), SignalError> {
    match leader.liveness() {
        Liveness::Alive => Ok(()),
        Liveness::Gone => Err(SignalError::NotVerified(leader.pid)),
        Liveness::Unknown => Err(SignalError::Unverifiable(leader.pid)),
    }
}

/// Signals the process group led by `leader`, only while the leader's
/// identity is verified alive.
pub fn signal_group(leader: &Identity, pgid: i32, signal: Signal) -> Result<(), SignalError> {
    verify(leader)?;
    killpg(Pid::from_raw(pgid), signal)?;
    Ok(())
}

/// Signals one process, only while its identity is verified alive.
pub fn signal_process(target: &Identity, signal: Signal) -> Result<(), SignalError> {
    verify(target)?;
    kill(Pid::from_raw(target.pid), signal)?;
    Ok(())
}

/// Whether any process is still in group `pgid`. A group id cannot be handed
/// to a new group while any member (or the zombie leader) still holds it.
pub fn group_exists(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None).is_ok()
}

pub fn signal_name(signal: i32) -> String {
    Signal::try_from(signal)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {signal}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_pid_is_never_signalled() {
        // A real process whose recorded start time does not match: the pid
        // now belongs to "a stranger" as far as the record is concerned.
        let mut child = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let pid = child.id() as i32;
        let real = Identity::of(pid).unwrap();
        let stale = Identity {
            start_ticks: real.start_ticks.wrapping_sub(1),
            ..real.clone()
        };
        assert_eq!(
            signal_process(&stale, Signal::SIGKILL),
            Err(SignalError::NotVerified(pid))
        );
        assert_eq!(child.try_wait().unwrap(), None, "the stranger must still be alive");
        signal_process(&real, Signal::SIGKILL).unwrap();
        child.wait().unwrap();
    }
}
