//! The remote variant of the daemon's seam to a live run
//! (`engine::run_link::RunLink`): what a supervisor here does over its socket, done
//! for a run on a host by that host's daemon, over the host's link. Typed
//! input, resizes, cancels and screen subscriptions go there; prompts and
//! answers are forwarded whole before they reach the run's link
//! (`place::forward`), and its output comes back through the mirror.

use parking_lot::Mutex;
use std::sync::Arc;

use super::link::HostLink;
use super::screen_watch::RemoteScreen;
use crate::api::{ApiError, ErrorCode, method};
use crate::protocol::Frame;

/// One remote run as the daemon here drives it.
#[derive(Clone)]
pub struct RemoteRun {
    link: Arc<HostLink>,
    id: String,
    /// Its screen subscriptions open here (`screen_watch.rs`).
    screens: Arc<Mutex<usize>>,
}

impl RemoteRun {
    pub(super) fn new(link: Arc<HostLink>, id: String) -> RemoteRun {
        RemoteRun {
            link,
            id,
            screens: Arc::default(),
        }
    }

    /// The run's id, here and there.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The host the run lives on.
    pub fn host(&self) -> &str {
        &self.link.name
    }

    /// Types `bytes` into the run. Keys typed while the link is down are
    /// dropped, not queued to land later on a different screen.
    pub async fn input(&self, bytes: Vec<u8>) -> Result<(), ApiError> {
        let Some(conn) = self.link.current() else {
            return Err(ApiError::new(
                ErrorCode::HostUnreachable,
                format!("host {} is not connected; the keys were not sent", self.link.name),
            ));
        };
        conn.send_frame(Frame::Input {
            run: self.id.clone(),
            bytes,
        })
        .await
    }

    pub async fn resize(&self, rows: u16, cols: u16) -> Result<(), ApiError> {
        let params = crate::api::ResizeParams {
            run: self.id.clone(),
            rows,
            cols,
        };
        self.link.ask::<method::RunsResize>(params).await.map(|_| ())
    }

    /// Cancels the run there; sent again if its answer is lost (a cancel
    /// is idempotent).
    pub async fn cancel(&self, force: bool) -> Result<(), ApiError> {
        let params = crate::api::CancelParams {
            run: self.id.clone(),
            force,
            by: None,
            proof: None,
        };
        super::retry::tell::<method::RunsCancel>(&self.link, params).await
    }

    /// The run's screen as the host's emulator keeps it, then what changes,
    /// across link drops. An error from a host whose build serves no
    /// screens: the caller builds the screen from the mirror log instead.
    /// `format`: the screen format to ask the host for.
    pub fn watch_screen(&self, format: u8) -> Result<RemoteScreen, ApiError> {
        if !self.link.serves_screens.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(ApiError::new(
                ErrorCode::NotRunning,
                format!("host {} serves no screens (an older agents)", self.link.name),
            ));
        }
        Ok(RemoteScreen::open(
            self.link.clone(),
            self.id.clone(),
            self.screens.clone(),
            format,
        ))
    }
}
