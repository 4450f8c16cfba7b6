//! The supervisors this daemon spawned, reaped when they end, so none
//! lingers as a zombie: one task woken by SIGCHLD looks at each, instead of
//! a thread per run blocked in `waitpid` (3 000 runs were 3 000 threads).
//! A sweep every `SWEEP_EVERY` catches a child whose signal came before it
//! was handed over here.

use std::process::Child;
use std::sync::OnceLock;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::signal::unix::{SignalKind, signal};

const SWEEP_EVERY: Duration = Duration::from_secs(30);

fn children() -> &'static Mutex<Vec<Child>> {
    static CHILDREN: OnceLock<Mutex<Vec<Child>>> = OnceLock::new();
    CHILDREN.get_or_init(Default::default)
}

/// Takes a spawned supervisor, to be reaped whenever it ends. Called in the
/// daemon's runtime (a blocking task's thread has it too); outside one,
/// a thread waits for it as before.
pub fn reap(mut child: Child) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        std::thread::spawn(move || child.wait());
        return;
    };
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        runtime.spawn(watch());
    });
    // Ended already (its SIGCHLD may have come and gone): reaped now.
    if !matches!(child.try_wait(), Ok(Some(_))) {
        children().lock().push(child);
    }
}

/// On each SIGCHLD, and every `SWEEP_EVERY`, reaps the children that ended.
async fn watch() {
    let mut ended = match signal(SignalKind::child()) {
        Ok(ended) => Some(ended),
        Err(e) => {
            tracing::warn!("no SIGCHLD stream ({e}): supervisors are reaped every {SWEEP_EVERY:?}");
            None
        }
    };
    loop {
        match ended.as_mut() {
            Some(ended) => {
                let _ = tokio::time::timeout(SWEEP_EVERY, ended.recv()).await;
            }
            None => tokio::time::sleep(SWEEP_EVERY).await,
        }
        sweep();
    }
}

fn sweep() {
    // `try_wait` reaps one that ended; an error means it is not ours to
    // wait for any more.
    children().lock().retain_mut(|c| matches!(c.try_wait(), Ok(None)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_ended_child_is_reaped_without_a_thread_waiting_for_it() {
        let child = std::process::Command::new("sh")
            .args(["-c", "sleep 0.2"])
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        reap(child);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        // Reaped: the pid no longer names a process, not even a zombie.
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            assert!(tokio::time::Instant::now() < deadline, "pid {pid} was not reaped");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
