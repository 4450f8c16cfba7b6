//! `agents web` (issue #36) through the real binary: the URL and token it
//! prints, what it refuses (no token: 401 and nothing said of any run;
//! another host or origin: 403), the headers every answer carries, and
//! the page in a real headless Chromium, which lists the runs with what
//! they carry as text, never as HTML.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use common::Home;
use serde_json::Value;

/// A running `agents web` on a free loopback port.
struct Served {
    child: Child,
    url: String,
    token: String,
    /// `127.0.0.1:PORT`.
    authority: String,
}

impl Served {
    fn start(home: &Home) -> Served {
        let mut child = home
            .cmd(&["web", "--listen", "127.0.0.1:0", "--json"])
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
            .and_then(|rest| rest.split('/').next())
            .unwrap()
            .to_string();
        assert_eq!(
            url,
            format!("http://{authority}/#token={token}"),
            "the token in the fragment"
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
    fn get(&self, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
        self.request("GET", path, None, headers)
    }

    /// `POST path` with a JSON body and these headers: status and body.
    fn post(&self, path: &str, body: &str, headers: &[(&str, &str)]) -> (u16, String) {
        let (status, _, body) = self.request("POST", path, Some(body), headers);
        (status, body)
    }

    /// `METHOD path` over one connection: the status, the headers as
    /// (lower-case) text, the body.
    fn request(&self, method: &str, path: &str, body: Option<&str>, headers: &[(&str, &str)]) -> (u16, String, String) {
        let mut stream = TcpStream::connect(&self.authority).expect("connect");
        let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
            request.push_str(&format!("Host: {}\r\n", self.authority));
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

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }
}

/// Debian's Chromium, where it is installed.
fn chromium() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
}

/// Headless, as root, on a machine with no network beyond loopback.
const HEADLESS: [&str; 8] = [
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

#[test]
fn the_web_view_answers_its_own_page_and_only_with_its_token() {
    let home = Home::new();
    home.start(&["--name", "hello", "cmd", "--", "sleep", "600"]);
    let web = Served::start(&home);
    let bearer = web.bearer();

    let (status, _, body) = web.get("/api/runs", &[]);
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("\"unauthorized\"") && !body.contains("hello"), "{body}");
    let (status, _, _) = web.get("/api/runs", &[("Authorization", "Bearer not-the-token")]);
    assert_eq!(status, 401);

    let (status, head, body) = web.get("/api/runs", &[("Authorization", &bearer)]);
    assert_eq!(status, 200, "{body}");
    assert!(head.contains("cache-control: no-store"), "{head}");
    let runs: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(runs["runs"][0]["name"], "hello", "{runs}");
    let (status, _, body) = web.get("/api/runs/hello", &[("Authorization", &bearer)]);
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = web.get("/api/runs/nosuch", &[("Authorization", &bearer)]);
    assert_eq!(status, 404);
    assert!(body.contains("\"unknown_run\""), "{body}");
    let (status, _, body) = web.get("/api/runs/nosuch/lines", &[("Authorization", &bearer)]);
    assert_eq!((status, body.contains("\"unknown_run\"")), (404, true), "{body}");

    // Another name for this address (DNS rebinding), another site's page.
    let port = web.authority.rsplit(':').next().unwrap().to_string();
    let rebound = format!("evil.example:{port}");
    let (status, _, body) = web.get("/api/runs", &[("Host", &rebound), ("Authorization", &bearer)]);
    assert_eq!(status, 403, "{body}");
    let (status, _, _) = web.get(
        "/api/runs",
        &[("Origin", "http://evil.example"), ("Authorization", &bearer)],
    );
    assert_eq!(status, 403);
    let localhost = format!("localhost:{port}");
    let (status, _, _) = web.get("/api/runs", &[("Host", &localhost), ("Authorization", &bearer)]);
    assert_eq!(status, 200, "loopback's own name");

    // The page: its own script and style only, nothing inline.
    let (status, head, page) = web.get("/", &[]);
    assert_eq!(status, 200);
    assert!(
        head.contains("content-security-policy: default-src 'none'; script-src 'self'; style-src 'self'")
            && !head.contains("unsafe"),
        "{head}"
    );
    assert!(page.contains(r#"<script src="/app.js" defer></script>"#), "{page}");
    assert_eq!(page.matches("<script").count(), 1, "no inline script: {page}");
    let (status, head, _) = web.get("/app.js", &[]);
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/javascript"), "{head}");
}

/// The page in a real headless Chromium, opened at the URL printed: it
/// lists the live run and the ended one, and the reason an ended run
/// carries — here a path with markup in it — shows as text.
#[test]
fn the_page_lists_the_runs_in_a_real_browser_and_their_words_stay_text() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no chromium (the CI installs Debian's)");
        return;
    };
    let home = Home::new();
    home.start(&["--name", "alive", "cmd", "--", "sleep", "600"]);
    let odd = "/tmp/no-such-<b>bold</b>-dir";
    let blocked = home.run(&["run", "-d", "--name", "odd", "--cwd", odd, "cmd", "--", "true"]);
    assert!(!blocked.status.success(), "blocked: the cwd does not exist");
    let web = Served::start(&home);
    let profile = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(chromium)
        .args(HEADLESS)
        .args(["--virtual-time-budget=5000", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(&web.url)
        .output()
        .expect("chromium");
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(dom.contains(r#"<span class="name">alive</span>"#), "{dom}");
    assert!(dom.contains(r#"<span class="name">odd</span>"#), "{dom}");
    assert!(
        dom.contains("no-such-&lt;b&gt;bold&lt;/b&gt;-dir") && !dom.contains("<b>bold</b>"),
        "the reason as text: {dom}"
    );
    assert!(dom.contains("0 need you · 0 working · 1 live"), "{dom}");
}

/// From the web view a run is sent a prompt, its question answered and it
/// is cancelled — the tool table's `runs.send`, `runs.answer` and
/// `runs.cancel` — and none of it without the token or from another site.
#[test]
fn a_run_is_sent_a_prompt_answered_and_cancelled_from_the_web_view() {
    let home = Home::new();
    let id = home.start(&["--name", "helper", "demo"]);
    home.wait_until("at its prompt", || home.show(&id)["status"] == "idle");
    let web = Served::start(&home);
    let bearer = web.bearer();
    let auth = [("Authorization", bearer.as_str())];

    let (status, _) = web.post("/api/runs/helper/send", r#"{"text":"never"}"#, &[]);
    assert_eq!(status, 401);
    // A body that is no such call's: the typed `bad_request`.
    let (status, body) = web.post(
        "/api/runs/helper/send",
        r#"{"txet":"never"}"#,
        &[("Authorization", &bearer)],
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("\"bad_request\"") && body.contains("txet"), "{body}");
    let evil = [("Authorization", bearer.as_str()), ("Origin", "http://evil.example")];
    let (status, _) = web.post("/api/runs/helper/cancel", "{}", &evil);
    assert_eq!(status, 403);

    let (status, body) = web.post(
        "/api/runs/helper/send",
        r#"{"text":"from the web","prompt_id":"P-web-1"}"#,
        &auth,
    );
    assert_eq!(status, 200, "{body}");
    let sent: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(sent["prompt_id"], "P-web-1", "{sent}");
    home.wait_until("the agent took it", || {
        home.logs(&id).contains("you said \"from the web\"")
    });
    // Its screen's lines say so too, as `agents logs` renders them.
    let (status, _, body) = web.get("/api/runs/helper/lines?last=5", &auth);
    let lines: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status, 200);
    let shown = lines["lines"].as_array().unwrap();
    assert!(
        shown.len() <= 5 && shown.iter().any(|l| l.as_str().unwrap().contains("from the web")),
        "{lines}"
    );
    home.wait_until("at rest again", || home.show(&id)["status"] == "idle");

    home.ok(&["send", &id, "ask"]);
    home.wait_until("the question", || home.show(&id)["status"] == "needs_approval");
    let (status, body) = web.post(
        "/api/runs/helper/answer",
        r#"{"answer":"yes","answer_id":"A-web-1"}"#,
        &auth,
    );
    assert_eq!(status, 200, "{body}");
    home.wait_until("approved", || home.logs(&id).contains("approved"));
    // No question now: refused as the CLI's is, with its code.
    let (status, body) = web.post(
        "/api/runs/helper/answer",
        r#"{"answer":"no","answer_id":"A-web-2"}"#,
        &auth,
    );
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("\"conflict\""), "{body}");

    let (status, body) = web.post("/api/runs/helper/cancel", "{}", &auth);
    assert_eq!(status, 200, "{body}");
    assert_eq!(home.wait_end(&id)["state"], "cancelled");
    assert!(!home.logs(&id).contains("never"), "nothing without the token");
}

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
struct Browser {
    chromium: Child,
    _profile: tempfile::TempDir,
    socket: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    next: u64,
}

impl Browser {
    fn open(chromium: &str, url: &str) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let child = std::process::Command::new(chromium)
            .args(HEADLESS)
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.path().display()))
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
    fn eval(&mut self, expression: &str) -> Value {
        self.next += 1;
        let call = serde_json::json!({
            "id": self.next,
            "method": "Runtime.evaluate",
            "params": { "expression": expression, "returnByValue": true },
        });
        self.socket.send(tungstenite::Message::text(call.to_string())).unwrap();
        loop {
            let message = self.socket.read().expect("devtools answers");
            let Ok(text) = message.to_text() else { continue };
            let said: Value = serde_json::from_str(text).unwrap_or_default();
            if said["id"] == self.next {
                return said["result"]["result"]["value"].clone();
            }
        }
    }

    fn wait_for(&mut self, what: &str, expression: &str) {
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

/// On a phone's screen: the run that needs you is first; tapped, its sheet
/// offers the question's answers, `yes` answers it, and a prompt typed in
/// the sheet's box reaches the agent — by clicks in a real Chromium.
#[test]
fn in_a_real_browser_a_question_is_answered_and_a_prompt_sent_by_clicks() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no chromium (the CI installs Debian's)");
        return;
    };
    let home = Home::new();
    home.start(&["--name", "quiet", "cmd", "--", "sleep", "600"]);
    let asker = home.start(&["--name", "asker", "demo", "--", "--ask"]);
    home.wait_until("the question", || home.show(&asker)["status"] == "needs_approval");
    let web = Served::start(&home);
    let mut page = Browser::open(chromium, &web.url);
    page.wait_for(
        "the asker listed first",
        "document.querySelector('.run .name')?.textContent === 'asker'",
    );
    assert_eq!(
        page.eval("location.hash"),
        Value::from(""),
        "the token left the address bar"
    );
    page.wait_for("the change feed up", "feedUp === true");
    page.eval("document.querySelector('.run').click()");
    page.wait_for("its answers offered", "!document.getElementById('answers').hidden");
    // Its screen, as its emulator read it: the question it asks.
    page.wait_for(
        "its screen shown",
        "document.getElementById('screen').textContent.includes('Do you want to proceed?')",
    );
    page.eval("document.getElementById('answer-yes').click()");
    page.wait_for(
        "answered",
        "document.getElementById('outcome').textContent === 'answered yes'",
    );
    home.wait_until("the agent approved", || home.logs(&asker).contains("approved"));
    page.wait_for("no question now", "document.getElementById('answers').hidden");
    page.eval("document.getElementById('prompt').value = 'from a phone'; document.getElementById('send').click()");
    home.wait_until("the prompt typed in", || {
        home.logs(&asker).contains("you said \"from a phone\"")
    });
}

/// The change feed: a WebSocket that says its token first, then hears of
/// each run that changes; one with the wrong token is closed with nothing
/// said, and another site's page is refused before it opens.
#[test]
fn the_change_feed_tells_of_a_new_run_and_only_after_the_token() {
    use tungstenite::Message;
    let home = Home::new();
    let web = Served::start(&home);
    let url = format!("ws://{}/api/feed", web.authority);

    let (mut wrong, _) = tungstenite::connect(&url).expect("the feed");
    wrong.send(Message::text(r#"{"token":"not-it"}"#)).unwrap();
    match wrong.read() {
        Ok(Message::Close(Some(frame))) => assert_eq!(u16::from(frame.code), 4401),
        other => panic!("closed, nothing said: {other:?}"),
    }

    let mut request = tungstenite::client::IntoClientRequest::into_client_request(url.as_str()).unwrap();
    request
        .headers_mut()
        .insert("Origin", "http://evil.example".parse().unwrap());
    let refused = tungstenite::connect(request).expect_err("another site's page");
    assert!(refused.to_string().contains("403"), "{refused}");

    let (mut feed, _) = tungstenite::connect(&url).expect("the feed");
    if let tungstenite::stream::MaybeTlsStream::Plain(stream) = feed.get_ref() {
        stream.set_read_timeout(Some(common::PATIENCE)).unwrap();
    }
    feed.send(Message::text(format!(r#"{{"token":"{}"}}"#, web.token)))
        .unwrap();
    let said = |message: Message| -> Value { serde_json::from_str(message.to_text().unwrap()).unwrap() };
    assert_eq!(said(feed.read().unwrap()), serde_json::json!({ "ready": true }));
    let id = home.start(&["--name", "newcomer", "cmd", "--", "sleep", "600"]);
    loop {
        let heard = said(feed.read().expect("a change"));
        if heard["changed"]
            .as_array()
            .is_some_and(|ids| ids.iter().any(|i| i == id.as_str()))
        {
            break;
        }
    }
}

/// A run that starts waiting for you while the page is open is the
/// browser's own notification ("NAME needs you"), once it is allowed; the
/// tab's title counts those that need you; a click on the notification
/// opens the run's sheet.
#[test]
fn a_run_that_starts_waiting_is_a_browser_notification_that_opens_it() {
    let Some(chromium) = chromium() else {
        eprintln!("skipped: no chromium (the CI installs Debian's)");
        return;
    };
    let home = Home::new();
    let id = home.start(&["--name", "helper", "demo"]);
    home.wait_until("at its prompt", || home.show(&id)["status"] == "idle");
    let web = Served::start(&home);
    let mut page = Browser::open(chromium, &web.url);
    page.wait_for(
        "the run listed",
        "document.querySelector('.run .name')?.textContent === 'helper'",
    );
    page.wait_for("the change feed up", "feedUp === true");
    // Headless Chromium shows no notifications and grants none (its
    // permission stays `default`, DevTools' grant or not): the browser's
    // Notification is stood in for by one that is allowed and notes each.
    page.eval(
        "window.shown = []; window.Notification = class { \
         static permission = 'granted'; constructor(title, options) { this.title = title; shown.push(this); } }",
    );
    home.ok(&["send", &id, "ask"]);
    page.wait_for(
        "the notification",
        "shown.length === 1 && shown[0].title === 'helper needs you'",
    );
    assert_eq!(page.eval("document.title"), Value::from("(1) agents"));
    page.eval("shown[0].onclick()");
    page.wait_for(
        "its sheet open",
        "document.getElementById('sheet-name').textContent === 'helper'",
    );
}
