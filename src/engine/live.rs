//! The daemon's connection to one run's supervisor, and what the daemon
//! keeps about a live run.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::BufReader;
use tokio::net::UnixStream;
use tokio::sync::{Notify, mpsc, oneshot, watch};

use super::Engine;
use super::run_link::RunLink;
use crate::api::{ApiError, ErrorCode};
use crate::harness::screen::ScreenFinding;
use crate::harness::status::{Evidence, HookSeen, StallSeen};
use crate::protocol::rpc::{Message, Request, Response};
use crate::protocol::supervisor::{self as wire, Note, ScreenSigns, calls};
use crate::protocol::{Frame, exchange_headers, read_frame, write_frame};

/// What the daemon holds for a run that has not ended.
pub struct LiveRun {
    pub id: String,
    /// Bytes in the run's output log, as the supervisor last reported.
    pub committed: watch::Sender<u64>,
    pub ended: watch::Sender<bool>,
    pub last_output: Mutex<Option<Instant>>,
    /// When the stretch of output that `last_output` ends began.
    output_since: Mutex<Option<Instant>>,
    /// How the daemon drives it: its supervisor, or the host it runs on.
    pub link: RunLink,
    /// Woken when a prompt is queued or output arrives.
    pub wake: Notify,
    /// Held while a prompt is being delivered, so one is never typed twice.
    pub delivery: tokio::sync::Mutex<()>,
    /// What the run's screen says it waits for (a permission prompt …).
    pub screen: Mutex<Option<ScreenFinding>>,
    /// When `screen` last changed: a change after a hook outranks it.
    pub screen_at: Mutex<Option<Instant>>,
    /// The newest status a harness hook reported (`hooks.report`).
    pub hook: Mutex<Option<HookSeen>>,
    /// `engine.quiet_ms` as the run's monitor or status loop last read it
    /// (0 until then): output within this of the previous output cannot
    /// change the status, so it does not wake the loop (`queue::spawn`).
    pub quiet_ms: AtomicU64,
    /// The supervisor says when output pauses (its `hello` says `busy`),
    /// after at most this pause (`busy_max_ms`).
    pub says_busy: AtomicBool,
    pub busy_max_ms: AtomicU64,
    /// The run's own quiet window, for a run at work in a slow rhythm.
    pub rhythm: super::rhythm::Rhythm,
    /// It said output is going on, and will say when it has paused for
    /// `busy_ms` (`sup.pace`): until then the run's output counts as new.
    busy: AtomicBool,
    busy_ms: AtomicU64,
    /// Subscriptions streaming the run's output now (`viewer`).
    viewers: Mutex<usize>,
    /// Counts the resizes of the run's PTY (`runs.resize`): a byte
    /// subscription of a screen is sent a fresh snapshot (`subscribe.rs`),
    /// an emulator here takes the new size (`screens.rs`).
    pub resized: watch::Sender<u64>,
    /// The viewers holding a size for the run, the latest last (`size.rs`).
    pub holders: Mutex<super::size::Holders>,
    /// When the activity status last changed (ms since the epoch; 0: not
    /// yet judged by this daemon).
    pub status_since_ms: std::sync::atomic::AtomicI64,
    /// The next prompt the supervisor would not type yet, and why: the
    /// user's draft, or their typing (`queue::deliver_next`).
    pub held: Mutex<Option<HeldPrompt>>,
    /// When a person last typed into the run (an input frame passed on):
    /// output just after is their keys' echo (`harness::status`).
    pub keyed_at: Mutex<Option<Instant>>,
    /// Whether the screen shows a turn in progress (a family with a
    /// `[busy]` rule), and since when it has said so.
    pub turn_shown: Mutex<Option<(bool, Instant)>>,
    /// What tells a stalled turn: a limit on screen, a still screen, the
    /// transcript's last growth.
    pub stall: Mutex<StallSeen>,
    /// A cancel was asked of it: no queued prompt is typed in any more,
    /// however idle it looks as it stops.
    pub cancelling: AtomicBool,
}

