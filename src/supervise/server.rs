//! The run socket and the state every part of the supervisor shares.

use parking_lot::Mutex;
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;
use portable_pty::{MasterPty, PtySize};
use serde_json::Value;
use tokio::io::BufReader;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, watch};

use super::screens::Screens;
use super::{Grace, SuperviseSpec};
use crate::harness::input_line::{self, InputLine};
use crate::harness::screen::{ScreenFinding, waiting_on_with};
use crate::harness::screen_rules::ScreenRules;
use crate::protocol::exit::{EndedBy, ExitEvidence};
use crate::protocol::rpc::{Message, Request, Response};
use crate::protocol::run_files::SizeChange;
use crate::protocol::supervisor::{self as wire, BUSY_PACE_MAX_MS, Hello, Limit, PACE_MAX_MS, method};
use crate::protocol::{Frame, exchange_headers, read_frame, write_frame};
use crate::pty::Identity;
use crate::pty::signal::signal_group;
use crate::term::Terminal;

/// Prompt and answer ids remembered as typed: far more than are ever
/// queued for one run between two daemon restarts.
const TYPED_KEPT: usize = 1024;

/// The built-in screen rules and the user's files the daemon read for
/// this run (it checked them: one that does not read now is passed over).
fn screen_rules(files: &[(String, String)]) -> ScreenRules {
    ScreenRules::with_files(files).unwrap_or_else(|e| {
        tracing::warn!("{e}: the built-in screen rules only");
        ScreenRules::built_in().clone()
    })
}

pub struct ParsedScreen {
    pub term: Terminal,
    /// The log offset `term` has parsed up to (a next attempt's supervisor
    /// starts where the log ended).
    pub offset: u64,
    /// The harness family, whose words the screen is read in.
    family: String,
    /// The words it is read for: the built-in rules and the user's.
    rules: ScreenRules,
    /// When `term` last took bytes.
    pub fed_at: Instant,
    /// The screen has been read for a question since it last took bytes.
    pub looked: bool,
    /// When the screen was last read for a question.
    pub looked_at: Instant,
    /// What the screen showed when last read, blind to spinners and
    /// counters (`harness::stall::still_digest`).
    digest: u64,
}

impl ParsedScreen {
    fn new(term: Terminal, offset: u64, family: String, rules: ScreenRules) -> ParsedScreen {
        let now = Instant::now();
        ParsedScreen {
            term,
            offset,
            family,
            rules,
            fed_at: now,
            looked: false,
            looked_at: now,
            digest: 0,
        }
    }

    /// Feeds log bytes to the emulator, reading the screen for a question
    /// first if it has settled since it last changed (`SCREEN_SETTLE`), and
    /// after if it has not been read for `SCREEN_MAX_WAIT` (a flood, a fast
    /// spinner). A spinner's screen is so read at its next frame, by the
    /// thread that parses the frame anyway: no timer wakes the supervisor
    /// between frames.
    pub fn feed(&mut self, bytes: &[u8], signs: &Signs) {
        self.look_if_settled(signs);
        self.term.feed(bytes);
        self.offset += bytes.len() as u64;
        self.fed_at = Instant::now();
        self.looked = false;
        if self.looked_at.elapsed() >= SCREEN_MAX_WAIT {
            self.look(signs);
        }
    }

    /// Reads the screen as the person typing sees it, before their keys go
    /// in, unless it has not changed or was read a moment ago: a spinning
    /// screen is otherwise read once a second (`SCREEN_MAX_WAIT`), and an
    /// Esc typed the moment a turn showed must find that turn seen, or its
    /// end is never told.
    pub fn look_before_keys(&mut self, signs: &Signs) {
        if !self.looked && self.looked_at.elapsed() >= KEYS_LOOK_GAP {
            self.look(signs);
        }
    }

    /// Reads the screen for a question if it has not been since it last
    /// changed and has been still since (`SCREEN_SETTLE`).
    pub fn look_if_settled(&mut self, signs: &Signs) {
        if !self.looked && self.fed_at.elapsed() >= SCREEN_SETTLE {
            self.look(signs);
        }
    }

