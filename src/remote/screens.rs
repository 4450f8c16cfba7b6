//! A remote run's screen, shown here: the screen subscriptions of its
//! stand-in supervisor are the remote daemon's, over the host's link. Only
//! the screen's updates cross the link for viewing, ahead of the byte
//! mirror (the remote daemon sends them with its answers), so a pane of a
//! remote run shows its screen as it is now, however far the mirror lags.
//! When the link drops, each subscription waits for it to come back and
//! starts again from the whole current screen.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::link::HostLink;
use crate::api::{ApiError, ErrorCode, method};
use crate::protocol::Frame;
use crate::protocol::rpc::Request;
use crate::protocol::screen;
use crate::protocol::supervisor::screen_method;
use crate::supervise::ScreenSubscriptions;

/// The screen subscriptions of one remote run's stand-in.
#[derive(Default)]
pub struct StandInScreens {
    subs: ScreenSubscriptions,
}

impl StandInScreens {
    /// Handles a screen method of the supervisor protocol; `None` when
    /// `req` is not one.
    pub fn handle(
        &mut self,
        link: &Arc<HostLink>,
        run: &str,
        req: &Request,
        out: &mpsc::Sender<Frame>,
    ) -> Option<Result<Value, ApiError>> {
        let sub = req.params.get("sub").and_then(Value::as_u64);
        let result = match req.method.as_str() {
            screen_method::WATCH => {
                let Some(sub) = sub else {
                    return Some(Err(ApiError::bad_request("sub missing")));
                };
                if !link.serves_screens.load(std::sync::atomic::Ordering::Relaxed) {
                    // The daemon here builds the screen from the mirror.
                    return Some(Err(ApiError::new(
                        ErrorCode::NotRunning,
                        format!("host {} serves no screens (an older agents)", link.name),
                    )));
                }
                let (link, run, out) = (link.clone(), run.to_string(), out.clone());
                self.subs
                    .open(sub, |acked| tokio::spawn(forward(link, run, sub, out, acked)));
                Ok(json!({ "sub": sub }))
            }
            screen_method::ACK => {
                self.subs.ack(&req.params);
                Ok(Value::Null)
            }
            screen_method::CLOSE => {
                if let Some(sub) = sub {
                    self.close(link, run, sub);
                }
                Ok(Value::Null)
            }
            _ => return None,
        };
        Some(result)
    }

    fn close(&mut self, link: &Arc<HostLink>, run: &str, sub: u64) {
        if self.subs.close(sub)
            && self.subs.is_empty()
            && let Some(conn) = link.current()
        {
            conn.unroute_screen(run);
            let run = run.to_string();
            tokio::spawn(async move {
                let _ = conn
                    .notify(method::RUNS_DETACH, json!({ "run": run, "screen": true }))
                    .await;
            });
        }
    }

    /// The stand-in's link ended: every subscription with it.
    pub fn close_all(&mut self) {
        for sub in self.subs.ids() {
            self.subs.close(sub);
        }
    }
}

/// How long a subscription waits before asking a host that refused or
/// could not be reached again; doubled up to `RETRY_MAX`.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(2);

/// Forwards the remote daemon's screen of `run` to the stand-in's daemon,
/// numbered across connections, one update in flight end to end: the
/// remote daemon is acknowledged once the daemon here has been.
async fn forward(
    link: Arc<HostLink>,
    run: String,
    sub: u64,
    out: mpsc::Sender<Frame>,
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
        let mut updates = conn.route_screen(&run);
        let attached = conn
            .call(
                &link.name,
                &link.name,
                method::RUNS_ATTACH,
                json!({ "run": run, "screen": true }),
            )
            .await;
        if let Err(e) = attached {
            conn.unroute_screen(&run);
            if e.code == ErrorCode::UnknownRun {
                return;
            }
            tokio::time::sleep(retry).await;
            retry = (retry * 2).min(RETRY_MAX);
            continue;
        }
        retry = RETRY_FIRST;
        while let Some(mut bytes) = updates.recv().await {
            let theirs = screen::seq_of(&bytes).unwrap_or(0);
            sent += 1;
            screen::set_seq(&mut bytes, sent);
            let frame = Frame::Screen {
                run: run.clone(),
                sub,
                bytes,
            };
            if out.send(frame).await.is_err() || acked.wait_for(|a| *a >= sent).await.is_err() {
                return;
            }
            let ack = json!({ "run": run, "offset": theirs, "screen": true });
            if conn.notify(method::RUNS_ACK, ack).await.is_err() {
                break;
            }
        }
        // The connection ended: the next one starts from the whole screen.
        conn.unroute_screen(&run);
    }
}
