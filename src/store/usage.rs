//! A run's transcript files with the token totals the index keeps on them
//! (`transcript_sources`, filled as each batch is stored) and the models
//! their messages name: what `transcript::usage` sums. Two small queries,
//! no transcript read again.

use std::collections::HashMap;

use rusqlite::{Connection, params};

use super::StoreError;
use crate::transcript::Usage;
use crate::transcript::usage::SourceTokens;

/// The files indexed for a run: those registered under it, and those of its
/// session registered before the run was known.
pub fn run_sources(conn: &Connection, run_id: &str) -> Result<Vec<SourceTokens>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.path, s.session_id, s.agent_id, s.input_tokens, s.output_tokens,
            s.cache_read_tokens, s.cache_write_tokens, ts.model
         FROM transcript_sources s LEFT JOIN transcript_sessions ts ON ts.session_id = s.session_id
         WHERE s.run_id = ?1
            OR (s.run_id IS NULL AND s.session_id = (SELECT session_id FROM runs WHERE id = ?1))
         ORDER BY s.agent_id IS NOT NULL, s.path",
    )?;
    let rows = stmt.query_map([run_id], |r| {
        Ok((
            r.get::<_, String>(1)?,
            SourceTokens {
                path: r.get(0)?,
                agent_id: r.get(2)?,
                tokens: Usage {
                    input: r.get(3)?,
                    output: r.get(4)?,
                    cache_read: r.get(5)?,
                    cache_write: r.get(6)?,
                },
                messages: 0,
                models: Vec::new(),
                session_model: r.get(7)?,
            },
        ))
    })?;
    let mut sources = Vec::new();
    let mut sessions: Vec<String> = Vec::new();
    for row in rows {
        let (session, source) = row?;
        if !sessions.contains(&session) {
            sessions.push(session);
        }
        sources.push(source);
    }
    // Messages and models per file: one pass over the session's messages,
    // through the `(session_id, seq)` index.
    let by_path: HashMap<String, usize> = sources.iter().enumerate().map(|(i, s)| (s.path.clone(), i)).collect();
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
            let Some(&i) = by_path.get(&path) else { continue };
            let s = &mut sources[i];
            s.messages += n;
            if let Some(m) = model {
                s.models.push(m);
            }
        }
    }
    Ok(sources)
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
}
