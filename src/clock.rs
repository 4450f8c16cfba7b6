//! The one clock every stored and recorded time is read from, and the
//! clock routines are scheduled by.

/// Milliseconds since the Unix epoch, the unit of every stored time.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Names a file holding the time routines are scheduled by (ms since the
/// epoch, as text), instead of the system's: how the tests move a daemon's
/// schedule through hours and days without waiting for them. Nothing but
/// when routines fire reads it; every record keeps the real time.
pub const TEST_CLOCK_VAR: &str = "AGENTS_TEST_CLOCK";

/// When routines are due.
#[derive(Debug, Clone)]
pub enum Clock {
    System,
    /// Read from a file at each look (`TEST_CLOCK_VAR`).
    File(std::path::PathBuf),
}

impl Clock {
    /// The system's, unless `AGENTS_TEST_CLOCK` names a file.
    pub fn from_env() -> Clock {
        match std::env::var_os(TEST_CLOCK_VAR) {
            Some(path) if !path.is_empty() => Clock::File(path.into()),
            _ => Clock::System,
        }
    }

    pub fn now_ms(&self) -> i64 {
        match self {
            Clock::System => now_ms(),
            // A file being rewritten reads as empty for a moment: the real
            // time then would jump the schedule, so the epoch (nothing due).
            Clock::File(path) => std::fs::read_to_string(path)
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(0),
        }
    }

    /// How long the scheduler may sleep before it looks at this clock
    /// again, when its next fire is `until_ms` of this clock's time away: a
    /// file clock can jump at any moment, so it is looked at often (20 ms:
    /// a test's step is seen within a frame); the system's is trusted up
    /// to a minute (a changed config or a suspended machine seen within it).
    pub fn nap(&self, until_ms: i64) -> std::time::Duration {
        match self {
            Clock::System => std::time::Duration::from_millis(until_ms.clamp(10, 60_000) as u64),
            Clock::File(_) => std::time::Duration::from_millis(20),
        }
    }
}
