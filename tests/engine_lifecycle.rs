//! A run's life when things go wrong around it (docs/design.md §4): the daemon or a
//! supervisor dies, ownership decides who a cancel reaches, prompts wait for
//! a busy agent, worktrees never overwrite, the database is from the future,
//! the disk fills up, a reference names nothing or too much.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{Home, kill9, pid_alive};
use serde_json::Value;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The run's output log as it is on disk, read without the daemon.
fn disk_log(home: &Home, run: &str) -> String {
    std::fs::read(home.log_path(run)).map(|b| text(&b)).unwrap_or_default()
}

fn wait_for_output(home: &Home, run: &str, needle: &str) {
    home.wait_until(&format!("run {run} prints {needle:?}"), || {
        disk_log(home, run).contains(needle)
    });
}

/// The demo agent shows its `> ` prompt and the engine has seen it fall quiet.
fn wait_idle(home: &Home, run: &str) {
    wait_for_output(home, run, "> ");
    home.wait_until(&format!("run {run} is idle"), || home.show(run)["status"] == "idle");
}

/// `agents send` succeeds (delivered now, or queued until the agent is
/// quiet) and the demo agent answers.
fn send_and_see_answer(home: &Home, run: &str, prompt: &str) {
    let sent = home.ok(&["send", run, prompt]);
    assert!(sent.starts_with("delivered") || sent.starts_with("queued"), "{sent}");
    wait_for_output(home, run, &format!("you said \"{prompt}\""));
}

/// A command that must fail with a one-line message; returns the message.
fn one_line_failure(out: &Output) -> String {
    assert!(!out.status.success(), "expected a failure: {}", text(&out.stdout));
    let err = text(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "one line expected: {err}");
    err
}

/// Field 4 of `/proc/<pid>/stat`: the parent pid.
fn ppid_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

fn harness_pid(home: &Home, run: &str) -> i32 {
    home.show(run)["pid"].as_i64().expect("a live run has a pid") as i32
}

/// The run's supervisor: the parent of its harness (`pgrep -f "agents
/// supervise"` cannot tell one run's supervisor from another's).
fn supervisor_of(home: &Home, run: &str) -> i32 {
    let pid = ppid_of(harness_pid(home, run)).expect("the harness has a parent");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    assert!(
        text(&cmdline).split('\0').any(|arg| arg == "supervise"),
        "pid {pid} is not a supervisor: {}",
        text(&cmdline)
    );
    pid
}

/// Every process in group `pgid`, from `/proc`.
fn group_members(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
                let fields: Vec<&str> = after.split_whitespace().collect();
                fields.first().is_some_and(|s| *s != "Z" && *s != "X")
                    && fields.get(2).and_then(|g| g.parse().ok()) == Some(pgid)
            })
        })
        .collect()
}

