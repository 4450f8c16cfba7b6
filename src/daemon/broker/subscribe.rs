//! Output fan-out (docs/design.md §5): a subscription replays a run's output log from
//! an offset and continues live. The log file is the buffer: each
//! subscription reads it at its own pace, so a slow client never holds up the
//! PTY reader or another client. One that falls too far behind is sent a
//! screen snapshot and skips ahead, and is told so.

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

use crate::api::method::Notice;
use crate::api::{ApiError, AttachParams, OutputEnd, OutputSize};
use crate::engine::Engine;
use crate::engine::live::LiveRun;
use crate::protocol::Frame;
use crate::protocol::rpc::Request;
use crate::protocol::run_files::SizeChange;
use crate::protocol::supervisor::Snapshot;
use crate::store::runs::RunRow;

/// Output frames carry at most this much: a quarter of the frame cap.
const CHUNK: u64 = 256 * 1024;
/// A subscription this far behind the live end jumps to a snapshot. 8 MiB is
/// several seconds of the heaviest flood a terminal can show, and replaying it
/// into a client's emulator would take longer than redrawing one screen.
pub const LAG_LIMIT: u64 = 8 * 1024 * 1024;

/// Where a client's frames go: control first, output after (docs/design.md §9: keys
/// and commands travel ahead of output).
#[derive(Clone)]
pub struct Outbox {
    pub control: mpsc::Sender<Frame>,
    pub output: mpsc::Sender<Frame>,
    /// The connection, as a viewer that may hold runs' sizes (`size.rs`).
    pub viewer: crate::engine::size::ViewerId,
    /// The runs it asked a size of: released when it closes (not every
    /// live run looked at by every connection that ends).
    pub sized: Arc<parking_lot::Mutex<std::collections::HashSet<String>>>,
    /// Turns true when the connection has closed: a call that only waits
    /// (`runs.wait`) stops waiting then, so what it held is let go.
    pub gone: tokio::sync::watch::Receiver<bool>,
    /// The pages of `runs.list` it will ask next, built ahead (`listing`).
    pub ahead: Arc<super::listing::Aheads>,
}

impl Outbox {
    /// `work`, given up when the connection closes first.
    pub async fn unless_gone<T>(
        &self,
        work: impl std::future::Future<Output = Result<T, ApiError>>,
    ) -> Result<T, ApiError> {
        let mut gone = self.gone.clone();
        tokio::select! {
            done = work => done,
            _ = gone.wait_for(|g| *g) => Err(ApiError::internal("the client went away")),
        }
    }

    pub async fn notify(&self, name: &str, params: Value) -> bool {
        self.control
            .send(Frame::control(&Request::notification(name, params)))
            .await
            .is_ok()
    }

    /// Notification `N`, on the connection's control channel.
    pub async fn tell<N: Notice>(&self, note: N) -> bool {
        let params = serde_json::to_value(note).unwrap_or(Value::Null);
        self.notify(N::NAME, params).await
    }

    /// Notification `N` about a subscription's stream, ordered after the
    /// output frames sent before it.
    pub async fn tell_in_stream<N: Notice>(&self, note: N) -> bool {
        let params = serde_json::to_value(note).unwrap_or(Value::Null);
        self.notify_in_stream(N::NAME, params).await
    }

    /// A notification about a subscription's stream, ordered after the
    /// output frames sent before it.
    pub async fn notify_in_stream(&self, name: &str, params: Value) -> bool {
        self.output
            .send(Frame::control(&Request::notification(name, params)))
            .await
            .is_ok()
    }
}