/// A prompt the run's supervisor held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldPrompt {
    pub prompt_id: String,
    pub why: String,
    /// When to try again.
    pub retry_at: Instant,
    /// When the supervisor last held it (ms since the epoch).
    pub checked_ms: i64,
}

/// The longest pace asked of a run's supervisor while nobody watches its
/// output: its offset then serves the run's status and the stored
/// `output_bytes`, for which half a second late is on time. A run spinning
/// at 10 Hz so sends 2 offsets a second instead of 10, each a wake-up of its
/// supervisor and of the daemon (`cargo bench --bench spinners`).
const UNWATCHED_PACE_MAX_MS: u64 = 500;
/// The pace while nobody watches, from a supervisor that says when output
/// pauses: the offsets then only keep `output_bytes` fresh, and a run
/// spinning at 10 Hz sends one every 10 s (the longest such a supervisor
/// takes, `BUSY_PACE_MAX_MS`): with thousands of runs, each offset is a
/// wake-up of the daemon.
const BUSY_PACE_MS: u64 = crate::protocol::supervisor::BUSY_PACE_MAX_MS;
/// How long before the end of a run's quiet window its supervisor says
/// output paused (at most half the window).
const BUSY_MARGIN_MS: u64 = 250;

/// A subscription streaming a run's output; while one lives, the run's
/// supervisor announces every offset at once.
pub struct Viewer(Arc<LiveRun>);

impl Drop for Viewer {
    fn drop(&mut self) {
        let mut viewers = self.0.viewers.lock();
        *viewers = viewers.saturating_sub(1);
        if *viewers == 0 {
            self.0.pace_unwatched();
        }
    }
}

impl LiveRun {
    pub fn new(id: String, link: RunLink, offset: u64) -> LiveRun {
        LiveRun {
            id,
            committed: watch::Sender::new(offset),
            ended: watch::Sender::new(false),
            last_output: Mutex::new(None),
            output_since: Mutex::new(None),
            link,
            wake: Notify::new(),
            delivery: tokio::sync::Mutex::new(()),
            screen: Mutex::new(None),
            screen_at: Mutex::new(None),
            hook: Mutex::new(None),
            quiet_ms: AtomicU64::new(0),
            says_busy: AtomicBool::new(false),
            busy_max_ms: AtomicU64::new(crate::protocol::supervisor::PACE_MAX_MS),
            rhythm: Default::default(),
            busy: AtomicBool::new(false),
            busy_ms: AtomicU64::new(0),
            viewers: Mutex::new(0),
            resized: watch::Sender::new(0),
            holders: Default::default(),
            status_since_ms: Default::default(),
            held: Mutex::new(None),
            keyed_at: Mutex::new(None),
            turn_shown: Mutex::new(None),
            stall: Mutex::default(),
            cancelling: AtomicBool::new(false),
        }
    }

    /// Counts a subscription to the run's output until the `Viewer` drops,
    /// and returns once the run's offset includes everything its log held
    /// when the subscription began (unannounced while paced): `agents logs`
    /// must show the last line.
    pub async fn viewer(self: &Arc<Self>) -> Viewer {
        *self.viewers.lock() += 1;
        let viewer = Viewer(self.clone());
        // A remote run, or a supervisor too old to pace, announced
        // everything already.
        if let Some(written) = self.link.unpaced().await {
            let mut committed = self.committed.subscribe();
            let mut ended = self.ended.subscribe();
            tokio::select! {
                _ = committed.wait_for(|c| *c >= written) => {}
                _ = ended.wait_for(|e| *e) => {}
            }
        }
        viewer
    }

