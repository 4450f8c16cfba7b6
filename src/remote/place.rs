//! Placement on a remote host (docs/design.md §4 step 3): the same normalized
//! `runs.start`, sent to the host's daemon with the cwd and environment
//! mapped to that host; a host that cannot take it ends the run `blocked`
//! here, with the reason, before anything starts there. And the run
//! methods that the remote daemon answers for its runs.

use std::sync::Arc;

use serde_json::{Value, json};

use super::Here;
use super::link::{Connection, HostLink, RemoteInfo};
use crate::api::{ApiError, ErrorCode, RunRecord, RunSpec, StartParams, method};
use crate::store::hosts::HostRow;
use crate::store::mirrors::Placed;
use crate::store::runs::RunRow;

/// A boxed run goes only to a host whose daemon says it boxes runs: one
/// of an older build would drop the box and run the harness unboxed. (The
/// box itself is made there, by that host's bubblewrap, or the run is
/// blocked there saying what is missing.)
async fn boxes_there(conn: &super::link::Connection, host: &str) -> Result<(), ApiError> {
    let (status, _) = conn.status(host).await?;
    if status.sandbox {
        return Ok(());
    }
    Err(ApiError::bad_request(format!(
        "host {host} runs an agents that cannot box runs (it would run this one unboxed): \
         install this build there with `agents hosts install {host}`"
    )))
}

/// `runs.start` with a remote host.
pub async fn start(daemon: &Here, mut params: StartParams, host_name: &str) -> Result<RunRecord, ApiError> {
    // Made arguments here, as a family takes it: the host is never asked
    // to understand more than it did.
    crate::harness::apply_model(&mut params.spec, &daemon.config().profiles)?;
    let host = super::hosts::stored(daemon, host_name).await?;
    if let Some(name) = &params.spec.name {
        crate::api::bounds::validate_name(name)?;
    }
    // The parent: named, or the run this request proves it comes from.
    // One on the same host is the remote daemon's to know; any other only ours.
    let parent_ref = daemon.proofs().parent_of(params.parent.as_ref(), &params.env);
    let parent = match parent_ref {
        Some(reference) => Some(
            row(daemon, &reference)
                .await?
                .ok_or_else(|| ApiError::new(ErrorCode::UnknownRun, format!("no run matches '{reference}'")))?,
        ),
        None => None,
    };
    let link = daemon.hosts().for_host(&host);
    let conn = match link.connection().await {
        Ok(conn) => conn,
        Err(e) => return blocked(daemon, &params, &host, parent.as_ref(), e.to_string()).await,
    };
    if params.spec.sandbox.is_some() {
        boxes_there(&conn, &host.name).await?;
    }
    let remote_parent = parent.as_ref().filter(|p| p.host == host.name).map(|p| p.id.clone());
    // The harness's own variables travel by name like `--env` ones, their
    // values from where the run is started (issue #9).
    let mut names = params.spec.pass_env.clone();
    let profiles = daemon.config().profiles;
    let cwd = std::path::Path::new(&params.spec.cwd);
    names.extend(crate::harness::harness_env_names(
        &params.spec.harness,
        &profiles,
        &params.env,
        cwd,
    ));
    let remote = StartParams {
        spec: RunSpec {
            host: None,
            cwd: map_cwd(&params.spec.cwd, &conn.info),
            ..params.spec.clone()
        },
        env: remote_env(&names, &params.env, &conn.info, &host),
        parent: remote_parent.clone(),
        // Driven from here: mail it sends to an address only this daemon
        // knows is held there for us (`remote::outbox`).
        placed: true,
        // Minted here: a start sent again after a lost answer returns the
        // run the first one created there (issue #5).
        launch_id: Some(
            params
                .launch_id
                .clone()
                .unwrap_or_else(|| ulid::Ulid::new().to_string()),
        ),
        ..params.clone()
    };
    let record = super::retry::ask::<method::RunsStart>(&link, remote).await?;
    let local_parent = parent.as_ref().filter(|_| remote_parent.is_none());
    mirror_started(daemon, link, record, local_parent, &params.spec.args).await
}

