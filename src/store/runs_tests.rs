//! The runs table (src/store/runs.rs).

use super::*;

/// A run's row as a test stores it.
pub(in crate::store) fn row(id: &str, state: RunState) -> RunRow {
    RunRow {
        state,
        launch_id: format!("l{id}"),
        created_at: 0,
        ..RunRow::new(NewRun {
            id: id.into(),
            name: format!("n{id}"),
            harness: "cmd".into(),
            host: "local".into(),
            cwd: "/".into(),
            command: vec!["true".into()],
            args: vec!["a b".into()],
        })
    }
}

#[test]
fn a_launch_id_finds_its_run_and_an_answer_id_its_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = super::super::open_connection(&dir.path().join("a.db")).unwrap();
    super::super::migrations::migrate(&mut conn).unwrap();
    insert_run(&conn, &row("R1", RunState::Running)).unwrap();
    assert_eq!(run_by_launch_id(&conn, "lR1").unwrap().unwrap().id, "R1");
    assert!(run_by_launch_id(&conn, "l-none").unwrap().is_none());

    append_event(
        &conn,
        "R1",
        "ANSWERED",
        &serde_json::json!({ "answer_id": "A1", "result": 1 }),
    )
    .unwrap();
    append_event(&conn, "R1", "ANSWER_REFUSED", &serde_json::json!({ "answer_id": "A2" })).unwrap();
    append_event(&conn, "R1", "ANSWERED", &serde_json::json!({ "answer_id": null })).unwrap();
    assert_eq!(answer_outcome(&conn, "R1", "A1").unwrap().unwrap().kind, "ANSWERED");
    assert_eq!(
        answer_outcome(&conn, "R1", "A2").unwrap().unwrap().kind,
        "ANSWER_REFUSED"
    );
    assert!(answer_outcome(&conn, "R1", "A3").unwrap().is_none());
    assert!(answer_outcome(&conn, "R2", "A1").unwrap().is_none(), "per run");
}

#[test]
fn pages_cover_every_run_once_and_the_first_carries_old_live_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = super::super::open_connection(&dir.path().join("a.db")).unwrap();
    super::super::migrations::migrate(&mut conn).unwrap();
    for i in 0..25 {
        let state = if i == 0 { RunState::Running } else { RunState::Succeeded };
        insert_run(&conn, &row(&format!("R{i:03}"), state)).unwrap();
    }
    let first = list_page(&conn, true, 10, None, &Only::default()).unwrap();
    assert_eq!(first.len(), 11, "10 newest + the old live run");
    assert_eq!(first[0].id, "R000");
    assert_eq!(first[0].args, vec!["a b".to_string()], "args round-trip");
    let mut seen: Vec<String> = first.iter().map(|r| r.id.clone()).collect();
    let mut before = first.iter().filter(|r| r.id != "R000").map(|r| r.id.clone()).min();
    while let Some(b) = before {
        let page = list_page(&conn, true, 10, Some(&b), &Only::default()).unwrap();
        before = (page.len() == 10).then(|| page[0].id.clone());
        seen.extend(page.into_iter().map(|r| r.id));
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 25);
    let live = list_page(&conn, false, 10, None, &Only::default()).unwrap();
    assert_eq!(live.len(), 1);
}