    /// Paces the supervisor while nobody watches. One that says when output
    /// pauses is asked to, once it has for the run's quiet window less a
    /// margin (so a run at work in a rhythm slower than its window costs no
    /// message a beat), and otherwise only for an offset every
    /// `BUSY_PACE_MS`. An older one gets half of
    /// `engine.quiet_ms` at most (`UNWATCHED_PACE_MAX_MS`): any pace under
    /// the quiet window keeps a busy run `working`, since an offset held back
    /// goes out at most a pace after the one before, so two announcements
    /// are never further apart than the outputs were or than the pace; the
    /// last output is heard at most a pace late.
    fn pace_unwatched(&self) {
        let quiet = self.quiet_ms.load(Ordering::Relaxed);
        if self.says_busy.load(Ordering::Relaxed) {
            // Said a margin before the window ends, so the word is here
            // by then: a prompt waiting for quiet looks once the window
            // has passed.
            let busy_ms = quiet - (quiet / 2).min(BUSY_MARGIN_MS);
            let busy_ms = busy_ms.clamp(1, self.busy_max_ms.load(Ordering::Relaxed));
            self.busy_ms.store(busy_ms, Ordering::Relaxed);
            self.link.pace(BUSY_PACE_MS, Some(busy_ms));
        } else {
            self.link.pace((quiet / 2).min(UNWATCHED_PACE_MAX_MS), None);
        }
    }

    /// Keys, a prompt or an answer went in: the run is judged by the
    /// configured quiet window again (`rhythm.rs`), its supervisor paced so.
    pub fn input_went_in(&self) {
        let was = u64::from(self.rhythm.input());
        if was > 1 {
            let quiet = self.quiet_ms.load(Ordering::Relaxed) / was;
            self.quiet_ms.store(quiet, Ordering::Relaxed);
            self.pace_if_unwatched();
        }
    }

    /// Paces the supervisor's offsets if nobody watches the run yet.
    pub(super) fn pace_if_unwatched(&self) {
        let viewers = self.viewers.lock();
        if *viewers == 0 {
            self.pace_unwatched();
        }
    }

    /// What the supervisor said with an offset about the output going on:
    /// `busy`, or nothing (not asked, as while a subscription watches, or a
    /// supervisor too old to say).
    fn said_busy(&self, busy: Option<bool>) {
        let was = self.busy.swap(busy == Some(true), Ordering::Relaxed);
        let mut last = self.last_output.lock();
        match busy {
            // Output resumed after a pause it said: a stretch begins.
            Some(true) if !was => {
                *self.output_since.lock() = Some(Instant::now());
                drop(last);
                self.wake.notify_waiters();
            }
            // It paused `busy_ms` ago: the quiet window runs from then.
            Some(false) if was => {
                let ago = Duration::from_millis(self.busy_ms.load(Ordering::Relaxed));
                *last = Instant::now().checked_sub(ago).or(*last);
                drop(last);
                self.wake.notify_waiters();
            }
            // No longer said: it was going on until now, and the status
            // loop, which had no clock while it was said, looks again.
            None if was => {
                *last = Some(Instant::now());
                drop(last);
                self.wake.notify_waiters();
            }
            _ => {}
        }
    }

