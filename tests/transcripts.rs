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
    assert_eq!(hits["hits"].as_array().unwrap().len(), 1);
}

#[test]
fn search_finds_assistant_words_and_tool_output() {
    let home = Home::new();
    let run = home.start(&["cmd", "--", "true"]);
    home.wait_end(&run);
    let files = tempfile::tempdir().unwrap();
    index(&home, &claude_session(files.path()), Some(&run));

    let hits = home.json(&["search", "flamingo", "--json"]);
    assert_eq!(hits["partial"], false, "no hosts: nothing missing");
    let hits = hits["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0]["role"], "assistant");
    assert_eq!(hits[0]["session_id"], SESSION);
    assert_eq!(hits[0]["run_id"], run.as_str());
    assert!(hits[0]["snippet"].as_str().unwrap().contains("«flamingo»"));

    let hits = home.json(&["search", "zebrafish", "--json"]);
    assert_eq!(hits["hits"][0]["role"], "tool");

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

#[test]
fn ls_json_gives_each_run_the_totals_show_gives_it() {
    let home = Home::new();
    let with = home.start(&["cmd", "--", "true"]);
    let without = home.start(&["cmd", "--", "true"]);
    home.wait_end(&with);
    home.wait_end(&without);
    let files = tempfile::tempdir().unwrap();
    index(&home, &claude_session(files.path()), Some(&with));

    let shown = home.show(&with)["usage"].clone();
    assert!(shown["estimated_cost_usd"].as_f64().is_some(), "{shown:#}");
    let listed = home.json(&["ls", "--all", "--json"]);
    let entry = |id: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("{id} listed: {listed:#}"))
            .clone()
    };
    let usage = entry(&with)["usage"].clone();
    assert_eq!(usage["tokens"], shown["tokens"], "{usage:#}");
    assert_eq!(usage["estimated_cost_usd"], shown["estimated_cost_usd"], "{usage:#}");
    assert_eq!(entry(&without)["usage"], Value::Null);

    // The table shows all of a run's tokens, cache included.
    let t = &shown["tokens"];
    let total: i64 = ["input", "output", "cache_read", "cache_write"]
        .iter()
        .map(|k| t[k].as_i64().unwrap())
        .sum();
    let table = home.ok(&["ls", "--all"]);
    assert!(table.lines().next().unwrap().contains("TOKENS"), "{table}");
    let row = table
        .lines()
        .find(|l| with.starts_with(l.split_whitespace().next().unwrap()))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert!(
        cells.contains(&agents::transcript::usage::count(total).as_str()),
        "{total}: {table}"
    );
}

#[test]
fn ls_json_says_an_unpriced_models_cost_is_unknown() {
    // The main conversation names a model no price matches (its subagent
    // keeps a priced one): part of the tokens has no price, so the whole
    // estimate is unknown, not smaller.
    let home = Home::new();
    let run = home.start(&["cmd", "--", "true"]);
    home.wait_end(&run);
    let files = tempfile::tempdir().unwrap();
    let session = claude_session(files.path());
    let text = std::fs::read_to_string(&session).unwrap();
    std::fs::write(&session, text.replace("claude-opus-4-8", "mock-model-1")).unwrap();
    index(&home, &session, Some(&run));

    let shown = home.show(&run)["usage"].clone();
    let listed = home.json(&["ls", "--all", "--json"]);
    let usage = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == run.as_str())
        .unwrap()["usage"]
        .clone();
    assert_eq!(usage["tokens"], shown["tokens"], "{usage:#}");
    assert!(usage["tokens"]["input"].as_i64().unwrap() > 0);
    assert_eq!(usage["estimated_cost_usd"], Value::Null, "{usage:#}");
    assert_eq!(shown["estimated_cost_usd"], Value::Null, "{shown:#}");
}

/// A Claude message line for the fixture session, saying `text`.
fn claude_line(uuid: &str, text: &str) -> String {
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "type": "assistant", "uuid": uuid,
        "timestamp": "2026-11-29T07:50:00.000Z", "sessionId": SESSION,
        "message": {"id": format!("msg-{uuid}"), "role": "assistant", "model": "claude-opus-4-8",
            "content": [{"type": "text", "text": text}]}
    })
    .to_string()
        + "\n"
}

fn hits_for(home: &Home, words: &str) -> Vec<Value> {
    home.json(&["search", words, "--json"])["hits"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn search_finds_what_a_live_runs_transcript_just_gained_without_reading_it_first() {
    let home = Home::new();
    let run = home.start(&["cmd", "--", "sh", "-c", "read -r line"]);
    assert_eq!(home.state(&run), "running");
    // Indexed straight into the database, as if the daemon had not been
    // told of the file yet: nothing tails it.
    let files = tempfile::tempdir().unwrap();
    let session = claude_session(files.path());
    index(&home, &session, Some(&run));
    let mut f = std::fs::OpenOptions::new().append(true).open(&session).unwrap();
    f.write_all(claude_line("u-live", "just written: axolotl lantern").as_bytes())
        .unwrap();

    let hits = hits_for(&home, "axolotl lantern");
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0]["run_id"], run.as_str());
    assert_eq!(hits[0]["seq"], 14);
}

