//! Status you can trust: a run waiting at a permission prompt says so, holds
//! queued prompts, and takes an answer only while the question is there.

mod common;

use common::Home;

#[test]
fn a_permission_prompt_makes_the_run_need_approval_and_holds_prompts_until_answered() {
    let home = Home::new();
    let id = home.start(&["demo", "--", "--ask"]);
    home.wait_until("the run needs approval", || {
        home.show(&id)["status"] == "needs_approval"
    });
    let kinds = home.event_kinds(&id);
    let interrupt = kinds.iter().position(|k| k == "INTERRUPT").expect("INTERRUPT");
    assert_eq!(kinds[interrupt + 1], "RUN_PAUSED");
    let status = home
        .events(&id)
        .into_iter()
        .rev()
        .find(|e| e["kind"] == "STATUS")
        .unwrap();
    assert!(
        status["data"]["why"].as_str().unwrap().contains("permission prompt"),
        "{status}"
    );

    // A prompt sent now waits: it must not be typed into the question.
    let sent = home.ok(&["send", &id, "after the question"]);
    assert!(sent.starts_with("queued"), "{sent}");

    home.ok(&["answer", &id, "yes"]);
    home.wait_until("the agent resumed and took the queued prompt", || {
        let log = String::from_utf8_lossy(&home.raw_log(&id)).into_owned();
        log.contains("approved") && log.contains("you said \"after the question\"")
    });
    assert!(home.event_kinds(&id).contains(&"RUN_RESUMED".to_string()));
    let log = String::from_utf8_lossy(&home.raw_log(&id)).into_owned();
    let approved = log.find("approved").unwrap();
    let prompt = log.find("you said \"after the question\"").unwrap();
    assert!(approved < prompt, "the prompt came after the answer");

    // The question is gone: a late answer is refused, not typed.
    let late = home.run(&["answer", &id, "yes"]);
    assert!(!late.status.success());
    let err = String::from_utf8_lossy(&late.stderr);
    assert!(err.contains("no question is waiting"), "{err}");
    assert_eq!(err.trim().lines().count(), 1);
}

/// A live run's status says what it rests on and how old that is, in
/// `show` (human and `--json`) and `ls --json`.
#[test]
fn a_status_says_what_it_rests_on_and_how_old_that_is() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "echo hello; exec sleep 60"]);
    home.wait_until("the run falls quiet", || home.show(&id)["status"] == "idle");
    let shown = home.show(&id);
    assert_eq!(shown["evidence"], "no output for a while", "{shown}");
    let time = |v: &serde_json::Value| humantime::parse_rfc3339(v.as_str().unwrap_or_default()).ok();
    let (started, seen, since) = (
        time(&shown["started_at"]),
        time(&shown["evidence_at"]),
        time(&shown["status_since"]),
    );
    let (started, seen, since) = (
        started.unwrap(),
        seen.expect("evidence_at"),
        since.expect("status_since"),
    );
    assert!(
        started <= seen && seen <= since && since <= std::time::SystemTime::now(),
        "{shown}"
    );
    let listed = home.json(&["ls", "--json"]);
    let row = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(row["evidence"], "no output for a while");
    let text = home.ok(&["show", &id]);
    let why = text.lines().find(|l| l.starts_with("why ")).unwrap_or_default();
    assert!(
        why.contains("no output for a while, ") && why.contains(" s ago (status since "),
        "{text}"
    );
}

/// While nobody watches a run, its supervisor announces its offset only
/// every few seconds, and says when output pauses instead: a run printing
/// without pause for longer than that stays `working` all along, and is
/// `idle` once it stops.
#[test]
fn a_run_nobody_watches_stays_working_while_it_prints_and_idles_once_it_stops() {
    let home = Home::with_config("[engine]\nquiet_ms = 2000\n");
    // 7 s of a dot every 50 ms: longer than the 5 s between offsets.
    let id = home.start(&[
        "cmd",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 140 ]; do printf .; sleep 0.05; i=$((i+1)); done; echo done; exec sleep 60",
    ]);
    let log = || std::fs::read_to_string(home.log_path(&id)).unwrap_or_default();
    home.wait_until("the run works", || home.show(&id)["status"] == "working");
    let mut looks = 0;
    while !log().contains("done") {
        let shown = home.show(&id);
        // The log is read after the status: a stop that came between is no
        // fault.
        if shown["status"] != "working" && !log().contains("done") {
            panic!("status while printing: {shown}");
        }
        looks += 1;
    }
    assert!(looks > 10, "looked only {looks} times while it printed");
    home.wait_until("the run falls quiet", || home.show(&id)["status"] == "idle");
    assert_eq!(home.show(&id)["evidence"], "no output for a while");
}

