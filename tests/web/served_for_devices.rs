//! The web view as people reach it from elsewhere: served by the daemon
//! for `[web] listen`, opened with a device's token kept only as a hash and
//! revoked by name; over HTTPS with a certificate of the user's (the page
//! and its WebSockets in a real Chromium); behind a reverse proxy named
//! with `--origin`.

use serde_json::Value;

use crate::browser::Browser;
use crate::common::{self, Home};
use crate::served::{Served, chromium, request};

const QUICK: &str = "[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\n";

#[test]
fn the_daemon_serves_web_listen_to_devices_by_tokens_kept_as_hashes_and_revoked_by_name() {
    let home = Home::with_config(&format!("{QUICK}[web]\nlisten = \"127.0.0.1:0\"\n"));
    home.start(&["--name", "hello", "cmd", "--", "sleep", "600"]);
    let mut url = String::new();
    home.wait_until("the daemon says where its web view is", || {
        url = home.json(&["daemon", "status", "--json"])["web"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        !url.is_empty()
    });
    let authority = url.trim_start_matches("http://").trim_end_matches('/').to_string();
    let (status, _, body) = request(&authority, "GET", "/api/runs", None, &[]);
    assert_eq!(status, 401, "{body}");

    let made = home.json(&["web", "tokens", "add", "phone", "--json"]);
    let token = made["token"].as_str().unwrap().to_string();
    assert_eq!(
        made["url"],
        format!("{url}#token={token}"),
        "the URL to open on the device"
    );
    let bearer = format!("Bearer {token}");
    let (status, _, body) = request(&authority, "GET", "/api/runs", None, &[("Authorization", &bearer)]);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"hello\""), "{body}");
    let kept = std::fs::read_to_string(home.path().join("web-tokens.json")).unwrap();
    assert!(!kept.contains(&token), "kept as a hash only: {kept}");
    let listed = home.json(&["web", "tokens", "ls", "--json"]);
    assert_eq!(listed[0]["name"], "phone", "{listed}");
    assert!(listed[0].get("hash").is_none(), "{listed}");
    let again = home.fails(&["web", "tokens", "add", "phone"]);
    assert!(again.contains("exists"), "{again}");

    home.ok(&["web", "tokens", "rm", "phone"]);
    let (status, _, _) = request(&authority, "GET", "/api/runs", None, &[("Authorization", &bearer)]);
    assert_eq!(status, 401, "revoked: refused from the next request on");
    let unknown = home.fails(&["web", "tokens", "rm", "phone"]);
    assert!(unknown.contains("no web token named phone"), "{unknown}");

    // Stopped with the daemon, which says nothing of it once stopped.
    home.ok(&["daemon", "stop"]);
    common::wait_until("the web view stopped", common::PATIENCE, &mut || {
        std::net::TcpStream::connect(&authority).is_err()
    });
}

/// A self-signed certificate for 127.0.0.1 and its key, made by openssl.
fn certificate(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ])
        .args([
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl");
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    (cert, key)
}

#[test]
fn over_https_the_api_the_page_and_its_websockets_answer_and_plain_http_does_not() {
    let home = Home::new();
    home.start(&[
        "--name",
        "secure",
        "cmd",
        "--",
        "sh",
        "-c",
        "echo over tls; exec sleep 600",
    ]);
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = certificate(dir.path());
    let (cert_s, key_s) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let mut command = home.cmd(&[
        "web",
        "--listen",
        "127.0.0.1:0",
        "--json",
        "--tls-cert",
        cert_s,
        "--tls-key",
        key_s,
    ]);
    let web = Served::spawn(&mut command);
    assert!(web.url.starts_with("https://"), "{}", web.url);

    let curl = |url: &str, headers: &[&str]| {
        let mut command = std::process::Command::new("curl");
        command.args(["-s", "--max-time", "10", "--cacert", cert_s]);
        for header in headers {
            command.args(["-H", header]);
        }
        command.arg(url).output().expect("curl")
    };
    let api = format!("https://{}/api/runs", web.authority);
    let bearer = format!("Authorization: {}", web.bearer());
    let answered = curl(&api, &[&bearer]);
    let body: Value = serde_json::from_slice(&answered.stdout).unwrap_or_default();
    assert_eq!(body["runs"][0]["name"], "secure", "{body}");
    let refused = curl(&api, &[]);
    assert!(String::from_utf8_lossy(&refused.stdout).contains("unauthorized"));
    let plain = curl(&format!("http://{}/api/runs", web.authority), &[&bearer]);
    assert!(
        !String::from_utf8_lossy(&plain.stdout).contains("secure"),
        "nothing said over plain HTTP"
    );

    let Some(chromium) = chromium() else {
        eprintln!("the page over HTTPS skipped: no chromium (the CI installs Debian's)");
        return;
    };
    // The certificate is the test's own: Chromium is told to take it.
    let mut page = Browser::open_with(chromium, &web.url, &["--ignore-certificate-errors"]);
    page.wait_for("the change feed up over wss", "feedUp === true");
    page.wait_for(
        "listed",
        "document.querySelector('.run .name')?.textContent === 'secure'",
    );
    page.eval("document.querySelector('.run').click()");
    page.wait_for(
        "its screen over wss",
        "Screen.text().some((l) => l.includes('over tls'))",
    );
}

#[test]
fn a_reverse_proxys_address_is_answered_once_named_and_a_malformed_one_is_refused() {
    let home = Home::new();
    let out = home.run(&["web", "--origin", "agents.example.org"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("http://HOST[:PORT] or https://HOST[:PORT]"), "{err}");

    let mut command = home.cmd(&[
        "web",
        "--listen",
        "127.0.0.1:0",
        "--json",
        "--origin",
        "https://agents.example.org",
    ]);
    let web = Served::spawn(&mut command);
    let bearer = web.bearer();
    let proxied = [
        ("Host", "agents.example.org"),
        ("Origin", "https://agents.example.org"),
        ("Authorization", bearer.as_str()),
    ];
    let (status, _, body) = web.get("/api/runs", &proxied);
    assert_eq!(status, 200, "{body}");
    let other = [("Host", "other.example.org"), ("Authorization", bearer.as_str())];
    let (status, _, _) = web.get("/api/runs", &other);
    assert_eq!(status, 403);
}

/// Listening on every address (`--listen 0.0.0.0:PORT`): the URL printed
/// names loopback, and any of this machine's addresses is answered too —
/// an address, never a name (one could be rebound to this machine).
#[test]
fn on_every_address_any_ip_of_the_machine_is_answered_and_no_name() {
    let home = Home::new();
    let mut command = home.cmd(&["web", "--listen", "0.0.0.0:0", "--json"]);
    let web = Served::spawn(&mut command);
    assert!(web.url.starts_with("http://127.0.0.1:"), "{}", web.url);
    let port = web.authority.rsplit(':').next().unwrap().to_string();
    let bearer = web.bearer();
    let lan = format!("192.0.2.7:{port}");
    let from_lan = [
        ("Host", lan.as_str()),
        ("Origin", &*format!("http://{lan}")),
        ("Authorization", bearer.as_str()),
    ];
    let (status, _, body) = web.get("/api/runs", &from_lan);
    assert_eq!(status, 200, "{body}");
    let named = format!("evil.example:{port}");
    let (status, _, _) = web.get(
        "/api/runs",
        &[("Host", named.as_str()), ("Authorization", bearer.as_str())],
    );
    assert_eq!(status, 403);
    let bad = home.run(&["web", "--listen", "127.0.0.1"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("give an address and a port"));
}