    /// The supervisor said output is going on and has not said it paused.
    pub fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Relaxed)
    }

    /// Output arrived now. Wakes the status loop only when the run had been
    /// quiet: output younger than `quiet` already counts as working, and the
    /// loop's timer finds the newer output when it looks again. A spinner's
    /// every frame used to wake it (`cargo bench --bench spinners`).
    pub fn output_seen(&self) {
        let now = Instant::now();
        let quiet = Duration::from_millis(self.quiet_ms.load(Ordering::Relaxed));
        let previous = self.last_output.lock().replace(now);
        if previous.is_none_or(|t| now.saturating_duration_since(t) >= quiet) {
            // A stretch of output begins, unless a busy supervisor, which
            // announces offsets seconds apart, said it went on in between.
            if !self.is_busy() {
                *self.output_since.lock() = Some(now);
            }
            self.wake.notify_waiters();
        }
    }

    /// Everything known about the run's activity, for status fusion.
    pub fn evidence(&self) -> Evidence {
        let output_going = self.is_busy();
        Evidence {
            output_going,
            hook: self.hook.lock().clone(),
            screen: self.screen.lock().clone(),
            screen_at: *self.screen_at.lock(),
            last_output: match output_going {
                true => Some(Instant::now()),
                false => *self.last_output.lock(),
            },
            output_since: *self.output_since.lock(),
            keyed_at: *self.keyed_at.lock(),
            turn_shown: *self.turn_shown.lock(),
            stall: self.stall.lock().clone(),
        }
    }

    /// What the supervisor says the screen shows now (`Note::Screen`);
    /// `still_ms` is how long it was asked to be still before it says so.
    fn screen_signs(&self, signs: ScreenSigns, still_ms: u64) {
        let now = Instant::now();
        let mut screen = self.screen.lock();
        if *screen != signs.finding {
            *screen = signs.finding;
            *self.screen_at.lock() = Some(now);
        }
        drop(screen);
        let mut shown = self.turn_shown.lock();
        if shown.map(|(t, _)| t) != signs.turn {
            *shown = signs.turn.map(|t| (t, now));
        }
        drop(shown);
        let mut stall = self.stall.lock();
        stall.limit = signs.limit;
        stall.still_since = match signs.still {
            Some(true) => stall
                .still_since
                .or_else(|| now.checked_sub(Duration::from_millis(still_ms))),
            _ => None,
        };
    }

    /// Quiet means no output for the run's window (the configured one, or
    /// longer for a run at work in a slow rhythm: `rhythm.rs`): the weakest
    /// evidence of status fusion (`harness::status`), and the condition for
    /// typing a prompt. How long until then; none once it is.
    pub fn quiet_for(&self, configured: Duration) -> Option<Duration> {
        let quiet = self.rhythm.quiet(configured);
        if self.is_busy() {
            return Some(quiet);
        }
        let last = *self.last_output.lock();
        match last {
            None => None,
            Some(t) => {
                let since = t.elapsed();
                (since < quiet).then(|| quiet - since)
            }
        }
    }
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Response>>>>;

/// A framed connection to a supervisor's run socket.
#[derive(Clone)]
pub struct Link {
    frames: mpsc::Sender<Frame>,
    pending: Pending,
    next_id: Arc<AtomicU64>,
    /// Where each screen subscription's updates go, by its id.
    screens: ScreenRoutes,
}

type ScreenRoutes = Arc<Mutex<HashMap<u64, mpsc::Sender<Vec<u8>>>>>;

/// A screen subscription on a supervisor (`supervise::screens`): its
/// encoded updates, one in flight until acknowledged. Closed on drop.
pub struct ScreenSub {
    link: Link,
    sub: u64,
    pub updates: mpsc::Receiver<Vec<u8>>,
}

impl ScreenSub {
    /// The client has shown update `seq` (the supervisor's numbering).
    pub fn ack(&self, seq: u64) {
        self.link
            .tell::<calls::ScreenAck>(wire::ScreenAck { sub: self.sub, seq });
    }
}

impl Drop for ScreenSub {
    fn drop(&mut self) {
        self.link.screens.lock().remove(&self.sub);
        self.link
            .tell::<calls::ScreenClose>(wire::ScreenClose { sub: self.sub });
    }
}

/// How long a supervisor has to answer one request.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

