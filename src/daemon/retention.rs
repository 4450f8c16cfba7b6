//! Retention (docs/design.md §13): at start and then at most once an hour
//! (of the scheduler's clock), the output logs the `[retention]` policy
//! names are deleted — ended runs' only, oldest first — and each run's
//! record says when (`log_pruned_at`, `LOG_PRUNED`). Records stay.

use std::sync::Arc;

use super::Daemon;
use crate::api::{ApiError, RetentionReport};
use crate::store::logs::Kept;
use crate::values::retention::{Log, Prune};

/// An hour between prunes, by the scheduler's clock.
const EVERY_MS: i64 = 3_600_000;

/// The files of a run's folder that are its output, by what `paths`
/// calls them; the rest (the exit evidence, the supervisor's log) is small
/// and part of the record.
fn output_files(daemon: &Daemon, id: &str) -> [std::path::PathBuf; 4] {
    let p = &daemon.engine.paths;
    [p.output_log(id), p.output_index(id), p.sizes(id), p.checkpoints(id)]
}

pub async fn run(daemon: Arc<Daemon>) {
    let mut last: Option<i64> = None;
    loop {
        let now = daemon.routines.clock.now_ms();
        if now > 0 && last.is_none_or(|l| now - l >= EVERY_MS) {
            last = Some(now);
            if let Err(e) = prune(&daemon, now).await {
                tracing::warn!("retention: {}", e.message);
            }
        }
        tokio::time::sleep(daemon.routines.clock.nap(EVERY_MS / 60)).await;
    }
}

/// What the policy prunes at `now`, with the bytes of every log kept.
async fn plan(daemon: &Arc<Daemon>, now: i64) -> Result<(Vec<Prune>, u64), ApiError> {
    let kept = daemon.engine.store.logs().kept().await.map_err(ApiError::internal)?;
    let logs: Vec<Log> = kept
        .into_iter()
        .map(
            |Kept {
                 id,
                 name,
                 state,
                 ended_at,
             }| {
                let live = state.is_live() || daemon.engine.live(&id).is_some();
                let bytes = output_files(daemon, &id)
                    .iter()
                    .filter_map(|f| std::fs::metadata(f).ok())
                    .map(|m| m.len())
                    .sum();
                Log {
                    id,
                    name,
                    live,
                    ended_at,
                    bytes,
                }
            },
        )
        .collect();
    let policy = daemon.engine.config().retention;
    let total = logs.iter().map(|l| l.bytes).sum();
    Ok((crate::values::retention::plan(&policy, &logs, now), total))
}

async fn prune(daemon: &Arc<Daemon>, now: i64) -> Result<(), ApiError> {
    let (pruned, _) = plan(daemon, now).await?;
    for p in pruned {
        // Live again (a rerun of it cannot be: ids are new) or not: the
        // daemon's own view decides, just before.
        if daemon.engine.live(&p.id).is_some() {
            continue;
        }
        for file in output_files(daemon, &p.id) {
            if let Err(e) = std::fs::remove_file(&file)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!("retention: cannot delete {}: {e}", file.display());
            }
        }
        daemon
            .engine
            .store
            .logs()
            .pruned(&p.id, &p.reason, p.bytes)
            .await
            .map_err(ApiError::internal)?;
        tracing::info!(
            "retention: pruned the log of run {} ({} bytes): {}",
            p.name,
            p.bytes,
            p.reason
        );
        daemon.engine.changed(&p.id);
    }
    Ok(())
}

/// `retention.plan`: the disk used and what the policy would prune now.
pub async fn report(daemon: &Arc<Daemon>) -> Result<RetentionReport, ApiError> {
    let now = daemon.routines.clock.now_ms();
    let (would_prune, logs_bytes) = plan(daemon, now).await?;
    let home = daemon.engine.paths.home.clone();
    let home_bytes = tokio::task::spawn_blocking(move || disk_use(&home)).await.unwrap_or(0);
    let policy = daemon.engine.config().retention;
    Ok(RetentionReport {
        home_bytes,
        logs_bytes,
        keep_days: policy.keep_days,
        max_log_bytes: policy.max_log_bytes,
        max_total_bytes: policy.max_total_bytes,
        would_prune,
    })
}

/// The bytes of every file under `dir`, symlinks not followed.
fn disk_use(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => disk_use(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
            _ => 0,
        })
        .sum()
}
