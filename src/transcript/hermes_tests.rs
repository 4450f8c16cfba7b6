//! On rows as a real Hermes Agent 0.19.0 wrote them against a mock (the
//! columns read here, values copied from its `state.db`).

use super::*;

pub(crate) const SESSION: &str = "20261206_071149_9cd878";

/// Its tables (the columns read here) in `home`.
pub(crate) fn database(home: &Path) -> PathBuf {
    let db = home.join(DATABASE);
    std::fs::create_dir_all(home).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT,
            parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
            input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
            cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0, cwd TEXT);
         CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
            role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
            timestamp REAL NOT NULL, finish_reason TEXT);",
    )
    .unwrap();
    db
}

/// A turn with a `terminal` call approved and run, as Hermes stores it.
pub(crate) fn conversation(db: &Path, cwd: &Path, started: f64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute(
        "INSERT INTO sessions (id, source, model, started_at, input_tokens, output_tokens, cwd)
         VALUES (?1, 'cli', 'mock-model', ?2, 120, 21, ?3)",
        rusqlite::params![SESSION, started, cwd.to_string_lossy()],
    )
    .unwrap();
    let calls = r#"[{"id": "call_1", "call_id": "call_1", "response_item_id": "fc_1", "type": "function", "function": {"name": "terminal", "arguments": "{\"command\": \"touch perm-marker && chmod 666 perm-marker\"}"}}]"#;
    let result = r#"{"output": "", "exit_code": 0, "error": null, "approval": "Command required approval (world/other-writable permissions) and was approved by the user."}"#;
    let rows: [(&str, &str, Option<&str>, Option<&str>); 4] = [
        ("user", "SHELL please", None, None),
        ("assistant", "", None, Some(calls)),
        ("tool", result, Some("call_1"), None),
        ("assistant", "Ran it.", None, None),
    ];
    for (i, (role, content, call_id, calls)) in rows.iter().enumerate() {
        conn.execute(
            "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, timestamp)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            rusqlite::params![SESSION, role, content, call_id, calls, started + i as f64],
        )
        .unwrap();
    }
}

#[test]
fn a_session_s_rows_read_as_its_messages_with_the_call_and_its_result() {
    let home = tempfile::tempdir().unwrap();
    let db = database(home.path());
    conversation(&db, Path::new("/w"), 1_796_541_122.5);
    let (batch, done, more, totals) = read_session(&db, SESSION, 0).unwrap();
    assert_eq!((done, more), (4, false));
    let roles: Vec<Role> = batch.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant]);
    let call = &batch.messages[1].tool_calls[0];
    assert_eq!(call.name, "terminal");
    assert_eq!(call.id.as_deref(), Some("call_1"));
    assert_eq!(call.input["command"], "touch perm-marker && chmod 666 perm-marker");
    let result = batch.messages[2].tool_result.as_ref().unwrap();
    assert_eq!(result.tool_use_id.as_deref(), Some("call_1"));
    assert!(!result.is_error);
    assert_eq!(batch.messages[3].text, "Ran it.");
    assert_eq!(batch.messages[3].model.as_deref(), Some("mock-model"));
    assert_eq!(batch.messages[0].at_ms, Some(1_796_541_122_500));
    assert_eq!((totals.input, totals.output), (120, 21));
    assert_eq!(batch.session_id.as_deref(), Some(SESSION));
    // Nothing new after the rows read.
    let (again, done, ..) = read_session(&db, SESSION, 4).unwrap();
    assert!(again.messages.is_empty());
    assert_eq!(done, 4);
}

#[test]
fn a_refused_command_is_an_error_result() {
    let denied =
        r#"{"output": "", "exit_code": -1, "error": "BLOCKED: User denied this command.", "status": "blocked"}"#;
    let row = StoredMessage {
        role: "tool".into(),
        content: Some(denied.into()),
        ..StoredMessage::default()
    };
    let batch = parse(&[row], 0, None);
    assert!(batch.messages[0].tool_result.as_ref().unwrap().is_error);
}

#[test]
fn sources_name_a_state_db_and_a_hermes_session_id() {
    let key = source_key(Path::new("/h/.hermes/state.db"), SESSION);
    assert_eq!(
        split_source(&key),
        Some((PathBuf::from("/h/.hermes/state.db"), SESSION.to_string()))
    );
    assert_eq!(split_source(Path::new("/h/.hermes/state.db#ses_1")), None);
    assert_eq!(split_source(Path::new("/h/other.db#20261206_071149_9cd878")), None);
    assert!(!is_session_id("20261206_071149"));
}

#[test]
fn the_newest_session_of_the_cwd_since_a_time_is_found() {
    let home = tempfile::tempdir().unwrap();
    let db = database(home.path());
    conversation(&db, Path::new("/w"), 100.0);
    assert_eq!(newest_session(&db, Path::new("/w"), 99.0).as_deref(), Some(SESSION));
    assert_eq!(newest_session(&db, Path::new("/w"), 101.0), None);
    assert_eq!(newest_session(&db, Path::new("/elsewhere"), 99.0), None);
    assert!(has_session(&db, SESSION));
    assert!(!has_session(&db, "20261206_000000_abc"));
}
