//! What remote hosts take of the daemon (`remote::Local`), and the live
//! state here of a run mirrored from a host: driven through its
//! `RemoteRun`, its offsets as its mirror log grows.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::Daemon;
use crate::api::{ApiError, OutboundMail};
use crate::config::Config;
use crate::engine::live::LiveRun;
use crate::engine::run_link::RunLink;
use crate::paths::Paths;
use crate::remote::{Boxed, Here, Links, Local, Mirrored, RemoteRun};
use crate::store::Store;

impl Daemon {
    /// This daemon as `remote/` takes it.
    pub fn here(self: &Arc<Self>) -> Here {
        self.clone()
    }

    /// What a feature module is given of this daemon.
    pub fn reach(self: &Arc<Self>) -> super::Reach {
        super::Reach {
            engine: self.engine.clone(),
            here: self.here(),
        }
    }
}

impl Local for Daemon {
    fn paths(&self) -> &Paths {
        &self.engine.paths
    }

    fn store(&self) -> &Store {
        &self.engine.store
    }

    fn proofs(&self) -> &crate::proof::Proofs {
        &self.engine.proofs
    }

    fn hosts(&self) -> &Links {
        &self.hosts
    }

    fn config(&self) -> Config {
        self.engine.config()
    }

    fn changed(&self, id: &str) {
        self.engine.changed(id);
    }

    fn is_live(&self, id: &str) -> bool {
        self.engine.live(id).is_some()
    }

    fn drive(self: Arc<Self>, run: RemoteRun, offset: u64) -> Option<mpsc::Sender<Mirrored>> {
        let id = run.id().to_string();
        let live = Arc::new(LiveRun::new(id.clone(), RunLink::Remote(run), offset));
        {
            let mut runs = self.engine.runs.lock();
            if runs.contains_key(&id) {
                return None;
            }
            runs.insert(id.clone(), live.clone());
        }
        let (events, events_rx) = mpsc::channel(64);
        tokio::spawn(follow(self.clone(), live, events_rx));
        self.engine.changed(&id);
        Some(events)
    }

    fn cancel_tree(self: Arc<Self>, id: String, force: bool) -> Boxed<Result<Vec<String>, ApiError>> {
        Box::pin(async move { crate::engine::cancel::cancel_tree(&self.engine, &id, force).await })
    }

    fn deliver_mail(self: Arc<Self>, run: String, mail: OutboundMail) -> Boxed<Result<(), ApiError>> {
        Box::pin(async move { super::outbox::deliver(&self.reach(), &run, mail).await })
    }
}

/// A mirrored run's live state, until its mirror says it ended (or goes).
async fn follow(daemon: Arc<Daemon>, live: Arc<LiveRun>, mut events: mpsc::Receiver<Mirrored>) {
    live.quiet_ms.store(
        daemon.engine.engine_as_read().quiet_ms,
        std::sync::atomic::Ordering::Relaxed,
    );
    while let Some(event) = events.recv().await {
        match event {
            Mirrored::Output(offset) => {
                live.committed.send_modify(|c| *c = (*c).max(offset));
                live.output_seen();
            }
            Mirrored::Ended(offset) => {
                live.committed.send_modify(|c| *c = (*c).max(offset));
                break;
            }
        }
    }
    live.ended.send_replace(true);
    live.wake.notify_waiters();
    daemon.engine.runs.lock().remove(&live.id);
    daemon.engine.changed(&live.id);
    crate::engine::tasks::mirror_ended(&daemon.engine, &live.id).await;
}
