//! How the daemon reaches a host: over SSH (`ssh`), or by a command that
//! yields a stdin/stdout there (`command`). Everything above this seam —
//! the probe, `agents serve --stdio`, installs, the protocol — is the same
//! for both (seed 000: placement is transport, not a second engine).

use super::command::CommandLink;
use super::error::RemoteError;
use super::link::resolve_host;
use super::ssh::{self, ExecOutput, RemoteStream, Ssh};
use crate::store::hosts::HostRow;

pub enum Transport {
    Ssh(Box<Ssh>),
    Command(CommandLink),
}

impl Transport {
    /// Connects to the host as it was added: SSH (host key checked,
    /// authenticated) or its command (nothing to connect until used).
    pub async fn open(host: &HostRow) -> Result<Transport, RemoteError> {
        match &host.command {
            Some(command) => Ok(Transport::Command(CommandLink::new(&host.name, command)?)),
            None => {
                let resolved = resolve_host(host).await?;
                Ok(Transport::Ssh(Box::new(ssh::connect(&host.name, &resolved).await?)))
            }
        }
    }

    /// Runs `line` there (through a shell) and collects its output.
    pub async fn exec(&self, line: &str) -> Result<ExecOutput, RemoteError> {
        match self {
            Transport::Ssh(ssh) => ssh.exec(line).await,
            Transport::Command(command) => command.exec(line).await,
        }
    }

    /// Starts `line` there and hands back its stdin/stdout.
    pub async fn stream(&self, line: &str) -> Result<RemoteStream, RemoteError> {
        match self {
            Transport::Ssh(ssh) => ssh.stream(line).await,
            Transport::Command(command) => command.stream(line).await,
        }
    }

    /// SSH's own keepalives notice a dead link; a command's stream is
    /// watched by the link's own pings instead (`link::watch_connection`).
    pub fn has_keepalives(&self) -> bool {
        matches!(self, Transport::Ssh(_))
    }

    /// Where it reaches, for messages: the SSH address or the command.
    pub fn describe(&self) -> String {
        match self {
            Transport::Ssh(ssh) => ssh.address.clone(),
            Transport::Command(command) => command.describe(),
        }
    }

    pub fn is_closed(&self) -> bool {
        match self {
            Transport::Ssh(ssh) => ssh.is_closed(),
            Transport::Command(_) => false,
        }
    }

    pub async fn disconnect(&self) {
        match self {
            Transport::Ssh(ssh) => ssh.disconnect().await,
            Transport::Command(command) => command.close(),
        }
    }
}