/// A loop printing a line each beat a little slower than the quiet window
/// (300 ms here) is at work: it is called idle once at most, not before
/// every beat, and idle again once it stops.
#[test]
fn a_run_printing_in_a_rhythm_slower_than_the_quiet_window_does_not_flicker_idle() {
    let home = Home::new();
    let id = home.start(&[
        "cmd",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 16 ]; do echo beat $i; sleep 0.35; i=$((i+1)); done; echo done; exec sleep 60",
    ]);
    let log = || std::fs::read_to_string(home.log_path(&id)).unwrap_or_default();
    home.wait_until("the loop has finished", || log().contains("done"));
    home.wait_until("the run falls quiet", || home.show(&id)["status"] == "idle");
    let idles = home
        .events(&id)
        .into_iter()
        .filter(|e| e["kind"] == "STATUS" && e["data"]["status"] == "idle")
        .count();
    // Before its window grew: twice (one pause is no rhythm); after the
    // last beat: once more.
    assert!(idles <= 4, "idle {idles} times over 16 beats");
}

/// The same rhythm on a screen that stands still but for its counters (a
/// clock printed each beat) is `stalled` once the stall limit passes, and
/// stays so through the beats, not idle before each: also when a new
/// daemon, which learns the run's rhythm again, finds it stalled.
#[test]
fn a_clock_printing_in_a_rhythm_stays_stalled_and_does_not_flicker_idle() {
    let home = Home::with_config("[engine]\nquiet_ms = 300\nstalled_after_secs = 1\n");
    let id = home.start(&[
        "cmd",
        "--size",
        "40x4",
        "--",
        "sh",
        "-c",
        "i=10; while [ $i -lt 60 ]; do echo tick $i; sleep 0.35; i=$((i+1)); done; echo done; exec sleep 60",
    ]);
    home.wait_until("stalled", || home.show(&id)["status"] == "stalled");
    home.ok(&["daemon", "stop"]);
    home.wait_until("a new daemon finds it stalled", || {
        home.show(&id)["status"] == "stalled"
    });
    let seen = home.events(&id).len();
    let log = || std::fs::read_to_string(home.log_path(&id)).unwrap_or_default();
    home.wait_until("the loop has finished", || log().contains("done"));
    home.wait_until("the run falls quiet", || home.show(&id)["status"] == "idle");
    let statuses: Vec<String> = home.events(&id)[seen..]
        .iter()
        .filter(|e| e["kind"] == "STATUS")
        .map(|e| e["data"]["status"].as_str().unwrap_or_default().to_string())
        .collect();
    let idles = statuses.iter().filter(|s| *s == "idle").count();
    // Before its window grew: twice (one pause is no rhythm); after the
    // last beat: once more.
    assert!(idles <= 4, "idle {idles} times over the beats: {statuses:?}");
}

