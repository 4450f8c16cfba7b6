//! `GET /api/runs/RUN/screen`: a run's live screen over a WebSocket, and
//! the keys a focused terminal view types into it.
//!
//! However many tabs watch a run, the web view holds one screen
//! subscription of it with the daemon ([`Watched`]): a mirror of its cells
//! that each update is applied to, and what changed sent to the tabs at
//! most once a frame (`FRAME`). The daemon's next update is asked for (the
//! last acknowledged) only when the tabs were sent the last, so a run that
//! floods is read at the page's pace, never the flood's, and fifty tabs
//! cost the run what one does.
//!
//! A tab says the token first (`{"token": …}`), as on the feed. It is sent
//! the whole screen (`cells::message`), then what changes, each message
//! numbered (`version`); a tab that fell behind is sent the whole screen
//! again. It may send `{"keys": "…"}`: typed into the run as a terminal
//! would type them.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, State};
use axum::response::Response;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::{broadcast, mpsc};

use super::Web;
use crate::api::{AckParams, AttachParams, RunRef, method};
use crate::client::Client;
use crate::protocol::Frame;
use crate::protocol::screen::{self, ScreenMirror, ScreenUpdate};

/// The most often a tab is sent what changed.
const FRAME: Duration = Duration::from_millis(50);
/// Messages a tab may fall behind by before it is sent the whole screen.
const BEHIND_MAX: usize = 16;
/// How often a run no tab watches any more is let go.
const IDLE_CHECK: Duration = Duration::from_secs(2);

/// The runs some tab watches, by id.
#[derive(Default)]
pub struct Screens {
    watched: Mutex<HashMap<String, Arc<Watched>>>,
}

/// One run's screen as the web view mirrors it, and who hears of it.
struct Watched {
    shown: Mutex<Shown>,
    news: broadcast::Sender<Arc<(u64, String)>>,
    keys: mpsc::Sender<Vec<u8>>,
}

struct Shown {
    mirror: ScreenMirror,
    /// Of the last message sent to the tabs.
    version: u64,
    ended: bool,
}

impl Watched {
    /// The whole screen as it is now, and its version.
    fn whole(&self) -> (u64, String) {
        let shown = self.shown.lock();
        let message = super::cells::message(&shown.mirror, None, shown.version, shown.ended);
        (shown.version, message.to_string())
    }
}

pub async fn open(State(web): State<Arc<Web>>, Path(run): Path<String>, upgrade: WebSocketUpgrade) -> Response {
    upgrade.on_upgrade(move |socket| follow(web, run, socket))
}

