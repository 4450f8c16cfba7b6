//! A supervisor that loses its daemon starts one (docs/design.md §2): after
//! a daemon crash, queued prompts, status and exits go on without a user
//! typing a command. The daemon's lock keeps it to one daemon however many
//! supervisors try; a daemon stopped on purpose (`agents daemon stop`) says
//! so first (`sup.release`), and is not started again. A supervisor whose
//! run's folder is removed ends the run and itself.

use std::sync::Arc;
use std::time::Duration;

use super::server::Supervised;
use crate::paths::Paths;

/// How long the daemon's link may stay away before a daemon is started:
/// longer than an upgrade's re-exec (≤ 3 s of draining, then re-adoption).
const GRACE: Duration = Duration::from_secs(4);
/// Spread over this, so a hundred supervisors that lost the same daemon do
/// not all start one at once: the first one's daemon re-adopts the rest.
const SPREAD_MS: u64 = 2000;
/// A start that brought no daemon back is tried again after this, doubled
/// up to `RETRY_MAX` (a home that cannot hold a daemon: a full disk).
const RETRY_FIRST: Duration = Duration::from_secs(5);
const RETRY_MAX: Duration = Duration::from_secs(60);

/// Watches the daemon's link for as long as the supervisor lives.
pub async fn keep_daemon(run: Arc<Supervised>, paths: Paths) {
    let mut watchers = run.watchers.subscribe();
    let spread = Duration::from_millis(u64::from(std::process::id()) % SPREAD_MS);
    let mut retry = RETRY_FIRST;
    loop {
        // A daemon connected (or none ever did): wait until it goes.
        if watchers.wait_for(|w| *w == 0).await.is_err() {
            return;
        }
        let came_back = tokio::time::timeout(GRACE + spread, watchers.wait_for(|w| *w > 0))
            .await
            .is_ok_and(|r| r.is_ok());
        if came_back {
            retry = RETRY_FIRST;
            continue;
        }
        if run.released() || run.exited.borrow().is_some() {
            // Stopped on purpose, or the run is ending: wait for a daemon.
            if watchers.wait_for(|w| *w > 0).await.is_err() {
                return;
            }
            continue;
        }
        match start_daemon(&paths) {
            Ok(pid) => {
                tracing::info!("the daemon went away; started one (pid {pid})");
                run.started_daemons.lock().push(pid);
            }
            Err(e) => tracing::warn!("the daemon went away and cannot be started: {e}"),
        }
        let came = tokio::time::timeout(retry, watchers.wait_for(|w| *w > 0)).await.is_ok();
        if !came {
            retry = (retry * 2).min(RETRY_MAX);
        }
    }
}

/// Starts `agents daemon run` detached (its own session), from the file
/// this supervisor was started from (the new one, after an upgrade).
fn start_daemon(paths: &Paths) -> Result<i32, String> {
    use std::os::unix::process::CommandExt;
    let exe = crate::harness::agents_binary()?;
    let log = paths.open_daemon_log()?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["daemon", "run"])
        .env_clear()
        .envs(crate::paths::process_env())
        .env("AGENTS_HOME", &paths.home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    // SAFETY: setsid is async-signal-safe. The daemon outlives this run and
    // never gets its signals.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot start the daemon: {e}"))?;
    let pid = child.id() as i32;
    // Reaped when it exits (another daemon held the lock, or a later stop);
    // a run ending first leaves it to init.
    let _ = std::thread::Builder::new()
        .name("daemon-waiter".into())
        .spawn(move || child.wait());
    Ok(pid)
}

/// How often a supervisor looks for its run's folder.
const FOLDER_CHECK: Duration = Duration::from_secs(5);

/// A run whose folder was removed under it (its `AGENTS_HOME` deleted) can
/// be neither reached nor recorded by any daemon: its harness is ended, as
/// a cancel ends it, and then this supervisor, rather than both living on
/// unseen. Nothing else removes the folder of a live run.
pub async fn end_when_removed(run: Arc<Supervised>, dir: std::path::PathBuf) {
    loop {
        tokio::time::sleep(FOLDER_CHECK).await;
        if removed(&dir) {
            run.cancel(crate::protocol::exit::EndedBy::Cancel, false);
            return;
        }
    }
}

/// Whether the folder is gone (not merely unreadable for a moment).
pub fn removed(dir: &std::path::Path) -> bool {
    matches!(std::fs::symlink_metadata(dir), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
}
