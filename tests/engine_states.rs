//! Every run state of docs/design.md §4, reached through the real binary.

mod common;

use common::Home;

#[test]
fn a_command_that_exits_zero_succeeds_with_its_output_logged() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "printf 'hello\\nworld\\n'"]);
    let end = home.wait_end(&id);
    assert_eq!(end["state"], "succeeded", "{end}");
    assert_eq!(end["exit_code"], 0);
    assert_eq!(home.raw_log(&id), b"hello\r\nworld\r\n");
    assert_eq!(home.logs(&id), "hello\nworld\n");
    // pending → starting → running → succeeded, each recorded.
    let states: Vec<String> = home
        .events(&id)
        .iter()
        .filter_map(|e| e["data"]["state"].as_str().map(str::to_string))
        .collect();
    assert_eq!(states, ["pending", "starting", "running", "succeeded"]);
}

#[test]
fn a_non_zero_exit_fails_with_the_code_as_reason() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "exit 7"]);
    let end = home.wait_end(&id);
    assert_eq!(end["state"], "failed");
    assert_eq!(end["exit_code"], 7);
    assert!(end["reason"].as_str().unwrap().contains("exited with code 7"), "{end}");
}

#[test]
fn a_crashing_agent_fails_with_its_signal() {
    let home = Home::new();
    let id = home.start(&["demo", "--", "--crash"]);
    let end = home.wait_end(&id);
    assert_eq!(end["state"], "failed");
    assert_eq!(end["signal"], "SIGABRT", "{end}");
    assert!(home.logs(&id).contains("panicked"));
}

