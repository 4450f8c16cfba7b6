//! Lineage through the real binary: `agents sessions show`, `agents show
//! RUN --tree` over child runs, subagents and resumes, with a stand-in for
//! Claude Code that reports a subagent through `agents hook`.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{BIN, Home};
use serde_json::Value;

/// A stand-in for Claude Code: answers --version with `version`, prints its arguments,
/// writes the first line of a new session's transcript where Claude would,
/// and (with FAKE_SUBAGENT in its environment) starts a subagent the way
/// Claude reports one: the `.meta.json` beside the subagent's transcript,
/// then the `SubagentStart` hook. Then it waits for input.
fn fake_claude(dir: &Path, version: &str) {
    let script = format!(
        r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "{version} (Claude Code)"; exit 0; fi
printf 'args:'; printf ' %s' "$@"; printf '\n'
sid=""; prev=""
for a in "$@"; do [ "$prev" = "--session-id" ] && sid="$a"; prev="$a"; done
dir="$HOME/.claude/projects/$(printf %s "$PWD" | sed 's/[^A-Za-z0-9]/-/g')"
if [ -n "$sid" ] && [ -z "$FAKE_NO_TRANSCRIPT" ]; then
  mkdir -p "$dir"
  printf '{{"type": "user", "message": {{"role": "user", "content": "hello"}}, "uuid": "u0", "sessionId": "%s"}}\n' "$sid" >> "$dir/$sid.jsonl"
fi
if [ -n "$sid" ] && [ -n "$FAKE_SUBAGENT" ]; then
  mkdir -p "$dir/$sid/subagents"
  printf '{{"agentType": "general-purpose", "description": "List the files", "toolUseId": "toolu_1"}}' > "$dir/$sid/subagents/agent-a1b2c3.meta.json"
  printf '{{"session_id": "%s", "transcript_path": "%s", "hook_event_name": "SubagentStart", "agent_id": "a1b2c3", "agent_type": "general-purpose"}}' "$sid" "$dir/$sid.jsonl" | '{BIN}' hook SubagentStart
  echo subagent-started
fi
read -r line
"#
    );
    let path = dir.join("claude");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

struct Bench {
    home: Home,
    user_home: tempfile::TempDir,
    path: String,
    bin: tempfile::TempDir,
}

impl Bench {
    fn new() -> Bench {
        let bin = tempfile::tempdir().unwrap();
        fake_claude(bin.path(), "2.1.197");
        let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
        Bench {
            home: Home::new(),
            user_home: tempfile::tempdir().unwrap(),
            path,
            bin,
        }
    }

    fn out(&self, args: &[&str]) -> std::process::Output {
        self.home
            .cmd(args)
            .env("PATH", &self.path)
            .env("HOME", self.user_home.path())
            .env("FAKE_SUBAGENT", "1")
            .env("FAKE_NO_TRANSCRIPT", "1")
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.out(args);
        assert!(
            out.status.success(),
            "agents {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).expect("json")
    }
}

fn node<'a>(n: &'a Value, id: &str) -> Option<&'a Value> {
    if n["id"] == id {
        return Some(n);
    }
    n["children"].as_array()?.iter().find_map(|c| node(c, id))
}