async fn follow(web: Arc<Web>, run: String, mut socket: WebSocket) {
    if !super::feed::token_said(&web, &mut socket).await {
        return super::feed::close(socket, 4401, "unauthorized").await;
    }
    let id = match Client::connect(&web.paths, false).await {
        Ok(client) => match client.call::<method::RunsShow>(RunRef { run }).await {
            Ok(detail) => detail.run.id,
            Err(e) => return super::feed::close(socket, 4404, &e.message).await,
        },
        Err(e) => return super::feed::close(socket, 1011, &e.message).await,
    };
    let (watched, mut news) = watch(&web, &id);
    let (mut version, whole) = watched.whole();
    if socket.send(Message::Text(whole.into())).await.is_err() {
        return;
    }
    loop {
        tokio::select! {
            heard = news.recv() => {
                let text = match heard {
                    Ok(message) if message.0 <= version => continue,
                    Ok(message) => {
                        version = message.0;
                        message.1.clone()
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let (now, whole) = watched.whole();
                        version = now;
                        whole
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if socket.send(Message::Text(text.into())).await.is_err() {
                    return;
                }
            }
            said = socket.recv() => match said {
                Some(Ok(Message::Text(text))) => {
                    if let Some(keys) = keys_in(text.as_str()) {
                        let _ = watched.keys.send(keys).await;
                    }
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// The bytes of a `{"keys": "…"}` message.
fn keys_in(text: &str) -> Option<Vec<u8>> {
    let said: Value = serde_json::from_str(text).ok()?;
    let keys = said["keys"].as_str()?;
    (!keys.is_empty() && keys.len() <= 4096).then(|| keys.as_bytes().to_vec())
}

/// The run's watch, started if no tab watched it, and a receiver of its
/// news taken under the same lock (a watch that ends for want of tabs
/// cannot end between the two).
fn watch(web: &Arc<Web>, id: &str) -> (Arc<Watched>, broadcast::Receiver<Arc<(u64, String)>>) {
    let mut watched = web.screens.watched.lock();
    if let Some(held) = watched.get(id) {
        return (held.clone(), held.news.subscribe());
    }
    let (news, heard) = broadcast::channel(BEHIND_MAX);
    let (keys, typed) = mpsc::channel(64);
    let held = Arc::new(Watched {
        shown: Mutex::new(Shown {
            mirror: ScreenMirror::new(24, 80, 0),
            version: 0,
            ended: false,
        }),
        news,
        keys,
    });
    watched.insert(id.to_string(), held.clone());
    tokio::spawn(mirror(web.clone(), id.to_string(), held.clone(), typed));
    (held, heard)
}

/// Mirrors the run's screen for its tabs until none is left, the run's
/// screen ends, or the daemon goes away.
async fn mirror(web: Arc<Web>, id: String, watched: Arc<Watched>, mut typed: mpsc::Receiver<Vec<u8>>) {
    let subscribed = async {
        let mut client = Client::connect(&web.paths, true).await?;
        let events = client.events.take();
        let params = AttachParams::screen(id.clone(), screen::FORMAT);
        client.call::<method::RunsAttach>(params).await?;
        Ok::<_, crate::api::ApiError>((client, events))
    };
    let (client, Some(mut events)) = (match subscribed.await {
        Ok(held) => held,
        Err(_) => return end(&web, &id, &watched),
    }) else {
        return end(&web, &id, &watched);
    };
    let mut changed = Changed::default();
    let mut idle = tokio::time::interval(IDLE_CHECK);
    loop {
        let due = changed.due;
        tokio::select! {
            frame = events.recv() => match frame {
                Some(Frame::Screen { run, bytes, .. }) if run == id => {
                    if let Ok(update) = ScreenUpdate::decode(&bytes) {
                        changed.apply(&mut watched.shown.lock().mirror, update);
                    }
                }
                Some(Frame::Control(bytes)) if ends(&bytes, &id) => break,
                Some(_) => {}
                None => break,
            },
            Some(keys) = typed.recv() => {
                let _ = client.send_frame(Frame::Input { run: id.clone(), bytes: keys }).await;
            }
            _ = tokio::time::sleep_until(due.unwrap_or_else(tokio::time::Instant::now)), if due.is_some() => {
                tell(&watched, &mut changed);
                if let Some(seq) = changed.unacked.take() {
                    let ack = AckParams { run: id.clone(), offset: seq, screen: true, sub: 0 };
                    let _ = client.notify::<method::RunsAck>(ack).await;
                }
            }
            _ = idle.tick() => if unwatched(&web, &id, &watched) {
                return;
            },
        }
    }
    tell(&watched, &mut changed);
    end(&web, &id, &watched);
}

/// What changed on the mirror since the tabs were last told.
#[derive(Default)]
struct Changed {
    rows: BTreeSet<u16>,
    whole: bool,
    /// The seq of the daemon's update applied and not yet acknowledged.
    unacked: Option<u64>,
    /// When the tabs are next told.
    due: Option<tokio::time::Instant>,
}

impl Changed {
    fn apply(&mut self, mirror: &mut ScreenMirror, update: ScreenUpdate) {
        let seq = update.seq;
        self.whole |= update.full;
        self.rows.extend(update.lines.iter().map(|(row, _)| *row));
        // One of another size without being whole is refused: the next
        // whole one (after a resize) sets it right.
        let _ = mirror.apply(update);
        self.unacked = Some(seq);
        self.due.get_or_insert_with(|| tokio::time::Instant::now() + FRAME);
    }
}

/// Sends the tabs what changed, as the next version.
fn tell(watched: &Watched, changed: &mut Changed) {
    changed.due = None;
    let mut shown = watched.shown.lock();
    if !changed.whole && changed.rows.is_empty() && changed.unacked.is_none() {
        return;
    }
    shown.version += 1;
    let rows: Vec<u16> = std::mem::take(&mut changed.rows).into_iter().collect();
    let which = (!std::mem::take(&mut changed.whole)).then_some(rows.as_slice());
    let message = super::cells::message(&shown.mirror, which, shown.version, shown.ended);
    let _ = watched.news.send(Arc::new((shown.version, message.to_string())));
}

/// The run's screen ended: the tabs are told, and the watch let go.
fn end(web: &Web, id: &str, watched: &Watched) {
    let mut shown = watched.shown.lock();
    shown.ended = true;
    shown.version += 1;
    let message = super::cells::message(&shown.mirror, Some(&[]), shown.version, true);
    let _ = watched.news.send(Arc::new((shown.version, message.to_string())));
    drop(shown);
    web.screens.watched.lock().remove(id);
}

/// Lets the run go when no tab watches it (under the lock a new tab takes).
fn unwatched(web: &Web, id: &str, watched: &Watched) -> bool {
    let mut all = web.screens.watched.lock();
    let none = watched.news.receiver_count() == 0;
    if none {
        all.remove(id);
    }
    none
}

/// Whether a notification is the end of this run's screen.
fn ends(bytes: &[u8], id: &str) -> bool {
    match crate::protocol::rpc::Message::parse(bytes) {
        Ok(crate::protocol::rpc::Message::Request(note)) => {
            note.method == method::OUTPUT_END && note.params.get("run").and_then(Value::as_str) == Some(id)
        }
        _ => false,
    }
}
