//! The mailbox against the real binary (docs/design.md §13): a message to a
//! run reaches its agent as a prompt marked as mail, once — sent twice by
//! its id, or stored by a daemon that died before handing it over; its
//! envelope says who sent it; bad input gets a one-line error.

mod common;

use common::Home;
use serde_json::Value;

/// How often the demo agent answered `text`.
fn answers(home: &Home, run: &str, text: &str) -> usize {
    home.logs(run).matches(&format!("you said \"{text}\"")).count()
}

fn at_prompt(home: &Home, run: &str) -> bool {
    home.logs(run).contains(agents::harness::demo::PROMPT.trim_end())
}

#[test]
fn mail_reaches_the_agent_once_marked_with_its_sender_and_id() {
    let home = Home::new();
    let reader = home.start(&["--name", "reader", "demo"]);
    let writer = home.start(&["--name", "writer", "demo"]);
    home.wait_until("reader at its prompt", || at_prompt(&home, &reader));

    // From a run: the sender is the run its AGENTS_RUN_ID names.
    let out = home
        .cmd_in(&writer, &["mail", "send", "reader", "please review parse.rs", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sent: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = sent["id"].as_str().unwrap().to_string();
    assert_eq!(
        (sent["from_name"].as_str(), sent["to_name"].as_str()),
        (Some("writer"), Some("reader"))
    );
    assert_eq!(sent["version"], 1);
    assert_eq!(sent["thread"], id.as_str(), "a first message starts its thread");
    let typed = format!("[mail from writer · {id}] please review parse.rs");
    home.wait_until("the agent answered the mail", || answers(&home, &reader, &typed) == 1);
    home.wait_until("delivered", || {
        home.json(&["mail", "read", &id, "--json"])["state"] == "delivered"
    });

    // Sent again by its id: the same message, not delivered twice.
    let again = home.json(&[
        "mail",
        "send",
        "reader",
        "please review parse.rs",
        "--id",
        &id,
        "--json",
    ]);
    assert_eq!(again["id"], id.as_str());
    // A reply by the user, in the same thread; control bytes made inert.
    let reply = home.json(&["mail", "send", "writer", "done \x1b[2J ok", "--reply-to", &id, "--json"]);
    assert_eq!(
        (reply["thread"].as_str(), reply["in_reply_to"].as_str()),
        (Some(id.as_str()), Some(id.as_str()))
    );
    let reply_id = reply["id"].as_str().unwrap();
    let typed_reply = format!("[mail from user · {reply_id}] done \\x1b[2J ok");
    home.wait_until("the writer answered the reply", || {
        answers(&home, &writer, &typed_reply) == 1
    });
    assert_eq!(answers(&home, &reader, &typed), 1, "delivered once");
    assert_eq!(home.prompts(&reader).iter().filter(|p| p.contains(&id)).count(), 1);

    let listed = home.json(&["mail", "ls", "writer", "--json"]);
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [reply_id, id.as_str()], "to and from the run, newest first");
    let table = home.ok(&["mail", "ls"]);
    assert!(table.contains("writer → reader") && !table.contains('\x1b'), "{table}");
    let read = home.ok(&["mail", "read", reply_id]);
    assert!(
        read.contains("reply to ") && read.contains("done \\x1b[2J ok"),
        "{read}"
    );
}

#[test]
fn a_message_stored_when_the_daemon_died_is_delivered_once_at_the_next_start() {
    let home = Home::new();
    let reader = home.start(&["--name", "reader", "demo"]);
    home.wait_until("reader at its prompt", || at_prompt(&home, &reader));
    home.ok(&["daemon", "stop"]);
    // What a daemon leaves when it dies between storing and handing over.
    {
        let db = rusqlite::Connection::open(home.path().join("agents.db")).unwrap();
        db.execute(
            "INSERT INTO mail (id, version, from_run, from_name, to_run, thread, in_reply_to, at, body, state)
             VALUES ('01LEFTOVER', 1, NULL, 'user', ?1, '01LEFTOVER', NULL, 0, 'left over', 'stored')",
            [&reader],
        )
        .unwrap();
    }
    let typed = "[mail from user · 01LEFTOVER] left over";
    home.wait_until("handed over at the next start", || {
        home.json(&["mail", "read", "01LEFTOVER", "--json"])["state"] == "delivered"
    });
    home.wait_until("answered", || answers(&home, &reader, typed) == 1);
    // A second restart hands nothing over again.
    home.ok(&["daemon", "stop"]);
    home.ok(&["daemon", "start"]);
    let marker = home.json(&["mail", "send", "reader", "marker", "--json"]);
    let marker_typed = format!("[mail from user · {}] marker", marker["id"].as_str().unwrap());
    home.wait_until("the marker answered", || answers(&home, &reader, &marker_typed) == 1);
    assert_eq!(answers(&home, &reader, typed), 1, "once");
}

#[test]
fn mail_to_a_busy_agent_waits_and_bad_mail_is_refused_in_one_line() {
    let home = Home::new();
    let busy = home.start(&["--name", "busy", "demo", "--", "--think-ms", "1500"]);
    home.wait_until("at its prompt", || at_prompt(&home, &busy));
    home.ok(&["send", "busy", "think a while"]);
    let sent = home.json(&["mail", "send", "busy", "when you are free", "--json"]);
    assert_eq!(sent["state"], "queued", "{sent}");
    let typed = format!("[mail from user · {}] when you are free", sent["id"].as_str().unwrap());
    home.wait_until("delivered once idle", || answers(&home, &busy, &typed) == 1);

    assert!(home.fails(&["mail", "send", "nobody", "hi"]).contains("nobody"));
    assert!(home.fails(&["mail", "send", "busy", "  "]).contains("empty"));
    let big = "x".repeat(17 * 1024);
    assert!(home.fails(&["mail", "send", "busy", &big]).contains("at most 16384"));
    assert!(
        home.fails(&["mail", "send", "busy", "hi", "--id", "bad id!"])
            .contains("bad message id")
    );
    assert!(home.fails(&["mail", "read", "01NOSUCH"]).contains("no message has id"));
    home.ok(&["cancel", "busy"]);
    let ended = home.fails(&["mail", "send", "busy", "too late"]);
    assert!(ended.contains("has already ended"), "{ended}");
}

#[test]
fn mail_queued_when_the_daemon_stops_is_delivered_once_after_it_starts_again() {
    let home = Home::new();
    // Busy with its first prompt: mail to it waits in the queue.
    let busy = home.start(&["--name", "busy", "--prompt", "work", "demo", "--", "--think-ms", "5000"]);
    home.wait_until("the agent at work", || home.logs(&busy).contains("> work"));
    let sent = home.json(&["mail", "send", "busy", "after the restart", "--json"]);
    assert_eq!(sent["state"], "queued");
    home.ok(&["daemon", "stop"]);
    home.ok(&["daemon", "start"]);
    let typed = format!("[mail from user · {}] after the restart", sent["id"].as_str().unwrap());
    home.wait_until("delivered after the restart", || answers(&home, &busy, &typed) == 1);
    home.ok(&["send", "busy", "marker"]);
    home.wait_until("the marker answered", || answers(&home, &busy, "marker") == 1);
    assert_eq!(answers(&home, &busy, &typed), 1, "once");
    assert_eq!(home.prompts(&busy).iter().filter(|p| **p == typed).count(), 1);
}

#[test]
fn mail_of_many_lines_is_one_turn_of_the_agent() {
    let home = Home::new();
    let reader = home.start(&["--name", "reader", "demo"]);
    home.wait_until("reader at its prompt", || at_prompt(&home, &reader));
    let sent = home.json(&["mail", "send", "reader", "first half\nsecond half", "--json"]);
    let id = sent["id"].as_str().unwrap();
    let said = format!("you said \"[mail from user · {id}] first half");
    home.wait_until("the agent answered the mail", || {
        let logs = home.logs(&reader);
        logs.contains(&said) && logs.contains("second half\"")
    });
    let logs = home.logs(&reader);
    assert!(!logs.contains("you said \"second half"), "one prompt, not two: {logs}");
    assert_eq!(home.prompts(&reader).len(), 1);
}