#[test]
fn a_session_and_a_runs_tree_show_child_runs_subagents_and_resumes() {
    let b = Bench::new();
    let parent = b
        .ok(&["run", "-d", "--env", "FAKE_SUBAGENT", "claude"])
        .trim()
        .to_string();
    let session = b.home.show(&parent)["session_id"].as_str().unwrap().to_string();
    b.home.wait_until("the subagent is recorded with its task", || {
        b.home.show(&parent)["subagents"][0]["description"] == "List the files"
    });
    let child = b
        .ok(&[
            "run", "-d", "--parent", &parent, "--name", "kid", "cmd", "--", "sleep", "60",
        ])
        .trim()
        .to_string();

    // Resuming needs the session's runs gone: cancelling the parent
    // cancels the child it owns.
    b.ok(&["cancel", "--force", &parent]);
    b.home.wait_until("the child ended with its parent", || {
        !matches!(b.home.state(&child).as_str(), "running" | "starting" | "pending")
    });
    let resumed = b.ok(&["sessions", "resume", "-d", &session]).trim().to_string();

    let tree = b.json(&["show", &child, "--tree", "--json"]);
    assert_eq!(tree["focus"], child.as_str());
    let root = &tree["root"];
    assert_eq!(root["id"], parent.as_str(), "climbs from the child to the root");
    assert_eq!(root["edge"], "root");
    let kid = node(root, &child).expect("the child run is in the tree");
    assert_eq!(kid["edge"], "child");
    let sub = node(root, "a1b2c3").expect("the subagent is in the tree");
    assert_eq!(sub["edge"], "subagent");
    assert_eq!(sub["description"], "List the files");
    let again = node(root, &resumed).expect("the resume is in the tree");
    assert_eq!(again["edge"], "resume_of");
    assert_eq!(again["resume_mode"], "native");

    let text = b.ok(&["show", &resumed, "--tree"]);
    let focus_line = text.lines().find(|l| l.ends_with('◀')).expect("the focus is marked");
    assert!(
        focus_line.contains("resume-of") && focus_line.contains(&resumed[..10]),
        "{text}"
    );
    assert!(
        text.contains("subagent general-purpose") && text.contains("\"List the files\""),
        "{text}"
    );
    assert!(text.lines().any(|l| l.contains("─ kid")), "{text}");

    let shown = b.json(&["sessions", "show", &session[..8], "--json"]);
    assert_eq!(shown["id"], session.as_str());
    assert_eq!(shown["harness"], "claude");
    assert_eq!(shown["cwd"], b.home.show(&parent)["cwd"]);
    assert!(
        shown["transcript_path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{session}.jsonl"))
    );
    let runs: Vec<(String, String)> = shown["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().into(), r["relation"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        runs,
        [
            (parent.clone(), "started".into()),
            (resumed.clone(), "resume_of".into())
        ]
    );
    assert_eq!(shown["runs"][1]["from_run"], parent.as_str());
    assert_eq!(shown["subagents"][0]["agent_id"], "a1b2c3");
    assert_eq!(shown["subagents"][0]["run_id"], parent.as_str());
    let text = b.ok(&["sessions", "show", &session]);
    assert!(text.contains("resume-of") && text.contains("List the files"), "{text}");

    let unknown = b.out(&["sessions", "show", "no-such-session"]);
    assert!(!unknown.status.success());
    let err = String::from_utf8_lossy(&unknown.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no session matches 'no-such-session'"), "{err}");
    let unknown = b.out(&["show", "no-such-run", "--tree"]);
    assert!(!unknown.status.success());
}

/// The stand-in's first transcript line is all there: the file exists as
/// soon as its `>>` opens it, and a file written over before the line lands
/// would get that line appended after what was written.
fn wrote_its_line(transcript: &Path) -> bool {
    std::fs::read(transcript).is_ok_and(|b| b.ends_with(b"}\n"))
}

