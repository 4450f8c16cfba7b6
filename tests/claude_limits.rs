//! The real Claude Code CLI refused or left hanging by its model: a turn
//! whose request never answers is `stalled` once its screen (spinner, clock
//! and hint row aside) has stood still for `stalled_after_secs`, and a turn
//! the API refused as overloaded ends `idle`, saying so in Claude's own
//! words. Against a loopback mock of the Messages API, as `clis/claude.rs`.
//!
//! Needs the CLI: `AGENTS_TEST_CLAUDE=/path/to/claude` (`.ci/run` sets it).

mod common;

use common::Home;
use common::claude_mock::{self, ClaudeSetup};
use common::real_cli::{self, Reply, Request};

/// The version the reference recordings and `.ci/run` use.
const PINNED: &str = "2.1.197";

/// `HANG` never gets an answer (for ten minutes); `OVERLOAD` gets the
/// API's 529; anything else a greeting.
fn answer(r: &Request) -> Reply {
    if let Some(side) = claude_mock::side_request(r) {
        return side;
    }
    let asked = claude_mock::last_user_text(&r.json()).unwrap_or_default();
    if asked.contains("HANG") {
        std::thread::sleep(std::time::Duration::from_secs(600));
    }
    if asked.contains("OVERLOAD") {
        return Reply {
            status: "529 Overloaded",
            kind: "application/json",
            body: br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.to_vec(),
        };
    }
    let text = serde_json::json!({ "type": "text", "text": "Hello from the mock model." });
    claude_mock::reply(r, &[text], "end_turn")
}

#[test]
fn a_real_claude_turn_whose_model_never_answers_is_stalled_and_one_refused_as_overloaded_says_so() {
    let Some(claude) = real_cli::pinned_binary("CLAUDE", "claude", PINNED) else {
        return;
    };
    let api_url = real_cli::serve(answer);
    let setup = ClaudeSetup::new(&claude, &api_url);
    let home = Home::with_config("[engine]\nstalled_after_secs = 6\n");
    let start = |name: &str| {
        let args = ["run", "-d", "claude", "--name", name, "--size", "120x40"];
        real_cli::stdout_of(setup.agents(&home, &args), "run claude")
    };
    let hung = start("hung");
    let refused = start("refused");
    for id in [&hung, &refused] {
        home.wait_until("claude at its prompt", || home.show(id)["status"] == "idle");
    }

    home.ok(&["send", "hung", "HANG please"]);
    real_cli::wait(&home, &hung, common::PATIENCE, "stalled on the silent model", || {
        let run = home.show(&hung);
        run["status"] == "stalled"
            && run["evidence"]
                .as_str()
                .is_some_and(|w| w.contains("nothing on screen or in the transcript changed for"))
    });
    let e = home.json(&["explain", "hung", "--json"]);
    assert_eq!(e["rule"], "stalled", "{e}");

    home.ok(&["send", "refused", "OVERLOAD please"]);
    real_cli::wait(
        &home,
        &refused,
        common::PATIENCE,
        "the turn ends on the refusal",
        || {
            let run = home.show(&refused);
            run["status"] == "idle"
                && run["evidence"].as_str().is_some_and(|w| {
                    w.contains("the screen says overloaded: API Error: Repeated 529 Overloaded errors")
                })
        },
    );
}