/// The `n<i>` lines a counter printed, in log order.
fn counter_values(log: &str) -> Vec<u32> {
    log.split("\r\n")
        .filter_map(|line| line.strip_prefix('n')?.parse().ok())
        .collect()
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

#[test]
fn a_daemon_crash_loses_no_run_and_no_byte() {
    const COUNT: u32 = 150;
    let home = Home::new();
    let go = shell_quote(&home.path().join("go"));
    let end = shell_quote(&home.path().join("end"));
    // Counts once told to go, then stays until told to end.
    let counter = home.start(&[
        "--name",
        "counter",
        "cmd",
        "--",
        "sh",
        "-c",
        &format!(
            "while [ ! -e {go} ]; do sleep 0.02; done; i=0; while [ $i -lt {COUNT} ]; do echo n$i; i=$((i+1)); sleep 0.02; done; echo done; while [ ! -e {end} ]; do sleep 0.02; done"
        ),
    ]);
    // Ends, with code 3, while the daemon is dead.
    let short = home.start(&[
        "cmd",
        "--",
        "sh",
        "-c",
        &format!("while [ ! -e {go} ]; do sleep 0.02; done; echo bye; exit 3"),
    ]);
    let agent = home.start(&["demo"]);
    wait_idle(&home, &agent);

    let old_daemon = home.daemon_pid().expect("daemon.pid");
    kill9(old_daemon);
    home.wait_until("the daemon is dead", || !pid_alive(old_daemon));
    std::fs::write(home.path().join("go"), b"").unwrap();
    home.wait_until("the counter keeps counting with no daemon", || {
        disk_log(&home, &counter).contains("n60\r\n")
    });
    let exit_evidence = home.path().join("runs").join(&short).join("exit.json");
    home.wait_until("the short run ends with no daemon", || exit_evidence.exists());
    assert!(!pid_alive(old_daemon));

    // Any command brings a new daemon, which re-adopts the live runs.
    let live = home.json(&["ls", "--json"]);
    let new_daemon = home.daemon_pid().expect("daemon.pid");
    assert_ne!(new_daemon, old_daemon);
    assert!(pid_alive(new_daemon));
    let state_of = |id: &str| {
        live.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| r["state"].clone())
    };
    assert_eq!(state_of(&counter), Some("running".into()), "{live}");
    assert_eq!(state_of(&agent), Some("running".into()), "{live}");
    let status = home.json(&["daemon", "status", "--json"]);
    assert!(status["live_runs"].as_u64().unwrap() >= 2, "{status}");

    // The run that ended meanwhile gets its real end from the evidence.
    let ended = home.wait_end(&short);
    assert_eq!(ended["state"], "failed", "{ended}");
    assert_eq!(ended["exit_code"], 3, "{ended}");
    assert!(
        ended["reason"].as_str().unwrap().contains("exited with code 3"),
        "{ended}"
    );

    // The re-adopted agent takes prompts and cancels.
    send_and_see_answer(&home, &agent, "still there?");
    home.ok(&["cancel", &agent]);
    assert_eq!(home.state(&agent), "cancelled");

    // Every byte is in the log, once, in order, and the daemon serves exactly it.
    wait_for_output(&home, &counter, "done\r\n");
    std::fs::write(home.path().join("end"), b"").unwrap();
    let finished = home.wait_end(&counter);
    assert_eq!(finished["state"], "succeeded", "{finished}");
    let on_disk = std::fs::read(home.log_path(&counter)).unwrap();
    assert_eq!(home.raw_log(&counter), on_disk);
    assert_eq!(
        counter_values(&text(&on_disk)),
        (0..COUNT).collect::<Vec<_>>(),
        "every counter value, in order"
    );
    assert_eq!(finished["output_bytes"], on_disk.len() as u64, "{finished}");
}

/// A run's record says every byte its log holds, also when it printed
/// before the daemon adopted it and then nothing more: its offset came with
/// its supervisor's hello, and only offsets after it were stored (0 bytes
/// for good).
#[test]
fn a_run_that_printed_only_as_it_started_says_every_byte_of_it() {
    let home = Home::new();
    let said = "printed at once";
    let runs: Vec<String> = (0..5)
        .map(|_| home.start(&["cmd", "--", "sh", "-c", &format!("printf '{said}'; exec sleep 600")]))
        .collect();
    for id in &runs {
        home.wait_until("its output is in its log", || {
            std::fs::read(home.log_path(id)).is_ok_and(|log| log.len() == said.len())
        });
        home.wait_until("its record says every byte", || {
            home.show(id)["output_bytes"] == said.len() as u64
        });
    }
}

/// `show` says all a live run has printed so far, though nobody watches it
/// and its supervisor announces output at a slow pace.
#[test]
fn show_says_all_a_live_unwatched_run_has_printed_so_far() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", "while :; do echo tick; sleep 0.05; done"]);
    let logged = || std::fs::metadata(home.log_path(&id)).map_or(0, |m| m.len());
    let mut before = 0;
    for _ in 0..5 {
        home.wait_until("it printed more", || logged() >= before + 100);
        before = logged();
        let shown = home.show(&id)["output_bytes"].as_u64().unwrap();
        assert!(shown >= before, "show says {shown} bytes, the log held {before} before");
    }
}

