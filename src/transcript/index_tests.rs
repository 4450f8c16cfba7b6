//! Indexing: incremental reads, provisional blocks, replaced files, search.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::*;
use crate::store::transcripts as db;

const SESSION: &str = "11111111-2222-4333-8444-555555555555";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts")
}

fn fresh() -> (tempfile::TempDir, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let conn = crate::store::open_migrated(&dir.path().join("agents.db")).unwrap();
    (dir, conn)
}

/// A copy of the Claude fixture session (with its subagent) under `dir`.
fn claude_copy(dir: &Path) -> PathBuf {
    let project = dir.join("projects/-home-user-project");
    let subagents = project.join(SESSION).join("subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    let from = fixtures().join("claude");
    std::fs::copy(
        from.join(format!("{SESSION}.jsonl")),
        project.join(format!("{SESSION}.jsonl")),
    )
    .unwrap();
    for f in ["agent-a0b1c2d3e4f5a6b7c.jsonl", "agent-a0b1c2d3e4f5a6b7c.meta.json"] {
        std::fs::copy(from.join(SESSION).join("subagents").join(f), subagents.join(f)).unwrap();
    }
    project.join(format!("{SESSION}.jsonl"))
}

/// (session, seq, role, agent, snippet) of each hit.
type Hit = (String, i64, String, Option<String>, String);

fn words(conn: &Connection, query: &str) -> Vec<Hit> {
    db::search(conn, &db::plain_query(query), None, 10)
        .unwrap()
        .into_iter()
        .map(|h| (h.session_id, h.seq, h.role.as_str().to_string(), h.agent_id, h.snippet))
        .collect()
}

#[test]
fn a_session_and_its_subagent_are_indexed_with_totals() {
    let (dir, mut conn) = fresh();
    let path = claude_copy(dir.path());
    let report = index_transcript(&mut conn, &path, SESSION, None).unwrap();
    assert_eq!(report.files.len(), 2, "{report:?}");
    assert_eq!(report.messages, 12 + 2);
    let s = db::session(&conn, SESSION).unwrap().unwrap();
    assert_eq!(s.messages, 14);
    // Five responses in the session file and one in the subagent's.
    assert_eq!((s.tokens.input, s.tokens.output, s.tokens.cache_read), (60, 72, 120));
    assert_eq!(s.model.as_deref(), Some("claude-opus-4-8"));
    assert_eq!(s.sources.len(), 2);
    assert_eq!(s.sources[1].agent_id.as_deref(), Some("a0b1c2d3e4f5a6b7c"));
    let all = db::messages(&conn, SESSION, None, 100).unwrap();
    let seqs: Vec<i64> = all.iter().map(|m| m.seq).collect();
    assert_eq!(seqs, (0..14).collect::<Vec<_>>());
    // Indexing again finds nothing new.
    let again = index_transcript(&mut conn, &path, SESSION, None).unwrap();
    assert_eq!(again.messages, 0);
}

#[test]
fn search_finds_words_of_assistant_messages_and_tool_results() {
    let (dir, mut conn) = fresh();
    index_transcript(&mut conn, &claude_copy(dir.path()), SESSION, Some("run-1")).unwrap();
    let hits = words(&conn, "flamingo");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].2, "assistant");
    assert!(hits[0].4.contains("«flamingo»"), "{:?}", hits[0]);
    let hits = words(&conn, "zebrafish");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].2, "tool");
    let hits = words(&conn, "okapi.txt");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].3.as_deref(), Some("a0b1c2d3e4f5a6b7c"));
    assert!(words(&conn, "nonexistentword").is_empty());
    // Punctuation in a plain query is literal, never FTS syntax.
    assert!(words(&conn, "parser::zebrafish").len() == 1);
    let hit = &db::search(&conn, &db::plain_query("flamingo"), None, 10).unwrap()[0];
    assert_eq!(hit.run_id.as_deref(), Some("run-1"));
}

