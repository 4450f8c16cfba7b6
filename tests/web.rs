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
        let mut stream = TcpStream::connect(&self.authority).expect("connect");
        let mut request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
        if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
            request.push_str(&format!("Host: {}\r\n", self.authority));
        }
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
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
    let Some(chromium) = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    else {
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
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
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

impl Served {
    /// `POST path` with a JSON body and these headers: status and body.
    fn post(&self, path: &str, body: &str, headers: &[(&str, &str)]) -> (u16, String) {
        let mut stream = TcpStream::connect(&self.authority).expect("connect");
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            self.authority,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let body = answer
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default();
        (status, body)
    }
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
