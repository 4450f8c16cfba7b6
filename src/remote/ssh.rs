//! One SSH connection with russh (docs/design.md §8): TCP, strict host-key check,
//! ssh-agent then key-file authentication, keepalives; then exec channels —
//! a command whose output we collect, or a long-lived byte stream (the
//! remote `agents serve --stdio`).

use parking_lot::Mutex;
use std::sync::Arc;
use std::time::Duration;

use russh::ChannelMsg;
use russh::client::{self, Handle};
use russh::keys::agent::AgentIdentity;
use russh::keys::agent::client::AgentClient;
use russh::keys::{PrivateKeyWithHashAlg, PublicKey, PublicKeyOrCertificate};
use tokio::io::{AsyncWrite, AsyncWriteExt, DuplexStream};
use tokio::sync::watch;

use super::error::RemoteError;
use super::known_hosts;
use super::target::{Proxy, Resolved};

/// TCP connect plus SSH handshake and authentication. A host that answers
/// at all does so in well under a second; 15 s covers a slow link.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// A keepalive after 5 s of silence, the link dropped after 3 unanswered:
/// a dead link is noticed within ~15-20 s (issue 5 asks for ~15 s).
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_MAX: usize = 3;
/// A one-shot command (`agents --version`) has this long to finish.
pub(super) const EXEC_TIMEOUT: Duration = Duration::from_secs(20);
/// What a one-shot command may print before we stop keeping it.
pub(super) const EXEC_OUTPUT_CAP: usize = 1 << 20;
/// The tail of a stream's stderr kept for diagnostics.
pub(super) const STDERR_TAIL: usize = 4096;
/// Bytes buffered between the SSH channel and the protocol reader: one
/// full frame's worth of slack over the channel's own window.
pub(super) const STREAM_BUFFER: usize = 1 << 20;

/// How the server's key is judged.
#[derive(Clone, Copy, PartialEq)]
pub enum KeyPolicy {
    /// Only a key recorded in known_hosts.
    KnownHosts,
    /// Accept nothing; just learn which key the host offers (`hosts trust`).
    Capture,
}

struct Checker {
    name: String,
    resolved: Resolved,
    policy: KeyPolicy,
    offered: Arc<Mutex<Option<PublicKey>>>,
    refusal: Arc<Mutex<Option<RemoteError>>>,
}

impl client::Handler for Checker {
    type Error = russh::Error;

    async fn check_server_key(&mut self, server_key: &PublicKeyOrCertificate) -> Result<bool, Self::Error> {
        let key = match server_key {
            PublicKeyOrCertificate::PublicKey { key, .. } => key.clone(),
            PublicKeyOrCertificate::Certificate(_) => {
                *self.refusal.lock() = Some(RemoteError::Other(format!(
                    "{} offered a host certificate; agents verifies plain host keys only",
                    self.resolved.address()
                )));
                return Ok(false);
            }
        };
        *self.offered.lock() = Some(key.clone());
        if self.policy == KeyPolicy::Capture {
            return Ok(false);
        }
        let r = &self.resolved;
        match known_hosts::verify(&r.known_hosts, &r.hostname, r.port, &key, &self.name) {
            Ok(()) => Ok(true),
            Err(e) => {
                *self.refusal.lock() = Some(e);
                Ok(false)
            }
        }
    }
}

/// An authenticated SSH connection.
pub struct Ssh {
    handle: Handle<Checker>,
    pub host_key: PublicKey,
    /// `user@hostname:port`, as resolved.
    pub address: String,
}

fn unreachable(name: &str, r: &Resolved, why: impl std::fmt::Display) -> RemoteError {
    RemoteError::Unreachable {
        name: name.to_string(),
        address: r.address(),
        why: why.to_string(),
    }
}

fn config() -> Arc<client::Config> {
    Arc::new(client::Config {
        keepalive_interval: Some(KEEPALIVE_INTERVAL),
        keepalive_max: KEEPALIVE_MAX,
        // Keys typed into a remote pane are small packets: don't hold them back.
        nodelay: true,
        ..Default::default()
    })
}

