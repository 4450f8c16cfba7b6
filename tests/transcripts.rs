//! `agents transcript` and `agents search` through the real binary: a Claude
//! session (with a subagent) indexed the way the harness layer does it,
//! read back, followed as it grows, and searched.

mod common;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;

use common::{Home, PATIENCE};
use serde_json::Value;

const SESSION: &str = "11111111-2222-4333-8444-555555555555";
const AGENT: &str = "a0b1c2d3e4f5a6b7c";

/// The fixture session and its subagent, copied where a test may append.
fn claude_session(dir: &Path) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts/claude");
    let project = dir.join("projects/-home-user-project");
    let subagents = project.join(SESSION).join("subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    let session = project.join(format!("{SESSION}.jsonl"));
    std::fs::copy(from.join(format!("{SESSION}.jsonl")), &session).unwrap();
    for f in [format!("agent-{AGENT}.jsonl"), format!("agent-{AGENT}.meta.json")] {
        std::fs::copy(from.join(SESSION).join("subagents").join(&f), subagents.join(&f)).unwrap();
    }
    session
}

/// Indexes a transcript into the home's database, as the daemon-side
/// `index_transcript` does when a hook names the file.
fn index(home: &Home, path: &Path, run: Option<&str>) {
    let mut conn = agents::store::open_migrated(&home.path().join("agents.db")).unwrap();
    agents::transcript::index::index_transcript(&mut conn, path, SESSION, run).unwrap();
}

#[test]
fn a_runs_transcript_prints_with_roles_folded_tool_calls_and_errors() {
    let home = Home::new();
    let run = home.start(&["cmd", "--", "true"]);
    home.wait_end(&run);
    let files = tempfile::tempdir().unwrap();
    index(&home, &claude_session(files.path()), Some(&run));

    let out = home.ok(&["transcript", &run]);
    assert!(
        out.starts_with(&format!("session {SESSION} (claude, claude-opus-4-8) · 14 messages")),
        "{out}"
    );
    for expected in [
        "── user · 07:48:41\nhello\n",
        "── assistant · claude-opus-4-8 · 07:48:41\nHello from the mock model.\n",
        "⏵ Bash(cargo test --quiet)\n",
        "── tool · 07:48:54 · ✗ error\ntest parser::zebrafish ... FAILED\n",
        "⏵ Agent(List the files)\n",
        "  ── assistant · agent a0b1c2d3 · claude-opus-4-8",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    // The same session by a prefix of its id.
    assert_eq!(home.ok(&["transcript", "11111111-2222"]), out);
}

#[test]
fn transcript_json_is_one_message_per_line_with_subagents_linked() {
    let home = Home::new();
    let files = tempfile::tempdir().unwrap();
    index(&home, &claude_session(files.path()), None);
    let out = home.ok(&["transcript", SESSION, "--json"]);
    let messages: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(messages.len(), 14);
    let seqs: Vec<i64> = messages.iter().map(|m| m["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (0..14).collect::<Vec<_>>());
    let call = messages
        .iter()
        .find(|m| m["tool_calls"][0]["name"] == "Agent")
        .expect("the Agent call");
    let side: Vec<&Value> = messages.iter().filter(|m| m["sidechain"] == true).collect();
    assert_eq!(side.len(), 2);
    for m in side {
        assert_eq!(m["parent_tool_use_id"], call["tool_calls"][0]["id"]);
        assert_eq!(m["agent_id"], AGENT);
    }
}

#[test]
fn follow_prints_messages_appended_to_the_transcript() {
    let home = Home::new();
    let files = tempfile::tempdir().unwrap();
    let session = claude_session(files.path());
    index(&home, &session, None);
    let mut child = home
        .cmd(&["transcript", "--follow", "--json", SESSION])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    for _ in 0..14 {
        rx.recv_timeout(PATIENCE).expect("the messages already indexed");
    }
    let line = serde_json::json!({
        "parentUuid": "sys-2", "isSidechain": false, "type": "assistant", "uuid": "u-0012",
        "timestamp": "2026-11-29T07:50:00.000Z", "sessionId": SESSION,
        "message": {"id": "msg_0006", "role": "assistant", "model": "claude-opus-4-8",
            "content": [{"type": "text", "text": "appended while followed: pangolin"}],
            "usage": {"input_tokens": 1, "output_tokens": 1}}
    });
    let mut f = std::fs::OpenOptions::new().append(true).open(&session).unwrap();
    // Half a line first: it must wait for its newline.
    let text = line.to_string();
    let (a, b) = text.split_at(text.len() / 2);
    f.write_all(a.as_bytes()).unwrap();
    f.flush().unwrap();
    f.write_all(format!("{b}\n").as_bytes()).unwrap();
    let next = rx.recv_timeout(PATIENCE).expect("the appended message");
    let m: Value = serde_json::from_str(&next).unwrap();
    assert_eq!(m["text"], "appended while followed: pangolin");
    assert_eq!(m["seq"], 14);
    let _ = child.kill();
    let _ = child.wait();
    // Search sees it too.
    let hits = home.json(&["search", "pangolin", "--json"]);
    assert_eq!(hits.as_array().unwrap().len(), 1);
}

#[test]
fn search_finds_assistant_words_and_tool_output() {
    let home = Home::new();
    let run = home.start(&["cmd", "--", "true"]);
    home.wait_end(&run);
    let files = tempfile::tempdir().unwrap();
    index(&home, &claude_session(files.path()), Some(&run));

    let hits = home.json(&["search", "flamingo", "--json"]);
    let hits = hits.as_array().unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["role"], "assistant");
    assert_eq!(hits[0]["session_id"], SESSION);
    assert_eq!(hits[0]["run_id"], run.as_str());
    assert!(hits[0]["snippet"].as_str().unwrap().contains("«flamingo»"));

    let hits = home.json(&["search", "zebrafish", "--json"]);
    assert_eq!(hits[0]["role"], "tool");

    let out = home.ok(&["search", "okapi.txt", "--in", &run]);
    assert!(out.contains(&format!("{SESSION}#")) && out.contains("«okapi"), "{out}");

    let none = home.run(&["search", "nothing-like-this"]);
    assert_eq!(none.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&none.stdout), "no matches\n");

    let bad = home.run(&["search", "--raw", "AND OR ("]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("bad search query"));
}

#[test]
fn an_unknown_transcript_is_a_one_line_error() {
    let home = Home::new();
    let out = home.run(&["transcript", "no-such-thing"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no run or transcript session matches 'no-such-thing'"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}