#[test]
fn subagent_messages_are_linked_to_the_parent_tool_call() {
    let (dir, mut conn) = fresh();
    index_transcript(&mut conn, &claude_copy(dir.path()), SESSION, None).unwrap();
    let all = db::messages(&conn, SESSION, None, 100).unwrap();
    let call = all
        .iter()
        .find(|m| m.tool_calls.iter().any(|c| c.name == "Agent"))
        .expect("the Agent call");
    let call_id = call.tool_calls[0].id.clone().unwrap();
    let side: Vec<_> = all.iter().filter(|m| m.sidechain).collect();
    assert_eq!(side.len(), 2);
    for m in &side {
        assert_eq!(m.parent_tool_use_id.as_deref(), Some(call_id.as_str()));
        assert_eq!(m.agent_id.as_deref(), Some("a0b1c2d3e4f5a6b7c"));
    }
    // And from the other side: the call's result names the agent.
    let result = all
        .iter()
        .find(|m| m.tool_result.as_ref().and_then(|r| r.tool_use_id.as_deref()) == Some(call_id.as_str()))
        .unwrap();
    assert_eq!(
        result.tool_result.as_ref().unwrap().agent_id.as_deref(),
        Some("a0b1c2d3e4f5a6b7c")
    );
}

#[test]
fn appended_lines_are_indexed_once_and_a_partial_line_waits() {
    let (dir, mut conn) = fresh();
    let source = std::fs::read(fixtures().join(format!("claude/{SESSION}.jsonl"))).unwrap();
    let lines: Vec<&[u8]> = source.split_inclusive(|b| *b == b'\n').collect();
    let path = dir.path().join(format!("{SESSION}.jsonl"));
    let mut f = std::fs::File::create(&path).unwrap();
    register(&mut conn, &path, SESSION, None, None).unwrap();

    // Half the lines, then half of the next line.
    let half = lines.len() / 2;
    for l in &lines[..half] {
        f.write_all(l).unwrap();
    }
    let cut = lines[half].len() / 2;
    f.write_all(&lines[half][..cut]).unwrap();
    catch_up(&mut conn, &path).unwrap();
    let first = db::messages(&conn, SESSION, None, 100).unwrap().len();
    let src = db::get_source(&conn, &key(&path)).unwrap().unwrap();
    assert_eq!(
        src.offset as usize,
        lines[..half].iter().map(|l| l.len()).sum::<usize>()
    );
    assert_eq!(
        src.stats.malformed, 0,
        "a partial line is not malformed, only unfinished"
    );

    // Nothing new: nothing stored.
    assert!(!catch_up(&mut conn, &path).unwrap().changed);

    f.write_all(&lines[half][cut..]).unwrap();
    for l in &lines[half + 1..] {
        f.write_all(l).unwrap();
    }
    catch_up(&mut conn, &path).unwrap();
    let all = db::messages(&conn, SESSION, None, 100).unwrap();
    assert!(first < all.len());
    assert_eq!(all.len(), 12);
    assert_eq!(
        all.iter().map(|m| m.seq).collect::<Vec<_>>(),
        (0..12).collect::<Vec<_>>()
    );
    let whole =
        crate::transcript::read_file(&fixtures().join(format!("claude/{SESSION}.jsonl")), Format::Claude).unwrap();
    let texts: Vec<&str> = all.iter().map(|m| m.text.as_str()).collect();
    let expected: Vec<&str> = whole.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, expected);
    // The split response was cut between reads: still counted once.
    let s = db::session(&conn, SESSION).unwrap().unwrap();
    assert_eq!((s.tokens.input, s.tokens.output), (50, 60));
}

#[test]
fn damaged_lines_are_counted_on_the_source() {
    let (_dir, mut conn) = fresh();
    let path = fixtures().join("claude/damaged.jsonl");
    index_transcript(&mut conn, &path, "damaged", None).unwrap();
    let s = db::session(&conn, "damaged").unwrap().unwrap();
    // The last line has no newline yet: it waits, as in a live file.
    assert_eq!(s.messages, 2);
    assert_eq!((s.sources[0].malformed, s.sources[0].unknown), (3, 1));
}

