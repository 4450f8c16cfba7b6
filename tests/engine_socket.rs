//! The daemon's socket (docs/design.md §5) from the outside, on raw
//! connections: bad input (garbage headers, wrong versions, oversized,
//! truncated and unknown frames, bad JSON and parameters), a client that
//! never reads its answers, another protocol version, and the daemon's own
//! lifecycle on its state directory. Subscriptions are in
//! `engine_protocol.rs`.

mod common;

use std::io::{Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::{UnixListener as StdUnixListener, UnixStream as StdUnixStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agents::api::{ErrorCode, method};
use agents::client::Client;
use agents::paths::Paths;
use agents::protocol::rpc::Request;
use agents::protocol::{Frame, MAX_FRAME, PROTOCOL_VERSION};
use common::serving::{answer_within_patience, assert_daemon_serves, paths, runtime};
use common::{Home, PATIENCE};
use serde_json::{Value, json};

fn log_tail_contains(home: &Home, run: &str, needle: &str) -> bool {
    let log = std::fs::read(home.log_path(run)).unwrap_or_default();
    let tail = &log[log.len().saturating_sub(64 * 1024)..];
    String::from_utf8_lossy(tail).contains(needle)
}

/// A blocking connection to daemon.sock that speaks bytes, not the protocol.
struct Wire {
    stream: StdUnixStream,
}

impl Wire {
    /// Connects and reads the daemon's version header.
    fn connect(home: &Home) -> Wire {
        Wire::connect_to(&paths(home).daemon_socket())
    }

    /// Connects to a daemon's or a run's socket and reads its header.
    fn connect_to(socket: &std::path::Path) -> Wire {
        let stream = StdUnixStream::connect(socket).expect("connect to the socket");
        stream.set_read_timeout(Some(PATIENCE)).expect("a read timeout");
        let mut wire = Wire { stream };
        let header = wire.line();
        assert!(header.starts_with("agents/"), "the daemon's header: {header:?}");
        wire
    }

    /// Connects and completes the version exchange.
    fn hello(home: &Home) -> Wire {
        let mut wire = Wire::connect(home);
        wire.send(format!("agents/{PROTOCOL_VERSION} test\n").as_bytes());
        wire
    }

    fn line(&mut self) -> String {
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while line.last() != Some(&b'\n') {
            let n = self.stream.read(&mut byte).expect("read a header");
            assert_eq!(n, 1, "the connection closed inside a header line");
            line.push(byte[0]);
        }
        String::from_utf8_lossy(&line).into_owned()
    }

    fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write to the daemon");
    }

    fn send_frame(&mut self, frame: &Frame) {
        self.send(&frame.encode().expect("encode a frame"));
    }

    fn request(&mut self, id: u64, name: &str, params: Value) {
        self.send_frame(&Frame::control(&Request::new(id, name, params)));
    }

    /// The next frame, or None at the end of the stream.
    fn frame(&mut self) -> Option<Frame> {
        let mut len = [0u8; 4];
        match self.stream.read_exact(&mut len) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return None,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return None,
            Err(e) => panic!("reading a frame: {e} (the daemon neither answered nor closed)"),
        }
        let len = u32::from_be_bytes(len) as usize;
        assert!(len <= MAX_FRAME, "the daemon sent a {len}-byte frame");
        let mut body = vec![0u8; len];
        self.stream.read_exact(&mut body).expect("a whole frame");
        Some(Frame::decode(&body).expect("a well-formed frame"))
    }

    /// The next JSON-RPC response, skipping notifications.
    fn response(&mut self) -> Value {
        loop {
            match self.frame() {
                Some(Frame::Control(bytes)) => {
                    let value: Value = serde_json::from_slice(&bytes).expect("JSON in a control frame");
                    if value.get("method").is_none() {
                        return value;
                    }
                }
                Some(other) => panic!("expected a response, got {other:?}"),
                None => panic!("the daemon closed the connection without answering"),
            }
        }
    }

    /// Reads to the end of the stream; returns the responses seen on the way.
    fn until_closed(&mut self) -> Vec<Value> {
        let mut responses = Vec::new();
        while let Some(frame) = self.frame() {
            if let Frame::Control(bytes) = frame {
                let value: Value = serde_json::from_slice(&bytes).expect("JSON in a control frame");
                if value.get("method").is_none() {
                    responses.push(value);
                }
            }
        }
        responses
    }
}

fn error_code(response: &Value) -> &str {
    response["error"]["data"]["code"].as_str().unwrap_or_default()
}

fn started_daemon() -> Home {
    let home = Home::new();
    home.ok(&["daemon", "start"]);
    home
}

