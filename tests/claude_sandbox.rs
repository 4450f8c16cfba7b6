//! The real Claude Code CLI in a box (`--sandbox`, issue #37), run with
//! `--dangerously-skip-permissions` as people run it, against a mock of
//! the Anthropic Messages API on loopback: a Bash tool that writes the
//! work tree succeeds, one that writes the home fails, and Claude's own
//! transcript says so; its hooks reach the daemon from inside the box.
//!
//! Needs the CLI (`AGENTS_TEST_CLAUDE`, as `clis/claude.rs`) and bubblewrap.

mod common;

use common::Home;
use common::claude_mock::{self, API_KEY};
use common::real_cli::{self, BinDir, Reply, Request, hooks};
use serde_json::{Value, json};

const PINNED: &str = "2.1.197";

/// A prompt with `WRITEBOTH` gets two Bash calls in turn: one writing the
/// work tree, then one writing the home; then a closing line.
fn answer(r: &Request) -> Reply {
    if let Some(side) = claude_mock::side_request(r) {
        return side;
    }
    let req = r.json();
    let text = |t: &str| json!({ "type": "text", "text": t });
    // Where the conversation is: by the tool calls it already holds.
    let seen = req["messages"].to_string();
    let asked =
        claude_mock::last_user_text(&req).is_some_and(|t| t.contains("WRITEBOTH")) || seen.contains("toolu_box1");
    let bash = |id: &str, command: &str| {
        json!({ "type": "tool_use", "id": id, "name": "Bash",
                "input": { "command": command, "description": "Write a marker" } })
    };
    let (blocks, stop) = if !asked || !claude_mock::offers_tools(&req) {
        (vec![text("Hello from the mock model.")], "end_turn")
    } else if seen.contains("toolu_box2") {
        (vec![text("Both tried.")], "end_turn")
    } else if seen.contains("toolu_box1") {
        (
            vec![
                text("Writing home."),
                bash("toolu_box2", "touch \"$HOME/outside-marker\""),
            ],
            "tool_use",
        )
    } else {
        (
            vec![text("Writing here."), bash("toolu_box1", "touch in-tree-marker")],
            "tool_use",
        )
    };
    claude_mock::reply(r, &blocks, stop)
}

#[test]
fn claude_in_a_box_writes_its_work_tree_not_the_home_and_its_transcript_says_so() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    if agents::harness::sandbox::usable(std::env::var("PATH").ok().as_deref()).is_err() {
        eprintln!("skipped: no usable bubblewrap (the CI installs it)");
        return;
    }
    let api_url = real_cli::serve(answer);
    // Claude's own config home, which the box writes through: its login
    // and onboarding there, bypass mode accepted as a user has it.
    let (user_home, _project, cwd) = claude_mock::claude_home(Some(API_KEY));
    let config_home = tempfile::tempdir().unwrap();
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(user_home.path().join(".claude.json")).unwrap()).unwrap();
    settings["bypassPermissionsModeAccepted"] = json!(true);
    std::fs::write(config_home.path().join(".claude.json"), settings.to_string()).unwrap();
    let bin = BinDir::with(&claude, "claude");

    let home = Home::new();
    let mut run = home.cmd(&[
        "run",
        "-d",
        "--sandbox",
        // Claude refuses --dangerously-skip-permissions to root unless told
        // it is in a sandbox (the CI runs as root); a user's own variable,
        // passed by name.
        "--env",
        "IS_SANDBOX",
        "claude",
        "--size",
        "120x40",
        "--",
        "--dangerously-skip-permissions",
    ]);
    run.current_dir(&cwd)
        .env("PATH", bin.path_before("/usr/bin:/bin"))
        .env("HOME", user_home.path())
        .env("CLAUDE_CONFIG_DIR", config_home.path())
        .env("ANTHROPIC_BASE_URL", &api_url)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("IS_SANDBOX", "1");
    let id = real_cli::stdout_of(run, "run --sandbox claude");
    assert_eq!(home.show(&id)["sandbox"], "on");
    home.wait_until("claude started in its box, told by its hook", || {
        hooks(&home, &id).iter().any(|h| h == "SessionStart") && home.show(&id)["status"] == "idle"
    });

    home.ok(&["send", &id, "WRITEBOTH please"]);
    home.wait_until("both tools ran and the turn ended", || {
        real_cli::transcript(&home, &id)
            .iter()
            .any(|m| m["role"] == "assistant" && m.to_string().contains("Both tried."))
    });
    assert!(cwd.join("in-tree-marker").is_file(), "the work tree is written through");
    assert!(
        !user_home.path().join("outside-marker").exists(),
        "the home is not written"
    );
    // Claude's transcript has the failure as its tool said it.
    let session = home.show(&id)["transcript_path"].as_str().unwrap().to_string();
    let raw = std::fs::read_to_string(&session).unwrap();
    assert!(raw.contains("Read-only file system"), "{raw}");
    let hooks = hooks(&home, &id);
    assert!(
        hooks.iter().any(|h| h == "PostToolUse"),
        "hooks from the box: {hooks:?}"
    );
    home.ok(&["cancel", "--force", &id]);
}
