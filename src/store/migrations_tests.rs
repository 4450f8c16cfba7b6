//! Migrations (src/store/migrations.rs): every version to the latest,
//! each migration's data, the schema it makes, and the migrations
//! themselves, append-only.

use super::*;

fn tables(conn: &Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect()
}

/// A row for each table, put in at the migration that made the table with
/// the columns it had to have then, and what finds it again.
const ROWS: &[(i64, &str, &str, &str)] = &[
    (
        1,
        "runs",
        "INSERT INTO runs (id, name, harness, cwd, command, state, root_run_id, launch_id, created_at, rows, cols)
         VALUES ('r1', 'old', 'cmd', '/', '[\"true\"]', 'succeeded', 'r1', 'l1', 1, 40, 120)",
        "id = 'r1' AND name = 'old' AND state = 'succeeded'",
    ),
    (
        1,
        "attempts",
        "INSERT INTO attempts (run_id, n, harness, started_at) VALUES ('r1', 1, 'cmd', 1)",
        "run_id = 'r1' AND n = 1",
    ),
    (
        1,
        "sessions",
        "INSERT INTO sessions (id, harness, run_id, created_at) VALUES ('s1', 'claude', 'r1', 1)",
        "id = 's1' AND run_id = 'r1'",
    ),
    (
        1,
        "events",
        "INSERT INTO events (run_id, seq, kind, at, data) VALUES ('r1', 1, 'RUN_CREATED', 1, '{}')",
        "run_id = 'r1' AND seq = 1 AND kind = 'RUN_CREATED'",
    ),
    (
        2,
        "prompts",
        "INSERT INTO prompts (id, run_id, text, state, created_at) VALUES ('p1', 'r1', 'hi', 'delivered', 1)",
        "id = 'p1' AND text = 'hi' AND state = 'delivered'",
    ),
    (
        4,
        "transcript_sources",
        "INSERT INTO transcript_sources (path, session_id, format) VALUES ('/t.jsonl', 's1', 'claude')",
        "path = '/t.jsonl' AND session_id = 's1'",
    ),
    (
        4,
        "transcript_sessions",
        "INSERT INTO transcript_sessions (session_id, format) VALUES ('s1', 'claude')",
        "session_id = 's1'",
    ),
    (
        4,
        "transcript_messages",
        "INSERT INTO transcript_messages (session_id, source, offset, seq, role, text) VALUES ('s1', '/t.jsonl', 0, 0, 'user', 'hello')",
        "session_id = 's1' AND seq = 0 AND text = 'hello'",
    ),
    (
        5,
        "subagents",
        "INSERT INTO subagents (run_id, agent_id, started_at) VALUES ('r1', 'a1', 1)",
        "run_id = 'r1' AND agent_id = 'a1'",
    ),
    (
        6,
        "hosts",
        "INSERT INTO hosts (name, target, remote_bin, created_at) VALUES ('box', 'me@box', 'agents', 1)",
        "name = 'box' AND target = 'me@box'",
    ),
    (
        10,
        "transcript_usage",
        "INSERT INTO transcript_usage (session_id, source, output_tokens) VALUES ('s1', '/t.jsonl', 7)",
        "session_id = 's1' AND output_tokens = 7",
    ),
    (
        12,
        "mail",
        "INSERT INTO mail (id, version, from_name, to_run, thread, at, body, state)
         VALUES ('m1', 1, 'user', 'r1', 'm1', 1, 'hi', 'handed')",
        "id = 'm1' AND to_run = 'r1' AND state = 'handed'",
    ),
    (
        13,
        "teams",
        "INSERT INTO teams (id, name, definition, approvals, created_at) VALUES ('t1', 'review', '{}', 'user', 1)",
        "id = 't1' AND name = 'review'",
    ),
    (
        13,
        "team_members",
        "INSERT INTO team_members (team_id, member, run_id, is_leader, position) VALUES ('t1', 'lead', 'r1', 1, 0)",
        "team_id = 't1' AND member = 'lead' AND run_id = 'r1'",
    ),
    (
        14,
        "routines",
        "INSERT INTO routines (name, paused) VALUES ('nightly', 1)",
        "name = 'nightly' AND paused = 1",
    ),
    (
        15,
        "mail_outbox",
        "INSERT INTO mail_outbox (id, version, from_run, to_addr, thread, at, body) VALUES ('o1', 1, 'r1', 'lead', 'o1', 1, 'hi')",
        "id = 'o1' AND to_addr = 'lead'",
    ),
    (
        16,
        "former_names",
        "INSERT INTO former_names (run_id, name, until) VALUES ('r1', 'older', 1)",
        "run_id = 'r1' AND name = 'older'",
    ),
];

