//! The output log: every PTY byte appended, addressed by byte offset, with
//! time samples (`output.idx`) and screen checkpoints (docs/design.md §6).

use parking_lot::Mutex;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::server::{SCREEN_QUIET, Supervised};
use super::yielding::Yielding;
use crate::paths::Paths;
use crate::protocol::exit::EndedBy;
use crate::protocol::run_files::{Checkpoint, TimeSample};

/// PTY reads of up to 64 KiB: large enough that a flood costs few syscalls,
/// small enough that a keystroke's echo is never held back.
const READ_CHUNK: usize = 64 * 1024;
/// At most one time sample per this interval: enough for asciicast replay
/// timing, a few bytes per second of idle output.
const SAMPLE_EVERY: Duration = Duration::from_millis(10);
/// Time samples are written in batches, at least this often while output
/// goes on and once output pauses this long (the first after a pause at
/// once): a write per sample was a third of the writes of a spinning run
/// (one frame, one log write, one index write). A supervisor killed
/// outright loses at most this much of the timing, never a byte of output;
/// an export of a live run times its last second's bytes at the last
/// sample written.
const SAMPLES_HELD: Duration = Duration::from_secs(1);
/// A checkpoint of the screen every ~1 MB of output (docs/design.md §6): replaying
/// history then costs at most ~1 MB of parsing, tens of milliseconds.
pub const CHECKPOINT_EVERY: u64 = 1 << 20;

pub struct OutputLog {
    log: File,
    index: File,
    offset: u64,
    last_sample: Option<Instant>,
    /// Encoded samples not yet written, and when the last batch was.
    samples: Vec<u8>,
    samples_written: Instant,
}

/// Screen checkpoints, written by the parser thread.
pub struct Checkpoints {
    file: File,
    last: u64,
}

impl OutputLog {
    pub fn create(paths: &Paths, run: &str) -> Result<(OutputLog, Checkpoints)> {
        let open = |path: std::path::PathBuf| {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .with_context(|| format!("opening {}", path.display()))
        };
        let log = open(paths.output_log(run))?;
        let offset = log.metadata()?.len();
        Ok((
            OutputLog {
                log,
                index: open(paths.output_index(run))?,
                offset,
                last_sample: None,
                samples: Vec::new(),
                // The first sample is written at once, as is the first after
                // a quiet second.
                samples_written: Instant::now() - SAMPLES_HELD,
            },
            Checkpoints {
                file: open(paths.checkpoints(run))?,
                last: offset,
            },
        ))
    }

    /// Bytes in the log (a next attempt's supervisor appends to the same one).
    pub fn end_offset(&self) -> u64 {
        self.offset
    }

