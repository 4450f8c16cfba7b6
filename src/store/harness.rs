//! What the harness layer records beside a run: its attempt (family,
//! version, profile), its session and transcript, its subagents, and its
//! name once taken from a prompt. Hooks feed most of it (`hooks.report`).

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use super::runs::{self, append_event};
use super::{Store, StoreError, format_ms, now_ms};
use crate::api::{HookReport, SubagentRecord};

/// A run's name was given by the user and never changes.
pub const NAME_GIVEN: &str = "given";
/// A placeholder (`claude-3`) that the first prompt replaces.
pub const NAME_PLACEHOLDER: &str = "harness";
/// Taken from the first prompt.
pub const NAME_FROM_PROMPT: &str = "prompt";

/// How a run was launched, written with its record before spawn.
pub struct Launched<'a> {
    pub family: &'a str,
    pub version: Option<&'a str>,
    pub profile: Option<&'a str>,
    pub name_source: &'static str,
    /// The session id known before spawn, and its transcript's path.
    pub session: Option<(&'a str, Option<&'a str>)>,
}

pub fn record_launch(conn: &Connection, run: &str, l: &Launched) -> Result<(), StoreError> {
    conn.execute(
        "INSERT OR IGNORE INTO attempts (run_id, n, harness, version, profile, started_at) VALUES (?1, 1, ?2, ?3, ?4, ?5)",
        params![run, l.family, l.version, l.profile, now_ms()],
    )?;
    conn.execute(
        "UPDATE runs SET name_source = ?2 WHERE id = ?1",
        params![run, l.name_source],
    )?;
    if let Some((id, transcript)) = l.session {
        learn_session(conn, run, l.family, id, transcript, "launch")?;
    }
    Ok(())
}

/// Links a run to its session (`runs.session_id` and a `sessions` row) and
/// records where the transcript is. A `SESSION` event says what was learned
/// and from where; returns whether anything was new.
pub fn learn_session(
    conn: &Connection,
    run: &str,
    family: &str,
    session: &str,
    transcript: Option<&str>,
    from: &str,
) -> Result<bool, StoreError> {
    let linked: Option<String> = conn
        .query_row("SELECT session_id FROM runs WHERE id = ?1", [run], |r| r.get(0))
        .optional()?
        .flatten();
    let known: Option<Option<String>> = conn
        .query_row("SELECT transcript_path FROM sessions WHERE id = ?1", [session], |r| {
            r.get(0)
        })
        .optional()?;
    let new_link = linked.as_deref() != Some(session);
    // The harness's word on the transcript (a hook) replaces our prediction.
    let new_path = transcript.is_some() && known.as_ref().is_none_or(|p| p.as_deref() != transcript);
    if new_link {
        conn.execute("UPDATE runs SET session_id = ?2 WHERE id = ?1", params![run, session])?;
    }
    conn.execute(
        "INSERT INTO sessions (id, harness, run_id, transcript_path, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(id) DO UPDATE SET transcript_path = COALESCE(excluded.transcript_path, sessions.transcript_path)",
        params![session, family, run, transcript, now_ms()],
    )?;
    if new_link || new_path {
        append_event(
            conn,
            run,
            "SESSION",
            &json!({ "session_id": session, "transcript_path": transcript, "from": from }),
        )?;
    }
    Ok(new_link || new_path)
}

/// What a hook changed in the store.
#[derive(Debug, Default, PartialEq)]
pub struct HookOutcome {
    /// The session (or its transcript path) was learned from this hook.
    pub session_learned: bool,
    /// The run's new name, when this hook's prompt named it.
    pub renamed: Option<String>,
}

/// What the harness layer made of a hook before it is stored: the `HOOK`
/// event's data, and the name its prompt gives a run (before it is made
/// unique). The store computes neither.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookSaid {
    pub summary: serde_json::Value,
    pub name: Option<String>,
}

