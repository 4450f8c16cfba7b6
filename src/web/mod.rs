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
mod call;
mod cells;
mod feed;
mod guard;
mod reads;
mod screen;
mod tls;
pub mod tokens;

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

/// How `agents web` was asked to serve.
pub struct Options {
    /// `ADDR:PORT`; [`DEFAULT_LISTEN`] without.
    pub listen: Option<String>,
    /// Other addresses the page is opened at (a reverse proxy's), as URLs.
    pub origins: Vec<String>,
    /// HTTPS with this certificate chain and key (PEM files); without,
    /// `[web] tls_cert` and `tls_key`.
    pub tls: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// The first line as `{url, token}`.
    pub json: bool,
    /// Served for the daemon (`[web] listen`): device tokens only.
    pub for_daemon: bool,
}

impl Web {
    /// Whether `token` opens the web view: the one printed, or a device's.
    fn admits(&self, token: &str) -> bool {
        let printed = self
            .token
            .as_ref()
            .is_some_and(|t| guard::same(token.as_bytes(), t.as_bytes()));
        printed || self.devices.admits(token)
    }
}

/// What every request is checked against, and how the daemon is reached.
pub struct Web {
    paths: Paths,
    /// `host:port` as the URL names it; also `localhost:port` on loopback,
    /// and each `--origin`'s.
    authorities: Vec<String>,
    /// The pages that may call: each served address, and each `--origin`.
    origins: Vec<String>,
    /// The token printed with the URL; none when served for the daemon.
    token: Option<String>,
    /// `http` or `https`.
    scheme: &'static str,
    /// Listening on every address: the port any of them is answered at.
    any_address_port: Option<u16>,
    /// The devices' tokens (`agents web tokens`).
    devices: tokens::Accepted,
    /// The runs whose screens some tab watches.
    screens: screen::Screens,
}

/// Serves the web view until interrupted; the URL to open (its token in
/// the fragment) is the first line on stdout, or `{url, token}` as JSON.
/// For the daemon: `{url}` (its devices' tokens open it), and it ends
/// when the daemon that started it does.
pub async fn serve(paths: Paths, options: Options) -> Result<i32> {
    let config = crate::config::ConfigWatch::reading(&paths).current;
    let named = match options.origins.is_empty() {
        true => &config.web.origins,
        false => &options.origins,
    };
    let proxied = named.iter().map(|url| origin_of(url)).collect::<Result<Vec<_>, _>>()?;
    let tls = match options
        .tls
        .clone()
        .or_else(|| config.web.tls_cert.clone().zip(config.web.tls_key.clone()))
    {
        Some((cert, key)) => Some(tls::acceptor(&cert, &key)?),
        None => None,
    };
    let asked = options.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
    let address: std::net::SocketAddr = asked.parse().map_err(|_| {
        ApiError::bad_request(format!(
            "--listen {asked:?}: give an address and a port, as 127.0.0.1:7878 or [::1]:7878"
        ))
    })?;
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen on {asked}"))?;
    let local = listener.local_addr()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let every = local.ip().is_unspecified();
    if !local.ip().is_loopback() && tls.is_none() {
        let port = local.port();
        eprintln!(
            "agents: warning: the web view listens on {local}, beyond this machine, without TLS: \
             its traffic, the token included, is readable on the way; give it a certificate \
             (--tls-cert and --tls-key, or [web] tls_cert and tls_key), or keep it on loopback and \
             reach it through an SSH tunnel (ssh -L {port}:127.0.0.1:{port} HOST) or a reverse proxy with TLS"
        );
    }
    // On every address, this machine is named by 127.0.0.1 here, and by
    // any of its addresses elsewhere.
    let shown = match every {
        true => std::net::SocketAddr::from(([127, 0, 0, 1], local.port())),
        false => local,
    };
    if every && !options.for_daemon {
        eprintln!(
            "agents: from another device, open this URL with one of this machine's addresses in place of 127.0.0.1"
        );
    }
    let mut authorities = vec![shown.to_string()];
    if shown.ip().is_loopback() {
        authorities.push(format!("localhost:{}", local.port()));
    }
    let mut origins: Vec<String> = authorities.iter().map(|a| format!("{scheme}://{a}")).collect();
    for (origin, authority) in proxied {
        origins.push(origin);
        authorities.push(authority);
    }
    let token = match options.for_daemon {
        true => None,
        false => Some(fresh_token()?),
    };
    say_url(
        &format!("{scheme}://{shown}/"),
        token.as_deref(),
        options.json || options.for_daemon,
    )?;
    let web = Arc::new(Web {
        devices: tokens::Accepted::new(&paths),
        paths,
        authorities,
        origins,
        token,
        scheme,
        any_address_port: every.then_some(local.port()),
        screens: screen::Screens::default(),
    });
    let app = routes(web);
    let stopped = stopped(options.for_daemon);
    match tls {
        Some(acceptor) => axum::serve(tls::Listener::new(listener, acceptor), app)
            .with_graceful_shutdown(stopped)
            .await
            .context("serving the web view")?,
        None => axum::serve(listener, app)
            .with_graceful_shutdown(stopped)
            .await
            .context("serving the web view")?,
    }
    Ok(0)
}

