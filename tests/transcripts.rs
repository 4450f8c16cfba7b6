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

/// The tokens a Claude JSONL file records, counted the way the API bills
/// them: each response (`message.id`) once, however many lines repeat it.
/// Returns `[input, output, cache_read, cache_write]` and the models named.
fn recorded_tokens(path: &Path) -> ([i64; 4], Vec<String>) {
    let mut responses: std::collections::BTreeMap<String, [i64; 4]> = Default::default();
    let mut models = Vec::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let m = &v["message"];
        if m["usage"].is_null() {
            continue;
        }
        let n = |k: &str| m["usage"][k].as_i64().unwrap_or(0);
        let tokens = [
            n("input_tokens"),
            n("output_tokens"),
            n("cache_read_input_tokens"),
            n("cache_creation_input_tokens"),
        ];
        responses.insert(m["id"].as_str().unwrap().to_string(), tokens);
        if let Some(model) = m["model"].as_str()
            && !models.iter().any(|x| x == model)
        {
            models.push(model.to_string());
        }
    }
    let mut sum = [0; 4];
    for t in responses.values() {
        for (s, x) in sum.iter_mut().zip(t) {
            *s += x;
        }
    }
    (sum, models)
}

fn tokens_json(t: [i64; 4]) -> Value {
    serde_json::json!({ "input": t[0], "output": t[1], "cache_read": t[2], "cache_write": t[3] })
}

#[test]
fn show_totals_a_runs_tokens_with_its_subagents_share_and_an_estimate() {
    let home = Home::new();
    let run = home.start(&["cmd", "--", "true"]);
    home.wait_end(&run);
    assert!(home.show(&run).get("usage").is_none(), "no transcript, no usage");
    let files = tempfile::tempdir().unwrap();
    let session = claude_session(files.path());
    index(&home, &session, Some(&run));

    let (main, models) = recorded_tokens(&session);
    let subagent = session
        .with_extension("")
        .join(format!("subagents/agent-{AGENT}.jsonl"));
    let (sub, sub_models) = recorded_tokens(&subagent);
    assert!(
        main.iter().any(|&n| n > 0) && sub.iter().any(|&n| n > 0),
        "the fixture records usage"
    );
    let all: [i64; 4] = std::array::from_fn(|i| main[i] + sub[i]);
    let messages = home.ok(&["transcript", &run, "--json"]).lines().count() as i64;

    let usage = home.show(&run)["usage"].clone();
    assert_eq!(usage["tokens"], tokens_json(all), "{usage:#}");
    assert_eq!(usage["subagents"]["tokens"], tokens_json(sub), "{usage:#}");
    assert_eq!(usage["messages"], messages);
    assert_eq!(usage["subagents"]["messages"], 2, "the two sidechain messages");
    // Main and subagent both ran the one model the fixture names.
    assert_eq!(models, sub_models);
    assert_eq!(models.len(), 1);
    let by_model = usage["models"].as_array().unwrap();
    assert_eq!(by_model.len(), 1);
    assert_eq!(by_model[0]["model"], models[0].as_str());
    assert_eq!(by_model[0]["tokens"], tokens_json(all));
    // `claude-opus-4-8` is priced by the built-in `claude-opus-4` entry.
    assert_eq!(by_model[0]["price"], "claude-opus-4");
    let cost = usage["estimated_cost_usd"].as_f64().expect("a priced model has a cost");
    assert!(cost > 0.0);
    assert_eq!(by_model[0]["estimated_cost_usd"].as_f64(), Some(cost));

    let text = home.ok(&["show", &run]);
    let line = text.lines().find(|l| l.starts_with("tokens")).expect("a tokens line");
    assert!(
        line.contains(&format!("{} in · {} out", all[0], all[1])) && line.contains("— est. $"),
        "{line}"
    );
    assert!(text.contains(&format!("subagents: {} in", sub[0])), "{text}");
}

#[test]
fn prices_in_config_replace_the_built_in_estimate() {
    let price = [2.0, 10.0, 0.5, 4.0];
    let home = Home::with_config(&format!(
        "[prices.\"claude-opus-4-8\"]\ninput = {}\noutput = {}\ncache_read = {}\ncache_write = {}\n",
        price[0], price[1], price[2], price[3]
    ));
    let run = home.start(&["cmd", "--", "true"]);
    home.wait_end(&run);
    let files = tempfile::tempdir().unwrap();
    let session = claude_session(files.path());
    index(&home, &session, Some(&run));
    let (main, _) = recorded_tokens(&session);
    let (sub, _) = recorded_tokens(
        &session
            .with_extension("")
            .join(format!("subagents/agent-{AGENT}.jsonl")),
    );
    let expected: f64 = (0..4).map(|i| (main[i] + sub[i]) as f64 * price[i]).sum::<f64>() / 1e6;

    let usage = home.show(&run)["usage"].clone();
    assert_eq!(usage["models"][0]["price"], "claude-opus-4-8");
    let cost = usage["estimated_cost_usd"].as_f64().unwrap();
    assert!((cost - expected).abs() < 1e-12, "{cost} != {expected}");

    // A price that is not one is refused when the config is read.
    std::fs::write(
        home.config.path().join("agents/config.toml"),
        "[prices.\"claude-opus-4-8\"]\ninput = -2\noutput = 10\ncache_read = 0.5\ncache_write = 4\n",
    )
    .unwrap();
    let doctor = home.run(&["doctor"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&doctor.stdout),
        String::from_utf8_lossy(&doctor.stderr)
    );
    assert!(said.contains("prices.\"claude-opus-4-8\": input = -2"), "{said}");
    // The daemon keeps the last valid prices.
    let cost_after = home.show(&run)["usage"]["estimated_cost_usd"].as_f64().unwrap();
    assert_eq!(cost_after, cost);
}