/// Records one hook in one transaction: its `HOOK` event, the session it
/// names, the subagent it starts or stops, and the run's name from the
/// first prompt.
pub fn record_hook(
    conn: &mut Connection,
    run: &str,
    family: &str,
    r: &HookReport,
    said: &HookSaid,
) -> Result<HookOutcome, StoreError> {
    let tx = conn.transaction()?;
    let mut outcome = HookOutcome::default();
    append_event(&tx, run, "HOOK", &said.summary)?;
    if let Some(session) = &r.session_id {
        outcome.session_learned = learn_session(&tx, run, family, session, r.transcript_path.as_deref(), "hook")?;
    }
    if let Some(agent) = &r.agent_id {
        match r.event.as_str() {
            "SubagentStart" => {
                let fresh = tx.execute(
                    "INSERT OR IGNORE INTO subagents (run_id, agent_id, session_id, agent_type, started_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![run, agent, r.session_id, r.agent_type, now_ms()],
                )?;
                if fresh == 1 {
                    append_event(
                        &tx,
                        run,
                        "SUBAGENT_STARTED",
                        &json!({ "agent_id": agent, "agent_type": r.agent_type }),
                    )?;
                }
            }
            "SubagentStop" => {
                // A stop whose start was missed still makes a row.
                tx.execute(
                    "INSERT INTO subagents (run_id, agent_id, session_id, agent_type, transcript_path, started_at, ended_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
                     ON CONFLICT(run_id, agent_id) DO UPDATE SET ended_at = excluded.ended_at,
                        transcript_path = COALESCE(excluded.transcript_path, subagents.transcript_path),
                        agent_type = COALESCE(subagents.agent_type, excluded.agent_type)",
                    params![run, agent, r.session_id, r.agent_type, r.agent_transcript_path, now_ms()],
                )?;
                append_event(
                    &tx,
                    run,
                    "SUBAGENT_STOPPED",
                    &json!({ "agent_id": agent, "transcript_path": r.agent_transcript_path }),
                )?;
            }
            _ => {}
        }
    }
    if let ("UserPromptSubmit" | "agent-turn-complete", Some(name)) = (r.event.as_str(), &said.name) {
        outcome.renamed = name_from_prompt(&tx, run, name)?;
    }
    tx.commit()?;
    Ok(outcome)
}

/// Renames a run still wearing its placeholder name to `base` (a name its
/// prompt gave), made unique among all runs. Returns the new name.
pub fn name_from_prompt(conn: &Connection, run: &str, base: &str) -> Result<Option<String>, StoreError> {
    let current: Option<(String, String)> = conn
        .query_row("SELECT name, name_source FROM runs WHERE id = ?1", [run], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?;
    let Some((old, source)) = current else { return Ok(None) };
    if source != NAME_PLACEHOLDER {
        return Ok(None);
    }
    let name = unique_name(conn, base)?;
    conn.execute(
        "UPDATE runs SET name = ?2, name_source = ?3 WHERE id = ?1",
        params![run, name, NAME_FROM_PROMPT],
    )?;
    super::names::record_former(conn, run, &old)?;
    append_event(conn, run, "RENAMED", &json!({ "from": old, "to": name }))?;
    Ok(Some(name))
}

/// `base`, or `base-N` for the first free N (names are unique across runs).
/// A name a start holds for a run not stored yet is taken too.
pub fn unique_name(conn: &Connection, base: &str) -> Result<String, StoreError> {
    let taken = |name: &str| Ok::<_, StoreError>(runs::name_taken(conn, name)? || super::names::is_held(name));
    if !taken(base)? {
        return Ok(base.to_string());
    }
    for n in 2.. {
        let candidate = format!("{base}-{n}");
        if !taken(&candidate)? {
            return Ok(candidate);
        }
    }
    unreachable!("the loop above is unbounded")
}

/// The run a launch id was minted for.
pub fn run_for_launch(conn: &Connection, launch_id: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row("SELECT id FROM runs WHERE launch_id = ?1", [launch_id], |r| r.get(0))
        .optional()?)
}

