//! The Changes tab (issue #12, "review a run's work"): a worktree run's
//! files and hunks drawn at 80×24, 120×40 and 200×50 (snapshots), the
//! hunk cursor, a comment that quotes its hunk into the composer, and a
//! merge that asks first — as keys in and daemon commands out.

mod common;

use agents::api::{ActivityStatus, Changes, FileChange, Merged, RunRecord, RunState};
use agents::tui::app::{App, Command, Overlay, Panel, Tab, Update};
use common::tui::screen;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};

fn run(id: &str, name: &str, state: RunState, worktree: bool) -> RunRecord {
    RunRecord {
        id: id.into(),
        name: name.into(),
        harness: "claude".into(),
        host: "local".into(),
        cwd: format!("/home/user/.agents/worktrees/{name}"),
        command: vec![],
        state,
        status: ActivityStatus::Idle,
        parent_id: None,
        root_id: id.into(),
        detached: false,
        session_id: None,
        pid: None,
        exit_code: None,
        signal: None,
        reason: None,
        created_at: "2026-12-01T00:00:00.000Z".into(),
        started_at: Some("2026-12-01T00:00:00.000Z".into()),
        ended_at: None,
        rows: 40,
        cols: 120,
        timeout_secs: None,
        worktree: worktree.then(|| format!("/home/user/.agents/worktrees/{name}")),
        output_bytes: 0,
        status_since: None,
        evidence: None,
        evidence_at: None,
        routine: None,
        scheduled_at: None,
        log_pruned_at: None,
        waiting: Vec::new(),
        former_names: Vec::new(),
        sandbox: None,
    }
}

const DIFF: &str = "\
diff --git a/src/parse.rs b/src/parse.rs
index 1111111..2222222 100644
--- a/src/parse.rs
+++ b/src/parse.rs
@@ -10,4 +10,5 @@ pub fn parse(input: &str) -> Result<Ast, Error> {
     let tokens = lex(input)?;
-    let ast = build(tokens);
+    let ast = build(tokens)?;
+    check(&ast)?;
     Ok(ast)
@@ -40,3 +41,3 @@ fn build(tokens: Vec<Token>) -> Ast {
-    todo!()
+    Ast::from(tokens)
 }
diff --git a/notes.md b/notes.md
new file mode 100644
--- /dev/null
+++ b/notes.md
@@ -0,0 +1,2 @@
+# Notes
+the parser now checks\x1b]52;c;aGk=\x07 its tree
";

fn changes() -> Changes {
    let file = |path: &str, status: &str, added, removed, uncommitted| FileChange {
        path: path.into(),
        status: status.into(),
        added,
        removed,
        uncommitted,
    };
    Changes {
        branch: "agents/fix-parser".into(),
        base: "9f3c2a1b7e".into(),
        from: Some("main".into()),
        worktree: Some("/home/user/.agents/worktrees/fix-parser".into()),
        commits: 2,
        ahead: Some(2),
        merged: false,
        uncommitted: 1,
        note: None,
        files: vec![
            file("src/parse.rs", "modified", 3, 2, false),
            file("notes.md", "untracked", 2, 0, true),
        ],
        diff: DIFF.into(),
        truncated: false,
    }
}

fn app() -> App {
    let mut app = App::new();
    app.set_no_color(true);
    app.set_connected(true);
    // An hour after the runs started, so the screens stay the same.
    app.set_now(humantime::parse_rfc3339("2026-12-01T01:00:00Z").ok());
    app.update(Update::Runs(vec![
        run("01A", "fix-parser", RunState::Running, true),
        run("01B", "plain", RunState::Running, false),
    ]));
    app.take_commands();
    app
}