#[test]
fn explain_says_which_rule_and_evidence_decided_the_status_and_what_comes_next() {
    let home = Home::new();
    let asks = home.start(&["--name", "asks", "demo", "--", "--ask"]);
    home.wait_until("the question seen", || home.show(&asks)["status"] == "needs_approval");
    let e = home.json(&["explain", "asks", "--json"]);
    assert_eq!(
        (e["status"].as_str(), e["rule"].as_str()),
        (Some("needs_approval"), Some("screen")),
        "{e}"
    );
    let kinds: Vec<&str> = e["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["hook", "screen", "output", "stall"]);
    assert!(
        e["evidence"][1]["said"].as_str().unwrap().contains("permission prompt"),
        "{e}"
    );
    assert!(e["evidence"][1]["age_ms"].as_u64().is_some());
    let text = home.ok(&["explain", "asks"]);
    assert!(
        text.starts_with("asks: needs_approval — screen shows a permission prompt\ndecided by  screen"),
        "{text}"
    );

    // Output still moving: working, and the clock alone makes it idle.
    let busy = home.start(&["--name", "busy", "demo", "--", "--flood", "20M"]);
    home.wait_until("working on output", || {
        let e = home.json(&["explain", &busy, "--json"]);
        e["rule"] == "output" && e["next"]["status"] == "idle" && e["recheck_ms"].as_u64().is_some()
    });
    home.ok(&["cancel", "--force", &busy]);
    let out = home.run(&["explain", &busy]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has ended (cancelled): no status is kept"), "{err}");
}

/// A CLI that words its prompt in a way no built-in rule knows is idle to
/// agents; the user's own rule file (`<config>/agents/screens/<family>.toml`,
/// the format of `src/harness/screens/`) makes the next run of it
/// `needs_approval`, answerable, with no new build. `agents doctor` names
/// the file, and a file that does not read.
#[test]
fn a_user_s_screen_rule_makes_a_new_prompt_a_question() {
    let home = Home::new();
    let ask = "printf ' Shall I run the tests?\\n 1. Go ahead\\n 2. Stop\\n enter to choose\\n'; read answer; echo \"took $answer\"; exec sleep 60";
    let before = home.start(&["--name", "before", "cmd", "--", "sh", "-c", ask]);
    home.wait_until("the prompt drawn", || home.logs(&before).contains("enter to choose"));
    home.wait_until("the run falls quiet", || home.show(&before)["status"] == "idle");

    let screens = home.config.path().join("agents/screens");
    std::fs::create_dir_all(&screens).unwrap();
    std::fs::write(
        screens.join("cmd.toml"),
        "[[question]]\nsays = \"Shall I run the tests?\"\nwhy = \"screen shows the test runner's question\"\n",
    )
    .unwrap();
    std::fs::write(screens.join("broken.toml"), "[[question]\n").unwrap();
    let after = home.start(&["--name", "after", "cmd", "--", "sh", "-c", ask]);
    home.wait_until("the question seen", || home.show(&after)["status"] == "needs_approval");
    assert_eq!(home.show(&after)["evidence"], "screen shows the test runner's question");
    // `explain` names the rule that decided and its file.
    let explained = home.ok(&["explain", "after"]);
    let rule = format!(
        "[[question]] \"Shall I run the tests?\" in {}",
        screens.join("cmd.toml").display()
    );
    assert!(explained.contains(&rule), "{explained}");
    home.ok(&["answer", "after", "1"]);
    home.wait_until("the answer taken", || home.logs(&after).contains("took 1"));

    let doctor = home.run(&["doctor"]);
    let said = String::from_utf8_lossy(&doctor.stdout);
    let named = format!("ok       screen rules in {}: cmd\n", screens.display());
    assert!(said.contains(&named), "{said}");
    assert!(
        said.contains("problem  screen rules ") && said.contains("broken.toml: line 1: "),
        "{said}"
    );
    assert!(!doctor.status.success(), "a file that does not read is a problem");

    // A bad edit is refused with its line; the last valid revision stays.
    std::fs::write(screens.join("cmd.toml"), "[[question]]\nsays = \"Shall I\"\nwhy = \n").unwrap();
    let third = home.start(&["--name", "third", "cmd", "--", "sh", "-c", ask]);
    home.wait_until("still a question", || home.show(&third)["status"] == "needs_approval");
    assert_eq!(home.show(&third)["evidence"], "screen shows the test runner's question");
    let said = String::from_utf8_lossy(&home.run(&["doctor"]).stdout).into_owned();
    assert!(
        said.contains("cmd.toml: line 3: ") && said.contains("its last valid revision is read meanwhile"),
        "{said}"
    );
}

/// What a person types into an agent with no hooks is echoed back: that
/// echo is not the agent working. The run stays idle while they type.
#[test]
fn the_echo_of_the_user_s_typing_is_not_the_agent_working() {
    let home = Home::with_config("[engine]\nquiet_ms = 300\n");
    let id = home.start(&["--name", "typist", "demo"]);
    home.wait_until("the demo agent at rest", || home.show(&id)["status"] == "idle");
    let seq = |e: &serde_json::Value| e["seq"].as_i64().unwrap_or(0);
    let before = home.events(&id).iter().map(seq).max().unwrap_or(0);
    let mut attach = common::pty::Pty::spawn(&home, &["attach", &id], 30, 100, home.path(), true);
    attach.wait_screen("the prompt", |l| l.iter().any(|l| l.starts_with('>')));
    for key in "a draft, typed key by key".bytes() {
        attach.type_bytes(&[key]);
        if key == b' ' {
            continue; // a trailing blank is not drawn
        }
        attach.wait_screen("the key's echo", |l| {
            l.iter().any(|l| l.starts_with('>') && l.ends_with(key as char))
        });
    }
    home.wait_until("the echo told as the echo", || {
        home.ok(&["explain", "typist"])
            .contains("only the echo of keys typed into it")
    });
    let worked: Vec<_> = home
        .events(&id)
        .into_iter()
        .filter(|e| seq(e) > before && e["kind"] == "STATUS" && e["data"]["status"] == "working")
        .collect();
    assert!(worked.is_empty(), "{worked:?}");
    assert_eq!(home.show(&id)["status"], "idle");
    attach.type_bytes(&[0x01, b'd']);
    assert_eq!(attach.exit_code(), 0);
}

/// A parent agent at rest while a child run it started works is shown
/// working, saying why, in `show` and `ls`; once the child rests, so does
/// the parent.
#[test]
fn an_idle_parent_of_a_working_child_run_is_shown_working_with_why() {
    let home = Home::with_config("[engine]\nquiet_ms = 300\n");
    let parent = home.start(&["--name", "boss", "demo"]);
    home.wait_until("the parent at rest", || home.show(&parent)["status"] == "idle");
    let child = home.start(&[
        "--parent",
        "boss",
        "--name",
        "worker",
        "demo",
        "--",
        "--think-ms",
        "60000",
    ]);
    home.wait_until("the child at its prompt", || home.show(&child)["status"] == "idle");
    home.ok(&["send", "worker", "think"]);
    home.wait_until("the child works and the parent is shown working", || {
        let shown = home.show(&parent);
        home.show(&child)["status"] == "working"
            && shown["status"] == "working"
            && shown["evidence"] == "1 child run working"
    });
    let listed = home.json(&["ls", "--json"]);
    let boss = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "boss")
        .unwrap()
        .clone();
    assert_eq!(
        (boss["status"].as_str(), boss["evidence"].as_str()),
        (Some("working"), Some("1 child run working"))
    );
    // A client that heard the child change reads it again by id: its
    // parent comes with it, shown working.
    let by_id = list_by_id(&home, &child);
    let shown: Vec<(&str, &str)> = by_id.iter().map(|r| (r.name.as_str(), r.status.as_str())).collect();
    assert_eq!(shown, [("boss", "working"), ("worker", "working")]);
    home.ok(&["cancel", "worker"]);
    home.wait_end(&child);
    home.wait_until("the parent at rest again", || home.show(&parent)["status"] == "idle");
}

/// `runs.list` of one run by id, as a client that heard it changed asks.
fn list_by_id(home: &Home, run: &str) -> Vec<agents::api::RunRecord> {
    use agents::api::{ListParams, method};
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let paths = agents::paths::Paths::at(home.path().to_path_buf());
        let client = agents::client::Client::connect_existing(&paths, false)
            .await
            .expect("connect to the daemon");
        let params = ListParams {
            runs: vec![run.to_string()],
            ..Default::default()
        };
        let listed = client.call::<method::RunsList>(params).await.expect("runs.list by id");
        listed.runs().into_iter().map(|l| l.run).collect()
    })
}

