//! What every request to the web view passes before it is served: the
//! served host in `Host` and `Origin` (403 otherwise), the token on
//! `/api/` (401 otherwise), and the headers every answer carries (a strict
//! Content-Security-Policy: the page's own script and style, nothing
//! inline, no other origin).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;

use super::{Web, error};

/// The page's own script, style and calls; nothing else, nothing inline,
/// never framed.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
    img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub async fn check(State(web): State<Arc<Web>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let mut answer = if !served(&web, headers) {
        error(
            StatusCode::FORBIDDEN,
            "forbidden",
            "this address is not the one the web view was opened at",
        )
    } else if needs_bearer(request.uri().path()) && !bears_token(&web, headers) {
        error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the token is missing or wrong: open the web view from the URL `agents web` printed, \
             or with a device's token (agents web tokens add NAME)",
        )
    } else {
        next.run(request).await
    };
    let set = answer.headers_mut();
    set.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY));
    set.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    set.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    set.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    answer
}

/// `Host` names the served address, and `Origin`, when sent, is its page:
/// no other site's script, and no name rebound to this address (DNS
/// rebinding), is answered.
fn served(web: &Web, headers: &HeaderMap) -> bool {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let host_ok = host.is_some_and(|h| web.authorities.iter().any(|a| a == h) || any_address(web, h));
    let origin_ok = match headers.get(header::ORIGIN).map(|o| o.to_str()) {
        None => true,
        Some(Ok(origin)) => {
            web.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
                || origin
                    .split_once("://")
                    .is_some_and(|(scheme, host)| scheme == web.scheme && any_address(web, host))
        }
        Some(Err(_)) => false,
    };
    host_ok && origin_ok
}

/// Listening on every address (`0.0.0.0`, `::`): any of this machine's IP
/// addresses with the served port. Only addresses: a name could be one
/// rebound to this machine.
fn any_address(web: &Web, host: &str) -> bool {
    web.any_address_port
        .is_some_and(|port| host.parse::<std::net::SocketAddr>().is_ok_and(|a| a.port() == port))
}

/// Every call of the API but its WebSockets (the change feed, a run's
/// screen), which a browser opens without headers of its own: each says
/// its token as its first message (`feed.rs`, `screen.rs`).
fn needs_bearer(path: &str) -> bool {
    let websocket = path == "/api/feed" || (path.starts_with("/api/runs/") && path.ends_with("/screen"));
    path.starts_with("/api/") && !websocket
}

/// `Authorization: Bearer TOKEN`, compared in constant time.
fn bears_token(web: &Web, headers: &HeaderMap) -> bool {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|a| a.to_str().ok())
        .and_then(|a| a.strip_prefix("Bearer "))
        .unwrap_or_default();
    web.admits(given)
}

/// Equal, in time that depends on the length only.
pub(super) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn web() -> Web {
        Web {
            paths: crate::paths::Paths::at("/nonexistent".into()),
            authorities: vec![
                "127.0.0.1:7878".into(),
                "localhost:7878".into(),
                "agents.example.org".into(),
            ],
            origins: vec![
                "http://127.0.0.1:7878".into(),
                "http://localhost:7878".into(),
                "https://agents.example.org".into(),
            ],
            token: Some("t0ken".into()),
            scheme: "http",
            any_address_port: None,
            devices: super::super::tokens::Accepted::new(&crate::paths::Paths::at("/nonexistent".into())),
            screens: Default::default(),
        }
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(name, HeaderValue::from_str(value).unwrap());
        }
        h
    }

    #[test]
    fn only_the_served_host_and_its_own_page_are_answered() {
        let web = web();
        assert!(served(&web, &headers(&[(header::HOST, "127.0.0.1:7878")])));
        assert!(served(&web, &headers(&[(header::HOST, "localhost:7878")])));
        assert!(
            !served(&web, &headers(&[(header::HOST, "evil.example:7878")])),
            "rebound"
        );
        assert!(!served(&web, &headers(&[])), "no host");
        let from = |origin| headers(&[(header::HOST, "127.0.0.1:7878"), (header::ORIGIN, origin)]);
        assert!(served(&web, &from("http://127.0.0.1:7878")));
        assert!(!served(&web, &from("http://evil.example")), "another site");
        assert!(!served(&web, &from("null")));
        // Behind a reverse proxy named with `--origin`: its host and page.
        let proxied = headers(&[
            (header::HOST, "agents.example.org"),
            (header::ORIGIN, "https://agents.example.org"),
        ]);
        assert!(served(&web, &proxied));
        let plain = headers(&[
            (header::HOST, "agents.example.org"),
            (header::ORIGIN, "http://agents.example.org"),
        ]);
        assert!(!served(&web, &plain), "not the scheme it was named with");
        // Listening on every address: any IP literal with the port, no name.
        let every = Web {
            any_address_port: Some(7878),
            ..web
        };
        let at = |host: &str, origin: &str| served(&every, &headers(&[(header::HOST, host), (header::ORIGIN, origin)]));
        assert!(at("192.168.1.20:7878", "http://192.168.1.20:7878"));
        assert!(at("[fe80::1]:7878", "http://[fe80::1]:7878"));
        assert!(!at("192.168.1.20:9999", "http://192.168.1.20:9999"), "another port");
        assert!(!at("evil.example:7878", "http://evil.example:7878"), "a name");
    }

    #[test]
    fn the_token_is_the_bearer_one_exactly() {
        let web = web();
        let bearing = |value: &str| bears_token(&web, &headers(&[(header::AUTHORIZATION, value)]));
        assert!(bearing("Bearer t0ken"));
        assert!(!bearing("Bearer t0ke"));
        assert!(!bearing("Bearer t0kenX"));
        assert!(!bearing("t0ken"));
        assert!(!bears_token(&web, &HeaderMap::new()));
    }
}