    /// What the harness's input line holds now (`harness::input_line`).
    pub fn input_line(&self) -> InputLine {
        let rule = self.rules.input_of(&self.family);
        input_line::read(rule, &input_line::rows_of(&self.term), self.term.cursor())
    }

    /// Whether a prompt waits for the input line to read (`[input] waits`).
    pub fn input_waits(&self) -> bool {
        self.rules.input_of(&self.family).is_some_and(|r| r.waits)
    }

    /// What the screen says the harness waits for, if anything.
    pub fn waiting_on(&self) -> Option<ScreenFinding> {
        waiting_on_with(&self.rules, &self.term.visible_lines(), &self.family)
    }

    /// Whether `lines` show a turn in progress, by the family's `[busy]`
    /// rule (none: no rule).
    fn turn_shown(&self, lines: &[String]) -> Option<bool> {
        Some(self.rules.busy_of(&self.family)?.shown(lines))
    }

    /// Reads the screen for a question, a turn in progress, a limit and a
    /// change of what it shows, and publishes what changed.
    fn look(&mut self, signs: &Signs) {
        let lines = self.term.visible_lines();
        let seen = waiting_on_with(&self.rules, &lines, &self.family);
        let turn = self.turn_shown(&lines);
        let limit = crate::harness::stall::limit_on(&self.rules, &lines, &self.family);
        let digest = crate::harness::stall::still_digest(&lines, self.rules.busy_of(&self.family));
        self.looked = true;
        self.looked_at = Instant::now();
        if digest != self.digest {
            self.digest = digest;
            signs.moved.send_replace(self.looked_at);
        }
        signs.finding.send_if_modified(|f| changed_to(f, seen));
        signs.turn.send_if_modified(|t| changed_to(t, turn));
        signs.limit.send_if_modified(|l| changed_to(l, limit));
    }
}

/// Sets `value` to `seen`; whether that changed it.
fn changed_to<T: PartialEq>(value: &mut T, seen: T) -> bool {
    let changed = *value != seen;
    if changed {
        *value = seen;
    }
    changed
}

/// Keys typed this soon after the screen was read find it read: a person
/// typing fast costs at most 20 reads a second.
const KEYS_LOOK_GAP: Duration = Duration::from_millis(50);

/// What reading the screen publishes: the question it shows (a permission
/// prompt, a login problem), and whether it shows a turn in progress.
pub struct Signs {
    pub finding: watch::Sender<Option<ScreenFinding>>,
    pub turn: watch::Sender<Option<bool>>,
    /// A limit the harness says it hit (`[[limit]]`).
    pub limit: watch::Sender<Option<Limit>>,
    /// When what the screen shows last changed, spinners and counters
    /// aside: a turn still that long is stalled.
    pub moved: watch::Sender<Instant>,
}

