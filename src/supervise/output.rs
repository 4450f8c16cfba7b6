//! The output log: every PTY byte appended, addressed by byte offset, with
//! time samples (`output.idx`) and screen checkpoints (DESIGN §6).

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::evidence::EndedBy;
use super::server::Supervised;
use crate::paths::Paths;

/// PTY reads of up to 64 KiB: large enough that a flood costs few syscalls,
/// small enough that a keystroke's echo is never held back.
const READ_CHUNK: usize = 64 * 1024;
/// At most one time sample per this interval: enough for asciicast replay
/// timing, a few bytes per second of idle output.
const SAMPLE_EVERY: Duration = Duration::from_millis(10);
/// A checkpoint of the screen every ~1 MB of output (DESIGN §6): replaying
/// history then costs at most ~1 MB of parsing, tens of milliseconds.
pub const CHECKPOINT_EVERY: u64 = 1 << 20;

pub struct OutputLog {
    log: File,
    index: File,
    checkpoints: File,
    offset: u64,
    last_sample: Option<Instant>,
    last_checkpoint: u64,
}

impl OutputLog {
    pub fn create(paths: &Paths, run: &str) -> Result<OutputLog> {
        let open = |path: std::path::PathBuf| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .with_context(|| format!("opening {}", path.display()))
        };
        let log = open(paths.output_log(run))?;
        let offset = log.metadata()?.len();
        Ok(OutputLog {
            log,
            index: open(paths.output_index(run))?,
            checkpoints: open(paths.checkpoints(run))?,
            offset,
            last_sample: None,
            last_checkpoint: offset,
        })
    }

    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.log.write_all(bytes)?;
        let now = Instant::now();
        if self.last_sample.is_none_or(|t| now.duration_since(t) >= SAMPLE_EVERY) {
            self.last_sample = Some(now);
            let mut rec = [0u8; 16];
            rec[..8].copy_from_slice(&self.offset.to_le_bytes());
            rec[8..].copy_from_slice(&(crate::store::now_ms() as u64).to_le_bytes());
            self.index.write_all(&rec)?;
        }
        self.offset += bytes.len() as u64;
        Ok(())
    }

    fn checkpoint(&mut self, rows: u16, cols: u16, scrolled: u64, screen: &[u8]) -> std::io::Result<()> {
        let mut rec = Vec::with_capacity(28 + screen.len());
        rec.extend_from_slice(&self.offset.to_le_bytes());
        rec.extend_from_slice(&scrolled.to_le_bytes());
        rec.extend_from_slice(&rows.to_le_bytes());
        rec.extend_from_slice(&cols.to_le_bytes());
        rec.extend_from_slice(&(screen.len() as u32).to_le_bytes());
        rec.extend_from_slice(screen);
        self.checkpoints.write_all(&rec)?;
        self.last_checkpoint = self.offset;
        Ok(())
    }
}

/// One thread per run reads the PTY: log first, then the emulator, then tell
/// whoever watches. Nothing here waits on a client.
pub fn start_reader(run: Arc<Supervised>, mut reader: Box<dyn Read + Send>, mut log: OutputLog) -> Result<()> {
    std::thread::Builder::new()
        .name("pty-reader".into())
        .spawn(move || {
            let mut buf = vec![0u8; READ_CHUNK];
            let mut writing = true;
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    // EIO: every slave descriptor is closed.
                    Err(_) => break,
                };
                let bytes = &buf[..n];
                if writing && let Err(e) = log.append(bytes) {
                    // A full disk must not lose the run silently: stop writing,
                    // keep draining the PTY so the harness never blocks, and end
                    // the run with the reason.
                    writing = false;
                    run.set_log_error(e.to_string());
                    run.cancel(EndedBy::LogFailure, false);
                }
                if !writing {
                    continue;
                }
                let (replies, checkpoint) = {
                    let mut term = run.term.lock().unwrap_or_else(|p| p.into_inner());
                    term.feed(bytes);
                    let replies = term.take_replies();
                    let checkpoint = (log.offset - log.last_checkpoint >= CHECKPOINT_EVERY).then(|| {
                        let (rows, cols) = term.size();
                        (rows, cols, term.scrolled_lines(), term.snapshot())
                    });
                    (replies, checkpoint)
                };
                if !replies.is_empty() {
                    run.write_input(replies);
                }
                if let Some((rows, cols, scrolled, screen)) = checkpoint {
                    let _ = log.checkpoint(rows, cols, scrolled, &screen);
                }
                run.committed.send_replace(log.offset);
            }
            let _ = log.log.sync_data();
            run.eof.send_replace(true);
        })
        .context("starting the PTY reader thread")?;
    Ok(())
}
