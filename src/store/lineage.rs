//! Lineage in the store (docs/design.md §7): the edges between runs — parent runs,
//! subagents, resume-of, fork-of and rerun-of (`RESUME_OF` / `FORK_OF` /
//! `RERUN_OF` events on the new run, naming the session and the run it came
//! from) — assembled into a session's record and the tree around a run.

use std::collections::{HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde_json::Value;

use super::runs::{self, RunRow};
use super::{Store, StoreError, format_ms};
use crate::api::{
    Edge, Lineage, LineageNode, Relation, RunSubagent, SessionDetail, SessionRun, SessionTotals, SubagentRecord,
};

/// How deep a tree goes and how many nodes it holds before it is cut: far
/// beyond any real agent team, small enough for one frame.
const MAX_DEPTH: usize = 64;
const MAX_NODES: usize = 2000;

/// The longest title kept, in characters.
const TITLE_CHARS: usize = 80;

/// `store.lineage()`: a session's record and the tree around a run.
pub struct Lineages<'a>(&'a Store);

impl Store {
    pub fn lineage(&self) -> Lineages<'_> {
        Lineages(self)
    }
}

impl Lineages<'_> {
    /// See [`set_subagent_description`].
    pub async fn set_subagent_description(&self, run: &str, agent: &str, description: &str) -> Result<(), StoreError> {
        let (run, agent, description) = (run.to_string(), agent.to_string(), description.to_string());
        self.0
            .call(move |c| set_subagent_description(c, &run, &agent, &description))
            .await
    }

    pub async fn session(&self, session: &str) -> Result<Option<SessionDetail>, StoreError> {
        let session = session.to_string();
        self.0.call(move |c| session_detail(c, &session)).await
    }

    pub async fn around(&self, run: &str) -> Result<Option<Lineage>, StoreError> {
        let run = run.to_string();
        self.0.call(move |c| lineage(c, &run)).await
    }

    /// The subagents of the runs named (full ids).
    pub async fn subagents_of(&self, runs: Vec<String>) -> Result<Vec<RunSubagent>, StoreError> {
        self.0.call(move |c| subagents_of(c, &runs)).await
    }
}

/// A run's own lineage edge: how it came from an earlier run's session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEdge {
    pub relation: Relation,
    pub session: Option<String>,
    pub from_run: Option<String>,
    /// `native` or `reconstructed` (resumes only).
    pub mode: Option<String>,
}

/// Every resume and fork edge, by the run that was started.
fn session_edges(conn: &Connection) -> Result<HashMap<String, SessionEdge>, StoreError> {
    // The same terms as the partial index `events_lineage`, so it is used.
    let mut stmt = conn.prepare(
        "SELECT run_id, kind, data FROM events WHERE kind IN ('RESUME_OF', 'FORK_OF', 'RERUN_OF') ORDER BY run_id, seq",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?))
    })?;
    let mut edges = HashMap::new();
    for row in rows {
        let (run, kind, data) = row?;
        edges.entry(run).or_insert_with(|| parse_edge(&kind, &data));
    }
    Ok(edges)
}

fn parse_edge(kind: &str, data: &str) -> SessionEdge {
    let data: Value = serde_json::from_str(data).unwrap_or(Value::Null);
    let text = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_string);
    let relation = match kind {
        "FORK_OF" => Relation::ForkOf,
        "RERUN_OF" => Relation::RerunOf,
        _ => Relation::ResumeOf,
    };
    SessionEdge {
        relation,
        session: text("session"),
        from_run: text("run"),
        mode: (relation == Relation::ResumeOf).then(|| text("mode").unwrap_or_else(|| "native".into())),
    }
}

/// A run's resume or fork edge, if it has one.
pub fn edge_of(conn: &Connection, run: &str) -> Result<Option<SessionEdge>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT kind, data FROM events WHERE run_id = ?1 AND kind IN ('RESUME_OF', 'FORK_OF', 'RERUN_OF') ORDER BY seq LIMIT 1",
            [run],
            |r| Ok(parse_edge(&r.get::<_, String>(0)?, &r.get::<_, String>(1)?)),
        )
        .optional()?)
}

fn subagent_from_row(r: &Row<'_>) -> rusqlite::Result<RunSubagent> {
    Ok(RunSubagent {
        run_id: r.get(0)?,
        subagent: SubagentRecord {
            agent_id: r.get(1)?,
            agent_type: r.get(2)?,
            session_id: r.get(3)?,
            transcript_path: r.get(4)?,
            started_at: format_ms(r.get(5)?),
            ended_at: r.get::<_, Option<i64>>(6)?.map(format_ms),
            description: r.get(7)?,
        },
    })
}