/// TCP + handshake. Returns the handle, or the typed reason the host key
/// was refused, or why the host could not be reached.
async fn handshake(
    name: &str,
    r: &Resolved,
    policy: KeyPolicy,
) -> (Result<Handle<Checker>, RemoteError>, Option<PublicKey>) {
    let offered = Arc::new(Mutex::new(None));
    let refusal = Arc::new(Mutex::new(None));
    let checker = Checker {
        name: name.to_string(),
        resolved: r.clone(),
        policy,
        offered: offered.clone(),
        refusal: refusal.clone(),
    };
    let attempt = async {
        let Some(proxy) = &r.proxy else {
            let tcp = tokio::net::TcpStream::connect((r.hostname.as_str(), r.port))
                .await
                .map_err(|e| unreachable(name, r, e))?;
            let _ = tcp.set_nodelay(true);
            return client::connect_stream(config(), tcp, checker)
                .await
                .map_err(|e| unreachable(name, r, format!("SSH handshake failed: {e}")));
        };
        let home = dirs::home_dir().unwrap_or_default();
        let (stream, stderr) = super::ssh_config::through(proxy, r, &home)?;
        client::connect_stream(config(), stream, checker).await.map_err(|e| {
            let said = String::from_utf8_lossy(&stderr.lock()).trim().to_string();
            let via = match proxy {
                Proxy::Jump(hops) => format!("through {hops}"),
                Proxy::Command(line) => format!("through `{line}`"),
            };
            let said = if said.is_empty() {
                String::new()
            } else {
                format!(": {}", crate::text::bounded(&said, 300))
            };
            unreachable(name, r, format!("SSH handshake {via} failed: {e}{said}"))
        })
    };
    let result = match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
        Ok(result) => result,
        Err(_) => Err(unreachable(
            name,
            r,
            format!("no SSH answer within {}s", CONNECT_TIMEOUT.as_secs()),
        )),
    };
    let refused = refusal.lock().take();
    let offered = offered.lock().take();
    let result = match (result, refused) {
        (_, Some(typed)) => Err(typed),
        (other, None) => other,
    };
    (result, offered)
}

/// The key the host offers, without trusting it (for `agents hosts trust`).
pub async fn offered_key(name: &str, r: &Resolved) -> Result<PublicKey, RemoteError> {
    match handshake(name, r, KeyPolicy::Capture).await {
        (_, Some(key)) => Ok(key),
        (Err(e), None) => Err(e),
        (Ok(_), None) => Err(RemoteError::Other("the host offered no key".into())),
    }
}

/// Connects, verifies the host key strictly and authenticates.
pub async fn connect(name: &str, r: &Resolved) -> Result<Ssh, RemoteError> {
    let (handle, offered) = handshake(name, r, KeyPolicy::KnownHosts).await;
    let mut handle = handle?;
    let host_key = offered.ok_or_else(|| RemoteError::Other("the host offered no key".into()))?;
    match tokio::time::timeout(CONNECT_TIMEOUT, authenticate(&mut handle, r)).await {
        Ok(result) => result?,
        Err(_) => {
            return Err(unreachable(
                name,
                r,
                format!("authentication took longer than {}s", CONNECT_TIMEOUT.as_secs()),
            ));
        }
    }
    Ok(Ssh {
        handle,
        host_key,
        address: r.address(),
    })
}

/// ssh-agent identities first (when `SSH_AUTH_SOCK` is set), then the key
/// files of `~/.ssh/config` (or ssh's default ones) that exist.
async fn authenticate(handle: &mut Handle<Checker>, r: &Resolved) -> Result<(), RemoteError> {
    let mut tried: Vec<String> = Vec::new();
    let rsa_hash = |key_is_rsa: bool, best: Option<Option<russh::keys::HashAlg>>| {
        if key_is_rsa { best.flatten() } else { None }
    };
    if std::env::var_os("SSH_AUTH_SOCK").is_some()
        && let Ok(mut agent) = AgentClient::connect_env().await
        && let Ok(identities) = agent.request_identities().await
    {
        for identity in identities {
            let AgentIdentity::PublicKey { key, comment } = identity else {
                continue;
            };
            let best = handle.best_supported_rsa_hash().await.ok().flatten();
            let hash = rsa_hash(key.algorithm().is_rsa(), best);
            match handle.authenticate_publickey_with(&r.user, key, hash, &mut agent).await {
                Ok(result) if result.success() => return Ok(()),
                _ => tried.push(format!("agent key {comment}")),
            }
        }
    }
    for path in &r.identity_files {
        if !path.exists() {
            continue;
        }
        match russh::keys::load_secret_key(path, None) {
            Ok(key) => {
                let best = handle.best_supported_rsa_hash().await.ok().flatten();
                let hash = rsa_hash(key.algorithm().is_rsa(), best);
                let offer = PrivateKeyWithHashAlg::new(Arc::new(key), hash);
                let result = handle
                    .authenticate_publickey(&r.user, offer)
                    .await
                    .map_err(|e| RemoteError::Other(format!("authentication failed: {e}")))?;
                if result.success() {
                    return Ok(());
                }
                tried.push(path.display().to_string());
            }
            Err(russh::keys::Error::KeyIsEncrypted) => tried.push(format!(
                "{} (passphrase-protected: add it to ssh-agent)",
                path.display()
            )),
            Err(e) => tried.push(format!("{} ({e})", path.display())),
        }
    }
    Err(RemoteError::AuthFailed {
        address: r.address(),
        tried: if tried.is_empty() {
            "no ssh-agent key and no key file found".into()
        } else {
            tried.join(", ")
        },
    })
}