fn press(app: &mut App, code: KeyCode) {
    app.handle(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

#[test]
fn the_next_hunk_key_opens_the_changes_tab_which_reads_the_runs_changes() {
    let mut app = app();
    press(&mut app, KeyCode::Char('}'));
    assert_eq!((app.tab(), app.panel()), (Tab::Changes, Panel::Side));
    assert_eq!(app.take_commands(), vec![Command::Changes("01A".into())]);
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("reading its changes"), "{text}");
    app.update(Update::Changes {
        run: "01A".into(),
        result: Ok(changes()),
    });
    for (w, h) in [(80, 24), (120, 40), (200, 50)] {
        let text = screen(&mut app, w, h);
        assert!(text.contains("▸ @@ -10,4"), "the cursor on the first hunk:\n{text}");
        assert!(!text.contains('\x1b'), "inert:\n{text}");
        assert!(w < 200 || text.contains("checks\\x1b]52"), "shown escaped:\n{text}");
        snap!(format!("changes_{w}x{h}"), text);
    }
}

#[test]
fn hunks_are_stepped_through_and_a_comment_quotes_the_one_under_the_cursor() {
    let mut app = app();
    app.set_tab(Tab::Changes);
    app.set_panel(Panel::Side);
    app.update(Update::Changes {
        run: "01A".into(),
        result: Ok(changes()),
    });
    press(&mut app, KeyCode::Char('}'));
    press(&mut app, KeyCode::Char('}'));
    press(&mut app, KeyCode::Char('}'));
    let text = screen(&mut app, 200, 50);
    assert!(
        text.contains("▸ @@ -0,0 +1,2 @@"),
        "the last hunk, and no further:\n{text}"
    );
    press(&mut app, KeyCode::Char('{'));
    let text = screen(&mut app, 200, 50);
    assert!(text.contains("▸ @@ -40,3 +41,3 @@"), "{text}");
    press(&mut app, KeyCode::Char('c'));
    let Some(Overlay::Compose(composer)) = app.overlay() else {
        panic!("the composer opens")
    };
    assert_eq!(composer.run, "01A");
    assert_eq!(
        composer.text(),
        "About this change in src/parse.rs:\n```diff\n@@ -40,3 +41,3 @@ fn build(tokens: Vec<Token>) -> Ast {\n-    todo!()\n+    Ast::from(tokens)\n }\n```\n"
    );
    press(&mut app, KeyCode::Enter);
    let sent = app.take_commands();
    assert!(
        sent.iter()
            .any(|c| matches!(c, Command::Send { run, text, .. } if run == "01A" && text.contains("todo!()"))),
        "{sent:?}"
    );
}

#[test]
fn merge_asks_first_and_says_what_it_did_or_why_not() {
    let mut app = app();
    app.set_tab(Tab::Changes);
    // Not read yet: M reads them first.
    press(&mut app, KeyCode::Char('M'));
    assert_eq!(app.message(), Some("reading its changes first: press again"));
    assert_eq!(app.take_commands(), vec![Command::Changes("01A".into())]);
    app.update(Update::Changes {
        run: "01A".into(),
        result: Ok(changes()),
    });
    press(&mut app, KeyCode::Char('M'));
    assert!(matches!(app.overlay(), Some(Overlay::ConfirmMerge { into, .. }) if into == "main"));
    let text = screen(&mut app, 120, 40);
    assert!(text.contains("Merge agents/fix-parser into main?"), "{text}");
    press(&mut app, KeyCode::Char('s'));
    let merges: Vec<Command> = app
        .take_commands()
        .into_iter()
        .filter(|c| !matches!(c, Command::Resize { .. }))
        .collect();
    assert_eq!(
        merges,
        vec![Command::Merge {
            run: "01A".into(),
            squash: true
        }]
    );
    app.update(Update::Merged {
        run: "01A".into(),
        result: Ok(Merged {
            branch: "agents/fix-parser".into(),
            into: "main".into(),
            commit: "abcdef0123456789".into(),
            commits: 2,
            how: "squash".into(),
            uncommitted: 1,
        }),
    });
    assert_eq!(
        app.message(),
        Some(
            "merged agents/fix-parser (2 commits) into main as abcdef0123 (squash); 1 uncommitted file left in its worktree"
        )
    );
    assert_eq!(app.take_commands(), vec![Command::Changes("01A".into())], "read again");
    app.update(Update::Merged {
        run: "01A".into(),
        result: Err(
            "conflict: merging agents/fix-parser into main conflicts in src/parse.rs; nothing was changed".into(),
        ),
    });
    assert!(app.message().unwrap().starts_with("not merged: conflict"));

    // Any other key keeps things as they are; a run with no worktree says so.
    press(&mut app, KeyCode::Char('M'));
    press(&mut app, KeyCode::Char('n'));
    assert!(app.overlay().is_none());
    assert!(!app.take_commands().iter().any(|c| matches!(c, Command::Merge { .. })));
    press(&mut app, KeyCode::Char('j'));
    press(&mut app, KeyCode::Char('M'));
    assert_eq!(app.message(), Some("plain has no worktree: nothing to merge"));
    let text = screen(&mut app, 200, 50);
    assert!(text.contains("plain has no worktree."), "{text}");
}
