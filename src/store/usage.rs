//! A run's transcript files with the token totals the index keeps on them
//! (`transcript_usage`, per session and file, filled as each batch is
//! stored) and the models their messages name: what `transcript::usage`
//! sums. Two small queries, no transcript read again.
//!
//! Per session and file, not per file: aider's one history file holds a
//! chat of each run in the repository, and a later run's session takes the
//! file over; each run keeps the tokens of its own chat.

use std::collections::HashMap;

use rusqlite::{Connection, Row, params};

use super::StoreError;
use crate::transcript::Usage;
use crate::transcript::usage::SourceTokens;

/// The four token counts in the columns from `first` on: input, output,
/// cache read, cache write.
pub(super) fn tokens_at(r: &Row<'_>, first: usize) -> rusqlite::Result<Usage> {
    Ok(Usage {
        input: r.get(first)?,
        output: r.get(first + 1)?,
        cache_read: r.get(first + 2)?,
        cache_write: r.get(first + 3)?,
    })
}

/// The files indexed for a run: those read under it, and those of its
/// session read before the run was known.
pub fn run_sources(conn: &Connection, run_id: &str) -> Result<Vec<SourceTokens>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT u.source, u.session_id, u.agent_id, u.input_tokens, u.output_tokens,
            u.cache_read_tokens, u.cache_write_tokens, ts.model
         FROM transcript_usage u LEFT JOIN transcript_sessions ts ON ts.session_id = u.session_id
         WHERE u.run_id = ?1
            OR (u.run_id IS NULL AND u.session_id = (SELECT session_id FROM runs WHERE id = ?1))
         ORDER BY u.agent_id IS NOT NULL, u.source, u.session_id",
    )?;
    let rows = stmt.query_map([run_id], |r| {
        Ok((
            r.get::<_, String>(1)?,
            SourceTokens {
                path: r.get(0)?,
                agent_id: r.get(2)?,
                tokens: tokens_at(r, 3)?,
                messages: 0,
                models: Vec::new(),
                session_model: r.get(7)?,
            },
        ))
    })?;
    let mut sources = Vec::new();
    let mut sessions_of: Vec<String> = Vec::new();
    let mut sessions: Vec<String> = Vec::new();
    for row in rows {
        let (session, source) = row?;
        if !sessions.contains(&session) {
            sessions.push(session.clone());
        }
        sessions_of.push(session);
        sources.push(source);
    }
    // Messages and models per file: one pass over the session's messages,
    // through the `(session_id, seq)` index.
    let by_file: HashMap<(String, String), usize> = sources
        .iter()
        .zip(&sessions_of)
        .enumerate()
        .map(|(i, (s, session))| ((session.clone(), s.path.clone()), i))
        .collect();
    let mut stmt = conn.prepare_cached(
        "SELECT source, model, COUNT(*) FROM transcript_messages WHERE session_id = ?1 GROUP BY source, model",
    )?;
    for session in &sessions {
        let rows = stmt.query_map(params![session], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        for row in rows {
            let (path, model, n) = row?;
            let Some(&i) = by_file.get(&(session.clone(), path)) else {
                continue;
            };
            let s = &mut sources[i];
            s.messages += n;
            if let Some(m) = model {
                s.models.push(m);
            }
        }
    }
    Ok(sources)
}

/// Every step goes through an index (migrations 9, 10): runs by id, files by
/// run and by session, and each file's models from the partial index on
/// `(session_id, source, model)` without reading a message. Named with
/// `INDEXED BY`: without statistics the planner may prefer the unique
/// `(session_id, seq)` index, which reads every message's row.
const RUNS_SOURCES: &str = "WITH page(id, session_id) AS (
        SELECT r.id, r.session_id FROM json_each(?1) j JOIN runs r ON r.id = j.value
    ),
    files(run_id, path, session_id, agent_id, i, o, cr, cw) AS (
        SELECT u.run_id, u.source, u.session_id, u.agent_id, u.input_tokens, u.output_tokens,
            u.cache_read_tokens, u.cache_write_tokens
        FROM transcript_usage u INDEXED BY transcript_usage_by_run WHERE u.run_id IN (SELECT id FROM page)
        UNION ALL
        SELECT p.id, u.source, u.session_id, u.agent_id, u.input_tokens, u.output_tokens,
            u.cache_read_tokens, u.cache_write_tokens
        FROM page p JOIN transcript_usage u ON u.session_id = p.session_id AND u.run_id IS NULL
    ),
    models(session_id, source, model) AS (
        SELECT DISTINCT session_id, source, model FROM transcript_messages INDEXED BY transcript_messages_models
        WHERE session_id IN (SELECT session_id FROM files) AND model IS NOT NULL
    )
    SELECT f.run_id, f.path, f.agent_id, f.i, f.o, f.cr, f.cw, ts.model, m.model, f.session_id
    FROM files f
    LEFT JOIN transcript_sessions ts ON ts.session_id = f.session_id
    LEFT JOIN models m ON m.session_id = f.session_id AND m.source = f.path
    ORDER BY f.run_id, f.agent_id IS NOT NULL, f.path, f.session_id";

/// The files of many runs in one query (`runs.list`): each run's files as
/// `run_sources` finds them, with their models but not their message counts
/// (left 0: only the totals are listed). A run without files is absent.
pub fn runs_sources(conn: &Connection, runs: &[String]) -> Result<HashMap<String, Vec<SourceTokens>>, StoreError> {
    let ids = serde_json::json!(runs).to_string();
    let mut stmt = conn.prepare_cached(RUNS_SOURCES)?;
    let rows = stmt.query_map([ids], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(9)?,
            SourceTokens {
                path: r.get(1)?,
                agent_id: r.get(2)?,
                tokens: tokens_at(r, 3)?,
                messages: 0,
                models: r.get::<_, Option<String>>(8)?.into_iter().collect(),
                session_model: r.get(7)?,
            },
        ))
    })?;
    let mut by_run: HashMap<String, Vec<SourceTokens>> = HashMap::new();
    let mut last_file: Option<(String, String, String)> = None;
    for row in rows {
        let (run, session, source) = row?;
        let file = (run.clone(), session, source.path.clone());
        let sources = by_run.entry(run).or_default();
        // One row per model of a file (of a session), in a row: fold them
        // into the file.
        match sources.last_mut() {
            Some(last) if last_file.as_ref() == Some(&file) => last.models.extend(source.models),
            _ => sources.push(source),
        }
        last_file = Some(file);
    }
    Ok(by_run)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::transcript::index::index_transcript;

    fn fixture(rel: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/transcripts")
            .join(rel)
    }

    fn fresh() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open_migrated(&dir.path().join("agents.db")).unwrap();
        (dir, conn)
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

    #[test]
    fn listing_tokens_reads_no_transcript_table_whole() {
        let (_dir, conn) = fresh();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {RUNS_SOURCES}"))
            .unwrap()
            .query_map(["[\"r1\"]"], |r| r.get(3))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(
            plan.iter()
                .any(|s| s.contains("COVERING INDEX transcript_messages_models")),
            "{plan:#?}"
        );
        assert!(plan.iter().any(|s| s.contains("transcript_usage_by_run")), "{plan:#?}");
        assert!(
            !plan.iter().any(|s| s.starts_with("SCAN") && s.contains("transcript_")),
            "{plan:#?}"
        );
    }
}