pub struct Supervised {
    pub run: String,
    /// Reports from a boxed run's hook socket, for the watcher (`hooks`).
    pub hooks: Arc<super::hooks::Reports>,
    pub leader: Identity,
    /// Ids of the prompts typed lately, newest last (`method::PROMPT`), and
    /// of answers, as `answer ID` (`method::ANSWER`).
    typed: Mutex<std::collections::VecDeque<String>>,
    /// When the harness was spawned (this is made right after), as
    /// `Hello::started_ms` says.
    spawned_ms: i64,
    /// When a person last typed into the run (an input frame: attach, a
    /// TUI pane): prompts wait a moment after it (`typing::held`).
    pub keyed_at: Mutex<Option<Instant>>,
    /// The emulator and how many log bytes it has parsed.
    pub screen: Mutex<ParsedScreen>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    input: std_mpsc::Sender<Vec<u8>>,
    /// Bytes in the output log so far, as announced: at once, or paced
    /// (`pace_ms`).
    pub committed: watch::Sender<u64>,
    /// While output goes on, the reader announces its offset at most this
    /// often (ms): the first output after a pause at once, the last once
    /// output has paused that long (`method::PACE`). 0 between daemon
    /// connections.
    pub pace_ms: std::sync::atomic::AtomicU64,
    /// With a pace: how long output pauses before the reader says it has
    /// (`busy` false); 0 when the daemon did not ask (`method::PACE`).
    pub busy_ms: std::sync::atomic::AtomicU64,
    /// Output is going on, as the reader last said (only with `busy_ms`).
    pub busy: watch::Sender<bool>,
    /// Bytes in the output log so far, announced or not.
    pub written: std::sync::atomic::AtomicU64,
    /// Log bytes the emulator has parsed.
    pub parsed: watch::Sender<u64>,
    /// Counts the screen's resizes (a change no parse announces).
    pub redrawn: watch::Sender<u64>,
    /// Screen subscriptions open (`screens.rs`).
    pub screen_watchers: std::sync::atomic::AtomicUsize,
    /// Connections watching the run (`method::WATCH`): the daemon's link.
    pub watchers: watch::Sender<usize>,
    /// The daemon said it stops on purpose (`method::RELEASE`): none is
    /// started in its place (`keeper.rs`) until one connects again.
    released: std::sync::atomic::AtomicBool,
    /// Daemons this supervisor started (`keeper.rs`): its children, never
    /// reported as the run's escaped descendants.
    pub started_daemons: Mutex<Vec<i32>>,
    /// What the screen says the agent waits for, if anything, and whether
    /// it shows a turn in progress.
    pub signs: Signs,
    /// The PTY reported end of file.
    pub eof: watch::Sender<bool>,
    /// The reader waits for space on a full disk (`output::ride_out_full_disk`).
    pub disk_paused: std::sync::atomic::AtomicBool,
    pub exited: watch::Sender<Option<ExitEvidence>>,
    exit_acked: watch::Sender<bool>,
    leader_gone: watch::Sender<bool>,
    ending: Mutex<Ending>,
    grace: Grace,
    /// `sizes`: the screen's size from each offset on, for replays.
    sizes: Mutex<Option<std::fs::File>>,
}

#[derive(Default)]
struct Ending {
    ended_by: Option<EndedBy>,
    last_signal: Option<String>,
    log_error: Option<String>,
    escalating: bool,
}

impl Supervised {
    pub fn new(
        spec: &SuperviseSpec,
        master: Box<dyn MasterPty + Send>,
        mut writer: Box<dyn std::io::Write + Send>,
        leader: Identity,
        sizes: Option<std::fs::File>,
        log_base: u64,
    ) -> Supervised {
        // Input goes through its own thread: a harness that stops reading
        // must never block the PTY reader (which writes query replies) or the
        // socket loop.
        let (input, rx) = std_mpsc::channel::<Vec<u8>>();
        let _ = std::thread::Builder::new().name("pty-writer".into()).spawn(move || {
            while let Ok(bytes) = rx.recv() {
                if writer.write_all(&bytes).and_then(|_| writer.flush()).is_err() {
                    break;
                }
            }
        });
        Supervised {
            run: spec.run.clone(),
            leader,
            screen: Mutex::new(ParsedScreen::new(
                Terminal::new(spec.rows, spec.cols),
                log_base,
                spec.family.clone(),
                screen_rules(&spec.screen_rules),
            )),
            master: Mutex::new(master),
            input,
            committed: watch::Sender::new(0),
            pace_ms: std::sync::atomic::AtomicU64::new(0),
            busy_ms: std::sync::atomic::AtomicU64::new(0),
            busy: watch::Sender::new(false),
            written: std::sync::atomic::AtomicU64::new(0),
            parsed: watch::Sender::new(0),
            redrawn: watch::Sender::new(0),
            screen_watchers: Default::default(),
            hooks: Default::default(),
            watchers: watch::Sender::new(0),
            released: Default::default(),
            started_daemons: Default::default(),
            signs: Signs {
                finding: watch::Sender::new(None),
                turn: watch::Sender::new(None),
                limit: watch::Sender::new(None),
                moved: watch::Sender::new(Instant::now()),
            },
            eof: watch::Sender::new(false),
            disk_paused: std::sync::atomic::AtomicBool::new(false),
            exited: watch::Sender::new(None),
            exit_acked: watch::Sender::new(false),
            typed: Mutex::new(std::collections::VecDeque::new()),
            spawned_ms: crate::clock::now_ms(),
            keyed_at: Mutex::new(None),
            leader_gone: watch::Sender::new(false),
            ending: Mutex::new(Ending::default()),
            grace: spec.grace,
            sizes: Mutex::new(sizes),
        }
    }

