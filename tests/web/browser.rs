//! A page in a headless Chromium, driven over the DevTools protocol.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use serde_json::Value;

use crate::common;
use crate::served::HEADLESS;

/// `METHOD path` of Chromium's DevTools HTTP endpoint: its JSON answer,
/// read by its length (it keeps the connection open).
fn devtools(port: &str, method: &str, path: &str) -> Value {
    let mut stream = TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    stream.set_read_timeout(Some(common::PATIENCE)).unwrap();
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = n.trim().parse().unwrap();
        }
        if line.trim().is_empty() {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

/// A page in a headless Chromium, driven over the DevTools protocol: what
/// a test does is what a person's clicks do.
pub struct Browser {
    chromium: Child,
    _profile: tempfile::TempDir,
    socket: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next: u64,
}

impl Browser {
    pub fn open(chromium: &str, url: &str) -> Browser {
        Browser::open_with(chromium, url, &[])
    }

    /// As [`Browser::open`], Chromium given `more` arguments.
    pub fn open_with(chromium: &str, url: &str, more: &[&str]) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let child = std::process::Command::new(chromium)
            .args(HEADLESS)
            .args(more)
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.path().display()))
            // Its scratch folders go with the profile, not into /tmp.
            .env("TMPDIR", profile.path())
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium");
        // It writes the port it took where its profile is.
        let ports = profile.path().join("DevToolsActivePort");
        let mut port = String::new();
        common::wait_until("chromium listens", common::PATIENCE, &mut || {
            port = std::fs::read_to_string(&ports).unwrap_or_default();
            port.lines().next().is_some_and(|p| p.parse::<u16>().is_ok())
        });
        let port = port.lines().next().unwrap().to_string();
        let escaped: String = url
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let page = devtools(&port, "PUT", &format!("/json/new?{escaped}"));
        let (socket, _) = tungstenite::connect(page["webSocketDebuggerUrl"].as_str().unwrap()).expect("devtools");
        // A page that never answers fails the test, not hangs it.
        if let tungstenite::stream::MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream.set_read_timeout(Some(common::PATIENCE)).unwrap();
        }
        Browser {
            chromium: child,
            _profile: profile,
            socket,
            next: 0,
        }
    }

    /// The value of a JavaScript expression in the page.
    pub fn eval(&mut self, expression: &str) -> Value {
        let params = serde_json::json!({ "expression": expression, "returnByValue": true });
        self.call("Runtime.evaluate", params)["result"]["value"].clone()
    }

    /// A DevTools method's result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let call = serde_json::json!({ "id": self.next, "method": method, "params": params });
        self.socket.send(tungstenite::Message::text(call.to_string())).unwrap();
        loop {
            let message = self.socket.read().expect("devtools answers");
            let Ok(text) = message.to_text() else { continue };
            let said: Value = serde_json::from_str(text).unwrap_or_default();
            if said["id"] == self.next {
                assert!(said["error"].is_null(), "{method}: {said}");
                return said["result"].clone();
            }
        }
    }

    /// A key pressed as a person presses it (the browser's own event):
    /// `text` is what it types, if anything.
    pub fn press(&mut self, key: &str, code: u32, text: &str) {
        for kind in ["keyDown", "keyUp"] {
            let mut event = serde_json::json!({ "type": kind, "key": key, "windowsVirtualKeyCode": code });
            if kind == "keyDown" && !text.is_empty() {
                event["text"] = Value::from(text);
            }
            self.call("Input.dispatchKeyEvent", event);
        }
    }

    /// The page as a screen `width` × `height` shows it (a phone's with
    /// `mobile`).
    pub fn size(&mut self, width: u32, height: u32, mobile: bool) {
        let metrics = serde_json::json!({
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile,
        });
        self.call("Emulation.setDeviceMetricsOverride", metrics);
    }

    /// A screenshot of the page, kept as a test artifact under
    /// `target/test-artifacts/web/NAME.png`.
    pub fn screenshot(&mut self, name: &str) -> std::path::PathBuf {
        use base64::Engine;
        let shot = self.call("Page.captureScreenshot", serde_json::json!({ "format": "png" }));
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().expect("a screenshot"))
            .unwrap();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts/web");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).unwrap();
        path
    }

    pub fn wait_for(&mut self, what: &str, expression: &str) {
        common::wait_until(what, common::PATIENCE, &mut || {
            self.eval(expression) == Value::Bool(true)
        });
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.chromium.kill();
        let _ = self.chromium.wait();
    }
}