#[test]
fn a_replaced_file_is_indexed_again_from_scratch() {
    let (dir, mut conn) = fresh();
    let path = dir.path().join("s.jsonl");
    let line = |uuid: &str, text: &str| {
        format!(
            "{{\"type\":\"user\",\"uuid\":\"{uuid}\",\"sessionId\":\"s\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}}}}\n"
        )
    };
    std::fs::write(&path, line("a", "old words") + &line("b", "more old words")).unwrap();
    index_transcript(&mut conn, &path, "s", None).unwrap();
    // A new file at the same path (a new inode).
    let tmp = dir.path().join("s.new");
    std::fs::write(&tmp, line("c", "brand new")).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    catch_up(&mut conn, &path).unwrap();
    let all = db::messages(&conn, "s", None, 100).unwrap();
    assert_eq!(all.iter().map(|m| m.text.as_str()).collect::<Vec<_>>(), ["brand new"]);
    assert_eq!(db::session(&conn, "s").unwrap().unwrap().messages, 1);
    assert!(words(&conn, "old").is_empty());
}

#[test]
fn an_aider_reply_still_being_written_is_replaced_not_duplicated() {
    let (dir, mut conn) = fresh();
    let path = dir.path().join(".aider.chat.history.md");
    std::fs::write(&path, "#### hello\n\nFirst half of the reply.\n").unwrap();
    index_transcript(&mut conn, &path, "aider-1", None).unwrap();
    let texts = |conn: &Connection| -> Vec<String> {
        db::messages(conn, "aider-1", None, 100)
            .unwrap()
            .into_iter()
            .map(|m| m.text)
            .collect()
    };
    assert_eq!(texts(&conn), ["hello", "First half of the reply."]);
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"\nSecond half.\n\n> Tokens: 1k sent, 20 received.\n")
        .unwrap();
    catch_up(&mut conn, &path).unwrap();
    assert_eq!(
        texts(&conn),
        [
            "hello",
            "First half of the reply.\n\nSecond half.",
            "Tokens: 1k sent, 20 received."
        ]
    );
    f.write_all(b"#### thanks\n").unwrap();
    catch_up(&mut conn, &path).unwrap();
    assert_eq!(texts(&conn).len(), 4);
    let s = db::session(&conn, "aider-1").unwrap().unwrap();
    assert_eq!((s.messages, s.tokens.input, s.tokens.output), (4, 1000, 20));
    let seqs: Vec<i64> = db::messages(&conn, "aider-1", None, 100)
        .unwrap()
        .iter()
        .map(|m| m.seq)
        .collect();
    assert_eq!(seqs, [0, 1, 2, 3]);
}

#[test]
fn a_gemini_chat_that_grows_adds_only_its_new_messages() {
    let (dir, mut conn) = fresh();
    let chats = dir.path().join(".gemini/tmp/narwhal/chats");
    std::fs::create_dir_all(&chats).unwrap();
    let path = chats.join("session-2026-11-29T11-52-33573076.jsonl");
    let whole = std::fs::read_to_string(fixtures().join("gemini/session-2026-11-29T11-52-33573076.jsonl")).unwrap();
    // Up to the first version of the `list_directory` reply, which is
    // written again with its tool call and result.
    let cut: usize = whole.split_inclusive('\n').take(10).map(str::len).sum();
    std::fs::write(&path, &whole[..cut]).unwrap();
    index_transcript(&mut conn, &path, "g", None).unwrap();
    let first = db::messages(&conn, "g", None, 100).unwrap();
    assert_eq!(first.last().unwrap().text, "Looking.");
    assert!(first.last().unwrap().tool_calls.is_empty());
    std::fs::write(&path, &whole).unwrap();
    catch_up(&mut conn, &path).unwrap();
    let all = db::messages(&conn, "g", None, 100).unwrap();
    assert_eq!(all.len(), 13);
    assert_eq!(all.iter().filter(|m| m.text == "Looking.").count(), 1);
    assert_eq!(all[4].tool_calls[0].name, "list_directory");
    assert_eq!(all.last().unwrap().text, "Mock reply to: back again");
}

