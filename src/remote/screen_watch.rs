//! A remote run's screen, shown here: a screen subscription on a remote run
//! (`RemoteRun::watch_screen`) is the remote daemon's, over the host's link.
//! Only the screen's updates cross the link for viewing, ahead of the byte
//! mirror (the remote daemon sends them with its answers), so a pane of a
//! remote run shows its screen as it is now, however far the mirror lags.
//! When the link drops, each subscription waits for it to come back and
//! starts again from the whole current screen; when the run ends there,
//! after its last screen.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use super::link::{Connection, HostLink, ScreenEvent};
use crate::api::{AckParams, DetachParams, ErrorCode, method};
use crate::protocol::screen;

/// A screen subscription on a remote run: the host daemon's updates,
/// renumbered across connections, one in flight until acknowledged here.
/// Each is its own subscription there (its `sub`), so two panes here of
/// one remote run do not take the host's updates from each other. Dropped,
/// its task gives up the host's subscription once its own attach is
/// answered, so none is left behind there.
pub struct RemoteScreen {
    pub updates: mpsc::Receiver<Vec<u8>>,
    acked: watch::Sender<u64>,
    /// The run's subscriptions open here (`RemoteRun`), for a host of an
    /// older build that keeps one a run.
    open: Arc<Mutex<usize>>,
}

/// Subscription ids on hosts' links, unique in this daemon. 0 is a
/// client's one subscription of a run, all a host of an older build keeps.
static NEXT_SUB: AtomicU64 = AtomicU64::new(1);

impl RemoteScreen {
    /// Starts following; `open` counts the run's subscriptions here.
    pub(super) fn open(link: Arc<HostLink>, run: String, open: Arc<Mutex<usize>>, format: u8) -> RemoteScreen {
        *open.lock() += 1;
        let own = NEXT_SUB.fetch_add(1, Ordering::Relaxed);
        let (out, updates) = mpsc::channel(1);
        let (acked, acked_rx) = watch::channel(0);
        let forward = Forward {
            link,
            run,
            own,
            open: open.clone(),
            out,
            acked: acked_rx,
            sent: 0,
            format,
        };
        tokio::spawn(forward.run());
        RemoteScreen { updates, acked, open }
    }

    /// The client has shown update `seq` (this subscription's numbering).
    pub fn ack(&self, seq: u64) {
        self.acked.send_modify(|a| *a = (*a).max(seq));
    }
}

impl Drop for RemoteScreen {
    fn drop(&mut self) {
        let mut open = self.open.lock();
        *open = open.saturating_sub(1);
    }
}

/// How long a subscription waits before asking a host that refused or
/// could not be reached again; doubled up to `RETRY_MAX`.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// The task behind a `RemoteScreen`: forwards the remote daemon's screen
/// of `run` to the daemon here, numbered across connections, one update
/// in flight end to end (the remote daemon is acknowledged once the daemon
/// here has been). It ends when the `RemoteScreen` is dropped (`out`
/// closes), or once the run has ended there.
struct Forward {
    link: Arc<HostLink>,
    run: String,
    /// This subscription's id on hosts that keep several a run.
    own: u64,
    open: Arc<Mutex<usize>>,
    out: mpsc::Sender<Vec<u8>>,
    acked: watch::Receiver<u64>,
    /// Updates sent here so far.
    sent: u64,
    /// The screen format asked of the host (a host of an older build
    /// ignores it and sends format 1).
    format: u8,
}

/// How one connection's subscription ended.
enum Relayed {
    /// The connection went: the next one starts from the whole screen.
    LinkLost,
    /// The host failed the subscription: ask again shortly.
    Failed,
    /// The run ended there, its last screen sent.
    Ended,
    /// The `RemoteScreen` was dropped.
    Closed,
}

impl Forward {
    async fn run(mut self) {
        let mut retry = RETRY_FIRST;
        let mut connected = self.link.connected.subscribe();
        loop {
            connected.borrow_and_update();
            let conn = tokio::select! {
                conn = self.link.connection() => conn,
                _ = self.out.closed() => return,
            };
            let Ok(conn) = conn else {
                // Until the next try, or until another (the run's mirror)
                // has brought the link back.
                tokio::select! {
                    _ = tokio::time::sleep(retry) => {}
                    _ = connected.changed() => {}
                    _ = self.out.closed() => return,
                }
                retry = (retry * 2).min(RETRY_MAX);
                continue;
            };
            let sub = match self.link.screen_subs.load(Ordering::Relaxed) {
                true => self.own,
                false => 0,
            };
            let mut updates = conn.route_screen(&self.run, sub);
            // Never cut short: a detach must not overtake its attach there.
            let attach = crate::api::AttachParams {
                run: self.run.clone(),
                screen: true,
                sub,
                screen_format: Some(self.format),
                ..Default::default()
            };
            let attached = conn
                .ask_raw::<method::RunsAttach>(&self.link.name, &self.link.name, attach)
                .await;
            if let Err(e) = attached {
                conn.unroute_screen(&self.run, sub);
                if e.code == ErrorCode::UnknownRun {
                    return;
                }
                tokio::select! {
                    _ = tokio::time::sleep(retry) => {}
                    _ = self.out.closed() => return,
                }
                retry = (retry * 2).min(RETRY_MAX);
                continue;
            }
            retry = RETRY_FIRST;
            tracing::info!("run {}: screen {sub} subscribed on host {}", self.run, self.link.name);
            let relayed = self.relay(&conn, sub, &mut updates).await;
            conn.unroute_screen(&self.run, sub);
            match relayed {
                Relayed::LinkLost => {}
                Relayed::Failed => tokio::time::sleep(retry).await,
                Relayed::Ended => return,
                Relayed::Closed => {
                    // On a host that keeps one subscription a run, only
                    // the run's last here gives it up.
                    let last = *self.open.lock() == 0;
                    if sub != 0 || last {
                        let detach = DetachParams {
                            run: self.run.clone(),
                            screen: Some(true),
                            sub: Some(sub),
                        };
                        let _ = conn.notify::<method::RunsDetach>(detach).await;
                    }
                    return;
                }
            }
        }
    }

    /// Passes on one connection's updates until it or the subscription ends.
    async fn relay(&mut self, conn: &Connection, sub: u64, updates: &mut mpsc::Receiver<ScreenEvent>) -> Relayed {
        loop {
            let event = tokio::select! {
                event = updates.recv() => event,
                _ = self.out.closed() => return Relayed::Closed,
            };
            let mut bytes = match event {
                None => return Relayed::LinkLost,
                Some(ScreenEvent::End { error: None }) => return Relayed::Ended,
                Some(ScreenEvent::End { error: Some(e) }) => {
                    tracing::info!("run {}: the screen on host {} failed: {e}", self.run, self.link.name);
                    return Relayed::Failed;
                }
                Some(ScreenEvent::Update(bytes)) => bytes,
            };
            let theirs = screen::seq_of(&bytes).unwrap_or(0);
            self.sent += 1;
            screen::set_seq(&mut bytes, self.sent);
            let sent = self.sent;
            if self.out.send(bytes).await.is_err() || self.acked.wait_for(|a| *a >= sent).await.is_err() {
                return Relayed::Closed;
            }
            let ack = AckParams {
                run: self.run.clone(),
                offset: theirs,
                screen: true,
                sub,
            };
            if conn.notify::<method::RunsAck>(ack).await.is_err() {
                return Relayed::LinkLost;
            }
        }
    }
}
