//! Sessions: listed as their own records; resumed natively in the same
//! harness and cwd, and refused while a run of the session may be alive.

mod common;

use common::Home;
use common::fake_claude::{WithClaude, fake_claude};

#[test]
fn a_session_resumes_natively_once_its_run_is_gone_and_not_before() {
    let home = Home::new();
    let claude = WithClaude::new();
    let start = |args: &[&str]| claude.ok(&home, args);
    let first = start(&["run", "-d", "claude"]);
    let session = home.show(&first)["session_id"]
        .as_str()
        .expect("claude runs get a session id")
        .to_string();

    let list = home.json(&["sessions", "list", "--json"]);
    assert_eq!(list["partial"], false, "{list}");
    let row = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session.as_str())
        .expect("listed");
    assert_eq!(row["harness"], "claude");
    assert_eq!(row["run_id"], first.as_str());

    // While the first run may be alive, resuming is refused, nothing started.
    let refused = claude
        .cmd(&home, &["sessions", "resume", "-d", &session])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("may still be alive"), "{err}");
    assert_eq!(home.json(&["ls", "--all", "--json"]).as_array().unwrap().len(), 1);

    home.ok(&["cancel", "--force", &first]);
    // Arguments after `--` go to the harness, after its resume flags.
    let second = start(&["sessions", "resume", "-d", &session[..8], "--", "--model", "sonnet"]);
    assert_ne!(second, first);
    let run = home.show(&second);
    assert_eq!(run["harness"], "claude", "never another family");
    assert_eq!(run["cwd"], home.show(&first)["cwd"]);
    home.wait_until(
        "the resumed harness got --resume with the session, then the user's words",
        || String::from_utf8_lossy(&home.raw_log(&second)).contains(&format!("--resume {session} --model sonnet")),
    );
    assert!(home.event_kinds(&second).contains(&"RESUME_OF".to_string()));

    let unknown = home.run(&["sessions", "resume", "no-such-session"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no session matches"));
}

#[test]
fn a_resumed_session_is_passed_the_variables_its_run_named_with_env_again() {
    let home = Home::new();
    let bin = tempfile::tempdir().unwrap();
    fake_claude(bin.path());
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let user_home = tempfile::tempdir().unwrap();
    // Each command runs with its own value of the variable: a resumed run
    // gets the resuming client's value, by the name the first run gave.
    let agents = |args: &[&str], value: &str| {
        let out = home
            .cmd(args)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .env("AGENTS_TEST_KEY", value)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let out = String::from_utf8_lossy(&out.stdout).into_owned();
        out.trim().lines().last().unwrap_or_default().to_string()
    };
    let logged = |run: &str, text: &str| {
        let text = text.to_string();
        home.wait_until(&format!("{run} printed {text}"), || {
            String::from_utf8_lossy(&home.raw_log(run)).contains(&text)
        });
    };
    let first = agents(&["run", "-d", "--env", "AGENTS_TEST_KEY", "claude"], "value-at-launch");
    logged(&first, "key=value-at-launch");
    let session = home.show(&first)["session_id"].as_str().unwrap().to_string();
    let record = home.ok(&["show", &first, "--json"]);
    assert!(record.contains("AGENTS_TEST_KEY"), "the name is kept: {record}");
    assert!(!record.contains("value-at-launch"), "never the value: {record}");
    // Indexed now, so a reconstruction below has the conversation to give.
    // The stand-in writes its transcript line after it prints the key (a
    // `sed` later): wait until a read of the transcript returns that line.
    home.wait_until("the first run's transcript line is written and indexed", || {
        let out = home.run(&["transcript", &first, "--json"]);
        out.status.success()
            && String::from_utf8_lossy(&out.stdout)
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .any(|m| m["role"] == "user" && m["text"] == "hello")
    });
    home.ok(&["cancel", "--force", &first]);

    let native = agents(&["sessions", "resume", "-d", &session], "value-at-resume");
    logged(&native, &format!("--resume {session}"));
    logged(&native, "key=value-at-resume");
    home.ok(&["cancel", "--force", &native]);

    // The transcript gone, the session is resumed by reconstruction.
    let transcript = home.show(&first)["transcript_path"].as_str().unwrap().to_string();
    std::fs::remove_file(&transcript).unwrap();
    let rebuilt = agents(&["sessions", "resume", "-d", &session], "value-at-rebuild");
    assert_eq!(home.show(&rebuilt)["resume_mode"], "reconstructed");
    logged(&rebuilt, "key=value-at-rebuild");

    let forked = agents(&["sessions", "fork", "-d", &session], "value-at-fork");
    logged(&forked, "key=value-at-fork");
}

#[test]
fn sessions_list_names_the_resumed_run_that_holds_a_session_not_the_cancelled_one() {
    let home = Home::new();
    let bin = tempfile::tempdir().unwrap();
    fake_claude(bin.path());
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let user_home = tempfile::tempdir().unwrap();
    let start = |args: &[&str]| {
        let out = home
            .cmd(args)
            .env("PATH", &path)
            .env("HOME", user_home.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let first = start(&["run", "-d", "--name", "original", "claude"]);
    let session = home.show(&first)["session_id"].as_str().unwrap().to_string();
    home.ok(&["cancel", "--force", &first]);
    let second = start(&["sessions", "resume", "-d", &session]);
    home.wait_until("the resumed run runs", || home.state(&second) == "running");
    assert_eq!(home.show(&second)["session_id"], session.as_str());
    let resumed_name = home.show(&second)["name"].as_str().unwrap().to_string();

    let list = home.json(&["sessions", "list", "--json"]);
    let row = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session.as_str())
        .expect("listed")
        .clone();
    assert_eq!(row["run_id"], second.as_str(), "{row}");
    assert_eq!(row["run_name"], resumed_name.as_str(), "{row}");
    assert_eq!(row["run_state"], "running", "{row}");
    let human = home.ok(&["sessions", "list"]);
    let line = human.lines().find(|l| l.starts_with(&session)).unwrap();
    assert!(line.contains("running") && !line.contains("cancelled"), "{line}");
    // A header, its columns over the rows' whatever the ids' lengths.
    let header = human.lines().next().unwrap();
    assert!(header.starts_with("SESSION"), "{human}");
    let state = header.find("STATE").unwrap();
    assert_eq!(line.get(state..state + "running".len()), Some("running"), "{human}");

    // Ended too, the newest run that held it is named, not the first.
    home.ok(&["cancel", "--force", &second]);
    let list = home.json(&["sessions", "list", "--json"]);
    let row = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session.as_str())
        .unwrap()
        .clone();
    assert_eq!(row["run_id"], second.as_str(), "{row}");
}

/// Issue #35 (§6): a resume of a session whose run still runs may be
/// queued behind it: the new run waits `pending`, says behind which run,
/// and starts natively once that run has ended; one queued behind it in
/// turn and cancelled never starts; and a queue the daemon held when it
/// stopped ends its run `interrupted`, saying so, never started.
#[test]
fn a_resume_queued_behind_the_sessions_live_run_starts_once_it_ends() {
    let home = Home::new();
    let claude = WithClaude::new();
    let agents = |args: &[&str]| claude.ok(&home, args);
    let first = agents(&["run", "-d", "claude"]);
    let session = home.show(&first)["session_id"].as_str().unwrap().to_string();
    let second = agents(&["sessions", "resume", "-d", "--queue", &session]);
    let third = agents(&["sessions", "resume", "-d", "--queue", &session]);
    let queued_behind = |run: &str| {
        let events = home.events(run);
        let queued = events.iter().find(|e| e["kind"] == "QUEUED").cloned();
        queued.map(|e| e["data"]["behind"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(home.state(&second), "pending");
    let first_name = home.show(&first)["name"].as_str().unwrap().to_string();
    assert_eq!(
        home.show(&second)["evidence"].as_str(),
        Some(format!("queued behind run {first_name}: starts once it ends").as_str())
    );
    let explained = home.run(&["explain", &second]);
    let said = String::from_utf8_lossy(&explained.stderr);
    assert!(said.contains(&format!("is queued behind run {first_name}")), "{said}");
    assert_eq!(queued_behind(&second).as_deref(), Some(first.as_str()));
    assert_eq!(queued_behind(&third).as_deref(), Some(second.as_str()), "in turn");

    home.ok(&["cancel", &third]);
    let cancelled = home.show(&third);
    assert_eq!(cancelled["state"], "cancelled");
    assert!(
        cancelled["reason"]
            .as_str()
            .unwrap()
            .starts_with("cancelled while queued behind run "),
        "{cancelled}"
    );
    // The first run ends (the stand-in leaves on its first line): the
    // queued resume starts, natively, and the cancelled one never.
    home.ok(&["send", &first, "bye"]);
    assert_eq!(home.wait_end(&first)["state"], "succeeded");
    home.wait_until("the queued resume got --resume with the session", || {
        String::from_utf8_lossy(&home.raw_log(&second)).contains(&format!("--resume {session}"))
    });
    assert_eq!(home.state(&second), "running");
    assert!(!home.event_kinds(&third).contains(&"RUN_STARTED".to_string()));

    // Queued when the daemon stops: the queue is gone with it.
    let fourth = agents(&["sessions", "resume", "-d", "--queue", &session]);
    assert_eq!(queued_behind(&fourth).as_deref(), Some(second.as_str()));
    home.ok(&["daemon", "stop"]);
    let ended = home.wait_end(&fourth);
    assert_eq!(ended["state"], "interrupted", "{ended}");
    assert!(
        ended["reason"].as_str().unwrap().contains("queued behind another"),
        "{ended}"
    );
    home.ok(&["cancel", "--force", &second]);
}

/// A stand-in for an agent CLI agents has no adapter for: it takes its
/// session's id (`--session-id ID`) or goes on in one (`--resume ID`),
/// keeps the session in Codex's format under its own folder, asks before
/// it writes, and ends on `/quit`.
const MYCLI: &str = r#"#!/bin/sh
while [ $# -gt 0 ]; do
  case "$1" in --session-id|--resume) id=$2; shift ;; esac
  shift
done
dir="$HOME/.mycli/sessions"
mkdir -p "$dir"
say() {
  printf '{"timestamp":"2026-12-06T00:00:00.000Z","type":"response_item","payload":{"type":"message","role":"%s","content":[{"type":"%s","text":"%s"}]}}\n' \
    "$1" "$2" "$3" >> "$dir/$id.jsonl"
}
echo "mycli 1.0, session $id"
while :; do
  printf '> '
  read -r prompt || exit 0
  [ "$prompt" = /quit ] && exit 0
  say user input_text "$prompt"
  echo "Allow mycli to write notes.txt?"
  printf '(y)es / (n)o: '
  read -r answer
  case "$answer" in y) reply="wrote notes.txt for: $prompt" ;; *) reply="left notes.txt alone" ;; esac
  echo "$reply"
  say assistant output_text "$reply"
done
"#;

/// `agents sessions list`: a session's MSGS column, and its `messages` in
/// `--json`.
fn listed_messages(home: &Home, session: &str) -> (String, serde_json::Value) {
    let human = home.ok(&["sessions", "list"]);
    let column = human.lines().next().unwrap().find("MSGS").expect("a MSGS column");
    let line = human.lines().find(|l| l.starts_with(session)).expect("listed");
    let shown = line[column..].split_whitespace().next().unwrap_or_default().to_string();
    let list = home.json(&["sessions", "list", "--json"]);
    let row = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == session)
        .unwrap();
    (shown, row["messages"].clone())
}

/// `[harnesses.NAME]` in config.toml: a family declared only there (a
/// script, with a JSONL session file in a known format) is launched under
/// a session id of agents', shows `needs_approval` from its screen rule
/// file, is answered with its own keys, has its transcript read in the
/// format declared (its file's place says nothing of it), and is resumed
/// in the same session.
#[test]
fn a_family_declared_only_in_config_asks_is_answered_read_and_resumed() {
    let bin = tempfile::tempdir().unwrap();
    let script = common::executable(bin.path(), "mycli", MYCLI);
    let config = format!(
        "[engine]\nquiet_ms = 300\n\n[harnesses.mycli]\nbinary = \"{}\"\n\
         session_id = [\"--session-id\", \"{{}}\"]\nresume = [\"--resume\", \"{{}}\"]\n\
         sessions = \"~/.mycli/sessions/{{}}.jsonl\"\ntranscript = \"codex\"\nyes = \"y\\r\"\nno = \"n\\r\"\n",
        script.display()
    );
    let home = Home::with_config(&config);
    home.screen_rules(
        "mycli",
        "[[choice_row]]\ntitle = \"Allow mycli to write\"\nchoices = [\"(y)es\", \"(n)o\"]\n\
         at_bottom = true\nwhy = \"mycli asks before it writes\"\n",
    );
    let user_home = home.path().join("user");
    std::fs::create_dir_all(&user_home).unwrap();
    let start = |args: &[&str]| -> String {
        let out = home.cmd(args).env("HOME", &user_home).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };

    let first = start(&["run", "-d", "--name", "mine", "mycli"]);
    let run = home.show(&first);
    assert_eq!(run["harness"], "mycli");
    let session = run["session_id"].as_str().expect("a session id of agents'").to_string();
    home.wait_until("at its prompt", || {
        home.logs(&first).contains(&format!("session {session}"))
    });
    // Listed with its count of messages: none read yet, as for a session
    // nobody prompted ("-").
    assert_eq!(
        listed_messages(&home, &session),
        ("-".to_string(), serde_json::Value::Null)
    );
    home.ok(&["send", "mine", "write the notes"]);
    home.wait_until("its question seen", || home.show(&first)["status"] == "needs_approval");
    assert_eq!(home.show(&first)["evidence"], "mycli asks before it writes");
    home.ok(&["answer", "mine", "yes"]);
    home.wait_until("answered with its own key", || {
        home.logs(&first).contains("wrote notes.txt for: write the notes")
    });
    let file = user_home.join(format!(".mycli/sessions/{session}.jsonl"));
    assert_eq!(home.show(&first)["transcript_path"], file.to_str().unwrap());
    let said = |run: &str, role: &str, text: &str| {
        let out = home.run(&["transcript", run, "--json"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .any(|m| m["role"] == role && m["text"] == text)
    };
    home.wait_until("its transcript read as Codex's", || {
        said(&first, "user", "write the notes") && said(&first, "assistant", "wrote notes.txt for: write the notes")
    });
    let (shown, counted) = listed_messages(&home, &session);
    assert!(counted.as_u64().is_some_and(|n| n >= 2), "{counted}");
    assert_eq!(shown, counted.to_string());
    home.ok(&["send", "mine", "/quit"]);
    assert_eq!(home.wait_end(&first)["state"], "succeeded");

    let second = start(&["sessions", "resume", "-d", &session]);
    assert_eq!(home.show(&second)["session_id"], session.as_str(), "the same session");
    home.wait_until("resumed", || home.logs(&second).contains(&format!("session {session}")));
    home.ok(&["send", &second, "and the plan"]);
    home.wait_until("asked again", || home.show(&second)["status"] == "needs_approval");
    home.ok(&["answer", &second, "no"]);
    home.wait_until("the second turn in the same file", || {
        said(&second, "user", "and the plan") && said(&second, "assistant", "left notes.txt alone")
    });
    assert!(
        said(&second, "user", "write the notes"),
        "the first turn is the same session's"
    );
    let command = home.show(&second)["command"].to_string();
    assert!(command.contains(&format!("\"--resume\",\"{session}\"")), "{command}");

    let doctor = String::from_utf8_lossy(&home.run(&["doctor"]).stdout).into_owned();
    let found = format!("ok       mycli (declared in config.toml) 1.0: {}", script.display());
    assert!(doctor.contains(&found), "{doctor}");
    assert!(
        doctor.contains("mycli: sessions ~/.mycli/sessions/{}.jsonl, read as codex's; not sandbox-ready"),
        "{doctor}"
    );
    let boxed = home.run(&["run", "--sandbox", "mycli"]);
    let said = String::from_utf8_lossy(&boxed.stderr);
    assert!(
        !boxed.status.success() && said.contains("mycli is not sandbox-ready"),
        "{said}"
    );
}
