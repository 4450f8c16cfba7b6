use std::path::Path;

use super::*;

const FIXTURE: &str = "tests/fixtures/transcripts/opencode/ses_dc9085082ffe86shbty0VfrLIZ.jsonl";
pub(crate) const SESSION: &str = "ses_dc9085082ffe86shbty0VfrLIZ";

pub(crate) fn recording() -> Vec<StoredMessage> {
    let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap();
    let (rows, stats) = parse_recording(&bytes);
    assert_eq!((stats.malformed, stats.unknown), (0, 0));
    rows
}

/// opencode 1.18.33's `message` and `part` tables (the columns it made),
/// holding the recorded rows.
pub(crate) fn database(dir: &Path, rows: &[StoredMessage]) -> PathBuf {
    let db = dir.join("opencode.db");
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode = WAL;
         CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
            time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
         CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
            time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);",
    )
    .unwrap();
    add_rows(&db, rows, 0);
    db
}

/// Writes `rows` into the session as its messages from the `first`th on,
/// as opencode does while the session goes on.
pub(crate) fn add_rows(db: &Path, rows: &[StoredMessage], first: usize) {
    let conn = rusqlite::Connection::open(db).unwrap();
    for (i, row) in (first..).zip(rows) {
        conn.execute(
            "INSERT INTO message VALUES (?1, ?2, ?3, ?3, ?4)",
            rusqlite::params![row.id, SESSION, i as i64, row.data],
        )
        .unwrap();
        for (j, part) in row.parts.iter().enumerate() {
            conn.execute(
                "INSERT INTO part VALUES (?1, ?2, ?3, 0, 0, ?4)",
                rusqlite::params![format!("prt_{i:03}{j:03}"), row.id, SESSION, part],
            )
            .unwrap();
        }
    }
}

#[test]
fn the_recorded_session_reads_as_prompts_replies_a_tool_call_and_its_result() {
    let read = parse(&recording(), 0, true);
    let said: Vec<(Role, &str)> = read.batch.messages.iter().map(|m| (m.role, m.text.as_str())).collect();
    assert_eq!(
        said,
        [
            (Role::User, "hello narwhal"),
            (Role::Assistant, "Mock reply to: hello narwhal"),
            (Role::User, "SHELL please"),
            (Role::Assistant, ""),
            (Role::Tool, "(no output)"),
            (Role::Assistant, "Ran it."),
        ]
    );
    let call = &read.batch.messages[3].tool_calls[0];
    assert_eq!(call.name, "bash");
    assert_eq!(call.id.as_deref(), Some("call_1"));
    assert_eq!(call.input["command"], "touch perm-marker");
    let result = read.batch.messages[4].tool_result.as_ref().unwrap();
    assert_eq!(result.tool_use_id.as_deref(), Some("call_1"));
    assert_eq!(read.batch.model.as_deref(), Some("mock-model"));
    // Two answered turns of 40 in and 7 out; the tool-call step had none.
    assert_eq!(
        read.batch.usage,
        Usage {
            input: 80,
            output: 14,
            cache_read: 0,
            cache_write: 0
        }
    );
    assert_eq!(read.records_done, 5);
    assert_eq!((read.batch.stats.malformed, read.batch.stats.unknown), (0, 0));
    assert!(read.batch.messages[1].at_ms.is_some());
}

#[test]
fn an_unfinished_last_message_is_provisional_and_counted_once_finished() {
    let mut rows = recording();
    // The last reply as it was while streaming: not completed yet.
    let last = rows.last_mut().unwrap();
    let mut data: Value = serde_json::from_str(&last.data).unwrap();
    data["time"].as_object_mut().unwrap().remove("completed");
    last.data = data.to_string();
    let read = parse(&rows, 0, false);
    assert_eq!(read.records_done, 4);
    assert_eq!(read.batch.provisional, 1);
    assert_eq!(read.batch.usage.output, 7, "its tokens wait until it is read for good");
    let again = parse(&recording()[4..], 4, false);
    assert_eq!((again.records_done, again.batch.provisional), (5, 0));
    assert_eq!(again.batch.usage.output, 7);
}

#[test]
fn damaged_rows_are_counted_and_skipped() {
    let mut rows = recording();
    rows[0].data = "{\"role\": ".into();
    rows[1].parts[1] = "not json".into();
    rows[2].data = r#"{"role": "narrator"}"#.into();
    let read = parse(&rows, 0, true);
    assert_eq!(read.batch.stats.malformed, 2);
    assert_eq!(read.batch.stats.unknown, 1);
    assert_eq!(
        read.batch.messages[0].text, "",
        "the reply's text part was the damaged one"
    );
    assert!(read.batch.messages.iter().any(|m| m.text == "Ran it."));
}

#[test]
fn a_session_is_read_from_the_database_in_steps_and_only_what_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let rows = recording();
    let db = database(dir.path(), &rows[..3]);
    let (first, more) = read_session(&db, SESSION, 0, false).unwrap();
    assert!(!more);
    assert_eq!(first.batch.session_id.as_deref(), Some(SESSION));
    // The third message, a prompt, is the last so far: provisional.
    assert_eq!((first.records_done, first.batch.provisional), (2, 1));
    add_rows(&db, &rows[3..], 3);
    let (next, _) = read_session(&db, SESSION, first.records_done, false).unwrap();
    assert_eq!(next.batch.messages[0].text, "SHELL please");
    assert_eq!(next.records_done, 5);
    assert!(next.batch.messages.iter().any(|m| m.text == "Ran it."));
    let whole = crate::transcript::read_file(&source_key(&db, SESSION), crate::transcript::Format::Opencode).unwrap();
    assert_eq!(whole.messages.len(), 6);
    assert_eq!(whole.provisional, 0);
}

#[test]
fn a_source_names_its_database_and_session() {
    let key = source_key(Path::new("/h/.local/share/opencode/opencode.db"), "ses_ab12");
    assert_eq!(
        split_source(&key),
        Some((PathBuf::from("/h/.local/share/opencode/opencode.db"), "ses_ab12".into()))
    );
    assert_eq!(
        crate::transcript::Format::detect(&key),
        Some(crate::transcript::Format::Opencode)
    );
    assert_eq!(split_source(Path::new("/h/notes#ses_1")), None);
    assert_eq!(split_source(Path::new("/h/opencode.db")), None);
}
