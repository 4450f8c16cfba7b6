//! Remote hosts over SSH (docs/design.md §8): the same engine on every host.
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
//! `hosts.*` (`install` copies this binary to a host); `cli` is
//! `agents hosts …` and `agents serve`.

pub mod cli;
mod error;
mod gather;
mod hosts;
mod install;
mod known_hosts;
mod link;
mod mirror;
mod place;
mod retry;
mod screens;
mod serve;
mod sessions;
mod ssh;
mod store;
mod target;

use std::sync::Arc;

use serde_json::Value;

use crate::api::{ApiError, RunRecord, StartParams, method};
use crate::daemon::Daemon;

pub use error::RemoteError;
pub use gather::{search, sessions_list};
pub use link::Links;

/// The daemon's one entry: `hosts.*`, `runs.start` with a remote host, and
/// the run methods the remote daemon answers for its runs. `None` leaves
/// the call to the local dispatcher.
pub async fn dispatch(daemon: &Arc<Daemon>, name: &str, p: &Value) -> Option<Result<Value, ApiError>> {
    if name.starts_with("hosts.") {
        return hosts::call(daemon, name, p).await;
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
    if let Some(answer) = place::forward(daemon, name, p).await {
        return Some(answer);
    }
    sessions::forward(daemon, name, p).await
}

/// Starts a run on `params.host` (which must name a remote host).
pub async fn start(daemon: &Arc<Daemon>, params: StartParams) -> Result<RunRecord, ApiError> {
    let host = params.host.clone().unwrap_or_default();
    place::start(daemon, params, &host).await
}

/// After a daemon (re)start: follow every remote run still live.
pub async fn resume(daemon: &Arc<Daemon>) {
    place::resume(daemon).await
}