/// A short Claude Code transcript: a prompt, a tool call and its result,
/// and the answer (shaped like `shared/reference/claude-code-2.1.197`).
fn conversation(session: &str) -> String {
    [
        r#"{"type": "user", "message": {"role": "user", "content": "fix the parser tests"}, "uuid": "u1", "sessionId": "S", "timestamp": "2026-11-29T10:00:00.000Z"}"#,
        r#"{"type": "assistant", "message": {"role": "assistant", "id": "msg_1", "model": "claude-opus-4-8", "content": [{"type": "text", "text": "Running the tests first."}, {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cargo test"}}], "usage": {"input_tokens": 10, "output_tokens": 12}}, "uuid": "u2", "parentUuid": "u1", "sessionId": "S", "timestamp": "2026-11-29T10:00:01.000Z"}"#,
        r#"{"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "3 passed, 1 failed: nested_lists"}]}, "uuid": "u3", "parentUuid": "u2", "sessionId": "S", "timestamp": "2026-11-29T10:00:02.000Z"}"#,
        r#"{"type": "assistant", "message": {"role": "assistant", "id": "msg_2", "model": "claude-opus-4-8", "content": [{"type": "text", "text": "nested_lists fails: the parser drops the inner list."}], "usage": {"input_tokens": 20, "output_tokens": 9}}, "uuid": "u4", "parentUuid": "u3", "sessionId": "S", "timestamp": "2026-11-29T10:00:03.000Z"}"#,
    ]
    .iter()
    .map(|l| format!("{}\n", l.replace("\"S\"", &format!("\"{session}\""))))
    .collect()
}

#[test]
fn a_session_whose_transcript_is_gone_is_resumed_with_its_context_reconstructed() {
    let b = Bench::new();
    let first = b.ok(&["run", "-d", "claude"]).trim().to_string();
    let shown = b.home.show(&first);
    let session = shown["session_id"].as_str().unwrap().to_string();
    let transcript = std::path::PathBuf::from(shown["transcript_path"].as_str().unwrap());
    b.home
        .wait_until("the harness wrote its transcript", || wrote_its_line(&transcript));
    // The conversation, put in the file's place (a new file, as an editor
    // or a rewrite does: the tail, which followed the harness's first line,
    // reads it again from its start).
    let whole = transcript.with_extension("new");
    std::fs::write(&whole, conversation(&session)).unwrap();
    std::fs::rename(&whole, &transcript).unwrap();
    let indexed = b.ok(&["transcript", &first, "--json"]);
    assert!(indexed.contains("nested_lists fails"), "{indexed}");
    b.ok(&["cancel", "--force", &first]);

    // The native transcript is gone: `claude --resume` could not find it.
    std::fs::remove_file(&transcript).unwrap();
    let out = b.ok(&["sessions", "resume", "-d", &session]);
    let (notice, id) = out.trim().rsplit_once('\n').expect("a notice, then the id");
    assert!(notice.contains("cannot be resumed natively"), "{notice}");
    assert!(
        notice.contains("is gone") && notice.contains("reconstructed from 4 of 4 messages"),
        "{notice}"
    );
    let second = id.trim().to_string();
    assert_ne!(second, first);

    let run = b.home.show(&second);
    assert_eq!(run["harness"], "claude", "the same family, never another");
    assert_eq!(run["resume_mode"], "reconstructed");
    assert_eq!(run["resumed_from"], session.as_str());
    assert_ne!(run["session_id"], session.as_str(), "a new conversation");
    let old_name = shown["name"].as_str().unwrap();
    assert!(
        run["name"].as_str().unwrap().starts_with(old_name),
        "named after {old_name}: {}",
        run["name"]
    );
    let kinds = b.home.event_kinds(&second);
    assert!(kinds.contains(&"RESUME_OF".to_string()) && kinds.contains(&"CONTEXT_RECONSTRUCTED".to_string()));
    b.home
        .wait_until("the new conversation began with the old one's context", || {
            let log = String::from_utf8_lossy(&b.home.raw_log(&second)).into_owned();
            log.contains("[user] fix the parser tests")
                && log.contains("[called Bash: command=cargo test]")
                && log.contains("[tool result] 3 passed, 1 failed: nested_lists")
                && log.contains("[assistant] nested_lists fails: the parser drops the inner list.")
        });
    let log = String::from_utf8_lossy(&b.home.raw_log(&second)).into_owned();
    assert!(!log.contains("--resume"), "not a native resume: {log}");

    let s = b.json(&["sessions", "show", &session, "--json"]);
    let again = s["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == second.as_str())
        .unwrap();
    assert_eq!(again["relation"], "resume_of");
    assert_eq!(again["resume_mode"], "reconstructed");
    assert_eq!(s["totals"]["messages"], 4);
    assert_eq!(s["title"], "fix the parser tests");
    assert_eq!(s["transcript_exists"], false);
    let text = b.ok(&["show", &second]);
    assert!(text.contains("(reconstructed)"), "{text}");

    // Nothing indexed and no transcript (this harness never wrote one):
    // neither way works, nothing starts.
    let bare = b
        .ok(&["run", "-d", "--env", "FAKE_NO_TRANSCRIPT", "claude"])
        .trim()
        .to_string();
    let bare_session = b.home.show(&bare)["session_id"].as_str().unwrap().to_string();
    b.ok(&["cancel", "--force", &bare]);
    let runs_before = b.home.json(&["ls", "--all", "--json"]).as_array().unwrap().len();
    let refused = b.out(&["sessions", "resume", "-d", &bare_session]);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("none of its conversation was indexed"), "{err}");
    assert_eq!(
        b.home.json(&["ls", "--all", "--json"]).as_array().unwrap().len(),
        runs_before
    );
}