/// Each migration, from a database one version before it with a row in
/// every table that version has: every row is there after it, and after
/// every later one, as written.
#[test]
fn every_older_version_migrates_to_the_latest_and_keeps_a_row_of_every_table() {
    for start in 0..LATEST_VERSION {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agents.db");
        let had: Vec<_> = ROWS.iter().filter(|(made, ..)| *made <= start).collect();
        {
            let mut conn = super::super::open_connection(&path).unwrap();
            migrate_to(&mut conn, start).unwrap();
            for (_, table, insert, _) in &had {
                conn.execute(insert, [])
                    .unwrap_or_else(|e| panic!("{table} at version {start}: {e}"));
            }
        }
        let mut conn = super::super::open_connection(&path).unwrap();
        for version in start + 1..=LATEST_VERSION {
            migrate_to(&mut conn, version).unwrap_or_else(|e| panic!("{start} → {version}: {e}"));
            for (_, table, _, found_by) in &had {
                let found: i64 = conn
                    .query_row(&format!("SELECT COUNT(*) FROM {table} WHERE {found_by}"), [], |r| {
                        r.get(0)
                    })
                    .unwrap();
                assert_eq!(found, 1, "{table}'s row after migrating {start} → {version}");
            }
        }
        let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
        assert_eq!(version, LATEST_VERSION, "from version {start}");
    }
}

/// Every table of the latest schema has its row above (the full-text
/// index's own tables aside): a new table comes with its data test.
#[test]
fn every_table_has_a_row_that_goes_through_the_migrations() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = super::super::open_connection(&dir.path().join("agents.db")).unwrap();
    migrate(&mut conn).unwrap();
    let untested: Vec<String> = tables(&conn)
        .into_iter()
        .filter(|t| !t.starts_with("transcript_fts") && !ROWS.iter().any(|(_, table, ..)| table == t))
        .collect();
    assert!(untested.is_empty(), "tables without a row in ROWS: {untested:?}");
}

/// The schema every migration makes, as `sqlite_master` holds it, is the
/// one written in `schema.sql`: a change to it is a change to that file,
/// seen in review. `AGENTS_WRITE_SCHEMA=1` writes the file anew.
#[test]
fn the_latest_schema_is_the_one_written_down() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = super::super::open_connection(&dir.path().join("agents.db")).unwrap();
    migrate(&mut conn).unwrap();
    let mut stmt = conn
        .prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name")
        .unwrap();
    let made: Vec<String> = stmt
        .query_map([], |r| {
            let (kind, name, sql): (String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
            Ok(format!("-- {kind} {name}\n{sql};\n"))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let made = format!("-- user_version {LATEST_VERSION}\n{}", made.join("\n"));
    let written_at = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/schema.sql");
    if std::env::var_os("AGENTS_WRITE_SCHEMA").is_some() {
        std::fs::write(&written_at, &made).unwrap();
    }
    let written = std::fs::read_to_string(&written_at).unwrap_or_default();
    assert!(
        written == made,
        "the schema differs from src/store/schema.sql (AGENTS_WRITE_SCHEMA=1 cargo test the_latest_schema writes it):\n{made}"
    );
}

/// Released migrations are never edited or renumbered (13–15 once were, in
/// two merges): each one's hash is the one `migrations.lock` holds for its
/// number, and a new one adds its line there.
#[test]
fn migrations_are_append_only() {
    use sha2::{Digest, Sha256};
    let locked: Vec<(i64, &str)> = include_str!("migrations.lock")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (n, hash) = l.split_once(' ').expect("`N HASH`");
            (n.parse().expect("a number"), hash)
        })
        .collect();
    let now: Vec<(i64, String)> = MIGRATIONS
        .iter()
        .enumerate()
        .map(|(i, sql)| (i as i64 + 1, crate::text::hex(&Sha256::digest(sql.as_bytes()))))
        .collect();
    let lines: Vec<String> = now.iter().map(|(n, h)| format!("{n} {h}")).collect();
    assert_eq!(
        locked.iter().map(|(n, h)| (*n, h.to_string())).collect::<Vec<_>>(),
        now,
        "migrations.lock should read (a released line never changes):\n{}",
        lines.join("\n")
    );
}

