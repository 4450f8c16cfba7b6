//! The daemon's one seam to a live run: every command to a run goes
//! through [`RunLink`], whose local variant is the run's supervisor over
//! its socket (`live.rs`) and whose remote variant is the daemon of the
//! host the run lives on, over that host's link (`remote::RemoteRun`).
//! What a remote run does not take here (a prompt, an answer: forwarded
//! whole to its host before they reach this seam; a snapshot, which its
//! byte subscribers do without) is refused with `not_running`.

use serde_json::Value;

use super::live::{Link, PromptHow, ScreenSub as SupervisorScreen, Typed};
use crate::api::{ApiError, ErrorCode};
use crate::protocol::supervisor::{self as wire, calls};
use crate::remote::{RemoteRun, RemoteScreen};

/// How the daemon drives one live run.
#[derive(Clone)]
pub enum RunLink {
    /// Its supervisor on this host.
    Local(Link),
    /// A run on a host, driven by that host's daemon.
    Remote(RemoteRun),
}

impl RunLink {
    /// Types `bytes` into the run's terminal.
    pub async fn input(&self, run: &str, bytes: Vec<u8>) -> Result<(), ApiError> {
        match self {
            RunLink::Local(link) => link.input(run, bytes).await,
            RunLink::Remote(remote) => remote.input(bytes).await,
        }
    }

    /// Resizes the run's PTY (and its screen, whose log records the size).
    pub async fn resize(&self, rows: u16, cols: u16) -> Result<(), ApiError> {
        match self {
            RunLink::Local(link) => link.ask::<calls::Resize>(wire::Resize { rows, cols }).await.map(|_| ()),
            RunLink::Remote(remote) => remote.resize(rows, cols).await,
        }
    }

    /// Asks the run to end: its process group signalled, politely first
    /// unless `force`.
    pub async fn cancel(&self, force: bool) -> Result<(), ApiError> {
        match self {
            RunLink::Local(link) => link.ask::<calls::Cancel>(wire::Cancel { force }).await.map(|_| ()),
            RunLink::Remote(remote) => remote.cancel(force).await,
        }
    }

    /// Answers the question on the run's screen.
    pub async fn answer(&self, params: wire::Answer) -> Result<Value, ApiError> {
        match self {
            RunLink::Local(link) => link.ask::<calls::Answer>(params).await,
            RunLink::Remote(remote) => Err(not_here(remote, "an answer")),
        }
    }

    /// Types prompt `id` once, or holds it (`Link::prompt`).
    pub async fn prompt(&self, run: &str, id: &str, text: &str, how: &PromptHow) -> Result<Typed, ApiError> {
        match self {
            RunLink::Local(link) => link.prompt(run, id, text, how).await,
            RunLink::Remote(remote) => Err(not_here(remote, "a prompt")),
        }
    }

    /// Paces the run's offsets (`Link::pace`); a remote run's come as its
    /// mirror grows.
    pub fn pace(&self, every_ms: u64, busy_ms: Option<u64>) {
        if let RunLink::Local(link) = self {
            link.pace(every_ms, busy_ms);
        }
    }

    /// Has every offset announced from now on, and says how much the log
    /// holds now; `None` when all was announced already (a remote run, a
    /// supervisor too old to pace).
    pub async fn unpaced(&self) -> Option<u64> {
        let RunLink::Local(link) = self else { return None };
        let every = wire::Pace {
            every_ms: 0,
            busy_ms: None,
        };
        link.ask::<calls::Pace>(every).await.ok()?.offset
    }

    /// The run's screen now, as the snapshot of a byte subscription.
    pub async fn snapshot(&self) -> Result<wire::Snapshot, ApiError> {
        match self {
            RunLink::Local(link) => link.ask::<calls::Snapshot>(()).await,
            RunLink::Remote(remote) => Err(not_here(remote, "a snapshot")),
        }
    }

    /// Tells the supervisor the run's end is stored: it may let go.
    pub async fn ack_exit(&self) {
        if let RunLink::Local(link) = self {
            let _ = link.ask::<calls::AckExit>(()).await;
        }
    }

    /// Tells the supervisor this daemon is going (an upgrade's re-exec).
    pub async fn release(&self) {
        if let RunLink::Local(link) = self {
            let _ = link.ask::<calls::Release>(()).await;
        }
    }

    /// The run's screen as its emulator keeps it, then what changes. An
    /// error when none is served (a supervisor or host of an older build).
    /// `format`: the screen format to send (`protocol::screen`); a
    /// supervisor or host of an older build sends format 1 whatever asked.
    pub async fn watch_screen(&self, frame_ms: Option<u64>, format: u8) -> Result<ScreenSub, ApiError> {
        match self {
            RunLink::Local(link) => link.watch_screen(frame_ms, format).await.map(ScreenSub::Local),
            RunLink::Remote(remote) => remote.watch_screen(format).map(ScreenSub::Remote),
        }
    }
}

fn not_here(remote: &RemoteRun, what: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotRunning,
        format!("{what} for a run on host {} goes to that host", remote.host()),
    )
}

/// A screen subscription on a run: encoded updates, one in flight until
/// acknowledged. Closed on drop.
pub enum ScreenSub {
    Local(SupervisorScreen),
    Remote(RemoteScreen),
}

impl ScreenSub {
    /// The next update; `None` once the run's screen source is gone.
    pub async fn next(&mut self) -> Option<Vec<u8>> {
        match self {
            ScreenSub::Local(sub) => sub.updates.recv().await,
            ScreenSub::Remote(sub) => sub.updates.recv().await,
        }
    }

    /// The client has shown update `seq` (the source's numbering).
    pub fn ack(&self, seq: u64) {
        match self {
            ScreenSub::Local(sub) => sub.ack(seq),
            ScreenSub::Remote(sub) => sub.ack(seq),
        }
    }
}
