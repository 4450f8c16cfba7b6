//! A process identity is pid + start time + boot id: a pid alone can be reused
//! by a stranger after the process it named is gone.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub pid: i32,
    /// Field 22 of `/proc/<pid>/stat`: start time in clock ticks since boot.
    pub start_ticks: u64,
    pub boot_id: String,
}

/// What `/proc` says about a recorded identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    /// The same process is alive (pid, start time and boot id match).
    Alive,
    /// That process is gone (no such pid, or the pid now names another process,
    /// or the machine rebooted).
    Gone,
    /// `/proc` could not tell.
    Unknown,
}

impl Identity {
    /// Reads the identity of a live pid now.
    pub fn of(pid: i32) -> Option<Identity> {
        Some(Identity {
            pid,
            start_ticks: start_ticks(pid)?,
            boot_id: boot_id()?,
        })
    }

    pub fn liveness(&self) -> Liveness {
        let Some(boot) = boot_id() else {
            return Liveness::Unknown;
        };
        if boot != self.boot_id {
            return Liveness::Gone;
        }
        match std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) {
            Ok(stat) => match parse_start_ticks(&stat) {
                Some(t) if t == self.start_ticks => {
                    if is_zombie(&stat) {
                        Liveness::Gone
                    } else {
                        Liveness::Alive
                    }
                }
                Some(_) => Liveness::Gone,
                None => Liveness::Unknown,
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Liveness::Gone,
            Err(_) => Liveness::Unknown,
        }
    }
}

pub fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
}

pub fn start_ticks(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_start_ticks(&stat)
}

/// The fields after the command name, which is in parentheses and may itself
/// contain spaces and parentheses: split at the last `)`.
fn fields_after_comm(stat: &str) -> Option<Vec<&str>> {
    let close = stat.rfind(')')?;
    Some(stat[close + 1..].split_whitespace().collect())
}

fn parse_start_ticks(stat: &str) -> Option<u64> {
    // After the comm, field 3 (state) is index 0, so field 22 is index 19.
    fields_after_comm(stat)?.get(19)?.parse().ok()
}

fn is_zombie(stat: &str) -> bool {
    fields_after_comm(stat)
        .and_then(|f| f.first().copied())
        .is_some_and(|s| s == "Z" || s == "X")
}

/// Whether a pid names a process that has exited (a zombie not yet
/// reaped) or none at all.
pub fn has_exited(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| is_zombie(&stat))
}

/// The process group of a pid, from `/proc/<pid>/stat` (field 5).
pub fn pgid_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    fields_after_comm(&stat)?.get(2)?.parse().ok()
}

/// The session (field 6).
pub fn sid_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    fields_after_comm(&stat)?.get(3)?.parse().ok()
}

/// The parent pid (field 4).
pub fn ppid_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    fields_after_comm(&stat)?.get(1)?.parse().ok()
}

/// The command name (`comm`), for reports.
pub fn comm_of(pid: i32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let stat = "1234 (a) b (c)) S 1 1234 1234 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0";
        assert_eq!(parse_start_ticks(stat), Some(987654));
        assert!(!is_zombie(stat));
    }

    #[test]
    fn our_own_identity_is_alive_and_a_changed_start_time_is_gone() {
        let me = Identity::of(std::process::id() as i32).unwrap();
        assert_eq!(me.liveness(), Liveness::Alive);
        let stranger = Identity {
            start_ticks: me.start_ticks + 1,
            ..me.clone()
        };
        assert_eq!(stranger.liveness(), Liveness::Gone);
        let rebooted = Identity {
            boot_id: "another-boot".into(),
            ..me
        };
        assert_eq!(rebooted.liveness(), Liveness::Gone);
    }
}
