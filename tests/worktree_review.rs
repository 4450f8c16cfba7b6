//! A --worktree run's work reviewed and merged on a real git repository
//! (docs/design.md §4): `agents diff` shows its commits and uncommitted
//! files, `agents merge` fast-forwards, merges or squashes into the branch
//! it started from and changes nothing on a conflict or over the user's
//! own edits, and `agents worktree rm` refuses uncommitted work without
//! `--force` and keeps the branch.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::Home;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

/// A repository on `main` with one file, its author set as a user's is.
fn repo() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "A User"]);
    git(dir, &["config", "user.email", "user@example.invalid"]);
    std::fs::write(dir.join("a.txt"), "one\n").unwrap();
    git(dir, &["add", "a.txt"]);
    git(dir, &["commit", "-qm", "first"]);
    repo
}

/// Starts a worktree run of `script` in `repo` and waits for it to succeed.
fn agent(home: &Home, repo: &Path, name: &str, script: &str) {
    let id = home.start(&[
        "--worktree",
        "--name",
        name,
        "--cwd",
        repo.to_str().unwrap(),
        "cmd",
        "--",
        "sh",
        "-c",
        script,
    ]);
    let end = home.wait_end(&id);
    assert_eq!(end["state"], "succeeded", "{end}\n{}", home.logs(&id));
}

