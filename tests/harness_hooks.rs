//! Harness hooks through the real binary: `agents hook` never holds up a
//! harness, and hooks reported from inside a run drive its status (with the
//! evidence), its session and transcript, its subagents and its name.

mod common;

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{BIN, Home};
use serde_json::{Value, json};

/// `agents hook` gives up 1.5 s after it starts; this allows for starting
/// the process, and the test noticing its end, on a busy machine, and stays
/// short of the 5 s after which Claude Code gives up on a hook itself (what
/// a hook must never reach). A hook that waits for the daemon or its stdin
/// is caught all the same: the stuck daemon below holds on far longer.
const HOOK_BOUND: Duration = Duration::from_millis(4000);

const SESSION: &str = "22222222-3333-4444-8555-666666666666";
const TRANSCRIPT: &str = "/home/user/.claude/projects/-home-user-project/22222222-3333-4444-8555-666666666666.jsonl";

/// Hook payloads shaped like `shared/reference/claude-code-2.1.197/hooks.jsonl`.
fn payloads() -> Vec<(&'static str, String)> {
    let common =
        format!(r#""session_id": "{SESSION}", "transcript_path": "{TRANSCRIPT}", "cwd": "/home/user/project""#);
    let sub = "/home/user/.claude/projects/-home-user-project/22222222-3333-4444-8555-666666666666/subagents/agent-aabcf44c67ae8ff7a.jsonl";
    vec![
        (
            "SessionStart",
            format!(
                r#"{{{common}, "hook_event_name": "SessionStart", "source": "startup", "model": "claude-opus-4-8[1m]"}}"#
            ),
        ),
        (
            "UserPromptSubmit",
            format!(
                r#"{{{common}, "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": "please fix the parser tests"}}"#
            ),
        ),
        (
            "PreToolUse",
            format!(
                r#"{{{common}, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {{"command": "touch perm-marker", "description": "Create a marker file"}}, "tool_use_id": "toolu_mock0009"}}"#
            ),
        ),
        (
            "PermissionRequest",
            format!(
                r#"{{{common}, "hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {{"command": "touch perm-marker", "description": "Create a marker file"}}}}"#
            ),
        ),
        (
            "Notification",
            format!(
                r#"{{{common}, "hook_event_name": "Notification", "message": "Claude needs your permission", "notification_type": "permission_prompt"}}"#
            ),
        ),
        (
            "PostToolUse",
            format!(
                r#"{{{common}, "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_response": {{"stdout": "", "stderr": ""}}, "tool_use_id": "toolu_mock0009", "duration_ms": 145}}"#
            ),
        ),
        (
            "SubagentStart",
            format!(
                r#"{{{common}, "agent_id": "aabcf44c67ae8ff7a", "agent_type": "general-purpose", "hook_event_name": "SubagentStart"}}"#
            ),
        ),
        (
            "SubagentStop",
            format!(
                r#"{{{common}, "agent_id": "aabcf44c67ae8ff7a", "agent_type": "general-purpose", "hook_event_name": "SubagentStop", "agent_transcript_path": "{sub}", "last_assistant_message": "Subagent result: 3 files."}}"#
            ),
        ),
        (
            "Stop",
            format!(
                r#"{{{common}, "hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": "Done after tool."}}"#
            ),
        ),
    ]
}

fn status_event(home: &Home, run: &str) -> Value {
    home.events(run)
        .into_iter()
        .rev()
        .find(|e| e["kind"] == "STATUS")
        .unwrap_or(Value::Null)
}

#[test]
fn hook_exits_zero_at_once_when_no_daemon_runs_and_starts_none() {
    let home = Home::new();
    let started = Instant::now();
    let mut child = home
        .cmd(&["hook", "Stop"])
        .env("AGENTS_RUN_ID", "01JZZZZZZZZZZZZZZZZZZZZZZZ")
        .env("AGENTS_LAUNCH_ID", "01JYYYYYYYYYYYYYYYYYYYYYYY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"hook_event_name": "Stop", "session_id": "s"}"#)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty(), "a hook prints nothing the harness would read");
    assert!(started.elapsed() < HOOK_BOUND, "took {:?}", started.elapsed());
    assert!(home.daemon_pid().is_none(), "a hook never starts a daemon");
}

#[test]
fn hook_exits_zero_within_the_bound_when_the_daemon_is_stuck_and_stdin_stays_open() {
    let home = Home::new();
    std::fs::create_dir_all(home.path()).unwrap();
    // A "daemon" that accepts and never says a word (for longer than the
    // second hook below may take, so one that waits for it fails the test;
    // not much longer: the home's cleanup waits for it too).
    let listener = std::os::unix::net::UnixListener::bind(home.path().join("daemon.sock")).unwrap();
    let _held = std::thread::spawn(move || {
        let mut conns = Vec::new();
        for conn in listener.incoming().take(2) {
            conns.push(conn);
        }
        std::thread::sleep(HOOK_BOUND * 2 + Duration::from_secs(2));
    });
    for stdin_open in [false, true] {
        let started = Instant::now();
        let mut cmd = home.cmd(&["hook", "PreToolUse"]);
        cmd.env("AGENTS_RUN_ID", "01JZZZZZZZZZZZZZZZZZZZZZZZ")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        if !stdin_open {
            stdin.unwrap().write_all(b"{}").unwrap();
        }
        // With stdin open the hook waits for a payload that never ends.
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < HOOK_BOUND * 2,
                "agents hook still running (stdin open: {stdin_open})"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert!(status.success());
        assert!(
            started.elapsed() < HOOK_BOUND,
            "stdin open: {stdin_open}: took {:?}",
            started.elapsed()
        );
    }
}

/// A `cmd` run whose command is a script that calls `agents hook` with
/// Claude-shaped payloads, as Claude's hooks would from inside the run.
#[test]
fn hooks_from_a_run_drive_its_status_session_subagents_and_name() {
    let home = Home::new();
    let work = tempfile::tempdir().unwrap();
    for (event, payload) in payloads() {
        std::fs::write(work.path().join(format!("{event}.json")), payload).unwrap();
    }
    let gate = work.path().join("approved");
    let script = format!(
        r#"cd '{dir}'
for e in SessionStart UserPromptSubmit PreToolUse PermissionRequest Notification; do "$0" hook $e < $e.json; done
while [ ! -e '{gate}' ]; do sleep 0.05; done
for e in PostToolUse SubagentStart SubagentStop Stop; do "$0" hook $e < $e.json; done
echo hooks-done
exec sleep 60"#,
        dir = work.path().display(),
        gate = gate.display()
    );
    let id = home.start(&["cmd", "--", "sh", "-c", &script, BIN]);

    home.wait_until("the run needs approval", || {
        home.show(&id)["status"] == "needs_approval"
    });
    let why = status_event(&home, &id)["data"]["why"].as_str().unwrap().to_string();
    assert!(why.starts_with("hook PermissionRequest Bash"), "{why}");
    let kinds = home.event_kinds(&id);
    let interrupt = kinds.iter().position(|k| k == "INTERRUPT").expect("INTERRUPT");
    assert_eq!(kinds[interrupt + 1], "RUN_PAUSED");

    std::fs::write(&gate, "").unwrap();
    // Each hook waits for the daemon's answer, within its 1.5 s budget: on
    // a busy machine one may have given up waiting, and the daemon record
    // it just after the script went on.
    home.wait_until("the turn ended and every hook is recorded", || {
        let run = home.show(&id);
        run["status"] == "idle"
            && String::from_utf8_lossy(&home.raw_log(&id)).contains("hooks-done")
            && home.event_kinds(&id).iter().filter(|k| *k == "HOOK").count() >= payloads().len()
    });
    let why = status_event(&home, &id)["data"]["why"].as_str().unwrap().to_string();
    assert_eq!(why, "hook Stop");
    assert!(home.event_kinds(&id).contains(&"RUN_RESUMED".to_string()));

    let run = home.show(&id);
    assert_eq!(run["session_id"], SESSION);
    // A `cmd` run's program keeps no sessions: a transcript its hooks name
    // is not where a harness of its family keeps them, and is not taken.
    assert_eq!(run["transcript_path"], Value::Null);
    assert_eq!(run["name"], "fix-parser-tests", "named after the first prompt");
    let renamed = home.events(&id).into_iter().find(|e| e["kind"] == "RENAMED").unwrap();
    assert!(
        renamed["data"]["from"].as_str().unwrap().starts_with("cmd-"),
        "{renamed}"
    );
    assert_eq!(run["id"], id.as_str(), "the id never changes");
    let subagents = run["subagents"].as_array().unwrap();
    assert_eq!(subagents.len(), 1);
    assert_eq!(subagents[0]["agent_id"], "aabcf44c67ae8ff7a");
    assert_eq!(subagents[0]["agent_type"], "general-purpose");
    assert_eq!(subagents[0]["transcript_path"], Value::Null);
    assert!(subagents[0]["ended_at"].is_string());

    let events = serde_json::to_string(&run["events"]).unwrap();
    for private in [
        "fix the parser",
        "touch perm-marker",
        "Subagent result",
        "Done after tool",
    ] {
        assert!(!events.contains(private), "events hold no message text: {private}");
    }
    let hooks = home.event_kinds(&id).iter().filter(|k| *k == "HOOK").count();
    assert_eq!(hooks, payloads().len());

    // A hook whose launch id is not the run's is refused: nothing recorded.
    let mut stray = home.cmd_in(&id, &["hook", "Stop"]);
    stray
        .env("AGENTS_LAUNCH_ID", "01JXXXXXXXXXXXXXXXXXXXXXXX")
        .stdin(Stdio::null());
    assert!(stray.status().unwrap().success());
    let after = home.event_kinds(&id).iter().filter(|k| *k == "HOOK").count();
    assert_eq!(after, hooks);
}

/// A stand-in for Claude Code on PATH: prints its version, records how it
/// was started, runs the hooks its `--settings` file installs (as the real
/// CLI does) and takes one prompt.
fn fake_claude(dir: &Path) {
    let script = r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "2.1.197 (Claude Code)"; exit 0; fi
printf '%s\n' "${CLAUDE_CONFIG_DIR:-none}" > config-dir.txt
printf '%s %s %s\n' "${ANTHROPIC_API_KEY:-unset}" "${ANTHROPIC_BASE_URL:-unset}" "${UNRELATED_SECRET:-unset}" > env.txt
printf '%s\n' "$@" > args.txt
settings="$2"; session="$4"
hook() {
    cmd=$(grep "\"command\": .* hook $1\"" "$settings" | sed 's/^ *"command": "\(.*\)",*$/\1/')
    printf '%s' "$2" | eval "$cmd"
}
hook SessionStart "{\"session_id\": \"$session\", \"hook_event_name\": \"SessionStart\", \"source\": \"startup\"}"
printf '> '
read -r line
hook UserPromptSubmit "{\"session_id\": \"$session\", \"hook_event_name\": \"UserPromptSubmit\", \"prompt\": \"$line\"}"
echo "thinking about: $line"
hook Stop "{\"session_id\": \"$session\", \"hook_event_name\": \"Stop\"}"
exec sleep 60
"#;
    let path = dir.join("claude");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A key exported in the shell that starts `agents run claude`.
const KEY: &str = "sk-ant-test-never-stored-7f3a";

#[test]
fn a_claude_run_has_its_session_id_and_hooks_before_it_starts() {
    let bin = tempfile::tempdir().unwrap();
    fake_claude(bin.path());
    let user_home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let home = Home::with_config(&format!(
        "[engine]\nquiet_ms = 300\n[profiles.work]\nfamily = \"claude\"\nbinary = \"{}\"\nconfig_home = \"~/.claude-work\"\nmodel = \"opus\"\n",
        bin.path().join("claude").display()
    ));
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let run = |harness: &str| {
        // Exported as in a user's shell, no `--env`: Claude Code's own
        // variables reach it, nothing else does, and no value is stored.
        let out = home
            .cmd(&["run", "-d", harness, "--prompt", "write the release notes"])
            .env("PATH", &path)
            .env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/mock")
            .env("UNRELATED_SECRET", "hush")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env("HOME", user_home.path())
            .current_dir(work.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };

    let id = run("claude");
    let started = home.show(&id);
    let session = started["session_id"]
        .as_str()
        .expect("session id known at start")
        .to_string();
    assert_eq!(session.len(), 36, "a UUID: {session}");
    assert_eq!(started["harness"], "claude");
    assert_eq!(started["harness_version"], "2.1.197");
    assert_eq!(started["name"], "write-release-notes", "named after --prompt");
    let cwd = std::fs::canonicalize(work.path()).unwrap();
    let encoded: String = cwd
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    assert_eq!(
        started["transcript_path"].as_str().unwrap(),
        user_home
            .path()
            .join(".claude/projects")
            .join(&encoded)
            .join(format!("{session}.jsonl"))
            .to_string_lossy()
    );

    home.wait_until("the prompt was taken and the turn ended", || {
        let run = home.show(&id);
        run["status"] == "idle"
            && status_event(&home, &id)["data"]["why"] == "hook Stop"
            && String::from_utf8_lossy(&home.raw_log(&id)).contains("thinking about: write the release notes")
    });
    let args = std::fs::read_to_string(work.path().join("args.txt")).unwrap();
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(args[0], "--settings");
    assert!(
        args[1].ends_with(&format!("runs/{id}/claude-settings.json")),
        "{args:?}"
    );
    assert_eq!(args[2..4], ["--session-id", session.as_str()]);
    assert_eq!(
        std::fs::read_to_string(work.path().join("config-dir.txt"))
            .unwrap()
            .trim(),
        "none",
        "the user's own config home is left alone"
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("env.txt")).unwrap().trim(),
        format!("{KEY} http://127.0.0.1:9/mock unset")
    );
    // These, and whatever else of Claude Code's this machine exports.
    let passed = started["env_harness"].as_array().cloned().unwrap_or_default();
    assert!(
        passed.contains(&json!("ANTHROPIC_API_KEY")) && passed.contains(&json!("ANTHROPIC_BASE_URL")),
        "{passed:?}"
    );
    assert!(!passed.contains(&json!("UNRELATED_SECRET")), "{passed:?}");
    let shown = home.ok(&["show", &id]);
    let env_line = shown.lines().find(|l| l.starts_with("env ")).unwrap_or_default();
    assert!(
        env_line.contains("ANTHROPIC_API_KEY ANTHROPIC_BASE_URL") && env_line.ends_with("(passed by default)"),
        "{shown}"
    );
    let kinds = home.event_kinds(&id);
    assert!(kinds.iter().filter(|k| *k == "HOOK").count() >= 3, "{kinds:?}");
    home.ok(&["cancel", "--force", &id]);
    for file in ["agents.db", "agents.db-wal"] {
        let bytes = std::fs::read(home.path().join(file)).unwrap_or_default();
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "the key's value is in {file}"
        );
    }

    // A profile: its binary, model and isolated config home.
    let id = run("work");
    let started = home.show(&id);
    assert_eq!(started["harness"], "claude");
    assert_eq!(started["profile"], "work");
    assert_eq!(started["name"], "write-release-notes-2");
    home.wait_until("the profile's claude started", || {
        work.path().join("config-dir.txt").exists() && {
            let args = std::fs::read_to_string(work.path().join("args.txt")).unwrap_or_default();
            args.contains("opus")
        }
    });
    assert_eq!(
        std::fs::read_to_string(work.path().join("config-dir.txt"))
            .unwrap()
            .trim(),
        user_home.path().join(".claude-work").to_string_lossy()
    );
    assert!(
        started["transcript_path"]
            .as_str()
            .unwrap()
            .contains("/.claude-work/projects/")
    );
}

#[test]
fn a_missing_harness_binary_blocks_the_run_with_the_reason() {
    let home = Home::new();
    let out = home
        .cmd(&["run", "-d", "codex"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("blocked: binary not found: codex"), "{err}");
}

/// Codex's `notify` passes its JSON as the last argument, not on stdin.
#[test]
fn a_codex_turn_completion_passed_as_an_argument_is_reported() {
    let home = Home::new();
    let payload = r#"{"type": "agent-turn-complete", "thread-id": "01a22645-9705-7352-9a7c-e05a97022f2e", "turn-id": "t1", "cwd": "/w", "input-messages": ["add a changelog entry"], "last-assistant-message": "done"}"#;
    let script = format!("\"$0\" hook codex-notify '{payload}' </dev/null; echo notified; exec sleep 60");
    let id = home.start(&["cmd", "--", "sh", "-c", &script, BIN]);
    home.wait_until("the turn completion is recorded", || {
        home.show(&id)["session_id"] == "01a22645-9705-7352-9a7c-e05a97022f2e"
    });
    home.wait_until("the run is idle by the hook", || {
        status_event(&home, &id)["data"]["why"] == "hook agent-turn-complete"
    });
    let run = home.show(&id);
    assert_eq!(run["status"], "idle");
    assert_eq!(run["name"], "add-changelog-entry");
}

/// Droid's hooks ask for `--suppress-output`: the hook prints the one line
/// that keeps it out of Droid's chat, and reports as any other.
#[test]
fn a_hook_asked_to_suppress_its_output_says_so_on_stdout_and_still_reports() {
    let home = Home::new();
    let work = tempfile::tempdir().unwrap();
    let printed = work.path().join("printed");
    let payload = r#"{"hook_event_name": "Stop", "session_id": "5d74fe8e-c559-46da-954f-bb811ddde92e", "cwd": "/w"}"#;
    let script = format!(
        "echo '{payload}' | \"$0\" hook --suppress-output Stop > '{}'; echo reported; exec sleep 60",
        printed.display()
    );
    let id = home.start(&["cmd", "--", "sh", "-c", &script, BIN]);
    home.wait_until("the Stop is recorded", || {
        status_event(&home, &id)["data"]["why"] == "hook Stop"
    });
    assert_eq!(home.show(&id)["session_id"], "5d74fe8e-c559-46da-954f-bb811ddde92e");
    assert_eq!(
        std::fs::read_to_string(&printed).unwrap(),
        "{\"suppressOutput\":true}\n"
    );
}

/// Where hooks and the run's output disagree for long, the output wins,
/// through the real `agents hook` inside a run: a `Stop` naming background
/// work in flight is working (a subagent's hooks confirm it, the next
/// `Stop` ends it); output going on since a `Stop` is work no hook
/// announced (a prompt typed into Codex in its terminal); a working hook
/// followed by silence is not believed.
#[test]
fn hooks_and_output_that_disagree_for_long_are_reconciled() {
    let home = Home::with_config("[engine]\nquiet_ms = 300\nhook_stall_secs = 3\nhook_overrule_ms = 1500\n");
    let work = tempfile::tempdir().unwrap();
    let common =
        format!(r#""session_id": "{SESSION}", "transcript_path": "{TRANSCRIPT}", "cwd": "/home/user/project""#);
    let payloads = [
        (
            "waiting",
            format!(
                r#"{{{common}, "hook_event_name": "Stop", "background_tasks": [{{"id": "b1", "type": "subagent", "status": "running", "description": "review it", "agent_type": "code-reviewer"}}]}}"#
            ),
        ),
        (
            "sub",
            format!(
                r#"{{{common}, "hook_event_name": "PreToolUse", "tool_name": "Read", "agent_id": "a1b2c3", "agent_type": "code-reviewer"}}"#
            ),
        ),
        (
            "done",
            format!(r#"{{{common}, "hook_event_name": "Stop", "background_tasks": []}}"#),
        ),
        (
            "prompt",
            format!(r#"{{{common}, "hook_event_name": "UserPromptSubmit", "prompt": "go on"}}"#),
        ),
    ];
    for (name, payload) in &payloads {
        std::fs::write(work.path().join(format!("{name}.json")), payload).unwrap();
    }
    let gate = |n: u32| work.path().join(format!("gate{n}"));
    let script = format!(
        r#"cd '{dir}'
"$0" hook Stop < waiting.json
while [ ! -e gate1 ]; do sleep 0.05; done
"$0" hook PreToolUse < sub.json
while [ ! -e gate2 ]; do sleep 0.05; done
"$0" hook Stop < done.json
while [ ! -e gate3 ]; do sleep 0.05; done
while [ ! -e gate4 ]; do echo working on it; sleep 0.1; done
while [ ! -e gate5 ]; do sleep 0.05; done
"$0" hook UserPromptSubmit < prompt.json
exec sleep 60"#,
        dir = work.path().display(),
    );
    let id = home.start(&["cmd", "--", "sh", "-c", &script, BIN]);
    let status = |home: &Home| {
        let run = home.show(&id);
        (
            run["status"].as_str().unwrap_or("").to_string(),
            run["evidence"].as_str().unwrap_or("").to_string(),
        )
    };

    home.wait_until("working on its background task", || {
        status(&home)
            == (
                "working".into(),
                "hook Stop, 1 background task running (subagent code-reviewer)".into(),
            )
    });
    std::fs::write(gate(1), "").unwrap();
    home.wait_until("the subagent's hook recorded", || {
        home.events(&id)
            .iter()
            .any(|e| e["kind"] == "HOOK" && e["data"]["agent_id"] == "a1b2c3")
    });
    assert_eq!(status(&home).0, "working", "a subagent at work confirms the wait");
    assert!(
        status(&home).1.contains("background task running"),
        "{:?}",
        status(&home)
    );
    std::fs::write(gate(2), "").unwrap();
    home.wait_until("idle after the last Stop", || {
        status(&home) == ("idle".into(), "hook Stop".into())
    });

    std::fs::write(gate(3), "").unwrap();
    home.wait_until("working again on output no hook announced", || {
        let (now, why) = status(&home);
        now == "working" && why.contains("since hook Stop: work began with no hook saying so")
    });
    let e = home.json(&["explain", &id, "--json"]);
    assert_eq!(e["rule"], "overruled", "{e}");
    std::fs::write(gate(4), "").unwrap();
    home.wait_until("the hook stands once the output stops", || {
        status(&home) == ("idle".into(), "hook Stop".into())
    });

    std::fs::write(gate(5), "").unwrap();
    home.wait_until("a working hook with nothing after it is not believed", || {
        let (now, why) = status(&home);
        now == "unknown" && why.starts_with("hook UserPromptSubmit ") && why.contains("but no output for")
    });
    let e = home.json(&["explain", &id, "--json"]);
    assert_eq!(e["rule"], "silent", "{e}");
    let kinds = home.event_kinds(&id);
    assert!(kinds.iter().filter(|k| *k == "STATUS").count() >= 5, "{kinds:?}");
}
