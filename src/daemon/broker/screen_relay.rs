//! Screen subscriptions (`runs.attach` with `screen`): a client is sent a
//! run's screen as cells, never its bytes. For a run whose supervisor
//! serves screens the daemon relays its updates, renumbered for the client
//! and acknowledged on its behalf, so one update is in flight end to end;
//! for a remote run, those of its host's daemon (`RunLink::Remote`).
//! A run whose supervisor or host serves none (one of an older build) and
//! an ended run get their screen from
//! an emulator here, fed from the log: the same updates, one source less
//! exact in timing only.

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use tokio::sync::watch;

use super::subscribe::Outbox;
use crate::api::ApiError;
use crate::engine::Engine;
use crate::engine::live::LiveRun;
use crate::protocol::Frame;
use crate::protocol::screen::{self, ScreenWatch};
use crate::store::runs::RunRow;
use crate::supervise::{SCREEN_FRAME as FRAME, SCROLLED_KEPT, SMALL_CHANGE_ROWS, scrolled_budget};
use crate::term::Terminal;

/// Log bytes an emulator here parses between two updates at most; a run
/// further ahead than `subscribe::LAG_LIMIT` is taken up from its newest
/// checkpoint instead.
const FEED_MAX: usize = 1 << 20;

/// Where a screen goes: the client's subscription and format, and the
/// size it shows an ended run's last screen at (`AttachParams::fit`).
pub struct To {
    pub sub: u64,
    pub format: u8,
    pub fit: Option<[u16; 2]>,
}

/// Streams the run's screen to the client until the run has ended (and
/// its last screen is sent) or the client goes away.
pub async fn stream(
    engine: Arc<Engine>,
    outbox: Outbox,
    row: RunRow,
    to: To,
    mut acked: watch::Receiver<u64>,
) -> Result<(), ApiError> {
    let To { sub, format, fit } = to;
    let mut relay = Numbering { sent: 0, sub, format };
    loop {
        let live = match engine.live(&row.id) {
            None if row.state.is_live() => super::subscribe::until_adopted(&engine, &row.id).await,
            live => live,
        };
        let Some(live) = live.filter(|l| !*l.ended.borrow()) else {
            break;
        };
        match live.link.watch_screen(None, format).await {
            Ok(sub) => relay_until_gone(&outbox, &row.id, sub, &mut acked, &mut relay).await?,
            Err(_) => emulate(&engine, &outbox, &row, Source::Live(&live), &mut acked, &mut relay).await?,
        }
        // The supervisor's link ended: the run ended, or a next attempt of
        // it (account fallback) took over. Wait for the monitor to say.
        let mut ended = live.ended.subscribe();
        let _ = ended.wait_for(|e| *e).await;
    }
    // The run's last screen, from its log.
    emulate(&engine, &outbox, &row, Source::Ended(fit), &mut acked, &mut relay).await?;
    outbox
        .tell_in_stream(crate::api::OutputEnd {
            run: row.id.clone(),
            last: true,
            screen: true,
            sub: Some(sub),
            ..Default::default()
        })
        .await;
    Ok(())
}

/// The client's numbering of updates across sources (each supervisor
/// attempt and each emulator here counts from 1).
struct Numbering {
    sent: u64,
    /// The client's id of the subscription, in each frame.
    sub: u64,
    /// The screen format the client reads (`protocol::screen`): what an
    /// emulator here encodes in, and what a supervisor is asked for.
    format: u8,
}

impl Numbering {
    /// Waits until the client has shown every update sent.
    async fn shown(&self, acked: &mut watch::Receiver<u64>) -> Result<(), ApiError> {
        let sent = self.sent;
        acked
            .wait_for(|a| *a >= sent)
            .await
            .map(|_| ())
            .map_err(|_| ApiError::internal("client gone"))
    }

    async fn send(&mut self, outbox: &Outbox, run: &str, mut bytes: Vec<u8>) -> Result<(), ApiError> {
        self.sent += 1;
        screen::set_seq(&mut bytes, self.sent);
        // With answers, ahead of byte output (a remote run's mirror
        // catching up shares the host's link with its screen).
        outbox
            .control
            .send(Frame::Screen {
                run: run.to_string(),
                sub: self.sub,
                bytes,
            })
            .await
            .map_err(|_| ApiError::internal("client gone"))
    }
}

async fn relay_until_gone(
    outbox: &Outbox,
    run: &str,
    mut sub: crate::engine::run_link::ScreenSub,
    acked: &mut watch::Receiver<u64>,
    numbering: &mut Numbering,
) -> Result<(), ApiError> {
    while let Some(bytes) = sub.next().await {
        let theirs = screen::seq_of(&bytes).unwrap_or(0);
        numbering.send(outbox, run, bytes).await?;
        numbering.shown(acked).await?;
        sub.ack(theirs);
    }
    Ok(())
}

/// What an emulator here shows: a live run's screen, followed while it
/// lasts, or an ended run's last one, rewrapped to the client's size.
enum Source<'a> {
    Live(&'a Arc<LiveRun>),
    Ended(Option<[u16; 2]>),
}

