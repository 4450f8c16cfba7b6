//! `agents serve --stdio` (docs/design.md §2): what the local daemon runs on a
//! remote host over SSH. It exchanges version headers with the peer on
//! stdin/stdout and with this host's daemon (started if needed, like any
//! client starts it), then relays bytes both ways untouched, so the daemon
//! sees an ordinary client and the peer an ordinary daemon.

use std::time::Duration;

use anyhow::Result;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use crate::api::ErrorCode;
use crate::paths::Paths;
use crate::protocol::rpc::Response;
use crate::protocol::{Frame, HeaderError, exchange_headers, write_frame};

/// A daemon another client is starting gets this long to listen (as `Client::connect`).
const DAEMON_READY: Duration = Duration::from_secs(10);
const RETRY_CONNECT: Duration = Duration::from_millis(20);

/// Relays until either side closes. Errors go to stderr (the SSH channel's
/// stderr, which the local side keeps for its diagnostics) and, once the
/// peer has our header, as an error frame it can read.
pub async fn main(paths: &Paths) -> Result<i32> {
    paths.ensure()?;
    let mut peer_in = BufReader::new(tokio::io::stdin());
    let mut peer_out = tokio::io::stdout();
    if let Err(e) = exchange_headers(&mut peer_in, &mut peer_out).await {
        eprintln!("agents serve: {e}");
        let code = match e {
            HeaderError::Mismatch { .. } => ErrorCode::VersionMismatch,
            _ => ErrorCode::Protocol,
        };
        let _ = write_frame(
            &mut peer_out,
            &Frame::control(&Response::err(0, code.as_str(), e.to_string())),
        )
        .await;
        let _ = peer_out.flush().await;
        return Ok(1);
    }
    let daemon = match connect_daemon(paths).await {
        Ok(stream) => stream,
        Err(e) => {
            let (code, msg) = match e {
                DaemonError::Mismatch(msg) => (ErrorCode::VersionMismatch, msg),
                DaemonError::Unavailable(msg) => (ErrorCode::DaemonUnavailable, msg),
            };
            eprintln!("agents serve: {msg}");
            let _ = write_frame(&mut peer_out, &Frame::control(&Response::err(0, code.as_str(), msg))).await;
            let _ = peer_out.flush().await;
            return Ok(1);
        }
    };
    let (daemon_r, mut daemon_w) = daemon;
    let mut daemon_r = daemon_r;
    // Whatever the peer sent after its header is already in `peer_in`'s
    // buffer; copying from the BufReader passes it on first.
    let upstream = async {
        let copied = tokio::io::copy(&mut peer_in, &mut daemon_w).await;
        let _ = daemon_w.shutdown().await;
        copied
    };
    let downstream = async {
        let copied = tokio::io::copy(&mut daemon_r, &mut peer_out).await;
        let _ = peer_out.flush().await;
        copied
    };
    // Either direction ending ends the bridge: a peer that hung up has no
    // more use for the daemon's answers, and a daemon that closed has none
    // to give.
    tokio::select! {
        _ = upstream => {}
        _ = downstream => {}
    }
    // Tokio reads stdin on a blocking thread that no runtime can cancel, and
    // dropping the runtime would wait for it: leave now, output flushed.
    std::process::exit(0)
}

type DaemonHalves = (
    BufReader<tokio::net::unix::OwnedReadHalf>,
    tokio::net::unix::OwnedWriteHalf,
);

/// Why this host's daemon cannot be reached.
enum DaemonError {
    /// It speaks another protocol (an older daemon still running).
    Mismatch(String),
    Unavailable(String),
}

/// Connects to this host's daemon and exchanges headers, starting the
/// daemon when none answers.
async fn connect_daemon(paths: &Paths) -> Result<DaemonHalves, DaemonError> {
    let socket = paths.daemon_socket();
    if let Ok(stream) = UnixStream::connect(&socket).await
        && let Ok(halves) = greet(stream).await
    {
        return Ok(halves);
    }
    let starting = paths.clone();
    tokio::task::spawn_blocking(move || crate::client::start_daemon(&starting))
        .await
        .map_err(|e| DaemonError::Unavailable(format!("cannot start the daemon: {e}")))?
        .map_err(|e| DaemonError::Unavailable(e.message))?;
    let deadline = tokio::time::Instant::now() + DAEMON_READY;
    loop {
        let attempt = match UnixStream::connect(&socket).await {
            Ok(stream) => greet(stream).await,
            Err(e) => Err(DaemonError::Unavailable(format!(
                "no daemon at {}: {e}",
                socket.display()
            ))),
        };
        match attempt {
            Ok(halves) => return Ok(halves),
            Err(e @ DaemonError::Mismatch(_)) => return Err(e),
            Err(e) if tokio::time::Instant::now() >= deadline => return Err(e),
            Err(_) => tokio::time::sleep(RETRY_CONNECT).await,
        }
    }
}

async fn greet(stream: UnixStream) -> Result<DaemonHalves, DaemonError> {
    let (r, mut w) = stream.into_split();
    let mut r = BufReader::new(r);
    exchange_headers(&mut r, &mut w).await.map_err(|e| match e {
        HeaderError::Mismatch { .. } => DaemonError::Mismatch(format!(
            "this host's daemon speaks another protocol: {e}; stop it with `agents daemon stop`"
        )),
        other => DaemonError::Unavailable(format!("this host's daemon did not answer: {other}")),
    })?;
    Ok((r, w))
}