#[test]
fn a_prompt_queued_before_a_daemon_crash_still_waits_for_the_agent_to_be_idle() {
    let home = Home::new();
    let id = home.start(&["demo", "--", "--think-ms", "2000"]);
    wait_idle(&home, &id);
    assert!(home.ok(&["send", &id, "one"]).starts_with("delivered"));
    assert!(home.ok(&["send", &id, "two"]).starts_with("queued"));
    wait_for_output(&home, &id, "Thinking");

    let old_daemon = home.daemon_pid().expect("daemon.pid");
    kill9(old_daemon);
    home.wait_until("the daemon is dead", || !pid_alive(old_daemon));
    // The new daemon re-adopts the run while the agent is still thinking.
    home.ok(&["daemon", "start"]);

    wait_for_output(&home, &id, "you said \"two\"");
    // As the terminal shows it (a prompt is typed as a bracketed paste).
    let log = home.logs(&id);
    let answer_one = log
        .find("you said \"one\"")
        .unwrap_or_else(|| panic!("one answered: {log:?}"));
    let typed_two = log
        .find("> two")
        .unwrap_or_else(|| panic!("two typed at the prompt: {log:?}"));
    assert!(
        answer_one < typed_two,
        "`two` was typed only once the agent had answered `one`: {log:?}"
    );
}

#[test]
fn a_supervisor_crash_interrupts_only_its_run_and_tells_the_parent() {
    let home = Home::new();
    let parent = home.start(&["--name", "parent", "demo"]);
    let child = home.start(&["--parent", "parent", "demo"]);
    wait_idle(&home, &parent);
    wait_for_output(&home, &child, "> ");

    let supervisor = supervisor_of(&home, &child);
    let harness = harness_pid(&home, &child);
    assert_ne!(supervisor, supervisor_of(&home, &parent));
    kill9(supervisor);

    home.wait_until("the child run ends", || home.state(&child) != "running");
    let run = home.show(&child);
    assert_eq!(run["state"], "interrupted", "{run}");
    assert!(run["reason"].as_str().unwrap().contains("supervisor died"), "{run}");
    assert!(!pid_alive(harness), "the harness died of the hangup");

    let told: Vec<Value> = home
        .events(&parent)
        .into_iter()
        .filter(|e| e["kind"] == "CHILD_ENDED")
        .collect();
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["data"]["child"], child.as_str());
    assert_eq!(told[0]["data"]["state"], "interrupted");

    // The other run never noticed.
    assert_eq!(home.state(&parent), "running");
    send_and_see_answer(&home, &parent, "are you ok");
}

#[test]
fn a_harness_that_survives_its_supervisor_is_lost_until_force_cancelled() {
    let home = Home::new();
    let id = home.start(&[
        "cmd",
        "--",
        "sh",
        "-c",
        "trap '' HUP; echo up; while :; do sleep 1; done",
    ]);
    wait_for_output(&home, &id, "up");
    let pid = harness_pid(&home, &id);
    kill9(supervisor_of(&home, &id));

    home.wait_until("the run is lost", || home.state(&id) == "lost");
    let run = home.show(&id);
    assert!(
        run["reason"].as_str().unwrap().contains(&format!("pid {pid}")),
        "the reason names the pid: {run}"
    );
    assert!(pid_alive(pid), "the harness ignored the hangup");

    home.ok(&["cancel", "--force", &id]);
    home.wait_until("the lost harness and its group are gone", || {
        !pid_alive(pid) && group_members(pid).is_empty()
    });
    let signalled: Vec<Value> = home
        .events(&id)
        .into_iter()
        .filter(|e| e["kind"] == "SIGNALLED")
        .collect();
    assert_eq!(signalled.len(), 1, "{:?}", home.event_kinds(&id));
    assert_eq!(signalled[0]["data"]["signal"], "SIGKILL");
}

#[test]
fn cancelling_a_parent_cancels_owned_children_but_not_detached_ones() {
    let home = Home::new();
    let parent = home.start(&["--name", "boss", "demo"]);
    let owned = home.start(&["--parent", "boss", "demo"]);
    let detached = home.start(&["--parent", &parent, "--detached", "demo"]);
    for run in [&parent, &owned, &detached] {
        wait_for_output(&home, run, "> ");
    }
    let record = home.show(&owned);
    assert_eq!(record["parent_id"], parent.as_str());
    assert_eq!(record["root_id"], parent.as_str());
    assert_eq!(home.show(&detached)["detached"], true);

    home.ok(&["cancel", "boss"]);
    assert_eq!(home.state(&parent), "cancelled");
    let owned_end = home.wait_end(&owned);
    assert_eq!(owned_end["state"], "cancelled", "{owned_end}");

    assert_eq!(home.state(&detached), "running", "a detached child survives");
    assert!(!home.event_kinds(&detached).contains(&"CANCEL_REQUESTED".to_string()));
    send_and_see_answer(&home, &detached, "still here");
    home.ok(&["cancel", &detached]);
    assert_eq!(home.state(&detached), "cancelled");
}