/// A screen from the log: the newest checkpoint, then the bytes after it,
/// followed live while the run lasts; just the last screen once it ended.
async fn emulate(
    engine: &Arc<Engine>,
    outbox: &Outbox,
    row: &RunRow,
    source: Source<'_>,
    acked: &mut watch::Receiver<u64>,
    numbering: &mut Numbering,
) -> Result<(), ApiError> {
    let (mut term, mut cursor) = from_checkpoint(engine, row).await?;
    let live = match source {
        Source::Live(live) => Some(live),
        Source::Ended(fit) => {
            cursor = feed_to_end(engine, row, &mut term, cursor);
            if let Some(fit) = fit {
                refit(&mut term, fit);
            }
            None
        }
    };
    let mut watch = ScreenWatch::new();
    let log_path = engine.paths.output_log(&row.id);
    let mut resized = live.map(|l| l.resized.subscribe());
    let mut committed = live.map(|l| l.committed.subscribe());
    let mut ended = live.map(|l| l.ended.subscribe());
    let mut buf = vec![0u8; FEED_MAX];
    let mut sent_at: Option<tokio::time::Instant> = None;
    loop {
        numbering.shown(acked).await?;
        if let (Some(r), Some(live)) = (&mut resized, live)
            && r.has_changed().unwrap_or(false)
        {
            r.borrow_and_update();
            let applied = live.holders.lock().applied();
            let (rows, cols) = applied.unwrap_or((row.rows, row.cols));
            term.resize(rows, cols);
        }
        let end = match &mut committed {
            Some(c) => *c.borrow_and_update(),
            None => std::fs::metadata(&log_path).map(|m| m.len()).unwrap_or(0),
        };
        if end.saturating_sub(cursor) > super::subscribe::LAG_LIMIT {
            (term, cursor) = from_checkpoint(engine, row).await?;
            watch = ScreenWatch::new();
        }
        if cursor < end
            && let Ok(file) = std::fs::File::open(&log_path)
        {
            let want = (end - cursor).min(FEED_MAX as u64) as usize;
            let n = file.read_at(&mut buf[..want], cursor).unwrap_or(0);
            term.feed(&buf[..n]);
            term.take_replies();
            cursor += n as u64;
        }
        let due = sent_at.is_none_or(|at| at.elapsed() >= FRAME);
        let update = match due {
            true => watch.next(&term, cursor),
            false => match watch.next_small(&term, cursor, SMALL_CHANGE_ROWS) {
                Ok(update) => update,
                Err(_) => {
                    // A large change within a frame of the last: in its frame.
                    if let Some(at) = sent_at {
                        tokio::time::sleep_until(at + FRAME).await;
                    }
                    continue;
                }
            },
        };
        if let Some(update) = update {
            term.refill_scrolled(scrolled_budget(term.size().0 as usize));
            sent_at = Some(tokio::time::Instant::now());
            let bytes = update.encode_as(numbering.format);
            numbering.send(outbox, &row.id, bytes).await?;
        }
        if watch.more || cursor < end {
            continue;
        }
        let (Some(c), Some(e), Some(r)) = (&mut committed, &mut ended, &mut resized) else {
            return Ok(());
        };
        if *e.borrow() {
            return Ok(());
        }
        tokio::select! {
            _ = c.changed() => {}
            _ = e.changed() => {}
            _ = r.changed() => {}
        }
    }
}

/// An ended run's last screen rewrapped to `[rows, cols]`, its blank rows
/// below the cursor given up before its first lines. Rewrapped narrower,
/// a screen pushes the rows its lines grew by off the top (as tmux does
/// when a window narrows); here it then drops its blank rows and grows
/// to pull them back, and shrinks to the size asked from the bottom.
fn refit(term: &mut Terminal, [rows, cols]: [u16; 2]) {
    let (rows, cols) = (rows.clamp(2, 1000), cols.clamp(2, 2000));
    let (old_rows, old_cols) = term.size();
    term.resize(old_rows, cols);
    let (cursor_row, _) = term.cursor();
    term.resize((cursor_row + 1).max(2), cols);
    let grown = u32::from(old_rows) * u32::from(old_cols.div_ceil(cols)) + u32::from(rows);
    term.resize(grown.min(1000) as u16, cols);
    term.resize(rows, cols);
}

/// Feeds `term` the log of an ended run from `cursor` to its end; the
/// offset reached.
fn feed_to_end(engine: &Engine, row: &RunRow, term: &mut Terminal, mut cursor: u64) -> u64 {
    let Ok(file) = std::fs::File::open(engine.paths.output_log(&row.id)) else {
        return cursor;
    };
    let mut buf = vec![0u8; FEED_MAX];
    while let Ok(n @ 1..) = file.read_at(&mut buf, cursor) {
        term.feed(&buf[..n]);
        term.take_replies();
        cursor += n as u64;
    }
    cursor
}

/// An emulator at the run's newest checkpoint (or its start) and the log
/// offset it stands for; with no checkpoint, the log replayed from there
/// is the caller's to feed.
async fn from_checkpoint(engine: &Arc<Engine>, row: &RunRow) -> Result<(Terminal, u64), ApiError> {
    let paths = engine.paths.clone();
    let (id, rows, cols) = (row.id.clone(), row.rows, row.cols);
    let (offset, rows, cols, snapshot) =
        tokio::task::spawn_blocking(move || crate::protocol::rebuild::final_screen(&paths, &id, rows, cols))
            .await
            .map_err(ApiError::internal)?;
    let mut term = Terminal::new(rows, cols);
    term.feed(&snapshot);
    term.take_replies();
    term.keep_scrolled(SCROLLED_KEPT);
    Ok((term, offset))
}