/// A run the host's daemon just started (placed from here, or a session
/// resumed there): mirrored here under its id and followed. `local_parent`
/// is a parent only this daemon knows; `args` the harness arguments as
/// given here.
pub(super) async fn mirror_started(
    daemon: &Here,
    link: Arc<HostLink>,
    record: RunRecord,
    local_parent: Option<&RunRow>,
    args: &[String],
) -> Result<RunRecord, ApiError> {
    let at = Placed {
        parent: local_parent.map(|p| p.id.clone()),
        root: local_parent.map(|p| p.root_run_id.clone()),
    };
    // The parent's mirror may have learnt of it first (CHILD_STARTED
    // there, `mirror_children`): then only the arguments are ours.
    daemon
        .store()
        .mirrors()
        .started(record.clone(), &link.name, at, args.to_vec())
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    if let Some(p) = local_parent {
        let data = json!({ "child": record.id });
        let _ = daemon.store().runs().append_event(&p.id, "CHILD_STARTED", data).await;
    }
    daemon.changed(&record.id);
    // Even one that ended already (a quick command): its output comes over.
    if record.state != crate::api::RunState::Blocked {
        super::mirror::follow(daemon, link, &record.id).await?;
    }
    local_record(daemon, &record.id).await
}

/// The cwd on the host: absolute as given; `~/…`, relative or empty paths
/// are taken from the remote home.
fn map_cwd(cwd: &str, info: &RemoteInfo) -> String {
    let home = info.home().unwrap_or("/");
    let join = |rest: &str| format!("{}/{}", home.trim_end_matches('/'), rest);
    match cwd {
        "" | "~" => home.to_string(),
        c if c.starts_with('/') => c.to_string(),
        c => join(c.strip_prefix("~/").unwrap_or(c)),
    }
}

/// The remote login environment (allowlisted), the remote `AGENTS_HOME`,
/// and the variables the user named with `--env` (`names`), with their
/// values from here (`local`, the client's environment). Nothing else of
/// this machine's environment crosses over.
pub(super) fn remote_env(
    names: &[String],
    local: &[(String, String)],
    info: &RemoteInfo,
    host: &HostRow,
) -> Vec<(String, String)> {
    let mut env = info.env.clone();
    if let Some(home) = &host.remote_home {
        env.push(("AGENTS_HOME".into(), home.clone()));
    }
    for name in names {
        if let Some((k, v)) = local.iter().find(|(k, _)| k == name) {
            env.retain(|(existing, _)| existing != k);
            env.push((k.clone(), v.clone()));
        }
    }
    env
}

/// A run the host could not take: recorded here, `blocked` with the reason.
async fn blocked(
    daemon: &Here,
    params: &StartParams,
    host: &HostRow,
    parent: Option<&RunRow>,
    reason: String,
) -> Result<RunRecord, ApiError> {
    let id = ulid::Ulid::new().to_string();
    let at = Placed {
        parent: parent.map(|p| p.id.clone()),
        root: parent.map(|p| p.root_run_id.clone()),
    };
    daemon
        .store()
        .mirrors()
        .blocked(&id, params.clone(), &host.name, at, reason)
        .await
        .map_err(|e| match e {
            crate::store::StoreError::Corrupt(msg) => ApiError::new(ErrorCode::Conflict, msg),
            other => ApiError::new(ErrorCode::Storage, other.to_string()),
        })?;
    daemon.changed(&id);
    local_record(daemon, &id).await
}

async fn local_record(daemon: &Here, id: &str) -> Result<RunRecord, ApiError> {
    daemon
        .store()
        .runs()
        .get(id)
        .await
        .map_err(ApiError::internal)?
        .map(|r| r.to_record())
        .ok_or_else(|| ApiError::new(ErrorCode::UnknownRun, format!("no run {id}")))
}

/// A run by id, unique prefix or name; `None` when nothing matches.
pub(super) async fn row(daemon: &Here, reference: &str) -> Result<Option<RunRow>, ApiError> {
    daemon.store().runs().find(reference).await.map_err(ApiError::internal)
}

/// Run methods the host's daemon answers for a remote run (`row`).
/// `None`: the local dispatcher answers (a method the host need not, or
/// an ended run's record while the host is away).
pub async fn forward(daemon: &Here, name: &str, row: &RunRow, p: &Value) -> Option<Result<Value, ApiError>> {
    if !matches!(
        name,
        method::RUNS_SHOW
            | method::RUNS_SEND
            | method::RUNS_CANCEL
            | method::RUNS_ANSWER
            | method::RUNS_RESIZE
            | method::RUNS_EXPLAIN
            | method::RUNS_CHANGES
            | method::RUNS_MERGE
            | method::WORKTREE_RM
            | method::PROMPTS_LIST
            | method::PROMPTS_EDIT
            | method::PROMPTS_DROP
            | method::PROMPTS_SEND
    ) || row.host == "local"
    {
        return None;
    }
    // An ended run's record is final in the mirror; ask the host only when
    // the link is up anyway (its events are richer), never connect for it.
    if name == method::RUNS_SHOW
        && !row.state.is_live()
        && daemon.hosts().get(&row.host).and_then(|l| l.current()).is_none()
    {
        return None;
    }
    let link = match link_of(daemon, &row.host).await {
        Ok(link) => link,
        // The host was removed: what we have is the mirror.
        Err(_) if name == method::RUNS_SHOW => return None,
        Err(e) => return Some(Err(e)),
    };
    Some(forward_on(daemon, link, row, name, p).await)
}

