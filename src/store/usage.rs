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
use crate::values::transcript::Usage;

/// One transcript file of a run, as the index totals it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceTokens {
    pub path: String,
    /// Set for a subagent's file.
    pub agent_id: Option<String>,
    pub tokens: Usage,
    pub messages: i64,
    /// The models its messages name.
    pub models: Vec<String>,
    /// The model its session last named (the fallback when no message of
    /// the file names one, as in aider's history).
    pub session_model: Option<String>,
}

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
    use super::*;

    fn fresh() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let conn = crate::store::open_migrated(&dir.path().join("agents.db")).unwrap();
        (dir, conn)
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
