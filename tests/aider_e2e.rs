//! End to end with the real aider: `agents run aider` in a PTY, in a git
//! repository, with `--model openai/mock --openai-api-base` pointing at a
//! small mock of the OpenAI chat completions API on loopback (streamed).
//! Only the model is mocked.
//!
//! What it proves: the run records aider's version; a prompt sent with
//! `agents send` is typed into aider's prompt and submitted; aider appends
//! the exchange to the repository's `.aider.chat.history.md`, which reads
//! back (`read_file`) as the prompt, the reply and aider's token notice;
//! `/exit` ends the run `succeeded`.
//!
//! Needs aider: `AGENTS_TEST_AIDER=/path/to/aider` (`.ci/run` installs
//! `aider-chat` from PyPI into a venv and sets it, with
//! `AGENTS_REQUIRE_AIDER=1` so a missing aider fails instead of skipping).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agents::transcript::{Format, read_file};
use common::Home;
use serde_json::{Value, json};

/// The version the fixture was recorded with and `.ci/run` installs.
const PINNED: &str = "0.86.2";

fn aider_binary() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("AGENTS_TEST_AIDER")?);
    path.is_file().then_some(path)
}

/// A mock `POST /v1/chat/completions`: `Mock reply to: <the first line of
/// the last user message>`, streamed in two deltas and a usage chunk.
struct MockApi {
    url: String,
    prompts: Arc<Mutex<Vec<String>>>,
}

impl MockApi {
    fn start() -> MockApi {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let prompts = Arc::new(Mutex::new(Vec::new()));
        let seen = prompts.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let seen = seen.clone();
                std::thread::spawn(move || {
                    let _ = answer(conn, &seen);
                });
            }
        });
        MockApi { url, prompts }
    }
}

/// One request, one response, then the connection closes.
fn answer(conn: TcpStream, prompts: &Mutex<Vec<String>>) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut conn = conn;
    if !request_line.starts_with("POST /v1/chat/completions ") {
        return write!(
            conn,
            "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
        );
    }
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let prompt = req["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .and_then(|c| c.lines().next())
        .unwrap_or_default()
        .to_string();
    prompts.lock().unwrap().push(prompt.clone());
    let text = format!("Mock reply to: {prompt}");
    let (head, tail) = text.split_at(text.len() / 2);
    let chunk = |choices: Value, usage: Value| {
        json!({ "id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0,
                "model": "mock", "choices": choices, "usage": usage })
    };
    let events = [
        chunk(
            json!([{ "index": 0, "delta": { "role": "assistant", "content": head }, "finish_reason": null }]),
            Value::Null,
        ),
        chunk(
            json!([{ "index": 0, "delta": { "content": tail }, "finish_reason": null }]),
            Value::Null,
        ),
        chunk(
            json!([{ "index": 0, "delta": {}, "finish_reason": "stop" }]),
            Value::Null,
        ),
        chunk(
            json!([]),
            json!({ "prompt_tokens": 700, "completion_tokens": 9, "total_tokens": 709 }),
        ),
    ];
    let mut payload: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    payload.push_str("data: [DONE]\n\n");
    write!(
        conn,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        payload.len()
    )?;
    conn.write_all(payload.as_bytes())?;
    conn.flush()
}

/// How long a step of a real aider may take: its imports take seconds, and
/// CI is a busy 2-core machine.
const PATIENCE: Duration = Duration::from_secs(45);

fn wait(home: &Home, run: &str, what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    let mut pause = Duration::from_millis(10);
    while !f() {
        assert!(
            start.elapsed() < PATIENCE,
            "timed out waiting until {what}\nscreen:\n{}",
            home.logs(run)
        );
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

#[test]
fn a_real_aider_run_takes_a_prompt_and_writes_its_chat_history() {
    let Some(aider) = aider_binary() else {
        assert!(
            std::env::var_os("AGENTS_REQUIRE_AIDER").is_none(),
            "AGENTS_REQUIRE_AIDER is set but AGENTS_TEST_AIDER names no file"
        );
        eprintln!("skipped: set AGENTS_TEST_AIDER to an aider {PINNED} binary to run this test");
        return;
    };
    let api = MockApi::start();
    let user_home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(project.path()).unwrap();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(["-c", "user.email=ci@agents.invalid", "-c", "user.name=ci"])
            .args(args)
            .current_dir(&cwd)
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(cwd.join("hello.py"), "print(\"hi\")\n").unwrap();
    git(&["add", "hello.py"]);
    git(&["commit", "-qm", "init"]);
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&aider, bin.path().join("aider")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );

    let home = Home::new();
    let out = home
        .cmd(&[
            "run",
            "-d",
            "aider",
            "--size",
            "120x40",
            // litellm fetches its model price list from GitHub at start
            // unless told to use the copy it ships.
            "--env",
            "LITELLM_LOCAL_MODEL_COST_MAP",
            "--",
            "--model",
            "openai/mock",
            "--openai-api-base",
            &api.url,
            "--openai-api-key",
            "sk-mock",
            "--no-check-update",
            "--analytics-disable",
            "--no-show-model-warnings",
            "--no-show-release-notes",
            "--no-gitignore",
            "--no-auto-commits",
            "--yes-always",
            "hello.py",
        ])
        .current_dir(&cwd)
        .env("PATH", &path)
        .env("HOME", user_home.path())
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(home.show(&id)["harness_version"], PINNED);
    wait(&home, &id, "aider's prompt is up", || {
        home.logs(&id).lines().any(|l| l.trim_end() == ">")
    });

    home.ok(&["send", &id, "what does hello.py print?"]);
    wait(&home, &id, "the reply is on the screen", || {
        home.logs(&id).contains("Mock reply to: what does hello.py print?")
    });
    assert_eq!(*api.prompts.lock().unwrap(), ["what does hello.py print?"]);
    let history = cwd.join(".aider.chat.history.md");
    wait(&home, &id, "the exchange is in the chat history", || {
        std::fs::read_to_string(&history).is_ok_and(|h| h.contains("Tokens:"))
    });
    let b = read_file(&history, Format::Aider).unwrap();
    let said: Vec<(&str, &str)> = b
        .messages
        .iter()
        .filter(|m| m.role.as_str() != "system")
        .map(|m| (m.role.as_str(), m.text.as_str()))
        .collect();
    assert_eq!(
        said,
        [
            ("user", "what does hello.py print?"),
            ("assistant", "Mock reply to: what does hello.py print?"),
        ],
        "{b:?}"
    );
    // aider counts the tokens itself when the stream has no usage it asked
    // for: some sent, some received.
    assert!(b.usage.input > 0 && b.usage.output > 0, "{:?}", b.usage);

    home.ok(&["send", &id, "/exit"]);
    let ended = home.wait_end(&id);
    assert_eq!(ended["state"], "succeeded", "{ended}");
}