#[test]
fn garbage_instead_of_a_version_header_is_refused_and_the_daemon_serves_on() {
    let home = started_daemon();

    let mut http = Wire::connect(&home);
    http.send(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
    let answers = http.until_closed();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(error_code(&answers[0]), ErrorCode::Protocol.as_str(), "{answers:?}");
    assert_daemon_serves(&home);

    // A header line longer than any real one, with no newline at all.
    let mut binary = Wire::connect(&home);
    binary.send(&[0xffu8; 4096]);
    binary.until_closed();
    assert_daemon_serves(&home);

    // A peer that connects and says nothing holds up no one else.
    let _silent = Wire::connect(&home);
    assert_daemon_serves(&home);
}

#[test]
fn a_wrong_protocol_version_is_answered_with_a_typed_error_and_the_connection_closed() {
    let home = started_daemon();
    let mut wire = Wire::connect(&home);
    wire.send(b"agents/999 x\n");
    let answers = wire.until_closed();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(
        error_code(&answers[0]),
        ErrorCode::VersionMismatch.as_str(),
        "{answers:?}"
    );
    let message = answers[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("999"), "the error names the peer's version: {message}");
    assert_daemon_serves(&home);
}

#[test]
fn a_frame_longer_than_the_cap_ends_that_connection_only() {
    let home = started_daemon();
    let mut wire = Wire::hello(&home);
    let mut oversized = ((MAX_FRAME + 1) as u32).to_be_bytes().to_vec();
    oversized.push(1);
    oversized.extend_from_slice(b"{\"jsonrpc\":\"2.0\"");
    wire.send(&oversized);
    let answers = wire.until_closed();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(error_code(&answers[0]), ErrorCode::Protocol.as_str());
    assert_daemon_serves(&home);

    // Another connection is served as usual.
    let mut other = Wire::hello(&home);
    other.request(1, method::DAEMON_STATUS, json!({}));
    let status = other.response();
    assert_eq!(status["id"], 1);
    assert!(status["result"]["pid"].is_u64(), "{status}");
}

#[test]
fn a_truncated_frame_then_end_of_stream_ends_that_connection_only() {
    let home = started_daemon();
    let mut wire = Wire::hello(&home);
    let mut truncated = 100u32.to_be_bytes().to_vec();
    truncated.extend_from_slice(b"\x01{\"jsonrpc\"");
    wire.send(&truncated);
    wire.stream.shutdown(std::net::Shutdown::Write).expect("half-close");
    let answers = wire.until_closed();
    assert!(
        answers.iter().all(|a| error_code(a) == ErrorCode::Protocol.as_str()),
        "{answers:?}"
    );
    assert_daemon_serves(&home);
}

#[test]
fn a_frame_of_an_unknown_kind_ends_that_connection_with_a_protocol_error() {
    let home = started_daemon();
    let mut wire = Wire::hello(&home);
    wire.send(&[0, 0, 0, 3, 9, 1, 2]);
    let answers = wire.until_closed();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(error_code(&answers[0]), ErrorCode::Protocol.as_str());
    assert_daemon_serves(&home);
}

#[test]
fn invalid_json_in_a_control_frame_is_a_protocol_error_and_the_connection_goes_on() {
    let home = started_daemon();
    let mut wire = Wire::hello(&home);
    wire.send_frame(&Frame::Control(
        b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ".to_vec(),
    ));
    let answer = wire.response();
    assert_eq!(error_code(&answer), ErrorCode::Protocol.as_str(), "{answer}");
    // Not JSON-RPC either: an id that is not a number.
    wire.send_frame(&Frame::Control(
        br#"{"jsonrpc":"2.0","id":"seven","method":"runs.list","params":{}}"#.to_vec(),
    ));
    let answer = wire.response();
    assert_eq!(error_code(&answer), ErrorCode::Protocol.as_str(), "{answer}");

    wire.request(7, method::RUNS_LIST, json!({}));
    let answer = wire.response();
    assert_eq!(answer["id"], 7);
    assert!(answer["result"].is_array(), "{answer}");
    assert_daemon_serves(&home);
}

#[test]
fn an_unknown_method_and_bad_parameters_are_typed_errors() {
    let home = started_daemon();
    let mut wire = Wire::hello(&home);

    wire.request(3, "runs.frobnicate", json!({}));
    let answer = wire.response();
    assert_eq!(answer["id"], 3);
    assert_eq!(error_code(&answer), ErrorCode::UnknownMethod.as_str(), "{answer}");

    for (id, name, params) in [
        (4, method::RUNS_SHOW, json!({ "nope": 1 })),
        (5, method::RUNS_ATTACH, json!({ "run": 5 })),
        (6, method::RUNS_RESIZE, json!({ "run": "x", "rows": 0, "cols": 0 })),
        (7, method::RUNS_LIST, json!("all")),
        (8, method::RUNS_START, json!({ "harness": "cmd" })),
    ] {
        wire.request(id, name, params.clone());
        let answer = wire.response();
        assert_eq!(answer["id"], id);
        assert_eq!(
            error_code(&answer),
            ErrorCode::BadRequest.as_str(),
            "{name} {params}: {answer}"
        );
    }
    assert_daemon_serves(&home);
}

/// Resident memory of a process, in bytes.
fn resident_bytes(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kb * 1024
}

#[test]
fn a_client_that_sends_requests_without_reading_the_answers_is_held_back_not_buffered() {
    let home = started_daemon();
    let daemon = home.daemon_pid().expect("daemon.pid");
    let before = resident_bytes(daemon);
    let mut wire = Wire::hello(&home);
    // How long a write may block before we call the daemon stalled: it is
    // held back on purpose, so this wait is the thing observed.
    wire.stream
        .set_write_timeout(Some(std::time::Duration::from_secs(2)))
        .expect("a write timeout");
    let batch: Vec<u8> = (1..=1000u64)
        .flat_map(|i| {
            Frame::control(&Request::new(i, method::DAEMON_STATUS, json!({})))
                .encode()
                .expect("encode")
        })
        .collect();
    // 25 MB of requests took 1.8 GB of daemon memory when each one was
    // queued as a task, however many were unanswered.
    let limit = 25 << 20;
    let mut sent = 0;
    while sent < limit && wire.stream.write_all(&batch).is_ok() {
        sent += batch.len();
    }
    let grown = resident_bytes(daemon).saturating_sub(before);
    assert!(
        sent < limit,
        "the daemon read {sent} bytes of requests whose answers nobody read"
    );
    assert!(grown < 64 << 20, "the daemon grew by {grown} bytes for one client");
    assert_daemon_serves(&home);
}

/// A fake daemon on `dir/daemon.sock` that speaks protocol 999; it answers
/// every connection until dropped.
struct FutureDaemon {
    socket: std::path::PathBuf,
    stop: Arc<AtomicBool>,
    accepted: Option<std::thread::JoinHandle<usize>>,
}

impl FutureDaemon {
    fn at(dir: &std::path::Path) -> FutureDaemon {
        let socket = Paths::at(dir.to_path_buf()).daemon_socket();
        let listener = StdUnixListener::bind(&socket).expect("bind the fake daemon");
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let accepted = std::thread::spawn(move || {
            // Held open, so a client always reads the header before the end.
            let mut open = Vec::new();
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut stream) = stream else { continue };
                let _ = stream.write_all(b"agents/999 9.9.9\n");
                open.push(stream);
            }
            open.len()
        });
        FutureDaemon {
            socket,
            stop,
            accepted: Some(accepted),
        }
    }
}