#[test]
fn a_run_named_later_is_filled_in_on_messages_already_read() {
    let (dir, mut conn) = fresh();
    let path = claude_copy(dir.path());
    index_transcript(&mut conn, &path, SESSION, None).unwrap();
    index_transcript(&mut conn, &path, SESSION, Some("run-9")).unwrap();
    let all = db::messages(&conn, SESSION, None, 100).unwrap();
    assert!(all.iter().all(|m| m.run_id.as_deref() == Some("run-9")));
    assert_eq!(
        db::session(&conn, SESSION).unwrap().unwrap().run_id.as_deref(),
        Some("run-9")
    );
}

#[test]
fn codex_and_unknown_formats() {
    let (_dir, mut conn) = fresh();
    let rollout = fixtures().join("codex/rollout-2026-11-29T07-47-04-01a22645-9705-7352-9a7c-e05a97022f2e.jsonl");
    let r = index_transcript(&mut conn, &rollout, "01a22645", None).unwrap();
    assert_eq!(r.messages, 10);
    assert_eq!(words(&conn, "capybara").len(), 1);
    assert_eq!(words(&conn, "wombat.rs")[0].2, "tool");
    let err = index_transcript(&mut conn, Path::new("/tmp/notes.txt"), "x", None).unwrap_err();
    assert!(matches!(err, IndexError::UnknownFormat(_)), "{err}");
}

#[test]
fn an_aider_history_is_read_from_each_sessions_chat_and_handed_to_the_later_one() {
    let (dir, mut conn) = fresh();
    let path = dir.path().join(".aider.chat.history.md");
    let first = "# aider chat started at 2026-11-29 11:54:26\n\n#### first  \n\nOne.\n\n";
    std::fs::write(&path, format!("#### before any agents run  \n\n{first}")).unwrap();
    let key = PathBuf::from(super::key(&path));
    let session = |n: usize| {
        let bytes = std::fs::read(&path).unwrap();
        crate::transcript::aider::session_id(&key, &crate::transcript::aider::chats(&bytes)[n])
    };
    let texts = |conn: &Connection, s: &str| -> Vec<String> {
        db::messages(conn, s, None, 100)
            .unwrap()
            .into_iter()
            .map(|m| m.text)
            .collect()
    };
    let s1 = session(0);
    index_transcript(&mut conn, &path, &s1, Some("r1")).unwrap();
    assert_eq!(texts(&conn, &s1), ["first", "One."]);

    let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(b"# aider chat started at 2026-11-29 12:01:09\n\n#### second  \n\nTwo.\n")
        .unwrap();
    let s2 = session(1);
    index_transcript(&mut conn, &path, &s2, Some("r2")).unwrap();
    assert_eq!(texts(&conn, &s2), ["second", "Two."]);
    assert_eq!(texts(&conn, &s1), ["first", "One."], "the first session keeps its chat");
    assert_eq!(db::session_of_run(&conn, "r2").unwrap().as_deref(), Some(s2.as_str()));

    // The earlier session named again does not take the file back.
    index_transcript(&mut conn, &path, &s1, Some("r1")).unwrap();
    f.write_all(b"\n#### more  \n").unwrap();
    catch_up(&mut conn, &path).unwrap();
    assert_eq!(texts(&conn, &s2), ["second", "Two.", "more"]);
    assert_eq!(texts(&conn, &s1), ["first", "One."]);
}

