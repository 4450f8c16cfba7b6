//! A running `agents web`, asked over plain HTTP, and the Chromium that
//! opens its page.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use serde_json::Value;

use crate::common::Home;

/// A running `agents web` on a free loopback port.
pub struct Served {
    child: Child,
    pub url: String,
    pub token: String,
    /// `127.0.0.1:PORT`.
    pub authority: String,
}

impl Served {
    pub fn start(home: &Home) -> Served {
        Served::spawn(&mut home.cmd(&["web", "--listen", "127.0.0.1:0", "--json"]))
    }

    /// `agents web … --json` as `command` has it.
    pub fn spawn(command: &mut std::process::Command) -> Served {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("agents web");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .expect("its first line");
        let said: Value = serde_json::from_str(&first).unwrap_or_else(|e| panic!("{e}: {first:?}"));
        let url = said["url"].as_str().unwrap().to_string();
        let token = said["token"].as_str().unwrap().to_string();
        let authority = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"))
            .and_then(|rest| rest.split('/').next())
            .unwrap()
            .to_string();
        assert!(
            url.ends_with(&format!("://{authority}/#token={token}")),
            "the token in the fragment: {url}"
        );
        Served {
            child,
            url,
            token,
            authority,
        }
    }

    /// `GET path` with these headers (`Host` the served one unless given):
    /// the status, the headers as text, the body.
    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
        self.request("GET", path, None, headers)
    }

    /// `POST path` with a JSON body and these headers: status and body.
    pub fn post(&self, path: &str, body: &str, headers: &[(&str, &str)]) -> (u16, String) {
        let (status, _, body) = self.request("POST", path, Some(body), headers);
        (status, body)
    }

    /// `METHOD path` over one connection: the status, the headers as
    /// (lower-case) text, the body.
    fn request(&self, method: &str, path: &str, body: Option<&str>, headers: &[(&str, &str)]) -> (u16, String, String) {
        request(&self.authority, method, path, body, headers)
    }

    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }
}

/// `METHOD path` over one plain HTTP connection to `authority`: the
/// status, the headers as (lower-case) text, the body.
pub fn request(
    authority: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(authority).expect("connect");
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {authority}\r\n"));
    }
    if let Some(body) = body {
        request.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body.unwrap_or_default());
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// Debian's Chromium, where it is installed.
pub fn chromium() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
}

/// Headless, as root, on a machine with no network beyond loopback.
pub const HEADLESS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