const SUBAGENT_COLUMNS: &str =
    "run_id, agent_id, agent_type, session_id, transcript_path, started_at, ended_at, description";

/// The subagents of these runs, oldest first within each run.
pub fn subagents_of(conn: &Connection, run_ids: &[String]) -> Result<Vec<RunSubagent>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {SUBAGENT_COLUMNS} FROM subagents WHERE run_id = ?1 ORDER BY started_at, agent_id"
    ))?;
    let mut out = Vec::new();
    for id in run_ids {
        for row in stmt.query_map([id], subagent_from_row)? {
            out.push(row?);
        }
    }
    Ok(out)
}

/// Records the task a subagent was given, once known (its `.meta.json`).
pub fn set_subagent_description(
    conn: &Connection,
    run: &str,
    agent: &str,
    description: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE subagents SET description = ?3 WHERE run_id = ?1 AND agent_id = ?2",
        params![run, agent, crate::text::bounded(description, 200)],
    )?;
    Ok(())
}

/// One session as its own record: its runs (how each relates to it), the
/// conversation's totals when indexed, and the subagents of its runs.
pub fn session_detail(conn: &Connection, session: &str) -> Result<Option<SessionDetail>, StoreError> {
    let Some((harness, transcript_path, created_at)) = conn
        .query_row(
            "SELECT harness, transcript_path, created_at FROM sessions WHERE id = ?1",
            [session],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            },
        )
        .optional()?
    else {
        return Ok(None);
    };
    let edges = session_edges(conn)?;
    let rows = session_runs(conn, session, &edges)?;
    let runs: Vec<SessionRun> = rows.iter().map(|r| session_run(r, edges.get(&r.id))).collect();

    let indexed = conn
        .query_row(
            "SELECT messages, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, model, first_at, last_at
             FROM transcript_sessions WHERE session_id = ?1",
            [session],
            |r| {
                Ok((
                    SessionTotals {
                        messages: r.get(0)?,
                        input_tokens: r.get(1)?,
                        output_tokens: r.get(2)?,
                        cache_read_tokens: r.get(3)?,
                        cache_write_tokens: r.get(4)?,
                        model: r.get(5)?,
                    },
                    r.get::<_, Option<i64>>(6)?,
                    r.get::<_, Option<i64>>(7)?,
                ))
            },
        )
        .optional()?;
    let title: Option<String> = conn
        .query_row(
            "SELECT text FROM transcript_messages WHERE session_id = ?1 AND role = 'user' AND sidechain = 0
             AND text != '' ORDER BY seq LIMIT 1",
            [session],
            |r| r.get(0),
        )
        .optional()?
        .map(|t: String| title_of(&t));

    let first_seen = std::iter::once(created_at)
        .chain(indexed.as_ref().and_then(|i| i.1))
        .chain(rows.iter().map(|r| r.created_at))
        .min()
        .unwrap_or(created_at);
    let last_seen = std::iter::once(created_at)
        .chain(indexed.as_ref().and_then(|i| i.2))
        .chain(
            rows.iter()
                .flat_map(|r| [Some(r.created_at), r.started_at, r.ended_at])
                .flatten(),
        )
        .max()
        .unwrap_or(created_at);
    let run_ids: Vec<String> = rows
        .iter()
        .filter(|r| r.session_id.as_deref() == Some(session))
        .map(|r| r.id.clone())
        .collect();
    let transcript_exists = transcript_path
        .as_deref()
        .is_some_and(|p| std::path::Path::new(p).is_file());
    Ok(Some(SessionDetail {
        id: session.to_string(),
        harness,
        cwd: rows.last().map(|r| r.cwd.clone()),
        title,
        transcript_path,
        transcript_exists,
        first_seen: format_ms(first_seen),
        last_seen: format_ms(last_seen),
        totals: indexed.map(|i| i.0),
        runs,
        subagents: subagents_of(conn, &run_ids)?,
    }))
}

