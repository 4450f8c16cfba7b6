//! `agents logs` and `agents export`: a run's whole output, read through a
//! lossless subscription from offset 0.

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::attach::parse_notification;
use crate::api::{AttachParams, AttachResult, RunRef, method};
use crate::client::Client;
use crate::paths::Paths;
use crate::protocol::Frame;

/// Reads a run's output from the start; calls `each` with every chunk, in
/// order, until the output ends (or, without `follow`, until caught up).
async fn read_output(
    paths: &Paths,
    run: &str,
    follow: bool,
    mut each: impl FnMut(&[u8]) -> Result<()>,
) -> Result<AttachResult> {
    let mut client = Client::connect(paths, true).await?;
    let mut events = client.events.take().expect("asked for events");
    let attached: AttachResult = client
        .call(
            method::RUNS_ATTACH,
            AttachParams {
                run: run.into(),
                offset: Some(0),
                lossless: true,
                window: None,
            },
        )
        .await?;
    let id = attached.run.id.clone();
    let mut cursor = 0u64;
    while let Some(frame) = events.recv().await {
        match frame {
            Frame::Output { run, offset, bytes } if run == id => {
                let end = offset + bytes.len() as u64;
                if end > cursor {
                    let skip = cursor.saturating_sub(offset) as usize;
                    each(&bytes[skip..])?;
                    cursor = end;
                }
            }
            other => {
                if let Some(note) = parse_notification(&other)
                    && note.method == method::OUTPUT_END
                    && note.params.get("run").and_then(Value::as_str) == Some(id.as_str())
                {
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

pub async fn logs(paths: &Paths, run: &str, follow: bool, raw: bool) -> Result<i32> {
    let stdout = std::io::stdout();
    if raw {
        if stdout.is_terminal() {
            bail!("refusing to write a run's raw bytes to a terminal; redirect them to a file or a pipe");
        }
        let mut out = stdout.lock();
        read_output(paths, run, follow, |bytes| {
            out.write_all(bytes)?;
            out.flush()?;
            Ok(())
        })
        .await?;
        return Ok(0);
    }
    if !follow {
        let mut out = stdout.lock();
        for line in screen_lines(paths, run, history_lines()).await? {
            writeln!(out, "{line}")?;
        }
        return Ok(0);
    }
    let client = Client::connect(paths, false).await?;
    let detail: crate::api::RunDetail = client.call(method::RUNS_SHOW, RunRef { run: run.into() }).await?;
    drop(client);
    let history = history_lines();
    let mut follower = crate::term::LineFollower::new(detail.run.rows, detail.run.cols, history);
    let mut out = stdout.lock();
    read_output(paths, run, true, |bytes| {
        follower.feed(bytes);
        for line in follower.take_complete() {
            writeln!(out, "{line}")?;
        }
        out.flush()?;
        Ok(())
    })
    .await?;
    for line in follower.take_rest() {
        writeln!(out, "{line}")?;
    }
    Ok(0)
}

/// A run's output as the terminal showed it, up to now: at most
/// `max_lines` lines of history and screen, the last ones (`agents logs`,
/// and MCP's `run_logs`).
pub(crate) async fn screen_lines(paths: &Paths, run: &str, max_lines: usize) -> Result<Vec<String>> {
    let client = Client::connect(paths, false).await?;
    let detail: crate::api::RunDetail = client.call(method::RUNS_SHOW, RunRef { run: run.into() }).await?;
    drop(client);
    let mut follower = crate::term::LineFollower::new(detail.run.rows, detail.run.cols, max_lines);
    read_output(paths, &detail.run.id, false, |bytes| {
        follower.feed(bytes);
        Ok(())
    })
    .await?;
    Ok(follower.finish())
}

fn history_lines() -> usize {
    crate::config::ConfigWatch::new(Paths::config_file())
        .current
        .engine
        .history_lines
}

/// asciicast v2: a header line, then `[seconds, "o", text]` events timed by
/// the run's `output.idx` samples.
pub async fn export_cast(paths: &Paths, run: &str, file: &Path) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let detail: crate::api::RunDetail = client.call(method::RUNS_SHOW, RunRef { run: run.into() }).await?;
    let samples: Vec<[u64; 2]> = client
        .call(
            method::RUNS_INDEX,
            RunRef {
                run: detail.run.id.clone(),
            },
        )
        .await?;
    drop(client);
    let mut bytes = Vec::new();
    read_output(paths, &detail.run.id, false, |chunk| {
        bytes.extend_from_slice(chunk);
        Ok(())
    })
    .await?;
    let start_ms = samples.first().map(|s| s[1]).unwrap_or(0);
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(file).with_context(|| format!("creating {}", file.display()))?);
    let header = json!({
        "version": 2,
        "width": detail.run.cols,
        "height": detail.run.rows,
        "timestamp": start_ms / 1000,
        "title": detail.run.name,
        "env": { "TERM": "xterm-256color" },
    });
    writeln!(out, "{header}")?;
    // Cut the log at each sample; carry an incomplete UTF-8 sequence over to
    // the next event rather than mangling it.
    let mut pending: Vec<u8> = Vec::new();
    for (i, sample) in samples.iter().enumerate() {
        let from = sample[0] as usize;
        let to = samples.get(i + 1).map(|s| s[0] as usize).unwrap_or(bytes.len());
        if from >= bytes.len() || to <= from {
            continue;
        }
        pending.extend_from_slice(&bytes[from..to.min(bytes.len())]);
        let valid = match std::str::from_utf8(&pending) {
            Ok(_) => pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => pending.len(),
        };
        let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
        pending.drain(..valid);
        if text.is_empty() {
            continue;
        }
        let t = sample[1].saturating_sub(start_ms) as f64 / 1000.0;
        writeln!(out, "{}", json!([t, "o", text]))?;
    }
    if !pending.is_empty() {
        let t = samples.last().map(|s| s[1].saturating_sub(start_ms)).unwrap_or(0) as f64 / 1000.0;
        writeln!(out, "{}", json!([t, "o", String::from_utf8_lossy(&pending)]))?;
    }
    out.flush()?;
    println!("wrote {}", file.display());
    Ok(0)
}