#[test]
fn cancel_takes_several_runs_a_filter_or_all_and_asks_before_a_filter_picks() {
    let home = Home::new();
    let shells: Vec<String> = (0..3)
        .map(|i| {
            home.start(&[
                "--name",
                &format!("loop{i}"),
                "cmd",
                "--",
                "sh",
                "-c",
                "while :; do date; sleep 1; done",
            ])
        })
        .collect();
    let agent = home.start(&["--name", "helper", "demo"]);
    wait_for_output(&home, &agent, "> ");

    // A filter picks; without a terminal to ask on, nothing is cancelled.
    let refused = home.fails(&["cancel", "--harness", "cmd"]);
    assert!(
        refused.contains("3 run(s) would be") && refused.contains("--yes"),
        "{refused}"
    );
    assert!(shells.iter().all(|r| home.state(r) == "running"));

    // Named runs, one of which names nothing: the others still end.
    let out = home.run(&["cancel", "loop0", "nobody"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("nobody: no run matches"),
        "{}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).contains("loop0 cancelled"), "{}", text(&out.stdout));

    let out = home.ok(&["cancel", "--harness", "cmd", "--yes"]);
    assert!(
        out.contains("loop1 cancelled") && out.contains("loop2 cancelled"),
        "{out}"
    );
    assert!(out.contains("2 run(s) ended"), "{out}");
    assert!(shells.iter().all(|r| home.state(r) == "cancelled"));
    assert_eq!(home.state(&agent), "running", "the filter left the demo agent");

    home.ok(&["cancel", "--all", "--yes"]);
    assert_eq!(home.state(&agent), "cancelled");
    assert_eq!(home.ok(&["cancel", "--all", "--yes"]).trim(), "no live run to cancel");
    let both = home.fails(&["cancel", "helper", "--all"]);
    assert!(both.contains("not both"), "{both}");
}

#[test]
fn a_run_started_from_inside_a_run_is_its_child() {
    let home = Home::new();
    // The outer run starts the inner one with the real CLI, from its PTY.
    let outer = home.start(&[
        "cmd",
        "--",
        "sh",
        "-c",
        "\"$0\" run -d --name inner cmd -- sleep 60 && echo started; exec sleep 60",
        common::BIN,
    ]);
    wait_for_output(&home, &outer, "started");
    let inner = home.show("inner");
    assert_eq!(inner["parent_id"], outer.as_str(), "{inner}");
    assert_eq!(inner["state"], "running");

    home.ok(&["cancel", &outer]);
    let inner_end = home.wait_end("inner");
    assert_eq!(inner_end["state"], "cancelled", "an owned child: {inner_end}");
}

#[test]
fn prompts_to_a_busy_agent_are_queued_and_delivered_once_in_order() {
    let home = Home::new();
    // The agent thinks until `go` exists: every send below comes while it
    // is busy with the first prompt, however slowly the sends go.
    let hold = tempfile::tempdir().unwrap();
    let go = hold.path().join("go");
    let go_arg = go.to_string_lossy().into_owned();
    let id = home.start(&["demo", "--", "--think-ms", "300", "--think-until", &go_arg]);
    wait_idle(&home, &id);

    let send = |text: &str, prompt_id: Option<&str>| -> (String, String) {
        let mut args = vec!["send", &id, text];
        if let Some(p) = prompt_id {
            args.extend(["--id", p]);
        }
        let out = home.ok(&args);
        let (state, rest) = out.trim().split_once(" (prompt ").expect("`STATE (prompt ID)`");
        (state.to_string(), rest.trim_end_matches(')').to_string())
    };
    let (state, first) = send("one", None);
    assert_eq!(state, "delivered", "an idle agent takes a prompt at once");
    let (state, second) = send("two", Some("p-two"));
    assert_eq!(
        (state.as_str(), second.as_str()),
        ("queued", "p-two"),
        "sent while the agent thinks"
    );
    // A retry of a queued prompt is the same prompt, still waiting.
    assert_eq!(send("two", Some("p-two")), ("queued".to_string(), "p-two".to_string()));
    let mut expected = vec![first, second];
    for text in ["three", "four"] {
        let (state, id) = send(text, None);
        assert_eq!(state, "queued", "{text} is sent while the agent thinks");
        expected.push(id);
    }
    std::fs::write(&go, b"").unwrap();

    wait_for_output(&home, &id, "you said \"four\"");
    // A retry of a delivered prompt is not typed again; a later prompt is
    // the barrier that proves it.
    assert_eq!(
        send("two", Some("p-two")),
        ("delivered".to_string(), "p-two".to_string())
    );
    let (_, last) = send("five", None);
    expected.push(last);
    wait_for_output(&home, &id, "you said \"five\"");

    let answers: Vec<String> = home
        .logs(&id)
        .lines()
        .filter_map(|l| l.split("you said \"").nth(1))
        .map(|s| s.trim_end_matches('"').to_string())
        .collect();
    assert_eq!(answers, ["one", "two", "three", "four", "five"]);
    let delivered: Vec<String> = home
        .events(&id)
        .iter()
        .filter(|e| e["kind"] == "PROMPT_DELIVERED")
        .map(|e| e["data"]["prompt_id"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(delivered, expected);

    // An ended run takes no prompt.
    home.ok(&["send", &id, "exit"]);
    assert_eq!(home.wait_end(&id)["state"], "succeeded");
    let err = one_line_failure(&home.run(&["send", &id, "hello?"]));
    assert!(err.contains("succeeded"), "{err}");
}

/// A git repository with two commits, made with an identity of its own so it
/// works on a machine where git was never configured.
fn git_repo() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    for args in [
        &["init", "-q"][..],
        &["commit", "-q", "--allow-empty", "-m", "first"],
        &["commit", "-q", "--allow-empty", "-m", "second"],
    ] {
        git(repo.path(), args);
    }
    repo
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=agents tests", "-c", "user.email=tests@agents.invalid"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

#[test]
fn a_worktree_run_gets_its_own_branch_and_a_conflict_blocks_without_touching_anything() {
    let home = Home::new();
    let repo = git_repo();
    let repo_dir = repo.path().to_str().unwrap();

    let id = home.start(&[
        "--worktree",
        "--name",
        "w1",
        "--cwd",
        repo_dir,
        "cmd",
        "--",
        "sh",
        "-c",
        "git branch --show-current",
    ]);
    let end = home.wait_end(&id);
    assert_eq!(end["state"], "succeeded", "{end}");
    assert_eq!(home.logs(&id).trim(), "agents/w1");
    let worktree = PathBuf::from(end["worktree"].as_str().expect("worktree set"));
    assert!(worktree.join(".git").exists(), "{}", worktree.display());
    assert_eq!(end["cwd"], worktree.to_str().unwrap());
    assert_eq!(
        git(repo.path(), &["rev-parse", "agents/w1"]),
        git(repo.path(), &["rev-parse", "HEAD"])
    );

    // An existing branch: blocked, and the branch still points where it did.
    git(repo.path(), &["branch", "agents/w2", "HEAD~1"]);
    let before = git(repo.path(), &["rev-parse", "agents/w2"]);
    let out = home.run(&[
        "run",
        "-d",
        "--worktree",
        "--name",
        "w2",
        "--cwd",
        repo_dir,
        "cmd",
        "--",
        "true",
    ]);
    let err = one_line_failure(&out);
    assert!(err.contains("worktree conflict") && err.contains("agents/w2"), "{err}");
    let run = home.show("w2");
    assert_eq!(run["state"], "blocked");
    assert!(
        run["reason"]
            .as_str()
            .unwrap()
            .contains("branch agents/w2 already exists"),
        "{run}"
    );
    assert_eq!(run["pid"], Value::Null);
    assert_eq!(git(repo.path(), &["rev-parse", "agents/w2"]), before);
    assert!(!home.path().join("worktrees/w2").exists());

    // An existing directory: blocked, its contents kept, no branch made.
    let taken = home.path().join("worktrees/w3");
    std::fs::create_dir_all(&taken).unwrap();
    std::fs::write(taken.join("keep.txt"), "mine").unwrap();
    let out = home.run(&[
        "run",
        "-d",
        "--worktree",
        "--name",
        "w3",
        "--cwd",
        repo_dir,
        "cmd",
        "--",
        "true",
    ]);
    let err = one_line_failure(&out);
    assert!(
        err.contains("worktree conflict") && err.contains("already exists"),
        "{err}"
    );
    assert_eq!(home.state("w3"), "blocked");
    assert_eq!(std::fs::read_to_string(taken.join("keep.txt")).unwrap(), "mine");
    assert_eq!(std::fs::read_dir(&taken).unwrap().count(), 1);
    assert_eq!(git(repo.path(), &["branch", "--list", "agents/w3"]), "");

    // Outside a repository there is nothing to branch.
    let plain = tempfile::tempdir().unwrap();
    let out = home.run(&[
        "run",
        "-d",
        "--worktree",
        "--cwd",
        plain.path().to_str().unwrap(),
        "cmd",
        "--",
        "true",
    ]);
    let err = one_line_failure(&out);
    assert!(err.contains("needs a git repository"), "{err}");
    let id = text(&out.stdout).trim().to_string();
    assert_eq!(home.state(&id), "blocked");
}

#[test]
fn a_database_from_a_newer_version_is_refused_and_left_alone() {
    let home = Home::new();
    let db = home.path().join("agents.db");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE future (x); PRAGMA user_version = 99;")
            .unwrap();
    }
    let before = std::fs::read(&db).unwrap();

    let err = one_line_failure(&home.run(&["ls"]));
    assert!(err.contains("schema version 99") && err.contains("newer"), "{err}");
    let err = one_line_failure(&home.run(&["run", "-d", "cmd", "--", "true"]));
    assert!(err.contains("newer"), "{err}");

    let conn = rusqlite::Connection::open(&db).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 99);
    drop(conn);
    assert!(
        std::fs::read(&db).unwrap() == before,
        "not one byte of the file changed"
    );
    for side_file in ["agents.db-wal", "agents.db-shm"] {
        assert!(!home.path().join(side_file).exists(), "{side_file} was created");
    }
    let status = home.run(&["daemon", "status"]);
    assert_eq!(
        status.status.code(),
        Some(1),
        "no daemon stays up: {}",
        text(&status.stdout)
    );
}

#[test]
fn a_full_disk_fails_the_run_and_the_daemon_stays_up() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: mounting a small tmpfs needs root");
        return;
    }
    // The run is paused on the full disk only briefly before it is ended.
    let home = Home::with_config(
        "[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\ndisk_full_patience_ms = 500\n",
    );
    let _disk = common::disk::Tmpfs::mount(&home.path().join("runs"), "2m").expect("mount a 2 MiB tmpfs as root");

    let id = home.start(&["demo", "--", "--flood", "8000000"]);
    let end = home.wait_end(&id);
    assert_eq!(end["state"], "failed", "{end}");
    assert!(
        end["reason"]
            .as_str()
            .unwrap()
            .contains("output log write failed: the disk is full"),
        "{end}"
    );

    let daemon = home.daemon_pid().unwrap();
    assert!(home.run(&["daemon", "status"]).status.success());
    let all = home.json(&["ls", "--all", "--json"]);
    assert_eq!(all.as_array().unwrap().len(), 1, "{all}");
    // A run with nothing to write still runs and ends, with its evidence.
    let quiet = home.start(&["cmd", "--", "true"]);
    assert_eq!(home.wait_end(&quiet)["state"], "succeeded");
    assert_eq!(home.daemon_pid(), Some(daemon));
    assert!(pid_alive(daemon));
}

