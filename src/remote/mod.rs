//! Remote hosts over SSH or a command (docs/design.md §8): the same engine on every host.
//!
//! The daemon holds one SSH link per host (`link`), opened with russh
//! (`ssh`) after strict host-key verification (`known_hosts`) of a target
//! resolved through `~/.ssh/config` (`target`). Over an exec channel it runs
//! `agents serve --stdio` (`serve`) and is an ordinary client of the remote
//! daemon. A run placed on a host (`place`) is started there and mirrored
//! here under the same id (`mirror`, `store`); the run methods the remote
//! daemon must answer are forwarded to it, and so is the conversation of a
//! remote run (`sessions`: transcript, resume, fork); session lists and
//! transcript searches ask every host too (`gather`). `hosts` answers
//! `hosts.*` (`install` copies this binary to a host); `agents hosts …`
//! and `agents serve` are the CLI's (`cli/hosts.rs`).
//!
//! The daemon drives a remote run through the remote variant of its seam
//! to a live run (`run::RemoteRun`, beside the supervisor link of a local
//! one), and `remote/` takes what it needs of the daemon through [`Local`]:
//! nothing of `daemon/` itself.

mod command;
mod error;
mod gather;
pub mod hosts;
pub(crate) mod install;
mod known_hosts;
mod link;
mod mirror;
mod outbox;
mod place;
mod probe;
mod retry;
mod run;
mod screen_watch;
pub(crate) mod serve;
mod sessions;
mod ssh;
mod ssh_config;
mod target;
mod transport;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::api::{ApiError, MailSendParams, OutboundMail, RunRecord, StartParams, method};
use crate::config::Config;
use crate::paths::Paths;
use crate::store::Store;
use crate::store::runs::RunRow;

pub use error::RemoteError;
pub use gather::{search, sessions_list};
pub use link::Links;
pub use run::RemoteRun;
pub use screen_watch::RemoteScreen;

/// What remote hosts take from the daemon that holds their links: its
/// folders, records and settings, its `run.changed` notices, and the live
/// runs it drives. The daemon is the one implementation.
pub trait Local: Send + Sync + 'static {
    fn paths(&self) -> &Paths;
    fn store(&self) -> &Store;
    /// Runs' proofs of identity (a start's parent).
    fn proofs(&self) -> &crate::proof::Proofs;
    /// One SSH link per host.
    fn hosts(&self) -> &Links;
    fn config(&self) -> Config;
    /// Tells every client the run's record changed.
    fn changed(&self, id: &str);
    /// Whether the run is live here (a remote one: being mirrored).
    fn is_live(&self, id: &str) -> bool;
    /// Takes a remote run as live here, driven through `run`, its mirror
    /// holding `offset` bytes so far; the mirror tells its progress on the
    /// returned sender. `None` when the run is live here already.
    fn drive(self: Arc<Self>, run: RemoteRun, offset: u64) -> Option<mpsc::Sender<Mirrored>>;
    /// Cancels a run here and every run it owns, as `runs.cancel` does;
    /// the ids asked to end.
    fn cancel_tree(self: Arc<Self>, id: String, force: bool) -> Boxed<Result<Vec<String>, ApiError>>;
    /// Delivers here, by its id, a message run `run` sent on its host to
    /// an address only this daemon knows; `Err` when it may be delivered
    /// later (it stays held there).
    fn deliver_mail(self: Arc<Self>, run: String, mail: OutboundMail) -> Boxed<Result<(), ApiError>>;
}

/// The daemon, as `remote/` sees it.
pub type Here = Arc<dyn Local>;

/// An answer still to come from the daemon (a trait's async call).
pub type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A remote run's mirror, as it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mirrored {
    /// The mirror log holds this many bytes now.
    Output(u64),
    /// The run ended there, all its output is here (this many bytes) and
    /// its final record is stored: it is live no more.
    Ended(u64),
}

/// Where a request is answered when not here, decided once for every
/// method on its typed route (`daemon::dispatch`): a method of one run
/// (`row`, resolved by the caller) that the daemon of the host the run
/// lives on answers; a start placed on a host; a transcript, search,
/// resume or session that lives on one (docs/design.md §8). The host's
/// answer comes as it came; `None` leaves the request to this daemon.
pub async fn answer_there(
    daemon: &Here,
    name: &str,
    row: Option<&RunRow>,
    p: &Value,
) -> Option<Result<Value, ApiError>> {
    if let Some(row) = row {
        if row.host == "local" {
            return None;
        }
        return match name {
            method::RUNS_LINEAGE => sessions::lineage(daemon, row).await,
            _ => place::forward(daemon, name, row, p).await,
        };
    }
    if name == method::RUNS_START {
        p.get("host")
            .and_then(Value::as_str)
            .filter(|h| !h.is_empty() && *h != "local")?;
        let params: StartParams = match serde_json::from_value(p.clone()) {
            Ok(params) => params,
            Err(e) => return Some(Err(ApiError::bad_request(format!("bad parameters: {e}")))),
        };
        return Some(
            start(daemon, params)
                .await
                .and_then(|r| serde_json::to_value(r).map_err(ApiError::internal)),
        );
    }
    sessions::forward(daemon, name, p).await
}

/// Relays a message to a run on `host` (`mail.send` there, by the
/// message's id), waited out across a cut as a prompt is: sent again
/// after a lost answer, the host keeps the first.
pub async fn relay_mail(daemon: &Here, host: &str, p: MailSendParams) -> Result<(), ApiError> {
    let link = place::link_of(daemon, host).await?;
    retry::tell::<method::MailSend>(&link, p).await
}

/// A message relayed to a run on `host`, as that host's mailbox has it
/// (where its prompt there stands).
pub async fn mail_there(daemon: &Here, host: &str, id: &str) -> Result<crate::api::MailRecord, ApiError> {
    let link = place::link_of(daemon, host).await?;
    link.ask::<method::MailRead>(crate::api::MailRef { id: id.into() })
        .await
}

/// Starts a run on `params.host` (which must name a remote host).
pub async fn start(daemon: &Here, params: StartParams) -> Result<RunRecord, ApiError> {
    let host = params.spec.host.clone().unwrap_or_default();
    place::start(daemon, params, &host).await
}

/// Removes ended runs' records on the host they were placed on (`runs.rm`
/// there, one run at a time). Repeat-safe: a run the host no longer has
/// is removed there already.
pub async fn remove_there(daemon: &Here, host: &str, ids: Vec<String>) -> Result<(), ApiError> {
    let link = place::link_of(daemon, host).await?;
    for id in ids {
        let one = crate::api::RemoveParams {
            runs: vec![id],
            ..Default::default()
        };
        match retry::tell::<method::RunsRm>(&link, one).await {
            Ok(_) => {}
            Err(e) if e.code == crate::api::ErrorCode::UnknownRun => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// After a daemon (re)start: follow every remote run still live.
pub async fn resume(daemon: &Here) {
    place::resume(daemon).await
}
