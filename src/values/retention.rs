//! Retention (docs/design.md §13): which ended runs' output logs a policy
//! prunes — older than `keep_days`, larger than `max_log_bytes`, then the
//! oldest until all logs fit `max_total_bytes`. Never a live run's log,
//! never a record. Pure: the daemon gathers the runs and does the pruning
//! (`daemon/retention.rs`).

use serde::{Deserialize, Serialize};

/// `[retention]` in `config.toml`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Retention {
    /// Ended runs' logs older than this many days are pruned; 0 keeps them
    /// whatever their age.
    pub keep_days: u64,
    /// An ended run's log larger than this is pruned; none: no limit.
    pub max_log_bytes: Option<u64>,
    /// All runs' logs together; past it, the oldest ended runs' go first.
    pub max_total_bytes: Option<u64>,
}

impl Default for Retention {
    fn default() -> Self {
        // A month: long enough to look back at last sprint's runs, short
        // enough that a busy machine's logs do not grow without end.
        Retention {
            keep_days: 30,
            max_log_bytes: None,
            max_total_bytes: None,
        }
    }
}

/// A run's log as the policy sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Log {
    pub id: String,
    pub name: String,
    /// Live (or its end not stored yet): never pruned.
    pub live: bool,
    /// When it ended (ms); else when it was created.
    pub ended_at: i64,
    /// Bytes of its output log, index, sizes and checkpoints.
    pub bytes: u64,
}

/// One log the policy prunes, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prune {
    pub id: String,
    pub name: String,
    pub bytes: u64,
    pub reason: String,
}

const DAY_MS: i64 = 24 * 3600 * 1000;

/// The logs to prune at `now`, oldest first. `logs` are the runs whose
/// logs are still there.
pub fn plan(policy: &Retention, logs: &[Log], now: i64) -> Vec<Prune> {
    let mut ended: Vec<&Log> = logs.iter().filter(|l| !l.live && l.bytes > 0).collect();
    ended.sort_by_key(|l| (l.ended_at, l.id.clone()));
    let mut out: Vec<Prune> = Vec::new();
    let prune = |l: &Log, reason: String| Prune {
        id: l.id.clone(),
        name: l.name.clone(),
        bytes: l.bytes,
        reason,
    };
    for l in &ended {
        if policy.keep_days > 0 && now - l.ended_at > policy.keep_days as i64 * DAY_MS {
            out.push(prune(l, format!("older than keep_days = {}", policy.keep_days)));
        } else if let Some(max) = policy.max_log_bytes.filter(|max| l.bytes > *max) {
            out.push(prune(l, format!("{} bytes, over max_log_bytes = {max}", l.bytes)));
        }
    }
    if let Some(max) = policy.max_total_bytes {
        let mut total: u64 = logs.iter().map(|l| l.bytes).sum::<u64>() - out.iter().map(|p| p.bytes).sum::<u64>();
        for l in &ended {
            if total <= max {
                break;
            }
            if out.iter().any(|p| p.id == l.id) {
                continue;
            }
            total -= l.bytes;
            out.push(prune(l, format!("all logs over max_total_bytes = {max}, oldest first")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(id: &str, live: bool, ended_days_ago: i64, bytes: u64) -> Log {
        Log {
            id: id.into(),
            name: id.into(),
            live,
            ended_at: 100 * DAY_MS - ended_days_ago * DAY_MS,
            bytes,
        }
    }

    #[test]
    fn old_logs_go_by_age_and_size_never_a_live_runs() {
        let now = 100 * DAY_MS;
        let logs = [
            log("old", false, 40, 10),
            log("live-old", true, 40, 10),
            log("new", false, 1, 10),
            log("big", false, 2, 5000),
        ];
        let policy = Retention {
            keep_days: 30,
            max_log_bytes: Some(1000),
            max_total_bytes: None,
        };
        let ids: Vec<String> = plan(&policy, &logs, now).into_iter().map(|p| p.id).collect();
        assert_eq!(ids, ["old", "big"]);
        let forever = Retention {
            keep_days: 0,
            ..Default::default()
        };
        assert!(plan(&forever, &logs, now).is_empty());
    }

    #[test]
    fn over_the_total_the_oldest_ended_logs_go_first_until_it_fits() {
        let now = 100 * DAY_MS;
        let logs = [
            log("a", false, 5, 100),
            log("b", false, 4, 100),
            log("live", true, 9, 100),
            log("c", false, 3, 100),
        ];
        let policy = Retention {
            keep_days: 30,
            max_log_bytes: None,
            max_total_bytes: Some(250),
        };
        let ids: Vec<String> = plan(&policy, &logs, now).into_iter().map(|p| p.id).collect();
        assert_eq!(ids, ["a", "b"], "400 bytes → 200: the two oldest ended ones");
    }
}