/// The link to a configured host (opened on first use, not here).
pub(super) async fn link_of(daemon: &Here, host: &str) -> Result<Arc<HostLink>, ApiError> {
    match daemon.hosts().get(host) {
        Some(link) => Ok(link),
        None => Ok(daemon.hosts().for_host(&super::hosts::stored(daemon, host).await?)),
    }
}

async fn forward_on(
    daemon: &Here,
    link: Arc<super::link::HostLink>,
    row: &RunRow,
    name: &str,
    p: &Value,
) -> Result<Value, ApiError> {
    let mut params = p.clone();
    params["run"] = Value::String(row.id.clone());
    // Minted here, so a retry after a lost answer is applied once there.
    for (method, key) in [(method::RUNS_SEND, "prompt_id"), (method::RUNS_ANSWER, "answer_id")] {
        if name == method && params.get(key).is_none_or(Value::is_null) {
            params[key] = Value::String(ulid::Ulid::new().to_string());
        }
    }
    let answer = match name {
        method::RUNS_SEND | method::RUNS_CANCEL | method::RUNS_ANSWER => super::retry::call(&link, name, params).await,
        _ => link.call(name, params).await,
    };
    match (name, answer) {
        (method::RUNS_SHOW, Ok(mut detail)) => {
            // The record as the host knows it, under this host's name here.
            detail["host"] = Value::String(row.host.clone());
            detail["name"] = Value::String(row.name.clone());
            detail["parent_id"] = row.parent_run_id.clone().map(Value::String).unwrap_or(Value::Null);
            detail["root_id"] = Value::String(row.root_run_id.clone());
            Ok(detail)
        }
        (method::RUNS_SHOW, Err(e)) => {
            // The host is away: show what the mirror holds, and say so.
            let events = daemon
                .store()
                .runs()
                .events(&row.id)
                .await
                .map_err(ApiError::internal)?;
            let mut detail = serde_json::to_value(row.to_record()).map_err(ApiError::internal)?;
            detail["events"] = serde_json::to_value(events).map_err(ApiError::internal)?;
            detail["host_error"] = Value::String(e.message);
            Ok(detail)
        }
        (method::RUNS_CANCEL, Ok(v)) => {
            // The host cancels the children it knows (those on it); the
            // ones placed elsewhere only this daemon knows.
            let force = p["force"].as_bool().unwrap_or(false);
            let mut v = v;
            let elsewhere = cancel_elsewhere(daemon, row, force).await;
            if let Some(list) = v["cancelling"].as_array_mut() {
                list.extend(elsewhere.into_iter().map(Value::String));
            }
            Ok(v)
        }
        (method::RUNS_RESIZE, Ok(v)) => {
            if let (Some(rows), Some(cols)) = (p["rows"].as_u64(), p["cols"].as_u64()) {
                let _ = daemon.store().runs().set_size(&row.id, rows as u16, cols as u16).await;
            }
            Ok(v)
        }
        (_, answer) => answer,
    }
}

/// Cancellation follows ownership edges (docs/design.md §4) across hosts: the
/// children of a remote run that are not on its host (a local run, or one
/// on another host, started with `--parent` it) are cancelled from here,
/// each with its own owned children. Returns the ids asked to end.
async fn cancel_elsewhere(daemon: &Here, root: &RunRow, force: bool) -> Vec<String> {
    let mut asked = Vec::new();
    let mut todo = vec![root.id.clone()];
    while let Some(id) = todo.pop() {
        let Ok(children) = daemon.store().runs().children(&id).await else {
            continue;
        };
        for child in children.into_iter().filter(|c| !c.detached) {
            if child.host == root.host {
                // Cancelled there; its own children may be elsewhere.
                todo.push(child.id);
            } else if child.state.is_live()
                && let Ok(ids) = daemon.clone().cancel_tree(child.id.clone(), force).await
            {
                asked.extend(ids);
            }
        }
    }
    asked
}

