//! The `hosts.*` methods: add, list (with each link's state and latency),
//! remove, check (a fresh connection, step by step, saying what is
//! missing), and trust (the explicit acceptance of a new host key).

use std::time::Instant;

use super::Here;
use super::error::RemoteError;
use super::link::{self, Phase, resolve_host};
use super::transport::Transport;
use super::{known_hosts, ssh};
use crate::api::{ApiError, Done, ErrorCode, HostAddParams, HostCheck, HostRecord, HostTrustParams, HostTrustResult};
use crate::store::format_ms;
use crate::store::hosts::{HostCommand, HostRow};

/// The binary looked for on a host when none is named: the remote login
/// PATH's `agents`.
pub const DEFAULT_REMOTE_BIN: &str = "agents";

/// The stored host, or `unknown_host`.
pub async fn stored(daemon: &Here, name: &str) -> Result<HostRow, ApiError> {
    daemon
        .store()
        .hosts()
        .get(name)
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| RemoteError::UnknownHost(name.to_string()).into())
}

fn validate_host_name(name: &str) -> Result<(), ApiError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !name.starts_with(['-', '.'])
        && name != "local";
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "bad host name '{name}': use up to 64 letters, digits, '-', '_' or '.' (and not 'local')"
        )))
    }
}

/// `hosts.add`: a host stored, its link not opened yet.
pub async fn add(daemon: &Here, add: HostAddParams) -> Result<HostRecord, ApiError> {
    validate_host_name(&add.name)?;
    let command = reached_by(&add)?;
    if command.is_none() {
        super::target::parse_target(&add.target).map_err(ApiError::bad_request)?;
    }
    let remote_bin = add
        .remote_bin
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_REMOTE_BIN.into());
    let row = HostRow {
        name: add.name.clone(),
        target: add.target.trim().to_string(),
        remote_bin,
        remote_home: add.remote_home.filter(|h| !h.trim().is_empty()),
        created_at: crate::store::now_ms(),
        command,
    };
    let added = daemon
        .store()
        .hosts()
        .add(row.clone())
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
    if !added {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "a host named '{}' already exists; remove it first with `agents hosts rm {}`",
                add.name, add.name
            ),
        ));
    }
    Ok(record(daemon, &row, 0))
}

/// The command a host is reached by, if it is: either that or an SSH
/// target, never both.
fn reached_by(add: &HostAddParams) -> Result<Option<HostCommand>, ApiError> {
    let Some(words) = &add.command else {
        if add.shell_line {
            return Err(ApiError::bad_request("--shell-line goes with --command"));
        }
        return Ok(None);
    };
    if !add.target.trim().is_empty() {
        return Err(ApiError::bad_request(
            "a host is reached by an SSH target or by --command, not both",
        ));
    }
    if words.first().is_none_or(|w| w.trim().is_empty()) {
        return Err(ApiError::bad_request(
            "--command needs a program to run, as in --command 'docker exec -i devbox'",
        ));
    }
    Ok(Some(HostCommand {
        words: words.clone(),
        shell_line: add.shell_line,
    }))
}

fn record(daemon: &Here, host: &HostRow, live_runs: usize) -> HostRecord {
    let state = daemon.hosts().get(&host.name).map(|l| l.state());
    HostRecord {
        name: host.name.clone(),
        target: host.target.clone(),
        command: host.command.as_ref().map(|c| c.words.clone()),
        shell_line: host.command.as_ref().is_some_and(|c| c.shell_line),
        remote_bin: host.remote_bin.clone(),
        remote_home: host.remote_home.clone(),
        created_at: format_ms(host.created_at),
        link: state.as_ref().map(|s| s.phase).unwrap_or(Phase::Idle).as_str().into(),
        since: state.as_ref().and_then(|s| s.since_ms).map(format_ms),
        latency_ms: state
            .as_ref()
            .filter(|s| s.phase == Phase::Up)
            .and_then(|s| s.latency_ms),
        error: state.as_ref().and_then(|s| s.error.clone()),
        remote_version: state.and_then(|s| s.remote_version),
        live_runs,
    }
}

/// `hosts.list`.
pub async fn list(daemon: &Here) -> Result<Vec<HostRecord>, ApiError> {
    let rows = daemon
        .store()
        .hosts()
        .list_with_live_runs()
        .await
        .map_err(ApiError::internal)?;
    Ok(rows.iter().map(|(h, live)| record(daemon, h, *live)).collect())
}