#[test]
fn a_crush_session_in_its_database_is_indexed_once_and_its_tokens_by_their_growth() {
    use crate::transcript::crush::{self, tests as rows};
    let (dir, mut conn) = fresh();
    let db = rows::database(dir.path());
    rows::conversation(&db, 1_796_000_000);
    let source = crush::source_key(&db, rows::SESSION);
    index_transcript(&mut conn, &source, rows::SESSION, None).unwrap();
    let s = db::session(&conn, rows::SESSION).unwrap().unwrap();
    assert_eq!((s.messages, s.tokens.input, s.tokens.output), (4, 80, 14));
    // The streaming reply finishes and the session's totals grow.
    let crush_db = rusqlite::Connection::open(&db).unwrap();
    crush_db
        .execute_batch(
            "UPDATE messages SET parts = '[{\"type\":\"text\",\"data\":{\"text\":\"Ran it, done.\"}}]',
                finished_at = created_at WHERE id = 'm3';
             UPDATE sessions SET prompt_tokens = 120, completion_tokens = 21;",
        )
        .unwrap();
    catch_up(&mut conn, &source).unwrap();
    let s = db::session(&conn, rows::SESSION).unwrap().unwrap();
    assert_eq!((s.messages, s.tokens.input, s.tokens.output), (4, 120, 21));
    let all = db::messages(&conn, rows::SESSION, None, 100).unwrap();
    assert_eq!(all.last().unwrap().text, "Ran it, done.");
    assert!(
        !all.iter().any(|m| m.text == "Ran it."),
        "the provisional reply was replaced"
    );
    // Nothing changed: nothing read, nothing counted again.
    let again = catch_up(&mut conn, &source).unwrap();
    assert!(!again.changed);
    assert_eq!(db::session(&conn, rows::SESSION).unwrap().unwrap().tokens.input, 120);
}

#[test]
fn an_opencode_session_in_its_database_is_indexed_as_it_grows_and_once() {
    use crate::transcript::opencode::{self, tests as rows};
    let (dir, mut conn) = fresh();
    let recorded = rows::recording();
    let db = dir.path().join("opencode.db");
    let source = opencode::source_key(&db, rows::SESSION);
    // Registered before opencode made its database: nothing to read yet.
    let report = index_transcript(&mut conn, &source, rows::SESSION, None).unwrap();
    assert_eq!(report.messages, 0);
    assert!(
        db::session(&conn, rows::SESSION)
            .unwrap()
            .is_none_or(|s| s.messages == 0)
    );
    rows::database(dir.path(), &recorded[..3]);
    // opencode holds its database open while it runs, so its log stays.
    let opencode = rusqlite::Connection::open(&db).unwrap();
    opencode
        .query_row("SELECT count(*) FROM message", [], |_| Ok(()))
        .unwrap();
    assert!(catch_up(&mut conn, &source).unwrap().changed);
    let first = db::session(&conn, rows::SESSION).unwrap().unwrap().messages;
    assert!(first > 0);
    rows::add_rows(&db, &recorded[3..], 3);
    assert!(catch_up(&mut conn, &source).unwrap().changed);
    let whole = crate::transcript::read_file(&source, Format::Opencode).unwrap();
    let s = db::session(&conn, rows::SESSION).unwrap().unwrap();
    assert_eq!(
        s.messages,
        whole.messages.len() as i64,
        "the provisional prompt was not counted twice"
    );
    assert_eq!(s.tokens, whole.usage);
    // Nothing changed: nothing read.
    assert!(!catch_up(&mut conn, &source).unwrap().changed);
}