/// Children a mirrored run started on its host that are not mirrored here
/// yet — started inside it (`agents run` there finds its parent through
/// `AGENTS_RUN_ID`) — are mirrored and followed too, so both sides agree
/// on the tree (docs/design.md §8). `detail` is the host's `runs.show` of the
/// parent; its `CHILD_STARTED` events name them.
pub(super) async fn mirror_children(daemon: &Here, link: &Arc<HostLink>, conn: &Connection, detail: &Value) {
    let Some(parent) = detail["id"].as_str().map(str::to_string) else {
        return;
    };
    let named: Vec<String> = detail["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["kind"] == "CHILD_STARTED")
        .filter_map(|e| e["data"]["child"].as_str())
        // Untrusted: only what looks like a run id.
        .filter(|id| !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(str::to_string)
        .collect();
    if named.is_empty() {
        return;
    }
    let Ok(Some(local_parent)) = daemon.store().runs().get(&parent).await else {
        return;
    };
    let Ok(missing) = daemon.store().mirrors().missing(named).await else {
        return;
    };
    for child in missing {
        let Ok(value) = conn
            .ask_raw::<method::RunsShow>(&link.name, &link.name, crate::api::RunRef { run: child.clone() })
            .await
        else {
            continue;
        };
        let Ok(record) = serde_json::from_value::<RunRecord>(value) else {
            continue;
        };
        if record.id != child || record.parent_id.as_deref() != Some(parent.as_str()) {
            continue;
        }
        let blocked = record.state == crate::api::RunState::Blocked;
        let inserted = daemon
            .store()
            .mirrors()
            .child_started(record, &link.name, &local_parent.root_run_id)
            .await;
        if !matches!(inserted, Ok(true)) {
            continue;
        }
        daemon.changed(&child);
        if !blocked && let Err(e) = follow_boxed(daemon, link.clone(), child.clone()).await {
            tracing::warn!("run {child}: cannot follow on host {}: {e}", link.name);
        }
    }
}

/// `mirror::follow` behind a named future type: following a child is
/// reached from inside a follower, and the compiler cannot check an
/// opaque future that contains itself.
fn follow_boxed(
    daemon: &Here,
    link: Arc<HostLink>,
    id: String,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), ApiError>> + Send + '_>> {
    Box::pin(async move { super::mirror::follow(daemon, link, &id).await })
}

/// After a daemon restart: follow every remote run the database says is
/// live (their hosts' links open in the background).
pub async fn resume(daemon: &Here) {
    let live = match daemon.store().mirrors().live().await {
        Ok(live) => live,
        Err(e) => {
            tracing::error!("cannot list live remote runs: {e}");
            return;
        }
    };
    for (id, host_name) in live {
        match super::hosts::stored(daemon, &host_name).await {
            Ok(host) => {
                let link = daemon.hosts().for_host(&host);
                if let Err(e) = super::mirror::follow(daemon, link, &id).await {
                    tracing::warn!("run {id}: cannot follow on host {host_name}: {e}");
                }
            }
            Err(_) => {
                let reason = format!("host {host_name} is no longer configured");
                let _ = daemon
                    .store()
                    .mirrors()
                    .end(&id, crate::api::RunState::Lost, reason)
                    .await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cwd_maps_onto_the_remote_home() {
        let info = RemoteInfo {
            version: "agents 0.1.0".into(),
            env: vec![("HOME".into(), "/home/r".into())],
        };
        assert_eq!(map_cwd("", &info), "/home/r");
        assert_eq!(map_cwd("~/src/app", &info), "/home/r/src/app");
        assert_eq!(map_cwd("src", &info), "/home/r/src");
        assert_eq!(map_cwd("/srv/x", &info), "/srv/x");
    }

    #[test]
    fn only_named_variables_cross_over_with_local_values() {
        let info = RemoteInfo {
            version: String::new(),
            env: vec![("PATH".into(), "/remote/bin".into()), ("HOME".into(), "/home/r".into())],
        };
        let params = StartParams {
            spec: RunSpec {
                pass_env: vec!["API_KEY".into()],
                ..RunSpec::default()
            },
            env: vec![
                ("PATH".into(), "/local/bin".into()),
                ("API_KEY".into(), "k".into()),
                ("SECRET".into(), "s".into()),
            ],
            ..StartParams::default()
        };
        let host = HostRow {
            name: "h".into(),
            target: "h".into(),
            remote_bin: "agents".into(),
            remote_home: Some("/state".into()),
            created_at: 0,
            command: None,
        };
        let env = remote_env(&params.spec.pass_env, &params.env, &info, &host);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("PATH"), Some("/remote/bin"));
        assert_eq!(get("API_KEY"), Some("k"));
        assert_eq!(get("SECRET"), None);
        assert_eq!(get("AGENTS_HOME"), Some("/state"));
    }
}