#[test]
fn a_search_answers_before_a_large_backlog_is_read_and_the_rest_follows() {
    let home = Home::new();
    let run = home.start(&["cmd", "--", "sh", "-c", "read -r line"]);
    let files = tempfile::tempdir().unwrap();
    let session = claude_session(files.path());
    index(&home, &session, Some(&run));
    // 25 MB of messages, far more than a search reads before answering
    // (4 MiB at most, however fast the machine; nothing tails the file
    // until a search hands it over): the first is found at once and the
    // answer says what it left unread; the last is found once the tailer
    // has read the rest, with no read of the transcript asked.
    let filler = "lorem ipsum ".repeat(416);
    let mut backlog = claude_line("u-first", "first of the backlog: narwhal");
    for i in 0..5000 {
        backlog += &claude_line(&format!("u-{i}"), &filler);
    }
    backlog += &claude_line("u-last", "last of the backlog: ocelot");
    let mut f = std::fs::OpenOptions::new().append(true).open(&session).unwrap();
    f.write_all(backlog.as_bytes()).unwrap();

    let first = home.json(&["search", "narwhal", "--json"]);
    assert_eq!(first["hits"].as_array().map(Vec::len), Some(1), "{first:#}");
    let unread = first["unindexed_bytes"].as_u64().unwrap();
    assert!(
        unread > 20_000_000 && unread < backlog.len() as u64,
        "the search waited for the whole backlog, or did not say what it left: {unread} of {} bytes",
        backlog.len()
    );
    home.wait_until("the rest of the backlog is indexed", || {
        hits_for(&home, "ocelot").len() == 1
    });
}

/// A stand-in for aider: answers `--version`; else appends a chat to the
/// history at the repository root (the cwd) as aider does — heading, the
/// prompt, the reply, and its token notice with the tokens it is given
/// (`aider SENT RECEIVED WORD`) — then waits for one line (`/exit`),
/// records it and exits.
fn fake_aider(dir: &Path) {
    let script = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "aider 0.86.2"; exit 0; fi
h="$PWD/.aider.chat.history.md"
{
  printf '\n# aider chat started at %s\n\n' "$(date '+%Y-%m-%d %H:%M:%S')"
  printf '#### say %s  \n\n' "$3"
  printf 'Mock reply: %s\n\n' "$3"
  printf '> Tokens: %s sent, %s received.  \n\n' "$1" "$2"
} >> "$h"
echo ready
read -r line
printf '#### %s  \n' "$line" >> "$h"
"#;
    let path = dir.join("aider");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

#[test]
fn each_aider_run_in_a_repository_keeps_the_tokens_of_its_own_chat() {
    let home = Home::new();
    let bin = tempfile::tempdir().unwrap();
    fake_aider(bin.path());
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let repo = tempfile::tempdir().unwrap();
    let repo = std::fs::canonicalize(repo.path()).unwrap();
    std::fs::create_dir(repo.join(".git")).unwrap();
    let start = |args: &[&str]| {
        let mut full = vec!["run", "-d", "aider", "--"];
        full.extend_from_slice(args);
        let out = home.cmd(&full).current_dir(&repo).env("PATH", &path).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let tokens = |input: i64, output: i64| serde_json::json!({ "input": input, "output": output, "cache_read": 0, "cache_write": 0 });
    let listed = |run: &str| {
        home.json(&["ls", "--all", "--json"])
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == run)
            .map(|r| r["usage"]["tokens"].clone())
            .unwrap_or(Value::Null)
    };

    let first = start(&["700", "9", "okapi"]);
    home.wait_until("the first run found its chat and its tokens", || {
        home.show(&first)["usage"]["tokens"] == tokens(700, 9)
    });
    let first_chat = std::time::SystemTime::now();
    home.ok(&["send", &first, "/exit"]);
    home.wait_end(&first);
    // A run's chat is the first one since two seconds before it started,
    // to the second (headings are): start the next one past that, as a
    // real aider, seconds in starting, does.
    home.wait_until("the first chat is 3 s old", || {
        first_chat
            .elapsed()
            .is_ok_and(|d| d >= std::time::Duration::from_secs(3))
    });

    let second = start(&["2500", "40", "zebu"]);
    home.wait_until("the second run found its chat and its tokens", || {
        home.show(&second)["usage"]["tokens"] == tokens(2500, 40)
    });
    assert_ne!(home.show(&second)["session_id"], home.show(&first)["session_id"]);
    // The file now reads for the second run; the first keeps its own chat's
    // tokens, in `show` and in `ls`.
    assert_eq!(
        home.show(&first)["usage"]["tokens"],
        tokens(700, 9),
        "{:#}",
        home.show(&first)
    );
    assert_eq!(listed(&first), tokens(700, 9));
    assert_eq!(listed(&second), tokens(2500, 40));
    // And its transcript is its own chat only.
    let texts: Vec<String> = home
        .ok(&["transcript", &first, "--json"])
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(texts.iter().any(|t| t.contains("okapi")), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("zebu")), "{texts:?}");

    home.ok(&["send", &second, "/exit"]);
    home.wait_end(&second);
    assert_eq!(listed(&first), tokens(700, 9));
    assert_eq!(listed(&second), tokens(2500, 40));
}