/// The first line on stdout, out at once: the URL to open (with the
/// token in its fragment), or it as JSON.
fn say_url(base: &str, token: Option<&str>, json: bool) -> Result<()> {
    let url = match token {
        Some(token) => format!("{base}#token={token}"),
        None => base.to_string(),
    };
    let first = match (json, token) {
        (true, Some(token)) => json!({ "url": url, "token": token }).to_string(),
        (true, None) => json!({ "url": url }).to_string(),
        (false, _) => url,
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{first}").and_then(|()| stdout.flush())?;
    Ok(())
}

/// Interrupted; or, served for the daemon, once the daemon that started
/// it is gone (it is then this process's parent no more).
async fn stopped(for_daemon: bool) {
    let parent = std::os::unix::process::parent_id();
    let orphaned = async move {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            if std::os::unix::process::parent_id() != parent {
                return;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = orphaned, if for_daemon => {}
    }
}

fn routes(web: Arc<Web>) -> axum::Router {
    axum::Router::new()
        .route("/", get(page))
        .route("/app.js", get(script))
        .route("/screen.js", get(screen_script))
        .route("/tabs.js", get(tabs_script))
        .route("/app.css", get(style))
        .route("/api/feed", get(feed::open))
        .route("/api/call", axum::routing::post(call::call))
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
        .fallback(no_such)
        .method_not_allowed_fallback(not_allowed)
        .layer(axum::middleware::from_fn_with_state(web.clone(), guard::check))
        .with_state(web)
}

/// A path the web view does not serve, said as every error is.
async fn no_such() -> Response {
    error(StatusCode::NOT_FOUND, "not_found", "the web view serves no such path")
}

async fn not_allowed() -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "not asked this way: see docs/design.md §14",
    )
}

/// An `--origin` as a browser names it (`https://name[:port]`, no path)
/// and the `Host` it is reached by.
fn origin_of(url: &str) -> Result<(String, String), ApiError> {
    let bad = || {
        ApiError::bad_request(format!(
            "--origin {url:?}: give the address the page is opened at, as http://HOST[:PORT] or https://HOST[:PORT]"
        ))
    };
    let trimmed = url.trim_end_matches('/');
    let authority = ["https://", "http://"]
        .iter()
        .find_map(|scheme| trimmed.strip_prefix(scheme))
        .ok_or_else(bad)?;
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']');
    if authority.is_empty() || !authority.chars().all(plain) {
        return Err(bad());
    }
    Ok((trimmed.to_ascii_lowercase(), authority.to_ascii_lowercase()))
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

/// Method `M` asked of the daemon: its reply, or its typed error.
async fn asked<M: crate::api::method::Method>(web: &Web, params: M::Params) -> Response {
    let answer = async {
        let client = crate::client::Client::connect(&web.paths, false).await?;
        client.call::<M>(params).await
    };
    match answer.await {
        Ok(reply) => Json(reply).into_response(),
        Err(e) => failed(e),
    }
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

#[cfg(test)]
mod tests {
    use super::origin_of;

    #[test]
    fn an_origin_is_a_scheme_and_an_address_only() {
        assert_eq!(
            origin_of("https://Agents.Example.org/").unwrap(),
            ("https://agents.example.org".into(), "agents.example.org".into())
        );
        assert_eq!(
            origin_of("http://10.0.0.2:8443").unwrap(),
            ("http://10.0.0.2:8443".into(), "10.0.0.2:8443".into())
        );
        for bad in [
            "agents.example.org",
            "https://",
            "https://a.org/path",
            "ftp://a.org",
            "https://a b",
        ] {
            let e = origin_of(bad).unwrap_err();
            assert_eq!(e.code, crate::api::ErrorCode::BadRequest, "{bad}");
        }
    }
}