/// Streams one run to one client until the run's output ends (and the end is
/// announced) or the client goes away.
pub async fn stream(engine: Arc<Engine>, outbox: Outbox, row: RunRow, params: AttachParams) -> Result<(), ApiError> {
    let id = row.id.clone();
    let log_path = engine.paths.output_log(&id);
    let live = match engine.live(&id) {
        None if row.state.is_live() => until_adopted(&engine, &id).await,
        live => live,
    };
    // A screen is sent the supervisor's screen again after each resize of
    // the PTY (`runs.resize`): its own copy was resized at whatever offset it
    // had reached, not where the supervisor's was, and the bytes between
    // would wrap and crop differently. Resizes before the first snapshot
    // are in it.
    // A follower of the bytes is sent each size instead (`Sizes`).
    let mut resized = live
        .as_ref()
        .filter(|_| !params.lossless || params.sizes)
        .map(|l| l.resized.subscribe());
    // Those so far before the first byte; each later one as its resize is
    // announced (below).
    let mut sizes = params.sizes.then(|| Sizes::new(&engine, &id));
    if let Some(sizes) = &mut sizes {
        sizes.send_new(&outbox).await;
    }
    // Set when a wait below saw a resize (which marks it seen).
    let mut resize_seen = false;
    let mut cursor = match params.offset {
        Some(offset) => offset,
        None => send_snapshot(&engine, &outbox, &row).await?,
    };
    let mut announced_caught_up = false;
    let mut file: Option<std::fs::File> = None;
    let mut buf = vec![0u8; CHUNK as usize];
    // While this streams, the supervisor announces every offset at once.
    let _viewer = match &live {
        Some(l) => Some(l.viewer().await),
        None => None,
    };
    let mut committed = live.as_ref().map(|l| l.committed.subscribe());
    let mut ended = live.as_ref().map(|l| l.ended.subscribe());
    loop {
        if std::mem::take(&mut resize_seen) || resized.as_ref().is_some_and(|r| r.has_changed().unwrap_or(false)) {
            if let Some(r) = &mut resized {
                r.borrow_and_update();
            }
            if let Some(sizes) = &mut sizes {
                sizes.send_new(&outbox).await;
            } else if let Some(offset) = send_resized_snapshot(&engine, &outbox, &row).await? {
                cursor = offset;
            }
            continue;
        }
        let is_ended = ended.as_ref().is_none_or(|e| *e.borrow());
        let end = match (&committed, is_ended) {
            (Some(c), false) => *c.borrow(),
            _ => std::fs::metadata(&log_path).map(|m| m.len()).unwrap_or(0),
        };
        if !params.lossless && end.saturating_sub(cursor) > LAG_LIMIT {
            cursor = send_snapshot(&engine, &outbox, &row).await?;
            outbox
                .tell_in_stream(OutputEnd {
                    run: id.clone(),
                    offset: Some(cursor),
                    skipped: true,
                    ..Default::default()
                })
                .await;
            continue;
        }
        if cursor < end {
            match send_chunk(&outbox, &mut file, &log_path, &id, &mut buf, cursor, end).await? {
                None => return Ok(()),
                // The log is shorter than announced (truncated by hand?): stop here.
                Some(0) => break,
                Some(n) => cursor += n as u64,
            }
            continue;
        }
        if is_ended {
            break;
        }
        if !announced_caught_up {
            announced_caught_up = true;
            outbox
                .tell_in_stream(OutputEnd {
                    run: id.clone(),
                    offset: Some(cursor),
                    ..Default::default()
                })
                .await;
        }
        match (&mut committed, &mut ended) {
            (Some(c), Some(e)) => {
                tokio::select! {
                    r = c.changed() => if r.is_err() { e.borrow_and_update(); },
                    _ = e.changed() => {}
                    _ = changed(&mut resized) => resize_seen = true,
                }
            }
            _ => break,
        }
    }
    outbox
        .tell_in_stream(OutputEnd {
            run: id,
            offset: Some(cursor),
            last: true,
            ..Default::default()
        })
        .await;
    Ok(())
}

/// Sends the log from `cursor` on, at most to `end` and one chunk: how
/// many bytes went (0: the log is shorter than announced); none when the
/// client is gone.
async fn send_chunk(
    outbox: &Outbox,
    file: &mut Option<std::fs::File>,
    log_path: &std::path::Path,
    id: &str,
    buf: &mut [u8],
    cursor: u64,
    end: u64,
) -> Result<Option<usize>, ApiError> {
    if file.is_none() {
        *file = std::fs::File::open(log_path).ok();
    }
    let Some(f) = file.as_ref() else {
        return Err(ApiError::internal(format!("run {id} has no output log")));
    };
    let want = (end - cursor).min(CHUNK) as usize;
    let n = f.read_at(&mut buf[..want], cursor).map_err(ApiError::internal)?;
    if n == 0 {
        return Ok(Some(0));
    }
    let frame = Frame::Output {
        run: id.to_string(),
        offset: cursor,
        bytes: buf[..n].to_vec(),
    };
    Ok(outbox.output.send(frame).await.ok().map(|()| n))
}

/// The sizes a byte subscription's follower is sent (`AttachParams::sizes`):
/// the run's `sizes` record read on from where it was last read, when the
/// subscription starts and after each resize the daemon applied (the
/// supervisor records the size before it answers the resize), each entry
/// sent once, in order. Those recorded before the subscription are all
/// sent ahead of its first byte. One taken while it
/// streams is recorded at the offset the run's emulator had parsed, which
/// in a flood trails the log the chunks come from (by up to the parser's
/// queue, 4 MiB): a follower may hear it after bytes past that offset, and
/// takes it where it stands (`LineFollower::take_size`).
struct Sizes {
    path: std::path::PathBuf,
    run: String,
    read: u64,
}

