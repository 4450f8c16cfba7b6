//! What the end-to-end tests with real harness CLIs share: the pinned
//! binary (a loud skip without it, a failure when `AGENTS_REQUIRE_<CLI>`
//! says it must be there), a folder putting it on PATH, the plumbing of a
//! mock model API on loopback (one request read, one reply, the connection
//! closed), waits that show the run's events and screen when they time
//! out, and what the tests read back from a run (status events, hooks, the
//! transcript).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Home;

/// The CLI named by `AGENTS_TEST_<CLI>`, or `None` (the test is skipped,
/// saying why) when unset; with `AGENTS_REQUIRE_<CLI>` set it must exist.
/// `program` and `pinned` say what to install in the skip message.
pub fn pinned_binary(cli: &str, program: &str, pinned: &str) -> Option<PathBuf> {
    let (var, require) = (format!("AGENTS_TEST_{cli}"), format!("AGENTS_REQUIRE_{cli}"));
    let found = std::env::var_os(&var).map(PathBuf::from).filter(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var_os(&require).is_none(),
            "{require} is set but {var} names no file"
        );
        eprintln!("skipped: set {var} to a {program} {pinned} binary to run this test");
    }
    found
}

/// The version the test's CLI is: the pinned one, or with
/// `AGENTS_TEST_LATEST` (the newest on its registry) what it says it is.
pub fn version_under_test(binary: &Path, pinned: &str) -> String {
    if std::env::var_os("AGENTS_TEST_LATEST").is_none() {
        return pinned.to_string();
    }
    let out = std::process::Command::new(binary).arg("--version").output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    agents::harness::version::parse_version(&said).unwrap_or_else(|| panic!("no version in {said:?}"))
}

/// A folder holding only a link to the CLI under its program name, to put
/// first on the harness's PATH.
pub struct BinDir(tempfile::TempDir);

impl BinDir {
    pub fn with(binary: &Path, program: &str) -> BinDir {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(binary, dir.path().join(program)).unwrap();
        BinDir(dir)
    }

    /// This folder, then the test's own PATH.
    pub fn path(&self) -> String {
        self.path_before(&std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()))
    }

    /// This folder, then `rest`.
    pub fn path_before(&self, rest: &str) -> String {
        format!("{}:{rest}", self.0.path().display())
    }
}

/// Runs an `agents` command that must succeed; its output, trimmed.
pub fn stdout_of(mut cmd: Command, what: &str) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "agents {what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// One HTTP request as a mock API sees it.
pub struct Request {
    /// `POST /v1/messages HTTP/1.1`, without its line end.
    pub line: String,
    /// Header lines, lower-cased, without their line ends.
    pub headers: Vec<String>,
    /// The body, whether sent with a length or chunked.
    pub body: Vec<u8>,
}

impl Request {
    pub fn read(conn: &TcpStream) -> std::io::Result<Request> {
        let mut reader = BufReader::new(conn.try_clone()?);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header)? == 0 || header == "\r\n" {
                break;
            }
            headers.push(header.trim_end().to_ascii_lowercase());
        }
        let mut request = Request {
            line: line.trim_end().to_string(),
            headers,
            body: Vec::new(),
        };
        if request
            .header("transfer-encoding")
            .is_some_and(|v| v.contains("chunked"))
        {
            loop {
                let mut size = String::new();
                reader.read_line(&mut size)?;
                let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
                let mut chunk = vec![0; n + 2];
                reader.read_exact(&mut chunk)?;
                if n == 0 {
                    break;
                }
                request.body.extend_from_slice(&chunk[..n]);
            }
        } else {
            let length = request.header("content-length").and_then(|v| v.parse().ok());
            request.body.resize(length.unwrap_or(0), 0);
            reader.read_exact(&mut request.body)?;
        }
        Ok(request)
    }

    pub fn method(&self) -> &str {
        self.line.split_whitespace().next().unwrap_or("")
    }

    pub fn path(&self) -> &str {
        self.line.split_whitespace().nth(1).unwrap_or("")
    }

    /// The (lower-cased) value of the first header called `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|h| {
            let (key, value) = h.split_once(':')?;
            (key == name).then(|| value.trim())
        })
    }

    /// The body as JSON, `Null` when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// What a mock API was asked, in order (the user texts of the turns).