impl Link {
    pub async fn connect(socket: &Path) -> std::io::Result<(Link, mpsc::Receiver<Note>)> {
        let stream = UnixStream::connect(socket).await?;
        // A socket another user's process holds is no supervisor of ours.
        if !crate::protocol::peer::is_same_user(&stream) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("{} is held by another user's process", socket.display()),
            ));
        }
        let (r, w) = stream.into_split();
        Link::over(r, w).await
    }

    /// A link over any stream that speaks the supervisor protocol.
    pub async fn over<R, W>(r: R, mut w: W) -> std::io::Result<(Link, mpsc::Receiver<Note>)>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let mut r = BufReader::new(r);
        exchange_headers(&mut r, &mut w).await.map_err(std::io::Error::other)?;
        let (frames, mut frames_rx) = mpsc::channel::<Frame>(256);
        tokio::spawn(async move {
            while let Some(frame) = frames_rx.recv().await {
                if write_frame(&mut w, &frame).await.is_err() {
                    break;
                }
            }
        });
        let pending: Pending = Arc::default();
        let screens: ScreenRoutes = Arc::default();
        let (notes, notes_rx) = mpsc::channel(64);
        let reader_pending = pending.clone();
        let reader_screens = screens.clone();
        tokio::spawn(async move {
            while let Ok(frame) = read_frame(&mut r).await {
                let bytes = match frame {
                    Frame::Control(bytes) => bytes,
                    Frame::Screen { sub, bytes, .. } => {
                        let route = reader_screens.lock().get(&sub).cloned();
                        // One update is in flight per subscription, so a
                        // full route is a misbehaving peer: drop, never wait.
                        if let Some(route) = route {
                            let _ = route.try_send(bytes);
                        }
                        continue;
                    }
                    _ => continue,
                };
                match Message::parse(&bytes) {
                    Ok(Message::Response(resp)) => {
                        let waiter = reader_pending.lock().remove(&resp.id);
                        if let Some(waiter) = waiter {
                            let _ = waiter.send(resp);
                        }
                    }
                    Ok(Message::Request(note)) => {
                        if notes.send(Note::from_request(&note)).await.is_err() {
                            break;
                        }
                    }
                    Err(_) => {}
                }
            }
            // Dropping `notes` tells the monitor the link is gone, and
            // dropping the routes ends each screen subscription's stream.
            reader_pending.lock().clear();
            reader_screens.lock().clear();
        });
        Ok((
            Link {
                frames,
                pending,
                next_id: Arc::new(AtomicU64::new(1)),
                screens,
            },
            notes_rx,
        ))
    }

    /// Method `M` of the run socket, and the supervisor's answer. A
    /// supervisor of another build may answer in another shape: that is
    /// `bad_request` as its refusals are.
    pub async fn ask<M: wire::Method>(&self, params: M::Params) -> Result<M::Reply, ApiError> {
        let answer = self.call(M::NAME, to_params(&params)).await?;
        serde_json::from_value(answer)
            .map_err(|e| ApiError::bad_request(format!("the supervisor's answer to {}: {e}", M::NAME)))
    }

    /// Method `M` as a notification, sent in order under the caller's
    /// lock; none is answered.
    pub fn tell<M: wire::Method>(&self, params: M::Params) {
        let note = Request::notification(M::NAME, to_params(&params));
        let _ = self.frames.try_send(Frame::control(&note));
    }

    async fn call(&self, method: &str, params: Value) -> Result<Value, ApiError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id, tx);
        let unreachable = || ApiError::new(ErrorCode::NotRunning, "the run's supervisor is not reachable");
        self.frames
            .send(Frame::control(&Request::new(id, method, params)))
            .await
            .map_err(|_| unreachable())?;
        let resp = tokio::time::timeout(CALL_TIMEOUT, rx)
            .await
            .map_err(|_| ApiError::new(ErrorCode::NotRunning, "the run's supervisor did not answer in time"))?
            .map_err(|_| unreachable())?;
        match resp.error {
            Some(err) => Err(ApiError::bad_request(err.message)),
            None => resp.result_as().map_err(ApiError::internal),
        }
    }

    /// Opens a screen subscription: the supervisor's screen, then what
    /// changes. An error from a supervisor that serves none (an older
    /// build).
    pub async fn watch_screen(&self, frame_ms: Option<u64>, format: u8) -> Result<ScreenSub, ApiError> {
        let sub = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, updates) = mpsc::channel(4);
        self.screens.lock().insert(sub, tx);
        let screen_sub = ScreenSub {
            link: self.clone(),
            sub,
            updates,
        };
        let watch = wire::ScreenWatch {
            sub,
            frame_ms,
            format: Some(format),
        };
        self.ask::<calls::ScreenWatch>(watch).await?;
        Ok(screen_sub)
    }

    /// Types prompt `id` and Enter (`sup.prompt`), never twice; with
    /// `paste`, the supervisor pastes it if the program asked for
    /// bracketed paste; with `hold_typing_ms`, it holds it instead while
    /// the user has a draft or has just typed.
    pub async fn prompt(&self, run: &str, id: &str, text: &str, how: &PromptHow) -> Result<Typed, ApiError> {
        let params = wire::Prompt {
            id: Some(id.to_string()),
            text: text.to_string(),
            paste: how.paste,
            enter_ms: how.enter_ms,
            hold_typing_ms: how.hold_typing_ms,
        };
        match self.ask::<calls::Prompt>(params).await {
            Ok(Some(wire::Prompted { again: true, .. })) => Ok(Typed::Before),
            Ok(Some(wire::Prompted { held: Some(held), .. })) => Ok(Typed::Held(held)),
            Ok(_) => Ok(Typed::Now),
            // A supervisor started by an older `agents` (re-adopted after an
            // upgrade) only takes raw input: the text, then Enter.
            Err(e) if e.message.starts_with("unknown method") => {
                let mut bytes = text.as_bytes().to_vec();
                bytes.push(b'\r');
                self.input(run, bytes).await.map(|()| Typed::Now)
            }
            Err(e) => Err(e),
        }
    }

    /// Asks the supervisor to announce offsets at most every `every_ms`
    /// while output goes on, and with `busy_ms` to say when output pauses
    /// (`sup.pace`), as a notification sent in order under the caller's
    /// lock. An older supervisor ignores it, and
    /// announces every offset.
    pub fn pace(&self, every_ms: u64, busy_ms: Option<u64>) {
        self.tell::<calls::Pace>(wire::Pace { every_ms, busy_ms });
    }

    pub async fn input(&self, run: &str, bytes: Vec<u8>) -> Result<(), ApiError> {
        self.frames
            .send(Frame::Input {
                run: run.to_string(),
                bytes,
            })
            .await
            .map_err(|_| ApiError::new(ErrorCode::NotRunning, "the run's supervisor is not reachable"))
    }
}