impl Sizes {
    fn new(engine: &Engine, run: &str) -> Sizes {
        Sizes {
            path: engine.paths.sizes(run),
            run: run.to_string(),
            read: 0,
        }
    }

    /// Sends the sizes recorded since the last look.
    async fn send_new(&mut self, outbox: &Outbox) {
        let len = std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        let whole = len - len % SizeChange::LEN as u64;
        if whole <= self.read {
            return;
        }
        let Ok(file) = std::fs::File::open(&self.path) else {
            return;
        };
        let mut bytes = vec![0u8; (whole - self.read) as usize];
        if file.read_exact_at(&mut bytes, self.read).is_err() {
            return;
        }
        self.read = whole;
        for change in SizeChange::decode_all(&bytes) {
            let size = OutputSize {
                run: self.run.clone(),
                size: change,
            };
            outbox.tell_in_stream(size).await;
        }
    }
}

/// `runs.start` announces a run before its supervisor is adopted, so a client
/// can subscribe in between: wait for the adoption (or the run's end) rather
/// than stream the run as if it had ended, empty.
pub(in crate::daemon) async fn until_adopted(engine: &Arc<Engine>, id: &str) -> Option<Arc<LiveRun>> {
    let mut changes = engine.changes.subscribe();
    loop {
        if let Some(live) = engine.live(id) {
            return Some(live);
        }
        let key = id.to_string();
        let row = engine.store.runs().get(&key).await.ok().flatten()?;
        if !engine.held_ends.apply(row).state.is_live() {
            return None;
        }
        // Adoption and every end announce a change; a lagging receiver
        // just looks again.
        if let Err(broadcast::error::RecvError::Closed) = changes.recv().await {
            return None;
        }
    }
}

/// Resolves once a resize is announced; never without one to watch.
async fn changed(resized: &mut Option<tokio::sync::watch::Receiver<u64>>) {
    let watching = match resized {
        Some(r) => r.changed().await.is_ok(),
        None => false,
    };
    if !watching {
        std::future::pending::<()>().await;
    }
}

/// After a resize: sends the supervisor's screen, which has the new size,
/// and returns the log offset it stands for. `None` when the run has no
/// live supervisor to ask (a remote run): its screens keep their
/// own copies, as a replay of the log could not do better.
async fn send_resized_snapshot(engine: &Arc<Engine>, outbox: &Outbox, row: &RunRow) -> Result<Option<u64>, ApiError> {
    let Some(live) = engine.live(&row.id) else {
        return Ok(None);
    };
    let Ok(snapshot) = live.link.snapshot().await else {
        return Ok(None);
    };
    send_live_snapshot(outbox, row, &snapshot).await.map(Some)
}

/// Sends the run's current screen; returns the log offset it stands for.
async fn send_snapshot(engine: &Arc<Engine>, outbox: &Outbox, row: &RunRow) -> Result<u64, ApiError> {
    let snapshot = match engine.live(&row.id) {
        Some(live) => live.link.snapshot().await.ok(),
        None => None,
    };
    if let Some(s) = &snapshot {
        return send_live_snapshot(outbox, row, s).await;
    }
    let paths = engine.paths.clone();
    let (id, rows, cols) = (row.id.clone(), row.rows, row.cols);
    let (offset, rows, cols, screen) =
        tokio::task::spawn_blocking(move || crate::protocol::rebuild::final_screen(&paths, &id, rows, cols))
            .await
            .map_err(ApiError::internal)?;
    send_frame(outbox, row, offset, rows, cols, screen).await
}

/// Sends a supervisor's answer to `sup.snapshot`; returns its offset.
async fn send_live_snapshot(outbox: &Outbox, row: &RunRow, s: &Snapshot) -> Result<u64, ApiError> {
    let rows = s.rows.unwrap_or(row.rows);
    let cols = s.cols.unwrap_or(row.cols);
    send_frame(outbox, row, s.offset, rows, cols, s.screen.as_bytes().to_vec()).await
}

async fn send_frame(
    outbox: &Outbox,
    row: &RunRow,
    offset: u64,
    rows: u16,
    cols: u16,
    screen: Vec<u8>,
) -> Result<u64, ApiError> {
    let frame = Frame::Snapshot {
        run: row.id.clone(),
        offset,
        rows,
        cols,
        bytes: screen,
    };
    // Output frames queued before this snapshot are older than it; the client
    // drops anything below the snapshot's offset.
    outbox
        .output
        .send(frame)
        .await
        .map_err(|_| ApiError::internal("client gone"))?;
    Ok(offset)
}