/// What `runs.show` adds about the harness.
#[derive(Debug, Default, PartialEq)]
pub struct HarnessInfo {
    pub version: Option<String>,
    pub profile: Option<String>,
    pub transcript_path: Option<String>,
    /// The variable names passed with `--env` at launch (never values).
    pub pass_env: Vec<String>,
    /// The harness's own variables passed from the client's environment
    /// at launch (names only).
    pub harness_env: Vec<String>,
}

/// `store.harness()`: what the harness layer recorded beside the runs.
pub struct Harnesses<'a>(&'a Store);

impl Store {
    pub fn harness(&self) -> Harnesses<'_> {
        Harnesses(self)
    }
}

impl Harnesses<'_> {
    /// The run a hook names: by its run id, else by its launch id.
    pub async fn run_of_hook(
        &self,
        run: Option<String>,
        launch: Option<String>,
    ) -> Result<Option<runs::RunRow>, StoreError> {
        self.0
            .call(move |c| {
                let id = match (run, launch) {
                    (Some(run), _) => Some(run),
                    (None, Some(launch)) => run_for_launch(c, &launch)?,
                    (None, None) => None,
                };
                match id {
                    Some(id) => runs::get_run(c, &id),
                    None => Ok(None),
                }
            })
            .await
    }

    /// See [`record_hook`].
    pub async fn record_hook(
        &self,
        run: &str,
        family: &str,
        report: HookReport,
        said: HookSaid,
    ) -> Result<HookOutcome, StoreError> {
        let (run, family) = (run.to_string(), family.to_string());
        self.0
            .call(move |c| record_hook(c, &run, &family, &report, &said))
            .await
    }

    /// See [`learn_session`].
    pub async fn learn_session(
        &self,
        run: &str,
        family: &str,
        session: &str,
        transcript: Option<String>,
        from: &'static str,
    ) -> Result<bool, StoreError> {
        let (run, family, session) = (run.to_string(), family.to_string(), session.to_string());
        self.0
            .call(move |c| learn_session(c, &run, &family, &session, transcript.as_deref(), from))
            .await
    }

    pub async fn info(&self, run: &str) -> Result<HarnessInfo, StoreError> {
        let run = run.to_string();
        self.0.call(move |c| harness_info(c, &run)).await
    }
}

