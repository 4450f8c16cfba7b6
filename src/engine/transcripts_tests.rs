//! The tailer's watches (src/engine/transcripts.rs).

use super::*;
use crate::store::runs::{Ending, NewRun, RunRow};

/// A tailer over a fresh store, with its watcher but not its task: the
/// test hands it jobs one at a time.
fn tailer(store: &Store) -> Tailer {
    Tailer {
        store: store.clone(),
        grew: broadcast::channel(16).0,
        watcher: Some(Watcher::new(|_| {}).unwrap()),
        files: HashSet::new(),
        claude_dirs: HashMap::new(),
        again: None,
        rechecks: HashMap::new(),
    }
}

async fn add_run(store: &Store, id: &str, session: &str) {
    let row = RunRow {
        state: crate::api::RunState::Running,
        session_id: Some(session.into()),
        ..RunRow::new(NewRun {
            id: id.into(),
            name: id.into(),
            harness: "codex".into(),
            host: "local".into(),
            cwd: "/".into(),
            command: Vec::new(),
            args: Vec::new(),
        })
    };
    store.runs().insert(row).await.unwrap();
}

async fn end_run(store: &Store, id: &str) {
    let ending = Ending {
        state: crate::api::RunState::Succeeded,
        exit_code: Some(0),
        signal: None,
        reason: None,
        output_bytes: None,
        event_kind: "RUN_FINISHED",
        evidence: serde_json::json!({}),
        ended_at: None,
    };
    store.runs().finish(id, ending).await.unwrap();
}

fn watched(t: &Tailer) -> Vec<&Path> {
    let mut dirs: Vec<&Path> = t.watcher.as_ref().unwrap().watched().collect();
    dirs.sort();
    dirs
}

#[tokio::test]
async fn a_sessions_folders_are_unwatched_once_no_live_run_uses_it_and_watched_again_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("a.db")).unwrap();
    // Two Codex sessions in folders of their own, and a third session
    // sharing the first one's folder.
    let file = |day: &str, name: &str| {
        let folder = dir.path().join(day);
        std::fs::create_dir_all(&folder).unwrap();
        let f = folder.join(format!("rollout-{name}.jsonl"));
        std::fs::write(&f, b"").unwrap();
        f
    };
    let (a, b, c) = (file("d1", "a"), file("d2", "b"), file("d1", "c"));
    add_run(&store, "RA", "SA").await;
    add_run(&store, "RB", "SB").await;
    add_run(&store, "RC", "SC").await;
    for (f, session, run) in [(&a, "SA", "RA"), (&b, "SB", "RB"), (&c, "SC", "RC")] {
        let (f, session, run) = (f.clone(), session.to_string(), run.to_string());
        index::on_store::register_file(&store, &f, &session, Some(&run), None)
            .await
            .unwrap()
            .unwrap();
    }
    let mut t = tailer(&store);
    for f in [&a, &b, &c] {
        assert!(t.watch(f));
    }
    let (d1, d2) = (dir.path().join("d1"), dir.path().join("d2"));
    assert_eq!(watched(&t), [d1.as_path(), d2.as_path()]);

    // B's run ends: its folder goes. A's ends: d1 stays for C's run.
    end_run(&store, "RB").await;
    t.prune().await;
    assert_eq!(watched(&t), [d1.as_path()]);
    end_run(&store, "RA").await;
    t.prune().await;
    assert_eq!(watched(&t), [d1.as_path()]);
    assert!(!t.files.contains(&a) && t.files.contains(&c));
    end_run(&store, "RC").await;
    t.prune().await;
    assert!(watched(&t).is_empty());
    assert!(t.files.is_empty());

    // A later run resumes session B (the source still names RB): its
    // file is tailed again, and kept while that run lives.
    add_run(&store, "RB2", "SB").await;
    let sources = store.transcripts().session_sources("SB").await.unwrap();
    for src in sources {
        t.watch(Path::new(&src.path));
    }
    t.prune().await;
    assert_eq!(watched(&t), [d2.as_path()]);
    assert!(t.files.contains(&b));
}

/// A database's second read waits for its last change to be old enough:
/// a change since moves it on, and once due it is read and forgotten.
#[tokio::test]
async fn a_database_is_read_again_once_after_its_last_change() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("agents.db")).unwrap();
    let mut t = tailer(&store);
    let db = dir.path().join("state.db");
    let later = std::time::Instant::now() + std::time::Duration::from_secs(60);
    t.rechecks.insert(db.clone(), later);
    t.recheck(db.clone()).await;
    assert_eq!(t.rechecks.get(&db), Some(&later), "not due yet: kept for its time");
    t.rechecks.insert(db.clone(), std::time::Instant::now());
    t.recheck(db.clone()).await;
    assert!(t.rechecks.is_empty(), "due: read, and no more to come");
}