#[test]
fn a_session_written_by_another_major_version_is_resumed_by_reconstruction() {
    let b = Bench::new();
    let first = b.ok(&["run", "-d", "claude"]).trim().to_string();
    let shown = b.home.show(&first);
    assert_eq!(shown["harness_version"], "2.1.197");
    let session = shown["session_id"].as_str().unwrap().to_string();
    let transcript = std::path::PathBuf::from(shown["transcript_path"].as_str().unwrap());
    b.home
        .wait_until("the harness wrote its transcript", || wrote_its_line(&transcript));
    let whole = transcript.with_extension("new");
    std::fs::write(&whole, conversation(&session)).unwrap();
    std::fs::rename(&whole, &transcript).unwrap();
    b.ok(&["transcript", &first, "--json"]);
    b.ok(&["cancel", "--force", &first]);

    // An upgrade: the installed Claude Code is now 3.x.
    fake_claude(b.bin.path(), "3.0.0");
    let out = b.ok(&["sessions", "resume", "-d", &session]);
    let (notice, id) = out.trim().rsplit_once('\n').expect("a notice, then the id");
    assert!(
        notice.contains("written by claude 2.1.197, which 3.0.0 cannot resume"),
        "{notice}"
    );
    let run = b.home.show(id.trim());
    assert_eq!(run["resume_mode"], "reconstructed");
    assert_eq!(run["harness_version"], "3.0.0");
    assert!(transcript.is_file(), "the old transcript is left alone");

    // Within a major version, native resume stays preferred.
    b.ok(&["cancel", "--force", id.trim()]);
    fake_claude(b.bin.path(), "2.9.0");
    let again = b.ok(&["sessions", "resume", "-d", &session]).trim().to_string();
    assert!(!again.contains('\n'), "no notice: {again}");
    assert_eq!(b.home.show(&again)["resume_mode"], "native");
}

/// `runs.rerun`, as the TUI's `r` calls it.
fn rerun(home: &Home, run: &str) -> Value {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let paths = agents::paths::Paths::at(home.path().to_path_buf());
        let client = agents::client::Client::connect_existing(&paths, false)
            .await
            .expect("connect");
        let rerun = agents::api::RerunParams {
            run: run.to_string(),
            env: Vec::new(),
        };
        let record = client
            .call::<agents::api::method::RunsRerun>(rerun)
            .await
            .expect("a rerun");
        serde_json::to_value(record).expect("a record is JSON")
    })
}

