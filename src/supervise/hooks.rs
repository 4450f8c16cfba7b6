//! A boxed run's hook socket (docs/design.md §15). In bubblewrap the
//! agents state directory is not there, so a harness hook (`agents hook`)
//! cannot reach the daemon's socket. The supervisor serves one of the
//! run's own instead, bound into the box at `harness::sandbox::HOOK_SOCKET`
//! and named to the harness by `HOOK_SOCKET_VAR`: each connection writes one
//! report (JSON), which goes to the daemon as a note on the supervisor's
//! link (`Note::Hook`). The link is the run's identity, so a report needs no
//! proof and can only ever be about this run; nothing else is served.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::UnixListener;
use tokio::sync::Notify;

use crate::api::HookReport;

/// The largest report read (a hook's payload is bounded the same way).
pub const MAX_REPORT: usize = 1 << 20;
/// A hook writes its report at once; a connection that does not is closed.
const READ_TIMEOUT: Duration = Duration::from_secs(2);
/// Reports kept while no daemon watches (it is restarting): the newest.
const KEPT: usize = 256;

/// Reports told on the socket, until a watcher takes them.
#[derive(Default)]
pub struct Reports {
    queue: Mutex<VecDeque<HookReport>>,
    arrived: Notify,
}

impl Reports {
    fn push(&self, report: HookReport) {
        let mut queue = self.queue.lock();
        if queue.len() == KEPT {
            queue.pop_front();
        }
        queue.push_back(report);
        drop(queue);
        self.arrived.notify_one();
    }

    /// Every report waiting, oldest first.
    pub fn take(&self) -> Vec<HookReport> {
        self.queue.lock().drain(..).collect()
    }

    /// Resolves when a report has come since the last [`Reports::take`]
    /// (at once if one came while nobody waited).
    pub async fn arrived(&self) {
        self.arrived.notified().await
    }
}

/// Binds the socket at `path` (owner-only), before the harness starts.
pub fn bind(path: &std::path::Path) -> std::io::Result<UnixListener> {
    let _ = std::fs::remove_file(path);
    let listener = UnixListener::bind(path)?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Takes reports until the supervisor ends.
pub async fn serve(listener: UnixListener, reports: Arc<Reports>) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let reports = reports.clone();
        tokio::spawn(async move {
            let mut bytes = Vec::new();
            let mut limited = (&mut stream).take(MAX_REPORT as u64);
            let read = limited.read_to_end(&mut bytes);
            if !matches!(tokio::time::timeout(READ_TIMEOUT, read).await, Ok(Ok(_))) {
                return;
            }
            match serde_json::from_slice::<HookReport>(&bytes) {
                Ok(report) => reports.push(report),
                Err(e) => tracing::info!("a hook report that does not read: {e}"),
            }
        });
    }
}
