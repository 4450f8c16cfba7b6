//! Teams against the real binary: `agents team start` starts a leader and
//! its members as the leader's children, each told who it is and how to
//! mail the others; members mail each other by name; cancelling the
//! leader cancels the members it owns while a detached one lives on; a
//! blocked member is recorded and the rest start, unless the team is all
//! or nothing; bad definitions get a one-line error.

mod common;

use common::Home;
use serde_json::Value;

const ENGINE: &str = "[engine]\nquiet_ms = 300\ncancel_sigint_grace_ms = 700\ncancel_sigterm_grace_ms = 700\n";

/// A leader, a member, a detached member and a shell.
const REVIEW: &str = r#"
[teams.review]
leader = { name = "lead", harness = "demo", prompt = "split the work" }
[[teams.review.members]]
name = "critic"
harness = "demo"
role = "review every change"
[[teams.review.members]]
name = "scout"
harness = "demo"
detached = true
[[teams.review.members]]
name = "sh"
harness = "shell"
prompt = "echo \"seat=$AGENTS_TEAM/$AGENTS_MEMBER\""
"#;

fn at_prompt(home: &Home, run: &str) -> bool {
    home.logs(run).contains(agents::harness::demo::PROMPT.trim_end())
}

/// The team's members by name: (run id, record).
fn members(team: &Value) -> Vec<(String, Value)> {
    team["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["member"].as_str().unwrap().to_string(), m["run"].clone()))
        .collect()
}

fn run_of(team: &Value, member: &str) -> String {
    members(team)
        .into_iter()
        .find(|(name, _)| name == member)
        .map(|(_, run)| run["id"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("no member {member} in {team}"))
}

#[test]
fn a_team_starts_its_leader_then_members_each_told_who_it_is_and_they_mail_by_name() {
    let home = Home::with_config(&format!("{ENGINE}{REVIEW}"));
    let leader = home.ok(&["team", "start", "review", "-d", "--prompt", "fix the parser"]);
    let leader = leader.trim();
    let team = home.json(&["team", "show", "review", "--json"]);
    assert_eq!(team["name"], "review");
    let names: Vec<String> = members(&team).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["lead", "critic", "scout", "sh"], "the leader first");
    assert_eq!(run_of(&team, "lead"), leader, "-d prints the leader's run id alone");
    for (name, run) in members(&team).into_iter().skip(1) {
        assert_eq!(run["parent_id"], leader, "{name} is the leader's child");
        assert_eq!(run["name"], format!("review-{name}").as_str());
    }
    let (critic, scout, sh) = (run_of(&team, "critic"), run_of(&team, "scout"), run_of(&team, "sh"));
    assert_eq!(home.show(&scout)["detached"], true);

    // Each agent is told who it is, who the others are, and its task.
    let first = home.prompts(leader);
    assert!(
        first[0].starts_with("[team review] You are lead in team review, its leader.")
            && first[0].contains("critic, scout, sh")
            && first[0].ends_with("split the work\nfix the parser"),
        "{first:?}"
    );
    let told = &home.prompts(&critic)[0];
    assert!(
        told.contains("lead (leader)") && told.contains("Your role: review every change"),
        "{told}"
    );
    assert!(!told.contains("fix the parser"), "the task is the leader's: {told}");
    // A shell gets its own prompt alone, and the team in its environment.
    assert_eq!(home.prompts(&sh), ["echo \"seat=$AGENTS_TEAM/$AGENTS_MEMBER\""]);
    home.wait_until("the shell saw its seat", || home.logs(&sh).contains("seat=review/sh"));

    // Mail by a member's name, and to the whole team.
    home.wait_until("the leader at its prompt", || at_prompt(&home, leader));
    let out = home
        .cmd_in(&critic, &["mail", "send", "lead", "parser split in two", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sent: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (sent["from_name"].as_str(), sent["to"].as_str()),
        (Some("review-critic"), Some(leader))
    );
    let typed = format!(
        "[mail from review-critic · {}] parser split in two",
        sent["id"].as_str().unwrap()
    );
    home.wait_until("the leader read the mail", || home.logs(leader).contains(&typed));

    let out = home
        .cmd_in(
            leader,
            &["mail", "send", "team", "stand up", "--json", "--id", "standup1"],
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let copies: Value = serde_json::from_slice(&out.stdout).unwrap();
    let to: Vec<&str> = copies
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["to"].as_str().unwrap())
        .collect();
    assert_eq!(
        to,
        [critic.as_str(), scout.as_str()],
        "every other agent, never the shell"
    );
    assert!(copies.as_array().unwrap().iter().all(|m| m["thread"] == "standup1"));
    // Sent again by its id: the same copies, none delivered twice.
    let again = home
        .cmd_in(
            leader,
            &["mail", "send", "team", "stand up", "--json", "--id", "standup1"],
        )
        .output()
        .unwrap();
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again.as_array().map(Vec::len), Some(2));
    assert_eq!(again[0]["id"], copies[0]["id"]);
    for run in [&critic, &scout] {
        home.wait_until("the member read the stand-up", || home.logs(run).contains("] stand up"));
        assert_eq!(
            home.prompts(run).iter().filter(|p| p.ends_with("] stand up")).count(),
            1
        );
    }
    // From anyone: TEAM/MEMBER; and the team's mail in one list.
    let user = home.json(&["mail", "send", "review/scout", "from the user", "--json"]);
    assert_eq!(user["to"], scout.as_str());
    let listed = home.json(&["mail", "ls", "--team", "review", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(4), "{listed}");
    let table = home.ok(&["team", "ls"]);
    assert!(table.contains("review") && table.contains("critic running"), "{table}");
}

#[test]
fn cancelling_the_leader_cancels_the_members_it_owns_and_a_detached_one_lives_on() {
    let home = Home::with_config(&format!("{ENGINE}{REVIEW}"));
    let leader = home.ok(&["team", "start", "review", "-d"]).trim().to_string();
    let team = home.json(&["team", "show", "review", "--json"]);
    let (critic, scout, sh) = (run_of(&team, "critic"), run_of(&team, "scout"), run_of(&team, "sh"));
    home.wait_until("the members at their prompts", || {
        at_prompt(&home, &critic) && at_prompt(&home, &scout)
    });

    home.ok(&["cancel", &leader]);
    for run in [&leader, &critic, &sh] {
        let ended = home.wait_end(run);
        assert_eq!(ended["state"], "cancelled", "{ended}");
        assert!(home.event_kinds(run).contains(&"CANCEL_REQUESTED".to_string()));
    }
    assert_eq!(home.state(&scout), "running", "a detached member survives its leader");
    assert_eq!(home.json(&["team", "show", "review", "--json"])["state"], "live");

    // The team cancelled whole reaches the detached member too.
    let said = home.ok(&["team", "cancel", "review"]);
    assert!(said.contains("asked 1 run"), "{said}");
    assert_eq!(home.wait_end(&scout)["state"], "cancelled");
    assert_eq!(home.json(&["team", "show", "review", "--json"])["state"], "ended");
    let err = home.fails(&["team", "cancel", "review"]);
    assert!(err.contains("team review has ended"), "{err}");
}

#[test]
fn a_blocked_member_is_recorded_and_the_rest_start_unless_the_team_is_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, all: bool| {
        let path = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &path,
            format!(
                "all_or_nothing = {all}\nleader = {{ name = \"lead\", harness = \"demo\" }}\n\
                 [[members]]\nname = \"lost\"\nharness = \"demo\"\ncwd = \"/nonexistent/place\"\n\
                 [[members]]\nname = \"fine\"\nharness = \"demo\"\n"
            ),
        )
        .unwrap();
        path.to_string_lossy().into_owned()
    };
    let home = Home::new();

    let some = file("some", false);
    let out = home.run(&["team", "start", &some, "-d"]);
    assert_eq!(out.status.code(), Some(1), "a team that did not start whole fails");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("member lost blocked: cwd does not exist"), "{err}");
    let team = home.json(&["team", "show", "some", "--json"]);
    let state = |m: &str| home.state(&run_of(&team, m));
    assert_eq!((state("lost").as_str(), state("fine").as_str()), ("blocked", "running"));

    let all = file("all", true);
    let out = home.run(&["team", "start", &all, "-d"]);
    assert_eq!(out.status.code(), Some(1));
    let team = home.json(&["team", "show", "all", "--json"]);
    assert!(team["problem"].as_str().unwrap().contains("all or nothing"), "{team}");
    let names: Vec<String> = members(&team).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["lead", "lost"], "nothing started after the blocked member");
    let leader = run_of(&team, "lead");
    assert_eq!(
        home.wait_end(&leader)["state"],
        "cancelled",
        "those started are cancelled"
    );

    // A second team of a definition gets a name of its own.
    home.run(&["team", "start", &some, "-d"]);
    assert_eq!(home.json(&["team", "show", "some-2", "--json"])["definition"], "some");
}

