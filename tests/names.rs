//! A run's names through the real binary: every name it wore keeps finding
//! it (unless a newer run wears it), `agents rename`, and names that are
//! never handed to another run.

mod common;

use std::process::Stdio;

use common::{BIN, Home};
use serde_json::Value;

/// A `cmd` run that reports its first prompt the way Claude's hook does
/// (so the daemon names it after the prompt) and the end of its turn, then
/// echoes a second line.
const NAMED_BY_ITS_PROMPT: &str = r#"read -r line
printf '{"session_id": "s-1", "hook_event_name": "UserPromptSubmit", "prompt": "%s"}' "$line" | "$0" hook UserPromptSubmit
echo "first: $line"
printf '{"session_id": "s-1", "hook_event_name": "Stop"}' | "$0" hook Stop
read -r line
echo "then: $line"
exec sleep 60"#;

fn names(v: &Value) -> Vec<String> {
    v["former_names"]
        .as_array()
        .map(|a| a.iter().map(|n| n.as_str().unwrap_or_default().to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn the_name_a_run_wore_before_its_first_prompt_renamed_it_still_finds_it() {
    let home = Home::new();
    let id = home.start(&["cmd", "--", "sh", "-c", NAMED_BY_ITS_PROMPT, BIN]);
    let placeholder = home.show(&id)["name"].as_str().unwrap().to_string();
    assert!(placeholder.starts_with("cmd-"), "{placeholder}");

    home.ok(&["send", &placeholder, "ASKPERM x"]);
    home.wait_until("the first prompt named the run", || {
        home.show(&id)["name"] == "askperm-x"
    });
    // The next command the user types still says the name they saw.
    let shown = home.show(&placeholder);
    assert_eq!(shown["id"], id.as_str());
    assert_eq!(names(&shown), [placeholder.as_str()]);
    home.ok(&["send", &placeholder, "go on"]);
    home.wait_until("the second prompt reached the run", || {
        String::from_utf8_lossy(&home.raw_log(&id)).contains("then: go on")
    });
    let listed = home.json(&["ls", "--json"]);
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id.as_str())
        .unwrap();
    assert_eq!(names(entry), [placeholder.as_str()], "ls --json says it too");

    // A name a run wore is never made up for another run.
    let next = home.start(&["cmd", "--", "sleep", "60"]);
    assert_ne!(home.show(&next)["name"], placeholder.as_str());
    assert_eq!(home.show(&placeholder)["id"], id.as_str());
}

#[test]
fn rename_gives_a_new_name_and_the_old_one_finds_the_run_until_a_newer_run_wears_it() {
    let home = Home::new();
    let first = home.start(&["--name", "alpha", "cmd", "--", "sleep", "60"]);
    let said = home.ok(&["rename", "alpha", "beta"]);
    assert!(said.contains("renamed alpha → beta"), "{said}");
    // To the name it has: nothing to do, and said so (not the rename before).
    let said = home.ok(&["rename", "beta", "beta"]);
    assert!(said.contains(&format!("{first} is named beta already")), "{said}");
    let shown = home.show("alpha");
    assert_eq!(shown["id"], first.as_str());
    assert_eq!(shown["name"], "beta");
    assert_eq!(names(&shown), ["alpha"]);
    let renamed = home
        .events(&first)
        .into_iter()
        .find(|e| e["kind"] == "RENAMED")
        .expect("the rename is on the run's record");
    assert_eq!(renamed["data"]["from"], "alpha");
    assert_eq!(renamed["data"]["to"], "beta");

    // Refused, in one line, with a failing status.
    let second = home.start(&["--name", "gamma", "cmd", "--", "sleep", "60"]);
    let err = home.fails(&["rename", "gamma", "beta"]);
    assert!(
        err.contains(&format!("the live run {first} is named 'beta' already")),
        "{err}"
    );
    let err = home.fails(&["rename", "gamma", "no spaces"]);
    assert!(err.contains("bad run name 'no spaces'"), "{err}");
    let err = home.fails(&["rename", "nothing-here", "x"]);
    assert!(err.contains("no run matches 'nothing-here'"), "{err}");
    assert_eq!(home.show("gamma")["id"], second.as_str(), "nothing changed");

    // A newer run may wear the old name, and then it is the one found.
    let third = home.start(&["--name", "alpha", "cmd", "--", "sleep", "60"]);
    assert_eq!(home.show("alpha")["id"], third.as_str());
    assert_eq!(home.show("beta")["id"], first.as_str());
    let err = home.fails(&["rename", "gamma", "alpha"]);
    assert!(err.contains("is named 'alpha' already"), "{err}");

    // An ended run's name is free to wear again; the live wearer is found.
    home.ok(&["cancel", "--force", &third]);
    home.wait_end(&third);
    home.ok(&["rename", "gamma", "alpha"]);
    assert_eq!(home.show("alpha")["id"], second.as_str());
    assert_eq!(home.show("gamma")["id"], second.as_str(), "gamma, its former name");

    // A run removed takes its names with it.
    home.ok(&["cancel", "--force", &first]);
    home.wait_end(&first);
    home.ok(&["rm", "--yes", &first]);
    let err = home.fails(&["show", "beta"]);
    assert!(err.contains("no run matches 'beta'"), "{err}");
    assert_ne!(home.show("alpha")["id"], first.as_str());
}

/// Many runs started at once, as a script or several terminals do: each
/// is started under a name of its own (a free name was chosen in one call
/// and stored in a later one, so starts at once took the same one and all
/// but one failed with "database error: UNIQUE constraint failed"), and
/// of two starts given the same name at once, one is refused saying why.
#[test]
fn runs_started_at_once_each_get_a_name_of_their_own() {
    let home = Home::new();
    home.ok(&["daemon", "start"]);
    let spawn = |args: &[&str]| {
        let mut command = home.cmd(args);
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        command.spawn().expect("agents run")
    };
    let starts: Vec<_> = (0..16)
        .map(|_| spawn(&["run", "-d", "cmd", "--", "sleep", "60"]))
        .collect();
    for start in starts {
        let out = start.wait_with_output().expect("agents run");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let listed = home.json(&["ls", "--json"]);
    let mut worn: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(worn.len(), 16);
    worn.sort();
    worn.dedup();
    assert_eq!(worn.len(), 16, "every run its own name");

    let same: Vec<_> = (0..4)
        .map(|_| spawn(&["run", "-d", "--name", "twin", "cmd", "--", "sleep", "60"]))
        .collect();
    let outs: Vec<_> = same
        .into_iter()
        .map(|s| s.wait_with_output().expect("agents run"))
        .collect();
    assert_eq!(outs.iter().filter(|o| o.status.success()).count(), 1);
    for refused in outs.iter().filter(|o| !o.status.success()) {
        let said = String::from_utf8_lossy(&refused.stderr);
        assert!(said.contains("a live run is named 'twin' already"), "{said}");
    }
}