    /// Appends the screen's size from the emulator's offset on to `sizes`
    /// (called under the screen lock, so no byte is parsed in between).
    fn record_size(&self, screen: &ParsedScreen) {
        let (rows, cols) = screen.term.size();
        let change = SizeChange {
            offset: screen.offset,
            at_ms: crate::clock::now_ms() as u64,
            rows,
            cols,
        };
        if let Some(file) = self.sizes.lock().as_mut() {
            use std::io::Write;
            // A full disk loses the record, not the run: replays then take
            // the size before it.
            let _ = file.write_all(&change.encode());
        }
    }

    /// Records the size the run starts at.
    pub fn record_first_size(&self) {
        let screen = self.screen.lock();
        self.record_size(&screen);
    }

    pub fn released(&self) -> bool {
        self.released.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn offset(&self) -> u64 {
        *self.committed.borrow()
    }

    /// The PTY master's descriptor, for waiting on output with a timeout.
    pub fn master_fd(&self) -> Option<std::os::fd::RawFd> {
        self.master.lock().as_raw_fd()
    }

    /// Output has been quiet `SCREEN_QUIET` (the caller timed it from its
    /// last read): reads the screen for a question unless a parse already
    /// did since it last changed. Not `ParsedScreen::look_if_settled`, whose
    /// clock starts at the parse, a moment after the read.
    pub fn look_if_unread(&self) {
        let mut screen = self.screen.lock();
        if !screen.looked {
            screen.look(&self.signs);
        }
    }

    pub fn write_input(&self, bytes: Vec<u8>) {
        let _ = self.input.send(bytes);
    }

    fn ending(&self) -> parking_lot::MutexGuard<'_, Ending> {
        self.ending.lock()
    }

    pub fn ended_by(&self) -> Option<EndedBy> {
        self.ending().ended_by
    }

    pub fn last_signal_sent(&self) -> Option<String> {
        self.ending().last_signal.clone()
    }

    pub fn log_error(&self) -> Option<String> {
        self.ending().log_error.clone()
    }

    pub fn set_log_error(&self, err: String) {
        self.ending().log_error.get_or_insert(err);
    }

    pub fn leader_exited(&self) {
        self.leader_gone.send_replace(true);
    }

