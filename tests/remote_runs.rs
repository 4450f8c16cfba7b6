//! Run semantics on a remote host across link loss (issue #5, docs/design.md §4,
//! §8, §11): commands sent while the link is down are applied exactly once
//! or fail naming the host; a late permission answer is applied only while
//! its question is still there; cancellation follows ownership edges there
//! as here; a remote daemon killed with SIGKILL comes back by itself with
//! its runs re-adopted (or `interrupted` when their supervisor died too).
//!
//! Client and "remote" are the same machine, through a real sshd on
//! loopback (`tests/sshd`), with a fault-injecting proxy in front of it
//! where the link must drop.

mod common;
mod sshd;

use std::process::{Command, Output};

use serde_json::{Value, json};
use sshd::Net;
use sshd::serve::Serve;

/// A host `box` reached directly.
fn direct() -> Net {
    let net = Net::new();
    net.know_the_host();
    net.add_host("box", &net.target());
    net
}

/// A host `box` reached through the proxy, so the link can be cut.
fn proxied() -> Net {
    let net = Net::with_proxy();
    net.know_the_host();
    net.add_host("box", &net.target_via_proxy());
    net
}

fn state_here(net: &Net, id: &str) -> String {
    net.json(&["show", id, "--json"])["state"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn link_phase(net: &Net) -> String {
    net.json(&["hosts", "ls", "--json"])[0]["link"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// How many times `needle` occurs in the mirror log of `id`.
fn count_in_log(net: &Net, id: &str, needle: &str) -> usize {
    text(&std::fs::read(net.local.log_path(id)).unwrap_or_default())
        .matches(needle)
        .count()
}

/// Starts an `agents` command in the background (it waits out the outage).
fn in_background(mut command: Command) -> std::thread::JoinHandle<Output> {
    std::thread::spawn(move || command.output().expect("run agents"))
}

/// Cuts the proxy and waits until the local daemon has seen the link go.
fn cut_and_wait(net: &Net) {
    net.proxy().cut();
    net.wait_until("the local daemon sees the link down", || link_phase(net) != "up");
}

/// The local daemon's log: it says when a command to a host waits for the
/// link, is sent, or lost its answer.
fn daemon_log(net: &Net) -> String {
    std::fs::read_to_string(net.local.path().join("daemon.log")).unwrap_or_default()
}

/// Cancels runs still live on the host while the link is up: the proxy is
/// cut first when the test's `Net` is dropped, and a cancel then would wait
/// for a link that never returns.
fn end_while_linked(net: &Net, ids: &[&str]) {
    for id in ids {
        net.ok(&["cancel", "--force", id]);
    }
}

/// The process's parent pid, from `/proc/<pid>/stat`.
fn ppid(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].split_whitespace().nth(1)?.parse().ok()
}

fn cmdline(pid: i32) -> String {
    text(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default()).replace('\0', " ")
}

#[test]
fn cancelling_a_remote_parent_cancels_the_children_it_owns_there_and_here() {
    let net = direct();
    // The parent starts a child itself, from inside the run: `agents run`
    // there talks to the host's daemon, which takes the parent from
    // AGENTS_RUN_ID.
    let parent = net.start_on(
        "box",
        &[
            "cmd",
            "--",
            "sh",
            "-c",
            &format!("'{}' run -d cmd -- sleep 600; exec sleep 600", common::BIN),
        ],
    );
    let by_flag = net.start_on("box", &["--parent", &parent, "cmd", "--", "sleep", "600"]);
    // A local run owned by the remote one: only this daemon knows that edge.
    let local_child = net.ok(&["run", "-d", "--parent", &parent, "cmd", "--", "sleep", "600"]);
    let local_child = local_child.trim().to_string();

    let mut from_inside = String::new();
    net.wait_until("the parent's own child runs there", || {
        let there = net.remote.json(&["ls", "--json"]);
        let found = there
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["parent_id"] == parent.as_str() && r["id"] != by_flag.as_str() && r["state"] == "running");
        if let Some(r) = found {
            from_inside = r["id"].as_str().unwrap().to_string();
        }
        !from_inside.is_empty()
    });
    net.wait_until("everything runs", || {
        net.remote.state(&parent) == "running"
            && net.remote.state(&by_flag) == "running"
            && net.local.state(&local_child) == "running"
    });
    assert_eq!(net.json(&["show", &by_flag, "--json"])["parent_id"], parent.as_str());
    // Both sides agree on the tree: the child the parent started there is
    // mirrored here, under it.
    net.wait_until("the parent's own child is mirrored here", || {
        let out = net.run(&["show", &from_inside, "--json"]);
        out.status.success() && {
            let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
            shown["host"] == "box" && shown["parent_id"] == parent.as_str()
        }
    });

    let out = net.ok(&["cancel", &parent]);
    assert!(out.contains("cancelled"), "{out}");
    for child in [&by_flag, &from_inside] {
        net.wait_until("the host cancelled the owned child", || {
            net.remote.state(child) == "cancelled"
        });
    }
    for child in [&by_flag, &from_inside] {
        net.wait_until("the mirror of the child says so here", || {
            state_here(&net, child) == "cancelled"
        });
    }
    net.wait_until("the local child was cancelled from here", || {
        net.local.state(&local_child) == "cancelled"
    });
    assert_eq!(state_here(&net, &parent), "cancelled");
    assert_eq!(net.remote.state(&parent), "cancelled");
}

#[test]
fn a_detached_remote_child_survives_its_parents_cancellation_and_keeps_its_own() {
    let net = direct();
    let parent = net.start_on("box", &["cmd", "--", "sleep", "600"]);
    let owned = net.start_on("box", &["--parent", &parent, "cmd", "--", "sleep", "600"]);
    let detached = net.start_on("box", &["--parent", &parent, "--detached", "cmd", "--", "sleep", "600"]);
    net.wait_until("all three run there", || {
        [&parent, &owned, &detached]
            .iter()
            .all(|id| net.remote.state(id) == "running")
    });
    assert_eq!(net.json(&["show", &detached, "--json"])["detached"], true);

    net.ok(&["cancel", &parent]);
    net.wait_until("the owned child is cancelled there", || {
        net.remote.state(&owned) == "cancelled"
    });
    net.wait_until("and here", || state_here(&net, &owned) == "cancelled");
    // Cancels are asked of supervisors, each in turn: by now the detached
    // child would have been asked too.
    assert_eq!(net.remote.state(&detached), "running");
    assert_eq!(state_here(&net, &detached), "running");
    assert!(
        !net.remote
            .event_kinds(&detached)
            .contains(&"CANCEL_REQUESTED".to_string()),
        "nobody asked the detached child to end"
    );

    // Its own cancel path still works.
    net.ok(&["cancel", &detached]);
    assert_eq!(state_here(&net, &detached), "cancelled");
    assert_eq!(net.remote.state(&detached), "cancelled");
}

#[test]
fn a_remote_daemon_killed_with_sigkill_comes_back_and_its_runs_are_readopted_or_interrupted() {
    let net = direct();
    let survivor = net.start_on("box", &["cmd", "--", "sh", "-c", "echo before; read x; echo got-$x"]);
    let orphan = net.start_on("box", &["cmd", "--", "sleep", "600"]);
    net.wait_until("both run there and the first line is here", || {
        net.remote.state(&orphan) == "running" && count_in_log(&net, &survivor, "before") == 1
    });
    let daemon = net.remote.daemon_pid().expect("the remote daemon's pid");
    assert!(cmdline(daemon).contains("daemon"), "{}", cmdline(daemon));
    // The orphan's harness was spawned by its supervisor.
    let harness = net.remote.show(&orphan)["pid"].as_i64().unwrap() as i32;
    let supervisor = ppid(harness).expect("the harness's parent");
    assert!(cmdline(supervisor).contains("supervise"), "{}", cmdline(supervisor));

    common::kill9(daemon);
    net.wait_until("the remote daemon is gone", || !common::pid_alive(daemon));
    // The orphan's supervisor dies too, while no daemon watches: its harness
    // gets the PTY's hangup.
    common::kill9(supervisor);
    net.wait_until("the orphan's harness is gone", || !common::pid_alive(harness));

    // Nobody restarts the remote daemon but the link: its followers connect
    // again, and `agents serve` starts a daemon there, which re-adopts.
    net.wait_until("a new daemon runs there", || {
        net.remote
            .daemon_pid()
            .is_some_and(|p| p != daemon && common::pid_alive(p))
    });
    net.wait_until("the link is up again", || link_phase(&net) == "up");
    net.wait_until("the orphan is interrupted, there and here", || {
        state_here(&net, &orphan) == "interrupted"
    });
    assert_eq!(net.remote.state(&orphan), "interrupted");
    let reason = net.json(&["show", &orphan, "--json"])["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(reason.contains("supervisor died"), "{reason}");

    // The survivor was re-adopted: still running, and it takes input.
    assert_eq!(net.remote.state(&survivor), "running");
    assert_eq!(state_here(&net, &survivor), "running");
    net.ok(&["send", &survivor, "after"]);
    let ended: Value = serde_json::from_str(&net.ok(&["wait", &survivor, "--json"])).unwrap();
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert_eq!(
        text(&std::fs::read(net.local.log_path(&survivor)).unwrap()),
        text(&std::fs::read(net.remote.log_path(&survivor)).unwrap()),
        "no byte lost or doubled across the remote daemon's death"
    );
    assert_eq!(count_in_log(&net, &survivor, "got-after"), 1);
}

#[test]
fn a_prompt_and_a_cancel_sent_while_the_link_is_down_are_applied_once_it_returns() {
    let net = proxied();
    let reader = net.start_on("box", &["cmd", "--", "sh", "-c", "while read l; do echo got-$l; done"]);
    let sleeper = net.start_on("box", &["cmd", "--", "sleep", "600"]);
    net.wait_until("both run there", || {
        net.remote.state(&reader) == "running" && net.remote.state(&sleeper) == "running"
    });

    cut_and_wait(&net);
    let send = in_background(net.cmd(&["send", &reader, "during", "--id", "PROMPT-OUTAGE-1"]));
    let cancel = in_background(net.cmd(&["cancel", &sleeper]));
    net.wait_until("both commands wait for the link", || {
        let log = daemon_log(&net);
        log.contains(&format!("prompt PROMPT-OUTAGE-1 to run {reader} waits"))
            && log.contains(&format!("the cancel of run {sleeper} waits"))
    });
    assert!(!net.remote.event_kinds(&reader).contains(&"PROMPT_QUEUED".to_string()));
    assert_eq!(net.remote.state(&sleeper), "running");
    net.proxy().restore();

    let sent = send.join().unwrap();
    assert!(sent.status.success(), "{}", text(&sent.stderr));
    assert!(text(&sent.stdout).contains("PROMPT-OUTAGE-1"), "{}", text(&sent.stdout));
    let cancelled = cancel.join().unwrap();
    assert!(cancelled.status.success(), "{}", text(&cancelled.stderr));
    assert_eq!(net.remote.state(&sleeper), "cancelled");
    assert_eq!(state_here(&net, &sleeper), "cancelled");

    net.wait_until("the prompt was typed there and mirrored here", || {
        count_in_log(&net, &reader, "got-during") == 1
    });
    // Sending the same id again (a user's retry) delivers nothing more.
    net.ok(&["send", &reader, "during", "--id", "PROMPT-OUTAGE-1"]);
    net.ok(&["send", &reader, "marker"]);
    net.wait_until("a later prompt arrives", || {
        count_in_log(&net, &reader, "got-marker") == 1
    });
    assert_eq!(count_in_log(&net, &reader, "got-during"), 1, "delivered exactly once");
    let queued = net
        .remote
        .event_kinds(&reader)
        .iter()
        .filter(|k| *k == "PROMPT_QUEUED")
        .count();
    assert_eq!(queued, 2, "one PROMPT_QUEUED per prompt id");
    end_while_linked(&net, &[&reader]);
}

#[test]
fn a_prompt_whose_answer_was_lost_goes_again_with_its_id_and_is_delivered_once() {
    let net = proxied();
    let reader = net.start_on("box", &["cmd", "--", "sh", "-c", "while read l; do echo got-$l; done"]);
    net.wait_until("it runs there", || net.remote.state(&reader) == "running");

    // The prompt goes out into a link that holds every byte, which then
    // drops: whether it arrived, the local daemon cannot know.
    net.proxy().stall();
    let send = in_background(net.cmd(&["send", &reader, "inflight", "--id", "PROMPT-LOST-1"]));
    net.wait_until("the prompt went out", || {
        daemon_log(&net).contains("prompt PROMPT-LOST-1 to run")
    });
    net.proxy().cut();
    net.wait_until("its answer is known lost", || {
        daemon_log(&net).contains("lost its answer")
    });
    net.proxy().restore();

    let sent = send.join().unwrap();
    assert!(sent.status.success(), "{}", text(&sent.stderr));
    assert!(text(&sent.stdout).contains("PROMPT-LOST-1"), "{}", text(&sent.stdout));
    assert!(daemon_log(&net).contains("PROMPT-LOST-1 to run"));
    assert!(
        daemon_log(&net).contains(&format!("prompt PROMPT-LOST-1 to run {reader} sent (attempt 2)")),
        "{}",
        daemon_log(&net)
    );
    net.ok(&["send", &reader, "marker"]);
    net.wait_until("a later prompt arrives", || {
        count_in_log(&net, &reader, "got-marker") == 1
    });
    assert_eq!(count_in_log(&net, &reader, "got-inflight"), 1, "delivered exactly once");
    end_while_linked(&net, &[&reader]);
}

#[test]
fn a_start_whose_answer_was_lost_returns_the_run_the_host_started_not_a_second_one() {
    let net = proxied();
    // A harness whose `--version` answers only once the test says so, so
    // the start is still at work there when the link drops; it says when it
    // is asked.
    let bin = tempfile::tempdir().unwrap();
    let asked = bin.path().join("asked");
    let go = bin.path().join("go");
    let slow = bin.path().join("slowclaude");
    std::fs::write(
        &slow,
        format!(
            "#!/bin/sh
if [ \"$1\" = --version ]; then touch '{}'; while [ ! -e '{}' ]; do sleep 0.02; done; echo '2.0.0 (Claude Code)'; exit 0; fi
exec sleep 600
",
            asked.display(),
            go.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&slow, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let config = net.remote.config.path().join("agents/config.toml");
    let mut toml = std::fs::read_to_string(&config).unwrap();
    toml.push_str(&format!(
        "[profiles.slow]\nfamily = \"claude\"\nbinary = \"{}\"\n",
        slow.display()
    ));
    std::fs::write(&config, toml).unwrap();

    let start = in_background(net.cmd(&["run", "-d", "--host", "box", "--name", "once", "slow"]));
    net.wait_until("the host is starting it", || asked.exists());
    // Its answer will not come back over this connection.
    net.proxy().stall();
    net.proxy().cut();
    net.wait_until("the start's answer is known lost", || {
        daemon_log(&net).contains("lost its answer")
    });
    // The host finishes the start it was at (its answer goes nowhere).
    std::fs::write(&go, b"").unwrap();
    net.proxy().restore();

    let out = start.join().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = text(&out.stdout).trim().to_string();
    assert!(
        daemon_log(&net).contains("sent (attempt 2)"),
        "it was sent again: {}",
        daemon_log(&net)
    );
    let there = net.remote.json(&["ls", "--all", "--json"]);
    assert_eq!(there.as_array().unwrap().len(), 1, "one run there, not two: {there}");
    assert_eq!(there[0]["id"], id.as_str());
    assert_eq!(there[0]["name"], "once");
    net.wait_until("it runs, there and here", || {
        net.remote.state(&id) == "running" && state_here(&net, &id) == "running"
    });
    let here = net.json(&["ls", "--all", "--json"]);
    assert_eq!(here.as_array().unwrap().len(), 1, "{here}");
    end_while_linked(&net, &[&id]);
}

#[test]
fn a_command_during_a_long_outage_fails_naming_the_host_and_is_not_applied() {
    let net = proxied();
    let reader = net.start_on("box", &["cmd", "--", "sh", "-c", "while read l; do echo got-$l; done"]);
    net.wait_until("it runs there", || net.remote.state(&reader) == "running");

    cut_and_wait(&net);
    let out = net.run(&["send", &reader, "lost", "--id", "PROMPT-NEVER-1"]);
    let err = text(&out.stderr);
    // A host's failure has its exit status (issue #35, §3).
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("host box is unreachable"), "{err}");
    assert!(err.contains("was not sent"), "{err}");

    net.proxy().restore();
    net.wait_until("the link is back", || link_phase(&net) == "up");
    net.ok(&["send", &reader, "marker"]);
    net.wait_until("a later prompt arrives", || {
        count_in_log(&net, &reader, "got-marker") == 1
    });
    assert_eq!(
        count_in_log(&net, &reader, "got-lost"),
        0,
        "the failed prompt was never applied"
    );
    end_while_linked(&net, &[&reader]);
}

#[test]
fn a_late_permission_answer_after_a_reconnect_is_applied_only_while_its_question_is_there() {
    let net = proxied();
    let still_asking = net.start_on("box", &["demo", "--", "--ask"]);
    let answered_there = net.start_on("box", &["demo", "--", "--ask"]);
    net.wait_until("both wait for approval, as the mirror says", || {
        [&still_asking, &answered_there]
            .iter()
            .all(|id| net.json(&["show", id, "--json"])["status"] == "needs_approval")
    });

    cut_and_wait(&net);
    // Meanwhile someone on the host answers one of the questions, and it is
    // gone from the screen there (which is what an answer is refused by).
    net.remote.ok(&["answer", &answered_there, "no"]);
    net.remote.wait_until("the host's own answer took", || {
        net.remote.show(&answered_there)["status"] != "needs_approval"
    });
    let late = in_background(net.cmd(&["answer", &still_asking, "yes"]));
    net.wait_until("the answer waits for the link", || {
        daemon_log(&net).contains(&format!("the answer to run {still_asking} waits"))
    });
    net.proxy().restore();

    let late = late.join().unwrap();
    assert!(late.status.success(), "{}", text(&late.stderr));
    net.wait_until("the agent took the late answer", || {
        count_in_log(&net, &still_asking, "approved") == 1
    });

    // The other question is gone: the late answer is refused, not typed.
    let refused = net.run(&["answer", &answered_there, "yes", "--json"]);
    let err = text(&refused.stdout);
    // The host's refusal, with the code and exit status it has here
    // (issue #35, §3: the same as a local run's, `tests/mcp.rs`).
    assert_eq!(refused.status.code(), Some(4), "{err}");
    let said: serde_json::Value = serde_json::from_str(&err).expect("the error as JSON");
    assert_eq!(said["error"]["code"], "conflict", "{said}");
    assert!(err.contains("no question is waiting"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    net.wait_until("the host's own answer is mirrored", || {
        count_in_log(&net, &answered_there, "denied") == 1
    });
    assert_eq!(count_in_log(&net, &answered_there, "approved"), 0);
    let kinds = net.remote.event_kinds(&answered_there);
    assert!(kinds.contains(&"ANSWER_REFUSED".to_string()), "{kinds:?}");
    end_while_linked(&net, &[&still_asking, &answered_there]);
}

#[test]
fn a_daemon_answers_a_repeated_launch_or_answer_id_with_the_first_outcome() {
    // The remote side of exactly-once: what a retry after a lost answer
    // meets (the local daemon resends with the same id).
    let home = common::Home::new();
    let mut daemon = Serve::open(&home);
    let cwd = std::env::temp_dir().display().to_string();
    let start = json!({
        "harness": "demo",
        "args": ["--ask"],
        "cwd": cwd,
        "launch_id": "LAUNCH-RETRY-1",
    });
    let first = daemon.call("runs.start", start.clone()).unwrap();
    let again = daemon.call("runs.start", start).unwrap();
    let id = first["id"].as_str().unwrap().to_string();
    assert_eq!(again["id"], id.as_str(), "the retry returns the same run");
    let all = home.json(&["ls", "--all", "--json"]);
    assert_eq!(all.as_array().unwrap().len(), 1, "one run, not two: {all}");
    let bad = daemon
        .call(
            "runs.start",
            json!({ "harness": "demo", "cwd": cwd, "launch_id": "../x" }),
        )
        .unwrap_err();
    assert_eq!(bad["code"], "bad_request", "{bad}");

    home.wait_until("the run needs approval", || {
        home.show(&id)["status"] == "needs_approval"
    });
    let answer = json!({ "run": id, "answer": "yes", "answer_id": "ANSWER-1" });
    daemon.call("runs.answer", answer.clone()).unwrap();
    home.wait_until("the agent took it", || text(&home.raw_log(&id)).contains("approved"));
    // The agent asks again; a repeat of the first answer must not answer
    // this new question.
    home.ok(&["send", &id, "ask"]);
    home.wait_until("a second question", || {
        text(&home.raw_log(&id)).matches("Do you want to proceed?").count() == 2
            && home.show(&id)["status"] == "needs_approval"
    });
    daemon.call("runs.answer", answer).unwrap();
    // Had the repeat typed its "yes", this question would be gone and the
    // next answer refused; instead it is there to be denied.
    daemon
        .call(
            "runs.answer",
            json!({ "run": id, "answer": "no", "answer_id": "ANSWER-2" }),
        )
        .unwrap();
    // Denied, and gone from the screen: the log is written before the
    // supervisor's screen reads it, and an answer is refused by the screen.
    home.wait_until("the second question was denied", || {
        text(&home.raw_log(&id)).contains("denied") && home.show(&id)["status"] != "needs_approval"
    });
    assert_eq!(text(&home.raw_log(&id)).matches("approved").count(), 1, "answered once");

    // A refused answer is refused again on repeat, even with a question up.
    let refused = json!({ "run": id, "answer": "yes", "answer_id": "ANSWER-3" });
    let first_refusal = daemon.call("runs.answer", refused.clone()).unwrap_err();
    assert_eq!(first_refusal["code"], "conflict", "{first_refusal}");
    home.ok(&["send", &id, "ask"]);
    home.wait_until("a third question", || home.show(&id)["status"] == "needs_approval");
    let repeat = daemon.call("runs.answer", refused).unwrap_err();
    assert_eq!(repeat["code"], "conflict", "{repeat}");
    assert_eq!(
        home.show(&id)["status"],
        "needs_approval",
        "the third question is still open"
    );
}

#[test]
fn a_boxed_run_on_a_host_is_boxed_there() {
    if agents::harness::sandbox::usable(std::env::var("PATH").ok().as_deref()).is_err() {
        eprintln!("skipped: no usable bubblewrap (the CI installs it)");
        return;
    }
    let net = direct();
    let work = tempfile::tempdir().unwrap();
    let script = "touch \"$HOME/boxed-x\" 2>/dev/null || echo home-read-only; \
                  ls \"$AGENTS_HOME\" >/dev/null 2>&1 || echo no-state-there; touch here && echo tree-written";
    let id = net.start_on(
        "box",
        &[
            "--sandbox",
            "--cwd",
            &work.path().display().to_string(),
            "cmd",
            "--",
            "sh",
            "-c",
            script,
        ],
    );
    let ended: Value = serde_json::from_str(&net.ok(&["wait", &id, "--json"])).unwrap();
    assert_eq!(ended["state"], "succeeded", "{ended}");
    assert_eq!(ended["sandbox"], "on", "{ended}");
    assert_eq!(net.remote.show(&id)["sandbox"], "on", "boxed there, by the host");
    let logs = net.ok(&["logs", &id]);
    for said in ["home-read-only", "no-state-there", "tree-written"] {
        assert!(logs.contains(said), "{said}: {logs}");
    }
    assert!(work.path().join("here").is_file());
}