#[test]
fn a_droid_session_s_tokens_are_the_growth_of_the_settings_file_beside_it() {
    let (dir, mut conn) = fresh();
    let id = "5d74fe8e-c559-46da-954f-bb811ddde92e";
    let folder = dir.path().join(".factory/sessions/-tmp-clis-ws2");
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join(format!("{id}.jsonl"));
    std::fs::copy(fixtures().join(format!("droid/{id}.jsonl")), &path).unwrap();
    let settings = crate::transcript::droid::settings_file(&path);
    std::fs::copy(fixtures().join(format!("droid/{id}.settings.json")), &settings).unwrap();
    index_transcript(&mut conn, &path, id, None).unwrap();
    let s = db::session(&conn, id).unwrap().unwrap();
    assert_eq!((s.messages, s.tokens.input, s.tokens.output), (7, 44, 12));
    // Droid rewrites only its settings file (a title's call): counted once.
    let grown = r#"{"tokenUsage":{"inputTokens":50,"outputTokens":15,"cacheReadTokens":4}}"#;
    std::fs::write(&settings, grown).unwrap();
    assert!(catch_up(&mut conn, &path).unwrap().changed);
    let s = db::session(&conn, id).unwrap().unwrap();
    assert_eq!(
        (s.messages, s.tokens.input, s.tokens.output, s.tokens.cache_read),
        (7, 50, 15, 4)
    );
    assert!(
        !catch_up(&mut conn, &path).unwrap().changed,
        "nothing new, nothing counted again"
    );
    assert_eq!(db::session(&conn, id).unwrap().unwrap().tokens.input, 50);
}

#[test]
fn an_auggie_session_replaced_at_each_exchange_adds_only_what_is_new() {
    let (dir, mut conn) = fresh();
    let sessions = dir.path().join(".augment/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let name = "7940b1a3-83cb-4dfb-8ef2-4cb5387f434a.json";
    let path = sessions.join(name);
    let whole: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("auggie").join(name)).unwrap()).unwrap();
    // Written as Auggie writes it: a new file put in place of the old.
    let put = |doc: &serde_json::Value| {
        let next = sessions.join("next.tmp");
        std::fs::write(&next, doc.to_string()).unwrap();
        std::fs::rename(&next, &path).unwrap();
    };
    // The second exchange still running.
    let mut doc = whole.clone();
    doc["chatHistory"].as_array_mut().unwrap().truncate(2);
    doc["chatHistory"][1]["completed"] = false.into();
    doc["chatHistory"][1]["exchange"]["response_text"] = "The command".into();
    put(&doc);
    assert_eq!(Format::detect(&path), Some(Format::Auggie));
    index_transcript(&mut conn, &path, "a", None).unwrap();
    let texts = |conn: &Connection| -> Vec<String> {
        db::messages(conn, "a", None, 100)
            .unwrap()
            .into_iter()
            .map(|m| m.text)
            .collect()
    };
    assert_eq!(texts(&conn).last().unwrap(), "The command");
    put(&whole);
    catch_up(&mut conn, &path).unwrap();
    let all = texts(&conn);
    assert_eq!(all.len(), 6, "{all:?}");
    assert_eq!(all.iter().filter(|t| t.starts_with("The command")).count(), 1);
    assert_eq!(all.last().unwrap(), "Hello from the mock.");
    // Summarized: the history is no longer what was read, and is read again.
    let mut cut = whole.clone();
    cut["chatHistory"].as_array_mut().unwrap().drain(..2);
    put(&cut);
    catch_up(&mut conn, &path).unwrap();
    assert_eq!(texts(&conn), ["say hello again", "Hello from the mock."]);
}

/// A run's files as the index totals them, read back through
/// `store::usage` (what `transcript::usage` sums).
mod run_tokens {
    use rusqlite::params;

    use super::*;
    use crate::store::usage::{run_sources, runs_sources};
    use crate::transcript::Usage;

    fn fixture(rel: &str) -> PathBuf {
        fixtures().join(rel)
    }

