//! `agents mcp` through the real binary, driven by a scripted MCP client:
//! raw JSON-RPC lines on the server's stdin and stdout, as an agent's MCP
//! client speaks them (handshake, tools/list, tools/call).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use common::{Home, PATIENCE, wait_until};
use serde_json::{Value, json};

/// The tools the server offers: the tool table, one tool per method.
const TOOLS: [&str; 20] = [
    "mail_read",
    "mail_send",
    "mail_wait",
    "run_answer",
    "run_cancel",
    "run_lineage",
    "run_logs",
    "run_prompts",
    "run_rename",
    "run_send",
    "run_show",
    "run_start",
    "run_wait",
    "runs_list",
    "sessions_list",
    "sessions_show",
    "team_show",
    "team_start",
    "transcript_read",
    "transcripts_search",
];

/// A scripted MCP client of `agents mcp`.
struct McpClient {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Every stdout line, parsed; `Err` holds a line that is not JSON.
    lines: mpsc::Receiver<Result<Value, String>>,
    next_id: u64,
}

impl McpClient {
    fn start(home: &Home) -> McpClient {
        McpClient::start_with(home, &[])
    }

    fn start_with(home: &Home, env: &[(String, String)]) -> McpClient {
        let mut child = home
            .cmd(&["mcp"])
            .envs(env.iter().cloned())
            .current_dir(home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn agents mcp");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let parsed = serde_json::from_str::<Value>(&line).map_err(|_| line);
                if tx.send(parsed).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        McpClient {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to agents mcp");
        stdin.flush().expect("flush to agents mcp");
    }

    /// Sends a request and returns the whole response message.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = match self.lines.recv_timeout(left) {
                Ok(Ok(message)) => message,
                Ok(Err(line)) => panic!("agents mcp wrote a line that is not JSON-RPC on stdout: {line:?}"),
                Err(_) => panic!("no answer to {method} within {PATIENCE:?}"),
            };
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    fn notify(&mut self, method: &str) {
        self.send(json!({ "jsonrpc": "2.0", "method": method }));
    }

    /// The handshake: initialize, then the initialized notification.
    fn initialize(&mut self) -> Value {
        let answer = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "scripted-test-client", "version": "1.0" }
            }),
        );
        self.notify("notifications/initialized");
        answer["result"].clone()
    }

    /// `tools/call`: the result object (a JSON-RPC error fails the test).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.request("tools/call", json!({ "name": tool, "arguments": arguments }));
        assert!(answer.get("error").is_none(), "{tool} {arguments}: {answer}");
        answer["result"].clone()
    }

    /// A call that must succeed: its structured content.
    fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_eq!(result["isError"], false, "{tool} {arguments}: {result}");
        // The same JSON as text, for clients that only read text.
        let text = result["content"][0]["text"].as_str().expect("text content");
        if tool != "run_logs" {
            assert_eq!(
                serde_json::from_str::<Value>(text).unwrap(),
                result["structuredContent"]
            );
        }
        result["structuredContent"].clone()
    }

    /// A call that must fail with `code`: its message.
    fn fails(&mut self, tool: &str, arguments: Value, code: &str) -> String {
        let result = self.call(tool, arguments.clone());
        assert_eq!(result["isError"], true, "{tool} {arguments}: {result}");
        let text = result["content"][0]["text"].as_str().expect("text content");
        assert!(text.starts_with(&format!("{code}: ")), "{tool} {arguments}: {text}");
        assert_eq!(result["structuredContent"]["code"], code, "{result}");
        result["structuredContent"]["message"].as_str().unwrap().to_string()
    }

    fn state(&mut self, run: &str) -> String {
        self.ok("run_show", json!({ "run": run }))["state"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Closes stdin, as a client that goes away does; the server must exit 0.
    fn close(mut self) {
        drop(self.stdin.take());
        let mut status = None;
        wait_until("agents mcp exits after stdin closes", PATIENCE, &mut || {
            status = self.child.try_wait().expect("try_wait");
            status.is_some()
        });
        assert!(status.unwrap().success(), "agents mcp exited with {status:?}");
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[test]
fn an_mcp_client_starts_steers_reads_and_cancels_runs() {
    let home = Home::new();
    let mut mcp = McpClient::start(&home);

    let info = mcp.initialize();
    assert_eq!(info["protocolVersion"], "2025-06-18", "{info}");
    assert_eq!(info["serverInfo"]["name"], "agents", "{info}");
    assert!(info["capabilities"]["tools"].is_object(), "{info}");

    let listed = mcp.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().expect("tools").clone();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, TOOLS);
    for tool in &tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()), "{tool}");
    }
    let start_schema = &tools.iter().find(|t| t["name"] == "run_start").unwrap()["inputSchema"];
    assert_eq!(start_schema["required"], json!(["harness"]), "{start_schema}");

    // A run that waits for a line: start it, send the line, see it answer.
    let echo = mcp.ok(
        "run_start",
        json!({ "harness": "cmd", "args": ["sh", "-c", "read x; echo got:$x"], "name": "echo" }),
    );
    let echo_id = echo["id"].as_str().expect("run id").to_string();
    assert_eq!(echo["harness"], "cmd");
    assert_eq!(echo["cwd"], home.path().to_str().unwrap(), "the server's cwd");
    let sent = mcp.ok("run_send", json!({ "run": "echo", "text": "hello", "prompt_id": "p1" }));
    assert_eq!(sent["prompt_id"], "p1");
    wait_until("the echo run succeeds", PATIENCE, &mut || {
        mcp.state(&echo_id) == "succeeded"
    });
    let shown = mcp.ok("run_show", json!({ "run": echo_id }));
    assert_eq!(shown["exit_code"], 0, "{shown}");
    let logs = mcp.ok("run_logs", json!({ "run": "echo" }));
    let lines: Vec<&str> = logs["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert!(lines.contains(&"got:hello"), "{lines:?}");
    let waited = mcp.ok("run_wait", json!({ "run": "echo" }));
    assert_eq!(
        (waited["ended"].clone(), waited["run"]["state"].clone()),
        (json!(true), json!("succeeded"))
    );
    // The same record the CLI sees: one daemon, one tool table.
    assert_eq!(home.state(&echo_id), "succeeded");
    // An ended run takes no more input.
    mcp.fails("run_send", json!({ "run": echo_id, "text": "again" }), "not_running");

    // A long run, cancelled.
    let sleeper = mcp.ok(
        "run_start",
        json!({ "harness": "cmd", "args": ["sleep", "600"], "name": "sleeper" }),
    );
    let sleeper_id = sleeper["id"].as_str().unwrap().to_string();
    wait_until("the sleeper runs", PATIENCE, &mut || {
        mcp.state(&sleeper_id) == "running"
    });
    let live = mcp.ok("runs_list", json!({ "state": "live" }));
    let live_ids: Vec<&str> = live["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(live_ids, [sleeper_id.as_str()]);
    // No question on its screen: nothing to answer.
    mcp.fails("run_answer", json!({ "run": "sleeper", "answer": "yes" }), "conflict");
    // An agent inside the sleeper run starts its own MCP server: what that
    // server starts is the sleeper's child (AGENTS_RUN_ID), and is
    // cancelled with it.
    let mut inner = McpClient::start_with(&home, &home.run_env(&sleeper_id));
    inner.initialize();
    let child = inner.ok(
        "run_start",
        json!({ "harness": "cmd", "args": ["sleep", "600"], "name": "child" }),
    );
    assert_eq!(child["parent_id"], sleeper_id.as_str(), "{child}");
    inner.close();
    let child_id = child["id"].as_str().unwrap().to_string();
    let cancelled = mcp.ok("run_cancel", json!({ "run": "sleeper" }));
    assert_eq!(cancelled["ended"], true, "{cancelled}");
    assert_eq!(cancelled["run"]["state"], "cancelled", "{cancelled}");
    assert!(
        cancelled["cancelling"].as_array().unwrap().contains(&json!(child_id)),
        "{cancelled}"
    );
    assert_eq!(home.state(&sleeper_id), "cancelled");
    wait_until("the child is cancelled too", PATIENCE, &mut || {
        mcp.state(&child_id) == "cancelled"
    });

    // Filters: state, host, limit; newest first.
    let all = mcp.ok("runs_list", json!({}));
    let all_ids: Vec<&str> = all["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(all_ids, [child_id.as_str(), sleeper_id.as_str(), echo_id.as_str()]);
    let succeeded = mcp.ok("runs_list", json!({ "state": "succeeded", "host": "local" }));
    assert_eq!(succeeded["runs"].as_array().unwrap().len(), 1);
    assert_eq!(succeeded["runs"][0]["id"], echo_id.as_str());
    assert_eq!(
        mcp.ok("runs_list", json!({ "limit": 1 }))["runs"][0]["id"],
        child_id.as_str()
    );
    mcp.fails("runs_list", json!({ "host": "elsewhere" }), "unknown_host");

    // A cmd run has no transcript: a typed error, not an empty page.
    let message = mcp.fails("transcript_read", json!({ "id": echo_id }), "unknown_session");
    assert!(message.contains("no transcript"), "{message}");
    // Once the harness layer indexes one for it, the run's transcript reads
    // and searches like `agents transcript` and `agents search`.
    let files = tempfile::tempdir().unwrap();
    index_claude_fixture(&home, files.path(), &echo_id);
    let page = mcp.ok("transcript_read", json!({ "id": "echo", "limit": 3 }));
    assert_eq!(page["session"]["session_id"], SESSION, "{page}");
    assert_eq!(page["messages"].as_array().unwrap().len(), 3);
    assert_eq!(page["messages"][0]["text"], "hello");
    assert_eq!(page["more"], true);
    let hits = mcp.ok("transcripts_search", json!({ "query": "zebrafish" }));
    assert!(
        hits["hits"]
            .as_array()
            .is_some_and(|h| !h.is_empty() && h[0]["run_id"] == echo_id.as_str()),
        "{hits}"
    );

    // The conversation as a session record, and the tree around a run.
    let session = mcp.ok("sessions_show", json!({ "session": &SESSION[..8] }));
    assert_eq!(session["id"], SESSION, "{session}");
    assert_eq!(session["runs"][0]["id"], echo_id.as_str(), "{session}");
    assert_eq!(session["runs"][0]["relation"], "started", "{session}");
    let tree = mcp.ok("run_lineage", json!({ "run": "child" }));
    assert_eq!(tree["focus"], child_id.as_str(), "{tree}");
    assert_eq!(tree["root"]["id"], sleeper_id.as_str(), "{tree}");
    assert_eq!(tree["root"]["children"][0]["id"], child_id.as_str(), "{tree}");
    assert_eq!(tree["root"]["children"][0]["edge"], "child", "{tree}");

    // A box asked for by name (recorded, boxed or blocked where bubblewrap
    // is missing); a mode it does not know is refused.
    let boxed = mcp.ok(
        "run_start",
        json!({ "harness": "cmd", "args": ["true"], "sandbox": "offline", "name": "boxed" }),
    );
    assert_eq!(boxed["sandbox"], "offline", "{boxed}");
    mcp.fails(
        "run_start",
        json!({ "harness": "cmd", "args": ["true"], "sandbox": "maybe" }),
        "bad_request",
    );
    mcp.close();
}

#[test]
fn failures_are_typed_tool_errors_and_only_protocol_faults_are_json_rpc_errors() {
    let home = Home::new();
    let mut mcp = McpClient::start(&home);
    mcp.initialize();

    // The daemon's typed errors, code first.
    let message = mcp.fails("run_show", json!({ "run": "no-such-run" }), "unknown_run");
    assert!(message.contains("no-such-run"), "{message}");
    mcp.fails("run_cancel", json!({ "run": "no-such-run" }), "unknown_run");
    mcp.fails("run_logs", json!({ "run": "no-such-run" }), "unknown_run");

    // Arguments that do not fit the schema: `bad_request`, readable by the
    // calling model (MCP 2025-11-25: input validation is a tool error).
    let missing = mcp.fails("run_show", json!({}), "bad_request");
    assert!(missing.contains("run"), "{missing}");
    mcp.fails("run_send", json!({ "run": "x", "text": 5 }), "bad_request");
    mcp.fails("run_cancel", json!({ "run": "x", "forse": true }), "bad_request");
    let state = mcp.fails("runs_list", json!({ "state": "finished" }), "bad_request");
    assert!(state.contains("succeeded"), "{state}");
    mcp.fails(
        "run_start",
        json!({ "harness": "cmd", "args": ["true"], "model": "opus" }),
        "bad_request",
    );

    // A run that cannot start is recorded as blocked, and says why.
    let blocked = mcp.call("run_start", json!({ "harness": "cmd" }));
    assert_eq!(blocked["isError"], true, "{blocked}");
    assert_eq!(blocked["structuredContent"]["code"], "blocked", "{blocked}");
    assert_eq!(blocked["structuredContent"]["run"]["state"], "blocked", "{blocked}");
    let blocked_id = blocked["structuredContent"]["run"]["id"].as_str().unwrap();
    assert_eq!(home.state(blocked_id), "blocked");

    // Protocol faults stay JSON-RPC errors: an unknown tool, an unknown method.
    let unknown_tool = mcp.request("tools/call", json!({ "name": "runs_explode", "arguments": {} }));
    assert_eq!(unknown_tool["error"]["code"], -32602, "{unknown_tool}");
    let unknown_method = mcp.request("runs/list", json!({}));
    assert_eq!(unknown_method["error"]["code"], -32601, "{unknown_method}");

    mcp.fails(
        "sessions_show",
        json!({ "session": "no-such-session" }),
        "unknown_session",
    );
    mcp.fails("run_lineage", json!({ "run": "no-such-run" }), "unknown_run");

    // Still serving after all of that.
    assert_eq!(mcp.ok("sessions_list", json!({}))["sessions"], json!([]));
    mcp.close();
}

const SESSION: &str = "11111111-2222-4333-8444-555555555555";

/// The Claude fixture session indexed for `run` and linked to it, as the
/// harness layer does when a hook names the file.
fn index_claude_fixture(home: &Home, dir: &Path, run: &str) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts/claude");
    let project = dir.join("projects/-home-user-project");
    std::fs::create_dir_all(&project).unwrap();
    let session: PathBuf = project.join(format!("{SESSION}.jsonl"));
    std::fs::copy(from.join(format!("{SESSION}.jsonl")), &session).unwrap();
    let mut conn = agents::store::open_migrated(&home.path().join("agents.db")).unwrap();
    agents::transcript::index::index_transcript(&mut conn, &session, SESSION, Some(run)).unwrap();
    let path = session.to_string_lossy();
    agents::store::harness::learn_session(&conn, run, "claude", SESSION, Some(&path), "hook").unwrap();
}

/// An agent that speaks MCP mails another run as itself (its server's
/// `AGENTS_RUN_ID`), and reads the answer's thread back.
#[test]
fn mail_send_and_read_over_mcp_speak_as_the_servers_run() {
    let home = Home::new();
    let reader = home.start(&["--name", "reader", "demo"]);
    let writer = home.start(&["--name", "writer", "demo"]);
    let mut mcp = McpClient::start_with(&home, &home.run_env(&writer));
    mcp.initialize();
    let sent = mcp.ok(
        "mail_send",
        json!({ "to": "reader", "body": "look at lib.rs", "id": "m1" }),
    );
    assert_eq!(
        (sent["id"].as_str(), sent["from_name"].as_str()),
        (Some("m1"), Some("writer"))
    );
    let again = mcp.ok(
        "mail_send",
        json!({ "to": "reader", "body": "look at lib.rs", "id": "m1" }),
    );
    assert_eq!(again["id"], "m1", "the same message");
    let reply = mcp.ok(
        "mail_send",
        json!({ "to": "reader", "body": "and main.rs", "in_reply_to": "m1" }),
    );
    assert_eq!(reply["thread"], "m1");
    let one = mcp.ok("mail_read", json!({ "id": "m1" }));
    assert_eq!(one["body"], "look at lib.rs");
    let listed = mcp.ok("mail_read", json!({ "run": reader }));
    assert_eq!(listed["result"].as_array().map(Vec::len), Some(2), "{listed}");
    home.wait_until("delivered once", || {
        home.prompts(&reader).iter().filter(|p| p.contains("· m1]")).count() == 1
            && home.json(&["mail", "read", "m1", "--json"])["state"] == "delivered"
    });
    mcp.fails("mail_send", json!({ "to": "nobody", "body": "hi" }), "unknown_run");
}

/// An agent that reads its mail over MCP takes it with `mail_wait`: what it
/// took is never also typed into it.
#[test]
fn mail_wait_takes_the_runs_mail_and_it_is_never_typed_in_too() {
    let home = Home::new();
    // Busy with its first prompt for a while: mail to it waits queued.
    let busy = home.start(&["--name", "busy", "--prompt", "work", "demo", "--", "--think-ms", "8000"]);
    let mut mcp = McpClient::start_with(&home, &home.run_env(&busy));
    mcp.initialize();
    let none = mcp.ok("mail_wait", json!({ "timeout_secs": 1 }));
    assert_eq!(none["result"], json!([]), "nothing yet: {none}");
    // Queued while the agent thinks; taken over MCP before it is typed.
    home.wait_until("the agent at work", || home.logs(&busy).contains("> work"));
    home.ok(&["mail", "send", "busy", "read me over mcp", "--id", "w1"]);
    let taken = mcp.ok("mail_wait", json!({ "timeout_secs": 20 }));
    let ids: Vec<&str> = taken["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["w1"], "{taken}");
    assert_eq!(home.json(&["mail", "read", "w1", "--json"])["state"], "read");
    // The agent comes to rest and gets another prompt: never the mail.
    home.ok(&["send", "busy", "after"]);
    home.wait_until("the next prompt answered", || {
        home.logs(&busy).contains("you said \"after\"")
    });
    assert!(!home.logs(&busy).contains("read me over mcp"), "typed in too");
    assert_eq!(home.json(&["mail", "read", "w1", "--json"])["state"], "read");
    mcp.fails("mail_wait", json!({ "run": "nobody" }), "unknown_run");
}

#[test]
fn run_rename_gives_a_run_a_new_name_and_its_old_one_still_finds_it() {
    let home = Home::new();
    let id = home.start(&["--name", "first", "cmd", "--", "sleep", "60"]);
    home.start(&["--name", "other", "cmd", "--", "sleep", "60"]);
    let mut mcp = McpClient::start(&home);
    mcp.initialize();

    let renamed = mcp.ok("run_rename", json!({ "run": "first", "name": "second" }));
    assert_eq!(renamed["id"], id.as_str());
    assert_eq!(renamed["name"], "second");
    assert_eq!(renamed["former_names"], json!(["first"]));
    assert_eq!(mcp.ok("run_show", json!({ "run": "first" }))["id"], id.as_str());

    let taken = mcp.fails("run_rename", json!({ "run": "other", "name": "second" }), "conflict");
    assert!(taken.contains("is named 'second' already"), "{taken}");
    mcp.fails(
        "run_rename",
        json!({ "run": "other", "name": "two words" }),
        "bad_request",
    );
}

/// A prompt waiting for a working agent is listed over MCP with why it
/// waits, rewritten and dropped; one no longer waiting is refused.
#[test]
fn run_prompts_lists_edits_and_drops_a_waiting_prompt() {
    let home = Home::new();
    let run = home.start(&["--name", "busy", "demo", "--", "--think-ms", "60000"]);
    home.wait_until("at its prompt", || {
        home.logs(&run).contains(agents::harness::demo::PROMPT.trim_end())
    });
    home.ok(&["send", "busy", "first"]);
    home.wait_until("working on it", || {
        home.logs(&run).contains("> first") && home.show(&run)["status"] == "working"
    });
    let mut mcp = McpClient::start(&home);
    mcp.initialize();
    let sent = mcp.ok("run_send", json!({ "run": "busy", "text": "second" }));
    assert_eq!(sent["state"], "queued", "{sent}");
    let id = sent["prompt_id"].as_str().unwrap().to_string();
    let listed = mcp.ok("run_prompts", json!({ "run": "busy" }));
    let waiting = listed["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(waiting.len(), 1, "{listed}");
    assert_eq!(
        (waiting[0]["text"].as_str(), waiting[0]["why"].as_str()),
        (Some("second"), Some("the agent is working"))
    );
    mcp.ok(
        "run_prompts",
        json!({ "run": "busy", "action": "edit", "prompt": id, "text": "second, rewritten" }),
    );
    let listed = mcp.ok("run_prompts", json!({ "run": "busy", "action": "list" }));
    assert_eq!(listed["result"][0]["text"], "second, rewritten");
    mcp.ok("run_prompts", json!({ "run": "busy", "action": "drop", "prompt": id }));
    let listed = mcp.ok("run_prompts", json!({ "run": "busy" }));
    assert_eq!(listed["result"].as_array().map(Vec::len), Some(0), "{listed}");
    let refused = mcp.fails(
        "run_prompts",
        json!({ "run": "busy", "action": "drop", "prompt": id }),
        "conflict",
    );
    assert!(refused.contains("is not waiting"), "{refused}");
    assert!(home.event_kinds(&run).iter().any(|k| k == "PROMPT_DROPPED"));
}

/// Issue #34 (10): a line that is no JSON-RPC message gets JSON-RPC's
/// error at once (rmcp dropped it, and a client waiting on it hung), and
/// the server goes on serving.
#[test]
fn a_line_that_is_no_message_is_answered_with_its_json_rpc_error_and_serving_goes_on() {
    let home = Home::new();
    let mut mcp = McpClient::start(&home);
    let next_error = |mcp: &mut McpClient, line: &str| {
        let stdin = mcp.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        match mcp.lines.recv_timeout(PATIENCE) {
            Ok(Ok(message)) => message,
            other => panic!("no JSON-RPC answer to {line:?}: {other:?}"),
        }
    };
    let parse = next_error(&mut mcp, "this is not json {");
    assert_eq!(
        (parse["id"].clone(), parse["error"]["code"].clone()),
        (Value::Null, json!(-32700)),
        "{parse}"
    );
    let invalid = next_error(&mut mcp, r#"{"id": 9, "method": 3}"#);
    assert_eq!(
        (invalid["id"].clone(), invalid["error"]["code"].clone()),
        (json!(9), json!(-32600)),
        "{invalid}"
    );
    let info = mcp.initialize();
    assert_eq!(info["serverInfo"]["name"], "agents");
}

/// Issue #35 (§3): the same bad call has the same code through the CLI (its
/// exit status, and its `--json` error on stdout), the daemon's socket and
/// MCP.
#[test]
fn a_bad_call_has_one_code_through_the_cli_the_socket_and_mcp() {
    use common::serving::{paths, runtime};
    let home = Home::new();
    let live = home.start(&["--name", "sleeper", "cmd", "--", "sleep", "600"]);
    let ended = home.start(&["--name", "done", "cmd", "--", "true"]);
    home.wait_end(&ended);
    let mut mcp = McpClient::start(&home);
    mcp.initialize();
    let rt = runtime();
    let client = rt
        .block_on(agents::client::Client::connect_existing(&paths(&home), false))
        .expect("connect");
    let nobody = json!({ "run": "no-such-run" });
    // The command line; the method and its parameters, also MCP's tool's
    // arguments; the code and its exit status.
    type Call<'a> = (&'a [&'a str], &'a str, &'a str, Value, &'a str, i32);
    let calls: [Call; 5] = [
        (
            &["show", "no-such-run", "--json"],
            "runs.show",
            "run_show",
            nobody.clone(),
            "unknown_run",
            3,
        ),
        (
            &["cancel", "no-such-run"],
            "runs.cancel",
            "run_cancel",
            nobody,
            "unknown_run",
            3,
        ),
        (
            &["send", &live, ""],
            "runs.send",
            "run_send",
            json!({ "run": live, "text": "" }),
            "bad_request",
            2,
        ),
        (
            &["answer", &live, "yes"],
            "runs.answer",
            "run_answer",
            json!({ "run": live, "answer": "yes" }),
            "conflict",
            4,
        ),
        (
            &["send", &ended, "hi"],
            "runs.send",
            "run_send",
            json!({ "run": ended, "text": "hi" }),
            "not_running",
            4,
        ),
    ];
    for (cli, method, tool, params, code, exit) in calls {
        let out = home.run(cli);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(out.status.code(), Some(exit), "{cli:?}: {stderr}");
        match cli.contains(&"--json") {
            true => {
                let said: Value = serde_json::from_str(&stdout).expect("the error as JSON");
                assert_eq!(said["error"]["code"], code, "{cli:?}: {said}");
                assert!(said["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
            }
            false => assert!(stderr.starts_with("agents: ") && stdout.is_empty(), "{cli:?}: {stderr}"),
        }
        let socket = rt.block_on(client.call_raw(method, params.clone()));
        assert_eq!(socket.map_err(|e| e.code.as_str()), Err(code), "{method}");
        mcp.fails(tool, params, code);
    }
    // A start on a host nobody added: the same code three ways.
    let out = home.run(&["run", "--json", "--host", "no-such-host", "cmd", "--", "true"]);
    let said: Value = serde_json::from_slice(&out.stdout).expect("the error as JSON");
    assert_eq!(
        (out.status.code(), &said["error"]["code"]),
        (Some(3), &json!("unknown_host")),
        "{said}"
    );
    let start = json!({ "harness": "cmd", "args": ["true"], "cwd": "/", "host": "no-such-host" });
    let socket = rt.block_on(client.call_raw("runs.start", start));
    assert_eq!(socket.map_err(|e| e.code.as_str()), Err("unknown_host"));
    mcp.fails(
        "run_start",
        json!({ "harness": "cmd", "args": ["true"], "host": "no-such-host" }),
        "unknown_host",
    );
    mcp.close();
}

/// Issue #35 (§3): MCP is a thin client of the tool table. The daemon
/// picks the runs of a state or host (`runs_list` and `agents ls --state`
/// list the same) and makes a model the harness's own option (`run_start`
/// and `agents run --model` start the same command).
#[test]
fn the_daemon_picks_runs_by_state_and_makes_a_model_an_option_for_mcp_and_the_cli_alike() {
    let home = Home::with_config("[profiles.fake]\nfamily = \"codex\"\nbinary = \"/bin/echo\"\n");
    let failed = home.start(&["--name", "fails", "cmd", "--", "false"]);
    let live = home.start(&["--name", "lives", "cmd", "--", "sleep", "600"]);
    home.wait_end(&failed);
    let mut mcp = McpClient::start(&home);
    mcp.initialize();
    let ids = |runs: &Value| -> Vec<String> {
        let mut ids: Vec<String> = runs
            .as_array()
            .expect("runs")
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    for (state, want) in [("failed", &failed), ("live", &live)] {
        let listed = home.json(&["ls", "--state", state, "--json"]);
        let from_mcp = mcp.ok("runs_list", json!({ "state": state }));
        assert_eq!(ids(&listed), std::slice::from_ref(want), "{state}: {listed}");
        assert_eq!(
            ids(&from_mcp["runs"]),
            std::slice::from_ref(want),
            "{state}: {from_mcp}"
        );
    }
    assert_eq!(
        home.json(&["ls", "--host", "local", "--json"]).as_array().map(Vec::len),
        Some(1)
    );
    // A host nobody knows is a typo, said so, not an empty list.
    let out = home.run(&["ls", "--all", "--host", "box", "--json"]);
    let said: Value = serde_json::from_slice(&out.stdout).expect("the error as JSON");
    assert_eq!(
        (out.status.code(), &said["error"]["code"]),
        (Some(3), &json!("unknown_host")),
        "{said}"
    );

    let by_cli = home.start(&["--model", "o3", "fake", "--", "hello"]);
    let by_mcp = mcp.ok(
        "run_start",
        json!({ "harness": "fake", "model": "o3", "args": ["hello"] }),
    )["id"]
        .as_str()
        .unwrap()
        .to_string();
    let command = |run: &str| home.show(run)["command"].clone();
    let tail = command(&by_cli)
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .take(3)
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(
        tail,
        [json!("hello"), json!("o3"), json!("--model")],
        "{}",
        command(&by_cli)
    );
    assert_eq!(command(&by_cli), command(&by_mcp));
    mcp.close();
}