    /// Ends the run: SIGINT → SIGTERM → SIGKILL to its group with bounded
    /// grace, or SIGKILL at once when forced. Each signal only while the
    /// leader's identity is verified. A second cancel may upgrade to force.
    pub fn cancel(self: &Arc<Self>, why: EndedBy, force: bool) {
        {
            let mut ending = self.ending();
            ending.ended_by.get_or_insert(why);
            if ending.escalating && !force {
                return;
            }
            ending.escalating = true;
        }
        let run = self.clone();
        let steps: Vec<(Signal, u64)> = if force {
            vec![(Signal::SIGKILL, 0)]
        } else {
            vec![
                (Signal::SIGINT, run.grace.after_sigint_ms),
                (Signal::SIGTERM, run.grace.after_sigterm_ms),
                (Signal::SIGKILL, 0),
            ]
        };
        let task = async move {
            let mut gone = run.leader_gone.subscribe();
            for (signal, wait_ms) in steps {
                if *gone.borrow() {
                    return;
                }
                match signal_group(&run.leader, run.leader.pid, signal) {
                    Ok(()) => run.ending().last_signal = Some(signal.as_str().to_string()),
                    Err(e) => {
                        tracing::warn!("not signalling run {}: {e}", run.run);
                        return;
                    }
                }
                let _ = tokio::time::timeout(Duration::from_millis(wait_ms), gone.wait_for(|g| *g)).await;
            }
        };
        // The reader thread calls this from outside the runtime on a log failure.
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(task);
            }
            Err(_) => {
                let _ = std::thread::spawn(move || {
                    if let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
                        rt.block_on(task);
                    }
                });
            }
        }
    }

    /// Resizes the PTY and the screen together: the screen lock is held
    /// across the PTY's resize, so the program's redraw in answer to its
    /// SIGWINCH is parsed at the new size, and the size is recorded at the
    /// offset before it.
    pub fn resize(&self, rows: u16, cols: u16) {
        let (rows, cols) = (rows.max(1), cols.max(1));
        let mut screen = self.screen.lock();
        let master = self.master.lock();
        let _ = master.resize(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        });
        drop(master);
        if screen.term.size() != (rows, cols) {
            screen.term.resize(rows, cols);
            self.record_size(&screen);
            self.redrawn.send_modify(|n| *n += 1);
        }
    }

    pub fn snapshot(&self) -> wire::Snapshot {
        // The screen and the offset it stands for, read under one lock.
        let screen = self.screen.lock();
        let (rows, cols) = screen.term.size();
        wire::Snapshot {
            offset: screen.offset,
            rows: Some(rows),
            cols: Some(cols),
            screen: String::from_utf8_lossy(&screen.term.snapshot()).into_owned(),
        }
    }

    pub async fn wait_for_eof(&self, limit: Duration) -> bool {
        let mut eof = self.eof.subscribe();
        tokio::time::timeout(limit, eof.wait_for(|e| *e)).await.is_ok()
    }

    /// Whether a prompt (or an answer) was typed, and noting one as typed.
    /// The daemon marks a prompt delivered after typing it: one killed, or
    /// refused by a full disk, in between types it again, and only this
    /// process, which outlives daemons, can tell. The last `TYPED_KEPT` ids
    /// are kept.
    pub(super) fn was_typed(&self, id: &str) -> bool {
        let typed = self.typed.lock();
        typed.iter().any(|t| t == id)
    }

    pub(super) fn note_typed(&self, id: &str) {
        let mut typed = self.typed.lock();
        if typed.len() == TYPED_KEPT {
            typed.pop_front();
        }
        typed.push_back(id.to_string());
    }

    /// Whether the daemon said the run's end is stored, within `limit`.
    pub async fn wait_for_exit_ack(&self, limit: Duration) -> bool {
        let mut acked = self.exit_acked.subscribe();
        tokio::time::timeout(limit, acked.wait_for(|a| *a)).await.is_ok()
    }

    fn hello(&self) -> Hello {
        let (rows, cols) = self.screen.lock().term.size();
        Hello {
            run: self.run.clone(),
            supervisor: Identity::of(std::process::id() as i32),
            leader: self.leader.clone(),
            rows,
            cols,
            offset: self.offset(),
            exited: self.exited.borrow().clone(),
            screen: self.signs.finding.borrow().clone(),
            busy: true,
            busy_max_ms: Some(wire::BUSY_MAX_MS),
            started_ms: Some(self.spawned_ms),
        }
    }
}

/// Connections a run's socket serves at once: its daemon holds one, and a
/// restarted or upgraded daemon briefly a second; each may hold a 1 MiB
/// partial frame, so a peer opening many cannot grow the supervisor.
const MAX_CONNECTIONS: usize = 16;

/// A peer that connects and never says who it is gets this long, as on
/// the daemon's socket.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn serve(listener: UnixListener, run: Arc<Supervised>) {
    let open = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of descriptors: wait for one to be freed, never spin.
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if !crate::protocol::peer::is_same_user(&stream) {
            continue;
        }
        // Full: the connection is closed at once (the daemon retries).
        let Ok(permit) = open.clone().try_acquire_owned() else {
            continue;
        };
        let run = run.clone();
        tokio::spawn(async move {
            connection(stream, run).await;
            drop(permit);
        });
    }
}