    #[test]
    fn codex_tokens_come_from_the_files_totals_and_its_model_from_the_messages() {
        let (_dir, mut conn) = fresh();
        let path = fixture("codex/rollout-2026-11-29T07-47-04-01a22645-9705-7352-9a7c-e05a97022f2e.jsonl");
        index_transcript(&mut conn, &path, "s-codex", Some("r1")).unwrap();
        let session = crate::store::transcripts::session(&conn, "s-codex").unwrap().unwrap();
        assert!(!session.tokens.is_zero(), "the fixture reports token counts");

        let sources = run_sources(&conn, "r1").unwrap();
        assert_eq!(sources.len(), 1);
        assert_eq!(sources[0].tokens, session.tokens);
        assert_eq!(sources[0].messages, session.messages);
        assert_eq!(sources[0].session_model, session.model);
        assert_eq!(
            sources[0].models,
            [session.model.clone().expect("Codex names its model")]
        );
        assert!(run_sources(&conn, "r2").unwrap().is_empty());
    }

    #[test]
    fn a_session_indexed_before_its_run_was_known_counts_for_the_run() {
        let (_dir, mut conn) = fresh();
        let path = fixture("codex/rollout-2026-11-29T07-47-04-01a22645-9705-7352-9a7c-e05a97022f2e.jsonl");
        index_transcript(&mut conn, &path, "s-early", None).unwrap();
        conn.execute(
            "INSERT INTO runs (id, name, harness, cwd, command, state, root_run_id, session_id, launch_id,
                created_at, rows, cols)
             VALUES ('r1', 'r1', 'codex', '/', '[]', 'running', 'r1', 's-early', 'l1', 0, 24, 80)",
            [],
        )
        .unwrap();
        let sources = run_sources(&conn, "r1").unwrap();
        assert_eq!(sources.len(), 1);
        assert!(!sources[0].tokens.is_zero());
    }

    #[test]
    fn a_list_of_runs_gets_in_one_query_what_each_run_gets_alone() {
        let (_dir, mut conn) = fresh();
        let codex = fixture("codex/rollout-2026-11-29T07-47-04-01a22645-9705-7352-9a7c-e05a97022f2e.jsonl");
        let claude = fixture("claude/11111111-2222-4333-8444-555555555555.jsonl");
        let subagent = fixture("claude/11111111-2222-4333-8444-555555555555/subagents/agent-a0b1c2d3e4f5a6b7c.jsonl");
        index_transcript(&mut conn, &codex, "s-early", None).unwrap();
        index_transcript(&mut conn, &claude, "s-claude", Some("r2")).unwrap();
        index_transcript(&mut conn, &subagent, "s-claude", Some("r2")).unwrap();
        conn.execute(
            "INSERT INTO runs (id, name, harness, cwd, command, state, root_run_id, session_id, launch_id,
                created_at, rows, cols)
             VALUES ('r1', 'r1', 'codex', '/', '[]', 'running', 'r1', 's-early', 'l1', 0, 24, 80),
                    ('r2', 'r2', 'claude', '/', '[]', 'running', 'r2', 's-claude', 'l2', 0, 24, 80),
                    ('r3', 'r3', 'claude', '/', '[]', 'running', 'r3', NULL, 'l3', 0, 24, 80)",
            [],
        )
        .unwrap();
        let ids = ["r1", "r2", "r3", "r4"].map(String::from);
        let all = runs_sources(&conn, &ids).unwrap();
        assert_eq!(all.len(), 2, "r3 has no files and r4 is no run");
        for id in ["r1", "r2"] {
            let mut alone = run_sources(&conn, id).unwrap();
            let mut listed = all[id].clone();
            for s in alone.iter_mut().chain(listed.iter_mut()) {
                s.models.sort();
                s.messages = 0;
            }
            assert_eq!(listed, alone, "{id}");
        }
        assert_eq!(all["r2"].len(), 2, "the session's file and its subagent's");
    }

    #[test]
    fn each_aider_run_keeps_the_tokens_of_its_own_chat_when_a_later_run_takes_the_history_over() {
        let (dir, mut conn) = fresh();
        let path = dir.path().join(".aider.chat.history.md");
        let key = std::path::PathBuf::from(crate::transcript::index::key(&path));
        let session = |n: usize| {
            let bytes = std::fs::read(&path).unwrap();
            crate::transcript::aider::session_id(&key, &crate::transcript::aider::chats(&bytes)[n])
        };
        std::fs::write(
            &path,
            "# aider chat started at 2026-11-29 11:54:26\n\n#### first  \n\nOne.\n\n\
             > Tokens: 700 sent, 9 received.  \n\n",
        )
        .unwrap();
        let s1 = session(0);
        index_transcript(&mut conn, &path, &s1, Some("r1")).unwrap();
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        std::io::Write::write_all(
            &mut f,
            b"# aider chat started at 2026-11-29 12:01:09\n\n#### second  \n\nTwo.\n\n\
              > Tokens: 2.5k sent, 40 received.  \n",
        )
        .unwrap();
        // The first run's transcript read before the second run's session
        // is known: its chat ends where the second begins.
        crate::transcript::index::catch_up(&mut conn, &path).unwrap();
        let s2 = session(1);
        index_transcript(&mut conn, &path, &s2, Some("r2")).unwrap();
        conn.execute(
            "INSERT INTO runs (id, name, harness, cwd, command, state, root_run_id, session_id, launch_id,
                created_at, rows, cols)
             VALUES ('r1', 'r1', 'aider', '/', '[]', 'succeeded', 'r1', ?1, 'l1', 0, 24, 80),
                    ('r2', 'r2', 'aider', '/', '[]', 'running', 'r2', ?2, 'l2', 0, 24, 80)",
            params![s1, s2],
        )
        .unwrap();
        let tokens = |input, output| Usage {
            input,
            output,
            ..Usage::default()
        };
        let all = runs_sources(&conn, &["r1".into(), "r2".into()]).unwrap();
        for (run, expected, messages) in [("r1", tokens(700, 9), 3), ("r2", tokens(2500, 40), 3)] {
            let alone = run_sources(&conn, run).unwrap();
            assert_eq!(alone.len(), 1, "{run}: {alone:?}");
            assert_eq!(alone[0].tokens, expected, "{run}");
            assert_eq!(alone[0].messages, messages, "{run}");
            assert_eq!(all[run].len(), 1, "{run}");
            assert_eq!(all[run][0].tokens, expected, "{run}");
        }
    }
}

