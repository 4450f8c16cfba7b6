//! Every answer fits its frame, and what a request would store is bounded
//! before it is stored (issue #11): many runs with long arguments still
//! list, by pages; a start too large to store is refused naming the field;
//! a request too large for a frame is refused by the client, saying so.

mod common;

use common::Home;
use serde_json::Value;

#[test]
fn runs_with_long_arguments_list_in_pages_that_fit_their_frames() {
    let home = Home::new();
    // 90 runs with a 12 KB argument each (as a reconstructed conversation
    // is): 1.1 MB of records, more than one frame.
    let arg = "x".repeat(12 * 1024);
    let mut ids = Vec::new();
    for _ in 0..90 {
        ids.push(home.start(&["cmd", "--", "true", &arg]));
    }
    for id in &ids {
        home.wait_end(id);
    }
    let listed: Value = home.json(&["ls", "--all", "--json"]);
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), ids.len(), "every run, over several pages");
    assert!(
        listed
            .iter()
            .all(|r| r["command"][1].as_str().map(str::len) == Some(arg.len()))
    );
    let table = home.ok(&["ls", "--all"]);
    assert_eq!(table.lines().count(), ids.len() + 1, "a header and a line per run");
    // The daemon still answers on the same footing.
    assert!(home.run(&["daemon", "status"]).status.success());
}

#[test]
fn a_start_too_large_to_store_is_refused_and_nothing_is_stored() {
    let home = Home::new();
    let huge = "h".repeat(100 * 1024);
    let out = home.run(&["run", "-d", &huge]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("the harness name: 102400 bytes; at most 64"),
        "{stderr}"
    );
    let listed: Value = home.json(&["ls", "--all", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(0), "{listed}");
}

#[test]
fn a_request_larger_than_a_frame_is_refused_by_the_client_saying_so() {
    let home = Home::new();
    let part = "y".repeat(100 * 1024);
    let mut args = vec!["run", "-d", "cmd", "--", "true"];
    for _ in 0..12 {
        args.push(&part);
    }
    let out = home.run(&args);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("one holds at most 1048575 (1 MiB)"), "{stderr}");
    assert!(home.run(&["daemon", "status"]).status.success(), "the daemon is up");
}

/// An empty prompt types nothing: refused in one line, and nothing is
/// stored or queued for the run (mail refuses an empty message alike).
#[test]
fn an_empty_prompt_is_refused_and_nothing_waits() {
    let home = Home::new();
    let run = home.start(&["--name", "quiet", "cmd", "--", "sleep", "60"]);
    for empty in ["", "  \n"] {
        let err = home.fails(&["send", "quiet", empty]);
        assert!(err.contains("the prompt is empty"), "{err}");
    }
    assert!(home.prompts(&run).is_empty(), "nothing stored");
    assert!(home.show(&run)["waiting"].as_array().is_none_or(Vec::is_empty));
    home.ok(&["cancel", &run]);
}

/// A start that could only be blocked is refused before anything is
/// stored: no harness, a mistyped one (with the name meant), a timeout of
/// 0 s, `--env` given something other than a variable's name (whose value,
/// after a `=`, is never shown).
#[test]
fn a_start_with_no_harness_a_zero_timeout_or_a_bad_env_name_is_refused_and_nothing_is_stored() {
    let home = Home::new();
    let said = |args: &[&str]| home.fails(args);
    assert!(said(&["run", "-d", ""]).contains("no harness given"));
    let typo = said(&["run", "-d", "nanocodr"]);
    assert!(
        typo.contains("unknown harness 'nanocodr': did you mean 'nanocoder'?"),
        "{typo}"
    );
    assert!(!said(&["run", "-d", "zzzzzzzzzz"]).contains("did you mean"));
    assert!(said(&["run", "-d", "--timeout", "0", "cmd", "--", "true"]).contains("a timeout of 0 s"));
    let err = said(&["run", "-d", "--env", "TOKEN=sk-secret", "cmd", "--", "true"]);
    assert!(err.contains("--env \"TOKEN=…\": not a variable name"), "{err}");
    assert!(!err.contains("sk-secret"), "the value is never shown: {err}");
    assert!(said(&["run", "-d", "--env", "", "cmd", "--", "true"]).contains("not a variable name"));
    let listed: Value = home.json(&["ls", "--all", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(0), "{listed}");
    let log = std::fs::read_to_string(home.path().join("daemon.log")).unwrap_or_default();
    assert!(!log.contains("sk-secret"), "nor logged");
}

/// A prompt is bounded where every prompt is (`api::bounds::PROMPT`,
/// 128 KiB, as the docs say), not at 64 KiB on the way in from `send`.
#[test]
fn a_prompt_of_100_kib_is_taken() {
    let home = Home::new();
    let run = home.start(&[
        "--name",
        "sink",
        "cmd",
        "--",
        "sh",
        "-c",
        "stty raw -echo; cat > /dev/null",
    ]);
    let long = "p".repeat(100 * 1024);
    let sent = home.ok(&["send", "sink", &long]);
    assert!(sent.contains("(prompt "), "{sent}");
    assert_eq!(home.prompts(&run), [long], "stored whole");
    home.ok(&["cancel", &run]);
}