#[derive(Clone, Default)]
pub struct Prompts(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl Prompts {
    pub fn push(&self, prompt: String) {
        self.0.lock().unwrap().push(prompt);
    }

    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// A mock model API on loopback: `answer` replies to each request and
/// records the prompts it was asked.
pub struct MockApi {
    /// Where it listens, `base` (`/v1`) included.
    pub url: String,
    pub prompts: Prompts,
}

impl MockApi {
    pub fn start(base: &str, answer: impl Fn(&Request, &Prompts) -> Reply + Send + Sync + 'static) -> MockApi {
        let prompts = Prompts::default();
        let seen = prompts.clone();
        let url = format!("{}{base}", serve(move |r| answer(r, &seen)));
        MockApi { url, prompts }
    }
}

/// A mock API's answer to one request.
pub struct Reply {
    pub status: &'static str,
    pub kind: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn ok(kind: &'static str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status: "200 OK",
            kind,
            body: body.into(),
        }
    }

    pub fn not_found() -> Reply {
        Reply {
            status: "404 Not Found",
            kind: "application/json",
            body: b"{}".to_vec(),
        }
    }
}

/// Serves `answer` on a loopback port, a thread per connection, one
/// request each; returns `http://127.0.0.1:PORT`.
pub fn serve(answer: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let answer = std::sync::Arc::new(answer);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let answer = answer.clone();
            std::thread::spawn(move || {
                let _ = Request::read(&conn).and_then(|r| respond(conn, &answer(&r)));
            });
        }
    });
    url
}

fn respond(mut conn: TcpStream, reply: &Reply) -> std::io::Result<()> {
    write!(
        conn,
        "HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        reply.status,
        reply.kind,
        reply.body.len()
    )?;
    conn.write_all(&reply.body)?;
    conn.flush()
}

