//! The first thing done on a host, over any transport: run `BIN
//! --version && env` there — is our binary there, and what environment
//! does a command there get.

use super::error::RemoteError;
use super::link::RemoteInfo;
use super::ssh::shell_quote;
use super::transport::Transport;
use crate::store::hosts::HostRow;

/// Runs `BIN --version && env` on the host: is our binary there, and what
/// environment does a command there get.
pub async fn probe(transport: &Transport, host: &HostRow) -> Result<RemoteInfo, RemoteError> {
    let bin = shell_quote(&host.remote_bin);
    let out = transport.exec(&format!("{bin} --version && env")).await?;
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let unavailable = |why: String| RemoteError::RemoteUnavailable {
        name: host.name.clone(),
        why,
    };
    match out.status {
        Some(0) => {}
        Some(127) => {
            return Err(unavailable(format!(
                "the agents binary '{}' was not found there ({}); install agents on the host or set --remote-bin",
                host.remote_bin,
                crate::text::bounded(&stderr, 300)
            )));
        }
        Some(126) => {
            return Err(unavailable(format!(
                "'{}' is not executable there ({})",
                host.remote_bin,
                crate::text::bounded(&stderr, 300)
            )));
        }
        status if matches!(transport, Transport::Command(_)) => {
            // The command itself failed (`kubectl` could not reach the
            // cluster, the container is stopped): the host is not there
            // now, as an SSH host that does not answer.
            return Err(RemoteError::Unreachable {
                name: host.name.clone(),
                address: transport.describe(),
                why: format!(
                    "its command failed ({}): {}",
                    status
                        .map(|s| format!("exit {s}"))
                        .unwrap_or_else(|| "no exit status".into()),
                    crate::text::bounded(&stderr, 300)
                ),
            });
        }
        status => {
            return Err(unavailable(format!(
                "'{} --version' failed ({}): {}",
                host.remote_bin,
                status
                    .map(|s| format!("exit {s}"))
                    .unwrap_or_else(|| "no exit status".into()),
                crate::text::bounded(&stderr, 300)
            )));
        }
    }
    // A login script that prints (a noisy .bashrc) comes first: skip it.
    let version = stdout
        .lines()
        .find(|l| l.starts_with("agents "))
        .or_else(|| stdout.lines().next())
        .unwrap_or("")
        .trim()
        .to_string();
    if !version.starts_with("agents ") {
        return Err(RemoteError::Incompatible {
            name: host.name.clone(),
            why: format!(
                "'{} --version' printed '{}', not an agents version",
                host.remote_bin,
                crate::text::bounded(&version, 80)
            ),
        });
    }
    let env = stdout
        .lines()
        .filter_map(|line| line.split_once('='))
        // A remote run takes where things are and the locale from the
        // remote login environment: this machine's PATH or HOME mean
        // nothing there.
        .filter(|(k, _)| crate::paths::is_place_or_locale(k))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Ok(RemoteInfo { version, env })
}