#[test]
fn migration_8_indexes_launch_ids_on_a_database_at_version_7() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agents.db");
    let mut conn = super::super::open_connection(&path).unwrap();
    migrate_to(&mut conn, 7).unwrap();
    conn.execute(
        "INSERT INTO runs (id, name, harness, cwd, command, state, root_run_id, launch_id, created_at, rows, cols)
         VALUES ('r1', 'old', 'cmd', '/', '[\"true\"]', 'succeeded', 'r1', 'L1', 1, 40, 120)",
        [],
    )
    .unwrap();
    migrate_to(&mut conn, 8).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 8);
    let plan: Vec<String> = conn
        .prepare("EXPLAIN QUERY PLAN SELECT id FROM runs WHERE launch_id = ?1")
        .unwrap()
        .query_map(["L1"], |r| r.get(3))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(plan.iter().any(|step| step.contains("runs_by_launch")), "{plan:?}");
    assert_eq!(
        super::super::harness::run_for_launch(&conn, "L1").unwrap().as_deref(),
        Some("r1")
    );
}

#[test]
fn migration_18_makes_prompts_and_mail_left_by_ended_runs_undelivered() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agents.db");
    let mut conn = super::super::open_connection(&path).unwrap();
    migrate_to(&mut conn, 17).unwrap();
    conn.execute_batch(
        "INSERT INTO runs (id, name, harness, cwd, command, state, root_run_id, launch_id, created_at, rows, cols, ended_at)
         VALUES ('ended', 'a', 'cmd', '/', '[]', 'cancelled', 'ended', 'L1', 1, 40, 120, 50),
                ('live', 'b', 'cmd', '/', '[]', 'running', 'live', 'L2', 1, 40, 120, NULL);
         INSERT INTO prompts (id, run_id, text, state, created_at) VALUES
            ('p1', 'ended', 'left behind', 'queued', 10),
            ('p2', 'ended', 'typed', 'delivered', 11),
            ('p3', 'live', 'still waits', 'queued', 12);
         INSERT INTO mail (id, version, from_run, from_name, to_run, thread, at, body, state) VALUES
            ('m1', 1, NULL, 'user', 'ended', 'm1', 20, 'never handed', 'stored'),
            ('m2', 1, NULL, 'user', 'live', 'm2', 21, 'to hand', 'stored');",
    )
    .unwrap();
    migrate_to(&mut conn, 18).unwrap();
    let states: Vec<(String, String, Option<String>, Option<i64>)> = conn
        .prepare("SELECT id, state, reason, delivered_at FROM prompts ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        states,
        [
            (
                "m1".into(),
                "undelivered".into(),
                Some("the run ended".into()),
                Some(50)
            ),
            (
                "p1".into(),
                "undelivered".into(),
                Some("the run ended".into()),
                Some(50)
            ),
            ("p2".into(), "delivered".into(), None, None),
            ("p3".into(), "queued".into(), None, None),
        ]
    );
    let mail: Vec<(String, String)> = conn
        .prepare("SELECT id, state FROM mail ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(mail, [("m1".into(), "handed".into()), ("m2".into(), "stored".into())]);
}

#[test]
fn migration_10_keeps_each_files_tokens_under_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agents.db");
    let mut conn = super::super::open_connection(&path).unwrap();
    migrate_to(&mut conn, 9).unwrap();
    conn.execute(
        "INSERT INTO transcript_sources (path, session_id, run_id, format, agent_id, input_tokens,
            output_tokens, cache_read_tokens, cache_write_tokens)
         VALUES ('/t/a.jsonl', 'S', 'r1', 'claude', 'a1', 1, 2, 3, 4)",
        [],
    )
    .unwrap();
    migrate_to(&mut conn, 10).unwrap();
    let row: (String, String, Option<String>, Option<String>, [i64; 4]) = conn
        .query_row(
            "SELECT session_id, source, run_id, agent_id, input_tokens, output_tokens, cache_read_tokens,
                cache_write_tokens FROM transcript_usage",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    [r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?],
                ))
            },
        )
        .unwrap();
    assert_eq!(
        row,
        (
            "S".into(),
            "/t/a.jsonl".into(),
            Some("r1".into()),
            Some("a1".into()),
            [1, 2, 3, 4]
        )
    );
    let offset: i64 = conn
        .query_row(
            "SELECT offset FROM transcript_sources WHERE path = '/t/a.jsonl'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(offset, 0, "the file's row stays, without its tokens");
}

#[test]
fn a_database_from_a_newer_version_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agents.db");
    {
        let conn = super::super::open_connection(&path).unwrap();
        conn.pragma_update(None, "user_version", LATEST_VERSION + 5).unwrap();
    }
    let mut conn = super::super::open_connection(&path).unwrap();
    let err = migrate(&mut conn).unwrap_err();
    assert!(matches!(err, StoreError::TooNew { .. }), "{err}");
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, LATEST_VERSION + 5);
}