    /// Appends `bytes` whole, or not at all: a write the disk cut short is
    /// taken back, so the log's length is always `offset` and the same
    /// bytes can be tried again.
    fn append(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if let Err(e) = self.log.write_all(bytes) {
            let _ = self.log.set_len(self.offset);
            return Err(e);
        }
        let now = Instant::now();
        if self.last_sample.is_none_or(|t| now.duration_since(t) >= SAMPLE_EVERY) {
            self.last_sample = Some(now);
            let sample = TimeSample {
                offset: self.offset,
                at_ms: crate::clock::now_ms() as u64,
            };
            self.samples.extend_from_slice(&sample.encode());
            if now.duration_since(self.samples_written) >= SAMPLES_HELD {
                self.write_samples();
            }
        }
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Writes the samples held back, if any. Samples the disk refused stay
    /// held for the next try (16 bytes a second: no bound needed for the
    /// length of any full disk): they say when output came, never what.
    fn write_samples(&mut self) {
        self.samples_written = Instant::now();
        if self.samples.is_empty() {
            return;
        }
        let before = self.index.metadata().map(|m| m.len());
        match (self.index.write_all(&self.samples), before) {
            (Ok(()), _) => self.samples.clear(),
            // A part written is taken back: all of them go on the next try.
            (Err(_), Ok(len)) => {
                let _ = self.index.set_len(len);
            }
            (Err(_), Err(_)) => {}
        }
    }
}

impl Checkpoints {
    fn write(&mut self, checkpoint: &Checkpoint) -> std::io::Result<()> {
        self.file.write_all(&checkpoint.encode())?;
        self.last = checkpoint.offset;
        Ok(())
    }
}

/// Chunks read but not yet parsed. 64 × 64 KiB = 4 MiB lets the reader run
/// ahead of a parser that is momentarily slower, without unbounded memory.
const PARSE_QUEUE: usize = 64;

/// At most this much is parsed under one lock, so a snapshot request never
/// waits long behind a flood.
const PARSE_BATCH: usize = 256 * 1024;

/// A read this small is parsed by the reader itself when the parser has
/// nothing queued: a spinner's frame or a keystroke's echo is tens of bytes,
/// an agent's status line a few hundred, while a flood reads 4 KiB and more.
/// Handing such a read to the parser thread costs a thread wake-up (tens of
/// µs) for a few µs of parsing; with 50 spinning runs those wake-ups were
/// most of the supervisors' CPU (`cargo bench --bench spinners`).
const PARSE_INLINE_MAX: usize = 1024;

/// Feeds `batch` (`queued` bytes) to the emulator, answers terminal
/// queries, writes a checkpoint when one is due, and announces the parse.
fn parse(run: &Supervised, batch: &[Vec<u8>], queued: usize, checkpoints: &Mutex<Checkpoints>) {
    let mut checkpoints = checkpoints.lock();
    let (replies, checkpoint) = {
        let mut screen = run.screen.lock();
        for bytes in batch {
            screen.feed(bytes, &run.signs);
        }
        let replies = screen.term.take_replies();
        // Due at each multiple of CHECKPOINT_EVERY the parse crossed: a
        // batch (up to PARSE_BATCH) overshoots, and counting from the last
        // checkpoint would let each overshoot push every later one back.
        let due = screen.offset / CHECKPOINT_EVERY > checkpoints.last / CHECKPOINT_EVERY;
        let checkpoint = due.then(|| {
            let (rows, cols) = screen.term.size();
            Checkpoint {
                offset: screen.offset,
                scrolled: screen.term.scrolled_lines(),
                rows,
                cols,
                screen: screen.term.snapshot(),
            }
        });
        (replies, checkpoint)
    };
    if !replies.is_empty() {
        run.write_input(replies);
    }
    run.parsed.send_modify(|p| *p += queued as u64);
    if let Some(checkpoint) = checkpoint {
        let _ = checkpoints.write(&checkpoint);
    }
}

/// How often a full disk is tried again while a run is paused on it.
const DISK_RETRY: Duration = Duration::from_millis(250);

/// A full disk pauses the run rather than ending it at once: this thread
/// stops reading, so the harness is held on its next write to the terminal
/// (nothing it prints is lost, nothing is buffered here), and the chunk is
/// tried again until the disk takes it, `patience` passes, or the run is
/// being ended. Another error is returned as it came.
fn ride_out_full_disk(
    run: &Supervised,
    log: &mut OutputLog,
    chunk: &[u8],
    error: std::io::Error,
    patience: Duration,
) -> std::io::Result<()> {
    let full = |e: &std::io::Error| {
        matches!(
            e.kind(),
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
        )
    };
    if !full(&error) {
        return Err(error);
    }
    let since = Instant::now();
    let mut last = error;
    run.disk_paused.store(true, Ordering::Relaxed);
    let outcome = loop {
        if since.elapsed() >= patience || run.ended_by().is_some() {
            break Err(last);
        }
        std::thread::sleep(DISK_RETRY);
        match log.append(chunk) {
            Ok(()) => break Ok(()),
            Err(e) if full(&e) => last = e,
            Err(e) => break Err(e),
        }
    };
    run.disk_paused.store(false, Ordering::Relaxed);
    outcome
}

/// Waits up to `limit` for the PTY to have output (or an end) to read;
/// false when it stayed quiet that long.
fn readable_within(fd: std::os::fd::RawFd, limit: Duration) -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    // SAFETY: `fd` is the PTY master, owned by the run the calling thread
    // holds, and never closed or replaced while the run lives.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    // Rounded up: a timeout cut short would find nothing due yet and poll again.
    let ms = limit.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
    let timeout = PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX);
    // An error (EINTR …) is left to the read that follows.
    !matches!(poll(&mut [PollFd::new(fd, PollFlags::POLLIN)], timeout), Ok(0))
}