/// `hosts.rm`: refused while runs live there.
pub async fn remove(daemon: &Here, name: &str) -> Result<Done, ApiError> {
    stored(daemon, name).await?;
    let live = daemon
        .store()
        .mirrors()
        .live_on(name)
        .await
        .map_err(ApiError::internal)?;
    if !live.is_empty() {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "host {name} has {} live run(s) ({}); cancel them or wait for them to end first",
                live.len(),
                live.join(", ")
            ),
        ));
    }
    daemon.store().hosts().remove(name).await.map_err(ApiError::internal)?;
    daemon.hosts().forget(name).await;
    Ok(Done)
}

/// A fresh connection, step by step. SSH-level failures (unreachable, host
/// key, authentication) are errors; what is missing past them is listed.
pub async fn check(daemon: &Here, name: &str) -> Result<HostCheck, ApiError> {
    let host = stored(daemon, name).await?;
    let connection = Transport::open(&host).await?;
    let host_key = match &connection {
        Transport::Ssh(ssh) => known_hosts::describe(&ssh.host_key),
        Transport::Command(_) => "none (reached by a command)".into(),
    };
    let mut report = HostCheck {
        name: host.name.clone(),
        address: connection.describe(),
        host_key,
        remote_bin: host.remote_bin.clone(),
        remote_version: None,
        remote_daemon: None,
        latency_ms: None,
        ok: false,
        problems: Vec::new(),
    };
    let info = match link::probe(&connection, &host).await {
        Ok(info) => info,
        Err(e) => {
            report.problems.push(e.to_string());
            connection.disconnect().await;
            return Ok(report);
        }
    };
    let ours = format!("agents {}", env!("CARGO_PKG_VERSION"));
    if info.version != ours {
        report.problems.push(format!(
            "the host runs {} and this is {ours}; they work together while their protocol matches",
            info.version
        ));
    }
    report.remote_version = Some(info.version.clone());
    // The protocol: through `agents serve --stdio`, to the remote daemon.
    match link::Connection::open_on(connection, info, &host, 0).await {
        Ok(conn) => {
            let started = Instant::now();
            match conn.status(&host.name).await {
                Ok((status, _)) => {
                    report.latency_ms = Some(started.elapsed().as_millis() as u64);
                    report.remote_daemon = Some(status);
                }
                Err(e) => report.problems.push(format!("the remote daemon did not answer: {e}")),
            }
            conn.close().await;
        }
        Err(e) => report.problems.push(e.to_string()),
    }
    report.ok = report.remote_daemon.is_some() && report.remote_version.is_some();
    // A version difference alone does not stop placement.
    Ok(report)
}

/// `hosts.trust`: the host key a person accepted, stored.
pub async fn trust(daemon: &Here, p: HostTrustParams) -> Result<HostTrustResult, ApiError> {
    let host = stored(daemon, &p.name).await?;
    if host.command.is_some() {
        return Err(ApiError::bad_request(format!(
            "host {} is reached by a command, not SSH: it has no host key here to trust",
            host.name
        )));
    }
    let resolved = resolve_host(&host).await?;
    let key = ssh::offered_key(&host.name, &resolved).await?;
    let fingerprint = known_hosts::fingerprint(&key);
    if let Some(expected) = &p.fingerprint
        && expected.trim() != fingerprint
    {
        return Err(ApiError::new(
            ErrorCode::HostKeyChanged,
            format!(
                "{} offers {}, not the expected {expected}; nothing trusted",
                resolved.known_hosts_entry(),
                known_hosts::describe(&key)
            ),
        ));
    }
    let file = resolved
        .known_hosts
        .first()
        .cloned()
        .ok_or_else(|| ApiError::internal("no known_hosts file"))?;
    // Refuse when any known_hosts file already holds another key for it.
    match known_hosts::verify(
        &resolved.known_hosts,
        &resolved.hostname,
        resolved.port,
        &key,
        &host.name,
    ) {
        Ok(()) | Err(RemoteError::HostKeyUnknown { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let added = known_hosts::trust(&file, &resolved.hostname, resolved.port, &key)?;
    Ok(HostTrustResult {
        name: host.name.clone(),
        known_hosts: file.display().to_string(),
        entry: resolved.known_hosts_entry(),
        host_key: known_hosts::describe(&key),
        added,
    })
}