/// How a prompt is typed into a run (`Link::prompt`).
#[derive(Debug, Clone, Copy, Default)]
pub struct PromptHow {
    /// As one bracketed paste, if the program asked for it.
    pub paste: bool,
    /// Enter held back this long after the text.
    pub enter_ms: u64,
    /// Held while the input line has a draft or a person typed within
    /// this; none types it as things stand (delivered on purpose).
    pub hold_typing_ms: Option<u64>,
}

/// What became of a prompt sent to a run's supervisor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    Now,
    /// Typed before, by a daemon that could not record it.
    Before,
    Held(wire::Held),
}

/// How long the stored `output_bytes` of a live run may trail its log.
const PERSIST_OFFSET_EVERY: Duration = Duration::from_secs(1);

/// Live runs' offsets not yet stored. All runs that had output in the last
/// `PERSIST_OFFSET_EVERY` are written in one transaction, once: with 50
/// spinning runs a write per run each second was 50 store jobs a second.
#[derive(Default)]
pub struct OutputBytes {
    pending: Arc<Mutex<HashMap<String, u64>>>,
}

impl OutputBytes {
    /// Notes a run's offset; the first note since the last write schedules
    /// the next one.
    pub(super) fn note(&self, engine: &Arc<Engine>, id: &str, offset: u64) {
        let first = {
            let mut pending = self.pending.lock();
            let first = pending.is_empty();
            match pending.get_mut(id) {
                Some(o) => *o = offset,
                None => {
                    pending.insert(id.to_string(), offset);
                }
            }
            first
        };
        if !first {
            return;
        }
        let (store, pending) = (engine.store.clone(), self.pending.clone());
        tokio::spawn(async move {
            tokio::time::sleep(PERSIST_OFFSET_EVERY).await;
            // Taken on the store's thread, in order with its other jobs: an
            // offset `forget` removed never lands after the run's end.
            let _ = store.runs().store_output_bytes(pending).await;
        });
    }