/// Two threads per run. The reader appends each PTY read to the log and
/// commits the offset (subscribers stream from the log); the parser feeds the
/// emulator, answers terminal queries and writes checkpoints. Reading and
/// parsing overlap, so a flood costs the slower of the two, not their sum.
/// A small read while the parser is idle is parsed by the reader, in order
/// (`PARSE_INLINE_MAX`). Whichever thread parsed last reads the screen for
/// a question once output has been quiet for `SCREEN_QUIET` and no parse
/// read it (the reader waiting in `poll`, the parser in `recv_timeout`: no
/// other thread or timer wakes for it). Nothing here waits on a client.
pub fn start_reader(
    run: Arc<Supervised>,
    reader: Box<dyn Read + Send>,
    log: OutputLog,
    checkpoints: Checkpoints,
    disk_full_patience: Duration,
    flood_rate: u64,
) -> Result<()> {
    let (chunks, queue) = std::sync::mpsc::sync_channel::<Vec<u8>>(PARSE_QUEUE);
    // Chunks sent to the parser and not yet parsed. Only the reader adds to
    // it, so when it reads zero the parser is done with everything sent and
    // the reader may parse the next chunk itself without reordering.
    let in_flight = Arc::new(AtomicUsize::new(0));
    let checkpoints = Arc::new(Mutex::new(checkpoints));
    let parser = {
        let (run, in_flight, checkpoints) = (run.clone(), in_flight.clone(), checkpoints.clone());
        std::thread::Builder::new()
            .name("pty-parser".into())
            .spawn(move || parse_queued(&run, &queue, &in_flight, &checkpoints))
            .context("starting the PTY parser thread")?
    };
    std::thread::Builder::new()
        .name("pty-reader".into())
        .spawn(move || {
            let now = Instant::now();
            let reading = Reading {
                yielding: Yielding::new(run.leader.pid, flood_rate, now),
                last_read: now,
                run,
                log,
                checkpoints,
                chunks,
                in_flight,
                disk_full_patience,
                writing: true,
                look_due: false,
                announced_at: None,
                unannounced: false,
                busy: false,
            };
            reading.read_all(reader, parser);
        })
        .context("starting the PTY reader thread")?;
    Ok(())
}