async fn connection(stream: UnixStream, run: Arc<Supervised>) {
    let (r, mut w) = stream.into_split();
    let mut r = BufReader::new(r);
    match tokio::time::timeout(HEADER_TIMEOUT, exchange_headers(&mut r, &mut w)).await {
        Ok(Ok(_)) => {}
        _ => return,
    }
    let (out, mut out_rx) = mpsc::channel::<Frame>(64);
    let writer = tokio::spawn(async move {
        while let Some(frame) = out_rx.recv().await {
            if write_frame(&mut w, &frame).await.is_err() {
                break;
            }
        }
    });
    let mut watcher: Option<tokio::task::JoinHandle<()>> = None;
    let mut screens = Screens::default();
    loop {
        let frame = match read_frame(&mut r).await {
            Ok(frame) => frame,
            Err(_) => break,
        };
        match frame {
            Frame::Input { run: id, bytes } if id == run.run => {
                *run.keyed_at.lock() = Some(Instant::now());
                run.screen.lock().look_before_keys(&run.signs);
                run.write_input(bytes);
            }
            Frame::Control(bytes) => {
                let Ok(Message::Request(req)) = Message::parse(&bytes) else {
                    continue;
                };
                if req.method == method::ANSWER {
                    // May wait for the question to be drawn: off this loop.
                    let (run, out) = (run.clone(), out.clone());
                    tokio::spawn(async move {
                        let result = super::typing::answer(&run, &req).await;
                        if let Some(id) = req.id {
                            let resp = answered(id, result);
                            let _ = out.send(Frame::control(&resp)).await;
                        }
                    });
                    continue;
                }
                let result = match screens.handle(&run, &req, &out) {
                    Some(result) => result,
                    None => handle(&run, &req, &out, &mut watcher),
                };
                if let Some(id) = req.id {
                    let resp = answered(id, result);
                    if out.send(Frame::control(&resp)).await.is_err() {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    screens.close_all(&run);
    if let Some(w) = watcher {
        w.abort();
        run.watchers.send_modify(|w| *w = w.saturating_sub(1));
        // The next daemon hears every offset until it says otherwise.
        run.pace_ms.store(0, std::sync::atomic::Ordering::Relaxed);
        run.busy_ms.store(0, std::sync::atomic::Ordering::Relaxed);
    }
    writer.abort();
}

/// The response to request `id`: its answer, or why it was refused.
fn answered(id: u64, result: Result<Value, String>) -> Response {
    match result.and_then(|v| Response::answer(id, &v).map_err(|e| e.to_string())) {
        Ok(resp) => resp,
        Err(msg) => Response::err(id, "bad_request", msg),
    }
}

/// A method's answer as it goes on the wire.
fn answer(reply: impl serde::Serialize) -> Result<Value, String> {
    serde_json::to_value(reply).map_err(|e| e.to_string())
}

fn handle(
    run: &Arc<Supervised>,
    req: &Request,
    out: &mpsc::Sender<Frame>,
    watcher: &mut Option<tokio::task::JoinHandle<()>>,
) -> Result<Value, String> {
    match req.method.as_str() {
        method::HELLO => answer(run.hello()),
        method::WATCH => {
            if watcher.is_none() {
                let asked: wire::Watch = serde_json::from_value(req.params.clone()).unwrap_or_default();
                let still = asked.still_ms.map(Duration::from_millis);
                *watcher = Some(tokio::spawn(super::notes::watch_loop(run.clone(), out.clone(), still)));
                run.released.store(false, std::sync::atomic::Ordering::Relaxed);
                run.watchers.send_modify(|w| *w += 1);
            }
            Ok(Value::Null)
        }
        method::RELEASE => {
            run.released.store(true, std::sync::atomic::Ordering::Relaxed);
            Ok(Value::Null)
        }
        method::SNAPSHOT => answer(run.snapshot()),
        method::RESIZE => {
            let wire::Resize { rows, cols } = wire::params(req)?;
            if rows == 0 || cols == 0 || rows > 1000 || cols > 2000 {
                return Err(format!("size {cols}x{rows} out of range"));
            }
            run.resize(rows, cols);
            Ok(Value::Null)
        }
        method::CANCEL => {
            let wire::Cancel { force } = wire::params(req)?;
            run.cancel(EndedBy::Cancel, force);
            Ok(Value::Null)
        }
        method::PACE => {
            let wire::Pace { every_ms: ms, busy_ms } = wire::params(req)?;
            let busy_ms = busy_ms.unwrap_or(0);
            let max = if busy_ms > 0 { BUSY_PACE_MAX_MS } else { PACE_MAX_MS };
            run.busy_ms
                .store(busy_ms.min(wire::BUSY_MAX_MS), std::sync::atomic::Ordering::Relaxed);
            run.pace_ms.store(ms.min(max), std::sync::atomic::Ordering::Relaxed);
            // The watcher says now whether output is going on: the reader
            // says so only when that changes, and a daemon that asked after
            // its `sup.watch` (a restarted one) would otherwise hear nothing
            // until the next paced offset, and take a busy run for quiet.
            run.busy.send_modify(|_| {});
            // What the reader has not announced yet goes out now; never an
            // offset older than one it announced meanwhile.
            let written = run.written.load(std::sync::atomic::Ordering::Acquire);
            run.committed.send_if_modified(|c| {
                let newer = written > *c;
                *c = (*c).max(written);
                newer
            });
            answer(wire::Paced { offset: Some(written) })
        }
        method::ACK_EXIT => {
            run.exit_acked.send_replace(true);
            Ok(Value::Null)
        }
        method::PROMPT => {
            let prompt: wire::Prompt = wire::params(req)?;
            // The daemon's bound holds here too: the socket takes any
            // process of the user, not only the daemon (issue #34).
            crate::api::bounds::check("the prompt", &prompt.text, crate::api::bounds::PROMPT).map_err(|e| e.message)?;
            if prompt.id.as_deref().is_some_and(|id| run.was_typed(id)) {
                return answer(wire::Prompted {
                    again: true,
                    held: None,
                });
            }
            // Looked at and typed under the emulator's lock: what is read is
            // what the prompt lands on.
            let screen = run.screen.lock();
            if let Some(typing) = prompt.hold_typing_ms
                && let Some(held) = super::typing::held(run, &screen, Duration::from_millis(typing))
            {
                return answer(held);
            }
            if let Some(id) = &prompt.id {
                run.note_typed(id);
            }
            super::typing::type_prompt(
                run,
                &prompt.text,
                prompt.paste && screen.term.bracketed_paste(),
                super::typing::enter_delay(prompt.enter_ms),
            );
            Ok(Value::Null)
        }
        other => Err(format!("unknown method {other}")),
    }
}

/// Output pauses before a quiet moment: once parsing has been still this
/// long, the screen is read for a prompt (by the next parse, or once output
/// has been quiet for `SCREEN_QUIET`). As long as `SCREEN_QUIET`, so a
/// spinner's frames (10 Hz and faster) never count as pauses: reading the
/// whole screen before each frame was a quarter of a spinning run's
/// supervisor CPU (`cargo bench --bench spinners`); such a screen is read
/// every `SCREEN_MAX_WAIT` instead, and a question, after which output
/// stops, is read once it has been quiet `SCREEN_QUIET`, as before.
const SCREEN_SETTLE: Duration = SCREEN_QUIET;
/// A screen that never settles (a flood, a fast spinner) is still read this
/// often, by the thread parsing it: a question drawn while something else
/// on screen keeps moving is seen within a second. (Every 500 ms, the reads
/// were a tenth of a spinning run's supervisor CPU.)
const SCREEN_MAX_WAIT: Duration = Duration::from_secs(1);
/// Output quiet this long has its screen read by the thread that parsed
/// it last (`output::start_reader`), if no parse did. Longer than the frame
/// interval of the spinners agents draw (10 Hz here: `cargo bench --bench
/// spinners`), so a spinning run's screen is read by its next frame's parse,
/// not by a timer between frames: that timer was a supervisor wake-up per
/// frame (two with tokio's timer wheel, which wakes once to move a deadline
/// over 64 ms away to a finer level). A question drawn before the agent
/// falls quiet is so shown within 150 ms instead of 60.
pub const SCREEN_QUIET: Duration = Duration::from_millis(150);
