//! A run's output read back through the daemon: every byte from offset 0
//! (a lossless subscription), and the lines a terminal showed — history,
//! then the screen — replayed at the sizes the run's screen had. What
//! `agents logs`, `agents export` and MCP's `run_logs` read.

use anyhow::{Result, bail};
use serde_json::Value;

use crate::api::{AttachParams, AttachResult, RunRef, method};
use crate::client::Client;
use crate::paths::Paths;
use crate::protocol::Frame;
use crate::protocol::run_files::SizeChange;

/// Reads a run's output from the start; calls `each` with every chunk, in
/// order, until the output ends (or, without `follow`, until caught up).
pub async fn read_output(
    paths: &Paths,
    run: &str,
    follow: bool,
    mut each: impl FnMut(&[u8]) -> Result<()>,
) -> Result<AttachResult> {
    read(paths, run, follow, false, |piece| match piece {
        Piece::Bytes(bytes) => each(bytes),
        Piece::Size(_) => Ok(()),
    })
    .await
}

/// What a byte subscription brings, in log order.
enum Piece<'a> {
    Bytes(&'a [u8]),
    /// A size the run's screen took at an offset (asked with `sizes`).
    Size(SizeChange),
}

async fn read(
    paths: &Paths,
    run: &str,
    follow: bool,
    sizes: bool,
    mut each: impl FnMut(Piece) -> Result<()>,
) -> Result<AttachResult> {
    let mut client = Client::connect(paths, true).await?;
    let mut events = client.events.take().expect("asked for events");
    let attached: AttachResult = client
        .call::<method::RunsAttach>(AttachParams {
            run: run.into(),
            offset: Some(0),
            lossless: true,
            screen: false,
            sizes,
            sub: 0,
            screen_format: None,
            fit: None,
        })
        .await?;
    let id = attached.run.id.clone();
    let mut cursor = 0u64;
    while let Some(frame) = events.recv().await {
        match frame {
            Frame::Output { run, offset, bytes } if run == id => {
                let end = offset + bytes.len() as u64;
                if end > cursor {
                    let skip = cursor.saturating_sub(offset) as usize;
                    each(Piece::Bytes(&bytes[skip..]))?;
                    cursor = end;
                }
            }
            other => {
                let Some(note) = crate::protocol::rpc::notification_of(&other)
                    .filter(|n| n.params.get("run").and_then(Value::as_str) == Some(id.as_str()))
                else {
                    continue;
                };
                if note.method == method::OUTPUT_SIZE
                    && let Some(size) = note.params.get("size")
                    && let Ok(size) = serde_json::from_value(size.clone())
                {
                    each(Piece::Size(size))?;
                } else if note.method == method::OUTPUT_END {
                    if let Some(err) = note.params.get("error").and_then(Value::as_str) {
                        bail!("{err}");
                    }
                    let is_final = note.params.get("final").and_then(Value::as_bool) == Some(true);
                    if is_final || !follow {
                        break;
                    }
                }
            }
        }
    }
    Ok(attached)
}

/// A run's output as the terminal showed it, up to now: at most
/// `max_lines` lines of history and screen, the last ones (`agents logs`,
/// and MCP's `run_logs`).
pub async fn screen_lines(paths: &Paths, run: &str, max_lines: usize) -> Result<Vec<String>> {
    Ok(read_lines(paths, run, false, max_lines, |_| Ok(())).await?.finish())
}

/// Reads a run's output from the start through a follower of its lines
/// that takes each size the run's screen took, at its offset, those taken
/// while it follows too (the run's size throughout when none were kept: a
/// run from an older build, or one mirrored from a host). Calls `each`
/// after every chunk fed, until the output ends (or, without `follow`,
/// until caught up); returns the follower.
pub async fn read_lines(
    paths: &Paths,
    run: &str,
    follow: bool,
    max_lines: usize,
    mut each: impl FnMut(&mut crate::term::LineFollower) -> Result<()>,
) -> Result<crate::term::LineFollower> {
    let client = Client::connect(paths, false).await?;
    let detail: crate::api::RunDetail = client.call::<method::RunsShow>(RunRef { run: run.into() }).await?;
    // The sizes so far also come in the stream; a daemon of an older build
    // sends none there.
    let sizes = run_sizes(&client, &detail.run.id).await;
    drop(client);
    let mut follower = crate::term::LineFollower::with_sizes(detail.run.rows, detail.run.cols, max_lines, sizes);
    read(paths, &detail.run.id, follow, true, |piece| match piece {
        Piece::Bytes(bytes) => {
            follower.feed(bytes);
            each(&mut follower)
        }
        Piece::Size(size) => {
            follower.take_size(size);
            Ok(())
        }
    })
    .await?;
    Ok(follower)
}

/// The run's sizes by offset; none from a daemon that does not keep them.
pub async fn run_sizes(client: &Client, id: &str) -> Vec<SizeChange> {
    client
        .call::<method::RunsSizes>(RunRef { run: id.into() })
        .await
        .unwrap_or_default()
}