#[test]
fn a_missing_binary_blocks_the_run_before_spawn_with_a_one_line_error() {
    let home = Home::new();
    let out = home.run(&["run", "-d", "cmd", "--", "no-such-agent-binary"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("binary not found: no-such-agent-binary"), "{err}");
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let run = home.show(&id);
    assert_eq!(run["state"], "blocked");
    assert_eq!(run["pid"], serde_json::Value::Null, "nothing was spawned");
}

#[test]
fn a_missing_cwd_or_a_bad_option_blocks_the_run() {
    let home = Home::new();
    let out = home.run(&["run", "-d", "--cwd", "/no/such/dir", "cmd", "--", "true"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cwd does not exist"));

    let out = home.run(&["run", "-d", "cmd"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad option"));

    // A timeout of 0 s could only block: refused before anything is stored.
    let out = home.run(&["run", "-d", "--timeout", "0", "cmd", "--", "true"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("a timeout of 0 s"));

    // A size out of range is refused as a bad request, before anything is
    // stored (as a malformed one is): no blocked record.
    let out = home.run(&["run", "-d", "--size", "1x1", "cmd", "--", "true"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("out of range"));

    let all = home.json(&["ls", "--all", "--json"]);
    let blocked = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["state"] == "blocked")
        .count();
    assert_eq!(blocked, 2);
}

#[test]
fn a_time_limit_ends_the_run_timed_out() {
    let home = Home::new();
    let id = home.start(&["--timeout", "1", "demo", "--", "--hang"]);
    let end = home.wait_end(&id);
    assert_eq!(end["state"], "timed_out", "{end}");
    assert!(end["reason"].as_str().unwrap().contains("time limit"));
}

#[test]
fn cancelling_an_idle_agent_ends_it_with_sigint() {
    let home = Home::new();
    let id = home.start(&["demo"]);
    home.wait_until("the demo agent shows its prompt", || {
        String::from_utf8_lossy(&home.raw_log(&id)).contains("> ")
    });
    home.ok(&["cancel", &id]);
    let run = home.show(&id);
    assert_eq!(run["state"], "cancelled");
    assert!(run["reason"].as_str().unwrap().contains("after SIGINT"), "{run}");
    assert_eq!(run["exit_code"], 130);
}

#[test]
fn cancel_escalates_to_sigkill_when_sigint_and_sigterm_are_ignored() {
    let home = Home::new();
    let id = home.start(&["demo", "--", "--ignore-sigterm", "--ignore-sigint"]);
    home.wait_until("the demo agent shows its prompt", || {
        String::from_utf8_lossy(&home.raw_log(&id)).contains("> ")
    });
    home.ok(&["cancel", &id]);
    let run = home.show(&id);
    assert_eq!(run["state"], "cancelled");
    assert_eq!(run["signal"], "SIGKILL", "{run}");
    assert!(run["reason"].as_str().unwrap().contains("after SIGKILL"), "{run}");
}

#[test]
fn force_cancel_kills_at_once() {
    let home = Home::new();
    let id = home.start(&["demo", "--", "--ignore-sigterm", "--ignore-sigint"]);
    home.wait_until("the demo agent shows its prompt", || {
        String::from_utf8_lossy(&home.raw_log(&id)).contains("> ")
    });
    home.ok(&["cancel", "--force", &id]);
    let run = home.show(&id);
    assert_eq!(run["state"], "cancelled");
    assert_eq!(run["signal"], "SIGKILL");
    let events = home.event_kinds(&id);
    assert!(events.contains(&"CANCEL_REQUESTED".to_string()));
}

/// A shell loop's `sleep` dies with it under a forced cancel: the group's
/// SIGKILL reached it, so it is no leftover to wait out and report.
#[test]
fn force_cancel_of_a_shell_loop_reports_no_leftover_for_the_child_it_killed() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "while :; do echo tick; sleep 5; done"]);
    home.wait_until("the loop sleeps", || {
        String::from_utf8_lossy(&home.raw_log(&id)).contains("tick")
    });
    home.ok(&["cancel", "--force", &id]);
    let run = home.show(&id);
    assert_eq!(run["state"], "cancelled", "{run}");
    let reason = run["reason"].as_str().unwrap_or_default();
    assert!(!reason.contains("left in its group"), "{reason}");
}

#[test]
fn a_descendant_left_in_the_group_is_cleaned_up_and_reported() {
    let home = Home::new();
    let id = home.start(&["demo", "--", "--descendant", "--exit-after-prompt", "--prompt", "go"]);
    let end = home.wait_end(&id);
    let log = home.logs(&id);
    let pid: i32 = log
        .lines()
        .find_map(|l| l.split("descendant pid=").nth(1))
        .and_then(|p| p.trim().parse().ok())
        .expect("descendant pid printed");
    assert_eq!(end["state"], "succeeded", "{end}");
    assert!(end["reason"].as_str().unwrap().contains("left in its group"), "{end}");
    assert!(!common::pid_alive(pid), "the descendant must be gone");
}

#[test]
fn an_escaped_descendant_is_reported_not_hunted() {
    let home = Home::new();
    let id = home.start(&[
        "demo",
        "--",
        "--escaped-descendant",
        "--exit-after-prompt",
        "--prompt",
        "go",
    ]);
    let end = home.wait_end(&id);
    let log = home.logs(&id);
    let pid: i32 = log
        .lines()
        .find_map(|l| l.split("escaped descendant pid=").nth(1))
        .and_then(|p| p.trim().parse().ok())
        .expect("escaped pid printed");
    assert!(
        end["reason"].as_str().unwrap().contains("left the process group"),
        "{end}"
    );
    assert!(common::pid_alive(pid), "an escaped descendant is not hunted");
    common::kill9(pid);
}

/// A run that ends at once never ends before it started: its start is the
/// harness's spawn, as its supervisor saw it, not when the daemon heard.
#[test]
fn a_quick_run_never_ends_before_it_started() {
    let home = Home::new();
    let ids: Vec<String> = (0..6).map(|_| home.start(&["cmd", "--", "true"])).collect();
    for id in &ids {
        let ended = home.wait_end(id);
        let at = |k: &str| humantime::parse_rfc3339(ended[k].as_str().unwrap()).unwrap();
        assert!(at("started_at") <= at("ended_at"), "{ended}");
    }
}

/// Issue #35 (§4): a run succeeds only with all of its output: a harness
/// that exits 0 while a descendant that left its group still holds its
/// terminal (and may write more) has not shown everything, so it failed,
/// saying why — and the descendant is named, not hunted.
#[test]
fn a_run_whose_terminal_a_descendant_still_holds_is_no_success() {
    let home = Home::new();
    let pidfile = home.path().join("escaped.pid");
    // The harness exits once its descendant has its own session.
    let script = format!(
        "setsid sh -c 'echo $$ > {0}; exec sleep 60' & while [ ! -s {0} ]; do sleep 0.01; done; echo started",
        pidfile.display()
    );
    let id = home.start(&["cmd", "--", "sh", "-c", &script]);
    let end = home.wait_end(&id);
    let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    common::kill9(pid);
    let reason = end["reason"].as_str().unwrap_or_default();
    assert!(reason.contains(&format!("were not touched: {pid} (sleep)")), "{reason}");
    assert_eq!(end["state"], "failed", "{end}");
    assert!(
        reason.starts_with("exited with code 0 but its output could not be confirmed complete"),
        "{reason}"
    );
    assert!(home.logs(&id).contains("started"));
}

#[test]
fn a_recorded_identity_whose_pid_now_names_another_process_is_never_signalled() {
    let home = Home::new();
    // A run that ended; then make its record claim a live pid with another
    // start time: exactly what PID reuse looks like to the daemon.
    let id = home.start(&["cmd", "--", "true"]);
    home.wait_end(&id);
    home.ok(&["daemon", "stop"]);
    let mut stranger = std::process::Command::new("sleep").arg("60").spawn().unwrap();
    let pid = stranger.id() as i64;
    {
        let conn = rusqlite::Connection::open(home.path().join("agents.db")).unwrap();
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
        conn.execute(
            "UPDATE runs SET state = 'lost', pid = ?2, proc_start = 1, boot_id = ?3 WHERE id = ?1",
            rusqlite::params![id, pid, boot.trim()],
        )
        .unwrap();
    }
    let out = home.run(&["cancel", "--force", &id]);
    assert!(!out.status.success(), "cancelling must refuse");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not signalled") && err.contains(&pid.to_string()), "{err}");
    assert_eq!(stranger.try_wait().unwrap(), None, "the stranger must still be running");
    stranger.kill().unwrap();
    stranger.wait().unwrap();
}
