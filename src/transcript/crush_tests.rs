//! On rows shaped as Crush's own migrations and message code make them (no
//! real Crush ran here: see the module's note).

use super::*;

/// The tables of Crush's migrations (the columns read here), in a project's
/// `.crush` folder.
pub(crate) fn database(dir: &Path) -> PathBuf {
    let db = dir.join(".crush/crush.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
            message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
            updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT);
         CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
            parts TEXT NOT NULL default '[]', model TEXT, created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL, finished_at INTEGER, provider TEXT,
            is_summary_message INTEGER DEFAULT 0 NOT NULL);",
    )
    .unwrap();
    db
}

pub(crate) const SESSION: &str = "5b7f2a4e-0c1d-4e6f-9a8b-1c2d3e4f5a6b";

/// A turn with a `bash` call and its result, as Crush's message service
/// stores it: user, assistant (text + tool call + finish), tool (result),
/// assistant (text + finish).
pub(crate) fn conversation(db: &Path, created: i64) {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.execute(
        "INSERT INTO sessions (id, title, prompt_tokens, completion_tokens, updated_at, created_at)
         VALUES (?1, 'New Session', 80, 14, ?2, ?2)",
        rusqlite::params![SESSION, created],
    )
    .unwrap();
    let call = serde_json::json!({ "id": "call_1", "name": "bash",
        "input": r#"{"command":"touch perm-marker"}"#, "provider_executed": false, "finished": true });
    let rows = [
        (
            "user",
            serde_json::json!([{ "type": "text", "data": { "text": "SHELL please" } }]),
            None,
            true,
        ),
        (
            "assistant",
            serde_json::json!([
                { "type": "reasoning", "data": { "thinking": "a shell it is" } },
                { "type": "tool_call", "data": call },
                { "type": "finish", "data": { "reason": "tool_use", "time": created } },
            ]),
            Some("mock-model"),
            true,
        ),
        (
            "tool",
            serde_json::json!([{ "type": "tool_result", "data": { "tool_call_id": "call_1", "name": "bash",
                "content": "(no output)", "is_error": false } }]),
            None,
            true,
        ),
        (
            "assistant",
            serde_json::json!([{ "type": "text", "data": { "text": "Ran it." } }]),
            Some("mock-model"),
            false,
        ),
    ];
    for (i, (role, parts, model, finished)) in rows.iter().enumerate() {
        conn.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, finished_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)",
            rusqlite::params![
                format!("m{i}"),
                SESSION,
                role,
                parts.to_string(),
                model,
                created,
                finished.then_some(created)
            ],
        )
        .unwrap();
    }
}

#[test]
fn a_session_reads_as_its_prompt_the_call_its_result_and_the_reply() {
    let dir = tempfile::tempdir().unwrap();
    let db = database(dir.path());
    conversation(&db, 1_796_000_000);
    let (read, more, totals) = read_session(&db, SESSION, 0, false).unwrap();
    assert!(!more);
    let said: Vec<(Role, &str)> = read.batch.messages.iter().map(|m| (m.role, m.text.as_str())).collect();
    assert_eq!(
        said,
        [
            (Role::User, "SHELL please"),
            (Role::Assistant, ""),
            (Role::Tool, "(no output)"),
            (Role::Assistant, "Ran it."),
        ]
    );
    let call = &read.batch.messages[1].tool_calls[0];
    assert_eq!((call.name.as_str(), call.id.as_deref()), ("bash", Some("call_1")));
    assert_eq!(call.input["command"], "touch perm-marker");
    assert_eq!(
        read.batch.messages[2]
            .tool_result
            .as_ref()
            .unwrap()
            .tool_use_id
            .as_deref(),
        Some("call_1")
    );
    assert_eq!(read.batch.messages[0].at_ms, Some(1_796_000_000_000));
    assert_eq!(read.batch.model.as_deref(), Some("mock-model"));
    // The last reply is still streaming: provisional, read again next time.
    assert_eq!((read.records_done, read.batch.provisional), (3, 1));
    assert_eq!(totals, session_usage(80, 14));
    assert!(has_session(&db, SESSION));
    assert!(!has_session(&db, "nope"));
}

#[test]
fn damaged_parts_and_unknown_roles_are_counted_and_skipped() {
    let rows = [
        StoredMessage {
            role: "user".into(),
            parts: "[{\"type\": ".into(),
            ..StoredMessage::default()
        },
        StoredMessage {
            role: "narrator".into(),
            parts: "[]".into(),
            ..StoredMessage::default()
        },
        StoredMessage {
            role: "assistant".into(),
            parts: r#"[{"type": "hologram", "data": {}}, {"type": "text", "data": {"text": "still here"}}]"#.into(),
            finished: true,
            ..StoredMessage::default()
        },
    ];
    let read = parse(&rows, 0, false);
    assert_eq!((read.batch.stats.malformed, read.batch.stats.unknown), (1, 2));
    assert_eq!(read.batch.messages.len(), 1);
    assert_eq!(read.batch.messages[0].text, "still here");
    assert_eq!(read.records_done, 3, "a finished last message is read for good");
}

#[test]
fn a_source_names_its_project_database_and_session() {
    let key = source_key(Path::new("/src/app/.crush/crush.db"), SESSION);
    assert_eq!(
        split_source(&key),
        Some((PathBuf::from("/src/app/.crush/crush.db"), SESSION.to_string()))
    );
    assert_eq!(
        crate::transcript::Format::detect(&key),
        Some(crate::transcript::Format::Crush)
    );
    assert_eq!(split_source(Path::new("/src/app/notes.db#x")), None);
}