/// A long list reads former names, waiting prompts and working children
/// once for all its runs: each run gets what it gets read alone.
#[test]
fn a_long_list_gives_each_run_its_own_former_names_prompts_and_working_children() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = super::super::open_connection(&dir.path().join("a.db")).unwrap();
    super::super::migrations::migrate(&mut conn).unwrap();
    for i in 0..40 {
        let mut run = row(&format!("R{i:03}"), RunState::Running);
        if i % 10 == 9 {
            run.parent_run_id = Some(format!("R{:03}", i - 9));
            run.status = ActivityStatus::Working;
        }
        insert_run(&conn, &run).unwrap();
        if i % 7 == 0 {
            super::super::names::record_former(&conn, &run.id, &format!("old{i}")).unwrap();
            super::super::names::record_former(&conn, &run.id, &format!("older{i}")).unwrap();
        }
        if i % 5 == 0 {
            super::super::prompts::enqueue_prompt(&conn, &format!("P{i}"), &run.id, "hi").unwrap();
        }
    }
    let rows = list_older(&conn, false, 100, None, &Only::default()).unwrap();
    assert_eq!(rows.len(), 40);
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
    let waiting = super::super::prompts::waiting(&conn, &refs).unwrap();
    let working = working_children(&conn, &ids).unwrap();
    for run in &rows {
        let alone = get_run(&conn, &run.id).unwrap().unwrap();
        assert_eq!(run.former_names, alone.former_names, "{}", run.id);
        let own = super::super::prompts::waiting(&conn, &[run.id.as_str()]).unwrap();
        assert_eq!(waiting.get(&run.id), own.get(&run.id), "{}", run.id);
    }
    assert_eq!(get_run(&conn, "R014").unwrap().unwrap().former_names.len(), 2);
    assert_eq!(waiting.len(), 8, "every fifth run has a prompt waiting");
    assert_eq!(working.len(), 4, "every tenth run has a working child");
    assert_eq!(working.get("R030"), Some(&1));
}

/// `agents ls --state S --host H` and MCP's `runs_list`: the store keeps
/// only the runs asked for, newest first, the first page's old live runs
/// too.
#[test]
fn a_page_keeps_only_the_runs_in_the_states_and_on_the_host_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = super::super::open_connection(&dir.path().join("a.db")).unwrap();
    super::super::migrations::migrate(&mut conn).unwrap();
    for i in 0..20 {
        let state = match i {
            0 => RunState::Running,
            i if i % 2 == 0 => RunState::Succeeded,
            _ => RunState::Failed,
        };
        let mut run = row(&format!("R{i:03}"), state);
        if i % 5 == 0 {
            run.host = "box".into();
        }
        insert_run(&conn, &run).unwrap();
    }
    let ids = |rows: Vec<RunRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let failed = Only {
        states: vec![RunState::Failed],
        host: None,
    };
    let newest = list_page(&conn, true, 3, None, &failed).unwrap();
    assert_eq!(ids(newest), ["R015", "R017", "R019"]);
    let older = list_older(&conn, true, 100, Some("R015"), &failed).unwrap();
    assert_eq!(ids(older), ["R001", "R003", "R005", "R007", "R009", "R011", "R013"]);
    let on_box = Only {
        states: Vec::new(),
        host: Some("box".into()),
    };
    assert_eq!(
        ids(list_page(&conn, true, 2, None, &on_box).unwrap()),
        ["R000", "R010", "R015"],
        "the old live run is on box"
    );
    let here = Only {
        states: vec![RunState::Running],
        host: Some("local".into()),
    };
    assert!(list_page(&conn, true, 10, None, &here).unwrap().is_empty());
}

/// A run's end is written once: a second end (a late cancel, an end
/// recorded again after a restart) leaves the first reason and time, and a
/// reason past 4096 bytes is cut there (docs/design.md §3).
#[test]
fn an_end_is_written_once_with_its_reason_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = super::super::open_connection(&dir.path().join("a.db")).unwrap();
    super::super::migrations::migrate(&mut conn).unwrap();
    insert_run(&conn, &row("R1", RunState::Running)).unwrap();
    let ending = |reason: String, at: i64| Ending {
        state: RunState::Failed,
        exit_code: Some(1),
        signal: None,
        reason: Some(reason),
        output_bytes: None,
        event_kind: "RUN_ERROR",
        evidence: serde_json::Value::Null,
        ended_at: Some(at),
    };
    assert!(finish(&mut conn, "R1", &ending("é".repeat(5000), 10)).unwrap());
    let first = get_run(&conn, "R1").unwrap().unwrap();
    let reason = first.reason.clone().unwrap();
    assert!(
        reason.len() <= crate::text::MAX_DIAGNOSTIC && reason.starts_with("éé"),
        "{}",
        reason.len()
    );
    assert!(!finish(&mut conn, "R1", &ending("another end".into(), 20)).unwrap());
    let again = get_run(&conn, "R1").unwrap().unwrap();
    assert_eq!(
        (again.reason, again.ended_at, again.state),
        (first.reason, Some(10), RunState::Failed)
    );
}