/// The runs of a session: those that held it, and those started from it (a
/// fork, or a resume that had to begin a new conversation), oldest first.
fn session_runs(
    conn: &Connection,
    session: &str,
    edges: &HashMap<String, SessionEdge>,
) -> Result<Vec<RunRow>, StoreError> {
    let mut ids: Vec<String> = conn
        .prepare("SELECT id FROM runs WHERE session_id = ?1 ORDER BY created_at, id")?
        .query_map([session], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for (run, edge) in edges {
        if edge.session.as_deref() == Some(session) && !ids.contains(run) {
            ids.push(run.clone());
        }
    }
    let mut rows: Vec<RunRow> = Vec::new();
    for id in &ids {
        if let Some(row) = runs::get_run(conn, id)? {
            rows.push(row);
        }
    }
    rows.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
    Ok(rows)
}

/// A run as a session's detail lists it: how it came to the session.
fn session_run(r: &RunRow, edge: Option<&SessionEdge>) -> SessionRun {
    SessionRun {
        id: r.id.clone(),
        name: r.name.clone(),
        state: r.state,
        created_at: format_ms(r.created_at),
        started_at: r.started_at.map(format_ms),
        ended_at: r.ended_at.map(format_ms),
        relation: edge.map_or(Relation::Started, |e| e.relation),
        from_run: edge.and_then(|e| e.from_run.clone()),
        resume_mode: edge.and_then(|e| e.mode.clone()),
    }
}

/// A prompt's first line, cut to a title.
fn title_of(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let mut title: String = line.chars().take(TITLE_CHARS).collect();
    if line.chars().count() > TITLE_CHARS {
        title.push('…');
    }
    title
}

/// The tree around `focus`: up its ancestors (parent runs, and the runs
/// whose session it resumed or forked) to the root, then every descendant
/// of the root — child runs, subagents, resumes and forks.
pub fn lineage(conn: &Connection, focus: &str) -> Result<Option<Lineage>, StoreError> {
    let Some(focus_row) = runs::get_run(conn, focus)? else {
        return Ok(None);
    };
    let edges = session_edges(conn)?;
    let lineage_parent = |row: &RunRow| -> Option<String> {
        row.parent_run_id
            .clone()
            .or_else(|| edges.get(&row.id).and_then(|e| e.from_run.clone()))
    };
    let mut root = focus_row;
    let mut seen = HashSet::from([root.id.clone()]);
    while let Some(up) = lineage_parent(&root) {
        if seen.len() > MAX_DEPTH || !seen.insert(up.clone()) {
            break;
        }
        match runs::get_run(conn, &up)? {
            Some(row) => root = row,
            None => break,
        }
    }
    // Runs started from each run's session, by the run they came from.
    let mut from: HashMap<&str, Vec<(&str, &SessionEdge)>> = HashMap::new();
    for (run, edge) in &edges {
        if let Some(src) = edge.from_run.as_deref() {
            from.entry(src).or_default().push((run.as_str(), edge));
        }
    }
    let mut budget = Budget {
        left: MAX_NODES,
        cut: 0,
    };
    let mut visited = HashSet::new();
    let tree = node(conn, &root, Edge::Root, None, &from, &mut visited, &mut budget, 0)?;
    Ok(Some(Lineage {
        focus: focus.to_string(),
        root: tree,
        truncated: budget.cut,
    }))
}

struct Budget {
    left: usize,
    cut: usize,
}

#[allow(clippy::too_many_arguments)] // one recursive walk; a struct would only rename them
fn node(
    conn: &Connection,
    row: &RunRow,
    edge: Edge,
    mode: Option<String>,
    from: &HashMap<&str, Vec<(&str, &SessionEdge)>>,
    visited: &mut HashSet<String>,
    budget: &mut Budget,
    depth: usize,
) -> Result<LineageNode, StoreError> {
    visited.insert(row.id.clone());
    budget.left = budget.left.saturating_sub(1);
    let mut children = Vec::new();
    if depth < MAX_DEPTH {
        // (created_at, id, edge, resume mode)
        let mut next: Vec<(RunRow, Edge, Option<String>)> = runs::children(conn, &row.id)?
            .into_iter()
            .map(|c| (c, Edge::Child, None))
            .collect();
        for (run, e) in from.get(row.id.as_str()).into_iter().flatten() {
            if let Some(r) = runs::get_run(conn, run)?
                && r.parent_run_id.is_none()
            {
                let kind = match e.relation {
                    Relation::ForkOf => Edge::ForkOf,
                    Relation::RerunOf => Edge::RerunOf,
                    _ => Edge::ResumeOf,
                };
                next.push((r, kind, e.mode.clone()));
            }
        }
        next.sort_by(|a, b| (a.0.created_at, &a.0.id).cmp(&(b.0.created_at, &b.0.id)));
        for sub in subagents_of(conn, std::slice::from_ref(&row.id))? {
            if budget.left == 0 {
                budget.cut += 1;
                continue;
            }
            budget.left -= 1;
            let s = sub.subagent;
            children.push(LineageNode {
                edge: Edge::Subagent,
                name: s.agent_type.clone().unwrap_or_else(|| "subagent".into()),
                state: if s.ended_at.is_some() { "done" } else { "running" }.into(),
                harness: None,
                session_id: s.session_id,
                description: s.description,
                resume_mode: None,
                detached: false,
                children: Vec::new(),
                id: s.agent_id,
            });
        }
        for (child, kind, mode) in next {
            if visited.contains(&child.id) {
                continue;
            }
            if budget.left == 0 {
                budget.cut += 1;
                continue;
            }
            children.push(node(conn, &child, kind, mode, from, visited, budget, depth + 1)?);
        }
    }
    Ok(LineageNode {
        edge,
        id: row.id.clone(),
        name: row.name.clone(),
        state: row.state.as_str().to_string(),
        harness: Some(row.harness.clone()),
        session_id: row.session_id.clone(),
        description: None,
        resume_mode: mode,
        detached: row.detached,
        children,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn db() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = super::super::open_connection(&dir.path().join("a.db")).unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        (dir, conn)
    }

    fn add(conn: &Connection, id: &str, parent: Option<&str>, session: Option<&str>, at: i64) {
        conn.execute(
            "INSERT INTO runs (id, name, harness, cwd, command, state, root_run_id, launch_id, created_at, rows, cols, parent_run_id, session_id)
             VALUES (?1, ?1, 'claude', '/w', '[]', 'succeeded', ?1, ?1, ?2, 40, 120, ?3, ?4)",
            params![id, at, parent, session],
        )
        .unwrap();
        if let Some(s) = session {
            conn.execute(
                "INSERT OR IGNORE INTO sessions (id, harness, run_id, created_at) VALUES (?1, 'claude', ?2, ?3)",
                params![s, id, at],
            )
            .unwrap();
        }
    }

    fn names(n: &LineageNode, depth: usize, out: &mut Vec<String>) {
        out.push(format!("{}{} {}", "  ".repeat(depth), n.edge.as_str(), n.name));
        for c in &n.children {
            names(c, depth + 1, out);
        }
    }

    #[test]
    fn the_tree_climbs_to_the_root_and_holds_children_subagents_resumes_and_forks() {
        let (_d, conn) = db();
        add(&conn, "A", None, Some("S1"), 1);
        add(&conn, "B", Some("A"), None, 2);
        add(&conn, "C", None, Some("S1"), 3);
        add(&conn, "D", None, Some("S2"), 4);
        runs::append_event(&conn, "C", "RESUME_OF", &json!({"session": "S1", "run": "A"})).unwrap();
        runs::append_event(
            &conn,
            "D",
            "FORK_OF",
            &json!({"session": "S1", "run": "C", "mode": "native"}),
        )
        .unwrap();
        conn.execute(
            "INSERT INTO subagents (run_id, agent_id, agent_type, started_at) VALUES ('B', 'a1', 'general-purpose', 5)",
            [],
        )
        .unwrap();
        set_subagent_description(&conn, "B", "a1", "List the files").unwrap();

        let tree = lineage(&conn, "D").unwrap().unwrap();
        assert_eq!(tree.focus, "D");
        let mut lines = Vec::new();
        names(&tree.root, 0, &mut lines);
        assert_eq!(
            lines,
            [
                "root A",
                "  child B",
                "    subagent general-purpose",
                "  resume-of C",
                "    fork-of D"
            ]
        );
        let sub = &tree.root.children[0].children[0];
        assert_eq!(sub.description.as_deref(), Some("List the files"));
        assert_eq!(tree.root.children[1].resume_mode.as_deref(), Some("native"));
        assert!(lineage(&conn, "nope").unwrap().is_none());
    }

    #[test]
    fn a_session_lists_its_runs_with_how_each_came_to_it() {
        let (_d, conn) = db();
        add(&conn, "A", None, Some("S1"), 1);
        add(&conn, "C", None, Some("S1"), 3);
        add(&conn, "E", None, Some("S3"), 5);
        runs::append_event(&conn, "C", "RESUME_OF", &json!({"session": "S1", "run": "A"})).unwrap();
        runs::append_event(
            &conn,
            "E",
            "RESUME_OF",
            &json!({"session": "S1", "run": "C", "mode": "reconstructed"}),
        )
        .unwrap();
        let s = session_detail(&conn, "S1").unwrap().unwrap();
        let got: Vec<(String, Relation, Option<String>)> = s
            .runs
            .iter()
            .map(|r| (r.id.clone(), r.relation, r.resume_mode.clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("A".to_string(), Relation::Started, None),
                ("C".to_string(), Relation::ResumeOf, Some("native".to_string())),
                ("E".to_string(), Relation::ResumeOf, Some("reconstructed".to_string())),
            ]
        );
        assert!(s.totals.is_none(), "not indexed");
        assert!(!s.transcript_exists);
        assert!(session_detail(&conn, "S9").unwrap().is_none());
    }

    #[test]
    fn titles_are_the_first_line_cut_short() {
        assert_eq!(title_of("\n  fix the tests\nplease"), "fix the tests");
        let long = "x".repeat(100);
        assert_eq!(title_of(&long).chars().count(), TITLE_CHARS + 1);
    }
}
