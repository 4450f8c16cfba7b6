//! The web view's HTTP calls and WebSockets, asked as a script would.

use serde_json::Value;

use crate::common::{self, Home};
use crate::served::Served;

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
    assert_eq!(
        page.matches("<script").count(),
        page.matches("<script src=\"/").count(),
        "no inline script: {page}"
    );
    assert_eq!(page.matches("></script>").count(), page.matches("<script").count());
    let (status, head, _) = web.get("/app.js", &[]);
    assert_eq!(status, 200);
    assert!(head.contains("content-type: text/javascript"), "{head}");
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

/// The tool table over HTTP (`POST /api/call`): a run started, sent a
/// prompt, renamed, read and cancelled as the CLI and MCP do it, each
/// answer the daemon's; the daemon's own plumbing is not offered.
#[test]
fn the_tool_table_over_http_starts_steers_and_ends_a_run_as_the_cli_does() {
    use serde_json::json;
    let home = Home::new();
    let web = Served::start(&home);
    let bearer = web.bearer();
    let call = |method: &str, params: Value| -> (u16, Value) {
        let body = json!({ "method": method, "params": params }).to_string();
        let (status, answer) = web.post("/api/call", &body, &[("Authorization", &bearer)]);
        (
            status,
            serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer}")),
        )
    };
    let cwd = home.path().to_str().unwrap();
    let (status, started) = call(
        "runs.start",
        json!({ "harness": "demo", "name": "from-http", "cwd": cwd }),
    );
    assert_eq!(status, 200, "{started}");
    let id = started["result"]["id"].as_str().unwrap().to_string();
    assert_eq!(home.show(&id)["name"], "from-http");
    home.wait_until("at its prompt", || home.show(&id)["status"] == "idle");

    let (status, sent) = call("runs.send", json!({ "run": "from-http", "text": "over http" }));
    assert_eq!(status, 200, "{sent}");
    home.wait_until("typed in", || home.logs(&id).contains("you said \"over http\""));
    let (status, _) = call("runs.rename", json!({ "run": id, "name": "renamed" }));
    assert_eq!(status, 200);
    let (_, shown) = call("runs.show", json!({ "run": "renamed" }));
    let cli = home.show(&id);
    for field in ["id", "name", "harness", "cwd", "state"] {
        assert_eq!(shown["result"][field], cli[field], "{field}: the CLI's answer");
    }

    // Refused as the CLI's are, with the same codes.
    let (status, unknown) = call("runs.show", json!({ "run": "nosuch" }));
    assert_eq!((status, unknown["error"]["code"].as_str()), (404, Some("unknown_run")));
    let (status, stop) = call("daemon.stop", json!({}));
    assert_eq!((status, stop["error"]["code"].as_str()), (400, Some("unknown_method")));
    assert_eq!(
        home.json(&["daemon", "status", "--json"])["live_runs"],
        1,
        "still serving"
    );
    let placed = json!({ "harness": "demo", "cwd": cwd, "placed": true });
    let (status, _) = call("runs.start", placed);
    assert_eq!(status, 400, "a browser is no daemon placing a run");
    let (status, _) = web.post("/api/call", r#"{"method":"runs.list"}"#, &[]);
    assert_eq!(status, 401);
    // A JSON-RPC 2.0 request as any client library sends it: its id back.
    let rpc = r#"{"jsonrpc":"2.0","id":7,"method":"runs.show","params":{"run":"renamed"}}"#;
    let (status, answer) = web.post("/api/call", rpc, &[("Authorization", &bearer)]);
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        (status, &answer["id"], &answer["jsonrpc"]),
        (200, &json!(7), &json!("2.0"))
    );
    assert_eq!(answer["result"]["id"], id.as_str());
    // Any path or way of asking not served: said as JSON too.
    let (status, _, body) = web.get("/api/nope", &[("Authorization", &bearer)]);
    assert!(status == 404 && body.contains("\"not_found\""), "{status} {body}");

    let (status, _) = call("runs.cancel", json!({ "run": "renamed" }));
    assert_eq!(status, 200);
    let (status, ended) = call("runs.wait", json!({ "run": id }));
    assert_eq!(status, 200, "{ended}");
    assert_eq!(ended["result"]["state"], "cancelled", "{ended}");
}
