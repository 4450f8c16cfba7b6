//! `agents web` (issue #36): the web view, one more client of the daemon's
//! tool table, over HTTP. It serves the page (embedded: it works with no
//! network) and `/api/…`, each call one method of the tool table asked of
//! the daemon, its reply or its typed error as JSON.
//!
//! Every request must name the served host in `Host` (and, when it says
//! one, in `Origin`): a page of another site, or a name rebound to this
//! address, gets 403. Every `/api/` call carries the token printed with the
//! URL (`Authorization: Bearer TOKEN`): without it, 401 and nothing said of
//! any run. The token is made fresh for each `agents web` and put in the
//! URL's fragment, which a browser never sends to a server or a proxy.

mod actions;
mod cells;
mod feed;
mod guard;
mod reads;
mod screen;

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::api::{ApiError, ErrorCode};
use crate::paths::Paths;

/// Where the web view listens unless told otherwise: this machine only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";

/// What every request is checked against, and how the daemon is reached.
pub struct Web {
    paths: Paths,
    /// `host:port` as the URL names it; also `localhost:port` on loopback.
    authorities: Vec<String>,
    token: String,
    /// The runs whose screens some tab watches.
    screens: screen::Screens,
}

/// Serves the web view until interrupted; the URL to open (its token in
/// the fragment) is the first line on stdout, or `{url, token}` as JSON.
pub async fn serve(paths: Paths, listen: Option<String>, json: bool) -> Result<i32> {
    let asked = listen.as_deref().unwrap_or(DEFAULT_LISTEN);
    let listener = tokio::net::TcpListener::bind(asked)
        .await
        .with_context(|| format!("cannot listen on {asked}"))?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        eprintln!(
            "agents: warning: the web view listens on {local}, beyond this machine, without TLS: \
             its traffic, the token included, is readable on the way; reach it through an SSH tunnel \
             (ssh -L 7878:127.0.0.1:7878 HOST) or a reverse proxy with TLS instead"
        );
    }
    let token = fresh_token()?;
    let mut authorities = vec![local.to_string()];
    if local.ip().is_loopback() {
        authorities.push(format!("localhost:{}", local.port()));
    }
    let url = format!("http://{local}/#token={token}");
    let first = match json {
        true => json!({ "url": url, "token": token }).to_string(),
        false => url,
    };
    // The one line a script waits for, out at once.
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{first}").and_then(|()| stdout.flush())?;
    drop(stdout);
    let web = Arc::new(Web {
        paths,
        authorities,
        token,
        screens: screen::Screens::default(),
    });
    let app = axum::Router::new()
        .route("/", get(page))
        .route("/app.js", get(script))
        .route("/screen.js", get(screen_script))
        .route("/tabs.js", get(tabs_script))
        .route("/app.css", get(style))
        .route("/api/feed", get(feed::open))
        .route("/api/runs", get(reads::runs))
        .route("/api/runs/{run}", get(reads::run))
        .route("/api/runs/{run}/lines", get(reads::lines))
        .route("/api/runs/{run}/transcript", get(reads::transcript))
        .route("/api/runs/{run}/lineage", get(reads::lineage))
        .route("/api/runs/{run}/screen", get(screen::open))
        .route("/api/runs/{run}/send", axum::routing::post(actions::send))
        .route("/api/runs/{run}/answer", axum::routing::post(actions::answer))
        .route("/api/runs/{run}/cancel", axum::routing::post(actions::cancel))
        .route("/api/runs/{run}/resume", axum::routing::post(actions::resume))
        .layer(axum::middleware::from_fn_with_state(web.clone(), guard::check))
        .with_state(web);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serving the web view")?;
    Ok(0)
}

/// 32 random bytes, as hex.
fn fresh_token() -> Result<String> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| anyhow::anyhow!("no randomness for the web view's token"))?;
    Ok(crate::text::hex(&bytes))
}

/// The page and its assets, written for the project and built in.
const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const SCREEN_SCRIPT: &str = include_str!("assets/screen.js");
const TABS_SCRIPT: &str = include_str!("assets/tabs.js");
const STYLE: &str = include_str!("assets/app.css");

async fn page() -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE).into_response()
}

async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT).into_response()
}

async fn screen_script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCREEN_SCRIPT,
    )
        .into_response()
}

async fn tabs_script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], TABS_SCRIPT).into_response()
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

/// A typed error as every transport gives it, with the HTTP status of its
/// class.
fn failed(e: ApiError) -> Response {
    let status = match e.code {
        ErrorCode::BadRequest | ErrorCode::UnknownMethod => StatusCode::BAD_REQUEST,
        ErrorCode::UnknownRun | ErrorCode::AmbiguousRun | ErrorCode::UnknownSession => StatusCode::NOT_FOUND,
        ErrorCode::UnknownHost | ErrorCode::UnknownRoutine => StatusCode::NOT_FOUND,
        ErrorCode::NotRunning | ErrorCode::Conflict | ErrorCode::LogPruned => StatusCode::CONFLICT,
        ErrorCode::DaemonUnavailable | ErrorCode::DaemonNotAnswering => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e.code.as_str(), &e.message)
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (status, Json(json!({ "error": { "code": code, "message": message } }))).into_response()
}
