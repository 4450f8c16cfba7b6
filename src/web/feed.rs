//! `GET /api/feed`: the daemon's change feed over a WebSocket, so a page
//! reads runs again when they change rather than on a timer. A browser
//! cannot give a WebSocket an `Authorization` header: the token is the
//! first message (`{"token": …}`) instead, within a few seconds, or the
//! socket is closed (4401) with nothing said. Then `{"ready": true}`, and
//! `{"changed": [ids]}` as the daemon tells of changes (an empty id: any
//! run may have changed).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::response::Response;
use serde_json::{Value, json};

use super::Web;
use crate::client::Client;
use crate::protocol::Frame;
use crate::protocol::rpc::Message as Rpc;

/// How long a new socket has to say its token.
const TOKEN_WITHIN: Duration = Duration::from_secs(5);

pub async fn open(State(web): State<Arc<Web>>, upgrade: WebSocketUpgrade) -> Response {
    upgrade.on_upgrade(move |socket| follow(web, socket))
}

async fn follow(web: Arc<Web>, mut socket: WebSocket) {
    if !token_said(&web, &mut socket).await {
        close(socket, 4401, "unauthorized").await;
        return;
    }
    // Held while the socket is: its notifications are the feed.
    let mut client = match Client::connect(&web.paths, true).await {
        Ok(client) => client,
        Err(e) => return close(socket, 1011, &e.message).await,
    };
    let Some(mut events) = client.events.take() else {
        return close(socket, 1011, "no change feed").await;
    };
    if !say(&mut socket, json!({ "ready": true })).await {
        return;
    }
    loop {
        tokio::select! {
            frame = events.recv() => match frame {
                Some(Frame::Control(bytes)) => {
                    if let Some(run) = changed(&bytes)
                        && !say(&mut socket, json!({ "changed": [run] })).await
                    {
                        return;
                    }
                }
                Some(_) => {}
                None => return close(socket, 1011, "the daemon went away").await,
            },
            heard = socket.recv() => match heard {
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// Whether the socket's first message is the token, within its time.
pub(super) async fn token_said(web: &Web, socket: &mut WebSocket) -> bool {
    let Ok(Some(Ok(Message::Text(text)))) = tokio::time::timeout(TOKEN_WITHIN, socket.recv()).await else {
        return false;
    };
    let said: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
    said["token"].as_str().is_some_and(|token| web.admits(token))
}

/// The run a `run.changed` notification names.
fn changed(bytes: &[u8]) -> Option<String> {
    match Rpc::parse(bytes) {
        Ok(Rpc::Request(note)) if note.method == crate::api::method::RUN_CHANGED => {
            note.params.get("run").and_then(Value::as_str).map(str::to_string)
        }
        _ => None,
    }
}

async fn say(socket: &mut WebSocket, what: Value) -> bool {
    socket.send(Message::Text(what.to_string().into())).await.is_ok()
}

pub(super) async fn close(mut socket: WebSocket, code: u16, why: &str) {
    let frame = CloseFrame {
        code,
        reason: crate::text::bounded(why, 120).into(),
    };
    let _ = socket.send(Message::Close(Some(frame))).await;
}