/// A turn whose screen stands still but for its spinner and clock is
/// `stalled` once `stalled_after_secs` pass, saying the limit the agent
/// printed it hit; a program with no rules at all, whose screen only
/// counts, the same.
#[test]
fn a_turn_that_goes_nowhere_is_stalled_and_says_the_limit_it_hit() {
    let home = Home::with_config("[engine]\nquiet_ms = 300\nstalled_after_secs = 3\n");
    let id = home.start(&["--name", "limited", "demo", "--", "--prompt", "stall rate"]);
    home.wait_until("stalled, saying the limit", || {
        let shown = home.show(&id);
        let why = shown["evidence"].as_str().unwrap_or_default().to_string();
        shown["status"] == "stalled" && why.starts_with("rate limit: API Error: 429 rate limit exceeded")
    });
    let e = home.json(&["explain", "limited", "--json"]);
    assert_eq!(e["rule"], "stalled", "{e}");
    let stall = &e["evidence"][3];
    assert_eq!(stall["kind"], "stall", "{e}");
    assert!(stall["said"].as_str().unwrap().starts_with("screen still for "), "{e}");
    let listed = home.ok(&["ls"]);
    assert!(listed.contains("stalled"), "{listed}");

    let counting = home.start(&[
        "cmd",
        "--",
        "sh",
        "-c",
        "i=0; while :; do printf '\\rwaiting on the server: %s' $i; i=$((i+1)); sleep 0.2; done",
    ]);
    home.wait_until("a counter alone is no progress", || {
        let shown = home.show(&counting);
        shown["status"] == "stalled"
            && shown["evidence"]
                .as_str()
                .is_some_and(|w| w.contains("(output in the last moment)"))
    });
}
