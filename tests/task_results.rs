//! Task results (docs/design.md §13) against the real binary: a child run
//! that ends while nobody awaits it is told to its parent agent as a turn
//! nobody typed, once, with a `TASK_RESULT` event on both; a shell parent
//! is never typed into.

mod common;

use common::Home;

fn at_prompt(home: &Home, run: &str) -> bool {
    home.logs(run).contains(agents::harness::demo::PROMPT.trim_end())
}

#[test]
fn a_child_that_ends_unawaited_is_told_to_its_parent_agent_once() {
    let home = Home::new();
    let boss = home.start(&["--name", "boss", "demo"]);
    home.wait_until("boss at its prompt", || at_prompt(&home, &boss));
    let child = home.start(&["--parent", "boss", "--name", "lint", "cmd", "--", "sh", "-c", "exit 3"]);
    home.wait_until("the boss answered its task result", || {
        let logs = home.logs(&boss);
        logs.lines().any(|l| {
            l.contains("you said \"[task result] lint failed") && l.contains("exited with code 3 — agents show lint\"")
        })
    });
    let kinds = |run: &str| home.event_kinds(run).into_iter().filter(|k| k == "TASK_RESULT").count();
    assert_eq!((kinds(&boss), kinds(&child)), (1, 1));
    // A daemon restart writes nothing again.
    home.ok(&["daemon", "stop"]);
    home.ok(&["daemon", "start"]);
    home.ok(&["send", "boss", "marker"]);
    home.wait_until("the marker answered", || {
        home.logs(&boss).contains("you said \"marker\"")
    });
    assert_eq!(
        home.logs(&boss).matches("[task result] lint").count(),
        2,
        "typed once, echoed once"
    );
    assert_eq!(
        home.prompts(&boss)
            .iter()
            .filter(|p| p.starts_with("[task result]"))
            .count(),
        1
    );

    // A shell parent gets no words typed into it.
    let shell = home.start(&["--name", "sh-parent", "cmd", "--", "sleep", "600"]);
    let quiet = home.start(&["--parent", "sh-parent", "cmd", "--", "true"]);
    home.wait_end(&quiet);
    home.wait_until("its end recorded on the parent", || {
        home.event_kinds(&shell).iter().any(|k| k == "CHILD_ENDED")
    });
    assert!(home.prompts(&shell).is_empty());
    assert!(!home.event_kinds(&shell).iter().any(|k| k == "TASK_RESULT"));
}