#[test]
fn bad_teams_get_a_one_line_error_and_start_nothing() {
    let home = Home::with_config(&format!("{ENGINE}{REVIEW}"));
    let err = home.fails(&["team", "start", "nosuch", "-d"]);
    assert!(
        err.contains("no team 'nosuch' in config.toml") && err.contains("it defines review"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "leader = { name = \"lead\", harness = \"nosuch\" }\n").unwrap();
    let err = home.fails(&["team", "start", bad.to_str().unwrap(), "-d"]);
    assert!(err.contains("unknown harness or profile 'nosuch'"), "{err}");
    std::fs::write(&bad, "leader = { name = \"lead\" }\n").unwrap();
    let err = home.fails(&["team", "start", bad.to_str().unwrap(), "-d"]);
    assert!(err.contains("missing field `harness`"), "{err}");
    let err = home.fails(&["team", "start", "./missing.toml", "-d"]);
    assert!(err.contains("reading the team file ./missing.toml"), "{err}");
    let err = home.fails(&["team", "show", "nosuch"]);
    assert!(err.contains("no team matches 'nosuch'"), "{err}");
    let err = home.fails(&["mail", "send", "nosuch/lead", "hi"]);
    assert!(err.contains("no team matches"), "{err}");
    assert_eq!(
        home.json(&["ls", "--json"]).as_array().map(Vec::len),
        Some(0),
        "nothing started"
    );
    assert_eq!(home.ok(&["team", "ls"]), "no teams\n");
}

/// The permission-request id an approval mail to the leader carries.
fn request_in(text: &str) -> Option<String> {
    let at = text.find("[approval request ask-")? + "[approval request ".len();
    let id: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    Some(id)
}

#[test]
fn a_members_permission_prompt_is_mailed_to_the_leader_who_answers_it_by_its_request_id() {
    let home = Home::with_config(&format!(
        "{ENGINE}[teams.ask]\napprovals = \"leader\"\nleader = {{ name = \"lead\", harness = \"demo\" }}\n\
         [[teams.ask.members]]\nname = \"asker\"\nharness = \"demo\"\nargs = [\"--ask\"]\n"
    ));
    let leader = home.ok(&["team", "start", "ask", "-d"]).trim().to_string();
    let team = home.json(&["team", "show", "ask", "--json"]);
    assert_eq!(team["approvals"], "leader");
    let asker = run_of(&team, "asker");
    let asked = |n: usize| {
        let mut found = None;
        home.wait_until("the leader was asked", || {
            let asks: Vec<String> = home
                .prompts(&leader)
                .into_iter()
                .filter_map(|p| request_in(&p).map(|_| p))
                .collect();
            found = asks.get(n).cloned();
            found.is_some()
        });
        found.unwrap()
    };
    let first = asked(0);
    assert!(
        first.starts_with("[mail from ask-asker · ask-")
            && first.contains("ask-asker (asker) waits at a permission prompt")
            && first.contains("Do you want to proceed?\n1. Yes\n2. No"),
        "{first}"
    );
    let request = request_in(&first).unwrap();
    assert!(
        first.ends_with(&format!("agents answer ask-asker yes|no|TEXT --request {request}")),
        "{first}"
    );

    // A request of another run is no answer to this one.
    let err = home.fails(&["answer", &leader, "yes", "--request", &request]);
    assert!(err.contains("is not one of run ask-lead's"), "{err}");
    home.ok(&["answer", &asker, "yes", "--request", &request]);
    home.wait_until("the asker moved on", || home.show(&asker)["status"] != "needs_approval");
    // The same request again is the same answer, never typed twice.
    home.ok(&["answer", &asker, "yes", "--request", &request]);

    // Asked again: a new request; answered without it first, it is gone.
    home.wait_until("the asker at its prompt", || at_prompt(&home, &asker));
    home.ok(&["send", &asker, "ask"]);
    let second = request_in(&asked(1)).unwrap();
    assert_ne!(second, request);
    home.ok(&["answer", &asker, "no"]);
    home.wait_until("the question gone", || home.show(&asker)["status"] != "needs_approval");
    let err = home.fails(&["answer", &asker, "yes", "--request", &second]);
    assert!(
        err.contains(&format!("the question of request {second} is gone")),
        "{err}"
    );
}

/// Issue #35 (§2): a question asked before the daemon restarts is the same
/// question after it: the new daemon goes on from the stored status (the
/// time it changed kept), stops no second time and asks the leader no
/// second time, so the leader's answer to the first request is taken.
#[test]
fn a_question_asked_before_a_restart_keeps_its_request_and_is_answered_by_it() {
    let home = Home::with_config(&format!("{ENGINE}{ASK_TEAM}"));
    let (_, asker, request) = asked_team(&home);
    // Since the status was stored as the question's.
    let since = home
        .events(&asker)
        .into_iter()
        .rev()
        .find(|e| e["kind"] == "STATUS")
        .map(|e| e["at"].clone())
        .unwrap();

    home.ok(&["daemon", "stop"]);
    home.wait_until("the new daemon says since when the asker waits", || {
        !home.show(&asker)["status_since"].is_null()
    });
    let after = home.show(&asker);
    assert_eq!(
        (&after["status"], &after["status_since"]),
        (&Value::from("needs_approval"), &since),
        "{after}"
    );
    home.ok(&["answer", &asker, "yes", "--request", &request]);
    home.wait_until("the asker moved on", || home.show(&asker)["status"] != "needs_approval");
    let kinds = home.event_kinds(&asker);
    let count = |kind: &str| kinds.iter().filter(|k| *k == kind).count();
    assert_eq!(
        (count("INTERRUPT"), count("RUN_PAUSED"), count("RUN_RESUMED")),
        (1, 1, 1),
        "{kinds:?}"
    );
}

/// A team started by an agent: when its leader has ended, a detached
/// member's question goes to the nearest live agent above it, told that
/// the leader ended, and is answered by its request id as the leader's.
#[test]
fn a_question_for_a_leader_that_has_ended_goes_to_the_agent_above_it() {
    question_once_the_leader_ended(|home, leader| {
        home.ok(&["cancel", leader]);
        assert_eq!(home.wait_end(leader)["state"], "cancelled");
    });
}

/// #35 (§2, a leader that crashed): as when it was cancelled — its
/// supervisor killed, it is `interrupted`, and the agent above is asked.
#[test]
fn a_question_for_a_leader_that_crashed_goes_to_the_agent_above_it() {
    question_once_the_leader_ended(|home, leader| {
        common::kill9(supervisor_of(home, leader));
        home.wait_until("the leader interrupted", || home.state(leader) == "interrupted");
    });
}

/// A detached member asks after its leader, started by an agent, was
/// ended by `end`: the agent above is asked, and its answer taken.
fn question_once_the_leader_ended(end: impl Fn(&Home, &str)) {
    let home = Home::with_config(&format!(
        "{ENGINE}[teams.ask]\napprovals = \"leader\"\nleader = {{ name = \"lead\", harness = \"demo\" }}\n\
         [[teams.ask.members]]\nname = \"asker\"\nharness = \"demo\"\ndetached = true\n"
    ));
    let boss = home.start(&["--name", "boss", "demo"]);
    let started = home.cmd_in(&boss, &["team", "start", "ask", "-d"]).output().unwrap();
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
    let leader = String::from_utf8_lossy(&started.stdout).trim().to_string();
    assert_eq!(
        home.show(&leader)["parent_id"],
        boss.as_str(),
        "the agent started the team"
    );
    let asker = run_of(&home.json(&["team", "show", "ask", "--json"]), "asker");
    home.wait_until("the asker at its prompt", || at_prompt(&home, &asker));
    end(&home, &leader);

    home.ok(&["send", &asker, "ask"]);
    let mut asked = String::new();
    home.wait_until("the agent above was asked", || {
        asked = home
            .prompts(&boss)
            .into_iter()
            .find(|p| request_in(p).is_some())
            .unwrap_or_default();
        !asked.is_empty()
    });
    assert!(
        asked.contains("waits at a permission prompt")
            && asked.contains("(its leader ask-lead has ended: you are asked instead)"),
        "{asked}"
    );
    let request = request_in(&asked).unwrap();
    home.ok(&["answer", &asker, "yes", "--request", &request]);
    home.wait_until("the asker moved on", || home.show(&asker)["status"] != "needs_approval");
}

/// The supervisor of a run: its harness's parent process.
fn supervisor_of(home: &Home, run: &str) -> i32 {
    let pid = home.show(run)["pid"].as_i64().expect("a live run's pid");
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    after.split(' ').nth(1).unwrap().parse().unwrap()
}

fn told(home: &Home, run: &str, start: &str) -> bool {
    home.prompts(run).iter().any(|p| p.starts_with(start))
}

#[test]
fn a_crashed_member_is_told_to_its_leader_and_a_crashed_leaders_members_to_the_run_above_it() {
    let home = Home::new();
    let boss = home.start(&["--name", "boss", "demo"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crash.toml");
    std::fs::write(
        &file,
        "leader = { name = \"lead\", harness = \"demo\" }\n\
         [[members]]\nname = \"w\"\nharness = \"demo\"\n[[members]]\nname = \"v\"\nharness = \"demo\"\n",
    )
    .unwrap();
    // Started from inside boss: the leader is its child.
    let out = home
        .cmd_in(&boss, &["team", "start", file.to_str().unwrap(), "-d"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let team = home.json(&["team", "show", "crash", "--json"]);
    let (lead, w, v) = (run_of(&team, "lead"), run_of(&team, "w"), run_of(&team, "v"));
    assert_eq!(home.show(&lead)["parent_id"], boss.as_str());
    home.wait_until("every member at its prompt", || {
        [&lead, &w, &v].iter().all(|r| at_prompt(&home, r))
    });

    // A member's supervisor killed: interrupted, and its leader told so.
    // (Not awaited: a waiter would take the result instead of the leader.)
    common::kill9(supervisor_of(&home, &w));
    home.wait_until("w interrupted", || home.state(&w) == "interrupted");
    home.wait_until("the leader told of w", || {
        told(&home, &lead, "[task result] crash-w interrupted")
    });
    let result = home
        .prompts(&lead)
        .into_iter()
        .find(|p| p.starts_with("[task result] crash-w"))
        .unwrap();
    assert!(result.contains("supervisor died"), "{result}");

    // The leader's supervisor killed: its member still running is an
    // orphan, reported to the run above, which hears of it from now on.
    common::kill9(supervisor_of(&home, &lead));
    home.wait_until("the leader interrupted", || home.state(&lead) == "interrupted");
    home.wait_until("boss told of the orphan", || {
        told(
            &home,
            &boss,
            "[orphans] crash-lead interrupted while its children still run: crash-v",
        )
    });
    assert!(home.event_kinds(&v).contains(&"ORPHANED".to_string()));
    assert_eq!(home.state(&v), "running", "an orphan keeps working");
    assert!(told(&home, &boss, "[task result] crash-lead interrupted"));
    home.ok(&["cancel", "--no-wait", &v]);
    home.wait_until("boss told of v's end", || {
        told(&home, &boss, "[task result] crash-v cancelled")
    });
}

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn a_member_whose_worktree_branch_is_taken_is_blocked_and_nothing_is_overwritten() {
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "A User"]);
    git(dir, &["config", "user.email", "user@example.invalid"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    git(dir, &["add", "a.txt"]);
    git(dir, &["commit", "-q", "-m", "one"]);
    // Someone's branch already has the name the second member would take.
    git(dir, &["branch", "agents/wt-b"]);
    std::fs::write(dir.join("a.txt"), "two\n").unwrap();
    git(dir, &["commit", "-q", "-am", "two"]);
    let taken = git(dir, &["rev-parse", "agents/wt-b"]);
    let file = dir.join("wt.toml");
    std::fs::write(
        &file,
        "leader = { name = \"lead\", harness = \"demo\" }\n\
         [[members]]\nname = \"a\"\nharness = \"demo\"\nworktree = true\n\
         [[members]]\nname = \"b\"\nharness = \"demo\"\nworktree = true\n",
    )
    .unwrap();
    let home = Home::new();
    let out = home
        .cmd(&["team", "start", file.to_str().unwrap(), "-d"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("member b blocked: worktree conflict: branch agents/wt-b already exists"),
        "{err}"
    );
    let team = home.json(&["team", "show", "wt", "--json"]);
    let a = home.show(&run_of(&team, "a"));
    assert_eq!(a["state"], "running");
    assert!(a["worktree"].as_str().is_some_and(|w| !w.is_empty()), "{a}");
    assert_eq!(
        git(dir, &["rev-parse", "agents/wt-b"]),
        taken,
        "the branch there is untouched"
    );
    assert_eq!(git(dir, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
}

/// The team of `a_members_permission_prompt_is_mailed_…`: started, with
/// the asker stopped at its question and the leader asked. Answers the
/// leader, the asker and the request id.
fn asked_team(home: &Home) -> (String, String, String) {
    let leader = home.ok(&["team", "start", "ask", "-d"]).trim().to_string();
    let asker = run_of(&home.json(&["team", "show", "ask", "--json"]), "asker");
    let mut request = None;
    home.wait_until("the leader was asked", || {
        request = home.prompts(&leader).iter().find_map(|p| request_in(p));
        request.is_some()
    });
    (leader, asker, request.unwrap())
}

const ASK_TEAM: &str = "[teams.ask]\napprovals = \"leader\"\nleader = { name = \"lead\", harness = \"demo\" }\n\
     [[teams.ask.members]]\nname = \"asker\"\nharness = \"demo\"\nargs = [\"--ask\"]\n";

/// Issue #35 (§2, parent cancellation): the leader cancelled while its
/// member waits at a question: the member it owns ends with it, and the
/// request is refused as the state of an ended run, never typed.
#[test]
fn a_question_whose_leader_is_cancelled_ends_with_the_member_and_its_request_is_refused() {
    let home = Home::with_config(&format!("{ENGINE}{ASK_TEAM}"));
    let (leader, asker, request) = asked_team(&home);
    home.ok(&["cancel", &leader]);
    assert_eq!(home.wait_end(&leader)["state"], "cancelled");
    assert_eq!(home.wait_end(&asker)["state"], "cancelled");
    let out = home.run(&["answer", &asker, "yes", "--request", &request, "--json"]);
    let said: Value = serde_json::from_slice(&out.stdout).expect("the error as JSON");
    assert_eq!(
        (out.status.code(), &said["error"]["code"]),
        (Some(4), &Value::from("not_running")),
        "{said}"
    );
    let log = String::from_utf8_lossy(&home.raw_log(&asker)).into_owned();
    assert!(!log.contains("approved"), "{log}");
}

/// Issue #35 (§2, worker crash): the member's supervisor dies mid-question:
/// the member is `interrupted`, its leader is told so, and the request is
/// refused as the state of an ended run.
#[test]
fn a_question_whose_supervisor_dies_is_interrupted_told_and_its_request_refused() {
    let home = Home::with_config(&format!("{ENGINE}{ASK_TEAM}"));
    let (leader, asker, request) = asked_team(&home);
    common::kill9(supervisor_of(&home, &asker));
    home.wait_until("the asker interrupted", || home.state(&asker) == "interrupted");
    home.wait_until("the leader told of the asker", || {
        told(&home, &leader, "[task result] ask-asker interrupted")
    });
    let out = home.run(&["answer", &asker, "yes", "--request", &request]);
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let kinds = home.event_kinds(&asker);
    assert!(!kinds.iter().any(|k| k == "ANSWERED"), "{kinds:?}");
}
