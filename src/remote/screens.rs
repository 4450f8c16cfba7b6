//! A remote run's screen, shown here: a screen subscription on a remote run
//! (`RemoteRun::watch_screen`) is the remote daemon's, over the host's link. Only
//! the screen's updates cross the link for viewing, ahead of the byte
//! mirror (the remote daemon sends them with its answers), so a pane of a
//! remote run shows its screen as it is now, however far the mirror lags.
//! When the link drops, each subscription waits for it to come back and
//! starts again from the whole current screen.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::sync::{mpsc, watch};

use super::link::HostLink;
use crate::api::{ErrorCode, method};
use crate::protocol::screen;

/// A screen subscription on a remote run: the host daemon's updates,
/// renumbered across connections, one in flight until acknowledged here.
/// Each is its own subscription there (its `sub`), so two panes here of
/// one remote run do not take the host's updates from each other. Closed
/// on drop, there too.
pub struct RemoteScreen {
    pub updates: mpsc::Receiver<Vec<u8>>,
    acked: watch::Sender<u64>,
    forward: tokio::task::JoinHandle<()>,
    link: Arc<HostLink>,
    run: String,
    sub: u64,
}

/// Subscription ids on hosts' links, unique in this daemon (0 is a
/// client's one subscription of a run, which a host of an older build
/// keeps for each connection).
static NEXT_SUB: AtomicU64 = AtomicU64::new(1);

impl RemoteScreen {
    pub(super) fn open(link: Arc<HostLink>, run: String) -> RemoteScreen {
        let sub = NEXT_SUB.fetch_add(1, Ordering::Relaxed);
        let (out, updates) = mpsc::channel(1);
        let (acked, acked_rx) = watch::channel(0);
        let forward = tokio::spawn(forward(link.clone(), run.clone(), sub, out, acked_rx));
        RemoteScreen {
            updates,
            acked,
            forward,
            link,
            run,
            sub,
        }
    }

    /// The client has shown update `seq` (this subscription's numbering).
    pub fn ack(&self, seq: u64) {
        self.acked.send_modify(|a| *a = (*a).max(seq));
    }
}

impl Drop for RemoteScreen {
    fn drop(&mut self) {
        self.forward.abort();
        let Some(conn) = self.link.current() else { return };
        conn.unroute_screen(&self.run, self.sub);
        let detach = json!({ "run": self.run, "screen": true, "sub": self.sub });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = conn.notify(method::RUNS_DETACH, detach).await;
            });
        }
    }
}

/// How long a subscription waits before asking a host that refused or
/// could not be reached again; doubled up to `RETRY_MAX`.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// Forwards the remote daemon's screen of `run` to the daemon here,
/// numbered across connections, one update in flight end to end: the
/// remote daemon is acknowledged once the daemon here has been.
async fn forward(
    link: Arc<HostLink>,
    run: String,
    sub: u64,
    out: mpsc::Sender<Vec<u8>>,
    mut acked: watch::Receiver<u64>,
) {
    let mut sent = 0u64;
    let mut retry = RETRY_FIRST;
    let mut connected = link.connected.subscribe();
    loop {
        connected.borrow_and_update();
        let conn = match link.connection().await {
            Ok(conn) => conn,
            Err(_) => {
                // Until the next try, or until another (the run's mirror)
                // has brought the link back.
                tokio::select! {
                    _ = tokio::time::sleep(retry) => {}
                    _ = connected.changed() => {}
                }
                retry = (retry * 2).min(RETRY_MAX);
                continue;
            }
        };
        let mut updates = conn.route_screen(&run, sub);
        let attached = conn
            .call(
                &link.name,
                &link.name,
                method::RUNS_ATTACH,
                json!({ "run": run, "screen": true, "sub": sub }),
            )
            .await;
        if let Err(e) = attached {
            conn.unroute_screen(&run, sub);
            if e.code == ErrorCode::UnknownRun {
                return;
            }
            tokio::time::sleep(retry).await;
            retry = (retry * 2).min(RETRY_MAX);
            continue;
        }
        retry = RETRY_FIRST;
        tracing::info!("run {run}: screen {sub} subscribed on host {}", link.name);
        while let Some(mut bytes) = updates.recv().await {
            let theirs = screen::seq_of(&bytes).unwrap_or(0);
            sent += 1;
            screen::set_seq(&mut bytes, sent);
            if out.send(bytes).await.is_err() || acked.wait_for(|a| *a >= sent).await.is_err() {
                return;
            }
            let ack = json!({ "run": run, "offset": theirs, "screen": true, "sub": sub });
            if conn.notify(method::RUNS_ACK, ack).await.is_err() {
                break;
            }
        }
        // The connection ended: the next one starts from the whole screen.
        conn.unroute_screen(&run, sub);
    }
}