#[test]
fn an_unknown_or_ambiguous_reference_is_a_one_line_error_and_names_resolve() {
    let home = Home::new();
    let err = one_line_failure(&home.run(&["show", "NOPE"]));
    assert!(err.contains("no run matches 'NOPE'"), "{err}");

    let first = home.start(&["--name", "alpha", "cmd", "--", "true"]);
    let second = home.start(&["--name", "beta", "cmd", "--", "true"]);
    let prefix = &first[..1];
    assert!(
        second.starts_with(prefix),
        "ULIDs minted now share their first character"
    );
    let err = one_line_failure(&home.run(&["show", prefix]));
    assert!(err.contains("matches several runs"), "{err}");
    assert!(err.contains(&first) && err.contains(&second), "{err}");
    // Past six it names six, and says there are more.
    let more: Vec<String> = (0..5).map(|_| home.start(&["cmd", "--", "true"])).collect();
    let err = one_line_failure(&home.run(&["show", prefix]));
    let all = [&first, &second].into_iter().chain(&more);
    assert_eq!(all.filter(|id| err.contains(id.as_str())).count(), 6, "{err}");
    assert!(err.contains(" and more"), "{err}");

    assert_eq!(home.show("alpha")["id"], first.as_str());
    assert_eq!(home.show("beta")["id"], second.as_str());
    assert_eq!(home.show(&second[..second.len() - 1])["id"], second.as_str());
    let err = one_line_failure(&home.run(&["cancel", "nope-either"]));
    assert!(err.contains("no run matches"), "{err}");
    // An ended run is named as the user named it.
    home.wait_end(&first);
    let err = one_line_failure(&home.run(&["send", "alpha", "hi"]));
    assert_eq!(err.trim(), "agents: run alpha has already ended (succeeded)");
}