impl Drop for FutureDaemon {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so its thread ends.
        let _ = StdUnixStream::connect(&self.socket);
        if let Some(t) = self.accepted.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn the_client_library_and_the_cli_report_a_daemon_of_another_protocol_version() {
    let home = Home::new();
    let fake = FutureDaemon::at(home.path());

    let rt = runtime();
    let err = match rt.block_on(Client::connect_existing(&paths(&home), false)) {
        Ok(_) => panic!("connected to a protocol-999 daemon"),
        Err(e) => e,
    };
    assert_eq!(err.code, ErrorCode::VersionMismatch, "{err}");
    assert!(err.message.contains("999"), "{err}");

    let out = answer_within_patience(&home, &["ls"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("999") && stderr.contains("agents daemon stop"),
        "{stderr}"
    );
    drop(fake);
    // Nothing started a real daemon in its place.
    assert_eq!(home.daemon_pid(), None);
}

// ── 7. The daemon's lifecycle ───────────────────────────────────────────

#[test]
fn daemon_status_exits_1_when_no_daemon_runs_and_0_once_one_is_started() {
    let home = Home::new();
    let out = home.run(&["daemon", "status"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("not running"));
    assert_eq!(home.daemon_pid(), None, "status does not start a daemon");

    home.ok(&["daemon", "start"]);
    let out = home.run(&["daemon", "status"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let status = home.json(&["daemon", "status", "--json"]);
    assert_eq!(status["pid"].as_i64().map(|p| p as i32), home.daemon_pid());
}

#[test]
fn a_second_daemon_on_the_same_home_refuses_while_the_first_runs() {
    let home = Home::new();
    home.ok(&["daemon", "start"]);
    let first = home.daemon_pid().expect("daemon.pid");

    let out = answer_within_patience(&home, &["daemon", "run"]);
    assert!(!out.status.success(), "a second daemon ran: {out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("already running"), "{stderr}");
    assert_eq!(home.daemon_pid(), Some(first));
    assert!(common::pid_alive(first));
    assert_daemon_serves(&home);
}

#[test]
fn a_stale_socket_left_by_a_killed_daemon_is_replaced_by_the_next_command() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "true"]);
    home.wait_end(&id);
    let first = home.daemon_pid().expect("daemon.pid");
    common::kill9(first);
    // Refused, not just a zombie leader: the listener goes only once the
    // daemon's last thread has exited.
    let socket = paths(&home).daemon_socket();
    home.wait_until(
        "the killed daemon's socket refuses connections",
        || matches!(StdUnixStream::connect(&socket), Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused),
    );
    assert!(socket.exists(), "a killed daemon leaves its socket behind");

    let runs = home.json(&["ls", "--all", "--json"]);
    assert_eq!(runs[0]["id"], id.as_str(), "{runs}");
    let second = home.daemon_pid().expect("a new daemon.pid");
    assert_ne!(second, first);
    assert!(common::pid_alive(second));
}

#[test]
fn the_socket_is_private_to_the_user_and_the_home_is_0700() {
    let home = Home::new();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    home.ok(&["daemon", "start"]);
    let mode = |p: &std::path::Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(home.path()), 0o700, "AGENTS_HOME");
    assert_eq!(mode(&paths(&home).daemon_socket()), 0o600, "daemon.sock");
}

/// A run that answers each line it reads with `answer` (`$p` the line),
/// and a connection to its supervisor's socket that said its header.
fn reading_run(home: &Home, answer: &str) -> (String, Wire) {
    let script = format!("stty -echo; echo ready; while IFS= read -r p; do echo \"{answer}\"; done");
    let id = home.start(&["cmd", "--", "bash", "-c", &script]);
    home.wait_until("the run reads", || log_tail_contains(home, &id, "ready"));
    let mut wire = Wire::connect_to(&paths(home).run_socket(&id));
    wire.send(format!("agents/{PROTOCOL_VERSION} test\n").as_bytes());
    (id, wire)
}

/// A prompt typed twice under one id goes in once: a daemon killed (or
/// refused by a full disk) between typing a prompt and recording that it
/// did types it again, and the supervisor, which outlives it, knows the id.
#[test]
fn a_prompt_a_supervisor_is_asked_twice_to_type_goes_in_once() {
    let home = Home::new();
    let (id, mut wire) = reading_run(&home, "got $p");
    let prompts = [("P-1", "once"), ("P-1", "once"), ("P-2", "after")];
    let mut answers = Vec::new();
    for (n, (prompt, text)) in prompts.iter().enumerate() {
        wire.request(n as u64 + 1, "sup.prompt", json!({ "id": prompt, "text": text }));
        answers.push(wire.response());
    }
    assert_eq!(answers[1]["result"]["again"], true, "{answers:?}");
    home.wait_until("the prompt after it is typed", || {
        log_tail_contains(&home, &id, "got after")
    });
    let log = String::from_utf8_lossy(&home.raw_log(&id)).into_owned();
    assert_eq!(log.matches("got once").count(), 1, "{log}");
}

/// Issue #35 (§2): an answer asked twice under one id is typed once, as a
/// prompt is: a daemon that typed it and died before recording so is asked
/// again by the caller, and the question on screen by then may be the next
/// one — which must get its own answer, not the old one again.
#[test]
fn an_answer_a_supervisor_is_asked_twice_to_type_goes_in_once() {
    let home = Home::new();
    let id = home.start(&["demo", "--", "--ask"]);
    let asks = || home.show(&id)["status"] == "needs_approval";
    home.wait_until("the first question", asks);
    let mut wire = Wire::connect_to(&paths(&home).run_socket(&id));
    wire.send(format!("agents/{PROTOCOL_VERSION} test\n").as_bytes());
    let mut answer = |n: u64, answer_id: &str, key: u8| {
        let params = json!({ "id": answer_id, "bytes": [key], "wait_ms": 2000 });
        wire.request(n, "sup.answer", params);
        wire.response()
    };
    let first = answer(1, "A-1", b'1');
    assert!(first["error"].is_null(), "{first}");
    home.wait_until("approved", || log_tail_contains(&home, &id, "approved"));
    home.wait_until("the agent at rest", || home.show(&id)["status"] == "idle");
    home.ok(&["send", &id, "ask"]);
    home.wait_until("the second question", asks);
    let again = answer(2, "A-1", b'1');
    assert_eq!(again["result"]["again"], true, "{again}");
    let second = answer(3, "A-2", 0x1b);
    assert!(second["error"].is_null(), "{second}");
    home.wait_until("denied", || log_tail_contains(&home, &id, "denied"));
    let log = String::from_utf8_lossy(&home.raw_log(&id)).into_owned();
    assert_eq!(log.matches("approved").count(), 1, "{log}");
}

/// Issue #34 (10): the supervisor's socket takes any process of the user,
/// so it holds the daemon's bound on a prompt itself: 900 KB sent
/// straight to it are refused, nothing typed, and the run goes on.
#[test]
fn a_prompt_past_the_bound_sent_straight_to_a_supervisor_is_refused_and_nothing_is_typed() {
    let home = Home::new();
    let (id, mut wire) = reading_run(&home, "got ${#p}");
    wire.request(1, "sup.prompt", json!({ "id": "P-big", "text": "x".repeat(900_000) }));
    let refused = wire.response();
    let why = refused["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(why.contains("the prompt"), "{refused}");
    wire.request(2, "sup.prompt", json!({ "id": "P-small", "text": "hello" }));
    assert!(wire.response()["error"].is_null());
    // The first line the run reads is the small prompt: nothing of the
    // refused one went in before it.
    home.wait_until("the small prompt is typed", || log_tail_contains(&home, &id, "got"));
    let log = String::from_utf8_lossy(&home.raw_log(&id)).into_owned();
    let first = log
        .lines()
        .find(|l| l.starts_with("got"))
        .unwrap_or_default()
        .trim_end();
    assert_eq!(first, "got 5", "{log}");
}

/// `runs.list` page by page, as `agents ls` reads it: each page's `next`
/// asked for at once (the daemon has built it meanwhile), whole records or
/// brief ones. Every run comes once, newest page first, and a brief run
/// says what its record says; a page asked again from the top is the top,
/// not the page built ahead.
#[test]
fn a_list_read_page_by_page_holds_every_run_once_whole_or_brief() {
    let home = Home::new();
    let ids: Vec<String> = (0..7)
        .map(|i| home.start(&["--name", &format!("paged-{i}"), "cmd", "--", "sleep", "600"]))
        .collect();
    home.wait_until("all seven running", || {
        ids.iter().all(|id| home.show(id)["state"] == "running")
    });
    let rt = runtime();
    let (whole, brief, top_again) = rt.block_on(async {
        let client = Client::connect_existing(&paths(&home), false).await.expect("connect");
        let page = |brief: bool, before: Option<String>| {
            let params = json!({ "paged": true, "limit": 2, "brief": brief, "before": before });
            client.call_raw("runs.list", params)
        };
        let read = |brief: bool| async move {
            let (mut pages, mut before) = (Vec::new(), None);
            loop {
                let answer = page(brief, before.clone()).await.expect("a page");
                pages.push(answer["runs"].as_array().expect("runs").clone());
                match answer["next"].as_str() {
                    Some(next) => before = Some(next.to_string()),
                    None => break pages,
                }
            }
        };
        // Both at once on one connection, as the TUI reads its two lists.
        let (whole, brief) = tokio::join!(read(false), read(true));
        // The first page, then the first page again: not the second.
        page(false, None).await.expect("the top");
        let top_again = page(false, None).await.expect("the top again");
        (whole, brief, top_again)
    });
    let listed = |pages: &[Vec<Value>]| -> Vec<String> {
        pages
            .iter()
            .rev()
            .flatten()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(listed(&whole), ids, "every run once, oldest first: {whole:#?}");
    assert_eq!(listed(&brief), ids, "{brief:#?}");
    assert!(whole.len() >= 4, "seven runs in pages of two: {}", whole.len());
    let top: Vec<&str> = top_again["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(top, [ids[5].as_str(), ids[6].as_str()], "the newest two, again");
    for (w, b) in whole.iter().flatten().zip(brief.iter().flatten()) {
        for field in [
            "id",
            "name",
            "harness",
            "host",
            "cwd",
            "state",
            "status",
            "started_at",
            "pid",
        ] {
            assert_eq!(w[field], b[field], "{field} of {w:#}\nbrief: {b:#}");
        }
        assert!(b.get("command").is_none() && b.get("root_id").is_none(), "brief: {b:#}");
    }
}