/// Waits until `f` holds, at most `patience`; on time out, says what the
/// run was doing (its events and its screen).
pub fn wait(home: &Home, run: &str, patience: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    let mut pause = Duration::from_millis(10);
    while !f() {
        if start.elapsed() > patience {
            let events: Vec<String> = home.events(run).iter().map(Value::to_string).collect();
            panic!(
                "timed out waiting until {what}\nevents:\n{}\nscreen:\n{}",
                events.join("\n"),
                home.logs(run)
            );
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

/// `(seq, status, why)` of the run's `STATUS` events after `seq`.
pub fn statuses_after(home: &Home, run: &str, after: i64) -> Vec<(i64, String, String)> {
    home.events(run)
        .into_iter()
        .filter(|e| e["kind"] == "STATUS" && e["seq"].as_i64() > Some(after))
        .map(|e| {
            let s = |k: &str| e["data"][k].as_str().unwrap_or_default().to_string();
            (e["seq"].as_i64().unwrap_or_default(), s("status"), s("why"))
        })
        .collect()
}

/// Why the run's status last changed (`hook Stop`), or "".
pub fn last_status_why(home: &Home, run: &str) -> String {
    statuses_after(home, run, -1)
        .pop()
        .map(|(_, _, why)| why)
        .unwrap_or_default()
}

/// The highest event sequence number of the run so far.
pub fn last_seq(home: &Home, run: &str) -> i64 {
    home.events(run)
        .iter()
        .filter_map(|e| e["seq"].as_i64())
        .max()
        .unwrap_or(0)
}

/// The hook events a run recorded, by name.
pub fn hooks(home: &Home, run: &str) -> Vec<String> {
    home.events(run)
        .iter()
        .filter(|e| e["kind"] == "HOOK")
        .map(|e| e["data"]["event"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// `agents transcript ID --json`: one message per line; none while the
/// run or session has no transcript yet.
pub fn transcript(home: &Home, id: &str) -> Vec<Value> {
    let out = home.run(&["transcript", id, "--json"]);
    if !out.status.success() {
        return Vec::new();
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

pub fn has_message(messages: &[Value], role: &str, text: &str) -> bool {
    messages.iter().any(|m| m["role"] == role && m["text"] == text)
}

/// The transcript's call of `tool`, after checking that a result holding
/// `result_has` follows it and that a reply's tokens were read (the mocks
/// count 7 output tokens): the call, for its input.
pub fn the_call(messages: &[Value], tool: &str, result_has: &str) -> Value {
    let call = the_call_without_tokens(messages, tool, result_has);
    assert!(
        messages.iter().any(|m| m["usage"]["output"] == 7),
        "the reply's tokens are read: {messages:?}"
    );
    call
}

/// `the_call`, for a harness that records no tokens.
pub fn the_call_without_tokens(messages: &[Value], tool: &str, result_has: &str) -> Value {
    let call = messages
        .iter()
        .find(|m| m["tool_calls"][0]["name"] == tool)
        .unwrap_or_else(|| panic!("a call of {tool} is in the transcript: {messages:?}"));
    let result = |m: &&Value| m["role"] == "tool" && m["text"].as_str().is_some_and(|t| t.contains(result_has));
    assert!(messages.iter().any(|m| result(&m)), "its result: {messages:?}");
    call["tool_calls"][0].clone()
}

/// A draft typed into the run's input box through `agents attach` holds a
/// prompt sent with `agents send` (it says so, and waits held); once the
/// user erases the draft the prompt goes in, alone, and is answered (the
/// mocks reply `Mock reply to: <the text>`). `input` reads the input's
/// text off the screen's lines, `None` while no input shows; `erase` are
/// the keys that erase the whole draft, typed at once.
pub fn a_draft_holds_a_prompt(home: &Home, run: &str, input: impl Fn(&[String]) -> Option<String>, erase: &[u8]) {
    a_draft_holds_a_prompt_till_erased(home, run, input, erase);
    wait(
        home,
        run,
        Duration::from_secs(45),
        "the prompt goes in once the draft is erased",
        || has_message(&transcript(home, run), "assistant", "Mock reply to: QUEUED-ONE"),
    );
    let messages = transcript(home, run);
    let sent: Vec<&Value> = messages.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(
        sent.last().map(|m| &m["text"]),
        Some(&Value::from("QUEUED-ONE")),
        "alone: {messages:?}"
    );
}

/// `a_draft_holds_a_prompt` up to the draft's erasing, for a harness
/// whose transcript shows the prompt's answer only later: the caller
/// checks that `QUEUED-ONE` went in, alone.
pub fn a_draft_holds_a_prompt_till_erased(
    home: &Home,
    run: &str,
    input: impl Fn(&[String]) -> Option<String>,
    erase: &[u8],
) {
    let draft = "my half written dra";
    super::pty::type_through_attach(
        home,
        run,
        |l| input(l).is_some_and(|t| t.is_empty()),
        draft.as_bytes(),
        |l| input(l).is_some_and(|t| t == draft),
    );
    // The user stops typing; the run falls idle, so the prompt is tried
    // at once.
    wait(
        home,
        run,
        Duration::from_secs(45),
        "the run at rest after the typing",
        || at_rest_for(home, run, 1000),
    );
    let sent = home.ok(&["send", run, "QUEUED-ONE"]);
    assert!(
        sent.starts_with("held: the input has text the user typed"),
        "{sent}, the screen:\n{}",
        home.logs(run)
    );
    let waiting = home.show(run)["waiting"].clone();
    assert_eq!(waiting[0]["held"], true, "{waiting}");
    super::pty::type_through_attach(
        home,
        run,
        |l| input(l).is_some_and(|t| t == draft),
        erase,
        |l| input(l).is_some_and(|t| t.is_empty()),
    );
}

/// A resumed run (`again`, started by `agents sessions resume SESSION`)
/// goes on with the session in its own file: it is the session's run, its
/// history shows `earlier` once its input is up (`up`), a prompt sent to it
/// is answered in the session's transcript and written to `file`, each of
/// the session's `prompts` (and the new one) is in it once, and the turn
/// ends. `prompts` are those the session had; the mocks reply `Mock reply
/// to: <the text>`.
pub fn resumed_in_its_file(
    home: &Home,
    again: &str,
    session: &str,
    file: &Path,
    prompts: &[&str],
    up: impl Fn() -> bool,
) {
    assert_eq!(home.show(again)["session_id"], session);
    let earlier = prompts.first().copied().unwrap_or_default();
    let patience = Duration::from_secs(60);
    wait(home, again, patience, "the resumed input is up", || {
        up() && home.logs(again).contains(earlier)
    });
    home.ok(&["send", again, "back again"]);
    wait(
        home,
        again,
        patience,
        "the resumed reply is in the session's transcript",
        || has_message(&transcript(home, session), "assistant", "Mock reply to: back again"),
    );
    let mut all = prompts.to_vec();
    all.push("back again");
    each_user_text_once(home, session, &all);
    assert!(
        std::fs::read_to_string(file).unwrap().contains("back again"),
        "the resume wrote to the session's own file"
    );
    wait(home, again, patience, "the resumed turn is over", up);
}

/// The command line a run was started with (`agents show`'s `command`).
pub fn argv_of(home: &Home, run: &str) -> Vec<String> {
    home.show(run)["command"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// Each of `texts` is one user message of the session's transcript, once
/// (a resume that replayed the conversation would show them twice).
pub fn each_user_text_once(home: &Home, session: &str, texts: &[&str]) {
    let whole = transcript(home, session);
    for text in texts {
        let seen = whole
            .iter()
            .filter(|m| m["role"] == "user" && m["text"] == *text)
            .count();
        assert_eq!(seen, 1, "{text} once in {whole:?}");
    }
}

/// The run is idle and its output has been still for `ms` (`agents explain
/// --json`): a person who detached and turned to another command.
pub fn at_rest_for(home: &Home, run: &str, ms: u64) -> bool {
    let explained = home.json(&["explain", run, "--json"]);
    let still = explained["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["kind"] == "output")
        .is_some_and(|e| e["age_ms"].as_u64().is_some_and(|age| age >= ms));
    explained["status"] == "idle" && still
}