pub fn harness_info(conn: &Connection, run: &str) -> Result<HarnessInfo, StoreError> {
    let (version, profile) = conn
        .query_row(
            "SELECT version, profile FROM attempts WHERE run_id = ?1 ORDER BY n DESC LIMIT 1",
            [run],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?
        .unwrap_or((None, None));
    let transcript_path = conn
        .query_row(
            "SELECT s.transcript_path FROM runs r JOIN sessions s ON s.id = r.session_id WHERE r.id = ?1",
            [run],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    let created: Option<String> = conn
        .query_row(
            "SELECT data FROM events WHERE run_id = ?1 AND kind = 'RUN_CREATED' ORDER BY seq LIMIT 1",
            [run],
            |r| r.get(0),
        )
        .optional()?;
    let created = created.and_then(|data| serde_json::from_str::<serde_json::Value>(&data).ok());
    let names = |key: &str| -> Vec<String> {
        created
            .as_ref()
            .and_then(|data| serde_json::from_value(data[key].clone()).ok())
            .unwrap_or_default()
    };
    Ok(HarnessInfo {
        version,
        profile,
        transcript_path,
        pass_env: names("pass_env"),
        harness_env: names("harness_env"),
    })
}

pub fn subagents(conn: &Connection, run: &str) -> Result<Vec<SubagentRecord>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT agent_id, agent_type, session_id, transcript_path, started_at, ended_at, description FROM subagents
         WHERE run_id = ?1 ORDER BY started_at, agent_id",
    )?;
    let rows = stmt
        .query_map([run], |r| {
            Ok(SubagentRecord {
                agent_id: r.get(0)?,
                agent_type: r.get(1)?,
                session_id: r.get(2)?,
                transcript_path: r.get(3)?,
                started_at: format_ms(r.get(4)?),
                ended_at: r.get::<_, Option<i64>>(5)?.map(format_ms),
                description: r.get(6)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = super::super::open_connection(&dir.path().join("a.db")).unwrap();
        super::super::migrations::migrate(&mut conn).unwrap();
        for (id, name) in [("R1", "claude-1"), ("R2", "fix-tests")] {
            conn.execute(
                "INSERT INTO runs (id, name, harness, cwd, command, state, root_run_id, launch_id, created_at, rows, cols)
                 VALUES (?1, ?2, 'claude', '/', '[]', 'running', ?1, ?1, 1, 40, 120)",
                params![id, name],
            )
            .unwrap();
        }
        (dir, conn)
    }

    fn named(name: &str) -> HookSaid {
        HookSaid {
            summary: json!({ "event": "UserPromptSubmit" }),
            name: Some(name.into()),
        }
    }

    fn hook(event: &str) -> HookReport {
        HookReport {
            event: event.into(),
            session_id: Some("S1".into()),
            ..HookReport::default()
        }
    }

    #[test]
    fn the_first_prompt_names_a_placeholder_named_run_once() {
        let (_dir, mut conn) = db();
        record_launch(
            &conn,
            "R1",
            &Launched {
                family: "claude",
                version: Some("2.1.197"),
                profile: None,
                name_source: NAME_PLACEHOLDER,
                session: Some(("S1", Some("/h/.claude/projects/-w/S1.jsonl"))),
            },
        )
        .unwrap();
        let mut submit = hook("UserPromptSubmit");
        submit.prompt = Some("fix the tests".into());
        let out = record_hook(&mut conn, "R1", "claude", &submit, &named("fix-tests")).unwrap();
        assert_eq!(out.renamed.as_deref(), Some("fix-tests-2"), "fix-tests is taken");
        assert!(!out.session_learned, "known since launch");
        submit.prompt = Some("something else".into());
        assert_eq!(
            record_hook(&mut conn, "R1", "claude", &submit, &named("something-else"))
                .unwrap()
                .renamed,
            None
        );
        let info = harness_info(&conn, "R1").unwrap();
        assert_eq!(info.version.as_deref(), Some("2.1.197"));
        assert_eq!(info.transcript_path.as_deref(), Some("/h/.claude/projects/-w/S1.jsonl"));
    }

    #[test]
    fn subagents_are_recorded_from_start_to_stop() {
        let (_dir, mut conn) = db();
        let mut start = hook("SubagentStart");
        start.agent_id = Some("a1".into());
        start.agent_type = Some("general-purpose".into());
        assert!(
            record_hook(&mut conn, "R2", "claude", &start, &HookSaid::default())
                .unwrap()
                .session_learned
        );
        let mut stop = start.clone();
        stop.event = "SubagentStop".into();
        stop.agent_transcript_path = Some("/t/S1/subagents/agent-a1.jsonl".into());
        record_hook(&mut conn, "R2", "claude", &stop, &HookSaid::default()).unwrap();
        let subs = subagents(&conn, "R2").unwrap();
        assert_eq!(subs.len(), 1);
        assert_eq!(subs[0].agent_type.as_deref(), Some("general-purpose"));
        assert_eq!(
            subs[0].transcript_path.as_deref(),
            Some("/t/S1/subagents/agent-a1.jsonl")
        );
        assert!(subs[0].ended_at.is_some());
        let kinds: Vec<String> = runs::events(&conn, "R2").unwrap().into_iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            ["HOOK", "SESSION", "SUBAGENT_STARTED", "HOOK", "SUBAGENT_STOPPED"]
        );
    }
}