    /// The run ended: its final length is stored with its end.
    fn forget(&self, id: &str) {
        self.pending.lock().remove(id);
    }
}

/// How long a run's screen must be still before its supervisor says so
/// (`sup.watch`'s `still_ms`); none when stalls are not told.
pub fn still_ms(engine: &crate::config::Engine) -> u64 {
    engine.stalled_after_secs.saturating_mul(1000)
}

/// Follows one live run until it ends: offsets, activity, and the exit.
pub async fn monitor(engine: Arc<Engine>, live: Arc<LiveRun>, mut notes: mpsc::Receiver<Note>) {
    live.quiet_ms.store(engine.config().engine.quiet_ms, Ordering::Relaxed);
    let still_ms = still_ms(&engine.config().engine);
    live.pace_if_unwatched();
    loop {
        let note = notes.recv().await;
        if matches!(note, Some(Note::Exited(_)) | None) {
            engine.output_bytes.forget(&live.id);
        }
        match note {
            Some(Note::Offset { offset, busy }) => {
                let previous = live.committed.send_replace(offset);
                if offset > previous {
                    live.output_seen();
                    engine.output_bytes.note(&engine, &live.id, offset);
                }
                live.said_busy(busy);
            }
            Some(Note::Screen(signs)) => {
                live.screen_signs(signs, still_ms);
                live.wake.notify_waiters();
            }
            Some(Note::Hook(report)) => {
                let (engine, run) = (engine.clone(), live.id.clone());
                tokio::spawn(async move { super::hooks::report_of_run(&engine, &run, *report).await });
            }
            Some(Note::Unknown(method)) => engine.unknown.seen(&format!("supervisor: {method}")),
            Some(Note::Exited(evidence)) => {
                live.committed.send_replace(evidence.output_bytes);
                // An account problem may hand the run to its next profile.
                if !super::fallback::on_exit(&engine, &live, &evidence).await {
                    // The supervisor lets go of its evidence once told the
                    // end is stored, and not before.
                    match super::adopt::record_exit(&engine, &live.id, &evidence).await {
                        super::adopt::Recorded::Now => live.link.ack_exit().await,
                        super::adopt::Recorded::Later(stored) => {
                            let link = live.link.clone();
                            tokio::spawn(async move {
                                if stored.await.is_ok() {
                                    link.ack_exit().await;
                                }
                            });
                        }
                    }
                }
                break;
            }
            None => {
                // The link closed without an exit: the supervisor died.
                super::adopt::supervisor_gone(&engine, &live.id).await;
                break;
            }
        }
    }
    live.ended.send_replace(true);
    live.wake.notify_waiters();
    {
        // A next attempt of the run (account fallback) may hold the id now.
        let mut live_runs = engine.runs.lock();
        if live_runs.get(&live.id).is_some_and(|l| Arc::ptr_eq(l, &live)) {
            live_runs.remove(&live.id);
        }
    }
    engine.changed(&live.id);
}

/// A request's parameters as JSON (a struct of plain fields: never fails).
fn to_params(params: &impl serde::Serialize) -> Value {
    serde_json::to_value(params).unwrap_or(Value::Null)
}