/// The nice value of the scheduling group (the session) `pid` leads.
fn group_nice(pid: i64) -> Option<i32> {
    let group = std::fs::read_to_string(format!("/proc/{pid}/autogroup")).ok()?;
    group.rsplit_once("nice ")?.1.trim().parse().ok()
}

#[test]
fn a_flooding_run_yields_the_processor_while_it_floods_and_gets_it_back_after() {
    if !Path::new("/proc/self/autogroup").exists() {
        eprintln!("skipped: this kernel does not group processes by session (no /proc/self/autogroup)");
        return;
    }
    // A flood well above the threshold even for a debug build on a busy
    // machine; then the harness stays, quiet.
    let home = Home::with_config("[engine]\nflood_bytes_per_s = 200000\n");
    let id = home.start(&["cmd", "--", "sh", "-c", "timeout 4 yes; exec sleep 60"]);
    let pid = home.show(&id)["pid"].as_i64().expect("the harness's pid");
    home.wait_until("the flooding harness's session yields", || group_nice(pid) == Some(19));
    home.wait_until("the quiet harness's session has its share back", || {
        group_nice(pid) == Some(0)
    });
    assert_eq!(home.state(&id), "running", "the run goes on: {}", home.show(&id));

    // With yielding off, the same flood keeps its share.
    let home = Home::with_config("[engine]\nflood_bytes_per_s = 0\n");
    let id = home.start(&["cmd", "--", "sh", "-c", "timeout 4 yes; exec sleep 60"]);
    let pid = home.show(&id)["pid"].as_i64().expect("the harness's pid");
    let log = home.log_path(&id);
    home.wait_until("the flood has printed a megabyte", || {
        std::fs::metadata(&log).is_ok_and(|m| m.len() > 1 << 20)
    });
    assert_eq!(group_nice(pid), Some(0), "yielding is off");
}

/// A run that fails at once is no longer live, so `agents ls` does not
/// list it: it says, under the live runs, that it ended lately, and how it
/// ended. Filtered or `--all`, the list says nothing more.
#[test]
fn ls_tells_of_a_run_that_ended_lately_under_the_live_ones() {
    let home = Home::new();
    let quick = home.start(&["--name", "quick", "cmd", "--", "sh", "-c", "echo no key; exit 1"]);
    assert_eq!(home.wait_end(&quick)["state"], "failed");
    let listed = home.ok(&["ls"]);
    assert!(listed.contains("no live runs"), "{listed}");
    assert!(listed.contains("ended lately: quick failed "), "{listed}");
    let live = home.start(&["--name", "steady", "cmd", "--", "sleep", "600"]);
    let listed = home.ok(&["ls"]);
    assert!(
        listed.contains("steady") && listed.contains("ended lately: quick failed "),
        "{listed}"
    );
    for args in [&["ls", "--all"][..], &["ls", "--state", "live"][..]] {
        assert!(!home.ok(args).contains("ended lately"), "{args:?}");
    }
    home.ok(&["cancel", &live]);
}