#[test]
fn a_rerun_keeps_the_name_numbered_only_while_a_live_run_wears_it_and_says_which_run_it_repeats() {
    let home = Home::new();
    let first = home.start(&["--name", "worker", "cmd", "--", "true"]);
    home.wait_end(&first);
    let second = rerun(&home, "worker");
    assert_eq!(second["name"], "worker", "the run it repeats has ended: {second}");
    let second_id = second["id"].as_str().unwrap();
    assert_eq!(home.show("worker")["id"], second_id, "the name finds the newest run");
    home.wait_end(second_id);
    let third = rerun(&home, "worker");
    assert_eq!(third["name"], "worker", "{third}");

    let rerun_of = home
        .events(second_id)
        .into_iter()
        .find(|e| e["kind"] == "RERUN_OF")
        .expect("the rerun's record says what it repeats");
    assert_eq!(rerun_of["data"]["run"], first.as_str());

    // The tree around the first run shows both, each hung under the run
    // it repeats.
    let tree = home.json(&["show", &first, "--tree", "--json"]);
    let again = node(&tree["root"], second_id).expect("the rerun is in the first run's tree");
    assert_eq!(again["edge"], "rerun_of");
    let third_id = third["id"].as_str().unwrap();
    assert_eq!(
        node(again, third_id).expect("the rerun of the rerun")["edge"],
        "rerun_of"
    );
    let text = home.ok(&["show", &first, "--tree"]);
    assert!(text.contains("rerun-of worker"), "{text}");

    // While a live run wears the name, the rerun is numbered, and a rerun
    // of that one counts on from the first name.
    let live = home.start(&["--name", "live", "cmd", "--", "sleep", "60"]);
    let numbered = rerun(&home, &live);
    assert_eq!(numbered["name"], "live-2", "{numbered}");
    let again = rerun(&home, "live-2");
    assert_eq!(again["name"], "live-3", "numbered from the first name: {again}");

    // A user's own number stays; a name at the length limit is cut for a
    // number only when it needs one; the engine's placeholder name is not
    // kept but replaced.
    let numbered = home.start(&["--name", "fix-issue-1234", "cmd", "--", "true"]);
    home.wait_end(&numbered);
    let kept = rerun(&home, "fix-issue-1234");
    assert_eq!(kept["name"], "fix-issue-1234");
    home.wait_end(kept["id"].as_str().unwrap());
    assert_eq!(rerun(&home, "fix-issue-1234")["name"], "fix-issue-1234");
    let long = "a".repeat(64);
    home.start(&["--name", &long, "cmd", "--", "sleep", "60"]);
    assert_eq!(
        rerun(&home, &long)["name"],
        format!("{}-2", "a".repeat(58)),
        "cut to leave room for a number"
    );
    let auto = home.start(&["cmd", "--", "true"]);
    home.wait_end(&auto);
    let auto_name = home.show(&auto)["name"].as_str().unwrap().to_string();
    let again = rerun(&home, &auto);
    let name = again["name"].as_str().unwrap();
    assert!(
        name.starts_with("cmd-") && name != format!("{auto_name}-2"),
        "{auto_name} → {name}"
    );
}

#[test]
fn a_resumed_run_keeps_the_name_the_user_gave_numbered_while_a_live_run_wears_it() {
    let b = Bench::new();
    let first = b.ok(&["run", "-d", "--name", "cc1", "claude"]).trim().to_string();
    let shown = b.home.show(&first);
    let session = shown["session_id"].as_str().unwrap().to_string();
    let transcript = std::path::PathBuf::from(shown["transcript_path"].as_str().unwrap());
    b.home
        .wait_until("the harness wrote its transcript", || wrote_its_line(&transcript));
    b.ok(&["cancel", "--force", "cc1"]);
    b.home.wait_end(&first);

    let resumed = b.ok(&["sessions", "resume", "-d", &session]).trim().to_string();
    assert_eq!(b.home.show(&resumed)["name"], "cc1", "not the engine's claude-N");
    assert_eq!(
        b.home.show("cc1")["id"],
        resumed.as_str(),
        "the name finds the newest run"
    );

    // The run it went on from, started again while `cc1` lives: numbered.
    let again = rerun(&b.home, &first);
    assert_eq!(again["name"], "cc1-2", "{again}");
}
