//! Task results (docs/design.md §13) against the real binary: a child run
//! that ends while nobody awaits it is told to its parent agent as a turn
//! nobody typed, once, with a `TASK_RESULT` event on both; a shell parent
//! is never typed into; a remote child's end left untold by a daemon that
//! stopped is told at its next start.

mod common;

use common::Home;

fn at_prompt(home: &Home, run: &str) -> bool {
    home.logs(run).contains(agents::harness::demo::PROMPT.trim_end())
}

#[test]
fn a_child_that_ends_unawaited_is_told_to_its_parent_agent_once() {
    let home = Home::new();
    let boss = home.start(&["--name", "boss", "demo"]);
    home.wait_until("boss at its prompt", || at_prompt(&home, &boss));
    let child = home.start(&["--parent", "boss", "--name", "lint", "cmd", "--", "sh", "-c", "exit 3"]);
    home.wait_until("the boss answered its task result", || {
        let logs = home.logs(&boss);
        logs.lines().any(|l| {
            l.contains("you said \"[task result] lint failed") && l.contains("exited with code 3 — agents show lint\"")
        })
    });
    let kinds = |run: &str| home.event_kinds(run).into_iter().filter(|k| k == "TASK_RESULT").count();
    assert_eq!((kinds(&boss), kinds(&child)), (1, 1));
    // A daemon restart writes nothing again.
    home.ok(&["daemon", "stop"]);
    home.ok(&["daemon", "start"]);
    home.ok(&["send", "boss", "marker"]);
    home.wait_until("the marker answered", || {
        home.logs(&boss).contains("you said \"marker\"")
    });
    assert_eq!(
        home.logs(&boss).matches("[task result] lint").count(),
        2,
        "typed once, echoed once"
    );
    assert_eq!(
        home.prompts(&boss)
            .iter()
            .filter(|p| p.starts_with("[task result]"))
            .count(),
        1
    );

    // A shell parent gets no words typed into it.
    let shell = home.start(&["--name", "sh-parent", "cmd", "--", "sleep", "600"]);
    let quiet = home.start(&["--parent", "sh-parent", "cmd", "--", "true"]);
    home.wait_end(&quiet);
    home.wait_until("its end recorded on the parent", || {
        home.event_kinds(&shell).iter().any(|k| k == "CHILD_ENDED")
    });
    assert!(home.prompts(&shell).is_empty());
    assert!(!home.event_kinds(&shell).iter().any(|k| k == "TASK_RESULT"));
}