/// A Changes answer's files: path, status, lines added, uncommitted.
fn files_of(changes: &serde_json::Value) -> Vec<(String, String, u64, bool)> {
    changes["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().into(),
                f["status"].as_str().unwrap().into(),
                f["added"].as_u64().unwrap(),
                f["uncommitted"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn failure(out: &Output) -> String {
    assert!(!out.status.success(), "expected a failure: {}", text(&out.stdout));
    let err = text(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "one line expected: {err}");
    err
}

#[test]
fn a_runs_changes_are_shown_then_fast_forwarded_into_its_branch_and_its_worktree_removed_keeping_the_branch() {
    let home = Home::new();
    let repo = repo();
    let dir = repo.path();
    agent(
        &home,
        dir,
        "w1",
        "echo two >> a.txt && git commit -qam 'agent edit' && printf 'new\\033]52;c;aGk=\\007\\n' > b.txt",
    );

    let changes = home.json(&["diff", "w1", "--json"]);
    assert_eq!(changes["branch"], "agents/w1");
    assert_eq!(changes["from"], "main");
    assert_eq!(
        (changes["commits"].as_u64(), changes["uncommitted"].as_u64()),
        (Some(1), Some(1))
    );
    let files = files_of(&changes);
    assert_eq!(
        files,
        vec![
            ("a.txt".into(), "modified".into(), 1, false),
            ("b.txt".into(), "untracked".into(), 1, true)
        ]
    );
    let shown = home.ok(&["diff", "w1"]);
    assert!(shown.starts_with("agents/w1: 1 commit since "), "{shown}");
    assert!(shown.contains("+two") && shown.contains("merges into main"), "{shown}");
    assert!(!shown.contains('\x1b'), "the agent's bytes are made inert: {shown:?}");
    assert!(shown.contains("+new\\x1b]52"), "{shown}");

    // Fast-forward: main and its checkout move to the run's commit.
    let out = home.run(&["merge", "w1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("merged agents/w1 (1 commit) into main") && said.contains("fast-forward"),
        "{said}"
    );
    assert!(
        text(&out.stderr).contains("1 uncommitted file"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(git(dir, &["rev-parse", "main"]), git(dir, &["rev-parse", "agents/w1"]));
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "one\ntwo\n");
    assert!(home.event_kinds("w1").contains(&"WORKTREE_MERGED".to_string()));
    let again = failure(&home.run(&["merge", "w1"]));
    assert!(again.contains("nothing to merge"), "{again}");
    // Merged: diff says so, and offers the old commit no more.
    let shown = home.ok(&["diff", "w1", "--stat"]);
    let first = shown.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("agents/w1: merged into main, nothing left to merge"),
        "{shown}"
    );
    assert!(!first.contains("since") && !first.contains("merges into"), "{shown}");
    assert_eq!(home.json(&["diff", "w1", "--json"])["merged"], true);

    // The untracked file keeps the worktree until --force.
    let worktree = home.path().join("worktrees/w1");
    let refused = failure(&home.run(&["worktree", "rm", "w1"]));
    assert!(
        refused.contains("uncommitted work") && refused.contains("b.txt"),
        "{refused}"
    );
    assert!(worktree.join("b.txt").exists());
    let out = home.ok(&["worktree", "rm", "w1", "--force"]);
    assert!(out.contains("branch agents/w1 kept"), "{out}");
    assert!(!worktree.exists());
    git(dir, &["rev-parse", "--verify", "agents/w1"]);
    // Its commits still show, from the branch.
    let changes = home.json(&["diff", "w1", "--json"]);
    assert_eq!(changes["worktree"], serde_json::Value::Null);
    assert_eq!(changes["commits"], 1);
    let gone = failure(&home.run(&["worktree", "rm", "w1"]));
    assert!(gone.contains("already removed"), "{gone}");
}

#[test]
fn a_conflict_or_the_users_own_edits_stop_a_merge_with_nothing_changed_and_squash_makes_one_commit() {
    let home = Home::new();
    let repo = repo();
    let dir = repo.path();
    agent(
        &home,
        dir,
        "clash",
        "echo agent > a.txt && git commit -qam 'agent rewrites a'",
    );
    agent(
        &home,
        dir,
        "two",
        "echo c1 > c.txt && git add c.txt && git commit -qm c1 && echo c2 >> c.txt && git commit -qam c2",
    );
    // Meanwhile the user changed the same line on main.
    std::fs::write(dir.join("a.txt"), "user\n").unwrap();
    git(dir, &["commit", "-qam", "user rewrites a"]);
    let main_before = git(dir, &["rev-parse", "main"]);

    let conflict = failure(&home.run(&["merge", "clash"]));
    assert!(
        conflict.contains("conflict") && conflict.contains("a.txt") && conflict.contains("nothing was changed"),
        "{conflict}"
    );
    assert_eq!(git(dir, &["rev-parse", "main"]), main_before);
    assert_eq!(git(dir, &["status", "--porcelain"]), "");

    // The user's uncommitted edit of a file the merge brings: refused.
    std::fs::write(dir.join("c.txt"), "mine\n").unwrap();
    let refused = failure(&home.run(&["merge", "two"]));
    assert!(
        refused.contains("checked out in") && refused.contains("nothing was changed"),
        "{refused}"
    );
    assert_eq!(git(dir, &["rev-parse", "main"]), main_before);
    assert_eq!(std::fs::read_to_string(dir.join("c.txt")).unwrap(), "mine\n");
    std::fs::remove_file(dir.join("c.txt")).unwrap();

    // Squashed: one new commit on main, one parent, the run's files.
    let said = home.ok(&["merge", "two", "--squash"]);
    assert!(
        said.contains("(2 commits) into main") && said.contains("squash"),
        "{said}"
    );
    assert_eq!(git(dir, &["rev-parse", "main~1"]), main_before);
    assert_eq!(
        git(dir, &["rev-list", "--parents", "-n1", "main"]).split(' ').count(),
        2
    );
    assert!(git(dir, &["log", "-1", "--format=%B", "main"]).contains("Squashed agents/two (run two)"));
    assert_eq!(std::fs::read_to_string(dir.join("c.txt")).unwrap(), "c1\nc2\n");
    // Squashed is merged too: main has the work, if not the commits.
    let changes = home.json(&["diff", "two", "--json"]);
    assert_eq!(changes["merged"], true, "{changes}");
    let shown = home.ok(&["diff", "two", "--stat"]);
    assert!(shown.starts_with("agents/two: merged into main"), "{shown}");
}

#[test]
fn a_merge_when_the_branch_is_not_checked_out_moves_only_the_ref_and_live_or_plain_runs_are_refused() {
    let home = Home::new();
    let repo = repo();
    let dir = repo.path();
    agent(
        &home,
        dir,
        "side",
        "echo s > s.txt && git add s.txt && git commit -qm side",
    );
    git(dir, &["commit", "-q", "--allow-empty", "-m", "main moves on"]);
    // The user works on another branch now; main is not checked out.
    git(dir, &["switch", "-q", "-c", "other"]);
    let said = home.ok(&["merge", "side"]);
    assert!(said.contains("into main") && said.contains("(merge)"), "{said}");
    assert_eq!(
        git(dir, &["rev-list", "--parents", "-n1", "main"]).split(' ').count(),
        3
    );
    assert!(!dir.join("s.txt").exists(), "the user's checkout is untouched");
    assert_eq!(git(dir, &["show", "main:s.txt"]), "s");

    let live = home.start(&[
        "--worktree",
        "--name",
        "busy",
        "--cwd",
        dir.to_str().unwrap(),
        "cmd",
        "--",
        "sleep",
        "600",
    ]);
    let refused = failure(&home.run(&["worktree", "rm", "busy"]));
    assert!(refused.contains("still running"), "{refused}");
    assert!(home.path().join("worktrees/busy").is_dir());
    home.ok(&["cancel", &live]);

    let plain = home.start(&["--cwd", dir.to_str().unwrap(), "cmd", "--", "true"]);
    home.wait_end(&plain);
    let none = failure(&home.run(&["diff", &plain]));
    assert!(none.contains("has no worktree"), "{none}");
}

/// Reads the TUI's screen until it shows `text`.
fn wait_for(tui: &mut common::pty::Pty, text: &str) -> Vec<String> {
    tui.wait_screen(&format!("{text:?}"), |lines| lines.iter().any(|l| l.contains(text)))
}

#[test]
fn the_tuis_changes_tab_shows_a_runs_diff_and_merges_it_when_asked() {
    let home = Home::new();
    let repo = repo();
    let dir = repo.path();
    agent(
        &home,
        dir,
        "reviewed",
        "printf 'one\\nchanged by the agent\\n' > a.txt && git commit -qam 'agent edit'",
    );
    let mut tui = common::pty::Pty::spawn(&home, &[], 40, 160, dir, false);
    wait_for(&mut tui, "reviewed");
    // `}` opens the Changes tab on the selected (only) run's first hunk.
    tui.type_bytes(b"}");
    wait_for(&mut tui, "+changed by the agent");
    wait_for(&mut tui, "▸ @@ -1 +1,2 @@");
    let lines = wait_for(&mut tui, "agents/reviewed · 1 commit since");
    assert!(
        lines.iter().any(|l| l.contains("M merge into main")),
        "{}",
        lines.join("\n")
    );
    tui.type_bytes(b"M");
    wait_for(&mut tui, "Merge agents/reviewed into main?");
    tui.type_bytes(b"y");
    wait_for(&mut tui, "merged agents/reviewed (1 commit) into main");
    assert_eq!(
        git(dir, &["rev-parse", "main"]),
        git(dir, &["rev-parse", "agents/reviewed"])
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("a.txt")).unwrap(),
        "one\nchanged by the agent\n"
    );
    // Read again: merged, so the tab says so and M has nothing to bring.
    let lines = wait_for(&mut tui, "agents/reviewed · merged into main");
    let screen = lines.join("\n");
    assert!(screen.contains("nothing left to merge"), "{screen}");
    assert!(
        !screen.contains("1 commit since") && !screen.contains("M merge into main"),
        "{screen}"
    );
    tui.type_bytes(b"M");
    wait_for(
        &mut tui,
        "nothing to merge: main already has the work of agents/reviewed",
    );
    tui.type_bytes(b"q");
    assert_eq!(tui.exit_code(), 0);
}

/// What real repositories hold: names with spaces and non-ASCII letters, a
/// user's `diff.noprefix`, a diff past its bound with multi-byte text at
/// the cut, a squash repeated, a branch deleted under the run.
#[test]
fn odd_names_a_users_diff_config_a_huge_diff_and_a_deleted_branch_are_read_right() {
    let home = Home::new();
    let repo = repo();
    let dir = repo.path();
    git(dir, &["config", "diff.noprefix", "true"]);
    agent(
        &home,
        dir,
        "odd",
        "mkdir -p 'dir é' && echo one > 'dir é/sp ace.txt' && git add . && git commit -qm spaces \
         && echo two >> 'dir é/sp ace.txt' && echo new > 'un tracked.txt'",
    );
    let changes = home.json(&["diff", "odd", "--json"]);
    let files = files_of(&changes);
    assert_eq!(
        files,
        vec![
            ("dir é/sp ace.txt".into(), "added".into(), 2, true),
            ("un tracked.txt".into(), "untracked".into(), 1, true)
        ],
        "each file once, by its name, despite diff.noprefix"
    );

    // 700 KB of euro signs: the text is cut on a line, the counts whole.
    let big =
        "€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€\n"
            .repeat(2200);
    std::fs::write(dir.join("euro.txt"), &big).unwrap();
    git(dir, &["add", "euro.txt"]);
    git(dir, &["commit", "-qm", "euro on main"]);
    agent(
        &home,
        dir,
        "huge",
        "sed -i 's/€/$/' euro.txt && git commit -qam dollars",
    );
    let changes = home.json(&["diff", "huge", "--json"]);
    assert_eq!(changes["truncated"], true);
    assert!(changes["diff"].as_str().unwrap().len() <= 512 * 1024);
    assert_eq!(changes["files"][0]["added"], 2200, "{}", changes["files"]);
    assert_eq!(changes["files"][0]["removed"], 2200);

    // Squashed once: a second squash has nothing to bring.
    home.ok(&["merge", "huge", "--squash"]);
    let again = failure(&home.run(&["merge", "huge", "--squash"]));
    assert!(again.contains("nothing to merge"), "{again}");

    // A file the merge would bring exists, untracked, in the checkout.
    agent(
        &home,
        dir,
        "brings",
        "echo theirs > clash.txt && git add clash.txt && git commit -qm clash",
    );
    std::fs::write(dir.join("clash.txt"), "mine\n").unwrap();
    let refused = failure(&home.run(&["merge", "brings"]));
    assert!(
        refused.contains("clash.txt") && refused.contains("nothing was changed"),
        "{refused}"
    );
    assert_eq!(std::fs::read_to_string(dir.join("clash.txt")).unwrap(), "mine\n");

    git(
        dir,
        &[
            "worktree",
            "remove",
            "--force",
            home.path().join("worktrees/brings").to_str().unwrap(),
        ],
    );
    git(dir, &["branch", "-D", "agents/brings"]);
    let gone = failure(&home.run(&["diff", "brings"]));
    assert!(gone.contains("branch agents/brings no longer exists"), "{gone}");
}