/// The parser thread: parses the chunks the reader queues, each batch of
/// them under one lock, until the reader closes the queue; then says the
/// output ended.
fn parse_queued(
    run: &Supervised,
    queue: &Receiver<Vec<u8>>,
    in_flight: &AtomicUsize,
    checkpoints: &Mutex<Checkpoints>,
) {
    // This thread parsed last and the screen is not read since.
    let mut look_due = false;
    loop {
        let first = if look_due {
            match queue.recv_timeout(SCREEN_QUIET) {
                Ok(first) => first,
                Err(RecvTimeoutError::Timeout) => {
                    run.look_if_unread();
                    look_due = false;
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match queue.recv() {
                Ok(first) => first,
                Err(_) => break,
            }
        };
        // Whatever else is queued is parsed under the same lock: in a
        // flood the reader is ahead, and one lock per batch instead of
        // per 4 KiB read keeps the emulator busy with bytes.
        let mut batch = vec![first];
        let mut queued = batch[0].len();
        while queued < PARSE_BATCH
            && let Ok(more) = queue.try_recv()
        {
            queued += more.len();
            batch.push(more);
        }
        parse(run, &batch, queued, checkpoints);
        in_flight.fetch_sub(batch.len(), Ordering::Release);
        look_due = true;
    }
    run.eof.send_replace(true);
}

/// The reader thread and what it keeps between reads.
struct Reading {
    run: Arc<Supervised>,
    log: OutputLog,
    checkpoints: Arc<Mutex<Checkpoints>>,
    /// The parser's queue, and how many chunks in it are not parsed yet.
    chunks: SyncSender<Vec<u8>>,
    in_flight: Arc<AtomicUsize>,
    disk_full_patience: Duration,
    /// False once the log failed for good: the PTY is still drained.
    writing: bool,
    /// This thread parsed last and the screen is not read since.
    look_due: bool,
    /// When the last read was, and whether its offset is announced.
    last_read: Instant,
    announced_at: Option<Instant>,
    unannounced: bool,
    /// Output is going on, as last said (`Supervised::busy`).
    busy: bool,
    yielding: Yielding,
}

impl Reading {
    /// Reads the PTY to its end: each read stored, announced and parsed
    /// (here or by the parser); while it is quiet, what falls due then.
    fn read_all(mut self, mut reader: Box<dyn Read + Send>, parser: JoinHandle<()>) {
        let mut buf = vec![0u8; READ_CHUNK];
        let master = self.run.master_fd();
        loop {
            let busy_after = self.busy_after();
            if let Some(fd) = master
                && self.stayed_quiet(fd, busy_after)
            {
                continue;
            }
            let n = match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // EIO: every slave descriptor is closed.
                Err(_) => break,
            };
            // A right-sized copy: queued chunks hold only what was read.
            let chunk = buf[..n].to_vec();
            if !self.store(&chunk) {
                continue;
            }
            self.announce(n, busy_after);
            if !self.parse_or_queue(chunk) {
                break;
            }
        }
        self.finish(parser);
    }

    /// The pause after which output is said to have paused, if the daemon
    /// asked to hear it; output said to be going on is taken back once it
    /// no longer asks.
    fn busy_after(&mut self) -> Option<Duration> {
        let busy_after = match self.run.busy_ms.load(Ordering::Relaxed) {
            0 => None,
            ms => Some(Duration::from_millis(ms)),
        };
        if self.busy && busy_after.is_none() {
            self.busy = false;
            self.run.busy.send_replace(false);
        }
        busy_after
    }

    /// Waits for output only as long as the first thing due when output
    /// pauses: the paced offset, the pause said, the screen's look, the held
    /// time samples. When none came by then, does what is due and says so
    /// (true); false when there is output to read.
    fn stayed_quiet(&mut self, fd: std::os::fd::RawFd, busy_after: Option<Duration>) -> bool {
        let pace = Duration::from_millis(self.run.pace_ms.load(Ordering::Relaxed));
        let held = !self.log.samples.is_empty();
        let look = self.yielding.next_look();
        let due = [
            (self.unannounced, pace),
            (self.busy, busy_after.unwrap_or_default()),
            (self.look_due, SCREEN_QUIET),
            (held, SAMPLES_HELD),
            (
                look.is_some(),
                look.map_or(Duration::ZERO, |at| at.saturating_duration_since(self.last_read)),
            ),
        ]
        .into_iter()
        .filter_map(|(due, after)| due.then_some(after))
        .min();
        let Some(after) = due else {
            return false;
        };
        if readable_within(fd, after.saturating_sub(self.last_read.elapsed())) {
            return false;
        }
        let quiet = self.last_read.elapsed();
        // The pause is said with the offset it paused at.
        let paused = self.busy && busy_after.is_some_and(|after| quiet >= after);
        if paused {
            self.busy = false;
            self.run.busy.send_replace(false);
        }
        if (self.unannounced && quiet >= pace) || paused {
            self.run.committed.send_replace(self.log.offset);
            self.announced_at = Some(Instant::now());
            self.unannounced = false;
        }
        if self.look_due && quiet >= SCREEN_QUIET {
            self.run.look_if_unread();
            self.look_due = false;
        }
        if held && quiet >= SAMPLES_HELD {
            self.log.write_samples();
        }
        self.yielding.quiet(Instant::now());
        true
    }

    /// Appends a read to the log, riding out a full disk; false once the
    /// log has failed for good.
    fn store(&mut self, chunk: &[u8]) -> bool {
        if self.writing
            && let Err(e) = self.log.append(chunk)
            && let Err(e) = ride_out_full_disk(&self.run, &mut self.log, chunk, e, self.disk_full_patience)
        {
            // The run must not be lost silently: stop writing, keep
            // draining the PTY so the harness never blocks, and end
            // the run with the reason. (A run being cancelled or
            // timed out meanwhile ends for that reason.)
            self.writing = false;
            if self.run.ended_by().is_none() {
                self.run.set_log_error(match e.kind() {
                    std::io::ErrorKind::StorageFull => format!("the disk is full ({e})"),
                    _ => e.to_string(),
                });
                self.run.cancel(EndedBy::LogFailure, false);
            }
        }
        self.writing
    }

    /// Says `n` more bytes are in the log: the offset announced at the
    /// daemon's pace, and output said to be going on again after a pause.
    fn announce(&mut self, n: usize, busy_after: Option<Duration>) {
        let run = &self.run;
        run.written.store(self.log.offset, Ordering::Release);
        self.last_read = Instant::now();
        self.yielding.output(n, self.last_read);
        let pace = Duration::from_millis(run.pace_ms.load(Ordering::Relaxed));
        // The first output after a pause said is announced at once.
        let resumed = busy_after.is_some() && !self.busy;
        if resumed {
            self.busy = true;
            run.busy.send_replace(true);
        }
        if resumed
            || self
                .announced_at
                .is_none_or(|t| self.last_read.duration_since(t) >= pace)
        {
            run.committed.send_replace(self.log.offset);
            self.announced_at = Some(self.last_read);
            self.unannounced = false;
        } else {
            self.unannounced = true;
        }
    }

    /// Parses a small read here while the parser is idle, else queues it
    /// for the parser; false when the parser is gone.
    fn parse_or_queue(&mut self, chunk: Vec<u8>) -> bool {
        if chunk.len() <= PARSE_INLINE_MAX && self.in_flight.load(Ordering::Acquire) == 0 {
            parse(&self.run, std::slice::from_ref(&chunk), chunk.len(), &self.checkpoints);
            self.look_due = true;
            return true;
        }
        self.look_due = false;
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.chunks.send(chunk).is_ok()
    }

    /// At the PTY's end: the last offset announced, the samples and the log
    /// written out, and the parser let finish (it announces the end).
    fn finish(self, parser: JoinHandle<()>) {
        let Reading {
            run, mut log, chunks, ..
        } = self;
        run.committed.send_replace(log.offset);
        log.write_samples();
        let _ = log.log.sync_data();
        // Closing the queue lets the parser finish and announce the end.
        drop(chunks);
        let _ = parser.join();
    }
}
