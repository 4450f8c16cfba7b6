//! `agents logs` and `agents export`: a run's whole output, read back
//! through the daemon (`crate::client::replay`).

use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::api::{RunRef, method};
use crate::client::Client;
use crate::client::replay::{read_lines, read_output, run_sizes, screen_lines};
use crate::paths::Paths;
use crate::protocol::run_files::{SizeChange, TimeSample};

pub async fn logs(paths: &Paths, run: &str, follow: bool, raw: bool) -> Result<i32> {
    let stdout = std::io::stdout();
    if raw {
        if stdout.is_terminal() {
            return Err(crate::cli::refused(
                "refusing to write a run's raw bytes to a terminal; redirect them to a file or a pipe",
            ));
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
        for line in screen_lines(paths, run, history_lines(paths)).await? {
            writeln!(out, "{}", crate::text::inert(&line))?;
        }
        return Ok(0);
    }
    let mut out = stdout.lock();
    let mut follower = read_lines(paths, run, true, history_lines(paths), |follower| {
        for line in follower.take_complete() {
            writeln!(out, "{}", crate::text::inert(&line))?;
        }
        out.flush()?;
        Ok(())
    })
    .await?;
    for line in follower.take_rest() {
        writeln!(out, "{}", crate::text::inert(&line))?;
    }
    Ok(0)
}

fn history_lines(paths: &Paths) -> usize {
    crate::config::ConfigWatch::reading(paths).current.engine.history_lines
}

/// asciicast v2: a header line at the run's first size, then `[seconds,
/// "o", text]` events timed by the run's `output.idx` samples, and `[seconds,
/// "r", "COLSxROWS"]` where the screen took another size.
pub async fn export_cast(paths: &Paths, run: &str, file: &Path) -> Result<i32> {
    let client = Client::connect(paths, false).await?;
    let detail: crate::api::RunDetail = client.call::<method::RunsShow>(RunRef { run: run.into() }).await?;
    let samples: Vec<[u64; 2]> = client
        .call::<method::RunsIndex>(RunRef {
            run: detail.run.id.clone(),
        })
        .await?;
    let mut sizes = run_sizes(&client, &detail.run.id).await;
    drop(client);
    let mut bytes = Vec::new();
    read_output(paths, &detail.run.id, false, |chunk| {
        bytes.extend_from_slice(chunk);
        Ok(())
    })
    .await?;
    let samples: Vec<TimeSample> = samples
        .iter()
        .map(|s| TimeSample {
            offset: s[0],
            at_ms: s[1],
        })
        .collect();
    let start_ms = samples.first().map(|s| s.at_ms).unwrap_or(0);
    // The size the first byte was parsed at is the header's (an attach
    // that resized the run before it printed anything counts there); the
    // rest are events.
    while sizes.len() >= 2 && sizes[1].offset == 0 {
        sizes.remove(0);
    }
    let (cols, rows) = match sizes.first() {
        Some(first) if first.offset == 0 => (first.cols, first.rows),
        _ => (detail.run.cols, detail.run.rows),
    };
    if sizes.first().is_some_and(|f| f.offset == 0) {
        sizes.remove(0);
    }
    let mut out =
        std::io::BufWriter::new(std::fs::File::create(file).with_context(|| format!("creating {}", file.display()))?);
    let header = json!({
        "version": 2,
        "width": cols,
        "height": rows,
        "timestamp": start_ms / 1000,
        "title": detail.run.name,
        "env": { "TERM": "xterm-256color" },
    });
    writeln!(out, "{header}")?;
    for event in cast_events(&bytes, &samples, &sizes) {
        writeln!(out, "{event}")?;
    }
    out.flush()?;
    say!("wrote {}", file.display());
    Ok(0)
}

/// The events of a cast of `bytes`: output cut at each time sample and at
/// each size change, a size change as an `"r"` event at its offset, times
/// in seconds from the first sample and never going back. An incomplete
/// UTF-8 sequence is carried over to the next output event rather than
/// mangled.
fn cast_events(bytes: &[u8], samples: &[TimeSample], sizes: &[SizeChange]) -> Vec<Value> {
    // The first sample, or with none yet the first size change.
    let start_ms = samples
        .first()
        .map(|s| s.at_ms)
        .or_else(|| sizes.iter().map(|c| c.at_ms).min())
        .unwrap_or(0);
    let secs = |ms: u64| ms.saturating_sub(start_ms) as f64 / 1000.0;
    // Each stretch of the log, from where, and when it was written.
    let mut cuts: Vec<(u64, Option<&SizeChange>, u64)> = samples.iter().map(|s| (s.offset, None, s.at_ms)).collect();
    cuts.extend(sizes.iter().map(|c| (c.offset, Some(c), c.at_ms)));
    // At one offset the size comes first: the bytes there were parsed at it.
    cuts.sort_by_key(|(offset, change, _)| (*offset, change.is_none()));
    // Bytes before the first cut (a log with no time sample yet, as a live
    // run's first second may be) go out at the first time known.
    if cuts.first().is_none_or(|c| c.0 > 0) {
        let at_ms = cuts.first().map_or(start_ms, |c| c.2);
        cuts.insert(0, (0, None, at_ms));
    }
    let mut events = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut last_t = 0.0f64;
    for (i, &(from, change, at_ms)) in cuts.iter().enumerate() {
        let t = secs(at_ms).max(last_t);
        last_t = t;
        if let Some(c) = change {
            events.push(json!([t, "r", format!("{}x{}", c.cols, c.rows)]));
        }
        let to = cuts
            .get(i + 1)
            .map_or(bytes.len() as u64, |c| c.0)
            .min(bytes.len() as u64);
        if from < to {
            pending.extend_from_slice(&bytes[from as usize..to as usize]);
        }
        let valid = match std::str::from_utf8(&pending) {
            Ok(_) => pending.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => pending.len(),
        };
        if valid > 0 {
            let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
            pending.drain(..valid);
            events.push(json!([t, "o", text]));
        }
    }
    if !pending.is_empty() {
        events.push(json!([last_t, "o", String::from_utf8_lossy(&pending)]));
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resize_is_an_r_event_between_the_output_before_and_after_it() {
        let bytes = "one\r\ntwo é\r\n".as_bytes();
        let samples = [
            TimeSample { offset: 0, at_ms: 1000 },
            // A sample that cuts `é` in two.
            TimeSample {
                offset: 10,
                at_ms: 1500,
            },
        ];
        let resized = SizeChange {
            offset: 5,
            at_ms: 1200,
            rows: 30,
            cols: 100,
        };
        let events = cast_events(bytes, &samples, &[resized]);
        assert_eq!(
            events,
            [
                json!([0.0, "o", "one\r\n"]),
                json!([0.2, "r", "100x30"]),
                json!([0.2, "o", "two "]),
                json!([0.5, "o", "é\r\n"]),
            ]
        );
    }

    #[test]
    fn bytes_before_the_first_time_sample_are_not_left_out() {
        let bytes = b"before\r\nafter\r\n";
        let resized = SizeChange {
            offset: 8,
            at_ms: 1200,
            rows: 30,
            cols: 100,
        };
        assert_eq!(
            cast_events(bytes, &[], &[resized]),
            [
                json!([0.0, "o", "before\r\n"]),
                json!([0.0, "r", "100x30"]),
                json!([0.0, "o", "after\r\n"]),
            ]
        );
    }
}