/// `agents daemon status --json`'s count of runs a wait in flight awaits.
fn awaited(home: &Home) -> u64 {
    home.json(&["daemon", "status", "--json"])["awaited"]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn waiting_for_the_children_answers_each_outcome_once_all_have_ended_and_no_task_result() {
    let home = Home::new();
    let boss = home.start(&["--name", "boss", "demo"]);
    home.wait_until("boss at its prompt", || at_prompt(&home, &boss));
    let child = |name: &str, code: u8| {
        let script = format!("read line; exit {code}");
        home.start(&["--parent", "boss", "--name", name, "cmd", "--", "sh", "-c", &script])
    };
    let (ok, bad) = (child("ok", 0), child("bad", 4));
    let waiter = home
        .cmd(&["wait", "--children", "boss", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    home.wait_until("the wait holds both children", || awaited(&home) == 2);
    home.ok(&["send", "ok", "go"]);
    home.wait_end(&ok);
    // One child still runs: the wait goes on, whatever it has seen end.
    assert_eq!(home.state(&bad), "running");
    home.ok(&["send", "bad", "go"]);
    let out = waiter.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "a child failed");
    let outcome: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ended: Vec<(&str, &str)> = outcome["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["state"].as_str().unwrap()))
        .collect();
    assert_eq!(ended, [("ok", "succeeded"), ("bad", "failed")]);
    assert_eq!(outcome["run"]["name"], "boss");
    // Awaited, so the results went to the waiter and not to the parent.
    home.wait_until("the wait let go", || awaited(&home) == 0);
    for run in [&ok, &bad] {
        assert!(!home.event_kinds(run).iter().any(|k| k == "TASK_RESULT"));
    }
    assert!(home.prompts(&boss).iter().all(|p| !p.starts_with("[task result]")));

    // A wait given up (its client gone) awaits nothing any more: the next
    // child's end is the parent's task result again.
    child("late", 0);
    let out = home.run(&["wait", "--children", "boss", "--timeout", "1"]);
    assert_eq!(out.status.code(), Some(124));
    home.wait_until("the abandoned wait let go", || awaited(&home) == 0);
    home.ok(&["send", "late", "go"]);
    home.wait_until("the parent told of late", || {
        home.prompts(&boss)
            .iter()
            .any(|p| p.starts_with("[task result] late succeeded"))
    });
    let none = home.ok(&["wait", "--children", "ok"]);
    assert_eq!(none.trim(), "ok has no children");
}

#[test]
fn a_child_cancelled_by_the_user_is_told_to_its_parent_and_one_its_parent_cancels_is_not() {
    let home = Home::new();
    let boss = home.start(&["--name", "boss", "demo"]);
    home.wait_until("boss at its prompt", || at_prompt(&home, &boss));
    let task_results = || {
        home.prompts(&boss)
            .into_iter()
            .filter(|p| p.starts_with("[task result]"))
            .collect::<Vec<_>>()
    };
    // `agents cancel` from the user's shell waits for the end only to
    // print it: the parent still hears how its child ended.
    let stray = home.start(&["--parent", "boss", "--name", "stray", "cmd", "--", "sleep", "600"]);
    let out = home.ok(&["cancel", "stray"]);
    assert!(out.contains("stray cancelled"), "{out}");
    home.wait_until("the parent told of the cancel", || {
        task_results()
            .iter()
            .any(|p| p.starts_with("[task result] stray cancelled"))
    });
    // The parent cancelling its own child has the answer in hand.
    let mine = home.start(&["--parent", "boss", "--name", "mine", "cmd", "--", "sleep", "600"]);
    let out = home.cmd_in(&boss, &["cancel", "mine"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("mine cancelled"));
    home.wait_until("the cancel's end recorded on the parent", || {
        home.events(&boss)
            .iter()
            .any(|e| e["kind"] == "CHILD_ENDED" && e["data"]["child"] == mine.as_str())
    });
    assert!(!home.event_kinds(&mine).iter().any(|k| k == "TASK_RESULT"));
    assert_eq!(task_results().len(), 1, "{:?}", task_results());
    assert_eq!(home.state(&stray), "cancelled");
    let asked_by = |run: &str| {
        home.events(run)
            .into_iter()
            .find(|e| e["kind"] == "CANCEL_REQUESTED")
            .map(|e| e["data"]["by"].clone())
    };
    assert_eq!(asked_by(&stray), Some("user".into()));
    assert_eq!(asked_by(&mine), Some(boss.as_str().into()));
}

#[test]
fn a_mirrors_end_stored_by_a_daemon_that_stopped_before_telling_is_told_at_the_next_start() {
    let home = Home::new();
    let boss = home.start(&["--name", "boss", "demo"]);
    home.wait_until("boss at its prompt", || at_prompt(&home, &boss));
    let job = home.start(&["--name", "far", "cmd", "--", "sh", "-c", "exit 0"]);
    home.wait_end(&job);
    home.ok(&["daemon", "stop"]);
    // What a daemon leaves when it stops between storing a remote run's
    // end and telling its parent here.
    {
        let db = rusqlite::Connection::open(home.path().join("agents.db")).unwrap();
        db.execute(
            "UPDATE runs SET host = 'box', parent_run_id = ?1 WHERE id = ?2",
            [&boss, &job],
        )
        .unwrap();
    }
    home.ok(&["daemon", "start"]);
    home.wait_until("the parent told of far", || {
        home.prompts(&boss)
            .iter()
            .any(|p| p.starts_with("[task result] far succeeded"))
    });
    let ended_events = |home: &Home| {
        home.events(&boss)
            .iter()
            .filter(|e| e["kind"] == "CHILD_ENDED" && e["data"]["child"] == job.as_str())
            .count()
    };
    assert_eq!(ended_events(&home), 1);
    // Told once: the next start finds nothing untold.
    home.ok(&["daemon", "stop"]);
    home.ok(&["daemon", "start"]);
    home.ok(&["send", "boss", "marker"]);
    home.wait_until("the marker answered", || {
        home.logs(&boss).contains("you said \"marker\"")
    });
    assert_eq!(ended_events(&home), 1);
    assert_eq!(
        home.prompts(&boss)
            .iter()
            .filter(|p| p.starts_with("[task result] far"))
            .count(),
        1
    );
}