#[test]
fn a_letta_conversation_rewritten_whole_keeps_the_finished_reply_and_its_tokens() {
    let (dir, mut conn) = fresh();
    let folder = dir.path().join(".letta/lc-local-backend/conversations/ZGVmYXVsdA");
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join("messages.jsonl");
    let whole = std::fs::read_to_string(fixtures().join("letta/messages.jsonl")).unwrap();
    let lines: Vec<&str> = whole.lines().collect();
    // As Letta Code writes it while the last reply streams in: that reply
    // built from its chunks, with neither model nor tokens.
    let mut streaming: serde_json::Value = serde_json::from_str(lines[lines.len() - 1]).unwrap();
    streaming["model"] = "local".into();
    streaming["usage"] = serde_json::json!({ "input": 0, "output": 0, "totalTokens": 0 });
    let mut first = lines[..lines.len() - 1].join("\n");
    first.push('\n');
    first.push_str(&format!("{streaming}\n"));
    // Written whole each time, into the same file (`writeFileSync`).
    let write = |text: &str| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .create(true)
            .open(&path)
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    };
    write(&first);
    index_transcript(&mut conn, &path, "l", None).unwrap();
    let before = db::session(&conn, "l").unwrap().unwrap();
    write(&whole);
    catch_up(&mut conn, &path).unwrap();
    let after = db::session(&conn, "l").unwrap().unwrap();
    assert_eq!(after.messages, before.messages, "the reply is not counted twice");
    assert_eq!(
        after.tokens.output,
        3 * 7,
        "the finished reply's tokens too: {:?}",
        after.tokens
    );
    let last = db::messages(&conn, "l", None, 100).unwrap().pop().unwrap();
    assert_eq!(last.model.as_deref(), Some("mock-model"));
}
