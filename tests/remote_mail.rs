//! Mail between a team's leader here and its member on a host (docs/design.md
//! §13, issue #14), through a real sshd on loopback behind the fault
//! proxy: the leader's mail reaches the member there and the member's
//! (`agents mail send lead …` on the host, where nobody knows the team)
//! reaches the leader here, each exactly once — with the link cut before,
//! during and after a delivery, and a message sent again by its id. A
//! host drops held mail only on the word of the connection that took it
//! last; a word over an older one is stale. A member that ends there is
//! told to its leader here as a task result.

mod common;
mod sshd;

use common::{BIN, Home};
use serde_json::{Value, json};
use sshd::Net;
use sshd::serve::Serve;

const ENGINE: &str = "[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\n";

/// A leader here and a member `scout` on the host `box`; with `courier`, a
/// command there that mails the leader from inside its run and ends.
fn team(courier: bool) -> String {
    let mut team = String::from(
        r#"
[teams.far]
leader = { name = "lead", harness = "demo" }
[[teams.far.members]]
name = "scout"
harness = "demo"
host = "box"
"#,
    );
    if courier {
        let script = format!("'{BIN}' mail send lead 'three files changed' && echo sent");
        team.push_str(&format!(
            "[[teams.far.members]]\nname = \"courier\"\nharness = \"cmd\"\nhost = \"box\"\nargs = [\"sh\", \"-c\", {}]\n",
            toml_string(&script)
        ));
    }
    team
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// A host `box` behind the proxy and the team `far` started: (net, the
/// leader's run, the team's record).
fn started(courier: bool) -> (Net, String, Value) {
    let net = Net::with_proxy();
    std::fs::write(
        net.local.config.path().join("agents/config.toml"),
        format!("{ENGINE}{}", team(courier)),
    )
    .unwrap();
    net.know_the_host();
    net.add_host("box", &net.target_via_proxy());
    let leader = net.ok(&["team", "start", "far", "-d"]).trim().to_string();
    let team = net.json(&["team", "show", "far", "--json"]);
    (net, leader, team)
}

fn run_of(team: &Value, member: &str) -> String {
    team["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["member"] == member)
        .and_then(|m| m["run"]["id"].as_str())
        .unwrap_or_else(|| panic!("no member {member} in {team}"))
        .to_string()
}

fn at_prompt(home: &Home, run: &str) -> bool {
    home.logs(run).contains(agents::harness::demo::PROMPT.trim_end())
}

/// How often the demo agent of `run` (on `home`) answered `typed`.
fn answers(home: &Home, run: &str, typed: &str) -> usize {
    home.logs(run).matches(&format!("you said \"{typed}\"")).count()
}

/// The prompts of `run` on `home` that carry message `id`.
fn prompts_with(home: &Home, run: &str, id: &str) -> usize {
    home.prompts(run).iter().filter(|p| p.contains(id)).count()
}

fn link(net: &Net) -> String {
    let hosts = net.json(&["hosts", "ls", "--json"]);
    hosts[0]["link"].as_str().unwrap_or_default().to_string()
}

fn cut(net: &Net) {
    net.proxy().cut();
    net.wait_until("the local daemon sees the link down", || link(net) != "up");
}

fn restore(net: &Net) {
    net.proxy().restore();
}

/// `agents mail send TO TEXT --json` from inside run `from` of `home`.
fn send_from(home: &Home, from: &str, to: &str, text: &str, extra: &[&str]) -> Value {
    let mut args = vec!["mail", "send", to, text, "--json"];
    args.extend_from_slice(extra);
    let out = home.cmd_in(from, &args).output().unwrap();
    assert!(
        out.status.success(),
        "mail send: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Whether the host still holds message `id` for the daemon here.
fn held_there(net: &Net, id: &str) -> bool {
    let out = net.remote.run(&["mail", "read", id, "--json"]);
    out.status.success() && serde_json::from_slice::<Value>(&out.stdout).unwrap()["state"] == "outbound"
}

/// The member mails the leader by name, on the host: held there for the
/// daemon here, then delivered to the leader once and dropped there.
fn member_mails_leader(net: &Net, scout: &str, text: &str) -> String {
    member_mails_leader_as(net, scout, "lead", text)
}

/// As `member_mails_leader`, to the address `to`.
fn member_mails_leader_as(net: &Net, scout: &str, to: &str, text: &str) -> String {
    let sent = send_from(&net.remote, scout, to, text, &[]);
    assert_eq!(sent["state"], "outbound", "{sent}");
    assert_eq!(sent["to_name"], to);
    sent["id"].as_str().unwrap().to_string()
}

fn assert_leader_got_once(net: &Net, leader: &str, id: &str, text: &str) {
    net.wait_until("the leader has the member's mail", || {
        prompts_with(&net.local, leader, id) == 1
    });
    let record = net.json(&["mail", "read", id, "--json"]);
    assert_eq!(
        (record["to"].as_str(), record["body"].as_str()),
        (Some(leader), Some(text))
    );
    let typed = format!("[mail from {} · {id}] {text}", record["from_name"].as_str().unwrap());
    net.wait_until("the leader answered it", || answers(&net.local, leader, &typed) == 1);
    net.wait_until("the host dropped it", || !held_there(net, id));
    assert_eq!(prompts_with(&net.local, leader, id), 1, "delivered once");
}

#[test]
fn mail_goes_both_ways_between_a_leader_here_and_its_member_on_a_host_once_through_cuts() {
    let (net, leader, team) = started(false);
    let scout = run_of(&team, "scout");
    assert_eq!(team["members"][1]["run"]["host"], "box", "{team}");
    net.wait_until("the scout at its prompt there", || at_prompt(&net.remote, &scout));
    net.wait_until("the leader at its prompt", || at_prompt(&net.local, &leader));

    // The leader mails its member by name: relayed to the host's mailbox
    // by its id, and handed over there.
    let to_scout = |text: &str| {
        let out = net
            .cmd(&["mail", "send", "scout", text, "--json"])
            .envs(net.local.run_env(&leader))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let scout_got_once = |id: &str, text: &str| {
        let typed = format!("[mail from far-lead · {id}] {text}");
        net.wait_until("the scout answered the leader's mail", || {
            answers(&net.remote, &scout, &typed) == 1
        });
        assert_eq!(prompts_with(&net.remote, &scout, id), 1, "one prompt there for {id}");
        // In the host's mailbox, from the leader as it is called here.
        net.remote.wait_until("delivered in the host's mailbox", || {
            let there = net.remote.json(&["mail", "read", id, "--json"]);
            there["from_name"] == "far-lead" && there["state"] == "delivered" && there["body"] == text
        });
        // And here, as the host says it (#35: never "sent to its host"
        // for good).
        net.wait_until("delivered as the mailbox here says", || {
            net.json(&["mail", "read", id, "--json"])["state"] == "delivered"
        });
    };
    let first = to_scout("read the logs");
    scout_got_once(&first, "read the logs");
    // Kept here once it is over there: said with the link down too.
    cut(&net);
    let listed = net.json(&["mail", "ls", &scout, "--json"]);
    let kept = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == first.as_str())
        .cloned();
    assert_eq!(
        kept.map(|m| m["state"].clone()),
        Some(Value::from("delivered")),
        "{listed}"
    );
    restore(&net);

    // Sent while the link is cut: the send waits for the link and goes
    // through, once, when it is back.
    cut(&net);
    let waiting = {
        let mut cmd = net.cmd(&["mail", "send", "scout", "while cut", "--json"]);
        cmd.envs(net.local.run_env(&leader));
        std::thread::spawn(move || cmd.output().unwrap())
    };
    net.wait_until("the message is stored here", || {
        net.json(&["mail", "ls", &leader, "--json"])
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["body"] == "while cut")
    });
    restore(&net);
    let out = waiting.join().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let while_cut: Value = serde_json::from_slice(&out.stdout).unwrap();
    scout_got_once(while_cut["id"].as_str().unwrap(), "while cut");

    // Cut mid-delivery: the prompt may have reached the host, its answer
    // not; sent again by the same id once the link is back.
    net.wait_until("the link is up", || link(&net) == "up");
    let sending = {
        let mut cmd = net.cmd(&["mail", "send", "scout", "cut mid-way", "--json"]);
        cmd.envs(net.local.run_env(&leader));
        std::thread::spawn(move || cmd.output().unwrap())
    };
    cut(&net);
    restore(&net);
    let out = sending.join().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mid: Value = serde_json::from_slice(&out.stdout).unwrap();
    scout_got_once(mid["id"].as_str().unwrap(), "cut mid-way");

    // The member mails its leader by name, on the host, where nobody knows
    // the team: held there, taken by the daemon here, delivered once.
    net.wait_until("the link is up", || link(&net) == "up");
    let found = member_mails_leader(&net, &scout, "found the bug");
    assert_leader_got_once(&net, &leader, &found, "found the bug");

    // Sent again by its id after it was delivered (as a member retrying
    // would, or the host after a cut before it heard of the delivery):
    // held again, taken again, and its second delivery is no prompt.
    let again = send_from(&net.remote, &scout, "lead", "found the bug", &["--id", &found]);
    assert_eq!(again["id"], found.as_str());
    net.wait_until("the host dropped it again", || !held_there(&net, &found));
    assert_eq!(
        prompts_with(&net.local, &leader, &found),
        1,
        "the same id delivered once"
    );

    // Sent while the link is cut: held there until the link is back.
    cut(&net);
    let held = member_mails_leader(&net, &scout, "sent during the cut");
    assert!(held_there(&net, &held));
    assert_eq!(prompts_with(&net.local, &leader, &held), 0);
    restore(&net);
    assert_leader_got_once(&net, &leader, &held, "sent during the cut");

    // Cut as it is being delivered: before it is taken, while it is, or
    // between its delivery and the host hearing of it — once each time.
    for round in 0..3 {
        net.wait_until("the link is up", || link(&net) == "up");
        let text = format!("round {round}");
        let id = member_mails_leader(&net, &scout, &text);
        if round > 0 {
            net.wait_until("delivered here", || prompts_with(&net.local, &leader, &id) == 1);
        }
        cut(&net);
        restore(&net);
        assert_leader_got_once(&net, &leader, &id, &text);
    }
    let mail_prompts = net
        .local
        .prompts(&leader)
        .iter()
        .filter(|p| p.starts_with("[mail from"))
        .count();
    assert_eq!(
        mail_prompts,
        5,
        "every message to the leader once: {:?}",
        net.local.prompts(&leader)
    );

    // To a name nobody here knows either: it comes back to the member, once.
    let lost = member_mails_leader_as(&net, &scout, "nobody-here", "anyone?");
    net.wait_until("the member is told, there", || {
        prompts_with(&net.remote, &scout, &lost) == 1
    });
    let told = net
        .remote
        .prompts(&scout)
        .into_iter()
        .find(|p| p.contains(&lost))
        .unwrap();
    assert!(
        told.starts_with(&format!("[mail not delivered · {lost}] to nobody-here: ")),
        "{told}"
    );
    net.wait_until("the host dropped it", || !held_there(&net, &lost));
    net.wait_until("the member answered it", || answers(&net.remote, &scout, &told) == 1);
    assert_eq!(prompts_with(&net.remote, &scout, &lost), 1);
}

#[test]
fn a_member_on_a_host_mails_its_leader_from_inside_its_run_and_its_end_is_a_task_result() {
    let (net, leader, team) = started(true);
    let courier = run_of(&team, "courier");
    // `agents mail send lead …` ran inside the run on the host (its
    // AGENTS_RUN_ID and AGENTS_HOME are the host's), then the run ended.
    net.wait_until("the courier ended there", || net.remote.state(&courier) == "succeeded");
    net.wait_until("its mirror ended here", || net.local.state(&courier) == "succeeded");
    net.wait_until("the leader has its task result", || {
        net.local
            .prompts(&leader)
            .iter()
            .any(|p| p.starts_with("[task result] far-courier"))
    });
    let prompts = net.local.prompts(&leader);
    let mail = prompts.iter().position(|p| p.contains("] three files changed"));
    let result = prompts
        .iter()
        .position(|p| p.starts_with("[task result] far-courier succeeded"));
    assert!(mail.is_some() && result.is_some(), "{prompts:?}");
    assert!(mail < result, "the mail before the end: {prompts:?}");
    assert!(
        prompts[mail.unwrap()].starts_with("[mail from far-courier · "),
        "{prompts:?}"
    );
    let kinds = net.local.event_kinds(&leader);
    for kind in ["CHILD_ENDED", "TASK_RESULT"] {
        assert_eq!(kinds.iter().filter(|k| *k == kind).count(), 1, "{kind} once: {kinds:?}");
    }
    net.wait_until("the leader answered the task result", || {
        net.local
            .logs(&leader)
            .contains("you said \"[task result] far-courier succeeded")
    });
}

#[test]
fn a_host_holds_mail_of_a_placed_run_until_the_newest_connection_says_it_is_delivered() {
    // The host's side alone: this test is the daemon that placed the run.
    let host = Home::new();
    let cwd = host.path().display().to_string();
    let mut older = Serve::open(&host);
    let start = json!({ "harness": "demo", "cwd": cwd, "name": "member", "placed": true });
    let placed = older.call("runs.start", start).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let local = host.start(&["--name", "neighbour", "demo"]);
    host.wait_until("both at their prompts", || {
        at_prompt(&host, &placed) && at_prompt(&host, &local)
    });

    // A run the host knows still gets its mail there, as any mail.
    let there = send_from(&host, &placed, "neighbour", "next door", &[]);
    assert_eq!(there["to"], local.as_str());
    host.wait_until("delivered there", || {
        prompts_with(&host, &local, there["id"].as_str().unwrap()) == 1
    });
    // Only a placed run's mail to an unknown address is held; anyone
    // else's is refused in one line, as before.
    let out = host.cmd_in(&local, &["mail", "send", "lead", "hi"]).output().unwrap();
    assert!(!out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr).trim().lines().count(), 1);

    let sent = send_from(&host, &placed, "lead", "for the leader", &[]);
    let id = sent["id"].as_str().unwrap().to_string();
    assert_eq!(host.json(&["mail", "read", &id, "--json"])["state"], "outbound");
    let take = |serve: &mut Serve, epoch: &str| {
        let held = serve
            .call("mail.outbox", json!({ "run": placed, "epoch": epoch }))
            .unwrap();
        held.as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(take(&mut older, "L.1"), vec![id.clone()]);
    // The link was cut and made again: the newer connection takes it too.
    let mut newer = Serve::open(&host);
    assert_eq!(take(&mut newer, "L.2"), vec![id.clone()]);
    // The older connection's word comes late: stale, the message kept.
    let word = |serve: &mut Serve, epoch: &str| {
        serve
            .call("mail.taken", json!({ "run": placed, "epoch": epoch, "ids": [id] }))
            .unwrap()
    };
    let stale = word(&mut older, "L.1");
    assert_eq!(
        (stale["taken"].clone(), stale["stale"].clone()),
        (json!([]), json!([id]))
    );
    assert_eq!(host.json(&["mail", "read", &id, "--json"])["state"], "outbound");
    // The newest connection's word drops it; said twice, still dropped.
    assert_eq!(word(&mut newer, "L.2")["taken"], json!([id]));
    assert_eq!(word(&mut newer, "L.2")["taken"], json!([id]));
    assert!(!host.run(&["mail", "read", &id]).status.success());
    assert!(take(&mut newer, "L.3").is_empty());
    let kinds = host.event_kinds(&placed);
    for kind in ["PLACED", "MAIL_HELD", "MAIL_TAKEN"] {
        assert!(kinds.iter().any(|k| k == kind), "{kind} in {kinds:?}");
    }

    // A run removed there takes the mail it still holds along.
    let left = send_from(&host, &placed, "lead", "never taken", &[]);
    let left = left["id"].as_str().unwrap();
    host.ok(&["cancel", &placed]);
    host.wait_end(&placed);
    host.ok(&["rm", "--yes", &placed]);
    assert!(!host.run(&["mail", "read", left]).status.success());
}