/// What a one-shot remote command did.
#[derive(Debug, Default)]
pub struct ExecOutput {
    /// `None` when the command ended without a status (killed by a signal).
    pub status: Option<u32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// A long-lived exec channel as a byte stream: read the remote stdout from
/// `reader`, write its stdin through `writer`.
pub struct RemoteStream {
    pub reader: DuplexStream,
    pub writer: Box<dyn AsyncWrite + Send + Unpin>,
    /// The last few KiB the remote command wrote to stderr.
    pub stderr: Arc<Mutex<Vec<u8>>>,
    /// The command's exit status, once it has one.
    pub exited: watch::Receiver<Option<u32>>,
}

impl Ssh {
    pub fn is_closed(&self) -> bool {
        self.handle.is_closed()
    }

    /// Runs `command` (through the remote user's shell) and collects its output.
    pub async fn exec(&self, command: &str) -> Result<ExecOutput, RemoteError> {
        let lost = |e: russh::Error| RemoteError::Other(format!("SSH channel failed: {e}"));
        let mut channel = self.handle.channel_open_session().await.map_err(lost)?;
        channel.exec(true, command).await.map_err(lost)?;
        let mut out = ExecOutput::default();
        let collect = async {
            while let Some(msg) = channel.wait().await {
                match msg {
                    ChannelMsg::Data { data } => append_capped(&mut out.stdout, &data, EXEC_OUTPUT_CAP),
                    ChannelMsg::ExtendedData { data, .. } => append_capped(&mut out.stderr, &data, EXEC_OUTPUT_CAP),
                    ChannelMsg::ExitStatus { exit_status } => out.status = Some(exit_status),
                    ChannelMsg::Close => break,
                    _ => {}
                }
            }
        };
        if tokio::time::timeout(EXEC_TIMEOUT, collect).await.is_err() {
            let _ = channel.close().await;
            return Err(RemoteError::Other(format!(
                "`{command}` did not finish within {}s",
                EXEC_TIMEOUT.as_secs()
            )));
        }
        Ok(out)
    }

    /// Starts `command` and hands back its stdin/stdout as a stream.
    pub async fn stream(&self, command: &str) -> Result<RemoteStream, RemoteError> {
        let lost = |e: russh::Error| RemoteError::Other(format!("SSH channel failed: {e}"));
        let channel = self.handle.channel_open_session().await.map_err(lost)?;
        channel.exec(true, command).await.map_err(lost)?;
        let (mut read_half, write_half) = channel.split();
        let writer = Box::new(write_half.make_writer());
        let (mut into_reader, reader) = tokio::io::duplex(STREAM_BUFFER);
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (exit_tx, exited) = watch::channel(None);
        let tail = stderr.clone();
        tokio::spawn(async move {
            // Owns the write half so the channel stays open while data flows.
            let _write_half = write_half;
            while let Some(msg) = read_half.wait().await {
                match msg {
                    ChannelMsg::Data { data } if into_reader.write_all(&data).await.is_err() => break,
                    ChannelMsg::Data { .. } => {}
                    ChannelMsg::ExtendedData { data, .. } => {
                        let mut tail = tail.lock();
                        tail.extend_from_slice(&data);
                        let excess = tail.len().saturating_sub(STDERR_TAIL);
                        tail.drain(..excess);
                    }
                    ChannelMsg::ExitStatus { exit_status } => {
                        exit_tx.send_replace(Some(exit_status));
                    }
                    ChannelMsg::Close => break,
                    _ => {}
                }
            }
            // Dropping `into_reader` is the end of file the reader sees.
        });
        Ok(RemoteStream {
            reader,
            writer,
            stderr,
            exited,
        })
    }

    pub async fn disconnect(&self) {
        let _ = self.handle.disconnect(russh::Disconnect::ByApplication, "", "en").await;
    }
}

pub(super) fn append_capped(buf: &mut Vec<u8>, data: &[u8], cap: usize) {
    let room = cap.saturating_sub(buf.len());
    buf.extend_from_slice(&data[..data.len().min(room)]);
}

/// Quotes one word for a POSIX shell: the remote command line goes through
/// the remote user's shell.
pub fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_for_the_remote_shell() {
        assert_eq!(shell_quote("/usr/bin/agents"), "/usr/bin/agents");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$(reboot)"), "'$(reboot)'");
    }
}
